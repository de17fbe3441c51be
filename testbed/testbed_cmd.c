/* SPDX-License-Identifier: GPL-3.0-or-later */
/* `lbsim testbed` and `lbsim validate`. */
#include "testbed/testbed_cmd.h"

#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/profile.h"
#include "sim/plugin.h"
#include "sim/recorder.h"
#include "sim/run.h"
#include "sim/scenario.h"
#include "testbed/testbed.h"
#include "util/clock.h"
#include "util/units.h"

#define MAX_POLICIES 32
#define MAX_REPEATS 20
#define MAX_SIM_SEEDS 1000

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = sig;
}

static void usage(FILE *out, bool validate)
{
	if (validate)
		fprintf(out,
			"Usage: lbsim validate SCENARIO.ini [--policy LIST] [--sync LIST] [--repeat N] [--tolerance T]\n"
			"                      [--calibrate FILE] [--sim-seeds N] [--sim-noise SIGMA]\n"
			"                      [--set S.K=V] [--seed N] [-o FILE] [-q]\n"
			"\n"
			"Simulates the scenario and runs it on the testbed (lbsim testbed), N times per\n"
			"policy, then prints per policy the simulated and measured mean iteration time,\n"
			"speedup over static (measured: mean and standard deviation over the repeats) and\n"
			"the per-iteration relative error of the simulation (mean, p95), and stores the\n"
			"comparison in the validations table (doc/validation.md).\n"
			"\n"
			"Options:\n"
			"  -p, --policy LIST     policies, comma-separated (static is added as the baseline)\n"
			"      --repeat N        testbed runs per policy (default 3)\n"
			"      --tolerance T     fail (exit 7) when a simulated speedup differs from the\n"
			"                        measured one by more than T relative (e.g. 5%%), or, with\n"
			"                        'auto', by more than max(5%%, 3 x the relative standard\n"
			"                        deviation of the measured speedup over the repeats)\n"
			"      --set S.K=VALUE   override a scenario key (repeatable)\n"
			"      --seed N          seed of both runs\n"
			"      --calibrate FILE  first measure the network's cost profile on this machine\n"
			"                        (lbsim calibrate --blas, in a testbed worker's conditions)\n"
			"                        into FILE, and give it to every worker group; then what\n"
			"                        time-sharing a core costs (printed)\n"
			"      --timeshare-refill  with --calibrate: give the simulation that cost\n"
			"                        (timeshare_refill: the rate a worker got under a quota,\n"
			"                        in wall time; doc/validation.md)\n"
			"      --measured-cost   simulate each batch's measured time (profile_cost =\n"
			"                        measured) instead of the profile's fitted line\n"
			"      --worker KIND     the testbed's workers: blas (default) or torch, real\n"
			"                        PyTorch training (testbed.worker; needs python3-torch)\n"
			"      --sync LIST       compare [sync] modes too, each with every policy it runs\n"
			"                        (torch): bsp, asp, ssp:S, backup:K, local-sgd:H,\n"
			"                        dropcompute[:MICRO[:LIMIT[:drop|finish]]], comma-separated\n"
			"                        (time to target ranks them all)\n"
			"      --sim-seeds N     with a time to target: simulate each row N times (seeds\n"
			"                        SEED to SEED + N - 1), each iteration's compute drawn\n"
			"                        with the measured noise, and compare the ensemble's mean\n"
			"                        and sd with the measured ones (default 10; 1: the one\n"
			"                        noise-free run)\n"
			"      --sim-noise SIGMA the ensemble's noise: the relative sd of an iteration's\n"
			"                        compute (lognormal), 'auto' (default: from each group's\n"
			"                        profile [spread], doc/validation.md) or 'none'\n"
			"      --exchange-fixed  torch: simulate the exchange measured without quotas at\n"
			"                        its own pace, not on each worker's availability\n"
			"      --exchange-wall   torch: simulate the exchange's measured wall time, not\n"
			"                        the CPU time a worker (the median) spent in it\n"
			"      --resize          measure what changing a batch costs (resize_cost,\n"
			"                        new_batch_cost) and simulate it (the default for torch)\n"
			"      --no-resize       do not (torch)\n"
			"  -o, --output FILE     results database (default: validation.db)\n"
			"      --plugins         load the plugins the scenario names (as root: their code\n"
			"                        runs as root); without it or LBSIM_PLUGINS=1, refused\n"
			"  -q, --quiet           print nothing but errors and misses\n"
			"  -h, --help            this help\n"
			"\n"
			"Exit codes: 0 success, 2 usage, 3 bad input or not emulated, 4 results not\n"
			"written, 5 internal error, 6 the testbed cannot run here (not root, no cgroup\n"
			"cpu controller; for a network, no iproute2 or network namespaces), 7 a speedup\n"
			"outside the tolerance, 130 interrupted.\n");
	else
		fprintf(out,
			"Usage: lbsim testbed SCENARIO.ini [--policy LIST] [--set S.K=V] [--seed N]\n"
			"                     [-o FILE] [--detail LEVEL] [-q]\n"
			"\n"
			"Runs the scenario for real on this machine: one worker process per simulated\n"
			"worker running the model's GEMMs under a cgroup CPU quota that follows its\n"
			"availability, the scenario's policy at every barrier; records each policy's\n"
			"run in the results database with runs.mode = 'measured' (doc/validation.md).\n"
			"A ring or parameter-server network is exchanged for real over tc-shaped links\n"
			"between network namespaces (needs iproute2).\n"
			"\n"
			"Options:\n"
			"  -p, --policy LIST     policies, comma-separated (static is added as the baseline)\n"
			"      --set S.K=VALUE   override a scenario key (repeatable)\n"
			"      --seed N          seed of the run\n"
			"      --calibrate FILE  first measure the network's cost profile here into FILE\n"
			"                        and give it to every worker group\n"
			"      --worker KIND     the workers: blas (default), lbsim's GEMMs, or torch,\n"
			"                        real PyTorch training (testbed.worker; python3-torch)\n"
			"  -o, --output FILE     results database (default: measured.db)\n"
			"      --detail LEVEL    runs, iterations (default) or workers\n"
			"      --plugins         load the plugins the scenario names (as root: their code\n"
			"                        runs as root); without it or LBSIM_PLUGINS=1, refused\n"
			"  -q, --quiet           print nothing but errors\n"
			"  -h, --help            this help\n"
			"\n"
			"Exit codes: 0 success, 2 usage, 3 bad input or not emulated, 4 results not\n"
			"written, 5 internal error, 6 the testbed cannot run here (not root, no cgroup\n"
			"cpu controller; for a network, no iproute2 or network namespaces), 130\n"
			"interrupted.\n");
}

/* What one run left for the comparison: its iteration times and batches. */
typedef struct trail {
	lbs_recorder *rec;
	size_t n;           /* workers */
	int64_t cap, count; /* iterations */
	double *iteration_s;
	int64_t *batch;     /* count x n */
	double mean_s;
	long long run_id;
	int64_t steps_to_target; /* 0: not reached (or no target) */
	double time_to_target_s;
} trail;

static lbs_status on_iteration(void *ctx, const lbs_iteration_record *it, lbs_error *err)
{
	trail *t = ctx;
	lbs_status st = t->rec ? lbs_recorder_iteration(t->rec, it, err) : LBS_OK;
	if (st == LBS_OK && t->count < t->cap) {
		t->iteration_s[t->count] = it->end_s - it->start_s;
		memcpy(t->batch + (size_t)t->count * t->n, it->planned, t->n * sizeof *t->batch);
		t->count++;
	}
	return st;
}

static void trail_free(trail *t)
{
	free(t->iteration_s);
	free(t->batch);
	memset(t, 0, sizeof *t);
}

