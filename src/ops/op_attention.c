/* op_attention.c: causal multi-head attention (GQA) with a choice of
 * normaliser, per (batch, head) through gemm on strided head views.
 *
 * q[B,T,H,dh]: head h of batch b is a T x dh matrix with leading dim H*dh,
 * so gemm reads heads in place with no transposes or copies.
 *
 * Every normaliser is a row operation on the scores s[t, 0..t] plus up to
 * three "extra" keys every query sees:
 *   null  logit 0,            no value   (softmax1: the "+1")
 *   sink  logit b_h,          no value   (sink-logit; not scaled)
 *   kv    logit q_t.k'_h*scale, value v'_h (kv-bias)
 * An extra key joins the normaliser exactly like a visible key (softmax,
 * clipping, softpick's denominator, sigmoid's own gate). slot[] records the
 * weight of the kv key when there is one, else of the sink key, else (for
 * softmax1, if slot is given) of the null key.
 *
 * A window (AttnSpec.window) hides the keys a query does not see: its
 * row is normalised over the visible keys only (a sliding window, or the
 * streaming window of a KV cache), in the forward and the backward.
 * ALiBi adds a fixed bias -m_h (t - j) to the scores before any of this.
 *
 * Rows are processed in blocks of ATT_BLOCK queries; block [r0, r1) only
 * needs keys [0, r1), which skips most of the masked upper triangle. The
 * zeros of a block's rows from key r1 on are written only when the call
 * asks (AttnSpec.right_zeros 0): nothing but a reader of whole maps reads
 * them, and a training step's forward finds them in place.
 * attention_forward keeps every map for the backward; attention_keep (the
 * inference of a pretrained model) runs the same blocks over threads and
 * keeps only the first column and the first M rows of each map. The
 * backward is op_attention_bwd.c; both share the Plan and the row
 * normalisers through attn_rows.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attn_rows.h"
#include "exactexp.h"
#include "fastexp.h"
#include "opprof.h"
#include "ops.h"
#include "parallel.h"
#include "rows.h"
#include "simd.h"

/* One call's plan (attn_rows.h). A missing sink_logit reads as b = 0;
 * kv-bias needs both k' and v'. */
Plan attn_make_plan(const AttnSpec *sp, const float *kvb_k, const float *kvb_v, int T) {
    Plan p = {0};
    p.scale = sp->scale;
    p.gamma = sp->clip_gamma;
    p.eps = sp->softpick_eps;
    p.lnT = logf((float)(T > 0 ? T : 1));
    switch (sp->normaliser) {
    case NORMZ_CLIPPED: p.base = BASE_CLIPPED; break;
    case NORMZ_SIGMOID: p.base = BASE_SIGMOID; break;
    case NORMZ_SOFTPICK: p.base = BASE_SOFTPICK; break;
    case NORMZ_STICKBREAK: p.base = BASE_STICKBREAK; break;
    default: p.base = BASE_SOFTMAX; break;
    }
    p.kb = sp->key_bias;
    p.dkb = sp->key_bias ? sp->dkey_bias : NULL;
    p.window = sp->window > 0 ? sp->window : 0;
    p.keep = sp->keep > 0 && sp->keep < p.window ? sp->keep : 0;
    p.alibi = sp->alibi;
    p.softcap = sp->softcap > 0 ? sp->softcap : 0.0f;
    p.on[XS_NULL] = sp->normaliser == NORMZ_SOFTMAX1;
    p.on[XS_SINK] = sp->has_sink_logit || sp->normaliser == NORMZ_SINK_LOGIT;
    p.on[XS_KV] = sp->has_kv_bias && kvb_k && kvb_v;
    return p;
}
#define MAX_LANES 8

/* p[j] = e^(s[j] - mx) (exp_rows_body); exp_shifted also returns their sum.
 * The hot loop of the forward.
 * lanes: the sum over MAX_LANES partial sums, which vectorises (attention
 * without maps: inference); else in index order, as training always adds. */
SIMD_BODY void exp_rows_body(float *p, const float *s, float mx, int n) {
    for (int i = 0; i < n; i++) p[i] = fast_expf(s[i] - mx);
}

