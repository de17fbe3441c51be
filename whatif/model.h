/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The dependency model of one hybrid-parallel training step (doc/whatif.md):
 * the ops of a template step (the smallest step, dp_rank 0), the in-stage
 * dependencies between them (compute chain, p2p matching, streams, the
 * first backward exchange, data-parallel ops, the step's tail), and the
 * communication groups whose members end together (p2p pairs, the
 * embedding pair, the data-parallel collectives and the clip barrier).
 * Every (step, dp_rank) of the trace is an *instance* of the template; the
 * values the replays need are kept per (instance, op) in flat arrays,
 * index inst * n_ops + op, with inst = step_index * D + dp_rank. */
#ifndef LBS_WHATIF_MODEL_H
#define LBS_WHATIF_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "traces/read_ops.h"

/* The p2p matching tolerance (seconds): a recv that starts this much after
 * the last compute of its direction, or a send that ends this much before
 * the first, is idle. */
#define LBS_WI_IDLE_TOL 5e-5
/* Transfer times and launch delays at or below this are set to 0. */
#define LBS_WI_CLAMP (-0.01)

typedef struct lbs_wi_model {
	const lbs_ops_trace *trace;
	int D, P, V, dsp;
	bool dp_ops;     /* D x dsp_size > 1: the DP collectives take part */
	bool overlapped; /* separate-grads-all-reduce present */

	/* The template ops, ordered by stage, then time. */
	size_t n_ops;
	uint8_t *type;    /* lbs_optype */
	int32_t *stage, *seq, *mc, *gmc;
	bool *idle;       /* p2p ops left out of the pairing */
	uint32_t *dep_off, *dep; /* op v depends on dep[dep_off[v] .. dep_off[v+1]) */
	uint32_t *out_off, *out; /* the ops that depend on v */
	size_t n_edges;

	/* Groups: every op is in exactly one; a local group has one member
	 * that takes its own duration, the others end together. */
	size_t n_groups, n_comm_groups; /* comm groups come first */
	uint32_t *group_of;
	uint32_t *mem_off, *mem;
	bool *group_comm, *group_sync; /* sync: spans the dp_ranks of the step */
	uint32_t *order;               /* groups in a topological order */
	size_t n_sync_ops;

	/* Instances. */
	size_t n_steps, n_inst;
	int64_t *steps;   /* ascending */
	uint32_t *row;    /* n_inst x n_ops: the trace row of each op instance */
	int32_t *worker_rank; /* D x P: the global rank of (dp_rank, stage) */
	size_t n_workers;

	/* Per (instance, op), from the trace: durations d (local ops),
	 * transfer times x (group members), launch delays l; and per step the
	 * measured step time. */
	double *d, *x, *l;
	double *t_meas;
} lbs_wi_model;

/* Builds the model of a trace (which must outlive it) with dsp_size from
 * the metadata. Bad traces (an instance that lacks a template op or has
 * one more, an op twice, p2p ops that cannot be matched, a cycle): LBS_EINPUT
 * naming the file and line. */
lbs_status lbs_wi_model_build(lbs_wi_model *m, const lbs_ops_trace *t, int dsp_size, lbs_error *err);
void lbs_wi_model_free(lbs_wi_model *m);

/* "forward-compute_3_1": optype_seq_stage of op v into buf. */
const char *lbs_wi_op_name(const lbs_wi_model *m, uint32_t v, char *buf, size_t len);

/* One replay of every instance: val[i] is op instance i's duration (local
 * ops) or transfer time (group members), lat[i] its launch delay (NULL:
 * 0). Writes T[step] (n_steps) = the latest end of the step's optimizer
 * ops (of all ops when there are none); with start/end not NULL, every op
 * instance's start and end. Runs on the event engine (sim/engine.h): one
 * event per op instance, at its end. */
lbs_status lbs_wi_replay(const lbs_wi_model *m, const double *val, const double *lat, double *T,
			 double *start, double *end, lbs_error *err);

/* The same replay as a plain sweep over the groups in topological order
 * (a second method, for the tests). */
void lbs_wi_replay_sweep(const lbs_wi_model *m, const double *val, const double *lat, double *T,
			 double *start, double *end);

#endif
