/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lbbsp-cpu: LB-BSP's batch sizing for CPU clusters (Chen et al.,
 * "Semi-Dynamic Load Balancing", ACM SoCC 2020). On a CPU, an iteration's
 * time is linear in the batch, so balancing needs only each worker's speed
 * for the coming iteration: b_i proportional to the predicted speed v_i
 * (B * v_i / sum_j v_j, rounded by largest remainder, within memory caps).
 * Each worker has its own predictor (any of models/predict, by name; the
 * paper's is NARX), fed after every iteration with the speed it measured
 * (samples / compute time, waiting excluded) and the resource readings of
 * its machine, and asked at the barrier with the readings then available.
 * A prediction that is not a positive number is replaced by the last
 * measured speed. Iteration 0 is even. A worker given no samples (B < N, or
 * a share rounded to 0) has no new speed; after `probe_every` iterations in
 * a row at 0 it is given one sample, to be measured again.
 *
 * Re-sizing costs (lbsim's, off by default; doc/policies.md#re-sizing-costs):
 * with `quantum` q > 1 the split is rounded to multiples of q (lbs_quantise:
 * the remainder B mod q whole on the largest batch) and probes give q
 * samples. With `resize_cost` c > 0, a worker's predicted time for b samples
 * is b / v_i (v_i the speed the split used), and the new plan is adopted
 * only if its predicted iteration time, each worker whose batch changes
 * paying (1 + c) times its own, is shorter than that of the batches that
 * just ran; otherwise they are kept. E.g. v = 1000 and 800 samples/s,
 * batches 50/50 (62.5 ms), plan 56/44 (56 and 55 ms): with c = 0.1 the plan
 * costs 61.6 ms and is adopted (gain 0.9 ms); with c = 0.2, 67.2 ms, and
 * 50/50 is kept. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "models/predict.h"
#include "util/clock.h"

typedef struct lc_options {
	char predictor[LBS_VALUE_MAX];
	int64_t probe_every;
	double resize_cost;
	double resize_horizon;
	int64_t quantum;
} lc_options;

static const lbs_key_spec lc_keys[] = {
	{ "predictor", LBS_T_STRING, offsetof(lc_options, predictor), "narx", 0, 0, 0, NULL, NULL,
	  "speed predictor by name (last, ema, arima, narx, or a plugin's); its options go in "
	  "[predictor.NAME]" },
	{ "probe_every", LBS_T_INT, offsetof(lc_options, probe_every), LBS_PROBE_DEFAULT, 0, 1e9, 0, NULL,
	  NULL, "a worker given no samples for this many iterations in a row gets one, to be measured "
		"again (0: never)" },
	LBS_RESIZE_COST_KEY(lc_options, resize_cost),
	LBS_RESIZE_HORIZON_KEY(lc_options, resize_horizon),
	LBS_QUANTUM_KEY(lc_options, quantum),
};

typedef struct lc_state {
	lc_options opt;
	const lbs_predictor_ops *pred;
	void **ps;          /* one predictor per worker */
	size_t n, n_readings;
	int64_t global_batch;
	const int64_t *caps;
	double *predicted, *last, *weight;
	double *tau;           /* predicted seconds per sample, 1 / weight (resize_cost) */
	int64_t *current;      /* the batches that just ran (resize_cost) */
	int64_t kept;          /* plans declined for re-sizing costs */
	double gain_s;         /* the last plan's predicted gain, re-sizing paid (0: no change) */
	int64_t *idle;         /* iterations in a row at 0 samples */
	double *readings_copy; /* readings at the last barrier (seen with the speed measured now) */
	double learn_s, predict_s; /* real time spent teaching and asking the predictors */
	double learn_parallel_s;   /* learning's critical path, one predictor per core */
} lc_state;

static void lc_destroy(void *state)
{
	lc_state *s = state;
	if (!s)
		return;
	for (size_t i = 0; s->ps && i < s->n; i++)
		if (s->ps[i])
			s->pred->destroy(s->ps[i]);
	free(s->ps);
	free(s->predicted);
	free(s->last);
	free(s->weight);
	free(s->tau);
	free(s->current);
	free(s->idle);
	free(s->readings_copy);
	free(s);
}

static lbs_status lc_create(const lbs_policy_env *env, const lbs_kv *options, size_t n_options,
			    void **state, lbs_policy_info *info, lbs_error *err)
{
	(void)info;
	lc_state *s = lbs_calloc(1, sizeof *s, err);
	if (!s)
		return LBS_EINTERNAL;
	lbs_status st = lbs_options_parse(lc_keys, sizeof lc_keys / sizeof lc_keys[0], "policy.lbbsp-cpu",
					  options, n_options, &s->opt, err);
	s->n = env->n_workers;
	s->n_readings = env->n_readings;
	s->global_batch = env->global_batch;
	s->caps = env->max_batch;
	if (st == LBS_OK) /* a built-in, or a plugin the scenario loaded */
		s->pred = env->find_predictor ? env->find_predictor(env->section_ctx, s->opt.predictor)
					      : lbs_predictor_find(s->opt.predictor);
	if (st == LBS_OK)
		st = lbs_quantum_check(env, "policy.lbbsp-cpu", options, n_options, s->opt.quantum, err);
	if (st == LBS_OK && !s->pred) {
		char names[256];
		lbs_predictor_names(names, sizeof names);
		lbs_origin at = { "[policy.lbbsp-cpu]", 0 };
		for (size_t i = 0; i < n_options; i++)
			if (!strcmp(options[i].key, "predictor"))
				at = options[i].at;
		char label[512];
		lbs_origin_format(&at, "policy.lbbsp-cpu", "predictor", label, sizeof label);
		st = lbs_error_set(err, LBS_EINPUT, "%s: unknown predictor '%s' (known: %s)", label,
				   s->opt.predictor, names);
	}
	if (st == LBS_OK && (!(s->ps = lbs_calloc(s->n, sizeof *s->ps, err)) ||
			     !(s->predicted = lbs_calloc(s->n, sizeof(double), err)) ||
			     !(s->last = lbs_calloc(s->n, sizeof(double), err)) ||
			     !(s->weight = lbs_calloc(s->n, sizeof(double), err)) ||
			     !(s->tau = lbs_calloc(s->n, sizeof(double), err)) ||
			     !(s->current = lbs_calloc(s->n, sizeof(int64_t), err)) ||
			     !(s->idle = lbs_calloc(s->n, sizeof(int64_t), err)) ||
			     !(s->readings_copy = lbs_calloc(s->n * s->n_readings + 1, sizeof(double), err))))
		st = LBS_EINTERNAL;
	const lbs_kv *popt = NULL;
	size_t n_popt = 0;
	if (st == LBS_OK && env->section_options) {
		char section[LBS_VALUE_MAX + 16];
		lbs_fmt(section, sizeof section, "predictor.%s", s->pred->name);
		env->section_options(env->section_ctx, section, &popt, &n_popt);
	}
	for (size_t i = 0; st == LBS_OK && i < s->n; i++) {
		/* Each worker's predictor draws from its own seed. */
		uint64_t seed = env->seed * UINT64_C(0x9E3779B97F4A7C15) + i;
		st = s->pred->create(popt, n_popt, s->n_readings, seed, &s->ps[i], err);
		s->predicted[i] = NAN;
	}
	if (st != LBS_OK) {
		lc_destroy(s);
		return st;
	}
	*state = s;
	return LBS_OK;
}

static lbs_status lc_plan(void *state, const lbs_observation *obs, int64_t *batch, bool *changed,
			  lbs_error *err)
{
	lc_state *s = state;
	*changed = true;
	const size_t R = s->n_readings;
	double t0 = lbs_monotonic_s();
	if (obs->iteration > 0) {
		/* Teach each predictor the speed it just saw, with the readings
		 * that were current when that iteration started. */
		double slowest = 0, prev = t0;
		for (size_t i = 0; i < s->n; i++) {
			if (obs->batch[i] > 0 && obs->compute_s[i] > 0)
				s->last[i] = (double)obs->batch[i] / obs->compute_s[i];
			else if (obs->batch[i] > 0)
				continue;
			if (obs->batch[i] > 0) {
				s->pred->observe(s->ps[i], s->last[i], R ? s->readings_copy + i * R : NULL);
				/* one clock read per worker: its time since the last one */
				double now = lbs_monotonic_s();
				slowest = now - prev > slowest ? now - prev : slowest;
				prev = now;
			}
		}
		s->learn_parallel_s += slowest;
	}
	if (R && obs->readings)
		memcpy(s->readings_copy, obs->readings, s->n * R * sizeof(double));
	double t1 = lbs_monotonic_s();
	s->learn_s += t1 - t0;
	if (obs->iteration == 0) {
		lbs_split_even(s->global_batch, s->n, batch);
		if (!lbs_quantise(s->global_batch, s->n, s->opt.quantum, s->caps, batch))
			return lbs_error_set(err, LBS_EINPUT, "lbbsp-cpu: the memory caps cannot hold the "
					     "global batch in quanta");
		return LBS_OK;
	}
	/* Idle iterations are counted from the batches that just ran, before
	 * the split writes over them: obs->batch is the batch[] being filled,
	 * and counted after the split a probed worker looked idle still and
	 * was probed at every barrier, keeping the sample from a faster one. */
	lbs_probe_count(s->idle, s->n, obs->batch);
	memcpy(s->current, obs->batch, s->n * sizeof *s->current);
	for (size_t i = 0; i < s->n; i++) {
		double v = s->pred->predict(s->ps[i], R ? s->readings_copy + i * R : NULL);
		s->predicted[i] = v;
		s->weight[i] = isfinite(v) && v > 0 ? v : s->last[i];
	}
	bool ok = lbs_split_proportional(s->global_batch, s->n, s->weight, s->caps, batch) &&
		  lbs_quantise(s->global_batch, s->n, s->opt.quantum, s->caps, batch);
	if (ok && s->opt.resize_cost > 0) {
		for (size_t i = 0; i < s->n; i++)
			s->tau[i] = s->weight[i] > 0 ? 1.0 / s->weight[i] : INFINITY;
		bool same = !memcmp(batch, s->current, s->n * sizeof *batch);
		s->gain_s = same ? 0.0 : lbs_resize_gain(s->n, s->current, batch, s->tau, s->opt.resize_cost, s->opt.resize_horizon);
		if (!same && s->gain_s <= 0) { /* not worth re-sizing: keep the batches */
			memcpy(batch, s->current, s->n * sizeof *batch);
			s->kept++;
		}
	}
	if (ok)
		lbs_probe_give_n(batch, s->n, s->caps, s->idle, s->opt.probe_every, s->opt.quantum);
	if (ok && s->opt.resize_cost > 0)
		*changed = memcmp(batch, s->current, s->n * sizeof *batch) != 0;
	s->predict_s += lbs_monotonic_s() - t1;
	if (!ok)
		return lbs_error_set(err, LBS_EINPUT, "lbbsp-cpu: the predicted speeds cannot hold the "
				     "global batch within the memory caps");
	return LBS_OK;
}

static size_t lc_vars(const void *state, lbs_policy_var *out, size_t max)
{
	const lc_state *s = state;
	/* The predictors' counters, summed over workers. */
	lbs_policy_var sum[LBS_POLICY_VARS_MAX], one[LBS_POLICY_VARS_MAX];
	size_t n = 0;
	for (size_t i = 0; s->pred->vars && i < s->n; i++) {
		n = s->pred->vars(s->ps[i], one, max < LBS_POLICY_VARS_MAX ? max : LBS_POLICY_VARS_MAX);
		for (size_t k = 0; k < n; k++) {
			if (i == 0)
				sum[k] = one[k];
			else
				sum[k].value += one[k].value;
		}
	}
	memcpy(out, sum, n * sizeof *out);
	/* Where the decision time goes: teaching (training included) and
	 * predicting + splitting, cumulative real seconds; and learning's share
	 * had each worker's predictor learned on a core of its own at once. */
	if (n + 3 <= max) {
		out[n++] = (lbs_policy_var){ "learn_s", s->learn_s };
		out[n++] = (lbs_policy_var){ "predict_s", s->predict_s };
		out[n++] = (lbs_policy_var){ "learn_parallel_s", s->learn_parallel_s };
	}
	/* The re-sizing decision, after the rest so that it changes nothing
	 * there (it fits beside NARX's, ARX's and ARIMA's three counters). */
	if (s->opt.resize_cost > 0 && n + 2 <= max) {
		out[n++] = (lbs_policy_var){ "kept", (double)s->kept };
		out[n++] = (lbs_policy_var){ "gain_s", s->gain_s };
	}
	return n;
}

static const double *lc_predictions(const void *state) { return ((const lc_state *)state)->predicted; }

const lbs_policy_ops lbs_policy_lbbsp_cpu = {
	.name = "lbbsp-cpu",
	.summary = "LB-BSP for CPU clusters (Chen et al., SoCC'20): batch proportional to each worker's "
		   "predicted speed (NARX by default, any predictor by name)",
	.options = lc_keys,
	.n_options = sizeof lc_keys / sizeof lc_keys[0],
	.options_size = sizeof(lc_options),
	.create = lc_create,
	.plan = lc_plan,
	.vars = lc_vars,
	.predictions = lc_predictions,
	.destroy = lc_destroy,
};