SIMD_BODY float exp_shifted_body(float *p, const float *s, float mx, int n, int lanes) {
    float sum = 0.0f, part[MAX_LANES] = {0.0f};
    int j = 0;
    exp_rows_body(p, s, mx, n);
    if (lanes)
        for (; j + MAX_LANES <= n; j += MAX_LANES)
            for (int k = 0; k < MAX_LANES; k++) part[k] += p[j + k];
    for (int k = 0; k < MAX_LANES; k++) sum += part[k];
    for (; j < n; j++) sum += p[j];
    return sum;
}
SIMD_KERNEL_RET(static, float, exp_shifted, (float *p, const float *s, float mx, int n, int lanes),
                (p, s, mx, n, lanes))

/* p[0..n) and ex->w = softmax over the scores and the extra logits. */
SIMD_BODY void attn_row_softmax_body(float *p, const float *s, int n, const Plan *pl, Extra *ex) {
    float mx = row_max(s, n);
    for (int x = 0; x < XS_N; x++)
        if (pl->on[x] && ex->z[x] > mx) mx = ex->z[x];
    float sum = exp_shifted(p, s, mx, n, pl->lane_sums);
    for (int x = 0; x < XS_N; x++) {
        ex->w[x] = pl->on[x] ? expf(ex->z[x] - mx) : 0.0f;
        sum += ex->w[x];
    }
    float inv = 1.0f / sum;
    for (int j = 0; j < n; j++) p[j] *= inv;
    for (int x = 0; x < XS_N; x++) ex->w[x] *= inv;
}
SIMD_KERNEL(attn_row_softmax, (float *p, const float *s, int n, const Plan *pl, Extra *ex),
            (p, s, n, pl, ex))

/* Softpick with the shift m = max(0, max s): e^{s} - 1 = e^m (e^{s-m} - e^{-m}),
 * so a = relu(u) / (sum |u| + eps e^{-m}) with u = e^{s-m} - e^{-m}, exactly
 * the unshifted formula but with no overflow. Writes e^{s-m} into e (may
 * alias a) when given, and returns the shifted denominator D'. */
float attn_row_softpick(float *a, const float *s, int n, const Plan *pl, Extra *ex, float *ex_e) {
    float m = 0.0f;
    for (int j = 0; j < n; j++) m = s[j] > m ? s[j] : m;
    for (int x = 0; x < XS_N; x++)
        if (pl->on[x] && ex->z[x] > m) m = ex->z[x];
    float em = expf(-m), den = 0.0f;
    if (n > 0) exact_expf_shifted(a, s, m, (size_t)n); /* expf's bits, the row at once */
    for (int j = 0; j < n; j++) {
        float u = a[j] - em;
        a[j] = u;
        den += fabsf(u);
    }
    float ux[XS_N];
    for (int x = 0; x < XS_N; x++) {
        float e = pl->on[x] ? expf(ex->z[x] - m) : 0.0f;
        if (ex_e) ex_e[x] = e;
        ux[x] = pl->on[x] ? e - em : 0.0f;
        den += fabsf(ux[x]);
    }
    den += pl->eps * em;
    float inv = 1.0f / den;
    for (int j = 0; j < n; j++) a[j] = a[j] > 0.0f ? a[j] * inv : 0.0f;
    for (int x = 0; x < XS_N; x++) ex->w[x] = ux[x] > 0.0f ? ux[x] * inv : 0.0f;
    return den;
}

/* a[0..T) for query row t (n = t + 1 visible keys); zeros above the diagonal. */
static void row_forward(float *a, const float *s, int n, int T, const Plan *pl, Extra *ex) {
    switch (pl->base) {
    case BASE_SOFTMAX: attn_row_softmax(a, s, n, pl, ex); break;
    case BASE_CLIPPED: {
        float k = 1.0f - pl->gamma, g = pl->gamma;
        attn_row_softmax(a, s, n, pl, ex);
        for (int j = 0; j < n; j++) a[j] = clamp01(k * a[j] + g);
        for (int x = 0; x < XS_N; x++) ex->w[x] = pl->on[x] ? clamp01(k * ex->w[x] + g) : 0.0f;
        break;
    }
    case BASE_SIGMOID:
        if (n > 0)
            exact_sigmoid_shifted(a, s, pl->lnT, (size_t)n); /* sigm's bits, the row at once */
        for (int x = 0; x < XS_N; x++)
            ex->w[x] = pl->on[x] ? exact_sigmoid(ex->z[x] - pl->lnT) : 0.0f;
        break;
    case BASE_SOFTPICK: attn_row_softpick(a, s, n, pl, ex, NULL); break;
    case BASE_STICKBREAK: /* no extra keys (config_validate) */
        stickbreak_row_forward(a, s, n);
        for (int x = 0; x < XS_N; x++) ex->w[x] = 0.0f;
        break;
    }
    for (int j = n; j < T; j++) a[j] = 0.0f;
}

