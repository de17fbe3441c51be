/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The GPU microbenchmark, built as the module lbsim-cuda.so when configure
 * finds nvcc: the training GEMMs of an iteration (the list models/calib/
 * cuda.c makes from a network, the same iteration as models/calib/blas.c)
 * through cuBLAS, timed with CUDA events. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "models/calib/cuda_module.h"
}

/* The passes, as models/nets.h numbers them. */
enum { FORWARD, BACKWARD_DATA, BACKWARD_WEIGHT };

namespace {

int fail(char *err, size_t len, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return code;
}

/* Row-major C (m x n) = op(A) op(B) on column-major cuBLAS: C^T = op(B)^T op(A)^T;
 * count of them on consecutive matrices (attention's heads). */
cublasStatus_t gemm(cublasHandle_t h, const lbs_cuda_op *g, const float *a, const float *b, float *c)
{
	const float one = 1.0f, zero = 0.0f;
	int m = (int)g->m, n = (int)g->n, k = (int)g->k, count = g->count > 1 ? (int)g->count : 1;
	long long sa = g->m * g->k, sb = g->k * g->n, sc = g->m * g->n;
	switch (g->pass) {
	case FORWARD: /* Y (M x N) = W (M x K) X (K x N) */
		return cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, n, sb, a, k, sa,
						 &zero, c, n, sc, count);
	case BACKWARD_DATA: /* dX (K x N) = W^T dY, W stored M x K */
		return cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_T, n, m, k, &one, b, n, sb, a, m, sa,
						 &zero, c, n, sc, count);
	default: /* dW (M x K) = dY (M x N) X^T, X stored K x N */
		return cublasSgemmStridedBatched(h, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, b, k, sb, a, k, sa,
						 &zero, c, n, sc, count);
	}
}

__global__ void gather(const float *w, const unsigned *idx, long long rows, long long features, long long out,
		       float *g)
{
	long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
	if (i < rows * out)
		g[i] = w[(idx[i / out] % features) * out + i % out];
}

/* dG holds, per sample, an out x nnz column-major block. */
__global__ void scatter(const float *dg, const unsigned *idx, long long batch, long long nnz,
			long long features, long long out, float *dw)
{
	long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
	if (i < batch * nnz * out) {
		long long s = i / (nnz * out), rem = i % (nnz * out);
		long long j = rem / out, o = rem % out;
		atomicAdd(&dw[(idx[s * nnz + j] % features) * out + o], dg[i]);
	}
}

struct buffers {
	float *a, *b, *c, *w, *dw, *g, *dg, *x;
	unsigned *idx;
};

/* One training iteration. */
int iteration(cublasHandle_t h, const lbs_cuda_op *ops, size_t n, const buffers *m, char *err, size_t len)
{
	const float one = 1.0f, zero = 0.0f;
	for (size_t i = 0; i < n; i++) {
		const lbs_cuda_op *o = &ops[i];
		cublasStatus_t s;
		int out = (int)o->out, nnz = (int)o->nnz, batch = (int)o->batch;
		long long cells = o->batch * o->nnz * o->out;
		unsigned blocks = (unsigned)((cells + 255) / 256);
		switch (o->kind) {
		case LBS_CUDA_SPARSE_FORWARD:
			gather<<<blocks, 256>>>(m->w, m->idx, o->batch * o->nnz, o->features, o->out, m->g);
			/* y_s (out) = G_s (out x nnz, column-major) x_s */
			s = cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, out, 1, nnz, &one, m->g, out,
						      (long long)nnz * out, m->x, nnz, nnz, &zero, m->c, out, out,
						      batch);
			break;
		case LBS_CUDA_SPARSE_BACKWARD:
			/* dG_s (out x nnz) = dy_s x_s^T, then scattered into dW */
			s = cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_T, out, nnz, 1, &one, m->c, out, out,
						      m->x, nnz, nnz, &zero, m->dg, out, (long long)nnz * out, batch);
			if (s == CUBLAS_STATUS_SUCCESS)
				scatter<<<blocks, 256>>>(m->dg, m->idx, o->batch, o->nnz, o->features, o->out, m->dw);
			break;
		default:
			s = gemm(h, o, m->a, m->b, m->c);
			break;
		}
		if (s != CUBLAS_STATUS_SUCCESS)
			return fail(err, len, 1, "cuBLAS status %d in op %zu (m %lld, n %lld, k %lld)", (int)s, i,
				    o->m, o->n, o->k);
	}
	cudaError_t e = cudaGetLastError();
	return e == cudaSuccess ? 0 : fail(err, len, 1, "kernel launch: %s", cudaGetErrorString(e));
}

