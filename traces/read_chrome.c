/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Chrome trace-event files (the JSON that PyTorch's profiler, Kineto and
 * Perfetto read and write) as per-operation traces for lbsim whatif:
 *
 *   {"traceEvents": [
 *     {"name": "forward-compute", "ph": "X", "ts": 1712.5, "dur": 85282.1,
 *      "pid": 3, "tid": 7, "args": {"dp_rank": 1, "stage": 1, "step": 23}},
 *     ...]}
 *
 * (or the bare array). Only complete events ("ph": "X") whose name is one
 * of the op types are read; everything else (kernels, CPU ops, metadata)
 * is skipped. ts and dur are microseconds, as the format has them. From
 * args: dp_rank, stage and step (required), rank (default: pid), seq_id
 * (default: numbered by start within the op's step, dp_rank, stage and
 * type), mc (default 0 for computes, all-gathers and reduce-scatters, -1
 * otherwise), gmc (default stage + P x mc, -1 where mc is -1), mb_id
 * (default -1). Each step's times are taken from its earliest op. Parsed
 * with jansson; gzip files are read through zlib. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <zlib.h>

#include "traces/csvread.h"
#include "traces/read_ops.h"
#include "traces/series.h"

/* The file, and what it may still give (lbs_input_budget). */
typedef struct gz_src {
	gzFile f;
	uint64_t budget, total;
	bool over;
} gz_src;

static size_t gz_read(void *buf, size_t len, void *data)
{
	gz_src *g = data;
	int got = gzread(g->f, buf, (unsigned)(len > 1 << 20 ? 1 << 20 : len));
	if (got > 0 && (g->total += (uint64_t)got) > g->budget) {
		g->over = true;
		return (size_t)-1; /* jansson stops: the file is refused as too large */
	}
	return got < 0 ? (size_t)-1 : (size_t)got;
}

/* args[key] as an integer in [lo, hi]; absent: *out = dflt, or an error when required. */
static lbs_status int_arg(const lbs_ops_trace *t, size_t k, json_t *args, const char *key, int64_t lo,
			  int64_t hi, bool required, int64_t dflt, int64_t *out, lbs_error *err)
{
	json_t *v = args ? json_object_get(args, key) : NULL;
	if (!v) {
		if (required)
			return lbs_error_set(err, LBS_EINPUT, "%s: traceEvents[%zu]: args.%s: missing (an op event "
					     "needs dp_rank, stage and step in its args)", t->path, k, key);
		*out = dflt;
		return LBS_OK;
	}
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
		return lbs_error_set(err, LBS_EINPUT, "%s: traceEvents[%zu]: args.%s: expected an integer in "
				     "[%lld, %lld]", t->path, k, key, (long long)lo, (long long)hi);
	*out = json_integer_value(v);
	return LBS_OK;
}

/* Sorting rows by (step, dp_rank, stage, optype, ts) to number seq_id. */
typedef struct seq_key {
	const lbs_ops_trace *t;
	const double *ts;
} seq_key;

static int seq_cmp(const void *pa, const void *pb, void *arg)
{
	const seq_key *k = arg;
	const lbs_ops_trace *t = k->t;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
#define CMP(x)                              \
	if ((x)[a] != (x)[b])               \
		return (x)[a] < (x)[b] ? -1 : 1;
	CMP(t->step) CMP(t->dp_rank) CMP(t->stage) CMP(t->optype) CMP(k->ts)
#undef CMP
	return a < b ? -1 : a > b;
}

