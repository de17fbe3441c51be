/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The speed and memory of the hybrid engine (doc/hybrid.md, "Scale"): one
 * job of bench/hybrid.ini at data-parallel degree DP (16 DP nodes of 8
 * GPUs), simulated for STEPS steps. Prints one row: GPUs, groups, ops a
 * step, the seconds to cost and build, CPU seconds per simulated step with
 * and without the per-group accounting, events per CPU second, and the
 * process's peak resident memory. The steps are timed in three rounds and
 * the fastest is reported: the machine is shared, and other processes
 * only ever slow a round down. Run each size in its own process (the peak
 * is the process's). Usage: bench/bench_hybrid SCENARIO DP [STEPS]. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "hybrid/hybrid.h"
#include "hybrid/scenario.h"
#include "util/clock.h"

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: bench_hybrid SCENARIO DP [STEPS]\n");
		return 2;
	}
	long dp = strtol(argv[2], NULL, 10), steps = argc > 3 ? strtol(argv[3], NULL, 10) : 10;
	char o1[64], o2[64];
	snprintf(o1, sizeof o1, "hybrid.dp=%ld", dp);
	snprintf(o2, sizeof o2, "nodes.dgx.count=%ld", 16 * dp);
	const char *ovr[] = { o1, o2 };
	lbs_error err = { 0 };
	lbs_hy_scenario sc;
	lbs_hy_built b;
	lbs_hy_graph gr;
	lbs_hy_sim sim;
	double t0 = lbs_cpu_time_s();
	if (lbs_hy_scenario_load(&sc, argv[1], ovr, 2, &err) != LBS_OK || lbs_hy_plan_build(&sc, &b, &err) != LBS_OK) {
		fprintf(stderr, "bench_hybrid: %s\n", err.msg);
		return 1;
	}
	double t1 = lbs_cpu_time_s();
	if (lbs_hy_graph_build(&gr, &b.plan, &err) != LBS_OK || lbs_hy_sim_create(&sim, &gr, &err) != LBS_OK) {
		fprintf(stderr, "bench_hybrid: %s\n", err.msg);
		return 1;
	}
	double t2 = lbs_cpu_time_s(), step_s, sum = 0, best = INFINITY, best_acct = INFINITY;
	lbs_hy_account acc;
	double check = 0;
	for (int round = 0; round < 3; round++) {
		double a = lbs_cpu_time_s();
		for (long i = 0; i < steps; i++) {
			if (lbs_hy_sim_step(&sim, &step_s, &err) != LBS_OK) {
				fprintf(stderr, "bench_hybrid: %s\n", err.msg);
				return 1;
			}
			sum += step_s;
		}
		double z = lbs_cpu_time_s();
		best = fmin(best, z - a);
		/* the same steps with every group's accounting, as a run records it */
		for (long i = 0; i < steps; i++) {
			double start = sim.now_s;
			if (lbs_hy_sim_step(&sim, &step_s, &err) != LBS_OK)
				return 1;
			for (size_t g = 0; g < gr.n_groups; g++) {
				lbs_hy_account_group(&sim, g, start, step_s, &acc);
				check += acc.compute_s;
			}
		}
		best_acct = fmin(best_acct, lbs_cpu_time_s() - z);
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double ev = (double)gr.n_ops * (double)steps;
	printf("%-8s %8s %10s %9s %9s %11s %13s %12s %9s %9s\n", "gpus", "groups", "ops/step", "cost_s", "build_s",
	       "ms/step", "ms/step+acct", "events/s", "steps/s", "rss_MB");
	printf("%-8ld %8zu %10zu %9.3f %9.3f %11.2f %13.2f %12.3g %9.2f %9.0f\n", dp * 16 * 8, gr.n_groups, gr.n_ops,
	       t1 - t0, t2 - t1, 1e3 * best / (double)steps, 1e3 * best_acct / (double)steps, ev / best,
	       (double)steps / best, (double)ru.ru_maxrss / 1024);
	fprintf(stderr, "mean simulated step %.4f s (check %.6g)\n", sum / (double)(3 * steps), check);
	lbs_hy_sim_destroy(&sim);
	lbs_hy_graph_free(&gr);
	lbs_hy_built_free(&b);
	lbs_hy_scenario_destroy(&sc);
	return 0;
}
