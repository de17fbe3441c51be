/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Fuzzes the reader of lbsim calibrate --fit (models/calib/measured.c) and
 * the fits (models/calib/fit.c): step times that read are distinct
 * batches in increasing order, each with a time in (0, 1 h], at most the
 * documented number; the CPU fit, the robust one and the GPU kinds' choice
 * (with their held-out errors) run on them and, when they succeed, give a cost model
 * whose times are finite and positive at every measured batch. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <gsl/gsl_errno.h>

#include "fuzz/harness.h"
#include "models/calib.h"
#include "models/cost.h"

static void check_fit(const lbs_cost *c, const lbs_step_times *t)
{
	for (size_t i = 0; i < t->n; i++) {
		double v = lbs_cost_time_s(c, (int64_t)t->batch[i]);
		if (!isfinite(v) || v < 0) {
			fprintf(stderr, "fuzz: %s gives %g s at batch %g\n", c->ops->name, v, t->batch[i]);
			abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gsl_set_error_handler_off();
	const char *path = lbs_fuzz_file("times.csv", data, size);
	lbs_error err = { 0 };
	lbs_step_times t;
	if (lbs_calib_read_times(path, &t, &err) != LBS_OK)
		return 0;
	if (t.n > LBS_FIT_MAX_BATCHES || t.rows > LBS_FIT_MAX_ROWS || t.n > t.rows)
		abort();
	for (size_t i = 0; i < t.n; i++)
		if (!(t.batch[i] >= 1) || (i && !(t.batch[i] > t.batch[i - 1])) || !(t.time_s[i] > 0) ||
		    !(t.time_s[i] <= 3600))
			abort();
	lbs_fit f;
	if (t.n >= 2 && lbs_calib_fit(&lbs_cost_linear, t.batch, t.time_s, t.n, &f, &err) == LBS_OK)
		check_fit(&f.cost, &t);
	/* the robust line (what calibrate --blas and --torch fit): a cost as
	 * above, weights in [0, 1], its count of those at 0; held out on
	 * up to 64 batches (n fits of n points each) */
	double *w = t.n >= 2 ? malloc(t.n * sizeof *w) : NULL;
	size_t n_out;
	if (w && lbs_calib_fit_robust(t.batch, t.time_s, t.n, &f, w, &n_out, &err) == LBS_OK) {
		check_fit(&f.cost, &t);
		size_t zero = 0;
		for (size_t i = 0; i < t.n; i++) {
			if (!(w[i] >= 0 && w[i] <= 1))
				abort();
			zero += !(w[i] > 0);
		}
		if (zero != n_out || f.cost.t0_s < 0 || f.cost.per_sample_s < 0)
			abort();
		double mape;
		size_t nh;
		if (t.n <= 64 && lbs_calib_heldout_robust(t.batch, t.time_s, t.n, w, &mape, &nh, &err) == LBS_OK &&
		    (nh > t.n || (nh && !(mape >= 0))))
			abort();
	}
	free(w);
	if (t.n >= 3) {
		static const lbs_cost_ops *const kinds[] = { &lbs_cost_piecewise, &lbs_cost_power,
							     &lbs_cost_quadratic, NULL };
		lbs_kind_score score[4];
		size_t n_score;
		const lbs_cost_ops *best;
		if (lbs_calib_choose(kinds, t.batch, t.time_s, t.n, score, &n_score, &best, &err) == LBS_OK &&
		    lbs_calib_fit(best, t.batch, t.time_s, t.n, &f, &err) == LBS_OK)
			check_fit(&f.cost, &t);
	}
	lbs_step_times_free(&t);
	return 0;
}
