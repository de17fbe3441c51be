/* SPDX-License-Identifier: GPL-3.0-or-later */
/* One simulated training run: the cluster built from a scenario, the policy,
 * and the bulk-synchronous iteration state machine on the event engine.
 *
 * Iteration k: the policy sets the batch sizes at the barrier -> every worker
 * computes (progress at rate a(t)/T(b), T drawn with the worker's noise) ->
 * aggregation starts when the last worker finishes -> iteration k+1 starts
 * when it ends. Each finished iteration is handed to an observer (the
 * recorder), which is how results leave the run. */
#ifndef LBS_RUN_H
#define LBS_RUN_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "models/policy.h"
#include "sim/engine.h"
#include "sim/scenario.h"
#include "traces/avail.h"
#include "traces/binding.h"
#include "traces/source.h"

typedef struct lbs_worker {
	const lbs_cost *cost;
	const lbs_noise *noise;
	gsl_rng *rng; /* the worker's noise stream; NULL without noise */
	lbs_avail avail;
	uint32_t group;
} lbs_worker;

/* A finished iteration, as the observer sees it. */
typedef struct lbs_iteration_record {
	int64_t iteration;
	int64_t epoch;
	double start_s;         /* barrier released */
	double compute_end_s;   /* last worker finished computing */
	double end_s;           /* aggregation finished */
	double straggler_gap_s; /* slowest minus fastest worker's compute time */
	double aggregation_s;
	double decision_s;      /* real time the policy took to plan this iteration */
	size_t n_workers;
	const int64_t *batch;     /* samples per worker */
	const double *compute_s;  /* compute time per worker; wait = compute_end - start - compute */
} lbs_iteration_record;

typedef lbs_status (*lbs_iteration_fn)(void *ctx, const lbs_iteration_record *rec, lbs_error *err);

typedef struct lbs_run_stats {
	int64_t iterations;
	double sim_time_s;
	double sum_iteration_s, sum_compute_s, sum_aggregation_s, sum_gap_s, sum_decision_s;
	uint64_t events;
} lbs_run_stats;

typedef struct lbs_run {
	const lbs_scenario *sc;
	size_t n;
	lbs_worker *workers;
	int64_t *batch;
	double *compute_s;
	int64_t *max_batch;
	int *device;
	double gradient_bytes;
	lbs_net_time net; /* aggregation time at nominal bandwidth */
	lbs_avail net_avail; /* the network's bandwidth factor over time (constant 1 without a trace) */
	lbs_source *net_source; /* its replay, with a [network] trace */
	const lbs_policy_ops *policy;
	void *policy_state;
	lbs_trace_table *traces;  /* every trace of the run, each loaded once; NULL: none */
	lbs_source *sources;      /* the traced workers' replays, group by group */
	double *cpu_util, *mem_util; /* readings for the policy (NULL: no trace has them) */
	lbs_engine eng;
	uint32_t h_begin, h_compute_done, h_agg_done, h_worker0;
	bool per_worker_events;
	int64_t iteration;
	double iter_start_s, compute_end_s, decision_s;
	size_t remaining; /* workers still computing (per-worker events) */
	lbs_iteration_fn observer;
	void *observer_ctx;
	const volatile sig_atomic_t *interrupt; /* checked between iterations */
	lbs_run_stats stats;
} lbs_run;

/* Builds the cluster, random streams and policy, and plans iteration 0, so
 * that every input problem (a batch above a memory cap, a bad policy option)
 * is reported before anything runs or is written. */
lbs_status lbs_run_create(lbs_run *run, const lbs_scenario *sc, lbs_error *err);

/* Simulates the whole run, calling observer(ctx, record) once per iteration.
 * Returns LBS_EINTR if *interrupt became non-zero. */
lbs_status lbs_run_execute(lbs_run *run, lbs_iteration_fn observer, void *ctx,
			   const volatile sig_atomic_t *interrupt, lbs_error *err);

void lbs_run_destroy(lbs_run *run);

#endif
