/* SPDX-License-Identifier: GPL-3.0-or-later */
/* GPUs without a measurement: an operation's time from the device's
 * datasheet figures and an achieved-efficiency curve (doc/gpus.md).
 *
 * For an operation of F FLOPs moving D bytes, on a device of peak P FLOP/s
 * (dense 16-bit tensor math; fp32 for an fp32 network) and bandwidth W:
 *
 *   GEMM (a batch of `count` products of 2 m n k):
 *     t = max(F / (P eff(f)), D / (W mem)) + overhead,
 *     eff(f) = eff_max f / (f + t_half P), f = F the FLOPs of the call
 *     (t_half: the time of work that reaches half of eff_max, so a
 *     faster device needs more work to fill);
 *   element-wise, norms, softmax, embedding, loss:
 *     t = D / (W mem) + overhead;
 *
 * so small GEMMs run far from peak, large ones approach eff_max, and the
 * memory-bound operations run at a fraction of the bandwidth. With fused
 * attention (flash attention) the attention core's element-wise bytes
 * never reach memory and are not counted, and its causal mask skips half of
 * the score and context GEMMs' blocks. An iteration is the sum over the
 * operations (models/nets.h): forward, backward and recomputed. */
#ifndef LBS_GPU_H
#define LBS_GPU_H

#include <stdbool.h>
#include <stddef.h>

#include "models/nets.h"

/* A device's datasheet figures. */
typedef struct lbs_gpu_spec {
	const char *name;       /* e.g. "h100-sxm" */
	const char *title;      /* e.g. "NVIDIA H100 SXM5 80GB" */
	double tensor_flops;    /* peak dense 16-bit (bf16, else fp16) tensor FLOP/s */
	double fp32_flops;      /* peak fp32 FLOP/s (without TF32 tensor math) */
	double bandwidth;       /* memory bandwidth, bytes/s */
	double memory;          /* memory, bytes */
	const char *source;     /* the datasheet */
} lbs_gpu_spec;

/* The i-th device (NULL past the end); by name (NULL if none). */
const lbs_gpu_spec *lbs_gpu_at(size_t i);
const lbs_gpu_spec *lbs_gpu_find(const char *name);

/* The efficiency curve's parameters. */
typedef struct lbs_gpu_eff {
	double eff_max;   /* the fraction of peak a large GEMM reaches, (0, 1] */
	double f_half;    /* t_half: seconds of peak work of a GEMM call that reaches half of eff_max */
	double mem;       /* the fraction of the bandwidth memory-bound operations reach, (0, 1] */
	double overhead;  /* seconds per operation (a kernel's launch and tail) */
} lbs_gpu_eff;

#define LBS_GPU_EFF_PARAMS 4

/* Seconds of operation l of net for `batch` samples, all passes. */
double lbs_gpu_layer_time(const lbs_gpu_spec *d, const lbs_gpu_eff *e, const lbs_net *net,
			  const lbs_layer *l, int64_t batch, bool fused_attention);
/* The same split by pass (LBS_PASS_FORWARD, _BACKWARD, _RECOMPUTE of
 * models/nets.h): what a pipeline stage runs in its forward and backward
 * computes. Their sum is lbs_gpu_layer_time's up to rounding. */
void lbs_gpu_layer_pass_times(const lbs_gpu_spec *d, const lbs_gpu_eff *e, const lbs_net *net, const lbs_layer *l,
			      int64_t batch, bool fused_attention, double out[LBS_PASSES]);
/* Seconds of one training iteration of `batch` samples. */
double lbs_gpu_iteration_time(const lbs_gpu_spec *d, const lbs_gpu_eff *e, const lbs_net *net,
			      int64_t batch, bool fused_attention);
/* Seconds of the training GEMMs alone, as `lbsim calibrate --blas` runs
 * them (models/calib/blas.c): per layer forward, input gradient (where
 * there is one), weight gradient and the recomputed forward, each product
 * of a batch (attention's heads) its own call paying `overhead`, no fused
 * attention. On a CPU this is what the microbenchmark times. */
double lbs_gpu_gemm_calls_time(const lbs_gpu_spec *d, const lbs_gpu_eff *e, const lbs_net *net, int64_t batch);

#endif
