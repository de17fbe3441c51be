/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Traces bound to workers through the scenario: a whole run against the
 * hand-computed integral when availability halves mid-iteration, the
 * replay of every shipped PAI job against the job's own iteration times,
 * which worker replays which id (in order, drawn), one copy per file, and
 * every binding error naming the scenario's file, line and key. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_rng.h>

#include "util/rng.h"
#include "sim/run.h"
#include "tests/unit/suites.h"

static lbs_error err;

/* A scratch directory holding a scenario and its traces. */
typedef struct scratch {
	char dir[256];
	char files[8][320];
	int n;
} scratch;

static void scratch_open(scratch *s)
{
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	snprintf(s->dir, sizeof s->dir, "%s/lbsim-bind-XXXXXX", tmp);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(s->dir));
	s->n = 0;
}

static const char *scratch_write(scratch *s, const char *name, const char *text)
{
	char full[sizeof s->files[0]];
	snprintf(full, sizeof full, "%s/%s", s->dir, name);
	char *path = strcpy(s->files[s->n++], full);
	FILE *f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
	return path;
}

static void scratch_close(scratch *s)
{
	for (int i = 0; i < s->n; i++)
		unlink(s->files[i]);
	rmdir(s->dir);
}

typedef struct bcapture {
	size_t n, n_workers, cap;
	double *start, *end, *compute;
} bcapture;

static lbs_status bcap_fn(void *ctx, const lbs_iteration_record *r, lbs_error *e)
{
	(void)e;
	bcapture *c = ctx;
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 256;
		c->start = realloc(c->start, c->cap * sizeof *c->start);
		c->end = realloc(c->end, c->cap * sizeof *c->end);
		c->compute = realloc(c->compute, c->cap * r->n_workers * sizeof *c->compute);
	}
	c->n_workers = r->n_workers;
	c->start[c->n] = r->start_s;
	c->end[c->n] = r->end_s;
	memcpy(c->compute + c->n * r->n_workers, r->compute_s, r->n_workers * sizeof(double));
	c->n++;
	return LBS_OK;
}

static void bcap_free(bcapture *c)
{
	free(c->start);
	free(c->end);
	free(c->compute);
	memset(c, 0, sizeof *c);
}

/* Loads the scenario at `path`, builds the run and (with c) runs it. */
static lbs_status simulate(const char *path, bcapture *c, size_t *n_sets)
{
	lbs_scenario sc;
	lbs_run run;
	memset(&err, 0, sizeof err);
	lbs_status st = lbs_scenario_load(&sc, path, NULL, 0, &err);
	if (st != LBS_OK)
		return st;
	st = lbs_run_create(&run, &sc, NULL, &err);
	if (st == LBS_OK) {
		if (n_sets)
			*n_sets = run.traces ? lbs_trace_table_size(run.traces) : 0;
		if (c) {
			memset(c, 0, sizeof *c);
			st = lbs_run_execute(&run, bcap_fn, c, NULL, &err);
		}
		lbs_run_destroy(&run);
	}
	lbs_scenario_destroy(&sc);
	return st;
}

#define RUN_NONE(iterations, batch) \
	"[run]\nglobal_batch = " #batch "\niterations = " #iterations "\n[model]\ngradient = 1 MB\n" \
	"[network]\ntopology = none\n"

/* Availability 1 until 50 ms, then 0.5. A worker with 100 ms of work
 * (10 samples at 10 ms) starting at 0 does 50 ms of it by 50 ms; the other
 * 50 ms at half speed take 100 ms: it finishes at 150 ms, not 100 (full
 * speed) nor 200 (half speed throughout). Later iterations run wholly at
 * 0.5: 200 ms each. The untraced worker (availability 0.8) needs 125 ms. */
