/* stats.c: the two-sample tests (Welch, TOST, Mann-Whitney), ranks, the
 * bootstrap interval and Spearman's rho of stats.h, and the helpers of
 * stats_internal.h. Definitions are in the header; this file only computes
 * them. GSL supplies the t distribution, sorting, quantiles, correlation
 * and the bootstrap's generator. */
#include "stats.h"
#include "stats_internal.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>

#include "metrics.h"
#include "util.h"

/* ---------------------------------------------------------------- input */

/* Contract in stats_internal.h. */
int stats_check_sample(const double *x, int n, int min_n, const char *name, char *err,
                       size_t errlen) {
    if (n < min_n)
        return seterr(err, errlen, "sample %s has %d values, needs at least %d", name, n, min_n);
    if (!x) return seterr(err, errlen, "sample %s is NULL", name);
    for (int i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return seterr(err, errlen, "sample %s: value %d is %g (not finite)", name, i, x[i]);
    return 0;
}

/* Contract in stats_internal.h. */
int stats_is_constant(const double *x, int n) {
    for (int i = 1; i < n; i++)
        if (x[i] != x[0]) return 0;
    return 1;
}

/* ---------------------------------------------------------------- Welch */

/* The parts of Welch's t shared by stats_welch and stats_tost_welch: both
 * means, se2 = s_a^2/na + s_b^2/nb and the Welch-Satterthwaite df (NaN
 * when se2 = 0). */
typedef struct {
    double mean_a, mean_b, se2, df;
} WelchParts;

static WelchParts welch_parts(const double *a, int na, const double *b, int nb) {
    WelchParts w;
    double sa, sb;
    mean_std(a, na, &w.mean_a, &sa);
    mean_std(b, nb, &w.mean_b, &sb);
    double qa = sa * sa / na, qb = sb * sb / nb;
    w.se2 = qa + qb;
    w.df = w.se2 > 0.0 ? w.se2 * w.se2 / (qa * qa / (na - 1) + qb * qb / (nb - 1)) : NAN;
    return w;
}

int stats_welch(StatsWelch *out, const double *a, int na, const double *b, int nb, char *err,
                size_t errlen) {
    if (stats_check_sample(a, na, 2, "a", err, errlen) ||
        stats_check_sample(b, nb, 2, "b", err, errlen))
        return -1;
    WelchParts w = welch_parts(a, na, b, nb);
    double diff = w.mean_a - w.mean_b;
    out->mean_a = w.mean_a, out->mean_b = w.mean_b, out->df = w.df;
    if (w.se2 == 0.0) { /* both constant: the defined degenerate case */
        out->t = diff == 0.0 ? 0.0 : copysign(INFINITY, diff);
        out->p = diff == 0.0 ? 1.0 : 0.0;
        return 0;
    }
    out->t = diff / sqrt(w.se2);
    out->p = fmin(1.0, 2.0 * gsl_cdf_tdist_Q(fabs(out->t), out->df));
    return 0;
}

/* ----------------------------------------------------------------- TOST */

/* One-sided p of H0 "x <= 0" from x's estimate over its se = sqrt(se2):
 * Q_t(x / se; df); se = 0 gives 0 when x > 0, else 1. */
static double one_sided_p(double x, double se2, double df) {
    if (se2 == 0.0) return x > 0.0 ? 0.0 : 1.0;
    return gsl_cdf_tdist_Q(x / sqrt(se2), df);
}

int stats_tost_welch(StatsTost *out, const double *a, int na, const double *b, int nb,
                     double margin, char *err, size_t errlen) {
    if (stats_check_sample(a, na, 2, "a", err, errlen) ||
        stats_check_sample(b, nb, 2, "b", err, errlen))
        return -1;
    if (!(isfinite(margin) && margin > 0.0))
        return seterr(err, errlen, "TOST margin %g is not a finite value > 0", margin);
    WelchParts w = welch_parts(a, na, b, nb);
    out->diff = w.mean_a - w.mean_b;
    out->margin = margin;
    out->p_lower = one_sided_p(out->diff + margin, w.se2, w.df);
    out->p_upper = one_sided_p(margin - out->diff, w.se2, w.df);
    out->p = fmax(out->p_lower, out->p_upper);
    return 0;
}

/* ---------------------------------------------------------------- ranks */

int stats_midranks(double *rank, const double *x, int n, char *err, size_t errlen) {
    if (stats_check_sample(x, n, 1, "x", err, errlen)) return -1;
    size_t *idx = malloc((size_t)n * sizeof *idx);
    if (!idx) return seterr(err, errlen, "out of memory ranking %d values", n);
    gsl_sort_index(idx, x, 1, (size_t)n);
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && x[idx[j + 1]] == x[idx[i]]) j++;
        double r = 0.5 * (double)(i + j) + 1.0; /* mean of ranks i+1..j+1 */
        for (int k = i; k <= j; k++) rank[idx[k]] = r;
        i = j + 1;
    }
    free(idx);
    return 0;
}

