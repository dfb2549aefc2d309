/* test_stats.c: analysis/stats*.c against SciPy (the tables of
 * reference/stats_fixtures.h, written by reference/make_stats_fixtures.py),
 * plus the defined edge cases of stats.h: degenerate samples, n = 2, ties,
 * zero differences, zero rows, NaN and too-small inputs refused. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "reference/stats_fixtures.h"
#include "stats.h"

#define NFIX(t) ((int)(sizeof t / sizeof t[0]))

static char err[256];

/* |got - want| <= rel * max(1e-300, |want|), or both the same infinity. */
static void check_close(const char *what, const char *name, double got, double want, double rel) {
    int ok = isinf(want) ? got == want : fabs(got - want) <= rel * fmax(1e-300, fabs(want));
    if (want == 0.0) ok = fabs(got) <= rel;
    if (!ok) print_error("%s of '%s': got %.17g, want %.17g\n", what, name, got, want);
    assert_true(ok);
}

/* A p-value: relative 1e-9, or absolute 1e-12 in the far tail (GSL's t tail
 * is accurate to about 1e-8 relative near p = 1e-14, SciPy's to 1e-12). */
static void check_p(const char *name, double got, double want) {
    int ok = fabs(got - want) <= fmax(1e-9 * want, 1e-12);
    if (!ok) print_error("p of '%s': got %.17g, want %.17g\n", name, got, want);
    assert_true(ok);
}

/* ---------------------------------------------------------------- Welch */

static void test_welch_fixtures(void **state) {
    (void)state;
    for (int i = 0; i < NFIX(welch_fix); i++) {
        const WelchFix *f = &welch_fix[i];
        StatsWelch w;
        assert_int_equal(stats_welch(&w, f->a, f->na, f->b, f->nb, err, sizeof err), 0);
        check_close("t", f->name, w.t, f->t, 1e-12);
        check_close("df", f->name, w.df, f->df, 1e-12);
        check_close("p", f->name, w.p, f->p, 1e-9);
    }
}

/* Both samples constant: defined as p = 1 (same value) or p = 0. */
static void test_welch_zero_variance(void **state) {
    (void)state;
    const double a[] = {2, 2, 2}, b[] = {2, 2}, c[] = {5, 5};
    StatsWelch w;
    assert_int_equal(stats_welch(&w, a, 3, b, 2, err, sizeof err), 0);
    assert_true(w.p == 1.0 && w.t == 0.0 && isnan(w.df));
    assert_int_equal(stats_welch(&w, a, 3, c, 2, err, sizeof err), 0);
    assert_true(w.p == 0.0 && isinf(w.t) && w.t < 0 && isnan(w.df));
}

static void test_welch_refuses(void **state) {
    (void)state;
    const double a[] = {1, 2, 3}, one[] = {1}, bad[] = {1, NAN, 2}, inf[] = {1, INFINITY};
    StatsWelch w;
    assert_int_equal(stats_welch(&w, a, 3, one, 1, err, sizeof err), -1);
    assert_non_null(strstr(err, "sample b has 1 values"));
    assert_int_equal(stats_welch(&w, bad, 3, a, 3, err, sizeof err), -1);
    assert_non_null(strstr(err, "sample a: value 1 is nan"));
    assert_int_equal(stats_welch(&w, a, 3, inf, 2, err, sizeof err), -1);
    assert_int_equal(stats_welch(&w, NULL, 3, a, 3, err, sizeof err), -1);
}

/* ---------------------------------------------------------------- ranks */

static void test_midranks(void **state) {
    (void)state;
    const double x[] = {3, 1, 3, 2, 3, -1};
    const double want[] = {5, 2, 5, 3, 5, 1}; /* the 3s span ranks 4..6 */
    double r[6];
    assert_int_equal(stats_midranks(r, x, 6, err, sizeof err), 0);
    for (int i = 0; i < 6; i++) assert_true(r[i] == want[i]);
}

/* --------------------------------------------------------- Mann-Whitney */

static void test_mw_fixtures(void **state) {
    (void)state;
    for (int i = 0; i < NFIX(mw_fix); i++) {
        const MwFix *f = &mw_fix[i];
        StatsMannWhitney m;
        assert_int_equal(stats_mann_whitney(&m, f->a, f->na, f->b, f->nb, err, sizeof err), 0);
        check_close("U", f->name, m.u, f->u, 1e-15);
        check_close("p", f->name, m.p, f->p, 1e-12);
    }
}

