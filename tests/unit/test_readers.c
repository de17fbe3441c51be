/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Trace readers: each against its fixture in tests/data/traces/ and
 * against each kind of bad input, whose message must name the file, the
 * line and the field. Also the shared CSV layer (libcsv) and timestamps. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/keys.h"
#include "tests/unit/suites.h"
#include "traces/csvread.h"
#include "traces/reader.h"

static lbs_error err;

/* Reads fixture tests/data/traces/<name> with `format`; NULL on failure
 * (the message is printed, the test fails). */
static lbs_series_set *read_fixture(const char *format, const char *name, const lbs_read_opts *o)
{
	char rel[256];
	/* The made-up format examples the scenarios use are shipped (installed)
	 * under traces/data; the rest are the tests' own. */
	bool shipped = !strcmp(name, "alibaba-machine_usage.csv") || !strcmp(name, "philly-cpu.csv") ||
		       !strcmp(name, "philly-gpu.csv");
	snprintf(rel, sizeof rel, "%s/%s", shipped ? "traces/data/format-examples" : "tests/data/traces", name);
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

/* ---- the public data sets --------------------------------------------- */

static void test_pai(void)
{
	lbs_series_set *s = read_fixture("pai", "pai-job.csv", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(s->index_kind, LBS_INDEX_ITERATION);
	CU_ASSERT_STRING_EQUAL(s->col_name[0], "batch_time");
	CU_ASSERT_EQUAL(s->n_series, 3);
	CU_ASSERT_STRING_EQUAL(s->series[0].id, "1"); /* order of first appearance */
	CU_ASSERT_STRING_EQUAL(s->series[2].id, "0");
	CU_ASSERT_EQUAL(s->n_rows, 9); /* the repeated identical row is one sample */
	CU_ASSERT_EQUAL(s->origin, 1);
	CU_ASSERT_EQUAL(s->last, 20);
	lbs_series w0 = lbs_series_view(s, (size_t)lbs_series_find(s, "0"), 0);
	CU_ASSERT_EQUAL(w0.n, 3);
	CU_ASSERT_EQUAL(w0.index[0], 3); /* worker 0 has no sample at iteration 1 */
	CU_ASSERT_EQUAL(w0.value[1], 1000);
	CU_ASSERT_EQUAL(lbs_series_median(s, 0, &err), 410); /* the job median */
	lbs_series_set_destroy(s);

	const char *ids[] = { "2" };
	lbs_read_opts o = { .ids = ids, .n_ids = 1 };
	s = read_fixture("pai", "pai-job.csv", &o);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(s->n_series, 1);
	CU_ASSERT_EQUAL(s->n_rows, 3);
	lbs_series_set_destroy(s);
}

#define PH ",worker,gpu,time,batch_time_norm\n"
static void test_pai_errors(void)
{
	expect_error("pai", "", 0, "empty file", NULL);
	expect_error("pai", PH, 0, "no data rows", NULL);
	expect_error("pai", ",worker,gpu,time\n0,0,25,1\n", 1, "header", "missing column 'batch_time_norm'");
	expect_error("pai", PH "0,0,25,1,476\n1,0,25,x,476\n", 3, "time: 'x' is not an integer", NULL);
	expect_error("pai", PH "0,0,25,1.5,476\n", 2, "time", "not an integer");
	expect_error("pai", PH "0,w0,25,1,476\n", 2, "worker: 'w0' is not an integer", NULL);
	expect_error("pai", PH "0,0,25,1,0\n", 2, "batch_time_norm: '0' must be > 0", NULL);
	expect_error("pai", PH "0,0,25,1,-4\n", 2, "batch_time_norm", "must be > 0");
	expect_error("pai", PH "0,0,25,1,nan\n", 2, "batch_time_norm: 'nan' is not a finite number", NULL);
	expect_error("pai", PH "0,0,25,1,476\n1,0,25\n", 3, "3 fields", NULL);
	expect_error("pai", PH "0,0,25,5,476\n1,1,25,1,476\n2,0,25,3,476\n", 4, "time goes back", "line 2");
	expect_error("pai", PH "0,0,25,5,476\n1,0,25,5,477\n", 3, "duplicate time 5 with a different batch_time",
		     "line 2");
}

static void test_azure(void)
{
	lbs_series_set *s = read_fixture("azure", "azure-vm.csv", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(s->index_kind, LBS_INDEX_TIME);
	CU_ASSERT_STRING_EQUAL(s->col_name[0], "throughput");
	CU_ASSERT_EQUAL(s->n_series, 2);
	CU_ASSERT_DOUBLE_EQUAL(s->origin, 1687538238.96, 1e-6);
	lbs_series v1 = lbs_series_view(s, (size_t)lbs_series_find(s, "1"), 0);
	CU_ASSERT_EQUAL(v1.n, 2);
	CU_ASSERT_EQUAL(v1.value[1], 6254.865);
	CU_ASSERT_DOUBLE_EQUAL(v1.index[1] - v1.index[0], 7200, 1e-6);
	lbs_series_set_destroy(s);

	/* A VM's runs out of time order (as in the long-lived files) are sorted. */
	char *path = write_temp("value,runtime,starttime,VM_id\n3,90,2024-05-23 18:06:12.180,0\n"
				"1,90,2023-09-01 22:57:23.860,0\n2,90,2024-05-23 21:14:11.070,0\n");
	CU_ASSERT_EQUAL_FATAL(lbs_reader_azure.read(path, NULL, &s, &err), LBS_OK);
	CU_ASSERT_EQUAL(s->col[0][0], 1);
	CU_ASSERT_EQUAL(s->col[0][1], 3);
	CU_ASSERT_EQUAL(s->col[0][2], 2);
	CU_ASSERT(s->index[0] < s->index[1] && s->index[1] < s->index[2]);
	lbs_series_set_destroy(s);
	unlink(path);
	free(path);
}

#define AH "value,runtime,starttime,VM_id\n"
static void test_azure_errors(void)
{
	expect_error("azure", "", 0, "empty file", NULL);
	expect_error("azure", "value,starttime,VM_id\n1,2023-06-23 16:37:18,0\n", 1, "missing column 'runtime'", NULL);
	expect_error("azure", AH "12509.73,90.01,2023-06-23 16:37,0\n", 2, "starttime", "not a timestamp");
	expect_error("azure", AH "0,90.01,2023-06-23 16:37:18,0\n", 2, "value: '0' must be > 0", NULL);
	expect_error("azure", AH "NaN,90.01,2023-06-23 16:37:18,0\n", 2, "value", "not a finite number");
	expect_error("azure", AH "12,fast,2023-06-23 16:37:18,0\n", 2, "runtime: 'fast' is not a number", NULL);
	expect_error("azure", AH "12,90,2023-06-23 16:37:18,vm\n", 2, "VM_id", "not an integer");
	expect_error("azure", AH "12,90,2023-06-23 16:37:18,0\n13,90,2023-06-23 10:00:00,1\n"
		     "14,90,2023-06-23 16:37:18,0\n", 4, "duplicate starttime", "also at line 2");
}

static void test_cloudwatch(void)
{
	lbs_series_set *s = read_fixture("cloudwatch", "cloudwatch-nab.csv", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_STRING_EQUAL(s->col_name[0], "value");
	CU_ASSERT_EQUAL(s->n_series, 1);
	CU_ASSERT_EQUAL(s->n_rows, 6); /* three rows at 03:00:00 are one period */
	CU_ASSERT_DOUBLE_EQUAL(s->col[0][3], (42.0 + 103.2 + 60.0) / 3, 1e-12);
	CU_ASSERT_EQUAL(s->index[3] - s->index[2], 64 * 60);
	lbs_series_set_destroy(s);

	lbs_read_opts o = { .metric = "NetworkIn" };
	s = read_fixture("cloudwatch", "cloudwatch-nab.csv", &o);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_STRING_EQUAL(s->col_name[0], "network_in");
	lbs_series_set_destroy(s);

	/* The console's form: the metric comes from the headers, percent -> fraction. */
	s = read_fixture("cloudwatch", "cloudwatch-console.csv", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_STRING_EQUAL(s->col_name[0], "cpu_util");
	CU_ASSERT_EQUAL(s->n_series, 2);
	CU_ASSERT_STRING_EQUAL(s->series[1].id, "i-0e4f5a6b CPUUtilization");
	lbs_series a = lbs_series_view(s, 0, 0), b = lbs_series_view(s, 1, 0);
	CU_ASSERT_EQUAL(a.n, 2); /* the empty cell is no datapoint */
	CU_ASSERT_EQUAL(a.index[1] - a.index[0], 600);
	CU_ASSERT_DOUBLE_EQUAL(a.value[1], 0.995, 1e-15);
	CU_ASSERT_EQUAL(b.n, 3);
	CU_ASSERT_DOUBLE_EQUAL(b.value[0], 0.4025, 1e-15);
	lbs_series_set_destroy(s);

	o.metric = "CPUUtilisation";
	char *path = src_path("tests/data/traces/cloudwatch-nab.csv");
	CU_ASSERT_EQUAL(lbs_reader_cloudwatch.read(path, &o, &s, &err), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "unknown CloudWatch metric 'CPUUtilisation'"));
	free(path);
	CU_ASSERT(lbs_cloudwatch_metric_known("CPUUtilization"));
	CU_ASSERT_FALSE(lbs_cloudwatch_metric_known("cpu"));
}

#define CH "timestamp,value\n"
static void test_cloudwatch_errors(void)
{
	expect_error("cloudwatch", "", 0, "empty file", NULL);
	expect_error("cloudwatch", CH, 0, "no data rows", NULL);
	expect_error("cloudwatch", "time,value\n", 1, "header", "expected timestamp");
	expect_error("cloudwatch", "timestamp\n", 1, "header", "no value column");
	expect_error("cloudwatch", "Label,a,a\n", 1, "header", "'a' appears twice");
	expect_error("cloudwatch", CH "2014-04-10 00:04,91.9\n", 2, "timestamp", "not a timestamp");
	expect_error("cloudwatch", CH "2014-04-10 00:04:00,x\n", 2, "value: 'x' is not a number", NULL);
	expect_error("cloudwatch", CH "2014-04-10 00:04:00,NaN\n", 2, "value", "not a finite number");
	expect_error("cloudwatch", CH "2014-04-10 00:04:00,-3\n", 2, "value: '-3' must be in [0, ", NULL);
	expect_error("cloudwatch", "Label,i-1 CPUUtilization\n2024-05-02T10:00:00Z,100.5\n", 2,
		     "i-1 CPUUtilization: '100.5' must be in [0, 100] (a percentage)", NULL);
	expect_error("cloudwatch", CH "2014-04-10 00:09:00,1\n2014-04-10 00:04:00,1\n", 3, "timestamp goes back",
		     "line 2");
	expect_error("cloudwatch", CH "2014-04-10 00:04:00,1,2\n", 2, "3 fields", NULL);
}

static void test_uta(void)
{
	lbs_series_set *s = read_fixture("uta-bw", "uta.bw", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_STRING_EQUAL(s->col_name[0], "bandwidth");
	CU_ASSERT_EQUAL(s->n_rows, 5); /* the two trailing zero rows are dropped */
	CU_ASSERT_EQUAL(s->index[4], 4);
	CU_ASSERT_DOUBLE_EQUAL(s->col[0][1], 9.691 * 1.25e8, 1e-3);
	lbs_series_set_destroy(s);
}

static void test_uta_errors(void)
{
	expect_error("uta-bw", "", 0, "empty file", NULL);
	expect_error("uta-bw", "crnt bw = 0.000\n", 0, "no data rows", NULL);
	expect_error("uta-bw", "crnt bw = 1\nbw = 2\n", 2, "bw: expected 'crnt bw = <Gbit/s>'", NULL);
	expect_error("uta-bw", "crnt bw = 1\ncrnt bw = 2,3\n", 2, "bw", "expected");
	expect_error("uta-bw", "crnt bw = 1\ncrnt bw = fast\n", 2, "bw: 'fast' is not a number", NULL);
	expect_error("uta-bw", "crnt bw = -1\n", 1, "bw: '-1' must be >= 0", NULL);
	expect_error("uta-bw", "crnt bw = 1\ncrnt bw = 0.000\ncrnt bw = 0\ncrnt bw = 2\n", 2, "bw",
		     "bandwidth 0 before the end");
}

static void test_alibaba(void)
{
	lbs_series_set *s = read_fixture("alibaba-v2018", "alibaba-machine_usage.csv", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(s->n_cols, 2);
	CU_ASSERT_STRING_EQUAL(s->col_name[1], "mem_util");
	CU_ASSERT_EQUAL(s->n_series, 3);
	lbs_series m = lbs_series_view(s, (size_t)lbs_series_find(s, "m_1932"), 0);
	CU_ASSERT_EQUAL(m.n, 3); /* sorted; the -1 reading dropped */
	CU_ASSERT_EQUAL(m.index[0], 386630);
	CU_ASSERT_DOUBLE_EQUAL(m.value[0], 0.40, 1e-15);
	CU_ASSERT_EQUAL(m.index[2], 386660);
	lbs_series m2 = lbs_series_view(s, (size_t)lbs_series_find(s, "m_2038"), 1);
	CU_ASSERT_EQUAL(m2.n, 2); /* 101 dropped, the repeated row is one sample */
	CU_ASSERT_DOUBLE_EQUAL(m2.value[1], 0.51, 1e-15);
	CU_ASSERT_EQUAL(s->origin, 386630);
	lbs_series_set_destroy(s);

	const char *ids[] = { "m_7" };
	lbs_read_opts o = { .ids = ids, .n_ids = 1 };
	s = read_fixture("alibaba-v2018", "alibaba-machine_usage.csv", &o);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(s->n_series, 1);
	CU_ASSERT_EQUAL(s->col[0][0], 1.0);
	lbs_series_set_destroy(s);
}

static void test_alibaba_errors(void)
{
	expect_error("alibaba-v2018", "", 0, "empty file", NULL);
	expect_error("alibaba-v2018", "m_1,10,-1,50,,,,,\n", 0, "no data rows", NULL);
	expect_error("alibaba-v2018", "m_1,10,40,50\n", 1, "4 fields, expected 9", NULL);
	expect_error("alibaba-v2018", ",10,40,50,,,,,\n", 1, "machine_id: is empty", NULL);
	expect_error("alibaba-v2018", "m_1,ten,40,50,,,,,\n", 1, "time_stamp: 'ten' is not a number", NULL);
	expect_error("alibaba-v2018", "m_1,10,150,50,,,,,\n", 1, "cpu_util_percent: '150' must be a percentage", NULL);
	expect_error("alibaba-v2018", "m_1,10,40,inf,,,,,\n", 1, "mem_util_percent", "not a finite number");
	expect_error("alibaba-v2018", "m_1,20,40,50,,,,,\nm_2,10,40,50,,,,,\nm_1,20,41,50,,,,,\n", 3,
		     "time_stamp: duplicate time_stamp 20 with a different cpu_util", "line 1");
}

static void test_philly(void)
{
	lbs_series_set *s = read_fixture("philly-cpu", "philly-cpu.csv", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_STRING_EQUAL(s->col_name[0], "cpu_util");
	lbs_series m1 = lbs_series_view(s, 0, 0), m2 = lbs_series_view(s, 1, 0);
	CU_ASSERT_EQUAL(m1.n, 4);
	CU_ASSERT_EQUAL(m1.index[0], 1507014480.0); /* 00:08 PDT = 07:08 UTC */
	/* 01:10 PST comes 40 min after 01:30 PDT (the repeated hour of the
	 * change back to standard time). */
	CU_ASSERT_EQUAL(m1.index[3] - m1.index[2], 40 * 60);
	CU_ASSERT_EQUAL(m2.n, 1); /* NA dropped */
	CU_ASSERT_DOUBLE_EQUAL(m2.value[0], 0.455, 1e-15);
	lbs_series_set_destroy(s);

	s = read_fixture("philly-mem", "philly-mem.csv", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(s->n_rows, 2);
	CU_ASSERT_DOUBLE_EQUAL(s->col[0][0], 0.25, 1e-15);
	CU_ASSERT_DOUBLE_EQUAL(s->col[0][1], 0.75, 1e-15);
	lbs_series_set_destroy(s);

	s = read_fixture("philly-gpu", "philly-gpu.csv", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_STRING_EQUAL(s->col_name[0], "gpu_util");
	lbs_series g1 = lbs_series_view(s, 0, 0), g2 = lbs_series_view(s, 1, 0);
	CU_ASSERT_EQUAL(g1.n, 2);
	CU_ASSERT_DOUBLE_EQUAL(g1.value[0], 0.75, 1e-15);
	CU_ASSERT_EQUAL(g1.value[1], 0);
	CU_ASSERT_DOUBLE_EQUAL(g2.value[0], 0.45, 1e-15);
	lbs_series_set_destroy(s);
}

#define PC "time,machine_id,cpu_util\n"
static void test_philly_errors(void)
{
	expect_error("philly-cpu", "", 0, "empty file", NULL);
	expect_error("philly-cpu", "time,machine,cpu_util\n", 1, "header", "expected 'time,machine_id,cpu_util'");
	expect_error("philly-cpu", PC "2017-10-03 00:08:00 CEST,m1,12\n", 2, "time", "unknown time zone");
	expect_error("philly-cpu", PC "2017-10-03 00:08:00 PDT,m1,120\n", 2, "cpu_util: '120' must be a percentage",
		     NULL);
	expect_error("philly-cpu", PC "2017-10-03 00:08:00 PDT,m1,na\n", 2, "cpu_util: 'na' is not a number", NULL);
	expect_error("philly-cpu", PC "2017-10-03 00:08:00 PDT,,1\n", 2, "machine_id: is empty", NULL);
	expect_error("philly-cpu", PC "2017-10-03 00:09:00 PDT,m1,1\n2017-10-03 00:08:00 PDT,m1,1\n", 3,
		     "time goes back", NULL);
	expect_error("philly-mem", "time,machine_id,mem_total,mem_free\n2017-10-03 00:08:00 PDT,m1,256,300\n", 2,
		     "mem_free: '300' must be in [0, mem_total]", NULL);
	expect_error("philly-mem", "time,machine_id,mem_total,mem_free\n2017-10-03 00:08:00 PDT,m1,0,0\n", 2,
		     "mem_total: '0' must be > 0", NULL);
	expect_error("philly-gpu", "time,machineId,gpu1_util,\n", 1, "header", "gpu0_util");
	expect_error("philly-gpu", "time,machineId,gpu0_util,\n2017-10-03 00:08:00 PDT,m1,x,\n", 2,
		     "gpu0_util: 'x' is not a number", NULL);
	expect_error("philly-gpu", "time,machineId,gpu0_util,\n2017-10-03 00:08:00 PDT,m1,1,9\n", 2,
		     "unexpected text after the last GPU", NULL);
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
		{ "PAI mini-batch times", test_pai },
		{ "PAI: bad input", test_pai_errors },
		{ "Azure VM noise", test_azure },
		{ "Azure: bad input", test_azure_errors },
		{ "CloudWatch (NAB and console)", test_cloudwatch },
		{ "CloudWatch: bad input", test_cloudwatch_errors },
		{ "EC2 network runs (Uta)", test_uta },
		{ "Uta: bad input", test_uta_errors },
		{ "Alibaba v2018 machine_usage", test_alibaba },
		{ "Alibaba v2018: bad input", test_alibaba_errors },
		{ "Philly cpu, mem, gpu", test_philly },
		{ "Philly: bad input", test_philly_errors },
	};
	add_suite("readers", tests, sizeof tests / sizeof tests[0]);
}
