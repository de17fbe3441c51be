/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The synchronisation modes in which each worker steps on its own, with no
 * barrier at every step (doc/model.md, "Synchronisation"):
 *
 *   ssp        stale synchronous parallel (Ho et al. 2013): worker i starts
 *              its step k once every worker has finished step k - s - 1;
 *              each worker's push and pull take the network's time.
 *   asp        asynchronous: each worker pushes its gradient and pulls the
 *              model through a parameter server whose link serves one
 *              transfer at a time, and starts its next step at once.
 *   local-sgd  each worker steps on its own model; every H-th step ends in
 *              a barrier and an all-reduce that averages the models.
 *
 * For ssp and local-sgd an iteration of the results is a clock: step k of
 * every worker, recorded when the last of them has finished it; for asp it
 * is an update, one worker's gradient applied by the server. The modes that
 * keep a barrier at every step (bsp, backup, dropcompute) are sim/run.c's.
 * Declared in sim/run.h. */
#include "sim/efficiency.h"
#include "sim/run.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Each worker's own sequence of steps. A worker is, at any time, computing
 * its step next - 1, exchanging it, or waiting at the gate to start step
 * next. The steps of a clock that not every worker has finished yet are
 * kept in a ring of `window` slots (slot = clock % window), each a row of n
 * workers: ssp lets a worker be at most s clocks past the last complete
 * one (s + 1 clocks in flight), local-sgd at most H - 1 (H in flight); asp
 * keeps the step in flight of each worker (one slot). */
struct lbs_stepper {
	int mode;               /* lbs_sync_mode */
	int64_t bound;          /* ssp: the staleness s; local-sgd: the period H */
	size_t n, window;
	int64_t cap;            /* ssp, local-sgd: clocks to run; asp: updates */
	int64_t *next;          /* per worker: the step it starts next */
	int64_t *finished;      /* per worker: its steps finished */
	unsigned char *waiting; /* per worker: blocked at the gate */
	double *free_s;         /* per worker: when it finished its last step (asp: its last push applied) */
	double *round_s;        /* local-sgd, per worker: compute time in the current round */
	int64_t complete;       /* clocks every worker has finished */
	int64_t *n_finished;    /* per slot: workers that have finished that clock */
	size_t n_computed;      /* local-sgd: workers done computing the averaging step */
	int64_t planned_at;     /* local-sgd: the clock the current plan starts at */
	/* per slot and worker */
	double *start_s, *cend_s, *end_s, *compute_s, *wait_s;
	int64_t *batch, *tau;
	/* asp: the parameter server's link, and the model's version (updates applied) */
	double link_free_s, server_s, worker_s, latency_s;
	int64_t version, updates;
	int64_t *read_version;  /* per worker: the version its step computes on */
	uint32_t h_computed0, h_finished0, h_arrived0, h_applied0, h_read0;
	bool stopped;
};

bool lbs_sync_per_worker(int mode)
{
	return mode == LBS_SYNC_SSP || mode == LBS_SYNC_ASP || mode == LBS_SYNC_LOCAL_SGD;
}

static const char *const mode_names[] = { "bsp", "backup", "ssp", "asp", "dropcompute", "local-sgd" };

__attribute__((format(printf, 5, 6)))
static lbs_status refuse(const lbs_scenario *sc, const char *section, const char *key, lbs_error *err,
			 const char *fmt, ...)
{
	char msg[LBS_ERROR_MAX / 2];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return lbs__run_key_error(sc, section, key, msg, err);
}

