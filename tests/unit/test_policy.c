/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Policies against hand-computed values on a fixed heterogeneous fleet, the
 * oracle as a lower bound, and the invariants every plan must keep. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/policy.h"
#include "tests/unit/suites.h"

/* Speeds 1, 1, 1, 3 (per_sample 1 ms; the fast worker at availability 3), no
 * noise, B = 60. Speed-proportional shares: 10, 10, 10, 30, and every worker
 * then takes 10 ms. Ring, N = 4, 1 MB, 1 GB/s, 10 us:
 * 2*3/4 * 1 ms + 6 * 10 us = 1.56 ms. Epochs of 600 / 60 = 10 iterations. */
#define FLEET \
	"[run]\nglobal_batch = 60\nepochs = 5\ndataset_samples = 600\n" \
	"[model]\ngradient = 1 MB\n" \
	"[network]\ntopology = ring\nbandwidth = 1 GB/s\nlatency = 10 us\n" \
	"[workers.slow]\ncount = 3\ndevice = cpu\ncost = linear\nper_sample = 1 ms\n" \
	"[workers.fast]\ncount = 1\ndevice = cpu\ncost = linear\nper_sample = 1 ms\navailability = 3\n"
#define AGG (2.0 * 3 / 4 * 1e6 / 1e9 + 6 * 10e-6)
#define BALANCED 0.010

static const char *in_iterations[] = { "run.epochs=", "run.dataset_samples=", "run.iterations=400" };

static bool batches_are(const capture *c, size_t k, const int64_t *want)
{
	for (size_t i = 0; i < c->n_workers; i++)
		if (c->batch[k * c->n_workers + i] != want[i])
			return false;
	return true;
}

static double compute_of(const capture *c, size_t k)
{
	return c->rec[k].compute_end_s - c->rec[k].start_s;
}

static double var_of(const capture *c, size_t k, const char *name)
{
	for (size_t v = 0; v < c->rec[k].n_vars; v++)
		if (!strcmp(c->vars[k * LBS_POLICY_VARS_MAX + v].name, name))
			return c->vars[k * LBS_POLICY_VARS_MAX + v].value;
	return NAN;
}

static void test_dbs_one_epoch(void)
{
	capture c;
	lbs_error err;
	CU_ASSERT_FATAL(capture_simulate(FLEET, NULL, 0, "dbs", &c, &err) == LBS_OK);
	CU_ASSERT_EQUAL_FATAL(c.n, 50); /* 5 epochs of 10 */
	const int64_t even[4] = { 15, 15, 15, 15 }, prop[4] = { 10, 10, 10, 30 };
	int bad = 0;
	for (size_t k = 0; k < 10; k++)
		bad += !batches_are(&c, k, even) || !rel_eq(compute_of(&c, k), 0.015);
	/* After one epoch: t = 10 * 15 ms for the slow, 10 * 5 ms for the fast,
	 * so p/t is 1 : 1 : 1 : 3 and the shares are exactly proportional. */
	for (size_t k = 10; k < c.n; k++) {
		bad += !batches_are(&c, k, prop);
		bad += !rel_eq(compute_of(&c, k), BALANCED);
		bad += !rel_eq(c.rec[k].end_s - c.rec[k].start_s, BALANCED + AGG);
		bad += c.rec[k].epoch != (int64_t)(k / 10);
	}
	CU_ASSERT_EQUAL(bad, 0);
	capture_free(&c);
}

/* The authors' rounding: speeds 1, 1, 1, 1.2 give ideal shares
 * 14.286 x 3 and 17.143; floors sum to 59 and no fraction reaches 0.5, so
 * the realised global batch is 59, and an epoch of 590 samples becomes
 * floor(590 / 59) = 10 iterations instead of floor(590 / 60) = 9. */
static void test_dbs_authors_rounding(void)
{
	const char *ov[] = { "workers.fast.availability=1.2", "run.dataset_samples=590", "run.epochs=3",
			     "policy.dbs.rounding=authors" };
	capture c;
	lbs_error err;
	CU_ASSERT_FATAL(capture_simulate(FLEET, ov, 4, "dbs", &c, &err) == LBS_OK);
	CU_ASSERT_EQUAL_FATAL(c.n, 9 + 10 + 10);
	const int64_t shrunk[4] = { 14, 14, 14, 17 };
	CU_ASSERT_EQUAL(c.rec[8].global_batch, 60);
	CU_ASSERT(batches_are(&c, 9, shrunk));
	CU_ASSERT_EQUAL(c.rec[9].global_batch, 59);
	CU_ASSERT_EQUAL(c.rec[9].epoch, 1);
	CU_ASSERT_EQUAL(c.rec[18].epoch, 1);
	CU_ASSERT_EQUAL(c.rec[19].epoch, 2);
	capture_free(&c);
	/* Largest remainder keeps B: one more sample to the largest fraction. */
	const char *lr[] = { "workers.fast.availability=1.2", "run.dataset_samples=590", "run.epochs=3" };
	CU_ASSERT_FATAL(capture_simulate(FLEET, lr, 3, "dbs", &c, &err) == LBS_OK);
	const int64_t kept[4] = { 15, 14, 14, 17 };
	CU_ASSERT(batches_are(&c, 9, kept));
	CU_ASSERT_EQUAL(c.n, 27);
	capture_free(&c);
}

static void test_static_proportional(void)
{
	capture c;
	lbs_error err;
	CU_ASSERT_FATAL(capture_simulate(FLEET, NULL, 0, "static-proportional", &c, &err) == LBS_OK);
	const int64_t prop[4] = { 10, 10, 10, 30 };
	int bad = 0;
	for (size_t k = 1; k < c.n; k++)
		bad += !batches_are(&c, k, prop) || !rel_eq(compute_of(&c, k), BALANCED);
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT(rel_eq(compute_of(&c, 0), 0.015)); /* the profiling iteration is even */
	capture_free(&c);
}

/* FLEET for 6 iterations, the fast worker's speed replayed from trace. */
static void traced_fleet(char *ini, size_t size, const char *trace)
{
	snprintf(ini, size,
		 "[run]\nglobal_batch = 60\niterations = 6\n[model]\ngradient = 1 MB\n"
		 "[network]\ntopology = ring\nbandwidth = 1 GB/s\nlatency = 10 us\n"
		 "[workers.slow]\ncount = 3\ndevice = cpu\ncost = linear\nper_sample = 1 ms\n"
		 "[workers.fast]\ncount = 1\ndevice = cpu\ncost = linear\nper_sample = 1 ms\n"
		 "trace_format = lbsim\ntrace = %s\ntrace_map = direct\n",
		 trace);
}

/* A warm-up that misreads the fleet: the fast worker runs at the others'
 * speed until 15.5 ms, past iteration 0's compute (15 ms) and before
 * iteration 1 starts (15 ms + AGG). A profile of iteration 0 sees four
 * equal speeds and keeps the even split for good; with skip_iterations = 1
 * iteration 0 is left out, iteration 1 (all at their real speeds: the
 * fast one's 15 samples in 5 ms) is profiled, and from iteration 2 the
 * shares are 10, 10, 10, 30. */
