/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The CUDA microbenchmark when configure found no nvcc (or --disable-cuda):
 * every call says so. */
#include "models/calib.h"

lbs_status lbs_cuda_info(int device, lbs_gpu_info *info, lbs_error *err)
{
	(void)device;
	(void)info;
	return lbs_error_set(err, LBS_EUSAGE, "--cuda: this lbsim was built without CUDA (configure "
			     "found no nvcc, or was given --disable-cuda)");
}

lbs_status lbs_cuda_bench(int device, const struct lbs_net *net, int64_t batch, int warmup, int reps,
			  double *times_s, lbs_error *err)
{
	(void)net;
	(void)batch;
	(void)warmup;
	(void)reps;
	(void)times_s;
	return lbs_cuda_info(device, NULL, err);
}
