/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "util/units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct unit {
	const char *name;
	lbs_dim dim;
	double scale; /* to base units */
} unit;

static const unit units[] = {
	{ "ns", LBS_DIM_TIME, 1e-9 }, { "us", LBS_DIM_TIME, 1e-6 }, { "\xc2\xb5s", LBS_DIM_TIME, 1e-6 },
	{ "ms", LBS_DIM_TIME, 1e-3 }, { "s", LBS_DIM_TIME, 1 }, { "min", LBS_DIM_TIME, 60 },
	{ "h", LBS_DIM_TIME, 3600 },
	{ "B", LBS_DIM_BYTES, 1 }, { "kB", LBS_DIM_BYTES, 1e3 }, { "KB", LBS_DIM_BYTES, 1e3 },
	{ "MB", LBS_DIM_BYTES, 1e6 }, { "GB", LBS_DIM_BYTES, 1e9 }, { "TB", LBS_DIM_BYTES, 1e12 },
	{ "KiB", LBS_DIM_BYTES, 1024.0 }, { "MiB", LBS_DIM_BYTES, 1048576.0 },
	{ "GiB", LBS_DIM_BYTES, 1073741824.0 }, { "TiB", LBS_DIM_BYTES, 1099511627776.0 },
	{ "B/s", LBS_DIM_BANDWIDTH, 1 }, { "kB/s", LBS_DIM_BANDWIDTH, 1e3 },
	{ "KB/s", LBS_DIM_BANDWIDTH, 1e3 }, { "MB/s", LBS_DIM_BANDWIDTH, 1e6 },
	{ "GB/s", LBS_DIM_BANDWIDTH, 1e9 }, { "TB/s", LBS_DIM_BANDWIDTH, 1e12 }, { "KiB/s", LBS_DIM_BANDWIDTH, 1024.0 },
	{ "MiB/s", LBS_DIM_BANDWIDTH, 1048576.0 }, { "GiB/s", LBS_DIM_BANDWIDTH, 1073741824.0 },
	{ "bit/s", LBS_DIM_BANDWIDTH, 0.125 }, { "kbit/s", LBS_DIM_BANDWIDTH, 125.0 },
	{ "Mbit/s", LBS_DIM_BANDWIDTH, 125e3 }, { "Gbit/s", LBS_DIM_BANDWIDTH, 125e6 },
	{ "Tbit/s", LBS_DIM_BANDWIDTH, 125e9 }, { "bps", LBS_DIM_BANDWIDTH, 0.125 },
	{ "kbps", LBS_DIM_BANDWIDTH, 125.0 }, { "Mbps", LBS_DIM_BANDWIDTH, 125e3 },
	{ "Gbps", LBS_DIM_BANDWIDTH, 125e6 },
};

const char *lbs_dim_name(lbs_dim dim)
{
	switch (dim) {
	case LBS_DIM_TIME: return "a time";
	case LBS_DIM_BYTES: return "a size in bytes";
	case LBS_DIM_BANDWIDTH: return "a bandwidth";
	default: return "a number";
	}
}

const char *lbs_dim_example(lbs_dim dim)
{
	switch (dim) {
	case LBS_DIM_TIME: return "'5 us', '1.5 ms' or '2 s'";
	case LBS_DIM_BYTES: return "'100 MB', '64 KiB' or '512 B'";
	case LBS_DIM_BANDWIDTH: return "'10 Gbit/s', '1.25 GB/s' or '800 MB/s'";
	default: return "'0.5' or '50%'";
	}
}

static const char *skip_space(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* strtod without its surprises: no hex, no "inf"/"nan", no empty string. */
static bool parse_real(const char *text, double *out, const char **end, char *why, size_t whylen)
{
	const char *s = skip_space(text);
	const char *p = s;
	if (*p == '+' || *p == '-')
		p++;
	if (!(*p >= '0' && *p <= '9') && !(*p == '.' && p[1] >= '0' && p[1] <= '9')) {
		snprintf(why, whylen, "'%s' is not a number", text);
		return false;
	}
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		snprintf(why, whylen, "'%s': hexadecimal numbers are not accepted", text);
		return false;
	}
	errno = 0;
	char *e;
	double v = strtod(s, &e);
	if (errno == ERANGE || !isfinite(v)) {
		snprintf(why, whylen, "'%s' is out of the range of a double", text);
		return false;
	}
	*out = v;
	*end = e;
	return true;
}

