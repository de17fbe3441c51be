/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The testbed's two cgroup backends (testbed/cgroup.c), run against a
 * directory laid out as the kernel's hierarchy would be: what each writes,
 * where, and in which format (cgroup v2: cpu.max "QUOTA PERIOD" or "max
 * PERIOD", cpu.weight, cgroup.subtree_control "+cpu", cgroup.procs;
 * cgroup v1: cpu.cfs_period_us before cpu.cfs_quota_us, -1 for no limit,
 * cpu.shares), from the kernel's documentation of those files
 * (Documentation/admin-guide/cgroup-v2.rst, scheduler/sched-bwc.rst). The
 * machine lbsim's CI runs on boots with cgroup v1, so this is where the v2
 * backend's writes are checked on every run; tests/e2e/testbed.sh runs the
 * v1 backend against the kernel itself. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testbed/cgroup.h"
#include "tests/unit/suites.h"

/* A new empty directory standing for the hierarchy's mount point. */
static char *new_mount(void)
{
	char *dir = strdup("/tmp/lbsim-cgroup-test-XXXXXX");
	if (dir && !mkdtemp(dir)) {
		free(dir);
		return NULL;
	}
	return dir;
}

static void put(const char *dir, const char *file, const char *text)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", dir, file);
	FILE *f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
}

/* The file's contents (at most 255 bytes), "" when there is none. */
static const char *got(const char *dir, const char *file)
{
	static char text[256];
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", dir, file);
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
	text[n] = '\0';
	if (f)
		fclose(f);
	return text;
}

static void drop(const char *dir, const char *file)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", dir, file);
	unlink(path);
}

