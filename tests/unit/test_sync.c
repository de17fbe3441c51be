/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The synchronisation modes (sim/run_sync.c, sim/efficiency.c): the efficiency model against its
 * closed forms, ssp with s = 0 and local-sgd with H = 1 against BSP, and
 * steps and time to target worked out by hand. */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "sim/run.h"
#include "sim/efficiency.h"
#include "tests/unit/suites.h"

/* phi(tau) = 1 / max(1, tau) (Zhang et al. 2016), or 1 without a penalty. */
static void test_staleness_weight(void)
{
	CU_ASSERT_EQUAL(lbs_staleness_weight(LBS_STALE_INVERSE, 1.0, 0), 1.0);
	CU_ASSERT_EQUAL(lbs_staleness_weight(LBS_STALE_INVERSE, 1.0, 1), 1.0);
	CU_ASSERT_EQUAL(lbs_staleness_weight(LBS_STALE_INVERSE, 1.0, 2), 0.5);
	CU_ASSERT_EQUAL(lbs_staleness_weight(LBS_STALE_INVERSE, 1.0, 8), 0.125);
	CU_ASSERT_EQUAL(lbs_staleness_weight(LBS_STALE_NONE, 1.0, 8), 1.0);
	/* the exponent: (1/tau)^beta; 4^-0.5 = 1/2, 8^-(1/3) = 1/2, 2^-0.7 */
	CU_ASSERT_DOUBLE_EQUAL(lbs_staleness_weight(LBS_STALE_INVERSE, 0.5, 4), 0.5, 1e-15);
	CU_ASSERT_DOUBLE_EQUAL(lbs_staleness_weight(LBS_STALE_INVERSE, 1.0 / 3, 8), 0.5, 1e-15);
	CU_ASSERT_DOUBLE_EQUAL(lbs_staleness_weight(LBS_STALE_INVERSE, 0.7, 2), 0.615572206672458, 1e-15);
	CU_ASSERT_EQUAL(lbs_staleness_weight(LBS_STALE_INVERSE, 0.7, 1), 1.0);
	CU_ASSERT_EQUAL(lbs_staleness_weight(LBS_STALE_NONE, 0.7, 8), 1.0);
	CU_ASSERT_EQUAL(lbs_staleness_weight(LBS_STALE_INVERSE, 0.0, 8), 1.0);
}

/* At a constant batch b and staleness tau, the gradient-noise-scale model
 * with the penalty reaches the target after S_min (b + B_noise) / (b phi)
 * steps, rounded up: summing the steps one by one, as the run does, gives
 * that count for every combination below. */
static void test_gns_closed_form(void)
{
	const int64_t batches[] = { 1, 10, 48, 64, 1000 };
	const double noise[] = { 0, 20, 64, 1e4 }, smin[] = { 1, 10, 100 };
	const int64_t taus[] = { 0, 1, 2, 3, 7 };
	int bad = 0, cases = 0;
	for (size_t a = 0; a < 5; a++)
		for (size_t b = 0; b < 4; b++)
			for (size_t c = 0; c < 3; c++)
				for (size_t d = 0; d < 5; d++) {
					lbs_convergence_spec cv = { .model = LBS_CONV_GNS, .noise_scale = noise[b],
								    .min_steps = smin[c] };
					double phi = lbs_staleness_weight(LBS_STALE_INVERSE, 1.0, taus[d]);
					double x = smin[c] * ((double)batches[a] + noise[b]) / ((double)batches[a] * phi);
					int64_t want = (int64_t)ceil(x - 1e-9), steps = 0;
					if (want > 20000)
						continue; /* see below */
					double progress = 0;
					while (progress < 1.0 - 1e-12 && steps < 10 * want + 10) {
						progress += lbs_gns_step_progress(&cv, batches[a], phi);
						steps++;
					}
					bad += steps != want;
					cases++;
				}
	CU_ASSERT_EQUAL(bad, 0);
	/* Past some 1e5 steps the sum's rounding (steps x 1e-16) outgrows the
	 * run's 1e-12 tolerance, and a count that is a whole number of steps
	 * by the closed form takes one more: those cases are left out. */
	CU_ASSERT_EQUAL(cases, 270);
	lbs_convergence_spec cv = { .model = LBS_CONV_GNS, .noise_scale = 64, .min_steps = 100 };
	CU_ASSERT_EQUAL(lbs_gns_step_progress(&cv, 0, 1.0), 0.0);
	CU_ASSERT(fabs(lbs_gns_step_progress(&cv, 64, 0.5) - 0.5 * 64 / (100.0 * 128)) < 1e-18);
}

