/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Scenario loading: values, defaults, overrides, and every kind of bad input
 * refused with the file, the line and the key in the message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/scenario.h"
#include "tests/unit/suites.h"
#include "util/ini.h"

#define BASE \
	"[run]\nglobal_batch = 64\niterations = 10\n" \
	"[model]\nparameters = 1000\n" \
	"[network]\ntopology = ring\nbandwidth = 10 Gbit/s\nlatency = 5 us\n" \
	"[workers.cpu]\ncount = 2\ndevice = cpu\ncost = linear\nper_sample = 1 ms\n"

static lbs_error err;
static char path_used[256];

/* Loads text (with overrides); returns the status, leaves the message in err. */
static lbs_status load(lbs_scenario *sc, const char *text, const char *const *ov, size_t nov)
{
	char *path = write_temp(text);
	snprintf(path_used, sizeof path_used, "%s", path);
	memset(&err, 0, sizeof err);
	lbs_status st = lbs_scenario_load(sc, path, ov, nov, &err);
	unlink(path);
	free(path);
	return st;
}

/* The load fails with LBS_EINPUT and the message holds "path:line:" and each
 * of the given fragments. */
static void expect_error(const char *text, int line, const char *frag1, const char *frag2)
{
	lbs_scenario sc;
	CU_ASSERT_EQUAL(load(&sc, text, NULL, 0), LBS_EINPUT);
	char where[300];
	snprintf(where, sizeof where, "%s:%d:", path_used, line);
	if (!strstr(err.msg, where) || (frag1 && !strstr(err.msg, frag1)) || (frag2 && !strstr(err.msg, frag2))) {
		fprintf(stderr, "\n  expected '%s' '%s' '%s' in: %s\n", where, frag1 ? frag1 : "",
			frag2 ? frag2 : "", err.msg);
		CU_FAIL("message lacks the location or the expected words");
	}
}

static void test_valid(void)
{
	lbs_scenario sc;
	CU_ASSERT_FATAL(load(&sc, BASE "[workers.gpu]\ncount = 3\ndevice = gpu\ncost = piecewise\n"
				     "t_flat = 20 ms\nsaturation_batch = 16\nper_sample = 0.5 ms\n"
				     "max_batch = 64\nnoise = uniform\nnoise_high = 10%\n",
			       NULL, 0) == LBS_OK);
	CU_ASSERT_EQUAL(sc.n_workers, 5);
	CU_ASSERT_EQUAL(sc.n_groups, 2);
	CU_ASSERT_EQUAL(sc.iterations, 10);
	CU_ASSERT_EQUAL(sc.run.seed, 1); /* default */
	CU_ASSERT_DOUBLE_EQUAL(sc.model.gradient_bytes, 4000.0, 0); /* 1000 params * 4 B */
	CU_ASSERT_DOUBLE_EQUAL(sc.network.bandwidth_Bps, 1.25e9, 1e-3);
	CU_ASSERT_DOUBLE_EQUAL(sc.network.latency_s, 5e-6, 1e-18);
	CU_ASSERT_PTR_EQUAL(sc.network.ops, &lbs_network_ring);
	CU_ASSERT_PTR_EQUAL(sc.groups[0].cost.ops, &lbs_cost_linear);
	CU_ASSERT_EQUAL(sc.groups[0].cost.max_batch, INT64_MAX); /* no cap given */
	CU_ASSERT_PTR_EQUAL(sc.groups[1].cost.ops, &lbs_cost_piecewise);
	CU_ASSERT_DOUBLE_EQUAL(sc.groups[1].cost.t_flat_s, 0.02, 1e-15);
	CU_ASSERT_EQUAL(sc.groups[1].cost.max_batch, 64);
	CU_ASSERT_DOUBLE_EQUAL(sc.groups[1].noise.high, 0.1, 1e-15);
	CU_ASSERT_STRING_EQUAL(sc.policy.name, "static");
	CU_ASSERT_STRING_EQUAL(sc.groups[1].name, "gpu");
	/* The run is named after the file when [run] name is not given. */
	const char *base = strrchr(path_used, '/') + 1;
	CU_ASSERT_STRING_EQUAL(sc.run.name, base);
	lbs_scenario_destroy(&sc);
}

