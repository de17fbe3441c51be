/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A policy plugin that fails while running (tests/e2e/plugin.sh): the even
 * split, until iteration `at` ([policy.failat] at; 0: never), where its plan
 * returns an error. A sweep checks every point before it runs (creating its
 * policy), so only running the point finds this: the failure of one point
 * among others of its sweep job. */
#include <stddef.h>
#include <stdlib.h>

#include "models/plugin.h"

typedef struct failat_state {
	int64_t at, global_batch;
	size_t n;
} failat_state;

static const lbs_key_spec failat_keys[] = {
	{ "at", LBS_T_INT, offsetof(failat_state, at), "0", 0, 1e9, 0, NULL, NULL,
	  "the iteration whose plan fails (0: none)" },
};

static lbs_status failat_create(const lbs_policy_env *env, const lbs_kv *options, size_t n_options,
				void **state, lbs_policy_info *info, lbs_error *err)
{
	(void)info;
	failat_state *s = lbs_calloc(1, sizeof *s, err);
	if (!s)
		return LBS_EINTERNAL;
	lbs_status st = lbs_options_parse(failat_keys, 1, "policy.failat", options, n_options, s, err);
	if (st != LBS_OK) {
		free(s);
		return st;
	}
	s->global_batch = env->global_batch;
	s->n = env->n_workers;
	*state = s;
	return LBS_OK;
}

static lbs_status failat_plan(void *state, const lbs_observation *obs, int64_t *batch, bool *changed,
			      lbs_error *err)
{
	failat_state *s = state;
	if (s->at && obs->iteration == s->at)
		return lbs_error_set(err, LBS_EINPUT, "policy failat: failing at iteration %lld, as asked",
				     (long long)s->at);
	*changed = obs->iteration == 0;
	if (*changed)
		lbs_split_even(s->global_batch, s->n, batch);
	return LBS_OK;
}

static void failat_destroy(void *state) { free(state); }

const unsigned lbs_plugin_abi = LBS_PLUGIN_ABI;

const lbs_policy_ops lbs_policy_plugin = {
	.name = "failat",
	.summary = "the even split, failing at iteration `at` (a test plugin)",
	.options = failat_keys,
	.n_options = 1,
	.options_size = sizeof(failat_state),
	.create = failat_create,
	.plan = failat_plan,
	.destroy = failat_destroy,
};
