/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A hybrid run's steps under a balancing policy (hybrid/policy.h): the
 * policy is asked before each step, its split checked (sum M, each within
 * its replica's memory, multiples of the quantum), and when the split
 * changes the step's graph is rebuilt for the new micro-batch counts, the
 * simulation carrying on from the same time. The wall time of each
 * decision is kept beside the step. */
#ifndef LBS_HYBRID_BALANCE_H
#define LBS_HYBRID_BALANCE_H

#include <signal.h>

#include "hybrid/hybrid.h"
#include "hybrid/policy.h"
#include "hybrid/scenario.h"

typedef struct lbs_hy_balance {
	const lbs_hy_policy_ops *ops;
	void *state;
	bool lookahead;
	lbs_hy_policy_env env;
	lbs_hy_plan plan;        /* the built plan, its m_of this run's split */
	int *m_of, *next;        /* d: the split in force, the policy's proposal */
	int *ep_u;               /* with expert parallelism, 2 d / ep: scratch evening out a proposal */
	double *ep_want;         /* d / ep: the same */
	int64_t *max_m;          /* d */
	int *blocks, *next_blocks, *max_blocks; /* p (NULL: the job cannot re-split) */
	int blocks0;             /* the blocks of a stage in the built plan */
	const lbs_hy_built *b;
	double *own;             /* the plan's cost arrays, owned: re-splitting changes them */
	double action_s;         /* the pause before the coming step (moving blocks, a restart), seconds */
	int64_t resplits, replacements;
	bool *replace;           /* G: the policy's replacements (scratch) */
	lbs_hy_avail *avail;     /* G: the groups' availability once a node was replaced (else NULL) */
	double **avail_buf;      /* G: the pieces a replaced group owns */
	const volatile sig_atomic_t *interrupt; /* handed to every simulation's engine */
	const double *length_ratio; /* M: the step's lengths in the data's order (NULL: none) */
	double *slot_ratio;      /* M: the lengths of the slots the policy chose, handed to every
				    simulation (lbs_hy_sim.length_ratio) */
	double *sorted[2];       /* M each: scratch, to check a packing is a permutation */
	int64_t packings;        /* steps whose sequences the policy re-arranged */
	double *compute_s;       /* d x p: the last step's compute time per group */
	lbs_hy_graph *gr;
	lbs_hy_sim *sim;         /* the simulation (its engine holds its address); rebuilt when the
				    split changes */
	double decision_s;       /* wall seconds of the last decision */
	double decision_cost_s;  /* [hybrid_policy] decision_cost: simulated seconds each decision pauses */
	int64_t delay;           /* [hybrid_policy] delay: decisions between a proposal and its effect */
	struct lbs_hy_pending *pending; /* delay + 1 proposals in flight, a ring by step */
	int64_t stale;           /* delayed proposals dropped: no longer within the memory */
	bool changed;            /* the last decision changed the split */
	double last_step_s;
	int64_t rebuilds;
} lbs_hy_balance;

/* The policy of sc->policy on the built job, every replica at m to start. */
lbs_status lbs_hy_balance_create(lbs_hy_balance *bal, const lbs_hy_scenario *sc, const lbs_hy_built *b,
				 lbs_error *err);
/* Asks the policy for step `step`'s split (and rebuilds when it changes). */
lbs_status lbs_hy_balance_decide(lbs_hy_balance *bal, int64_t step, lbs_error *err);
/* Runs the step; records each group's compute time for the next decision
 * and, when acc is not NULL, each group's accounting into acc[G]. */
lbs_status lbs_hy_balance_step(lbs_hy_balance *bal, double *step_s, lbs_hy_account *acc, lbs_error *err);
void lbs_hy_balance_destroy(lbs_hy_balance *bal);
/* A flag the engine looks at before every event (sim/engine.h), for this
 * simulation and every one rebuilt after it. */
void lbs_hy_balance_interrupt(lbs_hy_balance *bal, const volatile sig_atomic_t *interrupt);
/* The micro-batches' lengths (lbs_hy_sim.length_ratio: the global batch's,
 * replica by replica in the split in force), for this simulation and every
 * one rebuilt after it, the oracle's look-ahead included. */
void lbs_hy_balance_lengths(lbs_hy_balance *bal, const double *length_ratio);

/* The time to re-split from blocks old[] to new[] (p stages of v chunks,
 * every replica; old[s] and new[s] the blocks of each chunk of stage s):
 * in the model's order of virtual stages k = c p + s, the boundary after k
 * carries the blocks by which the first k + 1 virtual stages' count
 * changes, each blk_move_bytes over the link of replica r's group (r, k
 * mod p) to the next stage (latency once); the boundaries and the
 * replicas move at once, so the pause is the longest of them. Moving a
 * block across several boundaries is counted once on each (as if relayed
 * at once: a lower bound on a store-and-forward relay). */
double lbs_hy_resplit_s(const lbs_hy_built *b, int d, int p, int v, const int *old_blocks, const int *new_blocks);

#endif
