/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ladder: fail-slow mitigation by escalation (doc/hybrid.md, "Balancing
 * policies"), after Greyhound (Wu, Wang, Yu et al., "Greyhound: Hunting
 * Fail-Slows in Hybrid-Parallel Training at Scale", USENIX ATC 2025;
 * preprint "FALCON", arXiv 2410.12588), which detects fail-slows from
 * iteration times and climbs four levels of mitigation (no action,
 * micro-batch tuning, pipeline reconfiguration, checkpoint-restart), each
 * dearer and more effective, the escalation timed by a ski-rental rule.
 *
 * Detection, from what lbsim records: group g's compute time per
 * micro-batch t_g = compute_s(g) / m_r against the fastest of its stage's
 * peers in the other replicas (they run the same blocks): g is slow when
 * t_g > (1 + threshold) min_peers t; an episode is detected when a group
 * has been slow `confirm` steps in a row (the detection delay).
 *
 * The ladder: 0 no action; 1 replica shares (the replicas' micro-batches
 * by measured speed, lbs_hy_split; cost `shares_cost`); 2 layer re-split
 * (only with p > 1 and v = 1: the blocks by measured stage cost,
 * lbs_hy_partition; cost: the pause of moving them, counted blocks x
 * env->blk_move_s); 3 replacing the slow groups' nodes from spares (cost
 * `restart`, the checkpoint-restart, charged by the engine), after which
 * the split and the partition return to the initial ones. A rung that
 * changes nothing is skipped.
 *
 * Escalation (the ski-rental rule, Karlin, Manasse, Rudolph and Sleator,
 * "Competitive snoopy caching", Algorithmica 1988: renting until the rent
 * paid equals the price to buy, then buying, never pays more than twice
 * the optimum whatever the unknown duration): the loss of each step since
 * the last action, step_s - healthy_s, is accumulated, and the next rung
 * is taken when the accumulated loss reaches its cost. healthy_s is the
 * last step with no slow group; before one is seen, the step at detection
 * times the fastest over the slowest per-micro-batch time (exact when the
 * replicas share evenly and the slow group is the bottleneck). When no group is slow
 * any more (the episode ended) the split and partition return to the
 * initial ones and the ladder to rung 0.
 *
 * Worked example (tests/unit/test_hybrid_policy.c): two replicas of one
 * stage, 3 s a micro-batch, 3 each, replica 0 at 0.5 from time 0 for an
 * episode of E seconds; shares_cost 0, restart 30 s, confirm 1. Step 0:
 * 18 s (healthy estimate 18 x 3 / 6 = 9 s, loss 9 s >= 0: rung 1, 2 / 4).
 * Steps 1 on: 12 s, 3 s of loss each. E = 1000 s: the loss reaches 30 s
 * with step 10 (steps 1 to 10): before step 11, at 18 + 10 x 12 = 138 s,
 * replica 0's node is replaced: a 30 s pause, then 3 / 3 at full speed,
 * 9 s steps (12 steps end at 177 s). E = 100 s: step 7 ([90, 102] s)
 * still loses 3 s (replica 0 ends at 101 s, replica 1 at 102 s): 24 s
 * accumulated; step 8 runs replica 0 at full speed (per micro-batch 3 s,
 * as replica 1: not slow), so before step 9 the split returns to 3 / 3
 * and no restart is bought: 10 steps end at 18 + 8 x 12 + 9 = 123 s,
 * against 5 x 18 + 14 + 4 x 9 = 140 s for static (its step 5, [90,
 * 108], ends at 104 s: 5 s of work by 100 s at 0.5, 4 s after). */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hybrid/policy.h"

typedef struct ladder_options {
	double threshold, shares_cost, restart;
	int64_t confirm;
} ladder_options;

