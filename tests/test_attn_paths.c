/* test_attn_paths.c: attention's fast row paths against its plain ones,
 * bit for bit, on hand-built inputs (ops.h).
 *
 * The forward takes block_softmax (rows in vector chunks, groups of 8)
 * without a window and the per-row normaliser (attn_row_softmax) under a
 * window as long as the sequence, which hides nothing: the two must give
 * the same att, slot and y. The backward takes bwd_rows_plain without a
 * key-bias gradient and the per-row softmax_bwd with one (FoX's dkey_bias):
 * the same dq, dk and dv. RoPE rotates in place or from a source into a
 * destination: the same values. The inputs put -inf and huge scores (a key
 * bias), tiny and subnormal scores, -0 and NaN where they can reach, on
 * lengths that are not multiples of 8, 16 or 64. Run on every SIMD path
 * (tests/meson.build). The forward that leaves the zeros right of each
 * query block (AttnSpec.right_zeros) against the one that writes them, and
 * the one that writes the scores over the weights (preatt = att) where the
 * backward reads no scores against the one that keeps them. Stick-breaking's
 * rows (exact exponentials and sigmoids a chunk at a time) against one libm
 * call per key. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fastexp.h"
#include "ops.h"
#include "testutil.h"

/* A fixed pseudo-random float in [-1, 1). */
static float rnd(unsigned *s) {
    *s = *s * 1103515245u + 12345u;
    return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static float *filled(size_t n, unsigned *s, float mag) {
    float *p = malloc(n * sizeof *p);
    assert_non_null(p);
    for (size_t i = 0; i < n; i++) p[i] = mag * rnd(s);
    return p;
}

static float *zeros(size_t n) {
    float *p = calloc(n ? n : 1, sizeof *p);
    assert_non_null(p);
    return p;
}

static void assert_same_bits(const float *a, const float *b, size_t n, const char *what) {
    for (size_t i = 0; i < n; i++)
        if (memcmp(a + i, b + i, sizeof *a)) {
            print_error("%s[%zu]: %a vs %a\n", what, i, (double)a[i], (double)b[i]);
            fail();
        }
}

/* One case: shapes, the extra keys and the inputs' extremes. */
typedef struct {
    int B, T, H, Hkv, dh;
    AttnNormaliser nz;
    int sink, kvb;
    int edges; /* 1: key bias with -inf, huge, subnormal and -0 entries; -0 in q,
                * dy; 2: also -inf on a head's first keys and -1e30 on others,
                * so its first rows see only -inf (NaN weights) */
} Case;

typedef struct {
    float *y, *att, *slot, *pre, *dq, *dk, *dv, *dsink, *dkk, *dkv;
} Outs;

static Outs outs_alloc(const Case *c) {
    size_t nq = (size_t)c->B * c->T * c->H * c->dh, nk = (size_t)c->B * c->T * c->Hkv * c->dh;
    size_t TT = (size_t)c->B * c->H * c->T * c->T;
    Outs o = {zeros(nq),
              zeros(TT),
              zeros((size_t)c->B * c->H * c->T),
              zeros(TT),
              zeros(nq),
              zeros(nk),
              zeros(nk),
              zeros((size_t)c->H),
              zeros((size_t)c->H * c->dh),
              zeros((size_t)c->H * c->dh)};
    return o;
}

static void outs_free(Outs *o) {
    float *p[] = {o->y, o->att, o->slot, o->pre, o->dq, o->dk, o->dv, o->dsink, o->dkk, o->dkv};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) free(p[i]);
}

/* The forward (window w, AttnSpec.right_zeros rz) and backward of case c,
 * the backward with the key-bias gradient into dkb when given. */
static void run_case_rz(const Case *c, const AttnIn *in, const float *kb, float *dkb,
                        const float *dy, int w, int rz, Outs *o) {
    AttnSpec sp = {0};
    sp.normaliser = c->nz;
    sp.has_sink_logit = c->sink;
    sp.has_kv_bias = c->kvb;
    sp.scale = 1.0f / sqrtf((float)c->dh);
    sp.key_bias = kb;
    sp.dkey_bias = dkb;
    sp.window = w;
    sp.right_zeros = rz;
    sp.clip_gamma = -0.5f / (float)c->T;
    AttnShape sh = {c->B, c->T, c->H, c->Hkv, c->dh};
    attention_forward(&(AttnOut){o->y, o->att, o->slot, o->pre}, in, &sp, &sh);
    float *scratch = zeros(attention_backward_scratch(c->T));
    AttnGrad g = {
        o->dq, o->dk, o->dv, o->dsink, o->dkk, o->dkv, ATTN_SET_DQ | ATTN_SET_DK | ATTN_SET_DV};
    sp.window = w < c->T ? w : 0; /* a window of T hides nothing: the backward's
                                   * fast path does not depend on it */
    attention_backward(&g, dy, &(AttnSaved){o->att, o->slot, o->pre}, in, &sp, &sh, scratch);
    free(scratch);
}

