/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Cost, network and noise models against hand-computed values; units. */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>

#include "models/cost.h"
#include "models/network.h"
#include "models/noise.h"
#include "models/policy.h"
#include "util/rng.h"
#include "util/units.h"
#include "tests/unit/suites.h"

#define REL(a, b) (fabs((double)(a) - (double)(b)) <= 1e-12 * fabs((double)(b)))

static void test_cost_linear(void)
{
	lbs_cost c = { .ops = &lbs_cost_linear, .t0_s = 0.002, .per_sample_s = 0.001 };
	CU_ASSERT(REL(lbs_cost_time_s(&c, 32), 0.034)); /* 2 ms + 32 * 1 ms */
	CU_ASSERT(REL(lbs_cost_time_s(&c, 1), 0.003));
	CU_ASSERT_EQUAL(lbs_cost_time_s(&c, 0), 0.0); /* no samples, no work */
}

/* A profile's measured times (lbs_cost_measured), by hand: points at 4,
 * 8 and 10 samples (10 ms, 18 ms, 19 ms); between them linear, below the
 * first its time per sample (2.5 ms), past the last the fit's slope. */
static void test_cost_measured(void)
{
	const int64_t batch[] = { 4, 8, 10 };
	const double time_s[] = { 0.010, 0.018, 0.019 };
	double t[10];
	lbs_cost_table_fill(batch, time_s, 3, t);
	lbs_cost c = { .ops = &lbs_cost_measured, .per_sample_s = 0.002, .table_s = t, .table_n = 10 };
	CU_ASSERT(REL(lbs_cost_time_s(&c, 1), 0.0025));
	CU_ASSERT(REL(lbs_cost_time_s(&c, 3), 0.0075));
	CU_ASSERT(REL(lbs_cost_time_s(&c, 4), 0.010)); /* measured: as measured */
	CU_ASSERT(REL(lbs_cost_time_s(&c, 6), 0.014)); /* halfway from 10 to 18 ms */
	CU_ASSERT(REL(lbs_cost_time_s(&c, 9), 0.0185));
	CU_ASSERT(REL(lbs_cost_time_s(&c, 10), 0.019));
	CU_ASSERT(REL(lbs_cost_time_s(&c, 13), 0.025)); /* 19 ms + 3 x 2 ms */
	CU_ASSERT_EQUAL(lbs_cost_time_s(&c, 0), 0.0);
	/* Not required to grow: a batch of 8 may take longer than one of 9. */
	const double dip[] = { 0.010, 0.020, 0.019 };
	const int64_t at[] = { 4, 8, 9 };
	lbs_cost_table_fill(at, dip, 3, t);
	c.table_n = 9;
	CU_ASSERT(lbs_cost_time_s(&c, 9) < lbs_cost_time_s(&c, 8));
}

static void test_cost_piecewise(void)
{
	lbs_cost c = { .ops = &lbs_cost_piecewise, .t_flat_s = 0.1, .saturation_batch = 32,
		       .per_sample_s = 0.0025 };
	CU_ASSERT(REL(lbs_cost_time_s(&c, 1), 0.1));   /* flat below saturation */
	CU_ASSERT(REL(lbs_cost_time_s(&c, 32), 0.1));  /* flat at saturation */
	CU_ASSERT(REL(lbs_cost_time_s(&c, 33), 0.1025));
	CU_ASSERT(REL(lbs_cost_time_s(&c, 128), 0.34)); /* 0.1 + 96 * 2.5 ms */
}

static void test_cost_power(void)
{
	lbs_cost c = { .ops = &lbs_cost_power, .t0_s = 0.002, .per_sample_s = 0.001, .exponent = 1.5 };
	CU_ASSERT(REL(lbs_cost_time_s(&c, 1), 0.003));  /* 2 ms + 1 ms * 1 */
	CU_ASSERT(REL(lbs_cost_time_s(&c, 4), 0.010));  /* 2 ms + 1 ms * 4^1.5 = 2 + 8 */
	CU_ASSERT(REL(lbs_cost_time_s(&c, 9), 0.029));  /* 2 ms + 27 ms */
	CU_ASSERT_EQUAL(lbs_cost_time_s(&c, 0), 0.0);
	CU_ASSERT(REL(c.ops->time_s(&c, 9), 0.029));    /* the ops agree with the inline form */
	c.flat_below = 4;                               /* below 4 samples: t(4) */
	CU_ASSERT(REL(lbs_cost_time_s(&c, 1), 0.010) && REL(lbs_cost_time_s(&c, 3), 0.010));
	CU_ASSERT(REL(lbs_cost_time_s(&c, 9), 0.029));
	CU_ASSERT_EQUAL(lbs_cost_time_s(&c, 0), 0.0);
}

