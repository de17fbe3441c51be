/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Internal to the microbenchmarks (models/calib/blas.c, models/calib/cuda.c,
 * models/calib/module.c). */
#ifndef LBS_CALIB_BENCH_H
#define LBS_CALIB_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "models/calib/cuda_module.h"
#include "models/nets.h"

/* The elements of each buffer one iteration of net at `batch` needs: the
 * largest A, B and C over its GEMMs (and a sparse layer's outputs), a
 * sparse layer's weight table, its gathered rows for one sample, its
 * inputs' values and indices. */
void lbs__bench_sizes(const lbs_net *net, int64_t batch, lbs_cuda_sizes *z);

/* Loads lbsim's module `file` (dlopen, RTLD_LOCAL): from the path in the
 * environment variable `env` if it is set; else from beside the program (a
 * build directory); else from the installed LBS_PKGLIBDIR. NULL, with the
 * reason in why[0..len), if none loads. */
void *lbs__module_open(const char *env, const char *file, char *why, size_t len);

#endif
