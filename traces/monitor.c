/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "traces/monitor.h"

#include <math.h>
#include <string.h>

#include "util/rng.h"

double lbs_monitor_sample_time(const lbs_monitor_params *p, double t, uint64_t *index)
{
	double s = t - p->lag_s > 0 ? t - p->lag_s : 0.0;
	if (p->period_s > 0) {
		double k = floor(s / p->period_s);
		*index = (uint64_t)k;
		return k * p->period_s;
	}
	memcpy(index, &s, sizeof s);
	return s;
}

double lbs_monitor_error(uint64_t seed, uint64_t index, int kind)
{
	/* Box-Muller from two 32-bit uniforms of the sample's own taus2
	 * state: u1 in (0, 1], so the logarithm is finite. */
	lbs_taus2 t;
	lbs_taus2_seed(&t, lbs_rng_seed_of(seed, index, (uint64_t)kind));
	double u1 = ((double)lbs_taus2_get(&t) + 1.0) / 4294967296.0;
	double u2 = lbs_taus2_uniform(&t);
	return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

double lbs_monitor_read(const lbs_monitor *m, lbs_avail *a, double t, int64_t iteration, int kind)
{
	if (lbs_monitor_exact(&m->p))
		return lbs_avail_reading(a, t, iteration, kind);
	uint64_t index;
	double s = lbs_monitor_sample_time(&m->p, t, &index);
	double v = lbs_avail_reading(a, s, iteration, kind);
	if (!isfinite(v) || m->p.noise == 0)
		return v;
	v += m->p.noise * lbs_monitor_error(m->seed, index, kind);
	return v < 0 ? 0.0 : v > 1 ? 1.0 : v;
}
