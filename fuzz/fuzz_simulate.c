/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Fuzzes whole runs: the input bytes choose a scenario within the
 * documented ranges of its keys (doc/scenario-keys.md), their extremes
 * included (a time of 1 ns or 1 h a sample, an availability of 1e-300, a
 * gradient of 1e13 parameters at 1e-300 bit/s, 1-sample steal chunks,
 * background jobs of 1 ns phases), which is written as an INI file, loaded,
 * built and run for a few iterations with a cap on events and CPU time,
 * recording into a results database with one row per worker per iteration.
 *
 * What must hold: the scenario is refused as bad input (LBS_EINPUT, exit 3
 * of lbsim run), or it runs to its end or to a cap (LBS_EINTR), or
 * stops at the limit of simulated time (LBS_EINPUT); any other status is a
 * finding. Every iteration it completes is consistent: finite times, each
 * iteration starting where the previous ended, start <= compute end <= end,
 * the slowest worker ending the compute phase, the straggler gap the spread
 * of the compute times, batches within 0..max_batch summing to the global
 * batch (or to less, for a policy that may shrink it), and the recorder
 * accepting it (its NOT NULL columns refuse a NaN). A finding aborts, with
 * the scenario on stderr. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <gsl/gsl_errno.h>
#include <sqlite3.h>

#include "fuzz/harness.h"
#include "sim/recorder.h"
#include "sim/run.h"
#include "sim/scenario.h"
#include "util/buf.h"

/* The events a run may take here: enough for a few iterations of most
 * scenarios, few enough that an input takes milliseconds (the engine looks
 * at the cap every LBS_ENGINE_POLL events). Events can be costly (a
 * background job may draw 1e7 phases in one), so a quarter of a second of
 * CPU time is a cap too: SIGVTALRM (libFuzzer's own timeout is SIGALRM) sets the
 * run's interrupt flag, which the engine looks at before every event. */
#define EVENT_CAP 500000
#define CPU_CAP_US 250000

static volatile sig_atomic_t out_of_time;

static void on_cpu_cap(int sig)
{
	(void)sig;
	out_of_time = 1;
}

typedef struct bytes {
	const uint8_t *p;
	size_t n;
} bytes;

/* The next choice among k (0 once the input is used up). */
static unsigned pick(bytes *b, unsigned k)
{
	if (!b->n)
		return 0;
	b->n--;
	return *b->p++ % k;
}

static const char *one_of(bytes *b, const char *const *v, unsigned n)
{
	return v[pick(b, n)];
}
#define ONE_OF(b, ...) one_of(b, (const char *const[]){ __VA_ARGS__ }, \
			      sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(const char *))

typedef struct check_ctx {
	const lbs_run *run;
	lbs_recorder *rec;
	int64_t next;     /* the iteration expected next */
	double prev_end;  /* the previous iteration's end */
	const char *text; /* the scenario, for the report */
} check_ctx;

static void finding(const check_ctx *c, const char *what, long long it)
{
	fprintf(stderr, "fuzz_simulate: %s (iteration %lld)\n--- scenario ---\n%s--- end ---\n", what, it,
		c->text);
	abort();
}

