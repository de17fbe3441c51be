/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The registered networks: one line each. */
#include <stdlib.h>
#include <string.h>

#include "models/nets/nets_impl.h"

typedef struct net_entry {
	const char *name, *title, *source;
	int64_t published_params;
	int in_c, in_h, in_w;
	void (*build)(lbs_net_builder *b);
	const lbs_tf_config *tf; /* a transformer: its configuration (build is NULL) */
	int published_digits;    /* significant digits of the published count; 0: exact */
} net_entry;

#define GPT3_SRC "Brown et al., Language Models are Few-Shot Learners, NeurIPS 2020, Table 2.1"
#define SC21_SRC "Narayanan et al., Efficient Large-Scale Language Model Training on GPU Clusters Using " \
	"Megatron-LM, SC'21, Table 1"
#define TF(name, title, source, published, digits, cfg) \
	{ name, title, source, published, 1, 0, 1, NULL, &cfg, digits }

static const net_entry nets[] = {
	{ "cifarnet", "CifarNet (CIFAR-10, 32x32)",
	  "TF-slim research/slim/nets/cifarnet.py (tensorflow/models); count by hand from its layers",
	  1756426, 3, 32, 32, lbs_build_cifarnet, NULL, 0 },
	{ "resnet32", "ResNet-32 (CIFAR-10, 32x32, option-A shortcuts)",
	  "He et al., Deep Residual Learning for Image Recognition, CVPR 2016, sec. 4.2 (0.46M)",
	  460000, 3, 32, 32, lbs_build_resnet32, NULL, 0 },
	{ "inception3", "Inception-V3 (ImageNet, 299x299, with the auxiliary classifier)",
	  "Szegedy et al., Rethinking the Inception Architecture, CVPR 2016; torchvision inception_v3",
	  27161264, 3, 299, 299, lbs_build_inception3, NULL, 0 },
	{ "resnet50", "ResNet-50 (ImageNet, 224x224)",
	  "He et al., Deep Residual Learning for Image Recognition, CVPR 2016; torchvision resnet50",
	  25557032, 3, 224, 224, lbs_build_resnet50, NULL, 0 },
	{ "resnet101", "ResNet-101 (ImageNet, 224x224)",
	  "He et al., Deep Residual Learning for Image Recognition, CVPR 2016; torchvision resnet101",
	  44549160, 3, 224, 224, lbs_build_resnet101, NULL, 0 },
	{ "densenet121", "DenseNet-121 (ImageNet, 224x224)",
	  "Huang et al., Densely Connected Convolutional Networks, CVPR 2017; torchvision densenet121",
	  7978856, 3, 224, 224, lbs_build_densenet121, NULL, 0 },
	{ "linear-url", "logistic regression / linear SVM on the malicious-URL data (3,231,961 features)",
	  "Ma et al., Identifying Suspicious URLs, ICML 2009 (data set); 128 nonzeros per sample assumed",
	  3231962, 1, 1, 1, lbs_build_linear_url, NULL, 0 },
	{ "teacher-student", "student MLP 512-1024-8 (tanh) of the testbed's teacher-student task (ours)",
	  "lbsim's testbed/teacher_student.py at --dim 512 --hidden 1024 --outputs 8; count by hand",
	  533512, 512, 1, 1, lbs_build_teacher_student, NULL, 0 },
	TF("gpt3-125m", "GPT-3 Small (125M)", GPT3_SRC " (125M)", 125000000, 3, lbs_tf_gpt3_125m),
	TF("gpt3-350m", "GPT-3 Medium (350M)", GPT3_SRC " (350M)", 350000000, 2, lbs_tf_gpt3_350m),
	TF("gpt3-760m", "GPT-3 Large (760M)", GPT3_SRC " (760M)", 760000000, 2, lbs_tf_gpt3_760m),
	TF("gpt3-1.3b", "GPT-3 XL (1.3B)", GPT3_SRC " (1.3B)", 1300000000, 2, lbs_tf_gpt3_1_3b),
	TF("gpt3-2.7b", "GPT-3 2.7B", GPT3_SRC " (2.7B)", 2700000000, 2, lbs_tf_gpt3_2_7b),
	TF("gpt3-6.7b", "GPT-3 6.7B", GPT3_SRC " (6.7B)", 6700000000, 2, lbs_tf_gpt3_6_7b),
	TF("gpt3-13b", "GPT-3 13B", GPT3_SRC " (13B; d_model 5140 as printed)", 13000000000, 2, lbs_tf_gpt3_13b),
	TF("gpt3-175b", "GPT-3 175B", GPT3_SRC " (175B)", 175000000000, 3, lbs_tf_gpt3_175b),
	TF("llama2-7b", "Llama 2 7B", "Touvron et al., Llama 2, 2023; count: Hugging Face meta-llama/Llama-2-7b-hf",
	   6738415616, 0, lbs_tf_llama2_7b),
	TF("llama2-13b", "Llama 2 13B", "Touvron et al., Llama 2, 2023; count: Hugging Face meta-llama/Llama-2-13b-hf "
	   "less its 40 x 64 rotary buffers", 13015864320, 0, lbs_tf_llama2_13b),
	TF("llama2-70b", "Llama 2 70B (GQA, 8 KV heads)", "Touvron et al., Llama 2, 2023; count: Hugging Face "
	   "meta-llama/Llama-2-70b-hf less its 80 x 64 rotary buffers", 68976648192, 0, lbs_tf_llama2_70b),
	TF("llama3-8b", "Llama 3 8B (GQA, 8 KV heads)", "Llama Team, The Llama 3 Herd of Models, 2024, Table 3; "
	   "count: Hugging Face meta-llama/Meta-Llama-3-8B", 8030261248, 0, lbs_tf_llama3_8b),
	TF("llama3-70b", "Llama 3 70B (GQA, 8 KV heads)", "Llama Team, The Llama 3 Herd of Models, 2024, Table 3; "
	   "count: Hugging Face meta-llama/Meta-Llama-3-70B", 70553706496, 0, lbs_tf_llama3_70b),
	TF("llama3-405b", "Llama 3 405B (GQA, 8 KV heads)", "Llama Team, The Llama 3 Herd of Models, 2024, Table 3; "
	   "count: its architecture (126 x 16384, FFN 53248, 128,256 tokens, untied logits), the paper's 405B",
	   405853388800, 0, lbs_tf_llama3_405b),
	TF("llama3.1-8b", "Llama 3.1 8B (128K context)", "Llama Team, The Llama 3 Herd of Models, 2024, Table 3 and "
	   "sec. 3.4.2 (128K context); count: llama3-8b's", 8030261248, 0, lbs_tf_llama31_8b),
	TF("llama3.1-70b", "Llama 3.1 70B (128K context)", "Llama Team, The Llama 3 Herd of Models, 2024, Table 3 and "
	   "sec. 3.4.2 (128K context); count: llama3-70b's", 70553706496, 0, lbs_tf_llama31_70b),
	TF("llama3.1-405b", "Llama 3.1 405B (128K context)", "Llama Team, The Llama 3 Herd of Models, 2024, Table 3 and "
	   "sec. 3.4.2 (128K context); count: llama3-405b's", 405853388800, 0, lbs_tf_llama31_405b),
	TF("mixtral-8x7b", "Mixtral 8x7B (mixture of 8 experts, top-2; GQA, 8 KV heads)", "Jiang et al., Mixtral of "
	   "Experts, arXiv 2401.04088, 2024, Table 1; count: Hugging Face mistralai/Mixtral-8x7B-v0.1",
	   46702792704, 0, lbs_tf_mixtral_8x7b),
	TF("mixtral-8x22b", "Mixtral 8x22B (mixture of 8 experts, top-2; GQA, 8 KV heads)", "Mistral AI, Mixtral "
	   "8x22B, 2024 (the released config.json); count: Hugging Face mistralai/Mixtral-8x22B-v0.1",
	   140630071296, 0, lbs_tf_mixtral_8x22b),
	TF("megatron-1.7b", "Megatron-LM GPT 1.7B (SC'21)", SC21_SRC " (1.7B)", 1700000000, 2, lbs_tf_megatron_1_7b),
	TF("megatron-3.6b", "Megatron-LM GPT 3.6B (SC'21)", SC21_SRC " (3.6B)", 3600000000, 2, lbs_tf_megatron_3_6b),
	TF("megatron-7.5b", "Megatron-LM GPT 7.5B (SC'21)", SC21_SRC " (7.5B)", 7500000000, 2, lbs_tf_megatron_7_5b),
	TF("megatron-18b", "Megatron-LM GPT 18.4B (SC'21)", SC21_SRC " (18.4B)", 18400000000, 3, lbs_tf_megatron_18b),
	TF("megatron-39b", "Megatron-LM GPT 39.1B (SC'21)", SC21_SRC " (39.1B)", 39100000000, 3, lbs_tf_megatron_39b),
	TF("megatron-76b", "Megatron-LM GPT 76.1B (SC'21)", SC21_SRC " (76.1B)", 76100000000, 3, lbs_tf_megatron_76b),
	TF("megatron-145b", "Megatron-LM GPT 145.6B (SC'21)", SC21_SRC " (145.6B)", 145600000000, 4, lbs_tf_megatron_145b),
	TF("megatron-310b", "Megatron-LM GPT 310.1B (SC'21)", SC21_SRC " (310.1B)", 310100000000, 4, lbs_tf_megatron_310b),
	TF("megatron-530b", "Megatron-LM GPT 529.6B (SC'21)", SC21_SRC " (529.6B)", 529600000000, 4, lbs_tf_megatron_530b),
	TF("megatron-1t", "Megatron-LM GPT 1008.0B (SC'21)", SC21_SRC " (1008.0B)", 1008000000000, 5, lbs_tf_megatron_1t),
	TF("llama-like-small", "Llama-like, 4 layers of 256, for CPU timing (ours)",
	   "lbsim's: Llama 2's architecture and vocabulary, 4 x 256, 4 heads, 2 KV heads, FFN 768, 128 tokens, fp32",
	   19532032, 0, lbs_tf_llama_like_small),
};

