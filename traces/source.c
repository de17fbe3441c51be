/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "traces/source.h"

#include <math.h>
#include <string.h>

/* Positions are kept relative to the set's origin: simulated times are
 * small numbers, trace indices may be Unix times (1.4e9), and their sum
 * would lose the low bits that the fluid rule's exactness needs. */
static double rel(const lbs_source *s, size_t i)
{
	return s->s.index[i] - s->origin;
}

static double avail_at(const lbs_source *s, size_t i)
{
	return lbs_avail_map_apply(&s->o.map, s->s.value[i]);
}

/* Largest i with rel(i) <= x, or -1 before the first sample. Starts from
 * `hint` when that is not past x: successive calls move forward a little. */
static long locate(const lbs_source *s, double x, size_t hint)
{
	size_t n = s->s.n;
	if (x < rel(s, 0))
		return -1;
	size_t i = hint < n && rel(s, hint) <= x ? hint : 0;
	for (int k = 0; k < 16; k++) {
		if (i + 1 >= n || rel(s, i + 1) > x)
			return (long)i;
		i++;
	}
	size_t a = i, b = n; /* rel(a) <= x; b == n or rel(b) > x */
	while (b - a > 1) {
		size_t m = a + (b - a) / 2;
		if (rel(s, m) <= x)
			a = m;
		else
			b = m;
	}
	return (long)a;
}

/* Folds a relative position into one period when the replay loops:
 * returns x in [0, period) and sets *base to what was taken off. */
static double wrap(const lbs_source *s, double r, double *base)
{
	*base = 0;
	if (s->o.end != LBS_END_LOOP || r < s->period)
		return r;
	double k = floor(r / s->period);
	double x = r - k * s->period;
	if (x >= s->period) { /* rounding */
		x -= s->period;
		k += 1;
	} else if (x < 0) {
		x += s->period;
		k -= 1;
	}
	*base = k * s->period;
	return x;
}

/* The piece of a(x) that holds x: it runs to *end (INFINITY after the last
 * sample when holding), starts at value *ax at x and is linear with *slope. */
static void piece(const lbs_source *s, double x, long i, double *end, double *ax, double *slope)
{
	size_t n = s->s.n;
	*slope = 0;
	if (i < 0) {
		*end = rel(s, 0);
		*ax = avail_at(s, 0);
	} else if ((size_t)i == n - 1) {
		*end = s->o.end == LBS_END_LOOP ? s->period : INFINITY;
		*ax = avail_at(s, n - 1);
	} else {
		*end = rel(s, (size_t)i + 1);
		double a0 = avail_at(s, (size_t)i);
		if (s->o.interp == LBS_INTERP_LINEAR) {
			double a1 = avail_at(s, (size_t)i + 1);
			double t0 = rel(s, (size_t)i);
			*slope = (a1 - a0) / (*end - t0);
			*ax = a0 + *slope * (x - t0);
		} else {
			*ax = a0;
		}
	}
}

/* The integral of a over one whole period (looping only), computed once. */
static double period_area(lbs_source *s)
{
	if (s->period_area >= 0)
		return s->period_area;
	size_t n = s->s.n;
	double area = rel(s, 0) * avail_at(s, 0);
	for (size_t i = 0; i + 1 < n; i++) {
		double len = rel(s, i + 1) - rel(s, i), a0 = avail_at(s, i);
		area += s->o.interp == LBS_INTERP_LINEAR ? 0.5 * (a0 + avail_at(s, i + 1)) * len : a0 * len;
	}
	area += (s->period - rel(s, n - 1)) * avail_at(s, n - 1);
	return s->period_area = area;
}

/* Availability (mapped, then interpolated) at relative position x. */
static double level_rel(const lbs_source *s, double x)
{
	double base;
	x = wrap(s, x, &base);
	long i = locate(s, x, 0);
	double end, ax, slope;
	piece(s, x, i, &end, &ax, &slope);
	return ax;
}

static double position(const lbs_source *s, double t, int64_t iteration)
{
	return s->kind == LBS_INDEX_ITERATION ? s->o.offset + (double)iteration : s->o.offset + s->o.speed * t;
}

double lbs_source_finish(lbs_source *s, double t0, double work_s, int64_t iteration)
{
	if (!(work_s > 0))
		return t0;
	if (s->kind == LBS_INDEX_ITERATION)
		return t0 + work_s / level_rel(s, position(s, t0, iteration));
	/* Walk the pieces from t0, in trace seconds: the work needs an area of
	 * work_s * speed under a, since d(trace) = speed * d(simulated). */
	double r0 = position(s, t0, iteration), base;
	double x = wrap(s, r0, &base);
	double need = work_s * s->o.speed;
	for (;;) {
		long i = locate(s, x, s->cursor);
		if (i >= 0)
			s->cursor = (size_t)i;
		double end, ax, slope;
		piece(s, x, i, &end, &ax, &slope);
		double len = end - x;
		/* The area of a trapezium (a rectangle when slope is 0). */
		double area = isinf(len) ? INFINITY : (ax + 0.5 * slope * len) * len;
		if (area >= need) {
			/* Solve ax*d + slope/2*d^2 = need for d in [0, len]; the
			 * second form avoids cancellation when slope < 0. */
			double d = slope == 0 ? need / ax
					   : 2 * need / (ax + sqrt(fmax(ax * ax + 2 * slope * need, 0)));
			if (d > len)
				d = len;
			return t0 + (base + x + d - r0) / s->o.speed;
		}
		need -= area;
		x = end;
		if (s->o.end == LBS_END_LOOP && x >= s->period) {
			x = 0;
			base += s->period;
			s->cursor = 0;
			double pa = period_area(s);
			if (need > pa) { /* whole periods at once */
				double m = floor(need / pa);
				need = fmax(need - m * pa, 0);
				base += m * s->period;
			}
		}
	}
}

