/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The delay lines of the predictors that regress the next speed on past
 * speeds and readings (narx, arx): a bounded history of measurements and
 * the layout of one regression row (doc/predictors.md).
 *
 * The history holds y[t] (speeds) and x[t * n_exog + j] (the readings seen
 * with y[t]), oldest first, t = 0 .. n-1; when full, the oldest is dropped.
 * The row of target t is
 *     u = [ y[t-1], ..., y[t-dy],  x_1[t], ..., x_1[t-dx+1],  ...,  x_J[t], ..., x_J[t-dx+1] ]
 * (dy + dx * n_exog values; x[t] is the reading at decision time, xnow,
 * when t == n, the step being forecast), so a row needs t >= max(dy, dx - 1). */
#ifndef LBS_PREDICT_LAGS_H
#define LBS_PREDICT_LAGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

typedef struct lbs_lags {
	double *y, *x;
	size_t n, cap, n_exog;
} lbs_lags;

/* A history of at most `cap` measurements of n_exog readings each. */
static inline lbs_status lbs_lags_init(lbs_lags *h, size_t cap, size_t n_exog, lbs_error *err)
{
	*h = (lbs_lags){ .cap = cap, .n_exog = n_exog };
	if (!(h->y = lbs_calloc(cap, sizeof *h->y, err)) ||
	    !(h->x = lbs_calloc(cap * (n_exog ? n_exog : 1), sizeof *h->x, err)))
		return LBS_EINTERNAL;
	return LBS_OK;
}

static inline void lbs_lags_free(lbs_lags *h)
{
	free(h->y);
	free(h->x);
	h->y = h->x = NULL;
}

/* Appends (y, x[0..n_exog)), x NULL reading as zeros, dropping the oldest
 * when full. */
static inline void lbs_lags_push(lbs_lags *h, double y, const double *x)
{
	if (h->n == h->cap) {
		memmove(h->y, h->y + 1, (h->cap - 1) * sizeof *h->y);
		if (h->n_exog)
			memmove(h->x, h->x + h->n_exog, (h->cap - 1) * h->n_exog * sizeof *h->x);
		h->n--;
	}
	h->y[h->n] = y;
	for (size_t j = 0; j < h->n_exog; j++)
		h->x[h->n * h->n_exog + j] = x ? x[j] : 0.0;
	h->n++;
}

/* The earliest target a row can be made for. */
static inline size_t lbs_lags_first(int64_t dy, int64_t dx)
{
	return (size_t)(dy > dx - 1 ? dy : dx - 1);
}

/* The raw row of target t (layout above) into u. */
static inline void lbs_lags_row(const lbs_lags *h, size_t t, int64_t dy, int64_t dx, const double *xnow,
				double *u)
{
	size_t k = 0;
	for (int64_t i = 1; i <= dy; i++)
		u[k++] = h->y[t - (size_t)i];
	for (size_t j = 0; j < h->n_exog; j++)
		for (int64_t i = 0; i < dx; i++)
			u[k++] = (t == h->n && i == 0) ? xnow[j] : h->x[(t - (size_t)i) * h->n_exog + j];
}

#endif
