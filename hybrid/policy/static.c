/* SPDX-License-Identifier: GPL-3.0-or-later */
/* static: every replica runs the same micro-batches, M / d, throughout (the
 * baseline every other policy is measured against; Megatron-LM's and
 * DeepSpeed's behaviour). */
#include "hybrid/policy.h"

static lbs_status static_create(const lbs_hy_policy_env *env, const lbs_kv *options, size_t n_options, void **state,
				bool *lookahead, lbs_error *err)
{
	(void)env, (void)options, (void)n_options, (void)err;
	*state = NULL;
	*lookahead = false;
	return LBS_OK;
}

static lbs_status static_plan(void *state, const lbs_hy_observation *obs, lbs_hy_decision *dec, lbs_error *err)
{
	(void)state, (void)obs, (void)err;
	dec->changed = false;
	return LBS_OK;
}

static void static_destroy(void *state) { (void)state; }

const lbs_hy_policy_ops lbs_hy_policy_static = {
	.name = "static",
	.summary = "every replica runs M / d micro-batches throughout (the baseline)",
	.create = static_create,
	.plan = static_plan,
	.destroy = static_destroy,
};
