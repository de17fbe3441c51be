/* SPDX-License-Identifier: GPL-3.0-or-later */
/* `lbsim report`: one self-contained HTML file of a results database: the
 * summary of every run, the speedups per policy with their spread over
 * seeds, the keys that vary and the settings common to every run, and the
 * plots of `lbsim plot` inline as SVG, and for a database of `lbsim
 * validate` the measured against the simulated times. Nothing in it refers to another file
 * or to the network, so it can be mailed or archived on its own. */
#include "analysis/report.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/outfile.h"
#include "util/proc.h"
#include "analysis/export.h"
#include "analysis/plot.h"
#include "analysis/views.h"

/* At most this many rows of a table are written (the CSV of `lbsim
 * export` has them all). */
#define REPORT_MAX_ROWS 500

static void html(FILE *out, const char *s)
{
	for (; s && *s; s++)
		switch (*s) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		default: fputc(*s, out);
		}
}

/* The rows of sql as an HTML table with id `id`; reals with 6 significant
 * digits. Returns the rows in the query (all of them, written or not). */
static long long table(FILE *out, sqlite3 *db, const char *sql, const char *id)
{
	sqlite3_stmt *q = NULL;
	if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK) {
		fprintf(out, "<p class=\"empty\">(cannot query: ");
		html(out, sqlite3_errmsg(db));
		fprintf(out, ")</p>\n");
		return 0;
	}
	int cols = sqlite3_column_count(q);
	long long n = 0;
	while (sqlite3_step(q) == SQLITE_ROW) {
		if (n == 0) {
			fprintf(out, "<div class=\"wide\"><table id=\"%s\">\n<thead><tr>", id);
			for (int c = 0; c < cols; c++) {
				fprintf(out, "<th>");
				html(out, sqlite3_column_name(q, c));
				fprintf(out, "</th>");
			}
			fprintf(out, "</tr></thead>\n<tbody>\n");
		}
		if (n++ >= REPORT_MAX_ROWS)
			continue;
		fprintf(out, "<tr>");
		for (int c = 0; c < cols; c++) {
			int type = sqlite3_column_type(q, c);
			fprintf(out, type == SQLITE_INTEGER || type == SQLITE_FLOAT ? "<td class=\"n\">" : "<td>");
			if (type == SQLITE_FLOAT)
				fprintf(out, "%.6g", sqlite3_column_double(q, c));
			else
				html(out, (const char *)sqlite3_column_text(q, c));
			fprintf(out, "</td>");
		}
		fprintf(out, "</tr>\n");
	}
	sqlite3_finalize(q);
	if (n) {
		fprintf(out, "</tbody></table></div>\n");
		if (n > REPORT_MAX_ROWS)
			fprintf(out, "<p class=\"note\">The first %d of %lld rows (<code>lbsim export</code> "
				"writes them all).</p>\n", REPORT_MAX_ROWS, n);
	} else {
		fprintf(out, "<p class=\"empty\">(none)</p>\n");
	}
	return n;
}

/* The SVG file at path, inline: without its XML prolog, and with the
 * names gnuplot gives its definitions made unique to this plot. */
static bool inline_svg(FILE *out, const char *path, int plot)
{
	lbs_buf b = { 0 };
	if (!lbs_buf_append_file(&b, path)) {
		lbs_buf_free(&b);
		return false;
	}
	const char *s = lbs_buf_str(&b), *start = strstr(s, "<svg");
	static const char *const names[] = { "gpPt", "gpDot", "gnuplot_", "textbox", "greybox" };
	for (const char *p = start; p && *p;) {
		size_t best = strlen(p), which = 0;
		for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
			const char *hit = strstr(p, names[i]);
			if (hit && (size_t)(hit - p) < best) {
				best = (size_t)(hit - p);
				which = i + 1;
			}
		}
		fwrite(p, 1, best, out);
		p += best;
		if (!which)
			break;
		fprintf(out, "p%d_%s", plot, names[which - 1]);
		p += strlen(names[which - 1]);
	}
	lbs_buf_free(&b);
	return start != NULL;
}

static const char style[] =
	"body{font-family:sans-serif;margin:2em auto;padding:0 1em;max-width:1300px;color:#222;line-height:1.4}"
	"h1{font-size:1.6em}h2{margin-top:2em;border-bottom:1px solid #ccc}"
	"table{border-collapse:collapse;margin:0.5em 0;font-size:0.85em}"
	"th,td{border:1px solid #ccc;padding:2px 6px}th{background:#eee}td.n{text-align:right;"
	"font-variant-numeric:tabular-nums}"
	"figure{margin:1em 0}figure svg{max-width:100%;height:auto;border:1px solid #eee}"
	"figcaption{font-size:0.9em;color:#555}.note,.empty{color:#666;font-size:0.9em}"
	"code{background:#f4f4f4;padding:0 3px}.wide{overflow-x:auto}"
	/* the points' tables: keys on one line, groups apart, intervals quieter */
	"table.points td{white-space:nowrap}table.points th.policy{max-width:12em}"
	"tr.first td{border-top:2px solid #888}tr.point td{border-top:1px solid #aaa}"
	".ci{color:#666;font-size:0.9em}h3{font-size:1.05em;margin-bottom:0.2em}"
	"details{margin:0.5em 0}summary{cursor:pointer;font-weight:bold}";

/* A plot of dir, inline, with its caption; nothing when it was not drawn. */
static void figure(FILE *out, const char *dir, const char *name, const char *id, const char *caption,
		   int *plots)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/%s.svg", dir, name);
	if (access(path, R_OK) != 0)
		return;
	if (id)
		fprintf(out, "<figure id=\"%s\">\n", id);
	else
		fprintf(out, "<figure id=\"plot-%s\">\n", name);
	if (inline_svg(out, path, ++*plots)) {
		fprintf(out, "\n<figcaption>");
		html(out, caption);
		fprintf(out, " (<code>%s</code>)</figcaption>\n", name);
	}
	fprintf(out, "</figure>\n");
}

/* The one integer sql gives, or 0 where it cannot run (a table the file
 * does not have). */
static long long one_count(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *q = NULL;
	long long n = 0;
	if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
		n = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return n;
}

/* The validations of `lbsim validate` (doc/validation.md), when the file
 * has any: the number of their rows (0 in every other file, including one
 * of schema version 2, which has no such table). */
static long long validations(sqlite3 *db)
{
	return one_count(db, "SELECT count(*) FROM validations");
}

/* At most this many points in the plot of the validations. */
#define REPORT_MAX_POINTS 200

/* The plot of measured against simulated mean iteration times, one point
 * per policy of each validation, with the measured spread (one standard
 * deviation over the repeats) as a horizontal bar and the line where the
 * two agree; written here, not by gnuplot, so that it is there without it. */
