/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "util/keys.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

bool lbs_kv_add(lbs_kv **kv, size_t *n, size_t *cap, const char *section, const char *key, const char *value,
		const lbs_origin *at)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 64;
		lbs_kv *more = realloc(*kv, c * sizeof *more);
		if (!more)
			return false;
		*kv = more;
		*cap = c;
	}
	lbs_kv *e = &(*kv)[(*n)++];
	memset(e, 0, sizeof *e);
	snprintf(e->section, sizeof e->section, "%s", section);
	snprintf(e->key, sizeof e->key, "%s", key);
	snprintf(e->value, sizeof e->value, "%s", value);
	if (at)
		e->at = *at;
	return true;
}

void lbs_origin_format(const lbs_origin *at, const char *section, const char *key, char *buf,
		       size_t len)
{
	char what[LBS_NAME_MAX * 2 + 32];
	if (key)
		lbs_fmt(what, sizeof what, "[%s] %s", section, key);
	else
		lbs_fmt(what, sizeof what, "[%s]", section);
	if (at && at->file && at->line > 0)
		lbs_fmt(buf, len, "%s:%d: %s", at->file, at->line, what);
	else if (at && at->file && key)
		lbs_fmt(buf, len, "%s %s.%s", at->file, section, key); /* --set s.k */
	else if (at && at->file)
		lbs_fmt(buf, len, "%s %s", at->file, what);
	else
		lbs_fmt(buf, len, "%s", what);
}

int lbs_choice_index(const char *choices, const char *value)
{
	size_t vlen = strlen(value);
	int i = 0;
	for (const char *p = choices; p && *p; i++) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		if (len == vlen && strncmp(p, value, len) == 0)
			return i;
		p = bar ? bar + 1 : NULL;
	}
	return -1;
}

lbs_dim lbs_type_dim(lbs_type t)
{
	switch (t) {
	case LBS_T_TIME: return LBS_DIM_TIME;
	case LBS_T_BYTES: return LBS_DIM_BYTES;
	case LBS_T_BANDWIDTH: return LBS_DIM_BANDWIDTH;
	default: return LBS_DIM_NONE;
	}
}

int lbs_keys_find(const lbs_key_spec *keys, size_t nkeys, const char *name)
{
	for (size_t i = 0; i < nkeys; i++)
		if (strcmp(keys[i].name, name) == 0)
			return (int)i;
	return -1;
}

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 63 || lb > 63)
		return 99;
	size_t d[64], prev;
	for (size_t j = 0; j <= lb; j++)
		d[j] = j;
	for (size_t i = 1; i <= la; i++) {
		prev = d[0];
		d[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cur = d[j];
			size_t sub = prev + (a[i - 1] != b[j - 1]);
			size_t del = d[j] + 1, ins = d[j - 1] + 1;
			d[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
			prev = cur;
		}
	}
	return d[lb];
}

const char *lbs_keys_suggest(const lbs_key_spec *keys, size_t nkeys, const char *name)
{
	const char *best = NULL;
	size_t bestd = 3; /* suggest only within two edits */
	for (size_t i = 0; i < nkeys; i++) {
		size_t d = edit_distance(name, keys[i].name);
		if (d < bestd) {
			bestd = d;
			best = keys[i].name;
		}
	}
	return best;
}

/* Whether the key's `when` condition ("other=v1|v2") holds for the values
 * parsed so far. Conditions refer to enum keys that come earlier in the table. */
