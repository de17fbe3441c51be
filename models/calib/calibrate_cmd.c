/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "models/calib/calibrate_cmd.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <gsl/gsl_version.h>

#include "config.h"
#include "models/calib.h"
#include "models/calib/gpu_fit.h"
#include "models/cpu.h"

#include "models/nets.h"
#include "models/calib/convergence.h"
#include "models/profile.h"
#include "util/clock.h"
#include "util/outfile.h"
#include "util/units.h"

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: lbsim calibrate --blas MODEL [--batches LIST] [--reps N] [--warmup N]\n"
		"                       [--threads N] [--memory SIZE] [-o PROFILE]\n"
		"                       [--resize [--resize-batch N] [--resize-delta N] [--resize-rounds N]]\n"
		"       lbsim calibrate --torch MODEL [--batches LIST] [--reps N] [--warmup N]\n"
		"                       [--memory SIZE] [-o PROFILE]\n"
		"                       [--resize [--resize-batch N] [--resize-delta N] [--resize-rounds N]]\n"
		"       lbsim calibrate --cuda MODEL [--batches LIST] [--reps N] [--warmup N]\n"
		"                       [--gpu N] [--memory SIZE] [-o PROFILE]\n"
		"       lbsim calibrate --from-table [--data DIR] [-o DIR]\n"
		"       lbsim calibrate --fit TIMES.csv --device cpu|gpu [--model NAME]\n"
		"                       [--device-name TEXT] [-o PROFILE]\n"
		"       lbsim calibrate --convergence LOSS.csv --target LOSS [--smooth N] [-o FILE]\n"
		"       lbsim calibrate --gpus\n"
		"       lbsim calibrate --datasheet DEVICE:MODEL[:TOKENS[:RECOMPUTE]] [--batches LIST] [-o PROFILE]\n"
		"       lbsim calibrate --list\n"
		"       lbsim calibrate --layers MODEL [--batch N] [--seq N] [--tp N] [--recompute MODE]\n"
		"       lbsim calibrate --keys\n"
		"\n"
		"Fits cost profiles to measurements (doc/profiles.md) and describes the networks\n"
		"whose training lbsim calibrates (doc/nets.md).\n"
		"\n"
		"Options:\n"
		"      --blas MODEL        time MODEL's training GEMMs through CBLAS on this machine\n"
		"                          at each batch, fit t(b) = t0 + per_sample*b (CPU)\n"
		"      --torch MODEL       time MODEL's real PyTorch training steps (forward and\n"
		"                          backward, one thread; python3-torch) at each batch in the\n"
		"                          testbed's torch worker, fit t(b) = t0 + per_sample*b (CPU)\n"
		"      --cuda MODEL        the same through cuBLAS on a GPU; fit the GPU cost kind\n"
		"                          (piecewise, power, quadratic) of least held-out error\n"
		"      --seq N, --tp N, --recompute none|selective|full  with --layers, a\n"
		"                          transformer's sequence length, tensor-parallel degree (one\n"
		"                          rank's operations) and recomputation (doc/transformers.md)\n"
		"      --gpus              the GPUs' datasheets, the efficiency fitted to published\n"
		"                          throughputs and its error on those held out (doc/gpus.md)\n"
		"      --datasheet DEVICE:MODEL[:TOKENS[:selective|full]]  a GPU profile of MODEL on\n"
		"                          DEVICE (recomputation: selective, flash attention's) predicted\n"
		"                          from the datasheet (default batches 1,2,3,4,6,8,12,16,24,32\n"
		"                          up to the memory cap)\n"
		"      --batches LIST      batch sizes, comma-separated (default 1,2,4,8,16,32)\n"
		"      --reps N            timed repetitions per batch (default 5); the median counts\n"
		"      --warmup N          untimed repetitions before them (default 1)\n"
		"      --threads N         BLAS threads (default: the BLAS's own choice)\n"
		"      --gpu N             the CUDA device (default 0)\n"
		"      --memory SIZE       device memory for the memory cap, e.g. '16 GB' (default:\n"
		"                          this machine's RAM, or the GPU's memory)\n"
		"      --resize            --blas, --torch: also measure the re-sizing costs\n"
		"                          (doc/profiles.md): two batches alternating against the\n"
		"                          same without a change, and fresh batches' first runs;\n"
		"                          print them with their range, write resize_cost and\n"
		"                          new_batch_cost\n"
		"      --resize-batch N    the batch between the two (default 32)\n"
		"      --resize-delta N    alternate N below and above it (default 2)\n"
		"      --resize-rounds N   rounds, and fresh batches (default 7)\n"
		"      --from-table        fit a GPU profile to every (device, model) of the published\n"
		"                          tables (Gavel: K80, P100, V100; Pollux: T4), of the kind\n"
		"                          with the least held-out error; write them and print their\n"
		"                          fits and held-out errors\n"
		"      --data DIR          where the tables are (default: traces/data)\n"
		"      --fit TIMES.csv     fit a profile to your own measured step times: a CSV with\n"
		"                          the header batch,time[,repetitions] (doc/profiles.md); print\n"
		"                          the fit and its held-out error\n"
		"      --device cpu|gpu    --fit: the device class: cpu fits t0 + per_sample*b, gpu the\n"
		"                          GPU kind of least held-out error, capped at the largest batch\n"
		"      --model NAME        --fit: the model trained (default: the CSV's name)\n"
		"      --device-name TEXT  --fit: the device measured, e.g. 'NVIDIA A100 40GB'\n"
		"  -o, --output PATH       --blas, --cuda, --fit: write the profile there;\n"
		"                          --from-table: the directory of the profiles (default: profiles)\n"
		"      --list              the networks, their parameters and work per sample\n"
		"      --layers MODEL      the layer table of MODEL as CSV: shapes, parameters,\n"
		"                          activations and GEMM shapes\n"
		"      --batch N           the batch of the GEMM shapes in --layers (default 1)\n"
		"      --keys              the reference of every profile key (Markdown)\n"
		"  -h, --help              this help\n");
}

static bool parse_count(const char *opt, const char *text, int64_t min, int64_t max, int64_t *out)
{
	char why[256];
	if (!lbs_parse_int(text, out, why, sizeof why) || *out < min || *out > max) {
		fprintf(stderr, "lbsim calibrate: %s %s: expected an integer from %lld to %lld\n", opt, text,
			(long long)min, (long long)max);
		return false;
	}
	return true;
}

/* Writes profile p to path whole or not at all (util/outfile.h): a failure
 * or a kill leaves any old file as it was. */
static lbs_status write_profile(const lbs_profile *p, const char *path, lbs_error *err)
{
	lbs_outfile o;
	lbs_status st = lbs_outfile_open(&o, path, err);
	if (st != LBS_OK)
		return st;
	if ((st = lbs_profile_write(p, o.f, err)) != LBS_OK) {
		lbs_outfile_abort(&o);
		return st;
	}
	return lbs_outfile_commit(&o, err);
}

/* Checks, before anything is measured, that write_profile can write
 * path (its directory exists and takes files): a calibration takes
 * minutes, and its result is not to be lost to a typing error. */
static lbs_status check_writable(const char *path, lbs_error *err)
{
	lbs_tmp t;
	lbs_status st = lbs_tmp_create(&t, path, false, err);
	lbs_tmp_remove(&t);
	return st;
}

static void software(char *buf, size_t len)
{
	lbs_fmt(buf, len, "lbsim %s, GSL %s", PACKAGE_VERSION, gsl_version);
}

static void print_fit(const char *label, const lbs_profile *p)
{
	char a[32], b[32];
	if (p->cost.ops == &lbs_cost_piecewise) {
		lbs_format_quantity(p->cost.t_flat_s, LBS_DIM_TIME, a, sizeof a);
		lbs_format_quantity(p->cost.per_sample_s, LBS_DIM_TIME, b, sizeof b);
		printf("%-28s flat %-11s to %5lld, then %-11s/sample", label, a,
		       (long long)p->cost.saturation_batch, b);
	} else if (p->cost.ops == &lbs_cost_power) {
		lbs_format_quantity(p->cost.t0_s, LBS_DIM_TIME, a, sizeof a);
		lbs_format_quantity(p->cost.per_sample_s, LBS_DIM_TIME, b, sizeof b);
		printf("%-28s t0 %-11s + %-11s * b^%-6.4g       ", label, a, b, p->cost.exponent);
	} else if (p->cost.ops == &lbs_cost_quadratic) {
		char c[32];
		lbs_format_quantity(p->cost.t0_s, LBS_DIM_TIME, a, sizeof a);
		lbs_format_quantity(p->cost.per_sample_s, LBS_DIM_TIME, b, sizeof b);
		lbs_format_quantity(p->cost.per_sample_sq_s, LBS_DIM_TIME, c, sizeof c);
		printf("%-28s t0 %-11s + %-11s b + %-11s b^2", label, a, b, c);
	} else {
		lbs_format_quantity(p->cost.t0_s, LBS_DIM_TIME, a, sizeof a);
		lbs_format_quantity(p->cost.per_sample_s, LBS_DIM_TIME, b, sizeof b);
		printf("%-28s t0 %-11s + %-11s/sample", label, a, b);
	}
	printf("  R^2 %.4f  MAPE %5.2f%%", p->r2, 100 * p->mape);
	if (p->heldout_points > 0)
		printf("  held-out %5.2f%% (%lld)", 100 * p->heldout_mape, (long long)p->heldout_points);
	printf("\n");
}