static void validation_plot(FILE *out, sqlite3 *db)
{
	double sim[REPORT_MAX_POINTS], meas[REPORT_MAX_POINTS], sd[REPORT_MAX_POINTS];
	char label[REPORT_MAX_POINTS][80];
	int n = 0;
	sqlite3_stmt *q = NULL;
	if (sqlite3_prepare_v2(db, "SELECT validation_id, policy, simulated_iteration_s, measured_iteration_s, "
			       "coalesce(measured_iteration_sd_s, 0), (SELECT count(DISTINCT validation_id) "
			       "FROM validations) FROM validations ORDER BY validation_id, policy",
			       -1, &q, NULL) != SQLITE_OK)
		return;
	double hi = 0;
	while (n < REPORT_MAX_POINTS && sqlite3_step(q) == SQLITE_ROW) {
		const char *policy = (const char *)sqlite3_column_text(q, 1);
		if (sqlite3_column_int64(q, 5) > 1)
			snprintf(label[n], sizeof label[n], "%s (#%lld)", policy, sqlite3_column_int64(q, 0));
		else
			snprintf(label[n], sizeof label[n], "%s", policy);
		sim[n] = sqlite3_column_double(q, 2);
		meas[n] = sqlite3_column_double(q, 3);
		sd[n] = sqlite3_column_double(q, 4);
		hi = fmax(hi, fmax(sim[n], meas[n] + sd[n]));
		n++;
	}
	sqlite3_finalize(q);
	if (n == 0 || !(hi > 0))
		return;
	/* Ticks at a round step (1, 2 or 5 times a power of ten), at most 6. */
	double step = pow(10, floor(log10(hi / 5)));
	if (hi / step > 25)
		step *= 5;
	else if (hi / step > 10)
		step *= 2;
	int ticks = (int)ceil(hi * 1.05 / step);
	hi = ticks * step;
	const double w = 560, h = 460, left = 70, right = 150, top = 20, bottom = 50;
	const double pw = w - left - right, ph = h - top - bottom;
#define X(v) (left + (v) / hi * pw)
#define Y(v) (top + ph - (v) / hi * ph)
	fprintf(out, "<figure id=\"plot-validation\">\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
		"width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" "
		"font-size=\"12\">\n", w, h, w, h);
	fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
		"stroke=\"#444\"/>\n", left, top, pw, ph);
	for (int t = 0; t <= ticks; t++) {
		double v = step * t;
		fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/>"
			"<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.3g</text>\n",
			X(v), top + ph, X(v), top + ph + 5, X(v), top + ph + 18, v);
		fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/>"
			"<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.3g</text>\n",
			left - 5, Y(v), left, Y(v), left - 8, Y(v) + 4, v);
	}
	fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\" "
		"stroke-dasharray=\"6,4\"/>\n", X(0), Y(0), X(hi), Y(hi));
	fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">measured mean iteration time (s, real)"
		"</text>\n", left + pw / 2, h - 10);
	fprintf(out, "<text transform=\"translate(16 %.1f) rotate(-90)\" text-anchor=\"middle\">simulated mean "
		"iteration time (s)</text>\n", top + ph / 2);
	for (int i = 0; i < n; i++) {
		fprintf(out, "<g class=\"point\"><title>");
		html(out, label[i]);
		fprintf(out, ": measured %.6g s (sd %.6g), simulated %.6g s</title>"
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#1f77b4\"/>"
			"<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#1f77b4\"/>"
			"<text x=\"%.1f\" y=\"%.1f\">", meas[i], sd[i], sim[i], X(meas[i] - sd[i]), Y(sim[i]),
			X(meas[i] + sd[i]), Y(sim[i]), X(meas[i]), Y(sim[i]), X(meas[i]) + 7, Y(sim[i]) - 6);
		html(out, label[i]);
		fprintf(out, "</text></g>\n");
	}
	fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#666\">dashed: simulated = measured</text>\n",
		left + 8, top + 16);
#undef X
#undef Y
	fprintf(out, "</svg>\n<figcaption>Simulated against measured mean iteration time, per policy "
		"(the bar: one standard deviation of the measured time over the repeats)</figcaption>\n"
		"</figure>\n");
}

/* The section of a validation database: the measured and simulated mean
 * iteration times and speedups over static of each policy, how far apart
 * they are, the measured spread, and whether the simulated speedup is
 * within the tolerance lbsim validate --tolerance auto applies. */
static void validation_section(FILE *out, sqlite3 *db)
{
	fprintf(out, "<h2 id=\"validation\">Measured against simulated</h2>\n"
		"<p>Each <code>lbsim validate</code> (the table <code>validations</code>): a simulated run of "
		"each policy against its testbed runs. Measured times are real seconds; <code>_sd</code> is "
		"the sample standard deviation over the repeats (empty with one); a gap is simulated / "
		"measured - 1; the speedups are over static. The tolerance is that of <code>--tolerance "
		"auto</code>: max(5%%, 3 x the measured speedup's relative standard deviation); the "
		"speedup is within it when abs(simulated - measured) / measured is not more.</p>\n");
	validation_plot(out, db);
	/* A version 3 file's validations have no machine_drift (doc/results.md). */
	sqlite3_stmt *q = NULL;
	bool drift = sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info('validations') WHERE name = 'machine_drift'",
					-1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW;
	sqlite3_finalize(q);
	char sql[1400];
	lbs_fmt(sql, sizeof sql,
	      "SELECT validation_id, policy, simulated_run, measured_runs, simulated_iteration_s, "
	      "measured_iteration_s, measured_iteration_sd_s, "
	      "simulated_iteration_s / measured_iteration_s - 1 AS iteration_gap, "
	      "simulated_speedup, measured_speedup, measured_speedup_sd, "
	      "simulated_speedup / measured_speedup - 1 AS speedup_gap, "
	      "max(0.05, 3 * coalesce(measured_speedup_sd / measured_speedup, 0)) AS tolerance, "
	      "CASE WHEN policy = 'static' THEN 'baseline' "
	      "WHEN abs(simulated_speedup - measured_speedup) / measured_speedup <= "
	      "max(0.05, 3 * coalesce(measured_speedup_sd / measured_speedup, 0)) THEN 'yes' ELSE 'no' END "
	      "AS within_tolerance, error_mean, error_p95, batch_difference_mean, %s AS machine_drift, created_at "
	      "FROM validations ORDER BY validation_id, policy = 'static' DESC, policy",
	      drift ? "machine_drift" : "NULL");
	table(out, db, sql, "validation-table");
}

/* Every plot `lbsim plot` draws for the file, as SVG into plot_dir (none
 * without gnuplot); a file with nothing to plot is no error. */
static lbs_status draw_plots(sqlite3 *db, const char *gnuplot, const char *plot_dir, lbs_error *err)
{
	if (!gnuplot)
		return LBS_OK;
	lbs_plot_options o = { .dir = plot_dir, .formats = "svg", .gantt_first = 0, .gantt_count = 3,
			       .quiet = true };
	lbs_buf made = { 0 };
	lbs_status st = lbs_plot_draw(db, gnuplot, &o, &made, err);
	lbs_buf_free(&made);
	return st == LBS_EINPUT ? LBS_OK : st;
}

