/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <stddef.h>

#include "models/cost.h"

static double linear_time(const lbs_cost *c, int64_t b) { return lbs_cost_linear_s(c, b); }

static double piecewise_time(const lbs_cost *c, int64_t b) { return lbs_cost_piecewise_s(c, b); }

const lbs_cost_ops lbs_cost_linear = { "linear", "t(b) = t0 + per_sample * b", linear_time };
const lbs_cost_ops lbs_cost_piecewise = {
	"piecewise", "t(b) = t_flat up to saturation_batch, then + per_sample per extra sample",
	piecewise_time
};

static double power_time(const lbs_cost *c, int64_t b) { return lbs_cost_power_s(c, b); }

static double quadratic_time(const lbs_cost *c, int64_t b) { return lbs_cost_quadratic_s(c, b); }

const lbs_cost_ops lbs_cost_power = { "power", "t(b) = t0 + per_sample * b^exponent", power_time };
const lbs_cost_ops lbs_cost_quadratic = {
	"quadratic", "t(b) = t0 + per_sample * b + per_sample_sq * b^2", quadratic_time
};

const lbs_cost_ops *const lbs_cost_kinds[] = { &lbs_cost_linear, &lbs_cost_piecewise, &lbs_cost_power,
					       &lbs_cost_quadratic, NULL };