static void test_cost_quadratic(void)
{
	lbs_cost c = { .ops = &lbs_cost_quadratic, .t0_s = 0.005, .per_sample_s = 0.001,
		       .per_sample_sq_s = 0.00025 };
	CU_ASSERT(REL(lbs_cost_time_s(&c, 2), 0.008));  /* 5 + 2 + 0.25 * 4 ms */
	CU_ASSERT(REL(lbs_cost_time_s(&c, 10), 0.040)); /* 5 + 10 + 25 ms */
	CU_ASSERT_EQUAL(lbs_cost_time_s(&c, 0), 0.0);
	CU_ASSERT(REL(c.ops->time_s(&c, 10), 0.040));
	c.flat_below = 10;
	CU_ASSERT(REL(lbs_cost_time_s(&c, 2), 0.040) && REL(lbs_cost_time_s(&c, 11), 0.04625));
}

/* Every kind, with its keys at the ends of their ranges, is non-decreasing
 * in b for b >= 1: what the oracle's bisection and the policies need. */
static void test_cost_monotone(void)
{
	const lbs_cost cases[] = {
		{ .ops = &lbs_cost_linear, .t0_s = 0, .per_sample_s = 0 },
		{ .ops = &lbs_cost_linear, .t0_s = 1, .per_sample_s = 1e-9 },
		{ .ops = &lbs_cost_piecewise, .t_flat_s = 1e-9, .saturation_batch = 1, .per_sample_s = 0 },
		{ .ops = &lbs_cost_piecewise, .t_flat_s = 0.1, .saturation_batch = 500, .per_sample_s = 1e-3 },
		{ .ops = &lbs_cost_power, .t0_s = 0, .per_sample_s = 1e-3, .exponent = 1e-6 },
		{ .ops = &lbs_cost_power, .t0_s = 0.5, .per_sample_s = 1e-9, .exponent = 0.3 },
		{ .ops = &lbs_cost_power, .t0_s = 0, .per_sample_s = 1e-3, .exponent = LBS_COST_EXPONENT_MAX },
		{ .ops = &lbs_cost_power, .t0_s = 0.1, .per_sample_s = 0, .exponent = 2 },
		{ .ops = &lbs_cost_quadratic, .t0_s = 0, .per_sample_s = 0, .per_sample_sq_s = 1e-12 },
		{ .ops = &lbs_cost_quadratic, .t0_s = 0.1, .per_sample_s = 1e-3, .per_sample_sq_s = 0 },
		{ .ops = &lbs_cost_quadratic, .t0_s = 0, .per_sample_s = 1e-3, .per_sample_sq_s = 1e-6,
		  .flat_below = 700 },
		{ .ops = &lbs_cost_power, .per_sample_s = 1e-3, .exponent = 0.5, .flat_below = 1000000000 },
	};
	int bad = 0, kinds = 0;
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		double prev = lbs_cost_time_s(&cases[k], 1);
		for (int64_t b = 2; b <= 100000; b += 1 + b / 64) {
			double t = lbs_cost_time_s(&cases[k], b);
			bad += !(t >= prev);
			prev = t;
		}
	}
	for (int i = 0; lbs_cost_kinds[i]; i++)
		for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
			if (cases[k].ops == lbs_cost_kinds[i]) {
				kinds++;
				break;
			}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_EQUAL(lbs_cost_kinds[kinds], NULL); /* every registered kind is covered */
}

static void test_ring(void)
{
	/* N = 4, M = 100 MB, BW = 10 GB/s, alpha = 5 us:
	 * transfer 2*3/4 * 1e8/1e10 = 15 ms; latency 2*3 * 5 us = 30 us. */
	lbs_network n = { .ops = &lbs_network_ring, .bandwidth_Bps = 1e10, .latency_s = 5e-6 };
	lbs_net_time t = lbs_network_time(&n, 4, 1e8);
	CU_ASSERT(REL(t.transfer_s, 0.015));
	CU_ASSERT(REL(t.latency_s, 30e-6));
	t = lbs_network_time(&n, 1, 1e8); /* one worker: nothing to aggregate */
	CU_ASSERT_EQUAL(t.transfer_s + t.latency_s, 0.0);
	t = lbs_network_time(&n, 4096, 1e8); /* 2*4095/4096 * 10 ms; 8190 * 5 us */
	CU_ASSERT(REL(t.transfer_s, 2.0 * 4095 / 4096 * 0.01));
	CU_ASSERT(REL(t.latency_s, 8190 * 5e-6));
}

