/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Random streams: reproducible, distinct per identity, uncorrelated. */
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/rng.h"
#include "tests/unit/suites.h"

static void test_same_identity_same_draws(void)
{
	gsl_rng *a = lbs_rng_stream(42, "noise", "gpu", 3, NULL);
	gsl_rng *b = lbs_rng_stream(42, "noise", "gpu", 3, NULL);
	int same = 0;
	for (int i = 0; i < 1000; i++)
		same += gsl_rng_get(a) == gsl_rng_get(b);
	CU_ASSERT_EQUAL(same, 1000);
	gsl_rng_free(a);
	gsl_rng_free(b);
}

static void test_identities_differ(void)
{
	/* Each component of the identity, and the run seed, changes the seed. */
	uint64_t base = lbs_rng_stream_seed(1, "noise", "gpu", 0);
	CU_ASSERT_NOT_EQUAL(base, lbs_rng_stream_seed(2, "noise", "gpu", 0));
	CU_ASSERT_NOT_EQUAL(base, lbs_rng_stream_seed(1, "trace", "gpu", 0));
	CU_ASSERT_NOT_EQUAL(base, lbs_rng_stream_seed(1, "noise", "cpu", 0));
	CU_ASSERT_NOT_EQUAL(base, lbs_rng_stream_seed(1, "noise", "gpu", 1));
	/* Concatenations that read alike stay apart. */
	CU_ASSERT_NOT_EQUAL(lbs_rng_stream_seed(1, "ab", "c", 0), lbs_rng_stream_seed(1, "a", "bc", 0));
	/* No two of 20000 workers share a 64-bit stream seed. */
	size_t n = 20000;
	uint64_t *s = malloc(n * sizeof *s);
	for (size_t i = 0; i < n; i++)
		s[i] = lbs_rng_stream_seed(7, "noise", "w", i);
	int dup = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			dup += s[i] == s[j];
	CU_ASSERT_EQUAL(dup, 0);
	free(s);
}

/* Neighbouring streams are uncorrelated: |r| of 20000 paired uniforms stays
 * under 4 standard errors (1/sqrt(n)) for every pair of 8 streams, and each
 * stream's mean is within 4 standard errors of 1/2. */
static void test_streams_uncorrelated(void)
{
	enum { N = 20000, K = 8 };
	static double x[K][N];
	for (int k = 0; k < K; k++) {
		gsl_rng *r = lbs_rng_stream(1, "noise", "g", (uint64_t)k, NULL);
		for (int i = 0; i < N; i++)
			x[k][i] = gsl_rng_uniform(r);
		gsl_rng_free(r);
		double mean = gsl_stats_mean(x[k], 1, N);
		CU_ASSERT(fabs(mean - 0.5) < 4 * sqrt(1.0 / 12 / N));
	}
	for (int a = 0; a < K; a++)
		for (int b = a + 1; b < K; b++)
			CU_ASSERT(fabs(gsl_stats_correlation(x[a], 1, x[b], 1, N)) < 4 / sqrt((double)N));
}

/* Streams whose 64-bit seeds agree in their low 32 bits (what gsl_rng_set
 * alone would keep) still differ: the whole state comes from the seed. Found
 * by search: 2^17 identities give such a pair with probability ~ 0.9, so the
 * test looks through up to 2^20. */
static void test_full_state_seeding(void)
{
	enum { N = 1 << 20 };
	uint32_t *low = malloc(N * sizeof *low);
	uint64_t found_a = 0, found_b = 0;
	bool found = false;
	/* Bucket by the low 32 bits with a simple open-addressing table. */
	size_t cap = 1u << 22;
	uint64_t *tab = calloc(cap, sizeof *tab); /* index + 1 */
	for (uint64_t i = 0; i < N && !found; i++) {
		uint32_t l = (uint32_t)lbs_rng_stream_seed(11, "noise", "g", i);
		low[i] = l;
		for (size_t h = (l * 2654435761u) & (cap - 1);; h = (h + 1) & (cap - 1)) {
			if (!tab[h]) {
				tab[h] = i + 1;
				break;
			}
			if (low[tab[h] - 1] == l) {
				found_a = tab[h] - 1;
				found_b = i;
				found = true;
				break;
			}
		}
	}
	CU_ASSERT_FATAL(found);
	gsl_rng *a = lbs_rng_stream(11, "noise", "g", found_a, NULL);
	gsl_rng *b = lbs_rng_stream(11, "noise", "g", found_b, NULL);
	int same = 0;
	for (int i = 0; i < 100; i++)
		same += gsl_rng_get(a) == gsl_rng_get(b);
	CU_ASSERT(same < 5);
	gsl_rng_free(a);
	gsl_rng_free(b);
	free(tab);
	free(low);
}

/* The inline taus2 a run draws its noise from gives, from lbs_taus2_init's
 * state, exactly GSL's gsl_rng_taus2 from lbs_rng_stream's: the same 32-bit
 * outputs and the same doubles, over thousands of draws of streams whose
 * seeds exercise every bit of the state. */
static void test_taus2_is_gsl_taus2(void)
{
	static const char *const owners[] = { "fast", "slow", "g" };
	int mismatches = 0;
	for (uint64_t seed = 0; seed < 5; seed++)
		for (size_t o = 0; o < 3; o++)
			for (uint64_t k = 0; k < 20; k++) {
				gsl_rng *r = lbs_rng_stream(seed, "noise", owners[o], k, NULL);
				gsl_rng *q = lbs_rng_stream(seed, "noise", owners[o], k, NULL);
				lbs_taus2 t, u;
				lbs_taus2_init(&t, seed, "noise", owners[o], k);
				u = t;
				for (int i = 0; i < 2000; i++) {
					mismatches += gsl_rng_get(r) != lbs_taus2_get(&t);
					double a = gsl_rng_uniform(q), b = lbs_taus2_uniform(&u);
					mismatches += memcmp(&a, &b, sizeof a) != 0;
				}
				gsl_rng_free(r);
				gsl_rng_free(q);
			}
	CU_ASSERT_EQUAL(mismatches, 0);
}

void suite_rng(void)
{
	static const test_case tests[] = {
		{ "same identity gives the same draws", test_same_identity_same_draws },
		{ "different identities give different seeds", test_identities_differ },
		{ "streams are uncorrelated", test_streams_uncorrelated },
		{ "whole state seeded, not 32 bits", test_full_state_seeding },
		{ "inline taus2 draws what GSL's taus2 draws", test_taus2_is_gsl_taus2 },
	};
	add_suite("rng", tests, sizeof tests / sizeof tests[0]);
}
