/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "util/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool reserve(lbs_buf *b, size_t extra)
{
	if (b->failed)
		return false;
	if (b->len + extra + 1 <= b->cap)
		return true;
	size_t ncap = b->cap ? b->cap : 64;
	while (ncap < b->len + extra + 1)
		ncap *= 2;
	char *s = realloc(b->s, ncap);
	if (!s) {
		b->failed = true;
		return false;
	}
	b->s = s;
	b->cap = ncap;
	return true;
}

bool lbs_buf_printf(lbs_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !reserve(b, (size_t)n))
		return b->failed = true, false;
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return true;
}

bool lbs_buf_shell_quote(lbs_buf *b, const char *s)
{
	if (!lbs_buf_printf(b, "'"))
		return false;
	for (const char *q; (q = strchr(s, '\'')); s = q + 1)
		if (!lbs_buf_printf(b, "%.*s'\\''", (int)(q - s), s))
			return false;
	return lbs_buf_printf(b, "%s'", s);
}

bool lbs_buf_append_file(lbs_buf *b, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	char chunk[8192];
	size_t n;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		lbs_buf_printf(b, "%.*s", (int)n, chunk);
	bool ok = !ferror(f) && !b->failed;
	fclose(f);
	return ok;
}

const char *lbs_buf_str(const lbs_buf *b)
{
	return b->s ? b->s : "";
}

void lbs_buf_free(lbs_buf *b)
{
	free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
	b->failed = false;
}
