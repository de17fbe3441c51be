/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Building networks layer by layer, and what follows from the layers:
 * GEMM shapes, operation counts, memory. */
#include <math.h>
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
	b->net->params += l->params;
	b->net->act_per_sample += l->act_per_sample;
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

double lbs_net_flops(const lbs_net *net, int64_t batch)
{
	double f = 0;
	for (size_t i = 0; i < net->n_layers; i++) {
		lbs_gemm g[LBS_GEMM_PASSES];
		lbs_layer_gemms(&net->layers[i], batch, g);
		for (int p = 0; p < LBS_GEMM_PASSES; p++)
			f += 2.0 * (double)g[p].m * (double)g[p].n * (double)g[p].k * (double)g[p].count;
	}
	return f;
}

double lbs_net_state_bytes(const lbs_net *net)
{
	return 3.0 * 4.0 * (double)net->params;
}

int64_t lbs_net_max_batch(const lbs_net *net, double memory_bytes)
{
	double left = memory_bytes - lbs_net_state_bytes(net);
	double per_sample = 4.0 * (double)net->act_per_sample;
	if (left <= 0 || per_sample <= 0)
		return 0;
	double b = floor(left / per_sample);
	return b > 1e9 ? INT64_C(1000000000) : (int64_t)b;
}

static const char *kind_name(lbs_layer_kind k)
{
	static const char *names[] = { "conv", "fc", "sparse", "norm", "pool", "act" };
	return names[k];
}

void lbs_net_write_layers(const lbs_net *net, int64_t batch, FILE *out)
{
	fprintf(out, "# %s: %s\n# source: %s\n# parameters %lld (published %lld), activations %lld "
		"elements per sample, %.4g GFLOP per iteration of %lld samples\n",
		net->name, net->title, net->source, (long long)net->params,
		(long long)net->published_params, (long long)net->act_per_sample,
		lbs_net_flops(net, batch) / 1e9, (long long)batch);
	fprintf(out, "layer,kind,in_c,in_h,in_w,out_c,out_h,out_w,kh,kw,stride,params,act_per_sample,"
		"fwd_m,fwd_n,fwd_k,bwd_data_m,bwd_data_n,bwd_data_k,bwd_weight_m,bwd_weight_n,"
		"bwd_weight_k,count\n");
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
		fprintf(out, ",%lld\n", (long long)count);
	}
}
