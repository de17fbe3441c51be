/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lbsim benchmarks: how fast the event engine and the BSP run go, for
 * N = 16, 256, 4096 and 65536.
 *
 *   bench [--quick] [--lbsim PATH]
 *
 * 1. The engine alone, in the classic "hold model": a queue holding N events;
 *    pop the least, push one at now + Exp(1); repeat. Run once on the bare
 *    queue (sim/queue.h) and once through the engine (sim/engine.h), where
 *    each event's handler reschedules itself.
 * 2. The full BSP model (sim/run.h) for N workers on the canonical workload,
 *    built from a scenario file exactly as `lbsim` builds it, in both engine
 *    modes (worker_events = auto and always), next to a naive binary-heap
 *    DES of the same workload (bench/naive_des.c, no lbsim code), and, with
 *    --lbsim, the `lbsim run` command line itself (--detail runs, its setup
 *    and database included). lbsim's rates are printed as ratios to the
 *    naive DES measured in the same repeat, so the figure holds on any
 *    machine.
 * 3. --memory: the heap a run of N workers keeps (mallinfo2), built and
 *    after one iteration, for N from 1,000 to 256,000: bytes per worker
 *    that stay flat show memory linear in the workers.
 *
 * Every figure is the median of REPEATS measurements of CPU time (getrusage:
 * user + system of this process, or of the child for the command line), so
 * other load on a shared machine does not cut it the way it cuts wall time;
 * the spread printed is (max - min) / median of the repeats. The
 * measurements of one repeat run one after another (interleaved), so a
 * ratio compares runs made under the same conditions.
 * --quick runs 10x fewer events (a smoke test for CI, not a measurement). */
#include <inttypes.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "bench/heap.h"
#include "bench/naive_des.h"
#include "util/clock.h"
#include "sim/engine.h"
#include "sim/queue.h"
#include "sim/run.h"
#include "sim/scenario.h"

#define REPEATS 5
#define N_SIZES 4
static const size_t sizes[N_SIZES] = { 16, 256, 4096, 65536 };

/* Increments are drawn once and cycled, so the hold loop measures the queue
 * and not the random number generator. */
#define INC_BITS 16
#define INC_N (1u << INC_BITS)
#define INC_MASK (INC_N - 1)

/* Hold operations per measurement (pop+push pairs), and worker-iterations
 * per BSP measurement, sized for roughly 0.3-1 s a measurement. With
 * worker_events = auto a worker-iteration costs no event, so that mode gets
 * 10x more of them to run as long. */
#define HOLD_OPS 10000000ull
#define WORKER_ITERATIONS 5000000ll
#define AUTO_FACTOR 6
#define NAIVE_WORKER_ITERATIONS 2000000ll

static double tv_s(struct timeval tv) { return (double)tv.tv_sec + 1e-6 * (double)tv.tv_usec; }

/* CPU seconds (user + system) this process has used. */
static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return tv_s(ru.ru_utime) + tv_s(ru.ru_stime);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median and relative spread ((max - min) / median) of n samples. */
typedef struct summary { double median, spread; } summary;

static summary summarise(const double *v, size_t n)
{
	double s[32];
	memcpy(s, v, n * sizeof *s);
	qsort(s, n, sizeof *s, cmp_double);
	double med = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
	return (summary){ med, med > 0 ? (s[n - 1] - s[0]) / med : 0 };
}

static void die(const lbs_error *err, const char *what)
{
	fprintf(stderr, "bench: %s: %s\n", what, err->msg[0] ? err->msg : "failed");
	exit(err->status ? (int)err->status : 1);
}

/* ---- 1. hold model ---------------------------------------------------- */

