/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Counterfactual policies: the no-delay replay again, with the compute
 * work redistributed as a balancing policy would have done it from the
 * trace's own measurements (doc/whatif.md, "Counterfactual policies").
 * The graph stays the template's; what moves is the work in each compute:
 *
 * - micro-batch counts per DP replica (lbsim's batch-size policies applied
 *   across replicas): replica i gets b_i of the step's D x m micro-batches
 *   (integers, largest remainders, at least 1), in proportion to its
 *   measured speed, 1 / (its bottleneck stage's compute time); replayed as
 *   its m micro-batches each b_i / m times as long. static-proportional
 *   measures once over the whole trace, dbs from the previous traced step
 *   (the first step keeps equal counts), oracle from the step itself;
 *   lbbsp searches, moving micro-batches from the straggler to the leader
 *   after each step;
 * - repartition: layers moved between stages so that every stage has the
 *   mean stage's compute time (measured over the trace): stage j's
 *   computes scaled by mean / W_j (layers taken as divisible);
 * - microbatch-balance: the sequences of each replica's step regrouped so
 *   that its micro-batches cost the same: each compute of a (step, dp_rank,
 *   stage, direction) at the mean of its m micro-batches; global: the same
 *   over all replicas of the step (the global batch regrouped);
 * - and the two together (repartition + global balance).
 *
 * Communication keeps its traced transfer times. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "whatif/whatif.h"

static bool is_compute(const lbs_wi_model *m, size_t v)
{
	return m->type[v] == LBS_OP_FORWARD_COMPUTE || m->type[v] == LBS_OP_BACKWARD_COMPUTE;
}

/* work[(si * D + dp) * P + stage]: compute seconds of a worker in a step. */
static void stage_work(const lbs_wi_model *m, const double *val, double *work)
{
	size_t n = m->n_ops, P = (size_t)m->P;
	memset(work, 0, m->n_inst * P * sizeof *work);
	for (size_t inst = 0; inst < m->n_inst; inst++)
		for (size_t v = 0; v < n; v++)
			if (is_compute(m, v))
				work[inst * P + (size_t)m->stage[v]] += val[inst * n + v];
}

/* Largest-remainder integer split of total into counts proportional to w (>= 1 each). */
static void split_counts(const double *w_in, size_t D, long total, long *b)
{
	double sum = 0;
	for (size_t i = 0; i < D; i++)
		sum += w_in[i];
	/* Weights that say nothing (a replica without compute time gives an
	 * infinite speed, 0/0, or all zero): the even split. */
	bool even = !(sum > 0) || !isfinite(sum);
	for (size_t i = 0; i < D && !even; i++)
		even = !(w_in[i] >= 0) || !isfinite(w_in[i]);
	double one = 1.0;
	const double *w = w_in;
	size_t step = 1;
	if (even) {
		w = &one;
		step = 0;
		sum = (double)D;
	}
	long used = 0;
	for (size_t i = 0; i < D; i++) {
		b[i] = (long)floor(total * w[i * step] / sum);
		if (b[i] < 1)
			b[i] = 1;
		used += b[i];
	}
	while (used < total) { /* the largest remainder first, the lower index on ties */
		size_t best = 0;
		double br = -INFINITY;
		for (size_t i = 0; i < D; i++) {
			double r = total * w[i * step] / sum - (double)b[i];
			if (r > br) {
				br = r;
				best = i;
			}
		}
		b[best]++;
		used++;
	}
	while (used > total) { /* the minimum of 1 took too many: from the largest */
		size_t best = 0;
		for (size_t i = 1; i < D; i++)
			if (b[i] > b[best])
				best = i;
		b[best]--;
		used--;
	}
}

typedef struct pol {
	const lbs_wi_model *m;
	lbs_wi_result *res;
	const double *vo;
	double *val, *T, *work;
	lbs_error *err;
} pol;

static lbs_status run(pol *p, const char *name, const char *what)
{
	lbs_wi_result *res = p->res;
	if (res->n_policies == sizeof res->policy / sizeof res->policy[0])
		return lbs_error_set(p->err, LBS_EINTERNAL, "too many policies");
	lbs_status st = lbs_wi_replay(p->m, p->val, NULL, p->T, NULL, NULL, p->err);
	if (st != LBS_OK)
		return st;
	lbs_wi_policy *q = &res->policy[res->n_policies++];
	lbs_fmt(q->name, sizeof q->name, "%s", name);
	lbs_fmt(q->what, sizeof q->what, "%s", what);
	double s = 0;
	for (size_t i = 0; i < p->m->n_steps; i++)
		s += p->T[i];
	q->mean_t = s / (double)p->m->n_steps;
	/* With no slowdown (mean T_nd <= mean T_id) there is nothing to
	 * recover: 0, not 0/0 (doc/whatif.md). */
	double gap = res->mean_nd - res->mean_id;
	q->recovered = gap > 0 ? (res->mean_nd - q->mean_t) / gap : 0;
	return LBS_OK;
}

/* LB-BSP's search (as models/policy/lbbsp_gpu.c does it, one traced step
 * a window): after each step the straggler (longest time at its current
 * count) gives `move` micro-batches to the leader, unless the two are
 * within 5%; `move` starts at max(1, m / 4) and halves (to 1 at least)
 * when a replica's adjustment reverses direction. b holds the counts of
 * step si on entry and of step si + 1 on return. */
static void lbbsp_adjust(const double *t, size_t D, long *b, long *move, int *dir)
{
	size_t slow = 0, fast = 0;
	for (size_t i = 1; i < D; i++) {
		if (t[i] > t[slow])
			slow = i;
		if (t[i] < t[fast])
			fast = i;
	}
	if (slow == fast || t[slow] <= 0 || (t[slow] - t[fast]) / t[slow] <= 0.05)
		return;
	if (dir[slow] > 0 || dir[fast] < 0)
		*move = *move / 2 > 1 ? *move / 2 : 1;
	long k = b[slow] - 1 < *move ? b[slow] - 1 : *move;
	b[slow] -= k;
	b[fast] += k;
	dir[slow] = -1;
	dir[fast] = 1;
}

/* The replicas' micro-batch counts: mode 0 static (whole trace), 1 dbs
 * (previous step), 2 oracle (this step), 3 lbbsp (the search). */
static lbs_status replica_counts(pol *p, int mode, const char *name, const char *what)
{
	const lbs_wi_model *m = p->m;
	size_t D = (size_t)m->D, P = (size_t)m->P, n = m->n_ops;
	size_t mb = 0;
	for (size_t v = 0; v < n; v++)
		mb += m->stage[v] == 0 && m->type[v] == LBS_OP_FORWARD_COMPUTE;
	mb /= (size_t)m->V;
	double *cost = malloc(m->n_steps * D * sizeof *cost), *w = malloc(D * sizeof *w);
	long *b = malloc(D * sizeof *b), move = mb / 4 > 1 ? (long)(mb / 4) : 1;
	int *dir = calloc(D, sizeof *dir);
	if (!cost || !w || !b || !dir) {
		free(cost);
		free(w);
		free(b);
		free(dir);
		return lbs_error_set(p->err, LBS_EINTERNAL, "out of memory");
	}
	for (size_t i = 0; i < D; i++)
		b[i] = (long)mb;
	/* a replica's cost in a step: its bottleneck stage's compute time */
	for (size_t inst = 0; inst < m->n_inst; inst++) {
		double c = 0;
		for (size_t j = 0; j < P; j++)
			if (p->work[inst * P + j] > c)
				c = p->work[inst * P + j];
		cost[inst] = c;
	}
	for (size_t si = 0; si < m->n_steps; si++) {
		for (size_t i = 0; mode < 3 && i < D; i++) {
			double c = 0;
			if (mode == 0) {
				for (size_t k = 0; k < m->n_steps; k++)
					c += cost[k * D + i];
			} else {
				size_t k = mode == 1 ? (si ? si - 1 : si) : si;
				c = cost[k * D + i];
			}
			w[i] = mode == 1 && si == 0 ? 1 : 1 / c;
		}
		if (mode < 3)
			split_counts(w, D, (long)(D * mb), b);
		for (size_t i = 0; i < D; i++) {
			size_t inst = si * D + i;
			double f = (double)b[i] / (double)mb;
			for (size_t v = 0; v < n; v++)
				p->val[inst * n + v] = is_compute(m, v) ? p->vo[inst * n + v] * f : p->vo[inst * n + v];
			w[i] = cost[inst] * f; /* the time it took at its count */
		}
		if (mode == 3)
			lbbsp_adjust(w, D, b, &move, dir);
	}
	free(cost);
	free(w);
	free(b);
	free(dir);
	return run(p, name, what);
}

/* Stage j's computes scaled by (mean stage work) / W_j; then, with
 * balance (1: within each replica, 2: over the step's replicas), each
 * compute's data cost d / sigma set to the mean of its group, sigma being
 * its worker's slowness: the worker's mean compute time of that direction
 * over the trace, relative to the mean of all workers of its stage. A slow
 * worker stays slow; what is balanced is the data. */
static lbs_status transform(pol *p, bool repartition, int balance)
{
	const lbs_wi_model *m = p->m;
	size_t D = (size_t)m->D, P = (size_t)m->P, n = m->n_ops;
	double *scale = malloc(P * sizeof *scale), *sigma = calloc(2 * D * P, sizeof *sigma);
	double *sum = calloc(2 * D * P, sizeof *sum);
	if (!scale || !sigma || !sum) {
		free(scale);
		free(sigma);
		free(sum);
		return lbs_error_set(p->err, LBS_EINTERNAL, "out of memory");
	}
	for (size_t j = 0; j < P; j++)
		scale[j] = 1;
	if (repartition) {
		double total = 0;
		for (size_t j = 0; j < P; j++) {
			double w = 0;
			for (size_t inst = 0; inst < m->n_inst; inst++)
				w += p->work[inst * P + j];
			scale[j] = w;
			total += w;
		}
		for (size_t j = 0; j < P; j++)
			scale[j] = scale[j] > 0 ? total / (double)P / scale[j] : 1;
	}
	for (size_t c = 0; c < m->n_inst * n; c++) {
		size_t v = c % n;
		p->val[c] = is_compute(m, v) ? p->vo[c] * scale[m->stage[v]] : p->vo[c];
	}
	if (balance) {
		/* sigma[(dir * D + dp) * P + stage] */
		for (size_t c = 0; c < m->n_inst * n; c++) {
			size_t v = c % n, dp = (c / n) % D;
			if (is_compute(m, v))
				sum[((size_t)(m->type[v] == LBS_OP_BACKWARD_COMPUTE) * D + dp) * P + (size_t)m->stage[v]] +=
					p->val[c];
		}
		for (size_t dir = 0; dir < 2; dir++)
			for (size_t j = 0; j < P; j++) {
				double all = 0;
				for (size_t dp = 0; dp < D; dp++)
					all += sum[(dir * D + dp) * P + j];
				for (size_t dp = 0; dp < D; dp++)
					sigma[(dir * D + dp) * P + j] = all > 0 ? sum[(dir * D + dp) * P + j] * (double)D / all : 1;
			}
		for (size_t si = 0; si < m->n_steps; si++)
			for (size_t dp = 0; dp < D; dp++) {
				if (balance == 2 && dp)
					break;
				size_t a = balance == 2 ? si * D : si * D + dp, z = balance == 2 ? si * D + D : a + 1;
				for (size_t j = 0; j < P; j++)
					for (size_t dir = 0; dir < 2; dir++) {
						lbs_optype t = dir ? LBS_OP_BACKWARD_COMPUTE : LBS_OP_FORWARD_COMPUTE;
						double s = 0;
						size_t k = 0;
						for (size_t inst = a; inst < z; inst++)
							for (size_t v = 0; v < n; v++)
								if (m->type[v] == t && (size_t)m->stage[v] == j) {
									double sg = sigma[(dir * D + inst % D) * P + j];
									s += sg > 0 ? p->val[inst * n + v] / sg : 0;
									k++;
								}
						if (!k)
							continue;
						for (size_t inst = a; inst < z; inst++)
							for (size_t v = 0; v < n; v++)
								if (m->type[v] == t && (size_t)m->stage[v] == j)
									p->val[inst * n + v] =
										sigma[(dir * D + inst % D) * P + j] * s / (double)k;
					}
			}
	}
	free(scale);
	free(sigma);
	free(sum);
	return LBS_OK;
}

lbs_status lbs_wi_policies(const lbs_wi_model *m, lbs_wi_result *res, const double *vo, lbs_error *err)
{
	pol p = { .m = m, .res = res, .vo = vo, .err = err };
	size_t cells = m->n_inst * m->n_ops;
	p.val = malloc(cells * sizeof *p.val);
	p.T = malloc(m->n_steps * sizeof *p.T);
	p.work = malloc(m->n_inst * (size_t)m->P * sizeof *p.work);
	lbs_status st = LBS_OK;
	if (!p.val || !p.T || !p.work)
		st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	if (st == LBS_OK)
		stage_work(m, vo, p.work);
	if (st == LBS_OK && m->D > 1) {
		st = replica_counts(&p, 0, "static-proportional", "micro-batches per replica in proportion to "
				    "its speed over the whole trace");
		if (st == LBS_OK)
			st = replica_counts(&p, 1, "dbs", "micro-batches per replica in proportion to its speed in "
					    "the previous traced step");
		if (st == LBS_OK)
			st = replica_counts(&p, 3, "lbbsp", "LB-BSP's search: after each traced step the straggler "
					    "gives micro-batches to the leader");
		if (st == LBS_OK)
			st = replica_counts(&p, 2, "oracle", "micro-batches per replica in proportion to its speed "
					    "in the step itself");
	}
	if (st == LBS_OK && m->P > 1 && (st = transform(&p, true, 0)) == LBS_OK) {
		st = run(&p, "repartition", "layers moved so that every stage has the mean stage's compute time");
	}
	if (st == LBS_OK && (st = transform(&p, false, 1)) == LBS_OK) {
		st = run(&p, "microbatch-balance", "each replica's micro-batches of a step made equally costly");
	}
	if (st == LBS_OK && m->D > 1 && (st = transform(&p, false, 2)) == LBS_OK) {
		st = run(&p, "microbatch-balance-global", "the step's micro-batches made equally costly across "
			 "all replicas");
	}
	if (st == LBS_OK && m->P > 1 && (st = transform(&p, true, 2)) == LBS_OK) {
		st = run(&p, "repartition+balance", "repartition and microbatch-balance-global together");
	}
	free(p.val);
	free(p.T);
	free(p.work);
	return st;
}
