/* test_ops.c: every op in ops.h, checked two ways.
 *
 * Gradients: for a scalar objective L = sum(out * R) with a fixed random R,
 * the backward's gradient of every input is compared with central finite
 * differences of the float forward (eps 1e-3, L summed in double). Gradient
 * buffers are pre-filled with a constant, so the check also proves that
 * backward accumulates rather than overwrites.
 *
 * Values: hand-computed numbers for the normalisers, RoPE/YaRN, the loss.
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

#include "fastexp.h"
#include "fpmode.h"
#include "ops.h"

#define FD_EPS 1e-3f
#define FD_RTOL 1e-2
#define FD_ATOL 2e-3
#define PREFILL 0.25f /* gradients start here: backward must add to it */

/* ---- small helpers ---- */

static uint64_t lcg_state;
static void seed(uint64_t s) { lcg_state = s * 2654435761ULL + 1; }
static double unif(void) {
    lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(lcg_state >> 11) * 0x1.0p-53;
}
/* roughly normal (sum of uniforms), enough for test data */
static float rnd(void) {
    double s = 0.0;
    for (int i = 0; i < 4; i++) s += unif();
    return (float)((s - 2.0) * 1.7320508);
}
static float *randv(size_t n, float sd) {
    float *p = malloc(n * sizeof(float));
    assert_non_null(p);
    for (size_t i = 0; i < n; i++) p[i] = sd * rnd();
    return p;
}
static float *filled(size_t n, float v) {
    float *p = malloc((n ? n : 1) * sizeof(float));
    assert_non_null(p);
    for (size_t i = 0; i < n; i++) p[i] = v;
    return p;
}
static double dotd(const float *a, const float *b, size_t n) {
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += (double)a[i] * (double)b[i];
    return s;
}

typedef double (*LossFn)(void *ctx);

/* Compare ana[i] - PREFILL with central differences of f in x[i]. */
static void check_grad(const char *what, LossFn f, void *ctx, float *x, size_t n,
                       const float *ana) {
    int bad = 0;
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        float x0 = x[i];
        x[i] = x0 + FD_EPS;
        double lp = f(ctx);
        x[i] = x0 - FD_EPS;
        double lm = f(ctx);
        x[i] = x0;
        /* divide by the perturbation actually applied in float */
        double h = (double)(x0 + FD_EPS) - (double)(x0 - FD_EPS);
        double num = (lp - lm) / h;
        double a = (double)ana[i] - PREFILL;
        double err = fabs(num - a);
        double tol = FD_ATOL + FD_RTOL * fabs(num);
        if (err / tol > worst) worst = err / tol;
        if (!(err <= tol)) {
            if (bad < 5) print_error("%s[%zu]: numeric %.6g analytic %.6g\n", what, i, num, a);
            bad++;
        }
    }
    if (bad) print_error("%s: %d of %zu wrong (worst err/tol %.3g)\n", what, bad, n, worst);
    assert_int_equal(bad, 0);
}

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
    check_grad("norm dx", norm_loss, &c, c.x, 18, dx);
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

/* ---- attention ---- */

typedef struct {
    AttnSpec spec;
    int B, T, H, Hkv, dh;
    float *q, *k, *v, *sink, *kvk, *kvv;
    float *y, *att, *slot, *preatt, *R;
} AttnCtx;

static AttnIn attn_in(const AttnCtx *c) {
    return (AttnIn){c->q, c->k, c->v, 0, 0, c->sink, c->kvk, c->kvv};
}

static AttnShape attn_shape(const AttnCtx *c) {
    return (AttnShape){c->B, c->T, c->H, c->Hkv, c->dh};
}

static double attn_loss(void *p) {
    AttnCtx *c = p;
    AttnIn in = attn_in(c);
    AttnShape sh = attn_shape(c);
    attention_forward(&(AttnOut){c->y, c->att, c->slot, c->preatt}, &in, &c->spec, &sh);
    return dotd(c->y, c->R, (size_t)c->B * c->T * c->H * c->dh);
}

/* attention_backward of c's last forward into g (slot: the saved slot
 * weights, or NULL), with fresh scratch. */
