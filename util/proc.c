/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "util/proc.h"

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
