/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A hybrid job built from a per-operation trace, run forward under the
 * hybrid policies (whatif/forward.h). */
#include "whatif/forward.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hybrid/balance.h"

/* The typical value of an op type's op: its ideal duration (local ops) or
 * transfer time (members), 0 where the trace has none. */
static double typical(const lbs_wi_result *res, int type)
{
	if (isfinite(res->ideal_d[type]))
		return fmax(0, res->ideal_d[type]);
	return isfinite(res->ideal_x[type]) ? fmax(0, res->ideal_x[type]) : 0;
}

static double transfer(const lbs_wi_result *res, int type)
{
	return isfinite(res->ideal_x[type]) ? fmax(0, res->ideal_x[type]) : 0;
}

static bool is_compute(int type)
{
	return type == LBS_OP_FORWARD_COMPUTE || type == LBS_OP_BACKWARD_COMPUTE;
}

/* The micro-batch of compute v in instance inst: the trace's mb_id, or
 * with one chunk its order among the stage's computes of its direction. */
static int mb_of(const lbs_wi_model *wm, size_t inst, uint32_t v)
{
	int32_t mb = wm->trace->mb_id[wm->row[inst * wm->n_ops + v]];
	return mb >= 0 ? mb : wm->V == 1 ? wm->seq[v] : -1;
}

/* The traced job's transfers and tail, traced means: p2p_s[g] of g's
 * forward sends and backward receives (the link to the next stage; the
 * overall mean where g has none), grad_s and gather_s of each stage's
 * and chunk's reductions and gathers over the replicas, opt_s[g] the
 * optimizer, gc and layer-norm reduction of g a step (their durations,
 * or transfer times where they are collectives), emb_s and clip_s. */
static lbs_status traced_means(const lbs_wi_model *wm, lbs_hy_plan *pl, lbs_error *err)
{
	size_t n = wm->n_ops, G = (size_t)wm->D * (size_t)wm->P, PV = (size_t)wm->P * (size_t)wm->V;
	double *sum = calloc(3 * G + 2 * PV + 2, sizeof *sum);
	size_t *cnt = calloc(3 * G + 2 * PV + 2, sizeof *cnt);
	if (!sum || !cnt) {
		free(sum);
		free(cnt);
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory for the traced job");
	}
	/* slots: p2p of g, every p2p, tail of g, grads (s, c), gathers (s, c), emb, clip */
	size_t P2P = 0, ALLP2P = G, TAIL = 2 * G, GRAD = 3 * G, GATH = 3 * G + PV, EMB = 3 * G + 2 * PV,
	       CLIP = EMB + 1;
	for (size_t inst = 0; inst < wm->n_inst; inst++) {
		size_t r = inst % (size_t)wm->D;
		for (uint32_t v = 0; v < n; v++) {
			size_t s = (size_t)wm->stage[v], g = r * (size_t)wm->P + s, cell = inst * n + v;
			/* a traced transfer may be slightly negative (whatif/model.h:
			 * only those at or below LBS_WI_CLAMP are set to 0) */
			double val = fmax(0, wm->group_comm[wm->group_of[v]] ? wm->x[cell] : wm->d[cell]);
			size_t slot = SIZE_MAX;
			switch (wm->type[v]) {
			case LBS_OP_FORWARD_SEND:
			case LBS_OP_BACKWARD_RECV:
				if (wm->idle[v])
					break;
				sum[P2P + g] += val, cnt[P2P + g]++;
				slot = ALLP2P + g;
				break;
			case LBS_OP_FORWARD_RECV:
			case LBS_OP_BACKWARD_SEND:
				slot = wm->idle[v] ? SIZE_MAX : ALLP2P + g;
				break;
			case LBS_OP_OPTIMIZER:
			case LBS_OP_GC:
			case LBS_OP_LAYERNORM_GRADS_ALL_REDUCE: slot = TAIL + g; break;
			case LBS_OP_GRADS_REDUCE_SCATTER:
			case LBS_OP_PARAMS_ALL_GATHER:
				if (wm->mc[v] >= 0 && wm->mc[v] < wm->V)
					slot = (wm->type[v] == LBS_OP_GRADS_REDUCE_SCATTER ? GRAD : GATH) +
					       s * (size_t)wm->V + (size_t)wm->mc[v];
				break;
			case LBS_OP_EMBEDDING_GRADS_ALL_REDUCE: slot = EMB; break;
			case LBS_OP_OPTIMIZER_CLIP_MAIN_GRAD: slot = CLIP; break;
			default: break;
			}
			if (slot != SIZE_MAX)
				sum[slot] += val, cnt[slot]++;
		}
	}
	double all = 0;
	size_t n_all = 0;
	for (size_t g = 0; g < G; g++)
		all += sum[ALLP2P + g], n_all += cnt[ALLP2P + g];
	for (size_t g = 0; g < G; g++) {
		pl->p2p_s[g] = cnt[P2P + g] ? sum[P2P + g] / (double)cnt[P2P + g] : n_all ? all / (double)n_all : 0;
		pl->opt_s[g] = sum[TAIL + g] / (double)wm->n_steps;
	}
	for (size_t i = 0; i < PV; i++) {
		pl->grad_s[i] = cnt[GRAD + i] ? sum[GRAD + i] / (double)cnt[GRAD + i] : 0;
		pl->gather_s[i] = cnt[GATH + i] ? sum[GATH + i] / (double)cnt[GATH + i] : 0;
	}
	pl->emb_s = cnt[EMB] ? sum[EMB] / (double)cnt[EMB] : 0;
	pl->clip_s = cnt[CLIP] ? sum[CLIP] / (double)cnt[CLIP] : 0;
	free(sum);
	free(cnt);
	return LBS_OK;
}

