/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Decoder-only transformers (GPT, Llama) as the operations one training
 * iteration runs, per tensor-parallel rank (doc/transformers.md).
 *
 * Per block, on s tokens of hidden size h with a query heads and k
 * key/value heads of d elements, FFN size f, on one of t tensor-parallel
 * ranks (Megatron-LM's split, Shoeybi et al. 2019, sec. 3: the QKV and the
 * first FFN matrices split by columns, the output projection and the last
 * FFN matrix by rows, the heads among the ranks; the embedding and the
 * logits by vocabulary rows; the norms and the row-parallel biases
 * replicated):
 *
 *   norm1, qkv (h -> (a + 2k) d / t), scores (Q K^T, a / t heads),
 *   softmax (scaled, causal mask), [dropout], context (P V), proj
 *   (a d / t -> h), residual add [with bias and dropout], norm2,
 *   GELU: fc1 (h -> f / t), gelu, fc2 (f / t -> h);
 *   SwiGLU: gate, up (h -> f / t), silu, mul, down (f / t -> h);
 *   or a mixture of experts: router (h -> E), dispatch, the experts'
 *   FFN on the k s routed tokens, combine (moe() below);
 *   residual add [with bias and dropout].
 *
 * Each keeps for the backward pass what PyTorch and Megatron-LM keep, so
 * that a GPT block with dropout keeps exactly s b h (34 + 5 a s / h) bytes
 * in 16-bit precision, Korthikanti et al., "Reducing Activation
 * Recomputation in Large Transformer Models", MLSys 2023 (arXiv
 * 2205.05198), eq. 1, s b h (10 + 24 / t + 5 a s / (h t)) under tensor
 * parallelism, eq. 2, and s b h (34 / t + 5 a s / (h t)) with sequence
 * parallelism as well, eq. 4 (tests/unit/test_nets.c checks all three).
 *
 * Sequence parallelism (opts.seq_par, their sec. 4.2.2): the operations
 * tensor parallelism replicates (the norms, the dropouts and residual
 * additions, the embedding's dropout and positions) run on s / t tokens
 * a rank, and the column-parallel linears after a norm (qkv, fc1 or gate
 * and up, the logits) keep their input sharded, all-gathering it again in
 * the backward. Each all-reduce of the tensor-parallel region becomes an
 * all-gather and a reduce-scatter, which a ring does in the same time
 * (hybrid/plan.c charges it as before). */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "models/nets/nets_impl.h"

/* ---- the presets ------------------------------------------------------- */

/* GPT-3: Brown et al., "Language Models are Few-Shot Learners", NeurIPS
 * 2020, Table 2.1 (n_layers, d_model, n_heads, d_head; d_ff = 4 d_model
 * and a context of 2048 tokens, sec. 2.1), with GPT-2's architecture
 * (Radford et al. 2019: learned positions, pre-norm LayerNorm, biases, GELU,
 * dropout, the logits tied to the token embedding; 50,257 tokens). */
#define GPT3(L, H, A, D)                                                                             \
	{ .layers = L, .hidden = H, .heads = A, .kv_heads = A, .head_dim = D, .ffn = 4 * (H),          \
	  .swiglu = false, .rmsnorm = false, .bias = true, .dropout = true, .learned_positions = true, \
	  .tied = true, .vocab = 50257, .max_seq = 2048, .seq_len = 2048, .precision = LBS_PREC_BF16 }
const lbs_tf_config lbs_tf_gpt3_125m = GPT3(12, 768, 12, 64);
const lbs_tf_config lbs_tf_gpt3_350m = GPT3(24, 1024, 16, 64);
const lbs_tf_config lbs_tf_gpt3_760m = GPT3(24, 1536, 16, 96);
/* XL: Table 2.1 prints 24 heads of 128, 3072 wide, which is not its d_model of
 * 2048 and would make 1.52B parameters; 1.3B needs the attention 2048 wide,
 * and we take it as 16 heads of 128. */
const lbs_tf_config lbs_tf_gpt3_1_3b = GPT3(24, 2048, 16, 128);
const lbs_tf_config lbs_tf_gpt3_2_7b = GPT3(32, 2560, 32, 80);
const lbs_tf_config lbs_tf_gpt3_6_7b = GPT3(32, 4096, 32, 128);
const lbs_tf_config lbs_tf_gpt3_13b = GPT3(40, 5140, 40, 128); /* d_model 5140 as printed; 40 x 128 = 5120 */
const lbs_tf_config lbs_tf_gpt3_175b = GPT3(96, 12288, 96, 128);

/* The GPT models of Narayanan et al., "Efficient Large-Scale Language Model
 * Training on GPU Clusters Using Megatron-LM", SC'21, Table 1 (attention
 * heads, hidden size, layers), with sec. 5.1's vocabulary of 51,200 tokens
 * and sequence length of 2048, and Megatron-LM's GPT (GPT-2's architecture:
 * learned positions of 2048 rows, LayerNorm, biases, GELU, dropout, an FFN
 * of 4 h, the logits tied to the embedding). Their counts are the paper's
 * 12 l h^2 (1 + 13 / 12h + (V + s) / 12 l h) plus the final LayerNorm's 2h. */
#define MEGATRON(L, H, A)                                                                            \
	{ .layers = L, .hidden = H, .heads = A, .kv_heads = A, .head_dim = (H) / (A), .ffn = 4 * (H),  \
	  .swiglu = false, .rmsnorm = false, .bias = true, .dropout = true, .learned_positions = true, \
	  .tied = true, .vocab = 51200, .max_seq = 2048, .seq_len = 2048, .precision = LBS_PREC_BF16 }
const lbs_tf_config lbs_tf_megatron_1_7b = MEGATRON(24, 2304, 24);
const lbs_tf_config lbs_tf_megatron_3_6b = MEGATRON(30, 3072, 32);
const lbs_tf_config lbs_tf_megatron_7_5b = MEGATRON(36, 4096, 32);
const lbs_tf_config lbs_tf_megatron_18b = MEGATRON(40, 6144, 48);
const lbs_tf_config lbs_tf_megatron_39b = MEGATRON(48, 8192, 64);
const lbs_tf_config lbs_tf_megatron_76b = MEGATRON(60, 10240, 80);
const lbs_tf_config lbs_tf_megatron_145b = MEGATRON(80, 12288, 96);
const lbs_tf_config lbs_tf_megatron_310b = MEGATRON(96, 16384, 128);
const lbs_tf_config lbs_tf_megatron_530b = MEGATRON(105, 20480, 128);
const lbs_tf_config lbs_tf_megatron_1t = MEGATRON(128, 25600, 160);

/* Llama 2: Touvron et al., "Llama 2: Open Foundation and Fine-Tuned Chat
 * Models", 2023 (sec. 2.2, Table 1: 4k context, grouped-query attention for
 * 70B), with Llama 1's architecture (Touvron et al. 2023, Table 2: dim,
 * heads, layers; RMSNorm, SwiGLU, rotary positions, untied logits) and the
 * FFN sizes and 8 KV heads of the released params.json/config.json
 * (intermediate_size 11008, 13824, 28672; 32,000 tokens). Llama 3: Llama
 * Team, "The Llama 3 Herd of Models", 2024, Table 3 (layers, model and FFN
 * dimension, 32/64 heads, 8 KV heads, 128K vocabulary: 128,256 tokens in
 * the released config.json; 8192-token context). */
#define LLAMA(L, H, A, K, F, V, S)                                                                  \
	{ .layers = L, .hidden = H, .heads = A, .kv_heads = K, .head_dim = (H) / (A), .ffn = F,        \
	  .swiglu = true, .rmsnorm = true, .bias = false, .dropout = false, .learned_positions = false, \
	  .tied = false, .vocab = V, .max_seq = S, .seq_len = S, .precision = LBS_PREC_BF16 }
const lbs_tf_config lbs_tf_llama2_7b = LLAMA(32, 4096, 32, 32, 11008, 32000, 4096);
const lbs_tf_config lbs_tf_llama2_13b = LLAMA(40, 5120, 40, 40, 13824, 32000, 4096);
const lbs_tf_config lbs_tf_llama2_70b = LLAMA(80, 8192, 64, 8, 28672, 32000, 4096);
const lbs_tf_config lbs_tf_llama3_8b = LLAMA(32, 4096, 32, 8, 14336, 128256, 8192);
const lbs_tf_config lbs_tf_llama3_70b = LLAMA(80, 8192, 64, 8, 28672, 128256, 8192);
/* 405B: Table 3's 126 layers of 16384, FFN 53248, 128 heads, 8 KV heads */
const lbs_tf_config lbs_tf_llama3_405b = LLAMA(126, 16384, 128, 8, 53248, 128256, 8192);
/* Llama 3.1: the same models with a context of 128K tokens (the paper's
 * sec. 3.4.2, long-context pre-training to 128K; 131,072 positions in the
 * released config.json), pre-trained at 8,192: that is their default
 * length, sequence_length up to 131,072. */
#define LLAMA31(L, H, A, K, F)                                                                      \
	{ .layers = L, .hidden = H, .heads = A, .kv_heads = K, .head_dim = (H) / (A), .ffn = F,        \
	  .swiglu = true, .rmsnorm = true, .bias = false, .dropout = false, .learned_positions = false, \
	  .tied = false, .vocab = 128256, .max_seq = 131072, .seq_len = 8192, .precision = LBS_PREC_BF16 }
const lbs_tf_config lbs_tf_llama31_8b = LLAMA31(32, 4096, 32, 8, 14336);
const lbs_tf_config lbs_tf_llama31_70b = LLAMA31(80, 8192, 64, 8, 28672);
const lbs_tf_config lbs_tf_llama31_405b = LLAMA31(126, 16384, 128, 8, 53248);

/* Mixtral 8x7B: Jiang et al., "Mixtral of Experts", arXiv 2401.04088,
 * 2024, Table 1 (dim 4096, 32 layers, head_dim 128, hidden_dim 14336, 32
 * heads, 8 KV heads, a context of 32768, 32,000 tokens, 8 experts, top 2),
 * Mistral 7B's architecture otherwise (RMSNorm, SwiGLU experts, rotary
 * positions, untied logits). Mixtral 8x22B: the released config.json
 * (hidden 6144, 56 layers, intermediate 16384, 48 heads, 8 KV heads,
 * 32,768 tokens, 65,536 positions, 8 experts, top 2). Both default to
 * 4096 tokens a sequence. */
#define MIXTRAL(L, H, A, F, V, S)                                                                   \
	{ .layers = L, .hidden = H, .heads = A, .kv_heads = 8, .head_dim = (H) / (A), .ffn = F,        \
	  .swiglu = true, .rmsnorm = true, .bias = false, .dropout = false, .learned_positions = false, \
	  .tied = false, .vocab = V, .max_seq = S, .seq_len = 4096, .precision = LBS_PREC_BF16,         \
	  .experts = 8, .top_k = 2 }
const lbs_tf_config lbs_tf_mixtral_8x7b = MIXTRAL(32, 4096, 32, 14336, 32000, 32768);
const lbs_tf_config lbs_tf_mixtral_8x22b = MIXTRAL(56, 6144, 48, 16384, 32768, 65536);

/* Ours, small enough to time on a CPU: Llama 2's architecture and
 * vocabulary at 4 layers of 256, 4 query and 2 KV heads, an FFN of 768
 * (Llama's 8h/3 rounded up to a multiple of 256), 128 tokens, in fp32. */
const lbs_tf_config lbs_tf_llama_like_small = {
	.layers = 4, .hidden = 256, .heads = 4, .kv_heads = 2, .head_dim = 64, .ffn = 768,
	.swiglu = true, .rmsnorm = true, .bias = false, .dropout = false, .learned_positions = false,
	.tied = false, .vocab = 32000, .max_seq = 2048, .seq_len = 128, .precision = LBS_PREC_FP32
};

/* ---- the operations ---------------------------------------------------- */

typedef struct tf_ctx {
	lbs_net_builder *b;
	const lbs_tf_config *c;
	int64_t s;   /* tokens per sample */
	int t;       /* tensor-parallel ranks */
	int sp;      /* sequence parallelism: t (the replicated work split by tokens), else 1 */
	int ep;      /* expert parallelism: the experts over ep ranks */
	int64_t ks;  /* a mixture of experts: the routed tokens of a sample, k s (padded to the
			capacity: E ceil(C k s / E)) */
	double e;    /* bytes per activation element */
	int block;   /* the block being built, from 1; 0: outside */
} tf_ctx;

static lbs_layer *op(tf_ctx *x, const char *name, lbs_layer_kind kind, int in, bool split)
{
	char full[48];
	if (x->block)
		lbs_fmt(full, sizeof full, "layer%d.%s", x->block - 1, name);
	else
		lbs_fmt(full, sizeof full, "%s", name);
	lbs_layer *l = lbs_nb_append(x->b, full, kind);
	if (!l)
		return NULL;
	l->in_c = in;
	l->in_h = (int)x->s;
	l->in_w = 1;
	l->tokens = (int)x->s;
	l->block = x->block;
	l->split = split;
	l->input_grad = true;
	return l;
}

static void done(tf_ctx *x, lbs_layer *l, int out)
{
	if (l)
		lbs_nb_finish(x->b, l, (lbs_shape){ out, (int)x->s, 1 });
}

/* A linear layer on every token, keeping 1 / keep of its input (0: none;
 * keep = sp: an input that sequence parallelism holds sharded). */
static void linear(tf_ctx *x, const char *name, int in, int out, bool bias, int keep)
{
	lbs_layer *l = op(x, name, LBS_LAYER_LINEAR, in, true);
	if (!l)
		return;
	l->params = (int64_t)in * out + (bias ? out : 0);
	l->act_per_sample = keep ? x->s * in / keep : 0;
	l->act_bytes = (int64_t)(x->e * (double)l->act_per_sample);
	l->fwd_flops = bias ? (double)(x->s * out) : 0; /* the bias, besides the GEMM */
	l->bwd_flops = bias ? (double)(x->s * out) : 0; /* its gradient: a sum over tokens */
	done(x, l, out);
}

/* Element-wise or row-wise work on `elems` elements per sample: flops per
 * element forward and backward, activation-sized tensors read or written
 * forward and backward (plus `mask` one-byte tensors), bytes kept (act,
 * core), parameters. */
typedef struct ew {
	double elems, fwd, bwd, fwd_tensors, bwd_tensors, masks;
	double act, core;
	int64_t params;
	bool split;
	bool expert; /* on the tokens routed to the rank's experts */
} ew;

static void eltwise(tf_ctx *x, const char *name, int width, ew w)
{
	lbs_layer *l = op(x, name, LBS_LAYER_ELTWISE, width, w.split);
	if (!l)
		return;
	l->params = w.params;
	l->fwd_flops = w.fwd * w.elems;
	l->bwd_flops = w.bwd * w.elems;
	l->fwd_bytes = (w.fwd_tensors * x->e + w.masks) * w.elems;
	l->bwd_bytes = (w.bwd_tensors * x->e + w.masks) * w.elems;
	l->act_bytes = (int64_t)w.act;
	l->core_bytes = (int64_t)w.core;
	l->act_per_sample = (int64_t)((w.act + w.core) / x->e);
	l->input_grad = false;
	l->expert = w.expert;
	done(x, l, width);
}

/* LayerNorm: mean, variance, normalise, scale and shift, 8 flops an element
 * forward, 16 backward; RMSNorm: 4 and 8. Reads and writes a tensor forward,
 * reads two and writes one backward; keeps its input. */
static void norm(tf_ctx *x, const char *name)
{
	int h = x->c->hidden;
	double n = (double)(x->s * h) / x->sp;
	eltwise(x, name, h, (ew){ .elems = n, .fwd = x->c->rmsnorm ? 4 : 8, .bwd = x->c->rmsnorm ? 8 : 16,
				  .fwd_tensors = 2, .bwd_tensors = 3, .act = x->e * n,
				  .params = x->c->rmsnorm ? h : 2 * h });
}

/* The residual addition; with dropout (GPT), Megatron-LM's fused bias,
 * dropout and add of a row-parallel layer's output, whose bias it holds
 * (replicated) and whose dropout mask it keeps. */
static void residual(tf_ctx *x, const char *name)
{
	int h = x->c->hidden;
	double n = (double)(x->s * h) / x->sp;
	if (x->c->dropout)
		eltwise(x, name, h, (ew){ .elems = n, .fwd = x->c->bias ? 4 : 3, .bwd = 1, .fwd_tensors = 3,
					  .bwd_tensors = 2, .masks = 1, .act = n,
					  .params = x->c->bias ? h : 0 });
	else
		/* the gradient passes through the addition unchanged */
		eltwise(x, name, h, (ew){ .elems = n, .fwd = x->c->bias ? 2 : 1, .fwd_tensors = 3,
					  .params = x->c->bias ? h : 0 });
}

static int64_t ceil_div(int64_t a, int64_t b)
{
	return (a + b - 1) / b;
}

/* A linear layer of the rank's experts on the k s tokens routed to them
 * (of a sample, balanced: E / ep experts receive k s / E tokens from each
 * of ep ranks; padded, each expert its capacity), its GEMMs as one grouped
 * GEMM over them, keeping 1 / keep of its input (0: none). */
static void expert_linear(tf_ctx *x, const char *name, int in, int out, int keep)
{
	const lbs_tf_config *c = x->c;
	int64_t ks = x->ks;
	lbs_layer *l = op(x, name, LBS_LAYER_LINEAR, in, true);
	if (!l)
		return;
	l->tokens = (int)ks;
	l->expert = true;
	l->params = (int64_t)(c->experts / x->ep) * ((int64_t)in * out + (c->bias ? out : 0));
	l->act_per_sample = keep ? ks * in / keep : 0;
	l->act_bytes = (int64_t)(x->e * (double)l->act_per_sample);
	l->fwd_flops = c->bias ? (double)(ks * out) : 0;
	l->bwd_flops = c->bias ? (double)(ks * out) : 0;
	done(x, l, out);
}

/* A mixture-of-experts FFN (Shazeer et al., ICLR 2017; Mixtral, Jiang et
 * al., arXiv 2401.04088, sec. 2.1): a router (h -> E, replicated over the
 * tensor ranks, on the rank's tokens) picks k of the E experts for each
 * token; the tokens are permuted to their experts (each token's h elements
 * copied k times), each expert an FFN of size f split over the tensor
 * ranks as a dense one is, and the k outputs combined, weighted by the
 * router's probabilities. Expert parallelism sends the permuted tokens to
 * the ranks of their experts and back (hybrid/plan.c charges those
 * all-to-alls); the work of a rank does not depend on it when the routing
 * is balanced. */
static void moe(tf_ctx *x)
{
	const lbs_tf_config *c = x->c;
	int h = c->hidden, f = c->ffn / x->t, E = c->experts;
	int64_t s = x->s, ks = x->ks;
	double e = x->e, ns = (double)(s * h) / x->sp, nk = (double)ks * h / x->sp;
	lbs_layer *l = op(x, "router", LBS_LAYER_LINEAR, h, false);
	if (l) {
		l->tokens = (int)(s / x->sp);
		l->params = (int64_t)h * E;
		l->act_per_sample = (int64_t)ns; /* its input */
		l->act_bytes = (int64_t)(e * ns);
		/* softmax over the E logits and the top-k choice, as a row-wise pass */
		l->fwd_flops = 4.0 * (double)(s / x->sp) * E;
		l->bwd_flops = 4.0 * (double)(s / x->sp) * E;
		done(x, l, E);
	}
	/* permute: read the tokens, write each k times */
	eltwise(x, "dispatch", h, (ew){ .elems = nk, .fwd = 0, .bwd = 1, .fwd_tensors = 1.0 / c->top_k + 1,
					 .bwd_tensors = 1.0 / c->top_k + 1 });
	double nf = (double)ks * f;
	if (c->swiglu) {
		expert_linear(x, "expert_gate", h, f, 1);
		expert_linear(x, "expert_up", h, f, 0); /* the same input as gate */
		eltwise(x, "expert_silu", f, (ew){ .elems = nf, .fwd = 4, .bwd = 6, .fwd_tensors = 2, .bwd_tensors = 3,
						    .act = e * nf, .split = true, .expert = true });
		eltwise(x, "expert_mul", f, (ew){ .elems = nf, .fwd = 1, .bwd = 2, .fwd_tensors = 3, .bwd_tensors = 5,
						   .act = 2 * e * nf, .split = true, .expert = true });
		expert_linear(x, "expert_down", f, h, 1);
	} else {
		expert_linear(x, "expert_fc1", h, f, 1);
		eltwise(x, "expert_gelu", f, (ew){ .elems = nf, .fwd = 8, .bwd = 16, .fwd_tensors = 2, .bwd_tensors = 3,
						    .act = e * nf, .split = true, .expert = true });
		expert_linear(x, "expert_fc2", f, h, 1);
	}
	/* un-permute and sum the k outputs by their weights; keeps them for
	 * the weights' gradient */
	eltwise(x, "combine", h, (ew){ .elems = nk, .fwd = 2, .bwd = 2, .fwd_tensors = 1 + 1.0 / c->top_k,
					.bwd_tensors = 2 + 1.0 / c->top_k, .act = e * nk });
}

static void block(tf_ctx *x)
{
	const lbs_tf_config *c = x->c;
	int h = c->hidden, t = x->t, d = c->head_dim;
	int a = c->heads / t, k = c->kv_heads / t, f = c->ffn / t;
	int64_t s = x->s;
	double e = x->e;
	norm(x, "norm1");
	linear(x, "qkv", h, (a + 2 * k) * d, c->bias, x->sp);
	/* Q K^T: keeps Q and K */
	lbs_layer *l = op(x, "scores", LBS_LAYER_SCORES, (a + 2 * k) * d, true);
	if (l) {
		l->heads = a;
		l->head_dim = d;
		l->act_bytes = (int64_t)(e * (double)(s * (a + k) * d));
		l->act_per_sample = s * (a + k) * d;
		done(x, l, a * (int)s);
	}
	/* per sample, a / t heads of s x s probabilities */
	double probs = (double)a * (double)s * (double)s;
	/* scaled and masked softmax (Chinchilla, Hoffmann et al. 2022, app. F:
	 * 3 flops an element), keeping its output */
	eltwise(x, "softmax", a * (int)s, (ew){ .elems = probs, .fwd = 3, .bwd = 4, .fwd_tensors = 2,
						.bwd_tensors = 3, .core = e * probs, .split = true });
	if (c->dropout)
		eltwise(x, "attn_dropout", a * (int)s, (ew){ .elems = probs, .fwd = 2, .bwd = 1, .fwd_tensors = 2,
							     .bwd_tensors = 2, .masks = 1, .core = probs,
							     .split = true });
	/* P V: keeps V, and the dropout's output (without dropout, P is the
	 * softmax's output, kept there) */
	if ((l = op(x, "context", LBS_LAYER_CONTEXT, a * (int)s, true))) {
		l->heads = a;
		l->head_dim = d;
		l->act_bytes = (int64_t)(e * (double)(s * k * d));
		l->core_bytes = c->dropout ? (int64_t)(e * probs) : 0;
		l->act_per_sample = s * k * d + (c->dropout ? (int64_t)probs : 0);
		done(x, l, a * d);
	}
	linear(x, "proj", a * d, h, false, 1);
	residual(x, "attn_add");
	norm(x, "norm2");
	double n = (double)(s * f);
	if (c->experts) {
		moe(x);
	} else if (c->swiglu) {
		linear(x, "gate", h, f, c->bias, x->sp);
		linear(x, "up", h, f, c->bias, 0); /* the same input as gate */
		/* x sigmoid(x): 4 flops forward, 6 backward; keeps its input */
		eltwise(x, "silu", f, (ew){ .elems = n, .fwd = 4, .bwd = 6, .fwd_tensors = 2, .bwd_tensors = 3,
					    .act = e * n, .split = true });
		/* silu(gate) * up: keeps both */
		eltwise(x, "mul", f, (ew){ .elems = n, .fwd = 1, .bwd = 2, .fwd_tensors = 3, .bwd_tensors = 5,
					   .act = 2 * e * n, .split = true });
		linear(x, "down", f, h, false, 1);
	} else {
		linear(x, "fc1", h, f, c->bias, x->sp);
		/* GELU (tanh approximation): 8 flops forward, 16 backward; keeps its input */
		eltwise(x, "gelu", f, (ew){ .elems = n, .fwd = 8, .bwd = 16, .fwd_tensors = 2, .bwd_tensors = 3,
					    .act = e * n, .split = true });
		linear(x, "fc2", f, h, false, 1);
	}
	residual(x, "mlp_add");
}

void lbs_build_transformer(lbs_net_builder *b, const lbs_tf_config *c)
{
	lbs_net *net = b->net;
	tf_ctx x = { .b = b, .c = c, .s = net->opts.seq_len, .t = net->opts.tp, .e = net->elt_bytes,
		     .ep = net->opts.ep > 1 ? net->opts.ep : 1 };
	x.sp = net->opts.seq_par && x.t > 1 ? x.t : 1;
	x.ks = (int64_t)c->top_k * x.s;
	/* padded: each of the E experts takes its capacity, ceil(C k s / E)
	 * tokens (Megatron-Core's get_capacity), the empty rows computed too */
	if (c->experts && net->opts.expert_pad >= 1)
		x.ks = c->experts * (int64_t)ceil(net->opts.expert_pad * (double)x.ks / c->experts);
	int h = c->hidden;
	int64_t s = x.s, v = ceil_div(c->vocab, x.t); /* Megatron pads the vocabulary to t rows */
	double n = (double)(s * h), ns = n / x.sp; /* ns: what sequence parallelism leaves a rank */
	/* the token embedding, split by vocabulary rows: a gather forward
	 * (read and write s h), a scatter-add of the gradient backward, each
	 * rank for the tokens of its rows (1 / t of them, on average); keeps
	 * the token ids (int64) */
	lbs_layer *l = op(&x, "embed", LBS_LAYER_EMBED, 1, true);
	if (l) {
		l->params = v * h;
		l->fwd_bytes = 2 * x.e * n / x.t;
		l->bwd_flops = n / x.t;
		l->bwd_bytes = 3 * x.e * n / x.t;
		l->act_bytes = 8 * s;
		l->act_per_sample = 0;
		l->input_grad = false;
		done(&x, l, h);
	}
	net->embedding_params = v * h;
	if (c->learned_positions) {
		eltwise(&x, "positions", h, (ew){ .elems = ns, .fwd = 1, .bwd = 1, .fwd_tensors = 3,
						  .bwd_tensors = 2, .params = c->max_seq * h });
		net->embedding_params += c->max_seq * h;
	}
	if (c->dropout)
		eltwise(&x, "embed_dropout", h, (ew){ .elems = ns, .fwd = 2, .bwd = 1, .fwd_tensors = 2,
						      .bwd_tensors = 2, .masks = 1, .act = ns });
	for (int i = 0; i < c->layers; i++) {
		x.block = i + 1;
		size_t first = net->n_layers;
		int64_t before = net->act_bytes + net->core_bytes;
		block(&x);
		if (i == 0 && net->n_layers > first) {
			net->block_input_bytes = (int64_t)(x.e * n);
			net->block_bytes = net->act_bytes + net->core_bytes - before;
		}
	}
	x.block = 0;
	net->n_blocks = c->layers;
	norm(&x, "final_norm");
	/* the logits, split by vocabulary columns; tied: the embedding's matrix */
	linear(&x, "logits", h, (int)v, false, x.sp);
	if (c->tied && net->n_layers) {
		l = &net->layers[net->n_layers - 1];
		net->params -= l->params;
		l->params = 0;
	}
	/* softmax cross-entropy over the vocabulary (Megatron's vocab-parallel
	 * loss): keeps the fp32 probabilities, 4 s v bytes (Korthikanti et al.,
	 * sec. 4.3) */
	double logits = (double)(s * v);
	eltwise(&x, "loss", (int)v, (ew){ .elems = logits, .fwd = 4, .bwd = 2, .fwd_tensors = 1 + 4 / x.e,
					  .bwd_tensors = 1 + 4 / x.e, .act = 4 * logits, .split = true });
}

lbs_status lbs_tf_check(const lbs_tf_config *c, const char *name, const lbs_net_opts *o, lbs_error *err)
{
	int t = o->tp;
	if (o->seq_len < 1 || o->seq_len > c->max_seq)
		return lbs_error_set(err, LBS_EINPUT, "%s: a sequence of %lld tokens: expected 1 to %lld, its "
				     "context length", name, (long long)o->seq_len, (long long)c->max_seq);
	if (o->expert_pad != 0 && (!c->experts || !(o->expert_pad >= 1) ||
				   o->expert_pad * c->top_k * (double)o->seq_len > INT_MAX / 2))
		return lbs_error_set(err, LBS_EINPUT, "%s: experts' inputs padded to a capacity factor of %g: "
				     "expected a mixture of experts and a factor of at least 1 that keeps a "
				     "sample's routed tokens under %d", name, o->expert_pad, INT_MAX / 2);
	if (o->ep > 1 && (!c->experts || c->experts % o->ep))
		return lbs_error_set(err, LBS_EINPUT, "%s: expert parallelism of degree %d needs a mixture of experts "
				     "whose %d experts it divides", name, o->ep, c->experts);
	if (c->heads % t || c->kv_heads % t || c->ffn % t)
		return lbs_error_set(err, LBS_EINPUT, "%s: tensor parallelism of degree %d must divide its %d "
				     "heads, %d key/value heads and FFN size %d", name, t, c->heads, c->kv_heads,
				     c->ffn);
	return LBS_OK;
}
