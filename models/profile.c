/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "models/profile.h"

#include "models/noise.h"
#include "util/ini.h"

#include <errno.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <ini.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* inih's line buffer is 200 bytes with the newline and terminator. */
#define LINE_MAX_CHARS 198
#define REQUIRED NULL
#define UNSET ""

/* ---- the schema ------------------------------------------------------- */

#define P(f) offsetof(lbs_profile, f)
static const lbs_key_spec profile_keys[] = {
	{ "format", LBS_T_INT, P(format), REQUIRED, LBS_PROFILE_FORMAT, LBS_PROFILE_FORMAT, 0, NULL, NULL,
	  "version of this file format (1)" },
	{ "device", LBS_T_STRING, P(device), REQUIRED, 0, 0, 0, NULL, NULL,
	  "the device measured, e.g. `NVIDIA Tesla V100`" },
	{ "device_class", LBS_T_ENUM, P(device_class), REQUIRED, 0, 0, 0, LBS_PROFILE_DEVICE_CHOICES, NULL,
	  "`cpu` or `gpu`; a scenario group using the profile must have this `device`" },
	{ "model", LBS_T_STRING, P(model), REQUIRED, 0, 0, 0, NULL, NULL,
	  "the model trained, e.g. `ResNet-50 (ImageNet)`" },
	{ "description", LBS_T_STRING, P(description), UNSET, 0, 0, 0, NULL, NULL, "one line of context" },
};

/* The cost keys: names, units and ranges as in a scenario's [workers.NAME]
 * (sim/scenario.c), so a profile's [cost] can stand in for them. */
static const lbs_key_spec cost_keys[] = {
	{ "cost", LBS_T_ENUM, P(cost.kind), REQUIRED, 0, 0, 0, LBS_COST_CHOICES, NULL,
	  "`linear`: t(b) = t0 + per_sample*b; `piecewise`: t_flat up to saturation_batch, then "
	  "+ per_sample per extra sample; `power`: t0 + per_sample*b^exponent; `quadratic`: "
	  "t0 + per_sample*b + per_sample_sq*b^2" },
	{ "t0", LBS_T_TIME, P(cost.t0_s), "0 s", 0, 3600, 0, NULL, "cost=linear|power|quadratic",
	  "fixed time of an iteration, whatever the batch" },
	{ "per_sample", LBS_T_TIME, P(cost.per_sample_s), REQUIRED, 0, 3600, 0, NULL, NULL,
	  "time per sample (linear, quadratic), or per sample beyond saturation (piecewise), or the "
	  "coefficient of b^exponent (power: t(1) - t0)" },
	{ "t_flat", LBS_T_TIME, P(cost.t_flat_s), REQUIRED, 0, 3600, LBS_K_MIN_OPEN, NULL, "cost=piecewise",
	  "time of any batch up to saturation_batch" },
	{ "saturation_batch", LBS_T_INT, P(cost.saturation_batch), REQUIRED, 1, 1e9, 0, NULL,
	  "cost=piecewise", "batch at which the device is saturated" },
	{ "exponent", LBS_T_REAL, P(cost.exponent), REQUIRED, 0, LBS_COST_EXPONENT_MAX, LBS_K_MIN_OPEN,
	  NULL, "cost=power", "power of the batch (dimensionless, > 0): above 1 the time grows faster "
	  "than the batch, below 1 slower" },
	{ "per_sample_sq", LBS_T_TIME, P(cost.per_sample_sq_s), REQUIRED, 0, 3600, 0, NULL,
	  "cost=quadratic", "coefficient of b^2 (seconds per sample squared)" },
	{ "flat_below", LBS_T_INT, P(cost.flat_below), "1", 1, 1e9, 0, NULL, "cost=power|quadratic",
	  "samples: a smaller batch takes the time of this one (fits: the smallest batch measured, "
	  "since the data cannot say how much faster a smaller batch would be); 1: no floor" },
	{ "max_batch", LBS_T_INT, P(cost.max_batch), UNSET, 1, 1e9, 0, NULL, NULL,
	  "memory cap: the largest batch that ran (tables) or fits (model estimate); unset: no cap" },
	{ "resize_cost", LBS_T_REAL, P(cost.resize_cost), "0", 0, 10, 0, NULL, NULL,
	  "fraction of compute time added when the batch differs from the one run before "
	  "(calibrate --resize: two batches alternating against the same run without a change); "
	  "0: none" },
	{ "new_batch_cost", LBS_T_REAL, P(cost.new_batch_cost), "0", 0, 10, 0, NULL, NULL,
	  "fraction of compute time added for a batch never run before (calibrate --resize: a "
	  "fresh batch's first run against its next run after another batch); 0: none" },
};

