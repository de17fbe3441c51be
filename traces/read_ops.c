/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "traces/read_ops.h"

#include <errno.h>
#include <float.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "traces/csvread.h"
#include "traces/series.h"

static const char *const optype_names[LBS_OP_N] = {
	"forward-compute", "backward-compute", "forward-send", "forward-recv", "backward-send",
	"backward-recv", "params-all-gather", "grads-reduce-scatter", "separate-grads-all-reduce",
	"layernorm-grads-all-reduce", "embedding-grads-all-reduce", "optimizer-clip-main-grad",
	"optimizer", "gc",
};

const char *lbs_optype_name(lbs_optype t)
{
	return (unsigned)t < LBS_OP_N ? optype_names[t] : NULL;
}

lbs_optype lbs_optype_parse(const char *name)
{
	for (int t = 0; t < LBS_OP_N; t++)
		if (strcmp(name, optype_names[t]) == 0)
			return (lbs_optype)t;
	return LBS_OP_N;
}

const char *lbs_ops_where(const lbs_ops_trace *t, size_t i, char *buf, size_t len)
{
	if (t->events)
		return lbs_fmt(buf, len, "%s: traceEvents[%lld]", t->path, (long long)t->line[i]);
	return lbs_fmt(buf, len, "%s:%lld", t->path, (long long)t->line[i]);
}

lbs_status lbs_ops_error(const lbs_ops_trace *t, size_t i, lbs_error *err, const char *field,
			 const char *fmt, ...)
{
	char msg[LBS_ERROR_MAX / 2], where[1100];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	lbs_ops_where(t, i, where, sizeof where);
	if (field)
		return lbs_error_set(err, LBS_EINPUT, "%s: %s: %s", where, field, msg);
	return lbs_error_set(err, LBS_EINPUT, "%s: %s", where, msg);
}

lbs_status lbs_ops_read_any(const char *path, lbs_ops_trace *out, lbs_error *err)
{
	size_t n = strlen(path);
	bool json = (n >= 5 && strcmp(path + n - 5, ".json") == 0) ||
		    (n >= 8 && strcmp(path + n - 8, ".json.gz") == 0);
	return json ? lbs_ops_read_chrome(path, out, err) : lbs_ops_read(path, out, err);
}

#define HEADER "dp_rank,stage,rank,step,optype,start_ts,duration,seq_id,mc,mb_id,gmc"
enum { C_DP, C_STAGE, C_RANK, C_STEP, C_OPTYPE, C_START, C_DUR, C_SEQ, C_MC, C_MB, C_GMC, C_N };
static const char *const columns[C_N] = { "dp_rank", "stage", "rank", "step", "optype", "start_ts",
					  "duration", "seq_id", "mc", "mb_id", "gmc" };

typedef struct ops_ctx {
	lbs_ops_trace *t;
	size_t cap;
	bool have_header;
	int64_t header_line;
	size_t n_fields;
	long pos[C_N];
} ops_ctx;

bool lbs_ops_reserve(lbs_ops_trace *t, size_t cap)
{
#define GROW(a)                                                  \
	do {                                                     \
		void *p = realloc(t->a, cap * sizeof *t->a);     \
		if (!p)                                          \
			return false;                            \
		t->a = p;                                        \
	} while (0)
	GROW(dp_rank);
	GROW(stage);
	GROW(rank);
	GROW(seq_id);
	GROW(mc);
	GROW(mb_id);
	GROW(gmc);
	GROW(step);
	GROW(optype);
	GROW(start);
	GROW(duration);
	GROW(line);
#undef GROW
	return true;
}

static bool grow(ops_ctx *c)
{
	size_t cap = c->cap ? 2 * c->cap : 4096;
	if (!lbs_ops_reserve(c->t, cap))
		return false;
	c->cap = cap;
	return true;
}