/* Swapping the samples keeps p and turns U into na nb - U. */
static void test_mw_swap(void **state) {
    (void)state;
    for (int i = 0; i < NFIX(mw_fix); i++) {
        const MwFix *f = &mw_fix[i];
        StatsMannWhitney ab, ba;
        assert_int_equal(stats_mann_whitney(&ab, f->a, f->na, f->b, f->nb, err, sizeof err), 0);
        assert_int_equal(stats_mann_whitney(&ba, f->b, f->nb, f->a, f->na, err, sizeof err), 0);
        check_close("swapped p", f->name, ba.p, ab.p, 1e-12);
        check_close("swapped U", f->name, ba.u, f->na * f->nb - ab.u, 1e-15);
    }
}

static void test_mw_refuses(void **state) {
    (void)state;
    double a[STATS_MW_MAX_N + 1], nan_in[] = {0.5, NAN};
    for (int i = 0; i <= STATS_MW_MAX_N; i++) a[i] = i;
    StatsMannWhitney m;
    assert_int_equal(stats_mann_whitney(&m, a, 0, a, 3, err, sizeof err), -1);
    assert_int_equal(stats_mann_whitney(&m, a, 3, nan_in, 2, err, sizeof err), -1);
    assert_non_null(strstr(err, "sample b: value 1"));
    int half = STATS_MW_MAX_N / 2;
    assert_int_equal(stats_mann_whitney(&m, a, half, a, STATS_MW_MAX_N - half + 1, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "takes at most"));
}

/* ------------------------------------------------------------ bootstrap */

static void test_boot_fixtures(void **state) {
    (void)state;
    assert_int_equal(FIX_BOOT_RESAMPLES, STATS_BOOT_RESAMPLES);
    for (int i = 0; i < NFIX(boot_fix); i++) {
        const BootFix *f = &boot_fix[i];
        StatsCI ci;
        assert_int_equal(stats_bootstrap_diff_ci(&ci, f->a, f->na, f->b, f->nb,
                                                 STATS_BOOT_RESAMPLES, STATS_BOOT_SEED, 0.95, err,
                                                 sizeof err),
                         0);
        int ok =
            ci.lo >= f->lo_min && ci.lo <= f->lo_max && ci.hi >= f->hi_min && ci.hi <= f->hi_max;
        if (!ok)
            print_error("'%s': CI [%g, %g], want lo in [%g, %g], hi in [%g, %g]\n", f->name, ci.lo,
                        ci.hi, f->lo_min, f->lo_max, f->hi_min, f->hi_max);
        assert_true(ok);
    }
}

/* Constant samples: every resample gives the observed difference. */
static void test_boot_constant(void **state) {
    (void)state;
    const double a[] = {2, 2, 2}, b[] = {0.5, 0.5};
    StatsCI ci;
    assert_int_equal(stats_bootstrap_diff_ci(&ci, a, 3, b, 2, 1000, 7, 0.95, err, sizeof err), 0);
    assert_true(ci.diff == 1.5 && ci.lo == 1.5 && ci.hi == 1.5);
}

/* Same seed, same interval; another seed, another one. */
static void test_boot_deterministic(void **state) {
    (void)state;
    const BootFix *f = &boot_fix[0];
    StatsCI x, y, z;
    assert_int_equal(
        stats_bootstrap_diff_ci(&x, f->a, f->na, f->b, f->nb, 2000, 11, 0.9, err, sizeof err), 0);
    assert_int_equal(
        stats_bootstrap_diff_ci(&y, f->a, f->na, f->b, f->nb, 2000, 11, 0.9, err, sizeof err), 0);
    assert_int_equal(
        stats_bootstrap_diff_ci(&z, f->a, f->na, f->b, f->nb, 2000, 12, 0.9, err, sizeof err), 0);
    assert_true(x.lo == y.lo && x.hi == y.hi);
    assert_true(x.lo != z.lo || x.hi != z.hi);
    assert_true(x.lo < x.diff && x.diff < x.hi);
}

static void test_boot_refuses(void **state) {
    (void)state;
    const double a[] = {1, 2}, b[] = {NAN};
    StatsCI ci;
    assert_int_equal(stats_bootstrap_diff_ci(&ci, a, 2, b, 1, 100, 1, 0.95, err, sizeof err), -1);
    assert_int_equal(stats_bootstrap_diff_ci(&ci, a, 2, a, 2, 1, 1, 0.95, err, sizeof err), -1);
    assert_int_equal(stats_bootstrap_diff_ci(&ci, a, 2, a, 2, 100, 1, 1.0, err, sizeof err), -1);
    assert_int_equal(stats_bootstrap_diff_ci(&ci, a, 2, a, 2, 100, 1, NAN, err, sizeof err), -1);
    assert_non_null(strstr(err, "level"));
}

/* ------------------------------------------------------------- Spearman */