/* The analyses of `lbsim whatif` in the file (0 where it has none: no
 * whatif tables, as in a file of runs). */
static long long whatif_count(sqlite3 *db)
{
	return one_count(db, "SELECT count(*) FROM whatif_runs");
}

/* A file of `lbsim whatif` analyses (doc/whatif.md) and no runs: each
 * analysis's job, its slowdown figures and what each counterfactual
 * policy recovers; the plots of the last one (those `lbsim plot` draws). */
static lbs_status whatif_report(sqlite3 *db, const char *path, const char *gnuplot, const char *plot_dir,
				FILE *out, lbs_error *err)
{
	long long n = whatif_count(db);
	fprintf(out, "<p id=\"about\"><code>");
	html(out, path);
	fprintf(out, "</code>: %lld what-if analys%s of per-operation traces by <code>lbsim whatif</code> "
		"(doc/whatif.md), no simulated runs. Times are in seconds; S is the slowdown, the traced "
		"step time over the ideal one.</p>\n", n, n == 1 ? "is" : "es");
	lbs_status st = draw_plots(db, gnuplot, plot_dir, err);
	if (st != LBS_OK)
		return st;
	int plots = 0;
	fprintf(out, "<h2 id=\"whatif-jobs\">The jobs</h2>\n");
	table(out, db, "SELECT whatif_id, trial_name, trace, dp_size, pp_size, tp_size, vpp_size, world_size, steps, "
		       "workers, ops, rows, created_at FROM whatif_runs ORDER BY whatif_id", "whatif-jobs");
	fprintf(out, "<h2 id=\"whatif-slowdown\">Slowdown</h2>\n<p>S, the mean traced step over the mean "
		"ideal one; L; M_S and M_W, the share of the slowdown the slowest stage and the slowest worker "
		"explain (NULL where S is under 1.03).</p>\n");
	table(out, db, "SELECT whatif_id, name, printf('%.4f', value) AS value FROM whatif_metrics "
		       "ORDER BY whatif_id, name", "whatif-metrics");
	figure(out, plot_dir, "whatif-heatmap", NULL, "Slowdown per worker (the last analysis)", &plots);
	figure(out, plot_dir, "whatif-timeline", NULL, "The slowest step, traced against ideal (the last analysis)",
	       &plots);
	fprintf(out, "<h2 id=\"whatif-policies\">Counterfactual policies</h2>\n<p>The mean step each "
		"policy would give, replayed on the trace, and the share of the slowdown it recovers.</p>\n");
	table(out, db, "SELECT whatif_id, policy, printf('%.4f', mean_step_s) AS mean_step_s, "
		       "printf('%.1f%%', 100 * recovered) AS recovered, description FROM whatif_policies "
		       "ORDER BY whatif_id, recovered DESC", "whatif-policies");
	if (one_count(db, "SELECT count(*) FROM whatif_forward") > 0) {
		fprintf(out, "<h2 id=\"whatif-forward\">Forward: the hybrid policies on the traced job</h2>\n<p>"
			"<code>lbsim whatif --forward</code>: the traced job rebuilt as a forward plan and run under "
			"each hybrid policy, step by step; the share of the forward static-to-ideal gap it recovers, "
			"beside the counterfactual of the matching fix (doc/whatif.md). The counterfactuals are "
			"not bounds on them.</p>\n");
		table(out, db, "SELECT whatif_id, policy, printf('%.4f', mean_step_s) AS mean_step_s, "
			       "printf('%.1f%%', 100 * recovered) AS recovered, changes, counterfactual, "
			       "CASE WHEN counterfactual_recovered IS NOT NULL THEN "
			       "printf('%.1f%%', 100 * counterfactual_recovered) END AS counterfactual_recovered "
			       "FROM whatif_forward ORDER BY whatif_id, recovered DESC", "whatif-forward");
	}
	fprintf(out, "<h2 id=\"whatif-workers\">The slowest workers</h2>\n");
	table(out, db, "SELECT whatif_id, name AS worker, dp_rank, stage, printf('%.4f', value) AS S_w "
		       "FROM whatif_slowdowns WHERE metric = 'S_w' AND step IS NULL ORDER BY whatif_id, value DESC",
	      "whatif-workers");
	if (!gnuplot)
		fprintf(out, "<p class=\"note\">No plots: gnuplot is not on PATH (Debian package "
			"gnuplot-nox).</p>\n");
	fprintf(out, "<p class=\"note\">Written by <code>lbsim report</code>; every table is in the "
		"results file (<code>lbsim export FILE whatif_policies</code>, ...).</p>\n</body>\n</html>\n");
	return LBS_OK;
}

/* x with `digits` significant digits, never in exponent form for the
 * sizes a report shows (1234.5 at 3 digits: "1235"). */
static void sig(char *buf, size_t len, double x, int digits)
{
	if (!isfinite(x))
		snprintf(buf, len, "-");
	else if (fabs(x) >= pow(10, digits))
		snprintf(buf, len, "%.0f", x);
	else if (x != 0 && fabs(x) < 1e-3)
		snprintf(buf, len, "%.*e", digits - 1, x);
	else
		snprintf(buf, len, "%.*g", digits, x);
}

/* The keys of a sweep's points that the report groups by: those of the
 * scenarios (a policy's options are in its variant's name instead), in
 * groups of keys that vary together (a [zip], or a key and what follows
 * from it), one section each. */
typedef struct report_keys {
	lbs_varied_key *keys;
	size_t n;
	size_t group[64];   /* the group of each key */
	size_t n_groups;
	bool scenarios;     /* more than one scenario: a column of its own */
	bool workers;       /* n_workers varies: a column of its own */
	char options[8][260]; /* the policies' options that vary (policy.NAME.KEY) */
	size_t n_options;
} report_keys;

/* The column of key i in points_query's rows. */
#define KEY_COL(i) (3 + (int)(i))

/* `k."name"` (as written) or its number column (numbers sort as numbers). */
static void key_col(lbs_buf *b, const lbs_varied_key *k, bool number)
{
	lbs_buf_printf(b, "k.");
	lbs_views_ident(b, number ? k->column : k->name);
}

/* Whether each value of a gives one value of b among the runs. */
static bool key_follows(sqlite3 *db, const lbs_varied_key *a, const lbs_varied_key *b)
{
	lbs_buf sql = { 0 };
	lbs_buf_printf(&sql, "SELECT coalesce(max(n), 0) <= 1 FROM (SELECT count(DISTINCT coalesce(");
	key_col(&sql, b, false);
	lbs_buf_printf(&sql, ", '')) AS n FROM run_keys k GROUP BY ");
	key_col(&sql, a, false);
	lbs_buf_printf(&sql, ")");
	bool r = !sql.failed && one_count(db, lbs_buf_str(&sql)) == 1;
	lbs_buf_free(&sql);
	return r;
}

