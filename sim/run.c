/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "sim/run.h"
#include "sim/efficiency.h"

#include <assert.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "traces/cfs.h"
#include "traces/monitor.h"
#include "util/clock.h"
#include "util/rng.h"
#include "util/datapath.h"

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

/* A policy's plan must give integers within the memory caps summing to B
 * (or, for a policy that says it may, to at most B). */
static lbs_status check_plan(const lbs_run *run, lbs_error *err)
{
	int64_t sum = 0, B = run->sc->run.global_batch;
	for (size_t i = 0; i < run->n; i++) {
		int64_t b = run->batch[i];
		char what[512];
		if (b < 0 || b > run->max_batch[i]) {
			const lbs_group_spec *g = &run->sc->groups[run->workers[i].group];
			if (g->memory_cap && b > run->max_batch[i])
				/* out of memory: what the batch would need */
				snprintf(what, sizeof what, "gives it %lld samples, more than its memory cap of "
					 "%lld: out of memory, %lld samples of %.64s need %.4g GB (model state %.4g GB, "
					 "activations %.4g GB) of its %.4g GB", (long long)b,
					 (long long)run->max_batch[i], (long long)b, run->sc->model.name,
					 (g->state_bytes + (double)b * g->sample_bytes) / 1e9, g->state_bytes / 1e9,
					 (double)b * g->sample_bytes / 1e9, g->memory_bytes / 1e9);
			else
				snprintf(what, sizeof what,
					 "gives it %lld samples, outside 0..%lld (its memory cap, max_batch)",
					 (long long)b, (long long)run->max_batch[i]);
			return batch_error(run, i, what, err);
		}
		sum += b;
	}
	if (sum == B || (run->info.shrinks_global_batch && sum > 0 && sum < B))
		return LBS_OK;
	return lbs_error_set(err, LBS_EINTERNAL, "policy '%s' planned %lld samples for a global batch of %lld",
			     run->policy->name, (long long)sum, (long long)B);
}

static double future_finish(const void *ctx, size_t i, int64_t batch)
{
	const lbs_run *run = ctx;
	lbs_worker *w = &run->workers[i];
	double t0 = lbs_engine_now(&run->eng);
	return lbs_avail_peek(&w->avail, t0, lbs_cost_time_s(w->cost, batch) * run->noise[i],
			      run->iteration);
}

/* Worker i's noise factor for the coming iteration, from its own stream. */
static inline double draw_one(lbs_run *run, size_t i)
{
	const lbs_worker *w = &run->workers[i];
	if (w->noise->kind == LBS_NOISE_UNIFORM)
		return lbs_noise_uniform(w->noise, lbs_taus2_uniform(&run->taus[i]));
	return w->rng ? lbs_noise_draw(w->noise, w->rng) : 1.0;
}

/* The factor a run of b samples (a whole share, or one micro-batch) puts on
 * worker w's work for its size alone (doc/model.md, "Re-sizing"): 1 +
 * resize_cost if the worker's last run had another size, times 1 +
 * new_batch_cost if it has never run this size; its first run pays
 * neither (a measurement leaves the warm-up out), and a run of 0 samples
 * neither pays nor counts (nothing ran). Records the run, so it is called
 * once per run, when the run starts. */
static inline double resize_factor(lbs_worker *w, int64_t b)
{
	if (b <= 0)
		return 1.0;
	double f = w->ran > 0 && b != w->ran ? 1.0 + w->cost->resize_cost : 1.0;
	if (w->seen) {
		assert(b <= w->seen_top);
		uint64_t bit = UINT64_C(1) << (b & 63), *word = &w->seen[b >> 6];
		if (w->ran > 0 && !(*word & bit))
			f *= 1.0 + w->cost->new_batch_cost;
		*word |= bit;
	}
	w->ran = b;
	return f;
}

/* Draws every worker's noise factor for the coming iteration, from its own
 * stream: one draw per worker per iteration, whatever the policy (when no
 * policy sees the factors before the shares start, start_shares draws them
 * instead, the same draws). */
static void draw_noise(lbs_run *run)
{
	for (size_t i = 0; i < run->n; i++)
		run->noise[i] = draw_one(run, i);
}

static int64_t planned_sum(const lbs_run *run)
{
	int64_t sum = 0;
	for (size_t i = 0; i < run->n; i++)
		sum += run->batch[i];
	return sum;
}

static lbs_status plan(lbs_run *run, lbs_error *err)
{
	const int64_t ipe = run->sc->iterations_per_epoch;
	if (ipe && run->iteration > 0 && run->epoch_iteration == run->epoch_length) {
		run->epoch++;
		run->epoch_iteration = 0;
	}
	lbs_future future = { future_finish, run };
	/* Resource readings a real system could sample at the barrier: CPU and
	 * memory utilisation of each worker's machine (0 where its source has
	 * none). */
	for (size_t i = 0; run->n_readings && i < run->n; i++)
		for (size_t k = 0; k < run->n_readings; k++) {
			double now = lbs_engine_now(&run->eng);
			double v = run->monitors ? lbs_monitor_read(&run->monitors[i], &run->workers[i].avail, now,
								    run->iteration, (int)k)
						 : lbs_avail_reading(&run->workers[i].avail, now, run->iteration, (int)k);
			run->readings[i * run->n_readings + k] = isfinite(v) ? v : 0.0;
		}
	lbs_observation obs = {
		.iteration = run->iteration,
		.epoch = run->epoch,
		.epoch_start = ipe ? run->epoch_iteration == 0 : run->iteration == 0,
		.now_s = lbs_engine_now(&run->eng),
		.batch = run->iteration ? (run->info.micro_batch || run->drop ? run->done : run->batch) : NULL,
		.compute_s = run->iteration ? run->compute_s : NULL,
		.future = run->info.lookahead ? &future : NULL,
		.readings = run->n_readings ? run->readings : NULL,
	};
	bool changed = false;
	lbs_status st = LBS_OK;
	if (run->info.fixed && run->iteration > 0) {
		run->decision_s = 0; /* no decision: nothing to time */
	} else {
		double t0 = lbs_monotonic_s();
		st = run->policy->plan(run->policy_state, &obs, run->batch, &changed, err);
		run->decision_s = lbs_monotonic_s() - t0;
	}
	if (st == LBS_OK && run->policy->predictions)
		run->predicted = run->policy->predictions(run->policy_state);
	run->batch_changed = changed;
	if (st == LBS_OK && changed)
		st = check_plan(run, err);
	/* An epoch is floor(dataset / global batch) iterations of the batch
	 * planned at its start (DBS re-partitions the dataset so that every
	 * worker runs that many). */
	if (st == LBS_OK && ipe && obs.epoch_start) {
		run->epoch_length = run->sc->run.dataset_samples / planned_sum(run);
		for (size_t i = 0; i < run->n; i++)
			lbs_avail_epoch(&run->workers[i].avail, run->epoch, run->iteration, run->epoch_length);
	}
	return st;
}

