/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Sweep files: reading, expanding lists and ranges into points, and checking
 * every point before anything runs. Running them is sweep/exec.c. */
#include "sweep/sweep.h"

#include "util/datapath.h"
#include "util/ini.h"

#include <errno.h>
#include <ini.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "models/policy.h"
#include "sim/run.h"
#include "sim/scenario.h"

/* Longest line accepted: inih's buffer (INI_MAX_LINE = 200 bytes) less the
 * newline and the terminator; it would silently split longer lines. */
#define LINE_MAX_CHARS 198
#define MAX_SEED 9007199254740991LL /* 2^53 - 1, as --seed */

/* ---- reading the file ------------------------------------------------- */

typedef struct entry {
	char section[16];
	char key[LBS_NAME_MAX * 2 + 16];
	char value[LBS_VALUE_MAX];
	int line;
} entry;

typedef struct parse_ctx {
	lbs_ini_reader ini; /* first: on_section gets it back as the context */
	entry *e;
	size_t n, cap;
	struct {
		char name[16];
		int line;
	} sec[3];
	size_t n_sec;
} parse_ctx;

static const char *const section_names[] = { "sweep", "vary", "zip" };
static const lbs_key_spec section_specs[] = { { .name = "sweep" }, { .name = "vary" }, { .name = "zip" } };
static const lbs_key_spec sweep_keys[] = { { .name = "name" }, { .name = "scenario" }, { .name = "detail" } };
static const lbs_key_spec special_keys[] = { { .name = "policy" }, { .name = "seeds" } };

/* Each section header: known, and given once. */
static bool on_section(lbs_ini_reader *r, const char *name)
{
	parse_ctx *c = (parse_ctx *)r;
	size_t known = 0;
	while (known < 3 && strcmp(name, section_names[known]))
		known++;
	if (known == 3) {
		const char *hint = lbs_keys_suggest(section_specs, 3, name);
		return lbs_ini_fail(r, "unknown section [%s]%s%s%s (expected [sweep], [vary] or [zip])", name,
				    hint ? " (did you mean [" : "", hint ? hint : "", hint ? "]?)" : "");
	}
	for (size_t i = 0; i < c->n_sec; i++)
		if (!strcmp(c->sec[i].name, name))
			return lbs_ini_fail(r, "section [%s] appears twice (first at line %d)", name,
					    c->sec[i].line);
	snprintf(c->sec[c->n_sec].name, sizeof c->sec[0].name, "%s", section_names[known]);
	c->sec[c->n_sec++].line = r->line;
	return true;
}

static int on_key(void *user, const char *section, const char *key, const char *value)
{
	parse_ctx *c = user;
	if (c->ini.failed)
		return 0;
	if (!*section)
		return lbs_ini_fail(&c->ini, "'%s' is outside any section (put it under [sweep] or [vary])", key);
	if (strlen(key) >= sizeof c->e[0].key)
		return lbs_ini_fail(&c->ini, "[%s] key name too long", section);
	if (!*value)
		return lbs_ini_fail(&c->ini, "[%s] %s: missing value", section, key);
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->e[i].key, key) && (!strcmp(c->e[i].section, section) ||
						   (strcmp(section, "sweep") && strcmp(c->e[i].section, "sweep"))))
			return lbs_ini_fail(&c->ini, "[%s] %s: given twice (first at line %d, in [%s])", section, key,
				    c->e[i].line, c->e[i].section);
	if (c->n == c->cap) {
		size_t ncap = c->cap ? 2 * c->cap : 16;
		entry *e = realloc(c->e, ncap * sizeof *e);
		if (!e)
			return lbs_ini_fail(&c->ini, "out of memory");
		c->e = e;
		c->cap = ncap;
	}
	entry *e = &c->e[c->n++];
	snprintf(e->section, sizeof e->section, "%s", section);
	snprintf(e->key, sizeof e->key, "%s", key);
	snprintf(e->value, sizeof e->value, "%s", value);
	e->line = c->ini.line;
	return 1;
}

/* ---- lists and ranges ------------------------------------------------- */

/* A decimal number: optional '-', 1 to 15 digits, optionally '.' and 1 to 9
 * digits. Sets *mant to its value times 10^*decimals. */
