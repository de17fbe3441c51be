/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "traces/cfs.h"

#include <math.h>
#include <stdlib.h>

/* The quota state: what changes as the worker runs. */
typedef struct quota {
	double start;  /* the period the figures below are of (NAN: none yet) */
	double used;   /* CPU seconds used in it */
	double budget; /* CPU seconds it may use in it: its quota less the debt it began with */
} quota;

typedef struct cfs {
	lbs_avail inner;
	double period, phase;
	double tick;  /* the kernel's check of the quota (0: exact) */
	quota q;
} cfs;

/* The period starting at ps starts: its quota, a x period, less what the
 * worker still owes of its overruns (each period's quota pays them back,
 * those it was idle in too); unused quota is lost. */
static void next_period(quota *q, double ps, double period, double quota_s)
{
	double debt = isnan(q->start) ? 0 : q->used - q->budget;
	if (debt > 0) {
		double idle = floor((ps - q->start) / period + 0.5) - 1; /* periods it did not run in */
		if (idle > 0)
			debt -= idle * quota_s;
	}
	q->start = ps;
	q->used = 0;
	q->budget = quota_s - (debt > 0 ? debt : 0);
}

/* Completion of `work` seconds of CPU started at t0, from the quota state
 * *q, which it advances. */
static double run(const cfs *s, quota *q, double t0, double work, int64_t iteration)
{
	double t = t0;
	/* Work is done when what is left is within the rounding of the
	 * subtractions (1e-12 of it): a remainder that small is not worth
	 * another period. */
	const double eps = 1e-12 * work;
	while (work > eps) {
		double k = floor((t - s->phase) / s->period);
		double ps = s->phase + k * s->period, end = s->phase + (k + 1) * s->period;
		if (ps > t) { /* rounding: t belongs to the period before */
			end = ps;
			ps = s->phase + (k - 1) * s->period;
		} else if (end <= t) { /* rounding: t is the next period's start */
			ps = end;
			end = s->phase + (k + 2) * s->period;
		}
		double a = lbs_avail_level(&s->inner, t, iteration);
		if (!(ps == q->start))
			next_period(q, ps, s->period, a < 1 ? a * s->period : 0);
		if (a >= 1) { /* not limited (and no debt): rate a up to the period's end */
			q->budget = q->used = 0;
			double can = a * (end - t);
			if (work <= can)
				return t + work / a;
			work -= can;
			t = end;
			continue;
		}
		double left = q->budget - q->used, room = end - t;
		double cpu = fmin(work, fmin(left > 0 ? left : 0, room));
		q->used += cpu;
		work -= cpu;
		t += cpu;
		if (s->tick > 0 && work > eps && cpu > 0 && t < end) {
			/* The quota ran out at t; the kernel sees it at the next
			 * tick and lets the worker run until then (to the
			 * period's end at most, where the next quota comes). */
			double tk = s->tick * ceil(t / s->tick - 1e-9); /* t on a tick: that one */
			double over = fmin(work, fmin(tk, end) - t);
			q->used += over;
			work -= over;
			t += over;
		}
		if (work > eps)
			t = end; /* throttled until the next period */
	}
	return t;
}

static double cfs_finish(void *state, double t0, double work_s, int64_t iteration)
{
	cfs *s = state;
	return run(s, &s->q, t0, work_s, iteration);
}

static double cfs_peek(void *state, double t0, double work_s, int64_t iteration)
{
	const cfs *s = state;
	quota q = s->q;
	return run(s, &q, t0, work_s, iteration);
}

static double cfs_level(const void *state, double t, int64_t iteration)
{
	const cfs *s = state;
	return lbs_avail_level(&s->inner, t, iteration);
}

static double cfs_reading(void *state, double t, int64_t iteration, int kind)
{
	cfs *s = state;
	return lbs_avail_reading(&s->inner, t, iteration, kind);
}

static void cfs_epoch(void *state, int64_t epoch, int64_t first, int64_t iterations)
{
	cfs *s = state;
	lbs_avail_epoch(&s->inner, epoch, first, iterations);
}

static void cfs_destroy(void *state)
{
	cfs *s = state;
	lbs_avail_destroy(&s->inner);
	free(s);
}

static const lbs_avail_ops cfs_ops = {
	.name = "cfs",
	.finish = cfs_finish,
	.level = cfs_level,
	.reading = cfs_reading,
	.destroy = cfs_destroy,
	.peek = cfs_peek,
	.epoch = cfs_epoch,
};

lbs_status lbs_cfs_create(lbs_avail inner, double period_s, double phase_s, double tick_s, lbs_avail *out,
			  lbs_error *err)
{
	if (!(period_s > 0) || !isfinite(phase_s) || !(tick_s >= 0) || !isfinite(tick_s))
		return lbs_error_set(err, LBS_EINTERNAL, "cfs: period %g s, phase %g s, tick %g s", period_s, phase_s,
				     tick_s);
	cfs *s = lbs_calloc(1, sizeof *s, err);
	if (!s)
		return LBS_EINTERNAL;
	*s = (cfs){ .inner = inner, .period = period_s, .phase = fmod(phase_s, period_s), .tick = tick_s, .q.start = NAN };
	*out = (lbs_avail){ &cfs_ops, s, inner.level };
	return LBS_OK;
}