static const lbs_key_spec fit_keys[] = {
	{ "method", LBS_T_STRING, P(method), REQUIRED, 0, 0, 0, NULL, NULL, "how the cost model was fitted" },
	{ "points", LBS_T_INT, P(points), REQUIRED, 1, 1e6, 0, NULL, NULL,
	  "measured batches fitted; equals the entries of [measurements]" },
	{ "r2", LBS_T_REAL, P(r2), REQUIRED, -1e9, 1, 0, NULL, NULL,
	  "coefficient of determination of the fit on the times, 1 - SSE/SST" },
	{ "rmse", LBS_T_TIME, P(rmse_s), REQUIRED, 0, 3600, 0, NULL, NULL, "root mean squared error" },
	{ "mape", LBS_T_REAL, P(mape), REQUIRED, 0, 1e6, 0, NULL, NULL,
	  "mean absolute percentage error of the fit on the points it was fitted to (e.g. `2.5%`)" },
	{ "heldout_mape", LBS_T_REAL, P(heldout_mape), UNSET, 0, 1e6, 0, NULL, NULL,
	  "mean absolute percentage error predicting each interior batch from a fit to the others" },
	{ "heldout_points", LBS_T_INT, P(heldout_points), "0", 0, 1e6, 0, NULL, NULL,
	  "batches predicted for heldout_mape" },
};

static const lbs_key_spec source_keys[] = {
	{ "kind", LBS_T_ENUM, P(source), REQUIRED, 0, 0, 0, LBS_PROFILE_SOURCE_CHOICES, NULL,
	  "`table`: fitted to published measurements; `blas`: measured here by lbsim calibrate --blas; "
	  "`cuda`: by lbsim calibrate --cuda; `measured`: a user's own step times, lbsim calibrate --fit; `torch`: PyTorch training "
	  "steps timed by lbsim calibrate --torch; `datasheet`: predicted from a GPU's datasheet by lbsim "
	  "calibrate --datasheet (doc/gpus.md)" },
	{ "origin", LBS_T_STRING, P(origin), REQUIRED, 0, 0, 0, NULL, NULL,
	  "how and where the times were measured (paper, repository and commit; or this program)" },
	{ "data", LBS_T_STRING, P(data), UNSET, 0, 0, 0, NULL, NULL,
	  "the data file fitted, relative to the source tree (--fit: the CSV's path)" },
	{ "licence", LBS_T_STRING, P(licence), UNSET, 0, 0, 0, NULL, NULL, "licence of the data" },
	{ "host", LBS_T_STRING, P(host), UNSET, 0, 0, 0, NULL, NULL,
	  "the machine measured: CPU model and cores, or GPU name and memory" },
	{ "software", LBS_T_STRING, P(software), REQUIRED, 0, 0, 0, NULL, NULL,
	  "versions of the software that measured or fitted the times" },
	{ "command", LBS_T_STRING, P(command), REQUIRED, 0, 0, 0, NULL, NULL,
	  "the command that wrote this profile (run it to rebuild it)" },
	{ "date", LBS_T_STRING, P(date), UNSET, 0, 0, 0, NULL, NULL, "when it was measured (UTC)" },
	{ "threads", LBS_T_INT, P(threads), UNSET, 1, 1e6, 0, NULL, NULL, "BLAS threads of the measurement" },
	{ "reps", LBS_T_INT, P(reps), UNSET, 1, 1e6, 0, NULL, NULL, "timed repetitions per batch" },
	{ "warmup", LBS_T_INT, P(warmup), UNSET, 0, 1e6, 0, NULL, NULL,
	  "untimed repetitions before them" },
};
#undef P

#define NKEYS(t) (sizeof(t) / sizeof((t)[0]))

