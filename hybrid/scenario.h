/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Hybrid scenarios (doc/hybrid.md): a scenario file with a [hybrid]
 * section describes one hybrid-parallel job, its cluster and its links;
 * `lbsim SCENARIO` runs it on the hybrid engine (hybrid/hybrid.h). Every
 * key is a row of a schema table (util/keys.h), validated like the
 * data-parallel scenario's: bad input names the file, the line and the key. */
#ifndef LBS_HYBRID_SCENARIO_H
#define LBS_HYBRID_SCENARIO_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <gsl/gsl_rng.h>

#include "hybrid/hybrid.h"
#include "hybrid/policy.h"
#include "sim/plugin.h"
#include "traces/binding.h"
#include "util/keys.h"

#define LBS_HY_MAX_GPUS 1048576
/* [model] op_overhead unset: what one operation (a layer's pass) of a
 * hybrid job costs besides its arithmetic and bytes, the GPU's idle time
 * between kernels that the host's launches expose, measured by
 * torch.profiler on an H200 (traces/data/measured-h200, doc/gpus.md,
 * "Measured on an H200"): the median over the 28 steps of GPT-3 125M to
 * 6.7B, two machines, that keep the GPU 95% busy or more, of the step's
 * idle time over its operations, 4.95 us. Not fitted to any published
 * run. */
#define LBS_HY_OP_OVERHEAD_S 5e-6
#define LBS_HY_MAX_NODE_GROUPS 256
#define LBS_HY_MAX_EPISODES 1024
/* The least level overlapping episodes take a GPU's speed or bandwidth to
 * (their factors' product, kept from underflowing to 0: a step of
 * infinite time). */
#define LBS_HY_LEAST_LEVEL 1e-9

typedef enum lbs_hy_placement { LBS_HY_PLACE_TP_PP_DP, LBS_HY_PLACE_TP_DP_PP } lbs_hy_placement;
#define LBS_HY_PLACEMENT_CHOICES "tp-pp-dp|tp-dp-pp"

/* Sequence lengths per micro-batch (doc/hybrid.md, "Data-dependent costs"). */
typedef enum lbs_hy_len_dist { LBS_HY_LEN_FIXED, LBS_HY_LEN_UNIFORM, LBS_HY_LEN_LOGNORMAL, LBS_HY_LEN_EMPIRICAL } lbs_hy_len_dist;
#define LBS_HY_LEN_CHOICES "fixed|uniform|lognormal|empirical"
#define LBS_HY_MAX_LENGTHS 10000000

typedef struct lbs_hy_lengths_spec {
	int distribution;         /* lbs_hy_len_dist */
	int64_t length;           /* fixed: tokens (0: the model's sequence length) */
	int64_t min, max;         /* uniform: tokens, both included */
	double median, sigma;     /* lognormal: median tokens, sigma of the log */
	char file[LBS_VALUE_MAX]; /* empirical: a file of lengths, one a line */
	int64_t *values;          /* empirical: its lengths, n_values of them */
	size_t n_values;
	int64_t seq_len;          /* the model's sequence length, resolved: the most any draw gives */
	bool given;               /* a [lengths] section was given */
} lbs_hy_lengths_spec;

/* The lengths of n micro-batches drawn from r (fixed: no draw), as ratios
 * to ls->seq_len, each in (0, 1]: integer tokens, uniform on [min, max],
 * lognormal rounded and clamped to [1, seq_len], or uniform among the
 * file's lines. Returns the tokens drawn. */
int64_t lbs_hy_lengths_draw(const lbs_hy_lengths_spec *ls, gsl_rng *r, double *ratio, size_t n);

typedef struct lbs_hy_run_spec {
	char name[LBS_VALUE_MAX], description[LBS_VALUE_MAX];
	int64_t seed, steps;
} lbs_hy_run_spec;

typedef struct lbs_hy_job_spec {
	int64_t dp, pp, tp, micro_batch, micro_batches, global_batch, virtual_stages, zero_stage, dp_buckets;
	int64_t first_layers, last_layers; /* blocks of the model's first and last chunk; 0: an even split */
	int64_t cp;                        /* context-parallel degree */
	int64_t ep;                        /* expert-parallel degree (a mixture of experts) */
	int schedule, overlap_dp, placement, sequence_parallel;
	int cp_comm;                       /* 0: p2p (ring attention), 1: a2a (all-to-all, Ulysses) */
	double grad_bytes; /* bytes a gradient element is reduced in */
} lbs_hy_job_spec;

