/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "sim/calibrate_cmd.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/nets.h"
#include "models/profile.h"
#include "sim/units.h"

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: lbsim calibrate --list\n"
		"       lbsim calibrate --layers MODEL [--batch N]\n"
		"       lbsim calibrate --keys\n"
		"\n"
		"Describes the networks whose training lbsim calibrates (doc/nets.md).\n"
		"\n"
		"Options:\n"
		"      --list              the networks, their parameters and work per sample\n"
		"      --layers MODEL      the layer table of MODEL as CSV: shapes, parameters,\n"
		"                          activations and GEMM shapes\n"
		"      --batch N           the batch of the GEMM shapes in --layers (default 1)\n"
		"      --keys              the reference of every profile key (Markdown)\n"
		"  -h, --help              this help\n");
}

static bool parse_count(const char *opt, const char *text, int64_t min, int64_t max, int64_t *out)
{
	char why[256];
	if (!lbs_parse_int(text, out, why, sizeof why) || *out < min || *out > max) {
		fprintf(stderr, "lbsim calibrate: %s %s: expected an integer from %lld to %lld\n", opt, text,
			(long long)min, (long long)max);
		return false;
	}
	return true;
}

static int list_nets(void)
{
	printf("%-12s %12s %10s %12s  %s\n", "model", "parameters", "GFLOP/smp", "act_MB/smp", "title");
	for (size_t i = 0; lbs_net_name_at(i); i++) {
		lbs_net n;
		lbs_error err = { 0 };
		if (lbs_net_create(&n, lbs_net_name_at(i), &err) != LBS_OK) {
			fprintf(stderr, "lbsim calibrate: %s\n", err.msg);
			return err.status;
		}
		printf("%-12s %12lld %10.4g %12.4g  %s\n", n.name, (long long)n.params,
		       lbs_net_flops(&n, 1) / 1e9, 4e-6 * (double)n.act_per_sample, n.title);
		lbs_net_destroy(&n);
	}
	return 0;
}

static int show_layers(const char *model, int64_t batch)
{
	lbs_net n;
	lbs_error err = { 0 };
	if (lbs_net_create(&n, model, &err) != LBS_OK) {
		fprintf(stderr, "lbsim calibrate: --layers: %s\n", err.msg);
		return LBS_EUSAGE;
	}
	lbs_net_write_layers(&n, batch, stdout);
	lbs_net_destroy(&n);
	return 0;
}

int lbs_calibrate_command(int argc, char **argv)
{
	enum { OPT_LIST = 256, OPT_LAYERS, OPT_BATCH, OPT_KEYS };
	static const struct option longopts[] = {
		{ "list", no_argument, NULL, OPT_LIST },
		{ "layers", required_argument, NULL, OPT_LAYERS },
		{ "batch", required_argument, NULL, OPT_BATCH },
		{ "keys", no_argument, NULL, OPT_KEYS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *layers = NULL;
	bool list = false, keys = false;
	int64_t batch = 1;
	int c;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_LIST: list = true; break;
		case OPT_LAYERS: layers = optarg; break;
		case OPT_KEYS: keys = true; break;
		case OPT_BATCH:
			if (!parse_count("--batch", optarg, 1, 1000000000, &batch))
				return LBS_EUSAGE;
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return LBS_EUSAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "lbsim calibrate: unexpected argument '%s'\n", argv[optind]);
		return LBS_EUSAGE;
	}
	if (list + keys + (layers != NULL) != 1) {
		fprintf(stderr, "lbsim calibrate: give one of --list, --layers MODEL or --keys\n");
		usage(stderr);
		return LBS_EUSAGE;
	}
	if (keys) {
		lbs_profile_document(stdout);
		return 0;
	}
	return list ? list_nets() : show_layers(layers, batch);
}
