/* SPDX-License-Identifier: GPL-3.0-or-later */
/* arima: ARIMA(p,d,q) one-step forecasts of a worker's speed (Box & Jenkins).
 * The last `window` measurements are differenced d times; an ARMA(p,q) with
 * a constant,
 *     z_t = c + sum_i phi_i z_{t-i} + e_t + sum_j theta_j e_{t-j},
 * is fitted by conditional sum of squares (pre-sample residuals zero) with
 * GSL's trust-region Levenberg-Marquardt, every `refit` measurements, warm
 * started from the last fit. The forecast is c + sum phi z + sum theta e,
 * integrated back d times. When a fit fails (too few points, no
 * convergence, non-finite or explosive coefficients) the last good fit is
 * kept; with none, the forecast falls back to the last measurement. Both
 * are counted (vars: fits, failed_fits, fallbacks). */
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_poly.h>
#include <gsl/gsl_vector.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "models/predict.h"

typedef struct arima_options {
	int64_t p, d, q;
	int64_t window;
	int64_t refit;
} arima_options;

static const lbs_key_spec arima_keys[] = {
	{ "p", LBS_T_INT, offsetof(arima_options, p), "2", 0, 8, 0, NULL, NULL, "autoregressive order" },
	{ "d", LBS_T_INT, offsetof(arima_options, d), "0", 0, 2, 0, NULL, NULL, "times differenced" },
	{ "q", LBS_T_INT, offsetof(arima_options, q), "1", 0, 8, 0, NULL, NULL, "moving-average order" },
	{ "window", LBS_T_INT, offsetof(arima_options, window), "100", 10, 100000, 0, NULL, NULL,
	  "measurements the model is fitted on (rolling)" },
	{ "refit", LBS_T_INT, offsetof(arima_options, refit), "10", 1, 100000, 0, NULL, NULL,
	  "measurements between refits" },
};

typedef struct arima_state {
	arima_options opt;
	double *y;          /* the last `window` measurements, oldest first */
	size_t n;
	double *z, *e;      /* differenced window and residuals (scratch) */
	double *theta;      /* c, phi_1..p, theta_1..q of the last good fit */
	bool fitted;
	size_t since_fit;
	long fits, failed_fits, fallbacks;
} arima_state;

static void arima_destroy(void *state)
{
	arima_state *s = state;
	if (s) {
		free(s->y);
		free(s->z);
		free(s->e);
		free(s->theta);
		free(s);
	}
}

static lbs_status arima_create(const lbs_kv *options, size_t n_options, size_t n_exog, uint64_t seed,
			       void **state, lbs_error *err)
{
	(void)n_exog, (void)seed;
	arima_state *s = lbs_calloc(1, sizeof *s, err);
	if (!s)
		return LBS_EINTERNAL;
	lbs_status st = lbs_options_parse(arima_keys, sizeof arima_keys / sizeof arima_keys[0],
					  "predictor.arima", options, n_options, &s->opt, err);
	size_t w = (size_t)s->opt.window, np = (size_t)(1 + s->opt.p + s->opt.q);
	/* A fit needs p + 3 * (coefficients) points after differencing. */
	if (st == LBS_OK && (size_t)s->opt.window < (size_t)s->opt.p + 3 * np + (size_t)s->opt.d)
		st = lbs_error_set(err, LBS_EINPUT, "[predictor.arima] window: %lld measurements are too "
				   "few to fit %zu coefficients", (long long)s->opt.window, np);
	if (st == LBS_OK && (!(s->y = lbs_calloc(w, sizeof *s->y, err)) ||
			     !(s->z = lbs_calloc(w, sizeof *s->z, err)) ||
			     !(s->e = lbs_calloc(w, sizeof *s->e, err)) ||
			     !(s->theta = lbs_calloc(np, sizeof *s->theta, err))))
		st = LBS_EINTERNAL;
	if (st != LBS_OK) {
		arima_destroy(s);
		return st;
	}
	*state = s;
	return LBS_OK;
}