/* What each mode does not compose with; see doc/model.md. */
static lbs_status check_mode(const lbs_run *run, lbs_error *err)
{
	const lbs_scenario *sc = run->sc;
	const int mode = sc->sync.mode;
	const char *m = mode_names[mode], *p = run->policy->name;
	if (mode == LBS_SYNC_BSP || mode == LBS_SYNC_BACKUP)
		return LBS_OK;
	if (run->info.micro_batch)
		return refuse(sc, "sync", "mode", err, "mode = %s runs whole shares; policy '%s' hands out "
			      "micro-batches (work stealing): use another policy", m, p);
	if (mode == LBS_SYNC_DROPCOMPUTE) {
		if (sc->sync.micro_batch > sc->run.global_batch)
			return refuse(sc, "sync", "micro_batch", err, "a micro-batch larger than the global "
				      "batch of %lld samples", (long long)sc->run.global_batch);
		return LBS_OK;
	}
	if (run->info.lookahead)
		return refuse(sc, "sync", "mode", err, "mode = %s has no barrier at every step to look ahead "
			      "from; policy '%s' needs one: use another policy", m, p);
	if (mode != LBS_SYNC_LOCAL_SGD && !run->info.fixed)
		return refuse(sc, "sync", "mode", err, "mode = %s has no barrier at which policy '%s' could "
			      "re-plan the shares: use static, or mode = local-sgd (it re-plans at each "
			      "averaging)", m, p);
	if (sc->iterations_per_epoch)
		return refuse(sc, "run", "epochs", err, "[sync] mode = %s counts steps, not epochs: give "
			      "the run's length in iterations", m);
	if (mode != LBS_SYNC_LOCAL_SGD && sc->network.ops == &lbs_network_ring)
		return refuse(sc, "sync", "mode", err, "mode = %s goes through a parameter server (topology "
			      "= ps) or none: a ring all-reduce needs every rank at once", m);
	if (mode == LBS_SYNC_SSP && run->net_avail.ops)
		return refuse(sc, "sync", "mode", err, "mode = %s exchanges each worker's gradient on its own, "
			      "at overlapping times; the network's bandwidth over time (a [network] trace or a "
			      "network generator) is replayed one transfer at a time: use asp, local-sgd or bsp", m);
	if (sc->network.exchange_on_workers)
		return refuse(sc, "network", "exchange_on_workers", err, "[sync] mode = %s: the exchange "
			      "runs on the network alone here; set it to no", m);
	return LBS_OK;
}

/* Whether worker may start step k now. */
static bool gate_open(const lbs_stepper *st, int64_t k)
{
	if (st->mode == LBS_SYNC_SSP)
		return st->complete >= k - st->bound; /* every worker has finished k - s - 1 */
	if (st->mode == LBS_SYNC_LOCAL_SGD)
		return k % st->bound != 0 || st->complete >= k; /* the averaging of step k - 1 is done */
	return true;
}

static size_t at(const lbs_stepper *st, int64_t k, size_t i)
{
	return st->mode == LBS_SYNC_ASP ? i : (size_t)(k % (int64_t)st->window) * st->n + i;
}

/* Worker i, free at t, starts its next step if the gate lets it: its noise
 * draw for the step (its own stream, one draw a step as under BSP), its
 * share of the current plan, and its completion where the integral of its
 * availability reaches the work. */
static lbs_status try_start(lbs_run *run, lbs_stepper *st, size_t i, double t, lbs_engine *eng)
{
	const int64_t k = st->next[i];
	if (st->stopped || (st->mode != LBS_SYNC_ASP && k >= st->cap))
		return LBS_OK;
	if (!gate_open(st, k)) {
		st->waiting[i] = 1;
		return LBS_OK;
	}
	st->waiting[i] = 0;
	assert(st->mode == LBS_SYNC_ASP || k - st->complete < (int64_t)st->window);
	lbs_worker *w = &run->workers[i];
	const int64_t b = run->batch[i];
	double work = lbs_cost_time_s(w->cost, b) * lbs__run_noise(run, i);
	if (run->resize)
		work *= lbs__run_resize(w, b);
	double fin = lbs_avail_finish(&w->avail, t, work, k);
	size_t o = at(st, k, i);
	st->start_s[o] = t;
	st->compute_s[o] = fin - t;
	st->batch[o] = b;
	st->wait_s[o] = t - st->free_s[i];
	/* ssp: the clocks its read may miss (it sees every complete one) */
	st->tau[o] = st->mode == LBS_SYNC_SSP ? k - st->complete : 0;
	st->next[i] = k + 1;
	return lbs_engine_at(eng, fin, st->h_computed0 + (uint32_t)i);
}

