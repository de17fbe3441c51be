/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Broken policy plugins for tests/e2e/plugin.sh, one per -D:
 * WRONG_ABI (built for ABI 999), NO_ABI (no lbs_plugin_abi), NO_TABLE (no
 * lbs_policy_plugin), BUILTIN_NAME (a policy called `static`), NO_PLAN
 * (no plan function), MISSING_SYMBOL (calls a function lbsim lacks),
 * GARBAGE_FN (plan points nowhere), FOREIGN_FN (destroy is libc's abort,
 * not the plugin's code), GARBAGE_NAME (name points nowhere), BAD_OPTION
 * (an option whose value lies past the options struct), CONSTRUCTOR (a
 * constructor that creates the file $LBSIM_TEST_MARK when loaded: whether
 * a plugin was loaded at all). */
#include <stdlib.h>
#include <fcntl.h>
#include <unistd.h>

#include "models/plugin.h"

#ifdef CONSTRUCTOR
__attribute__((constructor)) static void mark(void)
{
	const char *m = getenv("LBSIM_TEST_MARK");
	if (m)
		close(open(m, O_WRONLY | O_CREAT, 0644));
}
#endif

#ifdef BAD_OPTION
typedef struct { int64_t warmup; } b_options;
static const lbs_key_spec b_keys[] = {
	{ "warmup", LBS_T_INT, 4096, "1", 0, 10, 0, NULL, NULL, "past the struct" },
};
#endif

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
#if defined(BUILTIN_NAME)
	.name = "static",
#elif defined(GARBAGE_NAME)
	.name = (const char *)0x10,
#else
	.name = "broken",
#endif
	.summary = "a broken plugin",
	.create = b_create,
#if defined(GARBAGE_FN)
	.plan = (lbs_status (*)(void *, const lbs_observation *, int64_t *, bool *, lbs_error *))0x12345,
#elif !defined(NO_PLAN)
	.plan = b_plan,
#endif
#ifdef FOREIGN_FN
	.destroy = (void (*)(void *))abort,
#else
	.destroy = b_destroy,
#endif
#ifdef BAD_OPTION
	.options = b_keys,
	.n_options = 1,
	.options_size = sizeof(b_options),
#endif
};
#endif
