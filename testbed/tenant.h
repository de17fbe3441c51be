/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Co-located tenants for the testbed (doc/validation.md): the real
 * process behind a [generator.NAME] of kind `background`. A tenant is a
 * child process bound to its worker's CPU, in its worker's control group,
 * at the highest priority (nice -20), that takes `load` of the core in
 * every slot of 10 ms: it spins until it has used load x 10 ms of CPU time
 * in the slot, then sleeps to the slot's end. Its priority lets it take
 * that share whatever the worker does, as the generator's model says
 * (availability 1 - load while the job is on). While the job is on it
 * also holds `bytes` of memory, written page by page when the job turns
 * on (the page faults are its own CPU time) and given back to the kernel
 * (MADV_DONTNEED) when it turns off. The coordinator turns it on and off
 * with SIGUSR1 and SIGUSR2; off, it sleeps in sigsuspend. It dies with the
 * coordinator (PR_SET_PDEATHSIG). */
#ifndef LBS_TB_TENANT_H
#define LBS_TB_TENANT_H

#include <stdbool.h>
#include <sys/types.h>

#include "util/error.h"

typedef struct lbs_tb_tenant {
	pid_t pid;  /* 0: none */
	bool on;
	double load;
	size_t bytes;
} lbs_tb_tenant;

/* Starts a tenant taking `load` (0 < load < 1) of CPU `cpu` (< 0: any)
 * and holding `bytes` of memory while on; it starts off. */
lbs_status lbs_tb_tenant_start(lbs_tb_tenant *t, double load, size_t bytes, int cpu, lbs_error *err);

/* Turns it on or off (nothing when it already is). */
void lbs_tb_tenant_set(lbs_tb_tenant *t, bool on);


/* The memory it holds, measured: the Private_Dirty of its
 * /proc/PID/smaps_rollup (pages it wrote itself, not those it shares with
 * the coordinator since the fork), in bytes (NaN: unknown). */
double lbs_tb_tenant_memory_bytes(const lbs_tb_tenant *t);

/* Kills it and waits for it. */
void lbs_tb_tenant_stop(lbs_tb_tenant *t);

#endif
