/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Generators: synthetic availability for what no public trace covers
 * (doc/generators.md). Each generator is an availability source
 * (traces/avail.h) built from a few documented parameters and, where it is
 * random, from its own stream (util/rng.h); doc/generators.md says where
 * every parameter comes from.
 *
 *   cpu_credits      EC2 burstable CPU credits (t2, t3): full speed while the
 *                    instance has credits, its baseline share when it has none
 *                    (traces/gen_credit.c)
 *   background       a co-located job switching on and off, taking a share of
 *                    the CPU while on (traces/gen_background.c)
 *   network_bucket   EC2's network token bucket (c5): burst rate until the
 *                    bucket empties, then the baseline rate; drives the
 *                    aggregation's bandwidth (traces/gen_netbucket.c)
 *   dbs_disturbance  the DBS authors' injected slowdowns: some epochs, a few
 *                    seconds of delay spread over the iterations
 *                    (traces/gen_dbs.c)
 *
 * A scenario applies them with [generator.NAME] sections (their keys and
 * checks: traces/gen.c; their binding to the groups: sim/scenario_gen.c);
 * the functions below build them directly, for tests and other programs. */
#ifndef LBS_GEN_H
#define LBS_GEN_H

#include <gsl/gsl_rng.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "util/keys.h"
#include "traces/avail.h"

/* ---- EC2 burstable CPU credits (traces/gen_credit.c) ------------------- */

typedef struct lbs_credit_type {
	const char *name;     /* "t2.micro" */
	double earn_per_hour; /* CPU credits earned per hour */
	double max_earned;    /* limit of the earned-credit balance (24 h of earnings) */
	int vcpus;
	double launch;        /* launch credits (T2 Standard: 30 per vCPU; T3: none) */
} lbs_credit_type;

/* The t2 and t3 types, terminated by a row with a NULL name. */
extern const lbs_credit_type lbs_credit_types[];

/* The type called `name`, or NULL. */
const lbs_credit_type *lbs_credit_type_find(const char *name);

/* Baseline share of the whole instance: earn_per_hour / (60 * vcpus). */
double lbs_credit_baseline(const lbs_credit_type *type);

/* A credit bucket of `type` holding `launch` launch credits and `earned`
 * earned credits (<= the type's limit) at time 0. While the worker computes
 * it keeps all vCPUs busy: it runs at full speed while it has credits, spending
 * launch credits first, and at the baseline share once it has none; credits
 * are earned all the time. Readings: LBS_READING_CPU_CREDITS. */
lbs_status lbs_credit_create(const lbs_credit_type *type, double launch, double earned,
			     lbs_avail *out, lbs_error *err);

/* ---- co-located background job (traces/gen_background.c) --------------- */

typedef struct lbs_background_params {
	double on_mean_s;  /* mean of the exponential on durations */
	double off_mean_s; /* mean of the exponential off durations */
	double load;       /* CPU share the job takes while on, in [0, 1) */
	double memory;     /* memory share it holds while on, in [0, 1] */
	double history_s;  /* how far back readings must reach (a monitor's lag + period); 0: none */
} lbs_background_params;

/* An on/off job drawn from `rng` (which the source takes over and frees):
 * a(t) = 1 - load while on, 1 while off, starting in the stationary state.
 * Readings: LBS_READING_CPU_UTIL = load or 0, LBS_READING_MEM_UTIL = memory
 * or 0, at any time from history_s before the current phase's start on (the
 * phases that ended within it are kept); earlier ones are NAN. */
lbs_status lbs_background_create(const lbs_background_params *p, gsl_rng *rng, lbs_avail *out,
				 lbs_error *err);

/* ---- EC2 network token bucket (traces/gen_netbucket.c) ------------------ */

/* The per-type parameters fitted from Uta et al.'s runs (traces/netfit.h;
 * the table is generated into traces/netbucket_fit.c). */
typedef struct lbs_netbucket_type {
	const char *name;      /* "c5.large" */
	double burst_Gbps;     /* typical burst rate (the ~9.7 Gbit/s regime) */
	double burst_low_Gbps; /* the other burst regime seen (~5.0 Gbit/s) */
	double baseline_Gbps;
	double bucket_Gbit;    /* tokens of a full bucket */
	double bucket_se_Gbit; /* standard error of bucket_Gbit */
	int runs;              /* depleting runs the fit used */
	double rms_rel_err;    /* of the predicted time to empty over those runs */
	double max_rel_err;
} lbs_netbucket_type;

