/* SPDX-License-Identifier: GPL-3.0-or-later */
/* GPUs from their datasheets (models/gpu.h, doc/gpus.md). */
#include <math.h>
#include <string.h>

#include "models/gpu.h"

#define T 1e12
#define GB 1e9

/* Peak dense figures: where a datasheet gives "with sparsity" only, half of
 * it (NVIDIA's footnote: "with sparsity", the dense rate being half). */
static const lbs_gpu_spec gpus[] = {
	{ "a100-40gb", "NVIDIA A100 SXM4 40GB", 312 * T, 19.5 * T, 1555 * GB, 40 * GB,
	  "NVIDIA A100 Tensor Core GPU datasheet (2021): BF16 312 TFLOPS, FP32 19.5, 40GB HBM2 1,555 GB/s" },
	{ "a100-80gb", "NVIDIA A100 SXM4 80GB", 312 * T, 19.5 * T, 2039 * GB, 80 * GB,
	  "NVIDIA A100 Tensor Core GPU datasheet (2021): BF16 312 TFLOPS, FP32 19.5, 80GB HBM2e 2,039 GB/s" },
	{ "h100-sxm", "NVIDIA H100 SXM5 80GB", 989.5 * T, 67 * T, 3350 * GB, 80 * GB,
	  "NVIDIA H100 Tensor Core GPU datasheet: BF16 1,979 TFLOPS with sparsity, FP32 67, 80GB 3.35 TB/s" },
	{ "h100-pcie", "NVIDIA H100 PCIe 80GB", 756.5 * T, 51 * T, 2000 * GB, 80 * GB,
	  "NVIDIA H100 Tensor Core GPU datasheet: BF16 1,513 TFLOPS with sparsity, FP32 51, 80GB 2 TB/s" },
	{ "h200", "NVIDIA H200 SXM 141GB", 989.5 * T, 67 * T, 4800 * GB, 141 * GB,
	  "NVIDIA H200 Tensor Core GPU datasheet: BF16 1,979 TFLOPS with sparsity, FP32 67, 141GB HBM3e 4.8 TB/s" },
	{ "l4", "NVIDIA L4 24GB", 121 * T, 30.3 * T, 300 * GB, 24 * GB,
	  "NVIDIA L4 Tensor Core GPU datasheet: BF16 242 TFLOPS with sparsity, FP32 30.3, 24GB GDDR6 300 GB/s" },
	{ "a10g", "NVIDIA A10G 24GB (AWS G5)", 70 * T, 35 * T, 600 * GB, 24 * GB,
	  "no datasheet (an AWS part): Baseten, NVIDIA A10 vs A10G for ML model inference (2023): BF16 70 "
	  "TFLOPS, FP32 35, 24GB GDDR6 600 GB/s" },
	{ "v100", "NVIDIA V100 SXM2 16GB", 125 * T, 15.7 * T, 900 * GB, 16 * GB,
	  "NVIDIA Tesla V100 datasheet: Tensor (FP16) 125 TFLOPS, FP32 15.7, 16GB HBM2 900 GB/s" },
	{ "t4", "NVIDIA T4 16GB", 65 * T, 8.1 * T, 320 * GB, 16 * GB,
	  "NVIDIA T4 datasheet: mixed-precision (FP16/FP32) 65 TFLOPS, FP32 8.1, 16GB GDDR6 320 GB/s" },
	{ "p100", "NVIDIA P100 SXM2 16GB", 21.2 * T, 10.6 * T, 732 * GB, 16 * GB,
	  "NVIDIA Tesla P100 datasheet: FP16 21.2 TFLOPS (no tensor cores), FP32 10.6, 16GB HBM2 732 GB/s" },
	{ "k80", "NVIDIA K80 (one GK210 of the board)", 4.37 * T, 4.37 * T, 240 * GB, 12 * GB,
	  "NVIDIA Tesla K80 datasheet: 8.73 TFLOPS FP32, 480 GB/s, 24GB per board of two GPUs (halved); no FP16 rate" },
};

#define N_GPUS (sizeof gpus / sizeof gpus[0])

const lbs_gpu_spec *lbs_gpu_at(size_t i)
{
	return i < N_GPUS ? &gpus[i] : NULL;
}

const lbs_gpu_spec *lbs_gpu_find(const char *name)
{
	for (size_t i = 0; i < N_GPUS; i++)
		if (!strcmp(gpus[i].name, name))
			return &gpus[i];
	return NULL;
}

static double gemm_time(double peak, const lbs_gpu_eff *e, double bw, const lbs_gemm *g, double elt)
{
	if (!g->count)
		return 0;
	double f = 2.0 * (double)g->m * (double)g->n * (double)g->k * (double)g->count;
	double bytes = elt * (double)g->count *
		       ((double)g->m * (double)g->k + (double)g->k * (double)g->n + (double)g->m * (double)g->n);
	/* f_half is a time: a device of higher peak needs more work to fill */
	double eff = e->eff_max * f / (f + e->f_half * peak);
	double tc = f / (peak * eff), tm = bytes / (bw * e->mem);
	return (tc > tm ? tc : tm) + e->overhead;
}

