/* test_ops.c: every op in ops.h, checked two ways.
 *
 * Gradients: for a scalar objective L = sum(out * R) with a fixed random R,
 * the backward's gradient of every input is compared with central finite
 * differences of the float forward (eps 1e-3, L summed in double). Gradient
 * buffers are pre-filled with a constant, so the check also proves that
 * backward accumulates rather than overwrites.
 *
 * Values: hand-computed numbers for RoPE/YaRN and the loss. The attention
 * op is test_ops_attention.c, the variants' own kernels (SSMax, FoX,
 * differential attention, XSA, GatedNorm) test_ops_variants.c; all three
 * check through gradcheck.h.
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

#include "config.h" /* GATE_ACTS */
#include "fastexp.h"
#include "fpmode.h"
#include "gradcheck.h"
#include "ops.h"

/* ---- embedding ---- */

typedef struct {
    int N, T, C, V, with_pos;
    int *tok_ids;
    float *tok, *pos, *out, *R;
} EmbedCtx;

static double embed_loss(void *p) {
    EmbedCtx *c = p;
    embed_forward(c->out, c->tok_ids, c->tok, c->with_pos ? c->pos : NULL, c->N, c->T, c->C);
    return dotd(c->out, c->R, (size_t)c->N * c->C);
}

static void run_embed(int with_pos) {
    int ids[6] = {1, 4, 1, 0, 2, 1};
    EmbedCtx c = {.N = 6, .T = 3, .C = 4, .V = 5, .with_pos = with_pos, .tok_ids = ids};
    seed(11);
    c.tok = randv(20, 1.0f);
    c.pos = randv(12, 1.0f);
    c.out = filled(24, 0.0f);
    c.R = randv(24, 1.0f);
    float *dtok = filled(20, PREFILL), *dpos = filled(12, PREFILL);
    embed_loss(&c);
    /* row 4 is token 2 at position 4 % 3 = 1 */
    for (int i = 0; i < 4; i++)
        assert_float_equal(c.out[16 + i], c.tok[8 + i] + (with_pos ? c.pos[4 + i] : 0.0f), 1e-6);
    embed_backward(dtok, with_pos ? dpos : NULL, c.R, ids, 6, 3, 4);
    check_grad("embed dtok", embed_loss, &c, c.tok, 20, dtok);
    if (with_pos) check_grad("embed dpos", embed_loss, &c, c.pos, 12, dpos);
    else
        for (int i = 0; i < 12; i++) assert_float_equal(dpos[i], PREFILL, 0);
    free(c.tok);
    free(c.pos);
    free(c.out);
    free(c.R);
    free(dtok);
    free(dpos);
}
static void test_embed(void **s) {
    (void)s;
    run_embed(0);
    run_embed(1);
}

/* ---- matmul ---- */

typedef struct {
    int M, K, N, with_bias;
    float *inp, *w, *b, *out, *R;
} MatCtx;

static double mat_loss(void *p) {
    MatCtx *c = p;
    matmul_forward(c->out, c->inp, c->w, c->with_bias ? c->b : NULL, c->M, c->K, c->N);
    return dotd(c->out, c->R, (size_t)c->M * c->N);
}

