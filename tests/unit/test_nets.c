/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Model descriptions: parameter counts against the published ones, shapes
 * at known points of each architecture, GEMM shapes and memory caps. */
#include <math.h>
#include <string.h>

#include "models/calib/gpu_fit.h"
#include "models/cpu.h"
#include "models/gpu.h"
#include "models/nets.h"
#include "tests/unit/suites.h"

static lbs_net net_of(const char *name)
{
	lbs_net n;
	lbs_error err = { 0 };
	CU_ASSERT_EQUAL_FATAL(lbs_net_create(&n, name, &err), LBS_OK);
	return n;
}

static const lbs_layer *layer(const lbs_net *n, const char *name)
{
	for (size_t i = 0; i < n->n_layers; i++)
		if (!strcmp(n->layers[i].name, name))
			return &n->layers[i];
	CU_FAIL("no such layer");
	return &n->layers[0];
}

/* Every network's count equals the published one (torchvision's exact
 * counts; ResNet-32's is the paper's rounded 0.46M). */
static void test_published_params(void)
{
	for (size_t i = 0; lbs_net_name_at(i); i++) {
		lbs_net n = net_of(lbs_net_name_at(i));
		int64_t sum = 0;
		for (size_t l = 0; l < n.n_layers; l++)
			sum += n.layers[l].params;
		CU_ASSERT_EQUAL(sum, n.params);
		if (!strcmp(n.name, "resnet32")) {
			CU_ASSERT_EQUAL(n.params, 464154); /* option A: 0.46M */
			CU_ASSERT(fabs((double)n.params - 460000.0) < 5000.0);
		} else if (!strcmp(n.name, "gpt3-350m")) {
			/* Table 2.1's 350M is GPT-2 Medium's rounded count; its
			 * architecture has 355,871,744 (1.7% more) */
			CU_ASSERT(fabs((double)n.params / 350e6 - 1) < 0.02);
		} else if (n.published_digits) {
			/* the published count is this one rounded */
			double scale = pow(10, floor(log10((double)n.params)) + 1 - n.published_digits);
			CU_ASSERT_EQUAL(round((double)n.params / scale) * scale, (double)n.published_params);
		} else {
			CU_ASSERT_EQUAL(n.params, n.published_params);
		}
		lbs_net_destroy(&n);
	}
	lbs_net n = net_of("resnet50");
	CU_ASSERT_EQUAL(n.params, 25557032);
	lbs_net_destroy(&n);
}

static void test_shapes(void)
{
	lbs_net n = net_of("resnet50");
	const lbs_layer *c1 = layer(&n, "conv1");
	CU_ASSERT(c1->out_c == 64 && c1->out_h == 112 && c1->out_w == 112);
	const lbs_layer *last = layer(&n, "layer4.2.conv3");
	CU_ASSERT(last->out_c == 2048 && last->out_h == 7 && last->out_w == 7);
	CU_ASSERT(n.n_layers > 0 && n.layers[n.n_layers - 1].kind == LBS_LAYER_FC);
	/* 4.1 GMAC forward (He et al. Table 1: 3.8 GFLOPs counting multiply-adds
	 * of the convolutions; torchvision's 4.09 GMAC with the fc) */
	lbs_gemm g[LBS_GEMM_PASSES];
	double fwd = 0;
	for (size_t i = 0; i < n.n_layers; i++)
		if (lbs_layer_gemms(&n.layers[i], 1, g))
			fwd += (double)g[0].m * (double)g[0].n * (double)g[0].k;
	CU_ASSERT(fwd > 4.0e9 && fwd < 4.2e9);
	lbs_net_destroy(&n);

	n = net_of("inception3");
	CU_ASSERT_EQUAL(layer(&n, "Mixed_5b.cat")->out_c, 256);
	CU_ASSERT_EQUAL(layer(&n, "Mixed_6a.cat")->out_h, 17);
	CU_ASSERT_EQUAL(layer(&n, "Mixed_7c.cat")->out_c, 2048);
	CU_ASSERT_EQUAL(layer(&n, "Mixed_7c.cat")->out_h, 8);
	lbs_net_destroy(&n);

	n = net_of("densenet121");
	CU_ASSERT_EQUAL(layer(&n, "norm5")->in_c, 1024);
	CU_ASSERT_EQUAL(layer(&n, "norm5")->in_h, 7);
	lbs_net_destroy(&n);

	n = net_of("resnet32");
	CU_ASSERT_EQUAL(layer(&n, "stage3.4.conv2")->out_h, 8);
	CU_ASSERT_EQUAL(layer(&n, "stage3.4.conv2")->out_c, 64);
	lbs_net_destroy(&n);
}