typedef struct lbs_hy_model_spec {
	char name[LBS_VALUE_MAX];
	int64_t sequence_length;
	int recompute;
	int attention; /* 0: flash (fused), 1: unfused */
	double op_overhead_s; /* with overhead_given: every operation's cost besides its arithmetic and bytes */
	double expert_gini;   /* a mixture of experts: the Gini coefficient of its experts' tokens */
	double expert_capacity; /* an expert's tokens at most this times the mean (0: dropless) */
	int expert_pad;         /* 1: every expert's input padded to the capacity */
	bool overhead_given;  /* else the device model's fitted overhead */
} lbs_hy_model_spec;

/* The inter-node phase of an all-reduce: a ring, NCCL's double binary
 * tree, or whichever of the two is faster for the message (auto). */
typedef enum lbs_hy_algorithm { LBS_HY_ALG_RING, LBS_HY_ALG_TREE, LBS_HY_ALG_AUTO } lbs_hy_algorithm;
#define LBS_HY_ALGORITHM_CHOICES "ring|tree|auto"

typedef struct lbs_hy_link_spec {
	double bandwidth_Bps, latency_s;
	int64_t nics_per_node;
	int algorithm; /* lbs_hy_algorithm ([network] only) */
} lbs_hy_link_spec;

typedef struct lbs_hy_nodes_spec {
	char name[LBS_NAME_MAX];
	int64_t count, gpus_per_node;
	char gpu[LBS_VALUE_MAX];
	double availability;
	lbs_trace_spec trace;    /* the trace* keys of [workers.NAME]: one id a node */
	lbs_origin at;
} lbs_hy_nodes_spec;

/* What a fail-slow episode slows: the GPUs' compute, or their inter-node
 * transfers (their NICs: congestion). */
typedef enum lbs_hy_fs_kind { LBS_HY_FS_COMPUTE, LBS_HY_FS_NETWORK } lbs_hy_fs_kind;
#define LBS_HY_FS_KIND_CHOICES "compute|network"

/* A fail-slow episode: the GPUs `gpus` (global ranks, "0-7,12") run at
 * `factor` of their speed (kind compute), or their transfers between nodes
 * at `factor` of their bandwidth (kind network), from `start` for
 * `duration`. */
typedef struct lbs_hy_episode_spec {
	char name[LBS_NAME_MAX + 24];
	int kind; /* lbs_hy_fs_kind */
	double start_s, duration_s, factor;
	char gpus[LBS_VALUE_MAX];
	lbs_origin at;
} lbs_hy_episode_spec;

/* [failslows.NAME]: fail-slow episodes drawn at random (doc/hybrid.md,
 * "Fail-slow episodes drawn from rates"): every node (per = node: all its
 * GPUs) or GPU (per = gpu) of an untraced node group starts episodes of
 * its kind as a Poisson process of mean gap mean_interval over [0,
 * horizon), each of an exponential length of mean mean_duration, at factor
 * (or uniform on [factor_min, factor]); they join the [failslow.NAME]
 * episodes, named NAME-K. */
typedef enum lbs_hy_fs_per { LBS_HY_FS_NODE, LBS_HY_FS_GPU } lbs_hy_fs_per;
#define LBS_HY_FS_PER_CHOICES "node|gpu"

typedef struct lbs_hy_failslows_spec {
	char name[LBS_NAME_MAX];
	int kind; /* lbs_hy_fs_kind */
	int per;  /* lbs_hy_fs_per */
	double mean_interval_s, mean_duration_s, factor, factor_min, horizon_s;
	size_t n_drawn; /* the episodes it drew */
	lbs_origin at;
} lbs_hy_failslows_spec;

/* [generator.NAME]: an availability generator on node groups
 * (doc/hybrid.md, "Availability generators"). kind background: the
 * co-located on/off job of the data-parallel simulator's generator
 * (traces/gen.h, doc/generators.md): each node (per = node) or GPU (per =
 * gpu) of the groups `nodes` (empty: every untraced group) alternates
 * exponential on and off phases of means on_mean and off_mean from its
 * stationary state, on its own stream (seed, "generator.NAME", the group's
 * name, the unit's index in its group); while on its GPUs keep 1 - load of
 * their speed. Its on phases that start within [0, horizon) join the
 * episodes as compute episodes NAME-K (factor 1 - load), so they compose
 * with the fail-slows and are recorded with the run's keys. */
typedef enum lbs_hy_gen_kind { LBS_HY_GEN_BACKGROUND } lbs_hy_gen_kind;
#define LBS_HY_GEN_KIND_CHOICES "background"

