/* test_report_arch.c: the report and the architecture keys (pos, window,
 * window_layers, norm_place). Run files built by hand (no trainer) under
 * several architectures in one directory: each run meets the baseline of
 * its own configuration, a run no baseline matches is named; the uniform
 * share and "sink formed" follow the run's window; results.csv carries the
 * keys and reads back byte for byte, and an older results.csv without them
 * reads as the paper's architecture; the Settings line names the keys that
 * differ from the paper's; "Ours beside the paper" keeps the paper's
 * architecture only; a window that covers the training length is full
 * causal attention, and the long-context headline judges it at 8x. Every
 * expected number is worked out here. */
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

#include "config.h"
#include "lceval_fixture.h"
#include "report.h"
#include "report_priv.h"
#include "runfile.h"
#include "testutil.h"

enum { L = 2, H = 1, N = 1, T = 8 };

/* A finished run file dir/name: variant at seed 1 with val_loss, the
 * config keys sets[] (NULL-ended) over the defaults, and one probe of
 * L x H heads over T tokens whose row t >= 1 gives f to token 0 and 1 - f
 * to itself, so its F-Attn is f. */
static void make_run(const char *dir, const char *name, const char *variant, double val_loss,
                     float f, const char *const *sets) {
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    Config cfg;
    config_defaults(&cfg);
    assert_int_equal(config_apply_variant(&cfg, variant, err, sizeof err), 0);
    for (int k = 0; sets && sets[k]; k++)
        if (config_set(&cfg, sets[k], err, sizeof err)) fail_msg("%s", err);
    cfg.n_layers = L, cfg.n_heads = H, cfg.init_seed = 1;
    RunFile *rf = runfile_create(path, &cfg, NULL, 1, err, sizeof err);
    if (!rf) fail_msg("%s", err);
    assert_int_equal(runfile_append_eval(rf, 100, val_loss, val_loss / log(2), err, sizeof err), 0);
    float A[L * H * T * T] = {0}, col[N * L * H * T], alpha0[L * H];
    int tokens[N * T] = {0};
    for (int lh = 0; lh < L * H; lh++) {
        for (int t = 0; t < T; t++) {
            A[(lh * T + t) * T] = t ? f : 1.0f;
            if (t) A[(lh * T + t) * T + t] = 1.0f - f;
            col[lh * T + t] = t ? f : 1.0f;
        }
        alpha0[lh] = (1.0f + (T - 1) * f) / T;
    }
    double hmax[L] = {10, 30}, hmed[L] = {1, 1}, htop[L * 3] = {10, 5, 4, 30, 6, 5},
           hkurt[L] = {3, 9}, hnr[L] = {1, 2}, bos[L] = {8 * f, 20 * f};
    ProbeRecord p = {.step = 100,
                     .L = L,
                     .H = H,
                     .N = N,
                     .T = T,
                     .tokens = tokens,
                     .attention = A,
                     .first_col = col,
                     .alpha0 = alpha0,
                     .normaliser = "softmax",
                     .h_max = hmax,
                     .h_median = hmed,
                     .h_top3 = htop,
                     .h_kurtosis = hkurt,
                     .h_norm_ratio = hnr,
                     .bos_max = bos};
    assert_int_equal(runfile_write_probe(rf, &p, err, sizeof err), 0);
    assert_int_equal(runfile_set_summary(rf, "steps_done", 100, err, sizeof err), 0);
    assert_int_equal(runfile_set_summary(rf, "final_val_loss", val_loss, err, sizeof err), 0);
    assert_int_equal(runfile_set_status(rf, "done", err, sizeof err), 0);
    assert_int_equal(runfile_close(rf, err, sizeof err), 0);
}

static const char *const SANDWICH[] = {"norm_place=sandwich", NULL};
static const char *const ALIBI[] = {"pos=alibi", NULL};
static const char *const WIN[] = {"window=4", NULL};
static const char *const WIN_ALT[] = {"window=4", "window_layers=alternate", NULL};

/* tu_scratch/cover, every run trained at seq_len 64: the paper's baseline,
 * and g1-elem under windows that cover the sequence (64 keys on alternate
 * layers; 128; 512), so each attends as full causal attention at 64; at 8x
 * (512, the long-context headline's length) only the window of 512 still
 * does. */
