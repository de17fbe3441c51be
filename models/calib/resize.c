/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Measuring the re-sizing costs of a device and its software (`lbsim
 * calibrate --blas|--torch MODEL --resize`; doc/profiles.md): what
 * changing the batch costs by itself, against the same batches run
 * without a change, and what a batch never run before costs on its first
 * run. */
#include <math.h>
#include <stdlib.h>

#include "models/calib.h"

/* One iteration of `batch`, its time into *t (NULL: untimed). */
static lbs_status run(const lbs_resize_bench *b, int64_t batch, double *t, lbs_error *err)
{
	double s;
	return b->run(b->ctx, batch, t ? t : &s, err);
}

/* n iterations at `batch`, after one untimed at it, so that none of them
 * changes the batch: their time into *t. */
static lbs_status constant_block(const lbs_resize_bench *b, int64_t batch, int n, double *t, lbs_error *err)
{
	lbs_status st = run(b, batch, NULL, err);
	*t = 0;
	for (int k = 0; k < n && st == LBS_OK; k++) {
		double s;
		st = run(b, batch, &s, err);
		*t += s;
	}
	return st;
}

/* The block's iterations at b - d, then as many at b + d, each half after
 * an untimed run at its batch: the alternating block's batches without
 * its changes. */
static lbs_status split_block(const lbs_resize_bench *b, const lbs_resize_opts *o, double *t, lbs_error *err)
{
	double lo, hi;
	lbs_status st = constant_block(b, o->batch - o->delta, o->block / 2, &lo, err);
	if (st == LBS_OK)
		st = constant_block(b, o->batch + o->delta, o->block / 2, &hi, err);
	*t = lo + hi;
	return st;
}

/* `block` iterations alternating b - d and b + d (the same samples as the
 * others), after one untimed at b + d, so that every one of them changes
 * the batch. */
static lbs_status alternating_block(const lbs_resize_bench *b, const lbs_resize_opts *o, double *t,
				    lbs_error *err)
{
	lbs_status st = run(b, o->batch + o->delta, NULL, err);
	*t = 0;
	for (int k = 0; k < o->block && st == LBS_OK; k++) {
		double s;
		st = run(b, k % 2 ? o->batch + o->delta : o->batch - o->delta, &s, err);
		*t += s;
	}
	return st;
}

/* The median of x[0..n) (sorted in place) and its range. */
static void summarise(double *x, size_t n, double *median, double *lo, double *hi)
{
	*median = lbs_calib_median(x, n);
	*lo = x[0];
	*hi = x[n - 1];
}

lbs_status lbs_calib_resize(const lbs_resize_bench *b, const lbs_resize_opts *o, lbs_resize_result *r,
			    lbs_error *err)
{
	if (o->rounds < 1 || o->block < 2 || o->block % 2 || o->delta < 1 || o->batch - o->delta < 1)
		return lbs_error_set(err, LBS_EINTERNAL, "resize: %d rounds of %d iterations at %lld +/- %lld",
				     o->rounds, o->block, (long long)o->batch, (long long)o->delta);
	for (int k = 0; k < o->rounds; k++)
		if (o->fresh[k] == o->batch || o->fresh[k] == o->batch - o->delta ||
		    o->fresh[k] == o->batch + o->delta)
			return lbs_error_set(err, LBS_EINTERNAL, "resize: fresh batch %lld is run before",
					     (long long)o->fresh[k]);
	double *resize = calloc((size_t)o->rounds, sizeof *resize);
	double *against_b = calloc((size_t)o->rounds, sizeof *against_b);
	double *fresh = calloc((size_t)o->rounds, sizeof *fresh);
	double *first = calloc((size_t)o->rounds, sizeof *first);
	if (!resize || !against_b || !fresh || !first) {
		free(resize);
		free(against_b);
		free(fresh);
		free(first);
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	}
	/* Each of the three batches of the comparison runs before anything is
	 * timed, so that the alternating block pays for changing the batch
	 * and not for new batches. */
	lbs_status st = LBS_OK;
	for (int k = 0; k < 6 && st == LBS_OK; k++)
		st = run(b, o->batch + (k % 3 - 1) * o->delta, NULL, err);
	for (int k = 0; k < o->rounds && st == LBS_OK; k++) {
		lbs_resize_round rr = { .round = k, .fresh = o->fresh[k] };
		/* Which block comes first turns from round to round, so that a
		 * drift of the machine within a round, and whatever one block
		 * leaves the next, weigh on every block alike over the rounds. */
		for (int j = 0; j < 3 && st == LBS_OK; j++)
			switch ((k + j) % 3) {
			case 0: st = split_block(b, o, &rr.split_s, err); break;
			case 1: st = alternating_block(b, o, &rr.alternating_s, err); break;
			default: st = constant_block(b, o->batch, o->block, &rr.constant_s, err); break;
			}
		/* A fresh batch: its first run after a run of b (a change, as
		 * its next run after b is too: the two differ by its being new
		 * alone, which is how the simulation composes the two costs),
		 * then back to back, where it changes nothing. */
		double rep[LBS_RESIZE_REPEATS];
		if (st == LBS_OK && (st = run(b, o->batch, NULL, err)) == LBS_OK &&
		    (st = run(b, o->fresh[k], &rr.first_s, err)) == LBS_OK &&
		    (st = run(b, o->batch, NULL, err)) == LBS_OK)
			st = run(b, o->fresh[k], &rr.reentry_s, err);
		for (int j = 0; j < LBS_RESIZE_REPEATS && st == LBS_OK; j++)
			st = run(b, o->fresh[k], &rep[j], err);
		if (st != LBS_OK)
			break;
		rr.repeated_s = lbs_calib_median(rep, LBS_RESIZE_REPEATS);
		resize[k] = rr.alternating_s / rr.split_s - 1;
		against_b[k] = rr.alternating_s / rr.constant_s - 1;
		fresh[k] = rr.first_s / rr.reentry_s - 1;
		first[k] = rr.first_s / rr.repeated_s - 1;
		if (b->report)
			b->report(b->ctx, &rr);
	}
	if (st != LBS_OK) {
		free(resize);
		free(against_b);
		free(fresh);
		free(first);
		return st;
	}
	size_t n = (size_t)o->rounds;
	summarise(resize, n, &r->resize_cost, &r->resize_lo, &r->resize_hi);
	summarise(against_b, n, &r->against_b, &r->against_b_lo, &r->against_b_hi);
	summarise(fresh, n, &r->new_batch_cost, &r->new_lo, &r->new_hi);
	summarise(first, n, &r->first_vs_repeated, &r->first_lo, &r->first_hi);
	free(resize);
	free(against_b);
	free(fresh);
	free(first);
	return LBS_OK;
}
