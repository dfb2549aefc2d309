/* stats_family.c: the p-value families and count statistics of stats.h:
 * Holm and Benjamini-Hochberg adjustment, the Clopper-Pearson interval and
 * Fisher's exact test. Definitions are in the header. GSL supplies the
 * sorting, the beta quantiles and log-factorials. */
#include "stats.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_sf_gamma.h>
#include <gsl/gsl_sort.h>
#include <math.h>
#include <stdlib.h>

#include "util.h"

/* ------------------------------------------------------------- families */

/* A family of n >= 1 p-values, each in [0, 1]. */
static int check_family(const double *p, int n, char *err, size_t errlen) {
    if (n < 1) return seterr(err, errlen, "p-value family has %d values, needs at least 1", n);
    if (!p) return seterr(err, errlen, "p-value family is NULL");
    for (int i = 0; i < n; i++)
        if (!(p[i] >= 0.0 && p[i] <= 1.0))
            return seterr(err, errlen, "p-value %d is %g (not in [0, 1])", i, p[i]);
    return 0;
}

/* Indices of p in ascending order of value (malloc'd; NULL when out of
 * memory, with err set). */
static size_t *ascending(const double *p, int n, char *err, size_t errlen) {
    size_t *idx = malloc((size_t)n * sizeof *idx);
    if (!idx) seterr(err, errlen, "out of memory sorting %d p-values", n);
    else gsl_sort_index(idx, p, 1, (size_t)n);
    return idx;
}

/* Each index is read (p) before the same index is written (adj), and never
 * again: adj may be p. */
int stats_holm(double *adj, const double *p, int n, char *err, size_t errlen) {
    if (check_family(p, n, err, errlen)) return -1;
    size_t *idx = ascending(p, n, err, errlen);
    if (!idx) return -1;
    double run = 0.0;
    for (int j = 0; j < n; j++) {
        run = fmax(run, fmin(1.0, (double)(n - j) * p[idx[j]]));
        adj[idx[j]] = run;
    }
    free(idx);
    return 0;
}

int stats_bh(double *q, const double *p, int n, char *err, size_t errlen) {
    if (check_family(p, n, err, errlen)) return -1;
    size_t *idx = ascending(p, n, err, errlen);
    if (!idx) return -1;
    double run = 1.0;
    for (int j = n - 1; j >= 0; j--) {
        run = fmin(run, (double)n * p[idx[j]] / (double)(j + 1));
        q[idx[j]] = run;
    }
    free(idx);
    return 0;
}

/* ------------------------------------------------------- Clopper-Pearson */

int stats_clopper_pearson(double *lo, double *hi, int k, int n, double level, char *err,
                          size_t errlen) {
    if (n < 1) return seterr(err, errlen, "Clopper-Pearson: n = %d, needs at least 1", n);
    if (k < 0 || k > n) return seterr(err, errlen, "Clopper-Pearson: k = %d not in [0, %d]", k, n);
    if (!(level > 0.0 && level < 1.0))
        return seterr(err, errlen, "confidence level %g is not in (0, 1)", level);
    double a = 1.0 - level;
    gsl_error_handler_t *prev = gsl_set_error_handler_off(); /* report, never abort */
    double l = k == 0 ? 0.0 : gsl_cdf_beta_Pinv(a / 2, k, n - k + 1);
    double h = k == n ? 1.0 : gsl_cdf_beta_Pinv(1.0 - a / 2, k + 1, n - k);
    gsl_set_error_handler(prev);
    if (!(isfinite(l) && isfinite(h)))
        return seterr(err, errlen, "Clopper-Pearson: beta quantile failed for k = %d, n = %d", k,
                      n);
    *lo = l, *hi = h;
    return 0;
}

/* ---------------------------------------------------------------- Fisher */

/* log of 1 / (a! b! c! d!), the table's hypergeometric weight up to the
 * margins' constant. The four terms are added in ascending order of the
 * cell, so tables with the same cells in other places (mirror images, equal
 * in probability) get bitwise the same value. */
static double log_weight(int a, int b, int c, int d) {
    int v[4] = {a, b, c, d};
    for (int i = 1; i < 4; i++)
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            int t = v[j];
            v[j] = v[j - 1], v[j - 1] = t;
        }
    double s = 0.0;
    for (int i = 0; i < 4; i++) s += gsl_sf_lnfact((unsigned)v[i]);
    return -s;
}

static int check_count(int k, int n, const char *row, char *err, size_t errlen) {
    if (n < 0) return seterr(err, errlen, "Fisher: row %s has n = %d < 0", row, n);
    if (k < 0 || k > n)
        return seterr(err, errlen, "Fisher: row %s has k = %d not in [0, %d]", row, k, n);
    return 0;
}

int stats_fisher_exact(double *p, int ka, int na, int kb, int nb, char *err, size_t errlen) {
    if (check_count(ka, na, "a", err, errlen) || check_count(kb, nb, "b", err, errlen)) return -1;
    int col = ka + kb, lo = col - nb > 0 ? col - nb : 0, hi = col < na ? col : na;
    if (lo == hi) { /* a zero row or column: only the observed table */
        *p = 1.0;
        return 0;
    }
    double obs = log_weight(ka, na - ka, kb, nb - kb), top = -INFINITY;
    for (int x = lo; x <= hi; x++) top = fmax(top, log_weight(x, na - x, col - x, nb - col + x));
    double in = 0.0, all = 0.0;
    int every = 1;
    for (int x = lo; x <= hi; x++) {
        double lw = log_weight(x, na - x, col - x, nb - col + x), w = exp(lw - top);
        all += w;
        if (lw <= obs + log1p(1e-14)) in += w;
        else every = 0;
    }
    *p = every ? 1.0 : fmin(1.0, in / all);
    return 0;
}

int stats_fisher_one_sided(double *p, int ka, int na, int kb, int nb, int lower, char *err,
                           size_t errlen) {
    if (check_count(ka, na, "a", err, errlen) || check_count(kb, nb, "b", err, errlen)) return -1;
    int col = ka + kb, lo = col - nb > 0 ? col - nb : 0, hi = col < na ? col : na;
    double top = -INFINITY, in = 0.0, all = 0.0;
    for (int x = lo; x <= hi; x++) top = fmax(top, log_weight(x, na - x, col - x, nb - col + x));
    for (int x = lo; x <= hi; x++) {
        double w = exp(log_weight(x, na - x, col - x, nb - col + x) - top);
        all += w;
        if (lower ? x <= ka : x >= ka) in += w;
    }
    *p = fmin(1.0, in / all);
    return 0;
}