static lbs_status report_keys_load(sqlite3 *db, report_keys *rk, lbs_error *err)
{
	memset(rk, 0, sizeof *rk);
	lbs_varied_key *all;
	size_t n;
	lbs_status st = lbs_views_keys(db, &all, &n, err);
	if (st != LBS_OK)
		return st;
	rk->keys = all;
	for (size_t i = 0; i < n; i++)
		if (strncmp(all[i].section, "policy.", 7) && strcmp(all[i].section, "policy") &&
		    rk->n < sizeof rk->group / sizeof *rk->group)
			rk->keys[rk->n++] = all[i];
		else if (rk->n_options < sizeof rk->options / sizeof *rk->options)
			snprintf(rk->options[rk->n_options++], sizeof rk->options[0], "%s", all[i].name);
	for (size_t i = 0; i < rk->n; i++) {
		rk->group[i] = rk->n_groups;
		for (size_t j = 0; j < i; j++)
			if (key_follows(db, &rk->keys[i], &rk->keys[j]) && key_follows(db, &rk->keys[j], &rk->keys[i])) {
				rk->group[i] = rk->group[j];
				break;
			}
		if (rk->group[i] == rk->n_groups)
			rk->n_groups++;
	}
	rk->scenarios = one_count(db, "SELECT count(DISTINCT scenario) FROM runs") > 1;
	rk->workers = one_count(db, "SELECT count(DISTINCT n_workers) FROM runs") > 1;
	return LBS_OK;
}

/* ORDER BY for the points, group g's keys first (numbers as numbers, words
 * in the order the runs first have them), then the others. */
static void order_points(lbs_buf *b, const report_keys *rk, size_t g)
{
	lbs_buf_printf(b, " ORDER BY %s", rk->scenarios ? "k.scenario, " : "");
	if (rk->n_groups <= 1)
		lbs_buf_printf(b, "k.n_workers, ");
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < rk->n; i++) {
			const lbs_varied_key *k = &rk->keys[i];
			if ((rk->group[i] == g) != (pass == 0))
				continue;
			if (k->numeric) {
				key_col(b, k, true);
			} else {
				lbs_buf_printf(b, "(SELECT min(o.run_id) FROM run_keys o WHERE o.");
				lbs_views_ident(b, k->name);
				lbs_buf_printf(b, " IS ");
				key_col(b, k, false);
				lbs_buf_printf(b, ")");
			}
			lbs_buf_printf(b, ", ");
		}
	lbs_buf_printf(b, "k.point_id");
}

/* The points, one row each: point_id, scenario, n_workers, then the value
 * of every key as written; in the order of group g. */
static sqlite3_stmt *points_query(sqlite3 *db, const report_keys *rk, size_t g)
{
	lbs_buf sql = { 0 };
	lbs_buf_printf(&sql, "SELECT k.point_id, k.scenario, k.n_workers");
	for (size_t i = 0; i < rk->n; i++) {
		lbs_buf_printf(&sql, ", ");
		key_col(&sql, &rk->keys[i], false);
	}
	lbs_buf_printf(&sql, " FROM run_keys k WHERE k.run_id IN (SELECT min(run_id) FROM run_keys GROUP BY point_id)");
	order_points(&sql, rk, g);
	sqlite3_stmt *q = NULL;
	if (sql.failed || sqlite3_prepare_v2(db, lbs_buf_str(&sql), -1, &q, NULL) != SQLITE_OK)
		q = NULL;
	lbs_buf_free(&sql);
	return q;
}

/* The header cells of the keys (group g's first) and the row's values;
 * a value the same as the row above in group g's keys is left blank, so
 * that the rows read as groups. */
static void key_headers(FILE *out, const report_keys *rk, size_t g)
{
	if (rk->scenarios)
		fprintf(out, "<th>scenario</th>");
	if (rk->workers)
		fprintf(out, "<th>n_workers</th>");
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < rk->n; i++)
			if ((rk->group[i] == g) == (pass == 0)) {
				fprintf(out, "<th class=\"key\">");
				html(out, rk->keys[i].name);
				fprintf(out, "</th>");
			}
}

/* Whether the row starts a new group: its scenario or its first key of
 * group g differs from prev's (which it then becomes). */
static bool group_starts(sqlite3_stmt *q, const report_keys *rk, size_t g, char *prev, size_t len)
{
	char first[512] = "";
	int lead = -1;
	for (size_t i = 0; i < rk->n && lead < 0; i++)
		if (rk->group[i] == g)
			lead = (int)i;
	const char *v = lead >= 0 ? (const char *)sqlite3_column_text(q, KEY_COL(lead)) : NULL;
	snprintf(first, sizeof first, "%s/%s", (const char *)sqlite3_column_text(q, 1), v ? v : "");
	bool starts = strcmp(first, prev) != 0;
	snprintf(prev, len, "%s", first);
	return starts;
}

/* The row's key cells, group g's first; those of group g blank where the
 * row does not start a group, so that the rows read as groups. */
static void key_cells(FILE *out, sqlite3_stmt *q, const report_keys *rk, size_t g, bool starts)
{
	if (rk->scenarios) {
		fprintf(out, "<td class=\"key\">");
		if (starts)
			html(out, (const char *)sqlite3_column_text(q, 1));
		fprintf(out, "</td>");
	}
	if (rk->workers)
		fprintf(out, "<td class=\"n\">%lld</td>", sqlite3_column_int64(q, 2));
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < rk->n; i++)
			if ((rk->group[i] == g) == (pass == 0)) {
				const char *v = (const char *)sqlite3_column_text(q, KEY_COL(i));
				fprintf(out, "<td class=\"key\">");
				if (starts || rk->group[i] != g)
					html(out, v ? v : "-");
				fprintf(out, "</td>");
			}
}

/* The policy variants of a view's rows, static first. */
static size_t variants(sqlite3 *db, const char *view, bool with_static, char names[][128], size_t max)
{
	char sql[300];
	lbs_fmt(sql, sizeof sql, "SELECT policy FROM %s GROUP BY policy ORDER BY policy = 'static' DESC, "
		"min(first_run_id)", view);
	sqlite3_stmt *q = NULL;
	size_t n = 0;
	if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK)
		while (n < max && sqlite3_step(q) == SQLITE_ROW) {
			const char *p = (const char *)sqlite3_column_text(q, 0);
			if (with_static || strcmp(p, "static"))
				snprintf(names[n++], sizeof names[0], "%s", p);
		}
	sqlite3_finalize(q);
	return n;
}

#define REPORT_MAX_POLICIES 16

/* A table of the points in group g's order, a column per policy variant:
 * the mean of `what` over seeds with its 95% interval (cols: the view's
 * mean, low and high columns) and, where it differs from point to point,
 * the number of seeds. */
