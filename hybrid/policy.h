/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Balancing policies for hybrid-parallel jobs (doc/hybrid.md, "Balancing
 * policies"): the data-parallel policies' contract (models/policy.h) for a
 * job of d replicas of p pipeline stages.
 *
 * Two things of a hybrid job can be re-balanced: a data-parallel replica (a
 * whole pipeline) can run more or fewer micro-batches, and a pipeline stage
 * can hold more or fewer transformer blocks. A policy is created from what
 * the job looks like and its options, and asked before each step for a
 * decision (lbs_hy_decision):
 *  (a) the micro-batches of each replica: integers >= quantum, multiples of
 *      it, each within the replica's memory (max_m), summing to the global
 *      batch of M micro-batches (the global batch is kept);
 *  (b) the blocks of each stage (the same in every replica): integers >= 1
 *      within max_blocks, summing to env->n_blocks; only when the job can
 *      re-split (dec->blocks is NULL otherwise). With v chunks a stage the
 *      count is each chunk's (a stage's chunks stay alike, env->n_blocks
 *      is the model's blocks over v, and a unit moved is a block on each
 *      chunk). A re-split
 *      costs the time to move the blocks' weights and optimizer states
 *      over the links between the stages, paid before the step
 *      (lbs_hy_resplit_s), during which nothing computes;
 *  (c) with drawn sequence lengths ([lengths]), which of the step's
 *      sequences each micro-batch slot runs: a permutation of the step's
 *      lengths, written replica by replica in the split in force (sequence
 *      packing; the data loader knows the lengths before the step, so this
 *      is no look-ahead);
 *  (d) the groups whose node is replaced by a spare: from the next step
 *      on the group runs at its healthiest level (its node type's, without
 *      the episode), after a pause of restart_s for the checkpoint-restart
 *      the policy states (its own estimate; the engine charges it).
 * It sees only what a real system could see: each group's measured
 * compute time and the micro-batches and blocks of the last step. Only an
 * oracle may ask for look-ahead: the length of the coming step under any
 * split, simulated with every group's true availability. How often it
 * decides is its own (the `[hybrid_policy] every` key: steps between
 * decisions, 0 the policy's own rhythm; DBS's is the epoch of
 * `steps_per_epoch` steps).
 *
 * Gradients stay correct as in DBS: replica r computes the mean gradient
 * of its m_r micro-batches and scales it by m_r / M before the
 * data-parallel reduction sums the replicas, so the sum is the mean over
 * the global batch whatever the split (doc/hybrid.md).
 *
 * The wall time of each decision (CPU seconds, util/clock.h) is recorded
 * beside the step, as for data-parallel policies.
 *
 * Adding a policy is one file plus one line in hybrid/policy.c's registry;
 * or, built apart from lbsim, a plugin (doc/extending.md): a shared object
 * that includes models/plugin.h and this header and defines
 *
 *   const unsigned lbs_plugin_abi = LBS_PLUGIN_ABI;
 *   const lbs_hy_policy_ops lbs_hy_policy_plugin = { .name = "mine", ... };
 *
 * loaded by `[hybrid_policy] plugin = mine.so` with `--plugins`. */
#ifndef LBS_HYBRID_POLICY_H
#define LBS_HYBRID_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "models/policy.h"
#include "util/error.h"
#include "util/keys.h"

/* What a policy may know about the job when it is created. */
typedef struct lbs_hy_policy_env {
	int d, p;                  /* replicas, stages */
	int total_m;               /* M: micro-batches a step over all replicas */
	int n_blocks;              /* the model's blocks; 0: the job cannot re-split */
	const int *max_blocks;     /* p: the most blocks stage s's memory holds (NULL: n_blocks 0) */
	double blk_move_s;         /* seconds to move one block over the slowest stage link (hint) */
	double att_share;          /* the attention core's share of the compute at the model's length
				      (a micro-batch of length ratio x costs (1 - a) x + a x^2 of one at 1) */
	int quantum;               /* every count is a multiple of it (interleaving: p), else 1 */
	const int64_t *max_m;      /* d: the most micro-batches replica r's memory holds */
	int64_t every;             /* steps between decisions; 0: once an epoch */
	int64_t steps_per_epoch;   /* M micro-batches a step: the steps of one pass over the data */
	uint64_t seed;
} lbs_hy_policy_env;

/* Look-ahead (an oracle only): the length of the coming step were the
 * replicas to run m_of[] micro-batches, with every group's true
 * availability from now on. */
typedef struct lbs_hy_future {
	lbs_status (*step_s)(void *ctx, const int *m_of, double *step_s, lbs_error *err);
	/* NULL unless the replicas meet only at their gradient reductions
	 * after their pipelines drain (d > 1, no overlap): then a step of
	 * split m_of takes max_r g_r(m_of[r]) + rest_s exactly, and this
	 * fills g[r] = g_r(m), every replica at m micro-batches (lbsim's
	 * graph: each stage's reduction chain starts at its replicas' last
	 * arrival, so g_r(m) = max_s (arrival of (r, s) + the chain of s)). */
	lbs_status (*replica_s)(void *ctx, int m, double *g, double *rest_s, lbs_error *err);
	void *ctx;
} lbs_hy_future;

