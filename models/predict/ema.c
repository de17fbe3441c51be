/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ema: exponential moving average of measured speeds,
 * s <- alpha * v + (1 - alpha) * s, starting from the first measurement.
 * One of the two baselines LB-BSP's NARX is compared with (Chen et al.,
 * SoCC'20). */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#include "models/predict.h"

typedef struct ema_options {
	double alpha;
} ema_options;

static const lbs_key_spec ema_keys[] = {
	{ "alpha", LBS_T_REAL, offsetof(ema_options, alpha), "0.5", 0, 1, LBS_K_MIN_OPEN, NULL, NULL,
	  "smoothing factor: weight of the newest measurement" },
};

typedef struct ema_state {
	ema_options opt;
	double s;
	bool seen;
} ema_state;

static lbs_status ema_create(const lbs_kv *options, size_t n_options, size_t n_exog, uint64_t seed,
			     void **state, lbs_error *err)
{
	(void)n_exog, (void)seed;
	ema_state *s = lbs_calloc(1, sizeof *s, err);
	if (!s)
		return LBS_EINTERNAL;
	lbs_status st = lbs_options_parse(ema_keys, 1, "predictor.ema", options, n_options, &s->opt, err);
	if (st != LBS_OK) {
		free(s);
		return st;
	}
	*state = s;
	return LBS_OK;
}

static void ema_observe(void *state, double speed, const double *exog)
{
	(void)exog;
	ema_state *s = state;
	if (!isfinite(speed))
		return;
	s->s = s->seen ? s->opt.alpha * speed + (1 - s->opt.alpha) * s->s : speed;
	s->seen = true;
}

static double ema_predict(void *state, const double *exog)
{
	(void)exog;
	const ema_state *s = state;
	return s->seen ? s->s : NAN;
}

static void ema_destroy(void *state) { free(state); }

const lbs_predictor_ops lbs_predictor_ema = {
	.name = "ema",
	.summary = "exponential moving average of the measured speeds",
	.options = ema_keys,
	.n_options = 1,
	.options_size = sizeof(ema_options),
	.create = ema_create,
	.observe = ema_observe,
	.predict = ema_predict,
	.destroy = ema_destroy,
};
