/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "analysis/export.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/buf.h"
#include "sim/recorder.h"
#include "analysis/views.h"

lbs_status lbs_analysis_open(sqlite3 **db, const char *path, lbs_error *err)
{
	return lbs_analysis_open_interruptible(db, path, NULL, err);
}

lbs_status lbs_analysis_open_interruptible(sqlite3 **db, const char *path,
					   const volatile sig_atomic_t *interrupt, lbs_error *err)
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
	lbs_results_harden(*db, LBS_RESULTS_MAX_QUERY_VALUE, interrupt);
	lbs_status st = lbs_results_check(*db, path, err);
	/* The views as temporary views: they shadow any older copy stored in
	 * the file, which is left unchanged. */
	lbs_buf views = { 0 };
	if (st == LBS_OK)
		st = lbs_views_sql(*db, true, &views, err);
	char *msg = NULL;
	if (st == LBS_OK && sqlite3_exec(*db, lbs_buf_str(&views), NULL, NULL, &msg) != SQLITE_OK)
		st = interrupt && *interrupt ? lbs_error_set(err, LBS_EINTR, "%s: interrupted", path)
					     : lbs_error_set(err, LBS_EINTERNAL, "analysis/views.sql: %s",
							     msg ? msg : "error");
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
		st = lbs_results_failure(db, NULL, LBS_EINPUT, err, "query failed");
	sqlite3_finalize(q);
	if (st == LBS_OK && (fflush(out) != 0 || ferror(out)))
		st = lbs_error_set(err, LBS_EIO, "cannot write the CSV: %s", strerror(errno));
	if (rows)
		*rows = n;
	return st;
}

static const char short_usage[] = "Usage: lbsim export RESULTS.db [NAME] [--setting COLUMN=VALUE]...\n";

static void usage(FILE *out)
{
	fprintf(out, "%s"
		     "\n"
		     "Writes the view or table NAME of a results database as CSV (with a header line)\n"
		     "on standard output. The views are those of analysis/views.sql, with run_keys (a\n"
		     "column per key that varies) and speedup_by_size, which lbsim adds for the export\n"
		     "only: the database is opened read-only. Without NAME, lists them.\n"
		     "\n"
		     "  -s, --setting COLUMN=VALUE  only the rows where COLUMN (of NAME: policy, seed,\n"
		     "                      network.bandwidth, ...) has this value, spaces aside;\n"
		     "                      repeatable\n"
		     "  -h, --help          this help\n", short_usage);
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

/* Whether NAME has the column `col`. */
static bool has_column(sqlite3 *db, const char *name, const char *col)
{
	sqlite3_stmt *q = NULL;
	bool found = false;
	char *sql = sqlite3_mprintf("SELECT * FROM \"%w\" LIMIT 0", name);
	if (sql && sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK)
		for (int c = 0; c < sqlite3_column_count(q); c++)
			found |= !strcmp(sqlite3_column_name(q, c), col);
	sqlite3_finalize(q);
	sqlite3_free(sql);
	return found;
}

static volatile sig_atomic_t interrupted;

/* export writes nothing but its standard output, so SIGINT and SIGTERM
 * end it at once (exit 130), also while a write to a full pipe blocks. */
static void on_signal(int sig)
{
	interrupted = sig;
	_exit(LBS_EINTR);
}

int lbs_export_command(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "setting", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *filters[32];
	size_t n_filters = 0;
	int c;
	while ((c = getopt_long(argc, argv, "s:h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (n_filters == 32 || !strchr(optarg, '=') || optarg[0] == '=') {
				fprintf(stderr, "lbsim export: --setting %s: expected COLUMN=VALUE (at most 32)\n%s"
					"see lbsim export --help\n", optarg, short_usage);
				return LBS_EUSAGE;
			}
			filters[n_filters++] = optarg;
			break;
		case 'h': usage(stdout); return 0;
		default: fprintf(stderr, "%ssee lbsim export --help\n", short_usage); return LBS_EUSAGE;
		}
	}
	if (argc - optind < 1 || argc - optind > 2 || (n_filters && argc - optind != 2)) {
		fprintf(stderr, "lbsim export: %s\n%ssee lbsim export --help\n",
			argc == optind ? "no results database given"
				       : argc - optind > 2 ? "expected a database and one view"
							   : "--setting needs a view", short_usage);
		return LBS_EUSAGE;
	}
	/* SIGINT and SIGTERM stop the query under way (exit status 130). */
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	lbs_error err = { 0 };
	sqlite3 *db;
	lbs_status st = lbs_analysis_open_interruptible(&db, argv[optind], &interrupted, &err);
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
	/* The rows the filters keep: a column's value as text, spaces aside. */
	lbs_buf sql = { 0 };
	lbs_buf_printf(&sql, "SELECT * FROM ");
	lbs_views_ident(&sql, name);
	for (size_t i = 0; i < n_filters; i++) {
		const char *eq = strchr(filters[i], '=');
		char col[260];
		lbs_fmt(col, sizeof col, "%.*s", (int)(eq - filters[i]), filters[i]);
		if (!has_column(db, name, col)) {
			fprintf(stderr, "lbsim export: --setting %s: %s has no column '%s' (see its header)\n",
				filters[i], name, col);
			lbs_buf_free(&sql);
			sqlite3_close(db);
			return LBS_EUSAGE;
		}
		char *v = sqlite3_mprintf("%Q", eq + 1);
		lbs_buf_printf(&sql, "%s replace(CAST(", i ? " AND" : " WHERE");
		lbs_views_ident(&sql, col);
		lbs_buf_printf(&sql, " AS TEXT), ' ', '') = replace(%s, ' ', '')", v);
		sqlite3_free(v);
	}
	st = sql.failed ? lbs_error_set(&err, LBS_EINTERNAL, "out of memory")
			: lbs_export_csv(db, lbs_buf_str(&sql), NULL, 0, stdout, NULL, &err);
	lbs_buf_free(&sql);
	sqlite3_close(db);
	if (st != LBS_OK) {
		fprintf(stderr, "lbsim export: %s: %s\n", name, err.msg);
		return st;
	}
	return 0;
}