static void run_matmul(int with_bias) {
    MatCtx c = {.M = 3, .K = 4, .N = 5, .with_bias = with_bias};
    seed(21);
    c.inp = randv(12, 1.0f);
    c.w = randv(20, 1.0f);
    c.b = randv(5, 1.0f);
    c.out = filled(15, 0.0f);
    c.R = randv(15, 1.0f);
    mat_loss(&c);
    /* out[1][2] = inp[1,:] . w[2,:] + b[2] ([out, in] layout) */
    double ref = dotd(c.inp + 4, c.w + 8, 4) + (with_bias ? c.b[2] : 0.0);
    assert_float_equal(c.out[1 * 5 + 2], ref, 1e-5);
    float *di = filled(12, PREFILL), *dw = filled(20, PREFILL), *db = filled(5, PREFILL);
    matmul_backward(di, dw, with_bias ? db : NULL, c.R, c.inp, c.w, 3, 4, 5);
    check_grad("matmul dinp", mat_loss, &c, c.inp, 12, di);
    check_grad("matmul dw", mat_loss, &c, c.w, 20, dw);
    if (with_bias) check_grad("matmul dbias", mat_loss, &c, c.b, 5, db);
    float *ds = filled(12, 1e30f); /* the _set form writes dinp over garbage */
    matmul_backward_set(ds, NULL, NULL, c.R, c.inp, c.w, 3, 4, 5);
    for (int i = 0; i < 12; i++) assert_float_equal(ds[i] + PREFILL, di[i], 1e-6);
    float *dws = filled(20, 1e30f); /* MM_SET_DW writes dw over garbage */
    matmul_backward_into(MM_SET_DW, NULL, dws, NULL, c.R, c.inp, c.w, 3, 4, 5);
    for (int i = 0; i < 20; i++) assert_float_equal(dws[i] + PREFILL, dw[i], 1e-6);
    free(dws);
    free(ds);
    free(c.inp);
    free(c.w);
    free(c.b);
    free(c.out);
    free(c.R);
    free(di);
    free(dw);
    free(db);
}
static void test_matmul(void **s) {
    (void)s;
    run_matmul(0);
    run_matmul(1);
}

/* ---- norms ---- */

typedef struct {
    int M, C, layer, with_w;
    float *x, *w, *b, *out, *mean, *rstd, *R;
} NormCtx;

static double norm_loss(void *p) {
    NormCtx *c = p;
    if (c->layer) layernorm_forward(c->out, c->mean, c->rstd, c->x, c->w, c->b, c->M, c->C, 1e-5f);
    else rmsnorm_forward(c->out, c->rstd, c->x, c->with_w ? c->w : NULL, c->M, c->C, 1e-5f);
    return dotd(c->out, c->R, (size_t)c->M * c->C);
}

static void run_norm(int layer, int with_w) {
    NormCtx c = {.M = 3, .C = 6, .layer = layer, .with_w = with_w};
    seed(31 + layer * 2 + with_w);
    c.x = randv(18, 1.0f);
    c.w = randv(6, 1.0f);
    c.b = randv(6, 1.0f);
    c.out = filled(18, 0.0f);
    c.mean = filled(3, 0.0f);
    c.rstd = filled(3, 0.0f);
    c.R = randv(18, 1.0f);
    norm_loss(&c);
    /* row 1 by hand */
    double m = 0.0, ss = 0.0;
    for (int i = 0; i < 6; i++) m += c.x[6 + i];
    m /= 6.0;
    for (int i = 0; i < 6; i++) {
        double d = layer ? c.x[6 + i] - m : c.x[6 + i];
        ss += d * d;
    }
    double r = 1.0 / sqrt(ss / 6.0 + 1e-5);
    for (int i = 0; i < 6; i++) {
        double e = ((layer ? c.x[6 + i] - m : c.x[6 + i]) * r) * (with_w ? c.w[i] : 1.0) +
                   (layer ? c.b[i] : 0.0);
        assert_float_equal(c.out[6 + i], e, 1e-5);
    }
    float *dx = filled(18, PREFILL), *dw = filled(6, PREFILL), *db = filled(6, PREFILL);
    if (layer) layernorm_backward(dx, dw, db, c.R, c.x, c.w, c.mean, c.rstd, 3, 6);
    else rmsnorm_backward(dx, with_w ? dw : NULL, c.R, c.x, with_w ? c.w : NULL, c.rstd, 3, 6);
    /* the _set forms write dx over garbage (checked before check_grad moves rstd) */
    float *ds = filled(18, 1e30f);
    if (layer) layernorm_backward_set(ds, NULL, NULL, c.R, c.x, c.w, c.mean, c.rstd, 3, 6);
    else rmsnorm_backward_set(ds, NULL, c.R, c.x, with_w ? c.w : NULL, c.rstd, 3, 6);
    for (int i = 0; i < 18; i++) assert_float_equal(ds[i] + PREFILL, dx[i], 1e-6);
    check_grad("norm dx", norm_loss, &c, c.x, 18, dx);
    free(ds);
    if (with_w) check_grad("norm dw", norm_loss, &c, c.w, 6, dw);
    if (layer) check_grad("layernorm db", norm_loss, &c, c.b, 6, db);
    free(c.x);
    free(c.w);
    free(c.b);
    free(c.out);
    free(c.mean);
    free(c.rstd);
    free(c.R);
    free(dx);
    free(dw);
    free(db);
}
static void test_rmsnorm(void **s) {
    (void)s;
    run_norm(0, 1);
    run_norm(0, 0);
}
static void test_layernorm(void **s) {
    (void)s;
    run_norm(1, 1);
}

