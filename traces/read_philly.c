/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Microsoft Philly cluster traces (msr-fiddle/philly-traces, CC BY 4.0;
 * users bring them), per machine and minute:
 *
 *   cluster_cpu_util   time,machine_id,cpu_util
 *   cluster_mem_util   time,machine_id,mem_total,mem_free
 *   cluster_gpu_util   time,machineId,gpu0_util,...,gpu7_util,    (trailing comma)
 *
 * `time` is local text such as "2017-10-03 00:08:00 PDT", converted to UTC.
 * `NA` marks a machine that was offline: such a row is dropped, so the
 * previous reading holds. Columns, as fractions: cpu_util; mem_util =
 * 1 - mem_free / mem_total; gpu_util = the mean of the GPUs that report
 * (NA ones left out). One entity per machine; a machine's rows must be in
 * time order; identical repeated rows are one sample. */
#include <stdio.h>
#include <string.h>

#include "traces/csvread.h"
#include "traces/reader.h"

#define MAX_GPUS 16

typedef enum philly_kind { PHILLY_CPU, PHILLY_MEM, PHILLY_GPU } philly_kind;

typedef struct philly_ctx {
	const char *path;
	const lbs_read_opts *opts;
	philly_kind kind;
	bool have_header;
	int64_t header_line;
	size_t n_fields;
	size_t n_gpus;
	char gpu_name[MAX_GPUS][16];
	lbs_series_builder *b;
} philly_ctx;

static const char *const expected[] = {
	"time,machine_id,cpu_util",
	"time,machine_id,mem_total,mem_free",
	"time,machineId,gpu0_util,...,gpu7_util,",
};

static lbs_status header(philly_ctx *c, const lbs_csv_row *row, lbs_error *err)
{
	c->have_header = true;
	c->header_line = row->line;
	c->n_fields = row->n;
	bool ok = row->n >= 3 && strcmp(row->field[0], "time") == 0;
	if (c->kind == PHILLY_CPU)
		ok = ok && row->n == 3 && !strcmp(row->field[1], "machine_id") &&
		     !strcmp(row->field[2], "cpu_util");
	else if (c->kind == PHILLY_MEM)
		ok = ok && row->n == 4 && !strcmp(row->field[1], "machine_id") &&
		     !strcmp(row->field[2], "mem_total") && !strcmp(row->field[3], "mem_free");
	else {
		ok = ok && !strcmp(row->field[1], "machineId");
		size_t last = row->n;
		if (ok && !*row->field[last - 1])
			last--; /* the trailing comma's empty field */
		for (size_t i = 2; ok && i < last; i++) {
			ok = i - 2 < MAX_GPUS;
			if (ok) {
				snprintf(c->gpu_name[i - 2], sizeof c->gpu_name[0], "gpu%zu_util", i - 2);
				ok = strcmp(row->field[i], c->gpu_name[i - 2]) == 0;
			}
		}
		c->n_gpus = last - 2;
		ok = ok && c->n_gpus > 0;
	}
	if (!ok)
		return lbs_trace_error(err, c->path, row->line, "header", "expected '%s'", expected[c->kind]);
	static const char *const names[] = { "cpu_util", "mem_util", "gpu_util" };
	const char *cols[] = { names[c->kind] };
	static const char *const format[] = { "philly-cpu", "philly-mem", "philly-gpu" };
	c->b = lbs_series_builder_create(c->path, format[c->kind], LBS_INDEX_TIME, "time", 1, cols, true,
					 false, LBS_DUP_SAME, err);
	return lbs_reader_keep_ids(c->b, c->opts, err);
}

/* A value field: *na for NA. */
static const char *value(const char *f, double *v, bool *na)
{
	*na = strcmp(f, "NA") == 0;
	return *na ? NULL : lbs_csv_real(f, v);
}