static bool when_holds(const lbs_key_spec *keys, size_t nkeys, const lbs_key_spec *k,
		       const void *target, uint64_t present)
{
	if (!k->when)
		return true;
	const char *eq = strchr(k->when, '=');
	bool negate = eq > k->when && eq[-1] == '!';
	char other[LBS_NAME_MAX];
	size_t len = (size_t)(eq - k->when) - negate;
	memcpy(other, k->when, len);
	other[len] = '\0';
	int j = lbs_keys_find(keys, nkeys, other);
	if (j < 0 || !(present >> j & 1))
		return false;
	int v = *(const int *)((const char *)target + keys[j].offset);
	/* Compare the chosen value's name against the allowed list. */
	const char *p = keys[j].choices;
	for (int i = 0; i < v && p; i++) {
		p = strchr(p, '|');
		p = p ? p + 1 : NULL;
	}
	if (!p)
		return false;
	char chosen[LBS_NAME_MAX];
	const char *bar = strchr(p, '|');
	size_t clen = bar ? (size_t)(bar - p) : strlen(p);
	memcpy(chosen, p, clen);
	chosen[clen] = '\0';
	return (lbs_choice_index(eq + 1, chosen) >= 0) != negate;
}

static void describe_range(const lbs_key_spec *k, char *buf, size_t len)
{
	lbs_dim dim = lbs_type_dim(k->type);
	char lo[48], hi[48];
	lbs_format_quantity(k->min, dim, lo, sizeof lo);
	lbs_format_quantity(k->max, dim, hi, sizeof hi);
	if (k->type == LBS_T_INT) {
		snprintf(lo, sizeof lo, "%.0f", k->min);
		snprintf(hi, sizeof hi, "%.0f", k->max);
	}
	snprintf(buf, len, "%s %s and <= %s", (k->flags & LBS_K_MIN_OPEN) ? ">" : ">=", lo, hi);
}

static lbs_status parse_value(const lbs_key_spec *k, const char *text, void *target,
			      const char *label, lbs_error *err)
{
	char why[LBS_ERROR_MAX / 2];
	void *dst = (char *)target + k->offset;
	double v = 0;
	switch (k->type) {
	case LBS_T_STRING:
		if (strlen(text) >= LBS_VALUE_MAX)
			return lbs_error_set(err, LBS_EINPUT, "%s: value longer than %d characters", label,
					     LBS_VALUE_MAX - 1);
		strcpy(dst, text);
		return LBS_OK;
	case LBS_T_ENUM: {
		int i = lbs_choice_index(k->choices, text);
		if (i < 0)
			return lbs_error_set(err, LBS_EINPUT, "%s: '%s' is not one of %s", label, text,
					     k->choices);
		*(int *)dst = i;
		return LBS_OK;
	}
	case LBS_T_INT: {
		int64_t iv;
		if (!lbs_parse_int(text, &iv, why, sizeof why))
			return lbs_error_set(err, LBS_EINPUT, "%s: %s", label, why);
		*(int64_t *)dst = iv;
		v = (double)iv;
		break;
	}
	default:
		if (!lbs_parse_quantity(text, lbs_type_dim(k->type), &v, why, sizeof why))
			return lbs_error_set(err, LBS_EINPUT, "%s: %s", label, why);
		*(double *)dst = v;
		break;
	}
	bool low = (k->flags & LBS_K_MIN_OPEN) ? !(v > k->min) : !(v >= k->min);
	if (low || !(v <= k->max)) {
		char range[128];
		describe_range(k, range, sizeof range);
		/* A fraction written as a percentage without its sign: say how. */
		bool percent = k->type == LBS_T_REAL && k->max <= 1.0 && v > 1.0 && v <= 100.0 && !strchr(text, '%');
		return lbs_error_set(err, LBS_EINPUT, "%s: '%s' is out of range (expected %s)%s%s%s", label,
				     text, range, percent ? "; a percentage takes its sign: '" : "",
				     percent ? text : "", percent ? "%'" : "");
	}
	return LBS_OK;
}

