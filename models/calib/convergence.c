/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "models/calib/convergence.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_fit.h>

#include "util/units.h"

#define MAX_BATCHES 64
#define MAX_CURVES 1024 /* (batch, seed) pairs */
#define MAX_ROWS 10000000 /* rows of the loss file: 10 million */

lbs_status lbs_conv_fit_points(const lbs_conv_point *p, size_t n, lbs_conv_fit *fit, lbs_error *err)
{
	*fit = (lbs_conv_fit){ .heldout_mean_abs = NAN, .heldout_max_abs = NAN };
	if (n < 2 || n > MAX_BATCHES)
		return lbs_error_set(err, LBS_EINPUT, "%zu batch sizes reach the target: the fit needs 2 to %d",
				     n, MAX_BATCHES);
	double x[MAX_BATCHES], y[MAX_BATCHES];
	for (size_t i = 0; i < n; i++) {
		x[i] = 1.0 / p[i].batch;
		y[i] = p[i].steps;
	}
	/* S = S_min + (S_min B_noise) / B: intercept S_min, slope S_min B_noise. */
	double c0, c1, cov00, cov01, cov11, sumsq;
	gsl_fit_linear(x, 1, y, 1, n, &c0, &c1, &cov00, &cov01, &cov11, &sumsq);
	if (!(c0 > 0) || !(c1 >= 0))
		return lbs_error_set(err, LBS_EINPUT, "the steps to the target do not fall with the batch as the "
				     "model needs (a line in 1/B with intercept S_min = %.4g and slope S_min B_noise = "
				     "%.4g; both must be positive): more batches, or a target every batch reaches "
				     "steadily, may help", c0, c1);
	fit->min_steps = c0;
	fit->noise_scale = c1 / c0;
	double mean = 0, tss = 0;
	for (size_t i = 0; i < n; i++)
		mean += y[i] / (double)n;
	for (size_t i = 0; i < n; i++)
		tss += (y[i] - mean) * (y[i] - mean);
	fit->r2 = tss > 0 ? 1 - sumsq / tss : 1.0;
	for (size_t i = 0; i < MAX_BATCHES; i++)
		fit->heldout[i] = NAN;
	if (n >= 3) {
		double sum = 0, worst = 0;
		for (size_t k = 0; k < n; k++) {
			double xs[MAX_BATCHES], ys[MAX_BATCHES];
			size_t m = 0;
			for (size_t i = 0; i < n; i++)
				if (i != k) {
					xs[m] = x[i];
					ys[m++] = y[i];
				}
			double a, b;
			gsl_fit_linear(xs, 1, ys, 1, m, &a, &b, &cov00, &cov01, &cov11, &sumsq);
			double e = (a + b * x[k]) / y[k] - 1;
			fit->heldout[k] = e;
			sum += fabs(e);
			worst = fabs(e) > worst ? fabs(e) : worst;
		}
		fit->heldout_mean_abs = sum / (double)n;
		fit->heldout_max_abs = worst;
	}
	return LBS_OK;
}

double lbs_conv_steps_to(const double *step, const double *loss, size_t n, double target, size_t smooth)
{
	if (smooth < 1)
		smooth = 1;
	double prev_s = NAN, prev_l = NAN, window = 0;
	for (size_t i = 0; i < n; i++) {
		/* the mean of the last `smooth` losses logged (fewer at the start) */
		window += loss[i];
		if (i >= smooth)
			window -= loss[i - smooth];
		double l = window / (double)(i + 1 < smooth ? i + 1 : smooth);
		if (l <= target) {
			if (isnan(prev_s))
				return step[i];
			return prev_s + (prev_l - target) / (prev_l - l) * (step[i] - prev_s);
		}
		prev_s = step[i];
		prev_l = l;
	}
	return NAN;
}

