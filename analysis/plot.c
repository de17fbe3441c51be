/* SPDX-License-Identifier: GPL-3.0-or-later */
/* `lbsim plot`: for each plot, a query over the analysis views writes a CSV
 * next to the PNG, and gnuplot renders the PNG from it with the matching
 * script of analysis/ (compiled in), fed on its standard input. The CSV and
 * the script are all a user needs to redraw a plot by hand. */
#include "analysis/plot.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/wait.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/outfile.h"
#include "util/proc.h"
#include "analysis/export.h"
#include "analysis/views.h"

/* The availability plot has at most this many points a line. */
#define AVAILABILITY_BINS 200
#define LBS_STR_(x) #x
#define LBS_STR(x) LBS_STR_(x)

/* More workers than this are drawn as one line per group (their mean). */
#define PER_WORKER_MAX 32

/* A gnuplot string expression: single quotes, '' for a quote; a newline
 * becomes "\n" joined with '.'. */
static void gp_string(lbs_buf *b, const char *s)
{
	lbs_buf_printf(b, "'");
	for (; *s; s++)
		if (*s == '\n')
			lbs_buf_printf(b, "' . \"\\n\" . '");
		else
			lbs_buf_printf(b, *s == '\'' ? "''" : "%c", *s);
	lbs_buf_printf(b, "'");
}

static void gp_var(lbs_buf *b, const char *name, const char *value)
{
	lbs_buf_printf(b, "%s = ", name);
	gp_string(b, value);
	lbs_buf_printf(b, "\n");
}

/* Runs gnuplot in the folder `cwd` with `preamble` then the script on its
 * standard input. Nothing but fixed names reaches it (the files are in
 * cwd): no path of the user's, and the scripts run no shell. */
static lbs_status run_gnuplot(const char *gnuplot, const char *cwd, const char *script_name,
			      const char *preamble, lbs_error *err)
{
	const char *script = lbs_analysis_text(script_name);
	if (!script)
		return lbs_error_set(err, LBS_EINTERNAL, "analysis/%s is not compiled in", script_name);
	int fd[2];
	if (pipe(fd) != 0)
		return lbs_error_set(err, LBS_EIO, "cannot run gnuplot: %s", strerror(errno));
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return lbs_error_set(err, LBS_EIO, "cannot run gnuplot: %s", strerror(errno));
	}
	if (pid == 0) {
#ifdef __linux__
		/* gnuplot dies with lbsim, killed or not */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
#endif
		dup2(fd[0], STDIN_FILENO);
		close(fd[0]);
		close(fd[1]);
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0)
			dup2(null, STDOUT_FILENO);
		if (chdir(cwd) != 0)
			_exit(127);
		execl(gnuplot, "gnuplot", (char *)NULL);
		_exit(127);
	}
	lbs_signals_child(pid);
	close(fd[0]);
	/* gnuplot may stop reading on an error: do not die of SIGPIPE. */
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, &old);
	FILE *in = fdopen(fd[1], "w");
	if (in) {
		fputs(preamble, in);
		fputs(script, in);
		fclose(in);
	} else {
		close(fd[1]);
	}
	sigaction(SIGPIPE, &old, NULL);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			lbs_signals_child_done(pid);
			return lbs_error_set(err, LBS_EIO, "gnuplot: %s", strerror(errno));
		}
	lbs_signals_child_done(pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return lbs_error_set(err, LBS_EIO, "gnuplot failed on analysis/%s (its messages are above)",
				     script_name);
	return LBS_OK;
}

/* One value of a query with one integer parameter, as text ("" for none). */
static void query_text(sqlite3 *db, const char *sql, long long param, char *buf, size_t len)
{
	sqlite3_stmt *q = NULL;
	buf[0] = '\0';
	if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_int64(q, 1, param);
	if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_text(q, 0))
		snprintf(buf, len, "%s", (const char *)sqlite3_column_text(q, 0));
	sqlite3_finalize(q);
}

static long long query_int(sqlite3 *db, const char *sql, long long param)
{
	char buf[64];
	query_text(db, sql, param, buf, sizeof buf);
	return buf[0] ? atoll(buf) : -1;
}

/* The words of column 0 of a query, space-separated (spaces in a word become '_'). */
static void query_words(sqlite3 *db, const char *sql, long long param, lbs_buf *b)
{
	sqlite3_stmt *q = NULL;
	if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_int64(q, 1, param);
	for (int i = 0; sqlite3_step(q) == SQLITE_ROW; i++) {
		const char *w = (const char *)sqlite3_column_text(q, 0);
		lbs_buf_printf(b, "%s", i ? " " : "");
		for (; w && *w; w++)
			lbs_buf_printf(b, "%c", *w == ' ' || *w == '\t' ? '_' : *w);
	}
	sqlite3_finalize(q);
}

/* A key the plots can group, split or filter by. */
typedef struct axis {
	char name[260];       /* as the user writes it: policy, n_workers, network.bandwidth */
	char text[600];       /* SQL over run_keys k: the value as written */
	char number[600];     /* SQL over run_keys k: the value as a number ("" when not numeric) */
	char unit[32];
} axis;

typedef struct plot_ctx {
	sqlite3 *db;
	const lbs_plot_options *o;
	const char *gnuplot;
	lbs_varied_key *keys;
	size_t n_keys;
	long long setting;
	long long whatif; /* the lbsim whatif analysis to draw (0: none) */
	long long hybrid; /* the hybrid run to draw (0: none) */
	char setting_title[700];
	lbs_buf *made;
	int n_made;
	const char *work; /* the private folder gnuplot works in (DIR/.lbsim-plot.tmp.XXXXXX) */
} plot_ctx;

/* The runs chosen by the filters: temp.plot_runs. */
#define PLOT_RUNS "(SELECT run_id FROM temp.plot_runs)"

/* Finds the axis `name`: a column of runs, or a key that varies. */
static bool find_axis(const plot_ctx *c, const char *name, axis *a)
{
	memset(a, 0, sizeof *a);
	lbs_fmt(a->name, sizeof a->name, "%s", name);
	if (!strcmp(name, "policy") || !strcmp(name, "scenario")) {
		lbs_fmt(a->text, sizeof a->text, "k.%s", name);
		return true;
	}
	if (!strcmp(name, "n_workers") || !strcmp(name, "seed")) {
		lbs_fmt(a->text, sizeof a->text, "k.%s", name);
		lbs_fmt(a->number, sizeof a->number, "k.%s", name);
		return true;
	}
	for (size_t i = 0; i < c->n_keys; i++) {
		const lbs_varied_key *k = &c->keys[i];
		if (strcmp(k->name, name) && strcmp(k->column, name))
			continue;
		lbs_buf b = { 0 };
		lbs_buf_printf(&b, "k.");
		lbs_views_ident(&b, k->name);
		lbs_fmt(a->text, sizeof a->text, "%s", lbs_buf_str(&b));
		if (k->numeric) {
			lbs_buf_free(&b);
			lbs_buf_printf(&b, "k.");
			lbs_views_ident(&b, k->column);
			lbs_fmt(a->number, sizeof a->number, "%s", lbs_buf_str(&b));
			lbs_fmt(a->unit, sizeof a->unit, "%s", k->unit);
		}
		lbs_fmt(a->name, sizeof a->name, "%s", k->name);
		lbs_buf_free(&b);
		return true;
	}
	return false;
}

/* "network.bandwidth, run.iterations": the keys that vary, for messages. */
static void list_keys(const plot_ctx *c, lbs_buf *b)
{
	lbs_buf_printf(b, "policy, seed, n_workers, scenario");
	for (size_t i = 0; i < c->n_keys; i++)
		lbs_buf_printf(b, ", %s", c->keys[i].name);
}

static lbs_status unknown_axis(const plot_ctx *c, const char *option, const char *name, lbs_error *err)
{
	lbs_buf b = { 0 };
	list_keys(c, &b);
	lbs_status st = lbs_error_set(err, LBS_EUSAGE, "%s %s: not a key that varies in these results "
				      "(they vary: %s)", option, name, lbs_buf_str(&b));
	lbs_buf_free(&b);
	return st;
}

