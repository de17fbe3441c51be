/* SPDX-License-Identifier: GPL-3.0-or-later */
/* One hybrid-parallel step on the event engine (hybrid/hybrid.h): every op
 * has one handler, whose event fires at the op's end and releases the ops
 * that depend on it. A ready op starts at the latest end of its
 * dependencies; a compute ends when its group has done its nominal work at
 * availability a(t) (the fluid rule), plus its fixed part; a collective's
 * members end together, at their latest start plus the transfer time. The
 * same rules as whatif/replay.c, with durations found as the ops run. */
#include "hybrid/hybrid.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine.h"

/* What an op waits for, kept together: the one cache line an ending
 * dependency touches. */
struct lbs_hy_wait {
	double ready;     /* the latest end of its dependencies that have ended */
	uint32_t pending; /* dependencies not yet ended */
};

/* The end of `work` nominal seconds started at t0 under availability a,
 * piece by piece (*at: the piece t0 lies in; times only grow, so the search
 * resumes there). */
static double fluid_finish(const lbs_hy_avail *a, size_t *at, double t0, double work)
{
	if (!a || !a->n)
		return t0 + work;
	size_t i = *at;
	while (i + 1 < a->n && a->t[i + 1] <= t0)
		i++;
	*at = i;
	double t = t0, left = work;
	for (;; i++) {
		double lvl = a->level[i];
		if (i + 1 == a->n || t + left / lvl <= a->t[i + 1])
			return t + left / lvl;
		left -= (a->t[i + 1] - t) * lvl;
		t = a->t[i + 1];
	}
}

double lbs_hy_avail_at(const lbs_hy_avail *a, double t, double *next)
{
	*next = INFINITY;
	if (!a->n)
		return 1;
	if (t < a->t[0]) {
		*next = a->t[0];
		return 1;
	}
	size_t lo = 0, hi = a->n; /* a->t[lo] <= t < a->t[hi] */
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (a->t[mid] <= t)
			lo = mid;
		else
			hi = mid;
	}
	if (lo + 1 < a->n)
		*next = a->t[lo + 1];
	return a->level[lo];
}

/* Whether collective k's groups lie on more than one node (its transfer
 * then crosses the network; otherwise NVLink, which episodes do not slow). */
static bool across_nodes(const lbs_hy_sim *sim, uint32_t k)
{
	const lbs_hy_graph *gr = sim->gr;
	const lbs_hy_plan *pl = gr->plan;
	int64_t node = -2;
	for (uint32_t i = gr->mem_off[k]; i < gr->mem_off[k + 1]; i++) {
		int64_t n = pl->node[lbs_hy_group_of(gr, gr->mem[i])];
		if (n < 0 || (node != -2 && n != node))
			return true;
		node = n;
	}
	return false;
}

/* The end of collective k's transfer of x seconds (at full bandwidth)
 * begun at M: with network episodes and groups on more than one node, it
 * progresses at the least inter-node share among its groups at each
 * instant (the slowest link of the ring governs it), integrated piece by
 * piece across the changes of any of them; M + x otherwise. */
static double net_finish(const lbs_hy_sim *sim, uint32_t k, double M, double x)
{
	const lbs_hy_graph *gr = sim->gr;
	const lbs_hy_plan *pl = gr->plan;
	if (!pl->net || !(x > 0) || !across_nodes(sim, k))
		return M + x;
	double t = M, left = x;
	for (;;) {
		double share = 1, next = INFINITY;
		for (uint32_t i = gr->mem_off[k]; i < gr->mem_off[k + 1]; i++) {
			double nx;
			share = fmin(share, lbs_hy_avail_at(&pl->net[lbs_hy_group_of(gr, gr->mem[i])], t, &nx));
			next = fmin(next, nx);
		}
		if (t + left / share <= next)
			return t + left / share;
		left -= (next - t) * share;
		t = next;
	}
}

static lbs_status schedule(lbs_hy_sim *sim, uint32_t op)
{
	double t = sim->end[op], now = lbs_engine_now(sim->eng);
	return lbs_engine_at(sim->eng, t > now ? t : now, sim->handle[op]);
}

static size_t group_of(const lbs_hy_graph *gr, uint32_t op)
{
	return lbs_hy_group_of(gr, op);
}

