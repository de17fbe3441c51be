/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Internal to the microbenchmarks (models/calib/blas.c, models/calib/cuda.c). */
#ifndef LBS_CALIB_BENCH_H
#define LBS_CALIB_BENCH_H

#include <stdint.h>

#include "models/calib/cuda_module.h"
#include "models/nets.h"

/* The elements of each buffer one iteration of net at `batch` needs: the
 * largest A, B and C over its GEMMs (and a sparse layer's outputs), a
 * sparse layer's weight table, its gathered rows for one sample, its
 * inputs' values and indices. */
void lbs__bench_sizes(const lbs_net *net, int64_t batch, lbs_cuda_sizes *z);

#endif
