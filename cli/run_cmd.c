/* SPDX-License-Identifier: GPL-3.0-or-later */
/* `lbsim [run] SCENARIO.ini` and `lbsim keys`: a scenario's runs, one per
 * policy, each recorded in its own transaction, and the summary table. */
#include "cli/run_cmd.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "analysis/views.h"
#include "util/clock.h"
#include "util/datapath.h"
#include "sim/plugin.h"
#include "sim/recorder.h"
#include "sim/run.h"
#include "sim/scenario.h"
#include "sweep/sweep.h"
#include "traces/series.h"

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = sig;
}

/* Before anything is written (reading the scenario and its traces, which
 * can take a while): stop at once, there is nothing to roll back. */
static void on_signal_before_output(int sig)
{
	(void)sig;
	_exit(LBS_EINTR);
}

static void catch_signals(void (*handler)(int))
{
	struct sigaction sa = { .sa_handler = handler };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: lbsim [run] SCENARIO.ini|NAME [options]\n"
		"       lbsim sweep SWEEP.ini [-j N] [-o FILE] [--shard K/N]\n"
		"       lbsim merge OUT.db IN.db...\n"
		"       lbsim plot RESULTS.db [--out DIR] [--x KEY] [--by KEYS] [--setting KEY=VALUE]\n"
		"       lbsim export RESULTS.db VIEW\n"
		"       lbsim views RESULTS.db\n"
		"       lbsim report RESULTS.db [-o report.html]\n"
		"       lbsim predict RESULTS.db:RUN | --format FORMAT TRACE [options]\n"
		"       lbsim calibrate (--blas | --cuda) MODEL | --from-table | --fit TIMES.csv | --list [options]\n"
		"       lbsim whatif TRACE.csv[.gz] --meta META.yaml [-o FILE]\n"
		"       lbsim testbed SCENARIO.ini [--policy LIST] [-o FILE]\n"
		"       lbsim validate SCENARIO.ini [--policy LIST] [--calibrate FILE] [-o FILE]\n"
		"       lbsim keys\n"
		"       lbsim scenarios\n"
		"       lbsim --help | --version\n"
		"\n"
		"Simulates synchronous data-parallel training on the cluster SCENARIO.ini describes,\n"
		"prints a summary and appends the run to a results database.\n"
		"\n"
		"Options:\n"
		"  -o, --output FILE     results database (default: results.db)\n"
		"      --seed N          seed of the run (overrides [run] seed)\n"
		"      --detail LEVEL    what to record: runs, iterations (default) or workers\n"
		"                        (one row per worker per iteration)\n"
		"      --max-rows N      refuse --detail workers when the runs would write more\n"
		"                        than N rows to worker_iterations (default 20000000; 0: no limit)\n"
		"      --max-trace-rows N  refuse a trace file that would keep more than N rows\n"
		"                        (default 100000000; 0: no limit)\n"
		"      --set S.K=VALUE   override key K of section S, e.g. --set network.bandwidth='10 Gbit/s';\n"
		"                        repeatable; validated like the file; an empty VALUE removes the key\n"
		"  -p, --policy LIST     run these policies (comma-separated) instead of [policy] name;\n"
		"                        each is its own run, compared with static in the summary\n"
		"      --no-baseline     do not add a static run when the policies do not include it\n"
		"      --format F        the summary as a table (default), csv or json, with the\n"
		"                        columns of the database's runs table\n"
		"  -q, --quiet           print nothing but errors\n"
		"      --plugins         load the plugins the scenario names ([policy] plugin,\n"
		"                        [predictor.NAME] plugin): their code runs as yours, so\n"
		"                        they load only with this option or LBSIM_PLUGINS=1\n"
		"      --sweep-job LOCK  (a sweep job's protocol) write the output\n"
		"                        whole or not at all: into a temporary file put in place when\n"
		"                        every run completed; nothing if the output exists; hold a\n"
		"                        shared lock on LOCK while running\n"
		"      --parent PID      (with --sweep-job) stop when the parent, process PID, dies\n"
		"  -h, --help            this help\n"
		"  -V, --version         version\n"
		"\n"
		"Commands:\n"
		"  sweep                 run every point of a sweep file in parallel into one database\n"
		"  merge                 copy the runs of results databases into one\n"
		"  plot                  render the plots of analysis/ as PNG, SVG or PDF with gnuplot\n"
		"  export                write a view or table of a results database as CSV\n"
		"  views                 store the analysis views in a results database\n"
		"  report                write a results database as one self-contained HTML file\n"
		"  predict               replay a run's measured speeds through the predictors and\n"
		"                        score them (lbsim predict --help)\n"
		"  calibrate             measure or fit cost profiles (lbsim calibrate --help)\n"
		"  whatif                what-if straggler analysis of a per-operation trace of\n"
		"                        hybrid-parallel training (lbsim whatif --help)\n"
		"  testbed               run the scenario for real: worker processes under cgroup\n"
		"                        CPU quotas, as root (lbsim testbed --help)\n"
		"  validate              simulate and run on the testbed, compare (lbsim validate --help)\n"
		"  keys                  print the reference of every scenario key (Markdown)\n"
		"  scenarios             list the installed scenarios (lbsim run NAME runs one)\n"
		"\n"
		"Exit codes: 0 success, 2 usage, 3 bad input, 4 results not written (I/O),\n"
		"5 internal error, 6 the testbed cannot run here, 7 validate: outside the\n"
		"tolerance, 130 interrupted. See lbsim(1).\n");
}

