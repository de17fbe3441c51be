/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "traces/binding.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "util/datapath.h"
#include "util/rng.h"
#include "traces/csvread.h"

typedef struct table_entry {
	char *key; /* path, format, metric and ids: what makes two loads the same */
	lbs_series_set *set;
} table_entry;

struct lbs_trace_table {
	table_entry *e;
	size_t n, cap;
};

lbs_trace_table *lbs_trace_table_create(lbs_error *err)
{
	return lbs_calloc(1, sizeof(lbs_trace_table), err);
}

void lbs_trace_table_destroy(lbs_trace_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		free(t->e[i].key);
		lbs_series_set_destroy(t->e[i].set);
	}
	free(t->e);
	free(t);
}

size_t lbs_trace_table_size(const lbs_trace_table *t)
{
	return t->n;
}

/* The set for (path, reader, options), read now or found in the table. */
static lbs_status load(lbs_trace_table *t, const char *path, const lbs_trace_reader *r,
		       const lbs_read_opts *o, const char *ids_text, const lbs_series_set **out,
		       lbs_error *err)
{
	size_t len = strlen(path) + strlen(r->name) + strlen(o->metric) + strlen(ids_text) + 4;
	char *key = malloc(len);
	if (!key)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	snprintf(key, len, "%s\x1f%s\x1f%s\x1f%s", path, r->name, o->metric, ids_text);
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->e[i].key, key) == 0) {
			free(key);
			*out = t->e[i].set;
			return LBS_OK;
		}
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 8;
		table_entry *e = realloc(t->e, cap * sizeof *e);
		if (!e) {
			free(key);
			return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
		}
		t->e = e;
		t->cap = cap;
	}
	lbs_series_set *s;
	lbs_status st = r->read(path, o, &s, err);
	if (st != LBS_OK) {
		free(key);
		return st;
	}
	t->e[t->n++] = (table_entry){ key, s };
	*out = s;
	return LBS_OK;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

lbs_map_kind lbs_trace_auto_map(const char *c)
{
	if (strcmp(c, "availability") == 0)
		return LBS_MAP_DIRECT;
	if (ends_with(c, "_util"))
		return LBS_MAP_UTIL;
	if (ends_with(c, "_time"))
		return LBS_MAP_TIME;
	if (!strcmp(c, "throughput") || !strcmp(c, "bandwidth") || !strcmp(c, "network_in") ||
	    !strcmp(c, "network_out"))
		return LBS_MAP_RATE;
	return LBS_MAP_AUTO;
}

/* "'a', 'b'" of the set's columns (the first few), for messages. */
static void list_columns(const lbs_series_set *s, char *buf, size_t len)
{
	size_t n = s->n_cols, used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n && used + 1 < len; i++) {
		if (i == 8 && n > 9) {
			snprintf(buf + used, len - used, ", ... (%zu in all)", n);
			return;
		}
		int w = snprintf(buf + used, len - used, "%s'%s'", i ? ", " : "",
				 s->col_name[i]);
		used += w > 0 ? (size_t)w : 0;
	}
}