/* The forward and backward of case c, the forward with window w (0 or T)
 * and the backward with the key-bias gradient into dkb when given. */
static void run_case(const Case *c, const AttnIn *in, const float *kb, float *dkb, const float *dy,
                     int w, Outs *o) {
    run_case_rz(c, in, kb, dkb, dy, w, 0, o);
}

/* Key bias with the edge values on a few keys of each head. */
static void put_edges(float *kb, const Case *c, float *q, float *dy) {
    const size_t BHT = (size_t)c->B * c->H * c->T;
    for (size_t i = 0; i < BHT; i++) {
        const size_t j = i % (size_t)c->T;
        if (j % 7 == 3) kb[i] = -INFINITY;
        else if (j % 11 == 5) kb[i] = 1e30f;
        else if (j % 13 == 6) kb[i] = 1e-39f; /* subnormal */
        else if (j % 5 == 1) kb[i] = -0.0f;
    }
    const size_t nq = (size_t)c->B * c->T * c->H * c->dh;
    for (size_t i = 0; i < nq; i += 9) q[i] = -0.0f, dy[i] = -0.0f;
    for (size_t i = 4; i < nq; i += 17) q[i] = 1e-30f; /* tiny products */
    if (c->edges < 2) return;
    for (size_t i = 0; i < BHT; i++) {
        const size_t j = i % (size_t)c->T;
        if (j < 3) kb[i] = -INFINITY;
        else if (j % 9 == 4) kb[i] = -1e30f;
    }
}

static void check_case(const Case *c) {
    unsigned s = 7u + (unsigned)(c->T * 31 + c->dh);
    size_t nq = (size_t)c->B * c->T * c->H * c->dh, nk = (size_t)c->B * c->T * c->Hkv * c->dh;
    float *q = filled(nq, &s, 2.0f), *k = filled(nk, &s, 2.0f), *v = filled(nk, &s, 1.0f);
    float *dy = filled(nq, &s, 1.0f), *sink = filled((size_t)c->H, &s, 1.0f);
    float *kvk = filled((size_t)c->H * c->dh, &s, 1.0f),
          *kvv = filled((size_t)c->H * c->dh, &s, 1.0f);
    float *kb = filled((size_t)c->B * c->H * c->T, &s, 0.5f);
    float *dkb = zeros((size_t)c->B * c->H * c->T);
    if (c->edges) put_edges(kb, c, q, dy);
    AttnIn in = {q, k, v, 0, 0, c->sink ? sink : NULL, c->kvb ? kvk : NULL, c->kvb ? kvv : NULL};
    Outs fast = outs_alloc(c), plain = outs_alloc(c);
    run_case(c, &in, kb, NULL, dy, 0, &fast);
    run_case(c, &in, kb, dkb, dy, c->T, &plain);
    const size_t TT = (size_t)c->B * c->H * c->T * c->T;
    assert_same_bits(fast.att, plain.att, TT, "att");
    assert_same_bits(fast.y, plain.y, nq, "y");
    if (c->sink || c->kvb || c->nz == NORMZ_SOFTMAX1)
        assert_same_bits(fast.slot, plain.slot, (size_t)c->B * c->H * c->T, "slot");
    assert_same_bits(fast.dq, plain.dq, nq, "dq");
    assert_same_bits(fast.dk, plain.dk, nk, "dk");
    assert_same_bits(fast.dv, plain.dv, nk, "dv");
    outs_free(&fast);
    outs_free(&plain);
    float *p[] = {q, k, v, dy, sink, kvk, kvv, kb, dkb};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) free(p[i]);
}

/* Softmax rows: lengths around the chunk (16), group (8) and block (64)
 * edges, with and without the edge values. */
