/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "sim/run.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/rng.h"

static double monotonic_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The worker and group a batch problem is about, for messages. */
static lbs_status batch_error(const lbs_run *run, size_t i, const char *what, lbs_error *err)
{
	const lbs_group_spec *g = &run->sc->groups[run->workers[i].group];
	char section[LBS_NAME_MAX + 16], label[LBS_ERROR_MAX / 2];
	snprintf(section, sizeof section, "workers.%s", g->name);
	lbs_origin_format(&g->at, section, NULL, label, sizeof label);
	return lbs_error_set(err, LBS_EINPUT, "%s: worker %zu: policy '%s' %s", label, i,
			     run->policy->name, what);
}

/* A policy's plan must give integers within the memory caps summing to B. */
static lbs_status check_plan(const lbs_run *run, lbs_error *err)
{
	int64_t sum = 0;
	for (size_t i = 0; i < run->n; i++) {
		int64_t b = run->batch[i];
		char what[256];
		if (b < 0 || b > run->max_batch[i]) {
			snprintf(what, sizeof what,
				 "gives it %lld samples, outside 0..%lld (its memory cap, max_batch)",
				 (long long)b, (long long)run->max_batch[i]);
			return batch_error(run, i, what, err);
		}
		sum += b;
	}
	if (sum != run->sc->run.global_batch)
		return lbs_error_set(err, LBS_EINTERNAL,
				     "policy '%s' planned %lld samples for a global batch of %lld",
				     run->policy->name, (long long)sum, (long long)run->sc->run.global_batch);
	return LBS_OK;
}

/* The readings a real system would observe at the barrier: each traced
 * worker's cpu_util and mem_util, where its trace has them. */
static void take_readings(lbs_run *run, double now_s)
{
	for (size_t i = 0; i < run->n; i++) {
		const lbs_avail *a = &run->workers[i].avail;
		const lbs_source *src = a->ops == &lbs_source_ops ? a->state : NULL;
		double v;
		if (run->cpu_util)
			run->cpu_util[i] = src && lbs_source_reading(src, LBS_READING_CPU, now_s, run->iteration, &v)
					   ? v : NAN;
		if (run->mem_util)
			run->mem_util[i] = src && lbs_source_reading(src, LBS_READING_MEM, now_s, run->iteration, &v)
					   ? v : NAN;
	}
}

static lbs_status plan(lbs_run *run, lbs_error *err)
{
	lbs_observation obs = {
		.iteration = run->iteration,
		.epoch = run->sc->iterations_per_epoch ? run->iteration / run->sc->iterations_per_epoch : 0,
		.epoch_start = run->sc->iterations_per_epoch
				       ? run->iteration % run->sc->iterations_per_epoch == 0
				       : run->iteration == 0,
		.now_s = lbs_engine_now(&run->eng),
		.batch = run->iteration ? run->batch : NULL,
		.compute_s = run->iteration ? run->compute_s : NULL,
		.cpu_util = run->cpu_util,
		.mem_util = run->mem_util,
	};
	if (run->cpu_util || run->mem_util)
		take_readings(run, obs.now_s);
	bool changed = false;
	double t0 = monotonic_s();
	lbs_status st = run->policy->plan(run->policy_state, &obs, run->batch, &changed, err);
	run->decision_s = monotonic_s() - t0;
	if (st == LBS_OK && changed)
		st = check_plan(run, err);
	return st;
}

/* Barrier released: every worker starts its share. The completion of worker
 * i is where the integral of its rate a(t)/T_i reaches 1; with T_i drawn
 * from its noise stream once per iteration. */
static lbs_status on_begin(void *ctx, uint32_t arg, lbs_engine *eng)
{
	(void)arg;
	lbs_run *run = ctx;
	lbs_status st;
	if (run->iteration > 0 && (st = plan(run, eng->err)) != LBS_OK)
		return st;
	double t0 = lbs_engine_now(eng), last = t0;
	run->iter_start_s = t0;
	lbs_worker *w = run->workers;
	for (size_t i = 0; i < run->n; i++) {
		double work = lbs_cost_time_s(w[i].cost, run->batch[i]);
		if (w[i].rng)
			work *= lbs_noise_draw(w[i].noise, w[i].rng);
		double fin = lbs_avail_finish(&w[i].avail, t0, work, run->iteration);
		run->compute_s[i] = fin - t0;
		if (fin > last)
			last = fin;
		if (run->per_worker_events && (st = lbs_engine_at(eng, fin, run->h_worker0 + (uint32_t)i)))
			return st;
	}
	if (run->per_worker_events) {
		run->remaining = run->n;
		return LBS_OK;
	}
	return lbs_engine_at(eng, last, run->h_compute_done);
}

