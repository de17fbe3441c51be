/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Model descriptions: the layers of the networks whose training lbsim
 * simulates, as the matrix products a calibration runs (doc/nets.md).
 *
 * A network is built layer by layer from its architecture definition (the
 * builders in models/nets/ follow the cited papers and reference
 * implementations), so parameter counts, GEMM shapes and activation sizes
 * all come from one place. A convolution is a GEMM through im2col:
 * M = out channels, N = out H * out W * batch, K = in channels * kh * kw.
 * Its backward pass is two GEMMs: the input gradient (M = K, N = N, K = M;
 * skipped for the first layer, whose input needs none) and the weight
 * gradient (M = M, N = K, K = N). Adding a network = one builder plus one
 * line in models/nets/registry.c. */
#ifndef LBS_NETS_H
#define LBS_NETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/error.h"

typedef enum lbs_layer_kind {
	LBS_LAYER_CONV,   /* convolution: one GEMM through im2col */
	LBS_LAYER_FC,     /* fully connected: one GEMM */
	LBS_LAYER_SPARSE, /* linear over a sparse input: per-sample GEMMs on gathered weights */
	LBS_LAYER_NORM,   /* batch normalisation: parameters and activations, no GEMM */
	LBS_LAYER_POOL,   /* max or average pooling: activations only */
	LBS_LAYER_ACT,    /* activations only: concatenation, residual addition, LRN */
	/* transformers (models/nets/transformer.c, doc/transformers.md): */
	LBS_LAYER_LINEAR,  /* a linear layer on every token: M = out, N = tokens * batch, K = in */
	LBS_LAYER_SCORES,  /* attention scores Q K^T per head: M = N = tokens, K = head_dim */
	LBS_LAYER_CONTEXT, /* attention context P V per head: M = tokens, N = head_dim, K = tokens */
	LBS_LAYER_EMBED,   /* an embedding lookup: parameters, no GEMM */
	LBS_LAYER_ELTWISE, /* element-wise or row-wise work: norms, softmax, activations, dropout, loss */
} lbs_layer_kind;

/* Numeric formats of a transformer's training (doc/transformers.md). */
typedef enum lbs_precision { LBS_PREC_FP32, LBS_PREC_BF16, LBS_PREC_FP16 } lbs_precision;
#define LBS_PRECISION_CHOICES "fp32|bf16|fp16"
/* Activation recomputation (Korthikanti et al. 2022): none; selective, the
 * attention core (scores, softmax, dropout, context) recomputed in the
 * backward pass, as flash attention also does; full, every transformer
 * block run forward again from its input. */
typedef enum lbs_recompute { LBS_RECOMPUTE_NONE, LBS_RECOMPUTE_SELECTIVE, LBS_RECOMPUTE_FULL } lbs_recompute;
#define LBS_RECOMPUTE_CHOICES "none|selective|full"
typedef enum lbs_optimizer { LBS_OPT_DEFAULT, LBS_OPT_SGD, LBS_OPT_ADAM } lbs_optimizer;
#define LBS_OPTIMIZER_CHOICES "default|sgd|adam"

/* How a network is built and trained; zero: each field's default. */
typedef struct lbs_net_opts {
	int64_t seq_len;   /* transformer: tokens per sample (0: the preset's) */
	int tp;            /* transformer: tensor-parallel degree (0, 1: none) */
	int precision;     /* lbs_precision + 1; 0: the net's (fp32 for CNNs; the preset's) */
	int recompute;     /* lbs_recompute */
	int optimizer;     /* lbs_optimizer; default: SGD with momentum for CNNs, Adam for transformers */
	int zero_stage;    /* ZeRO stage 0-3: what the data-parallel ranks partition */
	int64_t dp;        /* data-parallel ranks sharing ZeRO's partitions (0, 1: none) */
	bool seq_par;      /* transformer, tp > 1: sequence parallelism (Korthikanti et al. 2022): the
			      norms, dropouts and residual additions on s / tp tokens a rank, and
			      the inputs of the linears after a norm kept sharded */
	int ep;            /* mixture of experts: expert-parallel degree, the ranks its experts are
			      spread over (E / ep a rank; 0, 1: every expert on every rank); must
			      divide the experts, and dp, whose ranks it is formed of */
	bool fused_attention; /* transformer: the attention core fused (FlashAttention), which keeps
				 no s x s scores, softmax or dropout mask: lbs_net_memory counts no
				 core bytes, as under selective recomputation */
	double expert_pad; /* mixture of experts: every expert's input padded to this capacity factor
			      C (Megatron-Core's moe_pad_expert_input_to_capacity): the experts' layers,
			      the dispatch and the combine work on E ceil(C k s / E) tokens of a
			      sample instead of k s, whatever the routing; 0: not padded, else >= 1 */
} lbs_net_opts;

