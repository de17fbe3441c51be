/* SPDX-License-Identifier: GPL-3.0-or-later */
/* arx: a linear autoregressive model with exogenous inputs, the linear
 * counterpart of narx over the same delay lines (models/predict/lags.h):
 *     y_t = c + sum_{i=1..dy} a_i y_{t-i} + sum_j sum_{i=0..dx-1} b_ji x_j,t-i
 * where x_j,t is reading j seen with y_t (at decision time, the reading just
 * sampled). The coefficients are fitted every `refit` measurements on the
 * last `window` samples by ridge least squares on z-scored regressors,
 *     minimise  sum_t (y_t - ybar - sum_k beta_k z_k,t)^2 + lambda m |beta|^2,
 *     z_k = (u_k - mean u_k) / sd u_k,   c = ybar - sum_k beta_k mean_k / sd_k
 * (m samples; the intercept is not penalised), solved from the normal
 * equations (Z'Z + lambda m I) beta = Z'(y - ybar) by Cholesky. A regressor
 * constant over the window (a reading that never changed) is left out
 * (beta_k = 0). With lambda = 0 it is ordinary least squares, which
 * recovers a linear ARX process exactly; lambda > 0 keeps the fit defined
 * when readings are collinear (a background job's memory reading is a
 * multiple of its CPU reading). Until `warmup` measurements have been seen
 * and a fit has succeeded, it answers with an EMA (alpha 0.5), as narx
 * does, and counts a fallback. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "models/predict.h"
#include "models/predict/lags.h"

typedef struct arx_options {
	int64_t dy, dx, window, refit, warmup;
	double lambda;
} arx_options;

#define O(f) offsetof(arx_options, f)
static const lbs_key_spec arx_keys[] = {
	{ "dy", LBS_T_INT, O(dy), "3", 1, 32, 0, NULL, NULL, "past speeds regressed on" },
	{ "dx", LBS_T_INT, O(dx), "2", 0, 32, 0, NULL, NULL,
	  "readings per exogenous input, the one at decision time included; 0 ignores readings "
	  "(an AR(dy) model)" },
	{ "window", LBS_T_INT, O(window), "120", 10, 100000, 0, NULL, NULL,
	  "samples the coefficients are fitted on (the most recent)" },
	{ "refit", LBS_T_INT, O(refit), "1", 1, 100000, 0, NULL, NULL, "measurements between fits" },
	{ "warmup", LBS_T_INT, O(warmup), "10", 1, 100000, 0, NULL, NULL,
	  "measurements before the fit is trusted (EMA until then)" },
	{ "lambda", LBS_T_REAL, O(lambda), "0.001", 0, 100, 0, NULL, NULL,
	  "ridge penalty per sample on the z-scored coefficients; 0: ordinary least squares" },
};
#undef O
#define ARX_NKEYS (sizeof arx_keys / sizeof arx_keys[0])

typedef struct arx_state {
	arx_options opt;
	size_t k;         /* regressors: dy + dx * n_exog */
	lbs_lags h;
	double c, *beta;  /* the fit, on raw regressors: y = c + beta'u */
	double *u, *mean, *sd, *A, *b; /* scratch: a row, column moments, normal equations */
	bool fitted;
	size_t since;
	double ema;
	long fits, failed, fallbacks;
} arx_state;

static void arx_destroy(void *state)
{
	arx_state *s = state;
	if (s) {
		lbs_lags_free(&s->h);
		free(s->beta);
		free(s->u);
		free(s->mean);
		free(s->sd);
		free(s->A);
		free(s->b);
		free(s);
	}
}

