/* SPDX-License-Identifier: GPL-3.0-or-later */
/* pack: sequence packing (doc/hybrid.md, "Balancing policies"). With
 * sequence lengths drawn per micro-batch ([lengths]), a micro-batch of
 * length ratio x (its tokens over the model's sequence length) costs
 * (1 - a) x + a x^2 of one of the model's length, a the attention core's
 * share of the compute (env->att_share): the linear operations grow with
 * the tokens, attention with their square. Before each step the step's
 * sequences (known to the data loader) are dealt to the micro-batch slots
 * so that the replicas' costs are as equal as the longest-processing-time
 * rule makes them (Graham, "Bounds on multiprocessing timing anomalies",
 * SIAM J. Appl. Math. 1969: within 4/3 of the best): the costliest
 * sequence first, each to the replica of least cost so far that has a
 * free slot (ties to the lower replica), each replica's slots filled in
 * that order. The replicas' micro-batch counts stay as they are (combine
 * with a replica-share policy by choosing the counts first); lengths are
 * whole sequences, one a micro-batch (micro_batch = 1), so the cost a
 * micro-batch carries is its sequence's.
 *
 * Example (tests/unit/test_hybrid_policy.c): two replicas of one stage, 2
 * micro-batches each, 3 s a micro-batch of the model's length, no
 * attention share, the step's lengths 1, 1, 0.5, 0.5 in the data's order:
 * the data's order gives replica 0 the two long ones (6 s) and replica 1
 * the short ones (3 s), a 6 s step. Packed: 1 to replica 0, 1 to replica
 * 1, 0.5 to replica 0 (a tie at 1, the lower), 0.5 to replica 1: slots
 * 1, 0.5, 1, 0.5, both replicas 4.5 s. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hybrid/policy.h"

typedef struct seq_cost {
	double cost;
	size_t k;        /* its place in the data's order */
} seq_cost;

typedef struct pack_state {
	lbs_hy_policy_env env;
	seq_cost *order; /* M: the sequences, costliest first */
	double *load, *out;
	int *filled;     /* d */
} pack_state;

static void pack_destroy(void *state)
{
	pack_state *s = state;
	if (!s)
		return;
	free(s->order);
	free(s->load);
	free(s->out);
	free(s->filled);
	free(s);
}

static lbs_status pack_create(const lbs_hy_policy_env *env, const lbs_kv *options, size_t n_options, void **state,
			      bool *lookahead, lbs_error *err)
{
	(void)options, (void)n_options;
	pack_state *s = lbs_calloc(1, sizeof *s, err);
	if (!s)
		return LBS_EINTERNAL;
	s->env = *env;
	*lookahead = false;
	size_t M = (size_t)env->total_m, d = (size_t)env->d;
	s->order = malloc(M * sizeof *s->order);
	s->out = malloc(M * sizeof *s->out);
	s->load = malloc(d * sizeof *s->load);
	s->filled = malloc(d * sizeof *s->filled);
	if (!s->order || !s->out || !s->load || !s->filled) {
		pack_destroy(s);
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	}
	*state = s;
	return LBS_OK;
}

/* Costliest first; ties to the earlier sequence (deterministic). */
static int by_cost_desc(const void *a, const void *b)
{
	const seq_cost *x = a, *y = b;
	if (x->cost != y->cost)
		return x->cost > y->cost ? -1 : 1;
	return x->k < y->k ? -1 : x->k > y->k;
}

static lbs_status pack_plan(void *state, const lbs_hy_observation *obs, lbs_hy_decision *dec, lbs_error *err)
{
	(void)obs, (void)err;
	pack_state *s = state;
	dec->changed = false;
	if (!dec->lengths)
		return LBS_OK;
	size_t M = (size_t)s->env.total_m, d = (size_t)s->env.d;
	double a = s->env.att_share;
	for (size_t k = 0; k < M; k++) {
		double x = dec->lengths[k];
		s->order[k] = (seq_cost){ (1 - a) * x + a * x * x, k };
	}
	qsort(s->order, M, sizeof *s->order, by_cost_desc);
	for (size_t r = 0; r < d; r++)
		s->load[r] = 0, s->filled[r] = 0;
	/* the first slot of each replica in the split in force */
	int *first = malloc((d + 1) * sizeof *first);
	if (!first)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	first[0] = 0;
	for (size_t r = 0; r < d; r++)
		first[r + 1] = first[r] + dec->m_of[r];
	for (size_t i = 0; i < M; i++) {
		size_t k = s->order[i].k, best = d;
		for (size_t r = 0; r < d; r++)
			if (s->filled[r] < dec->m_of[r] && (best == d || s->load[r] < s->load[best]))
				best = r;
		s->out[first[best] + s->filled[best]++] = dec->lengths[k];
		s->load[best] += s->order[i].cost;
	}
	free(first);
	dec->changed = memcmp(s->out, dec->lengths, M * sizeof *s->out) != 0;
	memcpy(dec->lengths, s->out, M * sizeof *s->out);
	return LBS_OK;
}

const lbs_hy_policy_ops lbs_hy_policy_pack = {
	.name = "pack",
	.summary = "sequence packing: the step's sequences dealt to the micro-batch slots, costliest first, "
		   "to the replica of least cost (linear and quadratic in the length)",
	.create = pack_create,
	.plan = pack_plan,
	.destroy = pack_destroy,
};
