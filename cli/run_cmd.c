/* SPDX-License-Identifier: GPL-3.0-or-later */
/* `lbsim [run] SCENARIO.ini` and `lbsim keys`: a scenario's runs, one per
 * policy, each recorded in its own transaction, and the summary table. */
#include "cli/run_cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "analysis/interval.h"
#include "analysis/views.h"
#include "util/clock.h"
#include "util/datapath.h"
#include "util/outfile.h"
#include "sim/plugin.h"
#include "sim/recorder.h"
#include "hybrid/hybrid_cmd.h"
#include "hybrid/scenario.h"
#include "sim/run.h"
#include "sim/scenario.h"
#include "sweep/sweep.h"
#include "traces/series.h"
#include "util/units.h"

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
	lbs_signals_watch(&interrupted); /* a wait for the results file's lock gives up on them */
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
		"      --seeds N         run each policy with N seeds, the seed and the N - 1 after it;\n"
		"                        the summary gives each metric's mean and 95%% interval\n"
		"      --until-ci P%%     add seeds (3 at least, --seeds at most, default 50) until the\n"
		"                        95%% interval of every policy's simulated time is within P%%\n"
		"                        of its mean\n"
		"      --exceed T        with seeds: the probability that a run's simulated time\n"
		"                        exceeds T (a time with its unit), with its 95%% interval\n"
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
		"                        columns of the database's runs table (with seeds: the\n"
		"                        columns of the seeds' means and intervals)\n"
		"  -q, --quiet           print nothing but errors\n"
		"      --plugins         load the plugins the scenario names ([policy] plugin,\n"
		"                        [predictor.NAME] plugin): their code runs as yours, so\n"
		"                        they load only with this option or LBSIM_PLUGINS=1\n"
		"      --ops-trace FILE  a hybrid scenario (a [hybrid] section, doc/hybrid.md): write\n"
		"                        every simulated op in the per-operation trace format of\n"
		"                        lbsim whatif, its metadata to FILE.meta.yaml\n"
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
	char policy[160]; /* the policy, and its options that are not the defaults */
	int64_t iterations;
	double sim_time_s, iteration_s, compute_s, aggregation_s, gap_s, samples_per_s, decision_s;
	long long run_id;
	bool target;             /* [convergence] gives the run a target */
	int64_t steps_to_target; /* 0: not reached within the run */
	double time_to_target_s, progress;
} summary;

/* The run's policy and, as the run_variant view has it, the options of
 * its own [policy.NAME] section that are not the defaults, by key:
 * "lbbsp-cpu (predictor=ema)". */
static void summary_label(const lbs_run *run, char *buf, size_t len)
{
	const lbs_policy_ops *p = run->policy;
	char section[LBS_NAME_MAX + 16];
	snprintf(section, sizeof section, "policy.%s", p->name);
	const lbs_kv *kv;
	size_t n;
	lbs_scenario_section_options(run->sc, section, &kv, &n);
	lbs_buf b = { 0 };
	lbs_buf_printf(&b, "%s", p->name);
	const char *last = "";
	for (size_t shown = 0;; shown++) {
		/* the next key after `last` whose value is not the default */
		const lbs_kv *next = NULL;
		for (size_t i = 0; i < n; i++) {
			const char *def = NULL;
			for (size_t k = 0; k < p->n_options; k++)
				if (!strcmp(p->options[k].name, kv[i].key))
					def = p->options[k].def;
			if ((!def || strcmp(def, kv[i].value)) && strcmp(kv[i].key, last) > 0 &&
			    (!next || strcmp(kv[i].key, next->key) < 0))
				next = &kv[i];
		}
		if (!next) {
			if (shown)
				lbs_buf_printf(&b, ")");
			break;
		}
		lbs_buf_printf(&b, "%s%s=%s", shown ? ", " : " (", next->key, next->value);
		last = next->key;
	}
	snprintf(buf, len, "%s", b.failed ? p->name : lbs_buf_str(&b));
	lbs_buf_free(&b);
}

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
	summary_label(run, m.policy, sizeof m.policy);
	m.target = run->sc->convergence.model != LBS_CONV_NONE;
	m.steps_to_target = s->steps_to_target;
	m.time_to_target_s = s->time_to_target_s;
	m.progress = s->progress;
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