/* One run of `policy`, simulated or measured, recorded in `output`. */
static lbs_status run_one(const lbs_scenario *sc, const char *policy, bool measured, const char *output,
			  lbs_detail detail, trail *t, lbs_error *err)
{
	lbs_run run;
	lbs_recorder rec = { 0 };
	memset(t, 0, sizeof *t);
	lbs_status st = lbs_run_create(&run, sc, policy, err);
	if (st != LBS_OK)
		return st;
	t->n = run.n;
	t->cap = sc->iterations;
	if (!(t->iteration_s = lbs_calloc((size_t)t->cap, sizeof *t->iteration_s, err)) ||
	    !(t->batch = lbs_calloc((size_t)t->cap * run.n, sizeof *t->batch, err))) {
		lbs_run_destroy(&run);
		trail_free(t);
		return LBS_EINTERNAL;
	}
	if ((st = lbs_recorder_open(&rec, output, detail, err)) == LBS_OK) {
		rec.measured = measured;
		st = lbs_recorder_begin(&rec, &run, err);
	}
	t->rec = &rec;
	double w0 = lbs_monotonic_s();
	if (st == LBS_OK)
		st = measured ? lbs_testbed_execute(&run, on_iteration, t, &interrupted, err)
			      : lbs_run_execute(&run, on_iteration, t, &interrupted, err);
	double wall_s = lbs_monotonic_s() - w0;
	if (st == LBS_OK)
		st = lbs_recorder_commit(&rec, &run, wall_s, err);
	if (st == LBS_OK) {
		t->run_id = (long long)rec.run_id;
		t->mean_s = run.stats.iterations ? run.stats.sum_iteration_s / (double)run.stats.iterations : 0;
		t->steps_to_target = run.stats.steps_to_target;
		t->time_to_target_s = run.stats.time_to_target_s;
	} else {
		lbs_recorder_abort(&rec);
		lbs_error_prefix(err, "policy %s (%s)", policy, measured ? "testbed" : "simulation");
		trail_free(t);
	}
	t->rec = NULL;
	lbs_recorder_close(&rec);
	lbs_run_destroy(&run);
	return st;
}

typedef struct options {
	bool validate, quiet;
	bool timeshare; /* give the simulation the refill measured (validate --calibrate) */
	bool measured_cost; /* profile_cost = measured in the simulation */
	bool exchange_fixed; /* torch: the simulated exchange at its own pace, not on the workers' CPUs */
	bool exchange_wall;  /* torch: the simulated exchange is its measured wall time, not its CPU work */
	int resize;          /* measure re-sizing costs: 1 --resize, -1 --no-resize, 0 torch only */
	const char *output;
	const char *calibrate; /* measure the profile here first, into this file */
	char *policies;
	const char *syncs; /* --sync LIST (validate) */
	const char **overrides;
	size_t n_overrides;
	char seed[64];
	char worker[32]; /* "testbed.worker=KIND" (--worker), "" if not given */
	lbs_detail detail;
	int repeat;
	double tolerance; /* < 0: none; 0: auto */
	int sim_seeds;    /* the simulated ensemble's size (validate, with a target) */
	double sim_noise; /* its noise, the relative sd of a compute; NAN: auto, 0: none */
} options;

static int parse(int argc, char **argv, options *o)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },  { "policy", required_argument, NULL, 'p' },
		{ "set", required_argument, NULL, 'S' },     { "seed", required_argument, NULL, 's' },
		{ "detail", required_argument, NULL, 'd' },  { "repeat", required_argument, NULL, 'r' },
		{ "tolerance", required_argument, NULL, 't' }, { "quiet", no_argument, NULL, 'q' },
		{ "calibrate", required_argument, NULL, 'c' }, { "help", no_argument, NULL, 'h' },
		{ "timeshare-refill", no_argument, NULL, 'T' },
		{ "measured-cost", no_argument, NULL, 'M' },
		{ "worker", required_argument, NULL, 'W' },
		{ "exchange-fixed", no_argument, NULL, 'X' },
		{ "exchange-wall", no_argument, NULL, 'Y' },
		{ "resize", no_argument, NULL, 'R' },
		{ "no-resize", no_argument, NULL, 'N' },
		{ "plugins", no_argument, NULL, 'L' },
		{ "sync", required_argument, NULL, 'Z' },
		{ "sim-seeds", required_argument, NULL, 'E' },
		{ "sim-noise", required_argument, NULL, 'F' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd = o->validate ? "lbsim validate" : "lbsim testbed";
	int c;
	while ((c = getopt_long(argc, argv, "o:p:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o->output = optarg; break;
		case 'p': o->policies = optarg; break;
		case 'S': o->overrides[o->n_overrides++] = optarg; break;
		case 'q': o->quiet = true; break;
		case 'c': o->calibrate = optarg; break;
		case 'L': lbs_plugins_permit(1); break;
		case 'Z':
			if (!o->validate) {
				fprintf(stderr, "%s: --sync: validate only (lbsim testbed takes --set sync.mode=...)\n", cmd);
				return LBS_EUSAGE;
			}
			o->syncs = optarg;
			break;
		case 'E': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (!o->validate || !*optarg || *end || v < 1 || v > MAX_SIM_SEEDS) {
				fprintf(stderr, "%s: --sim-seeds %s: expected an integer from 1 to %d (validate only)\n",
					cmd, optarg, MAX_SIM_SEEDS);
				return LBS_EUSAGE;
			}
			o->sim_seeds = (int)v;
			break;
		}
		case 'F': {
			char why[128];
			double v;
			if (o->validate && !strcmp(optarg, "auto")) {
				o->sim_noise = NAN;
			} else if (o->validate && !strcmp(optarg, "none")) {
				o->sim_noise = 0;
			} else if (!o->validate || !lbs_parse_quantity(optarg, LBS_DIM_NONE, &v, why, sizeof why) ||
				   !(v > 0 && v <= 1)) {
				fprintf(stderr, "%s: --sim-noise %s: expected 'auto', 'none' or a relative standard "
					"deviation above 0 and at most 1, such as 2%% (validate only)\n", cmd, optarg);
				return LBS_EUSAGE;
			} else {
				o->sim_noise = v;
			}
			break;
		}
		case 'R':
		case 'N':
			if (!o->validate) {
				fprintf(stderr, "%s: --%s: validate only\n", cmd, c == 'R' ? "resize" : "no-resize");
				return LBS_EUSAGE;
			}
			o->resize = c == 'R' ? 1 : -1;
			break;
		case 'W':
			if (strcmp(optarg, "blas") && strcmp(optarg, "torch")) {
				fprintf(stderr, "%s: --worker %s: expected blas or torch\n", cmd, optarg);
				return LBS_EUSAGE;
			}
			lbs_fmt(o->worker, sizeof o->worker, "testbed.worker=%s", optarg);
			break;
		case 'T':
		case 'M': /* what the simulation of a validation models */
		case 'X':
		case 'Y':
			if (!o->validate) {
				fprintf(stderr, "%s: --%s: validate only\n", cmd,
					c == 'T' ? "timeshare-refill" : c == 'M' ? "measured-cost"
					: c == 'X' ? "exchange-fixed" : "exchange-wall");
				return LBS_EUSAGE;
			}
			*(c == 'T' ? &o->timeshare : c == 'M' ? &o->measured_cost : c == 'X' ? &o->exchange_fixed
			  : &o->exchange_wall) = true;
			break;
		case 's': {
			char *end;
			long long v = strtoll(optarg, &end, 10);
			if (!*optarg || *end || v < 0 || v > 9007199254740991LL) {
				fprintf(stderr, "%s: --seed %s: expected an integer from 0 to 2^53 - 1\n", cmd, optarg);
				return LBS_EUSAGE;
			}
			lbs_fmt(o->seed, sizeof o->seed, "run.seed=%lld", v);
			break;
		}
		case 'd': {
			int d = lbs_choice_index(LBS_DETAIL_CHOICES, optarg);
			if (d < 0) {
				fprintf(stderr, "%s: --detail %s: expected runs, iterations or workers\n", cmd, optarg);
				return LBS_EUSAGE;
			}
			o->detail = (lbs_detail)d;
			break;
		}
		case 'r': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (!o->validate || !*optarg || *end || v < 1 || v > MAX_REPEATS) {
				fprintf(stderr, "%s: --repeat %s: expected an integer from 1 to %d (validate only)\n",
					cmd, optarg, MAX_REPEATS);
				return LBS_EUSAGE;
			}
			o->repeat = (int)v;
			break;
		}
		case 't': {
			char why[128];
			double v;
			if (!strcmp(optarg, "auto")) {
				o->tolerance = 0;
			} else if (!o->validate || !lbs_parse_quantity(optarg, LBS_DIM_NONE, &v, why, sizeof why) ||
				   !(v > 0 && v < 1)) {
				fprintf(stderr, "%s: --tolerance %s: expected 'auto' or a fraction such as 5%% "
					"(validate only)\n", cmd, optarg);
				return LBS_EUSAGE;
			} else {
				o->tolerance = v;
			}
			break;
		}
		case 'h': usage(stdout, o->validate); return -1;
		default: usage(stderr, o->validate); return LBS_EUSAGE;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "%s: %s\n", cmd, optind == argc ? "no scenario given" : "one scenario at a time");
		usage(stderr, o->validate);
		return LBS_EUSAGE;
	}
	if (o->worker[0])
		o->overrides[o->n_overrides++] = o->worker;
	if (o->seed[0])
		o->overrides[o->n_overrides++] = o->seed; /* after every --set */
	return 0;
}