static void test_gemms(void)
{
	lbs_net n = net_of("resnet50");
	lbs_gemm g[LBS_GEMM_PASSES];
	/* conv1: M = 64, N = 112*112*b, K = 3*7*7; the first layer has no input gradient. */
	CU_ASSERT_EQUAL(lbs_layer_gemms(layer(&n, "conv1"), 8, g), 2);
	CU_ASSERT(g[0].m == 64 && g[0].n == 112 * 112 * 8 && g[0].k == 147 && g[0].count == 1);
	CU_ASSERT_EQUAL(g[LBS_GEMM_BACKWARD_DATA].count, 0);
	CU_ASSERT(g[2].m == 64 && g[2].n == 147 && g[2].k == 112 * 112 * 8);
	/* A 3x3 stride-2 conv: the data gradient is K x N over M. */
	CU_ASSERT_EQUAL(lbs_layer_gemms(layer(&n, "layer2.0.conv2"), 2, g), 3);
	CU_ASSERT(g[0].m == 128 && g[0].n == 28 * 28 * 2 && g[0].k == 128 * 9);
	CU_ASSERT(g[1].m == 128 * 9 && g[1].n == 28 * 28 * 2 && g[1].k == 128);
	/* fc: M = 1000, N = b, K = 2048 */
	CU_ASSERT_EQUAL(lbs_layer_gemms(layer(&n, "fc"), 32, g), 3);
	CU_ASSERT(g[0].m == 1000 && g[0].n == 32 && g[0].k == 2048);
	CU_ASSERT_EQUAL(lbs_layer_gemms(layer(&n, "maxpool"), 32, g), 0);
	/* Work is linear in the batch. */
	CU_ASSERT(fabs(lbs_net_flops(&n, 64) - 64 * lbs_net_flops(&n, 1)) < 1e-9 * lbs_net_flops(&n, 64));
	lbs_net_destroy(&n);

	n = net_of("linear-url");
	CU_ASSERT_EQUAL(lbs_layer_gemms(&n.layers[0], 16, g), 2);
	CU_ASSERT(g[0].m == 1 && g[0].n == 1 && g[0].k == 128 && g[0].count == 16);
	CU_ASSERT_EQUAL(g[LBS_GEMM_BACKWARD_DATA].count, 0);
	lbs_net_destroy(&n);
}

static void test_memory_cap(void)
{
	lbs_net n = net_of("resnet50");
	double state = lbs_net_state_bytes(&n);
	CU_ASSERT_EQUAL(state, 12.0 * 25557032);
	double per = 4.0 * (double)n.act_per_sample;
	CU_ASSERT_EQUAL(lbs_net_max_batch(&n, state + 10 * per), 10);
	CU_ASSERT_EQUAL(lbs_net_max_batch(&n, state + 10 * per - 1), 9);
	CU_ASSERT_EQUAL(lbs_net_max_batch(&n, state / 2), 0);
	/* A 12 GB K80 ran ResNet-50 at batch 128 in Gavel's measurements. */
	int64_t k80 = lbs_net_max_batch(&n, 12e9);
	CU_ASSERT(k80 >= 100 && k80 <= 160);
	lbs_net_destroy(&n);
	lbs_error err = { 0 };
	CU_ASSERT_EQUAL(lbs_net_create(&n, "resnet-50", &err), LBS_EINPUT);
	CU_ASSERT(strstr(err.msg, "resnet50") != NULL); /* names the known ones */
}

/* ---- transformers ------------------------------------------------------ */

static lbs_net tf_of(const char *name, const lbs_net_opts *o)
{
	lbs_net n;
	lbs_error err = { 0 };
	CU_ASSERT_EQUAL_FATAL(lbs_net_create_opts(&n, name, o, &err), LBS_OK);
	return n;
}

/* The count from the configuration's dimensions, written out: GPT (biases,
 * two LayerNorms of scale and shift, learned positions, tied logits) and
 * Llama (no biases, two RMSNorms, rotary positions, untied logits). */
static int64_t closed_form_params(const lbs_tf_config *c)
{
	int64_t L = c->layers, h = c->hidden, da = (int64_t)c->heads * c->head_dim,
		dk = (int64_t)c->kv_heads * c->head_dim, f = c->ffn, V = c->vocab;
	if (!c->swiglu)
		return L * (h * 3 * da + 3 * da + da * h + h + h * f + f + f * h + h + 4 * h) + V * h +
		       c->max_seq * h + 2 * h;
	if (c->experts) /* E experts' FFNs and the router, h x E */
		return L * (h * (da + 2 * dk) + da * h + c->experts * 3 * h * f + h * c->experts + 2 * h) +
		       2 * V * h + h;
	return L * (h * (da + 2 * dk) + da * h + 3 * h * f + 2 * h) + 2 * V * h + h;
}

/* Exact counts: each preset's equals the closed form of its dimensions; the
 * Llamas' equal the published exact counts (Hugging Face's, less the rotary
 * buffers of the Llama 2 checkpoints), the GPT-3s' round to Table 2.1's. */
