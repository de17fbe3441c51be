/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Availability sources replayed from series: completion times against
 * hand-computed integrals (step and linear, hold and loop, offset and
 * speed), iteration-indexed replay, the mappings, their validation, and
 * the readings a policy may observe. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/suites.h"
#include "traces/cfs.h"
#include "traces/reader.h"
#include "traces/source.h"

static lbs_error err;

static lbs_series_set *load(const char *format, const char *text)
{
	char *path = write_temp(text);
	lbs_series_set *s = NULL;
	if (lbs_trace_reader_find(format)->read(path, NULL, &s, &err) != LBS_OK)
		fprintf(stderr, "\n  %s\n", err.msg);
	unlink(path);
	free(path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	return s;
}

static const lbs_source_opts direct = { LBS_INTERP_STEP, LBS_END_HOLD, 0, 1,
					{ LBS_MAP_DIRECT, 0, 0, 0, 1, 0 } };

/* a(t) = 1 on [0, 10), 0.5 on [10, 25), 1 from 25 on (held). */
#define HALVES "# lbsim-trace 1\ntime_s,availability,cpu_util\n0,1,0.1\n10,0.5,0.55\n25,1,0.1\n"

static void test_step_hold(void)
{
	lbs_series_set *set = load("lbsim", HALVES);
	lbs_source s;
	CU_ASSERT_EQUAL_FATAL(lbs_source_init(&s, set, 0, 0, &direct, &err), LBS_OK);
	/* 2 s at full speed (8 -> 10) leave 2 s of work at half speed: 4 s. */
	CU_ASSERT_EQUAL(lbs_source_finish(&s, 8, 4, 0), 14.0);
	/* 20 -> 25 at 0.5 does 2.5 s; 7.5 s remain at 1. */
	CU_ASSERT_EQUAL(lbs_source_finish(&s, 20, 10, 1), 32.5);
	/* Across both changes: 9 -> 10 (1), 10 -> 25 (7.5), 1.5 more. */
	CU_ASSERT_EQUAL(lbs_source_finish(&s, 9, 10, 2), 26.5);
	/* Past the end the last value holds; no work takes no time. */
	CU_ASSERT_EQUAL(lbs_source_finish(&s, 100, 3, 3), 103.0);
	CU_ASSERT_EQUAL(lbs_source_finish(&s, 100, 0, 4), 100.0);
	CU_ASSERT_EQUAL(lbs_source_level(&s, 10, 0), 0.5);
	CU_ASSERT_EQUAL(lbs_source_level(&s, 9.999, 0), 1.0);
	CU_ASSERT_EQUAL(lbs_source_level(&s, 1e9, 0), 1.0);
	/* Through the avail contract. */
	lbs_avail a = lbs_source_avail(&s);
	CU_ASSERT_EQUAL(lbs_avail_finish(&a, 8, 4, 0), 14.0);
	/* Calls going back (a fresh run on the same source) still answer right. */
	CU_ASSERT_EQUAL(lbs_source_finish(&s, 0, 12, 0), 14.0);
	lbs_series_set_destroy(set);
}

static void test_linear(void)
{
	lbs_series_set *set = load("lbsim", HALVES);
	lbs_source_opts o = direct;
	o.interp = LBS_INTERP_LINEAR;
	lbs_source s;
	CU_ASSERT_EQUAL_FATAL(lbs_source_init(&s, set, 0, 0, &o, &err), LBS_OK);
	/* a = 1 - t/20 on [0, 10]: T - T^2/40 = 5 gives T = 20 - sqrt(200). */
	CU_ASSERT_DOUBLE_EQUAL(lbs_source_finish(&s, 0, 5, 0), 20 - sqrt(200), 1e-14);
	/* The whole first piece, 7.5, ends exactly at 10. */
	CU_ASSERT_DOUBLE_EQUAL(lbs_source_finish(&s, 0, 7.5, 0), 10, 1e-14);
	/* Then a = 0.5 + (t - 10)/30: 2.5 more needs d/2 + d^2/60 = 2.5,
	 * d^2 + 30 d - 150 = 0, d = -15 + sqrt(375). */
	CU_ASSERT_DOUBLE_EQUAL(lbs_source_finish(&s, 0, 10, 0), 10 - 15 + sqrt(375), 1e-13);
	CU_ASSERT_DOUBLE_EQUAL(lbs_source_level(&s, 5, 0), 0.75, 1e-15);
	CU_ASSERT_DOUBLE_EQUAL(lbs_source_level(&s, 17.5, 0), 0.75, 1e-15);
	CU_ASSERT_EQUAL(lbs_source_level(&s, 30, 0), 1.0);
	lbs_series_set_destroy(set);
}

static void test_loop_offset_speed(void)
{
	/* a = 1 on [0, 10), 0.5 on [10, 20) (the last sample lasts one step),
	 * then again: one period has an area of 15. */
	lbs_series_set *set = load("lbsim", "# lbsim-trace 1\ntime_s,availability\n0,1\n10,0.5\n");
	lbs_source_opts o = direct;
	o.end = LBS_END_LOOP;
	lbs_source s;
	CU_ASSERT_EQUAL_FATAL(lbs_source_init(&s, set, 0, 0, &o, &err), LBS_OK);
	CU_ASSERT_EQUAL(set->period, 20);
	CU_ASSERT_EQUAL(lbs_source_finish(&s, 0, 40, 0), 50.0); /* two periods, then 10 at 1 */
	CU_ASSERT_EQUAL(lbs_source_finish(&s, 5, 20, 0), 30.0);
	CU_ASSERT_EQUAL(lbs_source_finish(&s, 0, 15e6, 0), 2e7); /* a million periods */
	CU_ASSERT_EQUAL(lbs_source_level(&s, 45, 0), 1.0);
	CU_ASSERT_EQUAL(lbs_source_level(&s, 55, 0), 0.5);

	/* Hold instead: after 10 it stays 0.5. */
	o.end = LBS_END_HOLD;
	CU_ASSERT_EQUAL_FATAL(lbs_source_init(&s, set, 0, 0, &o, &err), LBS_OK);
	CU_ASSERT_EQUAL(lbs_source_finish(&s, 0, 40, 0), 70.0);
	lbs_series_set_destroy(set);

	/* Offset 10 s and speed 2 on HALVES: the trace position is 10 + 2t.
	 * 10 -> 25 at 0.5 is 7.5 of the 10 trace-seconds of work needed
	 * (5 s * speed 2); 2.5 more at 1 end at 27.5, that is t = 8.75. */
	set = load("lbsim", HALVES);
	o = direct;
	o.offset = 10;
	o.speed = 2;
	CU_ASSERT_EQUAL_FATAL(lbs_source_init(&s, set, 0, 0, &o, &err), LBS_OK);
	CU_ASSERT_EQUAL(lbs_source_finish(&s, 0, 5, 0), 8.75);
	CU_ASSERT_EQUAL(lbs_source_level(&s, 0, 0), 0.5);
	CU_ASSERT_EQUAL(lbs_source_level(&s, 7.5, 0), 1.0);
	lbs_series_set_destroy(set);

	/* Unix-time indices: the arithmetic stays relative to the origin. */
	set = load("cloudwatch", "timestamp,value\n2014-04-10 00:00:00,1\n2014-04-10 00:00:10,0.5\n");
	CU_ASSERT_EQUAL_FATAL(lbs_source_init(&s, set, 0, 0, &direct, &err), LBS_OK);
	CU_ASSERT_EQUAL(lbs_source_finish(&s, 8.25, 4, 0), 14.5); /* 1.75 at 1, 2.25 at 0.5 */
	lbs_series_set_destroy(set);
}

static void test_iterations(void)
{
	/* Worker w0's mini-batch times 0.1, 0.15, 0.1 at iterations 0, 5, 10;
	 * a = 0.1 / time. */
	lbs_series_set *set = load("lbsim", "# lbsim-trace 1\niteration,id,batch_time\n0,w0,0.1\n0,w1,0.2\n"
					    "5,w0,0.15\n10,w0,0.1\n");
	lbs_source_opts o = direct;
	o.map = (lbs_avail_map){ LBS_MAP_TIME, 0.1, 0, 0, 1, 0 };
	lbs_source s;
	CU_ASSERT_EQUAL_FATAL(lbs_source_init(&s, set, 0, 0, &o, &err), LBS_OK);
	CU_ASSERT_EQUAL(lbs_source_finish(&s, 7, 2, 3), 9.0);          /* iteration 3: a = 1 */
	CU_ASSERT_DOUBLE_EQUAL(lbs_source_finish(&s, 7, 2, 5), 10.0, 1e-14); /* a = 2/3 */
	CU_ASSERT_EQUAL(lbs_source_finish(&s, 7, 2, 50), 9.0);         /* held */
	CU_ASSERT_DOUBLE_EQUAL(lbs_source_level(&s, 0, 7), 2.0 / 3, 1e-15);
	/* Looping: the period is 10 + 5 = 15 iterations. */
	o.end = LBS_END_LOOP;
	CU_ASSERT_EQUAL_FATAL(lbs_source_init(&s, set, 0, 0, &o, &err), LBS_OK);
	CU_ASSERT_DOUBLE_EQUAL(lbs_source_level(&s, 0, 15 + 5), 2.0 / 3, 1e-15);
	CU_ASSERT_EQUAL(lbs_source_level(&s, 0, 15 + 4), 1.0);
	/* Linear: iteration 3 is 3/5 of the way from a = 1 to a = 2/3. */
	o.end = LBS_END_HOLD;
	o.interp = LBS_INTERP_LINEAR;
	CU_ASSERT_EQUAL_FATAL(lbs_source_init(&s, set, 0, 0, &o, &err), LBS_OK);
	CU_ASSERT_DOUBLE_EQUAL(lbs_source_finish(&s, 0, 1, 3), 1 / 0.8, 1e-14);
	/* Offsets count iterations; a speed does not apply. */
	o.offset = 5;
	o.interp = LBS_INTERP_STEP;
	CU_ASSERT_EQUAL_FATAL(lbs_source_init(&s, set, 0, 0, &o, &err), LBS_OK);
	CU_ASSERT_DOUBLE_EQUAL(lbs_source_level(&s, 0, 0), 2.0 / 3, 1e-15);
	o.speed = 2;
	CU_ASSERT_EQUAL(lbs_source_init(&s, set, 0, 0, &o, &err), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "only to traces indexed by time"));
	lbs_series_set_destroy(set);
}