/* A seconds value: a decimal number in [0, 1e7] that float32 holds. */
static const char *seconds(const char *s, float *out)
{
	double v;
	const char *why = lbs_csv_real(s, &v);
	if (why)
		return why;
	if (v < 0)
		return "must be >= 0";
	if (v > 1e7)
		return "must be <= 1e7 s";
	*out = (float)v;
	return NULL;
}

static lbs_status on_row(void *p, const lbs_csv_row *row, lbs_error *err)
{
	ops_ctx *c = p;
	lbs_ops_trace *t = c->t;
	if (!c->have_header) {
		long *pos[C_N];
		for (int k = 0; k < C_N; k++)
			pos[k] = &c->pos[k];
		c->have_header = true;
		c->header_line = row->line;
		c->n_fields = row->n;
		return lbs_csv_columns(row, columns, pos, C_N, t->path, HEADER, err);
	}
	lbs_status st = lbs_csv_check_width(row, c->n_fields, c->header_line, t->path, err);
	if (st != LBS_OK)
		return st;
	if (lbs_trace_max_rows() > 0 && (int64_t)t->n >= lbs_trace_max_rows())
		return lbs_trace_error(err, t->path, row->line, NULL, "more than %lld rows (the limit; "
				       "raise it with --max-trace-rows N, 0: no limit)",
				       (long long)lbs_trace_max_rows());
	if (t->n == c->cap && !grow(c))
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory reading %s", t->path);
	size_t i = t->n;
	const char *why, *f;
	int64_t v;
#define INT(col, lo, hi, dst, hint)                                                              \
	do {                                                                                     \
		if ((why = lbs_csv_int(f = row->field[c->pos[col]], lo, hi, &v)))                \
			return lbs_trace_error(err, t->path, row->line, columns[col], "'%s' %s%s", f, \
					       why, hint);                                       \
		dst = v;                                                                         \
	} while (0)
	INT(C_DP, 0, LBS_OPS_MAX_DP, t->dp_rank[i], "");
	INT(C_STAGE, 0, LBS_OPS_MAX_STAGE, t->stage[i], "");
	INT(C_RANK, 0, INT32_MAX, t->rank[i], " (a global rank)");
	INT(C_STEP, 0, (int64_t)1 << 53, t->step[i], " (a step number)");
	INT(C_SEQ, 0, INT32_MAX, t->seq_id[i], "");
	INT(C_MC, -1, LBS_OPS_MAX_CHUNK, t->mc[i], " (-1: none)");
	INT(C_MB, -1, INT32_MAX, t->mb_id[i], " (-1: none)");
	INT(C_GMC, -1, LBS_OPS_MAX_CHUNK, t->gmc[i], " (-1: none)");
#undef INT
	f = row->field[c->pos[C_OPTYPE]];
	lbs_optype type = lbs_optype_parse(f);
	if (type == LBS_OP_N)
		return lbs_trace_error(err, t->path, row->line, "optype", "unknown operation type '%s' "
				       "(expected forward-compute, backward-compute, forward-send, ... "
				       "as doc/whatif.md lists)", f);
	t->optype[i] = (uint8_t)type;
	if ((why = seconds(f = row->field[c->pos[C_START]], &t->start[i])))
		return lbs_trace_error(err, t->path, row->line, "start_ts", "'%s' %s (seconds)", f, why);
	if ((why = seconds(f = row->field[c->pos[C_DUR]], &t->duration[i])))
		return lbs_trace_error(err, t->path, row->line, "duration", "'%s' %s (seconds)", f, why);
	bool compute = type == LBS_OP_FORWARD_COMPUTE || type == LBS_OP_BACKWARD_COMPUTE;
	if (compute && (t->mc[i] < 0 || t->gmc[i] < 0))
		return lbs_trace_error(err, t->path, row->line, t->mc[i] < 0 ? "mc" : "gmc",
				       "a %s needs its model chunk (got -1)", optype_names[type]);
	t->line[i] = row->line;
	t->n++;
	return LBS_OK;
}

