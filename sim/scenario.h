/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Scenarios: an INI file (read with inih) plus --set overrides, validated
 * completely into plain structs before anything is simulated or written.
 * Every key is a row of a schema table (util/keys.h); doc/scenario-keys.md is
 * generated from those tables by `lbsim keys`. */
#ifndef LBS_SCENARIO_H
#define LBS_SCENARIO_H

#include <stdint.h>
#include <stdio.h>

#include "models/cost.h"
#include "models/network.h"
#include "models/noise.h"
#include "util/keys.h"
#include "traces/binding.h"
#include "traces/avail.h"
#include "traces/gen.h"
#include "traces/monitor.h"
#include "sim/plugin.h"

#define LBS_MAX_WORKERS 1000000
#define LBS_MAX_GROUPS 4096
#define LBS_MAX_ITERATIONS INT64_C(1000000000)
#define LBS_MAX_GLOBAL_BATCH INT64_C(1000000000)

typedef enum lbs_device { LBS_DEVICE_CPU, LBS_DEVICE_GPU } lbs_device;
#define LBS_DEVICE_CHOICES "cpu|gpu"

typedef enum lbs_worker_events { LBS_EVENTS_AUTO, LBS_EVENTS_ALWAYS } lbs_worker_events;

typedef struct lbs_run_spec {
	char name[LBS_VALUE_MAX];
	char description[LBS_VALUE_MAX];
	int64_t seed;
	int64_t global_batch;
	int64_t iterations;      /* 0 when the length is given in epochs */
	int64_t epochs;
	int64_t dataset_samples;
	int worker_events;       /* lbs_worker_events */
} lbs_run_spec;

/* [testbed]: how `lbsim testbed` and `lbsim validate` run the scenario for
 * real (doc/validation.md); the simulation ignores it. */
typedef enum lbs_tb_worker_kind { LBS_TB_WORKER_BLAS, LBS_TB_WORKER_TORCH } lbs_tb_worker_kind;
#define LBS_TB_WORKER_CHOICES "blas|torch"
typedef struct lbs_testbed_spec {
	int worker; /* lbs_tb_worker_kind */
	int ddp;    /* torch: 1 = DistributedDataParallel, 0 = one flat all-reduce */
	double target_loss; /* torch, teacher-student: the held-out loss of the measured target (0: none) */
	int64_t loss_every; /* ... evaluated every this many steps */
} lbs_testbed_spec;

/* [sync]: how the workers synchronise (doc/model.md, "Synchronisation"). */
typedef enum lbs_sync_mode {
	LBS_SYNC_BSP,
	LBS_SYNC_BACKUP,
	LBS_SYNC_SSP,
	LBS_SYNC_ASP,
	LBS_SYNC_DROPCOMPUTE,
	LBS_SYNC_LOCAL_SGD
} lbs_sync_mode;
#define LBS_SYNC_CHOICES "bsp|backup|ssp|asp|dropcompute|local-sgd"
typedef struct lbs_sync_spec {
	int mode;               /* lbs_sync_mode */
	int64_t backup_workers; /* backup: the step proceeds after the first N - backup_workers gradients */
	int64_t staleness;      /* ssp: worker i starts step k once every worker has finished k - s - 1 */
	double time_limit_s;    /* dropcompute: each worker stops computing this long after the barrier
				   (0: chosen after time_limit_steps steps) */
	int64_t time_limit_steps; /* dropcompute, time_limit 0: the steps measured to choose it */
	int64_t micro_batch;    /* dropcompute: samples per micro-batch (what a stopped worker keeps) */
	int overrun;            /* dropcompute: 0 the micro-batch running at the limit is dropped
				   (the worker stops at it), 1 it finishes and counts */
	int64_t period;         /* local-sgd: the models are averaged every `period` steps */
} lbs_sync_spec;

/* [convergence]: the statistical-efficiency model that turns steps and
 * their batches into progress towards a target (doc/model.md, "Time to
 * target"); absent or model = none: no target. */
