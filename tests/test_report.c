/* test_report.c: the report and runread over tiny run files built by hand
 * with src/runfile.h (no trainer): results.csv rows and values, REPORT.md
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
#include <unistd.h>

#include "commands.h"
#include "config.h"
#include "report.h"
#include "runname.h"
#include "runfile.h"
#include "runfile_read.h"
#include "runstats.h"
#include "testutil.h"

/* the runfile_* calls' one-line reason */
static char rf_err[512];

enum { L = 2, H = 2, N = 2, T = 4, C = 4 };

static char g_dir[256];

/* Every head: row 0 all on token 0; row t >= 1 gives `a` to token 0 and
 * spreads 1-a over keys 1..t. So F-Attn = a and alpha_0 over the 4
 * queries = (1 + 3a) / 4. */
static void fill_attention(float *A, float *col, float a)
{
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
            for (int t = 0; t < T; t++)
                col[((size_t)n * L * H + lh) * T + t] = t == 0 ? 1.0f : a;
}

static void make_run_cfg(const char *name, const char *variant, int seed,
                         double val_loss, float a, int gated, int spike,
                         DataSource data, float lr)
{
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    Config cfg;
    config_defaults(&cfg);
    cfg.data = data;
    cfg.lr = lr;
    snprintf(cfg.variant, sizeof cfg.variant, "%s", variant);
    cfg.init_seed = (unsigned long long)seed;
    cfg.warmup = 10;
    RunFile *rf = runfile_create(path, &cfg, NULL, 1, err, sizeof err);
    assert_non_null(rf);
    for (int s = 1; s <= 100; s++) { /* flat loss, one spike at step 60 */
        int rc = runfile_append_train(rf, s, spike && s == 60 ? 4.0 : 2.0,
                                      1e-3, 1.0, 64LL * s, 0.01 * s, rf_err, sizeof rf_err);
        if (rc) fprintf(stderr, "runfile: %s\n", rf_err);
        assert_int_equal(rc, 0);
    }
    assert_int_equal(runfile_append_eval(rf, 100, val_loss, val_loss / log(2), rf_err, sizeof rf_err), 0);

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
    ProbeRecord p = {
        .step = 100, .L = L, .H = H, .N = N, .T = T, .tokens = tokens,
        .attention = A, .first_col = col, .alpha0 = alpha0, .proxy = 0,
        .normaliser = "softmax", .h_max = hmax, .h_median = hmed,
        .h_top3 = htop, .h_kurtosis = hkurt, .h_norm_ratio = hnr};
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
static void make_run(const char *name, const char *variant, int seed,
                     double val_loss, float a, int gated, int spike)
{
    make_run_cfg(name, variant, seed, val_loss, a, gated, spike, DATA_BIGRAM,
                 1e-2f);
}

/* /lceval of a run trained at 64: val loss at 64 and 512 (8x) per mode. */
static void add_lceval(const char *name, double p64, double p512, double y64, double y512)
{
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    const double v[2][2] = {{p64, p512}, {y64, y512}};
    for (int m = 0; m < 2; m++)
        for (int j = 0; j < 2; j++) {
            double b = v[m][j];
            LcEvalData d = {.mode = m ? "yarn" : "plain", .len = j ? 512 : 64,
                            .train_len = 64, .val_loss = v[m][j], .ppl = exp(v[m][j]),
                            .yarn_scale = m && j ? 8 : 1, .n_seqs = 2, .n_buckets = 1,
                            .loss_by_bucket = &b};
            int rc = runfile_write_lceval(path, &d, err, sizeof err);
            if (rc) fprintf(stderr, "%s\n", err);
            assert_int_equal(rc, 0);
        }
}

static void write_bytes(const char *name, const void *buf, size_t n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, n, f), n);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/gatelab_test_report_XXXXXX");
    if (!mkdtemp(g_dir)) return -1;
    make_run("base_s1.h5", "baseline", 1, 2.0, 0.5f, 0, 0);
    make_run("base_s2.h5", "baseline", 2, 2.2, 0.5f, 0, 1);
    make_run("g1_s1.h5", "g1-elem", 1, 1.9, 0.05f, 1, 0);
    add_lceval("base_s1.h5", 2.0, 3.0, 2.0, 2.5);
    add_lceval("base_s2.h5", 2.2, 3.4, 2.2, 2.9);
    add_lceval("g1_s1.h5", 1.9, 2.1, 1.9, 2.0);
    /* the same variants on Brown (quickstart.sweep) and at 2x lr
     * (stability.sweep): each its own group with its own baseline */
    make_run_cfg("baseline-brown_s1.h5", "baseline", 1, 1.5, 0.3f, 0, 0,
                 DATA_BROWN, 1e-2f);
    make_run_cfg("baseline-brown_s2.h5", "baseline", 2, 1.7, 0.3f, 0, 0,
                 DATA_BROWN, 1e-2f);
    make_run_cfg("g1-elem-brown_s1.h5", "g1-elem", 1, 1.4, 0.05f, 1, 0,
                 DATA_BROWN, 1e-2f);
    make_run_cfg("baseline-lr2x_s1.h5", "baseline", 1, 2.5, 0.5f, 0, 0,
                 DATA_BIGRAM, 2e-2f);
    make_run_cfg("g1-elem-lr2x_s1.h5", "g1-elem", 1, 2.4, 0.05f, 1, 0,
                 DATA_BIGRAM, 2e-2f);
    make_run_cfg("g1-elem-lr4x_s1.h5", "g1-elem", 1, 2.6, 0.05f, 1, 0,
                 DATA_BIGRAM, 4e-2f); /* no baseline at this lr */
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

