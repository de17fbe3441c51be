/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "testbed/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#define CGROUP2_MAGIC 0x63677270
#define TOP_PREFIX "lbsim-testbed-"

static lbs_status write_file(const char *dir, const char *file, const char *text, lbs_error *err)
{
	char path[800];
	lbs_fmt(path, sizeof path, "%s/%s", dir, file);
	FILE *f = fopen(path, "w");
	if (!f)
		return lbs_error_set(err, LBS_ENOTESTBED, "%s: cannot open for writing: %s", path, strerror(errno));
	int ok = fputs(text, f) >= 0;
	ok &= fclose(f) == 0;
	if (!ok)
		return lbs_error_set(err, LBS_ENOTESTBED, "%s: cannot write '%s': %s", path, text, strerror(errno));
	return LBS_OK;
}

/* The first number after `key` in dir/file ("usage_usec 123"), or NaN. */
static double read_key(const char *dir, const char *file, const char *key)
{
	char path[800], line[256];
	lbs_fmt(path, sizeof path, "%s/%s", dir, file);
	FILE *f = fopen(path, "r");
	double v = NAN;
	size_t n = key ? strlen(key) : 0;
	while (f && fgets(line, sizeof line, f))
		if (!key || (!strncmp(line, key, n) && line[n] == ' ')) {
			v = strtod(line + n, NULL);
			break;
		}
	if (f)
		fclose(f);
	return v;
}

/* ---- cgroup v2 ------------------------------------------------------- */

/* Whether dir's children already have the cpu controller. */
static bool v2_delegated(const char *dir)
{
	char path[800], line[512] = "";
	FILE *f = fopen(lbs_fmt(path, sizeof path, "%s/cgroup.subtree_control", dir), "r");
	if (f) {
		if (!fgets(line, sizeof line, f))
			line[0] = '\0';
		fclose(f);
	}
	for (char *save = NULL, *tok = strtok_r(line, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
		if (!strcmp(tok, "cpu"))
			return true;
	return false;
}

static lbs_status v2_prepare(const lbs_cgroups *c, lbs_error *err)
{
	/* Written only when needed: a container's root group that holds
	 * processes refuses the write (EBUSY) even when it is already so. */
	lbs_status st = v2_delegated(c->mount) ? LBS_OK : write_file(c->mount, "cgroup.subtree_control", "+cpu", err);
	if (st == LBS_OK)
		st = write_file(c->top, "cgroup.subtree_control", "+cpu", err);
	if (st == LBS_OK)
		st = write_file(c->top, "cpu.weight", "10000", err); /* the maximum */
	return st;
}

static lbs_status v2_quota(const lbs_cgroups *c, const lbs_cgroup *g, int64_t quota_us, lbs_error *err)
{
	char text[64];
	if (quota_us < 0)
		lbs_fmt(text, sizeof text, "max %lld", (long long)c->period_us);
	else
		lbs_fmt(text, sizeof text, "%lld %lld", (long long)quota_us, (long long)c->period_us);
	return write_file(g->dir, "cpu.max", text, err);
}

static double v2_usage(const lbs_cgroups *c, const lbs_cgroup *g)
{
	(void)c;
	return 1e-6 * read_key(g->dir, "cpu.stat", "usage_usec");
}

static const lbs_cgroup_ops v2_ops = { "cgroup v2", v2_prepare, v2_quota, v2_usage };

/* ---- cgroup v1 ------------------------------------------------------- */

static lbs_status v1_prepare(const lbs_cgroups *c, lbs_error *err)
{
	/* 100 times the default 1024 of a process at nice 0 in the root group */
	return write_file(c->top, "cpu.shares", "102400", err);
}

static lbs_status v1_quota(const lbs_cgroups *c, const lbs_cgroup *g, int64_t quota_us, lbs_error *err)
{
	char text[32];
	lbs_status st = LBS_OK;
	if (g->quota_us == 0) /* the period first: a quota above the old period is fine then */
		st = write_file(g->dir, "cpu.cfs_period_us", lbs_fmt(text, sizeof text, "%lld",
								      (long long)c->period_us), err);
	if (st == LBS_OK)
		st = write_file(g->dir, "cpu.cfs_quota_us", lbs_fmt(text, sizeof text, "%lld", (long long)quota_us),
				err);
	return st;
}

/* v1's cpu controller counts no usage; the cpuacct hierarchy beside it does,
 * and the testbed does not create groups there: the workers measure their
 * own CPU time instead. */
static double v1_usage(const lbs_cgroups *c, const lbs_cgroup *g)
{
	(void)c;
	(void)g;
	return NAN;
}

static const lbs_cgroup_ops v1_ops = { "cgroup v1", v1_prepare, v1_quota, v1_usage };

/* ---- common ---------------------------------------------------------- */

static bool is_dir(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static bool exists(const char *dir, const char *file)
{
	char path[800];
	lbs_fmt(path, sizeof path, "%s/%s", dir, file);
	return access(path, F_OK) == 0;
}

/* Removes dir's child groups, then dir (each must have no process left). */
static bool remove_tree(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return errno == ENOENT;
	struct dirent *e;
	char sub[800];
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && is_dir(lbs_fmt(sub, sizeof sub, "%s/%s", dir, e->d_name)))
			remove_tree(sub);
	closedir(d);
	return rmdir(dir) == 0 || errno == ENOENT;
}

/* A process that exists and is not a zombie (a coordinator killed after
 * its parent may stay one where nothing reaps orphans). */
static bool running(long pid)
{
	char path[64], line[256];
	FILE *f = fopen(lbs_fmt(path, sizeof path, "/proc/%ld/stat", pid), "r");
	if (!f)
		return kill((pid_t)pid, 0) == 0 || errno != ESRCH;
	bool up = true;
	if (fgets(line, sizeof line, f)) {
		const char *close = strrchr(line, ')'); /* after the command's name */
		up = !(close && close[1] == ' ' && (close[2] == 'Z' || close[2] == 'X'));
	}
	fclose(f);
	return up;
}

/* The directories of runs whose coordinator no longer exists. */
static void remove_stale(const char *mount)
{
	DIR *d = opendir(mount);
	if (!d)
		return;
	struct dirent *e;
	char dir[800];
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, TOP_PREFIX, strlen(TOP_PREFIX)))
			continue;
		long pid = strtol(e->d_name + strlen(TOP_PREFIX), NULL, 10);
		if (pid > 0 && !running(pid))
			remove_tree(lbs_fmt(dir, sizeof dir, "%s/%s", mount, e->d_name));
	}
	closedir(d);
}