/* Events/s (pop+push pairs per second) of the bare queue with n pending. */
static double hold_queue(size_t n, uint64_t ops, const double *inc)
{
	lbs_error err = { 0 };
	lbs_queue q;
	if (lbs_queue_init(&q, n, &err) != LBS_OK)
		die(&err, "queue init");
	uint32_t k = 0;
	for (size_t i = 0; i < n; i++, k++)
		if (lbs_queue_push(&q, inc[k & INC_MASK], (uint32_t)i, &err) != LBS_OK)
			die(&err, "queue push");
	lbs_event ev;
	double t0 = cpu_s();
	for (uint64_t i = 0; i < ops; i++, k++) {
		if (!lbs_queue_pop(&q, &ev))
			abort(); /* the queue never empties in the hold model */
		if (lbs_queue_push(&q, ev.time + inc[k & INC_MASK], lbs_event_handle(&ev), &err) != LBS_OK)
			die(&err, "queue push");
	}
	double cpu = cpu_s() - t0;
	lbs_queue_destroy(&q);
	return (double)ops / cpu;
}

typedef struct hold_ctx {
	const double *inc;
	uint32_t k;
	uint64_t left; /* events still to dispatch */
} hold_ctx;

/* Each of the n handlers owns one pending event; its arg is its own handle
 * (handles are numbered from 0 in registration order). */
static lbs_status hold_handler(void *ctx, uint32_t self, lbs_engine *eng)
{
	hold_ctx *h = ctx;
	if (--h->left == 0)
		eng->stop = true;
	return lbs_engine_at(eng, lbs_engine_now(eng) + h->inc[h->k++ & INC_MASK], self);
}

/* Events/s dispatched by the engine with n events pending. */
static double hold_engine(size_t n, uint64_t ops, const double *inc)
{
	lbs_error err = { 0 };
	lbs_engine eng;
	if (lbs_engine_init(&eng, n, &err) != LBS_OK)
		die(&err, "engine init");
	hold_ctx h = { inc, 0, ops };
	for (size_t i = 0; i < n; i++) {
		uint32_t handle;
		if (lbs_engine_register(&eng, hold_handler, &h, (uint32_t)i, &handle) != LBS_OK)
			die(&err, "engine register");
		if (handle != i) {
			fprintf(stderr, "bench: handle %" PRIu32 " registered as %zu\n", handle, i);
			exit(1);
		}
		if (lbs_engine_at(&eng, inc[h.k++ & INC_MASK], handle) != LBS_OK)
			die(&err, "engine schedule");
	}
	double t0 = cpu_s();
	if (lbs_engine_run(&eng) != LBS_OK)
		die(&err, "engine run");
	double cpu = cpu_s() - t0;
	double rate = (double)eng.events / cpu;
	if (eng.events != ops) {
		fprintf(stderr, "bench: engine dispatched %" PRIu64 " events, expected %" PRIu64 "\n",
			eng.events, ops);
		exit(1);
	}
	lbs_engine_destroy(&eng);
	return rate;
}

/* ---- 2. the full BSP model ------------------------------------------- */

/* The workload, for n workers (a multiple of 4): static policy, 32 samples
 * per worker, linear cost of 1 ms per sample (t0 = 0), uniform noise adding
 * 0-10% per iteration, ring all-reduce of 100 MB at 10 GB/s with 5 us per
 * step. Every 4th worker runs at half speed: here that is a group of n/4
 * slow workers after 3n/4 fast ones. Which workers are slow does not change
 * the results: the static policy gives every worker the same batch, and the
 * iteration ends with the slowest worker whichever index it has. */
static void write_scenario(FILE *f, size_t n)
{
	fprintf(f,
		"[run]\n"
		"name = bench-%zu\n"
		"seed = 1\n"
		"global_batch = %zu\n"
		"iterations = 1\n" /* set per measurement with an override */
		"\n"
		"[model]\n"
		"gradient = 100 MB\n"
		"\n"
		"[network]\n"
		"topology = ring\n"
		"bandwidth = 10 GB/s\n"
		"latency = 5 us\n"
		"\n"
		"[policy]\n"
		"name = static\n",
		n, 32 * n);
	static const struct { const char *name; size_t num; const char *availability; } groups[] = {
		{ "fast", 3, "1" },
		{ "slow", 1, "0.5" },
	};
	for (size_t g = 0; g < 2; g++)
		fprintf(f,
			"\n"
			"[workers.%s]\n"
			"count = %zu\n"
			"device = cpu\n"
			"cost = linear\n"
			"t0 = 0 s\n"
			"per_sample = 1 ms\n"
			"availability = %s\n"
			"noise = uniform\n"
			"noise_low = 0\n"
			"noise_high = 10%%\n",
			groups[g].name, n * groups[g].num / 4, groups[g].availability);
}

