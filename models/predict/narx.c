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
 * from the previous weights, by Levenberg-Marquardt with an analytic
 * Jacobian and weight decay `lambda`: by GSL's trust-region solver with its
 * default parameters (`solver = qr`), or by lbsim's own (`solver =
 * cholesky`, the default: each step from the normal equations, workspace
 * kept between trainings, about 5x less CPU), which takes the same steps up
 * to rounding. Until `warmup` measurements have been seen and a training has
 * succeeded, it answers with an EMA (alpha 0.5) and counts a fallback. */
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "models/predict.h"
#include "models/predict/lags.h"

typedef struct narx_options {
	int64_t hidden, dy, dx, window, retrain, warmup, max_iter;
	double lambda;
	int solver; /* SOLVER_* */
} narx_options;

enum { SOLVER_QR, SOLVER_CHOLESKY };

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
	{ "solver", LBS_T_ENUM, O(solver), "cholesky", 0, 0, 0, "qr|cholesky", NULL,
	  "Levenberg-Marquardt steps by GSL's trust-region solver with QR (qr) or from the normal "
	  "equations by Cholesky (cholesky: about 5x less CPU; the same steps up to rounding, which "
	  "warm-started trainings amplify, so runs differ slightly)" },
};
#undef O

typedef struct narx_state {
	narx_options opt;
	size_t n_exog, nin, np;
	lbs_lags h;         /* the history (models/predict/lags.h) */
	double *w;          /* weights: per hidden h: c_h, W_h[nin]; then v[H]; then b */
	double ymean, ystd, *xmean, *xstd;
	double *u;          /* scratch input vector */
	struct lm_work *lm; /* the cholesky solver's workspace, made at the first training */
	bool trained;
	size_t since;
	double ema;
	long trainings, failed, fallbacks;
} narx_state;

static void narx_destroy(void *state)
{
	narx_state *s = state;
	if (s) {
		lbs_lags_free(&s->h);
		free(s->w);
		free(s->xmean);
		free(s->xstd);
		free(s->u);
		free(s->lm);
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
	if (lbs_lags_init(&s->h, (size_t)s->opt.window + lag + 1, n_exog, err) != LBS_OK ||
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
	lbs_lags_row(&s->h, t, s->opt.dy, s->opt.dx, xnow, u);
	size_t k = 0;
	for (int64_t i = 1; i <= s->opt.dy; i++, k++)
		u[k] = (u[k] - s->ymean) / s->ystd;
	for (size_t j = 0; j < s->n_exog; j++)
		for (int64_t i = 0; i < s->opt.dx; i++, k++)
			u[k] = (u[k] - s->xmean[j]) / s->xstd[j];
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
		double dt = (s->h.y[t] - s->h.y[t - 1]) / s->ystd;
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
	double sum = 0, sum2 = 0, k = (double)(s->h.n - from);
	for (size_t t = from; t < s->h.n; t++) {
		sum += s->h.y[t];
		sum2 += s->h.y[t] * s->h.y[t];
	}
	s->ymean = sum / k;
	double var = sum2 / k - s->ymean * s->ymean;
	s->ystd = sqrt(var > 0 ? var : 0) + 1e-3 * fabs(s->ymean) + 1e-12;
	for (size_t j = 0; j < s->n_exog; j++) {
		sum = sum2 = 0;
		for (size_t t = from; t < s->h.n; t++) {
			double v = s->h.x[t * s->n_exog + j];
			sum += v;
			sum2 += v * v;
		}
		s->xmean[j] = sum / k;
		var = sum2 / k - s->xmean[j] * s->xmean[j];
		s->xstd[j] = sqrt(var > 0 ? var : 0) + 1e-3 * fabs(s->xmean[j]) + 1e-3;
	}
}

/* ---- the cholesky solver ----------------------------------------------
 *
 * Levenberg-Marquardt as GSL's trust-region driver runs it with its default
 * parameters (Nielsen's damping update, More's scaling D = the largest
 * column norms of J seen so far; Nielsen and Madsen, "Introduction to
 * Optimization and Data Fitting", DTU 2010; More, "The Levenberg-Marquardt
 * algorithm: implementation and theory", LNM 630, 1978), with its stopping
 * tests, but each step solved from the normal equations
 * (J'J + mu D^2) v = -J'f by Cholesky instead of a QR factorisation of J.
 * The residuals f are the m training errors followed by sqrt(lambda) w (the
 * weight decay), so J'J = Jd'Jd + lambda I is positive definite for
 * lambda > 0 and conditioned well enough that the two solvers' steps agree
 * to rounding. The inputs of the training samples do not depend on the
 * weights, so they are normalised once per training, and the hidden
 * activations of an accepted trial are kept for its Jacobian. */

typedef struct lm_work {
	size_t cap, H, nin, np;
	double *U, *dt;   /* inputs (cap x nin) and targets of the training samples */
	double *A, *At;   /* hidden activations at x and at the trial (cap x H) */
	double *r, *rt;   /* training errors at x and at the trial */
	double *J;        /* Jacobian of the training errors, by column (np x cap) */
	double *JTJ, *L;  /* J'J with the decay, and the Cholesky factor (np x np) */
	double *x, *xt, *g, *D, *v; /* weights, trial, J'f, scaling, step */
	double data[];
} lm_work;

static lm_work *lm_alloc(size_t cap, size_t H, size_t nin, size_t np)
{
	size_t n = cap * (nin + 1 + 2 * H + 2 + np) + 2 * np * np + 5 * np;
	lm_work *w = calloc(1, sizeof *w + n * sizeof(double));
	if (!w)
		return NULL;
	*w = (lm_work){ .cap = cap, .H = H, .nin = nin, .np = np };
	double *d = w->data;
	w->U = d, d += cap * nin;
	w->dt = d, d += cap;
	w->A = d, d += cap * H;
	w->At = d, d += cap * H;
	w->r = d, d += cap;
	w->rt = d, d += cap;
	w->J = d, d += cap * np;
	w->JTJ = d, d += np * np;
	w->L = d, d += np * np;
	w->x = d, d += np;
	w->xt = d, d += np;
	w->g = d, d += np;
	w->D = d, d += np;
	w->v = d;
	return w;
}

/* Training errors at weights x into r, activations into A; returns |f|^2,
 * the decay rows (l x) included. */
static double lm_errors(const narx_state *s, const lm_work *w, size_t m, const double *x, double l,
			double *r, double *A)
{
	double ss = 0;
	for (size_t i = 0; i < m; i++) {
		r[i] = forward(s, x, w->U + i * w->nin, A + i * w->H) - w->dt[i];
		ss += r[i] * r[i];
	}
	for (size_t p = 0; p < w->np; p++)
		ss += (l * x[p]) * (l * x[p]);
	return ss;
}

/* Pairs of doubles, for sums whose two lanes are the even and the odd
 * terms: the same additions in the same order as two scalar sums, so the
 * results are bit-identical to the scalar code (x86-64's SSE2 has no fused
 * multiply-add to contract them into), in half the instructions. */
typedef double v2d __attribute__((vector_size(16)));

static inline v2d load2(const double *p)
{
	v2d v;
	memcpy(&v, p, sizeof v); /* unaligned: columns start at odd offsets */
	return v;
}

/* sum a[i] b[i], in four interleaved partial sums s0..s3 (terms i mod 4),
 * added as (s0 + s1) + (s2 + s3). */
static inline double dot(const double *a, const double *b, size_t n)
{
	v2d s01 = { 0, 0 }, s23 = { 0, 0 };
	size_t i = 0;
	for (; i + 4 <= n; i += 4) {
		s01 += load2(a + i) * load2(b + i);
		s23 += load2(a + i + 2) * load2(b + i + 2);
	}
	double s0 = s01[0];
	for (; i < n; i++)
		s0 += a[i] * b[i];
	return (s0 + s01[1]) + (s23[0] + s23[1]);
}

/* J, J'J + l^2 I and g = J'f at x (activations A, errors r). */
static void lm_linearise(lm_work *w, size_t m, const double *x, double l)
{
	const size_t H = w->H, nin = w->nin, np = w->np, cap = w->cap;
	const double *v = x + H * (nin + 1);
	double *J = w->J;
	for (size_t i = 0; i < m; i++) {
		const double *u = w->U + i * nin, *a = w->A + i * H;
		for (size_t h = 0; h < H; h++) {
			double gh = v[h] * (1 - a[h] * a[h]);
			J[h * (nin + 1) * cap + i] = gh;
			for (size_t k = 0; k < nin; k++)
				J[(h * (nin + 1) + k + 1) * cap + i] = gh * u[k];
			J[(H * (nin + 1) + h) * cap + i] = a[h];
		}
		J[(np - 1) * cap + i] = 1;
	}
	/* The lower triangle of J'J, two rows by two columns at a time (each
	 * pass over the samples makes four sums from four columns). */
	for (size_t p = 0; p < np; p += 2) {
		const double *a0 = J + p * cap, *a1 = p + 1 < np ? a0 + cap : a0;
		for (size_t q = 0; q <= p; q += 2) {
			const double *b0 = J + q * cap, *b1 = q + 1 < np ? b0 + cap : b0;
			/* eight independent sums: lane 0 the even samples, lane 1 the odd */
			v2d v00 = { 0, 0 }, v01 = { 0, 0 }, v10 = { 0, 0 }, v11 = { 0, 0 };
			size_t i = 0;
			for (; i + 2 <= m; i += 2) {
				v2d x0 = load2(a0 + i), x1 = load2(a1 + i), y0 = load2(b0 + i), y1 = load2(b1 + i);
				v00 += x0 * y0;
				v01 += x0 * y1;
				v10 += x1 * y0;
				v11 += x1 * y1;
			}
			double s00 = v00[0], s01 = v01[0], s10 = v10[0], s11 = v11[0];
			for (; i < m; i++) {
				s00 += a0[i] * b0[i];
				s01 += a0[i] * b1[i];
				s10 += a1[i] * b0[i];
				s11 += a1[i] * b1[i];
			}
			s00 += v00[1], s01 += v01[1], s10 += v10[1], s11 += v11[1];
			w->JTJ[p * np + q] = s00;
			if (q + 1 <= p)
				w->JTJ[p * np + q + 1] = s01;
			if (p + 1 < np) {
				w->JTJ[(p + 1) * np + q] = s10;
				if (q + 1 < np)
					w->JTJ[(p + 1) * np + q + 1] = s11;
			}
		}
	}
	for (size_t p = 0; p < np; p++) {
		w->JTJ[p * np + p] += l * l;
		w->g[p] = dot(J + p * cap, w->r, m) + l * (l * x[p]);
	}
}

/* The step v = -(J'J + mu D^2)^-1 g; false if the matrix is not positive
 * definite in floating point. */
static bool lm_step(lm_work *w, double mu)
{
	const size_t np = w->np;
	double *L = w->L, *v = w->v;
	for (size_t j = 0; j < np; j++) {
		for (size_t i = j; i < np; i++) {
			double sum = w->JTJ[i * np + j] + (i == j ? mu * w->D[j] * w->D[j] : 0.0);
			sum -= dot(L + i * np, L + j * np, j);
			if (i == j) {
				if (!(sum > 0))
					return false;
				L[j * np + j] = sqrt(sum);
			} else {
				L[i * np + j] = sum / L[j * np + j];
			}
		}
	}
	for (size_t i = 0; i < np; i++) { /* L y = -g */
		v[i] = (-w->g[i] - dot(L + i * np, v, i)) / L[i * np + i];
	}
	for (size_t i = np; i-- > 0;) { /* L' v = y */
		double sum = v[i];
		for (size_t k = i + 1; k < np; k++)
			sum -= L[k * np + i] * v[k];
		v[i] = sum / L[i * np + i];
	}
	return true;
}

/* The column norms of J (with the decay rows): sqrt of J'J's diagonal. */
static double lm_colnorm(const lm_work *w, size_t p)
{
	double c = sqrt(w->JTJ[p * w->np + p]);
	return c == 0 ? 1.0 : c;
}

/* Trains s->w on targets t0 .. t0 + m - 1: 0 converged, 1 stopped at
 * max_iter or with no step that reduced the error (both keep the weights
 * it reached, as with GSL's driver), -1 out of memory. */
static int lm_train(narx_state *s, size_t t0, size_t m)
{
	const size_t H = (size_t)s->opt.hidden, np = s->np;
	if (!s->lm && !(s->lm = lm_alloc((size_t)s->opt.window, H, s->nin, np)))
		return -1;
	lm_work *w = s->lm;
	for (size_t i = 0; i < m; i++) {
		size_t t = t0 + i;
		inputs(s, t, NULL, w->U + i * s->nin);
		w->dt[i] = (s->h.y[t] - s->h.y[t - 1]) / s->ystd;
	}
	const double l = sqrt(s->opt.lambda), xtol = 1e-6, gtol = 1e-6;
	memcpy(w->x, s->w, np * sizeof *w->x);
	double ff = lm_errors(s, w, m, w->x, l, w->r, w->A);
	lm_linearise(w, m, w->x, l);
	double mu = 0;
	for (size_t p = 0; p < np; p++) {
		w->D[p] = lm_colnorm(w, p);
		double c = sqrt(w->JTJ[p * np + p]) / w->D[p];
		mu = c * c > mu ? c * c : mu;
	}
	mu *= 1e-3;
	long nu = 2;
	for (int64_t iter = 0;;) {
		bool accepted = false;
		for (int bad = 0; !accepted && bad <= 15;) {
			double rho = -1;
			if (lm_step(w, mu)) {
				for (size_t p = 0; p < np; p++)
					w->xt[p] = w->x[p] + w->v[p];
				double fft = lm_errors(s, w, m, w->xt, l, w->rt, w->At);
				double nf = sqrt(ff), nft = sqrt(fft);
				if (nft < nf) {
					/* |J v|^2 = v'(J'J)v = v'(M - mu D^2)v = -g'v - mu |D v|^2,
					 * M = J'J + mu D^2 and M v = -g: no pass over J. */
					double dv = 0, gv = dot(w->g, w->v, np);
					for (size_t p = 0; p < np; p++)
						dv += (w->D[p] * w->v[p]) * (w->D[p] * w->v[p]);
					double u = nft / nf;
					double pred = (-gv + mu * dv) / ff; /* (|Jv|^2 + 2 mu |Dv|^2) / |f|^2 */
					rho = pred > 0 ? (1.0 - u * u) / pred : -1;
				}
				if (rho > 0) {
					double *t;
					t = w->x, w->x = w->xt, w->xt = t;
					t = w->r, w->r = w->rt, w->rt = t;
					t = w->A, w->A = w->At, w->At = t;
					ff = fft;
					lm_linearise(w, m, w->x, l);
					for (size_t p = 0; p < np; p++) {
						double c = lm_colnorm(w, p);
						w->D[p] = w->D[p] > c ? w->D[p] : c;
					}
					double k = 2.0 * rho - 1.0;
					k = 1.0 - k * k * k;
					mu *= k > 0.333333333333333 ? k : 0.333333333333333;
					nu = 2;
					accepted = true;
				}
			}
			if (!accepted) {
				mu *= (double)nu;
				nu <<= 1;
				bad++;
			}
		}
		if (!accepted && iter == 0)
			break; /* no step reduced the error: the weights stay */
		iter++;
		bool done = true;
		for (size_t p = 0; p < np && done; p++)
			done = fabs(w->v[p]) < xtol * xtol + xtol * fabs(w->x[p]);
		if (!done) {
			double gnorm = 0;
			for (size_t p = 0; p < np; p++) {
				double xp = w->x[p] > 1.0 ? w->x[p] : 1.0, e = fabs(xp * w->g[p]);
				gnorm = e > gnorm ? e : gnorm;
			}
			done = gnorm <= gtol * (0.5 * ff > 1.0 ? 0.5 * ff : 1.0);
		}
		if (done)
			return 0;
		if (iter >= s->opt.max_iter)
			break;
	}
	return 1;
}

/* The same training by GSL's trust-region solver (solver = qr). */
static void train_qr(narx_state *s, size_t t0, size_t m)
{
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

static void train(narx_state *s)
{
	size_t lag = lbs_lags_first(s->opt.dy, s->opt.dx);
	if (s->h.n <= lag + 2)
		return;
	size_t m = s->h.n - lag;
	if (m > (size_t)s->opt.window)
		m = (size_t)s->opt.window;
	size_t t0 = s->h.n - m;
	s->trainings++;
	normalise(s, t0 > lag ? t0 - lag : 0);
	if (s->opt.solver == SOLVER_QR) {
		train_qr(s, t0, m);
		return;
	}
	int rc = lm_train(s, t0, m);
	bool finite = rc >= 0;
	for (size_t p = 0; finite && p < s->np; p++)
		finite = isfinite(s->lm->x[p]);
	if (finite) {
		memcpy(s->w, s->lm->x, s->np * sizeof *s->w);
		s->trained = true;
	} else {
		s->failed++;
	}
}

static void narx_observe(void *state, double speed, const double *exog)
{
	narx_state *s = state;
	if (!isfinite(speed))
		return;
	lbs_lags_push(&s->h, speed, exog);
	s->ema = isfinite(s->ema) ? 0.5 * speed + 0.5 * s->ema : speed;
	if (++s->since >= (size_t)s->opt.retrain && s->h.n >= (size_t)s->opt.warmup) {
		s->since = 0;
		train(s);
	}
}

static double narx_predict(void *state, const double *exog)
{
	narx_state *s = state;
	size_t lag = lbs_lags_first(s->opt.dy, s->opt.dx);
	if (!s->trained || s->h.n < lag + 1) {
		s->fallbacks++;
		return s->ema;
	}
	double zero[1] = { 0 };
	inputs(s, s->h.n, exog ? exog : zero, s->u);
	double y = s->h.y[s->h.n - 1] + s->ystd * forward(s, s->w, s->u, NULL);
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
