/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "whatif/whatif.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int dbl_cmp(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;
	return a < b ? -1 : a > b;
}

static double mean(const double *x, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += x[i];
	return n ? s / (double)n : NAN;
}

/* The median of x (sorted in place): the mean of the middle two for an
 * even count, rounded to float32 as the method does. */
static double median_f32(double *x, size_t n)
{
	if (!n)
		return NAN;
	qsort(x, n, sizeof *x, dbl_cmp);
	double v = n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
	return (float)v;
}

static bool mean_type(lbs_optype t)
{
	return t == LBS_OP_FORWARD_COMPUTE || t == LBS_OP_BACKWARD_COMPUTE || t == LBS_OP_GC ||
	       t == LBS_OP_OPTIMIZER;
}

/* The attribution class of an op type: the p2p pairs are one class each. */
static int attr_class(lbs_optype t)
{
	if (t == LBS_OP_FORWARD_RECV)
		return LBS_OP_FORWARD_SEND;
	if (t == LBS_OP_BACKWARD_RECV)
		return LBS_OP_BACKWARD_SEND;
	return t;
}

static const char *class_name(int c)
{
	if (c == LBS_OP_FORWARD_SEND)
		return "forward-pp-comm";
	if (c == LBS_OP_BACKWARD_SEND)
		return "backward-pp-comm";
	return lbs_optype_name((lbs_optype)c);
}

typedef struct ctx {
	const lbs_wi_model *m;
	lbs_wi_result *res;
	double *vo, *vi, *mix, *T;
	bool *opmask;   /* n_ops */
	bool *wmask;    /* D x P workers */
	lbs_error *err;
} ctx;

/* Mean step time of the replay with the cells of (opmask x wmask) taken
 * from `in` and the others from `base`; per-step times into c->T. */
static lbs_status mixed(ctx *c, const double *base, const double *in, double *mean_t)
{
	const lbs_wi_model *m = c->m;
	size_t n = m->n_ops, D = (size_t)m->D;
	for (size_t inst = 0; inst < m->n_inst; inst++) {
		size_t dp = inst % D;
		for (size_t v = 0; v < n; v++) {
			size_t cell = inst * n + v;
			bool take = c->opmask[v] && c->wmask[dp * (size_t)m->P + (size_t)m->stage[v]];
			c->mix[cell] = take ? in[cell] : base[cell];
		}
	}
	lbs_status st = lbs_wi_replay(m, c->mix, NULL, c->T, NULL, NULL, c->err);
	if (st == LBS_OK)
		*mean_t = mean(c->T, m->n_steps);
	return st;
}

static void set_masks(ctx *c, int cls, int dp, int stage, bool all_ops)
{
	const lbs_wi_model *m = c->m;
	for (size_t v = 0; v < m->n_ops; v++)
		c->opmask[v] = all_ops || attr_class((lbs_optype)m->type[v]) == cls;
	for (int i = 0; i < m->D; i++)
		for (int j = 0; j < m->P; j++)
			c->wmask[(size_t)i * m->P + j] = (dp < 0 || dp == i) && (stage < 0 || stage == j);
}

static lbs_status add_slowdown(ctx *c, lbs_wi_kind kind, const char *name, int dp, int stage, int rank,
			       double value, const double *T)
{
	lbs_wi_result *res = c->res;
	lbs_wi_slowdown *s = realloc(res->slow, (res->n_slow + 1) * sizeof *s);
	if (!s)
		return lbs_error_set(c->err, LBS_EINTERNAL, "out of memory");
	res->slow = s;
	s += res->n_slow++;
	memset(s, 0, sizeof *s);
	s->kind = kind;
	lbs_fmt(s->name, sizeof s->name, "%s", name);
	s->dp_rank = dp;
	s->stage = stage;
	s->rank = rank;
	s->value = value;
	if (T) {
		if (!(s->per_step = malloc(res->n_steps * sizeof *s->per_step)))
			return lbs_error_set(c->err, LBS_EINTERNAL, "out of memory");
		for (size_t i = 0; i < res->n_steps; i++)
			s->per_step[i] = T[i] / res->t_id[i];
	}
	return LBS_OK;
}