/* Values in [-1, 1] (or random bits), made on the host and copied over. */
cudaError_t fill(void *dev, size_t n, uint64_t *seed)
{
	float *host = (float *)malloc((n ? n : 1) * sizeof *host);
	if (!host)
		return cudaErrorMemoryAllocation;
	for (size_t i = 0; i < n; i++) {
		*seed ^= *seed << 13;
		*seed ^= *seed >> 7;
		*seed ^= *seed << 17;
		host[i] = (float)((double)(*seed >> 11) * (2.0 / 9007199254740992.0) - 1.0);
	}
	cudaError_t e = cudaMemcpy(dev, host, n * sizeof *host, cudaMemcpyHostToDevice);
	free(host);
	return e;
}

} // namespace

extern "C" int lbs_cuda_module_abi(void)
{
	return LBS_CUDA_MODULE_ABI;
}

extern "C" int lbs_cuda_module_info(int device, lbs_cuda_gpu *info, char *err, size_t len)
{
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);
	if (e != cudaSuccess)
		return fail(err, len, 1, "no usable GPU (cudaGetDeviceCount): %s", cudaGetErrorString(e));
	if (device >= n)
		return fail(err, len, 1, "no GPU %d (this machine has %d)", device, n);
	cudaDeviceProp prop;
	if ((e = cudaGetDeviceProperties(&prop, device)) != cudaSuccess)
		return fail(err, len, 1, "cudaGetDeviceProperties: %s", cudaGetErrorString(e));
	int runtime = 0, driver = 0, major = 0, minor = 0, patch = 0;
	cudaRuntimeGetVersion(&runtime);
	cudaDriverGetVersion(&driver);
	cublasGetProperty(MAJOR_VERSION, &major);
	cublasGetProperty(MINOR_VERSION, &minor);
	cublasGetProperty(PATCH_LEVEL, &patch);
	snprintf(info->name, sizeof info->name, "%.127s", prop.name);
	info->memory_bytes = (double)prop.totalGlobalMem;
	snprintf(info->versions, sizeof info->versions,
		 "CUDA runtime %d.%d, driver %d.%d, cuBLAS %d.%d.%d, compute capability %d.%d", runtime / 1000,
		 runtime % 1000 / 10, driver / 1000, driver % 1000 / 10, major, minor, patch, prop.major,
		 prop.minor);
	return 0;
}

