/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The hybrid-parallel simulation (hybrid/hybrid.h) against schedules worked
 * out by hand: the pipeline bubbles of GPipe, 1F1B and interleaved 1F1B in
 * closed form, a slow stage, a slow replica, a gradient reduction that
 * overlaps the backward pass, and the simulated trace read back by the
 * what-if analysis (whatif/), whose replay must give the simulated step. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hybrid/hybrid.h"
#include "hybrid/scenario.h"
#include "models/calib/gpu_fit.h"
#include "models/gpu.h"
#include "models/nets.h"
#include "tests/unit/hybrid_plan.h"
#include "tests/unit/suites.h"
#include "traces/read_ops.h"
#include "traces/reader.h"
#include "util/rng.h"
#include "whatif/whatif.h"

/* Runs one step of pl with the micro-batches' lengths `ratio` (d x m). */
static double run_lengths(const lbs_hy_plan *pl, const double *ratio)
{
	lbs_error err = { 0 };
	lbs_hy_graph gr;
	lbs_hy_sim sim;
	CU_ASSERT_FATAL(lbs_hy_graph_build(&gr, pl, &err) == LBS_OK);
	CU_ASSERT_FATAL(lbs_hy_sim_create(&sim, &gr, &err) == LBS_OK);
	sim.length_ratio = ratio;
	double step = NAN;
	CU_ASSERT_FATAL(lbs_hy_sim_step(&sim, &step, &err) == LBS_OK);
	lbs_hy_sim_destroy(&sim);
	lbs_hy_graph_free(&gr);
	return step;
}

/* Data-dependent costs, by hand: a forward of 1 s of which 0.5 s is
 * attention, a backward of 2 s of which 1 s, micro-batches at half and
 * twice the plan's length. A micro-batch at rho takes (w - a) rho + a
 * rho^2: forward 0.375 s and 3 s, backward 0.75 s and 6 s.
 * - One stage, GPipe, with 0.2 s of tensor-parallel collectives a forward
 *   (scaled by rho: 0.1 s and 0.4 s): 0.475 + 3.4 + 0.75 + 6 = 10.625 s
 *   (6.4 s at the plan's length, and the same, bit for bit, with every
 *   ratio 1).
 * - Two stages, 1F1B, no communication: stage 1 runs F0 0.375-0.75, B0
 *   0.75-1.5, F1 once stage 0's F1 ends (0.375 + 3 = 3.375) to 6.375, B1
 *   to 12.375; stage 0 runs B0 3.375-4.125 and B1 after stage 1's,
 *   12.375-18.375: 18.375 s. */
static void test_lengths(void)
{
	test_plan tp;
	test_plan_init(&tp, 1, 1, 1, 2, LBS_HY_GPIPE, 1, 2);
	double att[4] = { 0.5, 0.5, 1, 1 };
	tp.pl.fwd_att_s = att;
	tp.pl.bwd_att_s = att + 2;
	tp.pl.fwd_fixed_s[0] = 0.2;
	double ratio[2] = { 0.5, 2 }, ones[2] = { 1, 1 };
	CU_ASSERT_DOUBLE_EQUAL(run_lengths(&tp.pl, ratio), 10.625, 1e-12);
	double nominal = run_lengths(&tp.pl, NULL);
	CU_ASSERT_DOUBLE_EQUAL(nominal, 6.4, 1e-12);
	CU_ASSERT_EQUAL(run_lengths(&tp.pl, ones), nominal);

	test_plan_init(&tp, 1, 2, 1, 2, LBS_HY_1F1B, 1, 2);
	tp.pl.fwd_att_s = att;
	tp.pl.bwd_att_s = att + 2;
	CU_ASSERT_DOUBLE_EQUAL(run_lengths(&tp.pl, ratio), 18.375, 1e-12);
	/* an attention share above the compute is refused */
	att[0] = 1.5;
	lbs_error err = { 0 };
	lbs_hy_graph gr;
	CU_ASSERT(lbs_hy_graph_build(&gr, &tp.pl, &err) == LBS_EINPUT);
}

