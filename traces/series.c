/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "traces/series.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_statistics_double.h>

typedef struct entity_state {
	size_t id_off;     /* offset of its id in the id storage */
	size_t n;          /* rows kept */
	size_t last_row;   /* where its last row is in the arrays */
	int64_t last_line; /* the line that row was read from */
	uint32_t merged;   /* extra rows merged into last_row (LBS_DUP_MEAN) */
} entity_state;

struct lbs_series_builder {
	char path[1024];
	const char *format;
	lbs_index_kind kind;
	char index_name[LBS_SERIES_NAME_MAX];
	size_t n_cols;
	char col_name[LBS_SERIES_MAX_COLS][LBS_SERIES_NAME_MAX];
	bool keyed, sorted, filter;
	lbs_dup_rule dup;

	size_t n, cap;        /* rows */
	int64_t max_rows;     /* 0: no limit */
	double *index;
	double *col[LBS_SERIES_MAX_COLS];
	uint32_t *ent;        /* entity of each row (keyed only) */
	int64_t *line;        /* line of each row (sorted only: checks happen after sorting) */
	lbs_column_stats stats[LBS_SERIES_MAX_COLS];

	entity_state *e;
	size_t n_e, cap_e;
	char *ids;
	size_t ids_len, ids_cap;
	uint32_t *slot;       /* open-addressing hash of ids: entity + 1, 0 = empty */
	size_t n_slots;
};

static int64_t max_rows_setting = LBS_SERIES_DEFAULT_MAX_ROWS;

void lbs_trace_max_rows_set(int64_t n)
{
	max_rows_setting = n > 0 ? n : 0;
}

int64_t lbs_trace_max_rows(void)
{
	return max_rows_setting;
}