/* Each GPU kind's held-out MAPE on one set of points, the chosen kind
 * starred (nothing when no kind was compared). */
static void print_scores(const lbs_kind_score *score, size_t n, const lbs_cost_ops *chosen)
{
	if (!n)
		return;
	printf("held-out MAPE by cost kind (* chosen: the least):");
	for (size_t k = 0; k < n; k++) {
		if (score[k].fits && score[k].n)
			printf(" %s %.2f%%%s", score[k].kind->name, 100 * score[k].mape,
			       score[k].kind == chosen ? "*" : "");
		else
			printf(" %s %s", score[k].kind->name, score[k].fits ? "-" : "(no fit)");
	}
	printf("\n");
}

/* The held-out MAPE of every profile as a model x device table, with each
 * device's mean. */
static void print_heldout(const lbs_table_profile *tp, size_t n)
{
	const char *dev[16], *mod[64];
	size_t nd = 0, nm = 0;
	for (size_t i = 0; i < n; i++) {
		const char *d = tp[i].profile->device, *m = tp[i].profile->model;
		size_t j;
		for (j = 0; j < nd && strcmp(dev[j], d); j++)
			;
		if (j == nd && nd < 16)
			dev[nd++] = d;
		for (j = 0; j < nm && strcmp(mod[j], m); j++)
			;
		if (j == nm && nm < 64)
			mod[nm++] = m;
	}
	printf("\nheld-out MAPE (each interior batch predicted by a fit to the others):\n%-26s", "model");
	for (size_t j = 0; j < nd; j++)
		printf(" %22.22s", dev[j]);
	printf("\n");
	double sum[16] = { 0 };
	size_t cnt[16] = { 0 };
	for (size_t m = 0; m < nm; m++) {
		printf("%-26.26s", mod[m]);
		for (size_t d = 0; d < nd; d++) {
			const lbs_profile *p = NULL;
			for (size_t i = 0; i < n; i++)
				if (!strcmp(tp[i].profile->device, dev[d]) && !strcmp(tp[i].profile->model, mod[m]))
					p = tp[i].profile;
			if (p && p->heldout_points > 0) {
				printf(" %21.2f%%", 100 * p->heldout_mape);
				sum[d] += p->heldout_mape;
				cnt[d]++;
			} else {
				printf(" %22s", "-");
			}
		}
		printf("\n");
	}
	printf("%-26s", "mean");
	double all = 0;
	size_t nall = 0;
	for (size_t d = 0; d < nd; d++) {
		printf(" %21.2f%%", cnt[d] ? 100 * sum[d] / (double)cnt[d] : 0.0);
		all += sum[d];
		nall += cnt[d];
	}
	printf("\nmean over all %zu fits: %.2f%%\n", nall, nall ? 100 * all / (double)nall : 0.0);

	/* Each kind's held-out error: the profile takes the least (*). */
	printf("\nheld-out MAPE by cost kind (* the kind chosen: the least held-out error):\n%-28s", "profile");
	for (size_t k = 0; n && k < tp[0].n_score; k++)
		printf(" %11s", tp[0].score[k].kind->name);
	printf("\n");
	for (size_t i = 0; i < n; i++) {
		printf("%-28s", tp[i].file);
		for (size_t k = 0; k < tp[i].n_score; k++) {
			const lbs_kind_score *sc = &tp[i].score[k];
			if (sc->fits && sc->n)
				printf(" %9.2f%%%c", 100 * sc->mape,
				       sc->kind == tp[i].profile->cost.ops ? '*' : ' ');
			else
				printf(" %11s", sc->fits ? "-" : "no fit");
		}
		printf("\n");
	}
}

static int from_table(const char *data_dir, const char *out_dir)
{
	lbs_error err = { 0 };
	lbs_table_profile *tp;
	size_t n;
	char sw[128], path[1024];
	software(sw, sizeof sw);
	lbs_status st = lbs_calib_from_tables(data_dir, sw, &tp, &n, &err);
	if (st != LBS_OK) {
		fprintf(stderr, "lbsim calibrate: %s\n", err.msg);
		return st;
	}
	for (size_t i = 0; i < n && st == LBS_OK; i++)
		st = write_profile(tp[i].profile, lbs_fmt(path, sizeof path, "%s/%s", out_dir, tp[i].file),
				   &err);
	if (st != LBS_OK) {
		fprintf(stderr, "lbsim calibrate: %s\n", err.msg);
		lbs_table_profiles_free(tp, n);
		return st;
	}
	for (size_t i = 0; i < n; i++)
		print_fit(tp[i].file, tp[i].profile);
	print_heldout(tp, n);
	printf("%zu profiles written to %s/\n", n, out_dir);
	lbs_table_profiles_free(tp, n);
	return 0;
}

/* ---- a user's measured step times (--fit) ------------------------------ */

typedef struct fit_opts {
	const char *csv, *model, *device_name, *output;
	int device_class; /* -1: not given */
	const char *command;
} fit_opts;

/* The CSV's name without folder and extension: "a100-bert" of
 * "runs/a100-bert.csv". */
static void base_name(const char *path, char *out, size_t len)
{
	const char *slash = strrchr(path, '/');
	lbs_fmt(out, len, "%s", slash ? slash + 1 : path);
	char *dot = strrchr(out, '.');
	if (dot && dot != out)
		*dot = '\0';
}

static int fit_times(const fit_opts *o)
{
	lbs_error err = { 0 };
	lbs_step_times t;
	lbs_status st = lbs_calib_read_times(o->csv, &t, &err);
	if (st != LBS_OK) {
		fprintf(stderr, "lbsim calibrate: --fit %s\n", err.msg);
		return st;
	}
	bool gpu = o->device_class == 1;
	size_t need = gpu ? 3 : 2;
	if (t.n < need) {
		fprintf(stderr, "lbsim calibrate: --fit %s: %zu distinct batch%s: a %s profile needs at least "
			"%zu\n", o->csv, t.n, t.n == 1 ? "" : "es", gpu ? "GPU" : "CPU (linear)",
			need);
		lbs_step_times_free(&t);
		return LBS_EINPUT;
	}
	lbs_profile *p = calloc(1, sizeof *p);
	if (!p || !(p->point = calloc(t.n, sizeof *p->point))) {
		fprintf(stderr, "lbsim calibrate: out of memory\n");
		free(p);
		lbs_step_times_free(&t);
		return LBS_EINTERNAL;
	}
	for (size_t i = 0; i < t.n; i++)
		p->point[i] = (lbs_profile_point){ (int64_t)t.batch[i], t.time_s[i], t.spread[i] };
	p->n_points = t.n;
	/* A GPU's cap, as for the published tables: the largest batch that
	 * ran. A CPU's memory is rarely the limit: none. */
	p->cost.max_batch = gpu ? (int64_t)t.batch[t.n - 1] : INT64_MAX;
	lbs_kind_score score[4];
	size_t n_score = 0;
	if (gpu)
		st = lbs_calib_fit_gpu(p, score, &n_score, &err);
	else
		st = lbs_profile_fit(p, &lbs_cost_linear, &err);
	if (st != LBS_OK) {
		fprintf(stderr, "lbsim calibrate: --fit %s: %s\n", o->csv, err.msg);
		goto out;
	}
	char name[LBS_VALUE_MAX], sw[128];
	base_name(o->csv, name, sizeof name);
	software(sw, sizeof sw);
	p->format = LBS_PROFILE_FORMAT;
	p->device_class = o->device_class;
	p->source = LBS_SOURCE_MEASURED;
	lbs_fmt(p->device, sizeof p->device, "%.150s",
		o->device_name ? o->device_name : gpu ? "a GPU (measured by the user)" : "a CPU (measured by the user)");
	lbs_fmt(p->host, sizeof p->host, "%s", p->device);
	lbs_fmt(p->model, sizeof p->model, "%.150s", o->model ? o->model : name);
	lbs_fmt(p->description, sizeof p->description, "measured step times, batch sizes %g to %g (%zu rows)",
		t.batch[0], t.batch[t.n - 1], t.rows);
	if (!gpu)
		lbs_fmt(p->method, sizeof p->method, "ordinary least squares on the means (gsl_fit_linear)");
	lbs_fmt(p->origin, sizeof p->origin, "step times measured by the user (CSV batch,time"
		"[,repetitions]); per batch the mean of its rows, weighted by repetitions");
	char *abs = realpath(o->csv, NULL);
	const char *data = abs && strlen(abs) < 180 ? abs : strlen(o->csv) < 180 ? o->csv : name;
	lbs_fmt(p->data, sizeof p->data, "%s", data);
	free(abs);
	lbs_fmt(p->software, sizeof p->software, "%s", sw);
	if (strlen(o->command) > 170)
		lbs_fmt(p->command, sizeof p->command, "%.160s ...", o->command);
	else
		lbs_fmt(p->command, sizeof p->command, "%s", o->command);
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(p->date, sizeof p->date, "%Y-%m-%dT%H:%M:%SZ", &tm);

	printf("calibrate --fit %s: %zu rows, %zu batches, %s: %s\n", o->csv, t.rows, t.n, gpu ? "gpu" : "cpu",
	       p->cost.ops->name);
	print_scores(score, n_score, p->cost.ops);
	printf("%8s %12s %12s %8s\n", "batch", "time_s", "fit_s", "spread");
	for (size_t i = 0; i < t.n; i++) {
		printf("%8lld %12.6g %12.6g", (long long)p->point[i].batch, p->point[i].time_s,
		       lbs_cost_time_s(&p->cost, p->point[i].batch));
		if (isnan(p->point[i].spread))
			printf(" %8s\n", "-");
		else
			printf(" %7.1f%%\n", 100 * p->point[i].spread);
	}
	print_fit(o->output ? o->output : name, p);
	if (p->heldout_points > 0)
		printf("held-out MAPE (each interior batch predicted by a fit to the others): %.2f%% over %lld "
		       "batches\n", 100 * p->heldout_mape, (long long)p->heldout_points);
	else
		printf("held-out MAPE: none (too few batches to leave one out and still fit)\n");
	if (o->output) {
		if ((st = write_profile(p, o->output, &err)) != LBS_OK)
			fprintf(stderr, "lbsim calibrate: %s\n", err.msg);
		else
			printf("profile: %s\n", o->output);
	}
out:
	lbs_profile_destroy(p);
	free(p);
	lbs_step_times_free(&t);
	return st;
}

