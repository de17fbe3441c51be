/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Sweeps: a sweep file names a base scenario and the keys to vary; lbsim
 * expands their cartesian product into points, each one run of the
 * scenario with --set overrides, a policy and a seed, as `lbsim run` makes
 * it. Jobs of a few consecutive points each, one process a job, run in
 * parallel under GNU parallel, and the runs are merged into one results
 * database (analysis/merge.h).
 *
 *   [sweep]
 *   scenario = ../default.ini        ; relative to the sweep file
 *   [vary]
 *   workers.k80.count = 2, 4, 8      ; a list
 *   run.iterations = 100..400 *2     ; a range: 100, 200, 400
 *   policy = static, lbbsp-gpu
 *   seeds = 1..5
 *   [zip]                            ; keys that vary together, as one
 *   workers.v100.count = 1..8 *2
 *   run.global_batch = 128..1024 *2
 *
 * The format is in doc/sweeps.md. Loading checks everything a run would:
 * every value of every key, and every point as a whole, so that a sweep
 * that starts does not fail half-way on its input. */
#ifndef LBS_SWEEP_H
#define LBS_SWEEP_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/error.h"
#include "util/keys.h"
#include "sim/recorder.h"

#define LBS_SWEEP_MAX_POINTS 10000
#define LBS_SWEEP_MAX_KEYS 64

/* One varied key: a scenario key "SECTION.KEY", or "policy" or "seed". */
typedef struct lbs_sweep_key {
	char name[LBS_NAME_MAX * 2 + 16];
	int line;        /* where the sweep file gives it; 0: the scenario's default */
	char **values;
	size_t n_values;
	size_t dim;      /* the dimension it belongs to */
} lbs_sweep_key;

typedef struct lbs_sweep {
	char path[1024];
	char name[LBS_VALUE_MAX];      /* [sweep] name, or the file name without .ini */
	char scenario[2048];           /* the base scenario, resolved against the sweep's folder */
	lbs_detail detail;
	lbs_sweep_key *keys;           /* in dimension order; "policy" and "seed" always present */
	size_t n_keys;
	size_t *dim_size;              /* values of each dimension; the first varies slowest */
	size_t n_dims;
	size_t n_points;
	char hash[17];                 /* identity of the expansion: 16 hex digits */
	uint64_t *point_rows;          /* each point's iterations x workers: the worker_iterations
					  rows its run writes at --detail workers */
	size_t *run_as;                /* the point (0-based) whose run stands for each: itself,
					  or an earlier point it equals but for the options of
					  another policy ([policy.NAME] keys its policy ignores) */
	size_t n_runs;                 /* the points that run: those with run_as[p] == p */
} lbs_sweep;

/* Reads and checks a sweep file: its syntax and keys (errors name the file,
 * line and key), every value against the base scenario, then every point as
 * a run would build it. Errors are LBS_EINPUT. */
lbs_status lbs_sweep_load(lbs_sweep *sw, const char *path, lbs_error *err);
void lbs_sweep_destroy(lbs_sweep *sw);

/* The value of key k at point p (0-based, p < n_points). */
const char *lbs_sweep_value(const lbs_sweep *sw, size_t p, size_t k);

/* Expands one list item of a sweep file ("4", "4..1024 *2", "1..10 +3",
 * "0.5..1 +0.1") by calling add(ctx, value) for each value in order. A range
 * is NUM..NUM with an optional +STEP (integers or decimals) or *FACTOR
 * (integers); anything that does not start as NUM.. is one literal value.
 * Returns LBS_EINPUT with a message (no location) for a malformed range. */
lbs_status lbs_sweep_expand_item(const char *item, lbs_status (*add)(void *ctx, const char *value),
				 void *ctx, lbs_error *err);

/* A sweep's point job (--sweep-job): its database appears whole or not at
 * all, however the job ends. The runs go to OUTPUT.tmp.PID, linked into
 * place when all of them completed (never over a file another job put
 * there first). The job holds a shared lock on the work folder's job lock
 * while it runs, so that a sweep started after a crash can wait for jobs
 * still running, and with --parent it is stopped (SIGTERM: its run rolls
 * back) when GNU parallel, its parent, dies. */
typedef struct lbs_sweep_job {
	const char *output;
	char tmp[4200];
	int lock_fd;
	bool done; /* OUTPUT existed: nothing to do */
} lbs_sweep_job;

/* Starts job *j (zeroed but for lock_fd = -1) for `output`: takes the shared
 * lock on `lock` (waiting for it unless *interrupted becomes set), checks
 * that `parent` (0: none) is still this process's parent and asks to be sent
 * SIGTERM when it dies, and names the temporary database j->tmp that the
 * runs write. j->done is set when `output` exists already: nothing to run. */
lbs_status lbs_sweep_job_begin(lbs_sweep_job *j, const char *lock, pid_t parent, const char *output,
			       const volatile sig_atomic_t *interrupted, lbs_error *err);

/* Publishes the temporary database if status is LBS_OK, removes it
 * otherwise; releases the lock. Returns LBS_EIO (errno set) if the
 * database could not be put in place. */
lbs_status lbs_sweep_job_end(lbs_sweep_job *j, lbs_status status);

/* A job's database of points first..last (those of the job's points in
 * that range, in order, one run each) in the work folder's points/ folder
 * dir: NNNNNN.db for one point, FIRST-LAST.db (six digits each) for several. */
void lbs_sweep_segment_path(char *buf, size_t len, const char *dir, size_t first, size_t last);

/* Whether a file name in points/ is such a database, and of which points. */
bool lbs_sweep_segment_parse(const char *name, size_t *first, size_t *last);

/* A job of several points (`lbsim sweep --run-batch DIR --lock LOCK
 * --scenario FILE --key NAME... [--parent PID] [--detail D] [--max-rows N]
 * [--max-trace-rows N] -- POINT VALUE... POINT VALUE...`, the job lines of
 * sweep/exec.c): runs each point not yet in a database of DIR as `lbsim run
 * --sweep-job` would, the runs of consecutive points into one database put
 * in place whole (lbs_sweep_segment_path). A point that fails is reported
 * with its number and parameters and has no run; the others keep theirs.
 * Returns the exit status: the first failed point's, else 0. */
int lbs_sweep_batch_command(int argc, char **argv);

/* The `lbsim sweep` command (sweep/exec.c); returns the exit status. */
int lbs_sweep_command(int argc, char **argv);

#endif