static void test_transformer_params(void)
{
	static const struct {
		const char *name;
		int64_t count;
	} exact[] = {
		{ "gpt3-125m", 125226240 },	  { "gpt3-350m", 355871744 },
		{ "gpt3-760m", 760300032 },	  { "gpt3-1.3b", 1315723264 },
		{ "gpt3-2.7b", 2651553280 },	  { "gpt3-6.7b", 6658404352 },
		{ "gpt3-13b", 12936488380 },	  { "gpt3-175b", 174604259328 },
		{ "llama2-7b", 6738415616 },	  { "llama2-13b", 13015864320 },
		{ "llama2-70b", 68976648192 },	  { "llama3-8b", 8030261248 },
		{ "llama3-70b", 70553706496 },	  { "llama-like-small", 19532032 },
		/* 126 (16384 (2 x 16384 + 2 x 1024) + 3 x 16384 x 53248 + 2 x 16384)
		 * + 2 x 128256 x 16384 + 16384, by hand */
		{ "llama3-405b", 405853388800 },
		/* the 128K-context releases: the same weights (positions are rotary) */
		{ "llama3.1-8b", 8030261248 },	  { "llama3.1-70b", 70553706496 },
		{ "llama3.1-405b", 405853388800 },
		/* 32 (4096 (4096 + 2 x 1024) + 4096 x 4096 + 8 x 3 x 4096 x 14336
		 * + 4096 x 8 + 2 x 4096) + 2 x 32000 x 4096 + 4096, by hand */
		{ "mixtral-8x7b", 46702792704 },  { "mixtral-8x22b", 140630071296 },
		/* SC'21, Table 1: 1.7, 3.6, 7.5, 18.4, 39.1, 76.1, 145.6, 310.1, 529.6, 1008.0 billion */
		{ "megatron-1.7b", 1652230656 },  { "megatron-3.6b", 3562168320 },
		{ "megatron-7.5b", 7467786240 },  { "megatron-18b", 18449756160 },
		{ "megatron-39b", 39096041472 },  { "megatron-76b", 76050739200 },
		{ "megatron-145b", 145622261760 }, { "megatron-310b", 310130540544 },
		{ "megatron-530b", 529600819200 }, { "megatron-1t", 1008038758400 },
	};
	for (size_t i = 0; i < sizeof exact / sizeof *exact; i++) {
		CU_ASSERT_FATAL(lbs_net_is_transformer(exact[i].name));
		lbs_net n = tf_of(exact[i].name, NULL);
		CU_ASSERT_EQUAL(n.params, exact[i].count);
		CU_ASSERT_EQUAL(n.params, closed_form_params(n.tf));
		if (!n.published_digits)
			CU_ASSERT_EQUAL(n.params, n.published_params);
		lbs_net_destroy(&n);
	}
	CU_ASSERT(!lbs_net_is_transformer("resnet50"));
	CU_ASSERT(!lbs_net_is_transformer("llama4"));
}

/* Training GEMM FLOPs per token: 6 per weight of every GEMM (2 forward, 2
 * and 2 for the two gradients) plus the attention's 12 L s (a d), the form
 * of Narayanan et al., "Efficient Large-Scale Language Model Training on
 * GPU Clusters Using Megatron-LM", SC 2021, sec. 5.1 (72 B s l h^2 (1 + s /
 * 6h + V / 12 l h) an iteration; 96 ... (1 + s / 6h + V / 16 l h) with full
 * recomputation), for GPT-3 with d_attn = h exactly; with GQA and SwiGLU
 * the weights are the GEMMs' own. */
static void test_transformer_flops(void)
{
	for (size_t i = 0; lbs_net_name_at(i); i++) {
		const char *name = lbs_net_name_at(i);
		if (!lbs_net_is_transformer(name))
			continue;
		lbs_net n = tf_of(name, NULL);
		const lbs_tf_config *c = n.tf;
		double L = c->layers, h = c->hidden, da = (double)c->heads * c->head_dim,
		       dk = (double)c->kv_heads * c->head_dim, f = c->ffn, V = (double)c->vocab,
		       s = (double)n.opts.seq_len;
		/* a mixture of experts: the k experts a token is routed to, and the router */
		double ffn = c->experts ? c->top_k * 3 * h * f + h * c->experts : 3 * h * f;
		double weights = c->swiglu ? L * (h * (da + 2 * dk) + da * h + ffn) + V * h
					   : L * (4 * h * da + 2 * h * f) + V * h;
		double per_token = lbs_net_flops(&n, 1) / s;
		CU_ASSERT_DOUBLE_EQUAL(per_token, 6 * weights + 12 * L * s * da, 1e-12 * per_token);
		CU_ASSERT_DOUBLE_EQUAL(lbs_net_flops(&n, 3), 3 * lbs_net_flops(&n, 1), 1e-12 * per_token * s);
		if (!c->swiglu && da == h) {
			double B = 4;
			CU_ASSERT_DOUBLE_EQUAL(lbs_net_flops(&n, 4),
					       72 * B * s * L * h * h * (1 + s / (6 * h) + V / (12 * L * h)),
					       1e-12 * lbs_net_flops(&n, 4));
			lbs_net r = tf_of(name, &(lbs_net_opts){ .recompute = LBS_RECOMPUTE_FULL });
			CU_ASSERT_DOUBLE_EQUAL(lbs_net_flops(&r, 4),
					       96 * B * s * L * h * h * (1 + s / (6 * h) + V / (16 * L * h)),
					       1e-12 * lbs_net_flops(&r, 4));
			lbs_net_destroy(&r);
		}
		/* selective recomputation: the attention's two GEMMs once more forward */
		lbs_net sel = tf_of(name, &(lbs_net_opts){ .recompute = LBS_RECOMPUTE_SELECTIVE });
		CU_ASSERT_DOUBLE_EQUAL(lbs_net_flops(&sel, 1) / s, per_token + 4 * L * s * da, 1e-12 * per_token);
		lbs_net_destroy(&sel);
		lbs_net_destroy(&n);
	}
}

