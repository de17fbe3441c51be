/* SPDX-License-Identifier: GPL-3.0-or-later */
/* `lbsim plot`: for each plot, a query over the analysis views writes a CSV
 * next to the PNG, and gnuplot renders the PNG from it with the matching
 * script of analysis/ (compiled in), fed on its standard input. The CSV and
 * the script are all a user needs to redraw a plot by hand. */
#include "analysis/plot.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/proc.h"
#include "analysis/export.h"

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

/* Runs gnuplot with `preamble` then the script on its standard input. */
static lbs_status run_gnuplot(const char *gnuplot, const char *script_name, const char *preamble,
			      lbs_error *err)
{
	const char *script = lbs_analysis_text(script_name);
	if (!script)
		return lbs_error_set(err, LBS_EINTERNAL, "analysis/%s is not compiled in", script_name);
	int fd[2];
	if (pipe(fd) != 0)
		return lbs_error_set(err, LBS_EIO, "cannot run gnuplot: %s", strerror(errno));
	pid_t pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return lbs_error_set(err, LBS_EIO, "cannot run gnuplot: %s", strerror(errno));
	}
	if (pid == 0) {
		dup2(fd[0], STDIN_FILENO);
		close(fd[0]);
		close(fd[1]);
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0)
			dup2(null, STDOUT_FILENO);
		execl(gnuplot, "gnuplot", (char *)NULL);
		_exit(127);
	}
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
		if (errno != EINTR)
			return lbs_error_set(err, LBS_EIO, "gnuplot: %s", strerror(errno));
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

typedef struct plot_ctx {
	sqlite3 *db;
	const char *dir, *gnuplot;
	long long setting;
	long long whatif; /* the lbsim whatif analysis to draw (0: none) */
	char setting_title[512];
	int made;
	bool quiet;
} plot_ctx;

/* Writes NAME.csv from sql (?1 = param) and renders NAME.png from it with
 * analysis/NAME.gp; `vars` are extra gnuplot assignments. A query with no
 * rows skips the plot, saying why. */
static lbs_status render(plot_ctx *c, const char *name, const char *sql, long long param,
			 const char *title, const char *vars, const char *empty_why, lbs_error *err)
{
	char csv[4200], png[4200], tmp[4300];
	snprintf(csv, sizeof csv, "%s/%s.csv", c->dir, name);
	snprintf(png, sizeof png, "%s/%s.png", c->dir, name);
	snprintf(tmp, sizeof tmp, "%s/.%s.png.tmp", c->dir, name);
	FILE *f = fopen(csv, "w");
	if (!f)
		return lbs_error_set(err, LBS_EIO, "%s: cannot write: %s", csv, strerror(errno));
	long long rows = 0;
	lbs_status st = lbs_export_csv(c->db, sql, &param, 1, f, &rows, err);
	if (fclose(f) != 0 && st == LBS_OK)
		st = lbs_error_set(err, LBS_EIO, "%s: cannot write: %s", csv, strerror(errno));
	if (st != LBS_OK) {
		lbs_error_prefix(err, "%s", csv);
		return st;
	}
	if (rows == 0) {
		unlink(csv);
		unlink(png); /* not a stale picture of other results */
		if (!c->quiet)
			fprintf(stderr, "lbsim plot: no %s.png: %s\n", name, empty_why);
		return LBS_OK;
	}
	lbs_buf pre = { 0 };
	gp_var(&pre, "data", csv);
	gp_var(&pre, "out", tmp);
	gp_var(&pre, "title", title);
	lbs_buf_printf(&pre, "%s", vars);
	char script[64];
	snprintf(script, sizeof script, "%s.gp", name);
	st = pre.failed ? lbs_error_set(err, LBS_EINTERNAL, "out of memory")
			: run_gnuplot(c->gnuplot, script, lbs_buf_str(&pre), err);
	lbs_buf_free(&pre);
	if (st == LBS_OK && rename(tmp, png) != 0)
		st = lbs_error_set(err, LBS_EIO, "%s: cannot write: %s", png, strerror(errno));
	if (st != LBS_OK) {
		unlink(tmp);
		return st;
	}
	c->made++;
	if (!c->quiet)
		printf("%s\n", png);
	return LBS_OK;
}

