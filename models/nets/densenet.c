/* SPDX-License-Identifier: GPL-3.0-or-later */
/* DenseNet-121 on ImageNet (Huang et al., "Densely Connected Convolutional
 * Networks", CVPR 2017, Table 1: DenseNet-BC, growth rate k = 32, blocks of
 * 6, 12, 24 and 16 layers, compression 0.5), as torchvision builds it
 * (torchvision/models/densenet.py, 7,978,856 parameters). A dense layer is
 * BN-ReLU-conv 1x1 (4k filters)-BN-ReLU-conv 3x3 (k filters) over the
 * concatenation of every earlier output of its block; torchvision
 * materialises that concatenation (memory_efficient = False), so it is kept. */
#include "models/nets/nets_impl.h"

enum { GROWTH = 32, BN_SIZE = 4 };

void lbs_build_densenet121(lbs_net_builder *b)
{
	static const int layers[4] = { 6, 12, 24, 16 };
	char name[48];
	lbs_nb_conv_bn(b, "conv0", 64, 7, 7, 2, 3, 3);
	lbs_nb_pool(b, "pool0", 3, 2, 1);
	for (int s = 0; s < 4; s++) {
		for (int i = 0; i < layers[s]; i++) {
			lbs_shape in = b->at;
			lbs_nb_act(b, lbs_fmt(name, sizeof name, "block%d.%d.cat", s + 1, i), in, true);
			lbs_nb_norm(b, lbs_fmt(name, sizeof name, "block%d.%d.norm1", s + 1, i));
			lbs_nb_conv(b, lbs_fmt(name, sizeof name, "block%d.%d.conv1", s + 1, i),
				    BN_SIZE * GROWTH, 1, 1, 1, 0, 0, false);
			lbs_nb_norm(b, lbs_fmt(name, sizeof name, "block%d.%d.norm2", s + 1, i));
			lbs_nb_conv(b, lbs_fmt(name, sizeof name, "block%d.%d.conv2", s + 1, i), GROWTH, 3,
				    3, 1, 1, 1, false);
			b->at = (lbs_shape){ in.c + GROWTH, in.h, in.w };
		}
		if (s < 3) {
			lbs_nb_act(b, lbs_fmt(name, sizeof name, "transition%d.cat", s + 1), b->at, true);
			lbs_nb_norm(b, lbs_fmt(name, sizeof name, "transition%d.norm", s + 1));
			lbs_nb_conv(b, lbs_fmt(name, sizeof name, "transition%d.conv", s + 1), b->at.c / 2,
				    1, 1, 1, 0, 0, false);
			lbs_nb_pool(b, lbs_fmt(name, sizeof name, "transition%d.pool", s + 1), 2, 2, 0);
		}
	}
	lbs_nb_act(b, "norm5.cat", b->at, true);
	lbs_nb_norm(b, "norm5");
	lbs_nb_global_pool(b, "avgpool");
	lbs_nb_fc(b, "classifier", 1000, true);
}
