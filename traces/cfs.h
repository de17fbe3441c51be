/* SPDX-License-Identifier: GPL-3.0-or-later */
/* CPU limits as Linux enforces them (CFS bandwidth control: cgroup v2
 * cpu.max, v1 cpu.cfs_quota_us / cpu.cfs_period_us, a container's CPU
 * limit, the testbed's workers): a worker of availability a(t) < 1 may use
 * a(t) x period of CPU time in each period and runs at full speed until it
 * has, then waits, throttled, for the next period. The fluid rule (rate
 * a(t) all the time) is its average over many periods; over one iteration
 * of a few dozen periods the two differ by where the iteration starts and
 * ends in the periods, which moves each worker's time by up to a period
 * and the slowest one's (the barrier's) by more than the mean.
 *
 * The periods of a worker start at phase + k x period, the phase its own
 * (drawn by the caller); quota unused at a period's end is lost, as the
 * kernel does without cpu.max's burst. a(t) is the inner source's level at
 * each period's start; at a(t) >= 1 the worker is not limited and runs at
 * rate a(t).
 *
 * With a tick > 0 the quota is checked as the kernel checks it, at each
 * scheduler tick (multiples of `tick` from time 0, 1 / CONFIG_HZ: 4 ms at
 * 250 Hz) rather than the instant it runs out: a worker whose quota runs
 * out between ticks runs on to the next one (or to the period's end), and
 * the overrun is taken from the quota of its next periods, across
 * barriers too. Over many periods the share is still a(t); what moves is
 * when in an iteration the worker gets it: it may start an iteration
 * throttled, paying for the last one's overrun. tick 0: the quota is
 * exact.
 *
 * The quota state lives between calls, so a later piece of work (the
 * gradient exchange after the compute, with [network] exchange_on_workers;
 * sim/run.c) takes what the earlier one left: in the same period, the
 * quota left (none: it waits, throttled, for the next period); in a later
 * one, a new quota less the overrun still owed, the periods it was idle in
 * having paid their part. A piece that starts where the last one ended
 * does not run on in that one's overrun to the tick: a task that blocked
 * past its quota is throttled when it wakes (the kernel accounts its time
 * as it blocks), and a worker blocks at the barrier; only the last worker
 * to finish, whose exchange follows its compute without a pause, may lose
 * up to a tick there. */
#ifndef LBS_CFS_H
#define LBS_CFS_H

#include "traces/avail.h"
#include "util/error.h"

/* Wraps `inner` (the source takes it over; it must be constant or answer
 * level(), as trace sources do). Readings and epochs pass through. */
lbs_status lbs_cfs_create(lbs_avail inner, double period_s, double phase_s, double tick_s, lbs_avail *out,
			  lbs_error *err);

#endif
