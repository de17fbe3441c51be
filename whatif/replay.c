/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The replay of a model's instances on the event engine. Every op instance
 * has one handler, whose event fires at the instance's end; it releases the
 * ops that depend on it. An op whose dependencies have all ended is ready:
 * it starts after its launch delay; a local op ends after its duration; a
 * group member waits until every member (of every dp_rank of the step, for
 * a synchronised group) has started, then all end at the latest start plus
 * their own transfer time. Times are computed from the dependencies, not
 * from the clock, so an event whose end lies before the clock (a negative
 * delay or transfer time, which the method keeps) fires at the clock: the
 * values, and the run, stay the same whatever the order of equal events. */
#include "whatif/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine.h"

typedef struct replay {
	const lbs_wi_model *m;
	const double *val, *lat;
	double *start, *end;
	uint32_t *pending; /* per op instance: dependencies not yet ended */
	uint32_t *arrive;  /* per (group, instance): members not yet started */
	uint32_t *handle;  /* per op instance */
	size_t done;
} replay;

static lbs_status schedule(replay *r, lbs_engine *eng, size_t cell)
{
	double t = r->end[cell];
	double now = lbs_engine_now(eng);
	return lbs_engine_at(eng, t > now ? t : now, r->handle[cell]);
}

static double ready_time(const replay *r, size_t inst, uint32_t v)
{
	const lbs_wi_model *m = r->m;
	double ready = 0;
	for (uint32_t k = m->dep_off[v]; k < m->dep_off[v + 1]; k++) {
		double e = r->end[inst * m->n_ops + m->dep[k]];
		if (k == m->dep_off[v] || e > ready)
			ready = e;
	}
	return ready;
}

/* Op v of instance inst is ready. */
static lbs_status on_ready(replay *r, lbs_engine *eng, size_t inst, uint32_t v)
{
	const lbs_wi_model *m = r->m;
	size_t n = m->n_ops, cell = inst * n + v;
	r->start[cell] = ready_time(r, inst, v) + (r->lat ? r->lat[cell] : 0);
	uint32_t g = m->group_of[v];
	if (!m->group_comm[g]) {
		r->end[cell] = r->start[cell] + r->val[cell];
		return schedule(r, eng, cell);
	}
	size_t D = (size_t)m->D, si = inst / D;
	bool sync = m->group_sync[g];
	size_t slot = g * m->n_inst + (sync ? si * D : inst);
	if (--r->arrive[slot])
		return LBS_OK;
	size_t a = sync ? si * D : inst, z = sync ? si * D + D : inst + 1;
	double M = -INFINITY;
	for (size_t q = a; q < z; q++)
		for (uint32_t k = m->mem_off[g]; k < m->mem_off[g + 1]; k++)
			if (r->start[q * n + m->mem[k]] > M)
				M = r->start[q * n + m->mem[k]];
	for (size_t q = a; q < z; q++)
		for (uint32_t k = m->mem_off[g]; k < m->mem_off[g + 1]; k++) {
			size_t c = q * n + m->mem[k];
			r->end[c] = M + r->val[c];
			lbs_status st = schedule(r, eng, c);
			if (st != LBS_OK)
				return st;
		}
	return LBS_OK;
}

static lbs_status on_end(void *ctx, uint32_t cell, lbs_engine *eng)
{
	replay *r = ctx;
	const lbs_wi_model *m = r->m;
	size_t inst = cell / m->n_ops;
	uint32_t v = (uint32_t)(cell % m->n_ops);
	r->done++;
	for (uint32_t k = m->out_off[v]; k < m->out_off[v + 1]; k++) {
		uint32_t w = m->out[k];
		if (--r->pending[inst * m->n_ops + w] == 0) {
			lbs_status st = on_ready(r, eng, inst, w);
			if (st != LBS_OK)
				return st;
		}
	}
	return LBS_OK;
}

static void step_times(const lbs_wi_model *m, const double *end, double *T)
{
	bool any_opt = false;
	for (size_t v = 0; v < m->n_ops; v++)
		any_opt |= m->type[v] == LBS_OP_OPTIMIZER;
	size_t D = (size_t)m->D, n = m->n_ops;
	for (size_t si = 0; si < m->n_steps; si++) {
		double t = -INFINITY;
		for (size_t c = si * D * n; c < (si + 1) * D * n; c++)
			if ((!any_opt || m->type[c % n] == LBS_OP_OPTIMIZER) && end[c] > t)
				t = end[c];
		T[si] = t;
	}
}

