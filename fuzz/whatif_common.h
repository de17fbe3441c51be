/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What the what-if harnesses (fuzz/fuzz_ops.c, fuzz/fuzz_chrome.c) do with
 * a trace that reads: the model built from it, and, when it builds, the
 * whole analysis, under the invariants every accepted trace must keep. */
#ifndef LBS_FUZZ_WHATIF_COMMON_H
#define LBS_FUZZ_WHATIF_COMMON_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "traces/read_ops.h"
#include "whatif/forward.h"
#include "whatif/model.h"
#include "whatif/whatif.h"

static inline void lbs_fuzz_whatif(lbs_ops_trace *t)
{
	lbs_error err = { 0 };
	lbs_wi_model m;
	/* dsp 1 and 2: with and without data-parallel collectives */
	for (int dsp = 1; dsp <= 2; dsp++) {
		if (lbs_wi_model_build(&m, t, dsp, &err) != LBS_OK)
			continue;
		/* a model that builds has each row in one op instance, each
		 * instance from one row: its memory is linear in the rows */
		if (m.n_inst * m.n_ops != t->n) {
			fprintf(stderr, "fuzz: %zu op instances from %zu rows\n", m.n_inst * m.n_ops, t->n);
			abort();
		}
		lbs_wi_result res;
		if (lbs_wi_analyse(&m, &res, &err) == LBS_OK) {
			/* an analysis that succeeds gives finite figures */
			if (!isfinite(res.S) || !isfinite(res.L) || !(res.S > 0)) {
				fprintf(stderr, "fuzz: S = %g, L = %g\n", res.S, res.L);
				abort();
			}
			for (size_t k = 0; k < res.n_policies; k++)
				if (!isfinite(res.policy[k].recovered)) {
					fprintf(stderr, "fuzz: policy %s recovered %g\n", res.policy[k].name,
						res.policy[k].recovered);
					abort();
				}
			/* --forward on small traces: the job rebuilt, a refusal or
			 * finite, non-negative mean steps under static and resplit */
			lbs_wi_fwd_job job;
			if (t->n <= 20000 && m.n_steps <= 64 && lbs_wi_fwd_build(&job, &m, &res, 1, 4, false, &err) == LBS_OK) {
				const char *pol[] = { "static", "resplit", "lbbsp" };
				for (size_t k = 0; k < 3; k++) {
					double mean = NAN;
					int64_t changes;
					if (lbs_wi_fwd_run(&job, pol[k], k == 2, k == 2, &mean, &changes, NULL, &err) == LBS_OK &&
					    !(mean >= 0 && isfinite(mean))) {
						fprintf(stderr, "fuzz: forward %s mean step %g\n", pol[k], mean);
						abort();
					}
				}
				lbs_wi_fwd_free(&job);
			}
			lbs_wi_result_free(&res);
		}
		lbs_wi_model_free(&m);
	}
}

#endif
