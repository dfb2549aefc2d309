/* stats_paired.c: the paired-sample tests of stats.h (paired t, exact
 * Wilcoxon signed-rank) over the differences x[i] - y[i]. Definitions are
 * in the header. GSL supplies the t distribution. */
#include "stats.h"
#include "stats_internal.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>

#include "metrics.h"
#include "util.h"

/* d[i] = x[i] - y[i] into a malloc'd array (*d); refuses bad samples and a
 * difference that overflows. */
static int differences(double **d, const double *x, const double *y, int n, int min_n, char *err,
                       size_t errlen) {
    *d = NULL;
    if (stats_check_sample(x, n, min_n, "x", err, errlen) ||
        stats_check_sample(y, n, min_n, "y", err, errlen))
        return -1;
    *d = malloc((size_t)n * sizeof **d);
    if (!*d) return seterr(err, errlen, "out of memory for %d differences", n);
    for (int i = 0; i < n; i++) {
        (*d)[i] = x[i] - y[i];
        if (!isfinite((*d)[i])) return seterr(err, errlen, "difference %d (x - y) overflows", i);
    }
    return 0;
}

/* --------------------------------------------------------------- paired t */

int stats_paired_t(StatsPaired *out, const double *x, const double *y, int n, char *err,
                   size_t errlen) {
    double *d, s;
    if (differences(&d, x, y, n, 2, err, errlen)) {
        free(d);
        return -1;
    }
    mean_std(d, n, &out->mean_diff, &s);
    free(d);
    double m = out->mean_diff, half = gsl_cdf_tdist_Pinv(0.975, n - 1.0) * s / sqrt((double)n);
    out->df = n - 1;
    out->lo = m - half, out->hi = m + half;
    if (s == 0.0) { /* all differences equal: as stats_welch's degenerate case */
        out->t = m == 0.0 ? 0.0 : copysign(INFINITY, m);
        out->p = m == 0.0 ? 1.0 : 0.0;
        return 0;
    }
    out->t = m / (s / sqrt((double)n));
    out->p = fmin(1.0, 2.0 * gsl_cdf_tdist_Q(fabs(out->t), out->df));
    return 0;
}

/* One side of stats_paired_tost: Q_t(z / se) with the degenerate se = 0. */
static double tost_side(double z, double se, int n) {
    if (se == 0.0) return z > 0 ? 0.0 : 1.0;
    return gsl_cdf_tdist_Q(z / se, n - 1.0);
}

int stats_tost_paired(StatsTost *out, const double *x, const double *y, int n, double margin,
                      char *err, size_t errlen) {
    if (!(margin > 0) || !isfinite(margin))
        return seterr(err, errlen, "paired TOST: margin %g is not finite and > 0", margin);
    double *d, m, s;
    if (differences(&d, x, y, n, 2, err, errlen)) {
        free(d);
        return -1;
    }
    mean_std(d, n, &m, &s);
    free(d);
    double se = s / sqrt((double)n);
    out->diff = m, out->margin = margin;
    out->p_lower = tost_side(m + margin, se, n);
    out->p_upper = tost_side(margin - m, se, n);
    out->p = fmax(out->p_lower, out->p_upper);
    return 0;
}

/* --------------------------------------------------------------- Wilcoxon */

/* The exact p of the doubled positive rank sum obs among the m doubled
 * ranks r2: counts of every subset sum (each subset is one sign pattern). */
static int signed_rank_p(double *p, const long *r2, int m, long obs, char *err, size_t errlen) {
    long w = (long)m * (m + 1) + 1; /* doubled sums lie in 0..m(m+1) */
    double *cnt = calloc((size_t)w, sizeof *cnt);
    if (!cnt) return seterr(err, errlen, "out of memory for %d signed ranks", m);
    cnt[0] = 1.0;
    for (int i = 0; i < m; i++)
        for (long s = w - 1; s >= r2[i]; s--) cnt[s] += cnt[s - r2[i]];
    *p = stats_two_sided_p(cnt, w, obs);
    free(cnt);
    return 0;
}

