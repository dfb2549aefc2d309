/* test_report.c: the report and runread over tiny run files built by hand
 * with src/runfile.h (no trainer): results.csv rows and values, REPORT.md
 * grouping and mean +- std, corrupt and truncated files, and the sinks
 * numbers on a map whose answer is known. */
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
#include "runfile.h"
#include "runread.h"
#include "runstats.h"
#include "testutil.h"

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

static void make_run(const char *name, const char *variant, int seed,
                     double val_loss, float a, int gated, int spike)
{
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    Config cfg;
    config_defaults(&cfg);
    snprintf(cfg.variant, sizeof cfg.variant, "%s", variant);
    cfg.init_seed = (unsigned long long)seed;
    cfg.warmup = 10;
    RunFile *rf = runfile_create(path, &cfg, NULL, 1, err, sizeof err);
    assert_non_null(rf);
    for (int s = 1; s <= 100; s++) { /* flat loss, one spike at step 60 */
        int rc = runfile_append_train(rf, s, spike && s == 60 ? 4.0 : 2.0,
                                      1e-3, 1.0, 64LL * s, 0.01 * s);
        if (rc) fprintf(stderr, "runfile: %s\n", runfile_error());
        assert_int_equal(rc, 0);
    }
    assert_int_equal(runfile_append_eval(rf, 100, val_loss, val_loss / log(2)), 0);

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
    ProbeData p = {
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
    assert_int_equal(runfile_write_probe(rf, &p), 0);
    assert_int_equal(runfile_set_summary(rf, "steps_done", 100), 0);
    assert_int_equal(runfile_set_summary(rf, "final_val_loss", val_loss), 0);
    assert_int_equal(runfile_set_summary(rf, "tokens_per_sec", 1000), 0);
    assert_int_equal(runfile_set_summary(rf, "diverged_step", -1), 0);
    assert_int_equal(runfile_set_status(rf, "done"), 0);
    assert_int_equal(runfile_close(rf), 0);
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

/* The CSV line of (variant, seed), or NULL. */
static const char *csv_row(const char *csv, const char *variant, int seed)
{
    char key[128];
    snprintf(key, sizeof key, ",%s,%d,", variant, seed);
    const char *p = strstr(csv, key);
    return p;
}

/* Field k (0-based) of the CSV line containing p. */
static double csv_field(const char *csv, const char *p, int k)
{
    while (p > csv && p[-1] != '\n') p--;
    for (int i = 0; i < k; i++) p = strchr(p, ',') + 1;
    return strtod(p, NULL);
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
    assert_int_equal(lines, 4); /* header + 3 readable runs */
    assert_non_null(strstr(csv, "file,variant,seed,status,n_params"));
    const char *b1 = csv_row(csv, "baseline", 1), *b2 = csv_row(csv, "baseline", 2);
    const char *g1 = csv_row(csv, "g1-elem", 1);
    assert_non_null(b1);
    assert_non_null(b2);
    assert_non_null(g1);
    /* columns: 0 file,1 variant,2 seed,3 status,4 n_params,5 added,6 steps,
     * 7 val_loss,8 ppl,9 bpb,10 dppl,11 f_attn,12 uniform,13 sink,
     * 14 gate_mean,15 below0.1,16 m_act,17 spikes,18 tok/s,19 diverged */
    assert_true(fabs(csv_field(csv, b1, 6) - 100) < 1e-9);
    assert_true(fabs(csv_field(csv, b1, 8) - exp(2.0)) < 1e-4);
    double base_mean = 0.5 * (exp(2.0) + exp(2.2));
    assert_true(fabs(csv_field(csv, g1, 10) - (exp(1.9) - base_mean)) < 1e-4);
    assert_true(fabs(csv_field(csv, b1, 11) - 0.5) < 1e-5);
    assert_true(fabs(csv_field(csv, g1, 11) - 0.05) < 1e-5);
    /* uniform for T = 4: (H_4 - 1)/3 = (1/2 + 1/3 + 1/4)/3 */
    assert_true(fabs(csv_field(csv, b1, 12) - (13.0 / 12.0) / 3.0) < 1e-5);
    assert_true(fabs(csv_field(csv, b1, 13) - 1.0) < 1e-9); /* .625 > .3 */
    assert_true(fabs(csv_field(csv, g1, 13) - 0.0) < 1e-9); /* .2875 */
    assert_true(fabs(csv_field(csv, g1, 14) - 0.2) < 1e-9);
    assert_true(fabs(csv_field(csv, g1, 15) - 0.25) < 1e-9);
    assert_true(fabs(csv_field(csv, b1, 16) - 20.0) < 1e-9); /* (10+30)/2 */
    assert_true(fabs(csv_field(csv, b1, 17) - 0) < 1e-9);
    assert_true(fabs(csv_field(csv, b2, 17) - 1) < 1e-9); /* step 60 */
    assert_true(fabs(csv_field(csv, b1, 19) - (-1)) < 1e-9);
    assert_null(strstr(csv, "corrupt"));
    free(csv);

    snprintf(path, sizeof path, "%s/REPORT.md", out);
    char *md = tu_slurp(path, NULL);
    assert_non_null(md);
    assert_non_null(strstr(md, "| baseline | 2 |"));
    assert_non_null(strstr(md, "| g1-elem | 1 |"));
    /* val_loss mean +- sample std over the 2 baseline seeds */
    char want[64];
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
    RunProbe p;
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
        cmocka_unit_test(test_report_csv_md),
        cmocka_unit_test(test_runread_errors),
        cmocka_unit_test(test_sinks_numbers),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