static void point_table(FILE *out, sqlite3 *db, const report_keys *rk, size_t g, const char *id,
			const char *view, const char *cols, bool with_static, int digits)
{
	char names[REPORT_MAX_POLICIES][128];
	size_t np = variants(db, view, with_static, names, REPORT_MAX_POLICIES);
	sqlite3_stmt *pts = points_query(db, rk, g), *cell = NULL;
	char sql[400];
	lbs_fmt(sql, sizeof sql, "SELECT %s, runs FROM %s WHERE point_id = ?1 AND policy = ?2", cols, view);
	if (!np || !pts || sqlite3_prepare_v2(db, sql, -1, &cell, NULL) != SQLITE_OK) {
		fprintf(out, "<p class=\"empty\">(none)</p>\n");
		sqlite3_finalize(pts);
		return;
	}
	char sql_n[200];
	lbs_fmt(sql_n, sizeof sql_n, "SELECT count(DISTINCT runs) FROM %s", view);
	bool one_n = one_count(db, sql_n) == 1;
	fprintf(out, "<div class=\"wide\"><table id=\"%s\" class=\"points\">\n<thead><tr>", id);
	key_headers(out, rk, g);
	for (size_t p = 0; p < np; p++) {
		fprintf(out, "<th class=\"policy\">");
		html(out, names[p]);
		fprintf(out, "</th>");
	}
	fprintf(out, "</tr></thead>\n<tbody>\n");
	char prev[512] = "\x01";
	long long rows = 0;
	while (sqlite3_step(pts) == SQLITE_ROW && rows++ < REPORT_MAX_ROWS) {
		bool starts = group_starts(pts, rk, g, prev, sizeof prev);
		fprintf(out, "<tr data-point=\"%lld\"%s>", sqlite3_column_int64(pts, 0),
			starts && rows > 1 ? " class=\"first\"" : "");
		key_cells(out, pts, rk, g, starts);
		for (size_t p = 0; p < np; p++) {
			sqlite3_reset(cell);
			sqlite3_bind_int64(cell, 1, sqlite3_column_int64(pts, 0));
			sqlite3_bind_text(cell, 2, names[p], -1, SQLITE_STATIC);
			fprintf(out, "<td class=\"n\">");
			if (sqlite3_step(cell) == SQLITE_ROW) {
				char m[32], lo[32], hi[32];
				sig(m, sizeof m, sqlite3_column_double(cell, 0), digits);
				fprintf(out, "%s", m);
				if (sqlite3_column_type(cell, 1) != SQLITE_NULL) {
					sig(lo, sizeof lo, sqlite3_column_double(cell, 1), digits);
					sig(hi, sizeof hi, sqlite3_column_double(cell, 2), digits);
					fprintf(out, " <span class=\"ci\">[%s, %s]</span>", lo, hi);
				}
				if (!one_n)
					fprintf(out, " <span class=\"ci\">n=%lld</span>", sqlite3_column_int64(cell, 3));
			} else {
				fprintf(out, "-");
			}
			fprintf(out, "</td>");
		}
		fprintf(out, "</tr>\n");
	}
	fprintf(out, "</tbody></table></div>\n");
	sqlite3_finalize(cell);
	sqlite3_finalize(pts);
	lbs_fmt(sql_n, sizeof sql_n, "SELECT max(runs) FROM %s", view);
	long long n = one_count(db, sql_n);
	fprintf(out, "<p class=\"note\">Each cell: the mean over the seeds, and in brackets its 95%% interval "
		"(Student's t; none with one seed); %s.</p>\n",
		one_n ? (n == 1 ? "one seed per point" : "the same number of seeds at every point, given above")
		      : "n: the seeds of that point");
}

/* The straggler gap per point and policy (the mean over seeds of each
 * run's mean and percentiles), the rows in the order of group g. */
static void straggler_table(FILE *out, sqlite3 *db, const report_keys *rk, size_t g)
{
	char names[REPORT_MAX_POLICIES][128];
	size_t np = variants(db, "temp.report_time", true, names, REPORT_MAX_POLICIES);
	sqlite3_stmt *pts = points_query(db, rk, g), *cell = NULL;
	if (!np || !pts ||
	    sqlite3_prepare_v2(db, "SELECT runs, mean_s, p50_s, p90_s, p99_s, max_s FROM temp.report_stragglers "
			       "WHERE point_id = ?1 AND policy = ?2", -1, &cell, NULL) != SQLITE_OK) {
		fprintf(out, "<p class=\"empty\">(none)</p>\n");
		sqlite3_finalize(pts);
		return;
	}
	fprintf(out, "<div class=\"wide\"><table id=\"straggler-table\" class=\"points\">\n<thead><tr>");
	key_headers(out, rk, g);
	fprintf(out, "<th>policy</th><th>runs</th><th>mean (s)</th><th>p50 (s)</th><th>p90 (s)</th>"
		"<th>p99 (s)</th><th>max (s)</th></tr></thead>\n<tbody>\n");
	char prev[512] = "\x01";
	long long rows = 0;
	while (sqlite3_step(pts) == SQLITE_ROW && rows < REPORT_MAX_ROWS) {
		bool starts = group_starts(pts, rk, g, prev, sizeof prev);
		for (size_t p = 0, shown = 0; p < np; p++) {
			sqlite3_reset(cell);
			sqlite3_bind_int64(cell, 1, sqlite3_column_int64(pts, 0));
			sqlite3_bind_text(cell, 2, names[p], -1, SQLITE_STATIC);
			if (sqlite3_step(cell) != SQLITE_ROW || sqlite3_column_int64(cell, 0) == 0)
				continue;
			/* a line at each point, a heavier one at each group */
			fprintf(out, "<tr data-point=\"%lld\"%s>", sqlite3_column_int64(pts, 0),
				shown ? "" : starts && rows ? " class=\"first\"" : rows ? " class=\"point\"" : "");
			rows++;
			if (shown++) /* the point's other policies: its keys blank */
				for (size_t i = 0; i < rk->n + rk->scenarios + rk->workers; i++)
					fprintf(out, "<td class=\"key\"></td>");
			else
				key_cells(out, pts, rk, g, starts);
			fprintf(out, "<td>");
			html(out, names[p]);
			fprintf(out, "</td><td class=\"n\">%lld</td>", sqlite3_column_int64(cell, 0));
			for (int c = 1; c <= 5; c++) {
				char v[32];
				sig(v, sizeof v, sqlite3_column_double(cell, c), 3);
				fprintf(out, "<td class=\"n\">%s</td>", v);
			}
			fprintf(out, "</tr>\n");
		}
	}
	fprintf(out, "</tbody></table></div>\n");
	sqlite3_finalize(cell);
	sqlite3_finalize(pts);
}

/* The speedup plot against x (NULL: lbsim plot's default), drawn into
 * plot_dir/by-N, inline as #plot-speedup-N. */