static void make_cover(void) {
    char cover[300];
    snprintf(cover, sizeof cover, "%s/cover", tu_scratch);
    mkdir(cover, 0777);
    static const char *const PLAIN[] = {"seq_len=64", NULL},
                             *const W64[] = {"seq_len=64", "window=64", "window_layers=alternate",
                                             NULL},
                             *const W128[] = {"seq_len=64", "window=128", NULL},
                             *const W512[] = {"seq_len=64", "window=512", NULL};
    make_run(cover, "baseline_s1.h5", "baseline", 2.0, 0.5f, PLAIN);
    make_run(cover, "g1-elem_s1.h5", "g1-elem", 1.9, 0.05f, W64);
    make_run(cover, "g1-elem-w128_s1.h5", "g1-elem", 1.8, 0.05f, W128);
    make_run(cover, "g1-elem-w512_s1.h5", "g1-elem", 1.7, 0.05f, W512);
    add_lceval(cover, "baseline_s1.h5", 2.0, 3.0, 2.0, 2.5);
    add_lceval(cover, "g1-elem-w128_s1.h5", 1.8, 1.9, 1.8, 1.85);
    add_lceval(cover, "g1-elem-w512_s1.h5", 1.7, 2.2, 1.7, 2.0);
}

/* tu_scratch/mix: a pre-norm and a sandwich baseline, a sandwich g1-elem whose
 * name suffix matches neither, an ALiBi g1-elem (no ALiBi baseline), and
 * windowed baselines (every layer; alternate layers). tu_scratch/sw: sandwich
 * runs under a window only. */
static int setup(void **state) {
    if (tu_scratch_setup(state)) return -1;
    char mix[300], sw[300];
    snprintf(mix, sizeof mix, "%s/mix", tu_scratch);
    snprintf(sw, sizeof sw, "%s/sw", tu_scratch);
    mkdir(mix, 0777);
    mkdir(sw, 0777);
    make_run(mix, "baseline_s1.h5", "baseline", 2.0, 0.5f, NULL);
    make_run(mix, "baseline-sw_s1.h5", "baseline", 2.2, 0.5f, SANDWICH);
    make_run(mix, "g1-elem-sand_s1.h5", "g1-elem", 2.1, 0.05f, SANDWICH);
    make_run(mix, "g1-elem-alibi_s1.h5", "g1-elem", 1.9, 0.05f, ALIBI);
    make_run(mix, "baseline-win_s1.h5", "baseline", 2.3, 0.4f, WIN);
    make_run(mix, "baseline-alt_s1.h5", "baseline", 2.4, 0.4f, WIN_ALT);
    /* long context: the windowed baseline (first in name order) degrades
     * least, the ALiBi g1-elem less than the paper's baseline */
    add_lceval(mix, "baseline-win_s1.h5", 2.3, 2.4, 2.3, 2.35);
    add_lceval(mix, "baseline_s1.h5", 2.0, 3.0, 2.0, 2.5);
    add_lceval(mix, "g1-elem-alibi_s1.h5", 1.9, 2.0, 1.9, 1.95);
    static const char *const SW_WIN[] = {"norm_place=sandwich", "window=4", NULL};
    make_run(sw, "baseline_s1.h5", "baseline", 2.0, 0.5f, SW_WIN);
    make_cover();
    static const char *const subs[] = {"mix", "sw", "cover"};
    for (int k = 0; k < 3; k++) {
        char err[512] = "", in[300], out[400];
        snprintf(in, sizeof in, "%s/%s", tu_scratch, subs[k]);
        snprintf(out, sizeof out, "%s/out", in);
        if (report_run(in, out, err, sizeof err) != 0) fail_msg("%s", err);
    }
    return 0;
}

/* The file sub/out/name under tu_scratch, malloc'd. */
static char *out_file(const char *sub, const char *name) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s/out/%s", tu_scratch, sub, name);
    return tu_slurp_ok(path, NULL);
}

/* The section of md from the heading head to the next "## ", malloc'd. */
static char *section(const char *md, const char *head) {
    char *s = tu_md_section(md, head);
    if (!s) fail_msg("REPORT.md has no %s", head);
    return s;
}

/* (H_n - 1) / (T - 1), summed here term by term. */
static double harmonic_share(int n) {
    double h = 0.0;
    for (int i = 2; i <= n; i++) h += 1.0 / i;
    return h / (T - 1);
}

/* The sandwich g1-elem meets the sandwich baseline, not the pre-norm one
 * its name would pick; the ALiBi one meets none and is named. */
