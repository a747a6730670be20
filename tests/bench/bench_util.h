/* SPDX-License-Identifier: GPL-2.0 */
/* Timing helpers shared by the benchmarks. */
#ifndef NPUIPC_BENCH_UTIL_H
#define NPUIPC_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline double bench_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median of @n samples; reorders them. */
static inline double bench_median(double *v, int n)
{
	qsort(v, n, sizeof(*v), bench_cmp_double);
	return v[n / 2];
}

/*
 * The ratio @subject / @floor measured in @batches interleaved batches of
 * @rounds samples each (batch b at [b * @rounds]): per batch, the ratio of
 * the two medians. Returns the median of those ratios, the verdict's
 * figure, and sets *@lo and *@hi to their spread. Reorders the samples
 * within each batch. At most 64 batches.
 */
static inline double bench_batch_ratio(double *subject, double *floor, int batches, int rounds,
				       double *lo, double *hi)
{
	double ratios[64];
	int b;

	*lo = 1e300;
	*hi = 0;
	for (b = 0; b < batches && b < 64; b++) {
		ratios[b] = bench_median(subject + b * rounds, rounds) /
			    bench_median(floor + b * rounds, rounds);
		if (ratios[b] < *lo)
			*lo = ratios[b];
		if (ratios[b] > *hi)
			*hi = ratios[b];
	}
	return bench_median(ratios, b);
}

/*
 * Judges one goal, @ratio against @limit (@cmp "<=" or ">="), in the one
 * line format that tools/bench collects for `make bench`'s summary:
 *   goal: NAME: 1.31x <= 1.50x: met      (or MISSED)
 * A missed goal is reported, not failed: timings move with the host.
 */
static inline void bench_goal(const char *name, double ratio, const char *cmp, double limit)
{
	int met = cmp[0] == '<' ? ratio <= limit : ratio >= limit;

	printf("goal: %s: %.2fx %s %.2fx: %s\n", name, ratio, cmp, limit, met ? "met" : "MISSED");
}

#define BENCH_NR_HUGEPAGES "/proc/sys/vm/nr_hugepages"

/* The system's reserved 2 MiB hugetlb pages; -1 if unknown. */
static inline long bench_read_nr_hugepages(void)
{
	FILE *f = fopen(BENCH_NR_HUGEPAGES, "r");
	long n = -1;

	if (f) {
		if (fscanf(f, "%ld", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

/* Reserves @n hugetlb pages in all; 0 or -1. */
static inline int bench_write_nr_hugepages(long n)
{
	FILE *f = fopen(BENCH_NR_HUGEPAGES, "w");
	int ok;

	if (!f)
		return -1;
	ok = fprintf(f, "%ld\n", n) > 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

#endif /* NPUIPC_BENCH_UTIL_H */