static void speedup_plot(FILE *out, sqlite3 *db, const char *x, const char *gnuplot, const char *plot_dir,
			 size_t n, int *plots)
{
	char dir[4200];
	snprintf(dir, sizeof dir, "%s/by-%zu", plot_dir, n);
	lbs_plot_options o = { .dir = dir, .formats = "svg", .x = x, .gantt_first = 0, .gantt_count = 1,
			       .quiet = true, .which = LBS_PLOT_SPEEDUP };
	lbs_buf made = { 0 };
	lbs_error err = { 0 };
	lbs_status st = lbs_plot_draw(db, gnuplot, &o, &made, &err);
	lbs_buf_free(&made);
	char id[64], caption[400];
	snprintf(id, sizeof id, "plot-speedup-%zu", n);
	lbs_fmt(caption, sizeof caption, "Speedup over static against %s", x ? x : "the point");
	if (st == LBS_OK)
		figure(out, dir, "speedup", id, caption, plots);
	else {
		fprintf(out, "<p class=\"note\">No plot: ");
		html(out, err.msg);
		fprintf(out, "</p>\n");
	}
}

/* The speedup plot against group g's keys (or n_workers where it follows
 * from them one to one), drawn into plot_dir/by-G; nothing when a line
 * would have a single point. */
static void group_plot(FILE *out, sqlite3 *db, const report_keys *rk, size_t g, const char *gnuplot,
		       const char *plot_dir, int *plots)
{
	if (!gnuplot || one_count(db, "SELECT max(n) FROM (SELECT count(*) AS n FROM temp.report_speedup "
				      "GROUP BY policy)") < 2)
		return;
	const lbs_varied_key *k = NULL;
	for (size_t i = 0; i < rk->n && !k; i++)
		if (rk->group[i] == g)
			k = &rk->keys[i];
	const char *x = k ? k->name : NULL;
	if (!k || (one_count(db, "SELECT max(n) FROM (SELECT count(DISTINCT n_workers) AS n FROM run_keys "
				 "GROUP BY point_id)") <= 1 &&
		   one_count(db, "SELECT count(DISTINCT n_workers) FROM runs") > 1)) {
		/* n_workers is a column of every point: the axis when it follows
		 * from the group one to one */
		lbs_buf sql = { 0 };
		lbs_buf_printf(&sql, "SELECT max(a) <= 1 AND max(b) <= 1 FROM (SELECT count(DISTINCT n_workers) "
			       "AS a, 0 AS b FROM run_keys k GROUP BY ");
		if (k)
			key_col(&sql, k, false);
		else
			lbs_buf_printf(&sql, "k.point_id");
		lbs_buf_printf(&sql, " UNION ALL SELECT 0, count(DISTINCT ");
		if (k)
			key_col(&sql, k, false);
		else
			lbs_buf_printf(&sql, "1");
		lbs_buf_printf(&sql, ") FROM run_keys k GROUP BY n_workers)");
		if (!k || one_count(db, lbs_buf_str(&sql)) == 1)
			x = "n_workers";
		lbs_buf_free(&sql);
	}
	speedup_plot(out, db, x, gnuplot, plot_dir, g, plots);
}

/* A section per group of keys that vary: the speedup plot against them,
 * the speedups and the simulated times per point, in their order. */
static void key_sections(FILE *out, sqlite3 *db, const report_keys *rk, const char *gnuplot,
			 const char *plot_dir, int *plots)
{
	size_t groups = rk->n_groups ? rk->n_groups : 1;
	for (size_t g = 0; g < groups; g++) {
		fprintf(out, "<h2 id=\"by-%zu\">", g);
		if (!rk->n_groups) {
			fprintf(out, "Speedup per policy");
		} else {
			fprintf(out, "By ");
			for (size_t i = 0, m = 0; i < rk->n; i++)
				if (rk->group[i] == g) {
					fprintf(out, "%s", m++ ? ", " : "");
					html(out, rk->keys[i].name);
				}
		}
		fprintf(out, "</h2>\n<p>The points (the runs that differ only in their seed) in the order of %s; "
			"the speedup is the static run's simulated time over the policy's, with the same seed, "
			"averaged over the seeds.</p>\n", rk->n_groups ? "these keys" : "the runs");
		group_plot(out, db, rk, g, gnuplot, plot_dir, plots);
		char id[64];
		fprintf(out, "<h3>Speedup over static</h3>\n");
		snprintf(id, sizeof id, "speedup-%zu", g);
		point_table(out, db, rk, g, id, "temp.report_speedup", "mean_speedup, ci95_low, ci95_high", false, 3);
		fprintf(out, "<h3>Simulated time (s)</h3>\n");
		snprintf(id, sizeof id, "time-%zu", g);
		point_table(out, db, rk, g, id, "temp.report_time", "mean_sim_time_s, ci95_low_s, ci95_high_s", true, 4);
	}
	/* A policy's option that varies: its values are policies of their own
	 * (the tables' columns, "lbbsp-cpu (predictor=ema)"); a section each,
	 * with the speedup against it, bars for values that are names. */
	for (size_t i = 0; i < rk->n_options; i++) {
		fprintf(out, "<h2 id=\"by-option-%zu\">By ", i);
		html(out, rk->options[i]);
		fprintf(out, "</h2>\n<p>A policy's option: each value is a variant of the policy, a column of "
			"the tables above (<code>run_variant</code>), compared with the static run of the same "
			"setting and seed.</p>\n");
		speedup_plot(out, db, rk->options[i], gnuplot, plot_dir, groups + i, plots);
	}
}

/* At most this many points get their own plots (lbsim plot --setting N
 * draws any). */
#define REPORT_MAX_POINT_PLOTS 24

/* The per-setting plots of each point (its first seed's setting with the
 * most policies), each point's in a section that opens; the first open. */