static lbs_status read_events(lbs_ops_trace *t, json_t *events, double **ts_out, bool **has_seq,
			      lbs_error *err)
{
	size_t n = json_array_size(events), cap = 0;
	double *ts = NULL, *dur = NULL;
	bool *seq_given = NULL;
	lbs_status st = LBS_OK;
	for (size_t k = 0; k < n && st == LBS_OK; k++) {
		json_t *e = json_array_get(events, k);
		if (!json_is_object(e)) {
			st = lbs_error_set(err, LBS_EINPUT, "%s: traceEvents[%zu]: expected an event object", t->path, k);
			break;
		}
		const char *ph = json_string_value(json_object_get(e, "ph"));
		const char *name = json_string_value(json_object_get(e, "name"));
		if (!ph || strcmp(ph, "X") || !name)
			continue;
		lbs_optype type = lbs_optype_parse(name);
		if (type == LBS_OP_N)
			continue;
		if (t->n == cap) {
			size_t c = cap ? 2 * cap : 4096;
			double *a = realloc(ts, c * sizeof *a), *b = a ? realloc(dur, c * sizeof *b) : NULL;
			bool *s = b ? realloc(seq_given, c * sizeof *s) : NULL;
			if (a)
				ts = a;
			if (b)
				dur = b;
			if (!s || !lbs_ops_reserve(t, c)) {
				st = lbs_error_set(err, LBS_EINTERNAL, "out of memory reading %s", t->path);
				break;
			}
			seq_given = s;
			cap = c;
		}
		if (lbs_trace_max_rows() > 0 && (int64_t)t->n >= lbs_trace_max_rows()) {
			st = lbs_error_set(err, LBS_EINPUT, "%s: traceEvents[%zu]: more than %lld op events (the limit; "
					   "raise it with --max-trace-rows N, 0: no limit)", t->path, k,
					   (long long)lbs_trace_max_rows());
			break;
		}
		size_t i = t->n;
		json_t *jts = json_object_get(e, "ts"), *jdur = json_object_get(e, "dur");
		if (!json_is_number(jts) || !json_is_number(jdur) || !isfinite(json_number_value(jts)) ||
		    json_number_value(jdur) < 0 || json_number_value(jdur) > 1e13) {
			st = lbs_error_set(err, LBS_EINPUT, "%s: traceEvents[%zu] (%s): ts and dur must be numbers "
					   "(microseconds), dur in [0, 1e13]", t->path, k, name);
			break;
		}
		ts[i] = json_number_value(jts);
		dur[i] = json_number_value(jdur);
		json_t *args = json_object_get(e, "args");
		if (args && !json_is_object(args)) {
			st = lbs_error_set(err, LBS_EINPUT, "%s: traceEvents[%zu]: args: expected an object", t->path, k);
			break;
		}
		json_t *pid = json_object_get(e, "pid");
		int64_t dp, stage, step, rank, seq, mc, gmc, mb;
		bool chunked = type == LBS_OP_FORWARD_COMPUTE || type == LBS_OP_BACKWARD_COMPUTE ||
			       type == LBS_OP_PARAMS_ALL_GATHER || type == LBS_OP_GRADS_REDUCE_SCATTER;
		t->line[i] = (int64_t)k;
		if ((st = int_arg(t, k, args, "dp_rank", 0, LBS_OPS_MAX_DP, true, 0, &dp, err)) ||
		    (st = int_arg(t, k, args, "stage", 0, LBS_OPS_MAX_STAGE, true, 0, &stage, err)) ||
		    (st = int_arg(t, k, args, "step", 0, (int64_t)1 << 53, true, 0, &step, err)) ||
		    (st = int_arg(t, k, args, "rank", 0, INT32_MAX, !json_is_integer(pid), json_integer_value(pid),
				  &rank, err)) ||
		    (st = int_arg(t, k, args, "seq_id", 0, INT32_MAX, false, -1, &seq, err)) ||
		    (st = int_arg(t, k, args, "mc", -1, LBS_OPS_MAX_CHUNK, false, chunked ? 0 : -1, &mc, err)) ||
		    (st = int_arg(t, k, args, "gmc", -1, LBS_OPS_MAX_CHUNK, false, -2, &gmc, err)) ||
		    (st = int_arg(t, k, args, "mb_id", -1, INT32_MAX, false, -1, &mb, err)))
			break;
		if (rank < 0 || rank > INT32_MAX) {
			st = lbs_error_set(err, LBS_EINPUT, "%s: traceEvents[%zu]: pid: not a rank (give args.rank)",
					   t->path, k);
			break;
		}
		t->dp_rank[i] = (int32_t)dp;
		t->stage[i] = (int32_t)stage;
		t->step[i] = step;
		t->rank[i] = (int32_t)rank;
		seq_given[i] = seq >= 0;
		t->seq_id[i] = seq >= 0 ? (int32_t)seq : 0;
		t->mc[i] = (int32_t)mc;
		t->gmc[i] = (int32_t)gmc; /* -2: to be derived */
		t->mb_id[i] = (int32_t)mb;
		t->optype[i] = (uint8_t)type;
		t->n++;
	}
	if (st == LBS_OK) {
		for (size_t i = 0; i < t->n; i++)
			t->duration[i] = (float)(dur[i] / 1e6);
		*ts_out = ts;
		*has_seq = seq_given;
	} else {
		free(ts);
		free(seq_given);
	}
	free(dur);
	return st;
}

