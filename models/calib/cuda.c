/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The GPU microbenchmark from the program's side: the iteration's GEMM list
 * for the CUDA module, and loading the module (lbsim-cuda.so, built from
 * models/calib/cuda.cu when configure finds nvcc) only when a GPU is
 * measured, so that lbsim itself does not load cuBLAS at every start. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "models/calib.h"
#include "models/calib/bench.h"

#ifdef HAVE_CUDA

typedef struct module {
	void *handle;
	lbs_cuda_info_fn info;
	lbs_cuda_bench_fn bench;
} module;

/* $LBSIM_CUDA_MODULE; else lbsim-cuda.so beside the program (a build
 * directory); else the installed one. */
static lbs_status load(module *m, lbs_error *err)
{
	char why[512];
	if (!(m->handle = lbs__module_open("LBSIM_CUDA_MODULE", "lbsim-cuda.so", why, sizeof why)))
		return lbs_error_set(err, LBS_EIO, "--cuda: cannot load the CUDA module: %s", why);
	lbs_cuda_abi_fn abi = (lbs_cuda_abi_fn)dlsym(m->handle, "lbs_cuda_module_abi");
	m->info = (lbs_cuda_info_fn)dlsym(m->handle, "lbs_cuda_module_info");
	m->bench = (lbs_cuda_bench_fn)dlsym(m->handle, "lbs_cuda_module_bench");
	if (abi && m->info && m->bench && abi() == LBS_CUDA_MODULE_ABI)
		return LBS_OK;
	dlclose(m->handle);
	m->handle = NULL;
	return lbs_error_set(err, LBS_EIO, "--cuda: cannot load the CUDA module: it is not a CUDA module "
			     "of this lbsim");
}

lbs_status lbs_cuda_info(int device, lbs_gpu_info *info, lbs_error *err)
{
	module m = { 0 };
	lbs_status st = load(&m, err);
	if (st != LBS_OK)
		return st;
	lbs_cuda_gpu gpu;
	char why[LBS_ERROR_MAX / 2];
	if (m.info(device, &gpu, why, sizeof why) != 0)
		st = lbs_error_set(err, LBS_EIO, "--cuda: %s", why);
	else if (info) {
		lbs_fmt(info->name, sizeof info->name, "%s", gpu.name);
		info->memory_bytes = gpu.memory_bytes;
		lbs_fmt(info->versions, sizeof info->versions, "%s", gpu.versions);
	}
	dlclose(m.handle);
	return st;
}

lbs_status lbs_cuda_bench(int device, const lbs_net *net, int64_t batch, int warmup, int reps,
			  double *times_s, lbs_error *err)
{
	/* The ops in training order: forward through the layers, then the
	 * gradients back through them. */
	size_t n = 0;
	lbs_cuda_op *ops = lbs_calloc(4 * net->n_layers + 1, sizeof *ops, err);
	if (!ops)
		return LBS_EINTERNAL;
	lbs_gemm g[LBS_GEMM_PASSES];
	for (size_t i = 0; i < net->n_layers; i++) {
		const lbs_layer *l = &net->layers[i];
		if (!lbs_layer_gemms(l, batch, g))
			continue;
		if (l->kind == LBS_LAYER_SPARSE)
			ops[n++] = (lbs_cuda_op){ .kind = LBS_CUDA_SPARSE_FORWARD, .batch = batch,
						  .features = l->features, .nnz = l->nnz, .out = l->out_c };
		else
			ops[n++] = (lbs_cuda_op){ LBS_CUDA_GEMM, LBS_GEMM_FORWARD, g[0].m, g[0].n, g[0].k, 0, 0, 0, 0, g[0].count };
	}
	for (size_t i = net->n_layers; i-- > 0;) {
		const lbs_layer *l = &net->layers[i];
		/* entering a transformer block from above: the forward GEMMs its
		 * recomputation runs again (as models/calib/blas.c) */
		for (size_t j = lbs_net_block_entry(net, i); j <= i; j++)
			if (lbs_layer_recomputed(net, &net->layers[j]) && lbs_layer_gemms(&net->layers[j], batch, g))
				ops[n++] = (lbs_cuda_op){ LBS_CUDA_GEMM, LBS_GEMM_FORWARD, g[0].m, g[0].n, g[0].k,
							  0, 0, 0, 0, g[0].count };
		if (!lbs_layer_gemms(l, batch, g))
			continue;
		if (l->kind == LBS_LAYER_SPARSE) {
			ops[n++] = (lbs_cuda_op){ .kind = LBS_CUDA_SPARSE_BACKWARD, .batch = batch,
						  .features = l->features, .nnz = l->nnz, .out = l->out_c };
			continue;
		}
		for (int p = LBS_GEMM_BACKWARD_DATA; p <= LBS_GEMM_BACKWARD_WEIGHT; p++)
			if (g[p].count)
				ops[n++] = (lbs_cuda_op){ LBS_CUDA_GEMM, p, g[p].m, g[p].n, g[p].k, 0, 0, 0, 0, g[p].count };
	}
	lbs_cuda_sizes z;
	lbs__bench_sizes(net, batch, &z);
	for (size_t i = 0; i < net->n_layers; i++)
		if (net->layers[i].kind == LBS_LAYER_SPARSE) /* all samples' rows at once on a GPU */
			z.gathered = (double)batch * (double)net->layers[i].nnz * net->layers[i].out_c;
	lbs_status st = LBS_OK;
	if (z.a > 2147483647.0 || z.b > 2147483647.0 || z.c > 2147483647.0)
		st = lbs_error_set(err, LBS_EINPUT, "--cuda: %s at batch %lld: a matrix over 2^31 elements",
				   net->name, (long long)batch);
	module m = { 0 };
	if (st == LBS_OK)
		st = load(&m, err);
	if (st == LBS_OK) {
		char why[LBS_ERROR_MAX / 2];
		int rc = m.bench(device, ops, n, &z, warmup, reps, times_s, why, sizeof why);
		if (rc)
			st = lbs_error_set(err, rc == 2 ? LBS_EINPUT : LBS_EIO, "--cuda: %s at batch %lld: %s",
					   net->name, (long long)batch, why);
		dlclose(m.handle);
	}
	free(ops);
	return st;
}

#else /* no CUDA in this build */

lbs_status lbs_cuda_info(int device, lbs_gpu_info *info, lbs_error *err)
{
	(void)device;
	(void)info;
	return lbs_error_set(err, LBS_EUSAGE, "--cuda: this lbsim was built without CUDA (configure "
			     "found no nvcc, or was given --disable-cuda)");
}

lbs_status lbs_cuda_bench(int device, const lbs_net *net, int64_t batch, int warmup, int reps,
			  double *times_s, lbs_error *err)
{
	(void)net;
	(void)batch;
	(void)warmup;
	(void)reps;
	(void)times_s;
	return lbs_cuda_info(device, NULL, err);
}

#endif
