/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A CPU as a device of the datasheet model (models/gpu.h, doc/gpus.md):
 * its peak fp32 FLOP/s from the clock and the vector instructions its
 * /proc/cpuinfo reports, and its memory bandwidth from a STREAM-style
 * triad, so that the efficiency curve fitted to published GPU figures can
 * be checked against a CPU measured here (`lbsim calibrate --blas`). */
#ifndef LBS_CPU_H
#define LBS_CPU_H

#include <stddef.h>

#include "models/gpu.h"

/* What /proc/cpuinfo says of the first processor. */
typedef struct lbs_cpu_info {
	char model[96];      /* "model name" */
	double hz;           /* "cpu MHz" x 1e6: the clock the kernel reports */
	int flops_per_cycle; /* fp32 FLOPs a core issues per cycle at its widest vectors */
	const char *isa;     /* which instructions gave flops_per_cycle */
} lbs_cpu_info;

/* Parse a /proc/cpuinfo text. fp32 FLOPs per cycle and core, two fused
 * multiply-add pipes assumed (Intel since Haswell, AMD since Zen 2): with
 * AVX-512F 2 x 16 lanes x 2 = 64, AVX2 and FMA 2 x 8 x 2 = 32, AVX without
 * FMA 8 lanes x (an add and a multiply) = 16, else SSE 4 x 2 = 8. Returns 0,
 * or -1 when the text gives no clock. */
int lbs_cpu_info_parse(const char *text, lbs_cpu_info *out);

/* This machine's (reads /proc/cpuinfo; -1 if it cannot). */
int lbs_cpu_info_read(lbs_cpu_info *out);

/* A device spec of `threads` cores of the CPU with `bandwidth` bytes/s:
 * peak = threads x hz x flops_per_cycle, for fp32 and 16-bit alike (a CPU
 * BLAS computes in fp32). `title` is copied into the caller's buffer. */
lbs_gpu_spec lbs_cpu_spec(const lbs_cpu_info *c, int threads, double bandwidth, char *title, size_t len);

/* A core's fp32 peak measured: independent fused multiply-adds on 8-lane
 * AVX2 vectors (12 chains, more than the pipes' latency x throughput) for
 * about `seconds`, FLOP/s of the best of 3; over 32 (two 256-bit FMA
 * pipes), the clock a busy core really runs at, which a virtual machine's
 * "cpu MHz" does not give. 0 where the CPU has no AVX2 and FMA (or is not
 * x86-64). */
double lbs_cpu_fma_peak(double seconds);

/* The same on 16-lane AVX-512F vectors: the peak of a core's widest FMAs
 * (one or two 512-bit pipes, whichever it has). 0 without AVX-512F. */
double lbs_cpu_fma512_peak(double seconds);

/* The fp32 FLOPs a cycle that an OpenBLAS core's kernels use (its
 * openblas_get_corename(), any case: "SkylakeX" 64, "Haswell" and "Zen" 32,
 * "Sandybridge" 16, "Prescott" 8, ...), counted as lbs_cpu_info_parse
 * counts a CPU's; 0 for a name it does not know. OpenBLAS built with
 * DYNAMIC_ARCH falls back to Prescott on a CPU it does not know (a newer
 * model than the library, or one a virtual machine hides): its SGEMM then
 * uses a small part of the vectors. */
int lbs_blas_core_flops_per_cycle(const char *core);

/* One core's fp32 peak with the BLAS's kernels: the CPU's vectors or the
 * kernels', whichever are narrower (kernel_fpc 0: the CPU's), from the
 * rates measured above (0: not measured): the 16-lane rate for 64, the
 * 8-lane rate for 32, else the clock (the 8-lane rate over 32, else the
 * reported one, stored in *clock_hz if not NULL) times the width. */
double lbs_cpu_blas_peak(const lbs_cpu_info *c, int kernel_fpc, double fma256, double fma512, double *clock_hz);

/* A STREAM-style triad (a[i] = b[i] + s c[i], McCalpin's STREAM), one
 * thread over three arrays of `bytes` each, the best of `reps`: bytes
 * moved (24 per element: two reads, one write) over seconds. */
double lbs_cpu_triad_bandwidth(size_t bytes, int reps);

#endif