typedef struct curve {
	double batch, seed, staleness;
	double *step, *loss;
	size_t n, cap;
	int last_line;
} curve;

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: lbsim calibrate --convergence LOSS.csv --target LOSS [--smooth N] [-o FILE]\n"
		"\n"
		"Fits the gradient-noise-scale model of [convergence] (doc/model.md, \"Time to\n"
		"target\") to a job's loss curves at two or more batch sizes: for each batch, the\n"
		"steps at which the loss first reaches the target; then S(B) = S_min (1 + B_noise/B)\n"
		"by least squares in 1/B, and, with three batches or more, each batch's steps\n"
		"predicted by the fit to the others (the held-out error).\n"
		"\n"
		"  --convergence FILE  a CSV with a header naming the columns batch, step and loss,\n"
		"                      and optionally seed and staleness (others are ignored); one\n"
		"                      row per logged step (staleness: the gradients' age in updates,\n"
		"                      trained at the learning rate / staleness, as teacher_student.py\n"
		"                      --staleness does; with rows of staleness 2 or more,\n"
		"                      staleness_exponent is fitted too), each curve's rows (a batch,\n"
		"                      and a seed and staleness) in increasing\n"
		"                      step order (curves may interleave); a batch's steps to the\n"
		"                      target are the mean over its curves\n"
		"  --target LOSS       the loss that counts as reached\n"
		"  --smooth N          a moving average over N logged losses first (default 1: none)\n"
		"  -o, --output FILE   write the [convergence] section there (default: stdout)\n");
}

static lbs_status parse_number(const char *path, int line, const char *col, const char *text, double *v,
			       lbs_error *err)
{
	char why[128];
	if (!lbs_parse_quantity(text, LBS_DIM_NONE, v, why, sizeof why) || strchr(text, '%'))
		return lbs_error_set(err, LBS_EINPUT, "%s:%d: %s: '%s' is not a number", path, line, col, text);
	return LBS_OK;
}

