/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Whole runs: simulated iteration times against closed forms, determinism,
 * the two engine modes agreeing, stream independence, memory caps, and the
 * recorder's one-transaction-per-run rule. */
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/noise.h"
#include "sim/recorder.h"
#include "util/rng.h"
#include "sim/run.h"
#include "tests/unit/suites.h"

/* Three groups, no noise. Hand calculation, B = 103 split 21,21,21,20,20:
 *   a (workers 0,1): linear, 2 ms + 21 * 1 ms               = 23 ms
 *   b (worker 2):    linear, 21 * 3 ms at availability 0.5  = 126 ms
 *   c (workers 3,4): piecewise, 20 ms + (20 - 16) * 0.5 ms  = 22 ms
 *   ring, N = 5, M = 1 MB, 1 GB/s, 10 us: 2*4/5 * 1 ms + 8 * 10 us = 1.68 ms */
#define HETERO \
	"[run]\nglobal_batch = 103\niterations = 100\nseed = 5\n" \
	"[model]\ngradient = 1 MB\n" \
	"[network]\ntopology = ring\nbandwidth = 1 GB/s\nlatency = 10 us\n" \
	"[workers.a]\ncount = 2\ndevice = cpu\ncost = linear\nt0 = 2 ms\nper_sample = 1 ms\n" \
	"[workers.b]\ncount = 1\ndevice = cpu\ncost = linear\nper_sample = 3 ms\navailability = 0.5\n" \
	"[workers.c]\ncount = 2\ndevice = gpu\ncost = piecewise\nt_flat = 20 ms\n" \
	"saturation_batch = 16\nper_sample = 0.5 ms\nmax_batch = 64\n"

/* Loads text with overrides and runs it to completion into *c. */
static lbs_status simulate(const char *text, const char *const *ov, size_t nov, capture *c,
			   lbs_error *err)
{
	return capture_simulate(text, ov, nov, NULL, c, err);
}



static void test_closed_form(void)
{
	capture c;
	lbs_error err;
	CU_ASSERT_FATAL(simulate(HETERO, NULL, 0, &c, &err) == LBS_OK);
	CU_ASSERT_EQUAL_FATAL(c.n, 100);
	const double compute[5] = { 0.023, 0.023, 0.126, 0.022, 0.022 };
	const double agg = 2.0 * 4 / 5 * 1e6 / 1e9 + 8 * 10e-6;
	const double iter = 0.126 + agg;
	int bad = 0;
	for (size_t k = 0; k < c.n; k++) {
		const lbs_iteration_record *r = &c.rec[k];
		bad += !rel_eq(r->end_s - r->start_s, iter);
		bad += !rel_eq(r->compute_end_s - r->start_s, 0.126);
		bad += !rel_eq(r->aggregation_s, agg);
		bad += !rel_eq(r->straggler_gap_s, 0.126 - 0.022);
		bad += k > 0 && !rel_eq(r->start_s, (double)k * iter);
		for (size_t i = 0; i < 5; i++)
			bad += !rel_eq(c.compute[k * 5 + i], compute[i]);
		bad += c.batch[k * 5 + 0] != 21 || c.batch[k * 5 + 4] != 20;
	}
	CU_ASSERT_EQUAL(bad, 0);
	capture_free(&c);
}

/* With uniform noise the closed form replays each worker's own stream:
 * compute = T(b) * (1 + low + (high - low) * u), u from stream
 * (seed, "noise", group, index in group). */
static void test_closed_form_with_noise(void)
{
	const char *ov[] = { "workers.a.noise=uniform", "workers.a.noise_low=-5%", "workers.a.noise_high=20%",
			     "workers.b.noise=uniform", "workers.b.noise_high=10%" };
	capture c;
	lbs_error err;
	CU_ASSERT_FATAL(simulate(HETERO, ov, 5, &c, &err) == LBS_OK);
	gsl_rng *ra0 = lbs_rng_stream(5, "noise", "a", 0, NULL);
	gsl_rng *ra1 = lbs_rng_stream(5, "noise", "a", 1, NULL);
	gsl_rng *rb0 = lbs_rng_stream(5, "noise", "b", 0, NULL);
	const double agg = 2.0 * 4 / 5 * 1e6 / 1e9 + 8 * 10e-6;
	int bad = 0;
	double t = 0;
	for (size_t k = 0; k < c.n; k++) {
		double w[5] = { 0.023 * (0.95 + 0.25 * gsl_rng_uniform(ra0)),
				0.023 * (0.95 + 0.25 * gsl_rng_uniform(ra1)),
				0.126 * (1.0 + 0.1 * gsl_rng_uniform(rb0)), 0.022, 0.022 };
		double mx = w[0], mn = w[0];
		for (int i = 0; i < 5; i++) {
			bad += !rel_eq(c.compute[k * 5 + i], w[i]);
			mx = w[i] > mx ? w[i] : mx;
			mn = w[i] < mn ? w[i] : mn;
		}
		bad += !rel_eq(c.rec[k].end_s - c.rec[k].start_s, mx + agg);
		bad += !rel_eq(c.rec[k].straggler_gap_s, mx - mn);
		bad += k > 0 && !rel_eq(c.rec[k].start_s, t);
		t += mx + agg;
	}
	CU_ASSERT_EQUAL(bad, 0);
	gsl_rng_free(ra0);
	gsl_rng_free(ra1);
	gsl_rng_free(rb0);
	capture_free(&c);
}

