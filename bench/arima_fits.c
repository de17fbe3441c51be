/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ARIMA fits against an independent search (doc/predictors.md, "arima").
 *
 *   bench/arima_fits P D Q < SERIES
 *
 * SERIES: one value a line, a blank line between series. Each series is
 * fed to lbsim's arima predictor (window 100, refit 10, the defaults);
 * after every refit the fit is either refused (counted) or kept, and then
 * its conditional sum of squares on the window is compared with the least
 * one an independent search finds: GSL's Nelder-Mead simplex (no
 * derivatives, no shared code with the predictor's solver) restarted three
 * times from each of 13 starts (lbsim's own fit, a near-zero start and 11
 * random ones, a fixed seed), over the same region (AR stationary, MA
 * invertible: every root outside |z| = 1 + 1e-9). A kept fit whose sum of
 * squares exceeds the search's by more than 1% ended in a worse local
 * minimum. Prints one line of counts. */
#include <gsl/gsl_multimin.h>
#include <gsl/gsl_poly.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/predict.h"

const double *lbs_arima_coefficients(const void *state);

enum { WINDOW = 100, MAXN = 1000000 };

typedef struct window {
	int p, d, q;
	double z[WINDOW];
	size_t m;
} window;

static double sse_of(const window *w, const double *th)
{
	double e[WINDOW], s = 0;
	for (size_t t = 0; t < w->m; t++) {
		if (t < (size_t)w->p) {
			e[t] = 0;
			continue;
		}
		double f = th[0];
		for (int i = 1; i <= w->p; i++)
			f += th[i] * w->z[t - (size_t)i];
		for (int j = 1; j <= w->q && (size_t)j <= t; j++)
			f += th[w->p + j] * e[t - (size_t)j];
		e[t] = w->z[t] - f;
		s += e[t] * e[t];
	}
	return s;
}

static int outside(const double *a, int k, double sign)
{
	while (k > 0 && a[k - 1] == 0)
		k--;
	if (k == 0)
		return 1;
	double c[9], z[16];
	c[0] = 1;
	for (int i = 1; i <= k; i++)
		c[i] = sign * a[i - 1];
	gsl_poly_complex_workspace *ws = gsl_poly_complex_workspace_alloc((size_t)k + 1);
	int ok = ws && gsl_poly_complex_solve(c, (size_t)k + 1, ws, z) == GSL_SUCCESS;
	for (int i = 0; ok && i < k; i++)
		ok = hypot(z[2 * i], z[2 * i + 1]) > 1 + 1e-9;
	if (ws)
		gsl_poly_complex_workspace_free(ws);
	return ok;
}

static double objective(const gsl_vector *x, void *params)
{
	const window *w = params;
	if (!outside(x->data + 1, w->p, -1) || !outside(x->data + 1 + w->p, w->q, 1))
		return 1e300;
	double s = sse_of(w, x->data);
	return isfinite(s) ? s : 1e300;
}

