/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Running a scenario in a test and keeping every iteration's record. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/suites.h"

bool rel_eq(double a, double b) { return fabs(a - b) <= 1e-12 * fabs(b); }

lbs_status capture_record(void *ctx, const lbs_iteration_record *r, lbs_error *err)
{
	capture *c = ctx;
	if (r->iteration == c->fail_at)
		return lbs_error_set(err, LBS_EIO, "injected failure");
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 64;
		c->rec = realloc(c->rec, c->cap * sizeof *c->rec);
		c->compute = realloc(c->compute, c->cap * r->n_workers * sizeof *c->compute);
		c->batch = realloc(c->batch, c->cap * r->n_workers * sizeof *c->batch);
		c->vars = realloc(c->vars, c->cap * LBS_POLICY_VARS_MAX * sizeof *c->vars);
	}
	c->n_workers = r->n_workers;
	c->rec[c->n] = *r;
	memcpy(c->compute + c->n * r->n_workers, r->compute_s, r->n_workers * sizeof(double));
	memcpy(c->batch + c->n * r->n_workers, r->batch, r->n_workers * sizeof(int64_t));
	memcpy(c->vars + c->n * LBS_POLICY_VARS_MAX, r->vars, r->n_vars * sizeof *r->vars);
	c->sim_time_s = r->end_s;
	c->n++;
	return LBS_OK;
}

void capture_free(capture *c)
{
	free(c->rec);
	free(c->compute);
	free(c->batch);
	free(c->vars);
	memset(c, 0, sizeof *c);
}

lbs_status capture_simulate(const char *text, const char *const *ov, size_t nov, const char *policy,
			    capture *c, lbs_error *err)
{
	return capture_simulate_with(text, ov, nov, policy, NULL, c, err);
}

lbs_status capture_simulate_with(const char *text, const char *const *ov, size_t nov, const char *policy,
				 const lbs_policy_ops *plugin, capture *c, lbs_error *err)
{
	char *path = write_temp(text);
	lbs_scenario sc;
	lbs_run run;
	memset(c, 0, sizeof *c);
	c->fail_at = -1;
	lbs_status st = lbs_scenario_load(&sc, path, ov, nov, err);
	unlink(path);
	free(path);
	if (st != LBS_OK)
		return st;
	if (plugin) { /* the scenario takes it as a plugin of its own, with no file to close */
		if (!(sc.plugins = calloc(1, sizeof *sc.plugins))) {
			lbs_scenario_destroy(&sc);
			return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
		}
		sc.plugins[0].policy = plugin;
		sc.n_plugins = 1;
	}
	st = lbs_run_create(&run, &sc, policy, err);
	if (st == LBS_OK) {
		st = lbs_run_execute(&run, capture_record, c, NULL, err);
		c->stats = run.stats;
		lbs_run_destroy(&run);
	}
	lbs_scenario_destroy(&sc);
	return st;
}

bool capture_same(const capture *x, const capture *y)
{
	if (x->n != y->n || x->n_workers != y->n_workers)
		return false;
	for (size_t k = 0; k < x->n; k++) {
		const lbs_iteration_record *a = &x->rec[k], *b = &y->rec[k];
		if (a->start_s != b->start_s || a->end_s != b->end_s || a->compute_end_s != b->compute_end_s ||
		    a->straggler_gap_s != b->straggler_gap_s || a->global_batch != b->global_batch)
			return false;
	}
	size_t m = x->n * x->n_workers;
	return !memcmp(x->compute, y->compute, m * sizeof(double)) &&
	       !memcmp(x->batch, y->batch, m * sizeof(int64_t));
}
