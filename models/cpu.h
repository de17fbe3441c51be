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
 * about `seconds`, FLOP/s of the best of 3; the clock a busy core really
 * runs at, which a virtual machine's "cpu MHz" does not give. 0 where the
 * CPU has no AVX2 and FMA (or is not x86-64). */
double lbs_cpu_fma_peak(double seconds);

/* A STREAM-style triad (a[i] = b[i] + s c[i], McCalpin's STREAM), one
 * thread over three arrays of `bytes` each, the best of `reps`: bytes
 * moved (24 per element: two reads, one write) over seconds. */
double lbs_cpu_triad_bandwidth(size_t bytes, int reps);

#endif
