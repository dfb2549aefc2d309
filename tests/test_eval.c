/* test_eval.c: YaRN against a numpy reference (fixtures/yarn.txt, made by
 * tests/reference/make_yarn_fixture.py), long-context eval of a tiny model
 * at 2x its training length, the /lceval round trip, a forced
 * divergence recorded as `diverged`, and the data files a run records and
 * its readers check. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "metrics.h"
#include "runfile_read.h"
#include "forward.h"
#include "lceval.h"
#include "ops.h"
#include "stream.h"
#include "testutil.h"

/* ---- fixture: lines "NAME COUNT v..." ---- */

static double *fixture(const char *want, int *count) {
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/reference/fixtures/yarn.txt", tu_src());
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char name[64];
    int n;
    double *out = NULL;
    while (!out && fscanf(f, "%63s %d", name, &n) == 2) {
        double *v = malloc((size_t)n * sizeof *v);
        assert_non_null(v);
        for (int i = 0; i < n; i++) assert_int_equal(fscanf(f, "%lf", &v[i]), 1);
        if (strcmp(name, want) == 0) out = v, *count = n;
        else free(v);
    }
    fclose(f);
    assert_non_null(out);
    return out;
}

static void check_freqs(const char *c, int dh, float base, float scale, int orig) {
    char key[32];
    int n, nm;
    snprintf(key, sizeof key, "freq_%s", c);
    double *ref = fixture(key, &n);
    snprintf(key, sizeof key, "m_%s", c);
    double *mref = fixture(key, &nm);
    assert_int_equal(n, dh / 2);
    float f[64];
    float m = rope_inv_freq(f, dh, base, scale, orig);
    for (int i = 0; i < n; i++) assert_true(fabs(f[i] - ref[i]) <= 1e-6 * ref[i] + 1e-12);
    assert_true(fabs(m - mref[0]) < 1e-6);
    free(ref);
    free(mref);
}

static void test_yarn_freqs(void **st) {
    (void)st;
    check_freqs("a", 16, 10000.0f, 4.0f, 32); /* ramp crosses dims 0..1 */
    check_freqs("b", 64, 10000.0f, 8.0f, 64);
    check_freqs("c", 16, 10000.0f, 1.0f, 32); /* scale 1: plain RoPE, m = 1 */
}

/* YaRN's by-parts split by hand: pair i turns T * base^(-2i/dh) / 2pi
 * times within T; kept at >= 32 turns, interpolated at <= 1. */
static void test_yarn_split(void **st) {
    (void)st;
    double r[4];
    /* T 64, 8-dim heads: r = 10.19, 1.019, 0.102, 0.0102: nothing kept */
    YarnSplit s = yarn_split(8, 10000.0, 64, r);
    assert_true(fabs(r[0] - 64 / (2 * M_PI)) < 1e-12 && fabs(r[1] - 6.4 / (2 * M_PI)) < 1e-12);
    assert_true(s.pairs == 4 && s.kept == 0 && s.ramped == 2 && s.interpolated == 2);
    assert_true(s.fastest == r[0]);
    /* T 256: the fastest pair turns 40.7 times and is kept */
    s = yarn_split(8, 10000.0, 256, NULL);
    assert_true(s.kept == 1 && s.ramped == 1 && s.interpolated == 2);
    assert_int_equal(yarn_keep_len(), 202); /* 32 * 2pi = 201.06 */
    assert_int_equal(yarn_split(8, 10000.0, 201, NULL).kept, 0);
    assert_int_equal(yarn_split(8, 10000.0, 202, NULL).kept, 1);
}

/* The mean past T from per-bucket means, each weighted by its width. */
static void test_loss_beyond(void **st) {
    (void)st;
    const double b[4] = {9.0, 1.0, 2.0, 4.0};
    assert_true(fabs(loss_beyond(b, 4, 40, 10) - (1.0 + 2.0 + 4.0) / 3) < 1e-12);
    /* a last bucket of 5 positions counts half as much as a full one */
    assert_true(fabs(loss_beyond(b, 4, 35, 10) - (10 * 1.0 + 10 * 2.0 + 5 * 4.0) / 25) < 1e-12);
    assert_true(isnan(loss_beyond(b, 1, 10, 10))); /* nothing past T */
}

