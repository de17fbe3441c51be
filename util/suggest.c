/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "util/suggest.h"

#include <stdint.h>
#include <string.h>

#define MAXLEN 255

size_t lbs_edit_distance(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	if (n > MAXLEN || m > MAXLEN)
		return SIZE_MAX;
	/* Three rows of the dynamic programme: i - 2, i - 1 and i. */
	size_t rows[3][MAXLEN + 1];
	size_t *prev2 = rows[0], *prev = rows[1], *cur = rows[2];
	for (size_t j = 0; j <= m; j++)
		prev[j] = j;
	for (size_t i = 1; i <= n; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= m; j++) {
			size_t cost = a[i - 1] != b[j - 1];
			size_t d = prev[j] + 1;             /* deletion */
			if (cur[j - 1] + 1 < d)
				d = cur[j - 1] + 1;         /* insertion */
			if (prev[j - 1] + cost < d)
				d = prev[j - 1] + cost;     /* substitution */
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && prev2[j - 2] + 1 < d)
				d = prev2[j - 2] + 1;       /* transposition */
			cur[j] = d;
		}
		size_t *t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[m];
}

const char *lbs_suggest(const char *word, const char *const *candidates, size_t n)
{
	size_t len = strlen(word);
	size_t limit = len <= 4 ? 1 : len <= 8 ? 2 : 3;
	const char *best = NULL;
	size_t best_d = SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		size_t d = lbs_edit_distance(word, candidates[i]);
		if (d <= limit && d < best_d) {
			best = candidates[i];
			best_d = d;
		}
	}
	return best;
}
