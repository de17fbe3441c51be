/* SPDX-License-Identifier: GPL-3.0-or-later */
/* One simulated training run: the cluster built from a scenario, the policy,
 * and the bulk-synchronous iteration state machine on the event engine.
 *
 * Iteration k: each worker's noise for k is drawn -> the policy sets the
 * batch sizes at the barrier -> every worker computes (progress at rate
 * a(t)/T(b)) -> aggregation starts when the last worker finishes ->
 * iteration k+1 starts when it ends. A policy with a micro-batch size runs
 * each share as micro-batches, and its steal hook moves unstarted samples
 * between workers within the iteration. Each finished iteration is handed
 * to an observer (the recorder), which is how results leave the run. */
#ifndef LBS_RUN_H
#define LBS_RUN_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "models/network.h"
#include "models/policy.h"
#include "sim/engine.h"
#include "sim/scenario.h"
#include "traces/avail.h"
#include "traces/binding.h"
#include "traces/source.h"
#include "util/rng.h"

typedef struct lbs_worker {
	const lbs_cost *cost;
	const lbs_noise *noise;
	gsl_rng *rng; /* the worker's noise stream for lognormal noise (NULL: none) */
	lbs_avail avail;
	uint32_t group;
	/* Re-sizing (cost->resize_cost, new_batch_cost; doc/model.md): */
	int64_t ran;    /* the batch of its last run of > 0 samples (0: none yet) */
	uint64_t *seen; /* bit b: it has run batch b (in lbs_run.seen_bits; NULL: no new_batch_cost) */
	int64_t seen_top; /* the largest batch the bits hold */
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
	double decision_s;      /* real time the policy took for this iteration */
	int64_t global_batch;   /* samples processed (B unless the policy shrinks it) */
	bool batch_changed;     /* the policy changed the batch sizes for it */
	size_t n_workers;
	const int64_t *batch;     /* samples each worker processed */
	const int64_t *planned;   /* samples the policy gave each worker (stealing moves some) */
	size_t n_planned;         /* the workers `planned` holds (0: n_workers) */
	size_t first_worker;      /* batch, compute_s, wait_s are of workers first_worker.. (asp: one) */
	const double *compute_s;  /* compute time per worker */
	const double *wait_s;     /* per worker, idle time (NULL: compute_end - start - compute, the barrier's) */
	const lbs_policy_var *vars; /* the policy's state at the end of the iteration */
	size_t n_vars;
	const double *predicted_speed; /* per worker, by the policy's predictor (NULL: none) */
	const double *readings;   /* n_workers x n_readings sampled at the start (NULL: none) */
	size_t n_readings;        /* cpu_util, mem_util */
} lbs_iteration_record;

/* The most simulated time a run may span, and the most events an iteration
 * may take (micro-batches, phases of a background job): a scenario past
 * either is refused before it runs. */
#define LBS_MAX_SIM_TIME_S LBS_ENGINE_MAX_TIME_S
#define LBS_MAX_ITERATION_EVENTS 1e8
/* The most memory the batches every worker has run may take with
 * new_batch_cost (one bit per batch up to min(max_batch, global batch) per
 * worker): a scenario past it is refused before it runs. */
#define LBS_MAX_SEEN_BYTES (256.0 * 1024 * 1024)

typedef lbs_status (*lbs_iteration_fn)(void *ctx, const lbs_iteration_record *rec, lbs_error *err);

typedef struct lbs_run_stats {
	int64_t iterations;
	double sim_time_s;
	double sum_iteration_s, sum_compute_s, sum_aggregation_s, sum_gap_s, sum_decision_s;
	int64_t samples;
	uint64_t events;
	/* [convergence]: progress towards the target (1 = reached), and where
	 * it was first reached (steps_to_target 0: not within the run). */
	double progress;
	int64_t steps_to_target, samples_to_target;
	double time_to_target_s;
	int64_t dropped_samples; /* [sync] backup, dropcompute: samples whose gradients were dropped */
} lbs_run_stats;

typedef struct lbs_stepper lbs_stepper; /* sim/run_sync.c */