/* Fills temp.plot_runs with the runs every filter accepts. */
static lbs_status select_runs(plot_ctx *c, lbs_error *err)
{
	lbs_buf sql = { 0 };
	lbs_buf_printf(&sql, "DROP TABLE IF EXISTS temp.plot_runs; CREATE TEMP TABLE plot_runs AS "
		       "SELECT r.run_id FROM runs r JOIN run_setting s ON s.run_id = r.run_id WHERE 1");
	for (size_t i = 0; i < c->o->n_filters; i++) {
		const char *f = c->o->filters[i], *eq = strchr(f, '=');
		char *end;
		long long id = strtoll(f, &end, 10);
		if (!eq && !*end && id >= 1) {
			long long n = query_int(c->db, "SELECT max(setting_id) FROM run_setting", 0);
			if (id > n) {
				lbs_buf_free(&sql);
				return lbs_error_set(err, LBS_EUSAGE, "--setting %s: the results have settings "
						     "1 to %lld (see the run_setting view)", f, n);
			}
			c->setting = id; /* the per-setting plots' setting, not a filter */
			continue;
		}
		if (!eq || eq == f) {
			lbs_buf_free(&sql);
			return lbs_error_set(err, LBS_EUSAGE, "--setting %s: expected a setting_id (1, 2, ...) "
					     "or KEY=VALUE (policy=lbbsp-gpu, network.bandwidth=10 Gbit/s)", f);
		}
		char key[260], section[260];
		lbs_fmt(key, sizeof key, "%.*s", (int)(eq - f), f);
		char *v = sqlite3_mprintf("%Q", eq + 1);
		if (!strcmp(key, "policy") || !strcmp(key, "scenario") || !strcmp(key, "seed") ||
		    !strcmp(key, "n_workers")) {
			lbs_buf_printf(&sql, " AND replace(CAST(r.%s AS TEXT), ' ', '') = replace(%s, ' ', '')", key,
				       v);
		} else {
			const char *dot = strrchr(key, '.');
			lbs_fmt(section, sizeof section, "%.*s", dot ? (int)(dot - key) : 0, key);
			char *sq = sqlite3_mprintf("%Q", section), *kq = sqlite3_mprintf("%Q", dot ? dot + 1 : key);
			char *known = sqlite3_mprintf("SELECT count(*) FROM run_config WHERE section = %s AND key = %s",
						      sq, kq);
			long long rows = query_int(c->db, known, 0);
			sqlite3_free(known);
			if (rows <= 0) {
				sqlite3_free(sq);
				sqlite3_free(kq);
				sqlite3_free(v);
				lbs_buf_free(&sql);
				lbs_status st = unknown_axis(c, "--setting", key, err);
				lbs_error_prefix(err, "no run has the key %s", key);
				return st;
			}
			lbs_buf_printf(&sql, " AND EXISTS (SELECT 1 FROM run_config x WHERE x.run_id = r.run_id AND "
				       "x.section = %s AND x.key = %s AND replace(x.value, ' ', '') = "
				       "replace(%s, ' ', ''))", sq, kq, v);
			sqlite3_free(sq);
			sqlite3_free(kq);
		}
		sqlite3_free(v);
	}
	lbs_buf_printf(&sql, ";");
	lbs_status st = LBS_OK;
	if (sql.failed || sqlite3_exec(c->db, lbs_buf_str(&sql), NULL, NULL, NULL) != SQLITE_OK)
		st = lbs_error_set(err, LBS_EINTERNAL, "cannot select the runs: %s", sqlite3_errmsg(c->db));
	lbs_buf_free(&sql);
	if (st == LBS_OK && query_int(c->db, "SELECT count(*) FROM temp.plot_runs", 0) <= 0) {
		lbs_buf b = { 0 };
		for (size_t i = 0; i < c->o->n_filters; i++)
			lbs_buf_printf(&b, "%s--setting %s", i ? " " : "", c->o->filters[i]);
		st = lbs_error_set(err, LBS_EUSAGE, "no run matches %s (the values are those of the "
				   "run_keys view)", lbs_buf_str(&b));
		lbs_buf_free(&b);
	}
	return st;
}

/* A png of a size in inches is drawn at this many pixels per inch, its
 * text and lines scaled to match (what print asks for). */
#define PNG_DPI 300.0

/* The gnuplot variables of the picture's size and font for format fmt
 * (the analysis scripts: width, height, scale, font), where --size, --font or
 * --paper set them: pixels for png and svg, inches for pdf; a size in
 * inches is drawn at PNG_DPI on a png and at 72 units per inch (a point
 * each, as in the pdf) on an svg, a size in pixels at 96 per inch (CSS's)
 * on a pdf. */
static void size_vars(const lbs_plot_options *o, const char *fmt, lbs_buf *pre)
{
	if (o->width > 0 && o->height > 0) {
		double w = o->width, h = o->height, scale = 1;
		bool png = !strcmp(fmt, "png"), pdf = !strcmp(fmt, "pdf");
		if (o->size_inches && png) {
			w *= PNG_DPI;
			h *= PNG_DPI;
			scale = PNG_DPI / 96; /* cairo draws a point of text as 96 / 72 pixels */
		} else if (o->size_inches && !pdf) {
			w *= 72;
			h *= 72;
		} else if (!o->size_inches && pdf) {
			w /= 96;
			h /= 96;
		}
		if (!pdf) {
			w = round(w);
			h = round(h);
		}
		lbs_buf_printf(pre, "width = %.6g\nheight = %.6g\nscale = %.6g\n", w, h, scale);
	}
	if (o->font)
		gp_var(pre, "font", o->font);
}

bool lbs_plot_size(const char *s, lbs_plot_options *o)
{
	char *end;
	double w = strtod(s, &end);
	if (end == s || (*end != 'x' && *end != 'X'))
		return false;
	const char *t = end + 1;
	double h = strtod(t, &end);
	if (end == t || !isfinite(w) || !isfinite(h))
		return false;
	double per_inch = 0;
	if (!strcmp(end, "in"))
		per_inch = 1;
	else if (!strcmp(end, "cm"))
		per_inch = 2.54;
	else if (*end && strcmp(end, "px"))
		return false;
	if (per_inch > 0) {
		w /= per_inch;
		h /= per_inch;
		if (!(w >= 0.5 && h >= 0.5 && w <= 100 && h <= 100))
			return false;
	} else if (!(w >= 16 && h >= 16 && w <= 20000 && h <= 20000)) {
		return false;
	}
	o->width = w;
	o->height = h;
	o->size_inches = per_inch > 0;
	return true;
}

bool lbs_plot_font(const char *s)
{
	const char *comma = strrchr(s, ',');
	if (!comma || comma - s > 63)
		return false;
	for (const char *p = s; p < comma; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      *p == ' ' || *p == '-'))
			return false;
	char *end;
	double size = strtod(comma + 1, &end);
	return end != comma + 1 && !*end && size >= 4 && size <= 72;
}

bool lbs_plot_paper(const char *name, lbs_plot_options *o)
{
	/* The text width of two-column papers (IEEE, ACM: a column about
	 * 3.5 in, the page about 7 in); the height leaves room for the caption. */
	if (!strcmp(name, "single")) {
		o->width = 3.5;
		o->height = 2.5;
	} else if (!strcmp(name, "double")) {
		o->width = 7;
		o->height = 2.75;
	} else {
		return false;
	}
	o->size_inches = true;
	if (!o->font)
		o->font = "serif,8";
	o->no_title = true;
	return true;
}

/* Writes NAME.csv from sql (?1 = param) and renders NAME.FORMAT for each
 * format from it with analysis/NAME.gp; `vars` are extra gnuplot
 * assignments. A query with no rows skips the plot, saying why. Both are
 * made in the private folder c->work and renamed into the output folder
 * when whole: a link planted there is replaced, never followed. */
static lbs_status render(plot_ctx *c, const char *name, const char *sql, long long param,
			 const char *title, const char *vars, const char *empty_why, lbs_error *err)
{
	const char *dir = c->o->dir;
	char csv[4200], work_csv[4200], data[100];
	snprintf(csv, sizeof csv, "%s/%s.csv", dir, name);
	snprintf(data, sizeof data, "%s.csv", name);
	snprintf(work_csv, sizeof work_csv, "%s/%s", c->work, data);
	int fd = open(work_csv, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return lbs_error_set(err, LBS_EIO, "%s: cannot write: %s", work_csv, strerror(errno));
	}
	long long rows = 0;
	lbs_status st = lbs_export_csv(c->db, sql, &param, 1, f, &rows, err);
	if (fclose(f) != 0 && st == LBS_OK)
		st = lbs_error_set(err, LBS_EIO, "%s: cannot write: %s", work_csv, strerror(errno));
	if (st != LBS_OK) {
		unlink(work_csv);
		lbs_error_prefix(err, "%s", csv);
		return st;
	}
	char formats[64];
	lbs_fmt(formats, sizeof formats, "%s", c->o->formats);
	if (rows == 0) {
		unlink(work_csv);
		unlink(csv); /* not a stale table of other results */
		for (char *save = NULL, *fmt = strtok_r(formats, ",", &save); fmt; fmt = strtok_r(NULL, ",", &save)) {
			char pic[4200];
			snprintf(pic, sizeof pic, "%s/%s.%s", dir, name, fmt);
			unlink(pic); /* not a stale picture of other results */
		}
		if (!c->o->quiet)
			fprintf(stderr, "lbsim plot: no %s: %s\n", name, empty_why);
		return LBS_OK;
	}
	char script[64];
	snprintf(script, sizeof script, "%s.gp", name);
	for (char *save = NULL, *fmt = strtok_r(formats, ",", &save); st == LBS_OK && fmt;
	     fmt = strtok_r(NULL, ",", &save)) {
		char pic[4200], out[100], work_pic[4200];
		snprintf(pic, sizeof pic, "%s/%s.%s", dir, name, fmt);
		snprintf(out, sizeof out, "%s.%s", name, fmt);
		snprintf(work_pic, sizeof work_pic, "%s/%s", c->work, out);
		lbs_buf pre = { 0 };
		gp_var(&pre, "data", data);
		gp_var(&pre, "out", out);
		gp_var(&pre, "format", fmt);
		gp_var(&pre, "title", c->o->no_title ? "" : title);
		size_vars(c->o, fmt, &pre);
		lbs_buf_printf(&pre, "%s", vars);
		st = pre.failed ? lbs_error_set(err, LBS_EINTERNAL, "out of memory")
				: run_gnuplot(c->gnuplot, c->work, script, lbs_buf_str(&pre), err);
		lbs_buf_free(&pre);
		if (st == LBS_OK && rename(work_pic, pic) != 0)
			st = lbs_error_set(err, LBS_EIO, "%s: cannot write: %s", pic, strerror(errno));
		if (st != LBS_OK) {
			unlink(work_pic);
			unlink(work_csv);
			return st;
		}
		c->n_made++;
		lbs_buf_printf(c->made, "%s\n", pic);
		if (!c->o->quiet) {
			printf("%s\n", pic);
			fflush(stdout); /* in order with the notes on stderr */
		}
	}
	if (rename(work_csv, csv) != 0) {
		st = lbs_error_set(err, LBS_EIO, "%s: cannot write: %s", csv, strerror(errno));
		unlink(work_csv);
	}
	return st;
}