static void test_mappings(void)
{
	lbs_avail_map m = { LBS_MAP_UTIL, 0, 1, 0.1, 1, 0 };
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_map_apply(&m, 0.25), 0.75, 1e-15);
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_map_apply(&m, 0.95), 0.1, 1e-15); /* the floor */
	m.k = 0.5;
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_map_apply(&m, 1), 0.5, 1e-15);
	m = (lbs_avail_map){ LBS_MAP_TIME, 410, 0, 0, 1, 0 };
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_map_apply(&m, 820), 0.5, 1e-15);
	m = (lbs_avail_map){ LBS_MAP_RATE, 12510, 0, 0, 1, 0 };
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_map_apply(&m, 6255), 0.5, 1e-15);
	m = (lbs_avail_map){ LBS_MAP_DIRECT, 0, 0, 0, 0.5, 0 };
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_map_apply(&m, 0.8), 0.4, 1e-15); /* the gain */

	/* A utilisation trace through a source: cpu_util 0.55 -> a = 0.45. */
	lbs_series_set *set = load("lbsim", HALVES);
	lbs_source_opts o = direct;
	o.map = (lbs_avail_map){ LBS_MAP_UTIL, 0, 1, 0.05, 1, 0 };
	lbs_source s;
	CU_ASSERT_EQUAL_FATAL(lbs_source_init(&s, set, 0, 1, &o, &err), LBS_OK);
	CU_ASSERT_DOUBLE_EQUAL(lbs_source_level(&s, 12, 0), 0.45, 1e-15);
	/* 10 -> 12 at 0.9 does 1.8; 0.9 more at 0.45 take 2 s. */
	CU_ASSERT_DOUBLE_EQUAL(lbs_source_finish(&s, 8, 2.7, 0), 12.0, 1e-14);
	lbs_series_set_destroy(set);
}

