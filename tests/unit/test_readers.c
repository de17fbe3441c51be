/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Trace readers: each against its fixture in tests/data/traces/ and
 * against each kind of bad input, whose message must name the file, the
 * line and the field. Also the shared CSV layer (libcsv) and timestamps. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/keys.h"
#include "tests/unit/suites.h"
#include "traces/csvread.h"
#include "traces/reader.h"

static lbs_error err;

/* Reads fixture tests/data/traces/<name> with `format`; NULL on failure
 * (the message is printed, the test fails). */
static lbs_series_set *read_fixture(const char *format, const char *name, const lbs_read_opts *o)
{
	char rel[256];
	snprintf(rel, sizeof rel, "tests/data/traces/%s", name);
	char *path = src_path(rel);
	lbs_series_set *s = NULL;
	const lbs_trace_reader *r = lbs_trace_reader_find(format);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	memset(&err, 0, sizeof err);
	if (r->read(path, o, &s, &err) != LBS_OK) {
		fprintf(stderr, "\n  %s\n", err.msg);
		CU_FAIL("fixture did not load");
	}
	free(path);
	return s;
}

/* Reading `text` with `format` fails with LBS_EINPUT, and the message holds
 * "<path>:<line>:" (just "<path>" when line is 0) and each fragment. */
static void expect_error(const char *format, const char *text, int line, const char *frag1,
			 const char *frag2)
{
	char *path = write_temp(text);
	lbs_series_set *s = NULL;
	memset(&err, 0, sizeof err);
	lbs_status st = lbs_trace_reader_find(format)->read(path, NULL, &s, &err);
	char where[300];
	if (line)
		snprintf(where, sizeof where, "%s:%d: ", path, line);
	else
		snprintf(where, sizeof where, "%s", path);
	if (st != LBS_EINPUT || s || !strstr(err.msg, where) || (frag1 && !strstr(err.msg, frag1)) ||
	    (frag2 && !strstr(err.msg, frag2))) {
		fprintf(stderr, "\n  %s: expected status 3 and '%s' '%s' '%s' in: (%d) %s\n", format, where,
			frag1 ? frag1 : "", frag2 ? frag2 : "", (int)st, err.msg);
		CU_FAIL("bad trace not refused with file, line and field");
	}
	lbs_series_set_destroy(s);
	unlink(path);
	free(path);
}

/* ---- the CSV layer ---------------------------------------------------- */

typedef struct rows {
	int n;
	int64_t line[16];
	char text[16][64];
	int comments;
} rows;

static lbs_status collect(void *ctx, const lbs_csv_row *row, lbs_error *e)
{
	(void)e;
	rows *r = ctx;
	r->line[r->n] = row->line;
	r->text[r->n][0] = '\0';
	for (size_t i = 0; i < row->n; i++) {
		strcat(r->text[r->n], row->field[i]);
		strcat(r->text[r->n], "|");
	}
	r->n++;
	return LBS_OK;
}

static lbs_status count_comment(void *ctx, const char *text, int64_t line, lbs_error *e)
{
	(void)text, (void)line, (void)e;
	((rows *)ctx)->comments++;
	return LBS_OK;
}

