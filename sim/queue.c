/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "sim/queue.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define ROOT 3 /* index of the root in q->slot: children of node k start at 4k+4 */

static inline bool before(const lbs_event *a, const lbs_event *b)
{
	return a->time < b->time || (a->time == b->time && a->key < b->key);
}

static lbs_status heap_reserve(lbs_queue *q, size_t cap, lbs_error *err)
{
	if (cap <= q->cap)
		return LBS_OK;
	size_t bytes = (cap + ROOT + 4) * sizeof(lbs_event);
	void *mem = NULL;
	if (posix_memalign(&mem, 64, bytes) != 0)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory growing the event queue to %zu events", cap);
	if (q->slot)
		memcpy((lbs_event *)mem + ROOT, q->slot + ROOT, q->n * sizeof(lbs_event));
	for (size_t i = q->n; i < cap + 4; i++)
		((lbs_event *)mem)[i + ROOT] = (lbs_event){ __builtin_inf(), UINT64_MAX };
	free(q->mem);
	q->mem = mem;
	q->slot = mem;
	q->cap = cap;
	return LBS_OK;
}

static lbs_status fifo_grow(lbs_queue *q, lbs_error *err)
{
	size_t cap = q->fifo_mask + 1, ncap = cap * 2;
	uint64_t *f = malloc(ncap * sizeof *f);
	if (!f)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory growing the event queue's FIFO");
	for (size_t i = 0; i < q->fifo_n; i++)
		f[i] = q->fifo[(q->fifo_head + i) & q->fifo_mask];
	free(q->fifo);
	q->fifo = f;
	q->fifo_head = 0;
	q->fifo_mask = ncap - 1;
	return LBS_OK;
}

lbs_status lbs_queue_init(lbs_queue *q, size_t capacity, lbs_error *err)
{
	memset(q, 0, sizeof *q);
	q->seq_limit = LBS_SEQ_LIMIT;
	q->fifo = malloc(64 * sizeof *q->fifo);
	if (!q->fifo)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory creating the event queue");
	q->fifo_mask = 63;
	return heap_reserve(q, capacity < 16 ? 16 : capacity, err);
}

void lbs_queue_destroy(lbs_queue *q)
{
	free(q->mem);
	free(q->fifo);
	memset(q, 0, sizeof *q);
}

static int cmp_event(const void *a, const void *b)
{
	const lbs_event *x = a, *y = b;
	return before(x, y) ? -1 : before(y, x) ? 1 : 0;
}

/* (time, key) as one 128-bit integer: time >= 0, so its IEEE bits order as
 * unsigned integers; -0.0 is not produced (times are sums of >= 0 values). */
static inline unsigned __int128 ord(const lbs_event *e)
{
	uint64_t b;
	memcpy(&b, &e->time, sizeof b);
	return (unsigned __int128)b << 64 | e->key;
}

/* Moves the hole at the root down to a leaf, along least children, and
 * returns the leaf's index. Slots n..n+3 hold +inf sentinels, so every node
 * has four readable children. The pick is branch-free: which child is least
 * is a coin toss the branch predictor would lose half the time. */
static inline size_t hole_to_leaf(lbs_event *s, size_t n)
{
	size_t k = 0;
	for (;;) {
		size_t c = 4 * k + 1;
		if (c >= n)
			return k;
		const lbs_event *kids = &s[c + ROOT];
		unsigned __int128 o0 = ord(&kids[0]), o1 = ord(&kids[1]), o2 = ord(&kids[2]), o3 = ord(&kids[3]);
		size_t a = o1 < o0, b = 2 + (o3 < o2);
		unsigned __int128 oa = a ? o1 : o0, ob = b == 3 ? o3 : o2;
		size_t best = a + ((b - a) & -(size_t)(ob < oa));
		s[k + ROOT] = kids[best];
		k = c + best;
	}
}

/* Puts ev into the hole at k, sifting it up past greater parents. */
static inline void sift_up(lbs_event *s, size_t k, lbs_event ev)
{
	unsigned __int128 o = ord(&ev);
	while (k > 0) {
		size_t parent = (k - 1) >> 2;
		if (!(o < ord(&s[parent + ROOT])))
			break;
		s[k + ROOT] = s[parent + ROOT];
		k = parent;
	}
	s[k + ROOT] = ev;
}

