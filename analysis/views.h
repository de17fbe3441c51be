/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The analysis views of a results database: the fixed ones of
 * analysis/views.sql, and two written for each file from what it holds:
 * run_keys, one row per run with a column for each key that varies among
 * the runs of a scenario, and speedup_by_size with those columns. lbsim
 * stores them in every results file it writes (so that any SQLite client
 * or pandas sees them) and, for its own reading, adds them to a read-only
 * connection as temporary views. */
#ifndef LBS_VIEWS_H
#define LBS_VIEWS_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/buf.h"
#include "util/error.h"

/* A scenario key whose value differs among the runs of one scenario. */
typedef struct lbs_varied_key {
	char section[128], key[128];
	char name[260];   /* "section.key": its column in run_keys, as written */
	bool numeric;     /* every value is a number (with one unit, or a quantity) */
	char unit[32];    /* the numbers' unit: as written ("Gbit/s"), "s", "B", "B/s" or "" */
	char column[300]; /* run_keys' column of the numbers: name, or "name [unit]" */
} lbs_varied_key;

/* The keys that vary, in section and key order. *keys is malloc'd (NULL
 * when none). Errors: LBS_EIO. */
lbs_status lbs_views_keys(sqlite3 *db, lbs_varied_key **keys, size_t *n, lbs_error *err);

/* Writes into sql the statements that (re)create every analysis view:
 * temporary views when `temp`, else views stored in the main schema (the
 * older copies dropped first). */
lbs_status lbs_views_sql(sqlite3 *db, bool temp, lbs_buf *sql, lbs_error *err);

/* Stores the views in the file open read-write as db (path for messages),
 * replacing older copies, in one transaction. Errors: LBS_EIO. */
lbs_status lbs_views_store(sqlite3 *db, const char *path, lbs_error *err);

/* Replaces the temporary views that the others are built on (run_setting,
 * run_point, run_variant, run_unique, speedup, run_keys), as
 * lbs_analysis_open makes them, with temporary tables of their rows: a
 * query of a view computes it again, and the plots' and the report's
 * queries read them once a row (a sweep of a few hundred runs took
 * minutes). For a connection that reads a file that does not change; a
 * second call does nothing. Errors: LBS_EIO. */
lbs_status lbs_views_materialize(sqlite3 *db, lbs_error *err);

/* Quotes s as an SQL identifier ("a.b" -> "\"a.b\""). */
void lbs_views_ident(lbs_buf *b, const char *s);

/* The `lbsim views RESULTS.db` command; returns the exit status. */
int lbs_views_command(int argc, char **argv);

#endif