static void test_validation(void)
{
	lbs_series_set *set = load("lbsim", "# lbsim-trace 1\ntime_s,cpu_util\n0,0.5\n10,0\n");
	lbs_source s;
	/* direct on a utilisation column that reaches 0: refused, naming the line. */
	CU_ASSERT_EQUAL(lbs_source_init(&s, set, 0, 0, &direct, &err), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, ":4: cpu_util: 0: trace_map = direct needs values > 0"));
	lbs_source_opts o = direct;
	o.map = (lbs_avail_map){ LBS_MAP_UTIL, 0, 1, 0.1, 1, 0 };
	CU_ASSERT_EQUAL(lbs_source_init(&s, set, 0, 0, &o, &err), LBS_OK);
	o.map.floor = 0;
	CU_ASSERT_EQUAL(lbs_source_init(&s, set, 0, 0, &o, &err), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "floor > 0"));
	o = direct;
	o.offset = -1;
	CU_ASSERT_EQUAL(lbs_source_init(&s, set, 0, 0, &o, &err), LBS_EINPUT);
	lbs_series_set_destroy(set);

	/* time with a reference that overflows: not finite. */
	set = load("lbsim", "# lbsim-trace 1\ntime_s,batch_time\n0,1e-300\n");
	o = direct;
	o.map = (lbs_avail_map){ LBS_MAP_TIME, 1e300, 0, 0, 1, 0 };
	CU_ASSERT_EQUAL(lbs_source_init(&s, set, 0, 0, &o, &err), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, ":3: batch_time: "));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "gives availability inf"));
	lbs_series_set_destroy(set);
}

