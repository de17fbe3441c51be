/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Building networks layer by layer, and what follows from the layers:
 * GEMM shapes, operation counts, memory. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "models/nets.h"

static lbs_layer *append(lbs_net_builder *b, const char *name, lbs_layer_kind kind)
{
	if (b->failed)
		return NULL;
	lbs_net *net = b->net;
	if (net->n_layers == net->cap) {
		size_t ncap = net->cap ? 2 * net->cap : 64;
		lbs_layer *l = realloc(net->layers, ncap * sizeof *l);
		if (!l) {
			lbs_error_set(b->err, LBS_EINTERNAL, "out of memory building %s", net->name);
			b->failed = true;
			return NULL;
		}
		net->layers = l;
		net->cap = ncap;
	}
	lbs_layer *l = &net->layers[net->n_layers++];
	memset(l, 0, sizeof *l);
	snprintf(l->name, sizeof l->name, "%s", name);
	l->kind = kind;
	l->in_c = b->at.c;
	l->in_h = b->at.h;
	l->in_w = b->at.w;
	return l;
}

static void finish(lbs_net_builder *b, lbs_layer *l, lbs_shape out)
{
	l->out_c = out.c;
	l->out_h = out.h;
	l->out_w = out.w;
	b->at = out;
	if (!l->tokens) /* a CNN's layer: fp32 activations */
		l->act_bytes = 4 * l->act_per_sample;
	b->net->params += l->params;
	if (l->expert)
		b->net->expert_params += l->params;
	b->net->act_per_sample += l->act_per_sample;
	b->net->act_bytes += l->act_bytes;
	b->net->core_bytes += l->core_bytes;
}

lbs_layer *lbs_nb_append(lbs_net_builder *b, const char *name, lbs_layer_kind kind)
{
	return append(b, name, kind);
}

void lbs_nb_finish(lbs_net_builder *b, lbs_layer *l, lbs_shape out)
{
	finish(b, l, out);
}

static int out_size(int in, int k, int stride, int pad)
{
	return (in + 2 * pad - k) / stride + 1;
}

void lbs_nb_conv(lbs_net_builder *b, const char *name, int out_c, int kh, int kw, int stride,
		 int pad_h, int pad_w, bool bias)
{
	lbs_layer *l = append(b, name, LBS_LAYER_CONV);
	if (!l)
		return;
	lbs_shape out = { out_c, out_size(b->at.h, kh, stride, pad_h), out_size(b->at.w, kw, stride, pad_w) };
	l->kh = kh;
	l->kw = kw;
	l->stride = stride;
	l->params = (int64_t)b->at.c * out_c * kh * kw + (bias ? out_c : 0);
	l->act_per_sample = (int64_t)out.c * out.h * out.w;
	l->input_grad = !b->first;
	b->first = false;
	finish(b, l, out);
}

void lbs_nb_norm(lbs_net_builder *b, const char *name)
{
	lbs_layer *l = append(b, name, LBS_LAYER_NORM);
	if (!l)
		return;
	l->params = 2 * (int64_t)b->at.c; /* scale and shift per channel */
	l->act_per_sample = (int64_t)b->at.c * b->at.h * b->at.w;
	finish(b, l, b->at);
}

void lbs_nb_conv_bn(lbs_net_builder *b, const char *name, int out_c, int kh, int kw, int stride,
		    int pad_h, int pad_w)
{
	char bn[48];
	lbs_nb_conv(b, name, out_c, kh, kw, stride, pad_h, pad_w, false);
	lbs_nb_norm(b, lbs_fmt(bn, sizeof bn, "%.40s.bn", name));
}

void lbs_nb_pool(lbs_net_builder *b, const char *name, int k, int stride, int pad)
{
	lbs_layer *l = append(b, name, LBS_LAYER_POOL);
	if (!l)
		return;
	lbs_shape out = { b->at.c, out_size(b->at.h, k, stride, pad), out_size(b->at.w, k, stride, pad) };
	l->kh = l->kw = k;
	l->stride = stride;
	l->act_per_sample = (int64_t)out.c * out.h * out.w;
	finish(b, l, out);
}