/* A mixture of experts: the FLOPs of a token are those of its active
 * weights, Mixtral 8x7B's 32 (41,943,040 attention + 2 x 176,160,768
 * experts + 32,768 router + 8,192 norms) + 2 x 131,072,000 + 4096 =
 * 12,879,925,248 by hand (the paper's "13B active parameters", sec. 1),
 * less the embedding (32,000 x 4096) and the norms (2 x 32 x 4096 + 4096),
 * which no GEMM multiplies, plus the attention's; expert parallelism shards the
 * experts' weights and leaves the work; ZeRO partitions the experts'
 * states over the dp / ep ranks holding the same experts (by hand). */
static void test_moe(void)
{
	lbs_net n = tf_of("mixtral-8x7b", NULL);
	double s = (double)n.opts.seq_len, L = 32, da = 4096;
	double gemm_weights = 12879925248.0 - 32000.0 * 4096 - (2 * 32 * 4096 + 4096);
	CU_ASSERT_DOUBLE_EQUAL(lbs_net_flops(&n, 1) / s, 6 * gemm_weights + 12 * L * s * da,
			       1e-12 * lbs_net_flops(&n, 1) / s);
	int64_t experts = INT64_C(32) * 8 * 3 * 4096 * 14336; /* 45,097,156,608 */
	CU_ASSERT_EQUAL(n.expert_params, experts);
	lbs_net e = tf_of("mixtral-8x7b", &(lbs_net_opts){ .ep = 4, .dp = 8, .zero_stage = 1 });
	CU_ASSERT_EQUAL(e.expert_params, experts / 4);
	CU_ASSERT_EQUAL(e.params, n.params - experts + experts / 4);
	CU_ASSERT_DOUBLE_EQUAL(lbs_net_flops(&e, 2), lbs_net_flops(&n, 2), 1e-12 * lbs_net_flops(&n, 2));
	lbs_mem m;
	lbs_net_memory(&e, 1, &m);
	double dense = (double)(n.params - experts);
	/* bf16 with Adam: 2 + 2 + 12 bytes a parameter; the optimizer's
	 * dense part over 8 ranks, the experts' over 8 / 4 */
	CU_ASSERT_DOUBLE_EQUAL(m.optimizer, 12 * (dense / 8 + (double)(experts / 4) / 2), 1);
	CU_ASSERT_DOUBLE_EQUAL(m.weights, 2 * (dense + (double)(experts / 4)), 1);
	lbs_net_destroy(&e);
	lbs_net_destroy(&n);
	lbs_error err = { 0 };
	lbs_net x;
	CU_ASSERT_EQUAL(lbs_net_create_opts(&x, "mixtral-8x7b", &(lbs_net_opts){ .ep = 3 }, &err), LBS_EINPUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "divides"));
	CU_ASSERT_EQUAL(lbs_net_create_opts(&x, "llama3-8b", &(lbs_net_opts){ .ep = 2 }, &err), LBS_EINPUT);
}

/* Under tensor parallelism of degree t, the split operations of the t
 * ranks add up to the whole, parameters, FLOPs and bytes alike, and the
 * replicated ones are the same on every rank. */
