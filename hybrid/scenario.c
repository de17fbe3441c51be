/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Hybrid scenarios: parsing and validation (hybrid/scenario.h). */
#include "hybrid/scenario.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "models/gpu.h"
#include "models/nets.h"
#include "sim/scenario.h"
#include "hybrid/policy.h"
#include "util/datapath.h"
#include "util/ini.h"
#include "util/rng.h"

#define REQUIRED NULL
#define UNSET ""
#define NKEYS(t) (sizeof(t) / sizeof((t)[0]))

#define R(f) offsetof(lbs_hy_run_spec, f)
static const lbs_key_spec run_keys[] = {
	{ "name", LBS_T_STRING, R(name), UNSET, 0, 0, 0, NULL, NULL, "run name (default: the file's name)" },
	{ "description", LBS_T_STRING, R(description), UNSET, 0, 0, 0, NULL, NULL, "free text" },
	{ "seed", LBS_T_INT, R(seed), "1", 0, 4294967295.0, 0, NULL, NULL, "random seed" },
	{ "steps", LBS_T_INT, R(steps), "10", 1, 1e7, 0, NULL, NULL, "training steps simulated" },
};
#undef R

#define J(f) offsetof(lbs_hy_job_spec, f)
static const lbs_key_spec job_keys[] = {
	{ "dp", LBS_T_INT, J(dp), REQUIRED, 1, 1e6, 0, NULL, NULL, "data-parallel degree d (replicas)" },
	{ "pp", LBS_T_INT, J(pp), "1", 1, 4096, 0, NULL, NULL, "pipeline stages p" },
	{ "tp", LBS_T_INT, J(tp), "1", 1, 1024, 0, NULL, NULL,
	  "tensor-parallel degree t (must divide the model's heads, key/value heads and FFN size)" },
	{ "cp", LBS_T_INT, J(cp), "1", 1, 1024, 0, NULL, NULL,
	  "context-parallel degree c: each of a stage's c x tp GPUs holds 1 / c of every sequence's tokens, "
	  "its attention over the whole sequence (ring attention with the causal load balanced: 2c chunks "
	  "of a sequence, two a rank), the keys and values passed around the c ranks; the sequence must "
	  "split into 2c chunks, and the gradients are reduced over dp x c ranks (doc/hybrid.md)" },
	{ "cp_comm", LBS_T_ENUM, J(cp_comm), "p2p", 0, 0, 0, "p2p|a2a", NULL,
	  "how the cp context ranks share a sequence's attention (Megatron-Core's --cp-comm-type): `p2p`, "
	  "ring attention, the keys and values passed around the ring behind each chunk's attention; "
	  "`a2a`, DeepSpeed-Ulysses, an all-to-all turning the rank's tokens of every head into every "
	  "token of 1 / cp of the heads before the attention and one back after it, exposed (the heads "
	  "and key/value heads of a tensor rank must split into cp; doc/hybrid.md)" },
	{ "ep", LBS_T_INT, J(ep), "1", 1, 1024, 0, NULL, NULL,
	  "expert-parallel degree e of a mixture-of-experts model: its experts spread over e consecutive "
	  "data-parallel replicas (E / e a GPU), the routed tokens sent to their experts' GPUs and back in "
	  "an all-to-all before and after each block's experts, which couples the e replicas' computes "
	  "there; must divide dp and the model's experts; the experts' gradients are reduced over the "
	  "dp / e replicas holding the same experts (times cp); the balancing policies re-balance by expert group, "
	  "resplit is refused (doc/hybrid.md)" },
	{ "micro_batch", LBS_T_INT, J(micro_batch), "1", 1, 1e6, 0, NULL, NULL, "sequences in a micro-batch" },
	{ "micro_batches", LBS_T_INT, J(micro_batches), UNSET, 1, 1e6, 0, NULL, NULL,
	  "micro-batches a replica runs per step, m; or give global_batch" },
	{ "global_batch", LBS_T_INT, J(global_batch), UNSET, 1, 1e12, 0, NULL, NULL,
	  "sequences per step over all replicas: m = global_batch / (dp x micro_batch), which must be whole" },
	{ "schedule", LBS_T_ENUM, J(schedule), "1f1b", 0, 0, 0, LBS_HY_SCHEDULE_CHOICES, NULL,
	  "pipeline schedule: `gpipe` (all forwards, then all backwards), `1f1b` (PipeDream-Flush), "
	  "`interleaved` (Megatron-LM's interleaved 1F1B with virtual_stages chunks a stage)" },
	{ "virtual_stages", LBS_T_INT, J(virtual_stages), "1", 1, 64, 0, NULL, NULL,
	  "model chunks a stage holds, v (interleaved: >= 2, and m a multiple of pp)" },
	{ "first_stage_layers", LBS_T_INT, J(first_layers), "0", 0, 1e6, 0, NULL, NULL,
	  "transformer blocks of the model's first chunk (stage 0; its first chunk when interleaved), the "
	  "others split evenly (Megatron-LM's --decoder-first-pipeline-num-layers; Llama 3 405B's stages "
	  "at each end held a block less for the embedding and the logits); 0: every chunk alike; with "
	  "it, balancing policies keep the split and re-balance micro-batches only" },
	{ "last_stage_layers", LBS_T_INT, J(last_layers), "0", 0, 1e6, 0, NULL, NULL,
	  "transformer blocks of the model's last chunk (stage pp - 1; its last chunk when interleaved), "
	  "as first_stage_layers" },
	{ "zero_stage", LBS_T_INT, J(zero_stage), "1", 0, 3, 0, NULL, NULL,
	  "ZeRO stage of the data-parallel group: 0, gradients all-reduced; >= 1, reduce-scattered and the "
	  "parameters all-gathered before each chunk's first forward (Megatron-LM's distributed optimizer), "
	  "optimizer states partitioned over dp" },
	{ "overlap_dp", LBS_T_ENUM, J(overlap_dp), "no", 0, 0, 0, "no|yes", NULL,
	  "`yes`: each chunk's gradient reduction starts as its last backward produces the gradients "
	  "(dp_buckets), overlapping the backward passes still running; `no`: after the pipeline drains" },
	{ "dp_buckets", LBS_T_INT, J(dp_buckets), "1", 1, 1024, 0, NULL, NULL,
	  "gradient buckets a chunk: each a reduction of its share of the chunk's gradients; with overlap_dp, "
	  "bucket j starts once the chunk's last backward has done (j + 1)/dp_buckets of its work, so that "
	  "only the last bucket follows the backward pass (PyTorch DDP's and Megatron-LM's buckets)" },
	{ "sequence_parallel", LBS_T_ENUM, J(sequence_parallel), "no", 0, 0, 0, "no|yes", NULL,
	  "`yes`: Megatron-LM's sequence parallelism with the tensor ranks (Korthikanti et al., MLSys 2023): "
	  "the norms, dropouts and residual additions on 1 / tp of the tokens a rank, their activations and "
	  "the inputs of the linears after a norm kept sharded; the tensor-parallel all-reduces become "
	  "all-gathers and reduce-scatters of the same ring time (doc/hybrid.md); no effect at tp = 1" },
	{ "placement", LBS_T_ENUM, J(placement), "tp-pp-dp", 0, 0, 0, LBS_HY_PLACEMENT_CHOICES, NULL,
	  "how (dp, stage, tp) ranks map to GPUs, fastest-varying first: `tp-pp-dp`, tensor ranks "
	  "adjacent (inside a node), then stages, then replicas; `tp-dp-pp`, replicas before stages" },
	{ "grad_bytes", LBS_T_REAL, J(grad_bytes), "4", 1, 8, 0, NULL, NULL,
	  "bytes a gradient element is reduced in (4: fp32 main gradients, 2: bf16)" },
};
#undef J

#define M(f) offsetof(lbs_hy_model_spec, f)
static const lbs_key_spec model_keys[] = {
	{ "name", LBS_T_STRING, M(name), REQUIRED, 0, 0, 0, NULL, NULL,
	  "a transformer preset of `lbsim calibrate --list` (doc/transformers.md)" },
	{ "sequence_length", LBS_T_INT, M(sequence_length), "0", 0, 1e7, 0, NULL, NULL,
	  "tokens a sequence (0: the preset's)" },
	{ "recompute", LBS_T_ENUM, M(recompute), "selective", 0, 0, 0, LBS_RECOMPUTE_CHOICES, NULL,
	  "activation recomputation (doc/transformers.md)" },
	{ "attention", LBS_T_ENUM, M(attention), "flash", 0, 0, 0, "flash|unfused", NULL,
	  "the attention core's kernels: `flash` (fused, FlashAttention: the softmax never reaches memory, "
	  "the causal mask skips half of the score and context GEMMs), `unfused` (the s x s scores written "
	  "and read by the softmax and dropout, every block of the GEMMs computed: Megatron-LM before "
	  "2022; doc/gpus.md)" },
	{ "op_overhead", LBS_T_TIME, M(op_overhead_s), UNSET, 0, 1, 0, NULL, NULL,
	  "what every operation (a layer's pass) costs besides its arithmetic and bytes; unset: 5 us, the "
	  "GPU's idle time between kernels measured on an H200 (doc/gpus.md); a framework whose host "
	  "cannot keep ahead of the GPU pays more (DeepSpeed's pipeline engine: about 300 us, doc/hybrid.md, "
	  "\"Accuracy\"): measure it, or calibrate it on published runs of the framework" },
	{ "expert_gini", LBS_T_REAL, M(expert_gini), "0", 0, 0.8, 0, NULL, NULL,
	  "a mixture of experts' unbalanced routing: the Gini coefficient of the tokens a block's experts "
	  "receive (0: balanced; about 0.1 to 0.4 measured on real text, doc/hybrid.md), drawn once a run "
	  "for each block; with expert parallelism an expert group waits at each block for its most "
	  "loaded GPU" },
	{ "expert_capacity", LBS_T_REAL, M(expert_capacity), "0", 0, 1e3, 0, NULL, NULL,
	  "a mixture of experts' capacity factor: an expert takes at most this times the mean of the "
	  "routed tokens, the rest dropped (GShard, Switch Transformer), which caps the wait for an "
	  "overloaded GPU; 0: dropless (Megatron-Core's default); else at least 1" },
	{ "expert_pad", LBS_T_ENUM, M(expert_pad), "no", 0, 0, 0, "no|yes", NULL,
	  "a mixture of experts with `expert_capacity`: every expert's input padded to its capacity "
	  "(Megatron-Core's moe_pad_expert_input_to_capacity): the experts compute and the all-to-alls "
	  "carry `expert_capacity` times the balanced tokens, whatever the routing, so no GPU waits for "
	  "another's experts" },
};
#undef M