static bool same_records(const capture *x, const capture *y)
{
	if (x->n != y->n || x->n_workers != y->n_workers)
		return false;
	for (size_t k = 0; k < x->n; k++) {
		const lbs_iteration_record *a = &x->rec[k], *b = &y->rec[k];
		if (a->start_s != b->start_s || a->end_s != b->end_s || a->compute_end_s != b->compute_end_s ||
		    a->straggler_gap_s != b->straggler_gap_s)
			return false;
	}
	size_t m = x->n * x->n_workers;
	return !memcmp(x->compute, y->compute, m * sizeof(double)) &&
	       !memcmp(x->batch, y->batch, m * sizeof(int64_t));
}

static const char *noisy[] = { "workers.a.noise=lognormal", "workers.a.noise_sigma=0.3",
			       "workers.c.noise=uniform", "workers.c.noise_high=50%" };

static void test_deterministic(void)
{
	capture x, y, z;
	lbs_error err;
	CU_ASSERT_FATAL(simulate(HETERO, noisy, 4, &x, &err) == LBS_OK);
	CU_ASSERT_FATAL(simulate(HETERO, noisy, 4, &y, &err) == LBS_OK);
	CU_ASSERT(same_records(&x, &y));
	const char *ov[] = { noisy[0], noisy[1], noisy[2], noisy[3], "run.seed=6" };
	CU_ASSERT_FATAL(simulate(HETERO, ov, 5, &z, &err) == LBS_OK);
	CU_ASSERT_FALSE(same_records(&x, &z));
	capture_free(&x);
	capture_free(&y);
	capture_free(&z);
}

/* Every worker completion as an event gives bit-identical results. */
static void test_event_modes_agree(void)
{
	capture x, y;
	lbs_error err;
	const char *ov[] = { noisy[0], noisy[1], noisy[2], noisy[3], "run.worker_events=always" };
	CU_ASSERT_FATAL(simulate(HETERO, noisy, 4, &x, &err) == LBS_OK);
	CU_ASSERT_FATAL(simulate(HETERO, ov, 5, &y, &err) == LBS_OK);
	CU_ASSERT(same_records(&x, &y));
	CU_ASSERT_EQUAL(x.n, 100);
	capture_free(&x);
	capture_free(&y);
}

/* Adding a worker to one group changes no other worker's draws. With a
 * batch-independent cost (t0 only), compute = t0 * noise, so equal draws
 * mean equal compute times. */
static void test_adding_worker_keeps_streams(void)
{
	const char *text =
		"[run]\nglobal_batch = 60\niterations = 50\n[model]\ngradient = 1 MB\n"
		"[network]\ntopology = none\n"
		"[workers.x]\ncount = 2\ndevice = cpu\ncost = linear\nt0 = 10 ms\nper_sample = 0 s\n"
		"noise = lognormal\nnoise_sigma = 0.2\n"
		"[workers.y]\ncount = 2\ndevice = cpu\ncost = linear\nt0 = 10 ms\nper_sample = 0 s\n"
		"noise = lognormal\nnoise_sigma = 0.2\n";
	capture a, b;
	lbs_error err;
	const char *more[] = { "workers.x.count=3", "workers.y.count=3" };
	CU_ASSERT_FATAL(simulate(text, NULL, 0, &a, &err) == LBS_OK);
	CU_ASSERT_FATAL(simulate(text, more, 2, &b, &err) == LBS_OK);
	int bad = 0;
	for (size_t k = 0; k < a.n; k++) {
		/* x0 x1 | y0 y1  vs  x0 x1 x2 | y0 y1 y2 */
		/* Not bit for bit: compute = (start + work) - start, and the starts
		 * differ, so the last bit may. */
		bad += !rel_eq(a.compute[k * 4 + 0], b.compute[k * 6 + 0]);
		bad += !rel_eq(a.compute[k * 4 + 1], b.compute[k * 6 + 1]);
		bad += !rel_eq(a.compute[k * 4 + 2], b.compute[k * 6 + 3]);
		bad += !rel_eq(a.compute[k * 4 + 3], b.compute[k * 6 + 4]);
	}
	CU_ASSERT_EQUAL(bad, 0);
	/* And the draws are not all alike (the test could fail). */
	CU_ASSERT_NOT_EQUAL(a.compute[0], a.compute[1]);
	capture_free(&a);
	capture_free(&b);
}