void lbs_nb_global_pool(lbs_net_builder *b, const char *name)
{
	lbs_layer *l = append(b, name, LBS_LAYER_POOL);
	if (!l)
		return;
	l->kh = b->at.h;
	l->kw = b->at.w;
	l->stride = 1;
	l->act_per_sample = b->at.c;
	finish(b, l, (lbs_shape){ b->at.c, 1, 1 });
}

void lbs_nb_fc(lbs_net_builder *b, const char *name, int out, bool bias)
{
	lbs_layer *l = append(b, name, LBS_LAYER_FC);
	if (!l)
		return;
	int64_t in = (int64_t)b->at.c * b->at.h * b->at.w;
	l->params = in * out + (bias ? out : 0);
	l->act_per_sample = out;
	l->input_grad = !b->first;
	b->first = false;
	finish(b, l, (lbs_shape){ out, 1, 1 });
}

void lbs_nb_sparse(lbs_net_builder *b, const char *name, int64_t features, int64_t nnz, int out,
		   bool bias)
{
	lbs_layer *l = append(b, name, LBS_LAYER_SPARSE);
	if (!l)
		return;
	l->features = features;
	l->nnz = nnz;
	l->params = features * out + (bias ? out : 0);
	/* The output, and the input's values and indices (for the weight gradient). */
	l->act_per_sample = out + 2 * nnz;
	l->input_grad = false; /* nothing below a sparse input to propagate to */
	b->first = false;
	finish(b, l, (lbs_shape){ out, 1, 1 });
}

void lbs_nb_act(lbs_net_builder *b, const char *name, lbs_shape out, bool kept)
{
	lbs_layer *l = append(b, name, LBS_LAYER_ACT);
	if (!l)
		return;
	l->act_per_sample = kept ? (int64_t)out.c * out.h * out.w : 0;
	finish(b, l, out);
}

size_t lbs_layer_gemms(const lbs_layer *l, int64_t batch, lbs_gemm out[LBS_GEMM_PASSES])
{
	memset(out, 0, LBS_GEMM_PASSES * sizeof *out);
	int64_t m, n, k;
	switch (l->kind) {
	case LBS_LAYER_CONV:
		m = l->out_c;
		n = (int64_t)l->out_h * l->out_w * batch;
		k = (int64_t)l->in_c * l->kh * l->kw;
		break;
	case LBS_LAYER_FC:
		m = l->out_c;
		n = batch;
		k = (int64_t)l->in_c * l->in_h * l->in_w;
		break;
	case LBS_LAYER_LINEAR:
		m = l->out_c;
		n = (int64_t)l->tokens * batch;
		k = l->in_c;
		break;
	case LBS_LAYER_SCORES: {
		/* S = Q K^T; dQ = dS K; dK = dS^T Q, per head and sample */
		int64_t s = l->tokens, d = l->head_dim, c = batch * l->heads;
		out[LBS_GEMM_FORWARD] = (lbs_gemm){ s, s, d, c };
		out[LBS_GEMM_BACKWARD_DATA] = (lbs_gemm){ s, d, s, c };
		out[LBS_GEMM_BACKWARD_WEIGHT] = (lbs_gemm){ s, d, s, c };
		return 3;
	}
	case LBS_LAYER_CONTEXT: {
		/* O = P V; dP = dO V^T; dV = P^T dO, per head and sample */
		int64_t s = l->tokens, d = l->head_dim, c = batch * l->heads;
		out[LBS_GEMM_FORWARD] = (lbs_gemm){ s, d, s, c };
		out[LBS_GEMM_BACKWARD_DATA] = (lbs_gemm){ s, s, d, c };
		out[LBS_GEMM_BACKWARD_WEIGHT] = (lbs_gemm){ s, d, s, c };
		return 3;
	}
	case LBS_LAYER_SPARSE:
		/* Per sample: y (out x 1) = G (out x nnz) x (nnz x 1) on the gathered
		 * weight rows G, and dG (out x nnz) = dy (out x 1) x^T (1 x nnz). */
		out[LBS_GEMM_FORWARD] = (lbs_gemm){ l->out_c, 1, l->nnz, batch };
		out[LBS_GEMM_BACKWARD_WEIGHT] = (lbs_gemm){ l->out_c, l->nnz, 1, batch };
		return 2;
	default:
		return 0;
	}
	out[LBS_GEMM_FORWARD] = (lbs_gemm){ m, n, k, 1 };
	if (l->input_grad)
		out[LBS_GEMM_BACKWARD_DATA] = (lbs_gemm){ k, n, m, 1 };
	out[LBS_GEMM_BACKWARD_WEIGHT] = (lbs_gemm){ m, k, n, 1 };
	return l->input_grad ? 3 : 2;
}