static lbs_status arx_create(const lbs_kv *options, size_t n_options, size_t n_exog, uint64_t seed,
			     void **state, lbs_error *err)
{
	(void)seed;
	arx_state *s = lbs_calloc(1, sizeof *s, err);
	if (!s)
		return LBS_EINTERNAL;
	lbs_status st = lbs_options_parse(arx_keys, ARX_NKEYS, "predictor.arx", options, n_options, &s->opt, err);
	if (st != LBS_OK) {
		arx_destroy(s);
		return st;
	}
	s->k = (size_t)s->opt.dy + (size_t)s->opt.dx * n_exog;
	size_t k = s->k;
	if (lbs_lags_init(&s->h, (size_t)s->opt.window + lbs_lags_first(s->opt.dy, s->opt.dx) + 1, n_exog,
			  err) != LBS_OK ||
	    !(s->beta = lbs_calloc(k, sizeof *s->beta, err)) || !(s->u = lbs_calloc(k, sizeof *s->u, err)) ||
	    !(s->mean = lbs_calloc(k, sizeof *s->mean, err)) || !(s->sd = lbs_calloc(k, sizeof *s->sd, err)) ||
	    !(s->A = lbs_calloc(k * k, sizeof *s->A, err)) || !(s->b = lbs_calloc(k, sizeof *s->b, err))) {
		arx_destroy(s);
		return LBS_EINTERNAL;
	}
	s->ema = NAN;
	*state = s;
	return LBS_OK;
}

/* Solves A x = b in place (x into b) for the symmetric A (lower triangle
 * used) by Cholesky; false when a pivot is not positive beyond rounding
 * (below 1e-12 of its diagonal entry): A singular, as ordinary least
 * squares is with collinear regressors. */
static bool cholesky_solve(double *A, double *b, size_t n)
{
	for (size_t j = 0; j < n; j++) {
		double d = A[j * n + j];
		for (size_t p = 0; p < j; p++)
			d -= A[j * n + p] * A[j * n + p];
		if (!(d > 1e-12 * A[j * n + j]))
			return false;
		double l = sqrt(d);
		A[j * n + j] = l;
		for (size_t i = j + 1; i < n; i++) {
			double v = A[i * n + j];
			for (size_t p = 0; p < j; p++)
				v -= A[i * n + p] * A[j * n + p];
			A[i * n + j] = v / l;
		}
	}
	for (size_t i = 0; i < n; i++) { /* L z = b */
		for (size_t p = 0; p < i; p++)
			b[i] -= A[i * n + p] * b[p];
		b[i] /= A[i * n + i];
	}
	for (size_t i = n; i-- > 0;) { /* L' x = z */
		for (size_t p = i + 1; p < n; p++)
			b[i] -= A[p * n + i] * b[p];
		b[i] /= A[i * n + i];
	}
	return true;
}

/* Fits on targets t0 .. n-1; false (the previous fit kept) when the normal
 * equations are singular or the result is not finite. */
