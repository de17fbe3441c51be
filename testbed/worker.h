/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The testbed's worker processes (doc/validation.md). Two backends speak
 * the protocol below with the coordinator, which does not change with them:
 *  - blas (this file): lbsim's own worker, described here;
 *  - torch (testbed/torch.h): real PyTorch training of the same network,
 *    the gradient exchanged by the workers themselves (torch.distributed),
 *    so that its answer comes after the exchange and the optimizer step.
 *
 * The blas worker is a child
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

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "models/nets.h"
#include "util/error.h"

/* 48 bytes on the wire, native byte order (torch_worker.py packs it as
 * "=iiddddd"). */
typedef struct lbs_tb_result {
	int32_t status;    /* lbs_status of the worker */
	int32_t version;   /* torch under [sync] ssp, asp, backup: the model's version it
			      pulled (the server's updates, steps or clocks); else 0 */
	double compute_s;  /* wall time of the iteration's compute (forward and backward) */
	double cpu_s;      /* CPU time of it (lbs_tb_worker_read fills it in, unless the
			      worker measures its own: self_cpu) */
	double start_s;    /* CLOCK_MONOTONIC when it began (after reading its batch) */
	double exchange_s; /* wall time from the compute's end to the answer: the gradient
			      exchange and the optimizer step, for a worker that exchanges
			      itself (torch); 0 for the blas worker */
	double exchange_cpu_s; /* CPU time of all its threads over exchange_s (torch) */
} lbs_tb_result;

typedef struct lbs_tb_worker {
	pid_t pid;      /* 0: not running */
	int to_fd;      /* batches */
	int from_fd;    /* results */
	double cpu_mark_s; /* its CPU time at its last answer */
	bool self_cpu;  /* the worker fills cpu_s itself (torch: its compute thread's) */
	bool offsets;   /* each batch is followed by its offset in the global batch (torch) */
	bool finishing; /* asked to end (lbs_tb_worker_finish) */
} lbs_tb_worker;

/* Waits for the ready answer of a worker started without waiting (a torch
 * worker, whose start needs every rank); LBS_EINTERNAL naming `what` if it
 * failed. */
lbs_status lbs_tb_worker_ready(lbs_tb_worker *w, const char *what, lbs_error *err);

/* Starts a worker for batches up to max_batch of net, bound to CPU `cpu`
 * (< 0: any), and waits until it is ready (its buffers allocated and
 * touched), LBS_EINTERNAL if it failed. */
lbs_status lbs_tb_worker_start(lbs_tb_worker *w, const lbs_net *net, int64_t max_batch, int cpu,
			       lbs_error *err);

/* Sends one batch to compute. */
lbs_status lbs_tb_worker_send(lbs_tb_worker *w, int64_t batch, lbs_error *err);
/* ... starting at sample `offset` of the iteration's global batch: a torch
 * worker trains on samples [offset, offset + batch) of it, so that every
 * split of the same global batch computes the same update (the blas
 * worker, whose data is no data, is sent the batch alone). */
lbs_status lbs_tb_worker_send_at(lbs_tb_worker *w, int64_t batch, int64_t offset, lbs_error *err);

/* Reads the answer to the last batch (after poll() says from_fd is
 * readable; it blocks otherwise). */
lbs_status lbs_tb_worker_read(lbs_tb_worker *w, lbs_tb_result *out, lbs_error *err);

/* One iteration of `batch` on w, sent and answered: its compute time
 * (a callback of lbs_calib_resize and of calibrate's framework, ctx = w). */
lbs_status lbs_tb_worker_step(void *w, int64_t batch, double *compute_s, lbs_error *err);

/* Asks the worker to end (a batch < 0), without waiting: a torch worker
 * then leaves its process group and exits on its own. */
void lbs_tb_worker_finish(lbs_tb_worker *w);

/* Waits for a worker asked to end for up to 3 s, then (or at once if it
 * was not asked) kills it (SIGKILL), waits for it and closes its pipes. */
void lbs_tb_worker_stop(lbs_tb_worker *w);

#endif
