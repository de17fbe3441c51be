/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Hybrid-parallel (data x pipeline x tensor) training simulated forward
 * (doc/hybrid.md).
 *
 * The unit of simulation is a *group*: the t tensor-parallel GPUs of one
 * pipeline stage s of one data-parallel replica r, g = r * p + s. Its t
 * GPUs run the same operations in lock step (a tensor-parallel collective
 * inside every layer), so the group is simulated once, at the speed of its
 * slowest GPU: its availability is the minimum of its GPUs'. Memory and
 * work are linear in the groups, d p of them.
 *
 * One training step is a graph of operations, one per (group, op), in the
 * form of the what-if analysis of measured traces (whatif/model.h,
 * doc/whatif.md), so that the analysis reads a simulated step exactly as
 * it reads a traced one:
 *   - forward and backward computes of each micro-batch and model chunk,
 *     in the schedule's order (GPipe, 1F1B, interleaved 1F1B), on one
 *     compute stream per group;
 *   - for every compute, its p2p receive (posted once the previous compute
 *     of its direction is done) and its send (after the compute); a send
 *     and the receive it feeds end together, at the later of their starts
 *     plus the transfer time; the ones whose peer chunk lies outside the
 *     model take no time;
 *   - the data-parallel collectives of each stage (a parameter all-gather
 *     per chunk under ZeRO, a gradient reduction per chunk), which end when
 *     every replica of the stage has arrived plus their alpha-beta time;
 *   - the step's tail: gc, layer-norm all-reduce, the embedding pair of the
 *     first and last stages, the gradient-clipping barrier over all groups,
 *     the optimizer;
 *   - with expert parallelism, an exchange after every compute: a
 *     collective of the same compute of the ep replicas of an expert group
 *     (their all-to-alls around each block's experts), ending when the last
 *     of them has computed plus the all-to-alls' time.
 * Each op ends at one event on the event engine (sim/engine.h). A compute
 * progresses at the group's availability a(t) (the fluid rule of
 * traces/avail.h), then pays its tensor-parallel collectives, which
 * availability does not slow. */
#ifndef LBS_HYBRID_H
#define LBS_HYBRID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "traces/avail.h"
#include "traces/read_ops.h"
#include "util/error.h"

typedef enum lbs_hy_schedule { LBS_HY_GPIPE, LBS_HY_1F1B, LBS_HY_INTERLEAVED } lbs_hy_schedule;
#define LBS_HY_SCHEDULE_CHOICES "gpipe|1f1b|interleaved"

/* A group's availability: level[i] from t[i] to t[i + 1] (t[0] = 0, the
 * last level holds on); n = 0: constant 1. */
typedef struct lbs_hy_avail {
	size_t n;
	double *t, *level;
} lbs_hy_avail;

/* Everything the simulation needs, already costed (hybrid/plan.c builds it
 * from a scenario; the tests write it by hand). Arrays by group g = r p + s
 * and chunk c (g * v + c), or by stage and chunk (s * v + c). */
typedef struct lbs_hy_plan {
	int d, p, t, v, m;       /* replicas, stages, tensor degree, chunks per stage, micro-batches */
	int cp;                  /* context-parallel degree (a group: t x cp GPUs) */
	const int *m_of;         /* d, or NULL: every replica runs m. Replica r runs m_of[r] >= 1
				    micro-batches (replica shares, hybrid/policy.h); its groups' ops are
				    laid out for that count, so groups differ in size */
	int schedule;            /* lbs_hy_schedule (interleaved needs v >= 2 and m a multiple of p) */
	int zero_stage;          /* >= 1: a parameter all-gather per chunk before its first forward */
	bool overlap_dp;         /* each chunk's gradient reduction starts after its last backward */
	int buckets;             /* gradient buckets a chunk (0, 1: one): with overlap_dp, bucket j of
				    chunk c is reduced once the chunk's last backward has done (j + 1) /
				    buckets of its work (the backward produces the gradients layer by
				    layer); the buckets of a stage are reduced one after the other */
	double *fwd_s, *bwd_s;   /* G x v: a micro-batch's compute, nominal seconds (slowed by a(t)) */
	double *fwd_fixed_s, *bwd_fixed_s; /* G x v: its tensor-parallel collectives (not slowed) */
	double *fwd_att_s, *bwd_att_s; /* G x v, or NULL (none): the attention core's share of fwd_s
				    and bwd_s (the score and context GEMMs, the softmax and its
				    dropout), whose cost grows with the square of the length */
	double *opt_s;           /* G: the optimizer step, nominal seconds */
	double *p2p_s;           /* G: a transfer between g and the group of the next chunk
				    ((r, s + 1), or (r, 0) from the last stage) */
	double *grad_s, *gather_s; /* p x v: one bucket's gradient reduction, a chunk's parameter all-gather */
	double emb_s, clip_s;    /* the embedding pair's all-reduce, the clipping barrier's */
	lbs_hy_avail *avail;     /* G, or NULL: every group at 1 */
	lbs_avail *src;          /* G, or NULL: where a group's .ops is set, its availability comes from
				    this source (a node's trace, traces/avail.h) instead of avail */
	lbs_hy_avail *net;       /* G, or NULL: the share of its inter-node bandwidth group g keeps
				    (network fail-slow episodes): a collective or transfer whose
				    groups lie on more than one node progresses at the least share
				    among its groups at each instant (the slowest link of a ring
				    governs it), integrated across their changes */
	int64_t *node;           /* G, with net: the node group g's GPUs lie on (-1: several) */
	/* Expert parallelism: the replicas r of one expert group, those of
	 * equal r / ep, exchange the routed tokens in an all-to-all around
	 * each block's experts, so that each compute of theirs ends when the
	 * last of them has done it, plus the all-to-alls (an exchange op after
	 * each compute, a collective of the group's same computes). */
	int ep;                  /* expert-parallel degree (0, 1: none); divides d, and with it
				    every replica of a group runs as many micro-batches */
	double *xchg_f_s, *xchg_b_s; /* G x v, with ep > 1: a micro-batch's all-to-alls of chunk c,
				    forward and backward (recomputed forward included) */
} lbs_hy_plan;

