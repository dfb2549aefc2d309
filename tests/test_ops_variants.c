/* test_ops_variants.c: the kernels some variants add beside the attention
 * op (ops.h), checked like test_ops.c (gradcheck.h): SSMax's score
 * scaling, FoX's forget-gate key bias, differential attention's pieces,
 * exclusive self-attention's projection and GatedNorm; and RMSNorm (qk-norm,
 * the Y modification) bit for bit against one row at a time. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gradcheck.h"
#include "ops.h"

/* ---- SSMax, FoX, differential attention (docs/variants.md D) ---- */

typedef struct {
    int B, T, H, dh, window;
    float *q, *s, *out, *R;
} SsmaxCtx;

static double ssmax_loss(void *p) {
    SsmaxCtx *c = p;
    ssmax_forward(c->out, c->q, c->s, c->B, c->T, c->H, c->dh, c->window);
    return dotd(c->out, c->R, (size_t)c->B * c->T * c->H * c->dh);
}

/* Every row t of q is scaled by s_h ln(n_t), n_t the keys query t sees:
 * t + 1 without a window (rows 0..4: ln 1 .. ln 5), min(t + 1, 3) under a
 * window of 3 keys (AttnSpec.window; ln 1, ln 2, ln 3, ln 3, ln 3), by
 * hand; the gradients follow the same scale. */
static void test_ssmax(void **st) {
    (void)st;
    const double ln_keys[2][5] = {{0.0, log(2.0), log(3.0), log(4.0), log(5.0)},
                                  {0.0, log(2.0), log(3.0), log(3.0), log(3.0)}};
    for (int w = 0; w < 2; w++) {
        SsmaxCtx c = {.B = 2, .T = 5, .H = 3, .dh = 4, .window = w ? 3 : 0};
        size_t n = (size_t)c.B * c.T * c.H * c.dh;
        seed(w ? 37 : 31);
        c.q = randv(n, 1.0f);
        c.s = randv(3, 1.0f);
        c.out = filled(n, 0.0f);
        c.R = randv(n, 1.0f);
        float *dq = filled(n, PREFILL), *ds = filled(3, PREFILL);
        ssmax_loss(&c);
        for (int b = 0; b < c.B; b++)
            for (int t = 0; t < c.T; t++)
                for (int h = 0; h < c.H; h++) {
                    size_t o = (((size_t)b * c.T + t) * c.H + h) * c.dh;
                    for (int i = 0; i < c.dh; i++)
                        assert_float_equal(c.out[o + i], c.q[o + i] * c.s[h] * ln_keys[w][t], 1e-6);
                }
        ssmax_backward(dq, ds, c.R, c.q, c.s, c.B, c.T, c.H, c.dh, c.window);
        check_grad(w ? "ssmax window dq" : "ssmax dq", ssmax_loss, &c, c.q, n, dq);
        check_grad(w ? "ssmax window ds" : "ssmax ds", ssmax_loss, &c, c.s, 3, ds);
        free(c.q), free(c.s), free(c.out), free(c.R), free(dq), free(ds);
    }
    assert_int_equal(ssmax_keys(4, 3), 3);
    assert_int_equal(ssmax_keys(1, 3), 2);
    assert_int_equal(ssmax_keys(4, 0), 5);  /* no window: every key j <= t */
    assert_int_equal(ssmax_keys(4, 10), 5); /* a window longer than the row */
}

typedef struct {
    int B, T, H;
    float *z, *kb, *R;
} FoxCtx;

static double fox_loss(void *p) {
    FoxCtx *c = p;
    fox_bias_forward(c->kb, c->z, c->B, c->T, c->H);
    return dotd(c->kb, c->R, (size_t)c->B * c->H * c->T);
}

static void test_fox_bias(void **st) {
    (void)st;
    FoxCtx c = {.B = 2, .T = 6, .H = 3};
    size_t n = (size_t)c.B * c.T * c.H;
    seed(53);
    c.z = randv(n, 3.0f);
    c.kb = filled(n, 0.0f);
    c.R = randv(n, 1.0f);
    fox_loss(&c);
    /* kb[b,h,t] = -sum_{l<=t} log sigmoid(z[b,l,h]): batch 1, head 2, t = 4 */
    double want = 0.0;
    for (int l = 0; l <= 4; l++)
        want -= log(1.0 / (1.0 + exp(-(double)c.z[((size_t)6 + l) * 3 + 2])));
    assert_float_equal(c.kb[((size_t)1 * 3 + 2) * 6 + 4], want, 1e-5);
    float *dz = filled(n, PREFILL);
    fox_bias_backward(dz, c.R, c.z, c.B, c.T, c.H);
    check_grad("fox dz", fox_loss, &c, c.z, n, dz);
    free(c.z);
    free(c.kb);
    free(c.R);
    free(dz);
}

typedef struct {
    float lam[4 * 3], x1[10], x2[10], out[10], R[10];
} DiffCtx;

