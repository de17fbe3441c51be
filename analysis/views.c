/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "analysis/views.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/outfile.h"
#include "util/units.h"
#include "analysis/files.h"
#include "models/policy.h"
#include "sim/recorder.h"

void lbs_views_ident(lbs_buf *b, const char *s)
{
	lbs_buf_printf(b, "\"");
	for (; *s; s++)
		lbs_buf_printf(b, *s == '"' ? "\"\"" : "%c", *s);
	lbs_buf_printf(b, "\"");
}

static void sql_text(lbs_buf *b, const char *s)
{
	lbs_buf_printf(b, "'");
	for (; *s; s++)
		lbs_buf_printf(b, *s == '\'' ? "''" : "%c", *s);
	lbs_buf_printf(b, "'");
}

/* The keys that vary within a scenario: more than one value among its
 * runs, or missing from some. The seed, the scenario's name and the
 * policy's name have columns of their own; a policy's options
 * ([policy.NAME]) vary when they do among the runs of that policy. */
static const char varied_sql[] =
	"WITH rc AS (SELECT r.scenario, c.run_id, c.section, c.key, c.value FROM run_config c "
	"            JOIN runs r ON r.run_id = c.run_id "
	"            WHERE c.section <> 'policy' AND c.section NOT LIKE 'policy.%' "
	"              AND NOT (c.section = 'run' AND c.key IN ('seed', 'name'))), "
	"     n AS (SELECT scenario, count(*) AS runs FROM runs GROUP BY scenario), "
	"     pc AS (SELECT r.scenario, r.policy, c.section, c.key, c.value FROM run_config c "
	"            JOIN runs r ON r.run_id = c.run_id WHERE c.section = 'policy.' || r.policy), "
	"     np AS (SELECT scenario, policy, count(*) AS runs FROM runs GROUP BY scenario, policy) "
	"SELECT section, key FROM ("
	"  SELECT rc.section, rc.key FROM rc JOIN n ON n.scenario = rc.scenario "
	"  GROUP BY rc.scenario, rc.section, rc.key "
	"  HAVING count(DISTINCT rc.value) > 1 OR count(*) < max(n.runs) "
	"  UNION "
	"  SELECT pc.section, pc.key FROM pc JOIN np ON np.scenario = pc.scenario AND np.policy = pc.policy "
	"  GROUP BY pc.scenario, pc.section, pc.key "
	"  HAVING count(DISTINCT pc.value) > 1 OR count(*) < max(np.runs)) "
	"ORDER BY section, key";

/* The number and unit of "10 Gbit/s", "4" or "50%"; false when it does not
 * start with a finite number. */
static bool number_unit(const char *s, double *v, const char **unit)
{
	char *end;
	while (*s == ' ')
		s++;
	if (!((*s >= '0' && *s <= '9') || *s == '-' || *s == '+' || *s == '.'))
		return false;
	*v = strtod(s, &end);
	if (end == s || !isfinite(*v))
		return false;
	while (*end == ' ')
		end++;
	*unit = end;
	return true;
}

/* Decides how the values of k read as numbers: all with one unit as
 * written, else all quantities of one dimension (in base units). */
