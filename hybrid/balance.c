/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A hybrid run's steps under a balancing policy (hybrid/balance.h). */
#include "hybrid/balance.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine.h"
#include "traces/source.h"
#include "util/clock.h"

/* A proposal in flight ([hybrid_policy] delay). */
struct lbs_hy_pending {
	bool valid;
	int *m_of, *blocks;      /* d, p */
	bool *replace;           /* G */
	double restart_s;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

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
	sim->eng->interrupt = bal->interrupt;
	sim->length_ratio = bal->length_ratio ? bal->slot_ratio : NULL;
	return LBS_OK;
}

struct lbs_hy_sim_result;
static void replica_times(const lbs_hy_sim *sim, double t0, double len, struct lbs_hy_sim_result *res);

/* What a look-ahead step reports for replica_s: per replica the latest
 * over its stages of (arrival at the stage's first reduction + that
 * stage's chain), and the rest of the step after the last chain. */
typedef struct lbs_hy_sim_result {
	double *g, *rest_s;
} lbs_hy_sim_result;

/* Expert parallelism: the replicas of an expert group (ep consecutive
 * ones) run as many micro-batches, since their all-to-alls pair them
 * compute by compute, and the group runs at the pace of its slowest. A
 * policy proposes for each replica; each group then runs what it proposed
 * for the least of its replicas, every group's scaled so that they sum to
 * the global batch, as nearly as whole micro-batches allow (units of ep x
 * quantum: each group at least one, within its replicas' memory; the
 * units left by rounding down go to the largest remainders). Nothing with
 * ep < 2; a proposal already even within the groups is kept. */
static void ep_even(const lbs_hy_balance *bal, int *m)
{
	int e = bal->plan.ep, d = bal->env.d, q = bal->env.quantum;
	if (e < 2)
		return;
	int K = d / e, unit = e * q, total = bal->env.total_m / unit, used = 0;
	int *u = bal->ep_u, *cap = u + K;
	double *want = bal->ep_want;
	double all = 0;
	for (int k = 0; k < K; k++) {
		int least = INT_MAX;
		int64_t lim = INT64_MAX;
		for (int r = k * e; r < (k + 1) * e; r++) {
			least = m[r] < least ? m[r] : least;
			lim = bal->max_m[r] < lim ? bal->max_m[r] : lim;
		}
		want[k] = least > 0 ? least : 0;
		all += want[k];
		cap[k] = (int)(lim / q);
	}
	for (int k = 0; k < K; k++) {
		want[k] = all > 0 ? want[k] / all * total : (double)total / K;
		u[k] = (int)floor(want[k]);
		u[k] = u[k] < 1 ? 1 : u[k] > cap[k] ? cap[k] : u[k];
		used += u[k];
	}
	while (used != total) {
		int best = -1;
		for (int k = 0; k < K; k++) {
			bool ok = used < total ? u[k] < cap[k] : u[k] > 1;
			double rem = want[k] - u[k];
			if (ok && (best < 0 || (used < total ? rem > want[best] - u[best] : rem < want[best] - u[best])))
				best = k;
		}
		if (best < 0)
			return; /* no room: check_split refuses it */
		u[best] += used < total ? 1 : -1;
		used += used < total ? 1 : -1;
	}
	for (int r = 0; r < d; r++)
		m[r] = u[r / e] * q;
}

/* The coming step under m_of, on a copy of the job (*step_s, and res when
 * not NULL). A group replaying a trace replays a copy of its source (the
 * series are shared, the cursor is the copy's), so the look-ahead leaves
 * the run's cursor where it was; a least of several (lbs_hy_least) moves
 * its members' cursors, which are hints that decide no result. */
