/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Merging results databases: every run of one file is copied into another,
 * each in its own transaction, with a new run_id there. It is how a sweep
 * gathers its points (each `lbsim run` writes its own small file) and how
 * shards run on several machines are joined. Merging is idempotent: a run
 * already in the output (its runs row equal in every column but run_id, or
 * the same sweep point) is skipped, so a merge that was interrupted or
 * repeated adds each run once. */
#ifndef LBS_MERGE_H
#define LBS_MERGE_H

#include <signal.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"

typedef struct lbs_merge {
	sqlite3 *db;
	char path[1024];
	char **tables; /* the output's tables with a run_id column: runs first */
	size_t n_tables;
} lbs_merge;

/* Marks every run merged from one file as point `point` of a sweep, with the
 * point's parameters. */
typedef struct lbs_merge_tag {
	const char *sweep, *hash;
	int64_t point;
	size_t n;
	const char *const *keys, *const *values;
} lbs_merge_tag;

typedef struct lbs_merge_counts {
	size_t added, skipped;
	int64_t first_run_id, last_run_id; /* of the runs added (0 when none) */
} lbs_merge_counts;

/* Opens (creating if needed) the output: an lbsim results database of the
 * recorder's schema version. Errors are LBS_EIO. */
lbs_status lbs_merge_open(lbs_merge *m, const char *path, lbs_error *err);

/* Checks that `in` is a results database that can be merged into `out`
 * (not the same file). Errors are LBS_EINPUT. */
lbs_status lbs_merge_check(const char *in, const char *out, lbs_error *err);

/* Whether the output holds point `point` of the sweep with identity `hash`. */
bool lbs_merge_has_point(lbs_merge *m, const char *hash, int64_t point);

/* Copies every run of `in`, one transaction each, in run_id order; tag (or
 * NULL) marks them as a sweep point. Stops with LBS_EINTR between runs when
 * *interrupt becomes non-zero. Adds to *counts. */
lbs_status lbs_merge_file(lbs_merge *m, const char *in, const lbs_merge_tag *tag,
			  const volatile sig_atomic_t *interrupt, lbs_merge_counts *counts, lbs_error *err);

/* Copies the runs of `in`, a sweep job's database holding exactly n runs:
 * the i-th in run_id order is point tags[i]. All of them go in one
 * transaction (points already in the output are skipped); LBS_EINPUT if
 * the file holds another number of runs. */
lbs_status lbs_merge_points(lbs_merge *m, const char *in, const lbs_merge_tag *tags, size_t n,
			    const volatile sig_atomic_t *interrupt, lbs_merge_counts *counts, lbs_error *err);

void lbs_merge_close(lbs_merge *m);

/* The `lbsim merge OUT.db IN.db...` command; returns the exit status. */
int lbs_merge_command(int argc, char **argv);

#endif