static void test_epochs(void)
{
	lbs_scenario sc;
	CU_ASSERT_FATAL(load(&sc,
			     "[run]\nglobal_batch = 64\nepochs = 3\ndataset_samples = 50000\n"
			     "[model]\ngradient = 1 MB\n[network]\ntopology = none\n"
			     "[workers.a]\ncount = 1\ndevice = cpu\ncost = linear\nper_sample = 1 ms\n",
			     NULL, 0) == LBS_OK);
	CU_ASSERT_EQUAL(sc.iterations_per_epoch, 781); /* floor(50000 / 64) */
	CU_ASSERT_EQUAL(sc.iterations, 3 * 781);
	CU_ASSERT_DOUBLE_EQUAL(sc.model.gradient_bytes, 1e6, 0);
	lbs_scenario_destroy(&sc);
}

static void test_overrides(void)
{
	lbs_scenario sc;
	const char *ov[] = { "network.bandwidth=1 GB/s", "workers.cpu.count=7", "run.seed=99",
			     "workers.extra.count=1", "workers.extra.device=gpu",
			     "workers.extra.cost=linear", "workers.extra.per_sample=2 ms" };
	CU_ASSERT_FATAL(load(&sc, BASE, ov, 7) == LBS_OK);
	CU_ASSERT_DOUBLE_EQUAL(sc.network.bandwidth_Bps, 1e9, 0);
	CU_ASSERT_EQUAL(sc.groups[0].count, 7);
	CU_ASSERT_EQUAL(sc.run.seed, 99);
	CU_ASSERT_EQUAL(sc.n_groups, 2);
	CU_ASSERT_EQUAL(sc.n_workers, 8);
	/* The effective configuration records the override. */
	int found = 0;
	for (size_t i = 0; i < sc.n_config; i++)
		found += !strcmp(sc.config[i].section, "network") && !strcmp(sc.config[i].key, "bandwidth") &&
			 !strcmp(sc.config[i].value, "1 GB/s");
	CU_ASSERT_EQUAL(found, 1);
	lbs_scenario_destroy(&sc);

	const char *bad[] = { "network.bandwidth=fast" };
	CU_ASSERT_EQUAL(load(&sc, BASE, bad, 1), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--set network.bandwidth"));
	const char *typo[] = { "network.bandwith=1 GB/s" };
	CU_ASSERT_EQUAL(load(&sc, BASE, typo, 1), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "did you mean 'bandwidth'"));
	/* An empty value removes the key: switch the run from iterations to epochs. */
	const char *to_epochs[] = { "run.iterations=", "run.epochs=2", "run.dataset_samples=640" };
	CU_ASSERT_FATAL(load(&sc, BASE, to_epochs, 3) == LBS_OK);
	CU_ASSERT_EQUAL(sc.iterations, 20);
	lbs_scenario_destroy(&sc);
	const char *nothing[] = { "run.epochs=" };
	CU_ASSERT_EQUAL(load(&sc, BASE, nothing, 1), LBS_EUSAGE);
	const char *malformed[] = { "bandwidth=1" };
	CU_ASSERT_EQUAL(load(&sc, BASE, malformed, 1), LBS_EUSAGE);
}