static lbs_status on_ready(lbs_hy_sim *sim, uint32_t op, double ready)
{
	const lbs_hy_graph *gr = sim->gr;
	sim->start[op] = ready;
	if (gr->kind[op] == LBS_HY_PAD) { /* no operation: a replica of fewer micro-batches */
		sim->end[op] = ready;
		return schedule(sim, op);
	}
	if (gr->kind[op] == LBS_HY_LOCAL || (sim->given && gr->kind[op] != LBS_HY_MEMBER)) {
		sim->end[op] = ready + (sim->given ? sim->given[op] : 0);
		return schedule(sim, op);
	}
	if (gr->kind[op] == LBS_HY_COMPUTE || gr->kind[op] == LBS_HY_PARTIAL) {
		size_t g = group_of(gr, op);
		const lbs_hy_plan *pl = gr->plan;
		double work = gr->work[op], fixed = gr->fixed[op];
		if (sim->length_ratio && gr->mb[op] >= 0) {
			double rho = sim->length_ratio[gr->mb_first[g / (size_t)pl->p] + (uint32_t)gr->mb[op]];
			work = (work - gr->att[op]) * rho + gr->att[op] * rho * rho;
			fixed *= rho;
		}
		/* a marker only looks ahead: the backward it runs with is the work */
		if (pl->src && pl->src[g].ops)
			sim->end[op] = (gr->kind[op] == LBS_HY_PARTIAL ? lbs_avail_peek(&pl->src[g], ready, work, sim->step)
								       : lbs_avail_finish(&pl->src[g], ready, work, sim->step)) +
				       fixed;
		else
			sim->end[op] = fluid_finish(pl->avail ? &pl->avail[g] : NULL, &sim->avail_at[g], ready, work) +
				       fixed;
		return schedule(sim, op);
	}
	uint32_t k = gr->coll[op];
	if (--sim->arrive[k])
		return LBS_OK;
	double M = -INFINITY;
	for (uint32_t i = gr->mem_off[k]; i < gr->mem_off[k + 1]; i++)
		if (sim->start[gr->mem[i]] > M)
			M = sim->start[gr->mem[i]];
	sim->coll_at[k] = M;
	double last_x = NAN, last_end = M;
	for (uint32_t i = gr->mem_off[k]; i < gr->mem_off[k + 1]; i++) {
		uint32_t o = gr->mem[i];
		if (sim->given)
			sim->end[o] = M + sim->given[o];
		else if (gr->x[o] == last_x)
			sim->end[o] = last_end; /* the members carry one transfer: computed once */
		else
			sim->end[o] = last_end = net_finish(sim, k, M, last_x = gr->x[o]);
		lbs_status st = schedule(sim, o);
		if (st != LBS_OK)
			return st;
	}
	return LBS_OK;
}

static lbs_status on_end(void *ctx, uint32_t op, lbs_engine *eng)
{
	lbs_hy_sim *sim = ctx;
	const lbs_hy_graph *gr = sim->gr;
	(void)eng;
	double e = sim->end[op];
	for (uint32_t k = gr->out_off[op]; k < gr->out_off[op + 1]; k++) {
		struct lbs_hy_wait *w = &sim->wait[gr->out[k]];
		if (e > w->ready)
			w->ready = e;
		if (--w->pending)
			continue;
		lbs_status st = on_ready(sim, gr->out[k], w->ready);
		if (st != LBS_OK)
			return st;
	}
	return LBS_OK;
}

lbs_status lbs_hy_sim_create(lbs_hy_sim *sim, const lbs_hy_graph *gr, lbs_error *err)
{
	memset(sim, 0, sizeof *sim);
	sim->gr = gr;
	size_t n = gr->n_ops;
	if (n > LBS_HANDLE_MAX)
		return lbs_error_set(err, LBS_EINPUT, "a hybrid step of %zu operations: more than the %u the event "
				     "engine holds", n, (unsigned)LBS_HANDLE_MAX);
	sim->start = malloc(n * sizeof *sim->start);
	sim->end = malloc(n * sizeof *sim->end);
	sim->wait = malloc(n * sizeof *sim->wait);
	sim->handle = malloc(n * sizeof *sim->handle);
	sim->arrive = malloc((gr->n_coll ? gr->n_coll : 1) * sizeof *sim->arrive);
	sim->coll_at = malloc((gr->n_coll ? gr->n_coll : 1) * sizeof *sim->coll_at);
	sim->avail_at = calloc(gr->n_groups, sizeof *sim->avail_at);
	sim->eng = calloc(1, sizeof *sim->eng);
	if (!sim->start || !sim->end || !sim->wait || !sim->handle || !sim->arrive || !sim->coll_at || !sim->avail_at || !sim->eng) {
		lbs_hy_sim_destroy(sim);
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory for a hybrid simulation of %zu ops", n);
	}
	lbs_status st = lbs_engine_init(sim->eng, 4096, err);
	for (size_t o = 0; st == LBS_OK && o < n; o++)
		st = lbs_engine_register(sim->eng, on_end, sim, (uint32_t)o, &sim->handle[o]);
	if (st != LBS_OK)
		lbs_hy_sim_destroy(sim);
	return st;
}