static int cmp_doubles(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

/* The lengths drawn for the micro-batches (lbs_hy_lengths_draw): fixed
 * at the model's length, ratio 1; uniform integers from 3 to 5 of 8
 * tokens, each a third of 30,000 draws (a binomial's standard deviation
 * is 0.0027 of them: within 0.02); a file's two lengths, and the tokens
 * returned their sum; a lognormal's sample median near its median (the
 * median of 20,001 draws: its standard error is 1.25 sigma / sqrt(n) =
 * 0.44% of it in the log, within 2%), and every draw clamped to the
 * sequence length; the same stream, the same draws. */
static void test_length_draws(void)
{
	lbs_error err = { 0 };
	gsl_rng *r = lbs_rng_stream(7, "test", "lengths", 0, &err);
	CU_ASSERT_FATAL(r != NULL);
	enum { N = 30000 };
	static double ratio[N];
	lbs_hy_lengths_spec ls = { .distribution = LBS_HY_LEN_FIXED, .seq_len = 8 };
	CU_ASSERT_EQUAL(lbs_hy_lengths_draw(&ls, r, ratio, 4), 32);
	CU_ASSERT_EQUAL(ratio[3], 1);
	ls = (lbs_hy_lengths_spec){ .distribution = LBS_HY_LEN_UNIFORM, .min = 3, .max = 5, .seq_len = 8 };
	int64_t total = lbs_hy_lengths_draw(&ls, r, ratio, N), sum = 0;
	size_t count[9] = { 0 };
	for (size_t i = 0; i < N; i++) {
		double l = ratio[i] * 8;
		CU_ASSERT_FATAL(l == 3 || l == 4 || l == 5);
		count[(int)l]++;
		sum += (int64_t)l;
	}
	CU_ASSERT_EQUAL(total, sum);
	for (int l = 3; l <= 5; l++)
		CU_ASSERT_DOUBLE_EQUAL((double)count[l] / N, 1.0 / 3, 0.02);
	int64_t values[2] = { 100, 300 };
	ls = (lbs_hy_lengths_spec){ .distribution = LBS_HY_LEN_EMPIRICAL, .values = values, .n_values = 2,
				    .seq_len = 400 };
	total = lbs_hy_lengths_draw(&ls, r, ratio, 1000);
	sum = 0;
	for (size_t i = 0; i < 1000; i++) {
		CU_ASSERT_FATAL(ratio[i] == 0.25 || ratio[i] == 0.75);
		sum += (int64_t)(ratio[i] * 400);
	}
	CU_ASSERT_EQUAL(total, sum);
	ls = (lbs_hy_lengths_spec){ .distribution = LBS_HY_LEN_LOGNORMAL, .median = 1000, .sigma = 0.5, .seq_len = 1 << 20 };
	lbs_hy_lengths_draw(&ls, r, ratio, 20001);
	qsort(ratio, 20001, sizeof *ratio, cmp_doubles);
	CU_ASSERT_DOUBLE_EQUAL(ratio[10000] * (1 << 20) / 1000, 1, 0.02);
	ls.seq_len = 1500; /* a fifth of the draws above it (log 1.5 / 0.5 = 0.81 sigma), clamped */
	lbs_hy_lengths_draw(&ls, r, ratio, 1000);
	for (size_t i = 0; i < 1000; i++)
		CU_ASSERT_FATAL(ratio[i] > 0 && ratio[i] <= 1);
	gsl_rng_free(r);
	double a[16], b[16];
	ls = (lbs_hy_lengths_spec){ .distribution = LBS_HY_LEN_UNIFORM, .min = 1, .max = 4096, .seq_len = 4096 };
	for (int k = 0; k < 2; k++) {
		r = lbs_rng_stream(7, "test", "same", 0, &err);
		lbs_hy_lengths_draw(&ls, r, k ? b : a, 16);
		gsl_rng_free(r);
	}
	CU_ASSERT(!memcmp(a, b, sizeof a));
}

/* GPipe and 1F1B, p = 4 stages, m = 8 micro-batches, forward 1 s and
 * backward 2 s on every stage, no communication: the last micro-batch's
 * forward leaves stage 0 at 8 s and reaches the last stage's end at
 * 8 + 3 = 11 s; the backwards then take m + p - 1 = 11 slots of 2 s, so a
 * step is (m + p - 1)(tf + tb) = 11 x 3 = 33 s, of which every stage
 * computes m (tf + tb) = 24 s: the bubble is 9 s, (p - 1)/(m + p - 1) =
 * 3/11 of the step, the same for both schedules (Narayanan et al., SC'21,
 * sec. 2.2.1). Steps repeat identically. */
static void test_bubble_gpipe_1f1b(void)
{
	int scheds[] = { LBS_HY_GPIPE, LBS_HY_1F1B };
	for (int k = 0; k < 2; k++) {
		test_plan tp;
		test_plan_init(&tp, 1, 4, 1, 8, scheds[k], 1, 2);
		for (size_t s = 0; s < 4; s++) {
			lbs_hy_account acc;
			double T = test_plan_run(&tp.pl, 2, s, &acc);
			CU_ASSERT_DOUBLE_EQUAL(T, 33, 1e-12);
			CU_ASSERT_DOUBLE_EQUAL(acc.compute_s, 24, 1e-12);
			CU_ASSERT_DOUBLE_EQUAL(acc.bubble_s, 9, 1e-12);
			CU_ASSERT_DOUBLE_EQUAL(acc.bubble_s / T, 3.0 / 11.0, 1e-15);
			CU_ASSERT_DOUBLE_EQUAL(acc.comm_s + acc.wait_s + acc.optimizer_s, 0, 1e-12);
		}
	}
}

/* Interleaved 1F1B, p = 4, v = 2 chunks a stage, m = 8: each chunk half
 * of a stage (forward 0.5 s, backward 1 s). Narayanan et al., SC'21,
 * sec. 2.2.2: the bubble shrinks by v, to (p - 1)(tf + tb)/v with tf, tb
 * a whole stage's times, so the step is m (tf + tb) + (p - 1)(tf + tb)/v
 * = 8 x 3 + 3 x 3 / 2 = 28.5 s and the bubble over the ideal time
 * (p - 1)/(v m) = 3/16. */
static void test_bubble_interleaved(void)
{
	test_plan tp;
	test_plan_init(&tp, 1, 4, 2, 8, LBS_HY_INTERLEAVED, 0.5, 1);
	for (size_t s = 0; s < 4; s++) {
		lbs_hy_account acc;
		double T = test_plan_run(&tp.pl, 1, s, &acc);
		CU_ASSERT_DOUBLE_EQUAL(T, 28.5, 1e-12);
		CU_ASSERT_DOUBLE_EQUAL(acc.bubble_s / acc.compute_s, 3.0 / 16.0, 1e-15);
	}
	/* v = 4, m = 8: 24 + 9 / 4 = 26.25 s; bubble 3/32 of the ideal */
	test_plan_init(&tp, 1, 4, 4, 8, LBS_HY_INTERLEAVED, 0.25, 0.5);
	lbs_hy_account acc;
	CU_ASSERT_DOUBLE_EQUAL(test_plan_run(&tp.pl, 1, 0, &acc), 26.25, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(acc.bubble_s / acc.compute_s, 3.0 / 32.0, 1e-15);
}

/* 1F1B, p = 2, m = 4, stage 1 twice as slow (forward 1 s and 2 s, backward
 * 2 s and 4 s), optimizer 1 s; by hand (tests/unit/test_whatif.c's
 * `pipeline` trace, derived there op by op): stage 0 F0 [0,1] F1 [1,2];
 * stage 1 F0 [1,3] B0 [3,7]; stage 0 B0 [7,9]; stage 1 F1 [7,9] B1
 * [9,13]; stage 0 F2 [9,10] B1 [13,15]; stage 1 F2 [13,15] B2 [15,19];
 * stage 0 F3 [15,16] B2 [19,21]; stage 1 F3 [19,21] B3 [21,25]; stage 0
 * B3 [25,27]; optimizer [27,28]. Stage 0 computes 12 s and idles 15 s. */
static void test_slow_stage(void)
{
	test_plan tp;
	test_plan_init(&tp, 1, 2, 1, 4, LBS_HY_1F1B, 1, 2);
	tp.pl.fwd_s[1] = 2;
	tp.pl.bwd_s[1] = 4;
	tp.pl.opt_s[0] = tp.pl.opt_s[1] = 1;
	lbs_hy_account acc;
	CU_ASSERT_DOUBLE_EQUAL(test_plan_run(&tp.pl, 3, 0, &acc), 28, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(acc.compute_s, 12, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(acc.optimizer_s, 1, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(acc.bubble_s, 15, 1e-12);
}

/* d = 2 replicas of p = 2 stages, m = 4, 1F1B, forward 1 s and backward
 * 2 s; replica 1 runs at half speed (availability 0.5) and the gradient
 * reduction takes 1 s. Replica 1's pipeline takes (m + p - 1) x 3 / 0.5 =
 * 30 s; its reduce-scatter ends at 31 s on both replicas; the step is 31 s.
 * Replica 0's pipeline ends at 15 s: it waits 15 s at the reduction (its
 * `wait`) and communicates 1 s; its stage 1 waits 2 s more at the
 * embedding pair for its stage 0, pipeline bubble. Then the availability
 * becomes a fail-slow episode: replica 1 at 0.5 for its first 10 s only.
 * Its stage 0 (order F0 F1 B0 F2 B1 F3 B2 B3) and stage 1 (F0 B0 F1 B1 F2
 * B2 F3 B3) run: s0 F0 [0,2] F1 [2,4]; s1 F0 [2,4] B0 [4,8]; s0 B0 [8,11]
 * (1 s of work at 0.5 to 10 s, then 1 s at full speed); s1 F1 [8,10] B1
 * [10,12]; s0 F2 [11,12] B1 [12,14] F3 [14,15]; s1 F2 [12,13] B2 [13,15];
 * s0 B2 [15,17]; s1 F3 [15,16] B3 [16,18]; s0 B3 [18,20]: the embedding
 * pair meets at 20 s, the reductions end at 21 s, the step is 21 s. */
static void test_slow_replica(void)
{
	test_plan tp;
	test_plan_init(&tp, 2, 2, 1, 4, LBS_HY_1F1B, 1, 2);
	tp.pl.grad_s[0] = tp.pl.grad_s[1] = 1;
	double t0[1] = { 0 }, half[1] = { 0.5 };
	for (size_t g = 0; g < 4; g++)
		tp.avail[g] = g >= 2 ? (lbs_hy_avail){ 1, t0, half } : (lbs_hy_avail){ 0, NULL, NULL };
	tp.pl.avail = tp.avail;
	lbs_hy_account acc;
	CU_ASSERT_DOUBLE_EQUAL(test_plan_run(&tp.pl, 1, 0, &acc), 31, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(acc.compute_s, 12, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(acc.wait_s, 15, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(acc.comm_s, 1, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(acc.bubble_s, 3, 1e-12);
	double ts[2] = { 0, 10 }, lv[2] = { 0.5, 1 };
	tp.avail[2] = tp.avail[3] = (lbs_hy_avail){ 2, ts, lv };
	CU_ASSERT_DOUBLE_EQUAL(test_plan_run(&tp.pl, 1, 0, NULL), 21, 1e-12);
}

/* Network fail-slows: the plan of test_slow_replica at full speed, each
 * stage's reduction 1 s: the pipeline takes (m + p - 1) x 3 = 15 s and
 * the step 16 s. Replica 1's groups on node 1 with a quarter of their
 * inter-node bandwidth from 0 to 100 s: each reduction, across nodes 0 and
 * 1, takes 1 / 0.25 = 4 s, the step 19 s; the transfers inside a replica
 * stay on their node (no time here either way). Both replicas on one node:
 * the reduction does not cross nodes (NVLink), 16 s. The share only from
 * 0 to 10 s: the reductions start at 15 s, at full share, 16 s. A change
 * during the transfer is integrated: a quarter until 15.5 s, then full:
 * 0.5 x 0.25 of the 1 s done by 15.5 s, the 0.875 left at full share, the
 * step 16.375 s; full until 15.5 s, then a quarter: 0.5 done, 0.5 left at
 * 0.25 (2 s), 17.5 s; a quarter on replica 0 from 15.2 s and on replica 1
 * from 15.6 s, each to 100 s: the least is 1 until 15.2 s (0.2 done), then
 * 0.25, 0.8 left: 3.2 s, 18.4 s (the later change does not lower it). */
static void test_network_failslow(void)
{
	test_plan tp;
	test_plan_init(&tp, 2, 2, 1, 4, LBS_HY_1F1B, 1, 2);
	tp.pl.grad_s[0] = tp.pl.grad_s[1] = 1;
	CU_ASSERT_DOUBLE_EQUAL(test_plan_run(&tp.pl, 1, 0, NULL), 16, 1e-12);
	double t0[1] = { 0 }, quarter[1] = { 0.25 }, ts[2] = { 0, 10 }, lv[2] = { 0.25, 1 };
	lbs_hy_avail net[4];
	int64_t node[4] = { 0, 0, 1, 1 };
	for (size_t g = 0; g < 4; g++)
		net[g] = g >= 2 ? (lbs_hy_avail){ 1, t0, quarter } : (lbs_hy_avail){ 0, NULL, NULL };
	tp.pl.net = net;
	tp.pl.node = node;
	lbs_hy_account acc;
	CU_ASSERT_DOUBLE_EQUAL(test_plan_run(&tp.pl, 1, 0, &acc), 19, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(acc.compute_s, 12, 1e-12); /* the compute is untouched */
	node[2] = node[3] = 0;
	CU_ASSERT_DOUBLE_EQUAL(test_plan_run(&tp.pl, 1, 0, NULL), 16, 1e-12);
	node[2] = node[3] = 1;
	net[2] = net[3] = (lbs_hy_avail){ 2, ts, lv };
	CU_ASSERT_DOUBLE_EQUAL(test_plan_run(&tp.pl, 1, 0, NULL), 16, 1e-12);
	double ta[2] = { 0, 15.5 }, la[2] = { 0.25, 1 }, lb[2] = { 1, 0.25 };
	net[2] = net[3] = (lbs_hy_avail){ 2, ta, la };
	CU_ASSERT_DOUBLE_EQUAL(test_plan_run(&tp.pl, 1, 0, &acc), 16.375, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(acc.comm_s, 1.375, 1e-12); /* exposed: the whole transfer */
	net[2] = net[3] = (lbs_hy_avail){ 2, ta, lb };
	CU_ASSERT_DOUBLE_EQUAL(test_plan_run(&tp.pl, 1, 0, NULL), 17.5, 1e-12);
	double tc[3] = { 0, 15.2, 100 }, td[3] = { 0, 15.6, 100 }, lc[3] = { 1, 0.25, 1 };
	net[0] = net[1] = (lbs_hy_avail){ 3, tc, lc };
	net[2] = net[3] = (lbs_hy_avail){ 3, td, lc };
	CU_ASSERT_DOUBLE_EQUAL(test_plan_run(&tp.pl, 1, 0, NULL), 18.4, 1e-12);
}

/* A traced group's replay times its episodes (lbs_hy_least of one node), by hand: a
 * linear trace a = 1 - t / 20 on [0, 10] (then 0.5 + (t - 10) / 30), an
 * episode at 0.5 from 2 to 6 s. The work done by 2 s is 2 - 4/40 = 1.9;
 * from 2 to 6, 0.5 x ((6 - 36/40) - 1.9) = 1.6. Work 2.5 from 0 needs 0.6
 * more at 0.5 a: T - T^2/40 = 3.1, T = 20 - sqrt(276); work 5 needs 1.5
 * after 6 s at a: T - T^2/40 = 6.6, T = 20 - sqrt(136); from 3 s, 2 s of
 * work: (6 - 0.9) - (3 - 9/40) = 2.325 by 6 s at 0.5 is 1.1625, then 0.8375
 * at a: T - T^2/40 = 5.9375, T = 20 - sqrt(162.5); from 1 s, 0.5 inside
 * the first piece: T = 20 - sqrt(341). The level at 4 s is
 * 0.5 x 0.8; peek leaves the replay where it was. */
static void test_scaled_source(void)
{
	char *path = write_temp("# lbsim-trace 1\ntime_s,availability\n0,1\n10,0.5\n25,1\n");
	lbs_error err = { 0 };
	lbs_series_set *set = NULL;
	CU_ASSERT_FATAL(lbs_trace_reader_find("lbsim")->read(path, NULL, &set, &err) == LBS_OK);
	unlink(path);
	free(path);
	lbs_source_opts o = { LBS_INTERP_LINEAR, LBS_END_HOLD, 0, 1, { LBS_MAP_DIRECT, 0, 0, 0, 1, 0 } };
	double t[3] = { 0, 2, 6 }, f[3] = { 1, 0.5, 1 };
	lbs_hy_member s = { .traced = true, .level = 1, .ep = { 3, t, f } };
	CU_ASSERT_FATAL(lbs_source_init(&s.src, set, 0, 0, &o, &err) == LBS_OK);
	lbs_hy_least L = { 1, &s };
	lbs_avail a = { &lbs_hy_least_ops, &L, 1.0 };
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_peek(&a, 0, 2.5, 0), 20 - sqrt(276), 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_finish(&a, 0, 2.5, 0), 20 - sqrt(276), 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_finish(&a, 0, 5, 0), 20 - sqrt(136), 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_finish(&a, 3, 2, 0), 20 - sqrt(162.5), 1e-12);
	/* within the first piece: T - T^2/40 = (1 - 1/40) + 0.5 */
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_finish(&a, 1, 0.5, 0), 20 - sqrt(341), 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_level(&a, 4, 0), 0.5 * 0.8, 1e-15);
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_level(&a, 7, 0), 1 - 7.0 / 20, 1e-15);
	lbs_series_set_destroy(set);
}

/* The least of several nodes (lbs_hy_least), by hand. Members: A a linear
 * trace 1 - 0.08 t on [0, 10], 0.2 after; B an untraced node at 0.6 with
 * an episode of 0.25 from 10.5 to 11.5 s (0.15 there); C a step trace, 1
 * then 0.1 from 12 s. The least: B's 0.6 on [0, 5), where A falls through
 * it; A on [5, 10.5) (0.2 from 10); B's 0.15 on [10.5, 11.5); A's 0.2 to
 * 12; C's 0.1 on. Work done: 3 by 5 s, 5 by 10 s (A's trapezium, 2),
 * 5.1 by 10.5, 5.25 by 11.5, 5.35 by 12. So work 5 from 0 ends at 10;
 * 4 at 5 + u with 0.6 u - 0.04 u^2 = 1; 5.6 at 12 + 0.25 / 0.1 = 14.5;
 * from 11 s, 1: 0.075 + 0.1 by 12, then 0.825 / 0.1: 20.25. A second
 * group of A and a rising D = 0.3 + 0.05 t: D is the least to x = 0.7 /
 * 0.13, where A crosses it, then A: work 2 ends where 0.3 T + 0.025 T^2 = 2,
 * work 3 where 0.04 T^2 - T + c = 0, c = x - 0.04 x^2 + 3 - W(x). */
static void test_least_source(void)
{
	char *pa = write_temp("# lbsim-trace 1\ntime_s,availability\n0,1\n10,0.2\n");
	char *pc = write_temp("# lbsim-trace 1\ntime_s,availability\n0,1\n12,0.1\n");
	char *pd = write_temp("# lbsim-trace 1\ntime_s,availability\n0,0.3\n10,0.8\n");
	lbs_error err = { 0 };
	lbs_series_set *sa = NULL, *sc = NULL, *sd = NULL;
	CU_ASSERT_FATAL(lbs_trace_reader_find("lbsim")->read(pa, NULL, &sa, &err) == LBS_OK);
	CU_ASSERT_FATAL(lbs_trace_reader_find("lbsim")->read(pc, NULL, &sc, &err) == LBS_OK);
	CU_ASSERT_FATAL(lbs_trace_reader_find("lbsim")->read(pd, NULL, &sd, &err) == LBS_OK);
	unlink(pa), unlink(pc), unlink(pd);
	free(pa), free(pc), free(pd);
	lbs_source_opts lin = { LBS_INTERP_LINEAR, LBS_END_HOLD, 0, 1, { LBS_MAP_DIRECT, 0, 0, 0, 1, 0 } };
	lbs_source_opts step = lin;
	step.interp = LBS_INTERP_STEP;
	double et[3] = { 0, 10.5, 11.5 }, el[3] = { 1, 0.25, 1 };
	lbs_hy_member m[3] = { { .traced = true, .level = 1 },
			       { .traced = false, .level = 0.6, .ep = { 3, et, el } },
			       { .traced = true, .level = 1 } };
	CU_ASSERT_FATAL(lbs_source_init(&m[0].src, sa, 0, 0, &lin, &err) == LBS_OK);
	CU_ASSERT_FATAL(lbs_source_init(&m[2].src, sc, 0, 0, &step, &err) == LBS_OK);
	lbs_hy_least L = { 3, m };
	lbs_avail a = { &lbs_hy_least_ops, &L, 1.0 };
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_finish(&a, 0, 5, 0), 10, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_finish(&a, 0, 4, 0), 5 + (0.6 - sqrt(0.2)) / 0.08, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_finish(&a, 0, 5.6, 0), 14.5, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_finish(&a, 11, 1, 0), 20.25, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_finish(&a, 2, 1, 0), 2 + 1 / 0.6, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_peek(&a, 0, 5, 0), 10, 1e-12); /* after later ones: cursors are hints */
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_level(&a, 4, 0), 0.6, 1e-15);
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_level(&a, 7, 0), 0.44, 1e-15);
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_level(&a, 11, 0), 0.15, 1e-15);
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_level(&a, 13, 0), 0.1, 1e-15);
	lbs_hy_member m2[2] = { { .traced = true, .level = 1 }, { .traced = true, .level = 1 } };
	m2[0].src = m[0].src;
	CU_ASSERT_FATAL(lbs_source_init(&m2[1].src, sd, 0, 0, &lin, &err) == LBS_OK);
	lbs_hy_least L2 = { 2, m2 };
	a.state = &L2;
	double x = 0.7 / 0.13, wx = 0.3 * x + 0.025 * x * x, c = x - 0.04 * x * x + 3 - wx;
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_finish(&a, 0, 2, 0), (sqrt(0.29) - 0.3) / 0.05, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_finish(&a, 0, 3, 0), (1 - sqrt(1 - 0.16 * c)) / 0.08, 1e-12);
	lbs_series_set_destroy(sa);
	lbs_series_set_destroy(sc);
	lbs_series_set_destroy(sd);
}

/* Gradient reduction overlapping the backward pass, one bucket a chunk:
 * p = 1, v = 2, m = 2, d = 2, forward 1 s and backward 2 s a chunk. The
 * interleaved order (p = 1) is F(c0,0) F(c1,0) B(c1,0) F(c0,1) B(c0,0)
 * F(c1,1) B(c1,1) B(c0,1): 12 s of compute; chunk 1's last backward ends
 * at 10 s and chunk 0's at 12 s. Chunk 1's reduction (1.5 s) runs under
 * chunk 0's last backward (2 s), hidden; chunk 0's (0.5 s) starts at 12 s:
 * the step is 12.5 s, exactly the last bucket exposed. Without overlap both
 * follow the compute: 12 + 1.5 + 0.5 = 14 s. With chunk 1's reduction at
 * 3 s it outlasts the backward by 1 s and chunk 0's waits for it (one
 * chain): 10 + 3 + 0.5 = 13.5 s. */
static void test_dp_overlap(void)
{
	test_plan tp;
	test_plan_init(&tp, 2, 1, 2, 2, LBS_HY_INTERLEAVED, 1, 2);
	tp.pl.grad_s[0] = 0.5;
	tp.pl.grad_s[1] = 1.5;
	tp.pl.overlap_dp = true;
	lbs_hy_account acc;
	CU_ASSERT_DOUBLE_EQUAL(test_plan_run(&tp.pl, 2, 0, &acc), 12.5, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(acc.comm_s, 0.5, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(acc.compute_s, 12, 1e-12);
	tp.pl.overlap_dp = false;
	CU_ASSERT_DOUBLE_EQUAL(test_plan_run(&tp.pl, 1, 0, NULL), 14, 1e-12);
	tp.pl.overlap_dp = true;
	tp.pl.grad_s[1] = 3;
	CU_ASSERT_DOUBLE_EQUAL(test_plan_run(&tp.pl, 1, 0, NULL), 13.5, 1e-12);
}

/* Buckets within a chunk: p = 1, v = 1, m = 2, d = 2, forward 1 s and
 * backward 2 s: F0 [0,1] B0 [1,3] F1 [3,4] B1 [4,6]. Two buckets of 0.8 s
 * with overlap: the first is ready when B1 has done half its work, at
 * 5 s, reduced [5, 5.8]; the last after B1, [6, 6.8]: the step is 6.8 s,
 * the last bucket exposed; without overlap 6 + 0.8 + 0.8 = 7.6 s. Four
 * buckets of 0.4 s: ready at 4.5, 5, 5.5, 6, reduced [4.5,4.9] [5,5.4]
 * [5.5,5.9] [6,6.4]: 6.4 s. Four of 0.6 s queue up behind each other:
 * [4.5,5.1] [5.1,5.7] [5.7,6.3] [6.3,6.9]: 6.9 s, 0.9 s exposed. Replica 1
 * at half speed: its B1 runs [8,12], the buckets of 0.6 s are ready at 9,
 * 10, 11 and 12: [9,9.6] [10,10.6] [11,11.6] [12,12.6], 12.6 s. Replica 0,
 * done computing at 6 s, waits [6,9], then 0.4 s before each of the other
 * three buckets (each of its own is ready, the slow replica's is not):
 * 4.2 s; it communicates 4 x 0.6 = 2.4 s; no bubble (p = 1). */
static void test_dp_buckets(void)
{
	test_plan tp;
	test_plan_init(&tp, 2, 1, 1, 2, LBS_HY_1F1B, 1, 2);
	tp.pl.overlap_dp = true;
	tp.pl.buckets = 2;
	tp.pl.grad_s[0] = 0.8;
	lbs_hy_account acc;
	CU_ASSERT_DOUBLE_EQUAL(test_plan_run(&tp.pl, 2, 0, &acc), 6.8, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(acc.compute_s, 6, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(acc.comm_s, 0.8, 1e-12);
	tp.pl.overlap_dp = false;
	CU_ASSERT_DOUBLE_EQUAL(test_plan_run(&tp.pl, 1, 0, NULL), 7.6, 1e-12);
	tp.pl.overlap_dp = true;
	tp.pl.buckets = 4;
	tp.pl.grad_s[0] = 0.4;
	CU_ASSERT_DOUBLE_EQUAL(test_plan_run(&tp.pl, 1, 0, NULL), 6.4, 1e-12);
	tp.pl.grad_s[0] = 0.6;
	CU_ASSERT_DOUBLE_EQUAL(test_plan_run(&tp.pl, 1, 0, NULL), 6.9, 1e-12);
	double t0[1] = { 0 }, half[1] = { 0.5 };
	tp.avail[1] = (lbs_hy_avail){ 1, t0, half };
	tp.pl.avail = tp.avail;
	CU_ASSERT_DOUBLE_EQUAL(test_plan_run(&tp.pl, 1, 0, &acc), 12.6, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(acc.wait_s, 4.2, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(acc.comm_s, 2.4, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(acc.bubble_s, 0, 1e-12);
}

/* A step simulated with communication, unequal stages, a slow replica and
 * ZeRO's all-gathers, written as a per-operation trace and read back by
 * the what-if analysis: its no-delay replay (doc/whatif.md, sec. 5) must
 * give the simulated step times (the trace holds float32 times: 1e-6
 * relative), and its launch delays must all be zero (L = 1). */
static void check_whatif(const lbs_hy_plan *pl, int steps)
{
	lbs_error err = { 0 };
	lbs_hy_graph gr;
	lbs_hy_sim sim;
	CU_ASSERT_FATAL(lbs_hy_graph_build(&gr, pl, &err) == LBS_OK);
	CU_ASSERT_FATAL(lbs_hy_sim_create(&sim, &gr, &err) == LBS_OK);
	char tpath[] = "/tmp/lbsim-hybrid-XXXXXX", mpath[] = "/tmp/lbsim-hybrid-meta-XXXXXX";
	int fd = mkstemp(tpath), fm = mkstemp(mpath);
	CU_ASSERT_FATAL(fd >= 0 && fm >= 0);
	FILE *out = fdopen(fd, "w"), *meta = fdopen(fm, "w");
	double T[8];
	for (int i = 0; i < steps; i++) {
		double start = sim.now_s;
		CU_ASSERT_FATAL(lbs_hy_sim_step(&sim, &T[i], &err) == LBS_OK);
		CU_ASSERT(lbs_hy_trace_write(&sim, out, i, start, i == 0, NULL, &err) == LBS_OK);
	}
	CU_ASSERT(lbs_hy_meta_write(pl, meta, "test", &err) == LBS_OK);
	fclose(out);
	fclose(meta);
	lbs_ops_trace t;
	lbs_ops_meta mt;
	lbs_wi_model m;
	lbs_wi_result res;
	if (lbs_ops_read(tpath, &t, &err) != LBS_OK || lbs_ops_meta_read(mpath, &mt, &err) != LBS_OK ||
	    lbs_ops_check_meta(&t, &mt, &err) != LBS_OK || lbs_wi_model_build(&m, &t, 1, &err) != LBS_OK) {
		fprintf(stderr, "\n%s\n", err.msg);
		CU_FAIL_FATAL("the what-if analysis refused the simulated trace");
	}
	CU_ASSERT_FATAL(lbs_wi_analyse(&m, &res, &err) == LBS_OK);
	CU_ASSERT_EQUAL(res.n_steps, (size_t)steps);
	for (int i = 0; i < steps; i++) {
		CU_ASSERT_DOUBLE_EQUAL(res.t_nd[i] / T[i], 1, 1e-6);
		CU_ASSERT_DOUBLE_EQUAL(res.t_meas[i] / T[i], 1, 1e-6);
		if (fabs(res.t_nd[i] / T[i] - 1) > 1e-6)
			fprintf(stderr, "\nstep %d: simulated %.9g, whatif no-delay replay %.9g\n", i, T[i], res.t_nd[i]);
	}
	CU_ASSERT_DOUBLE_EQUAL(res.L, 1, 1e-6);
	lbs_wi_result_free(&res);
	lbs_wi_model_free(&m);
	lbs_ops_free(&t);
	unlink(tpath);
	unlink(mpath);
	lbs_hy_sim_destroy(&sim);
	lbs_hy_graph_free(&gr);
}

static void test_whatif_consistency(void)
{
	int scheds[] = { LBS_HY_GPIPE, LBS_HY_1F1B, LBS_HY_INTERLEAVED };
	for (int k = 0; k < 3; k++)
		for (int overlap = 0; overlap < 2; overlap++) {
			int v = scheds[k] == LBS_HY_INTERLEAVED ? 2 : 1;
			test_plan tp;
			test_plan_init(&tp, 3, 4, v, 8, scheds[k], 0.01, 0.02);
			lbs_hy_plan *pl = &tp.pl;
			pl->zero_stage = 1;
			pl->overlap_dp = overlap;
			for (size_t g = 0; g < 12; g++) {
				pl->p2p_s[g] = 0.001 * (double)(1 + g % 3);
				pl->opt_s[g] = 0.005;
				for (int c = 0; c < v; c++) {
					pl->fwd_s[g * (size_t)v + (size_t)c] *= 1 + 0.1 * (double)(g % 4);
					pl->bwd_fixed_s[g * (size_t)v + (size_t)c] = 0.002;
				}
			}
			for (size_t i = 0; i < (size_t)(4 * v); i++) {
				pl->grad_s[i] = 0.004 * (double)(1 + i);
				pl->gather_s[i] = 0.003;
			}
			pl->emb_s = 0.001;
			pl->clip_s = 0.0005;
			double ts[2] = { 0, 0.2 }, lv[2] = { 0.7, 1.1 };
			for (size_t g = 0; g < 12; g++)
				tp.avail[g] = g / 4 == 1 ? (lbs_hy_avail){ 2, ts, lv } : (lbs_hy_avail){ 0, NULL, NULL };
			pl->avail = tp.avail;
			check_whatif(pl, 3);
		}
}

/* The datasheet model's time of a layer split by pass (what a stage's
 * forward and backward computes take) adds up to its time of all passes,
 * for every layer of Llama 3 8B under each recomputation; without
 * recomputation nothing is recomputed. */
static void test_pass_times(void)
{
	lbs_gpu_eff e = { 0.7, 1e-4, 0.7, 2e-4 };
	const lbs_gpu_spec *d = lbs_gpu_find("h100-sxm");
	for (int rec = LBS_RECOMPUTE_NONE; rec <= LBS_RECOMPUTE_FULL; rec++) {
		lbs_net net;
		lbs_error err = { 0 };
		lbs_net_opts o = { .seq_len = 2048, .tp = 4, .recompute = rec };
		CU_ASSERT_FATAL(lbs_net_create_opts(&net, "llama3-8b", &o, &err) == LBS_OK);
		size_t bad = 0;
		double fwd = 0, all = 0;
		for (size_t i = 0; i < net.n_layers; i++) {
			double t[LBS_PASSES];
			lbs_gpu_layer_pass_times(d, &e, &net, &net.layers[i], 2, true, t);
			double whole = lbs_gpu_layer_time(d, &e, &net, &net.layers[i], 2, true);
			bad += fabs(t[0] + t[1] + t[2] - whole) > 1e-12 * whole;
			bad += rec == LBS_RECOMPUTE_NONE && t[2] != 0;
			fwd += t[0];
			all += whole;
		}
		CU_ASSERT_EQUAL(bad, 0);
		/* the forward pass is about a third of the work (two GEMMs backward for one forward) */
		CU_ASSERT(fwd / all > 0.2 && fwd / all < 0.4);
		lbs_net_destroy(&net);
	}
}

/* Consistency with replay: for each of ByteDance's three traces, a hybrid
 * job of the trace's shape (its metadata's degrees, its micro-batches and
 * chunks, 1F1B, ZeRO's all-gathers as the trace has them) simulated with
 * every op given its traced duration (local ops) or transfer time
 * (collective members), no launch delay, gives the what-if analysis's
 * no-delay step times; given each op type's ideal value, its ideal step
 * time (1e-9 relative, doc/whatif.md sec. 4 and 5). The forward
 * simulation's graph has an op the traces leave out, a p2p op whose peer
 * lies outside the model (the first stage's forward receives, ...); it is
 * given no time. */
static void check_replay(const char *name)
{
	char tpath[256], mpath[256];
	snprintf(tpath, sizeof tpath, "traces/data/bytedance-whatif/trace-%s.csv.gz", name);
	snprintf(mpath, sizeof mpath, "traces/data/bytedance-whatif/meta-%s.yaml", name);
	char *tp = src_path(tpath), *mp = src_path(mpath);
	lbs_error err = { 0 };
	lbs_ops_trace t;
	lbs_ops_meta meta;
	lbs_wi_model wm;
	lbs_wi_result res;
	CU_ASSERT_FATAL(lbs_ops_read(tp, &t, &err) == LBS_OK && lbs_ops_meta_read(mp, &meta, &err) == LBS_OK);
	CU_ASSERT_FATAL(lbs_wi_model_build(&wm, &t, (int)meta.dsp_size, &err) == LBS_OK);
	CU_ASSERT_FATAL(lbs_wi_analyse(&wm, &res, &err) == LBS_OK);
	/* the job's shape */
	size_t n = wm.n_ops, fwd0 = 0;
	bool gather = false;
	for (size_t v = 0; v < n; v++) {
		fwd0 += wm.stage[v] == 0 && wm.type[v] == LBS_OP_FORWARD_COMPUTE;
		gather |= wm.type[v] == LBS_OP_PARAMS_ALL_GATHER;
	}
	test_plan tp2;
	test_plan_init(&tp2, wm.D, wm.P, wm.V, (int)fwd0 / wm.V, wm.V > 1 ? LBS_HY_INTERLEAVED : LBS_HY_1F1B, 0, 0);
	tp2.pl.t = (int)meta.tp_size;
	tp2.pl.zero_stage = gather;
	tp2.pl.overlap_dp = wm.overlapped;
	lbs_hy_graph gr;
	lbs_hy_sim sim;
	CU_ASSERT_FATAL(lbs_hy_graph_build(&gr, &tp2.pl, &err) == LBS_OK);
	CU_ASSERT_FATAL(lbs_hy_sim_create(&sim, &gr, &err) == LBS_OK);
	/* each simulated op's template op: (stage, type, seq) */
	uint32_t *tmpl = malloc(gr.n_ops * sizeof *tmpl);
	double *vo = malloc(gr.n_ops * sizeof *vo), *vi = malloc(gr.n_ops * sizeof *vi);
	CU_ASSERT_FATAL(tmpl && vo && vi);
	size_t mapped = 0, unmapped_bad = 0;
	for (size_t o = 0; o < gr.n_ops; o++) {
		size_t grp = lbs_hy_group_of(&gr, (uint32_t)o);
		int s = (int)(grp % (size_t)wm.P);
		tmpl[o] = UINT32_MAX;
		for (uint32_t v = 0; v < n; v++)
			if (wm.stage[v] == s && wm.type[v] == gr.type[o] && wm.seq[v] == gr.seq[o])
				tmpl[o] = v;
		if (tmpl[o] != UINT32_MAX)
			mapped += grp < (size_t)wm.P; /* replica 0's */
		else
			unmapped_bad += !(gr.type[o] == LBS_OP_FORWARD_RECV && s == 0) &&
					!(gr.type[o] == LBS_OP_BACKWARD_SEND && s == 0) &&
					!(gr.type[o] == LBS_OP_FORWARD_SEND && s == wm.P - 1) &&
					!(gr.type[o] == LBS_OP_BACKWARD_RECV && s == wm.P - 1) &&
					!(gr.type[o] == LBS_OP_EMBEDDING_GRADS_ALL_REDUCE && s > 0 && s < wm.P - 1);
	}
	CU_ASSERT_EQUAL(mapped, n); /* every traced op is one of the simulation's */
	CU_ASSERT_EQUAL(unmapped_bad, 0);
	size_t bad_nd = 0, bad_id = 0;
	for (size_t si = 0; si < wm.n_steps; si++) {
		for (size_t o = 0; o < gr.n_ops; o++) {
			vo[o] = vi[o] = 0;
			if (tmpl[o] == UINT32_MAX)
				continue;
			uint32_t v = tmpl[o];
			size_t cell = (si * (size_t)wm.D + lbs_hy_group_of(&gr, (uint32_t)o) / (size_t)wm.P) * n + v;
			bool comm = wm.group_comm[wm.group_of[v]];
			vo[o] = comm ? wm.x[cell] : wm.d[cell];
			vi[o] = comm ? res.ideal_x[wm.type[v]] : res.ideal_d[wm.type[v]];
		}
		double T;
		sim.given = vo;
		CU_ASSERT_FATAL(lbs_hy_sim_step(&sim, &T, &err) == LBS_OK);
		bad_nd += fabs(T / res.t_nd[si] - 1) > 1e-9;
		sim.given = vi;
		CU_ASSERT_FATAL(lbs_hy_sim_step(&sim, &T, &err) == LBS_OK);
		bad_id += fabs(T / res.t_id[si] - 1) > 1e-9;
	}
	if (bad_nd || bad_id)
		fprintf(stderr, "\n%s: %zu no-delay and %zu ideal steps of %zu differ\n", name, bad_nd, bad_id, wm.n_steps);
	CU_ASSERT_EQUAL(bad_nd, 0);
	CU_ASSERT_EQUAL(bad_id, 0);
	free(tmpl);
	free(vo);
	free(vi);
	lbs_hy_sim_destroy(&sim);
	lbs_hy_graph_free(&gr);
	lbs_wi_result_free(&res);
	lbs_wi_model_free(&wm);
	lbs_ops_free(&t);
	free(tp);
	free(mp);
}

static void test_replay_consistency(void)
{
	check_replay("ST");
	check_replay("AR");
	check_replay("SE");
}

/* The alpha-beta ring collectives (hybrid/plan.c): 1 GB over 4 ranks at
 * 100 GB/s and 1 us a step: an all-reduce is 2 (n - 1) = 6 steps of
 * 1 us + 1e9 / (4 x 1e11) s = 2.5 ms, 15.006 ms; a reduce-scatter half,
 * 7.503 ms; one rank: nothing. */
static void test_ring_times(void)
{
	CU_ASSERT_DOUBLE_EQUAL(lbs_hy_ring_allreduce_s(4, 1e9, 1e11, 1e-6), 0.015006, 1e-15);
	CU_ASSERT_DOUBLE_EQUAL(lbs_hy_ring_half_s(4, 1e9, 1e11, 1e-6), 0.007503, 1e-15);
	CU_ASSERT_EQUAL(lbs_hy_ring_allreduce_s(1, 1e9, 1e11, 1e-6), 0);
}

/* NCCL's double binary tree (lbs_hy_tree_allreduce_s), by hand: 1 GB at
 * 100 GB/s, 1 us a message. 8 ranks: 2 log2 8 = 6 latencies and twice
 * 10 ms, 20.006 ms; 5 ranks: ceil(log2 5) = 3, the same; 2 ranks: 2 us and
 * 10 ms, the ring's 10.002 ms; one rank: nothing. In a plan ([network]
 * algorithm), Llama 3 8B, dp 4 x pp 1 x tp 8 on 4 nodes, no ZeRO: a rank's
 * gradients X = bytes / bw over 4 nodes take 6 a + 1.5 X on the ring and
 * 4 a + 2 X on the tree, so tree = 4 a + 2 (ring - 6 a) / 1.5; auto takes
 * the ring there at 5 us (X is tens of ms) and the tree at 1 s a message
 * (2 s fewer); reduce-scatters (ZeRO) stay rings. */
static void test_tree_times(void)
{
	CU_ASSERT_DOUBLE_EQUAL(lbs_hy_tree_allreduce_s(8, 1e9, 1e11, 1e-6), 0.020006, 1e-15);
	CU_ASSERT_DOUBLE_EQUAL(lbs_hy_tree_allreduce_s(5, 1e9, 1e11, 1e-6), 0.020006, 1e-15);
	CU_ASSERT_DOUBLE_EQUAL(lbs_hy_tree_allreduce_s(2, 1e9, 1e11, 1e-6), lbs_hy_ring_allreduce_s(2, 1e9, 1e11, 1e-6),
			       1e-15);
	CU_ASSERT_EQUAL(lbs_hy_tree_allreduce_s(1, 1e9, 1e11, 1e-6), 0);
	const char *algs[] = { "ring", "tree", "auto", "auto" }, *lat[] = { "5 us", "5 us", "5 us", "1 s" };
	double g[4], z[2];
	lbs_error err = { 0 };
	for (int i = 0; i < 6; i++) {
		char ini[1024];
		snprintf(ini, sizeof ini,
			 "[hybrid]\ndp = 4\npp = 1\ntp = 8\nmicro_batches = 2\nzero_stage = %d\n[model]\nname = llama3-8b\n"
			 "sequence_length = 2048\n[nodes.n]\ncount = 4\ngpu = h100-sxm\n[intra_node]\nbandwidth = 450 GB/s\n"
			 "[network]\nnics_per_node = 8\nbandwidth = 400 Gbit/s\nlatency = %s\nalgorithm = %s\n",
			 i < 4 ? 0 : 1, i < 4 ? lat[i] : "5 us", i < 4 ? algs[i] : algs[i - 4]);
		char *path = write_temp(ini);
		lbs_hy_scenario sc;
		lbs_hy_built b;
		CU_ASSERT_FATAL(lbs_hy_scenario_load(&sc, path, NULL, 0, &err) == LBS_OK);
		CU_ASSERT_FATAL(lbs_hy_plan_build(&sc, &b, &err) == LBS_OK);
		if (i < 4)
			g[i] = b.plan.grad_s[0];
		else
			z[i - 4] = b.plan.grad_s[0];
		lbs_hy_built_free(&b);
		lbs_hy_scenario_destroy(&sc);
		unlink(path);
		free(path);
	}
	double a = 5e-6, X = (g[0] - 6 * a) / 1.5;
	CU_ASSERT(X > 0.01);
	CU_ASSERT_DOUBLE_EQUAL(g[1], 4 * a + 2 * X, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(g[2], g[0], 1e-15);
	CU_ASSERT_DOUBLE_EQUAL(g[3], 4 * 1.0 + 2 * X, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(z[1], z[0], 1e-15);
}

/* A scenario costed into a plan (hybrid/plan.c), against the formulas by
 * hand. Llama 3 8B, 2048 tokens, dp 2 x pp 4 x tp 2 on 2 nodes of 8 H100:
 * replica r, stage s, tensor rank j is GPU (4 r + s) 2 + j, so replica 0
 * fills node 0 and replica 1 node 1.
 * - The stages' computes add up to the model's iteration on one tensor
 *   rank (every layer in exactly one chunk).
 * - A p2p transfer inside a node: 3 us + 2048 x 4096 x 2 / 2 bytes at
 *   450 GB/s.
 * - Tensor parallelism: 8 blocks a stage, 2 all-reduces of the 2048 x 4096
 *   x 2 bytes forward (4 backward with full recomputation, 2 here) over
 *   2 ranks: 2 (2 - 1)(3 us + S / (2 x 450 GB/s)) each.
 * - Data parallelism: the two replicas of a stage on two nodes, one rank
 *   a node: the reduce-scatter is the inter-node ring alone, (2 - 1)(5 us +
 *   S / (2 B)), B = 8 NICs x 50 GB/s over 8 GPUs, S = 4 bytes a parameter
 *   of the stage; so the stages' parameters are recovered from their
 *   reduction times and add up to the rank's model. */
/* Context parallelism, by hand against a job without it: cp = 2 at 2048
 * tokens (A) and cp = 1 at 1024 tokens with two replicas (B), both on two
 * nodes of one H100 at 1 Gbit/s, tp = 1, pp = 1, gpt3-1.3b (16 heads of
 * 128, 24 blocks). A rank of A runs B's operations at its 1024 tokens, and its
 * attention once more (its queries against the other rank's keys): A's
 * compute is B's plus B's attention share, that share doubled. Its ring
 * passes a chunk's keys and values, 2 x 1024 x 2048 x 2 bytes forward
 * (twice that backward: and their gradients) over the network at 1/8
 * GB/s plus 5 us, each step overlapping one chunk's attention (B's a
 * block), 24 blocks: A's fixed time is 24 (hop - B's attention a block),
 * B's none (no tensor ranks). The gradients are reduced over the same two
 * GPUs, the same bytes: the same times. */
/* Fused attention keeps no attention core: a micro-batch's activations
 * under `attention = flash` are selective recomputation's, and lose
 * against `unfused` exactly Korthikanti et al.'s core, 5 a s^2 bytes a
 * sample and block (the softmax's bf16 output, the dropout's 1-byte mask
 * and its bf16 output): GPT-3 125M, a = 12 heads, s = 2,048, micro-batch
 * 2, 12 blocks without recomputation, the one block being recomputed under
 * full recomputation. */
static void test_flash_memory(void)
{
	const char *rec[] = { "none", "selective", "full" }, *att[] = { "flash", "unfused" };
	double act[3][2];
	for (int r = 0; r < 3; r++)
		for (int f = 0; f < 2; f++) {
			char ini[512];
			snprintf(ini, sizeof ini,
				 "[hybrid]\ndp = 1\npp = 1\ntp = 1\nmicro_batch = 2\nmicro_batches = 1\n[model]\nname = gpt3-125m\n"
				 "recompute = %s\nattention = %s\n[nodes.n]\ncount = 1\ngpus_per_node = 1\n"
				 "gpu = h200\n[intra_node]\nbandwidth = 450 GB/s\n[network]\nnics_per_node = 1\n"
				 "bandwidth = 400 Gbit/s\n",
				 rec[r], att[f]);
			char *path = write_temp(ini);
			lbs_error err = { 0 };
			lbs_hy_scenario sc;
			lbs_hy_built b;
			CU_ASSERT_FATAL(lbs_hy_scenario_load(&sc, path, NULL, 0, &err) == LBS_OK);
			CU_ASSERT_FATAL(lbs_hy_plan_build(&sc, &b, &err) == LBS_OK);
			act[r][f] = b.act_bytes[0];
			lbs_hy_built_free(&b);
			lbs_hy_scenario_destroy(&sc);
			unlink(path);
			free(path);
		}
	double core = 5.0 * 12 * 2048.0 * 2048.0 * 2; /* a block's, micro-batch 2 */
	CU_ASSERT_DOUBLE_EQUAL(act[0][1] - act[0][0], 12 * core, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(act[0][0], act[1][0], 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(act[1][0], act[1][1], 1e-6); /* selective keeps no core either way */
	CU_ASSERT_DOUBLE_EQUAL(act[2][1] - act[2][0], core, 1e-6);
	CU_ASSERT(act[2][0] < act[1][0]);
}

static void test_context_parallel(void)
{
#define CP_JOB(DP, CP, S)                                                                                   \
	"[hybrid]\ndp = " DP "\ncp = " CP "\nmicro_batches = 2\nzero_stage = 0\n[model]\nname = gpt3-1.3b\n"      \
	"sequence_length = " S "\nrecompute = selective\n[nodes.n]\ncount = 2\ngpus_per_node = 1\ngpu = h100-sxm\n" \
	"[intra_node]\nbandwidth = 450 GB/s\n[network]\nnics_per_node = 1\nbandwidth = 1 Gbit/s\nlatency = 5 us\n"
	const char *ia = CP_JOB("1", "2", "2048"), *ib = CP_JOB("2", "1", "1024");
#undef CP_JOB
	char *pa = write_temp(ia), *pb = write_temp(ib);
	lbs_error err = { 0 };
	lbs_hy_scenario sa, sb;
	lbs_hy_built a, b;
	CU_ASSERT_FATAL(lbs_hy_scenario_load(&sa, pa, NULL, 0, &err) == LBS_OK);
	CU_ASSERT_FATAL(lbs_hy_scenario_load(&sb, pb, NULL, 0, &err) == LBS_OK);
	CU_ASSERT_FATAL(lbs_hy_plan_build(&sa, &a, &err) == LBS_OK);
	CU_ASSERT_FATAL(lbs_hy_plan_build(&sb, &b, &err) == LBS_OK);
	const lbs_hy_plan *A = &a.plan, *B = &b.plan;
	CU_ASSERT_EQUAL(A->cp, 2);
	CU_ASSERT_DOUBLE_EQUAL(A->fwd_s[0], B->fwd_s[0] + B->fwd_att_s[0], 1e-12 * A->fwd_s[0]);
	CU_ASSERT_DOUBLE_EQUAL(A->bwd_s[0], B->bwd_s[0] + B->bwd_att_s[0], 1e-12 * A->bwd_s[0]);
	CU_ASSERT_DOUBLE_EQUAL(A->fwd_att_s[0], 2 * B->fwd_att_s[0], 1e-12 * A->fwd_att_s[0]);
	CU_ASSERT(B->fwd_att_s[0] > 0);
	double kv = 2.0 * 1024 * 2048 * 2, bw = 1e9 / 8;
	CU_ASSERT_DOUBLE_EQUAL(B->fwd_fixed_s[0], 0, 1e-18);
	CU_ASSERT_DOUBLE_EQUAL(A->fwd_fixed_s[0], 24 * (5e-6 + kv / bw) - B->fwd_att_s[0], 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(A->bwd_fixed_s[0], 24 * (5e-6 + 2 * kv / bw) - B->bwd_att_s[0], 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(A->grad_s[0], B->grad_s[0], 1e-15);
	CU_ASSERT_DOUBLE_EQUAL(a.act_bytes[0], b.act_bytes[0], 1e-6);
	CU_ASSERT_EQUAL(a.rank_of[0], 0);
	/* the all-to-all (Ulysses): the same compute; exposed a block, an
	 * all-to-all of q, k and v (1024 tokens x (16 + 2 x 16) heads x 128 x
	 * 2 B) and one of the output (16 heads), each sending half to the
	 * other node: 24 x (2 x 5 us + (12,582,912 + 4,194,304) B / 2 / bw),
	 * forward and (selective recomputation) backward alike */
	const char *a2a[1] = { "hybrid.cp_comm=a2a" };
	lbs_hy_scenario su;
	lbs_hy_built u;
	CU_ASSERT_FATAL(lbs_hy_scenario_load(&su, pa, a2a, 1, &err) == LBS_OK);
	CU_ASSERT_FATAL(lbs_hy_plan_build(&su, &u, &err) == LBS_OK);
	CU_ASSERT_DOUBLE_EQUAL(u.plan.fwd_s[0], A->fwd_s[0], 1e-15);
	CU_ASSERT_DOUBLE_EQUAL(u.plan.bwd_s[0], A->bwd_s[0], 1e-15);
	double x = 24 * (2 * 5e-6 + (12582912.0 + 4194304.0) / 2 / bw);
	CU_ASSERT_DOUBLE_EQUAL(u.plan.fwd_fixed_s[0], x, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(u.plan.bwd_fixed_s[0], x, 1e-12);
	lbs_hy_built_free(&u);
	lbs_hy_scenario_destroy(&su);
	/* refused where a tensor rank's heads do not split into cp */
	const char *odd[4] = { "hybrid.cp_comm=a2a", "model.name=llama-like-small", "hybrid.cp=4", "nodes.n.count=4" };
	CU_ASSERT_EQUAL(lbs_hy_scenario_load(&su, pa, odd, 4, &err), LBS_EINPUT); /* 2 key/value heads, cp 4 */
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cp_comm"));
	lbs_hy_built_free(&a);
	lbs_hy_built_free(&b);
	lbs_hy_scenario_destroy(&sa);
	lbs_hy_scenario_destroy(&sb);
	unlink(pa);
	unlink(pb);
	free(pa);
	free(pb);
}

/* Expert parallelism, by hand. Two replicas of one stage form an expert
 * group; each compute is followed by the group's all-to-alls (0.1 s
 * forward, 0.2 s backward), which end when both have computed. Forward 1
 * s, backward 2 s, two micro-batches (F0 B0 F1 B1), replica 1 at half
 * speed: F0 ends at max(1, 2) + 0.1 = 2.1, B0 at 2.1 + max(2, 4) + 0.2 =
 * 6.3, F1 at 8.4, B1 at 12.6: the step. Replica 0 computes 6 s, waits for
 * replica 1 1 + 2 + 1 + 2 = 6 s and exchanges 0.6 s. Without the experts'
 * coupling the replicas meet only at the (free) reduction: 12 s. The
 * simulated trace, each compute holding its exchange, replays exactly
 * under the what-if analysis (four replicas, two groups, two stages). */
static void test_expert_parallel(void)
{
	test_plan tp;
	test_plan_init(&tp, 2, 1, 1, 2, LBS_HY_1F1B, 1, 2);
	test_plan_slow_replica(&tp, 1, 0.5);
	double xf[2] = { 0.1, 0.1 }, xb[2] = { 0.2, 0.2 };
	CU_ASSERT_DOUBLE_EQUAL(test_plan_run(&tp.pl, 1, 0, NULL), 12, 1e-12);
	tp.pl.ep = 2;
	tp.pl.xchg_f_s = xf;
	tp.pl.xchg_b_s = xb;
	lbs_hy_account acc;
	CU_ASSERT_DOUBLE_EQUAL(test_plan_run(&tp.pl, 2, 0, &acc), 12.6, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(acc.compute_s, 6, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(acc.wait_s, 6, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(acc.comm_s, 0.6, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(acc.bubble_s, 0, 1e-12);
	/* an expert group of replicas running unlike micro-batches is refused */
	int m_of[2] = { 2, 3 };
	tp.pl.m_of = m_of;
	lbs_hy_graph gr;
	lbs_error err = { 0 };
	CU_ASSERT_EQUAL(lbs_hy_graph_build(&gr, &tp.pl, &err), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "expert group"));

	test_plan tw;
	test_plan_init(&tw, 4, 2, 1, 4, LBS_HY_1F1B, 0.01, 0.02);
	lbs_hy_plan *pl = &tw.pl;
	double wf[8], wb[8];
	for (size_t g = 0; g < 8; g++) {
		pl->p2p_s[g] = 0.001;
		pl->opt_s[g] = 0.005;
		pl->fwd_s[g] *= 1 + 0.1 * (double)(g % 3);
		wf[g] = 0.001 * (double)(1 + g / 4);
		wb[g] = 2 * wf[g];
	}
	pl->grad_s[0] = pl->grad_s[1] = 0.004;
	pl->ep = 2;
	pl->xchg_f_s = wf;
	pl->xchg_b_s = wb;
	test_plan_slow_replica(&tw, 3, 0.7);
	check_whatif(pl, 2);
	/* two groups at different micro-batches (a policy's split; the
	 * smaller group's exchange slots beyond its computes pad), p = 1,
	 * every replica at full speed: group 0 runs F0 B0, 1 + 0.1 + 2 + 0.2
	 * = 3.3 s, group 1 F0 B0 F1 B1, 6.6 s, the step; replica 0 computes 3
	 * s, exchanges 0.3 s and waits 3.3 s at the reduction */
	test_plan t2;
	test_plan_init(&t2, 4, 1, 1, 2, LBS_HY_1F1B, 1, 2);
	double yf[4] = { 0.1, 0.1, 0.1, 0.1 }, yb[4] = { 0.2, 0.2, 0.2, 0.2 };
	int m2[4] = { 1, 1, 2, 2 };
	t2.pl.ep = 2;
	t2.pl.xchg_f_s = yf;
	t2.pl.xchg_b_s = yb;
	t2.pl.m_of = m2;
	CU_ASSERT_DOUBLE_EQUAL(test_plan_run(&t2.pl, 1, 0, &acc), 6.6, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(acc.compute_s, 3, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(acc.comm_s, 0.3, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(acc.wait_s, 3.3, 1e-12);
}

/* Mixtral 8x7B on 16 GPUs of one a node (dp 2 x pp 8, ep 2): each block's
 * two all-to-alls forward (and two backward: selective recomputation)
 * send 1 / 2 of the rank's k s b h bf16 elements, 2 x 1024 x 4096 x 2 B,
 * to the other node: 5 us + 8,388,608 B / 0.125 GB/s each, 4 blocks a
 * stage. The gradients: the dense weights of stage 0 (the embedding,
 * 32,000 x 4096, and four blocks' attention 41,943,040, router 32,768 and
 * norms 8,192) all-reduced over the two replicas; the experts', whole on
 * each rank, over the one replica that holds them: nothing. */
static void test_expert_plan(void)
{
	const char *ini = "[hybrid]\ndp = 2\npp = 8\nep = 2\nmicro_batches = 8\nzero_stage = 0\n[model]\n"
			  "name = mixtral-8x7b\nsequence_length = 1024\nrecompute = selective\n[nodes.n]\ncount = 16\ngpus_per_node = 1\n"
			  "gpu = h100-sxm\n[intra_node]\nbandwidth = 450 GB/s\n[network]\nnics_per_node = 1\n"
			  "bandwidth = 1 Gbit/s\nlatency = 5 us\n";
	char *path = write_temp(ini);
	lbs_error err = { 0 };
	lbs_hy_scenario sc;
	lbs_hy_built b;
	CU_ASSERT_FATAL(lbs_hy_scenario_load(&sc, path, NULL, 0, &err) == LBS_OK);
	if (lbs_hy_plan_build(&sc, &b, &err) != LBS_OK) {
		fprintf(stderr, "\n%s\n", err.msg);
		CU_FAIL_FATAL("plan");
	}
	const lbs_hy_plan *pl = &b.plan;
	double bw = 1e9 / 8, a2a = 5e-6 + 0.5 * (2.0 * 1024 * 4096 * 2) / bw;
	CU_ASSERT_EQUAL(pl->ep, 2);
	CU_ASSERT_DOUBLE_EQUAL(pl->xchg_f_s[0], 4 * 2 * a2a, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(pl->xchg_b_s[0], 4 * 2 * a2a, 1e-12);
	double dense = 32000.0 * 4096 + 4 * (41943040.0 + 32768 + 8192);
	CU_ASSERT_DOUBLE_EQUAL(pl->grad_s[0], 2 * (5e-6 + dense * sc.job.grad_bytes / 2 / bw), 1e-9);
	/* unbalanced routing (expert_gini 0.2): the shares of each block's
	 * experts drawn from the run's stream, the group's most loaded GPU at
	 * 2 max(its four experts' shares) of the mean; it receives that much
	 * more in each all-to-all, and its experts work as much more */
	const char *gini[1] = { "model.expert_gini=0.2" };
	lbs_hy_scenario sg;
	lbs_hy_built bg;
	CU_ASSERT_FATAL(lbs_hy_scenario_load(&sg, path, gini, 1, &err) == LBS_OK);
	CU_ASSERT_FATAL(lbs_hy_plan_build(&sg, &bg, &err) == LBS_OK);
	gsl_rng *r = lbs_rng_stream((uint64_t)sg.run.seed, "hybrid-experts", "mixtral-8x7b", 0, &err);
	CU_ASSERT_FATAL(r != NULL);
	double x = 0, share[8];
	for (int l = 0; l < 4; l++) { /* stage 0's blocks */
		lbs_hy_expert_shares(8, 0.2, r, share);
		double lo = share[0] + share[1] + share[2] + share[3], hi = 1 - lo, load = 2 * (lo > hi ? lo : hi);
		x += 2 * (5e-6 + 0.5 * load * (2.0 * 1024 * 4096 * 2) / bw);
	}
	gsl_rng_free(r);
	CU_ASSERT_DOUBLE_EQUAL(bg.plan.xchg_f_s[0], x, 1e-12);
	CU_ASSERT(bg.plan.xchg_f_s[0] > pl->xchg_f_s[0]);
	CU_ASSERT(bg.plan.fwd_s[0] > pl->fwd_s[0] && bg.plan.bwd_s[0] > pl->bwd_s[0]);
	lbs_hy_built_free(&bg);
	lbs_hy_scenario_destroy(&sg);
	/* a capacity factor of 1.1: an expert takes at most 1.1 times the
	 * mean, a GPU's load is its four experts' capped shares (times 8)
	 * over 4; what the caps cut is dropped, over all 32 blocks */
	const char *cap[2] = { "model.expert_gini=0.2", "model.expert_capacity=1.1" };
	CU_ASSERT_FATAL(lbs_hy_scenario_load(&sg, path, cap, 2, &err) == LBS_OK);
	CU_ASSERT_FATAL(lbs_hy_plan_build(&sg, &bg, &err) == LBS_OK);
	r = lbs_rng_stream((uint64_t)sg.run.seed, "hybrid-experts", "mixtral-8x7b", 0, &err);
	double drop = 0;
	x = 0;
	for (int l = 0; l < 32; l++) {
		lbs_hy_expert_shares(8, 0.2, r, share);
		double half[2] = { 0, 0 };
		for (int e = 0; e < 8; e++) {
			half[e / 4] += fmin(share[e] * 8, 1.1) / 4;
			drop += fmax(0, share[e] - 1.1 / 8) / 32;
		}
		if (l < 4)
			x += 2 * (5e-6 + 0.5 * fmax(half[0], half[1]) * (2.0 * 1024 * 4096 * 2) / bw);
	}
	gsl_rng_free(r);
	CU_ASSERT_DOUBLE_EQUAL(bg.plan.xchg_f_s[0], x, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(bg.expert_dropped, drop, 1e-12);
	CU_ASSERT(drop > 0);
	lbs_hy_built_free(&bg);
	lbs_hy_scenario_destroy(&sg);
	/* with context parallelism (cp 2 on 32 GPUs): the dense gradients over
	 * the 2 x 2 replicas' context ranks, four nodes; the experts' over the
	 * two context ranks of the one replica holding them, each stage-0 GPU's
	 * 4 blocks x 4 experts x 3 x 4096 x 14336 */
	const char *cpx[2] = { "hybrid.cp=2", "nodes.n.count=32" };
	CU_ASSERT_FATAL(lbs_hy_scenario_load(&sg, path, cpx, 2, &err) == LBS_OK);
	if (lbs_hy_plan_build(&sg, &bg, &err) != LBS_OK) {
		fprintf(stderr, "\n%s\n", err.msg);
		CU_FAIL_FATAL("plan with cp");
	}
	double gb = sg.job.grad_bytes, ex = 4.0 * 4 * 3 * 4096 * 14336;
	CU_ASSERT_DOUBLE_EQUAL(bg.plan.grad_s[0], 2 * 3 * (5e-6 + dense * gb / 4 / bw) + 2 * (5e-6 + ex * gb / 2 / bw), 1e-9);
	lbs_hy_built_free(&bg);
	lbs_hy_scenario_destroy(&sg);
	/* without expert parallelism every GPU holds every expert: no effect */
	const char *g1[3] = { "model.expert_gini=0.2", "hybrid.ep=1", "hybrid.zero_stage=1" };
	const char *g0[2] = { "hybrid.ep=1", "hybrid.zero_stage=1" };
	lbs_hy_built b1, b0;
	CU_ASSERT_FATAL(lbs_hy_scenario_load(&sg, path, g1, 3, &err) == LBS_OK);
	CU_ASSERT_FATAL(lbs_hy_plan_build(&sg, &b1, &err) == LBS_OK);
	lbs_hy_scenario_destroy(&sg);
	CU_ASSERT_FATAL(lbs_hy_scenario_load(&sg, path, g0, 2, &err) == LBS_OK);
	CU_ASSERT_FATAL(lbs_hy_plan_build(&sg, &b0, &err) == LBS_OK);
	CU_ASSERT_DOUBLE_EQUAL(b1.plan.fwd_s[0], b0.plan.fwd_s[0], 0);
	lbs_hy_built_free(&b1);
	lbs_hy_built_free(&b0);
	lbs_hy_scenario_destroy(&sg);
	lbs_hy_built_free(&b);
	lbs_hy_scenario_destroy(&sc);
	/* refused, naming the key */
	const char *bad[] = { "hybrid.ep=4", "hybrid.ep=3", "model.name=llama3-8b", "hybrid_policy.name=resplit" };
	const char *why[] = { "divide dp", "experts it divides", "experts it divides", "not modelled with expert" };
	for (int i = 0; i < 4; i++) {
		const char *set[1] = { bad[i] };
		CU_ASSERT_EQUAL(lbs_hy_scenario_load(&sc, path, set, 1, &err), LBS_EINPUT);
		CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, why[i]));
		/* the key, as the file names it or as --set did */
		if (i == 3)
			CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "hybrid_policy.name"))
		else
			CU_ASSERT(strstr(err.msg, "[hybrid] ep") || strstr(err.msg, "hybrid.ep"));
	}
	unlink(path);
	free(path);
}

/* [model] expert_pad: every expert's input padded to its capacity C
 * (Megatron-Core's moe_pad_expert_input_to_capacity). Mixtral 8x7B at
 * 1,024 tokens routes k s = 2,048 token copies a sample; padded, each of
 * the 8 experts takes ceil(C 2048 / 8) of them: 320 at C = 1.25 (2,560 in
 * all), 333 at C = 1.3 (2,664). The padded rows are computed and kept,
 * the all-to-alls carry them, and the routing no longer matters: every
 * GPU works its experts' capacity. Unpadded at the same capacity, no GPU
 * takes more than C times the mean, so no step is longer than padded. */
static void test_expert_pad(void)
{
	lbs_error err = { 0 };
	const double pads[2] = { 1.25, 1.3 }, tokens[2] = { 2560, 2664 };
	for (int i = 0; i < 2; i++) {
		lbs_net n0, n1;
		lbs_net_opts o = { .seq_len = 1024 };
		CU_ASSERT_FATAL(lbs_net_create_opts(&n0, "mixtral-8x7b", &o, &err) == LBS_OK);
		o.expert_pad = pads[i];
		CU_ASSERT_FATAL(lbs_net_create_opts(&n1, "mixtral-8x7b", &o, &err) == LBS_OK);
		CU_ASSERT_EQUAL_FATAL(n0.n_layers, n1.n_layers);
		int experts = 0;
		for (size_t l = 0; l < n1.n_layers; l++) {
			const lbs_layer *a = &n0.layers[l], *b = &n1.layers[l];
			if (a->expert && a->kind == LBS_LAYER_LINEAR) {
				experts++;
				CU_ASSERT_EQUAL(a->tokens, 2048);
				CU_ASSERT_EQUAL(b->tokens, (int)tokens[i]);
				/* what it keeps grows with its rows (down keeps f of each) */
				CU_ASSERT_EQUAL(a->act_per_sample * (int64_t)tokens[i], b->act_per_sample * 2048);
			} else if (!strstr(a->name, "dispatch") && !strstr(a->name, "combine") && !a->expert) {
				CU_ASSERT_EQUAL(a->act_bytes, b->act_bytes); /* the rest as it was */
			}
		}
		CU_ASSERT_EQUAL(experts, 3 * 32); /* gate, up, down in 32 blocks */
		lbs_net_destroy(&n0);
		lbs_net_destroy(&n1);
	}
	lbs_net n;
	lbs_net_opts dense = { .seq_len = 1024, .expert_pad = 1.25 };
	CU_ASSERT_EQUAL(lbs_net_create_opts(&n, "llama3-8b", &dense, &err), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "mixture of experts"));
	/* the plan: 16 GPUs, ep 2, 1 Gbit/s between nodes, as test_expert_plan */
	const char *ini = "[hybrid]\ndp = 2\npp = 8\nep = 2\nmicro_batches = 8\nzero_stage = 0\n[model]\n"
			  "name = mixtral-8x7b\nsequence_length = 1024\nrecompute = selective\n[nodes.n]\ncount = 16\n"
			  "gpus_per_node = 1\ngpu = h100-sxm\n[intra_node]\nbandwidth = 450 GB/s\n[network]\n"
			  "nics_per_node = 1\nbandwidth = 1 Gbit/s\nlatency = 5 us\n";
	char *path = write_temp(ini);
	const char *p0[2] = { "model.expert_capacity=1.25", "model.expert_pad=yes" };
	const char *pg[3] = { "model.expert_capacity=1.25", "model.expert_pad=yes", "model.expert_gini=0.3" };
	const char *ug[2] = { "model.expert_capacity=1.25", "model.expert_gini=0.3" };
	const char **sets[4] = { NULL, p0, pg, ug };
	const int nsets[4] = { 0, 2, 3, 2 };
	lbs_hy_scenario sc[4];
	lbs_hy_built b[4];
	for (int i = 0; i < 4; i++) {
		CU_ASSERT_FATAL(lbs_hy_scenario_load(&sc[i], path, sets[i], nsets[i], &err) == LBS_OK);
		if (lbs_hy_plan_build(&sc[i], &b[i], &err) != LBS_OK) {
			fprintf(stderr, "\n%s\n", err.msg);
			CU_FAIL_FATAL("plan");
		}
	}
	/* stage 0's 4 blocks, two all-to-alls each forward, every GPU sending
	 * 1.25 times the balanced k s b h elements, half of them across */
	double bw = 1e9 / 8, a2a = 5e-6 + 0.5 * 1.25 * (2.0 * 1024 * 4096 * 2) / bw;
	CU_ASSERT_DOUBLE_EQUAL(b[1].plan.xchg_f_s[0], 4 * 2 * a2a, 1e-12);
	CU_ASSERT(b[1].plan.fwd_s[0] > b[0].plan.fwd_s[0] && b[1].plan.bwd_s[0] > b[0].plan.bwd_s[0]);
	/* padded, unbalanced routing changes nothing but what is dropped */
	for (size_t g = 0; g < 16; g++) {
		CU_ASSERT_EQUAL(b[2].plan.fwd_s[g], b[1].plan.fwd_s[g]);
		CU_ASSERT_EQUAL(b[2].plan.bwd_s[g], b[1].plan.bwd_s[g]);
		CU_ASSERT_EQUAL(b[2].plan.xchg_f_s[g], b[1].plan.xchg_f_s[g]);
		/* unpadded, the most loaded GPU holds at most C times the mean */
		CU_ASSERT(b[3].plan.fwd_s[g] <= b[2].plan.fwd_s[g] && b[3].plan.bwd_s[g] <= b[2].plan.bwd_s[g]);
		CU_ASSERT(b[3].plan.xchg_f_s[g] <= b[2].plan.xchg_f_s[g] + 1e-12);
	}
	CU_ASSERT(b[2].expert_dropped > 0 && b[2].expert_dropped == b[3].expert_dropped);
	CU_ASSERT(b[1].mem_bytes[0] > b[0].mem_bytes[0]);
	for (int i = 0; i < 4; i++) {
		lbs_hy_built_free(&b[i]);
		lbs_hy_scenario_destroy(&sc[i]);
	}
	/* refused: padding without a capacity; on a dense model */
	const char *nocap[1] = { "model.expert_pad=yes" };
	CU_ASSERT_EQUAL(lbs_hy_scenario_load(&sc[0], path, nocap, 1, &err), LBS_EINPUT);
	CU_ASSERT(strstr(err.msg, "model.expert_pad") && strstr(err.msg, "expert_capacity"));
	const char *onDense[3] = { "model.name=llama3-8b", "hybrid.ep=1", "model.expert_pad=yes" };
	CU_ASSERT_EQUAL(lbs_hy_scenario_load(&sc[0], path, onDense, 3, &err), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no mixture of experts"));
	unlink(path);
	free(path);
}

/* [model] op_overhead: every operation of a micro-batch's forward (each
 * layer's forward GEMM, or its element-wise pass) pays it once, so 1 ms
 * more lengthens the forward by 1 ms times their count, counted here from
 * the model's layers (GPT-3 1.3B, one stage, unfused attention, no
 * recomputation), and the optimizer by 1 ms. */
static void test_op_overhead(void)
{
	const char *ini = "[hybrid]\ndp = 1\nmicro_batches = 1\n[model]\nname = gpt3-1.3b\nrecompute = none\n"
			  "attention = unfused\nop_overhead = 0 s\n[nodes.n]\ncount = 1\ngpus_per_node = 1\n"
			  "gpu = h100-sxm\n[intra_node]\nbandwidth = 450 GB/s\n[network]\nbandwidth = 100 Gbit/s\n";
	char *path = write_temp(ini);
	lbs_error err = { 0 };
	lbs_hy_scenario s0, s1;
	lbs_hy_built b0, b1;
	const char *ms[1] = { "model.op_overhead=1 ms" };
	CU_ASSERT_FATAL(lbs_hy_scenario_load(&s0, path, NULL, 0, &err) == LBS_OK);
	CU_ASSERT_FATAL(lbs_hy_scenario_load(&s1, path, ms, 1, &err) == LBS_OK);
	CU_ASSERT_FATAL(lbs_hy_plan_build(&s0, &b0, &err) == LBS_OK);
	CU_ASSERT_FATAL(lbs_hy_plan_build(&s1, &b1, &err) == LBS_OK);
	lbs_net net;
	CU_ASSERT_FATAL(lbs_net_create_opts(&net, "gpt3-1.3b", &(lbs_net_opts){ .recompute = LBS_RECOMPUTE_NONE }, &err) ==
			LBS_OK);
	int n = 0;
	for (size_t i = 0; i < net.n_layers; i++) {
		const lbs_layer *l = &net.layers[i];
		lbs_gemm g[LBS_GEMM_PASSES];
		n += lbs_layer_gemms(l, 1, g) ? 1 : (l->fwd_flops > 0 || l->fwd_bytes > 0);
	}
	CU_ASSERT(n > 24 * 10);
	CU_ASSERT_DOUBLE_EQUAL(b1.plan.fwd_s[0] - b0.plan.fwd_s[0], n * 1e-3, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(b1.plan.opt_s[0] - b0.plan.opt_s[0], 1e-3, 1e-12);
	lbs_net_destroy(&net);
	lbs_hy_built_free(&b0);
	lbs_hy_built_free(&b1);
	lbs_hy_scenario_destroy(&s0);
	lbs_hy_scenario_destroy(&s1);
	unlink(path);
	free(path);
}

/* The drawn shares of a block's experts: they sum to 1, and their Gini
 * coefficient averages the one asked for (4,000 blocks of 8 experts at
 * 0.2: within 0.005, about five standard errors of the mean); 0: equal. */
static void test_expert_shares(void)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
	gsl_rng_set(r, 7);
	double share[8], mean = 0;
	for (int k = 0; k < 4000; k++) {
		lbs_hy_expert_shares(8, 0.2, r, share);
		double sum = 0, diff = 0;
		for (int i = 0; i < 8; i++) {
			sum += share[i];
			for (int j = 0; j < 8; j++)
				diff += fabs(share[i] - share[j]);
		}
		CU_ASSERT_DOUBLE_EQUAL(sum, 1, 1e-12);
		mean += diff / (2.0 * 8 * sum) / 4000;
	}
	CU_ASSERT_DOUBLE_EQUAL(mean, 0.2, 0.005);
	lbs_hy_expert_shares(8, 0, r, share);
	for (int i = 0; i < 8; i++)
		CU_ASSERT_DOUBLE_EQUAL(share[i], 0.125, 0);
	gsl_rng_free(r);
}

static void test_plan_costs(void)
{
	char *path = write_temp(TEST_HYBRID_8B);
	lbs_error err = { 0 };
	lbs_hy_scenario sc;
	lbs_hy_built b;
	CU_ASSERT_FATAL(lbs_hy_scenario_load(&sc, path, NULL, 0, &err) == LBS_OK);
	if (lbs_hy_plan_build(&sc, &b, &err) != LBS_OK) {
		fprintf(stderr, "\n%s\n", err.msg);
		CU_FAIL_FATAL("plan");
	}
	const lbs_hy_plan *pl = &b.plan;
	lbs_net net;
	lbs_net_opts o = { .seq_len = 2048, .tp = 2, .recompute = LBS_RECOMPUTE_SELECTIVE };
	CU_ASSERT_FATAL(lbs_net_create_opts(&net, "llama3-8b", &o, &err) == LBS_OK);
	size_t nfig;
	const lbs_gpu_figure *fig = lbs_gpu_figures(&nfig);
	double *obs = malloc(nfig * sizeof *obs), rms;
	for (size_t i = 0; i < nfig; i++)
		obs[i] = fig[i].tokens_per_s;
	lbs_gpu_eff e;
	CU_ASSERT_FATAL(lbs_gpu_fit(fig, obs, nfig, &e, &rms, &err) == LBS_OK);
	e.overhead = LBS_HY_OP_OVERHEAD_S; /* the engine's, op_overhead unset: measured, not the fit's */
	double whole = lbs_gpu_iteration_time(lbs_gpu_find("h100-sxm"), &e, &net, 1, true), sum = 0;
	for (int s = 0; s < 4; s++)
		sum += pl->fwd_s[s] + pl->bwd_s[s];
	CU_ASSERT_DOUBLE_EQUAL(sum / whole, 1, 1e-12);
	double act = 2048.0 * 4096 * 2;
	CU_ASSERT_DOUBLE_EQUAL(pl->p2p_s[0], 3e-6 + act / 2 / 450e9, 1e-18);
	CU_ASSERT_DOUBLE_EQUAL(pl->fwd_fixed_s[1], 8 * 2 * 2 * (3e-6 + act / (2 * 450e9)), 1e-15);
	CU_ASSERT_DOUBLE_EQUAL(pl->bwd_fixed_s[1], pl->fwd_fixed_s[1], 1e-18);
	double params = 0, B = 8 * 50e9 / 8;
	for (int s = 0; s < 4; s++) {
		params += (pl->grad_s[s] - 5e-6) * 2 * B / 4;
		/* the all-gather moves bf16 parameters: half the bytes */
		CU_ASSERT_DOUBLE_EQUAL(pl->gather_s[s] - 5e-6, (pl->grad_s[s] - 5e-6) / 2, 1e-15);
	}
	CU_ASSERT_DOUBLE_EQUAL(params / (double)net.params, 1, 1e-9);
	CU_ASSERT_EQUAL(b.rank_of[5], (4 * 1 + 1) * 2); /* replica 1, stage 1 */
	/* attention = unfused: the computes add up to the model's iteration
	 * without fused attention (the whole score and context GEMMs, the
	 * softmax and its bytes), which takes longer */
	char *path2 = write_temp("[hybrid]\ndp = 2\npp = 4\ntp = 2\nmicro_batches = 8\n[model]\nname = llama3-8b\n"
				 "sequence_length = 2048\nattention = unfused\n[nodes.n]\ncount = 2\ngpu = h100-sxm\n"
				 "[intra_node]\nbandwidth = 450 GB/s\nlatency = 3 us\n[network]\nnics_per_node = 8\n"
				 "bandwidth = 400 Gbit/s\nlatency = 5 us\n");
	lbs_hy_scenario sc2;
	lbs_hy_built b2;
	CU_ASSERT_FATAL(lbs_hy_scenario_load(&sc2, path2, NULL, 0, &err) == LBS_OK);
	CU_ASSERT_FATAL(lbs_hy_plan_build(&sc2, &b2, &err) == LBS_OK);
	double unfused = lbs_gpu_iteration_time(lbs_gpu_find("h100-sxm"), &e, &net, 1, false), sum2 = 0;
	for (int s = 0; s < 4; s++)
		sum2 += b2.plan.fwd_s[s] + b2.plan.bwd_s[s];
	CU_ASSERT_DOUBLE_EQUAL(sum2 / unfused, 1, 1e-12);
	CU_ASSERT(unfused > whole * 1.01);
	lbs_hy_built_free(&b2);
	lbs_hy_scenario_destroy(&sc2);
	unlink(path2);
	free(path2);
	free(obs);
	lbs_net_destroy(&net);
	lbs_hy_built_free(&b);
	lbs_hy_scenario_destroy(&sc);
	unlink(path);
	free(path);
}

/* [failslows]: episodes drawn as a Poisson process per unit. 16 GPUs
 * (2 nodes of 8), per = gpu, a mean gap of 1 h over a 50 h horizon: the
 * count is Poisson of mean 16 x 50 = 800 (sd 28.3), the lengths
 * exponential of mean 600 s (the mean of n within 600 / sqrt(n) x 4);
 * every one of one GPU, inside the horizon, at 0.8, recorded with the
 * run's keys; the same seed draws the same, another seed others. per =
 * node: each a node's 8 GPUs. Refused: factor_min above factor, more than
 * 1024 episodes. */
static void test_failslows_drawn(void)
{
	char *path = write_temp(TEST_HYBRID_8B "[run]\nseed = 1\n[failslows.x]\nper = gpu\nmean_interval = 1 h\nmean_duration = 10 min\n"
					       "horizon = 50 h\n[failslow.named]\nstart = 0 s\nduration = 1 s\ngpus = 3\n"
					       "factor = 0.5\n");
	lbs_error err = { 0 };
	lbs_hy_scenario sc, again, other;
	CU_ASSERT_FATAL(lbs_hy_scenario_load(&sc, path, NULL, 0, &err) == LBS_OK);
	size_t n = sc.n_drawn;
	CU_ASSERT_EQUAL(sc.n_episodes, n + 1);
	CU_ASSERT(fabs((double)n - 800) < 4 * sqrt(800.0));
	double sum = 0;
	bool ok = true;
	for (size_t i = 1; i <= n; i++) {
		const lbs_hy_episode_spec *e = &sc.episodes[i];
		char *end;
		long long g = strtoll(e->gpus, &end, 10);
		ok = ok && *end == '\0' && g >= 0 && g < 16 && e->start_s >= 0 && e->start_s < 50 * 3600.0 &&
		     e->duration_s > 0 && e->factor == 0.8;
		sum += e->duration_s;
	}
	CU_ASSERT(ok);
	CU_ASSERT(fabs(sum / (double)n - 600) < 4 * 600 / sqrt((double)n));
	size_t recorded = 0;
	for (size_t i = 0; i < sc.n_config; i++)
		recorded += !strncmp(sc.config[i].section, "failslow.x-", 11);
	CU_ASSERT_EQUAL(recorded, 5 * n); /* kind, start, duration, gpus, factor */
	char last[32];
	snprintf(last, sizeof last, "x-%zu", n - 1);
	CU_ASSERT_STRING_EQUAL(sc.episodes[1].name, "x-0");
	CU_ASSERT_STRING_EQUAL(sc.episodes[n].name, last);
	CU_ASSERT_EQUAL(sc.episodes[1].kind, LBS_HY_FS_COMPUTE);
	CU_ASSERT_FATAL(lbs_hy_scenario_load(&again, path, NULL, 0, &err) == LBS_OK);
	const char *seed2[] = { "run.seed=2" };
	CU_ASSERT_FATAL(lbs_hy_scenario_load(&other, path, seed2, 1, &err) == LBS_OK);
	CU_ASSERT_EQUAL(again.n_episodes, sc.n_episodes);
	bool same = again.n_episodes == sc.n_episodes, differ = other.n_episodes != sc.n_episodes;
	for (size_t i = 0; same && i < sc.n_episodes; i++)
		same = again.episodes[i].start_s == sc.episodes[i].start_s &&
		       again.episodes[i].duration_s == sc.episodes[i].duration_s &&
		       !strcmp(again.episodes[i].gpus, sc.episodes[i].gpus);
	for (size_t i = 1; !differ && i < sc.n_episodes; i++)
		differ = other.episodes[i].start_s != sc.episodes[i].start_s;
	CU_ASSERT(same);
	CU_ASSERT(differ);
	lbs_hy_scenario_destroy(&sc);
	lbs_hy_scenario_destroy(&again);
	lbs_hy_scenario_destroy(&other);
	/* per = node, factors uniform on [0.5, 0.9] */
	const char *node[] = { "failslows.x.per=node", "failslows.x.factor_min=0.5", "failslows.x.factor=0.9",
			       "failslows.x.kind=network" };
	CU_ASSERT_FATAL(lbs_hy_scenario_load(&sc, path, node, 4, &err) == LBS_OK);
	ok = sc.n_drawn > 0;
	for (size_t i = 1; i < sc.n_episodes; i++)
		ok = ok && (!strcmp(sc.episodes[i].gpus, "0-7") || !strcmp(sc.episodes[i].gpus, "8-15")) &&
		     sc.episodes[i].kind == LBS_HY_FS_NETWORK &&
		     sc.episodes[i].factor >= 0.5 && sc.episodes[i].factor <= 0.9;
	CU_ASSERT(ok);
	CU_ASSERT(fabs((double)sc.n_drawn - 100) < 4 * 10);
	lbs_hy_scenario_destroy(&sc);
	const char *bad[] = { "failslows.x.factor_min=0.9" };
	CU_ASSERT_EQUAL(lbs_hy_scenario_load(&sc, path, bad, 1, &err), LBS_EINPUT);
	CU_ASSERT(strstr(err.msg, "factor_min") && strstr(err.msg, "above factor"));
	const char *many[] = { "failslows.x.horizon=100 h" };
	CU_ASSERT_EQUAL(lbs_hy_scenario_load(&sc, path, many, 1, &err), LBS_EINPUT);
	CU_ASSERT(strstr(err.msg, "horizon") && strstr(err.msg, "more than 1024"));
	unlink(path);
	free(path);
}

/* Bad plans are refused, naming what is wrong. */
static void test_plan_errors(void)
{
	test_plan tp;
	lbs_error err = { 0 };
	lbs_hy_graph gr;
	test_plan_init(&tp, 1, 4, 2, 6, LBS_HY_INTERLEAVED, 1, 2);
	CU_ASSERT_EQUAL(lbs_hy_graph_build(&gr, &tp.pl, &err), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "multiple of the stages"));
	test_plan_init(&tp, 1, 4, 1, 8, LBS_HY_1F1B, 1, NAN);
	CU_ASSERT_EQUAL(lbs_hy_graph_build(&gr, &tp.pl, &err), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "finite"));
}

void suite_hybrid(void)
{
	static const test_case tests[] = {
		{ "GPipe and 1F1B bubble (p-1)/(m+p-1)", test_bubble_gpipe_1f1b },
		{ "interleaved 1F1B bubble (p-1)/(v m)", test_bubble_interleaved },
		{ "a slow stage, by hand", test_slow_stage },
		{ "a slow replica and a fail-slow episode, by hand", test_slow_replica },
		{ "a network fail-slow, by hand", test_network_failslow },
		{ "a trace times episodes (lbs_hy_least of one node), by hand", test_scaled_source },
		{ "the least of several nodes (lbs_hy_least), by hand", test_least_source },
		{ "bucketed reduction overlapping the backward pass", test_dp_overlap },
		{ "buckets within a chunk's last backward", test_dp_buckets },
		{ "the simulated trace replays exactly under whatif", test_whatif_consistency },
		{ "bad plans", test_plan_errors },
		{ "ring collectives, alpha-beta", test_ring_times },
		{ "tree all-reduce, alpha-beta", test_tree_times },
		{ "a scenario costed into a plan, by hand", test_plan_costs },
		{ "fused attention's activations without the attention core, by hand", test_flash_memory },
		{ "context parallelism against a job without it, by hand", test_context_parallel },
		{ "expert parallelism: the group's exchanges, by hand", test_expert_parallel },
		{ "expert parallelism costed: all-to-alls and reductions, by hand", test_expert_plan },
		{ "[model] expert_pad: experts padded to the capacity, by hand", test_expert_pad },
		{ "[model] op_overhead: once an operation, counted from the layers", test_op_overhead },
		{ "experts' shares of the routed tokens: their Gini coefficient", test_expert_shares },
		{ "fail-slow episodes drawn from rates", test_failslows_drawn },
		{ "the datasheet model by pass", test_pass_times },
		{ "ByteDance's traces replayed forward: no-delay and ideal steps", test_replay_consistency },
		{ "sequence lengths per micro-batch, by hand", test_lengths },
		{ "sequence lengths drawn: fixed, uniform, empirical, lognormal", test_length_draws },
	};
	add_suite("hybrid", tests, sizeof tests / sizeof tests[0]);
}