/* Query row t under the window. A sliding window (keep 0) normalises the
 * visible scores s[lo, t] in place as a row of their own, with a[0, lo)
 * zero, so s is left as it was (the backward reads it). Streaming (keep
 * > 0): the visible scores s[0, keep) and s[lo, t] are gathered to
 * a[0, window) (so s stays as it was unless a aliases it), normalised
 * like a row of window keys, and the weights moved back to a[lo, t] with
 * 0 between. */
void attn_row_forward_window(float *a, float *s, int t, int width, const Plan *pl, Extra *ex) {
    const int W = pl->window, K = pl->keep, lo = t - (W - K) + 1;
    if (lo <= K) { /* every key still visible */
        row_forward(a, s, t + 1, width, pl, ex);
        return;
    }
    if (K == 0) {
        row_forward(a + lo, s + lo, t + 1 - lo, width - lo, pl, ex);
        memset(a, 0, (size_t)lo * sizeof(float));
        return;
    }
    if (a != s) memcpy(a, s, (size_t)K * sizeof(float));
    memmove(a + K, s + lo, (size_t)(W - K) * sizeof(float));
    row_forward(a, a, W, width, pl, ex);
    memmove(a + lo, a + K, (size_t)(W - K) * sizeof(float));
    memset(a + K, 0, (size_t)(lo - K) * sizeof(float));
}

static float slot_weight(const Plan *pl, const Extra *ex) {
    if (pl->on[XS_KV]) return ex->w[XS_KV];
    if (pl->on[XS_SINK]) return ex->w[XS_SINK];
    if (pl->on[XS_NULL]) return ex->w[XS_NULL];
    return 0.0f;
}

/* Extra-key logits for query row q_t of head h. */
void attn_extra_logits(Extra *ex, const Plan *pl, const float *qt, int h, const float *sink_logit,
                       const float *kvb_k, int dh) {
    ex->z[XS_NULL] = 0.0f;
    ex->z[XS_SINK] = pl->on[XS_SINK] && sink_logit ? sink_logit[h] : 0.0f;
    ex->z[XS_KV] = pl->on[XS_KV] ? dot(qt, kvb_k + (size_t)h * (size_t)dh, dh) * pl->scale : 0.0f;
}

/* FoX: rows [r0, r1) of a block of scores s (row t at s + (t - r0) ld)
 * gain kb[j] on every visible key j <= t. */
static void add_key_bias(float *s, const float *kb, int ld, int r0, int r1) {
    for (int t = r0; t < r1; t++) {
        float *row = s + (size_t)(t - r0) * ld;
        for (int j = 0; j <= t; j++) row[j] += kb[j];
    }
}

float attention_alibi_slope(int h, int H) {
    return H > 0 ? exp2f(-8.0f * (float)(h + 1) / (float)H) : 0.0f;
}

/* ALiBi: rows [r0, r1) of a block of scores s (row t at s + (t - r0) ld)
 * gain -slope (t - j) on every key j <= t. */
static void add_alibi(float *s, float slope, int ld, int r0, int r1) {
    for (int t = r0; t < r1; t++) {
        float *row = s + (size_t)(t - r0) * ld;
        for (int j = 0; j <= t; j++) row[j] -= slope * (float)(t - j);
    }
}

/* Soft-capping: rows [r0, r1) of a block of scores s become
 * cap tanh(s / cap) on every key j <= t. */