/* Micro-batch mode: worker i, free at time t, starts its next micro-batch,
 * or asks the policy for samples to steal, or is done for the iteration. */
static lbs_status micro_next(lbs_run *run, size_t i, double t, lbs_engine *eng)
{
	lbs_worker *w = &run->workers[i];
	if (run->pending[i] == 0) {
		lbs_steal s;
		double t0 = lbs_monotonic_s();
		bool got = run->policy->steal &&
			   run->policy->steal(run->policy_state, i, run->pending, run->n, &s);
		run->decision_s += lbs_monotonic_s() - t0;
		if (got && s.victim < run->n && s.victim != i && s.samples > 0 &&
		    s.samples <= run->pending[s.victim] && s.latency_s >= 0) {
			run->pending[s.victim] -= s.samples;
			run->incoming[i] = s.samples;
			return lbs_engine_at(eng, t + s.latency_s, run->h_worker0 + (uint32_t)i);
		}
		run->compute_s[i] = t - run->iter_start_s;
		return LBS_OK;
	}
	int64_t m = run->pending[i] < run->info.micro_batch ? run->pending[i] : run->info.micro_batch;
	run->pending[i] -= m;
	run->running[i] = m;
	double work = lbs_cost_time_s(w->cost, m) * run->noise[i];
	if (run->resize) /* each micro-batch is a run of its own size */
		work *= resize_factor(w, m);
	double fin = lbs_avail_finish(&w->avail, t, work, run->iteration);
	return lbs_engine_at(eng, fin, run->h_worker0 + (uint32_t)i);
}

/* dropcompute: worker i computes its share from t0 in micro-batches, under
 * its noise factor f, and stops at t0 + the time limit: the micro-batches
 * it finished go in run->done[i] (the one it was running is lost; with
 * overrun = finish it runs to its end and counts, and none starts after
 * the limit); returns when it stopped (the last one's end, or the limit). */
static double drop_share(lbs_run *run, size_t i, double t0, double f)
{
	lbs_worker *w = &run->workers[i];
	const int64_t m = run->sc->sync.micro_batch, b = run->batch[i];
	const double limit = t0 + run->drop_limit_s;
	const bool finish = run->sc->sync.overrun == 1;
	double t = t0;
	int64_t done = 0;
	while (done < b && !(finish && t >= limit)) { /* finish: none starts at or after the limit */
		int64_t k = b - done < m ? b - done : m;
		double work = lbs_cost_time_s(w->cost, k) * f;
		if (run->resize) /* each micro-batch is a run of its own size */
			work *= resize_factor(w, k);
		/* The micro-batch that would end past the limit does not run to its
		 * end (overrun = drop): a stateful source (CPU credits, a quota) is
		 * advanced by the ones that finish only. */
		if (!finish && lbs_avail_peek(&w->avail, t, work, run->iteration) > limit) {
			t = limit;
			break;
		}
		double fin = lbs_avail_finish(&w->avail, t, work, run->iteration);
		t = fin;
		done += k;
		if (run->drop_measure > 0 && run->n_drop < run->cap_drop) {
			run->drop_end_s[run->n_drop] = fin - t0;
			run->drop_samples[run->n_drop++] = k;
		}
	}
	run->done[i] = done;
	return t;
}

static int by_end(const void *a, const void *b, void *ctx)
{
	const double *end = ctx;
	double x = end[*(const size_t *)a], y = end[*(const size_t *)b];
	return x < y ? -1 : x > y ? 1 : (*(const size_t *)a > *(const size_t *)b) - (*(const size_t *)a < *(const size_t *)b);
}

/* dropcompute's automatic limit, after its measured steps: among the times
 * at which a measured micro-batch ended, the tau that maximises the samples
 * finished by tau per second of a step of tau plus the aggregation's
 * nominal time, samples(tau) / (tau + T_agg) (Giladi et al. 2023 choose
 * the threshold that maximises the effective speed from the micro-batch
 * latencies); on a tie, the larger (fewer samples dropped). */
lbs_status lbs__run_choose_drop_limit(lbs_run *run, lbs_error *err)
{
	size_t *order = lbs_calloc(run->n_drop ? run->n_drop : 1, sizeof *order, err);
	if (!order)
		return LBS_EINTERNAL;
	for (size_t j = 0; j < run->n_drop; j++)
		order[j] = j;
	qsort_r(order, run->n_drop, sizeof *order, by_end, run->drop_end_s);
	const double agg = run->net.latency_s + run->net.transfer_s;
	double best = -1, cum = 0;
	for (size_t j = 0; j < run->n_drop; j++) {
		cum += (double)run->drop_samples[order[j]];
		double tau = run->drop_end_s[order[j]], speed = cum / (tau + agg);
		if (speed >= best) {
			best = speed;
			run->drop_limit_s = tau;
		}
	}
	free(order);
	return LBS_OK;
}

/* The pass that starts every worker's whole share at t0, group by group
 * (a group's workers are consecutive and share its cost and noise models):
 * the noise draw when draw_in_pass, the completion time, the least and most
 * compute time and the samples, in one loop; the latest completion into
 * *last. */
