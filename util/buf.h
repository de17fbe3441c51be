/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A growing text buffer, for SQL and command lines built piece by piece. */
#ifndef LBS_BUF_H
#define LBS_BUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct lbs_buf {
	char *s;      /* always terminated once anything was added; NULL before */
	size_t len, cap;
	bool failed;  /* an allocation failed: s holds what fitted before */
} lbs_buf;

/* Appends printf-style text; returns false (and sets failed) when out of memory. */
bool lbs_buf_printf(lbs_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends s quoted for a POSIX shell: 'it'\''s'. */
bool lbs_buf_shell_quote(lbs_buf *b, const char *s);

/* Appends the whole file at path; false when it cannot be read (errno
 * set) or memory runs out (failed set). */
bool lbs_buf_append_file(lbs_buf *b, const char *path);

/* The text so far ("" when empty). */
const char *lbs_buf_str(const lbs_buf *b);

void lbs_buf_free(lbs_buf *b);

#endif
