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
} lbs_layer_kind;

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
	lbs_layer *layers;
	size_t n_layers, cap;
	int in_c, in_h, in_w;    /* the input sample */
	int64_t params;          /* sum over layers */
	int64_t act_per_sample;  /* the input plus every layer's kept activations */
} lbs_net;

/* Builds network `name` (see lbs_net_names). LBS_EINPUT if no such network. */
lbs_status lbs_net_create(lbs_net *net, const char *name, lbs_error *err);
void lbs_net_destroy(lbs_net *net);

/* The registered names, comma-separated, into buf. */
void lbs_net_names(char *buf, size_t len);
/* The i-th registered name, or NULL past the end. */
const char *lbs_net_name_at(size_t i);

/* The GEMMs of layer l for `batch` samples, by pass (LBS_GEMM_*); a pass
 * the layer does not run has count 0. Returns the number of GEMM passes. */
size_t lbs_layer_gemms(const lbs_layer *l, int64_t batch, lbs_gemm out[LBS_GEMM_PASSES]);

/* Floating-point operations (2 m n k count) of one training iteration of
 * `batch` samples, over every layer's GEMMs. */
double lbs_net_flops(const lbs_net *net, int64_t batch);

/* Bytes of the model state a worker holds whatever its batch: fp32 weights,
 * gradients and one momentum buffer (3 x 4 bytes per parameter). */
double lbs_net_state_bytes(const lbs_net *net);

/* The memory cap: the largest batch whose fp32 activations fit in
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
/* conv (no bias) + batch norm + ReLU (in place): the "BasicConv2d" of
 * Inception and the conv-BN pairs of ResNet. */
void lbs_nb_conv_bn(lbs_net_builder *b, const char *name, int out_c, int kh, int kw, int stride,
		    int pad_h, int pad_w);

#endif