static void test_spearman_fixtures(void **state) {
    (void)state;
    for (int i = 0; i < NFIX(spearman_fix); i++) {
        const SpearmanFix *f = &spearman_fix[i];
        StatsSpearman s;
        assert_int_equal(stats_spearman(&s, f->a, f->b, f->na, err, sizeof err), 0);
        check_close("rho", f->name, s.rho, f->rho, 1e-12);
        check_close("p", f->name, s.p, f->p, f->exact ? 1e-12 : 1e-9);
        assert_int_equal(s.exact, f->exact);
    }
}

/* The floor is what the exact test gives for a perfect order (every
 * other order is less extreme): 2 / n!, 1 at n = 2; 0 past the exact
 * range, where the t approximation reaches any p. */
static void test_spearman_min_p(void **state) {
    (void)state;
    double x[STATS_SPEARMAN_EXACT_MAX + 1];
    for (int i = 0; i <= STATS_SPEARMAN_EXACT_MAX; i++) x[i] = i;
    for (int n = 3; n <= STATS_SPEARMAN_EXACT_MAX; n++) {
        StatsSpearman sp;
        assert_int_equal(stats_spearman(&sp, x, x, n, err, sizeof err), 0);
        assert_true(sp.exact);
        check_close("floor", "perfect order", stats_spearman_min_p(n), sp.p, 1e-12);
    }
    check_close("floor", "n = 3", stats_spearman_min_p(3), 1.0 / 3.0, 1e-15);
    check_close("floor", "n = 4", stats_spearman_min_p(4), 1.0 / 12.0, 1e-15);
    assert_true(stats_spearman_min_p(2) == 1.0);
    assert_true(stats_spearman_min_p(STATS_SPEARMAN_EXACT_MAX + 1) == 0.0);
}

static void test_spearman_refuses(void **state) {
    (void)state;
    const double x[] = {1, 2, 3}, c[] = {4, 4, 4}, bad[] = {1, 2, NAN};
    StatsSpearman s;
    assert_int_equal(stats_spearman(&s, x, c, 3, err, sizeof err), -1);
    assert_non_null(strstr(err, "y is constant"));
    assert_int_equal(stats_spearman(&s, x, x, 1, err, sizeof err), -1);
    assert_int_equal(stats_spearman(&s, bad, x, 3, err, sizeof err), -1);
    assert_non_null(strstr(err, "sample x: value 2"));
}

/* ------------------------------------------------------------- families */

static void test_family_fixtures(void **state) {
    (void)state;
    for (int i = 0; i < NFIX(family_fix); i++) {
        const FamilyFix *f = &family_fix[i];
        double holm[FIX_MAXN], bh[FIX_MAXN];
        assert_int_equal(stats_holm(holm, f->p, f->n, err, sizeof err), 0);
        assert_int_equal(stats_bh(bh, f->p, f->n, err, sizeof err), 0);
        for (int j = 0; j < f->n; j++) {
            check_close("Holm", f->name, holm[j], f->holm[j], 1e-15);
            check_close("BH", f->name, bh[j], f->bh[j], 1e-15);
        }
    }
}

/* The output may be the input array. */
static void test_family_in_place(void **state) {
    (void)state;
    const FamilyFix *f = &family_fix[NFIX(family_fix) - 1];
    double v[FIX_MAXN];
    memcpy(v, f->p, sizeof v);
    assert_int_equal(stats_holm(v, v, f->n, err, sizeof err), 0);
    for (int j = 0; j < f->n; j++) check_close("Holm in place", f->name, v[j], f->holm[j], 1e-15);
    memcpy(v, f->p, sizeof v);
    assert_int_equal(stats_bh(v, v, f->n, err, sizeof err), 0);
    for (int j = 0; j < f->n; j++) check_close("BH in place", f->name, v[j], f->bh[j], 1e-15);
}

static void test_family_refuses(void **state) {
    (void)state;
    const double neg[] = {0.1, -0.01}, big[] = {1.5}, nan_p[] = {0.2, NAN};
    double out[2];
    assert_int_equal(stats_holm(out, neg, 0, err, sizeof err), -1);
    assert_non_null(strstr(err, "needs at least 1"));
    assert_int_equal(stats_bh(out, NULL, 2, err, sizeof err), -1);
    assert_int_equal(stats_holm(out, neg, 2, err, sizeof err), -1);
    assert_non_null(strstr(err, "p-value 1 is -0.01"));
    assert_int_equal(stats_bh(out, big, 1, err, sizeof err), -1);
    assert_int_equal(stats_bh(out, nan_p, 2, err, sizeof err), -1);
    assert_non_null(strstr(err, "p-value 1 is nan"));
}

