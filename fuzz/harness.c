/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The scratch folder and file of the fuzzing harnesses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz/harness.h"

static char dir[256];
static char path[512];

static void remove_dir(void)
{
	char cmd[300];
	if (dir[0] && snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir) < (int)sizeof cmd && system(cmd) != 0)
		fprintf(stderr, "fuzz: could not remove %s\n", dir);
}

const char *lbs_fuzz_dir(void)
{
	if (!dir[0]) {
		const char *tmp = getenv("TMPDIR");
		snprintf(dir, sizeof dir, "%s/lbsim-fuzz.XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(dir)) {
			perror("fuzz: mkdtemp");
			abort();
		}
		atexit(remove_dir);
	}
	return dir;
}

const char *lbs_fuzz_file(const char *name, const uint8_t *data, size_t size)
{
	snprintf(path, sizeof path, "%s/%s", lbs_fuzz_dir(), name);
	FILE *f = fopen(path, "wb");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
		perror(path);
		abort();
	}
	return path;
}
