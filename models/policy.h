/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Batch-size balancing policies (doc/policies.md).
 *
 * A policy is created from what the cluster looks like and its options, and
 * asked at each barrier for the batch sizes of the next iteration: integers,
 * each within the worker's memory cap, summing to the global batch. It sees
 * only what a real system could see: past measured compute times and batch
 * sizes. Two optional capabilities:
 *  - look-ahead (the oracle only): the exact completion time of any batch
 *    on any worker in the coming iteration, to give the lower bound;
 *  - an intra-iteration hook (work stealing): when a worker runs out of
 *    samples, the policy may hand it samples not yet started elsewhere.
 * Adding a policy is one file plus one line in models/policy/registry.c. */
#ifndef LBS_POLICY_H
#define LBS_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/error.h"
#include "util/keys.h"

/* What a policy may know about the cluster when it is created. */
typedef struct lbs_policy_env {
	size_t n_workers;
	int64_t global_batch;
	const int64_t *max_batch;     /* memory cap per worker (INT64_MAX: none) */
	const int *device;            /* lbs_device per worker */
	int64_t iterations_per_epoch; /* 0 when the run is not given in epochs */
	uint64_t seed;
	size_t n_readings;            /* resource readings per worker at a barrier (0: none) */
	/* The validated options of another component, e.g. "predictor.narx". */
	void (*section_options)(const void *ctx, const char *section, const lbs_kv **kv, size_t *n);
	const void *section_ctx;
	/* The predictor called `name`, a built-in or a plugin the scenario
	 * loaded (NULL: none); called with section_ctx. NULL: built-ins only. */
	const struct lbs_predictor_ops *(*find_predictor)(const void *ctx, const char *name);
} lbs_policy_env;

/* Look-ahead for the oracle: the simulated time at which `worker` would
 * finish `batch` samples if the coming iteration started now, with this
 * iteration's noise and availability. Non-decreasing in batch. */
typedef struct lbs_future {
	double (*finish_s)(const void *ctx, size_t worker, int64_t batch);
	const void *ctx;
} lbs_future;

/* What a policy sees at a barrier, about the iteration that just ended. */
typedef struct lbs_observation {
	int64_t iteration;        /* the iteration about to start (0 first) */
	int64_t epoch;            /* its epoch (0 when the run has no epochs) */
	bool epoch_start;         /* it is the first of its epoch */
	double now_s;             /* simulated time */
	const int64_t *batch;     /* last iteration's samples per worker (NULL at 0) */
	const double *compute_s;  /* last iteration's compute time per worker, waiting
				     at the barrier excluded (NULL at 0) */
	const lbs_future *future; /* look-ahead; NULL unless the policy asks for it */
	const double *readings;   /* n_workers x n_readings, sampled now (NULL: none) */
} lbs_observation;

/* What the policy tells the run about itself when it is created. */
typedef struct lbs_policy_info {
	bool lookahead;            /* wants obs->future (only an oracle may) */
	bool shrinks_global_batch; /* may plan fewer than B samples (DBS's own rounding) */
	int64_t micro_batch;       /* > 0: workers run their share in micro-batches of
				      this size and the steal hook is called */
	bool fixed;                /* plans at iteration 0 only and never changes the
				      batch: later barriers do not call plan */
} lbs_policy_info;

/* A named number of the policy's internal state, recorded each iteration. */
typedef struct lbs_policy_var {
	const char *name;
	double value;
} lbs_policy_var;

/* A steal: `samples` not yet started are moved from `victim` to the thief,
 * which can start on them after `latency_s`. */
typedef struct lbs_steal {
	size_t victim;
	int64_t samples;
	double latency_s;
} lbs_steal;

typedef struct lbs_policy_ops {
	const char *name;
	const char *summary;
	const lbs_key_spec *options; /* keys it accepts in [policy.NAME] */
	size_t n_options;
	size_t options_size;         /* size of the struct the options fill */
	/* Validates options (messages name their origin) and makes the state. */
	lbs_status (*create)(const lbs_policy_env *env, const lbs_kv *options, size_t n_options,
			     void **state, lbs_policy_info *info, lbs_error *err);
	/* Fills batch[] for the next iteration (it holds the current sizes) and
	 * sets *changed; the run checks sums and caps whenever *changed.
	 * obs->batch may be the same array as batch: read it before writing. */
	lbs_status (*plan)(void *state, const lbs_observation *obs, int64_t *batch, bool *changed,
			   lbs_error *err);
	/* Optional: up to `max` variables explaining the last decision. */
	size_t (*vars)(const void *state, lbs_policy_var *out, size_t max);
	/* Optional: the speed (samples/s) predicted for each worker for the
	 * iteration just planned (NaN where none), recorded beside the
	 * realised speed. */
	const double *(*predictions)(const void *state);
	/* Optional intra-iteration hook: worker `thief` has nothing left to do;
	 * pending[i] is what worker i has not started. Returns false for no
	 * steal. */
	bool (*steal)(void *state, size_t thief, const int64_t *pending, size_t n, lbs_steal *out);
	void (*destroy)(void *state);
} lbs_policy_ops;