static void test_tensor_parallel(void)
{
	const char *names[] = { "llama2-7b", "llama3-70b", "gpt3-6.7b", "llama-like-small" };
	for (size_t i = 0; i < 4; i++) {
		lbs_net whole = tf_of(names[i], NULL);
		for (int t = 2; t <= 8; t *= 2) {
			if (whole.tf->kv_heads % t)
				continue;
			lbs_net part = tf_of(names[i], &(lbs_net_opts){ .tp = t });
			CU_ASSERT_EQUAL_FATAL(part.n_layers, whole.n_layers);
			/* GPT-3's 50,257 rows are padded to a multiple of t (Megatron) */
			double pad = (double)(((whole.tf->vocab + t - 1) / t) * t - whole.tf->vocab);
			double params = 0, flops = 0, split_params = 0;
			for (size_t l = 0; l < part.n_layers; l++) {
				const lbs_layer *p = &part.layers[l], *w = &whole.layers[l];
				CU_ASSERT_EQUAL(p->split, w->split);
				int k = p->split ? t : 1;
				params += k * (double)p->params;
				split_params += p->split ? k * (double)p->params : 0;
				lbs_op_cost cp[LBS_PASSES], cw[LBS_PASSES];
				lbs_layer_cost(&part, p, 2, cp);
				lbs_layer_cost(&whole, w, 2, cw);
				for (int q = 0; q < LBS_PASSES; q++)
					flops += k * cp[q].flops;
				if (!p->split)
					CU_ASSERT_EQUAL(p->params, w->params);
			}
			double padded = pad * whole.tf->hidden * (whole.tf->tied ? 1 : 2);
			CU_ASSERT_DOUBLE_EQUAL(params, (double)whole.params + padded, 0.5);
			CU_ASSERT(split_params > 0.9 * (double)whole.params);
			lbs_op_cost all = lbs_net_cost(&whole, 2);
			if (pad == 0) {
				CU_ASSERT_DOUBLE_EQUAL(flops, all.flops, 1e-12 * all.flops);
			} else {
				CU_ASSERT(flops > all.flops && flops < 1.001 * all.flops);
			}
			lbs_net_destroy(&part);
		}
		lbs_net_destroy(&whole);
	}
	lbs_error err = { 0 };
	lbs_net n;
	CU_ASSERT_EQUAL(lbs_net_create_opts(&n, "llama3-8b", &(lbs_net_opts){ .tp = 16 }, &err), LBS_EINPUT);
	CU_ASSERT(strstr(err.msg, "8 key/value heads") != NULL);
	CU_ASSERT_EQUAL(lbs_net_create_opts(&n, "llama3-8b", &(lbs_net_opts){ .seq_len = 8193 }, &err), LBS_EINPUT);
	CU_ASSERT(strstr(err.msg, "8192") != NULL);
	CU_ASSERT_EQUAL(lbs_net_create_opts(&n, "resnet50", &(lbs_net_opts){ .tp = 2 }, &err), LBS_EINPUT);
}

/* Memory: a GPT block's activations are Korthikanti et al.'s (MLSys 2023)
 * s b h (34 + 5 a s / h) bytes, eq. 1, and s b h (10 + 24 / t + 5 a s / (h t))
 * under tensor parallelism, eq. 2, s b h (34 / t + 5 a s / (h t)) with
 * sequence parallelism, eq. 4; 34 s b h with selective recomputation
 * (sec. 5, without sequence parallelism: 10 + 24 / t); and one rank of
 * Llama 3 8B against a hand calculation. */