static lbs_status simulate_ahead(const lbs_hy_balance *bal, const int *m_of, double *step_s, lbs_hy_sim_result *res,
				 lbs_error *err)
{
	lbs_hy_plan pl = bal->plan;
	pl.m_of = m_of;
	size_t G = (size_t)pl.d * (size_t)pl.p;
	int *even = NULL; /* expert groups: the split as it would run */
	if (pl.ep > 1) {
		if (!(even = malloc((size_t)pl.d * sizeof *even)))
			return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
		memcpy(even, m_of, (size_t)pl.d * sizeof *even);
		ep_even(bal, even);
		pl.m_of = m_of = even;
	}
	lbs_source *src = NULL;
	lbs_avail *av = NULL;
	if (pl.src) {
		/* the look-ahead replays copies: the run's cursors stay */
		src = malloc(G * sizeof *src);
		av = malloc(G * sizeof *av);
		if (!src || !av) {
			free(src);
			free(av);
			free(even);
			return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
		}
		for (size_t g = 0; g < G; g++) {
			av[g] = pl.src[g];
			if (pl.src[g].ops == &lbs_source_ops) {
				src[g] = *(const lbs_source *)pl.src[g].state;
				av[g] = lbs_source_avail(&src[g]);
			}
		}
		pl.src = av;
	}
	lbs_hy_graph gr;
	lbs_hy_sim sim;
	double len = 0, *mean_ratio = NULL;
	lbs_status st = lbs_hy_graph_build(&gr, &pl, err);
	if (st == LBS_OK) {
		if ((st = lbs_hy_sim_create(&sim, &gr, err)) == LBS_OK) {
			double t0 = sim.now_s = bal->sim->now_s;
			sim.step = bal->sim->step;
			sim.eng->interrupt = bal->interrupt;
			sim.length_ratio = bal->length_ratio; /* the data's order: the oracle does not pack */
			/* a split of another global batch (the oracle's replicas all
			 * at m) has no lengths of its own: every micro-batch at the
			 * global batch's mean length */
			int total = 0, M = bal->env.total_m;
			for (int r = 0; r < pl.d; r++)
				total += m_of[r];
			if (bal->length_ratio && total != M) {
				double mean = 0;
				for (int k = 0; k < M; k++)
					mean += bal->length_ratio[k] / M;
				if (!(mean_ratio = malloc((size_t)total * sizeof *mean_ratio)))
					st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
				for (int k = 0; mean_ratio && k < total; k++)
					mean_ratio[k] = mean;
				sim.length_ratio = mean_ratio;
			}
			if (st == LBS_OK)
				st = lbs_hy_sim_step(&sim, &len, err);
			if (st == LBS_OK && res)
				replica_times(&sim, t0, len, res);
			lbs_hy_sim_destroy(&sim);
		}
		lbs_hy_graph_free(&gr);
	}
	if (step_s)
		*step_s = len;
	free(mean_ratio);
	free(src);
	free(av);
	free(even);
	return st;
}

static lbs_status future_step(void *ctx, const int *m_of, double *step_s, lbs_error *err)
{
	return simulate_ahead(ctx, m_of, step_s, NULL, err);
}

/* obs->future's replica_s: one step with every replica at m micro-batches;
 * for each group (r, s) its arrival at its stage's first gradient
 * reduction, and for each stage the end of its reduction chain. */
/* g and rest_s of a step of length len from t0 (lbs_hy_future). */
static void replica_times(const lbs_hy_sim *sim, double t0, double len, struct lbs_hy_sim_result *res)
{
	const lbs_hy_graph *gr = sim->gr;
	int d = gr->plan->d, p = gr->plan->p;
	double last = t0;
	for (int r = 0; r < d; r++)
		res->g[r] = 0;
	for (int s = 0; s < p; s++) {
		/* the stage's chain: its reductions, first and last, in each replica */
		double arrive_max = -INFINITY, chain_end = -INFINITY;
		for (int r = 0; r < d; r++) {
			size_t g = (size_t)r * (size_t)p + (size_t)s;
			for (size_t l = 0; l < gr->per_group; l++) {
				uint32_t o = lbs_hy_op(gr, g, l);
				if (gr->type[o] != LBS_OP_GRADS_REDUCE_SCATTER || gr->kind[o] != LBS_HY_MEMBER)
					continue;
				chain_end = fmax(chain_end, sim->end[o]);
			}
		}
		for (int r = 0; r < d; r++) {
			size_t g = (size_t)r * (size_t)p + (size_t)s;
			for (size_t l = 0; l < gr->per_group; l++) {
				uint32_t o = lbs_hy_op(gr, g, l);
				if (gr->type[o] == LBS_OP_GRADS_REDUCE_SCATTER && gr->kind[o] == LBS_HY_MEMBER) {
					arrive_max = fmax(arrive_max, sim->start[o]);
					break; /* the first of the chain */
				}
			}
		}
		double chain = chain_end - arrive_max;
		for (int r = 0; r < d; r++) {
			size_t g = (size_t)r * (size_t)p + (size_t)s;
			for (size_t l = 0; l < gr->per_group; l++) {
				uint32_t o = lbs_hy_op(gr, g, l);
				if (gr->type[o] == LBS_OP_GRADS_REDUCE_SCATTER && gr->kind[o] == LBS_HY_MEMBER) {
					res->g[r] = fmax(res->g[r], sim->start[o] - t0 + chain);
					break;
				}
			}
		}
		last = fmax(last, chain_end);
	}
	*res->rest_s = t0 + len - last;
}