/* The level of a at time t (1 where it has none, and before its first
 * piece) and *next, the next time it may change (INFINITY: never). */
double lbs_hy_avail_at(const lbs_hy_avail *a, double t, double *next);

/* Checks a plan's sizes and values (positive degrees, finite non-negative
 * times, a schedule its degrees allow). */
lbs_status lbs_hy_plan_check(const lbs_hy_plan *pl, lbs_error *err);

/* What a group computes, in order: direction (0 forward, 1 backward),
 * micro-batch and chunk of compute i of stage s. */
typedef struct lbs_hy_compute {
	uint8_t backward;
	int32_t mb, chunk;
} lbs_hy_compute;

/* The 2 m v computes of stage s under the plan's schedule into out. */
void lbs_hy_schedule_order(const lbs_hy_plan *pl, int s, lbs_hy_compute *out);
/* The same for a replica running m micro-batches. */
void lbs_hy_schedule_order_m(const lbs_hy_plan *pl, int s, int m, lbs_hy_compute *out);

/* The micro-batches replica r runs. */
static inline int lbs_hy_replica_m(const lbs_hy_plan *pl, int r)
{
	return pl->m_of ? pl->m_of[r] : pl->m;
}

/* LBS_HY_PARTIAL: a marker of no duration of its own that runs with a
 * chunk's last backward and ends when it has done a fraction of its work
 * (when a gradient bucket is ready); not an operation of the trace. */
/* LBS_HY_PAD: a slot of a group whose replica runs fewer micro-batches
 * than the most (plan->m_of): every group has per_group local ops, and
 * these are none; no dependencies, no duration, not in the trace. */
enum { LBS_HY_LOCAL, LBS_HY_COMPUTE, LBS_HY_MEMBER, LBS_HY_PARTIAL, LBS_HY_PAD };

/* The step's graph. */
typedef struct lbs_hy_graph {
	const lbs_hy_plan *plan;
	size_t n_ops, n_groups;
	size_t per_group;        /* ops a group: its local op l is op l G + g (lbs_hy_op); groups of a
				    replica of fewer micro-batches than the most end in LBS_HY_PAD ops */
	uint8_t *type;           /* lbs_optype */
	uint8_t *kind;           /* LBS_HY_* */
	int32_t *seq, *mc, *mb;  /* seq_id, chunk (-1), micro-batch (-1) */
	double *work, *fixed;    /* local: nominal work (compute) and fixed seconds */
	double *att;             /* compute: the attention core's share of work (quadratic in length) */
	uint32_t *coll;          /* member: its collective */
	double *x;               /* member: its transfer time after the last arrival */
	uint32_t *dep_off, *dep, *out_off, *out;
	size_t n_coll;
	uint32_t *mem_off, *mem;
	uint32_t *opt;           /* G: the optimizer of g */
	uint32_t *mb_first;      /* d + 1: the global batch's micro-batches of replica r are
				    mb_first[r] .. mb_first[r + 1) (r m .. without plan->m_of) */
	uint32_t xc, n_xc;       /* ep > 1: local op xc + l is the exchange after compute l (the
				    computes are every group's first local ops; a replica of fewer
				    micro-batches pads the rest of the n_xc); n_xc 0: none */
} lbs_hy_graph;

/* Whether op o is an expert exchange (written with its compute, not apart). */
static inline bool lbs_hy_is_xchg(const lbs_hy_graph *gr, uint32_t o)
{
	size_t l = o / gr->n_groups;
	return gr->n_xc && l >= gr->xc && l < (size_t)gr->xc + gr->n_xc;
}
/* Whether op o is a row of the step's trace and timeline: not a bucket's
 * marker, a padding slot or an exchange (written with its compute). */