/* ------------------------------------------------------- Clopper-Pearson */

static void test_cp_fixtures(void **state) {
    (void)state;
    for (int i = 0; i < NFIX(cp_fix); i++) {
        const CpFix *f = &cp_fix[i];
        double lo = -1, hi = -1;
        assert_int_equal(stats_clopper_pearson(&lo, &hi, f->k, f->n, f->level, err, sizeof err), 0);
        check_close("lo", f->name, lo, f->lo, 1e-10);
        check_close("hi", f->name, hi, f->hi, 1e-10);
        if (f->k == 0) assert_true(lo == 0.0);
        if (f->k == f->n) assert_true(hi == 1.0);
    }
}

static void test_cp_refuses(void **state) {
    (void)state;
    double lo, hi;
    assert_int_equal(stats_clopper_pearson(&lo, &hi, 0, 0, 0.95, err, sizeof err), -1);
    assert_int_equal(stats_clopper_pearson(&lo, &hi, -1, 5, 0.95, err, sizeof err), -1);
    assert_int_equal(stats_clopper_pearson(&lo, &hi, 6, 5, 0.95, err, sizeof err), -1);
    assert_non_null(strstr(err, "k = 6 not in [0, 5]"));
    assert_int_equal(stats_clopper_pearson(&lo, &hi, 2, 5, 1.0, err, sizeof err), -1);
    assert_int_equal(stats_clopper_pearson(&lo, &hi, 2, 5, NAN, err, sizeof err), -1);
    assert_non_null(strstr(err, "level"));
}

/* The binomial upper tail against exact sums (Python fractions: 1 -
 * sum_{i<k} C(n,i) p^i (1-p)^(n-i)), the needle's chance test. */
static void test_binom_upper(void **state) {
    (void)state;
    static const struct {
        long long k, n;
        double p, want;
    } fx[] = {{1, 80, 1e-4, 0.0079684820020821}, {2, 1600, 1e-4, 0.011507477634055515},
              {3, 400, 0.01, 0.763368081451983}, {0, 10, 0.5, 1.0},
              {10, 10, 0.5, 0.0009765625},       {7, 20, 0.25, 0.21421805239879177}};
    for (size_t i = 0; i < sizeof fx / sizeof fx[0]; i++)
        check_close("binom", "upper", stats_binom_upper(fx[i].k, fx[i].n, fx[i].p), fx[i].want,
                    1e-10);
    assert_true(isnan(stats_binom_upper(11, 10, 0.5))); /* k > n */
    assert_true(isnan(stats_binom_upper(0, 0, 0.5)));
    assert_true(isnan(stats_binom_upper(1, 10, 0.0)));
    assert_true(isnan(stats_binom_upper(1, 10, 1.0)));
}

/* Where GSL's beta inversion gives up, an error, never an abort or a NaN. */
static void test_cp_extreme(void **state) {
    (void)state;
    double lo = -1, hi = -1;
    int rc = stats_clopper_pearson(&lo, &hi, 1, 100000, 0.5, err, sizeof err);
    if (rc == 0) assert_true(lo > 0 && lo < 1e-5 && hi > lo && hi < 1e-4);
    else assert_non_null(strstr(err, "beta quantile failed"));
}

/* ---------------------------------------------------------------- Fisher */

static void test_fisher_fixtures(void **state) {
    (void)state;
    for (int i = 0; i < NFIX(fisher_fix); i++) {
        const FisherFix *f = &fisher_fix[i];
        double p = -1;
        assert_int_equal(stats_fisher_exact(&p, f->ka, f->na, f->kb, f->nb, err, sizeof err), 0);
        check_close("p", f->name, p, f->p, 1e-12);
    }
}

/* One-sided Fisher against scipy.stats.fisher_exact(alternative="greater"
 * / "less"), SciPy 1.10: [[3, 2], [1, 4]] greater 0.2619047619047619,
 * less 0.9761904761904762; [[1, 19], [8, 12]] less 0.009828009828009828;
 * 5/5 against 0/5 greater 1/252, less 1. */
