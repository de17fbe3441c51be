/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Plugins: a policy or a speed predictor built apart from lbsim, as a
 * shared object that a scenario loads (doc/extending.md):
 *
 *   [policy]                        [predictor.mine]
 *   name = myrule                   plugin = mine.so
 *   plugin = myrule.so
 *
 * The shared object includes this header and defines two symbols:
 *
 *   const unsigned lbs_plugin_abi = LBS_PLUGIN_ABI;
 *   const lbs_policy_ops lbs_policy_plugin = { .name = "myrule", ... };
 *
 * (a predictor: `const lbs_predictor_ops lbs_predictor_plugin`). The table
 * is the same contract as a built-in's (models/policy.h, models/predict.h),
 * and the plugin may call the functions of the headers lbsim installs,
 * which the lbsim program that loads it provides: it links against
 * nothing of lbsim's (`pkg-config --cflags lbsim` gives the include
 * folder). lbsim refuses a plugin whose lbs_plugin_abi is not its own
 * LBS_PLUGIN_ABI, which changes whenever a struct or function that a
 * plugin sees changes, so an old plugin is rebuilt rather than misread. */
#ifndef LBS_PLUGIN_H
#define LBS_PLUGIN_H

#include "models/policy.h"
#include "models/predict.h"

#define LBS_PLUGIN_ABI 1u

/* The symbols lbsim looks up in a plugin. */
#define LBS_PLUGIN_ABI_SYMBOL "lbs_plugin_abi"
#define LBS_POLICY_PLUGIN_SYMBOL "lbs_policy_plugin"
#define LBS_PREDICTOR_PLUGIN_SYMBOL "lbs_predictor_plugin"

extern const unsigned lbs_plugin_abi;
extern const lbs_policy_ops lbs_policy_plugin;
extern const lbs_predictor_ops lbs_predictor_plugin;

#endif
