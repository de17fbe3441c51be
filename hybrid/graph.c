/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The schedules and the graph of one hybrid-parallel step (hybrid/hybrid.h).
 *
 * The edges are those of the what-if dependency model (doc/whatif.md, rules
 * R1 to R7 and groups G1 to G4), written out from the schedule instead of
 * inferred from a trace's start times, so that a simulated step replays
 * exactly under whatif/replay.c. */
#include "hybrid/hybrid.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/queue.h"

lbs_status lbs_hy_plan_check(const lbs_hy_plan *pl, lbs_error *err)
{
	if (pl->d < 1 || pl->p < 1 || pl->t < 1 || pl->v < 1 || pl->m < 1)
		return lbs_error_set(err, LBS_EINPUT, "hybrid plan: degrees d %d, p %d, t %d, v %d and m %d must be "
				     ">= 1", pl->d, pl->p, pl->t, pl->v, pl->m);
	if (pl->schedule == LBS_HY_INTERLEAVED && (pl->v < 2 || pl->m % pl->p))
		return lbs_error_set(err, LBS_EINPUT, "hybrid plan: the interleaved schedule needs at least 2 chunks "
				     "a stage (has %d) and micro-batches a multiple of the stages (%d of %d)", pl->v,
				     pl->m, pl->p);
	if (pl->schedule != LBS_HY_INTERLEAVED && pl->v != 1)
		return lbs_error_set(err, LBS_EINPUT, "hybrid plan: %d chunks a stage need the interleaved schedule",
				     pl->v);
	for (int r = 0; pl->m_of && r < pl->d; r++)
		if (pl->m_of[r] < 1 || (pl->schedule == LBS_HY_INTERLEAVED && pl->m_of[r] % pl->p))
			return lbs_error_set(err, LBS_EINPUT, "hybrid plan: replica %d runs %d micro-batches: at least "
					     "1%s", r, pl->m_of[r],
					     pl->schedule == LBS_HY_INTERLEAVED ? ", a multiple of the stages" : "");
	size_t G = (size_t)pl->d * (size_t)pl->p, v = (size_t)pl->v;
	if (pl->ep > 1) {
		if (pl->d % pl->ep || !pl->xchg_f_s || !pl->xchg_b_s)
			return lbs_error_set(err, LBS_EINPUT, "hybrid plan: expert parallelism of degree %d must divide "
					     "d %d and come with its all-to-all times", pl->ep, pl->d);
		for (int r = 0; pl->m_of && r < pl->d; r++)
			if (pl->m_of[r] != pl->m_of[r / pl->ep * pl->ep])
				return lbs_error_set(err, LBS_EINPUT, "hybrid plan: replicas %d and %d of one expert "
						     "group run %d and %d micro-batches: an expert group runs as many",
						     r / pl->ep * pl->ep, r, pl->m_of[r / pl->ep * pl->ep], pl->m_of[r]);
		for (size_t i = 0; i < G * v; i++)
			if (!(pl->xchg_f_s[i] >= 0 && pl->xchg_b_s[i] >= 0) || !isfinite(pl->xchg_f_s[i] + pl->xchg_b_s[i]))
				return lbs_error_set(err, LBS_EINPUT, "hybrid plan: group %zu chunk %zu: all-to-all times "
						     "must be finite and >= 0", i / v, i % v);
	}
	for (size_t i = 0; i < G * v; i++)
		if (!(pl->fwd_s[i] >= 0 && pl->bwd_s[i] >= 0 && pl->fwd_fixed_s[i] >= 0 && pl->bwd_fixed_s[i] >= 0) ||
		    !isfinite(pl->fwd_s[i] + pl->bwd_s[i] + pl->fwd_fixed_s[i] + pl->bwd_fixed_s[i]))
			return lbs_error_set(err, LBS_EINPUT, "hybrid plan: group %zu chunk %zu: compute times must be "
					     "finite and >= 0", i / v, i % v);
	for (size_t i = 0; pl->fwd_att_s && pl->bwd_att_s && i < G * v; i++)
		if (!(pl->fwd_att_s[i] >= 0 && pl->fwd_att_s[i] <= pl->fwd_s[i] && pl->bwd_att_s[i] >= 0 &&
		      pl->bwd_att_s[i] <= pl->bwd_s[i]))
			return lbs_error_set(err, LBS_EINPUT, "hybrid plan: group %zu chunk %zu: the attention's share "
					     "must lie between 0 and the compute", i / v, i % v);
	for (size_t g = 0; g < G; g++)
		if (!(pl->opt_s[g] >= 0 && pl->p2p_s[g] >= 0) || !isfinite(pl->opt_s[g] + pl->p2p_s[g]))
			return lbs_error_set(err, LBS_EINPUT, "hybrid plan: group %zu: optimizer and p2p times must "
					     "be finite and >= 0", g);
	for (size_t i = 0; i < (size_t)pl->p * v; i++)
		if (!(pl->grad_s[i] >= 0 && pl->gather_s[i] >= 0) || !isfinite(pl->grad_s[i] + pl->gather_s[i]))
			return lbs_error_set(err, LBS_EINPUT, "hybrid plan: stage %zu chunk %zu: collective times "
					     "must be finite and >= 0", i / v, i % v);
	if (!(pl->emb_s >= 0 && pl->clip_s >= 0) || !isfinite(pl->emb_s + pl->clip_s))
		return lbs_error_set(err, LBS_EINPUT, "hybrid plan: embedding and clip times must be finite, >= 0");
	for (size_t g = 0; pl->avail && g < G; g++) {
		const lbs_hy_avail *a = &pl->avail[g];
		for (size_t i = 0; i < a->n; i++)
			if (!(a->level[i] > 0) || !isfinite(a->level[i]) || !isfinite(a->t[i]) ||
			    (i ? a->t[i] <= a->t[i - 1] : a->t[i] != 0))
				return lbs_error_set(err, LBS_EINPUT, "hybrid plan: group %zu: availability piece %zu: "
						     "levels must be > 0 and times increasing from 0", g, i);
	}
	return LBS_OK;
}

