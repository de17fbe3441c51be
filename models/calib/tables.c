/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Reading the published tables the GPU profiles are fitted to, with
 * libcsv; every error names the file, the line and the column. */
#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "models/calib.h"
#include "util/units.h"

/* The longest record a table may have (as a trace, traces/csvread.h). */
#define TABLE_RECORD_MAX 1048576

#define MAX_FIELDS 8

typedef struct csv_ctx {
	const char *path;
	const char *const *header; /* expected column names */
	size_t n_header;
	char field[MAX_FIELDS][128];
	size_t n_fields;
	long line;
	bool too_many, too_long;
	/* the row handler: fields checked for count */
	lbs_status (*row)(struct csv_ctx *c);
	lbs_curve_set *set;
	const char *device, *model; /* pollux */
	lbs_error *err;
	lbs_status st;
} csv_ctx;

static lbs_status row_error(csv_ctx *c, size_t col, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static lbs_status row_error(csv_ctx *c, size_t col, const char *fmt, ...)
{
	char msg[LBS_ERROR_MAX / 2];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return lbs_error_set(c->err, LBS_EINPUT, "%s:%ld: %s: %s", c->path, c->line, c->header[col], msg);
}

static void on_field(void *s, size_t len, void *data)
{
	csv_ctx *c = data;
	if (c->n_fields >= MAX_FIELDS) {
		c->too_many = true;
		return;
	}
	if (len >= sizeof c->field[0]) {
		c->too_long = true;
		len = sizeof c->field[0] - 1;
	}
	memcpy(c->field[c->n_fields], s, len);
	c->field[c->n_fields++][len] = '\0';
}

static void on_row(int term, void *data)
{
	(void)term;
	csv_ctx *c = data;
	c->line++;
	if (c->st == LBS_OK) {
		if (c->too_many || c->n_fields != c->n_header)
			c->st = lbs_error_set(c->err, LBS_EINPUT, "%s:%ld: %zu fields, expected %zu (%s, ...)",
					      c->path, c->line, c->too_many ? (size_t)MAX_FIELDS : c->n_fields,
					      c->n_header, c->header[0]);
		else if (c->too_long)
			c->st = lbs_error_set(c->err, LBS_EINPUT, "%s:%ld: a field longer than 127 characters",
					      c->path, c->line);
		else if (c->line == 1) {
			for (size_t i = 0; i < c->n_header && c->st == LBS_OK; i++)
				if (strcmp(c->field[i], c->header[i]))
					c->st = lbs_error_set(c->err, LBS_EINPUT,
							      "%s:1: column %zu is '%s', expected '%s'", c->path,
							      i + 1, c->field[i], c->header[i]);
		} else {
			c->st = c->row(c);
		}
	}
	c->n_fields = 0;
	c->too_many = c->too_long = false;
}

static lbs_status parse_file(csv_ctx *c)
{
	FILE *f = fopen(c->path, "rb");
	if (!f)
		return lbs_error_set(c->err, LBS_EINPUT, "%s: cannot read: %s", c->path, strerror(errno));
	struct csv_parser p;
	if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI) != 0) {
		fclose(f);
		return lbs_error_set(c->err, LBS_EINTERNAL, "out of memory");
	}
	char buf[8192];
	size_t len, since = 0; /* bytes read since a record last ended */
	long at = c->line;
	c->st = LBS_OK;
	while (c->st == LBS_OK && (len = fread(buf, 1, sizeof buf, f)) > 0) {
		if (csv_parse(&p, buf, len, on_field, on_row, c) != len && c->st == LBS_OK)
			c->st = lbs_error_set(c->err, LBS_EINPUT, "%s:%ld: %s", c->path, c->line + 1,
					      csv_strerror(csv_error(&p)));
		/* libcsv keeps a record whole: one that does not end is refused
		 * before it grows past a bound, as the trace reader does. */
		since = c->line == at ? since + len : len;
		at = c->line;
		if (c->st == LBS_OK && since > TABLE_RECORD_MAX + sizeof buf)
			c->st = lbs_error_set(c->err, LBS_EINPUT, "%s:%ld: record longer than %d bytes (is this "
					      "a text file with line ends?)", c->path, c->line + 1, TABLE_RECORD_MAX);
	}
	if (c->st == LBS_OK && ferror(f))
		c->st = lbs_error_set(c->err, LBS_EINPUT, "%s: read error: %s", c->path, strerror(errno));
	if (c->st == LBS_OK && csv_fini(&p, on_field, on_row, c) != 0 && c->st == LBS_OK)
		c->st = lbs_error_set(c->err, LBS_EINPUT, "%s:%ld: %s", c->path, c->line + 1,
				      csv_strerror(csv_error(&p)));
	csv_free(&p);
	fclose(f);
	if (c->st == LBS_OK && c->line < 2)
		c->st = lbs_error_set(c->err, LBS_EINPUT, "%s: no data rows", c->path);
	return c->st;
}

static lbs_curve *series_for(lbs_curve_set *set, const char *device, const char *model)
{
	for (size_t i = 0; i < set->n; i++)
		if (!strcmp(set->s[i].device, device) && !strcmp(set->s[i].model, model))
			return &set->s[i];
	if (set->n == set->cap) {
		size_t ncap = set->cap ? 2 * set->cap : 16;
		lbs_curve *s = realloc(set->s, ncap * sizeof *s);
		if (!s)
			return NULL;
		set->s = s;
		set->cap = ncap;
	}
	lbs_curve *s = &set->s[set->n++];
	memset(s, 0, sizeof *s);
	snprintf(s->device, sizeof s->device, "%s", device);
	snprintf(s->model, sizeof s->model, "%s", model);
	return s;
}

