/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "testbed/testbed.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "models/calib.h"
#include "models/calib/calibrate_cmd.h"
#include "models/calib/convergence.h"
#include "models/nets.h"
#include "models/policy.h"
#include "sim/efficiency.h"
#include "testbed/cgroup.h"
#include "testbed/exchange.h"
#include "testbed/tenant.h"
#include "testbed/torch.h"
#include "testbed/worker.h"
#include "util/clock.h"

static lbs_status refuse(const lbs_scenario *sc, const char *section, const char *key, const char *why,
			 lbs_error *err)
{
	char label[LBS_ERROR_MAX / 2];
	lbs_origin at = lbs_scenario_origin(sc, section, key);
	lbs_origin_format(&at, section, key, label, sizeof label);
	return lbs_error_set(err, LBS_EINPUT, "%s: the testbed cannot emulate this: %s", label, why);
}

double lbs_testbed_peak_cores(const lbs_scenario *sc, long *online)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	*online = n > 0 ? n : 1;
	double sum = 0;
	for (size_t g = 0; g < sc->n_groups; g++)
		sum += (double)sc->groups[g].count *
		       (lbs_testbed_tenant_load(sc, g) > 0 ? 1.0 : fmin(1.0, sc->groups[g].availability));
	return sum;
}

/* Refused before anything is forked: more workers than the machine can
 * hold, or quotas far beyond its CPUs. */
static lbs_status check_size(const lbs_scenario *sc, lbs_error *err)
{
	long online;
	double peak = lbs_testbed_peak_cores(sc, &online);
	long long most = (long long)online * LBS_TESTBED_WORKERS_PER_CPU;
	if (most > LBS_TESTBED_MAX_WORKERS)
		most = LBS_TESTBED_MAX_WORKERS;
	/* named: the group with the most workers */
	size_t big = 0;
	for (size_t g = 1; g < sc->n_groups; g++)
		if (sc->groups[g].count > sc->groups[big].count)
			big = g;
	const char *group = sc->n_groups ? sc->groups[big].name : "";
	char section[LBS_NAME_MAX + 16], why[512];
	lbs_fmt(section, sizeof section, "workers.%s", group);
	if (sc->n_workers > most) {
		lbs_fmt(why, sizeof why, "%lld workers, a process each: at most %lld here (%d per online CPU, "
			"%ld CPUs, and %d in all)", (long long)sc->n_workers, most, LBS_TESTBED_WORKERS_PER_CPU,
			online, LBS_TESTBED_MAX_WORKERS);
		return refuse(sc, section, "count", why, err);
	}
	if (peak > (double)LBS_TESTBED_OVERSUBSCRIBE * (double)online) {
		lbs_fmt(why, sizeof why, "the workers' quotas sum to %.2f cores at their peak, more than %d times "
			"the %ld online CPUs: each would get far less than its quota, and the run would measure "
			"the contention, not the policy", peak, LBS_TESTBED_OVERSUBSCRIBE, online);
		return refuse(sc, section, "count", why, err);
	}
	return LBS_OK;
}

lbs_status lbs_testbed_check(const lbs_scenario *sc, const char *policy, lbs_error *err)
{
	if (check_size(sc, err) != LBS_OK)
		return LBS_EINPUT;
	lbs_net net;
	if (lbs_net_create(&net, sc->model.name, err) != LBS_OK) {
		char names[1024];
		lbs_net_names(names, sizeof names);
		char why[700];
		lbs_fmt(why, sizeof why, "its workers run the GEMMs of a network of models/nets, and '%s' is "
			"none (known: %s)", sc->model.name, names);
		return refuse(sc, "model", "name", why, err);
	}
	lbs_net_destroy(&net);
	if (sc->network_trace.format)
		return refuse(sc, "network", "trace", "the links' rates are fixed for the run (a tc class each); "
			      "a bandwidth trace is not emulated", err);
	if (sc->network.ops != &lbs_network_none && !(sc->model.gradient_bytes <= LBS_TB_EXCHANGE_MAX_BYTES)) {
		char why[256];
		lbs_fmt(why, sizeof why, "each of its network processes holds the gradient, and %.0f bytes is more "
			"than the %.0f MiB it exchanges: give `gradient` scaled down (doc/validation.md)",
			sc->model.gradient_bytes, LBS_TB_EXCHANGE_MAX_BYTES / 1048576);
		return refuse(sc, "model", lbs_scenario_origin(sc, "model", "gradient").line ? "gradient" : "parameters",
			      why, err);
	}
	for (size_t i = 0; i < sc->n_generators; i++) {
		const lbs_gen_spec *g = &sc->generators[i];
		char section[LBS_NAME_MAX + 16];
		lbs_fmt(section, sizeof section, "generator.%s", g->name);
		if (g->kind != LBS_GEN_BACKGROUND)
			return refuse(sc, section, "kind", "of the generators only `background` is emulated (a real "
				      "co-located process per worker); CPU credits, network buckets and DBS delays "
				      "are not", err);
	}
	if (sc->iterations_per_epoch)
		return refuse(sc, "run", "epochs", "runs given in epochs are not built yet: give "
			      "run.iterations", err);
	for (size_t g = 0; g < sc->n_groups; g++) {
		const lbs_group_spec *gs = &sc->groups[g];
		char section[LBS_NAME_MAX + 16];
		lbs_fmt(section, sizeof section, "workers.%s", gs->name);
		if (gs->device != LBS_DEVICE_CPU)
			return refuse(sc, section, "device", "its workers are CPU processes", err);
		if (gs->noise.kind != LBS_NOISE_NONE)
			return refuse(sc, section, "noise", "the machine supplies its own noise: use noise = none",
				      err);
		if (gs->cpu_quota_period_s > 0 && fabs(gs->cpu_quota_period_s - 1e-6 * LBS_TESTBED_PERIOD_US) > 1e-9)
			return refuse(sc, section, "cpu_quota_period", "the testbed's CFS period is 10 ms: set 10 ms "
				      "or leave it out (lbsim validate simulates with 10 ms)", err);
		if (gs->timeshare_refill_s > 0)
			return refuse(sc, section, "timeshare_refill", "the testbed time-shares its cores for real; "
				      "this key is the simulation's model of that: remove it (lbsim validate "
				      "--calibrate measures it for the simulation)", err);
	}
	const lbs_policy_ops *ops = lbs_policy_find(policy ? policy : sc->policy.name);
	if (sc->testbed.worker == LBS_TB_WORKER_TORCH) {
		if (!lbs_tb_torch_has_net(sc->model.name)) {
			char why[256];
			lbs_fmt(why, sizeof why, "the torch worker builds %s, not '%s'", lbs_tb_torch_nets(),
				sc->model.name);
			return refuse(sc, "model", "name", why, err);
		}
		if (sc->testbed.target_loss > 0 && strcmp(sc->model.name, "teacher-student"))
			return refuse(sc, "testbed", "target_loss", "only the teacher-student task has a held-out "
				      "loss the testbed measures ([model] name = teacher-student)", err);
		if (sc->network.ops != &lbs_network_none)
			return refuse(sc, "network", "topology", "the torch workers exchange their gradient "
				      "themselves (torch.distributed, gloo over loopback): give topology = none "
				      "(the tc-shaped links are the blas worker's)", err);
		if (ops == &lbs_policy_work_stealing)
			return lbs_error_set(err, LBS_EINPUT, "policy work-stealing: the torch worker does "
					     "not run micro-batches yet (the blas worker does: testbed.worker = blas)");
		if (sc->sync.mode == LBS_SYNC_BACKUP && sc->sync.backup_workers >= sc->n_workers)
			return refuse(sc, "sync", "backup_workers", "fewer than the workers", err);
		if (sc->sync.mode == LBS_SYNC_LOCAL_SGD && sc->testbed.target_loss > 0 &&
		    sc->testbed.loss_every % sc->sync.period != 0)
			return refuse(sc, "testbed", "loss_every", "under local-sgd the model is evaluated after an "
				      "averaging: give a multiple of [sync] period", err);
		if (sc->sync.mode != LBS_SYNC_BSP && sc->testbed.ddp)
			return refuse(sc, "testbed", "ddp", "DistributedDataParallel all-reduces every step: the "
				      "[sync] modes exchange their own way", err);
	} else if (sc->sync.mode != LBS_SYNC_BSP) {
		return refuse(sc, "sync", "mode", "the blas worker trains no model, so that nothing of it can be "
			      "stale, dropped or averaged: use testbed.worker = torch", err);
	}
	if (ops == &lbs_policy_oracle)
		return lbs_error_set(err, LBS_EINPUT, "policy oracle: the testbed cannot run it: a real run has "
				     "no future to look at (the oracle exists to give the simulation's lower bound)");
	return LBS_OK;
}

lbs_status lbs_testbed_check_run(const lbs_run *run, lbs_error *err)
{
	/* Under backup the workers run their own sequences of steps on the
	 * plan of iteration 0: the steps are the server's, not barriers of the
	 * coordinator's to re-plan at (local SGD's averagings are). */
	if (run->sc->sync.mode == LBS_SYNC_BACKUP && !run->info.fixed)
		return refuse(run->sc, "sync", "mode", "on the testbed backup workers run a fixed plan (static): "
			      "their steps are the server's, not the coordinator's barriers to re-plan at; the "
			      "policy given re-plans: simulate it", err);
	return LBS_OK;
}

lbs_status lbs_testbed_probe(const lbs_scenario *sc, lbs_error *err)
{
	lbs_cgroups c;
	lbs_status st = lbs_cgroup_probe(&c, LBS_TESTBED_PERIOD_US, err);
	if (st == LBS_OK && sc && sc->network.ops != &lbs_network_none)
		st = lbs_tb_exchange_probe(err);
	if (st == LBS_OK && sc && sc->testbed.worker == LBS_TB_WORKER_TORCH)
		st = lbs_tb_torch_probe(NULL, 0, err);
	return st;
}

void lbs_testbed_describe(char *buf, size_t len)
{
	lbs_cgroups c;
	lbs_error e = { 0 };
	if (lbs_cgroup_probe(&c, LBS_TESTBED_PERIOD_US, &e) == LBS_OK)
		lbs_fmt(buf, len, "%s at %s", c.ops->name, c.mount);
	else
		lbs_fmt(buf, len, "no control groups");
}

/* The jiffies counter of /proc/timer_list; -1 if unreadable. */
static long long jiffies(void)
{
	FILE *f = fopen("/proc/timer_list", "r");
	if (!f)
		return -1;
	char line[256];
	long long j = -1;
	while (j < 0 && fgets(line, sizeof line, f))
		if (sscanf(line, "jiffies: %lld", &j) != 1)
			j = -1;
	fclose(f);
	return j;
}

double lbs_testbed_tick_s(const char **how)
{
	static const double hz[] = { 100, 250, 300, 1000 };
	double t0 = lbs_monotonic_s();
	long long j0 = jiffies();
	struct timespec nap = { 0, 100000000 };
	while (j0 >= 0 && nanosleep(&nap, &nap) < 0 && errno == EINTR)
		;
	long long j1 = j0 >= 0 ? jiffies() : -1;
	double rate = j1 > j0 ? (double)(j1 - j0) / (lbs_monotonic_s() - t0) : 0;
	for (size_t k = 0; k < sizeof hz / sizeof *hz; k++)
		if (fabs(rate / hz[k] - 1) < 0.1) {
			if (how)
				*how = "jiffies in /proc/timer_list";
			return 1 / hz[k];
		}
	struct utsname u;
	char path[128 + sizeof u.release], line[256];
	FILE *f = uname(&u) == 0 ? fopen(lbs_fmt(path, sizeof path, "/boot/config-%s", u.release), "r") : NULL;
	long v = 0;
	while (f && fgets(line, sizeof line, f) && sscanf(line, "CONFIG_HZ=%ld", &v) != 1)
		;
	if (f)
		fclose(f);
	if (how)
		*how = v > 0 ? "CONFIG_HZ in /boot/config" : "unknown";
	return v > 0 ? 1.0 / (double)v : 0;
}