/* Two workers of speeds 2 and 1 (1 and 2 ms a sample), 10 samples each,
 * a parameter server of 1 MB/s and a 1000-byte gradient: T_ps = 2 max(2 x
 * 1000 / 1e6, 1000 / 1e6) = 4 ms. Steps of 14 ms (fast) and 24 ms (slow);
 * BSP iterations of 20 + 4 = 24 ms. B = 20, B_noise = 20, S_min = 10: a
 * fresh step of 20 samples makes 20 / (10 x 40) = 0.05 of the way, so BSP
 * needs 20 steps, 480 ms. */
#define TWO \
	"[run]\nglobal_batch = 20\niterations = 100\nseed = 1\n" \
	"[model]\nparameters = 250\nbytes_per_parameter = 4\n" \
	"[network]\ntopology = ps\nbandwidth = 8 Mbit/s\nlatency = 0 s\n" \
	"[workers.fast]\ncount = 1\ndevice = cpu\ncost = linear\nper_sample = 1 ms\n" \
	"[workers.slow]\ncount = 1\ndevice = cpu\ncost = linear\nper_sample = 2 ms\n" \
	"[convergence]\nmodel = gns\nnoise_scale = 20\nmin_steps = 10\nstop_at_target = yes\n"

/* Runs text with overrides, keeping the records and the run's totals. */
static lbs_status run_with(const char *text, const char *const *ov, size_t nov, capture *c, lbs_run_stats *stats,
			   lbs_error *err)
{
	lbs_status st = capture_simulate(text, ov, nov, NULL, c, err);
	*stats = c->stats;
	return st;
}

/* ssp with s = 0 and local-sgd with H = 1 have BSP's barrier at every step:
 * bit-identical records, under noise of both kinds, and the same target. */
static void test_bsp_limits(void)
{
	const char *base[] = { "workers.fast.noise=lognormal", "workers.fast.noise_sigma=0.3",
			       "workers.slow.noise=uniform", "workers.slow.noise_high=50%",
			       "convergence.stop_at_target=no", NULL };
	const char *modes[][2] = { { "sync.mode=ssp", "sync.staleness=0" }, { "sync.mode=local-sgd", "sync.period=1" } };
	capture bsp;
	lbs_run_stats sb, so;
	lbs_error err;
	CU_ASSERT_FATAL(run_with(TWO, base, 5, &bsp, &sb, &err) == LBS_OK);
	CU_ASSERT_EQUAL(bsp.n, 100);
	for (size_t m = 0; m < 2; m++) {
		const char *ov[7];
		memcpy(ov, base, 5 * sizeof *ov);
		ov[5] = modes[m][0];
		ov[6] = modes[m][1];
		capture other;
		CU_ASSERT_FATAL(run_with(TWO, ov, 7, &other, &so, &err) == LBS_OK);
		CU_ASSERT(capture_same(&bsp, &other));
		CU_ASSERT_EQUAL(so.steps_to_target, sb.steps_to_target);
		CU_ASSERT_EQUAL(so.time_to_target_s, sb.time_to_target_s);
		CU_ASSERT_EQUAL(so.progress, sb.progress);
		capture_free(&other);
	}
	capture_free(&bsp);
}