/* One attribution: the ideal replay with the set given its trace values. */
static lbs_status attribute(ctx *c, lbs_wi_kind kind, const char *name, int cls, int dp, int stage)
{
	double t;
	set_masks(c, cls, dp, stage, kind != LBS_WI_OPTYPE);
	lbs_status st = mixed(c, c->vi, c->vo, &t);
	if (st != LBS_OK)
		return st;
	return add_slowdown(c, kind, name, dp, stage, -1, t / c->res->mean_id, c->T);
}

static lbs_status test_set(ctx *c, lbs_wi_test *out)
{
	lbs_wi_result *res = c->res;
	lbs_status st = mixed(c, c->vo, c->vi, &out->t_rem);
	if (st == LBS_OK)
		st = mixed(c, c->vi, c->vo, &out->t_add);
	out->t_ori = res->mean_nd;
	out->t_ideal = res->mean_id;
	double gap = res->mean_nd - res->mean_id;
	out->rem = (res->mean_nd - out->t_rem) / gap;
	out->add = (out->t_add - res->mean_id) / gap;
	return st;
}

static int slow_desc(const void *pa, const void *pb)
{
	const lbs_wi_slowdown *a = pa, *b = pb;
	if (a->value != b->value)
		return a->value > b->value ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->dp_rank != b->dp_rank)
		return a->dp_rank < b->dp_rank ? -1 : 1;
	if (a->stage != b->stage)
		return a->stage < b->stage ? -1 : 1;
	return strcmp(a->name, b->name);
}

static void ideal_values(ctx *c)
{
	const lbs_wi_model *m = c->m;
	lbs_wi_result *res = c->res;
	size_t n = m->n_ops, cells = m->n_inst * n;
	double *pool = c->mix; /* scratch */
	for (int t = 0; t < LBS_OP_N; t++) {
		for (int comm = 0; comm < 2; comm++) {
			size_t k = 0;
			for (size_t cell = 0; cell < cells; cell++) {
				uint32_t v = (uint32_t)(cell % n);
				if (m->type[v] != t || m->group_comm[m->group_of[v]] != (bool)comm)
					continue;
				pool[k++] = comm ? m->x[cell] : m->d[cell];
			}
			double val = !k ? NAN : (!comm && mean_type((lbs_optype)t)) ? mean(pool, k) : median_f32(pool, k);
			if (comm)
				res->ideal_x[t] = val;
			else
				res->ideal_d[t] = val;
		}
	}
	for (size_t cell = 0; cell < cells; cell++) {
		uint32_t v = (uint32_t)(cell % n);
		bool comm = m->group_comm[m->group_of[v]];
		c->vo[cell] = comm ? m->x[cell] : m->d[cell];
		c->vi[cell] = comm ? res->ideal_x[m->type[v]] : res->ideal_d[m->type[v]];
	}
}

