/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The CPU microbenchmark: a network's training GEMMs through the
 * optimised CBLAS of lbsim's BLAS module (models/calib/blas_module.h). */
#include <dlfcn.h>
#include <gsl/gsl_cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "models/calib.h"
#include "models/calib/bench.h"
#include "models/calib/blas_module.h"
#include "models/nets.h"
#include "util/clock.h"

void lbs__bench_sizes(const lbs_net *net, int64_t batch, lbs_cuda_sizes *z)
{
	memset(z, 0, sizeof *z);
	for (size_t i = 0; i < net->n_layers; i++) {
		const lbs_layer *l = &net->layers[i];
		lbs_gemm g[LBS_GEMM_PASSES];
		lbs_layer_gemms(l, batch, g);
		for (int p = 0; p < LBS_GEMM_PASSES; p++) {
			if (!g[p].count)
				continue;
			/* a batch of products (attention's heads): each on its own matrices */
			double c = l->kind == LBS_LAYER_SPARSE ? 1 : (double)g[p].count;
			z->a = fmax(z->a, c * (double)g[p].m * (double)g[p].k);
			z->b = fmax(z->b, c * (double)g[p].k * (double)g[p].n);
			z->c = fmax(z->c, c * (double)g[p].m * (double)g[p].n);
		}
		if (l->kind == LBS_LAYER_SPARSE) {
			z->weights = fmax(z->weights, (double)l->features * l->out_c);
			z->gathered = fmax(z->gathered, (double)l->nnz * l->out_c);
			z->indices = fmax(z->indices, (double)l->nnz * (double)batch);
			z->c = fmax(z->c, (double)l->out_c * (double)batch); /* the outputs */
		}
	}
}

double lbs_bench_buffer_bytes(const lbs_net *net, int64_t batch)
{
	lbs_cuda_sizes z;
	lbs__bench_sizes(net, batch, &z);
	/* A, B, C; two weight tables (weights, their gradient); gathered
	 * weights and gradients; the inputs' values and indices. */
	return 4.0 * (z.a + z.b + z.c + 2 * z.weights + 2 * z.gathered + 2 * z.indices);
}

/* A deterministic xorshift stream: the same buffers every run. */
static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void fill(float *x, size_t n, uint64_t *s)
{
	for (size_t i = 0; i < n; i++)
		x[i] = (float)((double)(next(s) >> 11) * (2.0 / 9007199254740992.0) - 1.0);
}

/* The CBLAS and OpenBLAS functions, from the module's dependencies. */
typedef void (*sgemm_fn)(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE trans_a, enum CBLAS_TRANSPOSE trans_b,
			 int m, int n, int k, float alpha, const float *a, int lda, const float *b, int ldb,
			 float beta, float *c, int ldc);
typedef void (*set_threads_fn)(int n);
typedef int (*threads_fn)(void);
typedef char *(*config_fn)(void);

struct lbs_blas {
	void *handle;
	sgemm_fn sgemm;
	set_threads_fn set_threads; /* NULL: not OpenBLAS; likewise below */
	threads_fn threads;
	config_fn config;
	config_fn corename;
};

/* C (m x n) = op(A) op(B), row-major, alpha 1, beta 0. */
static void sgemm(const lbs_blas *b, bool trans_a, bool trans_b, int m, int n, int k, const float *a, int lda,
		  const float *bm, int ldb, float *c, int ldc)
{
	b->sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k,
		 1.0f, a, lda, bm, ldb, 0.0f, c, ldc);
}

typedef struct buffers {
	const lbs_blas *blas;
	float *a, *b, *c, *w, *dw, *g, *dg, *x;
	unsigned *idx;
} buffers;

static void gemm(const lbs_gemm *g, int pass, const buffers *m)
{
	int mi = (int)g->m, ni = (int)g->n, ki = (int)g->k;
	size_t sa = (size_t)g->m * (size_t)g->k, sb = (size_t)g->k * (size_t)g->n, sc = (size_t)g->m * (size_t)g->n;
	/* count > 1: a batch of products (attention's heads), one after another
	 * on consecutive matrices, as a strided batched GEMM runs them */
	for (int64_t r = 0; r < g->count; r++) {
		const float *a = m->a + (size_t)r * sa, *b = m->b + (size_t)r * sb;
		float *c = m->c + (size_t)r * sc;
		switch (pass) {
		case LBS_GEMM_FORWARD: /* Y (M x N) = W (M x K) X (K x N) */
			sgemm(m->blas, false, false, mi, ni, ki, a, ki, b, ni, c, ni);
			break;
		case LBS_GEMM_BACKWARD_DATA: /* dX (K x N) = W^T (K x M) dY (M x N) */
			sgemm(m->blas, true, false, mi, ni, ki, a, mi, b, ni, c, ni);
			break;
		default: /* dW (M x K) = dY (M x N) X^T (N x K) */
			sgemm(m->blas, false, true, mi, ni, ki, a, ki, b, ki, c, ni);
			break;
		}
	}
}