bool lbs_parse_real(const char *text, double *out, char *why, size_t whylen)
{
	double v;
	const char *e;
	if (!parse_real(text, &v, &e, why, whylen))
		return false;
	if (*skip_space(e) != '\0') {
		snprintf(why, whylen, "'%s' is not a number", text);
		return false;
	}
	*out = v;
	return true;
}

bool lbs_parse_quantity(const char *text, lbs_dim dim, double *out, char *why, size_t whylen)
{
	double v;
	const char *e;
	if (!parse_real(text, &v, &e, why, whylen))
		return false;
	const char *u = skip_space(e);
	size_t ulen = strlen(u);
	while (ulen && (u[ulen - 1] == ' ' || u[ulen - 1] == '\t'))
		ulen--;
	if (dim == LBS_DIM_NONE) {
		if (ulen == 1 && u[0] == '%') {
			*out = v / 100.0;
			return true;
		}
		if (ulen == 0) {
			*out = v;
			return true;
		}
		snprintf(why, whylen, "'%s': expected a plain number such as %s", text, lbs_dim_example(dim));
		return false;
	}
	if (ulen == 0) {
		snprintf(why, whylen, "'%s' has no unit: expected %s such as %s", text, lbs_dim_name(dim),
			 lbs_dim_example(dim));
		return false;
	}
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		if (strlen(units[i].name) != ulen || strncmp(units[i].name, u, ulen) != 0)
			continue;
		if (units[i].dim != dim) {
			snprintf(why, whylen, "'%s' is %s, but %s is expected, such as %s", text,
				 lbs_dim_name(units[i].dim), lbs_dim_name(dim), lbs_dim_example(dim));
			return false;
		}
		*out = v * units[i].scale;
		if (!isfinite(*out)) {
			snprintf(why, whylen, "'%s' is out of range", text);
			return false;
		}
		return true;
	}
	snprintf(why, whylen, "'%s': unknown unit '%.*s' (expected %s such as %s)", text, (int)ulen, u,
		 lbs_dim_name(dim), lbs_dim_example(dim));
	return false;
}

bool lbs_parse_int(const char *text, int64_t *out, char *why, size_t whylen)
{
	double v;
	const char *e;
	if (!parse_real(text, &v, &e, why, whylen))
		return false;
	if (*skip_space(e) != '\0') {
		snprintf(why, whylen, "'%s' is not an integer", text);
		return false;
	}
	if (v != floor(v)) {
		snprintf(why, whylen, "'%s' is not an integer", text);
		return false;
	}
	if (fabs(v) > 9007199254740992.0) { /* 2^53: beyond it doubles skip integers */
		snprintf(why, whylen, "'%s' is too large", text);
		return false;
	}
	*out = (int64_t)v;
	return true;
}

void lbs_format_quantity(double v, lbs_dim dim, char *buf, size_t len)
{
	typedef struct { double scale; const char *name; } row_t;
	static const row_t t[] = {
		{ 3600, "h" }, { 60, "min" }, { 1, "s" }, { 1e-3, "ms" }, { 1e-6, "us" }, { 1e-9, "ns" } };
	static const row_t b[] = { { 1e12, "TB" }, { 1e9, "GB" }, { 1e6, "MB" }, { 1e3, "kB" }, { 1, "B" } };
	static const row_t bw[] = { { 1e12, "TB/s" }, { 1e9, "GB/s" }, { 1e6, "MB/s" }, { 1e3, "kB/s" }, { 1, "B/s" } };
	const void *tab = NULL;
	size_t n = 0;
	switch (dim) {
	case LBS_DIM_TIME: tab = t; n = sizeof t / sizeof t[0]; break;
	case LBS_DIM_BYTES: tab = b; n = sizeof b / sizeof b[0]; break;
	case LBS_DIM_BANDWIDTH: tab = bw; n = sizeof bw / sizeof bw[0]; break;
	default: snprintf(buf, len, "%.6g", v); return;
	}
	const row_t *row = tab;
	for (size_t i = 0; i < n; i++)
		if (fabs(v) >= row[i].scale || i + 1 == n || (v == 0 && row[i].scale == 1)) {
			snprintf(buf, len, "%.6g %s", v / row[i].scale, row[i].name);
			return;
		}
}
