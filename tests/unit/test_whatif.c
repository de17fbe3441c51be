/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The what-if analysis on small synthetic traces whose schedules are
 * computed by hand (the derivations are in the comments), the dependency
 * model of doc/whatif.md's worked example edge by edge, the engine replay
 * against the plain topological sweep, the per-operation reader's errors,
 * and ByteDance's trace ST against the figures its authors' analyzer gives
 * (Lin et al., OSDI'25; doc/whatif.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/suites.h"
#include "traces/read_ops.h"
#include "whatif/whatif.h"

/* One traced op: stage, type, seq_id, start, end. */
typedef struct op_row {
	int stage;
	lbs_optype type;
	int seq;
	double start, end;
} op_row;

#define FC LBS_OP_FORWARD_COMPUTE
#define BC LBS_OP_BACKWARD_COMPUTE
#define FS LBS_OP_FORWARD_SEND
#define FR LBS_OP_FORWARD_RECV
#define BS LBS_OP_BACKWARD_SEND
#define BR LBS_OP_BACKWARD_RECV
#define AG LBS_OP_PARAMS_ALL_GATHER
#define RS LBS_OP_GRADS_REDUCE_SCATTER
#define LN LBS_OP_LAYERNORM_GRADS_ALL_REDUCE
#define EMB LBS_OP_EMBEDDING_GRADS_ALL_REDUCE
#define CLIP LBS_OP_OPTIMIZER_CLIP_MAIN_GRAD
#define OPT LBS_OP_OPTIMIZER
#define GC LBS_OP_GC

/* 2 stages x 4 microbatches, 1F1B, stage 1 twice as slow as stage 0
 * (forward 1 s and 2 s, backward 2 s and 4 s), p2p and collectives taking
 * no time, optimizer 1 s. Stage 0 computes F0 F1 B0 F2 B1 F3 B2 B3, stage 1
 * F0 B0 F1 B1 F2 B2 F3 B3. By hand, each op starting when its dependencies
 * end and each pair ending at the later of its two starts:
 *   s0 F0 [0,1] F1 [1,2]; s1 F0 [1,3] B0 [3,7]; s0 B0 [7,9] (waits for br0,
 *   which ends when bs0 starts at 7); s1 F1 [7,9] B1 [9,13]; s0 F2 [9,10]
 *   B1 [13,15]; s1 F2 [13,15] B2 [15,19]; s0 F3 [15,16] B2 [19,21]; s1 F3
 *   [19,21] B3 [21,25]; s0 B3 [25,27]; the tail ends at 27 on both stages
 *   (the embedding pair waits for stage 0), the optimizer at 28. */
static const op_row pipeline[] = {
	{ 0, AG, 0, 0, 0 }, { 0, FC, 0, 0, 1 }, { 0, FC, 1, 1, 2 }, { 0, BC, 0, 7, 9 },
	{ 0, FC, 2, 9, 10 }, { 0, BC, 1, 13, 15 }, { 0, FC, 3, 15, 16 }, { 0, BC, 2, 19, 21 },
	{ 0, BC, 3, 25, 27 },
	{ 0, FS, 0, 1, 1 }, { 0, FS, 1, 2, 3 }, { 0, FS, 2, 10, 10 }, { 0, FS, 3, 16, 16 },
	{ 0, BR, 0, 1, 7 }, { 0, BR, 1, 9, 13 }, { 0, BR, 2, 15, 19 }, { 0, BR, 3, 21, 25 },
	{ 0, GC, 0, 27, 27 }, { 0, LN, 0, 27, 27 }, { 0, EMB, 0, 27, 27 }, { 0, RS, 0, 27, 27 },
	{ 0, CLIP, 0, 27, 27 }, { 0, OPT, 0, 27, 28 },
	{ 1, AG, 0, 0, 0 }, { 1, FR, 0, 0, 1 }, { 1, FC, 0, 1, 3 }, { 1, BC, 0, 3, 7 },
	{ 1, BS, 0, 7, 7 }, { 1, FR, 1, 3, 3 }, { 1, FC, 1, 7, 9 }, { 1, BC, 1, 9, 13 },
	{ 1, BS, 1, 13, 13 }, { 1, FR, 2, 9, 10 }, { 1, FC, 2, 13, 15 }, { 1, BC, 2, 15, 19 },
	{ 1, BS, 2, 19, 19 }, { 1, FR, 3, 15, 16 }, { 1, FC, 3, 19, 21 }, { 1, BC, 3, 21, 25 },
	{ 1, BS, 3, 25, 25 },
	{ 1, GC, 0, 25, 25 }, { 1, LN, 0, 25, 25 }, { 1, EMB, 0, 25, 27 }, { 1, RS, 0, 27, 27 },
	{ 1, CLIP, 0, 27, 27 }, { 1, OPT, 0, 27, 28 },
};

/* One stage, 4 microbatches, two dp_ranks; dp_rank 1 is twice as slow
 * (forward 2 s, backward 4 s, against 1 s and 2 s). The all-gather takes
 * 0.5 s; the reduce-scatter ends 0.5 s after the later rank starts it; the
 * optimizer of dp_rank 0 starts 0.25 s late (a launch delay). */
static const op_row slow_dp0[] = {
	{ 0, AG, 0, 0, 0.5 }, { 0, FC, 0, 0.5, 1.5 }, { 0, BC, 0, 1.5, 3.5 }, { 0, FC, 1, 3.5, 4.5 },
	{ 0, BC, 1, 4.5, 6.5 }, { 0, FC, 2, 6.5, 7.5 }, { 0, BC, 2, 7.5, 9.5 }, { 0, FC, 3, 9.5, 10.5 },
	{ 0, BC, 3, 10.5, 12.5 }, { 0, GC, 0, 12.5, 12.5 }, { 0, LN, 0, 12.5, 12.5 },
	{ 0, EMB, 0, 12.5, 12.5 }, { 0, RS, 0, 12.5, 25 }, { 0, CLIP, 0, 25, 25 }, { 0, OPT, 0, 25.25, 26.25 },
};
static const op_row slow_dp1[] = {
	{ 0, AG, 0, 0, 0.5 }, { 0, FC, 0, 0.5, 2.5 }, { 0, BC, 0, 2.5, 6.5 }, { 0, FC, 1, 6.5, 8.5 },
	{ 0, BC, 1, 8.5, 12.5 }, { 0, FC, 2, 12.5, 14.5 }, { 0, BC, 2, 14.5, 18.5 }, { 0, FC, 3, 18.5, 20.5 },
	{ 0, BC, 3, 20.5, 24.5 }, { 0, GC, 0, 24.5, 24.5 }, { 0, LN, 0, 24.5, 24.5 },
	{ 0, EMB, 0, 24.5, 24.5 }, { 0, RS, 0, 24.5, 25 }, { 0, CLIP, 0, 25, 25 }, { 0, OPT, 0, 25, 26 },
};

/* Appends the rows of one (step, dp_rank) to a CSV text; rank = dp + D * stage. */
static void add_rows(char **text, size_t *len, const op_row *r, size_t n, int dp, int D, int step)
{
	for (size_t i = 0; i < n; i++) {
		bool compute = r[i].type == FC || r[i].type == BC;
		bool chunked = compute || r[i].type == AG || r[i].type == RS;
		char line[256];
		int k = snprintf(line, sizeof line, "%d,%d,%d,%d,%s,%.17g,%.17g,%d,%d,%d,%d\n", dp, r[i].stage,
				 dp + D * r[i].stage, step, lbs_optype_name(r[i].type), r[i].start,
				 r[i].end - r[i].start, r[i].seq, chunked ? 0 : -1, compute ? r[i].seq : -1,
				 compute ? r[i].stage : -1);
		*text = realloc(*text, *len + (size_t)k + 1);
		memcpy(*text + *len, line, (size_t)k + 1);
		*len += (size_t)k;
	}
}

static char *header(size_t *len)
{
	const char *h = "dp_rank,stage,rank,step,optype,start_ts,duration,seq_id,mc,mb_id,gmc\n";
	*len = strlen(h);
	return strdup(h);
}

static lbs_ops_trace trace;
static lbs_wi_model model;
static lbs_wi_result res;
static lbs_error err;

static bool load(char *text)
{
	char *path = write_temp(text);
	free(text);
	memset(&err, 0, sizeof err);
	lbs_status st = lbs_ops_read(path, &trace, &err);
	if (st == LBS_OK)
		st = lbs_wi_model_build(&model, &trace, 1, &err);
	if (st == LBS_OK)
		st = lbs_wi_analyse(&model, &res, &err);
	unlink(path);
	free(path);
	if (st != LBS_OK)
		fprintf(stderr, "\n  %s\n", err.msg);
	return st == LBS_OK;
}

static void unload(void)
{
	lbs_wi_result_free(&res);
	lbs_wi_model_free(&model);
	lbs_ops_free(&trace);
}

static const lbs_wi_policy *policy(const char *name)
{
	for (size_t i = 0; i < res.n_policies; i++)
		if (strcmp(res.policy[i].name, name) == 0)
			return &res.policy[i];
	CU_FAIL("policy not found");
	return &res.policy[0];
}

static const lbs_wi_slowdown *find(lbs_wi_kind kind, const char *name)
{
	for (size_t i = 0; i < res.n_slow; i++)
		if (res.slow[i].kind == kind && strcmp(res.slow[i].name, name) == 0)
			return &res.slow[i];
	CU_FAIL("slowdown not found");
	return &res.slow[0];
}

static uint32_t op_id(int stage, lbs_optype t, int seq)
{
	for (uint32_t v = 0; v < model.n_ops; v++)
		if (model.stage[v] == stage && model.type[v] == t && model.seq[v] == seq)
			return v;
	CU_FAIL("op not in the model");
	return 0;
}

/* Op (stage, t, seq) depends on exactly the ops listed (as triples, -1 ends). */
static void expect_deps(int stage, lbs_optype t, int seq, const int *deps)
{
	uint32_t v = op_id(stage, t, seq);
	size_t n = 0;
	for (; deps[3 * n] >= 0; n++) {
		uint32_t u = op_id(deps[3 * n], (lbs_optype)deps[3 * n + 1], deps[3 * n + 2]);
		bool found = false;
		for (uint32_t k = model.dep_off[v]; k < model.dep_off[v + 1]; k++)
			found |= model.dep[k] == u;
		CU_ASSERT(found);
	}
	CU_ASSERT_EQUAL(model.dep_off[v + 1] - model.dep_off[v], n);
}

static void test_pipeline_model(void)
{
	size_t len;
	char *text = header(&len);
	for (int dp = 0; dp < 2; dp++)
		add_rows(&text, &len, pipeline, sizeof pipeline / sizeof pipeline[0], dp, 2, 5);
	CU_ASSERT_FATAL(load(text));
	/* doc/whatif.md's worked example: 46 ops, 65 dependencies, 8 p2p
	 * pairs + embedding + clip + 2 all-gathers + 2 reduce-scatters. */
	CU_ASSERT_EQUAL(model.n_ops, 46);
	CU_ASSERT_EQUAL(model.n_edges, 65);
	CU_ASSERT_EQUAL(model.n_comm_groups, 14);
	CU_ASSERT_EQUAL(model.n_sync_ops, 6);
	expect_deps(0, FC, 0, (const int[]){ 0, AG, 0, -1 });
	expect_deps(0, BC, 0, (const int[]){ 0, FC, 1, 0, BR, 0, -1 });
	expect_deps(0, BC, 3, (const int[]){ 0, BC, 2, 0, BR, 3, -1 });
	expect_deps(0, BR, 0, (const int[]){ 0, FC, 0, -1 }); /* R5 */
	expect_deps(0, BR, 2, (const int[]){ 0, BC, 1, 0, BR, 1, -1 });
	expect_deps(0, FS, 2, (const int[]){ 0, FC, 2, 0, FS, 1, -1 });
	expect_deps(1, FC, 0, (const int[]){ 1, FR, 0, 1, AG, 0, -1 });
	expect_deps(1, FC, 1, (const int[]){ 1, BC, 0, 1, FR, 1, -1 });
	expect_deps(1, FR, 0, (const int[]){ -1 });
	expect_deps(1, FR, 3, (const int[]){ 1, FC, 2, 1, FR, 2, -1 });
	expect_deps(1, BS, 1, (const int[]){ 1, BC, 1, 1, BS, 0, -1 });
	expect_deps(1, GC, 0, (const int[]){ 1, BC, 3, -1 });
	expect_deps(1, RS, 0, (const int[]){ 1, EMB, 0, 1, AG, 0, -1 });
	expect_deps(0, OPT, 0, (const int[]){ 0, CLIP, 0, -1 });
	/* fs_i of stage 0 with fr_i of stage 1; bs_i of stage 1 with br_i of stage 0 */
	CU_ASSERT_EQUAL(model.group_of[op_id(0, FS, 2)], model.group_of[op_id(1, FR, 2)]);
	CU_ASSERT_EQUAL(model.group_of[op_id(1, BS, 3)], model.group_of[op_id(0, BR, 3)]);
	CU_ASSERT_EQUAL(model.group_of[op_id(0, EMB, 0)], model.group_of[op_id(1, EMB, 0)]);
	CU_ASSERT(model.group_sync[model.group_of[op_id(0, CLIP, 0)]]);
	CU_ASSERT_EQUAL(model.group_of[op_id(0, CLIP, 0)], model.group_of[op_id(1, CLIP, 0)]);
	CU_ASSERT(!model.group_comm[model.group_of[op_id(0, LN, 0)]]);

	/* The replays. The trace is its own schedule: T = 28 however replayed. */
	CU_ASSERT_DOUBLE_EQUAL(res.t_meas[0], 28, 0);
	CU_ASSERT_DOUBLE_EQUAL(res.t_base[0], 28, 0);
	CU_ASSERT_DOUBLE_EQUAL(res.t_nd[0], 28, 0);
	/* Ideal: forward 1.5 s, backward 3 s everywhere (the means), transfers
	 * 0. By hand, the same 1F1B steps: s0 F0 [0,1.5] F1 [1.5,3]; s1 F0
	 * [1.5,3] B0 [3,6]; s0 B0 [6,9]; s1 F1 [6,7.5] B1 [7.5,10.5]; s0 F2
	 * [9,10.5] B1 [10.5,13.5]; s1 F2 [10.5,12] B2 [12,15]; s0 F3 [13.5,15]
	 * B2 [15,18]; s1 F3 [15,16.5] B3 [16.5,19.5]; s0 B3 [19.5,22.5]; then
	 * the optimizer: 23.5. */
	CU_ASSERT_DOUBLE_EQUAL(res.ideal_d[FC], 1.5, 0);
	CU_ASSERT_DOUBLE_EQUAL(res.ideal_d[BC], 3, 0);
	CU_ASSERT_DOUBLE_EQUAL(res.ideal_x[FS], 0, 0);
	CU_ASSERT_DOUBLE_EQUAL(res.t_id[0], 23.5, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(res.S, 28 / 23.5, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(res.L, 1, 1e-12);
	CU_ASSERT_FATAL(res.attributed);
	/* Stage 1 as traced, stage 0 ideal (1.5, 3): s0 F0 [0,1.5] F1 [1.5,3];
	 * s1 F0 [1.5,3.5] B0 [3.5,7.5]; s0 B0 [7.5,10.5]; s1 F1 [7.5,9.5] B1
	 * [9.5,13.5]; s0 F2 [10.5,12] B1 [13.5,16.5]; s1 F2 [13.5,15.5] B2
	 * [15.5,19.5]; s0 F3 [16.5,18] B2 [19.5,22.5]; s1 F3 [19.5,21.5] B3
	 * [21.5,25.5]; s0 B3 [25.5,28.5]; optimizer: 29.5. */
	CU_ASSERT_DOUBLE_EQUAL(find(LBS_WI_STAGE, "1")->value, 29.5 / 23.5, 1e-12);
	/* Stage 0 as traced (1, 2), stage 1 ideal (1.5, 3): s1 F0 [1,2.5] B0
	 * [2.5,5.5]; s0 B0 [5.5,7.5]; s1 F1 [5.5,7] B1 [7,10]; s0 F2 [7.5,8.5]
	 * B1 [10,12]; s1 F2 [10,11.5] B2 [11.5,14.5]; s0 F3 [12,13] B2
	 * [14.5,16.5]; s1 F3 [14.5,16] B3 [16,19]; s0 B3 [19,21]; then 22. */
	CU_ASSERT_DOUBLE_EQUAL(find(LBS_WI_STAGE, "0")->value, 22 / 23.5, 1e-12);
	/* One dp_rank as traced: the reduce-scatter waits for it: 28. */
	CU_ASSERT_DOUBLE_EQUAL(find(LBS_WI_DP, "0")->value, 28 / 23.5, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(find(LBS_WI_DP, "1")->value, 28 / 23.5, 1e-12);
	/* S_w = min(S_dp, S_stage): stage 1's workers 28/23.5, stage 0's 22/23.5 */
	CU_ASSERT_DOUBLE_EQUAL(find(LBS_WI_WORKER, "3")->value, 28 / 23.5, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(find(LBS_WI_WORKER, "0")->value, 22 / 23.5, 1e-12);
	/* M_S: removing stage 1 leaves the 22 s case, adding it the 29.5 s one:
	 * rem = (28 - 22) / 4.5, add = (29.5 - 23.5) / 4.5. */
	CU_ASSERT_DOUBLE_EQUAL(res.ms.t_rem, 22, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(res.ms.rem, 6 / 4.5, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(res.ms.add, 6 / 4.5, 1e-12);
	/* M_W: ceil(3 x 4 / 100) = 1 worker, the tie of ranks 2 and 3 goes to
	 * rank 2. Removing it changes nothing (dp_rank 1 still takes 28 s);
	 * adding it alone gives the 29.5 s case on dp_rank 0. */
	CU_ASSERT_STRING_EQUAL(res.mw.workers, "rank 2");
	CU_ASSERT_DOUBLE_EQUAL(res.mw.rem, 0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(res.mw.add, 6 / 4.5, 1e-12);
	/* Counterfactuals. Repartition: stage work 4 x 3 = 12 s and 4 x 6 = 24
	 * s, mean 18: stage 0's computes x 1.5, stage 1's x 0.75, which is the
	 * ideal (1.5, 3) everywhere: 23.5 s, all of the slowdown recovered. The
	 * replicas are alike: their micro-batch counts stay 4 and 4 (28 s). */
	CU_ASSERT_DOUBLE_EQUAL(policy("repartition")->mean_t, 23.5, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(policy("repartition")->recovered, 1, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(policy("static-proportional")->recovered, 0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(policy("oracle")->mean_t, 28, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(policy("lbbsp")->mean_t, 28, 1e-12);
	unload();
}

static void test_slow_dp_rank(void)
{
	size_t len;
	char *text = header(&len);
	for (int step = 3; step <= 4; step++) { /* two identical steps */
		add_rows(&text, &len, slow_dp0, sizeof slow_dp0 / sizeof slow_dp0[0], 0, 2, step);
		add_rows(&text, &len, slow_dp1, sizeof slow_dp1 / sizeof slow_dp1[0], 1, 2, step);
	}
	CU_ASSERT_FATAL(load(text));
	CU_ASSERT_EQUAL(model.n_steps, 2);
	CU_ASSERT_DOUBLE_EQUAL(res.t_meas[1], 26.25, 0);
	/* with its launch delay the optimizer of dp_rank 0 ends at 26.25; without, 26 */
	CU_ASSERT_DOUBLE_EQUAL(res.t_base[1], 26.25, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(res.mean_nd, 26, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(res.L, 26.25 / 26, 1e-12);
	/* ideal: 0.5 + 4 x (1.5 + 3) + 0.5 (reduce-scatter transfer) + 1 = 20 */
	CU_ASSERT_DOUBLE_EQUAL(res.ideal_x[AG], 0.5, 0);
	CU_ASSERT_DOUBLE_EQUAL(res.ideal_x[RS], 0.5, 0);
	CU_ASSERT_DOUBLE_EQUAL(res.mean_id, 20, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(res.S, 1.3, 1e-12);
	/* dp_rank 1 as traced: 24.5 + 0.5 + 1 = 26; dp_rank 0 as traced is done
	 * at 12.5 and waits for the ideal dp_rank 1 (18.5): 20. */
	CU_ASSERT_DOUBLE_EQUAL(find(LBS_WI_DP, "1")->value, 1.3, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(find(LBS_WI_DP, "0")->value, 1, 1e-12);
	/* forward as traced: dp_rank 1 computes 0.5 + 4 x (2 + 3) = 20.5 -> 22;
	 * backward as traced: 0.5 + 4 x (1.5 + 4) = 22.5 -> 24 */
	CU_ASSERT_DOUBLE_EQUAL(find(LBS_WI_OPTYPE, "forward-compute")->value, 22.0 / 20, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(find(LBS_WI_OPTYPE, "backward-compute")->value, 24.0 / 20, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(find(LBS_WI_OPTYPE, "optimizer")->value, 1, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(find(LBS_WI_OPTYPE, "forward-compute")->per_step[1], 22.0 / 20, 1e-12);
	/* M_W: the one worker is rank 1 (dp_rank 1), and it explains it all */
	CU_ASSERT_STRING_EQUAL(res.mw.workers, "rank 1");
	CU_ASSERT_DOUBLE_EQUAL(res.mw.rem, 1, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(res.mw.add, 1, 1e-12);
	/* Counterfactuals. Speeds 1/12 and 1/24 per step: of 8 micro-batches
	 * 5.33 and 2.67, rounded by largest remainder to 5 and 3. dp_rank 0
	 * computes 12 x 5/4 = 15 s, dp_rank 1 24 x 3/4 = 18 s: the
	 * reduce-scatter ends at 0.5 + 18 + 0.5, the optimizer at 20, the ideal:
	 * all recovered. dbs keeps 4 and 4 in the first step (26 s), then 20:
	 * half. Balancing micro-batches cannot help: they cost the same, and a
	 * slow worker stays slow. */
	CU_ASSERT_DOUBLE_EQUAL(policy("static-proportional")->mean_t, 20, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(policy("static-proportional")->recovered, 1, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(policy("oracle")->recovered, 1, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(policy("dbs")->mean_t, 23, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(policy("dbs")->recovered, 0.5, 1e-12);
	/* lbbsp: after the first step (12 s against 24 s) the straggler gives
	 * max(1, 4 / 4) = 1 micro-batch to the leader: 5 and 3, then 20 s */
	CU_ASSERT_DOUBLE_EQUAL(policy("lbbsp")->mean_t, 23, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(policy("microbatch-balance")->recovered, 0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(policy("microbatch-balance-global")->recovered, 0, 1e-12);
	CU_ASSERT_EQUAL(res.n_policies, 6); /* one stage: no repartition */
	unload();
}

/* Sequence-length imbalance: the heavy micro-batches land on dp_rank 1 in
 * one step and on dp_rank 0 in the next (the rows of test_slow_dp_rank,
 * swapped in the second step). Neither worker is slow over the trace, so
 * balancing the step's micro-batches across the replicas makes every
 * forward 1.5 s and backward 3 s: the ideal 20 s, all recovered; within a
 * replica they already cost the same (nothing recovered). Counts from the
 * whole trace stay 4 and 4 (nothing); from the step itself 5 and 3 (all);
 * from the previous step (dbs) 4 and 4, then 5 for the now heavy replica:
 * 0.5 + 24 x 5/4 + 0.5 + 1 = 32 s, mean 29: -50%. */
static void test_sequence_imbalance(void)
{
	size_t len;
	char *text = header(&len);
	add_rows(&text, &len, slow_dp0, sizeof slow_dp0 / sizeof slow_dp0[0], 0, 2, 3);
	add_rows(&text, &len, slow_dp1, sizeof slow_dp1 / sizeof slow_dp1[0], 1, 2, 3);
	add_rows(&text, &len, slow_dp1, sizeof slow_dp1 / sizeof slow_dp1[0], 0, 2, 4);
	add_rows(&text, &len, slow_dp0, sizeof slow_dp0 / sizeof slow_dp0[0], 1, 2, 4);
	CU_ASSERT_FATAL(load(text));
	CU_ASSERT_DOUBLE_EQUAL(res.mean_nd, 26, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(res.mean_id, 20, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(find(LBS_WI_DP, "0")->value, find(LBS_WI_DP, "1")->value, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(policy("microbatch-balance-global")->mean_t, 20, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(policy("microbatch-balance-global")->recovered, 1, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(policy("microbatch-balance")->recovered, 0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(policy("static-proportional")->recovered, 0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(policy("oracle")->recovered, 1, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(policy("dbs")->mean_t, 29, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(policy("dbs")->recovered, -0.5, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(policy("lbbsp")->mean_t, 29, 1e-12); /* it moves one to the wrong replica too */
	unload();
}

/* The engine replay and the topological sweep agree bit for bit, on the
 * trace's values and on values perturbed per instance. */
static void test_replay_methods_agree(void)
{
	size_t len;
	char *text = header(&len);
	for (int dp = 0; dp < 2; dp++)
		add_rows(&text, &len, pipeline, sizeof pipeline / sizeof pipeline[0], dp, 2, 7);
	CU_ASSERT_FATAL(load(text));
	size_t cells = model.n_inst * model.n_ops;
	double *val = malloc(cells * sizeof *val), *lat = malloc(cells * sizeof *lat);
	double *s1 = malloc(cells * sizeof *s1), *e1 = malloc(cells * sizeof *e1);
	double *s2 = malloc(cells * sizeof *s2), *e2 = malloc(cells * sizeof *e2);
	double T1, T2;
	for (size_t c = 0; c < cells; c++) {
		val[c] = 0.1 + (double)((c * 7919) % 101) / 37;
		lat[c] = (double)((c * 104729) % 13) / 100 - 0.005;
	}
	CU_ASSERT_EQUAL_FATAL(lbs_wi_replay(&model, val, lat, &T1, s1, e1, &err), LBS_OK);
	lbs_wi_replay_sweep(&model, val, lat, &T2, s2, e2);
	CU_ASSERT(T1 == T2);
	CU_ASSERT(memcmp(s1, s2, cells * sizeof *s1) == 0);
	CU_ASSERT(memcmp(e1, e2, cells * sizeof *e1) == 0);
	free(val);
	free(lat);
	free(s1);
	free(e1);
	free(s2);
	free(e2);
	unload();
}

/* The 1F1B pipeline as Chrome trace events (microseconds, absolute
 * times from 1e9 us, no seq_id, mc or gmc: all derived, ranks from pid),
 * in shuffled order: the same model and figures as from the CSV. */
static void test_chrome_trace(void)
{
	size_t n = sizeof pipeline / sizeof pipeline[0], len = 0, cap = 1 << 16;
	char *text = malloc(cap);
	len += (size_t)snprintf(text, cap, "{\"traceEvents\": [\n  {\"name\": \"process_name\", \"ph\": \"M\", "
				"\"pid\": 0, \"args\": {\"name\": \"rank 0\"}}");
	for (int dp = 1; dp >= 0; dp--)
		for (size_t k = 0; k < n; k++) {
			const op_row *r = &pipeline[(k * 7) % n]; /* 7 is prime to 46: a permutation */
			len += (size_t)snprintf(text + len, cap - len,
						",\n  {\"name\": \"%s\", \"ph\": \"X\", \"ts\": %.17g, \"dur\": %.17g, "
						"\"pid\": %d, \"tid\": 1, \"args\": {\"dp_rank\": %d, \"stage\": %d, "
						"\"step\": 5}}", lbs_optype_name(r->type), 1e9 + r->start * 1e6,
						(r->end - r->start) * 1e6, dp + 2 * r->stage, dp, r->stage);
		}
	len += (size_t)snprintf(text + len, cap - len, ",\n  {\"name\": \"aten::mm\", \"ph\": \"X\", \"ts\": 1, "
				"\"dur\": 2, \"pid\": 0}\n]}\n");
	char *path = write_temp(text);
	free(text);
	memset(&err, 0, sizeof err);
	lbs_status st = lbs_ops_read_chrome(path, &trace, &err);
	if (st == LBS_OK)
		st = lbs_wi_model_build(&model, &trace, 1, &err);
	if (st == LBS_OK)
		st = lbs_wi_analyse(&model, &res, &err);
	if (st != LBS_OK)
		fprintf(stderr, "\n  %s\n", err.msg);
	CU_ASSERT_EQUAL_FATAL(st, LBS_OK);
	CU_ASSERT_EQUAL(trace.n, 2 * n); /* the metadata and CPU events skipped */
	CU_ASSERT_EQUAL(model.n_ops, 46);
	CU_ASSERT_EQUAL(model.n_edges, 65);
	CU_ASSERT_EQUAL(model.n_comm_groups, 14);
	CU_ASSERT_EQUAL(model.worker_rank[1 * 2 + 1], 3);
	CU_ASSERT_DOUBLE_EQUAL(res.mean_nd, 28, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(res.mean_id, 23.5, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(res.ms.rem, 6 / 4.5, 1e-9);
	unload();
	unlink(path);
	free(path);
	/* bad files: JSON syntax (line and column), a missing field (the event) */
	path = write_temp("{\"traceEvents\": [\n {\"name\": \"gc\",, }]}");
	CU_ASSERT_EQUAL(lbs_ops_read_chrome(path, &trace, &err), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, ":2:"));
	unlink(path);
	free(path);
	path = write_temp("[{\"name\": \"gc\", \"ph\": \"X\", \"ts\": 0, \"dur\": 0, \"pid\": 0, "
			  "\"args\": {\"dp_rank\": 0, \"step\": 1}}]");
	CU_ASSERT_EQUAL(lbs_ops_read_chrome(path, &trace, &err), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "traceEvents[0]: args.stage: missing"));
	unlink(path);
	free(path);
}

/* Bad traces: the message names the file's line and what is wrong. */
static void expect_bad(char *text, int dsp, const char *frag1, const char *frag2)
{
	char *path = write_temp(text);
	free(text);
	memset(&err, 0, sizeof err);
	lbs_status st = lbs_ops_read(path, &trace, &err);
	if (st == LBS_OK) {
		st = lbs_wi_model_build(&model, &trace, dsp, &err);
		lbs_ops_free(&trace);
	}
	CU_ASSERT_EQUAL(st, LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, path));
	if (!strstr(err.msg, frag1) || (frag2 && !strstr(err.msg, frag2))) {
		fprintf(stderr, "\n  message: %s\n", err.msg);
		CU_FAIL("message lacks the expected fragment");
	}
	unlink(path);
	free(path);
}

static void test_bad_traces(void)
{
	size_t len;
	char *text = header(&len);
	add_rows(&text, &len, slow_dp0, 15, 0, 1, 1);
	add_rows(&text, &len, slow_dp0, 14, 0, 1, 2); /* step 2 lacks the optimizer */
	expect_bad(text, 2, "step 2, dp_rank 0 lacks optimizer_0_0", NULL);
	text = header(&len);
	add_rows(&text, &len, slow_dp0, 15, 0, 1, 1);
	add_rows(&text, &len, slow_dp0, 2, 0, 1, 1); /* ag and F0 again */
	expect_bad(text, 2, ":17:", "again (first at ");
	text = header(&len);
	add_rows(&text, &len, slow_dp0, 15, 0, 1, 1);
	text = realloc(text, len + 64);
	strcpy(text + len, "0,0,0,1,backward-magic,0,1,0,0,0,0\n");
	expect_bad(text, 2, ":17: optype:", "backward-magic");
	text = header(&len);
	add_rows(&text, &len, slow_dp0, 15, 0, 1, 1);
	text = realloc(text, len + 64);
	strcpy(text + len, "0,0,0,1,gc,-1,1,3,0,0,0\n");
	expect_bad(text, 2, ":17: start_ts:", "must be >= 0");
	text = strdup("dp_rank,stage,step,optype,start_ts,duration,seq_id,mc,mb_id,gmc\n");
	expect_bad(text, 2, ":1: header:", "missing column 'rank'");
	/* with one replica (dsp_size 1) the DP collectives have no place */
	text = header(&len);
	add_rows(&text, &len, slow_dp0, 15, 0, 1, 1);
	expect_bad(text, 1, "data-parallel collective", "D x dsp_size = 1");
}

static void test_meta(void)
{
	lbs_ops_meta meta;
	char *path = write_temp("trial_name: X\nrun_id: 0\ndp_size: 2\ndsp_size: 1\npp_size: 4\n"
				"tp_size: 1\nvpp_size: 1\nworld_size: 8\n");
	memset(&err, 0, sizeof err);
	CU_ASSERT_EQUAL(lbs_ops_meta_read(path, &meta, &err), LBS_OK);
	CU_ASSERT_EQUAL(meta.pp_size, 4);
	CU_ASSERT_STRING_EQUAL(meta.trial_name, "X");
	unlink(path);
	free(path);
	const char *bad[][2] = {
		{ "trial_name: X\nrun_id: 0\ndp_size: 2\ndsp_size: 1\npp_size: 4\ntp_size: 1\nvpp_size: 1\n"
		  "world_size: 9\n", ":8: world_size:" },
		{ "trial_name: X\nrun_id: 0\ndp_size: 0\n", ":3: dp_size:" },
		{ "trial_name: X\nrun_id: 0\ncolour: red\n", ":3: colour: unknown key" },
		{ "trial_name: X\ntrial_name: Y\n", ":2: trial_name: given twice" },
		{ "trial_name: X\n", "missing key 'run_id'" },
	};
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		path = write_temp(bad[k][0]);
		CU_ASSERT_EQUAL(lbs_ops_meta_read(path, &meta, &err), LBS_EINPUT);
		if (!strstr(err.msg, bad[k][1]) || !strstr(err.msg, path)) {
			fprintf(stderr, "\n  message: %s\n", err.msg);
			CU_FAIL("meta message lacks the expected fragment");
		}
		unlink(path);
		free(path);
	}
}

/* ByteDance's trace ST (2 dp x 4 stages, 32 steps, gzipped): the figures
 * the authors' analyzer (ByteDance-Seed/StragglerAnalysis, commit
 * 8efcd7f3) prints for it. The method does its per-op arithmetic in
 * float32 as that analyzer does, so the figures agree to rounding: the
 * tolerance, 1e-9 relative, is far below any difference a change in the
 * model would make (the smallest S_t gap is 6e-6) and far above the
 * summation-order noise of a mean of 32 doubles (1e-15). L is compared to
 * 1e-7: the analyzer averages the measured step times in float32. */
static void test_trace_st(void)
{
	char *path = src_path("traces/data/bytedance-whatif/trace-ST.csv.gz");
	memset(&err, 0, sizeof err);
	lbs_status st = lbs_ops_read(path, &trace, &err);
	if (st == LBS_OK)
		st = lbs_wi_model_build(&model, &trace, 1, &err);
	if (st == LBS_OK)
		st = lbs_wi_analyse(&model, &res, &err);
	free(path);
	if (st != LBS_OK)
		fprintf(stderr, "\n  %s\n", err.msg);
	CU_ASSERT_EQUAL_FATAL(st, LBS_OK);
	CU_ASSERT_EQUAL(trace.n, 6784);
	CU_ASSERT_EQUAL(model.n_ops, 106);
	CU_ASSERT_EQUAL(model.n_edges, 165);
	CU_ASSERT_EQUAL(model.n_comm_groups, 34);
	CU_ASSERT_EQUAL(model.n_sync_ops, 12);
#define REL(x, want, tol) CU_ASSERT(fabs((x) / (want) - 1) <= (tol))
	REL(res.S, 1.1787021836556841, 1e-9);
	REL(res.mean_nd, 2.172696813310722, 1e-9);
	REL(res.mean_id, 1.843295824372035, 1e-9);
	REL(res.L, 1.01921617557204, 1e-7);
	REL(res.mean_meas, 2.2144477888941765, 1e-9);
	CU_ASSERT(res.base_max_rel < 1e-5); /* numpy's allclose, as the analyzer checks */
	size_t i23 = 0, i34 = 0;
	for (size_t i = 0; i < res.n_steps; i++) {
		i23 = res.steps[i] == 23 ? i : i23;
		i34 = res.steps[i] == 34 ? i : i34;
	}
	REL(res.t_meas[i23], 2.3816521167755127, 1e-9);
	REL(res.t_nd[i23], 2.339666260908416, 1e-9);
	REL(res.t_nd[i23] / res.t_id[i23], 1.269284197345525, 1e-9);
	REL(res.t_nd[i34] / res.t_id[i34], 1.116623141524432, 1e-9);
	static const struct {
		const char *name;
		double v;
	} st_t[] = {
		{ "forward-compute", 1.0874989663025318 },
		{ "backward-compute", 1.074156472437866 },
		{ "embedding-grads-all-reduce", 1.0095504024370303 },
		{ "grads-reduce-scatter", 1.00266695254219 },
		{ "optimizer-clip-main-grad", 1.0023506224771044 },
		{ "optimizer", 1.0014767395023902 },
		{ "params-all-gather", 1.0011307740825817 },
		{ "layernorm-grads-all-reduce", 1.0000026919173086 },
		{ "gc", 1.0 },
		{ "backward-pp-comm", 0.999992994223364 },
		{ "forward-pp-comm", 0.9998586213458615 },
	};
	size_t n_t = 0;
	for (size_t k = 0; k < sizeof st_t / sizeof st_t[0]; k++) {
		const lbs_wi_slowdown *s = find(LBS_WI_OPTYPE, st_t[k].name);
		REL(s->value, st_t[k].v, 1e-9);
		/* sorted by decreasing value, as listed */
		CU_ASSERT_STRING_EQUAL(res.slow[k].name, st_t[k].name);
	}
	for (size_t i = 0; i < res.n_slow; i++)
		n_t += res.slow[i].kind == LBS_WI_OPTYPE;
	CU_ASSERT_EQUAL(n_t, 11);
	REL(find(LBS_WI_DP, "1")->value, 1.1778704237064905, 1e-9);
	REL(find(LBS_WI_DP, "0")->value, 1.1730828198099532, 1e-9);
	REL(find(LBS_WI_STAGE, "3")->value, 1.2322559543157936, 1e-9);
	REL(find(LBS_WI_STAGE, "0")->value, 0.9980450635272368, 1e-9);
	REL(find(LBS_WI_STAGE, "1")->value, 0.9830562530894704, 1e-9);
	REL(find(LBS_WI_STAGE, "2")->value, 0.9824931309511952, 1e-9);
	REL(find(LBS_WI_WORKER, "7")->value, 1.1778704237064905, 1e-9);
	REL(find(LBS_WI_WORKER, "6")->value, 1.1730828198099532, 1e-9);
	REL(find(LBS_WI_WORKER, "0")->value, 0.9980450635272368, 1e-9);
	REL(find(LBS_WI_WORKER, "1")->value, 0.9980450635272368, 1e-9);
	REL(res.ms.rem, 1.2193563788811714, 1e-9);
	REL(res.ms.t_rem, 1.7710396162385678, 1e-9);
	REL(res.ms.t_add, 2.2714122551478795, 1e-9);
	REL(res.ms.add, 1.2996816802378568, 1e-9);
	CU_ASSERT_STRING_EQUAL(res.mw.workers, "rank 7");
	REL(res.mw.rem, 0.031404269124045224, 1e-7); /* a difference of two close times: 1e-9 of T is 6e-8 of it */
	REL(res.mw.t_rem, 2.162352216004365, 1e-9);
	REL(res.mw.t_add, 2.270835546682065, 1e-9);
	REL(res.mw.add, 1.297930900837732, 1e-9);
	/* the ideal values */
	REL(res.ideal_d[FC], 0.0852820626, 1e-9);
	REL(res.ideal_d[BC], 0.158410238, 1e-8);
	REL(res.ideal_d[OPT], 0.0405004788, 1e-8);
	REL(res.ideal_x[FS], 0.000546202064, 1e-8);
	REL(res.ideal_x[CLIP], 0.00512897968, 1e-8);
	REL(res.ideal_d[LN], 3.75359996e-05, 1e-8);
#undef REL
	unload();
}

void suite_whatif(void)
{
	static const test_case tests[] = {
		{ "2 stages x 4 microbatches 1F1B, slow last stage: schedule, S, M_S, M_W", test_pipeline_model },
		{ "one slow dp_rank: S, S_dp, S_t, launch delay, M_W", test_slow_dp_rank },
		{ "sequence-length imbalance: which policies recover it", test_sequence_imbalance },
		{ "engine replay and topological sweep agree", test_replay_methods_agree },
		{ "Chrome trace events: the same model and figures", test_chrome_trace },
		{ "bad per-operation traces name the line", test_bad_traces },
		{ "job metadata and its errors", test_meta },
		{ "ByteDance trace ST against the analyzer's figures", test_trace_st },
	};
	add_suite("whatif", tests, sizeof tests / sizeof tests[0]);
}
