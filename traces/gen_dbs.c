/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The DBS authors' disturbance ("irrelevant tasks"): Ye et al., "DBS:
 * Dynamic Batch Size For Distributed Deep Neural Network Training", arXiv
 * 2007.11831, 2020; code github.com/Soptq/Dynamic_Load_Balance_DistributedDNN,
 * function fault_tolerance_wait() in dbs.py (commit d516435). Replayed
 * exactly as that code behaves, per worker:
 *
 * - The function runs at every iteration, after the backward pass and
 *   before the all-reduce, so the delay is compute time to DBS and to lbsim.
 * - At the first iteration of an epoch, a worker that is not slowed draws
 *   u = random(); if u < probability (0.1 there, --fault_tolerance_chance)
 *   it starts a slow phase: D = randint(5, 10) seconds per epoch (inclusive
 *   bounds, whole seconds) until epoch e + randint(4, 20) inclusive, and
 *   returns without sleeping. Every later iteration of epochs e..e+n
 *   sleeps D / batch_num, batch_num being the iterations of that epoch
 *   (the run's, through the epoch() hook: longer than
 *   iterations_per_epoch when DBS's rounding shrinks the global batch).
 *   So the onset epoch loses its first iteration's share, and a phase
 *   covers n + 1 epochs, counted as the run counts them.
 * - At the first iteration of the epoch after the phase, the worker is
 *   released and draws again in that same call.
 *
 * The sleep adds wall time, not work: the inner source (the worker's
 * availability) finishes the computation and the delay follows it, with
 * the CPU idle (a CPU-credit bucket below earns during it). It is slept
 * once per iteration: after the whole share, or, when the worker runs its
 * share as micro-batches (work stealing), after the first of them; the
 * others follow without delay (and the rest of the share may be stolen
 * meanwhile). */
#include <assert.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "traces/gen.h"

typedef struct dbs_state {
	lbs_avail inner;
	gsl_rng *rng;
	lbs_dbs_params p;
	int64_t epoch;     /* last epoch whose first iteration was handled; -1 before */
	int64_t first, length; /* that epoch's iterations: first..first+length-1 */
	int64_t charged;   /* last iteration whose delay was added; -1 before */
	bool slowed;
	int64_t onset, until; /* the phase: epochs onset..until */
	double delay_s;       /* per epoch */
} dbs_state;

/* Python's random.randint(a, b): a whole number in a..b inclusive. */
static int64_t randint(gsl_rng *rng, int64_t a, int64_t b)
{
	return a + (int64_t)gsl_rng_uniform_int(rng, (unsigned long)(b - a + 1));
}

/* What fault_tolerance_wait() does at the first iteration of epoch e. */
static void epoch_start(dbs_state *s, int64_t e)
{
	if (s->slowed && e <= s->until)
		return;
	s->slowed = false;
	if (gsl_rng_uniform(s->rng) < s->p.probability) {
		int64_t lo = (int64_t)ceil(s->p.delay_min_s), hi = (int64_t)floor(s->p.delay_max_s);
		s->delay_s = (double)randint(s->rng, lo, hi);
		s->until = e + randint(s->rng, s->p.epochs_min, s->p.epochs_max);
		s->onset = e;
		s->slowed = true;
	}
}

/* Handles every epoch up to the one holding `iteration`, once and in
 * order, whatever iterations the run asks about, so the draws never depend
 * on the caller. Until the run says otherwise (dbs_epoch), an epoch lasts
 * iterations_per_epoch iterations from the end of the one before. */
static void advance(dbs_state *s, int64_t iteration)
{
	while (s->epoch < 0 || iteration >= s->first + s->length) {
		s->first = s->epoch < 0 ? 0 : s->first + s->length;
		s->length = s->p.iterations_per_epoch;
		epoch_start(s, ++s->epoch);
	}
}

/* The sleep of `iteration` (in the current epoch): D spread over the
 * epoch's iterations, none at the onset epoch's first. */
static double delay_of(const dbs_state *s, int64_t iteration)
{
	int64_t e = s->epoch;
	bool first = iteration == s->first;
	if (!s->slowed || e < s->onset || e > s->until || (e == s->onset && first))
		return 0.0;
	return s->delay_s / (double)s->length;
}

/* The delay is the worker's, once per iteration: it follows the first
 * piece of work the worker runs in the iteration (its whole share, or its
 * first micro-batch), never each micro-batch again. */
static double dbs_finish(void *state, double t0, double work_s, int64_t iteration)
{
	dbs_state *s = state;
	advance(s, iteration);
	double d = iteration != s->charged ? delay_of(s, iteration) : 0.0;
	s->charged = iteration;
	return lbs_avail_finish(&s->inner, t0, work_s, iteration) + d;
}

static double dbs_level(const void *state, double t, int64_t iteration)
{
	const dbs_state *s = state;
	return lbs_avail_level(&s->inner, t, iteration);
}

static double dbs_reading(void *state, double t, int64_t iteration, int kind)
{
	dbs_state *s = state;
	return lbs_avail_reading(&s->inner, t, iteration, kind);
}

static void dbs_destroy(void *state)
{
	dbs_state *s = state;
	lbs_avail_destroy(&s->inner);
	gsl_rng_free(s->rng);
	free(s);
}

/* The epochs' draws advance as in finish() (they do not depend on the
 * caller); the wrapped source is only peeked. */
static double dbs_peek(void *state, double t0, double work_s, int64_t iteration)
{
	dbs_state *s = state;
	advance(s, iteration);
	double d = iteration != s->charged ? delay_of(s, iteration) : 0.0;
	return lbs_avail_peek(&s->inner, t0, work_s, iteration) + d;
}

/* The run's epochs: the authors' code sleeps D / batch_num, with batch_num
 * the iterations of the epoch as partitioned (longer when DBS's rounding
 * shrinks the global batch), and counts epochs as the training loop does. */
static void dbs_epoch(void *state, int64_t epoch, int64_t first, int64_t iterations)
{
	dbs_state *s = state;
	while (s->epoch < epoch)
		epoch_start(s, ++s->epoch);
	s->first = first;
	s->length = iterations > 0 ? iterations : 1;
}

static const lbs_avail_ops dbs_ops = {
	.peek = dbs_peek,
	.name = "dbs_disturbance",
	.finish = dbs_finish,
	.level = dbs_level,
	.reading = dbs_reading,
	.destroy = dbs_destroy,
	.epoch = dbs_epoch,
};

double lbs_dbs_delay(const lbs_avail *a, int64_t iteration)
{
	assert(a->ops == &dbs_ops);
	const dbs_state *s = a->state;
	assert(s->epoch >= 0 && iteration >= s->first && iteration < s->first + s->length);
	return delay_of(s, iteration);
}

lbs_status lbs_dbs_create(const lbs_dbs_params *p, lbs_avail inner, gsl_rng *rng, lbs_avail *out,
			  lbs_error *err)
{
	lbs_status st = LBS_OK;
	if (p->iterations_per_epoch < 1 || !(p->probability >= 0 && p->probability <= 1) ||
	    !(p->delay_min_s >= 0) || floor(p->delay_max_s) < ceil(p->delay_min_s) ||
	    p->epochs_min < 0 || p->epochs_max < p->epochs_min)
		st = lbs_error_set(err, LBS_EINPUT,
				   "DBS disturbance: needs epochs, a probability in [0, 1], a whole second "
				   "between delay_min and delay_max, and 0 <= epochs_min <= epochs_max");
	dbs_state *s = st == LBS_OK ? lbs_calloc(1, sizeof *s, err) : NULL;
	if (!s) {
		lbs_avail_destroy(&inner);
		gsl_rng_free(rng);
		return st == LBS_OK ? LBS_EINTERNAL : st;
	}
	s->inner = inner;
	s->rng = rng;
	s->p = *p;
	s->epoch = -1;
	s->charged = -1;
	*out = (lbs_avail){ &dbs_ops, s, 1.0 };
	return LBS_OK;
}
