/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Alibaba cluster-trace-v2018 `machine_usage.csv` (users bring it; its
 * licence does not let lbsim ship it): no header, nine fields,
 *
 *   machine_id,time_stamp,cpu_util_percent,mem_util_percent,mem_gps,mkpi,net_in,net_out,disk_io_percent
 *
 * One entity per machine; the index is time_stamp (seconds from the trace
 * start); the columns are cpu_util and mem_util as fractions. The trace
 * marks invalid readings with -1 or 101 (and some are empty): such a row is
 * dropped, so the machine's previous reading holds. The other fields are
 * not used and not checked. Rows are not sorted by machine in the trace,
 * so they are grouped by machine and sorted by time; a machine with two
 * different rows at one time is an error (identical ones are one sample).
 * A big file costs only the machines asked for (trace_ids). */
#include <stdio.h>
#include <string.h>

#include "traces/csvread.h"
#include "traces/reader.h"

#define FIELDS 9

typedef struct alibaba_ctx {
	const char *path;
	int64_t rows;
	lbs_series_builder *b;
} alibaba_ctx;

/* A percentage field: *ok false for the trace's invalid markers. */
static const char *percent(const char *f, double *v, bool *ok)
{
	*ok = false;
	if (!*f)
		return NULL;
	const char *why = lbs_csv_real(f, v);
	if (why)
		return why;
	if (*v == -1 || *v == 101)
		return NULL;
	if (*v < 0 || *v > 100)
		return "must be a percentage in [0, 100] (or -1 or 101, the trace's invalid markers)";
	*ok = true;
	return NULL;
}

static lbs_status on_row(void *p, const lbs_csv_row *row, lbs_error *err)
{
	alibaba_ctx *c = p;
	c->rows++;
	if (row->n != FIELDS)
		return lbs_trace_error(err, c->path, row->line, NULL,
				       "%zu fields, expected %d (machine_id,time_stamp,cpu_util_percent,"
				       "mem_util_percent,...)", row->n, FIELDS);
	const char *id = row->field[0], *why, *f;
	if (!*id)
		return lbs_trace_error(err, c->path, row->line, "machine_id", "is empty");
	double t, v[2];
	bool ok[2];
	if ((why = lbs_csv_real(f = row->field[1], &t)))
		return lbs_trace_error(err, c->path, row->line, "time_stamp", "'%s' %s", f, why);
	if ((why = percent(f = row->field[2], &v[0], &ok[0])))
		return lbs_trace_error(err, c->path, row->line, "cpu_util_percent", "'%s' %s", f, why);
	if ((why = percent(f = row->field[3], &v[1], &ok[1])))
		return lbs_trace_error(err, c->path, row->line, "mem_util_percent", "'%s' %s", f, why);
	if (!ok[0] || !ok[1])
		return LBS_OK;
	v[0] /= 100;
	v[1] /= 100;
	return lbs_series_builder_add(c->b, id, t, v, row->line, err);
}

static lbs_status read_alibaba(const char *path, const lbs_read_opts *opts, lbs_series_set **out,
			       lbs_error *err)
{
	*out = NULL;
	static const char *const cols[] = { "cpu_util", "mem_util" };
	alibaba_ctx c = { .path = path };
	c.b = lbs_series_builder_create(path, "alibaba-v2018", LBS_INDEX_TIME, "time_stamp", 2, cols, true,
					true, LBS_DUP_SAME, err);
	if (!c.b)
		return err->status;
	lbs_status st = lbs_reader_keep_ids(c.b, opts, err);
	if (st == LBS_OK)
		st = lbs_csv_read(path, on_row, NULL, &c, err);
	if (st == LBS_OK && c.rows == 0)
		st = lbs_error_set(err, LBS_EINPUT, "%s: empty file (expected rows machine_id,time_stamp,"
				   "cpu_util_percent,mem_util_percent,...)", path);
	if (st != LBS_OK) {
		lbs_series_builder_destroy(c.b);
		return st;
	}
	return lbs_series_builder_finish(c.b, out, err);
}

const lbs_trace_reader lbs_reader_alibaba_v2018 = {
	"alibaba-v2018", "Alibaba cluster-trace-v2018 `machine_usage.csv`: cpu_util, mem_util per machine",
	read_alibaba,
};
