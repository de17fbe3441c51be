/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "util/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

lbs_status lbs_error_set(lbs_error *err, lbs_status status, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
		err->status = status;
	}
	return status;
}

void lbs_error_prefix(lbs_error *err, const char *fmt, ...)
{
	if (!err)
		return;
	char prefix[LBS_ERROR_MAX];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(prefix, sizeof prefix, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	char old[LBS_ERROR_MAX];
	memcpy(old, err->msg, sizeof old);
	lbs_fmt(err->msg, sizeof err->msg, "%s: %s", prefix, old);
}

char *lbs_fmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return buf;
}

void *lbs_calloc(size_t n, size_t size, lbs_error *err)
{
	void *p = (n && size) ? calloc(n, size) : calloc(1, 1);
	if (!p)
		lbs_error_set(err, LBS_EINTERNAL, "out of memory allocating %zu x %zu bytes", n, size);
	return p;
}
