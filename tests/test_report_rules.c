/* test_report_rules.c: the report's rules on hand-built inputs: the
 * instability rule (instability.h), Sun et al.'s massive-activation
 * criterion (massive.h), the training FLOPs (flops.h), the reference
 * scales (paper_tables.h) and the primary ids the exploratory comparisons
 * point to (report_priv.h primary_test_id). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "flops.h"
#include "instability.h"
#include "massive.h"
#include "paper_tables.h"
#include "protocol.h"
#include "report_priv.h"
#include "runschema.h"

/* The rule fires above best + margin, not at it; a run without a finite
 * loss is unstable; an arm with no finite loss has no best and no
 * unstable run. */
static void test_instability_rule(void **state) {
    (void)state;
    assert_int_equal(run_unstable(1.7, 1.2, 0.5), 0); /* exactly at the margin */
    assert_int_equal(run_unstable(1.7000001, 1.2, 0.5), 1);
    assert_int_equal(run_unstable(NAN, 1.2, 0.5), 1);
    assert_int_equal(run_unstable(INFINITY, 1.2, 0.5), 1);
    assert_int_equal(run_unstable(5.0, NAN, 0.5), 0);
    const double loss[6] = {1.5, 1.2, 1.93, NAN, 1.69, 2.4};
    assert_true(fabs(arm_best_loss(loss, 6) - 1.2) < 1e-15);
    assert_int_equal(count_unstable(loss, 6, UNSTABLE_MARGIN), 3); /* 1.93, NaN, 2.4 */
    assert_int_equal(count_unstable(loss, 6, 2.0), 1);             /* the NaN only */
    const double none[3] = {NAN, NAN, INFINITY};
    assert_true(isnan(arm_best_loss(none, 3)));
    assert_int_equal(count_unstable(none, 3, UNSTABLE_MARGIN), 0);
    assert_true(UNSTABLE_MARGIN == 0.5);
}

/* Massive needs both: above 100 and above 1000 times the median. */
static void test_sun_criterion(void **state) {
    (void)state;
    assert_int_equal(sun_massive(150.0, 0.1), 1);   /* 1500 x */
    assert_int_equal(sun_massive(150.0, 0.149), 1); /* just above 1000 x */
    assert_int_equal(sun_massive(150.0, 0.16), 0);  /* just below 1000 x */
    assert_int_equal(sun_massive(150.0, 1.0), 0);   /* only 150 x: the bigram case */
    assert_int_equal(sun_massive(99.0, 0.001), 0);  /* too small, however rare */
    assert_int_equal(sun_massive(100.0, 0.001), 0); /* not above 100 */
    assert_int_equal(sun_massive(NAN, 0.1), -1);
    assert_int_equal(sun_massive(150.0, 0.0), -1);
    /* the peak layer is the one with the largest top-1, not the largest ratio */
    double top3[2 * RS_HIDDEN_TOP] = {50, 40, 30, 2000, 10, 9}, median[2] = {0.01, 1.0};
    ProbeRecord p;
    memset(&p, 0, sizeof p);
    p.L = 2, p.h_top3 = top3, p.h_median = median;
    double top1, ratio;
    assert_int_equal(massive_peak(&p, &top1, &ratio), 1);
    assert_true(top1 == 2000 && ratio == 2000);
    median[1] = 4.0; /* 500 x: not massive */
    assert_int_equal(massive_peak(&p, &top1, &ratio), 0);
    assert_true(ratio == 500);
    p.L = 0;
    assert_int_equal(massive_peak(&p, &top1, &ratio), -1);
    assert_true(isnan(top1) && isnan(ratio));
}

static void test_flops(void **state) {
    (void)state;
    assert_true(train_flops(1e6, 1500, 32, 64) == 1e6 * 1500 * 32 * 64);
    assert_true(isnan(train_flops(1e6, 0, 32, 64)));
    assert_true(isnan(train_flops(1e6, NAN, 32, 64)));
    assert_true(isnan(train_flops(-1, 10, 32, 64)));
    int n = 0;
    for (; effect_scale(n); n++) {
        assert_true(effect_scale(n)->flops > 0);
        assert_non_null(effect_scale(n)->effect);
    }
    assert_true(n >= 3);
    assert_null(effect_scale(-1));
}

/* Ids are compare-major as report_confirm.c numbers them; either order of
 * the pair matches; an undeclared metric or pair has none. */
static void test_primary_ids(void **state) {
    (void)state;
    Protocol p;
    char err[256];
    memset(&p, 0, sizeof p);
    const char *keys[][2] = {{"metric", "f_attn"},
                             {"metric", "val_loss"},
                             {"compare", "g1 vs base"},
                             {"compare", "g2 vs base"}};
    for (int i = 0; i < 4; i++)
        assert_int_equal(protocol_key(&p, keys[i][0], keys[i][1], err, sizeof err), 0);
    assert_int_equal(primary_test_id(&p, "g1", "base", PM_F_ATTN), 1);
    assert_int_equal(primary_test_id(&p, "g1", "base", PM_VAL_LOSS), 2);
    assert_int_equal(primary_test_id(&p, "g2", "base", PM_VAL_LOSS), 4);
    assert_int_equal(primary_test_id(&p, "base", "g2", PM_F_ATTN), 3);
    assert_int_equal(primary_test_id(&p, "g1", "base", PM_M_ACT), 0);
    assert_int_equal(primary_test_id(&p, "g3", "base", PM_F_ATTN), 0);
    assert_int_equal(primary_test_id(NULL, "g1", "base", PM_F_ATTN), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_instability_rule),
        cmocka_unit_test(test_sun_criterion),
        cmocka_unit_test(test_flops),
        cmocka_unit_test(test_primary_ids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
