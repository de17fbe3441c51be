/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Reading results for analysis: a results database opened read-only with
 * the views of analysis/views.sql as temporary views (the file itself is
 * never changed), and query results written as CSV. */
#ifndef LBS_EXPORT_H
#define LBS_EXPORT_H

#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>

#include "util/error.h"
#include "analysis/files.h"

/* Opens an lbsim results database read-only and adds the analysis views as
 * temporary views. Errors (LBS_EINPUT): the file is missing, not SQLite,
 * or not a results database of the recorder's schema version. */
lbs_status lbs_analysis_open(sqlite3 **db, const char *path, lbs_error *err);

/* The same, its statements stopped (SQLITE_INTERRUPT; LBS_EINTR from
 * lbs_export_csv) once *interrupt is non-zero. The file is checked as every
 * results database given to lbsim is (sim/resultsdb.h), and values of at
 * most LBS_RESULTS_MAX_QUERY_VALUE bytes are read. */
lbs_status lbs_analysis_open_interruptible(sqlite3 **db, const char *path,
					   const volatile sig_atomic_t *interrupt, lbs_error *err);

/* Writes the rows of `sql` (with parameters ?1.. bound to the integers
 * params[0..n)) as
 * CSV with a header line: RFC 4180 quoting, NULL as an empty field. Returns
 * the rows written through *rows (may be NULL). Errors: LBS_EIO. */
lbs_status lbs_export_csv(sqlite3 *db, const char *sql, const long long *params, size_t n_params,
			  FILE *out, long long *rows, lbs_error *err);

/* The `lbsim export DB VIEW` command; returns the exit status. */
int lbs_export_command(int argc, char **argv);

#endif
