/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Fuzzes the hybrid scenario reader and what it feeds: the input up to its
 * first NUL byte is the scenario file (a [hybrid] section makes it one);
 * each NUL-separated piece after it is a --set override. A scenario that
 * loads (fail-slow episodes drawn, lengths read) is costed into a plan
 * when it is small (at most 256 GPUs and 64 micro-batches a replica), and
 * the plan runs two steps, whose lengths must be finite and positive. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "fuzz/harness.h"
#include "hybrid/hybrid.h"
#include "hybrid/scenario.h"

#define MAX_OVERRIDES 4

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gsl_set_error_handler_off();
	const char *path, *overrides[MAX_OVERRIDES];
	char *rest;
	int n = lbs_fuzz_split(data, size, "hybrid.ini", &path, overrides, MAX_OVERRIDES, &rest);
	if (n < 0)
		return 0;
	size_t n_overrides = (size_t)n;

	lbs_error err = { 0 };
	lbs_hy_scenario sc;
	if (lbs_hy_scenario_load(&sc, path, overrides, n_overrides, &err) == LBS_OK) {
		const lbs_hy_job_spec *j = &sc.job;
		int64_t m = j->micro_batches ? j->micro_batches : j->global_batch / (j->dp * j->micro_batch);
		lbs_hy_built b;
		if (sc.n_gpus <= 256 && m <= 64 && lbs_hy_plan_build(&sc, &b, &err) == LBS_OK) {
			lbs_hy_graph gr;
			lbs_hy_sim sim;
			if (lbs_hy_graph_build(&gr, &b.plan, &err) == LBS_OK) {
				if (lbs_hy_sim_create(&sim, &gr, &err) == LBS_OK) {
					for (int k = 0; k < 2; k++) {
						double step = NAN;
						if (lbs_hy_sim_step(&sim, &step, &err) != LBS_OK)
							break;
						if (!(isfinite(step) && step > 0))
							abort(); /* a finding: a step of no or infinite time */
					}
					lbs_hy_sim_destroy(&sim);
				}
				lbs_hy_graph_free(&gr);
			}
			lbs_hy_built_free(&b);
		}
		lbs_hy_scenario_destroy(&sc);
	}
	free(rest);
	return 0;
}
