/* test_replies.c: the replies a user needs, one line each with the
 * reason, and the run file's chunking sized by bytes.
 * - a probe of 200,000 windows of T = 2: its per-window arrays are stored
 *   in chunks of 64 KiB .. 1 MiB, not one per window, values unchanged;
 * - GATELAB_MEM_LIMIT=abc or -1: refused naming the variable;
 * - eval --lengths 1x,T (one length twice): refused, the length named;
 * - eval --both or --yarn on an ALiBi run, or --lengths with a bad --quant:
 *   refused in one line before anything is stored (the file unchanged);
 * - intervene gate-const on an ungated run: refused in one line, the file
 *   unchanged; --layer with kinds that take no layer: one warning;
 * - a run file whose name holds a newline: refused in one line, the
 *   newline shown as '_' (test_outputs.c has the other names);
 * - plot on a run whose last probe is corrupt exits 2, as sinks does;
 *   gate-hist of an ungated run, or of two runs, exits 2 (bad input);
 * - a full disk during intervene names the error (not "Success");
 * - a key another key makes do nothing (yarn_scale without RoPE, gate keys
 *   on an ungated variant, window_layers without window): one warning
 *   naming both; extend keys without extend_share or RoPE: refused; eval's
 *   --yarn without --lengths: one warning. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "config.h"
#include "runfile.h"
#include "runfile_read.h"
#include "testutil.h"

#define TINY "--config %s/experiments/tiny.ini --quiet"

/* the directory and the tiny run every test here uses (testutil.h) */
static const char *const dir = tu_tiny_dir, *const run = tu_tiny_run;

/* `cd dir && PREFIX gatelab ARGS`, output into dir/out.txt; exit code. */
static int sh(const char *prefix, const char *args) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cd '%s' && %s '%s' %s >'%s/out.txt' 2>&1", dir, prefix, tu_bin(),
             args, dir);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void assert_out_line(const char *want) {
    char out[1100];
    snprintf(out, sizeof out, "%s/out.txt", dir);
    tu_assert_one_line(out, want, NULL);
}

/* Bytes per chunk of dataset dpath. */
static size_t chunk_bytes(hid_t f, const char *dpath) {
    hid_t d = H5Dopen2(f, dpath, H5P_DEFAULT);
    assert_true(d >= 0);
    hid_t pl = H5Dget_create_plist(d);
    hsize_t c[8];
    int rank = H5Pget_chunk(pl, 8, c);
    assert_true(rank > 0);
    size_t b = H5Tget_size(H5Dget_type(d));
    for (int i = 0; i < rank; i++) b *= (size_t)c[i];
    H5Pclose(pl), H5Dclose(d);
    return b;
}

static void test_chunks_by_bytes(void **st) {
    (void)st;
    enum { N = 200000, T = 2 };
    char path[1100], err[512];
    snprintf(path, sizeof path, "%s/windows.h5", dir);
    Config cfg;
    config_defaults(&cfg);
    cfg.n_layers = 1, cfg.n_heads = 1, cfg.probe_n = N;
    RunFile *rf = runfile_create(path, &cfg, NULL, 0, err, sizeof err);
    assert_non_null(rf);
    int *tok = calloc((size_t)N * T, sizeof *tok);
    float *col = malloc((size_t)N * T * sizeof *col);
    assert_true(tok && col);
    for (size_t i = 0; i < (size_t)N * T; i++) tok[i] = (int)(i % 50), col[i] = (float)(i % 7);
    float att[T * T] = {1, 0, 0.5f, 0.5f}, a0[1] = {0.75f};
    double hmax[1] = {1}, hmed[1] = {1}, htop[3] = {1, 1, 1}, hk[1] = {3}, hnr[1] = {1};
    ProbeRecord p = {.step = 1,
                     .L = 1,
                     .H = 1,
                     .N = N,
                     .T = T,
                     .tokens = tok,
                     .attention = att,
                     .first_col = col,
                     .alpha0 = a0,
                     .normaliser = "softmax",
                     .h_max = hmax,
                     .h_median = hmed,
                     .h_top3 = htop,
                     .h_kurtosis = hk,
                     .h_norm_ratio = hnr};
    assert_int_equal(runfile_write_probe(rf, &p, err, sizeof err), 0);
    assert_int_equal(runfile_close(rf, err, sizeof err), 0);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    size_t ct = chunk_bytes(f, "/probe/step_0000001/tokens");
    size_t cc = chunk_bytes(f, "/probe/step_0000001/first_col");
    H5Fclose(f);
    if (ct < (64 << 10) || ct > (1 << 20) || cc < (64 << 10) || cc > (1 << 20))
        fail_msg("chunks of %zu and %zu bytes, want 64 KiB .. 1 MiB", ct, cc);
    RunReader *r = runread_open(path, err, sizeof err);
    assert_non_null(r);
    ProbeRecord q;
    assert_int_equal(runread_probe(r, -1, &q, err, sizeof err), 0);
    assert_memory_equal(q.tokens, tok, (size_t)N * T * sizeof *tok);
    assert_memory_equal(q.first_col, col, (size_t)N * T * sizeof *col);
    runread_probe_free(&q);
    runread_close(r);
    free(tok), free(col);
}