/* The [sync] mode, when not BSP, after the scenario's line: ", sync ssp
 * (staleness 2)"; under asp an iteration is an update. */
static void print_sync(const lbs_sync_spec *sy)
{
	switch (sy->mode) {
	case LBS_SYNC_BACKUP:
		printf(", sync backup (%lld backup workers)", (long long)sy->backup_workers);
		break;
	case LBS_SYNC_SSP:
		printf(", sync ssp (staleness %lld)", (long long)sy->staleness);
		break;
	case LBS_SYNC_ASP:
		printf(", sync asp (an iteration is an update)");
		break;
	case LBS_SYNC_DROPCOMPUTE:
		printf(", sync dropcompute (time limit %g s, micro-batches of %lld)", sy->time_limit_s,
		       (long long)sy->micro_batch);
		break;
	case LBS_SYNC_LOCAL_SGD:
		printf(", sync local-sgd (period %lld)", (long long)sy->period);
		break;
	default:
		break;
	}
}

/* Time to target ([convergence]): per run, the step and simulated time
 * that reached it, or how far the run got; the speedup to target is
 * static's time to target over the policy's. */
static void print_targets(const summary *m, size_t n, int w)
{
	if (!n || !m[0].target)
		return;
	double base = 0;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(m[i].policy, "static") && m[i].steps_to_target)
			base = m[i].time_to_target_s;
	printf("time to target ([convergence]):\n");
	for (size_t i = 0; i < n; i++) {
		if (m[i].steps_to_target) {
			char sp[32] = "";
			if (base > 0)
				snprintf(sp, sizeof sp, ", speedup to target %.3f", base / m[i].time_to_target_s);
			printf("  %-*s step %lld, %.4f s%s\n", w, m[i].policy, (long long)m[i].steps_to_target,
			       m[i].time_to_target_s, sp);
		} else {
			printf("  %-*s not reached in %lld steps (%.1f%% of the way)\n", w, m[i].policy,
			       (long long)m[i].iterations, 100 * m[i].progress);
		}
	}
}

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
	printf("scenario %s (%s), seed %lld, %lld worker%s in %zu group%s, global batch %lld",
	       sc->run.name, sc->path, (long long)sc->run.seed, (long long)sc->n_workers,
	       sc->n_workers == 1 ? "" : "s", sc->n_groups, sc->n_groups == 1 ? "" : "s",
	       (long long)sc->run.global_batch);
	print_sync(&sc->sync);
	printf("\n");
	int w = 20; /* the policy column: as wide as its longest label */
	for (size_t i = 0; i < n; i++)
		if ((int)strlen(m[i].policy) > w)
			w = (int)strlen(m[i].policy);
	printf("%-*s %10s %10s %16s %14s %18s %20s %24s %7s %6s\n", w, col[0], col[1], col[2], col[3], col[4],
	       col[5], col[6], col[7], col[8], col[9]);
	for (size_t i = 0; i < n; i++) {
		char speedup[16] = "-";
		if (base > 0 && m[i].sim_time_s > 0)
			snprintf(speedup, sizeof speedup, "%.3f", base / m[i].sim_time_s);
		printf("%-*s %10lld %10.4f %16.6f %14.6f %18.6f %20.6f %24.1f %7s %6lld\n", w, m[i].policy,
		       (long long)m[i].iterations, m[i].sim_time_s, m[i].iteration_s, m[i].compute_s,
		       m[i].aggregation_s, m[i].gap_s, m[i].samples_per_s, speedup, m[i].run_id);
	}
	print_targets(m, n, w);
	printf("results: %s\n", output);
}