static void test_csv_layer(void)
{
	/* BOM, CRLF, blank lines, quoted comma and line break, comment, no final newline. */
	char *path = write_temp("\xEF\xBB\xBF" "a,b\r\n\r\n \n\"x,y\",\"two\nlines\"\n#c\n1, 2 ,\n3");
	rows r = { 0 };
	CU_ASSERT_EQUAL_FATAL(lbs_csv_read(path, collect, count_comment, &r, &err), LBS_OK);
	CU_ASSERT_EQUAL(r.n, 4);
	CU_ASSERT_STRING_EQUAL(r.text[0], "a|b|");
	CU_ASSERT_EQUAL(r.line[0], 1);
	CU_ASSERT_STRING_EQUAL(r.text[1], "x,y|two\nlines|");
	CU_ASSERT_EQUAL(r.line[1], 4);
	CU_ASSERT_EQUAL(r.comments, 1);
	CU_ASSERT_STRING_EQUAL(r.text[2], "1|2||"); /* spaces trimmed, trailing empty field */
	CU_ASSERT_EQUAL(r.line[2], 7);
	CU_ASSERT_STRING_EQUAL(r.text[3], "3|");
	CU_ASSERT_EQUAL(r.line[3], 8);
	unlink(path);
	free(path);

	path = write_temp("a,b\n1,\"unterminated\n");
	r = (rows){ 0 };
	CU_ASSERT_EQUAL(lbs_csv_read(path, collect, NULL, &r, &err), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "malformed CSV"));
	unlink(path);
	free(path);

	path = write_temp("a,b\n1,2\n");
	FILE *f = fopen(path, "ab");
	fwrite("3,\0\n", 1, 4, f);
	fclose(f);
	r = (rows){ 0 };
	CU_ASSERT_EQUAL(lbs_csv_read(path, collect, NULL, &r, &err), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, ":3: NUL byte"));
	unlink(path);
	free(path);

	CU_ASSERT_EQUAL(lbs_csv_read("/nonexistent/t.csv", collect, NULL, &r, &err), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/nonexistent/t.csv: cannot read trace"));
	CU_ASSERT_EQUAL(lbs_csv_read("/tmp", collect, NULL, &r, &err), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "directory"));
}

static void test_numbers(void)
{
	double v;
	int64_t i;
	CU_ASSERT_PTR_NULL(lbs_csv_real("94.79799999999999", &v));
	CU_ASSERT_EQUAL(v, 94.79799999999999);
	CU_ASSERT_PTR_NULL(lbs_csv_real("-1e3", &v));
	CU_ASSERT_EQUAL(v, -1000);
	CU_ASSERT_PTR_NULL(lbs_csv_real(".5", &v));
	CU_ASSERT_STRING_EQUAL(lbs_csv_real("nan", &v), "is not a finite number");
	CU_ASSERT_STRING_EQUAL(lbs_csv_real("-inf", &v), "is not a finite number");
	CU_ASSERT_STRING_EQUAL(lbs_csv_real("1e999", &v), "is not a finite number");
	CU_ASSERT_STRING_EQUAL(lbs_csv_real("0x10", &v), "is not a decimal number");
	CU_ASSERT_STRING_EQUAL(lbs_csv_real("12abc", &v), "is not a number");
	CU_ASSERT_STRING_EQUAL(lbs_csv_real("NA", &v), "is not a number");
	CU_ASSERT_STRING_EQUAL(lbs_csv_real("", &v), "is empty (expected a number)");
	CU_ASSERT_PTR_NULL(lbs_csv_int("42", 0, 100, &i));
	CU_ASSERT_EQUAL(i, 42);
	CU_ASSERT_STRING_EQUAL(lbs_csv_int("4.5", 0, 100, &i), "is not an integer");
	CU_ASSERT_STRING_EQUAL(lbs_csv_int("-1", 0, 100, &i), "is out of range");
}

