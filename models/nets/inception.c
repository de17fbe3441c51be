/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Inception-V3 on ImageNet (Szegedy et al., "Rethinking the Inception
 * Architecture for Computer Vision", CVPR 2016, Table 1 and figures 5-7), as
 * torchvision builds it for training (torchvision/models/inception.py, with
 * the auxiliary classifier: 27,161,264 parameters). 299x299x3 input; every
 * convolution is a "BasicConv2d": conv without bias, batch norm, ReLU. Each
 * module's branches read the module input; their outputs are concatenated. */
#include "models/nets/nets_impl.h"

static void cbn(lbs_net_builder *b, const char *m, const char *n, int out, int kh, int kw, int stride,
		int ph, int pw)
{
	char name[48];
	lbs_nb_conv_bn(b, lbs_fmt(name, sizeof name, "%s.%s", m, n), out, kh, kw, stride, ph, pw);
}

/* Concatenates branch outputs of `c` channels in total at h x w. */
static void concat(lbs_net_builder *b, const char *m, int c, int h, int w)
{
	char name[48];
	lbs_nb_act(b, lbs_fmt(name, sizeof name, "%s.cat", m), (lbs_shape){ c, h, w }, true);
}

static void avgpool_branch(lbs_net_builder *b, const char *m)
{
	char name[48];
	lbs_nb_pool(b, lbs_fmt(name, sizeof name, "%s.branch_pool.avg", m), 3, 1, 1);
}

static void inception_a(lbs_net_builder *b, const char *m, int pool_features)
{
	lbs_shape in = b->at;
	cbn(b, m, "branch1x1", 64, 1, 1, 1, 0, 0);
	b->at = in;
	cbn(b, m, "branch5x5_1", 48, 1, 1, 1, 0, 0);
	cbn(b, m, "branch5x5_2", 64, 5, 5, 1, 2, 2);
	b->at = in;
	cbn(b, m, "branch3x3dbl_1", 64, 1, 1, 1, 0, 0);
	cbn(b, m, "branch3x3dbl_2", 96, 3, 3, 1, 1, 1);
	cbn(b, m, "branch3x3dbl_3", 96, 3, 3, 1, 1, 1);
	b->at = in;
	avgpool_branch(b, m);
	cbn(b, m, "branch_pool", pool_features, 1, 1, 1, 0, 0);
	concat(b, m, 64 + 64 + 96 + pool_features, in.h, in.w);
}

static void inception_b(lbs_net_builder *b, const char *m)
{
	char name[48];
	lbs_shape in = b->at;
	cbn(b, m, "branch3x3", 384, 3, 3, 2, 0, 0);
	lbs_shape out = b->at;
	b->at = in;
	cbn(b, m, "branch3x3dbl_1", 64, 1, 1, 1, 0, 0);
	cbn(b, m, "branch3x3dbl_2", 96, 3, 3, 1, 1, 1);
	cbn(b, m, "branch3x3dbl_3", 96, 3, 3, 2, 0, 0);
	b->at = in;
	lbs_nb_pool(b, lbs_fmt(name, sizeof name, "%s.branch_pool.max", m), 3, 2, 0);
	concat(b, m, 384 + 96 + in.c, out.h, out.w);
}

static void inception_c(lbs_net_builder *b, const char *m, int c7)
{
	lbs_shape in = b->at;
	cbn(b, m, "branch1x1", 192, 1, 1, 1, 0, 0);
	b->at = in;
	cbn(b, m, "branch7x7_1", c7, 1, 1, 1, 0, 0);
	cbn(b, m, "branch7x7_2", c7, 1, 7, 1, 0, 3);
	cbn(b, m, "branch7x7_3", 192, 7, 1, 1, 3, 0);
	b->at = in;
	cbn(b, m, "branch7x7dbl_1", c7, 1, 1, 1, 0, 0);
	cbn(b, m, "branch7x7dbl_2", c7, 7, 1, 1, 3, 0);
	cbn(b, m, "branch7x7dbl_3", c7, 1, 7, 1, 0, 3);
	cbn(b, m, "branch7x7dbl_4", c7, 7, 1, 1, 3, 0);
	cbn(b, m, "branch7x7dbl_5", 192, 1, 7, 1, 0, 3);
	b->at = in;
	avgpool_branch(b, m);
	cbn(b, m, "branch_pool", 192, 1, 1, 1, 0, 0);
	concat(b, m, 4 * 192, in.h, in.w);
}

static void inception_d(lbs_net_builder *b, const char *m)
{
	char name[48];
	lbs_shape in = b->at;
	cbn(b, m, "branch3x3_1", 192, 1, 1, 1, 0, 0);
	cbn(b, m, "branch3x3_2", 320, 3, 3, 2, 0, 0);
	lbs_shape out = b->at;
	b->at = in;
	cbn(b, m, "branch7x7x3_1", 192, 1, 1, 1, 0, 0);
	cbn(b, m, "branch7x7x3_2", 192, 1, 7, 1, 0, 3);
	cbn(b, m, "branch7x7x3_3", 192, 7, 1, 1, 3, 0);
	cbn(b, m, "branch7x7x3_4", 192, 3, 3, 2, 0, 0);
	b->at = in;
	lbs_nb_pool(b, lbs_fmt(name, sizeof name, "%s.branch_pool.max", m), 3, 2, 0);
	concat(b, m, 320 + 192 + in.c, out.h, out.w);
}

static void inception_e(lbs_net_builder *b, const char *m)
{
	lbs_shape in = b->at;
	cbn(b, m, "branch1x1", 320, 1, 1, 1, 0, 0);
	b->at = in;
	cbn(b, m, "branch3x3_1", 384, 1, 1, 1, 0, 0);
	lbs_shape mid = b->at;
	cbn(b, m, "branch3x3_2a", 384, 1, 3, 1, 0, 1);
	b->at = mid;
	cbn(b, m, "branch3x3_2b", 384, 3, 1, 1, 1, 0);
	b->at = in;
	cbn(b, m, "branch3x3dbl_1", 448, 1, 1, 1, 0, 0);
	cbn(b, m, "branch3x3dbl_2", 384, 3, 3, 1, 1, 1);
	mid = b->at;
	cbn(b, m, "branch3x3dbl_3a", 384, 1, 3, 1, 0, 1);
	b->at = mid;
	cbn(b, m, "branch3x3dbl_3b", 384, 3, 1, 1, 1, 0);
	b->at = in;
	avgpool_branch(b, m);
	cbn(b, m, "branch_pool", 192, 1, 1, 1, 0, 0);
	concat(b, m, 320 + 768 + 768 + 192, in.h, in.w);
}

/* The auxiliary classifier on the 17x17x768 map (used in training). */
static void aux_logits(lbs_net_builder *b)
{
	lbs_nb_pool(b, "AuxLogits.avg", 5, 3, 0);
	cbn(b, "AuxLogits", "conv0", 128, 1, 1, 1, 0, 0);
	cbn(b, "AuxLogits", "conv1", 768, 5, 5, 1, 0, 0);
	lbs_nb_fc(b, "AuxLogits.fc", 1000, true);
}

void lbs_build_inception3(lbs_net_builder *b)
{
	lbs_nb_conv_bn(b, "Conv2d_1a_3x3", 32, 3, 3, 2, 0, 0);
	lbs_nb_conv_bn(b, "Conv2d_2a_3x3", 32, 3, 3, 1, 0, 0);
	lbs_nb_conv_bn(b, "Conv2d_2b_3x3", 64, 3, 3, 1, 1, 1);
	lbs_nb_pool(b, "maxpool1", 3, 2, 0);
	lbs_nb_conv_bn(b, "Conv2d_3b_1x1", 80, 1, 1, 1, 0, 0);
	lbs_nb_conv_bn(b, "Conv2d_4a_3x3", 192, 3, 3, 1, 0, 0);
	lbs_nb_pool(b, "maxpool2", 3, 2, 0);
	inception_a(b, "Mixed_5b", 32);
	inception_a(b, "Mixed_5c", 64);
	inception_a(b, "Mixed_5d", 64);
	inception_b(b, "Mixed_6a");
	inception_c(b, "Mixed_6b", 128);
	inception_c(b, "Mixed_6c", 160);
	inception_c(b, "Mixed_6d", 160);
	inception_c(b, "Mixed_6e", 192);
	lbs_shape at = b->at;
	aux_logits(b);
	b->at = at;
	inception_d(b, "Mixed_7a");
	inception_e(b, "Mixed_7b");
	inception_e(b, "Mixed_7c");
	lbs_nb_global_pool(b, "avgpool");
	lbs_nb_fc(b, "fc", 1000, true);
}
