/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The interface of the CUDA module, lbsim-cuda.so (models/calib/cuda.cu):
 * plain C, no lbsim symbols, so the module needs nothing from the program
 * and the program loads cuBLAS only when it measures a GPU (dlopen, in
 * models/calib/cuda.c). */
#ifndef LBS_CUDA_MODULE_H
#define LBS_CUDA_MODULE_H

#include <stddef.h>

#define LBS_CUDA_MODULE_ABI 2

enum {
	LBS_CUDA_GEMM,           /* C (m x n) = op(A) op(B); pass says which transposes */
	LBS_CUDA_SPARSE_FORWARD, /* gather the nonzeros' weight rows, one GEMM per sample */
	LBS_CUDA_SPARSE_BACKWARD /* one GEMM per sample, scattered into the weight gradient */
};

typedef struct lbs_cuda_op {
	int kind;
	int pass;                   /* LBS_GEMM_FORWARD, _BACKWARD_DATA or _BACKWARD_WEIGHT */
	long long m, n, k;
	long long batch, features, nnz, out; /* sparse */
	long long count;            /* GEMM: products of this shape on consecutive matrices (>= 1) */
} lbs_cuda_op;

/* Elements of each buffer the ops need. */
typedef struct lbs_cuda_sizes {
	double a, b, c, weights, gathered, indices;
} lbs_cuda_sizes;

typedef struct lbs_cuda_gpu {
	char name[128];
	double memory_bytes;
	char versions[128];
} lbs_cuda_gpu;

/* Each returns 0, or 1 with a message in err[0..errlen): 1 = no usable
 * GPU or a CUDA failure, 2 = the buffers do not fit. */
typedef int (*lbs_cuda_abi_fn)(void);
typedef int (*lbs_cuda_info_fn)(int device, lbs_cuda_gpu *info, char *err, size_t errlen);
typedef int (*lbs_cuda_bench_fn)(int device, const lbs_cuda_op *ops, size_t n_ops,
				 const lbs_cuda_sizes *sizes, int warmup, int reps, double *times_s,
				 char *err, size_t errlen);

#endif
