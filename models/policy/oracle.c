/* SPDX-License-Identifier: GPL-3.0-or-later */
/* oracle: the per-iteration optimum for barrier-time policies. At each
 * barrier it sees the coming iteration exactly (this iteration's noise and
 * availability, through lbs_future) and chooses the integer batch sizes
 * within memory caps that minimise the iteration's compute time, the
 * maximum over workers of their completion.
 *
 * Exactness: let f_i(b) be worker i's completion with b samples,
 * non-decreasing in b, and F0 = max_i f_i(0) (now, unless a source delays
 * even an empty share: a DBS sleep). Any allocation's maximum is at least
 * F0 and at least the B-th smallest value of the multiset
 * {f_i(b) : 1 <= b <= cap_i} (an allocation with maximum T uses only values
 * <= T, and B of them, since worker i's values f_i(1..b_i) are all
 * <= f_i(b_i)); so it is at least T*, the least T >= F0 with B values
 * <= T, and taking for each worker the prefix of its values <= T* reaches
 * it. T* is found by bisection over the order-preserving bit patterns of
 * non-negative doubles from F0, which ends on F0 or on a value that is
 * exactly one of the f_i(b); the count of values <= T for a worker is a
 * binary search over b. Cost per iteration: O(64 * N * log2(max cap))
 * evaluations of f.
 *
 * A bound per iteration, given the state at its barrier. Where a source's
 * future depends on the load it is given (a CPU-credit bucket spends
 * credits only while busy), minimising each iteration greedily is not
 * minimising the run: spending a worker's credits now can leave it slow
 * when they would have saved more (doc/policies.md, "oracle"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/policy.h"

typedef struct oracle_state {
	int64_t global_batch;
	size_t n;
	const int64_t *caps;
	int64_t *hi;      /* per worker: largest b worth considering */
	double bound_s;   /* the optimum's completion time, last iteration */
} oracle_state;

static void oracle_destroy(void *state)
{
	oracle_state *s = state;
	if (s) {
		free(s->hi);
		free(s);
	}
}

static lbs_status oracle_create(const lbs_policy_env *env, const lbs_kv *options, size_t n_options,
				void **state, lbs_policy_info *info, lbs_error *err)
{
	(void)options, (void)n_options;
	oracle_state *s = lbs_calloc(1, sizeof *s, err);
	if (!s)
		return LBS_EINTERNAL;
	s->global_batch = env->global_batch;
	s->n = env->n_workers;
	s->caps = env->max_batch;
	if (!(s->hi = lbs_calloc(s->n, sizeof *s->hi, err))) {
		oracle_destroy(s);
		return LBS_EINTERNAL;
	}
	for (size_t i = 0; i < s->n; i++)
		s->hi[i] = s->caps[i] < env->global_batch ? s->caps[i] : env->global_batch;
	info->lookahead = true;
	*state = s;
	return LBS_OK;
}

/* Largest b in [0, hi] with f(b) <= t, for t >= f(0). */
static int64_t count_le(const lbs_future *fu, size_t i, int64_t hi, double t)
{
	int64_t lo = 0;
	while (lo < hi) {
		int64_t mid = lo + (hi - lo + 1) / 2;
		if (fu->finish_s(fu->ctx, i, mid) <= t)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

static int64_t total_le(const oracle_state *s, const lbs_future *fu, double t, int64_t stop)
{
	int64_t sum = 0;
	for (size_t i = 0; i < s->n && sum < stop; i++)
		sum += count_le(fu, i, s->hi[i], t);
	return sum;
}

static uint64_t bits(double x)
{
	uint64_t u;
	memcpy(&u, &x, sizeof u);
	return u;
}

static double from_bits(uint64_t u)
{
	double x;
	memcpy(&x, &u, sizeof x);
	return x;
}

static lbs_status oracle_plan(void *state, const lbs_observation *obs, int64_t *batch, bool *changed,
			      lbs_error *err)
{
	oracle_state *s = state;
	const lbs_future *fu = obs->future;
	const int64_t B = s->global_batch;
	/* No allocation ends before every worker's f(0): a worker given no
	 * samples still takes what its source adds to any iteration (a DBS
	 * sleep). An upper end that holds B: every worker at its largest b. */
	double floor_s = obs->now_s, top = obs->now_s;
	for (size_t i = 0; i < s->n; i++) {
		double f0 = fu->finish_s(fu->ctx, i, 0), f = fu->finish_s(fu->ctx, i, s->hi[i]);
		floor_s = f0 > floor_s ? f0 : floor_s;
		top = f > top ? f : top;
	}
	if (!isfinite(top) || total_le(s, fu, top, B) < B)
		return lbs_error_set(err, LBS_EINPUT,
				     "oracle: the global batch cannot be completed (a worker with zero "
				     "speed, or memory caps below the global batch)");
	/* Bisection on bit patterns: lo infeasible, hi feasible. Completion
	 * times are >= now >= 0, so their bits order like their values. */
	uint64_t lo = bits(floor_s), hi = bits(top);
	if (total_le(s, fu, floor_s, B) >= B)
		hi = lo; /* B fits in zero time (zero-cost work) */
	else
		while (hi - lo > 1) {
			uint64_t mid = lo + (hi - lo) / 2;
			if (total_le(s, fu, from_bits(mid), B) >= B)
				hi = mid;
			else
				lo = mid;
		}
	double t = from_bits(hi);
	/* Everything strictly below T*, then fill up to B with samples whose
	 * completion is exactly T*, in worker order. */
	double below = hi > 0 ? from_bits(hi - 1) : t;
	int64_t sum = 0;
	for (size_t i = 0; i < s->n; i++) {
		batch[i] = hi == lo ? 0 : count_le(fu, i, s->hi[i], below);
		sum += batch[i];
	}
	for (size_t i = 0; i < s->n && sum < B; i++) {
		int64_t at = count_le(fu, i, s->hi[i], t);
		int64_t add = at - batch[i] < B - sum ? at - batch[i] : B - sum;
		batch[i] += add;
		sum += add;
	}
	s->bound_s = t - obs->now_s;
	*changed = true;
	return sum == B ? LBS_OK
			: lbs_error_set(err, LBS_EINTERNAL, "oracle: allocation sums to %lld, not %lld",
					(long long)sum, (long long)B);
}

static size_t oracle_vars(const void *state, lbs_policy_var *out, size_t max)
{
	const oracle_state *s = state;
	if (max < 1)
		return 0;
	out[0] = (lbs_policy_var){ "bound_s", s->bound_s };
	return 1;
}

const lbs_policy_ops lbs_policy_oracle = {
	.name = "oracle",
	.summary = "sees the coming iteration and picks the integer batches within caps that minimise "
		   "its compute time exactly (the lower bound for barrier-time policies)",
	.create = oracle_create,
	.plan = oracle_plan,
	.vars = oracle_vars,
	.destroy = oracle_destroy,
};
