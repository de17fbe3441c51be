/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Each test file registers one CUnit suite. */
#ifndef LBS_TEST_SUITES_H
#define LBS_TEST_SUITES_H

#include <CUnit/CUnit.h>
#include <stdbool.h>
#include <stddef.h>

void suite_queue(void);
void suite_rng(void);
void suite_models(void);
void suite_scenario(void);
void suite_run(void);
void suite_series(void);
void suite_readers(void);
void suite_source(void);
void suite_binding(void);
void suite_generators(void);
void suite_policy(void);
void suite_sweep(void);
void suite_predict(void);
void suite_nets(void);
void suite_calib(void);
void suite_whatif(void);
void suite_hybrid(void);
void suite_hybrid_policy(void);
void suite_cgroup(void);
void suite_suggest(void);
void suite_interval(void);
void suite_sync(void);

/* Adds a suite with the given tests; aborts the test program if CUnit fails. */
typedef struct test_case {
	const char *name;
	CU_TestFunc fn;
} test_case;
void add_suite(const char *name, const test_case *tests, size_t n);

/* Writes text to a new temporary file and returns its path (static buffer
 * per call site is not needed: the caller owns the returned malloc'd path). */
char *write_temp(const char *text);

/* The path of a file of the source tree, e.g. "tests/data/traces/x.csv"
 * (malloc'd). */
char *src_path(const char *rel);
/* A whole run's iteration records, captured by an observer. */
#include "sim/run.h"
typedef struct capture {
	size_t n_workers, n, cap;
	lbs_iteration_record *rec;
	double *compute; /* n * n_workers */
	int64_t *batch;
	lbs_policy_var *vars; /* n * LBS_POLICY_VARS_MAX */
	double sim_time_s;
	lbs_run_stats stats; /* the run's totals, once it has ended */
	int64_t fail_at; /* the observer fails at this iteration (-1: never) */
} capture;

/* Loads scenario text with overrides, runs `policy` (NULL: the scenario's)
 * and captures every iteration. */
lbs_status capture_simulate(const char *text, const char *const *ov, size_t nov, const char *policy,
			    capture *c, lbs_error *err);
/* The same, with `plugin` (NULL: none) given to the scenario as a policy
 * plugin of its own, so that `policy` may name it. */
lbs_status capture_simulate_with(const char *text, const char *const *ov, size_t nov, const char *policy,
				 const lbs_policy_ops *plugin, capture *c, lbs_error *err);
void capture_free(capture *c);
/* The observer capture_simulate runs with (ctx: a capture, zeroed, fail_at
 * -1), for a test that makes its own run. */
lbs_status capture_record(void *ctx, const lbs_iteration_record *r, lbs_error *err);
/* Whether two captures are the same run to the bit: every iteration's
 * times, gap and global batch, every worker's compute time and batch. */
bool capture_same(const capture *x, const capture *y);

/* |a - b| <= 1e-12 |b| */
bool rel_eq(double a, double b);

#endif
