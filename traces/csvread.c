/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "traces/csvread.h"

#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <stdint.h>
#include <sys/stat.h>
#include <zlib.h>

#define CHUNK 65536

typedef struct reader {
	const char *path;
	lbs_csv_row_fn row;
	void *ctx;
	lbs_error *err;
	lbs_status st;    /* first error of a callback */
	int64_t line;     /* line being fed to the parser */
	int64_t row_line; /* line the current record started on */
	bool in_record;   /* fields seen since the last record ended (the libcsv FAQ's rule for comments) */
	size_t record_bytes; /* of the lines of the current record */
	char *buf;        /* the current record's fields, each NUL-terminated */
	size_t len, cap;
	size_t *off;      /* where each field starts in buf */
	size_t n, cap_off;
	const char **field;
} reader;

static void on_field(void *data, size_t len, void *p)
{
	reader *r = p;
	if (r->st != LBS_OK)
		return;
	if (r->n == r->cap_off) {
		size_t cap = r->cap_off ? 2 * r->cap_off : 16;
		size_t *o = realloc(r->off, cap * sizeof *o);
		const char **f = o ? realloc(r->field, cap * sizeof *f) : NULL;
		if (o)
			r->off = o;
		if (!f) {
			r->st = lbs_error_set(r->err, LBS_EINTERNAL, "out of memory reading %s", r->path);
			return;
		}
		r->field = f;
		r->cap_off = cap;
	}
	if (r->len + len + 1 > r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 256;
		while (cap < r->len + len + 1)
			cap *= 2;
		char *b = realloc(r->buf, cap);
		if (!b) {
			r->st = lbs_error_set(r->err, LBS_EINTERNAL, "out of memory reading %s", r->path);
			return;
		}
		r->buf = b;
		r->cap = cap;
	}
	if (len)
		memcpy(r->buf + r->len, data, len);
	r->buf[r->len + len] = '\0';
	r->off[r->n++] = r->len;
	r->len += len + 1;
}

static void on_record(int c, void *p)
{
	(void)c;
	reader *r = p;
	r->in_record = false;
	if (r->st == LBS_OK) {
		for (size_t i = 0; i < r->n; i++)
			r->field[i] = r->buf + r->off[i];
		lbs_csv_row row = { r->n, r->field, r->row_line };
		r->st = r->row(r->ctx, &row, r->err);
	}
	r->n = 0;
	r->len = 0;
}

lbs_status lbs_trace_error(lbs_error *err, const char *path, int64_t line, const char *field,
			   const char *fmt, ...)
{
	char msg[LBS_ERROR_MAX / 2];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (field)
		return lbs_error_set(err, LBS_EINPUT, "%s:%lld: %s: %s", path, (long long)line, field, msg);
	return lbs_error_set(err, LBS_EINPUT, "%s:%lld: %s", path, (long long)line, msg);
}

lbs_status lbs_csv_columns(const lbs_csv_row *header, const char *const *need, long *const *pos,
			   size_t n, const char *path, const char *expected, lbs_error *err)
{
	for (size_t k = 0; k < n; k++) {
		*pos[k] = -1;
		for (size_t i = 0; i < header->n; i++)
			if (strcmp(header->field[i], need[k]) == 0)
				*pos[k] = (long)i;
		if (*pos[k] < 0)
			return lbs_trace_error(err, path, header->line, "header",
					       "missing column '%s' (expected %s)", need[k], expected);
	}
	return LBS_OK;
}

lbs_status lbs_csv_check_width(const lbs_csv_row *row, size_t n_fields, int64_t header_line,
			       const char *path, lbs_error *err)
{
	if (row->n == n_fields)
		return LBS_OK;
	return lbs_trace_error(err, path, row->line, NULL, "%zu fields, but the header (line %lld) has %zu",
			       row->n, (long long)header_line, n_fields);
}

