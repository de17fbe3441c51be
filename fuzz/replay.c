/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Replays files through a fuzzing harness without libFuzzer, so that
 * `make check` runs the regression corpus with the normal compiler (and,
 * in CI, under ASan and UBSan): `replay_NAME FILE-OR-FOLDER...`. A crash
 * or sanitizer report fails the test; the harness's return value does not
 * (rejecting bad input is the point). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz/harness.h"

static int replay_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return 1;
	}
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (len == cap) {
			cap = cap ? 2 * cap : 4096;
			uint8_t *nb = realloc(buf, cap);
			if (!nb) {
				fprintf(stderr, "replay: out of memory reading %s\n", path);
				free(buf);
				fclose(f);
				return 1;
			}
			buf = nb;
		}
		size_t got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (got == 0)
			break;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		perror(path);
		free(buf);
		return 1;
	}
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	(*n)++;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay(const char *path, size_t *n)
{
	struct stat sb;
	if (stat(path, &sb) != 0) {
		perror(path);
		return 1;
	}
	if (!S_ISDIR(sb.st_mode))
		return replay_file(path, n);
	DIR *d = opendir(path);
	if (!d) {
		perror(path);
		return 1;
	}
	char **names = NULL;
	size_t count = 0;
	int bad = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		char **nn = realloc(names, (count + 1) * sizeof *names);
		if (!nn || !(nn[count] = malloc(strlen(path) + strlen(e->d_name) + 2))) {
			names = nn ? nn : names;
			bad = 1;
			break;
		}
		names = nn;
		sprintf(names[count++], "%s/%s", path, e->d_name);
	}
	closedir(d);
	if (count) /* qsort must not be given NULL, even for 0 elements */
		qsort(names, count, sizeof *names, by_name);
	for (size_t i = 0; i < count; i++) {
		bad |= replay(names[i], n);
		free(names[i]);
	}
	free(names);
	return bad;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE-OR-FOLDER...\n", argv[0]);
		return 2;
	}
	size_t n = 0;
	int bad = 0;
	for (int i = 1; i < argc; i++)
		bad |= replay(argv[i], &n);
	printf("%s: replayed %zu inputs\n", argv[0], n);
	return bad;
}
