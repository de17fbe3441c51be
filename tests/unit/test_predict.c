/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Predictors: EMA by hand, ARIMA's estimates against known coefficients
 * (tolerances from the estimator's asymptotic standard errors) and its
 * forecast against the closed form, NARX learning an exogenous relation. */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/predict.h"
#include "tests/unit/suites.h"

const double *lbs_arima_coefficients(const void *state);

static void *make(const lbs_predictor_ops *ops, const char *const *kv, size_t n, size_t n_exog)
{
	lbs_kv opts[8];
	memset(opts, 0, sizeof opts);
	for (size_t i = 0; i < n; i++) {
		const char *eq = strchr(kv[i], '=');
		snprintf(opts[i].key, sizeof opts[i].key, "%.*s", (int)(eq - kv[i]), kv[i]);
		snprintf(opts[i].value, sizeof opts[i].value, "%s", eq + 1);
		opts[i].at = (lbs_origin){ "test", (int)i + 1 };
	}
	void *st = NULL;
	lbs_error err;
	if (ops->create(opts, n, n_exog, 42, &st, &err) != LBS_OK) {
		fprintf(stderr, "\n  %s\n", err.msg);
		return NULL;
	}
	return st;
}

static void test_ema(void)
{
	const char *kv[] = { "alpha=0.25" };
	void *s = make(&lbs_predictor_ema, kv, 1, 0);
	CU_ASSERT_FATAL(s != NULL);
	CU_ASSERT(isnan(lbs_predictor_ema.predict(s, NULL)));
	lbs_predictor_ema.observe(s, 8, NULL);
	CU_ASSERT_DOUBLE_EQUAL(lbs_predictor_ema.predict(s, NULL), 8, 0);
	lbs_predictor_ema.observe(s, 16, NULL); /* 0.25 * 16 + 0.75 * 8 = 10 */
	CU_ASSERT_DOUBLE_EQUAL(lbs_predictor_ema.predict(s, NULL), 10, 1e-12);
	lbs_predictor_ema.destroy(s);
}

enum { N = 2000 };

/* y_t = c + phi1 y_{t-1} + phi2 y_{t-2} + e_t + theta e_{t-1}, e ~ N(0, 1). */
static void arma(double c, double phi1, double phi2, double theta, double *y, unsigned long seed)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, seed);
	double y1 = c / (1 - phi1 - phi2), y2 = y1, e1 = 0;
	for (int t = -200; t < N; t++) { /* burn-in */
		double e = gsl_ran_gaussian(r, 1.0);
		double v = c + phi1 * y1 + phi2 * y2 + e + theta * e1;
		y2 = y1;
		y1 = v;
		e1 = e;
		if (t >= 0)
			y[t] = v;
	}
	gsl_rng_free(r);
}

/* AR(2), phi = (0.5, -0.3): the estimates' asymptotic standard error is
 * sqrt((1 - phi2^2) / n) for both (Box & Jenkins); we allow 4 of them. The
 * forecast must equal c + phi1 y_n + phi2 y_{n-1} with the fitted values. */
static void test_arima_ar2(void)
{
	static double y[N];
	arma(10, 0.5, -0.3, 0, y, 7);
	const char *kv[] = { "p=2", "q=0", "d=0", "window=2000", "refit=2000" };
	void *s = make(&lbs_predictor_arima, kv, 5, 0);
	CU_ASSERT_FATAL(s != NULL);
	for (int t = 0; t < N; t++)
		lbs_predictor_arima.observe(s, y[t], NULL);
	const double *th = lbs_arima_coefficients(s);
	CU_ASSERT_FATAL(th != NULL);
	double se = sqrt((1 - 0.09) / N);
	CU_ASSERT(fabs(th[1] - 0.5) < 4 * se);
	CU_ASSERT(fabs(th[2] + 0.3) < 4 * se);
	/* c: the mean is c / (1 - phi1 - phi2) = 12.5; its estimate's error is
	 * about sigma / (1 - sum phi) / sqrt(n) in the mean, i.e. 1.25/sqrt(n)
	 * there, 4 of them scaled back by (1 - sum phi). */
	CU_ASSERT(fabs(th[0] - 10) < 4 * 1.25 / sqrt((double)N) * 0.8 + 4 * se * 12.5 * 2);
	double want = th[0] + th[1] * y[N - 1] + th[2] * y[N - 2];
	CU_ASSERT(fabs(lbs_predictor_arima.predict(s, NULL) - want) <= 1e-9 * fabs(want));
	lbs_predictor_arima.destroy(s);
}

