/* test_probe_grad.c: the probe's training-time measures (probe_grad.h).
 *
 *   - against PyTorch (tests/reference/make_probe_grad_fixture.py): every
 *     case's input-gradient norms per layer and position and gate weight
 *     norms per layer and head, through a RunState of two sequences (the
 *     fixture's five go in three chunks), with targets -1 in the batch;
 *   - the training state is untouched: the RunState's gradient arena and
 *     the weights keep their bits;
 *   - hand-built: a batch of one sequence repeated gives that sequence's
 *     norms at any chunking; a sequence without targets is left out of the
 *     mean; a gate whose weights are set by hand gives sqrt(sum w^2) per
 *     head's block;
 *   - a trained tiny run records both in its probes (gated) or only the
 *     gradients (ungated), and `gates --json` / `acts --json` print them;
 *   - its last probe's grad_in_norm is recomputed from the file alone: the
 *     final weights, the stored tokens and the stored targets (the last
 *     position's target lies past the stored tokens).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe_grad.h"
#include "runmodel.h"
#include "testutil.h"

/* |got - want| <= atol + rtol |want| for all n, else a failure naming i. */
static void near(const char *what, const double *got, const double *want, size_t n, double atol,
                 double rtol) {
    for (size_t i = 0; i < n; i++)
        if (!(fabs(got[i] - want[i]) <= atol + rtol * fabs(want[i])))
            fail_msg("%s[%zu]: C %.9g, PyTorch %.9g", what, i, got[i], want[i]);
}

static void fx_case(hid_t f, const char *name) {
    hid_t g = H5Gopen2(f, name, H5P_DEFAULT);
    if (g < 0) fail_msg("fixture: no case %s", name);
    Model m;
    RunState s;
    size_t n, nt, ng;
    char err[256], what[128];
    tu_fx_model(g, name, &m);
    int *tok = tu_h5_read(g, "tokens", H5T_NATIVE_INT, sizeof(int), &n);
    int *tgt = tu_h5_read(g, "targets", H5T_NATIVE_INT, sizeof(int), &nt);
    const int T = m.cfg.seq_len, N = (int)n / T;
    assert_int_equal(nt, n);
    assert_int_equal(runstate_init(&s, &m, 2, T), 0);
    /* the training state: a gradient arena of sentinels and the weights */
    for (size_t i = 0; i < m.table.total; i++) s.grads[i] = (float)i * 0.25f - 3.0f;
    float *params0 = malloc(m.table.total * sizeof(float));
    float *grads0 = malloc(m.table.total * sizeof(float));
    memcpy(params0, m.params, m.table.total * sizeof(float));
    memcpy(grads0, s.grads, m.table.total * sizeof(float));
    double *gn = probe_grad_norms(&m, &s, tok, tgt, N, T, err, sizeof err);
    if (!gn) fail_msg("%s: %s", name, err);
    assert_memory_equal(s.grads, grads0, m.table.total * sizeof(float));
    assert_memory_equal(m.params, params0, m.table.total * sizeof(float));
    double *want = tu_h5_read(g, "grad_in_norm", H5T_NATIVE_DOUBLE, sizeof(double), &ng);
    assert_int_equal(ng, (size_t)m.dims.L * T);
    snprintf(what, sizeof what, "%s grad_in_norm", name);
    near(what, gn, want, ng, 1e-6, 1e-4);
    free(want);
    int groups = 0;
    double *wn = probe_gate_weight_norms(&m, &groups);
    if (H5Lexists(g, "gate_weight_norm", H5P_DEFAULT) > 0) {
        want = tu_h5_read(g, "gate_weight_norm", H5T_NATIVE_DOUBLE, sizeof(double), &ng);
        assert_non_null(wn);
        assert_int_equal(ng, (size_t)m.dims.L * groups);
        snprintf(what, sizeof what, "%s gate_weight_norm", name);
        near(what, wn, want, ng, 1e-9, 1e-9);
        free(want);
    } else {
        assert_null(wn);
        assert_int_equal(groups, 0);
    }
    free(wn), free(gn), free(tok), free(tgt), free(params0), free(grads0);
    runstate_free(&s);
    model_free(&m);
    H5Gclose(g);
}