static lbs_status future_replicas(void *ctx, int m, double *g, double *rest_s, lbs_error *err)
{
	const lbs_hy_balance *bal = ctx;
	int d = bal->plan.d;
	int *uni = malloc((size_t)d * sizeof *uni);
	if (!uni)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	for (int r = 0; r < d; r++)
		uni[r] = m;
	lbs_hy_sim_result res = { .g = g, .rest_s = rest_s };
	lbs_status st = simulate_ahead(bal, uni, NULL, &res, err);
	free(uni);
	return st;
}

double lbs_hy_resplit_s(const lbs_hy_built *b, int d, int p, int v, const int *old_blocks, const int *new_blocks)
{
	double pause = 0;
	int before = 0, after = 0;
	/* the model's order: virtual stage k = c p + s, chunk c of stage s */
	for (int k = 0; k + 1 < p * v; k++) {
		int s = k % p;
		before += old_blocks[s];
		after += new_blocks[s];
		int moved = abs(after - before);
		for (int r = 0; moved && r < d; r++) {
			size_t g = (size_t)r * (size_t)p + (size_t)s;
			pause = fmax(pause, b->link_lat_s[g] + moved * b->blk_move_bytes / b->link_Bps[g]);
		}
	}
	return pause;
}

/* The plan's times and the memory of the partition in bal->blocks (the
 * blocks of each chunk of a stage): each chunk's built values plus
 * (blocks - blocks0) of a block's; the optimizer and the model state of a
 * stage grow by that many blocks a chunk, v of them. */
static void recost(lbs_hy_balance *bal)
{
	const lbs_hy_built *b = bal->b;
	const lbs_hy_plan *pl = &b->plan;
	int p = pl->p, v = pl->v;
	size_t G = (size_t)pl->d * (size_t)p;
	for (size_t g = 0; g < G; g++) {
		double k = bal->blocks[g % (size_t)p] - bal->blocks0;
		for (size_t c = 0; c < (size_t)v; c++) {
			size_t i = g * (size_t)v + c;
			bal->plan.fwd_s[i] = pl->fwd_s[i] + k * b->blk_fwd_s[g];
			bal->plan.bwd_s[i] = pl->bwd_s[i] + k * b->blk_bwd_s[g];
			if (pl->fwd_att_s) {
				bal->plan.fwd_att_s[i] = pl->fwd_att_s[i] + k * b->blk_fwd_att_s[g];
				bal->plan.bwd_att_s[i] = pl->bwd_att_s[i] + k * b->blk_bwd_att_s[g];
			}
			bal->plan.fwd_fixed_s[i] = pl->fwd_fixed_s[i] + k * b->blk_fwd_fixed_s[g];
			bal->plan.bwd_fixed_s[i] = pl->bwd_fixed_s[i] + k * b->blk_bwd_fixed_s[g];
		}
		bal->plan.opt_s[g] = pl->opt_s[g] + k * v * b->blk_opt_s[g];
	}
	for (size_t i = 0; i < (size_t)p * (size_t)v; i++) {
		double k = bal->blocks[i / (size_t)v] - bal->blocks0;
		bal->plan.grad_s[i] = pl->grad_s[i] + k * b->blk_grad_s[i / (size_t)v];
		bal->plan.gather_s[i] = pl->gather_s[i] + k * b->blk_gather_s[i / (size_t)v];
	}
}

/* A GPU of group g's memory with `blocks` blocks a chunk and m
 * micro-batches (act_bytes: the stage's activations of a micro-batch, its
 * v chunks' of blocks0 blocks each). */
