/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The datasheet cost model (models/gpu.h) fitted to published training
 * throughputs (models/calib/gpu_fit.c, doc/gpus.md). */
#ifndef LBS_GPU_FIT_H
#define LBS_GPU_FIT_H

#include <stdbool.h>
#include <stddef.h>

#include "models/gpu.h"
#include "models/nets.h"
#include "util/error.h"

/* One published figure: a model trained on a device. */
typedef struct lbs_gpu_figure {
	const char *device;  /* lbs_gpu_find */
	const char *model;   /* an MPT benchmark model: "125m" ... "30b" */
	int64_t seq, micro_batch;
	bool checkpointing;  /* activation checkpointing (full recomputation) */
	double tokens_per_s; /* per GPU, as published */
	bool fitted;         /* in the fit; else held out */
} lbs_gpu_figure;

/* The figures, in their fixed order. */
const lbs_gpu_figure *lbs_gpu_figures(size_t *n);
/* The network of a figure (free with lbs_net_destroy). */
lbs_status lbs_gpu_figure_net(const lbs_gpu_figure *f, lbs_net *net, lbs_error *err);
/* The model's tokens/s per GPU for the figure's device, model and batch. */
double lbs_gpu_figure_predict(const lbs_gpu_figure *f, const lbs_net *net, const lbs_gpu_eff *e);
/* Fits the efficiency parameters to observed[i] (tokens/s per GPU) of the
 * figures with `fitted` set, least squares on log(predicted / observed)
 * (GSL's Nelder-Mead simplex, from eff_max 0.7, f_half 1 GFLOP, mem 0.7,
 * overhead 5 us, restarted until it moves no more); *rms_log is the fit's
 * root mean squared log error. */
lbs_status lbs_gpu_fit(const lbs_gpu_figure *f, const double *observed, size_t n, lbs_gpu_eff *out,
		       double *rms_log, lbs_error *err);

#endif
