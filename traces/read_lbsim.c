/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lbsim's own trace format (doc/traces.md), the way to bring any data:
 *
 *   # lbsim-trace 1
 *   # any comment lines
 *   time_s,availability,cpu_util        (or iteration,...; optional id column)
 *   0,1.0,0.10
 *   30,0.5,0.55
 *
 * The version line comes first so that a later, different format is
 * refused with a clear message rather than misread. */
#include <stdio.h>
#include <string.h>

#include "traces/csvread.h"
#include "traces/reader.h"

#define VERSION_TAG "# lbsim-trace "
#define MAX_INDEX ((int64_t)1 << 53)

typedef struct lbsim_ctx {
	const char *path;
	const lbs_read_opts *opts;
	int stage;            /* 0: version line, 1: header, 2: rows */
	int64_t header_line;
	size_t n_fields;
	lbs_index_kind kind;
	long id_field;        /* -1: none */
	size_t n_cols;
	size_t col_field[LBS_SERIES_MAX_COLS];
	char names[LBS_SERIES_MAX_COLS][LBS_SERIES_NAME_MAX];
	lbs_series_builder *b;
} lbsim_ctx;

static lbs_status on_comment(void *p, const char *text, int64_t line, lbs_error *err)
{
	lbsim_ctx *c = p;
	if (c->stage > 0)
		return LBS_OK;
	if (line != 1 || strncmp(text, VERSION_TAG, strlen(VERSION_TAG)) != 0)
		return lbs_trace_error(err, c->path, line, NULL,
				       "expected the version line '" VERSION_TAG "1' first");
	const char *v = text + strlen(VERSION_TAG);
	if (strcmp(v, "1") != 0)
		return lbs_trace_error(err, c->path, line, NULL,
				       "unsupported version '%s' (this lbsim reads version 1)", v);
	c->stage = 1;
	return LBS_OK;
}

static bool valid_name(const char *s)
{
	if (!(*s >= 'a' && *s <= 'z') || strlen(s) >= LBS_SERIES_NAME_MAX)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

static lbs_status header(lbsim_ctx *c, const lbs_csv_row *row, lbs_error *err)
{
	c->header_line = row->line;
	c->n_fields = row->n;
	c->id_field = -1;
	const char *first = row->field[0];
	if (strcmp(first, "time_s") == 0)
		c->kind = LBS_INDEX_TIME;
	else if (strcmp(first, "iteration") == 0)
		c->kind = LBS_INDEX_ITERATION;
	else
		return lbs_trace_error(err, c->path, row->line, "header",
				       "first column is '%s', expected time_s or iteration", first);
	for (size_t i = 1; i < row->n; i++) {
		const char *name = row->field[i];
		if (!valid_name(name))
			return lbs_trace_error(err, c->path, row->line, "header",
					       "column %zu: '%s' is not a column name (lower-case letters, "
					       "digits and '_', at most %d)", i + 1, name, LBS_SERIES_NAME_MAX - 1);
		for (size_t j = 0; j < i; j++)
			if (strcmp(row->field[j], name) == 0)
				return lbs_trace_error(err, c->path, row->line, "header",
						       "column '%s' appears twice", name);
		if (strcmp(name, "id") == 0) {
			c->id_field = (long)i;
			continue;
		}
		if (c->n_cols == LBS_SERIES_MAX_COLS)
			return lbs_trace_error(err, c->path, row->line, "header",
					       "more than %d value columns", LBS_SERIES_MAX_COLS);
		c->col_field[c->n_cols] = i;
		snprintf(c->names[c->n_cols++], LBS_SERIES_NAME_MAX, "%s", name);
	}
	if (c->n_cols == 0)
		return lbs_trace_error(err, c->path, row->line, "header",
				       "no value column (e.g. time_s,availability)");
	const char *names[LBS_SERIES_MAX_COLS];
	for (size_t i = 0; i < c->n_cols; i++)
		names[i] = c->names[i];
	c->b = lbs_series_builder_create(c->path, "lbsim", c->kind, first, c->n_cols, names,
					 c->id_field >= 0, false, LBS_DUP_ERROR, err);
	return lbs_reader_keep_ids(c->b, c->id_field >= 0 ? c->opts : NULL, err);
}

static lbs_status on_row(void *p, const lbs_csv_row *row, lbs_error *err)
{
	lbsim_ctx *c = p;
	if (c->stage == 0)
		return lbs_trace_error(err, c->path, row->line, NULL,
				       "expected the version line '" VERSION_TAG "1' first");
	if (c->stage == 1) {
		c->stage = 2;
		return header(c, row, err);
	}
	lbs_status wst = lbs_csv_check_width(row, c->n_fields, c->header_line, c->path, err);
	if (wst != LBS_OK)
		return wst;
	double index, v[LBS_SERIES_MAX_COLS];
	const char *why;
	if (c->kind == LBS_INDEX_ITERATION) {
		int64_t it;
		if ((why = lbs_csv_int(row->field[0], 0, MAX_INDEX, &it)))
			return lbs_trace_error(err, c->path, row->line, "iteration", "'%s' %s", row->field[0], why);
		index = (double)it;
	} else if ((why = lbs_csv_real(row->field[0], &index))) {
		return lbs_trace_error(err, c->path, row->line, "time_s", "'%s' %s", row->field[0], why);
	}
	for (size_t i = 0; i < c->n_cols; i++) {
		const char *f = row->field[c->col_field[i]];
		if ((why = lbs_csv_real(f, &v[i])) || (why = lbs_trace_check_value(c->names[i], v[i])))
			return lbs_trace_error(err, c->path, row->line, c->names[i], "'%s' %s", f, why);
	}
	const char *id = NULL;
	if (c->id_field >= 0 && !*(id = row->field[c->id_field]))
		return lbs_trace_error(err, c->path, row->line, "id", "is empty");
	return lbs_series_builder_add(c->b, id, index, v, row->line, err);
}

static lbs_status read_lbsim(const char *path, const lbs_read_opts *opts, lbs_series_set **out,
			     lbs_error *err)
{
	lbsim_ctx c = { .path = path, .opts = opts };
	*out = NULL;
	lbs_status st = lbs_csv_read(path, on_row, on_comment, &c, err);
	if (st == LBS_OK && c.stage == 0)
		st = lbs_error_set(err, LBS_EINPUT, "%s: empty file (expected '" VERSION_TAG "1', a header "
				   "and data rows)", path);
	else if (st == LBS_OK && c.stage == 1)
		st = lbs_error_set(err, LBS_EINPUT, "%s: no header line after the version line", path);
	if (st != LBS_OK) {
		lbs_series_builder_destroy(c.b);
		return st;
	}
	return lbs_series_builder_finish(c.b, out, err);
}

const lbs_trace_reader lbs_reader_lbsim = {
	"lbsim", "lbsim's own CSV: `# lbsim-trace 1`, a header `time_s,...` or `iteration,...`", read_lbsim,
};
