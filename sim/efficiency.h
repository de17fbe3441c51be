/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The statistical-efficiency model's closed forms (doc/model.md, "Time to
 * target"): the progress one step makes towards the target, by its batch
 * and the staleness of its gradients. Used by the run (sim/run.c,
 * sim/run_sync.c) and by the tests against hand calculations. */
#ifndef LBS_EFFICIENCY_H
#define LBS_EFFICIENCY_H

#include <stdint.h>

#include "sim/scenario.h"

/* The share of a fresh gradient's progress that a gradient tau steps stale
 * makes: with LBS_STALE_INVERSE (1 / max(1, tau))^exponent, the learning
 * rate divided by the staleness of Zhang, Gupta, Lian and Liu,
 * "Staleness-aware Async-SGD for Distributed Deep Learning" (IJCAI 2016),
 * progress taken as the learning rate's factor to the power `exponent`
 * (1: proportional; [convergence] staleness_exponent, which `lbsim
 * calibrate --convergence` fits to curves trained with stale gradients);
 * with LBS_STALE_NONE 1. */
double lbs_staleness_weight(int penalty, double exponent, int64_t tau);

/* The progress towards the target of one step of `batch` samples under the
 * gradient-noise-scale model (McCandlish et al. 2018): batch / (S_min
 * (batch + B_noise)), times `weight` (its staleness weight); 0 for an empty
 * step. */
double lbs_gns_step_progress(const lbs_convergence_spec *cv, int64_t batch, double weight);

#endif
