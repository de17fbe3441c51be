/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "sim/scenario.h"

#include "util/datapath.h"
#include "util/ini.h"

#include <errno.h>
#include <stdarg.h>
#include <ini.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "models/nets.h"
#include "models/policy.h"
#include "models/predict.h"
#include "models/profile.h"

/* Longest line accepted (inih's buffer is INI_MAX_LINE = 200 bytes with
 * the newline and the terminator; longer lines it would silently split). */
#define LBS_LINE_MAX 198
#define REQUIRED NULL
#define UNSET ""
#define BIG 1e14 /* 100 TB/s */

/* ---- the schema ------------------------------------------------------- */

#define R(f) offsetof(lbs_run_spec, f)
static const lbs_key_spec run_keys[] = {
	{ "name", LBS_T_STRING, R(name), UNSET, 0, 0, 0, NULL, NULL,
	  "label of the scenario in results; defaults to the file name without .ini" },
	{ "description", LBS_T_STRING, R(description), UNSET, 0, 0, 0, NULL, NULL,
	  "one line saying what the scenario models" },
	{ "seed", LBS_T_INT, R(seed), "1", 0, 9007199254740991.0, 0, NULL, NULL,
	  "seed of every random stream of the run (`--seed` overrides it)" },
	{ "global_batch", LBS_T_INT, R(global_batch), REQUIRED, 1, 1e9, 0, NULL, NULL,
	  "samples per iteration over all workers (B); policies split it and keep the sum (only dbs "
	  "with rounding = authors may process fewer)" },
	{ "iterations", LBS_T_INT, R(iterations), UNSET, 1, 1e9, 0, NULL, NULL,
	  "run length in iterations (give this, or `epochs` with `dataset_samples`)" },
	{ "epochs", LBS_T_INT, R(epochs), UNSET, 1, 1e6, 0, NULL, NULL,
	  "run length in passes over the dataset" },
	{ "dataset_samples", LBS_T_INT, R(dataset_samples), UNSET, 1, 1e12, 0, NULL, NULL,
	  "samples in the dataset; an epoch is floor(dataset_samples / global batch planned at its "
	  "start) iterations (the remainder is dropped, as with drop_last)" },
	{ "worker_events", LBS_T_ENUM, R(worker_events), "auto", 0, 0, 0, "auto|always", NULL,
	  "`auto`: a worker's completion is an event only when something observes it mid-iteration; "
	  "`always`: every completion is an event (same results, slower; for checking)" },
};
#undef R

#define M(f) offsetof(lbs_model_spec, f)
static const lbs_key_spec model_keys[] = {
	{ "name", LBS_T_STRING, M(name), UNSET, 0, 0, 0, NULL, NULL, "name of the trained model" },
	{ "parameters", LBS_T_INT, M(parameters), UNSET, 1, 1e13, 0, NULL, NULL,
	  "trainable parameters; gradient bytes = parameters * bytes_per_parameter "
	  "(give this or `gradient`)" },
	{ "bytes_per_parameter", LBS_T_REAL, M(bytes_per_parameter), "4", 0, 64, LBS_K_MIN_OPEN, NULL,
	  NULL, "bytes per gradient element (4 for fp32, 2 for fp16)" },
	{ "gradient", LBS_T_BYTES, M(gradient_bytes), UNSET, 0, 1e13, 0, NULL, NULL,
	  "bytes of gradient each worker contributes per iteration (M)" },
	{ "sequence_length", LBS_T_INT, M(sequence_length), UNSET, 1, 1048576, 0, NULL, NULL,
	  "transformers (`name` one of `lbsim calibrate --list`): tokens per sample, at most the "
	  "model's context length; unset: the preset's (2048 for gpt3-*, 4096 for llama2-*, 8192 "
	  "for llama3-*; doc/transformers.md)" },
	{ "precision", LBS_T_ENUM, M(precision), UNSET, 0, 0, 0, LBS_PRECISION_CHOICES, NULL,
	  "transformers: `fp32`, or `bf16`/`fp16` mixed precision (16-bit weights, gradients and "
	  "activations, fp32 master weights); unset: the preset's (bf16; fp32 for llama-like-small)" },
	{ "recompute", LBS_T_ENUM, M(recompute), UNSET, 0, 0, 0, LBS_RECOMPUTE_CHOICES, NULL,
	  "transformers: activation recomputation (Korthikanti et al. 2022): `none`; `selective`, the "
	  "attention core, as flash attention; `full`, every block from its input; unset: none" },
	{ "optimizer", LBS_T_ENUM, M(optimizer), UNSET, 0, 0, 0, LBS_OPTIMIZER_CHOICES, NULL,
	  "the optimizer whose states the memory holds: `sgd` (momentum) or `adam`; unset or "
	  "`default`: sgd for the CNNs, adam for the transformers" },
	{ "zero_stage", LBS_T_INT, M(zero_stage), UNSET, 0, 3, 0, NULL, NULL,
	  "ZeRO stage (Rajbhandari et al. 2020) over all the workers: 1 partitions the optimizer "
	  "states, 2 the gradients too, 3 the weights too; unset: 0, every worker holds all" },
};
#undef M

#define N(f) offsetof(lbs_network, f)
static const lbs_key_spec network_keys[] = {
	{ "topology", LBS_T_ENUM, N(kind), REQUIRED, 0, 0, 0, LBS_NETWORK_CHOICES, NULL,
	  "`ring`: ring all-reduce, 2(N-1)/N*M/bandwidth + 2(N-1)*latency; `ps`: parameter server, "
	  "2*max(N*M/(servers*bandwidth), M/worker_bandwidth) + 2*latency; `none`: free aggregation" },
	{ "bandwidth", LBS_T_BANDWIDTH, N(bandwidth_Bps), REQUIRED, 0, BIG, LBS_K_MIN_OPEN, NULL,
	  "topology=ring|ps", "ring: bandwidth of each link; ps: of each server's NIC" },
	{ "latency", LBS_T_TIME, N(latency_s), "0 s", 0, 10, 0, NULL, "topology=ring|ps",
	  "ring: latency of each of the 2(N-1) steps (alpha); ps: of each push or pull" },
	{ "servers", LBS_T_INT, N(servers), "1", 1, 1e5, 0, NULL, "topology=ps",
	  "parameter-server shards; each holds 1/servers of the parameters" },
	{ "worker_bandwidth", LBS_T_BANDWIDTH, N(worker_bandwidth_Bps), UNSET, 0, BIG, LBS_K_MIN_OPEN,
	  NULL, "topology=ps", "bandwidth of each worker's NIC; defaults to `bandwidth`" },
	{ "exchange_on_workers", LBS_T_ENUM, N(exchange_on_workers), "no", 0, 0, 0, "no|yes",
	  "topology=ring|ps",
	  "`yes`: the exchange (latency + transfer at nominal bandwidth) is also work each worker does "
	  "on its own CPU, at its availability and under its cpu_quota_period, from the end of compute; "
	  "the aggregation ends when the network and the last worker are done (a CPU worker whose "
	  "collectives run in its own process, under its CPU limit); `no`: the network alone, as with "
	  "GPUs whose NIC or NCCL moves the data, or a network process outside the worker's quota "
	  "(doc/model.md)" },
};
#undef N