typedef struct lbs_layer {
	char name[48];
	lbs_layer_kind kind;
	int in_c, in_h, in_w;      /* input tensor, per sample */
	int out_c, out_h, out_w;   /* output tensor, per sample */
	int kh, kw, stride;        /* convolution and pooling window */
	int64_t features, nnz;     /* sparse: input width, nonzeros per sample */
	int64_t params;            /* trainable parameters (weights and biases) */
	int64_t act_per_sample;    /* elements kept for the backward pass, per sample */
	bool input_grad;           /* the backward pass computes the input's gradient */
	/* transformers: */
	int tokens;                /* tokens per sample (the sequence length) */
	int heads, head_dim;       /* attention: query heads on this rank, elements per head */
	int block;                 /* transformer block, from 1; 0: outside the blocks */
	bool split;                /* divided among tensor-parallel ranks (else replicated) */
	bool expert;               /* a layer of the rank's experts: it works on the tokens routed to
				      them, and its weights (E / ep experts') are reduced over the
				      dp / ep ranks that hold the same experts */
	int64_t act_bytes;         /* bytes kept for the backward pass, per sample (none or selective) */
	int64_t core_bytes;        /* more bytes kept without recomputation only (the attention core) */
	/* element-wise work per sample (GEMM layers: from their GEMMs) */
	double fwd_flops, fwd_bytes, bwd_flops, bwd_bytes;
} lbs_layer;

/* One matrix product C (m x n) = A (m x k) * B (k x n), `count` times
 * (count > 1: a sparse layer's per-sample products). */
typedef struct lbs_gemm {
	int64_t m, n, k, count;
} lbs_gemm;

enum { LBS_GEMM_FORWARD, LBS_GEMM_BACKWARD_DATA, LBS_GEMM_BACKWARD_WEIGHT, LBS_GEMM_PASSES };

typedef struct lbs_net {
	const char *name;        /* registry name, e.g. "resnet50" */
	const char *title;       /* e.g. "ResNet-50 (ImageNet, 224x224)" */
	const char *source;      /* the architecture's citation */
	int64_t published_params; /* the count the source or its reference code gives */
	int published_digits;    /* its significant digits when the source rounds it; 0: exact */
	lbs_layer *layers;
	size_t n_layers, cap;
	int in_c, in_h, in_w;    /* the input sample */
	int64_t params;          /* sum over layers */
	int64_t act_per_sample;  /* the input plus every layer's kept activations */
	lbs_net_opts opts;       /* as built, every default resolved */
	int elt_bytes;           /* bytes of an activation element: 4 (fp32), 2 (bf16, fp16) */
	int64_t act_bytes;       /* sum of the layers' act_bytes (and the input's) */
	int64_t core_bytes;      /* sum of the layers' core_bytes */
	/* transformers (0 for the others): */
	int n_blocks;
	int64_t block_input_bytes; /* a block's input, per sample: what full recomputation keeps */
	int64_t block_bytes;       /* one block's act_bytes + core_bytes, per sample */
	int64_t embedding_params;  /* token and position embeddings (not in the 6N of FLOPs) */
	int64_t expert_params;     /* the rank's experts' (layers with .expert), within params */
	const struct lbs_tf_config *tf; /* the architecture */
} lbs_net;

/* A decoder-only transformer (GPT, Llama): doc/transformers.md. */
typedef struct lbs_tf_config {
	int layers, hidden, heads, kv_heads, head_dim, ffn;
	bool swiglu;         /* SwiGLU's three matrices (gate, up, down); else GELU's two */
	bool rmsnorm;        /* RMSNorm (scale only); else LayerNorm (scale and shift) */
	bool bias;           /* linear layers have biases (GPT) */
	bool dropout;        /* dropout after the embedding, the attention probabilities, the blocks */
	bool learned_positions; /* a position embedding of max_seq rows (GPT); else rotary, no parameters */
	bool tied;           /* the logits reuse the token embedding */
	int64_t vocab, max_seq, seq_len; /* vocabulary, context length, default sequence length */
	int precision;       /* lbs_precision the preset trains in */
	int experts, top_k;  /* mixture of experts: each block's FFN is `experts` FFNs of size ffn, a
				token routed to top_k of them (0: a dense FFN) */
} lbs_tf_config;

/* Builds network `name` (see lbs_net_names). LBS_EINPUT if no such network. */
lbs_status lbs_net_create(lbs_net *net, const char *name, lbs_error *err);
/* The same with options (NULL: the defaults); LBS_EINPUT for options the
 * network cannot take (a tensor-parallel degree that does not divide its
 * heads, a sequence longer than its positions). */
lbs_status lbs_net_create_opts(lbs_net *net, const char *name, const lbs_net_opts *opts, lbs_error *err);
/* A transformer of configuration c that is no preset, named `name` (a
 * string that outlives the net). */
lbs_status lbs_net_create_config(lbs_net *net, const char *name, const lbs_tf_config *c, const lbs_net_opts *opts,
				 lbs_error *err);
/* Whether `name` is a transformer preset. */
bool lbs_net_is_transformer(const char *name);
/* The configuration of transformer preset `name`, or NULL. */
const lbs_tf_config *lbs_net_tf_config(const char *name);
void lbs_net_destroy(lbs_net *net);

