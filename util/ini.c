/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "util/ini.h"

#include <errno.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

lbs_status lbs_ini_parse(lbs_ini_reader *r, const char *path, const char *what,
			 int (*on_key)(void *user, const char *section, const char *key, const char *value),
			 void *user, lbs_error *err)
{
	struct stat sb;
	r->path = path;
	r->err = err;
	if (stat(path, &sb) != 0)
		return lbs_error_set(err, LBS_EINPUT, "%s: cannot read %s: %s", path, what, strerror(errno));
	if (S_ISDIR(sb.st_mode))
		return lbs_error_set(err, LBS_EINPUT, "%s: is a directory, not a %s file", path, what);
	if (!(r->f = fopen(path, "r")))
		return lbs_error_set(err, LBS_EINPUT, "%s: cannot read %s: %s", path, what, strerror(errno));
	int bad = ini_parse_stream(lbs_ini_read_line, r, on_key, user);
	lbs_status st = LBS_OK;
	if (r->failed)
		st = LBS_EINPUT;
	else if (ferror(r->f))
		st = lbs_error_set(err, LBS_EINPUT, "%s: read error: %s", path, strerror(errno));
	else if (bad > 0)
		st = lbs_error_set(err, LBS_EINPUT,
				   "%s:%d: expected '[section]', 'key = value' or a ';' comment", path, bad);
	else if (bad < 0)
		st = lbs_error_set(err, LBS_EINTERNAL, "%s: out of memory reading the %s", path, what);
	fclose(r->f);
	free(r->buf);
	r->f = NULL;
	r->buf = NULL;
	return st;
}

bool lbs_ini_fail(lbs_ini_reader *r, const char *fmt, ...)
{
	if (!r->failed) {
		char msg[LBS_ERROR_MAX - 64];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg, sizeof msg, fmt, ap);
		va_end(ap);
		lbs_error_set(r->err, LBS_EINPUT, "%s:%d: %s", r->path, r->line, msg);
		r->failed = true;
	}
	return false;
}

bool lbs_utf8_valid(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned char ch = s[i];
		if (ch < 0x80) {
			i++;
			continue;
		}
		/* The well-formed sequences of Unicode 15, table 3-7: no overlong
		 * forms (C0, C1, E0 80..9F, F0 80..8F), no surrogates (ED A0..BF),
		 * nothing above U+10FFFF (F4 90.., F5..FF). */
		size_t len = ch >= 0xC2 && ch <= 0xDF ? 2 : ch >= 0xE0 && ch <= 0xEF ? 3 : ch >= 0xF0 && ch <= 0xF4 ? 4 : 0;
		if (!len || i + len > n)
			return false;
		unsigned char lo = 0x80, hi = 0xBF, c1 = s[i + 1];
		if (ch == 0xE0)
			lo = 0xA0;
		else if (ch == 0xED)
			hi = 0x9F;
		else if (ch == 0xF0)
			lo = 0x90;
		else if (ch == 0xF4)
			hi = 0x8F;
		if (c1 < lo || c1 > hi)
			return false;
		for (size_t j = 2; j < len; j++)
			if ((s[i + j] & 0xC0) != 0x80)
				return false;
		i += len;
	}
	return true;
}

/* The bytes inih strips around lines, names and values (its isspace, in
 * the C locale lbsim runs in): every test of this reader uses these, so a
 * line inih sees as a section header is one here too. */
static bool ini_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static char *skip_space(char *s)
{
	while (ini_space(*s))
		s++;
	return s;
}

/* The raw bytes a line may have (indentation and line end included); a
 * line that does not end by then is refused without reading further, so a
 * file without line ends is never read whole. */
#define RAW_LINE_MAX 4096

/* The next line into r->buf, as getline would, but at most RAW_LINE_MAX
 * bytes: its length, -1 at the end of the file, -2 out of memory, -3 too
 * long. */