/* The first run of each policy in the setting: what the per-policy plots draw. */
#define SETTING_RUNS \
	"(SELECT min(s.run_id) FROM run_setting s JOIN runs r ON r.run_id = s.run_id " \
	"WHERE s.setting_id = ?1 GROUP BY r.policy)"

/* A plot of the setting's runs, one series per policy (static first): the
 * gnuplot script `name` over `sql` (?1 = the setting). */
static lbs_status plot_per_policy(plot_ctx *c, const char *name, const char *sql, const char *what,
				  lbs_error *err)
{
	lbs_buf vars = { 0 }, series = { 0 };
	query_words(c->db, "SELECT r.policy FROM runs r WHERE r.run_id IN " SETTING_RUNS " ORDER BY r.policy = 'static' DESC, r.run_id",
		    c->setting, &series);
	gp_var(&vars, "series", lbs_buf_str(&series));
	char title[700];
	lbs_fmt(title, sizeof title, "%s\n%s", what, c->setting_title);
	lbs_status st = render(c, name, sql, c->setting, title, lbs_buf_str(&vars),
			       "no iterations recorded (--detail runs?)", err);
	lbs_buf_free(&vars);
	lbs_buf_free(&series);
	return st;
}

static lbs_status plot_iteration_time(plot_ctx *c, lbs_error *err)
{
	static const char sql[] =
		"SELECT policy AS series, end_s AS time_s, iteration_s FROM iteration_times "
		"WHERE setting_id = ?1 AND run_id IN " SETTING_RUNS " ORDER BY policy = 'static' DESC, run_id, iteration";
	return plot_per_policy(c, "iteration-time", sql, "Iteration time per policy", err);
}

static lbs_status plot_straggler_cdf(plot_ctx *c, lbs_error *err)
{
	static const char sql[] =
		"SELECT policy AS series, straggler_gap_s, cdf FROM straggler_gap_cdf "
		"WHERE run_id IN " SETTING_RUNS " ORDER BY policy = 'static' DESC, run_id, straggler_gap_s";
	return plot_per_policy(c, "straggler-cdf", sql, "Straggler gap, cumulative distribution per policy",
			       err);
}

/* Policies in the order they first appear, static first, in every plot, so
 * that a policy keeps its colour from one plot to the next. */
#define FIRST_RUN "(SELECT min(run_id) FROM runs x WHERE x.policy = speedup_by_size.policy)"

static lbs_status plot_speedup(plot_ctx *c, lbs_error *err)
{
	/* Label the lines by policy, or by scenario/policy when there are several. */
	long long scenarios = query_int(c->db, "SELECT count(DISTINCT scenario) FROM speedup_by_size",
					0);
	const char *label = scenarios > 1 ? "replace(scenario, ' ', '_') || '/' || policy" : "policy";
	char sql[1024], words[512];
	snprintf(sql, sizeof sql,
		 "SELECT %s AS series, n_workers, mean_speedup, min_speedup, max_speedup FROM speedup_by_size "
		 "ORDER BY scenario, policy = 'static' DESC, %s, n_workers", label, FIRST_RUN);
	snprintf(words, sizeof words,
		 "SELECT DISTINCT %s FROM speedup_by_size "
		 "ORDER BY scenario, policy = 'static' DESC, %s", label, FIRST_RUN);
	lbs_buf vars = { 0 }, series = { 0 };
	query_words(c->db, words, 0, &series);
	gp_var(&vars, "series", lbs_buf_str(&series));
	lbs_status st = render(c, "speedup", sql, 0, "Speedup over static vs cluster size (mean over seeds; "
			       "bars: least to greatest)", lbs_buf_str(&vars),
			       "no run has a static run of the same setting to compare with", err);
	lbs_buf_free(&vars);
	lbs_buf_free(&series);
	return st;
}

