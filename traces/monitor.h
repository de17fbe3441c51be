/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What a monitoring agent reports of a machine's readings (CPU and memory
 * utilisation): the source's exact reading, seen late and noisy
 * (doc/generators.md, "What the monitor reads").
 *
 * A monitor samples the source every `period_s` seconds, at 0, P, 2P, ...
 * (period 0: whenever it is asked, at the time asked), publishes each
 * sample `lag_s` seconds after taking it, and adds to each sample an error
 * drawn from N(0, noise^2), the result clamped to [0, 1]. The reading a
 * policy sees at time t is therefore the latest published sample:
 *     s(t) = P floor(max(0, t - L) / P)   (P > 0),   max(0, t - L)   (P = 0)
 *     r(t) = clamp(x(s(t)) + noise z, 0, 1)
 * with x the source's exact reading. z is a pure function of the run's
 * seed, the worker's stream ("readings", group, index in group), the kind
 * of reading and the sample (its number, or with P = 0 its time), so
 * readings of one sample agree however often they are asked for, and
 * drawing them moves no other stream. All three 0 (the default): r = x,
 * with no arithmetic at all. */
#ifndef LBS_MONITOR_H
#define LBS_MONITOR_H

#include <stdbool.h>
#include <stdint.h>

#include "traces/avail.h"

typedef struct lbs_monitor_params {
	double noise;    /* standard deviation of the additive error, utilisation units */
	double lag_s;    /* from taking a sample to its being seen */
	double period_s; /* between samples; 0: sampled when read */
} lbs_monitor_params;

typedef struct lbs_monitor {
	lbs_monitor_params p;
	uint64_t seed; /* the stream's 64-bit seed (lbs_rng_stream_seed) */
} lbs_monitor;

/* Whether p reads the source exactly (everything 0). */
static inline bool lbs_monitor_exact(const lbs_monitor_params *p)
{
	return p->noise == 0 && p->lag_s == 0 && p->period_s == 0;
}

/* How far before the time asked a reading may look: lag + period. A
 * source whose past is not kept must keep this much of it. */
static inline double lbs_monitor_horizon_s(const lbs_monitor_params *p)
{
	return p->lag_s + p->period_s;
}

/* s(t): when the sample seen at t was taken; its number into *index
 * (with P = 0, the bits of s). */
double lbs_monitor_sample_time(const lbs_monitor_params *p, double t, uint64_t *index);

/* The standard normal error z of sample `index` of reading `kind`. */
double lbs_monitor_error(uint64_t seed, uint64_t index, int kind);

/* r(t) of reading `kind` of source a, as a policy sees it at t during
 * `iteration`: NAN where the source has none. */
double lbs_monitor_read(const lbs_monitor *m, lbs_avail *a, double t, int64_t iteration, int kind);

#endif
