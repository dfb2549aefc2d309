/* report_fixture.c: tiny run files built by hand with src/runfile/runfile.h
 * (no trainer) for the report's tests (test_report.c,
 * test_report_sections.c), and readers of the results.csv they make. */
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

/* the runfile_* calls' one-line reason */

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
const char *g_extra_sets[3];

/* What make_run_cfg records as a run starts: the protocol text (NULL:
 * none) and the task floor (NaN: none). */
const char *g_proto_text = NULL;
double g_task_floor = NAN;
void (*g_probe_hook)(ProbeRecord *p, const char *variant, int seed) = NULL;

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

void make_run_cfg(const char *name, const char *variant, int seed, double val_loss, float a,
                  int gated, int spike, DataSource data, float lr) {
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/%s", tu_scratch, name);
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
    if (g_probe_hook) g_probe_hook(&p, variant, seed);
    assert_int_equal(runfile_write_probe(rf, &p, rf_err, sizeof rf_err), 0);
    assert_int_equal(runfile_set_summary(rf, "steps_done", 100, rf_err, sizeof rf_err), 0);
    assert_int_equal(runfile_set_summary(rf, "final_val_loss", val_loss, rf_err, sizeof rf_err), 0);
    assert_int_equal(runfile_set_summary(rf, "tokens_per_sec", 1000, rf_err, sizeof rf_err), 0);
    assert_int_equal(runfile_set_summary(rf, "diverged_step", -1, rf_err, sizeof rf_err), 0);
    assert_int_equal(runfile_set_status(rf, "done", rf_err, sizeof rf_err), 0);
    assert_int_equal(runfile_close(rf, rf_err, sizeof rf_err), 0);
}

/* A bigram run at lr 1e-2 (the quickstart's data and lr). */
void make_run(const char *name, const char *variant, int seed, double val_loss, float a, int gated,
              int spike) {
    make_run_cfg(name, variant, seed, val_loss, a, gated, spike, DATA_BIGRAM, 1e-2f);
}

/* The CSV line of file name; the test fails when there is none. */
const char *csv_row(const char *csv, const char *file) {
    char key[128];
    snprintf(key, sizeof key, "\n%s,", file);
    const char *p = strstr(csv, key);
    if (!p) fail_msg("results.csv has no row for %s", file);
    return p + 1;
}

/* Start of the field of row (a line of csv) in the column the header
 * line calls name; the test fails when there is no such column. */
const char *csv_cell(const char *csv, const char *row, const char *name) {
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
double csv_num(const char *csv, const char *row, const char *name) {
    return strtod(csv_cell(csv, row, name), NULL);
}

/* Whether column name of row is empty. */
int csv_blank(const char *csv, const char *row, const char *name) {
    char c = *csv_cell(csv, row, name);
    return c == ',' || c == '\n' || c == '\0';
}

/* Point tu_scratch at a new subdirectory NAME of it; *saved keeps the old one
 * for report_in_subdir to restore. */
void enter_subdir(char *saved, size_t n, const char *name) {
    snprintf(saved, n, "%s", tu_scratch);
    snprintf(tu_scratch, sizeof tu_scratch, "%.200s/%s", saved, name);
    assert_int_equal(mkdir(tu_scratch, 0777), 0);
}

/* The report of the runs in tu_scratch (a subdirectory the test made) into
 * tu_scratch/out; tu_scratch is set back to saved. REPORT.md's text, to be freed. */
char *report_in_subdir(const char *saved) {
    char out[400], path[500], err[512];
    snprintf(out, sizeof out, "%s/out", tu_scratch);
    int rc = report_run(tu_scratch, out, err, sizeof err);
    snprintf(path, sizeof path, "%s/REPORT.md", out);
    snprintf(tu_scratch, sizeof tu_scratch, "%s", saved);
    if (rc != 0) fail_msg("report_run: %s", err);
    char *md = tu_slurp_ok(path, NULL);
    return md;
}
