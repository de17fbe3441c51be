/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Per-operation traces of hybrid-parallel (data x pipeline x tensor)
 * training, in the layout of ByteDance's what-if straggler analysis
 * (Lin et al., OSDI'25; doc/whatif.md): one CSV row per GPU operation,
 *
 *   dp_rank,stage,rank,step,optype,start_ts,duration,seq_id,mc,mb_id,gmc
 *
 * plain or gzip-compressed, and the job's metadata (meta-X.yaml: one
 * "key: value" a line). Every row is checked once, while it is read, with
 * errors naming the file, the line and the column; the rows are kept in
 * flat arrays, one per column, in file order. */
#ifndef LBS_READ_OPS_H
#define LBS_READ_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* The operation types (Megatron-LM's timer names). */
typedef enum lbs_optype {
	LBS_OP_FORWARD_COMPUTE,
	LBS_OP_BACKWARD_COMPUTE,
	LBS_OP_FORWARD_SEND,
	LBS_OP_FORWARD_RECV,
	LBS_OP_BACKWARD_SEND,
	LBS_OP_BACKWARD_RECV,
	LBS_OP_PARAMS_ALL_GATHER,
	LBS_OP_GRADS_REDUCE_SCATTER,
	LBS_OP_SEPARATE_GRADS_ALL_REDUCE,
	LBS_OP_LAYERNORM_GRADS_ALL_REDUCE,
	LBS_OP_EMBEDDING_GRADS_ALL_REDUCE,
	LBS_OP_OPTIMIZER_CLIP_MAIN_GRAD,
	LBS_OP_OPTIMIZER,
	LBS_OP_GC,
	LBS_OP_N
} lbs_optype;

/* "forward-compute", ...; NULL past the end. */
const char *lbs_optype_name(lbs_optype t);
/* The type named `name`, or LBS_OP_N. */
lbs_optype lbs_optype_parse(const char *name);

/* The largest dp_rank, stage, mc and gmc a row may have (the reader's
 * bounds; the model's arrays are sized from what the file holds). */
#define LBS_OPS_MAX_DP 65535
#define LBS_OPS_MAX_STAGE 4095
#define LBS_OPS_MAX_CHUNK 4095

/* What a trace may hold (doc/whatif.md, "Limits"), checked while it is
 * read, before anything is built from it: decompressed, at most
 * LBS_OPS_MAX_RATIO times its compressed size (at least 1 MiB) and
 * LBS_OPS_MAX_BYTES (CSV) or LBS_OPS_JSON_MAX_BYTES (Chrome JSON, which
 * jansson holds whole as a tree) in all; the rows also count against
 * --max-trace-rows. */
#define LBS_OPS_MAX_RATIO 100.0
#define LBS_OPS_MAX_BYTES (4ull << 30)
#define LBS_OPS_JSON_MAX_BYTES (256ull << 20)

typedef struct lbs_ops_trace {
	char path[1024];
	size_t n;            /* rows */
	int32_t *dp_rank, *stage, *rank, *seq_id, *mc, *mb_id, *gmc;
	int64_t *step;
	uint8_t *optype;     /* lbs_optype */
	float *start, *duration; /* seconds, as float32 (the values are float32 numbers) */
	int64_t *line;       /* the line each row was read from (events: its index in traceEvents) */
	bool events;         /* read from a Chrome trace-event file */
} lbs_ops_trace;

/* Where row i came from, for messages: "path:LINE" or, for a Chrome trace,
 * "path: traceEvents[N]". */
const char *lbs_ops_where(const lbs_ops_trace *t, size_t i, char *buf, size_t len);

/* Sets err to LBS_EINPUT with "WHERE: field: message" (field may be NULL)
 * for row i and returns it. */
lbs_status lbs_ops_error(const lbs_ops_trace *t, size_t i, lbs_error *err, const char *field,
			 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Reads a trace (plain or .gz). Bad input: LBS_EINPUT with
 * "path:line: column: what is wrong"; nothing is kept. */
lbs_status lbs_ops_read(const char *path, lbs_ops_trace *out, lbs_error *err);

/* Reads a Chrome trace-event file (JSON, plain or .gz; traces/read_chrome.c):
 * the complete events ("ph": "X") named by an op type, with dp_rank, stage
 * and step in their args (doc/whatif.md). Bad input: LBS_EINPUT naming the
 * file and the line and column (JSON syntax) or the event. */
lbs_status lbs_ops_read_chrome(const char *path, lbs_ops_trace *out, lbs_error *err);

/* lbs_ops_read_chrome for a name ending in .json or .json.gz, else lbs_ops_read. */
lbs_status lbs_ops_read_any(const char *path, lbs_ops_trace *out, lbs_error *err);
void lbs_ops_free(lbs_ops_trace *t);

/* Makes room for cap ops in every column of t (the readers' growth);
 * false when out of memory (t keeps what it had). */
bool lbs_ops_reserve(lbs_ops_trace *t, size_t cap);

typedef struct lbs_ops_meta {
	char path[1024];
	char trial_name[128];
	int64_t run_id;
	int64_t dp_size, dsp_size, pp_size, tp_size, vpp_size, world_size;
} lbs_ops_meta;

/* Reads the metadata: the keys trial_name, run_id, dp_size, dsp_size,
 * pp_size, tp_size, vpp_size, world_size, each once; sizes >= 1 and
 * world_size = dp_size * dsp_size * pp_size * tp_size. Unknown keys,
 * repeated keys and missing ones are errors naming the line (or the file). */
lbs_status lbs_ops_meta_read(const char *path, lbs_ops_meta *out, lbs_error *err);

/* Whether path is an SQLite database (its first 16 bytes). */
bool lbs_ops_is_sqlite(const char *path);

/* The operations of hybrid run *id (0: the last, set to it) of a results
 * database (its hybrid_timeline, traces/read_ops_db.c), as the rows of its
 * --ops-trace file, and its metadata from hybrid_runs. LBS_EINPUT if the
 * file holds no such run or the run no operations, LBS_EUSAGE for an id
 * that is not there. */
lbs_status lbs_ops_read_hybrid(const char *path, long long *id, lbs_ops_trace *out, lbs_ops_meta *meta,
			       lbs_error *err);

/* Checks the trace against the metadata: every dp_rank < dp_size, stage <
 * pp_size, mc < vpp_size and gmc < pp_size * vpp_size; the first row out of
 * bounds is named. */
lbs_status lbs_ops_check_meta(const lbs_ops_trace *t, const lbs_ops_meta *m, lbs_error *err);

#endif
