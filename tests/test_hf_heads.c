/* test_hf_heads.c: a checkpoint whose layers have query heads of their
 * own (tests/reference/hf/laguna-heads-f32: 4, 6 and 2 heads, made by
 * laguna_reference.py; its forward against PyTorch is test_hf_inspect's,
 * its reruns test_hf_archs's) through the run file and its readers: the
 * probe records layer_heads, every per-head array holds NaN exactly on
 * the heads a layer lacks, the headline measures average over the
 * present heads only (recomputed here from the stored first columns),
 * the per-head tables list those heads only, a heatmap titles the absent
 * ones, head-zero refuses a head its layer lacks, gates --vocab averages
 * over layer 0's own heads, and the uniform reference weighs each layer by
 * its heads. */
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

#include "hf_inspect_fixture.h"
#include "metrics.h" /* SINK_EPS */
#include "runfile_read.h"
#include "runstats.h"
#include "testutil.h"

static const int HEADS[3] = {4, 6, 2}; /* the fixture's num_attention_heads_per_layer */

/* The fixture inspected on 24 tokens into dir/run.h5 (path into run). */
static void inspect(const char *dir, char *run, size_t len) {
    char fix[2048], log[1024], ids[1024];
    snprintf(fix, sizeof fix, "%s/tests/reference/hf/laguna-heads-f32", tu_src());
    snprintf(log, sizeof log, "%s/log", dir);
    snprintf(ids, sizeof ids, "%s/ids.txt", dir);
    snprintf(run, len, "%s/run.h5", dir);
    FILE *f = fopen(ids, "w");
    assert_non_null(f);
    for (int i = 0; i < 24; i++) fprintf(f, "%d%c", (i * 29 + 3) % 128, i < 23 ? ' ' : '\n');
    fclose(f);
    if (tu_run(log, "inspect %s --tokens %s --out %s -q", fix, ids, run) != 0)
        fail_msg("inspect: %s", tu_slurp_ok(log, NULL));
}

/* The stored arrays: layer_heads as the config says, NaN on exactly the
 * absent heads of the maps, first columns, alpha0 and the head norms. */
static void check_arrays(const ProbeRecord *p) {
    assert_int_equal(p->L, 3);
    assert_int_equal(p->H, 6);
    assert_non_null(p->layer_heads);
    for (int l = 0; l < p->L; l++) {
        assert_int_equal(p->layer_heads[l], HEADS[l]);
        assert_int_equal(runread_layer_heads(p, l), HEADS[l]);
        for (int h = 0; h < p->H; h++) {
            const int absent = h >= HEADS[l];
            const size_t lh = (size_t)l * p->H + h;
            assert_int_equal(isnan(p->attention[lh * p->M * p->M]), absent);
            assert_int_equal(isnan(p->first_col[lh * p->T]), absent);
            assert_int_equal(isnan(p->alpha0[lh]), absent);
            assert_int_equal(isnan(p->head_out_norm[lh * p->T]), absent);
            assert_int_equal(isnan(p->ov_erank[lh]), absent);
        }
    }
}

/* Sink rate at eps and the first-token share, recomputed from the first
 * columns over the 12 present heads: alpha_0 the mean of A[t, 0] over
 * t < T, the share over 1 <= t < T. */
static void check_measures(const ProbeRecord *p) {
    const double eps[3] = {0.1, 0.2, 0.3};
    for (int e = 0; e < 3; e++) {
        int hits = 0, n = 0;
        for (int s = 0; s < p->N; s++)
            for (int l = 0; l < p->L; l++)
                for (int h = 0; h < HEADS[l]; h++, n++) {
                    const float *c = p->first_col + (((size_t)s * p->L + l) * p->H + h) * p->T;
                    double a = 0.0;
                    for (int t = 0; t < p->T; t++) a += c[t];
                    hits += a / p->T > eps[e];
                }
        assert_int_equal(n, p->N * 12);
        assert_float_equal(rs_sink_rate(p, eps[e], p->T), (double)hits / n, 1e-12);
    }
    double share = 0.0;
    for (int l = 0; l < p->L; l++)
        for (int h = 0; h < HEADS[l]; h++) {
            const float *c = p->first_col + ((size_t)l * p->H + h) * p->T; /* one sequence */
            double s = 0.0;
            for (int t = 1; t < p->T; t++) s += c[t];
            share += s / (p->T - 1) / 12;
        }
    assert_int_equal(p->N, 1);
    assert_float_equal(rs_share(p, -1), share, 1e-6);
    double empty, ne;
    rs_mass(p, &empty, &ne);
    assert_true(isfinite(empty) && isfinite(ne));
}

static void test_run_file(void **s) {
    (void)s;
    char run[1100], err[512];
    inspect(tu_tmpdir(), run, sizeof run);
    RunReader *r = runread_open(run, err, sizeof err);
    if (!r) fail_msg("%s", err);
    ProbeRecord p;
    if (runread_probe(r, -1, &p, err, sizeof err) < 0) fail_msg("%s", err);
    check_arrays(&p);
    check_measures(&p);
    runread_probe_free(&p);
    runread_close(r);
}

/* sinks --json lists the 12 present (layer, head) pairs, each finite; a
 * heatmap of every head draws the 18 panels and says which are absent;
 * head-zero of head 2.3 (layer 2 has 2) is refused in one line naming
 * the layer's count, of 2.1 runs. */
