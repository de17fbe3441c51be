/* SPDX-License-Identifier: GPL-3.0-or-later */
/* External programs (GNU parallel, gnuplot): finding them before use, so a
 * missing one is reported by name and package instead of failing later;
 * and whole reads and writes on the pipes and sockets of child processes. */
#ifndef LBS_PROC_H
#define LBS_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "util/error.h"

/* Looks `name` up in PATH like a shell; on success writes its path to buf. */
bool lbs_proc_find(const char *name, char *buf, size_t len);

/* Forks a child joined to its parent by two pipes (buffered output is
 * flushed first, so nothing is written twice). In the parent *pid > 0,
 * *to_fd writes to the child and *from_fd reads from it; in the child
 * *pid == 0 and the same two names are its own ends: *from_fd reads what
 * the parent writes, *to_fd writes back. LBS_EINTERNAL (nothing left open)
 * if a pipe or the fork fails. */
lbs_status lbs_proc_fork_piped(pid_t *pid, int *to_fd, int *from_fd, lbs_error *err);

/* Writes or reads all n bytes, again after EINTR and short counts; false
 * on an error or end of file first. */
bool lbs_write_all(int fd, const void *buf, size_t n);
bool lbs_read_all(int fd, void *buf, size_t n);

/* CPU time process `pid` has used, in seconds, from /proc/PID/schedstat
 * (nanoseconds; NaN if it cannot be read). Read from outside, it does not
 * make the kernel account the process's running time as reading one's own
 * CPU clock does, which under a CFS quota can throttle it right there
 * (doc/validation.md). */
double lbs_proc_cpu_s(pid_t pid);

#endif