static bool parse_num(const char *s, const char **end, int64_t *mant, int *decimals)
{
	const char *p = s;
	bool neg = *p == '-';
	if (neg)
		p++;
	int64_t v = 0;
	int digits = 0, d = 0;
	/* The limits are checked digit by digit: accumulating first would
	 * overflow (found by fuzzing). */
	for (; *p >= '0' && *p <= '9'; p++) {
		if (++digits > 15)
			return false;
		v = 10 * v + (*p - '0');
	}
	if (digits == 0)
		return false;
	if (*p == '.' && p[1] >= '0' && p[1] <= '9') {
		for (p++; *p >= '0' && *p <= '9'; p++) {
			if (++d > 9 || digits + d > 17)
				return false;
			v = 10 * v + (*p - '0');
		}
	}
	*mant = neg ? -v : v;
	*decimals = d;
	*end = p;
	return true;
}

static int64_t pow10i(int d)
{
	int64_t v = 1;
	while (d-- > 0)
		v *= 10;
	return v;
}

static void format_scaled(char *buf, size_t len, int64_t v, int d)
{
	if (d == 0) {
		snprintf(buf, len, "%lld", (long long)v);
		return;
	}
	int64_t scale = pow10i(d);
	unsigned long long a = v < 0 ? (unsigned long long)-v : (unsigned long long)v;
	snprintf(buf, len, "%s%llu.%0*llu", v < 0 ? "-" : "", a / (unsigned long long)scale, d,
		 a % (unsigned long long)scale);
}

lbs_status lbs_sweep_expand_item(const char *item, lbs_status (*add)(void *ctx, const char *value),
				 void *ctx, lbs_error *err)
{
	const char *dots = strstr(item, "..");
	int64_t a, b, s = 1;
	int da, db, ds = 0;
	const char *end;
	/* Only NUM.. starts a range: "../traces/a.csv" is a value. */
	if (!dots || !parse_num(item, &end, &a, &da) || end != dots)
		return add(ctx, item);
	static const char expected[] = "expected A..B, A..B +STEP or A..B *FACTOR, with plain numbers";
	const char *p = dots + 2;
	if (!parse_num(p, &end, &b, &db))
		return lbs_error_set(err, LBS_EINPUT, "bad range '%s': %s", item, expected);
	p = end;
	while (*p == ' ' || *p == '\t')
		p++;
	char op = '+';
	if (*p == '+' || *p == '*') {
		op = *p++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!parse_num(p, &end, &s, &ds))
			return lbs_error_set(err, LBS_EINPUT, "bad range '%s': %s", item, expected);
		p = end;
	}
	if (*p)
		return lbs_error_set(err, LBS_EINPUT, "bad range '%s': %s", item, expected);
	int d = da > db ? da : db;
	if (op == '+' && ds > d)
		d = ds;
	if (op == '*' && (d > 0 || ds > 0 || a < 1 || s < 2))
		return lbs_error_set(err, LBS_EINPUT,
				     "bad range '%s': a *FACTOR range needs integers, A >= 1 and FACTOR >= 2",
				     item);
	/* Bring the three to d decimals; refuse what would not fit in 64 bits. */
	int64_t fa = pow10i(d - da), fb = pow10i(d - db), fs = op == '+' ? pow10i(d - ds) : 1;
	if (llabs(a) > INT64_MAX / fa || llabs(b) > INT64_MAX / fb || llabs(s) > INT64_MAX / fs)
		return lbs_error_set(err, LBS_EINPUT, "bad range '%s': too many digits", item);
	a *= fa;
	b *= fb;
	s *= fs;
	if (op == '+' && s <= 0)
		return lbs_error_set(err, LBS_EINPUT, "bad range '%s': the +STEP must be above 0", item);
	if (a > b)
		return lbs_error_set(err, LBS_EINPUT, "bad range '%s': it starts above its end", item);
	if (op == '+' && (b - a) / s >= LBS_SWEEP_MAX_POINTS)
		return lbs_error_set(err, LBS_EINPUT, "range '%s' has more than %d values", item,
				     LBS_SWEEP_MAX_POINTS);
	for (int64_t v = a; v <= b;) {
		char buf[64];
		format_scaled(buf, sizeof buf, v, d);
		lbs_status st = add(ctx, buf);
		if (st != LBS_OK)
			return st;
		if (op == '+')
			v += s;
		else if (v > b / s)
			break;
		else
			v *= s;
	}
	return LBS_OK;
}

