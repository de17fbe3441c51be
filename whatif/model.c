/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "whatif/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#define NONE UINT32_MAX

/* Build-time state: the edges before they are sorted, group members. */
typedef struct builder {
	lbs_wi_model *m;
	const lbs_ops_trace *t;
	uint32_t *trow;      /* template row of each op */
	uint64_t *edge;      /* (v << 32) | u: v depends on u */
	size_t n_edge, cap_edge;
	uint32_t *gmem;      /* members of the comm groups, in group order */
	uint32_t *gstart;    /* first member of each comm group */
	bool *gsync;
	size_t n_gmem, n_cgroups;
	uint64_t *tkey;      /* (stage, type, seq) of the template ops, sorted */
	uint32_t *tkop;      /* the op of tkey[k] (the earliest in time order on ties) */
	uint32_t *chunk;     /* 4 x V: per model chunk, R6's ops */
	lbs_error *err;
	bool oom;
} builder;

static uint64_t op_key(int32_t stage, int type, int32_t seq)
{
	return (uint64_t)(uint32_t)stage << 40 | (uint64_t)type << 32 | (uint64_t)(uint32_t)seq;
}

const char *lbs_wi_op_name(const lbs_wi_model *m, uint32_t v, char *buf, size_t len)
{
	return lbs_fmt(buf, len, "%s_%d_%d", lbs_optype_name((lbs_optype)m->type[v]), (int)m->seq[v],
		       (int)m->stage[v]);
}

static float end_of(const lbs_ops_trace *t, size_t r)
{
	return t->start[r] + t->duration[r];
}

/* Time order of trace rows: start, then seq_id, then the optype's name. */
static int time_cmp(const lbs_ops_trace *t, uint32_t a, uint32_t b)
{
	if (t->start[a] != t->start[b])
		return t->start[a] < t->start[b] ? -1 : 1;
	if (t->seq_id[a] != t->seq_id[b])
		return t->seq_id[a] < t->seq_id[b] ? -1 : 1;
	return strcmp(lbs_optype_name((lbs_optype)t->optype[a]), lbs_optype_name((lbs_optype)t->optype[b]));
}

/* Sorting template rows by (stage, time order); qsort_r's argument is the trace. */
static int row_cmp(const void *pa, const void *pb, void *arg)
{
	const lbs_ops_trace *t = arg;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	if (t->stage[a] != t->stage[b])
		return t->stage[a] < t->stage[b] ? -1 : 1;
	return time_cmp(t, a, b);
}

static int u64_cmp(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
	return a < b ? -1 : a > b;
}

static int i64_cmp(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
	return a < b ? -1 : a > b;
}

static void add_edge(builder *b, uint32_t v, uint32_t u)
{
	if (v == NONE || u == NONE || b->oom)
		return;
	if (b->n_edge == b->cap_edge) {
		size_t cap = b->cap_edge ? 2 * b->cap_edge : 256;
		uint64_t *e = realloc(b->edge, cap * sizeof *e);
		if (!e) {
			b->oom = true;
			return;
		}
		b->edge = e;
		b->cap_edge = cap;
	}
	b->edge[b->n_edge++] = (uint64_t)v << 32 | u;
}

/* Ops of one stage and type, in time order (the template is sorted so). */
typedef struct oplist {
	uint32_t *op;
	size_t n;
	int32_t stage;
	int type;
} oplist;

/* The op of l with this seq_id (the earliest in time order), by binary
 * search over the template's keys: O(log n), not a scan of the list. */