static void test_transformer_memory(void)
{
	const char *names[] = { "gpt3-1.3b", "gpt3-175b" };
	for (size_t i = 0; i < 2; i++)
		for (int t = 1; t <= 8; t *= 2) {
			lbs_net n = tf_of(names[i], &(lbs_net_opts){ .tp = t });
			double s = (double)n.opts.seq_len, h = n.tf->hidden, a = n.tf->heads;
			CU_ASSERT_EQUAL(n.elt_bytes, 2);
			CU_ASSERT_DOUBLE_EQUAL((double)n.block_bytes, s * h * (10 + 24.0 / t + 5 * a * s / (h * t)), 0.5);
			double kept = 0;
			for (size_t l = 0; l < n.n_layers; l++)
				if (n.layers[l].block == 1)
					kept += (double)n.layers[l].act_bytes;
			CU_ASSERT_DOUBLE_EQUAL(kept, s * h * (10 + 24.0 / t), 0.5);
			CU_ASSERT_DOUBLE_EQUAL((double)n.block_input_bytes, 2 * s * h, 0.5);
			/* sequence parallelism as well: s b h (34 / t + 5 a s / (h t)),
			 * eq. 4, and 34 s b h / t with selective recomputation; the
			 * norms move 1 / t of the bytes, the GEMMs' work is the same */
			lbs_net q = tf_of(names[i], &(lbs_net_opts){ .tp = t, .seq_par = true });
			CU_ASSERT_DOUBLE_EQUAL((double)q.block_bytes, s * h * (34.0 / t + 5 * a * s / (h * t)), 0.5);
			double kept_sp = 0;
			size_t bad = 0;
			for (size_t l = 0; l < q.n_layers; l++) {
				const lbs_layer *x = &q.layers[l], *y = &n.layers[l];
				if (x->block == 1)
					kept_sp += (double)x->act_bytes;
				if (strstr(x->name, "norm"))
					bad += fabs(x->fwd_bytes * t - y->fwd_bytes) > 1e-9 * y->fwd_bytes;
				if (x->kind == LBS_LAYER_LINEAR)
					bad += x->params != y->params || x->fwd_flops != y->fwd_flops;
			}
			CU_ASSERT_DOUBLE_EQUAL(kept_sp, s * h * 34.0 / t, 0.5);
			CU_ASSERT_EQUAL(bad, 0);
			CU_ASSERT_EQUAL(q.params, n.params);
			lbs_net_destroy(&q);
			lbs_net_destroy(&n);
		}

	/* Llama 3 8B, bf16 with Adam, ZeRO stage 1 over 8 ranks, selective
	 * recomputation, 8192 tokens, one sample. Per block (bytes): the two
	 * norms' inputs, the QKV's, the output projection's and the gate's, 2sh
	 * each; Q and K, 2s(32 + 8)128; V, 2s 8 128; the SiLU's input 2sf, the
	 * product's two 4sf, the down projection's input 2sf. */
	double s = 8192, h = 4096, f = 14336, V = 128256, P = 8030261248.0;
	double block = 5 * 2 * s * h + 2 * s * 40 * 128 + 2 * s * 8 * 128 + 8 * s * f;
	CU_ASSERT_EQUAL(block, 1375731712.0);
	/* outside the blocks: the token ids (int64), the final norm's and the
	 * logits' inputs, the fp32 probabilities of the loss */
	double rest = 8 * s + 2 * 2 * s * h + 4 * s * V;
	lbs_net n = tf_of("llama3-8b", &(lbs_net_opts){ .recompute = LBS_RECOMPUTE_SELECTIVE, .zero_stage = 1,
							.dp = 8 });
	lbs_mem m;
	lbs_net_memory(&n, 1, &m);
	CU_ASSERT_EQUAL(m.weights, 2 * P);
	CU_ASSERT_EQUAL(m.grads, 2 * P);
	CU_ASSERT_EQUAL(m.optimizer, 12 * P / 8);
	CU_ASSERT_EQUAL(m.activations, 32 * block + rest);
	CU_ASSERT_EQUAL(m.total, 92526827520.0);
	/* an 80 GB device holds no sample; 141 GB (H200) two */
	CU_ASSERT_EQUAL(lbs_net_max_batch(&n, 80e9), 0);
	CU_ASSERT_EQUAL(lbs_net_max_batch(&n, 141e9), 2);
	lbs_net_memory(&n, 3, &m);
	CU_ASSERT(m.total > 141e9);
	lbs_net_destroy(&n);
	/* without recomputation the softmax's 2 a s^2 a block more; with full,
	 * each block's input and one block */
	n = tf_of("llama3-8b", &(lbs_net_opts){ .zero_stage = 1, .dp = 8 });
	lbs_net_memory(&n, 1, &m);
	CU_ASSERT_EQUAL(m.activations, 32 * (block + 2 * 32 * s * s) + rest);
	lbs_net_destroy(&n);
	n = tf_of("llama3-8b", &(lbs_net_opts){ .recompute = LBS_RECOMPUTE_FULL, .zero_stage = 1, .dp = 8 });
	lbs_net_memory(&n, 1, &m);
	CU_ASSERT_EQUAL(m.activations, 32 * 2 * s * h + (block + 2 * 32 * s * s) + rest);
	lbs_net_destroy(&n);
	/* ZeRO stages 2 and 3 partition the gradients, then the weights */
	n = tf_of("llama3-8b", &(lbs_net_opts){ .zero_stage = 3, .dp = 8 });
	lbs_net_memory(&n, 0, &m);
	CU_ASSERT_EQUAL(m.total, 16 * P / 8);
	lbs_net_destroy(&n);
	/* fp32 with Adam: 4 + 4 + 8 */
	n = tf_of("llama-like-small", NULL);
	lbs_net_memory(&n, 0, &m);
	CU_ASSERT_EQUAL(m.total, 16.0 * 19532032);
	lbs_net_destroy(&n);
}

/* The datasheet cost model: the published figures' networks are what ran
 * (MPT's NumParams), an iteration's time grows with its work, and the fit
 * recovers known parameters from figures made with them. */
/* A CPU as a datasheet device: the peak from /proc/cpuinfo's clock and
 * vector flags (by hand: 2 GHz x 32 = 64 GFLOP/s a core), and the GEMM-only
 * time `calibrate --blas` is compared with: at eff_max 1, no fill, no
 * overhead and unlimited bandwidth, the GEMMs' FLOPs over the peak, which
 * for a transformer without recomputation is (6 N + 12 L s d_attn) per
 * token (N the weights of its GEMMs; test_transformer_flops). */