/* W+ and its exact p for the m >= 1 non-zero differences d[m]. */
static int signed_rank_test(StatsWilcoxon *out, const double *d, int m, char *err, size_t errlen) {
    long *r2 = malloc((size_t)m * sizeof *r2);
    double *ad = malloc((size_t)m * sizeof *ad);
    int rc = !r2 || !ad ? seterr(err, errlen, "out of memory for %d signed ranks", m) : 0;
    for (int i = 0; rc == 0 && i < m; i++) ad[i] = fabs(d[i]);
    if (rc == 0) rc = stats_doubled_ranks(r2, ad, m, err, errlen);
    if (rc == 0) {
        long obs = 0;
        for (int i = 0; i < m; i++) obs += d[i] > 0.0 ? r2[i] : 0;
        out->w_plus = 0.5 * (double)obs;
        rc = signed_rank_p(&out->p, r2, m, obs, err, errlen);
    }
    free(r2);
    free(ad);
    return rc;
}

int stats_wilcoxon(StatsWilcoxon *out, const double *x, const double *y, int n, char *err,
                   size_t errlen) {
    if (n > STATS_WILCOXON_MAX_N)
        return seterr(err, errlen, "exact Wilcoxon: %d pairs, at most %d", n, STATS_WILCOXON_MAX_N);
    double *d;
    if (differences(&d, x, y, n, 1, err, errlen)) {
        free(d);
        return -1;
    }
    StatsWilcoxon w = {.w_plus = 0.0, .m = 0, .p = 1.0};
    for (int i = 0; i < n; i++)
        if (d[i] != 0.0) d[w.m++] = d[i]; /* zero differences dropped */
    int rc = w.m > 0 ? signed_rank_test(&w, d, w.m, err, errlen) : 0;
    if (rc == 0) *out = w;
    free(d);
    return rc;
}

/* ------------------------------------------------------- Hodges-Lehmann */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* c of stats.h's stats_hodges_lehmann: the largest c with P(W+ <= c) <=
 * tail for n untied ranks; -1 when P(W+ = 0) is already above tail. */
static long signed_rank_crit(int n, double tail, int *oom) {
    long w = (long)n * (n + 1) / 2 + 1, c = -1;
    double *cnt = calloc((size_t)w, sizeof *cnt), cum = 0, total = ldexp(1.0, n);
    *oom = !cnt;
    if (!cnt) return -1;
    cnt[0] = 1.0;
    for (int r = 1; r <= n; r++)
        for (long s = w - 1; s >= r; s--) cnt[s] += cnt[s - r];
    for (long s = 0; s < w; s++) {
        cum += cnt[s];
        if (cum / total > tail * (1 + 1e-12)) break;
        c = s;
    }
    free(cnt);
    return c;
}

int stats_hodges_lehmann(StatsShift *out, const double *x, const double *y, int n, double level,
                         char *err, size_t errlen) {
    if (n > STATS_WILCOXON_MAX_N)
        return seterr(err, errlen, "Hodges-Lehmann: %d pairs, at most %d", n, STATS_WILCOXON_MAX_N);
    if (!(level > 0 && level < 1))
        return seterr(err, errlen, "Hodges-Lehmann: level %g is not in (0, 1)", level);
    double *d;
    if (differences(&d, x, y, n, 1, err, errlen)) {
        free(d);
        return -1;
    }
    long N = (long)n * (n + 1) / 2, k = 0;
    double *a = malloc((size_t)N * sizeof *a);
    int oom = !a;
    for (int i = 0; a && i < n; i++)
        for (int j = i; j < n; j++) a[k++] = 0.5 * (d[i] + d[j]);
    free(d);
    long c = oom ? -1 : signed_rank_crit(n, 0.5 * (1 - level), &oom);
    if (oom) {
        free(a);
        return seterr(err, errlen, "out of memory for %d pairs' Walsh averages", n);
    }
    qsort(a, (size_t)N, sizeof *a, cmp_double);
    out->est = N % 2 ? a[N / 2] : 0.5 * (a[N / 2 - 1] + a[N / 2]);
    out->lo = c < 0 ? -INFINITY : a[c];
    out->hi = c < 0 ? INFINITY : a[N - 1 - c];
    free(a);
    return 0;
}
