/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "traces/reader.h"

#include <string.h>

const lbs_trace_reader *const lbs_trace_readers[] = {
	&lbs_reader_lbsim,
	&lbs_reader_pai,
	&lbs_reader_azure,
	&lbs_reader_cloudwatch,
	&lbs_reader_uta_bw,
	&lbs_reader_alibaba_v2018,
	&lbs_reader_philly_cpu,
	&lbs_reader_philly_mem,
	&lbs_reader_philly_gpu,
	NULL,
};

const lbs_trace_reader *lbs_trace_reader_find(const char *name)
{
	for (size_t i = 0; lbs_trace_readers[i]; i++)
		if (strcmp(lbs_trace_readers[i]->name, name) == 0)
			return lbs_trace_readers[i];
	return NULL;
}

lbs_status lbs_reader_keep_ids(lbs_series_builder *b, const lbs_read_opts *opts, lbs_error *err)
{
	if (!b)
		return err->status;
	if (opts && opts->n_ids)
		return lbs_series_builder_only(b, opts->ids, opts->n_ids, err);
	return LBS_OK;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

const char *lbs_trace_check_value(const char *column, double v)
{
	if (strcmp(column, "availability") == 0 || strcmp(column, "bandwidth") == 0 ||
	    ends_with(column, "_time"))
		return v > 0 ? NULL : "must be > 0";
	if (ends_with(column, "_util"))
		return v >= 0 && v <= 1 ? NULL : "must be in [0, 1] (a fraction, not a percentage)";
	return NULL;
}