static void attn_bwd(const AttnCtx *c, AttnGrad g, const float *slot, const AttnSpec *sp) {
    AttnIn in = attn_in(c);
    AttnShape sh = attn_shape(c);
    float *scratch = malloc(attention_backward_scratch(c->T) * sizeof(float));
    assert_non_null(scratch);
    attention_backward(&g, c->R, &(AttnSaved){c->att, slot, c->preatt}, &in, sp, &sh, scratch);
    free(scratch);
}

static void attn_alloc(AttnCtx *c, float sd) {
    size_t nq = (size_t)c->B * c->T * c->H * c->dh;
    size_t nk = (size_t)c->B * c->T * c->Hkv * c->dh;
    size_t na = (size_t)c->B * c->H * c->T * c->T;
    c->q = randv(nq, sd);
    c->k = randv(nk, sd);
    c->v = randv(nk, 1.0f);
    c->sink = randv((size_t)c->H, 1.0f);
    c->kvk = randv((size_t)c->H * c->dh, sd);
    c->kvv = randv((size_t)c->H * c->dh, 1.0f);
    c->y = filled(nq, 0.0f);
    c->att = filled(na, -1.0f);
    c->slot = filled((size_t)c->B * c->H * c->T, -1.0f);
    c->preatt = filled(na, 0.0f);
    c->R = randv(nq, 1.0f);
}

static void attn_free(AttnCtx *c) {
    free(c->q);
    free(c->k);
    free(c->v);
    free(c->sink);
    free(c->kvk);
    free(c->kvv);
    free(c->y);
    free(c->att);
    free(c->slot);
    free(c->preatt);
    free(c->R);
}

/* Softpick bends where a logit crosses 0 (relu and |.| of e^s - 1):
 * the smallest |logit| over visible scores, kv-bias and sink logits. */
static double softpick_margin(AttnCtx *c) {
    attn_loss(c);
    double worst = 1e30;
    for (int b = 0; b < c->B; b++)
        for (int h = 0; h < c->H; h++)
            for (int t = 0; t < c->T; t++) {
                size_t bh = (size_t)b * c->H + h;
                for (int j = 0; j <= t; j++)
                    worst = fmin(worst, fabs(c->preatt[(bh * c->T + t) * c->T + j]));
                const float *qt = c->q + (((size_t)b * c->T + t) * c->H + h) * c->dh;
                if (c->spec.has_kv_bias)
                    worst = fmin(worst, fabs(c->spec.scale *
                                             dotd(qt, c->kvk + (size_t)h * c->dh, (size_t)c->dh)));
            }
    if (c->spec.has_sink_logit)
        for (int h = 0; h < c->H; h++) worst = fmin(worst, fabs(c->sink[h]));
    return worst;
}

/* Smallest distance of a clipped-softmax pre-clip value from the clip
 * bounds 0 and 1, over every visible entry and the kv slot. The unclipped
 * softmax weights come from the softmax path (tested on its own). */
static double clip_margin(AttnCtx *c) {
    AttnCtx s = *c;
    size_t na = (size_t)c->B * c->H * c->T * c->T;
    s.spec.normaliser = NORMZ_SOFTMAX;
    s.att = filled(na, 0.0f);
    s.slot = filled((size_t)c->B * c->H * c->T, 0.0f);
    s.y = filled((size_t)c->B * c->T * c->H * c->dh, 0.0f);
    attn_loss(&s);
    double g = c->spec.clip_gamma, k = 1.0 - g, worst = 1.0;
    for (int bh = 0; bh < c->B * c->H; bh++)
        for (int t = 1; t < c->T; t++) {
            for (int j = 0; j <= t; j++) {
                double u = k * s.att[((size_t)bh * c->T + t) * c->T + j] + g;
                worst = fmin(worst, fmin(fabs(u), fabs(1.0 - u)));
            }
            if (c->spec.has_kv_bias) {
                double u = k * s.slot[(size_t)bh * c->T + t] + g;
                worst = fmin(worst, fmin(fabs(u), fabs(1.0 - u)));
            }
        }
    free(s.att);
    free(s.slot);
    free(s.y);
    return worst;
}

/* The window and ALiBi run_attention_shape's spec takes (0: none). */
static struct { int window, keep, alibi; } field;

