/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "analysis/merge.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/buf.h"
#include "util/outfile.h"
#include "sim/recorder.h"
#include "analysis/views.h"

static lbs_status db_error(sqlite3 *db, lbs_error *err, const char *path, const char *what)
{
	return lbs_error_set(err, LBS_EIO, "%s: %s: %s", path, what, db ? sqlite3_errmsg(db) : "cannot open");
}

/* The columns of schema.table, in order ("" schema: main). */
static lbs_status columns(sqlite3 *db, const char *schema, const char *table, char ***cols, size_t *n)
{
	sqlite3_stmt *q = NULL;
	*cols = NULL;
	*n = 0;
	char *sql = sqlite3_mprintf("SELECT name FROM pragma_table_info(%Q, %Q) ORDER BY cid", table,
				    *schema ? schema : "main");
	if (!sql || sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK) {
		sqlite3_free(sql);
		return LBS_EIO;
	}
	sqlite3_free(sql);
	while (sqlite3_step(q) == SQLITE_ROW) {
		char **c = realloc(*cols, (*n + 1) * sizeof *c);
		if (!c)
			break;
		*cols = c;
		if (!(c[*n] = strdup((const char *)sqlite3_column_text(q, 0))))
			break;
		(*n)++;
	}
	sqlite3_finalize(q);
	return LBS_OK;
}

static void free_strings(char **s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(s[i]);
	free(s);
}

static bool has(char **s, size_t n, const char *x)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s[i], x))
			return true;
	return false;
}

/* Whether column col of the output's table has a default value. */
static bool has_default(sqlite3 *db, const char *table, const char *col)
{
	sqlite3_stmt *q = NULL;
	bool found = false;
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info(?1, 'main') WHERE name = ?2 AND "
			       "dflt_value IS NOT NULL", -1, &q, NULL) == SQLITE_OK) {
		sqlite3_bind_text(q, 1, table, -1, SQLITE_STATIC);
		sqlite3_bind_text(q, 2, col, -1, SQLITE_STATIC);
		found = sqlite3_step(q) == SQLITE_ROW;
	}
	sqlite3_finalize(q);
	return found;
}

/* SQL of the text that identifies a run: every column of its runs row but
 * run_id, quoted, so equal rows give equal text. A column of the output
 * that schema's runs lacks (runs.mode of a version 2 file) counts as its
 * default, the value merging gives it. */
static bool run_key_sql(sqlite3 *db, const char *schema, lbs_buf *b)
{
	char **cols, **have;
	size_t n, n_have;
	if (columns(db, "main", "runs", &cols, &n) != LBS_OK)
		return false;
	if (columns(db, schema, "runs", &have, &n_have) != LBS_OK) {
		free_strings(cols, n);
		return false;
	}
	lbs_buf_printf(b, "SELECT ");
	bool first = true;
	for (size_t i = 0; i < n; i++)
		if (strcmp(cols[i], "run_id")) {
			lbs_buf_printf(b, "%s", first ? "" : " || ',' || ");
			first = false;
			if (has(have, n_have, cols[i])) {
				lbs_buf_printf(b, "quote(\"%s\")", cols[i]);
				continue;
			}
			sqlite3_stmt *q = NULL;
			const char *dflt = NULL;
			if (sqlite3_prepare_v2(db, "SELECT dflt_value FROM pragma_table_info('runs', 'main') "
					       "WHERE name = ?1", -1, &q, NULL) == SQLITE_OK) {
				sqlite3_bind_text(q, 1, cols[i], -1, SQLITE_STATIC);
				if (sqlite3_step(q) == SQLITE_ROW)
					dflt = (const char *)sqlite3_column_text(q, 0);
			}
			lbs_buf_printf(b, "quote(%s)", dflt ? dflt : "NULL");
			sqlite3_finalize(q);
		}
	lbs_buf_printf(b, " FROM %s.runs", schema);
	free_strings(cols, n);
	free_strings(have, n_have);
	return !b->failed;
}