typedef struct value_list {
	char **v;
	size_t n, cap;
	const char *dup; /* the value that appeared twice */
} value_list;

/* Appends a value; duplicates are found once the list is complete (a
 * check per value would make a 100,000-value range quadratic). */
static lbs_status add_value(void *ctx, const char *value)
{
	value_list *l = ctx;
	if (l->n >= LBS_SWEEP_MAX_POINTS)
		return LBS_EINPUT;
	if (l->n == l->cap) {
		size_t ncap = l->cap ? 2 * l->cap : 8;
		char **v = realloc(l->v, ncap * sizeof *v);
		if (!v)
			return LBS_EINTERNAL;
		l->v = v;
		l->cap = ncap;
	}
	if (!(l->v[l->n] = strdup(value)))
		return LBS_EINTERNAL;
	l->n++;
	return LBS_OK;
}

static int by_string(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The first value given twice (by sorting a copy of the list), or NULL. */
static const char *first_duplicate(const value_list *l, lbs_error *err, bool *oom)
{
	*oom = false;
	if (l->n < 2)
		return NULL;
	char **sorted = malloc(l->n * sizeof *sorted);
	if (!sorted) {
		*oom = true;
		lbs_error_set(err, LBS_EINTERNAL, "out of memory");
		return NULL;
	}
	memcpy(sorted, l->v, l->n * sizeof *sorted);
	qsort(sorted, l->n, sizeof *sorted, by_string);
	const char *dup = NULL;
	for (size_t i = 1; i < l->n && !dup; i++)
		if (!strcmp(sorted[i - 1], sorted[i]))
			dup = sorted[i];
	free(sorted);
	return dup;
}

/* Splits a value at commas and expands each item. */
static lbs_status expand_list(const char *text, value_list *l, lbs_error *err)
{
	char buf[LBS_VALUE_MAX];
	snprintf(buf, sizeof buf, "%s", text);
	char *item = buf;
	for (;;) {
		char *comma = strchr(item, ',');
		if (comma)
			*comma = '\0';
		while (*item == ' ' || *item == '\t')
			item++;
		size_t len = strlen(item);
		while (len && (item[len - 1] == ' ' || item[len - 1] == '\t'))
			item[--len] = '\0';
		if (!len)
			return lbs_error_set(err, LBS_EINPUT, "empty item in the list (two commas, or a "
					     "comma at an end)");
		lbs_status st = lbs_sweep_expand_item(item, add_value, l, err);
		if (st == LBS_EINPUT && l->dup)
			return lbs_error_set(err, LBS_EINPUT, "value '%s' appears twice", l->dup);
		if (st == LBS_EINPUT && l->n >= LBS_SWEEP_MAX_POINTS)
			return lbs_error_set(err, LBS_EINPUT, "more than %d values", LBS_SWEEP_MAX_POINTS);
		if (st == LBS_EINTERNAL)
			return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
		if (st != LBS_OK)
			return st;
		if (!comma) {
			bool oom;
			if ((l->dup = first_duplicate(l, err, &oom)))
				return lbs_error_set(err, LBS_EINPUT, "value '%s' appears twice", l->dup);
			return oom ? LBS_EINTERNAL : LBS_OK;
		}
		item = comma + 1;
	}
}

/* ---- building the sweep ----------------------------------------------- */

static lbs_status at_error(lbs_error *err, const lbs_sweep *sw, int line, const char *section,
			   const char *key, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static lbs_status at_error(lbs_error *err, const lbs_sweep *sw, int line, const char *section,
			   const char *key, const char *fmt, ...)
{
	char label[LBS_ERROR_MAX / 2], msg[LBS_ERROR_MAX];
	lbs_origin at = { sw->path, line };
	lbs_origin_format(&at, section, key, label, sizeof label);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return lbs_error_set(err, LBS_EINPUT, "%s: %s", label, msg);
}

static lbs_status add_key(lbs_sweep *sw, const char *name, int line, value_list *l, size_t dim)
{
	lbs_sweep_key *k = realloc(sw->keys, (sw->n_keys + 1) * sizeof *k);
	if (!k)
		return LBS_EINTERNAL;
	sw->keys = k;
	k = &k[sw->n_keys++];
	memset(k, 0, sizeof *k);
	snprintf(k->name, sizeof k->name, "%s", name);
	k->line = line;
	k->values = l->v;
	k->n_values = l->n;
	k->dim = dim;
	memset(l, 0, sizeof *l);
	return LBS_OK;
}

static lbs_status add_dim(lbs_sweep *sw, size_t n)
{
	size_t *d = realloc(sw->dim_size, (sw->n_dims + 1) * sizeof *d);
	if (!d)
		return LBS_EINTERNAL;
	sw->dim_size = d;
	d[sw->n_dims++] = n;
	return LBS_OK;
}

static void free_list(value_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof *l);
}

const char *lbs_sweep_value(const lbs_sweep *sw, size_t p, size_t k)
{
	size_t stride = 1;
	for (size_t d = sw->n_dims; d-- > sw->keys[k].dim + 1;)
		stride *= sw->dim_size[d];
	return sw->keys[k].values[(p / stride) % sw->dim_size[sw->keys[k].dim]];
}

static size_t find_key(const lbs_sweep *sw, const char *name)
{
	for (size_t k = 0; k < sw->n_keys; k++)
		if (!strcmp(sw->keys[k].name, name))
			return k;
	return sw->n_keys;
}

/* "--set KEY: message" -> "message": the sweep names the key itself. */
static const char *strip_set_prefix(const char *msg, const char *key)
{
	char prefix[LBS_NAME_MAX * 2 + 32];
	snprintf(prefix, sizeof prefix, "--set %s: ", key);
	return strncmp(msg, prefix, strlen(prefix)) == 0 ? msg + strlen(prefix) : msg;
}

static lbs_status check_values(lbs_sweep *sw, const char *section_of_key[], lbs_error *err)
{
	for (size_t k = 0; k < sw->n_keys; k++) {
		const lbs_sweep_key *key = &sw->keys[k];
		if (!key->line)
			continue; /* a default taken from the scenario */
		for (size_t v = 0; v < key->n_values; v++) {
			const char *value = key->values[v];
			if (!strcmp(key->name, "policy")) {
				if (!lbs_policy_find(value)) {
					/* not a built-in: maybe a plugin the scenario loads */
					lbs_scenario sc;
					lbs_error e = { 0 };
					lbs_status st = lbs_scenario_load(&sc, sw->scenario, NULL, 0, &e);
					if (st != LBS_OK)
						return lbs_error_set(err, st, "%s", e.msg);
					char names[512];
					lbs_scenario_policy_names(&sc, names, sizeof names);
					bool known = lbs_scenario_policy(&sc, value) != NULL;
					lbs_scenario_destroy(&sc);
					if (!known)
						return at_error(err, sw, key->line, section_of_key[k], "policy",
								"unknown policy '%s' (known: %s)", value, names);
				}
			} else if (!strcmp(key->name, "seed")) {
				char *end;
				errno = 0;
				long long s = strtoll(value, &end, 10);
				if (*value < '0' || *value > '9' || *end || errno || s > MAX_SEED)
					return at_error(err, sw, key->line, section_of_key[k], "seeds",
							"'%s' is not a seed: expected integers from 0 to "
							"2^53 - 1", value);
			} else {
				char ov[LBS_VALUE_MAX + LBS_NAME_MAX * 2 + 32];
				snprintf(ov, sizeof ov, "%s=%s", key->name, value);
				const char *ovs[1] = { ov };
				lbs_scenario sc;
				lbs_error e = { 0 };
				lbs_status st = lbs_scenario_load(&sc, sw->scenario, ovs, 1, &e);
				if (st == LBS_EINTERNAL)
					return lbs_error_set(err, st, "%s", e.msg);
				if (st != LBS_OK)
					return at_error(err, sw, key->line, section_of_key[k], key->name,
							"value '%s': %s", value, strip_set_prefix(e.msg, key->name));
				lbs_scenario_destroy(&sc);
			}
		}
	}
	return LBS_OK;
}

/* The point's parameters as "k=v, k=v" for messages. */
static void describe_point(const lbs_sweep *sw, size_t p, char *buf, size_t len)
{
	buf[0] = '\0';
	for (size_t k = 0; k < sw->n_keys; k++) {
		size_t used = strlen(buf);
		snprintf(buf + used, len - used, "%s%s=%s", k ? ", " : "", sw->keys[k].name,
			 lbs_sweep_value(sw, p, k));
	}
}

/* Builds each point exactly as its run will, so that a sweep that starts
 * does not stop half-way on a combination that cannot run. */
static lbs_status check_points(lbs_sweep *sw, lbs_error *err)
{
	const char **ovs = calloc(sw->n_keys + 1, sizeof *ovs);
	char *ovbuf = calloc(sw->n_keys + 1, LBS_VALUE_MAX + LBS_NAME_MAX * 2 + 32);
	lbs_status st = LBS_OK;
	if (!ovs || !ovbuf)
		st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	size_t kp = find_key(sw, "policy");
	if (st == LBS_OK && !(sw->point_rows = calloc(sw->n_points, sizeof *sw->point_rows)))
		st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	for (size_t p = 0; st == LBS_OK && p < sw->n_points; p++) {
		size_t n = 0;
		for (size_t k = 0; k < sw->n_keys; k++) {
			if (k == kp)
				continue;
			char *o = ovbuf + n * (LBS_VALUE_MAX + LBS_NAME_MAX * 2 + 32);
			snprintf(o, LBS_VALUE_MAX + LBS_NAME_MAX * 2 + 32, "%s=%s",
				 !strcmp(sw->keys[k].name, "seed") ? "run.seed" : sw->keys[k].name,
				 lbs_sweep_value(sw, p, k));
			ovs[n++] = o;
		}
		lbs_scenario sc;
		lbs_run run;
		lbs_error e = { 0 };
		st = lbs_scenario_load(&sc, sw->scenario, ovs, n, &e);
		if (st == LBS_OK) {
			st = lbs_run_create(&run, &sc, lbs_sweep_value(sw, p, kp), &e);
			if (st == LBS_OK)
				lbs_run_destroy(&run);
			sw->point_rows[p] = (uint64_t)sc.iterations * (uint64_t)sc.n_workers;
			lbs_scenario_destroy(&sc);
		}
		if (st != LBS_OK) {
			char what[LBS_ERROR_MAX / 2];
			describe_point(sw, p, what, sizeof what);
			lbs_error_set(err, st == LBS_EINTERNAL ? st : LBS_EINPUT, "%s: point %zu of %zu (%s): %s",
				      sw->path, p + 1, sw->n_points, what, e.msg);
			st = err ? err->status : st;
		}
	}
	free(ovs);
	free(ovbuf);
	return st;
}

static void fnv(uint64_t *h, const void *data, size_t len)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++) {
		*h ^= p[i];
		*h *= 1099511628211ULL;
	}
}