lbs_status lbs_hy_sim_step(lbs_hy_sim *sim, double *step_s, lbs_error *err)
{
	const lbs_hy_graph *gr = sim->gr;
	size_t n = gr->n_ops;
	sim->eng->err = err;
	for (size_t o = 0; o < n; o++)
		sim->wait[o] = (struct lbs_hy_wait){ -INFINITY, gr->dep_off[o + 1] - gr->dep_off[o] };
	for (size_t k = 0; k < gr->n_coll; k++)
		sim->arrive[k] = gr->mem_off[k + 1] - gr->mem_off[k];
	lbs_status st = LBS_OK;
	uint64_t before = sim->eng->events;
	for (size_t o = 0; st == LBS_OK && o < n; o++)
		if (!sim->wait[o].pending)
			st = on_ready(sim, (uint32_t)o, sim->now_s);
	if (st == LBS_OK)
		st = lbs_engine_run(sim->eng);
	if (st != LBS_OK)
		return st;
	if (sim->eng->events - before != n)
		return lbs_error_set(err, LBS_EINTERNAL, "hybrid step ended %llu of %zu ops (a cycle in its graph)",
				     (unsigned long long)(sim->eng->events - before), n);
	sim->events = sim->eng->events;
	double t = sim->now_s;
	for (size_t g = 0; g < gr->n_groups; g++)
		if (sim->end[gr->opt[g]] > t)
			t = sim->end[gr->opt[g]];
	*step_s = t - sim->now_s;
	sim->now_s = t;
	sim->step++;
	return LBS_OK;
}

void lbs_hy_sim_destroy(lbs_hy_sim *sim)
{
	if (sim->eng)
		lbs_engine_destroy(sim->eng);
	free(sim->eng);
	free(sim->start);
	free(sim->end);
	free(sim->wait);
	free(sim->handle);
	free(sim->arrive);
	free(sim->coll_at);
	free(sim->avail_at);
	memset(sim, 0, sizeof *sim);
}

/* ---- accounting ---------------------------------------------------------- */

/* A point where an interval of one category opens (+1) or closes (-1). */
typedef struct mark {
	double t;
	int cat, delta;
} mark;

enum { CAT_COMPUTE, CAT_OPT, CAT_COMM, CAT_WAIT, CATS };

static int mark_cmp(const void *a, const void *b)
{
	const mark *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->delta - y->delta; /* closings first */
}

/* Where member o of a collective, arrived at s, starts waiting for other
 * replicas: the data-parallel collectives join only other replicas, so
 * from its arrival; at the clipping barrier, once its own replica has
 * arrived (waiting for its own pipeline to drain is the bubble's); a p2p
 * transfer or the embedding pair never wait for another replica. */
static double wait_from(const lbs_hy_sim *sim, uint32_t o, double s)
{
	const lbs_hy_graph *gr = sim->gr;
	lbs_optype t = gr->type[o];
	if (t == LBS_OP_PARAMS_ALL_GATHER || t == LBS_OP_GRADS_REDUCE_SCATTER || t == LBS_OP_SEPARATE_GRADS_ALL_REDUCE ||
	    lbs_hy_is_xchg(gr, o)) /* an expert exchange waits for the group's other replicas */
		return s;
	if (t != LBS_OP_OPTIMIZER_CLIP_MAIN_GRAD)
		return INFINITY;
	size_t p = (size_t)gr->plan->p, r = lbs_hy_group_of(gr, o) / p, local = o / gr->n_groups;
	double w = s;
	for (size_t q = 0; q < p; q++) {
		double a = sim->start[lbs_hy_op(gr, r * p + q, local)];
		if (a > w)
			w = a;
	}
	return w;
}

/* Every instant of the step is the first category covering it (compute,
 * optimizer, a transfer or collective after its last arrival, a wait at a
 * data-parallel or global collective), else bubble. */
