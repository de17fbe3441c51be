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
} net_entry;

static const net_entry nets[] = {
	{ "cifarnet", "CifarNet (CIFAR-10, 32x32)",
	  "TF-slim research/slim/nets/cifarnet.py (tensorflow/models); count by hand from its layers",
	  1756426, 3, 32, 32, lbs_build_cifarnet },
	{ "resnet32", "ResNet-32 (CIFAR-10, 32x32, option-A shortcuts)",
	  "He et al., Deep Residual Learning for Image Recognition, CVPR 2016, sec. 4.2 (0.46M)",
	  460000, 3, 32, 32, lbs_build_resnet32 },
	{ "inception3", "Inception-V3 (ImageNet, 299x299, with the auxiliary classifier)",
	  "Szegedy et al., Rethinking the Inception Architecture, CVPR 2016; torchvision inception_v3",
	  27161264, 3, 299, 299, lbs_build_inception3 },
	{ "resnet50", "ResNet-50 (ImageNet, 224x224)",
	  "He et al., Deep Residual Learning for Image Recognition, CVPR 2016; torchvision resnet50",
	  25557032, 3, 224, 224, lbs_build_resnet50 },
	{ "resnet101", "ResNet-101 (ImageNet, 224x224)",
	  "He et al., Deep Residual Learning for Image Recognition, CVPR 2016; torchvision resnet101",
	  44549160, 3, 224, 224, lbs_build_resnet101 },
	{ "densenet121", "DenseNet-121 (ImageNet, 224x224)",
	  "Huang et al., Densely Connected Convolutional Networks, CVPR 2017; torchvision densenet121",
	  7978856, 3, 224, 224, lbs_build_densenet121 },
	{ "linear-url", "logistic regression / linear SVM on the malicious-URL data (3,231,961 features)",
	  "Ma et al., Identifying Suspicious URLs, ICML 2009 (data set); 128 nonzeros per sample assumed",
	  3231962, 1, 1, 1, lbs_build_linear_url },
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

lbs_status lbs_net_create(lbs_net *net, const char *name, lbs_error *err)
{
	memset(net, 0, sizeof *net);
	const net_entry *e = NULL;
	for (size_t i = 0; i < N_NETS; i++)
		if (!strcmp(nets[i].name, name))
			e = &nets[i];
	if (!e) {
		char names[256];
		lbs_net_names(names, sizeof names);
		return lbs_error_set(err, LBS_EINPUT, "unknown model '%s' (known: %s)", name, names);
	}
	net->name = e->name;
	net->title = e->title;
	net->source = e->source;
	net->published_params = e->published_params;
	net->in_c = e->in_c;
	net->in_h = e->in_h;
	net->in_w = e->in_w;
	net->act_per_sample = (int64_t)e->in_c * e->in_h * e->in_w;
	lbs_net_builder b = { .net = net, .at = { e->in_c, e->in_h, e->in_w }, .first = true, .err = err };
	e->build(&b);
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
