/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_multifit.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/calib.h"
#include "models/profile.h"

/* The power law's exponents tried before the golden-section search. */
#define POWER_GRID 400

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

/* The breakpoint search's budget: breakpoints tried x points, per fit.
 * Within it every integer breakpoint is tried (every published table and
 * measured GPU so far); beyond it, a grid of 2e5 / n breakpoints and
 * the data's own batches, then grids refined around the best, so that a
 * batch of 10^9 costs what a batch of 10^3 does (doc/profiles.md). */
#define PIECEWISE_BUDGET 1000000.0
#define PIECEWISE_GRID_BUDGET 200000.0

typedef struct pw_search {
	const double *b, *t, *w;
	double *x;
	size_t n;
	double best;
	lbs_fit *f;
} pw_search;

static void pw_try(pw_search *p, double s)
{
	for (size_t i = 0; i < p->n; i++)
		p->x[i] = p->b[i] > s ? p->b[i] - s : 0.0;
	double c0, c1, cov00, cov01, cov11, chisq;
	if (gsl_fit_wlinear(p->x, 1, p->w, 1, p->t, 1, p->n, &c0, &c1, &cov00, &cov01, &cov11, &chisq))
		return;
	/* ties (within rounding) go to the smaller breakpoint */
	if (!(c1 >= 0) || !(c0 > 0) || !(isinf(p->best) || chisq < p->best - 1e-9 * p->best - 1e-20))
		return;
	p->best = chisq;
	p->f->cost = (lbs_cost){ .ops = &lbs_cost_piecewise, .kind = 1, .t_flat_s = c0,
				 .per_sample_s = c1, .saturation_batch = (int64_t)s };
}

/* Tries the integers of [lo, hi] on a grid of at most g points (every one
 * when they are fewer), in increasing order; returns the grid's step. */
static double pw_grid(pw_search *p, double lo, double hi, double g, const double *also, size_t n_also)
{
	double step = fmax(1.0, ceil((hi - lo) / g));
	/* the data's batches (and one below each) are tried where they fall
	 * between grid points, in order */
	size_t k = 0;
	for (double s = lo; s <= hi; s += step) {
		for (; k < n_also && also[k] < s; k++)
			if (also[k] >= lo && also[k] <= hi)
				pw_try(p, also[k]);
		pw_try(p, s);
	}
	for (; k < n_also; k++)
		if (also[k] >= lo && also[k] <= hi)
			pw_try(p, also[k]);
	return step;
}

static lbs_status fit_piecewise(const double *b, const double *t, size_t n, lbs_fit *f,
				lbs_error *err)
{
	double *x = malloc(n * sizeof *x), *w = malloc(n * sizeof *w), *also = malloc(2 * n * sizeof *also);
	if (!x || !w || !also) {
		free(x);
		free(w);
		free(also);
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	}
	double bmin = b[0], bmax = b[0];
	for (size_t i = 0; i < n; i++) {
		bmin = fmin(bmin, b[i]);
		bmax = fmax(bmax, b[i]);
		w[i] = 1.0 / (t[i] * t[i]);
	}
	pw_search p = { b, t, w, x, n, INFINITY, f };
	double range = bmax - bmin; /* breakpoints bmin .. bmax - 1 */
	if (range * (double)n <= PIECEWISE_BUDGET) {
		for (double s = bmin; s < bmax; s++)
			pw_try(&p, s);
	} else {
		size_t na = 0;
		for (size_t i = 0; i < n; i++) {
			also[na++] = b[i] - 1;
			also[na++] = b[i];
		}
		qsort(also, na, sizeof *also, cmp_double);
		double g = fmax(16.0, PIECEWISE_GRID_BUDGET / (double)n);
		double step = pw_grid(&p, bmin, bmax - 1, g, also, na);
		while (step > 1 && isfinite(p.best)) {
			double at = (double)f->cost.saturation_batch;
			step = pw_grid(&p, fmax(bmin, at - step), fmin(bmax - 1, at + step), g, NULL, 0);
		}
	}
	free(x);
	free(w);
	free(also);
	if (!isfinite(p.best))
		return lbs_error_set(err, LBS_EINPUT,
				     "no flat-then-linear fit with a positive flat time and a slope >= 0");
	return LBS_OK;
}

