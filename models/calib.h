/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Calibration: fitting cost models to measured (batch, time) points with
 * GSL least squares, and judging the fits (doc/profiles.md).
 *
 * linear (CPUs): t(b) = t0 + c b by ordinary least squares
 * (gsl_fit_linear); if the intercept comes out negative, t(b) = c b through
 * the origin (gsl_fit_mul), since a scenario's t0 cannot be negative.
 *
 * piecewise (GPUs): t(b) = t_flat for b <= s, t_flat + c (b - s) above.
 * For each candidate breakpoint s (every integer from the smallest measured
 * batch to one below the largest) the model is linear in (t_flat, c), fitted
 * by weighted least squares (gsl_fit_wlinear) with weights 1/t^2, so that
 * every point counts by its relative error whatever its size; the s with
 * the least weighted squared error wins (ties: the smallest s), among those
 * with c >= 0 and t_flat > 0. With s at the smallest batch the fit is the
 * straight line through every point, so a device that is never flat in the
 * measured range gets that.
 *
 * power (GPUs): t(b) = t0 + a b^p. For each exponent p the model is linear
 * in (t0, a), fitted by weighted least squares (weights 1/t^2) with t0, a
 * >= 0 (gsl_multifit_wlinear on each subset of the terms, the best one
 * with no negative coefficient); p is the best of 0.01, 0.02, ..., 4, then
 * refined by golden-section search within 0.01 of it.
 *
 * quadratic (GPUs): t(b) = t0 + c1 b + c2 b^2 by the same weighted,
 * non-negative least squares on (t0, c1, c2).
 *
 * Non-negative coefficients and p > 0 keep every fitted t(b) non-decreasing
 * in b. Power and quadratic fits get flat_below = the smallest batch: as
 * piecewise, they are flat below the data. */
#ifndef LBS_CALIB_H
#define LBS_CALIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "models/cost.h"
#include "util/error.h"

typedef struct lbs_fit {
	lbs_cost cost;   /* ops, kind and the parameters of the fitted model */
	size_t n;        /* points fitted */
	double r2;       /* 1 - SSE/SST on the times */
	double rmse_s;   /* root mean squared error */
	double mape;     /* mean absolute percentage error, as a fraction */
	bool robust;     /* the bisquare line of lbs_calib_fit_robust (false: least squares) */
} lbs_fit;

/* Fits cost kind `kind` (one of lbs_cost_kinds[]) to the n points
 * (batch[i], time_s[i]); batches distinct and > 0, times > 0. Needs 2
 * points for linear, 3 for the others. max_batch is left 0. */
lbs_status lbs_calib_fit(const lbs_cost_ops *kind, const double *batch, const double *time_s,
			 size_t n, lbs_fit *fit, lbs_error *err);

/* Held-out accuracy: each interior batch (not the smallest or largest, so
 * the prediction interpolates) in turn is left out, the model is fitted to
 * the others and predicts it. *mape is the mean absolute percentage error
 * of those predictions (a fraction), *n_heldout their number (0 when there
 * are too few points to leave any out). */
lbs_status lbs_calib_heldout(const lbs_cost_ops *kind, const double *batch, const double *time_s,
			     size_t n, double *mape, size_t *n_heldout, lbs_error *err);

/* Measured timings on a shared machine: a linear fit robust to stalls.
 * When the host stalls a process for longer than a batch's repetitions
 * take, the batch's median is a stall's, not the device's cost, and a few
 * of them tilt ordinary least squares (once, 10 of 45 batches 1.5 to 3 x
 * too slow raised per_sample 15% and t0 3.5 x). Tukey's bisquare
 * M-estimator (gsl_multifit_robust, tuning 4.685 on a MAD scale) weights
 * such points down to 0; a negative intercept is refitted through the
 * origin, as for least squares. weight[0..n) gets each point's weight
 * (1 for every point under LBS_ROBUST_MIN_POINTS points, where the fit is
 * ordinary least squares, and where GSL finds no robust line), *n_out the
 * points weighted out (weight 0). r2, rmse and mape are over every point. */
#define LBS_ROBUST_MIN_POINTS 6
lbs_status lbs_calib_fit_robust(const double *batch, const double *time_s, size_t n, lbs_fit *fit,
				double *weight, size_t *n_out, lbs_error *err);

/* lbs_calib_heldout for lbs_calib_fit_robust: each interior batch the full
 * fit kept (weight[i] > 0) predicted by a robust fit to the others. */
lbs_status lbs_calib_heldout_robust(const double *batch, const double *time_s, size_t n, const double *weight,
				    double *mape, size_t *n_heldout, lbs_error *err);

/* One cost kind's held-out accuracy on a set of points. */
#define LBS_CHOOSE_TIE 1e-4 /* 0.01 percentage points */