void lbs_merge_close(lbs_merge *m)
{
	/* The views, rewritten for the runs the file now holds (a failure
	 * leaves the older copy: lbsim's own readers write theirs anyway). */
	lbs_error ignored;
	if (m->db)
		lbs_views_store(m->db, m->path, &ignored);
	if (m->db)
		sqlite3_close(m->db);
	free_strings(m->tables, m->n_tables);
	memset(m, 0, sizeof *m);
}

lbs_status lbs_merge_open(lbs_merge *m, const char *path, lbs_error *err)
{
	memset(m, 0, sizeof *m);
	snprintf(m->path, sizeof m->path, "%s", path);
	/* The recorder creates the schema, or checks the version of an existing file. */
	lbs_recorder rec;
	lbs_status st = lbs_recorder_open(&rec, path, LBS_DETAIL_RUNS, err);
	if (st != LBS_OK)
		return st;
	lbs_recorder_close(&rec);
	/* URIs allowed: the inputs are attached read-only (merge); the output's
	 * path is never one (lbs_recorder_check_path). */
	if (sqlite3_open_v2(path, &m->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI, NULL) != SQLITE_OK) {
		st = db_error(m->db, err, path, "cannot open results database");
		lbs_merge_close(m);
		return st;
	}
	lbs_recorder_busy(m->db); /* gives up on SIGINT, SIGTERM */
	/* Each merge sets its interrupt flag (merge()). */
	lbs_results_harden(m->db, LBS_RESULTS_MAX_VALUE, NULL);
	lbs_buf b = { 0 };
	sqlite3_stmt *q = NULL;
	if (sqlite3_exec(m->db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(m->db, lbs_sweep_points_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    /* the tables a run adds when it has them, so that its rows are copied */
	    sqlite3_exec(m->db, lbs_run_targets_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(m->db, lbs_run_staleness_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(m->db, "CREATE TEMP TABLE merge_seen (k TEXT PRIMARY KEY)", NULL, NULL, NULL) !=
		    SQLITE_OK ||
	    !lbs_buf_printf(&b, "INSERT OR IGNORE INTO temp.merge_seen ") || !run_key_sql(m->db, "main", &b) ||
	    sqlite3_exec(m->db, lbs_buf_str(&b), NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(m->db,
			       "SELECT m.name FROM main.sqlite_master m WHERE m.type = 'table' AND EXISTS "
			       "(SELECT 1 FROM pragma_table_info(m.name, 'main') p WHERE p.name = 'run_id') "
			       "ORDER BY m.name = 'runs' DESC, m.name = 'sweep_points', m.name",
			       -1, &q, NULL) != SQLITE_OK)
		st = db_error(m->db, err, path, "cannot prepare the merge");
	lbs_buf_free(&b);
	while (st == LBS_OK && sqlite3_step(q) == SQLITE_ROW) {
		char **t = realloc(m->tables, (m->n_tables + 1) * sizeof *t);
		if (!t || !(t[m->n_tables] = strdup((const char *)sqlite3_column_text(q, 0)))) {
			if (t)
				m->tables = t;
			st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
			break;
		}
		m->tables = t;
		m->n_tables++;
	}
	sqlite3_finalize(q);
	if (st == LBS_OK && (!m->n_tables || strcmp(m->tables[0], "runs")))
		st = lbs_error_set(err, LBS_EIO, "%s: no runs table", path);
	if (st != LBS_OK)
		lbs_merge_close(m);
	return st;
}

lbs_status lbs_merge_check(const char *in, const char *out, lbs_error *err)
{
	struct stat si, so;
	if (stat(in, &si) != 0)
		return lbs_error_set(err, LBS_EINPUT, "%s: cannot read: %s", in, strerror(errno));
	if (!S_ISREG(si.st_mode))
		return lbs_error_set(err, LBS_EINPUT, "%s: not a file", in);
	if (out && stat(out, &so) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino)
		return lbs_error_set(err, LBS_EINPUT, "%s: is the output file; merging it into itself "
				     "would add nothing", in);
	sqlite3 *db = NULL;
	lbs_status st;
	if (sqlite3_open_v2(in, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
		lbs_results_harden(db, LBS_RESULTS_MAX_VALUE, NULL);
		st = lbs_results_check(db, in, err);
	} else {
		st = lbs_error_set(err, LBS_EINPUT, "%s: not an SQLite database", in);
	}
	sqlite3_close(db);
	return st;
}

bool lbs_merge_has_point(lbs_merge *m, const char *hash, int64_t point)
{
	sqlite3_stmt *q = NULL;
	bool found = false;
	if (sqlite3_prepare_v2(m->db, "SELECT 1 FROM main.sweep_points WHERE sweep_hash = ?1 AND point = ?2",
			       -1, &q, NULL) == SQLITE_OK) {
		sqlite3_bind_text(q, 1, hash, -1, SQLITE_STATIC);
		sqlite3_bind_int64(q, 2, point);
		found = sqlite3_step(q) == SQLITE_ROW;
	}
	sqlite3_finalize(q);
	return found;
}

/* The statements that copy one run from src, prepared once per file. */
typedef struct copier {
	sqlite3_stmt **copy;   /* per output table; NULL where src lacks it */
	sqlite3_stmt *key, *seen, *remember, *src_point, *tag;
	size_t n;
	const volatile sig_atomic_t *interrupt;
} copier;

static void copier_free(copier *c)
{
	for (size_t i = 0; c->copy && i < c->n; i++)
		sqlite3_finalize(c->copy[i]);
	free(c->copy);
	sqlite3_finalize(c->key);
	sqlite3_finalize(c->seen);
	sqlite3_finalize(c->remember);
	sqlite3_finalize(c->src_point);
	sqlite3_finalize(c->tag);
	memset(c, 0, sizeof *c);
}

static lbs_status copier_prepare(lbs_merge *m, const char *in, copier *c,
				 const volatile sig_atomic_t *interrupt, lbs_error *err)
{
	memset(c, 0, sizeof *c);
	c->interrupt = interrupt;
	c->n = m->n_tables;
	if (!(c->copy = calloc(c->n, sizeof *c->copy)))
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	bool src_points = false;
	for (size_t t = 0; t < m->n_tables; t++) {
		const char *table = m->tables[t];
		char **oc, **ic;
		size_t on, inn;
		columns(m->db, "main", table, &oc, &on);
		columns(m->db, "src", table, &ic, &inn);
		lbs_status st = LBS_OK;
		if (inn == 0) {
			/* Only sweep_points, run_targets and run_staleness are
			 * optional: plain runs have none. */
			if (strcmp(table, "sweep_points") && strcmp(table, "run_targets") &&
			    strcmp(table, "run_staleness"))
				st = lbs_error_set(err, LBS_EINPUT, "%s: has no table %s", in, table);
		} else {
			/* A column the input lacks gets its default (runs.mode
			 * of a version 2 file: 'simulated'). */
			for (size_t i = 0; i < on && st == LBS_OK; i++)
				if (!has(ic, inn, oc[i]) && !has_default(m->db, table, oc[i]))
					st = lbs_error_set(err, LBS_EINPUT, "%s: table %s has no column %s",
							   in, table, oc[i]);
			for (size_t i = 0; i < inn && st == LBS_OK; i++)
				if (!has(oc, on, ic[i]))
					st = lbs_error_set(err, LBS_EINPUT, "%s: table %s has a column %s that %s "
							   "lacks", in, table, ic[i], m->path);
		}
		if (st == LBS_OK && inn) {
			bool runs = !strcmp(table, "runs");
			lbs_buf b = { 0 };
			lbs_buf_printf(&b, "INSERT INTO main.\"%s\" (", table);
			for (size_t i = 0, k = 0; i < on; i++)
				if ((!runs || strcmp(oc[i], "run_id")) && has(ic, inn, oc[i]))
					lbs_buf_printf(&b, "%s\"%s\"", k++ ? ", " : "", oc[i]);
			lbs_buf_printf(&b, ") SELECT ");
			for (size_t i = 0, k = 0; i < on; i++)
				if ((!runs || strcmp(oc[i], "run_id")) && has(ic, inn, oc[i]))
					lbs_buf_printf(&b, k++ ? ", %s%s%s" : "%s%s%s",
						       strcmp(oc[i], "run_id") ? "\"" : "",
						       strcmp(oc[i], "run_id") ? oc[i] : "?2",
						       strcmp(oc[i], "run_id") ? "\"" : "");
			lbs_buf_printf(&b, " FROM src.\"%s\" WHERE run_id = ?1", table);
			if (b.failed)
				st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
			else if (sqlite3_prepare_v2(m->db, lbs_buf_str(&b), -1, &c->copy[t], NULL) != SQLITE_OK)
				st = db_error(m->db, err, in, "cannot read");
			lbs_buf_free(&b);
			src_points |= !strcmp(table, "sweep_points");
		}
		free_strings(oc, on);
		free_strings(ic, inn);
		if (st != LBS_OK)
			return st;
	}
	lbs_buf b = { 0 };
	run_key_sql(m->db, "src", &b);
	lbs_buf_printf(&b, " WHERE run_id = ?1");
	if (b.failed || sqlite3_prepare_v2(m->db, lbs_buf_str(&b), -1, &c->key, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(m->db, "SELECT 1 FROM temp.merge_seen WHERE k = ?1", -1, &c->seen, NULL) ||
	    sqlite3_prepare_v2(m->db, "INSERT OR IGNORE INTO temp.merge_seen VALUES (?1)", -1, &c->remember,
			       NULL) ||
	    (src_points && sqlite3_prepare_v2(m->db, "SELECT sweep_hash, point FROM src.sweep_points "
					      "WHERE run_id = ?1 LIMIT 1", -1, &c->src_point, NULL)) ||
	    sqlite3_prepare_v2(m->db, "INSERT INTO main.sweep_points VALUES (?1, ?2, ?3, ?4, ?5, ?6)", -1,
			       &c->tag, NULL)) {
		lbs_buf_free(&b);
		return db_error(m->db, err, in, "cannot read");
	}
	lbs_buf_free(&b);
	return LBS_OK;
}

static bool step_done(sqlite3_stmt *q)
{
	int rc = sqlite3_step(q);
	sqlite3_reset(q);
	return rc == SQLITE_DONE;
}

/* The error of copying `table` of run `old` of `in`: interrupted, a value
 * over the limit, or SQLite's message (which a reset leaves). */
static lbs_status copy_failure(lbs_merge *m, copier *c, const char *in, sqlite3_int64 old, const char *table,
			       lbs_error *err)
{
	lbs_status st = c->interrupt && *c->interrupt
				? lbs_error_set(err, LBS_EINTR, "interrupted while merging %s", in)
				: lbs_results_failure(m->db, c->interrupt, LBS_EIO, err,
						      "cannot copy run %lld of %s (table %s) into %s", (long long)old,
						      in, table, m->path);
	return st;
}

/* Copies run `old`, in its own transaction unless `within` one already.
 * *added: whether it was new. */
static lbs_status copy_run(lbs_merge *m, copier *c, const char *in, sqlite3_int64 old,
			   const lbs_merge_tag *tag, bool within, bool *added, sqlite3_int64 *new_id,
			   lbs_error *err)
{
	*added = false;
	if (!within && sqlite3_exec(m->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return db_error(m->db, err, m->path, "cannot write");
	bool skip = false;
	char *key = NULL;
	sqlite3_bind_int64(c->key, 1, old);
	if (sqlite3_step(c->key) == SQLITE_ROW && (key = strdup((const char *)sqlite3_column_text(c->key, 0)))) {
		sqlite3_bind_text(c->seen, 1, key, -1, SQLITE_STATIC);
		skip = sqlite3_step(c->seen) == SQLITE_ROW;
		sqlite3_reset(c->seen);
	}
	sqlite3_reset(c->key);
	lbs_status st = key ? LBS_OK : copy_failure(m, c, in, old, "runs", err);
	if (st == LBS_OK && !skip && tag)
		skip = lbs_merge_has_point(m, tag->hash, tag->point);
	if (st == LBS_OK && !skip && c->src_point) {
		sqlite3_bind_int64(c->src_point, 1, old);
		if (sqlite3_step(c->src_point) == SQLITE_ROW)
			skip = lbs_merge_has_point(m, (const char *)sqlite3_column_text(c->src_point, 0),
						   sqlite3_column_int64(c->src_point, 1));
		sqlite3_reset(c->src_point);
	}
	if (st == LBS_OK && !skip) {
		sqlite3_bind_int64(c->copy[0], 1, old);
		if (!step_done(c->copy[0]))
			st = copy_failure(m, c, in, old, m->tables[0], err);
		*new_id = sqlite3_last_insert_rowid(m->db);
		for (size_t t = 1; st == LBS_OK && t < c->n; t++) {
			if (!c->copy[t])
				continue;
			sqlite3_bind_int64(c->copy[t], 1, old);
			sqlite3_bind_int64(c->copy[t], 2, *new_id);
			if (!step_done(c->copy[t]))
				st = copy_failure(m, c, in, old, m->tables[t], err);
		}
		for (size_t i = 0; st == LBS_OK && tag && i < tag->n; i++) {
			sqlite3_bind_int64(c->tag, 1, *new_id);
			sqlite3_bind_text(c->tag, 2, tag->sweep, -1, SQLITE_STATIC);
			sqlite3_bind_text(c->tag, 3, tag->hash, -1, SQLITE_STATIC);
			sqlite3_bind_int64(c->tag, 4, tag->point);
			sqlite3_bind_text(c->tag, 5, tag->keys[i], -1, SQLITE_STATIC);
			sqlite3_bind_text(c->tag, 6, tag->values[i], -1, SQLITE_STATIC);
			if (!step_done(c->tag))
				st = db_error(m->db, err, m->path, "cannot record the sweep point");
		}
		sqlite3_bind_text(c->remember, 1, key, -1, SQLITE_STATIC);
		if (st == LBS_OK && !step_done(c->remember))
			st = db_error(m->db, err, m->path, "cannot write");
	}
	free(key);
	if (within) {
		*added = st == LBS_OK && !skip;
		return st;
	}
	if (st == LBS_OK && sqlite3_exec(m->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		st = db_error(m->db, err, m->path, "cannot commit");
	if (st != LBS_OK)
		sqlite3_exec(m->db, "ROLLBACK", NULL, NULL, NULL);
	else
		*added = !skip;
	return st;
}

/* Adds the runs of one input (or one run) to the merge's totals. */
static void add_counts(lbs_merge_counts *counts, const lbs_merge_counts *got)
{
	counts->added += got->added;
	counts->skipped += got->skipped;
	if (got->added && !counts->first_run_id)
		counts->first_run_id = got->first_run_id;
	if (got->added)
		counts->last_run_id = got->last_run_id;
}

/* lbs_merge_file (tags NULL or one tag for every run, a transaction per
 * run) and lbs_merge_points (n_tags tags, one per run, one transaction). */
static lbs_status merge(lbs_merge *m, const char *in, const lbs_merge_tag *tags, size_t n_tags, bool per_run,
			const volatile sig_atomic_t *interrupt, lbs_merge_counts *counts, lbs_error *err)
{
	lbs_status st = lbs_merge_check(in, m->path, err);
	if (st != LBS_OK)
		return st;
	/* Read-only, as a URI (every byte but [A-Za-z0-9/._~-] percent-encoded;
	 * an absolute path after an empty authority, so that "//x" is no host):
	 * a transaction of the merge is then one of the output alone, which
	 * commits without the super-journal of a transaction over two files. */
	lbs_buf uri = { 0 };
	lbs_buf_printf(&uri, in[0] == '/' ? "file://" : "file:");
	for (const unsigned char *p = (const unsigned char *)in; *p; p++)
		lbs_buf_printf(&uri, isalnum(*p) || strchr("/._~-", *p) ? "%c" : "%%%02X", *p);
	lbs_buf_printf(&uri, "?mode=ro");
	sqlite3_stmt *q = NULL;
	if (uri.failed || sqlite3_prepare_v2(m->db, "ATTACH ?1 AS src", -1, &q, NULL) != SQLITE_OK) {
		lbs_buf_free(&uri);
		return db_error(m->db, err, in, "cannot attach");
	}
	sqlite3_bind_text(q, 1, lbs_buf_str(&uri), -1, SQLITE_STATIC);
	int rc = sqlite3_step(q);
	sqlite3_finalize(q);
	q = NULL; /* finalized: the error paths below finalize q again */
	lbs_buf_free(&uri);
	if (rc != SQLITE_DONE)
		return lbs_error_set(err, LBS_EINPUT, "%s: cannot read: %s", in, sqlite3_errmsg(m->db));
	/* Every statement from here stops when *interrupt is set. The file
	 * attached is checked again: it is what is read. */
	sqlite3_progress_handler(m->db, 0, NULL, NULL);
	lbs_results_harden(m->db, LBS_RESULTS_MAX_VALUE, interrupt);
	copier c;
	memset(&c, 0, sizeof c);
	st = lbs_results_check_schema(m->db, "src", in, LBS_RESULTS_READ, LBS_EINPUT, NULL, err);
	if (st == LBS_OK)
		st = copier_prepare(m, in, &c, interrupt, err);
	/* The runs one by one, by the next run_id: no list of them is kept,
	 * and no statement reads src while the copies write. */
	sqlite3_stmt *first = NULL, *next = NULL;
	sqlite3_int64 n = 0;
	if (st == LBS_OK &&
	    (sqlite3_prepare_v2(m->db, "SELECT run_id FROM src.runs ORDER BY run_id LIMIT 1", -1, &first,
				NULL) != SQLITE_OK ||
	     sqlite3_prepare_v2(m->db, "SELECT run_id FROM src.runs WHERE run_id > ?1 ORDER BY run_id LIMIT 1", -1,
				&next, NULL) != SQLITE_OK ||
	     sqlite3_prepare_v2(m->db, "SELECT count(*) FROM src.runs", -1, &q, NULL) != SQLITE_OK))
		st = lbs_results_failure(m->db, interrupt, LBS_EINPUT, err, "%s: cannot read its runs", in);
	if (st == LBS_OK) {
		if ((rc = sqlite3_step(q)) == SQLITE_ROW)
			n = sqlite3_column_int64(q, 0);
		else
			st = lbs_results_failure(m->db, interrupt, LBS_EINPUT, err, "%s: cannot read its runs", in);
	}
	sqlite3_finalize(q);
	if (st == LBS_OK && !per_run && (sqlite3_uint64)n != n_tags)
		st = lbs_error_set(err, LBS_EINPUT, "%s: holds %lld runs where %zu were expected, one per point",
				   in, (long long)n, n_tags);
	if (st == LBS_OK && interrupt && *interrupt)
		st = lbs_error_set(err, LBS_EINTR, "interrupted while merging %s", in);
	if (st == LBS_OK && !per_run && sqlite3_exec(m->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		st = db_error(m->db, err, m->path, "cannot write");
	lbs_merge_counts got = { 0 };
	sqlite3_int64 prev = 0;
	for (size_t i = 0; st == LBS_OK; i++) {
		if (per_run && interrupt && *interrupt) {
			st = lbs_error_set(err, LBS_EINTR, "interrupted while merging %s", in);
			break;
		}
		sqlite3_stmt *which = i ? next : first;
		sqlite3_bind_int64(next, 1, prev);
		rc = sqlite3_step(which);
		sqlite3_int64 old = rc == SQLITE_ROW ? sqlite3_column_int64(which, 0) : 0;
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			st = lbs_results_failure(m->db, interrupt, LBS_EINPUT, err, "%s: cannot read its runs", in);
		sqlite3_reset(which);
		if (st != LBS_OK || rc == SQLITE_DONE || (!per_run && i == n_tags))
			break;
		prev = old;
		bool added;
		sqlite3_int64 id = 0;
		st = copy_run(m, &c, in, old, per_run ? tags : &tags[i], !per_run, &added, &id, err);
		if (st == LBS_OK && added) {
			got.added++;
			if (!got.first_run_id)
				got.first_run_id = id;
			got.last_run_id = id;
		} else if (st == LBS_OK) {
			got.skipped++;
		}
		/* Counted as they commit: one by one, or all at the end. */
		if (per_run) {
			if (st != LBS_OK)
				break;
			add_counts(counts, &got);
			got = (lbs_merge_counts){ 0 };
		}
	}
	sqlite3_finalize(first);
	sqlite3_finalize(next);
	if (!per_run && st == LBS_OK) {
		if (sqlite3_exec(m->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
			st = db_error(m->db, err, m->path, "cannot commit");
		} else {
			add_counts(counts, &got);
		}
	}
	if (!per_run && st != LBS_OK)
		sqlite3_exec(m->db, "ROLLBACK", NULL, NULL, NULL);
	copier_free(&c);
	sqlite3_exec(m->db, "DETACH src", NULL, NULL, NULL);
	return st;
}

lbs_status lbs_merge_file(lbs_merge *m, const char *in, const lbs_merge_tag *tag,
			  const volatile sig_atomic_t *interrupt, lbs_merge_counts *counts, lbs_error *err)
{
	return merge(m, in, tag, tag != NULL, true, interrupt, counts, err);
}

lbs_status lbs_merge_points(lbs_merge *m, const char *in, const lbs_merge_tag *tags, size_t n,
			    const volatile sig_atomic_t *interrupt, lbs_merge_counts *counts, lbs_error *err)
{
	return merge(m, in, tags, n, false, interrupt, counts, err);
}

static void usage(FILE *out)
{
	fprintf(out, "Usage: lbsim merge OUT.db IN.db... [-q]\n"
		     "\n"
		     "Copies every run of each IN.db into OUT.db (created if needed), one transaction\n"
		     "per run, renumbering the runs. Runs already in OUT.db (the same runs row, or the\n"
		     "same sweep point) are skipped, so merging twice adds nothing.\n"
		     "\n"
		     "  -q, --quiet   print nothing but errors\n"
		     "  -h, --help    this help\n");
}

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = sig;
}

int lbs_merge_command(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool quiet = false;
	int c;
	while ((c = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'q': quiet = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return LBS_EUSAGE;
		}
	}
	if (argc - optind < 2) {
		fprintf(stderr, "lbsim merge: %s\n", argc == optind ? "no output or input given"
								    : "no input given");
		usage(stderr);
		return LBS_EUSAGE;
	}
	const char *out = argv[optind];
	lbs_error err = { 0 };
	if (lbs_recorder_check_path("output", out, &err) != LBS_OK) {
		fprintf(stderr, "lbsim merge: %s\n", err.msg);
		return LBS_EUSAGE;
	}
	/* Every input is checked before the output is touched. */
	for (int i = optind + 1; i < argc; i++) {
		lbs_status st = lbs_merge_check(argv[i], out, &err);
		if (st != LBS_OK) {
			fprintf(stderr, "lbsim merge: %s\n", err.msg);
			return st;
		}
	}
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	lbs_signals_watch(&interrupted); /* a wait for the output's lock gives up on them */
	lbs_merge m;
	lbs_status st = lbs_merge_open(&m, out, &err);
	lbs_merge_counts n = { 0 };
	for (int i = optind + 1; st == LBS_OK && i < argc; i++)
		st = lbs_merge_file(&m, argv[i], NULL, &interrupted, &n, &err);
	if (m.db)
		lbs_merge_close(&m);
	if (st != LBS_OK && st != LBS_EINTR && interrupted)
		st = lbs_error_set(&err, LBS_EINTR, "%s: interrupted while waiting for its lock (another "
				   "process writes to it)", out);
	if (st != LBS_OK) {
		fprintf(stderr, "lbsim merge: %s\n", err.msg);
		if (n.added)
			fprintf(stderr, "lbsim merge: the %zu run%s merged before %s kept; merging again "
				"skips them\n", n.added, n.added == 1 ? "" : "s", n.added == 1 ? "is" : "are");
		return st;
	}
	if (!quiet) {
		printf("merged %zu run%s from %d file%s into %s", n.added, n.added == 1 ? "" : "s",
		       argc - optind - 1, argc - optind - 1 == 1 ? "" : "s", out);
		if (n.added)
			printf(" (runs %lld to %lld)", (long long)n.first_run_id, (long long)n.last_run_id);
		if (n.skipped)
			printf("; %zu already there, skipped", n.skipped);
		printf("\n");
	}
	return 0;
}