static void test_softmax_rows(void **st) {
    (void)st;
    const int Ts[] = {1, 5, 8, 16, 17, 33, 40, 64, 70, 100, 129, 200};
    for (size_t i = 0; i < sizeof Ts / sizeof Ts[0]; i++)
        for (int edges = 0; edges < 3; edges++) {
            Case c = {2, Ts[i], 4, 2, 16, NORMZ_SOFTMAX, 0, 0, edges};
            check_case(&c);
        }
}

/* The extra keys (softmax1's null key, a sink logit, kv-bias) take the
 * block path's per-row extra logits; the backward's general path then
 * runs for both, so only the forward differs. */
static void test_softmax_extra_keys(void **st) {
    (void)st;
    const Case cs[] = {
        {2, 21, 2, 1, 8, NORMZ_SOFTMAX1, 0, 0, 1},
        {1, 70, 2, 2, 8, NORMZ_SOFTMAX, 1, 0, 1},
        {1, 40, 2, 1, 8, NORMZ_SOFTMAX, 0, 1, 0},
        {1, 19, 2, 2, 8, NORMZ_SOFTMAX1, 1, 1, 1},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) check_case(&cs[i]);
}

/* Fills the maps [B H, T, T]: keys [0, r1) of the rows of each block of
 * ATT_BLOCK queries with left, keys [r1, T) with right. */
static void fill_blocks(float *map, const Case *c, float left, float right) {
    for (size_t bh = 0; bh < (size_t)c->B * c->H; bh++)
        for (int t = 0; t < c->T; t++) {
            const int r1 =
                (t / ATT_BLOCK + 1) * ATT_BLOCK < c->T ? (t / ATT_BLOCK + 1) * ATT_BLOCK : c->T;
            float *row = map + (bh * (size_t)c->T + (size_t)t) * (size_t)c->T;
            for (int j = 0; j < c->T; j++) row[j] = j < r1 ? left : right;
        }
}

/* Where attention_backward_reads_scores says the backward does not read
 * the scores, the forward that writes them over the weights (preatt =
 * att) gives ref's weights, outputs and gradients bit for bit. */
static void check_scores_over_weights(const Case *c, const AttnIn *in, const float *kb,
                                      const float *dy, int w, const Outs *ref) {
    AttnSpec sp = {0};
    sp.normaliser = c->nz;
    sp.has_sink_logit = c->sink;
    sp.has_kv_bias = c->kvb;
    if (attention_backward_reads_scores(&sp, 1)) return;
    size_t nq = (size_t)c->B * c->T * c->H * c->dh, nk = (size_t)c->B * c->T * c->Hkv * c->dh;
    Outs o = outs_alloc(c);
    free(o.pre);
    o.pre = o.att;
    fill_blocks(o.att, c, NAN, NAN);
    run_case_rz(c, in, kb, NULL, dy, w, 0, &o);
    assert_same_bits(o.att, ref->att, (size_t)c->B * c->H * c->T * c->T, "att over scores");
    assert_same_bits(o.y, ref->y, nq, "y");
    assert_same_bits(o.slot, ref->slot, (size_t)c->B * c->H * c->T, "slot");
    assert_same_bits(o.dq, ref->dq, nq, "dq");
    assert_same_bits(o.dk, ref->dk, nk, "dk");
    assert_same_bits(o.dv, ref->dv, nk, "dv");
    assert_same_bits(o.dsink, ref->dsink, (size_t)c->H, "dsink");
    assert_same_bits(o.dkv, ref->dkv, (size_t)c->H * c->dh, "dkv");
    o.pre = NULL;
    outs_free(&o);
}

/* Case c with AttnSpec.right_zeros against the forward that writes whole
 * maps (over maps of NaNs), window w: over maps whose keys [r1, T) hold
 * zeros and the rest NaN, the same att, y, slot and gradients bit for bit;
 * over maps whose keys [r1, T) hold 7, those 7s left as they were and the
 * same y, slot and gradients (the products and the backward do not read
 * them). */