/* L = sum R * (x1 - lambda(lam) x2) */
static double diff_loss(void *p) {
    DiffCtx *c = p;
    float l = diff_lambda_forward(c->lam, 3, 0.2f);
    diff_combine_forward(c->out, c->x1, c->x2, l, 10);
    return dotd(c->out, c->R, 10);
}

static void test_diff_attn_pieces(void **st) {
    (void)st;
    DiffCtx c;
    seed(71);
    float *r = randv(4 * 3 + 40, 0.7f);
    memcpy(c.lam, r, sizeof c.lam);
    memcpy(c.x1, r + 12, sizeof c.x1);
    memcpy(c.x2, r + 22, sizeof c.x2);
    memcpy(c.R, r + 32, sizeof c.R);
    free(r);
    /* lambda from its definition */
    double d1 = 0, d2 = 0;
    for (int i = 0; i < 3; i++) d1 += c.lam[i] * c.lam[3 + i], d2 += c.lam[6 + i] * c.lam[9 + i];
    assert_float_equal(diff_lambda_forward(c.lam, 3, 0.2f), exp(d1) - exp(d2) + 0.2, 1e-6);
    assert_float_equal(diff_lambda_init(0), 0.2f, 1e-7);
    assert_float_equal(diff_lambda_init(3), 0.8 - 0.6 * exp(-0.9), 1e-6);
    diff_loss(&c);
    float l = diff_lambda_forward(c.lam, 3, 0.2f);
    float dx2[10], dlam[12];
    float dl = diff_combine_backward(dx2, c.R, c.x2, l, 10);
    for (int i = 0; i < 10; i++) dx2[i] += PREFILL;
    for (int i = 0; i < 12; i++) dlam[i] = PREFILL;
    diff_lambda_backward(dlam, dl, c.lam, 3);
    check_grad("diff dx2", diff_loss, &c, c.x2, 10, dx2);
    check_grad("diff dlambda", diff_loss, &c, c.lam, 12, dlam);
    /* the split keeps one half each; its backward puts them back */
    float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, a[8], b[8], dx[8];
    diff_split_forward(a, b, x, 2, 4);
    const float wa[8] = {1, 2, 0, 0, 5, 6, 0, 0}, wb[8] = {0, 0, 3, 4, 0, 0, 7, 8};
    for (int i = 0; i < 8; i++) {
        assert_float_equal(a[i], wa[i], 0);
        assert_float_equal(b[i], wb[i], 0);
        dx[i] = PREFILL;
    }
    diff_split_backward(dx, x, x, 2, 4); /* dx1 = dx2 = x: dx = x + prefill */
    for (int i = 0; i < 8; i++) assert_float_equal(dx[i], x[i] + PREFILL, 0);
}

/* ---- exclusive self-attention ---- */

typedef struct {
    int M, H, Hkv, dh;
    float *y, *v, *z, *R;
} XsaCtx;

static double xsa_loss(void *p) {
    XsaCtx *c = p;
    xsa_forward(c->z, c->y, c->v, c->M, c->H, c->Hkv, c->dh);
    return dotd(c->z, c->R, (size_t)c->M * c->H * c->dh);
}

/* GQA (4 heads over 2 kv heads): z is orthogonal to its kv head's v, a y
 * along v maps to 0, and both gradients match central differences. */
static void test_xsa(void **st) {
    (void)st;
    XsaCtx c = {.M = 3, .H = 4, .Hkv = 2, .dh = 5};
    const size_t ny = 60, nv = 30;
    seed(83);
    c.y = randv(ny, 1.0f);
    c.v = randv(nv, 1.0f);
    c.z = filled(ny, 0.0f);
    c.R = randv(ny, 1.0f);
    for (int i = 0; i < 5; i++) c.y[(1 * 4 + 3) * 5 + i] = 2.5f * c.v[(1 * 2 + 1) * 5 + i];
    xsa_loss(&c);
    for (int m = 0; m < 3; m++)
        for (int h = 0; h < 4; h++)
            assert_true(fabs(dotd(c.z + (m * 4 + h) * 5, c.v + (m * 2 + h / 2) * 5, 5)) < 1e-5);
    for (int i = 0; i < 5; i++) assert_true(fabsf(c.z[(1 * 4 + 3) * 5 + i]) < 1e-5f);
    c.y[(1 * 4 + 3) * 5] += 0.3f; /* off the parallel point for the differences */
    float *dy = filled(ny, 1e6f), *dv = filled(nv, PREFILL);
    xsa_backward(dy, dv, c.R, c.y, c.v, 3, 4, 2, 5);
    for (size_t i = 0; i < ny; i++) dy[i] += PREFILL; /* dy is written */
    check_grad("xsa dy", xsa_loss, &c, c.y, ny, dy);
    check_grad("xsa dv", xsa_loss, &c, c.v, nv, dv);
    free(c.y);
    free(c.v);
    free(c.z);
    free(c.R);
    free(dy);
    free(dv);
}

/* ---- GatedNorm ---- */

