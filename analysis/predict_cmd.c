/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "analysis/predict_cmd.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/outfile.h"
#include "models/predict/eval.h"
#include "sim/recorder.h"
#include "traces/reader.h"

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: lbsim predict RESULTS.db:RUN [options]\n"
		"       lbsim predict --format FORMAT TRACE [--column NAME] [--as speed|time] [options]\n"
		"\n"
		"Replays each worker's measured speed in run RUN of a results database (recorded\n"
		"with --detail workers) one step ahead through each predictor, with the CPU and\n"
		"memory readings recorded beside it, and prints RMSE, MAE and MAPE per predictor;\n"
		"appends them to the predictor_errors table. With --format, replays each series\n"
		"(worker, machine, VM) of a trace file instead: a speed column as it is, a time\n"
		"column (the PAI mini-batch times: --as time, the default for pai) as 1 / time.\n"
		"\n"
		"Options:\n"
		"  -p, --predictors LIST   predictors to compare (default: last,ema,arima,narx)\n"
		"      --set predictor.NAME.KEY=VALUE   a predictor option (repeatable)\n"
		"      --skip N            forecasts not scored at the start of each series (default 1)\n"
		"  -o, --output FILE       database for the scores (default: the source database;\n"
		"                          with --format: results.db)\n"
		"      --format FORMAT     the trace's format (lbsim, pai, azure, cloudwatch, ...)\n"
		"      --column NAME       the column to replay (default: the first)\n"
		"      --as speed|time     what the column measures (default: time for pai)\n"
		"      --max-trace-rows N  refuse a trace that would keep more than N rows\n"
		"                          (default 100000000; 0: no limit)\n"
		"  -q, --quiet             print nothing but errors\n");
}

typedef struct series_set {
	double *y;      /* concatenated series */
	double *x;      /* readings (cpu_util, mem_util) per step, when recorded */
	size_t n_exog;
	size_t *start;  /* series k is y[start[k] .. start[k + 1]) */
	size_t n_series, n;
} series_set;

/* Each worker's speed in run `run`: batch / compute_s by iteration. */
static lbs_status load_run(const char *path, long long run, series_set *s, lbs_error *err)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *q = NULL;
	memset(s, 0, sizeof *s);
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		lbs_status st = lbs_error_set(err, LBS_EINPUT, "%s: cannot open: %s", path, sqlite3_errmsg(db));
		sqlite3_close(db);
		return st;
	}
	lbs_results_harden(db, LBS_RESULTS_MAX_VALUE, NULL);
	lbs_status st = lbs_results_check(db, path, err);
	if (st != LBS_OK) {
		sqlite3_close(db);
		return st;
	}
	if (sqlite3_prepare_v2(db, "SELECT worker, batch, compute_s, cpu_util, mem_util FROM worker_iterations "
				   "WHERE run_id = ?1 ORDER BY worker, iteration", -1, &q, NULL) != SQLITE_OK) {
		st = lbs_error_set(err, LBS_EINPUT, "%s: not an lbsim results database: %s", path,
				   sqlite3_errmsg(db));
		sqlite3_close(db);
		return st;
	}
	sqlite3_bind_int64(q, 1, run);
	size_t cap = 0, scap = 0;
	long long prev = -1;
	int rc;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		long long w = sqlite3_column_int64(q, 0);
		double b = sqlite3_column_double(q, 1), c = sqlite3_column_double(q, 2);
		if (s->n == cap) {
			cap = cap ? 2 * cap : 1024;
			double *y = realloc(s->y, cap * sizeof *y);
			double *x = y ? realloc(s->x, 2 * cap * sizeof *x) : NULL;
			if (y)
				s->y = y;
			if (!y || !x) {
				st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
				break;
			}
			s->x = x;
		}
		if (w != prev) {
			if (s->n_series + 2 > scap) {
				scap = scap ? 2 * scap : 64;
				size_t *p = realloc(s->start, scap * sizeof *p);
				if (!p) {
					st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
					break;
				}
				s->start = p;
			}
			s->start[s->n_series++] = s->n;
			prev = w;
		}
		/* A worker given no samples has no speed to predict that step. */
		if (sqlite3_column_type(q, 3) != SQLITE_NULL)
			s->n_exog = 2;
		s->x[2 * s->n] = sqlite3_column_double(q, 3);
		s->x[2 * s->n + 1] = sqlite3_column_double(q, 4);
		s->y[s->n++] = b > 0 && c > 0 ? b / c : NAN;
	}
	if (st == LBS_OK && rc != SQLITE_DONE)
		st = lbs_error_set(err, LBS_EINPUT, "%s: %s", path, sqlite3_errmsg(db));
	sqlite3_finalize(q);
	sqlite3_close(db);
	if (st == LBS_OK && s->n_series == 0)
		st = lbs_error_set(err, LBS_EINPUT,
				   "%s: run %lld has no worker_iterations rows (record it with --detail workers)",
				   path, run);
	if (st == LBS_OK)
		s->start[s->n_series] = s->n;
	return st;
}

