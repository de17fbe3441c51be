/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Fuzzes the scenario parser: the input up to its first NUL byte is the
 * scenario file; each NUL-separated piece after it is a --set override
 * ("section.key=value"). A scenario that loads is also built into a run
 * (not executed), which is where sizes meet allocations. */
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "fuzz/harness.h"
#include "sim/run.h"
#include "sim/scenario.h"

#define MAX_OVERRIDES 4

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gsl_set_error_handler_off();
	const char *path, *overrides[MAX_OVERRIDES];
	char *rest;
	int n = lbs_fuzz_split(data, size, "scenario.ini", &path, overrides, MAX_OVERRIDES, &rest);
	if (n < 0)
		return 0;
	size_t n_overrides = (size_t)n;

	lbs_error err = { 0 };
	lbs_scenario sc;
	if (lbs_scenario_load(&sc, path, overrides, n_overrides, &err) == LBS_OK) {
		lbs_run run;
		if (lbs_run_create(&run, &sc, sc.policy.name, &err) == LBS_OK)
			lbs_run_destroy(&run);
		lbs_scenario_destroy(&sc);
	}
	free(rest);
	return 0;
}