#define L(f) offsetof(lbs_hy_link_spec, f)
static const lbs_key_spec intra_keys[] = {
	{ "bandwidth", LBS_T_BANDWIDTH, L(bandwidth_Bps), REQUIRED, 0, 1e15, LBS_K_MIN_OPEN, NULL, NULL,
	  "a GPU's bandwidth to another GPU of its node, one direction (NVLink-class)" },
	{ "latency", LBS_T_TIME, L(latency_s), "0 s", 0, 1, 0, NULL, NULL, "per message (a ring step)" },
};
static const lbs_key_spec net_keys[] = {
	{ "bandwidth", LBS_T_BANDWIDTH, L(bandwidth_Bps), REQUIRED, 0, 1e15, LBS_K_MIN_OPEN, NULL, NULL,
	  "one NIC's bandwidth, one direction" },
	{ "latency", LBS_T_TIME, L(latency_s), "0 s", 0, 1, 0, NULL, NULL, "per message (a ring step)" },
	{ "nics_per_node", LBS_T_INT, L(nics_per_node), "1", 1, 1024, 0, NULL, NULL,
	  "NICs a node has: its GPUs share their bandwidth when all communicate at once" },
	{ "algorithm", LBS_T_ENUM, L(algorithm), "ring", 0, 0, 0, LBS_HY_ALGORITHM_CHOICES, NULL,
	  "the inter-node phase of an all-reduce: `ring` (2 (n - 1) latencies), `tree` (NCCL's double "
	  "binary tree: 2 log2 n latencies, twice the ring's bytes a link at large n), or `auto` (the "
	  "faster of the two for each message, as NCCL's tuner picks); reduce-scatters and all-gathers "
	  "(ZeRO) are rings" },
};
#undef L

#define N(f) offsetof(lbs_hy_nodes_spec, f)
static const lbs_key_spec nodes_keys[] = {
	{ "count", LBS_T_INT, N(count), REQUIRED, 1, LBS_HY_MAX_GPUS, 0, NULL, NULL, "nodes in this group" },
	{ "gpus_per_node", LBS_T_INT, N(gpus_per_node), "8", 1, 1024, 0, NULL, NULL, "GPUs a node holds" },
	{ "gpu", LBS_T_STRING, N(gpu), REQUIRED, 0, 0, 0, NULL, NULL,
	  "the device, a name of `lbsim calibrate --gpus` (doc/gpus.md)" },
	{ "availability", LBS_T_REAL, N(availability), "1", 0, 100, LBS_K_MIN_OPEN, NULL, NULL,
	  "constant fraction of nominal speed the group's GPUs deliver" },
};
#undef N

#define E(f) offsetof(lbs_hy_episode_spec, f)
static const lbs_key_spec episode_keys[] = {
	{ "kind", LBS_T_ENUM, E(kind), "compute", 0, 0, 0, LBS_HY_FS_KIND_CHOICES, NULL,
	  "what it slows: the GPUs' compute (`compute`), or their transfers between nodes (`network`: their "
	  "NICs, congested; a collective or p2p transfer that crosses nodes runs at its slowest member's "
	  "level)" },
	{ "start", LBS_T_TIME, E(start_s), REQUIRED, 0, 1e9, 0, NULL, NULL, "simulated time the episode starts" },
	{ "duration", LBS_T_TIME, E(duration_s), REQUIRED, 0, 1e9, LBS_K_MIN_OPEN, NULL, NULL, "how long it lasts" },
	{ "gpus", LBS_T_STRING, E(gpus), REQUIRED, 0, 0, 0, NULL, NULL,
	  "the GPUs it slows: global ranks and ranges, e.g. `0-7,12`" },
	{ "factor", LBS_T_REAL, E(factor), REQUIRED, 0, 1, LBS_K_MIN_OPEN, NULL, NULL,
	  "the fraction of their speed (kind compute) or inter-node bandwidth (kind network) those GPUs keep "
	  "(0.5: half)" },
};
#undef E

#define F(f) offsetof(lbs_hy_failslows_spec, f)
static const lbs_key_spec failslows_keys[] = {
	{ "kind", LBS_T_ENUM, F(kind), "compute", 0, 0, 0, LBS_HY_FS_KIND_CHOICES, NULL,
	  "what its episodes slow, as [failslow.NAME] kind: `compute` or `network`" },
	{ "per", LBS_T_ENUM, F(per), "node", 0, 0, 0, LBS_HY_FS_PER_CHOICES, NULL,
	  "what one episode slows: every GPU of a node (`node`) or one GPU (`gpu`); each such unit of an "
	  "untraced node group draws its own episodes" },
	{ "mean_interval", LBS_T_TIME, F(mean_interval_s), REQUIRED, 0, 1e12, LBS_K_MIN_OPEN, NULL, NULL,
	  "mean time between the starts of two episodes on one unit (exponential gaps: a Poisson process; "
	  "e.g. 350 h a GPU for the compute fail-slows of Greyhound, ATC'25, doc/hybrid.md)" },
	{ "mean_duration", LBS_T_TIME, F(mean_duration_s), REQUIRED, 0, 1e9, LBS_K_MIN_OPEN, NULL, NULL,
	  "mean length of an episode (exponential; Greyhound: 10 min for compute fail-slows)" },
	{ "factor", LBS_T_REAL, F(factor), "0.8", 0, 1, LBS_K_MIN_OPEN, NULL, NULL,
	  "the fraction of their speed the unit's GPUs keep during an episode (Greyhound: a GPU 20% slower "
	  "under thermal throttling)" },
	{ "factor_min", LBS_T_REAL, F(factor_min), "0", 0, 1, 0, NULL, NULL,
	  "0: every episode at `factor`; else each episode's factor uniform on [factor_min, factor]" },
	{ "horizon", LBS_T_TIME, F(horizon_s), REQUIRED, 0, 1e9, LBS_K_MIN_OPEN, NULL, NULL,
	  "episodes start within [0, horizon) of simulated time (at most 1024 episodes in all)" },
};
#undef F

#define A(f) offsetof(lbs_hy_generator_spec, f)
static const lbs_key_spec generator_keys[] = {
	{ "kind", LBS_T_ENUM, A(kind), REQUIRED, 0, 0, 0, LBS_HY_GEN_KIND_CHOICES, NULL,
	  "`background`: a co-located job switching on and off (doc/generators.md); the data-parallel kinds "
	  "`cpu_credits`, `network_bucket` and `dbs_disturbance` model CPU instances and an aggregation and "
	  "are not offered here" },
	{ "nodes", LBS_T_STRING, A(nodes), "", 0, 0, 0, NULL, NULL,
	  "the node groups it applies to, names of [nodes.NAME] sections separated by commas (empty: every "
	  "node group without a trace; a traced group named here replays its trace times the phases)" },
	{ "per", LBS_T_ENUM, A(per), "node", 0, 0, 0, LBS_HY_FS_PER_CHOICES, NULL,
	  "what one process slows: every GPU of a node (`node`: a job sharing the node) or one GPU (`gpu`: "
	  "a job sharing the GPU); each unit draws its own" },
	{ "on_mean", LBS_T_TIME, A(on_mean_s), REQUIRED, 0, 1e9, LBS_K_MIN_OPEN, NULL, NULL,
	  "mean length of an on phase (exponential)" },
	{ "off_mean", LBS_T_TIME, A(off_mean_s), REQUIRED, 0, 1e9, LBS_K_MIN_OPEN, NULL, NULL,
	  "mean length of an off phase (exponential)" },
	{ "load", LBS_T_REAL, A(load), REQUIRED, 0, 0.99, LBS_K_MIN_OPEN, NULL, NULL,
	  "the share of the unit's GPUs the job takes while on: they keep 1 - load of their speed" },
	{ "horizon", LBS_T_TIME, A(horizon_s), REQUIRED, 0, 1e9, LBS_K_MIN_OPEN, NULL, NULL,
	  "on phases that start within [0, horizon) of simulated time are drawn (after it the units run "
	  "free; at most 1024 episodes in all, fail-slows included)" },
};
#undef A

