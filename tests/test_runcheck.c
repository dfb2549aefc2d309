/* test_runcheck.c: run files are checked against themselves on read
 * (runfile_check.h), before any arithmetic. A tiny trained run is edited
 * with the HDF5 API, one way at a time, into a copy:
 * - probe token ids >= vocab_size or < 0, a /config probe_n below the
 *   probe's N, a /config n_layers that contradicts the probe's L: the
 *   reader refuses the probe naming the dataset, and `gatelab intervene`
 *   exits 2 with one line and stores nothing;
 * - an HDF5 external link in the file: refused at open;
 * - a NaN in /params: `intervene` and `eval` refuse it with one line
 *   naming the tensor; a NaN in a checkpoint: `train --resume` refuses,
 *   as it refuses a run file whose /config contradicts the config;
 *   NaN weights in a Hugging Face checkpoint: `inspect` warns;
 * - fast_expf is defined for NaN and the infinities. */
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

#include "fastexp.h"
#include "runfile_read.h"
#include "testutil.h"

#define TINY "--config %s/experiments/tiny.ini --quiet"

/* the directory and the tiny run every test here uses (testutil.h) */
static const char *const dir = tu_tiny_dir, *const run = tu_tiny_run;

/* A fresh copy of the trained run, named name. */
static const char *copy_run(const char *name) {
    char *p = tu_join(dir, name);
    tu_copy_file(run, p);
    return p;
}

/* The last probe's group name in path ("/probe/step_N"). */
static void last_probe(const char *path, char *g, size_t n) {
    char err[512];
    RunReader *r = runread_open(path, err, sizeof err);
    assert_non_null(r);
    long long *steps;
    int k;
    assert_int_equal(runread_probe_steps(r, &steps, &k, err, sizeof err), 0);
    assert_true(k > 0);
    snprintf(g, n, "/probe/step_%07lld", steps[k - 1]);
    free(steps);
    runread_close(r);
}

/* Set element 0 of the dataset at dpath to *v, of memory type mtype. */
static void poke(const char *path, const char *dpath, hid_t mtype, const void *v) {
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t d = H5Dopen2(f, dpath, H5P_DEFAULT);
    assert_true(d >= 0);
    hid_t fs = H5Dget_space(d);
    hsize_t start[4] = {0}, count[4] = {1, 1, 1, 1}, one = 1;
    assert_true(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) >= 0);
    hid_t ms = H5Screate_simple(1, &one, NULL);
    assert_true(H5Dwrite(d, mtype, ms, fs, H5P_DEFAULT, v) >= 0);
    H5Sclose(ms), H5Sclose(fs), H5Dclose(d), H5Fclose(f);
}

static void poke_int(const char *path, const char *dpath, int v) {
    poke(path, dpath, H5T_NATIVE_INT, &v);
}
static void poke_float(const char *path, const char *dpath, float v) {
    poke(path, dpath, H5T_NATIVE_FLOAT, &v);
}

/* Replace the integer attribute /config/key by v (deleted and made anew:
 * HDF5 1.10 cannot rewrite an attribute of a group with many). */
static void set_config(const char *path, const char *key, long long v) {
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    assert_true(H5Adelete_by_name(f, "config", key, H5P_DEFAULT) >= 0);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate_by_name(f, "config", key, H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT,
                                H5P_DEFAULT);
    assert_true(a >= 0);
    assert_true(H5Awrite(a, H5T_NATIVE_LLONG, &v) >= 0);
    H5Aclose(a), H5Sclose(sp), H5Fclose(f);
}

/* The reader refuses path's last probe with one line holding want. */
static void assert_probe_refused(const char *path, const char *want) {
    char err[512] = "";
    RunReader *r = runread_open(path, err, sizeof err);
    assert_non_null(r);
    ProbeRecord p;
    int rc = runread_probe(r, -1, &p, err, sizeof err);
    if (rc == 0) runread_probe_free(&p);
    runread_close(r);
    if (rc == 0) fail_msg("%s: probe accepted, want a refusal naming '%s'", path, want);
    assert_null(strchr(err, '\n'));
    if (!strstr(err, want)) fail_msg("error '%s' does not name '%s'", err, want);
}

/* `gatelab ARGS` exits code with one line on stderr holding want. */
static void assert_cmd_refused(int code, const char *want, const char *fmt, const char *arg) {
    char out[1100], args[2200];
    snprintf(out, sizeof out, "%s/cmd.out", dir);
    snprintf(args, sizeof args, fmt, arg);
    int rc = tu_run(out, "%s", args);
    if (rc != code)
        fail_msg("gatelab %s: exit %d, want %d: %s", args, rc, code, tu_slurp(out, NULL));
    tu_assert_one_line(out, want, NULL);
}

static void test_token_ids(void **st) {
    (void)st;
    char g[64], ds[96];
    last_probe(run, g, sizeof g);
    snprintf(ds, sizeof ds, "%s/tokens", g);
    const int bad[] = {65, 1000, 2147483647, -1}; /* tiny's vocab_size is 65 */
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *p = copy_run("tok.h5");
        poke_int(p, ds, bad[i]);
        assert_probe_refused(p, "/tokens holds token id");
        assert_cmd_refused(2, "token id", "intervene %s gates-open", p);
        /* nothing was stored */
        assert_int_equal(runfile_has_group(p, "intervene"), 0);
    }
}

