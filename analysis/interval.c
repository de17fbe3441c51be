/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "analysis/interval.h"

#include <math.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>

lbs_interval lbs_interval_mean(const double *x, size_t n)
{
	lbs_interval r = { .n = n, .mean = NAN, .sd = NAN, .half = NAN };
	if (n == 0)
		return r;
	r.mean = gsl_stats_mean(x, 1, n);
	if (n < 2)
		return r;
	r.sd = gsl_stats_sd_m(x, 1, n, r.mean);
	r.half = gsl_cdf_tdist_Pinv(0.975, (double)(n - 1)) * r.sd / sqrt((double)n);
	return r;
}

void lbs_interval_wilson(size_t k, size_t n, double *lo, double *hi)
{
	double z = gsl_cdf_ugaussian_Pinv(0.975), z2 = z * z, nn = (double)n, p = (double)k / nn;
	double centre = (p + z2 / (2 * nn)) / (1 + z2 / nn);
	double spread = z / (1 + z2 / nn) * sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn));
	*lo = fmax(0.0, centre - spread);
	*hi = fmin(1.0, centre + spread);
}
