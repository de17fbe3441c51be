/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Trace series: the one in-memory form every trace reader produces.
 *
 * A series set is what one file holds: an index (time in seconds, or an
 * iteration number) and one or more named value columns (availability,
 * cpu_util, batch_time, ...), for one entity or for several (the workers of
 * a PAI job, the machines of a cluster trace), each entity's rows
 * contiguous and its index strictly increasing. The set is validated once,
 * while it is built, with errors naming the file, the line and the field,
 * and is read-only afterwards: every worker that replays it reads the same
 * arrays (one copy however many workers replay it; the trace table of a run
 * owns it, traces/binding.h).
 *
 * Memory: the index and every column are flat arrays of doubles, so a set
 * of one column costs 16 bytes per row, plus a few dozen bytes per entity. */
#ifndef LBS_SERIES_H
#define LBS_SERIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

#define LBS_SERIES_MAX_COLS 16
#define LBS_SERIES_NAME_MAX 32 /* column names, with the terminating NUL */

typedef enum lbs_index_kind {
	LBS_INDEX_TIME,     /* seconds */
	LBS_INDEX_ITERATION /* iteration numbers (integers) */
} lbs_index_kind;

/* What two rows of one entity at the same index mean. The reader picks the
 * rule its format documents (doc/traces.md). */
typedef enum lbs_dup_rule {
	LBS_DUP_ERROR, /* an error naming both lines */
	LBS_DUP_SAME,  /* one sample recorded twice: identical rows are kept once, others are an error */
	LBS_DUP_MEAN   /* one sample: the rows are merged into their mean */
} lbs_dup_rule;

/* Smallest and largest value of a column over the whole set, with the line
 * each was read from (for messages about values a mapping cannot take). */
typedef struct lbs_column_stats {
	double min, max;
	int64_t min_line, max_line;
} lbs_column_stats;

/* One entity's rows: [first, first + n) of the set's arrays. */
typedef struct lbs_series_entity {
	const char *id; /* "" for a file of one entity */
	size_t first, n;
} lbs_series_entity;

typedef struct lbs_series_set {
	char path[1024];            /* as given to the reader, for messages */
	const char *format;         /* the reader's name */
	lbs_index_kind index_kind;
	size_t n_rows, n_cols, n_series;
	double *index;              /* n_rows */
	double *col[LBS_SERIES_MAX_COLS]; /* n_cols arrays of n_rows values */
	char col_name[LBS_SERIES_MAX_COLS][LBS_SERIES_NAME_MAX];
	lbs_column_stats stats[LBS_SERIES_MAX_COLS];
	lbs_series_entity *series;  /* n_series, in order of first appearance in the file */
	char *ids;                  /* storage of the ids */
	double origin;              /* least index of any entity: where replay starts */
	double last;                /* greatest index of any entity */
	/* Length of one pass when a replay loops: last - origin plus the last
	 * step of the entity that ends last (its final sample lasts as long as
	 * the step before it; 1 when it has one sample). One period for every
	 * entity, so the workers replaying a set stay aligned. */
	double period;
} lbs_series_set;

/* One entity's view of one column, what an availability source replays. */
typedef struct lbs_series {
	const double *index;
	const double *value;
	size_t n;
} lbs_series;

typedef struct lbs_series_builder lbs_series_builder;

/* The most rows one set may keep (after skipped ids and merged duplicates):
 * 10^8 unless --max-trace-rows says otherwise. A reader that would keep
 * more stops at that row with an error naming the file and line, having
 * allocated at most the limit's rows (the arrays grow by doubling up to
 * it), so a file of 10^9 rows is refused without reading it whole. */
#define LBS_SERIES_DEFAULT_MAX_ROWS INT64_C(100000000)

/* Sets the limit for the builders created from now on (0: no limit). */
void lbs_trace_max_rows_set(int64_t n);
int64_t lbs_trace_max_rows(void);

/* Starts a set for `path` read by `format`, with the given index kind and
 * columns. `index_name` names the index field in messages ("time_s",
 * "iteration"). With `keyed`, rows carry an entity id; otherwise the file is
 * one entity. With `sorted`, each entity's rows are sorted by index when the
 * set is finished (for formats documented as unsorted), else an index that
 * goes back is an error. Returns NULL (err set) on bad arguments or memory. */
lbs_series_builder *lbs_series_builder_create(const char *path, const char *format,
					      lbs_index_kind kind, const char *index_name,
					      size_t n_cols, const char *const *col_names, bool keyed,
					      bool sorted, lbs_dup_rule dup, lbs_error *err);

/* Keeps only the rows of these ids (the others are skipped as they are
 * read, so a huge cluster trace costs only the machines used). */
lbs_status lbs_series_builder_only(lbs_series_builder *b, const char *const *ids, size_t n,
				   lbs_error *err);

/* Adds one row read at `line`: the entity id (NULL unless keyed), the
 * index, and n_cols values. The reader has checked that each value is a
 * finite number in its column's range; here the index is checked against
 * the entity's previous row (strictly increasing, or the duplicate rule). */
lbs_status lbs_series_builder_add(lbs_series_builder *b, const char *id, double index,
				  const double *values, int64_t line, lbs_error *err);

/* Rows added so far (after merges and skipped ids). */
size_t lbs_series_builder_rows(const lbs_series_builder *b);

/* Finishes the set: groups the rows by entity (stable), sorts when asked,
 * trims the arrays to size. An empty set is an error ("no data rows").
 * Consumes the builder whatever the outcome. */
lbs_status lbs_series_builder_finish(lbs_series_builder *b, lbs_series_set **out, lbs_error *err);

/* Frees a builder that will not be finished. */
void lbs_series_builder_destroy(lbs_series_builder *b);

void lbs_series_set_destroy(lbs_series_set *s);

/* The entity with this id, or -1. */
long lbs_series_find(const lbs_series_set *s, const char *id);

/* The column with this name, or -1. */
int lbs_series_column(const lbs_series_set *s, const char *name);

/* Entity e's view of column c. */
lbs_series lbs_series_view(const lbs_series_set *s, size_t e, int c);

/* The median of column c over every row of every entity (the mean of the
 * two middle values when the count is even). */
double lbs_series_median(const lbs_series_set *s, int c, lbs_error *err);

/* Bytes the set holds on the heap (arrays, entities, ids), for reports. */
size_t lbs_series_bytes(const lbs_series_set *s);

#endif