static void soft_cap(float *s, float cap, int ld, int r0, int r1) {
    for (int t = r0; t < r1; t++) {
        float *row = s + (size_t)(t - r0) * ld;
        for (int j = 0; j <= t; j++) row[j] = cap * tanhf(row[j] / cap);
    }
}

/* One call's plan, shapes and strides. */
typedef struct {
    Plan pl;
    const AttnIn *in;
    int T, H, Hkv, dh, group, ldq, ldk, ldy;
} Ctx;

/* One head's strided views (batch b, head h). */
typedef struct {
    const float *q, *k, *v;
    float *y;
    size_t bh;
    int h;
} HeadView;

static Ctx make_ctx(const AttnIn *in, const AttnSpec *spec, const AttnShape *sh) {
    Ctx c = {.pl = attn_make_plan(spec, in->kvb_k, in->kvb_v, sh->T),
             .in = in,
             .T = sh->T,
             .H = sh->H,
             .Hkv = sh->Hkv,
             .dh = sh->dh};
    if (c.Hkv <= 0 || c.Hkv > c.H) c.Hkv = c.H; /* config_validate refuses these */
    c.group = c.H / c.Hkv;
    c.ldy = c.H * c.dh;
    c.ldq = in->ldq > 0 ? in->ldq : c.ldy;
    c.ldk = in->ldkv > 0 ? in->ldkv : c.Hkv * c.dh;
    return c;
}

static HeadView head_view(const Ctx *c, float *y, int b, int h) {
    int g = h / c->group < c->Hkv ? h / c->group : c->Hkv - 1;
    size_t T = (size_t)c->T;
    HeadView hv = {.bh = (size_t)b * c->H + h, .h = h};
    hv.q = c->in->q + (size_t)b * T * c->ldq + (size_t)h * c->dh;
    hv.k = c->in->k + (size_t)b * T * c->ldk + (size_t)g * c->dh;
    hv.v = c->in->v + (size_t)b * T * c->ldk + (size_t)g * c->dh;
    hv.y = y + (size_t)b * T * c->ldy + (size_t)h * c->dh;
    return hv;
}

/* sum[i] = the keys [0, r1) of rows [0, m) of a block of weights a (row
 * i at i ld), one chain per row from +0 in key order, ROWS_N rows' chains
 * side by side (rows.h). Row i is read up to the end of its group's last
 * row (r0 + its group's end keys); the keys past a row's own diagonal are
 * zeros by then and leave its sum as it was. A piece inside the width is
 * read whole (its lanes past the group's end are not added). */
SIMD_BODY void block_row_sums(float *sum, const float *a, int ld, int width, int r0, int m) {
    for (int i0 = 0; i0 < m; i0 += ROWS_N) {
        const int g = m - i0 < ROWS_N ? m - i0 : ROWS_N, n = r0 + i0 + g;
        RowVec acc = {0.0f}, v[ROWS_N];
        for (int j = 0; j < n; j += ROWS_N) {
            const int w = n - j < ROWS_N ? n - j : ROWS_N;
            const int wl = j + ROWS_N <= width ? ROWS_N : w;
            for (int r = 0; r < ROWS_N; r++)
                if (r < g) rows_load(&v[r], a + (size_t)(i0 + r) * ld + j, wl);
                else v[r] = (RowVec){0.0f};
            rows_colsum(&acc, v, w);
        }
        rows_store(sum + i0, &acc, g);
    }
}

/* Lanes per chunk of block_softmax's row loops: an AVX-512 vector. */
#define ROW_CHUNK 16

typedef float Chunk __attribute__((vector_size(ROW_CHUNK * sizeof(float))));
typedef int ChunkMask __attribute__((vector_size(ROW_CHUNK * sizeof(int))));

/* The lanes i < n of a chunk: all ones there, else zero. */
SIMD_BODY void chunk_lanes_below(ChunkMask *keep, int n) {
    const ChunkMask lane = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    *keep = lane < n;
}

/* *x = y where keep is set: a choice of bits, no arithmetic. */
SIMD_BODY void chunk_select(Chunk *x, ChunkMask keep, Chunk y) {
    ChunkMask yb, xb;
    memcpy(&yb, &y, sizeof yb);
    memcpy(&xb, x, sizeof xb);
    xb = (yb & keep) | (xb & ~keep);
    memcpy(x, &xb, sizeof xb);
}

