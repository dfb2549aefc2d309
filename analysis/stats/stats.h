/* stats.h: two-sample, equivalence and paired tests, multiplicity
 * adjustment, intervals and tests for counts, a bootstrap interval and rank
 * correlations, as pure functions over arrays (no I/O). Distributions come
 * from GSL; the mean and sample std are metrics.h's mean_std. The
 * definitions below are the whole contract; docs/statistics.md says the
 * same for readers of the report. The code is split by concern:
 * stats.c (two samples, ranks, Spearman), stats_family.c (p-value families
 * and counts), stats_paired.c (paired samples), stats_within.c (the
 * within-group correlation).
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

/* TOST equivalence test of mean(a) and mean(b) within +-margin: two
 * one-sided Welch tests (t, se and df as stats_welch), diff = mean_a - mean_b,
 * se = sqrt(s_a^2/na + s_b^2/nb):
 *   p_lower = Q_t((diff + margin) / se; df)   H0: diff <= -margin
 *   p_upper = Q_t((margin - diff) / se; df)   H0: diff >= +margin
 *   p = max(p_lower, p_upper); equivalence within the margin at level alpha
 *   when p < alpha.
 * Both samples constant (se = 0): p_lower = 0 when diff > -margin, else 1;
 * p_upper = 0 when diff < margin, else 1. Needs na, nb >= 2 and a finite
 * margin > 0. */
typedef struct {
    double diff, margin, p_lower, p_upper, p;
} StatsTost;
int stats_tost_welch(StatsTost *out, const double *a, int na, const double *b, int nb,
                     double margin, char *err, size_t errlen);

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
 * STATS_MW_MAX_N. The counting is a dynamic programme over subsets by size
 * and doubled rank sum (integers, so equal sums compare exactly); the
 * counts, at most C(na + nb, na), are exact integers in a double up to
 * na + nb = 56 (20 + 20 included) and within ~1e-14 relative beyond. Its
 * time grows as (na + nb)^2 na nb and its memory as (na + nb)^2 na: 60 + 60
 * takes ~0.1 s, 100 + 100 ~1 s and 32 MB. */
#define STATS_MW_MAX_N 200
/* The smallest two-sided p the exact Mann-Whitney test can give with na and
 * nb values: 2 / C(na + nb, na) (one sample entirely below the other),
 * capped at 1. */
double stats_mw_min_p(int na, int nb);
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
/* The smallest two-sided p stats_spearman can give with n pairs: 2 / n!
 * (capped at 1) where the test is exact, 0 under the t approximation. */
double stats_spearman_min_p(int n);

/* Holm's step-down adjusted p-values for a family of n p-values, in the
 * input's order. With p_(1) <= ... <= p_(n) the ascending order,
 *   adj_(i) = max_{j <= i} min(1, (n - j + 1) p_(j)).
 * Tied p-values get the same adjusted value. adj may be p. Needs n >= 1
 * and every p in [0, 1]. */
int stats_holm(double *adj, const double *p, int n, char *err, size_t errlen);

/* Benjamini-Hochberg q-values (step-up false discovery rate), in the
 * input's order. With p_(1) <= ... <= p_(n) the ascending order,
 *   q_(i) = min_{j >= i} min(1, n p_(j) / j).
 * Tied p-values get the same q. q may be p. Needs n >= 1 and every p in
 * [0, 1]. */
int stats_bh(double *q, const double *p, int n, char *err, size_t errlen);

/* Clopper-Pearson exact interval for a binomial proportion, k successes
 * of n, at confidence `level` (0.95 for a 95% interval), a = 1 - level:
 *   lo = B^-1(a/2; k, n - k + 1)      (lo = 0 when k = 0)
 *   hi = B^-1(1 - a/2; k + 1, n - k)  (hi = 1 when k = n)
 * B^-1 the beta quantile (gsl_cdf_beta_Pinv). Needs n >= 1, 0 <= k <= n,
 * 0 < level < 1. Where GSL's inversion does not converge (far beyond seed
 * counts, e.g. k = 1 of n = 100000 at level 0.5) it is refused. */
int stats_clopper_pearson(double *lo, double *hi, int k, int n, double level, char *err,
                          size_t errlen);

/* The exact one-sided binomial test of k successes in n trials against
 * success probability p0 (0 < p0 < 1), upper tail: P(X >= k) for X ~
 * Binomial(n, p0) (gsl_cdf_binomial_Q(k - 1, p0, n); 1 when k <= 0). NaN
 * when n < 1, k > n or p0 is outside (0, 1). */
double stats_binom_upper(long long k, long long n, double p0);

/* Fisher's exact test on the 2x2 table [[ka, na - ka], [kb, nb - kb]]
 * (row a: ka of na, row b: kb of nb), two-sided as scipy.stats.fisher_exact
 * defines it: with the margins fixed, X = the top-left cell is
 * hypergeometric, and
 *   p = sum of P(X = x) over every x with P(X = x) <= P(X = ka) (1 + 1e-14),
 * capped at 1 (1e-14 is SciPy's relative tolerance for equal
 * probabilities; p = 1 when every table qualifies). A zero row or column
 * sum leaves one possible table: p = 1. Needs 0 <= ka <= na, 0 <= kb <= nb. */
int stats_fisher_exact(double *p, int ka, int na, int kb, int nb, char *err, size_t errlen);
/* The one-sided Fisher test of the same table: p = P(X <= ka) when lower
 * (H1: a's rate is below b's), else P(X >= ka), X hypergeometric with the
 * margins fixed (scipy.stats.fisher_exact, alternative "less" or
 * "greater"). */
int stats_fisher_one_sided(double *p, int ka, int na, int kb, int nb, int lower, char *err,
                           size_t errlen);

