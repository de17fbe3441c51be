/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "models/noise.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_randist.h>
#include <math.h>

double lbs_noise_draw(const lbs_noise *noise, gsl_rng *r)
{
	switch (noise->kind) {
	case LBS_NOISE_UNIFORM:
		return lbs_noise_uniform(noise, gsl_rng_uniform(r));
	case LBS_NOISE_LOGNORMAL:
		return gsl_ran_lognormal(r, -0.5 * noise->sigma * noise->sigma, noise->sigma);
	default:
		return 1.0;
	}
}

double lbs_noise_mean(const lbs_noise *noise)
{
	switch (noise->kind) {
	case LBS_NOISE_UNIFORM:
		return 1.0 + 0.5 * (noise->low + noise->high);
	default:
		return 1.0;
	}
}

/* 1 - Phi(x)^n - (1 - Phi(x))^n: the probability that x lies between the
 * least and the greatest of n draws; its integral is their mean range. */
static double inside(double x, void *n)
{
	const double k = (double)*(const int64_t *)n;
	return 1.0 - pow(gsl_cdf_ugaussian_P(x), k) - pow(gsl_cdf_ugaussian_Q(x), k);
}

double lbs_expected_range(int64_t n)
{
	if (n < 2)
		return 0;
	gsl_integration_workspace *w = gsl_integration_workspace_alloc(200);
	if (!w)
		return NAN;
	gsl_function f = { .function = inside, .params = &n };
	double d2 = NAN, abserr;
	gsl_error_handler_t *old = gsl_set_error_handler_off();
	if (gsl_integration_qagi(&f, 1e-10, 1e-9, 200, w, &d2, &abserr) != GSL_SUCCESS)
		d2 = NAN;
	gsl_set_error_handler(old);
	gsl_integration_workspace_free(w);
	return d2;
}