/* Each series of a trace file: the column as speed, or 1 / column as time;
 * the set's cpu_util and mem_util columns as readings when it has them. */
static lbs_status load_trace(const char *path, const char *format, const char *column, int as_time,
			     series_set *s, lbs_error *err)
{
	memset(s, 0, sizeof *s);
	const lbs_trace_reader *rd = lbs_trace_reader_find(format);
	if (!rd || !strcmp(format, "none"))
		return lbs_error_set(err, LBS_EUSAGE, "--format %s: not a trace format (%s)", format,
				     LBS_TRACE_FORMAT_CHOICES);
	lbs_read_opts opts = { 0 };
	lbs_series_set *set = NULL;
	lbs_status st = rd->read(path, &opts, &set, err);
	if (st != LBS_OK)
		return st;
	int c = column ? lbs_series_column(set, column) : 0;
	if (c < 0) {
		lbs_series_set_destroy(set);
		return lbs_error_set(err, LBS_EINPUT, "%s: no column '%s'", path, column);
	}
	if (as_time < 0)
		as_time = !strcmp(format, "pai");
	int cpu = lbs_series_column(set, "cpu_util"), mem = lbs_series_column(set, "mem_util");
	s->n_exog = (cpu >= 0 || mem >= 0) ? 2 : 0;
	s->y = calloc(set->n_rows + 1, sizeof *s->y);
	s->x = calloc(2 * set->n_rows + 2, sizeof *s->x);
	s->start = calloc(set->n_series + 1, sizeof *s->start);
	if (!s->y || !s->x || !s->start) {
		lbs_series_set_destroy(set);
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	}
	for (size_t e = 0; e < set->n_series; e++) {
		lbs_series v = lbs_series_view(set, e, c);
		lbs_series vc = cpu >= 0 ? lbs_series_view(set, e, cpu) : v;
		lbs_series vm = mem >= 0 ? lbs_series_view(set, e, mem) : v;
		s->start[s->n_series++] = s->n;
		for (size_t k = 0; k < v.n; k++) {
			double val = v.value[k];
			s->y[s->n] = as_time ? (val > 0 ? 1.0 / val : NAN) : val;
			s->x[2 * s->n] = cpu >= 0 ? vc.value[k] : 0;
			s->x[2 * s->n + 1] = mem >= 0 ? vm.value[k] : 0;
			s->n++;
		}
	}
	s->start[s->n_series] = s->n;
	lbs_series_set_destroy(set);
	return LBS_OK;
}