static lbs_status on_iteration(void *ctx, const lbs_iteration_record *r, lbs_error *err)
{
	check_ctx *c = ctx;
	const lbs_run *run = c->run;
	long long it = (long long)r->iteration;
	if (r->iteration != c->next)
		finding(c, "iterations out of order", it);
	c->next++;
	if (!isfinite(r->start_s) || !isfinite(r->compute_end_s) || !isfinite(r->end_s) ||
	    !isfinite(r->straggler_gap_s) || !isfinite(r->aggregation_s) || !isfinite(r->decision_s))
		finding(c, "a time that is not finite", it);
	/* [sync] ssp, asp, local-sgd: no barrier, so an iteration need not
	 * start where the last one ended, but they end in order. */
	const int mode = run->sc->sync.mode;
	const bool own = lbs_sync_per_worker(mode);
	if (!own && r->start_s != c->prev_end)
		finding(c, "an iteration that does not start where the previous one ended", it);
	if (own && r->end_s < c->prev_end)
		finding(c, "an iteration that ends before the previous one", it);
	c->prev_end = r->end_s;
	if (!(r->start_s <= r->compute_end_s && r->compute_end_s <= r->end_s))
		finding(c, "start <= compute end <= end does not hold", it);
	if (r->aggregation_s != r->end_s - r->compute_end_s)
		finding(c, "the aggregation time is not end - compute end", it);
	double lo = INFINITY, hi = -INFINITY;
	int64_t planned = 0, processed = 0;
	for (size_t i = 0; i < r->n_workers; i++) {
		double t = r->compute_s[i];
		if (!isfinite(t) || t < 0)
			finding(c, "a worker's compute time is not finite and >= 0", it);
		lo = t < lo ? t : lo;
		hi = t > hi ? t : hi;
		size_t w = r->first_worker + i; /* asp: one worker's update */
		int64_t plan = r->planned[r->n_planned ? w : i];
		if (r->batch[i] < 0 || plan < 0 || plan > run->max_batch[w])
			finding(c, "a batch outside 0..max_batch", it);
		planned += plan;
		processed += r->batch[i];
		for (size_t k = 0; r->readings && k < r->n_readings; k++)
			if (!isfinite(r->readings[i * r->n_readings + k]))
				finding(c, "a reading that is not finite", it);
	}
	if (r->straggler_gap_s != hi - lo)
		finding(c, "the straggler gap is not the spread of the compute times", it);
	/* The compute phase ends with the slowest worker (to rounding: its
	 * time is taken from the same start). */
	double tol = 1e-9 * fmax(1.0, fabs(r->compute_end_s));
	if (!own && fabs(r->start_s + hi - r->compute_end_s) > tol)
		finding(c, "the compute phase does not end with the slowest worker", it);
	int64_t B = run->sc->run.global_batch;
	/* dropcompute keeps what was finished by the limit */
	if (processed != r->global_batch ||
	    (mode == LBS_SYNC_DROPCOMPUTE ? processed > planned : processed != planned))
		finding(c, "the samples processed are not the samples planned", it);
	if (mode != LBS_SYNC_ASP &&
	    (run->info.shrinks_global_batch ? !(planned > 0 && planned <= B) : planned != B))
		finding(c, "the batches do not sum to the global batch", it);
	for (size_t k = 0; k < r->n_vars; k++)
		if (isnan(r->vars[k].value))
			finding(c, "a policy variable that is NaN", it);
	lbs_status st = lbs_recorder_iteration(c->rec, r, err);
	if (st != LBS_OK)
		finding(c, err->msg, it);
	return LBS_OK;
}

/* "KEY = one of the values" on its own line: one choice per statement, so
 * the bytes are taken in the same order whatever the compiler (the order
 * in which a call's arguments are evaluated is unspecified in C). */
#define KV(t, b, key, ...) lbs_buf_printf(t, "%s = %s\n", key, ONE_OF(b, __VA_ARGS__))

/* Writes the scenario the bytes choose; *network: its topology is not
 * none; *groups: its worker groups; *oracle: its policy is the oracle. */
/* What the scenario's choices allow of the [sync] modes. */
typedef struct sync_room {
	bool epochs, ring, static_policy, whole_shares;
} sync_room;