typedef enum lbs_convergence_model { LBS_CONV_NONE, LBS_CONV_GNS } lbs_convergence_model;
#define LBS_CONVERGENCE_CHOICES "none|gns"
/* How much of a fresh gradient's progress a stale one makes (sim/efficiency.h). */
typedef enum lbs_staleness_penalty { LBS_STALE_INVERSE, LBS_STALE_NONE } lbs_staleness_penalty;
#define LBS_STALENESS_PENALTY_CHOICES "inverse|none"
typedef struct lbs_convergence_spec {
	int model;          /* lbs_convergence_model */
	double noise_scale; /* B_noise, samples */
	double min_steps;   /* S_min: steps to the target at an infinite batch */
	int stop;           /* 1: the run ends at the target (its length a cap) */
	int staleness_penalty; /* lbs_staleness_penalty: ssp and asp updates */
	double staleness_exponent; /* progress = the learning rate's factor to this power (1) */
} lbs_convergence_spec;

typedef struct lbs_model_spec {
	char name[LBS_VALUE_MAX];
	int64_t parameters;
	double bytes_per_parameter;
	double gradient_bytes;
	/* a network of `lbsim calibrate --list` (models/nets.h): how it trains,
	 * which sizes its memory (doc/transformers.md) */
	bool is_net;           /* `name` is one */
	int64_t sequence_length; /* 0: the preset's */
	int precision;         /* lbs_precision; with has_precision */
	bool has_precision;
	int recompute;         /* lbs_recompute */
	int optimizer;         /* lbs_optimizer */
	int64_t zero_stage;
} lbs_model_spec;

typedef struct lbs_group_spec {
	char name[LBS_NAME_MAX];
	int64_t count;
	int device;              /* lbs_device */
	lbs_cost cost;
	double availability;
	double timeshare_refill_s; /* CPU time lost per slice while time-shared (0: none) */
	double timeshare_slice_s;  /* the scheduling slice that refill is paid in */
	double cpu_quota_period_s; /* > 0: a(t) < 1 enforced per period as CFS does (traces/cfs.h) */
	double cpu_quota_tick_s;   /* > 0: the quota checked at ticks of this length (traces/cfs.h) */
	lbs_noise noise;
	lbs_trace_spec trace;    /* trace_format = none: no trace */
	lbs_monitor_params readings; /* how policies see its readings (traces/monitor.h) */
	lbs_origin at;           /* where the section starts */
	char profile[LBS_VALUE_MAX];  /* `profile` as given; "" when none */
	char profile_path[1024];      /* it resolved; the origin of the cost keys it gave */
	int profile_cost;             /* 0: the profile's fitted model; 1: its measured times */
	double *cost_table;           /* profile_cost = measured: cost.table_s (owned) */
	double memory_bytes;          /* `memory`; 0: not given */
	int64_t memory_cap;           /* the largest batch that fits in it (0: not given) */
	double state_bytes;           /* the model state one worker holds in it */
	double sample_bytes;          /* and the activations of one sample */
} lbs_group_spec;

typedef struct lbs_policy_spec {
	char name[LBS_VALUE_MAX];
	lbs_origin at;           /* where the name was given */
	char plugin[LBS_VALUE_MAX]; /* `plugin` as given; "" when none */
} lbs_policy_spec;

/* The keys of one [policy.NAME] or [predictor.NAME] section, validated. */
typedef struct lbs_policy_options {
	char section[LBS_NAME_MAX + 16];
	lbs_kv *kv;
	size_t n;
	lbs_origin at;
} lbs_policy_options;

