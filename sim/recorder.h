/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The recorder: the one writer of results.db. A run is one transaction: its
 * rows appear all together when it commits, or not at all. The schema is
 * versioned with PRAGMA user_version and documented in doc/results.md. */
#ifndef LBS_RECORDER_H
#define LBS_RECORDER_H

#include <sqlite3.h>

#include "sim/run.h"

#define LBS_SCHEMA_VERSION 2

typedef enum lbs_detail {
	LBS_DETAIL_RUNS,       /* runs, run_config, workers */
	LBS_DETAIL_ITERATIONS, /* + iterations (default) */
	LBS_DETAIL_WORKERS     /* + worker_iterations: one row per worker per iteration */
} lbs_detail;
#define LBS_DETAIL_CHOICES "runs|iterations|workers"

typedef struct lbs_recorder {
	sqlite3 *db;
	char path[1024];
	lbs_detail detail;
	sqlite3_stmt *ins_iteration, *ins_worker_iteration, *ins_batch, *ins_var;
	sqlite3_int64 run_id;
	bool in_run;
} lbs_recorder;

/* Opens (creating if needed) a results database and checks its schema
 * version. Several runs, from one process or several, append to one file. */
lbs_status lbs_recorder_open(lbs_recorder *r, const char *path, lbs_detail detail, lbs_error *err);

/* Starts the run's transaction and writes what is known before it runs. */
lbs_status lbs_recorder_begin(lbs_recorder *r, const lbs_run *run, lbs_error *err);

/* An lbs_iteration_fn: ctx is the recorder. */
lbs_status lbs_recorder_iteration(void *ctx, const lbs_iteration_record *rec, lbs_error *err);

/* Writes the run's summary and commits. wall_s: real seconds it took. */
lbs_status lbs_recorder_commit(lbs_recorder *r, const lbs_run *run, double wall_s, lbs_error *err);

/* One predictor's score in an `lbsim predict` evaluation. */
typedef struct lbs_predictor_score {
	const char *predictor;
	long series, steps, fallbacks;
	double rmse, mae, mape_percent;
} lbs_predictor_score;

/* Writes one evaluation (a new eval_id, its id left in r->run_id) in one
 * transaction. */
lbs_status lbs_recorder_predictor_errors(lbs_recorder *r, const char *source,
					const lbs_predictor_score *rows, size_t n, lbs_error *err);

/* Rolls back an open run: it leaves no rows. */
void lbs_recorder_abort(lbs_recorder *r);

void lbs_recorder_close(lbs_recorder *r);

/* The schema as SQL, for the docs. */
extern const char lbs_schema_sql[];

#endif
