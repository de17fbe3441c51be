/* SPDX-License-Identifier: GPL-3.0-or-later */
/* static: the BSP baseline. Every worker gets B/N samples (the first B mod N
 * workers one more) and keeps them for the whole run. */
#include <stdlib.h>

#include "models/policy.h"

typedef struct static_state {
	int64_t global_batch;
	size_t n;
} static_state;

static lbs_status static_create(const lbs_policy_env *env, const lbs_kv *options, size_t n_options,
				void **state, lbs_policy_info *info, lbs_error *err)
{
	(void)options, (void)n_options;
	static_state *s = lbs_calloc(1, sizeof *s, err);
	if (!s)
		return LBS_EINTERNAL;
	s->global_batch = env->global_batch;
	s->n = env->n_workers;
	info->fixed = true;
	*state = s;
	return LBS_OK;
}

static lbs_status static_plan(void *state, const lbs_observation *obs, int64_t *batch, bool *changed,
			      lbs_error *err)
{
	(void)err;
	const static_state *s = state;
	*changed = obs->iteration == 0;
	if (*changed)
		lbs_split_even(s->global_batch, s->n, batch);
	return LBS_OK;
}

static void static_destroy(void *state) { free(state); }

const lbs_policy_ops lbs_policy_static = {
	.name = "static",
	.summary = "equal split of the global batch, fixed for the whole run (the BSP baseline)",
	.create = static_create,
	.plan = static_plan,
	.destroy = static_destroy,
};
