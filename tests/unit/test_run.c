/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Whole runs: simulated iteration times against closed forms, determinism,
 * the two engine modes agreeing, stream independence, memory caps, and the
 * recorder's one-transaction-per-run rule. */
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/files.h"
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

static const char *noisy[] = { "workers.a.noise=lognormal", "workers.a.noise_sigma=0.3",
			       "workers.c.noise=uniform", "workers.c.noise_high=50%" };

static void test_deterministic(void)
{
	capture x, y, z;
	lbs_error err;
	CU_ASSERT_FATAL(simulate(HETERO, noisy, 4, &x, &err) == LBS_OK);
	CU_ASSERT_FATAL(simulate(HETERO, noisy, 4, &y, &err) == LBS_OK);
	CU_ASSERT(capture_same(&x, &y));
	const char *ov[] = { noisy[0], noisy[1], noisy[2], noisy[3], "run.seed=6" };
	CU_ASSERT_FATAL(simulate(HETERO, ov, 5, &z, &err) == LBS_OK);
	CU_ASSERT_FALSE(capture_same(&x, &z));
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
	CU_ASSERT(capture_same(&x, &y));
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

/* ---- re-sizing costs (lbs_cost.resize_cost, new_batch_cost) ---------- */

/* A policy that plays a fixed list of plans, two workers, one per
 * iteration (the last one held): installed as a plugin without a file. */
static const int64_t replay_plans[][2] = { { 32, 32 }, { 30, 34 }, { 34, 30 }, { 30, 34 },
					   { 30, 34 }, { 32, 32 }, { 0, 64 },  { 32, 32 } };
#define REPLAY_N (sizeof replay_plans / sizeof *replay_plans)

static lbs_status replay_create(const lbs_policy_env *env, const lbs_kv *options, size_t n_options,
				void **state, lbs_policy_info *info, lbs_error *err)
{
	(void)options, (void)n_options;
	if (env->n_workers != 2)
		return lbs_error_set(err, LBS_EINPUT, "replay: two workers");
	*state = NULL;
	*info = (lbs_policy_info){ 0 };
	return LBS_OK;
}

static lbs_status replay_plan(void *state, const lbs_observation *obs, int64_t *batch, bool *changed,
			      lbs_error *err)
{
	(void)state, (void)err;
	size_t k = (size_t)obs->iteration < REPLAY_N ? (size_t)obs->iteration : REPLAY_N - 1;
	batch[0] = replay_plans[k][0];
	batch[1] = replay_plans[k][1];
	*changed = true;
	return LBS_OK;
}

static void replay_destroy(void *state) { (void)state; }

static const lbs_policy_ops replay_policy = {
	.name = "replay",
	.summary = "the plans of replay_plans[]",
	.create = replay_create,
	.plan = replay_plan,
	.destroy = replay_destroy,
};

/* Runs text under the replay policy. */
static lbs_status simulate_replay(const char *text, const char *const *ov, size_t nov, capture *c,
				  lbs_error *err)
{
	return capture_simulate_with(text, ov, nov, "replay", &replay_policy, c, err);
}

#define RESIZE_TWO \
	"[run]\nglobal_batch = 64\niterations = 8\n" \
	"[model]\ngradient = 1 MB\n[network]\ntopology = none\n" \
	"[workers.w]\ncount = 2\ndevice = cpu\ncost = linear\nper_sample = 1 ms\n" \
	"resize_cost = 50%\nnew_batch_cost = 25%\n"

/* Two workers at 1 ms a sample, resize_cost 50%, new_batch_cost 25%, the
 * plans of replay_plans[]. By hand (a batch's time b ms, x1.5 when it is
 * not the batch the worker last ran, x1.25 when the worker never ran it;
 * iteration 0 is each worker's first run and pays neither):
 *   0: 32, 32     first runs                          32     32     -> 32
 *   1: 30, 34     both changed and new: x1.875        56.25  63.75  -> 63.75
 *   2: 34, 30     both changed and new again          63.75  56.25  -> 63.75
 *   3: 30, 34     changed, seen: x1.5                 45     51     -> 51
 *   4: 30, 34     the same again                      30     34     -> 34
 *   5: 32, 32     changed, seen since iteration 0     48     48     -> 48
 *   6: 0, 64      worker 0 idle (no run); 64 new      0      120    -> 120
 *   7: 32, 32     worker 0 last ran 32 (at 5): free;  32     48     -> 48
 *                 worker 1 changed from 64, seen */
static void test_resize_by_hand(void)
{
	static const double want[REPLAY_N][2] = { { 32, 32 },	{ 56.25, 63.75 }, { 63.75, 56.25 }, { 45, 51 },
						  { 30, 34 },	{ 48, 48 },	  { 0, 120 },	    { 32, 48 } };
	capture c;
	lbs_error err;
	CU_ASSERT_FATAL(simulate_replay(RESIZE_TWO, NULL, 0, &c, &err) == LBS_OK);
	CU_ASSERT_EQUAL_FATAL(c.n, REPLAY_N);
	int bad = 0;
	double t = 0;
	for (size_t k = 0; k < c.n; k++) {
		double mx = fmax(want[k][0], want[k][1]) * 1e-3;
		for (size_t i = 0; i < 2; i++) {
			bad += !rel_eq(c.compute[k * 2 + i], want[k][i] * 1e-3) && !(want[k][i] == 0 && c.compute[k * 2 + i] == 0);
			bad += c.batch[k * 2 + i] != replay_plans[k][i];
		}
		bad += !rel_eq(c.rec[k].end_s - c.rec[k].start_s, mx);
		bad += k > 0 && !rel_eq(c.rec[k].start_s, t);
		t += mx;
	}
	CU_ASSERT_EQUAL(bad, 0);
	capture_free(&c);
	/* The keys absent, or 0: no cost, every iteration its largest batch. */
	const char *off[] = { "workers.w.resize_cost=0", "workers.w.new_batch_cost=0" };
	CU_ASSERT_FATAL(simulate_replay(RESIZE_TWO, off, 2, &c, &err) == LBS_OK);
	bad = 0;
	for (size_t k = 0; k < c.n; k++)
		bad += !rel_eq(c.rec[k].end_s - c.rec[k].start_s,
			       (double)(replay_plans[k][0] > replay_plans[k][1] ? replay_plans[k][0]
										 : replay_plans[k][1]) * 1e-3);
	CU_ASSERT_EQUAL(bad, 0);
	capture_free(&c);
	/* resize_cost alone: iteration 1 is 34 x 1.5 = 51 ms; new_batch_cost
	 * alone: 34 x 1.25 = 42.5 ms, and iteration 3 (seen) 34 ms. */
	const char *rc_only[] = { "workers.w.new_batch_cost=0" };
	CU_ASSERT_FATAL(simulate_replay(RESIZE_TWO, rc_only, 1, &c, &err) == LBS_OK);
	CU_ASSERT(rel_eq(c.rec[1].end_s - c.rec[1].start_s, 0.051));
	CU_ASSERT(rel_eq(c.rec[3].end_s - c.rec[3].start_s, 0.051));
	capture_free(&c);
	const char *nc_only[] = { "workers.w.resize_cost=0" };
	CU_ASSERT_FATAL(simulate_replay(RESIZE_TWO, nc_only, 1, &c, &err) == LBS_OK);
	CU_ASSERT(rel_eq(c.rec[1].end_s - c.rec[1].start_s, 0.0425));
	CU_ASSERT(rel_eq(c.rec[3].end_s - c.rec[3].start_s, 0.034));
	capture_free(&c);
}

/* With noise (the uniform fast path is left for the general one), both
 * event modes give the same results, the same seed the same run, and keys
 * given as 0 the results of keys absent, bit for bit. */
static void test_resize_modes(void)
{
	const char *base[] = { "workers.w.noise=uniform", "workers.w.noise_high=20%", "workers.w.resize_cost=0",
			       "workers.w.new_batch_cost=0" };
	const char *on[] = { base[0], base[1], "workers.w.resize_cost=30%", "workers.w.new_batch_cost=10%",
			     "run.worker_events=always" };
	capture x, y, z, u;
	lbs_error err;
	CU_ASSERT_FATAL(simulate_replay(RESIZE_TWO, on, 4, &x, &err) == LBS_OK);
	CU_ASSERT_FATAL(simulate_replay(RESIZE_TWO, on, 5, &y, &err) == LBS_OK);
	CU_ASSERT(capture_same(&x, &y));
	capture_free(&y);
	CU_ASSERT_FATAL(simulate_replay(RESIZE_TWO, on, 4, &y, &err) == LBS_OK);
	CU_ASSERT(capture_same(&x, &y));
	CU_ASSERT_FATAL(simulate_replay(RESIZE_TWO, base, 4, &z, &err) == LBS_OK);
	CU_ASSERT_FALSE(capture_same(&x, &z));
	/* the keys removed (an empty --set removes a key the file gives) */
	const char *absent[] = { base[0], base[1], "workers.w.resize_cost=", "workers.w.new_batch_cost=" };
	CU_ASSERT_FATAL(simulate_replay(RESIZE_TWO, absent, 4, &u, &err) == LBS_OK);
	CU_ASSERT(capture_same(&z, &u));
	capture_free(&x);
	capture_free(&y);
	capture_free(&z);
	capture_free(&u);
}

/* Micro-batches (work-stealing): each one is a run of its size. One worker,
 * 10 samples in chunks of 4 at 1 ms a sample, resize_cost 50%,
 * new_batch_cost 25%: iteration 0 runs 4 (its first), 4, then 2 (changed
 * and new, x1.875): 4 + 4 + 3.75 = 11.75 ms; iteration 1 runs 4 (changed
 * from 2, seen: x1.5), 4, 2 (changed, seen): 6 + 4 + 3 = 13 ms. */
static void test_resize_micro_batches(void)
{
	const char *text = "[run]\nglobal_batch = 10\niterations = 3\n[model]\ngradient = 1 MB\n"
			   "[network]\ntopology = none\n[policy]\nname = work-stealing\n"
			   "[policy.work-stealing]\nchunk = 4\n"
			   "[workers.w]\ncount = 1\ndevice = cpu\ncost = linear\nper_sample = 1 ms\n"
			   "resize_cost = 50%\nnew_batch_cost = 25%\n";
	capture c;
	lbs_error err;
	CU_ASSERT_FATAL(simulate(text, NULL, 0, &c, &err) == LBS_OK);
	CU_ASSERT_EQUAL_FATAL(c.n, 3);
	CU_ASSERT(rel_eq(c.compute[0], 0.01175));
	CU_ASSERT(rel_eq(c.compute[1], 0.013));
	CU_ASSERT(rel_eq(c.compute[2], 0.013));
	capture_free(&c);
}

/* ---- the exchange on the workers' CPU ([network] exchange_on_workers) --- */

/* Two workers, ring, M = 1 MB at 1 GB/s, 10 us: the exchange is 1 ms + 2 x
 * 10 us = 1.02 ms of network time. Worker a at availability 1 computes 32
 * ms, worker b at 0.5 computes 64 ms. With the exchange on the workers and
 * the fluid rule, b's part takes 1.02 / 0.5 = 2.04 ms: the aggregation
 * doubles; at availability 1 everywhere it is the network's to the bit. */
#define EXCHANGE_TWO \
	"[run]\nglobal_batch = 64\niterations = 5\n[model]\ngradient = 1 MB\n" \
	"[network]\ntopology = ring\nbandwidth = 1 GB/s\nlatency = 10 us\n" \
	"[workers.a]\ncount = 1\ndevice = cpu\ncost = linear\nper_sample = 1 ms\n" \
	"[workers.b]\ncount = 1\ndevice = cpu\ncost = linear\nper_sample = 1 ms\navailability = 0.5\n"

static void test_exchange_fluid(void)
{
	const char *yes[] = { "network.exchange_on_workers=yes" };
	capture c, d;
	lbs_error err;
	CU_ASSERT_FATAL(simulate(EXCHANGE_TWO, yes, 1, &c, &err) == LBS_OK);
	int bad = 0;
	for (size_t k = 0; k < c.n; k++) {
		bad += !rel_eq(c.rec[k].compute_end_s - c.rec[k].start_s, 0.064);
		bad += fabs(c.rec[k].aggregation_s - 0.00204) > 1e-15;
		bad += !rel_eq(c.rec[k].start_s, (double)k * 0.06604);
	}
	CU_ASSERT_EQUAL(bad, 0);
	capture_free(&c);
	/* no: the network's 1.02 ms */
	CU_ASSERT_FATAL(simulate(EXCHANGE_TWO, NULL, 0, &c, &err) == LBS_OK);
	CU_ASSERT(fabs(c.rec[2].aggregation_s - 0.00102) < 1e-15);
	capture_free(&c);
	/* availability 1: yes is no, bit for bit */
	const char *one[] = { "workers.b.availability=1" };
	const char *one_yes[] = { "workers.b.availability=1", yes[0] };
	CU_ASSERT_FATAL(simulate(EXCHANGE_TWO, one, 1, &c, &err) == LBS_OK);
	CU_ASSERT_FATAL(simulate(EXCHANGE_TWO, one_yes, 2, &d, &err) == LBS_OK);
	CU_ASSERT(capture_same(&c, &d));
	capture_free(&c);
	capture_free(&d);
}

/* One worker under a CPU quota of 0.2 of a core per 10 ms period (2 ms of
 * CPU a period, no tick), 1.5 ms of compute and a 1 ms exchange (ps: 2 x
 * 0.5 MB at 1 GB/s). Its periods start at phi + 10k ms, phi drawn from
 * its stream ("cfs", "w", 0); the seed is chosen so that phi >= 2 ms. By
 * hand (times from phi, each iteration's compute, aggregation):
 *   0: starts at 0 in the period ending at phi with a whole quota: computes
 *      0 to 1.5 ms; the exchange uses the 0.5 ms left (to 2 ms), waits,
 *      throttled, for the period at phi and ends at phi + 0.5:
 *      compute 1.5 ms, aggregation phi - 1 ms
 *   1: phi + 0.5 (0.5 ms of the quota used): computes to phi + 2, which
 *      uses it up, so the exchange waits for phi + 10 and ends at phi + 11:
 *      1.5 ms, 9 ms (its quota exhausted, the worker waits a period)
 *   2: 1 ms of quota left: computes to phi + 12, waits, ends at phi + 20.5;
 *      the exchange fits in the period: 9.5 ms, 1 ms
 *   3: 0.5 ms left: 0.5 to phi + 22, waits, 1 ms to phi + 31; the
 *      exchange fits: 9.5 ms, 1 ms
 *   4: the quota used up: waits for phi + 40, computes to phi + 41.5; the
 *      exchange uses 0.5 ms to phi + 42, waits, ends at phi + 50.5:
 *      9.5 ms, 9 ms
 *   5..8: as 1..4, 50 ms later (5 periods for 4 x 2.5 ms of CPU).
 * Without the exchange on the worker each aggregation is 1 ms; with the
 * fluid rule, 1 / 0.2 = 5 ms. */
static void test_exchange_cfs(void)
{
	const double period = 0.010;
	int64_t seed = 0;
	double phi = 0;
	for (int64_t s = 1; s < 100 && !seed; s++) {
		gsl_rng *r = lbs_rng_stream((uint64_t)s, "cfs", "w", 0, NULL);
		double p = gsl_rng_uniform(r) * period;
		gsl_rng_free(r);
		if (p >= 0.0025 && p < 0.0095) {
			seed = s;
			phi = p;
		}
	}
	CU_ASSERT_FATAL(seed > 0);
	char set_seed[64];
	snprintf(set_seed, sizeof set_seed, "run.seed=%lld", (long long)seed);
	const char *text = "[run]\nglobal_batch = 1\niterations = 9\n[model]\ngradient = 0.5 MB\n"
			   "[network]\ntopology = ps\nbandwidth = 1 GB/s\nexchange_on_workers = yes\n"
			   "[workers.w]\ncount = 1\ndevice = cpu\ncost = linear\nper_sample = 1.5 ms\n"
			   "availability = 0.2\ncpu_quota_period = 10 ms\n";
	const char *ov[] = { set_seed };
	capture c;
	lbs_error err;
	CU_ASSERT_FATAL(simulate(text, ov, 1, &c, &err) == LBS_OK);
	CU_ASSERT_EQUAL_FATAL(c.n, 9);
	const double ms = 1e-3;
	const double start[9] = { 0, phi + 0.5 * ms, phi + 11 * ms, phi + 21.5 * ms, phi + 32 * ms,
				  phi + 50.5 * ms, phi + 61 * ms, phi + 71.5 * ms, phi + 82 * ms };
	const double compute[9] = { 1.5, 1.5, 9.5, 9.5, 9.5, 1.5, 9.5, 9.5, 9.5 };
	const double agg[9] = { phi / ms - 1, 9, 1, 1, 9, 9, 1, 1, 9 };
	int bad = 0;
	for (size_t k = 0; k < 9; k++) {
		bad += fabs(c.rec[k].start_s - start[k]) > 1e-12;
		bad += fabs(c.compute[k] - compute[k] * ms) > 1e-12;
		bad += fabs(c.rec[k].aggregation_s - agg[k] * ms) > 1e-12;
	}
	CU_ASSERT_EQUAL(bad, 0);
	capture_free(&c);
}

/* The views the results check lets a file to be written hold are exactly
 * those lbsim stores: analysis/views.sql's, run_keys and the hybrid
 * tables' and their policies' (sim/resultsdb.c). */
static void test_results_views(void)
{
	static const char create[] = "CREATE VIEW IF NOT EXISTS ";
	const char *sql = lbs_analysis_text("views.sql");
	CU_ASSERT_PTR_NOT_NULL_FATAL(sql);
	size_t n_sql = 1, n_list = 0; /* run_keys: written by analysis/views.c */
	for (const char *p = sql; (p = strstr(p, create)); n_sql++) {
		p += strlen(create);
		char name[64];
		size_t len = strcspn(p, " \n");
		CU_ASSERT_FATAL(len < sizeof name);
		memcpy(name, p, len);
		name[len] = '\0';
		bool listed = false;
		for (size_t i = 0; lbs_results_views[i]; i++)
			listed |= !strcmp(lbs_results_views[i], name);
		if (!listed)
			fprintf(stderr, "view %s of views.sql is not in lbs_results_views\n", name);
		CU_ASSERT(listed);
	}
	/* and those the hybrid tables come with, and their policies' */
	for (const char *p = lbs_hybrid_schema_sql; (p = strstr(p, create)); n_sql++)
		p += strlen(create);
	for (const char *p = lbs_hybrid_policy_schema_sql; (p = strstr(p, create)); n_sql++)
		p += strlen(create);
	while (lbs_results_views[n_list])
		n_list++;
	CU_ASSERT_EQUAL(n_list, n_sql);
}

/* The schema check: a new file and lbsim's own schema pass; a trigger, a
 * view for a table or an extra column is refused, with the status asked. */
static void test_results_check(void)
{
	sqlite3 *db = NULL;
	lbs_error err;
	int version = -1;
	CU_ASSERT_EQUAL_FATAL(sqlite3_open(":memory:", &db), SQLITE_OK);
	lbs_results_harden(db, LBS_RESULTS_MAX_VALUE, NULL);
	CU_ASSERT_EQUAL(lbs_results_check_schema(db, "main", "m", LBS_RESULTS_WRITE, LBS_EIO, &version, &err),
			LBS_OK);
	CU_ASSERT_EQUAL(version, 0);
	CU_ASSERT_EQUAL(lbs_results_check(db, "m", &err), LBS_EINPUT);
	char v[64];
	snprintf(v, sizeof v, "PRAGMA user_version = %d", LBS_SCHEMA_VERSION);
	CU_ASSERT_EQUAL_FATAL(sqlite3_exec(db, lbs_schema_sql, NULL, NULL, NULL), SQLITE_OK);
	CU_ASSERT_EQUAL_FATAL(sqlite3_exec(db, v, NULL, NULL, NULL), SQLITE_OK);
	CU_ASSERT_EQUAL(lbs_results_check_schema(db, "main", "m", LBS_RESULTS_WRITE, LBS_EIO, &version, &err),
			LBS_OK);
	CU_ASSERT_EQUAL(version, LBS_SCHEMA_VERSION);
	CU_ASSERT_EQUAL_FATAL(sqlite3_exec(db, lbs_sweep_points_sql, NULL, NULL, NULL), SQLITE_OK);
	CU_ASSERT_EQUAL_FATAL(sqlite3_exec(db, lbs_whatif_schema_sql, NULL, NULL, NULL), SQLITE_OK);
	CU_ASSERT_EQUAL(lbs_results_check_schema(db, "main", "m", LBS_RESULTS_WRITE, LBS_EIO, NULL, &err), LBS_OK);
	CU_ASSERT_EQUAL_FATAL(sqlite3_exec(db, "CREATE TRIGGER t AFTER INSERT ON runs BEGIN SELECT 1; END",
					   NULL, NULL, NULL), SQLITE_OK);
	CU_ASSERT_EQUAL(lbs_results_check(db, "m", &err), LBS_OK);
	CU_ASSERT_EQUAL(lbs_results_check_schema(db, "main", "m", LBS_RESULTS_WRITE, LBS_EIO, NULL, &err), LBS_EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "m: holds a trigger t"));
	CU_ASSERT_EQUAL_FATAL(sqlite3_exec(db, "DROP TRIGGER t; ALTER TABLE batches ADD COLUMN x", NULL, NULL, NULL),
			      SQLITE_OK);
	CU_ASSERT_EQUAL(lbs_results_check(db, "m", &err), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "table batches has a column x"));
	CU_ASSERT_EQUAL_FATAL(sqlite3_exec(db, "DROP TABLE batches; CREATE VIEW batches AS SELECT 1", NULL, NULL,
					   NULL), SQLITE_OK);
	CU_ASSERT_EQUAL(lbs_results_check(db, "m", &err), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "batches is a view"));
	sqlite3_close(db);
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
		{ "results: the views of a results file", test_results_views },
		{ "results: the schema check", test_results_check },
		{ "re-sizing costs by hand", test_resize_by_hand },
		{ "re-sizing: modes, seeds, defaults", test_resize_modes },
		{ "re-sizing: micro-batches", test_resize_micro_batches },
		{ "exchange on workers: fluid rule", test_exchange_fluid },
		{ "exchange on workers: CPU quota", test_exchange_cfs },
	};
	add_suite("run", tests, sizeof tests / sizeof tests[0]);
}
