/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Sweep files: list and range expansion, the order of the points, defaults
 * from the scenario, the identity hash, and bad files refused with the file,
 * the line and the key. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sweep/sweep.h"
#include "tests/unit/suites.h"

#define SCENARIO \
	"[run]\nglobal_batch = 64\niterations = 10\nseed = 7\n" \
	"[model]\nparameters = 1000\n" \
	"[network]\ntopology = ring\nbandwidth = 10 Gbit/s\n" \
	"[workers.cpu]\ncount = 2\ndevice = cpu\ncost = linear\nper_sample = 1 ms\nmax_batch = 64\n" \
	"[policy]\nname = static-proportional\n"

/* ---- items ------------------------------------------------------------ */

typedef struct collected {
	char v[64][32];
	size_t n;
} collected;

static lbs_status collect(void *ctx, const char *value)
{
	collected *c = ctx;
	if (c->n < 64)
		snprintf(c->v[c->n++], sizeof c->v[0], "%s", value);
	return LBS_OK;
}

/* Expands item and checks the values against want (a NULL-terminated list). */
static void expect_values(const char *item, const char *const *want)
{
	collected c = { .n = 0 };
	lbs_error err = { 0 };
	CU_ASSERT_EQUAL_FATAL(lbs_sweep_expand_item(item, collect, &c, &err), LBS_OK);
	size_t n = 0;
	while (want[n])
		n++;
	CU_ASSERT_EQUAL(c.n, n);
	for (size_t i = 0; i < n && i < c.n; i++)
		if (strcmp(c.v[i], want[i])) {
			fprintf(stderr, "\n  %s: value %zu is '%s', expected '%s'\n", item, i, c.v[i], want[i]);
			CU_FAIL("wrong value");
		}
}

static void expect_item_error(const char *item, const char *words)
{
	collected c = { .n = 0 };
	lbs_error err = { 0 };
	CU_ASSERT_EQUAL(lbs_sweep_expand_item(item, collect, &c, &err), LBS_EINPUT);
	if (!strstr(err.msg, words)) {
		fprintf(stderr, "\n  %s: expected '%s' in: %s\n", item, words, err.msg);
		CU_FAIL("message lacks the expected words");
	}
}

static void test_ranges(void)
{
	expect_values("4..1024 *2", (const char *[]){ "4", "8", "16", "32", "64", "128", "256", "512",
						      "1024", NULL });
	expect_values("4..1000 *2", (const char *[]){ "4", "8", "16", "32", "64", "128", "256", "512", NULL });
	expect_values("1..10 +3", (const char *[]){ "1", "4", "7", "10", NULL });
	expect_values("1..10+4", (const char *[]){ "1", "5", "9", NULL });
	expect_values("1..5", (const char *[]){ "1", "2", "3", "4", "5", NULL });
	expect_values("3..3", (const char *[]){ "3", NULL });
	expect_values("-2..2 +2", (const char *[]){ "-2", "0", "2", NULL });
	/* Decimal steps are exact: no 0.30000000000000004. */
	expect_values("0.1..0.5 +0.1", (const char *[]){ "0.1", "0.2", "0.3", "0.4", "0.5", NULL });
	expect_values("0.5..2 +0.25", (const char *[]){ "0.50", "0.75", "1.00", "1.25", "1.50", "1.75",
							 "2.00", NULL });
	/* Only NUM.. starts a range. */
	expect_values("../traces/a.csv", (const char *[]){ "../traces/a.csv", NULL });
	expect_values("10 Gbit/s", (const char *[]){ "10 Gbit/s", NULL });
	expect_values("static", (const char *[]){ "static", NULL });
}

static void test_range_errors(void)
{
	expect_item_error("5..1", "starts above its end");
	expect_item_error("1..8 *1", "FACTOR >= 2");
	expect_item_error("0..8 *2", "A >= 1");
	expect_item_error("1..8 *2.5", "integers");
	expect_item_error("1..8 +0", "above 0");
	expect_item_error("1..8 -1", "expected A..B");
	expect_item_error("1..x", "expected A..B");
	expect_item_error("2..3..4", "expected A..B");
	expect_item_error("1..10 Gbit/s", "plain numbers");
	expect_item_error("1..10000000 +1", "more than");
}

/* ---- files ------------------------------------------------------------ */

static char path_used[512];
static lbs_error err;

/* Loads a sweep of SCENARIO whose file is "[sweep]\nscenario = ...\n" body. */
static lbs_status load(lbs_sweep *sw, const char *body)
{
	char text[4096];
	char *scenario = write_temp(SCENARIO);
	snprintf(text, sizeof text, "[sweep]\nscenario = %s\n%s", scenario, body);
	char *path = write_temp(text);
	snprintf(path_used, sizeof path_used, "%s", path);
	memset(&err, 0, sizeof err);
	lbs_status st = lbs_sweep_load(sw, path, &err);
	unlink(path);
	unlink(scenario);
	free(path);
	free(scenario);
	return st;
}

