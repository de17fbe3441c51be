/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A user's own measured step times (lbsim calibrate --fit, doc/profiles.md,
 * "Your own measurements"): a CSV file with a header line
 * `batch,time[,repetitions]` and one row per measurement.
 *  - batch: an integer >= 1, the samples of one step on one device;
 *  - time: one training step at that batch, > 0, with its unit (`125 ms`);
 *    the column named time_s, time_ms or time_us instead gives a bare
 *    number that unit (`0.125` under time_s), so that no number is taken
 *    for seconds that was meant otherwise;
 *  - repetitions (optional, default 1): how many steps that row's time is
 *    the mean of, an integer >= 1.
 * Rows may come in any order and a batch may have several rows: its time
 * is their mean weighted by repetitions (the mean over every step behind
 * them: rows (8, 0.11 s, 1) and (8, 0.13 s, 3) give (0.11 + 3 x 0.13) / 4
 * = 0.125 s), its spread (max - min) / that mean of the row times. Blank
 * lines and lines starting with `#` are skipped. Every error names the file
 * and line. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "models/calib.h"
#include "util/units.h"

/* The bounds (doc/profiles.md): what a file may hold is bounded before the
 * fits, whose cost grows with the distinct batches. */
#define MAX_LINE 1024
#define MAX_ROWS LBS_FIT_MAX_ROWS
#define MAX_BYTES LBS_FIT_MAX_BYTES

typedef struct row {
	int64_t batch;
	double time_s;
	int64_t reps;
} row;

static int by_batch(const void *a, const void *b)
{
	const row *x = a, *y = b;
	return x->batch < y->batch ? -1 : x->batch > y->batch;
}

/* Splits line into at most max fields at commas, trimming spaces. */
static size_t split(char *line, char **field, size_t max)
{
	size_t n = 0;
	for (char *p = line;; p++) {
		char *end = p + strcspn(p, ",");
		bool last = *end == '\0';
		*end = '\0';
		while (isspace((unsigned char)*p))
			p++;
		for (char *q = end; q > p && isspace((unsigned char)q[-1]);)
			*--q = '\0';
		if (n < max)
			field[n] = p;
		n++;
		if (last)
			return n;
		p = end;
	}
}

