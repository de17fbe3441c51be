/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lbsim trace benchmarks: how long loading a trace takes and what it costs
 * in memory.
 *
 *   bench_traces [--quick] [ROWS]
 *
 * For each case a file of ROWS rows (default 1,000,000) is written to
 * $TMPDIR, then loaded REPEATS times through the reader a scenario would
 * use (libcsv parsing, validation, grouping); the best wall time is
 * reported, with the heap the loaded set keeps (counted from its arrays and
 * measured with mallinfo2) per row and per sample (a sample is one value of
 * one column at one index). --quick loads 10x fewer rows. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/heap.h"
#include "util/clock.h"
#include "traces/reader.h"
#include "traces/series.h"

#define REPEATS 3

typedef struct bench_case {
	const char *format;
	const char *what;
	size_t values_per_row;
	void (*write)(FILE *f, size_t rows);
} bench_case;

/* A 30 s step availability trace with a CPU reading: what a user exports
 * from their own monitoring. Values vary so the parser sees real digits. */
static void write_lbsim(FILE *f, size_t rows)
{
	fprintf(f, "# lbsim-trace 1\ntime_s,availability,cpu_util\n");
	for (size_t i = 0; i < rows; i++)
		fprintf(f, "%zu,%.4f,%.3f\n", 30 * i, 0.5 + (double)(i * 7919 % 1000) / 2000.0,
			(double)(i * 104729 % 1000) / 1000.0);
}

static void write_lbsim_one(FILE *f, size_t rows)
{
	fprintf(f, "# lbsim-trace 1\ntime_s,availability\n");
	for (size_t i = 0; i < rows; i++)
		fprintf(f, "%zu,%.4f\n", 30 * i, 0.5 + (double)(i * 7919 % 1000) / 2000.0);
}

/* CloudWatch's form: a timestamp to parse on every row. */
static void write_cloudwatch(FILE *f, size_t rows)
{
	fprintf(f, "timestamp,value\n");
	for (size_t i = 0; i < rows; i++) {
		long long t = 1392388200LL + 300LL * (long long)i; /* 2014-02-14 14:30 onwards */
		long long d = t / 86400, s = t % 86400;
		/* civil_from_days (H. Hinnant) */
		long long z = d + 719468, era = z / 146097, doe = z - era * 146097;
		long long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
		long long y = yoe + era * 400, doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
		long long mp = (5 * doy + 2) / 153, dd = doy - (153 * mp + 2) / 5 + 1;
		long long m = mp < 10 ? mp + 3 : mp - 9;
		fprintf(f, "%04lld-%02lld-%02lld %02lld:%02lld:%02lld,%.3f\n", y + (m <= 2), m, dd, s / 3600,
			s / 60 % 60, s % 60, (double)(i * 7919 % 10000) / 100.0);
	}
}

/* machine_usage of 1,000 machines, rows in time order (machines
 * interleaved), so every row is grouped by machine and sorted. */
static void write_alibaba(FILE *f, size_t rows)
{
	for (size_t i = 0; i < rows; i++)
		fprintf(f, "m_%zu,%zu,%zu,%zu,,,12.5,10.25,3\n", i % 1000, 10 * (i / 1000),
			i * 7919 % 100, 20 + i * 104729 % 80);
}

static const bench_case cases[] = {
	{ "lbsim", "lbsim format, time_s + availability", 1, write_lbsim_one },
	{ "lbsim", "lbsim format, time_s + availability + cpu_util", 2, write_lbsim },
	{ "cloudwatch", "cloudwatch timestamp,value (timestamps parsed)", 1, write_cloudwatch },
	{ "alibaba-v2018", "alibaba-v2018, 1000 machines, grouped and sorted", 2, write_alibaba },
};

int main(int argc, char **argv)
{
	size_t rows = 1000000;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0) {
			rows /= 10;
		} else {
			char *end;
			unsigned long long v = strtoull(argv[i], &end, 10);
			if (*end || v == 0) {
				fprintf(stderr, "usage: %s [--quick] [ROWS]\n", argv[0]);
				return 2;
			}
			rows = (size_t)v;
		}
	}
	const char *dir = getenv("TMPDIR");
	printf("lbsim trace bench: loading %zu rows, best of %d, one core\n", rows, REPEATS);
	printf("%-52s %9s %10s %11s %11s %12s\n", "case", "load_s", "Mrows/s", "file_MB", "B/row",
	       "B/sample");
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		const bench_case *bc = &cases[k];
		char path[1024];
		snprintf(path, sizeof path, "%s/lbsim-bench-trace-XXXXXX", dir && *dir ? dir : "/tmp");
		int fd = mkstemp(path);
		FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
		if (!f) {
			perror("bench_traces: temporary trace");
			return 4;
		}
		bc->write(f, rows);
		long file_bytes = ftell(f);
		if (fclose(f) != 0) {
			perror("bench_traces: temporary trace");
			unlink(path);
			return 4;
		}
		const lbs_trace_reader *r = lbs_trace_reader_find(bc->format);
		double best = 1e300;
		size_t held = 0, counted = 0;
		for (int rep = 0; rep < REPEATS; rep++) {
			lbs_error err = { 0 };
			lbs_series_set *s;
			size_t before = heap_in_use();
			double t0 = lbs_monotonic_s();
			if (r->read(path, NULL, &s, &err) != LBS_OK) {
				fprintf(stderr, "bench_traces: %s\n", err.msg);
				unlink(path);
				return 1;
			}
			double wall = lbs_monotonic_s() - t0;
			held = heap_in_use() - before;
			counted = lbs_series_bytes(s);
			if (s->n_rows != rows) {
				fprintf(stderr, "bench_traces: read %zu rows of %zu\n", s->n_rows, rows);
				return 1;
			}
			best = wall < best ? wall : best;
			lbs_series_set_destroy(s);
		}
		unlink(path);
		/* The measured heap includes malloc's own overhead; report the
		 * larger of the two counts. */
		size_t bytes = held > counted ? held : counted;
		printf("%-52s %9.3f %10.2f %11.1f %11.1f %12.1f\n", bc->what, best, (double)rows / best / 1e6,
		       (double)file_bytes / 1e6, (double)bytes / (double)rows,
		       (double)bytes / (double)(rows * bc->values_per_row));
		fflush(stdout);
	}
	return 0;
}