/* What a policy sees before a step, about the one that just ended. */
typedef struct lbs_hy_observation {
	int64_t step;              /* the step about to start (0 first) */
	bool epoch_start;          /* it is the first of its epoch */
	double now_s;
	const int *m_of;           /* d: micro-batches each replica ran (NULL at step 0) */
	const int *blocks;         /* p: the blocks of each stage (NULL: cannot re-split) */
	const double *lengths;     /* M: the coming step's sequences over the model's length, in the
				      data's order (NULL: every one at the model's length) */
	const double *compute_s;   /* d x p: each group's compute time in it, its
				      tensor-parallel collectives included, waiting
				      and bubbles excluded (NULL at step 0) */
	double step_s;             /* its length (0 at step 0) */
	const lbs_hy_future *future; /* NULL unless the policy asked for it */
} lbs_hy_observation;

/* A decision: in, the split in force; out, the next one. */
typedef struct lbs_hy_decision {
	int *m_of;                 /* d */
	int *blocks;               /* p, or NULL: the job cannot re-split */
	double *lengths;           /* M, or NULL (no drawn lengths): in, the data's order (each replica
				      its next m_r, replica by replica); out, the slots' lengths, a
				      permutation of them */
	bool *replace;             /* d x p, all false in: set a group's to replace its node (NULL: the
				      job cannot, its nodes replay traces) */
	double restart_s;          /* with a replacement: the checkpoint-restart pause, seconds */
	bool changed;              /* set when any of them changed */
} lbs_hy_decision;

typedef struct lbs_hy_policy_ops {
	const char *name;
	const char *summary;
	const lbs_key_spec *options; /* keys it accepts in [hybrid_policy.NAME] */
	size_t n_options;
	size_t options_size;
	/* Validates options and makes the state; *lookahead: it wants
	 * obs->future (only an oracle may). */
	lbs_status (*create)(const lbs_hy_policy_env *env, const lbs_kv *options, size_t n_options, void **state,
			     bool *lookahead, lbs_error *err);
	/* Fills dec for the coming step (it holds the current split) and sets
	 * dec->changed; the run checks the sums, the caps and the quantum. */
	lbs_status (*plan)(void *state, const lbs_hy_observation *obs, lbs_hy_decision *dec, lbs_error *err);
	void (*destroy)(void *state);
} lbs_hy_policy_ops;

extern const lbs_hy_policy_ops lbs_hy_policy_static;
extern const lbs_hy_policy_ops lbs_hy_policy_lbbsp;
extern const lbs_hy_policy_ops lbs_hy_policy_dbs;
extern const lbs_hy_policy_ops lbs_hy_policy_oracle;
extern const lbs_hy_policy_ops lbs_hy_policy_resplit;
extern const lbs_hy_policy_ops lbs_hy_policy_ladder;
extern const lbs_hy_policy_ops lbs_hy_policy_pack;

/* A plugin's table (doc/extending.md). */
#define LBS_HY_POLICY_PLUGIN_SYMBOL "lbs_hy_policy_plugin"
extern const lbs_hy_policy_ops lbs_hy_policy_plugin;

extern const lbs_hy_policy_ops *const lbs_hy_policies[];
const lbs_hy_policy_ops *lbs_hy_policy_find(const char *name);
void lbs_hy_policy_names(char *buf, size_t len);
/* Markdown reference of every hybrid policy and its options. */
void lbs_hy_policy_document(FILE *out);

/* Splits M micro-batches over d replicas in proportion to speed[r] > 0
 * (micro-batches a second), each at least `quantum` (a replica cannot run
 * none: it holds its stages' parameters) and at most max_m[r], in
 * multiples of `quantum`: lbs_split_proportional over the M / quantum
 * quanta less the d held back (water-filling within the caps, then largest
 * remainder, ties to the lower index). Returns false when the caps cannot
 * hold M or a speed is not a positive number. */
bool lbs_hy_split(int M, int d, int quantum, const double *speed, const int64_t *max_m, int *m_of);
/* m_of (env->d counts) re-split by speed under env's total, quantum and
 * caps, where lbs_hy_split can: *changed says whether a count moved;
 * otherwise m_of is kept. */
lbs_status lbs_hy_resplit_by_speed(const lbs_hy_policy_env *env, const double *speed, int *m_of, bool *changed,
				   lbs_error *err);

/* A replica's measured speed, micro-batches a second: m_r over the compute
 * time of its slowest stage (the pipeline runs at its bottleneck's pace). */
double lbs_hy_replica_speed(int m_r, int p, const double *compute_s_of_replica);

/* The blocks of p stages of per-block times cost[s] (seconds a block a
 * micro-batch) that minimise the slowest stage's time, max_s b_s cost_s,
 * with sum b_s = n, 1 <= b_s <= max_b[s] (NULL: n): every stage gets one,
 * then each further block goes to the stage whose time with it would be
 * least (ties to the lower stage), which is optimal for a maximum of
 * increasing terms (each added block raises only its own stage).
 * Returns false when the caps cannot hold n. */
bool lbs_hy_partition(int n, int p, const double *cost, const int *max_b, int *b);

#endif
