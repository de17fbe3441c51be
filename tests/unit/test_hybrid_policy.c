/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Balancing hybrid-parallel jobs (hybrid/policy.h, hybrid/balance.h): the
 * engine running replicas of different micro-batch counts, the split by
 * speed, and the policies on hand-made jobs whose steps are worked out by
 * hand in each comment. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hybrid/balance.h"
#include "hybrid/hybrid.h"
#include "hybrid/policy.h"
#include "hybrid/scenario.h"
#include "models/nets.h"
#include "tests/unit/hybrid_plan.h"
#include "tests/unit/suites.h"

/* d x p groups under 1F1B, every micro-batch forward tf and backward tb
 * seconds on every stage, nothing else taking time; replica 0 at
 * availability a0. */
static void hp_init(test_plan *tp, int d, int p, int m, double tf, double tb, double a0)
{
	test_plan_init(tp, d, p, 1, m, LBS_HY_1F1B, tf, tb);
	test_plan_slow_replica(tp, 0, a0);
}

static double run_once(const lbs_hy_plan *pl)
{
	return test_plan_run(pl, 1, 0, NULL);
}

/* Replicas of their own micro-batch counts. One stage, forward 1 s and
 * backward 2 s: replica r's step is m_r x 3 s / a_r. Replica 0 at 0.5:
 * the even split 3 / 3 takes max(18, 9) = 18 s; 2 / 4 takes max(12, 12) =
 * 12 s. Two 1F1B stages: a replica takes (m_r + p - 1) x 3 s / a_r, so
 * 2 / 4 takes max(3 x 6, 5 x 3) = 18 s, 1 / 5 max(12, 18) = 18 s, 3 / 3
 * max(24, 12) = 24 s. The graph of 2 / 4 has the ops of m = 2 and m = 4
 * groups (the first padded to the second's count with LBS_HY_PAD slots):
 * 6 m + 6 each with p = 1 and d = 2 (2 m computes, m of each of
 * the four p2p kinds, a reduction, gc, layer-norm, embedding, clip,
 * optimizer). */
static void test_replica_counts(void)
{
	test_plan tp;
	hp_init(&tp, 2, 1, 3, 1, 2, 0.5);
	CU_ASSERT_DOUBLE_EQUAL(run_once(&tp.pl), 18, 1e-12);
	int m24[2] = { 2, 4 };
	tp.pl.m_of = m24;
	CU_ASSERT_DOUBLE_EQUAL(run_once(&tp.pl), 12, 1e-12);
	lbs_error err = { 0 };
	lbs_hy_graph gr;
	CU_ASSERT_FATAL(lbs_hy_graph_build(&gr, &tp.pl, &err) == LBS_OK);
	size_t real[2] = { 0, 0 };
	for (size_t g = 0; g < 2; g++)
		for (size_t l = 0; l < gr.per_group; l++)
			real[g] += gr.kind[lbs_hy_op(&gr, g, l)] != LBS_HY_PAD;
	CU_ASSERT_EQUAL(real[0], 6 * 2 + 6);
	CU_ASSERT_EQUAL(real[1], 6 * 4 + 6);
	CU_ASSERT_EQUAL(gr.per_group, 6 * 4 + 6);
	lbs_hy_graph_free(&gr);

	hp_init(&tp, 2, 2, 3, 1, 2, 0.5);
	CU_ASSERT_DOUBLE_EQUAL(run_once(&tp.pl), 24, 1e-12);
	tp.pl.m_of = m24;
	CU_ASSERT_DOUBLE_EQUAL(run_once(&tp.pl), 18, 1e-12);
	int m15[2] = { 1, 5 };
	tp.pl.m_of = m15;
	CU_ASSERT_DOUBLE_EQUAL(run_once(&tp.pl), 18, 1e-12);
	int bad[2] = { 0, 6 };
	tp.pl.m_of = bad;
	CU_ASSERT_EQUAL(lbs_hy_graph_build(&gr, &tp.pl, &err), LBS_EINPUT);
}