lbs_status lbs_cgroup_probe(lbs_cgroups *c, int64_t period_us, lbs_error *err)
{
	memset(c, 0, sizeof *c);
	c->period_us = period_us;
	if (geteuid() != 0)
		return lbs_error_set(err, LBS_ENOTESTBED, "the testbed needs root (effective user id %ld) to "
				     "create control groups for its workers' CPU quotas",
				     (long)geteuid());
	struct statfs fs;
	if (statfs("/sys/fs/cgroup", &fs) != 0)
		return lbs_error_set(err, LBS_ENOTESTBED, "/sys/fs/cgroup: %s: no control group file system "
				     "is mounted", strerror(errno));
	if (fs.f_type == CGROUP2_MAGIC) {
		lbs_fmt(c->mount, sizeof c->mount, "/sys/fs/cgroup");
		char path[300], line[512] = "";
		FILE *f = fopen(lbs_fmt(path, sizeof path, "%s/cgroup.controllers", c->mount), "r");
		if (f) {
			if (!fgets(line, sizeof line, f))
				line[0] = '\0';
			fclose(f);
		}
		if (!strstr(line, "cpu"))
			return lbs_error_set(err, LBS_ENOTESTBED, "/sys/fs/cgroup (cgroup v2): the cpu controller "
					     "is not available (cgroup.controllers: '%s')", strtok(line, "\n") ? line : "");
		c->ops = &v2_ops;
	} else if (exists("/sys/fs/cgroup/cpu", "cpu.cfs_quota_us")) {
		lbs_fmt(c->mount, sizeof c->mount, "/sys/fs/cgroup/cpu");
		c->ops = &v1_ops;
	} else if (exists("/sys/fs/cgroup/cpu,cpuacct", "cpu.cfs_quota_us")) {
		lbs_fmt(c->mount, sizeof c->mount, "/sys/fs/cgroup/cpu,cpuacct");
		c->ops = &v1_ops;
	} else {
		return lbs_error_set(err, LBS_ENOTESTBED, "/sys/fs/cgroup: neither cgroup v2 with the cpu "
				     "controller nor a cgroup v1 cpu hierarchy (cpu.cfs_quota_us) is mounted");
	}
	if (access(c->mount, W_OK) != 0)
		return lbs_error_set(err, LBS_ENOTESTBED, "%s (%s): not writable: %s (a read-only or "
				     "restricted container?)", c->mount, c->ops->name, strerror(errno));
	remove_stale(c->mount);
	return LBS_OK;
}

