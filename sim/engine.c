/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "sim/engine.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

lbs_status lbs_engine_init(lbs_engine *eng, size_t queue_capacity, lbs_error *err)
{
	memset(eng, 0, sizeof *eng);
	eng->err = err;
	return lbs_queue_init(&eng->queue, queue_capacity, err);
}

void lbs_engine_destroy(lbs_engine *eng)
{
	lbs_queue_destroy(&eng->queue);
	free(eng->handlers);
	memset(eng, 0, sizeof *eng);
}

lbs_status lbs_engine_register(lbs_engine *eng, lbs_event_fn fn, void *ctx, uint32_t arg,
			       uint32_t *handle)
{
	if (eng->n_handlers > LBS_HANDLE_MAX)
		return lbs_error_set(eng->err, LBS_EINTERNAL, "more than %u event handlers",
				     (unsigned)LBS_HANDLE_MAX + 1);
	if (eng->n_handlers == eng->cap_handlers) {
		uint32_t ncap = eng->cap_handlers ? eng->cap_handlers * 2 : 16;
		lbs_handler *h = realloc(eng->handlers, ncap * sizeof *h);
		if (!h)
			return lbs_error_set(eng->err, LBS_EINTERNAL, "out of memory registering handlers");
		eng->handlers = h;
		eng->cap_handlers = ncap;
	}
	eng->handlers[eng->n_handlers] = (lbs_handler){ fn, ctx, arg };
	*handle = eng->n_handlers++;
	return LBS_OK;
}

lbs_status lbs_engine_time_error(lbs_engine *eng, double time)
{
	return lbs_error_set(eng->err, LBS_EINPUT,
			     "simulated time reaches %g s at %g s, past the limit of %g s: a worker's "
			     "availability or the network's bandwidth is too low for its work%s",
			     time, eng->queue.now, LBS_ENGINE_MAX_TIME_S,
			     isinf(time) ? ", or a background job's phases are far shorter than the work" : "");
}

lbs_status lbs_engine_run(lbs_engine *eng)
{
	lbs_event ev;
	eng->stop = false;
	while (!eng->stop && lbs_queue_pop(&eng->queue, &ev)) {
		const lbs_handler *h = &eng->handlers[lbs_event_handle(&ev)];
		/* The flag at every event: one event may be costly (a scan of
		 * every worker, a background job's phases). */
		if (eng->interrupt && *eng->interrupt)
			return lbs_error_set(eng->err, LBS_EINTR, "interrupted within an iteration, after %llu "
					     "events", (unsigned long long)eng->events);
		if (++eng->events % LBS_ENGINE_POLL == 0 && eng->event_limit && eng->events >= eng->event_limit)
			return lbs_error_set(eng->err, LBS_EINTR, "stopped at the limit of %llu events",
					     (unsigned long long)eng->event_limit);
		lbs_status st = h->fn(h->ctx, h->arg, eng);
		if (st != LBS_OK)
			return st;
	}
	return LBS_OK;
}