typedef struct bsp_result {
	double worker_iter_per_s;
	double events_per_s;
	uint64_t events;
} bsp_result;

/* Writes the workload for n workers to a new temporary file, its name into
 * path. */
static void write_workload(size_t n, char *path, size_t size)
{
	const char *dir = getenv("TMPDIR");
	snprintf(path, size, "%s/lbsim-bench-XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		perror("bench: temporary scenario");
		exit(4);
	}
	write_scenario(f, n);
	if (fclose(f) != 0) {
		perror("bench: temporary scenario");
		unlink(path);
		exit(4);
	}
}

/* Loads the workload for n workers from a temporary scenario file, with
 * [run] iterations and worker_events set the way `lbsim --set` sets them. */
static void load_workload(lbs_scenario *sc, size_t n, int64_t iterations, const char *mode)
{
	char path[1024];
	write_workload(n, path, sizeof path);
	char it[64], ev[64];
	snprintf(it, sizeof it, "run.iterations=%" PRId64, iterations);
	snprintf(ev, sizeof ev, "run.worker_events=%s", mode);
	const char *const overrides[] = { it, ev };
	lbs_error err = { 0 };
	lbs_status st = lbs_scenario_load(sc, path, overrides, 2, &err);
	unlink(path);
	if (st != LBS_OK)
		die(&err, "scenario");
}

/* One run, built afresh (not timed) and executed without an observer, so
 * nothing but the simulation is measured. */
static bsp_result bench_bsp(const lbs_scenario *sc)
{
	lbs_error err = { 0 };
	lbs_run run;
	if (lbs_run_create(&run, sc, NULL, &err) != LBS_OK)
		die(&err, "run create");
	double t0 = cpu_s();
	if (lbs_run_execute(&run, NULL, NULL, NULL, &err) != LBS_OK)
		die(&err, "run");
	double cpu = cpu_s() - t0;
	bsp_result r = { (double)run.stats.iterations * (double)run.n / cpu, (double)run.stats.events / cpu,
			 run.stats.events };
	lbs_run_destroy(&run);
	return r;
}

/* Worker-iterations per CPU second of the naive DES. */
static double bench_naive(size_t n, int64_t iterations)
{
	naive_des_result res;
	double t0 = cpu_s();
	if (naive_des_run(n, iterations, 1, &res) != 0) {
		fprintf(stderr, "bench: out of memory\n");
		exit(5);
	}
	double cpu = cpu_s() - t0;
	if (res.events != (uint64_t)iterations * (n + 1)) {
		fprintf(stderr, "bench: naive DES dispatched %" PRIu64 " events\n", res.events);
		exit(1);
	}
	return (double)iterations * (double)n / cpu;
}

/* Worker-iterations per CPU second of the command line `lbsim run` on the
 * scenario file, its setup, database and exit included (the CPU time of
 * the child, from wait4). */
static double bench_cli(const char *lbsim, const char *scenario, size_t n, int64_t iterations)
{
	const char *dir = getenv("TMPDIR");
	char db[1024], it[64];
	snprintf(db, sizeof db, "%s/lbsim-bench-%ld.db", dir && *dir ? dir : "/tmp", (long)getpid());
	snprintf(it, sizeof it, "run.iterations=%" PRId64, iterations);
	unlink(db);
	pid_t pid = fork();
	if (pid < 0) {
		perror("bench: fork");
		exit(4);
	}
	if (pid == 0) {
		execl(lbsim, lbsim, "run", scenario, "-o", db, "--detail", "runs", "-q", "--set", it,
		      (char *)NULL);
		perror(lbsim);
		_exit(127);
	}
	int status;
	struct rusage ru;
	if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "bench: %s run %s failed\n", lbsim, scenario);
		exit(1);
	}
	unlink(db);
	return (double)iterations * (double)n / (tv_s(ru.ru_utime) + tv_s(ru.ru_stime));
}