lbs_status lbs_wi_replay(const lbs_wi_model *m, const double *val, const double *lat, double *T,
			 double *start, double *end, lbs_error *err)
{
	size_t n = m->n_ops, cells = m->n_inst * n;
	if (cells > LBS_HANDLE_MAX)
		return lbs_error_set(err, LBS_EINPUT, "%s: %zu op instances, more than the %u the event "
				     "engine can replay at once", m->trace->path, cells, (unsigned)LBS_HANDLE_MAX);
	replay r = { .m = m, .val = val, .lat = lat, .start = start, .end = end };
	double *own = NULL;
	if (!start || !end) {
		own = malloc(2 * cells * sizeof *own);
		r.start = own;
		r.end = own ? own + cells : NULL;
	}
	r.pending = malloc(cells * sizeof *r.pending);
	r.arrive = malloc(m->n_groups * m->n_inst * sizeof *r.arrive);
	r.handle = malloc(cells * sizeof *r.handle);
	lbs_engine eng;
	lbs_status st = lbs_engine_init(&eng, 1024, err);
	if (st == LBS_OK && (!r.start || !r.pending || !r.arrive || !r.handle))
		st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	for (size_t c = 0; st == LBS_OK && c < cells; c++) {
		uint32_t v = (uint32_t)(c % n);
		r.pending[c] = m->dep_off[v + 1] - m->dep_off[v];
		st = lbs_engine_register(&eng, on_end, &r, (uint32_t)c, &r.handle[c]);
	}
	if (st == LBS_OK)
		for (size_t g = 0; g < m->n_groups; g++)
			for (size_t i = 0; i < m->n_inst; i++)
				r.arrive[g * m->n_inst + i] = (m->mem_off[g + 1] - m->mem_off[g]) *
							      (m->group_sync[g] ? (uint32_t)m->D : 1);
	/* The ops without dependencies are ready at 0. */
	for (size_t c = 0; st == LBS_OK && c < cells; c++)
		if (!r.pending[c])
			st = on_ready(&r, &eng, c / n, (uint32_t)(c % n));
	if (st == LBS_OK)
		st = lbs_engine_run(&eng);
	if (st == LBS_OK && r.done != cells)
		st = lbs_error_set(err, LBS_EINTERNAL, "replay of %s ended %zu of %zu op instances",
				   m->trace->path, r.done, cells);
	if (st == LBS_OK)
		step_times(m, r.end, T);
	lbs_engine_destroy(&eng);
	free(own);
	free(r.pending);
	free(r.arrive);
	free(r.handle);
	return st;
}

void lbs_wi_replay_sweep(const lbs_wi_model *m, const double *val, const double *lat, double *T,
			 double *start, double *end)
{
	size_t n = m->n_ops, D = (size_t)m->D;
	replay r = { .m = m, .start = start, .end = end };
	for (size_t gi = 0; gi < m->n_groups; gi++) {
		uint32_t g = m->order[gi];
		for (size_t si = 0; si < m->n_steps; si++) {
			for (size_t dp = 0; dp < D; dp++) {
				size_t inst = si * D + dp;
				for (uint32_t k = m->mem_off[g]; k < m->mem_off[g + 1]; k++) {
					size_t c = inst * n + m->mem[k];
					start[c] = ready_time(&r, inst, m->mem[k]) + (lat ? lat[c] : 0);
				}
			}
			for (size_t dp = 0; dp < D; dp++) {
				size_t inst = si * D + dp;
				size_t a = m->group_sync[g] ? si * D : inst, z = m->group_sync[g] ? si * D + D : inst + 1;
				double M = -INFINITY;
				for (size_t q = a; q < z; q++)
					for (uint32_t k = m->mem_off[g]; k < m->mem_off[g + 1]; k++)
						if (start[q * n + m->mem[k]] > M)
							M = start[q * n + m->mem[k]];
				for (uint32_t k = m->mem_off[g]; k < m->mem_off[g + 1]; k++) {
					size_t c = inst * n + m->mem[k];
					end[c] = m->group_comm[g] ? M + val[c] : start[c] + val[c];
				}
			}
		}
	}
	step_times(m, end, T);
}
