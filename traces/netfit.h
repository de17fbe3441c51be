/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Fitting EC2's network token bucket to Uta et al.'s runs
 * (traces/data/ec2-network-token-bucket-uta2020: per-second throughput of
 * one TCP stream between two fresh c5 instances, until the bucket empties).
 *
 * Per run (lbs_netfit_read_run), from its .bw file alone:
 * - trailing 0.000 rows (iperf3 already stopped) are dropped;
 * - the run depleted when the median of its last 5 rows is below 80% of the
 *   median of rows 1..10 (row 0 is a partial ramp-up second);
 * - baseline r = median of the last 5 rows (every depleting run has at
 *   least 5 baseline rows after the drop);
 * - the first baseline row k is the first row >= 1 below r + 10% of
 *   (burst - r); row k-1 holds the drop;
 * - burst R = mean of rows 1..k-2, the whole seconds spent bursting (the
 *   mean, not the median, because a bucket counts bytes);
 * - measured time to empty = (k - 1) + phi, where phi = (v[k-1] - r) / (R - r)
 *   is the share of the drop row still sent at the burst rate.
 * Rows are about one second apart ("sleep(1) plus loop overhead"), so times
 * are good to about a second.
 *
 * Per instance type (lbs_netfit_type): a bucket of S bytes, refilled at r,
 * sending at R, empties after t = S / (R - r). With r_type the mean of the
 * runs' baselines, S is the weighted least-squares fit through the origin
 * (gsl_fit_wmul) of t_j = S * x_j, x_j = 1 / (R_j - r_type), weights
 * 1 / t_j^2: it minimises the sum of squared relative errors of the
 * predicted times to empty, so short (9.7 Gbit/s) and long (5 Gbit/s) runs
 * count alike. */
#ifndef LBS_NETFIT_H
#define LBS_NETFIT_H

#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"
#include "traces/gen.h"

typedef struct lbs_netfit_run {
	char stem[128];       /* file name without .bw */
	char type[32];        /* instance type, the name's first field */
	size_t rows;          /* rows with traffic */
	bool depleted;
	size_t drop_row;      /* k: first baseline row (depleted runs) */
	double t_empty_s;     /* measured time to empty (depleted runs) */
	double burst_Gbps;    /* R (all rows but the first, if not depleted) */
	double baseline_Gbps; /* r (NAN if not depleted) */
} lbs_netfit_run;

/* Reads one .bw file; errors name the file and line. */
lbs_status lbs_netfit_read_run(const char *path, lbs_netfit_run *run, lbs_error *err);

/* Reads every .bw file of dir, in name order, into a new array (free it). */
lbs_status lbs_netfit_read_dir(const char *dir, lbs_netfit_run **runs, size_t *n, lbs_error *err);

/* Fits type `type` from the runs of that type (a burst above 7 Gbit/s is
 * the high regime, the typical burst; below, the low one). */
lbs_status lbs_netfit_type(const lbs_netfit_run *runs, size_t n, const char *type,
			   lbs_netbucket_type *out, lbs_error *err);

/* Predicted time to empty (s) of a full bucket of `t` sending at burst_Gbps;
 * INFINITY when that does not exceed the baseline. */
double lbs_netfit_predict(const lbs_netbucket_type *t, double burst_Gbps);

#endif
