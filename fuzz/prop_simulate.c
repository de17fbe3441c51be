/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The property test of `make check`: random scenarios within the documented
 * ranges (fuzz/fuzz_simulate.c chooses them from bytes; here the bytes come
 * from a fixed seed, so every run of the test tries the same ones), each of
 * which must be refused as bad input or run to its end or its cap with
 * consistent results (a finding aborts). `prop_simulate [N [SEED]]`; the
 * closing line counts the outcomes. At least a quarter must run to their
 * end, or the test would check little. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz/harness.h"

/* splitmix64 (Steele, Lea and Flood, OOPSLA 2014): a fixed stream of bytes. */
static uint64_t next(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15u);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
	return z ^ (z >> 31);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 400;
	uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 15;
	size_t outcome[3] = { 0 };
	uint8_t buf[64];
	for (long i = 0; i < n; i++) {
		for (size_t k = 0; k < sizeof buf; k += 8) {
			uint64_t v = next(&seed);
			for (size_t j = 0; j < 8; j++)
				buf[k + j] = (uint8_t)(v >> (8 * j));
		}
		if (getenv("LBS_FUZZ_VERBOSE"))
			fprintf(stderr, "scenario %ld\n", i);
		outcome[lbs_fuzz_simulate(buf, sizeof buf)]++;
	}
	printf("prop_simulate: %ld scenarios: %zu refused as bad input, %zu ran to their end, %zu stopped "
	       "at the event cap or the time limit\n", n, outcome[0], outcome[1], outcome[2]);
	if (4 * outcome[1] < (size_t)n) {
		printf("prop_simulate: fewer than a quarter ran to their end\n");
		return 1;
	}
	printf("prop_simulate: 1 passed, 0 failed\n");
	return 0;
}
