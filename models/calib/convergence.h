/* SPDX-License-Identifier: GPL-3.0-or-later */
/* `lbsim calibrate --convergence LOSS.csv --target LOSS`: the parameters
 * of the gradient-noise-scale model ([convergence] model = gns,
 * doc/model.md "Time to target") fitted to a job's own loss curves at two
 * or more batch sizes. */
#ifndef LBS_CALIB_CONVERGENCE_H
#define LBS_CALIB_CONVERGENCE_H

#include <stddef.h>

#include "util/error.h"

/* Steps to the target at batch[i], from the loss curves. */
typedef struct lbs_conv_point {
	double batch;
	double steps;
} lbs_conv_point;

typedef struct lbs_conv_fit {
	double min_steps;   /* S_min */
	double noise_scale; /* B_noise, samples */
	double r2;
	/* Leave-one-batch-out (3 points or more): each batch's steps predicted
	 * by the fit to the others, relative error; NAN with 2 points. */
	double heldout[64];
	double heldout_mean_abs, heldout_max_abs;
} lbs_conv_fit;

/* Fits S(B) = S_min (1 + B_noise / B), a straight line in 1/B, to the n
 * points (2 <= n <= 64, distinct batches) by least squares; LBS_EINPUT
 * (with a message) where the steps do not fall with the batch as the model
 * needs (S_min <= 0 or B_noise < 0). */
lbs_status lbs_conv_fit_points(const lbs_conv_point *p, size_t n, lbs_conv_fit *fit, lbs_error *err);

/* The steps at which a curve of (step, loss) first reaches `target`: at a
 * logged step, or interpolated linearly between the last step above it and
 * the first at or below; after a moving average over `smooth` logged points
 * (1: none). NAN when it never does. */
double lbs_conv_steps_to(const double *step, const double *loss, size_t n, double target, size_t smooth);

/* The command: argv as `lbsim calibrate` got it. */
int lbs_convergence_command(int argc, char **argv);

#endif
