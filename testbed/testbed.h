/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The testbed: a scenario run for real on this machine (doc/validation.md).
 *
 * The run is built exactly as the simulation builds it (lbs_run_create:
 * the same workers, availability sources, memory caps and policy object),
 * and then driven by a coordinator instead of the event engine:
 *  - one worker process per simulated worker (testbed/worker.h) runs the
 *    real forward and backward GEMMs of the scenario's network ([model]
 *    name, a network of models/nets) for the batch it is given;
 *  - each worker lives in its own control group (testbed/cgroup.h) whose
 *    CPU quota is its availability a(t) of one core, the same a(t) the
 *    simulation integrates; the coordinator re-reads a(t) once per CFS
 *    period and rewrites the quota when it changed, so a change in the
 *    middle of an iteration throttles the worker in the middle of it;
 *  - at each barrier the policy is given the compute times the workers
 *    measured (waiting at the barrier excluded) and its batch sizes are
 *    sent out for the next iteration.
 * Each iteration reaches the observer as an lbs_iteration_record whose
 * times are seconds of the real clock since the first barrier, so the
 * recorder writes a measured run in the schema of a simulated one.
 *
 * A `background` generator's job is a real co-located process beside each
 * of its workers (testbed/tenant.h), on while the generator says so.
 *
 * A network ([network] topology ring or ps) is exchanged for real after
 * the last worker's compute, over tc-shaped links between processes in
 * network namespaces (testbed/exchange.h); the iteration ends when the
 * exchange does.
 *
 * The [sync] modes ssp, asp and backup (through a real parameter server,
 * a torch process of rank N) and local-sgd run with torch workers, on a
 * fixed plan: each worker is sent its next batch when it answers, and the
 * records are written from the server's log once the run is over
 * (doc/validation.md, "The synchronisation modes on the testbed").
 *
 * dropcompute runs too: the coordinator hands out micro-batches up to the
 * time limit and then has the workers exchange what counted.
 *
 * Not emulated (refused by lbs_testbed_check, with the reason): a [sync]
 * mode with the blas worker, backup with a policy that re-plans; GPU
 * groups; network traces; other generators (a CPU-credit bucket depends on busy time the
 * coordinator does not integrate); noise (the
 * machine supplies its own); runs given in epochs; policies that look
 * ahead (the oracle: a real run has no future to look at). Work stealing
 * moves real micro-batches between the worker processes. */
#ifndef LBS_TESTBED_H
#define LBS_TESTBED_H

#include <signal.h>
#include <stdint.h>

#include "sim/run.h"
#include "sim/scenario.h"

#define LBS_TESTBED_PERIOD_US 10000 /* the CFS period of every worker */
/* The memory of a worker's machine, as the testbed scales it: a co-located
 * job of memory share m holds m x this while it is on, and the mem_util a
 * policy reads is what it measurably holds over this. */
#define LBS_TESTBED_MACHINE_MEMORY (64.0 * 1024 * 1024)

/* LBS_OK if the testbed can run scenario sc with policy `policy` (NULL:
 * the scenario's); LBS_EINPUT naming the key or policy it cannot emulate. */
/* What the testbed holds to before it forks anything (doc/validation.md):
 * at most LBS_TESTBED_WORKERS_PER_CPU workers per online CPU and
 * LBS_TESTBED_MAX_WORKERS in all; the workers' quotas at their peak (a
 * group's availability, a whole core beside a co-located process) summing
 * to at most LBS_TESTBED_OVERSUBSCRIBE times the online CPUs (above the
 * CPUs themselves, lbs_testbed_oversubscribed says so). */
#define LBS_TESTBED_WORKERS_PER_CPU 16
#define LBS_TESTBED_MAX_WORKERS 1024
#define LBS_TESTBED_OVERSUBSCRIBE 4

/* The workers' quotas at their peak, in cores, and the online CPUs. */
double lbs_testbed_peak_cores(const lbs_scenario *sc, long *online);

lbs_status lbs_testbed_check(const lbs_scenario *sc, const char *policy, lbs_error *err);
/* ... and what only the run made of it knows (its policy's plan): LBS_EINPUT
 * for a policy that re-plans under [sync] backup. */
lbs_status lbs_testbed_check_run(const lbs_run *run, lbs_error *err);

/* Checks that this machine can run the testbed (root, a cgroup cpu
 * controller, and for a scenario sc with a network, iproute2 and network
 * namespaces with veth, bridge and htb); LBS_ENOTESTBED saying exactly
 * what is missing. sc NULL: no network. */
lbs_status lbs_testbed_probe(const lbs_scenario *sc, lbs_error *err);

/* What the testbed runs on here: "cgroup v1 at /sys/fs/cgroup/cpu". */
void lbs_testbed_describe(char *buf, size_t len);

/* The kernel's scheduler tick, 1 / CONFIG_HZ, at which it checks CFS
 * quotas (traces/cfs.h): from the jiffies counter of /proc/timer_list over
 * 100 ms (root only), rounded to the nearest of 100, 250, 300 and 1000 Hz,
 * else from CONFIG_HZ in /boot/config-RELEASE; 0 if neither says. *how
 * (may be NULL) gets where it came from. */
double lbs_testbed_tick_s(const char **how);

