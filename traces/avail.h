/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Availability: the fraction a(t) > 0 of its nominal speed a worker (or a
 * link) delivers at time t. Work of nominal duration W started at t0 ends at
 * the t1 where the integral of a(t) from t0 to t1 equals W (the fluid rule,
 * doc/model.md). A source answers exactly that question, so a change of a(t)
 * in the middle of an iteration moves the completion as the integral says.
 *
 * Contract: for one worker, finish() is called for each piece of work (a
 * whole share, or one micro-batch) with non-decreasing t0; the worker is
 * busy from t0 to the time returned and idle from then until the next
 * call's t0. (A network's source is called once per aggregation, for its
 * transfer; the link is busy likewise.) A source whose availability
 * depends on that (a CPU-credit bucket spends credits only while busy) may
 * update its state in finish(). Iteration-indexed sources use `iteration`;
 * time-indexed ones use t0.
 *
 * Sources without ops (ops == NULL) are constant: t1 = t0 + W / level.
 *
 * Readings: a source that models what else runs on the machine (a
 * co-located job, a CPU-credit balance) also says what a monitor there would
 * read at time t, so that policies and predictors see the same exogenous
 * inputs a real system samples at iteration boundaries (policies see only
 * what a real system could see; doc/policies.md). */
#ifndef LBS_AVAIL_H
#define LBS_AVAIL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

/* What a reading measures. Utilisations are fractions of the machine in
 * [0, 1] taken by its other tenants; credits are EC2 CPU credits (the
 * CloudWatch metric CPUCreditBalance). */
typedef enum lbs_reading_kind {
	LBS_READING_CPU_UTIL,
	LBS_READING_MEM_UTIL,
	LBS_READING_CPU_CREDITS,
	LBS_READING_KINDS
} lbs_reading_kind;

typedef struct lbs_avail_ops {
	const char *name;
	/* Completion time of `work_s` seconds of nominal work started at t0,
	 * the worker's `iteration`-th. */
	double (*finish)(void *state, double t0, double work_s, int64_t iteration);
	/* a(t) during `iteration`, for readings and reports. */
	double (*level)(const void *state, double t, int64_t iteration);
	/* Optional (NULL: no readings). The reading of `kind` (lbs_reading_kind)
	 * at time t, before `iteration` starts (iteration-indexed sources read
	 * by iteration), NAN when the source has none of that kind. Calls come at
	 * non-decreasing t, no earlier than the last finish()'s t0 (iteration
	 * boundaries). It may advance a lazily drawn process to t, but never
	 * changes what finish() or a later reading returns. */
	double (*reading)(void *state, double t, int64_t iteration, int kind);
	/* Optional (NULL: nothing owned). Frees the state. */
	void (*destroy)(void *state);
	/* What finish() would return, without recording the worker as busy
	 * (the oracle's look-ahead). NULL when finish() has no side effects. */
	double (*peek)(void *state, double t0, double work_s, int64_t iteration);
	/* Optional (NULL: the source has no use for epochs). The run's epoch
	 * `epoch` starts at iteration `first` and lasts `iterations`
	 * iterations (a policy that shrinks the global batch lengthens it).
	 * Called once per epoch, in order, after its first iteration is
	 * planned and before that iteration's first finish(). */
	void (*epoch)(void *state, int64_t epoch, int64_t first, int64_t iterations);
} lbs_avail_ops;

typedef struct lbs_avail {
	const lbs_avail_ops *ops; /* NULL: constant `level` */
	void *state;
	double level;
} lbs_avail;

/* What is left of availability a to a worker that time-shares its core
 * and loses `loss` of a core (refill / slice) to it: a - loss while a < 1,
 * never below a / 10; a itself when loss is 0 or the core is its own. */
static inline double lbs_avail_timeshare(double a, double loss)
{
	if (loss > 0 && a < 1) {
		double left = a - loss;
		return left > 0.1 * a ? left : 0.1 * a;
	}
	return a;
}

static inline double lbs_avail_finish(lbs_avail *a, double t0, double work_s, int64_t iteration)
{
	return a->ops ? a->ops->finish(a->state, t0, work_s, iteration) : t0 + work_s / a->level;
}

/* a(t) during `iteration`: the level of a constant source, or its ops'. */
static inline double lbs_avail_level(const lbs_avail *a, double t, int64_t iteration)
{
	return a->ops ? a->ops->level(a->state, t, iteration) : a->level;
}

/* The source's reading of `kind` at t; NAN when it has none. */
static inline double lbs_avail_reading(lbs_avail *a, double t, int64_t iteration, int kind)
{
	return a->ops && a->ops->reading ? a->ops->reading(a->state, t, iteration, kind) : NAN;
}

/* Frees what the source owns and leaves the constant source of level 1. */
static inline void lbs_avail_destroy(lbs_avail *a)
{
	if (a->ops && a->ops->destroy)
		a->ops->destroy(a->state);
	*a = (lbs_avail){ NULL, NULL, 1.0 };
}

/* finish() without side effects. */
static inline double lbs_avail_peek(lbs_avail *a, double t0, double work_s, int64_t iteration)
{
	if (!a->ops)
		return t0 + work_s / a->level;
	return a->ops->peek ? a->ops->peek(a->state, t0, work_s, iteration)
			    : a->ops->finish(a->state, t0, work_s, iteration);
}

/* Tells the source where the run's epoch starts and how long it is. */
static inline void lbs_avail_epoch(lbs_avail *a, int64_t epoch, int64_t first, int64_t iterations)
{
	if (a->ops && a->ops->epoch)
		a->ops->epoch(a->state, epoch, first, iterations);
}

#endif