/* z = the window differenced d times; returns its length. */
static size_t difference(const arima_state *s, double *z)
{
	size_t m = s->n;
	memcpy(z, s->y, m * sizeof *z);
	for (int64_t k = 0; k < s->opt.d && m > 0; k++, m--)
		for (size_t t = 0; t + 1 < m; t++)
			z[t] = z[t + 1] - z[t];
	return m;
}

typedef struct css_ctx {
	const double *z;
	size_t m;
	int p, q;
	double *e;
} css_ctx;

/* Residuals e_t for t >= p under coefficients th (c, phi, theta). */
static void residuals(const css_ctx *c, const double *th, double *out)
{
	for (size_t t = 0; t < c->m; t++) {
		if (t < (size_t)c->p) {
			c->e[t] = 0;
			continue;
		}
		double f = th[0];
		for (int i = 1; i <= c->p; i++)
			f += th[i] * c->z[t - (size_t)i];
		for (int j = 1; j <= c->q && (size_t)j <= t; j++)
			f += th[c->p + j] * c->e[t - (size_t)j];
		c->e[t] = c->z[t] - f;
		if (out)
			out[t - (size_t)c->p] = c->e[t];
	}
}

static int css_f(const gsl_vector *x, void *params, gsl_vector *f)
{
	css_ctx *c = params;
	residuals(c, x->data, f->data);
	for (size_t i = 0; i < f->size; i++)
		if (!isfinite(f->data[i]))
			return GSL_EDOM;
	return GSL_SUCCESS;
}

/* Whether all roots of 1 + sign * (a_1 z + ... + a_k z^k) lie outside the
 * unit circle (GSL's companion-matrix root finder). */
static bool roots_outside(const double *a, int64_t k, double sign)
{
	while (k > 0 && a[k - 1] == 0)
		k--;
	if (k == 0)
		return true;
	double coef[9], z[16];
	coef[0] = 1;
	for (int64_t i = 1; i <= k; i++)
		coef[i] = sign * a[i - 1];
	gsl_poly_complex_workspace *w = gsl_poly_complex_workspace_alloc((size_t)k + 1);
	bool ok = w && gsl_poly_complex_solve(coef, (size_t)k + 1, w, z) == GSL_SUCCESS;
	for (int64_t i = 0; ok && i < k; i++)
		ok = hypot(z[2 * i], z[2 * i + 1]) > 1.0 + 1e-9;
	if (w)
		gsl_poly_complex_workspace_free(w);
	return ok;
}

/* The exact Jacobian of the residuals, by the recursions
 *   de_t/dc       = -1        - sum_j theta_j de_{t-j}/dc
 *   de_t/dphi_i   = -z_{t-i}  - sum_j theta_j de_{t-j}/dphi_i
 *   de_t/dtheta_k = -e_{t-k}  - sum_j theta_j de_{t-j}/dtheta_k
 * (pre-sample terms zero); row t - p of J holds de_t/dx. */
static int css_df(const gsl_vector *x, void *params, gsl_matrix *J)
{
	css_ctx *c = params;
	const double *th = x->data;
	residuals(c, th, NULL);
	size_t p = (size_t)c->p, np = J->size2;
	for (size_t t = p; t < c->m; t++) {
		double *row = J->data + (t - p) * J->tda;
		for (size_t k = 0; k < np; k++) {
			double d = k == 0		? -1.0
				   : k <= p		? -c->z[t - k]
				   : t >= k - p ? -c->e[t - (k - p)] : 0.0;
			if (k > p && t - (k - p) < p)
				d = 0.0; /* pre-sample residual */
			for (size_t j = 1; j <= (size_t)c->q && j <= t - p; j++)
				d -= th[p + j] * J->data[(t - p - j) * J->tda + k];
			row[k] = d;
		}
	}
	return GSL_SUCCESS;
}

