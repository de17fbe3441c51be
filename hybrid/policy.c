/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The hybrid policies' registry and the helpers they share (hybrid/policy.h). */
#include "hybrid/policy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const lbs_hy_policy_ops *const lbs_hy_policies[] = {
	&lbs_hy_policy_static, &lbs_hy_policy_lbbsp, &lbs_hy_policy_dbs, &lbs_hy_policy_oracle,
	&lbs_hy_policy_resplit, &lbs_hy_policy_ladder,
	&lbs_hy_policy_pack, NULL,
};

const lbs_hy_policy_ops *lbs_hy_policy_find(const char *name)
{
	for (size_t i = 0; lbs_hy_policies[i]; i++)
		if (!strcmp(lbs_hy_policies[i]->name, name))
			return lbs_hy_policies[i];
	return NULL;
}

void lbs_hy_policy_names(char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = '\0';
	for (size_t i = 0; lbs_hy_policies[i] && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : "", lbs_hy_policies[i]->name);
}

void lbs_hy_policy_document(FILE *out)
{
	fprintf(out, "\nHybrid policies (`[hybrid_policy] name`):\n\n| `name` | what it does |\n|---|---|\n");
	for (size_t i = 0; lbs_hy_policies[i]; i++)
		fprintf(out, "| `%s` | %s |\n", lbs_hy_policies[i]->name, lbs_hy_policies[i]->summary);
	for (size_t i = 0; lbs_hy_policies[i]; i++)
		if (lbs_hy_policies[i]->n_options) {
			fprintf(out, "\n### [hybrid_policy.%s]\n\n", lbs_hy_policies[i]->name);
			lbs_keys_document(out, lbs_hy_policies[i]->options, lbs_hy_policies[i]->n_options);
		}
}

bool lbs_hy_split(int M, int d, int quantum, const double *speed, const int64_t *max_m, int *m_of)
{
	int q = quantum > 0 ? quantum : 1;
	if (d < 1 || M % q || M / q < d)
		return false;
	for (int r = 0; r < d; r++)
		if (!(speed[r] > 0) || !isfinite(speed[r]))
			return false;
	int64_t *caps = malloc((size_t)d * sizeof *caps), *share = malloc((size_t)d * sizeof *share);
	bool ok = caps && share;
	for (int r = 0; ok && r < d; r++) {
		caps[r] = max_m ? max_m[r] / q : INT64_MAX;
		ok = caps[r] >= 1;
	}
	/* in quanta: proportional within the caps, then a replica left with
	 * none gets one from the largest share that can spare one (every
	 * replica holds its stages' parameters, so it must run something) */
	ok = ok && lbs_split_proportional(M / q, (size_t)d, speed, caps, share);
	for (int r = 0; ok && r < d; r++) {
		if (share[r] >= 1)
			continue;
		int big = -1;
		for (int k = 0; k < d; k++)
			if (share[k] >= 2 && (big < 0 || share[k] > share[big]))
				big = k;
		ok = big >= 0;
		if (ok)
			share[big]--, share[r]++;
	}
	for (int r = 0; ok && r < d; r++)
		m_of[r] = (int)share[r] * q;
	free(caps);
	free(share);
	return ok;
}

double lbs_hy_replica_speed(int m_r, int p, const double *compute_s_of_replica)
{
	double worst = 0;
	for (int s = 0; s < p; s++)
		worst = fmax(worst, compute_s_of_replica[s]);
	return worst > 0 ? (double)m_r / worst : NAN;
}

bool lbs_hy_partition(int n, int p, const double *cost, const int *max_b, int *b)
{
	if (p < 1 || n < p)
		return false;
	for (int s = 0; s < p; s++) {
		b[s] = 1;
		if (max_b && max_b[s] < 1)
			return false;
	}
	for (int k = p; k < n; k++) {
		int best = -1;
		double t = INFINITY;
		for (int s = 0; s < p; s++) {
			if (max_b && b[s] >= max_b[s])
				continue;
			double x = (b[s] + 1) * cost[s];
			if (x < t)
				t = x, best = s;
		}
		if (best < 0)
			return false;
		b[best]++;
	}
	return true;
}

lbs_status lbs_hy_resplit_by_speed(const lbs_hy_policy_env *env, const double *speed, int *m_of, bool *changed,
				   lbs_error *err)
{
	size_t d = (size_t)env->d;
	int *next = malloc(d * sizeof *next);
	if (!next)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	if (lbs_hy_split(env->total_m, env->d, env->quantum, speed, env->max_m, next)) {
		*changed = memcmp(next, m_of, d * sizeof *next) != 0;
		memcpy(m_of, next, d * sizeof *next);
	}
	free(next);
	return LBS_OK;
}
