/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Replaying a series one step ahead through a predictor and scoring it:
 * at each step the predictor forecasts, then is shown the truth. */
#ifndef LBS_PREDICT_EVAL_H
#define LBS_PREDICT_EVAL_H

#include "models/predict.h"

typedef struct lbs_predict_errors {
	double sse, sae, sape;
	long steps, ape_steps, fallbacks;
} lbs_predict_errors;

/* Replays y[0..n) (with readings x[t * n_exog + j] seen at decision time t)
 * through a fresh predictor, adding the errors of steps t >= skip to *acc.
 * A forecast that is not a positive number is replaced by the last value
 * (the naive forecast) and counted as a fallback. */
lbs_status lbs_predict_replay(const lbs_predictor_ops *ops, const lbs_kv *options, size_t n_options,
			      const double *y, const double *x, size_t n, size_t n_exog, size_t skip,
			      uint64_t seed, lbs_predict_errors *acc, lbs_error *err);

double lbs_predict_rmse(const lbs_predict_errors *a);
double lbs_predict_mae(const lbs_predict_errors *a);
double lbs_predict_mape(const lbs_predict_errors *a); /* percent */

#endif