/* Over seeds: m[s * n + i] is policy i's run with the s-th seed. */
typedef struct seeds_plan {
	size_t n_seeds;    /* seeds run */
	long long first;   /* the first seed */
	double until_ci;   /* > 0: the target half-width of the 95% interval, relative */
	bool converged;    /* every policy's interval within until_ci */
	double exceed_s;   /* > 0: report P(sim_time_s > exceed_s) */
} seeds_plan;

/* Policy i's simulated times over the seeds, into x. */
static void seed_times(const summary *m, size_t n, size_t n_seeds, size_t i, double *x)
{
	for (size_t s = 0; s < n_seeds; s++)
		x[s] = m[s * n + i].sim_time_s;
}

/* Policy i's speedups over static, paired seed by seed (the static run of
 * the same seed); 0 of them when there is no static run. */
static size_t seed_speedups(const summary *m, size_t n, size_t n_seeds, size_t i, double *x)
{
	size_t b = n;
	for (size_t k = 0; k < n; k++)
		if (!strcmp(m[k].policy, "static"))
			b = k;
	if (b == n)
		return 0;
	for (size_t s = 0; s < n_seeds; s++)
		x[s] = m[s * n + b].sim_time_s / m[s * n + i].sim_time_s;
	return n_seeds;
}

/* Whether every policy's 95% interval of its simulated time is within
 * `rel` of its mean. */
static bool intervals_within(const summary *m, size_t n, size_t n_seeds, double rel, double *x)
{
	for (size_t i = 0; i < n; i++) {
		seed_times(m, n, n_seeds, i, x);
		lbs_interval r = lbs_interval_mean(x, n_seeds);
		if (!(r.half <= rel * r.mean))
			return false;
	}
	return true;
}

static const char *const seeds_columns[] = {
	"policy", "runs", "sim_time_s", "sim_time_s_ci95", "sim_time_s_sd", "mean_iteration_s",
	"mean_iteration_s_ci95", "speedup", "speedup_ci95_low", "speedup_ci95_high", "p_exceed",
	"p_exceed_ci95_low", "p_exceed_ci95_high",
};

/* The summary over seeds: per policy, the mean of each metric with the
 * half-width of its 95% interval (Student's t), the speedup over static
 * paired by seed with its interval, and P(sim_time_s > T) with its Wilson
 * interval. */
