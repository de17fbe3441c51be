/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The event queue against a sorted reference under random interleavings of
 * pushes and pops, with many equal times and pushes at the current time. */
#include <gsl/gsl_rng.h>
#include <stdlib.h>

#include "sim/engine.h"
#include "sim/queue.h"
#include "tests/unit/suites.h"

typedef struct ref_event {
	double time;
	uint64_t seq;
	uint32_t handle;
} ref_event;

/* Reference: an unsorted array, minimum by (time, seq) found by scanning. */
static size_t ref_min(const ref_event *r, size_t n)
{
	size_t best = 0;
	for (size_t i = 1; i < n; i++)
		if (r[i].time < r[best].time || (r[i].time == r[best].time && r[i].seq < r[best].seq))
			best = i;
	return best;
}

static void interleave(uint64_t seed, uint64_t seq_limit, size_t ops)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, (unsigned long)seed);
	lbs_queue q;
	CU_ASSERT_FATAL(lbs_queue_init(&q, 4, NULL) == LBS_OK);
	if (seq_limit)
		q.seq_limit = seq_limit;
	ref_event *ref = malloc(ops * sizeof *ref);
	size_t n = 0;
	uint64_t seq = 0;
	size_t mismatches = 0, pops = 0;
	for (size_t op = 0; op < ops; op++) {
		bool push = n == 0 || gsl_rng_uniform(rng) < 0.55;
		if (push) {
			/* Times on a coarse grid so that ties are common; a third at now. */
			double t = gsl_rng_uniform(rng) < 0.33 ? q.now
							      : q.now + (double)gsl_rng_uniform_int(rng, 4);
			uint32_t h = (uint32_t)gsl_rng_uniform_int(rng, LBS_HANDLE_MAX + 1);
			CU_ASSERT_FATAL(lbs_queue_push(&q, t, h, NULL) == LBS_OK);
			ref[n++] = (ref_event){ t, seq++, h };
		} else {
			lbs_event ev;
			CU_ASSERT_FATAL(lbs_queue_pop(&q, &ev));
			size_t m = ref_min(ref, n);
			mismatches += ev.time != ref[m].time || lbs_event_handle(&ev) != ref[m].handle;
			CU_ASSERT_EQUAL(q.now, ref[m].time);
			ref[m] = ref[--n];
			pops++;
		}
		CU_ASSERT_EQUAL(lbs_queue_size(&q), n);
	}
	/* Drain what is left. */
	lbs_event ev;
	while (n) {
		CU_ASSERT_FATAL(lbs_queue_pop(&q, &ev));
		size_t m = ref_min(ref, n);
		mismatches += ev.time != ref[m].time || lbs_event_handle(&ev) != ref[m].handle;
		ref[m] = ref[--n];
	}
	CU_ASSERT_FALSE(lbs_queue_pop(&q, &ev));
	CU_ASSERT_EQUAL(mismatches, 0);
	CU_ASSERT(pops > ops / 4);
	free(ref);
	lbs_queue_destroy(&q);
	gsl_rng_free(rng);
}

static void test_random_interleavings(void)
{
	for (uint64_t seed = 1; seed <= 20; seed++)
		interleave(seed, 0, 5000);
}

/* Sequence numbers renumbered every few pushes must not change the order. */
static void test_renumbering(void)
{
	for (uint64_t seed = 1; seed <= 5; seed++)
		interleave(seed, 7, 3000);
}

/* A log of pushes, sorted by (time, sequence): since no event is pushed
 * before the current time, a correct queue delivers every event in exactly
 * this order, whenever it was pushed. */