static uint32_t by_seq(const builder *b, const oplist *l, int32_t seq)
{
	if (!l->n || seq < 0)
		return NONE;
	uint64_t k = op_key(l->stage, l->type, seq);
	size_t lo = 0, hi = b->m->n_ops;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (b->tkey[mid] < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < b->m->n_ops && b->tkey[lo] == k ? b->tkop[lo] : NONE;
}

static float tend(const builder *b, uint32_t v)
{
	return end_of(b->t, b->trow[v]);
}

static float tstart(const builder *b, uint32_t v)
{
	return b->t->start[b->trow[v]];
}

/* "path:line: OPNAME: what", at the template row of op v. */
static lbs_status model_error(builder *b, uint32_t v, const char *what)
{
	char name[96];
	lbs_wi_op_name(b->m, v, name, sizeof name);
	return lbs_ops_error(b->t, b->trow[v], b->err, NULL, "%s: %s", name, what);
}

/* R2 and R3 for direction dir (0 forward, 1 backward) and kind (0 send,
 * 1 recv) on one stage. */
static lbs_status match_p2p(builder *b, int s, oplist *L, int dir, int recv)
{
	lbs_wi_model *m = b->m;
	lbs_optype ct = dir ? LBS_OP_BACKWARD_COMPUTE : LBS_OP_FORWARD_COMPUTE;
	lbs_optype pt = dir ? (recv ? LBS_OP_BACKWARD_RECV : LBS_OP_BACKWARD_SEND)
			    : (recv ? LBS_OP_FORWARD_RECV : LBS_OP_FORWARD_SEND);
	const oplist *C = &L[ct], *Q = &L[pt];
	if (!Q->n)
		return LBS_OK;
	size_t n = C->n;
	double latest_start = -INFINITY, earliest_end = INFINITY;
	for (size_t k = 0; k < n; k++) {
		if (tstart(b, C->op[k]) > latest_start)
			latest_start = tstart(b, C->op[k]);
		if (tend(b, C->op[k]) < earliest_end)
			earliest_end = tend(b, C->op[k]);
	}
	size_t c = 0;
	for (size_t k = 0; k < Q->n; k++) {
		uint32_t v = Q->op[k];
		bool drop = recv ? tstart(b, v) > latest_start + LBS_WI_IDLE_TOL
				 : tend(b, v) < earliest_end - LBS_WI_IDLE_TOL;
		m->idle[v] = drop;
		c += !drop;
	}
	int shift = 0;
	if (c != n) {
		bool edge_stage = s == 0 || s == m->P - 1;
		if (!edge_stage || !(c == 0 || c + 1 == n))
			return model_error(b, Q->op[0], recv ? "the stage's recvs of this type do not "
					   "match its computes (only the first or last stage may have none or one "
					   "fewer)" : "the stage's sends of this type do not match its computes "
					   "(only the first or last stage may have none or one fewer)");
		if (recv && c + 1 == n)
			shift = 1;
	}
	size_t k = 0;
	for (size_t q = 0; q < Q->n; q++) {
		uint32_t v = Q->op[q];
		if (m->idle[v])
			continue;
		int32_t j = (int32_t)k + shift;
		k++;
		uint32_t comp = by_seq(b, C, j);
		if (comp == NONE) {
			char what[64];
			lbs_fmt(what, sizeof what, "no %s with seq_id %d on its stage", lbs_optype_name(ct), (int)j);
			return model_error(b, v, what);
		}
		int peer = m->gmc[comp] + ((pt == LBS_OP_FORWARD_SEND || pt == LBS_OP_BACKWARD_RECV) ? 1 : -1);
		if (peer < 0 || peer >= m->V * m->P)
			m->idle[v] = true;
		if (recv) {
			add_edge(b, comp, v);
			if (j >= 1)
				add_edge(b, v, by_seq(b, C, j - 1));
		} else {
			add_edge(b, v, comp);
		}
	}
	return LBS_OK;
}

static void chain(builder *b, const uint32_t *ops, size_t n)
{
	for (size_t k = 1; k < n; k++)
		add_edge(b, ops[k], ops[k - 1]);
}

static bool new_group(builder *b, bool sync)
{
	if (b->oom)
		return false;
	b->gstart[b->n_cgroups] = (uint32_t)b->n_gmem;
	b->gsync[b->n_cgroups] = sync;
	b->n_cgroups++;
	return true;
}

static void add_member(builder *b, uint32_t v)
{
	if (v == NONE)
		return;
	b->gmem[b->n_gmem++] = v;
}

/* The dependencies and groups of stage s (rules R1 to R7 of doc/whatif.md). */
/* Orders op ids by seq_id, then id (time order); qsort_r's argument: the model. */
static int seq_cmp(const void *pa, const void *pb, void *arg)
{
	const lbs_wi_model *m = arg;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	if (m->seq[a] != m->seq[b])
		return m->seq[a] < m->seq[b] ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* stage s's ops are v0 .. v1-1 (the template is sorted by stage); tmp has
 * room for v1 - v0 + 8 ops. */
static lbs_status stage_rules(builder *b, int s, size_t v0, size_t v1, oplist *L, uint32_t *K, uint32_t *tmp)
{
	lbs_wi_model *m = b->m;
	/* K: the computes in time order. */
	size_t nk = 0;
	for (size_t v = v0; v < v1; v++)
		if (m->type[v] == LBS_OP_FORWARD_COMPUTE || m->type[v] == LBS_OP_BACKWARD_COMPUTE)
			K[nk++] = (uint32_t)v;
	chain(b, K, nk); /* R1 */
	lbs_status st;
	for (int dir = 0; dir < 2; dir++)
		for (int recv = 0; recv < 2; recv++)
			if ((st = match_p2p(b, s, L, dir, recv)) != LBS_OK)
				return st;
	/* R4 */
	chain(b, L[LBS_OP_FORWARD_SEND].op, L[LBS_OP_FORWARD_SEND].n);
	chain(b, L[LBS_OP_FORWARD_RECV].op, L[LBS_OP_FORWARD_RECV].n);
	chain(b, L[LBS_OP_BACKWARD_SEND].op, L[LBS_OP_BACKWARD_SEND].n);
	chain(b, L[LBS_OP_BACKWARD_RECV].op, L[LBS_OP_BACKWARD_RECV].n);
	/* R5 */
	size_t first_b = 0;
	while (first_b < nk && m->type[K[first_b]] != LBS_OP_BACKWARD_COMPUTE)
		first_b++;
	if (first_b < nk && first_b >= 2) {
		add_edge(b, by_seq(b, &L[LBS_OP_BACKWARD_RECV], 0), K[first_b - 2]);
		add_edge(b, by_seq(b, &L[LBS_OP_BACKWARD_SEND], 0), K[first_b - 2]);
	}
	/* R6 */
	const oplist *AG = &L[LBS_OP_PARAMS_ALL_GATHER], *RS = &L[LBS_OP_GRADS_REDUCE_SCATTER];
	const oplist *SEP = &L[LBS_OP_SEPARATE_GRADS_ALL_REDUCE];
	if (!m->dp_ops && (AG->n || RS->n || SEP->n))
		return model_error(b, AG->n ? AG->op[0] : RS->n ? RS->op[0] : SEP->op[0],
				   "a data-parallel collective, but the job has one data-parallel "
				   "replica (D x dsp_size = 1): no rule places it");
	if (m->dp_ops) {
		/* the two lists, each in time order, merged (stably: an
		 * all-gather before a reduce-scatter that ties with it) */
		size_t n = 0, i = 0, j = 0;
		while (i < AG->n || j < RS->n)
			if (j == RS->n || (i < AG->n && time_cmp(b->t, b->trow[RS->op[j]], b->trow[AG->op[i]]) >= 0))
				tmp[n++] = AG->op[i++];
			else
				tmp[n++] = RS->op[j++];
		chain(b, tmp, n);
		/* per chunk c, in one pass each: the last all-gather (largest
		 * seq_id), the first forward compute, the last-ending backward
		 * compute, the first reduce-scatter (smallest seq_id) */
		uint32_t *ag = b->chunk, *fwd = ag + m->V, *bwd = fwd + m->V, *rs = bwd + m->V;
		for (size_t c = 0; c < 4 * (size_t)m->V; c++)
			b->chunk[c] = NONE;
		for (size_t k = 0; k < AG->n; k++) {
			uint32_t v = AG->op[k];
			if (m->mc[v] >= 0 && m->mc[v] < m->V && (ag[m->mc[v]] == NONE || m->seq[v] > m->seq[ag[m->mc[v]]]))
				ag[m->mc[v]] = v;
		}
		for (size_t k = 0; k < nk; k++) {
			uint32_t v = K[k];
			if (m->mc[v] < 0 || m->mc[v] >= m->V)
				continue;
			if (m->type[v] == LBS_OP_FORWARD_COMPUTE && fwd[m->mc[v]] == NONE)
				fwd[m->mc[v]] = v;
			if (m->type[v] == LBS_OP_BACKWARD_COMPUTE &&
			    (bwd[m->mc[v]] == NONE || tend(b, v) > tend(b, bwd[m->mc[v]])))
				bwd[m->mc[v]] = v;
		}
		for (size_t k = 0; k < RS->n; k++) {
			uint32_t v = RS->op[k];
			if (m->mc[v] >= 0 && m->mc[v] < m->V && (rs[m->mc[v]] == NONE || m->seq[v] < m->seq[rs[m->mc[v]]]))
				rs[m->mc[v]] = v;
		}
		for (int c = 0; c < m->V; c++) {
			add_edge(b, fwd[c], ag[c]);
			if (m->overlapped)
				add_edge(b, rs[c], bwd[c]);
		}
	}
	/* R7 */
	uint32_t last = NONE;
	for (size_t k = 0; k < nk; k++)
		if (last == NONE || tend(b, K[k]) > tend(b, last))
			last = K[k];
	uint32_t gc = by_seq(b, &L[LBS_OP_GC], 0);
	add_edge(b, gc, last);
	uint32_t ln = by_seq(b, &L[LBS_OP_LAYERNORM_GRADS_ALL_REDUCE], 0);
	uint32_t emb = (s == 0 || s == m->P - 1) ? by_seq(b, &L[LBS_OP_EMBEDDING_GRADS_ALL_REDUCE], 0) : NONE;
	uint32_t clip = by_seq(b, &L[LBS_OP_OPTIMIZER_CLIP_MAIN_GRAD], 0);
	uint32_t opt = by_seq(b, &L[LBS_OP_OPTIMIZER], 0);
	uint32_t sep = by_seq(b, &L[LBS_OP_SEPARATE_GRADS_ALL_REDUCE], 0);
	size_t n = 0;
	int32_t last_rs = -1; /* the largest seq_id of a reduce-scatter (r - 1 of doc/whatif.md) */
	for (size_t k = 0; k < RS->n; k++)
		if (m->seq[RS->op[k]] > last_rs)
			last_rs = m->seq[RS->op[k]];
	if (m->dp_ops && m->overlapped) {
		add_edge(b, ln, by_seq(b, RS, last_rs));
		tmp[n++] = gc;
		tmp[n++] = ln;
		tmp[n++] = emb;
		tmp[n++] = sep;
	} else {
		tmp[n++] = gc;
		tmp[n++] = ln;
		tmp[n++] = emb;
		if (m->dp_ops && RS->n) {
			/* reduce-scatters 0 .. r-1 that exist, by seq_id, each
			 * once (the earliest of a seq_id): no loop over seq_ids,
			 * which a row can make 2^31 */
			uint32_t *rs = tmp + n;
			memcpy(rs, RS->op, RS->n * sizeof *rs);
			qsort_r(rs, RS->n, sizeof *rs, seq_cmp, m);
			size_t u = 0;
			for (size_t k = 0; k < RS->n; k++)
				if (!u || m->seq[rs[k]] != m->seq[rs[u - 1]])
					rs[u++] = rs[k];
			n += u;
		}
	}
	tmp[n++] = clip;
	tmp[n++] = opt;
	/* the chain over the ops that exist */
	uint32_t prev = NONE;
	for (size_t k = 0; k < n; k++)
		if (tmp[k] != NONE) {
			add_edge(b, tmp[k], prev);
			prev = tmp[k];
		}
	return LBS_OK;
}

/* G1: the p2p pairs, k-th non-idle op with k-th non-idle peer. */
static lbs_status pair_p2p(builder *b, oplist *all, lbs_optype send, lbs_optype recv, int delta)
{
	lbs_wi_model *m = b->m;
	for (int s = 0; s < m->P; s++) {
		int peer = ((s + delta) % m->P + m->P) % m->P;
		const oplist *S = &all[(size_t)s * LBS_OP_N + send], *R = &all[(size_t)peer * LBS_OP_N + recv];
		size_t i = 0, j = 0;
		for (;;) {
			while (i < S->n && m->idle[S->op[i]])
				i++;
			while (j < R->n && m->idle[R->op[j]])
				j++;
			if (i == S->n && j == R->n)
				break;
			if (i == S->n || j == R->n) {
				uint32_t v = i < S->n ? S->op[i] : R->op[j];
				char what[96];
				lbs_fmt(what, sizeof what, "stage %d has no %s to pair with it", i < S->n ? peer : s,
					lbs_optype_name(i < S->n ? recv : send));
				return model_error(b, v, what);
			}
			if (!new_group(b, false))
				return lbs_error_set(b->err, LBS_EINTERNAL, "out of memory");
			add_member(b, S->op[i++]);
			add_member(b, R->op[j++]);
		}
		/* a stage's own receivers of this type are paired when its sender's loop runs */
	}
	return LBS_OK;
}

static lbs_status build_groups(builder *b, oplist *all)
{
	lbs_wi_model *m = b->m;
	lbs_status st;
	if ((st = pair_p2p(b, all, LBS_OP_FORWARD_SEND, LBS_OP_FORWARD_RECV, 1)) != LBS_OK ||
	    (st = pair_p2p(b, all, LBS_OP_BACKWARD_SEND, LBS_OP_BACKWARD_RECV, -1)) != LBS_OK)
		return st;
	for (size_t v = 0; v < m->n_ops; v++) {
		lbs_optype t = (lbs_optype)m->type[v];
		bool p2p = t == LBS_OP_FORWARD_SEND || t == LBS_OP_FORWARD_RECV || t == LBS_OP_BACKWARD_SEND ||
			   t == LBS_OP_BACKWARD_RECV;
		bool dpc = t == LBS_OP_PARAMS_ALL_GATHER || t == LBS_OP_GRADS_REDUCE_SCATTER ||
			   t == LBS_OP_SEPARATE_GRADS_ALL_REDUCE;
		if ((p2p && m->idle[v]) || (dpc && m->dp_ops)) {
			if (!new_group(b, dpc))
				return lbs_error_set(b->err, LBS_EINTERNAL, "out of memory");
			add_member(b, (uint32_t)v);
		}
	}
	uint32_t e0 = by_seq(b, &all[LBS_OP_EMBEDDING_GRADS_ALL_REDUCE], 0);
	uint32_t e1 = by_seq(b, &all[(size_t)(m->P - 1) * LBS_OP_N + LBS_OP_EMBEDDING_GRADS_ALL_REDUCE], 0);
	if (e0 != NONE || e1 != NONE) {
		new_group(b, false);
		add_member(b, e0);
		if (e1 != e0)
			add_member(b, e1);
	}
	bool any_clip = false;
	for (int s = 0; s < m->P; s++)
		if (by_seq(b, &all[(size_t)s * LBS_OP_N + LBS_OP_OPTIMIZER_CLIP_MAIN_GRAD], 0) != NONE)
			any_clip = true;
	if (any_clip) {
		new_group(b, true);
		for (int s = 0; s < m->P; s++)
			add_member(b, by_seq(b, &all[(size_t)s * LBS_OP_N + LBS_OP_OPTIMIZER_CLIP_MAIN_GRAD], 0));
	}
	/* Comm groups first, then one local group per remaining op. */
	m->group_of = malloc(m->n_ops * sizeof *m->group_of);
	m->mem_off = malloc((b->n_cgroups + m->n_ops + 1) * sizeof *m->mem_off);
	m->mem = malloc(m->n_ops * sizeof *m->mem);
	m->group_comm = calloc(b->n_cgroups + m->n_ops, sizeof *m->group_comm);
	m->group_sync = calloc(b->n_cgroups + m->n_ops, sizeof *m->group_sync);
	if (!m->group_of || !m->mem_off || !m->mem || !m->group_comm || !m->group_sync)
		return lbs_error_set(b->err, LBS_EINTERNAL, "out of memory");
	for (size_t v = 0; v < m->n_ops; v++)
		m->group_of[v] = NONE;
	size_t g = 0, k = 0;
	for (; g < b->n_cgroups; g++) {
		size_t end = g + 1 < b->n_cgroups ? b->gstart[g + 1] : b->n_gmem;
		m->mem_off[g] = (uint32_t)k;
		m->group_comm[g] = true;
		m->group_sync[g] = b->gsync[g];
		for (size_t i = b->gstart[g]; i < end; i++) {
			uint32_t v = b->gmem[i];
			if (m->group_of[v] != NONE)
				return model_error(b, v, "in two communication groups");
			m->group_of[v] = (uint32_t)g;
			m->mem[k++] = v;
			if (b->gsync[g])
				m->n_sync_ops++;
		}
	}
	m->n_comm_groups = g;
	for (size_t v = 0; v < m->n_ops; v++)
		if (m->group_of[v] == NONE) {
			m->mem_off[g] = (uint32_t)k;
			m->group_of[v] = (uint32_t)g++;
			m->mem[k++] = (uint32_t)v;
		}
	m->mem_off[g] = (uint32_t)k;
	m->n_groups = g;
	return LBS_OK;
}

/* Dependencies into CSR both ways; the groups' topological order. */
static lbs_status finish_graph(builder *b)
{
	lbs_wi_model *m = b->m;
	if (b->n_edge)
		qsort(b->edge, b->n_edge, sizeof *b->edge, u64_cmp);
	size_t n = 0;
	for (size_t i = 0; i < b->n_edge; i++)
		if (!n || b->edge[i] != b->edge[n - 1])
			b->edge[n++] = b->edge[i];
	m->n_edges = n;
	m->dep_off = calloc(m->n_ops + 1, sizeof *m->dep_off);
	m->dep = malloc((n + 1) * sizeof *m->dep);
	m->out_off = calloc(m->n_ops + 1, sizeof *m->out_off);
	m->out = malloc((n + 1) * sizeof *m->out);
	m->order = malloc(m->n_groups * sizeof *m->order);
	uint32_t *indeg = calloc(m->n_groups, sizeof *indeg);
	uint32_t *gout_off = calloc(m->n_groups + 1, sizeof *gout_off);
	uint32_t *gout = malloc((n + 1) * sizeof *gout);
	if (!m->dep_off || !m->dep || !m->out_off || !m->out || !m->order || !indeg || !gout_off || !gout) {
		free(indeg);
		free(gout_off);
		free(gout);
		return lbs_error_set(b->err, LBS_EINTERNAL, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t v = (uint32_t)(b->edge[i] >> 32), u = (uint32_t)b->edge[i];
		m->dep_off[v + 1]++;
		m->out_off[u + 1]++;
		gout_off[m->group_of[u] + 1]++;
	}
	for (size_t v = 0; v < m->n_ops; v++) {
		m->dep_off[v + 1] += m->dep_off[v];
		m->out_off[v + 1] += m->out_off[v];
	}
	for (size_t g = 0; g < m->n_groups; g++)
		gout_off[g + 1] += gout_off[g];
	uint32_t *fill = calloc(m->n_ops + m->n_groups, sizeof *fill);
	if (!fill) {
		free(indeg);
		free(gout_off);
		free(gout);
		return lbs_error_set(b->err, LBS_EINTERNAL, "out of memory");
	}
	lbs_status st = LBS_OK;
	/* the edges are sorted by v, then u: dep fills in order */
	for (size_t i = 0; i < n; i++)
		m->dep[i] = (uint32_t)b->edge[i];
	for (size_t i = 0; i < n; i++) {
		uint32_t v = (uint32_t)(b->edge[i] >> 32), u = (uint32_t)b->edge[i];
		m->out[m->out_off[u] + fill[u]++] = v;
		uint32_t gu = m->group_of[u], gv = m->group_of[v];
		gout[gout_off[gu] + fill[m->n_ops + gu]++] = gv;
		indeg[gv]++;
		if (gu == gv && st == LBS_OK)
			st = model_error(b, v, "depends on a member of its own communication group "
					 "(a cycle)");
	}
	size_t head = 0, tail = 0;
	for (size_t g = 0; g < m->n_groups; g++)
		if (!indeg[g])
			m->order[tail++] = (uint32_t)g;
	while (head < tail) {
		uint32_t g = m->order[head++];
		for (uint32_t i = gout_off[g]; i < gout_off[g + 1]; i++)
			if (--indeg[gout[i]] == 0)
				m->order[tail++] = gout[i];
	}
	if (st == LBS_OK && tail != m->n_groups) {
		uint32_t v = 0;
		for (size_t g = 0; g < m->n_groups; g++)
			if (indeg[g]) {
				v = m->mem[m->mem_off[g]];
				break;
			}
		st = model_error(b, v, "is on a cycle of dependencies and communication groups");
	}
	free(fill);
	free(indeg);
	free(gout_off);
	free(gout);
	return st;
}

/* Op ids by their key (qsort_r's argument: the keys). */
static int key_cmp(const void *pa, const void *pb, void *arg)
{
	const uint64_t *key = arg;
	uint32_t ia = *(const uint32_t *)pa, ib = *(const uint32_t *)pb;
	uint64_t a = key[ia], b = key[ib];
	if (a != b)
		return a < b ? -1 : 1;
	return ia < ib ? -1 : ia > ib; /* ties: the earlier op (time order) first */
}

static lbs_status instances(builder *b)
{
	lbs_wi_model *m = b->m;
	const lbs_ops_trace *t = b->t;
	size_t n_cells;
	/* Every (step, dp_rank) holds the template's ops once: a valid trace
	 * has exactly steps x D x ops rows. One with far fewer is refused
	 * before the cells are allocated (memory stays linear in the rows);
	 * one close to it is checked cell by cell, naming what is missing. */
	if (__builtin_mul_overflow(m->n_inst, m->n_ops, &n_cells) || n_cells / 4 > t->n)
		return lbs_error_set(b->err, LBS_EINPUT, "%s: %zu steps x %d dp_ranks x %zu ops of the template "
				     "step (step %lld, dp_rank 0) make %.0f op instances, but the trace has %zu "
				     "rows: every (step, dp_rank) must hold the template's ops, each once",
				     t->path, m->n_steps, m->D, m->n_ops, (long long)m->steps[0],
				     (double)m->n_inst * (double)m->n_ops, t->n);
	m->row = malloc(n_cells * sizeof *m->row);
	m->worker_rank = malloc((size_t)m->D * m->P * sizeof *m->worker_rank);
	/* (stage, type, seq) -> op: sorted keys for binary search */
	uint64_t *key = malloc(m->n_ops * sizeof *key);
	if (!m->row || !m->worker_rank || !key) {
		free(key);
		return lbs_error_set(b->err, LBS_EINTERNAL, "out of memory");
	}
	for (size_t i = 0; i < n_cells; i++)
		m->row[i] = NONE;
	for (size_t i = 0; i < (size_t)m->D * m->P; i++)
		m->worker_rank[i] = -1;
	for (size_t v = 0; v < m->n_ops; v++)
		key[v] = (uint64_t)m->stage[v] << 40 | (uint64_t)m->type[v] << 32 | (uint64_t)m->seq[v];
	/* kop[k]: the op of key[k] */
	uint32_t *kop = malloc(m->n_ops * sizeof *kop);
	if (!kop) {
		free(key);
		return lbs_error_set(b->err, LBS_EINTERNAL, "out of memory");
	}
	for (size_t v = 0; v < m->n_ops; v++)
		kop[v] = (uint32_t)v;
	qsort_r(kop, m->n_ops, sizeof *kop, key_cmp, key);
	uint64_t *sorted = malloc(m->n_ops * sizeof *sorted);
	if (!sorted) {
		free(key);
		free(kop);
		return lbs_error_set(b->err, LBS_EINTERNAL, "out of memory");
	}
	for (size_t k = 0; k < m->n_ops; k++)
		sorted[k] = key[kop[k]];
	free(key);
	key = sorted;
	lbs_status st = LBS_OK;
	for (size_t r = 0; r < t->n && st == LBS_OK; r++) {
		int32_t *wr = &m->worker_rank[(size_t)t->dp_rank[r] * m->P + t->stage[r]];
		if (*wr < 0)
			*wr = t->rank[r];
		else if (*wr != t->rank[r]) {
			st = lbs_ops_error(t, r, b->err, "rank", "%d, but dp_rank %d stage %d was rank %d "
					   "before (one rank per (dp_rank, stage))",
					     (int)t->rank[r], (int)t->dp_rank[r], (int)t->stage[r], (int)*wr);
			break;
		}
		uint64_t k = (uint64_t)t->stage[r] << 40 | (uint64_t)t->optype[r] << 32 | (uint64_t)t->seq_id[r];
		size_t lo = 0, hi = m->n_ops;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (key[mid] < k)
				lo = mid + 1;
			else
				hi = mid;
		}
		int64_t *sp = bsearch(&t->step[r], m->steps, m->n_steps, sizeof *m->steps, i64_cmp);
		if (lo == m->n_ops || key[lo] != k) {
			st = lbs_ops_error(t, r, b->err, NULL, "%s_%d_%d (step %lld, dp_rank %d) "
					     "is not an op of the template step (step %lld, dp_rank 0): every "
					     "(step, dp_rank) must hold the same ops",
					     lbs_optype_name((lbs_optype)t->optype[r]), (int)t->seq_id[r],
					     (int)t->stage[r], (long long)t->step[r], (int)t->dp_rank[r],
					     (long long)m->steps[0]);
			break;
		}
		size_t inst = (size_t)(sp - m->steps) * m->D + t->dp_rank[r];
		uint32_t *cell = &m->row[inst * m->n_ops + kop[lo]];
		if (*cell != NONE) {
			char first[1100];
			st = lbs_ops_error(t, r, b->err, NULL, "%s_%d_%d of step %lld, dp_rank %d again (first at %s)",
					   lbs_optype_name((lbs_optype)t->optype[r]), (int)t->seq_id[r], (int)t->stage[r],
					   (long long)t->step[r], (int)t->dp_rank[r],
					   lbs_ops_where(t, *cell, first, sizeof first));
			break;
		}
		*cell = (uint32_t)r;
	}
	for (size_t i = 0; st == LBS_OK && i < n_cells; i++)
		if (m->row[i] == NONE) {
			size_t inst = i / m->n_ops, v = i % m->n_ops;
			char name[96], where[1100];
			st = lbs_error_set(b->err, LBS_EINPUT, "%s: step %lld, dp_rank %d lacks %s (in the template "
					   "step at %s): every (step, dp_rank) must hold the same ops", t->path,
					   (long long)m->steps[inst / m->D], (int)(inst % m->D),
					   lbs_wi_op_name(m, (uint32_t)v, name, sizeof name),
					   lbs_ops_where(t, b->trow[v], where, sizeof where));
		}
	m->n_workers = 0;
	for (size_t i = 0; i < (size_t)m->D * m->P; i++)
		m->n_workers += m->worker_rank[i] >= 0;
	free(key);
	free(kop);
	return st;
}

/* e, x, l and T_meas from the trace, in float32 as doc/whatif.md says. */
static lbs_status derive(lbs_wi_model *m, lbs_error *err)
{
	const lbs_ops_trace *t = m->trace;
	size_t n_cells = m->n_inst * m->n_ops;
	m->d = calloc(n_cells, sizeof *m->d);
	m->x = calloc(n_cells, sizeof *m->x);
	m->l = calloc(n_cells, sizeof *m->l);
	m->t_meas = calloc(m->n_steps, sizeof *m->t_meas);
	if (!m->d || !m->x || !m->l || !m->t_meas)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	size_t D = (size_t)m->D, n = m->n_ops;
	for (size_t si = 0; si < m->n_steps; si++) {
		float lo = INFINITY, hi = -INFINITY;
		for (size_t dp = 0; dp < D; dp++)
			for (size_t v = 0; v < n; v++) {
				uint32_t r = m->row[(si * D + dp) * n + v];
				if (t->start[r] < lo)
					lo = t->start[r];
				if (end_of(t, r) > hi)
					hi = end_of(t, r);
			}
		m->t_meas[si] = (float)(hi - lo);
		for (size_t dp = 0; dp < D; dp++) {
			size_t inst = si * D + dp;
			for (size_t v = 0; v < n; v++) {
				uint32_t r = m->row[inst * n + v];
				m->d[inst * n + v] = t->duration[r];
				float latest = -INFINITY;
				for (uint32_t k = m->dep_off[v]; k < m->dep_off[v + 1]; k++) {
					float e = end_of(t, m->row[inst * n + m->dep[k]]);
					if (e > latest)
						latest = e;
				}
				float l = m->dep_off[v] == m->dep_off[v + 1] ? t->start[r] - lo : t->start[r] - latest;
				m->l[inst * n + v] = l <= LBS_WI_CLAMP ? 0 : l;
			}
		}
		for (size_t g = 0; g < m->n_groups; g++) {
			if (!m->group_comm[g])
				continue;
			for (size_t dp = 0; dp < D; dp++) {
				float latest = -INFINITY;
				size_t a = m->group_sync[g] ? 0 : dp, z = m->group_sync[g] ? D : dp + 1;
				for (size_t q = a; q < z; q++)
					for (uint32_t k = m->mem_off[g]; k < m->mem_off[g + 1]; k++) {
						uint32_t r = m->row[(si * D + q) * n + m->mem[k]];
						if (t->start[r] > latest)
							latest = t->start[r];
					}
				for (uint32_t k = m->mem_off[g]; k < m->mem_off[g + 1]; k++) {
					size_t cell = (si * D + dp) * n + m->mem[k];
					float x = end_of(t, m->row[cell]) - latest;
					m->x[cell] = x <= LBS_WI_CLAMP ? 0 : x;
				}
			}
		}
	}
	return LBS_OK;
}

void lbs_wi_model_free(lbs_wi_model *m)
{
	free(m->type);
	free(m->stage);
	free(m->seq);
	free(m->mc);
	free(m->gmc);
	free(m->idle);
	free(m->dep_off);
	free(m->dep);
	free(m->out_off);
	free(m->out);
	free(m->group_of);
	free(m->mem_off);
	free(m->mem);
	free(m->group_comm);
	free(m->group_sync);
	free(m->order);
	free(m->steps);
	free(m->row);
	free(m->worker_rank);
	free(m->d);
	free(m->x);
	free(m->l);
	free(m->t_meas);
	memset(m, 0, sizeof *m);
}

lbs_status lbs_wi_model_build(lbs_wi_model *m, const lbs_ops_trace *t, int dsp_size, lbs_error *err)
{
	memset(m, 0, sizeof *m);
	m->trace = t;
	m->dsp = dsp_size;
	builder b = { .m = m, .t = t, .err = err };
	int64_t *steps = malloc(t->n * sizeof *steps);
	if (!steps)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	m->V = 1;
	for (size_t r = 0; r < t->n; r++) {
		steps[r] = t->step[r];
		if (t->dp_rank[r] + 1 > m->D)
			m->D = t->dp_rank[r] + 1;
		if (t->stage[r] + 1 > m->P)
			m->P = t->stage[r] + 1;
		if (t->mc[r] + 1 > m->V)
			m->V = t->mc[r] + 1;
		if (t->optype[r] == LBS_OP_SEPARATE_GRADS_ALL_REDUCE)
			m->overlapped = true;
	}
	m->dp_ops = (int64_t)m->D * dsp_size > 1;
	/* Every worker (dp_rank, stage) holds ops of every step, so a trace
	 * has at least D x P rows: refuse before sizing anything by D x P. */
	if ((uint64_t)m->D * (uint64_t)m->P > t->n) {
		free(steps);
		return lbs_error_set(err, LBS_EINPUT, "%s: dp_ranks 0 to %d and stages 0 to %d make %lld workers, "
				     "more than the %zu rows of the trace: every (dp_rank, stage) must hold "
				     "the template step's ops", t->path, m->D - 1, m->P - 1,
				     (long long)m->D * m->P, t->n);
	}
	qsort(steps, t->n, sizeof *steps, i64_cmp);
	size_t ns = 0;
	for (size_t r = 0; r < t->n; r++)
		if (!ns || steps[r] != steps[ns - 1])
			steps[ns++] = steps[r];
	m->steps = steps;
	m->n_steps = ns;
	m->n_inst = ns * (size_t)m->D;
	/* The template: dp_rank 0 of the smallest step. */
	size_t nt = 0;
	for (size_t r = 0; r < t->n; r++)
		nt += t->step[r] == steps[0] && t->dp_rank[r] == 0;
	b.trow = malloc(nt * sizeof *b.trow);
	m->type = malloc(nt * sizeof *m->type);
	m->stage = malloc(nt * sizeof *m->stage);
	m->seq = malloc(nt * sizeof *m->seq);
	m->mc = malloc(nt * sizeof *m->mc);
	m->gmc = malloc(nt * sizeof *m->gmc);
	m->idle = calloc(nt, sizeof *m->idle);
	b.gmem = malloc(nt * sizeof *b.gmem);
	b.gstart = malloc(nt * sizeof *b.gstart);
	b.gsync = malloc(nt * sizeof *b.gsync);
	uint32_t *K = malloc((2 * nt + 8) * sizeof *K);
	oplist *L = calloc((size_t)m->P * LBS_OP_N, sizeof *L);
	uint32_t *lmem = malloc(nt * sizeof *lmem);
	size_t *soff = calloc((size_t)m->P + 1, sizeof *soff), *loff = calloc((size_t)m->P * LBS_OP_N + 1, sizeof *loff);
	b.tkey = malloc(nt * sizeof *b.tkey);
	b.tkop = malloc(nt * sizeof *b.tkop);
	b.chunk = malloc(4 * (size_t)m->V * sizeof *b.chunk);
	lbs_status st = LBS_OK;
	if (!b.trow || !m->type || !m->stage || !m->seq || !m->mc || !m->gmc || !m->idle || !b.gmem ||
	    !b.gstart || !b.gsync || !K || !L || !lmem || !soff || !loff || !b.tkey || !b.tkop || !b.chunk) {
		st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
		goto out;
	}
	nt = 0;
	for (size_t r = 0; r < t->n; r++)
		if (t->step[r] == steps[0] && t->dp_rank[r] == 0)
			b.trow[nt++] = (uint32_t)r;
	qsort_r(b.trow, nt, sizeof *b.trow, row_cmp, (void *)t);
	m->n_ops = nt;
	for (size_t v = 0; v < nt; v++) {
		uint32_t r = b.trow[v];
		m->type[v] = t->optype[r];
		m->stage[v] = t->stage[r];
		m->seq[v] = t->seq_id[r];
		m->mc[v] = t->mc[r];
		m->gmc[v] = t->gmc[r];
	}
	/* The template's keys, sorted, for by_seq. */
	for (size_t v = 0; v < nt; v++)
		b.tkop[v] = (uint32_t)v;
	{
		uint64_t *key = b.tkey; /* by op first, then sorted through tkop */
		for (size_t v = 0; v < nt; v++)
			key[v] = op_key(m->stage[v], m->type[v], m->seq[v]);
		qsort_r(b.tkop, nt, sizeof *b.tkop, key_cmp, key);
		uint64_t *sorted = malloc(nt * sizeof *sorted);
		if (!sorted) {
			st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
			goto out;
		}
		for (size_t k = 0; k < nt; k++)
			sorted[k] = key[b.tkop[k]];
		free(b.tkey);
		b.tkey = sorted;
	}
	/* L[stage][type]: the ops in time order (the template is sorted so),
	 * by counting: one pass to count, one to place. */
	for (size_t v = 0; v < nt; v++) {
		soff[m->stage[v] + 1]++;
		loff[(size_t)m->stage[v] * LBS_OP_N + m->type[v] + 1]++;
	}
	for (size_t s = 0; s < (size_t)m->P; s++)
		soff[s + 1] += soff[s];
	for (size_t i = 0; i < (size_t)m->P * LBS_OP_N; i++)
		loff[i + 1] += loff[i];
	for (size_t i = 0; i < (size_t)m->P * LBS_OP_N; i++)
		L[i] = (oplist){ .op = lmem + loff[i], .n = 0, .stage = (int32_t)(i / LBS_OP_N),
				 .type = (int)(i % LBS_OP_N) };
	for (size_t v = 0; v < nt; v++) {
		oplist *l = &L[(size_t)m->stage[v] * LBS_OP_N + m->type[v]];
		l->op[l->n++] = (uint32_t)v;
	}
	for (int s = 0; s < m->P && st == LBS_OK; s++) {
		size_t n_s = soff[s + 1] - soff[s];
		if (!n_s)
			st = lbs_error_set(err, LBS_EINPUT, "%s: the template step (step %lld, dp_rank 0) has no ops "
					   "on stage %d (stages 0 to %d are in the trace)", t->path,
					   (long long)steps[0], s, m->P - 1);
		else
			st = stage_rules(&b, s, soff[s], soff[s + 1], &L[(size_t)s * LBS_OP_N], K, K + nt);
	}
	if (st == LBS_OK && b.oom)
		st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	if (st == LBS_OK)
		st = build_groups(&b, L);
	if (st == LBS_OK)
		st = finish_graph(&b);
	if (st == LBS_OK)
		st = instances(&b);
	if (st == LBS_OK)
		st = derive(m, err);
out:
	free(b.trow);
	free(b.edge);
	free(b.gmem);
	free(b.gstart);
	free(b.gsync);
	free(K);
	free(L);
	free(lmem);
	free(soff);
	free(loff);
	free(b.tkey);
	free(b.tkop);
	free(b.chunk);
	if (st != LBS_OK)
		lbs_wi_model_free(m);
	return st;
}