/* Megatron-LM's interleaved schedule (Narayanan et al., SC'21, sec. 2.2;
 * megatron/core/pipeline_parallel/schedules.py,
 * forward_backward_pipelining_with_interleaving): virtual micro-batch k
 * runs chunk (k mod p v) / p (backward: counted from the last chunk) on
 * micro-batch (k / (p v)) p + k mod p; stage s first runs
 * 2 (p - s - 1) + (v - 1) p forwards, then alternates one forward and one
 * backward, then runs the backwards left. 1F1B (v = 1): p - s - 1
 * forwards first (PipeDream-Flush, Narayanan et al. 2021). GPipe: every
 * forward, then every backward (Huang et al., NeurIPS 2019). */
void lbs_hy_schedule_order(const lbs_hy_plan *pl, int s, lbs_hy_compute *out)
{
	lbs_hy_schedule_order_m(pl, s, pl->m, out);
}

void lbs_hy_schedule_order_m(const lbs_hy_plan *pl, int s, int m, lbs_hy_compute *out)
{
	int p = pl->p, v = pl->v, total = m * v;
	int warmup;
	if (pl->schedule == LBS_HY_GPIPE)
		warmup = total;
	else if (pl->schedule == LBS_HY_1F1B)
		warmup = p - s - 1;
	else
		warmup = 2 * (p - s - 1) + (v - 1) * p;
	if (warmup > total)
		warmup = total;
	int n = 0, f = 0, b = 0;
#define VIRTUAL(k, bwd)                                                                               \
	(lbs_hy_compute){ (uint8_t)(bwd), ((k) / (p * v)) * p + (k) % p,                               \
			  (bwd) ? v - 1 - ((k) % (p * v)) / p : ((k) % (p * v)) / p }
	while (f < warmup)
		out[n++] = VIRTUAL(f, 0), f++;
	while (f < total) {
		out[n++] = VIRTUAL(f, 0), f++;
		out[n++] = VIRTUAL(b, 1), b++;
	}
	while (b < total)
		out[n++] = VIRTUAL(b, 1), b++;
#undef VIRTUAL
}

/* ---- building ------------------------------------------------------------ */

typedef struct edge {
	uint32_t from, to;
} edge;

typedef struct builder {
	lbs_hy_graph *gr;
	edge *e;
	size_t n_e, cap_e;
	uint32_t *coll_of; /* per op: its collective, UINT32_MAX: local */
	lbs_error *err;
	bool oom;
} builder;