static void test_static_proportional_skip(void)
{
	char *trace = write_temp("# lbsim-trace 1\ntime_s,availability\n0,1\n0.0155,3\n");
	char ini[1024];
	traced_fleet(ini, sizeof ini, trace);
	const int64_t even[4] = { 15, 15, 15, 15 }, prop[4] = { 10, 10, 10, 30 };
	capture c;
	lbs_error err;
	CU_ASSERT_FATAL(capture_simulate(ini, NULL, 0, "static-proportional", &c, &err) == LBS_OK);
	CU_ASSERT_EQUAL_FATAL(c.n, 6);
	int bad = 0;
	for (size_t k = 0; k < c.n; k++)
		bad += !batches_are(&c, k, even);
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT(rel_eq(compute_of(&c, 0), 0.015));
	capture_free(&c);
	const char *skip[] = { "policy.static-proportional.skip_iterations=1" };
	CU_ASSERT_FATAL(capture_simulate(ini, skip, 1, "static-proportional", &c, &err) == LBS_OK);
	CU_ASSERT_EQUAL_FATAL(c.n, 6);
	bad = !batches_are(&c, 0, even) || !batches_are(&c, 1, even) || var_of(&c, 1, "profiled") != 0;
	for (size_t k = 2; k < c.n; k++)
		bad += !batches_are(&c, k, prop) || !rel_eq(compute_of(&c, k), BALANCED);
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT(rel_eq(compute_of(&c, 1), 0.015)); /* the slow ones' 15 samples */
	capture_free(&c);
	remove(trace);
	free(trace);
}

/* A stall in the profile: the fast worker (speed 3) runs at 1.5 through
 * iteration 1 alone (16.56 to 26.56 ms; back at 3 from 33.1 ms, before
 * iteration 2 starts at 33.12 ms). Three profiled iterations, its speeds
 * 3, 1.5, 3. The mean, 45 samples in 5 + 10 + 5 ms, says 2.25: shares
 * 60 x (1, 1, 1, 2.25) / 5.25 = 11.43 x 3 and 25.71, rounded by largest
 * remainder (ties to the lower worker) 12, 11, 11, 26. The median says 3:
 * 10, 10, 10, 30 from iteration 3. */
static void test_static_proportional_median(void)
{
	char *trace = write_temp("# lbsim-trace 1\ntime_s,availability\n0,3\n0.016,1.5\n0.0331,3\n");
	char ini[1024];
	traced_fleet(ini, sizeof ini, trace);
	const int64_t even[4] = { 15, 15, 15, 15 }, mean[4] = { 12, 11, 11, 26 }, prop[4] = { 10, 10, 10, 30 };
	const char *ov[] = { "policy.static-proportional.profile_iterations=3",
			     "policy.static-proportional.estimator=median" };
	for (size_t e = 1; e <= 2; e++) {
		capture c;
		lbs_error err;
		CU_ASSERT_FATAL(capture_simulate(ini, ov, e, "static-proportional", &c, &err) == LBS_OK);
		CU_ASSERT_EQUAL_FATAL(c.n, 6);
		CU_ASSERT(rel_eq(compute_of(&c, 1), 0.015));
		int bad = 0;
		for (size_t k = 0; k < c.n; k++)
			bad += !batches_are(&c, k, k < 3 ? even : e == 1 ? mean : prop);
		CU_ASSERT_EQUAL(bad, 0);
		capture_free(&c);
	}
	remove(trace);
	free(trace);
}

static void test_oracle_balanced(void)
{
	capture c;
	lbs_error err;
	CU_ASSERT_FATAL(capture_simulate(FLEET, NULL, 0, "oracle", &c, &err) == LBS_OK);
	const int64_t prop[4] = { 10, 10, 10, 30 };
	int bad = 0;
	for (size_t k = 0; k < c.n; k++)
		bad += !batches_are(&c, k, prop) || !rel_eq(compute_of(&c, k), BALANCED) ||
		       !rel_eq(var_of(&c, k, "bound_s"), BALANCED);
	CU_ASSERT_EQUAL(bad, 0);
	capture_free(&c);
}

/* LB-BSP (CPU) with the last-value predictor: the speeds measured in the
 * even first iteration are exact (1000, 1000, 1000, 3000 samples/s), so
 * from iteration 1 on the batches are proportional and the time balanced;
 * the predictions are recorded. */
static void test_lbbsp_cpu_proportional(void)
{
	const char *ov[] = { in_iterations[0], in_iterations[1], "run.iterations=20",
			     "policy.lbbsp-cpu.predictor=last" };
	capture c;
	lbs_error err;
	CU_ASSERT_FATAL(capture_simulate(FLEET, ov, 4, "lbbsp-cpu", &c, &err) == LBS_OK);
	const int64_t prop[4] = { 10, 10, 10, 30 };
	int bad = 0;
	for (size_t k = 1; k < c.n; k++)
		bad += !batches_are(&c, k, prop) || !rel_eq(compute_of(&c, k), BALANCED);
	CU_ASSERT_EQUAL(bad, 0);
	capture_free(&c);
	/* NARX warms up on EMA, then must still give the balanced split. */
	const char *narx[] = { in_iterations[0], in_iterations[1], "run.iterations=60" };
	CU_ASSERT_FATAL(capture_simulate(FLEET, narx, 3, "lbbsp-cpu", &c, &err) == LBS_OK);
	CU_ASSERT(batches_are(&c, 59, prop));
	/* Real times, so only their order is known: the slowest worker's
	 * learning, summed over iterations, grows, is positive once NARX has
	 * trained, and is at most all of the learning. */
	double learn = var_of(&c, 59, "learn_s"), par = var_of(&c, 59, "learn_parallel_s");
	CU_ASSERT(var_of(&c, 59, "trainings") > 0);
	CU_ASSERT(par > 0);
	CU_ASSERT(par <= learn);
	int decreasing = 0;
	for (size_t k = 1; k < c.n; k++)
		decreasing += var_of(&c, k, "learn_parallel_s") < var_of(&c, k - 1, "learn_parallel_s");
	CU_ASSERT_EQUAL(decreasing, 0);
	capture_free(&c);
}

/* LB-BSP (GPU) settles: from some iteration on it stops moving samples, and
 * the times it settled on are within its tolerance (5%). */