/* The registered names, comma-separated, into buf. */
void lbs_net_names(char *buf, size_t len);
/* The i-th registered name, or NULL past the end. */
const char *lbs_net_name_at(size_t i);

/* The GEMMs of layer l for `batch` samples, by pass (LBS_GEMM_*); a pass
 * the layer does not run has count 0. Returns the number of GEMM passes. */
size_t lbs_layer_gemms(const lbs_layer *l, int64_t batch, lbs_gemm out[LBS_GEMM_PASSES]);

/* Floating-point operations (2 m n k count) of one training iteration of
 * `batch` samples, over every layer's GEMMs, with the forward GEMMs the
 * network's recomputation runs again. */
double lbs_net_flops(const lbs_net *net, int64_t batch);

/* Whether layer l runs its forward pass again in the backward pass under
 * the network's recomputation. */
bool lbs_layer_recomputed(const lbs_net *net, const lbs_layer *l);

/* Walking the layers backward, layer i enters its transformer block from
 * above when it is the block's last layer: then the index of the block's
 * first layer (where the recomputed forward starts), else SIZE_MAX. */
size_t lbs_net_block_entry(const lbs_net *net, size_t i);

/* The work of one layer for `batch` samples, by pass: forward, backward
 * (both gradients), and the forward again when recomputed (else 0). */
typedef struct lbs_op_cost {
	double flops, bytes;
} lbs_op_cost;
enum { LBS_PASS_FORWARD, LBS_PASS_BACKWARD, LBS_PASS_RECOMPUTE, LBS_PASSES };
void lbs_layer_cost(const lbs_net *net, const lbs_layer *l, int64_t batch, lbs_op_cost out[LBS_PASSES]);
/* Sum over the layers and passes: every operation of an iteration. */
lbs_op_cost lbs_net_cost(const lbs_net *net, int64_t batch);

/* The memory of one rank training with a micro-batch of `batch` samples
 * (doc/transformers.md, "Memory"): weights, gradients and optimizer states
 * by precision and optimizer, partitioned by ZeRO's stage over opts.dp
 * ranks; the activations kept for the backward pass under the
 * recomputation. */
typedef struct lbs_mem {
	double weights, grads, optimizer, activations, total;
} lbs_mem;
void lbs_net_memory(const lbs_net *net, int64_t batch, lbs_mem *m);

/* Bytes of the model state a worker holds whatever its batch (CNNs: fp32
 * weights, gradients and one momentum buffer, 3 x 4 bytes per parameter). */
double lbs_net_state_bytes(const lbs_net *net);

/* The memory cap: the largest batch whose activations fit in
 * `memory_bytes` beside the model state (0 if not even one). */
int64_t lbs_net_max_batch(const lbs_net *net, double memory_bytes);

/* Writes the layer table (CSV: layer, kind, shapes, parameters, activations,
 * and the GEMMs for `batch`) to out. */
void lbs_net_write_layers(const lbs_net *net, int64_t batch, FILE *out);

/* ---- building (for the builders in models/nets/) ---------------------- */

/* The tensor a builder is at: channels x height x width, per sample. */
typedef struct lbs_shape {
	int c, h, w;
} lbs_shape;

typedef struct lbs_net_builder {
	lbs_net *net;
	lbs_shape at;      /* the current tensor */
	bool first;        /* the next GEMM layer reads the network input */
	lbs_error *err;
	bool failed;
} lbs_net_builder;

/* Each appends one layer reading b->at and moves b->at to its output.
 * Output size: floor((in + 2 pad - k) / stride) + 1. */
void lbs_nb_conv(lbs_net_builder *b, const char *name, int out_c, int kh, int kw, int stride,
		 int pad_h, int pad_w, bool bias);
void lbs_nb_norm(lbs_net_builder *b, const char *name);
void lbs_nb_pool(lbs_net_builder *b, const char *name, int k, int stride, int pad);
void lbs_nb_global_pool(lbs_net_builder *b, const char *name);
void lbs_nb_fc(lbs_net_builder *b, const char *name, int out, bool bias);
void lbs_nb_sparse(lbs_net_builder *b, const char *name, int64_t features, int64_t nnz, int out,
		   bool bias);
/* A layer without parameters or GEMM with output `out`: a concatenation or
 * an LRN (kept = true: a new tensor the backward pass needs), or a residual
 * addition done in place on its input (kept = false: nothing new). */
void lbs_nb_act(lbs_net_builder *b, const char *name, lbs_shape out, bool kept);
/* A layer of any kind reading b->at, filled in by the caller, then
 * finished: b->at moves to `out` and the net's totals add it up (the
 * transformer builder). */
lbs_layer *lbs_nb_append(lbs_net_builder *b, const char *name, lbs_layer_kind kind);
void lbs_nb_finish(lbs_net_builder *b, lbs_layer *l, lbs_shape out);
/* conv (no bias) + batch norm + ReLU (in place): the "BasicConv2d" of
 * Inception and the conv-BN pairs of ResNet. */
void lbs_nb_conv_bn(lbs_net_builder *b, const char *name, int out_c, int kh, int kw, int stride,
		    int pad_h, int pad_w);

#endif