typedef struct lbs_hy_generator_spec {
	char name[LBS_NAME_MAX];
	int kind; /* lbs_hy_gen_kind */
	int per;  /* lbs_hy_fs_per */
	char nodes[LBS_VALUE_MAX];
	double on_mean_s, off_mean_s, load, horizon_s;
	size_t n_drawn;
	lbs_origin at;
} lbs_hy_generator_spec;

/* [hybrid_policy]: the balancing policy (hybrid/policy.h) and, from
 * [hybrid_policy.NAME], its options as given. */
typedef struct lbs_hy_policy_spec {
	char name[LBS_VALUE_MAX], plugin[LBS_VALUE_MAX];
	int64_t every, epoch_steps;
	double decision_cost_s; /* the pause each decision costs the job */
	int64_t delay;          /* decisions between a proposal and its effect */
	lbs_kv *options;   /* the keys of [hybrid_policy.NAME] for the chosen name */
	size_t n_options;
} lbs_hy_policy_spec;

typedef struct lbs_hy_scenario {
	char path[1024];
	lbs_hy_run_spec run;
	lbs_hy_job_spec job;
	lbs_hy_model_spec model;
	lbs_hy_link_spec intra, net;
	lbs_hy_nodes_spec *nodes;
	size_t n_nodes;
	lbs_hy_episode_spec *episodes;
	size_t n_episodes;
	lbs_hy_failslows_spec *gens; /* [failslows.NAME] */
	size_t n_gens;
	lbs_hy_generator_spec *avail_gens; /* [generator.NAME] */
	size_t n_avail_gens;
	size_t n_drawn;     /* the last n_drawn episodes were drawn by them (failslows, then generators) */
	lbs_hy_policy_spec policy;
	lbs_plugin plugin;  /* [hybrid_policy] plugin's, opened while the scenario is read */
	lbs_hy_lengths_spec lengths;
	int64_t n_gpus;
	lbs_kv *config; /* every key's effective value (given or default), for the results */
	size_t n_config;
	size_t cap_config; /* entries allocated */
} lbs_hy_scenario;

/* Whether the scenario at path has a [hybrid] section (false if it cannot
 * be read: the data-parallel loader then reports why). */
bool lbs_hy_is_hybrid(const char *path);

/* Reads and validates a hybrid scenario, then applies overrides
 * ("section.key=value"). LBS_EINPUT (LBS_EUSAGE for a malformed override)
 * naming the file, line and key. */
lbs_status lbs_hy_scenario_load(lbs_hy_scenario *sc, const char *path, const char *const *overrides,
				size_t n_overrides, lbs_error *err);
void lbs_hy_scenario_destroy(lbs_hy_scenario *sc);

/* The hybrid policy called name: the plugin's, or a built-in (NULL: none). */
const lbs_hy_policy_ops *lbs_hy_scenario_policy(const lbs_hy_scenario *sc, const char *name);

/* Writes the Markdown reference of the hybrid sections' keys. */
void lbs_hy_scenario_document(FILE *out);

/* The plan of a scenario (hybrid/plan.c): every op costed from the
 * transformer's operations on each group's devices (models/gpu.h), the
 * links, the collectives' alpha-beta times, each group's availability.
 * Also the global rank of each group's first GPU (rank_of, G entries). */
typedef struct lbs_hy_built {
	lbs_hy_plan plan;
	int64_t *rank_of;
	double *mem_bytes, *mem_cap; /* G: a GPU's memory need and its device's memory */
	double *act_bytes;           /* G: a GPU's activations of one micro-batch in flight */
	/* One transformer block's part of the plan, to move blocks between
	 * stages (hybrid/balance.h): each of the plan's times of a chunk is
	 * its blocks times these, plus what it holds besides blocks
	 * (embedding, head). */
	int n_blocks;                /* the model's blocks; each chunk holds n_blocks / (p v) */
	double *blk_fwd_s, *blk_bwd_s, *blk_fwd_fixed_s, *blk_bwd_fixed_s, *blk_opt_s; /* G */
	double *blk_fwd_att_s, *blk_bwd_att_s; /* G: the attention core's share of a block's */
	double *blk_grad_s, *blk_gather_s; /* p: a block's part of a stage's reduction (a bucket's), gather */
	double *blk_state_bytes;     /* G: a GPU's model state of one block */
	double blk_move_bytes;       /* what a GPU sends to hand a block to another stage: its weights
					and its share of the optimizer states (fp32 master and two moments) */
	double *link_Bps, *link_lat_s; /* G: the link from group g to the next stage's (tensor rank 0's) */
	double flops_per_step;       /* model FLOPs of one step, all GPUs */
	double expert_dropped;       /* the routed tokens an expert's capacity drops, a fraction */
	double *store;               /* what the plan's arrays point into */
	double *blk_store;           /* what the blk_ arrays point into */
	double *xchg_store;          /* what plan.xchg_f_s and xchg_b_s point into */
	double *avail_store;
	double *net_store;           /* plan.net's pieces */
	struct lbs_trace_table *traces; /* the node groups' traces, loaded once */
	lbs_source *sources;         /* G: each group's replay of its node's trace */
	struct lbs_hy_least *least;  /* G, or NULL: a traced group with episodes, or across nodes
					one of them traced, at the least of its nodes' levels */
	struct lbs_hy_member *members; /* what least's members are */
	double *member_store;        /* the members' episode pieces */
} lbs_hy_built;