typedef struct lbs_kind_score {
	const lbs_cost_ops *kind;
	bool fits;       /* false: the kind cannot fit the points (nor the rest is set) */
	double mape;     /* held-out MAPE as a fraction; NAN when n is 0 */
	size_t n;        /* batches predicted */
} lbs_kind_score;

/* The kind of kinds[] (NULL-terminated) with the lowest held-out MAPE on
 * the points (lbs_calib_heldout), not the lowest in-sample error: a kind
 * with more freedom always fits the points it saw at least as well, but
 * may predict a batch it did not see worse. Ties (held-out MAPEs within
 * LBS_CHOOSE_TIE, as when two kinds fit the same straight line by
 * different arithmetic) go to the kind listed first; with too few points to hold any out, the first kind that fits.
 * score[0..*n_score) (room for every kind) gets each kind's result. */
lbs_status lbs_calib_choose(const lbs_cost_ops *const *kinds, const double *batch,
			    const double *time_s, size_t n, lbs_kind_score *score, size_t *n_score,
			    const lbs_cost_ops **best, lbs_error *err);

struct lbs_profile;

/* Fits profile p to its points (p->point[0..n_points), batches ascending)
 * with the GPU kind (piecewise, power, quadratic: piecewise first, so it
 * keeps a tie) of least held-out error (lbs_calib_choose), keeping its
 * memory cap, and writes the kind's [fit] method. With fewer than three
 * points, only the kinds that can fit them are tried. score[0..*n_score)
 * (room for four) gets each kind's result. The one rule for every GPU
 * profile: published tables, `calibrate --fit --device gpu` and `--cuda`. */
lbs_status lbs_calib_fit_gpu(struct lbs_profile *p, lbs_kind_score *score, size_t *n_score, lbs_error *err);

/* The [fit] method of a profile fitted with `kind` to batches bmin..bmax. */
void lbs_calib_method(const lbs_cost_ops *kind, double bmin, double bmax, char *buf, size_t len);

/* Median of x[0..n) (sorts x). */
double lbs_calib_median(double *x, size_t n);

/* ---- published tables (models/calib/tables.c) --------------------------- */

/* The times one device took for one model, by increasing batch. */
typedef struct lbs_curve {
	char device[32];   /* as the table names it: "k80", "t4" */
	char model[64];    /* as the table names it: "ResNet-50", "cifar10" */
	double *batch;
	double *time_s;    /* one training iteration at that batch */
	size_t n, cap;
} lbs_curve;

typedef struct lbs_curve_set {
	lbs_curve *s;
	size_t n, cap;
} lbs_curve_set;

/* Gavel's isolated throughputs (traces/data/gavel-throughputs/isolated.csv,
 * `worker_type,model,batch_size,scale_factor,steps_per_s`): for each
 * worker type without "_" (one server) and model with a batch size, the
 * rows with scale factor 1 and a throughput > 0 (0.0 marks a configuration
 * that could not run); time = 1 / steps_per_s. Appends to set. */
lbs_status lbs_curves_read_gavel(const char *path, lbs_curve_set *set, lbs_error *err);

/* Pollux's placements (traces/data/pollux-throughput/MODEL/placements.csv,
 * `placement,local_bsz,step_time,sync_time`): the rows with placement "1"
 * (one GPU), time = step_time - sync_time, as device `device` and model
 * `model`. Appends one series to set. */
lbs_status lbs_curves_read_pollux(const char *path, const char *device, const char *model,
				  lbs_curve_set *set, lbs_error *err);

void lbs_curve_set_free(lbs_curve_set *set);

/* ---- a user's measured step times (models/calib/measured.c) ----------- */

/* The times of a CSV `batch,time[,repetitions]` (doc/profiles.md), one
 * entry per distinct batch, by increasing batch. */
typedef struct lbs_step_times {
	double *batch;
	double *time_s;  /* the rows' mean, weighted by repetitions */
	double *spread;  /* (max - min) / mean of the rows' times; NAN for one row */
	size_t n;        /* distinct batches */
	size_t rows;     /* rows read */
} lbs_step_times;

/* The bounds of a --fit file (doc/profiles.md): its bytes and rows, read
 * before anything is fitted, and its distinct batches, which the fits'
 * cost grows with (the held-out error fits once per batch). */
#define LBS_FIT_MAX_BYTES (64 << 20)
#define LBS_FIT_MAX_ROWS 1000000
#define LBS_FIT_MAX_BATCHES 100

/* Reads and checks the file; errors name the file and line (LBS_EINPUT).
 * Free with lbs_step_times_free. */
