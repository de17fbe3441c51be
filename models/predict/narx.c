/* SPDX-License-Identifier: GPL-3.0-or-later */
/* narx: the predictor of LB-BSP for CPU clusters (Chen et al., SoCC'20): a
 * nonlinear autoregressive network with exogenous inputs. The next speed
 * y_t is predicted from tapped delay lines of past speeds y_{t-1..t-dy} and
 * of the exogenous readings x_{t..t-dx+1} (CPU and memory utilisation; x_t
 * is the reading available at decision time) by one tanh hidden layer and a
 * linear output, added to the last speed (a skip connection):
 *     y_t = y_{t-1} + s_y (b + sum_h v_h tanh(c_h + sum_k W_hk u_k)).
 * The network models the change from the last speed, so weight decay pulls
 * it towards "no change" rather than towards the window's mean, and a
 * change of level after a long steady stretch (whose z-scores saturate the
 * hidden units) still moves the forecast with the last speed instead of
 * pinning it to the old level. Inputs are z-scored over the window, and
 * s_y is the standard deviation of the window's speeds. The weights are trained
 * on the last `window` samples every `retrain` measurements, warm started
 * from the previous weights, by Levenberg-Marquardt (GSL's trust-region
 * nonlinear least squares with an analytic Jacobian) with weight decay
 * `lambda`. Until `warmup` measurements have been seen and a training has
 * succeeded, it answers with an EMA (alpha 0.5) and counts a fallback. */
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "models/predict.h"

typedef struct narx_options {
	int64_t hidden, dy, dx, window, retrain, warmup, max_iter;
	double lambda;
} narx_options;

#define O(f) offsetof(narx_options, f)
static const lbs_key_spec narx_keys[] = {
	{ "hidden", LBS_T_INT, O(hidden), "6", 1, 64, 0, NULL, NULL, "tanh units in the hidden layer" },
	{ "dy", LBS_T_INT, O(dy), "3", 1, 32, 0, NULL, NULL, "past speeds fed back (delay line)" },
	{ "dx", LBS_T_INT, O(dx), "2", 0, 32, 0, NULL, NULL,
	  "readings per exogenous input, the one at decision time included; 0 ignores readings" },
	{ "window", LBS_T_INT, O(window), "120", 10, 100000, 0, NULL, NULL,
	  "training samples (the most recent)" },
	{ "retrain", LBS_T_INT, O(retrain), "10", 1, 100000, 0, NULL, NULL,
	  "measurements between trainings" },
	{ "warmup", LBS_T_INT, O(warmup), "30", 1, 100000, 0, NULL, NULL,
	  "measurements before the network is trusted (EMA until then)" },
	{ "max_iter", LBS_T_INT, O(max_iter), "30", 1, 10000, 0, NULL, NULL,
	  "Levenberg-Marquardt iterations per training" },
	{ "lambda", LBS_T_REAL, O(lambda), "0.3", 0, 100, 0, NULL, NULL,
	  "weight decay: adds lambda * |w|^2 to the squared error" },
};
#undef O

typedef struct narx_state {
	narx_options opt;
	size_t n_exog, nin, np, cap;
	double *y, *x;      /* history, oldest first: y[t], x[t * n_exog + j] */
	size_t n;
	double *w;          /* weights: per hidden h: c_h, W_h[nin]; then v[H]; then b */
	double ymean, ystd, *xmean, *xstd;
	double *u;          /* scratch input vector */
	bool trained;
	size_t since;
	double ema;
	long trainings, failed, fallbacks;
} narx_state;

static void narx_destroy(void *state)
{
	narx_state *s = state;
	if (s) {
		free(s->y);
		free(s->x);
		free(s->w);
		free(s->xmean);
		free(s->xstd);
		free(s->u);
		free(s);
	}
}

static lbs_status narx_create(const lbs_kv *options, size_t n_options, size_t n_exog, uint64_t seed,
			      void **state, lbs_error *err)
{
	narx_state *s = lbs_calloc(1, sizeof *s, err);
	if (!s)
		return LBS_EINTERNAL;
	lbs_status st = lbs_options_parse(narx_keys, sizeof narx_keys / sizeof narx_keys[0],
					  "predictor.narx", options, n_options, &s->opt, err);
	if (st != LBS_OK) {
		narx_destroy(s);
		return st;
	}
	s->n_exog = n_exog;
	s->nin = (size_t)s->opt.dy + (size_t)s->opt.dx * n_exog;
	size_t H = (size_t)s->opt.hidden;
	s->np = H * (s->nin + 1) + H + 1;
	size_t lag = (size_t)(s->opt.dy > s->opt.dx ? s->opt.dy : s->opt.dx);
	s->cap = (size_t)s->opt.window + lag + 1;
	if (!(s->y = lbs_calloc(s->cap, sizeof *s->y, err)) ||
	    !(s->x = lbs_calloc(s->cap * (n_exog ? n_exog : 1), sizeof *s->x, err)) ||
	    !(s->w = lbs_calloc(s->np, sizeof *s->w, err)) ||
	    !(s->xmean = lbs_calloc(n_exog + 1, sizeof *s->xmean, err)) ||
	    !(s->xstd = lbs_calloc(n_exog + 1, sizeof *s->xstd, err)) ||
	    !(s->u = lbs_calloc(s->nin + 1, sizeof *s->u, err))) {
		narx_destroy(s);
		return LBS_EINTERNAL;
	}
	/* Small random initial weights from the worker's own stream. */
	gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
	if (!r) {
		narx_destroy(s);
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	}
	gsl_rng_set(r, (unsigned long)(seed ^ (seed >> 32)));
	for (size_t i = 0; i < s->np; i++)
		s->w[i] = (gsl_rng_uniform(r) - 0.5) / sqrt((double)s->nin + 1);
	gsl_rng_free(r);
	s->ema = NAN;
	*state = s;
	return LBS_OK;
}