lbs_status lbs_keys_apply(const lbs_key_spec *keys, size_t nkeys, const char *section,
			  const lbs_origin *where, const lbs_kv *const *entries, size_t n,
			  void *target, uint64_t *present, lbs_origin *origins, lbs_error *err)
{
	char label[LBS_ERROR_MAX / 2];
	const lbs_kv *given[64] = { 0 };
	*present = 0;
	for (size_t e = 0; e < n; e++) {
		int i = lbs_keys_find(keys, nkeys, entries[e]->key);
		lbs_origin_format(&entries[e]->at, section, entries[e]->key, label, sizeof label);
		if (i < 0) {
			const char *hint = lbs_keys_suggest(keys, nkeys, entries[e]->key);
			return lbs_error_set(err, LBS_EINPUT, "%s: unknown key%s%s%s", label,
					     hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "");
		}
		given[i] = entries[e];
	}
	/* Keys in table order, so a `when` condition sees the enum it depends on. */
	for (size_t i = 0; i < nkeys; i++) {
		const lbs_key_spec *k = &keys[i];
		bool applies = when_holds(keys, nkeys, k, target, *present);
		if (origins)
			origins[i] = (lbs_origin){ NULL, 0 };
		if (given[i]) {
			lbs_origin_format(&given[i]->at, section, k->name, label, sizeof label);
			if (!applies)
				return lbs_error_set(err, LBS_EINPUT, "%s: this key applies only when %s",
						     label, k->when);
			lbs_status st = parse_value(k, given[i]->value, target, label, err);
			if (st != LBS_OK)
				return st;
			*present |= UINT64_C(1) << i;
			if (origins)
				origins[i] = given[i]->at;
		} else if (applies && k->def && *k->def) {
			snprintf(label, sizeof label, "default of [%s] %s", section, k->name);
			lbs_status st = parse_value(k, k->def, target, label, err);
			if (st != LBS_OK)
				return st;
			*present |= UINT64_C(1) << i;
		} else if (applies && !k->def) {
			lbs_origin_format(where, section, NULL, label, sizeof label);
			return lbs_error_set(err, LBS_EINPUT, "%s: missing required key '%s' (%s)", label,
					     k->name, k->doc);
		}
	}
	return LBS_OK;
}

lbs_status lbs_options_parse(const lbs_key_spec *keys, size_t nkeys, const char *section,
			     const lbs_kv *kv, size_t n, void *target, lbs_error *err)
{
	const lbs_kv **ptrs = calloc(n + 1, sizeof *ptrs);
	if (!ptrs)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	for (size_t i = 0; i < n; i++)
		ptrs[i] = &kv[i];
	uint64_t present;
	lbs_origin where = { n ? kv[0].at.file : NULL, n ? kv[0].at.line : 0 };
	lbs_status st = lbs_keys_apply(keys, nkeys, section, &where, ptrs, n, target, &present, NULL, err);
	free(ptrs);
	return st;
}

static const char *type_name(lbs_type t)
{
	switch (t) {
	case LBS_T_INT: return "integer";
	case LBS_T_REAL: return "number";
	case LBS_T_TIME: return "time";
	case LBS_T_BYTES: return "bytes";
	case LBS_T_BANDWIDTH: return "bandwidth";
	case LBS_T_ENUM: return "choice";
	default: return "text";
	}
}

/* Writes s with '|' escaped, so it can sit in a Markdown table cell. */
static void md_cell(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputc('\\', out);
		fputc(*s, out);
	}
}

void lbs_keys_document(FILE *out, const lbs_key_spec *keys, size_t nkeys)
{
	fprintf(out, "| key | type | default | range | applies when | meaning |\n");
	fprintf(out, "|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < nkeys; i++) {
		const lbs_key_spec *k = &keys[i];
		char range[160] = "";
		if (k->type == LBS_T_ENUM)
			snprintf(range, sizeof range, "`%s`", k->choices);
		else if (k->type != LBS_T_STRING)
			describe_range(k, range, sizeof range);
		const char *def = !k->def ? "required" : *k->def ? k->def : "unset";
		fprintf(out, "| `%s` | %s | %s%s%s | ", k->name, type_name(k->type),
			k->def && *k->def ? "`" : "", def, k->def && *k->def ? "`" : "");
		md_cell(out, range);
		fputs(" | ", out);
		md_cell(out, k->when ? k->when : "always");
		fputs(" | ", out);
		md_cell(out, k->doc);
		fputs(" |\n", out);
	}
}
