/* test_report_sections.c: REPORT.md's sections over run files built by
 * hand (report_fixture.h), each test in its own subdirectory: the
 * median-seed heatmap, a report without figures, baselines by fields,
 * the proxy count in Settings, the exploratory comparisons, the
 * confirmatory headline from a protocol.ini, the learning-rate section,
 * and the metrics a protocol may declare. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gsl/gsl_cdf.h>
#include <hdf5.h>

#include "commands.h"
#include "config.h"
#include "h5util.h"
#include "metric_table.h"
#include "protocol.h"
#include "report.h"
#include "runname.h"
#include "runfile.h"
#include "runfile_read.h"
#include "runstats.h"
#include "testutil.h"
#include "util.h" /* protocol_hash_text */
#include "report_fixture.h"

/* The baseline-vs-g1-elem heatmap shows each group's median-F-Attn seed
 * and says so: baseline F-Attn 0.2, 0.6, 0.4 (seeds 1..3) -> seed 3; g1-elem
 * 0.05, 0.01 -> the lower middle, 0.01, seed 2. */
static void test_median_seed_compare(void **state) {
    (void)state;
    char saved[256], path[500];
    enter_subdir(saved, sizeof saved, "med");
    const float fb[3] = {0.2f, 0.6f, 0.4f}, fg[2] = {0.05f, 0.01f};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "base_s%d.h5", i + 1);
        make_run(path, "baseline", i + 1, 2.0, fb[i], 0, 0);
    }
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "g1_s%d.h5", i + 1);
        make_run(path, "g1-elem", i + 1, 1.9, fg[i], 1, 0);
    }
    report_set_figures(1);
    char *md = report_in_subdir(saved);
    report_set_figures(0);
    assert_non_null(strstr(md, "**base seed 3 (top) vs g1 seed 2 (bottom), data bigram**"));
    assert_non_null(
        strstr(md, "median-F-Attn seed (F-Attn 0.400, the median of 3 seeds; 0.010, of 2)"));
    snprintf(path, sizeof path, "%s/med/out/figures/heatmap_baseline_vs_g1-elem_bigram.png",
             tu_scratch);
    assert_int_equal(access(path, F_OK), 0);
    free(md);
}

/* A gated run whose stored label says "baseline" (as a run built from
 * keys was once recorded) is read as what its fields are, custom, and is
 * nobody's baseline: g1-elem beside it has no ΔPPL. */
static void test_gated_run_is_no_baseline(void **state) {
    (void)state;
    char saved[256], path[600];
    enter_subdir(saved, sizeof saved, "lie");
    g_extra_sets[0] = "gate_pos=g3", g_extra_sets[1] = "gate_act=silu";
    make_run("baseline_s1.h5", "baseline", 1, 2.0, 0.5f, 1, 0);
    g_extra_sets[0] = g_extra_sets[1] = NULL;
    make_run("g1-elem_s1.h5", "g1-elem", 1, 1.9, 0.05f, 1, 0);
    snprintf(path, sizeof path, "%s/out/results.csv", tu_scratch);
    free(report_in_subdir(saved));
    char *csv = tu_slurp_ok(path, NULL);
    assert_non_null(strstr(csv, "\nbaseline_s1.h5,baseline,custom,bigram,1,"));
    assert_true(csv_blank(csv, csv_row(csv, "g1-elem_s1.h5"), "dppl_vs_baseline"));
    free(csv);
}

/* Settings says how many runs' attention is the Gu et al. proxy, not only
 * the first run's: none, then 1 of 3 runs marked proxy (its last probe's
 * attribute, step 100, set by hand). */
static void set_proxy(const char *path) {
    char group[64];
    snprintf(group, sizeof group, RS_PROBE_PATH_FMT, 100LL);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t g = H5Gopen2(f, group, H5P_DEFAULT);
    assert_true(g >= 0);
    assert_int_equal(h5u_attr_i64(g, RS_P_PROXY, 1), 0);
    H5Gclose(g);
    H5Fclose(f);
}