/* The first run of each policy in the setting, among the chosen runs: what
 * the per-policy plots draw. */
#define SETTING_RUNS \
	"(SELECT min(s.run_id) FROM run_setting s JOIN run_variant r ON r.run_id = s.run_id " \
	"WHERE s.setting_id = ?1 AND s.run_id IN " PLOT_RUNS " GROUP BY r.variant)"

/* A run's label: its policy and its options that are not the defaults. */
#define VARIANT_OF(run) "(SELECT variant FROM run_variant WHERE run_id = " run ")"

/* Series numbers of the setting's runs: static first, then by run. */
#define SERIES_OF_RUN \
	"(SELECT count(*) FROM runs o WHERE o.run_id IN " SETTING_RUNS " AND " \
	"((o.policy = 'static') > (x.policy = 'static') OR " \
	"((o.policy = 'static') = (x.policy = 'static') AND o.run_id < x.run_id)))"

static lbs_status plot_per_policy(plot_ctx *c, const char *name, const char *sql, const char *what,
				  const char *empty_why, lbs_error *err)
{
	char title[900];
	lbs_fmt(title, sizeof title, "%s\n%s", what, c->setting_title);
	return render(c, name, sql, c->setting, title, "", empty_why, err);
}

static lbs_status plot_iteration_time(plot_ctx *c, lbs_error *err)
{
	static const char sql[] =
		"SELECT " SERIES_OF_RUN " AS series, " VARIANT_OF("x.run_id") " AS label, x.end_s AS time_s, x.iteration_s "
		"FROM iteration_times x WHERE x.run_id IN " SETTING_RUNS " ORDER BY series, x.iteration";
	return plot_per_policy(c, "iteration-time", sql, "Iteration time per policy",
			       "no iterations recorded (--detail runs?)", err);
}

static lbs_status plot_iteration_cdf(plot_ctx *c, lbs_error *err)
{
	static const char sql[] =
		"SELECT " SERIES_OF_RUN " AS series, " VARIANT_OF("x.run_id") " AS label, x.iteration_s, "
		"cume_dist() OVER (PARTITION BY x.run_id ORDER BY x.iteration_s) AS cdf "
		"FROM iteration_times x WHERE x.run_id IN " SETTING_RUNS " ORDER BY series, x.iteration_s";
	return plot_per_policy(c, "iteration-cdf", sql, "Iteration time, cumulative distribution per policy",
			       "no iterations recorded (--detail runs?)", err);
}

static lbs_status plot_straggler_cdf(plot_ctx *c, lbs_error *err)
{
	static const char sql[] =
		"SELECT " SERIES_OF_RUN " AS series, " VARIANT_OF("x.run_id") " AS label, x.straggler_gap_s, x.cdf "
		"FROM straggler_gap_cdf x WHERE x.run_id IN " SETTING_RUNS " ORDER BY series, x.straggler_gap_s";
	return plot_per_policy(c, "straggler-cdf", sql, "Straggler gap, cumulative distribution per policy",
			       "no iterations recorded (--detail runs?)", err);
}

/* The simulated time to each epoch (runs given in epochs) or iteration,
 * per policy; at most about 500 points a line. */
static lbs_status plot_time_to_train(plot_ctx *c, lbs_error *err)
{
	bool epochs = query_int(c->db, "SELECT count(*) FROM runs WHERE run_id IN " SETTING_RUNS
				" AND iterations_per_epoch IS NULL", c->setting) == 0;
	const char *sql = epochs
		? "SELECT " SERIES_OF_RUN " AS series, " VARIANT_OF("x.run_id") " AS label, e.epoch + 1 AS done, e.end_s AS time_s "
		  "FROM epoch_times e JOIN runs x ON x.run_id = e.run_id WHERE x.run_id IN " SETTING_RUNS
		  " ORDER BY series, done"
		: "SELECT " SERIES_OF_RUN " AS series, " VARIANT_OF("x.run_id") " AS label, i.iteration + 1 AS done, i.end_s AS time_s "
		  "FROM iterations i JOIN runs x ON x.run_id = i.run_id WHERE x.run_id IN " SETTING_RUNS
		  " AND ((i.iteration + 1) % max(1, x.iterations / 500) = 0 OR i.iteration = 0 OR "
		  "i.iteration = x.iterations - 1) ORDER BY series, done";
	char title[900], vars[200];
	lbs_fmt(title, sizeof title, "Time to train per policy\n%s", c->setting_title);
	lbs_fmt(vars, sizeof vars, "xlabel = '%s done'\n", epochs ? "epochs" : "iterations");
	return render(c, "time-to-train", sql, c->setting, title, vars,
		      "no iterations recorded (--detail runs?)", err);
}

/* The groups' CPU readings over time, with the iteration time of the
 * setting's first run that is not static (or its static run): only where a
 * worker's availability source reports readings (--detail workers). */
static lbs_status plot_availability(plot_ctx *c, lbs_error *err)
{
	long long run = query_int(c->db, "SELECT run_id FROM runs WHERE run_id IN " SETTING_RUNS
				  " ORDER BY policy = 'static', run_id LIMIT 1", c->setting);
	/* At most AVAILABILITY_BINS points a line, however long the run: bins
	 * of consecutive iterations (one each in a shorter run), each with the
	 * mean, least and greatest iteration time, and per group the mean,
	 * least and greatest reading of its workers in those iterations. */
	static const char sql[] =
		"WITH n AS (SELECT max(iteration) + 1 AS iters FROM iterations WHERE run_id = ?1), "
		"it AS (SELECT i.iteration, i.start_s, i.end_s - i.start_s AS v, "
		"       i.iteration * " LBS_STR(AVAILABILITY_BINS) " / n.iters AS bin FROM iterations i, n "
		"       WHERE i.run_id = ?1), "
		"has AS (SELECT 1 FROM worker_iterations x WHERE x.run_id = ?1 AND x.cpu_util > 0 LIMIT 1) "
		"SELECT 0 AS series, 'iteration time (' || (SELECT variant FROM run_variant WHERE run_id = ?1) || ')' "
		"AS label, min(it.start_s) AS time_s, avg(it.v) AS value, min(it.v) AS low, max(it.v) AS high FROM it "
		"WHERE EXISTS (SELECT 1 FROM has) GROUP BY it.bin "
		"UNION ALL "
		"SELECT g.idx, w.group_name || ' load', min(it.start_s), avg(wi.cpu_util), min(wi.cpu_util), "
		"max(wi.cpu_util) FROM worker_iterations wi "
		"JOIN workers w ON w.run_id = wi.run_id AND w.worker = wi.worker "
		"JOIN (SELECT group_name, row_number() OVER (ORDER BY min(worker)) AS idx FROM workers "
		"      WHERE run_id = ?1 GROUP BY group_name) g ON g.group_name = w.group_name "
		"JOIN it ON it.iteration = wi.iteration "
		"WHERE wi.run_id = ?1 AND wi.cpu_util IS NOT NULL AND EXISTS (SELECT 1 FROM has) "
		"GROUP BY g.idx, it.bin ORDER BY series, time_s";
	char title[900];
	lbs_fmt(title, sizeof title, "The machines' load (CPU readings) and the iteration time\n%s",
		c->setting_title);
	return render(c, "availability", sql, run, title, "",
		      "no CPU readings recorded (--detail workers, with a background generator or a trace "
		      "with cpu_util)", err);
}