/* ARMA(1,1), phi = 0.6, theta = 0.4: standard errors
 * sqrt((1 - phi^2)(1 + phi theta)^2 / (n (phi + theta)^2)) for phi and the
 * same with (1 - theta^2) for theta (Box & Jenkins, section 7.2). */
static void test_arima_arma11(void)
{
	static double y[N];
	arma(2, 0.6, 0, 0.4, y, 11);
	const char *kv[] = { "p=1", "q=1", "d=0", "window=2000", "refit=2000" };
	void *s = make(&lbs_predictor_arima, kv, 5, 0);
	CU_ASSERT_FATAL(s != NULL);
	for (int t = 0; t < N; t++)
		lbs_predictor_arima.observe(s, y[t], NULL);
	const double *th = lbs_arima_coefficients(s);
	CU_ASSERT_FATAL(th != NULL);
	double k = (1 + 0.24) * (1 + 0.24) / (N * 1.0);
	CU_ASSERT(fabs(th[1] - 0.6) < 4 * sqrt((1 - 0.36) * k));
	CU_ASSERT(fabs(th[2] - 0.4) < 4 * sqrt((1 - 0.16) * k));
	lbs_predictor_arima.destroy(s);
}

/* ARIMA(0,1,0) with drift 0.5: c estimates the drift (standard error
 * sigma / sqrt(n)), and the forecast is y_n + c. */
static void test_arima_drift(void)
{
	static double y[N];
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 3);
	y[0] = 100;
	for (int t = 1; t < N; t++)
		y[t] = y[t - 1] + 0.5 + gsl_ran_gaussian(r, 1.0);
	gsl_rng_free(r);
	const char *kv[] = { "p=0", "q=0", "d=1", "window=2000", "refit=2000" };
	void *s = make(&lbs_predictor_arima, kv, 5, 0);
	CU_ASSERT_FATAL(s != NULL);
	for (int t = 0; t < N; t++)
		lbs_predictor_arima.observe(s, y[t], NULL);
	const double *th = lbs_arima_coefficients(s);
	CU_ASSERT_FATAL(th != NULL);
	CU_ASSERT(fabs(th[0] - 0.5) < 4 / sqrt((double)N));
	/* The CSS estimate of c alone is the mean difference, exactly. */
	CU_ASSERT(fabs(th[0] - (y[N - 1] - y[0]) / (N - 1)) < 1e-6);
	CU_ASSERT(fabs(lbs_predictor_arima.predict(s, NULL) - (y[N - 1] + th[0])) < 1e-9 * y[N - 1]);
	lbs_predictor_arima.destroy(s);
}

/* Before any fit ARIMA falls back to the last value, and says so. */
static void test_arima_fallback(void)
{
	void *s = make(&lbs_predictor_arima, NULL, 0, 0);
	CU_ASSERT_FATAL(s != NULL);
	lbs_predictor_arima.observe(s, 5, NULL);
	CU_ASSERT_DOUBLE_EQUAL(lbs_predictor_arima.predict(s, NULL), 5, 0);
	lbs_policy_var v[3];
	CU_ASSERT_EQUAL(lbs_predictor_arima.vars(s, v, 3), 3);
	CU_ASSERT_STRING_EQUAL(v[2].name, "fallbacks");
	CU_ASSERT_EQUAL(v[2].value, 1);
	lbs_predictor_arima.destroy(s);
}

/* Speed set by the reading at decision time, v = 100 (1 - 0.8 x), x
 * uniform and independent from step to step: past speeds say nothing, the
 * reading says everything. NARX must beat EMA by far (RMSE under a fifth). */
static void test_narx_learns_exogenous(void)
{
	void *narx = make(&lbs_predictor_narx, NULL, 0, 1);
	void *ema = make(&lbs_predictor_ema, NULL, 0, 0);
	CU_ASSERT_FATAL(narx && ema);
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 5);
	double se_n = 0, se_e = 0;
	int counted = 0;
	for (int t = 0; t < 400; t++) {
		double x = gsl_rng_uniform(r);
		double v = 100 * (1 - 0.8 * x);
		double pn = lbs_predictor_narx.predict(narx, &x), pe = lbs_predictor_ema.predict(ema, NULL);
		if (t >= 100) {
			se_n += (pn - v) * (pn - v);
			se_e += (pe - v) * (pe - v);
			counted++;
		}
		lbs_predictor_narx.observe(narx, v, &x);
		lbs_predictor_ema.observe(ema, v, NULL);
	}
	gsl_rng_free(r);
	double rmse_n = sqrt(se_n / counted), rmse_e = sqrt(se_e / counted);
	printf("\n    narx rmse %.3f, ema rmse %.3f\n", rmse_n, rmse_e);
	CU_ASSERT(rmse_n < 0.2 * rmse_e);
	lbs_policy_var v[3];
	CU_ASSERT_EQUAL(lbs_predictor_narx.vars(narx, v, 3), 3);
	CU_ASSERT(v[0].value >= 30); /* trained every 10 measurements after warm-up */
	lbs_predictor_narx.destroy(narx);
	lbs_predictor_ema.destroy(ema);
}

