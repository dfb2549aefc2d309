/* test_report_lcsv.c: the long-context section of REPORT.md from
 * results.csv alone. Run files built by hand with /lceval (no trainer) are
 * reported, their results.csv alone is reported again, and the two
 * long-context sections must be the same text; the lc_* and rope_*
 * columns hold the run files' numbers, blank for a run without /lceval,
 * and results.csv read back is written again byte for byte. The columns
 * follow LC_MULT and LC_DEPTH, and LC_DEPTH is gatelab eval's depths. */
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
#include "lceval.h" /* LCEVAL_NEEDLE_DEPTH */
#include "metric_table.h"
#include "report.h"
#include "report_priv.h"
#include "report_twin.h"
#include "runfile.h"
#include "testutil.h"

/* A finished run file DIR/runs/name of variant at seed, no metrics. */
static void make_run(const char *name, const char *variant, int seed) {
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/runs/%s", tu_scratch, name);
    Config cfg;
    config_defaults(&cfg);
    assert_int_equal(config_apply_variant(&cfg, variant, err, sizeof err), 0);
    cfg.init_seed = (unsigned long long)seed;
    RunFile *rf = runfile_create(path, &cfg, NULL, 1, err, sizeof err);
    if (!rf) fail_msg("%s", err);
    assert_int_equal(runfile_set_status(rf, "done", err, sizeof err), 0);
    assert_int_equal(runfile_close(rf, err, sizeof err), 0);
}

/* /lceval of name trained at 64 under mode at len: val loss v, the
 * buckets past T at v + 0.1 (so the degradation is v + 0.1 - the loss at
 * 64), and with needle the shares 1, acc and 0 at depths 0, 0.5 and 1. */
static void add_lc(const char *name, const char *mode, int len, double v, int needle, double acc) {
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/runs/%s", tu_scratch, name);
    double b[16];
    int nb = (len + 63) / 64;
    for (int k = 0; k < nb; k++) b[k] = k ? v + 0.1 : v;
    const double depth[3] = {0.0, 0.5, 1.0}, share[3] = {1.0, acc, 0.0};
    LcEvalData d = {.mode = mode,
                    .len = len,
                    .train_len = 64,
                    .val_loss = v,
                    .ppl = exp(v),
                    .yarn_scale = strcmp(mode, "yarn") ? 1 : len / 64.0,
                    .n_seqs = 2,
                    .n_buckets = nb,
                    .loss_by_bucket = b,
                    .n_depths = needle ? 3 : 0,
                    .needle_depth = depth,
                    .needle_acc = share,
                    .needle_n = 4};
    int rc = runfile_write_lceval(path, &d, err, sizeof err);
    if (rc) fail_msg("%s", err);
}

/* Every run with /lceval at 1x, 2x and 8x T (needle at 8x), plain and
 * YaRN; one run also at 96 (no multiple of T); one run has none. */
static int setup(void **state) {
    if (tu_scratch_setup(state)) return -1;
    char path[512];
    snprintf(path, sizeof path, "%s/runs", tu_scratch);
    mkdir(path, 0777);
    snprintf(path, sizeof path, "%s/csv", tu_scratch);
    mkdir(path, 0777);
    const char *names[4] = {"baseline_s1.h5", "baseline_s2.h5", "g1-elem_s1.h5", "g1-elem_s2.h5"};
    for (int i = 0; i < 4; i++) {
        make_run(names[i], i < 2 ? "baseline" : "g1-elem", i % 2 + 1);
        double a = 2.0 + 0.1 * i, g = i < 2 ? 0.0 : -0.3;
        add_lc(names[i], "plain", 64, a, 0, 0);
        add_lc(names[i], "plain", 128, a + 0.4 + g / 2, 0, 0);
        add_lc(names[i], "plain", 512, a + 1.2 + g, 1, 0.25 * i);
        add_lc(names[i], "yarn", 64, a, 0, 0);
        add_lc(names[i], "yarn", 128, a + 0.1, 0, 0);
        add_lc(names[i], "yarn", 512, a + 0.5 + g / 3, 1, 0.125 * i);
    }
    add_lc(names[0], "plain", 96, 2.3, 0, 0);
    make_run("other_s1.h5", "baseline", 1);
    return 0;
}

/* The report over the run files and over their results.csv alone: the
 * same long-context section, and results.csv the same bytes. */
static void test_section_from_csv(void **state) {
    (void)state;
    char *a = report_twin_section(tu_join(tu_scratch, "runs"), tu_join(tu_scratch, "csv"),
                                  "\n## Long context (gatelab eval)");
    /* the section has every table: both modes, the split, the needle, 8x */
    assert_non_null(strstr(a, "| baseline | baseline | brown | 2 | 2.0500 ± 0.0707 |"));
    assert_non_null(strstr(a, "**YaRN (scale = L / T_train)**"));
    assert_non_null(strstr(a, "| baseline | 256 | 32 | 10000 | 1 | 6 | 9 |"));
    assert_non_null(strstr(a, "| run | RoPE | length | seeds | depth 0 | depth 0.5 | depth 1 |"));
    assert_non_null(strstr(a, "| g1-elem | plain | 512 | 2 | 1.000 | 0.625 | 0.000 | 0.542 |"));
    assert_non_null(strstr(a, "**Degradation at 8× T against the baseline**"));
    assert_non_null(strstr(a, "(figures/lceval_loss.png)"));
    assert_null(strstr(a, "L=96")); /* no multiple of T: no column holds it */
    free(a);
}