static lbs_status on_compute_done(void *ctx, uint32_t arg, lbs_engine *eng)
{
	(void)arg;
	lbs_run *run = ctx;
	double now = lbs_engine_now(eng);
	run->compute_end_s = now;
	/* The latency, then the transfer at the bandwidth of the moment: a
	 * bandwidth trace stretches the transfer as availability stretches
	 * compute (the same fluid rule). */
	double start = now + run->net.latency_s;
	double end = run->net.transfer_s > 0
			     ? lbs_avail_finish(&run->net_avail, start, run->net.transfer_s, run->iteration)
			     : start;
	return lbs_engine_at(eng, end, run->h_agg_done);
}

static lbs_status on_worker_done(void *ctx, uint32_t worker, lbs_engine *eng)
{
	lbs_run *run = ctx;
	assert(lbs_engine_now(eng) == run->iter_start_s + run->compute_s[worker]);
	(void)worker;
	if (--run->remaining == 0)
		return on_compute_done(ctx, 0, eng);
	return LBS_OK;
}

static lbs_status on_agg_done(void *ctx, uint32_t arg, lbs_engine *eng)
{
	(void)arg;
	lbs_run *run = ctx;
	double now = lbs_engine_now(eng);
	double lo = run->compute_s[0], hi = run->compute_s[0];
	for (size_t i = 1; i < run->n; i++) {
		double c = run->compute_s[i];
		lo = c < lo ? c : lo;
		hi = c > hi ? c : hi;
	}
	lbs_iteration_record rec = {
		.iteration = run->iteration,
		.epoch = run->sc->iterations_per_epoch ? run->iteration / run->sc->iterations_per_epoch : 0,
		.start_s = run->iter_start_s,
		.compute_end_s = run->compute_end_s,
		.end_s = now,
		.straggler_gap_s = hi - lo,
		.aggregation_s = now - run->compute_end_s,
		.decision_s = run->decision_s,
		.n_workers = run->n,
		.batch = run->batch,
		.compute_s = run->compute_s,
	};
	lbs_run_stats *s = &run->stats;
	s->iterations++;
	s->sim_time_s = now;
	s->sum_iteration_s += now - run->iter_start_s;
	s->sum_compute_s += run->compute_end_s - run->iter_start_s;
	s->sum_aggregation_s += rec.aggregation_s;
	s->sum_gap_s += rec.straggler_gap_s;
	s->sum_decision_s += rec.decision_s;
	if (run->observer) {
		lbs_status st = run->observer(run->observer_ctx, &rec, eng->err);
		if (st != LBS_OK)
			return st;
	}
	if (run->interrupt && *run->interrupt)
		return lbs_error_set(eng->err, LBS_EINTR, "interrupted after %lld of %lld iterations",
				     (long long)s->iterations, (long long)run->sc->iterations);
	if (++run->iteration < run->sc->iterations)
		return lbs_engine_at(eng, now, run->h_begin);
	return LBS_OK;
}

/* Binds one trace; on error, prefixes the message with where the scenario
 * gave the key at fault. */
static lbs_status bind_one(lbs_run *run, const lbs_scenario *sc, const char *section,
			   const lbs_trace_request *req, int64_t count, lbs_source *out, lbs_error *err)
{
	const char *key = NULL;
	lbs_status st = lbs_trace_bind(run->traces, req, count, out, &key, err);
	if (st != LBS_OK) {
		char label[LBS_ERROR_MAX / 2];
		lbs_origin o = lbs_scenario_origin(sc, section, key ? key : "trace");
		if (!o.file) /* a default: point at the trace itself */
			o = lbs_scenario_origin(sc, section, key = "trace");
		lbs_origin_format(&o, section, key ? key : "trace", label, sizeof label);
		lbs_error_prefix(err, "%s", label);
	}
	return st;
}

/* Loads every trace the groups and the network name and sets up the
 * replay of each traced worker (run->sources, group by group), so that a
 * bad trace stops the run before anything is written. */