/* The co-located job (a [generator.NAME] of kind background) of group
 * `group`'s workers, or NULL. */
static const lbs_gen_spec *tenant_job(const lbs_scenario *sc, size_t group)
{
	for (size_t i = 0; i < sc->n_generators; i++)
		for (size_t j = 0; sc->generators[i].kind == LBS_GEN_BACKGROUND && j < sc->generators[i].n_groups; j++)
			if (sc->generators[i].groups[j] == group)
				return &sc->generators[i];
	return NULL;
}

double lbs_testbed_tenant_load(const lbs_scenario *sc, size_t group)
{
	const lbs_gen_spec *g = tenant_job(sc, group);
	return g ? g->load : 0;
}

double lbs_testbed_tenant_memory(const lbs_scenario *sc, size_t group)
{
	const lbs_gen_spec *g = tenant_job(sc, group);
	return g ? g->memory : 0;
}

/* What worker i takes of its CPU: its a(0), or the whole core when a
 * tenant shares it (the worker and its tenant fill it). */
static double placed(const lbs_run *run, size_t i)
{
	if (lbs_testbed_tenant_load(run->sc, run->workers[i].group) > 0)
		return 1.0;
	return lbs_avail_level(&run->workers[i].avail, 0, 0);
}

void lbs_testbed_place(const lbs_run *run, int *cpu)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	double load[64] = { 0 };
	for (size_t k = 0; k < run->n; k++)
		cpu[k] = -1;
	for (size_t k = 0; ncpu > 1 && ncpu <= 64 && k < run->n; k++) {
		size_t best = run->n; /* the unbound worker of the largest a(0) */
		for (size_t i = 0; i < run->n; i++)
			if (cpu[i] < 0 && (best == run->n || placed(run, i) > placed(run, best)))
				best = i;
		int least = 0;
		for (int j = 1; j < ncpu; j++)
			if (load[j] < load[least])
				least = j;
		cpu[best] = least;
		load[least] += fmin(1.0, placed(run, best));
	}
}

/* The longest path of a torch run's rendezvous folder, TMPDIR included. */
#define LBS_TB_DIR_MAX 256

#define LBS_TB_TORCH_START_S 300.0

typedef struct coordinator {
	lbs_run *run;
	lbs_cgroups cg;
	lbs_cgroup *groups;
	lbs_cgroup self;    /* the coordinator's own */
	lbs_tb_worker *workers;
	lbs_tb_tenant *tenants; /* pid 0: the worker has none */
	struct pollfd *fds;
	double *cpu_s;      /* CPU time of each worker's last iteration */
	double *steal_at;   /* micro-batch mode: when a steal's samples may start (INFINITY: none) */
	lbs_tb_exchange x;  /* the network; x.nodes NULL: none */
	double t0;          /* real time of the first barrier */
	bool torch;         /* torch workers: each answer comes after the exchange */
	char rendezvous[LBS_TB_DIR_MAX]; /* torch: the folder of torch.distributed's file store ("": none) */
	FILE *timeline;     /* LBSIM_TESTBED_TIMELINE: each answer's times (NULL: none) */
	/* teacher-student: rank 0's held-out losses, written to loss_file when
	 * it ends ("": none), and each iteration's end and samples so far */
	char loss_file[LBS_TB_DIR_MAX + 16];
	double *end_s;
	int64_t *samples_at;
	/* [sync] ssp, asp, backup: the parameter server (pid 0: none), in a
	 * group of its own, and the file of its log of pushes */
	lbs_tb_worker ps;
	lbs_cgroup ps_group;
	char ps_log[LBS_TB_DIR_MAX + 16];
} coordinator;

static lbs_status set_quotas(coordinator *c, double t, int64_t iteration, lbs_error *err)
{
	lbs_status st = LBS_OK;
	for (size_t i = 0; i < c->run->n && st == LBS_OK; i++) {
		lbs_avail *a = &c->run->workers[i].avail;
		if (c->tenants[i].pid > 0) {
			/* The tenant takes its share for real: the worker's group
			 * has the whole core (a generator's group has availability
			 * 1), and the job's state is what the generator says. */
			lbs_tb_tenant_set(&c->tenants[i], lbs_avail_reading(a, t, iteration, LBS_READING_CPU_UTIL) > 0);
			st = lbs_cgroup_set_cores(&c->cg, &c->groups[i], 1.0, err);
		} else {
			st = lbs_cgroup_set_cores(&c->cg, &c->groups[i], lbs_avail_level(a, t, iteration), err);
		}
	}
	return st;
}

static lbs_status check_plan(const lbs_run *run, lbs_error *err)
{
	int64_t sum = 0;
	for (size_t i = 0; i < run->n; i++) {
		if (run->batch[i] < 0 || run->batch[i] > run->max_batch[i])
			return lbs_error_set(err, LBS_EINPUT, "policy '%s' gives worker %zu %lld samples, outside "
					     "0..%lld (its memory cap, max_batch)", run->policy->name, i,
					     (long long)run->batch[i], (long long)run->max_batch[i]);
		sum += run->batch[i];
	}
	if (sum != run->sc->run.global_batch && !(run->info.shrinks_global_batch && sum > 0))
		return lbs_error_set(err, LBS_EINTERNAL, "policy '%s' planned %lld samples for a global batch "
				     "of %lld", run->policy->name, (long long)sum,
				     (long long)run->sc->run.global_batch);
	return LBS_OK;
}

/* The policy at the barrier before `run->iteration`, with the measured
 * compute times of the one before. */
static lbs_status plan(lbs_run *run, const double *cpu_s, const lbs_tb_tenant *tenants, double now_s,
		       lbs_error *err)
{
	/* Readings, where the scenario's sources have them: what a monitor of
	 * each worker's machine measures. cpu_util: the share of the core the
	 * worker was not given during its last iteration, 1 - CPU time / wall
	 * time (its trace's cpu_util in the simulation). mem_util: the memory
	 * its co-located process holds now, at the barrier (the simulation
	 * samples its readings there too), over the machine's memory as the
	 * testbed scales it; 0 without one. */
	for (size_t i = 0; run->n_readings && i < run->n; i++) {
		double u = run->compute_s[i] > 0 ? 1 - cpu_s[i] / run->compute_s[i] : 0;
		run->readings[i * run->n_readings + LBS_READING_CPU_UTIL] = u < 0 ? 0 : u > 1 ? 1 : u;
		double m = tenants[i].pid > 0 ? lbs_tb_tenant_memory_bytes(&tenants[i]) / LBS_TESTBED_MACHINE_MEMORY : 0;
		run->readings[i * run->n_readings + LBS_READING_MEM_UTIL] = !(m > 0) ? 0 : m > 1 ? 1 : m;
	}
	lbs_observation obs = {
		.iteration = run->iteration,
		.epoch_start = false,
		.now_s = now_s,
		.batch = run->info.micro_batch || run->drop ? run->done : run->batch,
		.compute_s = run->compute_s,
		.readings = run->n_readings ? run->readings : NULL,
	};
	bool changed = false;
	double t0 = lbs_monotonic_s();
	lbs_status st = run->policy->plan(run->policy_state, &obs, run->batch, &changed, err);
	run->decision_s = lbs_monotonic_s() - t0;
	if (st == LBS_OK && run->policy->predictions)
		run->predicted = run->policy->predictions(run->policy_state);
	run->batch_changed = changed;
	if (st == LBS_OK && changed)
		st = check_plan(run, err);
	return st;
}

/* Micro-batch mode (work stealing), as the simulation runs it: worker i,
 * free at `now` (since the iteration's start), starts its next micro-batch
 * of its own share; or, with none left, asks the policy for samples not yet
 * started by another worker and, after the steal's latency, starts on
 * them; or is done, its compute time the time from the start. The samples
 * move for real: they are the next micro-batches the coordinator sends to
 * the thief instead of to the victim. `now` counts from the iteration's
 * start. Sets *busy: whether i has work. */
static lbs_status micro_next(coordinator *c, size_t i, double now, bool *busy, lbs_error *err)
{
	lbs_run *run = c->run;
	*busy = true;
	if (run->pending[i] == 0 && run->incoming[i] == 0) {
		lbs_steal s;
		double t0 = lbs_monotonic_s();
		bool got = run->policy->steal && run->policy->steal(run->policy_state, i, run->pending, run->n, &s);
		run->decision_s += lbs_monotonic_s() - t0;
		if (got && s.victim < run->n && s.victim != i && s.samples > 0 && s.samples <= run->pending[s.victim] &&
		    s.latency_s >= 0) {
			run->pending[s.victim] -= s.samples;
			run->incoming[i] = s.samples;
			c->steal_at[i] = now + s.latency_s; /* sent then (iterate's loop waits for it) */
			return LBS_OK;
		}
		run->compute_s[i] = now;
		*busy = false;
		return LBS_OK;
	}
	if (run->pending[i] == 0) { /* stolen samples, their latency passed */
		run->pending[i] = run->incoming[i];
		run->incoming[i] = 0;
	}
	int64_t m = run->pending[i] < run->info.micro_batch ? run->pending[i] : run->info.micro_batch;
	run->pending[i] -= m;
	run->running[i] = m;
	c->steal_at[i] = INFINITY;
	c->fds[i].fd = c->workers[i].from_fd;
	return lbs_tb_worker_send(&c->workers[i], m, err);
}

/* One iteration: send the batches (or, under work stealing, the first
 * micro-batches), follow a(t) with the quotas until every worker is done,
 * hand the record to the observer. */