static int cmp_ref(const void *a, const void *b)
{
	const ref_event *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* The engine's pattern, the hold model: pop one, push 0, 1, 2 or 3 events
 * (the first into the popped root's slot, replace-top), on a coarse grid of
 * times so that most pushes tie with pending events, a fifth of them at
 * the current time (the FIFO); drained at the end. The delivered order is
 * checked against the sorted log of pushes. */
static void hold_against_sort(uint64_t seed, size_t start, size_t pops)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, (unsigned long)seed);
	lbs_queue q;
	CU_ASSERT_FATAL(lbs_queue_init(&q, 4, NULL) == LBS_OK);
	size_t cap = start + 4 * pops, n_log = 0, n_out = 0, pending = 0;
	ref_event *log = malloc(cap * sizeof *log), *out = malloc(cap * sizeof *out);
	CU_ASSERT_FATAL(log && out);
	for (; n_log < start; n_log++, pending++) {
		double t = (double)gsl_rng_uniform_int(rng, 8);
		uint32_t h = (uint32_t)n_log;
		CU_ASSERT_FATAL(lbs_queue_push(&q, t, h, NULL) == LBS_OK);
		log[n_log] = (ref_event){ t, n_log, h };
	}
	lbs_event ev;
	size_t sizes_wrong = 0;
	for (size_t p = 0; p < pops && lbs_queue_pop(&q, &ev); p++) {
		out[n_out++] = (ref_event){ ev.time, 0, lbs_event_handle(&ev) };
		pending--;
		/* 0..3 successors, 1 most often (the hold model proper) */
		double u = gsl_rng_uniform(rng);
		int succ = u < 0.1 ? 0 : u < 0.8 ? 1 : u < 0.95 ? 2 : 3;
		if (pending == 0 && succ == 0)
			succ = 1;
		for (int s = 0; s < succ; s++) {
			double t = gsl_rng_uniform(rng) < 0.2 ? q.now : q.now + 0.5 * (double)gsl_rng_uniform_int(rng, 5);
			uint32_t h = (uint32_t)(n_log & LBS_HANDLE_MAX);
			CU_ASSERT_FATAL(lbs_queue_push(&q, t, h, NULL) == LBS_OK);
			log[n_log] = (ref_event){ t, n_log, h };
			n_log++;
			pending++;
		}
		sizes_wrong += lbs_queue_size(&q) != pending;
	}
	CU_ASSERT(lbs_queue_check(&q));
	while (lbs_queue_pop(&q, &ev))
		out[n_out++] = (ref_event){ ev.time, 0, lbs_event_handle(&ev) };
	CU_ASSERT_EQUAL(sizes_wrong, 0);
	CU_ASSERT_EQUAL_FATAL(n_out, n_log);
	qsort(log, n_log, sizeof *log, cmp_ref);
	size_t mismatches = 0, ties = 0;
	for (size_t i = 0; i < n_log; i++) {
		mismatches += out[i].time != log[i].time || out[i].handle != log[i].handle;
		ties += i > 0 && log[i].time == log[i - 1].time;
	}
	CU_ASSERT_EQUAL(mismatches, 0);
	CU_ASSERT(ties > n_log / 2); /* the test is about ties */
	free(log);
	free(out);
	lbs_queue_destroy(&q);
	gsl_rng_free(rng);
}

static void test_hold_against_sort(void)
{
	for (uint64_t seed = 1; seed <= 10; seed++) {
		hold_against_sort(seed, 1, 3000);
		hold_against_sort(seed, 50, 5000);
		hold_against_sort(seed, 3000, 20000);
	}
}

/* The same through the engine: each handler schedules its successors with
 * lbs_engine_at, as the models do; the dispatch order is the sorted log. */
typedef struct hold_log {
	gsl_rng *rng;
	ref_event log[6000], out[6000];
	size_t n_log, n_out;
} hold_log;

static lbs_status hold_fn(void *ctx, uint32_t arg, lbs_engine *eng)
{
	hold_log *h = ctx;
	h->out[h->n_out++] = (ref_event){ lbs_engine_now(eng), 0, arg };
	int succ = h->n_log + 3 > sizeof h->log / sizeof h->log[0] ? 0 : (int)gsl_rng_uniform_int(h->rng, 4);
	for (int s = 0; s < succ; s++) {
		double t = lbs_engine_now(eng) + 0.25 * (double)gsl_rng_uniform_int(h->rng, 4);
		/* handler i was registered with arg i, so its handle is i too */
		uint32_t handle = (uint32_t)gsl_rng_uniform_int(h->rng, 16);
		h->log[h->n_log] = (ref_event){ t, h->n_log, handle };
		h->n_log++;
		lbs_status st = lbs_engine_at(eng, t, handle);
		if (st != LBS_OK)
			return st;
	}
	return LBS_OK;
}

static void test_engine_hold_against_sort(void)
{
	static hold_log h;
	for (unsigned long seed = 1; seed <= 5; seed++) {
		h.rng = gsl_rng_alloc(gsl_rng_mt19937);
		gsl_rng_set(h.rng, seed);
		h.n_log = h.n_out = 0;
		lbs_engine eng;
		CU_ASSERT_FATAL(lbs_engine_init(&eng, 4, NULL) == LBS_OK);
		for (uint32_t i = 0; i < 16; i++) {
			uint32_t handle;
			CU_ASSERT_FATAL(lbs_engine_register(&eng, hold_fn, &h, i, &handle) == LBS_OK);
			CU_ASSERT_EQUAL_FATAL(handle, i);
		}
		for (uint32_t i = 0; i < 64; i++) {
			double t = (double)gsl_rng_uniform_int(h.rng, 4);
			h.log[h.n_log] = (ref_event){ t, h.n_log, i % 16 };
			h.n_log++;
			CU_ASSERT_FATAL(lbs_engine_at(&eng, t, i % 16) == LBS_OK);
		}
		CU_ASSERT_EQUAL(lbs_engine_run(&eng), LBS_OK);
		CU_ASSERT_EQUAL_FATAL(h.n_out, h.n_log);
		CU_ASSERT(h.n_log > 1000);
		qsort(h.log, h.n_log, sizeof h.log[0], cmp_ref);
		size_t mismatches = 0;
		for (size_t i = 0; i < h.n_log; i++)
			mismatches += h.out[i].time != h.log[i].time || h.out[i].handle != h.log[i].handle;
		CU_ASSERT_EQUAL(mismatches, 0);
		lbs_engine_destroy(&eng);
		gsl_rng_free(h.rng);
	}
}