/* lbs_hy_split: speeds 1 and 2, M = 6: 2 and 4. Speeds 1, 1, 10, M = 6:
 * 0.5, 0.5, 5 -> by largest remainder (ties to the lower index) 1, 0, 5,
 * then the replica at 0 takes one from the largest: 1, 1, 4. A cap of 3 on
 * the fast one: 1.5, 1.5, 3 -> 2, 1, 3. Interleaving's quantum p = 2, M =
 * 8, speeds 1 and 3: 4 quanta as 1 and 3: 2 and 6. Caps holding less than
 * M: refused. */
static void test_split(void)
{
	int m[3];
	double v2[2] = { 1, 2 };
	CU_ASSERT_TRUE(lbs_hy_split(6, 2, 1, v2, NULL, m));
	CU_ASSERT(m[0] == 2 && m[1] == 4);
	double v3[3] = { 1, 1, 10 };
	CU_ASSERT_TRUE(lbs_hy_split(6, 3, 1, v3, NULL, m));
	CU_ASSERT(m[0] == 1 && m[1] == 1 && m[2] == 4);
	int64_t caps[3] = { 6, 6, 3 };
	CU_ASSERT_TRUE(lbs_hy_split(6, 3, 1, v3, caps, m));
	CU_ASSERT(m[0] == 2 && m[1] == 1 && m[2] == 3);
	double v13[2] = { 1, 3 };
	CU_ASSERT_TRUE(lbs_hy_split(8, 2, 2, v13, NULL, m));
	CU_ASSERT(m[0] == 2 && m[1] == 6);
	int64_t small[2] = { 2, 2 };
	CU_ASSERT_FALSE(lbs_hy_split(6, 2, 1, v2, small, m));
	double zero[2] = { 0, 1 };
	CU_ASSERT_FALSE(lbs_hy_split(6, 2, 1, zero, NULL, m));
	/* the replica speed: m_r over its slowest stage's compute time */
	double cs[2] = { 6, 12 };
	CU_ASSERT_DOUBLE_EQUAL(lbs_hy_replica_speed(3, 2, cs), 0.25, 1e-15);
}

/* A built job by hand for lbs_hy_balance: the plan of hp_init and memory
 * that holds anything. */
static void built_of(lbs_hy_built *b, const test_plan *tp, double *mem)
{
	memset(b, 0, sizeof *b);
	b->plan = tp->pl;
	size_t G = (size_t)(tp->pl.d * tp->pl.p);
	for (size_t g = 0; g < G; g++)
		mem[g] = 1, mem[G + g] = 0, mem[2 * G + g] = 1e9;
	b->mem_bytes = mem;
	b->act_bytes = mem + G;
	b->mem_cap = mem + 2 * G;
}

/* Runs `steps` steps of policy `name` on the built job b; returns the
 * last step, the split and the time at the end (pauses included). */
static const double *test_lengths; /* the next run_built's lengths (NULL: none) */
static int64_t test_delay;          /* the next run_built's [hybrid_policy] delay */

static double run_built(const lbs_hy_built *b, const char *name, const lbs_kv *opts, size_t n_opts, int64_t steps,
			int *last_split, int *last_blocks, double *end_s)
{
	lbs_hy_scenario sc;
	memset(&sc, 0, sizeof sc);
	snprintf(sc.path, sizeof sc.path, "test.ini");
	snprintf(sc.policy.name, sizeof sc.policy.name, "%s", name);
	sc.policy.epoch_steps = 2;
	sc.policy.delay = test_delay;
	sc.policy.options = (lbs_kv *)opts;
	sc.policy.n_options = n_opts;
	lbs_hy_balance bal;
	lbs_error err = { 0 };
	if (lbs_hy_balance_create(&bal, &sc, b, &err) != LBS_OK) {
		fprintf(stderr, "%s\n", err.msg);
		CU_FAIL_FATAL("balance");
	}
	double step = NAN;
	if (test_lengths)
		lbs_hy_balance_lengths(&bal, test_lengths);
	for (int64_t i = 0; i < steps; i++) {
		CU_ASSERT_FATAL(lbs_hy_balance_decide(&bal, i, &err) == LBS_OK);
		CU_ASSERT(bal.decision_s >= 0);
		CU_ASSERT_FATAL(lbs_hy_balance_step(&bal, &step, NULL, &err) == LBS_OK);
	}
	memcpy(last_split, bal.m_of, (size_t)b->plan.d * sizeof *last_split);
	if (last_blocks && bal.blocks)
		memcpy(last_blocks, bal.blocks, (size_t)b->plan.p * sizeof *last_blocks);
	if (end_s)
		*end_s = bal.sim->now_s;
	lbs_hy_balance_destroy(&bal);
	return step;
}