static lbs_status bind_traces(lbs_run *run, const lbs_scenario *sc, lbs_error *err)
{
	size_t n = 0;
	for (size_t g = 0; g < sc->n_groups; g++)
		if (sc->groups[g].trace.format)
			n += (size_t)sc->groups[g].count;
	if (!n && !sc->network_trace.format)
		return LBS_OK;
	if (!(run->traces = lbs_trace_table_create(err)) ||
	    (n && !(run->sources = lbs_calloc(n, sizeof *run->sources, err))))
		return LBS_EINTERNAL;
	/* Trace paths are relative to the scenario file's directory. */
	char base[1024];
	snprintf(base, sizeof base, "%s", sc->path);
	char *slash = strrchr(base, '/');
	if (slash)
		*(slash == base ? slash + 1 : slash) = '\0';
	else
		snprintf(base, sizeof base, ".");
	lbs_status st;
	size_t at = 0;
	for (size_t g = 0; g < sc->n_groups; g++) {
		const lbs_group_spec *gs = &sc->groups[g];
		if (!gs->trace.format)
			continue;
		lbs_trace_request req = {
			.spec = &gs->trace,
			.base_dir = base,
			.owner = gs->name,
			.seed = (uint64_t)sc->run.seed,
			.gain = gs->availability,
		};
		char section[LBS_NAME_MAX + 16];
		snprintf(section, sizeof section, "workers.%s", gs->name);
		if ((st = bind_one(run, sc, section, &req, gs->count, run->sources + at, err)) != LBS_OK)
			return st;
		at += (size_t)gs->count;
	}
	if (sc->network_trace.format) {
		/* A bandwidth reading becomes a factor of the nominal bandwidth. */
		lbs_trace_request req = {
			.spec = &sc->network_trace,
			.base_dir = base,
			.owner = "network",
			.seed = (uint64_t)sc->run.seed,
			.gain = 1,
			.nominal = sc->network.bandwidth_Bps,
		};
		if (!(run->net_source = lbs_calloc(1, sizeof *run->net_source, err)))
			return LBS_EINTERNAL;
		if ((st = bind_one(run, sc, "network", &req, 1, run->net_source, err)) != LBS_OK)
			return st;
		run->net_avail = lbs_source_avail(run->net_source);
	}
	bool cpu = false, mem = false;
	for (size_t k = 0; k < n; k++) {
		cpu |= run->sources[k].cpu != NULL;
		mem |= run->sources[k].mem != NULL;
	}
	if ((cpu && !(run->cpu_util = lbs_calloc(run->n, sizeof *run->cpu_util, err))) ||
	    (mem && !(run->mem_util = lbs_calloc(run->n, sizeof *run->mem_util, err))))
		return LBS_EINTERNAL;
	return LBS_OK;
}

