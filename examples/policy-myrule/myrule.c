/* SPDX-License-Identifier: GPL-3.0-or-later */
/* myrule: an example policy plugin (doc/extending.md). Each worker gets a
 * share of the global batch proportional to the best speed it has shown
 * (samples per second of compute, the barrier's wait excluded), so that a
 * passing slowdown does not take its work away for good, as the last
 * speed alone would. The first `warmup` iterations run the even split.
 *
 * Example: two workers, 1 ms and 3 ms a sample, global batch 400. At
 * iteration 0 each gets 200 (0.2 s and 0.6 s); from iteration 1 their best
 * speeds are 1000 and 333.3 samples/s, so they get 300 and 100 (0.3 s
 * each), and keep them while nothing is faster.
 *
 * Build it against an installed lbsim and run it:
 *   cc -shared -fPIC -O2 $(pkg-config --cflags lbsim) myrule.c -o myrule.so
 *   lbsim scenario.ini --plugins --set policy.plugin=./myrule.so --policy myrule */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#include "models/plugin.h"

typedef struct myrule_options {
	int64_t warmup;
} myrule_options;

static const lbs_key_spec myrule_keys[] = {
	{ "warmup", LBS_T_INT, offsetof(myrule_options, warmup), "1", 1, 1e6, 0, NULL, NULL,
	  "iterations run with the even split before the first measured split" },
};

typedef struct myrule_state {
	myrule_options opt;
	int64_t global_batch;
	size_t n;
	const int64_t *caps;
	double *best;  /* best samples/s seen per worker; 0 before any */
	int64_t *next; /* the split the best speeds give */
	double changes;
} myrule_state;

static void myrule_destroy(void *state)
{
	myrule_state *s = state;
	if (s) {
		free(s->best);
		free(s->next);
		free(s);
	}
}

static lbs_status myrule_create(const lbs_policy_env *env, const lbs_kv *options, size_t n_options,
				void **state, lbs_policy_info *info, lbs_error *err)
{
	(void)info; /* no look-ahead, no stealing */
	myrule_state *s = lbs_calloc(1, sizeof *s, err);
	if (!s)
		return LBS_EINTERNAL;
	lbs_status st = lbs_options_parse(myrule_keys, 1, "policy.myrule", options, n_options, &s->opt, err);
	s->global_batch = env->global_batch;
	s->n = env->n_workers;
	s->caps = env->max_batch;
	if (st == LBS_OK && (!(s->best = lbs_calloc(s->n, sizeof *s->best, err)) ||
			     !(s->next = lbs_calloc(s->n, sizeof *s->next, err))))
		st = LBS_EINTERNAL;
	if (st != LBS_OK) {
		myrule_destroy(s);
		return st;
	}
	*state = s;
	return LBS_OK;
}

static lbs_status myrule_plan(void *state, const lbs_observation *obs, int64_t *batch, bool *changed,
			      lbs_error *err)
{
	myrule_state *s = state;
	*changed = false;
	if (obs->iteration == 0) {
		lbs_split_even(s->global_batch, s->n, batch);
		*changed = true;
		return LBS_OK;
	}
	bool faster = false;
	for (size_t i = 0; i < s->n; i++)
		if (obs->batch[i] > 0 && obs->compute_s[i] > 0) {
			double speed = (double)obs->batch[i] / obs->compute_s[i];
			if (speed > s->best[i]) {
				s->best[i] = speed;
				faster = true;
			}
		}
	if (obs->iteration < s->opt.warmup || !faster)
		return LBS_OK;
	for (size_t i = 0; i < s->n; i++)
		if (!(s->best[i] > 0)) /* never measured (it had no samples): keep */
			return LBS_OK;
	if (!lbs_split_proportional(s->global_batch, s->n, s->best, s->caps, s->next))
		return lbs_error_set(err, LBS_EINPUT, "policy myrule: the memory caps cannot hold the "
				     "global batch of %lld", (long long)s->global_batch);
	for (size_t i = 0; i < s->n; i++)
		if (batch[i] != s->next[i]) {
			batch[i] = s->next[i];
			*changed = true;
		}
	s->changes += *changed;
	return LBS_OK;
}

static size_t myrule_vars(const void *state, lbs_policy_var *out, size_t max)
{
	const myrule_state *s = state;
	lbs_policy_var v[] = { { "splits_changed", s->changes } };
	return lbs_vars_copy(out, max, v, 1);
}

const unsigned lbs_plugin_abi = LBS_PLUGIN_ABI;

const lbs_policy_ops lbs_policy_plugin = {
	.name = "myrule",
	.summary = "proportional to each worker's best measured speed (an example plugin)",
	.options = myrule_keys,
	.n_options = sizeof myrule_keys / sizeof *myrule_keys,
	.options_size = sizeof(myrule_options),
	.create = myrule_create,
	.plan = myrule_plan,
	.vars = myrule_vars,
	.destroy = myrule_destroy,
};
