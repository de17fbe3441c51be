/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Cost profiles: the measured or published times of one model on one
 * device, the cost model fitted to them, how well it fits, and where the
 * numbers come from. An INI file (doc/profiles.md) read and validated like a
 * scenario: every error names the file, the line and the key. A scenario's
 * worker group names one with `profile = PATH`. */
#ifndef LBS_PROFILE_H
#define LBS_PROFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "models/calib.h"
#include "models/cost.h"
#include "util/keys.h"

#define LBS_PROFILE_FORMAT 1
#define LBS_PROFILE_DEVICE_CHOICES "cpu|gpu"
#define LBS_PROFILE_SOURCE_CHOICES "table|blas|cuda|measured|torch|datasheet"
#define LBS_PROFILE_COST_KEYS 11 /* cost, t0, per_sample, t_flat, saturation_batch, exponent,
				   per_sample_sq, flat_below, max_batch, resize_cost, new_batch_cost */

typedef enum lbs_profile_source {
	LBS_SOURCE_TABLE,
	LBS_SOURCE_BLAS,
	LBS_SOURCE_CUDA,
	LBS_SOURCE_MEASURED, /* a user's own step times, lbsim calibrate --fit */
	LBS_SOURCE_TORCH,    /* PyTorch training steps, lbsim calibrate --torch */
	LBS_SOURCE_DATASHEET /* predicted from a GPU's datasheet, lbsim calibrate --datasheet */
} lbs_profile_source;

/* One measured batch: the median time and the relative spread of the
 * repetitions, (max - min) / median (NAN when not measured here). */
typedef struct lbs_profile_point {
	int64_t batch;
	double time_s;
	double spread;
} lbs_profile_point;

typedef struct lbs_profile {
	char path[1024];
	/* [profile] */
	int64_t format;
	char device[LBS_VALUE_MAX];      /* the device, e.g. "NVIDIA Tesla V100 (Gavel)" */
	int device_class;                /* index in LBS_PROFILE_DEVICE_CHOICES */
	char model[LBS_VALUE_MAX];       /* the model trained, e.g. "ResNet-50 (ImageNet)" */
	char description[LBS_VALUE_MAX];
	/* [cost]: the same keys, units and ranges as a [workers.NAME] section */
	lbs_cost cost;                   /* max_batch INT64_MAX when none is given */
	lbs_kv cost_kv[LBS_PROFILE_COST_KEYS]; /* the [cost] entries as written */
	size_t n_cost_kv;
	bool has_resize;                 /* [cost] gives resize_cost or new_batch_cost (calibrate
					    --resize measured them): both are written */
	/* [fit] */
	char method[LBS_VALUE_MAX];
	int64_t points;
	double r2, rmse_s, mape;         /* in sample; mape as a fraction */
	double heldout_mape;             /* NAN when not given */
	int64_t heldout_points;
	/* [source] */
	int source;                      /* lbs_profile_source */
	char origin[LBS_VALUE_MAX];      /* how and where it was measured */
	char data[LBS_VALUE_MAX];        /* the data file, relative to the source tree */
	char licence[LBS_VALUE_MAX];
	char host[LBS_VALUE_MAX];        /* the machine or device measured */
	char software[LBS_VALUE_MAX];    /* versions of what measured it */
	char command[LBS_VALUE_MAX];     /* the command that wrote this profile */
	char date[LBS_VALUE_MAX];
	int64_t threads, reps, warmup;   /* 0 when not given */
	/* [measurements] (and [spread]), by increasing batch */
	lbs_profile_point *point;
	size_t n_points;
} lbs_profile;

/* Reads and validates the profile at `path`. On error returns LBS_EINPUT
 * with a message "path:line: [section] key: what was expected". */
lbs_status lbs_profile_load(lbs_profile *p, const char *path, lbs_error *err);

/* The relative standard deviation of one timed repetition that p's
 * [spread] implies: the median over its points of (max - min) / median of
 * `reps` repetitions, over the expected range of that many normal draws
 * (lbs_expected_range). 0 when p has no spread or fewer than 2 reps. */
double lbs_profile_noise_sigma(const lbs_profile *p);

/* Frees the points; the rest is plain data. */
void lbs_profile_destroy(lbs_profile *p);

/* Fills p's [cost] and [fit] from a fit to its points (p->cost.max_batch
 * is kept) and the held-out accuracy of the same kind of fit. */
lbs_status lbs_profile_fit(lbs_profile *p, const lbs_cost_ops *kind, lbs_error *err);

/* The same for a linear profile of medians timed on a shared machine,
 * fitted robustly (lbs_calib_fit_robust), and its [fit] method, which
 * says whether the fit was robust: weight[0..n_points) gets each point's
 * weight, *n_out the points weighted out. */
lbs_status lbs_profile_fit_robust(lbs_profile *p, double *weight, size_t *n_out, lbs_error *err);
/* p's points as two new arrays (free both): batches and times in seconds. */
lbs_status lbs_profile_point_arrays(const lbs_profile *p, double **batch, double **time_s, lbs_error *err);

/* p's measured times as a new table of every batch from 1 to its largest
 * measured one (lbs_cost_table_fill; *n entries, free it), for
 * `profile_cost = measured`. *table NULL and *n 0 when p has no points or
 * its largest batch is over LBS_COST_TABLE_MAX; LBS_EINTERNAL when out of
 * memory. */
lbs_status lbs_profile_cost_table(const lbs_profile *p, double **table, int64_t *n, lbs_error *err);

/* Writes p in the documented format (the form lbs_profile_load reads back).
 * Fails with LBS_EINTERNAL if a value would make a line longer than a
 * profile line may be. */
lbs_status lbs_profile_write(const lbs_profile *p, FILE *out, lbs_error *err);

/* Writes the Markdown reference of the profile keys (doc/profiles.md). */
void lbs_profile_document(FILE *out);

#endif