#define P(f) offsetof(lbs_hy_policy_spec, f)
static const lbs_key_spec policy_keys[] = {
	{ "name", LBS_T_STRING, P(name), "static", 0, 0, 0, NULL, NULL,
	  "the balancing policy of the replicas' micro-batches and the stages' blocks (doc/hybrid.md, "
	  "\"Balancing policies\"): `static`, `lbbsp`, `dbs`, `resplit`, `ladder`, `pack`, `oracle`, or the one the "
	  "plugin holds; its options in [hybrid_policy.NAME]" },
	{ "plugin", LBS_T_STRING, P(plugin), UNSET, 0, 0, 0, NULL, NULL,
	  "a hybrid policy plugin to load, a shared object defining lbs_hy_policy_plugin (doc/extending.md), "
	  "found like [policy] plugin (in a file: a relative path without '..'); loaded only with "
	  "`--plugins` or LBSIM_PLUGINS=1" },
	{ "every", LBS_T_INT, P(every), "0", 0, 1e9, 0, NULL, NULL,
	  "steps between decisions; 0: the policy's own rhythm (lbbsp and oracle every step, dbs every "
	  "epoch)" },
	{ "epoch_steps", LBS_T_INT, P(epoch_steps), "10", 1, 1e9, 0, NULL, NULL,
	  "steps an epoch (one pass over the data set) takes, for dbs" },
	{ "delay", LBS_T_INT, P(delay), "0", 0, 1000, 0, NULL, NULL,
	  "steps between a decision and its effect: what the policy proposes before step i, from what "
	  "it measured up to step i - 1, is applied before step i + delay (measurements that arrive late, "
	  "a controller that acts late; 0: at once); meanwhile the split in force runs, and the policy "
	  "sees it. Packing is never delayed (the data loader's). A delayed proposal that the split in force "
	  "has since left out of the memory is dropped" },
	{ "decision_cost", LBS_T_TIME, P(decision_cost_s), "0 s", 0, 1e6, 0, NULL, NULL,
	  "simulated time the job waits at every step's barrier for the policy to decide (its prediction and "
	  "plan), a pause before the step, as a re-split's (hybrid_decisions.action_s); whatever the policy, "
	  "static included; 0: free. The policy's own wall time is recorded apart (decision_s), never "
	  "charged: it would make runs depend on the machine" },
};
#undef P
#define S(f) offsetof(lbs_hy_lengths_spec, f)
static const lbs_key_spec lengths_keys[] = {
	{ "distribution", LBS_T_ENUM, S(distribution), "fixed", 0, 0, 0, LBS_HY_LEN_CHOICES, NULL,
	  "how the tokens of each (replica, micro-batch) are drawn, every step: `fixed` (`length`), `uniform` "
	  "(integers from `min` to `max`), `lognormal` (`median` e^(`sigma` Z), rounded, within 1 and the "
	  "model's sequence_length), `empirical` (a line of `file` at random); a micro-batch's computes cost "
	  "their linear operations times length / sequence_length, their attention times its square" },
	{ "length", LBS_T_INT, S(length), "0", 0, 1e7, 0, NULL, NULL,
	  "fixed: tokens a sequence (0: the model's sequence_length)" },
	{ "min", LBS_T_INT, S(min), "1", 1, 1e7, 0, NULL, NULL, "uniform: the fewest tokens" },
	{ "max", LBS_T_INT, S(max), "0", 0, 1e7, 0, NULL, NULL,
	  "uniform: the most tokens (0: the model's sequence_length)" },
	{ "median", LBS_T_REAL, S(median), "0", 0, 1e7, 0, NULL, NULL, "lognormal: the median, tokens" },
	{ "sigma", LBS_T_REAL, S(sigma), "0", 0, 10, 0, NULL, NULL,
	  "lognormal: the standard deviation of the log of the length" },
	{ "file", LBS_T_STRING, S(file), "", 0, 0, 0, NULL, NULL,
	  "empirical: a file of lengths in tokens, one integer a line from 1 to sequence_length (blank "
	  "lines, `#` comments and a first line `length` skipped), relative to the scenario's folder" },
};
#undef S

typedef struct section_spec {
	const char *name; /* "nodes" and "failslow" take a .NAME */
	const lbs_key_spec *keys;
	size_t nkeys;
	const char *doc;
} section_spec;

static const section_spec sections[] = {
	{ "run", run_keys, NKEYS(run_keys), "the run" },
	{ "hybrid", job_keys, NKEYS(job_keys), "the job's parallelism; its presence makes the scenario hybrid" },
	{ "model", model_keys, NKEYS(model_keys), "the transformer trained" },
	{ "intra_node", intra_keys, NKEYS(intra_keys), "the links between the GPUs of a node" },
	{ "network", net_keys, NKEYS(net_keys), "the network between nodes" },
	{ "nodes", nodes_keys, NKEYS(nodes_keys), "[nodes.NAME]: a group of identical nodes (GPUs are numbered "
	  "node by node, groups in file order); it also takes the trace keys of [workers.NAME] (trace_format, "
	  "trace, trace_ids, trace_map, ...): the k-th node replays the k-th id, its availability multiplied "
	  "by `availability`" },
	{ "failslow", episode_keys, NKEYS(episode_keys), "[failslow.NAME]: a fail-slow episode" },
	{ "failslows", failslows_keys, NKEYS(failslows_keys), "[failslows.NAME]: fail-slow episodes drawn at random "
	  "from rates (doc/hybrid.md, \"Fail-slow episodes drawn from rates\"), named NAME-K beside the "
	  "[failslow.NAME] ones and recorded with the run's keys" },
	{ "generator", generator_keys, NKEYS(generator_keys), "[generator.NAME]: an availability generator on "
	  "node groups (doc/hybrid.md, \"Availability generators\"); its on phases join the episodes as "
	  "compute episodes NAME-K, recorded with the run's keys" },
	{ "lengths", lengths_keys, NKEYS(lengths_keys), "the sequence lengths of the micro-batches (data-dependent "
	  "costs; absent: every one at sequence_length)" },
};

/* ---- reading -------------------------------------------------------------- */

typedef struct header {
	char name[LBS_NAME_MAX + 16];
	int line;
} header;

typedef struct parse_ctx {
	lbs_ini_reader ini; /* first: on_section gets it back */
	bool hybrid;        /* lbs_hy_is_hybrid: a [hybrid] header was seen */
	lbs_kv *kv;
	size_t n_kv, cap_kv;
	header *hdr;
	size_t n_hdr, cap_hdr;
} parse_ctx;

static bool on_section(lbs_ini_reader *r, const char *name)
{
	parse_ctx *c = (parse_ctx *)r;
	for (size_t i = 0; i < c->n_hdr; i++)
		if (!strcmp(c->hdr[i].name, name))
			return lbs_ini_fail(r, "section [%s] appears twice (first at line %d)", name, c->hdr[i].line);
	if (c->n_hdr == c->cap_hdr) {
		size_t cap = c->cap_hdr ? 2 * c->cap_hdr : 16;
		header *h = realloc(c->hdr, cap * sizeof *h);
		if (!h)
			return lbs_ini_fail(r, "out of memory");
		c->hdr = h;
		c->cap_hdr = cap;
	}
	if (strlen(name) >= sizeof c->hdr[0].name)
		return lbs_ini_fail(r, "section name [%.40s...] too long", name);
	snprintf(c->hdr[c->n_hdr].name, sizeof c->hdr[0].name, "%s", name);
	c->hdr[c->n_hdr++].line = r->line;
	return true;
}

static int on_key(void *user, const char *section, const char *key, const char *value)
{
	parse_ctx *c = user;
	if (c->ini.failed)
		return 0;
	if (!*section)
		return lbs_ini_fail(&c->ini, "'%s' is outside any section", key);
	return lbs_ini_add_kv(&c->ini, &c->kv, &c->n_kv, &c->cap_kv, section, key, value);
}

static int scan_key(void *user, const char *section, const char *key, const char *value)
{
	(void)user, (void)section, (void)key, (void)value;
	return 1;
}

static bool scan_section(lbs_ini_reader *r, const char *name)
{
	if (!strcmp(name, "hybrid"))
		((parse_ctx *)r)->hybrid = true;
	return true;
}

bool lbs_hy_is_hybrid(const char *path)
{
	lbs_error err = { 0 };
	parse_ctx c = { .ini = { .max_chars = 4000, .on_section = scan_section } };
	return lbs_ini_parse(&c.ini, path, "scenario", scan_key, &c, &err) == LBS_OK && c.hybrid;
}

/* The sections that take a .NAME. */
static bool is_named(const char *section)
{
	return !strcmp(section, "nodes") || !strcmp(section, "failslow") || !strcmp(section, "failslows") ||
	       !strcmp(section, "generator");
}

static const section_spec *find_section(const char *name, const char **sub)
{
	*sub = NULL;
	for (size_t i = 0; i < NKEYS(sections); i++) {
		size_t n = strlen(sections[i].name);
		bool named = is_named(sections[i].name);
		if (!named && !strcmp(name, sections[i].name))
			return &sections[i];
		if (named && !strncmp(name, sections[i].name, n) && name[n] == '.' && name[n + 1]) {
			*sub = name + n + 1;
			return &sections[i];
		}
	}
	return NULL;
}