/* ---- microbenchmarks --------------------------------------------------- */

typedef struct bench_opts {
	const char *model;
	bool cuda;
	bool torch; /* a framework's training steps (the caller's, fw) instead of CBLAS */
	const lbs_calib_framework *fw;
	int64_t *batches;
	size_t n_batches;
	int64_t reps, warmup, threads, gpu;
	double memory_bytes; /* 0: the device's */
	const char *output;
	char command[LBS_VALUE_MAX];
	bool resize;                /* --resize: measure the re-sizing costs too */
	int64_t resize_batch, resize_delta, resize_rounds;
} bench_opts;

/* "1,2,4" into increasing, distinct batches. */
static bool parse_batches(const char *text, bench_opts *o)
{
	char buf[1024], *save = NULL;
	lbs_fmt(buf, sizeof buf, "%s", text);
	size_t cap = 1;
	for (const char *c = text; *c; c++)
		cap += *c == ',';
	free(o->batches);
	o->batches = calloc(cap, sizeof *o->batches);
	o->n_batches = 0;
	if (!o->batches)
		return false;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int64_t b;
		if (!parse_count("--batches", tok, 1, 1000000000, &b))
			return false;
		if (o->n_batches && b <= o->batches[o->n_batches - 1]) {
			fprintf(stderr, "lbsim calibrate: --batches %s: batches must increase\n", text);
			return false;
		}
		o->batches[o->n_batches++] = b;
	}
	if (o->n_batches < 2) {
		fprintf(stderr, "lbsim calibrate: --batches %s: at least two batches are needed for a fit\n", text);
		return false;
	}
	return true;
}

/* --blas: the datasheet model (doc/gpus.md), its efficiency fitted to
 * published GPU figures only, predicting the batches just measured from
 * this CPU's own peak FLOP/s (clock x cores x vector width) and its
 * STREAM-triad bandwidth: a check of the model on a device it never saw. */
static void predict_from_peak(const lbs_net *net, int threads, const char *core, double share, const lbs_profile *p)
{
	lbs_cpu_info ci;
	if (lbs_cpu_info_read(&ci)) {
		printf("from this CPU's peak: not predicted (/proc/cpuinfo gives no clock)\n");
		return;
	}
	size_t n;
	const lbs_gpu_figure *f = lbs_gpu_figures(&n);
	double *obs = calloc(n, sizeof *obs), rms;
	lbs_gpu_eff e;
	lbs_error err = { 0 };
	for (size_t i = 0; obs && i < n; i++)
		obs[i] = f[i].tokens_per_s;
	lbs_status st = obs ? lbs_gpu_fit(f, obs, n, &e, &rms, &err) : LBS_EINTERNAL;
	free(obs);
	if (st != LBS_OK) {
		printf("from this CPU's peak: not predicted (%s)\n", err.msg[0] ? err.msg : "out of memory");
		return;
	}
	/* 64 MB arrays: well past the last-level caches of today's CPUs */
	double bw = lbs_cpu_triad_bandwidth((size_t)64 << 20, 5), fma = lbs_cpu_fma_peak(0.6);
	double fma512 = ci.flops_per_cycle >= 64 ? lbs_cpu_fma512_peak(0.6) : 0, clock;
	/* the BLAS reaches no more than its kernels' vectors: OpenBLAS on a
	 * CPU it does not know runs narrower ones than the CPU has */
	int kernel = lbs_blas_core_flops_per_cycle(core);
	bool narrow = kernel > 0 && kernel < ci.flops_per_cycle;
	double core_peak = lbs_cpu_blas_peak(&ci, kernel, fma, fma512, &clock);
	char title[192];
	lbs_gpu_spec d = lbs_cpu_spec(&ci, threads, bw, title, sizeof title);
	printf("this CPU's peak: %s, %d fp32 FLOP/cycle (%s): %.1f GFLOP/s at the reported clock", title,
	       ci.flops_per_cycle, ci.isa, d.fp32_flops / 1e9);
	if (fma512 > 0)
		printf(", %.1f GFLOP/s measured (16-lane FMAs; %.2f GHz from the 8-lane ones)", fma512 * threads / 1e9,
		       clock / 1e9);
	else if (fma > 0)
		/* a core's measured FMA rate: the clock it really runs at */
		printf(", %.1f GFLOP/s measured (%.2f GHz x %d a core)", fma * threads / 1e9, clock / 1e9,
		       ci.flops_per_cycle);
	if (narrow)
		printf("; the BLAS's %s kernels use %d of those FLOP/cycle: %.1f GFLOP/s", core, kernel,
		       core_peak * threads / 1e9);
	d.fp32_flops = d.tensor_flops = core_peak * threads;
	printf("; triad bandwidth %.1f GB/s\n", bw / 1e9);
	/* a timing made while other work took part of the cores measures the
	 * machine's load, not this CPU: say how much of them it had */
	printf("the timed batches had %.0f%% of their %d core%s (CPU time over wall time)%s\n", 100 * share, threads,
	       threads == 1 ? "" : "s", share < 0.9 ? ": the machine was busy, the errors below are its load's" : "");
	printf("predicted from that peak%s and bandwidth by the datasheet model (doc/gpus.md; efficiency fitted to "
	       "A100 figures only):\n", narrow ? " (the BLAS kernels')" : fma > 0 ? " (measured)" : "");
	/* a CPU launches no kernels and has no multiprocessors to fill: the
	 * GPU fit's per-operation overhead and t_half, kept in the first
	 * prediction, are taken out of the second (eff_max and mem alone) */
	lbs_gpu_eff roof = e;
	roof.overhead = 0;
	roof.f_half = 0;
	printf("%8s %12s %12s %8s %14s %8s\n", "batch", "measured_s", "predicted_s", "error", "eff_max_only_s",
	       "error");
	double *errs = calloc(2 * (p->n_points ? p->n_points : 1), sizeof *errs), worst[2] = { 0, 0 };
	size_t k = 0;
	for (size_t i = 0; errs && i < p->n_points; i++) {
		double pred = lbs_gpu_gemm_calls_time(&d, &e, net, p->point[i].batch);
		double pr = lbs_gpu_gemm_calls_time(&d, &roof, net, p->point[i].batch);
		double m = p->point[i].time_s, rel = pred / m - 1, rr = pr / m - 1;
		printf("%8lld %12.6f %12.6f %+7.1f%% %14.6f %+7.1f%%\n", (long long)p->point[i].batch, m, pred,
		       100 * rel, pr, 100 * rr);
		errs[k] = fabs(rel);
		errs[p->n_points + k++] = fabs(rr);
		worst[0] = fmax(worst[0], fabs(rel));
		worst[1] = fmax(worst[1], fabs(rr));
	}
	if (k) {
		printf("from peak: median |error| %.1f%% (worst %.1f%%) with the GPU fit as it is, %.1f%% (worst "
		       "%.1f%%) with eff_max %.3f alone, over %zu batches\n", 100 * lbs_calib_median(errs, k),
		       100 * worst[0], 100 * lbs_calib_median(errs + p->n_points, k), 100 * worst[1], e.eff_max, k);
	}
	free(errs);
}