static void test_baseline_by_config(void **state) {
    (void)state;
    char *csv = out_file("mix", "results.csv"), *md = out_file("mix", "REPORT.md");
    double d = atof(tu_csv_cell(csv, "g1-elem-sand_s1.h5", "dppl_vs_baseline"));
    assert_true(fabs(d - (exp(2.1) - exp(2.2))) < 1e-6);
    assert_string_equal(tu_csv_cell(csv, "g1-elem-alibi_s1.h5", "dppl_vs_baseline"), "");
    assert_string_equal(tu_csv_cell(csv, "baseline-win_s1.h5", "dppl_vs_baseline"), "0");
    assert_non_null(strstr(md, "| g1-elem-sand_s1.h5 | g1-elem-sand | g1-elem | brown | 1 | "
                               "baseline-sw |"));
    assert_non_null(strstr(md, "No matching baseline group for `g1-elem-alibi` (brown, pos "
                               "alibi)"));
    assert_null(strstr(md, "`g1-elem-sand` (brown, norm_place"));
    char *cmp = section(md, "## Exploratory comparisons");
    assert_null(strstr(cmp, "| g1-elem-alibi |"));
    free(cmp), free(csv), free(md);
}

/* The uniform share under a window of 4 keys at T = 8: (H_4 - 1) / 7 on
 * every layer; under alternate, the mean of that and the full causal
 * (H_8 - 1) / 7. F-Attn 0.4 formed a sink against the windowed share
 * (2 x 0.155 < 0.4) though not against the full causal one (2 x 0.245). */
static void test_uniform_under_window(void **state) {
    (void)state;
    char *csv = out_file("mix", "results.csv");
    double win = harmonic_share(4), full = harmonic_share(8);
    assert_true(2 * win < 0.4 && 2 * full > 0.4);
    assert_true(fabs(atof(tu_csv_cell(csv, "baseline-win_s1.h5", "f_attn_uniform")) - win) < 1e-12);
    assert_true(fabs(atof(tu_csv_cell(csv, "baseline-alt_s1.h5", "f_attn_uniform")) -
                     0.5 * (win + full)) < 1e-12);
    assert_true(fabs(atof(tu_csv_cell(csv, "baseline_s1.h5", "f_attn_uniform")) - full) < 1e-12);
    assert_string_equal(tu_csv_cell(csv, "baseline-win_s1.h5", "sink_formed"), "1");
    assert_string_equal(tu_csv_cell(csv, "baseline-alt_s1.h5", "sink_formed"), "0");
    free(csv);
}

/* results.csv: the cfg_ columns of the architecture keys; read back and
 * written again, the same bytes; without those columns, the paper's. */
static void test_csv_arch_columns(void **state) {
    (void)state;
    char *csv = out_file("mix", "results.csv");
    assert_string_equal(tu_csv_cell(csv, "g1-elem-sand_s1.h5", "cfg_norm_place"), "sandwich");
    assert_string_equal(tu_csv_cell(csv, "g1-elem-alibi_s1.h5", "cfg_pos"), "alibi");
    assert_string_equal(tu_csv_cell(csv, "baseline-alt_s1.h5", "cfg_window"), "4");
    assert_string_equal(tu_csv_cell(csv, "baseline-alt_s1.h5", "cfg_window_layers"), "alternate");
    assert_string_equal(tu_csv_cell(csv, "baseline_s1.h5", "cfg_pos"), "rope");
    assert_string_equal(tu_csv_cell(csv, "baseline_s1.h5", "cfg_window"), "0");
    char in[600], again[600], old[600], err[512];
    snprintf(in, sizeof in, "%s/mix/out/results.csv", tu_scratch);
    snprintf(again, sizeof again, "%s/again.csv", tu_scratch);
    Row *rows;
    int n;
    assert_int_equal(csv_read_rows(tu_scratch, in, &rows, &n, err, sizeof err), 0);
    assert_int_equal(write_csv(again, rows, n, err, sizeof err), 0);
    free(rows);
    char *back = tu_slurp_ok(again, NULL);
    assert_string_equal(back, csv);
    free(back);
    /* an older results.csv: the four columns cut off every line */
    char *cut = strdup(csv), *o = cut;
    for (const char *s = csv; *s;) {
        const char *e = s + strcspn(s, "\n");
        const char *c = e;
        for (int k = 0; k < 4; k++)
            while (c > s && *--c != ',') {}
        memcpy(o, s, (size_t)(c - s)), o += c - s;
        if (*e) *o++ = '\n';
        s = *e ? e + 1 : e;
    }
    *o = '\0';
    assert_null(strstr(cut, "cfg_pos"));
    snprintf(old, sizeof old, "%s/old.csv", tu_scratch);
    tu_write_text(old, cut);
    assert_int_equal(csv_read_rows(tu_scratch, old, &rows, &n, err, sizeof err), 0);
    for (int i = 0; i < n; i++) {
        assert_string_equal(rows[i].arch[RS_ARCH_POS], "rope");
        assert_string_equal(rows[i].arch[RS_ARCH_WINDOW], "0");
        assert_string_equal(rows[i].arch[RS_ARCH_WINDOW_LAYERS], "all");
        assert_string_equal(rows[i].arch[RS_ARCH_NORM_PLACE], "pre");
    }
    free(rows), free(cut), free(csv);
}

