/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The event engine: a clock, the event queue and a table of handlers.
 *
 * Models register a handler once (a function, its context and an argument)
 * and get back a 24-bit handle; scheduling an event is then pushing
 * (time, handle), and running it is one indirect call. Nothing in the engine
 * knows what a worker, a policy or a trace is. */
#ifndef LBS_ENGINE_H
#define LBS_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/queue.h"

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
} lbs_engine;

lbs_status lbs_engine_init(lbs_engine *eng, size_t queue_capacity, lbs_error *err);
void lbs_engine_destroy(lbs_engine *eng);

/* Registers a handler; *handle receives the handle to schedule it with. */
lbs_status lbs_engine_register(lbs_engine *eng, lbs_event_fn fn, void *ctx, uint32_t arg,
			       uint32_t *handle);

static inline double lbs_engine_now(const lbs_engine *eng) { return eng->queue.now; }

/* Schedules handle at absolute time `time` (>= now). */
static inline lbs_status lbs_engine_at(lbs_engine *eng, double time, uint32_t handle)
{
	return lbs_queue_push(&eng->queue, time, handle, eng->err);
}

/* Dispatches events in (time, sequence) order until the queue is empty, a
 * handler sets eng->stop, or a handler fails (its status is returned). */
lbs_status lbs_engine_run(lbs_engine *eng);

#endif
