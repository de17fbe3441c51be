/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A hybrid run's operations read back from its results database (the
 * hybrid_timeline table, doc/results.md) as a per-operation trace, with
 * the metadata its hybrid_runs row gives, so that `lbsim whatif` analyses
 * a simulated job from its results as from its --ops-trace file. The rows
 * are those the --ops-trace writer (hybrid/sim.c) writes: the same op
 * types, sequence numbers, chunks and micro-batches, times relative to the
 * step's start as float32, gmc = mc pp + stage for a compute, else -1. */
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "traces/read_ops.h"
#include "traces/series.h"

bool lbs_ops_is_sqlite(const char *path)
{
	/* only a regular file can be a database: opening a FIFO to look would
	 * block before the command has its signal handlers (a trace may come
	 * through a pipe, read by the trace reader, which can be interrupted) */
	struct stat sb;
	if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
		return false;
	char head[16];
	FILE *f = fopen(path, "rb");
	if (!f)
		return false;
	bool yes = fread(head, 1, sizeof head, f) == sizeof head && !memcmp(head, "SQLite format 3", 16);
	fclose(f);
	return yes;
}

static long long one_int(sqlite3 *db, const char *sql, long long param, bool *found)
{
	sqlite3_stmt *q = NULL;
	long long v = 0;
	*found = false;
	if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(q, 1, param);
		if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_type(q, 0) != SQLITE_NULL) {
			v = sqlite3_column_int64(q, 0);
			*found = true;
		}
	}
	sqlite3_finalize(q);
	return v;
}

/* The metadata of run id. */
static lbs_status read_meta(sqlite3 *db, const char *path, long long id, lbs_ops_meta *meta, lbs_error *err)
{
	sqlite3_stmt *q = NULL;
	lbs_status st = LBS_OK;
	memset(meta, 0, sizeof *meta);
	snprintf(meta->path, sizeof meta->path, "%.1000s", path);
	if (sqlite3_prepare_v2(db, "SELECT name, dp, pp, tp, virtual_stages, gpus FROM hybrid_runs WHERE hybrid_id = ?1",
			       -1, &q, NULL) != SQLITE_OK || (sqlite3_bind_int64(q, 1, id), sqlite3_step(q)) != SQLITE_ROW)
		st = lbs_error_set(err, LBS_EINPUT, "%s: hybrid run %lld: %s", path, id, sqlite3_errmsg(db));
	else {
		const char *name = (const char *)sqlite3_column_text(q, 0);
		snprintf(meta->trial_name, sizeof meta->trial_name, "%s", name ? name : "");
		meta->dp_size = sqlite3_column_int64(q, 1);
		meta->pp_size = sqlite3_column_int64(q, 2);
		meta->tp_size = sqlite3_column_int64(q, 3);
		meta->vpp_size = sqlite3_column_int64(q, 4);
		meta->world_size = sqlite3_column_int64(q, 5);
		/* context parallelism (its key in hybrid_config; absent before
		 * it existed) is the format's data-sequence parallelism */
		bool found;
		long long cp = one_int(db, "SELECT CAST(value AS INTEGER) FROM hybrid_config WHERE hybrid_id = ?1 AND "
				       "section = 'hybrid' AND key = 'cp'", id, &found);
		meta->dsp_size = found ? cp : 1;
		if (meta->dp_size < 1 || meta->pp_size < 1 || meta->tp_size < 1 || meta->vpp_size < 1 ||
		    meta->dsp_size < 1 || meta->dsp_size > 1024 ||
		    meta->world_size != meta->dp_size * meta->dsp_size * meta->pp_size * meta->tp_size)
			st = lbs_error_set(err, LBS_EINPUT, "%s: hybrid run %lld: degrees dp %lld x cp %lld x pp %lld x "
					   "tp %lld against %lld GPUs", path, id, (long long)meta->dp_size,
					   (long long)meta->dsp_size, (long long)meta->pp_size, (long long)meta->tp_size,
					   (long long)meta->world_size);
	}
	sqlite3_finalize(q);
	return st;
}

