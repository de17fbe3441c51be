/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lbbsp-gpu: LB-BSP's batch sizing for GPU clusters (Chen et al.,
 * "Semi-Dynamic Load Balancing: Efficient Distributed Learning in
 * Non-Dedicated Environments", ACM SoCC 2020). A GPU's batch time is flat
 * until the device saturates, so speed cannot be read off one measurement;
 * instead the batch sizes are searched. Over a monitoring window of
 * iterations each worker's mean compute time is measured; the straggler
 * (longest time) gives `step` samples to the leader (shortest time among
 * workers whose memory cap allows `step` more). When a worker's adjustment
 * reverses direction (it gave and now receives, or the reverse), the step is
 * halved and the window widened, so the search settles instead of
 * oscillating. No move is made while the slowest and fastest mean times are
 * within `tolerance` of each other. A worker at 0 samples took no time,
 * which says nothing of its speed, so it is never the leader; after
 * `probe_every` iterations in a row at 0 it is given one sample for one
 * iteration (outside the windows), kept only if it was not the slowest.
 *
 * Re-sizing costs (lbsim's, off by default; doc/policies.md#re-sizing-costs):
 * with `quantum` q > 1 the even split is rounded to multiples of q
 * (lbs_quantise: the remainder whole on the largest batch), the step is a
 * multiple of q (rounded down, at least q, halved the same way) and probes
 * give q samples, so moves keep every batch on the grid. With `resize_cost`
 * c > 0, a window's move is made only if it is predicted to pay: worker i's
 * time for b samples is b * tau_i, tau_i its mean compute time over the
 * window per sample of its batch, and the straggler and the leader, whose
 * batches change, pay (1 + c) times theirs; the move is made only if that
 * iteration time is shorter than the window's slowest mean. A declined
 * move changes nothing, step and window included. E.g. straggler 40
 * samples at 100 ms, leader 40 at 60 ms, step 8: 32 and 48 samples take 80
 * and 72 ms; with c = 0.2, 96 ms and the move is made; with c = 0.25,
 * 100 ms, no gain, and it is not. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "models/policy.h"

typedef struct lg_options {
	int64_t window;
	int64_t step;
	double tolerance;
	double window_growth;
	int64_t max_window;
	int64_t probe_every;
	double resize_cost;
	double resize_horizon;
	int64_t quantum;
} lg_options;

static const lbs_key_spec lg_keys[] = {
	{ "window", LBS_T_INT, offsetof(lg_options, window), "5", 1, 1e6, 0, NULL, NULL,
	  "iterations in the first monitoring window" },
	{ "step", LBS_T_INT, offsetof(lg_options, step), "0", 0, 1e9, 0, NULL, NULL,
	  "samples moved per adjustment at first; 0 means max(1, global_batch / (4 * workers))" },
	{ "tolerance", LBS_T_REAL, offsetof(lg_options, tolerance), "5%", 0, 1, 0, NULL, NULL,
	  "no move while (slowest - fastest) / slowest mean compute time is at most this" },
	{ "window_growth", LBS_T_REAL, offsetof(lg_options, window_growth), "2", 1, 100, 0, NULL, NULL,
	  "factor the window grows by when an adjustment reverses direction" },
	{ "max_window", LBS_T_INT, offsetof(lg_options, max_window), "100", 1, 1e6, 0, NULL, NULL,
	  "the window never grows beyond this many iterations" },
	{ "probe_every", LBS_T_INT, offsetof(lg_options, probe_every), LBS_PROBE_DEFAULT, 0, 1e9, 0, NULL,
	  NULL, "a worker given no samples for this many iterations in a row gets one for one iteration, "
		"kept only if it is not then the slowest (0: never)" },
	LBS_RESIZE_COST_KEY(lg_options, resize_cost),
	LBS_RESIZE_HORIZON_KEY(lg_options, resize_horizon),
	LBS_QUANTUM_KEY(lg_options, quantum),
};

typedef struct lg_state {
	lg_options opt;
	size_t n;
	const int64_t *caps;
	int64_t global_batch;
	int64_t window, step, in_window, moves, reversals;
	int64_t kept;       /* moves declined for re-sizing costs */
	double *sum_s;      /* compute time summed over the window */
	double *tau;        /* mean compute time per sample over the window (resize_cost) */
	int64_t *moved;     /* the batches after a proposed move (resize_cost) */
	signed char *last;  /* +1 received, -1 gave, 0 not yet moved */
	int64_t *idle;      /* iterations in a row at 0 samples */
	int64_t *before;    /* the batches before a probe; probing: whether one is out */
	bool probing;
	int64_t probes;
	double imbalance;   /* (slowest - fastest) / slowest at the last window end */
	long straggler, leader;
} lg_state;

static void lg_destroy(void *state)
{
	lg_state *s = state;
	if (s) {
		free(s->sum_s);
		free(s->tau);
		free(s->moved);
		free(s->last);
		free(s->idle);
		free(s->before);
		free(s);
	}
}

static lbs_status lg_create(const lbs_policy_env *env, const lbs_kv *options, size_t n_options,
			    void **state, lbs_policy_info *info, lbs_error *err)
{
	(void)info;
	lg_state *s = lbs_calloc(1, sizeof *s, err);
	if (!s)
		return LBS_EINTERNAL;
	lbs_status st = lbs_options_parse(lg_keys, sizeof lg_keys / sizeof lg_keys[0], "policy.lbbsp-gpu",
					  options, n_options, &s->opt, err);
	s->n = env->n_workers;
	s->caps = env->max_batch;
	s->global_batch = env->global_batch;
	s->window = s->opt.window;
	s->step = s->opt.step ? s->opt.step : env->global_batch / (4 * (int64_t)env->n_workers);
	if (st == LBS_OK) { /* whole quanta */
		s->step = s->step / s->opt.quantum * s->opt.quantum;
		s->step = s->step < s->opt.quantum ? s->opt.quantum : s->step;
		st = lbs_quantum_check(env, "policy.lbbsp-gpu", options, n_options, s->opt.quantum, err);
	}
	s->straggler = s->leader = -1;
	if (st == LBS_OK && (!(s->sum_s = lbs_calloc(s->n, sizeof(double), err)) ||
			     !(s->tau = lbs_calloc(s->n, sizeof(double), err)) ||
			     !(s->moved = lbs_calloc(s->n, sizeof(int64_t), err)) ||
			     !(s->last = lbs_calloc(s->n, 1, err)) ||
			     !(s->idle = lbs_calloc(s->n, sizeof(int64_t), err)) ||
			     !(s->before = lbs_calloc(s->n, sizeof(int64_t), err))))
		st = LBS_EINTERNAL;
	if (st != LBS_OK) {
		lg_destroy(s);
		return st;
	}
	*state = s;
	return LBS_OK;
}

static lbs_status lg_plan(void *state, const lbs_observation *obs, int64_t *batch, bool *changed,
			  lbs_error *err)
{
	lg_state *s = state;
	*changed = false;
	if (obs->iteration == 0) {
		lbs_split_even(s->global_batch, s->n, batch);
		if (!lbs_quantise(s->global_batch, s->n, s->opt.quantum, s->caps, batch))
			return lbs_error_set(err, LBS_EINPUT, "lbbsp-gpu: the memory caps cannot hold the "
					     "global batch in quanta");
		*changed = true;
		return LBS_OK;
	}
	lbs_probe_count(s->idle, s->n, obs->batch);
	if (s->probing) {
		/* The probe's iteration is out of the window: keep the sample where
		 * it went unless its worker was the slowest. */
		s->probing = false;
		size_t slow = 0;
		for (size_t i = 1; i < s->n; i++)
			if (obs->compute_s[i] > obs->compute_s[slow])
				slow = i;
		if (s->before[slow] == 0 && batch[slow] > 0) {
			memcpy(batch, s->before, s->n * sizeof *batch);
			*changed = true;
		}
		return LBS_OK;
	}
	memcpy(s->before, batch, s->n * sizeof *batch);
	if (lbs_probe_give_n(batch, s->n, s->caps, s->idle, s->opt.probe_every, s->opt.quantum)) {
		s->probing = *changed = true;
		s->probes++;
		return LBS_OK;
	}
	for (size_t i = 0; i < s->n; i++)
		s->sum_s[i] += obs->compute_s[i];
	if (++s->in_window < s->window)
		return LBS_OK;
	/* Window complete: compare mean compute times. A worker given no
	 * samples took no time, which says nothing of its speed: it is no
	 * leader (a probe measures it). */
	size_t slow = 0, fast = s->n;
	for (size_t i = 1; i < s->n; i++)
		if (s->sum_s[i] > s->sum_s[slow])
			slow = i;
	double slowest = s->sum_s[slow], fastest = slowest;
	for (size_t i = 0; i < s->n; i++) {
		if (batch[i] == 0)
			continue;
		fastest = s->sum_s[i] < fastest ? s->sum_s[i] : fastest;
		if (i != slow && batch[i] + s->step <= s->caps[i] &&
		    (fast == s->n || s->sum_s[i] < s->sum_s[fast]))
			fast = i;
	}
	s->imbalance = slowest > 0 ? (slowest - fastest) / slowest : 0.0;
	s->straggler = (long)slow;
	s->leader = fast == s->n ? -1 : (long)fast;
	for (size_t i = 0; i < s->n; i++) {
		s->tau[i] = batch[i] > 0 ? s->sum_s[i] / ((double)s->in_window * (double)batch[i]) : 0.0;
		s->sum_s[i] = 0;
	}
	s->in_window = 0;
	if (s->imbalance <= s->opt.tolerance || fast == s->n || batch[slow] == 0)
		return LBS_OK;
	int64_t step = s->step, window = s->window;
	bool reversed = s->last[slow] == +1 || s->last[fast] == -1;
	if (reversed) {
		/* Direction reversed: we overshot. Finer steps (whole quanta),
		 * longer look. */
		const int64_t q = s->opt.quantum;
		step = step / 2 / q * q;
		step = step < q ? q : step;
		double w = (double)window * s->opt.window_growth;
		window = w > (double)s->opt.max_window ? s->opt.max_window : (int64_t)w;
	}
	int64_t k = step < batch[slow] ? step : batch[slow];
	if (s->opt.resize_cost > 0) {
		memcpy(s->moved, batch, s->n * sizeof *batch);
		s->moved[slow] -= k;
		s->moved[fast] += k;
		if (!(lbs_resize_gain(s->n, batch, s->moved, s->tau, s->opt.resize_cost, s->opt.resize_horizon) > 0)) {
			s->kept++; /* not worth re-sizing: nothing moves, nothing is learnt */
			return LBS_OK;
		}
	}
	s->step = step;
	s->window = window;
	s->reversals += reversed;
	batch[slow] -= k;
	batch[fast] += k;
	s->last[slow] = -1;
	s->last[fast] = +1;
	s->moves++;
	*changed = true;
	return LBS_OK;
}

static size_t lg_vars(const void *state, lbs_policy_var *out, size_t max)
{
	const lg_state *s = state;
	lbs_policy_var v[] = {
		{ "step", (double)s->step },       { "window", (double)s->window },
		{ "imbalance", s->imbalance },     { "straggler", (double)s->straggler },
		{ "leader", (double)s->leader },   { "moves", (double)s->moves },
		{ "reversals", (double)s->reversals }, { "kept", (double)s->kept },
	};
	/* kept only with resize_cost > 0; its predicted gain would be a ninth
	 * variable, over LBS_POLICY_VARS_MAX. */
	return lbs_vars_copy(out, max, v, sizeof v / sizeof v[0] - (s->opt.resize_cost > 0 ? 0 : 1));
}

const lbs_policy_ops lbs_policy_lbbsp_gpu = {
	.name = "lbbsp-gpu",
	.summary = "LB-BSP for GPU clusters (Chen et al., SoCC'20): over a window, the straggler gives "
		   "a step of samples to the leader; reversals halve the step and widen the window",
	.options = lg_keys,
	.n_options = sizeof lg_keys / sizeof lg_keys[0],
	.options_size = sizeof(lg_options),
	.create = lg_create,
	.plan = lg_plan,
	.vars = lg_vars,
	.destroy = lg_destroy,
};