static void scenario_text(bytes *b, lbs_buf *t, bool *network, unsigned *groups_out, bool *oracle, sync_room *room)
{
	static const char *const policies[] = { "static", "static-proportional", "dbs", "lbbsp-gpu",
						"lbbsp-cpu", "work-stealing", "oracle" };
	const char *policy = policies[pick(b, 7)];
	*oracle = !strcmp(policy, "oracle");
	room->static_policy = !strcmp(policy, "static");
	room->whole_shares = strcmp(policy, "work-stealing") != 0;
	static const long long batches[] = { 1, 7, 64, 64, 256, 256, 4096, 1000000, 1000000000 };
	long long batch = batches[pick(b, 9)];
	lbs_buf_printf(t, "[run]\n");
	KV(t, b, "seed", "1", "2", "9007199254740991");
	lbs_buf_printf(t, "global_batch = %lld\n", batch);
	bool epochs = pick(b, 3) == 0;
	room->epochs = epochs;
	if (epochs) { /* an epoch of 1 to 4 batches, or (rarely) less than one */
		lbs_buf_printf(t, "epochs = %u\n", 1 + pick(b, 3));
		long long samples = pick(b, 8) ? batch * (1 + pick(b, 4)) : batch / 2 + 1;
		lbs_buf_printf(t, "dataset_samples = %lld\n", samples);
	} else {
		lbs_buf_printf(t, "iterations = %u\n", 1 + pick(b, 5));
	}
	KV(t, b, "worker_events", "auto", "always");
	lbs_buf_printf(t, "[model]\n");
	if (pick(b, 2)) {
		KV(t, b, "parameters", "1", "1000", "25557032", "10000000000000");
		KV(t, b, "bytes_per_parameter", "4", "2", "1e-6", "64");
	} else {
		KV(t, b, "gradient", "0 B", "1 B", "100 MB", "10 TB");
	}
	const char *topo = ONE_OF(b, "ring", "ps", "none");
	*network = strcmp(topo, "none") != 0;
	room->ring = !strcmp(topo, "ring");
	lbs_buf_printf(t, "[network]\ntopology = %s\n", topo);
	if (strcmp(topo, "none")) {
		KV(t, b, "bandwidth", "1e-300 bit/s", "1 bit/s", "1 Gbit/s", "10 Gbit/s", "100 TB/s");
		KV(t, b, "latency", "0 s", "1 ns", "50 us", "10 s");
		if (!strcmp(topo, "ps"))
			KV(t, b, "servers", "1", "4", "100000");
	}
	lbs_buf_printf(t, "[policy]\nname = %s\n", policy);
	if (!strcmp(policy, "work-stealing")) {
		lbs_buf_printf(t, "[policy.work-stealing]\n");
		KV(t, b, "chunk", "1", "8", "1000", "1000000000");
		KV(t, b, "steal_latency", "0 s", "1 ms", "1 h");
	} else if (!strcmp(policy, "dbs")) {
		lbs_buf_printf(t, "[policy.dbs]\n");
		KV(t, b, "interval", "0", "1", "3");
		KV(t, b, "rounding", "largest-remainder", "authors");
	} else if (!strcmp(policy, "lbbsp-gpu")) {
		lbs_buf_printf(t, "[policy.lbbsp-gpu]\n");
		KV(t, b, "window", "1", "5", "1000000");
		KV(t, b, "step", "0", "1", "1000000000");
	} else if (!strcmp(policy, "lbbsp-cpu")) {
		lbs_buf_printf(t, "[policy.lbbsp-cpu]\n");
		KV(t, b, "predictor", "narx", "ema", "last", "arima");
	}
	/* A generator drives group g0 (which then has no constant availability). */
	unsigned gen = pick(b, 4);
	unsigned groups = 1 + pick(b, 3);
	*groups_out = groups;
	for (unsigned g = 0; g < groups; g++) {
		lbs_buf_printf(t, "[workers.g%u]\n", g);
		/* Up to 300 workers: a policy's work per event may grow with them
		 * (work stealing looks at every worker), and the event cap must
		 * keep an input to milliseconds. */
		KV(t, b, "count", "1", "2", "3", "100");
		KV(t, b, "device", "cpu", "gpu");
		if (pick(b, 2)) {
			lbs_buf_printf(t, "cost = linear\n");
			KV(t, b, "t0", "0 s", "1 ms", "1 h");
			KV(t, b, "per_sample", "0 s", "1 ns", "1 us", "1 ms", "1 s", "1 h");
		} else if (pick(b, 2)) {
			lbs_buf_printf(t, "cost = piecewise\n");
			KV(t, b, "t_flat", "1 ns", "10 ms", "1 h");
			KV(t, b, "saturation_batch", "1", "32", "1000000000");
			KV(t, b, "per_sample", "0 s", "1 ns", "1 ms", "1 h");
		} else {
			bool power = pick(b, 2);
			lbs_buf_printf(t, "cost = %s\n", power ? "power" : "quadratic");
			KV(t, b, "t0", "0 s", "1 ms", "1 h");
			KV(t, b, "per_sample", "0 s", "1 ns", "1 ms", "1 h");
			if (power)
				KV(t, b, "exponent", "1e-9", "0.5", "1", "4");
			else
				KV(t, b, "per_sample_sq", "0 s", "1 ns", "1 ms", "1 h");
			if (pick(b, 2))
				KV(t, b, "flat_below", "1", "16", "1000000000");
		}
		if (pick(b, 2))
			KV(t, b, "max_batch", "1", "16", "128", "1000000000");
		const char *avail = ONE_OF(b, "1", "1", "1", "0.5", "0.5", "1e-6", "1e-300", "100");
		if (g > 0 || gen == 0 || gen == 2)
			lbs_buf_printf(t, "availability = %s\n", avail);
		switch (pick(b, 3)) {
		case 1:
			lbs_buf_printf(t, "noise = uniform\n");
			KV(t, b, "noise_low", "-0.99", "0", "0.1");
			KV(t, b, "noise_high", "0.1", "1", "100");
			break;
		case 2:
			lbs_buf_printf(t, "noise = lognormal\n");
			KV(t, b, "noise_sigma", "0.01", "0.5", "5");
			break;
		}
	}
	switch (gen) {
	case 1:
		lbs_buf_printf(t, "[generator.bg]\nkind = background\nworkers = g0\n");
		KV(t, b, "on_mean", "1 ns", "1 us", "1 ms", "1 s", "1e9 s");
		KV(t, b, "off_mean", "1 ns", "1 ms", "1 s", "1e9 s");
		KV(t, b, "load", "0", "0.5", "0.99");
		break;
	case 2:
		if (epochs) {
			lbs_buf_printf(t, "[generator.d]\nkind = dbs_disturbance\nworkers = g0\n");
			KV(t, b, "probability", "0", "0.1", "1");
			KV(t, b, "delay_min", "0 s", "5 s", "1e6 s");
			lbs_buf_printf(t, "delay_max = 1e6 s\nepochs_min = 0\n");
			KV(t, b, "epochs_max", "0", "2");
		}
		break;
	case 3:
		lbs_buf_printf(t, "[generator.c]\nkind = cpu_credits\nworkers = g0\n");
		KV(t, b, "instance_type", "t2.micro", "t2.xlarge", "t3.large");
		break;
	}
}