static void add_edge(builder *b, uint32_t from, uint32_t to)
{
	if (b->n_e == b->cap_e) {
		size_t cap = b->cap_e ? 2 * b->cap_e : 1024;
		edge *e = realloc(b->e, cap * sizeof *e);
		if (!e) {
			b->oom = true;
			return;
		}
		b->e = e;
		b->cap_e = cap;
	}
	b->e[b->n_e++] = (edge){ from, to };
}

/* The per-group layout of the ops, the same for every group: local op
 * numbers (lbs_hy_op). */
typedef struct layout {
	uint32_t n_comp, fr, br, fs, bs, ag, rs, mark, sep, gc, ln, emb, clip, opt, xc, n;
	uint32_t nb; /* buckets a chunk */
	bool dp, sep_ar;
} layout;

static layout make_layout(const lbs_hy_plan *pl, int m)
{
	layout L;
	uint32_t mv = (uint32_t)(m * pl->v), v = (uint32_t)pl->v;
	L.dp = pl->d > 1;
	L.sep_ar = L.dp && pl->overlap_dp;
	L.n_comp = 2 * mv;
	L.fr = L.n_comp;
	L.br = L.fr + mv;
	L.fs = L.br + mv;
	L.bs = L.fs + mv;
	L.ag = L.bs + mv;
	L.nb = pl->buckets > 1 ? (uint32_t)pl->buckets : 1;
	L.rs = L.ag + (L.dp && pl->zero_stage >= 1 ? v : 0);
	L.mark = L.rs + (L.dp ? v * L.nb : 0);
	L.sep = L.mark + (L.sep_ar ? v * (L.nb - 1) : 0);
	L.gc = L.sep + (L.sep_ar ? 1 : 0);
	L.ln = L.gc + 1;
	L.emb = L.ln + 1;
	L.clip = L.emb + 1;
	L.opt = L.clip + 1;
	L.xc = L.opt + 1; /* expert parallelism: an exchange after each compute */
	L.n = L.xc + (pl->ep > 1 ? L.n_comp : 0);
	return L;
}

static void set_op(lbs_hy_graph *gr, uint32_t o, lbs_optype type, int seq, int mc, int mb)
{
	gr->type[o] = (uint8_t)type;
	gr->seq[o] = seq;
	gr->mc[o] = mc;
	gr->mb[o] = mb;
	gr->kind[o] = LBS_HY_LOCAL;
}

/* A collective of the ops members[0..n) ending at the latest arrival plus
 * x (the same for every member). */
static uint32_t new_coll(builder *b)
{
	return (uint32_t)b->gr->n_coll++;
}

static void join(builder *b, uint32_t op, uint32_t coll, double x)
{
	b->gr->kind[op] = LBS_HY_MEMBER;
	b->gr->x[op] = x;
	b->coll_of[op] = coll;
}

/* Which of g's forward (backward) computes runs micro-batch mb of chunk c:
 * index[(c * m + mb) * 2 + backward]. */
static void compute_index(const lbs_hy_compute *K, size_t n, int m, uint32_t *index)
{
	uint32_t k[2] = { 0, 0 };
	for (size_t i = 0; i < n; i++)
		index[((size_t)K[i].chunk * (size_t)m + (size_t)K[i].mb) * 2 + K[i].backward] = k[K[i].backward]++;
}

static lbs_status csr(builder *b, size_t n, uint32_t **off, uint32_t **list, bool by_to)
{
	*off = calloc(n + 1, sizeof **off);
	*list = malloc((b->n_e ? b->n_e : 1) * sizeof **list);
	if (!*off || !*list)
		return lbs_error_set(b->err, LBS_EINTERNAL, "out of memory building the hybrid graph");
	for (size_t i = 0; i < b->n_e; i++)
		(*off)[(by_to ? b->e[i].to : b->e[i].from) + 1]++;
	for (size_t i = 0; i < n; i++)
		(*off)[i + 1] += (*off)[i];
	uint32_t *fill = malloc((n + 1) * sizeof *fill);
	if (!fill)
		return lbs_error_set(b->err, LBS_EINTERNAL, "out of memory building the hybrid graph");
	memcpy(fill, *off, (n + 1) * sizeof *fill);
	for (size_t i = 0; i < b->n_e; i++) {
		uint32_t key = by_to ? b->e[i].to : b->e[i].from, val = by_to ? b->e[i].from : b->e[i].to;
		(*list)[fill[key]++] = val;
	}
	free(fill);
	return LBS_OK;
}