static void run_attention_shape(AttnNormaliser nz, int sink, int kvb, int B, int T, int H, int Hkv,
                                int dh) {
    char name[96];
    AttnCtx c = {.B = B, .T = T, .H = H, .Hkv = Hkv, .dh = dh};
    c.spec.window = field.window, c.spec.keep = field.keep, c.spec.alibi = field.alibi;
    c.spec.normaliser = nz;
    c.spec.has_sink_logit = sink;
    c.spec.has_kv_bias = kvb;
    c.spec.clip_gamma = -0.1f;
    c.spec.softpick_eps = 1e-6f;
    c.spec.scale = 0.5f;
    /* clipped and softpick are not smooth everywhere: redraw until no
     * entry sits within 0.003 of a kink (an eps = 1e-3 step moves a clipped
     * weight by at most ~3e-4 and a logit by about 1e-3) */
    for (uint64_t sd = 1;; sd++) {
        seed(1000 * (uint64_t)nz + 100 * sink + 10 * kvb + Hkv + 7919 * sd);
        attn_alloc(&c, 1.0f);
        if (nz == NORMZ_CLIPPED    ? clip_margin(&c) > 0.003
            : nz == NORMZ_SOFTPICK ? softpick_margin(&c) > 0.003
                                   : 1)
            break;
        attn_free(&c);
        assert_true(sd < 200);
    }
    size_t nq = (size_t)c.B * c.T * c.H * c.dh;
    size_t nk = (size_t)c.B * c.T * c.Hkv * c.dh;
    size_t nx = (size_t)c.H * c.dh;
    attn_loss(&c);
    /* att is zero above the diagonal and finite */
    for (int bh = 0; bh < c.B * c.H; bh++)
        for (int t = 0; t < c.T; t++)
            for (int j = 0; j < c.T; j++) {
                float a = c.att[((size_t)bh * c.T + t) * c.T + j];
                if (j > t) assert_float_equal(a, 0.0f, 0);
                else assert_true(a >= 0.0f && a <= 1.0f);
            }
    if (nz == NORMZ_CLIPPED) { /* make sure some entries are not clipped */
        int inner = 0;
        for (size_t i = 0; i < (size_t)c.B * c.H * c.T * c.T; i++)
            inner += c.att[i] > 0.0f && c.att[i] < 1.0f;
        assert_true(inner > 10);
    }
    float *dq = filled(nq, PREFILL), *dk = filled(nk, PREFILL), *dv = filled(nk, PREFILL),
          *ds = filled((size_t)c.H, PREFILL), *dkk = filled(nx, PREFILL),
          *dkv = filled(nx, PREFILL);
    attn_bwd(&c, (AttnGrad){dq, dk, dv, ds, dkk, dkv}, c.slot, &c.spec);
    char tag[64];
    snprintf(tag, sizeof tag, "attn nz=%d sink=%d kvb=%d T=%d Hkv=%d W=%d K=%d alibi=%d", nz, sink,
             kvb, T, Hkv, field.window, field.keep, field.alibi);
#define ATTN_CHECK(what, x, n, g)                                                                  \
    do {                                                                                           \
        snprintf(name, sizeof name, "%s %s", tag, what);                                           \
        check_grad(name, attn_loss, &c, x, n, g);                                                  \
    } while (0)
    ATTN_CHECK("dq", c.q, nq, dq);
    ATTN_CHECK("dk", c.k, nk, dk);
    ATTN_CHECK("dv", c.v, nk, dv);
    if (sink || nz == NORMZ_SINK_LOGIT) ATTN_CHECK("dsink_logit", c.sink, (size_t)c.H, ds);
    else
        for (int i = 0; i < c.H; i++) assert_float_equal(ds[i], PREFILL, 0);
    if (kvb) {
        ATTN_CHECK("dkvb_k", c.kvk, nx, dkk);
        ATTN_CHECK("dkvb_v", c.kvv, nx, dkv);
    } else {
        for (size_t i = 0; i < nx; i++) assert_float_equal(dkk[i], PREFILL, 0);
    }
#undef ATTN_CHECK
    /* backward without the slot buffer recomputes the slot weights */
    if ((sink || kvb) && nz == NORMZ_SOFTMAX) {
        float *dq2 = filled(nq, PREFILL);
        attn_loss(&c); /* the checks above left att from a perturbed input */
        attn_bwd(&c, (AttnGrad){dq2, NULL, NULL, NULL, NULL, NULL}, NULL, &c.spec);
        for (size_t i = 0; i < nq; i++)
            assert_float_equal(dq2[i], dq[i], 2e-5 * fmax(1.0, fabs(dq[i])));
        free(dq2);
    }
    free(dq);
    free(dk);
    free(dv);
    free(ds);
    free(dkk);
    free(dkv);
    attn_free(&c);
}

