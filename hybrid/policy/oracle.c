/* SPDX-License-Identifier: GPL-3.0-or-later */
/* oracle: the best split of the coming step given every group's true
 * availability, found by simulating the coming step under candidate splits
 * (obs->future; doc/hybrid.md, "Balancing policies"). A bound for the
 * replica-share policies, not a policy a real system could run: it knows
 * the future and pays nothing to decide.
 *
 * When the replicas meet only at the gradient reductions after their
 * pipelines drain (overlap_dp = no; obs->future->replica_s), the step of
 * a split is max_r g_r(m_r) + rest with each g_r non-decreasing, and the
 * greedy below is exact. Otherwise: two replicas, every split in
 * multiples of the quantum within the memory is simulated (exact); more,
 * steepest descent from the current split and the even one, moving one
 * quantum between two replicas while the step shrinks (a local optimum).
 * The oracle is per step: the best split of each step given the
 * availability to come, not a plan over the run; it never re-splits the
 * layers.
 *
 * Example: two replicas of two 1F1B stages, forward 1 s and backward 2 s,
 * the first at availability 0.5, M = 6: the splits (1, 5), (2, 4) and
 * (3, 3) take 18, 18 and 24 s: the oracle's step is 18 s
 * (tests/unit/test_hybrid_policy.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hybrid/policy.h"

typedef struct oracle_state {
	lbs_hy_policy_env env;
	int *cand, *best;
} oracle_state;

static void oracle_destroy(void *state)
{
	oracle_state *s = state;
	if (!s)
		return;
	free(s->cand);
	free(s->best);
	free(s);
}

static lbs_status oracle_create(const lbs_hy_policy_env *env, const lbs_kv *options, size_t n_options, void **state,
				bool *lookahead, lbs_error *err)
{
	(void)options, (void)n_options;
	oracle_state *s = lbs_calloc(1, sizeof *s, err);
	if (!s)
		return LBS_EINTERNAL;
	s->env = *env;
	s->cand = calloc((size_t)env->d, sizeof *s->cand);
	s->best = calloc((size_t)env->d, sizeof *s->best);
	if (!s->cand || !s->best) {
		oracle_destroy(s);
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	}
	*lookahead = true;
	*state = s;
	return LBS_OK;
}

static bool fits(const oracle_state *s, const int *m)
{
	for (int r = 0; r < s->env.d; r++)
		if (m[r] < s->env.quantum || m[r] > s->env.max_m[r])
			return false;
	return true;
}

/* Steepest descent from start[]: the best single move of one quantum
 * between two replicas, while it shortens the step. */
static lbs_status descend(oracle_state *s, const lbs_hy_future *fu, const int *start, double *best_s, lbs_error *err)
{
	int d = s->env.d, q = s->env.quantum;
	int *cur = malloc((size_t)d * sizeof *cur);
	if (!cur)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	memcpy(cur, start, (size_t)d * sizeof *cur);
	double cur_s;
	lbs_status st = fu->step_s(fu->ctx, cur, &cur_s, err);
	for (int round = 0; st == LBS_OK && round < 4 * s->env.total_m; round++) {
		double step_best = cur_s;
		int from = -1, to = -1;
		for (int i = 0; st == LBS_OK && i < d; i++)
			for (int j = 0; st == LBS_OK && j < d; j++) {
				if (i == j)
					continue;
				memcpy(s->cand, cur, (size_t)d * sizeof *cur);
				s->cand[i] -= q, s->cand[j] += q;
				if (!fits(s, s->cand))
					continue;
				double t;
				st = fu->step_s(fu->ctx, s->cand, &t, err);
				if (st == LBS_OK && t < step_best)
					step_best = t, from = i, to = j;
			}
		if (from < 0)
			break;
		cur[from] -= q, cur[to] += q;
		cur_s = step_best;
	}
	if (st == LBS_OK && cur_s < *best_s) {
		*best_s = cur_s;
		memcpy(s->best, cur, (size_t)d * sizeof *cur);
	}
	free(cur);
	return st;
}

/* With replica_s (the replicas meet only after their pipelines): the
 * step of a split is max_r g_r(m_r) + rest, each g_r non-decreasing in
 * m, so the greedy that gives the next quantum to the replica whose g
 * with it is least (ties to the lower index) minimises the step: the
 * exchange argument of minimising a maximum of increasing terms. Each g
 * at a new m costs one simulated step of every replica at m. */