static void check_right_zeros(const Case *c, int w) {
    unsigned s = 11u + (unsigned)(c->T * 7 + (int)c->nz);
    size_t nq = (size_t)c->B * c->T * c->H * c->dh, nk = (size_t)c->B * c->T * c->Hkv * c->dh;
    const size_t TT = (size_t)c->B * c->H * c->T * c->T, BHT = (size_t)c->B * c->H * c->T;
    float *q = filled(nq, &s, 2.0f), *k = filled(nk, &s, 2.0f), *v = filled(nk, &s, 1.0f);
    float *dy = filled(nq, &s, 1.0f), *sink = filled((size_t)c->H, &s, 1.0f);
    float *kvk = filled((size_t)c->H * c->dh, &s, 1.0f),
          *kvv = filled((size_t)c->H * c->dh, &s, 1.0f);
    float *kb = filled(BHT, &s, 0.5f);
    if (c->edges) put_edges(kb, c, q, dy);
    AttnIn in = {q, k, v, 0, 0, c->sink ? sink : NULL, c->kvb ? kvk : NULL, c->kvb ? kvv : NULL};
    Outs whole = outs_alloc(c), zs = outs_alloc(c), sevens = outs_alloc(c);
    fill_blocks(whole.att, c, NAN, NAN);
    fill_blocks(zs.att, c, NAN, 0.0f);
    fill_blocks(sevens.att, c, NAN, 7.0f);
    Outs *o[] = {&whole, &zs, &sevens};
    for (int i = 0; i < 3; i++) fill_blocks(o[i]->pre, c, NAN, NAN);
    run_case_rz(c, &in, kb, NULL, dy, w, 0, &whole);
    run_case_rz(c, &in, kb, NULL, dy, w, 1, &zs);
    run_case_rz(c, &in, kb, NULL, dy, w, 1, &sevens);
    assert_same_bits(zs.att, whole.att, TT, "att");
    check_scores_over_weights(c, &in, kb, dy, w, &whole);
    fill_blocks(whole.att, c, 1.0f, 7.0f);
    for (size_t i = 0; i < TT; i++)
        if (whole.att[i] == 7.0f) assert_true(sevens.att[i] == 7.0f);
    for (int i = 1; i < 3; i++) {
        assert_same_bits(o[i]->y, whole.y, nq, "y");
        assert_same_bits(o[i]->slot, whole.slot, BHT, "slot");
        assert_same_bits(o[i]->dq, whole.dq, nq, "dq");
        assert_same_bits(o[i]->dk, whole.dk, nk, "dk");
        assert_same_bits(o[i]->dv, whole.dv, nk, "dv");
        assert_same_bits(o[i]->dsink, whole.dsink, (size_t)c->H, "dsink");
        assert_same_bits(o[i]->dkv, whole.dkv, (size_t)c->H * c->dh, "dkv");
    }
    for (int i = 0; i < 3; i++) outs_free(o[i]);
    float *p[] = {q, k, v, dy, sink, kvk, kvv, kb};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) free(p[i]);
}

/* Every normaliser, the extra keys and windows, on lengths of one, two
 * and three blocks with partial ones. */
static void test_right_zeros(void **st) {
    (void)st;
    const AttnNormaliser nz[] = {NORMZ_SOFTMAX, NORMZ_SOFTMAX1, NORMZ_SINK_LOGIT, NORMZ_CLIPPED,
                                 NORMZ_SIGMOID, NORMZ_SOFTPICK, NORMZ_STICKBREAK};
    const int Ts[] = {17, 64, 70, 129};
    for (size_t i = 0; i < sizeof nz / sizeof nz[0]; i++)
        for (size_t t = 0; t < sizeof Ts / sizeof Ts[0]; t++) {
            const int extra = nz[i] != NORMZ_STICKBREAK;
            Case c = {2, Ts[t], 2, 1, 8, nz[i], extra && nz[i] == NORMZ_SINK_LOGIT, 0, (int)t & 1};
            check_right_zeros(&c, 0);
            check_right_zeros(&c, 20);
            c.kvb = extra;
            check_right_zeros(&c, 0);
        }
}

/* (x1, x2) -> (x1 c - x2 s', x2 c + x1 s') with s' = sign s, one pair at a
 * time, on the first rd dims of each head of x [B, T, nh, dh]. */
static void rope_plain(float *x, const float *cs, const float *sn, int B, int T, int nh, int dh,
                       int rd, float sign) {
    const int half = rd / 2;
    for (int bt = 0; bt < B * T; bt++)
        for (int h = 0; h < nh; h++) {
            float *x1 = x + ((size_t)bt * nh + h) * dh, *x2 = x1 + half;
            const float *c = cs + (size_t)(bt % T) * half, *s = sn + (size_t)(bt % T) * half;
            for (int i = 0; i < half; i++) {
                float a = x1[i], b = x2[i], si = sign * s[i];
                x1[i] = a * c[i] - b * si;
                x2[i] = b * c[i] + a * si;
            }
        }
}