static void test_halves_mid_iteration(void)
{
	scratch s;
	scratch_open(&s);
	scratch_write(&s, "halves.csv", "# lbsim-trace 1\ntime_s,availability\n0,1\n0.05,0.5\n");
	const char *ini = scratch_write(&s, "halves.ini",
		RUN_NONE(3, 20)
		"[workers.traced]\ncount = 1\ndevice = cpu\ncost = linear\nper_sample = 10 ms\n"
		"trace_format = lbsim\ntrace = halves.csv\n"
		"[workers.steady]\ncount = 1\ndevice = cpu\ncost = linear\nper_sample = 10 ms\n"
		"availability = 0.8\n");
	bcapture c;
	CU_ASSERT_EQUAL_FATAL(simulate(ini, &c, NULL), LBS_OK);
	CU_ASSERT_EQUAL_FATAL(c.n, 3);
	CU_ASSERT_DOUBLE_EQUAL(c.compute[0], 0.150, 1e-15);
	CU_ASSERT_DOUBLE_EQUAL(c.compute[1], 0.125, 1e-15);
	CU_ASSERT_DOUBLE_EQUAL(c.end[0], 0.150, 1e-15);
	CU_ASSERT_DOUBLE_EQUAL(c.compute[2], 0.200, 1e-15);
	CU_ASSERT_DOUBLE_EQUAL(c.end[1], 0.350, 1e-15);
	CU_ASSERT_DOUBLE_EQUAL(c.end[2], 0.550, 1e-15);
	bcap_free(&c);

	/* The same with every completion an event: identical. */
	const char *ini2 = scratch_write(&s, "halves2.ini",
		"[run]\nglobal_batch = 20\niterations = 3\nworker_events = always\n[model]\ngradient = 1 MB\n"
		"[network]\ntopology = none\n"
		"[workers.traced]\ncount = 1\ndevice = cpu\ncost = linear\nper_sample = 10 ms\n"
		"trace_format = lbsim\ntrace = halves.csv\n"
		"[workers.steady]\ncount = 1\ndevice = cpu\ncost = linear\nper_sample = 10 ms\n"
		"availability = 0.8\n");
	CU_ASSERT_EQUAL_FATAL(simulate(ini2, &c, NULL), LBS_OK);
	CU_ASSERT_DOUBLE_EQUAL(c.compute[0], 0.150, 1e-15);
	CU_ASSERT_DOUBLE_EQUAL(c.end[2], 0.550, 1e-15);
	bcap_free(&c);

	/* `availability` scales the trace: 0.5 of it halves every speed. */
	const char *ini3 = scratch_write(&s, "halves3.ini",
		RUN_NONE(1, 10)
		"[workers.traced]\ncount = 1\ndevice = cpu\ncost = linear\nper_sample = 10 ms\n"
		"availability = 0.5\ntrace_format = lbsim\ntrace = halves.csv\n");
	CU_ASSERT_EQUAL_FATAL(simulate(ini3, &c, NULL), LBS_OK);
	/* 50 ms at 0.5 do 25 ms of work; 75 ms remain at 0.25: 300 ms. */
	CU_ASSERT_DOUBLE_EQUAL(c.compute[0], 0.350, 1e-15);
	bcap_free(&c);
	scratch_close(&s);
}

/* ---- the PAI replay --------------------------------------------------- */

typedef struct pai_row {
	int worker;
	long it;
	double v;
} pai_row;