/* The width of the first column: the longest of the n labels, at least 20. */
static int width(const char *const *labels, size_t n)
{
	size_t w = 20;
	for (size_t i = 0; i < n; i++)
		w = strlen(labels[i]) > w ? strlen(labels[i]) : w;
	return (int)w;
}

/* "a,b" -> names, static first unless listed. */
static size_t policy_list(char *list, const char **names)
{
	size_t n = 1;
	names[0] = "static";
	for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok && n < MAX_POLICIES;
	     tok = strtok_r(NULL, ",", &save))
		if (strcmp(tok, "static"))
			names[n++] = tok;
	return n;
}

static double mean(const double *x, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += x[i];
	return n ? s / (double)n : NAN;
}

static double sd(const double *x, size_t n)
{
	if (n < 2)
		return NAN;
	double m = mean(x, n), s = 0;
	for (size_t i = 0; i < n; i++)
		s += (x[i] - m) * (x[i] - m);
	return sqrt(s / (double)(n - 1));
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Per-iteration errors |sim - measured| / measured over every repeat, and
 * the share of the global batch placed differently, mean over iterations. */
static void compare(const trail *sim, const trail *meas, int repeats, int64_t B, double *e_mean, double *e_p95,
		    double *batch_diff)
{
	size_t total = 0;
	for (int r = 0; r < repeats; r++)
		total += (size_t)(meas[r].count < sim->count ? meas[r].count : sim->count);
	double *e = malloc((total ? total : 1) * sizeof *e);
	size_t k = 0;
	double bd = 0;
	for (int r = 0; e && r < repeats; r++)
		for (int64_t it = 0; it < meas[r].count && it < sim->count; it++, k++) {
			e[k] = fabs(sim->iteration_s[it] - meas[r].iteration_s[it]) / meas[r].iteration_s[it];
			int64_t d = 0;
			for (size_t i = 0; i < sim->n; i++)
				d += llabs(sim->batch[(size_t)it * sim->n + i] - meas[r].batch[(size_t)it * sim->n + i]);
			bd += (double)d / (2.0 * (double)B);
		}
	*e_mean = e ? mean(e, k) : NAN;
	*batch_diff = k ? bd / (double)k : NAN;
	*e_p95 = NAN;
	if (e && k) {
		qsort(e, k, sizeof *e, cmp_double);
		*e_p95 = e[(size_t)ceil(0.95 * (double)k) - 1];
	}
	free(e);
}

/* What the simulation of validate is given, measured once (sim_measure) for
 * every scenario it loads (sim_load): sc's overrides (all[0..n)), then for
 * each group the testbed's CPU limits
 * (cpu_quota_period = its CFS period) and, when `measure`, what
 * time-sharing a core costs a worker here (lbs_testbed_timeshare): the
 * refill its workers pay where the testbed places them, the mean over the
 * group of the shared refill for a worker whose CPU holds another worker
 * and the alone one otherwise (either applies only while a(t) < 1), both
 * the share of the core lost in wall time: the simulation's availability
 * is the rate a worker gets, and what it gets under a quota is the
 * measured rate, whatever of it the caches or the kernel's accounting
 * took (none of it below 0).
 * *sets holds the overrides' text. */
typedef struct sim_measured {
	bool measure;          /* the time-sharing cost measured (ts) */
	lbs_tb_timeshare ts;
	double tick;           /* the kernel's tick (0: unknown) */
	bool exchange;         /* torch, more than one worker: x measured */
	double x;              /* the torch workers' exchange, the simulation's */
	bool resize;           /* rz measured */
	lbs_tb_resize rz;
} sim_measured;

static lbs_status sim_measure(const lbs_scenario *sc, const options *o, bool measure, sim_measured *m,
			      lbs_error *err)
{
	*m = (sim_measured){ .measure = measure, .ts = { .quota = 0.25, .reps = 5, .rounds = 5 }, .rz = { .rounds = 5 } };
	lbs_tb_timeshare ts = m->ts;
	lbs_status st = LBS_OK;
	if (measure && !o->quiet)
		fprintf(stderr, "lbsim validate: measuring what time-sharing a core costs\n");
	if (measure && (st = lbs_testbed_timeshare(sc, &ts, err)) != LBS_OK)
		return st;
	if (measure && !o->quiet)
		printf("time-sharing a core (batch %lld, quota %.2f, %d rounds of %d iterations): an iteration "
		       "takes %.2f ms of CPU without a quota, %.2f ms alone under it, %.2f ms beside a second "
		       "worker; per %d ms period the worker lost %.0f us [%.0f, %.0f] of CPU alone and %.0f us "
		       "[%.0f, %.0f] beside the second, and in wall time (the rate it got) %.0f us [%.0f, %.0f] "
		       "alone and %.0f us [%.0f, %.0f] beside the second\n",
		       (long long)ts.batch, ts.quota, ts.rounds, ts.reps, 1e3 * ts.free_cpu_s, 1e3 * ts.alone_cpu_s,
		       1e3 * ts.shared_cpu_s, LBS_TESTBED_PERIOD_US / 1000, 1e6 * ts.alone_refill_s[0],
		       1e6 * ts.alone_refill_s[1], 1e6 * ts.alone_refill_s[2], 1e6 * ts.shared_refill_s[0],
		       1e6 * ts.shared_refill_s[1], 1e6 * ts.shared_refill_s[2], 1e6 * ts.alone_wall_s[0],
		       1e6 * ts.alone_wall_s[1], 1e6 * ts.alone_wall_s[2], 1e6 * ts.shared_wall_s[0],
		       1e6 * ts.shared_wall_s[1], 1e6 * ts.shared_wall_s[2]);
	m->ts = ts;
	const char *how;
	double tick = m->tick = lbs_testbed_tick_s(&how);
	if (!o->quiet)
		printf(tick > 0 ? "the kernel checks CPU quotas at its tick, every %g ms (%g Hz, from %s)\n"
				: "the kernel's tick is unknown here (%g ms, %g Hz, %s): the simulation takes CPU quotas as exact\n",
		       1e3 * tick, tick > 0 ? 1 / tick : 0, how);
	/* Torch workers exchange their gradient themselves, after their
	 * compute and inside their quotas: measured here without quotas, it
	 * is the simulation's ring all-reduce (a latency: the bandwidth of a
	 * process's loopback is not what governs it), and with
	 * exchange_on_workers the simulation runs it on each worker's own
	 * availability, as the testbed's workers do. */
	if (sc->testbed.worker == LBS_TB_WORKER_TORCH && sc->n_workers > 1) {
		lbs_tb_exchange_cost xc;
		if (!o->quiet)
			fprintf(stderr, "lbsim validate: measuring the torch workers' exchange\n");
		if ((st = lbs_testbed_torch_exchange(sc, 15, &xc, err)) != LBS_OK)
			return st;
		const double x = o->exchange_wall ? xc.wall_s[0] : xc.cpu_s[0];
		if (!o->quiet)
			printf("the torch workers' exchange and optimizer step without quotas (%d iterations): "
			       "%.2f ms [%.2f, %.2f] of wall time for the last to arrive, %.2f ms [%.2f, %.2f] of "
			       "CPU time for a worker (the median); the simulation's exchange: %.2f ms of %s%s\n",
			       xc.reps, 1e3 * xc.wall_s[0], 1e3 * xc.wall_s[1], 1e3 * xc.wall_s[2], 1e3 * xc.cpu_s[0],
			       1e3 * xc.cpu_s[1], 1e3 * xc.cpu_s[2], 1e3 * x, o->exchange_wall ? "wall time" : "CPU work",
			       o->exchange_fixed ? ", at its own pace" : ", on each worker's availability");
		m->exchange = true;
		m->x = x;
	}
	/* What changing a batch costs by itself (lbs_testbed_resize): by
	 * default for torch workers, whose allocator and kernels pay it; the
	 * blas worker reuses fixed buffers (--resize measures it all the same). */
	lbs_tb_resize rz = m->rz;
	const bool resize = m->resize = o->resize > 0 || (o->resize == 0 && sc->testbed.worker == LBS_TB_WORKER_TORCH);
	if (resize) {
		if (!o->quiet)
			fprintf(stderr, "lbsim validate: measuring what re-sizing a batch costs\n");
		if ((st = lbs_testbed_resize(sc, &rz, err)) != LBS_OK)
			return st;
		if (!o->quiet)
			printf("re-sizing (batch %lld, %d rounds): alternating %lld and %lld against the same "
			       "batches unchanged: resize_cost %.1f%% [%.1f, %.1f] (against %lld alone %+.1f%%); a "
			       "batch never run, first against next run: new_batch_cost %.1f%% [%.1f, %.1f] "
			       "(against its repeats %+.1f%%)\n",
			       (long long)rz.batch, rz.rounds, (long long)(rz.batch - rz.delta),
			       (long long)(rz.batch + rz.delta), 100 * rz.resize[0], 100 * rz.resize[1],
			       100 * rz.resize[2], (long long)rz.batch, 100 * rz.against_b, 100 * rz.new_batch[0],
			       100 * rz.new_batch[1], 100 * rz.new_batch[2], 100 * rz.first_vs_repeated);
	}
	m->rz = rz;
	return LBS_OK;
}

static lbs_status sim_load(const lbs_scenario *sc, const char *path, const char **all, size_t n,
			   const options *o, const sim_measured *ms, lbs_scenario *sim_sc,
			   char (**sets)[LBS_NAME_MAX + 64], lbs_error *err)
{
	lbs_status st = LBS_OK;
	const bool measure = ms->measure, resize = ms->resize;
	const lbs_tb_timeshare ts = ms->ts;
	const lbs_tb_resize rz = ms->rz;
	const double tick = ms->tick;
	char net_sets[4][96];
	size_t n_net = 0;
	if (ms->exchange) {
		/* The [sync] modes' exchanges run on the network alone in the
		 * simulation (sim/run_sync.c): local SGD's averaging is the same
		 * all-reduce, every H-th step; ssp, asp and backup push to and pull
		 * from the parameter server, modelled as a latency each, the
		 * two making the exchange measured (doc/validation.md, "The
		 * synchronisation modes on the testbed"). */
		const int mode = sc->sync.mode;
		const bool server = mode == LBS_SYNC_SSP || mode == LBS_SYNC_ASP || mode == LBS_SYNC_BACKUP;
		const double x = ms->x;
		lbs_fmt(net_sets[n_net++], sizeof net_sets[0], "network.topology=%s", server ? "ps" : "ring");
		lbs_fmt(net_sets[n_net++], sizeof net_sets[0], "network.bandwidth=100 TB/s");
		lbs_fmt(net_sets[n_net++], sizeof net_sets[0], "network.latency=%.9g s",
			server ? x / 2 : x / (2.0 * (double)(sc->n_workers - 1)));
		if (!o->exchange_fixed && mode == LBS_SYNC_BSP)
			lbs_fmt(net_sets[n_net++], sizeof net_sets[0], "network.exchange_on_workers=yes");
	}
	lbs_run run;
	if ((st = lbs_run_create(&run, sc, "static", err)) != LBS_OK)
		return st;
	int *cpu = lbs_calloc(run.n, sizeof *cpu, err);
	const char **more = lbs_calloc(n + 6 * sc->n_groups + 5, sizeof *more, err);
	if (!(*sets = lbs_calloc(6 * sc->n_groups, sizeof **sets, err)) || !cpu || !more)
		st = LBS_EINTERNAL;
	if (st == LBS_OK) {
		lbs_testbed_place(&run, cpu);
		size_t m = 0, i = 0;
		for (; m < n; m++)
			more[m] = all[m];
		for (size_t k = 0; k < n_net; k++)
			more[m++] = net_sets[k];
		for (size_t g = 0; g < sc->n_groups; g++) {
			double sum = 0;
			char(*set)[LBS_NAME_MAX + 64] = *sets + 6 * g;
			/* With --measured-cost, the profile's measured times batch by
			 * batch instead of its fit (doc/validation.md, "The batch's own
			 * cost": on this project's runs the fit to every batch
			 * predicted better). */
			if (o->measured_cost && sc->groups[g].profile[0])
				more[m++] = lbs_fmt(set[3], sizeof set[3], "workers.%s.profile_cost=measured",
						    sc->groups[g].name);
			/* What changing a batch costs, measured (none below 0). */
			if (resize) {
				more[m++] = lbs_fmt(set[4], sizeof set[4], "workers.%s.resize_cost=%.4g",
						    sc->groups[g].name, fmax(0.0, rz.resize[0]));
				more[m++] = lbs_fmt(set[5], sizeof set[5], "workers.%s.new_batch_cost=%.4g",
						    sc->groups[g].name, fmax(0.0, rz.new_batch[0]));
			}
			/* A group beside a real co-located job: its generator sets
			 * the availability, and neither model applies to it. */
			if (lbs_testbed_tenant_load(sc, g) > 0) {
				i += (size_t)sc->groups[g].count;
				continue;
			}
			for (int64_t k = 0; k < sc->groups[g].count; k++, i++) {
				bool shared = cpu[i] < 0;
				for (size_t j = 0; j < run.n; j++)
					shared = shared || (j != i && cpu[j] == cpu[i]);
				sum += fmax(0.0, shared ? ts.shared_wall_s[0] : ts.alone_wall_s[0]);
			}
			more[m++] = lbs_fmt(set[0], sizeof set[0], "workers.%s.cpu_quota_period=%d us",
					    sc->groups[g].name, LBS_TESTBED_PERIOD_US);
			more[m++] = lbs_fmt(set[1], sizeof set[1], "workers.%s.cpu_quota_tick=%.6g us",
					    sc->groups[g].name, 1e6 * tick);
			if (measure && o->timeshare)
				more[m++] = lbs_fmt(set[2], sizeof set[2], "workers.%s.timeshare_refill=%.6g us",
						    sc->groups[g].name, 1e6 * sum / (double)sc->groups[g].count);
		}
		st = lbs_scenario_load(sim_sc, path, more, m, err);
	}
	if (st != LBS_OK) {
		free(*sets);
		*sets = NULL;
	}
	free(more);
	free(cpu);
	lbs_run_destroy(&run);
	return st;
}

/* Whether validate compares the time to target: torch workers training
 * the teacher-student task to a [testbed] target_loss, with a
 * [convergence] model for the simulation (doc/validation.md, "Real
 * convergence"). */
static bool has_target(const lbs_scenario *sim_sc, const lbs_scenario *sc)
{
	return sc->testbed.target_loss > 0 && sim_sc->convergence.model != LBS_CONV_NONE &&
	       !strcmp(sc->model.name, "teacher-student") && sc->testbed.worker == LBS_TB_WORKER_TORCH;
}

/* The keys that give the simulated ensemble its noise (--sim-noise): per
 * group that has no noise of its own, a lognormal factor on each
 * iteration's compute whose sd is --sim-noise or, by default, what the
 * group's profile's [spread] implies for one repetition
 * (lbs_profile_noise_sigma). *sets: 2 per group, "" after the last; NULL
 * (and said) when no group gets any noise: the ensemble would repeat one
 * run. */
static lbs_status ensemble_sets(const lbs_scenario *sim_sc, const options *o, char (**sets)[LBS_NAME_MAX + 64],
				lbs_error *err)
{
	*sets = NULL;
	char (*s)[LBS_NAME_MAX + 64] = lbs_calloc(2 * sim_sc->n_groups + 1, sizeof *s, err);
	if (!s)
		return LBS_EINTERNAL;
	size_t m = 0;
	bool noisy = false;
	if (!o->quiet)
		printf("the simulated ensemble: %d seeds from %lld, each iteration's compute times a lognormal factor "
		       "(mean 1) of relative sd", o->sim_seeds, (long long)sim_sc->run.seed);
	for (size_t g = 0; g < sim_sc->n_groups; g++) {
		const lbs_group_spec *gs = &sim_sc->groups[g];
		double sigma = 0;
		char from[96] = "no profile";
		if (gs->noise.kind != LBS_NOISE_NONE) {
			noisy = true;
			if (!o->quiet)
				printf("%s %s: its own noise", g ? "," : "", gs->name);
			continue;
		}
		if (isfinite(o->sim_noise)) {
			sigma = o->sim_noise;
			lbs_fmt(from, sizeof from, "--sim-noise");
		} else if (gs->profile_path[0]) {
			lbs_profile pr;
			lbs_status st = lbs_profile_load(&pr, gs->profile_path, err);
			if (st != LBS_OK) {
				free(s);
				return st;
			}
			sigma = lbs_profile_noise_sigma(&pr);
			lbs_fmt(from, sizeof from, sigma > 0 ? "its profile's [spread] of %lld repetitions"
							     : "its profile has no [spread]", (long long)pr.reps);
			lbs_profile_destroy(&pr);
		}
		if (!o->quiet)
			printf("%s %s %.2f%% (%s)", g ? "," : "", gs->name, 100 * sigma, from);
		if (sigma > 0) {
			noisy = true;
			lbs_fmt(s[m++], sizeof s[0], "workers.%s.noise=lognormal", gs->name);
			lbs_fmt(s[m++], sizeof s[0], "workers.%s.noise_sigma=%.6g", gs->name, sigma);
		}
	}
	if (!o->quiet)
		printf("%s\n", noisy ? "" : ": no noise, no ensemble (the simulated steps are its one run's)");
	if (noisy)
		*sets = s;
	else
		free(s);
	return LBS_OK;
}

/* sim: the scenario simulated; sc: the one run on the testbed (the same,
 * but for the simulation's model of time-sharing a core). */
/* The time to target (doc/validation.md, "Real convergence"): per policy,
 * the simulated steps and time against the mean and sd of the measured
 * repeats that reached it (into rows[], the validation_targets table); then
 * printed, with how many pairs of policies the simulation orders by time to
 * target as the measured means do. The runs' own rows are in run_targets. */
static void targets(const lbs_scenario *sc, const trail *sim, trail meas[][MAX_REPEATS], const char **names,
		    size_t np, int repeat, lbs_validation_row *rows, bool quiet)
{
	/* the simulation's answer: its ensemble's mean and sd over the seeds
	 * that reached the target, or else its one run's */
	double s_steps[MAX_POLICIES], s_steps_sd[MAX_POLICIES], s_time[MAX_POLICIES], s_time_sd[MAX_POLICIES];
	size_t s_reached[MAX_POLICIES], s_n[MAX_POLICIES];
	for (size_t p = 0; p < np; p++) {
		double st[MAX_REPEATS], ti[MAX_REPEATS];
		size_t k = 0;
		for (int r = 0; r < repeat; r++)
			if (meas[p][r].steps_to_target > 0) {
				st[k] = (double)meas[p][r].steps_to_target;
				ti[k++] = meas[p][r].time_to_target_s;
			}
		lbs_validation_row *v = &rows[p];
		v->has_target = true;
		v->target_loss = sc->testbed.target_loss;
		v->simulated_steps = sim[p].steps_to_target;
		v->simulated_time_s = sim[p].steps_to_target ? sim[p].time_to_target_s : NAN;
		v->measured_reached = (int)k;
		v->repeats = repeat;
		v->measured_steps = k ? mean(st, k) : NAN;
		v->measured_steps_sd = k > 1 ? sd(st, k) : NAN;
		v->measured_time_s = k ? mean(ti, k) : NAN;
		v->measured_time_sd_s = k > 1 ? sd(ti, k) : NAN;
		s_n[p] = v->n_seeds ? v->n_seeds : 1;
		double *es = malloc(s_n[p] * sizeof *es), *et = malloc(s_n[p] * sizeof *et);
		size_t j = 0;
		for (size_t e = 0; es && et && e < v->n_seeds; e++)
			if (v->seeds[e].steps > 0) {
				es[j] = (double)v->seeds[e].steps;
				et[j++] = v->seeds[e].time_s;
			}
		if (!v->n_seeds && es && et && v->simulated_steps > 0) {
			es[j] = (double)v->simulated_steps;
			et[j++] = v->simulated_time_s;
		}
		s_reached[p] = j;
		s_steps[p] = j ? mean(es, j) : NAN;
		s_steps_sd[p] = j > 1 ? sd(es, j) : NAN;
		s_time[p] = j ? mean(et, j) : NAN;
		s_time_sd[p] = j > 1 ? sd(et, j) : NAN;
		free(es);
		free(et);
	}
	if (quiet)
		return;
	printf("time to target (held-out loss %g; simulated: [convergence] S_min %g, B_noise %g%s):\n",
	       sc->testbed.target_loss, sc->convergence.min_steps, sc->convergence.noise_scale,
	       rows[0].n_seeds ? "; the simulated ensemble's mean and sd" : "");
	printf("%-*s %9s %6s %7s %10s %6s %7s %10s %7s %11s %7s %8s\n", width(names, np), "policy", "sim_steps",
	       "+-sd", "reached", "meas_steps", "+-sd", "reached", "sim_time_s", "+-sd", "meas_time_s", "+-sd", "err");
	for (size_t p = 0; p < np; p++) {
		const lbs_validation_row *v = &rows[p];
		double gap = s_time[p] / v->measured_time_s - 1;
		char err[16] = "       -"; /* either side not reached */
		if (isfinite(gap))
			snprintf(err, sizeof err, "%7.1f%%", 100 * gap);
		printf("%-*s %9.1f %6.1f %4zu/%-2zu %10.1f %6.1f %4d/%-2d %10.3f %7.3f %11.3f %7.3f %s\n",
		       width(names, np), names[p], s_steps[p], s_steps_sd[p], s_reached[p], s_n[p], v->measured_steps,
		       v->measured_steps_sd, v->measured_reached, repeat, s_time[p], s_time_sd[p], v->measured_time_s,
		       v->measured_time_sd_s, err);
	}
	/* the ranking: every pair ordered alike by the simulated and the
	 * measured mean time to target; a tie on either side orders nothing */
	size_t agree = 0, pairs = 0;
	for (size_t a = 0; a < np; a++)
		for (size_t b = a + 1; b < np; b++) {
			double sa = s_time[a], sb = s_time[b];
			double ma = rows[a].measured_time_s, mb = rows[b].measured_time_s;
			if (!isfinite(sa) || !isfinite(sb) || !isfinite(ma) || !isfinite(mb))
				continue;
			pairs++;
			agree += (sa < sb && ma < mb) || (sa > sb && ma > mb);
		}
	printf("the measured ranking by time to target: %zu of %zu pairs ordered alike by the simulation%s\n", agree,
	       pairs, pairs && agree == pairs ? " (reproduced)" : "");
}

/* --sync: one [sync] variant, as it is printed and the keys it sets. */
#define MAX_VARIANTS 8
typedef struct variant {
	char label[32];
	char sets[4][64];
	size_t n_sets;
} variant;

/* "bsp,ssp:1,asp,backup:1,local-sgd:5" -> variants; dropcompute is the
 * simulation's alone (lbs_testbed_check says why). */
static lbs_status variant_list(char *list, variant *v, size_t *n, lbs_error *err)
{
	*n = 0;
	for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (*n == MAX_VARIANTS)
			return lbs_error_set(err, LBS_EUSAGE, "--sync: at most %d variants", MAX_VARIANTS);
		variant *x = &v[(*n)++];
		memset(x, 0, sizeof *x);
		if (!strncmp(tok, "dropcompute", 11) && (tok[11] == '\0' || tok[11] == ':')) {
			/* dropcompute[:MICRO[:LIMIT[:OVERRUN]]] */
			static const char *const keys[] = { "micro_batch", "time_limit", "overrun" };
			lbs_fmt(x->label, sizeof x->label, "%s", tok);
			lbs_fmt(x->sets[x->n_sets++], sizeof x->sets[0], "sync.mode=dropcompute");
			char *fsave = NULL, *f = strtok_r(tok[11] ? tok + 12 : tok + 11, ":", &fsave);
			for (size_t k = 0; f && k < 3; k++, f = strtok_r(NULL, ":", &fsave))
				lbs_fmt(x->sets[x->n_sets++], sizeof x->sets[0], "sync.%s=%s", keys[k], f);
			if (f)
				return lbs_error_set(err, LBS_EUSAGE, "--sync: '%s': expected dropcompute[:MICRO[:LIMIT"
						     "[:drop|finish]]]", x->label);
			continue;
		}
		char *colon = strchr(tok, ':');
		const char *arg = colon ? colon + 1 : NULL;
		if (colon)
			*colon = '\0';
		static const struct { const char *mode, *key; } modes[] = {
			{ "bsp", NULL }, { "asp", NULL }, { "ssp", "staleness" }, { "backup", "backup_workers" },
			{ "local-sgd", "period" },
		};
		size_t m = 0;
		while (m < sizeof modes / sizeof *modes && strcmp(modes[m].mode, tok))
			m++;
		char *end = NULL;
		long long k = arg ? strtoll(arg, &end, 10) : 0;
		if (m == sizeof modes / sizeof *modes || (!modes[m].key && arg) || (modes[m].key && !arg) ||
		    (arg && (!*arg || *end || k < 0 || k > 1000000)))
			return lbs_error_set(err, LBS_EUSAGE, "--sync: '%s%s%s': expected bsp, asp, ssp:S, backup:K, "
					     "local-sgd:H or dropcompute[:MICRO[:LIMIT[:drop|finish]]]", tok,
					     colon ? ":" : "", arg ? arg : "");
		lbs_fmt(x->sets[x->n_sets++], sizeof x->sets[0], "sync.mode=%s", tok);
		if (modes[m].key)
			lbs_fmt(x->sets[x->n_sets++], sizeof x->sets[0], "sync.%s=%lld", modes[m].key, k);
		lbs_fmt(x->label, sizeof x->label, arg ? "%s:%lld" : "%s", tok, k);
	}
	return *n ? LBS_OK : lbs_error_set(err, LBS_EUSAGE, "--sync: no variant given");
}