#define G(f) offsetof(lbs_group_spec, f)
static const lbs_key_spec group_keys[] = {
	{ "count", LBS_T_INT, G(count), REQUIRED, 1, LBS_MAX_WORKERS, 0, NULL, NULL,
	  "workers in this group" },
	{ "device", LBS_T_ENUM, G(device), REQUIRED, 0, 0, 0, LBS_DEVICE_CHOICES, NULL,
	  "device class; policies treat CPU and GPU workers differently" },
	{ "profile", LBS_T_STRING, G(profile), UNSET, 0, 0, 0, NULL, NULL,
	  "cost profile file (doc/profiles.md), relative to this file's directory (with --set: to the "
	  "current directory), then to LBSIM_PATH and the installed data (doc/scenario.md, \"Where "
	  "files are found\"); it gives cost, t0, per_sample, t_flat, saturation_batch, exponent, "
	  "per_sample_sq, flat_below, max_batch, resize_cost and new_batch_cost, "
	  "which may then not be set here, except max_batch, resize_cost and new_batch_cost, which "
	  "override the profile's" },
	{ "cost", LBS_T_ENUM, G(cost.kind), REQUIRED, 0, 0, 0, LBS_COST_CHOICES, NULL,
	  "`linear`: t(b) = t0 + per_sample*b; `piecewise`: t(b) = t_flat up to saturation_batch, "
	  "then t_flat + per_sample*(b - saturation_batch); `power`: t(b) = t0 + per_sample*b^exponent; "
	  "`quadratic`: t(b) = t0 + per_sample*b + per_sample_sq*b^2; required unless `profile` gives it" },
	{ "t0", LBS_T_TIME, G(cost.t0_s), "0 s", 0, 3600, 0, NULL, "cost=linear|power|quadratic",
	  "fixed time of an iteration, whatever the batch" },
	{ "per_sample", LBS_T_TIME, G(cost.per_sample_s), REQUIRED, 0, 3600, 0, NULL, NULL,
	  "time per sample (linear, quadratic), or per sample beyond saturation (piecewise), or the "
	  "coefficient of b^exponent (power), at full availability" },
	{ "t_flat", LBS_T_TIME, G(cost.t_flat_s), REQUIRED, 0, 3600, LBS_K_MIN_OPEN, NULL,
	  "cost=piecewise", "time of any batch up to saturation_batch" },
	{ "saturation_batch", LBS_T_INT, G(cost.saturation_batch), REQUIRED, 1, 1e9, 0, NULL,
	  "cost=piecewise", "batch at which the device is saturated" },
	{ "exponent", LBS_T_REAL, G(cost.exponent), REQUIRED, 0, LBS_COST_EXPONENT_MAX, LBS_K_MIN_OPEN,
	  NULL, "cost=power", "power of the batch (dimensionless, > 0)" },
	{ "per_sample_sq", LBS_T_TIME, G(cost.per_sample_sq_s), REQUIRED, 0, 3600, 0, NULL,
	  "cost=quadratic", "coefficient of b^2 (seconds per sample squared), at full availability" },
	{ "flat_below", LBS_T_INT, G(cost.flat_below), "1", 1, 1e9, 0, NULL, "cost=power|quadratic",
	  "samples: a smaller batch takes the time of this one (1: no floor)" },
	{ "max_batch", LBS_T_INT, G(cost.max_batch), UNSET, 1, 1e9, 0, NULL, NULL,
	  "memory cap: the largest batch a worker's memory holds (samples); unset: no cap" },
	{ "memory", LBS_T_BYTES, G(memory_bytes), UNSET, 0, 1e13, LBS_K_MIN_OPEN, NULL, NULL,
	  "the device's memory (e.g. `80 GB`): with a [model] `name` of `lbsim calibrate --list`, "
	  "the memory cap is the largest batch whose weights, gradients, optimizer states and "
	  "activations fit (doc/transformers.md, \"Memory\"), or max_batch if smaller" },
	{ "resize_cost", LBS_T_REAL, G(cost.resize_cost), "0", 0, 10, 0, NULL, NULL,
	  "fraction of its compute time a worker pays on top when its batch differs from the one it "
	  "last ran (e.g. 40%: a framework's allocator returning memory and faulting it in again); its "
	  "first batch pays nothing; overrides the profile's (doc/model.md, \"Re-sizing\"); 0: free" },
	{ "new_batch_cost", LBS_T_REAL, G(cost.new_batch_cost), "0", 0, 10, 0, NULL, NULL,
	  "fraction of its compute time a worker pays on top for a batch it has never run in this run "
	  "(e.g. 16%: kernels built for a new shape), besides resize_cost; its first batch pays "
	  "nothing; overrides the profile's (doc/model.md, \"Re-sizing\"); 0: free" },
	{ "availability", LBS_T_REAL, G(availability), "1", 0, 100, LBS_K_MIN_OPEN, NULL, NULL,
	  "constant fraction of nominal speed the worker delivers (0.5 = half speed); with a trace, "
	  "it multiplies the trace's availability" },
	{ "timeshare_refill", LBS_T_TIME, G(timeshare_refill_s), "0 s", 0, 1, 0, NULL, NULL,
	  "CPU time a worker loses in each scheduling slice (timeshare_slice) while it time-shares "
	  "its core, a(t) < 1 (its caches refilled after the other tenant ran): its availability is "
	  "then a(t) - timeshare_refill/timeshare_slice, never below a(t)/10; `lbsim validate "
	  "--calibrate` measures it (doc/validation.md); 0: the fluid rule alone" },
	{ "cpu_quota_period", LBS_T_TIME, G(cpu_quota_period_s), "0 s", 0, 1, 0, NULL, NULL,
	  "0: availability a(t) is a fluid share of the device; > 0: a(t) < 1 is a CPU limit as Linux "
	  "enforces it (CFS bandwidth control, a container's CPU limit, the testbed): a(t) x this "
	  "period of CPU time per period, run at full speed from the period's start, then throttled "
	  "until the next; each worker's periods start at a phase drawn from its own stream" },
	{ "cpu_quota_tick", LBS_T_TIME, G(cpu_quota_tick_s), "0 s", 0, 1, 0, NULL, NULL,
	  "with cpu_quota_period: the kernel's scheduler tick (1/CONFIG_HZ, 4 ms at 250 Hz), at which "
	  "it checks the quota; a worker whose quota runs out between ticks runs on to the next and "
	  "pays the overrun from its next periods' quota, across barriers too; `lbsim validate` sets "
	  "it to the machine's tick; 0: the quota is exact" },
	{ "profile_cost", LBS_T_ENUM, G(profile_cost), "fit", 0, 0, 0, "fit|measured", NULL,
	  "with a profile: `fit`, its fitted cost model ([cost]); `measured`, its measured times "
	  "themselves ([measurements]), linear between them, the fit's per_sample past the largest "
	  "(a GEMM's time depends on the batch modulo the BLAS kernel's tile, which no fitted curve "
	  "follows); `lbsim validate` sets it" },
	{ "timeshare_slice", LBS_T_TIME, G(timeshare_slice_s), "10 ms", 0, 1, LBS_K_MIN_OPEN, NULL, NULL,
	  "the scheduling slice timeshare_refill is paid in (the testbed's CFS period is 10 ms)" },
	{ "noise", LBS_T_ENUM, G(noise.kind), "none", 0, 0, 0, LBS_NOISE_CHOICES, NULL,
	  "per-iteration multiplicative noise on compute time, drawn from the worker's own stream" },
	{ "noise_low", LBS_T_REAL, G(noise.low), "0", -0.99, 100, 0, NULL, "noise=uniform",
	  "uniform noise: factor is 1 + U[noise_low, noise_high)" },
	{ "noise_high", LBS_T_REAL, G(noise.high), REQUIRED, -0.99, 100, 0, NULL, "noise=uniform",
	  "uniform noise: upper end (e.g. 10% for up to 10% slower)" },
	{ "noise_sigma", LBS_T_REAL, G(noise.sigma), REQUIRED, 0, 5, LBS_K_MIN_OPEN, NULL,
	  "noise=lognormal", "lognormal noise: sigma of log factor; the factor's mean is 1" },
	{ "readings_noise", LBS_T_REAL, G(readings.noise), "0", 0, 1, 0, NULL, NULL,
	  "standard deviation of the error a monitor adds to each CPU and memory utilisation reading "
	  "policies see (utilisation units; the result clamped to [0, 1]), drawn from the worker's own "
	  "stream; 0: exact (doc/generators.md, \"What the monitor reads\"; 0.02 to 0.05 recommended)" },
	{ "readings_lag", LBS_T_TIME, G(readings.lag_s), "0 s", 0, 3600, 0, NULL, NULL,
	  "delay from a monitor's sample to the policy seeing it: the reading at t is the source's "
	  "at t - readings_lag (before time 0: at 0); 0: none" },
	{ "readings_period", LBS_T_TIME, G(readings.period_s), "0 s", 0, 3600, 0, NULL, NULL,
	  "time between a monitor's samples, taken at 0, P, 2P, ...: a policy sees the latest sample "
	  "published (readings_lag after it was taken); 0: sampled when read (1 s, cAdvisor's default "
	  "interval, recommended)" },
};
#undef G

/* The keys of [workers.NAME] that start with "trace": a table of their own
 * (struct lbs_trace_spec), applied to those entries only. */
#define TRACED "trace_format!=none"
#define T(f) offsetof(lbs_trace_spec, f)
static const lbs_key_spec trace_keys[] = {
	{ "trace_format", LBS_T_ENUM, T(format), "none", 0, 0, 0, LBS_TRACE_FORMAT_CHOICES, NULL,
	  "format of the trace that drives the workers' availability (in [network]: the bandwidth; "
	  "doc/traces.md); `none`: no trace" },
	{ "trace", LBS_T_STRING, T(file), REQUIRED, 0, 0, 0, NULL, TRACED,
	  "the trace file, relative to the scenario file's directory, then to LBSIM_PATH and the "
	  "installed data (doc/scenario.md, \"Where files are found\")" },
	{ "trace_column", LBS_T_STRING, T(column), UNSET, 0, 0, 0, NULL, TRACED,
	  "column to replay (e.g. availability, cpu_util); default: the file's first value column" },
	{ "trace_metric", LBS_T_STRING, T(metric), UNSET, 0, 0, 0, NULL, "trace_format=cloudwatch",
	  "CloudWatch metric the values are (CPUUtilization, NetworkIn, ...; doc/traces.md); "
	  "default: the one the header names, if any" },
	{ "trace_ids", LBS_T_STRING, T(ids), UNSET, 0, 0, 0, NULL, TRACED,
	  "ids to replay (workers, machines, VMs, CloudWatch columns), comma-separated; default: every "
	  "id in the file; an id the file lacks is an error" },
	{ "trace_assign", LBS_T_ENUM, T(assign), "in_order", 0, 0, 0, LBS_TRACE_ASSIGN_CHOICES, TRACED,
	  "which id each worker replays: `in_order`: the group's k-th worker takes the k-th id "
	  "(cycling); `draw`: each worker draws one uniformly from its own stream of the run's seed" },
	{ "trace_map", LBS_T_ENUM, T(map), "auto", 0, 0, 0, LBS_MAP_CHOICES, TRACED,
	  "from a reading v to availability: `direct` a = v; `time` a = reference/v; `rate` a = "
	  "v/reference; `util` a = max(floor, 1 - k*v); `auto`: by the column's name" },
	{ "trace_reference", LBS_T_REAL, T(reference), UNSET, 0, 1e300, LBS_K_MIN_OPEN, NULL,
	  "trace_map=auto|time|rate", "reference of `time` and `rate`, in the column's unit; default: "
	  "the column's median over the whole file (e.g. a PAI job's median mini-batch time)" },
	{ "trace_k", LBS_T_REAL, T(k), "1", 0, 1e6, 0, NULL, "trace_map=auto|util",
	  "`util`: availability lost per unit of utilisation" },
	{ "trace_floor", LBS_T_REAL, T(floor), "0.1", 0, 1, LBS_K_MIN_OPEN, NULL, "trace_map=auto|util",
	  "`util`: the least availability, whatever the utilisation" },
	{ "trace_interp", LBS_T_ENUM, T(interp), "step", 0, 0, 0, LBS_INTERP_CHOICES, TRACED,
	  "between samples: `step` holds each sample until the next; `linear` interpolates the "
	  "availability" },
	{ "trace_end", LBS_T_ENUM, T(end), "hold", 0, 0, 0, LBS_TRACE_END_CHOICES, TRACED,
	  "after the last sample: `hold` it, or `loop` to the start (a period is the trace's span "
	  "plus its last step)" },
	{ "trace_offset", LBS_T_TIME, T(offset_s), "0 s", 0, 1e9, 0, NULL, TRACED,
	  "time-indexed traces: simulated time 0 replays the trace this long after its first sample" },
	{ "trace_offset_iterations", LBS_T_INT, T(offset_iterations), "0", 0, 1e12, 0, NULL, TRACED,
	  "iteration-indexed traces: iteration 0 replays the trace's first iteration plus this" },
	{ "trace_speed", LBS_T_REAL, T(speed), "1", 0, 1e6, LBS_K_MIN_OPEN, NULL, TRACED,
	  "time-indexed traces: trace seconds replayed per simulated second (60 = an hour a minute)" },
};
#undef T