/* Settings: keys the runs of a data source share are named only when not
 * the paper's; keys they do not share are listed with their values. */
static void test_settings_names_arch(void **state) {
    (void)state;
    char *md = out_file("sw", "REPORT.md"), *mix = out_file("mix", "REPORT.md");
    char *s = section(md, "## Settings"), *m = section(mix, "## Settings");
    assert_non_null(strstr(s, ", window 4, norm_place sandwich"));
    assert_null(strstr(s, "pos "));
    assert_null(strstr(s, "window_layers"));
    assert_non_null(strstr(m, "pos rope alibi"));
    assert_non_null(strstr(m, "window 0 4"));
    assert_non_null(strstr(m, "window_layers all alternate"));
    assert_non_null(strstr(m, "norm_place pre sandwich"));
    free(s), free(m), free(md), free(mix);
}

/* Ours beside the paper: the pre-norm, RoPE, full causal groups only. */
static void test_paper_table_paper_arch(void **state) {
    (void)state;
    char *md = out_file("mix", "REPORT.md");
    char *s = section(md, "## Ours beside the paper");
    assert_non_null(strstr(s, "| baseline | brown |"));
    assert_null(strstr(s, "| g1-elem-sand |"));
    assert_null(strstr(s, "| g1-elem-alibi |"));
    assert_null(strstr(s, "| baseline-win |"));
    assert_null(strstr(s, "| baseline-alt |"));
    assert_null(strstr(s, "| baseline-sw |"));
    assert_non_null(strstr(s, "5 run groups of another architecture"));
    free(s), free(md);
}

/* The long-context headline beside Table 5 picks runs of the paper's
 * architecture only: the pre-norm full causal RoPE baseline, not the
 * windowed one first in name order; the ALiBi g1-elem has no row and no
 * test, and the two left out are counted. */
static void test_longctx_paper_arch(void **state) {
    (void)state;
    char *md = out_file("mix", "REPORT.md"), *lc = section(md, "## Long context");
    const char *h = strstr(lc, "**Degradation at 8× T**");
    assert_non_null(h);
    if (getenv("GATELAB_TEST_SHOW")) fprintf(stderr, "%s\n", h);
    assert_non_null(strstr(h, "| baseline | baseline | brown | 1 | +1.0000 | +0.5000 |"));
    assert_null(strstr(h, "| baseline | baseline-win |"));
    assert_null(strstr(h, "| g1-elem |"));
    assert_null(strstr(h, "against the baseline**"));
    assert_non_null(strstr(h, "2 run names of another architecture than the paper's"));
    free(lc), free(md);
}

/* The Mechanism section's test across run groups takes the groups of the
 * paper's architecture only (here one: too few to test) and counts the
 * five others; its scatter gives them marks of their own. */
static void test_mechanism_paper_arch(void **state) {
    (void)state;
    char *md = out_file("mix", "REPORT.md"), *s = section(md, "## Mechanism");
    if (getenv("GATELAB_TEST_SHOW")) fprintf(stderr, "%s\n", s);
    assert_non_null(strstr(s, "one point per run file (n = 6)"));
    assert_non_null(strstr(s, "runs of another architecture than the paper's have marks"));
    assert_non_null(strstr(s, "Across run groups: not computed (1 groups)."));
    assert_non_null(strstr(s, "5 run groups of another architecture than the paper's (RoPE, full "
                              "causal attention, pre-norm; see Settings) are left out of the test "
                              "across groups, which compares F-Attn within one architecture"));
    free(s), free(md);
}

/* A window at least as long as the training length is full causal
 * attention there: each g1-elem of tu_scratch/cover meets the paper's
 * baseline (ΔPPL against it), is no group left unmatched, and stands
 * beside the paper's rows; results.csv keeps the window each run
 * recorded. */
