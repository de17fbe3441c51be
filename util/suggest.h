/* SPDX-License-Identifier: GPL-3.0-or-later */
/* "Did you mean ...?": the candidate nearest a word a user mistyped. */
#ifndef LBS_SUGGEST_H
#define LBS_SUGGEST_H

#include <stddef.h>

/* The edit distance between a and b: insertions, deletions, substitutions
 * and transpositions of two neighbouring characters each cost 1 (the
 * optimal string alignment distance); SIZE_MAX when either is longer than
 * 255 characters. */
size_t lbs_edit_distance(const char *a, const char *b);

/* The candidate nearest `word`, or NULL when none is near enough to be a
 * slip: at most 1 edit for words of up to 4 characters, 2 up to 8, and 3
 * beyond; ties go to the first candidate. */
const char *lbs_suggest(const char *word, const char *const *candidates, size_t n);

#endif
