/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Running a hybrid scenario from the command line (doc/hybrid.md). */
#ifndef LBS_HYBRID_CMD_H
#define LBS_HYBRID_CMD_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Loads, simulates and records the hybrid scenario at path (output: a
 * results database, or NULL; ops_path: the per-operation trace to write,
 * its metadata at ops_path.meta.yaml, or NULL). When *interrupt becomes
 * non-zero (SIGINT, SIGTERM) the run stops within an event, records
 * nothing and removes the files it created (exit status 130); so does any
 * failure. Returns the exit status. */
int lbs_hybrid_run(const char *path, const char *const *overrides, size_t n_overrides, const char *output,
		   const char *ops_path, bool quiet, const volatile sig_atomic_t *interrupt);

/* What lbs_hybrid_run_seeds measured: per seed, the mean step time and
 * the time of the run's steps (pauses included). */
typedef struct lbs_hy_seeds {
	char name[512], policy[512];
	int64_t seed0, steps;
	size_t n;            /* the seeds run */
	double *mean_step_s, *total_s;
} lbs_hy_seeds;

/* lbs_hybrid_run n_seeds times, quietly, with the scenario's seed and the
 * n_seeds - 1 after it (each run recorded in output); the exit status of
 * the first run that fails, else 0. */
int lbs_hybrid_run_seeds(const char *path, const char *const *overrides, size_t n_overrides, const char *output,
			 size_t n_seeds, const volatile sig_atomic_t *interrupt, lbs_hy_seeds *out);
void lbs_hy_seeds_free(lbs_hy_seeds *s);

#endif