/* ---- RoPE ---- */

enum { RB = 2, RT = 5, RH = 2, RD = 8 };
typedef struct {
    float *x, *work, *cos_t, *sin_t, *R;
} RopeCtx;

static double rope_loss(void *p) {
    RopeCtx *c = p;
    size_t n = (size_t)RB * RT * RH * RD;
    memcpy(c->work, c->x, n * sizeof(float));
    rope_forward(c->work, c->cos_t, c->sin_t, RB, RT, RH, RD);
    return dotd(c->work, c->R, n);
}

static void run_rope(float scale) {
    size_t n = (size_t)RB * RT * RH * RD;
    float inv[RD / 2];
    rope_inv_freq(inv, RD, 10000.0f, scale, 4);
    RopeCtx c;
    seed(41);
    c.x = randv(n, 1.0f);
    c.work = filled(n, 0.0f);
    c.R = randv(n, 1.0f);
    c.cos_t = filled(RT * RD / 2, 0.0f);
    c.sin_t = filled(RT * RD / 2, 0.0f);
    rope_tables(c.cos_t, c.sin_t, inv, RT, RD, 3);
    rope_loss(&c);
    /* the rotation preserves the norm of every head vector */
    for (size_t v = 0; v < n / RD; v++)
        assert_float_equal(dotd(c.work + v * RD, c.work + v * RD, RD),
                           dotd(c.x + v * RD, c.x + v * RD, RD), 1e-4);
    /* backward after forward is the identity */
    rope_backward(c.work, c.cos_t, c.sin_t, RB, RT, RH, RD);
    for (size_t i = 0; i < n; i++) assert_float_equal(c.work[i], c.x[i], 1e-5);
    /* dx = R^T dout; backward is in place, so prefill then add */
    float *dx = filled(n, 0.0f);
    memcpy(dx, c.R, n * sizeof(float));
    rope_backward(dx, c.cos_t, c.sin_t, RB, RT, RH, RD);
    for (size_t i = 0; i < n; i++) dx[i] += PREFILL;
    check_grad("rope dx", rope_loss, &c, c.x, n, dx);
    free(c.x);
    free(c.work);
    free(c.R);
    free(c.cos_t);
    free(c.sin_t);
    free(dx);
}
static void test_rope_grad(void **s) {
    (void)s;
    run_rope(1.0f);
    run_rope(4.0f);
}