/* Piecewise-constant speeds (level 100 for 150 measurements, then 40, then
 * 100, ...), with a reading that says nothing (constant): the best one can
 * do is the last speed, wrong only at the switches. Long steady stretches
 * leave a window with no variation; the forecast after a switch must follow
 * the new level (within 5% on the second step after it), not stay at the
 * window's old mean. */
static void test_narx_follows_level_changes(void)
{
	void *narx = make(&lbs_predictor_narx, NULL, 0, 1);
	CU_ASSERT_FATAL(narx != NULL);
	double x = 0.3, worst = 0;
	for (int t = 0; t < 900; t++) {
		double v = (t / 150) % 2 ? 40 : 100;
		double p = lbs_predictor_narx.predict(narx, &x);
		if (t >= 150 && t % 150 >= 2) {   /* every step but the switch itself and the next */
			double e = fabs(p - v) / v;
			worst = e > worst ? e : worst;
		}
		lbs_predictor_narx.observe(narx, v, &x);
	}
	printf("\n    worst relative error away from the switches %.4f\n", worst);
	CU_ASSERT(worst < 0.05);
	lbs_predictor_narx.destroy(narx);
}

/* CSS of an ARMA(0,1) with constant c on z: e_t = z_t - c - theta e_{t-1},
 * e_{-1} = 0. */
static double ma1_sse(const double *z, int m, double c, double theta)
{
	double e = 0, sse = 0;
	for (int t = 0; t < m; t++) {
		e = z[t] - c - theta * e;
		sse += e * e;
	}
	return sse;
}

/* Over-differenced white noise: ARIMA(0,1,1) on y_t = e_t. The differences
 * are an MA(1) with theta = -1, at the edge of invertibility, where the CSS
 * minimum lies; a solver free to cross it ended outside and the fit was
 * refused. Fitted inside the invertible region by construction, the fit
 * must be kept, with theta in (-1, -0.9), and be the minimum an independent
 * search finds: theta on a grid of step 1e-4 over (-1, 1), c for each
 * theta by least squares (the residuals are linear in c, so the sum of
 * squares is a parabola in c, minimised in closed form). */
static void test_arima_edge(void)
{
	enum { M = 200 };
	static double y[M], z[M - 1], one[M - 1];
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 5);
	for (int t = 0; t < M; t++)
		y[t] = 100 + gsl_ran_gaussian(r, 1.0);
	gsl_rng_free(r);
	for (int t = 0; t + 1 < M; t++)
		z[t] = y[t + 1] - y[t];
	const char *kv[] = { "p=0", "q=1", "d=1", "window=200", "refit=200" };
	void *s = make(&lbs_predictor_arima, kv, 5, 0);
	CU_ASSERT_FATAL(s != NULL);
	for (int t = 0; t < M; t++)
		lbs_predictor_arima.observe(s, y[t], NULL);
	lbs_policy_var v[3];
	CU_ASSERT_EQUAL(lbs_predictor_arima.vars(s, v, 3), 3);
	CU_ASSERT(v[0].value == 1 && v[1].value == 0); /* one fit, kept */
	const double *th = lbs_arima_coefficients(s);
	CU_ASSERT_FATAL(th != NULL);
	CU_ASSERT(th[1] > -1 && th[1] < -0.9);
	double mine = ma1_sse(z, M - 1, th[0], th[1]), best = INFINITY;
	for (int k = -9999; k <= 9999; k++) {
		double theta = k * 1e-4;
		/* e_t = a_t - c g_t: a from z with c = 0, g from z = 1 */
		for (int t = 0; t + 1 < M; t++)
			one[t] = 1;
		double ea = 0, eg = 0, saa = 0, sag = 0, sgg = 0;
		for (int t = 0; t + 1 < M; t++) {
			ea = z[t] - theta * ea;
			eg = one[t] - theta * eg;
			saa += ea * ea, sag += ea * eg, sgg += eg * eg;
		}
		double sse = saa - sag * sag / sgg;
		best = sse < best ? sse : best;
	}
	CU_ASSERT(mine <= best * (1 + 1e-9));
	lbs_predictor_arima.destroy(s);
}