static double memory_of(const lbs_hy_balance *bal, size_t g, int blocks, int m)
{
	const lbs_hy_built *b = bal->b;
	const lbs_hy_plan *pl = &b->plan;
	int s = (int)(g % (size_t)pl->p);
	double act_blk = b->n_blocks ? b->act_bytes[g] / bal->blocks0 : 0; /* a block a chunk */
	double state = b->mem_bytes[g] - b->act_bytes[g] * lbs_hy_in_flight(pl->schedule, pl->m, pl->p, s, pl->v);
	double act = b->act_bytes[g] + (blocks - bal->blocks0) * act_blk;
	state += (blocks - bal->blocks0) * pl->v * (b->n_blocks ? b->blk_state_bytes[g] : 0);
	return state + act * lbs_hy_in_flight(pl->schedule, m, pl->p, s, pl->v);
}

/* Each replica's most micro-batches and each stage's most blocks, for the
 * partition and split in force. */
static void limits(lbs_hy_balance *bal, bool moves)
{
	const lbs_hy_plan *pl = &bal->b->plan;
	int d = pl->d, p = pl->p, q = bal->env.quantum, M = bal->env.total_m;
	for (int r = 0; r < d; r++) {
		/* the largest m whose activations fit every stage: they only grow
		 * with m, so by bisection (d p log M evaluations) */
		int64_t best = 0, lo = 1, hi = M;
		while (moves && lo <= hi) {
			int64_t m = lo + (hi - lo) / 2;
			bool fits = true;
			for (int s = 0; fits && s < p; s++) {
				size_t g = (size_t)r * (size_t)p + (size_t)s;
				fits = memory_of(bal, g, bal->blocks ? bal->blocks[s] : bal->blocks0, (int)m) <=
				       bal->b->mem_cap[g];
			}
			if (fits)
				best = m, lo = m + 1;
			else
				hi = m - 1;
		}
		bal->max_m[r] = moves ? best / q * q : bal->m_of[r];
		if (bal->max_m[r] < bal->m_of[r])
			bal->max_m[r] = bal->m_of[r]; /* the split in force fits: it ran */
	}
	for (int s = 0; bal->blocks && s < p; s++) {
		int best = 0, lo = 1, hi = (int)bal->env.n_blocks;
		while (lo <= hi) { /* memory grows with the blocks: bisection */
			int k = lo + (hi - lo) / 2;
			bool fits = true;
			for (int r = 0; fits && r < d; r++) {
				size_t g = (size_t)r * (size_t)p + (size_t)s;
				fits = memory_of(bal, g, k, bal->m_of[r]) <= bal->b->mem_cap[g];
			}
			if (fits)
				best = k, lo = k + 1;
			else
				hi = k - 1;
		}
		bal->max_blocks[s] = best > bal->blocks[s] ? best : bal->blocks[s];
	}
}