static void test_fisher_one_sided(void **state) {
    (void)state;
    double p = -1;
    assert_int_equal(stats_fisher_one_sided(&p, 3, 5, 1, 5, 0, err, sizeof err), 0);
    check_close("p", "3/5 vs 1/5 greater", p, 0.2619047619047619, 1e-12);
    assert_int_equal(stats_fisher_one_sided(&p, 3, 5, 1, 5, 1, err, sizeof err), 0);
    check_close("p", "3/5 vs 1/5 less", p, 0.9761904761904762, 1e-12);
    assert_int_equal(stats_fisher_one_sided(&p, 1, 20, 8, 20, 1, err, sizeof err), 0);
    check_close("p", "1/20 vs 8/20 less", p, 0.009828009828009828, 1e-12);
    assert_int_equal(stats_fisher_one_sided(&p, 5, 5, 0, 5, 0, err, sizeof err), 0);
    check_close("p", "5/5 vs 0/5 greater", p, 1.0 / 252.0, 1e-12);
    assert_int_equal(stats_fisher_one_sided(&p, 5, 5, 0, 5, 1, err, sizeof err), 0);
    check_close("p", "5/5 vs 0/5 less", p, 1.0, 1e-12);
    assert_int_equal(stats_fisher_one_sided(&p, 6, 5, 0, 5, 1, err, sizeof err), -1);
}

static void test_fisher_refuses(void **state) {
    (void)state;
    double p;
    assert_int_equal(stats_fisher_exact(&p, 6, 5, 0, 5, err, sizeof err), -1);
    assert_non_null(strstr(err, "row a has k = 6"));
    assert_int_equal(stats_fisher_exact(&p, 0, 5, -1, 5, err, sizeof err), -1);
    assert_non_null(strstr(err, "row b"));
    assert_int_equal(stats_fisher_exact(&p, 0, -2, 0, 5, err, sizeof err), -1);
}

/* ----------------------------------------------------------------- TOST */

static void test_tost_fixtures(void **state) {
    (void)state;
    for (int i = 0; i < NFIX(tost_fix); i++) {
        const TostFix *f = &tost_fix[i];
        StatsTost t;
        assert_int_equal(stats_tost_welch(&t, f->a, f->na, f->b, f->nb, f->margin, err, sizeof err),
                         0);
        check_close("diff", f->name, t.diff, f->diff, 1e-12);
        assert_true(t.margin == f->margin);
        check_p(f->name, t.p_lower, f->p_lower);
        check_p(f->name, t.p_upper, f->p_upper);
        check_p(f->name, t.p, f->p);
    }
}

/* Both samples constant: each one-sided test is 0 or 1 by the sign. */
static void test_tost_zero_variance(void **state) {
    (void)state;
    const double a[] = {2, 2, 2}, b[] = {2, 2}, c[] = {1.5, 1.5};
    StatsTost t;
    assert_int_equal(stats_tost_welch(&t, a, 3, b, 2, 0.1, err, sizeof err), 0);
    assert_true(t.diff == 0.0 && t.p_lower == 0.0 && t.p_upper == 0.0 && t.p == 0.0);
    assert_int_equal(stats_tost_welch(&t, a, 3, c, 2, 0.5, err, sizeof err), 0);
    assert_true(t.diff == 0.5 && t.p_lower == 0.0 && t.p_upper == 1.0 && t.p == 1.0);
    assert_int_equal(stats_tost_welch(&t, c, 2, a, 3, 0.25, err, sizeof err), 0);
    assert_true(t.p_lower == 1.0 && t.p_upper == 0.0 && t.p == 1.0);
}

static void test_tost_refuses(void **state) {
    (void)state;
    const double a[] = {1, 2, 3}, bad[] = {1, INFINITY};
    StatsTost t;
    assert_int_equal(stats_tost_welch(&t, a, 3, a, 3, 0.0, err, sizeof err), -1);
    assert_non_null(strstr(err, "margin 0"));
    assert_int_equal(stats_tost_welch(&t, a, 3, a, 3, -1.0, err, sizeof err), -1);
    assert_int_equal(stats_tost_welch(&t, a, 3, a, 3, NAN, err, sizeof err), -1);
    assert_int_equal(stats_tost_welch(&t, a, 3, a, 3, INFINITY, err, sizeof err), -1);
    assert_int_equal(stats_tost_welch(&t, a, 1, a, 3, 1.0, err, sizeof err), -1);
    assert_int_equal(stats_tost_welch(&t, a, 3, bad, 2, 1.0, err, sizeof err), -1);
    assert_non_null(strstr(err, "sample b: value 1 is inf"));
}

/* ------------------------------------------------------------- paired t */

static void test_paired_fixtures(void **state) {
    (void)state;
    for (int i = 0; i < NFIX(paired_fix); i++) {
        const PairedFix *f = &paired_fix[i];
        StatsPaired t;
        assert_int_equal(stats_paired_t(&t, f->a, f->b, f->na, err, sizeof err), 0);
        check_close("mean_diff", f->name, t.mean_diff, f->mean_diff, 1e-12);
        check_close("t", f->name, t.t, f->t, 1e-12);
        assert_true(t.df == f->df);
        check_p(f->name, t.p, f->p);
    }
}