#define NKEYS(t) (sizeof(t) / sizeof((t)[0]))

static const lbs_key_spec policy_keys[] = {
	{ "name", LBS_T_STRING, offsetof(lbs_policy_spec, name), "static", 0, 0, 0, NULL, NULL,
	  "the policy to run (see the table below)" },
	{ "plugin", LBS_T_STRING, offsetof(lbs_policy_spec, plugin), UNSET, 0, 0, 0, NULL, NULL,
	  "a policy plugin to load, a shared object (doc/extending.md), found like `profile` (in a "
	  "file: a relative path without '..'); loaded only with `--plugins` or LBSIM_PLUGINS=1; its "
	  "policy can then be `name` or in `--policy`" },
};

#define TB(f) offsetof(lbs_testbed_spec, f)
static const lbs_key_spec testbed_keys[] = {
	{ "worker", LBS_T_ENUM, TB(worker), "blas", 0, 0, 0, LBS_TB_WORKER_CHOICES, NULL,
	  "the testbed's worker processes (`lbsim testbed|validate --worker`): `blas`, lbsim's own "
	  "worker running the network's forward and backward GEMMs on fixed buffers, the exchange in "
	  "network processes outside the workers' quotas; `torch`, real PyTorch training (python3 with "
	  "Debian's python3-torch) of the same network, the gradient exchanged by torch.distributed "
	  "(gloo) inside the workers' quotas; ignored by the simulation" },
	{ "ddp", LBS_T_ENUM, TB(ddp), "no", 0, 0, 0, "no|yes", "worker=torch",
	  "torch workers: wrap the model in DistributedDataParallel (its bucketed all-reduce overlaps "
	  "the backward pass) instead of one all-reduce of the flat gradient after it" },
	{ "target_loss", LBS_T_REAL, TB(target_loss), "0", 0, 1e12, 0, NULL, "worker=torch",
	  "torch workers training `[model] name = teacher-student`: the held-out loss (mean squared "
	  "error) whose first step is the measured run's steps and time to target (run_targets; the "
	  "simulated twin's come from [convergence], fitted to this target); 0: none" },
	{ "loss_every", LBS_T_INT, TB(loss_every), "10", 1, 1e6, 0, NULL, "worker=torch",
	  "... the held-out loss is evaluated after every this many steps (outside the timed "
	  "iterations), the target's step interpolated linearly between two evaluations" },
};
#undef TB

#define SY(f) offsetof(lbs_sync_spec, f)
static const lbs_key_spec sync_keys[] = {
	{ "mode", LBS_T_ENUM, SY(mode), "bsp", 0, 0, 0, LBS_SYNC_CHOICES, NULL,
	  "`bsp`: every step waits for every worker's gradient; `backup`: backup workers (Chen et al. "
	  "2016, \"Revisiting Distributed Synchronous SGD\"): the step's aggregation starts when the "
	  "first N - backup_workers workers are done, the others' gradients are dropped (their samples "
	  "do not count), and each dropped worker starts its next share when it has finished the "
	  "dropped one; needs topology = ps or none; `ssp`: stale synchronous parallel (Ho et al. 2013): "
	  "no barrier, worker i starts its step k once every worker has finished step k - staleness - "
	  "1, each worker's push and pull taking the network's time; `asp`: asynchronous, no barrier, "
	  "each worker pushes its gradient and pulls the model through the parameter server, whose "
	  "link serves one transfer at a time; `dropcompute` (Giladi et al. 2023): each worker computes "
	  "micro-batches until time_limit after the barrier and contributes those it finished; "
	  "`local-sgd`: each worker steps on its own model, the models averaged (an all-reduce and a "
	  "barrier) every `period` steps (doc/model.md, \"Synchronisation\")" },
	{ "backup_workers", LBS_T_INT, SY(backup_workers), "1", 1, 1e6, 0, NULL, "mode=backup",
	  "how many of the slowest workers' gradients each step drops (fewer than the workers)" },
	{ "staleness", LBS_T_INT, SY(staleness), REQUIRED, 0, 1e6, 0, NULL, "mode=ssp",
	  "s, in steps: a worker may be at most s steps ahead of the slowest finished one (0: BSP's "
	  "timing exactly)" },
	{ "time_limit", LBS_T_TIME, SY(time_limit_s), "0 s", 0, 1e9, 0, NULL, "mode=dropcompute",
	  "how long after the barrier each worker stops computing; the micro-batch it was running is "
	  "dropped with the ones it had not started; 0: chosen automatically (Giladi et al.'s selection): "
	  "the first time_limit_steps steps run without a limit, measuring when each micro-batch ends, "
	  "and the limit is then the one that maximises the samples finished per second of step (its "
	  "compute and the aggregation's nominal time) over them" },
	{ "time_limit_steps", LBS_T_INT, SY(time_limit_steps), "10", 1, 1e6, 0, NULL, "mode=dropcompute",
	  "with time_limit = 0: the steps measured before the limit is chosen" },
	{ "micro_batch", LBS_T_INT, SY(micro_batch), "1", 1, 1e9, 0, NULL, "mode=dropcompute",
	  "samples per micro-batch (gradient accumulation): what a worker stopped by the time limit "
	  "keeps is a whole number of them" },
	{ "overrun", LBS_T_ENUM, SY(overrun), "drop", 0, 0, 0, "drop|finish", "mode=dropcompute",
	  "the micro-batch running at the time limit: `drop`, the worker stops at the limit and loses "
	  "it (a worker that can abandon its computation); `finish`, it runs to its end and counts, and "
	  "none starts after the limit (a worker that checks the time between micro-batches, as a real "
	  "framework's loop does)" },
	{ "period", LBS_T_INT, SY(period), REQUIRED, 1, 1e6, 0, NULL, "mode=local-sgd",
	  "H, in steps: the models are averaged after every H-th step (1: BSP's timing exactly)" },
};
#undef SY

#define CV(f) offsetof(lbs_convergence_spec, f)
static const lbs_key_spec convergence_keys[] = {
	{ "model", LBS_T_ENUM, CV(model), "none", 0, 0, 0, LBS_CONVERGENCE_CHOICES, NULL,
	  "`gns`: the gradient-noise-scale model of McCandlish et al. 2018 (\"An Empirical Model of "
	  "Large-Batch Training\"): a step of batch B makes B / (S_min (B + B_noise)) of the way, so "
	  "that at a constant batch the target takes S_min (1 + B_noise / B) steps; `none`: no target" },
	{ "noise_scale", LBS_T_REAL, CV(noise_scale), REQUIRED, 0, 1e12, 0, NULL, "model=gns",
	  "B_noise, the gradient noise scale in samples (about the critical batch size; `lbsim "
	  "calibrate --convergence` fits it to a loss curve)" },
	{ "min_steps", LBS_T_REAL, CV(min_steps), REQUIRED, 0, 1e12, LBS_K_MIN_OPEN, NULL, "model=gns",
	  "S_min, the steps to the target at an infinitely large batch" },
	{ "stop_at_target", LBS_T_ENUM, CV(stop), "no", 0, 0, 0, "no|yes", "model=gns",
	  "`yes`: the run ends at the step that reaches the target, its length (iterations or epochs) "
	  "a cap" },
	{ "staleness_penalty", LBS_T_ENUM, CV(staleness_penalty), "inverse", 0, 0, 0,
	  LBS_STALENESS_PENALTY_CHOICES, "model=gns",
	  "`inverse`: a gradient tau steps stale makes 1 / max(1, tau) of a fresh one's progress (the "
	  "learning rate divided by the staleness, Zhang et al. 2016, \"Staleness-aware Async-SGD\"); "
	  "`none`: as much as a fresh one ([sync] ssp and asp)" },
	{ "staleness_exponent", LBS_T_REAL, CV(staleness_exponent), "1", 0, 10, 0, NULL, "model=gns",
	  "with staleness_penalty = inverse, a stale gradient makes (1 / max(1, tau))^exponent of a "
	  "fresh one's progress: 1 takes progress as proportional to the learning rate; below 1, a "
	  "smaller rate loses less (`lbsim calibrate --convergence` fits it to curves with a "
	  "`staleness` column)" },
};
#undef CV

typedef struct section_spec {
	const char *name; /* "workers." is a prefix: [workers.NAME] */
	const lbs_key_spec *keys;
	size_t nkeys;
	const char *doc;
} section_spec;

