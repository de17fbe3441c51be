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

int lbs_fuzz_split(const uint8_t *data, size_t size, const char *name, const char **file, const char **overrides,
		   int max, char **rest)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t file_len = nul ? (size_t)(nul - data) : size;
	*file = lbs_fuzz_file(name, data, file_len);
	*rest = NULL;
	int n = 0;
	if (nul) {
		size_t len = size - file_len - 1;
		if (!(*rest = malloc(len + 1)))
			return -1;
		memcpy(*rest, nul + 1, len);
		(*rest)[len] = '\0';
		for (char *p = *rest; n < max && p <= *rest + len; p += strlen(p) + 1)
			overrides[n++] = p;
	}
	return n;
}