/* The normalised input vector for target index t (inputs: y[t-1..t-dy],
 * x[t..t-dx+1]; xnow replaces x[t] when t == n, the decision time). */
static void inputs(const narx_state *s, size_t t, const double *xnow, double *u)
{
	size_t k = 0;
	for (int64_t i = 1; i <= s->opt.dy; i++)
		u[k++] = (s->y[t - (size_t)i] - s->ymean) / s->ystd;
	for (size_t j = 0; j < s->n_exog; j++)
		for (int64_t i = 0; i < s->opt.dx; i++) {
			double v = (t == s->n && i == 0) ? xnow[j] : s->x[(t - (size_t)i) * s->n_exog + j];
			u[k++] = (v - s->xmean[j]) / s->xstd[j];
		}
}

/* Network output (normalised) for input u; hidden activations into a. */
static double forward(const narx_state *s, const double *w, const double *u, double *a)
{
	size_t H = (size_t)s->opt.hidden, nin = s->nin;
	const double *v = w + H * (nin + 1);
	double out = v[H];
	for (size_t h = 0; h < H; h++) {
		const double *wh = w + h * (nin + 1);
		double z = wh[0];
		for (size_t k = 0; k < nin; k++)
			z += wh[k + 1] * u[k];
		double ah = tanh(z);
		if (a)
			a[h] = ah;
		out += v[h] * ah;
	}
	return out;
}

typedef struct train_ctx {
	narx_state *s;
	size_t t0, m;      /* samples: targets t0 .. t0 + m - 1 */
	double *u, *a;
} train_ctx;

static int narx_f(const gsl_vector *x, void *params, gsl_vector *f)
{
	train_ctx *c = params;
	narx_state *s = c->s;
	for (size_t i = 0; i < c->m; i++) {
		size_t t = c->t0 + i;
		inputs(s, t, NULL, c->u);
		double dt = (s->y[t] - s->y[t - 1]) / s->ystd;
		f->data[i] = forward(s, x->data, c->u, NULL) - dt;
	}
	double l = sqrt(s->opt.lambda);
	for (size_t p = 0; p < s->np; p++)
		f->data[c->m + p] = l * x->data[p];
	return GSL_SUCCESS;
}

static int narx_df(const gsl_vector *x, void *params, gsl_matrix *J)
{
	train_ctx *c = params;
	narx_state *s = c->s;
	size_t H = (size_t)s->opt.hidden, nin = s->nin;
	const double *v = x->data + H * (nin + 1);
	gsl_matrix_set_zero(J);
	for (size_t i = 0; i < c->m; i++) {
		inputs(s, c->t0 + i, NULL, c->u);
		forward(s, x->data, c->u, c->a);
		double *row = J->data + i * J->tda;
		for (size_t h = 0; h < H; h++) {
			double g = v[h] * (1 - c->a[h] * c->a[h]);
			row[h * (nin + 1)] = g;
			for (size_t k = 0; k < nin; k++)
				row[h * (nin + 1) + k + 1] = g * c->u[k];
			row[H * (nin + 1) + h] = c->a[h];
		}
		row[H * (nin + 1) + H] = 1;
	}
	double l = sqrt(s->opt.lambda);
	for (size_t p = 0; p < s->np; p++)
		gsl_matrix_set(J, c->m + p, p, l);
	return GSL_SUCCESS;
}

static void normalise(narx_state *s, size_t from)
{
	double sum = 0, sum2 = 0, k = (double)(s->n - from);
	for (size_t t = from; t < s->n; t++) {
		sum += s->y[t];
		sum2 += s->y[t] * s->y[t];
	}
	s->ymean = sum / k;
	double var = sum2 / k - s->ymean * s->ymean;
	s->ystd = sqrt(var > 0 ? var : 0) + 1e-3 * fabs(s->ymean) + 1e-12;
	for (size_t j = 0; j < s->n_exog; j++) {
		sum = sum2 = 0;
		for (size_t t = from; t < s->n; t++) {
			double v = s->x[t * s->n_exog + j];
			sum += v;
			sum2 += v * v;
		}
		s->xmean[j] = sum / k;
		var = sum2 / k - s->xmean[j] * s->xmean[j];
		s->xstd[j] = sqrt(var > 0 ? var : 0) + 1e-3 * fabs(s->xmean[j]) + 1e-3;
	}
}