static lbs_status start_shares(lbs_run *run, double t0, double *last, lbs_engine *eng)
{
	const lbs_scenario *sc = run->sc;
	lbs_worker *w = run->workers;
	const int64_t *batch = run->batch;
	double *compute_s = run->compute_s, fin_max = *last, lo = INFINITY, hi = -INFINITY;
	int64_t samples = 0;
	size_t i = 0;
	for (size_t g = 0; g < sc->n_groups; g++) {
		const lbs_group_spec *gs = &sc->groups[g];
		const lbs_cost *cost = &gs->cost;
		const bool uniform = run->draw_in_pass && gs->noise.kind == LBS_NOISE_UNIFORM;
		const bool other = run->draw_in_pass && !uniform;
		const bool resize = cost->resize_cost > 0 || cost->new_batch_cost > 0;
		const size_t end = i + (size_t)gs->count;
		if (uniform && cost->ops == &lbs_cost_linear && !run->per_worker_events && !resize &&
		    !run->drop) {
			/* The common case with the group's constants hoisted: the
			 * same operations as below, in the same order. */
			const double one_low = 1.0 + gs->noise.low, span = gs->noise.high - gs->noise.low;
			const double c0 = cost->t0_s, c1 = cost->per_sample_s;
			for (; i < end; i++) {
				double f = one_low + span * lbs_taus2_uniform(&run->taus[i]);
				int64_t b = batch[i];
				double work = (b > 0 ? c0 + c1 * (double)b : 0.0) * f;
				double fin = lbs_avail_finish(&w[i].avail, t0, work, run->iteration);
				double c = fin - t0;
				compute_s[i] = c;
				fin_max = fin > fin_max ? fin : fin_max;
				lo = c < lo ? c : lo;
				hi = c > hi ? c : hi;
				samples += b;
			}
			continue;
		}
		for (; i < end; i++) {
			double f = uniform ? lbs_noise_uniform(&gs->noise, lbs_taus2_uniform(&run->taus[i]))
				 : other ? draw_one(run, i)
					 : run->noise[i];
			double fin;
			if (run->drop) {
				fin = drop_share(run, i, t0, f);
			} else {
				double work = lbs_cost_time_s(cost, batch[i]) * f;
				if (resize)
					work *= resize_factor(&w[i], batch[i]);
				/* A backup worker still on a dropped share starts when it is done. */
				double start = run->backup && run->ready_at[i] > t0 ? run->ready_at[i] : t0;
				fin = lbs_avail_finish(&w[i].avail, start, work, run->iteration);
			}
			if (run->backup) {
				run->ready_at[i] = fin;
				run->counted[i] = 0;
			}
			double c = fin - t0;
			compute_s[i] = c;
			fin_max = fin > fin_max ? fin : fin_max;
			lo = c < lo ? c : lo;
			hi = c > hi ? c : hi;
			samples += run->drop ? run->done[i] : batch[i];
			lbs_status st;
			if (run->per_worker_events && (st = lbs_engine_at(eng, fin, run->h_worker0 + (uint32_t)i)))
				return st;
		}
	}
	assert(i == run->n);
	*last = fin_max;
	run->pass_lo_s = lo;
	run->pass_hi_s = hi;
	run->pass_samples = samples;
	return LBS_OK;
}

/* Barrier released: every worker starts its share. The completion of worker
 * i is where the integral of its rate a(t)/T_i reaches 1, with T_i its cost
 * for its batch times this iteration's noise factor. */
static lbs_status on_begin(void *ctx, uint32_t arg, lbs_engine *eng)
{
	(void)arg;
	lbs_run *run = ctx;
	lbs_status st;
	if (run->iteration > 0) {
		if (!run->draw_in_pass)
			draw_noise(run);
		if ((st = plan(run, eng->err)) != LBS_OK)
			return st;
	}
	double t0 = lbs_engine_now(eng), last = t0;
	run->iter_start_s = t0;
	if (run->info.micro_batch) {
		run->remaining = run->n;
		for (size_t i = 0; i < run->n; i++) {
			run->pending[i] = run->batch[i];
			run->done[i] = run->running[i] = run->incoming[i] = 0;
		}
		for (size_t i = 0; i < run->n; i++) {
			if ((st = micro_next(run, i, t0, eng)) != LBS_OK)
				return st;
			if (!run->running[i] && !run->incoming[i])
				run->remaining--; /* nothing to do, nothing to steal */
		}
		return run->remaining ? LBS_OK : lbs_engine_at(eng, t0, run->h_compute_done);
	}
	if ((st = start_shares(run, t0, &last, eng)) != LBS_OK)
		return st;
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
	/* The latency part, then the transfer, which integrates the network's
	 * bandwidth factor as compute integrates availability (a constant
	 * factor of 1 gives now + latency + transfer). */
	double end = lbs_avail_finish(&run->net_avail, now + run->net.latency_s, run->net.transfer_s,
				      run->iteration);
	if (run->sc->network.exchange_on_workers && run->net.latency_s + run->net.transfer_s > 0)
		for (size_t i = 0; i < run->n; i++) {
			/* The same exchange as CPU work on the worker's own source,
			 * latency then transfer as the network's above, so that at
			 * availability 1 the two ends agree to the bit. Under a CPU
			 * quota the source carries on from the quota the compute
			 * left in the current period (traces/cfs.c): a worker that
			 * used it up answers in its next period. */
			lbs_avail *a = &run->workers[i].avail;
			double t = lbs_avail_finish(a, now, run->net.latency_s, run->iteration);
			t = lbs_avail_finish(a, t, run->net.transfer_s, run->iteration);
			end = t > end ? t : end;
		}
	return lbs_engine_at(eng, end, run->h_agg_done);
}

static lbs_status on_worker_event(void *ctx, uint32_t worker, lbs_engine *eng)
{
	lbs_run *run = ctx;
	if (run->info.micro_batch) {
		run->done[worker] += run->running[worker];
		run->running[worker] = 0;
		run->pending[worker] += run->incoming[worker];
		run->incoming[worker] = 0;
		lbs_status st = micro_next(run, worker, lbs_engine_now(eng), eng);
		if (st != LBS_OK || run->pending[worker] || run->running[worker] || run->incoming[worker])
			return st;
	} else if (run->backup) {
		if (run->stale[worker]) { /* a dropped share's end: nothing waits for it */
			run->stale[worker]--;
			return LBS_OK;
		}
		assert(lbs_engine_now(eng) - run->iter_start_s == run->compute_s[worker]);
		run->counted[worker] = 1;
		/* The first N - k done start the aggregation; the rest are dropped,
		 * their events to come ignored. */
		if (--run->remaining == run->n - run->contributors) {
			for (size_t i = 0; i < run->n; i++)
				if (!run->counted[i])
					run->stale[i]++;
			run->remaining = 0;
			return on_compute_done(ctx, 0, eng);
		}
		return LBS_OK;
	} else {
		/* compute_s was fin - start: the same difference, exactly (start +
		 * compute_s need not round back to fin once fin > 2 start). */
		assert(lbs_engine_now(eng) - run->iter_start_s == run->compute_s[worker]);
	}
	/* This worker is done: the last one starts the aggregation. */
	if (--run->remaining == 0)
		return on_compute_done(ctx, 0, eng);
	return LBS_OK;
}