extern const lbs_netbucket_type lbs_netbucket_types[]; /* NULL name ends it */
const lbs_netbucket_type *lbs_netbucket_type_find(const char *name);

/* One kind of NIC in the cluster: a token bucket of bucket_bytes refilled
 * at baseline_Bps, holding initial_bytes at time 0; it may send at
 * burst_Bps while it holds tokens, at baseline_Bps once it has none. */
typedef struct lbs_netbucket_nic {
	double burst_Bps, baseline_Bps, bucket_bytes, initial_bytes;
} lbs_netbucket_nic;

/* The bandwidth factor of an aggregation whose transfer takes work_s at
 * reference_Bps: every NIC in nics[0..n) sends at the common pace
 * p(t) = min(reference_Bps, each NIC's current cap), the factor is
 * p / reference_Bps, and each bucket drains at p - baseline while sending
 * and refills at baseline while idle. */
lbs_status lbs_netbucket_create(const lbs_netbucket_nic *nics, size_t n, double reference_Bps,
				lbs_avail *out, lbs_error *err);

/* ---- DBS-style disturbance (traces/gen_dbs.c) --------------------------- */

typedef struct lbs_dbs_params {
	double probability;           /* of a slow phase starting, per epoch */
	double delay_min_s, delay_max_s; /* delay per epoch, whole seconds between */
	int64_t epochs_min, epochs_max;  /* epochs the phase lasts after its onset */
	int64_t iterations_per_epoch;
} lbs_dbs_params;

/* Wraps `inner` (the source takes it over): completion = inner's completion
 * plus this iteration's delay, drawn per epoch from `rng` (taken over too)
 * as the DBS authors' code does. Readings are inner's. */
lbs_status lbs_dbs_create(const lbs_dbs_params *p, lbs_avail inner, gsl_rng *rng, lbs_avail *out,
			  lbs_error *err);

/* The delay (s) the source added to `iteration`, the last iteration it
 * finished (for reports and tests). */
double lbs_dbs_delay(const lbs_avail *a, int64_t iteration);

/* ---- [generator.NAME] sections (traces/gen.c) --------------------------- */

typedef enum lbs_gen_kind {
	LBS_GEN_CPU_CREDITS,
	LBS_GEN_BACKGROUND,
	LBS_GEN_NETWORK_BUCKET,
	LBS_GEN_DBS,
} lbs_gen_kind;
#define LBS_GEN_CHOICES "cpu_credits|background|network_bucket|dbs_disturbance"

typedef struct lbs_gen_spec {
	char name[LBS_NAME_MAX];
	int kind;                    /* lbs_gen_kind */
	char workers[LBS_VALUE_MAX]; /* "GROUP[,GROUP...]" as written */
	char instance_type[LBS_VALUE_MAX];
	double initial_credits, launch_credits;             /* cpu_credits */
	double on_mean_s, off_mean_s, load, memory;         /* background */
	double burst_Bps, baseline_Bps, bucket_bytes, initial_fill; /* network_bucket */
	double probability, delay_min_s, delay_max_s;       /* dbs_disturbance */
	int64_t epochs_min, epochs_max;
	lbs_origin at;               /* where the section starts */
	lbs_origin workers_at;       /* where `workers` is set */
	uint32_t *groups;            /* indices of the groups it applies to */
	size_t n_groups;
} lbs_gen_spec;

/* The keys of a [generator.NAME] section (a fixed count, so that the
 * scenario's table of sections can hold it). */
#define LBS_GEN_NKEYS 18
extern const lbs_key_spec lbs_gen_keys[LBS_GEN_NKEYS];

/* The error "FILE:LINE: [generator.NAME] KEY: msg", at `at` (the section's
 * start when NULL or not from a file); `name` NULL: the section itself. */
lbs_status lbs_gen_error(lbs_error *err, const lbs_gen_spec *g, const lbs_origin *at, const char *name,
			 const char *msg);

/* Checks one section's values together (keys' ranges are already checked)
 * and fills the defaults that depend on the instance type. `present` and
 * `o` are what lbs_keys_apply returned for it. */
lbs_status lbs_gen_check(lbs_gen_spec *g, uint64_t present, const lbs_origin *o, lbs_error *err);

/* Frees what lbs_gen_resolve (sim/scenario_gen.c) allocated in gens[0..n). */
void lbs_gen_specs_free(lbs_gen_spec *gens, size_t n);

#endif
