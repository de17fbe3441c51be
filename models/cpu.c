/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A CPU as a device of the datasheet model (models/cpu.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "models/cpu.h"
#include "util/clock.h"
#include "util/error.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define LBS_FMA_X86 1
#endif

/* The value of the first "key : value" line of `key`, into buf. */
static int field(const char *text, const char *key, char *buf, size_t len)
{
	size_t k = strlen(key);
	for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		if (strncmp(line, key, k) || (line[k] != ' ' && line[k] != '\t' && line[k] != ':'))
			continue;
		const char *colon = strchr(line, ':'), *end = strchr(line, '\n');
		if (!colon || (end && colon > end))
			continue;
		colon++;
		while (*colon == ' ' || *colon == '\t')
			colon++;
		size_t n = end ? (size_t)(end - colon) : strlen(colon);
		if (n >= len)
			n = len - 1;
		memcpy(buf, colon, n);
		buf[n] = '\0';
		return 0;
	}
	return -1;
}

static int has_flag(const char *flags, const char *flag)
{
	size_t n = strlen(flag);
	for (const char *p = flags; (p = strstr(p, flag)); p += n)
		if ((p == flags || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return 1;
	return 0;
}

int lbs_cpu_info_parse(const char *text, lbs_cpu_info *out)
{
	memset(out, 0, sizeof *out);
	char mhz[64], flags[4096];
	if (field(text, "model name", out->model, sizeof out->model))
		lbs_fmt(out->model, sizeof out->model, "unknown CPU");
	if (field(text, "cpu MHz", mhz, sizeof mhz))
		return -1;
	char *end;
	double v = strtod(mhz, &end);
	if (end == mhz || !(v > 0 && v < 1e5))
		return -1;
	out->hz = v * 1e6;
	if (field(text, "flags", flags, sizeof flags))
		flags[0] = '\0';
	if (has_flag(flags, "avx512f"))
		out->flops_per_cycle = 64, out->isa = "AVX-512F: 2 FMA pipes x 16 lanes x 2";
	else if (has_flag(flags, "avx2") && has_flag(flags, "fma"))
		out->flops_per_cycle = 32, out->isa = "AVX2+FMA: 2 FMA pipes x 8 lanes x 2";
	else if (has_flag(flags, "avx"))
		out->flops_per_cycle = 16, out->isa = "AVX: 8 lanes x (add + multiply)";
	else
		out->flops_per_cycle = 8, out->isa = "SSE: 4 lanes x (add + multiply)";
	return 0;
}

int lbs_cpu_info_read(lbs_cpu_info *out)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return -1;
	/* the first processor's block is enough */
	char text[16384];
	size_t n = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[n] = '\0';
	return lbs_cpu_info_parse(text, out);
}

lbs_gpu_spec lbs_cpu_spec(const lbs_cpu_info *c, int threads, double bandwidth, char *title, size_t len)
{
	double peak = (double)threads * c->hz * c->flops_per_cycle;
	lbs_fmt(title, len, "%s, %d core%s at %.3g GHz", c->model, threads, threads == 1 ? "" : "s", c->hz / 1e9);
	return (lbs_gpu_spec){ .name = "cpu", .title = title, .tensor_flops = peak, .fp32_flops = peak,
			       .bandwidth = bandwidth, .memory = 0, .source = c->isa };
}

double lbs_cpu_triad_bandwidth(size_t bytes, int reps)
{
	size_t n = bytes / sizeof(double);
	double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
	double best = 0;
	if (a && b && c && n > 0) {
		for (size_t i = 0; i < n; i++)
			a[i] = 0, b[i] = 1, c[i] = 2;
		for (int r = 0; r < reps; r++) {
			double t0 = lbs_monotonic_s();
			for (size_t i = 0; i < n; i++)
				a[i] = b[i] + 3.0 * c[i];
			double t = lbs_monotonic_s() - t0;
			/* keep the stores: the result is read back */
			volatile double sink = a[n / 2];
			(void)sink;
			if (t > 0 && 24.0 * (double)n / t > best)
				best = 24.0 * (double)n / t;
		}
	}
	free(a);
	free(b);
	free(c);
	return best;
}

#ifdef LBS_FMA_X86
#define CHAINS 12
/* Independent FMA chains on `lanes`-wide vectors: FLOP/s. */
__attribute__((target("avx2,fma"))) static double fma_run(long iters)
{
	__m256 acc[CHAINS];
	const __m256 x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-7f);
	for (int j = 0; j < CHAINS; j++)
		acc[j] = _mm256_set1_ps((float)j);
	double t0 = lbs_monotonic_s();
	for (long i = 0; i < iters; i++) {
		/* unrolled, so that the chains stay in registers */
#pragma GCC unroll 12
		for (int j = 0; j < CHAINS; j++)
			acc[j] = _mm256_fmadd_ps(acc[j], x, y);
	}
	double t = lbs_monotonic_s() - t0;
	/* keep the chains: their sum is read back */
	float out[8];
	__m256 sum = acc[0];
	for (int j = 1; j < CHAINS; j++)
		sum = _mm256_add_ps(sum, acc[j]);
	_mm256_storeu_ps(out, sum);
	volatile float sink = out[0];
	(void)sink;
	return t > 0 ? (double)iters * CHAINS * 8 * 2 / t : 0;
}