lbs_status lbs_run_create(lbs_run *run, const lbs_scenario *sc, lbs_error *err)
{
	memset(run, 0, sizeof *run);
	run->sc = sc;
	run->n = (size_t)sc->n_workers;
	run->gradient_bytes = sc->model.gradient_bytes;
	/* Workers and gradient size are fixed for the run, so is aggregation at
	 * nominal bandwidth. */
	run->net = lbs_network_time(&sc->network, sc->n_workers, sc->model.gradient_bytes);
	run->net_avail = (lbs_avail){ NULL, NULL, 1.0 };
	run->per_worker_events = sc->run.worker_events == LBS_EVENTS_ALWAYS;
	lbs_status st = lbs_engine_init(&run->eng, run->per_worker_events ? run->n + 16 : 16, err);
	if (st != LBS_OK)
		return st;
	if (!(run->workers = lbs_calloc(run->n, sizeof *run->workers, err)) ||
	    !(run->batch = lbs_calloc(run->n, sizeof *run->batch, err)) ||
	    !(run->compute_s = lbs_calloc(run->n, sizeof *run->compute_s, err)) ||
	    !(run->max_batch = lbs_calloc(run->n, sizeof *run->max_batch, err)) ||
	    !(run->device = lbs_calloc(run->n, sizeof *run->device, err))) {
		lbs_run_destroy(run);
		return LBS_EINTERNAL;
	}
	if ((st = bind_traces(run, sc, err)) != LBS_OK) {
		lbs_run_destroy(run);
		return st;
	}
	size_t i = 0, traced = 0;
	int64_t cap_sum = 0;
	for (size_t g = 0; g < sc->n_groups; g++) {
		const lbs_group_spec *gs = &sc->groups[g];
		for (int64_t k = 0; k < gs->count; k++, i++) {
			lbs_worker *w = &run->workers[i];
			w->cost = &gs->cost;
			w->noise = &gs->noise;
			w->group = (uint32_t)g;
			w->avail = gs->trace.format ? lbs_source_avail(&run->sources[traced++])
						    : (lbs_avail){ NULL, NULL, gs->availability };
			/* The stream's identity is (group, index in group): adding a
			 * worker anywhere leaves every other worker's draws alone. */
			if (gs->noise.kind != LBS_NOISE_NONE &&
			    !(w->rng = lbs_rng_stream((uint64_t)sc->run.seed, "noise", gs->name, (uint64_t)k, err))) {
				lbs_run_destroy(run);
				return LBS_EINTERNAL;
			}
			run->max_batch[i] = gs->cost.max_batch;
			run->device[i] = gs->device;
			cap_sum = cap_sum > INT64_MAX - gs->cost.max_batch ? INT64_MAX : cap_sum + gs->cost.max_batch;
		}
	}
	if (cap_sum < sc->run.global_batch) {
		lbs_run_destroy(run);
		lbs_origin at = lbs_scenario_origin(sc, "run", "global_batch");
		char label[LBS_ERROR_MAX / 2];
		lbs_origin_format(&at, "run", "global_batch", label, sizeof label);
		return lbs_error_set(err, LBS_EINPUT,
				     "%s: %lld samples do not fit in the workers' memory caps "
				     "(max_batch of all workers sums to %lld)",
				     label, (long long)sc->run.global_batch, (long long)cap_sum);
	}
	if ((st = lbs_engine_register(&run->eng, on_begin, run, 0, &run->h_begin)) ||
	    (st = lbs_engine_register(&run->eng, on_compute_done, run, 0, &run->h_compute_done)) ||
	    (st = lbs_engine_register(&run->eng, on_agg_done, run, 0, &run->h_agg_done))) {
		lbs_run_destroy(run);
		return st;
	}
	if (run->per_worker_events)
		for (size_t k = 0; k < run->n; k++) {
			uint32_t h;
			if ((st = lbs_engine_register(&run->eng, on_worker_done, run, (uint32_t)k, &h))) {
				lbs_run_destroy(run);
				return st;
			}
			if (k == 0)
				run->h_worker0 = h;
		}
	run->policy = lbs_policy_find(sc->policy.name);
	lbs_policy_env env = {
		.n_workers = run->n,
		.global_batch = sc->run.global_batch,
		.max_batch = run->max_batch,
		.device = run->device,
		.iterations_per_epoch = sc->iterations_per_epoch,
		.seed = (uint64_t)sc->run.seed,
	};
	if (!run->policy) {
		lbs_run_destroy(run);
		return lbs_error_set(err, LBS_EINPUT, "%s: unknown policy '%s'", sc->path, sc->policy.name);
	}
	if ((st = run->policy->create(&env, sc->policy.options, sc->policy.n_options,
				      &run->policy_state, err)) != LBS_OK) {
		run->policy = NULL;
		lbs_run_destroy(run);
		return st;
	}
	if ((st = plan(run, err)) != LBS_OK) {
		lbs_run_destroy(run);
		return st;
	}
	return LBS_OK;
}

lbs_status lbs_run_execute(lbs_run *run, lbs_iteration_fn observer, void *ctx,
			   const volatile sig_atomic_t *interrupt, lbs_error *err)
{
	run->observer = observer;
	run->observer_ctx = ctx;
	run->interrupt = interrupt;
	run->eng.err = err;
	lbs_status st = lbs_engine_at(&run->eng, 0.0, run->h_begin);
	if (st == LBS_OK)
		st = lbs_engine_run(&run->eng);
	run->stats.events = run->eng.events;
	return st;
}

void lbs_run_destroy(lbs_run *run)
{
	if (run->policy && run->policy_state)
		run->policy->destroy(run->policy_state);
	for (size_t i = 0; run->workers && i < run->n; i++)
		if (run->workers[i].rng)
			gsl_rng_free(run->workers[i].rng);
	free(run->workers);
	free(run->sources);
	free(run->net_source);
	free(run->cpu_util);
	free(run->mem_util);
	lbs_trace_table_destroy(run->traces);
	free(run->batch);
	free(run->compute_s);
	free(run->max_batch);
	free(run->device);
	lbs_engine_destroy(&run->eng);
	memset(run, 0, sizeof *run);
}
