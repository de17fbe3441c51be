/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The network builders, for the registry (models/nets/registry.c). */
#ifndef LBS_NETS_IMPL_H
#define LBS_NETS_IMPL_H

#include "models/nets.h"

void lbs_build_cifarnet(lbs_net_builder *b);
void lbs_build_resnet32(lbs_net_builder *b);
void lbs_build_resnet50(lbs_net_builder *b);
void lbs_build_resnet101(lbs_net_builder *b);
void lbs_build_inception3(lbs_net_builder *b);
void lbs_build_densenet121(lbs_net_builder *b);
void lbs_build_linear_url(lbs_net_builder *b);
void lbs_build_teacher_student(lbs_net_builder *b);

/* Transformers (models/nets/transformer.c): built from a configuration,
 * with b->net->opts resolved (the sequence length, the tensor-parallel
 * degree) and b->net->elt_bytes set. */
void lbs_build_transformer(lbs_net_builder *b, const lbs_tf_config *c);
/* LBS_EINPUT if the options do not fit the configuration. */
lbs_status lbs_tf_check(const lbs_tf_config *c, const char *name, const lbs_net_opts *o, lbs_error *err);
extern const lbs_tf_config lbs_tf_gpt3_125m, lbs_tf_gpt3_350m, lbs_tf_gpt3_760m, lbs_tf_gpt3_1_3b,
	lbs_tf_gpt3_2_7b, lbs_tf_gpt3_6_7b, lbs_tf_gpt3_13b, lbs_tf_gpt3_175b, lbs_tf_llama2_7b,
	lbs_tf_llama2_13b, lbs_tf_llama2_70b, lbs_tf_llama3_8b, lbs_tf_llama3_70b, lbs_tf_llama3_405b, lbs_tf_llama31_8b, lbs_tf_llama31_70b, lbs_tf_llama31_405b,
	lbs_tf_llama_like_small, lbs_tf_mixtral_8x7b, lbs_tf_mixtral_8x22b,
	lbs_tf_megatron_1_7b, lbs_tf_megatron_3_6b, lbs_tf_megatron_7_5b, lbs_tf_megatron_18b, lbs_tf_megatron_39b,
	lbs_tf_megatron_76b, lbs_tf_megatron_145b, lbs_tf_megatron_310b, lbs_tf_megatron_530b, lbs_tf_megatron_1t;

#endif
