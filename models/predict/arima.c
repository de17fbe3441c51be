/* SPDX-License-Identifier: GPL-3.0-or-later */
/* arima: ARIMA(p,d,q) one-step forecasts of a worker's speed (Box & Jenkins).
 * The last `window` measurements are differenced d times; an ARMA(p,q) with
 * a constant,
 *     z_t = c + sum_i phi_i z_{t-i} + e_t + sum_j theta_j e_{t-j},
 * is fitted by conditional sum of squares (pre-sample residuals zero) with
 * GSL's trust-region Levenberg-Marquardt, every `refit` measurements. With
 * MA terms the CSS surface has local minima, so the fit starts from the
 * last fit, from least squares for the AR part (theta 0.1, -0.5 and 0.5)
 * and from Hannan-Rissanen, and keeps the least sum of squares; and it
 * moves in partial-autocorrelation coordinates (Monahan 1984), so every
 * point it visits is stationary and invertible by construction, and a
 * minimum at the edge of the region is approached rather than crossed and
 * refused. A pure AR fit (q = 0) is least squares, polished as before.
 * The forecast is c + sum phi z + sum theta e, integrated back d times.
 * When a fit fails (too few points, no convergence, non-finite
 * coefficients) the last good fit is kept; with none, the forecast falls
 * back to the last measurement. Both are counted (vars: fits, failed_fits,
 * fallbacks). */
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_poly.h>
#include <gsl/gsl_vector.h>
#include <complex.h>
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

/* The sum of squared residuals under th (c, phi, theta). */
static double css_sse(const css_ctx *c, const double *th)
{
	residuals(c, th, NULL);
	double sse = 0;
	for (size_t t = (size_t)c->p; t < c->m; t++)
		sse += c->e[t] * c->e[t];
	return isfinite(sse) ? sse : INFINITY;
}

/* Stationarity and invertibility by construction (Monahan, "A note on
 * enforcing stationarity in autoregressive-moving average models",
 * Biometrika 1984): k unconstrained u_j give partial autocorrelations
 * r_j = tanh(u_j) in (-1, 1), and the Durbin-Levinson recursion turns them
 * into a polynomial 1 - a_1 z - ... - a_k z^k with every root outside the
 * unit circle. The AR coefficients are phi_j = a_j, the MA ones
 * theta_j = -a_j: every u gives a stationary AR and an invertible MA part,
 * and every such part has its u (poly_to_u, the recursion run back). */
static void u_to_poly(const double *u, int64_t k, double *a)
{
	double prev[8];
	for (int64_t n = 0; n < k; n++) {
		double r = tanh(u[n]);
		memcpy(prev, a, (size_t)n * sizeof *a);
		for (int64_t j = 0; j < n; j++)
			a[j] = prev[j] - r * prev[n - 1 - j];
		a[n] = r;
	}
}

/* false when a is not of that kind (some |r| >= 1). */
static bool poly_to_u(const double *a_in, int64_t k, double *u)
{
	double a[8], prev[8];
	memcpy(a, a_in, (size_t)k * sizeof *a);
	for (int64_t n = k - 1; n >= 0; n--) {
		double r = a[n];
		if (!(fabs(r) < 1.0))
			return false;
		u[n] = atanh(r);
		memcpy(prev, a, (size_t)n * sizeof *a);
		for (int64_t j = 0; j < n; j++)
			a[j] = (prev[j] + r * prev[n - 1 - j]) / (1.0 - r * r);
	}
	return true;
}

static void negate(double *x, int64_t k)
{
	for (int64_t j = 0; j < k; j++)
		x[j] = -x[j];
}

/* Makes 1 + theta_1 z + ... + theta_q z^q invertible: every root r with
 * |r| <= 1 is replaced by 1 / conj(r) (the same autocorrelations, the
 * standard reflection), kept at |r| >= 1 + 1e-6, and the polynomial
 * rebuilt as prod (1 - z / r); used on the starts. Returns false when the
 * roots cannot be found. */