static void test_cpu_model(void)
{
	lbs_cpu_info c;
	const char *zen2 = "processor\t: 0\nmodel name\t: Test CPU 9000\ncpu MHz\t\t: 2000.000\n"
			   "flags\t\t: fpu sse sse2 avx fma avx2 bmi2\n\nprocessor\t: 1\ncpu MHz\t\t: 3000.0\n";
	CU_ASSERT_EQUAL_FATAL(lbs_cpu_info_parse(zen2, &c), 0);
	CU_ASSERT_STRING_EQUAL(c.model, "Test CPU 9000");
	CU_ASSERT_DOUBLE_EQUAL(c.hz, 2e9, 1e-3);
	CU_ASSERT_EQUAL(c.flops_per_cycle, 32);
	char title[128];
	lbs_gpu_spec d = lbs_cpu_spec(&c, 2, 20e9, title, sizeof title);
	CU_ASSERT_DOUBLE_EQUAL(d.fp32_flops, 2 * 2e9 * 32, 1);
	CU_ASSERT_DOUBLE_EQUAL(d.tensor_flops, d.fp32_flops, 1);
	CU_ASSERT_DOUBLE_EQUAL(d.bandwidth, 20e9, 1);
	CU_ASSERT_EQUAL(lbs_cpu_info_parse("cpu MHz : 1000\nflags : sse avx512f avx2 fma\n", &c), 0);
	CU_ASSERT_EQUAL(c.flops_per_cycle, 64);
	CU_ASSERT_EQUAL(lbs_cpu_info_parse("cpu MHz : 1000\nflags : sse avx\n", &c), 0);
	CU_ASSERT_EQUAL(c.flops_per_cycle, 16);
	/* whole flags only: avx512bw is neither avx nor avx512f */
	CU_ASSERT_EQUAL(lbs_cpu_info_parse("cpu MHz : 1000\nflags : sse avx512bw fma4\n", &c), 0);
	CU_ASSERT_EQUAL(c.flops_per_cycle, 8);
	CU_ASSERT_EQUAL(lbs_cpu_info_parse("model name : no clock\nflags : avx2\n", &c), -1);
	CU_ASSERT_EQUAL(lbs_cpu_info_parse("cpu MHz : nan\n", &c), -1);

	/* the BLAS's kernels: OpenBLAS's names in any case, unknown ones 0 */
	CU_ASSERT_EQUAL(lbs_blas_core_flops_per_cycle("Prescott"), 8);
	CU_ASSERT_EQUAL(lbs_blas_core_flops_per_cycle("HASWELL"), 32);
	CU_ASSERT_EQUAL(lbs_blas_core_flops_per_cycle("Zen"), 32);
	CU_ASSERT_EQUAL(lbs_blas_core_flops_per_cycle("SkylakeX"), 64);
	CU_ASSERT_EQUAL(lbs_blas_core_flops_per_cycle("Sandybridge"), 16);
	CU_ASSERT_EQUAL(lbs_blas_core_flops_per_cycle("NeoverseN1"), 0);
	CU_ASSERT_EQUAL(lbs_blas_core_flops_per_cycle(NULL), 0);
	/* an AVX-512 CPU (reported 2 GHz) whose 8-lane FMAs run at 89.6
	 * GFLOP/s (2.8 GHz x 32) and 16-lane ones at 160: Prescott's kernels
	 * reach 2.8 GHz x 8, Haswell's the 8-lane rate, SkylakeX's or unknown
	 * ones the 16-lane rate; nothing measured, the reported clock x width */
	lbs_cpu_info x = { .hz = 2e9, .flops_per_cycle = 64 };
	double hz = 0;
	CU_ASSERT_DOUBLE_EQUAL(lbs_cpu_blas_peak(&x, 8, 89.6e9, 160e9, &hz), 22.4e9, 1);
	CU_ASSERT_DOUBLE_EQUAL(hz, 2.8e9, 1);
	CU_ASSERT_DOUBLE_EQUAL(lbs_cpu_blas_peak(&x, 32, 89.6e9, 160e9, NULL), 89.6e9, 1);
	CU_ASSERT_DOUBLE_EQUAL(lbs_cpu_blas_peak(&x, 64, 89.6e9, 160e9, NULL), 160e9, 1);
	CU_ASSERT_DOUBLE_EQUAL(lbs_cpu_blas_peak(&x, 0, 89.6e9, 160e9, NULL), 160e9, 1);
	CU_ASSERT_DOUBLE_EQUAL(lbs_cpu_blas_peak(&x, 16, 0, 0, &hz), 32e9, 1);
	CU_ASSERT_DOUBLE_EQUAL(hz, 2e9, 1);
	/* kernels wider than the CPU (a forced OPENBLAS_CORETYPE) are the CPU's */
	lbs_cpu_info y = { .hz = 2e9, .flops_per_cycle = 32 };
	CU_ASSERT_DOUBLE_EQUAL(lbs_cpu_blas_peak(&y, 64, 96e9, 0, NULL), 96e9, 1);

	lbs_gpu_eff ideal = { 1, 0, 1, 0 };
	lbs_gpu_spec fast = { .name = "x", .title = "x", .tensor_flops = 1e11, .fp32_flops = 1e11,
			      .bandwidth = 1e30, .memory = 1e12, .source = "test" };
	lbs_net n = tf_of("llama-like-small", NULL);
	const lbs_tf_config *k = n.tf;
	double L = k->layers, h = k->hidden, da = (double)k->heads * k->head_dim,
	       dk = (double)k->kv_heads * k->head_dim, f = k->ffn, V = (double)k->vocab, s = (double)n.opts.seq_len;
	double weights = k->swiglu ? L * (h * (da + 2 * dk) + da * h + 3 * h * f) + V * h
				   : L * (4 * h * da + 2 * h * f) + V * h;
	for (int64_t b = 1; b <= 4; b *= 2) {
		double expect = (6 * weights + 12 * L * s * da) * s * (double)b / 1e11;
		CU_ASSERT_DOUBLE_EQUAL(lbs_gpu_gemm_calls_time(&fast, &ideal, &n, b), expect, 1e-9 * expect);
	}
	/* the per-call overhead: one per product, so more than the batched
	 * GPU model's one per batch of them (attention's heads) */
	lbs_gpu_eff over = { 1, 0, 1, 1e-3 };
	CU_ASSERT(lbs_gpu_gemm_calls_time(&fast, &over, &n, 2) - lbs_gpu_gemm_calls_time(&fast, &ideal, &n, 2) >
		  1e-3 * (double)(2 * 3 * 4 * n.tf->layers));
	lbs_net_destroy(&n);
}