static void test_ps(void)
{
	/* N = 4, S = 2, M = 100 MB, server NIC 1 GB/s: a server receives
	 * 4 * 1e8 / 2 = 2e8 B = 0.2 s. Worker NIC 0.25 GB/s: 1e8 B = 0.4 s, the
	 * bottleneck; push + pull = 0.8 s; latency 2 * 1 ms. */
	lbs_network n = { .ops = &lbs_network_ps, .bandwidth_Bps = 1e9, .worker_bandwidth_Bps = 2.5e8,
			  .latency_s = 1e-3, .servers = 2 };
	lbs_net_time t = lbs_network_time(&n, 4, 1e8);
	CU_ASSERT(REL(t.transfer_s, 0.8));
	CU_ASSERT(REL(t.latency_s, 2e-3));
	n.worker_bandwidth_Bps = 1e10; /* now the servers are the bottleneck: 2 * 0.2 s */
	t = lbs_network_time(&n, 4, 1e8);
	CU_ASSERT(REL(t.transfer_s, 0.4));
	lbs_network none = { .ops = &lbs_network_none };
	t = lbs_network_time(&none, 64, 1e9);
	CU_ASSERT_EQUAL(t.transfer_s + t.latency_s, 0.0);
}

static void test_noise(void)
{
	gsl_rng *r = lbs_rng_stream(3, "noise", "test", 0, NULL);
	lbs_noise u = { .kind = LBS_NOISE_UNIFORM, .low = 0.0, .high = 0.1 };
	double sum = 0, lo = 2, hi = 0;
	int n = 100000;
	for (int i = 0; i < n; i++) {
		double f = lbs_noise_draw(&u, r);
		sum += f;
		lo = f < lo ? f : lo;
		hi = f > hi ? f : hi;
	}
	CU_ASSERT(lo >= 1.0 && hi < 1.1);
	/* Mean 1.05, standard error 0.1/sqrt(12 n). */
	CU_ASSERT(fabs(sum / n - 1.05) < 4 * 0.1 / sqrt(12.0 * n));
	CU_ASSERT(REL(lbs_noise_mean(&u), 1.05));
	lbs_noise ln = { .kind = LBS_NOISE_LOGNORMAL, .sigma = 0.2 };
	sum = 0;
	double sum2 = 0;
	for (int i = 0; i < n; i++) {
		double f = lbs_noise_draw(&ln, r);
		sum += f;
		sum2 += f * f;
	}
	/* Mean 1; variance exp(sigma^2) - 1. */
	double var = exp(0.04) - 1;
	CU_ASSERT(fabs(sum / n - 1.0) < 4 * sqrt(var / n));
	CU_ASSERT(fabs((sum2 / n - (sum / n) * (sum / n)) - var) < 0.1 * var);
	lbs_noise none = { .kind = LBS_NOISE_NONE };
	CU_ASSERT_EQUAL(lbs_noise_draw(&none, r), 1.0);
	gsl_rng_free(r);
}