/* rotate with YaRN tables, scale q and k by m (the model's order), then
 * causal softmax attention: must match numpy. */
static void test_yarn_attention(void **st) {
    (void)st;
    enum { T = 24, DH = 16 };
    int n;
    double *q = fixture("q", &n), *k = fixture("k", &n), *v = fixture("v", &n);
    double *yref = fixture("y_yarn", &n), *yplain = fixture("y_plain", &n);
    assert_int_equal(n, T * DH);
    float qf[T * DH], kf[T * DH], vf[T * DH], y[T * DH], att[T * T], pre[T * T];
    float cs[T * DH / 2], sn[T * DH / 2], inv[DH / 2];
    for (int i = 0; i < T * DH; i++) qf[i] = (float)q[i], kf[i] = (float)k[i], vf[i] = (float)v[i];
    float m = rope_inv_freq(inv, DH, 10000.0f, 4.0f, 32);
    rope_tables(cs, sn, inv, T, DH, 0);
    rope_forward(qf, cs, sn, 1, T, 1, DH);
    rope_forward(kf, cs, sn, 1, T, 1, DH);
    for (int i = 0; i < T * DH; i++) qf[i] *= m, kf[i] *= m;
    AttnSpec spec = {.normaliser = NORMZ_SOFTMAX, .scale = 1.0f / sqrtf((float)DH)};
    attention_forward(&(AttnOut){y, att, NULL, pre}, &(AttnIn){qf, kf, vf, 0, 0, NULL, NULL, NULL},
                      &spec, &(AttnShape){1, T, 1, 1, DH});
    double maxdiff = 0, plaindiff = 0;
    for (int i = 0; i < T * DH; i++) {
        maxdiff = fmax(maxdiff, fabs(y[i] - yref[i]));
        plaindiff = fmax(plaindiff, fabs(yref[i] - yplain[i]));
    }
    assert_true(maxdiff < 2e-5);
    assert_true(plaindiff > 1e-2); /* the fixture really exercises YaRN */
    free(q), free(k), free(v), free(yref), free(yplain);
}

/* ---- eval on a real tiny run ---- */

/* run_path: tiny at T 32, where YaRN keeps no pair; long_path: tiny at
 * T 256, where it keeps the fastest. */
static char run_path[1024], learned_path[1024], long_path[1024];

static int setup_runs(void **st) {
    (void)st;
    const char *dir = tu_tmpdir();
    char out[1100];
    snprintf(run_path, sizeof run_path, "%s/base.h5", dir);
    snprintf(learned_path, sizeof learned_path, "%s/learned.h5", dir);
    snprintf(long_path, sizeof long_path, "%s/long.h5", dir);
    snprintf(out, sizeof out, "%s/train.out", dir);
    if (tu_run(out, "train --config %s/experiments/tiny.ini --out %s --quiet", tu_src(), run_path))
        return -1;
    if (tu_run(out, "train --config %s/experiments/tiny.ini --set pos=learned --out %s --quiet",
               tu_src(), learned_path))
        return -1;
    if (tu_run(out, "train --config %s/experiments/tiny.ini --set seq_len=256 --out %s --quiet",
               tu_src(), long_path))
        return -1;
    return 0;
}

