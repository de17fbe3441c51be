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
	const uint8_t *nul = memchr(data, 0, size);
	size_t file_len = nul ? (size_t)(nul - data) : size;
	const char *path = lbs_fuzz_file("scenario.ini", data, file_len);

	/* The overrides, copied so that each is a C string. */
	char *rest = NULL;
	const char *overrides[MAX_OVERRIDES];
	size_t n_overrides = 0;
	if (nul) {
		size_t len = size - file_len - 1;
		if (!(rest = malloc(len + 1)))
			return 0;
		memcpy(rest, nul + 1, len);
		rest[len] = '\0';
		for (char *p = rest; n_overrides < MAX_OVERRIDES && p <= rest + len; p += strlen(p) + 1)
			overrides[n_overrides++] = p;
	}

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
