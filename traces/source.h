/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Availability sources replayed from a trace series (traces/avail.h).
 *
 * A source is one worker's replay of one entity of a series set: which
 * column, how readings become availability (the mapping), how the index
 * follows the run (offset, speed), how values between samples are read
 * (step: sample-and-hold, the default; or linear interpolation) and what
 * happens after the last sample (hold it, or loop). The series itself is
 * shared and read-only; a source is a few dozen bytes of its own.
 *
 * Time-indexed series advance with simulated seconds and finish() solves
 * the fluid rule exactly: the integral of a(t) over the pieces between
 * samples, each constant (step) or linear (linear, whose last piece needs
 * the root of a quadratic, taken in closed form). Iteration-indexed series
 * give one availability per iteration. */
#ifndef LBS_SOURCE_H
#define LBS_SOURCE_H

#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"
#include "traces/avail.h"
#include "traces/series.h"

typedef enum lbs_interp { LBS_INTERP_STEP, LBS_INTERP_LINEAR } lbs_interp;
#define LBS_INTERP_CHOICES "step|linear"

typedef enum lbs_trace_end { LBS_END_HOLD, LBS_END_LOOP } lbs_trace_end;
#define LBS_TRACE_END_CHOICES "hold|loop"

/* From a reading v to availability a (doc/traces.md, "Mappings"):
 *   direct  a = v                       the column is availability already
 *   time    a = reference / v           v is a duration (a mini-batch time)
 *   rate    a = v / reference           v is a speed (a benchmark, a bandwidth)
 *   util    a = max(floor, 1 - k * v)   v is what other tenants use (a fraction)
 * and then a *= gain. `auto` is resolved by the binding from the column. */
typedef enum lbs_map_kind { LBS_MAP_AUTO, LBS_MAP_DIRECT, LBS_MAP_TIME, LBS_MAP_RATE, LBS_MAP_UTIL } lbs_map_kind;
#define LBS_MAP_CHOICES "auto|direct|time|rate|util"

typedef struct lbs_avail_map {
	int kind;         /* lbs_map_kind, not AUTO */
	double reference; /* time, rate */
	double k, floor;  /* util */
	double gain;      /* multiplies every availability (1: none) */
	double loss;      /* lost to time-sharing, lbs_avail_timeshare (0: none) */
} lbs_avail_map;

static inline double lbs_avail_map_apply(const lbs_avail_map *m, double v)
{
	double a;
	switch (m->kind) {
	case LBS_MAP_TIME: a = m->reference / v; break;
	case LBS_MAP_RATE: a = v / m->reference; break;
	case LBS_MAP_UTIL: a = 1.0 - m->k * v; a = a > m->floor ? a : m->floor; break;
	default: a = v; break;
	}
	return lbs_avail_timeshare(a * m->gain, m->loss);
}

typedef struct lbs_source_opts {
	int interp;      /* lbs_interp */
	int end;         /* lbs_trace_end */
	double offset;   /* where replay starts after the set's origin: seconds or iterations */
	double speed;    /* trace seconds per simulated second (time-indexed only) */
	lbs_avail_map map;
} lbs_source_opts;

typedef struct lbs_source {
	lbs_series s;                /* the entity's availability column */
	const double *cpu, *mem;     /* its cpu_util and mem_util readings, or NULL */
	lbs_index_kind kind;
	double origin, period;       /* the set's (see lbs_series_set) */
	lbs_source_opts o;
	size_t cursor;               /* sample found last: finish() moves forward */
	double period_area;          /* integral of a over one period; < 0 until needed */
} lbs_source;

/* Sets up src to replay entity `entity`, column `column` of `set` (which
 * must outlive it). Checks that the mapping gives a finite availability > 0
 * for every value of the column (naming the line of the value that does
 * not) and that the options suit the index kind. */
lbs_status lbs_source_init(lbs_source *src, const lbs_series_set *set, size_t entity, int column,
			   const lbs_source_opts *o, lbs_error *err);

/* The avail ops of a source: state is an lbs_source. */
extern const lbs_avail_ops lbs_source_ops;

static inline lbs_avail lbs_source_avail(lbs_source *src)
{
	return (lbs_avail){ &lbs_source_ops, src, 1.0 };
}

/* Completion time of `work_s` seconds of nominal work started at t0 in
 * `iteration` (the avail contract's finish). */
double lbs_source_finish(lbs_source *src, double t0, double work_s, int64_t iteration);

/* a(t) in `iteration`. */
double lbs_source_level(const lbs_source *src, double t, int64_t iteration);

/* The piece of a(t) that holds t, in simulated seconds: a(t) = *level,
 * changing at *slope a second (0 where the trace is read step by step), to
 * *end, where the next piece starts (INFINITY: none; iteration-indexed
 * series hold their level through the iteration). For integrating the
 * least of several sources, which needs their pieces (hybrid/plan.c).
 * Moves the cursor like finish(). */
void lbs_source_piece(lbs_source *src, double t, int64_t iteration, double *level, double *slope, double *end);

/* What a real system could observe of the machine at time t (or in
 * `iteration`, for iteration-indexed series): the cpu_util or mem_util
 * reading (fractions) of the same entity, read like the availability
 * (step or linear, hold or loop). false when the set has no such column. */
typedef enum lbs_reading { LBS_READING_CPU, LBS_READING_MEM } lbs_reading;
bool lbs_source_reading(const lbs_source *src, lbs_reading which, double t, int64_t iteration,
			double *out);

#endif
