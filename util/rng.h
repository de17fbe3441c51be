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

/* A new generator (gsl_rng_taus2: small state, fast, period 2^88, passes
 * the usual batteries) for that stream, its 96-bit state filled from the
 * 64-bit stream seed; free it with gsl_rng_free. */
gsl_rng *lbs_rng_stream(uint64_t seed, const char *kind, const char *owner, uint64_t index,
			lbs_error *err);

#endif
