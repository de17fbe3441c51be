/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Fuzzes every trace reader of the registry with the same bytes, without
 * and with the options a scenario may give (an id filter, a metric). */
#include <gsl/gsl_errno.h>

#include "fuzz/harness.h"
#include "traces/reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gsl_set_error_handler_off();
	const char *path = lbs_fuzz_file("trace.csv", data, size);
	static const char *const ids[] = { "1", "m_1", "vm1" };
	const lbs_read_opts opts[] = {
		{ 0 },
		{ .metric = "CPUUtilization", .ids = ids, .n_ids = 3 },
	};
	for (const lbs_trace_reader *const *r = lbs_trace_readers; *r; r++)
		for (size_t o = 0; o < sizeof opts / sizeof *opts; o++) {
			lbs_error err = { 0 };
			lbs_series_set *set = NULL;
			if ((*r)->read(path, &opts[o], &set, &err) == LBS_OK)
				lbs_series_set_destroy(set);
		}
	return 0;
}
