/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Compute cost models: the time a device takes for one iteration's forward
 * and backward pass over `batch` samples at full availability, and the
 * largest batch its memory holds.
 *
 * Cost kinds plug in through lbs_cost_ops; the registry lbs_cost_kinds[]
 * lists them in the order of the scenario key `cost`'s choices. */
#ifndef LBS_COST_H
#define LBS_COST_H

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
	double t0_s;              /* linear: fixed time per iteration */
	double per_sample_s;      /* linear: time per sample; piecewise: slope past saturation */
	double t_flat_s;          /* piecewise: time of any batch up to saturation */
	int64_t saturation_batch; /* piecewise: batch at which the device saturates */
	int64_t max_batch;        /* memory cap in samples */
} lbs_cost;

/* t(b) = t0 + c*b: CPUs, whose time is linear in the batch (Chen et al.,
 * SoCC'20, section 4). */
extern const lbs_cost_ops lbs_cost_linear;
/* t(b) = t_flat for b <= b_sat, t_flat + c*(b - b_sat) above: GPUs are
 * under-used by small batches and linear once saturated. */
extern const lbs_cost_ops lbs_cost_piecewise;

extern const lbs_cost_ops *const lbs_cost_kinds[];
#define LBS_COST_CHOICES "linear|piecewise"

/* The two kinds' formulas, inline for the run's per-worker loop. */
static inline double lbs_cost_linear_s(const lbs_cost *c, int64_t b)
{
	return c->t0_s + c->per_sample_s * (double)b;
}

static inline double lbs_cost_piecewise_s(const lbs_cost *c, int64_t b)
{
	int64_t over = b - c->saturation_batch;
	return over > 0 ? c->t_flat_s + c->per_sample_s * (double)over : c->t_flat_s;
}

/* t(batch), 0 for batch 0; the built-in kinds without an indirect call. */
static inline double lbs_cost_time_s(const lbs_cost *c, int64_t batch)
{
	if (batch <= 0)
		return 0.0;
	if (c->ops == &lbs_cost_linear)
		return lbs_cost_linear_s(c, batch);
	if (c->ops == &lbs_cost_piecewise)
		return lbs_cost_piecewise_s(c, batch);
	return c->ops->time_s(c, batch);
}

#endif
