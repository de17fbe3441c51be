/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Broken policy plugins for tests/e2e/plugin.sh, one per -D:
 * WRONG_ABI (built for ABI 999), NO_ABI (no lbs_plugin_abi), NO_TABLE (no
 * lbs_policy_plugin), BUILTIN_NAME (a policy called `static`), NO_PLAN
 * (no plan function), MISSING_SYMBOL (calls a function lbsim lacks). */
#include "models/plugin.h"

#ifdef MISSING_SYMBOL
lbs_status lbs_no_such_function(lbs_error *err);
#endif

static lbs_status b_create(const lbs_policy_env *env, const lbs_kv *options, size_t n_options,
			   void **state, lbs_policy_info *info, lbs_error *err)
{
	(void)env, (void)options, (void)n_options, (void)info;
	*state = NULL;
#ifdef MISSING_SYMBOL
	return lbs_no_such_function(err);
#else
	(void)err;
	return LBS_OK;
#endif
}

static lbs_status b_plan(void *state, const lbs_observation *obs, int64_t *batch, bool *changed,
			 lbs_error *err)
{
	(void)state, (void)obs, (void)batch, (void)err;
	*changed = false;
	return LBS_OK;
}

static void b_destroy(void *state) { (void)state; }

#ifndef NO_ABI
#ifdef WRONG_ABI
const unsigned lbs_plugin_abi = 999;
#else
const unsigned lbs_plugin_abi = LBS_PLUGIN_ABI;
#endif
#endif

#ifndef NO_TABLE
const lbs_policy_ops lbs_policy_plugin = {
#ifdef BUILTIN_NAME
	.name = "static",
#else
	.name = "broken",
#endif
	.summary = "a broken plugin",
	.create = b_create,
#ifndef NO_PLAN
	.plan = b_plan,
#endif
	.destroy = b_destroy,
};
#endif
