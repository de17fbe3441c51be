/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Amazon CloudWatch metric exports. Two forms, one rule: a header whose
 * first field is `timestamp` or `Label` (any case), then one column per
 * series, then one row per timestamp.
 *
 *   timestamp,value                      (NAB realAWSCloudwatch; one series)
 *   2014-04-10 00:04:00,91.958
 *
 *   Label,i-0a1b CPUUtilization,i-0c2d CPUUtilization     (one column per
 *   2024-05-02T10:00:00.000Z,12.5,40.25                    graphed metric)
 *
 * Timestamps as lbs_csv_timestamp reads them (no zone: UTC). An empty cell
 * is a period without a datapoint for that series. Each column is one
 * entity, named by its header. Rows must be in time order; rows with the
 * same timestamp are one period (NAB's ec2_network_in_5abac7 folds the
 * hour the 2014 daylight-saving change skipped onto 03:00:00, twelve rows)
 * and are merged into their mean.
 *
 * The metric decides the column's name and unit: CPUUtilization and the
 * agent's mem_used_percent are percentages, read as the fractions cpu_util
 * and mem_util; the others keep their values. It is taken from the
 * scenario (trace_metric) or, when every header names the same known
 * metric, from the header. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "traces/csvread.h"
#include "traces/reader.h"

typedef struct metric {
	const char *name;   /* as CloudWatch names it */
	const char *column; /* the series column */
	double scale;       /* column value = scale * exported value */
	double max;         /* largest exported value allowed */
} metric;

#define BIG 1e300
static const metric metrics[] = {
	{ "CPUUtilization", "cpu_util", 0.01, 100 },
	{ "mem_used_percent", "mem_util", 0.01, 100 },
	{ "MemoryUtilization", "mem_util", 0.01, 100 },
	{ "NetworkIn", "network_in", 1, BIG },
	{ "NetworkOut", "network_out", 1, BIG },
	{ "CPUCreditBalance", "cpu_credit_balance", 1, BIG },
	{ "CPUCreditUsage", "cpu_credit_usage", 1, BIG },
};
#define N_METRICS (sizeof metrics / sizeof metrics[0])
static const metric unnamed = { "", "value", 1, BIG };

typedef struct cw_ctx {
	const char *path;
	const lbs_read_opts *opts;
	const metric *m;
	bool have_header;
	int64_t header_line;
	size_t n_fields;
	char **label;
	lbs_series_builder *b;
} cw_ctx;

static const metric *find_metric(const char *name)
{
	for (size_t i = 0; i < N_METRICS; i++)
		if (strcmp(metrics[i].name, name) == 0)
			return &metrics[i];
	return NULL;
}

/* The known metric every label names, or NULL. */
static const metric *metric_of_labels(const lbs_csv_row *row)
{
	const metric *found = NULL;
	for (size_t i = 1; i < row->n; i++) {
		const metric *m = NULL;
		for (size_t k = 0; k < N_METRICS && !m; k++)
			if (strstr(row->field[i], metrics[k].name))
				m = &metrics[k];
		if (!m || (found && found != m))
			return NULL;
		found = m;
	}
	return found;
}

static lbs_status header(cw_ctx *c, const lbs_csv_row *row, lbs_error *err)
{
	c->have_header = true;
	c->header_line = row->line;
	c->n_fields = row->n;
	if (strcasecmp(row->field[0], "timestamp") != 0 && strcasecmp(row->field[0], "label") != 0)
		return lbs_trace_error(err, c->path, row->line, "header",
				       "first column is '%s', expected timestamp (or Label, as the console "
				       "writes it)", row->field[0]);
	if (row->n < 2)
		return lbs_trace_error(err, c->path, row->line, "header", "no value column");
	if (!(c->label = calloc(row->n, sizeof *c->label)))
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	for (size_t i = 1; i < row->n; i++) {
		if (!*row->field[i])
			return lbs_trace_error(err, c->path, row->line, "header", "column %zu has no name", i + 1);
		if (!(c->label[i] = strdup(row->field[i])))
			return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	}
	lbs_status st = lbs_csv_check_unique(row, 1, c->path, err);
	if (st != LBS_OK)
		return st;
	if (c->opts && c->opts->metric && *c->opts->metric) {
		if (!(c->m = find_metric(c->opts->metric))) {
			char known[256];
			lbs_cloudwatch_metrics(known, sizeof known);
			return lbs_error_set(err, LBS_EINPUT, "%s: unknown CloudWatch metric '%s' (known: %s)",
					     c->path, c->opts->metric, known);
		}
	} else {
		c->m = metric_of_labels(row);
		if (!c->m)
			c->m = &unnamed;
	}
	const char *cols[] = { c->m->column };
	c->b = lbs_series_builder_create(c->path, "cloudwatch", LBS_INDEX_TIME, "timestamp", 1, cols,
					 true, false, LBS_DUP_MEAN, err);
	return lbs_reader_keep_ids(c->b, c->opts, err);
}

static lbs_status on_row(void *p, const lbs_csv_row *row, lbs_error *err)
{
	cw_ctx *c = p;
	if (!c->have_header)
		return header(c, row, err);
	lbs_status wst = lbs_csv_check_width(row, c->n_fields, c->header_line, c->path, err);
	if (wst != LBS_OK)
		return wst;
	const char *why, *f = row->field[0];
	double t;
	if ((why = lbs_csv_timestamp(f, &t)))
		return lbs_trace_error(err, c->path, row->line, "timestamp", "'%s' %s", f, why);
	for (size_t i = 1; i < row->n; i++) {
		double v;
		f = row->field[i];
		if (!*f)
			continue; /* no datapoint in this period */
		if ((why = lbs_csv_real(f, &v)))
			return lbs_trace_error(err, c->path, row->line, c->label[i], "'%s' %s", f, why);
		if (v < 0 || v > c->m->max)
			return lbs_trace_error(err, c->path, row->line, c->label[i], "'%s' must be in [0, %g]%s",
					       f, c->m->max, c->m->max == 100 ? " (a percentage)" : "");
		v *= c->m->scale;
		lbs_status st = lbs_series_builder_add(c->b, c->label[i], t, &v, row->line, err);
		if (st != LBS_OK)
			return st;
	}
	return LBS_OK;
}

static lbs_status read_cloudwatch(const char *path, const lbs_read_opts *opts, lbs_series_set **out,
				  lbs_error *err)
{
	cw_ctx c = { .path = path, .opts = opts };
	*out = NULL;
	lbs_status st = lbs_csv_read(path, on_row, NULL, &c, err);
	if (st == LBS_OK && !c.have_header)
		st = lbs_error_set(err, LBS_EINPUT, "%s: empty file (expected a header such as "
				   "'timestamp,value' and data rows)", path);
	for (size_t i = 0; c.label && i < c.n_fields; i++)
		free(c.label[i]);
	free(c.label);
	if (st != LBS_OK) {
		lbs_series_builder_destroy(c.b);
		return st;
	}
	return lbs_series_builder_finish(c.b, out, err);
}

const lbs_trace_reader lbs_reader_cloudwatch = {
	"cloudwatch", "Amazon CloudWatch exports: `timestamp,value` (NAB) or the console's `Label,...` "
	"download, one column per series", read_cloudwatch,
};

bool lbs_cloudwatch_metric_known(const char *name)
{
	return find_metric(name) != NULL;
}

void lbs_cloudwatch_metrics(char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < N_METRICS && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", metrics[i].name);
}
