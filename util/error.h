/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Error reporting: functions return an lbs_status and fill an lbs_error with
 * a message that already names the file, line and key at fault. Only main()
 * prints and picks the exit code. */
#ifndef LBS_ERROR_H
#define LBS_ERROR_H

#include <stddef.h>

/* Each failure kind maps to one documented exit code (see doc/lbsim.1). */
typedef enum lbs_status {
	LBS_OK = 0,
	LBS_EUSAGE = 2,    /* bad command line */
	LBS_EINPUT = 3,    /* invalid or unreadable scenario, trace or profile */
	LBS_EIO = 4,       /* results could not be written */
	LBS_EINTERNAL = 5, /* a bug, or memory exhausted */
	LBS_ENOTESTBED = 6, /* the testbed cannot run here (not root, no cgroup cpu controller) */
	LBS_EMISMATCH = 7, /* lbsim validate: simulated and measured differ beyond the tolerance */
	LBS_EINTR = 130    /* stopped by SIGINT/SIGTERM */
} lbs_status;

#define LBS_ERROR_MAX 1024

typedef struct lbs_error {
	lbs_status status;
	char msg[LBS_ERROR_MAX];
} lbs_error;

/* Sets err (if not NULL) to status with a printf-style message and returns
 * status, so callers can write `return lbs_error_set(err, LBS_EINPUT, ...)`. */
lbs_status lbs_error_set(lbs_error *err, lbs_status status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prepends "prefix: " to an existing message (adds context on the way up). */
void lbs_error_prefix(lbs_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* snprintf that may truncate by design (messages, labels): always
 * terminates buf and returns it. */
char *lbs_fmt(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Allocation helpers that report exhaustion through err. */
void *lbs_calloc(size_t n, size_t size, lbs_error *err);

#endif
