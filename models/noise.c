/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "models/noise.h"

#include <gsl/gsl_randist.h>

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
