/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The testbed's real-framework worker (doc/validation.md, "The torch
 * worker"): testbed/torch_worker.py, a Python program run by the system's
 * python3 with PyTorch (Debian's python3-torch), one process per simulated
 * worker. It speaks the blas worker's protocol (testbed/worker.h) on two
 * inherited descriptors and trains the scenario's network for real: the
 * same layers as lbsim's network of that name, forward, backward, the
 * gradient exchanged by torch.distributed (gloo over loopback) inside the
 * worker's own CPU quota, and an SGD step, on one thread. lbsim itself
 * never needs Python: only this backend runs it.
 *
 * Where things are found:
 *  - python3: $LBSIM_PYTHON, else /usr/bin/python3 (the system's, which
 *    Debian's python3-torch installs into), else python3 on PATH;
 *  - the program: $LBSIM_TORCH_WORKER, else testbed/torch_worker.py under
 *    each folder of LBSIM_PATH, the installed data folder, then the source
 *    tree lbsim was built from. Never the working directory: the testbed
 *    runs as root. */
#ifndef LBS_TB_TORCH_H
#define LBS_TB_TORCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "models/calib.h"
#include "testbed/worker.h"
#include "util/error.h"

/* The networks the torch worker builds (lbs_tb_torch_nets, comma-separated). */
bool lbs_tb_torch_has_net(const char *name);
const char *lbs_tb_torch_nets(void);

/* LBS_OK if python3 runs and imports torch; LBS_ENOTESTBED naming what is
 * missing (python3, the worker program, or PyTorch) otherwise. Writes the
 * torch version to version (may be NULL). */
lbs_status lbs_tb_torch_probe(char *version, size_t len, lbs_error *err);

/* How one torch worker is started. */
typedef struct lbs_tb_torch_spec {
	const char *net;
	int64_t max_batch;    /* its warm-up batch, the largest it may get */
	int64_t global_batch; /* B: each worker's loss is its samples' sum over B */
	int cpu;              /* CPU to bind it to (< 0: any) */
	size_t rank, world;   /* world 1: no process group, no exchange */
	const char *rendezvous; /* torch.distributed init method, "file:///..." (world > 1) */
	uint64_t seed;
	bool ddp;             /* DistributedDataParallel */
	/* teacher-student: rank 0 writes the held-out loss of every
	 * loss_every-th step (0: 10) to loss_file at its end (NULL: none) */
	const char *loss_file;
	int64_t loss_every;
	/* [sync] (doc/validation.md, "The synchronisation modes"): "bsp" (or
	 * NULL), "local-sgd" every `period` steps, or through a parameter
	 * server, "ssp" (bound `staleness`), "asp" or "backup" (`backup`
	 * workers not waited for): the server is rank world - 1, started with
	 * ps set, its log of every push written to ps_log; penalty is
	 * "inverse" or "none" (phi(tau) of a stale gradient) */
	const char *sync, *penalty, *ps_log;
	int64_t staleness, backup, period;
	bool ps;
} lbs_tb_torch_spec;

/* Starts the worker without waiting for it: with world > 1 its start
 * needs every rank, so the caller starts them all and then waits for each
 * (lbs_tb_worker_ready). */
lbs_status lbs_tb_torch_spawn(lbs_tb_worker *w, const lbs_tb_torch_spec *spec, lbs_error *err);

/* The torch worker as `lbsim calibrate --torch` runs it (world 1, no
 * exchange, on any CPU): each step's time is its forward and backward pass
 * (compute_s), as the testbed's compute is; the optimizer step goes with
 * the exchange. */
extern const lbs_calib_framework lbs_tb_torch_framework;

#endif
