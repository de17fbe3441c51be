/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A hybrid run's steps under a balancing policy (hybrid/balance.h). */
#include "hybrid/balance.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine.h"
#include "util/clock.h"

static void free_sim(lbs_hy_balance *bal)
{
	if (bal->sim) {
		lbs_hy_sim_destroy(bal->sim);
		lbs_hy_graph_free(bal->gr);
	}
	free(bal->sim);
	free(bal->gr);
	bal->sim = NULL;
	bal->gr = NULL;
}

int64_t lbs_hy_max_micro_batches(const lbs_hy_built *b, int schedule, int r, int64_t cap_m)
{
	const lbs_hy_plan *pl = &b->plan;
	int64_t best = 0;
	for (int64_t m = 1; m <= cap_m; m++) {
		bool fits = true;
		for (int s = 0; fits && s < pl->p; s++) {
			size_t g = (size_t)r * (size_t)pl->p + (size_t)s;
			double state = b->mem_bytes[g] - b->act_bytes[g] * lbs_hy_in_flight(schedule, pl->m, pl->p, s, pl->v);
			fits = state + b->act_bytes[g] * lbs_hy_in_flight(schedule, (int)m, pl->p, s, pl->v) <= b->mem_cap[g];
		}
		if (!fits)
			break; /* activations in flight only grow with m */
		best = m;
	}
	return best;
}

/* The graph and simulation of the split in m_of, carrying on from the
 * current simulation's time when there is one. */
static lbs_status rebuild(lbs_hy_balance *bal, lbs_error *err)
{
	lbs_hy_graph *gr = malloc(sizeof *gr);
	lbs_hy_sim *sim = malloc(sizeof *sim);
	if (!gr || !sim) {
		free(gr);
		free(sim);
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	}
	lbs_status st = lbs_hy_graph_build(gr, &bal->plan, err);
	if (st == LBS_OK && (st = lbs_hy_sim_create(sim, gr, err)) != LBS_OK)
		lbs_hy_graph_free(gr);
	if (st != LBS_OK) {
		free(gr);
		free(sim);
		return st;
	}
	if (bal->sim) {
		sim->now_s = bal->sim->now_s;
		sim->step = bal->sim->step;
		sim->events = bal->sim->events;
		sim->eng->events = bal->sim->events;
	}
	free_sim(bal);
	bal->gr = gr;
	bal->sim = sim;
	return LBS_OK;
}

/* obs->future: the coming step under m_of, on a copy of the job. */
static lbs_status future_step(void *ctx, const int *m_of, double *step_s, lbs_error *err)
{
	const lbs_hy_balance *bal = ctx;
	lbs_hy_plan pl = bal->plan;
	pl.m_of = m_of;
	lbs_hy_graph gr;
	lbs_hy_sim sim;
	lbs_status st = lbs_hy_graph_build(&gr, &pl, err);
	if (st != LBS_OK)
		return st;
	if ((st = lbs_hy_sim_create(&sim, &gr, err)) == LBS_OK) {
		sim.now_s = bal->sim->now_s;
		sim.step = bal->sim->step;
		st = lbs_hy_sim_step(&sim, step_s, err);
		lbs_hy_sim_destroy(&sim);
	}
	lbs_hy_graph_free(&gr);
	return st;
}

lbs_status lbs_hy_balance_create(lbs_hy_balance *bal, const lbs_hy_scenario *sc, const lbs_hy_built *b,
				 lbs_error *err)
{
	memset(bal, 0, sizeof *bal);
	const lbs_hy_plan *pl = &b->plan;
	int d = pl->d, p = pl->p;
	bal->ops = lbs_hy_policy_find(sc->policy.name);
	if (!bal->ops)
		return lbs_error_set(err, LBS_EINPUT, "%s: [hybrid_policy] name: no policy '%s'", sc->path,
				     sc->policy.name);
	bal->plan = *pl;
	bal->m_of = malloc((size_t)d * sizeof *bal->m_of);
	bal->next = malloc((size_t)d * sizeof *bal->next);
	bal->max_m = malloc((size_t)d * sizeof *bal->max_m);
	bal->compute_s = calloc((size_t)d * (size_t)p, sizeof *bal->compute_s);
	if (!bal->m_of || !bal->next || !bal->max_m || !bal->compute_s) {
		lbs_hy_balance_destroy(bal);
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory for the hybrid policy");
	}
	int M = pl->m * d, q = pl->schedule == LBS_HY_INTERLEAVED ? p : 1;
	bool moves = strcmp(bal->ops->name, "static") != 0;
	for (int r = 0; r < d; r++) {
		bal->m_of[r] = pl->m;
		/* the memory limit matters only to a policy that moves micro-batches */
		bal->max_m[r] = moves ? lbs_hy_max_micro_batches(b, pl->schedule, r, M) / q * q : pl->m;
	}
	bal->plan.m_of = bal->m_of;
	bal->env = (lbs_hy_policy_env){ .d = d, .p = p, .total_m = M, .quantum = q, .max_m = bal->max_m,
					.every = sc->policy.every, .steps_per_epoch = sc->policy.epoch_steps,
					.seed = (uint64_t)sc->run.seed };
	lbs_status st = bal->ops->create(&bal->env, sc->policy.options, sc->policy.n_options, &bal->state,
					 &bal->lookahead, err);
	if (st == LBS_OK && bal->lookahead && pl->src)
		st = lbs_error_set(err, LBS_EINPUT, "%s: [hybrid_policy] name: the %s looks ahead by simulating the "
				   "coming step, which a node replaying a trace cannot do twice", sc->path, bal->ops->name);
	if (st == LBS_OK)
		st = rebuild(bal, err);
	if (st != LBS_OK) {
		if (bal->state)
			bal->ops->destroy(bal->state);
		bal->state = NULL;
		lbs_hy_balance_destroy(bal);
	}
	return st;
}

