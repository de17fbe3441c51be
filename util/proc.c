/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "util/proc.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool lbs_proc_find(const char *name, char *buf, size_t len)
{
	const char *env = getenv("PATH");
	for (const char *p = env && *env ? env : NULL; p;) {
		const char *colon = strchr(p, ':');
		size_t n = colon ? (size_t)(colon - p) : strlen(p);
		snprintf(buf, len, "%.*s/%s", (int)n, n ? p : ".", name);
		struct stat sb;
		if (stat(buf, &sb) == 0 && S_ISREG(sb.st_mode) && access(buf, X_OK) == 0)
			return true;
		p = colon ? colon + 1 : NULL;
	}
	return false;
}

bool lbs_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n > 0) {
		ssize_t k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		p += k;
		n -= (size_t)k;
	}
	return true;
}

bool lbs_read_all(int fd, void *buf, size_t n)
{
	char *p = buf;
	while (n > 0) {
		ssize_t k = read(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		p += k;
		n -= (size_t)k;
	}
	return true;
}

lbs_status lbs_proc_fork_piped(pid_t *pid, int *to_fd, int *from_fd, lbs_error *err)
{
	int down[2], up[2]; /* parent to child, child to parent */
	*pid = 0;
	*to_fd = *from_fd = -1;
	if (pipe(down) != 0)
		return lbs_error_set(err, LBS_EINTERNAL, "pipe: %s", strerror(errno));
	if (pipe(up) != 0) {
		int e = errno;
		close(down[0]);
		close(down[1]);
		return lbs_error_set(err, LBS_EINTERNAL, "pipe: %s", strerror(e));
	}
	fflush(NULL);
	pid_t child = fork();
	if (child < 0) {
		int e = errno;
		close(down[0]);
		close(down[1]);
		close(up[0]);
		close(up[1]);
		return lbs_error_set(err, LBS_EINTERNAL, "fork: %s", strerror(e));
	}
	if (child == 0) {
		close(down[1]);
		close(up[0]);
		*from_fd = down[0];
		*to_fd = up[1];
		return LBS_OK;
	}
	close(down[0]);
	close(up[1]);
	*pid = child;
	*to_fd = down[1];
	*from_fd = up[0];
	return LBS_OK;
}

double lbs_proc_cpu_s(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/schedstat", (long)pid);
	FILE *f = pid > 0 ? fopen(path, "r") : NULL;
	if (!f)
		return NAN;
	unsigned long long ns;
	int ok = fscanf(f, "%llu", &ns) == 1;
	fclose(f);
	return ok ? 1e-9 * (double)ns : NAN;
}
