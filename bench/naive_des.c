/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The naive reference the bench compares lbsim with: a textbook
 * discrete-event simulation of the canonical workload, written from its
 * description and sharing no code with lbsim. One binary min-heap of
 * events, one event per worker completion, one for the end of the
 * aggregation; its own generator (xorshift64*, Vigna 2016, one stream per
 * worker); a 64-bit sequence number breaks ties so the order is total.
 *
 * Workload: n workers, every 4th (index 3, 7, ...) at half speed, 32
 * samples each at 1 ms a sample, a factor U[1, 1.1) of noise per worker
 * per iteration, ring all-reduce of 100 MB at 10 GB/s with 5 us per step
 * (2(n-1) steps, 2(n-1)/n of the gradient sent), the same batch every
 * iteration (the static policy). */
#include "bench/naive_des.h"

#include <stdlib.h>

typedef struct ev {
	double t;
	uint64_t seq;
	int64_t who; /* worker index, or -1: the aggregation ended */
} ev;

typedef struct heap {
	ev *a;
	size_t n;
	uint64_t seq;
} heap;

static int before(const ev *x, const ev *y)
{
	return x->t < y->t || (x->t == y->t && x->seq < y->seq);
}

static void push(heap *h, double t, int64_t who)
{
	size_t i = h->n++;
	ev e = { t, h->seq++, who };
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!before(&e, &h->a[p]))
			break;
		h->a[i] = h->a[p];
		i = p;
	}
	h->a[i] = e;
}

static ev pop(heap *h)
{
	ev top = h->a[0], last = h->a[--h->n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && before(&h->a[c + 1], &h->a[c]))
			c++;
		if (!before(&h->a[c], &last))
			break;
		h->a[i] = h->a[c];
		i = c;
	}
	if (h->n)
		h->a[i] = last;
	return top;
}

static double uniform01(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return (double)((*s * UINT64_C(0x2545F4914F6CDD1D)) >> 11) * 0x1.0p-53;
}

static void release(heap *h, uint64_t *rng, size_t n, double now)
{
	for (size_t i = 0; i < n; i++) {
		double speed = i % 4 == 3 ? 0.5 : 1.0;
		double work = 32 * 1e-3 * (1.0 + 0.1 * uniform01(&rng[i]));
		push(h, now + work / speed, (int64_t)i);
	}
}

int naive_des_run(size_t n, int64_t iterations, uint64_t seed, naive_des_result *out)
{
	heap h = { malloc((n + 1) * sizeof *h.a), 0, 0 };
	uint64_t *rng = malloc(n * sizeof *rng);
	if (!h.a || !rng) {
		free(h.a);
		free(rng);
		return -1;
	}
	for (size_t i = 0; i < n; i++) /* any non-zero state; distinct per worker */
		rng[i] = (seed + 1) * UINT64_C(0x9E3779B97F4A7C15) ^ (i + 1) * UINT64_C(0xD1B54A32D192ED03);
	const double steps = 2.0 * (double)(n - 1);
	const double agg = n > 1 ? steps * 5e-6 + steps / (double)n * 100e6 / 10e9 : 0;
	double now = 0, start = 0, sum_gap = 0, lo = 0, hi = 0;
	size_t left = n;
	int64_t it = 0;
	uint64_t events = 0;
	release(&h, rng, n, now);
	while (h.n) {
		ev e = pop(&h);
		events++;
		now = e.t;
		if (e.who >= 0) {
			double c = now - start;
			lo = left == n || c < lo ? c : lo;
			hi = left == n || c > hi ? c : hi;
			if (--left == 0)
				push(&h, now + agg, -1);
			continue;
		}
		sum_gap += hi - lo;
		if (++it == iterations)
			break;
		start = now;
		left = n;
		release(&h, rng, n, now);
	}
	out->sim_time_s = now;
	out->sum_gap_s = sum_gap;
	out->events = events;
	free(h.a);
	free(rng);
	return 0;
}