static bool is_dir(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* Empties group g of the n files a test wrote in it (the kernel's
 * directories hold none that need removing), removes it and checks that
 * it is gone. */
static void remove_group(lbs_cgroup *g, const char *const *files, size_t n)
{
	for (size_t i = 0; i < n; i++)
		drop(g->dir, files[i]);
	char dir[600];
	snprintf(dir, sizeof dir, "%s", g->dir);
	CU_ASSERT(lbs_cgroup_remove(g));
	CU_ASSERT(!is_dir(dir));
}

static void test_v2(void)
{
	char *mount = new_mount();
	CU_ASSERT_PTR_NOT_NULL_FATAL(mount);
	put(mount, "cgroup.controllers", "cpuset cpu io memory pids\n");
	put(mount, "cgroup.subtree_control", "memory pids\n"); /* cpu not yet delegated */
	lbs_cgroups c;
	lbs_error err = { 0 };
	CU_ASSERT_EQUAL_FATAL(lbs_cgroup_use(&c, 2, mount, 10000, &err), LBS_OK);
	CU_ASSERT_STRING_EQUAL(c.ops->name, "cgroup v2");
	CU_ASSERT_EQUAL_FATAL(lbs_cgroup_open(&c, &err), LBS_OK);
	char top[600];
	snprintf(top, sizeof top, "%s/lbsim-testbed-%ld", mount, (long)getpid());
	CU_ASSERT_STRING_EQUAL(c.top, top);
	CU_ASSERT(is_dir(top));
	/* The root delegates cpu to its children, the run's directory to its
	 * groups, at the highest weight (1..10000). */
	CU_ASSERT_STRING_EQUAL(got(mount, "cgroup.subtree_control"), "+cpu");
	CU_ASSERT_STRING_EQUAL(got(top, "cgroup.subtree_control"), "+cpu");
	CU_ASSERT_STRING_EQUAL(got(top, "cpu.weight"), "10000");

	lbs_cgroup g;
	CU_ASSERT_EQUAL_FATAL(lbs_cgroup_create(&c, "w0", &g, &err), LBS_OK);
	CU_ASSERT(is_dir(g.dir));
	/* 0.2 of a core: 2 ms per 10 ms period. */
	CU_ASSERT_EQUAL(lbs_cgroup_set_cores(&c, &g, 0.2, &err), LBS_OK);
	CU_ASSERT_STRING_EQUAL(got(g.dir, "cpu.max"), "2000 10000");
	/* The same share again writes nothing. */
	drop(g.dir, "cpu.max");
	CU_ASSERT_EQUAL(lbs_cgroup_set_cores(&c, &g, 0.2, &err), LBS_OK);
	CU_ASSERT_STRING_EQUAL(got(g.dir, "cpu.max"), "");
	/* 0.33333 rounds to the microsecond; below 1 ms, the kernel's least. */
	CU_ASSERT_EQUAL(lbs_cgroup_set_cores(&c, &g, 1.0 / 3, &err), LBS_OK);
	CU_ASSERT_STRING_EQUAL(got(g.dir, "cpu.max"), "3333 10000");
	CU_ASSERT_EQUAL(lbs_cgroup_set_cores(&c, &g, 0.01, &err), LBS_OK);
	CU_ASSERT_STRING_EQUAL(got(g.dir, "cpu.max"), "1000 10000");
	/* A whole core or more: no limit. */
	CU_ASSERT_EQUAL(lbs_cgroup_set_cores(&c, &g, 1.0, &err), LBS_OK);
	CU_ASSERT_STRING_EQUAL(got(g.dir, "cpu.max"), "max 10000");
	CU_ASSERT_EQUAL(g.quota_us, -1);
	/* Usage from cpu.stat, in seconds. */
	put(g.dir, "cpu.stat", "usage_usec 1500000\nuser_usec 1400000\nsystem_usec 100000\n");
	CU_ASSERT_DOUBLE_EQUAL(c.ops->usage_s(&c, &g), 1.5, 1e-12);
	put(g.dir, "cpu.stat", "user_usec 1400000\n");
	CU_ASSERT(isnan(c.ops->usage_s(&c, &g)));
	/* A process in, and back to the root. */
	CU_ASSERT_EQUAL(lbs_cgroup_attach(&g, 4242, &err), LBS_OK);
	CU_ASSERT_STRING_EQUAL(got(g.dir, "cgroup.procs"), "4242");
	lbs_cgroup_back(&c, 4242);
	CU_ASSERT_STRING_EQUAL(got(mount, "cgroup.procs"), "4242");

	const char *const files[] = { "cpu.max", "cpu.stat", "cgroup.procs" };
	remove_group(&g, files, 3);
	drop(top, "cgroup.subtree_control");
	drop(top, "cpu.weight");
	lbs_cgroup_close(&c);
	CU_ASSERT(!is_dir(top));

	/* A root that delegates cpu already is left as it is (a container's
	 * root that holds processes refuses the write). */
	put(mount, "cgroup.subtree_control", "cpu memory\n");
	CU_ASSERT_EQUAL_FATAL(lbs_cgroup_use(&c, 2, mount, 100000, &err), LBS_OK);
	CU_ASSERT_EQUAL_FATAL(lbs_cgroup_open(&c, &err), LBS_OK);
	CU_ASSERT_STRING_EQUAL(got(mount, "cgroup.subtree_control"), "cpu memory\n");
	CU_ASSERT_EQUAL_FATAL(lbs_cgroup_create(&c, "w1", &g, &err), LBS_OK);
	CU_ASSERT_EQUAL(lbs_cgroup_set_cores(&c, &g, 0.5, &err), LBS_OK);
	CU_ASSERT_STRING_EQUAL(got(g.dir, "cpu.max"), "50000 100000");
	const char *const max[] = { "cpu.max" };
	remove_group(&g, max, 1);
	drop(top, "cgroup.subtree_control");
	drop(top, "cpu.weight");
	lbs_cgroup_close(&c);
	const char *root[] = { "cgroup.controllers", "cgroup.subtree_control", "cgroup.procs" };
	for (size_t i = 0; i < sizeof root / sizeof *root; i++)
		drop(mount, root[i]);
	CU_ASSERT_EQUAL(rmdir(mount), 0);
	free(mount);
}

static void test_v1(void)
{
	char *mount = new_mount();
	CU_ASSERT_PTR_NOT_NULL_FATAL(mount);
	lbs_cgroups c;
	lbs_error err = { 0 };
	CU_ASSERT_EQUAL_FATAL(lbs_cgroup_use(&c, 1, mount, 10000, &err), LBS_OK);
	CU_ASSERT_STRING_EQUAL(c.ops->name, "cgroup v1");
	CU_ASSERT_EQUAL_FATAL(lbs_cgroup_open(&c, &err), LBS_OK);
	/* 100 times the weight of a process at nice 0. */
	CU_ASSERT_STRING_EQUAL(got(c.top, "cpu.shares"), "102400");
	lbs_cgroup g;
	CU_ASSERT_EQUAL_FATAL(lbs_cgroup_create(&c, "w0", &g, &err), LBS_OK);
	/* The first quota: the period, then the quota. */
	CU_ASSERT_EQUAL(lbs_cgroup_set_cores(&c, &g, 0.3, &err), LBS_OK);
	CU_ASSERT_STRING_EQUAL(got(g.dir, "cpu.cfs_period_us"), "10000");
	CU_ASSERT_STRING_EQUAL(got(g.dir, "cpu.cfs_quota_us"), "3000");
	/* Later ones: the quota alone. */
	drop(g.dir, "cpu.cfs_period_us");
	CU_ASSERT_EQUAL(lbs_cgroup_set_cores(&c, &g, 0.5, &err), LBS_OK);
	CU_ASSERT_STRING_EQUAL(got(g.dir, "cpu.cfs_quota_us"), "5000");
	CU_ASSERT_STRING_EQUAL(got(g.dir, "cpu.cfs_period_us"), "");
	CU_ASSERT_EQUAL(lbs_cgroup_set_cores(&c, &g, 2.0, &err), LBS_OK);
	CU_ASSERT_STRING_EQUAL(got(g.dir, "cpu.cfs_quota_us"), "-1");
	/* v1's cpu controller counts no usage. */
	CU_ASSERT(isnan(c.ops->usage_s(&c, &g)));
	CU_ASSERT_EQUAL(lbs_cgroup_attach(&g, 77, &err), LBS_OK);
	CU_ASSERT_STRING_EQUAL(got(g.dir, "cgroup.procs"), "77");
	CU_ASSERT(lbs_cgroup_remove(&g) == false); /* a process (file) still in it */
	const char *const files[] = { "cpu.cfs_quota_us", "cgroup.procs" };
	remove_group(&g, files, 2);
	/* A group gone from under it: the write fails naming the file. */
	lbs_cgroup gone;
	CU_ASSERT_EQUAL_FATAL(lbs_cgroup_create(&c, "w1", &gone, &err), LBS_OK);
	CU_ASSERT_EQUAL_FATAL(rmdir(gone.dir), 0);
	CU_ASSERT_EQUAL(lbs_cgroup_set_cores(&c, &gone, 0.4, &err), LBS_ENOTESTBED);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "w1/cpu.cfs_period_us"));
	drop(c.top, "cpu.shares");
	lbs_cgroup_close(&c);
	CU_ASSERT_EQUAL(rmdir(mount), 0);
	free(mount);
	CU_ASSERT_EQUAL(lbs_cgroup_use(&c, 3, "/sys/fs/cgroup", 10000, &err), LBS_EINTERNAL);
}

void suite_cgroup(void)
{
	static const test_case tests[] = {
		{ "cgroup v2: cpu.max, cpu.weight, subtree_control, procs", test_v2 },
		{ "cgroup v1: cfs_period_us, cfs_quota_us, shares", test_v1 },
	};
	add_suite("cgroup", tests, sizeof tests / sizeof tests[0]);
}
