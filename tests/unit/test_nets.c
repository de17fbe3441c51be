/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Model descriptions: parameter counts against the published ones, shapes
 * at known points of each architecture, GEMM shapes and memory caps. */
#include <math.h>
#include <string.h>

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

void suite_nets(void)
{
	static const test_case tests[] = {
		{ "published parameter counts", test_published_params },
		{ "shapes through the architectures", test_shapes },
		{ "GEMM shapes", test_gemms },
		{ "memory cap", test_memory_cap },
	};
	add_suite("nets", tests, sizeof tests / sizeof tests[0]);
}