static void test_memory_caps(void)
{
	capture c;
	lbs_error err;
	const char *small[] = { "workers.c.max_batch=10" };
	CU_ASSERT_EQUAL(simulate(HETERO, small, 1, &c, &err), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "[workers.c]"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "memory cap"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, ":23:")); /* the [workers.c] header */
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "worker 3"));
	const char *tight[] = { "workers.a.max_batch=1", "workers.b.max_batch=1", "workers.c.max_batch=1" };
	CU_ASSERT_EQUAL(simulate(HETERO, tight, 3, &c, &err), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "do not fit"));
	capture_free(&c);
}

static sqlite3_int64 count(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *q;
	sqlite3_int64 n = -1;
	if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
		n = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return n;
}

typedef struct failing {
	lbs_recorder *rec;
	int64_t fail_at;
} failing;

/* Records like the recorder, then fails at iteration fail_at. */
static lbs_status failing_fn(void *ctx, const lbs_iteration_record *r, lbs_error *err)
{
	failing *f = ctx;
	if (r->iteration == f->fail_at)
		return lbs_error_set(err, LBS_EIO, "injected failure");
	return lbs_recorder_iteration(f->rec, r, err);
}

/* A run commits all its rows or none; runs append to one file. */
static void test_recorder_transaction(void)
{
	char *ini = write_temp(HETERO);
	char *db = write_temp("");
	unlink(db); /* a fresh file */
	lbs_scenario sc;
	lbs_error err;
	CU_ASSERT_FATAL(lbs_scenario_load(&sc, ini, NULL, 0, &err) == LBS_OK);
	for (int attempt = 0; attempt < 3; attempt++) {
		lbs_run run;
		lbs_recorder rec;
		CU_ASSERT_FATAL(lbs_run_create(&run, &sc, NULL, &err) == LBS_OK);
		CU_ASSERT_FATAL(lbs_recorder_open(&rec, db, LBS_DETAIL_WORKERS, &err) == LBS_OK);
		CU_ASSERT_FATAL(lbs_recorder_begin(&rec, &run, &err) == LBS_OK);
		/* Attempt 1 fails halfway: its rows must vanish. */
		failing f = { &rec, attempt == 1 ? 50 : -1 };
		lbs_status st = lbs_run_execute(&run, failing_fn, &f, NULL, &err);
		if (attempt == 1) {
			CU_ASSERT_EQUAL(st, LBS_EIO);
			lbs_recorder_abort(&rec);
		} else {
			CU_ASSERT_EQUAL(st, LBS_OK);
			CU_ASSERT_EQUAL(lbs_recorder_commit(&rec, &run, 0.0, &err), LBS_OK);
		}
		lbs_recorder_close(&rec);
		lbs_run_destroy(&run);
	}
	sqlite3 *h;
	CU_ASSERT_FATAL(sqlite3_open(db, &h) == SQLITE_OK);
	CU_ASSERT_EQUAL(count(h, "PRAGMA user_version"), LBS_SCHEMA_VERSION);
	CU_ASSERT_EQUAL(count(h, "SELECT count(*) FROM runs"), 2);
	CU_ASSERT_EQUAL(count(h, "SELECT count(*) FROM iterations"), 200);
	CU_ASSERT_EQUAL(count(h, "SELECT count(*) FROM worker_iterations"), 1000);
	CU_ASSERT_EQUAL(count(h, "SELECT count(*) FROM workers"), 10);
	/* The two committed runs (ids 1 and 2: the rolled-back one never took an
	 * id) are identical, row for row. */
	CU_ASSERT_EQUAL(count(h, "SELECT count(*) FROM (SELECT iteration, start_s, end_s, straggler_gap_s "
				 "FROM iterations WHERE run_id = 1 EXCEPT SELECT iteration, start_s, end_s, "
				 "straggler_gap_s FROM iterations WHERE run_id = 2)"), 0);
	/* Wait = compute phase - own compute: worker 2 (the straggler) never waits. */
	CU_ASSERT_EQUAL(count(h, "SELECT count(*) FROM worker_iterations WHERE worker = 2 AND wait_s != 0"), 0);
	sqlite3_close(h);
	lbs_scenario_destroy(&sc);
	unlink(ini);
	unlink(db);
	free(ini);
	free(db);
}

void suite_run(void)
{
	static const test_case tests[] = {
		{ "heterogeneous closed form", test_closed_form },
		{ "closed form with noise", test_closed_form_with_noise },
		{ "same seed, same run", test_deterministic },
		{ "event modes agree", test_event_modes_agree },
		{ "adding a worker keeps streams", test_adding_worker_keeps_streams },
		{ "memory caps", test_memory_caps },
		{ "recorder: one transaction per run", test_recorder_transaction },
	};
	add_suite("run", tests, sizeof tests / sizeof tests[0]);
}