static lbs_status attribution(ctx *c)
{
	const lbs_wi_model *m = c->m;
	lbs_wi_result *res = c->res;
	lbs_status st = LBS_OK;
	bool present[LBS_OP_N] = { false };
	for (size_t v = 0; v < m->n_ops; v++)
		present[attr_class((lbs_optype)m->type[v])] = true;
	size_t first = res->n_slow;
	for (int cls = 0; cls < LBS_OP_N && st == LBS_OK; cls++)
		if (present[cls])
			st = attribute(c, LBS_WI_OPTYPE, class_name(cls), cls, -1, -1);
	size_t dp0 = res->n_slow;
	char name[32];
	for (int i = 0; i < m->D && st == LBS_OK; i++)
		st = attribute(c, LBS_WI_DP, lbs_fmt(name, sizeof name, "%d", i), -1, i, -1);
	size_t stage0 = res->n_slow;
	for (int j = 0; j < m->P && st == LBS_OK; j++)
		st = attribute(c, LBS_WI_STAGE, lbs_fmt(name, sizeof name, "%d", j), -1, -1, j);
	if (st != LBS_OK)
		return st;
	size_t w0 = res->n_slow;
	for (int i = 0; i < m->D && st == LBS_OK; i++)
		for (int j = 0; j < m->P && st == LBS_OK; j++) {
			int rank = m->worker_rank[(size_t)i * m->P + j];
			if (rank < 0)
				continue;
			double a = res->slow[dp0 + i].value, b = res->slow[stage0 + j].value;
			st = add_slowdown(c, LBS_WI_WORKER, lbs_fmt(name, sizeof name, "%d", rank), i, j, rank,
					  a < b ? a : b, NULL);
		}
	if (st != LBS_OK)
		return st;
	size_t end = res->n_slow;
	qsort(res->slow + first, dp0 - first, sizeof *res->slow, slow_desc);
	qsort(res->slow + dp0, stage0 - dp0, sizeof *res->slow, slow_desc);
	qsort(res->slow + stage0, w0 - stage0, sizeof *res->slow, slow_desc);
	qsort(res->slow + w0, end - w0, sizeof *res->slow, slow_desc);
	/* M_W: the top ceil(3 N / 100) workers by S_w (ties: lower rank). */
	size_t top = (3 * m->n_workers + 99) / 100;
	set_masks(c, -1, -1, -1, true);
	memset(c->wmask, 0, (size_t)m->D * m->P * sizeof *c->wmask);
	size_t used = 0;
	for (size_t k = 0; k < top && w0 + k < end; k++) {
		const lbs_wi_slowdown *s = &res->slow[w0 + k];
		c->wmask[(size_t)s->dp_rank * m->P + s->stage] = true;
		used += (size_t)snprintf(res->mw.workers + used, used < sizeof res->mw.workers ?
					 sizeof res->mw.workers - used : 0, "%srank %d", k ? ", " : "", s->rank);
		if (used >= sizeof res->mw.workers)
			used = sizeof res->mw.workers - 1;
	}
	if ((st = test_set(c, &res->mw)) != LBS_OK)
		return st;
	set_masks(c, -1, -1, m->P - 1, true);
	lbs_fmt(res->ms.workers, sizeof res->ms.workers, "stage %d", m->P - 1);
	return test_set(c, &res->ms);
}

/* The step with the largest S: its traced ops and their ideal replay. */
static lbs_status timeline(const lbs_wi_model *m, lbs_wi_result *res, const double *start, const double *end,
			   lbs_error *err)
{
	size_t si = 0, n = m->n_ops, D = (size_t)m->D, k = D * n;
	for (size_t i = 1; i < m->n_steps; i++)
		if (res->t_nd[i] / res->t_id[i] > res->t_nd[si] / res->t_id[si])
			si = i;
	res->timeline_step = si;
	for (int w = 0; w < 2; w++) {
		res->tl_start[w] = malloc(k * sizeof *res->tl_start[w]);
		res->tl_end[w] = malloc(k * sizeof *res->tl_end[w]);
		if (!res->tl_start[w] || !res->tl_end[w])
			return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	}
	const lbs_ops_trace *t = m->trace;
	for (size_t c = 0; c < k; c++) {
		uint32_t r = m->row[si * k + c];
		res->tl_start[0][c] = t->start[r];
		res->tl_end[0][c] = t->start[r] + (double)t->duration[r];
		res->tl_start[1][c] = start[si * k + c];
		res->tl_end[1][c] = end[si * k + c];
	}
	return LBS_OK;
}