static void test_mem_limit_values(void **st) {
    (void)st;
    char args[2048];
    snprintf(args, sizeof args, "train " TINY " --out m.h5", tu_src());
    const char *bad[] = {"abc", "-1", "0", "8G"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char pre[64];
        snprintf(pre, sizeof pre, "GATELAB_MEM_LIMIT=%s", bad[i]);
        assert_int_equal(sh(pre, args), 2);
        assert_out_line("is not a positive number of bytes");
    }
}

static void test_eval_lengths_twice(void **st) {
    (void)st;
    char args[2048];
    snprintf(args, sizeof args, "eval %s --lengths 1x,32 --no-write", run);
    assert_int_equal(sh("", args), 2);
    assert_out_line("names length 32 twice");
}

/* Refused in one line naming want, with p byte-identical. */
static void assert_refused_unchanged(const char *p, const char *args, const char *want) {
    size_t n0, n1;
    char *before = tu_slurp_ok(p, &n0);
    assert_int_equal(sh("", args), 2);
    assert_out_line(want);
    char *after = tu_slurp_ok(p, &n1);
    assert_true(n0 == n1 && !memcmp(before, after, n0));
    free(before), free(after);
}

static void test_eval_refused_stores_nothing(void **st) {
    (void)st;
    char p[1100], args[2400];
    snprintf(p, sizeof p, "%s/alibi.h5", dir);
    snprintf(args, sizeof args, "train " TINY " --set pos=alibi --out %s", tu_src(), p);
    assert_int_equal(sh("", args), 0);
    snprintf(args, sizeof args, "eval %s --lengths 1x --both", p);
    assert_refused_unchanged(p, args, "--both evaluates YaRN, which rescales RoPE");
    snprintf(args, sizeof args, "eval %s --lengths 1x --yarn", p);
    assert_refused_unchanged(p, args, "positions are ALiBi; drop --yarn");
    snprintf(args, sizeof args, "eval %s --lengths 1x --quant w9", p);
    assert_refused_unchanged(p, args, "bad --quant 'w9'");
}

/* Lines (newline-ended) in text. */
static int text_lines(const char *text) {
    int n = 0;
    for (; *text; text++) n += *text == '\n';
    return n;
}

/* out.txt holds want. */
static void assert_out_has(const char *want) {
    char out[1100];
    snprintf(out, sizeof out, "%s/out.txt", dir);
    char *o = tu_slurp_ok(out, NULL);
    if (!strstr(o, want)) fail_msg("want '%s' in: %s", want, o);
    free(o);
}

static void test_intervene_ungated(void **st) {
    (void)st;
    char args[2400];
    snprintf(args, sizeof args, "intervene %s gate-const", run);
    assert_refused_unchanged(
        run, args, "gate-const sets the gate scores, but this run (baseline) has no gate to set");
    snprintf(args, sizeof args, "intervene %s gates-open --layer 0 --json --no-write", run);
    assert_int_equal(sh("", args), 0);
    assert_out_has("warning: --layer 0 does nothing for gates-open (only gates-open-layer, "
                   "mact-mean, mact-zero take a layer)");
    assert_out_has("(baseline) has no gate, so gates-open change nothing: their results equal "
                   "the plain rerun");
}

/* The warnings config_warn_moot gives for the settings sets[n] (NULL
 * ends), into a fresh string; the config must validate. */
static char *moot_warnings(const char *const *sets) {
    Config c;
    char err[512], *buf = NULL;
    size_t len = 0;
    config_defaults(&c);
    for (; *sets; sets++)
        if (config_set(&c, *sets, err, sizeof err) != 0) fail_msg("%s", err);
    config_resolve(&c);
    if (config_validate(&c, err, sizeof err) != 0) fail_msg("%s", err);
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    int n = config_warn_moot(&c, f);
    fclose(f);
    assert_int_equal(n, text_lines(buf));
    return buf;
}