static void test_gpu_model(void)
{
	size_t n;
	const lbs_gpu_figure *f = lbs_gpu_figures(&n);
	CU_ASSERT_FATAL(n > 50);
	lbs_error err = { 0 };
	/* llm-foundry's NumParams column: 125m at 2048 tokens, 7b at 2048 */
	lbs_gpu_figure probe = f[0];
	probe.model = "125m";
	probe.seq = 2048;
	lbs_net net;
	CU_ASSERT_EQUAL_FATAL(lbs_gpu_figure_net(&probe, &net, &err), LBS_OK);
	CU_ASSERT_EQUAL(net.params, 125311488);
	lbs_net_destroy(&net);
	probe.model = "7b";
	CU_ASSERT_EQUAL_FATAL(lbs_gpu_figure_net(&probe, &net, &err), LBS_OK);
	CU_ASSERT_EQUAL(net.params, 6658859008);
	lbs_net_destroy(&net);
	for (size_t i = 0; i < n; i++)
		CU_ASSERT_PTR_NOT_NULL(lbs_gpu_find(f[i].device));
	CU_ASSERT_PTR_NOT_NULL(lbs_gpu_find("l4"));
	CU_ASSERT_PTR_NULL(lbs_gpu_find("b200"));

	/* more work, more time; a faster device, less */
	lbs_gpu_eff e = { 0.7, 50e-6, 0.8, 10e-6 };
	lbs_net l8 = tf_of("llama3-8b", &(lbs_net_opts){ .seq_len = 2048 });
	double h100 = lbs_gpu_iteration_time(lbs_gpu_find("h100-sxm"), &e, &l8, 2, true);
	double a100 = lbs_gpu_iteration_time(lbs_gpu_find("a100-80gb"), &e, &l8, 2, true);
	double l4 = lbs_gpu_iteration_time(lbs_gpu_find("l4"), &e, &l8, 2, true);
	CU_ASSERT(h100 < a100 && a100 < l4);
	CU_ASSERT(lbs_gpu_iteration_time(lbs_gpu_find("h100-sxm"), &e, &l8, 4, true) > h100);
	/* a large model's time is near its FLOPs at eff_max of peak */
	double ideal = lbs_net_flops(&l8, 2) / (0.7 * 989.5e12);
	CU_ASSERT(h100 > ideal && h100 < 1.5 * ideal);
	lbs_net_destroy(&l8);

	/* synthetic figures from known parameters: the fit finds them again */
	lbs_gpu_eff truth = { 0.65, 80e-6, 0.75, 20e-6 }, got;
	size_t m = 24;
	double obs[24], rms;
	for (size_t i = 0; i < m; i++) {
		CU_ASSERT_EQUAL_FATAL(lbs_gpu_figure_net(&f[i], &net, &err), LBS_OK);
		obs[i] = lbs_gpu_figure_predict(&f[i], &net, &truth);
		lbs_net_destroy(&net);
	}
	lbs_gpu_figure sub[24];
	for (size_t i = 0; i < m; i++) {
		sub[i] = f[i];
		sub[i].fitted = true;
	}
	CU_ASSERT_EQUAL_FATAL(lbs_gpu_fit(sub, obs, m, &got, &rms, &err), LBS_OK);
	CU_ASSERT(rms < 1e-3);
	CU_ASSERT(fabs(got.eff_max / truth.eff_max - 1) < 0.02);
	CU_ASSERT(fabs(got.f_half / truth.f_half - 1) < 0.05);
	CU_ASSERT(fabs(got.mem / truth.mem - 1) < 0.05);
	CU_ASSERT(fabs(got.overhead / truth.overhead - 1) < 0.05);
}

void suite_nets(void)
{
	static const test_case tests[] = {
		{ "published parameter counts", test_published_params },
		{ "shapes through the architectures", test_shapes },
		{ "GEMM shapes", test_gemms },
		{ "memory cap", test_memory_cap },
		{ "transformers: exact parameter counts", test_transformer_params },
		{ "transformers: FLOPs per token, 6N + attention", test_transformer_flops },
		{ "transformers: tensor-parallel splits add up", test_tensor_parallel },
		{ "transformers: a mixture of experts, active FLOPs and expert shards by hand", test_moe },
		{ "transformers: memory against Korthikanti and by hand", test_transformer_memory },
		{ "GPUs from datasheets: the model and its fit", test_gpu_model },
		{ "a CPU as a datasheet device: its peak, the GEMMs' time", test_cpu_model },
	};
	add_suite("nets", tests, sizeof tests / sizeof tests[0]);
}