/* Events pushed at the current time follow the heap's events at that time
 * (pushed earlier), in push order. */
static void test_fifo_after_heap_ties(void)
{
	lbs_queue q;
	lbs_event ev;
	CU_ASSERT_FATAL(lbs_queue_init(&q, 4, NULL) == LBS_OK);
	lbs_queue_push(&q, 1.0, 1, NULL); /* A */
	lbs_queue_push(&q, 1.0, 2, NULL); /* B */
	lbs_queue_push(&q, 2.0, 9, NULL);
	CU_ASSERT(lbs_queue_pop(&q, &ev) && lbs_event_handle(&ev) == 1);
	lbs_queue_push(&q, 1.0, 3, NULL); /* C, at now: FIFO */
	lbs_queue_push(&q, 1.0, 4, NULL); /* D */
	uint32_t expect[] = { 2, 3, 4, 9 };
	for (size_t i = 0; i < 4; i++) {
		CU_ASSERT_FATAL(lbs_queue_pop(&q, &ev));
		CU_ASSERT_EQUAL(lbs_event_handle(&ev), expect[i]);
	}
	CU_ASSERT_EQUAL(q.now, 2.0);
	lbs_queue_destroy(&q);
}

/* The heap invariant holds after growth from a tiny capacity. */
static void test_growth_and_invariant(void)
{
	lbs_queue q;
	CU_ASSERT_FATAL(lbs_queue_init(&q, 1, NULL) == LBS_OK);
	for (uint32_t i = 0; i < 10000; i++)
		CU_ASSERT_FATAL(lbs_queue_push(&q, (double)((i * 7919u) % 1000u) + 0.5, i, NULL) == LBS_OK);
	CU_ASSERT(lbs_queue_check(&q));
	lbs_event ev, prev = { -1, 0 };
	size_t n = 0;
	while (lbs_queue_pop(&q, &ev)) {
		CU_ASSERT(ev.time > prev.time || (ev.time == prev.time && ev.key > prev.key));
		prev = ev;
		n++;
	}
	CU_ASSERT_EQUAL(n, 10000);
	lbs_queue_destroy(&q);
}

typedef struct counter {
	int fired[3];
	double at[3];
} counter;

static lbs_status count_fn(void *ctx, uint32_t arg, lbs_engine *eng)
{
	counter *c = ctx;
	c->fired[arg]++;
	c->at[arg] = lbs_engine_now(eng);
	if (arg == 0 && c->fired[0] < 3)
		return lbs_engine_at(eng, lbs_engine_now(eng) + 1.5, 0);
	return LBS_OK;
}

/* The engine dispatches to the registered handler with its argument. */
static void test_engine_dispatch(void)
{
	lbs_engine eng;
	counter c = { { 0 }, { 0 } };
	uint32_t h0, h1;
	CU_ASSERT_FATAL(lbs_engine_init(&eng, 4, NULL) == LBS_OK);
	lbs_engine_register(&eng, count_fn, &c, 0, &h0);
	lbs_engine_register(&eng, count_fn, &c, 1, &h1);
	lbs_engine_at(&eng, 0.0, h0);
	lbs_engine_at(&eng, 2.0, h1);
	CU_ASSERT_EQUAL(lbs_engine_run(&eng), LBS_OK);
	CU_ASSERT_EQUAL(c.fired[0], 3);
	CU_ASSERT_EQUAL(c.fired[1], 1);
	CU_ASSERT_DOUBLE_EQUAL(c.at[0], 3.0, 0);
	CU_ASSERT_DOUBLE_EQUAL(c.at[1], 2.0, 0);
	CU_ASSERT_EQUAL(eng.events, 4);
	lbs_engine_destroy(&eng);
}

void suite_queue(void)
{
	static const test_case tests[] = {
		{ "random interleavings match a sorted reference", test_random_interleavings },
		{ "renumbering sequences keeps the order", test_renumbering },
		{ "events at now follow earlier ties, FIFO", test_fifo_after_heap_ties },
		{ "growth keeps the heap invariant", test_growth_and_invariant },
		{ "hold model with ties (replace-top) matches the sorted pushes", test_hold_against_sort },
		{ "engine handlers scheduling successors match the sorted pushes", test_engine_hold_against_sort },
		{ "engine dispatches handlers", test_engine_dispatch },
	};
	add_suite("queue", tests, sizeof tests / sizeof tests[0]);
}