static void test_units(void)
{
	char why[256];
	double v;
	int64_t i;
	CU_ASSERT(lbs_parse_quantity("5 us", LBS_DIM_TIME, &v, why, sizeof why) && REL(v, 5e-6));
	CU_ASSERT(lbs_parse_quantity("1.5ms", LBS_DIM_TIME, &v, why, sizeof why) && REL(v, 1.5e-3));
	CU_ASSERT(lbs_parse_quantity("2 min", LBS_DIM_TIME, &v, why, sizeof why) && REL(v, 120));
	CU_ASSERT(lbs_parse_quantity("10 Gbit/s", LBS_DIM_BANDWIDTH, &v, why, sizeof why) && REL(v, 1.25e9));
	CU_ASSERT(lbs_parse_quantity("1.25 GB/s", LBS_DIM_BANDWIDTH, &v, why, sizeof why) && REL(v, 1.25e9));
	CU_ASSERT(lbs_parse_quantity("100 MB", LBS_DIM_BYTES, &v, why, sizeof why) && REL(v, 1e8));
	CU_ASSERT(lbs_parse_quantity("64 KiB", LBS_DIM_BYTES, &v, why, sizeof why) && REL(v, 65536));
	CU_ASSERT(lbs_parse_quantity("10%", LBS_DIM_NONE, &v, why, sizeof why) && REL(v, 0.1));
	CU_ASSERT(lbs_parse_quantity(" 0.25 ", LBS_DIM_NONE, &v, why, sizeof why) && REL(v, 0.25));
	/* Refused, each with a reason. */
	CU_ASSERT_FALSE(lbs_parse_quantity("5", LBS_DIM_TIME, &v, why, sizeof why));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "no unit"));
	CU_ASSERT_FALSE(lbs_parse_quantity("5 MB", LBS_DIM_TIME, &v, why, sizeof why));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "size in bytes"));
	CU_ASSERT_FALSE(lbs_parse_quantity("5 parsecs", LBS_DIM_TIME, &v, why, sizeof why));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "unknown unit"));
	CU_ASSERT_FALSE(lbs_parse_quantity("nan", LBS_DIM_NONE, &v, why, sizeof why));
	CU_ASSERT_FALSE(lbs_parse_quantity("inf", LBS_DIM_NONE, &v, why, sizeof why));
	CU_ASSERT_FALSE(lbs_parse_quantity("-inf s", LBS_DIM_TIME, &v, why, sizeof why));
	CU_ASSERT_FALSE(lbs_parse_quantity("1e400", LBS_DIM_NONE, &v, why, sizeof why));
	CU_ASSERT_FALSE(lbs_parse_quantity("0x10", LBS_DIM_NONE, &v, why, sizeof why));
	CU_ASSERT_FALSE(lbs_parse_quantity("", LBS_DIM_NONE, &v, why, sizeof why));
	CU_ASSERT_FALSE(lbs_parse_quantity("0.5 x", LBS_DIM_NONE, &v, why, sizeof why));
	CU_ASSERT(lbs_parse_int("1e6", &i, why, sizeof why) && i == 1000000);
	CU_ASSERT(lbs_parse_int("-3", &i, why, sizeof why) && i == -3);
	CU_ASSERT_FALSE(lbs_parse_int("1.5", &i, why, sizeof why));
	CU_ASSERT_FALSE(lbs_parse_int("12abc", &i, why, sizeof why));
	CU_ASSERT_FALSE(lbs_parse_int("1e300", &i, why, sizeof why));
}

static void test_split_even(void)
{
	int64_t b[4];
	lbs_split_even(10, 4, b);
	CU_ASSERT(b[0] == 3 && b[1] == 3 && b[2] == 2 && b[3] == 2);
	lbs_split_even(3, 4, b);
	CU_ASSERT(b[0] == 1 && b[1] == 1 && b[2] == 1 && b[3] == 0);
}

/* The scenario's choice lists name the registries' members in order. */
static void test_registries_match_choices(void)
{
	for (int i = 0; lbs_cost_kinds[i]; i++)
		CU_ASSERT_EQUAL(lbs_choice_index(LBS_COST_CHOICES, lbs_cost_kinds[i]->name), i);
	for (int i = 0; lbs_network_kinds[i]; i++)
		CU_ASSERT_EQUAL(lbs_choice_index(LBS_NETWORK_CHOICES, lbs_network_kinds[i]->name), i);
	CU_ASSERT_PTR_EQUAL(lbs_policy_find("static"), &lbs_policy_static);
	CU_ASSERT_PTR_NULL(lbs_policy_find("nope"));
}

void suite_models(void)
{
	static const test_case tests[] = {
		{ "linear cost", test_cost_linear },
		{ "measured cost (a profile's own times)", test_cost_measured },
		{ "piecewise cost", test_cost_piecewise },
		{ "power cost", test_cost_power },
		{ "quadratic cost", test_cost_quadratic },
		{ "every cost kind is non-decreasing", test_cost_monotone },
		{ "ring all-reduce", test_ring },
		{ "parameter server", test_ps },
		{ "noise distributions", test_noise },
		{ "units", test_units },
		{ "even split", test_split_even },
		{ "registries match choices", test_registries_match_choices },
	};
	add_suite("models", tests, sizeof tests / sizeof tests[0]);
}
