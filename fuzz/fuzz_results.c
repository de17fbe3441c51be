/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Fuzzes the readers of results databases (sim/resultsdb.c and its
 * callers). The input is a database file, given in turn
 *  - to lbsim merge: checked (lbs_merge_check), then merged into a new
 *    output (lbs_merge_file); an output merge writes must pass the check;
 *  - to lbsim export: opened with the analysis views (lbs_analysis_open),
 *    then each of lbsim's tables and views written as CSV;
 *  - to a run appending to it: the recorder's check and upgrade
 *    (lbs_recorder_open). A file it accepts must then be a results
 *    database of the current version; one it refuses must be left byte for
 *    byte as it was.
 * A violated property aborts (a finding), as does a crash or a sanitizer
 * report; refusals are the point. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz/harness.h"
#include "sim/recorder.h"
#include "analysis/export.h"
#include "analysis/merge.h"

static const char *const tables[] = {
	"runs", "run_config", "workers", "iterations", "batches", "predictor_errors", "policy_vars",
	"worker_iterations", "validations", "sweep_points", "whatif_runs", "whatif_metrics", "whatif_timeline",
};

/* Removes path and the journals SQLite may keep beside it. */
static void remove_db(const char *path)
{
	static const char *const suffix[] = { "", "-journal", "-wal", "-shm" };
	for (size_t i = 0; i < sizeof suffix / sizeof suffix[0]; i++) {
		char p[1100];
		snprintf(p, sizeof p, "%s%s", path, suffix[i]);
		unlink(p);
	}
}

static void must_read(const char *path, const char *what)
{
	sqlite3 *db = NULL;
	lbs_error err = { 0 };
	lbs_status st = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK
				? lbs_results_check(db, path, &err)
				: LBS_EIO;
	int version = -1;
	sqlite3_stmt *q = NULL;
	if (st == LBS_OK && sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &q, NULL) == SQLITE_OK &&
	    sqlite3_step(q) == SQLITE_ROW)
		version = sqlite3_column_int(q, 0);
	sqlite3_finalize(q);
	sqlite3_close(db);
	if (st != LBS_OK || version != LBS_SCHEMA_VERSION) {
		fprintf(stderr, "fuzz_results: %s is not a results database of version %d (%d): %s\n", what,
			LBS_SCHEMA_VERSION, version, err.msg);
		abort();
	}
}

static void merge(const char *in, const char *out)
{
	static volatile sig_atomic_t never;
	lbs_error err = { 0 };
	remove_db(out);
	if (lbs_merge_check(in, out, &err) != LBS_OK)
		return;
	lbs_merge m;
	if (lbs_merge_open(&m, out, &err) != LBS_OK) {
		fprintf(stderr, "fuzz_results: cannot create a merge's output: %s\n", err.msg);
		abort();
	}
	lbs_merge_counts n = { 0 };
	lbs_merge_file(&m, in, NULL, &never, &n, &err);
	lbs_merge_close(&m);
	must_read(out, "the output of a merge");
}

static void export(const char *in)
{
	sqlite3 *db = NULL;
	lbs_error err = { 0 };
	if (lbs_analysis_open(&db, in, &err) != LBS_OK)
		return;
	FILE *null = fopen("/dev/null", "w");
	if (!null) {
		perror("/dev/null");
		abort();
	}
	char sql[128];
	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
		snprintf(sql, sizeof sql, "SELECT * FROM \"%s\"", tables[i]);
		lbs_export_csv(db, sql, NULL, 0, null, NULL, &err);
	}
	for (size_t i = 0; lbs_results_views[i]; i++) {
		snprintf(sql, sizeof sql, "SELECT * FROM \"%s\"", lbs_results_views[i]);
		lbs_export_csv(db, sql, NULL, 0, null, NULL, &err);
	}
	fclose(null);
	sqlite3_close(db);
}

static void append(const uint8_t *data, size_t size)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/append.db", lbs_fuzz_dir());
	remove_db(path);
	lbs_fuzz_file("append.db", data, size);
	lbs_recorder rec;
	lbs_error err = { 0 };
	if (lbs_recorder_open(&rec, path, LBS_DETAIL_RUNS, &err) == LBS_OK) {
		lbs_recorder_close(&rec);
		must_read(path, "a file the recorder accepted");
		return;
	}
	/* Refused: left as it was. */
	FILE *f = fopen(path, "rb");
	uint8_t *now = malloc(size + 1);
	size_t got = f && now ? fread(now, 1, size + 1, f) : 0;
	if (f)
		fclose(f);
	bool same = f && now && got == size && (!size || !memcmp(now, data, size));
	free(now);
	if (!same) {
		fprintf(stderr, "fuzz_results: the recorder refused a file (%s) and changed it\n", err.msg);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char in[1024], out[1024];
	snprintf(in, sizeof in, "%s/in.db", lbs_fuzz_dir());
	snprintf(out, sizeof out, "%s/out.db", lbs_fuzz_dir());
	remove_db(in);
	lbs_fuzz_file("in.db", data, size);
	merge(in, out);
	export(in);
	append(data, size);
	return 0;
}