lbs_status lbs_wi_fwd_build(lbs_wi_fwd_job *j, const lbs_wi_model *wm, const lbs_wi_result *res, int tp,
				int blocks, bool ideal, lbs_error *err)
{
	memset(j, 0, sizeof *j);
	int D = wm->D, P = wm->P, V = wm->V;
	size_t n = wm->n_ops, G = (size_t)D * (size_t)P, GV = G * (size_t)V, PV = (size_t)P * (size_t)V;
	size_t fwd0 = 0;
	bool gather = false;
	for (size_t v = 0; v < n; v++) {
		fwd0 += wm->stage[v] == 0 && wm->type[v] == LBS_OP_FORWARD_COMPUTE;
		gather |= wm->type[v] == LBS_OP_PARAMS_ALL_GATHER;
	}
	int m = (int)(fwd0 / (size_t)V);
	if (m < 1 || tp < 1)
		return lbs_error_set(err, LBS_EINPUT, "%s: %s", wm->trace->path,
				     m < 1 ? "the first stage has no forward compute: no job to simulate forward"
					   : "tp_size must be 1 or more");
	if (V > 1 && m % P)
		return lbs_error_set(err, LBS_EINPUT,
				     "%s: %d micro-batches over %d stages: the interleaved schedule needs a multiple",
				     wm->trace->path, m, P);
	if (!ideal && (!isfinite(res->ideal_d[LBS_OP_FORWARD_COMPUTE]) ||
		       !isfinite(res->ideal_d[LBS_OP_BACKWARD_COMPUTE])))
		return lbs_error_set(err, LBS_EINPUT, "%s: no forward or no backward compute", wm->trace->path);
	lbs_hy_built *b = &j->b;
	lbs_hy_plan *pl = &b->plan;
	*pl = (lbs_hy_plan){ .d = D, .p = P, .t = tp, .v = V, .m = m,
			     .schedule = V > 1 ? LBS_HY_INTERLEAVED : LBS_HY_1F1B, .zero_stage = gather,
			     .overlap_dp = wm->overlapped };
	bool split = blocks > 0 && P > 1;
	lbs_hy_built_plan_alloc(b, G, V, P, false);
	b->rank_of = malloc(G * sizeof *b->rank_of);
	b->mem_bytes = calloc(G, sizeof *b->mem_bytes);
	b->act_bytes = calloc(G, sizeof *b->act_bytes);
	b->mem_cap = malloc(G * sizeof *b->mem_cap);
	size_t n_mb = (size_t)D * (size_t)m, cells = wm->n_steps * n_mb;
	double *sum = NULL, *num = NULL, *den = NULL, *W = NULL; /* W: G, the workers' slowness */
	size_t *cnt = NULL;
	if (!ideal) {
		j->ratio = calloc(cells, sizeof *j->ratio);
		W = malloc(G * sizeof *W);
		b->avail_store = malloc(2 * G * sizeof *b->avail_store);
		pl->avail = malloc(G * sizeof *pl->avail);
		sum = calloc(G + 2 * PV, sizeof *sum);
		cnt = calloc(G + 2 * PV, sizeof *cnt);
		num = calloc(cells, sizeof *num);
		den = calloc(cells, sizeof *den);
	}
	lbs_status st = LBS_OK;
	if (!b->store || !b->rank_of || !b->mem_bytes || !b->act_bytes || !b->mem_cap ||
	    (split && lbs_hy_built_blocks_alloc(b, G, P) != LBS_OK) ||
	    (!ideal && (!j->ratio || !W || !b->avail_store || !pl->avail || !sum || !cnt || !num || !den))) {
		st = lbs_error_set(err, LBS_EINTERNAL, "out of memory for the traced job of %zu groups", G);
		goto out;
	}
	/* transfers and the tail: the ideal job's at their type's typical
	 * value; the traced job's at their traced means, per group (p2p, the
	 * tail) or stage and chunk (the data-parallel collectives) */
	double p2p = 0;
	int n_p2p = 0;
	for (int ty = LBS_OP_FORWARD_SEND; ty <= LBS_OP_BACKWARD_RECV; ty++)
		if (isfinite(res->ideal_x[ty]))
			p2p += res->ideal_x[ty], n_p2p++;
	double opt = typical(res, LBS_OP_OPTIMIZER) + typical(res, LBS_OP_GC) +
		     typical(res, LBS_OP_LAYERNORM_GRADS_ALL_REDUCE);
	for (size_t g = 0; g < G; g++) {
		pl->p2p_s[g] = n_p2p ? p2p / n_p2p : 0;
		pl->opt_s[g] = opt;
		b->rank_of[g] = wm->worker_rank[g];
		b->mem_cap[g] = INFINITY;
	}
	for (size_t i = 0; i < PV; i++) {
		pl->grad_s[i] = transfer(res, LBS_OP_GRADS_REDUCE_SCATTER);
		pl->gather_s[i] = transfer(res, LBS_OP_PARAMS_ALL_GATHER);
	}
	pl->emb_s = transfer(res, LBS_OP_EMBEDDING_GRADS_ALL_REDUCE);
	pl->clip_s = transfer(res, LBS_OP_OPTIMIZER_CLIP_MAIN_GRAD);
	if (!ideal && (st = traced_means(wm, pl, err)) != LBS_OK)
		goto out;
	j->n_steps = wm->n_steps;
	j->n_mb = n_mb;
	if (ideal) {
		for (size_t i = 0; i < GV; i++) {
			pl->fwd_s[i] = res->ideal_d[LBS_OP_FORWARD_COMPUTE];
			pl->bwd_s[i] = res->ideal_d[LBS_OP_BACKWARD_COMPUTE];
		}
	} else {
		/* W(r, s): the worker's mean compute over its stage's workers' */
		double *cs = sum + G; /* (s, chunk, dir): sums of d / W */
		size_t *cc = cnt + G;
		for (size_t si = 0; si < wm->n_steps; si++)
			for (size_t r = 0; r < (size_t)D; r++)
				for (uint32_t v = 0; v < n; v++)
					if (is_compute(wm->type[v])) {
						size_t g = r * (size_t)P + (size_t)wm->stage[v];
						sum[g] += wm->d[(si * (size_t)D + r) * n + v];
						cnt[g]++;
					}
		for (size_t s = 0; s < (size_t)P; s++) {
			double stage = 0;
			for (size_t r = 0; r < (size_t)D; r++) {
				size_t g = r * (size_t)P + s;
				stage += cnt[g] ? sum[g] / (double)cnt[g] : 0;
			}
			stage /= D;
			for (size_t r = 0; r < (size_t)D; r++) {
				size_t g = r * (size_t)P + s;
				double w = cnt[g] && stage > 0 ? sum[g] / (double)cnt[g] / stage : 1;
				W[g] = w > 0 && isfinite(w) ? w : 1;
			}
		}
		/* B(s, chunk, dir): the mean of d / W */
		for (int pass = 0; pass < 2; pass++)
			for (size_t si = 0; si < wm->n_steps; si++)
				for (size_t r = 0; r < (size_t)D; r++)
					for (uint32_t v = 0; v < n; v++) {
						if (!is_compute(wm->type[v]))
							continue;
						size_t inst = si * (size_t)D + r, s = (size_t)wm->stage[v];
						size_t k = ((s * (size_t)V + (size_t)wm->mc[v]) << 1) |
							   (wm->type[v] == LBS_OP_BACKWARD_COMPUTE);
						double c = wm->d[inst * n + v] / W[r * (size_t)P + s];
						if (!pass) {
							cs[k] += c, cc[k]++;
							continue;
						}
						int mb = mb_of(wm, inst, v);
						if (mb < 0 || mb >= m) {
							char where[1100];
							st = lbs_error_set(err, LBS_EINPUT,
									   "%s: mb_id: a compute of micro-batch %d; "
									   "the job runs %d a step",
									   lbs_ops_where(wm->trace, wm->row[inst * n + v],
											 where, sizeof where),
									   mb, m);
							goto out;
						}
						size_t cell = si * n_mb + r * (size_t)m + (size_t)mb;
						num[cell] += c;
						den[cell] += cs[k] / (double)cc[k];
					}
		double top = 0;
		for (size_t i = 0; i < cells; i++) {
			j->ratio[i] = den[i] > 0 ? num[i] / den[i] : 1;
			top = fmax(top, j->ratio[i]);
		}
		if (!(top > 0) || !isfinite(top)) {
			st = lbs_error_set(err, LBS_EINPUT, "%s: the computes have no duration", wm->trace->path);
			goto out;
		}
		for (size_t i = 0; i < cells; i++)
			j->ratio[i] /= top; /* lengths are ratios at most 1: B scaled up by the largest */
		for (size_t g = 0; g < G; g++)
			for (size_t c = 0; c < (size_t)V; c++) {
				size_t k = ((g % (size_t)P) * (size_t)V + c) << 1;
				pl->fwd_s[g * (size_t)V + c] = cc[k] ? cs[k] / (double)cc[k] * top : 0;
				pl->bwd_s[g * (size_t)V + c] = cc[k | 1] ? cs[k | 1] / (double)cc[k | 1] * top : 0;
			}
		for (size_t g = 0; g < G; g++) {
			b->avail_store[g] = 0;
			b->avail_store[G + g] = 1 / W[g];
			pl->avail[g] = (lbs_hy_avail){ 1, &b->avail_store[g], &b->avail_store[G + g] };
			pl->opt_s[g] /= W[g]; /* the optimizer runs at the group's speed */
		}
	}
	if (split) {
		/* `blocks` equal blocks a chunk, moved for free; a block costs the
		 * same on every stage and chunk: the mean chunk's over `blocks`;
		 * what a chunk has above or below the mean stays with it (the
		 * head, the embedding), so moving blocks keeps the work */
		for (size_t g = 0; g < G; g++) {
			size_t r0 = g / (size_t)P * (size_t)P;
			double f = 0, bw = 0;
			for (size_t i = r0 * (size_t)V; i < (r0 + (size_t)P) * (size_t)V; i++)
				f += pl->fwd_s[i], bw += pl->bwd_s[i];
			b->blk_fwd_s[g] = f / (P * V) / blocks;
			b->blk_bwd_s[g] = bw / (P * V) / blocks;
			b->link_Bps[g] = 1;
		}
		b->n_blocks = blocks * P * V;
	}
	st = lbs_hy_plan_check(pl, err);
out:
	free(W);
	free(sum);
	free(cnt);
	free(num);
	free(den);
	if (st != LBS_OK)
		lbs_wi_fwd_free(j);
	return st;
}