static ssize_t read_line(lbs_ini_reader *r)
{
	if (!r->buf) {
		if (!(r->buf = malloc(RAW_LINE_MAX + 1)))
			return -2;
		r->bufcap = RAW_LINE_MAX + 1;
	}
	size_t n = 0;
	for (int ch; (ch = getc(r->f)) != EOF;) {
		if (n == RAW_LINE_MAX)
			return -3;
		r->buf[n++] = (char)ch;
		if (ch == '\n')
			break;
	}
	r->buf[n] = '\0';
	return n ? (ssize_t)n : -1;
}

char *lbs_ini_read_line(char *str, int num, void *stream)
{
	lbs_ini_reader *r = stream;
	if (r->failed)
		return NULL;
	ssize_t len = read_line(r);
	if (len == -1)
		return NULL;
	r->line++;
	if (len == -2)
		return lbs_ini_fail(r, "out of memory"), NULL;
	if (len == -3)
		return lbs_ini_fail(r, "line longer than %d characters%s", r->max_chars,
				    r->long_line_hint ? r->long_line_hint : ""), NULL;
	if ((size_t)len != strlen(r->buf))
		return lbs_ini_fail(r, "NUL byte in line (is this a text file?)"), NULL;
	if (!lbs_utf8_valid((const unsigned char *)r->buf, (size_t)len))
		return lbs_ini_fail(r, "line is not valid UTF-8 (save the file as UTF-8)"), NULL;
	char *s = r->buf;
	if (r->line == 1 && strncmp(s, "\xEF\xBB\xBF", 3) == 0)
		s += 3; /* a UTF-8 byte-order mark */
	/* inih would skip a second one too, and then see a header this reader
	 * did not: refused. */
	if (r->line == 1 && strncmp(s, "\xEF\xBB\xBF", 3) == 0)
		return lbs_ini_fail(r, "a second byte-order mark (save the file as UTF-8 with at most one)"), NULL;
	s = skip_space(s);
	size_t slen = strlen(s);
	while (slen && ini_space(s[slen - 1]))
		s[--slen] = '\0';
	if (slen > (size_t)r->max_chars || slen + 1 >= (size_t)num)
		return lbs_ini_fail(r, "line longer than %d characters%s", r->max_chars,
				    r->long_line_hint ? r->long_line_hint : ""), NULL;
	if (*s == '[') {
		char *close = strchr(s, ']');
		if (!close)
			return lbs_ini_fail(r, "section header without ']'"), NULL;
		const char *rest = skip_space(close + 1);
		if (*rest && *rest != ';' && *rest != '#')
			return lbs_ini_fail(r, "unexpected text after ']'"), NULL;
		char name[128];
		size_t n = (size_t)(close - s - 1);
		if (n >= sizeof name)
			return lbs_ini_fail(r, "section name too long"), NULL;
		memcpy(name, s + 1, n);
		name[n] = '\0';
		if (r->on_section && !r->on_section(r, name))
			return NULL;
	}
	memcpy(str, s, slen + 1);
	return str;
}

int lbs_ini_add_kv(lbs_ini_reader *r, lbs_kv **kv, size_t *n, size_t *cap, const char *section,
		   const char *key, const char *value)
{
	if (strlen(key) >= LBS_NAME_MAX)
		return lbs_ini_fail(r, "[%s] key name too long", section);
	if (strlen(value) >= LBS_VALUE_MAX)
		return lbs_ini_fail(r, "[%s] %s: value too long", section, key);
	if (!*value)
		return lbs_ini_fail(r, "[%s] %s: missing value", section, key);
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*kv)[i].section, section) && !strcmp((*kv)[i].key, key))
			return lbs_ini_fail(r, "[%s] duplicate key %s (first set at line %d)", section, key,
					    (*kv)[i].at.line);
	if (*n == *cap) {
		size_t ncap = *cap ? 2 * *cap : 32;
		lbs_kv *grown = realloc(*kv, ncap * sizeof *grown);
		if (!grown)
			return lbs_ini_fail(r, "out of memory");
		*kv = grown;
		*cap = ncap;
	}
	lbs_kv *e = &(*kv)[(*n)++];
	snprintf(e->section, sizeof e->section, "%s", section);
	snprintf(e->key, sizeof e->key, "%s", key);
	snprintf(e->value, sizeof e->value, "%s", value);
	e->at = (lbs_origin){ r->path, r->line };
	return 1;
}