/* All differences equal: zero -> t = 0, p = 1; non-zero -> t = +-inf, p = 0. */
static void test_paired_zero_variance(void **state) {
    (void)state;
    const double x[] = {1, 2, 3, 4}, y[] = {0, 1, 2, 3};
    StatsPaired t;
    assert_int_equal(stats_paired_t(&t, x, x, 4, err, sizeof err), 0);
    assert_true(t.mean_diff == 0.0 && t.t == 0.0 && t.p == 1.0 && t.df == 3);
    assert_int_equal(stats_paired_t(&t, y, x, 4, err, sizeof err), 0);
    assert_true(t.mean_diff == -1.0 && isinf(t.t) && t.t < 0 && t.p == 0.0);
}

static void test_paired_refuses(void **state) {
    (void)state;
    const double x[] = {1, 2}, nan_y[] = {1, NAN}, huge[] = {1e308, 1}, neg[] = {-1e308, 1};
    StatsPaired t;
    assert_int_equal(stats_paired_t(&t, x, x, 1, err, sizeof err), -1);
    assert_non_null(strstr(err, "needs at least 2"));
    assert_int_equal(stats_paired_t(&t, x, nan_y, 2, err, sizeof err), -1);
    assert_non_null(strstr(err, "sample y: value 1"));
    assert_int_equal(stats_paired_t(&t, NULL, x, 2, err, sizeof err), -1);
    assert_int_equal(stats_paired_t(&t, huge, neg, 2, err, sizeof err), -1);
    assert_non_null(strstr(err, "difference 0"));
}

/* ------------------------------------------------------------- Wilcoxon */

static void test_wilcoxon_fixtures(void **state) {
    (void)state;
    for (int i = 0; i < NFIX(wilcoxon_fix); i++) {
        const WilcoxonFix *f = &wilcoxon_fix[i];
        StatsWilcoxon w;
        assert_int_equal(stats_wilcoxon(&w, f->a, f->b, f->na, err, sizeof err), 0);
        check_close("W+", f->name, w.w_plus, f->w_plus, 1e-15);
        assert_int_equal(w.m, f->m);
        check_close("p", f->name, w.p, f->p, 1e-12);
    }
}

/* Swapping x and y keeps p and m and turns W+ into m(m+1)/2 - W+. */
static void test_wilcoxon_swap(void **state) {
    (void)state;
    for (int i = 0; i < NFIX(wilcoxon_fix); i++) {
        const WilcoxonFix *f = &wilcoxon_fix[i];
        StatsWilcoxon xy, yx;
        assert_int_equal(stats_wilcoxon(&xy, f->a, f->b, f->na, err, sizeof err), 0);
        assert_int_equal(stats_wilcoxon(&yx, f->b, f->a, f->na, err, sizeof err), 0);
        assert_int_equal(yx.m, xy.m);
        check_close("swapped p", f->name, yx.p, xy.p, 1e-12);
        check_close("swapped W+", f->name, yx.w_plus, 0.5 * xy.m * (xy.m + 1) - xy.w_plus, 1e-15);
    }
}

/* Every difference zero: nothing to rank, W+ = 0 and p = 1. */
static void test_wilcoxon_all_zero(void **state) {
    (void)state;
    const double x[] = {0.5, 0.25, 3};
    StatsWilcoxon w = {.w_plus = -1, .m = -1, .p = -1};
    assert_int_equal(stats_wilcoxon(&w, x, x, 3, err, sizeof err), 0);
    assert_true(w.m == 0 && w.w_plus == 0.0 && w.p == 1.0);
}

static void test_wilcoxon_refuses(void **state) {
    (void)state;
    static double big[STATS_WILCOXON_MAX_N + 1];
    const double x[] = {1, 2}, bad[] = {INFINITY, 2};
    StatsWilcoxon w;
    assert_int_equal(stats_wilcoxon(&w, x, x, 0, err, sizeof err), -1);
    assert_int_equal(stats_wilcoxon(&w, bad, x, 2, err, sizeof err), -1);
    assert_non_null(strstr(err, "sample x: value 0 is inf"));
    assert_int_equal(stats_wilcoxon(&w, x, NULL, 2, err, sizeof err), -1);
    assert_int_equal(stats_wilcoxon(&w, big, big, STATS_WILCOXON_MAX_N + 1, err, sizeof err), -1);
    assert_non_null(strstr(err, "at most"));
}

/* ------------------------------------------------- within-group correlation */

/* Exact cases match the enumeration; the Monte Carlo case lies within 4.5
 * binomial standard errors (plus the +1 of its estimator) of the exact p. */
