/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The synchronisation modes in which each worker steps on its own, with no
 * barrier at every step (doc/model.md, "Synchronisation"):
 *
 *   ssp        stale synchronous parallel (Ho et al. 2013): worker i starts
 *              its step k once every worker has finished step k - s - 1;
 *              each worker's push and pull take the network's time.
 *   asp        asynchronous: each worker pushes its gradient and pulls the
 *              model through a parameter server whose link serves one
 *              transfer at a time, and starts its next step at once.
 *   local-sgd  each worker steps on its own model; every H-th step ends in
 *              a barrier and an all-reduce that averages the models.
 *
 * For ssp and local-sgd an iteration of the results is a clock: step k of
 * every worker, recorded when the last of them has finished it; for asp it
 * is an update, one worker's gradient applied by the server. The modes that
 * keep a barrier at every step (bsp, backup, dropcompute) are sim/run.c's.
 * The functions below are the efficiency model's closed forms, used by the
 * run and by the tests. */
#ifndef LBS_SYNC_H
#define LBS_SYNC_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/engine.h"
#include "sim/scenario.h"
#include "util/error.h"

struct lbs_run;

/* Whether [sync] mode steps each worker on its own (this file's modes). */
bool lbs_sync_per_worker(int mode);

/* Refuses what the scenario's [sync] mode does not compose with (a key
 * error naming the file, line and key), for every mode but bsp and backup;
 * for this file's modes allocates the state in run->stepper and registers
 * its handlers, run->h_begin being lbs_sync_begin. */
lbs_status lbs_sync_setup(struct lbs_run *run, lbs_error *err);

void lbs_sync_destroy(struct lbs_run *run);

/* The share of a fresh gradient's progress that a gradient tau steps stale
 * makes: with LBS_STALE_INVERSE 1 / max(1, tau), the learning rate divided
 * by the staleness of Zhang, Gupta, Lian and Liu, "Staleness-aware
 * Async-SGD for Distributed Deep Learning" (IJCAI 2016), progress being
 * taken as proportional to the learning rate; with LBS_STALE_NONE 1. */
double lbs_staleness_weight(int penalty, int64_t tau);

/* The progress towards the target of one step of `batch` samples under the
 * gradient-noise-scale model (McCandlish et al. 2018): batch / (S_min
 * (batch + B_noise)), times `weight` (its staleness weight); 0 for an empty
 * step. */
double lbs_gns_step_progress(const lbs_convergence_spec *cv, int64_t batch, double weight);

#endif
