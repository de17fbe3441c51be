/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The recorder: the one writer of results.db. A run is one transaction: its
 * rows appear all together when it commits, or not at all. The schema is
 * versioned with PRAGMA user_version and documented in doc/results.md. */
#ifndef LBS_RECORDER_H
#define LBS_RECORDER_H

#include <sqlite3.h>

#include "sim/run.h"
#include "sim/resultsdb.h"

typedef enum lbs_detail {
	LBS_DETAIL_RUNS,       /* runs, run_config, workers */
	LBS_DETAIL_ITERATIONS, /* + iterations (default) */
	LBS_DETAIL_WORKERS     /* + worker_iterations: one row per worker per iteration */
} lbs_detail;
#define LBS_DETAIL_CHOICES "runs|iterations|workers"

/* The output-size guard of --detail workers: the worker_iterations rows one
 * command may write unless --max-rows says otherwise, and the bytes a row
 * takes in the file, as measured with SQLite 3.40 (doc/results.md): 37
 * without predictions or readings, 51 with both. */
#define LBS_DEFAULT_MAX_ROWS INT64_C(20000000)
#define LBS_ROW_BYTES_MIN 37
#define LBS_ROW_BYTES_MAX 51

typedef struct lbs_recorder {
	sqlite3 *db;
	char path[1024];
	lbs_detail detail;
	sqlite3_stmt *ins_iteration, *ins_worker_iteration, *ins_batch, *ins_var;
	sqlite3_int64 run_id;
	bool in_run;
	/* worker_iterations rows the run may still write (< 0: no limit; set
	 * after lbs_recorder_open, which sets -1): a run that would write more
	 * than estimated is stopped with LBS_EINPUT and rolled back. */
	int64_t row_budget;
	/* The runs it begins were measured on the testbed (runs.mode
	 * 'measured'), not simulated; set after lbs_recorder_open. */
	bool measured;
} lbs_recorder;

/* Opens (creating if needed) a results database and checks its schema
 * version. Several runs, from one process or several, append to one file. */
lbs_status lbs_recorder_open(lbs_recorder *r, const char *path, lbs_detail detail, lbs_error *err);

/* The same for a scratch file that is synced once when complete (a sweep
 * job's database, put in place only then): no commit, the schema's
 * included, waits for the disk, and a run that fails rolls back from a
 * journal in memory. A crash leaves the file unusable: it must not be kept. */
lbs_status lbs_recorder_open_scratch(lbs_recorder *r, const char *path, lbs_detail detail, lbs_error *err);

/* Parses a --max-rows value: a non-negative integer (1e6 forms allowed
 * when exact); 0 means no limit. */
bool lbs_parse_max_rows(const char *text, int64_t *out);

/* The command lines' --max-rows N (trace false: into *max_rows) and
 * --max-trace-rows N (trace true: applied to the trace readers). Prints
 * "CMD: --OPTION ARG: expected ..." and returns false if ARG is not an
 * integer >= 0. */
bool lbs_row_limit_option(const char *cmd, bool trace, const char *arg, int64_t *max_rows);

/* The guard itself, before anything is written: refuses with LBS_EINPUT,
 * giving the estimate, how it was made (`how`, e.g. "500 iterations x 12
 * workers x 2 runs"), the limit and how to raise it (`option`, e.g.
 * "--max-rows"), when rows > max_rows > 0. `what` starts the message (the
 * scenario or sweep file). */
lbs_status lbs_check_worker_rows(uint64_t rows, int64_t max_rows, const char *what, const char *how,
				 lbs_error *err);

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

/* One policy of an `lbsim validate` comparison (the validations table). */
/* One simulated run of a validation's ensemble (lbsim validate --sim-seeds). */
typedef struct lbs_validation_seed {
	int64_t seed;
	long long run_id;
	int64_t steps;  /* to target; 0: not reached */
	double time_s;
} lbs_validation_seed;

typedef struct lbs_validation_row {
	const char *policy;
	int64_t simulated_run;
	const char *measured_runs;      /* "3,5,7" */
	double simulated_iteration_s, measured_iteration_s, measured_iteration_sd_s;
	double simulated_speedup, measured_speedup, measured_speedup_sd; /* NaN: none */
	double error_mean, error_p95, batch_difference_mean;
	double machine_drift; /* slowest / fastest - 1 of the machine's probes (NaN: none) */
	/* the time to target (the validation_targets table), with has_target */
	bool has_target;
	double target_loss;
	int64_t simulated_steps;        /* 0: not reached */
	double simulated_time_s;
	int measured_reached, repeats;  /* repeats that reached it, of */
	double measured_steps, measured_steps_sd, measured_time_s, measured_time_sd_s; /* NaN: none */
	/* the simulated ensemble (the validation_seeds table): n_seeds runs */
	size_t n_seeds;
	const lbs_validation_seed *seeds;
} lbs_validation_row;

/* Writes one comparison (a new validation_id, left in r->run_id) in one
 * transaction. */
lbs_status lbs_recorder_validation(lbs_recorder *r, const lbs_validation_row *rows, size_t n,
				   lbs_error *err);

/* Rolls back an open run: it leaves no rows. */
void lbs_recorder_abort(lbs_recorder *r);

void lbs_recorder_close(lbs_recorder *r);

/* Whether path names a real file to keep results in: not "" (SQLite's
 * temporary database), ":memory:", or a URI ("file:...", which SQLite opens
 * as it says, in memory with mode=memory), all of which it throws away at
 * exit. LBS_EUSAGE, naming `option` ("-o"), otherwise. Every command that
 * writes a database calls it before any work; lbs_recorder_open too. */
lbs_status lbs_recorder_check_path(const char *option, const char *path, lbs_error *err);

/* Removes the results file at path and SQLite's journal beside it (a file
 * the caller created and no run got into). */
void lbs_recorder_remove(const char *path);

/* The busy handler of every connection that writes results: waits up to
 * 60 s for another writer's lock, but gives up at once on SIGINT or
 * SIGTERM (util/outfile.h, lbs_signals_seen). */
void lbs_recorder_busy(sqlite3 *db);

#endif