static void test_eval_2x(void **st) {
    (void)st;
    LcEvalOpts o = {.lengths = {256, 512}, .n_lengths = 2, .batches = 2, .batch_size = 3};
    LcEvalResult plain[2], yarn[2];
    char err[512] = "";
    Forward *f = forward_open_trained(run_path, err, sizeof err);
    if (!f) fail_msg("%s", err);
    /* T 32 with 16-dim heads: YaRN would change every pair, refused */
    o.yarn = 1;
    assert_int_equal(lceval_run(f, &o, yarn, err, sizeof err), -1);
    assert_non_null(strstr(err, "YaRN is untestable here: it keeps no rotary pair (the fastest "
                                "turns 5.1 times within T_train 32"));
    assert_non_null(strstr(err, "train with seq_len >= 202"));
    forward_close(f);
    f = forward_open_trained(long_path, err, sizeof err);
    if (!f) fail_msg("%s", err);
    assert_int_equal(f->info.seq_len, 256);
    assert_int_equal(f->info.rope_dim, 16);
    assert_string_equal(f->info.variant, "baseline");
    o.yarn = 0;
    assert_int_equal(lceval_run(f, &o, plain, err, sizeof err), 0);
    o.yarn = 1;
    assert_int_equal(lceval_run(f, &o, yarn, err, sizeof err), 0);
    forward_close(f);
    assert_int_equal(plain[0].n_buckets, 1);
    assert_int_equal(plain[1].n_buckets, 2);
    assert_true(plain[1].yarn_scale == 1.0 && yarn[0].yarn_scale == 1.0 &&
                yarn[1].yarn_scale == 2.0);
    assert_int_equal(plain[1].n_seqs, 6);
    for (int i = 0; i < 2; i++) {
        /* a 60-step bigram model: well below uniform over 65 tokens */
        assert_true(plain[i].val_loss > 0.5 && plain[i].val_loss < log(65.0));
        assert_true(fabs(plain[i].ppl - exp(plain[i].val_loss)) < 1e-9 * plain[i].ppl);
        assert_true(plain[i].first_share > 0 && plain[i].first_share < 1);
        assert_true(plain[i].sink_rate >= 0 && plain[i].sink_rate <= 1);
    }
    assert_true(fabs(plain[1].uniform_share - uniform_first_share(512)) < 1e-12);
    /* every position has a target: val loss is the mean of equal buckets */
    assert_true(fabs(plain[1].val_loss -
                     0.5 * (plain[1].loss_by_bucket[0] + plain[1].loss_by_bucket[1])) < 1e-6);
    /* scale 1 at the training length: YaRN is exactly plain RoPE */
    assert_true(yarn[0].val_loss == plain[0].val_loss);
    assert_true(yarn[0].first_share == plain[0].first_share);
    /* at 2x YaRN changes the rotary frequencies and the temperature */
    assert_true(yarn[1].val_loss != plain[1].val_loss);
    assert_true(yarn[1].first_share != plain[1].first_share);
    for (int i = 0; i < 2; i++) lceval_result_free(&plain[i]), lceval_result_free(&yarn[i]);
}