/* *m = y in the lanes where y > *m (a maximum's step). */
SIMD_BODY void chunk_max(Chunk *m, Chunk y) { chunk_select(m, y > *m, y); }

/* 0.0f read through a volatile, so the compiler cannot turn a loop storing
 * it into a memset call (a call per row costs more than the stores). */
static volatile float chunk_zero = 0.0f;

/* max(-inf, s[0..n)) of row i of a block, ROW_CHUNK lanes at a time: the
 * whole chunks inside the row as they are, a last one that ends past n but
 * inside the row's width with its lanes past n left out, then one at a
 * time. A maximum ignores the order and the NaNs as row_max does, so this
 * is its value, but for the sign of a zero maximum, which no use of it can
 * see: s - (+0) and s - (-0) differ only at s = +-0, where both give
 * e^(+-0) = 1, and a comparison holds +0 == -0. */
SIMD_BODY float chunk_row_max(const float *s, int n, int width) {
    Chunk m, v, h;
    ChunkMask keep;
    int j = 0;
    for (int k = 0; k < ROW_CHUNK; k++) m[k] = -INFINITY;
    for (; j + ROW_CHUNK <= n; j += ROW_CHUNK) {
        memcpy(&v, s + j, sizeof v);
        chunk_max(&m, v);
    }
    if (j < n && j + ROW_CHUNK <= width) {
        h = m;
        memcpy(&v, s + j, sizeof v);
        chunk_lanes_below(&keep, n - j);
        chunk_select(&h, keep, v);
        chunk_max(&m, h);
        j += ROW_CHUNK;
    }
    /* the lanes' maxima halved four times: lane i against lane i + 8, 4, 2, 1 */
    chunk_max(&m,
              __builtin_shufflevector(m, m, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7));
    chunk_max(&m, __builtin_shufflevector(m, m, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3));
    chunk_max(&m, __builtin_shufflevector(m, m, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1));
    chunk_max(&m, __builtin_shufflevector(m, m, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0));
    float mx = m[0];
    for (; j < n; j++) mx = s[j] > mx ? s[j] : mx;
    return mx;
}

/* p[j..n) = e^(s - mx) and p[n..width) = 0 for a j that starts a chunk,
 * ROW_CHUNK lanes at a time: the whole chunks inside the row, a last one
 * that ends past n but inside the width (its lanes past n computed from
 * whatever s holds there and replaced by 0), the chunks past n as stores
 * of zeros, then one at a time. */
SIMD_BODY void chunk_exp_row(float *p, const float *s, float mx, int j, int n, int width) {
    const float zero = chunk_zero;
    Chunk zeros;
    for (int k = 0; k < ROW_CHUNK; k++) zeros[k] = zero;
    for (; j + ROW_CHUNK <= n; j += ROW_CHUNK)
        for (int k = 0; k < ROW_CHUNK; k++) p[j + k] = fast_expf_le88(s[j + k] - mx);
    if (j < n && j + ROW_CHUNK <= width) {
        for (int k = 0; k < ROW_CHUNK; k++) {
            float e = fast_expf_le88(s[j + k] - mx);
            p[j + k] = j + k < n ? e : zero;
        }
        j += ROW_CHUNK;
    }
    if (j >= n)
        for (; j + ROW_CHUNK <= width; j += ROW_CHUNK) memcpy(p + j, &zeros, sizeof zeros);
    for (; j < n; j++) p[j] = fast_expf_le88(s[j] - mx);
    for (; j < width; j++) p[j] = zero;
}

/* The whole chunks [0, n) of two rows (p0 from s0 less mx0, p1 from s1
 * less mx1) in one loop: two independent chains of exponentials side by
 * side, each element's operations as chunk_exp_row's. Returns the end of
 * the chunks done. */
SIMD_BODY int chunk_exp_pair(float *p0, const float *s0, float mx0, float *p1, const float *s1,
                             float mx1, int n) {
    int j = 0;
    for (; j + ROW_CHUNK <= n; j += ROW_CHUNK)
        for (int k = 0; k < ROW_CHUNK; k++) {
            p0[j + k] = fast_expf_le88(s0[j + k] - mx0);
            p1[j + k] = fast_expf_le88(s1[j + k] - mx1);
        }
    return j;
}