lbs_status lbs_run_count_staleness(lbs_run *run, int64_t tau, lbs_error *err)
{
	if ((size_t)tau >= run->n_staleness) {
		size_t len = (size_t)tau + 1 > 2 * run->n_staleness ? (size_t)tau + 1 : 2 * run->n_staleness;
		int64_t *p = realloc(run->staleness_counts, len * sizeof *p);
		if (!p)
			return lbs_error_set(err, LBS_EINTERNAL, "out of memory (staleness counts)");
		memset(p + run->n_staleness, 0, (len - run->n_staleness) * sizeof *p);
		run->staleness_counts = p;
		run->n_staleness = len;
	}
	run->staleness_counts[tau]++;
	return LBS_OK;
}

/* Hands a record to the observer; stops the run at its length or target. */
static lbs_status deliver(lbs_run *run, lbs_stepper *st, const lbs_iteration_record *rec, int64_t done,
			  lbs_engine *eng)
{
	if (run->observer) {
		lbs_status s = run->observer(run->observer_ctx, rec, eng->err);
		if (s != LBS_OK)
			return s;
	}
	if (run->interrupt && *run->interrupt)
		return lbs_error_set(eng->err, LBS_EINTR, "interrupted after %lld iterations",
				     (long long)run->stats.iterations);
	if (done == st->cap || (run->sc->convergence.stop && run->stats.steps_to_target))
		st->stopped = eng->stop = true;
	return LBS_OK;
}

/* Clock c is complete (every worker has finished its step c): its record,
 * from the earliest start to the latest end; its staleness weight the
 * samples' mean of each step's (ssp). */
static lbs_status close_clock(lbs_run *run, lbs_stepper *st, int64_t c, lbs_engine *eng)
{
	const size_t o = at(st, c, 0);
	const int penalty = run->sc->convergence.staleness_penalty;
	double start = INFINITY, cend = -INFINITY, end = -INFINITY, lo = INFINITY, hi = -INFINITY, weighted = 0;
	int64_t samples = 0;
	for (size_t i = 0; i < st->n; i++) {
		start = fmin(start, st->start_s[o + i]);
		cend = fmax(cend, st->cend_s[o + i]);
		end = fmax(end, st->end_s[o + i]);
		lo = fmin(lo, st->compute_s[o + i]);
		hi = fmax(hi, st->compute_s[o + i]);
		samples += st->batch[o + i];
		weighted += (double)st->batch[o + i] * lbs_staleness_weight(penalty, run->sc->convergence.staleness_exponent, st->tau[o + i]);
		lbs_status s;
		if (st->mode == LBS_SYNC_SSP && (s = lbs_run_count_staleness(run, st->tau[o + i], eng->err)) != LBS_OK)
			return s;
	}
	run->iteration = c;
	run->step_weight = samples > 0 ? weighted / (double)samples : 1.0;
	/* local SGD: the target is looked for on the averaged model only */
	run->target_hidden = st->mode == LBS_SYNC_LOCAL_SGD && (c + 1) % st->bound != 0;
	bool changed = run->batch_changed && c == st->planned_at;
	lbs_iteration_record rec;
	lbs_run_close_iteration(run, start, cend, end, st->batch + o, samples, lo, hi, &rec);
	rec.batch_changed = changed;
	rec.compute_s = st->compute_s + o;
	rec.wait_s = st->wait_s + o;
	return deliver(run, st, &rec, c + 1, eng);
}

/* local-sgd, at a complete round: the policy re-plans at the barrier from
 * each worker's mean compute time per step over the round. */
static lbs_status replan(lbs_run *run, lbs_stepper *st, lbs_error *err)
{
	if (run->info.fixed || st->complete % st->bound != 0 || st->complete >= st->cap)
		return LBS_OK;
	for (size_t i = 0; i < st->n; i++) {
		run->compute_s[i] = st->round_s[i] / (double)st->bound;
		st->round_s[i] = 0;
	}
	run->iteration = st->complete;
	st->planned_at = st->complete;
	return lbs__run_plan(run, err);
}

/* Worker i has finished its step (ssp: its exchange; local-sgd: its compute,
 * or the averaging; asp: its pull of the model). */