static void test_pytorch_reference(void **st) {
    (void)st;
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/reference/fixtures/probe_grad/probe_grad.h5", tu_src());
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) fail_msg("cannot open %s", path);
    const char *cases[] = {"var-baseline",     "var-g1-elem",  "var-g2-head",
                           "var-g1-const",     "var-g5-elem",  "var-head-gate-linear",
                           "opt-learned-sink", "var-registers"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) fx_case(f, cases[i]);
    H5Fclose(f);
}

/* The first fixture case's model, for the hand-built checks. */
static void fixture_model(const char *name, Model *m) {
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/reference/fixtures/probe_grad/probe_grad.h5", tu_src());
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) fail_msg("cannot open %s", path);
    hid_t g = H5Gopen2(f, name, H5P_DEFAULT);
    tu_fx_model(g, name, m);
    H5Gclose(g);
    H5Fclose(f);
}

/* Norms of rows copies of one sequence through a RunState of capacity cap. */
static double *repeated(const Model *m, int rows, int cap, const int *tok, const int *tgt, int T) {
    int *tk = malloc((size_t)rows * T * sizeof(int)), *tg = malloc((size_t)rows * T * sizeof(int));
    for (int r = 0; r < rows; r++) {
        memcpy(tk + (size_t)r * T, tok, (size_t)T * sizeof(int));
        memcpy(tg + (size_t)r * T, tgt, (size_t)T * sizeof(int));
    }
    RunState s;
    char err[256];
    assert_int_equal(runstate_init(&s, m, cap, T), 0);
    double *g = probe_grad_norms(m, &s, tk, tg, rows, T, err, sizeof err);
    if (!g) fail_msg("%s", err);
    runstate_free(&s);
    free(tk), free(tg);
    return g;
}

/* One sequence repeated: the mean is that sequence's norms whatever the
 * chunking; a sequence with no target adds nothing to the mean. */
static void test_hand_batches(void **st) {
    (void)st;
    Model m;
    fixture_model("var-g1-elem", &m);
    const int T = m.cfg.seq_len, L = m.dims.L;
    int tok[64], tgt[64], none[64];
    for (int t = 0; t < T; t++) tok[t] = (t * 5 + 1) % m.dims.V, tgt[t] = (t * 3 + 2) % m.dims.V;
    for (int t = 0; t < T; t++) none[t] = -1;
    double *one = repeated(&m, 1, 1, tok, tgt, T);
    double *four = repeated(&m, 4, 3, tok, tgt, T); /* chunks of 3 and 1 */
    near("repeated sequence", four, one, (size_t)L * T, 1e-6, 1e-5);
    for (int i = 0; i < L * T; i++) assert_true(one[i] > 0.0);
    /* [seq, none]: the second sequence has no target and is not counted */
    int tk2[128], tg2[128];
    memcpy(tk2, tok, (size_t)T * sizeof(int)), memcpy(tk2 + T, tok, (size_t)T * sizeof(int));
    memcpy(tg2, tgt, (size_t)T * sizeof(int)), memcpy(tg2 + T, none, (size_t)T * sizeof(int));
    RunState s;
    char err[256];
    assert_int_equal(runstate_init(&s, &m, 2, T), 0);
    double *mixed = probe_grad_norms(&m, &s, tk2, tg2, 2, T, err, sizeof err);
    assert_non_null(mixed);
    near("sequence without targets", mixed, one, (size_t)L * T, 1e-6, 1e-5);
    /* no sequence with a target at all: NaN, not zero */
    double *empty = probe_grad_norms(&m, &s, tk2 + T, tg2 + T, 1, T, err, sizeof err);
    assert_non_null(empty);
    for (int i = 0; i < L * T; i++) assert_true(isnan(empty[i]));
    runstate_free(&s);
    free(one), free(four), free(mixed), free(empty);
    model_free(&m);
}

/* Gate weights set by hand: head g's block of layer l all equal to
 * (l + 1) * (g + 1), so its norm is that times sqrt(block size). */