typedef struct section_spec {
	const char *name;
	const lbs_key_spec *keys;
	size_t nkeys;
	bool required;
	const char *doc;
} section_spec;

static const section_spec sections[] = {
	{ "profile", profile_keys, NKEYS(profile_keys), true, "What was measured" },
	{ "cost", cost_keys, NKEYS(cost_keys), true,
	  "The fitted cost model; these keys fill a scenario group's keys of the same names" },
	{ "fit", fit_keys, NKEYS(fit_keys), true, "How the cost model was fitted, and how well it fits" },
	{ "source", source_keys, NKEYS(source_keys), true, "Provenance" },
	{ "measurements", NULL, 0, true,
	  "One line per measured batch, `BATCH = TIME` (the median time of one training iteration "
	  "at that batch), batches increasing" },
	{ "spread", NULL, 0, false,
	  "Optional: `BATCH = FRACTION`, the spread (max - min) / median of the repetitions at a "
	  "measured batch, e.g. `3.1%`" },
};

/* ---- reading ---------------------------------------------------------- */

typedef struct read_ctx {
	lbs_ini_reader ini; /* first: on_section gets it back as the context */
	char section[LBS_NAME_MAX + 16];
	int section_line[NKEYS(sections)];
	lbs_kv *kv;
	size_t n_kv, cap_kv;
} read_ctx;

static int find_section(const char *name)
{
	for (size_t i = 0; i < NKEYS(sections); i++)
		if (!strcmp(sections[i].name, name))
			return (int)i;
	return -1;
}

/* Each section header: known, and given once. */
static bool on_section(lbs_ini_reader *r, const char *name)
{
	read_ctx *c = (read_ctx *)r;
	int i = find_section(name);
	if (i < 0)
		return lbs_ini_fail(r, "unknown section [%s] (expected [profile], [cost], [fit], [source], "
				    "[measurements] or [spread])", name);
	if (c->section_line[i])
		return lbs_ini_fail(r, "section [%s] appears twice (first at line %d)", name,
				    c->section_line[i]);
	c->section_line[i] = r->line;
	return true;
}

static int on_key(void *user, const char *section, const char *key, const char *value)
{
	read_ctx *c = user;
	if (c->ini.failed)
		return 0;
	if (!*section)
		return lbs_ini_fail(&c->ini, "'%s' is outside any section (put it under [profile], [cost], ...)", key);
	return lbs_ini_add_kv(&c->ini, &c->kv, &c->n_kv, &c->cap_kv, section, key, value);
}

