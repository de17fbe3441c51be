/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Finding and loading lbsim's modules (lbsim-blas.so, lbsim-cuda.so). */
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/calib/bench.h"
#include "util/error.h"

void *lbs__module_open(const char *env, const char *file, char *why, size_t len)
{
	char here[PATH_MAX], beside[PATH_MAX + 64], installed[PATH_MAX + 64];
	const char *tried[3];
	size_t n = 0;
	const char *set = getenv(env);
	if (set && *set) {
		tried[n++] = set;
	} else {
		ssize_t got = readlink("/proc/self/exe", here, sizeof here - 1);
		if (got > 0) {
			here[got] = '\0';
			char *slash = strrchr(here, '/');
			if (slash) {
				lbs_fmt(beside, sizeof beside, "%.*s/%s", (int)(slash - here), here, file);
				tried[n++] = beside;
			}
		}
		lbs_fmt(installed, sizeof installed, "%s/%s", LBS_PKGLIBDIR, file);
		tried[n++] = installed;
	}
	lbs_fmt(why, len, "%s not found", file);
	for (size_t i = 0; i < n; i++) {
		if (access(tried[i], F_OK) != 0 && i + 1 < n)
			continue;
		/* RTLD_NODELETE: a library with a thread pool (OpenBLAS) is
		 * not safe to unload, and a second load finds it in place. */
		void *handle = dlopen(tried[i], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
		if (handle)
			return handle;
		lbs_fmt(why, len, "%s", dlerror());
	}
	return NULL;
}