static void test_commands(void **s) {
    (void)s;
    char run[1100], log[1100], png[1100];
    const char *dir = tu_tmpdir();
    inspect(dir, run, sizeof run);
    snprintf(log, sizeof log, "%s/out", dir);
    snprintf(png, sizeof png, "%s/maps.png", dir);
    assert_int_equal(tu_run(log, "sinks %s --json", run), 0);
    json_error_t je;
    json_t *o = json_load_file(log, 0, &je), *heads = json_object_get(o, "heads");
    assert_non_null(heads);
    assert_int_equal(json_array_size(heads), 12);
    for (size_t i = 0; i < json_array_size(heads); i++) {
        json_t *e = json_array_get(heads, i);
        const int l = (int)json_integer_value(json_object_get(e, "layer")),
                  h = (int)json_integer_value(json_object_get(e, "head"));
        assert_true(h < HEADS[l]);
        assert_true(json_is_number(json_object_get(e, "alpha0")));
    }
    json_decref(o);
    /* probe --json: each layer lists its own heads; its sink rate over them */
    assert_int_equal(tu_run(log, "probe %s --tokens 2,5,7,9,11 --name p --no-figure --json", run),
                     0);
    o = json_load_file(log, 0, &je);
    json_t *layers = json_object_get(o, "layers");
    assert_int_equal(json_array_size(layers), 3);
    for (int l = 0; l < 3; l++) {
        json_t *e = json_array_get(layers, (size_t)l), *al = json_object_get(e, "head_alpha0");
        assert_int_equal(json_array_size(al), HEADS[l]);
        int k = 0;
        for (int h = 0; h < HEADS[l]; h++) k += json_number_value(json_array_get(al, h)) > SINK_EPS;
        assert_float_equal(json_number_value(json_object_get(e, "sink_rate")), (double)k / HEADS[l],
                           1e-12);
    }
    json_decref(o);
    assert_int_equal(tu_run(log, "heatmap %s --out %s", run, png), 0);
    char *out = tu_slurp_ok(log, NULL);
    assert_non_null(strstr(out, "3 x 6 panels"));
    free(out);
    assert_int_equal(tu_run(log, "intervene %s head-zero --heads 2.3 --no-write", run), 2);
    out = tu_slurp_ok(log, NULL);
    if (!strstr(out, "--heads 2.3: layer 2 has 2 query heads") ||
        strchr(out, '\n') + 1 != out + strlen(out))
        fail_msg("the refusal was: %s", out);
    free(out);
    assert_int_equal(tu_run(log, "intervene %s head-zero --heads 2.1 --no-write", run), 0);
}

/* gates --vocab: each token's mean over layer 0's own 4 heads' channels
 * (one a head), finite for every token, and for the fixture's tokens
 * the mean of PyTorch's layer-0 gate scores of those heads
 * (expected.h5; under RoPE no position enters layer 0's gate). */
static void test_vocab_gate(void **s) {
    (void)s;
    char run[1100], log[1100], path[1200];
    const char *dir = tu_tmpdir();
    inspect(dir, run, sizeof run);
    snprintf(log, sizeof log, "%s/out", dir);
    assert_int_equal(tu_run(log, "gates %s --vocab --json", run), 0);
    json_error_t je;
    json_t *o = json_load_file(log, 0, &je), *tm = json_object_get(o, "token_mean");
    if (!o) fail_msg("gates --vocab --json: %s", je.text);
    assert_int_equal(json_integer_value(json_object_get(o, "gate_channels")), HEADS[0]);
    const size_t V = json_array_size(tm);
    assert_int_equal(V, 128);
    for (size_t v = 0; v < V; v++) assert_true(json_is_number(json_array_get(tm, v)));
    snprintf(path, sizeof path, "%s/tests/reference/hf/laguna-heads-f32/expected.h5", tu_src());
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    size_t nt, ng;
    int32_t *ids = tu_h5_read(f, "tokens", H5T_NATIVE_INT32, sizeof(int32_t), &nt);
    float *g = tu_h5_read(f, "gates", H5T_NATIVE_FLOAT, sizeof(float), &ng); /* [L, T, 6] */
    H5Fclose(f);
    assert_int_equal(ng, 3 * nt * 6);
    for (size_t t = 0; t < nt; t++) {
        double want = 0.0;
        for (int c = 0; c < HEADS[0]; c++) want += g[t * 6 + c] / HEADS[0];
        const double got = json_number_value(json_array_get(tm, (size_t)ids[t]));
        if (!(fabs(got - want) <= 1e-5 + 1e-5 * fabs(want)))
            fail_msg("token %d: --vocab mean %.7g, PyTorch's %.7g", ids[t], got, want);
    }
    free(ids), free(g);
    json_decref(o);
}

/* The uniform reference weighs each layer by its heads, as F-Attn does
 * (docs/metrics.md): layer l's u_l = (1/(T-1)) sum over t = 1..T-1 with
 * t < W_l of 1/(t+1) (the fixture's sliding window 4 on layers 0 and 1,
 * layer 2 full, no slots), the run's sum_l H_l u_l / sum_l H_l, which
 * sinks --json (f_attn_uniform, per layer) and eval's uniform_share give
 * at the probe's length 24. */
static void test_uniform_by_heads(void **s) {
    (void)s;
    enum { T = 24 };
    const int win[3] = {4, 4, T};
    char run[1100], log[1100];
    const char *dir = tu_tmpdir();
    inspect(dir, run, sizeof run);
    snprintf(log, sizeof log, "%s/out", dir);
    double share[3], num = 0.0, den = 0.0;
    for (int l = 0; l < 3; l++) {
        share[l] = 0.0;
        for (int t = 1; t < T && t < win[l]; t++) share[l] += 1.0 / (t + 1) / (T - 1);
        num += HEADS[l] * share[l], den += HEADS[l];
    }
    hf_check_uniform(run, log, T, share, 3, num / den);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_file), cmocka_unit_test(test_commands),
        cmocka_unit_test(test_vocab_gate), cmocka_unit_test(test_uniform_by_heads)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