static void test_rope_values(void **s) {
    (void)s;
    float inv[4], inv1[4], cs[3 * 4], sn[3 * 4];
    /* plain: base^(-2i/dh) */
    assert_float_equal(rope_inv_freq(inv, 8, 10000.0f, 1.0f, 64), 1.0f, 0);
    assert_float_equal(inv[0], 1.0f, 1e-7);
    assert_float_equal(inv[1], 0.1f, 1e-7);
    assert_float_equal(inv[3], 1e-3f, 1e-9);
    /* position 0 is the identity; position 1 rotates pair (x[i], x[i+4]) */
    rope_tables(cs, sn, inv, 3, 8, 0);
    float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[8];
    memcpy(y, x, sizeof x);
    rope_forward(y, cs, sn, 1, 1, 1, 8);
    for (int i = 0; i < 8; i++) assert_float_equal(y[i], x[i], 0);
    float x2[16];
    memcpy(x2, x, sizeof x);
    memcpy(x2 + 8, x, sizeof x);
    rope_forward(x2, cs, sn, 1, 2, 1, 8);
    /* t = 1, angle 1 on dim 0: out1 = 1 cos1 - 5 sin1, out2 = 5 cos1 + sin1 */
    assert_float_equal(x2[8], cos(1.0) - 5 * sin(1.0), 1e-6);
    assert_float_equal(x2[12], 5 * cos(1.0) + sin(1.0), 1e-6);
    /* pos0 offsets the positions */
    rope_tables(cs, sn, inv, 3, 8, 2);
    assert_float_equal(cs[0], cos(2.0), 1e-6);
    assert_float_equal(sn[1 * 4 + 1], sin(0.3), 1e-6);

    /* YaRN, orig_len 64: r = 64 inv / 2pi. dh = 8, base 10000 gives
     * r = 10.19 (ramp), 1.019 (ramp), 0.1019 and 0.0102 (< 1: divided). */
    float m = rope_inv_freq(inv1, 8, 10000.0f, 1.0f, 64);
    assert_float_equal(m, 1.0f, 0);
    for (int i = 0; i < 4; i++) assert_float_equal(inv1[i], inv[i], 0);
    m = rope_inv_freq(inv, 8, 10000.0f, 4.0f, 64);
    assert_float_equal(m, 0.1f * logf(4.0f) + 1.0f, 1e-6);
    double r0 = 64.0 / (2 * M_PI), g0 = (r0 - 1) / 31;
    assert_float_equal(inv[0], (1 - g0) * 0.25 + g0, 1e-6);
    assert_float_equal(inv[2], 0.01f / 4.0f, 1e-9);
    assert_float_equal(inv[3], 1e-3f / 4.0f, 1e-10);
    /* orig_len 4096: dim 0 has r = 652 > 32, unchanged; dim 3 r = 0.65 */
    rope_inv_freq(inv, 8, 10000.0f, 4.0f, 4096);
    assert_float_equal(inv[0], 1.0f, 1e-7);
    assert_float_equal(inv[3], 1e-3f / 4.0f, 1e-10);
    /* scale <= 1 leaves everything plain */
    rope_inv_freq(inv, 8, 10000.0f, 0.5f, 64);
    for (int i = 0; i < 4; i++) assert_float_equal(inv[i], inv1[i], 0);
}

/* ---- elementwise activations ---- */

typedef struct {
    int kind; /* 0..3 gate acts, 4 swiglu, 5 gelu, 6 silu, 7 2sigmoid, 8 softplus */
    size_t n;
    float *a, *b, *out, *R;
} ActCtx;

/* The gate activation of test kind k (a gate act when k < 4 or k > 6). */
static GateAct kind_act(int k) {
    return k == 7 ? ACT_2SIGMOID : k == 8 ? ACT_SOFTPLUS : (GateAct)k;
}
static int kind_is_gate(int k) { return k < 4 || k > 6; }

static double act_loss(void *p) {
    ActCtx *c = p;
    if (kind_is_gate(c->kind)) gate_act_forward(c->out, c->a, c->n, kind_act(c->kind));
    else if (c->kind == 4) swiglu_forward(c->out, c->a, c->b, c->n);
    else if (c->kind == 5) gelu_forward(c->out, c->a, c->n);
    else silu_forward(c->out, c->a, c->n);
    return dotd(c->out, c->R, c->n);
}

/* Every gate activation of the table (GateAct, config.h), whatever its
 * name: its backward is the central difference of its forward at points
 * across the range, a bounded row (GATE_ACTS) keeps its scores in [0, 1],
 * and only ACT_IDENTITY is the identity (a case missing from op_act.c's
 * switches falls through to it). A new activation fails here until both
 * of its cases are written. */