static double gemm_flops(const lbs_gemm *g)
{
	return 2.0 * (double)g->m * (double)g->n * (double)g->k * (double)g->count;
}

bool lbs_layer_recomputed(const lbs_net *net, const lbs_layer *l)
{
	switch (net->opts.recompute) {
	case LBS_RECOMPUTE_FULL:
		return l->block > 0;
	case LBS_RECOMPUTE_SELECTIVE:
		return l->block > 0 && (l->kind == LBS_LAYER_SCORES || l->kind == LBS_LAYER_CONTEXT ||
					l->core_bytes > 0);
	default:
		return false;
	}
}

double lbs_net_flops(const lbs_net *net, int64_t batch)
{
	double f = 0;
	for (size_t i = 0; i < net->n_layers; i++) {
		lbs_gemm g[LBS_GEMM_PASSES];
		lbs_layer_gemms(&net->layers[i], batch, g);
		for (int p = 0; p < LBS_GEMM_PASSES; p++)
			f += gemm_flops(&g[p]);
		if (lbs_layer_recomputed(net, &net->layers[i]))
			f += gemm_flops(&g[LBS_GEMM_FORWARD]);
	}
	return f;
}

void lbs_layer_cost(const lbs_net *net, const lbs_layer *l, int64_t batch, lbs_op_cost out[LBS_PASSES])
{
	memset(out, 0, LBS_PASSES * sizeof *out);
	lbs_gemm g[LBS_GEMM_PASSES];
	double e = net->elt_bytes;
	if (l->kind != LBS_LAYER_SPARSE && lbs_layer_gemms(l, batch, g)) {
		/* each operand read once and the product written once: the least traffic */
		for (int p = 0; p < LBS_GEMM_PASSES; p++) {
			lbs_op_cost c = { gemm_flops(&g[p]),
					  e * (double)g[p].count *
						  ((double)g[p].m * (double)g[p].k + (double)g[p].k * (double)g[p].n +
						   (double)g[p].m * (double)g[p].n) };
			int pass = p == LBS_GEMM_FORWARD ? LBS_PASS_FORWARD : LBS_PASS_BACKWARD;
			out[pass].flops += c.flops;
			out[pass].bytes += c.bytes;
		}
	} else if (l->kind == LBS_LAYER_SPARSE) {
		lbs_layer_gemms(l, batch, g);
		out[LBS_PASS_FORWARD].flops = gemm_flops(&g[LBS_GEMM_FORWARD]);
		out[LBS_PASS_BACKWARD].flops = gemm_flops(&g[LBS_GEMM_BACKWARD_WEIGHT]);
	}
	out[LBS_PASS_FORWARD].flops += l->fwd_flops * (double)batch;
	out[LBS_PASS_FORWARD].bytes += l->fwd_bytes * (double)batch;
	out[LBS_PASS_BACKWARD].flops += l->bwd_flops * (double)batch;
	out[LBS_PASS_BACKWARD].bytes += l->bwd_bytes * (double)batch;
	if (lbs_layer_recomputed(net, l))
		out[LBS_PASS_RECOMPUTE] = out[LBS_PASS_FORWARD];
}