/* Each worker's phases in the chosen iterations of each policy's run of
 * the setting: compute from the iteration's start, the wait at the barrier
 * to the end of the compute phase, then the aggregation. Times are from
 * the start of the first chosen iteration, so the panels share an axis. */
static lbs_status plot_gantt(plot_ctx *c, lbs_error *err)
{
	long long workers = query_int(c->db, "SELECT max(n_workers) FROM runs WHERE run_id IN " SETTING_RUNS,
				      c->setting);
	if (workers > 64) {
		if (!c->o->quiet)
			fprintf(stderr, "lbsim plot: no gantt: %lld workers are too many to draw one a row (at "
				"most 64)\n", workers);
		return LBS_OK;
	}
	char sql[3000];
	long long first = c->o->gantt_first, last = c->o->gantt_first + c->o->gantt_count - 1;
	lbs_fmt(sql, sizeof sql,
		"WITH x AS (SELECT r.run_id, r.policy FROM runs r WHERE r.run_id IN " SETTING_RUNS "), "
		"t0 AS (SELECT i.run_id, min(i.start_s) AS t0 FROM iterations i JOIN x ON x.run_id = i.run_id "
		"       WHERE i.iteration BETWEEN %lld AND %lld GROUP BY i.run_id), "
		"p AS (SELECT 0 AS phase UNION ALL SELECT 1 UNION ALL SELECT 2) "
		"SELECT " SERIES_OF_RUN " AS series, " VARIANT_OF("x.run_id") " AS label, wi.worker, w.group_name, wi.iteration, "
		"p.phase, CASE p.phase WHEN 0 THEN 'compute' WHEN 1 THEN 'wait' ELSE 'aggregation' END AS what, "
		"CASE p.phase WHEN 0 THEN i.start_s WHEN 1 THEN i.start_s + wi.compute_s ELSE i.compute_end_s END "
		"  - t0.t0 AS from_s, "
		"CASE p.phase WHEN 0 THEN i.start_s + wi.compute_s WHEN 1 THEN i.compute_end_s ELSE i.end_s END "
		"  - t0.t0 AS to_s "
		"FROM worker_iterations wi JOIN x ON x.run_id = wi.run_id "
		"JOIN t0 ON t0.run_id = wi.run_id "
		"JOIN iterations i ON i.run_id = wi.run_id AND i.iteration = wi.iteration "
		"JOIN workers w ON w.run_id = wi.run_id AND w.worker = wi.worker CROSS JOIN p "
		"WHERE wi.iteration BETWEEN %lld AND %lld "
		"ORDER BY series, wi.worker, wi.iteration, p.phase", first, last, first, last);
	char what[200], title[1000];
	if (first == last)
		lbs_fmt(what, sizeof what, "Per-worker timeline of iteration %lld", first);
	else
		lbs_fmt(what, sizeof what, "Per-worker timeline of iterations %lld to %lld", first, last);
	lbs_fmt(title, sizeof title, "%s\n%s", what, c->setting_title);
	return render(c, "gantt", sql, c->setting, title, "",
		      "no worker timings recorded in the chosen iterations (record them with --detail workers)",
		      err);
}

/* The share of its time each group's workers spend waiting at the barrier,
 * per policy: a bar per group in a cluster per policy. */