double lbs_gpu_layer_time(const lbs_gpu_spec *d, const lbs_gpu_eff *e, const lbs_net *net,
			  const lbs_layer *l, int64_t batch, bool fused_attention)
{
	double peak = net->elt_bytes == 4 ? d->fp32_flops : d->tensor_flops;
	double bw = d->bandwidth, elt = net->elt_bytes;
	lbs_gemm g[LBS_GEMM_PASSES];
	double t = 0;
	bool recomputed = lbs_layer_recomputed(net, l);
	if (l->kind != LBS_LAYER_SPARSE && lbs_layer_gemms(l, batch, g)) {
		for (int p = 0; p < LBS_GEMM_PASSES; p++)
			t += gemm_time(peak, e, bw, &g[p], elt);
		if (recomputed)
			t += gemm_time(peak, e, bw, &g[LBS_GEMM_FORWARD], elt);
		/* fused causal attention skips the masked half of the score blocks */
		if (fused_attention && (l->kind == LBS_LAYER_SCORES || l->kind == LBS_LAYER_CONTEXT))
			t *= 0.5;
		return t; /* a bias is added in the GEMM's epilogue */
	}
	lbs_op_cost c[LBS_PASSES];
	lbs_layer_cost(net, l, batch, c);
	/* fused attention keeps the softmax and its dropout in on-chip memory */
	if (fused_attention && l->core_bytes > 0)
		return 0;
	for (int p = 0; p < LBS_PASSES; p++)
		if (c[p].bytes > 0 || c[p].flops > 0) {
			double tm = c[p].bytes / (bw * e->mem), tc = c[p].flops / (d->fp32_flops * e->mem);
			t += (tm > tc ? tm : tc) + e->overhead;
		}
	return t;
}

void lbs_gpu_layer_pass_times(const lbs_gpu_spec *d, const lbs_gpu_eff *e, const lbs_net *net, const lbs_layer *l,
			      int64_t batch, bool fused_attention, double out[LBS_PASSES])
{
	double peak = net->elt_bytes == 4 ? d->fp32_flops : d->tensor_flops;
	double bw = d->bandwidth, elt = net->elt_bytes;
	lbs_gemm g[LBS_GEMM_PASSES];
	out[LBS_PASS_FORWARD] = out[LBS_PASS_BACKWARD] = out[LBS_PASS_RECOMPUTE] = 0;
	if (l->kind != LBS_LAYER_SPARSE && lbs_layer_gemms(l, batch, g)) {
		double half = fused_attention && (l->kind == LBS_LAYER_SCORES || l->kind == LBS_LAYER_CONTEXT) ? 0.5 : 1;
		out[LBS_PASS_FORWARD] = half * gemm_time(peak, e, bw, &g[LBS_GEMM_FORWARD], elt);
		out[LBS_PASS_BACKWARD] = half * (gemm_time(peak, e, bw, &g[LBS_GEMM_BACKWARD_DATA], elt) +
						 gemm_time(peak, e, bw, &g[LBS_GEMM_BACKWARD_WEIGHT], elt));
		if (lbs_layer_recomputed(net, l))
			out[LBS_PASS_RECOMPUTE] = out[LBS_PASS_FORWARD];
		return;
	}
	if (fused_attention && l->core_bytes > 0)
		return;
	lbs_op_cost c[LBS_PASSES];
	lbs_layer_cost(net, l, batch, c);
	for (int p = 0; p < LBS_PASSES; p++)
		if (c[p].bytes > 0 || c[p].flops > 0) {
			double tm = c[p].bytes / (bw * e->mem), tc = c[p].flops / (d->fp32_flops * e->mem);
			out[p] = (tm > tc ? tm : tc) + e->overhead;
		}
}

double lbs_gpu_iteration_time(const lbs_gpu_spec *d, const lbs_gpu_eff *e, const lbs_net *net,
			      int64_t batch, bool fused_attention)
{
	double t = 0;
	for (size_t i = 0; i < net->n_layers; i++)
		t += lbs_gpu_layer_time(d, e, net, &net->layers[i], batch, fused_attention);
	return t;
}

/* One call per product: a CPU BLAS runs a batch of them one after another. */
static double calls_time(double peak, const lbs_gpu_eff *e, double bw, const lbs_gemm *g, double elt)
{
	lbs_gemm one = *g;
	one.count = 1;
	return (double)g->count * gemm_time(peak, e, bw, &one, elt);
}

double lbs_gpu_gemm_calls_time(const lbs_gpu_spec *d, const lbs_gpu_eff *e, const lbs_net *net, int64_t batch)
{
	double peak = net->elt_bytes == 4 ? d->fp32_flops : d->tensor_flops, t = 0;
	lbs_gemm g[LBS_GEMM_PASSES];
	for (size_t i = 0; i < net->n_layers; i++) {
		const lbs_layer *l = &net->layers[i];
		if (l->kind == LBS_LAYER_SPARSE || !lbs_layer_gemms(l, batch, g))
			continue;
		for (int p = 0; p < LBS_GEMM_PASSES; p++)
			if (g[p].count)
				t += calls_time(peak, e, d->bandwidth, &g[p], net->elt_bytes);
		if (lbs_layer_recomputed(net, l))
			t += calls_time(peak, e, d->bandwidth, &g[LBS_GEMM_FORWARD], net->elt_bytes);
	}
	return t;
}