void lbs_run_close_iteration(lbs_run *run, double start_s, double compute_end_s, double end_s,
			     const int64_t *processed, int64_t samples, double lo, double hi,
			     lbs_iteration_record *rec)
{
	if (run->policy->vars) /* after the iteration, so steals made in it count */
		run->n_vars = run->policy->vars(run->policy_state, run->vars, LBS_POLICY_VARS_MAX);
	*rec = (lbs_iteration_record){
		.iteration = run->iteration,
		.epoch = run->epoch,
		.start_s = start_s,
		.compute_end_s = compute_end_s,
		.end_s = end_s,
		.straggler_gap_s = hi - lo,
		.aggregation_s = end_s - compute_end_s,
		.decision_s = run->decision_s,
		.global_batch = samples,
		.batch_changed = run->batch_changed,
		.n_workers = run->n,
		.batch = processed,
		.planned = run->batch,
		.compute_s = run->compute_s,
		.vars = run->vars,
		.n_vars = run->n_vars,
		.predicted_speed = run->predicted,
		.readings = run->n_readings ? run->readings : NULL,
		.n_readings = run->n_readings,
	};
	lbs_run_stats *s = &run->stats;
	s->iterations++;
	s->samples += samples;
	const lbs_convergence_spec *cv = &run->sc->convergence;
	if (cv->model == LBS_CONV_GNS) {
		/* McCandlish et al. 2018: S(B) = S_min (1 + B_noise / B) steps at a
		 * constant batch B, so a step of batch B makes 1 / S(B) of the way. */
		s->progress += lbs_gns_step_progress(cv, samples, run->step_weight);
		if (!s->steps_to_target && !run->target_hidden && s->progress >= 1.0 - 1e-12) {
			s->steps_to_target = s->iterations;
			s->samples_to_target = s->samples;
			s->time_to_target_s = end_s;
		}
	}
	s->sim_time_s = end_s > s->sim_time_s ? end_s : s->sim_time_s; /* asp: updates overlap */
	s->sum_iteration_s += end_s - start_s;
	s->sum_compute_s += compute_end_s - start_s;
	s->sum_aggregation_s += rec->aggregation_s;
	s->sum_gap_s += rec->straggler_gap_s;
	s->sum_decision_s += rec->decision_s;
}

static lbs_status on_agg_done(void *ctx, uint32_t arg, lbs_engine *eng)
{
	(void)arg;
	lbs_run *run = ctx;
	double now = lbs_engine_now(eng);
	double lo = run->pass_lo_s, hi = run->pass_hi_s;
	int64_t samples = run->pass_samples;
	const int64_t *processed = run->info.micro_batch || run->drop ? run->done : run->batch;
	for (size_t i = 0; run->drop && i < run->n; i++)
		run->stats.dropped_samples += run->batch[i] - run->done[i];
	if (run->drop_measure > 0 && --run->drop_measure == 0) {
		lbs_status st = lbs__run_choose_drop_limit(run, eng->err);
		if (st != LBS_OK)
			return st;
	}
	if (run->backup) { /* the step's samples and gaps: its contributors' */
		samples = 0;
		lo = INFINITY;
		hi = -INFINITY;
		for (size_t i = 0; i < run->n; i++) {
			run->contributed[i] = run->counted[i] ? run->batch[i] : 0;
			samples += run->contributed[i];
			if (!run->counted[i]) {
				run->stats.dropped_samples += run->batch[i];
				continue;
			}
			double c = run->compute_s[i];
			lo = c < lo ? c : lo;
			hi = c > hi ? c : hi;
		}
		processed = run->contributed;
	}
	if (run->info.micro_batch) { /* compute times and samples came one by one */
		lo = hi = run->compute_s[0];
		for (size_t i = 1; i < run->n; i++) {
			double c = run->compute_s[i];
			lo = c < lo ? c : lo;
			hi = c > hi ? c : hi;
		}
		samples = 0;
		for (size_t i = 0; i < run->n; i++)
			samples += processed[i];
	}
	lbs_iteration_record rec;
	lbs_run_close_iteration(run, run->iter_start_s, run->compute_end_s, now, processed, samples, lo, hi, &rec);
	if (run->observer) {
		lbs_status st = run->observer(run->observer_ctx, &rec, eng->err);
		if (st != LBS_OK)
			return st;
	}
	if (run->interrupt && *run->interrupt)
		return lbs_error_set(eng->err, LBS_EINTR, "interrupted after %lld iterations",
				     (long long)run->stats.iterations);
	run->iteration++;
	run->epoch_iteration++;
	bool finished = run->sc->iterations_per_epoch
				? run->epoch_iteration == run->epoch_length && run->epoch + 1 == run->sc->run.epochs
				: run->iteration == run->sc->iterations;
	if (run->sc->convergence.stop && run->stats.steps_to_target)
		finished = true;
	return finished ? LBS_OK : lbs_engine_at(eng, now, run->h_begin);
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
	lbs_path_folder(sc->path, base, sizeof base);
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
			.loss = gs->timeshare_refill_s / gs->timeshare_slice_s,
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
	return LBS_OK;
}

static lbs_status key_error(const lbs_scenario *sc, const char *section, const char *key,
			    const char *msg, lbs_error *err);