/* Keys the bytes left after the file choose, given as --set overrides
 * (a section cannot be reopened): the exchange on the workers and each
 * group's re-sizing costs (not for the oracle, which refuses them). The
 * first choice of each is to give nothing, so an input that ends with the
 * file chooses what it chose before these keys came. Each is also written
 * to the text, as a comment, for the report. Returns how many of sets[]
 * it filled. */
#define MAX_SETS 11
static size_t scenario_sets(bytes *b, lbs_buf *t, bool network, unsigned groups, bool oracle,
			    const sync_room *room, char sets[][64])
{
	size_t n = 0;
	bool on_workers = false;
	if (network && pick(b, 2)) {
		lbs_fmt(sets[n++], 64, "network.exchange_on_workers=yes");
		on_workers = true;
	}
	for (unsigned g = 0; g < groups && !oracle && n + 2 <= MAX_SETS; g++) {
		const char *rc = ONE_OF(b, "", "0", "5%", "70%", "10");
		const char *nc = ONE_OF(b, "", "0", "16%", "10");
		if (*rc)
			lbs_fmt(sets[n++], 64, "workers.g%u.resize_cost=%s", g, rc);
		if (*nc)
			lbs_fmt(sets[n++], 64, "workers.g%u.new_batch_cost=%s", g, nc);
	}
	/* a [sync] mode, one time in two when the bytes choose, among those
	 * the scenario allows (doc/model.md: what each mode refuses) */
	const char *mode = ONE_OF(b, "", "", "", "", "ssp", "asp", "local-sgd", "dropcompute");
	bool barrier_free = !room->epochs && room->whole_shares && !oracle && !on_workers;
	if ((!strcmp(mode, "ssp") || !strcmp(mode, "asp")) && !(barrier_free && room->static_policy && !room->ring))
		mode = "";
	if ((!strcmp(mode, "local-sgd") && !barrier_free) || (!strcmp(mode, "dropcompute") && !room->whole_shares))
		mode = "";
	if (!strcmp(mode, "ssp")) {
		lbs_fmt(sets[n++], 64, "sync.mode=ssp");
		lbs_fmt(sets[n++], 64, "sync.staleness=%s", ONE_OF(b, "0", "1", "3"));
	} else if (!strcmp(mode, "local-sgd")) {
		lbs_fmt(sets[n++], 64, "sync.mode=local-sgd");
		lbs_fmt(sets[n++], 64, "sync.period=%s", ONE_OF(b, "1", "2", "5"));
	} else if (!strcmp(mode, "dropcompute")) {
		lbs_fmt(sets[n++], 64, "sync.mode=dropcompute");
		lbs_fmt(sets[n++], 64, "sync.time_limit=%s", ONE_OF(b, "0 s", "1 ms", "1 h"));
		lbs_fmt(sets[n++], 64, "sync.micro_batch=%s", ONE_OF(b, "1", "8", "1000000"));
	} else if (*mode) {
		lbs_fmt(sets[n++], 64, "sync.mode=%s", mode);
	}
	for (size_t i = 0; i < n; i++)
		lbs_buf_printf(t, "; --set %s\n", sets[i]);
	return n;
}