static void test_lbbsp_converges(void)
{
	capture c;
	lbs_error err;
	CU_ASSERT_FATAL(capture_simulate(FLEET, in_iterations, 3, "lbbsp-gpu", &c, &err) == LBS_OK);
	CU_ASSERT_EQUAL_FATAL(c.n, 400);
	size_t last_move = 0;
	for (size_t k = 1; k < c.n; k++)
		if (var_of(&c, k, "moves") != var_of(&c, k - 1, "moves"))
			last_move = k;
	printf("\n    lbbsp-gpu on speeds 1,1,1,3: last move at iteration %zu, %g moves, %g reversals, "
	       "batches %lld %lld %lld %lld\n", last_move, var_of(&c, c.n - 1, "moves"),
	       var_of(&c, c.n - 1, "reversals"), (long long)c.batch[(c.n - 1) * 4],
	       (long long)c.batch[(c.n - 1) * 4 + 1], (long long)c.batch[(c.n - 1) * 4 + 2],
	       (long long)c.batch[(c.n - 1) * 4 + 3]);
	CU_ASSERT(last_move > 0 && last_move < 200);
	CU_ASSERT(var_of(&c, c.n - 1, "imbalance") <= 0.05);
	/* Within tolerance of the balanced 10 ms: at worst 10 ms / 0.95. */
	CU_ASSERT(compute_of(&c, c.n - 1) <= BALANCED / 0.95 + 1e-12);
	CU_ASSERT(compute_of(&c, c.n - 1) >= BALANCED - 1e-12);
	capture_free(&c);
}

/* With one-sample chunks and free steals, work stealing approaches the
 * fluid optimum: never below 10 ms, within one slow sample (1 ms) of it. */
static void test_work_stealing_fluid(void)
{
	const char *ov[] = { in_iterations[0], in_iterations[1], "run.iterations=20",
			     "policy.work-stealing.chunk=1", "policy.work-stealing.steal_latency=0 s" };
	capture c;
	lbs_error err;
	CU_ASSERT_FATAL(capture_simulate(FLEET, ov, 5, "work-stealing", &c, &err) == LBS_OK);
	int bad = 0;
	for (size_t k = 0; k < c.n; k++) {
		double t = compute_of(&c, k);
		int64_t sum = 0;
		for (size_t i = 0; i < 4; i++)
			sum += c.batch[k * 4 + i];
		bad += t < BALANCED - 1e-12 || t > BALANCED + 0.001 + 1e-12 || sum != 60;
		bad += c.batch[k * 4 + 3] <= 15; /* the fast worker stole */
		bad += var_of(&c, k, "steals") < 1;
	}
	CU_ASSERT_EQUAL(bad, 0);
	capture_free(&c);
	/* A 100 ms steal latency makes it far slower than the static 15 ms. */
	const char *slow[] = { in_iterations[0], in_iterations[1], "run.iterations=5",
			       "policy.work-stealing.steal_latency=100 ms" };
	CU_ASSERT_FATAL(capture_simulate(FLEET, slow, 4, "work-stealing", &c, &err) == LBS_OK);
	CU_ASSERT(compute_of(&c, 0) > 0.1);
	capture_free(&c);
}

/* Mixed CPU/GPU fleet with noise: the oracle's total time is at most every
 * barrier-time policy's, and so is each iteration's compute time (noise and
 * availability do not depend on the policy here). Every plan keeps the
 * global batch and the memory caps. */
#define MIXED \
	"[run]\nglobal_batch = 203\niterations = 60\nseed = 9\n" \
	"[model]\ngradient = 4 MB\n" \
	"[network]\ntopology = ps\nbandwidth = 2 GB/s\nlatency = 50 us\n" \
	"[workers.cpu]\ncount = 3\ndevice = cpu\ncost = linear\nt0 = 3 ms\nper_sample = 2 ms\n" \
	"noise = lognormal\nnoise_sigma = 0.2\n" \
	"[workers.gpu]\ncount = 2\ndevice = gpu\ncost = piecewise\nt_flat = 30 ms\n" \
	"saturation_batch = 32\nper_sample = 0.4 ms\nmax_batch = 96\nnoise = uniform\nnoise_high = 30%\n" \
	"[workers.old]\ncount = 1\ndevice = gpu\ncost = piecewise\nt_flat = 90 ms\n" \
	"saturation_batch = 16\nper_sample = 3 ms\nmax_batch = 48\navailability = 0.7\n" \
	"[policy.dbs]\ninterval = 10\n"

static void test_oracle_is_a_lower_bound(void)
{
	static const char *policies[] = { "static", "static-proportional", "dbs", "lbbsp-gpu", "lbbsp-cpu" };
	static const int64_t caps[6] = { INT64_MAX, INT64_MAX, INT64_MAX, 96, 96, 48 };
	capture o, c;
	lbs_error err;
	CU_ASSERT_FATAL(capture_simulate(MIXED, NULL, 0, "oracle", &o, &err) == LBS_OK);
	for (size_t p = 0; p < sizeof policies / sizeof policies[0]; p++) {
		CU_ASSERT_FATAL(capture_simulate(MIXED, NULL, 0, policies[p], &c, &err) == LBS_OK);
		CU_ASSERT_EQUAL_FATAL(c.n, o.n);
		CU_ASSERT(o.sim_time_s <= c.sim_time_s);
		int bad = 0;
		for (size_t k = 0; k < c.n; k++) {
			bad += compute_of(&o, k) > compute_of(&c, k) * (1 + 1e-12);
			int64_t sum = 0;
			for (size_t i = 0; i < 6; i++) {
				sum += c.batch[k * 6 + i];
				bad += c.batch[k * 6 + i] < 0 || c.batch[k * 6 + i] > caps[i];
			}
			bad += sum != 203;
		}
		if (bad)
			fprintf(stderr, "\n    %s: %d violations\n", policies[p], bad);
		CU_ASSERT_EQUAL(bad, 0);
		capture_free(&c);
	}
	capture_free(&o);
}

/* The oracle is exact: no single-sample move between two workers lowers
 * an iteration's maximum (a local check of the global optimum). */
static void test_oracle_no_improving_move(void)
{
	/* One iteration of MIXED without noise: completion of b samples is the
	 * cost model's time over availability, computed here independently. */
	const char *ov[] = { "run.iterations=1", "workers.cpu.noise=", "workers.cpu.noise_sigma=",
			     "workers.gpu.noise=", "workers.gpu.noise_high=" };
	capture o;
	lbs_error err;
	CU_ASSERT_FATAL(capture_simulate(MIXED, ov, 5, "oracle", &o, &err) == LBS_OK);
	int64_t b[6];
	memcpy(b, o.batch, sizeof b);
	double t[6];
	for (int i = 0; i < 6; i++) {
		double x = (double)b[i];
		t[i] = b[i] == 0 ? 0
		       : i < 3   ? 0.003 + 0.002 * x
		       : i < 5   ? 0.030 + 0.0004 * fmax(0, x - 32)
				 : (0.090 + 0.003 * fmax(0, x - 16)) / 0.7;
	}
	double mx = 0;
	for (int i = 0; i < 6; i++)
		mx = fmax(mx, t[i]);
	CU_ASSERT(fabs(mx - compute_of(&o, 0)) <= 1e-12 * mx);
	/* Any worker at the maximum cannot shed a sample to another without
	 * that one reaching the maximum or beyond. */
	const int64_t caps[6] = { 1000, 1000, 1000, 96, 96, 48 };
	int improving = 0;
	for (int i = 0; i < 6; i++) {
		if (t[i] < mx || b[i] == 0)
			continue;
		for (int j = 0; j < 6; j++) {
			if (j == i || b[j] + 1 > caps[j])
				continue;
			double x = (double)(b[j] + 1);
			double tj = j < 3 ? 0.003 + 0.002 * x
				    : j < 5 ? 0.030 + 0.0004 * fmax(0, x - 32)
					    : (0.090 + 0.003 * fmax(0, x - 16)) / 0.7;
			int at_max = 0;
			for (int k = 0; k < 6; k++)
				at_max += k != i && t[k] >= mx;
			improving += tj < mx && at_max == 0;
		}
	}
	CU_ASSERT_EQUAL(improving, 0);
	capture_free(&o);
}

