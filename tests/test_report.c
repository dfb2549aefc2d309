/* test_report.c: the report and runread over tiny run files built by hand
 * with src/runfile/runfile.h (no trainer): results.csv rows and values, REPORT.md
 * grouping by run name and mean +- std, ΔPPL against the baseline of the
 * same data and lr, corrupt and truncated files, and the sinks numbers on
 * a map whose answer is known. */
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

/* the runfile_* calls' one-line reason */
static char rf_err[512];

enum { L = 2, H = 2, N = 2, T = 4, C = 4 };

static char g_dir[256];

/* Every head: row 0 all on token 0; row t >= 1 gives `a` to token 0 and
 * spreads 1-a over keys 1..t. So F-Attn = a and alpha_0 over the 4
 * queries = (1 + 3a) / 4. */
static void fill_attention(float *A, float *col, float a) {
    for (int lh = 0; lh < L * H; lh++)
        for (int t = 0; t < T; t++)
            for (int j = 0; j < T; j++) {
                float v = 0.0f;
                if (t == 0) v = j == 0 ? 1.0f : 0.0f;
                else if (j == 0) v = a;
                else if (j <= t) v = (1.0f - a) / t;
                A[((size_t)lh * T + t) * T + j] = v;
            }
    for (int n = 0; n < N; n++)
        for (int lh = 0; lh < L * H; lh++)
            for (int t = 0; t < T; t++) col[((size_t)n * L * H + lh) * T + t] = t == 0 ? 1.0f : a;
}

/* Keys make_run_cfg sets after the variant id (NULL-terminated). */
static const char *g_extra_sets[3];

/* What make_run_cfg records as a run starts: the protocol text (NULL:
 * none) and the task floor (NaN: none). */
static const char *g_proto_text = NULL;
static double g_task_floor = NAN;

/* /protocol with text's hash and /summary task_floor, as g_* say. */
static void record_start(RunFile *rf) {
    char err[512], hash[PROTOCOL_HASH_LEN];
    if (g_proto_text) {
        protocol_hash_text(g_proto_text, strlen(g_proto_text), hash);
        RunProtocol rp = {g_proto_text, hash, "x.sweep", "unknown", -1, 1};
        assert_int_equal(runfile_write_protocol(rf, &rp, err, sizeof err), 0);
    }
    if (isfinite(g_task_floor))
        assert_int_equal(runfile_set_summary(rf, RS_SUM_TASK_FLOOR, g_task_floor, err, sizeof err),
                         0);
}

static void make_run_cfg(const char *name, const char *variant, int seed, double val_loss, float a,
                         int gated, int spike, DataSource data, float lr) {
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    Config cfg;
    config_defaults(&cfg);
    cfg.data = data;
    cfg.lr = lr;
    /* a run is labelled by its fields: the id sets them */
    assert_int_equal(config_apply_variant(&cfg, variant, err, sizeof err), 0);
    for (int k = 0; g_extra_sets[k]; k++)
        assert_int_equal(config_set(&cfg, g_extra_sets[k], err, sizeof err), 0);
    cfg.init_seed = (unsigned long long)seed;
    cfg.warmup = 10;
    cfg.n_layers = L, cfg.n_heads = H; /* the probe's shape */
    RunFile *rf = runfile_create(path, &cfg, NULL, 1, err, sizeof err);
    assert_non_null(rf);
    record_start(rf);
    for (int s = 1; s <= 100; s++) { /* flat loss, one spike at step 60 */
        int rc = runfile_append_train(rf, s, spike && s == 60 ? 4.0 : 2.0, 1e-3, 1.0, 64LL * s,
                                      0.01 * s, rf_err, sizeof rf_err);
        if (rc) fprintf(stderr, "runfile: %s\n", rf_err);
        assert_int_equal(rc, 0);
    }
    assert_int_equal(
        runfile_append_eval(rf, 100, val_loss, val_loss / log(2), rf_err, sizeof rf_err), 0);

    float A[L * H * T * T], col[N * L * H * T], alpha0[L * H];
    int tokens[N * T] = {0};
    fill_attention(A, col, a);
    for (int i = 0; i < L * H; i++) alpha0[i] = (1.0f + 3.0f * a) / 4.0f;
    double gmean[L * C], ghist[L * 50] = {0}, gbelow[L * 4], gstats[L * 4];
    for (int l = 0; l < L; l++) {
        /* gate head 0 channels 0.1, head 1 channels 0.3: layer mean 0.2 */
        for (int c = 0; c < C; c++) gmean[l * C + c] = c < C / 2 ? 0.1 : 0.3;
        ghist[l * 50 + 5] = 50;
        ghist[l * 50 + 15] = 50;
        double below[4] = {1.0, 0.25, 0.0, 0.0};
        memcpy(gbelow + l * 4, below, sizeof below);
        double st[4] = {0.2, 0.05, 0.35, 100};
        memcpy(gstats + l * 4, st, sizeof st);
    }
    double hmax[L] = {10, 30}, hmed[L] = {1, 1}, htop[L * 3] = {10, 5, 4, 30, 6, 5},
           hkurt[L] = {3, 9}, hnr[L] = {1, 2};
    ProbeRecord p = {.step = 100,
                     .L = L,
                     .H = H,
                     .N = N,
                     .T = T,
                     .tokens = tokens,
                     .attention = A,
                     .first_col = col,
                     .alpha0 = alpha0,
                     .proxy = 0,
                     .normaliser = "softmax",
                     .h_max = hmax,
                     .h_median = hmed,
                     .h_top3 = htop,
                     .h_kurtosis = hkurt,
                     .h_norm_ratio = hnr};
    if (gated) {
        p.gate_channels = C;
        p.gate_heads = 2;
        p.gate_bounded = 1;
        p.gate_hist = ghist;
        p.gate_channel_mean = gmean;
        p.gate_below = gbelow;
        p.gate_stats = gstats;
    }
    assert_int_equal(runfile_write_probe(rf, &p, rf_err, sizeof rf_err), 0);
    assert_int_equal(runfile_set_summary(rf, "steps_done", 100, rf_err, sizeof rf_err), 0);
    assert_int_equal(runfile_set_summary(rf, "final_val_loss", val_loss, rf_err, sizeof rf_err), 0);
    assert_int_equal(runfile_set_summary(rf, "tokens_per_sec", 1000, rf_err, sizeof rf_err), 0);
    assert_int_equal(runfile_set_summary(rf, "diverged_step", -1, rf_err, sizeof rf_err), 0);
    assert_int_equal(runfile_set_status(rf, "done", rf_err, sizeof rf_err), 0);
    assert_int_equal(runfile_close(rf, rf_err, sizeof rf_err), 0);
}