/* What a usage error prints: the synopsis of run, and where the rest is. */
static void short_usage(void)
{
	fprintf(stderr, "Usage: lbsim [run] SCENARIO.ini [-o FILE] [--seed N] [--set S.K=VALUE]... "
		"[--policy LIST] [options]\n"
		"see lbsim --help\n");
}

typedef struct progress {
	lbs_recorder *rec;   /* NULL: nothing recorded */
	bool show;           /* stderr is a terminal and not --quiet */
	double next_s;       /* wall time of the next progress line */
	double start_s;      /* wall time the run started */
	int64_t total;
	size_t k, n;         /* this is policy k of n (from 1) */
	const char *policy;
} progress;

/* "1.5 s", "2 min 05 s", "1 h 02 min": a wall time for the progress line. */
static const char *human_s(double s, char *buf, size_t len)
{
	if (s < 60)
		snprintf(buf, len, "%.1f s", s);
	else if (s < 3600)
		snprintf(buf, len, "%d min %02d s", (int)(s / 60), (int)s % 60);
	else
		snprintf(buf, len, "%d h %02d min", (int)(s / 3600), (int)(s / 60) % 60);
	return buf;
}

static lbs_status on_iteration(void *ctx, const lbs_iteration_record *it, lbs_error *err)
{
	progress *p = ctx;
	if (p->rec) {
		lbs_status st = lbs_recorder_iteration(p->rec, it, err);
		if (st != LBS_OK)
			return st;
	}
	if (p->show && (it->iteration & 255) == 0) {
		double now = lbs_monotonic_s();
		if (now >= p->next_s) {
			/* The time left: this run's rate, for the rest of it and for
			 * each policy still to run (as long as this one). */
			double elapsed = now - p->start_s, done = (double)it->iteration / (double)p->total;
			char e[32], left[64] = "";
			if (done > 0.02 || elapsed > 2) {
				char l[32];
				double per_run = done > 0 ? elapsed / done : 0;
				snprintf(left, sizeof left, ", about %s left",
					 human_s(per_run * (1 - done) + per_run * (double)(p->n - p->k), l, sizeof l));
			}
			fprintf(stderr, "\r\033[Klbsim: policy %zu of %zu (%s): iteration %lld/%lld (%.0f%%), "
				"simulated %.1f s, elapsed %s%s", p->k, p->n, p->policy, (long long)it->iteration,
				(long long)p->total, 100.0 * done, it->end_s, human_s(elapsed, e, sizeof e), left);
			p->next_s = now + 0.25;
		}
	}
	return LBS_OK;
}

/* One line of the summary table: a finished run's numbers. */
typedef struct summary {
	char policy[64];
	int64_t iterations;
	double sim_time_s, iteration_s, compute_s, aggregation_s, gap_s, samples_per_s, decision_s;
	long long run_id;
} summary;

static summary summarise(const lbs_run *run, const lbs_recorder *rec)
{
	const lbs_run_stats *s = &run->stats;
	double n = s->iterations ? (double)s->iterations : 1.0;
	summary m = {
		.iterations = s->iterations,
		.sim_time_s = s->sim_time_s,
		.iteration_s = s->sum_iteration_s / n,
		.compute_s = s->sum_compute_s / n,
		.aggregation_s = s->sum_aggregation_s / n,
		.gap_s = s->sum_gap_s / n,
		.samples_per_s = s->sim_time_s > 0 ? (double)s->samples / s->sim_time_s : 0.0,
		.decision_s = s->sum_decision_s / n,
		.run_id = rec ? (long long)rec->run_id : 0,
	};
	snprintf(m.policy, sizeof m.policy, "%s", run->policy->name);
	return m;
}

