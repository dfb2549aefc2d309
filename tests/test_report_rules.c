/* test_report_rules.c: the report's rules on hand-built inputs: the
 * instability rule (instability.h), Sun et al.'s massive-activation
 * criterion (massive.h), the training FLOPs (flops.h), the reference
 * scales (paper_tables.h), the primary ids the exploratory comparisons
 * point to (report_priv.h primary_test_id), the verdict rule of the
 * confirmatory headline (report_confirm.h) on a constructed case, an
 * interaction (difference in differences) with known d, and the claims
 * table a sweep's `paper =` lines are held to. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flops.h"
#include "instability.h"
#include "massive.h"
#include "metric_table.h"
#include "paper_scales.h"
#include "paper_tables.h"
#include "protocol.h"
#include "report_confirm.h"
#include "report_priv.h"
#include "runschema.h"

/* The rule fires above best + margin, not at it; a run without a finite
 * loss is unstable; an arm with no finite loss has no best and no
 * unstable run. */
/* keys[0..n) (key, value) into p's family, each accepted. */
static void declare(Protocol *p, const char *keys[][2], int n) {
    char err[256];
    for (int i = 0; i < n; i++)
        if (protocol_key(p, keys[i][0], keys[i][1], err, sizeof err) != 0)
            fail_msg("%s = %s: %s", keys[i][0], keys[i][1], err);
}

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
    assert_true(train_tokens(1500, 32, 64) == 1500.0 * 32 * 64);
    assert_true(isnan(train_tokens(1500, 0, 64)));
    /* every source of the scales table names its effect, who and where the
     * project cites it; a number it gives is positive; a dense model with
     * parameters and tokens but no stated FLOPs gets 6 N D, flagged */
    int n = 0, est;
    for (; scale_source(n); n++) {
        const ScaleSource *s = scale_source(n);
        assert_true(s->effect >= 0 && s->effect < SE_COUNT);
        assert_non_null(strstr(s->doc, "docs/paper-tables.md"));
        assert_true(s->who[0] && s->source[0]);
        assert_true(isnan(s->params) || s->params > 0);
        assert_true(isnan(s->tokens) || s->tokens > 0);
        double fl = scale_flops(s, &est);
        assert_true(isnan(fl) || fl > 0);
        if (est) assert_true(fl == 6.0 * s->params * s->tokens && isnan(s->flops));
    }
    assert_true(n >= 6);
    assert_null(scale_source(-1));
    assert_null(scale_source(n));
}

/* Ids number the `<`, `>` and sink-free claims in their order (a `~`
 * claim is an equivalence test, E ids); either order of the pair matches;
 * a metric or pair no claim names has none. */
static void test_primary_ids(void **state) {
    (void)state;
    Protocol p;
    memset(&p, 0, sizeof p);
    const char *keys[][2] = {{"metric", "f_attn"},          {"metric", "val_loss"},
                             {"compare", "g1 vs base"},     {"compare", "g2 vs base"},
                             {"margin", "f_attn 0.1"},      {"paper", "f_attn g1 < base"},
                             {"paper", "f_attn g2 ~ base"}, {"paper", "val_loss g2 < base"}};
    declare(&p, keys, 8);
    ProtoMetric fa = proto_metric_of("f_attn"), vl = proto_metric_of("val_loss");
    assert_true(fa >= 0 && vl >= 0 && fa != vl);
    assert_int_equal(primary_test_id(&p, "g1", "base", fa), 1);
    assert_int_equal(primary_test_id(&p, "g2", "base", vl), 2);
    assert_int_equal(primary_test_id(&p, "base", "g2", vl), 2);
    assert_int_equal(primary_test_id(&p, "g2", "base", fa), 0); /* E1 */
    assert_int_equal(primary_test_id(&p, "g1", "base", vl), 0);
    assert_int_equal(primary_test_id(&p, "g1", "base", proto_metric_of("m_act")), 0);
    assert_int_equal(primary_test_id(&p, "g3", "base", fa), 0);
    assert_int_equal(primary_test_id(NULL, "g1", "base", fa), 0);
}

