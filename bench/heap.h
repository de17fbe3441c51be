/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The heap in use (glibc's mallinfo2), for the benchmarks' memory figures. */
#ifndef LBS_BENCH_HEAP_H
#define LBS_BENCH_HEAP_H

#include <malloc.h>
#include <stddef.h>

static inline size_t heap_in_use(void)
{
	struct mallinfo2 m = mallinfo2();
	return m.uordblks + m.hblkhd;
}

#endif
