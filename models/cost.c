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

static double measured_time(const lbs_cost *c, int64_t b)
{
	if (b <= c->table_n)
		return c->table_s[b - 1];
	return c->table_s[c->table_n - 1] + c->per_sample_s * (double)(b - c->table_n);
}

const lbs_cost_ops lbs_cost_measured = {
	"measured", "the profile's measured times, linear between its batches", measured_time
};

void lbs_cost_table_fill(const int64_t *batch, const double *time_s, size_t m, double *t)
{
	size_t k = 0; /* the first point at or past b */
	for (int64_t b = 1; b <= batch[m - 1]; b++) {
		while (batch[k] < b)
			k++;
		if (batch[k] == b)
			t[b - 1] = time_s[k];
		else if (k == 0)
			t[b - 1] = time_s[0] * (double)b / (double)batch[0];
		else
			t[b - 1] = time_s[k - 1] + (time_s[k] - time_s[k - 1]) * (double)(b - batch[k - 1]) /
							   (double)(batch[k] - batch[k - 1]);
	}
}