static lbs_status finish(lbs_run *run, lbs_stepper *st, size_t i, lbs_engine *eng)
{
	const double now = lbs_engine_now(eng);
	lbs_status s;
	if (st->mode == LBS_SYNC_ASP)
		return try_start(run, st, i, now, eng);
	const int64_t k = st->finished[i]++;
	const size_t slot = (size_t)(k % (int64_t)st->window);
	st->end_s[at(st, k, i)] = now;
	st->free_s[i] = now;
	st->n_finished[slot]++;
	bool advanced = false;
	while (!st->stopped && st->complete < st->cap &&
	       st->n_finished[st->complete % (int64_t)st->window] == (int64_t)st->n) {
		st->n_finished[st->complete % (int64_t)st->window] = 0;
		if ((s = close_clock(run, st, st->complete, eng)) != LBS_OK)
			return s;
		st->complete++;
		advanced = true;
		if (st->mode == LBS_SYNC_LOCAL_SGD && (s = replan(run, st, eng->err)) != LBS_OK)
			return s;
	}
	if ((s = try_start(run, st, i, now, eng)) != LBS_OK)
		return s;
	for (size_t j = 0; advanced && j < st->n; j++)
		if (st->waiting[j] && (s = try_start(run, st, j, now, eng)) != LBS_OK)
			return s;
	return LBS_OK;
}

static lbs_status on_finished(void *ctx, uint32_t i, lbs_engine *eng)
{
	lbs_run *run = ctx;
	return finish(run, run->stepper, i, eng);
}

/* Worker i has computed its step. */
static lbs_status on_computed(void *ctx, uint32_t i, lbs_engine *eng)
{
	lbs_run *run = ctx;
	lbs_stepper *st = run->stepper;
	const double now = lbs_engine_now(eng);
	const int64_t k = st->next[i] - 1;
	const size_t o = at(st, k, i);
	st->cend_s[o] = now;
	switch (st->mode) {
	case LBS_SYNC_SSP: {
		/* Its push and pull: the network's time, latency then transfer,
		 * as BSP's aggregation (so that s = 0 is BSP to the bit). */
		double end = lbs_avail_finish(&run->net_avail, now + run->net.latency_s, run->net.transfer_s, k);
		return lbs_engine_at(eng, end, st->h_finished0 + i);
	}
	case LBS_SYNC_ASP: /* the push reaches the server after the latency */
		return lbs_engine_at(eng, now + st->latency_s, st->h_arrived0 + i);
	default: /* local-sgd */
		st->round_s[i] += st->compute_s[o];
		if ((k + 1) % st->bound != 0)
			return finish(run, st, i, eng);
		/* The averaging: an all-reduce once every worker has computed. */
		if (++st->n_computed < st->n)
			return LBS_OK;
		st->n_computed = 0;
		double end = lbs_avail_finish(&run->net_avail, now + run->net.latency_s, run->net.transfer_s, k);
		for (size_t j = 0; j < st->n; j++) {
			st->wait_s[at(st, k, j)] += now - st->cend_s[at(st, k, j)];
			lbs_status s = lbs_engine_at(eng, end, st->h_finished0 + (uint32_t)j);
			if (s != LBS_OK)
				return s;
		}
		return LBS_OK;
	}
}

/* asp: one transfer of the gradient's bytes through the server's link,
 * first come first served from t: its end on the link (the bandwidth factor
 * integrated as the aggregation's; an iteration-indexed network trace is
 * read at the server's count of updates, which only grows), no sooner
 * than the worker's own link allows. */
static double transfer(lbs_run *run, lbs_stepper *st, double t, int64_t k, double *served)
{
	double start = t > st->link_free_s ? t : st->link_free_s;
	if (served)
		*served = start;
	double end = st->server_s > 0 ? lbs_avail_finish(&run->net_avail, start, st->server_s, k) : start;
	st->link_free_s = end;
	return end > t + st->worker_s ? end : t + st->worker_s;
}