static bool fit(arx_state *s, size_t t0)
{
	const size_t k = s->k, n = s->h.n;
	const double m = (double)(n - t0);
	double ybar = 0;
	memset(s->mean, 0, k * sizeof *s->mean);
	memset(s->sd, 0, k * sizeof *s->sd);
	for (size_t t = t0; t < n; t++) {
		lbs_lags_row(&s->h, t, s->opt.dy, s->opt.dx, NULL, s->u);
		ybar += s->h.y[t];
		for (size_t q = 0; q < k; q++)
			s->mean[q] += s->u[q];
	}
	ybar /= m;
	for (size_t q = 0; q < k; q++)
		s->mean[q] /= m;
	for (size_t t = t0; t < n; t++) { /* centred second moments, two-pass */
		lbs_lags_row(&s->h, t, s->opt.dy, s->opt.dx, NULL, s->u);
		for (size_t q = 0; q < k; q++)
			s->sd[q] += (s->u[q] - s->mean[q]) * (s->u[q] - s->mean[q]);
	}
	/* Active regressors: those that vary over the window (beyond rounding). */
	size_t *act = malloc((k ? k : 1) * sizeof *act), na = 0;
	if (!act)
		return false;
	for (size_t q = 0; q < k; q++) {
		s->sd[q] = sqrt(s->sd[q] / m);
		if (s->sd[q] > 1e-12 * (fabs(s->mean[q]) + 1e-300))
			act[na++] = q;
	}
	memset(s->A, 0, na * na * sizeof *s->A);
	memset(s->b, 0, na * sizeof *s->b);
	for (size_t t = t0; t < n; t++) {
		lbs_lags_row(&s->h, t, s->opt.dy, s->opt.dx, NULL, s->u);
		for (size_t a = 0; a < na; a++) /* z-scores of the active ones, in place */
			s->u[a] = (s->u[act[a]] - s->mean[act[a]]) / s->sd[act[a]];
		double dy = s->h.y[t] - ybar;
		for (size_t a = 0; a < na; a++) {
			s->b[a] += s->u[a] * dy;
			for (size_t c = 0; c <= a; c++)
				s->A[a * na + c] += s->u[a] * s->u[c];
		}
	}
	for (size_t a = 0; a < na; a++)
		s->A[a * na + a] += s->opt.lambda * m;
	bool ok = cholesky_solve(s->A, s->b, na);
	double c = ybar;
	for (size_t a = 0; ok && a < na; a++) {
		double beta = s->b[a] / s->sd[act[a]];
		c -= beta * s->mean[act[a]];
		ok = isfinite(beta);
	}
	if (ok && isfinite(c)) {
		memset(s->beta, 0, k * sizeof *s->beta);
		for (size_t a = 0; a < na; a++)
			s->beta[act[a]] = s->b[a] / s->sd[act[a]];
		s->c = c;
	} else {
		ok = false;
	}
	free(act);
	return ok;
}

static void arx_observe(void *state, double speed, const double *exog)
{
	arx_state *s = state;
	if (!isfinite(speed))
		return;
	lbs_lags_push(&s->h, speed, exog);
	s->ema = isfinite(s->ema) ? 0.5 * speed + 0.5 * s->ema : speed;
	size_t first = lbs_lags_first(s->opt.dy, s->opt.dx);
	if (++s->since >= (size_t)s->opt.refit && s->h.n >= (size_t)s->opt.warmup &&
	    s->h.n >= first + s->k + 2) {
		s->since = 0;
		size_t t0 = first;
		if (s->h.n > (size_t)s->opt.window && s->h.n - (size_t)s->opt.window > first)
			t0 = s->h.n - (size_t)s->opt.window;
		s->fits++;
		if (fit(s, t0))
			s->fitted = true;
		else
			s->failed++;
	}
}

static double arx_predict(void *state, const double *exog)
{
	arx_state *s = state;
	if (!s->fitted || s->h.n < lbs_lags_first(s->opt.dy, s->opt.dx) + 1) {
		s->fallbacks++;
		return s->ema;
	}
	static const double zero[32] = { 0 };
	lbs_lags_row(&s->h, s->h.n, s->opt.dy, s->opt.dx, exog ? exog : zero, s->u);
	double y = s->c;
	for (size_t q = 0; q < s->k; q++)
		y += s->beta[q] * s->u[q];
	if (!isfinite(y)) {
		s->fallbacks++;
		return s->ema;
	}
	return y;
}

static size_t arx_vars(const void *state, lbs_policy_var *out, size_t max)
{
	const arx_state *s = state;
	lbs_policy_var v[] = { { "fits", (double)s->fits },
			       { "failed_fits", (double)s->failed },
			       { "fallbacks", (double)s->fallbacks } };
	return lbs_vars_copy(out, max, v, 3);
}

const lbs_predictor_ops lbs_predictor_arx = {
	.name = "arx",
	.summary = "linear ARX model over delayed speeds and readings, fitted by ridge least squares "
		   "on a rolling window (NARX without the hidden layer)",
	.options = arx_keys,
	.n_options = ARX_NKEYS,
	.options_size = sizeof(arx_options),
	.create = arx_create,
	.observe = arx_observe,
	.predict = arx_predict,
	.vars = arx_vars,
	.destroy = arx_destroy,
};
