/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The testbed's worker processes (doc/validation.md). A worker is a child
 * process that holds the GEMM buffers of the scenario's network for the
 * largest batch it may get (models/calib.h, lbs_blas_work: the iteration
 * `lbsim calibrate --blas` times) and, for each batch the coordinator sends
 * it, runs one training iteration's forward and backward products on one
 * BLAS thread and answers with the wall time and the CPU time it took.
 *
 * Protocol, over two pipes: the worker writes one lbs_tb_result when ready
 * (status LBS_OK, or the failure of its set-up), then one per batch; a
 * batch < 0, or the end of its input, makes it exit. It dies with the
 * coordinator (PR_SET_PDEATHSIG), so that no worker outlives a run, even
 * one killed with SIGKILL. */
#ifndef LBS_TB_WORKER_H
#define LBS_TB_WORKER_H

#include <stdint.h>
#include <sys/types.h>

#include "models/nets.h"
#include "util/error.h"

typedef struct lbs_tb_result {
	int32_t status;    /* lbs_status of the worker */
	double compute_s;  /* wall time of the iteration */
	double cpu_s;      /* CPU time of the iteration (lbs_tb_worker_read fills it in) */
	double start_s;    /* CLOCK_MONOTONIC when it began (after reading its batch) */
} lbs_tb_result;

typedef struct lbs_tb_worker {
	pid_t pid;      /* 0: not running */
	int to_fd;      /* batches */
	int from_fd;    /* results */
	double cpu_mark_s; /* its CPU time at its last answer */
} lbs_tb_worker;

/* Starts a worker for batches up to max_batch of net, bound to CPU `cpu`
 * (< 0: any), and waits until it is ready (its buffers allocated and
 * touched), LBS_EINTERNAL if it failed. */
lbs_status lbs_tb_worker_start(lbs_tb_worker *w, const lbs_net *net, int64_t max_batch, int cpu,
			       lbs_error *err);

/* Sends one batch to compute. */
lbs_status lbs_tb_worker_send(lbs_tb_worker *w, int64_t batch, lbs_error *err);

/* Reads the answer to the last batch (after poll() says from_fd is
 * readable; it blocks otherwise). */
lbs_status lbs_tb_worker_read(lbs_tb_worker *w, lbs_tb_result *out, lbs_error *err);

/* Kills the worker (SIGKILL), waits for it and closes its pipes. */
void lbs_tb_worker_stop(lbs_tb_worker *w);

#endif