int lbs_predict_command(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "predictors", required_argument, NULL, 'p' }, { "set", required_argument, NULL, 'S' },
		{ "skip", required_argument, NULL, 'k' },       { "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },            { "help", no_argument, NULL, 'h' },
		{ "format", required_argument, NULL, 'f' },     { "column", required_argument, NULL, 'c' },
		{ "as", required_argument, NULL, 'a' },         { "max-trace-rows", required_argument, NULL, 'T' },
		{ NULL, 0, NULL, 0 },
	};
	char list[512] = "last,ema,arima,narx";
	const char *output = NULL;
	long skip = 1;
	bool quiet = false;
	const char *format = NULL, *column = NULL;
	int as_time = -1;
	lbs_kv *opts = calloc((size_t)argc + 1, sizeof *opts);
	size_t n_opts = 0;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "p:o:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (strlen(optarg) >= sizeof list) {
				fprintf(stderr, "lbsim predict: -p: a list of %zu characters (at most %zu)\n",
					strlen(optarg), sizeof list - 1);
				free(opts);
				return LBS_EUSAGE;
			}
			snprintf(list, sizeof list, "%s", optarg);
			break;
		case 'o': output = optarg; break;
		case 'q': quiet = true; break;
		case 'f': format = optarg; break;
		case 'c': column = optarg; break;
		case 'a':
			if (strcmp(optarg, "speed") && strcmp(optarg, "time")) {
				fprintf(stderr, "lbsim predict: --as %s: expected speed or time\n", optarg);
				free(opts);
				return LBS_EUSAGE;
			}
			as_time = !strcmp(optarg, "time");
			break;
		case 'T':
			if (!lbs_row_limit_option("lbsim predict", true, optarg, NULL)) {
				free(opts);
				return LBS_EUSAGE;
			}
			break;
		case 'k': {
			char *end;
			errno = 0;
			skip = strtol(optarg, &end, 10);
			if (!*optarg || *end || errno || skip < 0 || skip > 1000000000) {
				fprintf(stderr, "lbsim predict: --skip %s: expected an integer from 0 to 1e9\n", optarg);
				free(opts);
				return LBS_EUSAGE;
			}
			break;
		}
		case 'S': {
			/* predictor.NAME.KEY=VALUE */
			const char *eq = strchr(optarg, '=');
			const char *dot = NULL;
			for (const char *p = optarg; eq && p < eq; p++)
				if (*p == '.')
					dot = p;
			if (!eq || !dot || strncmp(optarg, "predictor.", 10) != 0 || dot < optarg + 11) {
				fprintf(stderr, "lbsim predict: --set %s: expected predictor.NAME.KEY=VALUE\n", optarg);
				free(opts);
				return LBS_EUSAGE;
			}
			lbs_kv *e = &opts[n_opts++];
			lbs_fmt(e->section, sizeof e->section, "%.*s", (int)(dot - optarg), optarg);
			lbs_fmt(e->key, sizeof e->key, "%.*s", (int)(eq - dot - 1), dot + 1);
			lbs_fmt(e->value, sizeof e->value, "%s", eq + 1);
			e->at = (lbs_origin){ "--set", 0 };
			break;
		}
		case 'h': usage(stdout); free(opts); return 0;
		default: usage(stderr); free(opts); return LBS_EUSAGE;
		}
	}
	if (optind + 1 != argc) {
		usage(stderr);
		free(opts);
		return LBS_EUSAGE;
	}
	const char *source = argv[optind];
	/* SIGINT, SIGTERM: exit 130 at once (the scores are written at the
	 * end, with the signals held back). */
	lbs_signals_exit();
	char path[1024];
	long long run = 0;
	if (!format) {
		const char *colon = strrchr(source, ':');
		char *end = NULL;
		errno = 0;
		run = colon ? strtoll(colon + 1, &end, 10) : 0;
		if (colon && errno == ERANGE) {
			fprintf(stderr, "lbsim predict: %s: run id above 2^63 - 1 (no such run)\n", source);
			free(opts);
			return LBS_EUSAGE;
		}
		if (!colon || !*(colon + 1) || *end || run < 1) {
			fprintf(stderr, "lbsim predict: %s: expected RESULTS.db:RUN (e.g. results.db:3), or "
					"--format FORMAT with a trace file\n", source);
			free(opts);
			return LBS_EUSAGE;
		}
		lbs_fmt(path, sizeof path, "%.*s", (int)(colon - source), source);
	} else {
		lbs_fmt(path, sizeof path, "%s", source);
	}
	if (!output)
		output = format ? "results.db" : path;

	lbs_error err = { 0 };
	if (lbs_recorder_check_path("-o", output, &err) != LBS_OK) {
		fprintf(stderr, "lbsim predict: %s\n", err.msg);
		free(opts);
		return LBS_EUSAGE;
	}
	const lbs_predictor_ops *ops[16];
	size_t n_ops = 0;
	/* Every name is checked, and each named once, before any work. */
	for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n_ops == 16 || !(ops[n_ops] = lbs_predictor_find(tok))) {
			char names[256];
			lbs_predictor_names(names, sizeof names);
			fprintf(stderr, "lbsim predict: unknown predictor '%s' (known: %s)\n", tok, names);
			free(opts);
			return LBS_EUSAGE;
		}
		for (size_t k = 0; k < n_ops; k++)
			if (ops[k] == ops[n_ops]) {
				fprintf(stderr, "lbsim predict: -p: predictor '%s' named twice\n", tok);
				free(opts);
				return LBS_EUSAGE;
			}
		n_ops++;
	}
	if (n_ops == 0) {
		fprintf(stderr, "lbsim predict: -p: no predictor named\n");
		free(opts);
		return LBS_EUSAGE;
	}
	for (size_t i = 0; i < n_opts; i++) {
		bool known = false;
		for (size_t k = 0; k < n_ops; k++) {
			char sec[96];
			lbs_fmt(sec, sizeof sec, "predictor.%s", ops[k]->name);
			known |= !strcmp(sec, opts[i].section);
		}
		if (!known) {
			fprintf(stderr, "lbsim predict: --set %s.%s: no such predictor among those compared\n",
				opts[i].section, opts[i].key);
			free(opts);
			return LBS_EUSAGE;
		}
	}
	series_set s;
	lbs_status st = format ? load_trace(path, format, column, as_time, &s, &err)
			       : load_run(path, run, &s, &err);
	size_t longest = 0;
	for (size_t j = 0; st == LBS_OK && j < s.n_series; j++)
		longest = s.start[j + 1] - s.start[j] > longest ? s.start[j + 1] - s.start[j] : longest;
	if (st == LBS_OK && (size_t)skip >= longest)
		st = lbs_error_set(&err, LBS_EUSAGE, "--skip %ld: the longest series of %s has %zu steps: "
				   "nothing would be scored", skip, source, longest);
	lbs_predictor_score rows[16];
	bool show = !quiet && isatty(STDERR_FILENO);
	double t0 = lbs_monotonic_s();
	for (size_t k = 0; st == LBS_OK && k < n_ops; k++) {
		/* This predictor's options: the --set entries for its section. */
		lbs_kv mine[64];
		size_t n_mine = 0;
		char sec[96];
		lbs_fmt(sec, sizeof sec, "predictor.%s", ops[k]->name);
		for (size_t i = 0; i < n_opts && n_mine < 64; i++)
			if (!strcmp(opts[i].section, sec))
				mine[n_mine++] = opts[i];
		lbs_predict_errors acc = { 0 };
		for (size_t j = 0; st == LBS_OK && j < s.n_series; j++) {
			/* On a terminal: which predictor and series, for how long, and
			 * the time left at the rate so far (NARX is slower than the rest:
			 * the estimate grows when it starts). */
			if (show) {
				double done = (double)(k * s.n_series + j) / (double)(n_ops * s.n_series);
				double elapsed = lbs_monotonic_s() - t0;
				fprintf(stderr, "\r\033[Klbsim predict: predictor %zu of %zu (%s), series %zu of %zu, "
					"elapsed %.1f s", k + 1, n_ops, ops[k]->name, j + 1, s.n_series, elapsed);
				if (done > 0)
					fprintf(stderr, ", about %.0f s left", elapsed / done * (1 - done));
			}
			st = lbs_predict_replay(ops[k], mine, n_mine, s.y + s.start[j],
						s.n_exog ? s.x + 2 * s.start[j] : NULL,
						s.start[j + 1] - s.start[j], s.n_exog, (size_t)skip, 1000 + j,
						&acc, &err);
		}
		rows[k] = (lbs_predictor_score){ ops[k]->name, (long)s.n_series, acc.steps, acc.fallbacks,
						 lbs_predict_rmse(&acc), lbs_predict_mae(&acc),
						 lbs_predict_mape(&acc) };
	}
	if (show)
		fprintf(stderr, "\r\033[K");
	bool s_exog = s.n_exog > 0;
	free(s.y);
	free(s.x);
	free(s.start);
	free(opts);
	if (st != LBS_OK) {
		fprintf(stderr, "lbsim predict: %s\n", err.msg);
		return st;
	}
	/* A file this command creates is removed if the scores cannot be
	 * written: a failure leaves no empty file. */
	lbs_recorder rec;
	sigset_t held;
	lbs_signals_hold(&held);
	bool created = access(output, F_OK) != 0 && errno == ENOENT;
	if ((st = lbs_recorder_open(&rec, output, LBS_DETAIL_RUNS, &err)) == LBS_OK)
		st = lbs_signals_pending() ? lbs_error_set(&err, LBS_EINTR, "interrupted")
					   : lbs_recorder_predictor_errors(&rec, source, rows, n_ops, &err);
	long long eval_id = rec.run_id;
	lbs_recorder_close(&rec);
	if (st != LBS_OK && created)
		lbs_recorder_remove(output);
	lbs_signals_release(&held);
	if (st != LBS_OK) {
		fprintf(stderr, "lbsim predict: %s\n", err.msg);
		return st;
	}
	if (!quiet) {
		double base = NAN;
		for (size_t k = 0; k < n_ops; k++)
			if (!strcmp(rows[k].predictor, "ema"))
				base = rows[k].rmse;
		printf("%s: %ld series, one-step-ahead, %s\n", source, rows[0].series,
		       s_exog ? "with cpu_util and mem_util readings" : "no readings recorded");
		printf("%-10s %8s %14s %14s %10s %10s %10s\n", "predictor", "steps", "rmse", "mae", "mape_%",
		       "vs_ema", "fallbacks");
		for (size_t k = 0; k < n_ops; k++)
			printf("%-10s %8ld %14.6g %14.6g %10.3f %10.3f %10ld\n", rows[k].predictor, rows[k].steps,
			       rows[k].rmse, rows[k].mae, rows[k].mape_percent, rows[k].rmse / base,
			       rows[k].fallbacks);
		printf("scores: %s (predictor_errors, eval %lld)\n", output, eval_id);
	}
	return 0;
}