static lbs_status row_error(const lbs_series_builder *b, int64_t line, const char *field,
			    lbs_error *err, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static lbs_status row_error(const lbs_series_builder *b, int64_t line, const char *field,
			    lbs_error *err, const char *fmt, ...)
{
	char msg[LBS_ERROR_MAX / 2];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return lbs_error_set(err, LBS_EINPUT, "%s:%lld: %s: %s", b->path, (long long)line, field, msg);
}

static uint64_t hash_id(const char *s)
{
	uint64_t h = UINT64_C(0xCBF29CE484222325);
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * UINT64_C(0x100000001B3);
	return h;
}

/* The slot holding `id`, or the empty slot where it would go. */
static size_t find_slot(const lbs_series_builder *b, const char *id)
{
	size_t mask = b->n_slots - 1;
	for (size_t i = (size_t)hash_id(id) & mask;; i = (i + 1) & mask) {
		uint32_t s = b->slot[i];
		if (!s || strcmp(b->ids + b->e[s - 1].id_off, id) == 0)
			return i;
	}
}

static bool grow_slots(lbs_series_builder *b)
{
	size_t n = b->n_slots ? 2 * b->n_slots : 64;
	uint32_t *old = b->slot;
	size_t old_n = b->n_slots;
	b->slot = calloc(n, sizeof *b->slot);
	if (!b->slot) {
		b->slot = old;
		return false;
	}
	b->n_slots = n;
	for (size_t i = 0; i < old_n; i++)
		if (old[i])
			b->slot[find_slot(b, b->ids + b->e[old[i] - 1].id_off)] = old[i];
	free(old);
	return true;
}

/* Adds a new entity with this id; returns its number or -1 (memory). */
static long add_entity(lbs_series_builder *b, const char *id)
{
	if (b->n_e >= UINT32_MAX - 1)
		return -1;
	if (b->keyed && 2 * (b->n_e + 1) > b->n_slots && !grow_slots(b))
		return -1;
	size_t len = strlen(id) + 1;
	if (b->ids_len + len > b->ids_cap) {
		size_t cap = b->ids_cap ? 2 * b->ids_cap : 256;
		while (cap < b->ids_len + len)
			cap *= 2;
		char *p = realloc(b->ids, cap);
		if (!p)
			return -1;
		b->ids = p;
		b->ids_cap = cap;
	}
	if (b->n_e == b->cap_e) {
		size_t cap = b->cap_e ? 2 * b->cap_e : 16;
		entity_state *p = realloc(b->e, cap * sizeof *p);
		if (!p)
			return -1;
		b->e = p;
		b->cap_e = cap;
	}
	memcpy(b->ids + b->ids_len, id, len);
	b->e[b->n_e] = (entity_state){ .id_off = b->ids_len };
	b->ids_len += len;
	if (b->keyed)
		b->slot[find_slot(b, id)] = (uint32_t)(b->n_e + 1);
	return (long)b->n_e++;
}

lbs_series_builder *lbs_series_builder_create(const char *path, const char *format,
					      lbs_index_kind kind, const char *index_name,
					      size_t n_cols, const char *const *col_names, bool keyed,
					      bool sorted, lbs_dup_rule dup, lbs_error *err)
{
	if (n_cols == 0 || n_cols > LBS_SERIES_MAX_COLS) {
		lbs_error_set(err, LBS_EINTERNAL, "%s: %zu value columns (1 to %d allowed)", path, n_cols,
			      LBS_SERIES_MAX_COLS);
		return NULL;
	}
	lbs_series_builder *b = lbs_calloc(1, sizeof *b, err);
	if (!b)
		return NULL;
	snprintf(b->path, sizeof b->path, "%s", path);
	b->format = format;
	b->kind = kind;
	snprintf(b->index_name, sizeof b->index_name, "%s", index_name);
	b->n_cols = n_cols;
	for (size_t c = 0; c < n_cols; c++) {
		snprintf(b->col_name[c], sizeof b->col_name[c], "%s", col_names[c]);
		b->stats[c] = (lbs_column_stats){ INFINITY, -INFINITY, 0, 0 };
	}
	b->keyed = keyed;
	b->sorted = sorted;
	b->dup = dup;
	b->max_rows = max_rows_setting;
	if (keyed && !grow_slots(b)) {
		lbs_series_builder_destroy(b);
		lbs_error_set(err, LBS_EINTERNAL, "out of memory");
		return NULL;
	}
	if (!keyed && add_entity(b, "") < 0) {
		lbs_series_builder_destroy(b);
		lbs_error_set(err, LBS_EINTERNAL, "out of memory");
		return NULL;
	}
	return b;
}

lbs_status lbs_series_builder_only(lbs_series_builder *b, const char *const *ids, size_t n,
				   lbs_error *err)
{
	if (!b->keyed || b->n)
		return lbs_error_set(err, LBS_EINTERNAL, "%s: ids can be chosen only for a keyed set, "
				     "before any row", b->path);
	for (size_t i = 0; i < n; i++)
		if (!b->slot[find_slot(b, ids[i])] && add_entity(b, ids[i]) < 0)
			return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	b->filter = true;
	return LBS_OK;
}

static bool grow_rows(lbs_series_builder *b)
{
	size_t cap = b->cap ? 2 * b->cap : 1024;
	if (b->max_rows > 0 && cap > (size_t)b->max_rows)
		cap = (size_t)b->max_rows; /* > b->n: the caller checked the limit */
	double *p = realloc(b->index, cap * sizeof *p);
	if (!p)
		return false;
	b->index = p;
	for (size_t c = 0; c < b->n_cols; c++) {
		if (!(p = realloc(b->col[c], cap * sizeof *p)))
			return false;
		b->col[c] = p;
	}
	if (b->keyed) {
		uint32_t *q = realloc(b->ent, cap * sizeof *q);
		if (!q)
			return false;
		b->ent = q;
	}
	if (b->sorted) {
		int64_t *q = realloc(b->line, cap * sizeof *q);
		if (!q)
			return false;
		b->line = q;
	}
	b->cap = cap;
	return true;
}

static const char *index_text(const lbs_series_builder *b, double v, char *buf, size_t len)
{
	return lbs_fmt(buf, len, b->kind == LBS_INDEX_ITERATION ? "%.0f" : "%.17g", v);
}

/* Row `row` already holds a sample at the same index as the new one read at
 * `line`: apply the duplicate rule. Returns LBS_OK when the new row is
 * absorbed (dropped or merged). */
static lbs_status duplicate(lbs_series_builder *b, size_t row, int64_t row_line, uint32_t *merged,
			    const double *values, int64_t line, lbs_error *err)
{
	char t[64];
	index_text(b, b->index[row], t, sizeof t);
	switch (b->dup) {
	case LBS_DUP_SAME:
		for (size_t c = 0; c < b->n_cols; c++)
			if (b->col[c][row] != values[c])
				return row_error(b, line, b->index_name, err,
						 "duplicate %s %s with a different %s (%.17g here, %.17g at line %lld)",
						 b->index_name, t, b->col_name[c], values[c], b->col[c][row],
						 (long long)row_line);
		return LBS_OK;
	case LBS_DUP_MEAN: {
		double m = (double)*merged + 1.0;
		for (size_t c = 0; c < b->n_cols; c++)
			b->col[c][row] = (b->col[c][row] * m + values[c]) / (m + 1.0);
		++*merged;
		return LBS_OK;
	}
	default:
		return row_error(b, line, b->index_name, err, "duplicate %s %s (also at line %lld)",
				 b->index_name, t, (long long)row_line);
	}
}

lbs_status lbs_series_builder_add(lbs_series_builder *b, const char *id, double index,
				  const double *values, int64_t line, lbs_error *err)
{
	uint32_t e = 0;
	if (b->keyed) {
		uint32_t s = b->slot[find_slot(b, id ? id : "")];
		if (!s) {
			if (b->filter)
				return LBS_OK; /* not wanted */
			long ne = add_entity(b, id ? id : "");
			if (ne < 0)
				return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
			s = (uint32_t)ne + 1;
		}
		e = s - 1;
	}
	if (!isfinite(index))
		return row_error(b, line, b->index_name, err, "not a finite number");
	entity_state *es = &b->e[e];
	if (!b->sorted && es->n) {
		double prev = b->index[es->last_row];
		if (index == prev)
			return duplicate(b, es->last_row, es->last_line, &es->merged, values, line, err);
		if (index < prev) {
			char t[64], p[64];
			return row_error(b, line, b->index_name, err,
					 "%s goes back: %s after %s at line %lld (rows of one %s must be in "
					 "increasing order)", b->index_name, index_text(b, index, t, sizeof t),
					 index_text(b, prev, p, sizeof p), (long long)es->last_line,
					 b->keyed ? "id" : "file");
		}
	}
	if (b->max_rows > 0 && b->n >= (size_t)b->max_rows)
		return lbs_error_set(err, LBS_EINPUT, "%s:%lld: more than %lld rows: a trace may keep at most "
				     "%lld (--max-trace-rows raises the limit; with trace_ids only those "
				     "ids' rows are kept)", b->path, (long long)line, (long long)b->max_rows,
				     (long long)b->max_rows);
	if (b->n == b->cap && !grow_rows(b))
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory reading %s", b->path);
	size_t r = b->n++;
	b->index[r] = index;
	for (size_t c = 0; c < b->n_cols; c++) {
		double v = values[c];
		b->col[c][r] = v;
		lbs_column_stats *st = &b->stats[c];
		if (v < st->min) {
			st->min = v;
			st->min_line = line;
		}
		if (v > st->max) {
			st->max = v;
			st->max_line = line;
		}
	}
	if (b->keyed)
		b->ent[r] = e;
	if (b->sorted)
		b->line[r] = line;
	es->n++;
	es->last_row = r;
	es->last_line = line;
	es->merged = 0;
	return LBS_OK;
}

size_t lbs_series_builder_rows(const lbs_series_builder *b)
{
	return b->n;
}

void lbs_series_builder_destroy(lbs_series_builder *b)
{
	if (!b)
		return;
	free(b->index);
	for (size_t c = 0; c < LBS_SERIES_MAX_COLS; c++)
		free(b->col[c]);
	free(b->ent);
	free(b->line);
	free(b->e);
	free(b->ids);
	free(b->slot);
	free(b);
}

typedef struct sort_key {
	double t;
	size_t row;
} sort_key;

/* By index, then by position in the file, so equal indices stay in file
 * order and the duplicate rule sees them as they were read. */
static int cmp_key(const void *pa, const void *pb)
{
	const sort_key *a = pa, *b = pb;
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	return a->row < b->row ? -1 : a->row > b->row;
}

/* Sorts each entity's rows (perm[start[e]..start[e+1])) by index and applies
 * the duplicate rule to equal neighbours. Rows absorbed by a duplicate get
 * perm entry SIZE_MAX. */
static lbs_status sort_entities(lbs_series_builder *b, size_t *perm, const size_t *start,
				lbs_error *err)
{
	size_t longest = 0;
	for (size_t e = 0; e < b->n_e; e++)
		longest = b->e[e].n > longest ? b->e[e].n : longest;
	sort_key *k = malloc((longest ? longest : 1) * sizeof *k);
	if (!k)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory sorting %s", b->path);
	for (size_t e = 0; e < b->n_e; e++) {
		size_t n = b->e[e].n, *p = perm + start[e];
		for (size_t i = 0; i < n; i++)
			k[i] = (sort_key){ b->index[p[i]], p[i] };
		qsort(k, n, sizeof *k, cmp_key);
		size_t keep = 0; /* position in p of the sample equal rows merge into */
		uint32_t merged = 0;
		double vals[LBS_SERIES_MAX_COLS];
		for (size_t i = 0; i < n; i++) {
			p[i] = k[i].row;
			if (i && k[i].t == b->index[p[keep]]) {
				for (size_t c = 0; c < b->n_cols; c++)
					vals[c] = b->col[c][p[i]];
				lbs_status st = duplicate(b, p[keep], b->line[p[keep]], &merged, vals,
							  b->line[p[i]], err);
				if (st != LBS_OK) {
					free(k);
					return st;
				}
				p[i] = SIZE_MAX;
			} else {
				keep = i;
				merged = 0;
			}
		}
	}
	free(k);
	return LBS_OK;
}

/* Shrinks (or gathers through perm) the builder's arrays into the set's. */
static lbs_status gather(lbs_series_builder *b, lbs_series_set *s, const size_t *perm, size_t n,
			 lbs_error *err)
{
	if (!perm) {
		double *p = realloc(b->index, n * sizeof *p);
		s->index = p ? p : b->index;
		b->index = NULL;
		for (size_t c = 0; c < b->n_cols; c++) {
			p = realloc(b->col[c], n * sizeof *p);
			s->col[c] = p ? p : b->col[c];
			b->col[c] = NULL;
		}
		return LBS_OK;
	}
	if (!(s->index = malloc(n * sizeof *s->index)))
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory reading %s", b->path);
	for (size_t c = 0; c < b->n_cols; c++)
		if (!(s->col[c] = malloc(n * sizeof *s->col[c])))
			return lbs_error_set(err, LBS_EINTERNAL, "out of memory reading %s", b->path);
	size_t j = 0;
	for (size_t i = 0; i < b->n; i++) {
		size_t r = perm[i];
		if (r == SIZE_MAX)
			continue;
		s->index[j] = b->index[r];
		for (size_t c = 0; c < b->n_cols; c++)
			s->col[c][j] = b->col[c][r];
		j++;
	}
	return LBS_OK;
}

lbs_status lbs_series_builder_finish(lbs_series_builder *b, lbs_series_set **out, lbs_error *err)
{
	*out = NULL;
	lbs_status st = LBS_OK;
	size_t *perm = NULL, *start = NULL;
	lbs_series_set *s = NULL;
	if (b->n == 0 && b->filter) {
		char ids[256] = "";
		for (size_t e = 0, used = 0; e < b->n_e && used + 1 < sizeof ids; e++) {
			int w = snprintf(ids + used, sizeof ids - used, "%s'%s'", e ? ", " : "",
					 b->ids + b->e[e].id_off);
			used += w > 0 ? (size_t)w : 0;
		}
		st = lbs_error_set(err, LBS_EINPUT, "%s: has none of the ids asked for (%s)", b->path, ids);
		goto out;
	}
	if (b->n == 0) {
		st = lbs_error_set(err, LBS_EINPUT, "%s: no data rows", b->path);
		goto out;
	}
	if (!(s = lbs_calloc(1, sizeof *s, err))) {
		st = LBS_EINTERNAL;
		goto out;
	}
	snprintf(s->path, sizeof s->path, "%s", b->path);
	s->format = b->format;
	s->index_kind = b->kind;
	s->n_cols = b->n_cols;
	memcpy(s->col_name, b->col_name, sizeof s->col_name);
	memcpy(s->stats, b->stats, sizeof s->stats);

	/* Entities in order of first appearance; those asked for but absent
	 * are dropped (looking one up then fails, naming the id). */
	size_t n_e = 0;
	for (size_t e = 0; e < b->n_e; e++)
		n_e += b->e[e].n > 0;
	bool regroup = b->sorted || n_e > 1;
	if (regroup) {
		/* A stable counting sort by entity, then (if asked) by index. */
		if (!(perm = malloc(b->n * sizeof *perm)) || !(start = calloc(b->n_e + 1, sizeof *start))) {
			st = lbs_error_set(err, LBS_EINTERNAL, "out of memory reading %s", b->path);
			goto out;
		}
		for (size_t e = 0; e < b->n_e; e++)
			start[e + 1] = start[e] + b->e[e].n;
		size_t *fill = b->keyed ? malloc(b->n_e * sizeof *fill) : NULL;
		if (b->keyed && !fill) {
			st = lbs_error_set(err, LBS_EINTERNAL, "out of memory reading %s", b->path);
			goto out;
		}
		for (size_t e = 0; fill && e < b->n_e; e++)
			fill[e] = start[e];
		for (size_t r = 0; r < b->n; r++)
			perm[fill ? fill[b->ent[r]]++ : r] = r;
		free(fill);
		if (b->sorted && (st = sort_entities(b, perm, start, err)) != LBS_OK)
			goto out;
	}
	size_t n = 0;
	if (!(s->series = lbs_calloc(n_e, sizeof *s->series, err)) ||
	    !(s->ids = lbs_calloc(b->ids_len, 1, err))) {
		st = LBS_EINTERNAL;
		goto out;
	}
	memcpy(s->ids, b->ids, b->ids_len);
	for (size_t e = 0; e < b->n_e; e++) {
		if (!b->e[e].n)
			continue;
		size_t kept = b->e[e].n;
		if (regroup)
			for (size_t i = start[e]; i < start[e + 1]; i++)
				kept -= perm[i] == SIZE_MAX;
		s->series[s->n_series++] = (lbs_series_entity){ s->ids + b->e[e].id_off, n, kept };
		n += kept;
	}
	if ((st = gather(b, s, regroup ? perm : NULL, n, err)) != LBS_OK)
		goto out;
	s->n_rows = n;
	s->origin = INFINITY;
	s->last = -INFINITY;
	double last_step = 1;
	for (size_t e = 0; e < s->n_series; e++) {
		const lbs_series_entity *se = &s->series[e];
		const double *t = s->index + se->first;
		s->origin = fmin(s->origin, t[0]);
		if (t[se->n - 1] > s->last) {
			s->last = t[se->n - 1];
			last_step = se->n > 1 ? t[se->n - 1] - t[se->n - 2] : 1;
		}
	}
	s->period = s->last - s->origin + last_step;
	*out = s;
	s = NULL;
out:
	free(perm);
	free(start);
	lbs_series_set_destroy(s);
	lbs_series_builder_destroy(b);
	return st;
}

void lbs_series_set_destroy(lbs_series_set *s)
{
	if (!s)
		return;
	free(s->index);
	for (size_t c = 0; c < LBS_SERIES_MAX_COLS; c++)
		free(s->col[c]);
	free(s->series);
	free(s->ids);
	free(s);
}

long lbs_series_find(const lbs_series_set *s, const char *id)
{
	/* Linear: called once per bound group at set-up, never per event. */
	for (size_t e = 0; e < s->n_series; e++)
		if (strcmp(s->series[e].id, id) == 0)
			return (long)e;
	return -1;
}

int lbs_series_column(const lbs_series_set *s, const char *name)
{
	for (size_t c = 0; c < s->n_cols; c++)
		if (strcmp(s->col_name[c], name) == 0)
			return (int)c;
	return -1;
}

lbs_series lbs_series_view(const lbs_series_set *s, size_t e, int c)
{
	const lbs_series_entity *se = &s->series[e];
	return (lbs_series){ s->index + se->first, s->col[c] + se->first, se->n };
}

double lbs_series_median(const lbs_series_set *s, int c, lbs_error *err)
{
	double *copy = malloc(s->n_rows * sizeof *copy);
	if (!copy) {
		lbs_error_set(err, LBS_EINTERNAL, "out of memory");
		return NAN;
	}
	memcpy(copy, s->col[c], s->n_rows * sizeof *copy);
	double m = gsl_stats_median(copy, 1, s->n_rows);
	free(copy);
	return m;
}

size_t lbs_series_bytes(const lbs_series_set *s)
{
	size_t ids = 0;
	for (size_t e = 0; e < s->n_series; e++)
		ids += strlen(s->series[e].id) + 1;
	return s->n_rows * (1 + s->n_cols) * sizeof(double) + s->n_series * sizeof *s->series + ids +
	       sizeof *s;
}
