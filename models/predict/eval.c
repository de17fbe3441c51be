/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "models/predict/eval.h"

#include <math.h>
#include <string.h>

lbs_status lbs_predict_replay(const lbs_predictor_ops *ops, const lbs_kv *options, size_t n_options,
			      const double *y, const double *x, size_t n, size_t n_exog, size_t skip,
			      uint64_t seed, lbs_predict_errors *acc, lbs_error *err)
{
	void *st = NULL;
	lbs_status s = ops->create(options, n_options, n_exog, seed, &st, err);
	if (s != LBS_OK)
		return s;
	double last = NAN;
	for (size_t t = 0; t < n; t++) {
		const double *xt = n_exog ? x + t * n_exog : NULL;
		double p = ops->predict(st, xt);
		if (!isfinite(p) || p <= 0) { /* nothing to go on: the naive forecast */
			p = last;
			if (t >= skip)
				acc->fallbacks++;
		}
		if (t >= skip && isfinite(p) && isfinite(y[t])) {
			double e = p - y[t];
			acc->sse += e * e;
			acc->sae += fabs(e);
			if (y[t] != 0) {
				acc->sape += fabs(e / y[t]);
				acc->ape_steps++;
			}
			acc->steps++;
		}
		if (isfinite(y[t])) {
			ops->observe(st, y[t], xt);
			last = y[t];
		}
	}
	ops->destroy(st);
	return LBS_OK;
}

double lbs_predict_rmse(const lbs_predict_errors *a) { return a->steps ? sqrt(a->sse / (double)a->steps) : NAN; }
double lbs_predict_mae(const lbs_predict_errors *a) { return a->steps ? a->sae / (double)a->steps : NAN; }
double lbs_predict_mape(const lbs_predict_errors *a)
{
	return a->ape_steps ? 100.0 * a->sape / (double)a->ape_steps : NAN;
}
