/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Azure VM noise dataset 2024 (AzurePublicDataset, vm-noise-data): one
 * benchmark rerun on VMs of one SKU,
 *
 *   value,runtime,starttime,VM_id
 *   12509.73,90.01,2023-06-23 16:37:18.960,0
 *
 * One entity per VM; the index is the run's start time (UTC: the data set
 * does not state a zone, and only differences matter here); the column
 * `throughput` is the benchmark's result, a rate (events/s, MiB/s or bogo
 * ops/s: higher is faster). The long-lived files are not in time order
 * within a VM (their README says they are, but in
 * sysbench_cpu_long_eastus_b8ms 812 of the 6949 steps between a VM's rows
 * go back in time), so each VM's runs are sorted by start time; two runs of
 * one VM starting at the same time are an error. */
#include <stdio.h>
#include <string.h>

#include "traces/csvread.h"
#include "traces/reader.h"

typedef struct azure_ctx {
	const char *path;
	const lbs_read_opts *opts;
	bool have_header;
	int64_t header_line;
	size_t n_fields;
	long value, runtime, start, vm;
	lbs_series_builder *b;
} azure_ctx;

static lbs_status header(azure_ctx *c, const lbs_csv_row *row, lbs_error *err)
{
	static const char *const need[] = { "value", "runtime", "starttime", "VM_id" };
	long *pos[] = { &c->value, &c->runtime, &c->start, &c->vm };
	c->have_header = true;
	c->header_line = row->line;
	c->n_fields = row->n;
	lbs_status st = lbs_csv_columns(row, need, pos, 4, c->path, "value,runtime,starttime,VM_id", err);
	if (st != LBS_OK)
		return st;
	static const char *const cols[] = { "throughput" };
	c->b = lbs_series_builder_create(c->path, "azure", LBS_INDEX_TIME, "starttime", 1, cols, true,
					 true, LBS_DUP_ERROR, err);
	return lbs_reader_keep_ids(c->b, c->opts, err);
}

static lbs_status on_row(void *p, const lbs_csv_row *row, lbs_error *err)
{
	azure_ctx *c = p;
	if (!c->have_header)
		return header(c, row, err);
	lbs_status wst = lbs_csv_check_width(row, c->n_fields, c->header_line, c->path, err);
	if (wst != LBS_OK)
		return wst;
	const char *why, *f;
	double v, runtime, t;
	int64_t vm;
	if ((why = lbs_csv_real(f = row->field[c->value], &v)))
		return lbs_trace_error(err, c->path, row->line, "value", "'%s' %s", f, why);
	if (v <= 0)
		return lbs_trace_error(err, c->path, row->line, "value", "'%s' must be > 0", f);
	if ((why = lbs_csv_real(f = row->field[c->runtime], &runtime)))
		return lbs_trace_error(err, c->path, row->line, "runtime", "'%s' %s", f, why);
	if (runtime < 0)
		return lbs_trace_error(err, c->path, row->line, "runtime", "'%s' must be >= 0", f);
	if ((why = lbs_csv_timestamp(f = row->field[c->start], &t)))
		return lbs_trace_error(err, c->path, row->line, "starttime", "'%s' %s", f, why);
	if ((why = lbs_csv_int(f = row->field[c->vm], 0, INT64_MAX, &vm)))
		return lbs_trace_error(err, c->path, row->line, "VM_id", "'%s' %s", f, why);
	char id[32];
	snprintf(id, sizeof id, "%lld", (long long)vm);
	return lbs_series_builder_add(c->b, id, t, &v, row->line, err);
}

static lbs_status read_azure(const char *path, const lbs_read_opts *opts, lbs_series_set **out,
			     lbs_error *err)
{
	azure_ctx c = { .path = path, .opts = opts };
	*out = NULL;
	lbs_status st = lbs_csv_read(path, on_row, NULL, &c, err);
	if (st == LBS_OK && !c.have_header)
		st = lbs_error_set(err, LBS_EINPUT, "%s: empty file (expected the header "
				   "'value,runtime,starttime,VM_id' and data rows)", path);
	if (st != LBS_OK) {
		lbs_series_builder_destroy(c.b);
		return st;
	}
	return lbs_series_builder_finish(c.b, out, err);
}

const lbs_trace_reader lbs_reader_azure = {
	"azure", "Azure VM noise 2024 benchmark runs (`value,runtime,starttime,VM_id`), per VM, by time",
	read_azure,
};