static bool make_invertible(double *theta, int64_t q)
{
	int64_t k = q;
	while (k > 0 && theta[k - 1] == 0)
		k--;
	if (k == 0)
		return true;
	double coef[9], z[16];
	coef[0] = 1;
	for (int64_t i = 1; i <= k; i++)
		coef[i] = theta[i - 1];
	gsl_poly_complex_workspace *w = gsl_poly_complex_workspace_alloc((size_t)k + 1);
	bool ok = w && gsl_poly_complex_solve(coef, (size_t)k + 1, w, z) == GSL_SUCCESS;
	if (w)
		gsl_poly_complex_workspace_free(w);
	if (!ok)
		return false;
	double complex poly[9] = { 1 };
	for (int64_t i = 0; i < k; i++) {
		double complex r = z[2 * i] + I * z[2 * i + 1];
		if (cabs(r) <= 1.0)
			r = 1.0 / conj(r);
		if (cabs(r) < 1.0 + 1e-6)
			r *= (1.0 + 1e-6) / cabs(r);
		for (int64_t d = i + 1; d > 0; d--) /* poly *= (1 - z / r) */
			poly[d] -= poly[d - 1] / r;
	}
	for (int64_t i = 1; i <= k; i++)
		theta[i - 1] = creal(poly[i]);
	return true;
}

/* The solver's coordinates with MA terms: c, then u for phi, then u for
 * theta. */
typedef struct css_u_ctx {
	css_ctx *c;
	double th[17];
} css_u_ctx;

static void to_theta(int p, int q, const double *x, double *th)
{
	th[0] = x[0];
	u_to_poly(x + 1, p, th + 1);
	u_to_poly(x + 1 + p, q, th + 1 + p);
	negate(th + 1 + p, q);
}

static bool from_theta(int p, int q, const double *th, double *x)
{
	double ma[8];
	memcpy(ma, th + 1 + p, (size_t)q * sizeof *ma);
	negate(ma, q);
	x[0] = th[0];
	return poly_to_u(th + 1, p, x + 1) && poly_to_u(ma, q, x + 1 + p);
}

static int css_u_f(const gsl_vector *x, void *params, gsl_vector *f)
{
	css_u_ctx *cu = params;
	to_theta(cu->c->p, cu->c->q, x->data, cu->th);
	gsl_vector_view v = gsl_vector_view_array(cu->th, x->size);
	return css_f(&v.vector, cu->c, f);
}

static int css_df(const gsl_vector *x, void *params, gsl_matrix *J);

/* The chain rule: the exact Jacobian in (c, phi, theta) times the
 * derivative of the (smooth) transform, by central differences, block by
 * block. */
static int css_u_df(const gsl_vector *x, void *params, gsl_matrix *J)
{
	css_u_ctx *cu = params;
	int p = cu->c->p, q = cu->c->q;
	to_theta(p, q, x->data, cu->th);
	gsl_vector_view v = gsl_vector_view_array(cu->th, x->size);
	int st = css_df(&v.vector, cu->c, J);
	for (int blk = 0; blk < 2; blk++) {
		int k = blk ? q : p, off = blk ? 1 + p : 1;
		double D[8][8], up[8], a[8], b[8], row[8];
		for (int n = 0; n < k; n++) {
			memcpy(up, x->data + off, (size_t)k * sizeof *up);
			double h = 1e-6 * (1.0 + fabs(up[n]));
			up[n] += h;
			u_to_poly(up, k, a);
			up[n] -= 2 * h;
			u_to_poly(up, k, b);
			for (int j = 0; j < k; j++)
				D[j][n] = (blk ? -1.0 : 1.0) * (a[j] - b[j]) / (2 * h);
		}
		for (size_t r = 0; r < J->size1; r++) {
			double *jr = J->data + r * J->tda + off;
			for (int n = 0; n < k; n++) {
				row[n] = 0;
				for (int j = 0; j < k; j++)
					row[n] += jr[j] * D[j][n];
			}
			memcpy(jr, row, (size_t)k * sizeof *row);
		}
	}
	return st;
}

/* Ordinary least squares of y on the columns of X; false when it fails. */
static bool ols(gsl_matrix *X, gsl_vector *y, gsl_vector *b)
{
	gsl_matrix *cov = gsl_matrix_alloc(X->size2, X->size2);
	gsl_multifit_linear_workspace *lw = gsl_multifit_linear_alloc(X->size1, X->size2);
	double chisq;
	bool ok = cov && lw && gsl_multifit_linear(X, y, b, cov, &chisq, lw) == GSL_SUCCESS;
	gsl_matrix_free(cov);
	if (lw)
		gsl_multifit_linear_free(lw);
	return ok;
}

/* Start 1: ordinary least squares for c and the AR part (exact when
 * q = 0), theta_j = 0.1 (the trust-region solver gets stuck when started
 * at exactly zero). */
