/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "traces/netfit.h"
#include "util/units.h"

#include <dirent.h>
#include <errno.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where the two burst regimes split (Gbit/s): runs burst at about 9.7 or
 * about 5.0, nothing in between. */
#define REGIME_SPLIT_GBPS 7.0

static double median_of(const double *v, size_t n)
{
	double *c = malloc(n * sizeof *c);
	if (!c)
		return NAN;
	memcpy(c, v, n * sizeof *c);
	gsl_sort(c, 1, n);
	double m = gsl_stats_median_from_sorted_data(c, 1, n);
	free(c);
	return m;
}

lbs_status lbs_netfit_read_run(const char *path, lbs_netfit_run *run, lbs_error *err)
{
	memset(run, 0, sizeof *run);
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	snprintf(run->stem, sizeof run->stem, "%s", base);
	char *dot = strstr(run->stem, ".bw");
	if (dot)
		*dot = '\0';
	size_t tl = strcspn(run->stem, "-");
	if (tl == 0 || tl >= sizeof run->type)
		return lbs_error_set(err, LBS_EINPUT, "%s: name does not start with an instance type", path);
	memcpy(run->type, run->stem, tl);
	run->type[tl] = '\0';

	FILE *f = fopen(path, "r");
	if (!f)
		return lbs_error_set(err, LBS_EINPUT, "%s: %s", path, strerror(errno));
	size_t n = 0, cap = 1024;
	double *v = malloc(cap * sizeof *v);
	char line[128];
	lbs_status st = v ? LBS_OK : lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	while (st == LBS_OK && fgets(line, sizeof line, f)) {
		double gbps = -1;
		char why[128];
		/* the number by lbsim's one grammar: no hexadecimal, inf or nan */
		static const char prefix[] = "crnt bw = ";
		line[strcspn(line, "\r\n")] = '\0';
		if (strncmp(line, prefix, sizeof prefix - 1) ||
		    !lbs_parse_real(line + sizeof prefix - 1, &gbps, why, sizeof why) || !(gbps >= 0 && gbps < 1000)) {
			st = lbs_error_set(err, LBS_EINPUT, "%s:%zu: expected 'crnt bw = GBPS'", path, n + 1);
			break;
		}
		if (n == cap) {
			double *nv = realloc(v, 2 * cap * sizeof *v);
			if (!nv) {
				st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
				break;
			}
			v = nv;
			cap *= 2;
		}
		v[n++] = gbps;
	}
	fclose(f);
	while (st == LBS_OK && n > 0 && v[n - 1] == 0)
		n--; /* iperf3 had stopped */
	if (st == LBS_OK && n < 20)
		st = lbs_error_set(err, LBS_EINPUT, "%s: %zu rows with traffic, need at least 20", path, n);
	if (st != LBS_OK) {
		free(v);
		return st;
	}
	run->rows = n;
	double head = median_of(v + 1, 10), tail = median_of(v + n - 5, 5);
	run->depleted = tail < 0.8 * head;
	if (!run->depleted) {
		run->burst_Gbps = gsl_stats_mean(v + 1, 1, n - 1);
		run->baseline_Gbps = NAN;
		free(v);
		return LBS_OK;
	}
	double r = tail;
	size_t k = 1;
	while (k < n && !(v[k] < r + 0.1 * (head - r)))
		k++;
	if (k < 3 || k >= n) {
		free(v);
		return lbs_error_set(err, LBS_EINPUT, "%s: no burst before the drop", path);
	}
	double R = gsl_stats_mean(v + 1, 1, k - 2);
	double phi = (v[k - 1] - r) / (R - r);
	phi = phi < 0 ? 0 : phi > 1 ? 1 : phi;
	run->drop_row = k;
	run->t_empty_s = (double)(k - 1) + phi;
	run->burst_Gbps = R;
	run->baseline_Gbps = r;
	free(v);
	return LBS_OK;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

lbs_status lbs_netfit_read_dir(const char *dir, lbs_netfit_run **runs, size_t *n, lbs_error *err)
{
	*runs = NULL;
	*n = 0;
	DIR *d = opendir(dir);
	if (!d)
		return lbs_error_set(err, LBS_EINPUT, "%s: %s", dir, strerror(errno));
	char **names = NULL;
	size_t nn = 0;
	lbs_status st = LBS_OK;
	for (struct dirent *e; st == LBS_OK && (e = readdir(d));) {
		size_t len = strlen(e->d_name);
		if (len < 4 || strcmp(e->d_name + len - 3, ".bw") != 0)
			continue;
		char **nv = realloc(names, (nn + 1) * sizeof *names);
		if (!nv || !(nv[nn] = malloc(strlen(dir) + len + 2))) {
			names = nv ? nv : names;
			st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
			break;
		}
		names = nv;
		sprintf(names[nn++], "%s/%s", dir, e->d_name);
	}
	closedir(d);
	if (st == LBS_OK && nn == 0)
		st = lbs_error_set(err, LBS_EINPUT, "%s: no .bw files", dir);
	if (st == LBS_OK) {
		qsort(names, nn, sizeof *names, by_name); /* readdir's order is the file system's */
		if (!(*runs = lbs_calloc(nn, sizeof **runs, err)))
			st = LBS_EINTERNAL;
	}
	for (size_t i = 0; st == LBS_OK && i < nn; i++)
		st = lbs_netfit_read_run(names[i], &(*runs)[i], err);
	for (size_t i = 0; i < nn; i++)
		free(names[i]);
	free(names);
	if (st != LBS_OK) {
		free(*runs);
		*runs = NULL;
		return st;
	}
	*n = nn;
	return LBS_OK;
}

double lbs_netfit_predict(const lbs_netbucket_type *t, double burst_Gbps)
{
	double drain = burst_Gbps - t->baseline_Gbps;
	return drain > 0 ? t->bucket_Gbit / drain : INFINITY;
}

lbs_status lbs_netfit_type(const lbs_netfit_run *runs, size_t n, const char *type,
			   lbs_netbucket_type *out, lbs_error *err)
{
	memset(out, 0, sizeof *out);
	double *x = calloc(n + 1, sizeof *x), *y = calloc(n + 1, sizeof *y), *w = calloc(n + 1, sizeof *w);
	double *hi = calloc(n + 1, sizeof *hi), *lo = calloc(n + 1, sizeof *lo);
	lbs_status st = x && y && w && hi && lo ? LBS_OK : lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	size_t m = 0, nhi = 0, nlo = 0;
	double r = 0;
	for (size_t i = 0; st == LBS_OK && i < n; i++) {
		if (strcmp(runs[i].type, type) != 0)
			continue;
		if (runs[i].burst_Gbps > REGIME_SPLIT_GBPS)
			hi[nhi++] = runs[i].burst_Gbps;
		else
			lo[nlo++] = runs[i].burst_Gbps;
		if (runs[i].depleted) {
			r += runs[i].baseline_Gbps;
			m++;
		}
	}
	if (st == LBS_OK && (m < 2 || nhi == 0))
		st = lbs_error_set(err, LBS_EINPUT,
				   "%s: %zu depleting runs and %zu in the high burst regime; need 2 and 1",
				   type, m, nhi);
	if (st == LBS_OK) {
		r /= (double)m;
		size_t j = 0;
		for (size_t i = 0; i < n; i++) {
			if (strcmp(runs[i].type, type) != 0 || !runs[i].depleted)
				continue;
			x[j] = 1.0 / (runs[i].burst_Gbps - r);
			y[j] = runs[i].t_empty_s;
			w[j] = 1.0 / (y[j] * y[j]);
			j++;
		}
		double S, cov, chisq;
		gsl_fit_wmul(x, 1, w, 1, y, 1, m, &S, &cov, &chisq);
		out->name = NULL; /* the caller names it */
		out->burst_Gbps = median_of(hi, nhi);
		out->burst_low_Gbps = nlo ? median_of(lo, nlo) : NAN;
		out->baseline_Gbps = r;
		out->bucket_Gbit = S;
		/* The weights are relative, not 1/variance: scale the covariance
		 * by the residual variance. */
		out->bucket_se_Gbit = sqrt(cov * chisq / (double)(m - 1));
		out->runs = (int)m;
		double sum2 = 0, worst = 0;
		for (size_t i = 0; i < m; i++) {
			double e = (S * x[i] - y[i]) / y[i];
			sum2 += e * e;
			worst = fabs(e) > worst ? fabs(e) : worst;
		}
		out->rms_rel_err = sqrt(sum2 / (double)m);
		out->max_rel_err = worst;
	}
	free(x);
	free(y);
	free(w);
	free(hi);
	free(lo);
	return st;
}