static void test_readings(void)
{
	lbs_series_set *set = load("lbsim", HALVES);
	lbs_source s;
	CU_ASSERT_EQUAL_FATAL(lbs_source_init(&s, set, 0, 0, &direct, &err), LBS_OK);
	double v;
	CU_ASSERT(lbs_source_reading(&s, LBS_READING_CPU, 12, 0, &v));
	CU_ASSERT_EQUAL(v, 0.55);
	CU_ASSERT_FALSE(lbs_source_reading(&s, LBS_READING_MEM, 12, 0, &v));
	lbs_source_opts o = direct;
	o.interp = LBS_INTERP_LINEAR;
	CU_ASSERT_EQUAL_FATAL(lbs_source_init(&s, set, 0, 0, &o, &err), LBS_OK);
	CU_ASSERT(lbs_source_reading(&s, LBS_READING_CPU, 5, 0, &v));
	CU_ASSERT_DOUBLE_EQUAL(v, 0.325, 1e-15);
	lbs_series_set_destroy(set);
}

/* CFS bandwidth control (traces/cfs.h) by hand: a quarter of a core, a
 * 10 ms period starting at 0, so 2.5 ms of CPU in each period, run from
 * the period's start. */
static void test_cfs(void)
{
	lbs_avail a;
	const double ms = 1e-3, eps = 1e-12;
	CU_ASSERT_EQUAL_FATAL(lbs_cfs_create((lbs_avail){ NULL, NULL, 0.25 }, 10 * ms, 0, 0, &a, &err), LBS_OK);
	/* 5 ms from 0: [0, 2.5] and [10, 12.5]; the fluid rule says 20 ms. */
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_peek(&a, 0, 5 * ms, 0), 12.5 * ms, eps);
	/* From 9 ms: 1 ms before the period ends, 2.5 in [10, 12.5], 1.5 from 20. */
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_peek(&a, 9 * ms, 5 * ms, 0), 21.5 * ms, eps);
	/* The quota a period has left carries over between pieces of work in
	 * it: 1 ms at 0, then 3 ms from 2 ms: 1.5 ms left there, 1.5 from 10. */
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_finish(&a, 0, 1 * ms, 0), 1 * ms, eps);
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_peek(&a, 2 * ms, 3 * ms, 0), 11.5 * ms, eps);
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_finish(&a, 2 * ms, 3 * ms, 0), 11.5 * ms, eps);
	/* ... and the peek above changed nothing: the next period is whole. */
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_finish(&a, 12 * ms, 1 * ms, 0), 13 * ms, eps);
	/* Exactly a period's quota from a period's start ends at 2.5 ms into it. */
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_finish(&a, 30 * ms, 2.5 * ms, 0), 32.5 * ms, eps);
	/* Over many periods, the fluid rule on average: 1 s of CPU from 40 ms
	 * takes 399 whole periods and the 2.5 ms of the 400th. */
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_peek(&a, 40 * ms, 1.0, 0), 40 * ms + 3.9925, 1e-9);
	lbs_avail_destroy(&a);
	/* Not limited at a >= 1: rate a. A phase moves the periods. */
	CU_ASSERT_EQUAL_FATAL(lbs_cfs_create((lbs_avail){ NULL, NULL, 2.0 }, 10 * ms, 0, 0, &a, &err), LBS_OK);
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_finish(&a, 0, 30 * ms, 0), 15 * ms, eps);
	lbs_avail_destroy(&a);
	CU_ASSERT_EQUAL_FATAL(lbs_cfs_create((lbs_avail){ NULL, NULL, 0.5 }, 10 * ms, 4 * ms, 0, &a, &err), LBS_OK);
	/* Periods [4, 14), [14, 24): from 0 the period [-6, 4) has 4 ms left
	 * of room and 5 of quota: 4 ms there, then 5 in [4, 9], 1 from 14. */
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_finish(&a, 0, 10 * ms, 0), 15 * ms, eps);
	CU_ASSERT_DOUBLE_EQUAL(a.ops->level(a.state, 0.5, 0), 0.5, 0);
	lbs_avail_destroy(&a);
	CU_ASSERT_EQUAL(lbs_cfs_create((lbs_avail){ NULL, NULL, 0.5 }, 0, 0, 0, &a, &err), LBS_EINTERNAL);
	CU_ASSERT_EQUAL(lbs_cfs_create((lbs_avail){ NULL, NULL, 0.5 }, 10 * ms, 0, -1, &a, &err), LBS_EINTERNAL);
}