/* Feeds one line (with its line end) to the parser, or to comment(). */
static lbs_status feed_line(reader *r, struct csv_parser *p, const char *s, size_t len,
			    lbs_csv_comment_fn comment)
{
	if (memchr(s, '\0', len))
		return lbs_trace_error(r->err, r->path, r->line, NULL, "NUL byte in line (is this a text file?)");
	size_t content = len;
	while (content && (s[content - 1] == '\n' || s[content - 1] == '\r'))
		content--;
	if (!r->in_record) {
		size_t blank = 0;
		while (blank < content && (s[blank] == ' ' || s[blank] == '\t'))
			blank++;
		if (blank == content)
			return LBS_OK; /* a blank line between records (libcsv would skip it too) */
		if (comment && s[0] == '#') {
			char *text = malloc(content + 1);
			if (!text)
				return lbs_error_set(r->err, LBS_EINTERNAL, "out of memory");
			memcpy(text, s, content);
			text[content] = '\0';
			lbs_status st = comment(r->ctx, text, r->line, r->err);
			free(text);
			return st;
		}
		r->in_record = true;
		r->row_line = r->line;
		r->record_bytes = 0;
	}
	r->record_bytes += len;
	if (r->record_bytes > LBS_CSV_MAX_LINE)
		return lbs_trace_error(r->err, r->path, r->row_line, NULL, "record longer than %d bytes (a "
				       "quoted field left open?)", LBS_CSV_MAX_LINE);
	if (csv_parse(p, s, len, on_field, on_record, r) != len && r->st == LBS_OK)
		return lbs_trace_error(r->err, r->path, r->line, NULL, "malformed CSV (%s)",
				       csv_strerror(csv_error(p)));
	return r->st;
}

uint64_t lbs_input_budget(const char *path, void *gzfile, const lbs_input_limit *lim, bool *compressed)
{
	*compressed = gzfile && !gzdirect((gzFile)gzfile);
	if (!lim)
		return UINT64_MAX;
	uint64_t budget = lim->max_bytes ? lim->max_bytes : UINT64_MAX;
	struct stat sb;
	if (*compressed && lim->max_ratio > 0 && stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) {
		double r = lim->max_ratio * (double)sb.st_size;
		uint64_t by_ratio = r < (double)LBS_INPUT_MIN_BUDGET ? LBS_INPUT_MIN_BUDGET
				    : r >= 1.8e19 ? UINT64_MAX : (uint64_t)r;
		if (by_ratio < budget)
			budget = by_ratio;
	}
	return budget;
}

lbs_status lbs_input_too_large(const char *path, uint64_t budget, bool compressed, const lbs_input_limit *lim,
			       lbs_error *err)
{
	if (compressed && lim && lim->max_ratio > 0 && (!lim->max_bytes || budget < lim->max_bytes))
		return lbs_error_set(err, LBS_EINPUT, "%s: decompresses to more than %llu bytes (the limit of a "
				     "compressed file: %g times its size, at least %u bytes; a decompression "
				     "bomb?)", path, (unsigned long long)budget, lim->max_ratio, LBS_INPUT_MIN_BUDGET);
	return lbs_error_set(err, LBS_EINPUT, "%s: more than %llu bytes%s (the limit of this input)", path,
			     (unsigned long long)budget, compressed ? " decompressed" : "");
}

lbs_status lbs_csv_read(const char *path, lbs_csv_row_fn row, lbs_csv_comment_fn comment, void *ctx,
			lbs_error *err)
{
	return lbs_csv_read_limited(path, row, comment, ctx, NULL, err);
}