typedef struct decision_acc {
	double sum_decision_s, max_decision_s, sum_iteration_s;
	long iterations;
	double learn_s, predict_s, learn_parallel_s, max_learn_parallel_s;
} decision_acc;

static lbs_status decision_observer(void *ctx, const lbs_iteration_record *rec, lbs_error *err)
{
	(void)err;
	decision_acc *a = ctx;
	a->sum_decision_s += rec->decision_s;
	if (rec->decision_s > a->max_decision_s)
		a->max_decision_s = rec->decision_s;
	a->sum_iteration_s += rec->end_s - rec->start_s;
	a->iterations++;
	for (size_t v = 0; v < rec->n_vars; v++) {
		if (!strcmp(rec->vars[v].name, "learn_s"))
			a->learn_s = rec->vars[v].value;
		if (!strcmp(rec->vars[v].name, "predict_s"))
			a->predict_s = rec->vars[v].value;
		if (!strcmp(rec->vars[v].name, "learn_parallel_s")) {
			double d = rec->vars[v].value - a->learn_parallel_s;
			if (d > a->max_learn_parallel_s)
				a->max_learn_parallel_s = d;
			a->learn_parallel_s = rec->vars[v].value;
		}
	}
	return LBS_OK;
}

/* LB-BSP (CPU) with NARX at 96 workers: the real time of one decision as a
 * share of the simulated iteration time (Chen et al. report under 1.1%). */
static void bench_decision(const char *path, int scale)
{
	char it[64];
	snprintf(it, sizeof it, "run.iterations=%d", 200 / scale);
	const char *const overrides[] = { it };
	lbs_scenario sc;
	lbs_run run;
	lbs_error err = { 0 };
	if (lbs_scenario_load(&sc, path, overrides, 1, &err) != LBS_OK)
		die(&err, "decision scenario");
	if (lbs_run_create(&run, &sc, NULL, &err) != LBS_OK)
		die(&err, "decision run");
	decision_acc a = { 0 };
	if (lbs_run_execute(&run, decision_observer, &a, NULL, &err) != LBS_OK)
		die(&err, "decision run");
	double n = a.iterations ? (double)a.iterations : 1;
	double iter = a.sum_iteration_s / n;
	printf("\nLB-BSP decision cost: %s, %s, %lld workers, %ld iterations\n", path, run.policy->name,
	       (long long)sc.n_workers, a.iterations);
	printf("  simulated iteration        %10.3f ms\n", 1e3 * iter);
	printf("  decision (mean, real)      %10.3f ms  %6.3f%% of the iteration (max %.1f ms)\n",
	       1e3 * a.sum_decision_s / n, 100 * a.sum_decision_s / n / iter, 1e3 * a.max_decision_s);
	printf("    of which predict + split %10.3f ms  %6.3f%%  (on the critical path)\n",
	       1e3 * a.predict_s / n, 100 * a.predict_s / n / iter);
	printf("    of which learning        %10.3f ms  %6.3f%%  (training; could run off the path)\n",
	       1e3 * a.learn_s / n, 100 * a.learn_s / n / iter);
	printf("  learning, one predictor per worker, all at once (the slowest each iteration):\n");
	printf("                             %10.3f ms  %6.3f%%  (max %.1f ms)\n", 1e3 * a.learn_parallel_s / n,
	       100 * a.learn_parallel_s / n / iter, 1e3 * a.max_learn_parallel_s);
	lbs_run_destroy(&run);
	lbs_scenario_destroy(&sc);
}

/* Memory against workers: the heap a run keeps once built and after its
 * first iteration (no observer: what the recorder keeps is per row, not per
 * worker), per worker, and the increment between sizes per added worker. */