/* 0: refused as bad input; 1: ran to its end; 2: stopped at the event
 * cap or the limit of simulated time. A finding aborts. */
int lbs_fuzz_simulate(const uint8_t *data, size_t size)
{
	gsl_set_error_handler_off();
	bytes b = { data, size };
	lbs_buf text = { 0 };
	bool network = false, oracle = false;
	unsigned groups = 0;
	sync_room room = { 0 };
	scenario_text(&b, &text, &network, &groups, &oracle, &room);
	char sets[MAX_SETS][64];
	const char *set[MAX_SETS];
	size_t n_sets = scenario_sets(&b, &text, network, groups, oracle, &room, sets);
	for (size_t i = 0; i < n_sets; i++)
		set[i] = sets[i];
	if (text.failed)
		abort();
	const char *path = lbs_fuzz_file("simulate.ini", (const uint8_t *)lbs_buf_str(&text), text.len);
	if (getenv("LBS_FUZZ_VERBOSE"))
		fprintf(stderr, "%s", lbs_buf_str(&text));
	check_ctx c = { .text = lbs_buf_str(&text) };
	lbs_error err = { 0 };
	lbs_scenario sc;
	lbs_status st = lbs_scenario_load(&sc, path, set, n_sets, &err);
	if (st != LBS_OK) {
		if (st != LBS_EINPUT)
			finding(&c, err.msg, -1);
		if (getenv("LBS_FUZZ_VERBOSE"))
			fprintf(stderr, "refused: %s\n", err.msg);
		lbs_buf_free(&text);
		return 0;
	}
	lbs_run run;
	if ((st = lbs_run_create(&run, &sc, NULL, &err)) != LBS_OK) {
		if (st != LBS_EINPUT)
			finding(&c, err.msg, -1);
		if (getenv("LBS_FUZZ_VERBOSE"))
			fprintf(stderr, "refused: %s\n", err.msg);
		lbs_scenario_destroy(&sc);
		lbs_buf_free(&text);
		return 0;
	}
	/* One database for every input (its schema made once; the runs'
	 * commits not synced), started afresh past 64 MB. */
	char db[4200];
	snprintf(db, sizeof db, "%s/simulate.db", lbs_fuzz_dir());
	struct stat sb;
	if (stat(db, &sb) == 0 && sb.st_size > (64 << 20))
		unlink(db);
	lbs_recorder rec;
	if (lbs_recorder_open(&rec, db, LBS_DETAIL_WORKERS, &err) != LBS_OK ||
	    sqlite3_exec(rec.db, "PRAGMA synchronous = OFF", NULL, NULL, NULL) != SQLITE_OK ||
	    lbs_recorder_begin(&rec, &run, &err) != LBS_OK)
		finding(&c, err.msg, -1);
	c.run = &run;
	c.rec = &rec;
	run.eng.event_limit = EVENT_CAP;
	struct sigaction sa = { .sa_handler = on_cpu_cap };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGVTALRM, &sa, NULL);
	out_of_time = 0;
	setitimer(ITIMER_VIRTUAL, &(struct itimerval){ .it_value = { 0, CPU_CAP_US } }, NULL);
	st = lbs_run_execute(&run, on_iteration, &c, &out_of_time, &err);
	setitimer(ITIMER_VIRTUAL, &(struct itimerval){ 0 }, NULL);
	int outcome = st == LBS_OK ? 1 : 2;
	if (getenv("LBS_FUZZ_VERBOSE"))
		fprintf(stderr, "status %d after %lld iterations, %llu events\n", (int)st,
			(long long)run.stats.iterations, (unsigned long long)run.stats.events);
	if (st != LBS_OK && st != LBS_EINTR && st != LBS_EINPUT)
		finding(&c, err.msg, (long long)c.next);
	if (run.stats.iterations != c.next)
		finding(&c, "the run's count of iterations is not what it reported", (long long)c.next);
	if (st == LBS_OK && !sc.iterations_per_epoch && c.next != sc.iterations)
		finding(&c, "a run that ended before its iterations", (long long)c.next);
	if (st == LBS_OK) {
		if (lbs_recorder_commit(&rec, &run, 0.0, &err) != LBS_OK)
			finding(&c, err.msg, (long long)c.next);
	} else {
		lbs_recorder_abort(&rec);
	}
	lbs_recorder_close(&rec);
	lbs_run_destroy(&run);
	lbs_scenario_destroy(&sc);
	lbs_buf_free(&text);
	return outcome;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lbs_fuzz_simulate(data, size);
	return 0;
}