/* Ten pairs, nine small negative differences and one large positive
 * (M-Act is heavy-tailed): d = -1, ..., -9, +100, so W+ = 10 and the mean
 * difference is +5.5 while the Hodges-Lehmann estimate is -4.5. The exact
 * one-sided Wilcoxon in the paper's direction (arm lower) gives p =
 * P(W+ <= 10) = 43/1024 = 0.0419921875, two-sided 0.083984375; SciPy:
 *   python3 -c 'import numpy as np, scipy.stats as st
 *   d = np.array([-1,-2,-3,-4,-5,-6,-7,-8,-9,100.0])
 *   print(st.wilcoxon(d, alternative="less", method="exact").pvalue,
 *         st.wilcoxon(d, method="exact").pvalue,
 *         np.median([(d[i]+d[j])/2 for i in range(10) for j in range(i,10)]))'
 * prints 0.0419921875 0.083984375 -4.5. */
static Row g_rows[20];

/* report_confirm's text for rows[n] under primary p and secondary sec
 * (may be NULL), malloc'd; printed to stderr under GATELAB_TEST_SHOW. */
static char *family_text(const Row *rows, int n, const Protocol *p, const Protocol *sec) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    report_confirm(f, rows, n, p, sec);
    fclose(f);
    if (getenv("GATELAB_TEST_SHOW")) fprintf(stderr, "%s\n", buf);
    return buf;
}

/* A readable row of seed, matched with the baseline group at row 0, of the
 * paper's architecture (the keys row_blank gives a real row). */
static void row_start(Row *w, long long seed) {
    Config d;
    config_defaults(&d);
    w->ok = 1, w->seed = seed, w->base = 0;
    for (int k = 0; k < RS_N_ARCH; k++) rs_arch_value(&d, k, w->arch[k]);
}

/* baseline seeds 1-10 (rows 0-9, massive by Sun's criterion when massive)
 * and g1-elem (rows 10-19), M-Act baseline + d. */
static void outlier_rows(int massive) {
    memset(g_rows, 0, sizeof g_rows);
    for (int i = 0; i < 20; i++) {
        Row *w = &g_rows[i];
        int arm = i >= 10, k = i % 10;
        double d = k == 9 ? 100.0 : -(k + 1.0);
        row_start(w, k + 1);
        snprintf(w->run, sizeof w->run, "%s", arm ? "g1-elem" : "baseline");
        snprintf(w->variant, sizeof w->variant, "%s", w->run);
        snprintf(w->data, sizeof w->data, "bigram");
        w->m_act = 500.0 + 10.0 * k + (arm ? d : 0.0);
        w->massive_sun = massive;
        w->f_attn = w->val_loss = w->task_floor = NAN;
        w->sink_formed = -1;
    }
}

/* report_confirm's text for the rows under a one-claim protocol. */
static char *confirm_text(const char *claim) {
    Protocol p;
    memset(&p, 0, sizeof p);
    const char *keys[][2] = {{"metric", "m_act"},
                             {"test", "m_act wilcoxon"},
                             {"compare", "g1-elem vs baseline"},
                             {"paper", claim}};
    declare(&p, keys, 4);
    char *buf = family_text(g_rows, 20, &p, NULL);
    return buf;
}

/* The verdict comes from the test's statistic, never from the means: the
 * one-sided test confirms (p = 0.042, the family's only test); two-sided
 * it shows nothing (0.084); neither says "Contradicted" though the mean
 * difference is +5.5. With every pair the other way the two-sided test
 * contradicts the claim and the one-sided one does not show it. The table
 * gives the Hodges-Lehmann estimate. With no
 * baseline seed massive the claim is untestable here. */
/* The report for claim holds every string of want (NULL-terminated) and
 * not unwanted. */
static void expect_claim(const char *claim, const char *const *want, const char *unwanted) {
    char *md = confirm_text(claim);
    for (; *want; want++)
        if (!strstr(md, *want)) fail_msg("%s: no \"%s\" in the report", claim, *want);
    if (strstr(md, unwanted)) fail_msg("%s: \"%s\" in the report", claim, unwanted);
    free(md);
}

static void test_verdict_from_test(void **state) {
    (void)state;
    outlier_rows(1);
    expect_claim("m_act g1-elem < baseline one-sided",
                 (const char *[]){"**Confirmed** here: Hodges–Lehmann estimate -4.5",
                                  "Holm p = 0.042 (P1)", "| 0.042 | 0.042 | **lower** |",
                                  "| -4.5 [", NULL},
                 "Contradicted");
    expect_claim(
        "m_act g1-elem < baseline",
        (const char *[]){"**Not shown** here", "| 0.084 | 0.084 | no difference shown |", NULL},
        "Contradicted");
    /* every pair the other way (g1-elem above by 1..10): two-sided, the
     * test rejects against the claim (p = 2/1024); one-sided it cannot */
    for (int i = 10; i < 20; i++) g_rows[i].m_act = 500.0 + 10.0 * (i - 10) + (i - 9);
    expect_claim("m_act g1-elem < baseline",
                 (const char *[]){"**Contradicted** here, we disagree with the paper",
                                  "Holm p = 0.00195 (P1)", NULL},
                 "Confirmed");
    expect_claim("m_act g1-elem < baseline one-sided", (const char *[]){"**Not shown** here", NULL},
                 "Contradicted");
    outlier_rows(0);
    expect_claim("m_act g1-elem < baseline one-sided",
                 (const char *[]){"**Untestable here**: the baseline `baseline` has no massive "
                                  "activation to remove: none of its 10 seeds is massive",
                                  NULL},
                 "Confirmed");
}

