/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "traces/cfs.h"

#include <math.h>
#include <stdlib.h>

typedef struct cfs {
	lbs_avail inner;
	double period, phase;
	double start; /* the period the quota below was used in (NAN: none yet) */
	double used;  /* CPU seconds of it used */
} cfs;

/* Completion of `work` seconds of CPU started at t0, from the quota state
 * (*start, *used), which it advances. */
static double run(const cfs *s, double *start, double *used, double t0, double work, int64_t iteration)
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
		if (!(ps == *start)) {
			*start = ps;
			*used = 0;
		}
		double a = lbs_avail_level(&s->inner, t, iteration);
		if (a >= 1) { /* not limited: rate a up to the period's end */
			double can = a * (end - t);
			if (work <= can)
				return t + work / a;
			work -= can;
			t = end;
			continue;
		}
		double left = a * s->period - *used, room = end - t;
		double cpu = fmin(work, fmin(left > 0 ? left : 0, room));
		*used += cpu;
		work -= cpu;
		t = work > eps ? end : t + cpu; /* throttled until the next period */
	}
	return t;
}

static double cfs_finish(void *state, double t0, double work_s, int64_t iteration)
{
	cfs *s = state;
	return run(s, &s->start, &s->used, t0, work_s, iteration);
}

static double cfs_peek(void *state, double t0, double work_s, int64_t iteration)
{
	const cfs *s = state;
	double start = s->start, used = s->used;
	return run(s, &start, &used, t0, work_s, iteration);
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

lbs_status lbs_cfs_create(lbs_avail inner, double period_s, double phase_s, lbs_avail *out, lbs_error *err)
{
	if (!(period_s > 0) || !isfinite(phase_s))
		return lbs_error_set(err, LBS_EINTERNAL, "cfs: period %g s, phase %g s", period_s, phase_s);
	cfs *s = lbs_calloc(1, sizeof *s, err);
	if (!s)
		return LBS_EINTERNAL;
	*s = (cfs){ .inner = inner, .period = period_s, .phase = fmod(phase_s, period_s), .start = NAN };
	*out = (lbs_avail){ &cfs_ops, s, inner.level };
	return LBS_OK;
}
