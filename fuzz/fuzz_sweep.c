/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Fuzzes the sweep-file parser. The input is the sweep file; beside it in
 * the scratch folder lies `scenario.ini`, a small valid base scenario, so
 * that inputs naming it reach the checks of values and points. */
#include <string.h>

#include <gsl/gsl_errno.h>

#include "fuzz/harness.h"
#include "sweep/sweep.h"

static const char base[] =
	"[run]\nname = fuzz\nglobal_batch = 64\niterations = 10\n"
	"[model]\nname = m\nparameters = 1000\n"
	"[network]\ntopology = ring\nbandwidth = 10 Gbit/s\nlatency = 50 us\n"
	"[workers.a]\ncount = 2\ndevice = gpu\ncost = piecewise\nt_flat = 100 ms\n"
	"saturation_batch = 16\nper_sample = 2 ms\nmax_batch = 64\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	gsl_set_error_handler_off();
	if (!ready) {
		lbs_fuzz_file("scenario.ini", (const uint8_t *)base, strlen(base));
		ready = 1;
	}
	const char *path = lbs_fuzz_file("sweep.ini", data, size);
	lbs_error err = { 0 };
	lbs_sweep sw;
	if (lbs_sweep_load(&sw, path, &err) == LBS_OK)
		lbs_sweep_destroy(&sw);
	return 0;
}