static double simplex(window *w, const double *start)
{
	size_t np = (size_t)(1 + w->p + w->q);
	gsl_vector *x = gsl_vector_alloc(np), *step = gsl_vector_alloc(np);
	memcpy(x->data, start, np * sizeof *start);
	double best = 1e300;
	for (int round = 0; round < 3; round++) {
		for (size_t i = 0; i < np; i++)
			gsl_vector_set(step, i, i == 0 ? 0.1 * (1 + fabs(x->data[0])) : 0.1);
		gsl_multimin_function f = { objective, np, w };
		gsl_multimin_fminimizer *m = gsl_multimin_fminimizer_alloc(gsl_multimin_fminimizer_nmsimplex2, np);
		gsl_multimin_fminimizer_set(m, &f, x, step);
		for (int it = 0; it < 3000; it++)
			if (gsl_multimin_fminimizer_iterate(m) || gsl_multimin_fminimizer_size(m) < 1e-10)
				break;
		gsl_vector_memcpy(x, m->x);
		best = m->fval < best ? m->fval : best;
		gsl_multimin_fminimizer_free(m);
	}
	gsl_vector_free(x);
	gsl_vector_free(step);
	return best;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: arima_fits P D Q < SERIES\n");
		return 2;
	}
	window w = { atoi(argv[1]), atoi(argv[2]), atoi(argv[3]), { 0 }, 0 };
	lbs_kv kv[3];
	memset(kv, 0, sizeof kv);
	const char *keys[3] = { "p", "d", "q" };
	for (int i = 0; i < 3; i++) {
		snprintf(kv[i].key, sizeof kv[i].key, "%s", keys[i]);
		snprintf(kv[i].value, sizeof kv[i].value, "%s", argv[1 + i]);
	}
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	double *y = malloc(MAXN * sizeof *y);
	if (!r || !y)
		return 1;
	long fits = 0, refused = 0, compared = 0, worse = 0, worse5 = 0;
	double maxrel = 0;
	char line[256];
	for (int eof = 0; !eof;) {
		size_t n = 0;
		while (n < MAXN) {
			if (!fgets(line, sizeof line, stdin)) {
				eof = 1;
				break;
			}
			if (line[0] == '\n')
				break;
			y[n++] = atof(line);
		}
		if (n == 0)
			continue;
		lbs_error err;
		void *s;
		if (lbs_predictor_arima.create(kv, 3, 0, 1, &s, &err) != LBS_OK) {
			fprintf(stderr, "arima_fits: %s\n", err.msg);
			return 1;
		}
		long seen = 0, seen_failed = 0;
		for (size_t t = 0; t < n; t++) {
			lbs_predictor_arima.observe(s, y[t], NULL);
			lbs_policy_var v[3];
			lbs_predictor_arima.vars(s, v, 3);
			if ((long)v[0].value == seen)
				continue; /* no refit at this measurement */
			bool failed = (long)v[1].value > seen_failed;
			seen = (long)v[0].value;
			seen_failed = (long)v[1].value;
			fits++;
			const double *th = lbs_arima_coefficients(s);
			if (failed || !th) {
				refused += failed;
				continue;
			}
			size_t len = t + 1 < WINDOW ? t + 1 : WINDOW;
			memcpy(w.z, y + t + 1 - len, len * sizeof *y);
			w.m = len;
			for (int k = 0; k < w.d; k++, w.m--)
				for (size_t i = 0; i + 1 < w.m; i++)
					w.z[i] = w.z[i + 1] - w.z[i];
			double mine = sse_of(&w, th), best = simplex(&w, th), start[17], mean = 0;
			for (size_t i = 0; i < w.m; i++)
				mean += w.z[i] / (double)w.m;
			for (int k = 0; k < 12; k++) {
				double ar = 0;
				for (int i = 1; i <= w.p + w.q; i++)
					start[i] = k == 0 ? 0.05 : (gsl_rng_uniform(r) * 1.8 - 0.9) / (w.p + w.q);
				for (int i = 1; i <= w.p; i++)
					ar += start[i];
				start[0] = mean * (1 - ar);
				double b = simplex(&w, start);
				best = b < best ? b : best;
			}
			compared++;
			double rel = mine / best - 1;
			rel = rel > 0 ? rel : 0;
			maxrel = rel > maxrel ? rel : maxrel;
			worse += rel > 0.01;
			worse5 += rel > 0.05;
		}
		lbs_predictor_arima.destroy(s);
	}
	printf("ARIMA(%d,%d,%d): %ld fits, %ld refused (%.1f%%); of %ld kept, %ld (%.1f%%) over 1%% above the "
	       "search's sum of squares, %ld over 5%%, at most %.1f%%\n",
	       w.p, w.d, w.q, fits, refused, fits ? 100.0 * (double)refused / (double)fits : 0.0, compared,
	       worse, compared ? 100.0 * (double)worse / (double)compared : 0.0, worse5, 100 * maxrel);
	free(y);
	gsl_rng_free(r);
	return 0;
}
