/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The CIFAR-10 networks of the LB-BSP experiments: CifarNet and ResNet-32. */
#include "models/nets/nets_impl.h"

/* CifarNet as TF-slim defines it (tensorflow/models, research/slim/nets/
 * cifarnet.py; the network of Krizhevsky's cuda-convnet CIFAR-10 example):
 * 32x32x3 input, conv 5x5x64, max pool 2x2/2, LRN, conv 5x5x64, LRN, max
 * pool 2x2/2, fully connected 384, 192 and 10; convolutions and fully
 * connected layers have biases; ReLU in place. */
void lbs_build_cifarnet(lbs_net_builder *b)
{
	lbs_nb_conv(b, "conv1", 64, 5, 5, 1, 2, 2, true);
	lbs_nb_pool(b, "pool1", 2, 2, 0);
	lbs_nb_act(b, "norm1", b->at, true);
	lbs_nb_conv(b, "conv2", 64, 5, 5, 1, 2, 2, true);
	lbs_nb_act(b, "norm2", b->at, true);
	lbs_nb_pool(b, "pool2", 2, 2, 0);
	lbs_nb_fc(b, "fc3", 384, true);
	lbs_nb_fc(b, "fc4", 192, true);
	lbs_nb_fc(b, "logits", 10, true);
}

/* ResNet-32 for CIFAR-10 (He et al., "Deep Residual Learning for Image
 * Recognition", CVPR 2016, section 4.2): conv 3x3x16, then three stages of
 * n = 5 basic blocks (two 3x3 conv-BN pairs) with 16, 32 and 64 filters on
 * 32x32, 16x16 and 8x8 maps, identity shortcuts (option A: the stride-2
 * shortcuts subsample and pad channels with zeros, no parameters), global
 * average pooling and a 10-way fully connected layer. 6n + 2 = 32 layers,
 * 0.46M parameters (the paper's Table 6). */
void lbs_build_resnet32(lbs_net_builder *b)
{
	char name[48];
	lbs_nb_conv_bn(b, "conv1", 16, 3, 3, 1, 1, 1);
	static const int width[3] = { 16, 32, 64 };
	for (int s = 0; s < 3; s++)
		for (int i = 0; i < 5; i++) {
			int stride = (s > 0 && i == 0) ? 2 : 1;
			lbs_nb_conv_bn(b, lbs_fmt(name, sizeof name, "stage%d.%d.conv1", s + 1, i), width[s], 3,
				       3, stride, 1, 1);
			lbs_nb_conv_bn(b, lbs_fmt(name, sizeof name, "stage%d.%d.conv2", s + 1, i), width[s], 3,
				       3, 1, 1, 1);
			lbs_nb_act(b, lbs_fmt(name, sizeof name, "stage%d.%d.add", s + 1, i), b->at, false);
		}
	lbs_nb_global_pool(b, "avgpool");
	lbs_nb_fc(b, "fc", 10, true);
}
