/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The real-time clock lbsim reads (decision costs, run and sweep wall
 * times, calibration, benchmarks): monotonic seconds, unaffected by changes
 * to the time of day. Simulated time never comes from here. */
#ifndef LBS_CLOCK_H
#define LBS_CLOCK_H

#include <time.h>

static inline double lbs_monotonic_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
