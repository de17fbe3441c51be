/* SPDX-License-Identifier: GPL-3.0-or-later */
/* resplit: the layers re-partitioned across the pipeline stages from
 * measured stage times (doc/hybrid.md, "Balancing policies"). Every
 * `[hybrid_policy] every` steps (0: every step) it measures each stage's
 * time a block a micro-batch, c_s = max_r compute_s(r, s) / (m_r b_s) (the
 * slowest replica's: every replica holds the same partition), and finds
 * the partition minimising the slowest stage, max_s b_s c_s
 * (lbs_hy_partition). It moves only when that pays: the step predicted for
 * a partition b is (M / d + p - 1) max_s b_s c_s (a pipeline of
 * micro-batches at its bottleneck's pace), and the new partition is
 * adopted when `horizon` steps of the predicted saving exceed the pause of
 * moving its blocks (the most blocks crossing one stage boundary times
 * env->blk_move_s) -- the break-even rule of the ski-rental problem with
 * the horizon as the expected length of the imbalance. The embedding and
 * head a stage holds count in its measured time, so the first and last
 * stages are charged them per block: a re-split from measurements then
 * corrects itself at the next decision.
 *
 * Worked example (tests/unit/test_hybrid_policy.c): p = 2, 6 blocks of
 * forward 1/3 s and backward 2/3 s, 3 a stage, stage 1 at availability
 * 0.5, 1F1B, m = 4, one replica: stage 0 F 1 s B 2 s, stage 1 F 2 s B 4 s:
 * the step is 27 s (the slow-stage case of tests/unit/test_hybrid.c).
 * Measured c = 12 / (4 x 3) = 1 s and 24 / 12 = 2 s; the partition: 1 / 1,
 * then the third block to stage 0 (2 x 1 = 2 < 2 x 2), the fourth to stage
 * 0 (3 < 4), the fifth to stage 0 (4 = 4, ties to the lower stage), the
 * sixth to stage 1 (4 < 5): 4 / 2, both stages 4 s a micro-batch, a step
 * of (m + p - 1) x 4 = 20 s. Predicted saving (4 + 1) x (6 - 4) = 10 s a
 * step; one block crosses the boundary. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hybrid/policy.h"

typedef struct resplit_options {
	double horizon;
} resplit_options;

static const lbs_key_spec resplit_keys[] = {
	{ "horizon", LBS_T_REAL, offsetof(resplit_options, horizon), "20", 0, 1e9, 0, NULL, NULL,
	  "steps: a new partition is adopted when this many steps of its predicted saving exceed the pause "
	  "of moving its blocks (0: whenever it is predicted faster, whatever the pause)" },
};

typedef struct resplit_state {
	resplit_options opt;
	lbs_hy_policy_env env;
	double *cost;
	int *cand;
} resplit_state;

static void resplit_destroy(void *state)
{
	resplit_state *s = state;
	if (!s)
		return;
	free(s->cost);
	free(s->cand);
	free(s);
}

static lbs_status resplit_create(const lbs_hy_policy_env *env, const lbs_kv *options, size_t n_options, void **state,
				 bool *lookahead, lbs_error *err)
{
	resplit_state *s = lbs_calloc(1, sizeof *s, err);
	if (!s)
		return LBS_EINTERNAL;
	s->env = *env;
	*lookahead = false;
	lbs_status st = lbs_options_parse(resplit_keys, 1, "hybrid_policy.resplit", options, n_options, &s->opt, err);
	if (st == LBS_OK && env->n_blocks < env->p)
		st = lbs_error_set(err, LBS_EINPUT, "resplit moves blocks between stages, which needs a block a stage "
				   "at least (a block a chunk with virtual_stages) and the split its own (no "
				   "[hybrid] first_stage_layers or last_stage_layers)");
	s->cost = st == LBS_OK ? calloc((size_t)env->p, sizeof *s->cost) : NULL;
	s->cand = st == LBS_OK ? calloc((size_t)env->p, sizeof *s->cand) : NULL;
	if (st == LBS_OK && (!s->cost || !s->cand))
		st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	if (st != LBS_OK) {
		resplit_destroy(s);
		return st;
	}
	*state = s;
	return LBS_OK;
}

static double slowest(int p, const int *b, const double *c)
{
	double t = 0;
	for (int q = 0; q < p; q++)
		t = fmax(t, b[q] * c[q]);
	return t;
}

/* The most blocks crossing one stage boundary from a to b. */
static int crossing(int p, const int *a, const int *b)
{
	int most = 0, pa = 0, pb = 0;
	for (int q = 0; q + 1 < p; q++) {
		pa += a[q], pb += b[q];
		most = abs(pa - pb) > most ? abs(pa - pb) : most;
	}
	return most;
}

static lbs_status resplit_plan(void *state, const lbs_hy_observation *obs, lbs_hy_decision *dec, lbs_error *err)
{
	(void)err;
	resplit_state *s = state;
	int d = s->env.d, p = s->env.p;
	dec->changed = false;
	if (!obs->m_of || !dec->blocks)
		return LBS_OK;
	if (s->env.every > 1 && obs->step % s->env.every)
		return LBS_OK;
	for (int q = 0; q < p; q++) {
		s->cost[q] = 0;
		for (int r = 0; r < d; r++)
			s->cost[q] = fmax(s->cost[q], obs->compute_s[(size_t)r * (size_t)p + (size_t)q] /
							      ((double)obs->m_of[r] * obs->blocks[q]));
		if (!(s->cost[q] > 0))
			return LBS_OK;
	}
	if (!lbs_hy_partition(s->env.n_blocks, p, s->cost, s->env.max_blocks, s->cand))
		return LBS_OK;
	double slots = (double)s->env.total_m / d + p - 1;
	double gain = slots * (slowest(p, obs->blocks, s->cost) - slowest(p, s->cand, s->cost));
	double pause = crossing(p, obs->blocks, s->cand) * s->env.blk_move_s;
	if (!(gain > 0) || (s->opt.horizon > 0 && s->opt.horizon * gain <= pause))
		return LBS_OK;
	memcpy(dec->blocks, s->cand, (size_t)p * sizeof *s->cand);
	dec->changed = true;
	return LBS_OK;
}

const lbs_hy_policy_ops lbs_hy_policy_resplit = {
	.name = "resplit",
	.summary = "the blocks re-partitioned across the stages from measured stage times, when the predicted "
		   "saving over `horizon` steps exceeds the pause of moving them",
	.options = resplit_keys,
	.n_options = 1,
	.options_size = sizeof(resplit_options),
	.create = resplit_create,
	.plan = resplit_plan,
	.destroy = resplit_destroy,
};