void lbs_ops_free(lbs_ops_trace *t)
{
	free(t->dp_rank);
	free(t->stage);
	free(t->rank);
	free(t->seq_id);
	free(t->mc);
	free(t->mb_id);
	free(t->gmc);
	free(t->step);
	free(t->optype);
	free(t->start);
	free(t->duration);
	free(t->line);
	memset(t, 0, sizeof *t);
}

lbs_status lbs_ops_read(const char *path, lbs_ops_trace *out, lbs_error *err)
{
	memset(out, 0, sizeof *out);
	snprintf(out->path, sizeof out->path, "%s", path);
	ops_ctx c = { .t = out };
	static const lbs_input_limit lim = { LBS_OPS_MAX_BYTES, LBS_OPS_MAX_RATIO };
	lbs_status st = lbs_csv_read_limited(path, on_row, NULL, &c, &lim, err);
	if (st == LBS_OK && !c.have_header)
		st = lbs_error_set(err, LBS_EINPUT, "%s: empty file (expected the header '%s' and one row "
				   "per operation)", path, HEADER);
	if (st == LBS_OK && out->n == 0)
		st = lbs_error_set(err, LBS_EINPUT, "%s: no operations after the header (line %lld)", path,
				   (long long)c.header_line);
	if (st != LBS_OK)
		lbs_ops_free(out);
	return st;
}

/* ---- metadata -------------------------------------------------------- */

enum { M_TRIAL, M_RUN, M_DP, M_DSP, M_PP, M_TP, M_VPP, M_WORLD, M_N };
static const char *const meta_keys[M_N] = { "trial_name", "run_id", "dp_size", "dsp_size",
					    "pp_size", "tp_size", "vpp_size", "world_size" };

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
		s[--n] = '\0';
	return s;
}