lbs_status lbs_ops_read_chrome(const char *path, lbs_ops_trace *out, lbs_error *err)
{
	memset(out, 0, sizeof *out);
	snprintf(out->path, sizeof out->path, "%s", path);
	out->events = true;
	errno = 0;
	gzFile f = gzopen(path, "rb");
	if (!f)
		return lbs_error_set(err, LBS_EINPUT, "%s: cannot read trace: %s", path,
				     errno ? strerror(errno) : "out of memory");
	static const lbs_input_limit lim = { LBS_OPS_JSON_MAX_BYTES, LBS_OPS_MAX_RATIO };
	bool compressed;
	gz_src src = { .f = f, .budget = lbs_input_budget(path, f, &lim, &compressed) };
	json_error_t jerr;
	json_t *root = json_load_callback(gz_read, &src, JSON_REJECT_DUPLICATES, &jerr);
	int zerr = Z_OK;
	gzerror(f, &zerr);
	gzclose(f);
	if (src.over) {
		json_decref(root);
		return lbs_input_too_large(path, src.budget, compressed, &lim, err);
	}
	if (!root)
		return lbs_error_set(err, LBS_EINPUT, "%s:%d:%d: %s", path, jerr.line, jerr.column,
				     zerr == Z_BUF_ERROR ? "the compressed file ends early (truncated?)" : jerr.text);
	json_t *events = json_is_array(root) ? root : json_object_get(root, "traceEvents");
	lbs_status st = LBS_OK;
	double *ts = NULL;
	bool *has_seq = NULL;
	if (!json_is_array(events))
		st = lbs_error_set(err, LBS_EINPUT, "%s: expected a Chrome trace: an object with a traceEvents "
				   "array, or an array of events", path);
	if (st == LBS_OK)
		st = read_events(out, events, &ts, &has_seq, err);
	json_decref(root);
	if (st == LBS_OK && !out->n)
		st = lbs_error_set(err, LBS_EINPUT, "%s: no complete (\"ph\": \"X\") events named by an op type "
				   "(forward-compute, backward-compute, forward-send, ...; doc/whatif.md)", path);
	size_t *idx = NULL;
	if (st == LBS_OK && !(idx = malloc(out->n * sizeof *idx)))
		st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	if (st == LBS_OK) {
		/* times from each step's earliest op; seq_id by start; gmc from the stage */
		int32_t P = 0;
		for (size_t i = 0; i < out->n; i++) {
			idx[i] = i;
			if (out->stage[i] + 1 > P)
				P = out->stage[i] + 1;
		}
		seq_key key = { out, ts };
		qsort_r(idx, out->n, sizeof *idx, seq_cmp, &key);
		double lo = 0;
		int32_t seq = 0;
		for (size_t k = 0; k < out->n; k++) {
			size_t i = idx[k], p = k ? idx[k - 1] : 0;
			if (!k || out->step[i] != out->step[p])
				for (size_t q = k, first = 1; q < out->n && out->step[idx[q]] == out->step[i]; q++, first = 0)
					if (first || ts[idx[q]] < lo)
						lo = ts[idx[q]];
			bool same = k && out->step[i] == out->step[p] && out->dp_rank[i] == out->dp_rank[p] &&
				    out->stage[i] == out->stage[p] && out->optype[i] == out->optype[p];
			seq = same ? seq + 1 : 0;
			if (!has_seq[i])
				out->seq_id[i] = seq;
			double s = (ts[i] - lo) / 1e6;
			if (s > 1e7) {
				st = lbs_error_set(err, LBS_EINPUT, "%s: traceEvents[%lld]: starts %g s after its step's "
						   "first op (more than 1e7 s)", path, (long long)out->line[i], s);
				break;
			}
			out->start[i] = (float)s;
			if (out->gmc[i] == -2)
				out->gmc[i] = out->mc[i] < 0 ? -1 : out->stage[i] + P * out->mc[i];
		}
	}
	free(idx);
	free(ts);
	free(has_seq);
	if (st != LBS_OK)
		lbs_ops_free(out);
	return st;
}