static lbs_status read_rows(sqlite3 *db, const char *path, long long id, long long pp, lbs_ops_trace *t,
			    lbs_error *err)
{
	sqlite3_stmt *q = NULL;
	if (sqlite3_prepare_v2(db, "SELECT t.dp_rank, t.stage, g.rank, t.step, t.optype, t.start_s, t.end_s, "
			       "t.seq_id, t.mc, t.mb FROM hybrid_timeline t JOIN hybrid_groups g USING (hybrid_id, "
			       "step, dp_rank, stage) WHERE hybrid_id = ?1 ORDER BY t.step, t.dp_rank, t.stage, "
			       "t.start_s, t.end_s, t.optype, t.seq_id", -1, &q, NULL) != SQLITE_OK)
		return lbs_error_set(err, LBS_EINPUT, "%s: %s", path, sqlite3_errmsg(db));
	sqlite3_bind_int64(q, 1, id);
	lbs_status st = LBS_OK;
	int rc;
	size_t cap = 0;
	while (st == LBS_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
		size_t i = t->n;
		if (lbs_trace_max_rows() > 0 && (int64_t)i >= lbs_trace_max_rows()) {
			st = lbs_error_set(err, LBS_EINPUT, "%s: hybrid run %lld: more than %lld operations (the limit; "
					   "raise it with --max-trace-rows N, 0: no limit)", path, id,
					   (long long)lbs_trace_max_rows());
			break;
		}
		if (i == cap && !lbs_ops_reserve(t, cap = cap ? 2 * cap : 4096)) {
			st = lbs_error_set(err, LBS_EINTERNAL, "out of memory reading %s", path);
			break;
		}
		const char *name = (const char *)sqlite3_column_text(q, 4);
		lbs_optype type = name ? lbs_optype_parse(name) : LBS_OP_N;
		double s0 = sqlite3_column_double(q, 5), s1 = sqlite3_column_double(q, 6);
		t->dp_rank[i] = sqlite3_column_int(q, 0);
		t->stage[i] = sqlite3_column_int(q, 1);
		t->rank[i] = sqlite3_column_int(q, 2);
		t->step[i] = sqlite3_column_int64(q, 3);
		t->seq_id[i] = sqlite3_column_int(q, 7);
		t->mc[i] = sqlite3_column_int(q, 8);
		t->mb_id[i] = sqlite3_column_int(q, 9);
		t->optype[i] = (uint8_t)(type == LBS_OP_N ? 0 : type);
		bool comp = type == LBS_OP_FORWARD_COMPUTE || type == LBS_OP_BACKWARD_COMPUTE;
		t->gmc[i] = comp ? (int32_t)(t->mc[i] * pp + t->stage[i]) : -1;
		/* float32, as the --ops-trace file holds them */
		t->start[i] = (float)s0;
		t->duration[i] = (float)(s1 - s0);
		t->line[i] = (int64_t)i + 1;
		/* the CSV reader's bounds: the model's arrays are sized from them */
		long long dp = sqlite3_column_int64(q, 0), sg = sqlite3_column_int64(q, 1), mc = sqlite3_column_int64(q, 8),
			  step = sqlite3_column_int64(q, 3);
		const char *why = type == LBS_OP_N ? "an unknown op type"
				: !(s1 >= s0) || !isfinite(s0) || !isfinite(s1) ? "no finite start and end, in order"
				: dp < 0 || dp > LBS_OPS_MAX_DP ? "dp_rank out of range"
				: sg < 0 || sg > LBS_OPS_MAX_STAGE || sg >= pp ? "stage out of range"
				: mc < -1 || mc > LBS_OPS_MAX_CHUNK ? "mc out of range"
				: step < 0 || step > INT32_MAX ? "step out of range" : NULL;
		if (why)
			st = lbs_error_set(err, LBS_EINPUT, "%s: hybrid_timeline of run %lld, row %zu: %s", path, id,
					   i + 1, why);
		t->n++;
	}
	if (st == LBS_OK && rc != SQLITE_DONE)
		st = lbs_error_set(err, LBS_EINPUT, "%s: %s", path, sqlite3_errmsg(db));
	sqlite3_finalize(q);
	return st;
}

lbs_status lbs_ops_read_hybrid(const char *path, long long *id, lbs_ops_trace *out, lbs_ops_meta *meta,
			       lbs_error *err)
{
	memset(out, 0, sizeof *out);
	sqlite3 *db = NULL;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		lbs_status st = lbs_error_set(err, LBS_EIO, "%s: %s", path, db ? sqlite3_errmsg(db) : "cannot open");
		sqlite3_close(db);
		return st;
	}
	bool found;
	lbs_status st = LBS_OK;
	if (one_int(db, "SELECT count(*) FROM sqlite_master WHERE name IN ('hybrid_runs', 'hybrid_timeline', "
			"'hybrid_groups') AND ?1 = ?1", 0, &found) != 3)
		st = lbs_error_set(err, LBS_EINPUT, "%s: no hybrid run with its operations (hybrid_timeline) in this "
				   "results file: run a hybrid scenario with -o into it", path);
	if (st == LBS_OK && !*id)
		*id = one_int(db, "SELECT max(hybrid_id) FROM hybrid_runs WHERE ?1 = ?1", 0, &found);
	if (st == LBS_OK && !one_int(db, "SELECT count(*) FROM hybrid_runs WHERE hybrid_id = ?1", *id, &found))
		st = lbs_error_set(err, LBS_EUSAGE, "%s: --hybrid %lld: no such run (see hybrid_runs)", path, *id);
	if (st == LBS_OK)
		st = read_meta(db, path, *id, meta, err);
	if (st == LBS_OK)
		snprintf(out->path, sizeof out->path, "%.1000s", path);
	if (st == LBS_OK)
		st = read_rows(db, path, *id, meta->pp_size, out, err);
	if (st == LBS_OK && !out->n)
		st = lbs_error_set(err, LBS_EINPUT, "%s: hybrid run %lld recorded no operations (a step of more than "
				   "300,000 ops records none: write them with --ops-trace)", path, *id);
	sqlite3_close(db);
	if (st != LBS_OK)
		lbs_ops_free(out);
	return st;
}