/* The cholesky solver against the reference (solver = qr, GSL's trust
 * region with QR) on 30 series of three kinds (an exogenous relation with
 * noise, a bursty two-level series, lognormal noise without readings),
 * trained once, at the 60th measurement, on a window of 60 from the same
 * initial weights: the same forecasts to 1e-9 relative over the next 60
 * measurements (they differ by rounding, a few 1e-12 at most). Later
 * trainings warm start from weights that already differ by rounding, and a
 * training that stops at max_iter on a problem with flat directions can
 * amplify that difference 100-fold or more per training, so whole runs with
 * the two solvers agree in distribution, not to 1e-9 (doc/predictors.md). */
static void test_narx_cholesky_is_qr(void)
{
	static const char *const chol[] = { "window=60", "retrain=60", "warmup=60", "solver=cholesky" };
	static const char *const qr[] = { "window=60", "retrain=60", "warmup=60", "solver=qr" };
	double worst = 0;
	long compared = 0;
	for (int series = 0; series < 30; series++) {
		int kind = series % 3;
		size_t n_exog = kind == 2 ? 0 : 2;
		void *a = make(&lbs_predictor_narx, chol, 4, n_exog);
		void *b = make(&lbs_predictor_narx, qr, 4, n_exog);
		CU_ASSERT_FATAL(a && b);
		gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
		gsl_rng_set(r, 11 + (unsigned long)series);
		for (int t = 0; t < 120; t++) {
			double x[2] = { gsl_rng_uniform(r), gsl_rng_uniform(r) }, v;
			if (kind == 0)
				v = 100 * (1 - 0.6 * x[0]) + gsl_ran_gaussian(r, 2);
			else if (kind == 1)
				v = ((t / 37) % 2 ? 40 : 100) * (1 + 0.05 * gsl_rng_uniform(r));
			else
				v = 50 * gsl_ran_lognormal(r, 0, 0.15);
			double pa = lbs_predictor_narx.predict(a, n_exog ? x : NULL);
			double pb = lbs_predictor_narx.predict(b, n_exog ? x : NULL);
			if (t >= 60) { /* after the training */
				double e = fabs(pa - pb) / fabs(pb);
				worst = e > worst || isnan(e) ? e : worst;
				compared++;
			}
			lbs_predictor_narx.observe(a, v, n_exog ? x : NULL);
			lbs_predictor_narx.observe(b, v, n_exog ? x : NULL);
		}
		lbs_policy_var va[3], vb[3];
		lbs_predictor_narx.vars(a, va, 3);
		lbs_predictor_narx.vars(b, vb, 3);
		CU_ASSERT_EQUAL(va[0].value, 2); /* trained at 60 and 120 */
		for (int k = 0; k < 3; k++)
			CU_ASSERT_EQUAL(va[k].value, vb[k].value);
		gsl_rng_free(r);
		lbs_predictor_narx.destroy(a);
		lbs_predictor_narx.destroy(b);
	}
	printf("\n    worst relative difference over %ld forecasts %.3g\n", compared, worst);
	CU_ASSERT(compared == 30 * 60);
	CU_ASSERT(worst <= 1e-9);
}

/* ARX on data an ARX process makes exactly:
 *   y_t = 5 + 0.4 y_{t-1} - 0.2 y_{t-2} + 0.1 y_{t-3}
 *         + 30 x1_t - 10 x1_{t-1} + 20 x2_t + 5 x2_{t-1}
 * with x1, x2 independent uniform readings. Ordinary least squares
 * (lambda = 0) on noise-free data recovers the model, so once fitted every
 * forecast is the process's next value, to rounding (1e-9 relative). */
