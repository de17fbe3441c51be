/* SPDX-License-Identifier: GPL-3.0-or-later */
/* steps: an example hybrid policy plugin (doc/extending.md), LB-BSP's GPU
 * rule (Chen et al., SoCC 2020) for replicas: before each step the
 * straggler, the replica of the longest predicted time, gives `step`
 * micro-batches to the leader, the replica of the shortest, when the
 * leader would still finish first. A replica's predicted time for m
 * micro-batches is m times its measured time a micro-batch: the compute
 * time of its slowest stage over the micro-batches it ran.
 *
 * Example (example.ini): two replicas of one GPU, 3 micro-batches each,
 * the first at half speed, so 6 and 3 time units a micro-batch. Step 0
 * runs 3 / 3 (18 and 9); the straggler gives one: the leader's 4 x 3 = 12
 * is under 18, so 2 / 4 (12 and 12). Then 5 x 3 = 15 is not under 12:
 * 2 / 4 stays, as lbbsp's proportional split.
 *
 * Build it against an installed lbsim and run it:
 *   cc -shared -fPIC -O2 $(pkg-config --cflags lbsim) steps.c -o steps.so
 *   lbsim example.ini --plugins */
#include <stddef.h>
#include <stdlib.h>

#include "hybrid/policy.h"
#include "models/plugin.h"

const unsigned lbs_plugin_abi = LBS_PLUGIN_ABI;

typedef struct steps_options {
	int64_t step;
} steps_options;

static const lbs_key_spec steps_keys[] = {
	{ "step", LBS_T_INT, offsetof(steps_options, step), "1", 1, 1e6, 0, NULL, NULL,
	  "micro-batches the straggler gives the leader a step (whole quanta of the job)" },
};

typedef struct steps_state {
	steps_options opt;
	lbs_hy_policy_env env;
} steps_state;

static lbs_status steps_create(const lbs_hy_policy_env *env, const lbs_kv *options, size_t n_options, void **state,
			       bool *lookahead, lbs_error *err)
{
	steps_state *s = calloc(1, sizeof *s);
	if (!s)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	lbs_status st = lbs_options_parse(steps_keys, 1, "hybrid_policy.steps", options, n_options, &s->opt, err);
	if (st != LBS_OK) {
		free(s);
		return st;
	}
	s->env = *env;
	*lookahead = false;
	*state = s;
	return LBS_OK;
}

static lbs_status steps_plan(void *state, const lbs_hy_observation *obs, lbs_hy_decision *dec, lbs_error *err)
{
	(void)err;
	const steps_state *s = state;
	int d = s->env.d, p = s->env.p, q = s->env.quantum;
	int give = (int)((s->opt.step + q - 1) / q) * q;
	dec->changed = false;
	if (!obs->m_of)
		return LBS_OK;
	int slow = 0, lead = -1;
	double t_slow = -1, t_lead = 0, per_lead = 0;
	/* a replica's time a micro-batch: 1 / its speed (micro-batches a second) */
	for (int r = 0; r < d; r++) {
		double per = 1 / lbs_hy_replica_speed(obs->m_of[r], p, obs->compute_s + (size_t)r * (size_t)p);
		double t = dec->m_of[r] * per;
		if (t > t_slow)
			t_slow = t, slow = r;
	}
	for (int r = 0; r < d; r++) {
		double per = 1 / lbs_hy_replica_speed(obs->m_of[r], p, obs->compute_s + (size_t)r * (size_t)p);
		double t = dec->m_of[r] * per;
		if (r != slow && dec->m_of[r] + give <= s->env.max_m[r] && (lead < 0 || t < t_lead))
			lead = r, t_lead = t, per_lead = per;
	}
	if (lead < 0 || dec->m_of[slow] - give < q || (dec->m_of[lead] + give) * per_lead >= t_slow)
		return LBS_OK;
	dec->m_of[slow] -= give;
	dec->m_of[lead] += give;
	dec->changed = true;
	return LBS_OK;
}

static void steps_destroy(void *state)
{
	free(state);
}

const lbs_hy_policy_ops lbs_hy_policy_plugin = {
	.name = "steps",
	.summary = "LB-BSP's GPU rule for replicas: the straggler gives `step` micro-batches to the leader",
	.options = steps_keys,
	.n_options = 1,
	.options_size = sizeof(steps_options),
	.create = steps_create,
	.plan = steps_plan,
	.destroy = steps_destroy,
};