lbs_op_cost lbs_net_cost(const lbs_net *net, int64_t batch)
{
	lbs_op_cost sum = { 0, 0 };
	for (size_t i = 0; i < net->n_layers; i++) {
		lbs_op_cost c[LBS_PASSES];
		lbs_layer_cost(net, &net->layers[i], batch, c);
		for (int p = 0; p < LBS_PASSES; p++) {
			sum.flops += c[p].flops;
			sum.bytes += c[p].bytes;
		}
	}
	return sum;
}

/* Bytes per parameter of the weights, gradients and optimizer states
 * (Rajbhandari et al., ZeRO, SC 2020, sec. 3.1: mixed precision with Adam
 * holds 2 + 2 + 12: 16-bit weights and gradients, fp32 master weights,
 * momentum and variance). */
static void state_bytes(const lbs_net *net, double *w, double *g, double *o)
{
	bool half = net->opts.precision != LBS_PREC_FP32 + 1;
	bool adam = net->opts.optimizer == LBS_OPT_ADAM;
	*w = half ? 2 : 4;
	*g = half ? 2 : 4;
	/* fp32: the states; 16-bit: an fp32 master copy too */
	*o = (adam ? 8 : 4) + (half ? 4 : 0);
}

void lbs_net_memory(const lbs_net *net, int64_t batch, lbs_mem *m)
{
	double w, g, o, p = (double)net->params;
	state_bytes(net, &w, &g, &o);
	double dp = net->opts.dp > 1 ? (double)net->opts.dp : 1;
	int z = net->opts.zero_stage;
	/* the experts' states are partitioned over the dp / ep ranks that
	 * hold the same experts (each holds E / ep of them already) */
	double pe = (double)net->expert_params, pd = p - pe;
	double dpe = net->opts.ep > 1 ? fmax(1, dp / net->opts.ep) : dp;
	m->weights = w * (pd / (z >= 3 ? dp : 1) + pe / (z >= 3 ? dpe : 1));
	m->grads = g * (pd / (z >= 2 ? dp : 1) + pe / (z >= 2 ? dpe : 1));
	m->optimizer = o * (pd / (z >= 1 ? dp : 1) + pe / (z >= 1 ? dpe : 1));
	double per_sample;
	/* fused attention keeps no attention core (Korthikanti et al. 2022,
	 * sec. 4.2: the 5as/h term goes), as selective recomputation does not;
	 * measured on an H200 (doc/gpus.md): 9.6 GB a sample of GPT-3 6.7B at
	 * 2,048 tokens, against 9.1 without the cores and 30.6 with them */
	bool fused = net->opts.fused_attention;
	switch (net->opts.recompute) {
	case LBS_RECOMPUTE_FULL:
		/* each block's input, and one block's activations while it is
		 * recomputed and its gradients taken (its core unless fused) */
		per_sample = (double)(net->act_bytes + net->core_bytes) -
			     (double)net->n_blocks * (double)net->block_bytes +
			     (double)net->n_blocks * (double)net->block_input_bytes + (double)net->block_bytes;
		if (fused && net->n_blocks > 0)
			per_sample -= (double)net->core_bytes / (double)net->n_blocks;
		break;
	case LBS_RECOMPUTE_SELECTIVE:
		per_sample = (double)net->act_bytes;
		break;
	default:
		per_sample = (double)(net->act_bytes + (fused ? 0 : net->core_bytes));
	}
	m->activations = per_sample * (double)batch;
	m->total = m->weights + m->grads + m->optimizer + m->activations;
}

double lbs_net_state_bytes(const lbs_net *net)
{
	lbs_mem m;
	lbs_net_memory(net, 0, &m);
	return m.total;
}

int64_t lbs_net_max_batch(const lbs_net *net, double memory_bytes)
{
	lbs_mem m0, m1;
	lbs_net_memory(net, 0, &m0);
	lbs_net_memory(net, 1, &m1);
	double left = memory_bytes - m0.total;
	double per_sample = m1.activations;
	if (left <= 0 || per_sample <= 0)
		return 0;
	double b = floor(left / per_sample);
	return b > 1e9 ? INT64_C(1000000000) : (int64_t)b;
}