static void test_hand_gate_norms(void **st) {
    (void)st;
    Model m;
    fixture_model("var-g1-elem", &m);
    const int L = m.dims.L, G = m.dims.gate_groups;
    for (int l = 0; l < L; l++) {
        char name[PARAM_NAME];
        snprintf(name, sizeof name, "layers.%d.attn.gate.w", l);
        const ParamInfo *pi = param_find(&m.table, name);
        assert_non_null(pi);
        size_t per = pi->numel / (size_t)G;
        for (int g = 0; g < G; g++)
            for (size_t i = 0; i < per; i++)
                m.params[pi->offset + g * per + i] = (float)((l + 1) * (g + 1));
    }
    int groups = 0;
    double *wn = probe_gate_weight_norms(&m, &groups);
    assert_non_null(wn);
    assert_int_equal(groups, G);
    size_t per = (size_t)m.dims.gate_channels / G * m.dims.d; /* FULL: rows [C, d] */
    for (int l = 0; l < L; l++)
        for (int g = 0; g < G; g++)
            assert_true(fabs(wn[l * G + g] - (l + 1) * (g + 1) * sqrt((double)per)) < 1e-9);
    free(wn);
    model_free(&m);
}

/* grad_in_norm of run's probe at its final step, recomputed from the
 * file's final weights, probe tokens and probe targets through a RunState
 * of another capacity, against the stored values. */
static void recompute_from_file(const char *run, long long final_step) {
    char err[256];
    RunReader *rr = runread_open(run, err, sizeof err);
    if (!rr) fail_msg("%s", err);
    Model m;
    if (runmodel_load(rr, run, &m, err, sizeof err) != 0) fail_msg("%s", err);
    ProbeRecord p;
    if (runread_probe(rr, final_step, &p, err, sizeof err) != 0) fail_msg("%s", err);
    assert_non_null(p.grad_in_norm);
    assert_non_null(p.targets);
    /* the targets are the next tokens, the last position's beyond them */
    for (int n = 0; n < p.N; n++)
        for (int t = 0; t + 1 < p.T; t++)
            assert_int_equal(p.targets[(size_t)n * p.T + t], p.tokens[(size_t)n * p.T + t + 1]);
    RunState s;
    assert_int_equal(runstate_init(&s, &m, 3, p.T), 0);
    double *g = probe_grad_norms(&m, &s, p.tokens, p.targets, p.N, p.T, err, sizeof err);
    if (!g) fail_msg("%s", err);
    near("grad_in_norm from the file", g, p.grad_in_norm, (size_t)p.L * p.T, 1e-7, 1e-4);
    free(g);
    runstate_free(&s);
    runread_probe_free(&p);
    model_free(&m);
    runread_close(rr);
}

/* A trained tiny run records the measures, and the commands print them. */
static void test_run_file_and_commands(void **st) {
    (void)st;
    char dir[1024], run[1100], out[1100];
    snprintf(dir, sizeof dir, "%s", tu_tmpdir());
    for (int gated = 0; gated < 2; gated++) {
        snprintf(run, sizeof run, "%s/pg%d.h5", dir, gated);
        snprintf(out, sizeof out, "%s/pg%d.json", dir, gated);
        assert_int_equal(tu_run(out,
                                "train --config '%s/experiments/tiny.ini' --set variant=%s "
                                "--set steps=4 --set eval_every=2 --quiet --out '%s'",
                                tu_src(), gated ? "g1-head" : "baseline", run),
                         0);
        assert_int_equal(tu_run(out, "acts '%s' --json", run), 0);
        char *js = tu_slurp_ok(out, NULL);
        assert_non_null(strstr(js, "\"grad_in_norm\":["));
        free(js);
        assert_int_equal(tu_run(out, "gates '%s' --json", run), 0);
        js = tu_slurp_ok(out, NULL);
        assert_true(gated ? strstr(js, "\"weight_norm\":[") != NULL
                          : strstr(js, "weight_norm") == NULL);
        free(js);
        assert_int_equal(tu_run(out, "acts '%s'", run), 0);
        js = tu_slurp_ok(out, NULL);
        assert_non_null(strstr(js, "input-gradient norm g[l,t]"));
        free(js);
        recompute_from_file(run, 4);
    }
    tu_rmtree(dir);
}

int main(void) {
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pytorch_reference),
        cmocka_unit_test(test_hand_batches),
        cmocka_unit_test(test_hand_gate_norms),
        cmocka_unit_test(test_run_file_and_commands),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
