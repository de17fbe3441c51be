/* SPDX-License-Identifier: GPL-3.0-or-later */
/* static-proportional: profile each worker's speed once, at the start of
 * training, then give it a fixed share of the global batch proportional to
 * that speed. It removes fixed heterogeneity but not variation over time:
 * the strong static baseline. Profiling runs the even split for
 * `profile_iterations` iterations and measures samples per second of
 * compute (waiting at the barrier excluded), as a real system would; when
 * B < N leaves workers out of the even split, profiling goes on, giving the
 * samples to the least measured workers, until every worker is measured.
 * A worker whose profiled share rounds to 0 is never measured again: the
 * policy is static by design (lbbsp-cpu, dbs and lbbsp-gpu probe).
 * `skip_iterations` leave the first iterations' times out of the profile
 * (still at the even split): a real framework's first iterations pay for
 * allocation, caches and, under a CPU limit, a core just handed over,
 * unevenly across workers (on the testbed a torch worker's first iteration
 * under a CPU limit took 1.3 to 1.8 times its later ones, whatever its
 * quota, and without a limit 1.15 times), and a profile of it misreads the
 * fleet. `estimator = median` takes each worker's median speed over the
 * profiled iterations, which one stalled iteration does not move. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_statistics_double.h>

#include "models/policy.h"

typedef struct sp_options {
	int64_t profile_iterations;
	int64_t skip_iterations;
	int estimator; /* 0 mean, 1 median */
} sp_options;

static const lbs_key_spec sp_keys[] = {
	{ "profile_iterations", LBS_T_INT, offsetof(sp_options, profile_iterations), "1", 1, 1e6, 0,
	  NULL, NULL, "iterations run with the even split to measure each worker's speed" },
	{ "skip_iterations", LBS_T_INT, offsetof(sp_options, skip_iterations), "0", 0, 1e6, 0,
	  NULL, NULL, "first iterations run with the even split but left out of the profile (a "
	  "warm-up: a real framework's first iterations pay for allocation and caches)" },
	{ "estimator", LBS_T_ENUM, offsetof(sp_options, estimator), "mean", 0, 0, 0, "mean|median", NULL,
	  "each worker's speed from its profiled iterations: `mean`: its samples over its compute time in "
	  "them; `median`: the median of its per-iteration speeds (one stalled iteration moves nothing)" },
};

typedef struct sp_state {
	sp_options opt;
	int64_t global_batch;
	size_t n;
	const int64_t *caps;
	double *samples, *seconds; /* summed over the profiling iterations */
	double *speeds;            /* estimator = median: [k * n + i], iteration k's of worker i */
	int64_t *n_speeds;         /* of worker i */
	int64_t cap_speeds;        /* rows of speeds */
	bool fixed;
} sp_state;

static void sp_destroy(void *state)
{
	sp_state *s = state;
	if (s) {
		free(s->samples);
		free(s->seconds);
		free(s->speeds);
		free(s->n_speeds);
		free(s);
	}
}

static lbs_status sp_create(const lbs_policy_env *env, const lbs_kv *options, size_t n_options,
			    void **state, lbs_policy_info *info, lbs_error *err)
{
	(void)info;
	sp_state *s = lbs_calloc(1, sizeof *s, err);
	if (!s)
		return LBS_EINTERNAL;
	lbs_status st = lbs_options_parse(sp_keys, sizeof sp_keys / sizeof sp_keys[0], "policy.static-proportional",
					  options, n_options, &s->opt, err);
	s->global_batch = env->global_batch;
	s->n = env->n_workers;
	s->caps = env->max_batch;
	if (st == LBS_OK && (!(s->samples = lbs_calloc(s->n, sizeof(double), err)) ||
			     !(s->seconds = lbs_calloc(s->n, sizeof(double), err)) ||
			     !(s->n_speeds = lbs_calloc(s->n, sizeof(int64_t), err))))
		st = LBS_EINTERNAL;
	if (st != LBS_OK) {
		sp_destroy(s);
		return st;
	}
	*state = s;
	return LBS_OK;
}

/* estimator = median: each measured worker's speed in this iteration. */
static lbs_status keep_speeds(sp_state *s, const lbs_observation *obs, lbs_error *err)
{
	int64_t most = 0;
	for (size_t i = 0; i < s->n; i++)
		if (obs->batch[i] > 0 && obs->compute_s[i] > 0 && s->n_speeds[i] + 1 > most)
			most = s->n_speeds[i] + 1;
	if (most > s->cap_speeds) {
		int64_t cap = s->cap_speeds ? 2 * s->cap_speeds : 8;
		double *grown = lbs_calloc((size_t)cap * s->n, sizeof *grown, err);
		if (!grown)
			return LBS_EINTERNAL;
		if (s->speeds)
			memcpy(grown, s->speeds, (size_t)s->cap_speeds * s->n * sizeof *grown);
		free(s->speeds);
		s->speeds = grown;
		s->cap_speeds = cap;
	}
	for (size_t i = 0; i < s->n; i++)
		if (obs->batch[i] > 0 && obs->compute_s[i] > 0)
			s->speeds[(size_t)s->n_speeds[i]++ * s->n + i] = (double)obs->batch[i] / obs->compute_s[i];
	return LBS_OK;
}