static lbs_status build_workers(lbs_run *run, lbs_error *err)
{
	const lbs_scenario *sc = run->sc;
	lbs_status st = bind_traces(run, sc, err);
	if (st != LBS_OK)
		return st;
	size_t i = 0, traced = 0;
	int64_t cap_sum = 0;
	for (size_t g = 0; g < sc->n_groups && !run->monitors; g++)
		if (!lbs_monitor_exact(&sc->groups[g].readings) &&
		    !(run->monitors = lbs_calloc(run->n, sizeof *run->monitors, err)))
			return LBS_EINTERNAL;
	for (size_t g = 0; g < sc->n_groups; g++) {
		const lbs_group_spec *gs = &sc->groups[g];
		if (gs->trace.format && lbs_monitor_horizon_s(&gs->readings) > 0 &&
		    run->sources[traced].kind == LBS_INDEX_ITERATION) {
			char section[LBS_NAME_MAX + 16];
			snprintf(section, sizeof section, "workers.%s", gs->name);
			return key_error(sc, section, gs->readings.lag_s > 0 ? "readings_lag" : "readings_period",
					 "the group's trace is indexed by iteration: a lag or sampling period in "
					 "seconds applies only to readings indexed by time", err);
		}
		const uint64_t noise_id = lbs_rng_stream_id("noise", gs->name);
		for (int64_t k = 0; k < gs->count; k++, i++) {
			lbs_worker *w = &run->workers[i];
			w->cost = &gs->cost;
			w->noise = &gs->noise;
			w->group = (uint32_t)g;
			w->avail = gs->trace.format ? lbs_source_avail(&run->sources[traced++])
						    : (lbs_avail){ NULL, NULL,
								   lbs_avail_timeshare(gs->availability,
										       gs->timeshare_refill_s /
											       gs->timeshare_slice_s) };
			if (gs->cpu_quota_period_s > 0) {
				/* The periods' phase: the worker's own stream ("cfs", group, index). */
				gsl_rng *r = lbs_rng_stream((uint64_t)sc->run.seed, "cfs", gs->name, (uint64_t)k, err);
				if (!r)
					return LBS_EINTERNAL;
				double phase = gsl_rng_uniform(r) * gs->cpu_quota_period_s;
				gsl_rng_free(r);
				if ((st = lbs_cfs_create(w->avail, gs->cpu_quota_period_s, phase, gs->cpu_quota_tick_s,
							   &w->avail, err)) != LBS_OK)
					return st;
			}
			if ((st = lbs_gen_attach_worker(sc, g, k, &w->avail, err)) != LBS_OK)
				return st;
			if (run->monitors)
				run->monitors[i] = (lbs_monitor){
					gs->readings, lbs_rng_stream_seed((uint64_t)sc->run.seed, "readings", gs->name,
									  (uint64_t)k) };
			/* The stream's identity is (group, index in group): adding a
			 * worker anywhere leaves every other worker's draws alone. */
			if (gs->noise.kind == LBS_NOISE_UNIFORM)
				lbs_taus2_seed(&run->taus[i], lbs_rng_seed_of((uint64_t)sc->run.seed, noise_id, (uint64_t)k));
			else if (gs->noise.kind != LBS_NOISE_NONE &&
				 !(w->rng = lbs_rng_stream((uint64_t)sc->run.seed, "noise", gs->name, (uint64_t)k, err)))
				return LBS_EINTERNAL;
			run->max_batch[i] = gs->cost.max_batch;
			run->device[i] = gs->device;
			cap_sum = cap_sum > INT64_MAX - gs->cost.max_batch ? INT64_MAX : cap_sum + gs->cost.max_batch;
		}
	}
	if (cap_sum < sc->run.global_batch) {
		lbs_origin at = lbs_scenario_origin(sc, "run", "global_batch");
		char label[LBS_ERROR_MAX / 2];
		lbs_origin_format(&at, "run", "global_batch", label, sizeof label);
		return lbs_error_set(err, LBS_EINPUT,
				     "%s: %lld samples do not fit in the workers' memory caps "
				     "(max_batch of all workers sums to %lld)",
				     label, (long long)sc->run.global_batch, (long long)cap_sum);
	}
	return LBS_OK;
}

/* "FILE:LINE: [SECTION] KEY: msg" at where the scenario gave the key (the
 * section's start, or the file, for a default). */
static lbs_status key_error(const lbs_scenario *sc, const char *section, const char *key,
			    const char *msg, lbs_error *err)
{
	char label[LBS_ERROR_MAX / 2];
	lbs_origin at = lbs_scenario_origin(sc, section, key);
	lbs_origin_format(&at, section, key, label, sizeof label);
	return lbs_error_set(err, LBS_EINPUT, "%s: %s", label, msg);
}

/* Bounds on what the scenario's extreme values make of one iteration, found
 * before anything runs: no time may leave the range where doubles keep the
 * events in order (non-finite, or more than LBS_MAX_SIM_TIME_S over the
 * run), and no iteration may take more than LBS_MAX_ITERATION_EVENTS events
 * (micro-batches, phases of a background job), which no run could finish.
 * The slowest iteration is bounded by every worker computing the whole
 * global batch (or its cap) at its constant availability, with the highest
 * noise (uniform: its upper end; lognormal: six standard deviations), then
 * the aggregation at nominal bandwidth; the events by the equal split with
 * the same noise. Sources that vary over time are bounded as they run
 * (lbs_engine_at refuses a time past the limit). */
