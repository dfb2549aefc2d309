/* test_ops_attention.c: the attention op and the remedies' kernels over it
 * (ops.h), checked like test_ops.c (gradcheck.h): gradients of every
 * normaliser, extra key, window, ALiBi and key bias against finite
 * differences, and hand-computed values for each normaliser, the blocks,
 * the window and stick-breaking. The variants' own kernels (SSMax, FoX,
 * differential attention) are test_ops_variants.c. */
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

/* c's forward maps: zero above the diagonal and within [0, 1]; clipped
 * ones keep some entries strictly inside. */
static void check_att_causal(const AttnCtx *c) {
    for (int bh = 0; bh < c->B * c->H; bh++)
        for (int t = 0; t < c->T; t++)
            for (int j = 0; j < c->T; j++) {
                float a = c->att[((size_t)bh * c->T + t) * c->T + j];
                if (j > t) assert_float_equal(a, 0.0f, 0);
                else assert_true(a >= 0.0f && a <= 1.0f);
            }
    if (c->spec.normaliser == NORMZ_CLIPPED) { /* make sure some entries are not clipped */
        int inner = 0;
        for (size_t i = 0; i < (size_t)c->B * c->H * c->T * c->T; i++)
            inner += c->att[i] > 0.0f && c->att[i] < 1.0f;
        assert_true(inner > 10);
    }
}

/* With the ATTN_SET_* bits the backward writes dq, dk and dv whole: the
 * values it adds into zeros without them, over buffers that start as
 * garbage (GQA's shared kv heads and two row blocks included). */
static void check_set_writes(AttnCtx *c, size_t nq, size_t nk) {
    const unsigned all = ATTN_SET_DQ | ATTN_SET_DK | ATTN_SET_DV;
    float *add[3] = {filled(nq, 0.0f), filled(nk, 0.0f), filled(nk, 0.0f)};
    float *set[3] = {filled(nq, 1e30f), filled(nk, 1e30f), filled(nk, 1e30f)};
    attn_loss(c); /* the gradient checks left att from a perturbed input */
    attn_bwd(c, (AttnGrad){add[0], add[1], add[2], NULL, NULL, NULL, 0}, c->slot, &c->spec);
    attn_bwd(c, (AttnGrad){set[0], set[1], set[2], NULL, NULL, NULL, all}, c->slot, &c->spec);
    for (int i = 0; i < 3; i++) {
        for (size_t j = 0; j < (i ? nk : nq); j++) assert_float_equal(set[i][j], add[i][j], 0);
        free(add[i]);
        free(set[i]);
    }
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
    check_att_causal(&c);
    float *dq = filled(nq, PREFILL), *dk = filled(nk, PREFILL), *dv = filled(nk, PREFILL),
          *ds = filled((size_t)c.H, PREFILL), *dkk = filled(nx, PREFILL),
          *dkv = filled(nx, PREFILL);
    attn_bwd(&c, (AttnGrad){dq, dk, dv, ds, dkk, dkv, 0}, c.slot, &c.spec);
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
    check_set_writes(&c, nq, nk);
    /* backward without the slot buffer recomputes the slot weights */
    if ((sink || kvb) && nz == NORMZ_SOFTMAX) {
        float *dq2 = filled(nq, PREFILL);
        attn_loss(&c); /* the checks above left att from a perturbed input */
        attn_bwd(&c, (AttnGrad){dq2, NULL, NULL, NULL, NULL, NULL, 0}, NULL, &c.spec);
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

/* The extra keys on test_attention_values's head (q = 1, so the scores
 * are k = 0.5, -1, 2): the sink-logit slot and the kv-bias key and value. */
static void check_extra_keys(const float *q, const float *k, const float *v) {
    double e0 = exp(0.5), e1 = exp(-1.0), e2 = exp(2.0), Z = e0 + e1 + e2;
    AttnCtx c;

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
}

/* Uniform scores (q = 0): a[t,j] = 1/(t+1), y_t = mean of v_0..v_t,
 * across heads with GQA; T = 70 spans two row blocks. */
static void check_uniform_gqa(void) {
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

    check_extra_keys(q, k, v);
    check_uniform_gqa();
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
        attn_bwd(&c, (AttnGrad){dq, dk, dv, NULL, NULL, NULL, 0}, c.slot, &sp);
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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attention_grad),        cmocka_unit_test(test_attention_values),
        cmocka_unit_test(test_attention_blocks),      cmocka_unit_test(test_attention_window),
        cmocka_unit_test(test_attention_window_grad), cmocka_unit_test(test_attention_alibi),
        cmocka_unit_test(test_stickbreak_values),     cmocka_unit_test(test_attention_key_bias),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