static void run_attention(AttnNormaliser nz, int sink, int kvb, int Hkv) {
    run_attention_shape(nz, sink, kvb, 2, 6, 4, Hkv, 4);
}

static void test_attention_grad(void **s) {
    (void)s;
    const AttnNormaliser all[] = {NORMZ_SOFTMAX, NORMZ_SOFTMAX1, NORMZ_SINK_LOGIT,
                                  NORMZ_CLIPPED, NORMZ_SIGMOID,  NORMZ_SOFTPICK};
    for (int i = 0; i < 6; i++)
        for (int hkv = 2; hkv <= 4; hkv += 2) {
            run_attention(all[i], 0, 0, hkv); /* the normaliser alone */
            run_attention(all[i], 0, 1, hkv); /* + kv-bias slot */
            run_attention(all[i], 1, 0, hkv); /* + sink-logit slot */
        }
    /* stick-breaking (no extra keys): alone, and over two row blocks */
    run_attention(NORMZ_STICKBREAK, 0, 0, 2);
    run_attention(NORMZ_STICKBREAK, 0, 0, 4);
    run_attention_shape(NORMZ_STICKBREAK, 0, 0, 1, 70, 2, 1, 2);
    /* both slots at once, where the sink weight is the leftover mass */
    run_attention(NORMZ_SOFTMAX, 1, 1, 2);
    run_attention(NORMZ_SOFTMAX1, 1, 1, 2);
    /* T = 70 spans two row blocks of the causal sgemm tiling */
    run_attention_shape(NORMZ_SOFTMAX, 0, 1, 1, 70, 2, 1, 2);
    run_attention_shape(NORMZ_SIGMOID, 0, 0, 1, 70, 2, 1, 2);
}

/* One head, dh = 1, scale 1: s[t,j] = q_t k_j exactly. */
static void attn1(AttnCtx *c, AttnNormaliser nz, const float *q, const float *k, const float *v,
                  int T) {
    memset(c, 0, sizeof *c);
    c->B = 1;
    c->T = T;
    c->H = 1;
    c->Hkv = 1;
    c->dh = 1;
    c->spec.normaliser = nz;
    c->spec.scale = 1.0f;
    c->spec.softpick_eps = 1e-6f;
    c->q = (float *)q;
    c->k = (float *)k;
    c->v = (float *)v;
    c->y = filled((size_t)T, 0.0f);
    c->att = filled((size_t)T * T, -1.0f);
    c->slot = filled((size_t)T, -1.0f);
    c->preatt = filled((size_t)T * T, 0.0f);
    c->R = filled((size_t)T, 1.0f);
}
static void attn1_free(AttnCtx *c) {
    free(c->y);
    free(c->att);
    free(c->slot);
    free(c->preatt);
    free(c->R);
}

