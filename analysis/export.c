/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "analysis/export.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/buf.h"
#include "sim/recorder.h"
#include "analysis/views.h"

lbs_status lbs_analysis_open(sqlite3 **db, const char *path, lbs_error *err)
{
	*db = NULL;
	struct stat sb;
	if (stat(path, &sb) != 0)
		return lbs_error_set(err, LBS_EINPUT, "%s: cannot read results: %s", path, strerror(errno));
	if (!S_ISREG(sb.st_mode))
		return lbs_error_set(err, LBS_EINPUT, "%s: not a results database (not a file)", path);
	if (sqlite3_open_v2(path, db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		lbs_status st = lbs_error_set(err, LBS_EINPUT, "%s: cannot open: %s", path,
					      *db ? sqlite3_errmsg(*db) : "out of memory");
		sqlite3_close(*db);
		*db = NULL;
		return st;
	}
	sqlite3_busy_timeout(*db, 60000);
	lbs_status st = lbs_results_check(*db, path, err);
	/* The views as temporary views: they shadow any older copy stored in
	 * the file, which is left unchanged. */
	lbs_buf views = { 0 };
	if (st == LBS_OK)
		st = lbs_views_sql(*db, true, &views, err);
	char *msg = NULL;
	if (st == LBS_OK && sqlite3_exec(*db, lbs_buf_str(&views), NULL, NULL, &msg) != SQLITE_OK)
		st = lbs_error_set(err, LBS_EINTERNAL, "analysis/views.sql: %s", msg ? msg : "error");
	sqlite3_free(msg);
	lbs_buf_free(&views);
	if (st != LBS_OK) {
		sqlite3_close(*db);
		*db = NULL;
	}
	return st;
}

static void csv_field(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

lbs_status lbs_export_csv(sqlite3 *db, const char *sql, const long long *params, size_t n_params,
			  FILE *out, long long *rows, lbs_error *err)
{
	sqlite3_stmt *q = NULL;
	if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
		return lbs_error_set(err, LBS_EINPUT, "cannot query: %s", sqlite3_errmsg(db));
	for (size_t i = 0; i < n_params; i++)
		sqlite3_bind_int64(q, (int)i + 1, params[i]);
	int cols = sqlite3_column_count(q);
	for (int c = 0; c < cols; c++) {
		if (c)
			fputc(',', out);
		csv_field(out, sqlite3_column_name(q, c));
	}
	fputc('\n', out);
	long long n = 0;
	int rc;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		for (int c = 0; c < cols; c++) {
			if (c)
				fputc(',', out);
			const unsigned char *v = sqlite3_column_text(q, c);
			if (v)
				csv_field(out, (const char *)v);
		}
		fputc('\n', out);
		n++;
	}
	lbs_status st = LBS_OK;
	if (rc != SQLITE_DONE)
		st = lbs_error_set(err, LBS_EINPUT, "query failed: %s", sqlite3_errmsg(db));
	sqlite3_finalize(q);
	if (st == LBS_OK && (fflush(out) != 0 || ferror(out)))
		st = lbs_error_set(err, LBS_EIO, "cannot write the CSV: %s", strerror(errno));
	if (rows)
		*rows = n;
	return st;
}

static void usage(FILE *out)
{
	fprintf(out, "Usage: lbsim export RESULTS.db NAME\n"
		     "\n"
		     "Writes the view or table NAME of a results database as CSV (with a header line)\n"
		     "on standard output. The views are those of analysis/views.sql, which lbsim adds\n"
		     "for the export only: the database is opened read-only. Without NAME, lists them.\n"
		     "\n"
		     "  -h, --help    this help\n");
}

/* "view a, view b, ..., table x, ..." into b. */
static void list_names(sqlite3 *db, lbs_buf *b, bool lines)
{
	sqlite3_stmt *q = NULL;
	if (sqlite3_prepare_v2(db, "SELECT type, name FROM (SELECT type, name FROM sqlite_temp_master "
			       "UNION SELECT type, name FROM sqlite_master) WHERE type IN ('view', 'table') "
			       "AND name NOT LIKE 'sqlite_%' ORDER BY type = 'table', name", -1, &q,
			       NULL) != SQLITE_OK)
		return;
	for (int i = 0; sqlite3_step(q) == SQLITE_ROW; i++) {
		const char *type = (const char *)sqlite3_column_text(q, 0);
		const char *name = (const char *)sqlite3_column_text(q, 1);
		if (lines)
			lbs_buf_printf(b, "%s\t%s\n", type, name);
		else
			lbs_buf_printf(b, "%s%s %s", i ? ", " : "", type, name);
	}
	sqlite3_finalize(q);
}

int lbs_export_command(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return LBS_EUSAGE;
		}
	}
	if (argc - optind < 1 || argc - optind > 2) {
		fprintf(stderr, "lbsim export: %s\n", argc == optind ? "no results database given"
								     : "expected a database and one view");
		usage(stderr);
		return LBS_EUSAGE;
	}
	lbs_error err = { 0 };
	sqlite3 *db;
	lbs_status st = lbs_analysis_open(&db, argv[optind], &err);
	if (st != LBS_OK) {
		fprintf(stderr, "lbsim export: %s\n", err.msg);
		return st;
	}
	lbs_buf names = { 0 };
	if (argc - optind == 1) {
		list_names(db, &names, true);
		fputs(lbs_buf_str(&names), stdout);
		lbs_buf_free(&names);
		sqlite3_close(db);
		return 0;
	}
	const char *name = argv[optind + 1];
	sqlite3_stmt *q = NULL;
	bool known = false;
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM (SELECT type, name FROM sqlite_temp_master UNION "
			       "SELECT type, name FROM sqlite_master) WHERE type IN ('view', 'table') "
			       "AND name = ?1 AND name NOT LIKE 'sqlite_%'", -1, &q, NULL) == SQLITE_OK) {
		sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
		known = sqlite3_step(q) == SQLITE_ROW;
	}
	sqlite3_finalize(q);
	if (!known) {
		list_names(db, &names, false);
		fprintf(stderr, "lbsim export: %s has no view or table '%s' (it has: %s)\n", argv[optind], name,
			lbs_buf_str(&names));
		lbs_buf_free(&names);
		sqlite3_close(db);
		return LBS_EUSAGE;
	}
	char *sql = sqlite3_mprintf("SELECT * FROM \"%w\"", name);
	st = sql ? lbs_export_csv(db, sql, NULL, 0, stdout, NULL, &err)
		 : lbs_error_set(&err, LBS_EINTERNAL, "out of memory");
	sqlite3_free(sql);
	sqlite3_close(db);
	if (st != LBS_OK) {
		fprintf(stderr, "lbsim export: %s: %s\n", name, err.msg);
		return st;
	}
	return 0;
}