/* A bigram run at lr 1e-2 (the quickstart's data and lr). */
static void make_run(const char *name, const char *variant, int seed, double val_loss, float a,
                     int gated, int spike) {
    make_run_cfg(name, variant, seed, val_loss, a, gated, spike, DATA_BIGRAM, 1e-2f);
}

/* /lceval of a run trained at 64: val loss at 64 and 512 (8x) per mode.
 * At 512 the buckets past T (1..7) average the given value, bucket 0 is
 * 0.3 below it: the degradation counts only the positions past T. The
 * needle task at 512: exact-match shares 1, p512 / 4 and 0 at depths 0,
 * 0.5 and 1. */
static void add_lceval(const char *name, double p64, double p512, double y64, double y512) {
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    const double v[2][2] = {{p64, p512}, {y64, y512}};
    for (int m = 0; m < 2; m++)
        for (int j = 0; j < 2; j++) {
            double b[8] = {v[m][j]}, mean = v[m][j];
            if (j) {
                b[0] = v[m][j] - 0.3;
                for (int k = 1; k < 8; k++) b[k] = v[m][j] + 0.01 * (k - 4);
                mean = (b[0] + 7 * v[m][j]) / 8;
            }
            const double depth[3] = {0.0, 0.5, 1.0}, acc[3] = {1.0, p512 / 4, 0.0};
            LcEvalData d = {.mode = m ? "yarn" : "plain",
                            .len = j ? 512 : 64,
                            .train_len = 64,
                            .val_loss = mean,
                            .ppl = exp(mean),
                            .yarn_scale = m && j ? 8 : 1,
                            .n_seqs = 2,
                            .n_buckets = j ? 8 : 1,
                            .loss_by_bucket = b,
                            .n_depths = j ? 3 : 0,
                            .needle_depth = depth,
                            .needle_acc = acc,
                            .needle_n = 4};
            int rc = runfile_write_lceval(path, &d, err, sizeof err);
            if (rc) fprintf(stderr, "%s\n", err);
            assert_int_equal(rc, 0);
        }
}

static void write_bytes(const char *name, const void *buf, size_t n) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    tu_write_file(path, buf, n);
}

static int setup(void **state) {
    (void)state;
    const char *d = tu_tmpdir();
    if (!d) return -1;
    snprintf(g_dir, sizeof g_dir, "%s", d);
    make_run("base_s1.h5", "baseline", 1, 2.0, 0.5f, 0, 0);
    make_run("base_s2.h5", "baseline", 2, 2.2, 0.5f, 0, 1);
    make_run("g1_s1.h5", "g1-elem", 1, 1.9, 0.05f, 1, 0);
    add_lceval("base_s1.h5", 2.0, 3.0, 2.0, 2.5);
    add_lceval("base_s2.h5", 2.2, 3.4, 2.2, 2.9);
    add_lceval("g1_s1.h5", 1.9, 2.1, 1.9, 2.0);
    /* the same variants on Brown (quickstart.sweep) and at 2x lr
     * (stability.sweep): each its own group with its own baseline */
    make_run_cfg("baseline-brown_s1.h5", "baseline", 1, 1.5, 0.3f, 0, 0, DATA_BROWN, 1e-2f);
    make_run_cfg("baseline-brown_s2.h5", "baseline", 2, 1.7, 0.3f, 0, 0, DATA_BROWN, 1e-2f);
    make_run_cfg("g1-elem-brown_s1.h5", "g1-elem", 1, 1.4, 0.05f, 1, 0, DATA_BROWN, 1e-2f);
    make_run_cfg("baseline-lr2x_s1.h5", "baseline", 1, 2.5, 0.5f, 0, 0, DATA_BIGRAM, 2e-2f);
    make_run_cfg("g1-elem-lr2x_s1.h5", "g1-elem", 1, 2.4, 0.05f, 1, 0, DATA_BIGRAM, 2e-2f);
    make_run_cfg("g1-elem-lr4x_s1.h5", "g1-elem", 1, 2.6, 0.05f, 1, 0, DATA_BIGRAM,
                 4e-2f); /* no baseline at this lr */
    const char junk[] = "this is not an HDF5 file at all\n";
    write_bytes("corrupt.h5", junk, sizeof junk);
    write_bytes("base_s1.h5.ckpt", junk, sizeof junk); /* must be skipped */
    /* a truncated copy of a real run file (kept out of the report dir's
     * *.h5 list by its name) */
    char path[512];
    snprintf(path, sizeof path, "%s/base_s1.h5", g_dir);
    size_t n;
    char *whole = tu_slurp(path, &n);
    if (!whole) return -1;
    write_bytes("truncated.bin", whole, n / 2);
    free(whole);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    return tu_rmtree(g_dir);
}

/* The CSV line of file name; the test fails when there is none. */
static const char *csv_row(const char *csv, const char *file) {
    char key[128];
    snprintf(key, sizeof key, "\n%s,", file);
    const char *p = strstr(csv, key);
    if (!p) fail_msg("results.csv has no row for %s", file);
    return p + 1;
}

/* Start of the field of row (a line of csv) in the column the header
 * line calls name; the test fails when there is no such column. */
static const char *csv_cell(const char *csv, const char *row, const char *name) {
    size_t n = strlen(name);
    int k = 0;
    const char *h = csv;
    while (strncmp(h, name, n) || (h[n] != ',' && h[n] != '\n')) {
        h += strcspn(h, ",\n");
        if (*h != ',') fail_msg("results.csv has no column %s", name);
        h++, k++;
    }
    for (int i = 0; i < k; i++) row = strchr(row, ',') + 1;
    return row;
}

/* The number in column name of row. */
static double csv_num(const char *csv, const char *row, const char *name) {
    return strtod(csv_cell(csv, row, name), NULL);
}

/* Whether column name of row is empty. */
static int csv_blank(const char *csv, const char *row, const char *name) {
    char c = *csv_cell(csv, row, name);
    return c == ',' || c == '\n' || c == '\0';
}