static void test_attention_values(void **st) {
    (void)st;
    const float q[3] = {1, 1, 1}, k[3] = {0.5f, -1, 2}, v[3] = {1, 2, 3};
    double e0 = exp(0.5), e1 = exp(-1.0), e2 = exp(2.0), Z = e0 + e1 + e2;
    AttnCtx c;

    /* softmax: rows sum to 1 */
    attn1(&c, NORMZ_SOFTMAX, q, k, v, 3);
    attn_loss(&c);
    assert_float_equal(c.att[0], 1.0, 1e-6);
    assert_float_equal(c.att[6 + 2], e2 / Z, 1e-6);
    assert_float_equal(c.y[2], (e0 * 1 + e1 * 2 + e2 * 3) / Z, 1e-5);
    attn1_free(&c);

    /* softmax1: e^s / (1 + sum e^s), row sums below 1; slot = null weight */
    attn1(&c, NORMZ_SOFTMAX1, q, k, v, 3);
    attn_loss(&c);
    double rs = 0.0;
    for (int j = 0; j < 3; j++) {
        double e = exp(k[j]);
        assert_float_equal(c.att[6 + j], e / (1.0 + Z), 1e-6);
        rs += c.att[6 + j];
    }
    assert_true(rs < 1.0);
    assert_float_equal(rs, Z / (1.0 + Z), 1e-6);
    assert_float_equal(c.att[0], e0 / (1.0 + e0), 1e-6);
    assert_float_equal(c.slot[2], 1.0 / (1.0 + Z), 1e-6);
    attn1_free(&c);

    /* sink-logit: slot weight e^b / (e^b + sum e^s), adds no value */
    float b = 0.7f;
    attn1(&c, NORMZ_SINK_LOGIT, q, k, v, 3);
    c.sink = &b;
    attn_loss(&c);
    assert_float_equal(c.slot[2], exp(0.7) / (exp(0.7) + Z), 1e-6);
    assert_float_equal(c.att[6 + 1], e1 / (exp(0.7) + Z), 1e-6);
    assert_float_equal(c.y[2], (e0 + 2 * e1 + 3 * e2) / (exp(0.7) + Z), 1e-5);
    attn1_free(&c);

    /* kv-bias: extra key k' = 1.5 (score q k'), value v' = -4 */
    float kk = 1.5f, vv = -4.0f;
    attn1(&c, NORMZ_SOFTMAX, q, k, v, 3);
    c.spec.has_kv_bias = 1;
    c.kvk = &kk;
    c.kvv = &vv;
    attn_loss(&c);
    double ex = exp(1.5);
    assert_float_equal(c.slot[2], ex / (ex + Z), 1e-6);
    assert_float_equal(c.y[2], (e0 + 2 * e1 + 3 * e2 - 4 * ex) / (ex + Z), 1e-5);
    assert_float_equal(c.y[0], (e0 * 1 - 4 * ex) / (ex + e0), 1e-5);
    attn1_free(&c);

    /* sigmoid: sigma(s - ln T), T = 3 */
    attn1(&c, NORMZ_SIGMOID, q, k, v, 3);
    attn_loss(&c);
    for (int j = 0; j < 3; j++)
        assert_float_equal(c.att[6 + j], 1.0 / (1.0 + exp(-(k[j] - log(3.0)))), 1e-6);
    attn1_free(&c);

    /* softpick: relu(e^s - 1) / (sum |e^s - 1| + eps); s = -1 gets 0 */
    attn1(&c, NORMZ_SOFTPICK, q, k, v, 3);
    attn_loss(&c);
    double D = fabs(e0 - 1) + fabs(e1 - 1) + fabs(e2 - 1) + 1e-6;
    assert_float_equal(c.att[6 + 0], (e0 - 1) / D, 1e-6);
    assert_float_equal(c.att[6 + 1], 0.0, 0);
    assert_float_equal(c.att[6 + 2], (e2 - 1) / D, 1e-6);
    attn1_free(&c);

    /* clipped: clip(1.2 p - 0.2, 0, 1); row 2: p = (0.18, 0.04, 0.79) */
    attn1(&c, NORMZ_CLIPPED, q, k, v, 3);
    c.spec.clip_gamma = -0.2f;
    attn_loss(&c);
    assert_float_equal(c.att[6 + 0], 1.2 * e0 / Z - 0.2, 1e-6);
    assert_float_equal(c.att[6 + 1], 0.0, 0);
    assert_float_equal(c.att[6 + 2], 1.2 * e2 / Z - 0.2, 1e-6);
    assert_float_equal(c.att[0], 1.0, 0); /* row 0: p = 1 stays 1 */
    attn1_free(&c);

    /* uniform scores (q = 0): a[t,j] = 1/(t+1), y_t = mean of v_0..v_t,
     * across heads with GQA; T = 70 spans two row blocks. */
    AttnCtx u = {.B = 2, .T = 70, .H = 4, .Hkv = 2, .dh = 3};
    u.spec.normaliser = NORMZ_SOFTMAX;
    u.spec.scale = 0.577f;
    seed(5);
    attn_alloc(&u, 1.0f);
    memset(u.q, 0, (size_t)u.B * u.T * u.H * u.dh * sizeof(float));
    attn_loss(&u);
    for (int bb = 0; bb < u.B; bb++)
        for (int h = 0; h < u.H; h++)
            for (int t = 0; t < u.T; t += 13) {
                const float *ar = u.att + (((size_t)bb * u.H + h) * u.T + t) * u.T;
                for (int j = 0; j < u.T; j++)
                    assert_float_equal(ar[j], j <= t ? 1.0 / (t + 1) : 0.0, 1e-6);
                for (int i = 0; i < u.dh; i++) {
                    double m = 0.0;
                    for (int j = 0; j <= t; j++)
                        m += u.v[(((size_t)bb * u.T + j) * u.Hkv + h / 2) * u.dh + i];
                    assert_float_equal(u.y[(((size_t)bb * u.T + t) * u.H + h) * u.dh + i],
                                       m / (t + 1), 1e-5);
                }
            }
    attn_free(&u);
}