static void test_bad_inputs(void)
{
	/* Line numbers count from 1 in the text given. BASE's lines:
	 * 1 [run] 2 global_batch 3 iterations 4 [model] 5 parameters 6 [network]
	 * 7 topology 8 bandwidth 9 latency 10 [workers.cpu] 11 count 12 device
	 * 13 cost 14 per_sample; extra text starts at line 15. */
	expect_error(BASE "per_sampel = 2 ms\n", 15, "unknown key", "did you mean 'per_sample'");
	expect_error(BASE "[workers.g]\ncount = two\n", 16, "[workers.g] count", "not a number");
	expect_error(BASE "[workers.g]\ncount = 0\n", 16, "out of range", NULL);
	expect_error(BASE "[workers.g]\ncount = 1.5\n", 16, "not an integer", NULL);
	expect_error(BASE "[workers.g]\ncount = 1\ndevice = tpu\n", 17, "not one of cpu|gpu", NULL);
	expect_error(BASE "availability = nan\n", 15, "availability", "not a number");
	expect_error(BASE "availability = 0\n", 15, "availability", "out of range");
	expect_error(BASE "t_flat = 2 ms\n", 15, "t_flat", "applies only when cost=piecewise");
	expect_error(BASE "count = 3\n", 15, "duplicate key count", "first set at line 11");
	expect_error(BASE "[run]\nseed = 3\n", 15, "section [run] appears twice", NULL);
	expect_error(BASE "[netwrok]\nx = 1\n", 15, "[netwrok]: unknown section (did you mean [network]?)", NULL);
	expect_error(BASE "[workers.bad name]\ncount = 1\n", 15, "group names", NULL);
	expect_error("global_batch = 3\n" BASE, 1, "outside any section", NULL);
	expect_error(BASE "just words\n", 15, "expected '[section]'", NULL);
	expect_error(BASE "[broken\n", 15, "without ']'", NULL);
	expect_error(BASE "per_sample =\n", 15, "missing value", NULL);
	/* Units: missing, wrong dimension, negative bandwidth. */
	expect_error("[run]\nglobal_batch = 64\niterations = 10\n[model]\nparameters = 1\n"
		     "[network]\ntopology = ring\nbandwidth = 10\n", 8, "bandwidth", "no unit");
	expect_error("[run]\nglobal_batch = 64\niterations = 10\n[model]\nparameters = 1\n"
		     "[network]\ntopology = ring\nbandwidth = 10 ms\n", 8, "a time", "a bandwidth");
	expect_error("[run]\nglobal_batch = 64\niterations = 10\n[model]\nparameters = 1\n"
		     "[network]\ntopology = ring\nbandwidth = -1 GB/s\n", 8, "out of range", NULL);
	/* Missing required keys point at the section header. */
	expect_error("[run]\nglobal_batch = 64\niterations = 10\n[model]\nparameters = 1\n"
		     "[network]\ntopology = ring\n[workers.a]\ncount = 1\n",
		     6, "missing required key 'bandwidth'", NULL);
	expect_error("[run]\nglobal_batch = 64\n[model]\nparameters = 1\n", 1, "missing run length", NULL);
	expect_error("[run]\nglobal_batch = 64\niterations = 5\nepochs = 2\ndataset_samples = 640\n"
		     "[model]\nparameters = 1\n", 4, "not both", NULL);
	expect_error(BASE "[policy]\nname = stattic\n", 16, "unknown policy 'stattic'", "known: static");
	expect_error(BASE "[policy]\nname = static\nwindow = 3\n", 17, "[policy] window", "unknown key");
	/* A line longer than inih's limit is refused rather than split. */
	char longline[1024] = BASE "; ";
	memset(longline + strlen(longline), 'x', 250);
	strcat(longline, "\n");
	expect_error(longline, 15, "longer than", NULL);
	expect_error(BASE "; caf\xe9\n", 15, "UTF-8", NULL);
}

static void test_missing_sections_and_files(void)
{
	lbs_scenario sc;
	CU_ASSERT_EQUAL(load(&sc, "[run]\nglobal_batch = 64\niterations = 1\n[model]\nparameters = 1\n"
				  "[network]\ntopology = none\n", NULL, 0), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "missing section [workers.NAME]"));
	CU_ASSERT_EQUAL(load(&sc, "", NULL, 0), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "empty scenario"));
	CU_ASSERT_EQUAL(lbs_scenario_load(&sc, "/nonexistent/x.ini", NULL, 0, &err), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/nonexistent/x.ini"));
	CU_ASSERT_EQUAL(lbs_scenario_load(&sc, "/tmp", NULL, 0, &err), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "directory"));
}

/* Indented keys are keys, not continuations of the previous value (inih's
 * multi-line mode would read them so), and CRLF line ends are fine. */
static void test_indentation_and_crlf(void)
{
	lbs_scenario sc;
	CU_ASSERT_FATAL(load(&sc,
			     "[run]\r\n  global_batch = 64\r\n  iterations = 4\r\n[model]\r\n  parameters = 1\r\n"
			     "[network]\r\n  topology = none\r\n[workers.a]\r\n  count = 2 ; two of them\r\n"
			     "  device = cpu\r\n  cost = linear\r\n  per_sample = 1 ms\r\n",
			     NULL, 0) == LBS_OK);
	CU_ASSERT_EQUAL(sc.n_workers, 2);
	CU_ASSERT_EQUAL(sc.run.global_batch, 64);
	lbs_scenario_destroy(&sc);
}

