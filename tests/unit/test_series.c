/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The in-memory trace series: grouping by entity, the index checks and
 * duplicate rules, id filters, statistics and the median. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/suites.h"
#include "traces/series.h"

static const char *const one_col[] = { "v" };

static lbs_series_builder *make(bool keyed, bool sorted, lbs_dup_rule dup)
{
	lbs_error err;
	lbs_series_builder *b = lbs_series_builder_create("f.csv", "test", LBS_INDEX_TIME, "time_s", 1,
							  one_col, keyed, sorted, dup, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	return b;
}

static lbs_status add(lbs_series_builder *b, const char *id, double t, double v, int64_t line,
		      lbs_error *err)
{
	return lbs_series_builder_add(b, id, t, &v, line, err);
}

static void test_single_entity(void)
{
	lbs_error err;
	lbs_series_builder *b = make(false, false, LBS_DUP_ERROR);
	CU_ASSERT_EQUAL(add(b, NULL, 10, 2.0, 2, &err), LBS_OK);
	CU_ASSERT_EQUAL(add(b, NULL, 20, 0.5, 3, &err), LBS_OK);
	CU_ASSERT_EQUAL(add(b, NULL, 25, 4.0, 4, &err), LBS_OK);
	lbs_series_set *s;
	CU_ASSERT_EQUAL_FATAL(lbs_series_builder_finish(b, &s, &err), LBS_OK);
	CU_ASSERT_EQUAL(s->n_rows, 3);
	CU_ASSERT_EQUAL(s->n_series, 1);
	CU_ASSERT_STRING_EQUAL(s->series[0].id, "");
	CU_ASSERT_EQUAL(s->origin, 10);
	CU_ASSERT_EQUAL(s->last, 25);
	CU_ASSERT_EQUAL(s->period, 20); /* 25 - 10 + the last step, 5 */
	CU_ASSERT_EQUAL(s->stats[0].min, 0.5);
	CU_ASSERT_EQUAL(s->stats[0].min_line, 3);
	CU_ASSERT_EQUAL(s->stats[0].max, 4.0);
	CU_ASSERT_EQUAL(s->stats[0].max_line, 4);
	CU_ASSERT_EQUAL(lbs_series_column(s, "v"), 0);
	CU_ASSERT_EQUAL(lbs_series_column(s, "w"), -1);
	lbs_series v = lbs_series_view(s, 0, 0);
	CU_ASSERT_EQUAL(v.n, 3);
	CU_ASSERT_EQUAL(v.index[1], 20);
	CU_ASSERT_EQUAL(v.value[1], 0.5);
	CU_ASSERT_EQUAL(lbs_series_median(s, 0, &err), 2.0);
	CU_ASSERT(lbs_series_bytes(s) >= 3 * 16);
	lbs_series_set_destroy(s);
}

static void test_index_errors(void)
{
	lbs_error err;
	lbs_series_builder *b = make(false, false, LBS_DUP_ERROR);
	CU_ASSERT_EQUAL(add(b, NULL, 10, 1, 2, &err), LBS_OK);
	CU_ASSERT_EQUAL(add(b, NULL, 5, 1, 3, &err), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "f.csv:3: time_s: time_s goes back"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "line 2"));
	CU_ASSERT_EQUAL(add(b, NULL, 10, 1, 4, &err), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "f.csv:4: time_s: duplicate time_s 10 (also at line 2)"));
	CU_ASSERT_EQUAL(add(b, NULL, NAN, 1, 5, &err), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "f.csv:5: time_s: not a finite number"));
	lbs_series_builder_destroy(b);

	lbs_series_set *s;
	b = make(false, false, LBS_DUP_ERROR);
	CU_ASSERT_EQUAL(lbs_series_builder_finish(b, &s, &err), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "f.csv: no data rows"));
	CU_ASSERT_PTR_NULL(s);
}