static void test_run_name(void **state) {
    (void)state;
    char s[64];
    run_name(s, sizeof s, "dir/baseline-brown_s2.h5");
    assert_string_equal(s, "baseline-brown");
    run_name(s, sizeof s, "/a/b/g1-elem-lr2x_s13.h5");
    assert_string_equal(s, "g1-elem-lr2x");
    run_name(s, sizeof s, "d.h5"); /* no seed suffix: the whole stem */
    assert_string_equal(s, "d");
    run_name(s, sizeof s, "x/run_s.h5"); /* "_s" without digits stays */
    assert_string_equal(s, "run_s");
    run_name(s, sizeof s, "x/_s1.h5"); /* nothing before "_s1": keep it */
    assert_string_equal(s, "_s1");
    run_name(s, 5, "x/abcdefgh_s1.h5"); /* cut to fit, never overflow */
    assert_string_equal(s, "abcd");
}

/* The report over g_dir, made once into g_dir/out by the first test that
 * asks; *csv and *md (malloc'd) get its results.csv and REPORT.md. */
static void report_files(char **csv, char **md) {
    static int made;
    char err[512] = "", out[300], path[400];
    snprintf(out, sizeof out, "%s/out", g_dir);
    if (!made) assert_int_equal(report_run(g_dir, out, err, sizeof err), 0);
    made = 1;
    snprintf(path, sizeof path, "%s/results.csv", out);
    *csv = tu_slurp_ok(path, NULL);
    snprintf(path, sizeof path, "%s/REPORT.md", out);
    *md = tu_slurp_ok(path, NULL);
}

/* results.csv: a header and one row per readable run, with its group (run
 * name) and data source. */
static void test_csv_rows(void **state) {
    (void)state;
    char *csv, *md;
    report_files(&csv, &md);
    int lines = 0;
    for (char *p = csv; *p; p++) lines += *p == '\n';
    assert_int_equal(lines, 10); /* header + 9 readable runs */
    assert_non_null(strstr(csv, "file,run,variant,data,seed,status,n_params"));
    const char *files[] = {"base_s1.h5",           "base_s2.h5",          "g1_s1.h5",
                           "baseline-brown_s1.h5", "g1-elem-brown_s1.h5", "g1-elem-lr2x_s1.h5",
                           "baseline-lr2x_s1.h5"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) csv_row(csv, files[i]);
    /* run (the group) and data columns */
    assert_non_null(strstr(csv, "\nbase_s2.h5,base,baseline,bigram,2,done,"));
    assert_non_null(strstr(csv, "\nbaseline-brown_s2.h5,baseline-brown,baseline,brown,2,"));
    assert_non_null(strstr(csv, "\ng1-elem-brown_s1.h5,g1-elem-brown,g1-elem,brown,1,"));
    assert_null(strstr(csv, "corrupt"));
    free(csv), free(md);
}

/* Each run's ΔPPL is against its own data source's (and lr's) baseline;
 * a run with none has a blank ΔPPL. */
static void test_csv_dppl_per_baseline(void **state) {
    (void)state;
    char *csv, *md;
    report_files(&csv, &md);
    const char *bb1 = csv_row(csv, "baseline-brown_s1.h5");
    const char *gb = csv_row(csv, "g1-elem-brown_s1.h5");
    const char *gl = csv_row(csv, "g1-elem-lr2x_s1.h5");
    const char *bl = csv_row(csv, "baseline-lr2x_s1.h5");
    double brown_mean = 0.5 * (exp(1.5) + exp(1.7));
    assert_true(fabs(csv_num(csv, gb, "dppl_vs_baseline") - (exp(1.4) - brown_mean)) < 1e-4);
    assert_true(fabs(csv_num(csv, bb1, "dppl_vs_baseline") - (exp(1.5) - brown_mean)) < 1e-4);
    assert_true(fabs(csv_num(csv, gl, "dppl_vs_baseline") - (exp(2.4) - exp(2.5))) < 1e-4);
    assert_true(fabs(csv_num(csv, bl, "dppl_vs_baseline") - 0.0) < 1e-9);
    const char *g4 = csv_row(csv, "g1-elem-lr4x_s1.h5");
    assert_non_null(g4);
    assert_true(csv_blank(csv, g4, "dppl_vs_baseline")); /* no baseline: blank ΔPPL */
    free(csv), free(md);
}

/* The metric columns of results.csv, each worked out from the hand-built
 * runs of setup. */