static void bench_memory(int scale)
{
	static const size_t n_sizes[] = { 1000, 4000, 16000, 64000, 256000 };
	size_t n_max = scale > 1 ? 3 : sizeof n_sizes / sizeof *n_sizes;
	printf("memory: heap kept by a run of N workers (the full BSP model above), after one iteration\n");
	printf("%8s %12s %14s %20s\n", "N", "heap MB", "bytes/worker", "added bytes/worker");
	size_t prev_n = 0, prev_heap = 0;
	for (size_t s = 0; s < n_max; s++) {
		size_t n = n_sizes[s];
		lbs_scenario sc;
		load_workload(&sc, n, 1, "auto");
		lbs_error err = { 0 };
		lbs_run run;
		size_t h0 = heap_in_use();
		if (lbs_run_create(&run, &sc, NULL, &err) != LBS_OK)
			die(&err, "run create");
		if (lbs_run_execute(&run, NULL, NULL, NULL, &err) != LBS_OK)
			die(&err, "run");
		size_t heap = heap_in_use() - h0;
		lbs_run_destroy(&run);
		lbs_scenario_destroy(&sc);
		printf("%8zu %12.2f %14.1f", n, (double)heap / 1e6, (double)heap / (double)n);
		if (prev_n)
			printf(" %20.1f", ((double)heap - (double)prev_heap) / (double)(n - prev_n));
		printf("\n");
		fflush(stdout);
		prev_n = n;
		prev_heap = heap;
	}
}

