/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Availability: the fraction a(t) > 0 of its nominal speed a worker (or a
 * link) delivers at time t. Work of nominal duration W started at t0 ends at
 * the t1 where the integral of a(t) from t0 to t1 equals W (DESIGN.md, the
 * fluid rule). A source answers exactly that question, so a change of a(t)
 * in the middle of an iteration moves the completion as the integral says.
 *
 * Contract: for one worker, finish() is called for each piece of work (a
 * whole share, or one micro-batch) with non-decreasing t0; the worker is
 * busy from t0 to the time returned and idle from then until the next
 * call's t0. A source whose availability
 * depends on that (a CPU-credit bucket spends credits only while busy) may
 * update its state in finish(). Iteration-indexed sources use `iteration`;
 * time-indexed ones use t0.
 *
 * Sources without ops (ops == NULL) are constant: t1 = t0 + W / level. */
#ifndef LBS_AVAIL_H
#define LBS_AVAIL_H

#include <stdint.h>

typedef struct lbs_avail_ops {
	const char *name;
	/* Completion time of `work_s` seconds of nominal work started at t0,
	 * the worker's `iteration`-th. */
	double (*finish)(void *state, double t0, double work_s, int64_t iteration);
	/* a(t) during `iteration`, for readings and reports. */
	double (*level)(const void *state, double t, int64_t iteration);
	/* What finish() would return, without recording the worker as busy
	 * (the oracle's look-ahead). NULL when finish() has no side effects. */
	double (*peek)(void *state, double t0, double work_s, int64_t iteration);
} lbs_avail_ops;

typedef struct lbs_avail {
	const lbs_avail_ops *ops; /* NULL: constant `level` */
	void *state;
	double level;
} lbs_avail;

static inline double lbs_avail_finish(lbs_avail *a, double t0, double work_s, int64_t iteration)
{
	return a->ops ? a->ops->finish(a->state, t0, work_s, iteration) : t0 + work_s / a->level;
}

/* finish() without side effects. */
static inline double lbs_avail_peek(lbs_avail *a, double t0, double work_s, int64_t iteration)
{
	if (!a->ops)
		return t0 + work_s / a->level;
	return a->ops->peek ? a->ops->peek(a->state, t0, work_s, iteration)
			    : a->ops->finish(a->state, t0, work_s, iteration);
}

#endif
