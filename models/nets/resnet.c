/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ResNet-50 and ResNet-101 on ImageNet (He et al., "Deep Residual Learning
 * for Image Recognition", CVPR 2016, Table 1), as torchvision builds them
 * (torchvision/models/resnet.py, the "v1.5" variant with the stride on the
 * 3x3 convolution): convolutions without bias, each followed by batch
 * normalisation; projection shortcuts (1x1 conv + BN) where the shape
 * changes. torchvision lists 25,557,032 and 44,549,160 parameters. */
#include "models/nets/nets_impl.h"

static void bottleneck(lbs_net_builder *b, const char *prefix, int width, int stride, bool project)
{
	char name[48];
	lbs_shape in = b->at;
	lbs_nb_conv_bn(b, lbs_fmt(name, sizeof name, "%s.conv1", prefix), width, 1, 1, 1, 0, 0);
	lbs_nb_conv_bn(b, lbs_fmt(name, sizeof name, "%s.conv2", prefix), width, 3, 3, stride, 1, 1);
	lbs_nb_conv_bn(b, lbs_fmt(name, sizeof name, "%s.conv3", prefix), 4 * width, 1, 1, 1, 0, 0);
	lbs_shape out = b->at;
	if (project) {
		b->at = in;
		lbs_nb_conv_bn(b, lbs_fmt(name, sizeof name, "%s.downsample", prefix), 4 * width, 1, 1,
			       stride, 0, 0);
	}
	lbs_nb_act(b, lbs_fmt(name, sizeof name, "%s.add", prefix), out, false);
}

static void resnet(lbs_net_builder *b, const int blocks[4])
{
	char prefix[32];
	lbs_nb_conv_bn(b, "conv1", 64, 7, 7, 2, 3, 3);
	lbs_nb_pool(b, "maxpool", 3, 2, 1);
	for (int s = 0; s < 4; s++)
		for (int i = 0; i < blocks[s]; i++)
			bottleneck(b, lbs_fmt(prefix, sizeof prefix, "layer%d.%d", s + 1, i), 64 << s,
				   (s > 0 && i == 0) ? 2 : 1, i == 0);
	lbs_nb_global_pool(b, "avgpool");
	lbs_nb_fc(b, "fc", 1000, true);
}

void lbs_build_resnet50(lbs_net_builder *b)
{
	static const int blocks[4] = { 3, 4, 6, 3 };
	resnet(b, blocks);
}

void lbs_build_resnet101(lbs_net_builder *b)
{
	static const int blocks[4] = { 3, 4, 23, 3 };
	resnet(b, blocks);
}
