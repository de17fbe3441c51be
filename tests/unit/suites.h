/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Each test file registers one CUnit suite. */
#ifndef LBS_TEST_SUITES_H
#define LBS_TEST_SUITES_H

#include <CUnit/CUnit.h>
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

#endif