static lbs_status greedy(oracle_state *s, const lbs_hy_future *fu, double *best_s, lbs_error *err)
{
	int d = s->env.d, q = s->env.quantum, M = s->env.total_m, levels = M / q;
	double *gm = malloc((size_t)levels * (size_t)d * sizeof *gm), rest = 0;
	bool *have = calloc((size_t)levels, sizeof *have);
	lbs_status st = LBS_OK;
	if (!gm || !have)
		st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	for (int r = 0; r < d; r++)
		s->cand[r] = q;
	/* g at level k (m = (k + 1) q), simulated once for every replica */
#define G_AT(k, r) (gm[(size_t)(k) * (size_t)d + (size_t)(r)])
	for (int left = M - d * q; st == LBS_OK && left > 0; left -= q) {
		int pick = -1;
		double low = INFINITY;
		for (int r = 0; st == LBS_OK && r < d; r++) {
			int k = s->cand[r] / q; /* the level of cand + q */
			if (s->cand[r] + q > s->env.max_m[r] || k >= levels)
				continue;
			if (!have[k]) {
				double rs;
				st = fu->replica_s(fu->ctx, (k + 1) * q, &G_AT(k, 0), &rs, err);
				have[k] = true;
				rest = fmax(rest, rs);
			}
			if (st == LBS_OK && G_AT(k, r) < low)
				low = G_AT(k, r), pick = r;
		}
		if (st != LBS_OK)
			break;
		if (pick < 0) {
			st = lbs_error_set(err, LBS_EINTERNAL, "oracle: the replicas' memory cannot hold %d micro-batches",
					   M);
			break;
		}
		s->cand[pick] += q;
	}
#undef G_AT
	free(gm);
	free(have);
	if (st != LBS_OK)
		return st;
	/* the greedy's split, simulated whole */
	double t;
	st = fu->step_s(fu->ctx, s->cand, &t, err);
	if (st == LBS_OK && t < *best_s) {
		*best_s = t;
		memcpy(s->best, s->cand, (size_t)d * sizeof *s->cand);
	}
	return st;
}

static lbs_status oracle_plan(void *state, const lbs_hy_observation *obs, lbs_hy_decision *dec, lbs_error *err)
{
	int *m_of = dec->m_of;
	bool *changed = &dec->changed;
	oracle_state *s = state;
	int d = s->env.d, q = s->env.quantum, M = s->env.total_m;
	const lbs_hy_future *fu = obs->future;
	*changed = false;
	double best_s = INFINITY;
	lbs_status st = LBS_OK;
	if (fu->replica_s) {
		/* exact: the greedy; the current split kept if it ties */
		st = fu->step_s(fu->ctx, m_of, &best_s, err);
		memcpy(s->best, m_of, (size_t)d * sizeof *m_of);
		if (st == LBS_OK)
			st = greedy(s, fu, &best_s, err);
	} else if (d == 2) {
		for (int a = q; st == LBS_OK && a <= M - q; a += q) {
			s->cand[0] = a, s->cand[1] = M - a;
			if (!fits(s, s->cand))
				continue;
			double t;
			st = fu->step_s(fu->ctx, s->cand, &t, err);
			if (st == LBS_OK && t < best_s)
				best_s = t, memcpy(s->best, s->cand, 2 * sizeof *s->cand);
		}
	} else {
		st = descend(s, fu, m_of, &best_s, err);
		int *even = malloc((size_t)d * sizeof *even);
		if (st == LBS_OK && !even)
			st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
		for (int r = 0; st == LBS_OK && r < d; r++)
			even[r] = (M / q / d + (r < M / q % d)) * q;
		if (st == LBS_OK && fits(s, even))
			st = descend(s, fu, even, &best_s, err);
		free(even);
	}
	if (st != LBS_OK || !isfinite(best_s))
		return st;
	*changed = memcmp(s->best, m_of, (size_t)d * sizeof *m_of) != 0;
	memcpy(m_of, s->best, (size_t)d * sizeof *m_of);
	return LBS_OK;
}

const lbs_hy_policy_ops lbs_hy_policy_oracle = {
	.name = "oracle",
	.summary = "the bound: the split whose coming step, simulated with every group's true availability, is "
		   "shortest (exhaustive for 2 replicas, steepest descent beyond)",
	.create = oracle_create,
	.plan = oracle_plan,
	.destroy = oracle_destroy,
};