void lbs_wi_fwd_free(lbs_wi_fwd_job *j)
{
	lbs_hy_built_free(&j->b);
	free(j->ratio);
	memset(j, 0, sizeof *j);
}

lbs_status lbs_wi_fwd_run(const lbs_wi_fwd_job *j, const char *policy, int64_t every, int64_t delay, double *mean_s,
			      int64_t *changes, const volatile sig_atomic_t *interrupt, lbs_error *err)
{
	lbs_hy_scenario *sc = calloc(1, sizeof *sc);
	if (!sc)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	snprintf(sc->path, sizeof sc->path, "the traced job");
	snprintf(sc->policy.name, sizeof sc->policy.name, "%s", policy);
	sc->policy.every = every;
	sc->policy.delay = delay;
	sc->policy.epoch_steps = 1; /* the traced steps are samples far apart: each its own epoch */
	sc->run.seed = 1;
	sc->run.steps = (int64_t)j->n_steps;
	lbs_hy_balance bal;
	lbs_status st = lbs_hy_balance_create(&bal, sc, &j->b, err);
	free(sc);
	if (st != LBS_OK)
		return st;
	lbs_hy_balance_interrupt(&bal, interrupt);
	double total = 0;
	*changes = 0;
	for (size_t i = 0; st == LBS_OK && i < j->n_steps; i++) {
		if (j->ratio)
			lbs_hy_balance_lengths(&bal, j->ratio + i * j->n_mb);
		int64_t packed = bal.packings;
		if ((st = lbs_hy_balance_decide(&bal, (int64_t)i, err)) != LBS_OK)
			break;
		double T;
		*changes += bal.changed || bal.packings > packed;
		if ((st = lbs_hy_balance_step(&bal, &T, NULL, err)) == LBS_OK)
			total += T + bal.action_s; /* a pause (re-split, decision) is the step's */
	}
	*mean_s = total / (double)j->n_steps;
	lbs_hy_balance_destroy(&bal);
	return st;
}