static void test_window_covering_sequence(void **state) {
    (void)state;
    char *csv = out_file("cover", "results.csv"), *md = out_file("cover", "REPORT.md");
    double d = atof(tu_csv_cell(csv, "g1-elem_s1.h5", "dppl_vs_baseline"));
    assert_true(fabs(d - (exp(1.9) - exp(2.0))) < 1e-6);
    d = atof(tu_csv_cell(csv, "g1-elem-w128_s1.h5", "dppl_vs_baseline"));
    assert_true(fabs(d - (exp(1.8) - exp(2.0))) < 1e-6);
    assert_string_equal(tu_csv_cell(csv, "g1-elem_s1.h5", "cfg_window"), "64");
    assert_string_equal(tu_csv_cell(csv, "g1-elem_s1.h5", "cfg_window_layers"), "alternate");
    assert_null(strstr(md, "No matching baseline group"));
    char *s = section(md, "## Ours beside the paper");
    if (getenv("GATELAB_TEST_SHOW")) fprintf(stderr, "%s\n", s);
    assert_non_null(strstr(s, "| g1-elem | brown |"));
    assert_non_null(strstr(s, "| g1-elem-w128 | brown |"));
    assert_non_null(strstr(s, "| g1-elem-w512 | brown |"));
    assert_null(strstr(s, "of another architecture"));
    char *m = section(md, "## Mechanism");
    assert_null(strstr(m, "of another architecture"));
    free(m), free(s), free(csv), free(md);
}

/* The long-context headline judges the architecture at 8x T, the length
 * it compares: the window of 128 (full causal up to 2x T = 128 only) is
 * left out and counted; the window of 512 attends as full causal at every
 * length, so it is g1-elem's row, tested against the baseline. */
static void test_longctx_window_at_8x(void **state) {
    (void)state;
    char *md = out_file("cover", "REPORT.md"), *lc = section(md, "## Long context");
    const char *h = strstr(lc, "**Degradation at 8× T**");
    assert_non_null(h);
    if (getenv("GATELAB_TEST_SHOW")) fprintf(stderr, "%s\n", h);
    assert_non_null(strstr(h, "| baseline | baseline | brown | 1 | +1.0000 |"));
    assert_non_null(strstr(h, "| g1-elem | g1-elem-w512 | brown | 1 | +0.5000 |"));
    assert_null(strstr(h, "| g1-elem-w128 |"));
    assert_non_null(strstr(h, "| g1-elem | g1-elem-w512 | brown | plain |"));
    assert_non_null(strstr(h, "1 run name of another architecture than the paper's"));
    free(lc), free(md);
}

/* A checkpoint windowed on some layers ("W on k/L", rs_arch_values) is of
 * another architecture than the paper's at lengths past its window, and
 * attends as full causal attention at lengths within it; one whose
 * windows differ ("<=W on k/L", W the largest) never reads as full, since
 * a smaller window may still slide. */
static void test_per_layer_window_arch(void **state) {
    (void)state;
    char v[RS_N_ARCH][RS_ARCH_LEN] = {"rope", "4096 on 12/24", "per-layer", "pre"};
    char note[RS_N_ARCH * 2 * RS_ARCH_LEN];
    rs_arch_note((const char(*)[RS_ARCH_LEN])v, 8192, note, sizeof note);
    assert_string_equal(note, "window 4096 on 12/24, window_layers per-layer");
    assert_false(rs_arch_paper_at((const char(*)[RS_ARCH_LEN])v, 8192));
    assert_true(rs_arch_paper_at((const char(*)[RS_ARCH_LEN])v, 4096));
    snprintf(v[RS_ARCH_WINDOW], RS_ARCH_LEN, "<=4096 on 12/24");
    assert_false(rs_arch_paper_at((const char(*)[RS_ARCH_LEN])v, 4097));
    assert_false(rs_arch_paper_at((const char(*)[RS_ARCH_LEN])v, 4096));
    assert_false(rs_arch_paper_at((const char(*)[RS_ARCH_LEN])v, 64));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_baseline_by_config),
        cmocka_unit_test(test_uniform_under_window),
        cmocka_unit_test(test_csv_arch_columns),
        cmocka_unit_test(test_settings_names_arch),
        cmocka_unit_test(test_paper_table_paper_arch),
        cmocka_unit_test(test_longctx_paper_arch),
        cmocka_unit_test(test_mechanism_paper_arch),
        cmocka_unit_test(test_window_covering_sequence),
        cmocka_unit_test(test_longctx_window_at_8x),
        cmocka_unit_test(test_per_layer_window_arch),
    };
    return cmocka_run_group_tests(tests, setup, tu_scratch_teardown);
}