/* Reads the curves, one per batch, in the order of their first row. */
static lbs_status read_curves(const char *path, curve *cv, size_t *ncv, lbs_error *err)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return lbs_error_set(err, LBS_EINPUT, "%s: cannot read: %s", path, strerror(errno));
	char buf[4096];
	int line = 0, ib = -1, is = -1, il = -1, isd = -1, ist = -1, ikept = -1, ncol = 0;
	lbs_status st = LBS_OK;
	size_t rows = 0;
	*ncv = 0;
	while (st == LBS_OK && fgets(buf, sizeof buf, f)) {
		line++;
		size_t len = strlen(buf);
		if (len == sizeof buf - 1 && buf[len - 1] != '\n') {
			st = lbs_error_set(err, LBS_EINPUT, "%s:%d: a line of over %zu characters", path, line,
					   sizeof buf - 2);
			break;
		}
		buf[strcspn(buf, "\r\n")] = '\0';
		if (!buf[strspn(buf, " \t")])
			continue;
		char *fields[64];
		int nf = 0;
		for (char *save = NULL, *t = strtok_r(buf, ",", &save); t && nf < 64; t = strtok_r(NULL, ",", &save)) {
			t += strspn(t, " \t");
			size_t k = strlen(t);
			while (k && (t[k - 1] == ' ' || t[k - 1] == '\t'))
				t[--k] = '\0';
			fields[nf++] = t;
		}
		if (ib < 0) { /* the header */
			for (int i = 0; i < nf; i++) {
				if (!strcmp(fields[i], "batch"))
					ib = i;
				else if (!strcmp(fields[i], "step"))
					is = i;
				else if (!strcmp(fields[i], "loss"))
					il = i;
				else if (!strcmp(fields[i], "seed"))
					isd = i;
				else if (!strcmp(fields[i], "staleness"))
					ist = i;
				else if (!strcmp(fields[i], "kept_lr_staleness"))
					ikept = i;
			}
			if (ib < 0 || is < 0 || il < 0) {
				st = lbs_error_set(err, LBS_EINPUT, "%s:%d: the header must name the columns batch, step "
						   "and loss (got '%s')", path, line, nf ? fields[0] : "");
				break;
			}
			ncol = nf;
			continue;
		}
		if (nf != ncol) {
			st = lbs_error_set(err, LBS_EINPUT, "%s:%d: %d fields, the header has %d", path, line, nf, ncol);
			break;
		}
		if (++rows > MAX_ROWS) {
			st = lbs_error_set(err, LBS_EINPUT, "%s:%d: more than %d rows", path, line, MAX_ROWS);
			break;
		}
		double b, s, l, sd = 0, tau = 0;
		if ((isd >= 0 && (st = parse_number(path, line, "seed", fields[isd], &sd, err)) != LBS_OK) ||
		    (ist >= 0 && (st = parse_number(path, line, "staleness", fields[ist], &tau, err)) != LBS_OK) ||
		    (st = parse_number(path, line, "batch", fields[ib], &b, err)) != LBS_OK ||
		    (st = parse_number(path, line, "step", fields[is], &s, err)) != LBS_OK ||
		    (st = parse_number(path, line, "loss", fields[il], &l, err)) != LBS_OK)
			break;
		if (!(b >= 1 && b <= 1e9 && b == floor(b))) {
			st = lbs_error_set(err, LBS_EINPUT, "%s:%d: batch: '%s' must be a whole number of samples from "
					   "1 to 1e9", path, line, fields[ib]);
			break;
		}
		double kept = 0;
		if (ikept >= 0 && ((st = parse_number(path, line, "kept_lr_staleness", fields[ikept], &kept, err)) !=
				   LBS_OK ||
				   (kept > 1 && (st = lbs_error_set(err, LBS_EINPUT, "%s:%d: kept_lr_staleness: %s: "
								     "a curve of stale gradients at the learning rate "
								     "kept is not a fresh one, and has no exponent to fit "
								     "(staleness_penalty = none models it): leave it out",
								     path, line, fields[ikept])) != LBS_OK)))
			break;
		if (!(tau >= 0 && tau <= 1e6 && tau == floor(tau))) {
			st = lbs_error_set(err, LBS_EINPUT, "%s:%d: staleness: '%s' must be a whole number of updates "
					   "from 0 to 1e6", path, line, fields[ist]);
			break;
		}
		if (!(s >= 0 && s <= 1e12)) {
			st = lbs_error_set(err, LBS_EINPUT, "%s:%d: step: '%s' must be from 0 to 1e12", path, line,
					   fields[is]);
			break;
		}
		size_t c = 0, batches = 0;
		while (c < *ncv && !(cv[c].batch == b && cv[c].seed == sd && cv[c].staleness == tau))
			c++;
		for (size_t k = 0; k < *ncv; k++) {
			bool first = true;
			for (size_t j = 0; j < k; j++)
				first = first && cv[j].batch != cv[k].batch;
			batches += first;
		}
		if (c == *ncv) {
			bool new_batch = true;
			for (size_t k = 0; k < *ncv; k++)
				new_batch = new_batch && cv[k].batch != b;
			if (*ncv == MAX_CURVES || (new_batch && batches == MAX_BATCHES)) {
				st = lbs_error_set(err, LBS_EINPUT, "%s:%d: more than %d batch sizes or %d curves", path,
						   line, MAX_BATCHES, MAX_CURVES);
				break;
			}
			cv[(*ncv)++] = (curve){ .batch = b, .seed = sd, .staleness = tau };
		}
		curve *k = &cv[c];
		if (k->n && !(s > k->step[k->n - 1])) {
			st = lbs_error_set(err, LBS_EINPUT, "%s:%d: step: %s after step %.17g (line %d) of batch %.0f%s: "
					   "each curve's steps must increase", path, line, fields[is],
					   k->step[k->n - 1], k->last_line, b,
					   isd >= 0 || ist >= 0 ? " and its seed and staleness" : "");
			break;
		}
		if (k->n == k->cap) {
			size_t cap = k->cap ? 2 * k->cap : 256;
			double *ns = realloc(k->step, cap * sizeof *ns);
			if (ns)
				k->step = ns;
			double *nl = ns ? realloc(k->loss, cap * sizeof *nl) : NULL;
			if (nl)
				k->loss = nl;
			if (!ns || !nl) {
				st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
				break;
			}
			k->cap = cap;
		}
		k->step[k->n] = s;
		k->loss[k->n++] = l;
		k->last_line = line;
	}
	if (st == LBS_OK && ferror(f))
		st = lbs_error_set(err, LBS_EINPUT, "%s: read error", path);
	if (st == LBS_OK && ib < 0)
		st = lbs_error_set(err, LBS_EINPUT, "%s: empty: expected a header naming batch, step and loss", path);
	fclose(f);
	return st;
}