static void test_arx_recovers_linear_model(void)
{
	const char *kv[] = { "lambda=0", "dy=3", "dx=2", "warmup=20" };
	void *s = make(&lbs_predictor_arx, kv, 4, 2);
	CU_ASSERT_FATAL(s != NULL);
	gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
	gsl_rng_set(r, 11);
	double y[400], x[400][2];
	double worst = 0;
	long compared = 0;
	for (int t = 0; t < 400; t++) {
		x[t][0] = gsl_rng_uniform(r);
		x[t][1] = gsl_rng_uniform(r);
		y[t] = t < 3 ? 50 + t : 5 + 0.4 * y[t - 1] - 0.2 * y[t - 2] + 0.1 * y[t - 3] + 30 * x[t][0] -
						10 * x[t - 1][0] + 20 * x[t][1] + 5 * x[t - 1][1];
		double p = lbs_predictor_arx.predict(s, x[t]);
		if (t >= 25) {
			double e = fabs(p - y[t]) / fabs(y[t]);
			worst = e > worst ? e : worst;
			compared++;
		}
		lbs_predictor_arx.observe(s, y[t], x[t]);
	}
	printf("\n    worst relative error over %ld forecasts %.3g\n", compared, worst);
	CU_ASSERT(compared == 375);
	CU_ASSERT(worst <= 1e-9);
	lbs_policy_var v[3];
	CU_ASSERT_EQUAL(lbs_predictor_arx.vars(s, v, 3), 3);
	CU_ASSERT(strcmp(v[1].name, "failed_fits") == 0 && v[1].value == 0);
	gsl_rng_free(r);
	lbs_predictor_arx.destroy(s);
}

/* The reading alone determines the speed: y_t = 150 - 100 x_t, x_t = 0.6
 * or 0 at random. With dy = dx = 1 ordinary least squares finds it exactly
 * (the forecast is 150 - 100 x_t to 1e-9 from the first fit on), while the
 * last speed is wrong at every switch. With the defaults (dy = 3, dx = 2, so
 * y_{t-1} = 150 - 100 x_{t-1} is collinear with the regressor x_{t-1}),
 * lambda = 0 fails every fit (counted, the EMA answers) and the default
 * ridge penalty gives forecasts within 1% of the speed. */
static void test_arx_reading_determines_speed(void)
{
	const char *exact[] = { "lambda=0", "dy=1", "dx=1" };
	const char *singular[] = { "lambda=0" };
	void *a = make(&lbs_predictor_arx, exact, 3, 1);
	void *b = make(&lbs_predictor_arx, NULL, 0, 1);
	void *c = make(&lbs_predictor_arx, singular, 1, 1);
	CU_ASSERT_FATAL(a && b && c);
	gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
	gsl_rng_set(r, 5);
	double worst_a = 0, worst_b = 0, last = NAN;
	long stale = 0;
	for (int t = 0; t < 300; t++) {
		double x = gsl_rng_uniform(r) < 0.4 ? 0.6 : 0.0, y = 150 - 100 * x;
		double pa = lbs_predictor_arx.predict(a, &x), pb = lbs_predictor_arx.predict(b, &x);
		lbs_predictor_arx.predict(c, &x);
		if (t >= 20) {
			worst_a = fmax(worst_a, fabs(pa - y) / y);
			worst_b = fmax(worst_b, fabs(pb - y) / y);
			stale += fabs(last - y) > 1;
		}
		lbs_predictor_arx.observe(a, y, &x);
		lbs_predictor_arx.observe(b, y, &x);
		lbs_predictor_arx.observe(c, y, &x);
		last = y;
	}
	printf("\n    worst relative error: exact %.3g, default ridge %.3g; last speed wrong %ld times\n",
	       worst_a, worst_b, stale);
	CU_ASSERT(worst_a <= 1e-9);
	CU_ASSERT(worst_b <= 0.01);
	CU_ASSERT(stale > 50);
	lbs_policy_var v[3];
	lbs_predictor_arx.vars(c, v, 3);
	CU_ASSERT(v[0].value > 250 && v[1].value == v[0].value); /* every fit failed */
	CU_ASSERT(v[2].value == 300);                           /* so every forecast fell back */
	gsl_rng_free(r);
	lbs_predictor_arx.destroy(a);
	lbs_predictor_arx.destroy(b);
	lbs_predictor_arx.destroy(c);
}

void suite_predict(void)
{
	static const test_case tests[] = {
		{ "ema by hand", test_ema },
		{ "arima: AR(2) coefficients and forecast", test_arima_ar2 },
		{ "arima: ARMA(1,1) coefficients", test_arima_arma11 },
		{ "arima: drift with d = 1", test_arima_drift },
		{ "arima: fallback counted", test_arima_fallback },
		{ "arima: a minimum at the edge of invertibility", test_arima_edge },
		{ "narx: learns an exogenous relation", test_narx_learns_exogenous },
		{ "narx: follows level changes after steady stretches", test_narx_follows_level_changes },
		{ "narx: cholesky solver forecasts what GSL's QR solver does", test_narx_cholesky_is_qr },
		{ "arx: recovers a linear ARX process exactly", test_arx_recovers_linear_model },
		{ "arx: a reading that determines the speed; collinear readings", test_arx_reading_determines_speed },
	};
	add_suite("predict", tests, sizeof tests / sizeof tests[0]);
}