/* rope_forward, rope_forward_part and rope_backward against rope_plain on
 * head sizes with and without whole vectors of pairs, through -0,
 * subnormals, huge values, inf and NaN. */
static void test_rope_plain(void **st) {
    (void)st;
    const int dhs[] = {2, 12, 16, 20, 34, 40, 64};
    for (size_t d = 0; d < sizeof dhs / sizeof dhs[0]; d++)
        for (int kind = 0; kind < 3; kind++) {
            const int B = 2, T = 7, nh = 3, dh = dhs[d], rd = kind == 1 ? dh / 2 & ~1 : dh;
            const size_t n = (size_t)B * T * nh * dh, half = (size_t)rd / 2;
            unsigned s = 5u + (unsigned)(dh * 3 + kind);
            float *x = filled(n, &s, 3.0f), *ref = zeros(n);
            float *cs = filled((size_t)T * (half ? half : 1), &s, 1.0f);
            float *sn = filled((size_t)T * (half ? half : 1), &s, 1.0f);
            for (size_t i = 0; i < n; i += 5) x[i] = i % 3 ? -0.0f : 1e-41f;
            x[1] = 3e38f, x[n / 3] = -INFINITY, x[n / 2] = INFINITY, x[n - 1] = NAN;
            memcpy(ref, x, n * sizeof *x);
            rope_plain(ref, cs, sn, B, T, nh, dh, rd, kind == 2 ? -1.0f : 1.0f);
            if (kind == 0) rope_forward(x, cs, sn, B, T, nh, dh);
            else if (kind == 1) rope_forward_part(x, cs, sn, B, T, nh, dh, rd);
            else rope_backward(x, cs, sn, B, T, nh, dh);
            assert_same_bits(x, ref, n, "rope against plain");
            free(x), free(ref), free(cs), free(sn);
        }
}

/* fast_expf_le88 against fast_expf on x <= 88: a sweep of the clamp's
 * range and past it, the clamp's edges, -0, subnormals, -inf and NaN. */
static void test_expf_le88(void **st) {
    (void)st;
    const float edge[] = {0.0f,   -0.0f,    1e-45f, -1e-45f,   -1e-39f, -87.0f, -87.5f,     88.0f,
                          -88.0f, 87.9999f, -1e30f, -INFINITY, NAN,     -3e38f, -86.99999f, 1e-30f};
    for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++) {
        const float a = fast_expf_le88(edge[i]), b = fast_expf(edge[i]);
        assert_same_bits(&a, &b, 1, "expf edge");
    }
    for (int i = -2000000; i <= 880000; i += 3) {
        const float x = (float)i * 1e-4f, a = fast_expf_le88(x), b = fast_expf(x);
        assert_same_bits(&a, &b, 1, "expf sweep");
    }
}

/* rope_forward_to against a copy rotated in place, on head sizes with and
 * without a vector's worth of pairs, through -0, subnormals, inf and NaN. */
static void test_rope_to(void **st) {
    (void)st;
    const int dhs[] = {2, 12, 16, 32, 40};
    for (size_t d = 0; d < sizeof dhs / sizeof dhs[0]; d++) {
        const int B = 2, T = 9, nh = 3, dh = dhs[d];
        const size_t n = (size_t)B * T * nh * dh, half = (size_t)dh / 2;
        unsigned s = 3u + (unsigned)dh;
        float *x = filled(n, &s, 3.0f), *y = zeros(n), *ref = zeros(n);
        float *cs = filled((size_t)T * half, &s, 1.0f), *sn = filled((size_t)T * half, &s, 1.0f);
        x[0] = -0.0f, x[1] = 1e-40f, x[n / 2] = INFINITY, x[n - 1] = NAN;
        memcpy(ref, x, n * sizeof *x);
        rope_forward(ref, cs, sn, B, T, nh, dh);
        rope_forward_to(y, x, cs, sn, B, T, nh, dh);
        assert_same_bits(y, ref, n, "rope");
        free(x), free(y), free(ref), free(cs), free(sn);
    }
}

/* ---- a value that only zero weights meet ---- */