lbs_status lbs_hy_balance_create(lbs_hy_balance *bal, const lbs_hy_scenario *sc, const lbs_hy_built *b,
				 lbs_error *err)
{
	memset(bal, 0, sizeof *bal);
	const lbs_hy_plan *pl = &b->plan;
	int d = pl->d, p = pl->p;
	size_t G = (size_t)d * (size_t)p;
	bal->b = b;
	bal->ops = lbs_hy_scenario_policy(sc, sc->policy.name);
	if (!bal->ops)
		return lbs_error_set(err, LBS_EINPUT, "%s: [hybrid_policy] name: no policy '%s'", sc->path,
				     sc->policy.name);
	bal->plan = *pl;
	bal->m_of = malloc((size_t)d * sizeof *bal->m_of);
	if (pl->ep > 1) { /* ep_even's scratch, two ints and a double an expert group */
		bal->ep_u = malloc(2 * (size_t)(d / pl->ep) * sizeof *bal->ep_u);
		bal->ep_want = malloc((size_t)(d / pl->ep) * sizeof *bal->ep_want);
		if (!bal->ep_u || !bal->ep_want) {
			lbs_hy_balance_destroy(bal);
			return lbs_error_set(err, LBS_EINTERNAL, "out of memory for the hybrid policy");
		}
	}
	bal->next = malloc((size_t)d * sizeof *bal->next);
	bal->max_m = malloc((size_t)d * sizeof *bal->max_m);
	bal->compute_s = calloc(G, sizeof *bal->compute_s);
	bal->replace = calloc(G, sizeof *bal->replace);
	int v = pl->v;
	bool resplit = b->n_blocks > 0;
	if (resplit) {
		bal->blocks = malloc((size_t)p * sizeof *bal->blocks);
		bal->next_blocks = malloc((size_t)p * sizeof *bal->next_blocks);
		bal->max_blocks = malloc((size_t)p * sizeof *bal->max_blocks);
		bal->own = malloc((6 * G * (size_t)v + G + 2 * (size_t)p * (size_t)v) * sizeof *bal->own);
	}
	if (!bal->m_of || !bal->next || !bal->max_m || !bal->compute_s || !bal->replace ||
	    (resplit && (!bal->blocks || !bal->next_blocks || !bal->max_blocks || !bal->own))) {
		lbs_hy_balance_destroy(bal);
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory for the hybrid policy");
	}
	int M = pl->m * d, q = pl->schedule == LBS_HY_INTERLEAVED ? p : 1;
	for (int r = 0; r < d; r++)
		bal->m_of[r] = pl->m;
	bal->plan.m_of = bal->m_of;
	/* the unit of a re-split: a block on each of a stage's v chunks, so
	 * that its chunks stay alike */
	bal->blocks0 = resplit ? b->n_blocks / (p * v) : 0;
	if (resplit) {
		for (int s = 0; s < p; s++)
			bal->blocks[s] = bal->blocks0;
		double *o = bal->own;
		size_t GV = G * (size_t)v, PV = (size_t)p * (size_t)v;
		bal->plan.fwd_s = o, o += GV;
		bal->plan.bwd_s = o, o += GV;
		bal->plan.fwd_fixed_s = o, o += GV;
		bal->plan.bwd_fixed_s = o, o += GV;
		bal->plan.opt_s = o, o += G;
		if (pl->fwd_att_s) {
			bal->plan.fwd_att_s = o, o += GV;
			bal->plan.bwd_att_s = o, o += GV;
		}
		bal->plan.grad_s = o, o += PV;
		bal->plan.gather_s = o;
		recost(bal);
	}
	double slowest = 0;
	for (size_t g = 0; resplit && g < G; g++)
		slowest = fmax(slowest, b->link_lat_s[g] + v * b->blk_move_bytes / b->link_Bps[g]);
	bal->env = (lbs_hy_policy_env){ .d = d, .p = p, .total_m = M, .quantum = q, .max_m = bal->max_m,
					.n_blocks = resplit ? b->n_blocks / v : 0, .max_blocks = bal->max_blocks,
					.blk_move_s = slowest, .every = sc->policy.every,
					.steps_per_epoch = sc->policy.epoch_steps, .seed = (uint64_t)sc->run.seed };
	bal->decision_cost_s = sc->policy.decision_cost_s;
	bal->delay = sc->policy.delay;
	if (bal->delay > 0) {
		size_t n = (size_t)bal->delay + 1;
		bal->pending = calloc(n, sizeof *bal->pending);
		for (size_t i = 0; bal->pending && i < n; i++) {
			bal->pending[i].m_of = malloc((size_t)d * sizeof(int));
			bal->pending[i].blocks = malloc((size_t)p * sizeof(int));
			bal->pending[i].replace = malloc(G * sizeof(bool));
			if (!bal->pending[i].m_of || !bal->pending[i].blocks || !bal->pending[i].replace) {
				lbs_hy_balance_destroy(bal);
				return lbs_error_set(err, LBS_EINTERNAL, "out of memory for the decisions in flight");
			}
		}
		if (!bal->pending) {
			lbs_hy_balance_destroy(bal);
			return lbs_error_set(err, LBS_EINTERNAL, "out of memory for the decisions in flight");
		}
	}
	/* the attention core's share of the compute, over every group */
	double att = 0, all = 0;
	for (size_t i = 0; pl->fwd_att_s && i < G * (size_t)pl->v; i++) {
		att += pl->fwd_att_s[i] + pl->bwd_att_s[i];
		all += pl->fwd_s[i] + pl->bwd_s[i];
	}
	bal->env.att_share = all > 0 ? att / all : 0;
	limits(bal, strcmp(bal->ops->name, "static") != 0);
	lbs_status st = bal->ops->create(&bal->env, sc->policy.options, sc->policy.n_options, &bal->state,
					 &bal->lookahead, err);
	if (st == LBS_EINPUT && !strstr(err->msg, sc->path))
		lbs_error_prefix(err, "%s: [hybrid_policy] name = %s", sc->path, bal->ops->name);
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
 * multiple of the quantum; blocks summing to the model's, each within
 * [1, max_blocks]. */
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
	sum = 0;
	for (int s = 0; bal->blocks && s < bal->env.p; s++) {
		int k = bal->next_blocks[s];
		if (k < 1 || k > bal->max_blocks[s])
			return lbs_error_set(err, LBS_EINTERNAL, "hybrid policy %s: stage %d given %d blocks (1 to %d)",
					     bal->ops->name, s, k, bal->max_blocks[s]);
		sum += k;
	}
	if (bal->blocks && sum != bal->env.n_blocks)
		return lbs_error_set(err, LBS_EINTERNAL, "hybrid policy %s: %lld blocks planned, the model has %d",
				     bal->ops->name, (long long)sum, bal->env.n_blocks);
	return LBS_OK;
}

