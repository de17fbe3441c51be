/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The datasheet cost model's efficiency curve (models/gpu.h) fitted to
 * published training throughputs, and its error on the ones it was not
 * fitted to (doc/gpus.md).
 *
 * The figures: MosaicML's MPT training benchmarks, llm-foundry
 * scripts/train/benchmarking/README.md (github.com/mosaicml/llm-foundry,
 * commit 061f2c7c, Apache-2.0): tokens per second per GPU of GPT-style
 * models, 125M to 30B, data parallel (FSDP, FULL_SHARD) on 8 GPUs with
 * flash attention, bf16, by sequence length and micro-batch, with or
 * without activation checkpointing. Their architecture is GPT-3's
 * (biases, LayerNorm, GELU, learned positions of the sequence length, tied
 * logits) with a vocabulary of 50,368: our builder gives exactly their
 * NumParams (the 125M at 2048 tokens: 125,311,488; 7B: 6,658,859,008).
 * The A100 80GB rows are fitted; the H100 80GB and A100 40GB rows are
 * held out. */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multimin.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/calib/gpu_fit.h"
#include "models/nets/nets_impl.h"

/* MPT's benchmark models (llm-foundry scripts/train/yamls/pretrain/mpt-*.yaml:
 * d_model, n_layers; expansion 4; the heads shape only the attention GEMMs). */
typedef struct mpt {
	const char *name;
	int layers, hidden, heads;
} mpt;
static const mpt mpts[] = {
	{ "125m", 12, 768, 12 }, { "350m", 24, 1024, 16 }, { "760m", 24, 1536, 12 }, { "1b", 24, 2048, 16 },
	{ "3b", 32, 2560, 20 },	 { "7b", 32, 4096, 32 },   { "13b", 40, 5120, 40 },   { "30b", 48, 7168, 56 },
};

/* device, model, sequence length, micro-batch, activation checkpointing,
 * tokens/s per GPU (8 GPUs; where the README has no 8-GPU row at that
 * length, the 16-GPU one, marked). */