/* OpenBLAS on a CPU it does not know (newer than the library, or one a
 * virtual machine hides) falls back to narrow kernels: what is measured is
 * then that BLAS, not what the CPU can do. Said, not refused. */
static void warn_narrow_kernels(const lbs_blas *lib)
{
	lbs_cpu_info ci;
	const char *core = lbs_blas_core(lib);
	int k = lbs_blas_core_flops_per_cycle(core);
	if (k == 0 || lbs_cpu_info_read(&ci) || k >= ci.flops_per_cycle)
		return;
	const char *fit = ci.flops_per_cycle >= 64 ? "SkylakeX" : ci.flops_per_cycle >= 32 ? "Haswell" : "Sandybridge";
	const char *forced = getenv("OPENBLAS_CORETYPE");
	char why[128];
	if (forced && *forced)
		lbs_fmt(why, sizeof why, "OPENBLAS_CORETYPE=%.40s chose them", forced);
	else
		lbs_fmt(why, sizeof why, "it does not know this CPU");
	fprintf(stderr,
		"lbsim calibrate: warning: OpenBLAS runs its %s kernels (%d fp32 FLOP/cycle) on a CPU whose vectors "
		"take %d (%s): %s, and its GEMMs reach a fraction of the CPU's peak. The profile measures this BLAS "
		"as it runs here; OPENBLAS_CORETYPE=%s selects kernels for these vectors (doc/profiles.md)\n", core, k,
		ci.flops_per_cycle, ci.isa, why, fit);
}

static void cpu_host(char *buf, size_t len, double *memory_bytes)
{
	char model[128] = "unknown CPU", line[256];
	FILE *f = fopen("/proc/cpuinfo", "r");
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "model name", 10)) {
			const char *v = strchr(line, ':');
			if (v) {
				lbs_fmt(model, sizeof model, "%s", v + 2);
				model[strcspn(model, "\n")] = '\0';
			}
			break;
		}
	if (f)
		fclose(f);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	double mem = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
	struct utsname u;
	char kernel[80] = "";
	if (uname(&u) == 0)
		lbs_fmt(kernel, sizeof kernel, ", %s %s", u.sysname, u.release);
	lbs_fmt(buf, len, "%s, %ld logical CPUs, %.1f GB RAM%s", model, cpus, mem / 1e9, kernel);
	*memory_bytes = mem;
}

/* What the re-sizing measurement runs: a BLAS iteration on one set of
 * buffers, timed by the clock around it, or the torch worker's, timed as
 * it answers (its forward, backward and optimizer step, not the pipes). */
typedef struct resize_ctx {
	lbs_blas_work *work;
	const lbs_calib_framework *fw; /* NULL: the BLAS iteration */
	void *fw_ctx;
} resize_ctx;

static lbs_status resize_run(void *ctx, int64_t batch, double *time_s, lbs_error *err)
{
	resize_ctx *c = ctx;
	if (c->fw)
		return c->fw->step(c->fw_ctx, batch, time_s, err);
	double t0 = lbs_monotonic_s();
	lbs_blas_work_run(c->work, batch);
	*time_s = lbs_monotonic_s() - t0;
	return LBS_OK;
}

static void resize_report(void *ctx, const lbs_resize_round *r)
{
	(void)ctx;
	printf("%5d %10.6f %10.6f %10.6f %+8.2f%% %+8.2f%% %6lld %10.6f %10.6f %10.6f %+8.2f%% %+8.2f%%\n",
	       r->round + 1, r->alternating_s, r->split_s, r->constant_s, 100 * (r->alternating_s / r->split_s - 1),
	       100 * (r->alternating_s / r->constant_s - 1), (long long)r->fresh, r->first_s, r->reentry_s,
	       r->repeated_s, 100 * (r->first_s / r->reentry_s - 1), 100 * (r->first_s / r->repeated_s - 1));
	fflush(stdout);
}

static bool in_list(const int64_t *x, size_t n, int64_t v)
{
	for (size_t i = 0; i < n; i++)
		if (x[i] == v)
			return true;
	return false;
}

/* --resize: the re-sizing costs of MODEL's BLAS iteration on one set of
 * buffers (the testbed's blas workers' lbs_blas_work), or of the torch
 * worker that measured the sweep (torch not NULL), printed with their
 * range over the rounds and put in p's [cost], floored at 0. The fresh
 * batches are the first above b + delta that the sweep did not run (nor
 * the torch worker's warm-up, at the sweep's largest batch). */
static lbs_status measure_resize(lbs_blas *lib, const lbs_calib_framework *fw, void *fw_ctx, const lbs_net *net,
				 const bench_opts *o, double max_bytes, lbs_profile *p, lbs_error *err)
{
	const int block = 8;
	int64_t *fresh = calloc((size_t)o->resize_rounds, sizeof *fresh);
	if (!fresh)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	int64_t next = o->resize_batch + o->resize_delta + 1;
	for (int64_t k = 0; k < o->resize_rounds; k++, next++) {
		while (in_list(o->batches, o->n_batches, next))
			next++;
		fresh[k] = next;
	}
	resize_ctx c = { NULL, fw, fw_ctx };
	lbs_status st = fw ? LBS_OK
			      : lbs_blas_work_create(lib, net, fresh[o->resize_rounds - 1], max_bytes, &c.work, err);
	if (st != LBS_OK) {
		free(fresh);
		return st;
	}
	int64_t lo = o->resize_batch - o->resize_delta, hi = o->resize_batch + o->resize_delta;
	printf("re-sizing, %lld rounds: %d iterations alternating %lld and %lld (alt), the same split in %d "
	       "at %lld then %d at %lld (split), %d at %lld (const); a fresh batch's first run, its next "
	       "after a run of %lld (reentry), then the median of %d back to back (repeated)\n",
	       (long long)o->resize_rounds, block, (long long)lo, (long long)hi, block / 2, (long long)lo,
	       block / 2, (long long)hi, block, (long long)o->resize_batch, (long long)o->resize_batch,
	       LBS_RESIZE_REPEATS);
	printf("%5s %10s %10s %10s %9s %9s %6s %10s %10s %10s %9s %9s\n", "round", "alt_s", "split_s", "const_s",
	       "resize", "vs_const", "fresh", "first_s", "reentry_s", "repeated_s", "new", "first");
	fflush(stdout);
	lbs_resize_bench b = { resize_run, resize_report, &c };
	lbs_resize_opts ro = { o->resize_batch, o->resize_delta, (int)o->resize_rounds, block, fresh };
	lbs_resize_result r;
	st = lbs_calib_resize(&b, &ro, &r, err);
	lbs_blas_work_destroy(c.work);
	free(fresh);
	if (st != LBS_OK)
		return st;
	printf("resize_cost: %+.2f%% (median of alt / split - 1; %+.2f%% to %+.2f%% over the rounds); alt / const - "
	       "1: %+.2f%% (%+.2f%% to %+.2f%%)\n", 100 * r.resize_cost, 100 * r.resize_lo, 100 * r.resize_hi,
	       100 * r.against_b, 100 * r.against_b_lo, 100 * r.against_b_hi);
	printf("new_batch_cost: %+.2f%% (median of first / reentry - 1; %+.2f%% to %+.2f%%); first / repeated - 1: "
	       "%+.2f%% (%+.2f%% to %+.2f%%)\n", 100 * r.new_batch_cost, 100 * r.new_lo, 100 * r.new_hi,
	       100 * r.first_vs_repeated, 100 * r.first_lo, 100 * r.first_hi);
	/* A cost below 0 is the machine's noise: the simulation takes none. */
	p->cost.resize_cost = fmax(0, r.resize_cost);
	p->cost.new_batch_cost = fmax(0, r.new_batch_cost);
	p->has_resize = true;
	printf("profile's re-sizing costs (floored at 0): resize_cost = %.4g%%, new_batch_cost = %.4g%%\n",
	       100 * p->cost.resize_cost, 100 * p->cost.new_batch_cost);
	return LBS_OK;
}

/* `warmup` untimed steps of `batch`, then `reps` timed into times[]. */
static lbs_status fw_time(const lbs_calib_framework *fw, void *ctx, int64_t batch, int64_t warmup, int64_t reps,
			  double *times, lbs_error *err)
{
	lbs_status st = LBS_OK;
	for (int64_t r = -warmup; r < reps && st == LBS_OK; r++) {
		double t;
		if ((st = fw->step(ctx, batch, &t, err)) == LBS_OK && r >= 0)
			times[r] = t;
	}
	return st;
}