static void test_duplicate_rules(void)
{
	lbs_error err;
	lbs_series_set *s;
	/* SAME: a repeated identical row is one sample; a different one is an error. */
	lbs_series_builder *b = make(false, false, LBS_DUP_SAME);
	CU_ASSERT_EQUAL(add(b, NULL, 1, 3.0, 2, &err), LBS_OK);
	CU_ASSERT_EQUAL(add(b, NULL, 1, 3.0, 3, &err), LBS_OK);
	CU_ASSERT_EQUAL(lbs_series_builder_rows(b), 1);
	CU_ASSERT_EQUAL(add(b, NULL, 1, 4.0, 4, &err), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "f.csv:4: time_s: duplicate time_s 1 with a different v"));
	lbs_series_builder_destroy(b);
	/* MEAN: equal times merge into their mean. */
	b = make(false, false, LBS_DUP_MEAN);
	CU_ASSERT_EQUAL(add(b, NULL, 0, 1.0, 2, &err), LBS_OK);
	CU_ASSERT_EQUAL(add(b, NULL, 300, 2.0, 3, &err), LBS_OK);
	CU_ASSERT_EQUAL(add(b, NULL, 300, 4.0, 4, &err), LBS_OK);
	CU_ASSERT_EQUAL(add(b, NULL, 300, 9.0, 5, &err), LBS_OK);
	CU_ASSERT_EQUAL(add(b, NULL, 600, 1.0, 6, &err), LBS_OK);
	CU_ASSERT_EQUAL_FATAL(lbs_series_builder_finish(b, &s, &err), LBS_OK);
	CU_ASSERT_EQUAL(s->n_rows, 3);
	CU_ASSERT_DOUBLE_EQUAL(s->col[0][1], 5.0, 1e-15);
	CU_ASSERT_EQUAL(s->index[2], 600);
	lbs_series_set_destroy(s);
}

/* Interleaved entities are grouped, each in file order, entities in order
 * of first appearance; the index is checked per entity. */
static void test_keyed(void)
{
	lbs_error err;
	lbs_series_builder *b = make(true, false, LBS_DUP_ERROR);
	const char *ids[] = { "b", "a", "b", "c", "a", "b" };
	const double t[] = { 1, 1, 2, 5, 3, 4 };
	for (int i = 0; i < 6; i++)
		CU_ASSERT_EQUAL(add(b, ids[i], t[i], 10 * i, i + 2, &err), LBS_OK);
	CU_ASSERT_EQUAL(add(b, "a", 2, 0, 9, &err), LBS_EINPUT); /* a is at 3 */
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "rows of one id"));
	lbs_series_set *s;
	CU_ASSERT_EQUAL_FATAL(lbs_series_builder_finish(b, &s, &err), LBS_OK);
	CU_ASSERT_EQUAL(s->n_series, 3);
	CU_ASSERT_STRING_EQUAL(s->series[0].id, "b");
	CU_ASSERT_STRING_EQUAL(s->series[1].id, "a");
	CU_ASSERT_STRING_EQUAL(s->series[2].id, "c");
	CU_ASSERT_EQUAL(lbs_series_find(s, "c"), 2);
	CU_ASSERT_EQUAL(lbs_series_find(s, "d"), -1);
	lbs_series vb = lbs_series_view(s, 0, 0), va = lbs_series_view(s, 1, 0);
	CU_ASSERT_EQUAL(vb.n, 3);
	CU_ASSERT_EQUAL(vb.index[2], 4);
	CU_ASSERT_EQUAL(vb.value[2], 50);
	CU_ASSERT_EQUAL(va.n, 2);
	CU_ASSERT_EQUAL(va.value[1], 40);
	CU_ASSERT_EQUAL(s->origin, 1);
	CU_ASSERT_EQUAL(s->last, 5);
	CU_ASSERT_EQUAL(s->period, 5); /* c ends last, with one sample: 5 - 1 + 1 */
	lbs_series_set_destroy(s);
}

