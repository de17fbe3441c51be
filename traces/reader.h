/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Trace readers: one per file format, each a row of the registry below
 * (adding a format = one file plus one line there and in
 * LBS_TRACE_FORMAT_CHOICES), all producing the same validated series set
 * (traces/series.h) or an error naming the file, the line and the field.
 * The formats, their columns and rules are documented in doc/traces.md. */
#ifndef LBS_READER_H
#define LBS_READER_H

#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"
#include "traces/series.h"

/* What a scenario may tell a reader beyond the path. */
typedef struct lbs_read_opts {
	/* cloudwatch: the metric the values are (e.g. CPUUtilization); NULL or
	 * "": taken from the header when it names one. */
	const char *metric;
	/* Keep only the rows of these ids (machine, worker, VM); n_ids == 0:
	 * every id. Only for formats with ids. */
	const char *const *ids;
	size_t n_ids;
} lbs_read_opts;

typedef struct lbs_trace_reader {
	const char *name;    /* the value of the scenario key trace_format */
	const char *summary; /* one line, for the docs */
	lbs_status (*read)(const char *path, const lbs_read_opts *opts, lbs_series_set **out,
			   lbs_error *err);
} lbs_trace_reader;

extern const lbs_trace_reader lbs_reader_lbsim;
extern const lbs_trace_reader lbs_reader_pai;
extern const lbs_trace_reader lbs_reader_azure;
extern const lbs_trace_reader lbs_reader_cloudwatch;
extern const lbs_trace_reader lbs_reader_uta_bw;
extern const lbs_trace_reader lbs_reader_alibaba_v2018;
extern const lbs_trace_reader lbs_reader_philly_cpu;
extern const lbs_trace_reader lbs_reader_philly_mem;
extern const lbs_trace_reader lbs_reader_philly_gpu;

/* The registry, NULL-terminated, in the order of the choices below after
 * "none" (a unit test checks they agree). */
extern const lbs_trace_reader *const lbs_trace_readers[];
#define LBS_TRACE_FORMAT_CHOICES \
	"none|lbsim|pai|azure|cloudwatch|uta-bw|alibaba-v2018|philly-cpu|philly-mem|philly-gpu"

const lbs_trace_reader *lbs_trace_reader_find(const char *name);

/* Finishes a reader's builder: b is what lbs_series_builder_create
 * returned (NULL: its error, already in err, is returned); the ids in opts,
 * if any, are applied to it (lbs_series_builder_only), so the rows of other
 * ids are skipped as they are read. For keyed formats only. */
lbs_status lbs_reader_keep_ids(lbs_series_builder *b, const lbs_read_opts *opts, lbs_error *err);

/* What a column's values may be, by its name, for formats whose columns
 * users name (lbsim's own): `availability`, `bandwidth` and names ending in
 * `_time` must be > 0; names ending in `_util` in [0, 1]; others finite.
 * Returns NULL when v is fine, or why not. */
const char *lbs_trace_check_value(const char *column, double v);

/* cloudwatch: whether the reader knows metric `name` (the scenario key
 * trace_metric), and the list of those it knows, "A, B, ...". */
bool lbs_cloudwatch_metric_known(const char *name);
void lbs_cloudwatch_metrics(char *buf, size_t len);

#endif