/* Weighted least squares for t ~ sum_j c_j x_j(b) with every c_j >= 0,
 * x[j*n + i] the j-th column (k <= 3): the unconstrained fit on each subset
 * of the columns, the others held at 0; the best one with no negative
 * coefficient is the constrained optimum (it satisfies the KKT conditions,
 * and every candidate is feasible). Returns its chi^2, INFINITY if none. */
static double nnls_small(const double *x, size_t k, const double *t, const double *w, size_t n,
			 double c[3])
{
	double best = INFINITY;
	gsl_multifit_linear_workspace *ws = gsl_multifit_linear_alloc(n, k);
	gsl_matrix *X = gsl_matrix_alloc(n, k), *cov = gsl_matrix_alloc(k, k);
	gsl_vector *cv = gsl_vector_alloc(k);
	gsl_vector_const_view tv = gsl_vector_const_view_array(t, n), wv = gsl_vector_const_view_array(w, n);
	for (unsigned set = 1; ws && X && cov && cv && set < 1u << k; set++) {
		size_t m = 0, col[3];
		for (size_t j = 0; j < k; j++)
			if (set >> j & 1)
				col[m++] = j;
		if (m > n)
			continue;
		gsl_multifit_linear_workspace *wm = m == k ? ws : gsl_multifit_linear_alloc(n, m);
		gsl_matrix *Xm = m == k ? X : gsl_matrix_alloc(n, m), *cm = m == k ? cov : gsl_matrix_alloc(m, m);
		gsl_vector *vm = m == k ? cv : gsl_vector_alloc(m);
		double chisq = INFINITY;
		if (wm && Xm && cm && vm) {
			for (size_t i = 0; i < n; i++)
				for (size_t j = 0; j < m; j++)
					gsl_matrix_set(Xm, i, j, x[col[j] * n + i]);
			if (gsl_multifit_wlinear(Xm, &wv.vector, &tv.vector, vm, cm, &chisq, wm))
				chisq = INFINITY;
			for (size_t j = 0; j < m; j++)
				if (!(gsl_vector_get(vm, j) >= 0))
					chisq = INFINITY;
		}
		/* ties (within rounding) go to the earlier subset: fewer terms first */
		if (chisq < best - 1e-9 * best - 1e-20 || (isinf(best) && isfinite(chisq))) {
			best = chisq;
			for (size_t j = 0; j < k; j++)
				c[j] = 0;
			for (size_t j = 0; j < m; j++)
				c[col[j]] = gsl_vector_get(vm, j);
		}
		if (m != k) {
			if (wm)
				gsl_multifit_linear_free(wm);
			gsl_matrix_free(Xm);
			gsl_matrix_free(cm);
			gsl_vector_free(vm);
		}
	}
	if (ws)
		gsl_multifit_linear_free(ws);
	gsl_matrix_free(X);
	gsl_matrix_free(cov);
	gsl_vector_free(cv);
	return best;
}

/* The smallest batch: below it, power and quadratic fits stay flat (the
 * data cannot say how much faster a smaller batch would be). */
static int64_t smallest(const double *b, size_t n)
{
	double m = b[0];
	for (size_t i = 1; i < n; i++)
		m = fmin(m, b[i]);
	return (int64_t)m;
}

/* Columns 1, b^p; the best (t0, a) >= 0 for this exponent. */
static double power_at(double p, const double *b, const double *t, const double *w, size_t n,
		       double *x, double c[3])
{
	for (size_t i = 0; i < n; i++) {
		x[i] = 1.0;
		x[n + i] = pow(b[i], p);
	}
	return nnls_small(x, 2, t, w, n, c);
}