typedef struct {
    int N, d, r;
    float *y, *wd, *wu, *h, *s, *u, *out, *R;
} GnCtx;

static double gn_loss(void *p) {
    GnCtx *c = p;
    gated_norm_forward(c->out, c->h, c->s, c->u, c->y, c->wd, c->wu, c->N, c->d, c->r);
    return dotd(c->out, c->R, (size_t)c->N * c->d);
}

/* out = y * sigmoid(silu(y W_down^T) W_up^T) at one entry by hand, and the
 * gradients of y, W_down and W_up against central differences. */
static void test_gated_norm(void **st) {
    (void)st;
    GnCtx c = {.N = 3, .d = 5, .r = 2};
    seed(84);
    c.y = randv(15, 1.0f);
    c.wd = randv(10, 0.8f);
    c.wu = randv(10, 0.8f);
    c.h = filled(6, 0.0f), c.s = filled(6, 0.0f), c.u = filled(15, 0.0f);
    c.out = filled(15, 0.0f);
    c.R = randv(15, 1.0f);
    gn_loss(&c);
    double u = 0.0; /* row 1, channel 3 */
    for (int j = 0; j < 2; j++) {
        double h = dotd(c.y + 5, c.wd + j * 5, 5);
        u += c.wu[3 * 2 + j] * h / (1.0 + exp(-h));
    }
    assert_float_equal(c.out[5 + 3], c.y[5 + 3] / (1.0 + exp(-u)), 1e-5);
    float *dy = filled(15, PREFILL), *dwd = filled(10, PREFILL), *dwu = filled(10, PREFILL);
    float *du = filled(15, 1e6f), *ds = filled(6, 1e6f), *dh = filled(6, 1e6f); /* scratch */
    gated_norm_backward(dy, dwd, dwu, c.R, c.y, c.h, c.s, c.u, c.wd, c.wu, du, ds, dh, 3, 5, 2);
    check_grad("gatednorm dy", gn_loss, &c, c.y, 15, dy);
    check_grad("gatednorm dw_down", gn_loss, &c, c.wd, 10, dwd);
    check_grad("gatednorm dw_up", gn_loss, &c, c.wu, 10, dwu);
    float *all[] = {c.y, c.wd, c.wu, c.h, c.s, c.u, c.out, c.R, dy, dwd, dwu, du, ds, dh};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) free(all[i]);
}

/* ---- RMSNorm's row sums, a row per SIMD lane, against plain loops ---- */

/* rmsnorm_forward and backward on M x C against a row at a time, each
 * row's sum in index order: every bit the same, whatever M and C leave
 * over from a whole number of lanes. */
static void rmsnorm_rows_case(int M, int C) {
    size_t n = (size_t)M * C;
    float *x = malloc(n * sizeof *x), *g = malloc(n * sizeof *g), *w = malloc(C * sizeof *w);
    float *o = malloc(n * sizeof *o), *r = malloc(M * sizeof *r), *dx = calloc(n, sizeof *dx);
    float *dw = calloc(C, sizeof *dw), *dw_ref = calloc(C, sizeof *dw_ref);
    assert_non_null(dw_ref);
    for (size_t i = 0; i < n; i++) x[i] = sinf(0.37f * i + 0.1f), g[i] = cosf(0.23f * i);
    for (int i = 0; i < C; i++) w[i] = 1.0f + 0.01f * i;
    rmsnorm_forward(o, r, x, w, M, C, 1e-5f);
    rmsnorm_backward(dx, dw, g, x, w, r, M, C);
    for (int m = 0; m < M; m++) {
        const float *xm = x + (size_t)m * C, *gm = g + (size_t)m * C;
        float ss = 0.0f, dot = 0.0f;
        for (int i = 0; i < C; i++) ss += xm[i] * xm[i];
        float rr = 1.0f / sqrtf(ss / (float)C + 1e-5f);
        assert_true(rr == r[m]);
        for (int i = 0; i < C; i++) {
            assert_true(xm[i] * rr * w[i] == o[(size_t)m * C + i]);
            dot += gm[i] * w[i] * xm[i];
            dw_ref[i] += gm[i] * xm[i] * rr;
        }
        float k = rr * rr * rr * dot / (float)C;
        for (int i = 0; i < C; i++)
            assert_true(0.0f + (rr * gm[i] * w[i] - k * xm[i]) == dx[(size_t)m * C + i]);
    }
    assert_memory_equal(dw, dw_ref, C * sizeof *dw);
    free(x), free(g), free(w), free(o), free(r), free(dx), free(dw), free(dw_ref);
}

static void test_rmsnorm_rows(void **st) {
    (void)st;
    rmsnorm_rows_case(16, 64);
    rmsnorm_rows_case(21, 13);
    rmsnorm_rows_case(3, 5);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ssmax),
        cmocka_unit_test(test_fox_bias),
        cmocka_unit_test(test_diff_attn_pieces),
        cmocka_unit_test(test_xsa),
        cmocka_unit_test(test_gated_norm),
        cmocka_unit_test(test_rmsnorm_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