static const lbs_gpu_figure figures[] = {
	/* A100 80GB: fitted */
	{ "a100-80gb", "30b", 8192, 1, 1, 574, true },	    { "a100-80gb", "30b", 4096, 1, 1, 814, true },
	{ "a100-80gb", "30b", 2048, 3, 1, 916, true },	    { "a100-80gb", "30b", 1024, 6, 1, 946, true },
	{ "a100-80gb", "30b", 512, 12, 1, 967, true },	    { "a100-80gb", "13b", 8192, 5, 1, 1795, true },
	{ "a100-80gb", "13b", 4096, 10, 1, 2060, true },    { "a100-80gb", "13b", 2048, 2, 0, 2262, true },
	{ "a100-80gb", "13b", 1024, 40, 1, 2330, true },    { "a100-80gb", "7b", 8192, 8, 1, 3206, true },
	{ "a100-80gb", "7b", 4096, 16, 1, 3684, true },	    { "a100-80gb", "7b", 2048, 6, 0, 4641, true },
	{ "a100-80gb", "7b", 1024, 64, 1, 4357, true },	    { "a100-80gb", "3b", 8192, 3, 0, 7695, true },
	{ "a100-80gb", "3b", 4096, 5, 0, 9457, true },	    { "a100-80gb", "3b", 2048, 10, 0, 10811, true },
	{ "a100-80gb", "3b", 1024, 20, 0, 11580, true },    { "a100-80gb", "3b", 512, 40, 0, 12127, true },
	{ "a100-80gb", "1b", 8192, 3, 0, 13814, true },	    { "a100-80gb", "1b", 4096, 7, 0, 17807, true },
	{ "a100-80gb", "1b", 2048, 14, 0, 20513, true },    { "a100-80gb", "1b", 1024, 18, 0, 22112, true },
	{ "a100-80gb", "1b", 512, 56, 0, 23148, true },	    { "a100-80gb", "760m", 8192, 6, 0, 20933, true },
	{ "a100-80gb", "760m", 4096, 12, 0, 27351, true },  { "a100-80gb", "760m", 2048, 24, 0, 32434, true },
	{ "a100-80gb", "760m", 1024, 48, 0, 29765, true },  { "a100-80gb", "760m", 512, 96, 0, 29446, true },
	{ "a100-80gb", "350m", 8192, 8, 0, 36569, true },   { "a100-80gb", "350m", 4096, 16, 0, 49555, true },
	{ "a100-80gb", "350m", 2048, 32, 0, 58782, true },  { "a100-80gb", "350m", 1024, 64, 0, 64813, true },
	{ "a100-80gb", "350m", 512, 128, 0, 69330, true },  { "a100-80gb", "125m", 8192, 8, 0, 90392, true },
	{ "a100-80gb", "125m", 4096, 16, 0, 118396, true }, { "a100-80gb", "125m", 2048, 32, 0, 141737, true },
	{ "a100-80gb", "125m", 1024, 64, 0, 156468, true }, { "a100-80gb", "125m", 512, 128, 0, 165681, true },
	/* H100 80GB (bf16): held out */
	{ "h100-sxm", "30b", 8192, 1, 1, 1384, false },	    { "h100-sxm", "30b", 4096, 1, 1, 1802, false },
	{ "h100-sxm", "30b", 2048, 3, 1, 2002, false },	    { "h100-sxm", "30b", 1024, 6, 1, 2084, false },
	{ "h100-sxm", "13b", 4096, 10, 1, 4717, false },    { "h100-sxm", "13b", 2048, 2, 0, 4792, false },
	{ "h100-sxm", "13b", 1024, 40, 1, 5502, false },    { "h100-sxm", "7b", 8192, 8, 1, 6935, false },
	{ "h100-sxm", "7b", 4096, 16, 1, 8611, false },	    { "h100-sxm", "7b", 2048, 6, 0, 10643, false },
	{ "h100-sxm", "7b", 1024, 64, 1, 10203, false },    { "h100-sxm", "3b", 8192, 3, 0, 16578, false },
	{ "h100-sxm", "3b", 4096, 5, 0, 20964, false },	    { "h100-sxm", "3b", 2048, 10, 0, 24142, false }, /* 16 GPUs */
	{ "h100-sxm", "3b", 1024, 20, 0, 27046, false },    { "h100-sxm", "3b", 512, 40, 0, 27965, false },
	{ "h100-sxm", "1b", 8192, 3, 0, 29157, false },	    { "h100-sxm", "1b", 4096, 7, 0, 38535, false },
	{ "h100-sxm", "1b", 2048, 14, 0, 45455, false },    { "h100-sxm", "1b", 1024, 18, 0, 48910, false },
	{ "h100-sxm", "1b", 512, 56, 0, 52275, false },	    { "h100-sxm", "760m", 8192, 6, 0, 41825, false },
	{ "h100-sxm", "760m", 4096, 12, 0, 55459, false },  { "h100-sxm", "760m", 2048, 24, 0, 63147, false },
	{ "h100-sxm", "760m", 1024, 48, 0, 78581, false },  { "h100-sxm", "760m", 512, 96, 0, 83749, false },
	/* A100 40GB (pure bf16): held out */
	{ "a100-40gb", "13b", 8192, 1, 1, 1407, false },    { "a100-40gb", "13b", 4096, 2, 1, 1603, false },
	{ "a100-40gb", "13b", 2048, 4, 1, 1668, false },    { "a100-40gb", "13b", 1024, 8, 1, 1727, false },
	{ "a100-40gb", "13b", 512, 16, 1, 1763, false },    { "a100-40gb", "7b", 8192, 3, 1, 2887, false },
	{ "a100-40gb", "7b", 4096, 6, 1, 3366, false },	    { "a100-40gb", "7b", 2048, 12, 1, 3679, false },
	{ "a100-40gb", "7b", 1024, 24, 1, 3854, false },    { "a100-40gb", "7b", 512, 48, 1, 3895, false },
	{ "a100-40gb", "3b", 8192, 1, 0, 7149, false },	    { "a100-40gb", "3b", 4096, 2, 0, 8777, false },
	{ "a100-40gb", "3b", 2048, 5, 0, 10065, false },    { "a100-40gb", "3b", 1024, 10, 0, 10731, false },
	{ "a100-40gb", "3b", 512, 20, 0, 11324, false },    { "a100-40gb", "1b", 8192, 2, 0, 13474, false },
	{ "a100-40gb", "1b", 4096, 4, 0, 16856, false },    { "a100-40gb", "1b", 2048, 8, 0, 19271, false },
	{ "a100-40gb", "1b", 1024, 16, 0, 20959, false },   { "a100-40gb", "1b", 512, 32, 0, 21782, false },
	{ "a100-40gb", "760m", 8192, 3, 0, 20106, false },  { "a100-40gb", "760m", 4096, 6, 0, 25863, false },
	{ "a100-40gb", "760m", 2048, 12, 0, 30173, false }, { "a100-40gb", "760m", 1024, 24, 0, 33422, false },
	{ "a100-40gb", "760m", 512, 48, 0, 34938, false },  { "a100-40gb", "350m", 8192, 4, 0, 34933, false },
	{ "a100-40gb", "350m", 4096, 8, 0, 46833, false },  { "a100-40gb", "350m", 2048, 16, 0, 55995, false },
	{ "a100-40gb", "350m", 1024, 32, 0, 62523, false }, { "a100-40gb", "350m", 512, 64, 0, 66284, false },
	{ "a100-40gb", "125m", 8192, 5, 0, 86858, false },  { "a100-40gb", "125m", 4096, 13, 0, 115162, false },
	{ "a100-40gb", "125m", 2048, 26, 0, 136334, false }, { "a100-40gb", "125m", 1024, 52, 0, 148289, false },
	{ "a100-40gb", "125m", 512, 104, 0, 156735, false },
	/* Llama 3 8B, 8192 tokens, FSDP, selective activation checkpointing
	 * (torchtitan, docs/performance.md, github.com/pytorch/torchtitan): 64
	 * A100 80GB, local batch 1, "selective op", 2,973 tokens/s per GPU; 8
	 * H100 (Grand Teton: 96GB HBM2e, 2.4 TB/s, 500 W power limit), local
	 * batch 2, FSDP without torch.compile, 5,762. Held out. */
	{ "a100-80gb", "llama3-8b", 8192, 1, 0, 2973, false },
	{ "h100-sxm", "llama3-8b", 8192, 2, 0, 5762, false },
};

