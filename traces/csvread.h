/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What every trace reader shares: a file read through libcsv (csv_parse
 * with callbacks, never hand-split lines) handed over one row at a time
 * with the line it starts on; strict number and timestamp parsing; and the
 * "file:line: field: what is wrong" message every trace error has. */
#ifndef LBS_CSVREAD_H
#define LBS_CSVREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* One record: its fields (NUL-terminated; spaces around unquoted fields
 * trimmed by libcsv) and the line it starts on (from 1). */
typedef struct lbs_csv_row {
	size_t n;
	const char *const *field;
	int64_t line;
} lbs_csv_row;

typedef lbs_status (*lbs_csv_row_fn)(void *ctx, const lbs_csv_row *row, lbs_error *err);
/* A comment line: its text without the line end. */
typedef lbs_status (*lbs_csv_comment_fn)(void *ctx, const char *text, int64_t line, lbs_error *err);

/* The longest line, and the longest record (a quoted field may span lines),
 * a trace file may have: 1 MiB. Longer ones are refused with the line, so
 * that a file without line ends is not read whole into memory. */
#define LBS_CSV_MAX_LINE 1048576

/* What a file may give, decompressed: at most max_ratio times its size on
 * disk when it is gzip-compressed (with 1 MiB allowed whatever its size),
 * and at most max_bytes in all (0: no bound). A small file cannot make a
 * reader hold gigabytes (a decompression bomb). */
typedef struct lbs_input_limit {
	uint64_t max_bytes;
	double max_ratio;
} lbs_input_limit;

#define LBS_INPUT_MIN_BUDGET (1u << 20)

/* The bytes path (open as f) may give under lim; *compressed says whether
 * it is gzip-compressed. lim NULL: no bound (UINT64_MAX). */
uint64_t lbs_input_budget(const char *path, void *gzfile, const lbs_input_limit *lim, bool *compressed);

/* The error for a file past its budget. */
lbs_status lbs_input_too_large(const char *path, uint64_t budget, bool compressed, const lbs_input_limit *lim,
			       lbs_error *err);

/* lbs_csv_read within a limit (NULL: none). */
lbs_status lbs_csv_read_limited(const char *path, lbs_csv_row_fn row, lbs_csv_comment_fn comment, void *ctx,
				const lbs_input_limit *lim, lbs_error *err);

/* Reads `path` and calls row() for every record, in order; blank lines are
 * skipped. With comment != NULL, a line whose first character is '#',
 * outside a record, goes to comment() instead. A UTF-8 byte-order mark is
 * skipped; a NUL byte, an unreadable file or malformed quoting is an error
 * naming the file and line. Stops at the first error a callback returns. */
lbs_status lbs_csv_read(const char *path, lbs_csv_row_fn row, lbs_csv_comment_fn comment, void *ctx,
			lbs_error *err);

/* Splits `text`, one CSV record (a scenario value such as `a, "b,c"`),
 * into its fields with libcsv: *fields is one malloc'd block holding the
 * pointers and the strings (free it once); *n is 0 for empty text.
 * Returns LBS_EINPUT on malformed quoting. */
lbs_status lbs_csv_split(const char *text, char ***fields, size_t *n, lbs_error *err);

/* Sets err to LBS_EINPUT with "path:line: field: <message>" and returns it. */
lbs_status lbs_trace_error(lbs_error *err, const char *path, int64_t line, const char *field,
			   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* The header row's index of each of need[0..n) into *pos[k]; a missing one
 * is an error naming it and `expected` (the form the header should have). */
lbs_status lbs_csv_columns(const lbs_csv_row *header, const char *const *need, long *const *pos,
			   size_t n, const char *path, const char *expected, lbs_error *err);

/* The header's fields from `from` on must differ: "column 'X' appears
 * twice" names the first that repeats an earlier one. O(n log n), so a
 * header of a million columns is checked in a moment. */
lbs_status lbs_csv_check_unique(const lbs_csv_row *header, size_t from, const char *path, lbs_error *err);

/* A row must have as many fields as the header (at header_line) had. */
lbs_status lbs_csv_check_width(const lbs_csv_row *row, size_t n_fields, int64_t header_line,
			       const char *path, lbs_error *err);

/* Parses a decimal number (optional sign, digits, point, exponent): no
 * hexadecimal, no nan or inf, no trailing text, and the value must be
 * finite. Returns NULL, or why the text is refused. */
const char *lbs_csv_real(const char *s, double *out);

/* Parses a decimal integer in [min, max]. Returns NULL or why not. */
const char *lbs_csv_int(const char *s, int64_t min, int64_t max, int64_t *out);

/* Parses a timestamp "YYYY-MM-DD HH:MM:SS" ('T' also separates date and
 * time), with optional fractional seconds and an optional zone: 'Z', an
 * offset "+HH:MM" / "-HH:MM" / "+HHMM", or one of UTC, GMT, PST (UTC-8),
 * PDT (UTC-7) after a space. No zone means UTC. Gives seconds since
 * 1970-01-01 00:00:00 UTC. Returns NULL or why the text is refused. */
const char *lbs_csv_timestamp(const char *s, double *out);

#endif