/* The ops of group g = (r, s): its computes, p2p, data-parallel ops and
 * tail, and their in-group edges (R1, R3 to R7). */
static void build_group(builder *b, const layout *L, size_t g, const lbs_hy_compute *K)
{
	lbs_hy_graph *gr = b->gr;
	const lbs_hy_plan *pl = gr->plan;
	int v = pl->v;
	const uint32_t G = (uint32_t)gr->n_groups, gg = (uint32_t)g;
#define OP(x) ((uint32_t)(x) * G + gg)
	/* where compute i ends: its exchange under expert parallelism */
	bool xc = pl->ep > 1;
#define END(i) (xc ? OP(L->xc + (i)) : OP(i))
	uint32_t kf = 0, kb = 0, first_b = UINT32_MAX, last_of[2] = { 0, 0 };
	uint32_t last_b_of_chunk[64], last_b_end[64], first_f_of_chunk[64], last_b_recv[64], last_b_prev[64];
	for (int c = 0; c < v && c < 64; c++)
		last_b_of_chunk[c] = first_f_of_chunk[c] = UINT32_MAX;
	for (uint32_t i = 0; i < L->n_comp; i++) {
		uint32_t o = OP(i);
		const lbs_hy_compute *k = &K[i];
		size_t gc = g * (size_t)v + (size_t)k->chunk;
		set_op(gr, o, k->backward ? LBS_OP_BACKWARD_COMPUTE : LBS_OP_FORWARD_COMPUTE,
		       (int)(k->backward ? kb : kf), k->chunk, k->mb);
		gr->kind[o] = LBS_HY_COMPUTE;
		gr->work[o] = k->backward ? pl->bwd_s[gc] : pl->fwd_s[gc];
		gr->fixed[o] = k->backward ? pl->bwd_fixed_s[gc] : pl->fwd_fixed_s[gc];
		if (pl->fwd_att_s && pl->bwd_att_s)
			gr->att[o] = k->backward ? pl->bwd_att_s[gc] : pl->fwd_att_s[gc];
		if (i)
			add_edge(b, END(i - 1), o); /* R1 */
		uint32_t j = k->backward ? kb++ : kf++;
		uint32_t rl = (k->backward ? L->br : L->fr) + j, sl = (k->backward ? L->bs : L->fs) + j;
		uint32_t recv = OP(rl), send = OP(sl);
		add_edge(b, recv, o); /* R3: the compute waits for its input */
		if (xc) { /* its exchange (a collective of the expert group, joined later) */
			set_op(gr, END(i), gr->type[o], gr->seq[o], k->chunk, k->mb);
			add_edge(b, o, END(i));
		}
		add_edge(b, END(i), send); /* R3: the send follows its compute */
		if (j) {
			/* R3: a receive is posted once the previous compute of its direction is done; R4: streams */
			add_edge(b, last_of[k->backward], recv);
			add_edge(b, OP(rl - 1), recv);
			add_edge(b, OP(sl - 1), send);
		}
		set_op(gr, recv, k->backward ? LBS_OP_BACKWARD_RECV : LBS_OP_FORWARD_RECV, (int)j, -1, -1);
		set_op(gr, send, k->backward ? LBS_OP_BACKWARD_SEND : LBS_OP_FORWARD_SEND, (int)j, -1, -1);
		last_of[k->backward] = END(i);
		if (k->backward && first_b == UINT32_MAX)
			first_b = i;
		if (k->backward && k->chunk < 64) {
			last_b_of_chunk[k->chunk] = o;
			last_b_end[k->chunk] = END(i);
			last_b_recv[k->chunk] = recv;
			last_b_prev[k->chunk] = i ? END(i - 1) : UINT32_MAX;
		}
		if (!k->backward && k->chunk < 64 && first_f_of_chunk[k->chunk] == UINT32_MAX)
			first_f_of_chunk[k->chunk] = o;
	}
	/* R5: the first backward exchange waits for the compute two before the first backward */
	if (first_b != UINT32_MAX && first_b >= 2) {
		add_edge(b, END(first_b - 2), OP(L->br));
		add_edge(b, END(first_b - 2), OP(L->bs));
	}
	/* R6: the all-gathers and reduce-scatters of the stage form one chain */
	uint32_t chain = UINT32_MAX;
	for (uint32_t c = 0; c < L->rs - L->ag; c++) {
		uint32_t o = OP(L->ag + c);
		set_op(gr, o, LBS_OP_PARAMS_ALL_GATHER, (int)c, (int)c, -1);
		if (chain != UINT32_MAX)
			add_edge(b, chain, o);
		chain = o;
		if (first_f_of_chunk[c] != UINT32_MAX)
			add_edge(b, o, first_f_of_chunk[c]);
	}
	uint32_t gcop = OP(L->gc), ln = OP(L->ln), emb = OP(L->emb), clip = OP(L->clip), opt = OP(L->opt);
	set_op(gr, gcop, LBS_OP_GC, 0, -1, -1);
	set_op(gr, ln, LBS_OP_LAYERNORM_GRADS_ALL_REDUCE, 0, -1, -1);
	set_op(gr, emb, LBS_OP_EMBEDDING_GRADS_ALL_REDUCE, 0, -1, -1);
	set_op(gr, clip, LBS_OP_OPTIMIZER_CLIP_MAIN_GRAD, 0, -1, -1);
	set_op(gr, opt, LBS_OP_OPTIMIZER, 0, -1, -1);
	gr->kind[opt] = LBS_HY_COMPUTE;
	gr->work[opt] = pl->opt_s[g];
	gr->opt[g] = opt;
	add_edge(b, END(L->n_comp - 1), gcop); /* R7: after the last compute */
	add_edge(b, gcop, ln);
	add_edge(b, ln, emb);
	/* The reductions, `buckets` a chunk: overlapped, in the order the
	 * chunks' backwards end (the last chunk first), bucket j after its
	 * marker (the last backward's (j + 1) / buckets, the last bucket after
	 * the backward itself); else after the embedding pair, chunk 0 first. */
	uint32_t before_clip = emb;
	for (uint32_t q = 0; L->dp && q < (uint32_t)v; q++) {
		uint32_t c = pl->overlap_dp ? (uint32_t)v - 1 - q : q;
		for (uint32_t j = 0; j < L->nb; j++) {
			uint32_t o = OP(L->rs + q * L->nb + j);
			set_op(gr, o, LBS_OP_GRADS_REDUCE_SCATTER, (int)(q * L->nb + j), (int)c, -1);
			if (chain != UINT32_MAX)
				add_edge(b, chain, o); /* R6: the chain */
			if (!pl->overlap_dp && q == 0 && j == 0)
				add_edge(b, emb, o); /* R7: after the embedding pair */
			chain = o;
			if (!pl->overlap_dp || last_b_of_chunk[c] == UINT32_MAX)
				continue;
			if (j + 1 == L->nb) {
				add_edge(b, last_b_end[c], o); /* R6: after its chunk's last backward */
				continue;
			}
			/* the marker starts with the last backward (the same
			 * dependencies) and does (j + 1) / nb of its work */
			uint32_t mk = OP(L->mark + c * (L->nb - 1) + j), lb = last_b_of_chunk[c];
			/* its backward's micro-batch, so that a length scales both alike */
			set_op(gr, mk, LBS_OP_BACKWARD_COMPUTE, -1, (int)c, gr->mb[lb]);
			gr->kind[mk] = LBS_HY_PARTIAL;
			double f = (double)(j + 1) / (double)L->nb;
			gr->work[mk] = f * gr->work[lb];
			gr->fixed[mk] = f * gr->fixed[lb];
			gr->att[mk] = f * gr->att[lb];
			add_edge(b, last_b_recv[c], mk);
			if (last_b_prev[c] != UINT32_MAX)
				add_edge(b, last_b_prev[c], mk);
			add_edge(b, mk, o);
		}
	}
	if (L->dp && !pl->overlap_dp)
		before_clip = chain;
	if (L->sep_ar) {
		uint32_t o = OP(L->sep);
		set_op(gr, o, LBS_OP_SEPARATE_GRADS_ALL_REDUCE, 0, -1, -1);
		add_edge(b, OP(L->rs + (uint32_t)v * L->nb - 1), ln);
		add_edge(b, emb, o);
		before_clip = o;
	}
	add_edge(b, before_clip, clip);
	add_edge(b, clip, opt);
#undef END
#undef OP
}

