/* SPDX-License-Identifier: GPL-3.0-or-later */
/* EC2 network token-bucket runs of Uta et al., NSDI'20
 * (alexandru-uta/cloud_network_variability_data, token_bucket_study): a
 * `.bw` file has one line per second of one TCP stream between two fresh
 * c5 instances, no header:
 *
 *   crnt bw = 9.691
 *
 * in Gbit/s. Row k (from 0) is the stream's k-th second: the series is
 * indexed by time k s and its column `bandwidth` is in bytes per second
 * (Gbit/s * 1.25e8), sample-and-hold for that second. Row 0 is the partial
 * ramp-up second, kept as measured.
 *
 * Runs that never depleted end with rows of 0.000, written after iperf3
 * had already stopped (the data set's README): a trailing run of zero rows
 * is dropped. A zero anywhere else is an error, since no transfer could
 * finish on it. */
#include <stdio.h>
#include <string.h>

#include "traces/csvread.h"
#include "traces/reader.h"

#define PREFIX "crnt bw = "
#define BYTES_PER_GBIT 1.25e8

typedef struct uta_ctx {
	const char *path;
	int64_t row;          /* rows read, zeros included */
	int64_t zeros;        /* zero rows pending (dropped if nothing follows) */
	int64_t zero_line;    /* the first of them */
	lbs_series_builder *b;
} uta_ctx;

static lbs_status on_row(void *p, const lbs_csv_row *row, lbs_error *err)
{
	uta_ctx *c = p;
	const char *f = row->field[0];
	if (row->n != 1 || strncmp(f, PREFIX, strlen(PREFIX)) != 0)
		return lbs_trace_error(err, c->path, row->line, "bw", "expected 'crnt bw = <Gbit/s>'");
	double gbps;
	const char *why = lbs_csv_real(f + strlen(PREFIX), &gbps);
	if (why)
		return lbs_trace_error(err, c->path, row->line, "bw", "'%s' %s", f + strlen(PREFIX), why);
	if (gbps < 0)
		return lbs_trace_error(err, c->path, row->line, "bw", "'%s' must be >= 0", f + strlen(PREFIX));
	int64_t k = c->row++;
	if (gbps == 0) {
		if (!c->zeros++)
			c->zero_line = row->line;
		return LBS_OK;
	}
	if (c->zeros)
		return lbs_trace_error(err, c->path, c->zero_line, "bw",
				       "bandwidth 0 before the end of the run (only trailing zero rows, "
				       "written after iperf3 stopped, are dropped)");
	double bps = gbps * BYTES_PER_GBIT;
	return lbs_series_builder_add(c->b, NULL, (double)k, &bps, row->line, err);
}

static lbs_status read_uta(const char *path, const lbs_read_opts *opts, lbs_series_set **out,
			   lbs_error *err)
{
	(void)opts;
	*out = NULL;
	static const char *const cols[] = { "bandwidth" };
	uta_ctx c = { .path = path };
	c.b = lbs_series_builder_create(path, "uta-bw", LBS_INDEX_TIME, "second", 1, cols, false, false,
					LBS_DUP_ERROR, err);
	if (!c.b)
		return err->status;
	lbs_status st = lbs_csv_read(path, on_row, NULL, &c, err);
	if (st == LBS_OK && c.row == 0)
		st = lbs_error_set(err, LBS_EINPUT, "%s: empty file (expected lines 'crnt bw = <Gbit/s>')", path);
	if (st != LBS_OK) {
		lbs_series_builder_destroy(c.b);
		return st;
	}
	return lbs_series_builder_finish(c.b, out, err);
}

const lbs_trace_reader lbs_reader_uta_bw = {
	"uta-bw", "EC2 network token-bucket runs (Uta et al. NSDI'20 `.bw`): bandwidth per second",
	read_uta,
};