static lbs_status fit_power(const double *b, const double *t, size_t n, lbs_fit *f, lbs_error *err)
{
	double *x = malloc(2 * n * sizeof *x), *w = malloc(n * sizeof *w);
	if (!x || !w) {
		free(x);
		free(w);
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	}
	for (size_t i = 0; i < n; i++)
		w[i] = 1.0 / (t[i] * t[i]);
	/* The exponent: the best of a grid, then golden-section search in the
	 * grid cells either side of it. */
	double best = INFINITY, best_p = 1, c[3];
	for (int k = 1; k <= POWER_GRID; k++) {
		double p = LBS_COST_EXPONENT_MAX * k / POWER_GRID, chisq = power_at(p, b, t, w, n, x, c);
		if (isfinite(chisq) && (isinf(best) || chisq < best - 1e-9 * best - 1e-20)) {
			best = chisq;
			best_p = p;
		}
	}
	if (isfinite(best)) {
		const double g = 0.5 * (sqrt(5.0) - 1), step = LBS_COST_EXPONENT_MAX / POWER_GRID;
		double lo = fmax(best_p - step, step / 16), hi = fmin(best_p + step, LBS_COST_EXPONENT_MAX);
		double p1 = hi - g * (hi - lo), p2 = lo + g * (hi - lo);
		double f1 = power_at(p1, b, t, w, n, x, c), f2 = power_at(p2, b, t, w, n, x, c);
		for (int it = 0; it < 60; it++) {
			if (f1 <= f2) {
				hi = p2;
				p2 = p1;
				f2 = f1;
				p1 = hi - g * (hi - lo);
				f1 = power_at(p1, b, t, w, n, x, c);
			} else {
				lo = p1;
				p1 = p2;
				f1 = f2;
				p2 = lo + g * (hi - lo);
				f2 = power_at(p2, b, t, w, n, x, c);
			}
		}
		double pm = 0.5 * (lo + hi), fm = power_at(pm, b, t, w, n, x, c);
		if (fm < best) {
			best = fm;
			best_p = pm;
		}
		best = power_at(best_p, b, t, w, n, x, c);
	}
	free(x);
	free(w);
	if (!isfinite(best) || !(c[0] + c[1] > 0))
		return lbs_error_set(err, LBS_EINPUT, "no power-law fit with t0 >= 0 and a coefficient >= 0");
	f->cost = (lbs_cost){ .ops = &lbs_cost_power, .kind = 2, .t0_s = c[0], .per_sample_s = c[1],
			      .exponent = best_p, .flat_below = smallest(b, n) };
	return LBS_OK;
}

static lbs_status fit_quadratic(const double *b, const double *t, size_t n, lbs_fit *f,
				lbs_error *err)
{
	double *x = malloc(3 * n * sizeof *x), *w = malloc(n * sizeof *w), c[3];
	if (!x || !w) {
		free(x);
		free(w);
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		w[i] = 1.0 / (t[i] * t[i]);
		x[i] = 1.0;
		x[n + i] = b[i];
		x[2 * n + i] = b[i] * b[i];
	}
	double chisq = nnls_small(x, 3, t, w, n, c);
	free(x);
	free(w);
	if (!isfinite(chisq) || !(c[0] + c[1] + c[2] > 0))
		return lbs_error_set(err, LBS_EINPUT, "no quadratic fit with every coefficient >= 0");
	f->cost = (lbs_cost){ .ops = &lbs_cost_quadratic, .kind = 3, .t0_s = c[0], .per_sample_s = c[1],
			      .per_sample_sq_s = c[2], .flat_below = smallest(b, n) };
	return LBS_OK;
}

static size_t points_needed(const lbs_cost_ops *kind)
{
	return kind == &lbs_cost_linear ? 2 : 3;
}

