/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Alibaba PAI GPU cluster trace v2020, mini-batch times
 * (cluster-trace-gpu-v2020/mini-batch-time/data/job_N_norm.csv):
 *
 *   ,worker,gpu,time,batch_time_norm
 *   0,0,25,1,476
 *
 * One entity per worker; the index is the iteration (`time`, sampled every
 * few iterations); the column `batch_time` is the worker's normalised
 * mini-batch time (0-1000, unitless; only ratios are used: the slowdown is
 * batch_time / job median). job_2 records worker 3 at iteration 2381 twice
 * with the same value, so identical repeated rows are one sample; repeated
 * rows that differ are an error. */
#include <stdio.h>
#include <string.h>

#include "traces/csvread.h"
#include "traces/reader.h"

typedef struct pai_ctx {
	const char *path;
	const lbs_read_opts *opts;
	bool have_header;
	int64_t header_line;
	size_t n_fields;
	long worker, time, value; /* field positions */
	lbs_series_builder *b;
} pai_ctx;

static lbs_status header(pai_ctx *c, const lbs_csv_row *row, lbs_error *err)
{
	static const char *const need[] = { "worker", "time", "batch_time_norm" };
	long *pos[] = { &c->worker, &c->time, &c->value };
	c->have_header = true;
	c->header_line = row->line;
	c->n_fields = row->n;
	lbs_status st = lbs_csv_columns(row, need, pos, 3, c->path, ",worker,gpu,time,batch_time_norm", err);
	if (st != LBS_OK)
		return st;
	static const char *const cols[] = { "batch_time" };
	c->b = lbs_series_builder_create(c->path, "pai", LBS_INDEX_ITERATION, "time", 1, cols, true,
					 false, LBS_DUP_SAME, err);
	return lbs_reader_keep_ids(c->b, c->opts, err);
}

static lbs_status on_row(void *p, const lbs_csv_row *row, lbs_error *err)
{
	pai_ctx *c = p;
	if (!c->have_header)
		return header(c, row, err);
	lbs_status wst = lbs_csv_check_width(row, c->n_fields, c->header_line, c->path, err);
	if (wst != LBS_OK)
		return wst;
	const char *why, *f;
	int64_t worker, it;
	double v;
	if ((why = lbs_csv_int(f = row->field[c->worker], 0, 1000000000, &worker)))
		return lbs_trace_error(err, c->path, row->line, "worker", "'%s' %s", f, why);
	if ((why = lbs_csv_int(f = row->field[c->time], 0, (int64_t)1 << 53, &it)))
		return lbs_trace_error(err, c->path, row->line, "time", "'%s' %s (an iteration number)", f, why);
	if ((why = lbs_csv_real(f = row->field[c->value], &v)))
		return lbs_trace_error(err, c->path, row->line, "batch_time_norm", "'%s' %s", f, why);
	if (v <= 0)
		return lbs_trace_error(err, c->path, row->line, "batch_time_norm", "'%s' must be > 0", f);
	char id[32];
	snprintf(id, sizeof id, "%lld", (long long)worker);
	return lbs_series_builder_add(c->b, id, (double)it, &v, row->line, err);
}

static lbs_status read_pai(const char *path, const lbs_read_opts *opts, lbs_series_set **out,
			   lbs_error *err)
{
	pai_ctx c = { .path = path, .opts = opts };
	*out = NULL;
	lbs_status st = lbs_csv_read(path, on_row, NULL, &c, err);
	if (st == LBS_OK && !c.have_header)
		st = lbs_error_set(err, LBS_EINPUT, "%s: empty file (expected the header "
				   "',worker,gpu,time,batch_time_norm' and data rows)", path);
	if (st != LBS_OK) {
		lbs_series_builder_destroy(c.b);
		return st;
	}
	return lbs_series_builder_finish(c.b, out, err);
}

const lbs_trace_reader lbs_reader_pai = {
	"pai", "Alibaba PAI GPU v2020 mini-batch times (`job_N_norm.csv`), per worker, by iteration",
	read_pai,
};
