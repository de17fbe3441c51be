/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/policy.h"

const lbs_policy_ops *const lbs_policies[] = {
	&lbs_policy_static,
	&lbs_policy_static_proportional,
	&lbs_policy_dbs,
	&lbs_policy_lbbsp_gpu,
	&lbs_policy_lbbsp_cpu,
	&lbs_policy_work_stealing,
	&lbs_policy_oracle,
	NULL,
};

const lbs_policy_ops *lbs_policy_find(const char *name)
{
	for (size_t i = 0; lbs_policies[i]; i++)
		if (strcmp(lbs_policies[i]->name, name) == 0)
			return lbs_policies[i];
	return NULL;
}

void lbs_policy_names(char *buf, size_t len)
{
	buf[0] = '\0';
	for (size_t i = 0; lbs_policies[i]; i++) {
		if (i)
			strncat(buf, ", ", len - strlen(buf) - 1);
		strncat(buf, lbs_policies[i]->name, len - strlen(buf) - 1);
	}
}

void lbs_policy_document(FILE *out)
{
	fprintf(out, "\nPolicies:\n\n| `name` | what it does |\n|---|---|\n");
	for (size_t i = 0; lbs_policies[i]; i++)
		fprintf(out, "| `%s` | %s |\n", lbs_policies[i]->name, lbs_policies[i]->summary);
	for (size_t i = 0; lbs_policies[i]; i++)
		if (lbs_policies[i]->n_options) {
			fprintf(out, "\n### [policy.%s]\n\n", lbs_policies[i]->name);
			lbs_keys_document(out, lbs_policies[i]->options, lbs_policies[i]->n_options);
		}
}

void lbs_split_even(int64_t total, size_t n, int64_t *batch)
{
	int64_t base = total / (int64_t)n, extra = total % (int64_t)n;
	for (size_t i = 0; i < n; i++)
		batch[i] = base + ((int64_t)i < extra);
}

typedef struct frac_idx {
	double frac;
	size_t i;
} frac_idx;

/* Largest fraction first; ties to the lower index (deterministic). */
static int by_frac_desc(const void *a, const void *b)
{
	const frac_idx *x = a, *y = b;
	if (x->frac != y->frac)
		return x->frac > y->frac ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

bool lbs_split_proportional(int64_t total, size_t n, const double *weight, const int64_t *caps,
			    int64_t *batch)
{
	double *x = calloc(n, sizeof *x);
	bool *fixed = calloc(n, sizeof *fixed);
	frac_idx *f = calloc(n, sizeof *f);
	bool ok = x && fixed && f;
	/* Water-filling: share in proportion to weight; whoever would exceed its
	 * cap is fixed at it and the rest is shared again. */
	for (bool again = ok; again;) {
		again = false;
		double w = 0, rest = (double)total;
		for (size_t i = 0; i < n; i++) {
			if (fixed[i])
				rest -= (double)caps[i];
			else
				w += weight[i];
		}
		if (rest > 0 && !(w > 0)) {
			ok = false;
			break;
		}
		for (size_t i = 0; i < n; i++) {
			if (fixed[i])
				continue;
			x[i] = rest > 0 ? rest * weight[i] / w : 0.0;
			if (caps && x[i] > (double)caps[i]) {
				x[i] = (double)caps[i];
				fixed[i] = again = true;
			}
		}
	}
	if (ok) {
		int64_t sum = 0;
		for (size_t i = 0; i < n; i++) {
			batch[i] = (int64_t)floor(x[i]);
			sum += batch[i];
			f[i] = (frac_idx){ x[i] - floor(x[i]), i };
		}
		qsort(f, n, sizeof *f, by_frac_desc);
		/* Hand out (or, after rounding error, take back) the remainder. */
		for (size_t k = 0; sum < total && k < n; k++)
			if (!caps || batch[f[k].i] < caps[f[k].i]) {
				batch[f[k].i]++;
				sum++;
			}
		for (size_t k = n; sum > total && k-- > 0;)
			if (batch[f[k].i] > 0) {
				batch[f[k].i]--;
				sum--;
			}
		ok = sum == total;
	}
	free(x);
	free(fixed);
	free(f);
	return ok;
}

void lbs_probe_count(int64_t *idle, size_t n, const int64_t *last_batch)
{
	for (size_t i = 0; i < n; i++)
		idle[i] = last_batch[i] > 0 ? 0 : idle[i] + 1;
}

size_t lbs_probe_give(int64_t *batch, size_t n, const int64_t *caps, const int64_t *idle, int64_t every)
{
	size_t probes = 0;
	for (size_t i = 0; every > 0 && i < n; i++) {
		if (batch[i] > 0 || idle[i] < every || (caps && caps[i] < 1))
			continue;
		size_t donor = n;
		for (size_t j = 0; j < n; j++)
			if (j != i && batch[j] > 0 && (donor == n || batch[j] > batch[donor]))
				donor = j;
		if (donor == n)
			continue;
		batch[donor]--;
		batch[i]++;
		probes++;
	}
	return probes;
}
