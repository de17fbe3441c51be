/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Compute cost models: the time a device takes for one iteration's forward
 * and backward pass over `batch` samples at full availability, and the
 * largest batch its memory holds.
 *
 * Cost kinds plug in through lbs_cost_ops; the registry lbs_cost_kinds[]
 * lists them in the order of the scenario key `cost`'s choices. */
#ifndef LBS_COST_H
#define LBS_COST_H

#include <math.h>
#include <stdint.h>

struct lbs_cost;

typedef struct lbs_cost_ops {
	const char *name;
	const char *summary;
	/* Time in seconds for `batch` > 0 samples (batch 0 costs nothing). */
	double (*time_s)(const struct lbs_cost *c, int64_t batch);
} lbs_cost_ops;

typedef struct lbs_cost {
	const lbs_cost_ops *ops;
	int kind;                 /* index in lbs_cost_kinds[] */
	double t0_s;              /* linear, power, quadratic: fixed time per iteration */
	double per_sample_s;      /* linear, quadratic: time per sample; piecewise: slope past
				     saturation; power: the coefficient of b^exponent */
	double exponent;          /* power: p > 0 */
	double per_sample_sq_s;   /* quadratic: the coefficient of b^2 */
	int64_t flat_below;       /* power, quadratic: a batch below this one takes t(flat_below) */
	double t_flat_s;          /* piecewise: time of any batch up to saturation */
	int64_t saturation_batch; /* piecewise: batch at which the device saturates */
	int64_t max_batch;        /* memory cap in samples */
	const double *table_s;    /* measured: the time of batch b at table_s[b - 1], b <= table_n */
	int64_t table_n;
	/* What changing the batch costs a worker by itself (every kind; 0:
	 * nothing; doc/model.md, "Re-sizing"): its work for a batch other than
	 * the one it last ran is multiplied by 1 + resize_cost (a framework's
	 * allocator handing memory back and faulting it in again), and for a
	 * batch it has never run by 1 + new_batch_cost (kernels or primitives
	 * built for a new shape); its first batch pays neither. */
	double resize_cost;
	double new_batch_cost;
} lbs_cost;

/* t(b) = t0 + c*b: CPUs, whose time is linear in the batch (Chen et al.,
 * SoCC'20, section 4). */
extern const lbs_cost_ops lbs_cost_linear;
/* t(b) = t_flat for b <= b_sat, t_flat + c*(b - b_sat) above: GPUs are
 * under-used by small batches and linear once saturated. */
extern const lbs_cost_ops lbs_cost_piecewise;
/* t(b) = t0 + per_sample*b^p, p > 0: a GPU whose time grows faster (p > 1)
 * or slower (p < 1) than the batch, with no sharp saturation point. Below
 * flat_below (the smallest batch measured, for a fitted profile), the time
 * of flat_below, as piecewise is flat there: the same for quadratic. */
extern const lbs_cost_ops lbs_cost_power;
#define LBS_COST_EXPONENT_MAX 4.0 /* the largest exponent a profile or scenario may give */
/* t(b) = t0 + per_sample*b + per_sample_sq*b^2: a time that curves upward. */
extern const lbs_cost_ops lbs_cost_quadratic;

/* A profile's measured times themselves ([measurements], a scenario's
 * `profile_cost = measured`): linear between the measured batches, the
 * smallest one's time per sample below it, and per_sample (the fit's
 * slope) per sample past the largest. Not one of lbs_cost_kinds[]: it
 * takes its table from a profile, and it need not be non-decreasing (a
 * GEMM of 40 samples can be faster than one of 39). */
extern const lbs_cost_ops lbs_cost_measured;
#define LBS_COST_TABLE_MAX 1048576 /* the largest batch a measured table is kept for */

/* Fills t[0..n) with the time of each batch 1..n = batch[m - 1] from m
 * measured points (batch ascending, distinct, >= 1) as lbs_cost_measured
 * reads them. */
void lbs_cost_table_fill(const int64_t *batch, const double *time_s, size_t m, double *t);

/* Every kind is non-decreasing in b for b >= 1 with its keys' ranges
 * (t0, per_sample, per_sample_sq >= 0, exponent > 0): policies and the
 * oracle's look-ahead rely on that. */
extern const lbs_cost_ops *const lbs_cost_kinds[];
#define LBS_COST_CHOICES "linear|piecewise|power|quadratic"

/* The kinds' formulas, inline for the run's per-worker loop. */
static inline double lbs_cost_linear_s(const lbs_cost *c, int64_t b)
{
	return c->t0_s + c->per_sample_s * (double)b;
}

static inline double lbs_cost_piecewise_s(const lbs_cost *c, int64_t b)
{
	int64_t over = b - c->saturation_batch;
	return over > 0 ? c->t_flat_s + c->per_sample_s * (double)over : c->t_flat_s;
}

static inline double lbs_cost_power_s(const lbs_cost *c, int64_t b)
{
	double x = (double)(b < c->flat_below ? c->flat_below : b);
	return c->t0_s + c->per_sample_s * pow(x, c->exponent);
}

static inline double lbs_cost_quadratic_s(const lbs_cost *c, int64_t b)
{
	double x = (double)(b < c->flat_below ? c->flat_below : b);
	return c->t0_s + (c->per_sample_s + c->per_sample_sq_s * x) * x;
}

/* t(batch), 0 for batch 0; the built-in kinds without an indirect call
 * (linear and piecewise tested first, as before the others came). */
static inline double lbs_cost_time_s(const lbs_cost *c, int64_t batch)
{
	if (batch <= 0)
		return 0.0;
	if (c->ops == &lbs_cost_linear)
		return lbs_cost_linear_s(c, batch);
	if (c->ops == &lbs_cost_piecewise)
		return lbs_cost_piecewise_s(c, batch);
	if (c->ops == &lbs_cost_power)
		return lbs_cost_power_s(c, batch);
	if (c->ops == &lbs_cost_quadratic)
		return lbs_cost_quadratic_s(c, batch);
	return c->ops->time_s(c, batch);
}

#endif
