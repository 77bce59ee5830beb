/* bench_time.h — the clock and the median the C benchmarks (canon_bench.c, policy_bench.c) report figures with. */
#ifndef AIRLOCK_BENCH_TIME_H
#define AIRLOCK_BENCH_TIME_H

#include <stddef.h>
#include <stdlib.h>
#include <time.h>

/* CLOCK_MONOTONIC now, in nanoseconds. */
static inline double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The median of v[0..n) (n > 0; an even n gives the upper one); sorts v in place. */
static inline double median(double *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_double);
	return v[n / 2];
}

#endif
