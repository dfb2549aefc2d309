/* test_max_logit.c: model_max_logit (docs/metrics.md "max_logit") against a
 * recomputation in double from the forward's rotated queries and keys.
 *
 *   - at every length up to the RunState's capacity: a forward of fewer
 *     tokens than the capacity (as `gatelab intervene`'s no-bos, which
 *     drops each probe sequence's first token) is read over its own rows;
 *     the probe-gradient fixture's cases (large random weights: plain RoPE,
 *     gates, a sink token, register tokens) and FoX on tiny.ini's model;
 *   - FoX's logit is q.k/sqrt(dh) + c_t - c_j with c_t = sum_{i<=t} log
 *     sigmoid(xn_i . fox_w + fox_b), recomputed here from the normed input;
 *   - the same forward through a RunState of exactly its length agrees.
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

#include "model_priv.h"
#include "testutil.h"

/* c[b, h, t] = sum_{i<=t} log sigmoid(z) of FoX's forget gate in layer l,
 * in double from the block's normed input n1 [B*Ti, d]. */
static double *fox_cumsum(const Model *m, const RunState *s, int l, int B, int Ti) {
    const Dims *D = &m->dims;
    const LayerWeights *w = &m->w.layer[l];
    double *c = malloc((size_t)B * D->H * Ti * sizeof *c);
    assert_non_null(c);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < D->H; h++) {
            double acc = 0.0;
            for (int t = 0; t < Ti; t++) {
                const float *x = s->la[l].n1 + ((size_t)b * Ti + t) * D->d;
                double z = w->fox_b[h];
                for (int i = 0; i < D->d; i++) z += (double)x[i] * w->fox_w[(size_t)h * D->d + i];
                acc += -log1p(exp(-z)); /* log sigmoid(z) */
                c[((size_t)b * D->H + h) * Ti + t] = acc;
            }
        }
    return c;
}

/* max |q_t . k_j / sqrt(dh) (+ c_t - c_j)| over b, h and j <= t. */
static double recompute(const Model *m, const RunState *s, int l, int B, int Ti) {
    const Dims *D = &m->dims;
    const double scale = 1.0 / sqrt((double)D->dh);
    double *c = m->cfg.fox ? fox_cumsum(m, s, l, B, Ti) : NULL, mx = 0.0;
    for (int b = 0; b < B; b++)
        for (int h = 0; h < D->H; h++)
            for (int t = 0; t < Ti; t++)
                for (int j = 0; j <= t; j++) {
                    const float *q = s->la[l].qr + ((size_t)b * Ti + t) * D->qdim + h * D->dh;
                    const float *k = s->la[l].kr + ((size_t)b * Ti + j) * D->kvdim +
                                     (h / (D->H / D->Hkv)) * D->dh;
                    double dot = 0.0;
                    for (int i = 0; i < D->dh; i++) dot += (double)q[i] * k[i];
                    double v = dot * scale;
                    if (c)
                        v +=
                            c[((size_t)b * D->H + h) * Ti + t] - c[((size_t)b * D->H + h) * Ti + j];
                    mx = fmax(mx, fabs(v));
                }
    free(c);
    return mx;
}

/* Every length T = 2..T0 through s, a RunState of capacity N x T0 (the
 * tokens are tok0's from position T0 - T on, as no-bos takes them), and
 * through one of capacity T: both within float rounding of the
 * recomputation, and equal. */
static void check_lengths(const char *name, const Model *m, RunState *s, const int *tok0, int N,
                          int T0) {
    const int e = m->dims.extra_pos;
    assert_true(m->cfg.window == 0 && m->cfg.pos != POS_ALIBI && !m->cfg.ssmax);
    int *tok = malloc((size_t)N * T0 * sizeof *tok);
    assert_non_null(tok);
    for (int T = T0; T >= 2; T--) {
        for (int b = 0; b < N; b++)
            memcpy(tok + (size_t)b * T, tok0 + (size_t)b * T0 + (T0 - T), (size_t)T * sizeof *tok);
        RunState exact;
        assert_int_equal(runstate_init(&exact, m, N, T), 0);
        s->keep_scores = exact.keep_scores = 1;
        model_forward(m, s, tok, NULL, N, T);
        model_forward(m, &exact, tok, NULL, N, T);
        for (int l = 0; l < m->dims.L; l++) {
            double want = recompute(m, s, l, N, T + e);
            double got = model_max_logit(s, m, l, N), fit = model_max_logit(&exact, m, l, N);
            if (!(fabs(got - want) <= 1e-5 * (1.0 + want)))
                fail_msg("%s: T %d of %d, layer %d: max_logit %.9g, recomputed %.9g", name, T, T0,
                         l, got, want);
            if (got != fit)
                fail_msg("%s: T %d, layer %d: %.9g in a RunState of %d, %.9g in one of %d", name, T,
                         l, got, T0, fit, T);
        }
        runstate_free(&exact);
    }
    free(tok);
}

/* A case of the probe-gradient fixture (large random weights). */
static void fx_case(hid_t f, const char *name) {
    TuFxCase fc;
    tu_fx_case_open(&fc, f, name);
    check_lengths(name, &fc.m, &fc.s, fc.tok, fc.N, fc.T);
    tu_fx_case_close(&fc);
}

static void test_fixture_cases(void **st) {
    (void)st;
    tu_fx_cases("probe_grad/probe_grad.h5", fx_case);
}

/* FoX on tiny.ini's model, with forget-gate biases set apart from 0 so
 * that the gates differ by head, over 3 sequences of 12 tokens. */
static void test_fox(void **st) {
    (void)st;
    Model m;
    RunState s;
    tu_tiny_model(&m, "fox");
    for (int l = 0; l < m.dims.L; l++)
        for (int h = 0; h < m.dims.H; h++) m.w.layer[l].fox_b[h] = (float)(1.5 * h - 1.0 + 0.5 * l);
    enum { N = 3, T0 = 12 };
    int tok[N * T0];
    unsigned x = 12345u;
    for (int i = 0; i < N * T0; i++)
        tok[i] = (int)((x = x * 1103515245u + 12345u) >> 16) % m.dims.V;
    assert_int_equal(runstate_init(&s, &m, N, T0), 0);
    check_lengths("fox", &m, &s, tok, N, T0);
    runstate_free(&s);
    model_free(&m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_cases),
        cmocka_unit_test(test_fox),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