static void test_within_fixtures(void **state) {
    (void)state;
    for (int i = 0; i < NFIX(within_fix); i++) {
        const WithinFix *f = &within_fix[i];
        StatsWithin w;
        assert_int_equal(stats_within_group_corr(&w, f->x, f->y, f->group, f->n,
                                                 STATS_WITHIN_RESAMPLES, STATS_WITHIN_SEED, err,
                                                 sizeof err),
                         0);
        check_close("r", f->name, w.r, f->r, 1e-12);
        assert_int_equal(w.exact, f->exact);
        assert_int_equal(w.groups, f->groups);
        if (f->exact) {
            check_close("p", f->name, w.p, f->p, 1e-12);
            continue;
        }
        double b = STATS_WITHIN_RESAMPLES, tol = 4.5 * sqrt(f->p * (1 - f->p) / b) + 1 / (b + 1);
        if (fabs(w.p - f->p) > tol)
            print_error("'%s': Monte Carlo p %g, exact %g (tolerance %g)\n", f->name, w.p, f->p,
                        tol);
        assert_true(fabs(w.p - f->p) <= tol);
    }
}

/* The Monte Carlo p is a function of (input, resamples, seed). */
static void test_within_deterministic(void **state) {
    (void)state;
    const WithinFix *f = &within_fix[NFIX(within_fix) - 1];
    StatsWithin a, b, c;
    assert_int_equal(
        stats_within_group_corr(&a, f->x, f->y, f->group, f->n, 999, 5, err, sizeof err), 0);
    assert_int_equal(
        stats_within_group_corr(&b, f->x, f->y, f->group, f->n, 999, 5, err, sizeof err), 0);
    assert_int_equal(
        stats_within_group_corr(&c, f->x, f->y, f->group, f->n, 999, 6, err, sizeof err), 0);
    assert_true(a.exact == 0 && a.p == b.p && a.r == b.r);
    assert_true(a.p != c.p);
}

static void test_within_refuses(void **state) {
    (void)state;
    const double x[] = {1, 2, 3, 4}, c[] = {1, 1, 2, 2}, bad[] = {1, 2, NAN, 4};
    const int g[] = {0, 0, 1, 1}, neg[] = {0, 0, -1, 1}, out_of_range[] = {0, 0, 1, 4};
    StatsWithin w;
    assert_int_equal(stats_within_group_corr(&w, c, x, g, 4, 100, 1, err, sizeof err), -1);
    assert_non_null(strstr(err, "x is constant within every group"));
    assert_int_equal(stats_within_group_corr(&w, x, c, g, 4, 100, 1, err, sizeof err), -1);
    assert_non_null(strstr(err, "y is constant within every group"));
    assert_int_equal(stats_within_group_corr(&w, x, x, neg, 4, 100, 1, err, sizeof err), -1);
    assert_non_null(strstr(err, "group label 2 is -1"));
    assert_int_equal(stats_within_group_corr(&w, x, x, out_of_range, 4, 100, 1, err, sizeof err),
                     -1);
    assert_int_equal(stats_within_group_corr(&w, x, x, NULL, 4, 100, 1, err, sizeof err), -1);
    assert_int_equal(stats_within_group_corr(&w, x, bad, g, 4, 100, 1, err, sizeof err), -1);
    assert_non_null(strstr(err, "sample y: value 2"));
    assert_int_equal(stats_within_group_corr(&w, x, x, g, 4, 0, 1, err, sizeof err), -1);
    assert_int_equal(stats_within_group_corr(&w, x, x, g, 1, 100, 1, err, sizeof err), -1);
}

/* Paired TOST over d = 0.01, -0.02, 0.015, 0, 0.005 within +-0.05; SciPy:
 *   d = np.array([0.01, -0.02, 0.015, 0.0, 0.005])
 *   st.ttest_1samp(d + 0.05, 0, alternative="greater").pvalue  # 0.000500712220452084
 *   st.ttest_1samp(d - 0.05, 0, alternative="less").pvalue     # 0.0006795356920370183
 * Equal differences: 0 inside the margin, 1 on or outside it. */
static void test_tost_paired(void **state) {
    (void)state;
    const double x[5] = {0.01, -0.02, 0.015, 0.0, 0.005}, y[5] = {0};
    char err[256];
    StatsTost t;
    assert_int_equal(stats_tost_paired(&t, x, y, 5, 0.05, err, sizeof err), 0);
    assert_true(fabs(t.p_lower - 0.000500712220452084) < 1e-12);
    assert_true(fabs(t.p_upper - 0.0006795356920370183) < 1e-12);
    assert_true(t.p == t.p_upper && fabs(t.diff - 0.002) < 1e-15);
    const double c[3] = {0.04, 0.04, 0.04}, z[3] = {0};
    assert_int_equal(stats_tost_paired(&t, c, z, 3, 0.05, err, sizeof err), 0);
    assert_true(t.p == 0.0);
    assert_int_equal(stats_tost_paired(&t, c, z, 3, 0.04, err, sizeof err), 0);
    assert_true(t.p == 1.0);
    assert_int_equal(stats_tost_paired(&t, c, z, 3, 0.0, err, sizeof err), -1);
    assert_int_equal(stats_tost_paired(&t, c, z, 1, 0.05, err, sizeof err), -1);
}