lbs_status lbs_wi_analyse(const lbs_wi_model *m, lbs_wi_result *res, lbs_error *err)
{
	memset(res, 0, sizeof *res);
	size_t ns = m->n_steps, cells = m->n_inst * m->n_ops;
	res->n_steps = ns;
	res->steps = m->steps;
	res->t_meas = malloc(ns * sizeof *res->t_meas);
	res->t_base = malloc(ns * sizeof *res->t_base);
	res->t_nd = malloc(ns * sizeof *res->t_nd);
	res->t_id = malloc(ns * sizeof *res->t_id);
	ctx c = { .m = m, .res = res, .err = err };
	c.vo = malloc(cells * sizeof *c.vo);
	c.vi = malloc(cells * sizeof *c.vi);
	c.mix = malloc(cells * sizeof *c.mix);
	c.T = malloc(ns * sizeof *c.T);
	c.opmask = malloc(m->n_ops * sizeof *c.opmask);
	c.wmask = malloc((size_t)m->D * m->P * sizeof *c.wmask);
	lbs_status st = LBS_OK;
	if (!res->t_meas || !res->t_base || !res->t_nd || !res->t_id || !c.vo || !c.vi || !c.mix || !c.T ||
	    !c.opmask || !c.wmask) {
		st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
		goto out;
	}
	memcpy(res->t_meas, m->t_meas, ns * sizeof *res->t_meas);
	ideal_values(&c);
	double *ideal_start = malloc(2 * cells * sizeof *ideal_start);
	if (!ideal_start) {
		st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
		goto out;
	}
	if ((st = lbs_wi_replay(m, c.vo, m->l, res->t_base, NULL, NULL, err)) != LBS_OK ||
	    (st = lbs_wi_replay(m, c.vo, NULL, res->t_nd, NULL, NULL, err)) != LBS_OK ||
	    (st = lbs_wi_replay(m, c.vi, NULL, res->t_id, ideal_start, ideal_start + cells, err)) != LBS_OK) {
		free(ideal_start);
		goto out;
	}
	st = timeline(m, res, ideal_start, ideal_start + cells, err);
	free(ideal_start);
	if (st != LBS_OK)
		goto out;
	res->mean_meas = mean(res->t_meas, ns);
	res->mean_base = mean(res->t_base, ns);
	res->mean_nd = mean(res->t_nd, ns);
	res->mean_id = mean(res->t_id, ns);
	/* S, L and every ratio divide by these: a step that takes no time
	 * (every op of it 0 s long) is bad input, not a 0/0 to record. */
	for (size_t i = 0; i < ns; i++)
		if (!(res->t_meas[i] > 0) || !(res->t_nd[i] > 0) || !(res->t_id[i] > 0)) {
			st = lbs_error_set(err, LBS_EINPUT, "%s: step %lld takes no time (%s %g s): the "
					   "analysis divides by step times, so its ops must last longer than 0 s",
					   m->trace->path, (long long)m->steps[i],
					   !(res->t_meas[i] > 0) ? "measured" : !(res->t_nd[i] > 0) ? "without delays"
					   : "in the ideal replay",
					   !(res->t_meas[i] > 0) ? res->t_meas[i] : !(res->t_nd[i] > 0) ? res->t_nd[i]
					   : res->t_id[i]);
			goto out;
		}
	for (size_t i = 0; i < ns; i++) {
		double e = fabs(res->t_base[i] - res->t_meas[i]) / res->t_meas[i];
		if (e > res->base_max_rel)
			res->base_max_rel = e;
	}
	res->S = res->mean_nd / res->mean_id;
	res->L = res->mean_meas / res->mean_nd;
	res->attributed = res->S >= LBS_WI_ATTRIBUTE_MIN;
	if (res->attributed)
		st = attribution(&c);
	if (st == LBS_OK)
		st = lbs_wi_policies(m, res, c.vo, err);
out:
	free(c.vo);
	free(c.vi);
	free(c.mix);
	free(c.T);
	free(c.opmask);
	free(c.wmask);
	if (st != LBS_OK)
		lbs_wi_result_free(res);
	return st;
}

void lbs_wi_result_free(lbs_wi_result *res)
{
	free(res->t_meas);
	free(res->t_base);
	free(res->t_nd);
	free(res->t_id);
	for (size_t i = 0; i < res->n_slow; i++)
		free(res->slow[i].per_step);
	free(res->slow);
	for (int w = 0; w < 2; w++) {
		free(res->tl_start[w]);
		free(res->tl_end[w]);
	}
	memset(res, 0, sizeof *res);
}
