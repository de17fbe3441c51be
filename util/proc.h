/* SPDX-License-Identifier: GPL-3.0-or-later */
/* External programs (GNU parallel, gnuplot): finding them before use, so a
 * missing one is reported by name and package instead of failing later. */
#ifndef LBS_PROC_H
#define LBS_PROC_H

#include <stdbool.h>
#include <stddef.h>

/* Looks `name` up in PATH like a shell; on success writes its path to buf. */
bool lbs_proc_find(const char *name, char *buf, size_t len);

#endif