/* Hodges-Lehmann on d = -1, ..., -9, +100 (x = d, y = 0): the median of
 * the 55 Walsh averages is -4.5; with n = 10, P(W+ <= 8) = 25/1024 <=
 * 0.025 < P(W+ <= 9) = 31/1024, so c = 8 and the 95% interval is
 * [A_(9), A_(47)] = [-7, 46] (numpy: sorted Walsh averages [8] and [46]).
 * Two pairs: P(W+ = 0) = 1/4 > 0.025, unbounded. The paired t interval is
 * the mean -+ t_{0.975; 9} s / sqrt(10). */
static void test_paired_estimates(void **state) {
    (void)state;
    double x[10], y[10] = {0}, mean = 0, ss = 0;
    char err[256];
    for (int i = 0; i < 10; i++) x[i] = i == 9 ? 100.0 : -(i + 1.0), mean += x[i] / 10;
    for (int i = 0; i < 10; i++) ss += (x[i] - mean) * (x[i] - mean);
    StatsShift h;
    assert_int_equal(stats_hodges_lehmann(&h, x, y, 10, 0.95, err, sizeof err), 0);
    assert_true(h.est == -4.5 && h.lo == -7.0 && h.hi == 46.0);
    assert_int_equal(stats_hodges_lehmann(&h, x, y, 2, 0.95, err, sizeof err), 0);
    assert_true(h.est == -1.5 && isinf(h.lo) && h.lo < 0 && isinf(h.hi) && h.hi > 0);
    assert_int_equal(stats_hodges_lehmann(&h, x, y, 10, 1.0, err, sizeof err), -1);
    StatsPaired t;
    assert_int_equal(stats_paired_t(&t, x, y, 10, err, sizeof err), 0);
    double half = 2.2621571627409915 * sqrt(ss / 9) / sqrt(10.0); /* t_{0.975; 9} */
    assert_true(fabs(t.lo - (mean - half)) < 1e-9 && fabs(t.hi - (mean + half)) < 1e-9);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_welch_fixtures),       cmocka_unit_test(test_welch_zero_variance),
        cmocka_unit_test(test_welch_refuses),        cmocka_unit_test(test_midranks),
        cmocka_unit_test(test_mw_fixtures),          cmocka_unit_test(test_mw_swap),
        cmocka_unit_test(test_mw_refuses),           cmocka_unit_test(test_boot_fixtures),
        cmocka_unit_test(test_boot_constant),        cmocka_unit_test(test_boot_deterministic),
        cmocka_unit_test(test_boot_refuses),         cmocka_unit_test(test_spearman_fixtures),
        cmocka_unit_test(test_spearman_refuses),     cmocka_unit_test(test_spearman_min_p),
        cmocka_unit_test(test_family_fixtures),      cmocka_unit_test(test_family_in_place),
        cmocka_unit_test(test_family_refuses),       cmocka_unit_test(test_cp_fixtures),
        cmocka_unit_test(test_cp_refuses),           cmocka_unit_test(test_cp_extreme),
        cmocka_unit_test(test_fisher_fixtures),      cmocka_unit_test(test_fisher_refuses),
        cmocka_unit_test(test_fisher_one_sided),     cmocka_unit_test(test_tost_fixtures),
        cmocka_unit_test(test_tost_zero_variance),   cmocka_unit_test(test_tost_refuses),
        cmocka_unit_test(test_paired_fixtures),      cmocka_unit_test(test_paired_zero_variance),
        cmocka_unit_test(test_paired_refuses),       cmocka_unit_test(test_paired_estimates),
        cmocka_unit_test(test_tost_paired),          cmocka_unit_test(test_wilcoxon_fixtures),
        cmocka_unit_test(test_wilcoxon_swap),        cmocka_unit_test(test_wilcoxon_all_zero),
        cmocka_unit_test(test_wilcoxon_refuses),     cmocka_unit_test(test_within_fixtures),
        cmocka_unit_test(test_within_deterministic), cmocka_unit_test(test_within_refuses),
        cmocka_unit_test(test_binom_upper),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