static lbs_status on_row(void *p, const lbs_csv_row *row, lbs_error *err)
{
	philly_ctx *c = p;
	if (!c->have_header)
		return header(c, row, err);
	lbs_status wst = lbs_csv_check_width(row, c->n_fields, c->header_line, c->path, err);
	if (wst != LBS_OK)
		return wst;
	const char *why, *f = row->field[0], *id = row->field[1];
	double t, v;
	bool na;
	if ((why = lbs_csv_timestamp(f, &t)))
		return lbs_trace_error(err, c->path, row->line, "time", "'%s' %s", f, why);
	if (!*id)
		return lbs_trace_error(err, c->path, row->line, c->kind == PHILLY_GPU ? "machineId" : "machine_id",
				       "is empty");
	if (c->kind == PHILLY_CPU) {
		if ((why = value(f = row->field[2], &v, &na)))
			return lbs_trace_error(err, c->path, row->line, "cpu_util", "'%s' %s", f, why);
		if (na)
			return LBS_OK;
		if (v < 0 || v > 100)
			return lbs_trace_error(err, c->path, row->line, "cpu_util",
					       "'%s' must be a percentage in [0, 100]", f);
		v /= 100;
	} else if (c->kind == PHILLY_MEM) {
		double total, freed;
		bool na2;
		if ((why = value(f = row->field[2], &total, &na)))
			return lbs_trace_error(err, c->path, row->line, "mem_total", "'%s' %s", f, why);
		if ((why = value(f = row->field[3], &freed, &na2)))
			return lbs_trace_error(err, c->path, row->line, "mem_free", "'%s' %s", f, why);
		if (na || na2)
			return LBS_OK;
		if (total <= 0)
			return lbs_trace_error(err, c->path, row->line, "mem_total", "'%s' must be > 0",
					       row->field[2]);
		if (freed < 0 || freed > total)
			return lbs_trace_error(err, c->path, row->line, "mem_free",
					       "'%s' must be in [0, mem_total]", row->field[3]);
		v = 1 - freed / total;
	} else {
		double sum = 0;
		size_t n = 0;
		for (size_t g = 0; g < c->n_gpus; g++) {
			double u;
			if ((why = value(f = row->field[2 + g], &u, &na)))
				return lbs_trace_error(err, c->path, row->line, c->gpu_name[g], "'%s' %s", f, why);
			if (na)
				continue;
			if (u < 0 || u > 100)
				return lbs_trace_error(err, c->path, row->line, c->gpu_name[g],
						       "'%s' must be a percentage in [0, 100]", f);
			sum += u;
			n++;
		}
		if (row->n > c->n_gpus + 2 && *row->field[row->n - 1])
			return lbs_trace_error(err, c->path, row->line, NULL,
					       "unexpected text after the last GPU: '%s'", row->field[row->n - 1]);
		if (!n)
			return LBS_OK;
		v = sum / (double)n / 100;
	}
	return lbs_series_builder_add(c->b, id, t, &v, row->line, err);
}

static lbs_status read_philly(philly_kind kind, const char *path, const lbs_read_opts *opts,
			      lbs_series_set **out, lbs_error *err)
{
	philly_ctx c = { .path = path, .opts = opts, .kind = kind };
	*out = NULL;
	lbs_status st = lbs_csv_read(path, on_row, NULL, &c, err);
	if (st == LBS_OK && !c.have_header)
		st = lbs_error_set(err, LBS_EINPUT, "%s: empty file (expected the header '%s' and data rows)",
				   path, expected[kind]);
	if (st != LBS_OK) {
		lbs_series_builder_destroy(c.b);
		return st;
	}
	return lbs_series_builder_finish(c.b, out, err);
}

static lbs_status read_cpu(const char *path, const lbs_read_opts *o, lbs_series_set **out, lbs_error *e)
{
	return read_philly(PHILLY_CPU, path, o, out, e);
}

static lbs_status read_mem(const char *path, const lbs_read_opts *o, lbs_series_set **out, lbs_error *e)
{
	return read_philly(PHILLY_MEM, path, o, out, e);
}

static lbs_status read_gpu(const char *path, const lbs_read_opts *o, lbs_series_set **out, lbs_error *e)
{
	return read_philly(PHILLY_GPU, path, o, out, e);
}

const lbs_trace_reader lbs_reader_philly_cpu = {
	"philly-cpu", "Microsoft Philly `cluster_cpu_util`: cpu_util per machine", read_cpu,
};
const lbs_trace_reader lbs_reader_philly_mem = {
	"philly-mem", "Microsoft Philly `cluster_mem_util`: mem_util = 1 - free/total per machine", read_mem,
};
const lbs_trace_reader lbs_reader_philly_gpu = {
	"philly-gpu", "Microsoft Philly `cluster_gpu_util`: gpu_util (mean over the GPUs) per machine",
	read_gpu,
};