/* Contract in stats_internal.h. */
int stats_doubled_ranks(long *r2, const double *x, int n, char *err, size_t errlen) {
    double *r = malloc((size_t)n * sizeof *r);
    if (!r) return seterr(err, errlen, "out of memory ranking %d values", n);
    int rc = stats_midranks(r, x, n, err, errlen);
    for (int i = 0; rc == 0 && i < n; i++) r2[i] = lround(2.0 * r[i]);
    free(r);
    return rc;
}

/* --------------------------------------------------------- Mann-Whitney */

/* cnt[k * w + s]: number of k-subsets of r2[0..n) with sum s, k <= na. */
static void subset_sum_counts(double *cnt, const long *r2, int n, int na, long w) {
    cnt[0] = 1.0;
    for (int i = 0; i < n; i++)
        for (int k = (i + 1 < na ? i + 1 : na); k >= 1; k--)
            for (long s = w - 1; s >= r2[i]; s--) cnt[k * w + s] += cnt[(k - 1) * w + s - r2[i]];
}

/* Contract in stats_internal.h. */
double stats_two_sided_p(const double *cnt, long w, long obs) {
    double le = 0, ge = 0, all = 0;
    for (long s = 0; s < w; s++) {
        all += cnt[s];
        if (s <= obs) le += cnt[s];
        if (s >= obs) ge += cnt[s];
    }
    return fmin(1.0, 2.0 * fmin(le, ge) / all);
}

/* Pooled doubled midranks r2[na + nb] and the doubled rank sum of a. */
static int pooled_ranks(long *r2, long *obs, const double *a, int na, const double *b, int nb,
                        char *err, size_t errlen) {
    int n = na + nb;
    double *x = malloc((size_t)n * sizeof *x);
    if (!x) return seterr(err, errlen, "out of memory pooling %d values", n);
    for (int i = 0; i < na; i++) x[i] = a[i];
    for (int i = 0; i < nb; i++) x[na + i] = b[i];
    int rc = stats_doubled_ranks(r2, x, n, err, errlen);
    free(x);
    *obs = 0;
    for (int i = 0; rc == 0 && i < na; i++) *obs += r2[i];
    return rc;
}

int stats_mann_whitney(StatsMannWhitney *out, const double *a, int na, const double *b, int nb,
                       char *err, size_t errlen) {
    if (stats_check_sample(a, na, 1, "a", err, errlen) ||
        stats_check_sample(b, nb, 1, "b", err, errlen))
        return -1;
    int n = na + nb;
    if (n > STATS_MW_MAX_N)
        return seterr(err, errlen, "exact Mann-Whitney takes at most %d values; %d + %d here",
                      STATS_MW_MAX_N, na, nb);
    long w = (long)n * (n + 1) + 1, obs; /* doubled sums lie in 0..n(n+1) */
    long *r2 = malloc((size_t)n * sizeof *r2);
    double *cnt = calloc((size_t)(na + 1) * (size_t)w, sizeof *cnt);
    int rc = !r2 || !cnt ? seterr(err, errlen, "out of memory for %d values", n)
                         : pooled_ranks(r2, &obs, a, na, b, nb, err, errlen);
    if (rc == 0) {
        subset_sum_counts(cnt, r2, n, na, w);
        out->u = 0.5 * (double)obs - 0.5 * na * (na + 1.0);
        out->p = stats_two_sided_p(cnt + (long)na * w, w, obs);
    }
    free(r2);
    free(cnt);
    return rc;
}

/* ------------------------------------------------------------ bootstrap */

/* Mean of n values drawn with replacement from x[n]. */
static double resample_mean(gsl_rng *r, const double *x, int n) {
    double s = 0.0;
    for (int i = 0; i < n; i++) s += x[gsl_rng_uniform_int(r, (unsigned long)n)];
    return s / n;
}

int stats_bootstrap_diff_ci(StatsCI *out, const double *a, int na, const double *b, int nb,
                            int resamples, unsigned long seed, double level, char *err,
                            size_t errlen) {
    if (stats_check_sample(a, na, 1, "a", err, errlen) ||
        stats_check_sample(b, nb, 1, "b", err, errlen))
        return -1;
    if (resamples < 2) return seterr(err, errlen, "bootstrap resamples %d < 2", resamples);
    if (!(level > 0.0 && level < 1.0))
        return seterr(err, errlen, "confidence level %g is not in (0, 1)", level);
    double *d = malloc((size_t)resamples * sizeof *d);
    gsl_rng *r = d ? gsl_rng_alloc(gsl_rng_mt19937) : NULL;
    if (!r) {
        free(d);
        return seterr(err, errlen, "out of memory for %d bootstrap resamples", resamples);
    }
    gsl_rng_set(r, seed);
    for (int k = 0; k < resamples; k++) {
        double ma = resample_mean(r, a, na);
        d[k] = ma - resample_mean(r, b, nb);
    }
    gsl_sort(d, 1, (size_t)resamples);
    out->diff = gsl_stats_mean(a, 1, (size_t)na) - gsl_stats_mean(b, 1, (size_t)nb);
    out->lo = gsl_stats_quantile_from_sorted_data(d, 1, (size_t)resamples, (1 - level) / 2);
    out->hi = gsl_stats_quantile_from_sorted_data(d, 1, (size_t)resamples, (1 + level) / 2);
    gsl_rng_free(r);
    free(d);
    return 0;
}

