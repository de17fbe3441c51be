/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The unit-test runner: every suite, CUnit's basic interface, and a closing
 * "unit: N passed, M failed" line. */
#include <CUnit/Basic.h>
#include <gsl/gsl_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/suites.h"

/* LBS_UNIT_SUITE=NAME runs that suite alone (a developer's shortcut;
 * `make check` runs them all). */
void add_suite(const char *name, const test_case *tests, size_t n)
{
	const char *only = getenv("LBS_UNIT_SUITE");
	if (only && *only && strcmp(only, name))
		return;
	CU_pSuite s = CU_add_suite(name, NULL, NULL);
	if (!s) {
		fprintf(stderr, "CU_add_suite: %s\n", CU_get_error_msg());
		exit(2);
	}
	for (size_t i = 0; i < n; i++)
		if (!CU_add_test(s, tests[i].name, tests[i].fn)) {
			fprintf(stderr, "CU_add_test: %s\n", CU_get_error_msg());
			exit(2);
		}
}

char *write_temp(const char *text)
{
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char *path = malloc(strlen(dir) + 32);
	sprintf(path, "%s/lbsim-test-XXXXXX", dir);
	int fd = mkstemp(path);
	if (fd < 0) {
		perror("mkstemp");
		exit(2);
	}
	size_t len = strlen(text);
	if (write(fd, text, len) != (ssize_t)len) {
		perror("write");
		exit(2);
	}
	close(fd);
	return path;
}

char *src_path(const char *rel)
{
	/* make check exports top_srcdir; a direct run falls back to the
	 * source tree this binary was configured from. */
	const char *top = getenv("top_srcdir");
	if (!top || !*top)
		top = LBS_TOP_SRCDIR;
	char *path = malloc(strlen(top) + strlen(rel) + 2);
	sprintf(path, "%s/%s", top, rel);
	return path;
}

int main(void)
{
	gsl_set_error_handler_off();
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	suite_queue();
	suite_rng();
	suite_models();
	suite_scenario();
	suite_run();
	suite_sync();
	suite_series();
	suite_readers();
	suite_source();
	suite_binding();
	suite_generators();
	suite_policy();
	suite_sweep();
	suite_predict();
	suite_nets();
	suite_calib();
	suite_whatif();
	suite_hybrid();
	suite_hybrid_policy();
	suite_cgroup();
	suite_suggest();
	suite_interval();
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	unsigned failed = CU_get_number_of_tests_failed();
	unsigned run = CU_get_number_of_tests_run();
	unsigned asserts_failed = CU_get_number_of_failures();
	printf("\nunit: %u passed, %u failed\n", run - failed, failed);
	CU_cleanup_registry();
	return (failed || asserts_failed) ? 1 : 0;
}
