/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The event queue: a flat-array 4-ary min-heap of 16-byte events plus a FIFO
 * for events scheduled at the current time.
 *
 * Order is total: (time, sequence). The sequence number is taken when an
 * event is pushed, so two events at the same time leave in push order and a
 * run is reproducible bit for bit. An event carries a 24-bit handle that
 * says what to do with it (see sim/engine.h); the queue itself never looks
 * at it.
 *
 * Nothing here allocates per event: the heap and the FIFO grow by doubling.
 * The heap is laid out with its root at index 3, so the four children of a
 * node always share one 64-byte cache line; slots past the last event hold
 * +inf sentinels, so every node has four readable children and the least
 * is picked without branches (pop is Floyd's bottom-up sift).
 *
 * A pop from the heap leaves the popped root in place, marked taken: the
 * next push fills its slot (replace-top, one descent for the pop and the
 * push, which is the engine's common case of an event scheduling its
 * successor), the next pop removes it first. Either way the pending set,
 * and so the order of events, is that of a pop followed by a push. */
#ifndef LBS_QUEUE_H
#define LBS_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

#define LBS_HANDLE_BITS 24
#define LBS_HANDLE_MAX ((UINT32_C(1) << LBS_HANDLE_BITS) - 1)
#define LBS_SEQ_LIMIT (UINT64_C(1) << (64 - LBS_HANDLE_BITS))

typedef struct lbs_event {
	double time;
	uint64_t key; /* sequence << LBS_HANDLE_BITS | handle */
} lbs_event;

typedef struct lbs_queue {
	lbs_event *slot; /* heap storage; node k lives at slot[k + 3] */
	size_t n;        /* events in the heap, the taken root included */
	size_t cap;      /* heap capacity in events */
	uint64_t *fifo;  /* keys of events at time `now`, in push order */
	size_t fifo_head, fifo_n, fifo_mask;
	double now;           /* time of the last event popped */
	uint64_t next_seq;    /* sequence number of the next push */
	uint64_t seq_limit;   /* renumber when next_seq reaches this (tests lower it) */
	bool root_taken;      /* slot[ROOT] was popped; the next push or pop replaces it */
	void *mem;            /* allocation behind slot (aligned) */
} lbs_queue;

/* Prepares an empty queue with room for capacity events before it grows. */
lbs_status lbs_queue_init(lbs_queue *q, size_t capacity, lbs_error *err);
void lbs_queue_destroy(lbs_queue *q);

/* Pushes an event at `time` (>= q->now) carrying `handle` (<= LBS_HANDLE_MAX).
 * Fails only when memory is exhausted. */
lbs_status lbs_queue_push(lbs_queue *q, double time, uint32_t handle, lbs_error *err);

/* Pops the least event into *ev and advances q->now to its time.
 * Returns false when the queue is empty. */
bool lbs_queue_pop(lbs_queue *q, lbs_event *ev);

static inline size_t lbs_queue_size(const lbs_queue *q) { return q->n - q->root_taken + q->fifo_n; }
static inline uint32_t lbs_event_handle(const lbs_event *ev)
{
	return (uint32_t)(ev->key & LBS_HANDLE_MAX);
}

/* Debug check of the heap invariant (tests and assert builds). */
bool lbs_queue_check(const lbs_queue *q);

#endif