static void test_settings_proxy_count(void **state) {
    (void)state;
    char saved[256], path[700];
    enter_subdir(saved, sizeof saved, "proxy");
    make_run("base_s1.h5", "baseline", 1, 2.0, 0.5f, 0, 0);
    make_run("base_s2.h5", "baseline", 2, 2.0, 0.5f, 0, 0);
    make_run("g1_s1.h5", "g1-elem", 1, 1.9, 0.05f, 1, 0);
    char *md = report_in_subdir(saved);
    assert_non_null(strstr(md, "attention is post-softmax (no proxy)."));
    free(md);
    snprintf(tu_scratch, sizeof tu_scratch, "%.200s/proxy", saved);
    snprintf(path, sizeof path, "%s/g1_s1.h5", tu_scratch);
    set_proxy(path);
    md = report_in_subdir(saved);
    assert_non_null(strstr(md,
                           "attention is post-softmax except in 1 of 3 runs, where it is the Gu "
                           "et al. proxy"));
    free(md);
}

/* The comparison section on 5 + 5 + 5 seeds worked out by hand:
 * g1 val_loss 1.5..1.9 against the baseline's 2.0..2.4: every g1 seed
 * below every baseline seed, so the exact Mann-Whitney p = 2 / C(10, 5) =
 * 2/252; Welch: difference -0.5, both variances 0.025, t = -0.5 /
 * sqrt(2 x 0.025 / 5) = -5 on df = 8. F-Attn 0.05 against 0.5 with no
 * spread: Welch p = 0 (stats.h), Mann-Whitney 2/252 again. "same" draws the
 * baseline's own numbers: nothing differs. 2 groups x 3 metrics = 6 tests,
 * 2 significant. */
/* Seeds 1..5 of "base" (baseline: val loss 2.0..2.4, F-Attn 0.5) and "g1"
 * (g1-elem: val loss 1.9..1.5, F-Attn 0.05) in the current directory. */
static void make_base_and_g1(void) {
    char path[64];
    for (int i = 0; i < 5; i++) {
        snprintf(path, sizeof path, "base_s%d.h5", i + 1);
        make_run(path, "baseline", i + 1, 2.0 + 0.1 * i, 0.5f, 0, 0);
        snprintf(path, sizeof path, "g1_s%d.h5", i + 1);
        make_run(path, "g1-elem", i + 1, 1.9 - 0.1 * i, 0.05f, 1, 0);
    }
}

static void test_compare_section(void **state) {
    (void)state;
    char saved[256], path[500], want[300];
    enter_subdir(saved, sizeof saved, "cmp");
    make_base_and_g1();
    for (int i = 0; i < 5; i++) {
        snprintf(path, sizeof path, "same_s%d.h5", i + 1);
        make_run(path, "g1-head", i + 1, 2.4 - 0.1 * i, 0.5f, 0, 0);
    }
    char *md = report_in_subdir(saved);
    const char *sec = strstr(md, "## Exploratory comparisons with the baseline");
    assert_non_null(sec);
    if (getenv("GATELAB_TEST_SHOW")) fprintf(stderr, "%.6000s\n", sec);
    /* 6 tests; the two significant ones have p = max(Welch, MW) = 2/252,
     * so their BH q = 2/252 x 6/2 = 0.0238 */
    assert_non_null(strstr(sec, "**exploratory**: 6 were tested"));
    assert_non_null(strstr(sec, "2 have q < 0.05"));
    snprintf(want, sizeof want,
             "- exploratory: `g1` beats `base` on val_loss (data bigram), difference %+.4g, BH "
             "q = %.3g (5 vs 5 seeds).",
             -0.5, 6.0 / 2.0 * 2.0 / 252.0);
    assert_non_null(strstr(sec, want));
    snprintf(want, sizeof want,
             "- exploratory: `g1` has a weaker first-token sink than `base` on F-Attn (data "
             "bigram), difference %+.4g, BH q = %.3g",
             0.05 - 0.5, 6.0 / 2.0 * 2.0 / 252.0);
    assert_non_null(strstr(sec, want));
    assert_null(strstr(sec, "- exploratory: `same`")); /* never claimed */
    snprintf(want, sizeof want, "Welch p %.3g", 2.0 * gsl_cdf_tdist_Q(5.0, 8.0));
    const char *g1row = strstr(sec, "| g1 | base | bigram | [val_loss](#def-val-loss) | 5 / 5 |");
    assert_non_null(g1row);
    snprintf(want, sizeof want, "| %.3g | %.3g | %.3g | lower (exploratory) |",
             2.0 * gsl_cdf_tdist_Q(5.0, 8.0), 2.0 / 252.0, 6.0 / 2.0 * 2.0 / 252.0);
    assert_non_null(strstr(g1row, want));
    const char *same =
        strstr(sec, "| same | base | bigram | [val_loss](#def-val-loss) | 5 / 5 | +0 |");
    assert_non_null(same);
    assert_non_null(strstr(same, " | no difference shown |\n| same | base | bigram | [F-Attn]"));
    free(md);
}

