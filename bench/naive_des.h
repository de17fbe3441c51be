/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A naive binary-heap discrete-event simulation of the bench's canonical
 * workload, independent of lbsim: the yardstick lbsim's rate is printed
 * against, so that the figure means the same on any machine. */
#ifndef BENCH_NAIVE_DES_H
#define BENCH_NAIVE_DES_H

#include <stddef.h>
#include <stdint.h>

typedef struct naive_des_result {
	double sim_time_s;
	double sum_gap_s;
	uint64_t events;
} naive_des_result;

/* Simulates `iterations` iterations of n workers; 0, or -1 out of memory. */
int naive_des_run(size_t n, int64_t iterations, uint64_t seed, naive_des_result *out);

#endif