#define N_FIGURES (sizeof figures / sizeof figures[0])

const lbs_gpu_figure *lbs_gpu_figures(size_t *n)
{
	*n = N_FIGURES;
	return figures;
}

lbs_status lbs_gpu_figure_net(const lbs_gpu_figure *f, lbs_net *net, lbs_error *err)
{
	const mpt *m = NULL;
	for (size_t i = 0; i < sizeof mpts / sizeof *mpts; i++)
		if (!strcmp(mpts[i].name, f->model))
			m = &mpts[i];
	if (!m) /* a preset: selective recomputation, as flash attention's */
		return lbs_net_create_opts(net, f->model, &(lbs_net_opts){ .seq_len = f->seq,
				.recompute = f->checkpointing ? LBS_RECOMPUTE_FULL : LBS_RECOMPUTE_SELECTIVE }, err);
	lbs_tf_config c = { .layers = m->layers, .hidden = m->hidden, .heads = m->heads, .kv_heads = m->heads,
			    .head_dim = m->hidden / m->heads, .ffn = 4 * m->hidden, .bias = true, .dropout = false,
			    .learned_positions = true, .tied = true, .vocab = 50368, .max_seq = f->seq,
			    .seq_len = f->seq, .precision = LBS_PREC_BF16 };
	/* flash attention recomputes the scores in its backward pass, like
	 * selective recomputation; checkpointing reruns every block */
	lbs_net_opts o = { .recompute = f->checkpointing ? LBS_RECOMPUTE_FULL : LBS_RECOMPUTE_SELECTIVE };
	char name[32];
	lbs_fmt(name, sizeof name, "mpt-%s", m->name);
	return lbs_net_create_config(net, name, &c, &o, err);
}