/* Adds a point, keeping batches increasing; a batch seen twice is an error. */
static lbs_status add_point(csv_ctx *c, lbs_curve *s, double batch, double time_s, size_t col)
{
	if (s->n == s->cap) {
		size_t ncap = s->cap ? 2 * s->cap : 16;
		double *b = realloc(s->batch, ncap * sizeof *b);
		if (b)
			s->batch = b;
		double *t = b ? realloc(s->time_s, ncap * sizeof *t) : NULL;
		if (!t)
			return lbs_error_set(c->err, LBS_EINTERNAL, "out of memory");
		s->time_s = t;
		s->cap = ncap;
	}
	size_t i = s->n;
	while (i > 0 && s->batch[i - 1] > batch) {
		s->batch[i] = s->batch[i - 1];
		s->time_s[i] = s->time_s[i - 1];
		i--;
	}
	if (i > 0 && s->batch[i - 1] == batch)
		return row_error(c, col, "batch %g of %s on %s appears twice", batch, s->model, s->device);
	s->batch[i] = batch;
	s->time_s[i] = time_s;
	s->n++;
	return LBS_OK;
}

static lbs_status number(csv_ctx *c, size_t col, bool integer, double *out)
{
	char why[256];
	if (integer) {
		int64_t v;
		if (!lbs_parse_int(c->field[col], &v, why, sizeof why) || v < 1)
			return row_error(c, col, "'%s': expected an integer >= 1", c->field[col]);
		*out = (double)v;
	} else if (!lbs_parse_quantity(c->field[col], LBS_DIM_NONE, out, why, sizeof why) || !(*out >= 0)) {
		return row_error(c, col, "'%s': expected a number >= 0", c->field[col]);
	}
	return LBS_OK;
}

static lbs_status gavel_row(csv_ctx *c)
{
	enum { TYPE, MODEL, BATCH, SCALE, STEPS };
	double batch, scale, steps;
	lbs_status st;
	if (!*c->field[TYPE] || !*c->field[MODEL])
		return row_error(c, *c->field[TYPE] ? MODEL : TYPE, "empty");
	if ((st = number(c, SCALE, true, &scale)) || (st = number(c, STEPS, false, &steps)))
		return st;
	/* Job types without a batch size (A3C, CycleGAN), multi-GPU jobs,
	 * servers other than one ("_unconsolidated") and runs that failed (0.0)
	 * say nothing about one GPU's time per batch. */
	if (!*c->field[BATCH] || scale != 1 || strchr(c->field[TYPE], '_') || steps == 0)
		return LBS_OK;
	if ((st = number(c, BATCH, true, &batch)))
		return st;
	lbs_curve *s = series_for(c->set, c->field[TYPE], c->field[MODEL]);
	if (!s)
		return lbs_error_set(c->err, LBS_EINTERNAL, "out of memory");
	return add_point(c, s, batch, 1.0 / steps, BATCH);
}

lbs_status lbs_curves_read_gavel(const char *path, lbs_curve_set *set, lbs_error *err)
{
	static const char *const header[] = { "worker_type", "model", "batch_size", "scale_factor",
					      "steps_per_s" };
	csv_ctx c = { .path = path, .header = header, .n_header = 5, .row = gavel_row, .set = set,
		      .err = err };
	return parse_file(&c);
}

static lbs_status pollux_row(csv_ctx *c)
{
	enum { PLACEMENT, BSZ, STEP, SYNC };
	double batch, step, sync;
	lbs_status st;
	if (strspn(c->field[PLACEMENT], "0123456789") != strlen(c->field[PLACEMENT]) || !*c->field[PLACEMENT])
		return row_error(c, PLACEMENT, "'%s': expected digits, GPUs per node", c->field[PLACEMENT]);
	if ((st = number(c, BSZ, true, &batch)) || (st = number(c, STEP, false, &step)) ||
	    (st = number(c, SYNC, false, &sync)))
		return st;
	if (strcmp(c->field[PLACEMENT], "1"))
		return LBS_OK; /* more than one GPU */
	if (!(step > sync))
		return row_error(c, SYNC, "%s s is not below step_time %s s", c->field[SYNC], c->field[STEP]);
	lbs_curve *s = series_for(c->set, c->device, c->model);
	if (!s)
		return lbs_error_set(c->err, LBS_EINTERNAL, "out of memory");
	return add_point(c, s, batch, step - sync, BSZ);
}

lbs_status lbs_curves_read_pollux(const char *path, const char *device, const char *model,
				  lbs_curve_set *set, lbs_error *err)
{
	static const char *const header[] = { "placement", "local_bsz", "step_time", "sync_time" };
	csv_ctx c = { .path = path, .header = header, .n_header = 4, .row = pollux_row, .set = set,
		      .device = device, .model = model, .err = err };
	lbs_status st = parse_file(&c);
	if (st != LBS_OK)
		return st;
	lbs_curve *s = series_for(set, device, model);
	if (!s)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	return s->n ? LBS_OK : lbs_error_set(err, LBS_EINPUT, "%s: no rows with placement 1", path);
}

void lbs_curve_set_free(lbs_curve_set *set)
{
	for (size_t i = 0; i < set->n; i++) {
		free(set->s[i].batch);
		free(set->s[i].time_s);
	}
	free(set->s);
	memset(set, 0, sizeof *set);
}