/* Column c (rows [0, T), row step ld) of batch 1 against the chains' pattern
 * for a non-finite value in row j: query block [r0, r1) (ATT_BLOCK rows)
 * runs its products over keys [0, r1), and a zero weight times inf is NaN.
 * lead 0 (y = a v, dq = ds k: row t's chain meets row j's zero weight when
 * t < j): rows before j's block finite, rows of its block before j NaN,
 * rows from j on not finite. lead 1 (dk = ds^T q, dv = a^T dy: key i meets
 * query j's zero weight when i > j): keys to j not finite, keys past j in
 * its block NaN, keys after it finite. Batch 0 is finite throughout. */
static void check_reach(const float *x, int T, int ld, int c, int j, int lead, const char *what) {
    const int r0 = j / ATT_BLOCK * ATT_BLOCK, r1 = r0 + ATT_BLOCK < T ? r0 + ATT_BLOCK : T;
    for (int b = 0; b < 2; b++)
        for (int i = 0; i < T; i++) {
            float v = x[((size_t)b * T + i) * ld + c];
            int want = 0; /* 0 finite, 1 NaN, 2 not finite */
            if (b == 1 && !lead) want = i < r0 ? 0 : i < j ? 1 : 2;
            if (b == 1 && lead) want = i <= j ? 2 : i < r1 ? 1 : 0;
            if (want == 0 ? !isfinite(v) : want == 1 ? !isnan(v) : isfinite(v)) {
                print_error("%s: batch %d row %d column %d: %g (non-finite row %d)\n", what, b, i,
                            c, (double)v, j);
                fail();
            }
        }
}

/* An inf in v, k, q or dy reaches, as 0 * inf = NaN, every chain the
 * contract's products run: attention proves each head's operand finite
 * once (gemm_finite) and its products run every chain whole when it is not.
 * Two heads on one kv head, T 200 (a partial last block). */
static void test_nonfinite_reach(void **st) {
    (void)st;
    enum { B = 2, T = 200, H = 2, dh = 16 };
    const size_t nq = (size_t)B * T * H * dh, nk = (size_t)B * T * dh, TT = (size_t)B * H * T * T;
    unsigned s = 77;
    float *q = filled(nq, &s, 1.0f), *k = filled(nk, &s, 1.0f), *v = filled(nk, &s, 1.0f);
    float *dy = filled(nq, &s, 1.0f), *y = zeros(nq), *att = zeros(TT), *scratch;
    float *dq = zeros(nq), *dk = zeros(nk), *dv = zeros(nk);
    scratch = zeros(attention_backward_scratch(T));
    AttnSpec sp = {.normaliser = NORMZ_SOFTMAX, .scale = 0.25f};
    AttnShape sh = {B, T, H, 1, dh};
    const AttnIn in = {q, k, v, 0, 0, NULL, NULL, NULL};
    const size_t b1 = (size_t)T; /* batch 1's first row */
    v[(b1 + 150) * dh + 3] = INFINITY;
    attention_forward(&(AttnOut){y, att, NULL, att}, &in, &sp, &sh);
    for (int h = 0; h < H; h++) check_reach(y, T, H * dh, h * dh + 3, 150, 0, "y from v");
    v[(b1 + 150) * dh + 3] = 0.5f;
    k[(b1 + 150) * dh + 5] = INFINITY;
    q[(b1 + 70) * H * dh + dh + 7] = INFINITY;
    AttnGrad g = {dq, dk, dv, NULL, NULL, NULL, ATTN_SET_DQ | ATTN_SET_DK | ATTN_SET_DV};
    attention_backward(&g, dy, &(AttnSaved){att, NULL, att}, &in, &sp, &sh, scratch);
    for (int h = 0; h < H; h++) check_reach(dq, T, H * dh, h * dh + 5, 150, 0, "dq from k");
    check_reach(dk, T, dh, 7, 70, 1, "dk from q");
    k[(b1 + 150) * dh + 5] = 0.5f, q[(b1 + 70) * H * dh + dh + 7] = 0.5f;
    dy[(b1 + 100) * H * dh + 2] = INFINITY;
    attention_backward(&g, dy, &(AttnSaved){att, NULL, att}, &in, &sp, &sh, scratch);
    check_reach(dv, T, dh, 2, 100, 1, "dv from dy");
    float *p[] = {q, k, v, dy, y, att, dq, dk, dv, scratch};
    for (size_t i = 0; i < sizeof p / sizeof *p; i++) free(p[i]);
}