/* Group g's node replaced at time T: its availability up to T as it was,
 * then the healthiest level it had (its node type's without the episode:
 * a spare of the same type), to the end. */
static lbs_status replace_node(lbs_hy_balance *bal, size_t g, double T, lbs_error *err)
{
	const lbs_hy_plan *pl = &bal->b->plan;
	size_t G = (size_t)pl->d * (size_t)pl->p;
	if (!pl->avail)
		return LBS_OK; /* every group at 1: nothing is slow */
	if (!bal->avail) {
		bal->avail = malloc(G * sizeof *bal->avail);
		bal->avail_buf = calloc(G, sizeof *bal->avail_buf);
		if (!bal->avail || !bal->avail_buf)
			return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
		memcpy(bal->avail, pl->avail, G * sizeof *bal->avail);
		bal->plan.avail = bal->avail;
	}
	lbs_hy_avail *a = &bal->avail[g];
	double best = a->n ? 0 : 1;
	size_t keep = 0;
	for (size_t i = 0; i < a->n; i++) {
		best = fmax(best, a->level[i]);
		keep += a->t[i] < T;
	}
	double *buf = malloc(2 * (keep + 1) * sizeof *buf);
	if (!buf)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	double *t = buf, *level = buf + keep + 1;
	for (size_t i = 0; i < keep; i++)
		t[i] = a->t[i], level[i] = a->level[i];
	if (!keep)
		t[0] = 0, level[0] = best, keep = 1; /* from the start (the first piece is at 0) */
	else
		t[keep] = T, level[keep] = best, keep++;
	free(bal->avail_buf[g]);
	bal->avail_buf[g] = buf;
	*a = (lbs_hy_avail){ keep, t, level };
	return LBS_OK;
}

/* What the proposal in bal->next, next_blocks and replace changes: *split
 * the micro-batches, *moved the blocks; returns the nodes replaced. */
static size_t proposal_changes(const lbs_hy_balance *bal, const lbs_hy_decision *dec, bool *split, bool *moved)
{
	int d = bal->env.d, p = bal->env.p;
	*split = memcmp(bal->next, bal->m_of, (size_t)d * sizeof *bal->next) != 0;
	*moved = bal->blocks && memcmp(bal->next_blocks, bal->blocks, (size_t)p * sizeof *bal->blocks) != 0;
	size_t replaced = 0;
	for (size_t g = 0; dec->replace && g < (size_t)d * (size_t)p; g++)
		replaced += bal->replace[g];
	return replaced;
}

/* [hybrid_policy] delay: the proposal goes in flight (checked now: a bad
 * one is the policy's fault), and the one made `delay` decisions ago, if
 * any, takes its place in bal->next, next_blocks, replace and dec, unless
 * the split in force has since left it out of the memory (then it is
 * dropped, and counted); without one due, nothing changes. */
