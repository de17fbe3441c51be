/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A co-located background job: an alternating renewal process with
 * exponential on and off durations (a two-state continuous-time Markov
 * chain, the usual model of an on/off source, e.g. Heffes and Lucantoni,
 * IEEE JSAC 4(6), 1986). While on it takes `load` of the worker's CPU, so
 * a(t) = 1 - load; while off a(t) = 1. This is the non-dedicated setting
 * LB-BSP targets (Chen et al., SoCC 2020): other tenants' jobs come and go,
 * and the CPU and memory utilisation a monitor reads reflect them.
 *
 * The process is drawn lazily from the worker's own stream, one exponential
 * per phase, in phase order, so what it does at time t depends only on the
 * stream, never on when or how often it is asked. It starts in the
 * stationary state: on with probability on/(on + off), and by the lack of
 * memory of the exponential the rest of the first phase is again
 * exponential with the phase's mean. Completions are exact: the work is
 * integrated phase by phase. */
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "traces/gen.h"

/* A phase that has ended, kept for readings of the past. */
typedef struct bg_phase {
	double start_s, end_s;
	bool on;
} bg_phase;

typedef struct bg_state {
	gsl_rng *rng;
	lbs_background_params p;
	bool on;
	bool exhausted; /* a call ran past PHASE_BUDGET: every later one gives up at once */
	double start_s, end_s; /* the current phase */
	bg_phase *past;        /* ended phases, oldest first, from past[head] to past[n - 1] */
	size_t head, n, cap;   /* cap 0: none kept (history_s 0, or a look-ahead's copy) */
} bg_state;

/* Draws the next phase after one ending at `end_s`. */
static void next_phase(gsl_rng *rng, const lbs_background_params *p, bool *on, double *start_s,
		       double *end_s)
{
	*on = !*on;
	*start_s = *end_s;
	*end_s += gsl_ran_exponential(rng, *on ? p->on_mean_s : p->off_mean_s);
}

/* The most phases one call may draw (a fifth of a second or so): past it
 * the phases are far shorter than the span asked about, and the source
 * gives up: finish() returns +inf, which the engine refuses as bad input
 * (lbs_engine_at), and a reading or level NAN. The scenario's bounds
 * (sim/run.c) refuse most such jobs before the run; this catches what they
 * cannot foresee, such as a policy's steal latency of an hour. */
#define PHASE_BUDGET 10000000

/* Ends the current phase and draws the next, keeping the one that ended
 * while it may still be read (its end within history_s of the new
 * phase's start). */
static void step(bg_state *s)
{
	if (s->cap) {
		double keep_from = s->end_s - s->p.history_s;
		while (s->head < s->n && s->past[s->head].end_s <= keep_from)
			s->head++;
		if (s->n == s->cap) { /* compact, then grow if still full */
			memmove(s->past, s->past + s->head, (s->n - s->head) * sizeof *s->past);
			s->n -= s->head;
			s->head = 0;
			if (s->n == s->cap) {
				bg_phase *p = realloc(s->past, 2 * s->cap * sizeof *p);
				if (p) {
					s->past = p;
					s->cap *= 2;
				} else { /* out of memory: forget the oldest */
					memmove(s->past, s->past + 1, (s->n - 1) * sizeof *s->past);
					s->n--;
				}
			}
		}
		s->past[s->n++] = (bg_phase){ s->start_s, s->end_s, s->on };
	}
	next_phase(s->rng, &s->p, &s->on, &s->start_s, &s->end_s);
}

/* Moves the current phase to the one holding t; false past the budget. */
static bool advance(bg_state *s, double t)
{
	if (s->exhausted)
		return false;
	for (long k = 0; s->end_s <= t; k++) {
		if (k == PHASE_BUDGET) {
			s->exhausted = true;
			return false;
		}
		step(s);
	}
	return true;
}

static double bg_finish(void *state, double t0, double work_s, int64_t iteration)
{
	(void)iteration;
	bg_state *s = state;
	if (!advance(s, t0))
		return INFINITY;
	double t = t0, w = work_s;
	for (long k = 0; k < PHASE_BUDGET; k++) {
		double a = s->on ? 1.0 - s->p.load : 1.0;
		double room = a * (s->end_s - t); /* work the rest of this phase holds */
		if (w <= room)
			return t + w / a;
		w -= room;
		t = s->end_s;
		step(s);
	}
	s->exhausted = true;
	return INFINITY;
}