#define N_NETS (sizeof nets / sizeof nets[0])

const char *lbs_net_name_at(size_t i)
{
	return i < N_NETS ? nets[i].name : NULL;
}

void lbs_net_names(char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < N_NETS && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", nets[i].name);
}

static const net_entry *find(const char *name)
{
	for (size_t i = 0; i < N_NETS; i++)
		if (!strcmp(nets[i].name, name))
			return &nets[i];
	return NULL;
}

bool lbs_net_is_transformer(const char *name)
{
	const net_entry *e = find(name);
	return e && e->tf;
}

const lbs_tf_config *lbs_net_tf_config(const char *name)
{
	const net_entry *e = find(name);
	return e ? e->tf : NULL;
}

lbs_status lbs_net_create(lbs_net *net, const char *name, lbs_error *err)
{
	return lbs_net_create_opts(net, name, NULL, err);
}

static lbs_status create(lbs_net *net, const net_entry *e, const lbs_net_opts *opts, lbs_error *err);

lbs_status lbs_net_create_config(lbs_net *net, const char *name, const lbs_tf_config *c, const lbs_net_opts *opts,
				 lbs_error *err)
{
	net_entry e = { name, name, "a configuration of the caller's", 0, 1, 0, 1, NULL, c, 0 };
	memset(net, 0, sizeof *net);
	return create(net, &e, opts, err);
}