/* ------------------------------------------------------------- Spearman */

/* S = sum rx2[i] * ry2[i]: rho is increasing in S over permutations of y. */
static long long rank_dot(const long *rx2, const long *ry2, int n) {
    long long s = 0;
    for (int i = 0; i < n; i++) s += (long long)rx2[i] * ry2[i];
    return s;
}

/* Contract in stats_internal.h. */
int stats_heap_swap(int *c, int k, int *a, int *b) {
    int i = 0;
    while (i < k && c[i] >= i) c[i++] = 0;
    if (i >= k) return 0;
    *a = i % 2 ? c[i] : 0, *b = i;
    c[i]++;
    return 1;
}

/* Exact two-sided p over all n! orders of ry2 (ry2 ends permuted). */
static double spearman_exact_p(const long *rx2, long *ry2, int n) {
    long long obs = rank_dot(rx2, ry2, n);
    double le = 0, ge = 0, all = 0;
    int c[STATS_SPEARMAN_EXACT_MAX] = {0};
    for (int i, j;;) {
        long long s = rank_dot(rx2, ry2, n);
        all += 1, le += s <= obs, ge += s >= obs;
        if (!stats_heap_swap(c, n, &i, &j)) break;
        long t = ry2[i];
        ry2[i] = ry2[j], ry2[j] = t;
    }
    return fmin(1.0, 2.0 * fmin(le, ge) / all);
}

static double spearman_t_p(double rho, int n) {
    if (fabs(rho) >= 1.0) return 0.0;
    double t = rho * sqrt((n - 2) / (1.0 - rho * rho));
    return fmin(1.0, 2.0 * gsl_cdf_tdist_Q(fabs(t), n - 2));
}

/* rho from doubled ranks, then the p-value for n. */
static void spearman_from_ranks(StatsSpearman *out, long *rx2, long *ry2, double *tmp, int n) {
    for (int i = 0; i < n; i++) tmp[i] = (double)rx2[i], tmp[n + i] = (double)ry2[i];
    out->rho = gsl_stats_correlation(tmp, 1, tmp + n, 1, (size_t)n);
    out->exact = n <= STATS_SPEARMAN_EXACT_MAX;
    out->p = out->exact ? spearman_exact_p(rx2, ry2, n) : spearman_t_p(out->rho, n);
}

int stats_spearman(StatsSpearman *out, const double *x, const double *y, int n, char *err,
                   size_t errlen) {
    if (stats_check_sample(x, n, 2, "x", err, errlen) ||
        stats_check_sample(y, n, 2, "y", err, errlen))
        return -1;
    if (stats_is_constant(x, n) || stats_is_constant(y, n))
        return seterr(err, errlen, "Spearman's rho is undefined: %s is constant",
                      stats_is_constant(x, n) ? "x" : "y");
    long *r2 = malloc(2 * (size_t)n * sizeof *r2);
    double *tmp = malloc(2 * (size_t)n * sizeof *tmp);
    int rc = !r2 || !tmp ? seterr(err, errlen, "out of memory for %d pairs", n)
                         : stats_doubled_ranks(r2, x, n, err, errlen);
    if (rc == 0) rc = stats_doubled_ranks(r2 + n, y, n, err, errlen);
    if (rc == 0) spearman_from_ranks(out, r2, r2 + n, tmp, n);
    free(r2);
    free(tmp);
    return rc;
}

double stats_mw_min_p(int na, int nb) {
    double c = 1.0;
    for (int i = 1; i <= na; i++) c = c * (nb + i) / i;
    return 2.0 / c < 1.0 ? 2.0 / c : 1.0;
}

double stats_spearman_min_p(int n) {
    if (n > STATS_SPEARMAN_EXACT_MAX) return 0.0;
    double f = 1.0;
    for (int i = 2; i <= n; i++) f *= i;
    return 2.0 / f < 1.0 ? 2.0 / f : 1.0;
}

double stats_binom_upper(long long k, long long n, double p0) {
    if (n < 1 || k > n || !(p0 > 0.0 && p0 < 1.0) || n > UINT_MAX) return NAN;
    if (k <= 0) return 1.0;
    return gsl_cdf_binomial_Q((unsigned int)(k - 1), p0, (unsigned int)n);
}