/* The staleness exponent beta of [convergence] staleness_exponent: curves
 * trained with gradients tau updates stale at the learning rate / tau take
 * S_tau steps where fresh ones take S_0, and the model says S_tau = S_0
 * tau^beta (a step makes (1/tau)^beta of a fresh one's progress). For each
 * (batch, tau > 1) the steps S_tau (the mean over its curves, all of which
 * must reach the target), S_0 the fresh curves' at the same batch (or the
 * fit's S(B) where there are none); beta by least squares through the
 * origin in log(S_tau / S_0) against log(tau); with two points or more,
 * each predicted by the fit to the others. tau 0 and 1 carry no
 * information (the rate is not divided). */
#define MAX_STALE 64
typedef struct stale_fit {
	size_t n;
	double batch[MAX_STALE], tau[MAX_STALE], steps[MAX_STALE], fresh[MAX_STALE], heldout[MAX_STALE];
	double exponent, heldout_mean_abs, heldout_max_abs;
} stale_fit;

static lbs_status fit_staleness(const curve *cv, size_t ncv, const lbs_conv_point *pts, size_t np,
				const lbs_conv_fit *fit, double target, size_t smooth, stale_fit *sf, lbs_error *err)
{
	for (size_t i = 0; i < ncv; i++) {
		bool first = cv[i].staleness > 1;
		for (size_t j = 0; j < i; j++)
			first = first && !(cv[j].batch == cv[i].batch && cv[j].staleness == cv[i].staleness);
		if (!first)
			continue;
		double sum = 0;
		size_t k = 0, missed = 0;
		for (size_t j = i; j < ncv; j++) {
			if (cv[j].batch != cv[i].batch || cv[j].staleness != cv[i].staleness)
				continue;
			double s = lbs_conv_steps_to(cv[j].step, cv[j].loss, cv[j].n, target, smooth);
			k++;
			if (isnan(s))
				missed++;
			else
				sum += s;
		}
		if (missed) {
			printf("staleness %.0f at batch %.0f: not reached by %zu of its %zu curves: left out\n",
			       cv[i].staleness, cv[i].batch, missed, k);
			continue;
		}
		if (sf->n == MAX_STALE)
			return lbs_error_set(err, LBS_EINPUT, "more than %d (batch, staleness) pairs", MAX_STALE);
		double fresh = fit->min_steps * (1 + fit->noise_scale / cv[i].batch);
		for (size_t p = 0; p < np; p++)
			if (pts[p].batch == cv[i].batch)
				fresh = pts[p].steps;
		sf->batch[sf->n] = cv[i].batch;
		sf->tau[sf->n] = cv[i].staleness;
		sf->steps[sf->n] = sum / (double)k;
		sf->fresh[sf->n++] = fresh;
	}
	if (!sf->n)
		return LBS_OK;
	double num = 0, den = 0;
	for (size_t i = 0; i < sf->n; i++) {
		num += log(sf->steps[i] / sf->fresh[i]) * log(sf->tau[i]);
		den += log(sf->tau[i]) * log(sf->tau[i]);
	}
	sf->exponent = num / den;
	for (size_t i = 0; sf->n >= 2 && i < sf->n; i++) {
		double l = log(sf->tau[i]);
		double beta = (num - log(sf->steps[i] / sf->fresh[i]) * l) / (den - l * l);
		sf->heldout[i] = sf->fresh[i] * pow(sf->tau[i], beta) / sf->steps[i] - 1;
		sf->heldout_mean_abs += fabs(sf->heldout[i]) / (double)sf->n;
		sf->heldout_max_abs = fmax(sf->heldout_max_abs, fabs(sf->heldout[i]));
	}
	printf("staleness  batch  steps fresh  steps stale  progress (1/tau)^beta%s\n",
	       sf->n >= 2 ? "  predicted by the others" : "");
	for (size_t i = 0; i < sf->n; i++) {
		printf("%-9.0f  %5.0f  %11.1f  %11.1f  %21.3f", sf->tau[i], sf->batch[i], sf->fresh[i], sf->steps[i],
		       sf->fresh[i] / sf->steps[i]);
		if (sf->n >= 2)
			printf("  %+.1f%%", 100 * sf->heldout[i]);
		printf("\n");
	}
	printf("fit: a step tau stale at the learning rate / tau makes (1/tau)^%.4g of a fresh one's progress",
	       sf->exponent);
	if (sf->n >= 2)
		printf("; held-out mean |error| %.1f%%, worst %.1f%%", 100 * sf->heldout_mean_abs,
		       100 * sf->heldout_max_abs);
	printf("\n");
	if (!(sf->exponent >= 0 && sf->exponent <= 10))
		return lbs_error_set(err, LBS_EINPUT, "the staleness exponent fitted, %g, is outside 0..10: stale "
				     "curves that reach the target sooner than fresh ones are not this model's",
				     sf->exponent);
	return LBS_OK;
}