static const section_spec sections[] = {
	{ "run", run_keys, NKEYS(run_keys), "What to simulate and for how long" },
	{ "model", model_keys, NKEYS(model_keys), "The model being trained" },
	{ "network", network_keys, NKEYS(network_keys), "How gradients are aggregated" },
	{ "workers.", group_keys, NKEYS(group_keys),
	  "One section per group of identical workers, `[workers.NAME]`; workers are numbered in "
	  "file order" },
	{ "policy", policy_keys, NKEYS(policy_keys), "Which batch-size policy runs (`--policy` overrides it)" },
	{ "sync", sync_keys, NKEYS(sync_keys),
	  "Optional: how the workers synchronise (default: bulk synchronous, every step waits for every "
	  "worker)" },
	{ "convergence", convergence_keys, NKEYS(convergence_keys),
	  "Optional: the statistical-efficiency model that gives each run its steps and time to a "
	  "target (doc/model.md, \"Time to target\")" },
	{ "testbed", testbed_keys, NKEYS(testbed_keys),
	  "Optional: how `lbsim testbed` and `lbsim validate` run the scenario for real (doc/validation.md)" },
	{ "policy.", NULL, 0,
	  "Options of policy NAME, `[policy.NAME]`; a scenario may hold options for several policies, "
	  "so that `--policy a,b` compares them" },
	{ "predictor.", NULL, 0,
	  "Options of speed predictor NAME, `[predictor.NAME]`, for the policies that use predictors" },
	{ "generator.", lbs_gen_keys, LBS_GEN_NKEYS,
	  "Optional, any number: `[generator.NAME]` applies a generator of synthetic availability "
	  "(doc/generators.md) to the worker groups named by `workers`" },
};

/* ---- reading the file ------------------------------------------------- */

typedef struct header {
	char name[LBS_NAME_MAX + 16];
	int line;
} header;

typedef struct parse_ctx {
	lbs_ini_reader ini; /* first: on_section gets it back as the context */
	lbs_kv *kv;
	size_t n_kv, cap_kv;
	header *hdr;
	size_t n_hdr, cap_hdr;
} parse_ctx;

static bool push_header(parse_ctx *c, const char *name)
{
	for (size_t i = 0; i < c->n_hdr; i++)
		if (strcmp(c->hdr[i].name, name) == 0) {
			return lbs_ini_fail(&c->ini, "section [%s] appears twice (first at line %d)", name, c->hdr[i].line);
		}
	if (c->n_hdr == c->cap_hdr) {
		size_t ncap = c->cap_hdr ? 2 * c->cap_hdr : 16;
		header *h = realloc(c->hdr, ncap * sizeof *h);
		if (!h)
			return lbs_ini_fail(&c->ini, "out of memory");
		c->hdr = h;
		c->cap_hdr = ncap;
	}
	snprintf(c->hdr[c->n_hdr].name, sizeof c->hdr[0].name, "%s", name);
	c->hdr[c->n_hdr++].line = c->ini.line;
	return true;
}

/* Each section header, as the reader meets it (empty sections too). */
static bool on_section(lbs_ini_reader *r, const char *name)
{
	return push_header((parse_ctx *)r, name);
}

static int on_key(void *user, const char *section, const char *key, const char *value)
{
	parse_ctx *c = user;
	if (c->ini.failed)
		return 0;
	if (!*section)
		return lbs_ini_fail(&c->ini, "'%s' is outside any section (put it under [run], [model], ...)", key);
	return lbs_ini_add_kv(&c->ini, &c->kv, &c->n_kv, &c->cap_kv, section, key, value);
}

/* ---- overrides -------------------------------------------------------- */

static lbs_status apply_override(parse_ctx *c, const char *arg)
{
	const char *eq = strchr(arg, '=');
	const char *dot = NULL;
	for (const char *p = arg; eq && p < eq; p++)
		if (*p == '.')
			dot = p;
	if (!eq || !dot || dot == arg || dot + 1 == eq)
		return lbs_error_set(c->ini.err, LBS_EUSAGE,
				     "--set %s: expected SECTION.KEY=VALUE (e.g. network.bandwidth=10 Gbit/s)", arg);
	size_t slen = (size_t)(dot - arg), klen = (size_t)(eq - dot - 1);
	const char *value = eq + 1;
	while (*value == ' ')
		value++;
	if (slen >= LBS_NAME_MAX + 16 || klen >= LBS_NAME_MAX || strlen(value) >= LBS_VALUE_MAX)
		return lbs_error_set(c->ini.err, LBS_EUSAGE, "--set %.*s%s: too long (%s of %zu bytes; at "
				     "most %d)", (int)(eq - arg < 64 ? eq - arg : 64), arg, eq - arg < 64 ? "" : "...",
				     strlen(value) >= LBS_VALUE_MAX ? "a value" : "a name",
				     strlen(value) >= LBS_VALUE_MAX ? strlen(value) : (size_t)(eq - arg),
				     strlen(value) >= LBS_VALUE_MAX ? LBS_VALUE_MAX - 1 : LBS_NAME_MAX - 1);
	/* What a file line must be, a --set must be too. */
	if (!lbs_utf8_valid((const unsigned char *)arg, strlen(arg)))
		return lbs_error_set(c->ini.err, LBS_EINPUT, "--set %.*s: the value is not valid UTF-8",
				     (int)(eq - arg < 64 ? eq - arg : 64), arg);
	lbs_kv e = { .at = { "--set", 0 } };
	memcpy(e.section, arg, slen);
	memcpy(e.key, dot + 1, klen);
	snprintf(e.value, sizeof e.value, "%s", value);
	for (size_t i = 0; i < c->n_kv; i++)
		if (strcmp(c->kv[i].section, e.section) == 0 && strcmp(c->kv[i].key, e.key) == 0) {
			if (*value)
				c->kv[i] = e;
			else /* "--set s.k=" removes the key, e.g. to give epochs instead */
				memmove(&c->kv[i], &c->kv[i + 1], (--c->n_kv - i) * sizeof *c->kv);
			return LBS_OK;
		}
	if (!*value)
		return lbs_error_set(c->ini.err, LBS_EUSAGE, "--set %s: the file does not set %s.%s, so there "
				     "is nothing to remove", arg, e.section, e.key);
	if (c->n_kv == c->cap_kv) {
		size_t ncap = c->cap_kv ? 2 * c->cap_kv : 32;
		lbs_kv *kv = realloc(c->kv, ncap * sizeof *kv);
		if (!kv)
			return lbs_error_set(c->ini.err, LBS_EINTERNAL, "out of memory");
		c->kv = kv;
		c->cap_kv = ncap;
	}
	c->kv[c->n_kv++] = e;
	bool known = false;
	for (size_t i = 0; i < c->n_hdr; i++)
		known |= strcmp(c->hdr[i].name, e.section) == 0;
	if (!known) { /* a section made by --set starts at the override */
		c->ini.line = 0;
		if (!push_header(c, e.section))
			return LBS_EINPUT;
	}
	return LBS_OK;
}

/* ---- building the scenario -------------------------------------------- */

static const section_spec *find_section(const char *name)
{
	for (size_t i = 0; i < NKEYS(sections); i++) {
		size_t len = strlen(sections[i].name);
		if (sections[i].name[len - 1] == '.' ? strncmp(name, sections[i].name, len) == 0
						     : strcmp(name, sections[i].name) == 0)
			return &sections[i];
	}
	return NULL;
}

static bool valid_group_name(const char *s)
{
	if (!*s || strlen(s) >= LBS_NAME_MAX)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      *s == '_' || *s == '-'))
			return false;
	return true;
}

static lbs_status add_config(lbs_scenario *sc, const char *section, const char *key, const char *value,
			     const lbs_origin *at)
{
	return lbs_kv_add(&sc->config, &sc->n_config, &sc->cap_config, section, key, value, at) ? LBS_OK
												: LBS_EINTERNAL;
}

/* Records the effective value of every key that has one: the text given, or
 * the default. */
static lbs_status record_config(lbs_scenario *sc, const char *section, const lbs_key_spec *keys,
				size_t nkeys, uint64_t present, const lbs_kv *const *entries, size_t n)
{
	for (size_t i = 0; i < nkeys; i++) {
		if (!(present >> i & 1))
			continue;
		const char *text = keys[i].def;
		const lbs_origin *at = NULL;
		for (size_t e = 0; e < n; e++)
			if (strcmp(entries[e]->key, keys[i].name) == 0) {
				text = entries[e]->value;
				at = &entries[e]->at;
			}
		if (add_config(sc, section, keys[i].name, text, at) != LBS_OK)
			return LBS_EINTERNAL;
	}
	return LBS_OK;
}

static lbs_status origin_error(lbs_error *err, const lbs_origin *at, const char *section,
			       const char *key, const char *msg)
{
	char label[LBS_ERROR_MAX / 2];
	lbs_origin_format(at, section, key, label, sizeof label);
	return lbs_error_set(err, LBS_EINPUT, "%s: %s", label, msg);
}

static lbs_status check_run(lbs_scenario *sc, uint64_t present, const lbs_origin *o,
			    const lbs_origin *where, lbs_error *err)
{
	int it = lbs_keys_find(run_keys, NKEYS(run_keys), "iterations");
	int ep = lbs_keys_find(run_keys, NKEYS(run_keys), "epochs");
	int ds = lbs_keys_find(run_keys, NKEYS(run_keys), "dataset_samples");
	bool has_it = present >> it & 1, has_ep = present >> ep & 1, has_ds = present >> ds & 1;
	lbs_run_spec *r = &sc->run;
	if (has_it && has_ep)
		return origin_error(err, &o[ep], "run", "epochs",
				    "give the run length as `iterations` or as `epochs`, not both");
	if (!has_it && !has_ep)
		return origin_error(err, where, "run", NULL,
				    "missing run length: set `iterations`, or `epochs` and `dataset_samples`");
	if (has_ep && !has_ds)
		return origin_error(err, &o[ep], "run", "epochs",
				    "`epochs` needs `dataset_samples` (the samples in one epoch)");
	if (has_ds && !has_ep)
		return origin_error(err, &o[ds], "run", "dataset_samples",
				    "`dataset_samples` is used only with `epochs`");
	if (has_it) {
		sc->iterations = r->iterations;
		return LBS_OK;
	}
	if (r->dataset_samples < r->global_batch) {
		char msg[256];
		snprintf(msg, sizeof msg, "%lld samples are fewer than one global batch (%lld)",
			 (long long)r->dataset_samples, (long long)r->global_batch);
		return origin_error(err, &o[ds], "run", "dataset_samples", msg);
	}
	sc->iterations_per_epoch = r->dataset_samples / r->global_batch;
	double total = (double)sc->iterations_per_epoch * (double)r->epochs;
	if (total > (double)LBS_MAX_ITERATIONS) {
		char msg[256];
		snprintf(msg, sizeof msg, "%lld epochs of %lld iterations exceed the limit of %lld iterations",
			 (long long)r->epochs, (long long)sc->iterations_per_epoch,
			 (long long)LBS_MAX_ITERATIONS);
		return origin_error(err, &o[ep], "run", "epochs", msg);
	}
	sc->iterations = (int64_t)total;
	return LBS_OK;
}