static lbs_status fit_kind(const lbs_cost_ops *kind, const double *b, const double *t, size_t n,
			   lbs_fit *f, lbs_error *err)
{
	if (kind == &lbs_cost_piecewise)
		return fit_piecewise(b, t, n, f, err);
	if (kind == &lbs_cost_power)
		return fit_power(b, t, n, f, err);
	if (kind == &lbs_cost_quadratic)
		return fit_quadratic(b, t, n, f, err);
	return fit_linear(b, t, n, f, err);
}

lbs_status lbs_calib_fit(const lbs_cost_ops *kind, const double *batch, const double *time_s,
			 size_t n, lbs_fit *fit, lbs_error *err)
{
	memset(fit, 0, sizeof *fit);
	size_t need = points_needed(kind);
	if (n < need)
		return lbs_error_set(err, LBS_EINPUT, "%zu points: a %s fit needs at least %zu", n,
				     kind->name, need);
	for (size_t i = 0; i < n; i++)
		if (!(batch[i] >= 1) || batch[i] != floor(batch[i]) || !(time_s[i] > 0) ||
		    !isfinite(time_s[i]))
			return lbs_error_set(err, LBS_EINPUT,
					     "point %zu: batch %g, time %g s (expected a batch >= 1 and a "
					     "time > 0)", i + 1, batch[i], time_s[i]);
	/* distinct batches: sorted, in n log n */
	double *sorted = malloc(n * sizeof *sorted);
	if (!sorted)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	memcpy(sorted, batch, n * sizeof *sorted);
	qsort(sorted, n, sizeof *sorted, cmp_double);
	for (size_t i = 1; i < n; i++)
		if (sorted[i] == sorted[i - 1]) {
			double twice = sorted[i];
			free(sorted);
			return lbs_error_set(err, LBS_EINPUT, "batch %g measured twice", twice);
		}
	free(sorted);
	lbs_status st = fit_kind(kind, batch, time_s, n, fit, err);
	if (st == LBS_OK)
		judge(fit, batch, time_s, n);
	return st;
}

/* The robust line: Tukey's bisquare M-estimator by iteratively reweighted
 * least squares (gsl_multifit_robust, its default tuning 4.685 on a MAD
 * scale, started from ordinary least squares), on (1, b) or, when its
 * intercept comes out negative, on b alone. weight[i] gets each point's
 * final weight (0: weighted out). LBS_EINPUT when GSL finds no line
 * (the caller keeps ordinary least squares). */
static lbs_status robust_line(const double *b, const double *t, size_t n, bool origin, double *c0, double *c1,
			      double *weight, lbs_error *err)
{
	size_t np = origin ? 1 : 2;
	gsl_matrix *x = gsl_matrix_alloc(n, np), *cov = gsl_matrix_alloc(np, np);
	gsl_vector *y = gsl_vector_alloc(n), *c = gsl_vector_alloc(np);
	gsl_multifit_robust_workspace *w = gsl_multifit_robust_alloc(gsl_multifit_robust_bisquare, n, np);
	lbs_status st = LBS_OK;
	if (!x || !cov || !y || !c || !w) {
		st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (!origin)
			gsl_matrix_set(x, i, 0, 1.0);
		gsl_matrix_set(x, i, np - 1, b[i]);
		gsl_vector_set(y, i, t[i]);
	}
	/* GSL_EMAXITER leaves the last iterate, still a fit */
	int gs = gsl_multifit_robust(x, y, c, cov, w);
	if (gs && gs != GSL_EMAXITER) {
		st = lbs_error_set(err, LBS_EINPUT, "robust fit: %s", gsl_strerror(gs));
		goto out;
	}
	*c0 = origin ? 0.0 : gsl_vector_get(c, 0);
	*c1 = gsl_vector_get(c, np - 1);
	gsl_multifit_robust_stats stats = gsl_multifit_robust_statistics(w);
	for (size_t i = 0; i < n; i++)
		weight[i] = gsl_vector_get(stats.weights, i);
	if (!isfinite(*c0) || !isfinite(*c1))
		st = lbs_error_set(err, LBS_EINPUT, "robust fit: no finite line");
out:
	gsl_multifit_robust_free(w);
	gsl_matrix_free(x);
	gsl_matrix_free(cov);
	gsl_vector_free(y);
	gsl_vector_free(c);
	return st;
}