/* Removes the root that the last pop handed out (Floyd's bottom-up
 * deletion: the hole goes down to a leaf, the last event up from there). */
static void remove_root(lbs_queue *q)
{
	lbs_event *s = q->slot;
	lbs_event last = s[--q->n + ROOT];
	s[q->n + ROOT] = (lbs_event){ __builtin_inf(), UINT64_MAX };
	sift_up(s, hole_to_leaf(s, q->n), last);
	q->root_taken = false;
}

static void settle(lbs_queue *q)
{
	if (q->root_taken)
		remove_root(q);
}

/* Sequence numbers are about to overflow their 40 bits: renumber every
 * pending event 0, 1, 2, ... in its current order. A sorted array is a valid
 * heap, and FIFO events (all at `now`, pushed last) keep following. */
static void renumber(lbs_queue *q)
{
	settle(q);
	lbs_event *h = q->slot + ROOT;
	qsort(h, q->n, sizeof *h, cmp_event);
	uint64_t seq = 0;
	for (size_t i = 0; i < q->n; i++, seq++)
		h[i].key = seq << LBS_HANDLE_BITS | (h[i].key & LBS_HANDLE_MAX);
	for (size_t i = 0; i < q->fifo_n; i++, seq++) {
		uint64_t *k = &q->fifo[(q->fifo_head + i) & q->fifo_mask];
		*k = seq << LBS_HANDLE_BITS | (*k & LBS_HANDLE_MAX);
	}
	q->next_seq = seq;
}

lbs_status lbs_queue_push(lbs_queue *q, double time, uint32_t handle, lbs_error *err)
{
	assert(time >= q->now && time < __builtin_inf() && handle <= LBS_HANDLE_MAX);
	time += 0.0; /* -0.0 becomes +0.0, so times order like their bits (see ord) */
	if (q->next_seq >= q->seq_limit)
		renumber(q);
	uint64_t key = q->next_seq++ << LBS_HANDLE_BITS | handle;
	if (time == q->now) {
		/* Fast path: it follows every pending event at `now`. Heap events at
		 * `now` were pushed earlier, so they have smaller sequence numbers. */
		if (q->fifo_n > q->fifo_mask && fifo_grow(q, err) != LBS_OK)
			return err ? err->status : LBS_EINTERNAL;
		q->fifo[(q->fifo_head + q->fifo_n++) & q->fifo_mask] = key;
		return LBS_OK;
	}
	lbs_event ev = { time, key };
	if (q->root_taken) {
		/* Replace-top: the popped root's slot takes the new event, so one
		 * descent serves the pop and the push (the engine's common case:
		 * an event's handler schedules its successor). */
		q->root_taken = false;
		sift_up(q->slot, hole_to_leaf(q->slot, q->n), ev);
		return LBS_OK;
	}
	if (q->n == q->cap && heap_reserve(q, q->cap * 2, err) != LBS_OK)
		return err ? err->status : LBS_EINTERNAL;
	sift_up(q->slot, q->n++, ev);
	return LBS_OK;
}

bool lbs_queue_pop(lbs_queue *q, lbs_event *ev)
{
	settle(q);
	lbs_event *s = q->slot;
	if (q->fifo_n && !(q->n && s[ROOT].time == q->now)) {
		ev->time = q->now;
		ev->key = q->fifo[q->fifo_head];
		q->fifo_head = (q->fifo_head + 1) & q->fifo_mask;
		q->fifo_n--;
		return true;
	}
	if (q->n == 0)
		return false;
	*ev = s[ROOT];
	q->now = ev->time;
	/* The root stays until the next push (which takes its slot) or pop. */
	q->root_taken = true;
	return true;
}

bool lbs_queue_check(const lbs_queue *q)
{
	const lbs_event *h = q->slot + ROOT;
	for (size_t k = 1; k < q->n; k++)
		if (before(&h[k], &h[(k - 1) >> 2]))
			return false;
	for (size_t k = 0; k < q->n; k++)
		if (h[k].time < q->now)
			return false;
	return true;
}
