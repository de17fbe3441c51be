/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The line discipline every INI file of lbsim is read under (scenarios,
 * sweep files, cost profiles), as the reader inih's ini_parse_stream calls:
 * one line at a time, so line numbers are known; it refuses what inih would
 * silently misread (lines longer than its buffer, which it splits; NUL
 * bytes; invalid UTF-8; a second byte-order mark), skips a byte-order mark,
 * strips what inih takes for whitespace (space, tab, CR, LF, VT, FF; at the
 * start inih would take it for the continuation of a value), checks that a section
 * header is alone on its line, and hands each header's name to the caller. */
#ifndef LBS_INI_H
#define LBS_INI_H

#include <stdbool.h>
#include <stdio.h>

#include "util/error.h"
#include "util/keys.h"

typedef struct lbs_ini_reader {
	const char *path;
	FILE *f;
	char *buf;
	size_t bufcap;
	int line;         /* of the line read last */
	int max_chars;    /* the longest line accepted (at most INI_MAX_LINE - 2) */
	const char *long_line_hint; /* added to the message for a long line, or NULL */
	/* Called with each section header's name; returns false (after
	 * lbs_ini_fail) to stop reading. */
	bool (*on_section)(struct lbs_ini_reader *r, const char *name);
	lbs_error *err;
	bool failed;
} lbs_ini_reader;

/* Reads the file at path under this discipline, calling on_key(user,
 * section, key, value) as ini_parse_stream does, and closes it. A directory,
 * a missing file, a line inih cannot read or an error of on_key (recorded
 * with lbs_ini_fail) is an LBS_EINPUT error naming `what` ("scenario") or
 * the line. Set max_chars, on_section and long_line_hint beforehand. */
lbs_status lbs_ini_parse(lbs_ini_reader *r, const char *path, const char *what,
			 int (*on_key)(void *user, const char *section, const char *key, const char *value),
			 void *user, lbs_error *err);

/* Records "path:line: message" as the first error (later ones are dropped)
 * and returns false. */
bool lbs_ini_fail(lbs_ini_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends `section`.`key` = `value`, read at the reader's current line, to
 * the growing array *kv (*n entries used, *cap allocated). Refuses a key
 * name or value too long for lbs_kv, an empty value and a key the array
 * already holds in that section (naming the line of the first). Returns 1,
 * or 0 after lbs_ini_fail, as an inih handler does. */
int lbs_ini_add_kv(lbs_ini_reader *r, lbs_kv **kv, size_t *n, size_t *cap, const char *section,
		   const char *key, const char *value);

/* The ini_reader for ini_parse_stream; stream is the lbs_ini_reader. */
char *lbs_ini_read_line(char *str, int num, void *stream);

/* Whether s[0..n) is well-formed UTF-8: no overlong forms, surrogates or
 * code points above U+10FFFF. */
bool lbs_utf8_valid(const unsigned char *s, size_t n);

#endif