static lbs_status delay_proposal(lbs_hy_balance *bal, int64_t step, lbs_hy_decision *dec, lbs_error *err)
{
	int d = bal->env.d, p = bal->env.p;
	size_t G = (size_t)d * (size_t)p, K = (size_t)bal->delay + 1;
	struct lbs_hy_pending *in = &bal->pending[(size_t)step % K], *out = &bal->pending[((size_t)step + 1) % K];
	bool split, moved;
	size_t replaced = proposal_changes(bal, dec, &split, &moved);
	in->valid = dec->changed && (split || moved || replaced);
	lbs_status st = in->valid ? check_split(bal, err) : LBS_OK;
	if (st != LBS_OK)
		return st;
	if (in->valid) {
		memcpy(in->m_of, bal->next, (size_t)d * sizeof *bal->next);
		if (bal->blocks)
			memcpy(in->blocks, bal->next_blocks, (size_t)p * sizeof *bal->next_blocks);
		memcpy(in->replace, bal->replace, G * sizeof *bal->replace);
		in->restart_s = dec->restart_s;
	}
	bool due = step >= bal->delay && out->valid;
	out->valid = false;
	memcpy(bal->next, due ? out->m_of : bal->m_of, (size_t)d * sizeof *bal->next);
	if (bal->blocks)
		memcpy(bal->next_blocks, due ? out->blocks : bal->blocks, (size_t)p * sizeof *bal->next_blocks);
	if (due)
		memcpy(bal->replace, out->replace, G * sizeof *bal->replace);
	else
		memset(bal->replace, 0, G * sizeof *bal->replace);
	dec->restart_s = due ? out->restart_s : 0;
	dec->changed = due;
	lbs_error scratch = { 0 };
	if (due && check_split(bal, &scratch) != LBS_OK) {
		bal->stale++;
		dec->changed = false;
	}
	return LBS_OK;
}