/* A sparse layer, per sample: gather the weight rows of its nonzeros, one
 * GEMM forward; in backward, one GEMM for their gradient, scattered back. */
static void sparse(const lbs_layer *l, int64_t batch, bool forward, const buffers *m)
{
	int out = l->out_c, nnz = (int)l->nnz;
	size_t features = (size_t)l->features;
	for (int64_t s = 0; s < batch; s++) {
		const unsigned *idx = m->idx + s * nnz;
		const float *x = m->x + s * nnz;
		if (forward) {
			for (int j = 0; j < nnz; j++)
				memcpy(m->g + (size_t)j * out, m->w + (idx[j] % features) * out,
				       out * sizeof(float));
			sgemm(m->blas, true, false, out, 1, nnz, m->g, out, x, 1, m->c + s * out, 1);
		} else {
			sgemm(m->blas, false, false, out, nnz, 1, m->c + s * out, 1, x, nnz, m->dg, nnz);
			for (int j = 0; j < nnz; j++)
				for (int o = 0; o < out; o++)
					m->dw[(idx[j] % features) * out + o] += m->dg[(size_t)o * nnz + j];
		}
	}
}

static void iteration(const lbs_net *net, int64_t batch, const buffers *m)
{
	lbs_gemm g[LBS_GEMM_PASSES];
	for (size_t i = 0; i < net->n_layers; i++) {
		const lbs_layer *l = &net->layers[i];
		if (l->kind == LBS_LAYER_SPARSE)
			sparse(l, batch, true, m);
		else if (lbs_layer_gemms(l, batch, g))
			gemm(&g[LBS_GEMM_FORWARD], LBS_GEMM_FORWARD, m);
	}
	for (size_t i = net->n_layers; i-- > 0;) {
		const lbs_layer *l = &net->layers[i];
		/* entering a transformer block from above: the forward GEMMs that
		 * the recomputation runs again, before its gradients */
		for (size_t j = lbs_net_block_entry(net, i); j <= i; j++)
			if (lbs_layer_recomputed(net, &net->layers[j]) && lbs_layer_gemms(&net->layers[j], batch, g))
				gemm(&g[LBS_GEMM_FORWARD], LBS_GEMM_FORWARD, m);
		if (l->kind == LBS_LAYER_SPARSE) {
			sparse(l, batch, false, m);
		} else if (lbs_layer_gemms(l, batch, g)) {
			if (g[LBS_GEMM_BACKWARD_DATA].count)
				gemm(&g[LBS_GEMM_BACKWARD_DATA], LBS_GEMM_BACKWARD_DATA, m);
			gemm(&g[LBS_GEMM_BACKWARD_WEIGHT], LBS_GEMM_BACKWARD_WEIGHT, m);
		}
	}
}

struct lbs_blas_work {
	const lbs_net *net;
	int64_t max_batch;
	buffers m;
};

void lbs_blas_work_destroy(lbs_blas_work *w)
{
	if (!w)
		return;
	free(w->m.a);
	free(w->m.b);
	free(w->m.c);
	free(w->m.w);
	free(w->m.dw);
	free(w->m.g);
	free(w->m.dg);
	free(w->m.x);
	free(w->m.idx);
	free(w);
}

lbs_status lbs_blas_work_create(lbs_blas *b, const lbs_net *net, int64_t max_batch, double max_bytes,
				lbs_blas_work **out, lbs_error *err)
{
	*out = NULL;
	double need = lbs_bench_buffer_bytes(net, max_batch);
	if (need > max_bytes)
		return lbs_error_set(err, LBS_EINPUT, "%s at batch %lld needs %.3g GB of GEMM buffers, more "
				     "than the %.3g GB allowed", net->name, (long long)max_batch, need / 1e9,
				     max_bytes / 1e9);
	lbs_cuda_sizes z;
	lbs__bench_sizes(net, max_batch, &z);
	if (z.a > 2147483647.0 || z.b > 2147483647.0 || z.c > 2147483647.0)
		return lbs_error_set(err, LBS_EINPUT, "%s at batch %lld: a matrix over 2^31 elements",
				     net->name, (long long)max_batch);
	lbs_blas_work *w = calloc(1, sizeof *w);
	if (!w)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	w->net = net;
	w->max_batch = max_batch;
	buffers *m = &w->m;
	m->blas = b;
	bool ok = (m->a = malloc((size_t)z.a * sizeof(float) + 64)) &&
		  (m->b = malloc((size_t)z.b * sizeof(float) + 64)) &&
		  (m->c = malloc((size_t)fmax(z.c, 1) * sizeof(float) + 64));
	if (ok && z.weights > 0)
		ok = (m->w = malloc((size_t)z.weights * sizeof(float))) &&
		     (m->dw = calloc((size_t)z.weights, sizeof(float))) &&
		     (m->g = malloc((size_t)z.gathered * sizeof(float))) &&
		     (m->dg = malloc((size_t)z.gathered * sizeof(float))) &&
		     (m->x = malloc((size_t)z.indices * sizeof(float))) &&
		     (m->idx = malloc((size_t)z.indices * sizeof(unsigned)));
	if (!ok) {
		lbs_blas_work_destroy(w);
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory for %.3g GB of GEMM buffers", need / 1e9);
	}
	uint64_t seed = 0x9E3779B97F4A7C15u;
	fill(m->a, (size_t)z.a, &seed);
	fill(m->b, (size_t)z.b, &seed);
	if (m->w) {
		fill(m->w, (size_t)z.weights, &seed);
		fill(m->x, (size_t)z.indices, &seed);
		/* the features of each sample's nonzeros, uniform at random
		 * (taken modulo each layer's width) */
		for (size_t i = 0; i < (size_t)z.indices; i++)
			m->idx[i] = (unsigned)(next(&seed) >> 32);
	}
	*out = w;
	return LBS_OK;
}