/* A [secondary] family larger than a Protocol holds (compares x metrics
 * + interactions above PROTO_MAX) is refused, never cut short. */
static void test_secondary_too_large(void **state) {
    (void)state;
    Protocol sec;
    char err[256], arm[32];
    memset(&sec, 0, sizeof sec);
    sec.secondary = 1;
    const char *metrics[] = {"f_attn", "m_act", "val_loss", "quant_w8a8_dloss"};
    for (int j = 0; j < 4; j++) {
        char test[64];
        snprintf(test, sizeof test, "%s wilcoxon", metrics[j]);
        assert_int_equal(protocol_key(&sec, "metric", metrics[j], err, sizeof err), 0);
        assert_int_equal(protocol_key(&sec, "test", test, err, sizeof err), 0);
    }
    for (int c = 0; c < 8; c++) {
        snprintf(arm, sizeof arm, "a%d vs base", c);
        assert_int_equal(protocol_key(&sec, "compare", arm, err, sizeof err), 0);
    }
    assert_int_equal(protocol_check(&sec, err, sizeof err), 0); /* 32: fits */
    assert_int_equal(protocol_key(&sec, "compare", "a8 vs base", err, sizeof err), 0);
    assert_int_equal(protocol_check(&sec, err, sizeof err), -1);
    assert_non_null(strstr(err, "[secondary] declares 36 tests (9 compares x 4 metrics + 0 "
                                "interactions), more than 32"));
}

/* A claim on a measure no run has (YaRN not evaluated: lc_deg_*_yarn
 * blank in every row) is untestable here, naming why, never "too few
 * seeds". */
static void test_claim_on_blank_measure(void **state) {
    (void)state;
    outlier_rows(1);
    for (int i = 0; i < 20; i++) g_rows[i].lc_deg[1][2] = NAN;
    Protocol p;
    char err[256];
    memset(&p, 0, sizeof p);
    const char *keys[][2] = {{"metric", "lc_deg_4x_yarn"},
                             {"test", "lc_deg_4x_yarn wilcoxon"},
                             {"compare", "g1-elem vs baseline"},
                             {"paper", "lc_deg_4x_yarn g1-elem < baseline one-sided"}};
    declare(&p, keys, 4);
    assert_int_equal(protocol_check(&p, err, sizeof err), 0);
    char *buf = family_text(g_rows, 20, &p, NULL);
    assert_non_null(strstr(buf, "**Untestable here**: no run of `g1-elem` has a val-loss "
                                "degradation at 4× T (YaRN) (not evaluated"));
    if (getenv("GATELAB_TEST_SHOW")) fprintf(stderr, "%s\n", buf);
    assert_null(strstr(buf, "too few seeds"));
    free(buf);
}

/* Sink-free as the paper means it: g1-elem's F-Attn over its run's own
 * uniform share (1.000 to 1.009) below 1 + margin = 1.5 in every one of
 * 10 seeds: one-sample Wilcoxon, one-sided, p = 1/1024. The baseline
 * formed a sink in every seed, so the claim is testable. A [secondary]
 * family (the outlier case on M-Act, two-sided: p = 0.084) is reported
 * apart with S ids, and refuses a claim. */