static void train(narx_state *s)
{
	size_t lag = (size_t)(s->opt.dy > s->opt.dx - 1 ? s->opt.dy : s->opt.dx - 1);
	if (s->n <= lag + 2)
		return;
	size_t m = s->n - lag;
	if (m > (size_t)s->opt.window)
		m = (size_t)s->opt.window;
	size_t t0 = s->n - m;
	s->trainings++;
	normalise(s, t0 > lag ? t0 - lag : 0);
	double *a = malloc((size_t)s->opt.hidden * sizeof *a);
	gsl_vector_view w0 = gsl_vector_view_array(s->w, s->np);
	train_ctx ctx = { s, t0, m, s->u, a };
	gsl_multifit_nlinear_fdf fdf = { .f = narx_f, .df = narx_df, .fvv = NULL, .n = m + s->np,
					 .p = s->np, .params = &ctx };
	gsl_multifit_nlinear_parameters par = gsl_multifit_nlinear_default_parameters();
	gsl_multifit_nlinear_workspace *ws =
		a ? gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &par, fdf.n, fdf.p) : NULL;
	int info = 0, status = ws ? gsl_multifit_nlinear_init(&w0.vector, &fdf, ws) : GSL_ENOMEM;
	if (status == GSL_SUCCESS)
		status = gsl_multifit_nlinear_driver((size_t)s->opt.max_iter, 1e-6, 1e-6, 0.0, NULL, NULL,
						     &info, ws);
	bool finite = ws != NULL;
	for (size_t p = 0; finite && p < s->np; p++)
		finite = isfinite(gsl_vector_get(ws->x, p));
	if ((status == GSL_SUCCESS || status == GSL_EMAXITER) && finite) {
		memcpy(s->w, ws->x->data, s->np * sizeof *s->w);
		s->trained = true;
	} else {
		s->failed++;
	}
	if (ws)
		gsl_multifit_nlinear_free(ws);
	free(a);
}

static void narx_observe(void *state, double speed, const double *exog)
{
	narx_state *s = state;
	if (!isfinite(speed))
		return;
	if (s->n == s->cap) { /* drop the oldest */
		memmove(s->y, s->y + 1, (s->cap - 1) * sizeof *s->y);
		if (s->n_exog)
			memmove(s->x, s->x + s->n_exog, (s->cap - 1) * s->n_exog * sizeof *s->x);
		s->n--;
	}
	s->y[s->n] = speed;
	for (size_t j = 0; j < s->n_exog; j++)
		s->x[s->n * s->n_exog + j] = exog ? exog[j] : 0.0;
	s->n++;
	s->ema = isfinite(s->ema) ? 0.5 * speed + 0.5 * s->ema : speed;
	if (++s->since >= (size_t)s->opt.retrain && s->n >= (size_t)s->opt.warmup) {
		s->since = 0;
		train(s);
	}
}

static double narx_predict(void *state, const double *exog)
{
	narx_state *s = state;
	size_t lag = (size_t)(s->opt.dy > s->opt.dx - 1 ? s->opt.dy : s->opt.dx - 1);
	if (!s->trained || s->n < lag + 1) {
		s->fallbacks++;
		return s->ema;
	}
	double zero[1] = { 0 };
	inputs(s, s->n, exog ? exog : zero, s->u);
	double y = s->y[s->n - 1] + s->ystd * forward(s, s->w, s->u, NULL);
	if (!isfinite(y)) {
		s->fallbacks++;
		return s->ema;
	}
	return y;
}

static size_t narx_vars(const void *state, lbs_policy_var *out, size_t max)
{
	const narx_state *s = state;
	lbs_policy_var v[] = { { "trainings", (double)s->trainings },
			       { "failed_trainings", (double)s->failed },
			       { "fallbacks", (double)s->fallbacks } };
	return lbs_vars_copy(out, max, v, 3);
}

const lbs_predictor_ops lbs_predictor_narx = {
	.name = "narx",
	.summary = "NARX network (one tanh layer) over delayed speeds and readings, trained online by "
		   "Levenberg-Marquardt (LB-BSP's CPU predictor)",
	.options = narx_keys,
	.n_options = sizeof narx_keys / sizeof narx_keys[0],
	.options_size = sizeof(narx_options),
	.create = narx_create,
	.observe = narx_observe,
	.predict = narx_predict,
	.vars = narx_vars,
	.destroy = narx_destroy,
};