static int bench(bench_opts *o)
{
	lbs_net net;
	lbs_error err = { 0 };
	lbs_status st = lbs_net_create(&net, o->model, &err);
	if (st != LBS_OK) {
		fprintf(stderr, "lbsim calibrate: %s %s\n", o->cuda ? "--cuda" : "--blas", err.msg);
		return LBS_EUSAGE;
	}
	if (o->output && (st = check_writable(o->output, &err)) != LBS_OK) {
		fprintf(stderr, "lbsim calibrate: %s\n", err.msg);
		lbs_net_destroy(&net);
		return st;
	}
	lbs_profile *p = calloc(1, sizeof *p);
	double *times = calloc((size_t)o->reps, sizeof *times);
	if (!p || !times || !(p->point = calloc(o->n_batches, sizeof *p->point))) {
		fprintf(stderr, "lbsim calibrate: out of memory\n");
		free(p);
		free(times);
		lbs_net_destroy(&net);
		return LBS_EINTERNAL;
	}
	char sw[128], blas[160];
	software(sw, sizeof sw);
	double device_memory = 0;
	lbs_blas *lib = NULL;
	void *fw_ctx = NULL;
	if (o->torch) {
		char version[64] = "";
		if (!o->fw)
			st = lbs_error_set(&err, LBS_ENOTESTBED, "--torch: no framework worker in this program");
		else
			st = o->fw->open(net.name, o->batches[o->n_batches - 1], &fw_ctx, version, sizeof version, &err);
		if (st == LBS_OK) {
			cpu_host(p->host, sizeof p->host, &device_memory);
			char cpu[128];
			lbs_fmt(cpu, sizeof cpu, "%s", p->host);
			cpu[strcspn(cpu, ",")] = '\0';
			lbs_fmt(p->device, sizeof p->device, "%s (1 %s thread)", cpu, o->fw->summary);
			lbs_fmt(p->software, sizeof p->software, "%s, %s %s (CPU)", sw, o->fw->summary, version);
			p->threads = 1;
			p->device_class = 0;
			p->source = LBS_SOURCE_TORCH;
		}
	} else if (o->cuda) {
		lbs_gpu_info gi;
		if ((st = lbs_cuda_info((int)o->gpu, &gi, &err)) == LBS_OK) {
			lbs_fmt(p->device, sizeof p->device, "%s", gi.name);
			lbs_fmt(p->host, sizeof p->host, "%s, %.1f GB, device %lld", gi.name,
				gi.memory_bytes / 1e9, (long long)o->gpu);
			lbs_fmt(p->software, sizeof p->software, "%s, %s", sw, gi.versions);
			device_memory = gi.memory_bytes;
			p->device_class = 1;
			p->source = LBS_SOURCE_CUDA;
		}
	} else {
		/* (--threads 0: the library's default, one per core) */
		if ((st = lbs_blas_open((int)o->threads, &lib, &err)) == LBS_EUSAGE)
			lbs_error_prefix(&err, "--threads");
	}
	if (lib) {
		cpu_host(p->host, sizeof p->host, &device_memory);
		char cpu[128];
		lbs_fmt(cpu, sizeof cpu, "%s", p->host);
		cpu[strcspn(cpu, ",")] = '\0';
		lbs_blas_describe(lib, blas, sizeof blas);
		warn_narrow_kernels(lib);
		lbs_fmt(p->device, sizeof p->device, "%s (%d BLAS thread%s)", cpu, lbs_blas_threads(lib),
			lbs_blas_threads(lib) == 1 ? "" : "s");
		lbs_fmt(p->software, sizeof p->software, "%s, %s", sw, blas);
		p->threads = lbs_blas_threads(lib);
		p->device_class = 0;
		p->source = LBS_SOURCE_BLAS;
	}
	if (st != LBS_OK) {
		if (err.msg[0])
			fprintf(stderr, "lbsim calibrate: %s\n", err.msg);
		goto out;
	}
	double memory = o->memory_bytes > 0 ? o->memory_bytes : device_memory;
	const char *mode = o->torch ? "--torch" : o->cuda ? "--cuda" : "--blas";
	printf("calibrate %s %s: %s\n%s; %lld timed repetitions after %lld warm-up per batch\n",
	       mode, net.name, net.title, p->software, (long long)o->reps,
	       (long long)o->warmup);
	printf("device: %s\n", p->device);
	printf("%8s %12s %12s %12s %8s %12s %10s\n", "batch", "median_s", "min_s", "max_s", "spread",
	       "samples/s", "GFLOP/s");
	/* the share of its cores the timing had: CPU time over wall time */
	double wall0 = lbs_monotonic_s(), cpu0 = lbs_cpu_time_s();
	for (size_t i = 0; i < o->n_batches; i++) {
		int64_t b = o->batches[i];
		if (o->torch)
			st = fw_time(o->fw, fw_ctx, b, o->warmup, o->reps, times, &err);
		else if (o->cuda)
			st = lbs_cuda_bench((int)o->gpu, &net, b, (int)o->warmup, (int)o->reps, times, &err);
		else
			st = lbs_blas_bench(lib, &net, b, (int)o->warmup, (int)o->reps, 0.5 * device_memory,
					    times, &err);
		if (st != LBS_OK) {
			fprintf(stderr, "lbsim calibrate: %s\n", err.msg);
			goto out;
		}
		double lo = times[0], hi = times[0];
		for (int64_t r = 0; r < o->reps; r++) {
			lo = fmin(lo, times[r]);
			hi = fmax(hi, times[r]);
		}
		double med = lbs_calib_median(times, (size_t)o->reps);
		p->point[i] = (lbs_profile_point){ b, med, (hi - lo) / med };
		p->n_points = i + 1;
		printf("%8lld %12.6f %12.6f %12.6f %7.1f%% %12.1f %10.2f\n", (long long)b, med, lo, hi,
		       100 * (hi - lo) / med, (double)b / med, lbs_net_flops(&net, b) / med / 1e9);
		fflush(stdout);
	}
	double wall = lbs_monotonic_s() - wall0;
	int n_threads = lib ? lbs_blas_threads(lib) : 1;
	double share = wall > 0 ? (lbs_cpu_time_s() - cpu0) / (wall * n_threads) : 0;
	for (size_t i = 1; i < p->n_points; i++)
		if (!(p->point[i].time_s > p->point[i - 1].time_s))
			printf("note: the median at batch %lld is not above the one at %lld\n",
			       (long long)p->point[i].batch, (long long)p->point[i - 1].batch);
	int64_t cap = lbs_net_max_batch(&net, memory);
	p->cost.max_batch = cap > 0 ? cap : INT64_MAX;
	/* a GPU: the GPU kinds, chosen by held-out error (with two batches,
	 * only those that fit two points) */
	lbs_kind_score score[4];
	size_t n_score = 0, n_out = 0;
	/* a CPU timed here, where a host's stall can hold a batch's every
	 * repetition: the robust line (lbs_calib_fit_robust) */
	double *weight = o->cuda ? NULL : malloc(p->n_points * sizeof *weight);
	if (o->cuda)
		st = lbs_calib_fit_gpu(p, score, &n_score, &err);
	else if (!weight)
		st = lbs_error_set(&err, LBS_EINTERNAL, "out of memory");
	else
		st = lbs_profile_fit_robust(p, weight, &n_out, &err);
	if (st != LBS_OK) {
		free(weight);
		fprintf(stderr, "lbsim calibrate: fit: %s\n", err.msg);
		goto out;
	}
	for (size_t i = 0; weight && i < p->n_points; i++)
		if (!(weight[i] > 0))
			printf("note: batch %lld weighted out of the fit: its median %.6f s is %.2f x the line's, "
			       "further than the batches' robust scatter allows (doc/profiles.md, \"Fitting\")\n",
			       (long long)p->point[i].batch, p->point[i].time_s,
			       p->point[i].time_s / lbs_cost_time_s(&p->cost, p->point[i].batch));
	free(weight);
	const lbs_cost_ops *kind = p->cost.ops;
	print_scores(score, n_score, kind);
	p->format = LBS_PROFILE_FORMAT;
	lbs_fmt(p->model, sizeof p->model, "%s", net.title);
	if (o->torch)
		lbs_fmt(p->description, sizeof p->description, "PyTorch: training steps of %s (forward and "
			"backward; testbed/torch_worker.py)", net.name);
	else
		lbs_fmt(p->description, sizeof p->description, "%s: the training GEMMs of %s (doc/nets.md)",
			o->cuda ? "cuBLAS" : "CBLAS", net.name);
	lbs_fmt(p->origin, sizeof p->origin, o->torch ? "measured by lbsim calibrate --torch: wall time of "
		"one training iteration's forward and backward pass in PyTorch, median of the repetitions"
		: "measured by lbsim calibrate: wall time of one training iteration's GEMMs (forward, input "
		  "and weight gradients), median of the repetitions");
	/* a profile line holds at most 198 characters */
	if (strlen(o->command) > 170)
		lbs_fmt(p->command, sizeof p->command, "%.160s ...", o->command);
	else
		lbs_fmt(p->command, sizeof p->command, "%s", o->command);
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(p->date, sizeof p->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
	p->reps = o->reps;
	p->warmup = o->warmup;
	char a[32], b[32];
	if (kind == &lbs_cost_linear) {
		lbs_format_quantity(p->cost.t0_s, LBS_DIM_TIME, a, sizeof a);
		lbs_format_quantity(p->cost.per_sample_s, LBS_DIM_TIME, b, sizeof b);
		printf("fit: t(b) = t0 + per_sample*b, t0 = %s, per_sample = %s", a, b);
		printf(", R^2 = %.6f, MAPE %.2f%%", p->r2, 100 * p->mape);
		if (n_out)
			printf(" (every batch), %zu weighted out", n_out);
		if (p->heldout_points)
			printf(", held-out MAPE %.2f%% (%lld)", 100 * p->heldout_mape,
			       (long long)p->heldout_points);
		printf("\n");
	} else {
		print_fit("fit:", p);
	}
	printf("memory cap: %lld samples (model state and activations, doc/nets.md, doc/transformers.md) in %.1f GB\n", (long long)cap,
	       memory / 1e9);
	if (lib && lbs_net_is_transformer(net.name))
		predict_from_peak(&net, lbs_blas_threads(lib), lbs_blas_core(lib), share, p);
	if (o->resize && (st = measure_resize(lib, o->torch ? o->fw : NULL, fw_ctx, &net, o, 0.5 * device_memory, p, &err)) !=
				 LBS_OK) {
		fprintf(stderr, "lbsim calibrate: --resize: %s\n", err.msg);
		goto out;
	}
	if (o->output) {
		if ((st = write_profile(p, o->output, &err)) != LBS_OK)
			fprintf(stderr, "lbsim calibrate: %s\n", err.msg);
		else
			printf("profile: %s\n", o->output);
	}
out:
	lbs_blas_close(lib);
	if (fw_ctx)
		o->fw->close(fw_ctx);
	lbs_profile_destroy(p);
	free(p);
	free(times);
	lbs_net_destroy(&net);
	return st;
}

static int list_nets(void)
{
	printf("%-16s %13s %10s %12s  %s\n", "model", "parameters", "GFLOP/smp", "act_MB/smp", "title");
	for (size_t i = 0; lbs_net_name_at(i); i++) {
		lbs_net n;
		lbs_error err = { 0 };
		if (lbs_net_create(&n, lbs_net_name_at(i), &err) != LBS_OK) {
			fprintf(stderr, "lbsim calibrate: %s\n", err.msg);
			return err.status;
		}
		printf("%-16s %13lld %10.4g %12.4g  %s\n", n.name, (long long)n.params,
		       lbs_net_flops(&n, 1) / 1e9, 1e-6 * (double)(n.act_bytes + n.core_bytes), n.title);
		lbs_net_destroy(&n);
	}
	return 0;
}

/* --gpus: the datasheets, the efficiency curve fitted to the published
 * figures, and its error on the figures it was not fitted to. */
static int gpus(void)
{
	printf("%-10s %12s %10s %10s %8s  %s\n", "device", "16-bit_TF/s", "fp32_TF/s", "GB/s", "GB", "source");
	for (size_t i = 0; lbs_gpu_at(i); i++) {
		const lbs_gpu_spec *d = lbs_gpu_at(i);
		printf("%-10s %12.1f %10.1f %10.0f %8.0f  %s\n", d->name, d->tensor_flops / 1e12, d->fp32_flops / 1e12,
		       d->bandwidth / 1e9, d->memory / 1e9, d->source);
	}
	size_t n;
	const lbs_gpu_figure *f = lbs_gpu_figures(&n);
	double *obs = calloc(n, sizeof *obs), *err_rel = calloc(n, sizeof *err_rel), *tmp = calloc(n, sizeof *tmp);
	lbs_error err = { 0 };
	lbs_gpu_eff e;
	double rms;
	lbs_status st = obs && err_rel && tmp ? LBS_OK : lbs_error_set(&err, LBS_EINTERNAL, "out of memory");
	for (size_t i = 0; st == LBS_OK && i < n; i++)
		obs[i] = f[i].tokens_per_s;
	if (st == LBS_OK)
		st = lbs_gpu_fit(f, obs, n, &e, &rms, &err);
	if (st == LBS_OK) {
		printf("\nfit to the %s figures (MosaicML llm-foundry MPT benchmarks, doc/gpus.md): eff_max %.4f, "
		       "t_half %.4g us, mem %.4f, overhead %.3g us; RMS log error %.4f\n", "fitted", e.eff_max,
		       e.f_half * 1e6, e.mem, e.overhead * 1e6, rms);
		printf("%-10s %-9s %6s %5s %4s %10s %10s %8s  %s\n", "device", "model", "seq", "mb", "ckpt",
		       "published", "predicted", "error", "role");
	}
	for (size_t i = 0; st == LBS_OK && i < n; i++) {
		lbs_net net;
		if ((st = lbs_gpu_figure_net(&f[i], &net, &err)) != LBS_OK)
			break;
		double p = lbs_gpu_figure_predict(&f[i], &net, &e);
		lbs_net_destroy(&net);
		err_rel[i] = p / f[i].tokens_per_s - 1;
		printf("%-10s %-9s %6lld %5lld %4s %10.0f %10.0f %+7.1f%%  %s\n", f[i].device, f[i].model,
		       (long long)f[i].seq, (long long)f[i].micro_batch, f[i].checkpointing ? "yes" : "no",
		       f[i].tokens_per_s, p, 100 * err_rel[i], f[i].fitted ? "fitted" : "held out");
	}
	if (st == LBS_OK) {
		printf("\n%-10s %-9s %4s %12s %12s\n", "device", "role", "n", "median_|err|", "worst_|err|");
		/* by device and role, in the figures' order */
		for (size_t i = 0; i < n; i++) {
			bool first = true;
			for (size_t k = 0; k < i; k++)
				first &= strcmp(f[k].device, f[i].device) || f[k].fitted != f[i].fitted;
			if (!first)
				continue;
			size_t m = 0;
			double worst = 0;
			for (size_t j = 0; j < n; j++)
				if (!strcmp(f[j].device, f[i].device) && f[j].fitted == f[i].fitted) {
					tmp[m++] = fabs(err_rel[j]);
					worst = fmax(worst, fabs(err_rel[j]));
				}
			printf("%-10s %-9s %4zu %11.1f%% %11.1f%%\n", f[i].device, f[i].fitted ? "fitted" : "held out",
			       m, 100 * lbs_calib_median(tmp, m), 100 * worst);
		}
		size_t m = 0;
		double worst = 0;
		for (size_t j = 0; j < n; j++)
			if (!f[j].fitted) {
				tmp[m++] = fabs(err_rel[j]);
				worst = fmax(worst, fabs(err_rel[j]));
			}
		printf("%-10s %-9s %4zu %11.1f%% %11.1f%%\n", "all", "held out", m, 100 * lbs_calib_median(tmp, m),
		       100 * worst);
	}
	if (st != LBS_OK)
		fprintf(stderr, "lbsim calibrate: --gpus: %s\n", err.msg);
	free(obs);
	free(err_rel);
	free(tmp);
	return st;
}

/* --datasheet DEVICE:MODEL[:TOKENS]: a profile predicted by the datasheet
 * model, with the efficiency fitted to the published figures, at each
 * batch whose activations fit in the device's memory (bf16, selective
 * recomputation as flash attention does; the model state's share is the
 * scenario's to size, with `memory` and `zero_stage`). */
static int datasheet(const char *spec, const int64_t *batches, size_t n_batches, const char *output,
		     const char *command)
{
	char dev[64] = "", model[64] = "", rec[16] = "selective";
	long long seq = 0;
	int got = sscanf(spec, "%63[^:]:%63[^:]:%lld:%15s", dev, model, &seq, rec);
	bool full = !strcmp(rec, "full");
	if (got < 2 || !lbs_gpu_find(dev) || (!full && strcmp(rec, "selective"))) {
		fprintf(stderr, "lbsim calibrate: --datasheet %s: expected DEVICE:MODEL[:TOKENS[:selective|full]] with a "
			"device of lbsim calibrate --gpus and a model of --list\n", spec);
		return LBS_EUSAGE;
	}
	const lbs_gpu_spec *d = lbs_gpu_find(dev);
	lbs_error err = { 0 };
	lbs_net net;
	lbs_net_opts o = { .seq_len = seq, .recompute = full ? LBS_RECOMPUTE_FULL : LBS_RECOMPUTE_SELECTIVE };
	lbs_status st = lbs_net_create_opts(&net, model, &o, &err);
	if (st != LBS_OK) {
		fprintf(stderr, "lbsim calibrate: --datasheet %s: %s\n", spec, err.msg);
		return LBS_EUSAGE;
	}
	size_t n;
	const lbs_gpu_figure *f = lbs_gpu_figures(&n);
	double *obs = calloc(n, sizeof *obs), rms;
	lbs_gpu_eff e;
	lbs_profile *p = calloc(1, sizeof *p);
	if (!obs || !p || !(p->point = calloc(n_batches, sizeof *p->point))) {
		st = lbs_error_set(&err, LBS_EINTERNAL, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		obs[i] = f[i].tokens_per_s;
	if ((st = lbs_gpu_fit(f, obs, n, &e, &rms, &err)) != LBS_OK)
		goto out;
	/* the cap of the activations alone: the model state depends on how
	 * the scenario partitions it (its `memory` and `zero_stage` keys) */
	lbs_mem m;
	lbs_net_memory(&net, 1, &m);
	int64_t cap = (int64_t)floor(d->memory / m.activations);
	if (cap < 1) {
		st = lbs_error_set(&err, LBS_EINPUT, "out of memory: one sample's activations of %s need %.4g GB, the "
				   "%s has %.4g GB", model, m.activations / 1e9, dev, d->memory / 1e9);
		goto out;
	}
	for (size_t i = 0; i < n_batches; i++)
		if (batches[i] <= cap)
			p->point[p->n_points++] = (lbs_profile_point){ batches[i],
					lbs_gpu_iteration_time(d, &e, &net, batches[i], true), NAN };
	if (p->n_points < 1) {
		st = lbs_error_set(&err, LBS_EINPUT, "no batch of --batches fits: the memory cap is %lld", (long long)cap);
		goto out;
	}
	p->cost.max_batch = cap;
	lbs_kind_score score[4];
	size_t n_score = 0;
	if ((st = lbs_calib_fit_gpu(p, score, &n_score, &err)) != LBS_OK)
		goto out;
	char sw[128];
	software(sw, sizeof sw);
	p->format = LBS_PROFILE_FORMAT;
	p->device_class = 1;
	p->source = LBS_SOURCE_DATASHEET;
	lbs_fmt(p->device, sizeof p->device, "%s (datasheet model)", d->title);
	lbs_fmt(p->host, sizeof p->host, "%.200s", d->source);
	lbs_fmt(p->model, sizeof p->model, "%s, %lld tokens, bf16, %s recomputation", net.title,
		(long long)net.opts.seq_len, rec);
	lbs_fmt(p->description, sizeof p->description, "one training iteration predicted from the device's "
		"datasheet (models/gpu.h, doc/gpus.md): every operation of %s, flash attention", model);
	lbs_fmt(p->origin, sizeof p->origin, "lbsim's datasheet cost model, efficiency fitted to MosaicML llm-foundry's "
		"MPT benchmarks on A100 80GB (eff_max %.3f, t_half %.3g us, mem %.3f, overhead %.3g us)",
		e.eff_max, e.f_half * 1e6, e.mem, e.overhead * 1e6);
	lbs_fmt(p->software, sizeof p->software, "%s", sw);
	lbs_fmt(p->command, sizeof p->command, "%.190s", command);
	printf("calibrate --datasheet %s: %s, memory cap %lld samples in %.0f GB\n", spec, p->cost.ops->name,
	       (long long)cap, d->memory / 1e9);
	print_scores(score, n_score, p->cost.ops);
	printf("%8s %12s %12s %10s\n", "batch", "time_s", "fit_s", "tokens/s");
	for (size_t i = 0; i < p->n_points; i++)
		printf("%8lld %12.6g %12.6g %10.0f\n", (long long)p->point[i].batch, p->point[i].time_s,
		       lbs_cost_time_s(&p->cost, p->point[i].batch),
		       (double)(p->point[i].batch * net.opts.seq_len) / p->point[i].time_s);
	if (output) {
		if ((st = write_profile(p, output, &err)) == LBS_OK)
			printf("profile: %s\n", output);
	}
out:
	if (st != LBS_OK)
		fprintf(stderr, "lbsim calibrate: --datasheet %s: %s\n", spec, err.msg);
	if (p)
		lbs_profile_destroy(p);
	free(p);
	free(obs);
	lbs_net_destroy(&net);
	return st;
}

static int show_layers(const char *model, int64_t batch, const lbs_net_opts *o)
{
	lbs_net n;
	lbs_error err = { 0 };
	if (lbs_net_create_opts(&n, model, o, &err) != LBS_OK) {
		fprintf(stderr, "lbsim calibrate: --layers: %s\n", err.msg);
		return LBS_EUSAGE;
	}
	lbs_net_write_layers(&n, batch, stdout);
	lbs_net_destroy(&n);
	return 0;
}

int lbs_calibrate_command(int argc, char **argv)
{
	return lbs_calibrate_command_with(argc, argv, NULL);
}

int lbs_calibrate_command_with(int argc, char **argv, const lbs_calib_framework *torch)
{
	/* --convergence: a mode of its own (models/calib/convergence.c). */
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--convergence") || !strncmp(argv[i], "--convergence=", 14))
			return lbs_convergence_command(argc, argv);
	enum { OPT_LIST = 256, OPT_LAYERS, OPT_BATCH, OPT_KEYS, OPT_FROM_TABLE, OPT_DATA, OPT_BLAS,
	       OPT_CUDA, OPT_BATCHES, OPT_REPS, OPT_WARMUP, OPT_THREADS, OPT_GPU, OPT_MEMORY, OPT_FIT,
	       OPT_DEVICE, OPT_MODEL, OPT_RESIZE, OPT_RESIZE_BATCH, OPT_RESIZE_DELTA, OPT_RESIZE_ROUNDS,
	       OPT_TP, OPT_SEQ, OPT_RECOMPUTE, OPT_DEVICE_NAME, OPT_TORCH, OPT_GPUS, OPT_DATASHEET };
	static const struct option longopts[] = {
		{ "list", no_argument, NULL, OPT_LIST },
		{ "gpus", no_argument, NULL, OPT_GPUS },
		{ "tp", required_argument, NULL, OPT_TP },
		{ "seq", required_argument, NULL, OPT_SEQ },
		{ "recompute", required_argument, NULL, OPT_RECOMPUTE },
		{ "datasheet", required_argument, NULL, OPT_DATASHEET },
		{ "layers", required_argument, NULL, OPT_LAYERS },
		{ "batch", required_argument, NULL, OPT_BATCH },
		{ "keys", no_argument, NULL, OPT_KEYS },
		{ "from-table", no_argument, NULL, OPT_FROM_TABLE },
		{ "data", required_argument, NULL, OPT_DATA },
		{ "output", required_argument, NULL, 'o' },
		{ "blas", required_argument, NULL, OPT_BLAS },
		{ "cuda", required_argument, NULL, OPT_CUDA },
		{ "torch", required_argument, NULL, OPT_TORCH },
		{ "batches", required_argument, NULL, OPT_BATCHES },
		{ "reps", required_argument, NULL, OPT_REPS },
		{ "warmup", required_argument, NULL, OPT_WARMUP },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "gpu", required_argument, NULL, OPT_GPU },
		{ "memory", required_argument, NULL, OPT_MEMORY },
		{ "fit", required_argument, NULL, OPT_FIT },
		{ "device", required_argument, NULL, OPT_DEVICE },
		{ "model", required_argument, NULL, OPT_MODEL },
		{ "device-name", required_argument, NULL, OPT_DEVICE_NAME },
		{ "resize", no_argument, NULL, OPT_RESIZE },
		{ "resize-batch", required_argument, NULL, OPT_RESIZE_BATCH },
		{ "resize-delta", required_argument, NULL, OPT_RESIZE_DELTA },
		{ "resize-rounds", required_argument, NULL, OPT_RESIZE_ROUNDS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *layers = NULL, *data = "traces/data", *output = NULL;
	bool list = false, keys = false, tables = false, gpu_fit = false;
	const char *sheet = NULL;
	int64_t batch = 1, tp = 1, seq = 0;
	int recompute = LBS_RECOMPUTE_NONE;
	bench_opts bo = { .reps = 5, .warmup = 1, .resize_batch = 32, .resize_delta = 2, .resize_rounds = 7 };
	fit_opts fo = { .device_class = -1, .command = bo.command };
	char why[256];
	int c;
	/* argv[0] is the command ("lbsim calibrate", or "calibrate" when called
	 * directly): what reruns it starts with "lbsim calibrate" either way. */
	lbs_fmt(bo.command, sizeof bo.command, "lbsim calibrate");
	for (int i = 1; i < argc; i++) {
		size_t used = strlen(bo.command);
		/* quoted when it holds a space, so that the command reruns */
		bool quote = strpbrk(argv[i], " \t") && !strchr(argv[i], '\'');
		lbs_fmt(bo.command + used, sizeof bo.command - used, quote ? " '%s'" : " %s", argv[i]);
	}
	/* Which mode each option belongs to, to refuse one given to another. */
	const char *seen[OPT_DEVICE_NAME + 1] = { 0 };
	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		if (c >= OPT_LIST && c <= OPT_DEVICE_NAME)
			seen[c] = argv[optind - 1];
		switch (c) {
		case OPT_LIST: list = true; break;
		case OPT_GPUS: gpu_fit = true; break;
		case OPT_DATASHEET: sheet = optarg; break;
		case OPT_TP:
			if (!parse_count("--tp", optarg, 1, 1024, &tp))
				return LBS_EUSAGE;
			break;
		case OPT_SEQ:
			if (!parse_count("--seq", optarg, 1, 1048576, &seq))
				return LBS_EUSAGE;
			break;
		case OPT_RECOMPUTE:
			if ((recompute = lbs_choice_index(LBS_RECOMPUTE_CHOICES, optarg)) < 0) {
				fprintf(stderr, "lbsim calibrate: --recompute %s: expected none, selective or full\n", optarg);
				return LBS_EUSAGE;
			}
			break;
		case OPT_LAYERS: layers = optarg; break;
		case OPT_KEYS: keys = true; break;
		case OPT_FROM_TABLE: tables = true; break;
		case OPT_DATA: data = optarg; break;
		case 'o': output = optarg; break;
		case OPT_BLAS: bo.model = optarg; bo.cuda = false; break;
		case OPT_CUDA: bo.model = optarg; bo.cuda = true; break;
		case OPT_TORCH: bo.model = optarg; bo.cuda = false; bo.torch = true; bo.fw = torch; break;
		case OPT_FIT: fo.csv = optarg; break;
		case OPT_DEVICE:
			if ((fo.device_class = lbs_choice_index(LBS_PROFILE_DEVICE_CHOICES, optarg)) < 0) {
				fprintf(stderr, "lbsim calibrate: --device %s: expected cpu or gpu\n", optarg);
				free(bo.batches);
				return LBS_EUSAGE;
			}
			break;
		case OPT_MODEL: fo.model = optarg; break;
		case OPT_DEVICE_NAME: fo.device_name = optarg; break;
		case OPT_RESIZE: bo.resize = true; break;
		case OPT_RESIZE_BATCH:
			if (!parse_count("--resize-batch", optarg, 2, 1000000, &bo.resize_batch))
				return LBS_EUSAGE;
			break;
		case OPT_RESIZE_DELTA:
			if (!parse_count("--resize-delta", optarg, 1, 1000000, &bo.resize_delta))
				return LBS_EUSAGE;
			break;
		case OPT_RESIZE_ROUNDS:
			if (!parse_count("--resize-rounds", optarg, 1, 1000, &bo.resize_rounds))
				return LBS_EUSAGE;
			break;
		case OPT_BATCHES:
			if (!parse_batches(optarg, &bo)) {
				free(bo.batches);
				return LBS_EUSAGE;
			}
			break;
		case OPT_REPS:
			if (!parse_count("--reps", optarg, 1, 100000, &bo.reps))
				return LBS_EUSAGE;
			break;
		case OPT_WARMUP:
			if (!parse_count("--warmup", optarg, 0, 100000, &bo.warmup))
				return LBS_EUSAGE;
			break;
		case OPT_THREADS:
			if (!parse_count("--threads", optarg, 1, 4096, &bo.threads))
				return LBS_EUSAGE;
			break;
		case OPT_GPU:
			if (!parse_count("--gpu", optarg, 0, 1024, &bo.gpu))
				return LBS_EUSAGE;
			break;
		case OPT_MEMORY:
			if (!lbs_parse_quantity(optarg, LBS_DIM_BYTES, &bo.memory_bytes, why, sizeof why) ||
			    !(bo.memory_bytes > 0)) {
				fprintf(stderr, "lbsim calibrate: --memory %s: %s\n", optarg,
					bo.memory_bytes > 0 ? why : "expected a size > 0 such as '16 GB'");
				return LBS_EUSAGE;
			}
			break;
		case OPT_BATCH:
			if (!parse_count("--batch", optarg, 1, 1000000000, &batch))
				return LBS_EUSAGE;
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return LBS_EUSAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "lbsim calibrate: unexpected argument '%s'\n", argv[optind]);
		return LBS_EUSAGE;
	}
	if (list + keys + tables + gpu_fit + (sheet != NULL) + (layers != NULL) + (bo.model != NULL) + (fo.csv != NULL) != 1) {
		fprintf(stderr, "lbsim calibrate: give one of --blas MODEL, --torch MODEL, --cuda MODEL, --from-table, "
			"--fit TIMES.csv, --list, --layers MODEL, --gpus, --datasheet DEVICE:MODEL or --keys\n");
		usage(stderr);
		free(bo.batches);
		return LBS_EUSAGE;
	}
	/* An option only one mode reads, given to another, is a mistake. */
	static const struct {
		int opt;
		const char *name;
		int modes; /* 1 --blas, 2 --cuda, 4 --from-table, 8 --layers, 16 --fit */
	} owners[] = {
		{ OPT_BATCHES, "--batches", 35 }, { OPT_REPS, "--reps", 3 },     { OPT_WARMUP, "--warmup", 3 },
		{ OPT_MEMORY, "--memory", 3 },   { OPT_THREADS, "--threads", 1 }, { OPT_GPU, "--gpu", 2 },
		{ OPT_DATA, "--data", 4 },       { OPT_BATCH, "--batch", 8 },
		{ OPT_TP, "--tp", 8 },           { OPT_SEQ, "--seq", 8 },         { OPT_RECOMPUTE, "--recompute", 8 },
		{ OPT_DEVICE, "--device", 16 },  { OPT_MODEL, "--model", 16 },
		{ OPT_DEVICE_NAME, "--device-name", 16 },
		{ OPT_RESIZE, "--resize", 1 },   { OPT_RESIZE_BATCH, "--resize-batch", 1 },
		{ OPT_RESIZE_DELTA, "--resize-delta", 1 }, { OPT_RESIZE_ROUNDS, "--resize-rounds", 1 },
	};
	int mode = bo.model ? (bo.cuda ? 2 : 1) : tables ? 4 : layers ? 8 : fo.csv ? 16 : sheet ? 32 : 0;
	for (size_t i = 0; i < sizeof owners / sizeof *owners; i++)
		if (seen[owners[i].opt] && !(owners[i].modes & mode)) {
			fprintf(stderr, "lbsim calibrate: %s does not apply here (see lbsim calibrate --help)\n",
				owners[i].name);
			free(bo.batches);
			return LBS_EUSAGE;
		}
	if (!bo.resize && (seen[OPT_RESIZE_BATCH] || seen[OPT_RESIZE_DELTA] || seen[OPT_RESIZE_ROUNDS])) {
		fprintf(stderr, "lbsim calibrate: --resize-batch, --resize-delta and --resize-rounds go with --resize\n");
		free(bo.batches);
		return LBS_EUSAGE;
	}
	if (bo.resize && bo.resize_delta >= bo.resize_batch) {
		fprintf(stderr, "lbsim calibrate: --resize-delta %lld: the alternating batches are --resize-batch "
			"(%lld) minus and plus it, so it must be less\n", (long long)bo.resize_delta,
			(long long)bo.resize_batch);
		free(bo.batches);
		return LBS_EUSAGE;
	}
	if (output && !*output) {
		fprintf(stderr, "lbsim calibrate: -o '': expected a file (--blas, --cuda) or a folder "
				"(--from-table)\n");
		free(bo.batches);
		return LBS_EUSAGE;
	}
	if (output && (list || keys || layers || gpu_fit)) {
		fprintf(stderr, "lbsim calibrate: -o applies to --blas, --cuda, --fit and --from-table\n");
		free(bo.batches);
		return LBS_EUSAGE;
	}
	/* SIGINT, SIGTERM: exit 130 at once, leaving no temporary (a profile
	 * is written whole at the end or not at all). */
	lbs_signals_exit();
	if (bo.model) {
		if (!bo.batches && !parse_batches("1,2,4,8,16,32", &bo))
			return LBS_EINTERNAL;
		bo.output = output;
		int rc = bench(&bo);
		free(bo.batches);
		return rc;
	}
	if (sheet) {
		if (!bo.batches && !parse_batches("1,2,3,4,6,8,12,16,24,32", &bo))
			return LBS_EINTERNAL;
		int rc = datasheet(sheet, bo.batches, bo.n_batches, output, bo.command);
		free(bo.batches);
		return rc;
	}
	free(bo.batches);
	if (fo.csv) {
		if (fo.device_class < 0) {
			fprintf(stderr, "lbsim calibrate: --fit needs --device cpu or --device gpu\n");
			return LBS_EUSAGE;
		}
		fo.output = output;
		return fit_times(&fo);
	}
	if (tables)
		return from_table(data, output ? output : "profiles");
	if (keys) {
		lbs_profile_document(stdout);
		return 0;
	}
	if (gpu_fit)
		return gpus();
	lbs_net_opts o = { .seq_len = seq, .tp = (int)tp, .recompute = recompute };
	return list ? list_nets() : show_layers(layers, batch, &o);
}