#define LBS_POLICY_VARS_MAX 8

/* Copies up to `max` of the n variables v[] into out; returns how many. */
static inline size_t lbs_vars_copy(lbs_policy_var *out, size_t max, const lbs_policy_var *v, size_t n)
{
	size_t k = n < max ? n : max;
	for (size_t i = 0; i < k; i++)
		out[i] = v[i];
	return k;
}

extern const lbs_policy_ops lbs_policy_static;
extern const lbs_policy_ops lbs_policy_static_proportional;
extern const lbs_policy_ops lbs_policy_dbs;
extern const lbs_policy_ops lbs_policy_lbbsp_gpu;
extern const lbs_policy_ops lbs_policy_lbbsp_cpu;
extern const lbs_policy_ops lbs_policy_work_stealing;
extern const lbs_policy_ops lbs_policy_oracle;

/* The registry, NULL-terminated. */
extern const lbs_policy_ops *const lbs_policies[];

const lbs_policy_ops *lbs_policy_find(const char *name);
/* Writes "a, b, c", the registered names, into buf (for messages). */
void lbs_policy_names(char *buf, size_t len);
/* Markdown reference of every policy and its options. */
void lbs_policy_document(FILE *out);

/* Splits `total` samples as evenly as integers allow: the first total % n
 * workers get one more. */
void lbs_split_even(int64_t total, size_t n, int64_t *batch);

/* Splits `total` in proportion to weight[i] >= 0 within caps[i] (NULL: none):
 * real shares are clamped to caps and the excess re-spread over the others
 * (water-filling), then rounded by largest remainder (ties to the lower
 * index) so the integers sum to `total`. Returns false if the caps or the
 * weights cannot hold `total` (all weights zero, or caps too small). */
bool lbs_split_proportional(int64_t total, size_t n, const double *weight, const int64_t *caps,
			    int64_t *batch);

/* Batches in multiples of a quantum (the `quantum` option of dbs, lbbsp-cpu
 * and lbbsp-gpu; doc/policies.md#re-sizing-costs). Changing a worker's batch
 * costs time by itself (memory returned and faulted in again, kernels chosen
 * anew for a size never seen), so a policy may keep each worker to a few
 * sizes: multiples of q = quantum.
 *
 * lbs_quantise rounds a valid plan batch[] (summing to `total`, within
 * caps[], NULL: none) in place, so that:
 *  - every batch is a multiple of q except the remainder holder's, which is
 *    a multiple of q plus R = total mod q: the remainder goes whole to one
 *    worker, so the set of sizes stays {0, q, 2q, ...} plus that worker's;
 *  - the holder is the worker with the largest batch in the plan (ties: the
 *    lower index) among those that can hold R and leave the others room
 *    for the rest; with the largest share, R is the smallest change
 *    relative to its batch (R = 0: no holder);
 *  - the U = floor(total / q) quanta are shared in proportion to the plan
 *    (the holder's weight is its batch less R, at least 0), within each
 *    worker's room in quanta (floor(cap / q); the holder's
 *    floor((cap - R) / q)), by lbs_split_proportional on quanta: water-
 *    filling, then largest remainder, ties to the lower index. Should the
 *    workers the plan gives samples be unable to hold U quanta, they are
 *    filled to their room and the other quanta shared evenly, the same
 *    way, over the workers the plan left at 0;
 *  - the batches sum to `total` and keep the caps.
 * A plan already of this form, its holder the largest, is left as it is.
 * Example: total 30, q = 8, plan 13/10/7, no caps: R = 6, U = 3, holder
 * worker 0; weights 7/10/7 share 3 quanta as 0.875/1.25/0.875, floors
 * 0/1/0, the two quanta left to the largest fractions (0.875, 0.875: the
 * lower index first): 1/1/1, so 14/8/8. With worker 2 capped at 7 (room
 * 0): 1.235/1.765/0 -> 1/2/0, so 14/16/0. Returns false (batch[]
 * unchanged) if no holder leaves room for U quanta, which
 * lbs_quantum_fits tells beforehand from the caps alone; quantum <= 1
 * changes nothing. */
