/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A predictor plugin that is the built-in `last` again, under its own name
 * (tests/e2e/plugin.sh): a run with it must equal a run with `last`. */
#include <math.h>
#include <stdlib.h>

#include "models/plugin.h"

static lbs_status again_create(const lbs_kv *options, size_t n_options, size_t n_exog, uint64_t seed,
			       void **state, lbs_error *err)
{
	(void)options, (void)n_options, (void)n_exog, (void)seed;
	double *s = lbs_calloc(1, sizeof *s, err);
	if (!s)
		return LBS_EINTERNAL;
	*s = NAN;
	*state = s;
	return LBS_OK;
}

static void again_observe(void *state, double speed, const double *exog)
{
	(void)exog;
	*(double *)state = speed;
}

static double again_predict(void *state, const double *exog)
{
	(void)exog;
	return *(double *)state;
}

static void again_destroy(void *state) { free(state); }

const unsigned lbs_plugin_abi = LBS_PLUGIN_ABI;

const lbs_predictor_ops lbs_predictor_plugin = {
	.name = "last-again",
	.summary = "the last measured speed (a plugin)",
	.create = again_create,
	.observe = again_observe,
	.predict = again_predict,
	.destroy = again_destroy,
};