static void test_sink_free_and_secondary(void **state) {
    (void)state;
    outlier_rows(1);
    for (int i = 0; i < 20; i++) {
        g_rows[i].f_attn_uniform = 0.1;
        g_rows[i].f_attn = i < 10 ? 0.5 : 0.1 + 0.0001 * (i - 10);
        g_rows[i].sink_formed = i < 10;
    }
    Protocol p, sec;
    char err[256];
    memset(&p, 0, sizeof p);
    memset(&sec, 0, sizeof sec);
    sec.secondary = 1;
    const char *keys[][2] = {{"metric", "f_attn"},
                             {"test", "f_attn wilcoxon"},
                             {"compare", "g1-elem vs baseline"},
                             {"margin", "sink_free 0.5"},
                             {"paper", "f_attn g1-elem sink-free"}};
    declare(&p, keys, 5);
    declare(&sec, keys, 3);
    assert_int_equal(protocol_key(&sec, "metric", "m_act", err, sizeof err), 0);
    assert_int_equal(protocol_key(&sec, "test", "m_act wilcoxon", err, sizeof err), 0);
    assert_int_equal(protocol_key(&sec, "paper", "m_act g1-elem < baseline", err, sizeof err), -1);
    assert_non_null(strstr(err, "two-sided questions, not claims"));
    assert_int_equal(protocol_check(&p, err, sizeof err), 0);
    char *buf = family_text(g_rows, 20, &p, &sec);
    assert_non_null(
        strstr(buf, "- The paper: `g1-elem` is attention-sink-free (tested as F-Attn "
                    "at most 1.5× the run's uniform share, one-sided) (Table 4, "
                    "title: F-Attn 0.048; our reading: gated attention is attention-sink-free). "
                    "**Confirmed** here"));
    assert_non_null(strstr(buf, "| P1 | g1-elem sink-free | f_attn |"));
    assert_non_null(strstr(buf, "| 0.000977 | 0.000977 | 0.000977 | **lower** |"));
    assert_non_null(strstr(buf, "### Secondary family (questions, not claims)"));
    assert_non_null(strstr(buf, "| S2 | g1-elem vs baseline | m_act |"));
    assert_non_null(strstr(buf, "| 0.00195 | 0.084 | 0.084 | no difference shown |"));
    free(buf);
}

/* Four arms on seeds 1-10 (baseline also on seed 11) whose val loss
 * gives, per seed, d = (g1-elem-2x - baseline-2x) - (g1-elem - baseline)
 * = D[k]. SciPy 1.10.1 on these d:
 *   python3 -c 'import numpy as np, scipy.stats as st
 *   d = np.array([0.009,0.052,-0.018,0.067,0.031,-0.003,0.044,-0.012,0.023,0.061])
 *   print(st.wilcoxon(d-0.06, alternative="less", method="exact").pvalue,
 *         st.wilcoxon(d-0.04, alternative="less", method="exact").pvalue,
 *         st.wilcoxon(d, method="exact").pvalue,
 *         st.ttest_1samp(d, 0.04, alternative="less").pvalue,
 *         np.median([(d[i]+d[j])/2 for i in range(10) for j in range(i,10)]))'
 * prints 0.0048828125 0.1162109375 0.048828125 0.08302847053384015 0.0245. */
static const double D[10] = {0.009,  0.052, -0.018, 0.067, 0.031,
                             -0.003, 0.044, -0.012, 0.023, 0.061};
static Row i_rows[41];

static void interaction_rows(void) {
    static const char *const arm[4] = {"baseline", "baseline-2x", "g1-elem", "g1-elem-2x"};
    memset(i_rows, 0, sizeof i_rows);
    for (int i = 0; i < 41; i++) {
        Row *w = &i_rows[i];
        int g = i < 11 ? 0 : 1 + (i - 11) / 10, k = i < 11 ? i : (i - 11) % 10;
        row_start(w, k + 1);
        snprintf(w->run, sizeof w->run, "%s", arm[g]);
        snprintf(w->variant, sizeof w->variant, "%s", g >= 2 ? "g1-elem" : "baseline");
        snprintf(w->data, sizeof w->data, "brown");
        double b1 = 1.9 + 0.01 * k, b2 = 1.8 + 0.013 * k;
        w->val_loss = g == 0 ? b1 : g == 1 ? b2 : g == 2 ? b1 - 0.05 : b2 - 0.05 + D[k];
        w->f_attn = w->m_act = w->task_floor = NAN;
        w->sink_formed = w->massive_sun = -1;
    }
}

/* report_confirm's text for a one-claim primary family and a [secondary]
 * of the one interaction `line` under val_loss's declared test. */
static char *interaction_text(const char *test, const char *line) {
    Protocol p, sec;
    char err[256];
    memset(&p, 0, sizeof p);
    memset(&sec, 0, sizeof sec);
    sec.secondary = 1;
    const char *keys[][2] = {{"metric", "val_loss"},
                             {"test", test},
                             {"compare", "g1-elem vs baseline"},
                             {"paper", "val_loss g1-elem < baseline"}};
    declare(&p, keys, 4);
    declare(&sec, keys, 2);
    assert_int_equal(protocol_key(&sec, "interaction", line, err, sizeof err), 0);
    assert_int_equal(protocol_check(&sec, err, sizeof err), 0);
    char *buf = family_text(i_rows, 41, &p, &sec);
    return buf;
}