bool lbs_quantise(int64_t total, size_t n, int64_t quantum, const int64_t *caps, int64_t *batch);
bool lbs_quantum_fits(int64_t total, size_t n, int64_t quantum, const int64_t *caps);
/* Refuses, naming [SECTION] quantum where it was given, a quantum above the
 * global batch or one the memory caps cannot hold the global batch in. */
lbs_status lbs_quantum_check(const lbs_policy_env *env, const char *section, const lbs_kv *options,
			     size_t n_options, int64_t quantum, lbs_error *err);

/* Re-sizing hysteresis (the `resize_cost` and `resize_horizon` options).
 * With tau[i] the predicted compute time per sample of worker i (seconds;
 * INFINITY: unknown), a worker's predicted time for b samples is b *
 * tau[i] (0 for b = 0), and a worker whose batch differs from cur[i] pays
 * (1 + cost) times that in the iteration it changes. With
 *   keep = max_i cur_i tau_i,  plan = max_i plan_i tau_i,
 *   paid = max_i plan_i tau_i (1 + cost [plan_i != cur_i]),
 * returns the predicted gain of the plan over `horizon` >= 1 iterations
 * at these speeds, its re-sizing paid once:
 *   horizon (keep - plan) - (paid - plan),
 * which for horizon 1 is keep - paid: the next iteration alone. Positive
 * when the plan is predicted to pay back its re-sizing within the
 * horizon; INFINITY when cur gives samples to a worker of unknown time (so
 * the plan is taken, as without the option). A policy adopts the plan
 * only when the gain is positive. Example: keep 10 ms, plan 9 ms, paid
 * 12.6 ms (cost 0.4): -2.6 ms over one iteration, +0.4 ms over 4. */
double lbs_resize_gain(size_t n, const int64_t *cur, const int64_t *plan, const double *tau, double cost,
		       double horizon);

/* The two options' rows, the same in every policy that has them (fields
 * double resize_cost and int64_t quantum of its options struct). Both are
 * off by default, so a scenario without them plans as before. */
#define LBS_RESIZE_COST_KEY(type, field) \
	{ "resize_cost", LBS_T_REAL, offsetof(type, field), "0", 0, 100, 0, NULL, NULL, \
	  "fraction (0.3 or 30%): a worker's expected extra compute time, relative to its own, in " \
	  "an iteration whose batch differs from its previous one; > 0: a new plan is adopted only " \
	  "if its predicted iteration time, each re-sized worker's time times (1 + resize_cost), " \
	  "is shorter than the current batches' (0: off)" }
#define LBS_RESIZE_HORIZON_KEY(type, field) \
	{ "resize_horizon", LBS_T_REAL, offsetof(type, field), "1", 1, 1e6, 0, NULL, NULL, \
	  "iterations: with resize_cost, a new plan is adopted if what it is predicted to save over " \
	  "this many iterations at the current speeds exceeds its re-sizing cost, paid once (1: the " \
	  "next iteration alone; a persistent imbalance, as lbbsp-gpu's steps fix, needs more)" }
#define LBS_QUANTUM_KEY(type, field) \
	{ "quantum", LBS_T_INT, offsetof(type, field), "1", 1, 1e9, 0, NULL, NULL, \
	  "samples: every batch is a multiple of this but one, the largest (where the caps allow), " \
	  "which also holds the remainder B mod quantum; probes (and lbbsp-gpu's steps) are whole " \
	  "quanta; at most B, and the memory caps must hold B so (1: off)" }

/* Probing idle workers. A worker given no samples is not measured, so a
 * policy that sizes batches by measurement would never learn it got
 * faster. idle[i] counts the iterations in a row worker i was given
 * nothing: lbs_probe_count updates it from the batches of the iteration
 * that ended. lbs_probe_give then gives one sample to each worker still at
 * 0 in `batch` whose idle[i] >= every (every = 0: never), within its cap,
 * taking it from the worker with the largest batch (lowest index on ties);
 * it returns how many probes it made. One sample every `every` iterations
 * is what a real system would spend to re-measure a worker it left idle. */
#define LBS_PROBE_DEFAULT "100"
void lbs_probe_count(int64_t *idle, size_t n, const int64_t *last_batch);
size_t lbs_probe_give(int64_t *batch, size_t n, const int64_t *caps, const int64_t *idle, int64_t every);
/* lbs_probe_give with probes of `samples` samples (a policy's quantum, so
 * the donor and the probed worker stay on multiples of it); a donor needs
 * at least that many, a probed worker a cap of at least that many. */
size_t lbs_probe_give_n(int64_t *batch, size_t n, const int64_t *caps, const int64_t *idle, int64_t every,
			int64_t samples);

#endif