static void test_eval_cli_roundtrip(void **st) {
    (void)st;
    char out[1100], err[512];
    snprintf(out, sizeof out, "%s/eval.out", tu_tmpdir());
    /* --both where YaRN keeps no pair: plain only, YaRN skipped in a line */
    assert_int_equal(tu_run(out, "eval %s --lengths 1x,2x --both --batches 1 --no-write", run_path),
                     0);
    char *text = tu_slurp(out, NULL);
    assert_non_null(strstr(text, "gatelab eval: YaRN skipped: "));
    assert_null(strstr(text, "  YaRN\n")); /* no YaRN table */
    free(text);
    assert_int_equal(tu_run(out, "eval %s --lengths 2x --yarn --no-write", run_path), 2);
    tu_assert_one_line(out, "YaRN is untestable here", "train with seq_len >= 202");

    RunReader *r = runread_open(long_path, err, sizeof err);
    assert_non_null(r);
    RunTrain before;
    assert_int_equal(runread_train(r, &before, err, sizeof err), 0);
    runread_close(r);

    assert_int_equal(
        tu_run(out, "eval %s --lengths 1x,2x --both --batches 1 --batch-size 2", long_path), 0);
    text = tu_slurp(out, NULL);
    assert_non_null(strstr(text, "YaRN"));
    free(text);

    r = runread_open(long_path, err, sizeof err);
    assert_non_null(r);
    assert_string_equal(runread_meta(r)->status, "done");
    RunTrain after;
    assert_int_equal(runread_train(r, &after, err, sizeof err), 0);
    assert_int_equal(after.n, before.n); /* /metrics untouched */
    assert_true(after.loss[after.n - 1] == before.loss[before.n - 1]);
    int *lens, n;
    assert_int_equal(runread_lceval_lengths(r, "yarn", &lens, &n, err, sizeof err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(lens[0], 256);
    assert_int_equal(lens[1], 512);
    free(lens);
    RunLcEval e;
    assert_int_equal(runread_lceval(r, "yarn", 512, &e, err, sizeof err), 0);
    assert_int_equal(e.n_buckets, 2);
    assert_int_equal(e.train_len, 256);
    assert_true(e.yarn_scale == 2.0);
    assert_int_equal(e.n_seqs, 2);
    assert_true(fabs(e.val_loss - 0.5 * (e.loss_by_bucket[0] + e.loss_by_bucket[1])) < 1e-6);
    runread_lceval_free(&e);
    assert_int_equal(runread_lceval(r, "plain", 1024, &e, err, sizeof err), -1);
    assert_non_null(strstr(err, "L_1024"));
    runread_close(r);
    runread_train_free(&before);
    runread_train_free(&after);
}

/* A run trained with a context extension (32, then 256 at base 40000 for
 * the last half) is evaluated as the extension left it: Nx, the buckets
 * and YaRN's original length are 256's, the rotary base the raised one. */
static void test_eval_extended(void **st) {
    (void)st;
    char run[1100], out[1100], err[512];
    snprintf(run, sizeof run, "%s/extended.h5", tu_tmpdir());
    snprintf(out, sizeof out, "%s/extended.out", tu_tmpdir());
    assert_int_equal(tu_run(out,
                            "train --config %s/experiments/tiny.ini --set extend_share=0.5 --set "
                            "extend_seq_len=256 --set extend_rope_base=40000 --out %s --quiet",
                            tu_src(), run),
                     0);
    Forward *f = forward_open_trained(run, err, sizeof err);
    if (!f) fail_msg("%s", err);
    assert_int_equal(f->info.seq_len, 256);
    assert_int_equal(f->info.bucket_len, 256);
    assert_true(f->info.rope_base == 40000.0);
    assert_int_equal(lceval_yarn_check(f, err, sizeof err), 0); /* 256 keeps a pair */
    forward_close(f);
    assert_int_equal(tu_run(out, "eval %s --lengths 1x,2x --yarn --batches 1", run), 0);
    RunReader *r = runread_open(run, err, sizeof err);
    assert_non_null(r);
    RunLcEval e;
    assert_int_equal(runread_lceval(r, "yarn", 512, &e, err, sizeof err), 0);
    assert_true(e.train_len == 256 && e.yarn_scale == 2.0 && e.n_buckets == 2);
    runread_lceval_free(&e);
    runread_close(r);
}

static void test_eval_bad_input(void **st) {
    (void)st;
    char out[1100];
    snprintf(out, sizeof out, "%s/bad.out", tu_tmpdir());
    assert_int_equal(tu_run(out, "eval %s --lengths abc", run_path), 2);
    assert_int_equal(tu_run(out, "eval %s", run_path), 2);
    assert_int_equal(tu_run(out, "eval %s/missing.h5 --lengths 32", tu_tmpdir()), 2);
    /* learned positions cannot extrapolate */
    assert_int_equal(tu_run(out, "eval %s --lengths 1x,2x", learned_path), 2);
    char *text = tu_slurp(out, NULL);
    assert_non_null(strstr(text, "learned"));
    assert_null(strchr(strchr(text, '\n') + 1, '\n')); /* one line */
    free(text);
    /* ... but the training length works */
    assert_int_equal(tu_run(out, "eval %s --lengths 1x --no-write --batches 1", learned_path), 0);
}

/* A huge learning rate truly diverges: exit 3, status diverged, step kept. */
/* Streaming on the trained run: every setting scored, stored, and the
 * library's numbers are the command's. */
static void test_stream(void **st) {
    (void)st;
    char log[1100], err[512];
    snprintf(log, sizeof log, "%s/stream.out", tu_tmpdir());
    assert_int_equal(tu_run(log, "stream %s --window 8 --keep 0,1,4 --n-seq 4", run_path), 0);
    StreamOpts o = {.window = 8, .n_seqs = 4, .n_keep = 3, .keep = {0, 1, 4}};
    double loss[16];
    Forward *fw = forward_open_trained(run_path, err, sizeof err);
    if (!fw) fail_msg("%s", err);
    if (stream_run(fw, &o, loss, err, sizeof err) != 0) fail_msg("%s", err);
    forward_close(fw);
    assert_int_equal(o.len, 32);
    hid_t f = H5Fopen(run_path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    double stored[16];
    hid_t d = H5Dopen2(f, "stream/W_8/loss_seq", H5P_DEFAULT);
    assert_true(d >= 0);
    assert_true(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, stored) >= 0);
    H5Dclose(d), H5Fclose(f);
    for (int i = 0; i < 16; i++) {
        assert_true(isfinite(loss[i]) && loss[i] > 0.0);
        assert_true(stored[i] == loss[i]);
    }
    char dir[1024], rep[1100];
    snprintf(dir, sizeof dir, "%s", run_path);
    *strrchr(dir, '/') = '\0';
    snprintf(rep, sizeof rep, "%s/rep", dir);
    assert_int_equal(tu_run(log, "report %s --out %s", dir, rep), 0);
    snprintf(rep, sizeof rep, "%s/rep/REPORT.md", dir);
    char *md = tu_slurp_ok(rep, NULL);
    assert_non_null(strstr(md, "## Streaming"));
    assert_non_null(strstr(md, "| base.h5 | baseline | 8 / 32 | 4 |"));
    free(md);
    assert_int_equal(tu_run(log, "stream %s --window 40", run_path), 2); /* not below len */
    /* the same keep twice, an empty keep, a default window of 0 */
    assert_int_equal(tu_run(log, "stream %s --keep 1,1,1 --no-write", run_path), 2);
    tu_assert_one_line(log, "gatelab stream: keep 1 is given twice", NULL);
    assert_int_equal(tu_run(log, "stream %s --keep 1,,2 --no-write", run_path), 2);
    tu_assert_one_line(log, "gatelab stream: bad --keep '1,,2'", NULL);
    assert_int_equal(tu_run(log, "stream %s --keep 1, --no-write", run_path), 2);
    assert_int_equal(tu_run(log, "stream %s --len 2 --no-write", run_path), 2);
    tu_assert_one_line(log, "length 2 is too short for the default window", "--window in 1..1");
    /* eval's memory plan: a limit below one sequence's needs, an absurd length */
    setenv("GATELAB_MEM_LIMIT", "100000", 1);
    int rc = tu_run(log, "stream %s --no-write", run_path);
    unsetenv("GATELAB_MEM_LIMIT");
    assert_int_equal(rc, 2);
    tu_assert_one_line(log, "gatelab stream: a sequence of 32 tokens needs",
                       "over the memory limit of 100000 bytes");
    assert_int_equal(tu_run(log, "stream %s --len 1048576 --no-write", run_path), 2);
    tu_assert_one_line(log, "gatelab stream: a sequence of 1048576 tokens needs", NULL);
    assert_int_equal(tu_run(log, "stream %s --model /tmp", run_path), 2);
}

static void test_forced_divergence(void **st) {
    (void)st;
    char out[1100], path[1100], err[512];
    snprintf(out, sizeof out, "%s/div.out", tu_tmpdir());
    snprintf(path, sizeof path, "%s/div.h5", tu_tmpdir());
    assert_int_equal(tu_run(out,
                            "train --config %s/experiments/tiny.ini --set lr=1e3 --out %s --quiet",
                            tu_src(), path),
                     3);
    RunReader *r = runread_open(path, err, sizeof err);
    assert_non_null(r);
    assert_string_equal(runread_meta(r)->status, "diverged");
    double ds = -2;
    assert_int_equal(runread_summary(r, "diverged_step", &ds, err, sizeof err), 0);
    assert_true(ds >= 0 && ds < 60);
    runread_close(r);
    /* a diverged run without final weights is refused with a clear line */
    assert_int_equal(tu_run(out, "eval %s --lengths 32", path), 2);
    char *text = tu_slurp(out, NULL);
    assert_non_null(strstr(text, "no /params"));
    free(text);

    tu_fault("NAN_AT", "5");
    assert_int_equal(tu_run(out, "train --config %s/experiments/tiny.ini --out %s --force --quiet",
                            tu_src(), path),
                     3);
    tu_fault_clear();
    r = runread_open(path, err, sizeof err);
    assert_non_null(r);
    assert_string_equal(runread_meta(r)->status, "diverged");
    assert_int_equal(runread_summary(r, "diverged_step", &ds, err, sizeof err), 0);
    assert_true(ds == 5.0);
    runread_close(r);
}

/* gatelab ARGS run in directory dir, its output into out; the exit code. */
static int run_in(const char *dir, const char *out, const char *args) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s > '%s' 2>&1", dir, tu_bin(), args, out);
    int st = system(cmd);
    return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A token-file run records its data files' real paths and hashes; eval
 * from another directory holding same-named files reads the recorded
 * ones; a file changed in place is refused in one line by eval and by a
 * resume; a run file without the record is read after a warning. */
static void test_data_files_recorded(void **st) {
    (void)st;
    char a[1100], b[1100], out[1100], run[1200], val[1200], args[4096];
    snprintf(a, sizeof a, "%s/df_a", tu_tmpdir());
    snprintf(b, sizeof b, "%s/df_b", tu_tmpdir());
    snprintf(out, sizeof out, "%s/df.out", tu_tmpdir());
    snprintf(run, sizeof run, "%s/run.h5", a);
    snprintf(val, sizeof val, "%s/val.u16", a);
    assert_int_equal(mkdir(a, 0755), 0);
    assert_int_equal(mkdir(b, 0755), 0);
    uint16_t tok[400];
    for (int i = 0; i < 400; i++) tok[i] = (uint16_t)(i * 7 % 50);
    tu_write_file(tu_join(a, "train.u16"), tok, sizeof tok);
    tu_write_file(val, tok, 200);
    for (int i = 0; i < 400; i++) tok[i] = (uint16_t)(i % 3);
    tu_write_file(tu_join(b, "train.u16"), tok, sizeof tok);
    tu_write_file(tu_join(b, "val.u16"), tok, 200);
    snprintf(args, sizeof args,
             "train --config %s/experiments/tiny.ini -q --set data=tokens --set "
             "train_file=train.u16 --set val_file=val.u16 --set steps=20 --out run.h5",
             tu_src());
    assert_int_equal(run_in(a, out, args), 0);
    /* the record: the real path, not the configured relative one */
    hid_t f = H5Fopen(run, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    assert_true(H5Aexists_by_name(f, "data_files", "val_file_hash", H5P_DEFAULT) > 0);
    H5Fclose(f);
    snprintf(args, sizeof args, "eval %s --lengths 1x --batches 1 --no-write", run);
    assert_int_equal(run_in(b, out, args), 0); /* b's files are not the run's */
    char *text = tu_slurp(out, NULL);
    assert_null(strstr(text, "warning"));
    free(text);
    /* one token changed in place */
    tok[0] = 9;
    tu_write_file(val, tok, 200);
    assert_int_equal(run_in(b, out, args), 2);
    tu_assert_one_line(out, "val_file", "holds other bytes than the run trained on");
    tu_assert_one_line(out, val, "recorded fnv1a64:");
    /* a run file from before the record: read after one warning */
    f = H5Fopen(run, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    assert_true(H5Ldelete(f, "data_files", H5P_DEFAULT) >= 0);
    H5Fclose(f);
    assert_int_equal(run_in(b, out, args), 0);
    text = tu_slurp(out, NULL);
    assert_non_null(strstr(text, "warning: "));
    assert_non_null(strstr(text, "records no data file hashes"));
    free(text);
    /* a resume whose val file changed since the run started */
    tu_write_file(val, tok + 1, 200);
    tu_fault("KILL_AT", "25");
    const char *again = "train --config %s/experiments/tiny.ini -q --set data=tokens --set "
                        "train_file=train.u16 --set val_file=val.u16 --out run.h5 %s";
    snprintf(args, sizeof args, again, tu_src(), "--force");
    run_in(a, out, args);
    tu_fault_clear();
    tu_write_file(val, tok, 200);
    snprintf(args, sizeof args, again, tu_src(), "--resume");
    assert_int_equal(run_in(a, out, args), 2);
    tu_assert_one_line(out, "val_file", "holds other bytes than the run trained on");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_yarn_freqs),
        cmocka_unit_test(test_yarn_attention),
        cmocka_unit_test(test_yarn_split),
        cmocka_unit_test(test_loss_beyond),
        cmocka_unit_test(test_eval_2x),
        cmocka_unit_test(test_eval_cli_roundtrip),
        cmocka_unit_test(test_eval_extended),
        cmocka_unit_test(test_eval_bad_input),
        cmocka_unit_test(test_forced_divergence),
        cmocka_unit_test(test_stream),
        cmocka_unit_test(test_data_files_recorded),
    };
    return cmocka_run_group_tests(tests, setup_runs, NULL);
}