lbs_status lbs_ops_meta_read(const char *path, lbs_ops_meta *out, lbs_error *err)
{
	memset(out, 0, sizeof *out);
	snprintf(out->path, sizeof out->path, "%s", path);
	FILE *f = fopen(path, "r");
	if (!f)
		return lbs_error_set(err, LBS_EINPUT, "%s: cannot read job metadata: %s", path, strerror(errno));
	int64_t seen[M_N] = { 0 };
	int64_t *val[M_N] = { NULL, &out->run_id, &out->dp_size, &out->dsp_size, &out->pp_size,
			      &out->tp_size, &out->vpp_size, &out->world_size };
	char buf[4096];
	int64_t line = 0;
	lbs_status st = LBS_OK;
	while (st == LBS_OK && fgets(buf, sizeof buf, f)) {
		line++;
		if (!strchr(buf, '\n') && !feof(f)) {
			st = lbs_trace_error(err, path, line, NULL, "line longer than %zu bytes", sizeof buf - 2);
			break;
		}
		char *s = trim(buf);
		if (!*s || *s == '#')
			continue;
		char *colon = strchr(s, ':');
		if (!colon) {
			st = lbs_trace_error(err, path, line, NULL, "expected 'key: value' (keys %s, %s, %s, %s, "
					     "%s, %s, %s, %s)", meta_keys[0], meta_keys[1], meta_keys[2],
					     meta_keys[3], meta_keys[4], meta_keys[5], meta_keys[6], meta_keys[7]);
			break;
		}
		*colon = '\0';
		char *key = trim(s), *value = trim(colon + 1);
		int k = 0;
		while (k < M_N && strcmp(key, meta_keys[k]))
			k++;
		if (k == M_N) {
			st = lbs_trace_error(err, path, line, key, "unknown key (expected %s, %s, %s, %s, %s, %s, "
					     "%s, %s)", meta_keys[0], meta_keys[1], meta_keys[2], meta_keys[3],
					     meta_keys[4], meta_keys[5], meta_keys[6], meta_keys[7]);
			break;
		}
		if (seen[k]) {
			st = lbs_trace_error(err, path, line, key, "given twice (first on line %lld)",
					     (long long)seen[k]);
			break;
		}
		seen[k] = line;
		size_t vn = strlen(value);
		if (vn >= 2 && (value[0] == '"' || value[0] == '\'') && value[vn - 1] == value[0]) {
			value[vn - 1] = '\0';
			value++;
		}
		if (k == M_TRIAL) {
			if (!*value || strlen(value) >= sizeof out->trial_name) {
				st = lbs_trace_error(err, path, line, key, "expected a name of 1 to %zu characters",
						     sizeof out->trial_name - 1);
				break;
			}
			snprintf(out->trial_name, sizeof out->trial_name, "%s", value);
			continue;
		}
		const char *why = lbs_csv_int(value, k == M_RUN ? 0 : 1, k == M_RUN ? INT64_MAX : 1 << 24, val[k]);
		if (why)
			st = lbs_trace_error(err, path, line, key, "'%s' %s", value, why);
	}
	if (st == LBS_OK && ferror(f))
		st = lbs_error_set(err, LBS_EINPUT, "%s: read error: %s", path, strerror(errno));
	fclose(f);
	for (int k = 0; st == LBS_OK && k < M_N; k++)
		if (!seen[k])
			st = lbs_error_set(err, LBS_EINPUT, "%s: missing key '%s' (the metadata needs %s, %s, %s, "
					   "%s, %s, %s, %s, %s)", path, meta_keys[k], meta_keys[0], meta_keys[1],
					   meta_keys[2], meta_keys[3], meta_keys[4], meta_keys[5], meta_keys[6],
					   meta_keys[7]);
	/* The product in 128 bits: four sizes up to 2^24 each overflow 64. */
	unsigned __int128 product = (unsigned __int128)out->dp_size * (uint64_t)out->dsp_size *
				    (uint64_t)out->pp_size * (uint64_t)out->tp_size;
	if (st == LBS_OK && product != (unsigned __int128)out->world_size) {
		char prod[64];
		if (product > (unsigned __int128)INT64_MAX)
			lbs_fmt(prod, sizeof prod, "%.6g (more than 2^63)", (double)out->dp_size *
				(double)out->dsp_size * (double)out->pp_size * (double)out->tp_size);
		else
			lbs_fmt(prod, sizeof prod, "%lld", (long long)product);
		st = lbs_trace_error(err, path, seen[M_WORLD], "world_size",
				     "%lld is not dp_size x dsp_size x pp_size x tp_size = %s", (long long)out->world_size,
				     prod);
	}
	return st;
}

lbs_status lbs_ops_check_meta(const lbs_ops_trace *t, const lbs_ops_meta *m, lbs_error *err)
{
	for (size_t i = 0; i < t->n; i++) {
		const char *col = NULL, *key = NULL;
		int64_t v = 0, lim = 0;
		if (t->dp_rank[i] >= m->dp_size)
			col = "dp_rank", key = "dp_size", v = t->dp_rank[i], lim = m->dp_size;
		else if (t->stage[i] >= m->pp_size)
			col = "stage", key = "pp_size", v = t->stage[i], lim = m->pp_size;
		else if (t->mc[i] >= m->vpp_size)
			col = "mc", key = "vpp_size", v = t->mc[i], lim = m->vpp_size;
		else if (t->gmc[i] >= m->pp_size * m->vpp_size)
			col = "gmc", key = "pp_size x vpp_size", v = t->gmc[i], lim = m->pp_size * m->vpp_size;
		else if (t->rank[i] >= m->world_size)
			col = "rank", key = "world_size", v = t->rank[i], lim = m->world_size;
		if (col)
			return lbs_ops_error(t, i, err, col, "%lld is out of range: %s says %s = %lld", (long long)v,
					     m->path, key, (long long)lim);
	}
	return LBS_OK;
}
