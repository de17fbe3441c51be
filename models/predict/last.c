/* SPDX-License-Identifier: GPL-3.0-or-later */
/* last: predicts that the next speed equals the last one measured (the naive
 * forecast every other predictor must beat). */
#include <math.h>
#include <stdlib.h>

#include "models/predict.h"

typedef struct last_state {
	double speed;
} last_state;

static lbs_status last_create(const lbs_kv *options, size_t n_options, size_t n_exog, uint64_t seed,
			      void **state, lbs_error *err)
{
	(void)options, (void)n_options, (void)n_exog, (void)seed;
	last_state *s = lbs_calloc(1, sizeof *s, err);
	if (!s)
		return LBS_EINTERNAL;
	s->speed = NAN;
	*state = s;
	return LBS_OK;
}

static void last_observe(void *state, double speed, const double *exog)
{
	(void)exog;
	((last_state *)state)->speed = speed;
}

static double last_predict(void *state, const double *exog)
{
	(void)exog;
	return ((last_state *)state)->speed;
}

static void last_destroy(void *state) { free(state); }

const lbs_predictor_ops lbs_predictor_last = {
	.name = "last",
	.summary = "the last measured speed",
	.create = last_create,
	.observe = last_observe,
	.predict = last_predict,
	.destroy = last_destroy,
};