static lbs_status override(parse_ctx *c, const char *arg, lbs_error *err)
{
	const char *eq = strchr(arg, '='), *dot = strchr(arg, '.');
	if (!eq || !dot || dot > eq || dot == arg || eq == dot + 1 || !eq[1])
		return lbs_error_set(err, LBS_EUSAGE, "--set %s: expected section.key=value", arg);
	/* the section may itself hold a dot ([nodes.NAME]): the key follows the last dot before '=' */
	const char *kdot = dot;
	for (const char *q = dot; q < eq; q++)
		if (*q == '.')
			kdot = q;
	char section[LBS_NAME_MAX + 16], key[LBS_NAME_MAX];
	if ((size_t)(kdot - arg) >= sizeof section || (size_t)(eq - kdot - 1) >= sizeof key ||
	    strlen(eq + 1) >= LBS_VALUE_MAX)
		return lbs_error_set(err, LBS_EUSAGE, "--set %s: too long", arg);
	snprintf(section, sizeof section, "%.*s", (int)(kdot - arg), arg);
	snprintf(key, sizeof key, "%.*s", (int)(eq - kdot - 1), kdot + 1);
	for (size_t i = 0; i < c->n_kv; i++)
		if (!strcmp(c->kv[i].section, section) && !strcmp(c->kv[i].key, key)) {
			snprintf(c->kv[i].value, sizeof c->kv[i].value, "%s", eq + 1);
			c->kv[i].at = (lbs_origin){ "--set", 0 };
			return LBS_OK;
		}
	if (c->n_kv == c->cap_kv) {
		size_t cap = c->cap_kv ? 2 * c->cap_kv : 16;
		lbs_kv *kv = realloc(c->kv, cap * sizeof *kv);
		if (!kv)
			return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
		c->kv = kv;
		c->cap_kv = cap;
	}
	lbs_kv *kv = &c->kv[c->n_kv++];
	memset(kv, 0, sizeof *kv);
	snprintf(kv->section, sizeof kv->section, "%s", section);
	snprintf(kv->key, sizeof kv->key, "%s", key);
	snprintf(kv->value, sizeof kv->value, "%s", eq + 1);
	kv->at = (lbs_origin){ "--set", 0 };
	bool known = false;
	for (size_t i = 0; i < c->n_hdr; i++)
		known |= !strcmp(c->hdr[i].name, section);
	/* a policy may be chosen for a scenario that names none */
	if (!known && !strncmp(section, "hybrid_policy", 13) && (!section[13] || section[13] == '.')) {
		if (!on_section(&c->ini, section))
			return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
		c->hdr[c->n_hdr - 1].line = 0;
		known = true;
	}
	if (!known)
		return lbs_error_set(err, LBS_EUSAGE, "--set %s: the scenario has no section [%s]", arg, section);
	return LBS_OK;
}

/* ---- validation ----------------------------------------------------------- */