static void classify(sqlite3 *db, lbs_varied_key *k)
{
	static const struct { lbs_dim dim; const char *unit; } dims[] = {
		{ LBS_DIM_TIME, "s" }, { LBS_DIM_BYTES, "B" }, { LBS_DIM_BANDWIDTH, "B/s" },
	};
	bool same_unit = true, any = false, dim_ok[3] = { true, true, true };
	char first_unit[32] = "";
	sqlite3_stmt *q = NULL;
	if (sqlite3_prepare_v2(db, "SELECT DISTINCT value FROM run_config WHERE section = ?1 AND key = ?2",
			       -1, &q, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_text(q, 1, k->section, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 2, k->key, -1, SQLITE_STATIC);
	while (sqlite3_step(q) == SQLITE_ROW) {
		const char *s = (const char *)sqlite3_column_text(q, 0);
		double v;
		const char *unit;
		char why[128];
		if (!s || !number_unit(s, &v, &unit)) {
			same_unit = false;
		} else if (!any) {
			snprintf(first_unit, sizeof first_unit, "%s", unit);
			same_unit = strlen(unit) < sizeof first_unit;
		} else if (strcmp(unit, first_unit)) {
			same_unit = false;
		}
		for (size_t d = 0; d < 3; d++)
			dim_ok[d] = dim_ok[d] && s && lbs_parse_quantity(s, dims[d].dim, &v, why, sizeof why);
		any = true;
	}
	sqlite3_finalize(q);
	if (!any)
		return;
	if (same_unit) {
		k->numeric = true;
		snprintf(k->unit, sizeof k->unit, "%s", first_unit);
	} else {
		for (size_t d = 0; d < 3 && !k->numeric; d++)
			if (dim_ok[d]) {
				k->numeric = true;
				snprintf(k->unit, sizeof k->unit, "%s", dims[d].unit);
			}
	}
	if (k->numeric && k->unit[0])
		snprintf(k->column, sizeof k->column, "%s [%s]", k->name, k->unit);
	else
		snprintf(k->column, sizeof k->column, "%s", k->name);
}

lbs_status lbs_views_keys(sqlite3 *db, lbs_varied_key **keys, size_t *n, lbs_error *err)
{
	*keys = NULL;
	*n = 0;
	sqlite3_stmt *q = NULL;
	if (sqlite3_prepare_v2(db, varied_sql, -1, &q, NULL) != SQLITE_OK)
		return lbs_error_set(err, LBS_EIO, "cannot find the keys that vary: %s", sqlite3_errmsg(db));
	lbs_status st = LBS_OK;
	while (sqlite3_step(q) == SQLITE_ROW) {
		lbs_varied_key *k = realloc(*keys, (*n + 1) * sizeof *k);
		if (!k) {
			st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
			break;
		}
		*keys = k;
		k += *n;
		memset(k, 0, sizeof *k);
		snprintf(k->section, sizeof k->section, "%s", (const char *)sqlite3_column_text(q, 0));
		snprintf(k->key, sizeof k->key, "%s", (const char *)sqlite3_column_text(q, 1));
		snprintf(k->name, sizeof k->name, "%s.%s", k->section, k->key);
		snprintf(k->column, sizeof k->column, "%s", k->name);
		(*n)++;
	}
	sqlite3_finalize(q);
	for (size_t i = 0; st == LBS_OK && i < *n; i++)
		classify(db, &(*keys)[i]);
	if (st != LBS_OK) {
		free(*keys);
		*keys = NULL;
		*n = 0;
	}
	return st;
}

/* The value of key k of run r.run_id, as written. */
static void value_of(lbs_buf *b, const lbs_varied_key *k)
{
	lbs_buf_printf(b, "(SELECT c.value FROM run_config c WHERE c.run_id = r.run_id AND c.section = ");
	sql_text(b, k->section);
	lbs_buf_printf(b, " AND c.key = ");
	sql_text(b, k->key);
	lbs_buf_printf(b, ")");
}

/* The number of k's value: a CASE over its distinct values. */
static void number_of(sqlite3 *db, lbs_buf *b, const lbs_varied_key *k)
{
	static const lbs_dim dims[] = { LBS_DIM_TIME, LBS_DIM_BYTES, LBS_DIM_BANDWIDTH };
	static const char *const units[] = { "s", "B", "B/s" };
	lbs_dim dim = LBS_DIM_NONE;
	bool as_written = true;
	for (size_t d = 0; d < 3; d++)
		if (!strcmp(k->unit, units[d]))
			dim = dims[d];
	lbs_buf_printf(b, "CASE ");
	value_of(b, k);
	sqlite3_stmt *q = NULL;
	if (sqlite3_prepare_v2(db, "SELECT DISTINCT value FROM run_config WHERE section = ?1 AND key = ?2 "
			       "ORDER BY value", -1, &q, NULL) == SQLITE_OK) {
		sqlite3_bind_text(q, 1, k->section, -1, SQLITE_STATIC);
		sqlite3_bind_text(q, 2, k->key, -1, SQLITE_STATIC);
		/* Units as written first: "10 Gbit/s" is 10 when every value is in Gbit/s. */
		while (sqlite3_step(q) == SQLITE_ROW) {
			const char *s = (const char *)sqlite3_column_text(q, 0), *unit;
			double v = NAN;
			char why[128];
			if (!number_unit(s, &v, &unit) || strcmp(unit, k->unit))
				as_written = false;
			if (!as_written && dim != LBS_DIM_NONE)
				lbs_parse_quantity(s, dim, &v, why, sizeof why);
			if (!isfinite(v))
				continue;
			lbs_buf_printf(b, " WHEN ");
			sql_text(b, s);
			if (v == floor(v) && fabs(v) < 1e15)
				lbs_buf_printf(b, " THEN %.0f", v);
			else
				lbs_buf_printf(b, " THEN %.17g", v);
		}
		sqlite3_finalize(q);
	}
	lbs_buf_printf(b, " END");
}

/* The names of the views of views.sql, and the two written here. */
static void view_names(const char *sql, void (*each)(lbs_buf *, const char *, size_t), lbs_buf *b)
{
	static const char create[] = "CREATE VIEW IF NOT EXISTS ";
	for (const char *p = sql; p && (p = strstr(p, create)); ) {
		p += strlen(create);
		size_t len = strcspn(p, " \n");
		each(b, p, len);
	}
	each(b, "run_keys", strlen("run_keys"));
}

static void drop_stored(lbs_buf *b, const char *name, size_t len)
{
	lbs_buf_printf(b, "DROP VIEW IF EXISTS main.%.*s;\n", (int)len, name);
}

static void drop_temp(lbs_buf *b, const char *name, size_t len)
{
	lbs_buf_printf(b, "DROP VIEW IF EXISTS temp.%.*s;\n", (int)len, name);
}

/* run_variant with the built-in policies' defaults: a run's label is its
 * policy's name, then, in key order, each option of its own [policy.NAME]
 * section whose value differs from the default (a plugin's options, whose
 * defaults lbsim does not know, all show). */
static void variant_view(lbs_buf *b, const char *kind, const char *schema)
{
	lbs_buf_printf(b, "DROP VIEW IF EXISTS %s.run_variant;\nCREATE %s run_variant AS\n"
		       "WITH d(section, key, value) AS (VALUES ('', '', '')", schema, kind);
	for (const lbs_policy_ops *const *p = lbs_policies; *p; p++)
		for (size_t i = 0; i < (*p)->n_options; i++) {
			const lbs_key_spec *k = &(*p)->options[i];
			char section[LBS_NAME_MAX + 16];
			snprintf(section, sizeof section, "policy.%s", (*p)->name);
			lbs_buf_printf(b, ", (");
			sql_text(b, section);
			lbs_buf_printf(b, ", ");
			sql_text(b, k->name);
			lbs_buf_printf(b, ", ");
			if (k->def)
				sql_text(b, k->def);
			else
				lbs_buf_printf(b, "NULL");
			lbs_buf_printf(b, ")");
		}
	lbs_buf_printf(b, ")\nSELECT r.run_id, r.policy, r.policy || coalesce(' (' || (\n"
		       "  SELECT group_concat(key || '=' || value, ', ') FROM (SELECT c.key, c.value FROM run_config c\n"
		       "    LEFT JOIN d ON d.section = c.section AND d.key = c.key\n"
		       "    WHERE c.run_id = r.run_id AND c.section = 'policy.' || r.policy\n"
		       "      AND (d.value IS NULL OR c.value <> d.value) ORDER BY c.key)) || ')', '') AS variant\n"
		       "FROM runs r;\n");
}

lbs_status lbs_views_sql(sqlite3 *db, bool temp, lbs_buf *b, lbs_error *err)
{
	static const char from[] = "CREATE VIEW IF NOT EXISTS";
	const char *sql = lbs_analysis_text("views.sql");
	if (!sql)
		return lbs_error_set(err, LBS_EINTERNAL, "analysis/views.sql is not compiled in");
	view_names(sql, temp ? drop_temp : drop_stored, b);
	/* views.sql, as temporary views when asked. */
	for (const char *p = sql, *q; *p; p = q + strlen(from)) {
		q = strstr(p, from);
		if (!q) {
			lbs_buf_printf(b, "%s", p);
			break;
		}
		lbs_buf_printf(b, "%.*s%s", (int)(q - p), p, temp ? "CREATE TEMP VIEW" : "CREATE VIEW");
	}
	lbs_varied_key *keys;
	size_t n;
	lbs_status st = lbs_views_keys(db, &keys, &n, err);
	if (st != LBS_OK)
		return st;
	const char *kind = temp ? "TEMP VIEW" : "VIEW", *schema = temp ? "temp" : "main";
	variant_view(b, kind, schema);
	lbs_buf_printf(b, "\n-- Written by lbsim for this file's runs (analysis/views.c).\n"
		       "CREATE %s run_keys AS\nSELECT r.run_id, s.setting_id, p.point_id, r.scenario, "
		       "v.variant AS policy, r.seed, r.n_workers", kind);
	for (size_t i = 0; i < n; i++) {
		const lbs_varied_key *k = &keys[i];
		lbs_buf_printf(b, ",\n  ");
		if (k->numeric && !k->unit[0]) {
			number_of(db, b, k);
		} else {
			value_of(b, k);
			if (k->numeric) {
				lbs_buf_printf(b, " AS ");
				lbs_views_ident(b, k->name);
				lbs_buf_printf(b, ",\n  ");
				number_of(db, b, k);
			}
		}
		lbs_buf_printf(b, " AS ");
		lbs_views_ident(b, k->column);
	}
	lbs_buf_printf(b, "\nFROM runs r JOIN run_setting s ON s.run_id = r.run_id "
		       "JOIN run_point p ON p.run_id = r.run_id JOIN run_variant v ON v.run_id = r.run_id "
		       "ORDER BY r.run_id;\n");
	lbs_buf_printf(b, "DROP VIEW IF EXISTS %s.speedup_by_size;\nCREATE %s speedup_by_size AS\n"
		       "SELECT b.scenario, b.policy, b.n_workers", schema, kind);
	for (size_t i = 0; i < n; i++) {
		lbs_buf_printf(b, ", k.");
		lbs_views_ident(b, keys[i].name);
		if (strcmp(keys[i].name, keys[i].column)) {
			lbs_buf_printf(b, ", k.");
			lbs_views_ident(b, keys[i].column);
		}
	}
	lbs_buf_printf(b, ", b.point_id, b.runs, b.mean_speedup, b.min_speedup, b.max_speedup, b.sd_speedup, "
		       "b.ci95_low, b.ci95_high\n"
		       "FROM speedup_by_point b JOIN run_keys k ON k.run_id = b.first_run_id\n"
		       "ORDER BY b.scenario, b.policy, b.n_workers, b.point_id;\n");
	free(keys);
	if (b->failed)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	return LBS_OK;
}

lbs_status lbs_views_store(sqlite3 *db, const char *path, lbs_error *err)
{
	if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return lbs_error_set(err, LBS_EIO, "%s: cannot store the analysis views: %s", path,
				     sqlite3_errmsg(db));
	lbs_buf b = { 0 };
	lbs_status st = lbs_views_sql(db, false, &b, err);
	char *msg = NULL;
	if (st == LBS_OK && sqlite3_exec(db, lbs_buf_str(&b), NULL, NULL, &msg) != SQLITE_OK)
		st = lbs_error_set(err, LBS_EIO, "%s: cannot store the analysis views: %s", path,
				   msg ? msg : sqlite3_errmsg(db));
	sqlite3_free(msg);
	lbs_buf_free(&b);
	if (st == LBS_OK && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		st = lbs_error_set(err, LBS_EIO, "%s: cannot store the analysis views: %s", path,
				   sqlite3_errmsg(db));
	if (st != LBS_OK)
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return st;
}

static void usage(FILE *out)
{
	fprintf(out, "Usage: lbsim views RESULTS.db [-q]\n"
		     "\n"
		     "Stores the analysis views in a results database, replacing older copies: those\n"
		     "of analysis/views.sql, run_keys (a column for each key that varies) and\n"
		     "speedup_by_size with those columns. lbsim writes them with every run; this adds\n"
		     "them to a file written by an older lbsim, or by another program.\n"
		     "\n"
		     "  -q, --quiet   print nothing but errors\n"
		     "  -h, --help    this help\n");
}

int lbs_views_command(int argc, char **argv)
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
		default:
			fprintf(stderr, "Usage: lbsim views RESULTS.db [-q] (see lbsim views --help)\n");
			return LBS_EUSAGE;
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "lbsim views: %s\nUsage: lbsim views RESULTS.db [-q] (see lbsim views --help)\n",
			argc == optind ? "no results database given" : "one results database at a time");
		return LBS_EUSAGE;
	}
	const char *path = argv[optind];
	lbs_error err = { 0 };
	/* Read-write, never created: a file that is not a results database is left alone. */
	sqlite3 *db = NULL;
	lbs_status st = LBS_OK;
	/* SIGINT, SIGTERM: held back while the file is read and its views
	 * stored (one transaction; a wait for the file's lock gives up on
	 * them), then exit 130, the file as it was or with its views. */
	lbs_signals_exit();
	sigset_t held;
	lbs_signals_hold(&held);
	struct stat sb;
	if (stat(path, &sb) != 0)
		st = lbs_error_set(&err, LBS_EINPUT, "%s: cannot read results: %s", path, strerror(errno));
	else if (!S_ISREG(sb.st_mode))
		st = lbs_error_set(&err, LBS_EINPUT, "%s: not a results database (not a file)", path);
	else if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
		st = lbs_error_set(&err, LBS_EIO, "%s: cannot open: %s", path,
				   db ? sqlite3_errmsg(db) : "out of memory");
	if (st == LBS_OK) {
		/* Written to: nothing in it but lbsim's tables, indexes and views
		 * (refused as the command's input, exit status 3). */
		lbs_recorder_busy(db); /* another writer's lock: wait for it, not after a signal */
		lbs_results_harden(db, LBS_RESULTS_MAX_VALUE, NULL);
		int version = 0;
		st = lbs_results_check_schema(db, "main", path, LBS_RESULTS_WRITE, LBS_EINPUT, &version, &err);
		if (st == LBS_OK && version == 0) /* empty */
			st = lbs_error_set(&err, LBS_EINPUT, "%s: not an lbsim results database of schema version "
					   "%d (it has user_version 0 and no runs table)", path, LBS_SCHEMA_VERSION);
	}
	if (st == LBS_OK)
		st = lbs_signals_pending() ? lbs_error_set(&err, LBS_EINTR, "interrupted")
					   : lbs_views_store(db, path, &err);
	long long views = 0;
	sqlite3_stmt *q = NULL;
	if (st == LBS_OK && sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master WHERE type = 'view'",
					       -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
		views = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	sqlite3_close(db);
	lbs_signals_release(&held);
	if (st != LBS_OK) {
		fprintf(stderr, "lbsim views: %s\n", err.msg);
		return st;
	}
	if (!quiet)
		printf("%s: %lld views\n", path, views);
	return 0;
}

lbs_status lbs_views_materialize(sqlite3 *db, lbs_error *err)
{
	/* in the order they are built on one another */
	static const char *const names[] = { "run_setting", "run_point", "run_variant", "run_unique", "speedup",
					     "run_keys" };
	lbs_status st = LBS_OK;
	for (size_t i = 0; st == LBS_OK && i < sizeof names / sizeof *names; i++) {
		sqlite3_stmt *q = NULL;
		if (sqlite3_prepare_v2(db, "SELECT sql FROM sqlite_temp_master WHERE type = 'view' AND name = ?1", -1,
				       &q, NULL) != SQLITE_OK)
			return lbs_error_set(err, LBS_EIO, "cannot read the views: %s", sqlite3_errmsg(db));
		sqlite3_bind_text(q, 1, names[i], -1, SQLITE_STATIC);
		const char *sql = sqlite3_step(q) == SQLITE_ROW ? (const char *)sqlite3_column_text(q, 0) : NULL;
		/* "CREATE ... VIEW [IF NOT EXISTS] NAME AS SELECT ...": the query after NAME AS */
		const char *body = sql ? strstr(sql, names[i]) : NULL;
		if (body) {
			body += strlen(names[i]);
			while (*body == ' ' || *body == '\n')
				body++;
			body = (body[0] == 'A' || body[0] == 'a') && (body[1] == 'S' || body[1] == 's') &&
					(body[2] == ' ' || body[2] == '\n')
				       ? body + 3
				       : NULL;
		}
		if (body) {
			lbs_buf b = { 0 };
			lbs_buf_printf(&b, "DROP VIEW temp.%s; CREATE TEMP TABLE %s AS %s", names[i], names[i], body);
			if (b.failed)
				st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
			else if (sqlite3_exec(db, lbs_buf_str(&b), NULL, NULL, NULL) != SQLITE_OK)
				st = lbs_error_set(err, LBS_EIO, "cannot compute the view %s: %s", names[i],
						   sqlite3_errmsg(db));
			lbs_buf_free(&b);
		}
		sqlite3_finalize(q);
	}
	return st;
}