lbs_status lbs_calib_read_times(const char *path, lbs_step_times *t, lbs_error *err);
void lbs_step_times_free(lbs_step_times *t);

/* ---- microbenchmarks (models/calib/blas.c, models/calib/cuda.cu) -------- */

struct lbs_net;

/* The optimised CBLAS (OpenBLAS), loaded on demand from lbsim's BLAS
 * module, lbsim-blas.so ($LBSIM_BLAS_MODULE; else beside the program;
 * else the installed one): only what runs real matrix products opens it,
 * so no other command starts its threads. threads > 0 fixes the library's
 * thread count before it starts (OPENBLAS_NUM_THREADS) and after; 0 keeps
 * its default (one per core). LBS_EIO if the module cannot be loaded,
 * LBS_EUSAGE if threads > 0 and the library cannot set its count. */
typedef struct lbs_blas lbs_blas;
lbs_status lbs_blas_open(int threads, lbs_blas **out, lbs_error *err);
void lbs_blas_close(lbs_blas *b);
/* The library's thread count (0 if unknown). */
int lbs_blas_threads(const lbs_blas *b);
/* What BLAS this is: "OpenBLAS 0.3.21 ..., cblas_sgemm from libopenblas.so.0". */
void lbs_blas_describe(const lbs_blas *b, char *buf, size_t len);
/* The kernels it runs: OpenBLAS's core name ("Haswell", "SkylakeX",
 * "Prescott", ...), or NULL if the library does not say. */
const char *lbs_blas_core(const lbs_blas *b);

/* Times one training iteration of `net` at `batch` samples: every layer's
 * GEMMs (doc/nets.md) in the order training runs them (forward through the
 * layers, then input and weight gradients back through them), on buffers
 * of random values in [-1, 1]. Runs `warmup` untimed iterations, then
 * `reps` timed ones, and stores their wall-clock times in times_s[0..reps).
 * Fails (LBS_EINPUT) if the buffers would need more than max_bytes. */
lbs_status lbs_blas_bench(lbs_blas *b, const struct lbs_net *net, int64_t batch, int warmup, int reps,
			  double max_bytes, double *times_s, lbs_error *err);

/* The same iteration on buffers kept between calls (the testbed's workers
 * run one per barrier): made once for batches up to max_batch (LBS_EINPUT
 * beyond max_bytes), then run for any batch <= max_batch (0: nothing). */
typedef struct lbs_blas_work lbs_blas_work;
lbs_status lbs_blas_work_create(lbs_blas *b, const struct lbs_net *net, int64_t max_batch, double max_bytes,
				lbs_blas_work **out, lbs_error *err);
void lbs_blas_work_run(lbs_blas_work *w, int64_t batch);
void lbs_blas_work_destroy(lbs_blas_work *w);

/* Bytes of the buffers lbs_blas_bench needs at `batch`. */
double lbs_bench_buffer_bytes(const struct lbs_net *net, int64_t batch);

/* CUDA (built only when configure finds nvcc, HAVE_CUDA): the same
 * iteration as cuBLAS SGEMMs, timed with CUDA events. */
typedef struct lbs_gpu_info {
	char name[128];
	double memory_bytes;
	char versions[128]; /* CUDA runtime, driver and cuBLAS versions */
} lbs_gpu_info;

/* LBS_EIO if there is no usable GPU (or CUDA fails); LBS_EUSAGE when this
 * build has no CUDA. */
lbs_status lbs_cuda_info(int device, lbs_gpu_info *info, lbs_error *err);
lbs_status lbs_cuda_bench(int device, const struct lbs_net *net, int64_t batch, int warmup, int reps,
			  double *times_s, lbs_error *err);

/* ---- re-sizing costs (models/calib/resize.c) --------------------------- */

/* What the measurement runs: one training iteration of `batch` samples,
 * its time in seconds in *time_s (as the device measures it: a clock
 * around a BLAS iteration, or what the torch worker answers), and
 * optionally a report of each round as it ends; both with ctx. */
typedef struct lbs_resize_round lbs_resize_round;
typedef struct lbs_resize_bench {
	lbs_status (*run)(void *ctx, int64_t batch, double *time_s, lbs_error *err);
	void (*report)(void *ctx, const lbs_resize_round *r); /* NULL: none */
	void *ctx;
} lbs_resize_bench;

typedef struct lbs_resize_opts {
	int64_t batch;        /* b, the constant batch */
	int64_t delta;        /* the alternating batches are b - delta and b + delta (>= 1) */
	int rounds;           /* rounds of the comparison, one fresh batch each */
	int block;            /* iterations a block (even) */
	const int64_t *fresh; /* rounds batches never run before, none of the three above */
} lbs_resize_opts;

/* The runs after a fresh batch's re-entry, back to back, of which the
 * median is its repeated time. */
