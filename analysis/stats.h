/* stats.h: two-sample tests, a bootstrap interval and a rank correlation,
 * as pure functions over arrays (no I/O). Distributions come from GSL; the
 * mean and sample std are metrics.h's mean_std. The definitions below are
 * the whole contract; docs/statistics.md says the same for readers of the
 * report.
 *
 * Every function refuses (returns -1 and fills err with one line naming
 * the bad input) a NaN or infinite value, a sample too small for the
 * statistic, and a NULL array. On success it returns 0. */
#ifndef GATELAB_STATS_H
#define GATELAB_STATS_H

#include <stddef.h>

/* Welch's unequal-variance t-test of mean(a) = mean(b), two-sided.
 *   t  = (mean_a - mean_b) / sqrt(s_a^2/na + s_b^2/nb), s^2 the sample
 *        variance (n - 1 denominator)
 *   df = (s_a^2/na + s_b^2/nb)^2 /
 *        ((s_a^2/na)^2/(na-1) + (s_b^2/nb)^2/(nb-1))    (Welch-Satterthwaite)
 *   p  = 2 Q_t(|t|; df), Q_t the upper tail of Student's t (GSL).
 * Needs na, nb >= 2. When both samples have zero variance the test is
 * degenerate and we define: equal means -> t = 0, p = 1; different means
 * -> t = +-inf, p = 0; df is NaN in both cases. */
typedef struct {
    double mean_a, mean_b; /* sample means */
    double t, df, p;
} StatsWelch;
int stats_welch(StatsWelch *out, const double *a, int na, const double *b, int nb, char *err,
                size_t errlen);

/* Midranks of x[n] (1-based; a group of tied values all get the mean of
 * the ranks they span) into rank[n]. */
int stats_midranks(double *rank, const double *x, int n, char *err, size_t errlen);

/* Exact two-sided Mann-Whitney (Wilcoxon rank-sum) test.
 *   U = R_a - na(na+1)/2, R_a the sum of a's midranks in the pooled sample.
 *   Null distribution: every one of the C(na+nb, na) ways to choose which
 *   pooled midranks belong to a is equally likely (the exact permutation
 *   distribution of the midrank sum; without ties this is the classical
 *   exact U distribution, with ties it is conditional on the tie pattern).
 *   p = min(1, 2 min(P(U <= U_obs), P(U >= U_obs))).
 * All values equal gives p = 1. Needs na, nb >= 1 and na + nb <=
 * STATS_MW_MAX_N (the counting is a dynamic programme over subsets by
 * size and doubled rank sum, exact in integers). */
#define STATS_MW_MAX_N 100
typedef struct {
    double u; /* U of sample a; U_b = na nb - U */
    double p;
} StatsMannWhitney;
int stats_mann_whitney(StatsMannWhitney *out, const double *a, int na, const double *b, int nb,
                       char *err, size_t errlen);

/* Percentile bootstrap confidence interval for mean(a) - mean(b).
 * Each of `resamples` draws resamples a (na values) and then b (nb values)
 * with replacement, uniformly, from GSL's mt19937 seeded with `seed`, and
 * records mean(a*) - mean(b*). The interval is the (1-level)/2 and
 * (1+level)/2 quantiles of the sorted draws, interpolated linearly between
 * order statistics (gsl_stats_quantile_from_sorted_data: position
 * f (resamples - 1)). Deterministic for a given (input, resamples, seed).
 * Needs na, nb >= 1, resamples >= 2, 0 < level < 1. The report uses
 * STATS_BOOT_RESAMPLES, STATS_BOOT_SEED and level 0.95. */
#define STATS_BOOT_RESAMPLES 10000
#define STATS_BOOT_SEED 20250101UL
typedef struct {
    double diff;   /* observed mean(a) - mean(b) */
    double lo, hi; /* the interval */
} StatsCI;
int stats_bootstrap_diff_ci(StatsCI *out, const double *a, int na, const double *b, int nb,
                            int resamples, unsigned long seed, double level, char *err,
                            size_t errlen);

/* Spearman's rank correlation of (x[i], y[i]), i < n, with a two-sided
 * p-value for rho = 0.
 *   rho = Pearson correlation of the midranks of x and of y.
 *   n <= STATS_SPEARMAN_EXACT_MAX: exact permutation test, every one of the
 *     n! pairings of y's ranks with x's equally likely;
 *     p = min(1, 2 min(P(rho <= rho_obs), P(rho >= rho_obs))).
 *   larger n: t = rho sqrt((n-2)/(1-rho^2)), p = 2 Q_t(|t|; n-2)
 *     (p = 0 when |rho| = 1).
 * Needs n >= 2 (n = 2 gives rho = +-1, p = 1) and neither x nor y constant
 * (rho is undefined then: refused). */
#define STATS_SPEARMAN_EXACT_MAX 9
typedef struct {
    double rho, p;
    int exact; /* 1: permutation p-value, 0: t approximation */
} StatsSpearman;
int stats_spearman(StatsSpearman *out, const double *x, const double *y, int n, char *err,
                   size_t errlen);

#endif