static lbs_status check_bounds(const lbs_run *run, lbs_error *err)
{
	const lbs_scenario *sc = run->sc;
	const int64_t B = sc->run.global_batch;
	char msg[LBS_ERROR_MAX / 2], section[LBS_NAME_MAX + 16];
	double slowest = 0, split = 0;
	const int64_t share = (B + (int64_t)run->n - 1) / (int64_t)run->n;
	for (size_t g = 0; g < sc->n_groups; g++) {
		const lbs_group_spec *gs = &sc->groups[g];
		/* Lognormal noise has no upper end: its factor at six standard
		 * deviations, exp(6 sigma - sigma^2 / 2), exceeded once in 1e9
		 * draws, bounds it here. */
		double noise = gs->noise.kind == LBS_NOISE_UNIFORM     ? 1 + gs->noise.high
			       : gs->noise.kind == LBS_NOISE_LOGNORMAL ? exp(6 * gs->noise.sigma -
									     0.5 * gs->noise.sigma * gs->noise.sigma)
								       : 1;
		noise *= (1 + gs->cost.resize_cost) * (1 + gs->cost.new_batch_cost);
		int64_t b = B < gs->cost.max_batch ? B : gs->cost.max_batch;
		int64_t s = share < b ? share : b;
		double t = lbs_cost_time_s(&gs->cost, b) * noise / gs->availability;
		snprintf(section, sizeof section, "workers.%s", gs->name);
		if (!(t <= LBS_MAX_SIM_TIME_S)) {
			lbs_fmt(msg, sizeof msg, "%g s of work (a batch of %lld) at availability %g takes %g s, "
				"more than the limit of %g s of simulated time", lbs_cost_time_s(&gs->cost, b) * noise,
				(long long)b, gs->availability, t, LBS_MAX_SIM_TIME_S);
			return key_error(sc, section, gs->availability < 1 ? "availability" : "per_sample", msg, err);
		}
		slowest = t > slowest ? t : slowest;
		t = lbs_cost_time_s(&gs->cost, s) * noise / gs->availability;
		split = t > split ? t : split;
	}
	double agg = run->net.latency_s + run->net.transfer_s;
	/* With the exchange on the workers, the slowest worker's constant
	 * availability stretches it (at least once the network's nominal). */
	for (size_t g = 0; sc->network.exchange_on_workers && g < sc->n_groups; g++) {
		double t = (run->net.latency_s + run->net.transfer_s) / sc->groups[g].availability;
		agg = t > agg ? t : agg;
	}
	if (!(agg <= LBS_MAX_SIM_TIME_S)) {
		lbs_fmt(msg, sizeof msg, "a gradient of %g bytes at this bandwidth takes %g s to aggregate, "
			"more than the limit of %g s of simulated time", sc->model.gradient_bytes, agg,
			LBS_MAX_SIM_TIME_S);
		return key_error(sc, "network", "bandwidth", msg, err);
	}
	double total = (double)sc->iterations * (slowest + agg);
	if (!(total <= LBS_MAX_SIM_TIME_S)) {
		lbs_fmt(msg, sizeof msg, "%lld iterations of up to %g s each could take %g s, more than the "
			"limit of %g s of simulated time", (long long)sc->iterations, slowest + agg, total,
			LBS_MAX_SIM_TIME_S);
		return key_error(sc, "run", sc->iterations_per_epoch ? "epochs" : "iterations", msg, err);
	}
	if (sc->sync.mode == LBS_SYNC_DROPCOMPUTE) {
		double events = (double)B / (double)sc->sync.micro_batch + (double)run->n;
		if (events > LBS_MAX_ITERATION_EVENTS) {
			lbs_fmt(msg, sizeof msg, "%.3g micro-batches an iteration, more than the limit of %.3g",
				events, LBS_MAX_ITERATION_EVENTS);
			return key_error(sc, "sync", "micro_batch", msg, err);
		}
	}
	if (run->info.micro_batch) {
		double events = (double)B / (double)run->info.micro_batch + (double)run->n;
		if (events > LBS_MAX_ITERATION_EVENTS) {
			lbs_fmt(msg, sizeof msg, "policy '%s' computes it in micro-batches of %lld samples: "
				"%.3g events an iteration, more than the limit of %.3g", run->policy->name,
				(long long)run->info.micro_batch, events, LBS_MAX_ITERATION_EVENTS);
			return key_error(sc, "run", "global_batch", msg, err);
		}
	}
	for (size_t i = 0; i < sc->n_generators; i++) {
		const lbs_gen_spec *g = &sc->generators[i];
		if (g->kind != LBS_GEN_BACKGROUND)
			continue;
		double workers = 0;
		for (size_t k = 0; k < g->n_groups; k++)
			workers += (double)sc->groups[g->groups[k]].count;
		/* Each worker's job is drawn through the whole iteration, the
		 * aggregation too: about 2T/(on + off) phases in T, where
		 * a(t) >= 1 - load makes the compute last at most split / (1 - load). */
		double T = split / (1 - g->load) + agg, cycle = g->on_mean_s + g->off_mean_s;
		double events = workers * 2 * T / cycle;
		/* A policy that looks ahead (the oracle) replays each worker's
		 * job for every probe: a bisection of 64 steps over a search of
		 * log2(B) probes, each as far as a whole batch takes. */
		if (run->info.lookahead)
			events += workers * 2 * (slowest / (1 - g->load)) / cycle * 64 * (log2((double)B) + 1);
		if (events > LBS_MAX_ITERATION_EVENTS) {
			snprintf(section, sizeof section, "generator.%s", g->name);
			lbs_fmt(msg, sizeof msg, "on and off phases of %g s and %g s on average in iterations "
				"of about %g s: %.3g phases an iteration over %g workers%s, more than the limit of "
				"%.3g events", g->on_mean_s, g->off_mean_s, T, events, workers,
				run->info.lookahead ? " (drawn again for each of the policy's look-ahead probes)" : "",
				LBS_MAX_ITERATION_EVENTS);
			return key_error(sc, section, g->on_mean_s <= g->off_mean_s ? "on_mean" : "off_mean", msg, err);
		}
	}
	return LBS_OK;
}

/* The re-sizing state (doc/model.md, "Re-sizing"): run->resize, and for
 * each worker of a group with new_batch_cost one bit per batch it can run,
 * allocated once: up to min(max_batch, global batch), or with micro-batches
 * min(micro-batch, global batch) (stolen samples can take a share past its
 * cap, never a micro-batch past its size). At most LBS_MAX_SEEN_BYTES over
 * all workers; more is refused. */
static lbs_status setup_resize(lbs_run *run, lbs_error *err)
{
	const lbs_scenario *sc = run->sc;
	const int64_t B = sc->run.global_batch;
	double words = 0, most = 0;
	size_t worst = 0;
	for (size_t g = 0; g < sc->n_groups; g++) {
		const lbs_group_spec *gs = &sc->groups[g];
		run->resize |= gs->cost.resize_cost > 0 || gs->cost.new_batch_cost > 0;
		if (!(gs->cost.new_batch_cost > 0))
			continue;
		int64_t top = run->info.micro_batch ? run->info.micro_batch : gs->cost.max_batch;
		double w = (double)gs->count * (double)((top < B ? top : B) / 64 + 1);
		words += w;
		if (w > most) {
			most = w;
			worst = g;
		}
	}
	if (words * 8 > LBS_MAX_SEEN_BYTES) {
		char section[LBS_NAME_MAX + 16], msg[LBS_ERROR_MAX / 2];
		lbs_fmt(section, sizeof section, "workers.%s", sc->groups[worst].name);
		lbs_fmt(msg, sizeof msg, "remembering the batches each worker has run takes %.4g MiB (a bit "
			"per batch up to min(max_batch, global_batch) per worker), more than the limit of %.4g "
			"MiB: set max_batch, or fewer workers", words * 8 / 1048576, LBS_MAX_SEEN_BYTES / 1048576);
		return key_error(sc, section, "new_batch_cost", msg, err);
	}
	if (words > 0 && !(run->seen_bits = lbs_calloc((size_t)words, sizeof *run->seen_bits, err)))
		return LBS_EINTERNAL;
	size_t at = 0;
	for (size_t i = 0; i < run->n; i++) {
		lbs_worker *w = &run->workers[i];
		const lbs_group_spec *gs = &sc->groups[w->group];
		if (!(gs->cost.new_batch_cost > 0))
			continue;
		int64_t top = run->info.micro_batch ? run->info.micro_batch : gs->cost.max_batch;
		w->seen_top = top < B ? top : B;
		w->seen = run->seen_bits + at;
		at += (size_t)(w->seen_top / 64 + 1);
	}
	return LBS_OK;
}

/* dropcompute: its limit, or the measurement that will choose it (at most
 * LBS_MAX_SEEN_BYTES of micro-batch ends; more is refused). */