static void test_shapes_against_config(void **st) {
    (void)st;
    const char *p = copy_run("probe_n.h5");
    set_config(p, "probe_n", 1); /* the probe has 4 sequences */
    assert_probe_refused(p, "/config probe_n = 1");
    p = copy_run("layers.h5");
    set_config(p, "n_layers", 3);
    assert_probe_refused(p, "/config n_layers = 3");
    assert_cmd_refused(2, "n_layers", "intervene %s gates-open", p);
}

static void test_external_link(void **st) {
    (void)st;
    const char *p = copy_run("link.h5");
    hid_t f = H5Fopen(p, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    assert_true(H5Lcreate_external(run, "/params", f, "elsewhere", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    H5Fclose(f);
    char err[512] = "";
    assert_null(runread_open(p, err, sizeof err));
    assert_non_null(strstr(err, "/elsewhere is an external link"));
    assert_cmd_refused(2, "external link", "sinks %s", p);
}

static void test_nan_weights(void **st) {
    (void)st;
    const char *p = copy_run("nan.h5");
    poke_float(p, "/params/final_norm.weight", NAN);
    assert_cmd_refused(2, "/params/final_norm.weight holds a non-finite value",
                       "intervene %s gates-open", p);
    assert_int_equal(runfile_has_group(p, "intervene"), 0);
    assert_cmd_refused(2, "non-finite", "eval %s --lengths 1x --no-write", p);
    poke_float(p, "/params/final_norm.weight", INFINITY);
    assert_cmd_refused(2, "non-finite", "intervene %s gates-open", p);
}

#define SHORT "train " TINY " --set steps=8 --set ckpt_every=2 --out %s"

/* A run of 8 steps killed at step 5, into dir/name (path into r[n]),
 * with a checkpoint to resume from. */
static void killed_run(const char *name, char *r, size_t n) {
    char out[1100], cmd[3000];
    snprintf(r, n, "%s/%s", dir, name);
    snprintf(out, sizeof out, "%s/%s.out", dir, name);
    snprintf(cmd, sizeof cmd, SHORT, tu_src(), r);
    tu_fault("KILL_AT", "5");
    assert_int_not_equal(tu_run(out, "%s", cmd), 0);
    tu_fault_clear();
}

/* `train --resume` of r is refused (exit 2) with one line holding want. */
static void assert_resume_refused(const char *r, const char *want) {
    char cmd[3000];
    snprintf(cmd, sizeof cmd, SHORT " --resume", tu_src(), "%s");
    assert_cmd_refused(2, want, cmd, r);
}

static void test_nan_checkpoint(void **st) {
    (void)st;
    char r[1100], ck[1200];
    killed_run("killed.h5", r, sizeof r);
    snprintf(ck, sizeof ck, "%s.ckpt", r);
    poke_float(ck, "/params", NAN);
    assert_resume_refused(r, "non-finite");
}

/* A resume whose run file's /config contradicts the config it is given. */
static void test_resume_config_contradicted(void **st) {
    (void)st;
    char r[1100];
    killed_run("cut.h5", r, sizeof r);
    set_config(r, "n_layers", 3);
    assert_resume_refused(r, "/config n_layers = 3 contradicts");
}

/* A Hugging Face checkpoint whose weights are all NaN: inspect still
 * writes its run file (exit 0) but warns, in one line. */
static void test_inspect_warns_nan(void **st) {
    (void)st;
    char m[1100], to[1200], out[1100];
    snprintf(m, sizeof m, "%s/nanmodel", dir);
    assert_int_equal(mkdir(m, 0755), 0);
    tu_hf_fixture(m, "llama-f32", "config.json");
    tu_hf_fixture(m, "llama-f32", "model.safetensors");
    snprintf(to, sizeof to, "%s/model.safetensors", m);
    size_t n;
    unsigned char *b = (unsigned char *)tu_slurp_ok(to, &n);
    uint64_t hl;
    memcpy(&hl, b, 8); /* little-endian header length */
    const float nan = NAN;
    for (size_t i = 8 + hl; i + 4 <= n; i += 4) memcpy(b + i, &nan, 4);
    tu_write_file(to, b, n);
    free(b);
    snprintf(to, sizeof to, "%s/ids.txt", dir);
    tu_write_text(to, "1 2 3 4 5 6 7 8\n");
    snprintf(out, sizeof out, "%s/inspect.out", dir);
    assert_int_equal(tu_run(out, "inspect %s --tokens %s --out %s/nanm.h5 --quiet", m, to, dir), 0);
    tu_assert_one_line(out, "warning", "non-finite weights");
}

static void test_fast_expf_defined(void **st) {
    (void)st;
    assert_true(isnan(fast_expf(NAN)));
    assert_true(isnan(fast_expf(-NAN)));
    assert_true(fast_expf(INFINITY) == fast_expf(88.0f));
    assert_true(fast_expf(-INFINITY) == fast_expf(-87.0f));
    assert_true(fabsf(fast_expf(1.0f) - 2.7182817f) < 1e-6f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_token_ids),         cmocka_unit_test(test_shapes_against_config),
        cmocka_unit_test(test_external_link),     cmocka_unit_test(test_nan_weights),
        cmocka_unit_test(test_nan_checkpoint),    cmocka_unit_test(test_resume_config_contradicted),
        cmocka_unit_test(test_inspect_warns_nan), cmocka_unit_test(test_fast_expf_defined),
    };
    return cmocka_run_group_tests(tests, tu_tiny_setup, tu_tiny_teardown);
}
