/* SPDX-License-Identifier: GPL-3.0-or-later */
/* dbs: Dynamic Batch Size (Ye et al., "DBS: Dynamic Batch Size for
 * Distributed Deep Neural Network Training", arXiv 2007.11831, 2020, and the
 * authors' code, github.com/Soptq/Dynamic_Load_Balance_DistributedDNN).
 *
 * Epoch 0 is even. At each epoch boundary worker i's share becomes
 * proportional to p_i / t_i, where p_i is its share in the epoch that ended
 * and t_i its compute time in it (time blocked in aggregation excluded);
 * only the last epoch counts. Batches are B * share, rounded by largest
 * remainder so they sum to B, or, with rounding = authors, as the authors'
 * code does: of the B - sum(floor) leftover samples only those whose
 * fractional part is at least 0.5 are handed out, so the realised global
 * batch can be smaller than B (e.g. B = 64, ideal [13.7, 16.5, 19.6, 14.2]
 * gives [14, 16, 20, 14] = 64, but [13.4, 16.4, 19.4, 14.8] gives
 * [13, 16, 19, 15] = 63). The dataset is re-partitioned so every worker runs
 * the same number of iterations per epoch: the run makes an epoch
 * floor(dataset_samples / realised global batch) iterations. A worker
 * never measured (B < N) or given no samples keeps its last speed (0 when
 * it has none); at a re-balancing after `probe_every` iterations or more at
 * 0 it is given one sample, to be measured again.
 *
 * Re-sizing costs (lbsim's, off by default; doc/policies.md#re-sizing-costs):
 * with `quantum` q > 1 the new batches are rounded to multiples of q
 * (lbs_quantise: the remainder whole on the largest batch) and probes give
 * q samples. With `resize_cost` c > 0, worker i's predicted time for b
 * samples is b * tau_i, tau_i its compute time per sample measured over the
 * interval that ended (t_i / (iterations * b_i), kept for a worker given
 * nothing), and the new batches are adopted only if the predicted iteration
 * time, each worker whose batch changes paying (1 + c) times its own, is
 * shorter than that of the current batches; otherwise those are kept for
 * the next interval. E.g. 15/15/15/15 at 1, 1, 1 and 1/3 ms a sample
 * (15 ms) and the plan 10/10/10/30 (10 ms each): with c = 0.4 it costs
 * 14 ms and is adopted; with c = 0.5, 15 ms, no gain, and 15 each is kept. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "models/policy.h"

typedef struct dbs_options {
	int rounding;      /* 0 largest-remainder, 1 authors */
	int64_t interval;  /* iterations between re-balancings; 0: one epoch */
	int64_t probe_every;
	double resize_cost;
	double resize_horizon;
	int64_t quantum;
} dbs_options;

static const lbs_key_spec dbs_keys[] = {
	{ "rounding", LBS_T_ENUM, offsetof(dbs_options, rounding), "largest-remainder", 0, 0, 0,
	  "largest-remainder|authors", NULL,
	  "`largest-remainder`: batches sum to B; `authors`: the authors' rounding, which hands out "
	  "leftover samples only to fractional parts >= 0.5 (the global batch may shrink)" },
	{ "interval", LBS_T_INT, offsetof(dbs_options, interval), "0", 0, 1e9, 0, NULL, NULL,
	  "iterations between re-balancings; 0 re-balances at each epoch boundary (the run must be "
	  "given in epochs)" },
	{ "probe_every", LBS_T_INT, offsetof(dbs_options, probe_every), LBS_PROBE_DEFAULT, 0, 1e9, 0, NULL,
	  NULL, "at a re-balancing, a worker given no samples for at least this many iterations gets "
		"one, to be measured again (0: never)" },
	LBS_RESIZE_COST_KEY(dbs_options, resize_cost),
	LBS_RESIZE_HORIZON_KEY(dbs_options, resize_horizon),
	LBS_QUANTUM_KEY(dbs_options, quantum),
};