/* Well-formed UTF-8 per Unicode's table 3-7, at each boundary of it: the
 * first and last code point of each length, and the sequences just past. */
static void test_utf8(void)
{
	static const struct {
		const char *s;
		bool ok;
	} cases[] = {
		{ "a", true },                     { "\xC2\x80", true },          /* U+0080 */
		{ "\xDF\xBF", true },             { "\xE0\xA0\x80", true },      /* U+07FF, U+0800 */
		{ "\xED\x9F\xBF", true },         { "\xEE\x80\x80", true },      /* U+D7FF, U+E000 */
		{ "\xEF\xBF\xBF", true },         { "\xF0\x90\x80\x80", true },  /* U+FFFF, U+10000 */
		{ "\xF4\x8F\xBF\xBF", true },     /* U+10FFFF */
		{ "\xC0\xAF", false },            { "\xC1\xBF", false },          /* overlong '/' and U+7F */
		{ "\xE0\x9F\xBF", false },        { "\xF0\x8F\xBF\xBF", false }, /* overlong U+07FF, U+FFFF */
		{ "\xED\xA0\x80", false },        { "\xED\xBF\xBF", false },      /* surrogates D800, DFFF */
		{ "\xF4\x90\x80\x80", false },    { "\xF5\x80\x80\x80", false }, /* above U+10FFFF */
		{ "\xE2\x82", false },            { "\x80", false },               /* truncated, lone */
		{ "\xE2\x28\xA1", false },        { "\xFF", false },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		CU_ASSERT_EQUAL(lbs_utf8_valid((const unsigned char *)cases[i].s, strlen(cases[i].s)), cases[i].ok);
}

/* lbs_kv_add: every entry kept, in order, across the list's growth (by
 * doubling: room for at most twice the entries), its origin copied or
 * zeroed, and a value longer than an entry holds cut, never overrun. */
static void test_kv_add(void)
{
	lbs_kv *kv = NULL;
	size_t n = 0, cap = 0;
	const lbs_origin at = { "x.ini", 12 };
	char key[32], value[LBS_VALUE_MAX + 50];
	for (int i = 0; i < 1000; i++) {
		snprintf(key, sizeof key, "k%d", i);
		snprintf(value, sizeof value, "%d", 7 * i);
		CU_ASSERT_FATAL(lbs_kv_add(&kv, &n, &cap, i % 2 ? "odd" : "even", key, value, i % 3 ? NULL : &at));
		CU_ASSERT_FATAL(n == (size_t)i + 1 && cap >= n && cap < 2 * n + 64);
	}
	int bad = 0;
	for (int i = 0; i < 1000; i++) {
		snprintf(key, sizeof key, "k%d", i);
		snprintf(value, sizeof value, "%d", 7 * i);
		bad += strcmp(kv[i].section, i % 2 ? "odd" : "even") || strcmp(kv[i].key, key) ||
		       strcmp(kv[i].value, value) || kv[i].at.line != (i % 3 ? 0 : 12) ||
		       (i % 3 == 0 && strcmp(kv[i].at.file, "x.ini")) || (i % 3 && kv[i].at.file);
	}
	CU_ASSERT_EQUAL(bad, 0);
	memset(value, 'v', sizeof value - 1);
	value[sizeof value - 1] = '\0';
	CU_ASSERT_FATAL(lbs_kv_add(&kv, &n, &cap, "s", "long", value, NULL));
	CU_ASSERT_EQUAL(strlen(kv[n - 1].value), LBS_VALUE_MAX - 1);
	free(kv);
}

void suite_scenario(void)
{
	static const test_case tests[] = {
		{ "valid scenario", test_valid },
		{ "run length in epochs", test_epochs },
		{ "--set overrides", test_overrides },
		{ "bad inputs name file, line and key", test_bad_inputs },
		{ "missing sections and files", test_missing_sections_and_files },
		{ "indentation and CRLF", test_indentation_and_crlf },
		{ "well-formed UTF-8", test_utf8 },
		{ "recorded keys kept across growth", test_kv_add },
	};
	add_suite("scenario", tests, sizeof tests / sizeof tests[0]);
}