static void start_ols(const arima_state *s, const double *z, size_t m, double *x0)
{
	size_t np = (size_t)(1 + s->opt.p + s->opt.q), p = (size_t)s->opt.p;
	memset(x0, 0, np * sizeof *x0);
	for (size_t j = 1; j <= (size_t)s->opt.q; j++)
		x0[p + j] = 0.1;
	if (p == 0)
		return;
	gsl_matrix *X = gsl_matrix_alloc(m - p, p + 1);
	gsl_vector *yv = gsl_vector_alloc(m - p), *b = gsl_vector_alloc(p + 1);
	if (X && yv && b) {
		for (size_t t = p; t < m; t++) {
			gsl_matrix_set(X, t - p, 0, 1.0);
			for (size_t i = 1; i <= p; i++)
				gsl_matrix_set(X, t - p, i, z[t - i]);
			gsl_vector_set(yv, t - p, z[t]);
		}
		if (ols(X, yv, b))
			for (size_t i = 0; i <= p; i++)
				x0[i] = gsl_vector_get(b, i);
	}
	gsl_matrix_free(X);
	gsl_vector_free(yv);
	gsl_vector_free(b);
}

/* Start 2 (q > 0): Hannan and Rissanen (Biometrika 1982): a long AR(k)
 * by least squares estimates the innovations e_hat, then z is regressed
 * on (1, z lagged 1..p, e_hat lagged 1..q). False when too few points. */
static bool start_hannan_rissanen(const arima_state *s, const double *z, size_t m, double *x0)
{
	size_t p = (size_t)s->opt.p, q = (size_t)s->opt.q, np = 1 + p + q;
	size_t k = p + q + 4;
	while (k > 1 && m < k + 3 * (k + 1))
		k--;
	if (q == 0 || m < k + q + 3 * np + 1)
		return false;
	double *eh = calloc(m, sizeof *eh);
	gsl_matrix *X = gsl_matrix_alloc(m - k, k + 1);
	gsl_vector *yv = gsl_vector_alloc(m - k), *b = gsl_vector_alloc(k + 1);
	bool ok = eh && X && yv && b;
	if (ok) {
		for (size_t t = k; t < m; t++) {
			gsl_matrix_set(X, t - k, 0, 1.0);
			for (size_t i = 1; i <= k; i++)
				gsl_matrix_set(X, t - k, i, z[t - i]);
			gsl_vector_set(yv, t - k, z[t]);
		}
		ok = ols(X, yv, b);
		for (size_t t = k; ok && t < m; t++) {
			double f = gsl_vector_get(b, 0);
			for (size_t i = 1; i <= k; i++)
				f += gsl_vector_get(b, i) * z[t - i];
			eh[t] = z[t] - f;
		}
	}
	gsl_matrix_free(X);
	gsl_vector_free(yv);
	gsl_vector_free(b);
	size_t t0 = k + q > p ? k + q : p, rows = m - t0;
	X = ok ? gsl_matrix_alloc(rows, np) : NULL;
	yv = ok ? gsl_vector_alloc(rows) : NULL;
	b = ok ? gsl_vector_alloc(np) : NULL;
	ok = ok && X && yv && b;
	if (ok) {
		for (size_t t = t0; t < m; t++) {
			gsl_matrix_set(X, t - t0, 0, 1.0);
			for (size_t i = 1; i <= p; i++)
				gsl_matrix_set(X, t - t0, i, z[t - i]);
			for (size_t j = 1; j <= q; j++)
				gsl_matrix_set(X, t - t0, p + j, eh[t - j]);
			gsl_vector_set(yv, t - t0, z[t]);
		}
		ok = ols(X, yv, b);
		for (size_t i = 0; ok && i < np; i++)
			x0[i] = gsl_vector_get(b, i);
	}
	gsl_matrix_free(X);
	gsl_vector_free(yv);
	gsl_vector_free(b);
	free(eh);
	return ok;
}

/* Levenberg-Marquardt from x (c, phi, theta; 1 + p + q values, theta
 * invertible), in place. With MA terms the solver moves in (c, phi, u), so
 * that every point it visits is invertible. Returns the sum of squares of
 * the point reached (left in x), INFINITY when it is not usable. */