lbs_status lbs_hy_plan_build(const lbs_hy_scenario *sc, lbs_hy_built *b, lbs_error *err);

/* The shares of a block's routed tokens its `experts` experts receive,
 * drawn from a symmetric Dirichlet whose draws' Gini coefficient averages
 * about `gini` (0: equal shares; experts <= 1024). */
void lbs_hy_expert_shares(int experts, double gini, gsl_rng *r, double *share);

/* A group whose tensor ranks lie on several nodes, one of them traced or
 * more, or on one traced node with compute episodes (or a generator's
 * phases): it runs at the least of its nodes' availabilities, each node's
 * its replay (or an untraced node's constant level) times the episodes on
 * the group's GPUs there. An availability source of its own (traces/avail.h),
 * exact: between the pieces' changes (every member's samples and episode
 * edges) each member is linear (step traces: constant), so the least is
 * the lowest line up to where another crosses it, and the work solves a
 * trapezium's area there, as a single replay's finish does. */
typedef struct lbs_hy_member {
	lbs_source src;          /* the node's replay (its cursor moves with the run) */
	bool traced;             /* false: the node runs at `level` */
	double level;
	lbs_hy_avail ep;         /* the episodes on the group's GPUs of this node */
	double v, k;             /* scratch: the member's level and slope where the integration is */
} lbs_hy_member;
typedef struct lbs_hy_least {
	size_t n;
	lbs_hy_member *m;
} lbs_hy_least;
extern const lbs_avail_ops lbs_hy_least_ops;

/* Points the plan's cost arrays (G groups of v chunks, p stages; att:
 * the attention shares too) into store, which holds the doubles it
 * returns (store NULL: only their count). */
size_t lbs_hy_plan_layout(lbs_hy_plan *pl, double *store, size_t G, int v, int p, bool att);
/* b->store, zeroed, and the plan's cost arrays pointing into it. */
lbs_status lbs_hy_built_plan_alloc(lbs_hy_built *b, size_t G, int v, int p, bool att);
/* b->blk_store, zeroed, and the blk_ and link_ arrays (G groups, p
 * stages) pointing into it; LBS_EINTERNAL when out of memory. */
#define LBS_HY_BLK_ARRAYS 10
lbs_status lbs_hy_built_blocks_alloc(lbs_hy_built *b, size_t G, int p);

/* Micro-batches whose activations stage s of p holds at once under the
 * schedule with m micro-batches and v chunks a stage: all m under GPipe,
 * p - s under 1F1B (Narayanan et al., SC'21, sec. 2.2), the first stage's
 * warm-up forwards over v when interleaved. */
double lbs_hy_in_flight(int schedule, int m, int p, int s, int v);
void lbs_hy_built_free(lbs_hy_built *b);

/* Collective times (hybrid/plan.c; doc/hybrid.md, "Communication"):
 * ring all-reduce, reduce-scatter and all-gather of `bytes` over n ranks
 * on links of bandwidth bw and latency a. */
double lbs_hy_ring_allreduce_s(int64_t n, double bytes, double bw, double a);
double lbs_hy_ring_half_s(int64_t n, double bytes, double bw, double a);
/* An all-reduce of `bytes` over n ranks on NCCL's double binary tree
 * (Sanders, Speck and Traeff, Parallel Computing 35(12), 2009), pipelined:
 * 2 ceil(log2 n) latencies (up, then down), and each phase moves `bytes`
 * over the link of a rank that is interior in one tree (two children of
 * bytes / 2 each) and a leaf in the other: 2 bytes / bw; with n = 2 no rank
 * has two children, bytes / bw (the ring's time). */
double lbs_hy_tree_allreduce_s(int64_t n, double bytes, double bw, double a);

#endif
