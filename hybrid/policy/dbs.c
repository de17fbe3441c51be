/* SPDX-License-Identifier: GPL-3.0-or-later */
/* dbs: DBS's epoch-level balancing (Ye et al., "DBS: Dynamic Batch Size for
 * Distributed Deep Neural Network Training", arXiv 2007.11831, 2020)
 * generalised to replicas. The first epoch is even; at each epoch boundary
 * (every `[hybrid_policy] every` steps instead when that is > 0) replica
 * r's share becomes proportional to its throughput over the interval that
 * ended, the micro-batches it ran over the compute time of its slowest
 * stage, both summed over the interval (only the last interval counts, as
 * in the authors' code); integers by largest remainder within the memory
 * (lbs_hy_split), so the global batch is kept. The data set is
 * re-partitioned so that every replica runs the same number of steps an
 * epoch: replica r reads m_r / M of it.
 *
 * Example: replicas at 1/6 and 1/3 micro-batches a second (one stage,
 * 3 s a micro-batch, the first at availability 0.5), M = 6: after the even
 * epoch, 2 and 4. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hybrid/policy.h"

typedef struct dbs_state {
	lbs_hy_policy_env env;
	double *mb, *time_s, *speed;
	int64_t since;
} dbs_state;

static void dbs_destroy(void *state)
{
	dbs_state *s = state;
	if (!s)
		return;
	free(s->mb);
	free(s->time_s);
	free(s->speed);
	free(s);
}

static lbs_status dbs_create(const lbs_hy_policy_env *env, const lbs_kv *options, size_t n_options, void **state,
			     bool *lookahead, lbs_error *err)
{
	(void)options, (void)n_options;
	dbs_state *s = lbs_calloc(1, sizeof *s, err);
	if (!s)
		return LBS_EINTERNAL;
	s->env = *env;
	*lookahead = false;
	s->mb = calloc((size_t)env->d, sizeof *s->mb);
	s->time_s = calloc((size_t)env->d, sizeof *s->time_s);
	s->speed = calloc((size_t)env->d, sizeof *s->speed);
	if (!s->mb || !s->time_s || !s->speed) {
		dbs_destroy(s);
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	}
	*state = s;
	return LBS_OK;
}

static lbs_status dbs_plan(void *state, const lbs_hy_observation *obs, lbs_hy_decision *dec, lbs_error *err)
{
	int *m_of = dec->m_of;
	bool *changed = &dec->changed;
	dbs_state *s = state;
	int d = s->env.d, p = s->env.p;
	*changed = false;
	if (!obs->m_of)
		return LBS_OK;
	for (int r = 0; r < d; r++) {
		double worst = 0;
		for (int q = 0; q < p; q++)
			worst = fmax(worst, obs->compute_s[(size_t)r * (size_t)p + (size_t)q]);
		s->mb[r] += obs->m_of[r];
		s->time_s[r] += worst;
	}
	s->since++;
	bool boundary = s->env.every > 0 ? obs->step % s->env.every == 0 : obs->epoch_start;
	if (!boundary)
		return LBS_OK;
	for (int r = 0; r < d; r++) {
		s->speed[r] = s->time_s[r] > 0 ? s->mb[r] / s->time_s[r] : NAN;
		s->mb[r] = s->time_s[r] = 0;
	}
	s->since = 0;
	return lbs_hy_resplit_by_speed(&s->env, s->speed, m_of, changed, err);
}

const lbs_hy_policy_ops lbs_hy_policy_dbs = {
	.name = "dbs",
	.summary = "DBS per epoch (arXiv 2007.11831): micro-batches in proportion to each replica's throughput "
		   "over the epoch that ended",
	.create = dbs_create,
	.plan = dbs_plan,
	.destroy = dbs_destroy,
};