/* Without figures (report_set_figures(0), `--no-figures`) the report says
 * so where they would be and makes no figures/; its tables are those of a
 * report with figures. */
static void test_no_figures(void **state) {
    (void)state;
    char saved[256], path[500];
    enter_subdir(saved, sizeof saved, "nofig");
    make_base_and_g1();
    char *md = report_in_subdir(saved);
    assert_non_null(strstr(md, "## Figures\n\n- not drawn (`--no-figures`): `gatelab report DIR` "
                               "draws them\n"));
    assert_null(strstr(md, "](figures/"));
    snprintf(path, sizeof path, "%s/nofig/out/figures", tu_scratch);
    assert_int_equal(access(path, F_OK), -1);
    const char *runs = strstr(md, "## Runs");
    assert_non_null(runs);
    report_set_figures(1);
    enter_subdir(saved, sizeof saved, "withfig");
    make_base_and_g1();
    char *md2 = report_in_subdir(saved);
    report_set_figures(0);
    const char *runs2 = strstr(md2, "## Runs");
    assert_non_null(runs2);
    assert_memory_equal(runs, runs2, (size_t)(strstr(runs, "## Figures") - runs));
    free(md2);
    free(md);
}

/* The exploratory section leaves the primary family's comparisons to it:
 * with `g1 vs base` on f_attn declared, that row points to P1 and only
 * val_loss and M-Act are tested (2 tests, the val_loss one significant:
 * BH q = 2/252 x 2/1). */
static void test_compare_skips_primary(void **state) {
    (void)state;
    char saved[256], path[500], want[300];
    enter_subdir(saved, sizeof saved, "cmp-primary");
    make_base_and_g1();
    snprintf(path, sizeof path, "%s/protocol.ini", tu_scratch);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("[primary]\nmetric = f_attn\ntest = f_attn mann-whitney\ncompare = g1 vs base\n"
          "paper = f_attn g1 < base\n",
          f);
    fclose(f);
    char *md = report_in_subdir(saved);
    const char *sec = strstr(md, "## Exploratory comparisons with the baseline");
    assert_non_null(sec);
    if (getenv("GATELAB_TEST_SHOW")) fprintf(stderr, "%.4000s\n", sec);
    assert_non_null(strstr(sec, "**exploratory**: 2 were tested"));
    assert_non_null(strstr(sec, "1 comparison of the table is in the protocol's primary family"));
    assert_non_null(strstr(sec, "| g1 | base | bigram | [F-Attn](#def-fattn) | – | – | – | – | – "
                                "| – | primary: see P1 (not tested again) |"));
    assert_null(strstr(sec, "- exploratory: `g1` has a weaker first-token sink"));
    snprintf(want, sizeof want,
             "- exploratory: `g1` beats `base` on val_loss (data bigram), difference %+.4g, BH "
             "q = %.3g (5 vs 5 seeds).",
             -0.5, 2.0 * 2.0 / 252.0);
    assert_non_null(strstr(sec, want));
    free(md);
}