lbs_status lbs_cgroup_use(lbs_cgroups *c, int version, const char *mount, int64_t period_us, lbs_error *err)
{
	memset(c, 0, sizeof *c);
	c->period_us = period_us;
	int len = snprintf(c->mount, sizeof c->mount, "%s", mount);
	if ((version != 1 && version != 2) || len < 0 || (size_t)len >= sizeof c->mount)
		return lbs_error_set(err, LBS_EINTERNAL, "cgroup v%d at '%s'", version, mount);
	c->ops = version == 2 ? &v2_ops : &v1_ops;
	return LBS_OK;
}

lbs_status lbs_cgroup_open(lbs_cgroups *c, lbs_error *err)
{
	lbs_fmt(c->top, sizeof c->top, "%s/" TOP_PREFIX "%ld", c->mount, (long)getpid());
	if (mkdir(c->top, 0755) != 0 && errno != EEXIST)
		return lbs_error_set(err, LBS_ENOTESTBED, "%s (%s): cannot create: %s", c->top, c->ops->name,
				     strerror(errno));
	c->made_top = true;
	return c->ops->prepare_top(c, err);
}

lbs_status lbs_cgroup_create(lbs_cgroups *c, const char *name, lbs_cgroup *g, lbs_error *err)
{
	memset(g, 0, sizeof *g);
	lbs_fmt(g->dir, sizeof g->dir, "%s/%s", c->top, name);
	if (mkdir(g->dir, 0755) != 0 && errno != EEXIST)
		return lbs_error_set(err, LBS_ENOTESTBED, "%s (%s): cannot create: %s", g->dir, c->ops->name,
				     strerror(errno));
	return LBS_OK;
}

lbs_status lbs_cgroup_set_cores(lbs_cgroups *c, lbs_cgroup *g, double cores, lbs_error *err)
{
	/* A whole core or more is no limit: the workers are single-threaded,
	 * and a quota of exactly one period throttles a thread that wants
	 * all of it by 5 to 10% (doc/validation.md). */
	double q = floor(cores * (double)c->period_us + 0.5);
	int64_t quota = cores >= 1 ? -1 : q < 1000 ? 1000 : (int64_t)q;
	if (quota == g->quota_us)
		return LBS_OK;
	lbs_status st = c->ops->set_quota(c, g, quota, err);
	if (st == LBS_OK)
		g->quota_us = quota;
	return st;
}

lbs_status lbs_cgroup_attach(const lbs_cgroup *g, pid_t pid, lbs_error *err)
{
	char text[32];
	return write_file(g->dir, "cgroup.procs", lbs_fmt(text, sizeof text, "%ld", (long)pid), err);
}

void lbs_cgroup_back(const lbs_cgroups *c, pid_t pid)
{
	char text[32];
	write_file(c->mount, "cgroup.procs", lbs_fmt(text, sizeof text, "%ld", (long)pid), NULL);
}

bool lbs_cgroup_remove(lbs_cgroup *g)
{
	if (!g->dir[0])
		return true;
	bool gone = rmdir(g->dir) == 0 || errno == ENOENT;
	if (gone)
		g->dir[0] = '\0';
	return gone;
}

void lbs_cgroup_close(lbs_cgroups *c)
{
	if (c->made_top)
		remove_tree(c->top);
	c->made_top = false;
}