/* Reads a PAI job file with sscanf: an independent reading, not lbsim's. */
static size_t read_pai_raw(const char *path, pai_row **rows)
{
	FILE *f = fopen(path, "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	char line[256];
	size_t n = 0, cap = 4096;
	*rows = malloc(cap * sizeof **rows);
	CU_ASSERT_PTR_NOT_NULL_FATAL(fgets(line, sizeof line, f)); /* header */
	while (fgets(line, sizeof line, f)) {
		int idx, w, gpu;
		long it;
		double v;
		CU_ASSERT_FATAL(sscanf(line, "%d,%d,%d,%ld,%lf", &idx, &w, &gpu, &it, &v) == 5);
		if (n == cap)
			*rows = realloc(*rows, (cap *= 2) * sizeof **rows);
		(*rows)[n++] = (pai_row){ w, it, v };
	}
	fclose(f);
	return n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Replays job `job` under static equal batches (1 sample each, 100 ms of
 * work), no aggregation, and checks every simulated iteration against the
 * trace's own iteration time: 0.1 s * max over the 10 workers of
 * batch_time / job median, each worker holding its last sample. Returns the
 * iterations where all 10 workers were sampled. */
static size_t replay_pai(int job, double *worst)
{
	char rel[128];
	snprintf(rel, sizeof rel, "traces/data/alibaba-pai-gpu-v2020/minibatch_job_%d_norm.csv", job);
	char *trace = src_path(rel);
	pai_row *rows;
	size_t n = read_pai_raw(trace, &rows);

	/* The job median over every row (the repeated row of job 2 counted once). */
	double *v = malloc(n * sizeof *v);
	size_t m = 0;
	long first = rows[0].it, last = rows[0].it;
	for (size_t i = 0; i < n; i++) {
		bool repeat = false;
		for (size_t j = i > 40 ? i - 40 : 0; j < i; j++)
			repeat |= rows[j].worker == rows[i].worker && rows[j].it == rows[i].it;
		if (!repeat)
			v[m++] = rows[i].v;
		first = rows[i].it < first ? rows[i].it : first;
		last = rows[i].it > last ? rows[i].it : last;
	}
	qsort(v, m, sizeof *v, cmp_double);
	double median = m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2;
	free(v);

	scratch s;
	scratch_open(&s);
	char ini_text[2048];
	snprintf(ini_text, sizeof ini_text,
		 "[run]\nglobal_batch = 10\niterations = %ld\n[model]\ngradient = 100 MB\n"
		 "[network]\ntopology = none\n[policy]\nname = static\n"
		 "[workers.pai]\ncount = 10\ndevice = gpu\ncost = linear\nper_sample = 100 ms\n"
		 "trace_format = pai\ntrace = %s\n", last - first + 1, trace);
	const char *ini = scratch_write(&s, "pai.ini", ini_text);
	bcapture c;
	CU_ASSERT_EQUAL_FATAL(simulate(ini, &c, NULL), LBS_OK);
	CU_ASSERT_EQUAL_FATAL(c.n, (size_t)(last - first + 1));

	/* Walk the iterations, holding each worker's last sample (its first
	 * before it has one). */
	double held[10];
	bool seen[10] = { false };
	for (size_t i = 0; i < n; i++)
		if (!seen[rows[i].worker]) {
			seen[rows[i].worker] = true;
			held[rows[i].worker] = rows[i].v;
		}
	size_t r = 0, full = 0;
	int bad = 0;
	*worst = 0;
	for (long it = first; it <= last; it++) {
		int sampled = 0;
		while (r < n && rows[r].it == it) {
			held[rows[r].worker] = rows[r].v;
			sampled++;
			r++;
		}
		double expect = 0;
		for (int w = 0; w < 10; w++)
			expect = fmax(expect, 0.1 * held[w] / median);
		size_t k = (size_t)(it - first);
		double got = c.end[k] - c.start[k];
		double rel_err = fabs(got - expect) / expect;
		*worst = fmax(*worst, rel_err);
		if (rel_err > 1e-9) {
			if (bad++ < 3)
				fprintf(stderr, "\n  job %d iteration %ld: simulated %.17g s, trace %.17g s", job, it,
					got, expect);
		}
		full += sampled >= 10;
	}
	CU_ASSERT_EQUAL(r, n); /* rows are in iteration order */
	CU_ASSERT_EQUAL(bad, 0);
	bcap_free(&c);
	scratch_close(&s);
	free(rows);
	free(trace);
	return full;
}

static void test_pai_replay(void)
{
	/* Iterations where all ten workers were sampled: the trace's own
	 * iteration time is defined there, and must be matched exactly. */
	static const size_t expect_full[3] = { 300, 238, 248 };
	for (int job = 1; job <= 3; job++) {
		double worst;
		size_t full = replay_pai(job, &worst);
		CU_ASSERT_EQUAL(full, expect_full[job - 1]);
		printf("[job %d: %zu fully sampled iterations, worst relative error %.2g] ", job, full, worst);
	}
}

/* ---- which worker replays which id ------------------------------------ */

static const lbs_source *source_of(const lbs_run *run, size_t worker)
{
	return run->workers[worker].avail.state;
}

static void test_assignment(void)
{
	char *pai = src_path("tests/data/traces/pai-job.csv");
	char text[2048];
	scratch s;
	scratch_open(&s);
	/* 4 workers in order over ids 1, 2, 0 (file order): 1, 2, 0, 1. */
	snprintf(text, sizeof text, RUN_NONE(1, 8)
		 "[workers.a]\ncount = 4\ndevice = gpu\ncost = linear\nper_sample = 1 ms\n"
		 "trace_format = pai\ntrace = %s\n"
		 "[workers.b]\ncount = 2\ndevice = gpu\ncost = linear\nper_sample = 1 ms\n"
		 "trace_format = pai\ntrace = %s\ntrace_ids = 0, \"2\"\n"
		 "[workers.c]\ncount = 2\ndevice = gpu\ncost = linear\nper_sample = 1 ms\n"
		 "trace_format = pai\ntrace = %s\n", pai, pai, pai);
	const char *ini = scratch_write(&s, "a.ini", text);
	lbs_scenario sc;
	lbs_run run;
	CU_ASSERT_EQUAL_FATAL(lbs_scenario_load(&sc, ini, NULL, 0, &err), LBS_OK);
	CU_ASSERT_EQUAL_FATAL(lbs_run_create(&run, &sc, NULL, &err), LBS_OK);
	/* One copy of the file for groups a and c; b asked for other ids. */
	CU_ASSERT_EQUAL(lbs_trace_table_size(run.traces), 2);
	/* The first sample of ids 1, 2, 0 is 500, 400, 410. */
	const double first[] = { 500, 400, 410, 500, 410, 400, 500, 400 };
	for (size_t w = 0; w < 8; w++)
		CU_ASSERT_EQUAL(source_of(&run, w)->s.value[0], first[w]);
	CU_ASSERT_PTR_EQUAL(source_of(&run, 0)->s.value, source_of(&run, 6)->s.value); /* shared */
	/* The job median (410) is the reference: id 1 at iteration 0 has a = 410/500. */
	CU_ASSERT_DOUBLE_EQUAL(lbs_source_level(source_of(&run, 0), 0, 0), 0.82, 1e-15);
	lbs_run_destroy(&run);
	lbs_scenario_destroy(&sc);

	/* Drawn: each worker k draws from stream (seed, "trace", group, k). */
	snprintf(text, sizeof text, "[run]\nglobal_batch = 60\niterations = 1\nseed = 42\n[model]\n"
		 "gradient = 1 MB\n[network]\ntopology = none\n"
		 "[workers.d]\ncount = 60\ndevice = gpu\ncost = linear\nper_sample = 1 ms\n"
		 "trace_format = pai\ntrace = %s\ntrace_assign = draw\n", pai);
	ini = scratch_write(&s, "d.ini", text);
	CU_ASSERT_EQUAL_FATAL(lbs_scenario_load(&sc, ini, NULL, 0, &err), LBS_OK);
	CU_ASSERT_EQUAL_FATAL(lbs_run_create(&run, &sc, NULL, &err), LBS_OK);
	int counts[3] = { 0 }, bad = 0;
	for (size_t w = 0; w < 60; w++) {
		gsl_rng *r = lbs_rng_stream(42, "trace", "d", w, NULL);
		unsigned long pick = gsl_rng_uniform_int(r, 3);
		gsl_rng_free(r);
		bad += source_of(&run, w)->s.value[0] != first[pick];
		counts[pick]++;
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT(counts[0] > 5 && counts[1] > 5 && counts[2] > 5);
	lbs_run_destroy(&run);
	lbs_scenario_destroy(&sc);
	scratch_close(&s);
	free(pai);
}

/* ---- binding errors --------------------------------------------------- */

/* The run of `ini_tail` (after a common head) fails with LBS_EINPUT and
 * the message holds "<scenario>:<line>: [workers.w] <key>" and frag. */
static void expect_bind_error(scratch *s, const char *ini_tail, int line, const char *key,
			      const char *frag)
{
	char text[2048];
	snprintf(text, sizeof text, RUN_NONE(2, 4) "[workers.w]\ncount = 2\ndevice = cpu\ncost = linear\n"
		 "per_sample = 1 ms\n%s", ini_tail);
	const char *ini = scratch_write(s, "e.ini", text);
	lbs_status st = simulate(ini, NULL, NULL);
	char where[512];
	snprintf(where, sizeof where, "%s:%d: [workers.w] %s", ini, line, key);
	if (st != LBS_EINPUT || !strstr(err.msg, where) || !strstr(err.msg, frag)) {
		fprintf(stderr, "\n  expected status 3, '%s' and '%s' in: (%d) %s\n", where, frag, (int)st, err.msg);
		CU_FAIL("binding error without file, line and key");
	}
	s->n--; /* rewritten by the next call */
	unlink(ini);
}

static void test_binding_errors(void)
{
	scratch s;
	scratch_open(&s);
	scratch_write(&s, "pai.csv", ",worker,gpu,time,batch_time_norm\n0,0,25,1,400\n1,1,25,1,500\n");
	scratch_write(&s, "bad.csv", "# lbsim-trace 1\ntime_s,availability\n0,1\n5,fast\n");
	scratch_write(&s, "cw.csv", "timestamp,value\n2014-04-10 00:04:00,91.958\n");
	scratch_write(&s, "util.csv", "# lbsim-trace 1\ntime_s,cpu_util\n0,0.5\n5,0\n");
	/* Lines: 1-7 [run] [model] [network]; 8 [workers.w], 9-12 its keys; the tail from 13. */
	expect_bind_error(&s, "trace_format = pai\ntrace = nowhere.csv\n", 14, "trace", "cannot read trace");
	expect_bind_error(&s, "trace_format = lbsim\ntrace = bad.csv\n", 14, "trace",
			  "bad.csv:4: availability: 'fast' is not a number");
	expect_bind_error(&s, "trace_format = pai\ntrace = pai.csv\ntrace_ids = 0, 7\n", 15, "trace_ids",
			  "pai.csv has no id '7'");
	expect_bind_error(&s, "trace_format = pai\ntrace = pai.csv\ntrace_assign = draw\ntrace_ids = 1,0\n"
			  "trace_column = x\n", 17, "trace_column", "has no column 'x'");
	expect_bind_error(&s, "trace_format = pai\ntrace = pai.csv\ntrace_ids = 7, 8\n", 14, "trace",
			  "has none of the ids asked for ('7', '8')");
	expect_bind_error(&s, "trace_format = lbsim\ntrace = util.csv\ntrace_ids = a\n", 15, "trace_ids",
			  "has no id 'a' (it has one series, without ids)");
	expect_bind_error(&s, "trace_format = pai\ntrace = pai.csv\ntrace_column = gpu\n", 15, "trace_column",
			  "has no column 'gpu' (its columns: 'batch_time')");
	/* trace_map is at its default: the message points at the trace. */
	expect_bind_error(&s, "trace_format = cloudwatch\ntrace = cw.csv\n", 14, "trace",
			  "cannot tell from its name how column 'value'");
	expect_bind_error(&s, "trace_format = cloudwatch\ntrace = cw.csv\ntrace_map = direct\n"
			  "trace_offset_iterations = 3\n", 16, "trace_offset_iterations", "indexed by time");
	expect_bind_error(&s, "trace_format = pai\ntrace = pai.csv\ntrace_offset = 3 s\n", 15, "trace_offset",
			  "indexed by iteration");
	expect_bind_error(&s, "trace_format = pai\ntrace = pai.csv\ntrace_speed = 2\n", 15, "trace_speed",
			  "indexed by iteration");
	expect_bind_error(&s, "trace_format = lbsim\ntrace = util.csv\ntrace_reference = 3\n", 15,
			  "trace_reference", "maps by `util`, which has no reference");
	expect_bind_error(&s, "trace_format = lbsim\ntrace = util.csv\ntrace_map = direct\n", 15, "trace_map",
			  "util.csv:4: cpu_util: 0: trace_map = direct needs values > 0");
	expect_bind_error(&s, "trace_format = pai\ntrace = pai.csv\ntrace_ids = \"0\n", 15, "trace_ids",
			  "not one list of comma-separated values");
	scratch_close(&s);
}

/* Keys checked when the scenario is read, before any trace is. */
static void test_scenario_keys(void)
{
	scratch s;
	scratch_open(&s);
	const char *head = RUN_NONE(2, 4) "[workers.w]\ncount = 2\ndevice = cpu\ncost = linear\nper_sample = 1 ms\n";
	char text[2048];
	lbs_scenario sc;
	struct { const char *tail; int line; const char *frag; } cases[] = {
		{ "trace = x.csv\n", 13, "[workers.w] trace: this key applies only when trace_format!=none" },
		{ "trace_format = csv\n", 13, "'csv' is not one of none|lbsim|pai" },
		{ "trace_format = lbsim\n", 8, "missing required key 'trace'" },
		{ "trace_format = cloudwatch\ntrace = a.csv\ntrace_metric = CPU\n", 15,
		  "unknown CloudWatch metric 'CPU' (known: CPUUtilization" },
		{ "trace_format = pai\ntrace = a.csv\ntrace_metric = CPUUtilization\n", 15,
		  "applies only when trace_format=cloudwatch" },
		{ "trace_format = pai\ntrace = a.csv\ntrace_map = util\ntrace_reference = 2\n", 16,
		  "applies only when trace_map=auto|time|rate" },
		{ "trace_format = pai\ntrace = a.csv\ntrace_floor = 0\n", 15, "out of range" },
		{ "trace_format = pai\ntrace = a.csv\ntrace_colum = x\n", 15, "did you mean 'trace_column'" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		snprintf(text, sizeof text, "%s%s", head, cases[i].tail);
		const char *ini = scratch_write(&s, "k.ini", text);
		char where[400];
		snprintf(where, sizeof where, "%s:%d:", ini, cases[i].line);
		lbs_status st = lbs_scenario_load(&sc, ini, NULL, 0, &err);
		if (st != LBS_EINPUT || !strstr(err.msg, where) || !strstr(err.msg, cases[i].frag)) {
			fprintf(stderr, "\n  expected '%s' '%s' in: %s\n", where, cases[i].frag, err.msg);
			CU_FAIL("trace key not refused with file, line and key");
		}
		s.n--;
		unlink(ini);
	}
	/* A valid binding is recorded in the effective configuration. */
	snprintf(text, sizeof text, "%strace_format = pai\ntrace = a.csv\n", head);
	const char *ini = scratch_write(&s, "ok.ini", text);
	CU_ASSERT_EQUAL_FATAL(lbs_scenario_load(&sc, ini, NULL, 0, &err), LBS_OK);
	CU_ASSERT_EQUAL(sc.groups[0].trace.format, 2);
	CU_ASSERT_STRING_EQUAL(sc.groups[0].trace.file, "a.csv");
	CU_ASSERT_EQUAL(sc.groups[0].trace.speed, 1);
	int found = 0;
	for (size_t i = 0; i < sc.n_config; i++)
		found += !strcmp(sc.config[i].section, "workers.w") && !strcmp(sc.config[i].key, "trace_end") &&
			 !strcmp(sc.config[i].value, "hold");
	CU_ASSERT_EQUAL(found, 1);
	lbs_scenario_destroy(&sc);
	scratch_close(&s);
}

/* Policies see each traced worker's cpu_util and mem_util at the barrier. */
static void test_readings(void)
{
	scratch s;
	scratch_open(&s);
	scratch_write(&s, "r.csv", "# lbsim-trace 1\ntime_s,cpu_util,mem_util\n0,0.2,0.5\n1,0.6,0.7\n");
	const char *ini = scratch_write(&s, "r.ini", RUN_NONE(3, 20)
		"[workers.t]\ncount = 1\ndevice = cpu\ncost = linear\nper_sample = 50 ms\n"
		"trace_format = lbsim\ntrace = r.csv\n"
		"[workers.u]\ncount = 1\ndevice = cpu\ncost = linear\nper_sample = 50 ms\n");
	lbs_scenario sc;
	lbs_run run;
	CU_ASSERT_EQUAL_FATAL(lbs_scenario_load(&sc, ini, NULL, 0, &err), LBS_OK);
	CU_ASSERT_EQUAL_FATAL(lbs_run_create(&run, &sc, NULL, &err), LBS_OK);
	/* Planned at t = 0: the first readings (cpu_util, mem_util per worker);
	 * the untraced worker has none, reported as 0. */
	CU_ASSERT_EQUAL_FATAL(run.n_readings, 2);
	CU_ASSERT_PTR_NOT_NULL_FATAL(run.readings);
	CU_ASSERT_EQUAL(run.readings[0], 0.2);
	CU_ASSERT_EQUAL(run.readings[1], 0.5);
	CU_ASSERT_EQUAL(run.readings[2], 0.0);
	/* Availability is the util mapping of cpu_util: 0.8, then 0.4 from 1 s.
	 * Iteration 0 (0.5 s of work) ends at 0.625; iteration 1 at 1.5 (0.375
	 * s at 0.8 do 0.3, the remaining 0.2 take 0.5 s at 0.4); iteration 2,
	 * planned with the readings of t = 1.5, at 2.75. */
	CU_ASSERT_EQUAL_FATAL(lbs_run_execute(&run, NULL, NULL, NULL, &err), LBS_OK);
	CU_ASSERT_DOUBLE_EQUAL(run.stats.sim_time_s, 2.75, 1e-14);
	CU_ASSERT_EQUAL(run.readings[0], 0.6);
	CU_ASSERT_EQUAL(run.readings[1], 0.7);
	lbs_run_destroy(&run);
	lbs_scenario_destroy(&sc);
	scratch_close(&s);
}

/* A bandwidth trace on [network] stretches the transfer as the fluid rule
 * says. Ring of 2, 1 MB at 1 GB/s: 1 ms of transfer at nominal bandwidth.
 * The trace gives 1 GB/s, then 0.5 GB/s from 10.5 ms. Iteration 0's
 * compute (10 ms) ends at 10 ms; half the transfer is done by 10.5 ms, the
 * other half takes 1 ms at half bandwidth: it ends at 11.5 ms (not 11 nor
 * 12). Iteration 1 transfers at half bandwidth throughout: 2 ms. */
static void test_network_trace(void)
{
	scratch s;
	scratch_open(&s);
	scratch_write(&s, "bw.csv", "# lbsim-trace 1\ntime_s,bandwidth\n0,1e9\n0.0105,5e8\n");
	const char *ini = scratch_write(&s, "n.ini",
		"[run]\nglobal_batch = 20\niterations = 2\n[model]\ngradient = 1 MB\n"
		"[network]\ntopology = ring\nbandwidth = 1 GB/s\ntrace_format = lbsim\ntrace = bw.csv\n"
		"[workers.w]\ncount = 2\ndevice = cpu\ncost = linear\nper_sample = 1 ms\n");
	bcapture c;
	CU_ASSERT_EQUAL_FATAL(simulate(ini, &c, NULL), LBS_OK);
	CU_ASSERT_EQUAL_FATAL(c.n, 2);
	CU_ASSERT_DOUBLE_EQUAL(c.end[0], 0.0115, 1e-15);
	CU_ASSERT_DOUBLE_EQUAL(c.end[1], 0.0115 + 0.010 + 0.002, 1e-15);
	bcap_free(&c);

	/* trace_reference replaces the nominal bandwidth as the reference. */
	ini = scratch_write(&s, "n2.ini",
		"[run]\nglobal_batch = 20\niterations = 1\n[model]\ngradient = 1 MB\n"
		"[network]\ntopology = ring\nbandwidth = 1 GB/s\ntrace_format = lbsim\ntrace = bw.csv\n"
		"trace_reference = 2e9\n"
		"[workers.w]\ncount = 2\ndevice = cpu\ncost = linear\nper_sample = 1 ms\n");
	CU_ASSERT_EQUAL_FATAL(simulate(ini, &c, NULL), LBS_OK);
	/* Factor 0.5 until 10.5 ms (0.25 ms of transfer), then 0.25: 3 ms more. */
	CU_ASSERT_DOUBLE_EQUAL(c.end[0], 0.0135, 1e-15);
	bcap_free(&c);

	/* No network to slow down. */
	ini = scratch_write(&s, "n3.ini",
		"[run]\nglobal_batch = 20\niterations = 1\n[model]\ngradient = 1 MB\n"
		"[network]\ntopology = none\ntrace_format = lbsim\ntrace = bw.csv\n"
		"[workers.w]\ncount = 2\ndevice = cpu\ncost = linear\nper_sample = 1 ms\n");
	CU_ASSERT_EQUAL(simulate(ini, NULL, NULL), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "n3.ini:8: [network] trace_format: a bandwidth trace needs"));
	/* A bad trace names [network]. */
	scratch_write(&s, "bad.bw", "crnt bw = 1\ncrnt bw = x\n");
	ini = scratch_write(&s, "n4.ini",
		"[run]\nglobal_batch = 20\niterations = 1\n[model]\ngradient = 1 MB\n"
		"[network]\ntopology = ring\nbandwidth = 1 GB/s\ntrace_format = uta-bw\ntrace = bad.bw\n"
		"[workers.w]\ncount = 2\ndevice = cpu\ncost = linear\nper_sample = 1 ms\n");
	CU_ASSERT_EQUAL(simulate(ini, NULL, NULL), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "n4.ini:10: [network] trace: "));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "bad.bw:2: bw: 'x' is not a number"));
	scratch_close(&s);
}

void suite_binding(void)
{
	static const test_case tests[] = {
		{ "availability halves mid-iteration", test_halves_mid_iteration },
		{ "PAI jobs replayed: iteration times match the trace", test_pai_replay },
		{ "in order, drawn, one copy per file", test_assignment },
		{ "binding errors name file, line, key", test_binding_errors },
		{ "trace keys in the scenario", test_scenario_keys },
		{ "readings for policies", test_readings },
		{ "bandwidth trace on the network", test_network_trace },
	};
	add_suite("binding", tests, sizeof tests / sizeof tests[0]);
}