/* Long rows (two blocks) agree with a direct double computation. */
static void test_attention_blocks(void **st) {
    (void)st;
    AttnCtx c = {.B = 1, .T = 131, .H = 2, .Hkv = 1, .dh = 8};
    c.spec.normaliser = NORMZ_SOFTMAX;
    c.spec.scale = 0.35f;
    seed(77);
    attn_alloc(&c, 1.0f);
    attn_loss(&c);
    for (int h = 0; h < 2; h++)
        for (int t = 0; t < c.T; t += 10) {
            double sc[131], mx = -1e30, Z = 0.0;
            for (int j = 0; j <= t; j++) {
                sc[j] = 0.35 * dotd(c.q + ((size_t)t * 2 + h) * 8, c.k + (size_t)j * 8, 8);
                mx = fmax(mx, sc[j]);
            }
            for (int j = 0; j <= t; j++) Z += exp(sc[j] - mx);
            for (int i = 0; i < 8; i++) {
                double yv = 0.0;
                for (int j = 0; j <= t; j++) yv += exp(sc[j] - mx) / Z * c.v[(size_t)j * 8 + i];
                assert_float_equal(c.y[((size_t)t * 2 + h) * 8 + i], yv, 1e-4);
            }
        }
    attn_free(&c);
}

/* The streaming window: row t is the softmax over keys j < keep and
 * t - j < window - keep only (from the definition, in double), across row
 * blocks; then attention_keep on two threads gives the same y, first
 * column and leading rows as attention_forward. */
static void test_attention_window(void **st) {
    (void)st;
    enum { T = 131, W = 20, K = 3, M = 9 };
    AttnCtx c = {.B = 1, .T = T, .H = 2, .Hkv = 1, .dh = 8};
    c.spec.normaliser = NORMZ_SOFTMAX;
    c.spec.scale = 0.35f;
    c.spec.window = W, c.spec.keep = K;
    seed(78);
    attn_alloc(&c, 1.0f);
    attn_loss(&c);
    for (int h = 0; h < 2; h++)
        for (int t = 0; t < T; t++) {
            double sc[T], mx = -1e30, Z = 0.0;
            int vis[T];
            for (int j = 0; j <= t; j++) {
                vis[j] = j < K || t - j < W - K || t < W;
                sc[j] = 0.35 * dotd(c.q + ((size_t)t * 2 + h) * 8, c.k + (size_t)j * 8, 8);
                if (vis[j]) mx = fmax(mx, sc[j]);
            }
            for (int j = 0; j <= t; j++) Z += vis[j] ? exp(sc[j] - mx) : 0.0;
            for (int j = 0; j < T; j++) {
                double want = j <= t && vis[j] ? exp(sc[j] - mx) / Z : 0.0;
                assert_float_equal(c.att[((size_t)h * T + t) * T + j], want, 1e-5);
            }
        }
    float *y = filled((size_t)T * 16, 0.0f), *col = filled(2 * T, 0.0f);
    float *maps = filled(2 * M * M, 0.0f);
    float *scratch = filled(attention_keep_scratch(T, 2), 0.0f);
    AttnIn in = attn_in(&c);
    AttnShape sh = attn_shape(&c);
    attention_keep(&(AttnKeep){y, col, maps, NULL, M, 2, scratch}, &in, &c.spec, &sh);
    for (size_t i = 0; i < (size_t)T * 16; i++) assert_float_equal(y[i], c.y[i], 1e-6);
    for (int h = 0; h < 2; h++)
        for (int t = 0; t < T; t++) {
            const float *row = c.att + ((size_t)h * T + t) * T;
            assert_float_equal(col[h * T + t], row[0], 1e-7);
            for (int j = 0; t < M && j < M; j++)
                assert_float_equal(maps[((size_t)h * M + t) * M + j], row[j], 1e-7);
        }
    free(y), free(col), free(maps), free(scratch);
    attn_free(&c);
}

