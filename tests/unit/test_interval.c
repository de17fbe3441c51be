/* SPDX-License-Identifier: GPL-3.0-or-later */
/* analysis/interval.c against hand calculations. */
#include "tests/unit/suites.h"

#include <math.h>

#include "analysis/interval.h"

static void test_mean_interval(void)
{
	/* 1..5: mean 3, sd sqrt(10 / 4) = 1.58114, t(0.975, 4) = 2.77645 (tables),
	 * half-width 2.77645 x 1.58114 / sqrt(5) = 1.96324. */
	const double x[] = { 1, 2, 3, 4, 5 };
	lbs_interval r = lbs_interval_mean(x, 5);
	CU_ASSERT_EQUAL(r.n, 5);
	CU_ASSERT_DOUBLE_EQUAL(r.mean, 3.0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(r.sd, 1.5811388300841898, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(r.half, 1.96324, 1e-5);
	/* Two values a and b: sd |a - b| / sqrt(2), t(0.975, 1) = 12.7062, so
	 * half = 12.7062 x |a - b| / 2. */
	const double y[] = { 10, 12 };
	r = lbs_interval_mean(y, 2);
	CU_ASSERT_DOUBLE_EQUAL(r.half, 12.7062 * 1.0, 1e-4);
	/* One value: a mean, no interval. */
	r = lbs_interval_mean(y, 1);
	CU_ASSERT_DOUBLE_EQUAL(r.mean, 10.0, 0);
	CU_ASSERT_TRUE(isnan(r.sd) && isnan(r.half));
	/* Identical values: an interval of width 0. */
	const double z[] = { 7, 7, 7 };
	r = lbs_interval_mean(z, 3);
	CU_ASSERT_DOUBLE_EQUAL(r.half, 0.0, 0);
}

static void test_wilson(void)
{
	double lo, hi;
	/* 0 of 10: [0, z^2 / (n + z^2)] = [0, 3.84146 / 13.84146] = [0, 0.27753]. */
	lbs_interval_wilson(0, 10, &lo, &hi);
	CU_ASSERT_DOUBLE_EQUAL(lo, 0.0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(hi, 0.27753, 1e-5);
	/* 10 of 10: the mirror image. */
	lbs_interval_wilson(10, 10, &lo, &hi);
	CU_ASSERT_DOUBLE_EQUAL(lo, 1 - 0.27753, 1e-5);
	CU_ASSERT_DOUBLE_EQUAL(hi, 1.0, 1e-12);
	/* 5 of 10: centred on 0.5, half-width z sqrt(0.025 + z^2 / 400) / (1 + z^2 / 10)
	 * = 1.95996 x 0.18537 / 1.38415 = 0.26249: [0.23659, 0.76341]. */
	lbs_interval_wilson(5, 10, &lo, &hi);
	CU_ASSERT_DOUBLE_EQUAL(lo, 0.23659, 1e-5);
	CU_ASSERT_DOUBLE_EQUAL(hi, 0.76341, 1e-5);
}

void suite_interval(void)
{
	static const test_case tests[] = {
		{ "mean and 95% interval, by hand", test_mean_interval },
		{ "Wilson score interval, by hand", test_wilson },
	};
	add_suite("interval", tests, sizeof tests / sizeof tests[0]);
}