static lbs_status iterate(coordinator *c, lbs_iteration_fn observer, void *ctx,
			  const volatile sig_atomic_t *interrupt, lbs_error *err)
{
	lbs_run *run = c->run;
	const double period_s = 1e-6 * (double)c->cg.period_us;
	const bool micro = run->info.micro_batch > 0;
	double start = lbs_monotonic_s() - c->t0;
	lbs_status st = set_quotas(c, start, run->iteration, err);
	size_t remaining = run->n;
	int64_t offset = 0; /* where worker i's samples start in the global batch */
	for (size_t i = 0; i < run->n && st == LBS_OK; i++) {
		c->fds[i].fd = c->workers[i].from_fd;
		c->fds[i].events = POLLIN;
		c->steal_at[i] = INFINITY;
		if (!micro) {
			st = lbs_tb_worker_send_at(&c->workers[i], run->batch[i], offset, err);
			offset += run->batch[i];
			continue;
		}
		run->pending[i] = run->batch[i];
		run->done[i] = run->running[i] = run->incoming[i] = 0;
		run->compute_s[i] = c->cpu_s[i] = 0;
	}
	for (size_t i = 0; micro && i < run->n && st == LBS_OK; i++) {
		bool busy;
		if ((st = micro_next(c, i, 0, &busy, err)) == LBS_OK && !busy) {
			c->fds[i].fd = -1;
			remaining--; /* nothing to do, nothing to steal */
		}
	}
	double next_tick = start + period_s;
	double compute_last = 0; /* torch: the latest end of a worker's compute */
	while (st == LBS_OK && remaining > 0) {
		if (interrupt && *interrupt)
			return lbs_error_set(err, LBS_EINTR, "interrupted in iteration %lld",
					     (long long)run->iteration);
		double now = lbs_monotonic_s() - c->t0;
		if (now >= next_tick) {
			if ((st = set_quotas(c, now, run->iteration, err)) != LBS_OK)
				break;
			next_tick += period_s * ceil((now - next_tick) / period_s + 1e-9);
			if (next_tick <= now)
				next_tick = now + period_s;
		}
		double wake = next_tick;
		/* Stolen samples whose latency has passed go out now; the next
		 * latency to end bounds the wait. */
		for (size_t i = 0; micro && i < run->n && st == LBS_OK; i++) {
			bool busy;
			if (c->steal_at[i] + start <= now)
				st = micro_next(c, i, now - start, &busy, err);
			else
				wake = fmin(wake, c->steal_at[i] + start);
		}
		int wait_ms = (int)ceil(1e3 * (wake - now));
		int k = poll(c->fds, run->n, wait_ms < 1 ? 1 : wait_ms);
		if (k < 0 && errno != EINTR)
			st = lbs_error_set(err, LBS_EINTERNAL, "poll: %s", strerror(errno));
		for (size_t i = 0; k > 0 && i < run->n && st == LBS_OK; i++) {
			if (!(c->fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			lbs_tb_result r;
			if ((st = lbs_tb_worker_read(&c->workers[i], &r, err)) != LBS_OK)
				break;
			if (c->timeline)
				fprintf(c->timeline, "%s\t%lld\t%zu\t%lld\t%.6f\t%.6f\t%.6f\t%.6f\t%.6f\t%.6f\n", run->policy->name,
					(long long)run->iteration, i, (long long)(micro ? run->running[i] : run->batch[i]),
					r.start_s - c->t0 - start, r.compute_s,
					lbs_monotonic_s() - r.start_s - r.compute_s, r.cpu_s, r.exchange_s, r.exchange_cpu_s);
			c->fds[i].fd = -1; /* answered */
			if (micro) {
				/* The compute time is the wall time from the start to
				 * when it is done, steal latencies included, as the
				 * simulation counts it; the CPU time its own. */
				c->cpu_s[i] += r.cpu_s;
				run->done[i] += run->running[i];
				run->running[i] = 0;
				bool busy;
				if ((st = micro_next(c, i, lbs_monotonic_s() - c->t0 - start, &busy, err)) !=
					    LBS_OK ||
				    busy)
					continue;
			} else {
				run->compute_s[i] = r.compute_s;
				c->cpu_s[i] = r.cpu_s;
				compute_last = fmax(compute_last, r.start_s + r.compute_s - c->t0);
			}
			remaining--; /* done for this iteration */
		}
	}
	if (st != LBS_OK)
		return st;
	double compute_end = lbs_monotonic_s() - c->t0, end = compute_end;
	/* Torch workers exchange among themselves and answer after it and
	 * their optimizer step: the compute ended when the last of them
	 * finished its backward pass, the iteration with the last answer. */
	if (c->torch)
		compute_end = fmin(fmax(compute_last, start), end);
	/* The exchange starts when the last worker is done, as the
	 * simulation's does; the policies see compute times only. */
	if (c->x.nodes) {
		if ((st = lbs_tb_exchange_run(&c->x, interrupt, err)) != LBS_OK)
			return st;
		end = lbs_monotonic_s() - c->t0;
	}
	const int64_t *processed = micro ? run->done : run->batch;
	double lo = run->compute_s[0], hi = run->compute_s[0];
	int64_t samples = 0;
	for (size_t i = 0; i < run->n; i++) {
		lo = fmin(lo, run->compute_s[i]);
		hi = fmax(hi, run->compute_s[i]);
		samples += processed[i];
	}
	/* The iteration ends when the exchange is done (without a network,
	 * when the last answer is in: its "aggregation" is 0, and the
	 * coordinator's own time from there to the next release is counted
	 * in the next iteration). */
	lbs_iteration_record rec;
	lbs_run_close_iteration(run, start, compute_end, end, processed, samples, lo, hi, &rec);
	run->stats.events += run->n;
	if (observer && (st = observer(ctx, &rec, err)) != LBS_OK)
		return st;
	return LBS_OK;
}

/* The modes' loops (run_steps, iterate_drop): follows a(t) with the quotas
 * once per CFS period (*next_tick, since t0, the next period's start), then
 * waits for the workers' answers until `wake` or the next tick, whichever
 * is first; *ready gets poll()'s count (0 on a timeout). a(t) is read for
 * `iteration`. */
static lbs_status follow_and_wait(coordinator *c, double *next_tick, int64_t iteration, double wake, int *ready,
				  lbs_error *err)
{
	const double period_s = 1e-6 * (double)c->cg.period_us;
	double now = lbs_monotonic_s() - c->t0;
	*ready = 0;
	if (now >= *next_tick) {
		lbs_status st = set_quotas(c, now, iteration, err);
		if (st != LBS_OK)
			return st;
		*next_tick += period_s * ceil((now - *next_tick) / period_s + 1e-9);
		if (*next_tick <= now)
			*next_tick = now + period_s;
	}
	int wait_ms = (int)ceil(1e3 * (fmin(wake, *next_tick) - now));
	int k = poll(c->fds, c->run->n, wait_ms < 1 ? 1 : wait_ms);
	if (k < 0 && errno != EINTR)
		return lbs_error_set(err, LBS_EINTERNAL, "poll: %s", strerror(errno));
	*ready = k > 0 ? k : 0;
	return LBS_OK;
}

/* The [sync] modes other than bsp (doc/validation.md, "The synchronisation
 * modes"), with torch workers. Each worker runs its own sequence of steps:
 * the coordinator sends it its next batch (its share of the fixed plan) as
 * soon as it answers, for as long as the mode's run lasts, and the workers'
 * exchanges do the synchronising: under local-sgd an all-reduce among them
 * every H-th step, under ssp, asp and backup the parameter server (rank N),
 * which holds a pull until the staleness bound allows it (ssp), applies
 * each push at once (asp), or steps on the first N - k pushes of the
 * current version and drops the older ones (backup). The run lasts, as the
 * simulation's: `iterations` clocks of every worker (ssp, local-sgd), that
 * many updates (asp: as many batches sent in all), or that many steps of
 * the server (backup: batches are sent until one comes back with version
 * `iterations`; the pushes still computing then are all dropped).
 *
 * Records are made once the run is over, in the simulation's schema (sim/
 * run_sync.c, sim/run.c's backup): a clock per record under ssp and
 * local-sgd, from its earliest start to its latest end, one record per
 * update under asp, ending when the server applied it, and one per server
 * step under backup, from the last one's end to when it was applied, the
 * dropped workers at 0 samples. The server's log gives each push's time,
 * staleness and fate. */
typedef struct push_entry {
	double t;          /* since t0 */
	size_t worker;
	int64_t step, tau; /* the worker's step; its staleness (backup: versions behind when dropped) */
	int counted;
	int64_t samples, version;
} push_entry;

static bool via_server(int mode)
{
	return mode == LBS_SYNC_SSP || mode == LBS_SYNC_ASP || mode == LBS_SYNC_BACKUP;
}

/* The server's log, in the order it was written (the order of its pushes). */
static lbs_status read_pushes(coordinator *c, push_entry **out, size_t *n_out, lbs_error *err)
{
	*out = NULL;
	*n_out = 0;
	FILE *f = fopen(c->ps_log, "r");
	if (!f)
		return lbs_error_set(err, LBS_EINTERNAL, "the torch parameter server wrote no log of its pushes "
				     "(%s: %s)", c->ps_log, strerror(errno));
	size_t cap = 0, n = 0;
	push_entry *e = NULL;
	double t;
	long long w, k, tau, counted, b, v;
	lbs_status st = LBS_OK;
	while (fscanf(f, "%lf %lld %lld %lld %lld %lld %lld", &t, &w, &k, &tau, &counted, &b, &v) == 7) {
		if (w < 0 || (size_t)w >= c->run->n || k < 0 || tau < 0) {
			st = lbs_error_set(err, LBS_EINTERNAL, "the torch parameter server's log names worker %lld "
					   "step %lld", w, k);
			break;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			push_entry *p = realloc(e, cap * sizeof *e);
			if (!p) {
				st = lbs_error_set(err, LBS_EINTERNAL, "out of memory (the server's log)");
				break;
			}
			e = p;
		}
		e[n++] = (push_entry){ .t = t - c->t0, .worker = (size_t)w, .step = k, .tau = tau,
				       .counted = counted != 0, .samples = b, .version = v };
	}
	fclose(f);
	if (st != LBS_OK) {
		free(e);
		return st;
	}
	*out = e;
	*n_out = n;
	return LBS_OK;
}

typedef struct steps {
	int64_t cap;               /* steps held per worker */
	int64_t *done;             /* per worker: steps answered */
	double *start, *compute, *end; /* [i * cap + k]: since t0 */
	double *cpu;               /* [i * cap + k]: the CPU time of its compute */
	int64_t *tau;              /* [i * cap + k]: ssp, the clocks its read missed */
	int64_t *batch;            /* [i * cap + k]: the samples it was sent */
	unsigned char *changed;    /* per clock: the plan changed there (local-sgd) */
	int64_t *offset;           /* per worker: where its share starts in the global batch */
	int64_t sent_all, top;     /* batches sent in all; the latest version pulled */
	size_t busy;               /* workers with a batch out */
	double *wait;              /* per worker, scratch */
	double *compute_now;       /* per worker, scratch */
	int64_t *processed;        /* per worker, scratch */
} steps;

static void steps_free(steps *w)
{
	free(w->offset);
	free(w->done);
	free(w->start);
	free(w->compute);
	free(w->end);
	free(w->cpu);
	free(w->tau);
	free(w->batch);
	free(w->changed);
	free(w->wait);
	free(w->compute_now);
	free(w->processed);
}

/* Worker i's next batch, if the run is not over for it: under asp while
 * fewer than `iterations` were sent in all, under backup until a worker
 * has pulled version `iterations`, otherwise `iterations` each. */
static lbs_status feed(coordinator *c, steps *w, size_t i, lbs_error *err)
{
	lbs_run *run = c->run;
	const int64_t T = run->sc->iterations, sent = w->done[i];
	const int mode = run->sc->sync.mode;
	const bool more = mode == LBS_SYNC_ASP ? w->sent_all < T
			  : mode == LBS_SYNC_BACKUP ? w->top < T && sent < w->cap : sent < T;
	c->fds[i].fd = -1;
	if (!more)
		return LBS_OK;
	c->fds[i].fd = c->workers[i].from_fd;
	c->fds[i].events = POLLIN;
	w->batch[i * (size_t)w->cap + (size_t)sent] = run->batch[i];
	w->sent_all++;
	w->busy++;
	return lbs_tb_worker_send_at(&c->workers[i], run->batch[i], w->offset[i], err);
}

/* Hands record r to the observer and notes its end for the target. */
static lbs_status deliver(coordinator *c, lbs_iteration_record *rec, int64_t r, lbs_iteration_fn observer,
			  void *ctx, lbs_error *err)
{
	lbs_run *run = c->run;
	if (c->end_s && r < run->sc->iterations) {
		c->end_s[r] = rec->end_s;
		c->samples_at[r] = run->stats.samples;
	}
	run->stats.events += rec->n_workers;
	return observer ? observer(ctx, rec, err) : LBS_OK;
}

/* ssp and local-sgd: clock k of every worker. */
static lbs_status clock_records(coordinator *c, steps *w, lbs_iteration_fn observer, void *ctx, lbs_error *err)
{
	lbs_run *run = c->run;
	const lbs_scenario *sc = run->sc;
	const int penalty = sc->convergence.staleness_penalty;
	lbs_status st = LBS_OK;
	for (int64_t k = 0; k < sc->iterations && st == LBS_OK; k++) {
		double start = INFINITY, cend = -INFINITY, end = -INFINITY, lo = INFINITY, hi = -INFINITY, weighted = 0;
		int64_t samples = 0;
		for (size_t i = 0; i < run->n; i++) {
			size_t o = i * (size_t)w->cap + (size_t)k;
			w->processed[i] = w->batch[o];
			start = fmin(start, w->start[o]);
			cend = fmax(cend, w->start[o] + w->compute[o]);
			end = fmax(end, w->end[o]);
			lo = fmin(lo, w->compute[o]);
			hi = fmax(hi, w->compute[o]);
			w->compute_now[i] = w->compute[o];
			w->wait[i] = k > 0 ? fmax(0.0, w->start[o] - w->end[o - 1]) : w->start[o];
			samples += w->batch[o];
			weighted += (double)w->batch[o] * lbs_staleness_weight(penalty, sc->convergence.staleness_exponent, w->tau[o]);
			if (sc->sync.mode == LBS_SYNC_SSP && (st = lbs_run_count_staleness(run, w->tau[o], err)) != LBS_OK)
				return st;
		}
		run->iteration = k;
		run->step_weight = samples > 0 ? weighted / (double)samples : 1.0;
		run->target_hidden = sc->sync.mode == LBS_SYNC_LOCAL_SGD && (k + 1) % sc->sync.period != 0;
		run->batch_changed = k == 0 || w->changed[k];
		lbs_iteration_record rec;
		lbs_run_close_iteration(run, start, cend, end, w->processed, samples, lo, hi, &rec);
		rec.planned = w->processed;
		rec.compute_s = w->compute_now;
		rec.wait_s = w->wait;
		st = deliver(c, &rec, k, observer, ctx, err);
	}
	return st;
}

/* asp: one record per update, in the order the server applied them. */
static lbs_status update_records(coordinator *c, steps *w, const push_entry *e, size_t n_e,
				 lbs_iteration_fn observer, void *ctx, lbs_error *err)
{
	lbs_run *run = c->run;
	lbs_status st = LBS_OK;
	for (size_t u = 0; u < n_e && st == LBS_OK; u++) {
		const size_t i = e[u].worker;
		if (e[u].step >= w->done[i])
			return lbs_error_set(err, LBS_EINTERNAL, "the torch parameter server logged step %lld of "
					     "worker %zu, which answered %lld", (long long)e[u].step, i,
					     (long long)w->done[i]);
		const size_t o = i * (size_t)w->cap + (size_t)e[u].step;
		if ((st = lbs_run_count_staleness(run, e[u].tau, err)) != LBS_OK)
			return st;
		run->iteration = (int64_t)u;
		run->step_weight = lbs_staleness_weight(run->sc->convergence.staleness_penalty,
							run->sc->convergence.staleness_exponent, e[u].tau);
		run->batch_changed = u == 0;
		double cmp = w->compute[o];
		double wait = e[u].step > 0 ? fmax(0.0, w->start[o] - w->end[o - 1]) : w->start[o];
		lbs_iteration_record rec;
		lbs_run_close_iteration(run, w->start[o], w->start[o] + cmp, fmax(e[u].t, w->start[o] + cmp),
					&run->batch[i], run->batch[i], cmp, cmp, &rec);
		rec.n_workers = 1;
		rec.first_worker = i;
		rec.n_planned = run->n;
		rec.compute_s = &w->compute[o];
		rec.wait_s = &wait;
		rec.predicted_speed = run->predicted ? run->predicted + i : NULL;
		rec.readings = NULL;
		rec.n_readings = 0;
		st = deliver(c, &rec, (int64_t)u, observer, ctx, err);
	}
	return st;
}

/* backup: one record per step of the server, its counted workers' samples. */
static lbs_status backup_records(coordinator *c, steps *w, const push_entry *e, size_t n_e,
				 lbs_iteration_fn observer, void *ctx, lbs_error *err)
{
	lbs_run *run = c->run;
	lbs_status st = LBS_OK;
	double barrier = 0;
	for (size_t u = 0; u < n_e; u++)
		if (!e[u].counted)
			run->stats.dropped_samples += e[u].samples;
	for (int64_t v = 1; v <= run->sc->iterations && st == LBS_OK; v++) {
		double cend = barrier, end = -INFINITY, lo = INFINITY, hi = -INFINITY;
		int64_t samples = 0;
		for (size_t i = 0; i < run->n; i++) {
			w->processed[i] = 0;
			w->compute_now[i] = 0;
			w->wait[i] = 0;
		}
		for (size_t u = 0; u < n_e; u++) {
			if (!e[u].counted || e[u].version != v)
				continue;
			const size_t i = e[u].worker, o = i * (size_t)w->cap + (size_t)e[u].step;
			if (e[u].step >= w->done[i])
				return lbs_error_set(err, LBS_EINTERNAL, "the torch parameter server logged step %lld "
						     "of worker %zu, which answered %lld", (long long)e[u].step, i,
						     (long long)w->done[i]);
			double ce = w->start[o] + w->compute[o];
			w->processed[i] = e[u].samples;
			w->compute_now[i] = fmax(0.0, ce - barrier);
			cend = fmax(cend, ce);
			end = fmax(end, e[u].t);
			lo = fmin(lo, w->compute_now[i]);
			hi = fmax(hi, w->compute_now[i]);
			samples += e[u].samples;
		}
		if (!isfinite(end))
			return lbs_error_set(err, LBS_EINTERNAL, "the torch parameter server logged no push of its "
					     "step %lld", (long long)v);
		for (size_t i = 0; i < run->n; i++)
			if (w->processed[i] > 0)
				w->wait[i] = fmax(0.0, cend - barrier - w->compute_now[i]);
		run->iteration = v - 1;
		run->step_weight = 1.0;
		run->batch_changed = v == 1;
		memcpy(run->compute_s, w->compute_now, run->n * sizeof *run->compute_s);
		lbs_iteration_record rec;
		lbs_run_close_iteration(run, barrier, fmin(cend, end), end, w->processed, samples, lo, hi, &rec);
		rec.wait_s = w->wait;
		st = deliver(c, &rec, v - 1, observer, ctx, err);
		barrier = end;
	}
	return st;
}

static lbs_status run_steps(coordinator *c, lbs_iteration_fn observer, void *ctx,
			    const volatile sig_atomic_t *interrupt, lbs_error *err)
{
	lbs_run *run = c->run;
	const lbs_scenario *sc = run->sc;
	const int mode = sc->sync.mode;
	const size_t n = run->n;
	const int64_t T = sc->iterations;
	steps w = { .cap = mode == LBS_SYNC_BACKUP ? T + 1 : T };
	const size_t cells = n * (size_t)w.cap;
	if (!(w.offset = lbs_calloc(n, sizeof *w.offset, err)) || !(w.done = lbs_calloc(n, sizeof *w.done, err)) ||
	    !(w.start = lbs_calloc(cells, sizeof *w.start, err)) || !(w.compute = lbs_calloc(cells, sizeof *w.compute, err)) ||
	    !(w.end = lbs_calloc(cells, sizeof *w.end, err)) || !(w.tau = lbs_calloc(cells, sizeof *w.tau, err)) ||
	    !(w.cpu = lbs_calloc(cells, sizeof *w.cpu, err)) || !(w.batch = lbs_calloc(cells, sizeof *w.batch, err)) ||
	    !(w.changed = lbs_calloc((size_t)w.cap + 1, 1, err)) ||
	    !(w.wait = lbs_calloc(n, sizeof *w.wait, err)) || !(w.compute_now = lbs_calloc(n, sizeof *w.compute_now, err)) ||
	    !(w.processed = lbs_calloc(n, sizeof *w.processed, err))) {
		steps_free(&w);
		return LBS_EINTERNAL;
	}
	for (size_t i = 1; i < n; i++)
		w.offset[i] = w.offset[i - 1] + run->batch[i - 1];
	const double period_s = 1e-6 * (double)c->cg.period_us;
	int64_t clock = 0;
	const bool replans = mode == LBS_SYNC_LOCAL_SGD && !run->info.fixed;
	lbs_status st = set_quotas(c, 0, 0, err);
	for (size_t i = 0; i < n && st == LBS_OK; i++)
		st = feed(c, &w, i, err);
	double next_tick = period_s;
	while (st == LBS_OK && w.busy > 0) {
		if (interrupt && *interrupt) {
			st = lbs_error_set(err, LBS_EINTR, "interrupted after %lld clocks", (long long)clock);
			break;
		}
		int k;
		if ((st = follow_and_wait(c, &next_tick, clock, INFINITY, &k, err)) != LBS_OK)
			break;
		for (size_t i = 0; k > 0 && i < n && st == LBS_OK; i++) {
			if (c->fds[i].fd < 0 || !(c->fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			lbs_tb_result r;
			if ((st = lbs_tb_worker_read(&c->workers[i], &r, err)) != LBS_OK)
				break;
			const size_t o = i * (size_t)w.cap + (size_t)w.done[i];
			w.start[o] = r.start_s - c->t0;
			w.compute[o] = r.compute_s;
			w.end[o] = r.start_s + r.compute_s + r.exchange_s - c->t0;
			w.cpu[o] = r.cpu_s;
			if (c->timeline)
				fprintf(c->timeline, "%s\t%lld\t%zu\t%lld\t%.6f\t%.6f\t%.6f\t%.6f\t%.6f\t%.6f\n",
					run->policy->name, (long long)w.done[i], i, (long long)run->batch[i], w.start[o],
					r.compute_s, lbs_monotonic_s() - r.start_s - r.compute_s, r.cpu_s, r.exchange_s,
					r.exchange_cpu_s);
			w.done[i]++;
			w.busy--;
			if (r.version > w.top)
				w.top = r.version;
			clock = w.done[0];
			for (size_t j = 1; j < n; j++)
				clock = w.done[j] < clock ? w.done[j] : clock;
			/* local-sgd with a policy that re-plans: at an averaging,
			 * each worker waits for the others' answers (the averaging
			 * is the barrier), then the policy plans the next round from
			 * each worker's mean compute and CPU time per step over the
			 * round, as the simulation's does. */
			const int64_t H = sc->sync.period;
			if (replans && w.done[i] % H == 0 && w.done[i] < T) {
				if (clock < w.done[i]) {
					c->fds[i].fd = -1; /* held */
					continue;
				}
				for (size_t j = 0; j < n; j++) {
					double sum = 0, cpu_sum = 0;
					for (int64_t k2 = w.done[j] - H; k2 < w.done[j]; k2++) {
						sum += w.compute[j * (size_t)w.cap + (size_t)k2];
						cpu_sum += w.cpu[j * (size_t)w.cap + (size_t)k2];
					}
					run->compute_s[j] = sum / (double)H;
					c->cpu_s[j] = cpu_sum / (double)H;
				}
				run->iteration = clock;
				if ((st = plan(run, c->cpu_s, c->tenants, lbs_monotonic_s() - c->t0, err)) != LBS_OK)
					break;
				w.changed[clock] = run->batch_changed;
				for (size_t j = 1; j < n; j++)
					w.offset[j] = w.offset[j - 1] + run->batch[j - 1];
				for (size_t j = 0; j < n && st == LBS_OK; j++)
					st = feed(c, &w, j, err);
				continue;
			}
			st = feed(c, &w, i, err);
		}
	}
	push_entry *e = NULL;
	size_t n_e = 0;
	if (st == LBS_OK && via_server(mode)) {
		/* the server writes its log once every worker has said goodbye */
		for (size_t i = 0; i < n; i++)
			lbs_tb_worker_finish(&c->workers[i]);
		const double until = lbs_monotonic_s() + LBS_TB_TORCH_START_S;
		struct timespec nap = { 0, 20000000 };
		while (access(c->ps_log, R_OK) != 0 && lbs_monotonic_s() < until && !(interrupt && *interrupt))
			nanosleep(&nap, NULL);
		st = read_pushes(c, &e, &n_e, err);
	}
	if (st == LBS_OK && mode == LBS_SYNC_SSP)
		for (size_t u = 0; u < n_e; u++)
			w.tau[e[u].worker * (size_t)w.cap + (size_t)e[u].step] = e[u].tau;
	if (st == LBS_OK)
		st = mode == LBS_SYNC_ASP ? update_records(c, &w, e, n_e, observer, ctx, err)
		     : mode == LBS_SYNC_BACKUP ? backup_records(c, &w, e, n_e, observer, ctx, err)
					       : clock_records(c, &w, observer, ctx, err);
	free(e);
	steps_free(&w);
	return st;
}

/* dropcompute with torch workers (doc/validation.md, "The synchronisation
 * modes on the testbed"): each worker is sent its share as micro-batches of
 * [sync] micro_batch samples, one at a time, each accumulated into its
 * gradient; a micro-batch that ends by the time limit after the step's
 * start counts (one ending exactly at it too) and the worker is sent the
 * next, while the limit has not passed; one that ends past it is dropped,
 * and the worker stops. A real worker cannot stop in the middle of a
 * micro-batch's backward pass, so the dropped one's time is spent: the
 * worker stops when it ends, not at the limit as the simulation's does
 * ([sync] overrun = drop); with overrun = finish the one running at the
 * limit counts, which is what the simulation then models too.
 * Then every worker is told to exchange (an all-reduce of its gradient and
 * of the samples that counted, the update the mean over them) and step.
 * With time_limit = 0 the first time_limit_steps steps run without a limit
 * and the limit is chosen from their micro-batch ends as the simulation
 * chooses it (lbs__run_choose_drop_limit). */
#define LBS_TB_MICRO (INT64_C(1) << 62)     /* accumulate, no exchange */
#define LBS_TB_DROP_LAST (INT64_C(1) << 61) /* discard the last micro-batch first */
#define LBS_TB_EXCHANGE (INT64_C(1) << 60)  /* exchange and step */

static lbs_status iterate_drop(coordinator *c, lbs_iteration_fn observer, void *ctx,
			       const volatile sig_atomic_t *interrupt, lbs_error *err)
{
	lbs_run *run = c->run;
	const size_t n = run->n;
	const int64_t m = run->sc->sync.micro_batch;
	const double period_s = 1e-6 * (double)c->cg.period_us;
	double start = lbs_monotonic_s() - c->t0;
	lbs_status st = set_quotas(c, start, run->iteration, err);
	int64_t *pending = lbs_calloc(n, sizeof *pending, err), *next = lbs_calloc(n, sizeof *next, err),
		*running = lbs_calloc(n, sizeof *running, err);
	bool *drop_last = lbs_calloc(n, sizeof *drop_last, err);
	if (!pending || !next || !running || !drop_last)
		st = LBS_EINTERNAL;
	size_t remaining = n;
	int64_t offset = 0;
	for (size_t i = 0; i < n && st == LBS_OK; i++) {
		pending[i] = run->batch[i];
		next[i] = offset;
		offset += run->batch[i];
		run->done[i] = 0;
		c->cpu_s[i] = 0;
		run->compute_s[i] = 0;
		c->fds[i].fd = -1;
		c->fds[i].events = POLLIN;
		if (pending[i] == 0) {
			remaining--;
			continue;
		}
		running[i] = pending[i] < m ? pending[i] : m;
		pending[i] -= running[i];
		c->fds[i].fd = c->workers[i].from_fd;
		st = lbs_tb_worker_send_at(&c->workers[i], running[i], next[i] | LBS_TB_MICRO, err);
		next[i] += running[i];
	}
	double next_tick = start + period_s;
	while (st == LBS_OK && remaining > 0) {
		if (interrupt && *interrupt) {
			st = lbs_error_set(err, LBS_EINTR, "interrupted in iteration %lld", (long long)run->iteration);
			break;
		}
		int k;
		if ((st = follow_and_wait(c, &next_tick, run->iteration, INFINITY, &k, err)) != LBS_OK)
			break;
		for (size_t i = 0; k > 0 && i < n && st == LBS_OK; i++) {
			if (c->fds[i].fd < 0 || !(c->fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			lbs_tb_result r;
			if ((st = lbs_tb_worker_read(&c->workers[i], &r, err)) != LBS_OK)
				break;
			const double end = r.start_s + r.compute_s - c->t0 - start; /* since the step's start */
			c->cpu_s[i] += r.cpu_s;
			run->compute_s[i] = end;
			/* overrun = finish: the one running at the limit counts */
			if (end <= run->drop_limit_s || run->sc->sync.overrun == 1) {
				run->done[i] += running[i];
				if (run->drop_measure > 0 && run->n_drop < run->cap_drop) {
					run->drop_end_s[run->n_drop] = end;
					run->drop_samples[run->n_drop++] = running[i];
				}
				if (pending[i] > 0 && end < run->drop_limit_s) {
					running[i] = pending[i] < m ? pending[i] : m;
					pending[i] -= running[i];
					st = lbs_tb_worker_send_at(&c->workers[i], running[i], next[i] | LBS_TB_MICRO, err);
					next[i] += running[i];
					continue;
				}
			} else {
				drop_last[i] = true; /* ended past the limit: its gradient goes */
			}
			c->fds[i].fd = -1;
			remaining--;
		}
	}
	double compute_end = lbs_monotonic_s() - c->t0;
	/* The exchange: every worker, the dropped micro-batch discarded first. */
	for (size_t i = 0; i < n && st == LBS_OK; i++) {
		c->fds[i].fd = c->workers[i].from_fd;
		st = lbs_tb_worker_send_at(&c->workers[i], 0, LBS_TB_EXCHANGE | (drop_last[i] ? LBS_TB_DROP_LAST : 0),
					   err);
	}
	remaining = n;
	while (st == LBS_OK && remaining > 0) {
		if (interrupt && *interrupt) {
			st = lbs_error_set(err, LBS_EINTR, "interrupted in iteration %lld", (long long)run->iteration);
			break;
		}
		int k = poll(c->fds, n, 100);
		if (k < 0 && errno != EINTR)
			st = lbs_error_set(err, LBS_EINTERNAL, "poll: %s", strerror(errno));
		for (size_t i = 0; k > 0 && i < n && st == LBS_OK; i++) {
			if (c->fds[i].fd < 0 || !(c->fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			lbs_tb_result r;
			if ((st = lbs_tb_worker_read(&c->workers[i], &r, err)) == LBS_OK) {
				c->fds[i].fd = -1;
				remaining--;
			}
		}
	}
	free(pending);
	free(next);
	free(running);
	free(drop_last);
	if (st != LBS_OK)
		return st;
	double end = lbs_monotonic_s() - c->t0;
	double lo = INFINITY, hi = -INFINITY;
	int64_t samples = 0;
	for (size_t i = 0; i < n; i++) {
		lo = fmin(lo, run->compute_s[i]);
		hi = fmax(hi, run->compute_s[i]);
		samples += run->done[i];
		run->stats.dropped_samples += run->batch[i] - run->done[i];
	}
	if (run->drop_measure > 0 && --run->drop_measure == 0 && (st = lbs__run_choose_drop_limit(run, err)) != LBS_OK)
		return st;
	lbs_iteration_record rec;
	lbs_run_close_iteration(run, start, compute_end, end, run->done, samples, lo, hi, &rec);
	run->stats.events += n;
	return observer ? observer(ctx, &rec, err) : LBS_OK;
}

/* Waits for the ready answer of each of the n torch workers w[], in
 * whatever order they come: one that dies leaves the others waiting for it
 * in their process group, so a death or LBS_TB_TORCH_START_S without all
 * of them is an error (the caller kills the rest). fds: n of scratch. */
static lbs_status torch_ready(lbs_tb_worker *w, struct pollfd *fds, size_t n, const char *net,
			      const volatile sig_atomic_t *interrupt, lbs_error *err)
{
	size_t waiting = n;
	const double until = lbs_monotonic_s() + LBS_TB_TORCH_START_S;
	for (size_t i = 0; i < n; i++)
		fds[i] = (struct pollfd){ .fd = w[i].from_fd, .events = POLLIN };
	while (waiting > 0) {
		if (interrupt && *interrupt)
			return lbs_error_set(err, LBS_EINTR, "interrupted while starting the workers");
		double left = until - lbs_monotonic_s();
		if (left <= 0)
			return lbs_error_set(err, LBS_EINTERNAL, "%zu of %zu torch workers were not ready after "
					     "%.0f s", waiting, n, LBS_TB_TORCH_START_S);
		int k = poll(fds, n, left > 1 ? 1000 : (int)ceil(1e3 * left));
		if (k < 0 && errno != EINTR)
			return lbs_error_set(err, LBS_EINTERNAL, "poll: %s", strerror(errno));
		for (size_t i = 0; k > 0 && i < n; i++) {
			if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			char what[96];
			lbs_status st = lbs_tb_worker_ready(&w[i], lbs_fmt(what, sizeof what, "torch worker %zu of "
									   "%zu (%s)", i, n, net), err);
			if (st != LBS_OK)
				return st;
			fds[i].fd = -1;
			waiting--;
		}
	}
	return LBS_OK;
}

/* A folder for torch.distributed's file store, its init method in init:
 * under $TMPDIR (else /tmp), so that runs told apart by their TMPDIR (a
 * test's own folder) are told apart by their workers' command lines too. */
static lbs_status rendezvous_make(char dir[LBS_TB_DIR_MAX], char *init, size_t len, lbs_error *err)
{
	const char *tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = "/tmp";
	int k = snprintf(dir, LBS_TB_DIR_MAX, "%s/lbsim-torch-XXXXXX", tmp);
	if (k < 0 || (size_t)k >= LBS_TB_DIR_MAX || (size_t)k + 16 >= len) {
		dir[0] = '\0';
		return lbs_error_set(err, LBS_EIO, "TMPDIR: %s: a path too long for the torch workers' rendezvous "
				     "folder (at most %d bytes)", tmp, LBS_TB_DIR_MAX - 24);
	}
	if (!mkdtemp(dir)) {
		lbs_status st = lbs_error_set(err, LBS_EIO, "%s: %s", dir, strerror(errno));
		dir[0] = '\0';
		return st;
	}
	lbs_fmt(init, len, "file://%s/store", dir);
	return LBS_OK;
}

static void rendezvous_remove(char dir[LBS_TB_DIR_MAX])
{
	if (dir[0]) {
		char store[LBS_TB_DIR_MAX + 8];
		unlink(lbs_fmt(store, sizeof store, "%s/store", dir));
		rmdir(dir);
		dir[0] = '\0';
	}
}

/* The teacher-student task's measured target (doc/validation.md, "Real
 * convergence"): rank 0 is freed of its quota and asked to end, evaluates
 * the parameters it kept on the held-out set and writes "step loss" lines;
 * the first step at which the loss reaches [testbed] target_loss (linear
 * between two evaluations, lbs_conv_steps_to) replaces the [convergence]
 * model's steps and time to target in run->stats: the measured run's
 * run_targets row is what was measured. The losses go to run->loss (the
 * run_losses table). */
#define LBS_TB_HELD_OUT_S 300.0
static lbs_status held_out(coordinator *c, lbs_error *err)
{
	lbs_run *run = c->run;
	/* under ssp, asp and backup the model is the parameter server's */
	const bool server = c->ps.pid > 0;
	lbs_tb_worker *w = server ? &c->ps : &c->workers[0];
	lbs_status st = lbs_cgroup_set_cores(&c->cg, server ? &c->ps_group : &c->groups[0], 1.0, err);
	if (st != LBS_OK)
		return st;
	/* the server evaluates once every worker has said goodbye */
	for (size_t i = 0; server && i < run->n; i++)
		lbs_tb_worker_finish(&c->workers[i]);
	lbs_tb_worker_finish(w);
	const double until = lbs_monotonic_s() + LBS_TB_HELD_OUT_S;
	struct timespec nap = { 0, 20000000 };
	pid_t got;
	while ((got = waitpid(w->pid, NULL, WNOHANG)) == 0 && lbs_monotonic_s() < until)
		nanosleep(&nap, NULL);
	if (got != w->pid)
		return lbs_error_set(err, LBS_EINTERNAL, "the torch %s did not finish evaluating its held-out "
				     "losses in %.0f s", server ? "parameter server" : "worker of rank 0",
				     LBS_TB_HELD_OUT_S);
	w->pid = 0;
	FILE *f = fopen(c->loss_file, "r");
	if (!f)
		return lbs_error_set(err, LBS_EINTERNAL, "the torch %s wrote no held-out losses (%s: %s)",
				     server ? "parameter server" : "worker of rank 0", c->loss_file, strerror(errno));
	size_t n = (size_t)run->sc->iterations, k = 0;
	double *step = lbs_calloc(n + 1, sizeof *step, err), *loss = lbs_calloc(n + 1, sizeof *loss, err);
	if (!step || !loss) {
		fclose(f);
		free(step);
		free(loss);
		return LBS_EINTERNAL;
	}
	while (k <= n && fscanf(f, "%lf %lf", &step[k], &loss[k]) == 2)
		k++;
	fclose(f);
	unlink(c->loss_file);
	free(run->loss_step);
	free(run->loss);
	run->loss_step = step;
	run->loss = loss;
	run->n_losses = k;
	double target = run->sc->testbed.target_loss;
	if (target > 0 && k > 0) {
		lbs_run_stats *s = &run->stats;
		s->steps_to_target = s->samples_to_target = 0;
		s->time_to_target_s = 0;
		/* progress: the share of the way from the first evaluation to the
		 * target made by the best one (1: reached) */
		double best = loss[0];
		for (size_t i = 1; i < k; i++)
			best = fmin(best, loss[i]);
		s->progress = loss[0] > target ? fmin(1.0, (loss[0] - best) / (loss[0] - target)) : 1.0;
		double at = lbs_conv_steps_to(step, loss, k, target, 1);
		if (!isnan(at)) {
			int64_t i = (int64_t)ceil(at - 1e-9);
			if (i < 1)
				i = 1;
			if (i > run->sc->iterations)
				i = run->sc->iterations;
			s->progress = 1.0;
			s->steps_to_target = i;
			s->samples_to_target = c->samples_at[i - 1];
			s->time_to_target_s = c->end_s[i - 1];
		}
	}
	return LBS_OK;
}

/* graceful: the run succeeded, torch workers may end on their own. */
static void teardown(coordinator *c, bool graceful)
{
	if (c->x.nodes)
		lbs_tb_exchange_stop(&c->x);
	/* Torch workers are asked to end first, all of them (each leaves its
	 * process group on its own); the blas worker is killed at once. */
	for (size_t i = 0; graceful && c->torch && c->workers && i < c->run->n; i++)
		lbs_tb_worker_finish(&c->workers[i]);
	for (size_t i = 0; c->workers && i < c->run->n; i++)
		lbs_tb_worker_stop(&c->workers[i]);
	if (c->ps.pid > 0) { /* after the workers: it serves them until each has said goodbye */
		if (graceful)
			lbs_tb_worker_finish(&c->ps);
		lbs_tb_worker_stop(&c->ps);
	}
	lbs_cgroup_remove(&c->ps_group);
	if (c->ps_log[0])
		unlink(c->ps_log);
	for (size_t i = 0; c->tenants && i < c->run->n; i++)
		lbs_tb_tenant_stop(&c->tenants[i]);
	for (size_t i = 0; c->groups && i < c->run->n; i++)
		lbs_cgroup_remove(&c->groups[i]);
	if (c->self.dir[0]) { /* back where it was, so that its group can go */
		lbs_cgroup_back(&c->cg, getpid());
		lbs_cgroup_remove(&c->self);
	}
	lbs_cgroup_close(&c->cg);
	rendezvous_remove(c->rendezvous);
	if (c->timeline)
		fclose(c->timeline);
	free(c->workers);
	free(c->tenants);
	free(c->groups);
	free(c->fds);
	free(c->cpu_s);
	free(c->steal_at);
	free(c->end_s);
	free(c->samples_at);
}

lbs_status lbs_testbed_execute(lbs_run *run, lbs_iteration_fn observer, void *ctx,
			       const volatile sig_atomic_t *interrupt, lbs_error *err)
{
	const lbs_scenario *sc = run->sc;
	lbs_status st = lbs_testbed_check(sc, run->policy->name, err);
	if (st != LBS_OK)
		return st;
	if ((st = lbs_testbed_check_run(run, err)) != LBS_OK)
		return st;
	coordinator c = { .run = run };
	if ((st = lbs_cgroup_probe(&c.cg, LBS_TESTBED_PERIOD_US, err)) != LBS_OK)
		return st;
	lbs_net net;
	if ((st = lbs_net_create(&net, sc->model.name, err)) != LBS_OK)
		return st;
	if (!(c.workers = lbs_calloc(run->n, sizeof *c.workers, err)) ||
	    !(c.tenants = lbs_calloc(run->n, sizeof *c.tenants, err)) ||
	    !(c.groups = lbs_calloc(run->n, sizeof *c.groups, err)) ||
	    !(c.fds = lbs_calloc(run->n, sizeof *c.fds, err)) ||
	    !(c.cpu_s = lbs_calloc(run->n, sizeof *c.cpu_s, err)) ||
	    !(c.steal_at = lbs_calloc(run->n, sizeof *c.steal_at, err))) {
		lbs_net_destroy(&net);
		teardown(&c, false);
		return LBS_EINTERNAL;
	}
	for (size_t i = 0; i < run->n; i++)
		c.workers[i].to_fd = c.workers[i].from_fd = -1;
	st = lbs_cgroup_open(&c.cg, err);
	/* Each worker is bound to a CPU, the largest quotas first, each onto
	 * the CPU with the least quota so far: quotas are shares of a core,
	 * and a worker left to migrate waits behind the others on its CPU and
	 * loses the quota of the periods it waits in (doc/validation.md). */
	int *cpu = lbs_calloc(run->n, sizeof *cpu, err);
	if (!cpu)
		st = LBS_EINTERNAL;
	else
		lbs_testbed_place(run, cpu);
	/* Every worker is started (its buffers made at full speed, outside
	 * any quota) before any is limited. Torch workers meet in a process
	 * group as they start: all are started, then each is waited for. */
	c.torch = sc->testbed.worker == LBS_TB_WORKER_TORCH;
	char init[sizeof c.rendezvous + 16] = "";
	if (st == LBS_OK && c.torch)
		st = rendezvous_make(c.rendezvous, init, sizeof init, err);
	/* The teacher-student task: every sample of the run a fresh one (the
	 * stream teacher_student.py trains on), rank 0's held-out losses kept. */
	const bool task = c.torch && !strcmp(sc->model.name, "teacher-student");
	if (st == LBS_OK && task) {
		lbs_fmt(c.loss_file, sizeof c.loss_file, "%s/losses", c.rendezvous);
		if (!(c.end_s = lbs_calloc((size_t)sc->iterations, sizeof *c.end_s, err)) ||
		    !(c.samples_at = lbs_calloc((size_t)sc->iterations, sizeof *c.samples_at, err)))
			st = LBS_EINTERNAL;
	}
	/* [sync]: the mode's name as the torch worker takes it; under ssp,
	 * asp and backup a parameter server, rank N, holds the model (and
	 * evaluates it). */
	const int mode = sc->sync.mode;
	const bool server = c.torch && via_server(mode);
	static const char *const sync_names[] = { "bsp", "backup", "ssp", "asp", "dropcompute", "local-sgd" };
	if (st == LBS_OK && server)
		lbs_fmt(c.ps_log, sizeof c.ps_log, "%s/pushes", c.rendezvous);
	for (size_t i = 0; i <= run->n && st == LBS_OK; i++) {
		if (i == run->n && !server)
			break;
		char name[32];
		int64_t cap = i < run->n && run->max_batch[i] < sc->run.global_batch ? run->max_batch[i]
										   : sc->run.global_batch;
		lbs_tb_torch_spec ts = { .net = sc->model.name, .max_batch = cap,
					 .global_batch = sc->run.global_batch, .cpu = i < run->n ? cpu[i] : -1, .rank = i,
					 .world = run->n + (server ? 1 : 0), .rendezvous = init,
					 .seed = (uint64_t)sc->run.seed, .ddp = sc->testbed.ddp != 0,
					 .loss_file = task && (i == run->n || (i == 0 && !server)) ? c.loss_file : NULL,
					 .loss_every = sc->testbed.loss_every,
					 .sync = sync_names[mode], .staleness = sc->sync.staleness,
					 .backup = sc->sync.backup_workers, .period = sc->sync.period,
					 .penalty = sc->convergence.staleness_penalty == LBS_STALE_NONE ? "none" : "inverse",
					 .ps = i == run->n, .ps_log = i == run->n ? c.ps_log : NULL };
		lbs_cgroup *g = i < run->n ? &c.groups[i] : &c.ps_group;
		lbs_tb_worker *tw = i < run->n ? &c.workers[i] : &c.ps;
		if ((st = lbs_cgroup_create(&c.cg, i < run->n ? lbs_fmt(name, sizeof name, "w%zu", i) : "ps", g, err)) ==
		    LBS_OK)
			st = c.torch ? lbs_tb_torch_spawn(tw, &ts, err)
				     : lbs_tb_worker_start(tw, &net, cap, cpu[i], err);
		if (interrupt && *interrupt && st == LBS_OK)
			st = lbs_error_set(err, LBS_EINTR, "interrupted while starting the workers");
	}
	if (c.torch && st == LBS_OK)
		st = torch_ready(c.workers, c.fds, run->n, sc->model.name, interrupt, err);
	if (server && st == LBS_OK)
		st = torch_ready(&c.ps, c.fds, 1, sc->model.name, interrupt, err);
	/* The server stands for another machine: it has a core of its own. */
	if (server && st == LBS_OK && (st = lbs_cgroup_set_cores(&c.cg, &c.ps_group, 1.0, err)) == LBS_OK)
		st = lbs_cgroup_attach(&c.ps_group, c.ps.pid, err);
	/* The coordinator itself runs in a group of the run's weight without a
	 * quota: on a loaded machine, its waking up late for each answer would
	 * be counted in every iteration (doc/validation.md). */
	if (st == LBS_OK && (st = lbs_cgroup_create(&c.cg, "coordinator", &c.self, err)) == LBS_OK &&
	    (st = lbs_cgroup_set_cores(&c.cg, &c.self, 1.0, err)) == LBS_OK)
		st = lbs_cgroup_attach(&c.self, getpid(), err);
	/* The network's processes, in the coordinator's group (the exchange
	 * is not the workers' compute: a NIC does not take its host's quota). */
	if (st == LBS_OK && sc->network.ops != &lbs_network_none)
		st = lbs_tb_exchange_start(&c.x, &sc->network, run->n, sc->model.gradient_bytes, err);
	/* Each co-located job's process, stopped until the generator turns it
	 * on, in its worker's group and on its CPU. */
	for (size_t i = 0; i < run->n && st == LBS_OK; i++) {
		double load = lbs_testbed_tenant_load(sc, run->workers[i].group);
		size_t bytes = (size_t)(lbs_testbed_tenant_memory(sc, run->workers[i].group) * LBS_TESTBED_MACHINE_MEMORY);
		if (load > 0 && (st = lbs_tb_tenant_start(&c.tenants[i], load, bytes, cpu[i], err)) == LBS_OK)
			st = lbs_cgroup_attach(&c.groups[i], c.tenants[i].pid, err);
	}
	if (st == LBS_OK)
		st = set_quotas(&c, 0, 0, err);
	for (size_t i = 0; i < run->n && st == LBS_OK; i++)
		st = lbs_cgroup_attach(&c.groups[i], c.workers[i].pid, err);
	/* Where each answer's time went (doc/validation.md): appended to the
	 * file LBSIM_TESTBED_TIMELINE names, a header first in a new one. */
	const char *tl = getenv("LBSIM_TESTBED_TIMELINE");
	if (st == LBS_OK && tl && *tl) {
		if (!(c.timeline = fopen(tl, "a")))
			st = lbs_error_set(err, LBS_EIO, "LBSIM_TESTBED_TIMELINE=%s: %s", tl, strerror(errno));
		else if (ftell(c.timeline) == 0)
			fputs("policy\titeration\tworker\tbatch\tstart_delay_s\tcompute_s\tanswer_delay_s\tcpu_s\texchange_s\t"
			      "exchange_cpu_s\n",
			      c.timeline);
	}
	c.t0 = lbs_monotonic_s();
	if (st == LBS_OK && mode != LBS_SYNC_BSP && mode != LBS_SYNC_DROPCOMPUTE) {
		if ((st = run_steps(&c, observer, ctx, interrupt, err)) == LBS_OK && c.end_s)
			st = held_out(&c, err);
		teardown(&c, st == LBS_OK);
		free(cpu);
		lbs_net_destroy(&net);
		return st;
	}
	for (; st == LBS_OK && run->iteration < sc->iterations; run->iteration++) {
		if (run->iteration > 0)
			st = plan(run, c.cpu_s, c.tenants, lbs_monotonic_s() - c.t0, err);
		if (st == LBS_OK)
			st = run->drop ? iterate_drop(&c, observer, ctx, interrupt, err)
				       : iterate(&c, observer, ctx, interrupt, err);
		if (st == LBS_OK && c.end_s) {
			c.end_s[run->iteration] = run->stats.sim_time_s;
			c.samples_at[run->iteration] = run->stats.samples;
		}
		if (st == LBS_OK && interrupt && *interrupt)
			st = lbs_error_set(err, LBS_EINTR, "interrupted after %lld iterations",
					   (long long)run->stats.iterations);
	}
	if (st == LBS_OK && c.end_s)
		st = held_out(&c, err);
	teardown(&c, st == LBS_OK);
	free(cpu);
	lbs_net_destroy(&net);
	return st;
}

lbs_status lbs_testbed_calibrate(const lbs_scenario *sc, const char *profile, bool quiet, lbs_error *err)
{
	lbs_cgroups cg;
	lbs_cgroup g = { 0 };
	lbs_status st = lbs_cgroup_probe(&cg, LBS_TESTBED_PERIOD_US, err);
	if (st == LBS_OK)
		st = lbs_cgroup_open(&cg, err);
	if (st == LBS_OK)
		st = lbs_cgroup_create(&cg, "calibrate", &g, err);
	if (st == LBS_OK)
		st = lbs_cgroup_set_cores(&cg, &g, 1.0, err);
	/* Every batch from 4 to half the global batch (at most 64 of them,
	 * evenly spaced): a GEMM's time per sample depends on the batch modulo
	 * the BLAS kernel's tile (a multiple of 8 is up to 5% cheaper than
	 * its neighbours here), the policies' splits give any batch, and the
	 * validation's simulation takes these times themselves
	 * (profile_cost = measured; doc/validation.md). */
	char batches[1024] = "";
	size_t at = 0;
	const int64_t hi = sc->run.global_batch / 2, step = (hi - 4) / 64 + 1;
	for (int64_t b = 4; b <= hi && at + 24 < sizeof batches; b += step)
		at += (size_t)snprintf(batches + at, sizeof batches - at, "%s%lld", at ? "," : "", (long long)b);
	if (!at)
		lbs_fmt(batches, sizeof batches, "1,2");
	pid_t pid = -1;
	int go[2] = { -1, -1 };
	if (st == LBS_OK && pipe(go) != 0)
		st = lbs_error_set(err, LBS_EINTERNAL, "pipe: %s", strerror(errno));
	if (st == LBS_OK) {
		fflush(NULL);
		if ((pid = fork()) < 0)
			st = lbs_error_set(err, LBS_EINTERNAL, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		/* Nothing is timed before the coordinator has moved it into its group. */
		char c;
		close(go[1]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (read(go[0], &c, 1) != 1)
			_exit(LBS_EINTERNAL);
		if (quiet && !freopen("/dev/null", "w", stdout))
			_exit(LBS_EINTERNAL);
		const bool torch = sc->testbed.worker == LBS_TB_WORKER_TORCH;
		char *argv[] = { "calibrate", torch ? "--torch" : "--blas", (char *)sc->model.name, "--batches", batches,
				 "--reps", "5", "--warmup", "1", "-o", (char *)profile, torch ? NULL : "--threads", "1",
				 NULL };
		optind = 1;
		int argc = 0;
		while (argv[argc])
			argc++;
		int rc = lbs_calibrate_command_with(argc, argv, &lbs_tb_torch_framework);
		fflush(NULL);
		_exit(rc);
	}
	if (pid > 0) {
		st = lbs_cgroup_attach(&g, pid, err);
		if (st == LBS_OK && write(go[1], "g", 1) != 1)
			st = lbs_error_set(err, LBS_EINTERNAL, "the calibration process died");
		int status = 0;
		if (st != LBS_OK)
			kill(pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (st == LBS_OK && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
			st = lbs_error_set(err, LBS_EINTERNAL, "lbsim calibrate --%s %s for the testbed failed "
					   "(status %d)", sc->testbed.worker == LBS_TB_WORKER_TORCH ? "torch" : "blas",
					   sc->model.name, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
	if (go[0] >= 0) {
		close(go[0]);
		close(go[1]);
	}
	lbs_cgroup_remove(&g);
	lbs_cgroup_close(&cg);
	return st;
}

/* The mean wall time and the median CPU time of `reps` iterations at
 * `batch` of each of the first n <= 2 workers, all kept busy at once: each
 * is sent its next batch as soon as it answers, until every one has its
 * count, and when n > 1 the first answer of each (which may have started
 * alone) is not counted. The mean, not the median, of the wall times:
 * back to back, an iteration's place in the CFS periods is where the last
 * one ended, and over the repetitions the mean averages those places. */
static lbs_status time_batches(lbs_tb_worker *w, int n, int64_t batch, int reps, double *med, double *cpu_med,
			       lbs_error *err)
{
	enum { MAX_REPS = 64 };
	const int first = n > 1, want = reps + first;
	double t[2][MAX_REPS + 1], c[2][MAX_REPS + 1];
	int got[2] = { 0, 0 }, busy = n;
	lbs_status st = LBS_OK;
	if (n < 1 || n > 2 || reps < 1 || reps > MAX_REPS)
		return lbs_error_set(err, LBS_EINTERNAL, "time_batches: %d workers, %d repetitions", n, reps);
	for (int i = 0; i < n && st == LBS_OK; i++)
		st = lbs_tb_worker_send(&w[i], batch, err);
	while (st == LBS_OK && busy > 0) {
		struct pollfd fds[2];
		for (int i = 0; i < n; i++)
			fds[i] = (struct pollfd){ .fd = w[i].from_fd, .events = POLLIN };
		if (poll(fds, (nfds_t)n, -1) < 0) {
			if (errno == EINTR)
				continue;
			return lbs_error_set(err, LBS_EINTERNAL, "poll: %s", strerror(errno));
		}
		for (int i = 0; i < n && st == LBS_OK; i++) {
			if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			lbs_tb_result r;
			if ((st = lbs_tb_worker_read(&w[i], &r, err)) != LBS_OK)
				break;
			if (got[i] < want) {
				c[i][got[i]] = r.cpu_s;
				t[i][got[i]++] = r.compute_s;
			}
			bool done = true;
			for (int j = 0; j < n; j++)
				done = done && got[j] >= want;
			if (done)
				busy--; /* this one is idle now; the others answer once more */
			else
				st = lbs_tb_worker_send(&w[i], batch, err);
		}
	}
	for (int i = 0; i < n && st == LBS_OK; i++) {
		double sum = 0;
		for (int k = first; k < want; k++)
			sum += t[i][k];
		med[i] = sum / reps;
		cpu_med[i] = lbs_calib_median(c[i] + first, (size_t)reps);
	}
	return st;
}

/* The batch the machine's own measurements time: a quarter of the global
 * batch, one every worker can hold. */
static int64_t probe_batch(const lbs_scenario *sc)
{
	int64_t batch = sc->run.global_batch / 4 > 0 ? sc->run.global_batch / 4 : 1;
	for (size_t k = 0; k < sc->n_groups; k++)
		if (sc->groups[k].cost.max_batch > 0 && sc->groups[k].cost.max_batch < batch)
			batch = sc->groups[k].cost.max_batch;
	return batch;
}

/* The CPU they run on: the last (-1, unbound, on a machine of one). */
static int probe_cpu(void)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	return ncpu > 1 ? (int)ncpu - 1 : -1;
}

/* A worker of sc's backend for the machine's own measurements, in a new
 * group g without a quota, on CPU `cpu`, for batches up to max_batch (a
 * torch worker: world 1, no exchange). */
static lbs_status probe_worker(const lbs_scenario *sc, const lbs_net *net, int64_t max_batch, int cpu,
			       lbs_cgroups *cg, lbs_cgroup *g, const char *name, lbs_tb_worker *w, lbs_error *err)
{
	lbs_status st;
	if ((st = lbs_cgroup_create(cg, name, g, err)) != LBS_OK || (st = lbs_cgroup_set_cores(cg, g, 1.0, err)) != LBS_OK)
		return st;
	if (sc->testbed.worker == LBS_TB_WORKER_TORCH) {
		lbs_tb_torch_spec ts = { .net = sc->model.name, .max_batch = max_batch, .global_batch = sc->run.global_batch,
					 .cpu = cpu, .rank = 0, .world = 1, .seed = (uint64_t)sc->run.seed };
		if ((st = lbs_tb_torch_spawn(w, &ts, err)) == LBS_OK)
			st = lbs_tb_worker_ready(w, "the torch worker", err);
	} else {
		st = lbs_tb_worker_start(w, net, max_batch, cpu, err);
	}
	return st == LBS_OK ? lbs_cgroup_attach(g, w->pid, err) : st;
}

/* One worker of sc's backend for the machine's own measurements, alone in
 * a group of its own without a quota on probe_cpu(): what lbs_testbed_speed
 * and lbs_testbed_resize run. */
typedef struct probe {
	lbs_cgroups cg;
	lbs_cgroup g;
	lbs_tb_worker w;
	lbs_net net;
	bool has_net, opened;
} probe;

static lbs_status probe_open(probe *p, const lbs_scenario *sc, int64_t max_batch, const char *name, lbs_error *err)
{
	*p = (probe){ .w = { .to_fd = -1, .from_fd = -1 } };
	lbs_status st = lbs_cgroup_probe(&p->cg, LBS_TESTBED_PERIOD_US, err);
	if (st == LBS_OK && (st = lbs_net_create(&p->net, sc->model.name, err)) == LBS_OK)
		p->has_net = true;
	if (st == LBS_OK && (st = lbs_cgroup_open(&p->cg, err)) == LBS_OK)
		p->opened = true;
	if (st == LBS_OK)
		st = probe_worker(sc, &p->net, max_batch, probe_cpu(), &p->cg, &p->g, name, &p->w, err);
	return st;
}

static void probe_close(probe *p)
{
	lbs_tb_worker_stop(&p->w);
	lbs_cgroup_remove(&p->g);
	if (p->opened)
		lbs_cgroup_close(&p->cg);
	if (p->has_net)
		lbs_net_destroy(&p->net);
}

lbs_status lbs_testbed_speed(const lbs_scenario *sc, int reps, int64_t *batch, double *cpu_s, lbs_error *err)
{
	probe p;
	double m, cm;
	*batch = probe_batch(sc);
	*cpu_s = NAN;
	lbs_status st = probe_open(&p, sc, *batch, "probe", err);
	if (st == LBS_OK && (st = time_batches(&p.w, 1, *batch, reps, &m, &cm, err)) == LBS_OK)
		*cpu_s = cm;
	probe_close(&p);
	return st;
}

/* The median of x[0..n) in *out[0], its range in out[1], out[2]. */
static void median_range(double *x, size_t n, double out[3])
{
	out[1] = out[2] = x[0];
	for (size_t i = 1; i < n; i++) {
		out[1] = fmin(out[1], x[i]);
		out[2] = fmax(out[2], x[i]);
	}
	out[0] = lbs_calib_median(x, n);
}

lbs_status lbs_testbed_timeshare(const lbs_scenario *sc, lbs_tb_timeshare *out, lbs_error *err)
{
	enum { MAX_ROUNDS = 16 };
	lbs_cgroups cg;
	lbs_cgroup g[2];
	lbs_tb_worker w[2] = { { .to_fd = -1, .from_fd = -1 }, { .to_fd = -1, .from_fd = -1 } };
	lbs_net net;
	memset(g, 0, sizeof g);
	const double quota = out->quota > 0 ? out->quota : 0.25;
	const int reps = out->reps > 0 ? out->reps : 5, rounds = out->rounds > 0 ? out->rounds : 5;
	if (rounds > MAX_ROUNDS || !(quota < 1))
		return lbs_error_set(err, LBS_EINTERNAL, "timeshare: %d rounds, quota %g", rounds, quota);
	const int64_t batch = probe_batch(sc);
	const int cpu = probe_cpu();
	*out = (lbs_tb_timeshare){ .batch = batch, .quota = quota, .reps = reps, .rounds = rounds };
	lbs_status st = lbs_cgroup_probe(&cg, LBS_TESTBED_PERIOD_US, err);
	if (st != LBS_OK)
		return st;
	if ((st = lbs_net_create(&net, sc->model.name, err)) != LBS_OK)
		return st;
	st = lbs_cgroup_open(&cg, err);
	for (int i = 0; i < 2 && st == LBS_OK; i++) {
		char name[32];
		st = probe_worker(sc, &net, batch, cpu, &cg, &g[i], lbs_fmt(name, sizeof name, "timeshare%d", i), &w[i],
				  err);
	}
	/* Per round: the wall and CPU times of the three phases (free, alone,
	 * shared), then the four losses of the core (CPU alone and shared,
	 * wall alone and shared). */
	double t[3][MAX_ROUNDS], c[3][MAX_ROUNDS], lost[4][MAX_ROUNDS];
	for (int r = 0; r < rounds && st == LBS_OK; r++) {
		double m[2], cm[2];
		for (int i = 0; i < 2 && st == LBS_OK; i++)
			st = lbs_cgroup_set_cores(&cg, &g[i], 1.0, err);
		if (st == LBS_OK && (st = time_batches(w, 1, batch, reps, m, cm, err)) == LBS_OK) {
			t[0][r] = m[0];
			c[0][r] = cm[0];
		}
		for (int i = 0; i < 2 && st == LBS_OK; i++)
			st = lbs_cgroup_set_cores(&cg, &g[i], quota, err);
		if (st == LBS_OK && (st = time_batches(w, 1, batch, reps, m, cm, err)) == LBS_OK) {
			t[1][r] = m[0];
			c[1][r] = cm[0];
		}
		if (st == LBS_OK && (st = time_batches(w, 2, batch, reps, m, cm, err)) == LBS_OK) {
			t[2][r] = 0.5 * (m[0] + m[1]);
			c[2][r] = 0.5 * (cm[0] + cm[1]);
		}
		if (st == LBS_OK) {
			const double period_s = 1e-6 * (double)cg.period_us;
			for (int k = 0; k < 2; k++) {
				lost[k][r] = quota * (1 - c[0][r] / c[1 + k][r]) * period_s;
				lost[2 + k][r] = (quota - t[0][r] / t[1 + k][r]) * period_s;
			}
		}
	}
	if (st == LBS_OK) {
		double x[3];
		median_range(t[0], (size_t)rounds, x), out->free_s = x[0];
		median_range(t[1], (size_t)rounds, x), out->alone_s = x[0];
		median_range(t[2], (size_t)rounds, x), out->shared_s = x[0];
		median_range(c[0], (size_t)rounds, x), out->free_cpu_s = x[0];
		median_range(c[1], (size_t)rounds, x), out->alone_cpu_s = x[0];
		median_range(c[2], (size_t)rounds, x), out->shared_cpu_s = x[0];
		median_range(lost[0], (size_t)rounds, out->alone_refill_s);
		median_range(lost[1], (size_t)rounds, out->shared_refill_s);
		median_range(lost[2], (size_t)rounds, out->alone_wall_s);
		median_range(lost[3], (size_t)rounds, out->shared_wall_s);
	}
	for (int i = 0; i < 2; i++) {
		lbs_tb_worker_stop(&w[i]);
		lbs_cgroup_remove(&g[i]);
	}
	lbs_cgroup_close(&cg);
	lbs_net_destroy(&net);
	return st;
}

lbs_status lbs_testbed_torch_exchange(const lbs_scenario *sc, int reps, lbs_tb_exchange_cost *out, lbs_error *err)
{
	enum { MAX_REPS = 64 };
	if (reps < 1 || reps > MAX_REPS)
		return lbs_error_set(err, LBS_EINTERNAL, "torch_exchange: %d repetitions", reps);
	lbs_run run;
	lbs_status st = lbs_run_create(&run, sc, "static", err);
	if (st != LBS_OK)
		return st;
	const size_t n = run.n;
	lbs_cgroups cg;
	lbs_cgroup *g = lbs_calloc(n, sizeof *g, err);
	lbs_tb_worker *w = lbs_calloc(n, sizeof *w, err);
	struct pollfd *fds = lbs_calloc(n, sizeof *fds, err);
	int *cpu = lbs_calloc(n, sizeof *cpu, err);
	int64_t *batch = lbs_calloc(n, sizeof *batch, err);
	double *wall = lbs_calloc((size_t)reps, sizeof *wall, err), *work = lbs_calloc((size_t)reps, sizeof *work, err);
	char dir[LBS_TB_DIR_MAX] = "", init[LBS_TB_DIR_MAX + 16];
	bool opened = false;
	if (!g || !w || !fds || !cpu || !batch || !wall || !work)
		st = LBS_EINTERNAL;
	for (size_t i = 0; st == LBS_OK && i < n; i++)
		w[i].to_fd = w[i].from_fd = -1;
	if (st == LBS_OK && (st = lbs_cgroup_probe(&cg, LBS_TESTBED_PERIOD_US, err)) == LBS_OK &&
	    (st = lbs_cgroup_open(&cg, err)) == LBS_OK)
		opened = true;
	if (st == LBS_OK) {
		lbs_testbed_place(&run, cpu);
		lbs_split_even(sc->run.global_batch, n, batch);
		st = rendezvous_make(dir, init, sizeof init, err);
	}
	for (size_t i = 0; st == LBS_OK && i < n; i++) {
		char name[32];
		lbs_tb_torch_spec ts = { .net = sc->model.name, .max_batch = batch[i], .global_batch = sc->run.global_batch,
					 .cpu = cpu[i], .rank = i, .world = n, .rendezvous = init,
					 .seed = (uint64_t)sc->run.seed, .ddp = sc->testbed.ddp != 0 };
		if ((st = lbs_cgroup_create(&cg, lbs_fmt(name, sizeof name, "exchange%zu", i), &g[i], err)) == LBS_OK &&
		    (st = lbs_cgroup_set_cores(&cg, &g[i], 1.0, err)) == LBS_OK)
			st = lbs_tb_torch_spawn(&w[i], &ts, err);
	}
	if (st == LBS_OK)
		st = torch_ready(w, fds, n, sc->model.name, NULL, err);
	for (size_t i = 0; st == LBS_OK && i < n; i++)
		st = lbs_cgroup_attach(&g[i], w[i].pid, err);
	/* One untimed iteration, then `reps`: each worker its even share, all
	 * at once; the exchange is what the last to finish its compute waited
	 * (the others also waited for it), its work the CPU a rank spent in it
	 * (the median over the ranks: every rank does the same work in a ring,
	 * and the busiest is the one the others' contention slowed most). */
	double *rank_cpu = lbs_calloc(n, sizeof *rank_cpu, err);
	if (!rank_cpu)
		st = LBS_EINTERNAL;
	for (int r = -1; st == LBS_OK && r < reps; r++) {
		double x = INFINITY, c = 0;
		for (size_t i = 0; st == LBS_OK && i < n; i++)
			st = lbs_tb_worker_send(&w[i], batch[i], err);
		for (size_t i = 0; st == LBS_OK && i < n; i++) {
			lbs_tb_result a;
			if ((st = lbs_tb_worker_read(&w[i], &a, err)) == LBS_OK) {
				x = fmin(x, a.exchange_s);
				rank_cpu[i] = a.exchange_cpu_s;
			}
		}
		if (st == LBS_OK)
			c = lbs_calib_median(rank_cpu, n);
		if (st == LBS_OK && r >= 0) {
			wall[r] = x;
			work[r] = c;
		}
	}
	if (st == LBS_OK) {
		double m[3];
		median_range(wall, (size_t)reps, m);
		memcpy(out->wall_s, m, sizeof m);
		median_range(work, (size_t)reps, m);
		memcpy(out->cpu_s, m, sizeof m);
		out->reps = reps;
	}
	for (size_t i = 0; w && i < n; i++)
		lbs_tb_worker_stop(&w[i]);
	for (size_t i = 0; g && i < n; i++)
		lbs_cgroup_remove(&g[i]);
	if (opened)
		lbs_cgroup_close(&cg);
	rendezvous_remove(dir);
	free(g);
	free(w);
	free(fds);
	free(cpu);
	free(batch);
	free(wall);
	free(work);
	free(rank_cpu);
	lbs_run_destroy(&run);
	return st;
}

lbs_status lbs_testbed_resize(const lbs_scenario *sc, lbs_tb_resize *out, lbs_error *err)
{
	enum { MAX_ROUNDS = 16 };
	const int rounds = out->rounds > 0 ? out->rounds : 5;
	if (rounds > MAX_ROUNDS)
		return lbs_error_set(err, LBS_EINTERNAL, "resize: %d rounds", rounds);
	const int64_t b = probe_batch(sc), d = b / 8 > 2 ? b / 8 : 2;
	if (b - d < 1)
		return lbs_error_set(err, LBS_EINPUT, "resize: the global batch %lld is too small to measure re-sizing "
				     "(a quarter of it, %lld, less 2 samples)", (long long)sc->run.global_batch, (long long)b);
	*out = (lbs_tb_resize){ .batch = b, .delta = d, .rounds = rounds };
	/* The fresh batches come after b + d, each run for the first time in
	 * its round; the worker's warm-up is at the largest, past them. */
	int64_t fresh[MAX_ROUNDS];
	for (int r = 0; r < rounds; r++)
		fresh[r] = b + d + 1 + r;
	const int64_t top = b + d + 1 + rounds;
	probe p;
	lbs_status st = probe_open(&p, sc, top, "resize", err);
	lbs_resize_bench bench = { .run = lbs_tb_worker_step, .ctx = &p.w };
	lbs_resize_opts o = { .batch = b, .delta = d, .rounds = rounds, .block = 6, .fresh = fresh };
	lbs_resize_result res;
	if (st == LBS_OK && (st = lbs_calib_resize(&bench, &o, &res, err)) == LBS_OK) {
		out->resize[0] = res.resize_cost, out->resize[1] = res.resize_lo, out->resize[2] = res.resize_hi;
		out->new_batch[0] = res.new_batch_cost, out->new_batch[1] = res.new_lo, out->new_batch[2] = res.new_hi;
		out->against_b = res.against_b;
		out->first_vs_repeated = res.first_vs_repeated;
	}
	probe_close(&p);
	return st;
}