static lbs_status plot_wait_share(plot_ctx *c, lbs_error *err)
{
	lbs_buf sql = { 0 }, groups = { 0 };
	long long run = query_int(c->db, "SELECT min(run_id) FROM runs WHERE run_id IN " SETTING_RUNS, c->setting);
	query_words(c->db, "SELECT group_name FROM workers WHERE run_id = ?1 GROUP BY group_name "
			   "ORDER BY min(worker)", run, &groups);
	lbs_buf_printf(&sql, "SELECT " VARIANT_OF("x.run_id") " AS policy");
	sqlite3_stmt *q = NULL;
	if (sqlite3_prepare_v2(c->db, "SELECT group_name FROM workers WHERE run_id = ?1 GROUP BY group_name "
			       "ORDER BY min(worker)", -1, &q, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(q, 1, run);
		while (sqlite3_step(q) == SQLITE_ROW) {
			const char *g = (const char *)sqlite3_column_text(q, 0);
			char *lit = sqlite3_mprintf("%Q", g);
			lbs_buf_printf(&sql, ", sum(CASE WHEN w.group_name = %s THEN wi.wait_s END) / "
				       "sum(CASE WHEN w.group_name = %s THEN wi.compute_s + wi.wait_s + "
				       "i.end_s - i.compute_end_s END) AS ", lit, lit);
			lbs_views_ident(&sql, g);
			sqlite3_free(lit);
		}
		sqlite3_finalize(q);
	}
	lbs_buf_printf(&sql, " FROM worker_iterations wi JOIN runs x ON x.run_id = wi.run_id "
		       "JOIN workers w ON w.run_id = wi.run_id AND w.worker = wi.worker "
		       "JOIN iterations i ON i.run_id = wi.run_id AND i.iteration = wi.iteration "
		       "WHERE wi.run_id IN " SETTING_RUNS " GROUP BY x.run_id "
		       "ORDER BY x.policy = 'static' DESC, x.run_id");
	char title[900];
	lbs_fmt(title, sizeof title, "Share of each group's time spent waiting at the barrier\n%s",
		c->setting_title);
	lbs_status st = sql.failed ? lbs_error_set(err, LBS_EINTERNAL, "out of memory")
				   : render(c, "wait-share", lbs_buf_str(&sql), c->setting, title, "",
					    "no worker timings recorded (record them with --detail workers)", err);
	lbs_buf_free(&sql);
	lbs_buf_free(&groups);
	return st;
}

/* Whether key `a` follows from x among the chosen runs: one value of it
 * for each value of x (as workers.v100.count does from n_workers). */
static bool follows_from(plot_ctx *c, const axis *a, const axis *x)
{
	char sql[2000];
	lbs_fmt(sql, sizeof sql, "SELECT max(n) FROM (SELECT count(DISTINCT %s) AS n FROM run_keys k "
		"WHERE k.run_id IN " PLOT_RUNS " GROUP BY %s)", a->text, x->text);
	return query_int(c->db, sql, 0) <= 1;
}

/* The speedup over static against x, one line per combination of the
 * --by keys: the mean over the runs that differ only in their seed, with
 * bars from the least to the greatest. */
static lbs_status plot_speedup(plot_ctx *c, lbs_error *err)
{
	axis x;
	/* By default the cluster size if it varies, else the first key that does. */
	const char *xname = c->o->x;
	/* Decided on all the runs, not the chosen ones: --setting n_workers=96
	 * keeps the cluster size on the axis (one value), not the next key. */
	if (!xname)
		xname = query_int(c->db, "SELECT count(DISTINCT n_workers) FROM runs", 0) > 1 || !c->n_keys
				? "n_workers" : c->keys[0].name;
	if (!find_axis(c, xname, &x))
		return unknown_axis(c, "--x", xname, err);
	/* The lines: the --by keys, or the policy and every key that varies
	 * among the chosen runs but the seed and those that follow from x. */
	axis by[64];
	size_t n_by = 0;
	if (c->o->by) {
		char list[1024];
		lbs_fmt(list, sizeof list, "%s", c->o->by);
		for (char *save = NULL, *t = strtok_r(list, ",", &save); t && n_by < 64;
		     t = strtok_r(NULL, ",", &save))
			if (!find_axis(c, t, &by[n_by++]))
				return unknown_axis(c, "--by", t, err);
	} else {
		if (query_int(c->db, "SELECT count(DISTINCT scenario) FROM runs WHERE run_id IN " PLOT_RUNS, 0) > 1)
			find_axis(c, "scenario", &by[n_by++]);
		if (strcmp(x.name, "policy"))
			find_axis(c, "policy", &by[n_by++]);
		for (size_t i = 0; i < c->n_keys && n_by < 64; i++) {
			axis a;
			find_axis(c, c->keys[i].name, &a);
			if (strcmp(a.name, x.name) && !follows_from(c, &a, &x))
				by[n_by++] = a;
		}
	}
	/* A line's label names its value of each --by key; by default, only of
	 * the keys that vary within its scenario. */
	lbs_buf label = { 0 };
	lbs_buf_printf(&label, "ltrim(''");
	for (size_t i = 0; i < n_by; i++) {
		if (!strcmp(by[i].name, "policy") || !strcmp(by[i].name, "scenario")) {
			lbs_buf_printf(&label, " || '; ' || coalesce(%s, '-')", by[i].text);
			continue;
		}
		char k2[600];
		lbs_fmt(k2, sizeof k2, "%s", by[i].text);
		k2[0] = 'o'; /* "k.\"name\"" -> "o.\"name\"": the same key of another run */
		if (c->o->by)
			lbs_buf_printf(&label, " || '; %s=' || coalesce(%s, '-')", by[i].name, by[i].text);
		else
			lbs_buf_printf(&label, " || coalesce(CASE WHEN (SELECT count(DISTINCT coalesce(%s, '')) "
				       "FROM run_keys o WHERE o.scenario = k.scenario AND o.run_id IN " PLOT_RUNS
				       ") > 1 THEN '; %s=' || coalesce(%s, '-') END, '')", k2, by[i].name, by[i].text);
	}
	lbs_buf_printf(&label, ", '; ')");
	if (!n_by) {
		lbs_buf_free(&label);
		lbs_buf_printf(&label, "'all'");
	}
	bool numeric = x.number[0] != '\0';
	/* The x axis' label names the CSV's column of x, so that a restyle
	 * from the CSV alone labels it (analysis/speedup.gp reads it). */
	char xlabel[400];
	if (!strcmp(x.name, "n_workers"))
		lbs_fmt(xlabel, sizeof xlabel, "workers");
	else if (x.unit[0])
		lbs_fmt(xlabel, sizeof xlabel, "%s (%s)", x.name, x.unit);
	else
		lbs_fmt(xlabel, sizeof xlabel, "%s", x.name);
	for (char *p = xlabel; *p; p++)
		if (*p == ',' || *p == '"' || *p == '\n')
			*p = ' ';
	lbs_buf xcol = { 0 };
	lbs_views_ident(&xcol, xlabel);
	lbs_buf sql = { 0 };
	lbs_buf_printf(&sql,
		       "WITH d AS (SELECT replace(%s, ',', ';') AS label, %s AS x, %s AS x_text, s.speedup, "
		       "s.run_id, k.policy, k.point_id FROM speedup s JOIN run_keys k ON k.run_id = s.run_id "
		       "WHERE s.speedup IS NOT NULL AND s.run_id IN " PLOT_RUNS
		       " AND s.run_id IN (SELECT run_id FROM run_unique)), "
		       "g AS (SELECT label, x, x_text, count(*) AS runs, count(DISTINCT point_id) AS points, "
		       "avg(speedup) AS mean_speedup, min(speedup) AS min_speedup, max(speedup) AS max_speedup, "
		       "sum(speedup * speedup) AS ss, "
		       "min(run_id) AS first, max(policy = 'static') AS is_static FROM d GROUP BY label, x_text), "
		       "l AS (SELECT label, max(is_static) AS is_static, min(first) AS first FROM g GROUP BY label), "
		       "xs AS (SELECT x_text, dense_rank() OVER (ORDER BY min(first)) - 1 AS rank FROM g GROUP BY x_text) "
		       "SELECT (SELECT count(*) FROM l o WHERE o.is_static > l.is_static OR "
		       "(o.is_static = l.is_static AND o.first < l.first)) "
		       "AS series, g.label, %s AS %s, g.x_text, g.mean_speedup, g.min_speedup, g.max_speedup, g.runs, "
		       /* the 95% interval of the mean over the seeds (Student's t, views.sql's t95) */
		       "g.points, g.mean_speedup - h.half AS ci95_low, g.mean_speedup + h.half AS ci95_high "
		       "FROM g JOIN l ON l.label = g.label JOIN xs ON xs.x_text = g.x_text "
		       "JOIN (SELECT g2.label, g2.x_text, CASE WHEN g2.runs > 1 THEN coalesce(t.t, 1.96 + 2.4 / (g2.runs - 1)) "
		       "* sqrt(max(0, (g2.ss - g2.runs * g2.mean_speedup * g2.mean_speedup) / (g2.runs - 1))) / sqrt(g2.runs) "
		       "ELSE 0 END AS half FROM g g2 LEFT JOIN t95 t ON t.df = g2.runs - 1) h "
		       "ON h.label = g.label AND h.x_text = g.x_text "
		       "ORDER BY series, 3", lbs_buf_str(&label), numeric ? x.number : "NULL", x.text,
		       numeric ? "g.x" : "xs.rank", lbs_buf_str(&xcol));
	lbs_buf_free(&xcol);
	lbs_buf_free(&label);
	/* A line never averages over a key: each of its points is one point of
	 * the sweep (the runs that differ only in their seed). */
	char *check = sqlite3_mprintf("SELECT count(*) FROM (%s) WHERE points > 1", lbs_buf_str(&sql));
	long long mixed = query_int(c->db, check, 0);
	sqlite3_free(check);
	if (mixed > 0) {
		lbs_buf which = { 0 };
		for (size_t i = 0; i < c->n_keys; i++) {
			axis a;
			find_axis(c, c->keys[i].name, &a);
			bool used = !strcmp(a.name, x.name);
			for (size_t j = 0; j < n_by; j++)
				used |= !strcmp(a.name, by[j].name);
			if (!used && !follows_from(c, &a, &x))
				lbs_buf_printf(&which, "%s%s", which.len ? ", " : "", a.name);
		}
		bool policy_in = false;
		for (size_t j = 0; j < n_by; j++)
			policy_in |= !strcmp(by[j].name, "policy");
		if (!policy_in && query_int(c->db, "SELECT count(DISTINCT policy) FROM runs WHERE run_id IN "
					    PLOT_RUNS, 0) > 1)
			lbs_buf_printf(&which, "%spolicy", which.len ? ", " : "");
		lbs_status st = lbs_error_set(err, LBS_EUSAGE, "%s%s%sthe runs of a line differ in %s: add it to "
					      "--by, or pick one value with --setting KEY=VALUE (a plot averages "
					      "over seeds only)", c->o->by ? "--by " : "", c->o->by ? c->o->by : "",
					      c->o->by ? ": " : "", which.len ? lbs_buf_str(&which) : "a key");
		lbs_buf_free(&which);
		lbs_buf_free(&sql);
		return st;
	}
	/* The x axis: its unit, a log2 scale for doubling values (the script
	 * decides), names for values that are not numbers. */
	lbs_buf vars = { 0 };
	char title[600];
	lbs_buf_printf(&vars, "categorical = %d\n", numeric ? 0 : 1);
	long long seeds = query_int(c->db, "SELECT max(n) FROM (SELECT count(DISTINCT seed) AS n FROM run_keys "
				    "WHERE run_id IN " PLOT_RUNS " GROUP BY point_id, policy)", 0);
	lbs_fmt(title, sizeof title, "Speedup over static vs %s (%s)", strcmp(x.name, "n_workers") ? x.name
		: "cluster size", seeds > 1 ? "mean over seeds; bars: its 95% confidence interval" : "one seed");
	lbs_status st = sql.failed || vars.failed
		? lbs_error_set(err, LBS_EINTERNAL, "out of memory")
		: render(c, "speedup", lbs_buf_str(&sql), 0, title, lbs_buf_str(&vars),
			 "no run has a static run of the same setting to compare with", err);
	lbs_buf_free(&vars);
	lbs_buf_free(&sql);
	return st;
}
static lbs_status plot_batch_sizes(plot_ctx *c, lbs_error *err)
{
	/* The run of the setting whose policy changed the batches most often. */
	long long run = query_int(c->db,
				  "SELECT s.run_id FROM run_setting s WHERE s.setting_id = ?1 AND s.run_id IN " PLOT_RUNS " ORDER BY "
				  "(SELECT count(DISTINCT iteration) FROM batches b WHERE b.run_id = s.run_id) "
				  "DESC, s.run_id LIMIT 1", c->setting);
	long long n_workers = query_int(c->db, "SELECT n_workers FROM runs WHERE run_id = ?1", run);
	bool per_worker = n_workers <= PER_WORKER_MAX;
	bool detailed = query_int(c->db, "SELECT count(*) FROM (SELECT 1 FROM worker_iterations "
					 "WHERE run_id = ?1 LIMIT 1)", run) > 0;
	/* A line per worker, or per group (the mean of its workers); from
	 * worker_iterations when recorded, else from the changes in batches,
	 * held to the end of the run. */
	const char *sql;
	if (per_worker && detailed)
		sql = "SELECT wi.worker AS series, w.group_name AS label, i.start_s AS time_s, "
		      "wi.batch AS batch_samples FROM worker_iterations wi "
		      "JOIN workers w ON w.run_id = wi.run_id AND w.worker = wi.worker "
		      "JOIN iterations i ON i.run_id = wi.run_id AND i.iteration = wi.iteration "
		      "WHERE wi.run_id = ?1 ORDER BY wi.worker, wi.iteration";
	else if (per_worker)
		sql = "SELECT worker AS series, group_name AS label, time_s, batch_samples FROM ("
		      "SELECT worker, group_name, start_s AS time_s, batch_samples, iteration FROM batch_changes "
		      "WHERE run_id = ?1 UNION ALL "
		      "SELECT b.worker, b.group_name, r.sim_time_s, b.batch_samples, r.iterations "
		      "FROM batch_changes b JOIN runs r ON r.run_id = b.run_id WHERE b.run_id = ?1 AND "
		      "b.iteration = (SELECT max(iteration) FROM batches x WHERE x.run_id = b.run_id)) "
		      "ORDER BY worker, iteration";
	else if (detailed)
		sql = "SELECT g.idx AS series, g.group_name AS label, i.start_s AS time_s, "
		      "avg(wi.batch) AS batch_samples FROM worker_iterations wi "
		      "JOIN workers w ON w.run_id = wi.run_id AND w.worker = wi.worker "
		      "JOIN (SELECT group_name, dense_rank() OVER (ORDER BY min(worker)) - 1 AS idx "
		      "FROM workers WHERE run_id = ?1 GROUP BY group_name) g ON g.group_name = w.group_name "
		      "JOIN iterations i ON i.run_id = wi.run_id AND i.iteration = wi.iteration "
		      "WHERE wi.run_id = ?1 GROUP BY g.idx, wi.iteration ORDER BY g.idx, wi.iteration";
	else
		sql = "SELECT g.idx AS series, g.group_name AS label, time_s, avg(batch_samples) AS batch_samples "
		      "FROM (SELECT group_name, start_s AS time_s, batch_samples, iteration FROM batch_changes "
		      "WHERE run_id = ?1 UNION ALL "
		      "SELECT b.group_name, r.sim_time_s, b.batch_samples, r.iterations "
		      "FROM batch_changes b JOIN runs r ON r.run_id = b.run_id WHERE b.run_id = ?1 AND "
		      "b.iteration = (SELECT max(iteration) FROM batches x WHERE x.run_id = b.run_id)) c "
		      "JOIN (SELECT group_name, dense_rank() OVER (ORDER BY min(worker)) - 1 AS idx "
		      "FROM workers WHERE run_id = ?1 GROUP BY group_name) g USING (group_name) "
		      "GROUP BY g.idx, c.iteration ORDER BY g.idx, c.iteration";
	/* Colours by group; a key entry at each group's first line. */
	lbs_buf vars = { 0 }, labels = { 0 }, colors = { 0 };
	if (per_worker) {
		query_words(c->db, "SELECT CASE WHEN worker = min(worker) OVER (PARTITION BY group_name) "
				   "THEN group_name ELSE '-' END FROM workers WHERE run_id = ?1 ORDER BY worker",
			    run, &labels);
		query_words(c->db, "SELECT dense_rank() OVER (ORDER BY first) FROM (SELECT worker, "
				   "min(worker) OVER (PARTITION BY group_name) AS first FROM workers "
				   "WHERE run_id = ?1) ORDER BY worker", run, &colors);
	} else {
		query_words(c->db, "SELECT group_name || '_(mean)' FROM workers WHERE run_id = ?1 "
				   "GROUP BY group_name ORDER BY min(worker)", run, &labels);
		query_words(c->db, "SELECT row_number() OVER (ORDER BY min(worker)) FROM workers "
				   "WHERE run_id = ?1 GROUP BY group_name ORDER BY min(worker)", run, &colors);
	}
	gp_var(&vars, "labels", lbs_buf_str(&labels));
	gp_var(&vars, "colors", lbs_buf_str(&colors));
	char policy[128], title[900];
	query_text(c->db, "SELECT policy FROM runs WHERE run_id = ?1", run, policy, sizeof policy);
	lbs_fmt(title, sizeof title, "Batch size per %s, policy %s (run %lld)\n%s",
		 per_worker ? "worker" : "worker group", policy, run, c->setting_title);
	lbs_status st = render(c, "batch-sizes", sql, run, title, lbs_buf_str(&vars),
			       "no batch sizes recorded (--detail runs?)", err);
	lbs_buf_free(&vars);
	lbs_buf_free(&labels);
	lbs_buf_free(&colors);
	return st;
}

/* lbsim whatif's analyses (doc/whatif.md): the per-worker slowdown as a
 * heat map, and the step with the largest slowdown beside its ideal. */
static void whatif_title(plot_ctx *c, const char *what, char *title, size_t len)
{
	char trial[256], trace[512];
	query_text(c->db, "SELECT trial_name FROM whatif_runs WHERE whatif_id = ?1", c->whatif, trial, sizeof trial);
	query_text(c->db, "SELECT trace FROM whatif_runs WHERE whatif_id = ?1", c->whatif, trace, sizeof trace);
	/* the file's name, not where it was on the machine that ran it */
	const char *slash = strrchr(trace, '/');
	lbs_fmt(title, len, "%s\n%s (%s), whatif %lld", what, trial, slash ? slash + 1 : trace, c->whatif);
}

static lbs_status plot_whatif_heatmap(plot_ctx *c, lbs_error *err)
{
	static const char sql[] = "SELECT dp_rank, stage, value AS S_w, rank FROM whatif_slowdowns "
				  "WHERE whatif_id = ?1 AND metric = 'S_w' ORDER BY stage, dp_rank";
	char title[800];
	whatif_title(c, "Slowdown per worker, S_w = min(S_dp, S_stage)", title, sizeof title);
	return render(c, "whatif-heatmap", sql, c->whatif, title, "",
		      "no per-worker slowdowns (S < 1.03: nothing attributed)", err);
}

static lbs_status plot_whatif_timeline(plot_ctx *c, lbs_error *err)
{
	static const char sql[] =
		"SELECT replay = 'ideal' AS panel, dp_rank * (SELECT max(stage) + 1 FROM whatif_timeline "
		"WHERE whatif_id = ?1) + stage AS lane, start_s, end_s, CASE "
		"WHEN optype = 'forward-compute' THEN 1 WHEN optype = 'backward-compute' THEN 2 "
		"WHEN optype LIKE '%-send' OR optype LIKE '%-recv' THEN 3 "
		"WHEN optype IN ('params-all-gather', 'grads-reduce-scatter', 'separate-grads-all-reduce', "
		"'optimizer-clip-main-grad', 'embedding-grads-all-reduce') THEN 4 ELSE 5 END AS kind "
		"FROM whatif_timeline WHERE whatif_id = ?1 ORDER BY panel, lane, start_s";
	char title[800], what[128], vars[256];
	long long step = query_int(c->db, "SELECT min(step) FROM whatif_timeline WHERE whatif_id = ?1", c->whatif);
	long long stages = query_int(c->db, "SELECT max(stage) + 1 FROM whatif_timeline WHERE whatif_id = ?1",
				     c->whatif);
	lbs_fmt(what, sizeof what, "Step %lld (the largest slowdown) as traced, and its ideal replay", step);
	whatif_title(c, what, title, sizeof title);
	lbs_fmt(vars, sizeof vars, "stages = %lld\n", stages > 0 ? stages : 1);
	return render(c, "whatif-timeline", sql, c->whatif, title, vars, "no timeline recorded", err);
}

static void hybrid_title(plot_ctx *c, const char *what, char *title, size_t len)
{
	char name[256], job[256];
	query_text(c->db, "SELECT name FROM hybrid_runs WHERE hybrid_id = ?1", c->hybrid, name, sizeof name);
	query_text(c->db, "SELECT model || ', dp ' || dp || ' x pp ' || pp || ' x tp ' || tp || ', ' || schedule "
			  "|| ', ' || micro_batches || ' micro-batches' FROM hybrid_runs WHERE hybrid_id = ?1",
		   c->hybrid, job, sizeof job);
	lbs_fmt(title, len, "%s: %s (hybrid run %lld)\n%s", name, what, c->hybrid, job);
}

/* The longest of the steps hybrid_timeline holds (every step, or the longest alone). */
#define LONGEST_RECORDED                                                                                        \
	"(SELECT s.step FROM hybrid_steps s WHERE s.hybrid_id = ?1 AND s.step IN (SELECT step FROM hybrid_timeline " \
	"WHERE hybrid_id = ?1) ORDER BY s.step_s DESC, s.step LIMIT 1)"

/* The hybrid run's longest step, one lane per (replica, stage) group. */
static lbs_status plot_hybrid_timeline(plot_ctx *c, lbs_error *err)
{
	static const char sql[] =
		"SELECT t.dp_rank * r.pp + t.stage AS lane, t.start_s, t.end_s, CASE "
		"WHEN optype = 'forward-compute' THEN 1 WHEN optype = 'backward-compute' THEN 2 "
		"WHEN optype LIKE '%-send' OR optype LIKE '%-recv' THEN 3 "
		"WHEN optype IN ('params-all-gather', 'grads-reduce-scatter', 'separate-grads-all-reduce', "
		"'optimizer-clip-main-grad', 'embedding-grads-all-reduce', 'layernorm-grads-all-reduce') THEN 4 "
		"ELSE 5 END AS kind FROM hybrid_timeline t JOIN hybrid_runs r USING (hybrid_id) "
		"WHERE hybrid_id = ?1 AND step = " LONGEST_RECORDED " ORDER BY lane, t.start_s";
	char title[800], what[128], vars[64];
	long long step = query_int(c->db, "SELECT " LONGEST_RECORDED, c->hybrid);
	long long stages = query_int(c->db, "SELECT pp FROM hybrid_runs WHERE hybrid_id = ?1", c->hybrid);
	lbs_fmt(what, sizeof what, "step %lld (the longest), op by op", step);
	hybrid_title(c, what, title, sizeof title);
	lbs_fmt(vars, sizeof vars, "stages = %lld\n", stages > 0 ? stages : 1);
	return render(c, "hybrid-timeline", sql, c->hybrid, title, vars,
		      "no timeline recorded (a step of more than 300,000 ops records none)", err);
}

/* The shares of each step, mean over the groups. */
static lbs_status plot_hybrid_shares(plot_ctx *c, lbs_error *err)
{
	static const char sql[] =
		"SELECT g.step, avg(g.compute_s / s.step_s) AS compute, avg(g.bubble_s / s.step_s) AS bubble, "
		"avg(g.comm_s / s.step_s) AS comm, avg(g.wait_s / s.step_s) AS wait, "
		"avg(g.optimizer_s / s.step_s) AS optimizer FROM hybrid_groups g JOIN hybrid_steps s "
		"USING (hybrid_id, step) WHERE hybrid_id = ?1 GROUP BY g.step ORDER BY g.step";
	char title[800];
	hybrid_title(c, "the shares of each step", title, sizeof title);
	return render(c, "hybrid-shares", sql, c->hybrid, title, "", "no steps recorded", err);
}

static lbs_status plot_hybrid(plot_ctx *c, lbs_error *err)
{
	lbs_status st = plot_hybrid_timeline(c, err);
	return st == LBS_OK ? plot_hybrid_shares(c, err) : st;
}

/* Both plots of the analysis c->whatif. */
static lbs_status plot_whatif(plot_ctx *c, lbs_error *err)
{
	lbs_status st = plot_whatif_heatmap(c, err);
	return st == LBS_OK ? plot_whatif_timeline(c, err) : st;
}

/* Names the setting by its first chosen run: scenario, size, seed and the
 * keys that vary. */
static void name_setting(plot_ctx *c)
{
	char scenario[256];
	query_text(c->db, "SELECT scenario || ', ' || n_workers || ' workers, seed ' || seed FROM runs "
			  "WHERE run_id = (SELECT min(run_id) FROM run_setting WHERE setting_id = ?1 AND run_id IN "
			  PLOT_RUNS ")", c->setting, scenario, sizeof scenario);
	lbs_buf extra = { 0 };
	for (size_t i = 0; i < c->n_keys; i++) {
		lbs_buf sql = { 0 };
		char value[256];
		lbs_buf_printf(&sql, "SELECT ");
		lbs_views_ident(&sql, c->keys[i].name);
		lbs_buf_printf(&sql, " FROM run_keys WHERE run_id = (SELECT min(run_id) FROM run_setting "
			       "WHERE setting_id = ?1 AND run_id IN " PLOT_RUNS ")");
		query_text(c->db, lbs_buf_str(&sql), c->setting, value, sizeof value);
		lbs_buf_printf(&extra, "%s%s=%s", extra.len ? ", " : "", c->keys[i].name, value);
		lbs_buf_free(&sql);
	}
	lbs_fmt(c->setting_title, sizeof c->setting_title, "%s (setting %lld)%s%s", scenario, c->setting,
		extra.len ? "\n" : "", lbs_buf_str(&extra));
	lbs_buf_free(&extra);
}

static bool known_formats(const char *formats)
{
	char list[64];
	if (!*formats || strlen(formats) >= sizeof list)
		return false;
	lbs_fmt(list, sizeof list, "%s", formats);
	for (char *save = NULL, *f = strtok_r(list, ",", &save); f; f = strtok_r(NULL, ",", &save))
		if (strcmp(f, "png") && strcmp(f, "svg") && strcmp(f, "pdf"))
			return false;
	return formats[strlen(formats) - 1] != ',';
}

/* Creates the output folder if needed, and in it the private folder where
 * the plots are made (DIR/.lbsim-plot.tmp.XXXXXX, util/outfile.h). */
static lbs_status open_work(plot_ctx *c, lbs_tmp *work, lbs_error *err)
{
	if (mkdir(c->o->dir, 0777) != 0 && errno != EEXIST)
		return lbs_error_set(err, LBS_EIO, "%s: cannot create: %s", c->o->dir, strerror(errno));
	char name[4200];
	if ((size_t)snprintf(name, sizeof name, "%s/.lbsim-plot", c->o->dir) >= sizeof name)
		return lbs_error_set(err, LBS_EUSAGE, "%.200s...: the name is too long", c->o->dir);
	lbs_status st = lbs_tmp_create(work, name, true, err);
	c->work = work->path;
	return st;
}

lbs_status lbs_plot_draw(sqlite3 *db, const char *gnuplot, const lbs_plot_options *o, lbs_buf *made,
			 lbs_error *err)
{
	if (!known_formats(o->formats))
		return lbs_error_set(err, LBS_EUSAGE, "--format %s: expected png, svg or pdf, or several "
				     "separated by commas (png,svg)", o->formats);
	if (o->gantt_first < 0 || o->gantt_count < 1)
		return lbs_error_set(err, LBS_EUSAGE, "--iterations: expected FIRST or FIRST..LAST, "
				     "iterations from 0");
	plot_ctx c = { .db = db, .o = o, .gnuplot = gnuplot, .made = made };
	bool runs = query_int(db, "SELECT count(*) FROM runs", 0) > 0;
	long long last_whatif = query_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'whatif_runs'", 0) > 0
					? query_int(db, "SELECT max(whatif_id) FROM whatif_runs", 0)
					: 0;
	if (o->whatif && (last_whatif <= 0 ||
			  query_int(db, "SELECT count(*) FROM whatif_runs WHERE whatif_id = ?1", o->whatif) <= 0))
		return lbs_error_set(err, LBS_EUSAGE, "--whatif %lld: no such analysis (see whatif_runs)",
				     o->whatif);
	c.whatif = o->whatif ? o->whatif : last_whatif > 0 ? last_whatif : 0;
	/* the last hybrid run (hybrid_timeline: a file of this version's) */
	if (query_int(db, "SELECT count(*) FROM sqlite_master WHERE name IN ('hybrid_runs', 'hybrid_timeline')", 0) == 2)
		c.hybrid = query_int(db, "SELECT max(hybrid_id) FROM hybrid_runs", 0);
	if (!runs && !c.whatif && c.hybrid <= 0)
		return lbs_error_set(err, LBS_EINPUT, "no runs to plot");
	lbs_tmp work;
	if (!runs) {
		lbs_status st = open_work(&c, &work, err);
		if (st != LBS_OK)
			return st;
		if (c.hybrid > 0)
			st = plot_hybrid(&c, err);
		if (st == LBS_OK && c.whatif)
			st = plot_whatif(&c, err);
		lbs_tmp_remove(&work);
		if (st == LBS_OK && !c.n_made)
			st = lbs_error_set(err, LBS_EINPUT, "nothing to plot");
		return st;
	}
	lbs_status st = lbs_views_materialize(db, err);
	if (st == LBS_OK)
		st = lbs_views_keys(db, &c.keys, &c.n_keys, err);
	if (st == LBS_OK)
		st = select_runs(&c, err);
	if (st != LBS_OK) {
		free(c.keys);
		return st;
	}
	if (!c.setting)
		c.setting = query_int(db, "SELECT s.setting_id FROM run_setting s JOIN runs r ON r.run_id = s.run_id "
					  "WHERE s.run_id IN " PLOT_RUNS " GROUP BY s.setting_id "
					  "ORDER BY count(DISTINCT r.policy) > 1 DESC, s.setting_id LIMIT 1", 0);
	else if (query_int(db, "SELECT count(*) FROM run_setting WHERE setting_id = ?1 AND run_id IN " PLOT_RUNS,
			   c.setting) <= 0)
		st = lbs_error_set(err, LBS_EUSAGE, "--setting %lld: none of its runs has the values the other "
				   "--setting options ask for", c.setting);
	if (st != LBS_OK) {
		free(c.keys);
		return st;
	}
	name_setting(&c);
	if ((st = open_work(&c, &work, err)) != LBS_OK) {
		free(c.keys);
		return st;
	}
	lbs_status (*const plots[])(plot_ctx *, lbs_error *) = {
		plot_iteration_time, plot_batch_sizes, plot_speedup, plot_straggler_cdf,
		plot_iteration_cdf, plot_time_to_train, plot_gantt, plot_wait_share, plot_availability,
	};
	for (size_t i = 0; st == LBS_OK && i < sizeof plots / sizeof *plots; i++)
		if (o->which == LBS_PLOT_ALL || (o->which == LBS_PLOT_SPEEDUP) == (plots[i] == plot_speedup))
			st = plots[i](&c, err);
	if (c.whatif && st == LBS_OK && o->which == LBS_PLOT_ALL)
		st = plot_whatif(&c, err);
	if (c.hybrid > 0 && st == LBS_OK && o->which == LBS_PLOT_ALL)
		st = plot_hybrid(&c, err);
	lbs_tmp_remove(&work);
	free(c.keys);
	if (st == LBS_OK && !c.n_made)
		st = lbs_error_set(err, LBS_EINPUT, "nothing to plot");
	return st;
}

static const char short_usage[] =
	"Usage: lbsim plot RESULTS.db [--out DIR] [--format png,svg,pdf] [--x KEY] [--by KEYS] [-q]\n"
	"  [--setting N|KEY=VALUE]... [--iterations A[..B]] [--whatif N] [--size WxH] [--paper P] [--font F]\n";

static void usage(FILE *out)
{
	fprintf(out, "%s"
		     "\n"
		     "Renders plots of a results database with gnuplot, each beside the CSV of its data.\n"
		     "For one setting (the runs that differ only in their policy): iteration-time,\n"
		     "iteration-cdf, straggler-cdf, time-to-train, batch-sizes, and with --detail\n"
		     "workers gantt (each worker's compute, barrier wait and aggregation), wait-share\n"
		     "(per group) and availability (the groups' CPU readings with the iteration time).\n"
		     "For all the chosen runs: speedup (over static, against --x, one line per --by).\n"
		     "\n"
		     "  -o, --out DIR         where to write them (default: plots)\n"
		     "  -f, --format LIST     png, svg, pdf, or several: png,svg (default: png)\n"
		     "  -x, --x KEY           the speedup plot's x axis: n_workers, seed, or a key that\n"
		     "                        varies (network.bandwidth; see the run_keys view); default:\n"
		     "                        n_workers if it varies, else the first key that does\n"
		     "  -b, --by KEYS         its lines: one per value of these keys, comma-separated\n"
		     "                        (default: the policy and every other key that varies but\n"
		     "                        the seed; a plot never averages over another key)\n"
		     "  -s, --setting N       the setting of the per-setting plots (see the run_setting\n"
		     "                        view; default: the first with more than one policy)\n"
		     "  -s, --setting KEY=VALUE  draw only the runs with this value (repeatable), in every\n"
		     "                        plot: policy, seed, scenario, n_workers or SECTION.KEY\n"
		     "  -i, --iterations A[..B]  the iterations of the gantt plot (default: 0..2)\n"
		     "  -w, --whatif N        the lbsim whatif analysis to draw (see whatif_runs; default:\n"
		     "                        the last): whatif-heatmap and whatif-timeline\n"
		     "  A hybrid run's results (the last one): hybrid-timeline (its longest step, op by\n"
		     "  op, a lane per replica and stage) and hybrid-shares (each step's compute,\n"
		     "  bubble, communication, wait and optimizer shares).\n"
		     "      --size WxH        the pictures' size: pixels (1200x800, default 960x600), or\n"
		     "                        inches or centimetres (3.5x2.5in, 9x6cm: a pdf of that\n"
		     "                        size, a png at 300 pixels per inch with its text scaled)\n"
		     "      --font NAME,SIZE  their font and its size in points (serif,8)\n"
		     "      --paper single|double  for a two-column paper: 3.5x2.5in (a column) or\n"
		     "                        7x2.75in (the page), serif 8 pt, no titles (the caption\n"
		     "                        says); --size and --font override it\n"
		     "  -q, --quiet           print nothing but errors\n"
		     "  -h, --help            this help\n", short_usage);
}

static int usage_error(const char *what, const char *arg)
{
	fprintf(stderr, "lbsim plot: %s%s%s\n%ssee lbsim plot --help\n", arg ? arg : "", arg ? ": " : "",
		what, short_usage);
	return LBS_EUSAGE;
}

/* "3" or "3..5" into first and count. */
static bool iteration_range(const char *s, long long *first, long long *count)
{
	char *end;
	long long a = strtoll(s, &end, 10), b = a;
	if (end == s || a < 0)
		return false;
	if (!strncmp(end, "..", 2)) {
		const char *t = end + 2;
		b = strtoll(t, &end, 10);
		if (end == t)
			return false;
	}
	if (*end || b < a || b - a >= 1000)
		return false;
	*first = a;
	*count = b - a + 1;
	return true;
}

int lbs_plot_command(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "out", required_argument, NULL, 'o' },     { "setting", required_argument, NULL, 's' },
		{ "format", required_argument, NULL, 'f' },  { "x", required_argument, NULL, 'x' },
		{ "by", required_argument, NULL, 'b' },      { "iterations", required_argument, NULL, 'i' },
		{ "quiet", no_argument, NULL, 'q' },         { "help", no_argument, NULL, 'h' },
		{ "whatif", required_argument, NULL, 'w' },  { "size", required_argument, NULL, 'S' },
		{ "font", required_argument, NULL, 'F' },    { "paper", required_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 },
	};
	const char *paper = NULL;
	lbs_plot_options o = { .dir = "plots", .formats = "png", .gantt_first = 0, .gantt_count = 3 };
	int c;
	while ((c = getopt_long(argc, argv, "o:s:f:x:b:i:w:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o.dir = optarg; break;
		case 'f': o.formats = optarg; break;
		case 'x': o.x = optarg; break;
		case 'b': o.by = optarg; break;
		case 's':
			if (o.n_filters == LBS_PLOT_MAX_FILTERS)
				return usage_error("at most 32 of them", "--setting");
			o.filters[o.n_filters++] = optarg;
			break;
		case 'i':
			if (!iteration_range(optarg, &o.gantt_first, &o.gantt_count))
				return usage_error("expected FIRST or FIRST..LAST (from 0, at most 1000 "
						   "iterations)", "--iterations");
			break;
		case 'w': {
			char *end;
			o.whatif = strtoll(optarg, &end, 10);
			if (!*optarg || *end || o.whatif < 1)
				return usage_error("expected a whatif_id (1, 2, ...)", "--whatif");
			break;
		}
		case 'S':
			if (!lbs_plot_size(optarg, &o))
				return usage_error("expected WIDTHxHEIGHT in pixels (1200x800), inches (3.5x2.5in) "
						   "or centimetres (9x6cm), 16 to 20000 pixels or 0.5 to 100 in",
						   "--size");
			break;
		case 'F':
			if (!lbs_plot_font(optarg))
				return usage_error("expected NAME,SIZE: a font name of letters, digits, spaces "
						   "and hyphens, and a size from 4 to 72 points (serif,8)", "--font");
			o.font = optarg;
			break;
		case 'P': paper = optarg; break;
		case 'q': o.quiet = true; break;
		case 'h': usage(stdout); return 0;
		default: fprintf(stderr, "%ssee lbsim plot --help\n", short_usage); return LBS_EUSAGE;
		}
	}
	/* --paper sets the size and font that --size and --font did not. */
	if (paper) {
		lbs_plot_options preset = o;
		if (!lbs_plot_paper(paper, &preset))
			return usage_error("expected single (one column of a two-column paper, 3.5 in wide) or "
					   "double (the page, 7 in)", "--paper");
		if (o.width > 0) {
			preset.width = o.width;
			preset.height = o.height;
			preset.size_inches = o.size_inches;
		}
		o = preset;
	}
	if (optind + 1 != argc)
		return usage_error(optind == argc ? "no results database given"
						  : "one results database at a time", NULL);
	if (!known_formats(o.formats))
		return usage_error("expected png, svg or pdf, or several: png,svg", "--format");
	if (!*o.dir)
		return usage_error("expected a folder (e.g. plots)", "--out ''");
	const char *path = argv[optind];
	/* SIGINT, SIGTERM: gnuplot stopped, the temporaries removed, exit 130. */
	lbs_signals_exit();
	lbs_error err = { 0 };
	sqlite3 *db;
	lbs_status st = lbs_analysis_open(&db, path, &err);
	if (st != LBS_OK) {
		fprintf(stderr, "lbsim plot: %s\n", err.msg);
		return st;
	}
	char gnuplot[4096];
	if (!lbs_proc_find("gnuplot", gnuplot, sizeof gnuplot)) {
		fprintf(stderr, "lbsim plot: plots are drawn by gnuplot, which is not on PATH: install it "
			"(Debian package gnuplot-nox)\n");
		sqlite3_close(db);
		return LBS_EIO;
	}
	lbs_buf made = { 0 };
	st = lbs_plot_draw(db, gnuplot, &o, &made, &err);
	lbs_buf_free(&made);
	sqlite3_close(db);
	if (st != LBS_OK) {
		fprintf(stderr, "lbsim plot: %s: %s\n", path, err.msg);
		return st;
	}
	return 0;
}