lbs_status lbs_calib_fit_robust(const double *batch, const double *time_s, size_t n, lbs_fit *fit,
				double *weight, size_t *n_out, lbs_error *err)
{
	*n_out = 0;
	for (size_t i = 0; i < n; i++)
		weight[i] = 1.0;
	/* the checks, and ordinary least squares: the fit too few points get */
	lbs_status st = lbs_calib_fit(&lbs_cost_linear, batch, time_s, n, fit, err);
	if (st != LBS_OK || n < LBS_ROBUST_MIN_POINTS)
		return st;
	double *w = malloc(n * sizeof *w);
	if (!w)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	double c0, c1;
	lbs_error e = { 0 };
	st = robust_line(batch, time_s, n, false, &c0, &c1, w, &e);
	if (st == LBS_OK && c0 < 0) /* as ordinary least squares: no negative fixed time */
		st = robust_line(batch, time_s, n, true, &c0, &c1, w, &e);
	if (st == LBS_OK && !(c1 >= 0))
		st = LBS_EINPUT;
	if (st == LBS_EINPUT) { /* no robust line: ordinary least squares stands */
		free(w);
		return LBS_OK;
	}
	if (st != LBS_OK) {
		*err = e;
		free(w);
		return st;
	}
	fit->cost = (lbs_cost){ .ops = &lbs_cost_linear, .kind = 0, .t0_s = c0, .per_sample_s = c1 };
	fit->robust = true;
	judge(fit, batch, time_s, n);
	for (size_t i = 0; i < n; i++) {
		weight[i] = w[i];
		*n_out += !(w[i] > 0);
	}
	free(w);
	return LBS_OK;
}

/* Leave-one-out over the interior batches: a kind's fit to the others
 * predicts each, or, given the full robust fit's weights, the robust line
 * predicts each batch that fit kept. */
static lbs_status heldout(const lbs_cost_ops *kind, const double *weight, const double *batch, const double *time_s,
			  size_t n, double *mape, size_t *n_heldout, lbs_error *err)
{
	*mape = 0;
	*n_heldout = 0;
	if (n < points_needed(kind) + 1)
		return LBS_OK;
	double *b = malloc(n * sizeof *b), *t = malloc(n * sizeof *t), *w = weight ? malloc(n * sizeof *w) : NULL;
	if (!b || !t || (weight && !w)) {
		free(b);
		free(t);
		free(w);
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
		if (batch[out] == bmin || batch[out] == bmax || (weight && !(weight[out] > 0)))
			continue;
		size_t m = 0, k;
		for (size_t i = 0; i < n; i++)
			if (i != out) {
				b[m] = batch[i];
				t[m++] = time_s[i];
			}
		lbs_fit f;
		st = weight ? lbs_calib_fit_robust(b, t, m, &f, w, &k, err) : lbs_calib_fit(kind, b, t, m, &f, err);
		if (st != LBS_OK)
			break;
		sum += fabs(lbs_cost_time_s(&f.cost, (int64_t)batch[out]) - time_s[out]) / time_s[out];
		++*n_heldout;
	}
	free(b);
	free(t);
	free(w);
	if (st == LBS_OK && *n_heldout)
		*mape = sum / (double)*n_heldout;
	return st;
}

lbs_status lbs_calib_heldout_robust(const double *batch, const double *time_s, size_t n, const double *weight,
				    double *mape, size_t *n_heldout, lbs_error *err)
{
	return heldout(&lbs_cost_linear, weight, batch, time_s, n, mape, n_heldout, err);
}

