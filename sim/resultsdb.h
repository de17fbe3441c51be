/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What a results database holds, and the one check of a database lbsim is
 * given (doc/results.md, "Databases lbsim is given"): the schema's SQL and
 * version, the tables that sweeps, merges and what-if analyses add, the
 * names of lbsim's views, the limits of what is read, and the hardening of
 * a connection to a file that came from elsewhere. Every command that reads
 * a results database (merge, export, plot, report, views, predict) and every
 * one that writes to an existing one (the recorder: run, sweep, merge,
 * whatif, predict, testbed; views) checks its schema with
 * lbs_results_check_schema before it reads or writes a row. */
#ifndef LBS_RESULTSDB_H
#define LBS_RESULTSDB_H

#include <signal.h>
#include <sqlite3.h>
#include <stdbool.h>

#include "util/error.h"

#define LBS_SCHEMA_VERSION 4

/* The longest text or blob value, and row, lbsim reads from a results
 * database: 1 MiB where rows are copied or keyed (merge, appending, views,
 * predict; lbsim writes none over a few kB), 16 MiB where the views join a
 * run's settings into one text (export, plot, report: a scenario of 4096
 * worker groups has some 3 MB of them). SQLite refuses a longer one
 * (SQLITE_LIMIT_LENGTH) before it is held in memory. */
#define LBS_RESULTS_MAX_VALUE (1 << 20)
#define LBS_RESULTS_MAX_QUERY_VALUE (16 << 20)
/* The most tables, indexes, views and triggers a results database may hold
 * (lbsim's own are about 40). */
#define LBS_RESULTS_MAX_OBJECTS 1000
/* SQLite's virtual machine steps between two looks at the interrupt flag
 * (some microseconds). */
#define LBS_RESULTS_PROGRESS_STEPS 1000

/* The recorder's tables, as version LBS_SCHEMA_VERSION creates them; the
 * validations table alone (added to a version 2 file); the table of sweep
 * points (sweep and merge); the what-if tables (whatif). */
extern const char lbs_schema_sql[];
extern const char lbs_validations_sql[];
extern const char lbs_sweep_points_sql[];
/* The table of times to target (a run with [convergence] or [sync] adds it). */
extern const char lbs_run_targets_sql[];
extern const char lbs_run_staleness_sql[];
extern const char lbs_run_losses_sql[];
extern const char lbs_validation_targets_sql[];
extern const char lbs_validation_seeds_sql[];
extern const char lbs_whatif_schema_sql[];
/* The tables and view a hybrid run writes (hybrid/hybrid_cmd.c). */
extern const char lbs_hybrid_schema_sql[];
extern const char lbs_hybrid_policy_schema_sql[];
/* The names of the views lbsim stores in a results file, NULL-terminated. */
extern const char *const lbs_results_views[];

typedef enum lbs_results_use {
	/* Read: lbsim's tables must be tables with lbsim's columns; other
	 * objects (a user's own views, indexes, even triggers of a file opened
	 * read-only) are ignored, as lbsim never reads them. */
	LBS_RESULTS_READ,
	/* Written to: the same, and nothing in the schema that lbsim did not
	 * create (no trigger, no other table, view or index); an empty file
	 * (user_version 0, no objects) is new. */
	LBS_RESULTS_WRITE,
} lbs_results_use;

/* Hardens a connection to a database that came from elsewhere, as SQLite's
 * "defense against the dark arts" advises: defensive mode, an untrusted
 * schema (its views and triggers call no function with side effects), cell
 * size checks, values and rows of at most max_value bytes (> 0; 0 leaves
 * SQLite's limit), and, when interrupt is given, every statement stopped
 * (SQLITE_INTERRUPT) within LBS_RESULTS_PROGRESS_STEPS steps of *interrupt
 * becoming non-zero. */
void lbs_results_harden(sqlite3 *db, int max_value, const volatile sig_atomic_t *interrupt);

/* Checks the schema `schema` ("main", or an attached one) of db, opened
 * from path (for messages), for `use`: its user_version 2 to
 * LBS_SCHEMA_VERSION, every table that version has, each a table (not a
 * view or a virtual table) with exactly its columns in order and lbsim's
 * declaration (its CREATE TABLE text, comments and layout aside), and for
 * a file to be written nothing else but lbsim's objects. Refusals have the
 * status `refuse` (LBS_EINPUT for an input, LBS_EIO for an output) and name
 * the file and the table, column or object. *version (may be NULL) gets
 * the user_version; 0 for a new, empty file to be written. */
lbs_status lbs_results_check_schema(sqlite3 *db, const char *schema, const char *path, lbs_results_use use,
				    lbs_status refuse, int *version, lbs_error *err);

/* The check of a results database to read, as main, with LBS_EINPUT. */
lbs_status lbs_results_check(sqlite3 *db, const char *path, lbs_error *err);

/* The error of the last statement on db, after "WHAT: " (a printf format):
 * LBS_EINTR when it was interrupted (or *interrupt is set), LBS_EINPUT
 * naming the limit when a value was over it, else `status` with SQLite's
 * message. */
lbs_status lbs_results_failure(sqlite3 *db, const volatile sig_atomic_t *interrupt, lbs_status status,
			       lbs_error *err, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#endif