/* The interaction is one test of d against its bound, its p SciPy's; the
 * seed only the baseline has is left out and said; the sentence is a
 * question, never "The paper". The key is refused in [primary], with an
 * unpaired test, or malformed. */
static void test_interaction(void **state) {
    (void)state;
    interaction_rows();
    const char *x = "val_loss g1-elem-2x vs baseline-2x minus g1-elem vs baseline";
    char line[200], err[256];
    snprintf(line, sizeof line, "%s < 0.06", x);
    char *md = interaction_text("val_loss wilcoxon", line);
    assert_non_null(strstr(md, "| S1 | (g1-elem-2x − baseline-2x) − (g1-elem − baseline) < +0.06 "
                               "| val_loss |"));
    assert_non_null(strstr(md, "wilcoxon (one sample of differences in differences, 10 seeds; 1 "
                               "without all four arms left out), one-sided |"));
    assert_non_null(strstr(md, "| 0.000977 | 0.00488 | 0.00488 | **below the bound** |"));
    assert_non_null(strstr(md, "- Question (not a claim of the paper): does the val loss "
                               "difference `g1-elem-2x` − `baseline-2x` change from `g1-elem` − "
                               "`baseline` on the same seeds?"));
    assert_non_null(strstr(md, "H1: d below +0.06, one-sided. **Shown**: d is below +0.06: "
                               "Hodges–Lehmann estimate +0.0245 ["));
    assert_non_null(strstr(md, "Holm p = 0.00488 (S1)."));
    assert_null(strstr(md, "The paper: `g1-elem-2x`"));
    free(md);
    snprintf(line, sizeof line, "%s < 0.04", x);
    md = interaction_text("val_loss wilcoxon", line);
    assert_non_null(strstr(md, "| 0.116 | 0.116 | not shown |"));
    assert_non_null(strstr(md, "**Not shown**: d at or above +0.04 is not ruled out"));
    free(md);
    md = interaction_text("val_loss paired-t", line);
    assert_non_null(strstr(md, "| – | 0.083 | 0.083 | not shown |"));
    assert_non_null(strstr(md, "mean +0.0254 ["));
    free(md);
    md = interaction_text("val_loss wilcoxon", x);
    assert_non_null(strstr(md, "| 0.00195 | 0.0488 | 0.0488 | **higher** |"));
    assert_non_null(strstr(md, "H1: d is not 0, two-sided. **Changed**: d is above 0"));
    free(md);
    Protocol p;
    memset(&p, 0, sizeof p);
    assert_int_equal(protocol_key(&p, "metric", "val_loss", err, sizeof err), 0);
    assert_int_equal(protocol_key(&p, "interaction", x, err, sizeof err), -1);
    assert_non_null(strstr(err, "declare it in [secondary]"));
    p.secondary = 1;
    assert_int_equal(protocol_key(&p, "test", "val_loss welch", err, sizeof err), 0);
    assert_int_equal(protocol_key(&p, "interaction", x, err, sizeof err), 0);
    assert_int_equal(protocol_check(&p, err, sizeof err), -1);
    assert_non_null(strstr(err, "an interaction pairs four arms by seed"));
    snprintf(line, sizeof line, "%s <= 0.04", x);
    assert_int_equal(protocol_key(&p, "interaction", line, err, sizeof err), -1);
    assert_non_null(strstr(err, "is not 'METRIC A2 vs B2 minus A1 vs B1'"));
    assert_int_equal(
        protocol_key(&p, "interaction", "val_loss a vs b minus a vs b", err, sizeof err), -1);
}

/* Every row of the claims table is a claim a protocol can declare, none
 * is listed twice, and the claims the paper does not make have no row. */
static void test_claims_table(void **state) {
    (void)state;
    int n = 0;
    for (const PaperClaim *c; (c = paper_claim_at(n)); n++) {
        assert_non_null(c->table);
        assert_non_null(c->sentence);
        assert_true(strchr("<>~s", c->rel) != NULL);
        assert_ptr_equal(paper_claim_find(c->metric, c->arm, c->rel, c->ref), c);
    }
    assert_true(n >= 10);
    assert_non_null(paper_claim_find("f_attn", "g1-elem", '<', "g1-ns"));
    assert_null(paper_claim_find("f_attn", "g1-ns", '<', "baseline"));
    assert_null(paper_claim_find("f_attn", "g1-elem", '<', "g1-head"));
    assert_null(paper_claim_find("m_act", "g1-elem", '>', "baseline"));
}