/* The summary's columns, named as in the runs table of the database. */
static const char *const summary_columns[] = {
	"policy", "iterations", "sim_time_s", "mean_iteration_s", "mean_compute_s", "mean_aggregation_s",
	"mean_straggler_gap_s", "throughput_samples_per_s", "speedup", "run_id",
};

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++)
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", (unsigned char)*s);
		else
			putchar(*s);
	putchar('"');
}

typedef enum summary_format { SUMMARY_TABLE, SUMMARY_CSV, SUMMARY_JSON } summary_format;

/* The table (or CSV, or JSON): speedup is the static run's simulated time
 * over this one's, for the same scenario, seed and amount of training. */
static void print_summary(const lbs_scenario *sc, const summary *m, size_t n, const char *output,
			  summary_format format)
{
	double base = 0;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(m[i].policy, "static"))
			base = m[i].sim_time_s;
	const char *const *col = summary_columns;
	if (format == SUMMARY_CSV) {
		for (size_t c = 0; c < sizeof summary_columns / sizeof *col; c++)
			printf("%s%s", c ? "," : "", col[c]);
		printf("\n");
		for (size_t i = 0; i < n; i++) {
			printf("%s,%lld,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,", m[i].policy, (long long)m[i].iterations,
			       m[i].sim_time_s, m[i].iteration_s, m[i].compute_s, m[i].aggregation_s, m[i].gap_s,
			       m[i].samples_per_s);
			if (base > 0 && m[i].sim_time_s > 0)
				printf("%.17g", base / m[i].sim_time_s);
			printf(",%lld\n", m[i].run_id);
		}
		return;
	}
	if (format == SUMMARY_JSON) {
		printf("{\"scenario\": ");
		json_string(sc->run.name);
		printf(", \"scenario_path\": ");
		json_string(sc->path);
		printf(", \"seed\": %lld, \"n_workers\": %lld, \"global_batch_samples\": %lld, \"results\": ",
		       (long long)sc->run.seed, (long long)sc->n_workers, (long long)sc->run.global_batch);
		json_string(output);
		printf(",\n \"runs\": [");
		for (size_t i = 0; i < n; i++) {
			printf("%s\n  {\"%s\": \"%s\", \"%s\": %lld, \"%s\": %.17g, \"%s\": %.17g, \"%s\": %.17g, "
			       "\"%s\": %.17g, \"%s\": %.17g, \"%s\": %.17g, \"%s\": ", i ? "," : "", col[0],
			       m[i].policy, col[1], (long long)m[i].iterations, col[2], m[i].sim_time_s, col[3],
			       m[i].iteration_s, col[4], m[i].compute_s, col[5], m[i].aggregation_s, col[6],
			       m[i].gap_s, col[7], m[i].samples_per_s, col[8]);
			if (base > 0 && m[i].sim_time_s > 0)
				printf("%.17g", base / m[i].sim_time_s);
			else
				printf("null");
			printf(", \"%s\": %lld}", col[9], m[i].run_id);
		}
		printf("\n]}\n");
		return;
	}
	printf("scenario %s (%s), seed %lld, %lld worker%s in %zu group%s, global batch %lld\n",
	       sc->run.name, sc->path, (long long)sc->run.seed, (long long)sc->n_workers,
	       sc->n_workers == 1 ? "" : "s", sc->n_groups, sc->n_groups == 1 ? "" : "s",
	       (long long)sc->run.global_batch);
	printf("%-20s %10s %10s %16s %14s %18s %20s %24s %7s %6s\n", col[0], col[1], col[2], col[3], col[4],
	       col[5], col[6], col[7], col[8], col[9]);
	for (size_t i = 0; i < n; i++) {
		char speedup[16] = "-";
		if (base > 0 && m[i].sim_time_s > 0)
			snprintf(speedup, sizeof speedup, "%.3f", base / m[i].sim_time_s);
		printf("%-20s %10lld %10.4f %16.6f %14.6f %18.6f %20.6f %24.1f %7s %6lld\n", m[i].policy,
		       (long long)m[i].iterations, m[i].sim_time_s, m[i].iteration_s, m[i].compute_s,
		       m[i].aggregation_s, m[i].gap_s, m[i].samples_per_s, speedup, m[i].run_id);
	}
	printf("results: %s\n", output);
}

