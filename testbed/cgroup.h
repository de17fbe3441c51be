/* SPDX-License-Identifier: GPL-3.0-or-later */
/* CPU quotas for the testbed's workers (doc/validation.md): one control
 * group per worker whose CFS bandwidth limit is the worker's share of one
 * core, quota / period, so that a worker of availability a(t) gets a(t) of
 * a core at any instant, throttled within each period.
 *
 * Two backends fill one table of operations: cgroup v2 (cpu.max,
 * cpu.weight) and cgroup v1 (cpu.cfs_quota_us, cpu.cfs_period_us,
 * cpu.shares); lbs_cgroup_probe picks the one the machine mounts. Every
 * group lives under one directory of the run, lbsim-testbed-PID, whose
 * weight is raised so that on a shared machine the quotas are what the
 * workers get (a quota is a ceiling, the weight makes it one they reach).
 * lbs_cgroup_probe also removes the directories of runs whose coordinator
 * died without removing them (killed with SIGKILL). */
#ifndef LBS_CGROUP_H
#define LBS_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/error.h"

typedef struct lbs_cgroup_ops lbs_cgroup_ops;

typedef struct lbs_cgroups {
	const lbs_cgroup_ops *ops;
	char mount[256];   /* the hierarchy with the cpu controller */
	char top[512];     /* mount/lbsim-testbed-PID */
	int64_t period_us; /* CFS period of every group */
	bool made_top;
} lbs_cgroups;

typedef struct lbs_cgroup {
	char dir[600];
	int64_t quota_us;  /* last written; 0: none yet; -1: no limit */
} lbs_cgroup;

struct lbs_cgroup_ops {
	const char *name; /* "cgroup v2", "cgroup v1" */
	/* Makes `top` a parent whose children may limit CPU, with a high weight. */
	lbs_status (*prepare_top)(const lbs_cgroups *c, lbs_error *err);
	/* Writes quota_us per period_us (quota_us >= 1000; -1: no limit). */
	lbs_status (*set_quota)(const lbs_cgroups *c, const lbs_cgroup *g, int64_t quota_us, lbs_error *err);
	/* CPU time the group's processes used, in seconds (NaN: unknown). */
	double (*usage_s)(const lbs_cgroups *c, const lbs_cgroup *g);
};

/* Finds the CPU controller (v2 first, then v1) and checks that this process
 * may use it. LBS_ENOTESTBED with a message saying exactly what is missing
 * (not root, no cgroup file system, no cpu controller, not writable). */
lbs_status lbs_cgroup_probe(lbs_cgroups *c, int64_t period_us, lbs_error *err);

/* Uses the backend `version` (1 or 2) on the hierarchy mounted at `mount`
 * without probing the machine: for tests, which hold a directory laid out
 * as the kernel's would be (tests/unit/test_cgroup.c). LBS_EINTERNAL for
 * another version or a path too long. */
lbs_status lbs_cgroup_use(lbs_cgroups *c, int version, const char *mount, int64_t period_us, lbs_error *err);

/* Creates the run's directory (mount/lbsim-testbed-PID). */
lbs_status lbs_cgroup_open(lbs_cgroups *c, lbs_error *err);

/* Creates group `name` under the run's directory. */
lbs_status lbs_cgroup_create(lbs_cgroups *c, const char *name, lbs_cgroup *g, lbs_error *err);

/* Sets the group's share of one core, cores x period (at least 1 ms, the
 * kernel's minimum; no limit from one core up); writes only when it
 * changes. */
lbs_status lbs_cgroup_set_cores(lbs_cgroups *c, lbs_cgroup *g, double cores, lbs_error *err);

/* Moves process pid into the group. */
lbs_status lbs_cgroup_attach(const lbs_cgroup *g, pid_t pid, lbs_error *err);

/* Moves process pid back to the root of the hierarchy (out of the run's
 * groups, so that they can be removed). */
void lbs_cgroup_back(const lbs_cgroups *c, pid_t pid);

/* Removes a group whose processes have exited (true if it is gone). */
bool lbs_cgroup_remove(lbs_cgroup *g);

/* Removes the run's directory (its groups must be removed first). */
void lbs_cgroup_close(lbs_cgroups *c);

#endif