/* p[0..n) *= inv, chunked as chunk_exp_row (p[n..) stays 0). */
SIMD_BODY void chunk_scale_row(float *p, float inv, int n, int width) {
    Chunk v;
    ChunkMask keep;
    int j = 0;
    for (; j + ROW_CHUNK <= n; j += ROW_CHUNK) {
        memcpy(&v, p + j, sizeof v);
        v *= inv;
        memcpy(p + j, &v, sizeof v);
    }
    if (j < n && j + ROW_CHUNK <= width) {
        memcpy(&v, p + j, sizeof v);
        chunk_lanes_below(&keep, n - j);
        chunk_select(&v, keep, v * inv);
        memcpy(p + j, &v, sizeof v);
        j += ROW_CHUNK;
    }
    for (; j < n; j++) p[j] *= inv;
}

/* Row i (query t) of block_softmax: the max over the scores and the extra
 * logits (into *mx) and the extra logits (into *ex). */
SIMD_BODY void softmax_row_max(const Ctx *c, const HeadView *hv, const float *s, int width, int t,
                               int extra, Extra *ex, float *mx) {
    const Plan *pl = &c->pl;
    float top = chunk_row_max(s, t + 1, width);
    *ex = (Extra){{0.0f}, {0.0f}};
    if (extra) {
        attn_extra_logits(ex, pl, hv->q + (size_t)t * c->ldq, hv->h, c->in->sink_logit,
                          c->in->kvb_k, c->dh);
        for (int x = 0; x < XS_N; x++)
            if (pl->on[x] && ex->z[x] > top) top = ex->z[x];
    }
    *mx = top;
}

/* The exponentials of rows [0, g) of a group (row r: query t0 + r, at r
 * ld of s and a, maximum mx[r]) into a, zero from each row's diagonal up
 * to width: two rows at a time while their whole chunks last. */
SIMD_BODY void softmax_group_exp(const float *s, float *a, int ld, int width, int t0, int g,
                                 const float *mx) {
    for (int r = 0; r < g; r += 2) {
        const size_t r0 = (size_t)r * ld, r1 = r0 + (size_t)ld;
        int j = 0;
        if (r + 1 < g) {
            j = chunk_exp_pair(a + r0, s + r0, mx[r], a + r1, s + r1, mx[r + 1], t0 + r + 1);
            chunk_exp_row(a + r1, s + r1, mx[r + 1], j, t0 + r + 2, width);
        }
        chunk_exp_row(a + r0, s + r0, mx[r], j, t0 + r + 1, width);
    }
}

/* Plain softmax over rows [r0, r1) of a block (scores s, weights a, row t
 * at (t - r0) ld; a may alias s): row_forward's arithmetic row by row, the
 * slot weight into slot[t] when given and the kv weight into wkv. Each row's
 * sum is one chain over its keys in order, as in attn_row_softmax, but the
 * chains of a group of ROWS_N rows advance side by side (block_row_sums);
 * a group is done (maxima, exponentials two rows at a time, sums, scaling)
 * before the next, while its rows are in cache. Without extra keys a row
 * skips their logits. */
