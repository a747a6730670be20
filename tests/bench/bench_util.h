/* SPDX-License-Identifier: GPL-2.0 */
/* Timing helpers shared by the benchmarks. */
#ifndef NPUIPC_BENCH_UTIL_H
#define NPUIPC_BENCH_UTIL_H

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

#endif /* NPUIPC_BENCH_UTIL_H */