static void test_timestamps(void)
{
	double t;
	CU_ASSERT_PTR_NULL(lbs_csv_timestamp("2014-04-10 00:04:00", &t));
	CU_ASSERT_EQUAL(t, 1397088240.0);
	CU_ASSERT_PTR_NULL(lbs_csv_timestamp("2017-10-03 00:08:00 PDT", &t));
	CU_ASSERT_EQUAL(t, 1507014480.0);
	CU_ASSERT_PTR_NULL(lbs_csv_timestamp("2017-10-03T07:08:00Z", &t));
	CU_ASSERT_EQUAL(t, 1507014480.0);
	CU_ASSERT_PTR_NULL(lbs_csv_timestamp("2017-10-03T09:08:00+02:00", &t));
	CU_ASSERT_EQUAL(t, 1507014480.0);
	CU_ASSERT_PTR_NULL(lbs_csv_timestamp("2023-06-23 16:37:18.960", &t));
	CU_ASSERT_DOUBLE_EQUAL(t, 1687538238.96, 1e-6);
	CU_ASSERT_PTR_NULL(lbs_csv_timestamp("2000-02-29 12:00:00", &t));
	CU_ASSERT_EQUAL(t, 951825600.0);
	CU_ASSERT_PTR_NULL(lbs_csv_timestamp("1969-12-31 23:59:59", &t));
	CU_ASSERT_EQUAL(t, -1.0);
	CU_ASSERT_PTR_NOT_NULL(lbs_csv_timestamp("2001-02-29 00:00:00", &t));
	CU_ASSERT_PTR_NOT_NULL(lbs_csv_timestamp("2014-13-01 00:00:00", &t));
	CU_ASSERT_PTR_NOT_NULL(lbs_csv_timestamp("2014-04-10", &t));
	CU_ASSERT_PTR_NOT_NULL(lbs_csv_timestamp("2014-04-10 00:04:00 CEST", &t));
	CU_ASSERT_PTR_NOT_NULL(lbs_csv_timestamp("2014-04-10 00:04:00x", &t));
}

/* ---- lbsim's own format ----------------------------------------------- */

