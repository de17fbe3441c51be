/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Speed predictors (doc/predictors.md): each worker's predictor is told
 * the speed it measured (samples per second) with the exogenous readings
 * seen alongside (e.g. CPU and memory utilisation of the machine), and
 * asked for the next iteration's speed given the readings available at
 * decision time. Adding a predictor is one file plus one line in the
 * registry (models/predict/registry.c). */
#ifndef LBS_PREDICT_H
#define LBS_PREDICT_H

#include <stddef.h>
#include <stdint.h>

#include "models/policy.h"
#include "util/error.h"
#include "util/keys.h"

typedef struct lbs_predictor_ops {
	const char *name;
	const char *summary;
	const lbs_key_spec *options; /* keys it accepts in [predictor.NAME] */
	size_t n_options;
	size_t options_size;
	/* n_exog: readings per observation (0 when there are none). seed:
	 * for anything random (initial weights), from the worker's own stream. */
	lbs_status (*create)(const lbs_kv *options, size_t n_options, size_t n_exog, uint64_t seed,
			     void **state, lbs_error *err);
	/* Records a measured speed and the readings seen with it. */
	void (*observe)(void *state, double speed, const double *exog);
	/* Predicts the next speed from the readings at decision time; returns a
	 * value <= 0 or NaN when it has nothing to go on yet. */
	double (*predict)(void *state, const double *exog);
	/* Optional: counters and parameters worth recording (fits, fallbacks). */
	size_t (*vars)(const void *state, lbs_policy_var *out, size_t max);
	void (*destroy)(void *state);
} lbs_predictor_ops;

/* last: the next speed is the last measured one. */
extern const lbs_predictor_ops lbs_predictor_last;
/* ema: exponential moving average. */
extern const lbs_predictor_ops lbs_predictor_ema;
/* arima: ARIMA(p,d,q) by conditional sum of squares on a rolling window. */
extern const lbs_predictor_ops lbs_predictor_arima;
/* narx: a one-hidden-layer network over tapped delay lines of speed and
 * readings, trained online by Levenberg-Marquardt. */
extern const lbs_predictor_ops lbs_predictor_narx;
/* arx: the linear model over the same delay lines, by ridge least squares. */
extern const lbs_predictor_ops lbs_predictor_arx;

extern const lbs_predictor_ops *const lbs_predictors[];
const lbs_predictor_ops *lbs_predictor_find(const char *name);
void lbs_predictor_names(char *buf, size_t len);
void lbs_predictor_document(FILE *out);

#endif