typedef struct dbs_state {
	dbs_options opt;
	int64_t global_batch;
	size_t n;
	const int64_t *caps;
	double *share;      /* p_i */
	double *time_s;     /* t_i, summed over the current epoch */
	double *speed;      /* last measured p_i / t_i, kept for workers given nothing */
	double *tau;        /* last measured compute time per sample (INFINITY: none) */
	int64_t *current;   /* the batches before a re-balancing (resize_cost) */
	int64_t *idle;      /* iterations in a row at 0 samples */
	int64_t kept;       /* re-balancings declined for re-sizing costs */
	double gain_s;      /* the last re-balancing's predicted gain, re-sizing paid */
	int64_t since;      /* iterations summed into time_s */
	int64_t rebalances;
} dbs_state;

static void dbs_destroy(void *state)
{
	dbs_state *s = state;
	if (s) {
		free(s->share);
		free(s->time_s);
		free(s->speed);
		free(s->tau);
		free(s->current);
		free(s->idle);
		free(s);
	}
}

static lbs_status dbs_create(const lbs_policy_env *env, const lbs_kv *options, size_t n_options,
			     void **state, lbs_policy_info *info, lbs_error *err)
{
	dbs_state *s = lbs_calloc(1, sizeof *s, err);
	if (!s)
		return LBS_EINTERNAL;
	lbs_status st = lbs_options_parse(dbs_keys, sizeof dbs_keys / sizeof dbs_keys[0], "policy.dbs", options, n_options, &s->opt, err);
	s->global_batch = env->global_batch;
	s->n = env->n_workers;
	s->caps = env->max_batch;
	if (st == LBS_OK && !s->opt.interval && !env->iterations_per_epoch)
		st = lbs_error_set(err, LBS_EINPUT,
				   "[policy.dbs]: DBS re-balances at epoch boundaries: give the run as "
				   "[run] epochs and dataset_samples, or set [policy.dbs] interval");
	if (st == LBS_OK)
		st = lbs_quantum_check(env, "policy.dbs", options, n_options, s->opt.quantum, err);
	if (st == LBS_OK && (!(s->share = lbs_calloc(s->n, sizeof(double), err)) ||
			     !(s->tau = lbs_calloc(s->n, sizeof(double), err)) ||
			     !(s->current = lbs_calloc(s->n, sizeof(int64_t), err)) ||
			     !(s->time_s = lbs_calloc(s->n, sizeof(double), err)) ||
			     !(s->speed = lbs_calloc(s->n, sizeof(double), err)) ||
			     !(s->idle = lbs_calloc(s->n, sizeof(int64_t), err))))
		st = LBS_EINTERNAL;
	if (st != LBS_OK) {
		dbs_destroy(s);
		return st;
	}
	for (size_t i = 0; i < s->n; i++)
		s->tau[i] = INFINITY;
	info->shrinks_global_batch = s->opt.rounding == 1;
	*state = s;
	return LBS_OK;
}

/* The authors' rounding: floor, then +1 only for the largest fractional
 * parts that are >= 0.5, at most B - sum(floor) of them; within caps. */
static bool authors_round(const dbs_state *s, const double *q, int64_t *batch)
{
	int64_t sum = 0, left;
	for (size_t i = 0; i < s->n; i++) {
		batch[i] = (int64_t)floor(q[i]);
		if (batch[i] > s->caps[i])
			batch[i] = s->caps[i];
		sum += batch[i];
	}
	left = s->global_batch - sum;
	while (left > 0) {
		size_t best = s->n;
		double bestf = 0.5;
		for (size_t i = 0; i < s->n; i++) {
			double f = q[i] - floor(q[i]);
			if (batch[i] == (int64_t)floor(q[i]) && batch[i] < s->caps[i] && f >= bestf) {
				if (best == s->n || f > bestf) {
					best = i;
					bestf = f;
				}
			}
		}
		if (best == s->n)
			break;
		batch[best]++;
		left--;
	}
	return sum > 0;
}