static void test_csv_metrics(void **state) {
    (void)state;
    char *csv, *md;
    report_files(&csv, &md);
    const char *b1 = csv_row(csv, "base_s1.h5"), *b2 = csv_row(csv, "base_s2.h5");
    const char *g1 = csv_row(csv, "g1_s1.h5");
    assert_true(fabs(csv_num(csv, b1, "steps") - 100) < 1e-9);
    assert_true(fabs(csv_num(csv, b1, "ppl") - exp(2.0)) < 1e-4);
    double base_mean = 0.5 * (exp(2.0) + exp(2.2));
    assert_true(fabs(csv_num(csv, g1, "dppl_vs_baseline") - (exp(1.9) - base_mean)) < 1e-4);
    assert_true(fabs(csv_num(csv, b1, "f_attn") - 0.5) < 1e-5);
    assert_true(fabs(csv_num(csv, g1, "f_attn") - 0.05) < 1e-5);
    /* uniform for T = 4: (H_4 - 1)/3 = (1/2 + 1/3 + 1/4)/3 */
    assert_true(fabs(csv_num(csv, b1, "f_attn_uniform") - (13.0 / 12.0) / 3.0) < 1e-5);
    assert_true(fabs(csv_num(csv, b1, "sink_rate_0.3") - 1.0) < 1e-9); /* .625 > .3 */
    assert_true(fabs(csv_num(csv, g1, "sink_rate_0.3") - 0.0) < 1e-9); /* .2875 */
    assert_true(fabs(csv_num(csv, g1, "gate_mean") - 0.2) < 1e-9);
    assert_true(fabs(csv_num(csv, g1, "gate_frac_below_0.1") - 0.25) < 1e-9);
    assert_true(fabs(csv_num(csv, b1, "m_act") - 20.0) < 1e-9); /* (10+30)/2 */
    assert_true(fabs(csv_num(csv, b1, "spikes") - 0) < 1e-9);
    assert_true(fabs(csv_num(csv, b2, "spikes") - 1) < 1e-9); /* step 60 */
    /* long-context degradation: the mean past T at 8x minus 1x per mode
     * (add_lceval); 2x and 4x were not evaluated, nor any length on a run
     * without /lceval */
    assert_true(fabs(csv_num(csv, b2, "lc_deg_8x_plain") - (3.4 - 2.2)) < 1e-9);
    assert_true(fabs(csv_num(csv, b2, "lc_deg_8x_yarn") - (2.9 - 2.2)) < 1e-9);
    assert_true(fabs(csv_num(csv, g1, "lc_deg_8x_yarn") - (2.0 - 1.9)) < 1e-9);
    assert_true(csv_blank(csv, b2, "lc_deg_2x_plain") && csv_blank(csv, b2, "lc_deg_4x_yarn"));
    assert_true(csv_blank(csv, csv_row(csv, "baseline-brown_s1.h5"), "lc_deg_8x_plain"));
    assert_true(fabs(csv_num(csv, b1, "diverged_step") - (-1)) < 1e-9);
    /* g1's alpha_0 = .2875 is a sink at 0.1 and 0.2 but not at 0.3;
     * kurtosis (3+9)/2, top1/median (10/1 + 30/1)/2, BOS norm ratio
     * (1+2)/2; no slot share without a sink slot */
    assert_true(fabs(csv_num(csv, g1, "dppl_pct_vs_baseline") -
                     100.0 * (exp(1.9) / base_mean - 1.0)) < 1e-3);
    assert_true(fabs(csv_num(csv, g1, "sink_rate_0.1") - 1.0) < 1e-12);
    assert_true(fabs(csv_num(csv, g1, "sink_rate_0.2") - 1.0) < 1e-12);
    assert_true(csv_blank(csv, g1, "slot_share"));
    assert_true(fabs(csv_num(csv, g1, "empty_share") - 0.0) < 1e-6); /* softmax: nothing dropped */
    assert_true(fabs(csv_num(csv, g1, "f_attn_nonempty") - 0.05) < 1e-6);
    assert_true(fabs(csv_num(csv, b1, "kurtosis") - 6.0) < 1e-12);
    assert_true(fabs(csv_num(csv, b1, "top1_over_median") - 20.0) < 1e-12);
    assert_true(fabs(csv_num(csv, b1, "bos_norm_ratio") - 1.5) < 1e-12);
    assert_true(fabs(csv_num(csv, g1, "gate_bounded") - 1.0) < 1e-12); /* bounded */
    free(csv), free(md);
}

/* REPORT.md: one row per run name and data source, each run's baseline
 * group, and the rows beside the paper. */
static void test_md_groups(void **state) {
    (void)state;
    char *csv, *md, want[200];
    report_files(&csv, &md);
    /* one row per run name: a variant on two data sources is two rows */
    assert_non_null(strstr(md, "| base | baseline | bigram | 2 |"));
    assert_non_null(strstr(md, "| g1 | g1-elem | bigram | 1 |"));
    assert_non_null(strstr(md, "| baseline-brown | baseline | brown | 2 |"));
    assert_non_null(strstr(md, "| g1-elem-brown | g1-elem | brown | 1 |"));
    assert_non_null(strstr(md, "| baseline-lr2x | baseline | bigram | 1 |"));
    char dp[64]; /* the Brown gated group's ΔPPL against the Brown baseline */
    snprintf(dp, sizeof dp, "| %+.3f |", exp(1.4) - 0.5 * (exp(1.5) + exp(1.7)));
    assert_non_null(strstr(strstr(md, "| g1-elem-brown | g1-elem | brown | 1 |"), dp));
    /* the Runs table names each run's baseline group */
    assert_non_null(strstr(md, "| g1-elem-brown_s1.h5 | g1-elem-brown | g1-elem | "
                               "brown | 1 | baseline-brown |"));
    assert_non_null(strstr(md, "| g1_s1.h5 | g1 | g1-elem | bigram | 1 | base |"));
    assert_non_null(strstr(md, "| g1-elem-lr4x_s1.h5 | g1-elem-lr4x | g1-elem | "
                               "bigram | 1 | – |"));
    /* beside the paper: one row per group, with its data */
    assert_non_null(strstr(md, "| g1 | bigram | g1-elem | T1, T4 |"));
    /* PPL beside the paper only as the relative change against a baseline:
     * the paper's g1-elem 5.761 against its baseline 6.026 is -4.40 % */
    snprintf(want, sizeof want, "| g1 | bigram | g1-elem | T1, T4 | %+.2f / -4.40 |",
             100.0 * (exp(1.9) / (0.5 * (exp(2.0) + exp(2.2))) - 1.0));
    assert_non_null(strstr(md, want));
    assert_non_null(strstr(md, "| g1-elem-brown | brown | g1-elem | T1, T4 |"));
    free(csv), free(md);
}

/* REPORT.md: settings per data source and the stability table. */
static void test_md_stability(void **state) {
    (void)state;
    char *csv, *md, want[200];
    report_files(&csv, &md);
    /* settings per data source; the stability table by data and lr */
    assert_non_null(strstr(md, "- Data bigram (6 runs): "));
    assert_non_null(strstr(md, "- Data brown (3 runs): "));
    assert_non_null(strstr(md, "differing across runs: lr 0.01 0.02 0.04"));
    assert_non_null(strstr(md, "| bigram | 0.02 | baseline | baseline-lr2x | 1 | 0 | 0/1 |"));
    assert_non_null(strstr(md, "| bigram | 0.01 | g1-elem | g1 | 1 | 0 | 0/1 |"));
    /* two seeds of one run name: ONE stability row, spikes mean (total)
     * and final PPL mean ± std */
    /* want: declared above */
    snprintf(want, sizeof want,
             "| bigram | 0.01 | baseline | base | 2 | 0.5 (total 1) | "
             "0/2 | %.3f ± %.3f |",
             0.5 * (exp(2.0) + exp(2.2)), fabs(exp(2.2) - exp(2.0)) / sqrt(2.0));
    assert_non_null(strstr(md, want));
    assert_null(strstr(md, "base_s1 |"));
    free(csv), free(md);
}