/* The backward under a sliding window (keep 0), the streaming window
 * (keep > 0) and ALiBi, against central differences, for every
 * normaliser and slot, within one row block and across two. */
static void test_attention_window_grad(void **st) {
    (void)st;
    const AttnNormaliser all[] = {NORMZ_SOFTMAX, NORMZ_SOFTMAX1, NORMZ_SINK_LOGIT, NORMZ_CLIPPED,
                                  NORMZ_SIGMOID, NORMZ_SOFTPICK, NORMZ_STICKBREAK};
    const int set[][3] = {{3, 0, 0}, {4, 2, 0}, {0, 0, 1}, {3, 0, 1}};
    for (size_t f = 0; f < sizeof set / sizeof *set; f++) {
        field.window = set[f][0], field.keep = set[f][1], field.alibi = set[f][2];
        for (int i = 0; i < 7; i++) {
            run_attention(all[i], 0, 0, 2);
            if (all[i] != NORMZ_STICKBREAK) run_attention(all[i], 0, 1, 2);
        }
        run_attention(NORMZ_SOFTMAX, 1, 1, 2);
        run_attention_shape(NORMZ_SOFTMAX, 0, 0, 1, 70, 2, 1, 2);
        run_attention_shape(NORMZ_SIGMOID, 0, 1, 1, 70, 2, 1, 2);
    }
    field.window = field.keep = field.alibi = 0;
}

/* ALiBi's weights from the definition: with s = 0 (q = 0), head 0 of one
 * gives row t softmax_j(-m (t - j)), m = 2^-8; the slopes of H = 8 heads
 * are 1/2, 1/4, ..., 1/256 (Press et al. 2022). */
static void test_attention_alibi(void **st) {
    (void)st;
    const float q[4] = {0}, k[4] = {1, -2, 3, 0.5f}, v[4] = {1, 2, 3, 4};
    AttnCtx c;
    attn1(&c, NORMZ_SOFTMAX, q, k, v, 4);
    c.spec.alibi = 1;
    attn_loss(&c);
    const double m = 1.0 / 256.0;
    for (int t = 0; t < 4; t++) {
        double Z = 0.0;
        for (int j = 0; j <= t; j++) Z += exp(-m * (t - j));
        for (int j = 0; j <= t; j++)
            assert_float_equal(c.att[t * 4 + j], exp(-m * (t - j)) / Z, 1e-6);
    }
    attn1_free(&c);
    for (int h = 0; h < 8; h++)
        assert_float_equal(attention_alibi_slope(h, 8), 1.0 / (double)(2 << h), 0);
}

/* ---- literature remedies (docs/variants.md D) ---- */

/* Stick-breaking values from the definition, on one head with s = k:
 * a[t,j] = sigma(s_j) prod_{j<k<=t} (1 - sigma(s_k)). */
static void test_stickbreak_values(void **st) {
    (void)st;
    const float q[3] = {1, 1, 1}, k[3] = {0.5f, -1, 2}, v[3] = {1, 2, 3};
    double sg[3];
    for (int j = 0; j < 3; j++) sg[j] = 1.0 / (1.0 + exp(-(double)k[j]));
    AttnCtx c;
    attn1(&c, NORMZ_STICKBREAK, q, k, v, 3);
    attn_loss(&c);
    assert_float_equal(c.att[0], sg[0], 1e-6);     /* row 0: its own break */
    assert_float_equal(c.att[3 + 1], sg[1], 1e-6); /* row 1, nearest key */
    assert_float_equal(c.att[3 + 0], sg[0] * (1 - sg[1]), 1e-6);
    assert_float_equal(c.att[6 + 2], sg[2], 1e-6);
    assert_float_equal(c.att[6 + 1], sg[1] * (1 - sg[2]), 1e-6);
    assert_float_equal(c.att[6 + 0], sg[0] * (1 - sg[1]) * (1 - sg[2]), 1e-6);
    double y2 = sg[2] * 3 + sg[1] * (1 - sg[2]) * 2 + sg[0] * (1 - sg[1]) * (1 - sg[2]);
    assert_float_equal(c.y[2], y2, 1e-5);
    /* the row spends less than the whole stick */
    assert_true(c.att[6] + c.att[7] + c.att[8] < 1.0f);
    attn1_free(&c);
}