static lbs_status at(lbs_error *err, const char *path, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static lbs_status at(lbs_error *err, const char *path, int line, const char *fmt, ...)
{
	char msg[LBS_ERROR_MAX / 2];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return lbs_error_set(err, LBS_EINPUT, "%s:%d: %s", path, line, msg);
}

/* Seconds as a plain decimal number ("0.125", "1.25e-1") or a time with
 * a unit ("125 ms"): the grammar of lbs_parse_real, so no hexadecimal
 * ("0x1p-3"), no inf or nan. */
/* A time with its unit, or a bare number in `unit_s` seconds (0: a bare
 * number is refused, *bare set). */
static bool parse_time(const char *text, double unit_s, double *out, bool *bare)
{
	char why[128];
	*bare = false;
	if (lbs_parse_real(text, out, why, sizeof why)) {
		*bare = true;
		*out *= unit_s;
		return unit_s > 0;
	}
	return lbs_parse_quantity(text, LBS_DIM_TIME, out, why, sizeof why);
}

/* One line of f into buf (room for MAX_LINE + 1 characters and the NUL),
 * without its line end: 1, 0 at the end of the file, -1 for a line too
 * long, -2 for a NUL byte. *total counts the bytes read. */
static int read_line(FILE *f, char *buf, size_t *total)
{
	size_t n = 0;
	int c;
	while ((c = getc_unlocked(f)) != EOF) {
		++*total;
		if (c == '\n')
			break;
		if (c == '\0')
			return -2;
		if (n == MAX_LINE)
			return -1;
		buf[n++] = (char)c;
	}
	buf[n] = '\0';
	if (n && buf[n - 1] == '\r')
		buf[--n] = '\0';
	return c == EOF && n == 0 ? 0 : 1;
}

lbs_status lbs_calib_read_times(const char *path, lbs_step_times *t, lbs_error *err)
{
	*t = (lbs_step_times){ 0 };
	FILE *f = fopen(path, "r");
	if (!f)
		return lbs_error_set(err, LBS_EINPUT, "%s: cannot read: %s", path, strerror(errno));
	char line[MAX_LINE + 2];
	int lineno = 0, header = 0, got;
	double unit_s = 0; /* what a bare number is in: the time column's unit (0: none) */
	const char *time_col = "time";
	size_t n_cols = 0, cap = 0, n = 0, total = 0;
	row *rows = NULL;
	lbs_status st = LBS_OK;
	while (st == LBS_OK && (got = read_line(f, line, &total)) != 0) {
		lineno++;
		if (got == -1) {
			st = at(err, path, lineno, "line longer than %d characters", MAX_LINE);
			break;
		}
		if (got == -2) {
			st = at(err, path, lineno, "a NUL byte: not a text file");
			break;
		}
		if (total > MAX_BYTES) {
			st = at(err, path, lineno, "more than %d bytes (the limit of a --fit file)", MAX_BYTES);
			break;
		}
		const char *s = line + strspn(line, " \t");
		if (!*s || *s == '#')
			continue;
		char *field[4];
		size_t k = split(line, field, 4);
		if (!header) {
			header = lineno;
			n_cols = k;
			static const struct { const char *name; double unit_s; } cols[] = {
				{ "time", 0 }, { "time_s", 1 }, { "time_ms", 1e-3 }, { "time_us", 1e-6 },
			};
			bool known = false;
			for (size_t c = 0; k >= 2 && c < sizeof cols / sizeof cols[0]; c++)
				if (!strcasecmp(field[1], cols[c].name)) {
					known = true;
					unit_s = cols[c].unit_s;
					time_col = cols[c].name;
				}
			if ((k != 2 && k != 3) || strcasecmp(field[0], "batch") || !known ||
			    (k == 3 && strcasecmp(field[2], "repetitions")))
				st = at(err, path, lineno, "expected the header line batch,time or "
					"batch,time,repetitions (time_s, time_ms or time_us for times without their unit)");
			continue;
		}
		if (k != n_cols) {
			st = at(err, path, lineno, "%zu fields: expected %zu, as the header (line %d) has",
				k, n_cols, header);
			break;
		}
		row r = { .reps = 1 };
		char why[128];
		bool bare = false, ok_time = false;
		if (!lbs_parse_int(field[0], &r.batch, why, sizeof why) || r.batch < 1 || r.batch > 1000000000)
			st = at(err, path, lineno, "batch: '%s' is not an integer from 1 to 1e9", field[0]);
		else if (!(ok_time = parse_time(field[1], unit_s, &r.time_s, &bare)) && bare)
			st = at(err, path, lineno, "time: '%s' has no unit: write it with one ('%s ms', '%s s'), or "
				"name the column time_s, time_ms or time_us to give bare numbers that unit", field[1],
				field[1], field[1]);
		else if (!ok_time || !(r.time_s > 0) || !isfinite(r.time_s) || r.time_s > 3600)
			st = at(err, path, lineno, "%s: '%s' is not a time > 0 (%s) up to an hour", time_col, field[1],
				unit_s == 1 ? "seconds, or with a unit such as '125 ms'"
				: unit_s == 1e-3 ? "milliseconds, or with a unit"
				: unit_s == 1e-6 ? "microseconds, or with a unit" : "with a unit such as '125 ms'");
		else if (n_cols == 3 && (!lbs_parse_int(field[2], &r.reps, why, sizeof why) || r.reps < 1 ||
					 r.reps > 1000000000))
			st = at(err, path, lineno, "repetitions: '%s' is not an integer from 1 to 1e9",
				field[2]);
		if (st != LBS_OK)
			break;
		if (n == MAX_ROWS) {
			st = at(err, path, lineno, "more than %d rows (the limit of a --fit file)", MAX_ROWS);
			break;
		}
		if (n == cap) {
			size_t c2 = cap ? 2 * cap : 64;
			if (c2 > MAX_ROWS)
				c2 = MAX_ROWS;
			row *p = realloc(rows, c2 * sizeof *p);
			if (!p) {
				st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
				break;
			}
			rows = p;
			cap = c2;
		}
		rows[n++] = r;
	}
	if (st == LBS_OK && ferror(f))
		st = lbs_error_set(err, LBS_EINPUT, "%s: cannot read: %s", path, strerror(errno));
	fclose(f);
	if (st == LBS_OK && !header)
		st = lbs_error_set(err, LBS_EINPUT, "%s: empty: expected the header line batch,time", path);
	if (st == LBS_OK) {
		/* Stable order of equal batches does not matter: the mean is
		 * taken over all of them. */
		if (n)
			qsort(rows, n, sizeof *rows, by_batch);
		t->batch = calloc(n ? n : 1, sizeof *t->batch);
		t->time_s = calloc(n ? n : 1, sizeof *t->time_s);
		t->spread = calloc(n ? n : 1, sizeof *t->spread);
		if (!t->batch || !t->time_s || !t->spread)
			st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	}
	for (size_t i = 0; st == LBS_OK && i < n;) {
		size_t j = i;
		double sum = 0, w = 0, lo = rows[i].time_s, hi = rows[i].time_s;
		for (; j < n && rows[j].batch == rows[i].batch; j++) {
			sum += (double)rows[j].reps * rows[j].time_s;
			w += (double)rows[j].reps;
			lo = fmin(lo, rows[j].time_s);
			hi = fmax(hi, rows[j].time_s);
		}
		double mean = sum / w;
		t->batch[t->n] = (double)rows[i].batch;
		t->time_s[t->n] = mean;
		t->spread[t->n] = j - i > 1 ? (hi - lo) / mean : NAN;
		t->n++;
		i = j;
	}
	if (st == LBS_OK && t->n > LBS_FIT_MAX_BATCHES)
		st = lbs_error_set(err, LBS_EINPUT, "%s: %zu distinct batches: a fit takes at most %d (its cost "
				   "grows with their number; average or thin the measurements)", path, t->n,
				   LBS_FIT_MAX_BATCHES);
	t->rows = n;
	free(rows);
	if (st != LBS_OK)
		lbs_step_times_free(t);
	return st;
}

void lbs_step_times_free(lbs_step_times *t)
{
	free(t->batch);
	free(t->time_s);
	free(t->spread);
	*t = (lbs_step_times){ 0 };
}
