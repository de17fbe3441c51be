/* SPDX-License-Identifier: GPL-3.0-or-later */
/* util/suggest.c: the edit distance against hand-counted cases, and what
 * "did you mean" offers. */
#include "tests/unit/suites.h"

#include <stdint.h>
#include <string.h>

#include "util/suggest.h"

static void test_distance_by_hand(void)
{
	CU_ASSERT_EQUAL(lbs_edit_distance("", ""), 0);
	CU_ASSERT_EQUAL(lbs_edit_distance("", "abc"), 3);        /* 3 insertions */
	CU_ASSERT_EQUAL(lbs_edit_distance("plot", "plot"), 0);
	CU_ASSERT_EQUAL(lbs_edit_distance("plto", "plot"), 1);   /* one transposition */
	CU_ASSERT_EQUAL(lbs_edit_distance("kitten", "sitting"), 3); /* k->s, e->i, +g */
	CU_ASSERT_EQUAL(lbs_edit_distance("sweeep", "sweep"), 1); /* one deletion */
	/* The optimal string alignment distance edits no substring twice: ca
	 * to abc is 3 (not 2, as the unrestricted Damerau distance has it). */
	CU_ASSERT_EQUAL(lbs_edit_distance("ca", "abc"), 3);
	/* Symmetric. */
	CU_ASSERT_EQUAL(lbs_edit_distance("report", "rpeort"), lbs_edit_distance("rpeort", "report"));
	char longer[300];
	memset(longer, 'a', sizeof longer - 1);
	longer[sizeof longer - 1] = '\0';
	CU_ASSERT_EQUAL(lbs_edit_distance(longer, "a"), SIZE_MAX);
}

static void test_suggest(void)
{
	const char *cmds[] = { "run", "keys", "sweep", "merge", "plot", "export", "report", "calibrate" };
	size_t n = sizeof cmds / sizeof cmds[0];
	CU_ASSERT_STRING_EQUAL(lbs_suggest("plto", cmds, n), "plot");
	CU_ASSERT_STRING_EQUAL(lbs_suggest("reprot", cmds, n), "report");
	CU_ASSERT_STRING_EQUAL(lbs_suggest("calibrat", cmds, n), "calibrate");
	CU_ASSERT_PTR_NULL(lbs_suggest("default", cmds, n)); /* a scenario's name, near no command */
	CU_ASSERT_PTR_NULL(lbs_suggest("xyz", cmds, n));
	/* Short words: one edit at most (run and ran, not run and key). */
	CU_ASSERT_STRING_EQUAL(lbs_suggest("ran", cmds, n), "run");
	CU_ASSERT_PTR_NULL(lbs_suggest("rxx", cmds, n));
}

void suite_suggest(void)
{
	static const test_case tests[] = {
		{ "edit distance, counted by hand", test_distance_by_hand },
		{ "the nearest near-enough candidate", test_suggest },
	};
	add_suite("suggest", tests, sizeof tests / sizeof tests[0]);
}