lbs_status lbs_calib_heldout(const lbs_cost_ops *kind, const double *batch, const double *time_s,
			     size_t n, double *mape, size_t *n_heldout, lbs_error *err)
{
	return heldout(kind, NULL, batch, time_s, n, mape, n_heldout, err);
}

lbs_status lbs_calib_choose(const lbs_cost_ops *const *kinds, const double *batch,
			    const double *time_s, size_t n, lbs_kind_score *score, size_t *n_score,
			    const lbs_cost_ops **best, lbs_error *err)
{
	*best = NULL;
	*n_score = 0;
	double best_mape = INFINITY;
	bool with_heldout = false;
	for (size_t k = 0; kinds[k]; k++) {
		lbs_kind_score *s = &score[(*n_score)++];
		*s = (lbs_kind_score){ .kind = kinds[k], .mape = NAN };
		lbs_fit f;
		lbs_error e = { 0 };
		lbs_status st = lbs_calib_fit(kinds[k], batch, time_s, n, &f, &e);
		if (st == LBS_OK)
			st = lbs_calib_heldout(kinds[k], batch, time_s, n, &s->mape, &s->n, &e);
		if (st == LBS_EINPUT)
			continue; /* this kind cannot fit these points */
		if (st != LBS_OK) {
			*err = e;
			return st;
		}
		s->fits = true;
		if (!s->n)
			s->mape = NAN;
		/* the lowest held-out error; ties (within LBS_CHOOSE_TIE, and
		 * no held-out points at all) go to the kind listed first */
		if (s->n && (!with_heldout || s->mape < best_mape - LBS_CHOOSE_TIE)) {
			with_heldout = true;
			best_mape = s->mape;
			*best = kinds[k];
		} else if (!*best) {
			*best = kinds[k];
		}
	}
	if (!*best)
		return lbs_error_set(err, LBS_EINPUT, "no cost kind fits these %zu points", n);
	return LBS_OK;
}

lbs_status lbs_calib_fit_gpu(lbs_profile *p, lbs_kind_score *score, size_t *n_score, lbs_error *err)
{
	static const lbs_cost_ops *const kinds[] = { &lbs_cost_piecewise, &lbs_cost_power, &lbs_cost_quadratic,
						     NULL };
	size_t n = p->n_points;
	double *b, *t;
	if (lbs_profile_point_arrays(p, &b, &t, err) != LBS_OK)
		return LBS_EINTERNAL;
	const lbs_cost_ops *kind;
	lbs_status st = lbs_calib_choose(kinds, b, t, n, score, n_score, &kind, err);
	if (st == LBS_OK)
		st = lbs_profile_fit(p, kind, err);
	if (st == LBS_OK)
		lbs_calib_method(kind, b[0], b[n - 1], p->method, sizeof p->method);
	free(b);
	free(t);
	return st;
}

void lbs_calib_method(const lbs_cost_ops *kind, double bmin, double bmax, char *buf, size_t len)
{
	if (kind == &lbs_cost_piecewise)
		lbs_fmt(buf, len, "piecewise least squares, weights 1/t^2, breakpoint searched over "
			"integers %g..%g", bmin, bmax - 1);
	else if (kind == &lbs_cost_power)
		lbs_fmt(buf, len, "power law by least squares, weights 1/t^2, t0 and per_sample >= 0, "
			"exponent searched over 0.01..%g (of the GPU kinds, the least held-out MAPE)",
			LBS_COST_EXPONENT_MAX);
	else if (kind == &lbs_cost_quadratic)
		lbs_fmt(buf, len, "quadratic by least squares, weights 1/t^2, every coefficient >= 0 (of the GPU "
			"kinds, the least held-out MAPE)");
	else
		lbs_fmt(buf, len, "ordinary least squares (gsl_fit_linear)");
}