static void print_seeds_summary(const lbs_scenario *sc, const summary *m, size_t n, const seeds_plan *pl,
				const char *output, summary_format format)
{
	size_t ns = pl->n_seeds;
	double *x = malloc(ns * sizeof *x);
	if (!x)
		return;
	const char *const *col = seeds_columns;
	size_t ncol = sizeof seeds_columns / sizeof *col;
	if (format == SUMMARY_TABLE) {
		printf("scenario %s (%s), seeds %lld to %lld (%zu run%s of each policy), %lld worker%s, global "
		       "batch %lld\n", sc->run.name, sc->path, pl->first, pl->first + (long long)ns - 1, ns,
		       ns == 1 ? "" : "s", (long long)sc->n_workers, sc->n_workers == 1 ? "" : "s",
		       (long long)sc->run.global_batch);
		if (pl->until_ci > 0)
			printf("%s %g%% of its mean\n", pl->converged ? "converged: every policy's 95%% interval of its "
			       "simulated time within" : "NOT converged: a policy's 95%% interval of its simulated time "
			       "still wider than", 100 * pl->until_ci);
		printf("means over the seeds with their 95%% intervals (Student's t; the speedup over static "
		       "paired by seed)%s\n", pl->exceed_s > 0 ? "; P(sim_time_s > T) with its Wilson interval" : "");
	} else if (format == SUMMARY_CSV) {
		for (size_t c = 0; c < ncol; c++)
			printf("%s%s", c ? "," : "", col[c]);
		printf("\n");
	} else {
		printf("{\"scenario\": ");
		json_string(sc->run.name);
		printf(", \"scenario_path\": ");
		json_string(sc->path);
		printf(", \"first_seed\": %lld, \"seeds\": %zu, \"until_ci\": %.17g, \"converged\": %s, "
		       "\"exceed_s\": %.17g, \"results\": ", pl->first, ns, pl->until_ci,
		       pl->until_ci > 0 ? (pl->converged ? "true" : "false") : "null", pl->exceed_s);
		json_string(output);
		printf(",\n \"policies\": [");
	}
	int w = 20;
	for (size_t i = 0; i < n; i++)
		if ((int)strlen(m[i].policy) > w)
			w = (int)strlen(m[i].policy);
	if (format == SUMMARY_TABLE)
		printf("%-*s %5s %22s %12s %24s %26s%s\n", w, "policy", "runs", "sim_time_s", "sd",
		       "mean_iteration_s", "speedup [95% interval]", pl->exceed_s > 0 ? "     P(sim_time_s > T) [95%]" : "");
	for (size_t i = 0; i < n; i++) {
		seed_times(m, n, ns, i, x);
		lbs_interval t = lbs_interval_mean(x, ns);
		size_t over = 0;
		for (size_t s = 0; s < ns; s++)
			over += x[s] > pl->exceed_s;
		for (size_t s = 0; s < ns; s++)
			x[s] = m[s * n + i].iteration_s;
		lbs_interval it = lbs_interval_mean(x, ns);
		lbs_interval sp = { .n = 0, .mean = NAN, .sd = NAN, .half = NAN };
		if (seed_speedups(m, n, ns, i, x))
			sp = lbs_interval_mean(x, ns);
		double plo = NAN, phi = NAN;
		if (pl->exceed_s > 0)
			lbs_interval_wilson(over, ns, &plo, &phi);
		double pe = pl->exceed_s > 0 ? (double)over / (double)ns : NAN;
		if (format == SUMMARY_CSV) {
			printf("%s,%zu", m[i].policy, ns);
			double v[] = { t.mean, t.half, t.sd, it.mean, it.half, sp.mean, sp.mean - sp.half,
				       sp.mean + sp.half, pe, plo, phi };
			for (size_t c = 0; c < sizeof v / sizeof *v; c++)
				if (isfinite(v[c]))
					printf(",%.17g", v[c]);
				else
					printf(",");
			printf("\n");
		} else if (format == SUMMARY_JSON) {
			printf("%s\n  {\"policy\": ", i ? "," : "");
			json_string(m[i].policy);
			printf(", \"runs\": %zu", ns);
			double v[] = { t.mean, t.half, t.sd, it.mean, it.half, sp.mean, sp.mean - sp.half,
				       sp.mean + sp.half, pe, plo, phi };
			for (size_t c = 0; c < sizeof v / sizeof *v; c++) {
				printf(", \"%s\": ", col[c + 2]);
				if (isfinite(v[c]))
					printf("%.17g", v[c]);
				else
					printf("null");
			}
			printf("}");
		} else {
			char tbuf[64], ibuf[64], sbuf[64], pbuf[64] = "";
			snprintf(tbuf, sizeof tbuf, isfinite(t.half) ? "%.4f +- %.4f" : "%.4f", t.mean, t.half);
			snprintf(ibuf, sizeof ibuf, isfinite(it.half) ? "%.6f +- %.6f" : "%.6f", it.mean, it.half);
			if (!isfinite(sp.mean))
				snprintf(sbuf, sizeof sbuf, "-");
			else if (isfinite(sp.half))
				snprintf(sbuf, sizeof sbuf, "%.3f [%.3f, %.3f]", sp.mean, sp.mean - sp.half,
					 sp.mean + sp.half);
			else
				snprintf(sbuf, sizeof sbuf, "%.3f", sp.mean);
			if (pl->exceed_s > 0)
				snprintf(pbuf, sizeof pbuf, "     %5.3f [%.3f, %.3f]", pe, plo, phi);
			printf("%-*s %5zu %22s %12.4f %24s %26s%s\n", w, m[i].policy, ns, tbuf, t.sd, ibuf, sbuf, pbuf);
		}
	}
	if (format == SUMMARY_TABLE && n && m[0].target) {
		printf("time to target ([convergence]), over the seeds whose run reached it:\n");
		for (size_t i = 0; i < n; i++) {
			size_t k = 0;
			for (size_t s = 0; s < ns; s++)
				if (m[s * n + i].steps_to_target)
					x[k++] = m[s * n + i].time_to_target_s;
			lbs_interval t = lbs_interval_mean(x, k);
			if (!k)
				printf("  %-*s reached in none of %zu runs\n", w, m[i].policy, ns);
			else if (isfinite(t.half))
				printf("  %-*s %.4f +- %.4f s (reached in %zu of %zu runs)\n", w, m[i].policy, t.mean,
				       t.half, k, ns);
			else
				printf("  %-*s %.4f s (reached in %zu of %zu runs)\n", w, m[i].policy, t.mean, k, ns);
		}
	}
	if (format == SUMMARY_JSON)
		printf("\n]}\n");
	else if (format == SUMMARY_TABLE)
		printf("results: %s\n", output);
	free(x);
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

/* Runs one policy and records it in its own transaction, in the file
 * `path` (output, or the temporary that becomes it: fresh, a new file of
 * this process's own, whose journal is kept in memory). */
static lbs_status run_one(const lbs_scenario *sc, const char *policy, size_t k, size_t n, const char *output,
			  const char *path, bool fresh, lbs_detail detail, int64_t *row_budget, bool quiet,
			  summary *out, lbs_error *err)
{
	lbs_run run;
	lbs_recorder rec = { 0 };
	lbs_status st = lbs_run_create(&run, sc, policy, err);
	if (st != LBS_OK)
		return st;
	if ((st = fresh ? lbs_recorder_open_scratch(&rec, path, detail, err)
			: lbs_recorder_open(&rec, path, detail, err)) == LBS_OK) {
		rec.row_budget = *row_budget;
		st = lbs_recorder_begin(&rec, &run, err);
	}
	if (st != LBS_OK && interrupted)
		st = lbs_error_set(err, LBS_EINTR, "%s: interrupted while waiting for its lock (another "
				   "process writes to it)", output);
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
		{ "seeds", required_argument, NULL, 'N' },          { "until-ci", required_argument, NULL, 'U' },
		{ "exceed", required_argument, NULL, 'X' },         { "plugins", no_argument, NULL, 'L' },
		{ "ops-trace", required_argument, NULL, 'O' },
		{ NULL, 0, NULL, 0 },
	};
	const char *output = "results.db", *job_lock = NULL, *ops_trace = NULL;
	pid_t parent = 0;
	int64_t max_rows = LBS_DEFAULT_MAX_ROWS;
	const char **overrides = calloc((size_t)argc + 1, sizeof *overrides);
	char seed_override[64], *policies = NULL;
	size_t n_overrides = 0;
	lbs_detail detail = LBS_DETAIL_ITERATIONS;
	bool quiet = false, baseline = true;
	summary_format format = SUMMARY_TABLE;
	long long n_seeds = 0; /* --seeds; 0: not given */
	double until_ci = 0, exceed_s = 0;
	int c;
	if (!overrides) {
		fprintf(stderr, "lbsim: out of memory\n");
		return LBS_EINTERNAL;
	}
	while ((c = getopt_long(argc, argv, "o:p:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': output = optarg; break;
		case 'O': ops_trace = optarg; break;
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
		case 'N': {
			char *end;
			errno = 0;
			n_seeds = strtoll(optarg, &end, 10);
			if (!*optarg || *end || errno || n_seeds < 1 || n_seeds > 10000) {
				fprintf(stderr, "lbsim: --seeds %s: expected a number of seeds from 1 to 10000\n", optarg);
				free(overrides);
				return LBS_EUSAGE;
			}
			break;
		}
		case 'U': {
			char why[128];
			if (!strchr(optarg, '%') || !lbs_parse_quantity(optarg, LBS_DIM_NONE, &until_ci, why, sizeof why) ||
			    !(until_ci > 0 && until_ci < 1)) {
				fprintf(stderr, "lbsim: --until-ci %s: expected a percentage above 0%% and below 100%%, "
					"e.g. 2%%\n", optarg);
				free(overrides);
				return LBS_EUSAGE;
			}
			break;
		}
		case 'X': {
			char why[128];
			if (!lbs_parse_quantity(optarg, LBS_DIM_TIME, &exceed_s, why, sizeof why) || !(exceed_s > 0)) {
				fprintf(stderr, "lbsim: --exceed %s: expected a time above 0 with its unit, e.g. "
					"'90 s' (%s)\n", optarg, why);
				free(overrides);
				return LBS_EUSAGE;
			}
			break;
		}
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
	if ((n_seeds || until_ci > 0 || exceed_s > 0) && job_lock) {
		fprintf(stderr, "lbsim: --seeds, --until-ci and --exceed do not go with --sweep-job (a sweep "
			"varies seeds itself)\n");
		free(overrides);
		return LBS_EUSAGE;
	}
	if (exceed_s > 0 && !n_seeds && !(until_ci > 0)) {
		fprintf(stderr, "lbsim: --exceed goes with --seeds or --until-ci (a probability over seeds)\n");
		free(overrides);
		return LBS_EUSAGE;
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
	lbs_status st = lbs_datapath_check_named(argv[optind], &file, &err);
	/* a [hybrid] section: the hybrid engine runs it (doc/hybrid.md) */
	if (st == LBS_OK && lbs_hy_is_hybrid(file.path)) {
		catch_signals(on_signal); /* the hybrid run stops and removes what it created */
		int rc;
		if (n_seeds > 1 && ops_trace) {
			fprintf(stderr, "lbsim: --ops-trace goes with one run, not --seeds\n");
			rc = LBS_EUSAGE;
		} else if (until_ci > 0 || exceed_s > 0) {
			fprintf(stderr, "lbsim: --until-ci and --exceed are not made for hybrid scenarios (--seeds is)\n");
			rc = LBS_EUSAGE;
		} else if (n_seeds > 1) {
			lbs_hy_seeds hs;
			rc = lbs_hybrid_run_seeds(file.path, overrides, n_overrides, output, (size_t)n_seeds,
						  &interrupted, &hs);
			if (rc == 0 && !quiet) {
				lbs_interval a = lbs_interval_mean(hs.mean_step_s, hs.n);
				lbs_interval t = lbs_interval_mean(hs.total_s, hs.n);
				printf("%s, policy %s, seeds %lld to %lld: step %.4f s +- %.4f (95%%), %lld steps in "
				       "%.2f s +- %.2f\n", hs.name, hs.policy, (long long)hs.seed0,
				       (long long)(hs.seed0 + (int64_t)hs.n - 1), a.mean, isnan(a.half) ? 0.0 : a.half,
				       (long long)hs.steps, t.mean, isnan(t.half) ? 0.0 : t.half);
			}
			lbs_hy_seeds_free(&hs);
		} else
			rc = lbs_hybrid_run(file.path, overrides, n_overrides, output, ops_trace, quiet, &interrupted);
		free(overrides);
		return rc;
	}
	if (st == LBS_OK && ops_trace) {
		free(overrides);
		fprintf(stderr, "lbsim: --ops-trace: only a hybrid scenario (a [hybrid] section) runs its ops\n");
		return LBS_EUSAGE;
	}
	if (st == LBS_OK)
		st = lbs_scenario_load(&sc, file.path, overrides, n_overrides, &err);
	if (st != LBS_OK) {
		free(overrides);
		fprintf(stderr, "lbsim: %s\n", err.msg);
		return st;
	}
	char list[1024];
	if (policies && strlen(policies) >= sizeof list) {
		fprintf(stderr, "lbsim: --policy: a list of %zu characters (at most %zu)\n", strlen(policies),
			sizeof list - 1);
		lbs_scenario_destroy(&sc);
		free(overrides);
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
		free(overrides);
		return LBS_EUSAGE;
	}
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < i; k++)
			if (!strcmp(names[i], names[k])) {
				fprintf(stderr, "lbsim: --policy %s: policy '%s' named twice\n", policies, names[i]);
				lbs_scenario_destroy(&sc);
				free(overrides);
				return LBS_EUSAGE;
			}
	for (size_t i = 0; i < n; i++) {
		if (policies && !lbs_scenario_policy(&sc, names[i])) {
			char known[512];
			lbs_scenario_policy_names(&sc, known, sizeof known);
			fprintf(stderr, "lbsim: --policy %s: unknown policy '%s' (known: %s)\n", policies,
				names[i], known);
			lbs_scenario_destroy(&sc);
			free(overrides);
			return LBS_EUSAGE;
		}
	}
	if (given == 0) {
		fprintf(stderr, "lbsim: --policy '%s': no policy named\n", policies ? policies : "");
		lbs_scenario_destroy(&sc);
		free(overrides);
		return LBS_EUSAGE;
	}
	/* Everything that can be wrong with the input is found here, for every
	 * policy, before the results file is touched. */
	for (size_t i = 0; i < n; i++) {
		lbs_run run;
		if ((st = lbs_run_create(&run, &sc, names[i], &err)) != LBS_OK) {
			fprintf(stderr, "lbsim: %s\n", err.msg);
			lbs_scenario_destroy(&sc);
			free(overrides);
			return st;
		}
		lbs_run_destroy(&run);
	}
	/* The output-size guard, before the results file is touched: every run
	 * has sc.iterations iterations of sc.n_workers workers (an epoch is
	 * floor(dataset_samples / global_batch) iterations, as the run counts
	 * it). iterations <= 1e9, workers <= 1e6 and runs <= 32: no overflow. */
	int64_t row_budget = -1;
	/* With --until-ci, --seeds is the cap (default 50); 3 seeds at least. */
	size_t seeds_max = n_seeds ? (size_t)n_seeds : until_ci > 0 ? 50 : 1;
	if (until_ci > 0 && seeds_max < 3) {
		fprintf(stderr, "lbsim: --until-ci takes 3 seeds at least (--seeds %zu)\n", seeds_max);
		lbs_scenario_destroy(&sc);
		free(overrides);
		return LBS_EUSAGE;
	}
	if ((unsigned long long)sc.run.seed + seeds_max - 1 > 9007199254740991ULL) {
		fprintf(stderr, "lbsim: --seeds %zu: seeds from %lld pass the largest seed, 2^53 - 1\n", seeds_max,
			(long long)sc.run.seed);
		lbs_scenario_destroy(&sc);
		free(overrides);
		return LBS_EINPUT;
	}
	if (detail == LBS_DETAIL_WORKERS) {
		uint64_t rows = (uint64_t)sc.iterations * (uint64_t)sc.n_workers * n * seeds_max;
		char how[256];
		snprintf(how, sizeof how, "%lld iterations x %lld workers x %zu run%s", (long long)sc.iterations,
			 (long long)sc.n_workers, n * seeds_max, n * seeds_max == 1 ? "" : "s");
		if ((st = lbs_check_worker_rows(rows, max_rows, sc.path, how, &err)) != LBS_OK) {
			fprintf(stderr, "lbsim: %s\n", err.msg);
			lbs_scenario_destroy(&sc);
			free(overrides);
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
			free(overrides);
			return st;
		}
		output = job.tmp;
	}

	summary *m = calloc(n * seeds_max, sizeof *m);
	const char **ovr = calloc(n_overrides + 1, sizeof *ovr);
	double *x = calloc(seeds_max, sizeof *x);
	if (!m || !ovr || !x) {
		fprintf(stderr, "lbsim: out of memory\n");
		free(m);
		free(ovr);
		free(x);
		lbs_scenario_destroy(&sc);
		free(overrides);
		return LBS_EINTERNAL;
	}
	seeds_plan plan = { .first = (long long)sc.run.seed, .until_ci = until_ci, .exceed_s = exceed_s };
	size_t done = 0, total = n * seeds_max;
	/* A new results file is made as a temporary beside it (util/outfile.h)
	 * and linked into place once its first run is in: a refusal, a signal
	 * or a kill leaves no file, or only a stale temporary that the next
	 * command writing it removes. */
	struct stat out_st;
	bool existed = lstat(output, &out_st) == 0 || errno != ENOENT;
	lbs_tmp fresh = { .fd = -1, .slot = -1 };
	if (!existed && !job_lock && (st = lbs_tmp_create(&fresh, output, false, &err)) != LBS_OK)
		fprintf(stderr, "lbsim: %s\n", err.msg);
	char seed_set[64];
	for (size_t sd = 0; sd < seeds_max && st == LBS_OK; sd++) {
		if (sd > 0) {
			/* The next seed: the scenario as given, its seed set last. */
			lbs_scenario_destroy(&sc);
			memcpy(ovr, overrides, n_overrides * sizeof *ovr);
			snprintf(seed_set, sizeof seed_set, "run.seed=%lld", plan.first + (long long)sd);
			ovr[n_overrides] = seed_set;
			if ((st = lbs_scenario_load(&sc, file.path, ovr, n_overrides + 1, &err)) != LBS_OK) {
				fprintf(stderr, "lbsim: %s\n", err.msg);
				break;
			}
		}
		for (size_t i = 0; i < n && st == LBS_OK; i++, done++) {
			bool first = fresh.path[0] != '\0';
			st = run_one(&sc, names[i], done + 1, total, output, first ? fresh.path : output, first, detail,
				     &row_budget, quiet, &m[sd * n + i], &err);
			if (st == LBS_OK && first) {
				/* link, not rename: a file made meanwhile is not
				 * replaced; the run is made again, into that file */
				int fd = open(fresh.path, O_RDONLY | O_CLOEXEC);
				bool synced = fd >= 0 && fsync(fd) == 0, again = false;
				if (fd >= 0)
					close(fd);
				if (!synced)
					st = lbs_error_set(&err, LBS_EIO, "%s: cannot write: %s", fresh.path,
							   strerror(errno));
				else if (link(fresh.path, output) != 0 && !(again = errno == EEXIST))
					st = lbs_error_set(&err, LBS_EIO, "%s: cannot write: %s", output,
							   strerror(errno));
				lbs_tmp_remove(&fresh);
				if (again) {
					i--;
					done--;
				}
			}
			if (st != LBS_OK) {
				fprintf(stderr, "lbsim: %s\n", err.msg);
				if (done && !job_lock)
					fprintf(stderr, "lbsim: the %zu run%s before it %s kept\n", done,
						done == 1 ? "" : "s", done == 1 ? "is" : "are");
			}
		}
		if (st == LBS_OK) {
			plan.n_seeds = sd + 1;
			if (until_ci > 0 && plan.n_seeds >= 3 && intervals_within(m, n, plan.n_seeds, until_ci, x)) {
				plan.converged = true;
				break;
			}
		}
	}
	lbs_tmp_remove(&fresh); /* (a first run that failed) */
	if (job_lock) {
		output = job.output;
		if ((st = lbs_sweep_job_end(&job, st)) != LBS_OK)
			fprintf(stderr, "lbsim: %s: %s\n", output, strerror(errno));
	}
	if (st == LBS_OK && !quiet) {
		if (n_seeds || until_ci > 0)
			print_seeds_summary(&sc, m, n, &plan, output, format);
		else
			print_summary(&sc, m, n, output, format);
	}
	if (st == LBS_OK && until_ci > 0 && !plan.converged)
		fprintf(stderr, "lbsim: --until-ci %g%%: after %zu seeds (the cap: --seeds) an interval is still "
			"wider than that; the summary gives each\n", 100 * until_ci, plan.n_seeds);
	free(m);
	free(ovr);
	free(x);
	lbs_scenario_destroy(&sc);
	free(overrides);
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
	lbs_hy_scenario_document(stdout);
	return 0;
}
