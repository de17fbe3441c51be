/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <gsl/gsl_fit.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/calib.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double lbs_calib_median(double *x, size_t n)
{
	if (n == 0)
		return NAN;
	qsort(x, n, sizeof *x, cmp_double);
	return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

static void judge(lbs_fit *f, const double *b, const double *t, size_t n)
{
	double mean = 0, sse = 0, sst = 0, ape = 0;
	for (size_t i = 0; i < n; i++)
		mean += t[i] / (double)n;
	for (size_t i = 0; i < n; i++) {
		double e = lbs_cost_time_s(&f->cost, (int64_t)b[i]) - t[i];
		sse += e * e;
		sst += (t[i] - mean) * (t[i] - mean);
		ape += fabs(e) / t[i];
	}
	f->n = n;
	f->r2 = sst > 0 ? 1.0 - sse / sst : 1.0;
	f->rmse_s = sqrt(sse / (double)n);
	f->mape = ape / (double)n;
}

static lbs_status fit_linear(const double *b, const double *t, size_t n, lbs_fit *f, lbs_error *err)
{
	double c0, c1, cov00, cov01, cov11, sumsq;
	if (gsl_fit_linear(b, 1, t, 1, n, &c0, &c1, &cov00, &cov01, &cov11, &sumsq))
		return lbs_error_set(err, LBS_EINPUT, "linear fit failed (are the batches all equal?)");
	if (c0 < 0 && gsl_fit_mul(b, 1, t, 1, n, &c1, &cov11, &sumsq) == 0)
		c0 = 0; /* through the origin rather than a negative fixed time */
	if (!(c1 >= 0))
		return lbs_error_set(err, LBS_EINPUT,
				     "the times fall as the batch grows: no linear cost model fits");
	f->cost = (lbs_cost){ .ops = &lbs_cost_linear, .kind = 0, .t0_s = c0, .per_sample_s = c1 };
	return LBS_OK;
}

static lbs_status fit_piecewise(const double *b, const double *t, size_t n, lbs_fit *f,
				lbs_error *err)
{
	double *x = malloc(n * sizeof *x), *w = malloc(n * sizeof *w);
	if (!x || !w) {
		free(x);
		free(w);
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	}
	double bmin = b[0], bmax = b[0];
	for (size_t i = 0; i < n; i++) {
		bmin = fmin(bmin, b[i]);
		bmax = fmax(bmax, b[i]);
		w[i] = 1.0 / (t[i] * t[i]);
	}
	double best = INFINITY;
	for (double s = bmin; s < bmax; s++) {
		for (size_t i = 0; i < n; i++)
			x[i] = b[i] > s ? b[i] - s : 0.0;
		double c0, c1, cov00, cov01, cov11, chisq;
		if (gsl_fit_wlinear(x, 1, w, 1, t, 1, n, &c0, &c1, &cov00, &cov01, &cov11, &chisq))
			continue;
		/* ties (within rounding) go to the smaller breakpoint */
		if (!(c1 >= 0) || !(c0 > 0) || !(isinf(best) || chisq < best - 1e-9 * best - 1e-20))
			continue;
		best = chisq;
		f->cost = (lbs_cost){ .ops = &lbs_cost_piecewise, .kind = 1, .t_flat_s = c0,
				      .per_sample_s = c1, .saturation_batch = (int64_t)s };
	}
	free(x);
	free(w);
	if (!isfinite(best))
		return lbs_error_set(err, LBS_EINPUT,
				     "no flat-then-linear fit with a positive flat time and a slope >= 0");
	return LBS_OK;
}

lbs_status lbs_calib_fit(const lbs_cost_ops *kind, const double *batch, const double *time_s,
			 size_t n, lbs_fit *fit, lbs_error *err)
{
	memset(fit, 0, sizeof *fit);
	size_t need = kind == &lbs_cost_piecewise ? 3 : 2;
	if (n < need)
		return lbs_error_set(err, LBS_EINPUT, "%zu points: a %s fit needs at least %zu", n,
				     kind->name, need);
	for (size_t i = 0; i < n; i++) {
		if (!(batch[i] >= 1) || batch[i] != floor(batch[i]) || !(time_s[i] > 0) ||
		    !isfinite(time_s[i]))
			return lbs_error_set(err, LBS_EINPUT,
					     "point %zu: batch %g, time %g s (expected a batch >= 1 and a "
					     "time > 0)", i + 1, batch[i], time_s[i]);
		for (size_t j = 0; j < i; j++)
			if (batch[j] == batch[i])
				return lbs_error_set(err, LBS_EINPUT, "batch %g measured twice", batch[i]);
	}
	lbs_status st = kind == &lbs_cost_piecewise ? fit_piecewise(batch, time_s, n, fit, err)
						     : fit_linear(batch, time_s, n, fit, err);
	if (st == LBS_OK)
		judge(fit, batch, time_s, n);
	return st;
}

lbs_status lbs_calib_heldout(const lbs_cost_ops *kind, const double *batch, const double *time_s,
			     size_t n, double *mape, size_t *n_heldout, lbs_error *err)
{
	*mape = 0;
	*n_heldout = 0;
	size_t need = kind == &lbs_cost_piecewise ? 3 : 2;
	if (n < need + 1)
		return LBS_OK;
	double *b = malloc(n * sizeof *b), *t = malloc(n * sizeof *t);
	if (!b || !t) {
		free(b);
		free(t);
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	}
	double bmin = INFINITY, bmax = -INFINITY;
	for (size_t i = 0; i < n; i++) {
		bmin = fmin(bmin, batch[i]);
		bmax = fmax(bmax, batch[i]);
	}
	lbs_status st = LBS_OK;
	double sum = 0;
	for (size_t out = 0; out < n && st == LBS_OK; out++) {
		if (batch[out] == bmin || batch[out] == bmax)
			continue;
		size_t m = 0;
		for (size_t i = 0; i < n; i++)
			if (i != out) {
				b[m] = batch[i];
				t[m++] = time_s[i];
			}
		lbs_fit f;
		if ((st = lbs_calib_fit(kind, b, t, m, &f, err)) != LBS_OK)
			break;
		sum += fabs(lbs_cost_time_s(&f.cost, (int64_t)batch[out]) - time_s[out]) / time_s[out];
		++*n_heldout;
	}
	free(b);
	free(t);
	if (st == LBS_OK && *n_heldout)
		*mape = sum / (double)*n_heldout;
	return st;
}