/* The parameters from the unconstrained vector the minimiser moves. */
static lbs_gpu_eff unpack(const gsl_vector *v)
{
	return (lbs_gpu_eff){ 1 / (1 + exp(-gsl_vector_get(v, 0))), exp(gsl_vector_get(v, 1)),
			      1 / (1 + exp(-gsl_vector_get(v, 2))), exp(gsl_vector_get(v, 3)) };
}

typedef struct fit_ctx {
	const lbs_gpu_figure *f;
	const double *observed; /* tokens/s per GPU */
	lbs_net *nets;
	size_t n;
} fit_ctx;

double lbs_gpu_figure_predict(const lbs_gpu_figure *f, const lbs_net *net, const lbs_gpu_eff *e)
{
	const lbs_gpu_spec *d = lbs_gpu_find(f->device);
	double t = lbs_gpu_iteration_time(d, e, net, f->micro_batch, true);
	return (double)f->micro_batch * (double)f->seq / t;
}

static double objective(const gsl_vector *v, void *p)
{
	const fit_ctx *c = p;
	lbs_gpu_eff e = unpack(v);
	double sse = 0;
	for (size_t i = 0; i < c->n; i++) {
		if (!c->f[i].fitted)
			continue;
		double r = log(lbs_gpu_figure_predict(&c->f[i], &c->nets[i], &e) / c->observed[i]);
		sse += r * r;
	}
	return sse;
}

lbs_status lbs_gpu_fit(const lbs_gpu_figure *f, const double *observed, size_t n, lbs_gpu_eff *out,
		       double *rms_log, lbs_error *err)
{
	lbs_net *nets = calloc(n ? n : 1, sizeof *nets);
	if (!nets)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	lbs_status st = LBS_OK;
	size_t built = 0, used = 0;
	for (; built < n && st == LBS_OK; built++)
		if ((st = lbs_gpu_figure_net(&f[built], &nets[built], err)) != LBS_OK)
			break;
	for (size_t i = 0; i < n; i++)
		used += f[i].fitted;
	if (st == LBS_OK && used < LBS_GPU_EFF_PARAMS)
		st = lbs_error_set(err, LBS_EINPUT, "%zu figures to fit, fewer than the %d parameters", used,
				   LBS_GPU_EFF_PARAMS);
	fit_ctx c = { f, observed, nets, n };
	if (st == LBS_OK) {
		gsl_multimin_function fn = { objective, LBS_GPU_EFF_PARAMS, &c };
		/* from eff_max 0.7, t_half 10 us, mem 0.7, overhead 5 us */
		double start[LBS_GPU_EFF_PARAMS] = { log(0.7 / 0.3), log(1e-5), log(0.7 / 0.3), log(5e-6) };
		double best = INFINITY;
		gsl_vector *x = gsl_vector_alloc(LBS_GPU_EFF_PARAMS), *step = gsl_vector_alloc(LBS_GPU_EFF_PARAMS);
		gsl_multimin_fminimizer *m =
			gsl_multimin_fminimizer_alloc(gsl_multimin_fminimizer_nmsimplex2, LBS_GPU_EFF_PARAMS);
		/* restarts from the best point until it moves no more */
		for (int round = 0; round < 4; round++) {
			for (int k = 0; k < LBS_GPU_EFF_PARAMS; k++) {
				gsl_vector_set(x, k, start[k]);
				gsl_vector_set(step, k, 1.0);
			}
			gsl_multimin_fminimizer_set(m, &fn, x, step);
			for (int it = 0; it < 3000; it++) {
				if (gsl_multimin_fminimizer_iterate(m))
					break;
				if (gsl_multimin_test_size(gsl_multimin_fminimizer_size(m), 1e-7) == GSL_SUCCESS)
					break;
			}
			for (int k = 0; k < LBS_GPU_EFF_PARAMS; k++)
				start[k] = gsl_vector_get(m->x, k);
			if (!(m->fval < best - 1e-12)) {
				best = fmin(best, m->fval);
				break;
			}
			best = m->fval;
		}
		*out = unpack(m->x);
		*rms_log = sqrt(best / (double)used);
		gsl_multimin_fminimizer_free(m);
		gsl_vector_free(x);
		gsl_vector_free(step);
	}
	for (size_t i = 0; i < built; i++)
		lbs_net_destroy(&nets[i]);
	free(nets);
	return st;
}
