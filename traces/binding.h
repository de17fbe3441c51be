/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Binding traces to workers: what a scenario's `trace*` keys say (the
 * schema is in sim/scenario.c, the reference in doc/scenario-keys.md, the
 * guide in doc/traces.md), and the trace table a run loads its traces
 * into, so that every file is read and validated once, before anything
 * runs, and shared by every worker that replays it. */
#ifndef LBS_BINDING_H
#define LBS_BINDING_H

#include <stdint.h>

#include "util/error.h"
#include "util/keys.h"
#include "traces/reader.h"
#include "traces/source.h"

typedef enum lbs_trace_assign { LBS_ASSIGN_IN_ORDER, LBS_ASSIGN_DRAW } lbs_trace_assign;
#define LBS_TRACE_ASSIGN_CHOICES "in_order|draw"

/* The trace keys of one [workers.NAME] section, as validated by the
 * scenario. Unset strings are empty; an unset reference is 0. */
typedef struct lbs_trace_spec {
	int format;                  /* index in LBS_TRACE_FORMAT_CHOICES; 0: none */
	char file[LBS_VALUE_MAX];    /* relative to the scenario file's directory */
	char column[LBS_VALUE_MAX];
	char metric[LBS_VALUE_MAX];
	char ids[LBS_VALUE_MAX];     /* comma-separated (CSV) */
	int assign;                  /* lbs_trace_assign */
	int map;                     /* lbs_map_kind */
	double reference;
	double k, floor;
	int interp;                  /* lbs_interp */
	int end;                     /* lbs_trace_end */
	double offset_s;
	int64_t offset_iterations;
	double speed;
} lbs_trace_spec;

typedef struct lbs_trace_table lbs_trace_table;

lbs_trace_table *lbs_trace_table_create(lbs_error *err);
void lbs_trace_table_destroy(lbs_trace_table *t);

/* Distinct sets the table holds (for tests: one copy per file). */
size_t lbs_trace_table_size(const lbs_trace_table *t);

/* What one group asks of its trace. */
typedef struct lbs_trace_request {
	const lbs_trace_spec *spec;
	const char *base_dir; /* where relative paths start: the scenario's directory */
	const char *owner;    /* the group's name: identity of its random streams */
	uint64_t seed;        /* the run's seed */
	double gain;          /* multiplies the availability (the group's `availability`) */
	double loss;          /* then lost to time-sharing (lbs_avail_timeshare; 0: none) */
	double nominal;       /* a rate's default reference when > 0 (else the column's median) */
} lbs_trace_request;

/* Loads (or finds in the table) the trace of `req` and sets up out[0..count)
 * for the group's workers: the column, its mapping (`auto` resolved from the
 * column's name), the ids (given, or all) and which worker replays which
 * (in order, or drawn from stream ("trace", owner, worker index) of the
 * seed). On error, *bad_key names the scenario key at fault, for the
 * caller's file:line prefix. */
lbs_status lbs_trace_bind(lbs_trace_table *t, const lbs_trace_request *req, int64_t count,
			  lbs_source *out, const char **bad_key, lbs_error *err);

/* The mapping `auto` gives a column: direct for availability, util for
 * *_util, time for *_time, rate for throughput, bandwidth, network_in and
 * network_out; LBS_MAP_AUTO when the name says nothing. */
lbs_map_kind lbs_trace_auto_map(const char *column);

#endif