static lbs_status check_model(lbs_scenario *sc, uint64_t present, const lbs_origin *o,
			      const lbs_origin *where, lbs_error *err)
{
	int pa = lbs_keys_find(model_keys, NKEYS(model_keys), "parameters");
	int gr = lbs_keys_find(model_keys, NKEYS(model_keys), "gradient");
	bool has_pa = present >> pa & 1, has_gr = present >> gr & 1;
	if (has_pa && has_gr)
		return origin_error(err, &o[gr], "model", "gradient",
				    "give `parameters` or `gradient`, not both");
	lbs_model_spec *m = &sc->model;
	for (size_t i = 0; lbs_net_name_at(i); i++)
		m->is_net |= !strcmp(m->name, lbs_net_name_at(i));
	static const char *const tf_keys[] = { "sequence_length", "precision", "recompute" };
	for (size_t i = 0; i < 3; i++) {
		int k = lbs_keys_find(model_keys, NKEYS(model_keys), tf_keys[i]);
		if (present >> k & 1 && !lbs_net_is_transformer(m->name))
			return origin_error(err, &o[k], "model", tf_keys[i],
					    "applies to a transformer: set `name` to one of `lbsim calibrate "
					    "--list` (gpt3-*, llama2-*, llama3-*, llama-like-small)");
	}
	int pr = lbs_keys_find(model_keys, NKEYS(model_keys), "precision");
	m->has_precision = present >> pr & 1;
	if (!has_pa && !has_gr && !m->is_net)
		return origin_error(err, where, "model", NULL,
				    "missing gradient size: set `parameters` or `gradient`, or name a network "
				    "of `lbsim calibrate --list`");
	if (m->is_net) {
		lbs_net net;
		lbs_net_opts opts = { .seq_len = m->sequence_length,
				      .precision = m->has_precision ? m->precision + 1 : 0 };
		lbs_status st = lbs_net_create_opts(&net, m->name, &opts, err);
		if (st != LBS_OK) {
			int sl = lbs_keys_find(model_keys, NKEYS(model_keys), "sequence_length");
			char msg[LBS_ERROR_MAX / 2];
			lbs_fmt(msg, sizeof msg, "%s", err->msg);
			return origin_error(err, present >> sl & 1 ? &o[sl] : where, "model",
					    present >> sl & 1 ? "sequence_length" : NULL, msg);
		}
		if (!has_pa && !has_gr)
			m->parameters = net.params;
		lbs_net_destroy(&net);
	}
	if (has_pa || (!has_gr && m->is_net))
		m->gradient_bytes = (double)m->parameters * m->bytes_per_parameter;
	return LBS_OK;
}

/* Each group with `memory`: its cap from the model's memory per worker,
 * with ZeRO's partitions over all the workers. */
static lbs_status apply_memory(lbs_scenario *sc, lbs_error *err)
{
	const lbs_model_spec *m = &sc->model;
	lbs_net net;
	bool built = false;
	lbs_status st = LBS_OK;
	for (size_t i = 0; i < sc->n_groups && st == LBS_OK; i++) {
		lbs_group_spec *g = &sc->groups[i];
		if (!(g->memory_bytes > 0))
			continue;
		char section[LBS_NAME_MAX + 16], msg[LBS_ERROR_MAX / 2];
		snprintf(section, sizeof section, "workers.%s", g->name);
		lbs_origin at = lbs_scenario_origin(sc, section, "memory");
		if (!m->is_net) {
			lbs_fmt(msg, sizeof msg, "sizing the memory needs the model's layers: set [model] name to "
				"one of `lbsim calibrate --list` (not '%s')", m->name);
			return origin_error(err, &at, section, "memory", msg);
		}
		if (!built) {
			lbs_net_opts opts = { .seq_len = m->sequence_length,
					      .precision = m->has_precision ? m->precision + 1 : 0,
					      .recompute = m->recompute, .optimizer = m->optimizer,
					      .zero_stage = (int)m->zero_stage, .dp = sc->n_workers };
			if ((st = lbs_net_create_opts(&net, m->name, &opts, err)) != LBS_OK)
				return st;
			built = true;
		}
		lbs_mem m0, m1;
		lbs_net_memory(&net, 0, &m0);
		lbs_net_memory(&net, 1, &m1);
		g->state_bytes = m0.total;
		g->sample_bytes = m1.activations;
		int64_t cap = lbs_net_max_batch(&net, g->memory_bytes);
		if (cap < 1) {
			lbs_fmt(msg, sizeof msg, "out of memory: %.4g GB hold no sample of %s: its weights (%.4g GB), "
				"gradients (%.4g GB) and optimizer states (%.4g GB) take %.4g GB, and one sample's "
				"activations %.4g GB more (%d workers, ZeRO stage %lld)",
				g->memory_bytes / 1e9, m->name, m0.weights / 1e9, m0.grads / 1e9, m0.optimizer / 1e9,
				m0.total / 1e9, m1.activations / 1e9, (int)sc->n_workers, (long long)m->zero_stage);
			st = origin_error(err, &at, section, "memory", msg);
			break;
		}
		g->memory_cap = cap;
		if (cap < g->cost.max_batch)
			g->cost.max_batch = cap;
	}
	if (built)
		lbs_net_destroy(&net);
	return st;
}

static lbs_status check_network(lbs_scenario *sc, uint64_t present, lbs_error *err)
{
	(void)err;
	lbs_network *n = &sc->network;
	n->ops = lbs_network_kinds[n->kind];
	int wb = lbs_keys_find(network_keys, NKEYS(network_keys), "worker_bandwidth");
	if (n->ops == &lbs_network_ps && !(present >> wb & 1))
		n->worker_bandwidth_Bps = n->bandwidth_Bps;
	return LBS_OK;
}

/* A trace's keys that can be checked without reading the trace. */
static lbs_status check_trace(const lbs_trace_spec *t, const char *section, const lbs_origin *o,
			      lbs_error *err)
{
	int me = lbs_keys_find(trace_keys, NKEYS(trace_keys), "trace_metric");
	if (*t->metric && !lbs_cloudwatch_metric_known(t->metric)) {
		char msg[512], known[256];
		lbs_cloudwatch_metrics(known, sizeof known);
		lbs_fmt(msg, sizeof msg, "unknown CloudWatch metric '%s' (known: %s)", t->metric, known);
		return origin_error(err, &o[me], section, "trace_metric", msg);
	}
	return LBS_OK;
}

/* The entries of a section that start with "trace" go to their own table
 * and struct: they are moved to the front of entries[] (*n_trace of them),
 * validated, checked and recorded; the caller applies the rest. */
static lbs_status apply_trace_keys(lbs_scenario *sc, const char *section, const lbs_origin *where,
				   const lbs_kv **entries, size_t n, lbs_trace_spec *target,
				   size_t *n_trace, lbs_error *err)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(entries[i]->key, "trace", 5) == 0) {
			const lbs_kv *e = entries[i];
			memmove(&entries[k + 1], &entries[k], (i - k) * sizeof *entries);
			entries[k++] = e;
		}
	*n_trace = k;
	uint64_t present = 0;
	lbs_origin o[64];
	lbs_status st = lbs_keys_apply(trace_keys, NKEYS(trace_keys), section, where,
				       (const lbs_kv *const *)entries, k, target, &present, o, err);
	if (st == LBS_OK)
		st = check_trace(target, section, o, err);
	if (st == LBS_OK && record_config(sc, section, trace_keys, NKEYS(trace_keys), present,
					  (const lbs_kv *const *)entries, k))
		st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	return st;
}

lbs_status lbs_scenario_trace_keys(const char *section, const lbs_origin *where, const lbs_kv *const *entries,
				   size_t n, lbs_trace_spec *target, lbs_error *err)
{
	lbs_origin o[64];
	uint64_t present = 0;
	lbs_status st = lbs_keys_apply(trace_keys, NKEYS(trace_keys), section, where, entries, n, target, &present,
				       o, err);
	return st == LBS_OK ? check_trace(target, section, o, err) : st;
}

