/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "sim/calibrate_cmd.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_version.h>

#include "config.h"
#include "models/calib.h"

#include "models/nets.h"
#include "models/profile.h"
#include "sim/units.h"

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: lbsim calibrate --from-table [--data DIR] [-o DIR]\n"
		"       lbsim calibrate --list\n"
		"       lbsim calibrate --layers MODEL [--batch N]\n"
		"       lbsim calibrate --keys\n"
		"\n"
		"Fits cost profiles to measurements (doc/profiles.md) and describes the networks\n"
		"whose training lbsim calibrates (doc/nets.md).\n"
		"\n"
		"Options:\n"
		"      --from-table        fit a GPU profile to every (device, model) of the published\n"
		"                          tables (Gavel: K80, P100, V100; Pollux: T4), write them and\n"
		"                          print their fits and held-out errors\n"
		"      --data DIR          where the tables are (default: traces/data)\n"
		"  -o, --output PATH       --from-table: the directory of the profiles (default: profiles)\n"
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

/* Writes profile p to path through a temporary file, so a failure leaves
 * any old file as it was. */
static lbs_status write_profile(const lbs_profile *p, const char *path, lbs_error *err)
{
	char tmp[1100];
	lbs_fmt(tmp, sizeof tmp, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return lbs_error_set(err, LBS_EIO, "%s: cannot write: %s", tmp, strerror(errno));
	lbs_status st = lbs_profile_write(p, f, err);
	if (fclose(f) != 0 && st == LBS_OK)
		st = lbs_error_set(err, LBS_EIO, "%s: cannot write: %s", tmp, strerror(errno));
	if (st == LBS_OK && rename(tmp, path) != 0)
		st = lbs_error_set(err, LBS_EIO, "%s: cannot write: %s", path, strerror(errno));
	if (st != LBS_OK)
		unlink(tmp);
	return st;
}

static void software(char *buf, size_t len)
{
	lbs_fmt(buf, len, "lbsim %s, GSL %s", PACKAGE_VERSION, gsl_version);
}

static void print_fit(const char *label, const lbs_profile *p)
{
	char a[32], b[32];
	if (p->cost.ops == &lbs_cost_piecewise) {
		lbs_format_quantity(p->cost.t_flat_s, LBS_DIM_TIME, a, sizeof a);
		lbs_format_quantity(p->cost.per_sample_s, LBS_DIM_TIME, b, sizeof b);
		printf("%-28s flat %-11s to %5lld, then %-11s/sample", label, a,
		       (long long)p->cost.saturation_batch, b);
	} else {
		lbs_format_quantity(p->cost.t0_s, LBS_DIM_TIME, a, sizeof a);
		lbs_format_quantity(p->cost.per_sample_s, LBS_DIM_TIME, b, sizeof b);
		printf("%-28s t0 %-11s + %-11s/sample", label, a, b);
	}
	printf("  R^2 %.4f  MAPE %5.2f%%", p->r2, 100 * p->mape);
	if (p->heldout_points > 0)
		printf("  held-out %5.2f%% (%lld)", 100 * p->heldout_mape, (long long)p->heldout_points);
	printf("\n");
}

/* The held-out MAPE of every profile as a model x device table, with each
 * device's mean. */
static void print_heldout(const lbs_table_profile *tp, size_t n)
{
	const char *dev[16], *mod[64];
	size_t nd = 0, nm = 0;
	for (size_t i = 0; i < n; i++) {
		const char *d = tp[i].profile->device, *m = tp[i].profile->model;
		size_t j;
		for (j = 0; j < nd && strcmp(dev[j], d); j++)
			;
		if (j == nd && nd < 16)
			dev[nd++] = d;
		for (j = 0; j < nm && strcmp(mod[j], m); j++)
			;
		if (j == nm && nm < 64)
			mod[nm++] = m;
	}
	printf("\nheld-out MAPE (each interior batch predicted by a fit to the others):\n%-26s", "model");
	for (size_t j = 0; j < nd; j++)
		printf(" %22.22s", dev[j]);
	printf("\n");
	double sum[16] = { 0 };
	size_t cnt[16] = { 0 };
	for (size_t m = 0; m < nm; m++) {
		printf("%-26.26s", mod[m]);
		for (size_t d = 0; d < nd; d++) {
			const lbs_profile *p = NULL;
			for (size_t i = 0; i < n; i++)
				if (!strcmp(tp[i].profile->device, dev[d]) && !strcmp(tp[i].profile->model, mod[m]))
					p = tp[i].profile;
			if (p && p->heldout_points > 0) {
				printf(" %21.2f%%", 100 * p->heldout_mape);
				sum[d] += p->heldout_mape;
				cnt[d]++;
			} else {
				printf(" %22s", "-");
			}
		}
		printf("\n");
	}
	printf("%-26s", "mean");
	double all = 0;
	size_t nall = 0;
	for (size_t d = 0; d < nd; d++) {
		printf(" %21.2f%%", cnt[d] ? 100 * sum[d] / (double)cnt[d] : 0.0);
		all += sum[d];
		nall += cnt[d];
	}
	printf("\nmean over all %zu fits: %.2f%%\n", nall, nall ? 100 * all / (double)nall : 0.0);
}

static int from_table(const char *data_dir, const char *out_dir)
{
	lbs_error err = { 0 };
	lbs_table_profile *tp;
	size_t n;
	char sw[128], path[1024];
	software(sw, sizeof sw);
	lbs_status st = lbs_calib_from_tables(data_dir, sw, &tp, &n, &err);
	if (st != LBS_OK) {
		fprintf(stderr, "lbsim calibrate: %s\n", err.msg);
		return st;
	}
	for (size_t i = 0; i < n && st == LBS_OK; i++)
		st = write_profile(tp[i].profile, lbs_fmt(path, sizeof path, "%s/%s", out_dir, tp[i].file),
				   &err);
	if (st != LBS_OK) {
		fprintf(stderr, "lbsim calibrate: %s\n", err.msg);
		lbs_table_profiles_free(tp, n);
		return st;
	}
	for (size_t i = 0; i < n; i++)
		print_fit(tp[i].file, tp[i].profile);
	print_heldout(tp, n);
	printf("%zu profiles written to %s/\n", n, out_dir);
	lbs_table_profiles_free(tp, n);
	return 0;
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
	enum { OPT_LIST = 256, OPT_LAYERS, OPT_BATCH, OPT_KEYS, OPT_FROM_TABLE, OPT_DATA };
	static const struct option longopts[] = {
		{ "list", no_argument, NULL, OPT_LIST },
		{ "layers", required_argument, NULL, OPT_LAYERS },
		{ "batch", required_argument, NULL, OPT_BATCH },
		{ "keys", no_argument, NULL, OPT_KEYS },
		{ "from-table", no_argument, NULL, OPT_FROM_TABLE },
		{ "data", required_argument, NULL, OPT_DATA },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *layers = NULL, *data = "traces/data", *output = NULL;
	bool list = false, keys = false, tables = false;
	int64_t batch = 1;
	int c;
	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_LIST: list = true; break;
		case OPT_LAYERS: layers = optarg; break;
		case OPT_KEYS: keys = true; break;
		case OPT_FROM_TABLE: tables = true; break;
		case OPT_DATA: data = optarg; break;
		case 'o': output = optarg; break;
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
	if (list + keys + tables + (layers != NULL) != 1) {
		fprintf(stderr, "lbsim calibrate: give one of --from-table, --list, --layers MODEL or --keys\n");
		usage(stderr);
		return LBS_EUSAGE;
	}
	if (tables)
		return from_table(data, output ? output : "profiles");
	if (keys) {
		lbs_profile_document(stdout);
		return 0;
	}
	return list ? list_nets() : show_layers(layers, batch);
}
