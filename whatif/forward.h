/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A hybrid job built from a per-operation trace, simulated forward under
 * the hybrid policies (doc/whatif.md, "Forward: real policies on the
 * traced job"; `lbsim whatif --forward`).
 *
 * The what-if analysis's counterfactuals replay the trace with its work
 * redistributed as a policy would have done it, without the policy's
 * reaction delay or its whole micro-batches and blocks. Here the traced
 * job is instead rebuilt as a forward plan (hybrid/hybrid.h) and every
 * policy runs on it as on a scenario's job, step by step, seeing only the
 * compute times the simulation measures.
 *
 * Each traced compute's duration, d(step, r, s, chunk, dir, mb), is
 * written as the product of three factors:
 *   - the worker's slowness W(r, s): the worker's mean compute time over
 *     the trace over the mean of its stage's workers (the definition of
 *     whatif's micro-batch balance), which becomes the group's
 *     availability 1 / W for the whole run;
 *   - the stage's cost B(s, chunk, dir): the mean of d / W over the
 *     stage's computes of that chunk and direction (a long stage stays
 *     long: the imbalance a re-split fixes);
 *   - the micro-batch's data cost rho(step, r, mb): the sum of its
 *     computes' d / W over the sum of their B (its sequences, the same on
 *     every stage), handed to the simulation as a length ratio with no
 *     attention share (linear, as the trace gives no lengths).
 * Transfers and the step's tail take their op type's typical value (the
 * analysis's ideal); the gc, layer-norm reduction and optimizer run as
 * the optimizer step. The ideal job has every compute at its type's ideal
 * value, every group at 1 and no data cost: it is the analysis's ideal
 * step on the forward graph.
 *
 * Memory is not in the trace: no cap. Blocks: each chunk of a stage
 * starts with `blocks` blocks, each costing the mean chunk's cost over
 * `blocks` on any stage; what a chunk costs above or below the mean
 * stays with it (a head, an embedding), so moving blocks keeps the work
 * (with interleaving a unit moved is a block on each chunk of a stage,
 * hybrid/balance.h), as whatif's
 * re-partition does. Moves are free: the trace gives neither the model's
 * size nor its layers (whatif's re-partition is free too). */
#ifndef LBS_WHATIF_FORWARD_H
#define LBS_WHATIF_FORWARD_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "hybrid/scenario.h"
#include "whatif/whatif.h"

typedef struct lbs_wi_fwd_job {
	lbs_hy_built b;          /* the job's plan */
	size_t n_steps;          /* the traced steps; run step i is traced step i */
	size_t n_mb;             /* D m: the global batch's micro-batches */
	double *ratio;           /* n_steps x n_mb: each micro-batch's data cost (rho over the trace's
				    largest, B scaled up to match), data order; NULL for the ideal job */
} lbs_wi_fwd_job;

/* The job of trace model wm (its analysis res, tensor degree tp) with
 * `blocks` blocks a chunk of a stage (0: none, the job cannot re-split);
 * ideal: the ideal job instead. */
lbs_status lbs_wi_fwd_build(lbs_wi_fwd_job *j, const lbs_wi_model *wm, const lbs_wi_result *res, int tp,
				int blocks, bool ideal, lbs_error *err);
void lbs_wi_fwd_free(lbs_wi_fwd_job *j);

/* Runs hybrid policy `policy` (its default options; `every` and `delay`
 * as the [hybrid_policy] keys) over the job's traced steps: *mean_s the
 * mean step, *changes the steps whose split, partition or packing it
 * changed. */
lbs_status lbs_wi_fwd_run(const lbs_wi_fwd_job *j, const char *policy, int64_t every, int64_t delay, double *mean_s,
			      int64_t *changes, const volatile sig_atomic_t *interrupt, lbs_error *err);

#endif