/* REPORT.md: the long-context section and its 8x T headline. */
static void test_md_long_context(void **state) {
    (void)state;
    char *csv, *md, want[200];
    report_files(&csv, &md);
    /* long context: one row per run name, mean ± std over its two seeds */
    const char *lc = strstr(md, "## Long context (gatelab eval)");
    assert_non_null(lc);
    snprintf(want, sizeof want,
             "| base | baseline | bigram | 2 | 2.1000 ± %.4f | 3.1625 ± %.4f (+1.1000 ± %.4f) |",
             sqrt(0.02), sqrt(0.08), sqrt(0.02));
    assert_non_null(strstr(lc, want));
    /* the whole-length loss dilutes; the degradation is past T only */
    assert_non_null(strstr(lc, "| g1 | g1-elem | bigram | 1 | 1.9000 | 2.0625 (+0.2000) |"));
    /* YaRN's split at the runs' T = 256, 64-dim heads: r_0 = 256 / 2pi */
    assert_non_null(strstr(lc, "| base | 256 | 64 | 10000 | 1 | 12 | 19 | 40.7, 30.6, 22.9,"));
    assert_non_null(strstr(lc, "0.00543 | testable |"));
    /* the needle: base's two seeds at 512 (3.0 and 3.4: 0.75 and 0.85 at
     * depth 0.5), the mean over depths */
    assert_non_null(strstr(lc, "| run | RoPE | length | seeds | depth 0 | depth 0.5 | depth 1 |"));
    assert_non_null(strstr(lc, "| base | plain | 512 | 2 | 1.000 | 0.800 | 0.000 | 0.600 |"));
    assert_non_null(strstr(lc, "| g1 | YaRN | 512 | 1 | 1.000 | 0.525 | 0.000 | 0.508 |"));
    assert_null(strstr(lc, "| base | plain | 64 |")); /* no row without a result */
    /* the 8x T headline: baseline and g1-elem, plain and YaRN */
    const char *h = strstr(lc, "**Degradation at 8× T**");
    assert_non_null(h);
    snprintf(want, sizeof want,
             "| baseline | base | bigram | 2 | +1.1000 ± %.4f | +0.6000 ± %.4f |", sqrt(0.02),
             sqrt(0.02));
    assert_non_null(strstr(h, want));
    assert_non_null(strstr(h, "| g1-elem | g1 | bigram | 1 | +0.2000 | +0.1000 |"));
    assert_null(strstr(h, "| g1-head |"));
    /* and against the baseline: one g1 seed is too few for a test */
    assert_non_null(strstr(h, "| g1-elem | g1 | bigram | plain | 1 / 2 | – | – | – | – | "
                              "too few seeds (needs 2 per side) |"));
    assert_non_null(strstr(h, "0 of these 0 comparisons differ"));
    assert_non_null(strstr(lc, "Paper, Table 5"));
    assert_non_null(strstr(lc, "(figures/lceval_loss.png)"));
    free(csv), free(md);
}

/* REPORT.md: figures, definitions, unreadable files, spikes. */
static void test_md_figures_and_notes(void **state) {
    (void)state;
    char *csv, *md, want[200], path[400];
    report_files(&csv, &md);
    /* heatmaps per group and the side by side per data source */
    assert_non_null(strstr(md, "(figures/heatmap_base_s1.png)"));
    assert_non_null(strstr(md, "(figures/heatmap_baseline-brown_s1.png)"));
    assert_non_null(strstr(md, "(figures/heatmap_baseline_vs_g1-elem_bigram.png)"));
    assert_non_null(strstr(md, "(figures/heatmap_baseline_vs_g1-elem_brown.png)"));
    snprintf(path, sizeof path, "%s/out/figures/heatmap_baseline_vs_g1-elem_brown.png", g_dir);
    assert_int_equal(access(path, R_OK), 0);
    /* val_loss mean +- sample std over the 2 baseline seeds */
    snprintf(want, sizeof want, "%.4f ± %.4f", 2.1, sqrt(0.02));
    assert_non_null(strstr(md, want));
    assert_non_null(strstr(md, "corrupt.h5"));
    assert_non_null(strstr(md, "unreadable"));
    assert_non_null(strstr(md, "(#def-fattn)"));
    assert_non_null(strstr(md, "<a id=\"def-fattn\"></a>"));
    assert_non_null(strstr(md, "0.048")); /* the paper's g1-elem F-Attn */
    assert_non_null(strstr(md, "spikes at steps 60"));
    assert_null(strstr(md, ".ckpt"));
    free(csv), free(md);
}

static void test_runread_errors(void **state) {
    (void)state;
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/corrupt.h5", g_dir);
    assert_null(runread_open(path, err, sizeof err));
    assert_non_null(strstr(err, "corrupt.h5"));
    assert_non_null(strstr(err, "not an HDF5 file"));

    snprintf(path, sizeof path, "%s/truncated.bin", g_dir);
    err[0] = '\0';
    assert_null(runread_open(path, err, sizeof err));
    assert_non_null(strstr(err, "truncated.bin"));
    assert_null(strchr(err, '\n'));

    snprintf(path, sizeof path, "%s/missing.h5", g_dir);
    assert_null(runread_open(path, err, sizeof err));
    assert_non_null(strstr(err, "missing.h5"));
}

static void test_sinks_numbers(void **state) {
    (void)state;
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/base_s1.h5", g_dir);
    RunReader *r = runread_open(path, err, sizeof err);
    assert_non_null(r);
    assert_string_equal(runread_meta(r)->variant, "baseline");
    assert_int_equal(runread_meta(r)->seed, 1);
    ProbeRecord p;
    assert_int_equal(runread_probe(r, -1, &p, err, sizeof err), 0);
    assert_int_equal(p.step, 100);
    assert_int_equal(p.L * p.H * p.N * p.T, L * H * N * T);
    assert_false(p.has_gate);
    assert_true(fabs(rs_share(&p, -1) - 0.5) < 1e-6);
    assert_true(fabs(rs_share(&p, 1) - 0.5) < 1e-6);
    assert_true(fabs(rs_head_alpha0(&p, 0, 1, 64) - 0.625) < 1e-6);
    assert_true(fabs(rs_sink_rate(&p, 0.3, 64) - 1.0) < 1e-12);
    assert_true(fabs(rs_sink_rate(&p, 0.7, 64) - 0.0) < 1e-12);
    assert_true(fabs(rs_m_act(&p) - 20.0) < 1e-12);
    assert_int_equal(runread_probe(r, 7, &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "step 7"));
    runread_close(r);

    /* the command itself: ok, and bad input exits 2 */
    char *ok[] = {"sinks", path, "--json", NULL};
    assert_int_equal(cmd_sinks(3, ok), 0);
    char *bad[] = {"sinks", path, "--step", "x", NULL};
    assert_int_equal(cmd_sinks(4, bad), 2);
    char bad_path[600];
    snprintf(bad_path, sizeof bad_path, "%s/corrupt.h5", g_dir);
    char *bad2[] = {"sinks", bad_path, NULL};
    assert_int_equal(cmd_sinks(2, bad2), 2);
    char *ok2[] = {"gates", path, NULL};
    assert_int_equal(cmd_gates(2, ok2), 0); /* no gate: says so, exits 0 */
}

