/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Fuzzing harnesses: each fuzz/fuzz_*.c defines LLVMFuzzerTestOneInput,
 * linked either with libFuzzer (`make fuzz`, clang) or with fuzz/replay.c
 * (`make check`, any compiler), which feeds it the regression corpus. */
#ifndef LBS_FUZZ_HARNESS_H
#define LBS_FUZZ_HARNESS_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The harness's private scratch folder (created on first use, removed at
 * exit). */
const char *lbs_fuzz_dir(void);

/* Writes size bytes of data to NAME in the scratch folder and returns its
 * path (valid until the next call). Aborts on I/O errors: they are the
 * harness's, not the code under test's. */
const char *lbs_fuzz_file(const char *name, const uint8_t *data, size_t size);

/* Splits an input into a file and its --set overrides: the bytes up to
 * the first NUL go to NAME (lbs_fuzz_file, its path into *file); each
 * NUL-separated piece after it, at most max, is an override, copied into
 * *rest (free it) and pointed to by overrides[]. Returns how many, or -1
 * when out of memory. */
int lbs_fuzz_split(const uint8_t *data, size_t size, const char *name, const char **file, const char **overrides,
		   int max, char **rest);

/* fuzz/fuzz_simulate.c: runs the scenario the bytes choose and checks it
 * (aborting on a finding). 0: refused as bad input; 1: ran to its end; 2:
 * stopped at the event cap or the limit of simulated time. */
int lbs_fuzz_simulate(const uint8_t *data, size_t size);

#endif