/* Row p: policy names[p] (labels[p] as printed and stored) of the testbed's
 * scenario sc_of[p] and the simulation's sim_of[p]: one pair per [sync]
 * variant (--sync), the same for every row otherwise. */
static int validate(const lbs_scenario *const *sim_of, const lbs_scenario *const *sc_of,
		    lbs_scenario *const *ens_of, const char **names, const char **labels, size_t np, const options *o)
{
	const lbs_scenario *sim_sc = sim_of[0], *sc = sc_of[0];
	lbs_error err = { 0 };
	lbs_status st = LBS_OK;
	trail sim[MAX_POLICIES], meas[MAX_POLICIES][MAX_REPEATS];
	memset(sim, 0, sizeof sim);
	memset(meas, 0, sizeof meas);
	for (size_t p = 0; p < np && st == LBS_OK; p++)
		st = run_one(sim_of[p], names[p], false, o->output, o->detail, &sim[p], &err);
	/* The simulated ensemble (--sim-seeds): the row's scenario with noise
	 * on each iteration's compute, under seeds SEED .. SEED + N - 1; only
	 * its runs (runs, run_targets) are recorded. */
	lbs_validation_seed *ens[MAX_POLICIES] = { NULL };
	for (size_t p = 0; p < np && st == LBS_OK; p++) {
		if (!ens_of[p])
			continue;
		if (!(ens[p] = lbs_calloc((size_t)o->sim_seeds, sizeof *ens[p], &err))) {
			st = LBS_EINTERNAL;
			break;
		}
		for (int k = 0; k < o->sim_seeds && st == LBS_OK; k++) {
			trail t;
			ens_of[p]->run.seed = sim_of[p]->run.seed + k;
			if ((st = run_one(ens_of[p], names[p], false, o->output, LBS_DETAIL_RUNS, &t, &err)) == LBS_OK)
				ens[p][k] = (lbs_validation_seed){ .seed = ens_of[p]->run.seed, .run_id = t.run_id,
								   .steps = t.steps_to_target,
								   .time_s = t.time_to_target_s };
			trail_free(&t);
		}
	}
	/* Repeat-major, so that a drift of the machine's load touches every
	 * policy alike, and each repeat's speedup compares neighbours in time.
	 * Before each repeat and after the last, the machine's own speed
	 * (lbs_testbed_speed): how far it moved says how closely any model
	 * could have predicted the measured times. */
	double probe[MAX_REPEATS + 1];
	int64_t probe_batch = 0;
	for (int r = 0; r <= o->repeat && st == LBS_OK; r++) {
		st = lbs_testbed_speed(sc, 5, &probe_batch, &probe[r], &err);
		for (size_t p = 0; p < np && st == LBS_OK && r < o->repeat; p++) {
			if (!o->quiet)
				fprintf(stderr, "lbsim validate: testbed run %d/%d of %s\n", r + 1, o->repeat, labels[p]);
			st = run_one(sc_of[p], names[p], true, o->output, o->detail, &meas[p][r], &err);
		}
	}
	if (st != LBS_OK) {
		fprintf(stderr, "lbsim validate: %s\n", err.msg);
		for (size_t p = 0; p < np; p++) {
			free(ens[p]);
			trail_free(&sim[p]);
			for (int r = 0; r < o->repeat; r++)
				trail_free(&meas[p][r]);
		}
		return st;
	}
	/* Every probe was taken: a failed one returned above. */
	double lo = probe[0], hi = probe[0];
	for (int r = 1; r <= o->repeat; r++) {
		lo = fmin(lo, probe[r]);
		hi = fmax(hi, probe[r]);
	}
	const double drift = hi / lo - 1;
	lbs_validation_row rows[MAX_POLICIES];
	char runs[MAX_POLICIES][MAX_REPEATS * 24];
	double tol_used[MAX_POLICIES];
	int misses = 0;
	if (!o->quiet) {
		char on[128];
		lbs_testbed_describe(on, sizeof on);
		printf("scenario %s (%s), seed %lld, %lld workers, global batch %lld, %d testbed run%s per policy "
		       "on %s\n",
		       sc->run.name, sc->path, (long long)sc->run.seed, (long long)sc->n_workers,
		       (long long)sc->run.global_batch, o->repeat, o->repeat == 1 ? "" : "s", on);
		printf("%-*s %11s %11s %8s %8s %8s %8s %8s %8s %8s\n", width(labels, np), "policy", "sim_iter_s",
		       "meas_iter_s", "+-sd",
		       "sim_spd", "meas_spd", "+-sd", "err_mean", "err_p95", "batch_d");
	}
	for (size_t p = 0; p < np; p++) {
		double m[MAX_REPEATS], spd[MAX_REPEATS];
		size_t at = 0;
		runs[p][0] = '\0';
		for (int r = 0; r < o->repeat; r++) {
			m[r] = meas[p][r].mean_s;
			spd[r] = meas[0][r].mean_s / meas[p][r].mean_s;
			at += (size_t)snprintf(runs[p] + at, sizeof runs[p] - at, "%s%lld", r ? "," : "",
					       meas[p][r].run_id);
		}
		lbs_validation_row *v = &rows[p];
		*v = (lbs_validation_row){
			.policy = labels[p],
			.simulated_run = sim[p].run_id,
			.measured_runs = runs[p],
			.simulated_iteration_s = sim[p].mean_s,
			.measured_iteration_s = mean(m, (size_t)o->repeat),
			.measured_iteration_sd_s = sd(m, (size_t)o->repeat),
			.simulated_speedup = sim[0].mean_s / sim[p].mean_s,
			.measured_speedup = mean(spd, (size_t)o->repeat),
			.measured_speedup_sd = sd(spd, (size_t)o->repeat),
			.machine_drift = drift,
			.n_seeds = ens[p] ? (size_t)o->sim_seeds : 0,
			.seeds = ens[p],
		};
		compare(&sim[p], meas[p], o->repeat, sc->run.global_batch, &v->error_mean, &v->error_p95,
			&v->batch_difference_mean);
		double cv = v->measured_speedup_sd / v->measured_speedup;
		tol_used[p] = o->tolerance > 0 ? o->tolerance : fmax(0.05, isfinite(cv) ? 3 * cv : 0);
		double gap = fabs(v->simulated_speedup - v->measured_speedup) / v->measured_speedup;
		/* iterations of another [sync] mode are not the baseline's:
		 * their speedup is printed, not held to the tolerance */
		bool miss = p > 0 && o->tolerance >= 0 && gap > tol_used[p] &&
			    sim_of[p]->sync.mode == sim_sc->sync.mode;
		misses += miss;
		if (!o->quiet)
			printf("%-*s %11.4f %11.4f %8.4f %8.3f %8.3f %8.3f %7.1f%% %7.1f%% %7.1f%%%s\n", width(labels, np),
			       labels[p],
			       v->simulated_iteration_s, v->measured_iteration_s, v->measured_iteration_sd_s,
			       v->simulated_speedup, v->measured_speedup, v->measured_speedup_sd,
			       100 * v->error_mean, 100 * v->error_p95, 100 * v->batch_difference_mean,
			       miss ? "  MISS" : "");
		if (miss)
			fprintf(stderr, "lbsim validate: %s: simulated speedup %.3f, measured %.3f +- %.3f: "
				"%.1f%% apart, more than the tolerance of %.1f%%%s\n", labels[p],
				v->simulated_speedup, v->measured_speedup, v->measured_speedup_sd, 100 * gap,
				100 * tol_used[p], o->tolerance == 0 ? " (max(5%, 3 x the measured relative sd))" : "");
	}
	if (has_target(sim_sc, sc))
		targets(sim_sc, sim, meas, labels, np, o->repeat, rows, o->quiet);
	if (!o->quiet) {
		printf("the machine while the testbed ran: an iteration at batch %lld took", (long long)probe_batch);
		for (int r = 0; r <= o->repeat; r++)
			printf("%s %.2f", r == 0 ? "" : r == o->repeat ? " and" : ",", 1e3 * probe[r]);
		printf(" ms of CPU without a quota, before each repeat and after the last: %.1f%% from the "
		       "fastest to the slowest\n", 100 * drift);
	}
	lbs_recorder rec = { 0 };
	if ((st = lbs_recorder_open(&rec, o->output, LBS_DETAIL_RUNS, &err)) == LBS_OK)
		st = lbs_recorder_validation(&rec, rows, np, &err);
	if (st != LBS_OK)
		fprintf(stderr, "lbsim validate: %s\n", err.msg);
	else if (!o->quiet)
		printf("validation %lld in %s\n", (long long)rec.run_id, o->output);
	lbs_recorder_close(&rec);
	for (size_t p = 0; p < np; p++) {
		free(ens[p]);
		trail_free(&sim[p]);
		for (int r = 0; r < o->repeat; r++)
			trail_free(&meas[p][r]);
	}
	if (st != LBS_OK)
		return st;
	return misses ? LBS_EMISMATCH : 0;
}