/* a(t) for t at or after the current phase's start; later phases are drawn
 * on a copy of the stream, leaving the source as it was. */
static double bg_level(const void *state, double t, int64_t iteration)
{
	(void)iteration;
	const bg_state *s = state;
	if (t < s->start_s)
		return NAN; /* the past is not kept */
	bool on = s->on;
	if (t >= s->end_s) {
		gsl_rng *copy = gsl_rng_clone(s->rng);
		if (!copy)
			return NAN;
		double start = s->start_s, end = s->end_s;
		for (long k = 0; end <= t; k++) {
			if (k == PHASE_BUDGET) {
				gsl_rng_free(copy);
				return NAN;
			}
			next_phase(copy, &s->p, &on, &start, &end);
		}
		gsl_rng_free(copy);
	}
	return on ? 1.0 - s->p.load : 1.0;
}

static double bg_reading(void *state, double t, int64_t iteration, int kind)
{
	(void)iteration;
	bg_state *s = state;
	if (kind != LBS_READING_CPU_UTIL && kind != LBS_READING_MEM_UTIL)
		return NAN;
	bool on = s->on;
	if (t < s->start_s) { /* a kept phase (a monitor's lagged reading) */
		size_t i = s->n;
		while (i > s->head && s->past[i - 1].start_s > t)
			i--;
		if (i == s->head || t >= s->past[i - 1].end_s)
			return NAN; /* older than history_s: not kept */
		on = s->past[i - 1].on;
	} else {
		if (!advance(s, t))
			return NAN;
		on = s->on;
	}
	if (!on)
		return 0.0;
	return kind == LBS_READING_CPU_UTIL ? s->p.load : s->p.memory;
}

static void bg_destroy(void *state)
{
	bg_state *s = state;
	gsl_rng_free(s->rng);
	free(s->past);
	free(s);
}

/* finish() on a copy of the state and the stream: the oracle looks ahead
 * without moving the source past the present (readings need it there). */
static double bg_peek(void *state, double t0, double work_s, int64_t iteration)
{
	bg_state copy = *(const bg_state *)state;
	copy.past = NULL, copy.head = copy.n = copy.cap = 0; /* keeps no history of its own */
	copy.rng = gsl_rng_clone(copy.rng);
	if (!copy.rng)
		return NAN;
	double t = bg_finish(&copy, t0, work_s, iteration);
	gsl_rng_free(copy.rng);
	return t;
}

static const lbs_avail_ops bg_ops = {
	.name = "background",
	.peek = bg_peek,
	.finish = bg_finish,
	.level = bg_level,
	.reading = bg_reading,
	.destroy = bg_destroy,
};

lbs_status lbs_background_create(const lbs_background_params *p, gsl_rng *rng, lbs_avail *out,
				 lbs_error *err)
{
	if (!(p->on_mean_s > 0) || !(p->off_mean_s > 0) || !(p->load >= 0 && p->load < 1) ||
	    !(p->memory >= 0 && p->memory <= 1) || !(p->history_s >= 0 && p->history_s < INFINITY)) {
		gsl_rng_free(rng);
		return lbs_error_set(err, LBS_EINPUT,
				     "background job: means must be > 0, load in [0, 1), memory in [0, 1], "
				     "history >= 0 and finite");
	}
	bg_state *s = lbs_calloc(1, sizeof *s, err);
	if (!s) {
		gsl_rng_free(rng);
		return LBS_EINTERNAL;
	}
	s->rng = rng;
	s->p = *p;
	if (p->history_s > 0) {
		if (!(s->past = lbs_calloc(16, sizeof *s->past, err))) {
			gsl_rng_free(rng);
			free(s);
			return LBS_EINTERNAL;
		}
		s->cap = 16;
	}
	/* Stationary start: draw the state, then the rest of its phase. */
	s->on = gsl_rng_uniform(rng) < p->on_mean_s / (p->on_mean_s + p->off_mean_s);
	s->start_s = 0.0;
	s->end_s = gsl_ran_exponential(rng, s->on ? p->on_mean_s : p->off_mean_s);
	*out = (lbs_avail){ &bg_ops, s, 1.0 };
	return LBS_OK;
}