static double run_policy(const test_plan *tp, const char *name, int64_t steps, int *last_split)
{
	lbs_hy_built b;
	double mem[48];
	built_of(&b, tp, mem);
	return run_built(&b, name, NULL, 0, steps, last_split, NULL, NULL);
}

/* Two replicas of speed 1 and 2 (replica 0 at availability 0.5), one
 * stage, 3 s a micro-batch at full speed, M = 6. Step 0 runs 3 / 3 in 18 s
 * (replica 0: 3 x 6 s) and measures 3 / 18 and 3 / 9 micro-batches a
 * second, 1 : 2. lbbsp splits the next step 2 / 4: 12 s (2 x 6 = 4 x 3).
 * dbs (epochs of 2 steps) keeps 3 / 3 until step 2, then 2 / 4 as well.
 * The oracle (exact: 1/5 takes max(6, 15) = 15 s, 2/4 12 s, 3/3 18 s, 4/2
 * 24 s, 5/1 30 s) runs 2 / 4 from step 0. static keeps 18 s. */
static void test_policies_two_replicas(void)
{
	test_plan tp;
	hp_init(&tp, 2, 1, 3, 1, 2, 0.5);
	int m[2];
	CU_ASSERT_DOUBLE_EQUAL(run_policy(&tp, "static", 3, m), 18, 1e-12);
	CU_ASSERT(m[0] == 3 && m[1] == 3);
	CU_ASSERT_DOUBLE_EQUAL(run_policy(&tp, "lbbsp", 2, m), 12, 1e-12);
	CU_ASSERT(m[0] == 2 && m[1] == 4);
	CU_ASSERT_DOUBLE_EQUAL(run_policy(&tp, "dbs", 2, m), 18, 1e-12);
	CU_ASSERT(m[0] == 3 && m[1] == 3);
	CU_ASSERT_DOUBLE_EQUAL(run_policy(&tp, "dbs", 3, m), 12, 1e-12);
	CU_ASSERT(m[0] == 2 && m[1] == 4);
	CU_ASSERT_DOUBLE_EQUAL(run_policy(&tp, "oracle", 1, m), 12, 1e-12);
	CU_ASSERT(m[0] == 2 && m[1] == 4);
}

/* The same two replicas with [hybrid_policy] delay: lbbsp's 2 / 4, proposed
 * before step 1 from step 0's measurements, runs from step 1 + delay; the
 * steps before it keep 3 / 3 (18 s). Delay 1: 18, 18, 12, 12 s, 60 s in
 * all (54 s without); delay 2: 18, 18, 18, 12. The oracle's 2 / 4, proposed
 * before step 0, runs from step 1 with delay 1: 18, 12. */
