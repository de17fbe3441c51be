/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The real-time clock lbsim reads (decision costs, run and sweep wall
 * times, calibration, benchmarks): monotonic seconds, unaffected by changes
 * to the time of day, and a process's CPU time. Simulated time never comes
 * from here. */
#ifndef LBS_CLOCK_H
#define LBS_CLOCK_H

#include <time.h>

static inline double lbs_monotonic_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU time this process has used, in seconds (the testbed's workers and
 * co-located processes, each one thread). */
static inline double lbs_cpu_time_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