static lbs_status check_group(lbs_group_spec *g, uint64_t present, const lbs_origin *o,
			      int profile_class, lbs_error *err)
{
	char section[LBS_NAME_MAX + 16];
	snprintf(section, sizeof section, "workers.%s", g->name);
	int pr = lbs_keys_find(group_keys, NKEYS(group_keys), "profile");
	if (profile_class >= 0 && profile_class != g->device) {
		char msg[LBS_ERROR_MAX / 2];
		lbs_fmt(msg, sizeof msg, "%s is a profile of a %s, but this group's device is %s",
			g->profile_path, profile_class ? "gpu" : "cpu", g->device ? "gpu" : "cpu");
		return origin_error(err, &o[pr], section, "profile", msg);
	}
	g->cost.ops = lbs_cost_kinds[g->cost.kind];
	int mb = lbs_keys_find(group_keys, NKEYS(group_keys), "max_batch");
	if (!(present >> mb & 1))
		g->cost.max_batch = INT64_MAX;
	int hi = lbs_keys_find(group_keys, NKEYS(group_keys), "noise_high");
	if (g->noise.kind == LBS_NOISE_UNIFORM && g->noise.high < g->noise.low)
		return origin_error(err, &o[hi], section, "noise_high", "must be >= noise_low");
	if (g->profile_cost == 1) {
		int pc = lbs_keys_find(group_keys, NKEYS(group_keys), "profile_cost");
		if (!g->cost_table)
			return origin_error(err, &o[pc], section, "profile_cost",
					    g->profile[0] ? "the profile has no [measurements] of batches up to "
							    "1048576 to take the times from"
							  : "`measured` takes the times of a profile: give `profile`");
		g->cost.ops = &lbs_cost_measured;
		g->cost.table_s = g->cost_table;
	}
	int tk = lbs_keys_find(group_keys, NKEYS(group_keys), "cpu_quota_tick");
	if (g->cpu_quota_tick_s > 0 && !(g->cpu_quota_period_s > 0))
		return origin_error(err, &o[tk], section, "cpu_quota_tick",
				    "applies to CPU limits enforced per period: set cpu_quota_period too");
	return LBS_OK;
}

/* `profile = PATH` in a [workers.NAME] section: loads and validates the
 * profile and appends its [cost] entries to the group's entries[0..*n), with
 * their origins in the profile, so the group's schema checks and records them
 * like keys of its own. The group may not set those keys itself, except
 * max_batch, resize_cost and new_batch_cost, which override the profile's
 * (a cap or a re-sizing cost is the machine's and the framework's as much as
 * the model's). kv holds the added entries; *device_class is the profile's. */
static lbs_status add_profile(lbs_group_spec *g, const char *section, const lbs_kv **entries,
			      size_t *n, lbs_kv kv[LBS_PROFILE_COST_KEYS], int *device_class,
			      lbs_error *err)
{
	static const char *const given_by_profile[] = { "cost", "t0", "per_sample", "t_flat",
							"saturation_batch", "exponent", "per_sample_sq",
							"flat_below" };
	static const char *const overridable[] = { "max_batch", "resize_cost", "new_batch_cost" };
	enum { N_OVERRIDABLE = sizeof overridable / sizeof *overridable };
	const lbs_kv *given = NULL;
	bool own[N_OVERRIDABLE] = { false };
	for (size_t i = 0; i < *n; i++) {
		given = strcmp(entries[i]->key, "profile") ? given : entries[i];
		for (size_t k = 0; k < N_OVERRIDABLE; k++)
			own[k] |= !strcmp(entries[i]->key, overridable[k]);
	}
	if (!given)
		return LBS_OK;
	const char *file = given->at.file, *slash = file ? strrchr(file, '/') : NULL;
	char label[LBS_ERROR_MAX / 2];
	lbs_origin_format(&given->at, section, "profile", label, sizeof label);
	/* Relative to the file's folder, then LBSIM_PATH and the installed
	 * profiles (util/datapath.h); with --set, to the working directory. */
	char base[LBS_DATAPATH_MAX];
	snprintf(base, sizeof base, "%.*s", given->at.line > 0 && slash ? (int)(slash - file + 1) : 0,
		 file ? file : "");
	lbs_datapath *dp = lbs_calloc(1, sizeof *dp, err);
	if (!dp)
		return LBS_EINTERNAL;
	lbs_datapath_find(given->value, base, "profiles", dp);
	int len = snprintf(g->profile_path, sizeof g->profile_path, "%s", dp->path);
	if (len < 0 || (size_t)len >= sizeof g->profile_path) {
		free(dp);
		return lbs_error_set(err, LBS_EINPUT, "%s: path too long", label);
	}
	lbs_profile prof;
	lbs_status st = lbs_profile_load(&prof, g->profile_path, err);
	if (st != LBS_OK) {
		lbs_datapath_explain(err, dp);
		free(dp);
		lbs_error_prefix(err, "%s", label);
		return st;
	}
	free(dp);
	/* profile_cost = measured: the measured times, one per batch. */
	for (size_t i = 0; i < *n && !g->cost_table; i++)
		if (!strcmp(entries[i]->key, "profile_cost") && !strcmp(entries[i]->value, "measured") &&
		    (st = lbs_profile_cost_table(&prof, &g->cost_table, &g->cost.table_n, err)) != LBS_OK) {
			lbs_profile_destroy(&prof);
			return st;
		}
	lbs_profile_destroy(&prof); /* only the plain fields are used below */
	for (size_t i = 0; i < *n; i++)
		for (size_t k = 0; k < sizeof given_by_profile / sizeof *given_by_profile; k++)
			if (!strcmp(entries[i]->key, given_by_profile[k])) {
				char msg[LBS_ERROR_MAX / 2];
				lbs_fmt(msg, sizeof msg, "the profile %s gives %s: remove it here, or remove "
					"`profile` to give the cost model by hand", g->profile_path,
					given_by_profile[k]);
				return origin_error(err, &entries[i]->at, section, entries[i]->key, msg);
			}
	size_t added = 0;
	for (size_t i = 0; i < prof.n_cost_kv; i++) {
		bool overridden = false;
		for (size_t k = 0; k < N_OVERRIDABLE; k++)
			overridden |= own[k] && !strcmp(prof.cost_kv[i].key, overridable[k]);
		if (overridden)
			continue;
		kv[added] = prof.cost_kv[i];
		kv[added].at.file = g->profile_path;
		entries[(*n)++] = &kv[added++];
	}
	*device_class = prof.device_class;
	return LBS_OK;
}

/* The schema of a component options section: [policy.NAME] or
 * [predictor.NAME]. NULL (with a message) when NAME is not registered. */
static const lbs_key_spec *component_schema(const lbs_scenario *sc, const char *section,
					    const lbs_origin *where, size_t *nkeys, size_t *size,
					    lbs_error *err)
{
	static const lbs_key_spec no_keys[1];
	bool policy = strncmp(section, "policy.", 7) == 0;
	const char *name = section + (policy ? 7 : 10);
	char names[512], msg[768];
	if (policy) {
		const lbs_policy_ops *pol = lbs_scenario_policy(sc, name);
		if (pol) {
			*nkeys = pol->n_options;
			*size = pol->options_size;
			return pol->options ? pol->options : no_keys;
		}
		lbs_scenario_policy_names(sc, names, sizeof names);
	} else {
		const lbs_predictor_ops *pre = lbs_scenario_predictor(sc, name);
		if (pre) {
			*nkeys = pre->n_options;
			*size = pre->options_size;
			return pre->options ? pre->options : no_keys;
		}
		lbs_predictor_names(names, sizeof names);
	}
	lbs_fmt(msg, sizeof msg, "options for an unknown %s '%s' (known: %s)",
		policy ? "policy" : "predictor", name, names);
	origin_error(err, where, section, NULL, msg);
	return NULL;
}

static lbs_status add_component_entries(lbs_scenario *sc, const char *section, const lbs_origin *where,
					const lbs_key_spec *keys, size_t nkeys, size_t size,
					const lbs_kv *const *entries, size_t n, lbs_error *err);

/* Validates a [policy.NAME] or [predictor.NAME] section completely (the
 * component's own schema fills a scratch copy of its options) and keeps its
 * entries for when the component is created. */
static lbs_status add_component_options(lbs_scenario *sc, const char *section, const lbs_origin *where,
					const lbs_kv *const *entries, size_t n, lbs_error *err)
{
	size_t nkeys = 0, size = 0;
	const lbs_key_spec *keys = component_schema(sc, section, where, &nkeys, &size, err);
	if (!keys)
		return LBS_EINPUT;
	/* A predictor plugin's `plugin` key is lbsim's (loaded before), not
	 * the predictor's: recorded, and kept from its options. */
	size_t kept = 0;
	const lbs_kv *plugin = NULL;
	const lbs_kv **own = lbs_calloc(n + 1, sizeof *own, err);
	if (!own)
		return LBS_EINTERNAL;
	for (size_t i = 0; i < n; i++) {
		if (!strncmp(section, "predictor.", 10) && !strcmp(entries[i]->key, "plugin"))
			plugin = entries[i];
		else
			own[kept++] = entries[i];
	}
	lbs_status st = add_component_entries(sc, section, where, keys, nkeys, size, own, kept, err);
	free(own);
	if (st == LBS_OK && plugin && add_config(sc, section, "plugin", plugin->value, &plugin->at) != LBS_OK)
		st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	return st;
}

static lbs_status add_component_entries(lbs_scenario *sc, const char *section, const lbs_origin *where,
					const lbs_key_spec *keys, size_t nkeys, size_t size,
					const lbs_kv *const *entries, size_t n, lbs_error *err)
{
	void *scratch = lbs_calloc(1, size ? size : 1, err);
	if (!scratch)
		return LBS_EINTERNAL;
	uint64_t present;
	lbs_origin o[64];
	lbs_status st = lbs_keys_apply(keys, nkeys, section, where, entries, n, scratch, &present, o, err);
	free(scratch);
	if (st != LBS_OK)
		return st;
	lbs_policy_options *po = realloc(sc->policy_options, (sc->n_policy_options + 1) * sizeof *po);
	if (!po)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	sc->policy_options = po;
	po = &po[sc->n_policy_options];
	memset(po, 0, sizeof *po);
	snprintf(po->section, sizeof po->section, "%s", section);
	po->at = *where;
	if (!(po->kv = calloc(n + 1, sizeof *po->kv)))
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	sc->n_policy_options++;
	for (size_t i = 0; i < n; i++)
		po->kv[po->n++] = *entries[i];
	return record_config(sc, section, keys, nkeys, present, entries, n);
}

