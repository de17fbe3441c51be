/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Key schemas: every key a scenario section (or a policy's options) accepts
 * is one row of a table that says its type, unit, default, range, when it
 * applies and what it means. The same table validates input, fills the
 * target struct, and writes the reference in doc/scenario-keys.md, so the docs
 * cannot drift from the parser. */
#ifndef LBS_KEYS_H
#define LBS_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/error.h"
#include "util/units.h"

#define LBS_NAME_MAX 64
#define LBS_VALUE_MAX 256

typedef enum lbs_type {
	LBS_T_INT,       /* int64_t */
	LBS_T_REAL,      /* double, plain number or percentage */
	LBS_T_TIME,      /* double, seconds; unit required */
	LBS_T_BYTES,     /* double, bytes; unit required */
	LBS_T_BANDWIDTH, /* double, bytes per second; unit required */
	LBS_T_ENUM,      /* int: index into `choices` */
	LBS_T_STRING,    /* char[LBS_VALUE_MAX] */
} lbs_type;

enum {
	LBS_K_MIN_OPEN = 1u << 0, /* value must be > min, not >= min */
};

typedef struct lbs_key_spec {
	const char *name;
	lbs_type type;
	size_t offset;       /* where the value goes in the target struct */
	const char *def;     /* default as text; NULL: required (where `when` holds) */
	double min, max;     /* inclusive range in base units (numbers only) */
	unsigned flags;
	const char *choices; /* LBS_T_ENUM: "a|b|c" */
	const char *when;    /* "key=v1|v2": the key applies only then; "key!=v1|v2": unless
				the key has one of those values (and has one); NULL: always */
	const char *doc;
} lbs_key_spec;

/* Where a value came from: a file and line, or a --set argument (line 0). */
typedef struct lbs_origin {
	const char *file;
	int line;
} lbs_origin;

/* One key = value as read, before validation. */
typedef struct lbs_kv {
	char section[LBS_NAME_MAX + 16];
	char key[LBS_NAME_MAX];
	char value[LBS_VALUE_MAX];
	lbs_origin at;
} lbs_kv;

/* Appends section/key = value, given at `at` (NULL: a default or a derived
 * value), to the *n entries of *kv, which has room for *cap; grows it by
 * doubling (a key at a time copied the whole list each time: quadratic in
 * a scenario's keys). false: out of memory, *kv unchanged. */
bool lbs_kv_add(lbs_kv **kv, size_t *n, size_t *cap, const char *section, const char *key, const char *value,
		const lbs_origin *at);

/* Formats "file:line: [section] key" (or "--set section.key") into buf. */
void lbs_origin_format(const lbs_origin *at, const char *section, const char *key, char *buf,
		       size_t len);

/* Validates entries[0..n) of one section against keys[0..nkeys) and stores
 * the values (and the defaults of keys not given) into target. `where` says
 * where the section starts, for messages about missing keys. On failure the
 * error names the origin, the key and what was expected. */
/* On success, bit i of *present says key i has a value (given, or its
 * default), and origins[i] (if origins is not NULL) where it was given
 * (file NULL for a default). At most 64 keys per table. */
lbs_status lbs_keys_apply(const lbs_key_spec *keys, size_t nkeys, const char *section,
			  const lbs_origin *where, const lbs_kv *const *entries, size_t n,
			  void *target, uint64_t *present, lbs_origin *origins, lbs_error *err);

/* lbs_keys_apply for an array of entries (a [policy.NAME] section): fills
 * target with the values given and the defaults. */
lbs_status lbs_options_parse(const lbs_key_spec *keys, size_t nkeys, const char *section,
			     const lbs_kv *kv, size_t n, void *target, lbs_error *err);

/* Index of key `name` in keys[], or -1. */
int lbs_keys_find(const lbs_key_spec *keys, size_t nkeys, const char *name);

/* Index of `value` in "a|b|c", or -1. */
int lbs_choice_index(const char *choices, const char *value);

/* The unit dimension of a type, for parsing and docs. */
lbs_dim lbs_type_dim(lbs_type t);

/* Writes a Markdown table documenting keys. */
void lbs_keys_document(FILE *out, const lbs_key_spec *keys, size_t nkeys);

/* The key in keys[] closest to `name` by edit distance, if close enough. */
const char *lbs_keys_suggest(const lbs_key_spec *keys, size_t nkeys, const char *name);

#endif