int lbs_convergence_command(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "convergence", required_argument, NULL, 'c' }, { "target", required_argument, NULL, 't' },
		{ "smooth", required_argument, NULL, 's' },      { "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },              { NULL, 0, NULL, 0 },
	};
	const char *csv = NULL, *output = NULL, *target_text = NULL;
	double target = NAN;
	long smooth = 1;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': csv = optarg; break;
		case 'o': output = optarg; break;
		case 't': {
			char why[128];
			target_text = optarg;
			if (!lbs_parse_quantity(optarg, LBS_DIM_NONE, &target, why, sizeof why) || strchr(optarg, '%')) {
				fprintf(stderr, "lbsim calibrate: --target %s: expected a loss (a number)\n", optarg);
				return LBS_EUSAGE;
			}
			break;
		}
		case 's': {
			char *end;
			errno = 0;
			smooth = strtol(optarg, &end, 10);
			if (!*optarg || *end || errno || smooth < 1 || smooth > 100000) {
				fprintf(stderr, "lbsim calibrate: --smooth %s: expected a number of points from 1 to "
					"100000\n", optarg);
				return LBS_EUSAGE;
			}
			break;
		}
		case 'h': usage(stdout); return 0;
		default:
			fprintf(stderr, "lbsim calibrate --convergence: the options are --target, --smooth and -o "
				"(lbsim calibrate --convergence --help)\n");
			return LBS_EUSAGE;
		}
	}
	if (!csv || optind != argc || isnan(target)) {
		fprintf(stderr, "lbsim calibrate: --convergence LOSS.csv needs --target LOSS%s\n",
			optind != argc ? ", and nothing else" : "");
		return LBS_EUSAGE;
	}
	lbs_error err = { 0 };
	static curve cv[MAX_CURVES];
	size_t ncv = 0;
	lbs_status st = read_curves(csv, cv, &ncv, &err);
	lbs_conv_point pts[MAX_BATCHES] = { { 0, 0 } };
	size_t np = 0;
	lbs_conv_fit fit;
	if (st == LBS_OK) {
		/* Each batch's steps: the mean over its curves (seeds), all of
		 * which must reach the target. */
		printf("batch    curves  steps to loss %s (mean; least to most)\n", target_text);
		for (size_t i = 0; i < ncv; i++) {
			bool first = cv[i].staleness == 0;
			for (size_t j = 0; j < i; j++)
				first = first && !(cv[j].batch == cv[i].batch && cv[j].staleness == 0);
			if (!first)
				continue;
			double sum = 0, lo = INFINITY, hi = -INFINITY;
			size_t k = 0, missed = 0;
			for (size_t j = i; j < ncv; j++) {
				if (cv[j].batch != cv[i].batch || cv[j].staleness != 0)
					continue;
				double s = lbs_conv_steps_to(cv[j].step, cv[j].loss, cv[j].n, target, (size_t)smooth);
				k++;
				if (isnan(s)) {
					missed++;
					continue;
				}
				sum += s;
				lo = s < lo ? s : lo;
				hi = s > hi ? s : hi;
			}
			if (missed) {
				printf("%-8.0f %6zu  not reached by %zu of them: left out\n", cv[i].batch, k, missed);
				continue;
			}
			printf("%-8.0f %6zu  %.1f", cv[i].batch, k, sum / (double)k);
			if (k > 1)
				printf(" (%.1f to %.1f)", lo, hi);
			printf("\n");
			pts[np++] = (lbs_conv_point){ cv[i].batch, sum / (double)k };
		}
		st = lbs_conv_fit_points(pts, np, &fit, &err);
	}
	if (st == LBS_OK) {
		printf("fit: S(B) = %.6g (1 + %.6g / B) steps, r2 %.4f\n", fit.min_steps, fit.noise_scale, fit.r2);
		if (np >= 3) {
			printf("held-out (each batch predicted by the fit to the others):");
			for (size_t i = 0; i < np; i++)
				printf(" %.0f %+.1f%%;", pts[i].batch, 100 * fit.heldout[i]);
			printf(" mean |error| %.1f%%, worst %.1f%%\n", 100 * fit.heldout_mean_abs,
			       100 * fit.heldout_max_abs);
		} else {
			printf("held-out: none (two batches fix the two parameters: give three or more to test the "
			       "fit)\n");
		}
	}
	/* Curves trained with stale gradients (a staleness column, tau > 1,
	 * at the learning rate / tau): the exponent of the penalty. */
	stale_fit sf = { 0 };
	if (st == LBS_OK)
		st = fit_staleness(cv, ncv, pts, np, &fit, target, (size_t)smooth, &sf, &err);
	for (size_t i = 0; i < ncv; i++) {
		free(cv[i].step);
		free(cv[i].loss);
	}
	if (st != LBS_OK) {
		fprintf(stderr, "lbsim calibrate: %s%s%s\n", st == LBS_EINPUT && !strstr(err.msg, csv) ? csv : "",
			st == LBS_EINPUT && !strstr(err.msg, csv) ? ": " : "", err.msg);
		return st;
	}
	FILE *out = output ? fopen(output, "w") : stdout;
	if (!out) {
		fprintf(stderr, "lbsim calibrate: %s: cannot write: %s\n", output, strerror(errno));
		return LBS_EIO;
	}
	fprintf(out, "; fitted by lbsim calibrate --convergence %s --target %s --smooth %ld to %zu batch sizes\n",
		csv, target_text, smooth, np);
	if (np >= 3)
		fprintf(out, "; held-out error (leave one batch out): mean %.1f%%, worst %.1f%%\n",
			100 * fit.heldout_mean_abs, 100 * fit.heldout_max_abs);
	if (sf.n >= 2)
		fprintf(out, "; staleness exponent's held-out error (leave one out): mean %.1f%%, worst %.1f%%\n",
			100 * sf.heldout_mean_abs, 100 * sf.heldout_max_abs);
	fprintf(out, "[convergence]\nmodel = gns\nnoise_scale = %.6g\nmin_steps = %.6g\n", fit.noise_scale,
		fit.min_steps);
	if (sf.n)
		fprintf(out, "staleness_penalty = inverse\nstaleness_exponent = %.6g\n", sf.exponent);
	bool failed = ferror(out);
	if (output && fclose(out) != 0)
		failed = true;
	if (failed) {
		fprintf(stderr, "lbsim calibrate: %s: write error\n", output ? output : "standard output");
		if (output)
			remove(output);
		return LBS_EIO;
	}
	if (output)
		printf("written: %s\n", output);
	return 0;
}