static lbs_status setup_drop(lbs_run *run, lbs_error *err)
{
	const lbs_sync_spec *sy = &run->sc->sync;
	run->drop = true;
	run->drop_limit_s = sy->time_limit_s;
	if (sy->time_limit_s > 0)
		return LBS_OK;
	run->drop_limit_s = INFINITY;
	run->drop_measure = sy->time_limit_steps;
	const int64_t B = run->sc->run.global_batch;
	double per_step = (double)(B / sy->micro_batch + 1) + (double)run->n;
	double bytes = per_step * (double)sy->time_limit_steps * 16;
	if (bytes > LBS_MAX_SEEN_BYTES) {
		char msg[LBS_ERROR_MAX / 2];
		lbs_fmt(msg, sizeof msg, "measuring %lld steps of up to %.4g micro-batches takes %.4g MiB, more "
			"than the limit of %.4g MiB: fewer steps, or larger micro-batches",
			(long long)sy->time_limit_steps, per_step, bytes / 1048576, LBS_MAX_SEEN_BYTES / 1048576);
		return key_error(run->sc, "sync", "time_limit_steps", msg, err);
	}
	run->cap_drop = (size_t)(per_step * (double)sy->time_limit_steps);
	if (!(run->drop_end_s = lbs_calloc(run->cap_drop, sizeof *run->drop_end_s, err)) ||
	    !(run->drop_samples = lbs_calloc(run->cap_drop, sizeof *run->drop_samples, err)))
		return LBS_EINTERNAL;
	return LBS_OK;
}

static void section_options(const void *ctx, const char *section, const lbs_kv **kv, size_t *n)
{
	lbs_scenario_section_options(ctx, section, kv, n);
}

static const lbs_predictor_ops *find_predictor(const void *ctx, const char *name)
{
	return lbs_scenario_predictor(ctx, name);
}

static lbs_status create(lbs_run *run, const lbs_scenario *sc, const char *policy, lbs_error *err)
{
	run->sc = sc;
	run->n = (size_t)sc->n_workers;
	/* Workers and gradient size are fixed for the run, so is aggregation at
	 * nominal bandwidth. */
	run->net = lbs_network_time(&sc->network, sc->n_workers, sc->model.gradient_bytes);
	run->net_avail = (lbs_avail){ NULL, NULL, 1.0 };
	lbs_status st = lbs_engine_init(&run->eng, run->n + 16, err);
	if (st != LBS_OK)
		return st;
	if (!sc->network_trace.format && (st = lbs_gen_attach_network(sc, &run->net_avail, err)) != LBS_OK)
		return st;
	if (!(run->workers = lbs_calloc(run->n, sizeof *run->workers, err)) ||
	    !(run->batch = lbs_calloc(run->n, sizeof *run->batch, err)) ||
	    !(run->done = lbs_calloc(run->n, sizeof *run->done, err)) ||
	    !(run->compute_s = lbs_calloc(run->n, sizeof *run->compute_s, err)) ||
	    !(run->noise = lbs_calloc(run->n, sizeof *run->noise, err)) ||
	    !(run->taus = lbs_calloc(run->n, sizeof *run->taus, err)) ||
	    !(run->max_batch = lbs_calloc(run->n, sizeof *run->max_batch, err)) ||
	    !(run->device = lbs_calloc(run->n, sizeof *run->device, err)))
		return LBS_EINTERNAL;
	if ((st = build_workers(run, err)) != LBS_OK)
		return st;

	/* Readings exist when some worker's source reports one at the start
	 * (a trace without utilisation columns reports none). */
	for (size_t i = 0; i < run->n && !run->n_readings; i++)
		for (int k = LBS_READING_CPU_UTIL; k <= LBS_READING_MEM_UTIL; k++)
			if (isfinite(lbs_avail_reading(&run->workers[i].avail, 0.0, 0, k)))
				run->n_readings = 2; /* LBS_READING_CPU_UTIL, LBS_READING_MEM_UTIL */
	if (run->n_readings && !(run->readings = lbs_calloc(run->n * run->n_readings, sizeof(double), err)))
		return LBS_EINTERNAL;

	const char *pname = policy ? policy : sc->policy.name;
	lbs_origin at = { "--policy", 0 };
	if ((st = lbs_scenario_check_policy(sc, pname, policy ? &at : &sc->policy.at, err)) != LBS_OK)
		return st;
	const lbs_policy_ops *ops = lbs_scenario_policy(sc, pname);
	lbs_policy_env env = {
		.section_options = section_options,
		.section_ctx = sc,
		.find_predictor = find_predictor,
		.n_workers = run->n,
		.global_batch = sc->run.global_batch,
		.max_batch = run->max_batch,
		.device = run->device,
		.iterations_per_epoch = sc->iterations_per_epoch,
		.seed = (uint64_t)sc->run.seed,
		.n_readings = run->n_readings,
	};
	const lbs_kv *options;
	size_t n_options;
	char section[LBS_VALUE_MAX + 8];
	lbs_fmt(section, sizeof section, "policy.%s", pname);
	lbs_scenario_section_options(sc, section, &options, &n_options);
	if ((st = ops->create(&env, options, n_options, &run->policy_state, &run->info, err)) != LBS_OK)
		return st;
	run->policy = ops;
	/* The oracle's bisection needs times that grow with the batch; a
	 * profile's measured times need not. */
	for (size_t g = 0; run->info.lookahead && g < sc->n_groups; g++)
		if (sc->groups[g].cost.ops == &lbs_cost_measured) {
			char sec[LBS_NAME_MAX + 16], msg[LBS_ERROR_MAX / 2];
			lbs_fmt(sec, sizeof sec, "workers.%s", sc->groups[g].name);
			lbs_fmt(msg, sizeof msg, "`measured` times need not grow with the batch, which policy '%s' "
				"looks ahead by: use `fit`", pname);
			return key_error(sc, sec, "profile_cost", msg, err);
		}
	/* Nor does a time that depends on the batch run before. */
	for (size_t g = 0; run->info.lookahead && g < sc->n_groups; g++) {
		const lbs_cost *c = &sc->groups[g].cost;
		if (c->resize_cost > 0 || c->new_batch_cost > 0) {
			char sec[LBS_NAME_MAX + 16], msg[LBS_ERROR_MAX / 2];
			lbs_fmt(sec, sizeof sec, "workers.%s", sc->groups[g].name);
			lbs_fmt(msg, sizeof msg, "a re-sizing cost makes a worker's time depend on the batch it "
				"ran before, not grow with the batch, which policy '%s' looks ahead by: set it to 0",
				pname);
			return key_error(sc, sec, c->resize_cost > 0 ? "resize_cost" : "new_batch_cost", msg, err);
		}
	}
	if ((st = setup_resize(run, err)) != LBS_OK)
		return st;

	/* Backup workers: the step waits for the first N - k. */
	if (sc->sync.mode == LBS_SYNC_BACKUP) {
		if (run->info.micro_batch)
			return key_error(sc, "sync", "mode", "backup workers drop whole shares; the policy hands "
					 "out micro-batches (work stealing): use another policy", err);
		if (sc->network.ops == &lbs_network_ring)
			return key_error(sc, "sync", "mode", "backup workers need a parameter server (topology = "
					 "ps) or none: a ring all-reduce needs every rank's gradient", err);
		if (sc->sync.backup_workers >= sc->n_workers) {
			char msg[160];
			snprintf(msg, sizeof msg, "%lld of %lld workers: fewer than the workers, so that some "
				 "gradient counts", (long long)sc->sync.backup_workers, (long long)sc->n_workers);
			return key_error(sc, "sync", "backup_workers", msg, err);
		}
		run->backup = true;
		run->contributors = run->n - (size_t)sc->sync.backup_workers;
		if (!(run->counted = lbs_calloc(run->n, sizeof *run->counted, err)) ||
		    !(run->ready_at = lbs_calloc(run->n, sizeof *run->ready_at, err)) ||
		    !(run->stale = lbs_calloc(run->n, sizeof *run->stale, err)) ||
		    !(run->contributed = lbs_calloc(run->n, sizeof *run->contributed, err)))
			return LBS_EINTERNAL;
	}
	/* Worker completions are events when something observes them within the
	 * iteration (micro-batches, steals and backup workers), or when asked
	 * for checking. */
	if ((st = lbs_sync_setup(run, err)) != LBS_OK)
		return st;
	if (sc->sync.mode == LBS_SYNC_DROPCOMPUTE && (st = setup_drop(run, err)) != LBS_OK)
		return st;
	run->step_weight = 1.0;
	run->per_worker_events = !run->stepper && (sc->run.worker_events == LBS_EVENTS_ALWAYS ||
						   run->info.micro_batch || run->backup);
	if (run->info.micro_batch &&
	    (!(run->pending = lbs_calloc(run->n, sizeof *run->pending, err)) ||
	     !(run->running = lbs_calloc(run->n, sizeof *run->running, err)) ||
	     !(run->incoming = lbs_calloc(run->n, sizeof *run->incoming, err))))
		return LBS_EINTERNAL;
	if ((!run->stepper && (st = lbs_engine_register(&run->eng, on_begin, run, 0, &run->h_begin))) ||
	    (st = lbs_engine_register(&run->eng, on_compute_done, run, 0, &run->h_compute_done)) ||
	    (st = lbs_engine_register(&run->eng, on_agg_done, run, 0, &run->h_agg_done)))
		return st;
	for (size_t k = 0; run->per_worker_events && k < run->n; k++) {
		uint32_t h;
		if ((st = lbs_engine_register(&run->eng, on_worker_event, run, (uint32_t)k, &h)))
			return st;
		if (k == 0)
			run->h_worker0 = h;
	}
	if ((st = check_bounds(run, err)) != LBS_OK)
		return st;
	/* Only the oracle's look-ahead and micro-batches read the factors
	 * between the draw and the start of the shares. */
	run->draw_in_pass = !run->info.lookahead && !run->info.micro_batch;
	if (!run->draw_in_pass)
		draw_noise(run);
	return plan(run, err);
}