double lbs_source_level(const lbs_source *s, double t, int64_t iteration)
{
	return level_rel(s, position(s, t, iteration));
}

void lbs_source_piece(lbs_source *s, double t, int64_t iteration, double *level, double *slope, double *end)
{
	if (s->kind == LBS_INDEX_ITERATION) {
		*level = level_rel(s, position(s, t, iteration));
		*slope = 0;
		*end = INFINITY;
		return;
	}
	double base, x = wrap(s, position(s, t, iteration), &base);
	long i = locate(s, x, s->cursor);
	if (i >= 0)
		s->cursor = (size_t)i;
	double e, ax, k;
	piece(s, x, i, &e, &ax, &k);
	*level = ax;
	*slope = k * s->o.speed;
	*end = isinf(e) ? INFINITY : t + (e - x) / s->o.speed;
}

bool lbs_source_reading(const lbs_source *s, lbs_reading which, double t, int64_t iteration,
			double *out)
{
	const double *v = which == LBS_READING_CPU ? s->cpu : s->mem;
	if (!v)
		return false;
	double base, x = wrap(s, position(s, t, iteration), &base);
	long i = locate(s, x, 0);
	if (i < 0)
		*out = v[0];
	else if ((size_t)i == s->s.n - 1 || s->o.interp == LBS_INTERP_STEP)
		*out = v[i];
	else {
		double t0 = rel(s, (size_t)i), t1 = rel(s, (size_t)i + 1);
		*out = v[i] + (v[i + 1] - v[i]) * (x - t0) / (t1 - t0);
	}
	return true;
}

static double op_finish(void *state, double t0, double work_s, int64_t iteration)
{
	return lbs_source_finish(state, t0, work_s, iteration);
}

static double op_level(const void *state, double t, int64_t iteration)
{
	return lbs_source_level(state, t, iteration);
}

/* The machine's readings, for policies: the series' cpu_util and mem_util
 * columns where it has them. */
static double op_reading(void *state, double t, int64_t iteration, int kind)
{
	double v;
	if (kind != LBS_READING_CPU_UTIL && kind != LBS_READING_MEM_UTIL)
		return NAN;
	lbs_reading which = kind == LBS_READING_CPU_UTIL ? LBS_READING_CPU : LBS_READING_MEM;
	return lbs_source_reading(state, which, t, iteration, &v) ? v : NAN;
}

const lbs_avail_ops lbs_source_ops = { .name = "trace", .finish = op_finish, .level = op_level,
				       .reading = op_reading };

static const char *map_name(int kind)
{
	static const char *const names[] = { "auto", "direct", "time", "rate", "util" };
	return kind >= 0 && kind <= LBS_MAP_UTIL ? names[kind] : "?";
}

lbs_status lbs_source_init(lbs_source *src, const lbs_series_set *set, size_t entity, int column,
			   const lbs_source_opts *o, lbs_error *err)
{
	memset(src, 0, sizeof *src);
	if (entity >= set->n_series || column < 0 || (size_t)column >= set->n_cols)
		return lbs_error_set(err, LBS_EINTERNAL, "%s: no entity %zu or column %d", set->path, entity,
				     column);
	src->s = lbs_series_view(set, entity, column);
	int c = lbs_series_column(set, "cpu_util");
	src->cpu = c >= 0 ? set->col[c] + set->series[entity].first : NULL;
	c = lbs_series_column(set, "mem_util");
	src->mem = c >= 0 ? set->col[c] + set->series[entity].first : NULL;
	src->kind = set->index_kind;
	src->origin = set->origin;
	src->period = set->period;
	src->o = *o;
	src->period_area = -1;
	if (!(o->offset >= 0) || !isfinite(o->offset))
		return lbs_error_set(err, LBS_EINPUT, "%s: the offset must be >= 0", set->path);
	if (set->index_kind == LBS_INDEX_ITERATION && o->speed != 1)
		return lbs_error_set(err, LBS_EINPUT, "%s: is indexed by iteration: a replay speed applies "
				     "only to traces indexed by time", set->path);
	if (!(o->speed > 0) || !isfinite(o->speed))
		return lbs_error_set(err, LBS_EINPUT, "%s: the replay speed must be > 0", set->path);
	const lbs_avail_map *m = &o->map;
	if (m->kind < LBS_MAP_DIRECT || m->kind > LBS_MAP_UTIL)
		return lbs_error_set(err, LBS_EINTERNAL, "%s: mapping not resolved", set->path);
	if (m->kind == LBS_MAP_UTIL && !(m->floor > 0))
		return lbs_error_set(err, LBS_EINPUT, "%s: the util mapping needs a floor > 0", set->path);
	/* Every mapping is monotone in v, so checking the column's extremes
	 * checks every value. */
	const lbs_column_stats *st = &set->stats[column];
	const double v[2] = { st->min, st->max };
	const int64_t line[2] = { st->min_line, st->max_line };
	for (int k = 0; k < 2; k++) {
		double a = lbs_avail_map_apply(m, v[k]);
		if (m->kind != LBS_MAP_UTIL && !(v[k] > 0))
			return lbs_error_set(err, LBS_EINPUT, "%s:%lld: %s: %.17g: trace_map = %s needs values > 0",
					     set->path, (long long)line[k], set->col_name[column], v[k],
					     map_name(m->kind));
		if (!(a > 0) || !isfinite(a))
			return lbs_error_set(err, LBS_EINPUT, "%s:%lld: %s: %.17g gives availability %g with "
					     "trace_map = %s (it must be finite and > 0)", set->path,
					     (long long)line[k], set->col_name[column], v[k], a, map_name(m->kind));
	}
	return LBS_OK;
}