/* Many ids (the hash grows), a filter, and sorting with duplicates. */
static void test_many_ids_filter_sort(void)
{
	lbs_error err;
	lbs_series_builder *b = make(true, false, LBS_DUP_ERROR);
	char id[32];
	for (int r = 0; r < 3; r++)
		for (int m = 0; m < 1000; m++)
			CU_ASSERT_EQUAL(add(b, lbs_fmt(id, sizeof id, "m_%d", m), r, m + r, r * 1000 + m, &err),
					LBS_OK);
	lbs_series_set *s;
	CU_ASSERT_EQUAL_FATAL(lbs_series_builder_finish(b, &s, &err), LBS_OK);
	CU_ASSERT_EQUAL(s->n_series, 1000);
	long e = lbs_series_find(s, "m_777");
	CU_ASSERT_EQUAL_FATAL(e, 777);
	lbs_series v = lbs_series_view(s, (size_t)e, 0);
	CU_ASSERT_EQUAL(v.n, 3);
	CU_ASSERT_EQUAL(v.value[2], 779);
	lbs_series_set_destroy(s);

	b = make(true, true, LBS_DUP_SAME);
	const char *want[] = { "y", "absent" };
	CU_ASSERT_EQUAL(lbs_series_builder_only(b, want, 2, &err), LBS_OK);
	CU_ASSERT_EQUAL(add(b, "x", 5, 1, 2, &err), LBS_OK); /* skipped */
	CU_ASSERT_EQUAL(add(b, "y", 5, 1, 3, &err), LBS_OK);
	CU_ASSERT_EQUAL(add(b, "y", 1, 2, 4, &err), LBS_OK); /* sorted later */
	CU_ASSERT_EQUAL(add(b, "y", 5, 1, 5, &err), LBS_OK); /* same sample twice */
	CU_ASSERT_EQUAL(lbs_series_builder_rows(b), 3);
	CU_ASSERT_EQUAL_FATAL(lbs_series_builder_finish(b, &s, &err), LBS_OK);
	CU_ASSERT_EQUAL(s->n_series, 1);
	CU_ASSERT_EQUAL(lbs_series_find(s, "absent"), -1);
	CU_ASSERT_EQUAL(s->n_rows, 2);
	CU_ASSERT_EQUAL(s->index[0], 1);
	CU_ASSERT_EQUAL(s->col[0][0], 2);
	CU_ASSERT_EQUAL(s->index[1], 5);
	lbs_series_set_destroy(s);

	/* Sorting finds duplicates with different values, naming both lines. */
	b = make(true, true, LBS_DUP_SAME);
	CU_ASSERT_EQUAL(add(b, "y", 5, 1, 2, &err), LBS_OK);
	CU_ASSERT_EQUAL(add(b, "y", 1, 2, 3, &err), LBS_OK);
	CU_ASSERT_EQUAL(add(b, "y", 5, 7, 4, &err), LBS_OK);
	CU_ASSERT_EQUAL(lbs_series_builder_finish(b, &s, &err), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "f.csv:4: time_s: duplicate time_s 5"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "at line 2"));
}

/* The median of an even count is the mean of the two middle values. */
static void test_median(void)
{
	lbs_error err;
	lbs_series_builder *b = make(true, false, LBS_DUP_ERROR);
	const double v[] = { 7, 1, 3, 100 };
	for (int i = 0; i < 4; i++)
		CU_ASSERT_EQUAL(add(b, i % 2 ? "a" : "b", i, v[i], i + 2, &err), LBS_OK);
	lbs_series_set *s;
	CU_ASSERT_EQUAL_FATAL(lbs_series_builder_finish(b, &s, &err), LBS_OK);
	CU_ASSERT_EQUAL(lbs_series_median(s, 0, &err), 5.0);
	/* The set is unchanged by it. */
	CU_ASSERT_EQUAL(s->col[0][0], 7);
	lbs_series_set_destroy(s);
}

void suite_series(void)
{
	static const test_case tests[] = {
		{ "one entity", test_single_entity },
		{ "index errors name file, line, field", test_index_errors },
		{ "duplicate rules", test_duplicate_rules },
		{ "entities grouped", test_keyed },
		{ "many ids, filter, sort", test_many_ids_filter_sort },
		{ "median", test_median },
	};
	add_suite("series", tests, sizeof tests / sizeof tests[0]);
}
