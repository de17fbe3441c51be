/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Running a hybrid scenario from the command line (doc/hybrid.md). */
#ifndef LBS_HYBRID_CMD_H
#define LBS_HYBRID_CMD_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

/* Loads, simulates and records the hybrid scenario at path (output: a
 * results database, or NULL; ops_path: the per-operation trace to write,
 * its metadata at ops_path.meta.yaml, or NULL). When *interrupt becomes
 * non-zero (SIGINT, SIGTERM) the run stops within an event, records
 * nothing and removes the files it created (exit status 130); so does any
 * failure. Returns the exit status. */
int lbs_hybrid_run(const char *path, const char *const *overrides, size_t n_overrides, const char *output,
		   const char *ops_path, bool quiet, const volatile sig_atomic_t *interrupt);

/* lbs_hybrid_run n_seeds times, with the scenario's seed and the n_seeds - 1
 * after it (each run recorded in output), then a line of the mean step
 * time and the time of the run's steps, each with its 95% interval
 * (Student's t over the seeds). */
int lbs_hybrid_run_seeds(const char *path, const char *const *overrides, size_t n_overrides, const char *output,
			 size_t n_seeds, bool quiet, const volatile sig_atomic_t *interrupt);

#endif