static lbs_status key_error(const lbs_hy_scenario *sc, const lbs_origin *at, const char *section, const char *key,
			    lbs_error *err, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static lbs_status key_error(const lbs_hy_scenario *sc, const lbs_origin *at, const char *section, const char *key,
			    lbs_error *err, const char *fmt, ...)
{
	char where[512], msg[640];
	lbs_origin o = at ? *at : (lbs_origin){ sc->path, 0 };
	lbs_origin_format(&o, section, key, where, sizeof where);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return lbs_error_set(err, LBS_EINPUT, "%s: %s", where, msg);
}

/* The origin of section.key as given (line 0 of the section's header when
 * it was not given). */
static lbs_origin origin_of(const parse_ctx *c, const lbs_hy_scenario *sc, const char *section, const char *key)
{
	for (size_t i = 0; i < c->n_kv; i++)
		if (!strcmp(c->kv[i].section, section) && !strcmp(c->kv[i].key, key))
			return c->kv[i].at;
	for (size_t i = 0; i < c->n_hdr; i++)
		if (!strcmp(c->hdr[i].name, section))
			return (lbs_origin){ sc->path, c->hdr[i].line };
	return (lbs_origin){ sc->path, 0 };
}

/* Parses "0-7,12" into the GPUs it names; each < n_gpus. */
static bool parse_ranks(const char *s, int64_t n_gpus, char *why, size_t len)
{
	const char *p = s;
	while (*p) {
		char *end;
		long long a = strtoll(p, &end, 10), b;
		if (end == p || a < 0) {
			snprintf(why, len, "expected ranks and ranges like 0-7,12");
			return false;
		}
		b = a;
		p = end;
		if (*p == '-') {
			b = strtoll(p + 1, &end, 10);
			if (end == p + 1 || b < a) {
				snprintf(why, len, "a range must be LOW-HIGH with LOW <= HIGH");
				return false;
			}
			p = end;
		}
		if (b >= n_gpus) {
			snprintf(why, len, "GPU %lld: the job has %lld GPUs (0 to %lld)", b, (long long)n_gpus,
				 (long long)n_gpus - 1);
			return false;
		}
		if (*p == ',')
			p++;
		else if (*p) {
			snprintf(why, len, "expected ranks and ranges like 0-7,12");
			return false;
		}
	}
	return true;
}

/* Reads an empirical file of lengths: one integer a line, 1 to seq_len. */
static lbs_status read_lengths(lbs_hy_scenario *sc, const lbs_origin *at, lbs_error *err)
{
	lbs_hy_lengths_spec *ls = &sc->lengths;
	char path[2200];
	const char *slash = strrchr(sc->path, '/');
	if (ls->file[0] == '/' || !slash)
		snprintf(path, sizeof path, "%s", ls->file);
	else
		snprintf(path, sizeof path, "%.*s/%s", (int)(slash - sc->path), sc->path, ls->file);
	FILE *f = fopen(path, "r");
	if (!f)
		return key_error(sc, at, "lengths", "file", err, "cannot open %s", path);
	char line[256];
	size_t cap = 0;
	lbs_status st = LBS_OK;
	for (int no = 1; st == LBS_OK && fgets(line, sizeof line, f); no++) {
		char *p = line + strspn(line, " \t"), *end;
		if (*p == '#' || *p == '\n' || *p == '\r' || !*p || (no == 1 && !strncmp(p, "length", 6)))
			continue;
		long long v = strtoll(p, &end, 10);
		end += strspn(end, " \t\r\n");
		if (end == p || *end || v < 1 || v > ls->seq_len) {
			st = lbs_error_set(err, LBS_EINPUT, "%s:%d: expected a length in tokens from 1 to the "
					   "sequence_length %lld ([lengths] file)", path, no, (long long)ls->seq_len);
			break;
		}
		if (ls->n_values == LBS_HY_MAX_LENGTHS) {
			st = lbs_error_set(err, LBS_EINPUT, "%s:%d: more than %d lengths", path, no, LBS_HY_MAX_LENGTHS);
			break;
		}
		if (ls->n_values == cap) {
			cap = cap ? 2 * cap : 1024;
			int64_t *nv = realloc(ls->values, cap * sizeof *nv);
			if (!nv) {
				st = lbs_error_set(err, LBS_EINTERNAL, "out of memory reading %s", path);
				break;
			}
			ls->values = nv;
		}
		ls->values[ls->n_values++] = v;
	}
	if (st == LBS_OK && ferror(f))
		st = lbs_error_set(err, LBS_EIO, "%s: read error", path);
	fclose(f);
	if (st == LBS_OK && !ls->n_values)
		st = key_error(sc, at, "lengths", "file", err, "%s holds no length", path);
	return st;
}

/* The [lengths] keys against the model's sequence length (the most a
 * draw may give: memory is checked at it). */
static lbs_status check_lengths(lbs_hy_scenario *sc, const parse_ctx *c, lbs_error *err)
{
	lbs_hy_lengths_spec *ls = &sc->lengths;
	lbs_net net;
	lbs_net_opts no = { .seq_len = sc->model.sequence_length };
	lbs_error e2 = { 0 };
	if (lbs_net_create_opts(&net, sc->model.name, &no, &e2) != LBS_OK) {
		lbs_origin o = origin_of(c, sc, "model", "sequence_length");
		return key_error(sc, &o, "model", "sequence_length", err, "%s", e2.msg);
	}
	ls->seq_len = net.opts.seq_len;
	lbs_net_destroy(&net);
	const char *key = NULL;
	char why[200] = "";
	long long S = (long long)ls->seq_len;
	switch (ls->distribution) {
	case LBS_HY_LEN_FIXED:
		if (ls->length > ls->seq_len)
			key = "length", snprintf(why, sizeof why, "%lld tokens, more than sequence_length %lld",
						 (long long)ls->length, S);
		break;
	case LBS_HY_LEN_UNIFORM:
		if (!ls->max)
			ls->max = ls->seq_len;
		if (ls->max > ls->seq_len)
			key = "max", snprintf(why, sizeof why, "%lld tokens, more than sequence_length %lld",
					      (long long)ls->max, S);
		else if (ls->min > ls->max)
			key = "min", snprintf(why, sizeof why, "min %lld above max %lld", (long long)ls->min,
					      (long long)ls->max);
		break;
	case LBS_HY_LEN_LOGNORMAL:
		if (!(ls->median >= 1 && ls->median <= (double)ls->seq_len))
			key = "median", snprintf(why, sizeof why, "required for lognormal: from 1 to sequence_length %lld "
						 "tokens", S);
		break;
	default:
		if (!ls->file[0])
			key = "file", snprintf(why, sizeof why, "required for empirical: a file of lengths");
		else {
			lbs_origin o = origin_of(c, sc, "lengths", "file");
			return read_lengths(sc, &o, err);
		}
	}
	if (key) {
		lbs_origin o = origin_of(c, sc, "lengths", key);
		return key_error(sc, &o, "lengths", key, err, "%s", why);
	}
	return LBS_OK;
}

static lbs_status record_one(lbs_hy_scenario *sc, const char *section, const char *key, const char *value,
			     lbs_error *err);

/* A new element, zeroed, at the end of the array *arrp (a T **) of *n
 * elements of `size` bytes, its address into *elemp (a T **); at most max
 * of them (LBS_EINPUT naming the file and line `at`, "more than max
 * what"). The pointers go through memcpy, as T ** is no void **. */
static lbs_status append(void *arrp, size_t *n, size_t size, size_t max, const char *what, const lbs_origin *at,
			 void *elemp, lbs_error *err)
{
	if (*n >= max)
		return lbs_error_set(err, LBS_EINPUT, "%s:%d: more than %zu %s", at->file, at->line, max, what);
	void *arr;
	memcpy(&arr, arrp, sizeof arr);
	void *grown = realloc(arr, (*n + 1) * size);
	if (!grown)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	memcpy(arrp, &grown, sizeof grown);
	void *elem = memset((char *)grown + (*n)++ * size, 0, size);
	memcpy(elemp, &elem, sizeof elem);
	return LBS_OK;
}

/* Appends a drawn episode NAME-K (K = (*n_drawn)++) of the GPUs gpu ..
 * gpu + width - 1 and records it with the run's keys, every digit (a
 * replay written out by hand is exact); o and sec name the section that
 * drew it in messages. */
static lbs_status add_episode(lbs_hy_scenario *sc, const lbs_origin *o, const char *sec, const char *name,
			      size_t *n_drawn, int kind, double start_s, double duration_s, double factor, int64_t gpu,
			      int64_t width, lbs_error *err)
{
	lbs_hy_episode_spec *ep = NULL;
	if (sc->n_episodes == LBS_HY_MAX_EPISODES)
		return key_error(sc, o, sec, "horizon", err, "more than %d fail-slow and generated episodes in all: a "
				 "shorter horizon or longer phases", LBS_HY_MAX_EPISODES);
	lbs_status st = append(&sc->episodes, &sc->n_episodes, sizeof *ep, LBS_HY_MAX_EPISODES, "fail-slow episodes",
			       o, &ep, err);
	if (st != LBS_OK)
		return st;
	ep->kind = kind;
	ep->start_s = start_s;
	ep->duration_s = duration_s;
	ep->factor = factor;
	snprintf(ep->name, sizeof ep->name, "%s-%zu", name, (*n_drawn)++);
	sc->n_drawn++;
	if (width == 1)
		snprintf(ep->gpus, sizeof ep->gpus, "%lld", (long long)gpu);
	else
		snprintf(ep->gpus, sizeof ep->gpus, "%lld-%lld", (long long)gpu, (long long)(gpu + width - 1));
	ep->at = *o;
	char es[LBS_NAME_MAX + 40], v[64];
	snprintf(es, sizeof es, "failslow.%s", ep->name);
	st = record_one(sc, es, "kind", kind == LBS_HY_FS_NETWORK ? "network" : "compute", err);
	snprintf(v, sizeof v, "%.17g s", ep->start_s);
	if (st == LBS_OK)
		st = record_one(sc, es, "start", v, err);
	snprintf(v, sizeof v, "%.17g s", ep->duration_s);
	if (st == LBS_OK)
		st = record_one(sc, es, "duration", v, err);
	if (st == LBS_OK)
		st = record_one(sc, es, "gpus", ep->gpus, err);
	snprintf(v, sizeof v, "%.17g", ep->factor);
	if (st == LBS_OK)
		st = record_one(sc, es, "factor", v, err);
	return st;
}

/* [failslows.NAME]: the episodes each draws, unit by unit (node or GPU, in
 * rank order) from a stream of the run's seed and its name, appended to
 * sc->episodes and recorded with the run's keys as [failslow.NAME-K]. */
static lbs_status draw_one(lbs_hy_scenario *sc, const parse_ctx *c, lbs_hy_failslows_spec *f, lbs_error *err)
{
	char sec[LBS_NAME_MAX + 16];
	snprintf(sec, sizeof sec, "failslows.%s", f->name);
	lbs_origin o = origin_of(c, sc, sec, "factor_min");
	if (f->factor_min > f->factor)
		return key_error(sc, &o, sec, "factor_min", err, "%g is above factor %g", f->factor_min, f->factor);
	o = origin_of(c, sc, sec, "horizon");
	gsl_rng *r = lbs_rng_stream((uint64_t)sc->run.seed, "hybrid-failslows", f->name, 0, err);
	if (!r)
		return LBS_EINTERNAL;
	lbs_status st = LBS_OK;
	int64_t gpu = 0;
	for (size_t k = 0; k < sc->n_nodes && st == LBS_OK; k++) {
		const lbs_hy_nodes_spec *nd = &sc->nodes[k];
		const int64_t width = f->per == LBS_HY_FS_GPU ? 1 : nd->gpus_per_node;
		const int64_t units = nd->count * nd->gpus_per_node / width;
		for (int64_t u = 0; u < units && st == LBS_OK; u++, gpu += width) {
			if (nd->trace.format) /* the draws skip a traced node (its own trace is its history) */
				continue;
			for (double t = gsl_ran_exponential(r, f->mean_interval_s); t < f->horizon_s && st == LBS_OK;
			     t += gsl_ran_exponential(r, f->mean_interval_s)) {
				double dur = gsl_ran_exponential(r, f->mean_duration_s);
				if (!(dur > 0)) /* a draw of 0 (probability 2^-32) */
					dur = f->mean_duration_s * 0x1p-32;
				double factor = f->factor_min > 0 && f->factor_min < f->factor
							? f->factor_min + (f->factor - f->factor_min) * gsl_rng_uniform(r)
							: f->factor;
				st = add_episode(sc, &o, sec, f->name, &f->n_drawn, f->kind, t, dur, factor, gpu, width,
						 err);
			}
		}
	}
	gsl_rng_free(r);
	return st;
}

static lbs_status draw_generator(lbs_hy_scenario *sc, const parse_ctx *c, lbs_hy_generator_spec *gs, lbs_error *err);

/* The drawn episodes: the fail-slows', then the generators'. */
static lbs_status draw_failslows(lbs_hy_scenario *sc, const parse_ctx *c, lbs_error *err)
{
	lbs_status st = LBS_OK;
	for (size_t i = 0; i < sc->n_gens && st == LBS_OK; i++)
		st = draw_one(sc, c, &sc->gens[i], err);
	for (size_t i = 0; i < sc->n_avail_gens && st == LBS_OK; i++)
		st = draw_generator(sc, c, &sc->avail_gens[i], err);
	return st;
}

/* [generator.NAME] kind background: each unit of its node groups runs the
 * on/off process of traces/gen_background.c from its stationary state on
 * its own stream, and each on phase that starts before the horizon becomes
 * a compute episode at 1 - load. */
static lbs_status draw_generator(lbs_hy_scenario *sc, const parse_ctx *c, lbs_hy_generator_spec *gs, lbs_error *err)
{
	char sec[LBS_NAME_MAX + 16], stream[LBS_NAME_MAX + 16];
	snprintf(sec, sizeof sec, "generator.%s", gs->name);
	snprintf(stream, sizeof stream, "generator.%s", gs->name);
	lbs_origin o = origin_of(c, sc, sec, "nodes");
	bool *use = calloc(sc->n_nodes, sizeof *use);
	if (!use)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	lbs_status st = LBS_OK;
	if (!*gs->nodes) {
		for (size_t k = 0; k < sc->n_nodes; k++)
			use[k] = !sc->nodes[k].trace.format;
	} else {
		char list[LBS_VALUE_MAX];
		snprintf(list, sizeof list, "%s", gs->nodes);
		char *save = NULL;
		for (char *tok = strtok_r(list, ",", &save); tok && st == LBS_OK; tok = strtok_r(NULL, ",", &save)) {
			while (*tok == ' ' || *tok == '\t')
				tok++;
			size_t len = strlen(tok);
			while (len && (tok[len - 1] == ' ' || tok[len - 1] == '\t'))
				tok[--len] = 0;
			size_t k = 0;
			while (k < sc->n_nodes && strcmp(sc->nodes[k].name, tok))
				k++;
			if (!*tok)
				st = key_error(sc, &o, sec, "nodes", err, "an empty name in the list");
			else if (k == sc->n_nodes)
				st = key_error(sc, &o, sec, "nodes", err, "'%s' is no [nodes.NAME] section", tok);
			else if (use[k])
				st = key_error(sc, &o, sec, "nodes", err, "'%s' is named twice", tok);
			else
				use[k] = true; /* a traced group too: its replay times the phases */
		}
	}
	o = origin_of(c, sc, sec, "horizon");
	int64_t gpu = 0;
	const double p_on = gs->on_mean_s / (gs->on_mean_s + gs->off_mean_s);
	for (size_t k = 0; k < sc->n_nodes && st == LBS_OK; k++) {
		const lbs_hy_nodes_spec *nd = &sc->nodes[k];
		const int64_t width = gs->per == LBS_HY_FS_GPU ? 1 : nd->gpus_per_node;
		const int64_t units = nd->count * nd->gpus_per_node / width;
		for (int64_t u = 0; use[k] && u < units && st == LBS_OK; u++) {
			gsl_rng *r = lbs_rng_stream((uint64_t)sc->run.seed, stream, nd->name, (uint64_t)u, err);
			if (!r) {
				st = LBS_EINTERNAL;
				break;
			}
			/* the stationary state, then whole phases in order */
			bool on = gsl_rng_uniform(r) < p_on;
			for (double t = 0; t < gs->horizon_s && st == LBS_OK; on = !on) {
				double len = gsl_ran_exponential(r, on ? gs->on_mean_s : gs->off_mean_s);
				if (on && len > 0)
					st = add_episode(sc, &o, sec, gs->name, &gs->n_drawn, LBS_HY_FS_COMPUTE, t, len,
							 1 - gs->load, gpu + u * width, width, err);
				t += len;
			}
			gsl_rng_free(r);
		}
		gpu += nd->count * nd->gpus_per_node;
	}
	free(use);
	return st;
}

static lbs_status check(lbs_hy_scenario *sc, const parse_ctx *c, lbs_error *err)
{
	lbs_hy_job_spec *j = &sc->job;
	lbs_origin o;
	if (j->micro_batches && j->global_batch) {
		o = origin_of(c, sc, "hybrid", "global_batch");
		return key_error(sc, &o, "hybrid", "global_batch", err, "give micro_batches or global_batch, not both");
	}
	if (!j->micro_batches && !j->global_batch) {
		o = origin_of(c, sc, "hybrid", "micro_batches");
		return key_error(sc, &o, "hybrid", "micro_batches", err, "required: micro_batches or global_batch");
	}
	if (j->global_batch) {
		if (j->global_batch % (j->dp * j->micro_batch)) {
			o = origin_of(c, sc, "hybrid", "global_batch");
			return key_error(sc, &o, "hybrid", "global_batch", err, "%lld sequences do not split into "
					 "dp %lld x micro_batch %lld", (long long)j->global_batch, (long long)j->dp,
					 (long long)j->micro_batch);
		}
		j->micro_batches = j->global_batch / (j->dp * j->micro_batch);
	}
	if (j->schedule == LBS_HY_INTERLEAVED && (j->virtual_stages < 2 || j->micro_batches % j->pp)) {
		o = origin_of(c, sc, "hybrid", "virtual_stages");
		return key_error(sc, &o, "hybrid", "virtual_stages", err, "the interleaved schedule needs "
				 "virtual_stages >= 2 (has %lld) and micro-batches a multiple of pp (%lld of %lld)",
				 (long long)j->virtual_stages, (long long)j->micro_batches, (long long)j->pp);
	}
	if (j->schedule != LBS_HY_INTERLEAVED && j->virtual_stages != 1) {
		o = origin_of(c, sc, "hybrid", "virtual_stages");
		return key_error(sc, &o, "hybrid", "virtual_stages", err, "%lld chunks a stage need schedule = "
				 "interleaved", (long long)j->virtual_stages);
	}
	if ((j->first_layers || j->last_layers) && j->pp * j->virtual_stages < 2) {
		const char *k = j->first_layers ? "first_stage_layers" : "last_stage_layers";
		o = origin_of(c, sc, "hybrid", k);
		return key_error(sc, &o, "hybrid", k, err, "needs two model chunks or more (pp %lld x "
				 "virtual_stages %lld)", (long long)j->pp, (long long)j->virtual_stages);
	}
	if (!lbs_net_is_transformer(sc->model.name)) {
		o = origin_of(c, sc, "model", "name");
		return key_error(sc, &o, "model", "name", err, "'%s' is no transformer preset (lbsim calibrate --list)",
				 sc->model.name);
	}
	if (!sc->n_nodes)
		return lbs_error_set(err, LBS_EINPUT, "%s: no [nodes.NAME] section: a hybrid job needs its GPUs", sc->path);
	int64_t gpus = 0;
	for (size_t i = 0; i < sc->n_nodes; i++) {
		lbs_hy_nodes_spec *n = &sc->nodes[i];
		char sec[LBS_NAME_MAX + 16];
		snprintf(sec, sizeof sec, "nodes.%s", n->name);
		if (!lbs_gpu_find(n->gpu)) {
			o = origin_of(c, sc, sec, "gpu");
			return key_error(sc, &o, sec, "gpu", err, "'%s' is no device of lbsim calibrate --gpus", n->gpu);
		}
		gpus += n->count * n->gpus_per_node;
		if (gpus > LBS_HY_MAX_GPUS) {
			o = origin_of(c, sc, sec, "count");
			return key_error(sc, &o, sec, "count", err, "more than %d GPUs in all", LBS_HY_MAX_GPUS);
		}
	}
	int64_t need = j->dp * j->pp * j->tp * j->cp;
	if (gpus != need) {
		o = origin_of(c, sc, "hybrid", "dp");
		if (j->cp > 1)
			return key_error(sc, &o, "hybrid", "dp", err, "dp %lld x pp %lld x tp %lld x cp %lld = %lld GPUs, "
					 "the nodes hold %lld", (long long)j->dp, (long long)j->pp, (long long)j->tp,
					 (long long)j->cp, (long long)need, (long long)gpus);
		return key_error(sc, &o, "hybrid", "dp", err, "dp %lld x pp %lld x tp %lld = %lld GPUs, the nodes hold "
				 "%lld", (long long)j->dp, (long long)j->pp, (long long)j->tp, (long long)need,
				 (long long)gpus);
	}
	const lbs_tf_config *tf = lbs_net_tf_config(sc->model.name); /* a preset: checked above */
	if (j->ep > 1) {
		o = origin_of(c, sc, "hybrid", "ep");
		if (!tf || !tf->experts || tf->experts % j->ep)
			return key_error(sc, &o, "hybrid", "ep", err, "expert parallelism of degree %lld needs a mixture "
					 "of experts whose experts it divides ('%s' has %d)", (long long)j->ep,
					 sc->model.name, tf ? tf->experts : 0);
		if (j->dp % j->ep)
			return key_error(sc, &o, "hybrid", "ep", err, "%lld must divide dp %lld: an expert group is "
					 "formed of data-parallel replicas", (long long)j->ep, (long long)j->dp);
		if (!strcmp(sc->policy.name, "resplit")) {
			o = origin_of(c, sc, "hybrid_policy", "name");
			return key_error(sc, &o, "hybrid_policy", "name", err, "resplit moves blocks between stages, "
					 "which is not modelled with expert parallelism (ep %lld): the experts' layout "
					 "stays; the other policies re-balance micro-batches, by expert group",
					 (long long)j->ep);
		}
	}
	if ((sc->model.expert_gini > 0 || sc->model.expert_capacity > 0 || sc->model.expert_pad) &&
	    (!tf || !tf->experts)) {
		const char *k = sc->model.expert_gini > 0 ? "expert_gini" : "expert_capacity";
		if (!(sc->model.expert_gini > 0) && !(sc->model.expert_capacity > 0))
			k = "expert_pad";
		o = origin_of(c, sc, "model", k);
		return key_error(sc, &o, "model", k, err, "'%s' is no mixture of experts", sc->model.name);
	}
	if (sc->model.expert_pad && !(sc->model.expert_capacity > 0)) {
		o = origin_of(c, sc, "model", "expert_pad");
		return key_error(sc, &o, "model", "expert_pad", err, "padding to the capacity needs [model] "
				 "expert_capacity (a dropless mixture of experts has no capacity to pad to)");
	}
	if (sc->model.expert_capacity > 0 && sc->model.expert_capacity < 1) {
		o = origin_of(c, sc, "model", "expert_capacity");
		return key_error(sc, &o, "model", "expert_capacity", err, "%g: a capacity factor below 1 drops tokens "
				 "even from balanced routing: 0 (dropless) or at least 1", sc->model.expert_capacity);
	}
	if (j->cp > 1 && j->cp_comm == 1) {
		if (tf && ((tf->heads / j->tp) % j->cp || (tf->kv_heads / j->tp) % j->cp)) {
			o = origin_of(c, sc, "hybrid", "cp_comm");
			return key_error(sc, &o, "hybrid", "cp_comm", err, "the all-to-all (Ulysses) gives each of the %lld "
					 "context ranks 1 / %lld of a tensor rank's %d heads and %d key/value heads, which "
					 "do not split so ('%s', tp %lld); p2p (ring attention) does not need it",
					 (long long)j->cp, (long long)j->cp, tf->heads / (int)j->tp,
					 tf->kv_heads / (int)j->tp, sc->model.name, (long long)j->tp);
		}
	}
	if (j->cp > 1 && sc->lengths.given) {
		o = origin_of(c, sc, "hybrid", "cp");
		return key_error(sc, &o, "hybrid", "cp", err, "context parallelism with drawn sequence lengths "
				 "([lengths]) is not modelled: each rank's share of a sequence of its own length");
	}
	sc->n_gpus = gpus;
	for (size_t i = 0; i < sc->n_episodes; i++) {
		char sec[LBS_NAME_MAX + 40], why[160];
		snprintf(sec, sizeof sec, "failslow.%s", sc->episodes[i].name);
		if (!parse_ranks(sc->episodes[i].gpus, gpus, why, sizeof why)) {
			o = origin_of(c, sc, sec, "gpus");
			return key_error(sc, &o, sec, "gpus", err, "%s", why);
		}
	}
	lbs_status st = check_lengths(sc, c, err);
	return st == LBS_OK ? draw_failslows(sc, c, err) : st;
}

static lbs_status record_one(lbs_hy_scenario *sc, const char *section, const char *key, const char *value,
			     lbs_error *err)
{
	if (!lbs_kv_add(&sc->config, &sc->n_config, &sc->cap_config, section, key, value, NULL))
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	return LBS_OK;
}

static lbs_status record(lbs_hy_scenario *sc, const char *section, const lbs_key_spec *keys, size_t nkeys,
			 const lbs_kv *const *entries, size_t n, lbs_error *err)
{
	for (size_t k = 0; k < nkeys; k++) {
		const char *v = keys[k].def;
		for (size_t i = 0; i < n; i++)
			if (!strcmp(entries[i]->key, keys[k].name))
				v = entries[i]->value;
		if (v && *v && !lbs_kv_add(&sc->config, &sc->n_config, &sc->cap_config, section, keys[k].name, v, NULL))
			return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	}
	return LBS_OK;
}

/* [hybrid_policy] into sc->policy; [hybrid_policy.NAME] kept whole, its
 * keys checked by the policy when it is created (hybrid/policy.h). */
static lbs_status policy_section(lbs_hy_scenario *sc, const parse_ctx *c, const char *name, const lbs_origin *where,
				 const lbs_kv **entries, lbs_error *err)
{
	size_t n = 0;
	for (size_t i = 0; i < c->n_kv; i++)
		if (!strcmp(c->kv[i].section, name))
			entries[n++] = &c->kv[i];
	if (!name[13]) {
		uint64_t present;
		lbs_status st = lbs_keys_apply(policy_keys, NKEYS(policy_keys), name, where, entries, n, &sc->policy,
					       &present, NULL, err);
		return st == LBS_OK ? record(sc, name, policy_keys, NKEYS(policy_keys), entries, n, err) : st;
	}
	if (!lbs_hy_scenario_policy(sc, name + 14)) {
		char names[256];
		lbs_hy_policy_names(names, sizeof names);
		return lbs_error_set(err, LBS_EINPUT, "%s:%d: [%s]: no hybrid policy '%s' (%s)", where->file, where->line,
				     name, name + 14, names);
	}
	lbs_kv *kv = realloc(sc->policy.options, (sc->policy.n_options + n + 1) * sizeof *kv);
	if (!kv)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	sc->policy.options = kv;
	for (size_t i = 0; i < n; i++) {
		kv[sc->policy.n_options++] = *entries[i];
		lbs_status st = record_one(sc, name, entries[i]->key, entries[i]->value, err);
		if (st != LBS_OK)
			return st;
	}
	return LBS_OK;
}

static lbs_status build(lbs_hy_scenario *sc, parse_ctx *c, lbs_error *err)
{
	const lbs_kv **entries = calloc(c->n_kv ? c->n_kv : 1, sizeof *entries);
	if (!entries)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	lbs_status st = LBS_OK;
	bool seen_job = false, seen_model = false, seen_intra = false, seen_net = false;
	for (size_t h = 0; st == LBS_OK && h < c->n_hdr; h++) {
		const char *name = c->hdr[h].name, *sub;
		lbs_origin where = { sc->path, c->hdr[h].line };
		if (!strncmp(name, "hybrid_policy", 13) && (!name[13] || name[13] == '.')) {
			st = policy_section(sc, c, name, &where, entries, err);
			continue;
		}
		const section_spec *spec = find_section(name, &sub);
		if (!spec) {
			st = lbs_error_set(err, LBS_EINPUT, "%s:%d: [%s]: no such section in a hybrid scenario (run, hybrid, "
					   "model, intra_node, network, nodes.NAME, failslow.NAME, failslows.NAME, generator.NAME, lengths, "
					   "hybrid_policy[.NAME]; doc/hybrid.md)",
					   sc->path, where.line, name);
			break;
		}
		size_t n = 0;
		for (size_t i = 0; i < c->n_kv; i++)
			if (!strcmp(c->kv[i].section, name))
				entries[n++] = &c->kv[i];
		uint64_t present;
		void *target = NULL;
		if (!strcmp(spec->name, "run"))
			target = &sc->run;
		else if (!strcmp(spec->name, "hybrid"))
			target = &sc->job, seen_job = true;
		else if (!strcmp(spec->name, "model"))
			target = &sc->model, seen_model = true;
		else if (!strcmp(spec->name, "intra_node"))
			target = &sc->intra, seen_intra = true;
		else if (!strcmp(spec->name, "network"))
			target = &sc->net, seen_net = true;
		else if (!strcmp(spec->name, "lengths"))
			target = &sc->lengths, sc->lengths.given = true;
		else if (!strcmp(spec->name, "failslows")) {
			lbs_hy_failslows_spec *fg = NULL;
			if ((st = append(&sc->gens, &sc->n_gens, sizeof *fg, LBS_HY_MAX_NODE_GROUPS,
					 "[failslows.NAME] sections", &where, &fg, err)) != LBS_OK)
				break;
			snprintf(fg->name, sizeof fg->name, "%s", sub);
			fg->at = where;
			target = fg;
		} else if (!strcmp(spec->name, "generator")) {
			lbs_hy_generator_spec *gs = NULL;
			if ((st = append(&sc->avail_gens, &sc->n_avail_gens, sizeof *gs, LBS_HY_MAX_NODE_GROUPS,
					 "[generator.NAME] sections", &where, &gs, err)) != LBS_OK)
				break;
			snprintf(gs->name, sizeof gs->name, "%s", sub);
			gs->at = where;
			target = gs;
		} else if (!strcmp(spec->name, "nodes")) {
			lbs_hy_nodes_spec *nd = NULL;
			if ((st = append(&sc->nodes, &sc->n_nodes, sizeof *nd, LBS_HY_MAX_NODE_GROUPS, "node groups",
					 &where, &nd, err)) != LBS_OK)
				break;
			snprintf(nd->name, sizeof nd->name, "%s", sub);
			nd->at = where;
			target = nd;
		} else {
			lbs_hy_episode_spec *ep = NULL;
			if ((st = append(&sc->episodes, &sc->n_episodes, sizeof *ep, LBS_HY_MAX_EPISODES,
					 "fail-slow episodes", &where, &ep, err)) != LBS_OK)
				break;
			snprintf(ep->name, sizeof ep->name, "%s", sub);
			ep->at = where;
			target = ep;
		}
		size_t n_trace = 0;
		if (!strcmp(spec->name, "nodes")) {
			/* the trace* keys first, validated as [workers.NAME]'s */
			for (size_t i = 0; i < n; i++)
				if (!strncmp(entries[i]->key, "trace", 5)) {
					const lbs_kv *e = entries[i];
					memmove(&entries[n_trace + 1], &entries[n_trace], (i - n_trace) * sizeof *entries);
					entries[n_trace++] = e;
				}
			st = lbs_scenario_trace_keys(name, &where, (const lbs_kv *const *)entries, n_trace,
						     &((lbs_hy_nodes_spec *)target)->trace, err);
			for (size_t i = 0; st == LBS_OK && i < n_trace; i++)
				st = record_one(sc, name, entries[i]->key, entries[i]->value, err);
		}
		if (st == LBS_OK)
			st = lbs_keys_apply(spec->keys, spec->nkeys, name, &where, entries + n_trace, n - n_trace, target,
					    &present, NULL, err);
		if (st == LBS_OK && target == &sc->model)
			sc->model.overhead_given =
				present >> lbs_keys_find(model_keys, NKEYS(model_keys), "op_overhead") & 1;
		if (st == LBS_OK)
			st = record(sc, name, spec->keys, spec->nkeys, entries + n_trace, n - n_trace, err);
	}
	free(entries);
	if (st != LBS_OK)
		return st;
	const char *missing = !seen_job ? "hybrid" : !seen_model ? "model" : !seen_intra ? "intra_node"
			    : !seen_net ? "network" : NULL;
	if (missing)
		return lbs_error_set(err, LBS_EINPUT, "%s: a hybrid scenario needs a [%s] section (doc/hybrid.md)",
				     sc->path, missing);
	if (!*sc->run.name) {
		const char *base = strrchr(sc->path, '/');
		snprintf(sc->run.name, sizeof sc->run.name, "%.200s", base ? base + 1 : sc->path);
		char *dot = strrchr(sc->run.name, '.');
		if (dot && !strcmp(dot, ".ini"))
			*dot = '\0';
	}
	if (!seen_job || !c->n_hdr)
		return LBS_OK;
	/* [run] may be absent: its defaults */
	bool seen_run = false;
	for (size_t h = 0; h < c->n_hdr; h++)
		seen_run |= !strcmp(c->hdr[h].name, "run");
	if (!seen_run) {
		lbs_origin where = { sc->path, 0 };
		uint64_t present;
		st = lbs_keys_apply(run_keys, NKEYS(run_keys), "run", &where, NULL, 0, &sc->run, &present, NULL, err);
		if (st != LBS_OK)
			return st;
	}
	bool seen_policy = false;
	for (size_t h = 0; h < c->n_hdr; h++)
		seen_policy |= !strcmp(c->hdr[h].name, "hybrid_policy");
	if (!seen_policy) {
		lbs_origin where = { sc->path, 0 };
		uint64_t present;
		st = lbs_keys_apply(policy_keys, NKEYS(policy_keys), "hybrid_policy", &where, NULL, 0, &sc->policy,
				    &present, NULL, err);
		if (st != LBS_OK)
			return st;
	}
	if (!lbs_hy_scenario_policy(sc, sc->policy.name)) {
		char names[256];
		lbs_hy_policy_names(names, sizeof names);
		lbs_origin o = origin_of(c, sc, "hybrid_policy", "name");
		return key_error(sc, &o, "hybrid_policy", "name", err, "no hybrid policy '%s' (%s)", sc->policy.name,
				 names);
	}
	/* only the chosen policy's options: the others' sections were checked to name a policy */
	size_t keep = 0;
	for (size_t i = 0; i < sc->policy.n_options; i++)
		if (!strcmp(sc->policy.options[i].section + 14, sc->policy.name))
			sc->policy.options[keep++] = sc->policy.options[i];
	sc->policy.n_options = keep;
	return check(sc, c, err);
}

const lbs_hy_policy_ops *lbs_hy_scenario_policy(const lbs_hy_scenario *sc, const char *name)
{
	const lbs_hy_policy_ops *ops = sc->plugin.other;
	if (ops && !strcmp(ops->name, name))
		return ops;
	return lbs_hy_policy_find(name);
}

static void describe_hy_policy(const void *ops, lbs_plugin_desc *d)
{
	const lbs_hy_policy_ops *o = ops;
	*d = (lbs_plugin_desc){ .name = o->name, .summary = o->summary, .options = o->options,
				.n_options = o->n_options, .options_size = o->options_size,
				.required = o->create && o->plan && o->destroy,
				.fns = { (const void *)o->create, (const void *)o->plan, (const void *)o->destroy },
				.n_fns = 3 };
}

/* [hybrid_policy] plugin, loaded before any section is read (the name and
 * [hybrid_policy.NAME] refer to it). A scenario file names it within its
 * own folder, as [policy] plugin (sim/scenario.c). */
static lbs_status load_plugin(lbs_hy_scenario *sc, const parse_ctx *c, lbs_error *err)
{
	const lbs_kv *kv = NULL;
	for (size_t i = 0; i < c->n_kv; i++)
		if (!strcmp(c->kv[i].section, "hybrid_policy") && !strcmp(c->kv[i].key, "plugin"))
			kv = &c->kv[i];
	if (!kv)
		return LBS_OK;
	char label[LBS_ERROR_MAX / 2];
	lbs_origin_format(&kv->at, kv->section, "plugin", label, sizeof label);
	size_t n = strlen(kv->value);
	if (!n)
		return lbs_error_set(err, LBS_EINPUT, "%s: expected the path of a shared object", label);
	if (kv->at.line > 0 && (kv->value[0] == '/' || !strcmp(kv->value, "..") || !strncmp(kv->value, "../", 3) ||
				strstr(kv->value, "/../") || (n >= 3 && !strcmp(kv->value + n - 3, "/.."))))
		return lbs_error_set(err, LBS_EINPUT, "%s: '%s' leaves the scenario's folder: a scenario file names a "
				     "plugin by a relative path without '..' (an absolute path goes on the command line, "
				     "--set hybrid_policy.plugin=PATH)", label, kv->value);
	const char *file = kv->at.file, *slash = file ? strrchr(file, '/') : NULL;
	char base[LBS_DATAPATH_MAX];
	snprintf(base, sizeof base, "%.*s", kv->at.line > 0 && slash ? (int)(slash - file + 1) : 0, file ? file : "");
	lbs_datapath *dp = lbs_calloc(1, sizeof *dp, err);
	if (!dp)
		return LBS_EINTERNAL;
	lbs_datapath_find(kv->value, base, "plugins", dp);
	char path[LBS_DATAPATH_MAX + 2];
	/* dlopen searches the library path for a name without '/' */
	snprintf(path, sizeof path, "%s%s", strchr(dp->path, '/') ? "" : "./", dp->path);
	static const lbs_plugin_kind kind = { "hybrid policy", LBS_HY_POLICY_PLUGIN_SYMBOL, sizeof(lbs_hy_policy_ops),
					      describe_hy_policy, "create, plan and destroy" };
	lbs_status st = dp->found ? lbs_plugin_open_kind(&sc->plugin, path, &kind, &sc->plugin.other, err)
				  : lbs_error_set(err, LBS_EINPUT, "%s: no such file", kv->value);
	if (st == LBS_OK && lbs_hy_policy_find(((const lbs_hy_policy_ops *)sc->plugin.other)->name)) {
		st = lbs_error_set(err, LBS_EINPUT, "%s: hybrid policy '%s' is the name of a built-in policy: give the "
				   "plugin its own", path, ((const lbs_hy_policy_ops *)sc->plugin.other)->name);
		lbs_plugin_close(&sc->plugin);
	}
	if (st != LBS_OK) {
		lbs_datapath_explain(err, dp);
		lbs_error_prefix(err, "%s", label);
	}
	free(dp);
	return st;
}

lbs_status lbs_hy_scenario_load(lbs_hy_scenario *sc, const char *path, const char *const *overrides,
				size_t n_overrides, lbs_error *err)
{
	memset(sc, 0, sizeof *sc);
	snprintf(sc->path, sizeof sc->path, "%s", path);
	parse_ctx c = { .ini = { .max_chars = 4000, .on_section = on_section } };
	lbs_status st = lbs_ini_parse(&c.ini, sc->path, "scenario", on_key, &c, err);
	for (size_t i = 0; st == LBS_OK && i < n_overrides; i++)
		st = override(&c, overrides[i], err);
	if (st == LBS_OK)
		st = load_plugin(sc, &c, err);
	if (st == LBS_OK)
		st = build(sc, &c, err);
	free(c.kv);
	free(c.hdr);
	if (st != LBS_OK)
		lbs_hy_scenario_destroy(sc);
	return st;
}

void lbs_hy_scenario_destroy(lbs_hy_scenario *sc)
{
	free(sc->nodes);
	free(sc->episodes);
	free(sc->gens);
	free(sc->avail_gens);
	free(sc->config);
	free(sc->policy.options);
	sc->policy.options = NULL;
	if (sc->plugin.handle)
		lbs_plugin_close(&sc->plugin);
	sc->policy.n_options = 0;
	free(sc->lengths.values);
	sc->lengths.values = NULL;
	sc->lengths.n_values = 0;
	sc->nodes = NULL;
	sc->episodes = NULL;
	sc->gens = NULL;
	sc->n_gens = 0;
	sc->avail_gens = NULL;
	sc->n_avail_gens = 0;
	sc->config = NULL;
	sc->n_nodes = sc->n_episodes = sc->n_config = sc->cap_config = 0;
}

void lbs_hy_scenario_document(FILE *out)
{
	fputs("\n## Hybrid-parallel scenarios\n\nA scenario with a `[hybrid]` section describes one hybrid-parallel "
	      "job and runs on the hybrid engine (doc/hybrid.md); it takes these sections only.\n", out);
	for (size_t i = 0; i < NKEYS(sections); i++) {
		bool named = is_named(sections[i].name);
		fprintf(out, "\n### [%s%s] (hybrid)\n\n%s.\n\n", sections[i].name, named ? ".NAME" : "", sections[i].doc);
		lbs_keys_document(out, sections[i].keys, sections[i].nkeys);
	}
	fputs("\n### [hybrid_policy] (hybrid)\n\nThe balancing policy of the replicas' micro-batches "
	      "(doc/hybrid.md, \"Balancing policies\").\n\n", out);
	lbs_keys_document(out, policy_keys, NKEYS(policy_keys));
	lbs_hy_policy_document(out);
}

int64_t lbs_hy_lengths_draw(const lbs_hy_lengths_spec *ls, gsl_rng *r, double *ratio, size_t n)
{
	int64_t total = 0;
	double S = (double)ls->seq_len;
	for (size_t i = 0; i < n; i++) {
		int64_t len;
		switch (ls->distribution) {
		case LBS_HY_LEN_FIXED:
			len = ls->length ? ls->length : ls->seq_len;
			break;
		case LBS_HY_LEN_UNIFORM:
			len = ls->min + (int64_t)gsl_rng_uniform_int(r, (unsigned long)(ls->max - ls->min + 1));
			break;
		case LBS_HY_LEN_LOGNORMAL: {
			double x = round(gsl_ran_lognormal(r, log(ls->median), ls->sigma));
			len = x < 1 ? 1 : x > S ? ls->seq_len : (int64_t)x;
			break;
		}
		default:
			len = ls->values[gsl_rng_uniform_int(r, ls->n_values)];
		}
		ratio[i] = (double)len / S;
		total += len;
	}
	return total;
}
