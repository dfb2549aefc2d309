/* test_head_probe.c: the head probes (key, value and head output norms, the
 * gate at position 0 and after, W_V W_O effective rank) of a trained model's
 * probe and a checkpoint's, against PyTorch
 * (tests/reference/make_head_probe_fixtures.py), and a run file without
 * them reading them as absent; a g2-head run's per-head gate means through
 * `gates`. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hdf5.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_args.h"
#include "hf_model.h"
#include "hf_pass.h"
#include "probe.h"
#include "runfile_read.h"
#include "testutil.h"

/* got (float or double, by f / dbl) against the fixture's `name`, within
 * atol + rtol |want|; an array the fixture lacks must be absent here. */
static void compare(const char *what, hid_t g, const char *name, const float *f, const double *dbl,
                    size_t n, double atol, double rtol) {
    size_t m = 0;
    double *want = tu_h5_read_opt(g, name, H5T_NATIVE_DOUBLE, sizeof(double), &m);
    if (!want) {
        if (f || dbl) fail_msg("%s %s: present here, not in the fixture", what, name);
        return;
    }
    if (!f && !dbl) fail_msg("%s %s: absent", what, name);
    if (m != n) fail_msg("%s %s: %zu values, fixture %zu", what, name, n, m);
    for (size_t i = 0; i < n; i++) {
        double v = f ? f[i] : dbl[i];
        if (!(fabs(v - want[i]) <= atol + rtol * fabs(want[i])))
            fail_msg("%s %s[%zu]: C %.7g, PyTorch %.7g", what, name, i, v, want[i]);
    }
    free(want);
}

static void compare_record(const char *what, hid_t g, const ProbeRecord *p) {
    const size_t LHT = (size_t)p->L * p->H * p->T, LH = (size_t)p->L * p->H;
    compare(what, g, "key_norm", p->key_norm, NULL, LHT, 1e-4, 1e-4);
    compare(what, g, "value_norm", p->value_norm, NULL, LHT, 1e-4, 1e-4);
    compare(what, g, "head_out_norm", p->head_out_norm, NULL, LHT, 1e-4, 1e-4);
    compare(what, g, "gate_first", NULL, p->gate_first, (size_t)p->L, 1e-5, 1e-5);
    compare(what, g, "gate_rest", NULL, p->gate_rest, (size_t)p->L, 1e-5, 1e-5);
    compare(what, g, "ov_erank", NULL, p->ov_erank, LH, 1e-5, 1e-5);
}

static void trained_case(hid_t f, const char *name) {
    TuFxCase c;
    ProbeRecord p;
    char err[512];
    tu_fx_case_open(&c, f, name);
    ProbeInput in = {.tokens = c.tok, .N = c.N, .T = c.T};
    if (probe_collect(&c.m, &c.s, &in, &p, NULL, err, sizeof err) != 0)
        fail_msg("%s: %s", name, err);
    compare_record(name, c.g, &p);
    runread_probe_free(&p);
    tu_fx_case_close(&c);
}

static void test_trained(void **st) {
    (void)st;
    tu_fx_cases("headprobe/headprobe.h5", trained_case);
}

static void hf_case(const char *name) {
    char dir[1024], path[1200], err[512];
    snprintf(dir, sizeof dir, "%s/tests/reference/hf/%s", tu_src(), name);
    snprintf(path, sizeof path, "%s/expected.h5", dir);
    hid_t fe = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (fe < 0) fail_msg("cannot open %s", path);
    size_t n;
    int32_t *ids = tu_h5_read(fe, "tokens", H5T_NATIVE_INT32, sizeof(int32_t), &n);
    H5Fclose(fe);
    HfModel *m;
    if (hf_model_open(&m, dir, 1, err, sizeof err) != 0) fail_msg("%s: %s", name, err);
    HfPassIn in = {.ids = ids, .N = 1, .T = (int)n, .M = (int)n};
    ProbeRecord p;
    HfPassOut out;
    if (hf_pass(m, &in, &p, &out, err, sizeof err) != 0) fail_msg("%s: %s", name, err);
    snprintf(path, sizeof path, "%s/head_probe.h5", dir);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) fail_msg("cannot open %s", path);
    compare_record(name, f, &p);
    H5Fclose(f);
    runread_probe_free(&p);
    hf_model_close(m);
    free(ids);
}