#define LBS_RESIZE_REPEATS 3

/* One round's times. */
struct lbs_resize_round {
	int round;             /* from 0 */
	double constant_s;     /* `block` iterations at b */
	double split_s;        /* `block` / 2 iterations at b - delta, then as many at b + delta,
				  each half timed after an untimed run at its batch */
	double alternating_s;  /* `block` iterations alternating b - delta and b + delta */
	int64_t fresh;         /* the round's fresh batch */
	double first_s;        /* its first run, after a run of b */
	double reentry_s;      /* its next run, after a run of b again */
	double repeated_s;     /* the median of LBS_RESIZE_REPEATS runs of it after that */
};

/* Medians over the rounds, with their range (none floored at 0). */
typedef struct lbs_resize_result {
	double resize_cost, resize_lo, resize_hi;           /* alternating / split - 1 */
	double against_b, against_b_lo, against_b_hi;       /* alternating / constant - 1 */
	double new_batch_cost, new_lo, new_hi;              /* first / re-entry - 1 */
	double first_vs_repeated, first_lo, first_hi;       /* first / repeated - 1 */
} lbs_resize_result;

/* Measures the re-sizing costs the simulation takes (lbs_cost.resize_cost
 * and new_batch_cost, doc/model.md): first each of b - delta, b and b +
 * delta runs twice, untimed, so that none is new; then in each round, in
 * an order that turns from round to round, three blocks of as many
 * samples: `block` iterations alternating b - delta and b + delta (every
 * one a change of batch), the same iterations split in two runs of one
 * batch each (no change), and `block` iterations at b; and a fresh batch:
 * its first run and its next, each after a run of b, then
 * LBS_RESIZE_REPEATS back to back. resize_cost is alternating / split - 1:
 * the same batches, so a time per sample that is not the same at b -
 * delta, b and b + delta (a GEMM's tiles) does not count as a cost of
 * changing; alternating / constant - 1 is reported beside it. Interleaved
 * in rounds, a drift of the machine moves every block alike.
 * new_batch_cost is first / re-entry - 1: both follow a change of batch,
 * so they differ by the batch being new alone, as the simulation
 * multiplies the two costs; first / repeated - 1 is both together.
 * A block's time is the sum of its iterations'. LBS_EINTERNAL for options
 * outside their ranges; a run's error as it is. */
lbs_status lbs_calib_resize(const lbs_resize_bench *bench, const lbs_resize_opts *o, lbs_resize_result *r,
			    lbs_error *err);

/* ---- profiles from the tables (models/calib/from_table.c) --------------- */

struct lbs_profile;

/* One profile fitted to a published table, and its file name. */
typedef struct lbs_table_profile {
	char file[64];             /* e.g. "v100-resnet50.ini" */
	struct lbs_profile *profile;
	lbs_kind_score score[4];   /* each GPU kind's held-out MAPE (calibrate prints them) */
	size_t n_score;
} lbs_table_profile;

/* Reads every table under data_dir (the layout of traces/data) and fits a
 * profile to each (device, model) series: of the GPU kinds (piecewise,
 * power, quadratic), the one lbs_calib_choose picks by held-out error; its
 * memory cap the largest batch that ran; `software` names the versions that fit. The
 * profiles come in a fixed order (Gavel's table order, then Pollux's
 * models). Free with lbs_table_profiles_free. */
lbs_status lbs_calib_from_tables(const char *data_dir, const char *software,
				 lbs_table_profile **out, size_t *n, lbs_error *err);
void lbs_table_profiles_free(lbs_table_profile *tp, size_t n);

/* ---- frameworks out of process ---------------------------------------- */

/* A framework that trains for real in a process of its own and times its
 * steps (the testbed's torch worker, testbed/torch.h). models/ does not
 * know the testbed: the calibrate command's caller hands one in
 * (lbs_calibrate_command_with; cli/main.c and the testbed's calibration). */
typedef struct lbs_calib_framework {
	const char *name;    /* "torch": the option --NAME */
	const char *summary; /* e.g. "PyTorch" */
	/* Starts one worker of network `net` for batches up to max_batch, into
	 * *ctx, its version into version: LBS_ENOTESTBED naming what is missing
	 * (the interpreter, the framework), LBS_EUSAGE for a network it does not
	 * build. */
	lbs_status (*open)(const char *net, int64_t max_batch, void **ctx, char *version, size_t len,
			   lbs_error *err);
	/* One training step of `batch` samples: its compute time (forward and
	 * backward, wall). */
	lbs_status (*step)(void *ctx, int64_t batch, double *time_s, lbs_error *err);
	void (*close)(void *ctx);
} lbs_calib_framework;

#endif