static void test_policies_delay(void)
{
	test_plan tp;
	hp_init(&tp, 2, 1, 3, 1, 2, 0.5);
	lbs_hy_built b;
	double mem[48];
	built_of(&b, &tp, mem);
	int m[2];
	double end;
	test_delay = 1;
	CU_ASSERT_DOUBLE_EQUAL(run_built(&b, "lbbsp", NULL, 0, 2, m, NULL, NULL), 18, 1e-12);
	CU_ASSERT(m[0] == 3 && m[1] == 3);
	CU_ASSERT_DOUBLE_EQUAL(run_built(&b, "lbbsp", NULL, 0, 4, m, NULL, &end), 12, 1e-12);
	CU_ASSERT(m[0] == 2 && m[1] == 4);
	CU_ASSERT_DOUBLE_EQUAL(end, 60, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(run_built(&b, "oracle", NULL, 0, 1, m, NULL, NULL), 18, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(run_built(&b, "oracle", NULL, 0, 2, m, NULL, NULL), 12, 1e-12);
	test_delay = 2;
	CU_ASSERT_DOUBLE_EQUAL(run_built(&b, "lbbsp", NULL, 0, 3, m, NULL, NULL), 18, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(run_built(&b, "lbbsp", NULL, 0, 4, m, NULL, NULL), 12, 1e-12);
	test_delay = 0;
	CU_ASSERT_DOUBLE_EQUAL(run_built(&b, "lbbsp", NULL, 0, 4, m, NULL, &end), 12, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(end, 54, 1e-12);
}

/* Two 1F1B stages: LB-BSP's proportional split 2 / 4 takes (2 + 1) x 6 =
 * 18 s against 24 s for 3 / 3. The replicas meet only at the reductions
 * after their pipelines (d = 2, no overlap), so the oracle's greedy is
 * exact: with g_0(m) = (m + 1) x 6 and g_1(m) = (m + 1) x 3 it grows
 * (1, 1) by giving each micro-batch to the least g with it: replica 1 at
 * g_1(2) = 9, 12, 15 s (against g_0(2) = 18), then the tie at 18 s to
 * replica 0: 2 / 4, 18 s (1 / 5 ties). Three replicas (the first at 0.5),
 * one stage, M = 6: speeds 1 : 2 : 2, the split 6 / 5 x (1, 2, 2) = 1.2,
 * 2.4, 2.4 -> 1, 3, 2 by largest remainder (ties to the lower index):
 * max(1 x 6, 3 x 3, 2 x 3) = 9 s. The oracle from (1, 1, 1): replica 1
 * (g 6 s), replica 2 (6 s), replica 1 (9 s, before replica 0's 12 s):
 * 1 / 3 / 2, 9 s, the best of all splits (1 / 2 / 3 ties). */
static void test_policies_pipeline(void)
{
	test_plan tp;
	hp_init(&tp, 2, 2, 3, 1, 2, 0.5);
	int m[3];
	CU_ASSERT_DOUBLE_EQUAL(run_policy(&tp, "lbbsp", 2, m), 18, 1e-12);
	CU_ASSERT(m[0] == 2 && m[1] == 4);
	CU_ASSERT_DOUBLE_EQUAL(run_policy(&tp, "oracle", 1, m), 18, 1e-12);
	CU_ASSERT(m[0] == 2 && m[1] == 4);
	hp_init(&tp, 3, 1, 2, 1, 2, 0.5);
	CU_ASSERT_DOUBLE_EQUAL(run_policy(&tp, "lbbsp", 2, m), 9, 1e-12);
	CU_ASSERT(m[0] == 1 && m[1] == 3 && m[2] == 2);
	CU_ASSERT_DOUBLE_EQUAL(run_policy(&tp, "oracle", 1, m), 9, 1e-12);
	CU_ASSERT(m[0] == 1 && m[1] == 3 && m[2] == 2);
}

/* Memory bounds the split. GPipe holds all m micro-batches' activations:
 * with a model state of 10 and 5 a micro-batch (the built plan's 25 at
 * m = 3), a device of 30 holds m <= 4 and one of 25 m <= 3. Speeds 1 : 2,
 * M = 6: lbbsp's 2 / 4 fits the first; on the second the fast replica is
 * capped at 3 and the split stays 3 / 3 (18 s a step). */
static void test_memory_cap(void)
{
	double caps[2] = { 30, 25 }, steps_s[2] = { 12, 18 };
	int want[2][2] = { { 2, 4 }, { 3, 3 } };
	for (int k = 0; k < 2; k++) {
		test_plan tp;
		hp_init(&tp, 2, 1, 3, 1, 2, 0.5);
		tp.pl.schedule = LBS_HY_GPIPE;
		lbs_hy_built b;
		double mem[48];
		built_of(&b, &tp, mem);
		for (int g = 0; g < 2; g++)
			mem[g] = 25, mem[2 + g] = 5, mem[4 + g] = caps[k];
		int m[2];
		CU_ASSERT_DOUBLE_EQUAL(run_built(&b, "lbbsp", NULL, 0, 3, m, NULL, NULL), steps_s[k], 1e-9);
		CU_ASSERT(m[0] == want[k][0] && m[1] == want[k][1]);
	}
}

/* lbs_hy_partition: costs 1 and 2 a block, 6 blocks: 4 / 2 (worked in
 * hybrid/policy/resplit.c); costs 1, 1, 1 and 9 blocks: 3 / 3 / 3; a cap
 * of 3 on the cheap stage of 1 / 2: 3 / 3; caps of 2 and 2 cannot hold 6. */
static void test_partition(void)
{
	int b[3];
	double c12[2] = { 1, 2 }, c111[3] = { 1, 1, 1 };
	CU_ASSERT_TRUE(lbs_hy_partition(6, 2, c12, NULL, b));
	CU_ASSERT(b[0] == 4 && b[1] == 2);
	CU_ASSERT_TRUE(lbs_hy_partition(9, 3, c111, NULL, b));
	CU_ASSERT(b[0] == 3 && b[1] == 3 && b[2] == 3);
	int cap[2] = { 3, 6 };
	CU_ASSERT_TRUE(lbs_hy_partition(6, 2, c12, cap, b));
	CU_ASSERT(b[0] == 3 && b[1] == 3);
	int small[2] = { 2, 2 };
	CU_ASSERT_FALSE(lbs_hy_partition(6, 2, c12, small, b));
}

/* The re-split of hybrid/policy/resplit.c's worked example: one replica,
 * two 1F1B stages of 3 blocks (forward 1/3 s and backward 2/3 s a block),
 * stage 1 at availability 0.5, m = 4: step 0 takes 27 s (stage 0 F 1 s
 * B 2 s, stage 1 F 2 s B 4 s; tests/unit/test_hybrid.c's slow stage). The
 * policy measures 1 s and 2 s a block a micro-batch and moves to 4 / 2,
 * one block crossing the boundary: 1 GB of weights and optimizer states
 * over a 1 GB/s link, a 1 s pause. Step 1: both stages 4 s a micro-batch
 * (4 x 1/3 + 4 x 2/3 on stage 0, 2 x 1 / 0.5 on stage 1), (m + p - 1) x 4
 * = 20 s; two steps end at 27 + 1 + 20 = 48 s. With 1 TB a block the
 * pause, 1000 s, is more than 20 steps (horizon) of the 10 s saving: it
 * stays at 3 / 3 and 27 s. */
/* The pause of a re-split with interleaved chunks, by hand: p = 3 stages
 * of v = 2 chunks, one replica, 1 GB a block; the links from stages 0, 1
 * and 2 to the next at 1 GB/s, 10 GB/s and 0.1 GB/s, latencies 0.1, 0.2
 * and 0.3 s. Each chunk of the stages holds 2, 2, 2 blocks, then 4, 1, 1.
 * In the model's order the virtual stages hold 4 1 1 4 1 1 against
 * 2 2 2 2 2 2: the prefixes 4 5 6 10 11 against 2 4 6 8 10, so the
 * boundaries after stage 0 carry 2 blocks (0.1 + 2 = 2.1 s), those after
 * stage 1 one (0.2 + 0.1 s), and the one after stage 2 (to chunk 1 of
 * stage 0) none: every chunk round holds the same blocks. The pause, the
 * longest, is 2.1 s (one chunk: the same boundaries once, 2.1 s). */
static void test_resplit_interleaved_pause(void)
{
	lbs_hy_built b = { 0 };
	double bw[3] = { 1e9, 1e10, 1e8 }, lat[3] = { 0.1, 0.2, 0.3 };
	b.link_Bps = bw;
	b.link_lat_s = lat;
	b.blk_move_bytes = 1e9;
	int old[3] = { 2, 2, 2 }, neu[3] = { 4, 1, 1 };
	CU_ASSERT_DOUBLE_EQUAL(lbs_hy_resplit_s(&b, 1, 3, 2, old, neu), 2.1, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(lbs_hy_resplit_s(&b, 1, 3, 1, old, neu), 2.1, 1e-12);
	/* stage 1's link slow instead: 0.2 + 1 block at 0.1 GB/s */
	bw[1] = 1e8;
	CU_ASSERT_DOUBLE_EQUAL(lbs_hy_resplit_s(&b, 1, 3, 2, old, neu), 10.2, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(lbs_hy_resplit_s(&b, 1, 3, 2, old, old), 0, 0);
}

static void test_resplit(void)
{
	test_plan tp;
	hp_init(&tp, 1, 2, 4, 1, 2, 1);
	tp.lvl[1] = 0.5;
	lbs_hy_built b;
	double mem[48], blk[16];
	built_of(&b, &tp, mem);
	b.n_blocks = 6;
	b.blk_fwd_s = blk, b.blk_bwd_s = blk + 2, b.blk_fwd_fixed_s = blk + 4, b.blk_bwd_fixed_s = blk + 6;
	b.blk_opt_s = blk + 8, b.blk_state_bytes = blk + 10, b.link_Bps = blk + 12, b.link_lat_s = blk + 14;
	double blk_p[4] = { 0 };
	b.blk_grad_s = blk_p, b.blk_gather_s = blk_p + 2;
	for (int g = 0; g < 2; g++) {
		blk[g] = 1.0 / 3, blk[2 + g] = 2.0 / 3;
		blk[4 + g] = blk[6 + g] = blk[8 + g] = blk[10 + g] = 0;
		blk[12 + g] = 1e9, blk[14 + g] = 0;
	}
	b.blk_move_bytes = 1e9;
	int m[1], blocks[2];
	double end;
	CU_ASSERT_DOUBLE_EQUAL(run_built(&b, "resplit", NULL, 0, 1, m, blocks, &end), 27, 1e-9);
	CU_ASSERT(blocks[0] == 3 && blocks[1] == 3);
	CU_ASSERT_DOUBLE_EQUAL(run_built(&b, "resplit", NULL, 0, 2, m, blocks, &end), 20, 1e-9);
	CU_ASSERT(blocks[0] == 4 && blocks[1] == 2);
	CU_ASSERT_DOUBLE_EQUAL(end, 48, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(lbs_hy_resplit_s(&b, 1, 2, 1, (int[]){ 3, 3 }, (int[]){ 4, 2 }), 1, 1e-12);
	b.blk_move_bytes = 1e12;
	CU_ASSERT_DOUBLE_EQUAL(run_built(&b, "resplit", NULL, 0, 2, m, blocks, &end), 27, 1e-9);
	CU_ASSERT(blocks[0] == 3 && blocks[1] == 3);
	CU_ASSERT_DOUBLE_EQUAL(end, 54, 1e-9);
	/* horizon 0: whatever the pause, 1000 s then 20 s */
	lbs_kv h0 = { .section = "hybrid_policy.resplit", .key = "horizon", .value = "0", .at = { "test.ini", 9 } };
	CU_ASSERT_DOUBLE_EQUAL(run_built(&b, "resplit", &h0, 1, 2, m, blocks, &end), 20, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(end, 27 + 1000 + 20, 1e-9);
}

/* The fail-slow ladder of hybrid/policy/ladder.c's worked example: two
 * replicas of one stage, 3 s a micro-batch, 3 each; replica 0 at 0.5 from
 * 0 to E. E = 1000 s: a share re-split after step 0, a node replaced
 * before step 11 (30 s), 9 s steps after: 12 steps end at 177 s. E = 100 s:
 * the episode ends before the loss pays for a restart: 10 steps end at
 * 123 s, static's at 140 s. */
static void test_ladder(void)
{
	double Es[2] = { 1000, 100 }, last[2] = { 9, 9 }, end_at[2] = { 177, 123 };
	int64_t steps[2] = { 12, 10 };
	for (int k = 0; k < 2; k++) {
		test_plan tp;
		hp_init(&tp, 2, 1, 3, 1, 2, 1);
		double t[2] = { 0, Es[k] }, lvl[2] = { 0.5, 1 };
		tp.avail[0] = (lbs_hy_avail){ 2, t, lvl };
		lbs_hy_built b;
		double mem[48];
		built_of(&b, &tp, mem);
		lbs_kv opt = { .section = "hybrid_policy.ladder", .key = "restart", .value = "30 s",
			       .at = { "test.ini", 3 } };
		int m[2];
		double end;
		CU_ASSERT_DOUBLE_EQUAL(run_built(&b, "ladder", &opt, 1, steps[k], m, NULL, &end), last[k], 1e-9);
		CU_ASSERT(m[0] == 3 && m[1] == 3);
		CU_ASSERT_DOUBLE_EQUAL(end, end_at[k], 1e-9);
		if (k == 0) {
			/* one step before the replacement: 11 steps end at 18 + 10 x 12 = 138 s, 2 / 4 */
			CU_ASSERT_DOUBLE_EQUAL(run_built(&b, "ladder", &opt, 1, 11, m, NULL, &end), 12, 1e-9);
			CU_ASSERT(m[0] == 2 && m[1] == 4);
			CU_ASSERT_DOUBLE_EQUAL(end, 138, 1e-9);
		} else {
			CU_ASSERT_DOUBLE_EQUAL(run_built(&b, "static", NULL, 0, 10, m, NULL, &end), 9, 1e-9);
			CU_ASSERT_DOUBLE_EQUAL(end, 140, 1e-9);
		}
	}
}

/* A block's part of a costed plan (hybrid/plan.c): Llama 3 8B in 4
 * stages of 8 blocks; stages 1 and 2 hold blocks only (the embedding joins
 * stage 0, the head stage 3), so each of their compute and tensor-parallel
 * times is 8 times a block's, and their gradient reductions differ from 8
 * blocks' only by the collective's latency terms, the same in both. A
 * block moves its weights (2 bytes a parameter) and its share of Adam's
 * fp32 master weights and moments (12 bytes over dp = 2): 8 bytes a
 * parameter of the rank's block. The balance starts from the plan's
 * times, and moving to 9 / 7 / 8 / 8 sends one block over the link from
 * stage 0 to stage 1 (in each replica at once): one block's pause. */
static void test_block_costs(void)
{
	char *path = write_temp(TEST_HYBRID_8B);
	lbs_error err = { 0 };
	lbs_hy_scenario sc;
	lbs_hy_built b;
	CU_ASSERT_FATAL(lbs_hy_scenario_load(&sc, path, NULL, 0, &err) == LBS_OK);
	CU_ASSERT_FATAL(lbs_hy_plan_build(&sc, &b, &err) == LBS_OK);
	const lbs_hy_plan *pl = &b.plan;
	CU_ASSERT_EQUAL(b.n_blocks, 32);
	for (size_t g = 1; g < 8; g++) {
		if (g % 4 == 0 || g % 4 == 3)
			continue;
		CU_ASSERT_DOUBLE_EQUAL(pl->fwd_s[g] / (8 * b.blk_fwd_s[g]), 1, 1e-12);
		CU_ASSERT_DOUBLE_EQUAL(pl->bwd_s[g] / (8 * b.blk_bwd_s[g]), 1, 1e-12);
		CU_ASSERT_DOUBLE_EQUAL(pl->fwd_fixed_s[g] / (8 * b.blk_fwd_fixed_s[g]), 1, 1e-12);
		CU_ASSERT_DOUBLE_EQUAL(pl->bwd_fixed_s[g] / (8 * b.blk_bwd_fixed_s[g]), 1, 1e-12);
	}
	CU_ASSERT(b.blk_grad_s[1] > 0);
	CU_ASSERT_DOUBLE_EQUAL(pl->grad_s[1] - 8 * b.blk_grad_s[1], pl->grad_s[2] - 8 * b.blk_grad_s[2], 1e-12);
	lbs_net net;
	lbs_net_opts o = { .seq_len = 2048, .tp = 2, .recompute = LBS_RECOMPUTE_SELECTIVE };
	CU_ASSERT_FATAL(lbs_net_create_opts(&net, "llama3-8b", &o, &err) == LBS_OK);
	double bp = 0;
	for (size_t i = 0; i < net.n_layers; i++)
		bp += net.layers[i].block == 1 ? (double)net.layers[i].params : 0;
	CU_ASSERT_DOUBLE_EQUAL(b.blk_move_bytes / (bp * 8), 1, 1e-12);
	lbs_net_destroy(&net);
	/* 9 / 7 / 8 / 8 and back, through the balance's re-costing */
	lbs_hy_balance bal;
	snprintf(sc.policy.name, sizeof sc.policy.name, "resplit");
	CU_ASSERT_FATAL(lbs_hy_balance_create(&bal, &sc, &b, &err) == LBS_OK);
	for (size_t g = 0; g < 8; g++)
		CU_ASSERT_DOUBLE_EQUAL(bal.plan.fwd_s[g], pl->fwd_s[g], 0);
	int nine[4] = { 9, 7, 8, 8 };
	CU_ASSERT_DOUBLE_EQUAL(lbs_hy_resplit_s(&b, 2, 4, 1, bal.blocks, nine),
			       b.link_lat_s[0] + b.blk_move_bytes / b.link_Bps[0], 1e-15);
	lbs_hy_balance_destroy(&bal);
	lbs_hy_built_free(&b);
	lbs_hy_scenario_destroy(&sc);
	remove(path);
	free(path);
}

/* Sequence packing (hybrid/policy/pack.c's example): two replicas of one
 * stage, 2 micro-batches each, 3 s a micro-batch of the model's length,
 * lengths 1, 1, 0.5, 0.5 in the data's order: 6 s as they come (replica 0
 * runs both long ones), 4.5 s packed (1 and 0.5 on each replica). With the
 * attention core half of the compute, a 0.5 sequence costs 0.5 x 0.5 +
 * 0.5 x 0.25 = 0.375 of a full one: as they come 6 s against 2 x 0.375 x
 * 3 = 2.25 s, packed both replicas 3 x 1.375 = 4.125 s. */
static void test_pack(void)
{
	static const double lengths[4] = { 1, 1, 0.5, 0.5 };
	for (int k = 0; k < 2; k++) {
		test_plan tp;
		hp_init(&tp, 2, 1, 2, 1, 2, 1);
		double att[4] = { 0.5, 0.5, 1, 1 }; /* fwd, bwd attention shares: half of 1 s and 2 s */
		if (k) {
			tp.pl.fwd_att_s = att;
			tp.pl.bwd_att_s = att + 2;
		}
		lbs_hy_built b;
		double mem[48];
		built_of(&b, &tp, mem);
		int m[2];
		test_lengths = lengths;
		CU_ASSERT_DOUBLE_EQUAL(run_built(&b, "static", NULL, 0, 1, m, NULL, NULL), 6, 1e-12);
		CU_ASSERT_DOUBLE_EQUAL(run_built(&b, "pack", NULL, 0, 1, m, NULL, NULL), k ? 4.125 : 4.5, 1e-12);
		test_lengths = NULL;
	}
}

void suite_hybrid_policy(void)
{
	static const test_case tests[] = {
		{ "replica micro-batch counts", test_replica_counts },
		{ "split by speed", test_split },
		{ "policies, two replicas", test_policies_two_replicas },
		{ "policies, a pipeline", test_policies_pipeline },
		{ "memory bounds the split", test_memory_cap },
		{ "partition by stage cost", test_partition },
		{ "a decision delayed by [hybrid_policy] delay, by hand", test_policies_delay },
		{ "layer re-split", test_resplit },
		{ "a re-split's pause with interleaved chunks, by hand", test_resplit_interleaved_pause },
		{ "fail-slow ladder", test_ladder },
		{ "a block's costs", test_block_costs },
		{ "sequence packing", test_pack },
	};
	add_suite("hybrid-policy", tests, sizeof tests / sizeof tests[0]);
}