lbs_status lbs_scenario_check_policy(const lbs_scenario *sc, const char *name, const lbs_origin *at,
				     lbs_error *err)
{
	if (lbs_scenario_policy(sc, name))
		return LBS_OK;
	char msg[768], names[512];
	lbs_scenario_policy_names(sc, names, sizeof names);
	lbs_fmt(msg, sizeof msg, "unknown policy '%s' (known: %s)", name, names);
	return origin_error(err, at, "policy", "name", msg);
}

const lbs_policy_ops *lbs_scenario_policy(const lbs_scenario *sc, const char *name)
{
	const lbs_policy_ops *ops = lbs_policy_find(name);
	for (size_t i = 0; !ops && i < sc->n_plugins; i++)
		if (sc->plugins[i].policy && !strcmp(sc->plugins[i].policy->name, name))
			ops = sc->plugins[i].policy;
	return ops;
}

const lbs_predictor_ops *lbs_scenario_predictor(const lbs_scenario *sc, const char *name)
{
	const lbs_predictor_ops *ops = lbs_predictor_find(name);
	for (size_t i = 0; !ops && i < sc->n_plugins; i++)
		if (sc->plugins[i].predictor && !strcmp(sc->plugins[i].predictor->name, name))
			ops = sc->plugins[i].predictor;
	return ops;
}

void lbs_scenario_policy_names(const lbs_scenario *sc, char *buf, size_t len)
{
	lbs_policy_names(buf, len);
	for (size_t i = 0; i < sc->n_plugins; i++)
		if (sc->plugins[i].policy) {
			size_t used = strlen(buf);
			lbs_fmt(buf + used, len - used, ", %s (plugin)", sc->plugins[i].policy->name);
		}
}

/* Loads the plugins that [policy] plugin and [predictor.NAME] plugin name,
 * before any section is read, so that the policy and predictor sections,
 * in whatever order, find them. A path is found like a profile's. */
static lbs_status load_plugins(lbs_scenario *sc, const parse_ctx *c, lbs_error *err)
{
	for (size_t i = 0; i < c->n_kv; i++) {
		const lbs_kv *kv = &c->kv[i];
		bool predictor = !strncmp(kv->section, "predictor.", 10);
		if (strcmp(kv->key, "plugin") || (!predictor && strcmp(kv->section, "policy")))
			continue;
		char label[LBS_ERROR_MAX / 2];
		lbs_origin_format(&kv->at, kv->section, "plugin", label, sizeof label);
		if (!*kv->value)
			return lbs_error_set(err, LBS_EINPUT, "%s: expected the path of a shared object", label);
		/* A scenario file names plugins within its own folder (or a data
		 * folder's plugins/); a path anywhere comes from the command line. */
		if (kv->at.line > 0 && (kv->value[0] == '/' || !strcmp(kv->value, "..") ||
					!strncmp(kv->value, "../", 3) || strstr(kv->value, "/../") ||
					(strlen(kv->value) >= 3 &&
					 !strcmp(kv->value + strlen(kv->value) - 3, "/.."))))
			return lbs_error_set(err, LBS_EINPUT, "%s: '%s' leaves the scenario's folder: a scenario "
					     "file names a plugin by a relative path without '..' (an absolute path "
					     "goes on the command line, --set %s.plugin=PATH)", label, kv->value,
					     kv->section);
		const char *file = kv->at.file, *slash = file ? strrchr(file, '/') : NULL;
		char base[LBS_DATAPATH_MAX];
		snprintf(base, sizeof base, "%.*s", kv->at.line > 0 && slash ? (int)(slash - file + 1) : 0,
			 file ? file : "");
		lbs_datapath *dp = lbs_calloc(1, sizeof *dp, err);
		lbs_plugin *more = realloc(sc->plugins, (sc->n_plugins + 1) * sizeof *more);
		if (!dp || !more) {
			free(dp);
			return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
		}
		sc->plugins = more;
		lbs_datapath_find(kv->value, base, "plugins", dp);
		char path[LBS_DATAPATH_MAX + 2];
		/* dlopen searches the library path for a name without '/' */
		lbs_fmt(path, sizeof path, "%s%s", strchr(dp->path, '/') ? "" : "./", dp->path);
		lbs_plugin *p = &sc->plugins[sc->n_plugins];
		lbs_status st = dp->found ? lbs_plugin_open(p, path, predictor, err)
					  : lbs_error_set(err, LBS_EINPUT, "%s: no such file", kv->value);
		if (st != LBS_OK) {
			lbs_datapath_explain(err, dp);
			free(dp);
			lbs_error_prefix(err, "%s", label);
			return st;
		}
		free(dp);
		sc->n_plugins++;
		const char *name = p->policy ? p->policy->name : p->predictor->name;
		char msg[LBS_ERROR_MAX / 2];
		if (predictor && strcmp(name, kv->section + 10))
			return origin_error(err, &kv->at, kv->section, "plugin",
					    lbs_fmt(msg, sizeof msg, "%s holds predictor '%s', not '%s'", path,
						    name, kv->section + 10));
		for (size_t k = 0; k + 1 < sc->n_plugins; k++) {
			const lbs_plugin *q = &sc->plugins[k];
			if (!!q->policy == !!p->policy &&
			    !strcmp(q->policy ? q->policy->name : q->predictor->name, name))
				return origin_error(err, &kv->at, kv->section, "plugin",
						    lbs_fmt(msg, sizeof msg, "%s and %s both hold %s '%s'",
							    q->path, path, predictor ? "predictor" : "policy",
							    name));
		}
	}
	return LBS_OK;
}

void lbs_scenario_section_options(const lbs_scenario *sc, const char *section, const lbs_kv **kv,
				  size_t *n)
{
	*kv = NULL;
	*n = 0;
	for (size_t i = 0; i < sc->n_policy_options; i++)
		if (!strcmp(sc->policy_options[i].section, section)) {
			*kv = sc->policy_options[i].kv;
			*n = sc->policy_options[i].n;
		}
}

