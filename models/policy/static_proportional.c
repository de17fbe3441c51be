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
 * policy is static by design (lbbsp-cpu, dbs and lbbsp-gpu probe). */
#include <stddef.h>
#include <stdlib.h>

#include "models/policy.h"

typedef struct sp_options {
	int64_t profile_iterations;
} sp_options;

static const lbs_key_spec sp_keys[] = {
	{ "profile_iterations", LBS_T_INT, offsetof(sp_options, profile_iterations), "1", 1, 1e6, 0,
	  NULL, NULL, "iterations run with the even split to measure each worker's speed" },
};

typedef struct sp_state {
	sp_options opt;
	int64_t global_batch;
	size_t n;
	const int64_t *caps;
	double *samples, *seconds; /* summed over the profiling iterations */
	bool fixed;
} sp_state;

static void sp_destroy(void *state)
{
	sp_state *s = state;
	if (s) {
		free(s->samples);
		free(s->seconds);
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
	lbs_status st = lbs_options_parse(sp_keys, 1, "policy.static-proportional", options, n_options,
					  &s->opt, err);
	s->global_batch = env->global_batch;
	s->n = env->n_workers;
	s->caps = env->max_batch;
	if (st == LBS_OK && (!(s->samples = lbs_calloc(s->n, sizeof(double), err)) ||
			     !(s->seconds = lbs_calloc(s->n, sizeof(double), err))))
		st = LBS_EINTERNAL;
	if (st != LBS_OK) {
		sp_destroy(s);
		return st;
	}
	*state = s;
	return LBS_OK;
}

static lbs_status sp_plan(void *state, const lbs_observation *obs, int64_t *batch, bool *changed,
			  lbs_error *err)
{
	sp_state *s = state;
	*changed = false;
	if (obs->iteration == 0) {
		lbs_split_even(s->global_batch, s->n, batch);
		*changed = true;
		return LBS_OK;
	}
	if (s->fixed)
		return LBS_OK;
	for (size_t i = 0; i < s->n; i++) {
		s->samples[i] += (double)obs->batch[i];
		s->seconds[i] += obs->compute_s[i];
	}
	/* Profiling goes on until every worker has been measured: with B < N
	 * the even split leaves some idle, so each profiling iteration gives
	 * its B samples to the workers with the fewest measured so far. */
	bool unmeasured = false;
	for (size_t i = 0; i < s->n; i++)
		unmeasured |= s->samples[i] == 0 && s->caps[i] > 0;
	/* (bounded: N more iterations measure everyone a cap lets in) */
	if (obs->iteration < s->opt.profile_iterations ||
	    (unmeasured && obs->iteration < s->opt.profile_iterations + (int64_t)s->n)) {
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
		speed[i] = s->seconds[i] > 0 ? s->samples[i] / s->seconds[i] : 0.0;
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
