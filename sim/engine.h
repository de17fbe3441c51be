/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The event engine: a clock, the event queue and a table of handlers.
 *
 * Models register a handler once (a function, its context and an argument)
 * and get back a 24-bit handle; scheduling an event is then pushing
 * (time, handle), and running it is one indirect call. Nothing in the engine
 * knows what a worker, a policy or a trace is. */
#ifndef LBS_ENGINE_H
#define LBS_ENGINE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "sim/queue.h"

/* The latest time an event may be scheduled at: past it, doubles no longer
 * tell apart the times of a run's events (their spacing at 1e18 s is 128 s),
 * and a time that overflows to infinity is refused here, as bad input,
 * rather than reaching the queue's invariant. */
#define LBS_ENGINE_MAX_TIME_S 1e18
/* lbs_engine_run looks at the interrupt flag before every event (one event
 * may cost a scan of every worker, or a background job's phases; the test
 * costs nothing measurable: 5e7 micro-batch events take 0.60 s either way)
 * and at event_limit every LBS_ENGINE_POLL events. */
#define LBS_ENGINE_POLL 1024

struct lbs_engine;
typedef lbs_status (*lbs_event_fn)(void *ctx, uint32_t arg, struct lbs_engine *eng);

typedef struct lbs_handler {
	lbs_event_fn fn;
	void *ctx;
	uint32_t arg;
} lbs_handler;

typedef struct lbs_engine {
	lbs_queue queue;
	lbs_handler *handlers;
	uint32_t n_handlers, cap_handlers;
	uint64_t events; /* events dispatched so far */
	bool stop;       /* a handler sets it to end lbs_engine_run early */
	lbs_error *err;  /* where handlers report failures */
	const volatile sig_atomic_t *interrupt; /* non-zero: stop (NULL: never) */
	uint64_t event_limit; /* > 0: stop after about this many events (the fuzzers' cap) */
} lbs_engine;

lbs_status lbs_engine_init(lbs_engine *eng, size_t queue_capacity, lbs_error *err);
void lbs_engine_destroy(lbs_engine *eng);

/* Registers a handler; *handle receives the handle to schedule it with. */
lbs_status lbs_engine_register(lbs_engine *eng, lbs_event_fn fn, void *ctx, uint32_t arg,
			       uint32_t *handle);

static inline double lbs_engine_now(const lbs_engine *eng) { return eng->queue.now; }

lbs_status lbs_engine_time_error(lbs_engine *eng, double time);

/* Schedules handle at absolute time `time` (>= now); a time past
 * LBS_ENGINE_MAX_TIME_S (or NaN) is an LBS_EINPUT error. */
static inline lbs_status lbs_engine_at(lbs_engine *eng, double time, uint32_t handle)
{
	if (__builtin_expect(!(time <= LBS_ENGINE_MAX_TIME_S), 0))
		return lbs_engine_time_error(eng, time);
	return lbs_queue_push(&eng->queue, time, handle, eng->err);
}

/* Dispatches events in (time, sequence) order until the queue is empty, a
 * handler sets eng->stop, a handler fails (its status is returned), or
 * *eng->interrupt is set or event_limit reached (LBS_EINTR). */
lbs_status lbs_engine_run(lbs_engine *eng);

#endif