SIMD_BODY void block_softmax_body(const Ctx *c, const HeadView *hv, const float *s, float *a,
                                  int ld, int width, float *slot, float *wkv, int r0, int r1) {
    const Plan *pl = &c->pl;
    const int m = r1 - r0, extra = pl->on[XS_NULL] || pl->on[XS_SINK] || pl->on[XS_KV];
    Extra ex[ROWS_N];
    float mx[ROWS_N], sum[ROWS_N];
    for (int i0 = 0; i0 < m; i0 += ROWS_N) {
        const int g = m - i0 < ROWS_N ? m - i0 : ROWS_N;
        for (int r = 0; r < g; r++)
            softmax_row_max(c, hv, s + (size_t)(i0 + r) * ld, width, r0 + i0 + r, extra, &ex[r],
                            &mx[r]);
        softmax_group_exp(s + (size_t)i0 * ld, a + (size_t)i0 * ld, ld, width, r0 + i0, g, mx);
        block_row_sums(sum, a + (size_t)i0 * ld, ld, width, r0 + i0, g);
        for (int r = 0; r < g; r++) {
            const int t = r0 + i0 + r;
            float su = sum[r], *ar = a + (size_t)(i0 + r) * ld;
            for (int x = 0; x < XS_N; x++) { /* no call where a key is off */
                ex[r].w[x] = pl->on[x] ? expf(ex[r].z[x] - mx[r]) : 0.0f;
                su += ex[r].w[x];
            }
            float inv = 1.0f / su;
            chunk_scale_row(ar, inv, t + 1, width);
            for (int x = 0; x < XS_N; x++) ex[r].w[x] *= inv;
            if (slot) slot[t] = slot_weight(pl, &ex[r]);
            wkv[t - r0] = ex[r].w[XS_KV];
        }
    }
}
SIMD_KERNEL_STATIC(block_softmax,
                   (const Ctx *c, const HeadView *hv, const float *s, float *a, int ld, int width,
                    float *slot, float *wkv, int r0, int r1),
                   (c, hv, s, a, ld, width, slot, wkv, r0, r1))

/* Query rows [r0, r1) of one head: the scores s[r0:r1, 0:r1] = scale q k^T
 * (row t at s + (t - r0) ld; k's panels from kp when it holds them), their weights into a (the same
 * layout; a may alias s but for stick-breaking), zero from key r1 up to width, the slot weight of
 * row t into slot[t] when slot is given, then y[r0:r1] = a v. */
static void block_forward(const Ctx *c, const HeadView *hv, const GemmPacks *kp, float *s, float *a,
                          int ld, int width, float *slot, int r0, int r1) {
    const Plan *pl = &c->pl;
    const int m = r1 - r0, dh = c->dh, ldq = c->ldq;
    float wkv[ATT_BLOCK]; /* kv-bias weights of the block's rows */
    gemm_lower_packed(kp, 0, m, r1, dh, pl->scale, hv->q + (size_t)r0 * ldq, ldq, hv->k, c->ldk,
                      0.0f, s, ld, r0);
    if (pl->softcap > 0) soft_cap(s, pl->softcap, ld, r0, r1);
    if (pl->kb) add_key_bias(s, pl->kb + hv->bh * c->T, ld, r0, r1);
    if (pl->alibi) add_alibi(s, attention_alibi_slope(hv->h, c->H), ld, r0, r1);
    if (pl->base == BASE_SOFTMAX && !pl->window && !pl->lane_sums)
        block_softmax(c, hv, s, a, ld, width, slot, wkv, r0, r1);
    else
        for (int t = r0; t < r1; t++) {
            Extra ex = {{0.0f}, {0.0f}};
            size_t row = (size_t)(t - r0) * ld;
            attn_extra_logits(&ex, pl, hv->q + (size_t)t * ldq, hv->h, c->in->sink_logit,
                              c->in->kvb_k, dh);
            if (pl->window) attn_row_forward_window(a + row, s + row, t, width, pl, &ex);
            else row_forward(a + row, s + row, t + 1, width, pl, &ex);
            if (slot) slot[t] = slot_weight(pl, &ex);
            wkv[t - r0] = ex.w[XS_KV];
        }
    gemm_zeros(0, m, dh, r1, 1.0f, a, ld, hv->v, c->ldk, 0.0f, hv->y + (size_t)r0 * c->ldy, c->ldy,
               GEMM_ZEROS_TRAILING, r0);
    if (!pl->on[XS_KV]) return;
    const float *vx = c->in->kvb_v + (size_t)hv->h * dh;
    for (int t = r0; t < r1; t++) {
        float *yt = hv->y + (size_t)t * c->ldy, w = wkv[t - r0];
        for (int i = 0; i < dh; i++) yt[i] += w * vx[i];
    }
}