/* A fit is usable when its coefficients are finite, its AR part stationary
 * and its MA part invertible. */
static bool usable(const arima_state *s, const double *th)
{
	for (int64_t i = 0; i < 1 + s->opt.p + s->opt.q; i++)
		if (!isfinite(th[i]))
			return false;
	return roots_outside(th + 1, s->opt.p, -1.0) && roots_outside(th + 1 + s->opt.p, s->opt.q, 1.0);
}

static void fit(arima_state *s)
{
	size_t m = difference(s, s->z);
	size_t np = (size_t)(1 + s->opt.p + s->opt.q);
	s->fits++;
	if (m < (size_t)s->opt.p + 3 * np) {
		s->failed_fits++;
		return;
	}
	/* Fit on the centred series: with the raw one, the constant and the AR
	 * coefficients are nearly collinear (every z is close to the mean) and
	 * the solver stops early. c is converted back afterwards. */
	double mean = 0;
	for (size_t t = 0; t < m; t++)
		mean += s->z[t];
	mean /= (double)m;
	for (size_t t = 0; t < m; t++)
		s->z[t] -= mean;
	css_ctx ctx = { s->z, m, (int)s->opt.p, (int)s->opt.q, s->e };
	gsl_vector *x0 = gsl_vector_alloc(np);
	if (!x0) {
		s->failed_fits++;
		return;
	}
	gsl_vector_set_zero(x0);
	/* Start from ordinary least squares for the AR part (exact when q = 0)
	 * and a small MA part: the trust region solver gets stuck when started
	 * at exactly zero. */
	if (s->opt.p > 0) {
		size_t rows = m - (size_t)s->opt.p, cols = (size_t)s->opt.p + 1;
		gsl_matrix *X = gsl_matrix_alloc(rows, cols);
		gsl_vector *yv = gsl_vector_alloc(rows), *b = gsl_vector_alloc(cols);
		gsl_matrix *cov = gsl_matrix_alloc(cols, cols);
		gsl_multifit_linear_workspace *lw = gsl_multifit_linear_alloc(rows, cols);
		double chisq;
		if (X && yv && b && cov && lw) {
			for (size_t t = (size_t)s->opt.p; t < m; t++) {
				gsl_matrix_set(X, t - (size_t)s->opt.p, 0, 1.0);
				for (int64_t i = 1; i <= s->opt.p; i++)
					gsl_matrix_set(X, t - (size_t)s->opt.p, (size_t)i, s->z[t - (size_t)i]);
				gsl_vector_set(yv, t - (size_t)s->opt.p, s->z[t]);
			}
			if (gsl_multifit_linear(X, yv, b, cov, &chisq, lw) == GSL_SUCCESS)
				for (size_t i = 0; i < cols; i++)
					gsl_vector_set(x0, i, gsl_vector_get(b, i));
		}
		gsl_matrix_free(X);
		gsl_vector_free(yv);
		gsl_vector_free(b);
		gsl_matrix_free(cov);
		if (lw)
			gsl_multifit_linear_free(lw);
	}
	for (int64_t j = 1; j <= s->opt.q; j++)
		gsl_vector_set(x0, (size_t)(s->opt.p + j), 0.1);
	if (s->fitted) {
		memcpy(x0->data, s->theta, np * sizeof(double));
		double ar = 0;
		for (int64_t i = 1; i <= s->opt.p; i++)
			ar += s->theta[i];
		x0->data[0] = s->theta[0] - mean * (1 - ar);
	}
	gsl_multifit_nlinear_fdf fdf = { .f = css_f, .df = css_df, .fvv = NULL,
					 .n = m - (size_t)s->opt.p, .p = np, .params = &ctx };
	gsl_multifit_nlinear_parameters par = gsl_multifit_nlinear_default_parameters();
	gsl_multifit_nlinear_workspace *w = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &par,
								       fdf.n, fdf.p);
	int info = 0, status = w ? gsl_multifit_nlinear_init(x0, &fdf, w) : GSL_ENOMEM;
	if (status == GSL_SUCCESS)
		status = gsl_multifit_nlinear_driver(200, 1e-9, 1e-9, 0.0, NULL, NULL, &info, w);
	/* GSL_EMAXITER with a finite, usable point is still a fit worth keeping. */
	if ((status == GSL_SUCCESS || status == GSL_EMAXITER) && usable(s, w->x->data)) {
		memcpy(s->theta, w->x->data, np * sizeof(double));
		double ar = 0;
		for (int64_t i = 1; i <= s->opt.p; i++)
			ar += s->theta[i];
		s->theta[0] += mean * (1 - ar);
		s->fitted = true;
	} else {
		s->failed_fits++;
	}
	if (w)
		gsl_multifit_nlinear_free(w);
	gsl_vector_free(x0);
}