lbs_status lbs_csv_read_limited(const char *path, lbs_csv_row_fn row, lbs_csv_comment_fn comment, void *ctx,
				const lbs_input_limit *lim, lbs_error *err)
{
	struct stat sb;
	if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
		return lbs_error_set(err, LBS_EINPUT, "%s: is a directory, not a trace file", path);
	/* zlib reads a gzip file decompressed and any other file as it is. */
	errno = 0;
	gzFile f = gzopen(path, "rb");
	if (!f)
		return lbs_error_set(err, LBS_EINPUT, "%s: cannot read trace: %s", path,
				     errno ? strerror(errno) : "out of memory");
	struct csv_parser p;
	if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0) {
		gzclose(f);
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	}
	reader r = { .path = path, .row = row, .ctx = ctx, .err = err, .line = 1 };
	char *chunk = malloc(CHUNK);
	char *carry = NULL; /* a line that crosses a chunk boundary */
	size_t carry_len = 0, carry_cap = 0;
	lbs_status st = chunk ? LBS_OK : lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	bool first = true, compressed;
	int got = 0;
	uint64_t budget = lbs_input_budget(path, f, lim, &compressed), total = 0;
	/* One line at a time, so every callback knows the line it is on. */
	while (st == LBS_OK && (got = gzread(f, chunk, CHUNK)) > 0) {
		if ((total += (uint64_t)got) > budget) {
			st = lbs_input_too_large(path, budget, compressed, lim, err);
			break;
		}
		const char *s = chunk, *end = chunk + got;
		if (first && got >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0)
			s += 3;
		first = false;
		while (st == LBS_OK && s < end) {
			const char *nl = memchr(s, '\n', (size_t)(end - s));
			size_t len = nl ? (size_t)(nl - s) + 1 : (size_t)(end - s);
			if (carry_len || !nl) {
				if (carry_len + len > LBS_CSV_MAX_LINE) {
					st = lbs_trace_error(err, path, r.line, NULL, "line longer than %d bytes "
							     "(is this a text file with line ends?)", LBS_CSV_MAX_LINE);
					break;
				}
				if (carry_len + len > carry_cap) {
					size_t cap = carry_cap ? 2 * carry_cap : 4096;
					while (cap < carry_len + len)
						cap *= 2;
					char *c = realloc(carry, cap);
					if (!c) {
						st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
						break;
					}
					carry = c;
					carry_cap = cap;
				}
				memcpy(carry + carry_len, s, len);
				carry_len += len;
				if (nl) {
					st = feed_line(&r, &p, carry, carry_len, comment);
					carry_len = 0;
					r.line++;
				}
			} else {
				st = feed_line(&r, &p, s, len, comment);
				r.line++;
			}
			s += len;
		}
	}
	int zerr = Z_OK;
	const char *zwhy = gzerror(f, &zerr);
	if (st == LBS_OK && (got < 0 || zerr != Z_OK)) /* Z_BUF_ERROR: a gzip file cut short */
		st = lbs_error_set(err, LBS_EINPUT, "%s: read error: %s", path,
				   zerr == Z_ERRNO ? strerror(errno) : zerr == Z_BUF_ERROR ?
				   "the compressed file ends early (truncated?)" : zwhy);
	if (st == LBS_OK && carry_len) /* a last line without its line end */
		st = feed_line(&r, &p, carry, carry_len, comment);
	if (st == LBS_OK) {
		/* An unterminated quote: name the line its record starts on. */
		if (csv_fini(&p, on_field, on_record, &r) != 0 && r.st == LBS_OK)
			st = lbs_trace_error(err, path, r.row_line, NULL, "malformed CSV (%s at the end of "
					     "the file)", csv_strerror(csv_error(&p)));
		else
			st = r.st;
	}
	csv_free(&p);
	gzclose(f);
	free(chunk);
	free(carry);
	free(r.buf);
	free(r.off);
	free(r.field);
	return st;
}

typedef struct split_ctx {
	char *buf;     /* fields, each NUL-terminated */
	size_t len, cap, n;
	int records;
	bool oom;
} split_ctx;

static void split_field(void *data, size_t len, void *p)
{
	split_ctx *c = p;
	if (c->oom)
		return;
	if (c->len + len + 1 > c->cap) {
		size_t cap = 2 * (c->len + len + 1);
		char *b = realloc(c->buf, cap);
		if (!b) {
			c->oom = true;
			return;
		}
		c->buf = b;
		c->cap = cap;
	}
	if (len)
		memcpy(c->buf + c->len, data, len);
	c->buf[c->len + len] = '\0';
	c->len += len + 1;
	c->n++;
}

static void split_record(int ch, void *p)
{
	(void)ch;
	((split_ctx *)p)->records++;
}

lbs_status lbs_csv_split(const char *text, char ***fields, size_t *n, lbs_error *err)
{
	*fields = NULL;
	*n = 0;
	struct csv_parser p;
	if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	split_ctx c = { 0 };
	size_t len = strlen(text);
	bool bad = csv_parse(&p, text, len, split_field, split_record, &c) != len ||
		   csv_fini(&p, split_field, split_record, &c) != 0;
	csv_free(&p);
	if (c.oom) {
		free(c.buf);
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	}
	if (bad || c.records > 1) {
		free(c.buf);
		return lbs_error_set(err, LBS_EINPUT, "'%s' is not one list of comma-separated values", text);
	}
	char **out = malloc(c.n * sizeof *out + c.len + 1);
	if (!out) {
		free(c.buf);
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	}
	char *strings = (char *)(out + c.n);
	if (c.len)
		memcpy(strings, c.buf, c.len);
	for (size_t i = 0, off = 0; i < c.n; i++) {
		out[i] = strings + off;
		off += strlen(strings + off) + 1;
	}
	free(c.buf);
	*fields = out;
	*n = c.n;
	return LBS_OK;
}

const char *lbs_csv_real(const char *s, double *out)
{
	const char *p = s;
	if (*p == '+' || *p == '-')
		p++;
	/* strtod also takes "nan", "inf" and hexadecimal: refuse them here. */
	if (!((*p >= '0' && *p <= '9') || (*p == '.' && p[1] >= '0' && p[1] <= '9')))
		return *s ? (strncasecmp(p, "nan", 3) == 0 || strncasecmp(p, "inf", 3) == 0
			     ? "is not a finite number" : "is not a number")
			  : "is empty (expected a number)";
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		return "is not a decimal number";
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (*end)
		return "is not a number";
	if (!isfinite(v) || (errno == ERANGE && fabs(v) > 1.0))
		return "is not a finite number";
	*out = v;
	return NULL;
}