/* The columns: the run files' numbers, exactly; blank without /lceval. */
static void test_columns(void **state) {
    (void)state;
    char *csv = tu_slurp_ok(tu_join(tu_scratch, "runs/results.csv"), NULL);
    const char *g2 = "g1-elem_s2.h5";
    assert_string_equal(tu_csv_cell(csv, g2, "lc_train_len"), "64");
    assert_true(strtod(tu_csv_cell(csv, g2, "lc_loss_1x_plain"), NULL) == 2.0 + 0.1 * 3);
    assert_true(strtod(tu_csv_cell(csv, g2, "lc_loss_8x_plain"), NULL) ==
                2.0 + 0.1 * 3 + 1.2 - 0.3);
    assert_true(strtod(tu_csv_cell(csv, g2, "lc_loss_2x_yarn"), NULL) == 2.0 + 0.1 * 3 + 0.1);
    assert_string_equal(tu_csv_cell(csv, g2, "lc_loss_4x_plain"), ""); /* not evaluated */
    assert_true(fabs(strtod(tu_csv_cell(csv, g2, "lc_deg_8x_plain"), NULL) - (1.2 - 0.3 + 0.1)) <
                1e-12);
    assert_true(strtod(tu_csv_cell(csv, g2, "needle_acc_8x_plain_depth0.5"), NULL) == 0.75);
    assert_true(strtod(tu_csv_cell(csv, g2, "needle_acc_8x_yarn_depth0.5"), NULL) == 0.375);
    assert_string_equal(tu_csv_cell(csv, g2, "needle_acc_8x_yarn_depth0.25"), "");
    assert_string_equal(tu_csv_cell(csv, g2, "needle_acc_1x_plain_depth0"), "");
    assert_string_equal(tu_csv_cell(csv, g2, "rope_dim"), "32");
    assert_string_equal(tu_csv_cell(csv, g2, "rope_len"), "256");
    assert_string_equal(tu_csv_cell(csv, g2, "rope_base"), "10000");
    const char *lc[] = {"lc_train_len", "lc_loss_1x_plain", "lc_loss_8x_yarn",
                        "needle_acc_8x_plain_depth0"};
    for (size_t i = 0; i < sizeof lc / sizeof *lc; i++)
        assert_string_equal(tu_csv_cell(csv, "other_s1.h5", lc[i]), "");
    free(csv);
}

/* One column per LC_MULT, mode and LC_DEPTH, on the Row's field; the
 * depths are gatelab eval's. */
static void test_columns_follow_lists(void **state) {
    (void)state;
    assert_int_equal(LC_NDEPTH, LCEVAL_NEEDLE_DEPTHS);
    for (int d = 0; d < LC_NDEPTH; d++) assert_true(LC_DEPTH[d] == LCEVAL_NEEDLE_DEPTH[d]);
    for (int m = 0; m < 2; m++)
        for (int k = 0; k < LC_NMULT; k++) {
            const char *mode = m ? "yarn" : "plain";
            char name[96];
            snprintf(name, sizeof name, "lc_loss_%dx_%s", LC_MULT[k], mode);
            const MetricCol *c = metric_find(name);
            assert_non_null(c);
            assert_int_equal(c->off, offsetof(Row, lc_loss[m][k]));
            snprintf(name, sizeof name, "lc_deg_%dx_%s", LC_MULT[k], mode);
            c = metric_find(name);
            if (k) assert_int_equal(c ? c->off : 0, offsetof(Row, lc_deg[m][k]));
            for (int d = 0; d < LC_NDEPTH; d++) {
                snprintf(name, sizeof name, "needle_acc_%dx_%s_depth%g", LC_MULT[k], mode,
                         LC_DEPTH[d]);
                c = metric_find(name);
                assert_non_null(c);
                assert_int_equal(c->off, offsetof(Row, lc_needle[m][k][d]));
            }
        }
}

/* A results.csv written before these columns: read, every lc_* unknown,
 * and no long-context section. */
static void test_older_csv(void **state) {
    (void)state;
    char path[400], err[512];
    snprintf(path, sizeof path, "%s/old.csv", tu_scratch);
    const char old[] = "file,run,variant,data,seed,status,val_loss,lc_deg_8x_plain\n"
                       "x_s1.h5,x,baseline,brown,1,done,2.5,0.75\n";
    tu_write_file(path, old, sizeof old - 1);
    Row *rows;
    int n;
    assert_int_equal(csv_read_rows(tu_scratch, path, &rows, &n, err, sizeof err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(rows[0].lc_T, -1);
    assert_true(isnan(rows[0].lc_loss[0][3]) && isnan(rows[0].lc_needle[1][3][2]));
    assert_true(rows[0].lc_deg[0][3] == 0.75);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    report_longctx(f, tu_scratch, rows, n);
    fclose(f);
    assert_int_equal(len, 0);
    free(buf), free(rows);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_section_from_csv),
        cmocka_unit_test(test_columns),
        cmocka_unit_test(test_columns_follow_lists),
        cmocka_unit_test(test_older_csv),
    };
    return cmocka_run_group_tests(tests, setup, tu_scratch_teardown);
}