static void test_gate_act_table(void **state) {
    (void)state;
    const float xs[] = {-40.0f, -3.0f, -0.7f, 0.0f, 0.4f, 2.5f, 40.0f};
    const int n = (int)(sizeof xs / sizeof *xs);
    for (int k = 0; k < GATE_ACT_COUNT; k++) {
        float y[8], dx[8] = {0}, ones[8], moved = 0.0f;
        for (int i = 0; i < n; i++) ones[i] = 1.0f;
        gate_act_forward(y, xs, (size_t)n, (GateAct)k);
        gate_act_backward(dx, ones, xs, (size_t)n, (GateAct)k);
        for (int i = 0; i < n; i++) {
            const double h = 1e-2;
            float lo = (float)(xs[i] - h), hi = (float)(xs[i] + h), ylo, yhi;
            gate_act_forward(&ylo, &lo, 1, (GateAct)k);
            gate_act_forward(&yhi, &hi, 1, (GateAct)k);
            double fd = ((double)yhi - ylo) / (2 * h);
            if (fabs(fd - dx[i]) > 1e-2 * (1.0 + fabs(fd)))
                fail_msg("%s at %g: backward %g, central difference %g", GATE_ACTS[k].name,
                         (double)xs[i], (double)dx[i], fd);
            if (GATE_ACTS[k].bounded && !(y[i] >= 0.0f && y[i] <= 1.0f))
                fail_msg("%s at %g: %g outside [0, 1]", GATE_ACTS[k].name, (double)xs[i],
                         (double)y[i]);
            moved = fmaxf(moved, fabsf(y[i] - xs[i]));
        }
        if ((k == ACT_IDENTITY) != (moved == 0.0f))
            fail_msg("%s: %s the identity", GATE_ACTS[k].name, k == ACT_IDENTITY ? "is not" : "is");
    }
}

static void test_activations(void **st) {
    (void)st;
    for (int kind = 0; kind < 9; kind++) {
        ActCtx c = {.kind = kind, .n = 12};
        seed(60 + kind);
        c.a = randv(12, 2.0f);
        c.b = randv(12, 1.0f);
        c.out = filled(12, 0.0f);
        c.R = randv(12, 1.0f);
        /* SwiGLU and GELU write their gradients (op_act.c): start them at a
         * value that would show through if they added, then shift by PREFILL
         * as check_grad expects */
        int writes = kind == 4 || kind == 5;
        float *da = filled(12, writes ? 1e6f : PREFILL), *db = filled(12, writes ? 1e6f : PREFILL);
        if (kind_is_gate(kind)) gate_act_backward(da, c.R, c.a, 12, kind_act(kind));
        else if (kind == 4) swiglu_backward(da, db, NULL, c.R, c.a, c.b, 12);
        else if (kind == 5) gelu_backward(da, c.R, c.a, 12);
        else silu_backward(da, c.R, c.a, 12);
        for (int i = 0; writes && i < 12; i++) da[i] += PREFILL, db[i] += PREFILL;
        char name[32];
        snprintf(name, sizeof name, "act %d da", kind);
        check_grad(name, act_loss, &c, c.a, 12, da);
        if (kind == 4) check_grad("swiglu db", act_loss, &c, c.b, 12, db);
        free(c.a);
        free(c.b);
        free(c.out);
        free(c.R);
        free(da);
        free(db);
    }
    /* values */
    float x[3] = {0.0f, 1.0f, -2.0f}, y[3], b3[3] = {2.0f, 3.0f, 1.0f};
    gate_act_forward(y, x, 3, ACT_SIGMOID);
    assert_float_equal(y[0], 0.5, 1e-7);
    assert_float_equal(y[1], 0.7310585786, 1e-6);
    gate_act_forward(y, x, 3, ACT_NS_SIGMOID);
    assert_float_equal(y[0], 0.75, 1e-7);
    assert_float_equal(y[2], 0.5 + 0.5 / (1 + exp(2.0)), 1e-6);
    gate_act_forward(y, x, 3, ACT_SILU);
    assert_float_equal(y[1], 0.7310585786, 1e-6);
    assert_float_equal(y[2], -2.0 / (1 + exp(2.0)), 1e-6);
    gate_act_forward(y, x, 3, ACT_IDENTITY);
    assert_float_equal(y[2], -2.0, 0);
    gate_act_forward(y, x, 3, ACT_2SIGMOID); /* 1 at 0: the identity gate */
    assert_float_equal(y[0], 1.0, 1e-7);
    assert_float_equal(y[2], 2.0 / (1 + exp(2.0)), 1e-6);
    gate_act_forward(y, x, 3, ACT_SOFTPLUS);
    assert_float_equal(y[0], log(2.0), 1e-6);
    assert_float_equal(y[1], log1p(exp(1.0)), 1e-6);
    assert_float_equal(y[2], log1p(exp(-2.0)), 1e-6);
    const float big[2] = {60.0f, -60.0f}; /* no overflow either way */
    gate_act_forward(y, big, 2, ACT_SOFTPLUS);
    assert_float_equal(y[0], 60.0, 1e-5);
    assert_true(y[1] >= 0.0f && y[1] < 1e-20f);
    gelu_forward(y, x, 3);
    assert_float_equal(y[0], 0.0, 0);
    assert_float_equal(y[1], 0.8411919906, 1e-6); /* torch gelu(1, 'tanh') */
    assert_float_equal(y[2], -0.0454023, 1e-6);
    swiglu_forward(y, x, b3, 3);
    assert_float_equal(y[1], 3 * 0.7310585786, 1e-6);
    residual_forward(y, x, b3, 3);
    assert_float_equal(y[2], -1.0, 0);
}

