/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "sim/recorder.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "util/outfile.h"
#include "util/units.h"
#include "traces/series.h"

static lbs_status db_error(lbs_recorder *r, lbs_error *err, const char *what)
{
	return lbs_error_set(err, LBS_EIO, "%s: %s: %s", r->path, what,
			     r->db ? sqlite3_errmsg(r->db) : "cannot open");
}

static lbs_status exec(lbs_recorder *r, const char *sql, lbs_error *err)
{
	if (sqlite3_exec(r->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return db_error(r, err, "database error");
	return LBS_OK;
}

bool lbs_parse_max_rows(const char *text, int64_t *out)
{
	char why[128];
	return lbs_parse_int(text, out, why, sizeof why) && *out >= 0;
}

bool lbs_row_limit_option(const char *cmd, bool trace, const char *arg, int64_t *max_rows)
{
	int64_t v;
	if (!lbs_parse_max_rows(arg, &v)) {
		fprintf(stderr, "%s: --%s %s: expected an integer >= 0 (0: no limit)\n", cmd,
			trace ? "max-trace-rows" : "max-rows", arg);
		return false;
	}
	if (trace)
		lbs_trace_max_rows_set(v);
	else
		*max_rows = v;
	return true;
}

/* "12.3 GB", "456 MB", "2.07 kB": a size for messages. */
static const char *approx_size(double bytes, char *buf, size_t len)
{
	if (bytes >= 1e9)
		snprintf(buf, len, "%.3g GB", bytes / 1e9);
	else if (bytes >= 1e6)
		snprintf(buf, len, "%.3g MB", bytes / 1e6);
	else
		snprintf(buf, len, "%.3g kB", bytes / 1e3);
	return buf;
}

lbs_status lbs_check_worker_rows(uint64_t rows, int64_t max_rows, const char *what, const char *how,
				 lbs_error *err)
{
	if (max_rows <= 0 || rows <= (uint64_t)max_rows)
		return LBS_OK;
	char lo[32], hi[32];
	return lbs_error_set(err, LBS_EINPUT,
			     "%s: --detail workers would write %llu rows to worker_iterations (%s), more "
			     "than the limit of %lld rows (about %s to %s at %d to %d bytes a row): raise "
			     "the limit with --max-rows N (0: no limit), or record less (--detail "
			     "iterations, or fewer iterations, workers or runs)",
			     what, (unsigned long long)rows, how, (long long)max_rows,
			     approx_size((double)rows * LBS_ROW_BYTES_MIN, lo, sizeof lo),
			     approx_size((double)rows * LBS_ROW_BYTES_MAX, hi, sizeof hi), LBS_ROW_BYTES_MIN,
			     LBS_ROW_BYTES_MAX);
}

/* Waits for another writer's lock 60 s at most, in steps of 10 ms, and
 * not at all once SIGINT or SIGTERM came (lbs_signals_seen). */
static int busy_wait(void *ctx, int count)
{
	(void)ctx;
	if (count >= 6000 || lbs_signals_seen())
		return 0;
	nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	return 1;
}

void lbs_recorder_busy(sqlite3 *db)
{
	sqlite3_busy_handler(db, busy_wait, NULL);
}

lbs_status lbs_recorder_check_path(const char *option, const char *path, lbs_error *err)
{
	if (*path && strcmp(path, ":memory:") != 0 && strncasecmp(path, "file:", 5) != 0)
		return LBS_OK;
	return lbs_error_set(err, LBS_EUSAGE, "%s '%s': not a file path: %s (give a path such as results.db)",
			     option, path, !*path ? "an empty name is SQLite's temporary database, deleted at exit"
			     : *path == ':' ? "it is SQLite's in-memory database, lost at exit"
			     : "it is a SQLite URI, which may keep the results in memory (mode=memory) or "
			       "elsewhere; ./file:... names a file of that name");
}

static lbs_status open_db(lbs_recorder *r, const char *path, lbs_detail detail, bool scratch, lbs_error *err)
{
	memset(r, 0, sizeof *r);
	lbs_status bad = lbs_recorder_check_path("results database", path, err);
	if (bad != LBS_OK)
		return bad;
	snprintf(r->path, sizeof r->path, "%s", path);
	r->detail = detail;
	r->row_budget = -1;
	if (sqlite3_open_v2(path, &r->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
		lbs_status st = db_error(r, err, "cannot open results database");
		lbs_recorder_close(r);
		return st;
	}
	lbs_recorder_busy(r->db); /* several processes may append */
	lbs_results_harden(r->db, 0, NULL);
	lbs_status st = exec(r, scratch ? "PRAGMA foreign_keys = ON; PRAGMA synchronous = OFF; "
				   "PRAGMA journal_mode = MEMORY" : "PRAGMA foreign_keys = ON", err);
	if (st != LBS_OK) {
		lbs_recorder_close(r);
		return st;
	}
	/* Create the schema under an exclusive lock, so two processes starting
	 * on a new file do not both try. */
	if ((st = exec(r, "BEGIN IMMEDIATE", err)) != LBS_OK) {
		lbs_recorder_close(r);
		return st;
	}
	/* The whole schema is checked before anything is written, in this
	 * transaction: a file that is refused is left as it was (an older
	 * version is upgraded only once it is known to be lbsim's). */
	int version = -1;
	st = lbs_results_check_schema(r->db, "main", path, LBS_RESULTS_WRITE, LBS_EIO, &version, err);
	if (st == LBS_OK && version == 0) {
		st = exec(r, lbs_schema_sql, err);
	} else if (st == LBS_OK && version == 2) {
		/* Every run of a version 2 file was simulated. */
		st = exec(r, "ALTER TABLE runs ADD COLUMN mode TEXT NOT NULL DEFAULT 'simulated'", err);
		if (st == LBS_OK)
			st = exec(r, lbs_validations_sql, err);
	} else if (st == LBS_OK && version == 3) {
		st = exec(r, "ALTER TABLE validations ADD COLUMN machine_drift REAL", err);
	}
	if (st == LBS_OK && version != LBS_SCHEMA_VERSION) {
		char sql[64];
		snprintf(sql, sizeof sql, "PRAGMA user_version = %d", LBS_SCHEMA_VERSION);
		st = exec(r, sql, err);
	}
	/* The statements too before the commit: a file they cannot write to
	 * is refused unchanged. */
	if (st == LBS_OK &&
	    (sqlite3_prepare_v2(r->db,
				"INSERT INTO iterations VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
				-1, &r->ins_iteration, NULL) != SQLITE_OK ||
	     sqlite3_prepare_v2(r->db, "INSERT INTO batches VALUES (?1, ?2, ?3, ?4)", -1, &r->ins_batch,
				NULL) != SQLITE_OK ||
	     sqlite3_prepare_v2(r->db, "INSERT INTO policy_vars VALUES (?1, ?2, ?3, ?4)", -1, &r->ins_var,
				NULL) != SQLITE_OK ||
	     sqlite3_prepare_v2(r->db, "INSERT INTO worker_iterations VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
				-1, &r->ins_worker_iteration, NULL) != SQLITE_OK))
		st = db_error(r, err, "cannot prepare statements");
	if (st == LBS_OK)
		st = exec(r, "COMMIT", err);
	if (st != LBS_OK) {
		sqlite3_exec(r->db, "ROLLBACK", NULL, NULL, NULL);
		lbs_recorder_close(r);
	}
	return st;
}

lbs_status lbs_recorder_open(lbs_recorder *r, const char *path, lbs_detail detail, lbs_error *err)
{
	return open_db(r, path, detail, false, err);
}

lbs_status lbs_recorder_open_scratch(lbs_recorder *r, const char *path, lbs_detail detail, lbs_error *err)
{
	return open_db(r, path, detail, true, err);
}

static const char *detail_name(lbs_detail d)
{
	return d == LBS_DETAIL_RUNS ? "runs" : d == LBS_DETAIL_ITERATIONS ? "iterations" : "workers";
}

/* Starts the transaction a batch of rows goes into: the current UTC time
 * (ISO 8601) into now[32] and, when next_id_sql is given, the id of the
 * first new row (what it selects, 1 if it selects nothing) into *id. */
static lbs_status begin_rows(lbs_recorder *r, const char *next_id_sql, sqlite3_int64 *id, char now[32],
			     lbs_error *err)
{
	lbs_status st = exec(r, "BEGIN IMMEDIATE", err);
	if (st != LBS_OK)
		return st;
	r->in_run = true;
	if (next_id_sql) {
		sqlite3_stmt *q = NULL;
		*id = 1;
		if (sqlite3_prepare_v2(r->db, next_id_sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
			*id = sqlite3_column_int64(q, 0);
		sqlite3_finalize(q);
	}
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(now, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return LBS_OK;
}

lbs_status lbs_recorder_begin(lbs_recorder *r, const lbs_run *run, lbs_error *err)
{
	const lbs_scenario *sc = run->sc;
	char now[32];
	lbs_status st = begin_rows(r, NULL, NULL, now, err);
	if (st != LBS_OK)
		return st;
	sqlite3_stmt *q = NULL;
	/* The summary columns are filled at commit; nobody sees this row before. */
	if (sqlite3_prepare_v2(r->db,
			       "INSERT INTO runs (scenario, scenario_path, description, policy, seed, "
			       "n_workers, global_batch_samples, gradient_bytes, iterations, "
			       "iterations_per_epoch, sim_time_s, mean_iteration_s, mean_compute_s, "
			       "mean_aggregation_s, mean_straggler_gap_s, mean_decision_s, "
			       "throughput_samples_per_s, wall_s, events, detail, lbsim_version, created_at, mode) "
			       "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 0, 0, 0, 0, 0, 0, 0, 0, 0, "
			       "?11, ?12, ?13, ?14)", -1, &q, NULL) != SQLITE_OK)
		return db_error(r, err, "cannot record the run");
	sqlite3_bind_text(q, 1, sc->run.name, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 2, sc->path, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 3, sc->run.description, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 4, run->policy->name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(q, 5, sc->run.seed);
	sqlite3_bind_int64(q, 6, sc->n_workers);
	sqlite3_bind_int64(q, 7, sc->run.global_batch);
	sqlite3_bind_double(q, 8, sc->model.gradient_bytes);
	sqlite3_bind_int64(q, 9, sc->iterations);
	if (sc->iterations_per_epoch)
		sqlite3_bind_int64(q, 10, sc->iterations_per_epoch);
	sqlite3_bind_text(q, 11, detail_name(r->detail), -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 12, PACKAGE_VERSION, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 13, now, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(q, 14, r->measured ? "measured" : "simulated", -1, SQLITE_STATIC);
	int rc = sqlite3_step(q);
	sqlite3_finalize(q);
	if (rc != SQLITE_DONE)
		return db_error(r, err, "cannot record the run");
	r->run_id = sqlite3_last_insert_rowid(r->db);

	if (sqlite3_prepare_v2(r->db, "INSERT INTO run_config VALUES (?1, ?2, ?3, ?4)", -1, &q, NULL))
		return db_error(r, err, "cannot record the configuration");
	for (size_t i = 0; i < sc->n_config; i++) {
		sqlite3_bind_int64(q, 1, r->run_id);
		sqlite3_bind_text(q, 2, sc->config[i].section, -1, SQLITE_STATIC);
		sqlite3_bind_text(q, 3, sc->config[i].key, -1, SQLITE_STATIC);
		/* --policy may run another policy than the file's [policy] name. */
		bool is_name = !strcmp(sc->config[i].section, "policy") && !strcmp(sc->config[i].key, "name");
		sqlite3_bind_text(q, 4, is_name ? run->policy->name : sc->config[i].value, -1, SQLITE_STATIC);
		rc = sqlite3_step(q);
		sqlite3_reset(q);
		if (rc != SQLITE_DONE) {
			sqlite3_finalize(q);
			return db_error(r, err, "cannot record the configuration");
		}
	}
	sqlite3_finalize(q);

	/* One statement per group, its workers' rows generated inside SQLite
	 * (a group's workers are consecutive and alike): no bind, step and
	 * reset per worker. The numbers first..end-1 come from a join of a
	 * 1024-row table with itself (hi * 1024 + lo), not from a recursive
	 * CTE counting to end: the recursion's queue cost a third of the
	 * insert (at 1,000,000 workers, 0.32 s against 0.23 s of CPU). The
	 * rows and so the table are the same; their insert order is that of
	 * the nested loop, ascending, which keeps the B-tree appending. */
	_Static_assert(LBS_MAX_WORKERS <= 1024 * 1024, "a group's workers are numbered hi * 1024 + lo");
	if (sqlite3_prepare_v2(r->db,
			       "WITH RECURSIVE d(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM d WHERE i < 1023) "
			       "INSERT INTO workers SELECT ?1, w, ?4, ?5, ?6, ?7, ?8 FROM "
			       "(SELECT ?2 + hi.i * 1024 + lo.i AS w FROM d AS hi, d AS lo WHERE hi.i * 1024 < ?3 - ?2) "
			       "WHERE w < ?3",
			       -1, &q, NULL))
		return db_error(r, err, "cannot record the workers");
	size_t first = 0;
	for (size_t gi = 0; gi < sc->n_groups; gi++) {
		const lbs_group_spec *g = &sc->groups[gi];
		size_t end = first + (size_t)g->count;
		if (g->count > 0) {
			sqlite3_bind_int64(q, 1, r->run_id);
			sqlite3_bind_int64(q, 2, (sqlite3_int64)first);
			sqlite3_bind_int64(q, 3, (sqlite3_int64)end);
			sqlite3_bind_text(q, 4, g->name, -1, SQLITE_STATIC);
			sqlite3_bind_text(q, 5, g->device == LBS_DEVICE_GPU ? "gpu" : "cpu", -1, SQLITE_STATIC);
			sqlite3_bind_text(q, 6, g->cost.ops->name, -1, SQLITE_STATIC);
			if (g->cost.max_batch == INT64_MAX)
				sqlite3_bind_null(q, 7);
			else
				sqlite3_bind_int64(q, 7, g->cost.max_batch);
			sqlite3_bind_double(q, 8, g->availability);
			rc = sqlite3_step(q);
			sqlite3_reset(q);
			if (rc != SQLITE_DONE) {
				sqlite3_finalize(q);
				return db_error(r, err, "cannot record the workers");
			}
		}
		first = end;
	}
	sqlite3_finalize(q);
	if (first != run->n)
		return lbs_error_set(err, LBS_EINTERNAL, "groups hold %zu workers, the run %zu", first, run->n);
	return LBS_OK;
}

lbs_status lbs_recorder_iteration(void *ctx, const lbs_iteration_record *rec, lbs_error *err)
{
	lbs_recorder *r = ctx;
	if (r->detail < LBS_DETAIL_ITERATIONS)
		return LBS_OK;
	sqlite3_stmt *q = r->ins_iteration;
	sqlite3_bind_int64(q, 1, r->run_id);
	sqlite3_bind_int64(q, 2, rec->iteration);
	sqlite3_bind_int64(q, 3, rec->epoch);
	sqlite3_bind_double(q, 4, rec->start_s);
	sqlite3_bind_double(q, 5, rec->compute_end_s);
	sqlite3_bind_double(q, 6, rec->end_s);
	sqlite3_bind_double(q, 7, rec->straggler_gap_s);
	sqlite3_bind_double(q, 8, rec->aggregation_s);
	sqlite3_bind_double(q, 9, rec->decision_s);
	sqlite3_bind_int64(q, 10, rec->global_batch);
	int rc = sqlite3_step(q);
	sqlite3_reset(q);
	if (rc != SQLITE_DONE)
		return db_error(r, err, "cannot record an iteration");
	const size_t n_planned = rec->n_planned ? rec->n_planned : rec->n_workers;
	for (size_t i = 0; rec->batch_changed && i < n_planned; i++) {
		q = r->ins_batch;
		sqlite3_bind_int64(q, 1, r->run_id);
		sqlite3_bind_int64(q, 2, rec->iteration);
		sqlite3_bind_int64(q, 3, (sqlite3_int64)(rec->n_planned ? i : rec->first_worker + i));
		sqlite3_bind_int64(q, 4, rec->planned[i]);
		rc = sqlite3_step(q);
		sqlite3_reset(q);
		if (rc != SQLITE_DONE)
			return db_error(r, err, "cannot record batch sizes");
	}
	for (size_t v = 0; v < rec->n_vars; v++) {
		q = r->ins_var;
		sqlite3_bind_int64(q, 1, r->run_id);
		sqlite3_bind_int64(q, 2, rec->iteration);
		sqlite3_bind_text(q, 3, rec->vars[v].name, -1, SQLITE_STATIC);
		sqlite3_bind_double(q, 4, rec->vars[v].value);
		rc = sqlite3_step(q);
		sqlite3_reset(q);
		if (rc != SQLITE_DONE)
			return db_error(r, err, "cannot record the policy's state");
	}
	if (r->detail < LBS_DETAIL_WORKERS)
		return LBS_OK;
	if (r->row_budget >= 0) {
		if ((uint64_t)r->row_budget < rec->n_workers)
			return lbs_error_set(err, LBS_EINPUT, "--detail workers: at iteration %lld the run "
					     "reached the --max-rows limit of worker_iterations rows (it ran "
					     "longer than estimated, as epochs do when the global batch "
					     "shrinks): raise --max-rows (0: no limit)", (long long)rec->iteration);
		r->row_budget -= (int64_t)rec->n_workers;
	}
	q = r->ins_worker_iteration;
	double phase = rec->compute_end_s - rec->start_s;
	for (size_t i = 0; i < rec->n_workers; i++) {
		sqlite3_bind_int64(q, 1, r->run_id);
		sqlite3_bind_int64(q, 2, rec->iteration);
		sqlite3_bind_int64(q, 3, (sqlite3_int64)(rec->first_worker + i));
		sqlite3_bind_int64(q, 4, rec->batch[i]);
		sqlite3_bind_double(q, 5, rec->compute_s[i]);
		sqlite3_bind_double(q, 6, rec->wait_s ? rec->wait_s[i] : phase - rec->compute_s[i]);
		if (rec->predicted_speed && isfinite(rec->predicted_speed[i]))
			sqlite3_bind_double(q, 7, rec->predicted_speed[i]);
		else
			sqlite3_bind_null(q, 7);
		for (int k = 0; k < 2; k++)
			if (rec->readings)
				sqlite3_bind_double(q, 8 + k, rec->readings[i * rec->n_readings + (size_t)k]);
			else
				sqlite3_bind_null(q, 8 + k);
		rc = sqlite3_step(q);
		sqlite3_reset(q);
		if (rc != SQLITE_DONE)
			return db_error(r, err, "cannot record a worker iteration");
	}
	return LBS_OK;
}

/* [sync] ssp, asp: the updates by staleness (doc/results.md, run_staleness). */
static lbs_status record_staleness(lbs_recorder *r, const lbs_run *run, lbs_error *err)
{
	if (!run->n_staleness)
		return LBS_OK;
	lbs_status st = exec(r, lbs_run_staleness_sql, err);
	if (st != LBS_OK)
		return st;
	sqlite3_stmt *q = NULL;
	if (sqlite3_prepare_v2(r->db, "INSERT INTO run_staleness VALUES (?1, ?2, ?3)", -1, &q, NULL) != SQLITE_OK)
		return db_error(r, err, "cannot record the updates' staleness");
	for (size_t k = 0; k < run->n_staleness; k++) {
		if (!run->staleness_counts[k])
			continue;
		sqlite3_bind_int64(q, 1, r->run_id);
		sqlite3_bind_int64(q, 2, (sqlite3_int64)k);
		sqlite3_bind_int64(q, 3, run->staleness_counts[k]);
		int rc = sqlite3_step(q);
		sqlite3_reset(q);
		if (rc != SQLITE_DONE) {
			sqlite3_finalize(q);
			return db_error(r, err, "cannot record the updates' staleness");
		}
	}
	sqlite3_finalize(q);
	return LBS_OK;
}

static lbs_status record_losses(lbs_recorder *r, const lbs_run *run, lbs_error *err)
{
	if (!run->n_losses)
		return LBS_OK;
	lbs_status st = exec(r, lbs_run_losses_sql, err);
	if (st != LBS_OK)
		return st;
	sqlite3_stmt *q = NULL;
	if (sqlite3_prepare_v2(r->db, "INSERT INTO run_losses VALUES (?1, ?2, ?3)", -1, &q, NULL) != SQLITE_OK)
		return db_error(r, err, "cannot record the held-out losses");
	for (size_t k = 0; k < run->n_losses; k++) {
		sqlite3_bind_int64(q, 1, r->run_id);
		sqlite3_bind_int64(q, 2, (sqlite3_int64)run->loss_step[k]);
		sqlite3_bind_double(q, 3, run->loss[k]);
		int rc = sqlite3_step(q);
		sqlite3_reset(q);
		if (rc != SQLITE_DONE) {
			sqlite3_finalize(q);
			return db_error(r, err, "cannot record the held-out losses");
		}
	}
	sqlite3_finalize(q);
	return LBS_OK;
}

lbs_status lbs_recorder_commit(lbs_recorder *r, const lbs_run *run, double wall_s, lbs_error *err)
{
	const lbs_run_stats *s = &run->stats;
	double n = s->iterations ? (double)s->iterations : 1.0;
	sqlite3_stmt *q = NULL;
	if (sqlite3_prepare_v2(r->db,
			       "UPDATE runs SET sim_time_s = ?2, mean_iteration_s = ?3, mean_compute_s = ?4, "
			       "mean_aggregation_s = ?5, mean_straggler_gap_s = ?6, mean_decision_s = ?7, "
			       "throughput_samples_per_s = ?8, wall_s = ?9, events = ?10, iterations = ?11 "
			       "WHERE run_id = ?1", -1, &q, NULL) != SQLITE_OK)
		return db_error(r, err, "cannot record the run's summary");
	sqlite3_bind_int64(q, 1, r->run_id);
	sqlite3_bind_double(q, 2, s->sim_time_s);
	sqlite3_bind_double(q, 3, s->sum_iteration_s / n);
	sqlite3_bind_double(q, 4, s->sum_compute_s / n);
	sqlite3_bind_double(q, 5, s->sum_aggregation_s / n);
	sqlite3_bind_double(q, 6, s->sum_gap_s / n);
	sqlite3_bind_double(q, 7, s->sum_decision_s / n);
	sqlite3_bind_double(q, 8, s->sim_time_s > 0 ? (double)s->samples / s->sim_time_s : 0.0);
	sqlite3_bind_double(q, 9, wall_s);
	sqlite3_bind_int64(q, 10, (sqlite3_int64)s->events);
	sqlite3_bind_int64(q, 11, s->iterations);
	int rc = sqlite3_step(q);
	sqlite3_finalize(q);
	if (rc != SQLITE_DONE)
		return db_error(r, err, "cannot record the run's summary");
	/* [convergence] or [sync]: the run's steps and time to its target, made
	 * the first time a run has one (doc/results.md, run_targets). */
	const lbs_scenario *sc = run->sc;
	if (sc->convergence.model != LBS_CONV_NONE || sc->sync.mode != LBS_SYNC_BSP) {
		lbs_status st = exec(r, lbs_run_targets_sql, err);
		if (st != LBS_OK)
			return st;
		if (sqlite3_prepare_v2(r->db, "INSERT INTO run_targets VALUES (?1, ?2, ?3, ?4, ?5, ?6)", -1, &q,
				       NULL) != SQLITE_OK)
			return db_error(r, err, "cannot record the run's time to target");
		bool model = sc->convergence.model != LBS_CONV_NONE, reached = model && s->steps_to_target > 0;
		sqlite3_bind_int64(q, 1, r->run_id);
		if (model)
			sqlite3_bind_double(q, 2, s->progress);
		if (reached) {
			sqlite3_bind_int64(q, 3, s->steps_to_target);
			sqlite3_bind_int64(q, 4, s->samples_to_target);
			sqlite3_bind_double(q, 5, s->time_to_target_s);
		}
		sqlite3_bind_int64(q, 6, s->dropped_samples);
		rc = sqlite3_step(q);
		sqlite3_finalize(q);
		if (rc != SQLITE_DONE)
			return db_error(r, err, "cannot record the run's time to target");
	}
	lbs_status st = record_staleness(r, run, err);
	if (st == LBS_OK)
		st = record_losses(r, run, err);
	if (st != LBS_OK)
		return st;
	st = exec(r, "COMMIT", err);
	if (st == LBS_OK)
		r->in_run = false;
	return st;
}

lbs_status lbs_recorder_predictor_errors(lbs_recorder *r, const char *source,
					const lbs_predictor_score *rows, size_t n, lbs_error *err)
{
	sqlite3_int64 id;
	char now[32];
	lbs_status st = begin_rows(r, "SELECT coalesce(max(eval_id), 0) + 1 FROM predictor_errors", &id, now, err);
	if (st != LBS_OK)
		return st;
	sqlite3_stmt *q = NULL;
	if (sqlite3_prepare_v2(r->db, "INSERT INTO predictor_errors VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
			       -1, &q, NULL) != SQLITE_OK)
		return db_error(r, err, "cannot record predictor errors");
	for (size_t i = 0; i < n; i++) {
		sqlite3_bind_int64(q, 1, id);
		sqlite3_bind_text(q, 2, source, -1, SQLITE_STATIC);
		sqlite3_bind_text(q, 3, rows[i].predictor, -1, SQLITE_STATIC);
		sqlite3_bind_int64(q, 4, rows[i].series);
		sqlite3_bind_int64(q, 5, rows[i].steps);
		sqlite3_bind_double(q, 6, rows[i].rmse);
		sqlite3_bind_double(q, 7, rows[i].mae);
		sqlite3_bind_double(q, 8, rows[i].mape_percent);
		sqlite3_bind_int64(q, 9, rows[i].fallbacks);
		sqlite3_bind_text(q, 10, now, -1, SQLITE_TRANSIENT);
		int rc = sqlite3_step(q);
		sqlite3_reset(q);
		if (rc != SQLITE_DONE) {
			sqlite3_finalize(q);
			return db_error(r, err, "cannot record predictor errors");
		}
	}
	sqlite3_finalize(q);
	if ((st = exec(r, "COMMIT", err)) == LBS_OK)
		r->in_run = false;
	r->run_id = id;
	return st;
}

/* The validation's time to target, where it has one (validation_targets). */
static void bind_opt(sqlite3_stmt *q, int at, double v)
{
	if (isfinite(v))
		sqlite3_bind_double(q, at, v);
	else
		sqlite3_bind_null(q, at);
}

/* The simulated ensemble's runs, where there is one (validation_seeds). */
static lbs_status record_seeds(lbs_recorder *r, sqlite3_int64 id, const lbs_validation_row *rows, size_t n,
			       lbs_error *err)
{
	bool any = false;
	for (size_t i = 0; i < n; i++)
		any |= rows[i].has_target && rows[i].n_seeds > 0;
	if (!any)
		return LBS_OK;
	lbs_status st = exec(r, lbs_validation_seeds_sql, err);
	if (st != LBS_OK)
		return st;
	sqlite3_stmt *q = NULL;
	if (sqlite3_prepare_v2(r->db, "INSERT INTO validation_seeds VALUES (?1, ?2, ?3, ?4, ?5, ?6)", -1, &q,
			       NULL) != SQLITE_OK)
		return db_error(r, err, "cannot record the validation's simulated ensemble");
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; rows[i].has_target && k < rows[i].n_seeds; k++) {
			const lbs_validation_seed *e = &rows[i].seeds[k];
			sqlite3_bind_int64(q, 1, id);
			sqlite3_bind_text(q, 2, rows[i].policy, -1, SQLITE_STATIC);
			sqlite3_bind_int64(q, 3, e->seed);
			sqlite3_bind_int64(q, 4, e->run_id);
			if (e->steps > 0) {
				sqlite3_bind_int64(q, 5, e->steps);
				sqlite3_bind_double(q, 6, e->time_s);
			} else {
				sqlite3_bind_null(q, 5);
				sqlite3_bind_null(q, 6);
			}
			int rc = sqlite3_step(q);
			sqlite3_reset(q);
			if (rc != SQLITE_DONE) {
				sqlite3_finalize(q);
				return db_error(r, err, "cannot record the validation's simulated ensemble");
			}
		}
	sqlite3_finalize(q);
	return LBS_OK;
}

static lbs_status record_targets(lbs_recorder *r, sqlite3_int64 id, const lbs_validation_row *rows, size_t n,
				 lbs_error *err)
{
	bool any = false;
	for (size_t i = 0; i < n; i++)
		any |= rows[i].has_target;
	if (!any)
		return LBS_OK;
	lbs_status st = exec(r, lbs_validation_targets_sql, err);
	if (st != LBS_OK)
		return st;
	sqlite3_stmt *q = NULL;
	if (sqlite3_prepare_v2(r->db, "INSERT INTO validation_targets VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
			       "?10, ?11)", -1, &q, NULL) != SQLITE_OK)
		return db_error(r, err, "cannot record the validation's time to target");
	for (size_t i = 0; i < n; i++) {
		const lbs_validation_row *v = &rows[i];
		if (!v->has_target)
			continue;
		sqlite3_bind_int64(q, 1, id);
		sqlite3_bind_text(q, 2, v->policy, -1, SQLITE_STATIC);
		sqlite3_bind_double(q, 3, v->target_loss);
		if (v->simulated_steps > 0) {
			sqlite3_bind_int64(q, 4, v->simulated_steps);
			sqlite3_bind_double(q, 5, v->simulated_time_s);
		} else {
			sqlite3_bind_null(q, 4);
			sqlite3_bind_null(q, 5);
		}
		sqlite3_bind_int(q, 6, v->measured_reached);
		sqlite3_bind_int(q, 7, v->repeats);
		bind_opt(q, 8, v->measured_steps);
		bind_opt(q, 9, v->measured_steps_sd);
		bind_opt(q, 10, v->measured_time_s);
		bind_opt(q, 11, v->measured_time_sd_s);
		int rc = sqlite3_step(q);
		sqlite3_reset(q);
		if (rc != SQLITE_DONE) {
			sqlite3_finalize(q);
			return db_error(r, err, "cannot record the validation's time to target");
		}
	}
	sqlite3_finalize(q);
	return record_seeds(r, id, rows, n, err);
}

lbs_status lbs_recorder_validation(lbs_recorder *r, const lbs_validation_row *rows, size_t n,
				   lbs_error *err)
{
	sqlite3_int64 id;
	char now[32];
	lbs_status st = begin_rows(r, "SELECT coalesce(max(validation_id), 0) + 1 FROM validations", &id, now, err);
	if (st != LBS_OK)
		return st;
	sqlite3_stmt *q = NULL;
	if (sqlite3_prepare_v2(r->db, "INSERT INTO validations VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
			       "?10, ?11, ?12, ?13, ?14, ?15)", -1, &q, NULL) != SQLITE_OK)
		return db_error(r, err, "cannot record the validation");
	for (size_t i = 0; i < n; i++) {
		const lbs_validation_row *v = &rows[i];
		const double opt[] = { v->measured_iteration_sd_s, v->simulated_speedup, v->measured_speedup,
				       v->measured_speedup_sd };
		sqlite3_bind_int64(q, 1, id);
		sqlite3_bind_text(q, 2, v->policy, -1, SQLITE_STATIC);
		sqlite3_bind_int64(q, 3, v->simulated_run);
		sqlite3_bind_text(q, 4, v->measured_runs, -1, SQLITE_STATIC);
		sqlite3_bind_double(q, 5, v->simulated_iteration_s);
		sqlite3_bind_double(q, 6, v->measured_iteration_s);
		for (int k = 0; k < 4; k++)
			if (isfinite(opt[k]))
				sqlite3_bind_double(q, 7 + k, opt[k]);
			else
				sqlite3_bind_null(q, 7 + k);
		sqlite3_bind_double(q, 11, v->error_mean);
		sqlite3_bind_double(q, 12, v->error_p95);
		sqlite3_bind_double(q, 13, v->batch_difference_mean);
		sqlite3_bind_text(q, 14, now, -1, SQLITE_TRANSIENT);
		if (isfinite(v->machine_drift))
			sqlite3_bind_double(q, 15, v->machine_drift);
		else
			sqlite3_bind_null(q, 15);
		int rc = sqlite3_step(q);
		sqlite3_reset(q);
		if (rc != SQLITE_DONE) {
			sqlite3_finalize(q);
			return db_error(r, err, "cannot record the validation");
		}
	}
	sqlite3_finalize(q);
	if ((st = record_targets(r, id, rows, n, err)) != LBS_OK)
		return st;
	if ((st = exec(r, "COMMIT", err)) == LBS_OK)
		r->in_run = false;
	r->run_id = id;
	return st;
}

void lbs_recorder_abort(lbs_recorder *r)
{
	if (r->db && r->in_run)
		sqlite3_exec(r->db, "ROLLBACK", NULL, NULL, NULL);
	r->in_run = false;
}

void lbs_recorder_close(lbs_recorder *r)
{
	lbs_recorder_abort(r);
	sqlite3_finalize(r->ins_iteration);
	sqlite3_finalize(r->ins_worker_iteration);
	sqlite3_finalize(r->ins_batch);
	sqlite3_finalize(r->ins_var);
	if (r->db)
		sqlite3_close(r->db);
	r->db = NULL;
	r->ins_iteration = r->ins_worker_iteration = r->ins_batch = r->ins_var = NULL;
}

void lbs_recorder_remove(const char *path)
{
	static const char *const suffixes[] = { "", "-journal", "-wal", "-shm" };
	for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
		char name[4096];
		if (snprintf(name, sizeof name, "%s%s", path, suffixes[i]) < (int)sizeof name)
			unlink(name);
	}
}
