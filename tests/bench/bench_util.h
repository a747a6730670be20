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

#endif /* NPUIPC_BENCH_UTIL_H */