/* Paired t-test of mean(x - y) = 0, two-sided, over d[i] = x[i] - y[i]:
 *   t = mean(d) / (s_d / sqrt(n)), s_d the sample std, df = n - 1,
 *   p = 2 Q_t(|t|; df).
 * Zero variance (all d equal) as stats_welch: mean 0 -> t = 0, p = 1;
 * otherwise t = +-inf, p = 0 (df stays n - 1). Needs n >= 2. */
typedef struct {
    double mean_diff, t, df, p;
    double lo, hi; /* 95% interval of mean(d): mean_diff -+ t_{0.975; df} s_d / sqrt(n)
                    * (both mean_diff when s_d = 0) */
} StatsPaired;
int stats_paired_t(StatsPaired *out, const double *x, const double *y, int n, char *err,
                   size_t errlen);

/* Exact Wilcoxon signed-rank test of d[i] = x[i] - y[i], two-sided.
 *   Zero differences are dropped (SciPy's zero_method="wilcox"), leaving m.
 *   The |d| get midranks 1..m; W+ = the sum of the ranks of positive d.
 *   Null distribution: all 2^m sign assignments equally likely, counted by
 *   a dynamic programme over the doubled rank sum (integers, so equal sums
 *   compare exactly; the counts are exact up to m = 53 and within ~1e-16
 *   relative beyond). With ties it is conditional on the tie pattern.
 *   p = min(1, 2 min(P(W+ <= W+_obs), P(W+ >= W+_obs))).
 * m = 0 gives W+ = 0, p = 1. Needs 1 <= n <= STATS_WILCOXON_MAX_N. */
#define STATS_WILCOXON_MAX_N 200
typedef struct {
    double w_plus; /* the statistic */
    int m;         /* non-zero differences */
    double p;
} StatsWilcoxon;
int stats_wilcoxon(StatsWilcoxon *out, const double *x, const double *y, int n, char *err,
                   size_t errlen);

/* Paired TOST: equivalence of x and y within +-margin over the
 * differences d[i] = x[i] - y[i], two one-sided paired t-tests (t on
 * d + margin and on d - margin, df = n - 1, as stats_paired_t):
 *   p_lower = Q_t((mean(d) + margin) / (s_d / sqrt(n)); df)   H0: mean(d) <= -margin
 *   p_upper = Q_t((margin - mean(d)) / (s_d / sqrt(n)); df)   H0: mean(d) >= +margin
 *   p = max(p_lower, p_upper); diff = mean(d).
 * All d equal (s_d = 0): p_lower = 0 when mean(d) > -margin, else 1;
 * p_upper = 0 when mean(d) < margin, else 1. Needs n >= 2 and a finite
 * margin > 0. */
int stats_tost_paired(StatsTost *out, const double *x, const double *y, int n, double margin,
                      char *err, size_t errlen);

/* The Hodges-Lehmann estimate of the paired shift, the estimate that goes
 * with the Wilcoxon signed-rank test, with its exact interval, over all n
 * differences d[i] = x[i] - y[i] (zeros kept):
 *   the N = n(n+1)/2 Walsh averages (d_i + d_j)/2, i <= j, sorted: A_(1..N);
 *   est = their median;
 *   c = the largest integer with P(W+ <= c) <= (1 - level)/2 under the
 *   signed-rank null of n untied ranks (all 2^n sign patterns);
 *   lo = A_(c+1), hi = A_(N-c) (Hollander & Wolfe, section 3.3).
 * When even P(W+ = 0) = 2^-n is above (1 - level)/2 the interval is
 * unbounded: lo = -inf, hi = +inf. Needs 1 <= n <= STATS_WILCOXON_MAX_N
 * and 0 < level < 1. */
typedef struct {
    double est, lo, hi;
} StatsShift;
int stats_hodges_lehmann(StatsShift *out, const double *x, const double *y, int n, double level,
                         char *err, size_t errlen);

/* Rank correlation of x and y within groups, for observations that come in
 * groups (e.g. the seeds of one setting), without treating them as
 * independent. group[i] in [0, n) labels observation i.
 *   Rank x over all n observations (midranks), subtract from each rank its
 *   group's mean rank: e_x; the same for y: e_y.
 *   r = sum e_x e_y / sqrt(sum e_x^2 sum e_y^2) (Pearson of the residuals;
 *   both have mean 0).
 *   p: y's values are permuted within each group (x and the groups kept).
 *   When the number of such permutations, prod over groups of size!, is
 *   <= STATS_WITHIN_EXACT_MAX, every one is enumerated (exact = 1) and
 *   p = #{|r*| >= |r|} / #permutations (the identity included); otherwise
 *   `resamples` permutations are drawn (each group shuffled uniformly, GSL
 *   mt19937 seeded with `seed`; exact = 0) and
 *   p = (1 + #{|r*| >= |r|}) / (1 + resamples).
 *   |r*| >= |r| is judged with a tolerance of 1e-10 in r for rounding.
 * groups = the number of non-empty groups. Needs n >= 2, resamples >= 1, and
 * x and y each varying within at least one group (r is undefined
 * otherwise: refused). The report uses STATS_WITHIN_RESAMPLES and
 * STATS_WITHIN_SEED. */
#define STATS_WITHIN_EXACT_MAX 200000
#define STATS_WITHIN_RESAMPLES 10000
#define STATS_WITHIN_SEED 20250102UL
typedef struct {
    double r, p;
    int exact;  /* 1: every permutation enumerated, 0: Monte Carlo */
    int groups; /* non-empty groups */
} StatsWithin;
int stats_within_group_corr(StatsWithin *out, const double *x, const double *y, const int *group,
                            int n, int resamples, unsigned long seed, char *err, size_t errlen);

#endif