static const lbs_key_spec ladder_keys[] = {
	{ "threshold", LBS_T_REAL, offsetof(ladder_options, threshold), "0.1", 0, 100, LBS_K_MIN_OPEN, NULL, NULL,
	  "fraction (0.1 or 10%): a group is slow when its compute time per micro-batch exceeds the fastest "
	  "of its stage's peers by more than this" },
	{ "confirm", LBS_T_INT, offsetof(ladder_options, confirm), "1", 1, 1e6, 0, NULL, NULL,
	  "steps a group must be slow in a row before the episode is acted on (the detection delay)" },
	{ "shares_cost", LBS_T_TIME, offsetof(ladder_options, shares_cost), "0 s", 0, 1e9, 0, NULL, NULL,
	  "the price of the first rung, re-splitting the replicas' micro-batches (the data loader's "
	  "re-partition; lbsim charges no time for it)" },
	{ "restart", LBS_T_TIME, offsetof(ladder_options, restart), "300 s", 0, 1e9, 0, NULL, NULL,
	  "the checkpoint-restart pause of replacing a node from a spare (an assumption of the scenario: "
	  "loading a checkpoint and re-forming the communicators), charged before the next step" },
};

typedef struct ladder_state {
	ladder_options opt;
	lbs_hy_policy_env env;
	int rung;
	double loss_s, healthy_s;
	int64_t *streak;  /* G: steps in a row each group was slow */
	int *m0, *b0;     /* the initial split and partition */
	double *speed, *cost;
	int *cand;
} ladder_state;

static void ladder_destroy(void *state)
{
	ladder_state *s = state;
	if (!s)
		return;
	free(s->streak);
	free(s->m0);
	free(s->b0);
	free(s->speed);
	free(s->cost);
	free(s->cand);
	free(s);
}