static lbs_status kv_error(lbs_error *err, const lbs_kv *e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static lbs_status kv_error(lbs_error *err, const lbs_kv *e, const char *fmt, ...)
{
	char label[LBS_ERROR_MAX / 2], msg[LBS_ERROR_MAX / 2];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	lbs_origin_format(&e->at, e->section, e->key, label, sizeof label);
	return lbs_error_set(err, LBS_EINPUT, "%s: %s", label, msg);
}

static int cmp_point(const void *a, const void *b)
{
	int64_t x = ((const lbs_profile_point *)a)->batch, y = ((const lbs_profile_point *)b)->batch;
	return (x > y) - (x < y);
}

/* [measurements] and [spread]: BATCH = value. */
static lbs_status read_points(lbs_profile *p, const read_ctx *c, lbs_error *err)
{
	size_t n = 0;
	for (size_t i = 0; i < c->n_kv; i++)
		n += !strcmp(c->kv[i].section, "measurements");
	if (!(p->point = calloc(n ? n : 1, sizeof *p->point)))
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	char why[LBS_ERROR_MAX / 2];
	for (size_t i = 0; i < c->n_kv; i++) {
		const lbs_kv *e = &c->kv[i];
		if (strcmp(e->section, "measurements"))
			continue;
		lbs_profile_point *pt = &p->point[p->n_points];
		if (!lbs_parse_int(e->key, &pt->batch, why, sizeof why) || pt->batch < 1 || pt->batch > 1e9)
			return kv_error(err, e, "expected a batch size (an integer from 1 to 1e9) as the key");
		if (p->n_points && pt->batch <= p->point[p->n_points - 1].batch)
			return kv_error(err, e, "batches must increase down the section");
		if (!lbs_parse_quantity(e->value, LBS_DIM_TIME, &pt->time_s, why, sizeof why))
			return kv_error(err, e, "%s", why);
		if (!(pt->time_s > 0))
			return kv_error(err, e, "'%s': a time > 0 s is expected", e->value);
		pt->spread = NAN;
		p->n_points++;
	}
	for (size_t i = 0; i < c->n_kv; i++) {
		const lbs_kv *e = &c->kv[i];
		if (strcmp(e->section, "spread"))
			continue;
		int64_t b;
		lbs_profile_point key = { 0 }, *pt = NULL;
		if (lbs_parse_int(e->key, &b, why, sizeof why)) {
			key.batch = b;
			pt = bsearch(&key, p->point, p->n_points, sizeof *pt, cmp_point);
		}
		if (!pt)
			return kv_error(err, e, "not a batch of [measurements]");
		if (!lbs_parse_quantity(e->value, LBS_DIM_NONE, &pt->spread, why, sizeof why))
			return kv_error(err, e, "%s", why);
		if (!(pt->spread >= 0))
			return kv_error(err, e, "'%s': a spread >= 0 is expected", e->value);
	}
	return LBS_OK;
}

/* The shape a device can have: with a memory cap, it saturates at a batch
 * it holds, and was measured only at batches it holds. */
static lbs_status check_shape(const lbs_profile *p, const read_ctx *c, lbs_error *err)
{
	int64_t cap = p->cost.max_batch;
	if (cap == INT64_MAX)
		return LBS_OK;
	for (size_t i = 0; i < c->n_kv; i++) {
		const lbs_kv *e = &c->kv[i];
		if (!strcmp(e->section, "cost") && !strcmp(e->key, "saturation_batch") &&
		    p->cost.ops == &lbs_cost_piecewise && p->cost.saturation_batch > cap)
			return kv_error(err, e, "%lld is above max_batch (%lld): a device cannot saturate at "
					"a batch its memory does not hold", (long long)p->cost.saturation_batch,
					(long long)cap);
		if (!strcmp(e->section, "cost") && !strcmp(e->key, "flat_below") && p->cost.flat_below > cap)
			return kv_error(err, e, "%lld is above max_batch (%lld): the floor must be a batch "
					"the device holds", (long long)p->cost.flat_below, (long long)cap);
	}
	for (size_t i = 0, k = 0; i < c->n_kv; i++)
		if (!strcmp(c->kv[i].section, "measurements") && p->point[k++].batch > cap)
			return kv_error(err, &c->kv[i], "a measurement at batch %lld, above max_batch (%lld): "
					"the device cannot run a batch its memory does not hold",
					(long long)p->point[k - 1].batch, (long long)cap);
	return LBS_OK;
}

static lbs_status build(lbs_profile *p, read_ctx *c, lbs_error *err)
{
	const lbs_kv **entries = calloc(c->n_kv + 1, sizeof *entries);
	if (!entries)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	lbs_status st = LBS_OK;
	for (size_t s = 0; s < NKEYS(sections) && st == LBS_OK; s++) {
		const section_spec *spec = &sections[s];
		if (!c->section_line[s]) {
			if (spec->required)
				st = lbs_error_set(err, LBS_EINPUT, "%s: missing section [%s]", c->ini.path,
						   spec->name);
			continue;
		}
		if (!spec->keys)
			continue;
		size_t n = 0;
		for (size_t i = 0; i < c->n_kv; i++)
			if (!strcmp(c->kv[i].section, spec->name))
				entries[n++] = &c->kv[i];
		lbs_origin where = { c->ini.path, c->section_line[s] };
		uint64_t present;
		st = lbs_keys_apply(spec->keys, spec->nkeys, spec->name, &where, entries, n, p, &present,
				    NULL, err);
		if (st == LBS_OK && spec->keys == cost_keys) {
			p->cost.ops = lbs_cost_kinds[p->cost.kind];
			int mb = lbs_keys_find(cost_keys, NKEYS(cost_keys), "max_batch");
			if (!(present >> mb & 1))
				p->cost.max_batch = INT64_MAX;
			for (size_t i = 0; i < n; i++) {
				p->cost_kv[p->n_cost_kv++] = *entries[i];
				p->has_resize |= !strcmp(entries[i]->key, "resize_cost") ||
						 !strcmp(entries[i]->key, "new_batch_cost");
			}
		}
		if (st == LBS_OK && spec->keys == fit_keys &&
		    !(present >> lbs_keys_find(fit_keys, NKEYS(fit_keys), "heldout_mape") & 1))
			p->heldout_mape = NAN;
	}
	free(entries);
	if (st == LBS_OK)
		st = read_points(p, c, err);
	if (st == LBS_OK)
		st = check_shape(p, c, err);
	if (st == LBS_OK && (size_t)p->points != p->n_points) {
		for (size_t i = 0; i < c->n_kv; i++)
			if (!strcmp(c->kv[i].section, "fit") && !strcmp(c->kv[i].key, "points"))
				return kv_error(err, &c->kv[i], "%lld points, but [measurements] has %zu",
						(long long)p->points, p->n_points);
	}
	return st;
}

lbs_status lbs_profile_load(lbs_profile *p, const char *path, lbs_error *err)
{
	memset(p, 0, sizeof *p);
	snprintf(p->path, sizeof p->path, "%s", path);
	read_ctx c = { .ini = { .max_chars = LINE_MAX_CHARS, .on_section = on_section } };
	lbs_status st = lbs_ini_parse(&c.ini, p->path, "profile", on_key, &c, err);
	if (st == LBS_OK)
		st = build(p, &c, err);
	free(c.kv);
	/* The kept [cost] entries point at p->path, which stays with p. */
	if (st != LBS_OK)
		lbs_profile_destroy(p);
	return st;
}

void lbs_profile_destroy(lbs_profile *p)
{
	free(p->point);
	p->point = NULL;
	p->n_points = 0;
}

double lbs_profile_noise_sigma(const lbs_profile *p)
{
	if (p->reps < 2 || !p->n_points)
		return 0;
	double *s = malloc(p->n_points * sizeof *s);
	size_t n = 0;
	for (size_t i = 0; s && i < p->n_points; i++)
		if (isfinite(p->point[i].spread))
			s[n++] = p->point[i].spread;
	double sigma = 0;
	if (n) {
		gsl_sort(s, 1, n);
		sigma = gsl_stats_median_from_sorted_data(s, 1, n) / lbs_expected_range(p->reps);
	}
	free(s);
	return isfinite(sigma) ? sigma : 0;
}

lbs_status lbs_profile_point_arrays(const lbs_profile *p, double **batch, double **time_s, lbs_error *err)
{
	size_t n = p->n_points;
	double *b = malloc((n ? n : 1) * sizeof *b), *t = malloc((n ? n : 1) * sizeof *t);
	if (!b || !t) {
		free(b);
		free(t);
		*batch = *time_s = NULL;
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		b[i] = (double)p->point[i].batch;
		t[i] = p->point[i].time_s;
	}
	*batch = b;
	*time_s = t;
	return LBS_OK;
}

lbs_status lbs_profile_cost_table(const lbs_profile *p, double **table, int64_t *n, lbs_error *err)
{
	*table = NULL;
	*n = 0;
	size_t m = p->n_points;
	int64_t top = m ? p->point[m - 1].batch : 0;
	if (top < 1 || top > LBS_COST_TABLE_MAX)
		return LBS_OK;
	int64_t *b = malloc(m * sizeof *b);
	double *t = malloc(m * sizeof *t), *tab = malloc((size_t)top * sizeof *tab);
	if (b && t && tab) {
		for (size_t i = 0; i < m; i++) {
			b[i] = p->point[i].batch;
			t[i] = p->point[i].time_s;
		}
		lbs_cost_table_fill(b, t, m, tab);
		*table = tab;
		*n = top;
	}
	free(b);
	free(t);
	if (!*table) {
		free(tab);
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	}
	return LBS_OK;
}

/* Fits p's points with `kind` by least squares, or (kind NULL) the robust
 * line, and takes the fit into p's [cost] (keeping its memory cap and
 * re-sizing costs, not the fit's) and [fit]. */
static lbs_status profile_fit(lbs_profile *p, const lbs_cost_ops *kind, double *weight, size_t *n_out,
			      lbs_error *err)
{
	size_t n = p->n_points;
	double *b, *t;
	if (lbs_profile_point_arrays(p, &b, &t, err) != LBS_OK)
		return LBS_EINTERNAL;
	lbs_fit f;
	size_t nh = 0;
	lbs_status st = kind ? lbs_calib_fit(kind, b, t, n, &f, err)
			     : lbs_calib_fit_robust(b, t, n, &f, weight, n_out, err);
	if (st == LBS_OK)
		st = kind ? lbs_calib_heldout(kind, b, t, n, &p->heldout_mape, &nh, err)
			  : lbs_calib_heldout_robust(b, t, n, weight, &p->heldout_mape, &nh, err);
	free(b);
	free(t);
	if (st != LBS_OK)
		return st;
	lbs_cost kept = p->cost;
	p->cost = f.cost;
	p->cost.max_batch = kept.max_batch;
	p->cost.resize_cost = kept.resize_cost;
	p->cost.new_batch_cost = kept.new_batch_cost;
	p->points = (int64_t)n;
	p->r2 = f.r2;
	p->rmse_s = f.rmse_s;
	p->mape = f.mape;
	p->heldout_points = (int64_t)nh;
	if (!nh)
		p->heldout_mape = NAN;
	if (f.robust)
		lbs_fmt(p->method, sizeof p->method, "Tukey's bisquare robust least squares on the medians "
			"(gsl_multifit_robust): %zu of %zu batches weighted out", *n_out, n);
	else if (!kind && n < LBS_ROBUST_MIN_POINTS)
		lbs_fmt(p->method, sizeof p->method, "ordinary least squares on the medians (gsl_fit_linear, "
			"%zu batches, under the %d a robust fit needs)", n, LBS_ROBUST_MIN_POINTS);
	else if (!kind)
		lbs_fmt(p->method, sizeof p->method, "ordinary least squares on the medians (gsl_fit_linear, "
			"GSL found no robust line)");
	return LBS_OK;
}

lbs_status lbs_profile_fit(lbs_profile *p, const lbs_cost_ops *kind, lbs_error *err)
{
	return profile_fit(p, kind, NULL, NULL, err);
}

lbs_status lbs_profile_fit_robust(lbs_profile *p, double *weight, size_t *n_out, lbs_error *err)
{
	return profile_fit(p, NULL, weight, n_out, err);
}

/* ---- writing ---------------------------------------------------------- */

typedef struct writer {
	FILE *out;
	bool too_long;
	char what[LBS_NAME_MAX];
} writer;

static void put(writer *w, const char *key, const char *value)
{
	if (strlen(key) + 3 + strlen(value) > LINE_MAX_CHARS && !w->too_long) {
		w->too_long = true;
		snprintf(w->what, sizeof w->what, "%s", key);
	}
	fprintf(w->out, "%s = %s\n", key, value);
}

/* A string value, with what inih would take for an inline comment (" ;")
 * made harmless. */
static void put_text(writer *w, const char *key, const char *value)
{
	if (!*value)
		return;
	char v[LBS_VALUE_MAX];
	snprintf(v, sizeof v, "%s", value);
	for (char *s = v; *s; s++)
		if (*s == ';' || *s == '\n' || *s == '\r')
			*s = ',';
	put(w, key, v);
}

static void put_time(writer *w, const char *key, double s)
{
	char v[64];
	lbs_format_quantity(s, LBS_DIM_TIME, v, sizeof v);
	put(w, key, v);
}

static void put_int(writer *w, const char *key, int64_t v)
{
	char s[32];
	put(w, key, lbs_fmt(s, sizeof s, "%lld", (long long)v));
}

static void put_percent(writer *w, const char *key, double fraction)
{
	char s[32];
	put(w, key, lbs_fmt(s, sizeof s, "%.4g%%", 100.0 * fraction));
}

lbs_status lbs_profile_write(const lbs_profile *p, FILE *out, lbs_error *err)
{
	writer w = { .out = out };
	char s[64];
	fprintf(out, "; Cost profile (doc/profiles.md), written by lbsim calibrate: [source] command\n"
		     "; rebuilds it.\n");
	fprintf(out, "\n[profile]\n");
	put_int(&w, "format", LBS_PROFILE_FORMAT);
	put_text(&w, "device", p->device);
	put(&w, "device_class", p->device_class ? "gpu" : "cpu");
	put_text(&w, "model", p->model);
	put_text(&w, "description", p->description);

	fprintf(out, "\n[cost]\n");
	put(&w, "cost", p->cost.ops->name);
	if (p->cost.ops == &lbs_cost_piecewise) {
		put_time(&w, "t_flat", p->cost.t_flat_s);
		put_int(&w, "saturation_batch", p->cost.saturation_batch);
	} else {
		put_time(&w, "t0", p->cost.t0_s);
	}
	put_time(&w, "per_sample", p->cost.per_sample_s);
	if (p->cost.ops == &lbs_cost_power)
		put(&w, "exponent", lbs_fmt(s, sizeof s, "%.6g", p->cost.exponent));
	if (p->cost.ops == &lbs_cost_quadratic)
		put_time(&w, "per_sample_sq", p->cost.per_sample_sq_s);
	if ((p->cost.ops == &lbs_cost_power || p->cost.ops == &lbs_cost_quadratic) && p->cost.flat_below > 1)
		put_int(&w, "flat_below", p->cost.flat_below);
	if (p->cost.max_batch != INT64_MAX && p->cost.max_batch > 0)
		put_int(&w, "max_batch", p->cost.max_batch);
	if (p->has_resize) {
		put_percent(&w, "resize_cost", p->cost.resize_cost);
		put_percent(&w, "new_batch_cost", p->cost.new_batch_cost);
	}

	fprintf(out, "\n[fit]\n");
	put_text(&w, "method", p->method);
	put_int(&w, "points", p->points);
	put(&w, "r2", lbs_fmt(s, sizeof s, "%.6f", p->r2));
	put_time(&w, "rmse", p->rmse_s);
	put_percent(&w, "mape", p->mape);
	if (p->heldout_points > 0 && isfinite(p->heldout_mape)) {
		put_percent(&w, "heldout_mape", p->heldout_mape);
		put_int(&w, "heldout_points", p->heldout_points);
	}

	fprintf(out, "\n[source]\n");
	static const char *kinds[] = { "table", "blas", "cuda", "measured", "torch", "datasheet" };
	put(&w, "kind", kinds[p->source]);
	put_text(&w, "origin", p->origin);
	put_text(&w, "data", p->data);
	put_text(&w, "licence", p->licence);
	put_text(&w, "host", p->host);
	put_text(&w, "software", p->software);
	put_text(&w, "command", p->command);
	put_text(&w, "date", p->date);
	if (p->threads > 0)
		put_int(&w, "threads", p->threads);
	if (p->reps > 0)
		put_int(&w, "reps", p->reps);
	if (p->reps > 0)
		put_int(&w, "warmup", p->warmup);

	fprintf(out, "\n[measurements]\n");
	bool spread = false;
	for (size_t i = 0; i < p->n_points; i++) {
		char key[32];
		lbs_fmt(key, sizeof key, "%lld", (long long)p->point[i].batch);
		put_time(&w, key, p->point[i].time_s);
		spread |= isfinite(p->point[i].spread);
	}
	if (spread) {
		fprintf(out, "\n[spread]\n");
		for (size_t i = 0; i < p->n_points; i++)
			if (isfinite(p->point[i].spread)) {
				char key[32];
				put_percent(&w, lbs_fmt(key, sizeof key, "%lld", (long long)p->point[i].batch),
					    p->point[i].spread);
			}
	}
	if (w.too_long)
		return lbs_error_set(err, LBS_EINTERNAL, "profile key %s: value too long for one line (%d "
				     "characters)", w.what, LINE_MAX_CHARS);
	return LBS_OK;
}

void lbs_profile_document(FILE *out)
{
	fprintf(out, "# Profile keys\n\n"
		     "Generated by `lbsim calibrate --keys` from the schema tables in models/profile.c; do "
		     "not edit.\nThe format is described in doc/profiles.md.\n\n");
	for (size_t i = 0; i < NKEYS(sections); i++) {
		fprintf(out, "### [%s]\n\n%s.\n\n", sections[i].name, sections[i].doc);
		if (sections[i].keys)
			lbs_keys_document(out, sections[i].keys, sections[i].nkeys);
		fprintf(out, "\n");
	}
}