static lbs_status build(lbs_scenario *sc, parse_ctx *c, lbs_error *err)
{
	/* room for a group's keys plus what a profile adds */
	const lbs_kv **entries = calloc(c->n_kv + 1 + LBS_PROFILE_COST_KEYS, sizeof *entries);
	if (!entries)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	lbs_status st = LBS_OK;
	bool seen_run = false, seen_model = false, seen_network = false;
	size_t n_groups = 0, n_gens = 0;
	for (size_t h = 0; h < c->n_hdr; h++) {
		n_groups += strncmp(c->hdr[h].name, "workers.", 8) == 0;
		n_gens += strncmp(c->hdr[h].name, "generator.", 10) == 0;
	}
	if (n_groups > LBS_MAX_GROUPS) {
		free(entries);
		return lbs_error_set(err, LBS_EINPUT, "%s: %zu worker groups (the limit is %d)", c->ini.path,
				     n_groups, LBS_MAX_GROUPS);
	}
	sc->groups = calloc(n_groups ? n_groups : 1, sizeof *sc->groups);
	sc->generators = calloc(n_gens ? n_gens : 1, sizeof *sc->generators);
	if (!sc->groups || !sc->generators) {
		free(entries);
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	}
	if ((st = load_plugins(sc, c, err)) != LBS_OK) {
		free(entries);
		return st;
	}

	for (size_t h = 0; h < c->n_hdr && st == LBS_OK; h++) {
		const char *name = c->hdr[h].name;
		lbs_origin where = { c->hdr[h].line ? c->ini.path : "--set", c->hdr[h].line };
		const section_spec *spec = find_section(name);
		if (!spec) {
			static const lbs_key_spec names[] = { { .name = "run" }, { .name = "model" },
							      { .name = "network" }, { .name = "policy" },
							      { .name = "testbed" }, { .name = "sync" },
							      { .name = "convergence" } };
			const char *hint = lbs_keys_suggest(names, 7, name);
			char label[LBS_ERROR_MAX / 2];
			lbs_origin_format(&where, name, NULL, label, sizeof label);
			st = lbs_error_set(err, LBS_EINPUT,
					   "%s: unknown section%s%s%s (expected [run], [model], [network], "
					   "[policy], [policy.NAME], [predictor.NAME], [workers.NAME], "
					   "[generator.NAME], [sync], [convergence] or [testbed])", label, hint ? " (did you mean [" : "",
					   hint ? hint : "", hint ? "]?)" : "");
			break;
		}
		size_t n = 0;
		for (size_t i = 0; i < c->n_kv; i++)
			if (strcmp(c->kv[i].section, name) == 0)
				entries[n++] = &c->kv[i];
		uint64_t present = 0;
		lbs_origin o[64];
		lbs_kv from_profile[LBS_PROFILE_COST_KEYS]; /* entries[] may point here until recorded */
		if (strcmp(spec->name, "policy.") == 0 || strcmp(spec->name, "predictor.") == 0) {
			st = add_component_options(sc, name, &where, entries, n, err);
			continue;
		}
		if (strcmp(spec->name, "workers.") == 0) {
			lbs_group_spec *g = &sc->groups[sc->n_groups];
			const char *gname = name + 8;
			if (!valid_group_name(gname)) {
				st = origin_error(err, &where, name, NULL,
						  "group names use letters, digits, '_' and '-' (at most 63)");
				break;
			}
			snprintf(g->name, sizeof g->name, "%s", gname);
			g->at = where;
			int profile_class = -1;
			st = add_profile(g, name, entries, &n, from_profile, &profile_class, err);
			size_t n_trace = 0;
			if (st == LBS_OK)
				st = apply_trace_keys(sc, name, &where, entries, n, &g->trace, &n_trace, err);
			if (st == LBS_OK)
				st = lbs_keys_apply(spec->keys, spec->nkeys, name, &where, entries + n_trace,
						    n - n_trace, g, &present, o, err);
			if (st == LBS_OK)
				st = check_group(g, present, o, profile_class, err);
			if (st != LBS_OK) { /* not counted: destroy would not see it */
				free(g->cost_table);
				g->cost_table = NULL;
			}
			if (st == LBS_OK) {
				sc->n_groups++;
				sc->n_workers += g->count;
				if (sc->n_workers > LBS_MAX_WORKERS)
					st = origin_error(err, &o[0], name, "count",
							  "the workers of all groups exceed the limit of 1000000");
			}
		} else if (strcmp(spec->name, "generator.") == 0) {
			lbs_gen_spec *g = &sc->generators[sc->n_generators];
			const char *gname = name + 10;
			if (!valid_group_name(gname)) {
				st = origin_error(err, &where, name, NULL,
						  "generator names use letters, digits, '_' and '-' (at most 63)");
				break;
			}
			snprintf(g->name, sizeof g->name, "%s", gname);
			g->at = where;
			st = lbs_keys_apply(spec->keys, spec->nkeys, name, &where, entries, n, g, &present,
					    o, err);
			if (st == LBS_OK && (st = lbs_gen_check(g, present, o, err)) == LBS_OK)
				sc->n_generators++;
		} else if (strcmp(spec->name, "run") == 0) {
			seen_run = true;
			st = lbs_keys_apply(spec->keys, spec->nkeys, name, &where, entries, n, &sc->run,
					    &present, o, err);
			if (st == LBS_OK)
				st = check_run(sc, present, o, &where, err);
		} else if (strcmp(spec->name, "policy") == 0) {
			sc->policy.at = where;
			for (size_t i = 0; i < n; i++)
				if (strcmp(entries[i]->key, "name") != 0 && strcmp(entries[i]->key, "plugin") != 0) {
					st = origin_error(err, &entries[i]->at, "policy", entries[i]->key,
							  "unknown key: [policy] holds only `name` and `plugin`; a "
							  "policy's options go in its own section, [policy.NAME]");
					break;
				}
			if (st != LBS_OK)
				break;
			st = lbs_keys_apply(spec->keys, spec->nkeys, name, &where, entries, n, &sc->policy,
					    &present, o, err);
			if (st == LBS_OK && o[0].file)
				sc->policy.at = o[0];
		} else if (strcmp(spec->name, "testbed") == 0) {
			st = lbs_keys_apply(spec->keys, spec->nkeys, name, &where, entries, n, &sc->testbed,
					    &present, o, err);
		} else if (strcmp(spec->name, "sync") == 0) {
			st = lbs_keys_apply(spec->keys, spec->nkeys, name, &where, entries, n, &sc->sync,
					    &present, o, err);
		} else if (strcmp(spec->name, "convergence") == 0) {
			st = lbs_keys_apply(spec->keys, spec->nkeys, name, &where, entries, n, &sc->convergence,
					    &present, o, err);
		} else if (strcmp(spec->name, "model") == 0) {
			seen_model = true;
			st = lbs_keys_apply(spec->keys, spec->nkeys, name, &where, entries, n, &sc->model,
					    &present, o, err);
			if (st == LBS_OK)
				st = check_model(sc, present, o, &where, err);
		} else {
			seen_network = true;
			size_t n_trace = 0;
			st = apply_trace_keys(sc, name, &where, entries, n, &sc->network_trace, &n_trace, err);
			if (st == LBS_OK)
				st = lbs_keys_apply(spec->keys, spec->nkeys, name, &where, entries + n_trace,
						    n - n_trace, &sc->network, &present, o, err);
			if (st == LBS_OK)
				st = check_network(sc, present, err);
			if (st == LBS_OK && sc->network_trace.format && sc->network.ops == &lbs_network_none) {
				lbs_origin at = where;
				for (size_t i = 0; i < n_trace; i++)
					if (!strcmp(entries[i]->key, "trace_format"))
						at = entries[i]->at;
				st = origin_error(err, &at, name, "trace_format", "a bandwidth trace needs a network "
						  "to slow down: topology ring or ps");
			}
			int wb = lbs_keys_find(network_keys, NKEYS(network_keys), "worker_bandwidth");
			if (st == LBS_OK && sc->network.ops == &lbs_network_ps && !(present >> wb & 1)) {
				/* Record the value it takes from `bandwidth`. */
				for (size_t i = 0; i < n; i++)
					if (!strcmp(entries[i]->key, "bandwidth") &&
					    add_config(sc, name, "worker_bandwidth", entries[i]->value, NULL))
						st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
			}
		}
		if (st == LBS_OK && record_config(sc, name, spec->keys, spec->nkeys, present, entries, n))
			st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	}
	free(entries);
	if (st != LBS_OK)
		return st;
	const char *missing = !seen_run ? "[run]" : !seen_model ? "[model]" : !seen_network ? "[network]"
			      : sc->n_groups == 0 ? "[workers.NAME]" : NULL;
	if (missing)
		return lbs_error_set(err, LBS_EINPUT, "%s: missing section %s", c->ini.path, missing);
	/* Generators name groups, which may come after them in the file. */
	if ((st = lbs_gen_resolve(sc, err)) != LBS_OK)
		return st;
	/* ZeRO partitions over every worker: known once all groups are read */
	if ((st = apply_memory(sc, err)) != LBS_OK)
		return st;
	if (!sc->policy.at.file) { /* no [policy] section: the default */
		sc->policy.at = (lbs_origin){ c->ini.path, 0 };
		snprintf(sc->policy.name, sizeof sc->policy.name, "%s", policy_keys[0].def);
		if (add_config(sc, "policy", "name", sc->policy.name, NULL) != LBS_OK)
			return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	}
	if ((st = lbs_scenario_check_policy(sc, sc->policy.name, &sc->policy.at, err)) != LBS_OK)
		return st;
	if (!*sc->run.name) {
		const char *base = strrchr(c->ini.path, '/');
		base = base ? base + 1 : c->ini.path;
		snprintf(sc->run.name, sizeof sc->run.name, "%s", base);
		char *dot = strrchr(sc->run.name, '.');
		if (dot && strcmp(dot, ".ini") == 0)
			*dot = '\0';
		if (add_config(sc, "run", "name", sc->run.name, NULL) != LBS_OK)
			return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	}
	return LBS_OK;
}

lbs_status lbs_scenario_load(lbs_scenario *sc, const char *path, const char *const *overrides,
			     size_t n_overrides, lbs_error *err)
{
	memset(sc, 0, sizeof *sc);
	snprintf(sc->path, sizeof sc->path, "%s", path);
	parse_ctx c = { .ini = { .max_chars = LBS_LINE_MAX, .on_section = on_section } };
	lbs_status st = lbs_ini_parse(&c.ini, sc->path, "scenario", on_key, &c, err);
	if (st == LBS_OK && c.n_kv == 0 && c.n_hdr == 0)
		st = lbs_error_set(err, LBS_EINPUT, "%s: empty scenario (no sections or keys)", path);
	for (size_t i = 0; st == LBS_OK && i < n_overrides; i++)
		st = apply_override(&c, overrides[i]);
	if (st == LBS_OK)
		st = build(sc, &c, err);
	free(c.kv);
	free(c.hdr);
	if (st != LBS_OK)
		lbs_scenario_destroy(sc);
	return st;
}

lbs_origin lbs_scenario_origin(const lbs_scenario *sc, const char *section, const char *key)
{
	for (size_t i = 0; i < sc->n_config; i++)
		if (!strcmp(sc->config[i].section, section) && !strcmp(sc->config[i].key, key))
			return sc->config[i].at;
	return (lbs_origin){ sc->path, 0 };
}

void lbs_scenario_destroy(lbs_scenario *sc)
{
	for (size_t i = 0; sc->groups && i < sc->n_groups; i++)
		free(sc->groups[i].cost_table);
	lbs_gen_specs_free(sc->generators, sc->n_generators);
	free(sc->generators);
	sc->generators = NULL;
	sc->n_generators = 0;
	free(sc->groups);
	for (size_t i = 0; i < sc->n_policy_options; i++)
		free(sc->policy_options[i].kv);
	free(sc->policy_options);
	free(sc->config);
	for (size_t i = 0; i < sc->n_plugins; i++)
		lbs_plugin_close(&sc->plugins[i]);
	free(sc->plugins);
	sc->plugins = NULL;
	sc->n_plugins = 0;
	sc->groups = NULL;
	sc->policy_options = NULL;
	sc->n_policy_options = 0;
	sc->config = NULL;
	sc->n_groups = sc->n_config = sc->cap_config = 0;
}

void lbs_scenario_document(FILE *out)
{
	fprintf(out, "# Scenario keys\n\n"
		     "Generated by `lbsim keys` from the schema tables in sim/scenario.c; do not edit.\n"
		     "A time, size or bandwidth must carry its unit (see doc/scenario.md).\n\n");
	for (size_t i = 0; i < NKEYS(sections); i++) {
		const section_spec *s = &sections[i];
		bool prefix = s->name[strlen(s->name) - 1] == '.';
		fprintf(out, "### [%s%s]\n\n%s.\n\n", s->name, prefix ? "NAME" : "", s->doc);
		if (s->keys)
			lbs_keys_document(out, s->keys, s->nkeys);
		if (!strcmp(s->name, "policy"))
			lbs_policy_document(out);
		if (s->keys == network_keys)
			fprintf(out, "\n`[network]` also takes the `trace*` keys of `[workers.NAME]` (below): "
				     "a bandwidth trace then scales the transfer part of each aggregation, "
				     "and `rate` is relative to `bandwidth` unless `trace_reference` is given "
				     "(doc/traces.md).\n");
		if (s->keys == group_keys) {
			fprintf(out, "\nA group's availability can follow a trace instead: the `trace*` keys "
				     "bind one (formats, mappings and examples: doc/traces.md).\n\n");
			lbs_keys_document(out, trace_keys, NKEYS(trace_keys));
		}
		if (!strcmp(s->name, "predictor."))
			lbs_predictor_document(out);
		fprintf(out, "\n");
	}
}