/* The sweep's identity: its detail level, the scenario's text and every
 * key's values in order (not its name or paths). Two sweeps with the same
 * identity have the same points, so a point already in a results file need
 * not run again. */
static lbs_status compute_hash(lbs_sweep *sw, lbs_error *err)
{
	uint64_t h = 14695981039346656037ULL;
	static const char tag[] = "lbsim sweep 1";
	fnv(&h, tag, sizeof tag);
	fnv(&h, &(int){ (int)sw->detail }, sizeof(int));
	FILE *f = fopen(sw->scenario, "rb");
	if (!f)
		return lbs_error_set(err, LBS_EINPUT, "%s: cannot read scenario: %s", sw->scenario,
				     strerror(errno));
	char buf[8192];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		fnv(&h, buf, n);
	fclose(f);
	for (size_t d = 0; d < sw->n_dims; d++)
		fnv(&h, &(uint64_t){ sw->dim_size[d] }, sizeof(uint64_t));
	for (size_t k = 0; k < sw->n_keys; k++) {
		fnv(&h, sw->keys[k].name, strlen(sw->keys[k].name) + 1);
		fnv(&h, &(uint64_t){ sw->keys[k].dim }, sizeof(uint64_t));
		for (size_t v = 0; v < sw->keys[k].n_values; v++)
			fnv(&h, sw->keys[k].values[v], strlen(sw->keys[k].values[v]) + 1);
	}
	snprintf(sw->hash, sizeof sw->hash, "%016llx", (unsigned long long)h);
	return LBS_OK;
}