/* ---- workers given no samples ------------------------------------------ */

/* B = 2 < N = 3: the even split leaves worker 2 out, and worker 2 is the
 * fastest (availability 3: 300 samples/s, the others 100). */
#define IDLE \
	"[run]\nglobal_batch = 2\nepochs = 4\ndataset_samples = 20\n" \
	"[model]\ngradient = 1 MB\n[network]\ntopology = none\n" \
	"[workers.slow]\ncount = 2\ndevice = cpu\ncost = linear\nper_sample = 10 ms\n" \
	"[workers.fast]\ncount = 1\ndevice = cpu\ncost = linear\nper_sample = 10 ms\navailability = 3\n" \
	"[policy.lbbsp-cpu]\npredictor = last\nprobe_every = 5\n[policy.dbs]\nprobe_every = 5\n"

static int64_t batch_at(const capture *c, size_t k, size_t i) { return c->batch[k * c->n_workers + i]; }

/* lbbsp-cpu: iterations 0..4 split 1/1/0 (worker 2 unmeasured, weight 0);
 * at iteration 5 worker 2 has been idle 5 iterations and is probed with a
 * sample from worker 0; measured at 300/s it then takes the larger share,
 * 2 * 0.6 = 1.2 -> 1, in every later iteration. (Without probes it got
 * nothing in all 40.) dbs: epoch 0 (iterations 0..9) 1/1/0; at the
 * boundary worker 2, idle 10 >= 5 iterations, is probed (0/1/1); measured,
 * it keeps 1 of 2 from iteration 20 on (shares 0.4/0.4/1.2). */
static void test_idle_probed(void)
{
	capture c;
	lbs_error err;
	CU_ASSERT_FATAL(capture_simulate(IDLE, NULL, 0, "lbbsp-cpu", &c, &err) == LBS_OK);
	CU_ASSERT_EQUAL_FATAL(c.n, 40);
	int bad = 0;
	for (size_t k = 0; k < 40; k++)
		bad += batch_at(&c, k, 2) != (k < 5 ? 0 : 1);
	CU_ASSERT(batch_at(&c, 5, 0) == 0 && batch_at(&c, 5, 1) == 1);
	CU_ASSERT_EQUAL(bad, 0);
	capture_free(&c);

	CU_ASSERT_FATAL(capture_simulate(IDLE, NULL, 0, "dbs", &c, &err) == LBS_OK);
	CU_ASSERT_EQUAL_FATAL(c.n, 40);
	bad = 0;
	for (size_t k = 0; k < 40; k++)
		bad += batch_at(&c, k, 2) != (k < 10 ? 0 : 1);
	CU_ASSERT_EQUAL(bad, 0);
	capture_free(&c);

	/* static-proportional profiles until everyone is measured: iteration 0
	 * gives 1/1/0, iteration 1 the two least measured, 1/0/1 (worker 2, then
	 * worker 0 by index); then the speeds 100/100/300 give 0.4/0.4/1.2 ->
	 * 1/0/1 for good. Profiling only iteration 0 fixed 1/1/0. */
	CU_ASSERT_FATAL(capture_simulate(IDLE, NULL, 0, "static-proportional", &c, &err) == LBS_OK);
	bad = 0;
	for (size_t k = 1; k < 40; k++)
		bad += batch_at(&c, k, 0) != 1 || batch_at(&c, k, 1) != 0 || batch_at(&c, k, 2) != 1;
	CU_ASSERT(batch_at(&c, 0, 0) == 1 && batch_at(&c, 0, 1) == 1 && batch_at(&c, 0, 2) == 0);
	CU_ASSERT_EQUAL(bad, 0);
	capture_free(&c);
}

/* lbbsp-cpu after probing the slower worker: a (3 ms a sample) and b (1 ms),
 * B = 1, 400 iterations. Iteration 0 gives the sample to a (the even split's
 * first); b is probed at iteration 100 (idle 100 iterations) and, measured
 * at 1000/s against a's 333/s, keeps it. a, idle from iteration 100, is
 * probed at 200 and 301, and b takes the sample back at once: b holds it in
 * 298 of iterations 100..399. The policy counted a worker's idle
 * iterations from the plan it had just written over the last batches
 * (obs->batch is the batch[] it fills), so a probed worker never counted as
 * measured and was probed again at every barrier: b held the sample only in
 * iterations 100..199. */
#define PROBED \
	"[run]\nglobal_batch = 1\niterations = 400\n" \
	"[model]\ngradient = 1 MB\n[network]\ntopology = none\n" \
	"[workers.a]\ncount = 1\ndevice = cpu\ncost = linear\nper_sample = 3 ms\n" \
	"[workers.b]\ncount = 1\ndevice = cpu\ncost = linear\nper_sample = 1 ms\n"

static void test_lbbsp_cpu_probe_keeps_fast(void)
{
	static const char *predictors[] = { "policy.lbbsp-cpu.predictor=last", NULL };
	for (size_t p = 0; p < 2; p++) {
		capture c;
		lbs_error err;
		CU_ASSERT_FATAL(capture_simulate(PROBED, predictors + p, predictors[p] ? 1 : 0, "lbbsp-cpu",
						 &c, &err) == LBS_OK);
		CU_ASSERT_EQUAL_FATAL(c.n, 400);
		size_t fast = 0, bad = 0;
		for (size_t k = 100; k < 400; k++) {
			fast += batch_at(&c, k, 1) == 1;
			bad += batch_at(&c, k, 1) != (k == 200 || k == 301 ? 0 : 1);
		}
		CU_ASSERT(fast >= 285); /* >= 95% of iterations 100..399 */
		if (!predictors[p]) /* NARX: only the share is asserted */
			bad = 0;
		CU_ASSERT_EQUAL(bad, 0);
		capture_free(&c);
	}
}

/* lbbsp-gpu with a worker it has emptied: a (flat 10 ms) and b (flat 1 s),
 * B = 8, window 5, step 1. b gives a sample at each window end: 4/4, then
 * 5/3 at iteration 5, ... 8/0 at iteration 20. b, at 0, took no time but is
 * no leader: nothing moves (before, it looked fastest and got a sample
 * back for a whole window, again and again). With probe_every = 50 it is
 * probed with one sample at iteration 70 (idle 50 iterations), is the
 * slowest, and gives it back at once; again at 121, 172, 223, 274: b has
 * samples in iterations 0..19 and those 5, 25 of 300. */
