/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Speed predictors (DESIGN.md, "Contracts"): each worker's predictor is told
 * the speed it measured (samples per second) and the resource readings seen
 * with it, and asked for the next iteration's speed given the readings at
 * decision time. Adding a predictor is one file plus one line in the registry
 * (models/predict/registry.c). */
#ifndef LBS_PREDICT_H
#define LBS_PREDICT_H

#include <stddef.h>

#include "sim/error.h"
#include "sim/keys.h"

typedef struct lbs_predictor_ops {
	const char *name;
	const char *summary;
	const lbs_key_spec *options;
	size_t n_options;
	lbs_status (*create)(const lbs_kv *options, size_t n_options, void **state, lbs_error *err);
	/* Records a measured speed and the exogenous readings (n_exog values). */
	void (*observe)(void *state, double speed, const double *exog, size_t n_exog);
	/* Predicts the next speed from the readings at decision time; returns a
	 * value <= 0 when it has seen nothing yet. */
	double (*predict)(void *state, const double *exog, size_t n_exog);
	void (*destroy)(void *state);
} lbs_predictor_ops;

/* last: the next speed is the last measured one. */
extern const lbs_predictor_ops lbs_predictor_last;

extern const lbs_predictor_ops *const lbs_predictors[];
const lbs_predictor_ops *lbs_predictor_find(const char *name);

#endif