/* ---- gates ---- */

typedef struct {
    GateBroadcast kind;
    GateForm form;
    int M, G, Cg;
    float *x, *s, *out, *R;
} GateCtx;

static double gate_loss(void *p) {
    GateCtx *c = p;
    gate_apply_forward(c->out, c->x, c->s, c->kind, c->form, c->M, c->G, c->Cg);
    return dotd(c->out, c->R, (size_t)c->M * c->G * c->Cg);
}

static size_t score_count(GateBroadcast kind, int M, int G, int Cg) {
    switch (kind) {
    case GB_HEAD: return (size_t)M * G;
    case GB_SHARED: return (size_t)M * Cg;
    case GB_CONST: return (size_t)G * Cg;
    default: return (size_t)M * G * Cg;
    }
}

static void run_gate(GateBroadcast kind, GateForm form) {
    GateCtx c = {.kind = kind, .form = form, .M = 3, .G = 2, .Cg = 4};
    size_t n = 24, ns = score_count(kind, 3, 2, 4);
    seed(70 + kind * 2 + form);
    c.x = randv(n, 1.0f);
    c.s = randv(ns, 1.0f);
    c.out = filled(n, 0.0f);
    c.R = randv(n, 1.0f);
    gate_loss(&c);
    /* element (m=2, g=1, c=3) by hand */
    size_t si = kind == GB_HEAD     ? 2 * 2 + 1
                : kind == GB_SHARED ? 2 * 4 + 3
                : kind == GB_CONST  ? 1 * 4 + 3
                                    : 23;
    float e = form == FORM_ADD ? c.x[23] + c.s[si] : c.x[23] * c.s[si];
    assert_float_equal(c.out[23], e, 1e-6);
    /* dx is written (a start of 1e6 would show through), ds added to */
    float *dx = filled(n, 1e6f), *ds = filled(ns, PREFILL);
    gate_apply_backward(dx, ds, c.R, c.x, c.s, kind, form, 3, 2, 4);
    for (size_t i = 0; i < n; i++) dx[i] += PREFILL;
    check_grad("gate dx", gate_loss, &c, c.x, n, dx);
    check_grad("gate ds", gate_loss, &c, c.s, ns, ds);
    free(c.x);
    free(c.s);
    free(c.out);
    free(c.R);
    free(dx);
    free(ds);
}

static void test_gate_apply(void **st) {
    (void)st;
    run_gate(GB_ELEM, FORM_MULT);
    run_gate(GB_ELEM, FORM_ADD);
    run_gate(GB_HEAD, FORM_MULT);
    run_gate(GB_SHARED, FORM_MULT);
    run_gate(GB_CONST, FORM_MULT);
}

typedef struct {
    int M, G, Cg, H, S, mode; /* mode 0 group mean, 1 headslice, 2 prefix (D = G, K = S,
                                 C = H) */
    float *x, *w, *b, *out, *R;
} MiscCtx;