static void test_checkpoints(void **st) {
    (void)st;
    const char *cases[] = {"llama-f32", "qwen3-headwise-f32", "qwen3-elementwise-bf16", "gpt2-f32",
                           "neox-f32"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) hf_case(cases[i]);
}

/* A run file whose probe lacks the head-probe arrays (as one written before
 * them) reads them as absent (NULL), not as zeros. */
static void test_old_file_absent(void **st) {
    (void)st;
    char path[1200], err[512];
    snprintf(path, sizeof path, "%s/old.h5", tu_tiny_dir);
    tu_copy_file(tu_tiny_run, path);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    const char *names[] = {"key_norm", "value_norm", "head_out_norm", "ov_erank"};
    for (int k = 20; k <= 60; k += 20)
        for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
            char ds[128];
            snprintf(ds, sizeof ds, "probe/step_%07d/%s", k, names[i]);
            assert_true(H5Ldelete(f, ds, H5P_DEFAULT) >= 0);
        }
    H5Fclose(f);
    RunReader *r = runread_open(path, err, sizeof err);
    if (!r) fail_msg("%s", err);
    ProbeRecord p;
    assert_int_equal(runread_probe(r, 60, &p, err, sizeof err), 0);
    assert_null(p.key_norm);
    assert_null(p.value_norm);
    assert_null(p.head_out_norm);
    assert_null(p.ov_erank);
    runread_probe_free(&p);
    runread_close(r);
    r = runread_open(tu_tiny_run, err, sizeof err);
    assert_non_null(r);
    assert_int_equal(runread_probe(r, 60, &p, err, sizeof err), 0);
    assert_non_null(p.key_norm);
    assert_non_null(p.ov_erank);
    runread_probe_free(&p);
    runread_close(r);
}

/* A g2-head run of tiny (one KV head: one gate channel for two query
 * heads) probed on 2 sequences, so that its gate sample holds every
 * score: `gates --json`'s per-layer mean of gate head 0 equals the mean
 * of the sample's scores, summed here from the run file. */
static void test_g2_head_means(void **st) {
    (void)st;
    char run[1200], log[1200], err[512];
    snprintf(run, sizeof run, "%s/g2h.h5", tu_tiny_dir);
    snprintf(log, sizeof log, "%s/g2h.out", tu_tiny_dir);
    if (tu_run(log,
               "train --config %s/experiments/tiny.ini --set variant=g2-head --set probe_n=2 "
               "--quiet --out %s",
               tu_src(), run) != 0)
        fail_msg("train: %s", tu_slurp_ok(log, NULL));
    RunReader *r = runread_open(run, err, sizeof err);
    if (!r) fail_msg("%s", err);
    ProbeRecord p;
    assert_int_equal(runread_probe(r, -1, &p, err, sizeof err), 0);
    runread_close(r);
    assert_int_equal(p.gate_channels, 1);
    assert_int_equal(p.H, 2);
    assert_int_equal(p.gate_sample_n, p.N);
    assert_int_equal(tu_run(log, "gates %s --json", run), 0);
    json_error_t je;
    json_t *o = json_load_file(log, 0, &je), *layers = json_object_get(o, "layers");
    assert_int_equal(json_array_size(layers), p.L);
    for (int l = 0; l < p.L; l++) {
        double sum = 0.0;
        for (size_t i = 0; i < (size_t)p.N * p.T; i++)
            sum += p.gate_sample[(size_t)l * p.N * p.T + i];
        json_t *hm = json_object_get(json_array_get(layers, (size_t)l), "head_mean");
        const double got = json_number_value(json_array_get(hm, 0)), want = sum / (p.N * p.T);
        if (!(want > 0.0) || fabs(got - want) > 1e-6)
            fail_msg("layer %d: head 0's mean %g, its scores' mean %g", l, got, want);
    }
    json_decref(o);
    runread_probe_free(&p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trained),
        cmocka_unit_test(test_checkpoints),
        cmocka_unit_test(test_old_file_absent),
        cmocka_unit_test(test_g2_head_means),
    };
    return cmocka_run_group_tests(tests, tu_tiny_setup, tu_tiny_teardown);
}