static lbs_status dbs_plan(void *state, const lbs_observation *obs, int64_t *batch, bool *changed,
			   lbs_error *err)
{
	dbs_state *s = state;
	*changed = false;
	if (obs->iteration == 0) {
		lbs_split_even(s->global_batch, s->n, batch);
		if (!lbs_quantise(s->global_batch, s->n, s->opt.quantum, s->caps, batch))
			return lbs_error_set(err, LBS_EINPUT, "dbs: the memory caps cannot hold the global "
					     "batch in quanta");
		for (size_t i = 0; i < s->n; i++)
			s->share[i] = (double)batch[i] / (double)s->global_batch;
		*changed = true;
		return LBS_OK;
	}
	for (size_t i = 0; i < s->n; i++)
		s->time_s[i] += obs->compute_s[i];
	lbs_probe_count(s->idle, s->n, obs->batch);
	s->since++;
	bool boundary = s->opt.interval ? s->since == s->opt.interval : obs->epoch_start;
	if (!boundary)
		return LBS_OK;
	double total = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (s->share[i] > 0 && s->time_s[i] > 0) {
			s->speed[i] = s->share[i] / s->time_s[i];
			s->tau[i] = s->time_s[i] / ((double)s->since * (double)batch[i]);
		}
		total += s->speed[i];
	}
	memcpy(s->current, batch, s->n * sizeof *batch);
	if (!(total > 0))
		return lbs_error_set(err, LBS_EINPUT, "dbs: no worker made progress in the last epoch");
	double *q = lbs_calloc(s->n, sizeof *q, err);
	if (!q)
		return LBS_EINTERNAL;
	for (size_t i = 0; i < s->n; i++)
		q[i] = (double)s->global_batch * s->speed[i] / total;
	bool ok = s->opt.rounding == 1 ? authors_round(s, q, batch)
				       : lbs_split_proportional(s->global_batch, s->n, q, s->caps, batch);
	free(q);
	int64_t sum = 0;
	for (size_t i = 0; ok && i < s->n; i++)
		sum += batch[i];
	if (!ok || !lbs_quantise(sum, s->n, s->opt.quantum, s->caps, batch))
		return lbs_error_set(err, LBS_EINPUT, "dbs: the memory caps cannot hold the new shares");
	if (s->opt.resize_cost > 0) {
		bool same = !memcmp(batch, s->current, s->n * sizeof *batch);
		s->gain_s = same ? 0.0 : lbs_resize_gain(s->n, s->current, batch, s->tau, s->opt.resize_cost, s->opt.resize_horizon);
		if (!same && s->gain_s <= 0) { /* not worth re-sizing: keep the batches */
			memcpy(batch, s->current, s->n * sizeof *batch);
			s->kept++;
		}
	}
	lbs_probe_give_n(batch, s->n, s->caps, s->idle, s->opt.probe_every, s->opt.quantum);
	sum = 0;
	for (size_t i = 0; i < s->n; i++)
		sum += batch[i];
	for (size_t i = 0; i < s->n; i++) {
		s->share[i] = (double)batch[i] / (double)sum;
		s->time_s[i] = 0;
	}
	s->since = 0;
	s->rebalances++;
	*changed = s->opt.resize_cost > 0 ? memcmp(batch, s->current, s->n * sizeof *batch) != 0 : true;
	return LBS_OK;
}

static size_t dbs_vars(const void *state, lbs_policy_var *out, size_t max)
{
	const dbs_state *s = state;
	lbs_policy_var v[] = {
		{ "rebalances", (double)s->rebalances },
		{ "kept", (double)s->kept },
		{ "gain_s", s->gain_s },
	};
	return lbs_vars_copy(out, max, v, s->opt.resize_cost > 0 ? 3 : 1);
}

const lbs_policy_ops lbs_policy_dbs = {
	.name = "dbs",
	.summary = "DBS (Ye et al. 2020): at each epoch boundary, shares proportional to measured "
		   "throughput (share / compute time) of the last epoch",
	.options = dbs_keys,
	.n_options = sizeof dbs_keys / sizeof dbs_keys[0],
	.options_size = sizeof(dbs_options),
	.create = dbs_create,
	.plan = dbs_plan,
	.vars = dbs_vars,
	.destroy = dbs_destroy,
};