/* protocol.ini in tu_scratch holding text. */
static void put_protocol(const char *text) {
    char path[500];
    snprintf(path, sizeof path, "%s/protocol.ini", tu_scratch);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static const char CONFIRM_PROTO[] =
    "[primary]\nmetric = f_attn\nmetric = val_loss\nmetric = good_regime\n"
    "threshold = val_loss_below 1.0\ntest = f_attn mann-whitney\ntest = val_loss wilcoxon\n"
    "test = good_regime fisher\ncompare = g1 vs base\npaper = f_attn g1 < base one-sided\n"
    "paper = val_loss g1 > base\npaper = good_regime g1 > base\n";

/* The confirmatory headline from a protocol.ini beside 5 + 5 hand-built
 * runs (make_base_and_g1), each test the declared one. F-Attn 0.05
 * against 0.5, exact Mann-Whitney one-sided as the claim says: p = 1/252.
 * Val loss by the paired Wilcoxon test: every one of the 5 seeds goes the
 * same way, p = 2/32 = 0.0625, which is also its floor: Tarone's rule
 * leaves it out (at K = 2 the two other tests reach 0.05 / 2, it does
 * not). good_regime (val loss below 1.0): 0 of 5 against 0 of 5,
 * untestable (no event in either arm) but in the family. Holm over the
 * two: 2/252 for P1, whose claim is still untestable here: the
 * baseline's F-Attn 0.5 at T = 4 is below twice the uniform share (0.36),
 * so no seed formed a sink to remove. The runs recorded no protocol: the
 * headline says so. */
static void test_confirm_section(void **state) {
    (void)state;
    char saved[256], want[400];
    enter_subdir(saved, sizeof saved, "confirm");
    make_base_and_g1();
    put_protocol(CONFIRM_PROTO);
    char *md = report_in_subdir(saved);
    const char *sec = strstr(md, "## Headline (confirmatory)");
    assert_non_null(sec);
    if (getenv("GATELAB_TEST_SHOW")) fprintf(stderr, "%.5000s\n", sec);
    assert_non_null(strstr(sec, "has 3 primary tests, one per claim of the paper it declares, up "
                                "to 5 seeds"));
    assert_non_null(strstr(sec, "f_attn by mann-whitney, val_loss by wilcoxon, good_regime by "
                                "fisher (good_regime: final val loss below 1 nats)"));
    const char *tables = strstr(sec, "### Primary tests");
    assert_non_null(tables);
    const char *larger = strstr(sec, "larger of");
    assert_true(!larger || larger > tables); /* one declared test, never the larger of two */
    assert_non_null(strstr(sec, "**not declared before every run**: 10 runs recorded no protocol"));
    snprintf(
        want, sizeof want,
        "- The paper: `g1` has a lower F-Attn than `base` (tested one-sided) (Table 4: "
        "F-Attn 0.048 against 0.467; our reading: the SDPA-output gate removes the "
        "first-token attention sink). **Untestable here**: the baseline `base` shows no sink to "
        "remove: 0 of its 5 seeds formed one (F-Attn above 2× the uniform share), fewer "
        "than half; 0.05 against 0.5 (P1).");
    assert_non_null(strstr(sec, want));
    snprintf(want, sizeof want, "| mann-whitney, one-sided | 0.00397 | 0.00397 | %.3g |",
             2 * 1.0 / 252.0);
    assert_non_null(strstr(sec, want));
    assert_non_null(strstr(sec, "- The paper: `g1` has a higher val loss than `base` (no row of "
                                "the paper's claims table matches these arms' variants). "
                                "**Untestable here**: left out of the family (Tarone's rule): the "
                                "smallest p wilcoxon can reach with 5 seeds, 0.0625, is above "
                                "0.05 / 2 = 0.025, the bound where the rule settles (at most 2 of "
                                "the family's tests can reach it)"));
    assert_non_null(strstr(sec, "**Untestable here**: no run of either arm is in the good regime "
                                "(0 of 5 against 0 of 5)"));
    assert_null(strstr(sec, "Not shown"));
    assert_non_null(strstr(sec, "| P2 | g1 > base | val_loss |"));
    assert_non_null(strstr(sec, "| left out (Tarone) |"));
    assert_non_null(strstr(sec, "wilcoxon (paired, 5 seeds) | 0.0625 | 0.0625 |"));
    assert_non_null(strstr(sec, "| g1 | 0 of 5 | 0.00 | [0.000, 0.522] |")); /* exploratory */
    free(md);
}

/* Declared before the runs only when every run file's /protocol hash is
 * protocol.ini's: runs made under it are; an edit of protocol.ini after
 * them names them as made under another protocol, and a run without one
 * as made before it. */
static void test_confirm_declared(void **state) {
    (void)state;
    char saved[256];
    enter_subdir(saved, sizeof saved, "declared");
    g_proto_text = CONFIRM_PROTO;
    make_base_and_g1();
    g_proto_text = NULL;
    put_protocol(CONFIRM_PROTO);
    char *md = report_in_subdir(saved);
    /* a protocol.ini that pins nothing (no files, rules or run list; the
     * pinned cases are test_prereg.c's and tests/prereg.sh's) */
    assert_non_null(strstr(md, "**not shown declared before the runs**: every run file records "
                               "its hash, but a check below fails"));
    assert_non_null(strstr(md, "- **nothing pinned**"));
    free(md);
    snprintf(saved, sizeof saved, "%s", tu_scratch);
    snprintf(tu_scratch, sizeof tu_scratch, "%.200s/declared", saved);
    /* protocol.ini edited after the runs; two runs made without one, one
     * of them a sixth baseline seed that no g1 seed pairs with */
    put_protocol("[primary]\nmetric = val_loss\ntest = val_loss wilcoxon\ncompare = g1 vs base\n"
                 "paper = val_loss g1 < base\n");
    make_run("late_s1.h5", "g1-head", 1, 2.0, 0.5f, 0, 0);
    make_run("base_s6.h5", "baseline", 6, 2.5, 0.5f, 0, 0);
    md = report_in_subdir(saved);
    if (getenv("GATELAB_TEST_SHOW")) fprintf(stderr, "%.3000s\n", strstr(md, "## Headline"));
    assert_non_null(strstr(md, "**not declared before every run**: 2 runs recorded no protocol "
                               "(made before it or without it: `base_s6.h5`, `late_s1.h5`); 10 "
                               "runs recorded another protocol (`base_s1.h5`, `base_s2.h5`"));
    assert_non_null(strstr(md, " and 2 more)"));
    assert_non_null(strstr(md, "| wilcoxon (paired, 5 seeds; 1 without a partner left out) |"));
    free(md);
}

/* The primary family tests the paper's claims over runs of the paper's
 * architecture as they attend: beside 5 + 5 seeds, g1 seeds 6 and 7 under
 * a window of 2 keys (seq_len 256) are left out and counted, and seed 8
 * under a window of 256, full causal attention at its length, is tested. */
static void test_confirm_paper_arch(void **state) {
    (void)state;
    char saved[256];
    enter_subdir(saved, sizeof saved, "confirm-arch");
    make_base_and_g1();
    g_extra_sets[0] = "window=2";
    make_run("g1_s6.h5", "g1-elem", 6, 1.0, 0.05f, 1, 0);
    make_run("g1_s7.h5", "g1-elem", 7, 1.0, 0.05f, 1, 0);
    g_extra_sets[0] = "window=256";
    make_run("g1_s8.h5", "g1-elem", 8, 1.0, 0.05f, 1, 0);
    g_extra_sets[0] = NULL;
    put_protocol("[primary]\nmetric = f_attn\ntest = f_attn mann-whitney\ncompare = g1 vs base\n"
                 "paper = f_attn g1 < base\n");
    char *md = report_in_subdir(saved);
    const char *sec = strstr(md, "## Headline (confirmatory)");
    assert_non_null(sec);
    if (getenv("GATELAB_TEST_SHOW")) fprintf(stderr, "%.5000s\n", sec);
    assert_non_null(strstr(sec, "has 1 primary test, one per claim of the paper it declares, up "
                                "to 6 seeds"));
    assert_non_null(strstr(sec, "\n2 runs of another architecture than the paper's (RoPE, full "
                                "causal attention, pre-norm; see Settings) are left out of these "
                                "tests: the paper's claims are about its architecture; the "
                                "exploratory comparisons below include them.\n"));
    assert_non_null(strstr(sec, "| g1 | 0 of 6 |")); /* sink counts: the 6 that count */
    free(md);
}

/* A val_loss test on a task whose floor leaves less room than the paper's
 * effect is untestable: baseline against g1-elem, PPL 6.026 against 5.761
 * in the paper (0.045 nats); a floor of 2.19 leaves 2.2 - 2.19 = 0.01.
 * F-Attn is confirmed beside it, and nothing outside the claims is tested
 * in the primary family. */
static void test_confirm_headroom(void **state) {
    (void)state;
    char saved[256];
    enter_subdir(saved, sizeof saved, "headroom");
    g_task_floor = 2.19;
    make_base_and_g1();
    g_task_floor = NAN;
    put_protocol("[primary]\nmetric = val_loss\nmetric = f_attn\ntest = val_loss welch\n"
                 "test = f_attn mann-whitney\ncompare = g1 vs base\npaper = val_loss g1 < base\n"
                 "paper = f_attn g1 < base\n");
    char *md = report_in_subdir(saved);
    const char *sec = strstr(md, "## Headline (confirmatory)");
    assert_non_null(sec);
    if (getenv("GATELAB_TEST_SHOW")) fprintf(stderr, "%.5000s\n", sec);
    assert_non_null(strstr(sec, "The task's floor, the Bayes-optimal val loss on the runs' val "
                                "batches (docs/metrics.md, task floor), is 2.1900 nats (10 runs "
                                "record it)"));
    assert_non_null(strstr(sec, "- P1: the task's floor is 2.1900 nats and the arms average 1.7000 "
                                "and 2.2000, so no arm can gain more than 0.0100 nats, less than "
                                "the paper's effect (0.0450 nats, PPL 5.761 against 6.026)."));
    assert_non_null(strstr(sec, "attention sink). **Untestable here**: the baseline `base` "
                                "shows no sink to remove"));
    assert_null(strstr(sec, "Other differences"));
    free(md);
}

/* test_lr_section's runs: baseline and g1-elem at lr 1e-3, 1e-2 and 1e-1,
 * seeds 1-3 (final losses base[r] and gate[r], plus 0.03 s at 1e-1); with
 * arch, beside each a baseline under a window of 2 keys (final loss 0.6)
 * and a post-norm g1-elem. */
static void make_lr_runs(int arch) {
    static const float lrs[3] = {1e-3f, 1e-2f, 1e-1f};
    static const double base[3] = {1.5, 1.2, 1.9}, gate[3] = {1.3, 1.2, 1.25};
    char path[500];
    for (int s = 1; s <= 3; s++)
        for (int r = 0; r < 3; r++) {
            double d = r == 2 ? 0.03 * s : 0.0;
            snprintf(path, sizeof path, "baseline-lr%d_s%d.h5", r, s);
            make_run_cfg(path, "baseline", s, base[r] + d, 0.5f, 0, 0, DATA_BIGRAM, lrs[r]);
            snprintf(path, sizeof path, "g1-elem-lr%d_s%d.h5", r, s);
            make_run_cfg(path, "g1-elem", s, gate[r] + d, 0.05f, 1, 0, DATA_BIGRAM, lrs[r]);
            if (!arch) continue;
            g_extra_sets[0] = "window=2";
            snprintf(path, sizeof path, "baseline-win-lr%d_s%d.h5", r, s);
            make_run_cfg(path, "baseline", s, 0.6, 0.5f, 0, 0, DATA_BIGRAM, lrs[r]);
            g_extra_sets[0] = "norm_place=post";
            snprintf(path, sizeof path, "g1-elem-post-lr%d_s%d.h5", r, s);
            make_run_cfg(path, "g1-elem", s, gate[r] + d, 0.05f, 1, 0, DATA_BIGRAM, lrs[r]);
            g_extra_sets[0] = NULL;
        }
}

/* The learning-rate section on 2 arms x 3 rates x 3 seeds built by hand.
 * The loss at the first step is 2.0 (make_run_cfg). Seed s's final losses:
 * baseline 1.5, 1.2, 1.9 + 0.03 s at lr 1e-3, 1e-2, 1e-1, so its LR
 * sensitivity is (1.5 + 1.2 + 1.9 + 0.03 s) / 3 - 1.2 = 1/3 + 0.01 s;
 * g1-elem 1.3, 1.2, 1.25 + 0.03 s, so 0.05 + 0.01 s. Means 0.3533 and
 * 0.0700, sd 0.01 each; on their logs (the declared test: one-sided Welch,
 * g1-elem below baseline) t = -19.2 on 2.2 df (the logs' sd are 0.144 and
 * 0.028), one-sided p = 0.00095, Holm over the two tests 0.0019. The instability
 * rule fires: baseline's best final loss is 1.2, so its three runs at lr
 * 1e-1 (1.93, 1.96, 1.99) are more than 0.5 above it, 3 of 9 against
 * g1-elem's 0 of 9 (Fisher p = 0.206, not significant). */
static void test_lr_section(void **state) {
    (void)state;
    char saved[256], want[400];
    enter_subdir(saved, sizeof saved, "lr");
    make_lr_runs(0);
    char *md = report_in_subdir(saved);
    const char *sec = strstr(md, "## Learning-rate sensitivity");
    assert_non_null(sec);
    if (getenv("GATELAB_TEST_SHOW")) fprintf(stderr, "%.5000s\n", sec);
    assert_non_null(strstr(sec, "| baseline | 0.001 | 3 | 1.5000 [1.5000, 1.5000] | 0 of 3 |"));
    snprintf(want, sizeof want,
             "- `g1-elem` against `baseline`: LR sensitivity %.4f against %.4f, **lower** by "
             "the one-sided Welch's t-test on log LR sensitivity (arm < baseline), Holm p = "
             "0.0019 (L1)",
             0.07, 1.0 / 3.0 + 0.02);
    assert_non_null(strstr(sec, want));
    assert_non_null(
        strstr(sec, "| baseline | 0.1 | 3 | 1.9600 [1.8855, 2.0345] | 0 of 3 | 3 of 3 |"));
    assert_non_null(strstr(sec, "unstable runs 0 of 9 against 3 of 9, no difference shown"));
    assert_non_null(strstr(sec, "| Welch on log, one-sided | "));
    assert_non_null(strstr(sec, "Exploratory: these tests are in no family of the protocol and "
                                "state no claim of the paper"));
    assert_null(strstr(sec, "**supported**"));
    /* this binary reports without figures (main): each figure's place says so */
    assert_non_null(strstr(sec, "\n- figure lr_loss.png not drawn (`--no-figures`)\n"));
    assert_non_null(strstr(sec, "\n- figure lr_max_logit.png not drawn (`--no-figures`)\n"));
    free(md);
}

/* The learning-rate section's arms are a variant under one architecture
 * as it attends: beside test_lr_section's baseline and g1-elem, a baseline
 * under a window of 2 keys (final loss 0.6 at every rate, seeds 1-3) is an
 * arm of its own, not runs of `baseline` (whose rows and test are those of
 * test_lr_section), and a post-norm g1-elem, with no baseline of its
 * architecture, is named and not tested. The stability section's arm of
 * `baseline` is its own as well: its best final loss is 1.2, not 0.6, so
 * none of its runs at lr 1e-3 (1.5) is unstable. */
static void test_lr_arch(void **state) {
    (void)state;
    char saved[256], want[400];
    enter_subdir(saved, sizeof saved, "lr-arch");
    make_lr_runs(1);
    char *md = report_in_subdir(saved);
    const char *sec = strstr(md, "## Learning-rate sensitivity");
    assert_non_null(sec);
    if (getenv("GATELAB_TEST_SHOW")) fprintf(stderr, "%.6000s\n", sec);
    assert_non_null(strstr(sec, "| baseline | 0.001 | 3 | 1.5000 [1.5000, 1.5000] | 0 of 3 |"));
    assert_non_null(
        strstr(sec, "| baseline (window 2) | 0.001 | 3 | 0.6000 [0.6000, 0.6000] | 0 of 3 |"));
    snprintf(want, sizeof want,
             "- `g1-elem` against `baseline`: LR sensitivity %.4f against %.4f, **lower** by "
             "the one-sided Welch's t-test on log LR sensitivity (arm < baseline), Holm p = "
             "0.0019 (L1)",
             0.07, 1.0 / 3.0 + 0.02);
    assert_non_null(strstr(sec, want));
    assert_non_null(strstr(sec, "\nNot tested, no `baseline` arm of their architecture: "
                                "`g1-elem (norm_place post)`.\n"));
    assert_non_null(strstr(sec, "Each arm against `baseline` of its own architecture"));
    /* the stability section's arms too: baseline's best is its own 1.2 */
    const char *st = strstr(md, "## Stability across learning rates");
    assert_non_null(st);
    assert_non_null(strstr(st, "(same variant and data under the same architecture as it "
                               "attends, any lr)"));
    const char *row = strstr(st, "| bigram | 0.001 | baseline | baseline-lr0 | 3 |");
    assert_non_null(row);
    assert_true(strstr(row, "| 0/3 |\n") && strstr(row, "| 0/3 |\n") < strchr(row, '\n') + 1);
    free(md);
}

/* The metrics a protocol may declare are the metric table's rows with a
 * `proto`, named by their CSV names; the refusals name them. */
static void test_protocol_metrics(void **state) {
    (void)state;
    Protocol p;
    char err[400];
    memset(&p, 0, sizeof p);
    assert_int_equal(protocol_key(&p, "metric", "ppl", err, sizeof err), -1);
    /* every declarable metric, in the table's order: add a new one here */
    assert_string_equal(err, "metric 'ppl' is not val_loss, f_attn, m_act, lc_deg_2x_plain, "
                             "lc_deg_4x_plain, lc_deg_8x_plain, lc_deg_2x_yarn, lc_deg_4x_yarn, "
                             "lc_deg_8x_yarn, quant_w8a8_dloss, quant_w8a8pct_dloss, "
                             "quant_w4a4_dloss or good_regime");
    /* the metrics the protocol treats specially are declarable rows */
    const char *special[] = {PROTO_SINK_METRIC, PROTO_SINK_FLAG, PROTO_MASSIVE_METRIC,
                             PROTO_LOSS_METRIC};
    for (int i = 0; i < 4; i++) assert_non_null(metric_declared(proto_metric_of(special[i])));
    for (int i = 0; metric_at(i); i++) {
        const MetricCol *c = metric_at(i);
        if (!c->proto) {
            assert_null(metric_declared(i));
            assert_null(proto_metric_name(i));
            continue;
        }
        assert_int_equal(proto_metric_of(c->csv), i);
        assert_string_equal(proto_metric_name(i), c->csv);
        assert_ptr_equal(metric_declared(i), c);
        assert_int_equal(protocol_key(&p, "metric", c->csv, err, sizeof err),
                         c->not_primary ? -1 : 0);
    }
    assert_non_null(strstr(err, "'sink_formed' is not a primary metric"));
    assert_int_equal(proto_metric_of(PROTO_GOOD_REGIME), PROTO_GOOD_REGIME_M);
    assert_string_equal(proto_metric_name(PROTO_GOOD_REGIME_M), PROTO_GOOD_REGIME);
    assert_null(proto_metric_name(-1));
    assert_int_equal(proto_metric_of("ppl"), -1);
    assert_int_equal(protocol_key(&p, "margin", "sink_formed 0.1", err, sizeof err), -1);
    assert_string_equal(err,
                        "margin 'sink_formed 0.1': sink_formed has no mean to be equivalent in");
    assert_int_equal(protocol_key(&p, "margin", "m_act 2", err, sizeof err), 0);
    /* one declared test per metric, named */
    assert_int_equal(protocol_check(&p, err, sizeof err), -1);
    assert_non_null(strstr(err, "metric val_loss has no declared test: add 'test = val_loss"));
    assert_int_equal(protocol_key(&p, "test", "f_attn larger-of", err, sizeof err), -1);
    assert_int_equal(protocol_key(&p, "test", "f_attn paired-t", err, sizeof err), 0);
    assert_int_equal(protocol_key(&p, "test", "f_attn welch", err, sizeof err), -1);
    assert_non_null(strstr(err, "one test per metric"));
    assert_int_equal(protocol_key(&p, "test", "m_act fisher", err, sizeof err), 0);
    assert_int_equal(protocol_key(&p, "test", "val_loss wilcoxon", err, sizeof err), 0);
    assert_int_equal(protocol_check(&p, err, sizeof err), -1);
    assert_non_null(strstr(err, "m_act cannot be tested by fisher"));
    p.test[proto_metric_of("m_act")] = PT_WELCH;
    assert_int_equal(protocol_check(&p, err, sizeof err), -1); /* the declared lc_deg_* ... */
    assert_non_null(strstr(err, "metric lc_deg_2x_plain has no declared test"));
    for (int i = 0; i < p.n_metrics; i++)
        if (p.test[p.metrics[i]] == PT_NONE) p.test[p.metrics[i]] = PT_WILCOXON;
    assert_int_equal(protocol_check(&p, err, sizeof err), 0);
    assert_int_equal(protocol_key(&p, "metric", "good_regime", err, sizeof err), 0);
    assert_int_equal(protocol_key(&p, "test", "good_regime fisher", err, sizeof err), 0);
    assert_int_equal(protocol_check(&p, err, sizeof err), -1);
    assert_non_null(strstr(err, "needs 'threshold = val_loss_below VALUE'"));
    assert_int_equal(protocol_key(&p, "threshold", "val_loss_above 1.8", err, sizeof err), -1);
    assert_int_equal(protocol_key(&p, "threshold", "val_loss_below 1.8", err, sizeof err), 0);
    assert_int_equal(protocol_check(&p, err, sizeof err), 0);
    assert_int_equal(protocol_key(&p, "compare", "a vs b", err, sizeof err), 0);
    assert_int_equal(protocol_key(&p, "paper", "f_attn a < b two-sided", err, sizeof err), -1);
    assert_int_equal(protocol_key(&p, "paper", "f_attn a < b one-sided", err, sizeof err), 0);
    assert_int_equal(p.claims[0].one_sided, 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_median_seed_compare),
        cmocka_unit_test(test_no_figures),
        cmocka_unit_test(test_gated_run_is_no_baseline),
        cmocka_unit_test(test_settings_proxy_count),
        cmocka_unit_test(test_compare_section),
        cmocka_unit_test(test_compare_skips_primary),
        cmocka_unit_test(test_confirm_section),
        cmocka_unit_test(test_confirm_declared),
        cmocka_unit_test(test_confirm_headroom),
        cmocka_unit_test(test_confirm_paper_arch),
        cmocka_unit_test(test_protocol_metrics),
        cmocka_unit_test(test_lr_section),
        cmocka_unit_test(test_lr_arch),
    };
    report_set_figures(0); /* drawn by the tests that look at them */
    return cmocka_run_group_tests(tests, tu_scratch_setup, tu_scratch_teardown);
}