int main(int argc, char **argv)
{
	int scale = 1;
	const char *decision = NULL, *lbsim = NULL;
	bool decision_only = false, memory_only = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0) {
			scale = 10;
		} else if (strcmp(argv[i], "--lbsim") == 0 && i + 1 < argc) {
			lbsim = argv[++i];
		} else if (strcmp(argv[i], "--memory") == 0) {
			memory_only = true;
		} else if ((strcmp(argv[i], "--decision") == 0 || strcmp(argv[i], "--decision-only") == 0) &&
			   i + 1 < argc) {
			decision_only = strcmp(argv[i], "--decision-only") == 0;
			decision = argv[++i];
		} else {
			fprintf(stderr, "usage: %s [--quick] [--lbsim PATH] [--memory | --decision | --decision-only SCENARIO.ini]\n",
				argv[0]);
			return 2;
		}
	}
	if (decision_only) {   /* the LB-BSP decision cost alone (make reproduce) */
		bench_decision(decision, scale);
		return 0;
	}
	if (memory_only) {
		bench_memory(scale);
		return 0;
	}

	double *inc = malloc(INC_N * sizeof *inc);
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_taus2);
	if (!inc || !rng) {
		fprintf(stderr, "bench: out of memory\n");
		return 5;
	}
	gsl_rng_set(rng, 1);
	for (size_t i = 0; i < INC_N; i++)
		inc[i] = gsl_ran_exponential(rng, 1.0);
	gsl_rng_free(rng);

	uint64_t ops = HOLD_OPS / (uint64_t)scale;
	printf("lbsim bench%s: CPU time (getrusage), median of %d interleaved repeats;\n"
	       "spread = (max - min) / median of the repeats\n\n",
	       scale > 1 ? " --quick (10x fewer events: a smoke test, not a measurement)" : "", REPEATS);
	printf("engine, hold model: N events pending; pop the least, push at now + Exp(1)\n");
	printf("(%" PRIu64 " pop+push pairs per run, increments precomputed)\n", ops);
	printf("%8s %12s %8s %12s %8s\n", "N", "queue Mev/s", "spread", "engine Mev/s", "spread");
	for (size_t s = 0; s < N_SIZES; s++) {
		double q[REPEATS], e[REPEATS];
		for (int r = 0; r < REPEATS; r++) {
			q[r] = hold_queue(sizes[s], ops, inc);
			e[r] = hold_engine(sizes[s], ops, inc);
		}
		summary sq = summarise(q, REPEATS), se = summarise(e, REPEATS);
		printf("%8zu %12.1f %7.0f%% %12.1f %7.0f%%\n", sizes[s], sq.median / 1e6, 100 * sq.spread,
		       se.median / 1e6, 100 * se.spread);
		fflush(stdout);
	}
	free(inc);

	printf("\nfull BSP model, the canonical workload: static, 32 samples/worker at 1 ms, every 4th\n"
	       "worker at half speed, noise U[0,10%%], ring all-reduce 100 MB at 10 GB/s, 5 us/step\n");
	printf("(worker-iterations per run: naive DES %lld; lbsim %lld with worker_events = auto (in\n"
	       " process, no observer; and `lbsim run --detail runs`), %lld with always.\n"
	       " Mwi/s = iterations * N / CPU s; x naive = median over the repeats of lbsim's rate\n"
	       " over the naive DES's in the same repeat)\n",
	       (long long)(NAIVE_WORKER_ITERATIONS / scale), (long long)(AUTO_FACTOR * WORKER_ITERATIONS / scale),
	       (long long)(WORKER_ITERATIONS / scale));
	printf("%8s %9s %6s | %9s %6s %8s | %9s %6s %8s %9s | %9s %6s %8s\n", "N", "naive", "spread",
	       "auto", "spread", "x naive", "always", "spread", "x naive", "Mev/s", "lbsim run", "spread",
	       "x naive");
	for (size_t s = 0; s < N_SIZES; s++) {
		size_t n = sizes[s];
		int64_t it_naive = NAIVE_WORKER_ITERATIONS / scale / (int64_t)n;
		int64_t it_auto = AUTO_FACTOR * WORKER_ITERATIONS / scale / (int64_t)n;
		int64_t it_always = WORKER_ITERATIONS / scale / (int64_t)n;
		it_naive = it_naive > 1 ? it_naive : 2;
		it_always = it_always > 1 ? it_always : 2;
		lbs_scenario sc_auto, sc_always;
		load_workload(&sc_auto, n, it_auto, "auto");
		load_workload(&sc_always, n, it_always, "always");
		char path[1024];
		if (lbsim)
			write_workload(n, path, sizeof path);
		double naive[REPEATS], aut[REPEATS], alw[REPEATS], ev[REPEATS], cli[REPEATS];
		double r_aut[REPEATS], r_alw[REPEATS], r_cli[REPEATS];
		for (int r = 0; r < REPEATS; r++) {
			naive[r] = bench_naive(n, it_naive);
			aut[r] = bench_bsp(&sc_auto).worker_iter_per_s;
			bsp_result b = bench_bsp(&sc_always);
			alw[r] = b.worker_iter_per_s;
			ev[r] = b.events_per_s;
			cli[r] = lbsim ? bench_cli(lbsim, path, n, it_auto) : 0;
			r_aut[r] = aut[r] / naive[r];
			r_alw[r] = alw[r] / naive[r];
			r_cli[r] = cli[r] / naive[r];
		}
		if (lbsim)
			unlink(path);
		lbs_scenario_destroy(&sc_auto);
		lbs_scenario_destroy(&sc_always);
		summary sn = summarise(naive, REPEATS), sa = summarise(aut, REPEATS), sl = summarise(alw, REPEATS);
		summary sc = summarise(cli, REPEATS);
		printf("%8zu %9.2f %5.0f%% | %9.2f %5.0f%% %8.1f | %9.2f %5.0f%% %8.1f %9.2f |", n, sn.median / 1e6,
		       100 * sn.spread, sa.median / 1e6, 100 * sa.spread, summarise(r_aut, REPEATS).median,
		       sl.median / 1e6, 100 * sl.spread, summarise(r_alw, REPEATS).median,
		       summarise(ev, REPEATS).median / 1e6);
		if (lbsim)
			printf(" %9.2f %5.0f%% %8.1f\n", sc.median / 1e6, 100 * sc.spread,
			       summarise(r_cli, REPEATS).median);
		else
			printf(" %9s\n", "(--lbsim)");
		fflush(stdout);
	}
	if (decision)
		bench_decision(decision, scale);
	return 0;
}