static double solve_from(const arima_state *s, css_ctx *ctx, double *x)
{
	size_t np = (size_t)(1 + s->opt.p + s->opt.q);
	css_u_ctx cu = { .c = ctx };
	double cur[17];
	memcpy(cur, x, np * sizeof *cur);
	if (s->opt.q > 0 && !from_theta((int)s->opt.p, (int)s->opt.q, x, cur))
		return INFINITY;
	gsl_multifit_nlinear_fdf fdf = { .f = s->opt.q ? css_u_f : css_f, .df = s->opt.q ? css_u_df : css_df,
					 .fvv = NULL, .n = ctx->m - (size_t)s->opt.p, .p = np,
					 .params = s->opt.q ? (void *)&cu : (void *)ctx };
	gsl_multifit_nlinear_parameters par = gsl_multifit_nlinear_default_parameters();
	gsl_multifit_nlinear_workspace *w = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &par,
								       fdf.n, fdf.p);
	if (!w)
		return INFINITY;
	gsl_vector_view v = gsl_vector_view_array(cur, np);
	int info = 0, status = gsl_multifit_nlinear_init(&v.vector, &fdf, w);
	if (status == GSL_SUCCESS)
		status = gsl_multifit_nlinear_driver(200, 1e-9, 1e-9, 0.0, NULL, NULL, &info, w);
	double sse = INFINITY;
	/* GSL_EMAXITER with a finite, usable point is still a fit worth keeping. */
	if (status == GSL_SUCCESS || status == GSL_EMAXITER) {
		if (s->opt.q > 0) {
			/* |r| at most tanh(7) = 1 - 1.7e-6: a fit that runs to the
			 * boundary (an MA root at the unit circle, as over-differencing
			 * gives) stops just inside it. */
			double *u = w->x->data + 1;
			for (size_t k = 0; k + 1 < np; k++)
				u[k] = u[k] > 7.0 ? 7.0 : u[k] < -7.0 ? -7.0 : u[k];
			to_theta((int)s->opt.p, (int)s->opt.q, w->x->data, cur);
		} else
			memcpy(cur, w->x->data, np * sizeof *cur);
		if (usable(s, cur)) {
			sse = css_sse(ctx, cur);
			memcpy(x, cur, np * sizeof *cur);
		}
	}
	gsl_multifit_nlinear_free(w);
	return sse;
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
	/* Several starts, the least sum of squares kept: the last good fit
	 * (warm start), least squares for the AR part, and Hannan-Rissanen. The
	 * CSS surface of a model with MA terms has local minima, and a single
	 * start lands in one often. */
	double starts[5][17], best_x[17], best = INFINITY;
	int n_starts = 0;
	if (s->fitted) {
		memcpy(starts[n_starts], s->theta, np * sizeof(double));
		double ar = 0;
		for (int64_t i = 1; i <= s->opt.p; i++)
			ar += s->theta[i];
		starts[n_starts++][0] = s->theta[0] - mean * (1 - ar);
	}
	start_ols(s, s->z, m, starts[n_starts++]);
	if (start_hannan_rissanen(s, s->z, m, starts[n_starts]))
		n_starts++;
	/* and, with MA terms, the least-squares AR part with theta_j = -0.5 and
	 * +0.5, on either side of the common minima near 0 */
	for (int sign = -1; s->opt.q > 0 && sign <= 1; sign += 2) {
		start_ols(s, s->z, m, starts[n_starts]);
		for (int64_t j = 1; j <= s->opt.q; j++)
			starts[n_starts][s->opt.p + j] = 0.5 * sign;
		n_starts++;
	}
	for (int k = 0; k < n_starts; k++) {
		/* a start outside the region is reflected into it */
		double *ar = starts[k] + 1;
		if (s->opt.q > 0) {
			negate(ar, s->opt.p);
			bool ok = make_invertible(ar, s->opt.p);
			negate(ar, s->opt.p);
			if (!ok || !make_invertible(ar + s->opt.p, s->opt.q))
				continue;
		}
		double sse = solve_from(s, &ctx, starts[k]);
		if (sse < best) {
			best = sse;
			memcpy(best_x, starts[k], np * sizeof(double));
		}
	}
	if (!isfinite(best)) {
		s->failed_fits++;
		return;
	}
	memcpy(s->theta, best_x, np * sizeof(double));
	double ar = 0;
	for (int64_t i = 1; i <= s->opt.p; i++)
		ar += s->theta[i];
	s->theta[0] += mean * (1 - ar);
	s->fitted = true;
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