static void test_moot_keys(void **st) {
    (void)st;
    static const struct {
        const char *sets[4], *want; /* want NULL: no warning */
    } cases[] = {
        {{"pos=alibi", "yarn_scale=4", NULL},
         "gatelab: warning: yarn_scale 4 does nothing with pos alibi (it rescales RoPE's "
         "frequencies); it is ignored\n"},
        {{"pos=none", "rope_base=50000", NULL}, "rope_base 50000 does nothing with pos none"},
        {{"window_layers=alternate", NULL},
         "window_layers alternate does nothing with window 0 (no layer has a sliding window)"},
        {{"gate_act=softplus", NULL}, "gate_act softplus does nothing with gate_pos none"},
        {{"variant=baseline", "gate_init=zero", NULL}, "gate_init zero does nothing"},
        {{"variant=g1-elem", "gate_act=softplus", NULL}, NULL},
        {{"window=8", "window_layers=alternate", NULL}, NULL},
        {{"yarn_scale=4", NULL}, NULL},
        {{NULL}, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *w = moot_warnings(cases[i].sets);
        if (cases[i].want ? !strstr(w, cases[i].want) || text_lines(w) != 1 : *w != 0)
            fail_msg("case %zu: want %s, got '%s'", i, cases[i].want ? cases[i].want : "none", w);
        free(w);
    }
    Config c;
    char err[512];
    config_defaults(&c);
    assert_int_equal(config_set(&c, "pos=alibi", err, sizeof err), 0);
    assert_int_equal(config_set(&c, "extend_share=0.5", err, sizeof err), 0);
    assert_int_equal(config_set(&c, "extend_seq_len=64", err, sizeof err), 0);
    assert_int_equal(config_set(&c, "extend_rope_base=20000", err, sizeof err), 0);
    config_resolve(&c);
    assert_int_equal(config_validate(&c, err, sizeof err), -1);
    assert_string_equal(err, "extend_rope_base 20000 does nothing with pos alibi (it raises the "
                             "RoPE base); change pos or drop extend_rope_base");
    char args[2400];
    snprintf(args, sizeof args, "eval %s --quant w8a8 --yarn --json --no-write", run);
    assert_int_equal(sh("", args), 0);
    assert_out_has("gatelab eval: warning: --yarn does nothing without --lengths");
    snprintf(args, sizeof args,
             "train " TINY " --set steps=2 --set pos=alibi --set yarn_scale=2 --out %s/w.h5",
             tu_src(), dir);
    assert_int_equal(sh("", args), 0);
    assert_out_line("gatelab: warning: yarn_scale 2 does nothing with pos alibi");
}

static void test_report_odd_names(void **st) {
    (void)st;
    char d[1100], to[1200], args[2400];
    snprintf(d, sizeof d, "%s/names", dir);
    snprintf(args, sizeof args, "mkdir '%s'", d);
    assert_int_equal(system(args), 0);
    snprintf(to, sizeof to, "%s/good_s1.h5", d);
    tu_copy_file(run, to);
    snprintf(to, sizeof to, "%s/x\ny_s1.h5", d);
    tu_copy_file(run, to);
    snprintf(args, sizeof args, "report '%s'", d);
    /* refused in one line, the newline shown as '_'; no REPORT.md */
    assert_int_equal(sh("", args), 2);
    assert_out_line("x_y_s1.h5: a run file's name may hold only");
    snprintf(to, sizeof to, "%s/REPORT.md", d);
    assert_null(tu_slurp(to, NULL));
}

static void test_plot_corrupt_probe(void **st) {
    (void)st;
    char p[1100], args[2400];
    snprintf(p, sizeof p, "%s/noalpha.h5", dir);
    tu_copy_file(run, p);
    RunReader *r = runread_open(p, NULL, 0);
    assert_non_null(r);
    long long *steps;
    int k;
    assert_int_equal(runread_probe_steps(r, &steps, &k, NULL, 0), 0);
    char ds[64];
    snprintf(ds, sizeof ds, "/probe/step_%07lld/alpha0", steps[k - 1]);
    free(steps);
    runread_close(r);
    hid_t f = H5Fopen(p, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(H5Ldelete(f, ds, H5P_DEFAULT) >= 0);
    H5Fclose(f);
    snprintf(args, sizeof args, "sinks %s", p);
    assert_int_equal(sh("", args), 2);
    snprintf(args, sizeof args, "plot first-share %s --out %s/na.png", p, dir);
    assert_int_equal(sh("", args), 2);
    assert_out_line("missing dataset alpha0");
    snprintf(args, sizeof args, "plot gate-hist %s --out %s/gh.png", run, dir);
    assert_int_equal(sh("", args), 2);
    assert_out_line("variant baseline has no gate scores");
    snprintf(args, sizeof args, "plot gate-hist %s %s --out %s/gh.png", run, run, dir);
    assert_int_equal(sh("", args), 2);
    assert_out_line("gatelab plot: gate-hist takes exactly one run (got 2)");
}

static void test_full_disk_intervene(void **st) {
    (void)st;
    char p[1100], args[2400];
    snprintf(p, sizeof p, "%s/full.h5", dir);
    tu_copy_file(run, p);
    snprintf(args, sizeof args, "intervene %s gates-open", p);
    assert_int_equal(sh("trap '' XFSZ; ulimit -f 64;", args), 1);
    char out[1100];
    snprintf(out, sizeof out, "%s/out.txt", dir);
    char *o = tu_slurp_ok(out, NULL);
    assert_true(strstr(o, "File too large") || strstr(o, "No space left on device"));
    assert_null(strstr(o, "Success"));
    assert_null(strstr(o, "Inappropriate ioctl"));
    free(o);
}

int main(void) {
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chunks_by_bytes),
        cmocka_unit_test(test_mem_limit_values),
        cmocka_unit_test(test_eval_lengths_twice),
        cmocka_unit_test(test_report_odd_names),
        cmocka_unit_test(test_plot_corrupt_probe),
        cmocka_unit_test(test_full_disk_intervene),
        cmocka_unit_test(test_eval_refused_stores_nothing),
        cmocka_unit_test(test_intervene_ungated),
        cmocka_unit_test(test_moot_keys),
    };
    return cmocka_run_group_tests(tests, tu_tiny_setup, tu_tiny_teardown);
}
