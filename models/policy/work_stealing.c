/* SPDX-License-Identifier: GPL-3.0-or-later */
/* work-stealing: the dynamic baseline LB-BSP's authors argue against
 * (Chen et al., SoCC'20, section 2), modelled fairly. Each worker starts
 * with the even split and runs it as micro-batches of `chunk` samples, each
 * its own tensor, so each costs t(chunk) on the worker's cost model (a GPU
 * pays its flat, unsaturated time for every small chunk). A worker that has
 * started all its samples steals from the worker with the most samples not
 * yet started: `steal_chunks` chunks (at most half of what is left there,
 * at least one chunk), which it can start after `steal_latency`. Only
 * samples not started can move; a chunk in progress stays where it is. */
#include <stddef.h>
#include <stdlib.h>

#include "models/policy.h"

typedef struct ws_options {
	int64_t chunk;
	double steal_latency_s;
	int64_t steal_chunks;
} ws_options;

static const lbs_key_spec ws_keys[] = {
	{ "chunk", LBS_T_INT, offsetof(ws_options, chunk), "8", 1, 1e9, 0, NULL, NULL,
	  "samples per micro-batch: the unit of work that runs as one tensor and can be stolen" },
	{ "steal_latency", LBS_T_TIME, offsetof(ws_options, steal_latency_s), "1 ms", 0, 3600, 0, NULL,
	  NULL, "time from a steal request until the thief can start the stolen samples (request, "
		"transfer of the samples' indices or data)" },
	{ "steal_chunks", LBS_T_INT, offsetof(ws_options, steal_chunks), "1", 1, 1e9, 0, NULL, NULL,
	  "chunks taken per steal (never more than half of the victim's unstarted samples, "
	  "never less than one chunk)" },
};

typedef struct ws_state {
	ws_options opt;
	int64_t global_batch;
	size_t n;
	int64_t steals, stolen;
} ws_state;

static lbs_status ws_create(const lbs_policy_env *env, const lbs_kv *options, size_t n_options,
			    void **state, lbs_policy_info *info, lbs_error *err)
{
	ws_state *s = lbs_calloc(1, sizeof *s, err);
	if (!s)
		return LBS_EINTERNAL;
	lbs_status st = lbs_options_parse(ws_keys, sizeof ws_keys / sizeof ws_keys[0],
					  "policy.work-stealing", options, n_options, &s->opt, err);
	if (st != LBS_OK) {
		free(s);
		return st;
	}
	s->global_batch = env->global_batch;
	s->n = env->n_workers;
	info->micro_batch = s->opt.chunk;
	*state = s;
	return LBS_OK;
}

static lbs_status ws_plan(void *state, const lbs_observation *obs, int64_t *batch, bool *changed,
			  lbs_error *err)
{
	(void)err;
	ws_state *s = state;
	*changed = obs->iteration == 0;
	if (*changed)
		lbs_split_even(s->global_batch, s->n, batch);
	s->steals = s->stolen = 0; /* counted per iteration */
	return LBS_OK;
}

static bool ws_steal(void *state, size_t thief, const int64_t *pending, size_t n, lbs_steal *out)
{
	ws_state *s = state;
	size_t victim = n;
	for (size_t i = 0; i < n; i++)
		if (i != thief && pending[i] > 0 && (victim == n || pending[i] > pending[victim]))
			victim = i;
	if (victim == n)
		return false;
	int64_t want = s->opt.steal_chunks * s->opt.chunk;
	int64_t half = pending[victim] / 2;
	if (want > half)
		want = half;
	if (want < s->opt.chunk)
		want = s->opt.chunk;
	if (want > pending[victim])
		want = pending[victim];
	*out = (lbs_steal){ victim, want, s->opt.steal_latency_s };
	s->steals++;
	s->stolen += want;
	return true;
}

static size_t ws_vars(const void *state, lbs_policy_var *out, size_t max)
{
	const ws_state *s = state;
	if (max < 2)
		return 0;
	out[0] = (lbs_policy_var){ "steals", (double)s->steals };
	out[1] = (lbs_policy_var){ "stolen_samples", (double)s->stolen };
	return 2;
}

static void ws_destroy(void *state) { free(state); }

const lbs_policy_ops lbs_policy_work_stealing = {
	.name = "work-stealing",
	.summary = "even split run as micro-batches; an idle worker steals unstarted micro-batches from "
		   "the most loaded one, paying a steal latency",
	.options = ws_keys,
	.n_options = sizeof ws_keys / sizeof ws_keys[0],
	.options_size = sizeof(ws_options),
	.create = ws_create,
	.plan = ws_plan,
	.vars = ws_vars,
	.steal = ws_steal,
	.destroy = ws_destroy,
};