static size_t key_index(const lbs_sweep *sw, const char *name)
{
	for (size_t k = 0; k < sw->n_keys; k++)
		if (!strcmp(sw->keys[k].name, name))
			return k;
	CU_FAIL("no such key");
	return 0;
}

static void test_product_order(void)
{
	lbs_sweep sw;
	CU_ASSERT_FATAL(load(&sw, "[vary]\nworkers.cpu.count = 1, 2\npolicy = static, oracle\nseeds = 1..3\n")
			== LBS_OK);
	CU_ASSERT_EQUAL(sw.n_points, 12);
	CU_ASSERT_EQUAL(sw.n_keys, 3);
	size_t kc = key_index(&sw, "workers.cpu.count"), kp = key_index(&sw, "policy"),
	       ks = key_index(&sw, "seed");
	/* The first key varies slowest, the last fastest. */
	static const char *const want[12][3] = {
		{ "1", "static", "1" }, { "1", "static", "2" }, { "1", "static", "3" },
		{ "1", "oracle", "1" }, { "1", "oracle", "2" }, { "1", "oracle", "3" },
		{ "2", "static", "1" }, { "2", "static", "2" }, { "2", "static", "3" },
		{ "2", "oracle", "1" }, { "2", "oracle", "2" }, { "2", "oracle", "3" },
	};
	for (size_t p = 0; p < 12; p++) {
		CU_ASSERT_STRING_EQUAL(lbs_sweep_value(&sw, p, kc), want[p][0]);
		CU_ASSERT_STRING_EQUAL(lbs_sweep_value(&sw, p, kp), want[p][1]);
		CU_ASSERT_STRING_EQUAL(lbs_sweep_value(&sw, p, ks), want[p][2]);
	}
	CU_ASSERT_EQUAL(strlen(sw.hash), 16);
	lbs_sweep_destroy(&sw);
}

static void test_zip_and_defaults(void)
{
	lbs_sweep sw;
	CU_ASSERT_FATAL(load(&sw, "name = zipped\ndetail = workers\n"
				  "[zip]\nworkers.cpu.count = 1..4 *2\nrun.global_batch = 32..128 *2\n"
				  "[vary]\nnetwork.bandwidth = 1 Gbit/s, 10 Gbit/s\n") == LBS_OK);
	CU_ASSERT_STRING_EQUAL(sw.name, "zipped");
	CU_ASSERT_EQUAL(sw.detail, LBS_DETAIL_WORKERS);
	CU_ASSERT_EQUAL(sw.n_points, 6); /* 3 zipped x 2 */
	size_t kc = key_index(&sw, "workers.cpu.count"), kb = key_index(&sw, "run.global_batch"),
	       kn = key_index(&sw, "network.bandwidth"), kp = key_index(&sw, "policy"),
	       ks = key_index(&sw, "seed");
	CU_ASSERT_STRING_EQUAL(lbs_sweep_value(&sw, 0, kc), "1");
	CU_ASSERT_STRING_EQUAL(lbs_sweep_value(&sw, 0, kb), "32");
	CU_ASSERT_STRING_EQUAL(lbs_sweep_value(&sw, 1, kn), "10 Gbit/s");
	CU_ASSERT_STRING_EQUAL(lbs_sweep_value(&sw, 5, kc), "4");
	CU_ASSERT_STRING_EQUAL(lbs_sweep_value(&sw, 5, kb), "128");
	/* Not varied: the scenario's policy and seed, recorded in every point. */
	CU_ASSERT_STRING_EQUAL(lbs_sweep_value(&sw, 3, kp), "static-proportional");
	CU_ASSERT_STRING_EQUAL(lbs_sweep_value(&sw, 3, ks), "7");
	CU_ASSERT_EQUAL(sw.keys[kp].line, 0);
	lbs_sweep_destroy(&sw);
}

static void test_hash(void)
{
	lbs_sweep a, b, c;
	CU_ASSERT_FATAL(load(&a, "[vary]\nseeds = 1..3\n") == LBS_OK);
	CU_ASSERT_FATAL(load(&b, "; the same sweep, written differently\n[vary]\nseeds = 1, 2, 3\n") == LBS_OK);
	CU_ASSERT_FATAL(load(&c, "[vary]\nseeds = 1..4\n") == LBS_OK);
	CU_ASSERT_STRING_EQUAL(a.hash, b.hash);
	CU_ASSERT_STRING_NOT_EQUAL(a.hash, c.hash);
	lbs_sweep_destroy(&a);
	lbs_sweep_destroy(&b);
	lbs_sweep_destroy(&c);
}

/* The load fails with LBS_EINPUT; the message names "path:line:" (line > 0)
 * and holds the words. */
static void expect_error(const char *body, int line, const char *words)
{
	lbs_sweep sw;
	CU_ASSERT_EQUAL(load(&sw, body), LBS_EINPUT);
	char where[600];
	snprintf(where, sizeof where, "%s:%d:", path_used, line);
	if ((line > 0 && !strstr(err.msg, where)) || !strstr(err.msg, words)) {
		fprintf(stderr, "\n  expected '%s' and '%s' in: %s\n", line > 0 ? where : "", words, err.msg);
		CU_FAIL("message lacks the location or the expected words");
	}
}