/* Measures the cost profile of sc's network with `lbsim calibrate --blas`
 * (one BLAS thread, batches 4, 8, ... up to half the global batch) in the
 * conditions of a testbed worker of availability 1: a child process in its
 * own control group, with the testbed's weight and no quota (one thread
 * uses at most one core).
 * Writes the profile to `profile`; quiet: the calibration prints nothing. */
lbs_status lbs_testbed_calibrate(const lbs_scenario *sc, const char *profile, bool quiet, lbs_error *err);

/* The load of the co-located job ([generator.NAME] of kind background)
 * of group `group`'s workers, a real process beside each on the testbed;
 * 0: none. */
double lbs_testbed_tenant_load(const lbs_scenario *sc, size_t group);
/* ... and the memory share it holds while on (0: none). */
double lbs_testbed_tenant_memory(const lbs_scenario *sc, size_t group);

/* The CPU each worker of `run` is bound to (cpu[0..run->n), -1: unbound,
 * on a machine of one CPU): the largest a(0) first, each onto the CPU
 * with the least quota so far. */
void lbs_testbed_place(const lbs_run *run, int *cpu);

/* What time-sharing a core costs a worker of a network (doc/validation.md,
 * "What the simulation of a validation models"), in `rounds` rounds of
 * three phases, each `reps` iterations at `batch` back to back on one CPU:
 * without a quota, under a quota of `quota` of that core alone on it, and
 * beside a second such worker on the same core under the same quota. The
 * phases interleave so that the machine's own drift (several percent over
 * minutes on a shared host) moves all three alike; each figure below is
 * the median over the rounds of that round's figure, [lo, hi] its range.
 * The fluid rule says that under the quota a worker does quota x its free
 * rate in wall time and spends the free CPU time; the refills are the
 * share of the core it loses: in CPU time, quota x (1 - free CPU time /
 * CPU time under the quota), in wall time quota - free time / time under
 * the quota (the rate it got); x period, per CFS period. */
typedef struct lbs_tb_timeshare {
	int64_t batch;
	double quota;
	int reps, rounds;
	double free_s, alone_s, shared_s;             /* wall time of an iteration (medians) */
	double free_cpu_s, alone_cpu_s, shared_cpu_s; /* CPU time of the same (medians) */
	double alone_refill_s[3], shared_refill_s[3]; /* in CPU time: median, lo, hi per period */
	double alone_wall_s[3], shared_wall_s[3];     /* in wall time: median, lo, hi per period */
} lbs_tb_timeshare;

/* Measures it for sc's network at a quarter of the global batch; out->quota
 * is the quota to measure at (0: 0.25), out->reps and out->rounds the
 * repetitions per phase and the rounds (0: 5 and 5). */
lbs_status lbs_testbed_timeshare(const lbs_scenario *sc, lbs_tb_timeshare *out, lbs_error *err);

/* The machine's own speed, to tell its drift from the model's error
 * (doc/validation.md): the median CPU time of `reps` iterations of sc's
 * network at *batch (a quarter of the global batch) in one testbed worker
 * alone on the last CPU, without a quota. */
lbs_status lbs_testbed_speed(const lbs_scenario *sc, int reps, int64_t *batch, double *cpu_s, lbs_error *err);

/* The torch workers' own gradient exchange (and optimizer step), measured
 * without quotas: sc's workers started as the testbed starts them, each
 * in a group of its own without a quota, on the CPUs the testbed gives
 * them, `reps` iterations of the global batch split evenly after one
 * untimed. Per iteration, the wall time is the exchange of the last worker
 * to finish its compute (the least any waited) and the work the median over
 * the workers of the CPU time (every thread) each spent in it; medians over
 * the iterations with their ranges. */
typedef struct lbs_tb_exchange_cost {
	int reps;
	double wall_s[3]; /* median, lo, hi */
	double cpu_s[3];
} lbs_tb_exchange_cost;
lbs_status lbs_testbed_torch_exchange(const lbs_scenario *sc, int reps, lbs_tb_exchange_cost *out, lbs_error *err);

/* What changing a worker's batch costs by itself (doc/validation.md,
 * "What re-sizing costs"): lbs_calib_resize (models/calib.h) run on one
 * worker of sc's backend alone on a CPU without a quota, at b = a quarter
 * of the global batch, delta = b / 8 (at least 2), blocks of 6, `rounds`
 * rounds (0: 5), fresh batches b + delta + 1, + 2, ...: the simulation's
 * resize_cost and new_batch_cost, medians with their ranges. */
typedef struct lbs_tb_resize {
	int64_t batch, delta;
	int rounds;
	double resize[3], new_batch[3]; /* median, lo, hi (not floored) */
	double against_b;               /* alternating / constant - 1, the median */
	double first_vs_repeated;       /* a fresh batch's first run / its repeats - 1, the median */
} lbs_tb_resize;
lbs_status lbs_testbed_resize(const lbs_scenario *sc, lbs_tb_resize *out, lbs_error *err);

/* Runs `run` (made by lbs_run_create, its iteration 0 planned) on the
 * testbed, calling observer once per iteration and filling run->stats as
 * the simulation does (sim_time_s: real seconds from the first barrier).
 * Every worker process is killed and every control group removed before it
 * returns, on success, error or when *interrupt becomes non-zero
 * (LBS_EINTR). */
lbs_status lbs_testbed_execute(lbs_run *run, lbs_iteration_fn observer, void *ctx,
			       const volatile sig_atomic_t *interrupt, lbs_error *err);

#endif
