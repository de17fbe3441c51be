/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Per-iteration multiplicative noise on compute time: each iteration a
 * worker's nominal time is multiplied by a factor drawn from its own stream. */
#ifndef LBS_NOISE_H
#define LBS_NOISE_H

#include <gsl/gsl_rng.h>
#include <stdint.h>

#define LBS_NOISE_CHOICES "none|uniform|lognormal"

typedef enum lbs_noise_kind { LBS_NOISE_NONE, LBS_NOISE_UNIFORM, LBS_NOISE_LOGNORMAL } lbs_noise_kind;

typedef struct lbs_noise {
	int kind;     /* lbs_noise_kind */
	double low;   /* uniform: factor in [1 + low, 1 + high) */
	double high;
	double sigma; /* lognormal: factor = exp(N(-sigma^2/2, sigma^2)), mean 1 */
} lbs_noise;

/* The uniform factor for a draw u in [0, 1) (what lbs_noise_draw computes,
 * for callers that draw u themselves). */
static inline double lbs_noise_uniform(const lbs_noise *noise, double u)
{
	return 1.0 + noise->low + (noise->high - noise->low) * u;
}

/* Draws one factor (> 0). NONE draws nothing and returns 1. */
double lbs_noise_draw(const lbs_noise *noise, gsl_rng *r);

/* The factor's mean, for closed forms and reports. */
double lbs_noise_mean(const lbs_noise *noise);

/* The expected range (max - min) of n independent standard normal draws,
 * d2(n) of quality control: the integral over x of 1 - Phi(x)^n -
 * (1 - Phi(x))^n (gsl_integration_qagi). 0 for n < 2; 2/sqrt(pi) for 2,
 * 3/sqrt(pi) for 3. A relative spread (max - min) / median of n timed
 * repetitions over d2(n) estimates their relative standard deviation. */
double lbs_expected_range(int64_t n);

#endif