static void test_lbbsp_gpu_idle(void)
{
	capture c;
	lbs_error err;
	CU_ASSERT_FATAL(capture_simulate("[run]\nglobal_batch = 8\niterations = 300\n"
					 "[model]\ngradient = 1 MB\n[network]\ntopology = none\n"
					 "[workers.a]\ncount = 1\ndevice = gpu\ncost = piecewise\nt_flat = 10 ms\n"
					 "saturation_batch = 64\nper_sample = 0.1 ms\nmax_batch = 64\n"
					 "[workers.b]\ncount = 1\ndevice = gpu\ncost = piecewise\nt_flat = 1 s\n"
					 "saturation_batch = 64\nper_sample = 0.1 ms\nmax_batch = 64\n"
					 "[policy.lbbsp-gpu]\nprobe_every = 50\n",
					 NULL, 0, "lbbsp-gpu", &c, &err) == LBS_OK);
	CU_ASSERT_EQUAL_FATAL(c.n, 300);
	int bad = 0, with = 0;
	for (size_t k = 0; k < 300; k++) {
		bool probe = k == 70 || k == 121 || k == 172 || k == 223 || k == 274;
		int64_t want = k < 20 ? 4 - (int64_t)k / 5 : probe ? 1 : 0;
		bad += batch_at(&c, k, 1) != want;
		with += batch_at(&c, k, 1) > 0;
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_EQUAL(with, 25);
	capture_free(&c);
}

/* The oracle over the power and quadratic kinds (it bisects each worker's
 * finish time over integer batches, which needs t(b) non-decreasing):
 * p takes b^2 ms, q 10 ms + b ms + 0.5 b^2 ms, B = 30. By hand: p 13, q 17
 * gives max(169, 10 + 17 + 144.5) = 171.5 ms; p 14, q 16 gives 196 ms; p 12,
 * q 18 gives 190 ms: 13/17 is the unique best split. */
static void test_oracle_power_quadratic(void)
{
	capture c;
	lbs_error err;
	CU_ASSERT_FATAL(capture_simulate("[run]\nglobal_batch = 30\niterations = 3\n"
					 "[model]\ngradient = 1 MB\n[network]\ntopology = none\n"
					 "[workers.p]\ncount = 1\ndevice = gpu\ncost = power\nper_sample = 1 ms\n"
					 "exponent = 2\n"
					 "[workers.q]\ncount = 1\ndevice = gpu\ncost = quadratic\nt0 = 10 ms\n"
					 "per_sample = 1 ms\nper_sample_sq = 0.5 ms\n",
					 NULL, 0, "oracle", &c, &err) == LBS_OK);
	const int64_t want[2] = { 13, 17 };
	int bad = 0;
	for (size_t k = 0; k < c.n; k++)
		bad += !batches_are(&c, k, want) || !rel_eq(compute_of(&c, k), 0.1715);
	CU_ASSERT_EQUAL(bad, 0);
	capture_free(&c);
}

/* ---- re-sizing costs: quantum and resize_cost -------------------------- */

static bool all_eq(const int64_t *a, const int64_t *b, size_t n)
{
	return !memcmp(a, b, n * sizeof *a);
}

/* lbs_quantise by hand (the header's example and its cases). */
static void test_quantise_by_hand(void)
{
	const int64_t none[3] = { INT64_MAX, INT64_MAX, INT64_MAX };
	/* 30 in quanta of 8: R = 6, U = 3; holder worker 0 (13); weights
	 * 7/10/7 -> 0.875/1.25/0.875 -> floors 0/1/0, the two quanta left to
	 * the fractions 0.875 (workers 0 then 2): 1/1/1 -> 14/8/8. */
	int64_t b[3] = { 13, 10, 7 };
	CU_ASSERT(lbs_quantise(30, 3, 8, NULL, b));
	CU_ASSERT(all_eq(b, (int64_t[]){ 14, 8, 8 }, 3));
	/* Already of that form: unchanged. */
	CU_ASSERT(lbs_quantise(30, 3, 8, none, b));
	CU_ASSERT(all_eq(b, (int64_t[]){ 14, 8, 8 }, 3));
	/* Worker 2 capped at 7 (room 0 quanta): 3 quanta over 7/10 ->
	 * 1.235/1.765 -> 1/1, the last to 0.765: 1/2/0 -> 14/16/0. */
	int64_t c7[3] = { INT64_MAX, INT64_MAX, 7 };
	int64_t d[3] = { 13, 10, 7 };
	CU_ASSERT(lbs_quantise(30, 3, 8, c7, d));
	CU_ASSERT(all_eq(d, (int64_t[]){ 14, 16, 0 }, 3));
	/* The remainder goes to the largest batch wherever it is: 5/20/5 ->
	 * holder 1, weights 5/14/5 -> 0.625/1.75/0.625 -> 0/1/0, then 0.75
	 * (worker 1) and 0.625 (worker 0): 1/2/0 -> 8/22/0. */
	int64_t e[3] = { 5, 20, 5 };
	CU_ASSERT(lbs_quantise(30, 3, 8, NULL, e));
	CU_ASSERT(all_eq(e, (int64_t[]){ 8, 22, 0 }, 3));
	/* Caps 12/12/15, plan 12/12/6: neither 12 can hold R = 6 and leave
	 * room for 3 quanta (0 + 1 + 1), worker 2 can (1 + 1 + 1): it holds R.
	 * Workers 0 and 1 fill their room (1 quantum each) and the third
	 * quantum goes to worker 2, whom the plan gave less: 8/8/14. */
	int64_t c12[3] = { 12, 12, 15 }, f[3] = { 12, 12, 6 };
	CU_ASSERT(lbs_quantise(30, 3, 8, c12, f));
	CU_ASSERT(all_eq(f, (int64_t[]){ 8, 8, 14 }, 3));
	/* Caps 12/12/8: no worker can; refused, the plan left as it was. */
	int64_t c8[3] = { 12, 12, 8 }, g[3] = { 12, 12, 6 };
	CU_ASSERT_FALSE(lbs_quantum_fits(30, 3, 8, c8));
	CU_ASSERT_FALSE(lbs_quantise(30, 3, 8, c8, g));
	CU_ASSERT(all_eq(g, (int64_t[]){ 12, 12, 6 }, 3));
	CU_ASSERT(lbs_quantum_fits(30, 3, 8, c12));
	/* quantum 1 changes nothing; a quantum that divides the total has no
	 * holder: 64 in quanta of 16 over 30/20/14 -> 1.875/1.25/0.875 ->
	 * 1/1/0, the two quanta left to workers 0 and 2 (0.875 each):
	 * 2/1/1 -> 32/16/16. */
	int64_t h[3] = { 13, 10, 7 };
	CU_ASSERT(lbs_quantise(30, 3, 1, NULL, h));
	CU_ASSERT(all_eq(h, (int64_t[]){ 13, 10, 7 }, 3));
	int64_t k[3] = { 30, 20, 14 };
	CU_ASSERT(lbs_quantise(64, 3, 16, NULL, k));
	CU_ASSERT(all_eq(k, (int64_t[]){ 32, 16, 16 }, 3));
}

/* Over many random plans: sums kept, caps kept, at most one batch off the
 * multiples of q and that one off by exactly R, and the holder is the
 * largest batch of the plan whenever that worker can be. */
static void test_quantise_invariants(void)
{
	uint64_t x = 12345;
	int bad = 0, done = 0;
	for (int t = 0; t < 2000; t++) {
		int64_t caps[7], plan[7], out[7];
		double w[7];
		x = x * 6364136223846793005u + 1442695040888963407u;
		size_t n = 1 + (size_t)(x >> 60) % 7;
		int64_t total = 1 + (int64_t)((x >> 20) % 300), q = 1 + (int64_t)((x >> 40) % 40);
		for (size_t i = 0; i < n; i++) {
			x = x * 6364136223846793005u + 1442695040888963407u;
			caps[i] = (x >> 33) % 4 ? INT64_MAX : (int64_t)((x >> 13) % 200);
			w[i] = (double)((x >> 50) % 5);
		}
		if (!lbs_split_proportional(total, n, w, caps, plan))
			continue;
		memcpy(out, plan, sizeof out);
		bool fits = lbs_quantum_fits(total, n, q, caps);
		bool ok = lbs_quantise(total, n, q, caps, out);
		bad += ok != fits;
		if (!ok) {
			bad += !all_eq(out, plan, n);
			continue;
		}
		done++;
		int64_t sum = 0, R = total % q;
		size_t off = 0, holder = n;
		for (size_t i = 0; i < n; i++) {
			sum += out[i];
			bad += out[i] < 0 || out[i] > caps[i];
			if (out[i] % q) {
				off++;
				holder = i;
				bad += out[i] % q != R;
			}
		}
		bad += sum != total || off > 1;
		/* The plan's largest (first on ties) holds R if it can: its cap
		 * holds R and the rest have room (uncapped plans: always). */
		size_t big = 0;
		for (size_t i = 1; i < n; i++)
			big = plan[i] > plan[big] ? i : big;
		bool uncapped = true;
		for (size_t i = 0; i < n; i++)
			uncapped &= caps[i] == INT64_MAX;
		if (uncapped && R)
			bad += holder != big;
	}
	CU_ASSERT(done > 1000);
	CU_ASSERT_EQUAL(bad, 0);
}

/* lbs_resize_gain by hand (lbbsp-cpu's comment): speeds 1000 and 800/s,
 * 50/50 take 50 and 62.5 ms; 56/44 take 56 and 55 ms, times 1.1: 61.6 ms,
 * a gain of 0.9 ms; times 1.2: 67.2 ms, a loss of 4.7 ms. A worker whose
 * batch stays pays nothing; one at 0 takes no time whatever its speed. */
static void test_resize_gain(void)
{
	const double tau[2] = { 1e-3, 1.25e-3 };
	const int64_t cur[2] = { 50, 50 }, plan[2] = { 56, 44 };
	CU_ASSERT(fabs(lbs_resize_gain(2, cur, plan, tau, 0.1, 1) - 0.0009) < 1e-15);
	CU_ASSERT(fabs(lbs_resize_gain(2, cur, plan, tau, 0.2, 1) + 0.0047) < 1e-15);
	CU_ASSERT(fabs(lbs_resize_gain(2, cur, plan, tau, 0.0, 1) - 0.0065) < 1e-15);
	const int64_t keep[2] = { 50, 44 };
	CU_ASSERT(fabs(lbs_resize_gain(2, cur, keep, tau, 1.0, 1) - (0.0625 - 0.11)) < 1e-15);
	/* Over a horizon the saving (62.5 - 56 = 6.5 ms an iteration) counts
	 * that many times, the cost (67.2 - 56 = 11.2 ms at 0.2) once: over 2
	 * iterations 13 - 11.2 = +1.8 ms, over 1.5 9.75 - 11.2 = -1.45 ms. */
	CU_ASSERT(fabs(lbs_resize_gain(2, cur, plan, tau, 0.2, 2) - 0.0018) < 1e-15);
	CU_ASSERT(fabs(lbs_resize_gain(2, cur, plan, tau, 0.2, 1.5) + 0.00145) < 1e-15);
	const double unknown[2] = { 1e-3, INFINITY };
	const int64_t drop[2] = { 100, 0 };
	/* Keeping a worker of unknown time: the gain is infinite, whatever the
	 * plan (never NaN, which no policy variable may be). */
	CU_ASSERT(isinf(lbs_resize_gain(2, cur, drop, unknown, 0.5, 1)) && lbs_resize_gain(2, cur, drop, unknown, 0.5, 1) > 0);
	CU_ASSERT(isinf(lbs_resize_gain(2, cur, cur, unknown, 0.5, 1)) && lbs_resize_gain(2, cur, cur, unknown, 0.5, 1) > 0);
	const int64_t gone[2] = { 100, 0 }, back[2] = { 50, 50 };
	CU_ASSERT(isinf(lbs_resize_gain(2, gone, back, unknown, 0.5, 1)) && lbs_resize_gain(2, gone, back, unknown, 0.5, 1) < 0);
}

/* Hysteresis at the barrier, on FLEET (speeds 1, 1, 1, 3; B = 60): the even
 * 15 each take 15 ms; 10/10/10/30 would take 10 ms each, every worker
 * re-sized: 14.5 ms with resize_cost 0.45 (gain 0.5 ms: adopted), 15.5 ms
 * with 0.55 (0.5 ms lost: the even split is kept). lbbsp-cpu (predictor
 * last) decides at every barrier from iteration 1, dbs at each epoch
 * boundary (iterations 10, 20, 30, 40). */
static void test_resize_cost_fleet(void)
{
	const int64_t even[4] = { 15, 15, 15, 15 }, prop[4] = { 10, 10, 10, 30 };
	capture c;
	lbs_error err;
	for (int adopt = 0; adopt < 2; adopt++) {
		const char *cpu[] = { in_iterations[0], in_iterations[1], "run.iterations=20",
				      "policy.lbbsp-cpu.predictor=last",
				      adopt ? "policy.lbbsp-cpu.resize_cost=0.45" : "policy.lbbsp-cpu.resize_cost=55%" };
		CU_ASSERT_FATAL(capture_simulate(FLEET, cpu, 5, "lbbsp-cpu", &c, &err) == LBS_OK);
		int bad = 0;
		for (size_t k = 1; k < c.n; k++) {
			bad += !batches_are(&c, k, adopt ? prop : even);
			bad += var_of(&c, k, "kept") != (adopt ? 0 : (double)k);
			/* gain_s: the last plan's, 0 once it is the batches that ran */
			bad += fabs(var_of(&c, k, "gain_s") - (adopt ? (k == 1 ? 0.0005 : 0.0) : -0.0005)) > 1e-12;
		}
		bad += !rel_eq(compute_of(&c, c.n - 1), adopt ? BALANCED : 0.015);
		CU_ASSERT_EQUAL(bad, 0);
		capture_free(&c);

		const char *dbs[] = { adopt ? "policy.dbs.resize_cost=0.45" : "policy.dbs.resize_cost=0.55" };
		CU_ASSERT_FATAL(capture_simulate(FLEET, dbs, 1, "dbs", &c, &err) == LBS_OK);
		CU_ASSERT_EQUAL_FATAL(c.n, 50);
		bad = 0;
		for (size_t k = 0; k < c.n; k++) {
			bad += !batches_are(&c, k, k < 10 || !adopt ? even : prop);
			bad += var_of(&c, k, "kept") != (adopt ? 0.0 : (double)(k / 10));
			bad += var_of(&c, k, "rebalances") != (double)(k / 10);
		}
		bad += fabs(var_of(&c, 10, "gain_s") - (adopt ? 0.0005 : -0.0005)) > 1e-12;
		CU_ASSERT_EQUAL(bad, 0);
		capture_free(&c);
	}
	/* Off (the default), neither records kept nor gain_s. */
	const char *off[] = { in_iterations[0], in_iterations[1], "run.iterations=3", "policy.lbbsp-cpu.predictor=last" };
	CU_ASSERT_FATAL(capture_simulate(FLEET, off, 4, "lbbsp-cpu", &c, &err) == LBS_OK);
	CU_ASSERT(isnan(var_of(&c, 2, "kept")) && isnan(var_of(&c, 2, "gain_s")));
	capture_free(&c);
}

/* lbbsp-gpu's move is made only if it pays: a at 2.5 ms a sample, b at
 * 1.5 ms, B = 80, step 8, window 5. 40/40 take 100 and 60 ms; the move to
 * 32/48 takes 80 and 72 ms, re-sized: 92 ms with resize_cost 0.15 (made),
 * 104 ms with 0.3 (declined: 40/40 for good). After it, 24/56 (60 and
 * 84 ms) would cost 96.6 ms against 80: declined at every later window. */
#define TWO \
	"[run]\nglobal_batch = 80\niterations = 60\n" \
	"[model]\ngradient = 1 MB\n[network]\ntopology = none\n" \
	"[workers.a]\ncount = 1\ndevice = cpu\ncost = linear\nper_sample = 2.5 ms\n" \
	"[workers.b]\ncount = 1\ndevice = cpu\ncost = linear\nper_sample = 1.5 ms\n" \
	"[policy.lbbsp-gpu]\nstep = 8\n"

static void test_resize_cost_lbbsp_gpu(void)
{
	capture c;
	lbs_error err;
	for (int adopt = 0; adopt < 2; adopt++) {
		const char *ov[] = { adopt ? "policy.lbbsp-gpu.resize_cost=15%" : "policy.lbbsp-gpu.resize_cost=0.3" };
		CU_ASSERT_FATAL(capture_simulate(TWO, ov, 1, "lbbsp-gpu", &c, &err) == LBS_OK);
		CU_ASSERT_EQUAL_FATAL(c.n, 60);
		int bad = 0;
		for (size_t k = 0; k < c.n; k++) {
			bool moved = adopt && k >= 5;
			bad += batch_at(&c, k, 0) != (moved ? 32 : 40) || batch_at(&c, k, 1) != (moved ? 48 : 40);
			/* window ends at 5, 10, ..., 55: the first made (adopt) */
			double ends = (double)(k / 5);
			bad += var_of(&c, k, "kept") != (adopt ? (ends > 0 ? ends - 1 : 0) : ends);
			bad += var_of(&c, k, "moves") != (adopt && k >= 5 ? 1.0 : 0.0);
			bad += var_of(&c, k, "step") != 8.0 || var_of(&c, k, "reversals") != 0.0;
		}
		CU_ASSERT_EQUAL(bad, 0);
		capture_free(&c);
	}
	/* Without the option the search goes on (and reverses). */
	CU_ASSERT_FATAL(capture_simulate(TWO, NULL, 0, "lbbsp-gpu", &c, &err) == LBS_OK);
	CU_ASSERT(var_of(&c, c.n - 1, "moves") > 1 && var_of(&c, c.n - 1, "reversals") > 0);
	CU_ASSERT(isnan(var_of(&c, c.n - 1, "kept")));
	capture_free(&c);
}

/* quantum = 8 on FLEET (B = 60: R = 4, U = 7). The even 15 each become
 * 12/16/16/16 (holder worker 0, the first of the largest; weights 11/15/15/15
 * share 7 quanta as 1.375/1.875 x 3 -> 1/2/2/2). lbbsp-cpu's and dbs's
 * 10/10/10/30 become 16/8/8/28 (holder worker 3; weights 10/10/10/26 ->
 * 1.25 x 3/3.25 -> floors 1/1/1/3, the last quantum to the first of the
 * equal fractions, worker 0). Composed with resize_cost 1%: 16/8/8/28
 * takes 16 ms as 12/16/16/16 does, and re-sized 16.16 ms: declined, so
 * rounding first can leave nothing worth re-sizing for. */
static void test_quantum_fleet(void)
{
	const int64_t even[4] = { 12, 16, 16, 16 }, prop[4] = { 16, 8, 8, 28 };
	capture c;
	lbs_error err;
	const char *cpu[] = { in_iterations[0], in_iterations[1], "run.iterations=20",
			      "policy.lbbsp-cpu.predictor=last", "policy.lbbsp-cpu.quantum=8",
			      "policy.lbbsp-cpu.resize_cost=1%" };
	for (size_t nov = 5; nov <= 6; nov++) {
		CU_ASSERT_FATAL(capture_simulate(FLEET, cpu, nov, "lbbsp-cpu", &c, &err) == LBS_OK);
		int bad = !batches_are(&c, 0, even);
		for (size_t k = 1; k < c.n; k++)
			bad += !batches_are(&c, k, nov == 5 ? prop : even);
		if (nov == 6)
			bad += var_of(&c, c.n - 1, "kept") != (double)(c.n - 1);
		CU_ASSERT_EQUAL(bad, 0);
		capture_free(&c);
	}
	const char *dbs[] = { "policy.dbs.quantum=8" };
	CU_ASSERT_FATAL(capture_simulate(FLEET, dbs, 1, "dbs", &c, &err) == LBS_OK);
	int bad = 0;
	for (size_t k = 0; k < c.n; k++)
		bad += !batches_are(&c, k, k < 10 ? even : prop);
	CU_ASSERT_EQUAL(bad, 0);
	capture_free(&c);
	/* lbbsp-gpu: the step, max(1, 60 / 16) = 3, becomes one quantum, 8:
	 * every batch it runs is a multiple of 8 but one, at 8k + 4. */
	const char *gpu[] = { in_iterations[0], in_iterations[1], "run.iterations=200",
			      "policy.lbbsp-gpu.quantum=8" };
	CU_ASSERT_FATAL(capture_simulate(FLEET, gpu, 4, "lbbsp-gpu", &c, &err) == LBS_OK);
	bad = 0;
	for (size_t k = 0; k < c.n; k++) {
		int wrong = 0, held = 0;
		for (size_t i = 0; i < 4; i++) {
			int64_t r = batch_at(&c, k, i) % 8;
			wrong += r != 0 && r != 4;
			held += r == 4;
		}
		bad += wrong || held != 1 || var_of(&c, k, "step") != 8.0;
	}
	CU_ASSERT(batches_are(&c, 0, even));
	CU_ASSERT(var_of(&c, c.n - 1, "moves") > 0);
	CU_ASSERT_EQUAL(bad, 0);
	capture_free(&c);
}

/* Probes give a quantum: IDLE (B = 2, N = 3) with quantum 2 gives worker 0
 * both samples (R = 0; 1/1/0 shares 1 quantum as 0.5/0.5/0: worker 0);
 * lbbsp-cpu then probes worker 1 and 2 with 2 samples each, in turn. */
static void test_quantum_probes(void)
{
	const char *ov[] = { "policy.lbbsp-cpu.quantum=2" };
	capture c;
	lbs_error err;
	CU_ASSERT_FATAL(capture_simulate(IDLE, ov, 1, "lbbsp-cpu", &c, &err) == LBS_OK);
	int bad = 0, probed = 0;
	for (size_t k = 0; k < c.n; k++) {
		int64_t held = 0;
		for (size_t i = 0; i < 3; i++) {
			bad += batch_at(&c, k, i) != 0 && batch_at(&c, k, i) != 2;
			held += batch_at(&c, k, i) == 2;
		}
		bad += held != 1;
		probed += batch_at(&c, k, 2) == 2;
	}
	CU_ASSERT(batch_at(&c, 0, 0) == 2);
	CU_ASSERT(probed > 0);
	CU_ASSERT_EQUAL(bad, 0);
	capture_free(&c);
}

/* Bad values are refused, the message naming the key. */
static void test_resize_options_refused(void)
{
	static const char *cases[][2] = {
		{ "policy.lbbsp-cpu.resize_cost=-0.1", "resize_cost" },
		{ "policy.dbs.resize_cost=much", "resize_cost" },
		{ "policy.lbbsp-gpu.resize_cost=101", "resize_cost" },
		{ "policy.lbbsp-cpu.quantum=0", "quantum" },
		{ "policy.dbs.quantum=2.5", "quantum" },
		{ "policy.lbbsp-gpu.quantum=61", "quantum" },
	};
	static const char *policy[] = { "lbbsp-cpu", "dbs", "lbbsp-gpu", "lbbsp-cpu", "dbs", "lbbsp-gpu" };
	for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
		capture c;
		lbs_error err = { 0 };
		CU_ASSERT_EQUAL(capture_simulate(FLEET, cases[t], 1, policy[t], &c, &err), LBS_EINPUT);
		if (!strstr(err.msg, cases[t][1]))
			fprintf(stderr, "\n    %s: %s\n", cases[t][0], err.msg);
		CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, cases[t][1]));
		capture_free(&c);
	}
	/* More than B (60), and caps that cannot hold B in quanta: two workers
	 * capped at 20 and 45, quantum 16: R = 12, U = 3; holding 12, the 45
	 * leaves 2 quanta (33) and the 20 one (16): 3, so 16 fits; with 24,
	 * R = 12, U = 2: 45 - 12 = 33 -> 1 quantum, 20 -> 0: refused. */
	const char *text = "[run]\nglobal_batch = 60\niterations = 3\n[model]\ngradient = 1 MB\n"
			   "[network]\ntopology = none\n"
			   "[workers.a]\ncount = 1\ndevice = cpu\ncost = linear\nper_sample = 1 ms\nmax_batch = 20\n"
			   "[workers.b]\ncount = 1\ndevice = cpu\ncost = linear\nper_sample = 1 ms\nmax_batch = 45\n";
	capture c;
	lbs_error err = { 0 };
	const char *more[] = { "policy.dbs.quantum=61", "policy.dbs.interval=1" };
	CU_ASSERT_EQUAL(capture_simulate(text, more, 2, "dbs", &c, &err), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "policy.dbs.quantum"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "more than the global batch"));
	capture_free(&c);
	const char *q16[] = { "policy.lbbsp-cpu.quantum=16", "policy.lbbsp-cpu.predictor=last" };
	CU_ASSERT_EQUAL(capture_simulate(text, q16, 2, "lbbsp-cpu", &c, &err), LBS_OK);
	capture_free(&c);
	const char *q24[] = { "policy.lbbsp-cpu.quantum=24" };
	CU_ASSERT_EQUAL(capture_simulate(text, q24, 1, "lbbsp-cpu", &c, &err), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "quantum"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "memory caps"));
	capture_free(&c);
}