typedef struct lbs_scenario {
	char path[1024];
	lbs_run_spec run;
	lbs_model_spec model;
	lbs_network network;
	lbs_trace_spec network_trace; /* the [network] trace* keys; format none: no trace */
	lbs_policy_spec policy;
	lbs_testbed_spec testbed;
	lbs_sync_spec sync;
	lbs_convergence_spec convergence;
	lbs_policy_options *policy_options;
	size_t n_policy_options;
	lbs_group_spec *groups;
	size_t n_groups;
	lbs_gen_spec *generators;     /* [generator.NAME] sections, in file order */
	size_t n_generators;
	int64_t n_workers;
	int64_t iterations;           /* resolved run length */
	int64_t iterations_per_epoch; /* 0 when the run is given in iterations */
	lbs_kv *config;               /* effective configuration (given and defaults) */
	size_t n_config;
	size_t cap_config;            /* entries allocated */
	lbs_plugin *plugins;          /* the policy and predictor plugins it loaded */
	size_t n_plugins;
} lbs_scenario;

/* Reads and validates `path`, then applies overrides[0..n_overrides), each
 * "section.key=value" (validated exactly like the file). On error returns
 * LBS_EINPUT (or LBS_EUSAGE for a malformed override) with a message naming
 * the file, line and key. */
lbs_status lbs_scenario_load(lbs_scenario *sc, const char *path, const char *const *overrides,
			     size_t n_overrides, lbs_error *err);
void lbs_scenario_destroy(lbs_scenario *sc);

/* Where the effective value of section.key was given (file and line, or
 * --set); {path, 0} for a default. For messages about a value that is valid
 * on its own but impossible with the rest (a batch over the memory caps). */
lbs_origin lbs_scenario_origin(const lbs_scenario *sc, const char *section, const char *key);

/* The options given in a component's section, "policy.NAME" or
 * "predictor.NAME" (none: *n = 0). */
void lbs_scenario_section_options(const lbs_scenario *sc, const char *section, const lbs_kv **kv,
				  size_t *n);

/* LBS_OK if `name` is a registered policy or one of the scenario's plugins,
 * else an error naming `at`. */
lbs_status lbs_scenario_check_policy(const lbs_scenario *sc, const char *name, const lbs_origin *at,
				     lbs_error *err);

/* The policy or predictor called `name`: a built-in, else one of the
 * scenario's plugins; NULL when none. */
const lbs_policy_ops *lbs_scenario_policy(const lbs_scenario *sc, const char *name);
const lbs_predictor_ops *lbs_scenario_predictor(const lbs_scenario *sc, const char *name);

/* "a, b, c": the built-in policies and the scenario's, for messages. */
void lbs_scenario_policy_names(const lbs_scenario *sc, char *buf, size_t len);

/* Validates the trace* entries[0..n) of a section against the schema of
 * [workers.NAME]'s trace keys into *target (the hybrid scenarios' node
 * groups take the same keys); errors name the origin and the key. */
lbs_status lbs_scenario_trace_keys(const char *section, const lbs_origin *where, const lbs_kv *const *entries,
				   size_t n, lbs_trace_spec *target, lbs_error *err);

/* Writes the Markdown reference of every section and key. */
void lbs_scenario_document(FILE *out);

/* ---- the [generator.NAME] sections against the rest (sim/scenario_gen.c) */

/* Once every section is read: binds each generator's `workers` to the
 * groups, and refuses what cannot be simulated (an unknown group, two
 * generators setting one group's availability, a group `availability`
 * besides a generator, a disturbance in a run not given in epochs, a
 * network bucket without a network). */
lbs_status lbs_gen_resolve(lbs_scenario *sc, lbs_error *err);

/* Replaces *avail (the constant source of worker `index` of group `group`)
 * with the generators that apply to it, each random one on its own stream
 * (seed, "generator.NAME", group name, index). */
lbs_status lbs_gen_attach_worker(const lbs_scenario *sc, size_t group, int64_t index, lbs_avail *avail,
				 lbs_error *err);

/* Sets *avail to the network's bandwidth source when a network_bucket
 * section applies (left alone otherwise). */
lbs_status lbs_gen_attach_network(const lbs_scenario *sc, lbs_avail *avail, lbs_error *err);

#endif