/* Splits "a,b,c" into names (at most max are kept); adds "static" first
 * when it is missing and a baseline is wanted. Returns the count of runs,
 * which is more than max when they do not fit; *given is how many the list
 * itself named. */
static size_t policy_list(char *list, bool baseline, const char **names, size_t max, size_t *given)
{
	size_t n = 0;
	bool has_static = false;
	for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n < max)
			names[n] = tok;
		n++;
		has_static |= !strcmp(tok, "static");
	}
	*given = n;
	if (baseline && !has_static && n + 1 > max)
		return n + 1;
	if (baseline && !has_static && n < max) {
		memmove(names + 1, names, n * sizeof *names);
		names[0] = "static";
		n++;
	}
	return n;
}

/* Runs one policy and records it in its own transaction. */
static lbs_status run_one(const lbs_scenario *sc, const char *policy, size_t k, size_t n, const char *output,
			  lbs_detail detail, int64_t *row_budget, bool quiet, summary *out, lbs_error *err)
{
	lbs_run run;
	lbs_recorder rec = { 0 };
	lbs_status st = lbs_run_create(&run, sc, policy, err);
	if (st != LBS_OK)
		return st;
	if ((st = lbs_recorder_open(&rec, output, detail, err)) == LBS_OK) {
		rec.row_budget = *row_budget;
		st = lbs_recorder_begin(&rec, &run, err);
	}
	double t0 = lbs_monotonic_s();
	progress p = { .rec = &rec, .show = !quiet && isatty(STDERR_FILENO), .total = sc->iterations,
		       .start_s = t0, .k = k, .n = n, .policy = policy };
	if (st == LBS_OK)
		st = lbs_run_execute(&run, on_iteration, &p, &interrupted, err);
	double wall_s = lbs_monotonic_s() - t0;
	if (p.show)
		fprintf(stderr, "\r\033[K");
	if (st == LBS_OK)
		st = lbs_recorder_commit(&rec, &run, wall_s, err);
	if (st == LBS_OK && (st = lbs_views_store(rec.db, output, err)) != LBS_OK)
		fprintf(stderr, "lbsim: the %s run is recorded in %s, without its analysis views "
			"(`lbsim views %s` adds them)\n", policy, output, output);
	if (st == LBS_OK) {
		*out = summarise(&run, &rec);
		*row_budget = rec.row_budget;
	} else if (rec.db) {
		lbs_recorder_abort(&rec);
		lbs_error_prefix(err, "policy %s", policy);
		fprintf(stderr, "lbsim: the %s run was rolled back: nothing of it is in %s\n", policy, output);
	}
	lbs_recorder_close(&rec);
	lbs_run_destroy(&run);
	return st;
}