void lbs_hy_account_group(const lbs_hy_sim *sim, size_t g, double step_start_s, double step_s,
			  lbs_hy_account *out)
{
	const lbs_hy_graph *gr = sim->gr;
	mark *mk = malloc(4 * gr->per_group * sizeof *mk);
	memset(out, 0, sizeof *out);
	if (!mk)
		return;
	size_t n = 0;
	for (size_t l = 0; l < gr->per_group; l++) {
		uint32_t o = lbs_hy_op(gr, g, l);
		double s = sim->start[o], e = sim->end[o];
		lbs_optype t = gr->type[o];
		if (gr->kind[o] == LBS_HY_COMPUTE) {
			int c = t == LBS_OP_OPTIMIZER ? CAT_OPT : CAT_COMPUTE;
			mk[n++] = (mark){ s, c, 1 };
			mk[n++] = (mark){ e, c, -1 };
		} else if (gr->kind[o] == LBS_HY_MEMBER) {
			if (t == LBS_OP_FORWARD_SEND || t == LBS_OP_BACKWARD_SEND)
				continue; /* a send does not hold up its sender */
			double M = sim->coll_at[gr->coll[o]]; /* its transfer's start */
			mk[n++] = (mark){ M, CAT_COMM, 1 };
			mk[n++] = (mark){ e, CAT_COMM, -1 };
			double w = wait_from(sim, o, s);
			if (w < M) {
				mk[n++] = (mark){ w, CAT_WAIT, 1 };
				mk[n++] = (mark){ M, CAT_WAIT, -1 };
			}
		}
	}
	qsort(mk, n, sizeof *mk, mark_cmp);
	int count[CATS] = { 0 };
	double t = step_start_s, *acc[CATS] = { &out->compute_s, &out->optimizer_s, &out->comm_s, &out->wait_s };
	for (size_t i = 0; i <= n; i++) {
		double next = i < n ? mk[i].t : step_start_s + step_s;
		if (next > t) {
			int c = 0;
			while (c < CATS && !count[c])
				c++;
			if (c < CATS)
				*acc[c] += next - t;
			else
				out->bubble_s += next - t;
			t = next;
		}
		if (i < n)
			count[mk[i].cat] += mk[i].delta;
	}
	free(mk);
}

/* ---- the per-operation trace ------------------------------------------- */

lbs_status lbs_hy_trace_write(const lbs_hy_sim *sim, FILE *out, int64_t step, double step_start_s, bool header,
			      const int64_t *rank_of, lbs_error *err)
{
	const lbs_hy_graph *gr = sim->gr;
	const lbs_hy_plan *pl = gr->plan;
	if (header)
		fputs("dp_rank,stage,rank,step,optype,start_ts,duration,seq_id,mc,mb_id,gmc\n", out);
	for (size_t g = 0; g < gr->n_groups; g++) {
		int r = (int)(g / (size_t)pl->p), s = (int)(g % (size_t)pl->p);
		long long rank = rank_of ? (long long)rank_of[g] : (long long)g * pl->t * (pl->cp > 0 ? pl->cp : 1);
		for (size_t l = 0; l < gr->per_group; l++) {
			uint32_t o = lbs_hy_op(gr, g, l);
			if (!lbs_hy_op_recorded(gr, o))
				continue;
			/* float32, as the format holds (doc/whatif.md) */
			float st = (float)(sim->start[o] - step_start_s),
			      du = (float)(sim->end[lbs_hy_compute_end_op(gr, o)] - sim->start[o]);
			int mc = gr->mc[o];
			bool comp = gr->type[o] == LBS_OP_FORWARD_COMPUTE || gr->type[o] == LBS_OP_BACKWARD_COMPUTE;
			int gmc = comp ? mc * pl->p + s : -1;
			fprintf(out, "%d,%d,%lld,%lld,%s,%.9g,%.9g,%d,%d,%d,%d\n", r, s, rank, (long long)step,
				lbs_optype_name((lbs_optype)gr->type[o]), (double)st, (double)du, gr->seq[o], mc,
				gr->mb[o], gmc);
		}
	}
	if (ferror(out))
		return lbs_error_set(err, LBS_EIO, "writing the simulated trace failed");
	return LBS_OK;
}

lbs_status lbs_hy_meta_write(const lbs_hy_plan *pl, FILE *out, const char *name, lbs_error *err)
{
	/* context parallelism as the format's data-sequence parallelism
	 * (dsp): its ranks join the gradients' reduction */
	int cp = pl->cp > 0 ? pl->cp : 1;
	fprintf(out, "trial_name: %s\nrun_id: 0\ndp_size: %d\ndsp_size: %d\npp_size: %d\ntp_size: %d\nvpp_size: %d\n"
		"world_size: %lld\n", name, pl->d, cp, pl->p, pl->t, pl->v, (long long)pl->d * cp * pl->p * pl->t);
	if (ferror(out))
		return lbs_error_set(err, LBS_EIO, "writing the simulated trace's metadata failed");
	return LBS_OK;
}