/* The quota checked at the kernel's ticks (4 ms here, 250 Hz), by hand:
 * a worker whose quota runs out between ticks runs on to the next one and
 * pays the overrun back from its next periods, across pieces of work. */
static void test_cfs_tick(void)
{
	lbs_avail a;
	const double ms = 1e-3, eps = 1e-12;
	/* A fifth of a core, 2 ms per 10 ms period from 0. */
	CU_ASSERT_EQUAL_FATAL(lbs_cfs_create((lbs_avail){ NULL, NULL, 0.2 }, 10 * ms, 0, 4 * ms, &a, &err), LBS_OK);
	/* 3 ms from 0: the quota is out at 2, the tick at 4 comes after the
	 * work is done at 3 (exact quotas: 2 ms, then [10, 11]). */
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_finish(&a, 0, 3 * ms, 0), 3 * ms, eps);
	/* It owes 1 ms: in [10, 20) it has 1 ms, out at 13, the tick at 16
	 * lets it finish 2 ms at 14; it owes 1 ms again. */
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_peek(&a, 12 * ms, 2 * ms, 0), 14 * ms, eps);
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_finish(&a, 12 * ms, 2 * ms, 0), 14 * ms, eps);
	/* The next period pays it: 1 ms of quota in [20, 30), so 1.5 ms from
	 * 20 runs out of quota at 21 and on to 21.5, before the tick at 24. */
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_finish(&a, 20 * ms, 1.5 * ms, 0), 21.5 * ms, eps);
	/* It owes 0.5 ms; the periods [30, 40) and [40, 50) it is idle in pay
	 * it, and [50, 60) is whole: 2 ms from 50 end at 52. */
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_finish(&a, 50 * ms, 2 * ms, 0), 52 * ms, eps);
	/* Each piece started after that debt ended: 5 ms from 100 is
	 * [100, 104] (2 of quota, 2 overrun), throttled through [110, 120)
	 * (its 2 ms pay the overrun), 1 ms from 120: 121 (the exact rule's
	 * [100, 102], [110, 112], [120, 121] ends there too). */
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_finish(&a, 100 * ms, 5 * ms, 0), 121 * ms, eps);
	lbs_avail_destroy(&a);
	/* An overrun of more than a period's quota: a tenth of a core (1 ms
	 * per period), 6 ms from 0: [0, 4] (3 ms overrun), throttled through
	 * [10, 40) while the quota pays it, 1 ms of quota from 40 and 1 ms of
	 * overrun: done at 42 (exact quotas: 51). */
	CU_ASSERT_EQUAL_FATAL(lbs_cfs_create((lbs_avail){ NULL, NULL, 0.1 }, 10 * ms, 0, 4 * ms, &a, &err), LBS_OK);
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_finish(&a, 0, 6 * ms, 0), 42 * ms, eps);
	lbs_avail_destroy(&a);
	/* An overrun ends at the period's end, where the next quota comes:
	 * periods [1, 11), [11, 21); 5 ms from 8.5 run out of quota at 10.5,
	 * run on to 11 (the tick at 12 is past it), owe 0.5, so 1.5 ms of
	 * quota from 11, out at 12.5, and the last 1 ms before the tick at 16:
	 * done at 13.5. */
	CU_ASSERT_EQUAL_FATAL(lbs_cfs_create((lbs_avail){ NULL, NULL, 0.2 }, 10 * ms, 1 * ms, 4 * ms, &a, &err), LBS_OK);
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_finish(&a, 8.5 * ms, 5 * ms, 0), 13.5 * ms, eps);
	lbs_avail_destroy(&a);
	/* A quota that runs out on a tick is seen there: 0.4 of a core is
	 * 4 ms per period, out at the tick at 4 ms, so 5 ms from 0 end at 11
	 * as with exact quotas. */
	CU_ASSERT_EQUAL_FATAL(lbs_cfs_create((lbs_avail){ NULL, NULL, 0.4 }, 10 * ms, 0, 4 * ms, &a, &err), LBS_OK);
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_finish(&a, 0, 5 * ms, 0), 11 * ms, eps);
	lbs_avail_destroy(&a);
	/* Over many periods, still the share: at 0.2 from 0 the worker runs
	 * 4 ms (2 of quota, 2 over) in every second period, so 1 s of CPU
	 * takes 249 such 20 ms cycles and 4 ms: 4.984 s (the exact rule:
	 * 4.992 s). */
	CU_ASSERT_EQUAL_FATAL(lbs_cfs_create((lbs_avail){ NULL, NULL, 0.2 }, 10 * ms, 0, 4 * ms, &a, &err), LBS_OK);
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_peek(&a, 0, 1.0, 0), 4.984, 1e-9);
	lbs_avail_destroy(&a);
}