/* Whether key k is an option of another policy than point p's: a key of
 * [policy.NAME] with NAME not p's policy, which p's run never reads. */
static bool foreign_option(const lbs_sweep *sw, size_t p, size_t k, size_t policy_key)
{
	const char *name = sw->keys[k].name, *policy = lbs_sweep_value(sw, p, policy_key);
	if (strncmp(name, "policy.", 7))
		return false;
	size_t len = strlen(policy);
	return strncmp(name + 7, policy, len) || name[7 + len] != '.';
}

/* The hash of point p's values that its run reads (every key but the
 * options of other policies). */
static uint64_t run_hash(const lbs_sweep *sw, size_t p, size_t policy_key)
{
	uint64_t h = 14695981039346656037ULL;
	for (size_t k = 0; k < sw->n_keys; k++) {
		const char *v = foreign_option(sw, p, k, policy_key) ? "" : lbs_sweep_value(sw, p, k);
		fnv(&h, v, strlen(v) + 1);
	}
	return h;
}

/* Whether points p and q read the same values. */
static bool same_run(const lbs_sweep *sw, size_t p, size_t q, size_t policy_key)
{
	for (size_t k = 0; k < sw->n_keys; k++) {
		bool fp = foreign_option(sw, p, k, policy_key), fq = foreign_option(sw, q, k, policy_key);
		if (fp != fq || (!fp && strcmp(lbs_sweep_value(sw, p, k), lbs_sweep_value(sw, q, k))))
			return false;
	}
	return true;
}