/* asp: worker i's push reaches the server. */
static lbs_status on_arrived(void *ctx, uint32_t i, lbs_engine *eng)
{
	lbs_run *run = ctx;
	lbs_stepper *st = run->stepper;
	double applied = transfer(run, st, lbs_engine_now(eng), st->updates, NULL);
	return lbs_engine_at(eng, applied, st->h_applied0 + i);
}

/* asp: worker i's gradient is applied: an update (a record), its staleness
 * the updates applied since the model it computed on was read; then its
 * pull of the new model, from the server, after the transfers ahead. */
static lbs_status on_applied(void *ctx, uint32_t i, lbs_engine *eng)
{
	lbs_run *run = ctx;
	lbs_stepper *st = run->stepper;
	const double now = lbs_engine_now(eng);
	const size_t o = i;
	const int64_t tau = st->version - st->read_version[i];
	lbs_status s = lbs_run_count_staleness(run, tau, eng->err);
	if (s != LBS_OK)
		return s;
	st->version++;
	st->free_s[i] = now;
	run->iteration = st->updates;
	run->step_weight = lbs_staleness_weight(run->sc->convergence.staleness_penalty,
							run->sc->convergence.staleness_exponent, tau);
	lbs_iteration_record rec;
	double c = st->compute_s[o];
	lbs_run_close_iteration(run, st->start_s[o], st->cend_s[o], now, st->batch + o, st->batch[o], c, c, &rec);
	rec.n_workers = 1;
	rec.first_worker = i;
	rec.batch_changed = run->batch_changed && st->updates == 0;
	rec.n_planned = run->n; /* the whole plan, with the first update */
	rec.compute_s = st->compute_s + o;
	rec.wait_s = st->wait_s + o;
	rec.predicted_speed = run->predicted ? run->predicted + i : NULL;
	rec.readings = NULL;
	rec.n_readings = 0;
	if ((s = deliver(run, st, &rec, ++st->updates, eng)) != LBS_OK || st->stopped)
		return s;
	/* The pull: the model is read when the server starts sending it. */
	double served, end = transfer(run, st, now, st->updates, &served);
	if ((s = lbs_engine_at(eng, served, st->h_read0 + i)) != LBS_OK)
		return s;
	return lbs_engine_at(eng, end + st->latency_s, st->h_finished0 + i);
}

static lbs_status on_read(void *ctx, uint32_t i, lbs_engine *eng)
{
	(void)eng;
	lbs_run *run = ctx;
	run->stepper->read_version[i] = run->stepper->version;
	return LBS_OK;
}

/* Time 0: every worker starts its step 0 (the plan made at set-up). */
static lbs_status on_begin(void *ctx, uint32_t arg, lbs_engine *eng)
{
	(void)arg;
	lbs_run *run = ctx;
	for (size_t i = 0; i < run->n; i++) {
		lbs_status s = try_start(run, run->stepper, i, 0.0, eng);
		if (s != LBS_OK)
			return s;
	}
	return LBS_OK;
}

/* One handler per worker, the worker its argument, with consecutive handles
 * from *first. */
static lbs_status register_each(lbs_run *run, lbs_event_fn fn, uint32_t *first)
{
	for (size_t k = 0; k < run->n; k++) {
		uint32_t h;
		lbs_status s = lbs_engine_register(&run->eng, fn, run, (uint32_t)k, &h);
		if (s != LBS_OK)
			return s;
		if (k == 0)
			*first = h;
		assert(h == *first + k);
	}
	return LBS_OK;
}