static int testbed(const lbs_scenario *sc, const char **names, size_t np, const options *o)
{
	lbs_error err = { 0 };
	trail t[MAX_POLICIES];
	size_t done = 0;
	lbs_status st = LBS_OK;
	for (; done < np && st == LBS_OK; done++)
		if ((st = run_one(sc, names[done], true, o->output, o->detail, &t[done], &err)) != LBS_OK)
			fprintf(stderr, "lbsim testbed: %s\n", err.msg);
	if (st != LBS_OK)
		done--;
	if (st == LBS_OK && !o->quiet) {
		char on[128];
		lbs_testbed_describe(on, sizeof on);
		printf("scenario %s (%s), seed %lld, %lld workers, global batch %lld, measured on %s\n",
		       sc->run.name, sc->path, (long long)sc->run.seed, (long long)sc->n_workers,
		       (long long)sc->run.global_batch, on);
		printf("%-20s %10s %11s %8s %6s\n", "policy", "iterations", "iteration_s", "speedup", "run");
		for (size_t p = 0; p < np; p++)
			printf("%-20s %10lld %11.6f %8.3f %6lld\n", names[p], (long long)t[p].count, t[p].mean_s,
			       t[0].mean_s / t[p].mean_s, t[p].run_id);
		printf("results: %s\n", o->output);
	}
	for (size_t p = 0; p < done; p++)
		trail_free(&t[p]);
	return st;
}