lbs_status lbs_hy_graph_build(lbs_hy_graph *gr, const lbs_hy_plan *pl, lbs_error *err)
{
	memset(gr, 0, sizeof *gr);
	lbs_status st = lbs_hy_plan_check(pl, err);
	if (st != LBS_OK)
		return st;
	if (pl->v > 64)
		return lbs_error_set(err, LBS_EINPUT, "hybrid plan: at most 64 chunks a stage (has %d)", pl->v);
	if (pl->buckets > 1024)
		return lbs_error_set(err, LBS_EINPUT, "hybrid plan: at most 1024 buckets a chunk (has %d)", pl->buckets);
	gr->plan = pl;
	/* Each replica's layout (its micro-batches, lbs_hy_replica_m); every
	 * group has the most ops of any, those beyond its own LBS_HY_PAD. */
	int p = pl->p, v = pl->v, d = pl->d, m_max = 0;
	layout *Lr = malloc((size_t)d * sizeof *Lr);
	if (!Lr)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory building the hybrid graph");
	uint32_t per = 0, x0 = 0, n_x = 0;
	for (int r = 0; r < d; r++) {
		int m = lbs_hy_replica_m(pl, r);
		Lr[r] = make_layout(pl, m);
		per = Lr[r].n > per ? Lr[r].n : per;
		m_max = m > m_max ? m : m_max;
		x0 = Lr[r].xc > x0 ? Lr[r].xc : x0;
		n_x = Lr[r].n_comp > n_x ? Lr[r].n_comp : n_x;
	}
	if (pl->ep > 1) /* the exchanges at the same local ops in every group */
		for (int r = 0; r < d; r++) {
			Lr[r].xc = x0;
			Lr[r].n = per = x0 + n_x;
		}
	size_t G = (size_t)d * (size_t)p, n = G * per;
	/* one event handler an op: refuse before allocating what the engine cannot run */
	if (n > LBS_HANDLE_MAX) {
		free(Lr);
		return lbs_error_set(err, LBS_EINPUT, "a hybrid step of %zu operations (%zu groups of %u): more than "
				     "the %u the event engine holds", n, G, per, (unsigned)LBS_HANDLE_MAX);
	}
	gr->n_ops = n;
	gr->n_groups = G;
	gr->per_group = per;
	gr->opt = malloc(G * sizeof *gr->opt);
	gr->mb_first = malloc(((size_t)d + 1) * sizeof *gr->mb_first);
	if (gr->mb_first) {
		gr->mb_first[0] = 0;
		for (int r = 0; r < d; r++)
			gr->mb_first[r + 1] = gr->mb_first[r] + (uint32_t)lbs_hy_replica_m(pl, r);
	}
	gr->type = calloc(n, 1);
	gr->kind = calloc(n, 1);
	gr->seq = calloc(n, sizeof *gr->seq);
	gr->mc = calloc(n, sizeof *gr->mc);
	gr->mb = calloc(n, sizeof *gr->mb);
	gr->work = calloc(n, sizeof *gr->work);
	gr->fixed = calloc(n, sizeof *gr->fixed);
	gr->att = calloc(n, sizeof *gr->att);
	gr->x = calloc(n, sizeof *gr->x);
	gr->coll = calloc(n, sizeof *gr->coll);
	builder b = { .gr = gr, .err = err };
	b.coll_of = malloc(n * sizeof *b.coll_of);
	size_t nk_max = 2 * (size_t)m_max * (size_t)v;
	lbs_hy_compute *K = malloc((size_t)p * nk_max * sizeof *K);
	uint32_t *index = malloc((size_t)p * nk_max * sizeof *index);
	if (!gr->opt || !gr->mb_first || !gr->type || !gr->kind || !gr->seq || !gr->mc ||
	    !gr->mb || !gr->work || !gr->fixed || !gr->att || !gr->x || !gr->coll || !b.coll_of || !K || !index) {
		st = lbs_error_set(err, LBS_EINTERNAL, "out of memory building the hybrid graph (%zu ops)", n);
		goto out;
	}
	memset(b.coll_of, 0xff, n * sizeof *b.coll_of);
	if (pl->ep > 1) /* what no group's layout fills (exchanges of computes it has not) pads */
		memset(gr->kind, LBS_HY_PAD, n);
	for (int r = 0; r < d; r++) {
		/* the schedule of this replica's micro-batches, stage by stage */
		int m = lbs_hy_replica_m(pl, r);
		const layout *L = &Lr[r];
		size_t nk = (size_t)L->n_comp;
		for (int s = 0; s < p; s++) {
			lbs_hy_schedule_order_m(pl, s, m, K + (size_t)s * nk);
			compute_index(K + (size_t)s * nk, nk, m, index + (size_t)s * nk);
		}
		for (int s = 0; s < p; s++) {
			size_t g = (size_t)r * (size_t)p + (size_t)s;
			build_group(&b, L, g, K + (size_t)s * nk);
			for (uint32_t l = L->n; l < per; l++)
				gr->kind[lbs_hy_op(gr, g, l)] = LBS_HY_PAD;
		}
		/* G1: the p2p pairs. The forward output of chunk c on stage s
		 * feeds stage s + 1's chunk c (or stage 0's chunk c + 1 from the
		 * last stage); the backward runs the other way. A transfer whose
		 * peer lies outside the model is an idle op of no duration. */
		for (int s = 0; s < p; s++) {
			size_t g = (size_t)r * (size_t)p + (size_t)s;
			int nx_s = s + 1 < p ? s + 1 : 0, dc = s + 1 < p ? 0 : 1;
			size_t nx = (size_t)r * (size_t)p + (size_t)nx_s;
			for (int c = 0; c < v; c++)
				for (int mb = 0; mb < m; mb++) {
					size_t at = ((size_t)c * (size_t)m + (size_t)mb) * 2;
					uint32_t fo = index[(size_t)s * nk + at], bo = index[(size_t)s * nk + at + 1];
					if (c + dc < v) {
						size_t nat = ((size_t)(c + dc) * (size_t)m + (size_t)mb) * 2;
						uint32_t fi = index[(size_t)nx_s * nk + nat];
						uint32_t bi = index[(size_t)nx_s * nk + nat + 1];
						uint32_t cf = new_coll(&b), cb = new_coll(&b);
						join(&b, lbs_hy_op(gr, g, L->fs + fo), cf, pl->p2p_s[g]);
						join(&b, lbs_hy_op(gr, nx, L->fr + fi), cf, pl->p2p_s[g]);
						join(&b, lbs_hy_op(gr, nx, L->bs + bi), cb, pl->p2p_s[g]);
						join(&b, lbs_hy_op(gr, g, L->br + bo), cb, pl->p2p_s[g]);
					}
				}
		}
	}
	/* G2: the data-parallel collectives of each stage; G3: the embedding
	 * pair of each replica; G4: the clipping barrier over every group.
	 * Every replica has as many of these ops, at its own local numbers. */
#define AT(r, s, field) lbs_hy_op(gr, (size_t)(r) * (size_t)p + (size_t)(s), Lr[r].field)
	layout L = Lr[0];
	for (int s = 0; L.dp && s < p; s++) {
		for (uint32_t c = 0; c < L.rs - L.ag; c++) {
			uint32_t k = new_coll(&b);
			for (int r = 0; r < d; r++)
				join(&b, AT(r, s, ag) + c * (uint32_t)G, k, pl->gather_s[(size_t)s * (size_t)v + c]);
		}
		for (uint32_t q = 0; q < (uint32_t)v * L.nb; q++) {
			uint32_t k = new_coll(&b), c = pl->overlap_dp ? (uint32_t)v - 1 - q / L.nb : q / L.nb;
			for (int r = 0; r < d; r++)
				join(&b, AT(r, s, rs) + q * (uint32_t)G, k, pl->grad_s[(size_t)s * (size_t)v + c]);
		}
		if (L.sep_ar) {
			uint32_t k = new_coll(&b);
			for (int r = 0; r < d; r++)
				join(&b, AT(r, s, sep), k, 0);
		}
	}
	/* the expert groups' exchanges: compute i of the ep replicas of a
	 * group (the same micro-batch, chunk and direction: they run as many
	 * micro-batches in the same order) */
	for (int r0 = 0; pl->ep > 1 && r0 < d; r0 += pl->ep)
		for (int s = 0; s < p; s++)
			for (uint32_t i = 0; i < Lr[r0].n_comp; i++) {
				uint32_t k = new_coll(&b), o0 = AT(r0, s, xc) + i * (uint32_t)G;
				size_t gc = ((size_t)r0 * (size_t)p + (size_t)s) * (size_t)v + (size_t)gr->mc[o0];
				double x = gr->type[o0] == LBS_OP_BACKWARD_COMPUTE ? pl->xchg_b_s[gc] : pl->xchg_f_s[gc];
				for (int r = r0; r < r0 + pl->ep; r++)
					join(&b, AT(r, s, xc) + i * (uint32_t)G, k, x);
			}
	if (pl->ep > 1) {
		gr->xc = x0;
		gr->n_xc = n_x;
	}
	for (int r = 0; r < d; r++) {
		uint32_t k = new_coll(&b);
		join(&b, AT(r, 0, emb), k, pl->emb_s);
		if (p > 1)
			join(&b, AT(r, p - 1, emb), k, pl->emb_s);
	}
	uint32_t clip = new_coll(&b);
	for (size_t g = 0; g < G; g++)
		join(&b, AT(g / (size_t)p, g % (size_t)p, clip), clip, pl->clip_s);
#undef AT
	if (b.oom) {
		st = lbs_error_set(err, LBS_EINTERNAL, "out of memory building the hybrid graph's edges");
		goto out;
	}
	/* The collectives' members, by counting. */
	gr->mem_off = calloc(gr->n_coll + 1, sizeof *gr->mem_off);
	size_t n_mem = 0;
	for (size_t o = 0; o < n; o++)
		n_mem += b.coll_of[o] != UINT32_MAX;
	gr->mem = malloc((n_mem ? n_mem : 1) * sizeof *gr->mem);
	if (!gr->mem_off || !gr->mem) {
		st = lbs_error_set(err, LBS_EINTERNAL, "out of memory building the hybrid graph");
		goto out;
	}
	for (size_t o = 0; o < n; o++)
		if (b.coll_of[o] != UINT32_MAX)
			gr->mem_off[b.coll_of[o] + 1]++;
	for (size_t k = 0; k < gr->n_coll; k++)
		gr->mem_off[k + 1] += gr->mem_off[k];
	{
		uint32_t *fill = malloc((gr->n_coll + 1) * sizeof *fill);
		if (!fill) {
			st = lbs_error_set(err, LBS_EINTERNAL, "out of memory building the hybrid graph");
			goto out;
		}
		memcpy(fill, gr->mem_off, (gr->n_coll + 1) * sizeof *fill);
		for (size_t o = 0; o < n; o++)
			if (b.coll_of[o] != UINT32_MAX) {
				gr->coll[o] = b.coll_of[o];
				gr->mem[fill[b.coll_of[o]]++] = (uint32_t)o;
			}
		free(fill);
	}
	if ((st = csr(&b, n, &gr->dep_off, &gr->dep, true)) != LBS_OK ||
	    (st = csr(&b, n, &gr->out_off, &gr->out, false)) != LBS_OK)
		goto out;
out:
	free(Lr);
	free(b.e);
	free(b.coll_of);
	free(K);
	free(index);
	if (st != LBS_OK)
		lbs_hy_graph_free(gr);
	return st;
}

void lbs_hy_graph_free(lbs_hy_graph *gr)
{
	free(gr->opt);
	free(gr->mb_first);
	free(gr->type);
	free(gr->kind);
	free(gr->seq);
	free(gr->mc);
	free(gr->mb);
	free(gr->att);
	free(gr->work);
	free(gr->fixed);
	free(gr->x);
	free(gr->coll);
	free(gr->dep_off);
	free(gr->dep);
	free(gr->out_off);
	free(gr->out);
	free(gr->mem_off);
	free(gr->mem);
	memset(gr, 0, sizeof *gr);
}