static inline bool lbs_hy_op_recorded(const lbs_hy_graph *gr, uint32_t o)
{
	return gr->kind[o] != LBS_HY_PARTIAL && gr->kind[o] != LBS_HY_PAD && !lbs_hy_is_xchg(gr, o);
}

/* The exchange after compute op o (local op l < n_xc: the computes come
 * first in every group), or o itself without expert parallelism. */
static inline uint32_t lbs_hy_compute_end_op(const lbs_hy_graph *gr, uint32_t o)
{
	if (!gr->n_xc || gr->kind[o] != LBS_HY_COMPUTE ||
	    (gr->type[o] != LBS_OP_FORWARD_COMPUTE && gr->type[o] != LBS_OP_BACKWARD_COMPUTE))
		return o;
	return o + (uint32_t)(gr->xc * gr->n_groups);
}

/* The ops are numbered local op by local op, the groups inside: op l G + g
 * is local op l of group g. The replicas of a stage run the same op at
 * nearly the same time, so the state their ends touch lies close together
 * (numbered group by group, a 10,240-GPU step ran half as fast). */
static inline uint32_t lbs_hy_op(const lbs_hy_graph *gr, size_t g, size_t local)
{
	return (uint32_t)(local * gr->n_groups + g);
}
static inline size_t lbs_hy_group_of(const lbs_hy_graph *gr, uint32_t op)
{
	return op % gr->n_groups;
}

lbs_status lbs_hy_graph_build(lbs_hy_graph *gr, const lbs_hy_plan *pl, lbs_error *err);
void lbs_hy_graph_free(lbs_hy_graph *gr);

/* Time accounting of one group in one step (seconds; they sum to step_s):
 * compute (its forward and backward passes, tensor-parallel collectives
 * included), optimizer, exposed communication (transfers and collectives
 * while no compute runs), waiting (arrived at a data-parallel or global
 * collective, waiting for the others), bubble (the rest: the pipeline
 * waiting for a peer stage's compute). */
typedef struct lbs_hy_account {
	double compute_s, optimizer_s, comm_s, wait_s, bubble_s;
} lbs_hy_account;

/* A simulation: the graph and its state across steps. */
typedef struct lbs_hy_sim {
	const lbs_hy_graph *gr;
	double *start, *end;     /* per op, of the last step run */
	struct lbs_hy_wait *wait; /* per op: the latest end of its dependencies so far, and how many have not ended */
	uint32_t *arrive, *handle;
	double *coll_at;         /* per collective: its members' latest arrival, when its transfer began */
	size_t *avail_at;        /* per group: the piece of its availability in use */
	double now_s;            /* the end of the last step */
	int64_t step;            /* steps run (an iteration-indexed source's index) */
	/* NULL, or every op's duration (local ops and computes) or transfer
	 * time (collective members) for the next step, in place of the plan's
	 * costs and the availability: a replay of given values, as
	 * whatif/replay.c does (the consistency check with a traced job). */
	const double *given;
	/* NULL, or d x m: micro-batch mb of replica r is length_ratio[r m +
	 * mb] (with plan->m_of, length_ratio[gr->mb_first[r] + mb]: the
	 * replicas' micro-batches one after the other, the global batch
	 * whatever the split) times the plan's sequence length in the next step (data-
	 * dependent costs; a policy may choose them). Its computes' work
	 * becomes (work - att) rho + att rho^2 (the linear operations grow with
	 * the length, attention with its square) and their tensor-parallel
	 * collectives fixed rho (they carry the s b h activations); the p2p
	 * transfers keep the plan's shape, as Megatron-LM sends fixed-shape
	 * tensors between stages. */
	const double *length_ratio;
	uint64_t events;
	struct lbs_engine *eng;
} lbs_hy_sim;

lbs_status lbs_hy_sim_create(lbs_hy_sim *sim, const lbs_hy_graph *gr, lbs_error *err);
/* Runs one step from sim->now_s; *step_s its length (every group starts it
 * together, after the previous step's last optimizer). */
lbs_status lbs_hy_sim_step(lbs_hy_sim *sim, double *step_s, lbs_error *err);
/* The accounting of group g in the last step. */
void lbs_hy_account_group(const lbs_hy_sim *sim, size_t g, double step_start_s, double step_s,
			  lbs_hy_account *out);
void lbs_hy_sim_destroy(lbs_hy_sim *sim);

/* Writes the last step's ops as rows of the per-operation trace format
 * (traces/read_ops.h, doc/whatif.md), times relative to the step's start;
 * header when `header`. rank_of(g) is the global rank of the group's first
 * GPU (NULL: g * t). */
lbs_status lbs_hy_trace_write(const lbs_hy_sim *sim, FILE *out, int64_t step, double step_start_s, bool header,
			      const int64_t *rank_of, lbs_error *err);
/* The metadata file (meta-X.yaml) of such a trace. */
lbs_status lbs_hy_meta_write(const lbs_hy_plan *pl, FILE *out, const char *name, lbs_error *err);

#endif
