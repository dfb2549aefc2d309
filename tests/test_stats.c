/* test_stats.c: analysis/stats.c against SciPy (the tables of
 * reference/stats_fixtures.h, written by reference/make_stats_fixtures.py),
 * plus the defined edge cases of stats.h: degenerate samples, n = 2, ties,
 * NaN and too-small inputs refused. */
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
    assert_int_equal(stats_mann_whitney(&m, a, 50, a, 51, err, sizeof err), -1);
    assert_non_null(strstr(err, "at most"));
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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_welch_fixtures),   cmocka_unit_test(test_welch_zero_variance),
        cmocka_unit_test(test_welch_refuses),    cmocka_unit_test(test_midranks),
        cmocka_unit_test(test_mw_fixtures),      cmocka_unit_test(test_mw_swap),
        cmocka_unit_test(test_mw_refuses),       cmocka_unit_test(test_boot_fixtures),
        cmocka_unit_test(test_boot_constant),    cmocka_unit_test(test_boot_deterministic),
        cmocka_unit_test(test_boot_refuses),     cmocka_unit_test(test_spearman_fixtures),
        cmocka_unit_test(test_spearman_refuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
