/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "sim/efficiency.h"

#include <math.h>

double lbs_staleness_weight(int penalty, double exponent, int64_t tau)
{
	if (penalty == LBS_STALE_NONE || tau <= 1)
		return 1.0;
	return exponent == 1.0 ? 1.0 / (double)tau : pow((double)tau, -exponent);
}

double lbs_gns_step_progress(const lbs_convergence_spec *cv, int64_t batch, double weight)
{
	if (batch <= 0)
		return 0.0;
	return weight * (double)batch / (cv->min_steps * ((double)batch + cv->noise_scale));
}