const char *lbs_csv_int(const char *s, int64_t min, int64_t max, int64_t *out)
{
	const char *p = s;
	if (*p == '+' || *p == '-')
		p++;
	if (!(*p >= '0' && *p <= '9'))
		return *s ? "is not an integer" : "is empty (expected an integer)";
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (*end)
		return "is not an integer";
	if (errno == ERANGE || v < min || v > max)
		return "is out of range";
	*out = v;
	return NULL;
}

/* Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar (the
 * days_from_civil algorithm of H. Hinnant), so that no time zone setting
 * of the machine running lbsim can change a trace. */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* Reads exactly n digits. */
static bool digits(const char **p, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		char c = (*p)[i];
		if (c < '0' || c > '9')
			return false;
		v = 10 * v + (c - '0');
	}
	*p += n;
	*out = v;
	return true;
}

const char *lbs_csv_timestamp(const char *s, double *out)
{
	static const char *const bad = "is not a timestamp (expected YYYY-MM-DD HH:MM:SS)";
	const char *p = s;
	int y, mo, d, h, mi, se;
	if (!digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) || *p++ != '-' ||
	    !digits(&p, 2, &d) || (*p != ' ' && *p != 'T') || !(++p, digits(&p, 2, &h)) || *p++ != ':' ||
	    !digits(&p, 2, &mi) || *p++ != ':' || !digits(&p, 2, &se))
		return bad;
	static const int mdays[12] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || (mo == 2 && d == 29 && !leap) ||
	    h > 23 || mi > 59 || se > 60)
		return "is not a valid date and time";
	double frac = 0;
	if (*p == '.') {
		double scale = 0.1;
		p++;
		if (*p < '0' || *p > '9')
			return bad;
		for (; *p >= '0' && *p <= '9'; p++, scale /= 10)
			frac += (*p - '0') * scale;
	}
	int zone_s = 0;
	if (*p == 'Z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int sign = *p++ == '-' ? -1 : 1, zh, zm;
		if (!digits(&p, 2, &zh))
			return "has a bad time zone offset (expected +HH:MM)";
		if (*p == ':')
			p++;
		if (!digits(&p, 2, &zm) || zh > 23 || zm > 59)
			return "has a bad time zone offset (expected +HH:MM)";
		zone_s = sign * (zh * 3600 + zm * 60);
	} else if (*p == ' ') {
		static const struct { const char *name; int offset_s; } zones[] = {
			{ "UTC", 0 }, { "GMT", 0 }, { "PST", -8 * 3600 }, { "PDT", -7 * 3600 },
		};
		p++;
		size_t i;
		for (i = 0; i < sizeof zones / sizeof zones[0]; i++)
			if (strcmp(p, zones[i].name) == 0)
				break;
		if (i == sizeof zones / sizeof zones[0])
			return "has an unknown time zone (known: UTC, GMT, PST, PDT, Z, +HH:MM)";
		zone_s = zones[i].offset_s;
		p += 3;
	}
	if (*p)
		return bad;
	/* Local time = UTC + offset, so UTC = local - offset. */
	*out = (double)(days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - zone_s) + frac;
	return NULL;
}

typedef struct named_field {
	const char *s;
	size_t i;
} named_field;

static int by_name_then_index(const void *a, const void *b)
{
	const named_field *x = a, *y = b;
	int c = strcmp(x->s, y->s);
	return c ? c : (x->i > y->i) - (x->i < y->i);
}

lbs_status lbs_csv_check_unique(const lbs_csv_row *header, size_t from, const char *path, lbs_error *err)
{
	if (header->n <= from + 1)
		return LBS_OK;
	size_t n = header->n - from;
	named_field *f = malloc(n * sizeof *f);
	if (!f)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	for (size_t k = 0; k < n; k++)
		f[k] = (named_field){ header->field[from + k], from + k };
	qsort(f, n, sizeof *f, by_name_then_index);
	/* In each run of equal names the second is a repeat; the first repeat
	 * in the file is the least of those. */
	size_t first = SIZE_MAX;
	for (size_t k = 1; k < n; k++)
		if (!strcmp(f[k].s, f[k - 1].s) && (k == 1 || strcmp(f[k - 1].s, f[k - 2].s)) && f[k].i < first)
			first = f[k].i;
	free(f);
	if (first == SIZE_MAX)
		return LBS_OK;
	return lbs_trace_error(err, path, header->line, "header", "column '%s' appears twice",
			       header->field[first]);
}