/* ---- metric definitions, on hand-built probes ---- */

enum { XL = 1, XH = 3, XT = 3, XC = 4 };

/* One head's map over T = 3: row 0 on itself, row 1 empty (softpick
 * dropped it), row 2 = (0.5, 0.25, 0.25). F-Attn = (0 + 0.5)/2 = 0.25; row
 * mass over t = 1..2: (0 + 1)/2, so half the rows are empty and F-Attn over
 * the non-empty ones is 0.5. */
static const float XMAP[XT * XT] = {1, 0, 0, 0, 0, 0, 0.5f, 0.25f, 0.25f};

/* A run of XL layers and XH = 3 heads whose gate has XC = 4 channels:
 * 3 does not divide 4, as with head_dim 16 and 3 heads. gate_heads as
 * given (0 makes the probe unreadable); variant sink-token gets slot
 * weights 0.2, 0.4, 0.6. */
static void make_x_run(const char *dir, const char *name, const char *variant, int shared,
                       int gate_heads, int bounded) {
    char path[600], err[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    Config cfg;
    config_defaults(&cfg);
    /* a run is labelled by its fields: the id sets them */
    assert_int_equal(config_apply_variant(&cfg, variant, err, sizeof err), 0);
    cfg.gate_shared = shared;
    cfg.n_layers = XL, cfg.n_heads = XH; /* the probe's shape */
    RunFile *rf = runfile_create(path, &cfg, NULL, 1, err, sizeof err);
    assert_non_null(rf);
    assert_int_equal(runfile_append_eval(rf, 10, 2.0, 2.0 / log(2), err, sizeof err), 0);
    float A[XL * XH * XT * XT], col[XL * XH * XT], a0[XL * XH], slot[XL * XH * XT];
    for (int lh = 0; lh < XL * XH; lh++) {
        memcpy(A + lh * XT * XT, XMAP, sizeof XMAP);
        for (int t = 0; t < XT; t++) col[lh * XT + t] = XMAP[t * XT];
        a0[lh] = 0.5f;
        for (int t = 0; t < XT; t++) slot[lh * XT + t] = 0.2f * (t + 1);
    }
    int tokens[XT] = {0};
    double gmean[XL * XC] = {0.1, 0.2, 0.3, 0.6}, ghist[XL * 50] = {0},
                      gbelow[XL * 4] = {1, 0.25, 0, 0}, gstats[XL * 4] = {0.3, 0.1, 0.6, 12};
    double hmax[XL] = {8}, hmed[XL] = {2}, htop[XL * 3] = {8, 4, 2}, hk[XL] = {5}, hnr[XL] = {3};
    ProbeRecord p = {.step = 10,
                     .L = XL,
                     .H = XH,
                     .N = 1,
                     .T = XT,
                     .tokens = tokens,
                     .attention = A,
                     .first_col = col,
                     .alpha0 = a0,
                     .attention_slot = strcmp(variant, "sink-token") ? NULL : slot,
                     .normaliser = "softpick",
                     .gate_channels = XC,
                     .gate_heads = gate_heads,
                     .gate_shared = shared,
                     .gate_bounded = bounded,
                     .gate_hist = ghist,
                     .gate_channel_mean = gmean,
                     .gate_below = gbelow,
                     .gate_stats = gstats,
                     .h_max = hmax,
                     .h_median = hmed,
                     .h_top3 = htop,
                     .h_kurtosis = hk,
                     .h_norm_ratio = hnr};
    assert_int_equal(runfile_write_probe(rf, &p, err, sizeof err), 0);
    assert_int_equal(runfile_set_summary(rf, "final_val_loss", 2.0, err, sizeof err), 0);
    assert_int_equal(runfile_set_status(rf, "done", err, sizeof err), 0);
    assert_int_equal(runfile_close(rf, err, sizeof err), 0);
}

static ProbeRecord read_x(const char *path, int want_ok, char *err, size_t errlen) {
    RunReader *r = runread_open(path, err, errlen);
    assert_non_null(r);
    ProbeRecord p;
    int rc = runread_probe(r, -1, &p, err, errlen);
    runread_close(r);
    assert_int_equal(rc, want_ok ? 0 : -1);
    return p;
}

/* Remove /probe/step_0000010's gate_shared attr and mark the file schema
 * version 1: a file from before the attr. */
static void drop_shared_attr(const char *path) {
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    assert_true(H5Adelete_by_name(f, "probe/step_0000010", RS_P_GATE_SHARED, H5P_DEFAULT) >= 0);
    long long v1 = 1;
    hid_t a = H5Aopen(f, RS_SCHEMA_VERSION, H5P_DEFAULT);
    assert_true(a >= 0 && H5Awrite(a, H5T_NATIVE_LLONG, &v1) >= 0);
    H5Aclose(a);
    H5Fclose(f);
}

/* A head-shared gate gates every head with the same scores: equal per-head
 * means (the mean of all channels, (0.1+0.2+0.3+0.6)/4 = 0.3), also when
 * the head count does not divide the channels, also from a file written
 * before the gate_shared attr (the config says so). A per-head gate whose
 * channels do not split is still refused. */
static void test_shared_gate_heads(void **state) {
    (void)state;
    char dir[400], path[700], err[512];
    snprintf(dir, sizeof dir, "%s/shared", g_dir);
    assert_int_equal(mkdir(dir, 0777), 0);
    make_x_run(dir, "g1-shared_s1.h5", "g1-shared", 1, XH, 1);
    snprintf(path, sizeof path, "%s/g1-shared_s1.h5", dir);
    ProbeRecord p = read_x(path, 1, err, sizeof err);
    assert_true(p.gate_shared);
    for (int g = 0; g < XH; g++) assert_true(fabs(rs_gate_head_mean(&p, 0, g) - 0.3) < 1e-12);
    runread_probe_free(&p);
    char *gates[] = {"gates", path, NULL}, *sinks[] = {"sinks", path, NULL},
         *acts[] = {"acts", path, NULL};
    assert_int_equal(cmd_gates(2, gates), 0);
    assert_int_equal(cmd_sinks(2, sinks), 0);
    assert_int_equal(cmd_acts(2, acts), 0);
    drop_shared_attr(path); /* legacy file: /config gate_shared = 1 */
    p = read_x(path, 1, err, sizeof err);
    assert_true(p.gate_shared);
    assert_true(fabs(rs_gate_head_mean(&p, 0, 2) - 0.3) < 1e-12);
    runread_probe_free(&p);

    make_x_run(dir, "bad_s1.h5", "g1-elem", 0, XH, 1);
    snprintf(path, sizeof path, "%s/bad_s1.h5", dir);
    read_x(path, 0, err, sizeof err);
    assert_non_null(strstr(err, "gate_heads=3"));
}

/* The probe columns, each worked out by hand above. */
static void test_probe_columns(void **state) {
    (void)state;
    char dir[400], path[700], err[512];
    snprintf(dir, sizeof dir, "%s/cols", g_dir);
    assert_int_equal(mkdir(dir, 0777), 0);
    make_x_run(dir, "softpick_s1.h5", "softpick", 0, 2, 1);
    snprintf(path, sizeof path, "%s/softpick_s1.h5", dir);
    ProbeRecord p = read_x(path, 1, err, sizeof err);
    double empty, ne;
    rs_mass(&p, &empty, &ne);
    assert_true(fabs(rs_share(&p, -1) - 0.25) < 1e-7);
    assert_true(fabs(empty - 0.5) < 1e-7);
    assert_true(fabs(ne - 0.5) < 1e-7);
    assert_true(isnan(rs_slot_share(&p, -1)));
    assert_true(fabs(rs_kurtosis(&p) - 5) < 1e-12);
    assert_true(fabs(rs_top1_median(&p) - 4) < 1e-12); /* 8 / 2 */
    assert_true(fabs(rs_bos_ratio(&p) - 3) < 1e-12);
    /* with the probe's exact per-row counts: (l, h) rows 50 %, 0 % and 100 %
     * empty, F-Attn over their non-empty rows 0.4, 0.1 and none: overall
     * 1.5 / 3 empty, F-Attn (0.5 x 0.4 + 1 x 0.1) / 1.5 = 0.2 */
    float re[XH] = {0.5f, 0.0f, 1.0f}, fne[XH] = {0.4f, 0.1f, NAN};
    p.row_empty = re, p.first_nonempty = fne;
    rs_mass(&p, &empty, &ne);
    assert_true(fabs(empty - 0.5) < 1e-7);
    assert_true(fabs(ne - 0.2) < 1e-7);
    p.row_empty = p.first_nonempty = NULL;
    runread_probe_free(&p);
    /* a sink slot takes mass but empties no row: (.2 + .4 + .6) / 3 */
    make_x_run(dir, "sink-token_s1.h5", "sink-token", 0, 2, 1);
    snprintf(path, sizeof path, "%s/sink-token_s1.h5", dir);
    p = read_x(path, 1, err, sizeof err);
    assert_true(fabs(rs_slot_share(&p, -1) - 0.4) < 1e-7);
    rs_mass(&p, &empty, &ne);
    assert_true(fabs(empty) < 1e-12);
    assert_true(fabs(ne - 0.25) < 1e-7);
    runread_probe_free(&p);

    /* in the report: an unbounded gate's gate<0.1 is n/a, and a file whose
     * probe cannot be read is counted and named, not readable-and-blank */
    make_x_run(dir, "g1-add-silu_s1.h5", "g1-add-silu", 0, XH - 2, 0);
    make_x_run(dir, "broken_s1.h5", "g1-elem", 0, 0, 1);
    char out[500];
    snprintf(out, sizeof out, "%s/out", g_dir);
    assert_int_equal(report_run(dir, out, err, sizeof err), 0);
    snprintf(path, sizeof path, "%s/REPORT.md", out);
    char *md = tu_slurp(path, NULL);
    assert_non_null(md);
    assert_non_null(strstr(md, "4 (3 readable, 0 unreadable, 1 with an unreadable probe"));
    assert_non_null(strstr(md, "- `broken_s1.h5`: probe unreadable: "));
    const char *silu = strstr(md, "| g1-add-silu | g1-add-silu | brown | 1 |");
    if (!silu) fputs(md, stderr);
    assert_non_null(silu);
    const char *eol = strchr(silu, '\n');
    const char *na = strstr(silu, "| n/a |");
    assert_true(na && na < eol);
    /* detail table: empty 0.5, F-Attn over the mass 0.5, slot 0.4 */
    assert_non_null(strstr(md, "| softpick | softpick | brown | 1 |  | 1.000 | "
                               "1.000 | 0.500 | 0.5000 |  | 5 | 4 | 3 | done |"));
    assert_non_null(strstr(md, "| sink-token | sink-token | brown | 1 |  | 1.000 | "
                               "1.000 | 0.000 | 0.2500 | 0.4000 | 5 | 4 | 3 | done |"));
    free(md);
    snprintf(path, sizeof path, "%s/results.csv", out);
    char *csv = tu_slurp(path, NULL);
    assert_non_null(csv);
    const char *row = csv_row(csv, "g1-add-silu_s1.h5");
    assert_non_null(row);
    assert_true(csv_blank(csv, row, "gate_frac_below_0.1"));          /* below 0.1: blank */
    assert_true(fabs(csv_num(csv, row, "gate_bounded") - 0) < 1e-12); /* gate_bounded */
    free(csv);
}

/* Point g_dir at a new subdirectory NAME of it; *saved keeps the old one
 * for report_in_subdir to restore. */
static void enter_subdir(char *saved, size_t n, const char *name) {
    snprintf(saved, n, "%s", g_dir);
    snprintf(g_dir, sizeof g_dir, "%.200s/%s", saved, name);
    assert_int_equal(mkdir(g_dir, 0777), 0);
}

/* The report of the runs in g_dir (a subdirectory the test made) into
 * g_dir/out; g_dir is set back to saved. REPORT.md's text, to be freed. */
static char *report_in_subdir(const char *saved) {
    char out[400], path[500], err[512];
    snprintf(out, sizeof out, "%s/out", g_dir);
    int rc = report_run(g_dir, out, err, sizeof err);
    snprintf(path, sizeof path, "%s/REPORT.md", out);
    snprintf(g_dir, sizeof g_dir, "%s", saved);
    if (rc != 0) fail_msg("report_run: %s", err);
    char *md = tu_slurp_ok(path, NULL);
    return md;
}
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
    char *md = report_in_subdir(saved);
    assert_non_null(strstr(md, "**base seed 3 (top) vs g1 seed 2 (bottom), data bigram**"));
    assert_non_null(
        strstr(md, "median-F-Attn seed (F-Attn 0.400, the median of 3 seeds; 0.010, of 2)"));
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
    snprintf(path, sizeof path, "%s/out/results.csv", g_dir);
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
    snprintf(g_dir, sizeof g_dir, "%.200s/proxy", saved);
    snprintf(path, sizeof path, "%s/g1_s1.h5", g_dir);
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

/* The exploratory section leaves the primary family's comparisons to it:
 * with `g1 vs base` on f_attn declared, that row points to P1 and only
 * val_loss and M-Act are tested (2 tests, the val_loss one significant:
 * BH q = 2/252 x 2/1). */
static void test_compare_skips_primary(void **state) {
    (void)state;
    char saved[256], path[500], want[300];
    enter_subdir(saved, sizeof saved, "cmp-primary");
    make_base_and_g1();
    snprintf(path, sizeof path, "%s/protocol.ini", g_dir);
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

/* protocol.ini in g_dir holding text. */
static void put_protocol(const char *text) {
    char path[500];
    snprintf(path, sizeof path, "%s/protocol.ini", g_dir);
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
    snprintf(saved, sizeof saved, "%s", g_dir);
    snprintf(g_dir, sizeof g_dir, "%.200s/declared", saved);
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
    char saved[256], path[500], want[400];
    enter_subdir(saved, sizeof saved, "lr");
    const float lrs[3] = {1e-3f, 1e-2f, 1e-1f};
    const double base[3] = {1.5, 1.2, 1.9}, gate[3] = {1.3, 1.2, 1.25};
    for (int s = 1; s <= 3; s++)
        for (int r = 0; r < 3; r++) {
            double d = r == 2 ? 0.03 * s : 0.0;
            snprintf(path, sizeof path, "baseline-lr%d_s%d.h5", r, s);
            make_run_cfg(path, "baseline", s, base[r] + d, 0.5f, 0, 0, DATA_BIGRAM, lrs[r]);
            snprintf(path, sizeof path, "g1-elem-lr%d_s%d.h5", r, s);
            make_run_cfg(path, "g1-elem", s, gate[r] + d, 0.05f, 1, 0, DATA_BIGRAM, lrs[r]);
        }
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
    assert_string_equal(err, "metric 'ppl' is not f_attn, m_act, val_loss, lc_deg_2x_plain, "
                             "lc_deg_4x_plain, lc_deg_8x_plain, lc_deg_2x_yarn, lc_deg_4x_yarn, "
                             "lc_deg_8x_yarn, quant_w8a8_dloss, quant_w8a8pct_dloss, "
                             "quant_w4a4_dloss or good_regime");
    int n = 0;
    for (int i = 0; metric_at(i); i++) n += metric_at(i)->proto > 0;
    assert_int_equal(n, PM_GOOD_REGIME); /* good_regime is the protocol's own */
    for (int m = 0; m < PM_GOOD_REGIME; m++) {
        const MetricCol *c = metric_find(proto_metric_name((ProtoMetric)m));
        assert_non_null(c);
        assert_int_equal(c->proto, m + 1);
        assert_int_equal(protocol_key(&p, "metric", c->csv, err, sizeof err),
                         m == PM_SINK_FORMED ? -1 : 0);
    }
    assert_non_null(strstr(err, "'sink_formed' is not a primary metric"));
    assert_null(proto_metric_name(PM_COUNT));
    assert_int_equal(protocol_key(&p, "margin", "sink_formed 0.1", err, sizeof err), -1);
    assert_string_equal(err,
                        "margin 'sink_formed 0.1': sink_formed has no mean to be equivalent in");
    assert_int_equal(protocol_key(&p, "margin", "m_act 2", err, sizeof err), 0);
    /* one declared test per metric, named */
    assert_int_equal(protocol_check(&p, err, sizeof err), -1);
    assert_non_null(strstr(err, "metric f_attn has no declared test: add 'test = f_attn"));
    assert_int_equal(protocol_key(&p, "test", "f_attn larger-of", err, sizeof err), -1);
    assert_int_equal(protocol_key(&p, "test", "f_attn paired-t", err, sizeof err), 0);
    assert_int_equal(protocol_key(&p, "test", "f_attn welch", err, sizeof err), -1);
    assert_non_null(strstr(err, "one test per metric"));
    assert_int_equal(protocol_key(&p, "test", "m_act fisher", err, sizeof err), 0);
    assert_int_equal(protocol_key(&p, "test", "val_loss wilcoxon", err, sizeof err), 0);
    assert_int_equal(protocol_check(&p, err, sizeof err), -1);
    assert_non_null(strstr(err, "m_act cannot be tested by fisher"));
    p.test[PM_M_ACT] = PT_WELCH;
    assert_int_equal(protocol_check(&p, err, sizeof err), -1); /* the declared lc_deg_* ... */
    assert_non_null(strstr(err, "metric lc_deg_2x_plain has no declared test"));
    for (int m = PM_LC_2X_PLAIN; m <= PM_Q_W4A4; m++) p.test[m] = PT_WILCOXON;
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
        cmocka_unit_test(test_run_name),
        cmocka_unit_test(test_csv_rows),
        cmocka_unit_test(test_csv_dppl_per_baseline),
        cmocka_unit_test(test_csv_metrics),
        cmocka_unit_test(test_md_groups),
        cmocka_unit_test(test_md_stability),
        cmocka_unit_test(test_md_long_context),
        cmocka_unit_test(test_md_figures_and_notes),
        cmocka_unit_test(test_runread_errors),
        cmocka_unit_test(test_sinks_numbers),
        cmocka_unit_test(test_shared_gate_heads),
        cmocka_unit_test(test_probe_columns),
        cmocka_unit_test(test_median_seed_compare),
        cmocka_unit_test(test_gated_run_is_no_baseline),
        cmocka_unit_test(test_settings_proxy_count),
        cmocka_unit_test(test_compare_section),
        cmocka_unit_test(test_compare_skips_primary),
        cmocka_unit_test(test_confirm_section),
        cmocka_unit_test(test_confirm_declared),
        cmocka_unit_test(test_confirm_headroom),
        cmocka_unit_test(test_protocol_metrics),
        cmocka_unit_test(test_lr_section),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