/* FoX's per-key bias inside the core: gradients of q, k, v and the bias,
 * and the weights it gives with q = 0 (scores = the bias alone). */
static void test_attention_key_bias(void **st) {
    (void)st;
    for (int hkv = 1; hkv <= 2; hkv++) {
        AttnCtx c = {.B = 2, .T = 6, .H = 2, .Hkv = hkv, .dh = 4};
        c.spec.normaliser = NORMZ_SOFTMAX;
        c.spec.scale = 0.5f;
        seed(4242 + (uint64_t)hkv);
        attn_alloc(&c, 1.0f);
        size_t nq = (size_t)c.B * c.T * c.H * c.dh, nk = (size_t)c.B * c.T * c.Hkv * c.dh;
        size_t nb = (size_t)c.B * c.H * c.T;
        float *kb = randv(nb, 1.5f), *dkb = filled(nb, PREFILL);
        c.spec.key_bias = kb;
        attn_loss(&c);
        float *dq = filled(nq, PREFILL), *dk = filled(nk, PREFILL), *dv = filled(nk, PREFILL);
        AttnSpec sp = c.spec;
        sp.dkey_bias = dkb;
        attn_bwd(&c, (AttnGrad){dq, dk, dv, NULL, NULL, NULL}, c.slot, &sp);
        check_grad("key_bias dq", attn_loss, &c, c.q, nq, dq);
        check_grad("key_bias dk", attn_loss, &c, c.k, nk, dk);
        check_grad("key_bias dv", attn_loss, &c, c.v, nk, dv);
        check_grad("key_bias dkb", attn_loss, &c, kb, nb, dkb);
        memset(c.q, 0, nq * sizeof(float));
        attn_loss(&c);
        for (int t = 0; t < c.T; t++) {
            double Z = 0.0;
            for (int j = 0; j <= t; j++) Z += exp(kb[j]);
            for (int j = 0; j <= t; j++)
                assert_float_equal(c.att[(size_t)t * c.T + j], exp(kb[j]) / Z, 1e-6);
        }
        free(kb);
        free(dkb);
        free(dq);
        free(dk);
        free(dv);
        attn_free(&c);
    }
}

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
        else if (kind == 4) swiglu_backward(da, db, c.R, c.a, c.b, 12);
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
    float *d = filled(20, PREFILL);
    crossentropy_backward(d, c.probs, tg, 4, 5, cnt);
    for (int i = 0; i < 5; i++) assert_float_equal(d[5 + i], PREFILL, 0);
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
        cmocka_unit_test(test_attention_grad),
        cmocka_unit_test(test_attention_values),
        cmocka_unit_test(test_attention_blocks),
        cmocka_unit_test(test_attention_window),
        cmocka_unit_test(test_attention_window_grad),
        cmocka_unit_test(test_attention_alibi),
        cmocka_unit_test(test_stickbreak_values),
        cmocka_unit_test(test_attention_key_bias),
        cmocka_unit_test(test_ssmax),
        cmocka_unit_test(test_fox_bias),
        cmocka_unit_test(test_diff_attn_pieces),
        cmocka_unit_test(test_activations),
        cmocka_unit_test(test_gate_apply),
        cmocka_unit_test(test_group_mean),
        cmocka_unit_test(test_headslice_linear),
        cmocka_unit_test(test_prefix_linear),
        cmocka_unit_test(test_xsa),
        cmocka_unit_test(test_gated_norm),
        cmocka_unit_test(test_crossentropy),
        cmocka_unit_test(test_fast_expf),
        cmocka_unit_test(test_fpmode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