static void point_plots(FILE *out, sqlite3 *db, const report_keys *rk, const char *gnuplot,
			const char *plot_dir, int *plots)
{
	if (!gnuplot)
		return;
	sqlite3_stmt *pts = points_query(db, rk, 0);
	if (!pts)
		return;
	fprintf(out, "<h2 id=\"points\">Per point</h2>\n<p>For each point, the runs of its first seed: each "
		"worker's compute, wait at the barrier for the slowest worker, and aggregation in the first "
		"iterations (recorded with <code>--detail workers</code>), the share of their time each group "
		"spends waiting, the iteration times and the batch sizes.</p>\n");
	/* The points and their names first: the plots are drawn with no query
	 * open (lbs_plot_draw replaces a temporary table). */
	long long point[REPORT_MAX_POINT_PLOTS];
	char name[REPORT_MAX_POINT_PLOTS][1024];
	long long n = 0, total = one_count(db, "SELECT count(DISTINCT point_id) FROM run_point");
	while (n < REPORT_MAX_POINT_PLOTS && sqlite3_step(pts) == SQLITE_ROW) {
		point[n] = sqlite3_column_int64(pts, 0);
		size_t at = 0;
		name[n][0] = '\0';
		if (rk->workers)
			at = (size_t)snprintf(name[n], sizeof name[n], ": %lld workers", sqlite3_column_int64(pts, 2));
		for (size_t i = 0; i < rk->n && at < sizeof name[n]; i++) {
			const char *v = (const char *)sqlite3_column_text(pts, KEY_COL(i));
			at += (size_t)snprintf(name[n] + at, sizeof name[n] - at, "%s%s = %s", at ? ", " : ": ",
					       rk->keys[i].name, v ? v : "-");
		}
		n++;
	}
	sqlite3_finalize(pts);
	for (long long j = 0; j < n; j++) {
		char sql[500], setting[32], dir[4200];
		lbs_fmt(sql, sizeof sql, "SELECT s.setting_id FROM run_setting s JOIN run_point p ON p.run_id = s.run_id "
			"WHERE p.point_id = %lld GROUP BY s.setting_id ORDER BY count(*) > 1 DESC, s.setting_id "
			"LIMIT 1", point[j]);
		snprintf(setting, sizeof setting, "%lld", one_count(db, sql));
		snprintf(dir, sizeof dir, "%s/point-%lld", plot_dir, point[j]);
		lbs_plot_options o = { .dir = dir, .formats = "svg", .gantt_first = 0, .gantt_count = 3,
				       .quiet = true, .which = LBS_PLOT_SETTING, .n_filters = 1 };
		o.filters[0] = setting;
		lbs_buf made = { 0 };
		lbs_error err = { 0 };
		lbs_status st = lbs_plot_draw(db, gnuplot, &o, &made, &err);
		lbs_buf_free(&made);
		fprintf(out, "<details id=\"point-%lld\"%s><summary>Point %lld", point[j], j ? "" : " open", point[j]);
		html(out, name[j]);
		fprintf(out, " (setting %s)</summary>\n", setting);
		if (st != LBS_OK) {
			fprintf(out, "<p class=\"note\">No plots: ");
			html(out, err.msg);
			fprintf(out, "</p>\n");
		}
		static const struct { const char *name, *caption; } per[] = {
			{ "gantt", "Per-worker timeline" },
			{ "wait-share", "Share of the time spent waiting, per worker group" },
			{ "iteration-time", "Iteration time over simulated time" },
			{ "straggler-cdf", "Straggler gap, cumulative distribution" },
			{ "iteration-cdf", "Iteration time, cumulative distribution" },
			{ "time-to-train", "Simulated time to train, per policy" },
			{ "batch-sizes", "Batch sizes over simulated time" },
			{ "availability", "The machines' load (CPU readings) and the iteration time" },
		};
		for (size_t i = 0; st == LBS_OK && i < sizeof per / sizeof *per; i++) {
			char id[80];
			snprintf(id, sizeof id, "plot-%lld-%s", point[j], per[i].name);
			figure(out, dir, per[i].name, id, per[i].caption, plots);
		}
		fprintf(out, "</details>\n");
	}
	if (total > n)
		fprintf(out, "<p class=\"note\">The plots of the first %lld of %lld points (<code>lbsim plot "
			"--setting N</code> draws any setting).</p>\n", n, total);
}

/* The raw tables, folded away: every run, the keys run by run, the
 * settings, the scenarios. */
static void appendix(FILE *out, sqlite3 *db)
{
	fprintf(out, "<details id=\"appendix\"><summary>Appendix: the raw tables (every run, its keys and "
		"the settings)</summary>\n");
	fprintf(out, "<h3 id=\"summary-runs\">Runs</h3>\n<p>One row per run (the view "
		"<code>run_summary</code>); means per iteration.</p>\n");
	table(out, db, "SELECT run_id, scenario, policy, seed, n_workers, iterations, sim_time_s, "
		       "mean_iteration_s, mean_compute_s, mean_aggregation_s, mean_straggler_gap_s, "
		       "throughput_samples_per_s, wall_s FROM run_summary ORDER BY run_id", "summary");
	fprintf(out, "<h3 id=\"settings\">Settings</h3>\n<p>The keys that vary, run by run (the view "
		"<code>run_keys</code>):</p>\n");
	table(out, db, "SELECT * FROM run_keys", "keys");
	fprintf(out, "<p>Every other key, the same in every run of a scenario (as written, or the "
		"default):</p>\n");
	table(out, db,
	      "SELECT r.scenario, c.section, c.key, min(c.value) AS value FROM run_config c "
	      "JOIN runs r ON r.run_id = c.run_id WHERE c.section <> 'policy' AND c.section NOT LIKE 'policy.%' "
	      "GROUP BY r.scenario, c.section, c.key HAVING count(DISTINCT c.value) = 1 AND "
	      "count(*) = (SELECT count(*) FROM runs x WHERE x.scenario = r.scenario) "
	      "ORDER BY r.scenario, c.section, c.key", "common");
	fprintf(out, "<p>The policies' options:</p>\n");
	table(out, db, "SELECT DISTINCT r.policy, c.section, c.key, c.value FROM run_config c "
		       "JOIN runs r ON r.run_id = c.run_id WHERE c.section LIKE 'policy.%' "
		       "ORDER BY r.policy, c.section, c.key", "policy-options");
	fprintf(out, "<h3 id=\"speedup-raw\">Speedups per point</h3>\n<p>The view <code>speedup_by_size</code>, "
		"with the least and greatest speedup and the standard deviation over the seeds.</p>\n");
	table(out, db, "SELECT * FROM speedup_by_size", "speedup-table");
	fprintf(out, "<h3 id=\"scenarios\">Scenarios</h3>\n");
	table(out, db, "SELECT scenario, scenario_path, description, count(*) AS runs FROM runs "
		       "GROUP BY scenario, scenario_path, description ORDER BY min(run_id)", "scenarios");
	fprintf(out, "</details>\n");
}