lbs_status lbs_trace_bind(lbs_trace_table *t, const lbs_trace_request *req, int64_t count,
			  lbs_source *out, const char **bad_key, lbs_error *err)
{
	const lbs_trace_spec *spec = req->spec;
	*bad_key = "trace_format";
	size_t n_formats = 0;
	while (lbs_trace_readers[n_formats])
		n_formats++;
	if (spec->format < 1 || (size_t)spec->format > n_formats)
		return lbs_error_set(err, LBS_EINTERNAL, "trace format %d not in the registry", spec->format);
	const lbs_trace_reader *r = lbs_trace_readers[spec->format - 1];

	*bad_key = "trace_ids";
	char **ids = NULL;
	size_t n_ids = 0;
	lbs_status st = lbs_csv_split(spec->ids, &ids, &n_ids, err);
	if (st != LBS_OK)
		return st;
	for (size_t i = 0; i < n_ids; i++)
		if (!*ids[i]) {
			free(ids);
			return lbs_error_set(err, LBS_EINPUT, "an empty id in '%s'", spec->ids);
		}

	*bad_key = "trace";
	/* Relative to the scenario's folder, then LBSIM_PATH and the installed
	 * traces (util/datapath.h). */
	lbs_datapath *dp = lbs_calloc(1, sizeof *dp, err);
	if (!dp) {
		free(ids);
		return LBS_EINTERNAL;
	}
	lbs_datapath_find(spec->file, req->base_dir, "traces/data", dp);
	char path[LBS_DATAPATH_MAX];
	snprintf(path, sizeof path, "%s", dp->path);
	lbs_read_opts o = { spec->metric, (const char *const *)ids, n_ids };
	const lbs_series_set *set = NULL;
	st = load(t, path, r, &o, spec->ids, &set, err);
	if (st != LBS_OK)
		lbs_datapath_explain(err, dp);
	free(dp);
	if (st != LBS_OK) {
		free(ids);
		return st;
	}

	char names[512];
	*bad_key = "trace_column";
	int col = *spec->column ? lbs_series_column(set, spec->column) : 0;
	if (col < 0) {
		list_columns(set, names, sizeof names);
		free(ids);
		return lbs_error_set(err, LBS_EINPUT, "%s has no column '%s' (its columns: %s)", path,
				     spec->column, names);
	}
	const char *column = set->col_name[col];

	*bad_key = "trace_map";
	lbs_source_opts so = {
		.interp = spec->interp,
		.end = spec->end,
		.speed = spec->speed,
		.map = { spec->map, spec->reference, spec->k, spec->floor, req->gain, req->loss },
	};
	if (so.map.kind == LBS_MAP_AUTO && (so.map.kind = lbs_trace_auto_map(column)) == LBS_MAP_AUTO) {
		free(ids);
		return lbs_error_set(err, LBS_EINPUT, "cannot tell from its name how column '%s' of %s becomes "
				     "availability: set trace_map (direct, time, rate or util)", column, path);
	}
	if (so.map.kind != LBS_MAP_TIME && so.map.kind != LBS_MAP_RATE && spec->reference > 0) {
		*bad_key = "trace_reference";
		free(ids);
		return lbs_error_set(err, LBS_EINPUT, "column '%s' maps by `%s`, which has no reference (a "
				     "reference applies to time and rate)", column,
				     so.map.kind == LBS_MAP_UTIL ? "util" : "direct");
	}
	if ((so.map.kind == LBS_MAP_TIME || so.map.kind == LBS_MAP_RATE) && !(so.map.reference > 0)) {
		so.map.reference = req->nominal > 0 && so.map.kind == LBS_MAP_RATE
				   ? req->nominal : lbs_series_median(set, col, err);
		if (!(so.map.reference > 0)) {
			free(ids);
			return err->status == LBS_EINTERNAL ? LBS_EINTERNAL
			       : lbs_error_set(err, LBS_EINPUT, "the median of column '%s' of %s is %g: set "
					       "trace_reference", column, path, so.map.reference);
		}
	}
	if (set->index_kind == LBS_INDEX_ITERATION) {
		if (spec->offset_s != 0) {
			*bad_key = "trace_offset";
			free(ids);
			return lbs_error_set(err, LBS_EINPUT, "%s is indexed by iteration: give the offset as "
					     "trace_offset_iterations", path);
		}
		so.offset = (double)spec->offset_iterations;
	} else {
		if (spec->offset_iterations != 0) {
			*bad_key = "trace_offset_iterations";
			free(ids);
			return lbs_error_set(err, LBS_EINPUT, "%s is indexed by time: give the offset as "
					     "trace_offset (with a unit)", path);
		}
		so.offset = spec->offset_s;
	}
	if (set->index_kind == LBS_INDEX_ITERATION && spec->speed != 1) {
		*bad_key = "trace_speed";
		free(ids);
		return lbs_error_set(err, LBS_EINPUT, "%s is indexed by iteration: a replay speed applies only "
				     "to traces indexed by time", path);
	}

	/* The pool: the ids asked for, in that order, or every id of the file. */
	*bad_key = "trace_ids";
	size_t pool_n = n_ids ? n_ids : set->n_series;
	size_t *pool = malloc(pool_n * sizeof *pool);
	if (!pool) {
		free(ids);
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	}
	for (size_t i = 0; i < pool_n; i++) {
		long e = n_ids ? lbs_series_find(set, ids[i]) : (long)i;
		if (e < 0) {
			if (set->n_series == 1 && !*set->series[0].id) {
				st = lbs_error_set(err, LBS_EINPUT, "%s has no id '%s' (it has one series, "
						   "without ids)", path, ids[i]);
			} else {
				/* Only the ids asked for were kept: the others are unknown here. */
				st = lbs_error_set(err, LBS_EINPUT, "%s has no id '%s'", path, ids[i]);
			}
			free(pool);
			free(ids);
			return st;
		}
		pool[i] = (size_t)e;
	}
	free(ids);

	*bad_key = "trace_map";
	for (int64_t k = 0; k < count; k++) {
		size_t pick;
		if (spec->assign == LBS_ASSIGN_DRAW) {
			/* One stream per worker, as for noise: adding a worker
			 * changes no other worker's draw. */
			gsl_rng *rng = lbs_rng_stream(req->seed, "trace", req->owner, (uint64_t)k, err);
			if (!rng) {
				free(pool);
				return LBS_EINTERNAL;
			}
			pick = pool[gsl_rng_uniform_int(rng, pool_n)];
			gsl_rng_free(rng);
		} else {
			pick = pool[(size_t)k % pool_n];
		}
		if ((st = lbs_source_init(&out[k], set, pick, col, &so, err)) != LBS_OK) {
			free(pool);
			return st;
		}
	}
	free(pool);
	*bad_key = NULL;
	return LBS_OK;
}