static lbs_status ladder_create(const lbs_hy_policy_env *env, const lbs_kv *options, size_t n_options, void **state,
				bool *lookahead, lbs_error *err)
{
	ladder_state *s = lbs_calloc(1, sizeof *s, err);
	if (!s)
		return LBS_EINTERNAL;
	s->env = *env;
	*lookahead = false;
	size_t d = (size_t)env->d, p = (size_t)env->p;
	lbs_status st = lbs_options_parse(ladder_keys, sizeof ladder_keys / sizeof ladder_keys[0],
					  "hybrid_policy.ladder", options, n_options, &s->opt, err);
	if (st == LBS_OK) {
		s->streak = calloc(d * p, sizeof *s->streak);
		s->m0 = calloc(d, sizeof *s->m0);
		s->b0 = calloc(p, sizeof *s->b0);
		s->speed = calloc(d, sizeof *s->speed);
		s->cost = calloc(p, sizeof *s->cost);
		s->cand = calloc(p > d ? p : d, sizeof *s->cand);
		if (!s->streak || !s->m0 || !s->b0 || !s->speed || !s->cost || !s->cand)
			st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	}
	if (st != LBS_OK) {
		ladder_destroy(s);
		return st;
	}
	s->rung = -1; /* the initial split not yet seen */
	*state = s;
	return LBS_OK;
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

/* Back to the initial split and partition. */
static void restore(ladder_state *s, lbs_hy_decision *dec)
{
	int d = s->env.d, p = s->env.p;
	if (memcmp(dec->m_of, s->m0, (size_t)d * sizeof *s->m0)) {
		memcpy(dec->m_of, s->m0, (size_t)d * sizeof *s->m0);
		dec->changed = true;
	}
	if (dec->blocks && memcmp(dec->blocks, s->b0, (size_t)p * sizeof *s->b0)) {
		memcpy(dec->blocks, s->b0, (size_t)p * sizeof *s->b0);
		dec->changed = true;
	}
}

/* The replicas' micro-batches by measured speed (rung 1). */
static bool shares(ladder_state *s, const lbs_hy_observation *obs, int *next)
{
	int d = s->env.d, p = s->env.p;
	for (int r = 0; r < d; r++)
		s->speed[r] = lbs_hy_replica_speed(obs->m_of[r], p, obs->compute_s + (size_t)r * (size_t)p);
	return lbs_hy_split(s->env.total_m, d, s->env.quantum, s->speed, s->env.max_m, next) &&
	       memcmp(next, obs->m_of, (size_t)d * sizeof *next) != 0;
}

/* The blocks by measured stage cost (rung 2). */
static bool resplit(ladder_state *s, const lbs_hy_observation *obs, const int *blocks, int *next)
{
	int d = s->env.d, p = s->env.p;
	if (!blocks || p < 2)
		return false;
	for (int q = 0; q < p; q++) {
		s->cost[q] = 0;
		for (int r = 0; r < d; r++)
			s->cost[q] = fmax(s->cost[q], obs->compute_s[(size_t)r * (size_t)p + (size_t)q] /
							      ((double)obs->m_of[r] * blocks[q]));
	}
	return lbs_hy_partition(s->env.n_blocks, p, s->cost, s->env.max_blocks, next) &&
	       memcmp(next, blocks, (size_t)p * sizeof *next) != 0;
}

static lbs_status ladder_plan(void *state, const lbs_hy_observation *obs, lbs_hy_decision *dec, lbs_error *err)
{
	(void)err;
	ladder_state *s = state;
	int d = s->env.d, p = s->env.p;
	dec->changed = false;
	if (s->rung < 0) {
		memcpy(s->m0, dec->m_of, (size_t)d * sizeof *s->m0);
		if (dec->blocks)
			memcpy(s->b0, dec->blocks, (size_t)p * sizeof *s->b0);
		s->rung = 0;
	}
	if (!obs->m_of)
		return LBS_OK;
	/* detection: each group against the fastest of its stage */
	bool detected = false, any_slow = false;
	double worst = 1; /* the slowest group's time over its stage's fastest */
	for (int q = 0; q < p; q++) {
		double fast = INFINITY;
		for (int r = 0; r < d; r++)
			fast = fmin(fast, obs->compute_s[(size_t)r * (size_t)p + (size_t)q] / obs->m_of[r]);
		for (int r = 0; r < d; r++) {
			size_t g = (size_t)r * (size_t)p + (size_t)q;
			double t = obs->compute_s[g] / obs->m_of[r];
			bool slow = fast > 0 && t > (1 + s->opt.threshold) * fast;
			s->streak[g] = slow ? s->streak[g] + 1 : 0;
			any_slow |= slow;
			detected |= s->streak[g] >= s->opt.confirm;
			if (slow)
				worst = fmax(worst, t / fast);
		}
	}
	if (!any_slow) {
		/* healthy: the episode is over, or never began */
		if (s->rung > 0)
			restore(s, dec);
		if (s->rung == 0)
			s->healthy_s = obs->step_s;
		s->rung = 0;
		s->loss_s = 0;
		return LBS_OK;
	}
	if (!detected)
		return LBS_OK;
	if (!(s->healthy_s > 0))
		s->healthy_s = obs->step_s / worst; /* no healthy step seen: estimated once, at detection */
	double healthy = s->healthy_s;
	s->loss_s += fmax(0, obs->step_s - healthy);
	/* the next rung that would change something, and its price */
	for (int next = s->rung + 1; next <= 3; next++) {
		double price = INFINITY;
		bool can = false;
		if (next == 1) {
			can = shares(s, obs, s->cand);
			price = s->opt.shares_cost;
		} else if (next == 2) {
			can = resplit(s, obs, dec->blocks, s->cand);
			price = can ? crossing(p, dec->blocks, s->cand) * s->env.blk_move_s : INFINITY;
		} else {
			can = dec->replace != NULL;
			price = s->opt.restart;
		}
		if (!can)
			continue;
		if (s->loss_s < price)
			return LBS_OK; /* keep renting */
		/* buy: take this rung */
		if (next == 1)
			memcpy(dec->m_of, s->cand, (size_t)d * sizeof *dec->m_of);
		else if (next == 2)
			memcpy(dec->blocks, s->cand, (size_t)p * sizeof *dec->blocks);
		else {
			for (size_t g = 0; g < (size_t)d * (size_t)p; g++)
				dec->replace[g] = s->streak[g] > 0;
			dec->restart_s = s->opt.restart;
			restore(s, dec);
			for (size_t g = 0; g < (size_t)d * (size_t)p; g++)
				s->streak[g] = 0;
		}
		dec->changed = true;
		s->rung = next == 3 ? 0 : next;
		s->loss_s = 0;
		return LBS_OK;
	}
	return LBS_OK;
}

const lbs_hy_policy_ops lbs_hy_policy_ladder = {
	.name = "ladder",
	.summary = "fail-slow mitigation (Greyhound, ATC'25): detection from per-group compute times, then "
		   "replica shares, layer re-split, node replacement, each taken when the loss since the last "
		   "action reaches its cost (ski rental)",
	.options = ladder_keys,
	.n_options = sizeof ladder_keys / sizeof ladder_keys[0],
	.options_size = sizeof(ladder_options),
	.create = ladder_create,
	.plan = ladder_plan,
	.destroy = ladder_destroy,
};