extern "C" int lbs_cuda_module_bench(int device, const lbs_cuda_op *ops, size_t n_ops,
				     const lbs_cuda_sizes *z, int warmup, int reps, double *times_s, char *err,
				     size_t len)
{
	cudaError_t e = cudaSetDevice(device);
	if (e != cudaSuccess)
		return fail(err, len, 1, "cudaSetDevice(%d): %s", device, cudaGetErrorString(e));
	size_t free_b = 0, total_b = 0;
	cudaMemGetInfo(&free_b, &total_b);
	double need = 4.0 * (z->a + z->b + z->c + 2 * z->weights + 2 * z->gathered + 2 * z->indices);
	if (need > 0.9 * (double)free_b)
		return fail(err, len, 2, "the GEMM buffers need %.3g GB; the GPU has %.3g GB free", need / 1e9,
			    (double)free_b / 1e9);
	buffers m = {};
	cublasHandle_t h = NULL;
	cudaEvent_t start = NULL, stop = NULL;
	uint64_t seed = 0x9E3779B97F4A7C15u;
	int rc = 0;
	cublasStatus_t cs = cublasCreate(&h);
	if (cs != CUBLAS_STATUS_SUCCESS)
		return fail(err, len, 1, "cublasCreate: status %d", (int)cs);
	e = cudaMalloc(&m.a, (size_t)fmax(z->a, 1) * sizeof(float));
	if (e == cudaSuccess)
		e = cudaMalloc(&m.b, (size_t)fmax(z->b, 1) * sizeof(float));
	if (e == cudaSuccess)
		e = cudaMalloc(&m.c, (size_t)fmax(z->c, 1) * sizeof(float));
	if (e == cudaSuccess)
		e = fill(m.a, (size_t)z->a, &seed);
	if (e == cudaSuccess)
		e = fill(m.b, (size_t)z->b, &seed);
	if (e == cudaSuccess && z->weights > 0) {
		size_t w = (size_t)z->weights, g = (size_t)z->gathered, x = (size_t)z->indices;
		if (e == cudaSuccess)
			e = cudaMalloc(&m.w, w * sizeof(float));
		if (e == cudaSuccess)
			e = cudaMalloc(&m.dw, w * sizeof(float));
		if (e == cudaSuccess)
			e = cudaMalloc(&m.g, g * sizeof(float));
		if (e == cudaSuccess)
			e = cudaMalloc(&m.dg, g * sizeof(float));
		if (e == cudaSuccess)
			e = cudaMalloc(&m.x, x * sizeof(float));
		if (e == cudaSuccess)
			e = cudaMalloc(&m.idx, x * sizeof(unsigned));
		if (e == cudaSuccess)
			e = fill(m.w, w, &seed);
		if (e == cudaSuccess)
			e = fill(m.x, x, &seed);
		if (e == cudaSuccess)
			e = fill(m.idx, x, &seed); /* random bits: the features of the nonzeros */
		if (e == cudaSuccess)
			e = cudaMemset(m.dw, 0, w * sizeof(float));
	}
	if (e == cudaSuccess)
		e = cudaEventCreate(&start);
	if (e == cudaSuccess)
		e = cudaEventCreate(&stop);
	if (e != cudaSuccess)
		rc = fail(err, len, 1, "setting up the GEMM buffers: %s", cudaGetErrorString(e));
	for (int r = 0; !rc && r < warmup; r++)
		rc = iteration(h, ops, n_ops, &m, err, len);
	if (!rc && (e = cudaDeviceSynchronize()) != cudaSuccess)
		rc = fail(err, len, 1, "warm-up: %s", cudaGetErrorString(e));
	for (int r = 0; !rc && r < reps; r++) {
		float ms = 0;
		cudaEventRecord(start);
		rc = iteration(h, ops, n_ops, &m, err, len);
		cudaEventRecord(stop);
		if (!rc && ((e = cudaEventSynchronize(stop)) != cudaSuccess ||
			    (e = cudaEventElapsedTime(&ms, start, stop)) != cudaSuccess))
			rc = fail(err, len, 1, "timing: %s", cudaGetErrorString(e));
		times_s[r] = 1e-3 * ms;
	}
	if (start)
		cudaEventDestroy(start);
	if (stop)
		cudaEventDestroy(stop);
	cudaFree(m.a);
	cudaFree(m.b);
	cudaFree(m.c);
	cudaFree(m.w);
	cudaFree(m.dw);
	cudaFree(m.g);
	cudaFree(m.dg);
	cudaFree(m.x);
	cudaFree(m.idx);
	cublasDestroy(h);
	return rc;
}