void lbs_blas_work_run(lbs_blas_work *w, int64_t batch)
{
	if (batch > 0)
		iteration(w->net, batch <= w->max_batch ? batch : w->max_batch, &w->m);
}

lbs_status lbs_blas_bench(lbs_blas *b, const lbs_net *net, int64_t batch, int warmup, int reps,
			  double max_bytes, double *times_s, lbs_error *err)
{
	lbs_blas_work *w;
	lbs_status st = lbs_blas_work_create(b, net, batch, max_bytes, &w, err);
	if (st != LBS_OK)
		return st;
	for (int r = 0; r < warmup; r++)
		lbs_blas_work_run(w, batch);
	for (int r = 0; r < reps; r++) {
		double t0 = lbs_monotonic_s();
		lbs_blas_work_run(w, batch);
		times_s[r] = lbs_monotonic_s() - t0;
	}
	lbs_blas_work_destroy(w);
	return LBS_OK;
}

lbs_status lbs_blas_open(int threads, lbs_blas **out, lbs_error *err)
{
	*out = NULL;
	if (threads > 0) {
		/* read by OpenBLAS when it starts: it makes no more threads */
		char n[16];
		lbs_fmt(n, sizeof n, "%d", threads);
		setenv("OPENBLAS_NUM_THREADS", n, 1);
	}
	char why[512];
	void *handle = lbs__module_open("LBSIM_BLAS_MODULE", "lbsim-blas.so", why, sizeof why);
	if (!handle)
		return lbs_error_set(err, LBS_EIO, "cannot load lbsim's BLAS module: %s", why);
	lbs_blas b = { handle, NULL, NULL, NULL, NULL, NULL };
	lbs_blas_module_abi_fn abi = (lbs_blas_module_abi_fn)dlsym(handle, LBS_BLAS_MODULE_SYMBOL);
	/* (dlsym on the handle: the module's dependencies, not GSL's CBLAS) */
	b.sgemm = (sgemm_fn)dlsym(handle, "cblas_sgemm");
	b.set_threads = (set_threads_fn)dlsym(handle, "openblas_set_num_threads");
	b.threads = (threads_fn)dlsym(handle, "openblas_get_num_threads");
	b.config = (config_fn)dlsym(handle, "openblas_get_config");
	b.corename = (config_fn)dlsym(handle, "openblas_get_corename");
	lbs_status st = LBS_OK;
	if (!abi || abi() != LBS_BLAS_MODULE_ABI || !b.sgemm)
		st = lbs_error_set(err, LBS_EIO, "cannot load lbsim's BLAS module: it is not the BLAS module of "
				   "this lbsim");
	else if (threads > 0 && !b.set_threads)
		st = lbs_error_set(err, LBS_EUSAGE, "this BLAS cannot set its thread count");
	lbs_blas *copy = st == LBS_OK ? malloc(sizeof *copy) : NULL;
	if (st == LBS_OK && !copy)
		st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	if (st != LBS_OK) {
		dlclose(handle);
		return st;
	}
	if (threads > 0)
		b.set_threads(threads);
	*copy = b;
	*out = copy;
	return LBS_OK;
}

void lbs_blas_close(lbs_blas *b)
{
	if (!b)
		return;
	dlclose(b->handle);
	free(b);
}

int lbs_blas_threads(const lbs_blas *b)
{
	return b->threads ? b->threads() : 0;
}

const char *lbs_blas_core(const lbs_blas *b)
{
	return b->corename ? b->corename() : NULL;
}

void lbs_blas_describe(const lbs_blas *b, char *buf, size_t len)
{
	char lib[128] = "an unknown library";
	Dl_info info;
	if (dladdr((void *)b->sgemm, &info) && info.dli_fname) {
		const char *base = strrchr(info.dli_fname, '/');
		lbs_fmt(lib, sizeof lib, "%s", base ? base + 1 : info.dli_fname);
	}
	if (b->config)
		lbs_fmt(buf, len, "%.95s, cblas_sgemm from %s", b->config(), lib);
	else
		lbs_fmt(buf, len, "CBLAS, cblas_sgemm from %s", lib);
}
