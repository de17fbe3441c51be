/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The CPU microbenchmark: a network's training GEMMs through CBLAS. */
#include <cblas.h>
#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "models/calib.h"
#include "models/calib/bench.h"
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
			z->a = fmax(z->a, (double)g[p].m * (double)g[p].k);
			z->b = fmax(z->b, (double)g[p].k * (double)g[p].n);
			z->c = fmax(z->c, (double)g[p].m * (double)g[p].n);
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

typedef struct buffers {
	float *a, *b, *c, *w, *dw, *g, *dg, *x;
	unsigned *idx;
} buffers;

static void gemm(const lbs_gemm *g, int pass, const buffers *m)
{
	int mi = (int)g->m, ni = (int)g->n, ki = (int)g->k;
	switch (pass) {
	case LBS_GEMM_FORWARD: /* Y (M x N) = W (M x K) X (K x N) */
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, mi, ni, ki, 1.0f, m->a, ki, m->b, ni,
			    0.0f, m->c, ni);
		break;
	case LBS_GEMM_BACKWARD_DATA: /* dX (K x N) = W^T (K x M) dY (M x N) */
		cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, mi, ni, ki, 1.0f, m->a, mi, m->b, ni,
			    0.0f, m->c, ni);
		break;
	default: /* dW (M x K) = dY (M x N) X^T (N x K) */
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, mi, ni, ki, 1.0f, m->a, ki, m->b, ki,
			    0.0f, m->c, ni);
		break;
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
			cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, out, 1, nnz, 1.0f, m->g, out, x, 1,
				    0.0f, m->c + s * out, 1);
		} else {
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, out, nnz, 1, 1.0f, m->c + s * out,
				    1, x, nnz, 0.0f, m->dg, nnz);
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

lbs_status lbs_blas_work_create(const lbs_net *net, int64_t max_batch, double max_bytes, lbs_blas_work **out,
				lbs_error *err)
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

lbs_status lbs_blas_bench(const lbs_net *net, int64_t batch, int warmup, int reps, double max_bytes,
			  double *times_s, lbs_error *err)
{
	lbs_blas_work *w;
	lbs_status st = lbs_blas_work_create(net, batch, max_bytes, &w, err);
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

bool lbs_blas_set_threads(int n)
{
#ifdef HAVE_OPENBLAS_SET_NUM_THREADS
	openblas_set_num_threads(n);
	return true;
#else
	(void)n;
	return false;
#endif
}

int lbs_blas_threads(void)
{
#ifdef HAVE_OPENBLAS_GET_NUM_THREADS
	return openblas_get_num_threads();
#else
	return 0;
#endif
}

void lbs_blas_describe(char *buf, size_t len)
{
	char lib[128] = "an unknown library";
	Dl_info info;
	if (dladdr((void *)cblas_sgemm, &info) && info.dli_fname) {
		const char *base = strrchr(info.dli_fname, '/');
		lbs_fmt(lib, sizeof lib, "%s", base ? base + 1 : info.dli_fname);
	}
#ifdef HAVE_OPENBLAS_GET_CONFIG
	char config[96];
	lbs_fmt(config, sizeof config, "%s", openblas_get_config());
	lbs_fmt(buf, len, "%s, cblas_sgemm from %s", config, lib);
#else
	lbs_fmt(buf, len, "CBLAS, cblas_sgemm from %s", lib);
#endif
}