typedef struct lbs_run {
	const lbs_scenario *sc;
	size_t n;
	lbs_worker *workers;
	int64_t *batch;     /* planned samples per worker */
	int64_t *done;      /* samples processed this iteration (micro-batch mode) */
	double *compute_s;
	double *noise;      /* each worker's noise factor for the coming iteration */
	lbs_taus2 *taus;    /* the noise streams of workers with uniform noise */
	bool draw_in_pass;  /* draw noise in the pass that starts the shares (no
			       policy sees it before) rather than before planning */
	int64_t *max_batch;
	int *device;
	bool resize;        /* some group has a re-sizing cost (lbs_cost.resize_cost, new_batch_cost) */
	uint64_t *seen_bits; /* every worker's lbs_worker.seen, allocated once */
	int64_t *pending, *running, *incoming; /* micro-batch mode */
	size_t n_readings;  /* readings per worker at a barrier (0: no source gives any) */
	double *readings;   /* n x n_readings */
	lbs_monitor *monitors; /* how each worker's readings are seen (NULL: all exactly) */
	lbs_net_time net;   /* aggregation time at nominal bandwidth */
	lbs_avail net_avail; /* the network's bandwidth factor over time (constant 1 by default) */
	lbs_source *net_source; /* its replay, with a [network] trace */
	lbs_trace_table *traces;  /* every trace of the run, each loaded once; NULL: none */
	lbs_source *sources;      /* the traced workers' replays, group by group */
	const lbs_policy_ops *policy;
	void *policy_state;
	lbs_policy_info info;
	lbs_policy_var vars[LBS_POLICY_VARS_MAX];
	const double *predicted; /* the policy's predictions for this iteration, or NULL */
	size_t n_vars;
	lbs_engine eng;
	uint32_t h_begin, h_compute_done, h_agg_done, h_worker0;
	bool per_worker_events;
	bool batch_changed;
	int64_t iteration, epoch, epoch_iteration, epoch_length;
	double iter_start_s, compute_end_s, decision_s;
	double pass_lo_s, pass_hi_s; /* least and most compute time, from that pass */
	int64_t pass_samples;        /* samples planned, from that pass */
	size_t remaining;   /* workers still computing (per-worker events) */
	/* [sync] mode = backup: which workers' gradients this step counts, when
	 * each is free for its next share, and events of dropped shares still
	 * to come (ignored when they do). */
	bool backup;
	size_t contributors; /* workers whose gradients the step waits for: N - backup_workers */
	unsigned char *counted;
	double *ready_at;
	uint32_t *stale;
	int64_t *contributed; /* samples each worker contributed this step */
	/* [sync] mode = dropcompute: each worker stops drop_limit_s after the
	 * barrier (infinite while the limit is being chosen), keeping its
	 * finished micro-batches (run->done); with an automatic limit, the
	 * steps still to measure and the micro-batches measured: when each
	 * ended after its barrier, and its samples. */
	bool drop;
	double drop_limit_s;
	int64_t drop_measure;
	double *drop_end_s;
	int64_t *drop_samples;
	size_t n_drop, cap_drop;
	/* [sync] ssp, asp, local-sgd: each worker's own steps (sim/run_sync.c; NULL: none). */
	lbs_stepper *stepper;
	double step_weight;  /* [convergence]: the closing step's staleness weight (1: fresh) */
	bool target_hidden;  /* the closing step's model is not one the target is looked for on */
	/* measured on the testbed (the teacher-student task): the held-out loss
	 * after step loss_step[i], n_losses of them (the run_losses table) */
	double *loss_step, *loss;
	size_t n_losses;
	int64_t *staleness_counts; /* [sync] ssp, asp: updates by staleness (index) */
	size_t n_staleness;
	lbs_iteration_fn observer;
	void *observer_ctx;
	const volatile sig_atomic_t *interrupt; /* checked between iterations and every few events */
	lbs_run_stats stats;
} lbs_run;

/* Builds the cluster, random streams and `policy` (NULL: the scenario's),
 * and plans iteration 0, so that every input problem (a batch above a
 * memory cap, a bad policy option) is reported before anything runs or is
 * written. */
lbs_status lbs_run_create(lbs_run *run, const lbs_scenario *sc, const char *policy, lbs_error *err);

/* Simulates the whole run, calling observer(ctx, record) once per iteration.
 * Returns LBS_EINTR if *interrupt became non-zero (seen within
 * the next event). */
lbs_status lbs_run_execute(lbs_run *run, lbs_iteration_fn observer, void *ctx,
			   const volatile sig_atomic_t *interrupt, lbs_error *err);

/* Closes the current iteration, simulated or measured (the testbed): the
 * policy's variables read, the record filled from the run's state and the
 * times given (start, end of compute, end; `processed` the samples each
 * worker did, `samples` their sum, lo and hi the least and largest
 * compute time), and the run's totals updated. The caller hands rec to its
 * observer. */
void lbs_run_close_iteration(lbs_run *run, double start_s, double compute_end_s, double end_s,
			     const int64_t *processed, int64_t samples, double lo, double hi,
			     lbs_iteration_record *rec);

void lbs_run_destroy(lbs_run *run);

/* [sync] (sim/run_sync.c): whether the mode steps each worker on its own
 * (ssp, asp, local-sgd); refusing what the scenario's mode does not compose
 * with (a key error naming the file, line and key), for every mode but bsp
 * and backup, and for the modes of sim/run_sync.c allocating run->stepper
 * and registering its handlers (run->h_begin among them); and freeing it. */
bool lbs_sync_per_worker(int mode);
/* One more update of staleness tau in run->staleness_counts (the
 * run_staleness table): sim/run_sync.c's, and the testbed's. */
/* dropcompute's automatic limit (sim/run.c) from the micro-batch ends of
 * run->drop_end_s and drop_samples: the simulation's, and the testbed's. */
lbs_status lbs__run_choose_drop_limit(lbs_run *run, lbs_error *err);
lbs_status lbs_run_count_staleness(lbs_run *run, int64_t tau, lbs_error *err);
lbs_status lbs_sync_setup(lbs_run *run, lbs_error *err);
void lbs_sync_destroy(lbs_run *run);

/* For sim/run_sync.c: worker i's noise factor for its next step (its own
 * stream); the re-sizing factor of a run of b samples on w (records it);
 * the policy's plan at the current iteration, checked; and a key error
 * "FILE:LINE: [SECTION] KEY: msg" where the scenario gave the key. */
double lbs__run_noise(lbs_run *run, size_t i);
double lbs__run_resize(lbs_worker *w, int64_t b);
lbs_status lbs__run_plan(lbs_run *run, lbs_error *err);
lbs_status lbs__run_key_error(const lbs_scenario *sc, const char *section, const char *key, const char *msg,
			      lbs_error *err);

#endif