static lbs_status plot_batch_sizes(plot_ctx *c, lbs_error *err)
{
	/* The run of the setting whose policy changed the batches most often. */
	long long run = query_int(c->db,
				  "SELECT s.run_id FROM run_setting s WHERE s.setting_id = ?1 ORDER BY "
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
	char trace[512];
	query_text(c->db, "SELECT trial_name || ' (' || trace || ')' FROM whatif_runs WHERE whatif_id = ?1",
		   c->whatif, trace, sizeof trace);
	lbs_fmt(title, len, "%s\n%s, whatif %lld", what, trace, c->whatif);
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

static void usage(FILE *out)
{
	fprintf(out, "Usage: lbsim plot RESULTS.db [--out DIR] [--setting N] [--whatif N]\n"
		     "\n"
		     "Renders PNG plots of a results database with gnuplot, each beside the CSV of its\n"
		     "data: iteration-time, batch-sizes, straggler-cdf (for one setting: the runs that\n"
		     "differ only in their policy) and speedup (over static, vs cluster size, for all).\n"
		     "\n"
		     "  -o, --out DIR       where to write them (default: plots)\n"
		     "  -s, --setting N     the setting to draw (see the run_setting view; default: the\n"
		     "                      first with more than one policy)\n"		     "  -w, --whatif N      the lbsim whatif analysis to draw (whatif_runs; default: the\n"
		     "                      last): whatif-heatmap and whatif-timeline\n"
		     "  -q, --quiet         print nothing but errors\n"
		     "  -h, --help          this help\n");
}

int lbs_plot_command(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "out", required_argument, NULL, 'o' }, { "setting", required_argument, NULL, 's' },
		{ "quiet", no_argument, NULL, 'q' },     { "help", no_argument, NULL, 'h' },
		{ "whatif", required_argument, NULL, 'w' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = "plots";
	long long setting = 0, whatif = 0;
	bool quiet = false;
	int c;
	while ((c = getopt_long(argc, argv, "o:s:w:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': dir = optarg; break;
		case 's': {
			char *end;
			setting = strtoll(optarg, &end, 10);
			if (*end || setting < 1) {
				fprintf(stderr, "lbsim plot: --setting %s: expected a setting_id (1, 2, ...)\n", optarg);
				return LBS_EUSAGE;
			}
			break;
		}
		case 'w': {
			char *end;
			whatif = strtoll(optarg, &end, 10);
			if (*end || whatif < 1) {
				fprintf(stderr, "lbsim plot: --whatif %s: expected a whatif_id (1, 2, ...)\n", optarg);
				return LBS_EUSAGE;
			}
			break;
		}
		case 'q': quiet = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return LBS_EUSAGE;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "lbsim plot: %s\n", optind == argc ? "no results database given"
								   : "one results database at a time");
		usage(stderr);
		return LBS_EUSAGE;
	}
	if (!*dir) {
		fprintf(stderr, "lbsim plot: --out '': expected a folder (e.g. plots)\n");
		return LBS_EUSAGE;
	}
	const char *path = argv[optind];
	lbs_error err = { 0 };
	plot_ctx ctx = { .dir = dir, .quiet = quiet };
	lbs_status st = lbs_analysis_open(&ctx.db, path, &err);
	if (st != LBS_OK) {
		fprintf(stderr, "lbsim plot: %s\n", err.msg);
		return st;
	}
	char gnuplot[4096];
	if (!lbs_proc_find("gnuplot", gnuplot, sizeof gnuplot)) {
		fprintf(stderr, "lbsim plot: plots are drawn by gnuplot, which is not on PATH: install it "
			"(Debian package gnuplot-nox)\n");
		sqlite3_close(ctx.db);
		return LBS_EIO;
	}
	ctx.gnuplot = gnuplot;
	bool runs = query_int(ctx.db, "SELECT count(*) FROM runs", 0) > 0;
	long long last_whatif = query_int(ctx.db, "SELECT count(*) FROM sqlite_master WHERE name = 'whatif_runs'", 0) > 0
		? query_int(ctx.db, "SELECT max(whatif_id) FROM whatif_runs", 0) : -1;
	if (whatif && (last_whatif < 0 || query_int(ctx.db, "SELECT count(*) FROM whatif_runs WHERE whatif_id = ?1",
						 whatif) <= 0)) {
		fprintf(stderr, "lbsim plot: --whatif %lld: %s has no such analysis (see whatif_runs)\n", whatif,
			path);
		sqlite3_close(ctx.db);
		return LBS_EUSAGE;
	}
	ctx.whatif = whatif ? whatif : last_whatif > 0 ? last_whatif : 0;
	if (!runs && !ctx.whatif) {
		fprintf(stderr, "lbsim plot: %s: no runs to plot\n", path);
		sqlite3_close(ctx.db);
		return LBS_EINPUT;
	}
	long long n_settings = query_int(ctx.db, "SELECT max(setting_id) FROM run_setting", 0);
	if (runs && setting > n_settings) {
		fprintf(stderr, "lbsim plot: --setting %lld: %s has settings 1 to %lld (see the run_setting "
			"view)\n", setting, path, n_settings);
		sqlite3_close(ctx.db);
		return LBS_EUSAGE;
	}
	ctx.setting = setting ? setting
			      : query_int(ctx.db, "SELECT s.setting_id FROM run_setting s JOIN runs r ON "
						  "r.run_id = s.run_id GROUP BY s.setting_id "
						  "ORDER BY count(DISTINCT r.policy) > 1 DESC, s.setting_id "
						  "LIMIT 1", 0);
	/* Name the setting by its first run: scenario, size, seed and what a sweep varied. */
	char scenario[256], extra[256];
	query_text(ctx.db, "SELECT scenario || ', ' || n_workers || ' workers, seed ' || seed FROM runs "
			   "WHERE run_id = (SELECT min(run_id) FROM run_setting WHERE setting_id = ?1)",
		   ctx.setting, scenario, sizeof scenario);
	extra[0] = '\0';
	if (query_int(ctx.db, "SELECT count(*) FROM sqlite_master WHERE name = 'sweep_points'", 0) > 0)
		query_text(ctx.db, "SELECT group_concat(key || '=' || value, ', ') FROM sweep_points "
				   "WHERE key NOT IN ('policy', 'seed') AND run_id = "
				   "(SELECT min(run_id) FROM run_setting WHERE setting_id = ?1)",
			   ctx.setting, extra, sizeof extra);
	lbs_fmt(ctx.setting_title, sizeof ctx.setting_title, "%s (setting %lld)%s%s", scenario, ctx.setting,
		extra[0] ? "\n" : "", extra);
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "lbsim plot: %s: cannot create: %s\n", dir, strerror(errno));
		sqlite3_close(ctx.db);
		return LBS_EIO;
	}
	lbs_status (*const plots[])(plot_ctx *, lbs_error *) = {
		plot_iteration_time, plot_batch_sizes, plot_speedup, plot_straggler_cdf,
	};
	for (size_t i = 0; runs && st == LBS_OK && i < sizeof plots / sizeof *plots; i++)
		st = plots[i](&ctx, &err);
	lbs_status (*const whatif_plots[])(plot_ctx *, lbs_error *) = { plot_whatif_heatmap, plot_whatif_timeline };
	for (size_t i = 0; ctx.whatif && st == LBS_OK && i < sizeof whatif_plots / sizeof *whatif_plots; i++)
		st = whatif_plots[i](&ctx, &err);
	sqlite3_close(ctx.db);
	if (st != LBS_OK) {
		fprintf(stderr, "lbsim plot: %s\n", err.msg);
		return st;
	}
	if (!ctx.made) {
		fprintf(stderr, "lbsim plot: %s: nothing to plot\n", path);
		return LBS_EINPUT;
	}
	return 0;
}
