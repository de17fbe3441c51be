/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The speed of lbsim whatif on the three shipped traces: reading the gzipped
 * CSV, building the model, one no-delay replay on the event engine and as
 * a plain topological sweep (events per second), and the whole analysis
 * (every replay: base, no-delay, ideal, attribution, tests, policies).
 * Usage: bench/bench_whatif [TRACE_DIR] (default traces/data/bytedance-whatif). */
#include <stdio.h>
#include <stdlib.h>

#include "util/clock.h"
#include "whatif/whatif.h"

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "traces/data/bytedance-whatif";
	static const char *const names[] = { "ST", "AR", "SE" };
	printf("%-4s %8s %9s %9s %12s %12s %10s %10s\n", "job", "rows", "read_s", "model_s", "replay_s",
	       "sweep_s", "events/s", "analyse_s");
	for (int k = 0; k < 3; k++) {
		char path[2048];
		snprintf(path, sizeof path, "%s/trace-%s.csv.gz", dir, names[k]);
		lbs_error err = { 0 };
		lbs_ops_trace t;
		lbs_wi_model m;
		lbs_wi_result r;
		double t0 = lbs_monotonic_s();
		if (lbs_ops_read(path, &t, &err) != LBS_OK) {
			fprintf(stderr, "bench_whatif: %s\n", err.msg);
			return 1;
		}
		double t1 = lbs_monotonic_s();
		if (lbs_wi_model_build(&m, &t, 1, &err) != LBS_OK) {
			fprintf(stderr, "bench_whatif: %s\n", err.msg);
			return 1;
		}
		double t2 = lbs_monotonic_s();
		size_t cells = m.n_inst * m.n_ops;
		double *val = malloc(cells * sizeof *val), *T = malloc(m.n_steps * sizeof *T);
		double *s = malloc(cells * sizeof *s), *e = malloc(cells * sizeof *e);
		for (size_t c = 0; c < cells; c++)
			val[c] = m.group_comm[m.group_of[c % m.n_ops]] ? m.x[c] : m.d[c];
		int reps = 10;
		double t3 = lbs_monotonic_s();
		for (int i = 0; i < reps; i++)
			lbs_wi_replay(&m, val, NULL, T, NULL, NULL, &err);
		double t4 = lbs_monotonic_s();
		for (int i = 0; i < reps; i++)
			lbs_wi_replay_sweep(&m, val, NULL, T, s, e);
		double t5 = lbs_monotonic_s();
		if (lbs_wi_analyse(&m, &r, &err) != LBS_OK) {
			fprintf(stderr, "bench_whatif: %s\n", err.msg);
			return 1;
		}
		double t6 = lbs_monotonic_s();
		printf("%-4s %8zu %9.3f %9.3f %12.5f %12.5f %10.3g %10.3f\n", names[k], t.n, t1 - t0, t2 - t1,
		       (t4 - t3) / reps, (t5 - t4) / reps, (double)cells * reps / (t4 - t3), t6 - t5);
		lbs_wi_result_free(&r);
		lbs_wi_model_free(&m);
		lbs_ops_free(&t);
		free(val);
		free(T);
		free(s);
		free(e);
	}
	return 0;
}