typedef struct hashed_point {
	uint64_t h;
	size_t p;
} hashed_point;

static int by_hash(const void *a, const void *b)
{
	const hashed_point *x = a, *y = b;
	if (x->h != y->h)
		return x->h < y->h ? -1 : 1;
	return x->p < y->p ? -1 : x->p > y->p;
}

/* Fills run_as: a point that equals an earlier one but for another
 * policy's options (static beside policy.lbbsp-cpu.predictor = narx, ema)
 * is that run, made once and shared; the views pair it with each variant,
 * as its setting leaves the policies' sections out (analysis/views.sql). */
static lbs_status find_shared_runs(lbs_sweep *sw, lbs_error *err)
{
	sw->run_as = malloc(sw->n_points * sizeof *sw->run_as);
	hashed_point *hp = malloc(sw->n_points * sizeof *hp);
	if (!sw->run_as || !hp) {
		free(hp);
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	}
	size_t policy_key = find_key(sw, "policy");
	for (size_t p = 0; p < sw->n_points; p++) {
		sw->run_as[p] = p;
		hp[p] = (hashed_point){ run_hash(sw, p, policy_key), p };
	}
	qsort(hp, sw->n_points, sizeof *hp, by_hash);
	for (size_t i = 0; i < sw->n_points;) {
		size_t j = i + 1;
		while (j < sw->n_points && hp[j].h == hp[i].h)
			j++;
		/* points i..j-1 share a hash, in point order: each goes to the
		 * first that reads the same values (a collision reads others) */
		for (size_t a = i + 1; a < j; a++)
			for (size_t b = i; b < a; b++)
				if (sw->run_as[hp[b].p] == hp[b].p && same_run(sw, hp[a].p, hp[b].p, policy_key)) {
					sw->run_as[hp[a].p] = hp[b].p;
					break;
				}
		i = j;
	}
	free(hp);
	sw->n_runs = 0;
	for (size_t p = 0; p < sw->n_points; p++)
		sw->n_runs += sw->run_as[p] == p;
	return LBS_OK;
}

