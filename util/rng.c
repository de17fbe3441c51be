/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "util/rng.h"

static uint64_t splitmix64(uint64_t x)
{
	x += UINT64_C(0x9E3779B97F4A7C15);
	x = (x ^ (x >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94D049BB133111EB);
	return x ^ (x >> 31);
}

static uint64_t fnv1a(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * UINT64_C(0x100000001B3);
	return (h ^ 0xFF) * UINT64_C(0x100000001B3); /* terminator: "ab","c" != "a","bc" */
}

uint64_t lbs_rng_stream_id(const char *kind, const char *owner)
{
	return fnv1a(fnv1a(UINT64_C(0xCBF29CE484222325), kind), owner);
}

uint64_t lbs_rng_seed_of(uint64_t seed, uint64_t id, uint64_t index)
{
	return splitmix64(splitmix64(seed) ^ splitmix64(id ^ splitmix64(index)));
}

uint64_t lbs_rng_stream_seed(uint64_t seed, const char *kind, const char *owner, uint64_t index)
{
	return lbs_rng_seed_of(seed, lbs_rng_stream_id(kind, owner), index);
}

void lbs_taus2_init(lbs_taus2 *t, uint64_t seed, const char *kind, const char *owner, uint64_t index)
{
	lbs_taus2_seed(t, lbs_rng_stream_seed(seed, kind, owner, index));
}

void lbs_taus2_seed(lbs_taus2 *t, uint64_t s)
{
	/* The same state as lbs_rng_stream's, below, without a gsl_rng. */
	uint64_t a = splitmix64(s), b = splitmix64(a);
	t->s1 = (uint32_t)(a & 0xFFFFFFFFu) | 0x2u;
	t->s2 = (uint32_t)(a >> 32) | 0x8u;
	t->s3 = (uint32_t)(b & 0xFFFFFFFFu) | 0x10u;
	for (int i = 0; i < 6; i++)
		lbs_taus2_get(t);
}

gsl_rng *lbs_rng_stream(uint64_t seed, const char *kind, const char *owner, uint64_t index,
			lbs_error *err)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
	if (!r) {
		lbs_error_set(err, LBS_EINTERNAL, "out of memory allocating a random stream");
		return NULL;
	}
	uint64_t s = lbs_rng_stream_seed(seed, kind, owner, index);
	gsl_rng_set(r, (unsigned long)(s & 0xFFFFFFFFu));
	/* gsl_rng_set takes 32 bits of seed, so among a million streams some
	 * hundred pairs would coincide. taus2's state is three 32-bit words
	 * (L'Ecuyer 1996; GSL documents gsl_rng_state for direct access): fill
	 * all 96 bits from the 64-bit stream seed, keeping the generator's
	 * constraints s1 > 1, s2 > 7, s3 > 15, then warm up as gsl_rng_set does. */
	if (gsl_rng_size(r) == 3 * sizeof(unsigned long)) {
		unsigned long *st = gsl_rng_state(r);
		uint64_t a = splitmix64(s), b = splitmix64(a);
		st[0] = (unsigned long)(a & 0xFFFFFFFFu) | 0x2u;
		st[1] = (unsigned long)(a >> 32) | 0x8u;
		st[2] = (unsigned long)(b & 0xFFFFFFFFu) | 0x10u;
		for (int i = 0; i < 6; i++)
			gsl_rng_get(r);
	}
	return r;
}