/* ssp by hand. The slow worker (24 ms a step) is never held; it finishes
 * step k at 24 (k + 1) ms, which completes clock k. The fast one (14 ms)
 * may start step k once clock k - s - 1 is complete.
 * s = 1: it starts steps 0.. at 0, 14, 28, 48, 72, ... (from step 3 on,
 * when the slow one finishes step k - 2), each read missing one clock:
 * staleness 0, then 1; phi(1) = 1, so each clock makes BSP's 0.05: 20
 * clocks, the 20th ending at 480 ms, as BSP.
 * s = 2: it starts at 0, 14, 28, 42, 56, 72, 96, ... (from step 5 on, at
 * 24 (k - 2)); its staleness (k minus the clocks complete when it starts)
 * is 0, 1, 1, 2, 2, 2, ...: clocks 0-2 make 0.05 each, later ones (10 x
 * 1/2 + 10 x 1) / 20 x 0.05 = 0.0375: 0.15 + 23 x 0.0375 = 1.0125 >= 1
 * while 22 give 0.975, so 26 clocks, 26 x 24 = 624 ms; without the penalty
 * 20 clocks, 480 ms. */
static void test_ssp_by_hand(void)
{
	struct {
		const char *s, *penalty;
		int64_t steps;
		double time_s;
	} cases[] = { { "sync.staleness=1", "convergence.staleness_penalty=inverse", 20, 0.480 },
		      { "sync.staleness=2", "convergence.staleness_penalty=inverse", 26, 0.624 },
		      { "sync.staleness=2", "convergence.staleness_penalty=none", 20, 0.480 } };
	for (size_t k = 0; k < 3; k++) {
		const char *ov[] = { "sync.mode=ssp", cases[k].s, cases[k].penalty };
		capture c;
		lbs_run_stats s;
		lbs_error err;
		CU_ASSERT_FATAL(run_with(TWO, ov, 3, &c, &s, &err) == LBS_OK);
		CU_ASSERT_EQUAL(s.steps_to_target, cases[k].steps);
		CU_ASSERT(fabs(s.time_to_target_s - cases[k].time_s) < 1e-12);
		CU_ASSERT_EQUAL((int64_t)c.n, cases[k].steps); /* stop_at_target */
		if (k == 1) { /* the fast worker's starts: clock 4 starts at 56 ms, clock 6 at 96 */
			CU_ASSERT(fabs(c.rec[4].start_s - 0.056) < 1e-12);
			CU_ASSERT(fabs(c.rec[6].start_s - 0.096) < 1e-12);
		}
		capture_free(&c);
	}
}

/* local-sgd by hand: a round of H steps is H x 20 ms for the slow worker,
 * then the 4 ms all-reduce. Each clock makes BSP's 0.05 (doc/model.md),
 * but the target is looked for on the averaged model only. H = 2: 20
 * clocks, the 10th averaging, at 10 x 44 = 440 ms. H = 3: 1.0 is reached
 * at clock 20, not an averaging one; the next (21) is: 7 rounds of 64 ms,
 * 448 ms. */
static void test_local_sgd_by_hand(void)
{
	const char *h[] = { "sync.period=2", "sync.period=3" };
	const int64_t steps[] = { 20, 21 };
	const double time_s[] = { 0.440, 0.448 };
	for (size_t k = 0; k < 2; k++) {
		const char *ov[] = { "sync.mode=local-sgd", h[k] };
		capture c;
		lbs_run_stats s;
		lbs_error err;
		CU_ASSERT_FATAL(run_with(TWO, ov, 2, &c, &s, &err) == LBS_OK);
		CU_ASSERT_EQUAL(s.steps_to_target, steps[k]);
		CU_ASSERT(fabs(s.time_to_target_s - time_s[k]) < 1e-12);
		capture_free(&c);
	}
}

/* A looser gate can only let a worker start sooner, and under the fluid
 * rule a step that starts sooner ends no later; each worker's noise draws
 * are the same step by step whatever the mode. So under noise and
 * availability that varies, clock k of ssp ends no later than BSP's
 * iteration k, and no later with a larger s; local-sgd, which drops the
 * exchanges and barriers between averagings, too. Two runs of the same
 * scenario and seed are identical in every mode. */
