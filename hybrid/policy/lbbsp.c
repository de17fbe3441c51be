/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lbbsp: LB-BSP's semi-dynamic balancing (Chen et al., "Semi-Dynamic Load
 * Balancing: Efficient Distributed Learning in Non-Dedicated
 * Environments", SoCC 2020) generalised to replicas: before every step
 * (every `every` steps), each replica's speed in micro-batches a second is
 * measured over the step that ended, m_r over the compute time of its
 * slowest stage (a pipeline runs at its bottleneck's pace), fed to the
 * replica's predictor (models/predict.h, `predictor`), and the global batch
 * of M micro-batches is split in proportion to the predicted speeds, within
 * each replica's memory (lbs_hy_split). LB-BSP's rule b_i = B v_i / sum v_j
 * with a replica for a worker and micro-batches for samples.
 *
 * Example: two replicas of one stage, forward 1 s and backward 2 s a
 * micro-batch, the first at availability 0.5, M = 6: the even split's step
 * measures 3 / 18 and 3 / 9 micro-batches a second, so the next step runs
 * 2 and 4, and both replicas take 12 s (tests/unit/test_hybrid_policy.c).
 *
 * The measurement includes the bubble-free compute only, so a replica's
 * speed does not depend on its share; with p > 1 the pipeline's fill and
 * drain ((p - 1) slots) make a replica's step (m_r + p - 1) slots, so the
 * proportional split is not the best one when replicas differ a lot: the
 * oracle shows by how much. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hybrid/policy.h"
#include "models/predict.h"

typedef struct lbbsp_options {
	char predictor[LBS_VALUE_MAX];
} lbbsp_options;

static const lbs_key_spec lbbsp_keys[] = {
	{ "predictor", LBS_T_STRING, offsetof(lbbsp_options, predictor), "last", 0, 0, 0, NULL, NULL,
	  "the speed predictor of each replica, a name of doc/predictors.md with its default options "
	  "(`last`: the speed of the step that ended)" },
};

typedef struct lbbsp_state {
	lbbsp_options opt;
	lbs_hy_policy_env env;
	const lbs_predictor_ops *pred;
	void **ps;
	double *speed;
} lbbsp_state;

static void lbbsp_destroy(void *state)
{
	lbbsp_state *s = state;
	if (!s)
		return;
	for (int r = 0; s->ps && r < s->env.d; r++)
		if (s->ps[r])
			s->pred->destroy(s->ps[r]);
	free(s->ps);
	free(s->speed);
	free(s);
}

static lbs_status lbbsp_create(const lbs_hy_policy_env *env, const lbs_kv *options, size_t n_options, void **state,
			       bool *lookahead, lbs_error *err)
{
	lbbsp_state *s = lbs_calloc(1, sizeof *s, err);
	if (!s)
		return LBS_EINTERNAL;
	s->env = *env;
	*lookahead = false;
	lbs_status st = lbs_options_parse(lbbsp_keys, 1, "hybrid_policy.lbbsp", options, n_options, &s->opt, err);
	if (st == LBS_OK && !(s->pred = lbs_predictor_find(s->opt.predictor))) {
		char names[256];
		lbs_predictor_names(names, sizeof names);
		const lbs_origin *at = NULL;
		for (size_t i = 0; i < n_options; i++)
			if (!strcmp(options[i].key, "predictor"))
				at = &options[i].at;
		st = lbs_error_set(err, LBS_EINPUT, "%s:%d: [hybrid_policy.lbbsp] predictor: '%s' is none of %s",
				   at ? at->file : "?", at ? at->line : 0, s->opt.predictor, names);
	}
	s->ps = st == LBS_OK ? calloc((size_t)env->d, sizeof *s->ps) : NULL;
	s->speed = st == LBS_OK ? calloc((size_t)env->d, sizeof *s->speed) : NULL;
	if (st == LBS_OK && (!s->ps || !s->speed))
		st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	for (int r = 0; st == LBS_OK && r < env->d; r++)
		st = s->pred->create(NULL, 0, 0, env->seed + (uint64_t)r, &s->ps[r], err);
	if (st != LBS_OK) {
		lbbsp_destroy(s);
		return st;
	}
	*state = s;
	return LBS_OK;
}

static lbs_status lbbsp_plan(void *state, const lbs_hy_observation *obs, lbs_hy_decision *dec, lbs_error *err)
{
	int *m_of = dec->m_of;
	bool *changed = &dec->changed;
	lbbsp_state *s = state;
	int d = s->env.d, p = s->env.p;
	*changed = false;
	if (!obs->m_of)
		return LBS_OK; /* nothing measured yet: the even split */
	for (int r = 0; r < d; r++) {
		double v = lbs_hy_replica_speed(obs->m_of[r], p, obs->compute_s + (size_t)r * (size_t)p);
		s->pred->observe(s->ps[r], v, NULL);
		s->speed[r] = s->pred->predict(s->ps[r], NULL);
		if (!(s->speed[r] > 0))
			return LBS_OK; /* a replica without a prediction: keep the split */
	}
	if (s->env.every > 1 && obs->step % s->env.every)
		return LBS_OK;
	return lbs_hy_resplit_by_speed(&s->env, s->speed, m_of, changed, err);
}

const lbs_hy_policy_ops lbs_hy_policy_lbbsp = {
	.name = "lbbsp",
	.summary = "LB-BSP per step (SoCC'20): micro-batches in proportion to each replica's predicted speed",
	.options = lbbsp_keys,
	.n_options = 1,
	.options_size = sizeof(lbbsp_options),
	.create = lbbsp_create,
	.plan = lbbsp_plan,
	.destroy = lbbsp_destroy,
};