/* Stick-breaking's rows as one libm call per exponential, softplus and
 * sigmoid, key by key (the rows' defining expressions, op_stickbreak.c). */
static float sb_softplus(float x) { return x > 0.0f ? x + log1pf(expf(-x)) : log1pf(expf(x)); }

static void sb_forward_ref(float *a, const float *s, int n) {
    float acc = 0.0f;
    for (int j = n - 1; j >= 0; j--) {
        const float sj = s[j], sp = sb_softplus(-sj);
        a[j] = expf(-sp - acc);
        acc += sj + sp;
    }
}

static void sb_backward_ref(float *d, const float *a, const float *s, int n) {
    float prefix = 0.0f;
    for (int m = 0; m < n; m++) {
        float g = d[m] * a[m], sg = 1.0f / (1.0f + expf(-s[m]));
        d[m] = g * (1.0f - sg) - sg * prefix;
        prefix += g;
    }
}

/* a[i] and b[i] the same bits, or both NaN: IEEE 754 leaves which NaN an
 * operation on two NaNs passes on, and the compiler may put a sum's
 * operands either way round (in a sanitized build a key's NaN score plus
 * its NaN softplus, of opposite signs, came out with the other sign than
 * in the reference), so a NaN is held to a NaN */
static void assert_same_or_nan(const float *a, const float *b, size_t n, const char *what) {
    for (size_t i = 0; i < n; i++)
        if (memcmp(a + i, b + i, sizeof *a) && !(isnan(a[i]) && isnan(b[i]))) {
            print_error("%s[%zu]: %a vs %a\n", what, i, (double)a[i], (double)b[i]);
            fail();
        }
}

/* both rows of s[0..n) against the references, forward also into s itself */
static void sb_check(const float *s, const float *d, int n, const char *what) {
    float a[160], b[160], da[160], db[160];
    assert_true(n <= 160);
    stickbreak_row_forward(a, s, n);
    sb_forward_ref(b, s, n);
    assert_same_or_nan(a, b, (size_t)n, what);
    memcpy(a, s, (size_t)n * sizeof *a);
    stickbreak_row_forward(a, a, n);
    assert_same_or_nan(a, b, (size_t)n, what);
    memcpy(da, d, (size_t)n * sizeof *da);
    memcpy(db, d, (size_t)n * sizeof *db);
    stickbreak_row_backward(da, b, s, n);
    sb_backward_ref(db, b, s, n);
    assert_same_or_nan(da, db, (size_t)n, what);
}

/* Stick-breaking's chunked rows against the references: every 4099th float
 * as a row of one (each key's softplus and sigmoid; a row's later keys see
 * the sums of the earlier), and rows of every length up to 160 (chunks of
 * 64 and the partial vectors) of scores in [-40, 40) with an edge value at
 * key 0 and in the middle. */
static void test_stickbreak_rows(void **st) {
    (void)st;
    const float one = 1.0f;
    for (uint64_t b = 0; b <= UINT32_MAX; b += 4099) {
        float x;
        uint32_t u = (uint32_t)b;
        memcpy(&x, &u, sizeof x);
        sb_check(&x, &one, 1, "stickbreak float");
    }
    const float edge[] = {0.0f,  -0.0f,  INFINITY, -INFINITY, NAN,   1e-45f, -1e-40f,
                          88.7f, -88.7f, 103.98f,  -103.98f,  3e38f, -3e38f};
    const int ne = (int)(sizeof edge / sizeof edge[0]);
    unsigned seed = 7;
    float s[160], d[160];
    for (int n = 0; n <= 160; n++)
        for (int e = -1; e < ne; e++) {
            for (int j = 0; j < n; j++) s[j] = 40.0f * rnd(&seed), d[j] = rnd(&seed);
            if (e >= 0 && n > 0) s[0] = edge[e], s[n / 2] = edge[(e + n) % ne];
            sb_check(s, d, n, "stickbreak rows");
        }
}

int main(void) {
    int skip = tu_simd_skip();
    if (skip) return skip;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_softmax_rows),    cmocka_unit_test(test_softmax_extra_keys),
        cmocka_unit_test(test_right_zeros),     cmocka_unit_test(test_rope_to),
        cmocka_unit_test(test_rope_plain),      cmocka_unit_test(test_expf_le88),
        cmocka_unit_test(test_nonfinite_reach), cmocka_unit_test(test_stickbreak_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