void attention_forward(const AttnOut *out, const AttnIn *in, const AttnSpec *spec,
                       const AttnShape *sh) {
    if (sh->B <= 0 || sh->T <= 0 || sh->H <= 0 || sh->dh <= 0) return;
    int prof = opprof_enter(OPPROF_ATTENTION);
    Ctx c = make_ctx(in, spec, sh);
    const int T = c.T;
    const size_t TT = (size_t)T * (size_t)T;
    _Alignas(64) float pk[ATT_PACK]; /* a kv head's keys, packed for its query blocks' scores */
    GemmPack one;
    GemmPacks kp;
    gemm_packs_over(&kp, &one, 1, pk, ATT_PACK);
    for (int b = 0; b < sh->B; b++)
        for (int h = 0; h < c.H; h++) {
            HeadView hv = head_view(&c, out->y, b, h);
            gemm_packs_only(&kp, hv.k, T, c.dh, c.ldk);
            float *sb = out->preatt + hv.bh * TT, *ab = out->att + hv.bh * TT;
            float *slot = out->slot ? out->slot + hv.bh * T : NULL;
            for (int r0 = 0; r0 < T; r0 += ATT_BLOCK) {
                int r1 = r0 + ATT_BLOCK < T ? r0 + ATT_BLOCK : T;
                block_forward(&c, &hv, &kp, sb + (size_t)r0 * T, ab + (size_t)r0 * T, T,
                              spec->right_zeros ? r1 : T, slot, r0, r1);
            }
        }
    opprof_leave(prof);
}

/* ---- the forward without the maps (attention_keep) ---- */

size_t attention_keep_scratch(int T, int threads) {
    return (size_t)(threads < 1 ? 1 : threads) * 2 * ATT_BLOCK * (size_t)T;
}

typedef struct {
    const Ctx *c;
    const AttnKeep *k;
    int B, nblk;
} KeepJob;

/* Rows [r0, r1) of head bh after block_forward: the first column and the
 * rows of the first M queries. */
static void keep_rows(const KeepJob *j, size_t bh, const float *a, int ld, int r0, int r1) {
    const AttnKeep *k = j->k;
    const int T = j->c->T, M = k->M;
    for (int t = r0; t < r1; t++) {
        const float *row = a + (size_t)(t - r0) * ld;
        k->first_col[bh * T + t] = row[0];
        if (!k->maps || t >= M) continue;
        float *dst = k->maps + (bh * M + t) * M;
        int n = r1 < M ? r1 : M;
        memcpy(dst, row, (size_t)n * sizeof(float));
        if (n < M) memset(dst + n, 0, (size_t)(M - n) * sizeof(float));
    }
}

/* Workers [w0, w1): worker w takes tasks w, w + n, ... (task = row block
 * x head, later blocks first: they cost more) with its own scratch. */
static void keep_workers(void *ctx, size_t w0, size_t w1) {
    const KeepJob *j = ctx;
    const Ctx *c = j->c;
    const int n = j->k->threads < 1 ? 1 : j->k->threads, heads = j->B * c->H;
    const int tasks = heads * j->nblk, T = c->T;
    for (size_t w = w0; w < w1; w++) {
        float *s = j->k->scratch + w * 2 * ATT_BLOCK * (size_t)T;
        float *a = c->pl.base == BASE_STICKBREAK ? s + (size_t)ATT_BLOCK * T : s;
        for (int i = (int)w; i < tasks; i += n) {
            int blk = j->nblk - 1 - i / heads, bh = i % heads;
            int r0 = blk * ATT_BLOCK, r1 = r0 + ATT_BLOCK < T ? r0 + ATT_BLOCK : T;
            HeadView hv = head_view(c, j->k->y, bh / c->H, bh % c->H);
            float *slot = j->k->slot ? j->k->slot + hv.bh * T : NULL;
            block_forward(c, &hv, NULL, s, a, r1, r1, slot, r0, r1);
            keep_rows(j, hv.bh, a, r1, r0, r1);
        }
    }
}

void attention_keep(const AttnKeep *out, const AttnIn *in, const AttnSpec *spec,
                    const AttnShape *sh) {
    if (sh->B <= 0 || sh->T <= 0 || sh->H <= 0 || sh->dh <= 0) return;
    Ctx c = make_ctx(in, spec, sh);
    c.pl.lane_sums = 1;
    KeepJob j = {&c, out, sh->B, (c.T + ATT_BLOCK - 1) / ATT_BLOCK};
    size_t n = out->threads < 1 ? 1 : (size_t)out->threads;
    parallel_for((int)n, n, keep_workers, &j);
}