/* The split a policy proposes: sum M, each within [quantum, max_m], a
 * multiple of the quantum. */
static lbs_status check_split(const lbs_hy_balance *bal, lbs_error *err)
{
	int64_t sum = 0;
	for (int r = 0; r < bal->env.d; r++) {
		int m = bal->next[r];
		if (m < bal->env.quantum || m > bal->max_m[r] || m % bal->env.quantum)
			return lbs_error_set(err, LBS_EINTERNAL, "hybrid policy %s: replica %d given %d micro-batches "
					     "(at least %d, at most %lld, a multiple of %d)", bal->ops->name, r, m,
					     bal->env.quantum, (long long)bal->max_m[r], bal->env.quantum);
		sum += m;
	}
	if (sum != bal->env.total_m)
		return lbs_error_set(err, LBS_EINTERNAL, "hybrid policy %s: %lld micro-batches planned, the global batch "
				     "is %d", bal->ops->name, (long long)sum, bal->env.total_m);
	return LBS_OK;
}

lbs_status lbs_hy_balance_decide(lbs_hy_balance *bal, int64_t step, lbs_error *err)
{
	lbs_hy_future fu = { future_step, bal };
	int64_t per_epoch = bal->env.steps_per_epoch;
	lbs_hy_observation obs = {
		.step = step,
		.epoch_start = per_epoch > 0 && step % per_epoch == 0,
		.now_s = bal->sim->now_s,
		.m_of = step ? bal->m_of : NULL,
		.compute_s = step ? bal->compute_s : NULL,
		.step_s = bal->last_step_s,
		.future = bal->lookahead ? &fu : NULL,
	};
	memcpy(bal->next, bal->m_of, (size_t)bal->env.d * sizeof *bal->next);
	bool changed = false;
	double t0 = lbs_monotonic_s();
	lbs_status st = bal->ops->plan(bal->state, &obs, bal->next, &changed, err);
	bal->decision_s = lbs_monotonic_s() - t0;
	bal->changed = false;
	if (st != LBS_OK || !changed || !memcmp(bal->next, bal->m_of, (size_t)bal->env.d * sizeof *bal->next))
		return st;
	if ((st = check_split(bal, err)) != LBS_OK)
		return st;
	memcpy(bal->m_of, bal->next, (size_t)bal->env.d * sizeof *bal->m_of);
	bal->changed = true;
	bal->rebuilds++;
	return rebuild(bal, err);
}

lbs_status lbs_hy_balance_step(lbs_hy_balance *bal, double *step_s, lbs_hy_account *acc, lbs_error *err)
{
	double start = bal->sim->now_s;
	lbs_status st = lbs_hy_sim_step(bal->sim, step_s, err);
	if (st != LBS_OK)
		return st;
	bal->last_step_s = *step_s;
	for (size_t g = 0; g < bal->gr->n_groups; g++) {
		lbs_hy_account a;
		lbs_hy_account_group(bal->sim, g, start, *step_s, &a);
		bal->compute_s[g] = a.compute_s;
		if (acc)
			acc[g] = a;
	}
	return LBS_OK;
}

void lbs_hy_balance_destroy(lbs_hy_balance *bal)
{
	if (bal->state)
		bal->ops->destroy(bal->state);
	free_sim(bal);
	free(bal->m_of);
	free(bal->next);
	free(bal->max_m);
	free(bal->compute_s);
	memset(bal, 0, sizeof *bal);
}
