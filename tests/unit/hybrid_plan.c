/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Hand-made plans of the hybrid engine for the unit tests (hybrid_plan.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hybrid/scenario.h"
#include "tests/unit/hybrid_plan.h"
#include "tests/unit/suites.h"

void test_plan_init(test_plan *tp, int d, int p, int v, int m, int schedule, double tf, double tb)
{
	memset(tp, 0, sizeof *tp);
	lbs_hy_plan *pl = &tp->pl;
	*pl = (lbs_hy_plan){ .d = d, .p = p, .t = 1, .v = v, .m = m, .schedule = schedule };
	size_t G = (size_t)(d * p), gv = G * (size_t)v;
	CU_ASSERT_FATAL(lbs_hy_plan_layout(NULL, NULL, G, v, p, false) <= sizeof tp->buf / sizeof tp->buf[0]);
	lbs_hy_plan_layout(pl, tp->buf, G, v, p, false);
	for (size_t i = 0; i < gv; i++) {
		pl->fwd_s[i] = tf;
		pl->bwd_s[i] = tb;
	}
}

void test_plan_slow_replica(test_plan *tp, int r, double a)
{
	size_t G = (size_t)(tp->pl.d * tp->pl.p), p = (size_t)tp->pl.p;
	CU_ASSERT_FATAL(G <= sizeof tp->avail / sizeof tp->avail[0]);
	for (size_t g = 0; g < G; g++) {
		/* group g is stage g mod p of replica g / p */
		tp->avail[g] = (lbs_hy_avail){ 1, &tp->t0[g], &tp->lvl[g] };
		tp->lvl[g] = g / p == (size_t)r ? a : 1;
	}
	tp->pl.avail = tp->avail;
}

double test_plan_run(const lbs_hy_plan *pl, int steps, size_t g, lbs_hy_account *acc)
{
	lbs_error err = { 0 };
	lbs_hy_graph gr;
	lbs_hy_sim sim;
	if (lbs_hy_graph_build(&gr, pl, &err) != LBS_OK) {
		fprintf(stderr, "%s\n", err.msg);
		CU_FAIL_FATAL("graph");
	}
	CU_ASSERT_FATAL(lbs_hy_sim_create(&sim, &gr, &err) == LBS_OK);
	double step = NAN, start = 0;
	for (int i = 0; i < steps; i++) {
		start = sim.now_s;
		CU_ASSERT_FATAL(lbs_hy_sim_step(&sim, &step, &err) == LBS_OK);
	}
	if (acc)
		lbs_hy_account_group(&sim, g, start, step, acc);
	lbs_hy_sim_destroy(&sim);
	lbs_hy_graph_free(&gr);
	return step;
}
