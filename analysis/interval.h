/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The uncertainty of an answer over seeds: the mean of a metric with its
 * 95% confidence interval (Student's t over the seeds), and a probability
 * with its 95% Wilson score interval. */
#ifndef LBS_INTERVAL_H
#define LBS_INTERVAL_H

#include <stddef.h>

typedef struct lbs_interval {
	size_t n;
	double mean;
	double sd;   /* sample standard deviation (n - 1); NAN when n < 2 */
	double half; /* half-width of the 95% interval of the mean: t(0.975, n - 1) sd / sqrt(n); NAN when n < 2 */
} lbs_interval;

/* The mean of x[0..n) with its 95% interval; n = 0 gives NANs. */
lbs_interval lbs_interval_mean(const double *x, size_t n);

/* The 95% Wilson score interval of a proportion of k successes in n trials
 * (n > 0): [*lo, *hi], which holds k/n and stays within [0, 1]. */
void lbs_interval_wilson(size_t k, size_t n, double *lo, double *hi);

#endif