lbs_status lbs_sync_setup(lbs_run *run, lbs_error *err)
{
	const lbs_scenario *sc = run->sc;
	lbs_status s = check_mode(run, err);
	if (s != LBS_OK || !lbs_sync_per_worker(sc->sync.mode))
		return s;
	lbs_stepper *st = lbs_calloc(1, sizeof *st, err);
	if (!st)
		return LBS_EINTERNAL;
	run->stepper = st;
	st->mode = sc->sync.mode;
	st->n = run->n;
	st->cap = sc->iterations;
	st->bound = st->mode == LBS_SYNC_SSP ? sc->sync.staleness : sc->sync.period;
	st->window = st->mode == LBS_SYNC_SSP ? (size_t)st->bound + 1 : st->mode == LBS_SYNC_ASP ? 1 : (size_t)st->bound;
	if (st->mode != LBS_SYNC_ASP && (int64_t)st->window > st->cap)
		st->window = (size_t)st->cap; /* no more clocks than the run has */
	const size_t cells = st->window * st->n;
	/* Each step in flight keeps 5 times and 2 counts (56 bytes). */
	const double bytes = (double)st->window * (double)st->n * 56;
	if (bytes > LBS_MAX_SEEN_BYTES) {
		char msg[LBS_ERROR_MAX / 2];
		snprintf(msg, sizeof msg, "up to %zu steps in flight per worker (of %zu workers) take %.4g MiB, "
			 "more than the limit of %.4g MiB: a smaller bound, or fewer iterations",
			 st->window, st->n, bytes / 1048576, LBS_MAX_SEEN_BYTES / 1048576);
		return lbs__run_key_error(sc, "sync", st->mode == LBS_SYNC_SSP ? "staleness" : "period", msg, err);
	}
	if (!(st->next = lbs_calloc(st->n, sizeof *st->next, err)) ||
	    !(st->finished = lbs_calloc(st->n, sizeof *st->finished, err)) ||
	    !(st->waiting = lbs_calloc(st->n, sizeof *st->waiting, err)) ||
	    !(st->free_s = lbs_calloc(st->n, sizeof *st->free_s, err)) ||
	    !(st->round_s = lbs_calloc(st->n, sizeof *st->round_s, err)) ||
	    !(st->read_version = lbs_calloc(st->n, sizeof *st->read_version, err)) ||
	    !(st->n_finished = lbs_calloc(st->window, sizeof *st->n_finished, err)) ||
	    !(st->start_s = lbs_calloc(cells, sizeof(double), err)) ||
	    !(st->cend_s = lbs_calloc(cells, sizeof(double), err)) ||
	    !(st->end_s = lbs_calloc(cells, sizeof(double), err)) ||
	    !(st->compute_s = lbs_calloc(cells, sizeof(double), err)) ||
	    !(st->wait_s = lbs_calloc(cells, sizeof(double), err)) ||
	    !(st->batch = lbs_calloc(cells, sizeof(int64_t), err)) ||
	    !(st->tau = lbs_calloc(cells, sizeof(int64_t), err)))
		return LBS_EINTERNAL;
	if (st->mode == LBS_SYNC_ASP && sc->network.ops == &lbs_network_ps) {
		/* One push or pull of M bytes: M / S of them through each of the
		 * S servers' links (together, as the link of lbs_network_ps), M
		 * through the worker's; a latency each. */
		const lbs_network *net = &sc->network;
		st->server_s = sc->model.gradient_bytes / ((double)net->servers * net->bandwidth_Bps);
		st->worker_s = sc->model.gradient_bytes / net->worker_bandwidth_Bps;
		st->latency_s = net->latency_s;
	}
	if ((s = lbs_engine_register(&run->eng, on_begin, run, 0, &run->h_begin)) != LBS_OK ||
	    (s = register_each(run, on_computed, &st->h_computed0)) != LBS_OK ||
	    (s = register_each(run, on_finished, &st->h_finished0)) != LBS_OK)
		return s;
	if (st->mode == LBS_SYNC_ASP &&
	    ((s = register_each(run, on_arrived, &st->h_arrived0)) != LBS_OK ||
	     (s = register_each(run, on_applied, &st->h_applied0)) != LBS_OK ||
	     (s = register_each(run, on_read, &st->h_read0)) != LBS_OK))
		return s;
	return LBS_OK;
}

void lbs_sync_destroy(lbs_run *run)
{
	lbs_stepper *st = run->stepper;
	if (!st)
		return;
	free(st->next);
	free(st->finished);
	free(st->waiting);
	free(st->free_s);
	free(st->round_s);
	free(st->read_version);
	free(st->n_finished);
	free(st->start_s);
	free(st->cend_s);
	free(st->end_s);
	free(st->compute_s);
	free(st->wait_s);
	free(st->batch);
	free(st->tau);
	free(st);
	run->stepper = NULL;
}