static const char *kind_name(lbs_layer_kind k)
{
	static const char *names[] = { "conv", "fc", "sparse", "norm", "pool", "act",
				       "linear", "scores", "context", "embed", "eltwise" };
	return names[k];
}

void lbs_net_write_layers(const lbs_net *net, int64_t batch, FILE *out)
{
	static const char *const prec[] = { "fp32", "bf16", "fp16" };
	static const char *const rec[] = { "none", "selective", "full" };
	char rank[64] = "";
	if (net->opts.tp > 1)
		lbs_fmt(rank, sizeof rank, " on one of %d tensor-parallel ranks", net->opts.tp);
	fprintf(out, "# %s: %s\n# source: %s\n# parameters %lld%s (published %lld), activations %lld "
		"elements per sample, %.4g GFLOP per iteration of %lld samples\n",
		net->name, net->title, net->source, (long long)net->params, rank,
		(long long)net->published_params, (long long)net->act_per_sample,
		lbs_net_flops(net, batch) / 1e9, (long long)batch);
	if (net->tf)
		fprintf(out, "# %lld tokens per sample, %s, tensor parallelism %d, recomputation %s; every "
			"operation: %.4g GFLOP, %.4g GB moved\n", (long long)net->opts.seq_len,
			prec[net->opts.precision - 1], net->opts.tp, rec[net->opts.recompute],
			lbs_net_cost(net, batch).flops / 1e9, lbs_net_cost(net, batch).bytes / 1e9);
	fprintf(out, "layer,kind,in_c,in_h,in_w,out_c,out_h,out_w,kh,kw,stride,params,act_per_sample,"
		"fwd_m,fwd_n,fwd_k,bwd_data_m,bwd_data_n,bwd_data_k,bwd_weight_m,bwd_weight_n,"
		"bwd_weight_k,count,act_bytes,core_bytes,fwd_flops,fwd_bytes,bwd_flops,bwd_bytes,"
		"recompute_flops\n");
	for (size_t i = 0; i < net->n_layers; i++) {
		const lbs_layer *l = &net->layers[i];
		lbs_gemm g[LBS_GEMM_PASSES];
		lbs_layer_gemms(l, batch, g);
		fprintf(out, "%s,%s,%d,%d,%d,%d,%d,%d,%d,%d,%d,%lld,%lld", l->name, kind_name(l->kind),
			l->in_c, l->in_h, l->in_w, l->out_c, l->out_h, l->out_w, l->kh, l->kw, l->stride,
			(long long)l->params, (long long)l->act_per_sample);
		for (int p = 0; p < LBS_GEMM_PASSES; p++) {
			if (g[p].count)
				fprintf(out, ",%lld,%lld,%lld", (long long)g[p].m, (long long)g[p].n,
					(long long)g[p].k);
			else
				fputs(",,,", out);
		}
		int64_t count = g[LBS_GEMM_FORWARD].count;
		lbs_op_cost c[LBS_PASSES];
		lbs_layer_cost(net, l, batch, c);
		fprintf(out, ",%lld,%lld,%lld,%.17g,%.17g,%.17g,%.17g,%.17g\n", (long long)count,
			(long long)l->act_bytes, (long long)l->core_bytes, c[LBS_PASS_FORWARD].flops,
			c[LBS_PASS_FORWARD].bytes, c[LBS_PASS_BACKWARD].flops, c[LBS_PASS_BACKWARD].bytes,
			c[LBS_PASS_RECOMPUTE].flops);
	}
}

size_t lbs_net_block_entry(const lbs_net *net, size_t i)
{
	const lbs_layer *l = &net->layers[i];
	if (!l->block || (i + 1 < net->n_layers && net->layers[i + 1].block == l->block))
		return SIZE_MAX;
	size_t j = i;
	while (j > 0 && net->layers[j - 1].block == l->block)
		j--;
	return j;
}