/* n seeds of baseline (rows 0..n-1) then g1-elem, M-Act i and i + 0.5. */
static Row big_rows[2 * 110];
static void big_arms(int n) {
    memset(big_rows, 0, sizeof big_rows);
    for (int i = 0; i < 2 * n; i++) {
        Row *w = &big_rows[i];
        row_start(w, i % n + 1);
        snprintf(w->run, sizeof w->run, "%s", i >= n ? "g1-elem" : "baseline");
        snprintf(w->variant, sizeof w->variant, "%s", w->run);
        snprintf(w->data, sizeof w->data, "bigram");
        w->m_act = i % n + (i >= n ? 0.5 : 0.0);
        w->massive_sun = 1;
        w->f_attn = w->val_loss = w->task_floor = NAN;
        w->sink_formed = -1;
    }
}

/* The exploratory comparison and a declared Mann-Whitney test run at 60
 * seeds a side; at 110 + 110 the exact test refuses (over STATS_MW_MAX_N
 * values) and both sections name that refusal, not "too few seeds". */
static void test_mann_whitney_many_seeds(void **state) {
    (void)state;
    Protocol p;
    memset(&p, 0, sizeof p);
    const char *keys[][2] = {{"metric", "m_act"},
                             {"test", "m_act mann-whitney"},
                             {"compare", "g1-elem vs baseline"},
                             {"paper", "m_act g1-elem < baseline one-sided"}};
    declare(&p, keys, 4);
    for (int n = 60; n <= 110; n += 50) {
        big_arms(n);
        char *buf = family_text(big_rows, 2 * n, &p, NULL), *cmp = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&cmp, &len);
        assert_non_null(f);
        md_compare(f, big_rows, 2 * n, NULL);
        fclose(f);
        const char *row = strstr(cmp, "| [M-Act](#def-mact) |"); /* the others have no values */
        assert_non_null(row);
        assert_null(strstr(row, "too few seeds"));
        assert_null(strstr(buf, "too few seeds"));
        const char *why = "exact Mann-Whitney takes at most 200 values; 110 + 110 here";
        if (n == 60) {
            assert_null(strstr(buf, "Untested"));
            assert_non_null(strstr(row, "| [M-Act](#def-mact) | 60 / 60 | +0.5 |"));
        } else {
            assert_non_null(strstr(buf, "**Untested** here: exact Mann-Whitney takes at most"));
            assert_non_null(strstr(buf, why));
            assert_non_null(strstr(row, why));
        }
        free(buf), free(cmp);
    }
}

/* A Row with nothing read holds every metric of the table unknown (NaN in
 * results.csv: blank) but the MB_ZERO ones, which are 0: a metric added
 * to the table is blanked by its row alone, and never reads as 0. */
static void test_row_blank_unknown(void **state) {
    (void)state;
    Row *w = calloc(1, sizeof *w);
    assert_non_null(w);
    row_blank(w);
    int zero = 0;
    for (int i = 0; metric_at(i); i++) {
        const MetricCol *m = metric_at(i);
        char name[128];
        metric_name(m, name, sizeof name);
        double v = metric_value(w, m);
        if (m->blank == MB_ZERO) zero++, assert_true(v == 0);
        else if (m->kind == MK_LL) assert_true(v == -1);
        else if (!isnan(v)) fail_msg("%s: a blank Row holds %g, not unknown", name, v);
        if (m->proto && (!m->label || metric_declared(i) != m || proto_metric_of(name) != i))
            fail_msg("%s: a declarable row needs a label and a name of its own", name);
    }
    assert_int_equal(zero, 8); /* n_params, n_params_added, lr and the probe's own columns */
    free(w);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_row_blank_unknown),
        cmocka_unit_test(test_instability_rule),
        cmocka_unit_test(test_sun_criterion),
        cmocka_unit_test(test_flops),
        cmocka_unit_test(test_primary_ids),
        cmocka_unit_test(test_verdict_from_test),
        cmocka_unit_test(test_sink_free_and_secondary),
        cmocka_unit_test(test_claim_on_blank_measure),
        cmocka_unit_test(test_secondary_too_large),
        cmocka_unit_test(test_interaction),
        cmocka_unit_test(test_claims_table),
        cmocka_unit_test(test_mann_whitney_many_seeds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
