/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Independent random streams. Every stream is a GSL generator seeded from the
 * run's seed and the stream's identity (what it is for, whose it is, which
 * one), never from a shared generator, so adding a worker or a draw in one
 * place does not change the draws anywhere else. */
#ifndef LBS_RNG_H
#define LBS_RNG_H

#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "util/error.h"

/* The 64-bit seed of stream (kind, owner, index) of run `seed`: a hash of
 * the identity mixed with the run seed by SplitMix64 (Steele et al. 2014). */
uint64_t lbs_rng_stream_seed(uint64_t seed, const char *kind, const char *owner, uint64_t index);

/* The same in two parts, for many streams of one (kind, owner): the hash of
 * the identity, then the seed of stream `index`:
 * lbs_rng_stream_seed(s, k, o, i) == lbs_rng_seed_of(s, lbs_rng_stream_id(k, o), i). */
uint64_t lbs_rng_stream_id(const char *kind, const char *owner);
uint64_t lbs_rng_seed_of(uint64_t seed, uint64_t id, uint64_t index);

/* taus2's state (L'Ecuyer 1996, "Maximally equidistributed combined Tausworthe
 * generators", Math. Comp. 65): three 32-bit words. A run keeps its workers'
 * noise streams in a flat array of these and draws inline; the sequence is
 * exactly that of gsl_rng_taus2 from the same state (lbs_rng_stream), so the
 * two give the same draws. */
typedef struct lbs_taus2 {
	uint32_t s1, s2, s3;
} lbs_taus2;

/* The state of stream (kind, owner, index) of run `seed`, warmed up: the
 * state lbs_rng_stream gives its generator. */
void lbs_taus2_init(lbs_taus2 *t, uint64_t seed, const char *kind, const char *owner, uint64_t index);
/* The same from the stream's 64-bit seed (lbs_rng_stream_seed). */
void lbs_taus2_seed(lbs_taus2 *t, uint64_t stream_seed);

/* The next 32-bit output. */
static inline uint32_t lbs_taus2_get(lbs_taus2 *t)
{
	t->s1 = ((t->s1 & UINT32_C(0xFFFFFFFE)) << 12) ^ (((t->s1 << 13) ^ t->s1) >> 19);
	t->s2 = ((t->s2 & UINT32_C(0xFFFFFFF8)) << 4) ^ (((t->s2 << 2) ^ t->s2) >> 25);
	t->s3 = ((t->s3 & UINT32_C(0xFFFFFFF0)) << 17) ^ (((t->s3 << 3) ^ t->s3) >> 11);
	return t->s1 ^ t->s2 ^ t->s3;
}

/* A uniform double in [0, 1): the output over 2^32, as gsl_rng_uniform. */
static inline double lbs_taus2_uniform(lbs_taus2 *t)
{
	return (double)lbs_taus2_get(t) / 4294967296.0;
}

/* A new generator (gsl_rng_taus2: small state, fast, period 2^88, passes
 * the usual batteries) for that stream, its 96-bit state filled from the
 * 64-bit stream seed; free it with gsl_rng_free. */
gsl_rng *lbs_rng_stream(uint64_t seed, const char *kind, const char *owner, uint64_t index,
			lbs_error *err);

#endif