static void arima_observe(void *state, double speed, const double *exog)
{
	(void)exog;
	arima_state *s = state;
	if (!isfinite(speed))
		return;
	size_t w = (size_t)s->opt.window;
	if (s->n == w)
		memmove(s->y, s->y + 1, (w - 1) * sizeof *s->y);
	else
		s->n++;
	s->y[s->n - 1] = speed;
	if (++s->since_fit >= (size_t)s->opt.refit) {
		s->since_fit = 0;
		fit(s);
	}
}

/* C(d, k) for d <= 2. */
static double binom(int64_t d, int64_t k) { return d == 2 && k == 1 ? 2.0 : 1.0; }

static double arima_predict(void *state, const double *exog)
{
	(void)exog;
	arima_state *s = state;
	if (s->n == 0)
		return NAN;
	if (!s->fitted || s->n <= (size_t)(s->opt.d + s->opt.p)) {
		s->fallbacks++;
		return s->y[s->n - 1];
	}
	size_t m = difference(s, s->z);
	css_ctx ctx = { s->z, m, (int)s->opt.p, (int)s->opt.q, s->e };
	residuals(&ctx, s->theta, NULL);
	double f = s->theta[0];
	for (int64_t i = 1; i <= s->opt.p; i++)
		f += s->theta[i] * s->z[m - (size_t)i];
	for (int64_t j = 1; j <= s->opt.q && (size_t)j <= m; j++)
		f += s->theta[s->opt.p + j] * (m - (size_t)j >= (size_t)s->opt.p ? s->e[m - (size_t)j] : 0);
	/* Integrate back: y_hat = z_hat + sum_k (-1)^(k+1) C(d,k) y_{n-k}. */
	for (int64_t k = 1; k <= s->opt.d; k++)
		f += (k % 2 ? 1.0 : -1.0) * binom(s->opt.d, k) * s->y[s->n - (size_t)k];
	if (!isfinite(f)) {
		s->fallbacks++;
		return s->y[s->n - 1];
	}
	return f;
}

static size_t arima_vars(const void *state, lbs_policy_var *out, size_t max)
{
	const arima_state *s = state;
	lbs_policy_var v[] = { { "fits", (double)s->fits },
			       { "failed_fits", (double)s->failed_fits },
			       { "fallbacks", (double)s->fallbacks } };
	return lbs_vars_copy(out, max, v, 3);
}

/* For tests: the coefficients of the last good fit (c, phi..., theta...). */
const double *lbs_arima_coefficients(const void *state);
const double *lbs_arima_coefficients(const void *state)
{
	const arima_state *s = state;
	return s->fitted ? s->theta : NULL;
}

const lbs_predictor_ops lbs_predictor_arima = {
	.name = "arima",
	.summary = "ARIMA(p,d,q) fitted by conditional sum of squares on a rolling window",
	.options = arima_keys,
	.n_options = sizeof arima_keys / sizeof arima_keys[0],
	.options_size = sizeof(arima_options),
	.create = arima_create,
	.observe = arima_observe,
	.predict = arima_predict,
	.vars = arima_vars,
	.destroy = arima_destroy,
};