static lbs_status build(lbs_sweep *sw, parse_ctx *c, lbs_error *err)
{
	const char *section_of_key[LBS_SWEEP_MAX_KEYS + 2];
	const entry *scenario = NULL;
	lbs_status st = LBS_OK;
	size_t zip_dim = SIZE_MAX, zip_n = 0;
	int zip_line = 0;
	const char *zip_key = NULL;
	value_list l = { 0 };
	/* A grid section given empty is a mistake (keys put elsewhere, or a
	 * list left out), not a sweep of one point. */
	for (size_t s = 0; s < c->n_sec; s++) {
		if (!strcmp(c->sec[s].name, "sweep"))
			continue;
		size_t keys = 0;
		for (size_t i = 0; i < c->n; i++)
			keys += !strcmp(c->e[i].section, c->sec[s].name);
		if (!keys)
			return lbs_error_set(err, LBS_EINPUT, "%s:%d: [%s] is empty: give the keys to %s, or "
					     "remove the section", sw->path, c->sec[s].line, c->sec[s].name,
					     strcmp(c->sec[s].name, "zip") ? "vary" : "vary together");
	}
	for (size_t i = 0; i < c->n && st == LBS_OK; i++) {
		const entry *e = &c->e[i];
		if (!strcmp(e->section, "sweep")) {
			if (!strcmp(e->key, "scenario")) {
				scenario = e;
			} else if (!strcmp(e->key, "name")) {
				snprintf(sw->name, sizeof sw->name, "%s", e->value);
			} else if (!strcmp(e->key, "detail")) {
				int d = lbs_choice_index(LBS_DETAIL_CHOICES, e->value);
				if (d < 0)
					st = at_error(err, sw, e->line, "sweep", "detail",
						      "'%s': expected runs, iterations or workers", e->value);
				else
					sw->detail = (lbs_detail)d;
			} else {
				const char *hint = lbs_keys_suggest(sweep_keys, 3, e->key);
				st = at_error(err, sw, e->line, "sweep", e->key,
					      "unknown key%s%s%s (expected name, scenario or detail; the keys "
					      "to vary go under [vary])", hint ? " (did you mean '" : "",
					      hint ? hint : "", hint ? "'?)" : "");
			}
			continue;
		}
		/* [vary] or [zip]: a policy list, seeds, or a scenario key SECTION.KEY. */
		const char *name = e->key;
		if (!strcmp(name, "seeds")) {
			name = "seed";
		} else if (strcmp(name, "policy") && !strchr(name, '.')) {
			const char *hint = lbs_keys_suggest(special_keys, 2, name);
			st = at_error(err, sw, e->line, e->section, e->key,
				      "unknown key%s%s%s: expected policy, seeds or a scenario key "
				      "SECTION.KEY such as workers.NAME.count", hint ? " (did you mean '" : "",
				      hint ? hint : "", hint ? "'?)" : "");
			break;
		} else if (!strcmp(name, "run.seed") || !strcmp(name, "policy.name")) {
			st = at_error(err, sw, e->line, e->section, e->key, "vary this with `%s` instead",
				      !strcmp(name, "run.seed") ? "seeds" : "policy");
			break;
		}
		if (sw->n_keys >= LBS_SWEEP_MAX_KEYS) {
			st = at_error(err, sw, e->line, e->section, e->key, "more than %d keys varied",
				      LBS_SWEEP_MAX_KEYS);
			break;
		}
		if ((st = expand_list(e->value, &l, err)) != LBS_OK) {
			char msg[LBS_ERROR_MAX];
			snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
			st = st == LBS_EINTERNAL ? st : at_error(err, sw, e->line, e->section, e->key, "%s", msg);
			break;
		}
		size_t dim;
		if (!strcmp(e->section, "zip")) {
			if (zip_dim == SIZE_MAX) {
				zip_dim = sw->n_dims;
				zip_n = l.n;
				zip_line = e->line;
				zip_key = e->key;
				if (add_dim(sw, l.n) != LBS_OK)
					st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
			} else if (l.n != zip_n) {
				st = at_error(err, sw, e->line, "zip", e->key,
					      "%zu values, but %s (line %d) has %zu: the keys of [zip] vary "
					      "together, so each needs as many values", l.n, zip_key, zip_line,
					      zip_n);
				break;
			}
			dim = zip_dim;
		} else {
			dim = sw->n_dims;
			if (add_dim(sw, l.n) != LBS_OK)
				st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
		}
		section_of_key[sw->n_keys] = e->section;
		if (st == LBS_OK && add_key(sw, name, e->line, &l, dim) != LBS_OK)
			st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	}
	free_list(&l);
	if (st != LBS_OK)
		return st;
	if (!scenario)
		return lbs_error_set(err, LBS_EINPUT, "%s: missing [sweep] scenario (the base scenario, "
				     "relative to the sweep file)", sw->path);

	/* The base scenario, relative to the sweep file's folder, then to the
	 * scenarios/ of LBSIM_PATH and of the installed data (util/datapath.h). */
	const char *slash = strrchr(sw->path, '/');
	char dir[sizeof sw->scenario];
	snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - sw->path + 1) : 0, sw->path);
	lbs_datapath *dp = calloc(1, sizeof *dp);
	if (!dp)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	lbs_datapath_find(scenario->value, dir, "scenarios", dp);
	if (strlen(dp->path) >= sizeof sw->scenario) {
		free(dp);
		return at_error(err, sw, scenario->line, "sweep", "scenario", "path too long");
	}
	memcpy(sw->scenario, dp->path, strlen(dp->path) + 1);
	struct stat sb;
	if (stat(sw->scenario, &sb) != 0) {
		int e = errno;
		at_error(err, sw, scenario->line, "sweep", "scenario", "cannot read '%s': %s",
			 sw->scenario, strerror(e));
		lbs_datapath_explain(err, dp);
		free(dp);
		return LBS_EINPUT;
	}
	free(dp);
	if (!S_ISREG(sb.st_mode))
		return at_error(err, sw, scenario->line, "sweep", "scenario", "'%s' is not a file",
				sw->scenario);
	char *abs = realpath(sw->scenario, NULL);
	if (abs) {
		snprintf(sw->scenario, sizeof sw->scenario, "%s", abs);
		free(abs);
	}
	lbs_scenario base;
	if ((st = lbs_scenario_load(&base, sw->scenario, NULL, 0, err)) != LBS_OK)
		return st;
	/* Every point names its policy and seed: the scenario's unless varied. */
	char seed[32];
	snprintf(seed, sizeof seed, "%lld", (long long)base.run.seed);
	const char *defaults[2][2] = { { "policy", base.policy.name }, { "seed", seed } };
	for (size_t i = 0; i < 2 && st == LBS_OK; i++)
		if (find_key(sw, defaults[i][0]) == sw->n_keys) {
			section_of_key[sw->n_keys] = "vary";
			if (add_value(&l, defaults[i][1]) != LBS_OK || add_dim(sw, 1) != LBS_OK ||
			    add_key(sw, defaults[i][0], 0, &l, sw->n_dims - 1) != LBS_OK)
				st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
		}
	lbs_scenario_destroy(&base);
	free_list(&l);
	if (st != LBS_OK)
		return st;

	sw->n_points = 1;
	for (size_t d = 0; d < sw->n_dims; d++) {
		if (sw->dim_size[d] > LBS_SWEEP_MAX_POINTS / sw->n_points)
			return lbs_error_set(err, LBS_EINPUT, "%s: the sweep has more than %d points",
					     sw->path, LBS_SWEEP_MAX_POINTS);
		sw->n_points *= sw->dim_size[d];
	}
	if ((st = check_values(sw, section_of_key, err)) != LBS_OK)
		return st;
	if ((st = check_points(sw, err)) != LBS_OK)
		return st;
	if ((st = find_shared_runs(sw, err)) != LBS_OK)
		return st;
	return compute_hash(sw, err);
}