static void test_lbsim(void)
{
	lbs_series_set *s = read_fixture("lbsim", "lbsim-time.csv", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(s->index_kind, LBS_INDEX_TIME);
	CU_ASSERT_EQUAL(s->n_rows, 3);
	CU_ASSERT_EQUAL(s->n_cols, 3);
	CU_ASSERT_STRING_EQUAL(s->col_name[1], "cpu_util");
	CU_ASSERT_EQUAL(s->index[1], 10);
	CU_ASSERT_EQUAL(s->col[0][1], 0.5);
	CU_ASSERT_EQUAL(s->col[2][2], 0.30);
	CU_ASSERT_EQUAL(s->stats[0].min_line, 6);
	lbs_series_set_destroy(s);

	s = read_fixture("lbsim", "lbsim-iteration.csv", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(s->index_kind, LBS_INDEX_ITERATION);
	CU_ASSERT_EQUAL(s->n_series, 2);
	CU_ASSERT_STRING_EQUAL(s->series[1].id, "w1");
	lbs_series w0 = lbs_series_view(s, 0, 0);
	CU_ASSERT_EQUAL(w0.n, 3);
	CU_ASSERT_EQUAL(w0.index[2], 10);
	CU_ASSERT_EQUAL(w0.value[1], 0.150);
	lbs_series_set_destroy(s);

	const char *ids[] = { "w1" };
	lbs_read_opts o = { .ids = ids, .n_ids = 1 };
	s = read_fixture("lbsim", "lbsim-iteration.csv", &o);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(s->n_series, 1);
	CU_ASSERT_EQUAL(s->n_rows, 2);
	lbs_series_set_destroy(s);
}

#define V "# lbsim-trace 1\n"
static void test_lbsim_errors(void)
{
	expect_error("lbsim", "", 0, "empty file", NULL);
	expect_error("lbsim", "\n\n", 0, "empty file", NULL);
	expect_error("lbsim", V, 0, "no header line", NULL);
	expect_error("lbsim", V "time_s,availability\n", 0, "no data rows", NULL);
	expect_error("lbsim", "time_s,availability\n0,1\n", 1, "version line", NULL);
	expect_error("lbsim", "# lbsim-trace 2\ntime_s,availability\n0,1\n", 1, "unsupported version '2'", NULL);
	expect_error("lbsim", V "t,availability\n0,1\n", 2, "header", "expected time_s or iteration");
	expect_error("lbsim", V "time_s\n0\n", 2, "header", "no value column");
	expect_error("lbsim", V "time_s,a,a\n0,1,1\n", 2, "header", "'a' appears twice");
	expect_error("lbsim", V "time_s,CPU Util\n0,1\n", 2, "header", "not a column name");
	expect_error("lbsim", V "time_s,availability\n0,1\n5,1,3\n", 4, "3 fields", "header (line 2) has 2");
	expect_error("lbsim", V "time_s,availability\n0,1\n5\n", 4, "1 fields", NULL);
	expect_error("lbsim", V "time_s,availability\n0,1\n5,fast\n", 4, "availability: 'fast' is not a number", NULL);
	expect_error("lbsim", V "time_s,availability\n0,1\n5,\n", 4, "availability: '' is empty", NULL);
	expect_error("lbsim", V "time_s,availability\n0,1\n5,NaN\n", 4, "availability: 'NaN' is not a finite number", NULL);
	expect_error("lbsim", V "time_s,availability\n0,1\n5,inf\n", 4, "availability", "not a finite number");
	expect_error("lbsim", V "time_s,availability\n0,1\n5,-0.5\n", 4, "availability: '-0.5' must be > 0", NULL);
	expect_error("lbsim", V "time_s,availability\n0,1\n5,0\n", 4, "availability: '0' must be > 0", NULL);
	expect_error("lbsim", V "time_s,cpu_util\n0,1\n5,55\n", 4, "cpu_util: '55' must be in [0, 1]", NULL);
	expect_error("lbsim", V "time_s,bandwidth\n0,0\n", 3, "bandwidth", "must be > 0");
	expect_error("lbsim", V "time_s,availability\nx,1\n", 3, "time_s: 'x' is not a number", NULL);
	expect_error("lbsim", V "time_s,availability\n10,1\n5,1\n", 4, "time_s", "goes back: 5 after 10 at line 3");
	expect_error("lbsim", V "time_s,availability\n10,1\n10,1\n", 4, "time_s", "duplicate time_s 10 (also at line 3)");
	expect_error("lbsim", V "iteration,availability\n1.5,1\n", 3, "iteration: '1.5' is not an integer", NULL);
	expect_error("lbsim", V "iteration,availability\n-1,1\n", 3, "iteration", "out of range");
	expect_error("lbsim", V "iteration,id,availability\n1,,1\n", 3, "id: is empty", NULL);
	expect_error("lbsim", V "iteration,id,availability\n1,a,1\n2,b,1\n1,a,1\n", 5, "iteration",
		     "duplicate iteration 1 (also at line 3)");
	expect_error("lbsim", V "time_s,availability\n0,\"1\n", 3, "malformed CSV", NULL);
}

static void test_registry(void)
{
	/* The scenario key's choices and the registry agree, in order. */
	CU_ASSERT_EQUAL(lbs_choice_index(LBS_TRACE_FORMAT_CHOICES, "none"), 0);
	size_t n = 0;
	for (; lbs_trace_readers[n]; n++)
		CU_ASSERT_EQUAL(lbs_choice_index(LBS_TRACE_FORMAT_CHOICES, lbs_trace_readers[n]->name),
				(int)n + 1);
	const char *p = LBS_TRACE_FORMAT_CHOICES;
	size_t bars = 0;
	for (; *p; p++)
		bars += *p == '|';
	CU_ASSERT_EQUAL(bars, n);
	CU_ASSERT_PTR_NULL(lbs_trace_reader_find("none"));
}

void suite_readers(void)
{
	static const test_case tests[] = {
		{ "CSV layer (libcsv)", test_csv_layer },
		{ "numbers", test_numbers },
		{ "timestamps", test_timestamps },
		{ "format registry", test_registry },
		{ "lbsim format", test_lbsim },
		{ "lbsim format: bad input", test_lbsim_errors },
	};
	add_suite("readers", tests, sizeof tests / sizeof tests[0]);
}