static int teardown(void **state)
{
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* The CSV line of file name, or NULL. */
static const char *csv_row(const char *csv, const char *file)
{
    char key[128];
    snprintf(key, sizeof key, "\n%s,", file);
    const char *p = strstr(csv, key);
    return p ? p + 1 : NULL;
}

/* Field k (0-based) of the CSV line containing p. */
static double csv_field(const char *csv, const char *p, int k)
{
    while (p > csv && p[-1] != '\n') p--;
    for (int i = 0; i < k; i++) p = strchr(p, ',') + 1;
    return strtod(p, NULL);
}

/* Start of field k of the CSV line containing p. */
static const char *csv_text(const char *csv, const char *p, int k)
{
    while (p > csv && p[-1] != '\n') p--;
    for (int i = 0; i < k; i++) p = strchr(p, ',') + 1;
    return p;
}

static void test_run_name(void **state)
{
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

static void test_report_csv_md(void **state)
{
    (void)state;
    char err[512] = "", out[300], path[400];
    snprintf(out, sizeof out, "%s/out", g_dir);
    assert_int_equal(report_run(g_dir, out, err, sizeof err), 0);

    snprintf(path, sizeof path, "%s/results.csv", out);
    char *csv = tu_slurp(path, NULL);
    assert_non_null(csv);
    int lines = 0;
    for (char *p = csv; *p; p++) lines += *p == '\n';
    assert_int_equal(lines, 10); /* header + 9 readable runs */
    assert_non_null(strstr(csv, "file,run,variant,data,seed,status,n_params"));
    const char *b1 = csv_row(csv, "base_s1.h5"), *b2 = csv_row(csv, "base_s2.h5");
    const char *g1 = csv_row(csv, "g1_s1.h5");
    const char *bb1 = csv_row(csv, "baseline-brown_s1.h5");
    const char *gb = csv_row(csv, "g1-elem-brown_s1.h5");
    const char *gl = csv_row(csv, "g1-elem-lr2x_s1.h5");
    const char *bl = csv_row(csv, "baseline-lr2x_s1.h5");
    assert_non_null(b1);
    assert_non_null(b2);
    assert_non_null(g1);
    assert_non_null(bb1);
    assert_non_null(gb);
    assert_non_null(gl);
    assert_non_null(bl);
    /* run (the group) and data columns */
    assert_non_null(strstr(csv, "\nbase_s2.h5,base,baseline,bigram,2,done,"));
    assert_non_null(strstr(csv, "\nbaseline-brown_s2.h5,baseline-brown,baseline,brown,2,"));
    assert_non_null(strstr(csv, "\ng1-elem-brown_s1.h5,g1-elem-brown,g1-elem,brown,1,"));
    /* each run's ΔPPL is against its own data source's (and lr's) baseline */
    double brown_mean = 0.5 * (exp(1.5) + exp(1.7));
    assert_true(fabs(csv_field(csv, gb, 12) - (exp(1.4) - brown_mean)) < 1e-4);
    assert_true(fabs(csv_field(csv, bb1, 12) - (exp(1.5) - brown_mean)) < 1e-4);
    assert_true(fabs(csv_field(csv, gl, 12) - (exp(2.4) - exp(2.5))) < 1e-4);
    assert_true(fabs(csv_field(csv, bl, 12) - 0.0) < 1e-9);
    const char *g4 = csv_row(csv, "g1-elem-lr4x_s1.h5");
    assert_non_null(g4);
    assert_true(*csv_text(csv, g4, 12) == ','); /* no baseline: blank ΔPPL */
    /* columns: 0 file,1 run,2 variant,3 data,4 seed,5 status,6 n_params,
     * 7 added,8 steps,9 val_loss,10 ppl,11 bpb,12 dppl,13 f_attn,
     * 14 uniform,15 sink,16 gate_mean,17 below0.1,18 m_act,19 spikes,
     * 20 tok/s,21 diverged */
    assert_true(fabs(csv_field(csv, b1, 8) - 100) < 1e-9);
    assert_true(fabs(csv_field(csv, b1, 10) - exp(2.0)) < 1e-4);
    double base_mean = 0.5 * (exp(2.0) + exp(2.2));
    assert_true(fabs(csv_field(csv, g1, 12) - (exp(1.9) - base_mean)) < 1e-4);
    assert_true(fabs(csv_field(csv, b1, 13) - 0.5) < 1e-5);
    assert_true(fabs(csv_field(csv, g1, 13) - 0.05) < 1e-5);
    /* uniform for T = 4: (H_4 - 1)/3 = (1/2 + 1/3 + 1/4)/3 */
    assert_true(fabs(csv_field(csv, b1, 14) - (13.0 / 12.0) / 3.0) < 1e-5);
    assert_true(fabs(csv_field(csv, b1, 15) - 1.0) < 1e-9); /* .625 > .3 */
    assert_true(fabs(csv_field(csv, g1, 15) - 0.0) < 1e-9); /* .2875 */
    assert_true(fabs(csv_field(csv, g1, 16) - 0.2) < 1e-9);
    assert_true(fabs(csv_field(csv, g1, 17) - 0.25) < 1e-9);
    assert_true(fabs(csv_field(csv, b1, 18) - 20.0) < 1e-9); /* (10+30)/2 */
    assert_true(fabs(csv_field(csv, b1, 19) - 0) < 1e-9);
    assert_true(fabs(csv_field(csv, b2, 19) - 1) < 1e-9); /* step 60 */
    assert_true(fabs(csv_field(csv, b1, 21) - (-1)) < 1e-9);
    assert_null(strstr(csv, "corrupt"));
    free(csv);

    snprintf(path, sizeof path, "%s/REPORT.md", out);
    char *md = tu_slurp(path, NULL);
    assert_non_null(md);
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
    assert_non_null(strstr(md, "| g1-elem-brown | brown | g1-elem | T1, T4 |"));
    /* settings per data source; the stability table by data and lr */
    assert_non_null(strstr(md, "- Data bigram (6 runs): "));
    assert_non_null(strstr(md, "- Data brown (3 runs): "));
    assert_non_null(strstr(md, "differing across runs: lr 0.01 0.02 0.04"));
    assert_non_null(strstr(md, "| bigram | 0.02 | baseline | baseline-lr2x | 1 | 0 | 0/1 |"));
    assert_non_null(strstr(md, "| bigram | 0.01 | g1-elem | g1 | 1 | 0 | 0/1 |"));
    /* two seeds of one run name: ONE stability row, spikes mean (total)
     * and final PPL mean ± std */
    char want[200];
    snprintf(want, sizeof want, "| bigram | 0.01 | baseline | base | 2 | 0.5 (total 1) | "
             "0/2 | %.3f ± %.3f |", 0.5 * (exp(2.0) + exp(2.2)),
             fabs(exp(2.2) - exp(2.0)) / sqrt(2.0));
    assert_non_null(strstr(md, want));
    assert_null(strstr(md, "base_s1 |"));
    /* long context: one row per run name, mean ± std over its two seeds */
    const char *lc = strstr(md, "## Long context (gatelab eval)");
    assert_non_null(lc);
    snprintf(want, sizeof want, "| base | baseline | bigram | 2 | 2.1000 ± %.4f "
             "(+0.0000 ± 0.0000) | 3.2000 ± %.4f (+1.1000 ± %.4f) |",
             sqrt(0.02), sqrt(0.08), sqrt(0.02));
    assert_non_null(strstr(lc, want));
    assert_non_null(strstr(lc, "| g1 | g1-elem | bigram | 1 | 1.9000 (+0.0000) | "
                               "2.1000 (+0.2000) |"));
    /* the 8x T headline: baseline and g1-elem, plain and YaRN */
    const char *h = strstr(lc, "**Degradation at 8× T**");
    assert_non_null(h);
    snprintf(want, sizeof want, "| baseline | base | bigram | 2 | +1.1000 ± %.4f | +0.6000 ± %.4f |",
             sqrt(0.02), sqrt(0.02));
    assert_non_null(strstr(h, want));
    assert_non_null(strstr(h, "| g1-elem | g1 | bigram | 1 | +0.2000 | +0.1000 |"));
    assert_null(strstr(h, "| g1-head |"));
    assert_non_null(strstr(lc, "Paper, Table 5"));
    assert_non_null(strstr(lc, "(figures/lceval_loss.png)"));
    /* heatmaps per group and the side by side per data source */
    assert_non_null(strstr(md, "(figures/heatmap_base_s1.png)"));
    assert_non_null(strstr(md, "(figures/heatmap_baseline-brown_s1.png)"));
    assert_non_null(strstr(md, "(figures/heatmap_baseline_vs_g1-elem_bigram.png)"));
    assert_non_null(strstr(md, "(figures/heatmap_baseline_vs_g1-elem_brown.png)"));
    snprintf(path, sizeof path, "%s/figures/heatmap_baseline_vs_g1-elem_brown.png", out);
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
    free(md);
}

static void test_runread_errors(void **state)
{
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

static void test_sinks_numbers(void **state)
{
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_name),
        cmocka_unit_test(test_report_csv_md),
        cmocka_unit_test(test_runread_errors),
        cmocka_unit_test(test_sinks_numbers),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