lbs_status lbs_hy_balance_decide(lbs_hy_balance *bal, int64_t step, lbs_error *err)
{
	/* replica_s is exact when the replicas meet only at the reductions
	 * after their pipelines (no overlap, d > 1, no ZeRO-3-like gathers
	 * that depend on the split: the gathers come before any compute) */
	int d = bal->env.d, p = bal->env.p;
	bool separable = d > 1 && !bal->plan.overlap_dp && bal->plan.ep < 2; /* expert groups meet at every compute */
	lbs_hy_future fu = { future_step, separable ? future_replicas : NULL, bal };
	int64_t per_epoch = bal->env.steps_per_epoch;
	lbs_hy_observation obs = {
		.step = step,
		.epoch_start = per_epoch > 0 && step % per_epoch == 0,
		.now_s = bal->sim->now_s,
		.m_of = step ? bal->m_of : NULL,
		.blocks = bal->blocks,
		.compute_s = step ? bal->compute_s : NULL,
		.step_s = bal->last_step_s,
		.future = bal->lookahead ? &fu : NULL,
	};
	memcpy(bal->next, bal->m_of, (size_t)d * sizeof *bal->next);
	if (bal->blocks)
		memcpy(bal->next_blocks, bal->blocks, (size_t)p * sizeof *bal->blocks);
	size_t G = (size_t)d * (size_t)p;
	memset(bal->replace, 0, G * sizeof *bal->replace);
	size_t M = (size_t)bal->env.total_m;
	if (bal->length_ratio)
		memcpy(bal->slot_ratio, bal->length_ratio, M * sizeof *bal->slot_ratio);
	obs.lengths = bal->length_ratio;
	lbs_hy_decision dec = { .m_of = bal->next, .blocks = bal->blocks ? bal->next_blocks : NULL,
				.lengths = bal->length_ratio ? bal->slot_ratio : NULL,
				.replace = bal->b->plan.src ? NULL : bal->replace };
	double t0 = lbs_monotonic_s();
	lbs_status st = bal->ops->plan(bal->state, &obs, &dec, err);
	bal->decision_s = lbs_monotonic_s() - t0;
	bal->changed = false;
	bal->action_s = bal->decision_cost_s; /* the job waits for the decision */
	bool packed = bal->length_ratio && memcmp(bal->slot_ratio, bal->length_ratio, M * sizeof *bal->slot_ratio);
	if (st == LBS_OK && packed) {
		/* a packing re-arranges the step's sequences: the same lengths */
		memcpy(bal->sorted[0], bal->length_ratio, M * sizeof *bal->sorted[0]);
		memcpy(bal->sorted[1], bal->slot_ratio, M * sizeof *bal->sorted[1]);
		qsort(bal->sorted[0], M, sizeof *bal->sorted[0], cmp_double);
		qsort(bal->sorted[1], M, sizeof *bal->sorted[1], cmp_double);
		if (memcmp(bal->sorted[0], bal->sorted[1], M * sizeof *bal->sorted[0]))
			return lbs_error_set(err, LBS_EINTERNAL, "hybrid policy %s: its micro-batches' lengths are not "
					     "the step's sequences re-arranged", bal->ops->name);
		bal->packings++;
	}
	if (st == LBS_OK)
		ep_even(bal, bal->next);
	if (st == LBS_OK && bal->delay > 0)
		st = delay_proposal(bal, step, &dec, err);
	bool split, moved;
	size_t replaced = proposal_changes(bal, &dec, &split, &moved);
	if (st != LBS_OK || !dec.changed || (!split && !moved && !replaced)) {
		if (st == LBS_OK)
			bal->sim->now_s += bal->action_s;
		return st;
	}
	if ((st = check_split(bal, err)) != LBS_OK)
		return st;
	memcpy(bal->m_of, bal->next, (size_t)d * sizeof *bal->m_of);
	if (moved) {
		/* the blocks' weights and optimizer states cross the stage links
		 * before the step; nothing computes meanwhile */
		bal->action_s += lbs_hy_resplit_s(bal->b, d, p, bal->plan.v, bal->blocks, bal->next_blocks);
		memcpy(bal->blocks, bal->next_blocks, (size_t)p * sizeof *bal->blocks);
		recost(bal);
		bal->resplits++;
	}
	if (replaced) {
		/* a checkpoint-restart: the spare joins after the pause */
		if (!(dec.restart_s >= 0) || !isfinite(dec.restart_s))
			return lbs_error_set(err, LBS_EINTERNAL, "hybrid policy %s: a restart of %g s", bal->ops->name,
					     dec.restart_s);
		bal->action_s += dec.restart_s;
		for (size_t g = 0; st == LBS_OK && g < G; g++)
			if (bal->replace[g])
				st = replace_node(bal, g, bal->sim->now_s, err);
		bal->replacements += (int64_t)replaced;
		if (st != LBS_OK)
			return st;
	}
	limits(bal, true);
	bal->changed = true;
	bal->rebuilds++;
	st = rebuild(bal, err);
	if (st == LBS_OK)
		bal->sim->now_s += bal->action_s;
	return st;
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
	free(bal->ep_u);
	free(bal->ep_want);
	free(bal->next);
	free(bal->blocks);
	free(bal->next_blocks);
	free(bal->max_blocks);
	free(bal->own);
	free(bal->replace);
	for (int64_t i = 0; bal->pending && i <= bal->delay; i++) {
		free(bal->pending[i].m_of);
		free(bal->pending[i].blocks);
		free(bal->pending[i].replace);
	}
	free(bal->pending);
	free(bal->slot_ratio);
	free(bal->sorted[0]);
	free(bal->sorted[1]);
	for (size_t g = 0; bal->avail_buf && bal->b && g < (size_t)bal->b->plan.d * (size_t)bal->b->plan.p; g++)
		free(bal->avail_buf[g]);
	free(bal->avail_buf);
	free(bal->avail);
	free(bal->max_m);
	free(bal->compute_s);
	memset(bal, 0, sizeof *bal);
}

void lbs_hy_balance_interrupt(lbs_hy_balance *bal, const volatile sig_atomic_t *interrupt)
{
	bal->interrupt = interrupt;
	if (bal->sim)
		bal->sim->eng->interrupt = interrupt;
}

void lbs_hy_balance_lengths(lbs_hy_balance *bal, const double *length_ratio)
{
	size_t M = (size_t)bal->env.total_m;
	if (length_ratio && !bal->slot_ratio) {
		bal->slot_ratio = calloc(M, sizeof *bal->slot_ratio);
		bal->sorted[0] = calloc(M, sizeof *bal->sorted[0]);
		bal->sorted[1] = calloc(M, sizeof *bal->sorted[1]);
		if (!bal->slot_ratio || !bal->sorted[0] || !bal->sorted[1])
			length_ratio = NULL; /* out of memory: lbs_hy_balance_decide says so */
	}
	bal->length_ratio = length_ratio;
	if (length_ratio)
		memcpy(bal->slot_ratio, length_ratio, M * sizeof *bal->slot_ratio);
	if (bal->sim)
		bal->sim->length_ratio = length_ratio ? bal->slot_ratio : NULL;
}