lbs_status lbs_sweep_load(lbs_sweep *sw, const char *path, lbs_error *err)
{
	memset(sw, 0, sizeof *sw);
	snprintf(sw->path, sizeof sw->path, "%s", path);
	sw->detail = LBS_DETAIL_ITERATIONS;
	const char *base = strrchr(path, '/');
	snprintf(sw->name, sizeof sw->name, "%s", base ? base + 1 : path);
	char *dot = strrchr(sw->name, '.');
	if (dot && !strcmp(dot, ".ini"))
		*dot = '\0';

	parse_ctx c = { .ini = { .max_chars = LINE_MAX_CHARS, .on_section = on_section,
				 .long_line_hint = " (use a range, or fewer values)" } };
	lbs_status st = lbs_ini_parse(&c.ini, sw->path, "sweep", on_key, &c, err);
	if (st == LBS_OK)
		st = build(sw, &c, err);
	free(c.e);
	if (st != LBS_OK)
		lbs_sweep_destroy(sw);
	return st;
}

void lbs_sweep_destroy(lbs_sweep *sw)
{
	for (size_t k = 0; k < sw->n_keys; k++) {
		for (size_t v = 0; v < sw->keys[k].n_values; v++)
			free(sw->keys[k].values[v]);
		free(sw->keys[k].values);
	}
	free(sw->keys);
	free(sw->dim_size);
	free(sw->point_rows);
	free(sw->run_as);
	sw->keys = NULL;
	sw->dim_size = NULL;
	sw->point_rows = NULL;
	sw->run_as = NULL;
	sw->n_keys = sw->n_dims = sw->n_points = 0;
}