/* Worker i's median speed, once, as the profile is fixed: its column of
 * speeds (stride n) is reordered in place, never read again. */
static double median_speed(sp_state *s, size_t i)
{
	size_t k = (size_t)s->n_speeds[i];
	return k ? gsl_stats_median(s->speeds + i, s->n, k) : 0.0;
}

static lbs_status sp_plan(void *state, const lbs_observation *obs, int64_t *batch, bool *changed,
			  lbs_error *err)
{
	sp_state *s = state;
	lbs_status st;
	*changed = false;
	if (obs->iteration == 0) {
		lbs_split_even(s->global_batch, s->n, batch);
		*changed = true;
		return LBS_OK;
	}
	if (s->fixed)
		return LBS_OK;
	/* obs describes iteration obs->iteration - 1: a warm-up one is
	 * neither profiled nor counted; the even split goes on. */
	const int64_t skip = s->opt.skip_iterations;
	if (obs->iteration <= skip)
		return LBS_OK;
	for (size_t i = 0; i < s->n; i++) {
		s->samples[i] += (double)obs->batch[i];
		s->seconds[i] += obs->compute_s[i];
	}
	if (s->opt.estimator == 1 && (st = keep_speeds(s, obs, err)) != LBS_OK)
		return st;
	/* Profiling goes on until every worker has been measured: with B < N
	 * the even split leaves some idle, so each profiling iteration gives
	 * its B samples to the workers with the fewest measured so far. */
	bool unmeasured = false;
	for (size_t i = 0; i < s->n; i++)
		unmeasured |= s->samples[i] == 0 && s->caps[i] > 0;
	/* (bounded: N more iterations measure everyone a cap lets in) */
	const int64_t profiled = obs->iteration - skip;
	if (profiled < s->opt.profile_iterations ||
	    (unmeasured && profiled < s->opt.profile_iterations + (int64_t)s->n)) {
		if (s->global_batch < (int64_t)s->n) {
			for (size_t i = 0; i < s->n; i++)
				batch[i] = 0;
			for (int64_t k = 0; k < s->global_batch; k++) {
				size_t best = s->n;
				for (size_t i = 0; i < s->n; i++)
					if (!batch[i] && s->caps[i] > 0 &&
					    (best == s->n || s->samples[i] < s->samples[best]))
						best = i;
				if (best == s->n) { /* caps above 1 hold the rest: back to even */
					lbs_split_even(s->global_batch, s->n, batch);
					break;
				}
				batch[best] = 1;
			}
			*changed = true;
		}
		return LBS_OK;
	}
	double *speed = lbs_calloc(s->n, sizeof *speed, err);
	if (!speed)
		return LBS_EINTERNAL;
	for (size_t i = 0; i < s->n; i++)
		speed[i] = s->opt.estimator == 1 ? median_speed(s, i)
			   : s->seconds[i] > 0	  ? s->samples[i] / s->seconds[i]
						  : 0.0;
	bool ok = lbs_split_proportional(s->global_batch, s->n, speed, s->caps, batch);
	free(speed);
	if (!ok)
		return lbs_error_set(err, LBS_EINPUT,
				     "static-proportional: the profiled speeds cannot hold the global batch "
				     "(every worker measured at zero speed?)");
	s->fixed = *changed = true;
	return LBS_OK;
}

static size_t sp_vars(const void *state, lbs_policy_var *out, size_t max)
{
	const sp_state *s = state;
	if (max < 1)
		return 0;
	out[0] = (lbs_policy_var){ "profiled", s->fixed ? 1.0 : 0.0 };
	return 1;
}

const lbs_policy_ops lbs_policy_static_proportional = {
	.name = "static-proportional",
	.summary = "batch proportional to each worker's speed, profiled once at the start "
		   "(removes fixed heterogeneity, not variation)",
	.options = sp_keys,
	.n_options = sizeof sp_keys / sizeof sp_keys[0],
	.options_size = sizeof(sp_options),
	.create = sp_create,
	.plan = sp_plan,
	.vars = sp_vars,
	.destroy = sp_destroy,
};