static void test_looser_is_sooner(void)
{
	const char *base[] = { "workers.fast.noise=lognormal", "workers.fast.noise_sigma=0.5",
			       "workers.slow.noise=uniform", "workers.slow.noise_high=200%",
			       "convergence.stop_at_target=no", "workers.fast.count=3" };
	const char *extra[][2] = { { "sync.mode=bsp", "run.seed=1" },   { "sync.mode=ssp", "sync.staleness=1" },
				   { "sync.mode=ssp", "sync.staleness=2" }, { "sync.mode=ssp", "sync.staleness=5" },
				   { "sync.mode=local-sgd", "sync.period=4" } };
	capture c[5];
	lbs_run_stats s;
	lbs_error err;
	for (size_t m = 0; m < 5; m++) {
		const char *ov[8];
		memcpy(ov, base, 6 * sizeof *ov);
		ov[6] = extra[m][0];
		ov[7] = extra[m][1];
		CU_ASSERT_FATAL(run_with(TWO, ov, 8, &c[m], &s, &err) == LBS_OK);
		CU_ASSERT_EQUAL_FATAL(c[m].n, 100);
		capture again;
		CU_ASSERT_FATAL(run_with(TWO, ov, 8, &again, &s, &err) == LBS_OK);
		CU_ASSERT(capture_same(&c[m], &again));
		capture_free(&again);
	}
	int later = 0, sooner = 0;
	for (size_t k = 0; k < 100; k++) {
		for (size_t m = 1; m < 4; m++) {
			later += c[m].rec[k].end_s > c[m - 1].rec[k].end_s; /* ssp 1 vs bsp, 2 vs 1, 5 vs 2 */
			sooner += c[m].rec[k].end_s < c[m - 1].rec[k].end_s;
		}
		later += c[4].rec[k].end_s > c[0].rec[k].end_s;
	}
	CU_ASSERT_EQUAL(later, 0);
	CU_ASSERT(sooner > 0); /* the noise makes stragglers that a bound lets the others pass */
	/* and the compute times are the same draws, step by step (to the
	 * rounding of fin - start, which depends on when the step started) */
	int differ = 0;
	for (size_t k = 0; k < 100 * 4; k++)
		differ += fabs(c[0].compute[k] - c[3].compute[k]) > 1e-12 * c[0].compute[k];
	CU_ASSERT_EQUAL(differ, 0);
	for (size_t m = 0; m < 5; m++)
		capture_free(&c[m]);
}

/* asp: the same draws as BSP, step by step per worker; a run is
 * deterministic; every update's samples are its worker's share. */
static void test_asp_draws(void)
{
	const char *ov[] = { "workers.fast.noise=lognormal", "workers.fast.noise_sigma=0.5",
			     "convergence.stop_at_target=no", "sync.mode=asp" };
	capture a, b, bsp;
	lbs_run_stats s;
	lbs_error err;
	CU_ASSERT_FATAL(run_with(TWO, ov, 4, &a, &s, &err) == LBS_OK);
	CU_ASSERT_FATAL(run_with(TWO, ov, 4, &b, &s, &err) == LBS_OK);
	CU_ASSERT_FATAL(run_with(TWO, ov, 3, &bsp, &s, &err) == LBS_OK);
	CU_ASSERT(capture_same(&a, &b));
	CU_ASSERT_EQUAL(a.n_workers, 1);
	size_t step = 0; /* the fast worker's updates are its steps 0, 1, ...: BSP's compute times */
	int bad = 0;
	for (size_t u = 0; u < a.n; u++) {
		bad += a.batch[u] != 10;
		if (a.rec[u].first_worker == 0 && step < bsp.n) {
			bad += fabs(a.compute[u] - bsp.compute[2 * step]) > 1e-12 * bsp.compute[2 * step];
			step++;
		}
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT(step > 50);
	capture_free(&a);
	capture_free(&b);
	capture_free(&bsp);
}

void suite_sync(void)
{
	static const test_case tests[] = {
		{ "staleness weight", test_staleness_weight },
		{ "efficiency model: closed form", test_gns_closed_form },
		{ "ssp s = 0, local-sgd H = 1: BSP", test_bsp_limits },
		{ "ssp by hand", test_ssp_by_hand },
		{ "local-sgd by hand", test_local_sgd_by_hand },
		{ "a looser gate ends no later", test_looser_is_sooner },
		{ "asp: BSP's draws, deterministic", test_asp_draws },
	};
	add_suite("sync", tests, sizeof tests / sizeof tests[0]);
}
