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

/* Room in quanta of each worker, each term at most U: the sum then
 * reaches 2U only if every holder leaves room enough, and stops there, so
 * it cannot overflow. */
static int64_t room_q(int64_t cap, int64_t q, int64_t U)
{
	int64_t r = cap / q;
	return r < U ? r : U;
}

/* The holder of the remainder R: the largest batch (ties: the lower index)
 * among the workers that can hold R and leave room for U quanta; batch
 * NULL: any worker that can. n when none can (R = 0: no holder needed,
 * n with *ok true). */
static size_t quantum_holder(int64_t total, size_t n, int64_t q, const int64_t *caps, const int64_t *batch,
			     bool *ok)
{
	const int64_t R = total % q, U = total / q;
	int64_t room = 0;
	for (size_t i = 0; i < n && room < 2 * U; i++)
		room += caps ? room_q(caps[i], q, U) : U;
	room = room < 2 * U ? room : 2 * U;
	if (R == 0) {
		*ok = room >= U;
		return n;
	}
	size_t best = n;
	for (size_t i = 0; i < n; i++) {
		int64_t cap = caps ? caps[i] : INT64_MAX;
		if (cap < R)
			continue;
		int64_t own = caps ? room_q(cap, q, U) : U;
		if (room - own + room_q(cap - R, q, U) < U)
			continue;
		if (!batch)
			return *ok = true, i;
		if (best == n || batch[i] > batch[best])
			best = i;
	}
	*ok = best < n;
	return best;
}

bool lbs_quantum_fits(int64_t total, size_t n, int64_t quantum, const int64_t *caps)
{
	bool ok = true;
	if (quantum > 1)
		quantum_holder(total, n, quantum, caps, NULL, &ok);
	return ok;
}

bool lbs_quantise(int64_t total, size_t n, int64_t quantum, const int64_t *caps, int64_t *batch)
{
	if (quantum <= 1)
		return true;
	const int64_t q = quantum, R = total % q, U = total / q;
	bool ok;
	size_t h = quantum_holder(total, n, q, caps, batch, &ok);
	if (!ok)
		return false;
	double *w = calloc(n, sizeof *w);
	int64_t *room = calloc(n, sizeof *room), *units = calloc(n, sizeof *units);
	ok = w && room && units;
	for (size_t i = 0; ok && i < n; i++) {
		int64_t cap = caps ? caps[i] : INT64_MAX;
		w[i] = (double)(i == h ? (batch[i] > R ? batch[i] - R : 0) : batch[i]);
		room[i] = room_q(i == h ? cap - R : cap, q, U);
	}
	if (ok && !lbs_split_proportional(U, n, w, room, units)) {
		/* The workers with a share are all at their room: fill them, and
		 * share the other quanta evenly over the rest. */
		int64_t rest = U;
		for (size_t i = 0; i < n; i++) {
			units[i] = w[i] > 0 ? room[i] : 0;
			rest -= units[i];
			room[i] = w[i] > 0 ? 0 : room[i];
			w[i] = w[i] > 0 ? 0.0 : 1.0;
		}
		int64_t *more = calloc(n, sizeof *more);
		ok = more && rest >= 0 && lbs_split_proportional(rest, n, w, room, more);
		for (size_t i = 0; ok && i < n; i++)
			units[i] += more[i];
		free(more);
	}
	for (size_t i = 0; ok && i < n; i++)
		batch[i] = units[i] * q + (i == h ? R : 0);
	free(w);
	free(room);
	free(units);
	return ok;
}

lbs_status lbs_quantum_check(const lbs_policy_env *env, const char *section, const lbs_kv *options,
			     size_t n_options, int64_t quantum, lbs_error *err)
{
	if (quantum <= 1)
		return LBS_OK;
	lbs_origin at = { NULL, 0 };
	for (size_t i = 0; i < n_options; i++)
		if (!strcmp(options[i].key, "quantum"))
			at = options[i].at;
	char label[512];
	lbs_origin_format(&at, section, "quantum", label, sizeof label);
	if (quantum > env->global_batch)
		return lbs_error_set(err, LBS_EINPUT, "%s: %lld samples is more than the global batch (%lld)",
				     label, (long long)quantum, (long long)env->global_batch);
	if (!lbs_quantum_fits(env->global_batch, env->n_workers, quantum, env->max_batch))
		return lbs_error_set(err, LBS_EINPUT,
				     "%s: the memory caps (max_batch) cannot hold the global batch (%lld) in "
				     "multiples of %lld samples, with the remainder %lld on one worker",
				     label, (long long)env->global_batch, (long long)quantum,
				     (long long)(env->global_batch % quantum));
	return LBS_OK;
}

double lbs_resize_gain(size_t n, const int64_t *cur, const int64_t *plan, const double *tau, double cost,
		       double horizon)
{
	double keep = 0, bare = 0, paid = 0;
	for (size_t i = 0; i < n; i++) {
		double a = cur[i] > 0 ? (double)cur[i] * tau[i] : 0.0;
		double b = plan[i] > 0 ? (double)plan[i] * tau[i] : 0.0;
		double c = plan[i] != cur[i] ? b * (1 + cost) : b;
		keep = a > keep ? a : keep;
		bare = b > bare ? b : bare;
		paid = c > paid ? c : paid;
	}
	/* Keeping a worker of unknown time is never preferred (and inf - inf
	 * would be NaN, which no policy variable may be). */
	if (isinf(keep))
		return INFINITY;
	if (isinf(bare))
		return -INFINITY;
	return horizon * (keep - bare) - (paid - bare);
}

void lbs_probe_count(int64_t *idle, size_t n, const int64_t *last_batch)
{
	for (size_t i = 0; i < n; i++)
		idle[i] = last_batch[i] > 0 ? 0 : idle[i] + 1;
}

size_t lbs_probe_give(int64_t *batch, size_t n, const int64_t *caps, const int64_t *idle, int64_t every)
{
	return lbs_probe_give_n(batch, n, caps, idle, every, 1);
}

size_t lbs_probe_give_n(int64_t *batch, size_t n, const int64_t *caps, const int64_t *idle, int64_t every,
			int64_t samples)
{
	size_t probes = 0;
	for (size_t i = 0; every > 0 && i < n; i++) {
		if (batch[i] > 0 || idle[i] < every || (caps && caps[i] < samples))
			continue;
		size_t donor = n;
		for (size_t j = 0; j < n; j++)
			if (j != i && batch[j] > 0 && (donor == n || batch[j] > batch[donor]))
				donor = j;
		if (donor == n || batch[donor] < samples)
			continue;
		batch[donor] -= samples;
		batch[i] += samples;
		probes++;
	}
	return probes;
}