int lbs_run_command(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },   { "seed", required_argument, NULL, 's' },
		{ "detail", required_argument, NULL, 'd' },   { "set", required_argument, NULL, 'S' },
		{ "policy", required_argument, NULL, 'p' },   { "no-baseline", no_argument, NULL, 'B' },
		{ "quiet", no_argument, NULL, 'q' },          { "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },        { "max-rows", required_argument, NULL, 'M' },
		{ "max-trace-rows", required_argument, NULL, 'T' }, { "sweep-job", required_argument, NULL, 'J' },
		{ "parent", required_argument, NULL, 'P' },         { "format", required_argument, NULL, 'F' },
		{ "plugins", no_argument, NULL, 'L' },
		{ NULL, 0, NULL, 0 },
	};
	const char *output = "results.db", *job_lock = NULL;
	pid_t parent = 0;
	int64_t max_rows = LBS_DEFAULT_MAX_ROWS;
	const char **overrides = calloc((size_t)argc + 1, sizeof *overrides);
	char seed_override[64], *policies = NULL;
	size_t n_overrides = 0;
	lbs_detail detail = LBS_DETAIL_ITERATIONS;
	bool quiet = false, baseline = true;
	summary_format format = SUMMARY_TABLE;
	int c;
	if (!overrides) {
		fprintf(stderr, "lbsim: out of memory\n");
		return LBS_EINTERNAL;
	}
	while ((c = getopt_long(argc, argv, "o:p:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': output = optarg; break;
		case 's': {
			char *end;
			errno = 0;
			long long v = strtoll(optarg, &end, 10);
			if (!*optarg || *end || v < 0 || (errno == ERANGE && v < 0)) {
				fprintf(stderr, "lbsim: --seed %s: expected an integer from 0 to 2^53 - 1\n", optarg);
				free(overrides);
				return LBS_EUSAGE;
			}
			/* An integer, but out of the seed's range: bad input, as
			 * [run] seed would be (lbsim(1)). */
			if (errno == ERANGE || v > 9007199254740991LL) {
				fprintf(stderr, "lbsim: --seed %s: above the largest seed, 2^53 - 1 = "
					"9007199254740991\n", optarg);
				free(overrides);
				return LBS_EINPUT;
			}
			snprintf(seed_override, sizeof seed_override, "run.seed=%lld", v);
			overrides[n_overrides++] = seed_override;
			break;
		}
		case 'd': {
			int d = lbs_choice_index(LBS_DETAIL_CHOICES, optarg);
			if (d < 0) {
				fprintf(stderr, "lbsim: --detail %s: expected runs, iterations or workers\n", optarg);
				free(overrides);
				return LBS_EUSAGE;
			}
			detail = (lbs_detail)d;
			break;
		}
		case 'M':
		case 'T':
			if (!lbs_row_limit_option("lbsim", c == 'T', optarg, &max_rows)) {
				free(overrides);
				return LBS_EUSAGE;
			}
			break;
		case 'S': overrides[n_overrides++] = optarg; break;
		case 'p': policies = optarg; break;
		case 'J': job_lock = optarg; break;
		case 'P': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (!*optarg || *end || v <= 0) {
				fprintf(stderr, "lbsim: --parent %s: expected a process id\n", optarg);
				free(overrides);
				return LBS_EUSAGE;
			}
			parent = (pid_t)v;
			break;
		}
		case 'B': baseline = false; break;
		case 'L': lbs_plugins_permit(1); break;
		case 'F':
			if (!strcmp(optarg, "table") || !strcmp(optarg, "csv") || !strcmp(optarg, "json")) {
				format = !strcmp(optarg, "csv") ? SUMMARY_CSV : !strcmp(optarg, "json") ? SUMMARY_JSON
													: SUMMARY_TABLE;
				break;
			}
			fprintf(stderr, "lbsim: --format %s: expected table, csv or json\n", optarg);
			free(overrides);
			return LBS_EUSAGE;
		case 'q': quiet = true; break;
		case 'h': usage(stdout); free(overrides); return 0;
		case 'V': printf("lbsim %s\n", PACKAGE_VERSION); free(overrides); return 0;
		default: short_usage(); free(overrides); return LBS_EUSAGE;
		}
	}
	if (parent && !job_lock) {
		fprintf(stderr, "lbsim: --parent goes with --sweep-job\n");
		free(overrides);
		return LBS_EUSAGE;
	}
	if (optind + 1 != argc) {
		fprintf(stderr, optind == argc ? "lbsim: no scenario given\n" : "lbsim: one scenario at a time\n");
		short_usage();
		free(overrides);
		return LBS_EUSAGE;
	}
	lbs_error err = { 0 };
	if (lbs_recorder_check_path("-o", output, &err) != LBS_OK) {
		fprintf(stderr, "lbsim: %s\n", err.msg);
		free(overrides);
		return LBS_EUSAGE;
	}
	/* --seed is applied after every --set, as documented. */
	for (size_t i = 0; i + 1 < n_overrides; i++)
		if (overrides[i] == seed_override) {
			memmove(&overrides[i], &overrides[i + 1], (n_overrides - i - 1) * sizeof *overrides);
			overrides[n_overrides - 1] = seed_override;
			break;
		}

	catch_signals(on_signal_before_output);
	lbs_scenario sc;
	lbs_datapath file; /* `lbsim run default`: an installed scenario */
	lbs_datapath_scenario(argv[optind], &file);
	lbs_status st = lbs_scenario_load(&sc, file.path, overrides, n_overrides, &err);
	free(overrides);
	if (st != LBS_OK) {
		fprintf(stderr, "lbsim: %s\n", err.msg);
		return st;
	}
	char list[1024];
	if (policies && strlen(policies) >= sizeof list) {
		fprintf(stderr, "lbsim: --policy: a list of %zu characters (at most %zu)\n", strlen(policies),
			sizeof list - 1);
		lbs_scenario_destroy(&sc);
		return LBS_EUSAGE;
	}
	snprintf(list, sizeof list, "%s", policies ? policies : sc.policy.name);
	const char *names[32];
	size_t given;
	size_t n = policy_list(list, baseline, names, 32, &given);
	if (n > 32) {
		fprintf(stderr, "lbsim: --policy: %zu runs (%zu policies%s), more than the 32 one command "
			"runs\n", n, given, n > given ? " and the static baseline" : "");
		lbs_scenario_destroy(&sc);
		return LBS_EUSAGE;
	}
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < i; k++)
			if (!strcmp(names[i], names[k])) {
				fprintf(stderr, "lbsim: --policy %s: policy '%s' named twice\n", policies, names[i]);
				lbs_scenario_destroy(&sc);
				return LBS_EUSAGE;
			}
	for (size_t i = 0; i < n; i++) {
		if (policies && !lbs_scenario_policy(&sc, names[i])) {
			char known[512];
			lbs_scenario_policy_names(&sc, known, sizeof known);
			fprintf(stderr, "lbsim: --policy %s: unknown policy '%s' (known: %s)\n", policies,
				names[i], known);
			lbs_scenario_destroy(&sc);
			return LBS_EUSAGE;
		}
	}
	if (given == 0) {
		fprintf(stderr, "lbsim: --policy '%s': no policy named\n", policies ? policies : "");
		lbs_scenario_destroy(&sc);
		return LBS_EUSAGE;
	}
	/* Everything that can be wrong with the input is found here, for every
	 * policy, before the results file is touched. */
	for (size_t i = 0; i < n; i++) {
		lbs_run run;
		if ((st = lbs_run_create(&run, &sc, names[i], &err)) != LBS_OK) {
			fprintf(stderr, "lbsim: %s\n", err.msg);
			lbs_scenario_destroy(&sc);
			return st;
		}
		lbs_run_destroy(&run);
	}
	/* The output-size guard, before the results file is touched: every run
	 * has sc.iterations iterations of sc.n_workers workers (an epoch is
	 * floor(dataset_samples / global_batch) iterations, as the run counts
	 * it). iterations <= 1e9, workers <= 1e6 and runs <= 32: no overflow. */
	int64_t row_budget = -1;
	if (detail == LBS_DETAIL_WORKERS) {
		uint64_t rows = (uint64_t)sc.iterations * (uint64_t)sc.n_workers * n;
		char how[256];
		snprintf(how, sizeof how, "%lld iterations x %lld workers x %zu run%s", (long long)sc.iterations,
			 (long long)sc.n_workers, n, n == 1 ? "" : "s");
		if ((st = lbs_check_worker_rows(rows, max_rows, sc.path, how, &err)) != LBS_OK) {
			fprintf(stderr, "lbsim: %s\n", err.msg);
			lbs_scenario_destroy(&sc);
			return st;
		}
		row_budget = max_rows > 0 ? max_rows : -1;
	}
	catch_signals(on_signal);

	lbs_sweep_job job = { .lock_fd = -1 };
	if (job_lock) {
		if ((st = lbs_sweep_job_begin(&job, job_lock, parent, output, &interrupted, &err)) != LBS_OK || job.done) {
			if (st != LBS_OK)
				fprintf(stderr, "lbsim: %s\n", err.msg);
			lbs_sweep_job_end(&job, st);
			lbs_scenario_destroy(&sc);
			return st;
		}
		output = job.tmp;
	}

	summary m[32];
	size_t done = 0;
	/* A results file this command made and no run got into is removed. */
	bool existed = access(output, F_OK) == 0;
	for (; done < n && st == LBS_OK; done++)
		if ((st = run_one(&sc, names[done], done + 1, n, output, detail, &row_budget, quiet, &m[done], &err)) != LBS_OK) {
			fprintf(stderr, "lbsim: %s\n", err.msg);
			if (done && !job_lock)
				fprintf(stderr, "lbsim: the %zu run%s before it %s kept\n", done,
					done == 1 ? "" : "s", done == 1 ? "is" : "are");
			else if (!done && !existed && !job_lock)
				lbs_recorder_remove(output);
		}
	if (job_lock) {
		output = job.output;
		if ((st = lbs_sweep_job_end(&job, st)) != LBS_OK)
			fprintf(stderr, "lbsim: %s: %s\n", output, strerror(errno));
	}
	if (st == LBS_OK && !quiet)
		print_summary(&sc, m, n, output, format);
	lbs_scenario_destroy(&sc);
	return st;
}

int lbs_keys_command(int argc, char **argv)
{
	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "lbsim: keys takes no arguments\n");
		return LBS_EUSAGE;
	}
	lbs_scenario_document(stdout);
	return 0;
}
