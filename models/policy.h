/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Batch-size balancing policies (DESIGN.md, "Contracts").
 *
 * A policy is created from what the cluster looks like and its options, and
 * asked at each barrier for the batch sizes of the next iteration: integers,
 * each within the worker's memory cap, summing to the global batch. It sees
 * only what a real system could see. Adding a policy is one file plus one
 * line in the registry (models/policy/registry.c). */
#ifndef LBS_POLICY_H
#define LBS_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/error.h"
#include "sim/keys.h"

/* What a policy may know about the cluster when it is created. */
typedef struct lbs_policy_env {
	size_t n_workers;
	int64_t global_batch;
	const int64_t *max_batch;     /* memory cap per worker (INT64_MAX: none) */
	const int *device;            /* lbs_device per worker */
	int64_t iterations_per_epoch; /* 0 when the run is not given in epochs */
	uint64_t seed;
} lbs_policy_env;

/* What a policy sees at a barrier, about the iteration that just ended. */
typedef struct lbs_observation {
	int64_t iteration;        /* the iteration about to start (0 first) */
	int64_t epoch;            /* its epoch (0 when the run has no epochs) */
	bool epoch_start;         /* it is the first of its epoch */
	double now_s;             /* simulated time */
	const int64_t *batch;     /* last iteration's batch per worker (NULL at 0) */
	const double *compute_s;  /* last iteration's measured compute time (NULL at 0) */
	/* Each worker's machine readings now (fractions), as a monitoring agent
	 * would report them at the barrier: from its trace's cpu_util and
	 * mem_util columns (traces/source.h); NaN for a worker whose trace has
	 * none; NULL when no worker has any. */
	const double *cpu_util;
	const double *mem_util;
} lbs_observation;

typedef struct lbs_policy_ops {
	const char *name;
	const char *summary;
	const lbs_key_spec *options; /* keys it accepts in [policy] besides `name` */
	size_t n_options;
	/* Validates options (messages name their origin) and makes the state. */
	lbs_status (*create)(const lbs_policy_env *env, const lbs_kv *options, size_t n_options,
			     void **state, lbs_error *err);
	/* Fills batch[] for the next iteration (it holds the current sizes) and
	 * sets *changed; the run checks sums and caps whenever *changed. */
	lbs_status (*plan)(void *state, const lbs_observation *obs, int64_t *batch, bool *changed,
			   lbs_error *err);
	void (*destroy)(void *state);
} lbs_policy_ops;

extern const lbs_policy_ops lbs_policy_static;

/* The registry, NULL-terminated. */
extern const lbs_policy_ops *const lbs_policies[];

const lbs_policy_ops *lbs_policy_find(const char *name);
/* Writes "a, b, c", the registered names, into buf (for messages). */
void lbs_policy_names(char *buf, size_t len);
/* Markdown reference of every policy and its options. */
void lbs_policy_document(FILE *out);

/* Splits `total` samples as evenly as integers allow: the first total % n
 * workers get one more. Shared by policies that start even. */
void lbs_split_even(int64_t total, size_t n, int64_t *batch);

#endif
