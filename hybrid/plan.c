/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A hybrid scenario costed into a plan (hybrid/scenario.h; doc/hybrid.md).
 *
 * Compute: the transformer's operations per tensor-parallel rank
 * (models/nets/transformer.c), each timed on the device by the datasheet
 * model with its efficiency fitted to the published figures (models/gpu.h,
 * doc/gpus.md), forward in the forward compute, backward and recomputed
 * forward in the backward one. Chunk gc of the p v chunks holds blocks
 * gc L/(p v) + 1 .. (gc + 1) L/(p v); the embedding joins the first chunk,
 * the final norm, the logits and the loss the last.
 *
 * Communication, alpha-beta (Hockney): a ring all-reduce of S bytes over n
 * ranks takes 2 (n - 1)(a + S / (n B)), a reduce-scatter or all-gather half
 * of that (Thakur, Rabenseifner and Gropp, IJHPCA 2005). Across nodes the
 * collective is hierarchical: a reduce-scatter among the k ranks of each
 * node over NVLink, the inter-node ring over the n / k nodes with S / k
 * bytes, an all-gather back; a GPU's share of the network is the node's NICs
 * over its GPUs (all of them communicate at once). Tensor parallelism:
 * Megatron-LM's two all-reduces of the s b h activations a block forward
 * and two backward (Shoeybi et al. 2019, sec. 3), two more with full
 * recomputation. A p2p transfer carries the s b h activations, split over
 * the t ranks (Narayanan et al., SC'21, sec. 4.1, scatter/gather). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_sf_gamma.h>

#include "hybrid/scenario.h"
#include "models/calib/gpu_fit.h"
#include "models/gpu.h"
#include "models/nets.h"
#include "util/rng.h"

double lbs_hy_ring_allreduce_s(int64_t n, double bytes, double bw, double a)
{
	return n > 1 ? 2.0 * (double)(n - 1) * (a + bytes / ((double)n * bw)) : 0;
}

double lbs_hy_ring_half_s(int64_t n, double bytes, double bw, double a)
{
	return n > 1 ? (double)(n - 1) * (a + bytes / ((double)n * bw)) : 0;
}

double lbs_hy_tree_allreduce_s(int64_t n, double bytes, double bw, double a)
{
	if (n < 2)
		return 0;
	return 2.0 * ceil(log2((double)n)) * a + (n > 2 ? 2.0 : 1.0) * bytes / bw;
}

/* Where the GPUs are: node of each global rank, its node group. */
typedef struct cluster {
	const lbs_hy_scenario *sc;
	int64_t *first_gpu; /* per node group: its first global rank; n_nodes + 1 */
	int64_t *first_node;
	double net_bw;      /* a GPU's share of its node's NICs */
} cluster;

static size_t node_group(const cluster *c, int64_t gpu)
{
	size_t lo = 0, hi = c->sc->n_nodes;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (c->first_gpu[mid] <= gpu)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static int64_t node_of(const cluster *c, int64_t gpu)
{
	size_t k = node_group(c, gpu);
	return c->first_node[k] + (gpu - c->first_gpu[k]) / c->sc->nodes[k].gpus_per_node;
}

/* The GPUs of a (replica, stage) group: tp x cp, the tensor ranks of
 * context rank k at k tp to k tp + tp - 1. */
static int64_t width(const lbs_hy_job_spec *jb)
{
	return jb->tp * jb->cp;
}

/* GPU of member j (context rank j / tp, tensor rank j % tp) of group (r, s). */
static int64_t rank_of(const lbs_hy_scenario *sc, int64_t r, int64_t s, int64_t j)
{
	const lbs_hy_job_spec *jb = &sc->job;
	if (jb->placement == LBS_HY_PLACE_TP_DP_PP)
		return (s * jb->dp + r) * width(jb) + j;
	return (r * jb->pp + s) * width(jb) + j;
}

/* A point-to-point message between two GPUs. */
static double p2p_s(const cluster *c, int64_t a, int64_t b, double bytes)
{
	const lbs_hy_scenario *sc = c->sc;
	if (node_of(c, a) == node_of(c, b))
		return sc->intra.latency_s + bytes / sc->intra.bandwidth_Bps;
	return sc->net.latency_s + bytes / c->net_bw;
}

/* The nodes ranks[0..n) lie on and the most of them on one (ranks come
 * sorted by node in every placement). */
static void node_spread(const cluster *c, const int64_t *ranks, int64_t n, int64_t *nodes, int64_t *most)
{
	int64_t run = 0, last = -1;
	*nodes = *most = 0;
	for (int64_t i = 0; i < n; i++) {
		int64_t nd = node_of(c, ranks[i]);
		run = nd == last ? run + 1 : 1;
		*nodes += nd != last;
		last = nd;
		if (run > *most)
			*most = run;
	}
}

/* A collective over ranks[0..n): `half` a reduce-scatter or all-gather,
 * else an all-reduce; hierarchical when they span nodes (k ranks a node
 * at most). */
static double collective_s(const cluster *c, const int64_t *ranks, int64_t n, double bytes, bool half)
{
	const lbs_hy_scenario *sc = c->sc;
	if (n < 2)
		return 0;
	int64_t nodes, k;
	node_spread(c, ranks, n, &nodes, &k);
	double bi = sc->intra.bandwidth_Bps, ai = sc->intra.latency_s;
	double (*ring)(int64_t, double, double, double) = half ? lbs_hy_ring_half_s : lbs_hy_ring_allreduce_s;
	if (nodes == 1)
		return ring(n, bytes, bi, ai);
	/* intra reduce-scatter and all-gather (for an all-reduce), or one of them */
	double intra = (half ? 1 : 2) * lbs_hy_ring_half_s(k, bytes, bi, ai);
	double inter = ring(nodes, bytes / (double)k, c->net_bw, sc->net.latency_s);
	if (!half && sc->net.algorithm != LBS_HY_ALG_RING) {
		double tree = lbs_hy_tree_allreduce_s(nodes, bytes / (double)k, c->net_bw, sc->net.latency_s);
		inter = sc->net.algorithm == LBS_HY_ALG_TREE ? tree : fmin(inter, tree);
	}
	return intra + inter;
}

/* The chunk of each layer: blocks by their number (chunk c holds blocks
 * start[c] + 1 to start[c + 1]), the embedding (before the first block) in
 * chunk 0, the tail in the last. */
static int chunk_of(const lbs_net *net, size_t i, int chunks, const int *start, bool *after)
{
	const lbs_layer *l = &net->layers[i];
	if (l->block > 0) {
		*after = true;
		int c = 0;
		while (c + 1 < chunks && l->block > start[c + 1])
			c++;
		return c;
	}
	return *after ? chunks - 1 : 0;
}

/* The blocks of each of the pv chunks, as start[0..pv] (chunk c holds
 * start[c + 1] - start[c]): first_stage_layers and last_stage_layers at the
 * ends, the others alike. */
static lbs_status chunk_split(const lbs_hy_scenario *sc, const lbs_net *net, int pv, int *start, lbs_error *err)
{
	const lbs_hy_job_spec *jb = &sc->job;
	int64_t first = jb->first_layers, last = jb->last_layers, n = net->n_blocks;
	int ends = (first > 0) + (last > 0), mid = pv - ends;
	int64_t rest = n - first - last;
	if (!ends && n % pv)
		return lbs_error_set(err, LBS_EINPUT, "%s: [hybrid] pp: %s's %lld blocks do not split into pp %lld x "
				     "virtual_stages %lld chunks (first_stage_layers and last_stage_layers can take "
				     "the rest)", sc->path, sc->model.name, (long long)n, (long long)jb->pp,
				     (long long)jb->virtual_stages);
	if (ends && (rest < mid || (mid ? rest % mid : rest) != 0))
		return lbs_error_set(err, LBS_EINPUT, "%s: [hybrid] %s: %s's %lld blocks less first_stage_layers %lld "
				     "and last_stage_layers %lld leave %lld, which do not split into the other %d "
				     "chunks, at least one each", sc->path, first ? "first_stage_layers" : "last_stage_layers",
				     sc->model.name, (long long)n, (long long)first, (long long)last, (long long)rest, mid);
	int64_t per = ends ? (mid ? rest / mid : 0) : n / pv;
	start[0] = 0;
	for (int c = 0; c < pv; c++) {
		int64_t k = c == 0 && first ? first : c == pv - 1 && last ? last : per;
		start[c + 1] = start[c] + (int)k;
	}
	return LBS_OK;
}

/* One block's forward and backward (and recompute) seconds on device dev,
 * and its parameters (per tensor rank): the layers of block 1 (every block
 * of a transformer preset is the same). */
static bool attention_core(const lbs_layer *l);

/* One block's forward and backward (and recompute) seconds on device dev,
 * the attention core's share of each, and its parameters (per tensor
 * rank): the layers of block 1 (every block of a transformer preset is the
 * same). */
static void block_costs(const lbs_net *net, const lbs_gpu_spec *dev, const lbs_gpu_eff *e, int64_t mb, bool fused,
			double *fwd, double *bwd, double *fatt, double *batt, double *params, double *efwd, double *ebwd)
{
	*fwd = *bwd = *fatt = *batt = *params = *efwd = *ebwd = 0;
	for (size_t i = 0; i < net->n_layers; i++) {
		if (net->layers[i].block != 1)
			continue;
		double t[LBS_PASSES];
		lbs_gpu_layer_pass_times(dev, e, net, &net->layers[i], mb, fused, t);
		*fwd += t[LBS_PASS_FORWARD];
		*bwd += t[LBS_PASS_BACKWARD] + t[LBS_PASS_RECOMPUTE];
		if (attention_core(&net->layers[i])) {
			*fatt += t[LBS_PASS_FORWARD];
			*batt += t[LBS_PASS_BACKWARD] + t[LBS_PASS_RECOMPUTE];
		}
		if (net->layers[i].expert) {
			*efwd += t[LBS_PASS_FORWARD];
			*ebwd += t[LBS_PASS_BACKWARD] + t[LBS_PASS_RECOMPUTE];
		}
		*params += (double)net->layers[i].params;
	}
}

/* Nominal seconds of a micro-batch's forward and backward of each chunk on
 * device dev, and each chunk's parameters (per tensor rank). */
/* The attention core: the score and context GEMMs, the softmax and its
 * dropout (the operations that keep core_bytes), quadratic in the length. */
static bool attention_core(const lbs_layer *l)
{
	return l->kind == LBS_LAYER_SCORES || l->kind == LBS_LAYER_CONTEXT || l->core_bytes > 0;
}

/* fwd, bwd, fatt, batt: chunks entries each (the forward, the backward,
 * the attention core's share of each). */
static void chunk_costs(const lbs_net *net, const lbs_gpu_spec *dev, const lbs_gpu_eff *e, int64_t mb, int chunks,
			const int *start, bool fused, double *fwd, double *bwd, double *fatt, double *batt, double *params,
			double *eparams)
{
	bool after = false;
	for (int c = 0; c < chunks; c++) {
		fwd[c] = bwd[c] = fatt[c] = batt[c] = 0;
		if (params)
			params[c] = eparams[c] = 0;
	}
	for (size_t i = 0; i < net->n_layers; i++) {
		int c = chunk_of(net, i, chunks, start, &after);
		double t[LBS_PASSES];
		lbs_gpu_layer_pass_times(dev, e, net, &net->layers[i], mb, fused, t);
		fwd[c] += t[LBS_PASS_FORWARD];
		bwd[c] += t[LBS_PASS_BACKWARD] + t[LBS_PASS_RECOMPUTE];
		if (attention_core(&net->layers[i])) {
			fatt[c] += t[LBS_PASS_FORWARD];
			batt[c] += t[LBS_PASS_BACKWARD] + t[LBS_PASS_RECOMPUTE];
		}
		if (params) {
			params[c] += (double)net->layers[i].params;
			if (net->layers[i].expert)
				eparams[c] += (double)net->layers[i].params;
		}
	}
}

/* An all-to-all over ranks[0..n) (sorted by node), each sending `bytes` in
 * all, bytes / n to each (itself included): n - 1 rounds of the latency,
 * the bytes for the GPUs of its node over NVLink and for the others over
 * its share of the NICs at once, the slower governing. */
static double alltoall_s(const cluster *c, const int64_t *ranks, int64_t n, double bytes)
{
	const lbs_hy_scenario *sc = c->sc;
	if (n < 2)
		return 0;
	int64_t nodes, k;
	node_spread(c, ranks, n, &nodes, &k);
	double per = bytes / (double)n;
	double intra = (double)(k - 1) * per / sc->intra.bandwidth_Bps;
	if (nodes == 1)
		return (double)(n - 1) * sc->intra.latency_s + intra;
	return (double)(n - 1) * sc->net.latency_s + fmax(intra, (double)(n - k) * per / c->net_bw);
}

/* The datasheet model's efficiency fitted to the published figures
 * (lbs_gpu_fit): the figures are compiled in, so the fit is the same every
 * time and is done once a process (it takes most of a second; --seeds and
 * sweeps cost a plan a run). */
static lbs_status fitted_eff(const lbs_gpu_figure *fig, const double *obs, size_t nfig, lbs_gpu_eff *eff,
			     lbs_error *err)
{
	static bool done;
	static lbs_gpu_eff cached;
	if (!done) {
		double rms;
		lbs_status st = lbs_gpu_fit(fig, obs, nfig, &cached, &rms, err);
		if (st != LBS_OK)
			return st;
		done = true;
	}
	*eff = cached;
	return LBS_OK;
}

static lbs_status build_avail(const lbs_hy_scenario *sc, const cluster *cl, lbs_hy_built *b, lbs_error *err);

double lbs_hy_in_flight(int schedule, int m, int p, int s, int v)
{
	if (schedule == LBS_HY_GPIPE)
		return m;
	if (schedule == LBS_HY_INTERLEAVED)
		return fmin((double)m * v, (double)(2 * (p - s - 1) + (v - 1) * p + 1)) / v;
	return fmin(m, (double)(p - s));
}
static lbs_status bind_traces(const lbs_hy_scenario *sc, const cluster *cl, lbs_hy_built *b, lbs_error *err);

/* The Gini coefficient of Gamma(a) draws (the shares of a symmetric
 * Dirichlet): Gamma(a + 1/2) / (Gamma(a + 1) sqrt(pi)) (McDonald and
 * Jensen, JASA 1979). */
static double gamma_gini(double a)
{
	return exp(gsl_sf_lngamma(a + 0.5) - gsl_sf_lngamma(a + 1)) / sqrt(M_PI);
}

void lbs_hy_expert_shares(int experts, double gini, gsl_rng *r, double *share)
{
	if (!(gini > 0)) {
		for (int e = 0; e < experts; e++)
			share[e] = 1.0 / experts;
		return;
	}
	/* E draws' Gini averages about (E - 1) / E of the population's: the
	 * concentration whose population Gini is gini E / (E - 1), by
	 * bisection on the log scale (gamma_gini falls from 1 at 0 to 0) */
	double want = gini * experts / (experts - 1.0), lo = 1e-6, hi = 1e6;
	for (int i = 0; i < 200; i++) {
		double mid = sqrt(lo * hi);
		if (gamma_gini(mid) > want)
			lo = mid;
		else
			hi = mid;
	}
	double alpha[1024];
	experts = experts < 1024 ? experts : 1024;
	for (int e = 0; e < experts; e++)
		alpha[e] = sqrt(lo * hi);
	gsl_ran_dirichlet(r, (size_t)experts, alpha, share);
}

/* The tokens of a sample the net's experts work on: k s, or padded to
 * the capacity (lbs_net_opts.expert_pad). */
static int64_t padded_tokens(const lbs_net *net)
{
	for (size_t i = 0; i < net->n_layers; i++)
		if (net->layers[i].expert && net->layers[i].kind == LBS_LAYER_LINEAR)
			return net->layers[i].tokens;
	return (int64_t)net->tf->top_k * net->opts.seq_len;
}

/* load[l]: at block l, the most loaded GPU of an expert group over the
 * mean (its E / ep experts' shares of the block's routed tokens, times
 * ep), the shares drawn once a run ([model] expert_gini, the run's seed):
 * the same experts are hot every step, as measured (doc/hybrid.md). */
static lbs_status expert_loads(const lbs_hy_scenario *sc, const lbs_net *net, int ep, double *load, double *dropped,
				lbs_error *err)
{
	*dropped = 0;
	int L = net->n_blocks, E = net->tf->experts;
	for (int l = 0; l < L; l++)
		load[l] = 1;
	if (!(sc->model.expert_gini > 0) || !net->tf->experts)
		return LBS_OK;
	if (E > 1024)
		return lbs_error_set(err, LBS_EINPUT, "%s: [model] expert_gini: at most 1024 experts ('%s' has %d)",
				     sc->path, sc->model.name, E);
	gsl_rng *r = lbs_rng_stream((uint64_t)sc->run.seed, "hybrid-experts", sc->model.name, 0, err);
	if (!r)
		return LBS_EINTERNAL;
	double share[1024], C = sc->model.expert_capacity;
	for (int l = 0; l < L; l++) {
		lbs_hy_expert_shares(E, sc->model.expert_gini, r, share);
		double most = 0;
		for (int q = 0; q < ep; q++) {
			/* its experts' tokens over the mean, each expert's capped at
			 * the capacity factor (the rest dropped) */
			double sum = 0;
			for (int e = q * (E / ep); e < (q + 1) * (E / ep); e++) {
				sum += C > 0 ? fmin(share[e] * E, C) : share[e] * E;
				*dropped += C > 0 ? fmax(0, share[e] - C / E) / L : 0; /* of all routed tokens */
			}
			most = fmax(most, sum / (E / ep));
		}
		/* without expert parallelism every GPU holds every expert: the
		 * imbalance costs nothing, though the capacity still drops; padded
		 * to it, every GPU computes its experts' capacity (in the net) */
		load[l] = ep > 1 && !sc->model.expert_pad ? most : 1;
	}
	gsl_rng_free(r);
	return LBS_OK;
}

/* What a block's experts take more per unit of load over the mean on
 * each node group's device (sl_f forward, sl_b backward): the chord from
 * the balanced net's (ef, eb) to a net whose experts work on the blocks'
 * largest load of tokens, costed as the device model costs any GEMM, whose
 * efficiency grows with its size (load times the balanced time would
 * overstate an overloaded GPU, and make it slower than one padded to more,
 * lbs_net_opts.expert_pad). */
static lbs_status load_slopes(const lbs_hy_scenario *sc, const lbs_net_opts *o, const lbs_net *net,
			      const lbs_gpu_eff *eff, const double *load, size_t nn, const double *ef, const double *eb,
			      double *sl_f, double *sl_b, lbs_error *err)
{
	double most = 1;
	for (int l = 0; l < net->n_blocks; l++)
		most = fmax(most, load[l]);
	for (size_t k = 0; k < nn; k++)
		sl_f[k] = ef[k], sl_b[k] = eb[k];
	if (!(most > 1))
		return LBS_OK;
	lbs_net hi;
	lbs_net_opts oh = *o;
	oh.expert_pad = most;
	lbs_error e2 = { 0 };
	if (lbs_net_create_opts(&hi, sc->model.name, &oh, &e2) != LBS_OK)
		return lbs_error_set(err, LBS_EINPUT, "%s: [model] expert_gini: %s", sc->path, e2.msg);
	/* the load the padded net holds (its capacity rounded up) */
	double x = (double)padded_tokens(&hi) / ((double)net->tf->top_k * (double)net->opts.seq_len);
	for (size_t k = 0; k < nn; k++) {
		double f, bk, fa, ba, params, hf, hb;
		block_costs(&hi, lbs_gpu_find(sc->nodes[k].gpu), eff, sc->job.micro_batch, sc->model.attention == 0, &f,
			    &bk, &fa, &ba, &params, &hf, &hb);
		sl_f[k] = (hf - ef[k]) / (x - 1);
		sl_b[k] = (hb - eb[k]) / (x - 1);
	}
	lbs_net_destroy(&hi);
	return LBS_OK;
}

lbs_status lbs_hy_plan_build(const lbs_hy_scenario *sc, lbs_hy_built *b, lbs_error *err)
{
	memset(b, 0, sizeof *b);
	const lbs_hy_job_spec *jb = &sc->job;
	int d = (int)jb->dp, p = (int)jb->pp, t = (int)jb->tp, v = (int)jb->virtual_stages;
	int m = (int)jb->micro_batches, pv = p * v;
	size_t G = (size_t)d * (size_t)p, nn = sc->n_nodes;
	int cp = (int)jb->cp, W = (int)width(jb), dc = d * cp; /* dc: the gradients' reduction group */
	lbs_net net, full;
	lbs_net_opts o = { .seq_len = sc->model.sequence_length, .tp = t, .recompute = sc->model.recompute,
			   .zero_stage = (int)jb->zero_stage, .dp = dc, .seq_par = jb->sequence_parallel,
			   .ep = (int)jb->ep, .fused_attention = sc->model.attention == 0 };
	lbs_error e2 = { 0 };
	if (lbs_net_create_opts(&full, sc->model.name, &o, &e2) != LBS_OK)
		return lbs_error_set(err, LBS_EINPUT, "%s: [model] / [hybrid] tp: %s", sc->path, e2.msg);
	/* context parallelism: each rank's 1 / cp of the tokens, in 2 cp
	 * chunks of the sequence (two a rank, the causal load balanced) */
	int64_t S_full = full.opts.seq_len;
	if (cp > 1 && S_full % (2 * cp)) {
		lbs_net_destroy(&full);
		return lbs_error_set(err, LBS_EINPUT, "%s: [hybrid] cp: %lld tokens a sequence do not split into 2 cp = "
				     "%d chunks", sc->path, (long long)S_full, 2 * cp);
	}
	o.seq_len = S_full / cp;
	/* padded to the capacity, the experts compute their empty rows too:
	 * the costed net's, not the model FLOPs' (full) */
	bool pad = sc->model.expert_pad && sc->model.expert_capacity > 0;
	o.expert_pad = pad ? sc->model.expert_capacity : 0;
	if (lbs_net_create_opts(&net, sc->model.name, &o, &e2) != LBS_OK) {
		lbs_net_destroy(&full);
		return lbs_error_set(err, LBS_EINPUT, "%s: [model] / [hybrid] tp: %s", sc->path, e2.msg);
	}
	int *start = malloc(((size_t)pv + 1) * sizeof *start);
	if (!start) {
		lbs_net_destroy(&net);
		lbs_net_destroy(&full);
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory costing the hybrid job");
	}
	lbs_status sst = chunk_split(sc, &net, pv, start, err);
	if (sst != LBS_OK) {
		free(start);
		lbs_net_destroy(&net);
		lbs_net_destroy(&full);
		return sst;
	}
	bool even = !jb->first_layers && !jb->last_layers;
	size_t nfig;
	const lbs_gpu_figure *fig = lbs_gpu_figures(&nfig);
	double *obs = malloc(nfig * sizeof *obs);
	lbs_gpu_eff eff;
	cluster cl = { .sc = sc };
	cl.first_gpu = malloc((nn + 1) * sizeof *cl.first_gpu);
	cl.first_node = malloc((nn + 1) * sizeof *cl.first_node);
	/* per node group: chunk costs on its device */
	double *cf = malloc(nn * (size_t)pv * 4 * sizeof *cf), *params = malloc(2 * (size_t)pv * sizeof *params);
	double *eparams = params ? params + pv : NULL; /* the experts' part of params */
	/* de: the GPUs of a stage holding the same experts (of a tensor rank):
	 * one replica an expert group, each with its cp context ranks */
	int ep = (int)jb->ep, de = d / ep * cp;
	int64_t *ranks = malloc(((size_t)(dc > W ? dc : W) + (size_t)dc) * sizeof *ranks);
	lbs_hy_plan *pl = &b->plan;
	*pl = (lbs_hy_plan){ .d = d, .p = p, .t = t, .cp = cp, .v = v, .m = m, .schedule = jb->schedule,
			     .zero_stage = (int)jb->zero_stage, .overlap_dp = jb->overlap_dp,
			     .buckets = (int)jb->dp_buckets, .ep = ep };
	lbs_hy_built_plan_alloc(b, G, v, p, true);
	if (ep > 1 && (b->xchg_store = calloc(2 * G * (size_t)v, sizeof *b->xchg_store))) {
		pl->xchg_f_s = b->xchg_store;
		pl->xchg_b_s = b->xchg_store + G * (size_t)v;
	}
	b->rank_of = malloc(G * sizeof *b->rank_of);
	b->mem_bytes = malloc(G * sizeof *b->mem_bytes);
	b->mem_cap = malloc(G * sizeof *b->mem_cap);
	b->act_bytes = malloc(G * sizeof *b->act_bytes);
	lbs_hy_built_blocks_alloc(b, G, p);
	double *bk_f = calloc(8 * nn, sizeof *bk_f), *bk_b = bk_f + nn, *bk_fa = bk_b + nn, *bk_ba = bk_fa + nn;
	double *bk_ef = bk_ba + nn, *bk_eb = bk_ef + nn; /* the experts' part of a block's */
	double *sl_f = bk_eb + nn, *sl_b = sl_f + nn;    /* its growth with the load (per unit) */
	/* the most loaded GPU of an expert group at each block, over the mean
	 * (1: balanced routing) */
	double *load = malloc((size_t)(net.n_blocks > 0 ? net.n_blocks : 1) * sizeof *load);
	double bk_params = 0;
	lbs_status st = LBS_OK;
	if (!obs || !cl.first_gpu || !cl.first_node || !cf || !params || !ranks || !b->store || !b->rank_of ||
	    !b->mem_bytes || !b->mem_cap || !b->act_bytes || !b->blk_store || !bk_f || !load ||
	    (ep > 1 && !b->xchg_store)) {
		st = lbs_error_set(err, LBS_EINTERNAL, "out of memory costing the hybrid job");
		goto out;
	}
	for (size_t i = 0; i < nfig; i++)
		obs[i] = fig[i].tokens_per_s;
	if ((st = fitted_eff(fig, obs, nfig, &eff, err)) != LBS_OK)
		goto out;
	/* The per-operation overhead: the framework's, as the user calibrated
	 * it, else the host's exposed launch time a GPU waits an operation,
	 * measured: the fit's (206 us) holds FSDP's exposed gathers and
	 * reductions too, which this engine costs itself (doc/gpus.md). */
	eff.overhead = sc->model.overhead_given ? sc->model.op_overhead_s : LBS_HY_OP_OVERHEAD_S;
	int64_t gpus_per_node_max = 1;
	cl.first_gpu[0] = cl.first_node[0] = 0;
	for (size_t k = 0; k < nn; k++) {
		cl.first_gpu[k + 1] = cl.first_gpu[k] + sc->nodes[k].count * sc->nodes[k].gpus_per_node;
		cl.first_node[k + 1] = cl.first_node[k] + sc->nodes[k].count;
		if (sc->nodes[k].gpus_per_node > gpus_per_node_max)
			gpus_per_node_max = sc->nodes[k].gpus_per_node;
		chunk_costs(&net, lbs_gpu_find(sc->nodes[k].gpu), &eff, jb->micro_batch, pv, start, sc->model.attention == 0,
			    cf + k * (size_t)pv * 4, cf + k * (size_t)pv * 4 + pv, cf + k * (size_t)pv * 4 + 2 * pv,
			    cf + k * (size_t)pv * 4 + 3 * pv, k ? NULL : params, eparams);
		block_costs(&net, lbs_gpu_find(sc->nodes[k].gpu), &eff, jb->micro_batch, sc->model.attention == 0,
			    &bk_f[k], &bk_b[k], &bk_fa[k], &bk_ba[k], &bk_params, &bk_ef[k], &bk_eb[k]);
	}
	cl.net_bw = (double)sc->net.nics_per_node * sc->net.bandwidth_Bps / (double)gpus_per_node_max;
	if ((st = expert_loads(sc, &net, ep, load, &b->expert_dropped, err)) != LBS_OK)
		goto out;
	if ((st = load_slopes(sc, &o, &net, &eff, load, nn, bk_ef, bk_eb, sl_f, sl_b, err)) != LBS_OK)
		goto out;
	/* padded: the tokens each GPU's experts take over the balanced k s */
	double pad_x = pad ? (double)padded_tokens(&net) / ((double)net.tf->top_k * (double)net.opts.seq_len) : 1;
	/* context parallelism: a rank's attention is its 1 / cp of the
	 * tokens' queries over every key, cp times the attention core at
	 * S / cp tokens (quadratic in them); its other operations are at
	 * S / cp (one step of it, one key chunk's, is bk_fa / cp). */
	for (size_t k = 0; k < nn; k++) {
		double *k4 = cf + k * (size_t)pv * 4;
		for (int gc = 0; gc < pv; gc++) {
			k4[gc] += (cp - 1) * k4[2 * pv + gc];
			k4[pv + gc] += (cp - 1) * k4[3 * pv + gc];
			k4[2 * pv + gc] *= cp;
			k4[3 * pv + gc] *= cp;
		}
		bk_f[k] += (cp - 1) * bk_fa[k];
		bk_b[k] += (cp - 1) * bk_ba[k];
		bk_fa[k] *= cp;
		bk_ba[k] *= cp;
	}


	/* an uneven split is the user's: the policies keep it (no re-split) */
	b->n_blocks = even && ep < 2 ? net.n_blocks : 0; /* nor with expert parallelism (not modelled) */
	double h = net.tf->hidden, seq = (double)net.opts.seq_len, elt = net.elt_bytes;
	double act = (double)jb->micro_batch * seq * h * elt; /* one micro-batch's activations */
	int tp_ar = net.opts.recompute == LBS_RECOMPUTE_FULL ? 4 : 2; /* backward all-reduces a block */
	lbs_mem mem;
	lbs_net_memory(&net, jb->micro_batch, &mem);
	double state = mem.weights + mem.grads + mem.optimizer;
	/* the ring attention's keys and values a block: cp - 1 steps, each
	 * passing a chunk's keys and values (the backward: and their
	 * gradients; with full recomputation the forward's again) to the next
	 * context rank, overlapped with one chunk's attention */
	double kv = 2.0 * (double)jb->micro_batch * seq * (double)(net.tf->kv_heads * net.tf->head_dim) / t * elt;
	double kv_b = (net.opts.recompute == LBS_RECOMPUTE_FULL ? 3 : 2) * kv;
	for (size_t g = 0; g < G; g++) {
		int64_t r = (int64_t)(g / (size_t)p), s = (int64_t)(g % (size_t)p);
		b->rank_of[g] = rank_of(sc, r, s, 0);
		/* the group's slowest device, chunk by chunk */
		for (int j = 0; j < W; j++)
			ranks[j] = rank_of(sc, r, s, j);
		double cap = INFINITY;
		/* the ring's slowest hop, and the slowest device's step of attention */
		double hop_f = 0, hop_b = 0, a_f = 0, a_b = 0, ef = 0, eb = 0;
		for (int k = 0; cp > 1 && k < cp; k++) {
			hop_f = fmax(hop_f, p2p_s(&cl, ranks[k * t], ranks[(k + 1) % cp * t], kv));
			hop_b = fmax(hop_b, p2p_s(&cl, ranks[k * t], ranks[(k + 1) % cp * t], kv_b));
		}
		for (int j = 0; cp > 1 && j < W; j++) {
			size_t k = node_group(&cl, ranks[j]);
			a_f = fmax(a_f, bk_fa[k] / cp);
			a_b = fmax(a_b, bk_ba[k] / cp);
		}
		if (cp > 1 && jb->cp_comm == 1) {
			/* Ulysses: the rank's s / c tokens of q, k and v of all its
			 * heads to every token of 1 / c of them, an all-to-all over the
			 * c context ranks (of the same tensor rank) before the
			 * attention, the output's back after it, nothing overlapped;
			 * the backward the same of their gradients (and the
			 * recomputed forward's again) */
			int64_t cr[1024];
			for (int k = 0; k < cp; k++)
				cr[k] = ranks[k * t];
			double hd = (double)net.tf->head_dim * elt * (double)jb->micro_batch * seq / t;
			double qkv = alltoall_s(&cl, cr, cp, (double)(net.tf->heads + 2 * net.tf->kv_heads) * hd);
			double out = alltoall_s(&cl, cr, cp, (double)net.tf->heads * hd);
			ef = qkv + out;
			eb = (net.opts.recompute == LBS_RECOMPUTE_FULL ? 2 : 1) * (qkv + out);
		} else if (cp > 1) { /* exposed a block: what a step's passing outlasts its attention */
			ef = (cp - 1) * fmax(0, hop_f - a_f);
			eb = (cp - 1) * fmax(0, hop_b - a_b);
		}
		for (int c = 0; c < v; c++) {
			int gc = c * p + (int)s;
			/* the slowest device's times (with its attention's share) */
			double f = 0, bk = 0, fa = 0, ba = 0;
			size_t kf = 0, kb = 0; /* the slowest devices' node groups */
			for (int j = 0; j < W; j++) {
				size_t k = node_group(&cl, ranks[j]);
				const double *k4 = cf + k * (size_t)pv * 4;
				if (k4[gc] > f)
					f = k4[gc], fa = k4[2 * pv + gc], kf = k;
				if (k4[pv + gc] > bk)
					bk = k4[pv + gc], ba = k4[3 * pv + gc], kb = k;
			}
			/* unbalanced routing: the group waits at each block for its
			 * most loaded GPU, whose experts work on load times the mean
			 * of the tokens (load_slopes) */
			for (int l = start[gc]; ep > 1 && l < start[gc + 1]; l++) {
				f += (load[l] - 1) * sl_f[kf];
				bk += (load[l] - 1) * sl_b[kb];
			}
			pl->fwd_s[g * (size_t)v + (size_t)c] = f;
			pl->bwd_s[g * (size_t)v + (size_t)c] = bk;
			pl->fwd_att_s[g * (size_t)v + (size_t)c] = fa;
			pl->bwd_att_s[g * (size_t)v + (size_t)c] = ba;
			double ar = collective_s(&cl, ranks, t, act, false);
			int blocks = start[gc + 1] - start[gc];
			pl->fwd_fixed_s[g * (size_t)v + (size_t)c] = blocks * (2.0 * ar + ef);
			pl->bwd_fixed_s[g * (size_t)v + (size_t)c] = blocks * ((double)tp_ar * ar + eb);
			b->blk_fwd_fixed_s[g] = 2.0 * ar + ef;
			b->blk_bwd_fixed_s[g] = (double)tp_ar * ar + eb;
			if (ep > 1) {
				/* the expert group's same tensor rank: each sends its 1 / t of
				 * the k s b routed tokens' h elements, a dispatch and a combine
				 * a block forward, their gradients backward (and the
				 * recomputed forward's, as the tensor all-reduces) */
				int64_t r0 = r / ep * ep, er[1024];
				for (int q = 0; q < ep; q++)
					er[q] = rank_of(sc, r0 + q, s, 0);
				/* the most loaded GPU receives load times the mean; padded,
				 * every GPU its experts' capacity */
				double a2a = 0;
				for (int l = start[gc]; l < start[gc + 1]; l++)
					a2a += alltoall_s(&cl, er, ep,
							  (pad ? pad_x : load[l]) * (double)net.tf->top_k * act / t);
				pl->xchg_f_s[g * (size_t)v + (size_t)c] = 2.0 * a2a;
				pl->xchg_b_s[g * (size_t)v + (size_t)c] = (double)tp_ar * a2a;
			}
		}
		for (int j = 0; j < W; j++) { /* the slowest device's, as the chunks' */
			size_t k = node_group(&cl, ranks[j]);
			if (bk_f[k] > b->blk_fwd_s[g])
				b->blk_fwd_s[g] = bk_f[k], b->blk_fwd_att_s[g] = bk_fa[k];
			if (bk_b[k] > b->blk_bwd_s[g])
				b->blk_bwd_s[g] = bk_b[k], b->blk_bwd_att_s[g] = bk_ba[k];
		}
		for (int j = 0; j < W; j++)
			cap = fmin(cap, lbs_gpu_find(sc->nodes[node_group(&cl, ranks[j])].gpu)->memory);
		/* p2p to the group of the next chunk */
		int64_t nx = s + 1 < p ? s + 1 : 0;
		pl->p2p_s[g] = p2p_s(&cl, ranks[0], rank_of(sc, r, nx, 0), act / t);
		bool same = node_of(&cl, ranks[0]) == node_of(&cl, rank_of(sc, r, nx, 0));
		b->link_Bps[g] = same ? sc->intra.bandwidth_Bps : cl.net_bw;
		b->link_lat_s[g] = same ? sc->intra.latency_s : sc->net.latency_s;
		/* the optimizer: Adam reads and writes its fp32 master weights,
		 * two moments and the gradient of its share, 32 bytes a
		 * parameter (an assumption, doc/hybrid.md) */
		double sp = 0, se = 0;
		for (int c = 0; c < v; c++)
			sp += params[c * p + s], se += eparams[c * p + s];
		/* the experts' share partitioned over the de replicas holding them */
		if (ep < 2)
			se = 0;
		double shard = jb->zero_stage >= 1 ? (sp - se) / (double)dc + se / (double)de : sp;
		const lbs_gpu_spec *dev = lbs_gpu_find(sc->nodes[node_group(&cl, ranks[0])].gpu);
		pl->opt_s[g] = shard * 32 / (dev->bandwidth * eff.mem) + eff.overhead;
		b->blk_opt_s[g] = bk_params / (jb->zero_stage >= 1 ? (double)dc : 1) * 32 / (dev->bandwidth * eff.mem);
		b->blk_state_bytes[g] = state * bk_params / (double)net.params;
		/* memory: the stage's share of the model state, and the
		 * activations of the micro-batches in flight (1F1B: p - s on
		 * stage s, GPipe: all m; Narayanan et al., SC'21, sec. 2.2) */
		double frac = sp / (double)net.params;
		double in_flight = lbs_hy_in_flight(jb->schedule, m, p, (int)s, v);
		int sb = 0; /* the stage's blocks */
		for (int c = 0; c < v; c++)
			sb += start[c * p + s + 1] - start[c * p + s];
		b->act_bytes[g] = mem.activations * ((double)sb / net.n_blocks);
		b->mem_bytes[g] = state * frac + b->act_bytes[g] * in_flight;
		b->mem_cap[g] = cap;
		if (b->mem_bytes[g] > cap) {
			st = lbs_error_set(err, LBS_EINPUT, "%s: [hybrid] micro_batch: stage %lld needs %.1f GB a GPU "
					   "(model state %.1f GB, activations of %.0f micro-batches in flight), its "
					   "device has %.1f GB (doc/hybrid.md, \"Memory\")", sc->path, (long long)s,
					   b->mem_bytes[g] / 1e9, state * frac / 1e9, in_flight, cap / 1e9);
			goto out;
		}
	}
	/* the data-parallel collectives of each stage and chunk (tensor rank
	 * 0's ring, over the dp x cp ranks that hold the same weights) */
	for (int s = 0; s < p; s++) {
		for (int r = 0; r < d; r++)
			for (int k = 0; k < cp; k++)
				ranks[r * cp + k] = rank_of(sc, r, s, (int64_t)k * t);
		for (int c = 0; c < v; c++) {
			/* one bucket's: the dense weights over every replica, the
			 * experts' over the replicas that hold the same ones (one a
			 * group, replicas q ep + i), one after the other */
			double pe = ep > 1 ? eparams[c * p + s] / (double)jb->dp_buckets : 0;
			double pc = params[c * p + s] / (double)jb->dp_buckets - pe;
			size_t i = (size_t)s * (size_t)v + (size_t)c;
			bool z1 = jb->zero_stage >= 1;
			pl->grad_s[i] = collective_s(&cl, ranks, dc, pc * jb->grad_bytes, z1);
			if (z1)
				pl->gather_s[i] = collective_s(&cl, ranks, dc, pc * elt, true);
			if (pe > 0) {
				int64_t *er = ranks + dc; /* past the dp ranks */
				for (int q = 0; q < de / cp; q++)
					for (int k = 0; k < cp; k++)
						er[q * cp + k] = rank_of(sc, (int64_t)q * ep, s, (int64_t)k * t);
				pl->grad_s[i] += collective_s(&cl, er, de, pe * jb->grad_bytes, z1);
				if (z1)
					pl->gather_s[i] += collective_s(&cl, er, de, pe * elt, true);
			}
		}
		/* collectives are affine in their bytes: a block's part is the
		 * difference of the times with and without its bytes */
		double bp = bk_params / (double)jb->dp_buckets, z1 = jb->zero_stage >= 1;
		b->blk_grad_s[s] = collective_s(&cl, ranks, dc, bp * jb->grad_bytes, z1) - collective_s(&cl, ranks, dc, 0, z1);
		if (sc->net.algorithm == LBS_HY_ALG_AUTO && !z1) {
			/* affine in each algorithm, not in their least: a block
			 * more on the bytes the stage has (its first chunk's) */
			double S = params[s] / (double)jb->dp_buckets * jb->grad_bytes;
			b->blk_grad_s[s] = collective_s(&cl, ranks, dc, S + bp * jb->grad_bytes, false) -
					   collective_s(&cl, ranks, dc, S, false);
		}
		if (z1)
			b->blk_gather_s[s] = collective_s(&cl, ranks, dc, bp * elt, true) - collective_s(&cl, ranks, dc, 0, true);
	}
	/* the tied embedding's gradient between the first and last stage */
	if (net.tf->tied && p > 1) {
		int64_t two[2] = { rank_of(sc, 0, 0, 0), rank_of(sc, 0, p - 1, 0) };
		pl->emb_s = collective_s(&cl, two, 2, (double)net.embedding_params * jb->grad_bytes, false);
	}
	/* the gradient norm: a tree all-reduce of one number over every GPU */
	double world = (double)d * p * W;
	pl->clip_s = 2.0 * ceil(log2(world > 1 ? world : 2)) *
		     (sc->n_nodes == 1 && sc->nodes[0].count == 1 ? sc->intra.latency_s : sc->net.latency_s);
	b->flops_per_step = lbs_net_flops(&full, jb->micro_batch) * t * (double)m * d;
	b->blk_move_bytes = bk_params * (elt + 12.0 / (jb->zero_stage >= 1 ? (double)dc : 1));
	st = build_avail(sc, &cl, b, err);
	if (st == LBS_OK)
		st = bind_traces(sc, &cl, b, err);
out:
	free(start);
	free(bk_f);
	free(load);
	free(obs);
	free(cl.first_gpu);
	free(cl.first_node);
	free(cf);
	free(params);
	free(ranks);
	lbs_net_destroy(&net);
	lbs_net_destroy(&full);
	if (st != LBS_OK)
		lbs_hy_built_free(b);
	return st;
}

/* The next range [*a, *z] of a list "0-7,12" (checked when the scenario
 * was read) from *q, which moves past it; false at its end. */
static bool next_range(const char **q, long long *a, long long *z)
{
	if (!**q)
		return false;
	char *end;
	*a = *z = strtoll(*q, &end, 10);
	if (*end == '-')
		*z = strtoll(end + 1, &end, 10);
	*q = *end == ',' ? end + 1 : end + strlen(end); /* anything else ends it */
	return true;
}

/* Whether GPU x is in such a list. */
static bool in_ranks(const char *s, int64_t x)
{
	long long a, z;
	while (next_range(&s, &a, &z))
		if (x >= a && x <= z)
			return true;
	return false;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The episodes of one kind, with the least and greatest GPU each names
 * (a group whose GPUs lie outside them needs no parsing of its list). */
typedef struct episode_set {
	const lbs_hy_episode_spec **ep;
	int64_t *lo, *hi;
	size_t ne;
} episode_set;

static void episodes_free(episode_set *es)
{
	free(es->ep);
	free(es->lo);
	free(es->hi);
}

/* false when out of memory. */
static bool episodes_of(const lbs_hy_scenario *sc, int kind, episode_set *es)
{
	*es = (episode_set){ 0 };
	for (size_t e = 0; e < sc->n_episodes; e++)
		es->ne += sc->episodes[e].kind == kind;
	size_t n = es->ne ? es->ne : 1;
	es->ep = malloc(n * sizeof *es->ep);
	es->lo = malloc(n * sizeof *es->lo);
	es->hi = malloc(n * sizeof *es->hi);
	if (!es->ep || !es->lo || !es->hi)
		return false;
	for (size_t e = 0, i = 0; e < sc->n_episodes; e++) {
		if (sc->episodes[e].kind != kind)
			continue;
		es->ep[i] = &sc->episodes[e];
		es->lo[i] = INT64_MAX;
		es->hi[i] = INT64_MIN;
		long long x, z;
		for (const char *q = sc->episodes[e].gpus; next_range(&q, &x, &z);) {
			es->lo[i] = x < es->lo[i] ? x : es->lo[i];
			es->hi[i] = z > es->hi[i] ? z : es->hi[i];
		}
		i++;
	}
	return true;
}

/* The pieces of one group's level of one kind of episode (ep: the ne
 * episodes of that kind), the least of its GPUs' on `node` (-1: all of
 * them): kind compute, each GPU at its untraced node group's availability
 * (with node_level; 1 otherwise, and on a traced node, whose trace carries
 * it as the binding's gain) times the factors of the compute episodes on
 * it; kind network, 1 times the factors of the network episodes on it.
 * a->t and a->level hold 2 ne + 1 doubles each; hit (ne tp) and pts
 * (2 ne + 1) are scratch. The episodes are es's. */
static void group_levels(const lbs_hy_scenario *sc, const cluster *cl, int kind, const episode_set *es, int64_t r,
			 int64_t s, int64_t node, bool node_level, bool *hit, double *pts, lbs_hy_avail *a)
{
	const lbs_hy_job_spec *jb = &sc->job;
	const lbs_hy_episode_spec *const *ep = es->ep;
	size_t n = 0, ne = es->ne;
	pts[n++] = 0;
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (int64_t j = 0; j < width(jb); j++) {
		int64_t gpu = rank_of(sc, r, s, j);
		lo = gpu < lo ? gpu : lo;
		hi = gpu > hi ? gpu : hi;
	}
	for (size_t e = 0; e < ne; e++) {
		bool *h = hit + e * (size_t)width(jb);
		if (es->lo[e] > hi || es->hi[e] < lo) {
			memset(h, 0, (size_t)width(jb) * sizeof *h);
			continue;
		}
		for (int64_t j = 0; j < width(jb); j++) {
			int64_t gpu = rank_of(sc, r, s, j);
			h[j] = (node < 0 || node_of(cl, gpu) == node) && in_ranks(ep[e]->gpus, gpu);
		}
	}
	for (size_t e = 0; e < ne; e++) {
		bool on = false;
		for (int64_t j = 0; j < width(jb); j++)
			on |= hit[e * (size_t)width(jb) + (size_t)j];
		if (on) {
			pts[n++] = ep[e]->start_s;
			pts[n++] = ep[e]->start_s + ep[e]->duration_s;
		}
	}
	qsort(pts, n, sizeof *pts, cmp_double);
	a->n = 0;
	for (size_t i = 0; i < n; i++) {
		if (i && pts[i] == pts[i - 1])
			continue;
		double lvl = INFINITY;
		for (int64_t j = 0; j < width(jb); j++) {
			int64_t gpu = rank_of(sc, r, s, j);
			if (node >= 0 && node_of(cl, gpu) != node)
				continue;
			const lbs_hy_nodes_spec *nd = &sc->nodes[node_group(cl, gpu)];
			double x = node_level && kind == LBS_HY_FS_COMPUTE && !nd->trace.format ? nd->availability : 1;
			for (size_t e = 0; e < ne; e++)
				if (hit[e * (size_t)width(jb) + (size_t)j] && pts[i] >= ep[e]->start_s &&
				    pts[i] < ep[e]->start_s + ep[e]->duration_s)
					x = fmax(x * ep[e]->factor, LBS_HY_LEAST_LEVEL);
			lvl = fmin(lvl, x);
		}
		if (a->n && a->level[a->n - 1] == lvl)
			continue;
		a->t[a->n] = pts[i];
		a->level[a->n++] = lvl;
	}
	if (a->n == 1 && a->level[0] == 1)
		a->n = 0;
}

/* Pieces kept as they are made: each level's t[0..n) then level[0..n),
 * one after the other, the pointers set once all are in (the store
 * moves as it grows): memory in the pieces there are, not the most there
 * could be. */
typedef struct piece_store {
	double *v;
	size_t n, cap;
} piece_store;

static bool keep_pieces(piece_store *ps, const lbs_hy_avail *a)
{
	if (!a->n)
		return true;
	if (ps->n + 2 * a->n > ps->cap) {
		size_t cap = ps->cap ? 2 * ps->cap : 64;
		while (cap < ps->n + 2 * a->n)
			cap *= 2;
		double *v = realloc(ps->v, cap * sizeof *v);
		if (!v)
			return false;
		ps->v = v;
		ps->cap = cap;
	}
	memcpy(ps->v + ps->n, a->t, a->n * sizeof *a->t);
	memcpy(ps->v + ps->n + a->n, a->level, a->n * sizeof *a->level);
	ps->n += 2 * a->n;
	return true;
}

/* Points the next level kept in order at its pieces; *at walks the store. */
static void point_pieces(double *store, size_t *at, lbs_hy_avail *a)
{
	a->t = a->n ? store + *at : NULL;
	a->level = a->n ? a->t + a->n : NULL;
	*at += 2 * a->n;
}

/* What making levels of one kind of episode needs: the episodes, the
 * scratch of group_levels (hit; pts, 3 (2 ne + 1): the breakpoints, then
 * a level's t and level) and the store of the pieces made. */
typedef struct levels_ctx {
	episode_set es;
	bool *hit;
	double *pts;
	piece_store ps;
} levels_ctx;

/* false when out of memory (levels_free frees what was made). */
static bool levels_init(levels_ctx *x, const lbs_hy_scenario *sc, int kind)
{
	*x = (levels_ctx){ 0 };
	bool ok = episodes_of(sc, kind, &x->es);
	x->hit = malloc((x->es.ne ? x->es.ne : 1) * (size_t)width(&sc->job) * sizeof *x->hit);
	x->pts = malloc((2 * x->es.ne + 1) * 3 * sizeof *x->pts);
	return ok && x->hit && x->pts;
}

/* The levels of group (r, s) on `node` (group_levels) into a, kept in
 * x->ps; a's pointers are set by point_pieces once all are made. */
static bool levels_make(levels_ctx *x, const lbs_hy_scenario *sc, const cluster *cl, int kind, int64_t r,
			int64_t s, int64_t node, bool node_level, lbs_hy_avail *a)
{
	size_t cap = 2 * x->es.ne + 1;
	a->t = x->pts + cap;
	a->level = x->pts + 2 * cap;
	group_levels(sc, cl, kind, &x->es, r, s, node, node_level, x->hit, x->pts, a);
	return keep_pieces(&x->ps, a);
}

/* Frees the scratch; the store (x->ps.v) is the caller's. */
static void levels_free(levels_ctx *x)
{
	episodes_free(&x->es);
	free(x->hit);
	free(x->pts);
}

/* Each group's levels of one kind of episode, the least of its GPUs'
 * (group_levels). *out (G) stays NULL when every group is at 1
 * throughout; its pieces go to *store. */
static lbs_status build_levels(const lbs_hy_scenario *sc, const cluster *cl, int kind, lbs_hy_avail **out,
			       double **store, lbs_error *err)
{
	const lbs_hy_job_spec *jb = &sc->job;
	size_t G = (size_t)(jb->dp * jb->pp);
	levels_ctx x;
	bool ok = levels_init(&x, sc, kind), any = x.es.ne > 0;
	for (size_t k = 0; kind == LBS_HY_FS_COMPUTE && k < sc->n_nodes; k++)
		any |= sc->nodes[k].availability != 1;
	if (ok && !any) {
		levels_free(&x);
		return LBS_OK;
	}
	ok = ok && (*out = calloc(G, sizeof **out));
	for (size_t g = 0; ok && g < G; g++)
		ok = levels_make(&x, sc, cl, kind, (int64_t)(g / (size_t)jb->pp), (int64_t)(g % (size_t)jb->pp), -1,
				 true, &(*out)[g]);
	levels_free(&x);
	*store = x.ps.v;
	if (!ok)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory for the groups' availability");
	for (size_t g = 0, at = 0; g < G; g++)
		point_pieces(x.ps.v, &at, &(*out)[g]);
	return LBS_OK;
}

/* The groups' availability (compute episodes), and with network episodes
 * their inter-node levels and the node each group lies on (-1: across
 * nodes), which tell the simulation whether a transfer crosses nodes. */
static lbs_status build_avail(const lbs_hy_scenario *sc, const cluster *cl, lbs_hy_built *b, lbs_error *err)
{
	lbs_status st = build_levels(sc, cl, LBS_HY_FS_COMPUTE, &b->plan.avail, &b->avail_store, err);
	if (st == LBS_OK)
		st = build_levels(sc, cl, LBS_HY_FS_NETWORK, &b->plan.net, &b->net_store, err);
	if (st != LBS_OK || !b->plan.net)
		return st;
	const lbs_hy_job_spec *jb = &sc->job;
	size_t G = (size_t)(jb->dp * jb->pp);
	if (!(b->plan.node = malloc(G * sizeof *b->plan.node)))
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory for the groups' nodes");
	for (size_t g = 0; g < G; g++) {
		int64_t r = (int64_t)(g / (size_t)jb->pp), s = (int64_t)(g % (size_t)jb->pp);
		int64_t node = node_of(cl, rank_of(sc, r, s, 0));
		for (int64_t j = 1; j < width(jb); j++)
			if (node_of(cl, rank_of(sc, r, s, j)) != node)
				node = -1;
		b->plan.node[g] = node;
	}
	return LBS_OK;
}

/* Group g, across nodes: one member a node it has GPUs on (its replay, a
 * source of its own, or its constant availability), each times the
 * compute episodes on the group's GPUs there (lbs_hy_least). Its members'
 * pieces go to x->ps, pointed at once every group is bound. */
static lbs_status bind_least(const lbs_hy_scenario *sc, const cluster *cl, lbs_hy_built *b, size_t g,
			     const lbs_source *node_src, const size_t *first, levels_ctx *x, lbs_error *err)
{
	const lbs_hy_job_spec *jb = &sc->job;
	size_t G = (size_t)(jb->dp * jb->pp), T = (size_t)width(jb);
	if (!b->least) {
		b->least = calloc(G, sizeof *b->least);
		b->members = calloc(G * T, sizeof *b->members);
	}
	if (!b->least || !b->members)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory binding the nodes' traces");
	int64_t r = (int64_t)(g / (size_t)jb->pp), s = (int64_t)(g % (size_t)jb->pp);
	lbs_hy_least *L = &b->least[g];
	L->m = b->members + g * T;
	L->n = 0;
	/* a group's GPUs are consecutive (rank_of), so are its nodes: a
	 * node is new when it is not the previous GPU's (linear in tp x cp,
	 * which may reach the job's size) */
	int64_t last = -1;
	for (int64_t j = 0; j < width(jb); j++) {
		int64_t gpu = rank_of(sc, r, s, j), node = node_of(cl, gpu);
		if (node == last)
			continue;
		last = node;
		size_t k = node_group(cl, gpu);
		lbs_hy_member *m = &L->m[L->n++];
		m->traced = sc->nodes[k].trace.format != 0;
		if (m->traced)
			m->src = node_src[first[k] + (size_t)(node - cl->first_node[k])];
		m->level = sc->nodes[k].availability;
		if (!levels_make(x, sc, cl, LBS_HY_FS_COMPUTE, r, s, node, false, &m->ep))
			return lbs_error_set(err, LBS_EINTERNAL, "out of memory binding the nodes' traces");
	}
	b->plan.src[g] = (lbs_avail){ &lbs_hy_least_ops, L, 1.0 };
	return LBS_OK;
}

/* The node groups with a trace: each node replays one id of it (the
 * binding of [workers.NAME], one worker a node), and each (stage, replica)
 * group whose GPUs lie in one such node replays its node's id with a
 * source of its own (a source is one worker's replay; the series are
 * shared). A group with compute episodes on its GPUs replays its node's
 * trace times the episodes' levels, and a group whose GPUs lie on several
 * nodes, one of them traced or more, runs at the least of its nodes'
 * levels (bind_least, lbs_hy_least). */
static lbs_status bind_traces(const lbs_hy_scenario *sc, const cluster *cl, lbs_hy_built *b, lbs_error *err)
{
	const lbs_hy_job_spec *jb = &sc->job;
	size_t G = (size_t)(jb->dp * jb->pp), traced = 0, nn = sc->n_nodes;
	for (size_t k = 0; k < nn; k++)
		traced += sc->nodes[k].trace.format ? (size_t)sc->nodes[k].count : 0;
	if (!traced)
		return LBS_OK;
	char base[1024];
	lbs_path_folder(sc->path, base, sizeof base);
	lbs_source *node_src = calloc(traced, sizeof *node_src);
	size_t *first = calloc(nn, sizeof *first);
	b->sources = calloc(G, sizeof *b->sources);
	b->plan.src = calloc(G, sizeof *b->plan.src);
	if (!node_src || !first || !b->sources || !b->plan.src || !(b->traces = lbs_trace_table_create(err))) {
		free(node_src);
		free(first);
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory binding the nodes' traces");
	}
	levels_ctx x;
	lbs_status st = levels_init(&x, sc, LBS_HY_FS_COMPUTE)
				? LBS_OK
				: lbs_error_set(err, LBS_EINTERNAL, "out of memory binding the nodes' traces");
	size_t at = 0;
	for (size_t k = 0; st == LBS_OK && k < nn; k++) {
		const lbs_hy_nodes_spec *nd = &sc->nodes[k];
		first[k] = at;
		if (!nd->trace.format)
			continue;
		lbs_trace_request req = { .spec = &nd->trace, .base_dir = base, .owner = nd->name,
					  .seed = (uint64_t)sc->run.seed, .gain = nd->availability };
		const char *key = NULL;
		if ((st = lbs_trace_bind(b->traces, &req, nd->count, node_src + at, &key, err)) != LBS_OK) {
			char sec[LBS_NAME_MAX + 16], label[512];
			snprintf(sec, sizeof sec, "nodes.%s", nd->name);
			lbs_origin_format(&nd->at, sec, key ? key : "trace", label, sizeof label);
			lbs_error_prefix(err, "%s", label);
		}
		at += (size_t)nd->count;
	}
	for (size_t g = 0; st == LBS_OK && g < G; g++) {
		int64_t r = (int64_t)(g / (size_t)jb->pp), s = (int64_t)(g % (size_t)jb->pp);
		int64_t g0 = rank_of(sc, r, s, 0), node = node_of(cl, g0);
		bool across = false, any = false;
		for (int64_t j = 0; j < width(jb); j++) {
			int64_t gpu = rank_of(sc, r, s, j);
			across |= node_of(cl, gpu) != node;
			any |= sc->nodes[node_group(cl, gpu)].trace.format != 0;
		}
		if (!any)
			continue;
		/* across nodes, or on one with episodes (build_levels gave it
		 * their levels: the trace carries the node's availability):
		 * the least of its nodes' levels, one member here */
		if (across || (b->plan.avail && b->plan.avail[g].n)) {
			st = bind_least(sc, cl, b, g, node_src, first, &x, err);
			continue;
		}
		size_t k = node_group(cl, g0);
		b->sources[g] = node_src[first[k] + (size_t)(node - cl->first_node[k])];
		b->plan.src[g] = lbs_source_avail(&b->sources[g]);
	}
	b->member_store = x.ps.v;
	for (size_t g = 0, off = 0; st == LBS_OK && b->least && g < G; g++)
		for (size_t i = 0; i < b->least[g].n; i++)
			point_pieces(x.ps.v, &off, &b->least[g].m[i].ep);
	levels_free(&x);
	free(node_src);
	free(first);
	return st;
}

size_t lbs_hy_plan_layout(lbs_hy_plan *pl, double *s0, size_t G, int v, int p, bool att)
{
	size_t gv = G * (size_t)v, pv = (size_t)p * (size_t)v;
	if (!s0)
		return (att ? 6 : 4) * gv + 2 * G + 2 * pv;
	pl->fwd_s = s0, s0 += gv;
	pl->bwd_s = s0, s0 += gv;
	pl->fwd_fixed_s = s0, s0 += gv;
	pl->bwd_fixed_s = s0, s0 += gv;
	if (att) {
		pl->fwd_att_s = s0, s0 += gv;
		pl->bwd_att_s = s0, s0 += gv;
	}
	pl->opt_s = s0, s0 += G;
	pl->p2p_s = s0, s0 += G;
	pl->grad_s = s0, s0 += pv;
	pl->gather_s = s0;
	return (att ? 6 : 4) * gv + 2 * G + 2 * pv;
}

lbs_status lbs_hy_built_plan_alloc(lbs_hy_built *b, size_t G, int v, int p, bool att)
{
	if (!(b->store = calloc(lbs_hy_plan_layout(NULL, NULL, G, v, p, att), sizeof *b->store)))
		return LBS_EINTERNAL;
	lbs_hy_plan_layout(&b->plan, b->store, G, v, p, att);
	return LBS_OK;
}

lbs_status lbs_hy_built_blocks_alloc(lbs_hy_built *b, size_t G, int p)
{
	double *q = b->blk_store = calloc(LBS_HY_BLK_ARRAYS * G + 2 * (size_t)p, sizeof *b->blk_store);
	if (!q)
		return LBS_EINTERNAL;
	b->blk_fwd_s = q, q += G;
	b->blk_bwd_s = q, q += G;
	b->blk_fwd_att_s = q, q += G;
	b->blk_bwd_att_s = q, q += G;
	b->blk_fwd_fixed_s = q, q += G;
	b->blk_bwd_fixed_s = q, q += G;
	b->blk_opt_s = q, q += G;
	b->blk_state_bytes = q, q += G;
	b->link_Bps = q, q += G;
	b->link_lat_s = q, q += G;
	b->blk_grad_s = q, q += p;
	b->blk_gather_s = q;
	return LBS_OK;
}

void lbs_hy_built_free(lbs_hy_built *b)
{
	if (b->traces)
		lbs_trace_table_destroy(b->traces);
	free(b->sources);
	free(b->least);
	free(b->members);
	free(b->member_store);
	free(b->plan.src);
	free(b->store);
	free(b->avail_store);
	free(b->plan.avail);
	free(b->net_store);
	free(b->plan.net);
	free(b->plan.node);
	free(b->rank_of);
	free(b->mem_bytes);
	free(b->mem_cap);
	free(b->act_bytes);
	free(b->blk_store);
	free(b->xchg_store);
	memset(b, 0, sizeof *b);
}
#include "util/datapath.h"

/* ---- the least of several nodes' levels (lbs_hy_least) ------------------------ */

static double least_finish(void *state, double t0, double work_s, int64_t iteration)
{
	lbs_hy_least *L = state;
	if (!(work_s > 0))
		return t0;
	double t = t0, left = work_s;
	for (;;) {
		/* every member's line from t, to the first change of any */
		double e = INFINITY;
		size_t lo = 0;
		for (size_t i = 0; i < L->n; i++) {
			lbs_hy_member *m = &L->m[i];
			double a = m->level, k = 0, end = INFINITY, next;
			if (m->traced)
				lbs_source_piece(&m->src, t, iteration, &a, &k, &end);
			double f = lbs_hy_avail_at(&m->ep, t, &next);
			m->v = f * a;
			m->k = f * k;
			e = fmin(e, fmin(end, next));
			if (m->v < L->m[lo].v || (m->v == L->m[lo].v && m->k < L->m[lo].k))
				lo = i;
		}
		/* the lowest line, up to where a falling one crosses it */
		const lbs_hy_member *w = &L->m[lo];
		for (size_t i = 0; i < L->n; i++) {
			const lbs_hy_member *m = &L->m[i];
			if (m->k < w->k) {
				double x = t + (m->v - w->v) / (w->k - m->k);
				if (x > t && x < e)
					e = x;
			}
		}
		if (!(e > t)) /* a change at t itself, by rounding */
			e = nextafter(t, INFINITY);
		double len = e - t, v = w->v, k = w->k;
		double area = isinf(len) ? INFINITY : (v + 0.5 * k * len) * len;
		if (area >= left) {
			/* v d + k/2 d^2 = left, in the form without cancellation */
			double d = k == 0 ? left / v : 2 * left / (v + sqrt(fmax(v * v + 2 * k * left, 0)));
			return t + (d < len ? d : len);
		}
		left -= area;
		t = e;
	}
}

static double least_level(const void *state, double t, int64_t iteration)
{
	const lbs_hy_least *L = state;
	double lvl = INFINITY, next;
	for (size_t i = 0; i < L->n; i++) {
		const lbs_hy_member *m = &L->m[i];
		double a = m->traced ? lbs_source_level(&m->src, t, iteration) : m->level;
		lvl = fmin(lvl, a * lbs_hy_avail_at(&m->ep, t, &next));
	}
	return lvl;
}

/* finish() moves only the members' cursors, which are hints: no peek. */
const lbs_avail_ops lbs_hy_least_ops = { .name = "least of several nodes", .finish = least_finish,
					 .level = least_level };
