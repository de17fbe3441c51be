/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Hand-made plans of the hybrid engine (hybrid/hybrid.h) for the unit
 * tests: d x p groups of v chunks, every chunk's forward tf and backward
 * tb seconds, nothing else taking time unless a test sets it. */
#ifndef LBS_TEST_HYBRID_PLAN_H
#define LBS_TEST_HYBRID_PLAN_H

#include <stddef.h>

#include "hybrid/hybrid.h"

/* The job of both files' hand-costed tests: Llama 3 8B, dp 2 x pp 4 x
 * tp 2, 8 micro-batches of 2048 tokens, on 2 nodes of 8 H100 (the default
 * gpus_per_node), NVLink 450 GB/s and 3 us, 8 NICs of 400 Gbit/s and 5 us
 * a node. */
#define TEST_HYBRID_8B                                                                                   \
	"[hybrid]\ndp = 2\npp = 4\ntp = 2\nmicro_batches = 8\n[model]\nname = llama3-8b\n"               \
	"sequence_length = 2048\n[nodes.n]\ncount = 2\ngpu = h100-sxm\n[intra_node]\n"                   \
	"bandwidth = 450 GB/s\nlatency = 3 us\n[network]\nnics_per_node = 8\n"                             \
	"bandwidth = 400 Gbit/s\nlatency = 5 us\n"

typedef struct test_plan {
	lbs_hy_plan pl;
	double buf[4096];
	lbs_hy_avail avail[64];
	double t0[64], lvl[64];
} test_plan;

void test_plan_init(test_plan *tp, int d, int p, int v, int m, int schedule, double tf, double tb);
/* Every group at a constant availability: replica r's at a, the others at 1. */
void test_plan_slow_replica(test_plan *tp, int r, double a);
/* Runs `steps` steps; returns the last step's length and, with acc, the
 * accounting of group g in it. */
double test_plan_run(const lbs_hy_plan *pl, int steps, size_t g, lbs_hy_account *acc);

#endif