/* Time-sharing a core (lbs_avail_timeshare): a - loss below one core,
 * never below a tenth of a; nothing at a >= 1 or without a loss. */
static void test_timeshare(void)
{
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_timeshare(0.2, 0.02), 0.18, 1e-15);
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_timeshare(0.05, 0.02), 0.03, 1e-15);
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_timeshare(0.01, 0.02), 0.001, 1e-15);
	CU_ASSERT_EQUAL(lbs_avail_timeshare(1.0, 0.02), 1.0);
	CU_ASSERT_EQUAL(lbs_avail_timeshare(0.3, 0), 0.3);
	/* Through a trace's mapping, after the gain: 0.8 x 0.5 - 0.02. */
	lbs_avail_map m = { LBS_MAP_DIRECT, 0, 0, 0, 0.5, 0.02 };
	CU_ASSERT_DOUBLE_EQUAL(lbs_avail_map_apply(&m, 0.8), 0.38, 1e-15);
}

void suite_source(void)
{
	static const test_case tests[] = {
		{ "step, hold: hand-computed integrals", test_step_hold },
		{ "linear: closed-form quadratic", test_linear },
		{ "loop, offset, speed", test_loop_offset_speed },
		{ "iteration-indexed", test_iterations },
		{ "mappings", test_mappings },
		{ "validation", test_validation },
		{ "readings", test_readings },
		{ "cfs bandwidth control by hand", test_cfs },
		{ "cfs quota checked at ticks, by hand", test_cfs_tick },
		{ "time-sharing a core", test_timeshare },
	};
	add_suite("source", tests, sizeof tests / sizeof tests[0]);
}