static double misc_loss(void *p) {
    MiscCtx *c = p;
    size_t n;
    if (c->mode == 0) {
        group_mean_forward(c->out, c->x, c->M, c->G, c->Cg);
        n = (size_t)c->M * c->Cg;
    } else if (c->mode == 1) {
        headslice_linear_forward(c->out, c->x, c->w, c->b, c->M, c->H, c->S);
        n = (size_t)c->M * c->H;
    } else {
        prefix_linear_forward(c->out, c->x, c->w, c->M, c->G, c->S, c->H);
        n = (size_t)c->M * c->H;
    }
    return dotd(c->out, c->R, n);
}

static void test_group_mean(void **st) {
    (void)st;
    MiscCtx c = {.M = 3, .G = 4, .Cg = 5, .mode = 0};
    seed(80);
    c.x = randv(60, 1.0f);
    c.out = filled(15, 0.0f);
    c.R = randv(15, 1.0f);
    misc_loss(&c);
    double m = 0.0;
    for (int g = 0; g < 4; g++) m += c.x[(1 * 4 + g) * 5 + 2];
    assert_float_equal(c.out[1 * 5 + 2], m / 4.0, 1e-6);
    float *dx = filled(60, PREFILL);
    group_mean_backward(dx, c.R, 3, 4, 5);
    check_grad("group_mean dx", misc_loss, &c, c.x, 60, dx);
    free(c.x);
    free(c.out);
    free(c.R);
    free(dx);
}

static void test_headslice_linear(void **st) {
    (void)st;
    MiscCtx c = {.M = 3, .H = 4, .S = 3, .mode = 1};
    seed(81);
    c.x = randv(36, 1.0f);
    c.w = randv(12, 1.0f);
    c.b = randv(4, 1.0f);
    c.out = filled(12, 0.0f);
    c.R = randv(12, 1.0f);
    misc_loss(&c);
    /* z[2, 1] reads x[2, 3:6] only */
    assert_float_equal(c.out[2 * 4 + 1], dotd(c.x + 2 * 12 + 3, c.w + 3, 3) + c.b[1], 1e-6);
    float *dx = filled(36, PREFILL), *dw = filled(12, PREFILL), *db = filled(4, PREFILL);
    headslice_linear_backward(dx, dw, db, c.R, c.x, c.w, 3, 4, 3);
    check_grad("headslice dx", misc_loss, &c, c.x, 36, dx);
    check_grad("headslice dw", misc_loss, &c, c.w, 12, dw);
    check_grad("headslice db", misc_loss, &c, c.b, 4, db);
    free(c.x);
    free(c.w);
    free(c.b);
    free(c.out);
    free(c.R);
    free(dx);
    free(dw);
    free(db);
}

/* The narrow-input gate's linear: x rows of D = 5, the first K = 3 read,
 * C = 2 outputs; the unread columns get no gradient. */
static void test_prefix_linear(void **st) {
    (void)st;
    MiscCtx c = {.M = 3, .G = 5, .S = 3, .H = 2, .mode = 2};
    seed(82);
    c.x = randv(15, 1.0f);
    c.w = randv(6, 1.0f);
    c.out = filled(6, 0.0f);
    c.R = randv(6, 1.0f);
    misc_loss(&c);
    assert_float_equal(c.out[2 * 2 + 1], dotd(c.x + 2 * 5, c.w + 3, 3), 1e-6);
    float *dx = filled(15, PREFILL), *dw = filled(6, PREFILL);
    prefix_linear_backward(dx, dw, c.R, c.x, c.w, 3, 5, 3, 2);
    check_grad("prefix dx", misc_loss, &c, c.x, 15, dx);
    check_grad("prefix dw", misc_loss, &c, c.w, 6, dw);
    for (int m = 0; m < 3; m++) assert_float_equal(dx[m * 5 + 4], PREFILL, 0);
    free(c.x);
    free(c.w);
    free(c.out);
    free(c.R);
    free(dx);
    free(dw);
}

/* ---- loss ---- */

typedef struct {
    int N, V;
    const int *tg;
    float *logits, *probs, *losses;
} CeCtx;

static double ce_loss(void *p) {
    CeCtx *c = p;
    int cnt = 0;
    return crossentropy_forward(c->probs, c->losses, c->logits, c->tg, c->N, c->V, &cnt);
}

