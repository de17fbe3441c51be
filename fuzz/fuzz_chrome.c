/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Fuzzes the Chrome trace-event reader of lbsim whatif
 * (traces/read_chrome.c) and, for a trace that reads, the dependency model
 * and the analysis (whatif/). The input is the JSON. */
#include <gsl/gsl_errno.h>

#include "fuzz/harness.h"
#include "fuzz/whatif_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gsl_set_error_handler_off();
	const char *path = lbs_fuzz_file("trace.json", data, size);
	lbs_error err = { 0 };
	lbs_ops_trace t;
	if (lbs_ops_read_chrome(path, &t, &err) != LBS_OK)
		return 0;
	lbs_fuzz_whatif(&t);
	lbs_ops_free(&t);
	return 0;
}