lbs_status lbs_net_create_opts(lbs_net *net, const char *name, const lbs_net_opts *opts, lbs_error *err)
{
	memset(net, 0, sizeof *net);
	const net_entry *e = find(name);
	if (!e) {
		char names[1024];
		lbs_net_names(names, sizeof names);
		return lbs_error_set(err, LBS_EINPUT, "unknown model '%s' (known: %s)", name, names);
	}
	return create(net, e, opts, err);
}

static lbs_status create(lbs_net *net, const net_entry *e, const lbs_net_opts *opts, lbs_error *err)
{
	const char *name = e->name;
	net->name = e->name;
	net->title = e->title;
	net->source = e->source;
	net->published_params = e->published_params;
	net->published_digits = e->published_digits;
	lbs_net_opts o = opts ? *opts : (lbs_net_opts){ 0 };
	if (o.tp < 1)
		o.tp = 1;
	if (o.dp < 1)
		o.dp = 1;
	if (o.ep < 1)
		o.ep = 1;
	if (!o.precision)
		o.precision = (e->tf ? e->tf->precision : LBS_PREC_FP32) + 1;
	if (o.optimizer == LBS_OPT_DEFAULT)
		o.optimizer = e->tf ? LBS_OPT_ADAM : LBS_OPT_SGD;
	if (e->tf && !o.seq_len)
		o.seq_len = e->tf->seq_len;
	if (!e->tf && (o.tp > 1 || o.recompute || o.seq_len || o.precision != LBS_PREC_FP32 + 1))
		return lbs_error_set(err, LBS_EINPUT, "%s: a sequence length, tensor parallelism, recomputation "
				     "and precisions other than fp32 apply to the transformers only", name);
	if (o.zero_stage < 0 || o.zero_stage > 3)
		return lbs_error_set(err, LBS_EINPUT, "%s: ZeRO stage %d: expected 0 to 3", name, o.zero_stage);
	lbs_status st;
	if (e->tf && (st = lbs_tf_check(e->tf, name, &o, err)) != LBS_OK)
		return st;
	net->opts = o;
	net->elt_bytes = o.precision == LBS_PREC_FP32 + 1 ? 4 : 2;
	net->tf = e->tf;
	net->in_c = e->in_c;
	net->in_h = e->tf ? (int)o.seq_len : e->in_h;
	net->in_w = e->in_w;
	if (!e->tf) {
		net->act_per_sample = (int64_t)e->in_c * e->in_h * e->in_w;
		net->act_bytes = 4 * net->act_per_sample;
	}
	lbs_net_builder b = { .net = net, .at = { net->in_c, net->in_h, net->in_w }, .first = true, .err = err };
	if (e->tf) {
		b.first = false;
		lbs_build_transformer(&b, e->tf);
	} else {
		e->build(&b);
	}
	if (b.failed) {
		lbs_net_destroy(net);
		return LBS_EINTERNAL;
	}
	return LBS_OK;
}

void lbs_net_destroy(lbs_net *net)
{
	free(net->layers);
	net->layers = NULL;
	net->n_layers = net->cap = 0;
}
