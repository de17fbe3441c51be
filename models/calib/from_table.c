/* SPDX-License-Identifier: GPL-3.0-or-later */
/* GPU profiles from published measurements: Gavel's K80, P100 and V100
 * throughputs and Pollux's T4 step times (traces/data, doc/profiles.md). */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/calib.h"
#include "models/profile.h"

#define GAVEL_DATA "gavel-throughputs/isolated.csv"
#define POLLUX_DIR "pollux-throughput"

/* What the tables call a device, and what it is. */
static const struct {
	const char *id, *name;
} devices[] = {
	{ "k80", "NVIDIA K80" },
	{ "p100", "NVIDIA P100" },
	{ "v100", "NVIDIA V100" },
	{ "t4", "NVIDIA T4 (AWS g4dn)" },
};

/* Pollux's jobs, in the order they are fitted. */
static const char *const pollux_models[] = { "bert", "cifar10", "ncf", "yolov3" };

static const char *device_name(const char *id)
{
	for (size_t i = 0; i < sizeof devices / sizeof *devices; i++)
		if (!strcmp(devices[i].id, id))
			return devices[i].name;
	return id;
}

/* "ResNet-50" -> "resnet50" */
static void slug(const char *s, char *out, size_t len)
{
	size_t j = 0;
	for (; *s && j + 1 < len; s++)
		if (isalnum((unsigned char)*s))
			out[j++] = (char)tolower((unsigned char)*s);
	out[j] = '\0';
}

static void describe_gavel(lbs_profile *p, const lbs_curve *s)
{
	/* The datasets the Gavel README names; the other job types as named. */
	const char *data = !strcmp(s->model, "ResNet-18") ? " (CIFAR-10)"
			   : !strcmp(s->model, "ResNet-50") ? " (ImageNet)" : "";
	lbs_fmt(p->model, sizeof p->model, "%s%s", s->model, data);
	lbs_fmt(p->description, sizeof p->description,
		"Gavel job type %s, one GPU, batch sizes %g to %g", s->model, s->batch[0],
		s->batch[s->n - 1]);
	lbs_fmt(p->origin, sizeof p->origin,
		"Gavel (Narayanan et al., OSDI'20), stanford-futuredata/gavel c4fa400, "
		"scheduler/simulation_throughputs.json: steps/s, scale factor 1, time = 1 / steps_per_s");
	lbs_fmt(p->data, sizeof p->data, "traces/data/" GAVEL_DATA);
	lbs_fmt(p->licence, sizeof p->licence, "MIT, (c) 2020 Stanford Future Data Systems "
		"(traces/data/gavel-throughputs/LICENSE-MIT.txt)");
	lbs_fmt(p->host, sizeof p->host, "%s on the Gavel authors' cluster", device_name(s->device));
}

static void describe_pollux(lbs_profile *p, const lbs_curve *s)
{
	lbs_fmt(p->model, sizeof p->model, "Pollux job %s", s->model);
	lbs_fmt(p->description, sizeof p->description,
		"Pollux's %s job on one GPU (placement 1), local batch %g to %g", s->model, s->batch[0],
		s->batch[s->n - 1]);
	lbs_fmt(p->origin, sizeof p->origin,
		"Pollux (Qiao et al., OSDI'21), petuum/adaptdl osdi21-artifact c793c70, "
		"simulator/traces/%s/placements.csv: placement 1, step_time - sync_time", s->model);
	lbs_fmt(p->data, sizeof p->data, "traces/data/" POLLUX_DIR "/%s/placements.csv", s->model);
	lbs_fmt(p->licence, sizeof p->licence,
		"Apache-2.0 (traces/data/pollux-throughput/LICENSE-Apache-2.0.txt)");
	lbs_fmt(p->host, sizeof p->host, "AWS g4dn nodes with NVIDIA T4 GPUs (the artifact's benchmark/main.tf)");
}

static lbs_status fit_series(const lbs_curve *s, bool gavel, const char *software,
			     lbs_table_profile *tp, lbs_error *err)
{
	char model[64];
	slug(s->model, model, sizeof model);
	lbs_fmt(tp->file, sizeof tp->file, "%s-%s.ini", s->device, model);
	lbs_profile *p = tp->profile = calloc(1, sizeof *p);
	if (!p || !(p->point = calloc(s->n, sizeof *p->point)))
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	p->format = LBS_PROFILE_FORMAT;
	lbs_fmt(p->device, sizeof p->device, "%s", device_name(s->device));
	p->device_class = 1;
	p->source = LBS_SOURCE_TABLE;
	if (gavel)
		describe_gavel(p, s);
	else
		describe_pollux(p, s);
	lbs_fmt(p->software, sizeof p->software, "%s", software);
	lbs_fmt(p->command, sizeof p->command, "lbsim calibrate --from-table");
	for (size_t i = 0; i < s->n; i++)
		p->point[i] = (lbs_profile_point){ (int64_t)s->batch[i], s->time_s[i], NAN };
	p->n_points = s->n;
	/* The memory cap: the largest batch that ran. */
	p->cost.max_batch = (int64_t)s->batch[s->n - 1];
	lbs_status st = lbs_calib_fit_gpu(p, tp->score, &tp->n_score, err);
	if (st != LBS_OK) {
		lbs_error_prefix(err, "%s on %s", s->model, s->device);
		return st;
	}
	return LBS_OK;
}

lbs_status lbs_calib_from_tables(const char *data_dir, const char *software,
				 lbs_table_profile **out, size_t *n, lbs_error *err)
{
	*out = NULL;
	*n = 0;
	lbs_curve_set set = { 0 };
	char path[1024];
	lbs_fmt(path, sizeof path, "%s/" GAVEL_DATA, data_dir);
	lbs_status st = lbs_curves_read_gavel(path, &set, err);
	size_t n_gavel = set.n;
	for (size_t i = 0; st == LBS_OK && i < sizeof pollux_models / sizeof *pollux_models; i++) {
		lbs_fmt(path, sizeof path, "%s/" POLLUX_DIR "/%s/placements.csv", data_dir, pollux_models[i]);
		st = lbs_curves_read_pollux(path, "t4", pollux_models[i], &set, err);
	}
	lbs_table_profile *tp = NULL;
	if (st == LBS_OK && !(tp = calloc(set.n ? set.n : 1, sizeof *tp)))
		st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	for (size_t i = 0; st == LBS_OK && i < set.n; i++) {
		st = fit_series(&set.s[i], i < n_gavel, software, &tp[i], err);
		*n = i + 1;
	}
	lbs_curve_set_free(&set);
	if (st != LBS_OK) {
		lbs_table_profiles_free(tp, *n);
		*n = 0;
		return st;
	}
	*out = tp;
	return LBS_OK;
}

void lbs_table_profiles_free(lbs_table_profile *tp, size_t n)
{
	for (size_t i = 0; tp && i < n; i++)
		if (tp[i].profile) {
			lbs_profile_destroy(tp[i].profile);
			free(tp[i].profile);
		}
	free(tp);
}
