/* stats_internal.h: helpers shared by the stats*.c files (not part of the
 * stats.h interface). Defined in stats.c. */
#ifndef GATELAB_STATS_INTERNAL_H
#define GATELAB_STATS_INTERNAL_H

#include <stddef.h>

/* 0 when x is non-NULL and holds n >= min_n values, all finite; else -1
 * with an error naming the sample `name` (and the bad value's index). */
int stats_check_sample(const double *x, int n, int min_n, const char *name, char *err,
                       size_t errlen);

/* 1 when all n values of x are equal. */
int stats_is_constant(const double *x, int n);

/* Midranks of x[n] doubled (integers: midranks are multiples of 1/2). */
int stats_doubled_ranks(long *r2, const double *x, int n, char *err, size_t errlen);

/* Two-sided p from the null counts cnt[w] of an integer statistic and its
 * observed value: min(1, 2 min(P(S <= obs), P(S >= obs))). */
double stats_two_sided_p(const double *cnt, long w, long obs);

/* Heap's algorithm as a sequence of swaps: with c[k] zeroed before the
 * first call, each call stores in *a, *b the two positions whose swap
 * gives the next of the k! orders of k items and returns 1; after the
 * last order it returns 0 (and leaves c zeroed). */
int stats_heap_swap(int *c, int k, int *a, int *b);

#endif