static void test_crossentropy(void **st) {
    (void)st;
    const int tg[4] = {2, -1, 0, 4};
    CeCtx c = {.N = 4, .V = 5, .tg = tg};
    seed(90);
    c.logits = randv(20, 2.0f);
    c.probs = filled(20, 0.0f);
    c.losses = filled(4, -1.0f);
    int cnt = 0;
    float L = crossentropy_forward(c.probs, c.losses, c.logits, tg, 4, 5, &cnt);
    assert_int_equal(cnt, 3);
    assert_float_equal(c.losses[1], 0.0, 0);
    double lse = 0.0;
    for (int i = 0; i < 5; i++) lse += exp(c.logits[i]);
    assert_float_equal(c.losses[0], log(lse) - c.logits[2], 1e-5);
    assert_float_equal(L, (c.losses[0] + c.losses[2] + c.losses[3]) / 3.0, 1e-6);
    float *d = filled(20, 1e30f); /* written over garbage, uncounted rows zero */
    crossentropy_backward(d, c.probs, tg, 4, 5, cnt);
    for (int i = 0; i < 5; i++) assert_float_equal(d[5 + i], 0.0, 0);
    for (int i = 0; i < 20; i++) d[i] += PREFILL;
    check_grad("ce dlogits", ce_loss, &c, c.logits, 20, d);
    /* uniform logits: ln V */
    float z[2 * 7] = {0};
    for (int i = 7; i < 14; i++) z[i] = 3.0f;
    float pr[14], ls[2];
    const int t2[2] = {6, 0};
    L = crossentropy_forward(pr, ls, z, t2, 2, 7, &cnt);
    assert_float_equal(L, log(7.0), 1e-6);
    assert_float_equal(pr[3], 1.0 / 7.0, 1e-7);
    /* nothing counted: mean 0 and no gradient */
    const int t3[2] = {-1, -5};
    L = crossentropy_forward(pr, ls, z, t3, 2, 7, &cnt);
    assert_int_equal(cnt, 0);
    assert_float_equal(L, 0.0, 0);
    free(c.logits);
    free(c.probs);
    free(c.losses);
    free(d);
}

/* The vectorisable exp behind softmax: a few ulp from libm's over the
 * whole range softmax feeds it, and exact at 0. */
static void test_fast_expf(void **state) {
    (void)state;
    double worst = 0;
    for (int i = -870000; i <= 880000; i += 7) {
        float x = (float)i * 1e-4f;
        double want = exp((double)x), got = fast_expf(x);
        double rel = fabs(got - want) / want;
        if (rel > worst) worst = rel;
    }
    assert_true(worst < 1e-6);
    assert_true(fast_expf(0.0f) == 1.0f);
    assert_true(fast_expf(-1000.0f) > 0.0f && fast_expf(-1000.0f) < 1e-37f);
}

/* fpmode: flushing turns a subnormal result into 0 and back to IEEE
 * gradual underflow gives it again; the mode's name follows. */
static void test_fpmode(void **st) {
    (void)st;
    volatile float tiny = 1e-38f, scale = 0.01f, r;
    fp_flush_subnormals(1);
    if (!strcmp(fp_mode_name(), "ieee")) skip(); /* no such mode on this CPU */
    r = tiny * scale;
    assert_true(r == 0.0f);
    assert_string_equal(fp_mode_name(), "ftz+daz");
    fp_flush_subnormals(0);
    r = tiny * scale;
    assert_true(r > 0.0f && r < 1.2e-38f);
    assert_string_equal(fp_mode_name(), "ieee");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_embed),
        cmocka_unit_test(test_matmul),
        cmocka_unit_test(test_rmsnorm),
        cmocka_unit_test(test_layernorm),
        cmocka_unit_test(test_rope_grad),
        cmocka_unit_test(test_rope_values),
        cmocka_unit_test(test_activations),
        cmocka_unit_test(test_gate_act_table),
        cmocka_unit_test(test_gate_apply),
        cmocka_unit_test(test_group_mean),
        cmocka_unit_test(test_headslice_linear),
        cmocka_unit_test(test_prefix_linear),
        cmocka_unit_test(test_crossentropy),
        cmocka_unit_test(test_fast_expf),
        cmocka_unit_test(test_fpmode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