static void test_errors(void)
{
	/* Line 1 is [sweep], line 2 its scenario. */
	expect_error("[varry]\n", 3, "unknown section [varry] (did you mean [vary]?)");
	expect_error("scenaro = x\n", 3, "unknown key (did you mean 'scenario'?)");
	expect_error("detail = all\n", 3, "expected runs, iterations or workers");
	expect_error("[vary]\nseed = 1\n", 4, "did you mean 'seeds'?");
	expect_error("[vary]\nrun.seed = 1, 2\n", 4, "vary this with `seeds`");
	expect_error("[vary]\nworkers.cpu.count = 1, x\n", 4, "[vary] workers.cpu.count: value 'x'");
	expect_error("[vary]\nworkers.cpu.cout = 1\n", 4, "value '1'");
	expect_error("[vary]\nworkers.cpu.count = 1,,2\n", 4, "empty item");
	expect_error("[vary]\nworkers.cpu.count = 2, 1..3\n", 4, "value '2' appears twice");
	expect_error("[vary]\nworkers.cpu.count = 8..2\n", 4, "starts above its end");
	expect_error("[vary]\npolicy = static, nope\n", 4, "unknown policy 'nope'");
	expect_error("[vary]\nseeds = 1, -1\n", 4, "'-1' is not a seed");
	expect_error("[vary]\nseeds = 1\n[zip]\nseeds = 2\n", 6, "given twice (first at line 4");
	expect_error("[zip]\nworkers.cpu.count = 1, 2\nrun.global_batch = 32\n", 5, "1 values, but");
	expect_error("[vary]\nhello\n", 4, "expected '[section]'");
	expect_error("[vary]\nworkers.cpu.count = 1\n[vary]\n", 5, "appears twice");
	/* A combination that cannot run: 2 workers of at most 64 samples. */
	expect_error("[vary]\nrun.global_batch = 64, 256\n", 0, "point 2 of 2 (run.global_batch=256");
}

static void test_missing(void)
{
	lbs_sweep sw;
	char *path = write_temp("[vary]\nseeds = 1\n");
	memset(&err, 0, sizeof err);
	CU_ASSERT_EQUAL(lbs_sweep_load(&sw, path, &err), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "missing [sweep] scenario"));
	unlink(path);
	free(path);
	path = write_temp("[sweep]\nscenario = no-such-file.ini\n");
	CU_ASSERT_EQUAL(lbs_sweep_load(&sw, path, &err), LBS_EINPUT);
	char where[600];
	snprintf(where, sizeof where, "%s:2: [sweep] scenario: cannot read", path);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, where));
	unlink(path);
	free(path);
}

/* A job's databases: NNNNNN.db for one point, FIRST-LAST.db for several,
 * and nothing else in points/ (temporary files, journals) taken for one. */
static void test_segment_names(void)
{
	char path[64];
	size_t a = 0, b = 0;
	lbs_sweep_segment_path(path, sizeof path, "d", 7, 7);
	CU_ASSERT_STRING_EQUAL(path, "d/000007.db");
	lbs_sweep_segment_path(path, sizeof path, "d", 3, 12);
	CU_ASSERT_STRING_EQUAL(path, "d/000003-000012.db");
	CU_ASSERT_TRUE(lbs_sweep_segment_parse("000007.db", &a, &b));
	CU_ASSERT(a == 7 && b == 7);
	CU_ASSERT_TRUE(lbs_sweep_segment_parse("000003-000012.db", &a, &b));
	CU_ASSERT(a == 3 && b == 12);
	CU_ASSERT_TRUE(lbs_sweep_segment_parse("010000.db", &a, &b));
	CU_ASSERT(a == 10000 && b == 10000);
	static const char *const not_ones[] = {
		"000000.db", "00007.db", "0000007.db", "000007.db-journal", "000007.tmp.123",
		"000007-000007.db", "000012-000003.db", "000003-00012.db", "00003a.db", "000003_000012.db",
		"000003-000012.dbx", ".db", "",
	};
	for (size_t i = 0; i < sizeof not_ones / sizeof *not_ones; i++)
		CU_ASSERT_FALSE(lbs_sweep_segment_parse(not_ones[i], &a, &b));
}

void suite_sweep(void)
{
	static const test_case tests[] = {
		{ "ranges and lists", test_ranges },
		{ "malformed ranges", test_range_errors },
		{ "cartesian product order", test_product_order },
		{ "zip, detail and defaults", test_zip_and_defaults },
		{ "identity hash", test_hash },
		{ "errors name file, line and key", test_errors },
		{ "missing scenario", test_missing },
		{ "job database names", test_segment_names },
	};
	add_suite("sweep", tests, sizeof tests / sizeof tests[0]);
}