__attribute__((target("avx512f"))) static double fma512_run(long iters)
{
	__m512 acc[CHAINS];
	const __m512 x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-7f);
	for (int j = 0; j < CHAINS; j++)
		acc[j] = _mm512_set1_ps((float)j);
	double t0 = lbs_monotonic_s();
	for (long i = 0; i < iters; i++) {
#pragma GCC unroll 12
		for (int j = 0; j < CHAINS; j++)
			acc[j] = _mm512_fmadd_ps(acc[j], x, y);
	}
	double t = lbs_monotonic_s() - t0;
	__m512 sum = acc[0];
	for (int j = 1; j < CHAINS; j++)
		sum = _mm512_add_ps(sum, acc[j]);
	volatile float sink = _mm512_reduce_add_ps(sum);
	(void)sink;
	return t > 0 ? (double)iters * CHAINS * 16 * 2 / t : 0;
}

/* Size the run from a short one, then keep the best of three. */
static double best_of_three(double (*run)(long), int lanes, double seconds)
{
	long iters = 100000;
	double rate = run(iters);
	if (rate > 0)
		iters = (long)(seconds / 3 * rate / (CHAINS * lanes * 2)) + 1;
	double best = 0;
	for (int r = 0; r < 3; r++) {
		double v = run(iters);
		best = v > best ? v : best;
	}
	return best;
}
#endif

double lbs_cpu_fma_peak(double seconds)
{
#ifdef LBS_FMA_X86
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
		return 0;
	return best_of_three(fma_run, 8, seconds);
#else
	(void)seconds;
	return 0;
#endif
}

double lbs_cpu_fma512_peak(double seconds)
{
#ifdef LBS_FMA_X86
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx512f"))
		return 0;
	return best_of_three(fma512_run, 16, seconds);
#else
	(void)seconds;
	return 0;
#endif
}

int lbs_blas_core_flops_per_cycle(const char *core)
{
	/* OpenBLAS's x86-64 cores (its DYNAMIC_ARCH names, any case): the
	 * widest vectors their SGEMM kernels use, as lbs_cpu_info_parse
	 * counts them. The AMD cores before Zen split 256-bit work over
	 * 128-bit pipes: 16, as AVX. */
	static const struct {
		const char *name;
		int fpc;
	} k[] = { { "SkylakeX", 64 },	 { "Cooperlake", 64 }, { "SapphireRapids", 64 }, { "Haswell", 32 },
		  { "Zen", 32 },	 { "Sandybridge", 16 }, { "Bulldozer", 16 },	  { "Piledriver", 16 },
		  { "Steamroller", 16 }, { "Excavator", 16 },	{ "Prescott", 8 },	  { "Core2", 8 },
		  { "Penryn", 8 },	 { "Dunnington", 8 },	{ "Nehalem", 8 },	  { "Atom", 8 },
		  { "Barcelona", 8 },	 { "Opteron", 8 },	{ "Opteron(SSE3)", 8 },	  { "Nano", 8 },
		  { "Bobcat", 8 },	 { "Athlon", 8 },	{ "Katmai", 8 },	  { "Coppermine", 8 },
		  { "Northwood", 8 },	 { "Banias", 8 } };
	for (size_t i = 0; core && i < sizeof k / sizeof k[0]; i++)
		if (!strcasecmp(core, k[i].name))
			return k[i].fpc;
	return 0;
}

double lbs_cpu_blas_peak(const lbs_cpu_info *c, int kernel_fpc, double fma256, double fma512, double *clock_hz)
{
	/* the 8-lane loop issues 32 FLOPs a cycle on every core that has it
	 * (two 256-bit FMA pipes): its rate over 32 is the clock a busy core
	 * runs at */
	double hz = fma256 > 0 ? fma256 / 32 : c->hz;
	int width = kernel_fpc > 0 && kernel_fpc < c->flops_per_cycle ? kernel_fpc : c->flops_per_cycle;
	if (clock_hz)
		*clock_hz = hz;
	if (width >= 64 && fma512 > 0)
		return fma512;
	if (width >= 32 && width < 64 && fma256 > 0)
		return fma256;
	return hz * width;
}