static lbs_status write_report(sqlite3 *db, const char *path, const char *gnuplot, const char *plot_dir,
			       FILE *out, lbs_error *err)
{
	fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		"<title>lbsim report: ");
	html(out, path);
	fprintf(out, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>lbsim report</h1>\n", style);
	char versions[512] = "", first[64] = "", last[64] = "";
	sqlite3_stmt *q = NULL;
	long long runs = 0;
	if (sqlite3_prepare_v2(db, "SELECT count(*), group_concat(DISTINCT lbsim_version), min(created_at), "
			       "max(created_at) FROM runs", -1, &q, NULL) == SQLITE_OK &&
	    sqlite3_step(q) == SQLITE_ROW) {
		runs = sqlite3_column_int64(q, 0);
		snprintf(versions, sizeof versions, "%s", (const char *)sqlite3_column_text(q, 1));
		snprintf(first, sizeof first, "%s", (const char *)sqlite3_column_text(q, 2));
		snprintf(last, sizeof last, "%s", (const char *)sqlite3_column_text(q, 3));
	}
	sqlite3_finalize(q);
	if (runs == 0 && whatif_count(db) > 0)
		return whatif_report(db, path, gnuplot, plot_dir, out, err);
	/* The views the tables read a cell at a time, computed once (each
	 * query of a view computes it again: its settings, over run_config). */
	lbs_status mst = lbs_views_materialize(db, err);
	if (mst != LBS_OK)
		return mst;
	if (sqlite3_exec(db, "DROP TABLE IF EXISTS temp.report_speedup; DROP TABLE IF EXISTS temp.report_time; "
			 "DROP TABLE IF EXISTS temp.report_stragglers; "
			 "CREATE TEMP TABLE report_speedup AS SELECT * FROM speedup_by_point; "
			 "CREATE INDEX temp.report_speedup_cell ON report_speedup (point_id, policy); "
			 "CREATE TEMP TABLE report_time AS SELECT * FROM time_by_point; "
			 "CREATE INDEX temp.report_time_cell ON report_time (point_id, policy); "
			 "CREATE TEMP TABLE report_stragglers AS SELECT p.point_id, v.variant AS policy, "
			 "count(*) AS runs, avg(g.mean_s) AS mean_s, avg(g.p50_s) AS p50_s, avg(g.p90_s) AS p90_s, "
			 "avg(g.p99_s) AS p99_s, max(g.max_s) AS max_s FROM straggler_gap_stats g "
			 "JOIN run_point p ON p.run_id = g.run_id JOIN run_variant v ON v.run_id = g.run_id "
			 "WHERE g.run_id IN (SELECT run_id FROM run_unique) GROUP BY p.point_id, v.variant; "
			 "CREATE INDEX temp.report_stragglers_cell ON report_stragglers (point_id, policy);",
			 NULL, NULL, NULL) != SQLITE_OK)
		return lbs_error_set(err, LBS_EIO, "cannot read the views: %s", sqlite3_errmsg(db));
	report_keys rk;
	lbs_status st = report_keys_load(db, &rk, err);
	if (st != LBS_OK)
		return st;
	long long points = one_count(db, "SELECT count(DISTINCT point_id) FROM run_point");
	long long policies = one_count(db, "SELECT count(DISTINCT variant) FROM run_variant");
	long long seeds = one_count(db, "SELECT max(runs) FROM temp.report_time");
	fprintf(out, "<p id=\"about\"><code>");
	html(out, path);
	fprintf(out, "</code>: %lld run%s by lbsim ", runs, runs == 1 ? "" : "s");
	html(out, versions);
	fprintf(out, ", recorded from ");
	html(out, first);
	fprintf(out, " to ");
	html(out, last);
	fprintf(out, " (UTC): %lld point%s x %lld polic%s x up to %lld seed%s. Simulated times are in "
		"seconds.", points, points == 1 ? "" : "s", policies, policies == 1 ? "y" : "ies", seeds,
		seeds == 1 ? "" : "s");
	if (rk.n) {
		fprintf(out, " The keys that vary:");
		for (size_t i = 0; i < rk.n; i++) {
			fprintf(out, "%s <code>", i ? "," : "");
			html(out, rk.keys[i].name);
			fprintf(out, "</code>");
		}
		fprintf(out, ".");
	}
	fprintf(out, "</p>\n");
	int plots = 0;
	if (validations(db) > 0)
		validation_section(out, db);
	key_sections(out, db, &rk, gnuplot, plot_dir, &plots);
	fprintf(out, "<h2 id=\"stragglers\">Stragglers</h2>\n<p>The straggler gap (the slowest minus the "
		"fastest worker's compute time in an iteration) per point and policy: the mean over the seeds "
		"of each run's mean and percentiles, and the greatest.</p>\n");
	straggler_table(out, db, &rk, 0);
	point_plots(out, db, &rk, gnuplot, plot_dir, &plots);
	if (!gnuplot)
		fprintf(out, "<p class=\"note\">No plots: gnuplot is not on PATH (Debian package "
			"gnuplot-nox).</p>\n");
	appendix(out, db);
	free(rk.keys);
	fprintf(out, "<p class=\"note\">Written by <code>lbsim report</code>; the data of every table "
		"is a view of the results file (<code>lbsim export FILE VIEW</code>).</p>\n</body>\n</html>\n");
	return LBS_OK;
}

static const char short_usage[] = "Usage: lbsim report RESULTS.db [-o report.html] [-q]\n";

static void usage(FILE *out)
{
	fprintf(out, "%s"
		     "\n"
		     "Writes one self-contained HTML file of a results database: the plots of lbsim plot\n"
		     "inline as SVG, the speedup of each policy with its spread over seeds, the straggler\n"
		     "timeline, the summary of every run, and the settings (the keys that vary, and the\n"
		     "rest); for a database of lbsim validate, first the measured against the\n"
		     "simulated times and speedups. It refers to no other file and to no network.\n"
		     "\n"
		     "  -o, --output FILE   the HTML file (default: report.html)\n"
		     "  -q, --quiet         print nothing but errors\n"
		     "  -h, --help          this help\n", short_usage);
}

int lbs_report_command(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *output = "report.html";
	bool quiet = false;
	int c;
	while ((c = getopt_long(argc, argv, "o:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': output = optarg; break;
		case 'q': quiet = true; break;
		case 'h': usage(stdout); return 0;
		default: fprintf(stderr, "%ssee lbsim report --help\n", short_usage); return LBS_EUSAGE;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "lbsim report: %s\n%ssee lbsim report --help\n",
			optind == argc ? "no results database given" : "one results database at a time",
			short_usage);
		return LBS_EUSAGE;
	}
	const char *path = argv[optind];
	lbs_error err = { 0 };
	sqlite3 *db;
	lbs_status st = lbs_analysis_open(&db, path, &err);
	if (st != LBS_OK) {
		fprintf(stderr, "lbsim report: %s\n", err.msg);
		return st;
	}
	char gnuplot[4096];
	bool have_gnuplot = lbs_proc_find("gnuplot", gnuplot, sizeof gnuplot);
	if (!have_gnuplot && !quiet)
		fprintf(stderr, "lbsim report: gnuplot is not on PATH: the report has no plots (install the "
			"Debian package gnuplot-nox)\n");
	/* SIGINT, SIGTERM: gnuplot stopped, the temporaries removed, exit 130. */
	lbs_signals_exit();
	/* The plots are drawn into a folder of their own beside the report
	 * (OUTPUT.plots.tmp.XXXXXX), removed after; the report is written to a
	 * temporary beside it, renamed over it once whole (util/outfile.h). */
	char plots_name[LBS_PATH_MAX];
	lbs_tmp plots;
	lbs_outfile out;
	if ((size_t)snprintf(plots_name, sizeof plots_name, "%s.plots", output) >= sizeof plots_name)
		st = lbs_error_set(&err, LBS_EUSAGE, "-o %.200s...: the name is too long", output);
	else
		st = lbs_tmp_create(&plots, plots_name, true, &err);
	if (st == LBS_OK) {
		if ((st = lbs_outfile_open(&out, output, &err)) == LBS_OK) {
			st = write_report(db, path, have_gnuplot ? gnuplot : NULL, plots.path, out.f, &err);
			if (st == LBS_OK)
				st = lbs_outfile_commit(&out, &err);
			else
				lbs_outfile_abort(&out);
		}
		lbs_tmp_remove(&plots);
	}
	sqlite3_close(db);
	if (st != LBS_OK) {
		fprintf(stderr, "lbsim report: %s\n", err.msg);
		return st;
	}
	if (!quiet)
		printf("%s\n", output);
	return 0;
}