static int command(int argc, char **argv, bool is_validate)
{
	const char *cmd = is_validate ? "lbsim validate" : "lbsim testbed";
	options o = { .validate = is_validate, .output = is_validate ? "validation.db" : "measured.db",
		      .detail = LBS_DETAIL_ITERATIONS, .repeat = 3, .tolerance = -1, .sim_seeds = 10,
		      .sim_noise = NAN };
	if (!(o.overrides = calloc((size_t)argc + 1, sizeof *o.overrides))) {
		fprintf(stderr, "%s: out of memory\n", cmd);
		return LBS_EINTERNAL;
	}
	int rc = parse(argc, argv, &o);
	if (rc) {
		free(o.overrides);
		return rc < 0 ? 0 : rc;
	}
	lbs_error err = { 0 };
	lbs_scenario sc;
	lbs_status st = lbs_scenario_load(&sc, argv[optind], o.overrides, o.n_overrides, &err);
	char (*profile_sets)[LBS_NAME_MAX + 1100] = NULL;
	if (st != LBS_OK) {
		fprintf(stderr, "%s: %s\n", cmd, err.msg);
		free(o.overrides);
		return st;
	}
	/* --sync: the [sync] variants, each a pair of scenarios (testbed and
	 * simulation) loaded with its keys after every other override. */
	variant vars[MAX_VARIANTS];
	size_t nv = 1;
	vars[0] = (variant){ .label = "" };
	char sync_list[512];
	if (o.syncs) {
		lbs_fmt(sync_list, sizeof sync_list, "%s", o.syncs);
		if ((st = variant_list(sync_list, vars, &nv, &err)) != LBS_OK) {
			fprintf(stderr, "%s: %s\n", cmd, err.msg);
			lbs_scenario_destroy(&sc);
			free(o.overrides);
			return st;
		}
	}
	char list[1024];
	lbs_fmt(list, sizeof list, "%s", o.policies ? o.policies : sc.policy.name);
	const char *policies[MAX_POLICIES];
	size_t npol = policy_list(list, policies);
	if (npol * nv > MAX_POLICIES) {
		fprintf(stderr, "%s: %zu policies x %zu [sync] variants: at most %d runs a repeat\n", cmd, npol, nv,
			MAX_POLICIES);
		lbs_scenario_destroy(&sc);
		free(o.overrides);
		return LBS_EUSAGE;
	}
	for (size_t p = 0; p < npol && st == LBS_OK; p++)
		if (!lbs_policy_find(policies[p])) {
			char known[256];
			lbs_policy_names(known, sizeof known);
			st = lbs_error_set(&err, LBS_EUSAGE, "--policy: unknown policy '%s' (known: %s)", policies[p],
					   known);
		}
	/* The overrides every scenario is loaded with (with --calibrate, the
	 * measured profile for every group), the seed last. */
	const char **base = NULL;
	size_t nbase = 0;
	if (st == LBS_OK && !(base = lbs_calloc(o.n_overrides + 3 * sc.n_groups + 8, sizeof *base, &err)))
		st = LBS_EINTERNAL;
	if (st == LBS_OK && o.calibrate && !(profile_sets = lbs_calloc(sc.n_groups, sizeof *profile_sets, &err)))
		st = LBS_EINTERNAL;
	/* (the profile only once measured) */
#define BASE(with_profile)                                                                                        \
	do {                                                                                                      \
		nbase = 0;                                                                                        \
		for (size_t i_ = 0; i_ < o.n_overrides - (o.seed[0] ? 1 : 0); i_++)                               \
			base[nbase++] = o.overrides[i_];                                                          \
		for (size_t g_ = 0; (with_profile) && g_ < sc.n_groups; g_++)                                     \
			base[nbase++] = lbs_fmt(profile_sets[g_], sizeof profile_sets[g_], "workers.%s.profile=%s", \
						sc.groups[g_].name, o.calibrate);                                 \
		if (o.seed[0])                                                                                    \
			base[nbase++] = o.seed;                                                                   \
	} while (0)
	if (st == LBS_OK)
		BASE(false);
	/* Each variant's testbed scenario; everything that can be wrong is
	 * found before anything runs. */
	lbs_scenario scs[MAX_VARIANTS], sims[MAX_VARIANTS];
	size_t n_scs = 0, n_sims = 0;
	bool skip[MAX_VARIANTS][MAX_POLICIES] = { { false } };
	for (size_t v = 0; v < nv && st == LBS_OK; v++) {
		for (size_t k = 0; k < vars[v].n_sets; k++)
			base[nbase + k] = vars[v].sets[k];
		if ((st = lbs_scenario_load(&scs[v], argv[optind], base, nbase + vars[v].n_sets, &err)) != LBS_OK)
			break;
		n_scs++;
		for (size_t p = 0; p < npol && st == LBS_OK; p++) {
			lbs_run run;
			if ((st = lbs_testbed_check(&scs[v], policies[p], &err)) == LBS_OK &&
			    (st = lbs_run_create(&run, &scs[v], policies[p], &err)) == LBS_OK) {
				st = lbs_testbed_check_run(&run, &err);
				lbs_run_destroy(&run);
			}
			/* --sync: a policy a mode refuses (one that re-plans under asp)
			 * is left out of that mode's rows, saying so */
			skip[v][p] = o.syncs && st == LBS_EINPUT;
			if (skip[v][p]) {
				if (!o.quiet)
					fprintf(stderr, "%s: --sync %s: leaving out policy %s: %s\n", cmd, vars[v].label,
						policies[p], err.msg);
				st = LBS_OK;
			}
		}
	}
	if (st == LBS_OK) {
		/* quotas beyond the CPUs (refused above LBS_TESTBED_OVERSUBSCRIBE
		 * times them, by lbs_testbed_check): said, not silent */
		long online;
		double peak = lbs_testbed_peak_cores(&sc, &online);
		if (peak > (double)online)
			fprintf(stderr, "%s: warning: the workers' quotas sum to %.2f cores at their peak, more than "
				"the %ld online CPUs: the workers will be limited by each other, not only by their "
				"quotas (doc/validation.md)\n", cmd, peak, online);
	}
	if (st == LBS_OK)
		st = lbs_testbed_probe(&sc, &err);
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* The profile measured now replaces every group's: the simulation
	 * predicts from this machine's own measurement. */
	if (st == LBS_OK && o.calibrate)
		st = lbs_testbed_calibrate(&scs[0], o.calibrate, o.quiet, &err);
	/* What time-sharing a core costs, measured next, goes into the
	 * simulation's scenario only: the testbed pays it for real. */
	sim_measured ms;
	char (*refill_sets[MAX_VARIANTS])[LBS_NAME_MAX + 64] = { NULL };
	if (st == LBS_OK && o.calibrate) { /* the variants again, with the profile now there */
		BASE(true);
		for (size_t v = 0; v < n_scs; v++)
			lbs_scenario_destroy(&scs[v]);
		for (n_scs = 0; n_scs < nv && st == LBS_OK; n_scs++) {
			for (size_t k = 0; k < vars[n_scs].n_sets; k++)
				base[nbase + k] = vars[n_scs].sets[k];
			if ((st = lbs_scenario_load(&scs[n_scs], argv[optind], base, nbase + vars[n_scs].n_sets, &err)) !=
			    LBS_OK)
				break;
		}
	}
#undef BASE
	if (st == LBS_OK && is_validate)
		st = sim_measure(&scs[0], &o, o.calibrate != NULL, &ms, &err);
	for (size_t v = 0; v < nv && st == LBS_OK && is_validate; v++) {
		for (size_t k = 0; k < vars[v].n_sets; k++)
			base[nbase + k] = vars[v].sets[k];
		if ((st = sim_load(&scs[v], argv[optind], base, nbase + vars[v].n_sets, &o, &ms, &sims[v],
				   &refill_sets[v], &err)) == LBS_OK)
			n_sims++;
	}
	/* The simulated ensemble (--sim-seeds), where the time to target is
	 * compared: each variant's simulation again, with noise on each
	 * iteration's compute in every group that has none of its own. */
	lbs_scenario ens[MAX_VARIANTS];
	size_t n_ens = 0;
	char (*ens_refill[MAX_VARIANTS])[LBS_NAME_MAX + 64] = { NULL };
	char (*noise_sets)[LBS_NAME_MAX + 64] = NULL;
	if (st == LBS_OK && is_validate && o.sim_seeds > 1 && has_target(&sims[0], &scs[0]))
		st = ensemble_sets(&sims[0], &o, &noise_sets, &err);
	for (size_t v = 0; v < nv && st == LBS_OK && noise_sets; v++) {
		size_t m = nbase;
		for (size_t k = 0; k < vars[v].n_sets; k++)
			base[m++] = vars[v].sets[k];
		for (size_t k = 0; k < 2 * sc.n_groups && noise_sets[k][0]; k++)
			base[m++] = noise_sets[k];
		if ((st = sim_load(&scs[v], argv[optind], base, m, &o, &ms, &ens[v], &ens_refill[v], &err)) == LBS_OK)
			n_ens++;
	}
	if (st != LBS_OK) {
		fprintf(stderr, "%s: %s\n", cmd, err.msg);
		rc = st;
	} else if (is_validate) {
		const lbs_scenario *sim_of[MAX_POLICIES], *sc_of[MAX_POLICIES];
		lbs_scenario *ens_of[MAX_POLICIES];
		const char *names[MAX_POLICIES], *labels[MAX_POLICIES];
		char text[MAX_POLICIES][LBS_NAME_MAX + 48];
		size_t np = 0;
		for (size_t v = 0; v < nv; v++)
			for (size_t p = 0; p < npol; p++) {
				if (skip[v][p])
					continue;
				sim_of[np] = &sims[v];
				sc_of[np] = &scs[v];
				ens_of[np] = n_ens ? &ens[v] : NULL;
				names[np] = policies[p];
				labels[np] = vars[v].label[0] ? lbs_fmt(text[np], sizeof text[np], "%s/%s", policies[p],
									vars[v].label)
							       : policies[p];
				np++;
			}
		rc = validate(sim_of, sc_of, ens_of, names, labels, np, &o);
	} else {
		rc = testbed(&scs[0], policies, npol, &o);
	}
	for (size_t v = 0; v < n_sims; v++)
		lbs_scenario_destroy(&sims[v]);
	for (size_t v = 0; v < n_ens; v++)
		lbs_scenario_destroy(&ens[v]);
	for (size_t v = 0; v < nv; v++)
		free(ens_refill[v]);
	free(noise_sets);
	for (size_t v = 0; v < n_scs; v++)
		lbs_scenario_destroy(&scs[v]);
	for (size_t v = 0; v < nv; v++)
		free(refill_sets[v]);
	lbs_scenario_destroy(&sc);
	free(base);
	free(profile_sets);
	free(o.overrides);
	return rc;
}

int lbs_testbed_command(int argc, char **argv)
{
	return command(argc, argv, false);
}

int lbs_validate_command(int argc, char **argv)
{
	return command(argc, argv, true);
}