void suite_policy(void)
{
	static const test_case tests[] = {
		{ "dbs: proportional after one epoch", test_dbs_one_epoch },
		{ "dbs: the authors' rounding", test_dbs_authors_rounding },
		{ "static-proportional: balanced time", test_static_proportional },
		{ "static-proportional: a warm-up left out of the profile", test_static_proportional_skip },
		{ "static-proportional: the median speed, past a stall", test_static_proportional_median },
		{ "oracle: balanced time", test_oracle_balanced },
		{ "oracle: power and quadratic costs", test_oracle_power_quadratic },
		{ "lbbsp-gpu: converges", test_lbbsp_converges },
		{ "lbbsp-cpu: proportional to measured speed", test_lbbsp_cpu_proportional },
		{ "work-stealing: fluid limit, latency cost", test_work_stealing_fluid },
		{ "oracle <= barrier-time policies", test_oracle_is_a_lower_bound },
		{ "oracle: no improving move", test_oracle_no_improving_move },
		{ "idle workers are probed (lbbsp-cpu, dbs, static-proportional)", test_idle_probed },
		{ "lbbsp-gpu: an emptied worker is no leader, and is probed", test_lbbsp_gpu_idle },
		{ "lbbsp-cpu: a probed slower worker gives the sample back", test_lbbsp_cpu_probe_keeps_fast },
		{ "quantum: rounding by hand", test_quantise_by_hand },
		{ "quantum: sums, caps, one remainder holder", test_quantise_invariants },
		{ "resize_cost: predicted gain by hand", test_resize_gain },
		{ "resize_cost: lbbsp-cpu and dbs keep or adopt", test_resize_cost_fleet },
		{ "resize_cost: lbbsp-gpu moves only when it pays", test_resize_cost_lbbsp_gpu },
		{ "quantum: lbbsp-cpu, dbs, lbbsp-gpu, and with resize_cost", test_quantum_fleet },
		{ "quantum: probes give a quantum", test_quantum_probes },
		{ "resize_cost and quantum: bad values refused", test_resize_options_refused },
	};
	add_suite("policy", tests, sizeof tests / sizeof tests[0]);
}