double lbs__run_noise(lbs_run *run, size_t i)
{
	return draw_one(run, i);
}

double lbs__run_resize(lbs_worker *w, int64_t b)
{
	return resize_factor(w, b);
}

lbs_status lbs__run_plan(lbs_run *run, lbs_error *err)
{
	return plan(run, err);
}

lbs_status lbs__run_key_error(const lbs_scenario *sc, const char *section, const char *key, const char *msg,
			      lbs_error *err)
{
	return key_error(sc, section, key, msg, err);
}

lbs_status lbs_run_create(lbs_run *run, const lbs_scenario *sc, const char *policy, lbs_error *err)
{
	memset(run, 0, sizeof *run);
	lbs_status st = create(run, sc, policy, err);
	if (st != LBS_OK)
		lbs_run_destroy(run);
	return st;
}

lbs_status lbs_run_execute(lbs_run *run, lbs_iteration_fn observer, void *ctx,
			   const volatile sig_atomic_t *interrupt, lbs_error *err)
{
	run->observer = observer;
	run->observer_ctx = ctx;
	run->interrupt = interrupt;
	run->eng.err = err;
	run->eng.interrupt = interrupt;
	lbs_status st = lbs_engine_at(&run->eng, 0.0, run->h_begin);
	if (st == LBS_OK)
		st = lbs_engine_run(&run->eng);
	if (st == LBS_EINPUT) /* a time past the limit (check_bounds cannot see traces and generators) */
		lbs_error_prefix(err, "%s: iteration %lld", run->sc->path, (long long)run->iteration);
	run->stats.events = run->eng.events;
	return st;
}

void lbs_run_destroy(lbs_run *run)
{
	if (run->policy && run->policy_state)
		run->policy->destroy(run->policy_state);
	for (size_t i = 0; run->workers && i < run->n; i++) {
		if (run->workers[i].rng)
			gsl_rng_free(run->workers[i].rng);
		lbs_avail_destroy(&run->workers[i].avail);
	}
	if (!run->net_source)
		lbs_avail_destroy(&run->net_avail);
	free(run->sources);
	free(run->net_source);
	free(run->loss_step);
	free(run->loss);
	lbs_trace_table_destroy(run->traces);
	free(run->workers);
	free(run->batch);
	free(run->done);
	free(run->compute_s);
	free(run->noise);
	free(run->taus);
	free(run->max_batch);
	free(run->device);
	free(run->seen_bits);
	free(run->pending);
	free(run->running);
	free(run->incoming);
	free(run->counted);
	free(run->ready_at);
	free(run->stale);
	free(run->contributed);
	free(run->staleness_counts);
	free(run->drop_end_s);
	free(run->drop_samples);
	lbs_sync_destroy(run);
	free(run->readings);
	free(run->monitors);
	lbs_engine_destroy(&run->eng);
	memset(run, 0, sizeof *run);
}
