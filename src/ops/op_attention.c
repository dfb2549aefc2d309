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
 * needs keys [0, r1), which skips most of the masked upper triangle.
 * attention_forward keeps every map for the backward; attention_keep (the
 * inference of a pretrained model) runs the same blocks over threads and
 * keeps only the first column and the first M rows of each map.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fastexp.h"
#include "opprof.h"
#include "ops.h"
#include "simd.h"
#include "parallel.h"

#define ATT_BLOCK 64

enum { XS_NULL = 0, XS_SINK, XS_KV, XS_N };
enum { BASE_SOFTMAX = 0, BASE_CLIPPED, BASE_SIGMOID, BASE_SOFTPICK, BASE_STICKBREAK };

typedef struct {
    int base;
    int on[XS_N];
    int window, keep; /* AttnSpec's window (0: off) */
    int alibi;        /* add ALiBi's distance biases (AttnSpec) */
    int lane_sums;    /* softmax sums in lanes (attention_keep) */
    float scale, gamma, eps, lnT;
    const float *kb; /* FoX per-key bias [B,H,T] or NULL, and its gradient */
    float *dkb;
} Plan;

/* Logits z and weights w of the extra keys of one row. */
typedef struct {
    float z[XS_N];
    float w[XS_N];
} Extra;

/* A missing sink_logit reads as b = 0; kv-bias needs both k' and v'. */
static Plan make_plan(const AttnSpec *sp, const float *kvb_k, const float *kvb_v, int T) {
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
    p.on[XS_NULL] = sp->normaliser == NORMZ_SOFTMAX1;
    p.on[XS_SINK] = sp->has_sink_logit || sp->normaliser == NORMZ_SINK_LOGIT;
    p.on[XS_KV] = sp->has_kv_bias && kvb_k && kvb_v;
    return p;
}

static inline float sigm(float x) { return 1.0f / (1.0f + expf(-x)); }
static inline float clamp01(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }

static float dot(const float *a, const float *b, int n) {
    float s = 0.0f;
    for (int i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

#define MAX_LANES 8

/* p[j] = e^(s[j] - mx) (exp_rows); exp_shifted also returns their sum.
 * The hot loop of the forward.
 * lanes: the sum over MAX_LANES partial sums, which vectorises (attention
 * without maps: inference); else in index order, as training always adds. */
SIMD_BODY void exp_rows_body(float *p, const float *s, float mx, int n) {
    for (int i = 0; i < n; i++) p[i] = fast_expf(s[i] - mx);
}
SIMD_KERNEL_STATIC(exp_rows, (float *p, const float *s, float mx, int n), (p, s, mx, n))

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

/* max(-inf, s[0..n)) over MAX_LANES independent chains, so the loop is not
 * bound by one compare's latency; a maximum does not depend on the order,
 * so this is the sequential loop's value bit for bit. */
static float row_max(const float *s, int n) {
    float m[MAX_LANES];
    int j = 0;
    for (int k = 0; k < MAX_LANES; k++) m[k] = -INFINITY;
    for (; j + MAX_LANES <= n; j += MAX_LANES)
        for (int k = 0; k < MAX_LANES; k++) m[k] = s[j + k] > m[k] ? s[j + k] : m[k];
    for (; j < n; j++) m[0] = s[j] > m[0] ? s[j] : m[0];
    float mx = m[0];
    for (int k = 1; k < MAX_LANES; k++) mx = m[k] > mx ? m[k] : mx;
    return mx;
}

/* p[0..n) and ex->w = softmax over the scores and the extra logits. */
SIMD_BODY void row_softmax_body(float *p, const float *s, int n, const Plan *pl, Extra *ex) {
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
SIMD_KERNEL_STATIC(row_softmax, (float *p, const float *s, int n, const Plan *pl, Extra *ex),
                   (p, s, n, pl, ex))

/* Softpick with the shift m = max(0, max s): e^{s} - 1 = e^m (e^{s-m} - e^{-m}),
 * so a = relu(u) / (sum |u| + eps e^{-m}) with u = e^{s-m} - e^{-m}, exactly
 * the unshifted formula but with no overflow. Writes e^{s-m} into e (may
 * alias a) when given, and returns the shifted denominator D'. */
static float row_softpick(float *a, const float *s, int n, const Plan *pl, Extra *ex, float *ex_e) {
    float m = 0.0f;
    for (int j = 0; j < n; j++) m = s[j] > m ? s[j] : m;
    for (int x = 0; x < XS_N; x++)
        if (pl->on[x] && ex->z[x] > m) m = ex->z[x];
    float em = expf(-m), den = 0.0f;
    for (int j = 0; j < n; j++) {
        float u = expf(s[j] - m) - em;
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
    case BASE_SOFTMAX: row_softmax(a, s, n, pl, ex); break;
    case BASE_CLIPPED: {
        float k = 1.0f - pl->gamma, g = pl->gamma;
        row_softmax(a, s, n, pl, ex);
        for (int j = 0; j < n; j++) a[j] = clamp01(k * a[j] + g);
        for (int x = 0; x < XS_N; x++) ex->w[x] = pl->on[x] ? clamp01(k * ex->w[x] + g) : 0.0f;
        break;
    }
    case BASE_SIGMOID:
        for (int j = 0; j < n; j++) a[j] = sigm(s[j] - pl->lnT);
        for (int x = 0; x < XS_N; x++) ex->w[x] = pl->on[x] ? sigm(ex->z[x] - pl->lnT) : 0.0f;
        break;
    case BASE_SOFTPICK: row_softpick(a, s, n, pl, ex, NULL); break;
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
static void row_forward_window(float *a, float *s, int t, int width, const Plan *pl, Extra *ex) {
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
static void extra_logits(Extra *ex, const Plan *pl, const float *qt, int h, const float *sink_logit,
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
    Ctx c = {.pl = make_plan(spec, in->kvb_k, in->kvb_v, sh->T),
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

/* Plain softmax over rows [r0, r1) of a block (scores s, weights a, row t
 * at (t - r0) ld; a may alias s): row_forward's arithmetic row by row, the
 * slot weight into slot[t] when given and the kv weight into wkv. Each row's
 * sum is one chain over its keys in order, as in row_softmax, but the rows'
 * chains advance side by side instead of one after another; keys right of
 * a row's diagonal are zeros by then and leave its sum as it was. */
static void block_softmax(const Ctx *c, const HeadView *hv, const float *s, float *a, int ld,
                          int width, float *slot, float *wkv, int r0, int r1) {
    const Plan *pl = &c->pl;
    const int m = r1 - r0;
    Extra ex[ATT_BLOCK];
    float mx[ATT_BLOCK], sum[ATT_BLOCK];
    for (int i = 0; i < m; i++) {
        const int t = r0 + i, n = t + 1;
        const size_t row = (size_t)i * ld;
        ex[i] = (Extra){{0.0f}, {0.0f}};
        extra_logits(&ex[i], pl, hv->q + (size_t)t * c->ldq, hv->h, c->in->sink_logit, c->in->kvb_k,
                     c->dh);
        float top = row_max(s + row, n);
        for (int x = 0; x < XS_N; x++)
            if (pl->on[x] && ex[i].z[x] > top) top = ex[i].z[x];
        mx[i] = top;
        exp_rows(a + row, s + row, top, n);
        for (int j = n; j < width; j++) a[row + j] = 0.0f;
        sum[i] = 0.0f;
    }
    for (int j = 0; j < r1; j++)
        for (int i = 0; i < m; i++) sum[i] += a[(size_t)i * ld + j];
    for (int i = 0; i < m; i++) {
        const int t = r0 + i, n = t + 1;
        float *ar = a + (size_t)i * ld, su = sum[i];
        for (int x = 0; x < XS_N; x++) {
            ex[i].w[x] = pl->on[x] ? expf(ex[i].z[x] - mx[i]) : 0.0f;
            su += ex[i].w[x];
        }
        float inv = 1.0f / su;
        for (int j = 0; j < n; j++) ar[j] *= inv;
        for (int x = 0; x < XS_N; x++) ex[i].w[x] *= inv;
        if (slot) slot[t] = slot_weight(pl, &ex[i]);
        wkv[i] = ex[i].w[XS_KV];
    }
}

/* Query rows [r0, r1) of one head: the scores s[r0:r1, 0:r1] = scale q k^T
 * (row t at s + (t - r0) ld), their weights into a (the same layout; a may
 * alias s but for stick-breaking), zero from key r1 up to width, the slot
 * weight of row t into slot[t] when slot is given, then y[r0:r1] = a v. */
static void block_forward(const Ctx *c, const HeadView *hv, float *s, float *a, int ld, int width,
                          float *slot, int r0, int r1) {
    const Plan *pl = &c->pl;
    const int m = r1 - r0, dh = c->dh, ldq = c->ldq;
    float wkv[ATT_BLOCK]; /* kv-bias weights of the block's rows */
    gemm(0, 1, m, r1, dh, pl->scale, hv->q + (size_t)r0 * ldq, ldq, hv->k, c->ldk, 0.0f, s, ld);
    if (pl->kb) add_key_bias(s, pl->kb + hv->bh * c->T, ld, r0, r1);
    if (pl->alibi) add_alibi(s, attention_alibi_slope(hv->h, c->H), ld, r0, r1);
    if (pl->base == BASE_SOFTMAX && !pl->window && !pl->lane_sums)
        block_softmax(c, hv, s, a, ld, width, slot, wkv, r0, r1);
    else
        for (int t = r0; t < r1; t++) {
            Extra ex = {{0.0f}, {0.0f}};
            size_t row = (size_t)(t - r0) * ld;
            extra_logits(&ex, pl, hv->q + (size_t)t * ldq, hv->h, c->in->sink_logit, c->in->kvb_k,
                         dh);
            if (pl->window) row_forward_window(a + row, s + row, t, width, pl, &ex);
            else row_forward(a + row, s + row, t + 1, width, pl, &ex);
            if (slot) slot[t] = slot_weight(pl, &ex);
            wkv[t - r0] = ex.w[XS_KV];
        }
    gemm(0, 0, m, dh, r1, 1.0f, a, ld, hv->v, c->ldk, 0.0f, hv->y + (size_t)r0 * c->ldy, c->ldy);
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
    for (int b = 0; b < sh->B; b++)
        for (int h = 0; h < c.H; h++) {
            HeadView hv = head_view(&c, out->y, b, h);
            float *sb = out->preatt + hv.bh * TT, *ab = out->att + hv.bh * TT;
            float *slot = out->slot ? out->slot + hv.bh * T : NULL;
            for (int r0 = 0; r0 < T; r0 += ATT_BLOCK) {
                int r1 = r0 + ATT_BLOCK < T ? r0 + ATT_BLOCK : T;
                block_forward(&c, &hv, sb + (size_t)r0 * T, ab + (size_t)r0 * T, T, T, slot, r0,
                              r1);
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
            block_forward(c, &hv, s, a, r1, r1, slot, r0, r1);
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

/* Softmax backward on a row: d holds da on entry and ds on exit;
 * dpx are the upstream gradients of the extra weights, dsx receives the
 * gradients of their logits. */
static void softmax_bwd(float *d, const float *p, int n, const Plan *pl, const float *pw,
                        const float *dpx, float *dsx) {
    float S = 0.0f;
    for (int j = 0; j < n; j++) S += p[j] * d[j];
    for (int x = 0; x < XS_N; x++)
        if (pl->on[x]) S += pw[x] * dpx[x];
    for (int j = 0; j < n; j++) d[j] = p[j] * (d[j] - S);
    for (int x = 0; x < XS_N; x++) dsx[x] = pl->on[x] ? pw[x] * (dpx[x] - S) : 0.0f;
}

/* Weights of the extra keys under plain softmax, from the saved slot
 * weight; with both a sink and a kv key the sink takes the mass that is
 * left (times sigmoid(b) when softmax1's null key shares it). */
static void softmax_extra_from_slot(Extra *ex, const Plan *pl, const float *a, int n, float slotw) {
    ex->w[XS_NULL] = 0.0f;
    if (pl->on[XS_KV] && pl->on[XS_SINK]) {
        float rest = 1.0f;
        for (int j = 0; j < n; j++) rest -= a[j];
        rest -= slotw;
        rest = rest < 0.0f ? 0.0f : rest;
        ex->w[XS_KV] = slotw;
        ex->w[XS_SINK] = pl->on[XS_NULL] ? rest * sigm(ex->z[XS_SINK]) : rest;
    } else {
        ex->w[XS_KV] = pl->on[XS_KV] ? slotw : 0.0f;
        ex->w[XS_SINK] = pl->on[XS_SINK] ? slotw : 0.0f;
    }
}

/* One row of the backward: d holds da[0..n) on entry, ds[0..n) on exit
 * (gradient w.r.t. the scaled scores). da_kv is the upstream gradient of
 * the kv weight. Fills ex->w with the extra weights and dsx with the
 * gradients of the extra logits. tmp is scratch of n floats. */
static void row_backward(float *d, const float *a, const float *s, int n, const Plan *pl, Extra *ex,
                         const float *slotw, float da_kv, float *dsx, float *tmp) {
    float dpx[XS_N] = {0.0f, 0.0f, da_kv};
    switch (pl->base) {
    case BASE_SOFTMAX:
        if (!pl->on[XS_KV] && !pl->on[XS_SINK])
            ex->w[XS_NULL] = ex->w[XS_SINK] = ex->w[XS_KV] = 0.0f; /* unused */
        else if (slotw) softmax_extra_from_slot(ex, pl, a, n, *slotw);
        else row_softmax(tmp, s, n, pl, ex);
        softmax_bwd(d, a, n, pl, ex->w, dpx, dsx);
        break;
    case BASE_CLIPPED: {
        /* a = clip(k p + g): dp = k da where the clip does not bind */
        float k = 1.0f - pl->gamma, g = pl->gamma;
        Extra pe = *ex;
        row_softmax(tmp, s, n, pl, &pe);
        for (int j = 0; j < n; j++) {
            float u = k * tmp[j] + g;
            d[j] = (u > 0.0f && u < 1.0f) ? k * d[j] : 0.0f;
        }
        for (int x = 0; x < XS_N; x++) {
            float u = k * pe.w[x] + g;
            ex->w[x] = pl->on[x] ? clamp01(u) : 0.0f;
            dpx[x] = (u > 0.0f && u < 1.0f) ? k * dpx[x] : 0.0f;
        }
        softmax_bwd(d, tmp, n, pl, pe.w, dpx, dsx);
        break;
    }
    case BASE_SIGMOID:
        for (int j = 0; j < n; j++) d[j] *= a[j] * (1.0f - a[j]);
        for (int x = 0; x < XS_N; x++) {
            ex->w[x] = pl->on[x] ? sigm(ex->z[x] - pl->lnT) : 0.0f;
            dsx[x] = dpx[x] * ex->w[x] * (1.0f - ex->w[x]);
        }
        break;
    case BASE_SOFTPICK: {
        /* ds_j = e^{s_j}/D [1(u_j > 0) da_j - sign(u_j) S], S = sum a da */
        float ee[XS_N];
        float den = row_softpick(tmp, s, n, pl, ex, ee);
        float inv = 1.0f / den, m = 0.0f;
        for (int j = 0; j < n; j++) m = s[j] > m ? s[j] : m;
        for (int x = 0; x < XS_N; x++)
            if (pl->on[x] && ex->z[x] > m) m = ex->z[x];
        float em = expf(-m), S = 0.0f;
        for (int j = 0; j < n; j++) S += tmp[j] * d[j];
        for (int x = 0; x < XS_N; x++) S += ex->w[x] * dpx[x];
        for (int j = 0; j < n; j++) {
            float e = expf(s[j] - m), u = e - em;
            float sg = u > 0.0f ? 1.0f : (u < 0.0f ? -1.0f : 0.0f);
            d[j] = e * inv * ((u > 0.0f ? d[j] : 0.0f) - sg * S);
        }
        for (int x = 0; x < XS_N; x++) {
            float u = ee[x] - em;
            float sg = u > 0.0f ? 1.0f : (u < 0.0f ? -1.0f : 0.0f);
            dsx[x] = pl->on[x] ? ee[x] * inv * ((u > 0.0f ? dpx[x] : 0.0f) - sg * S) : 0.0f;
        }
        break;
    }
    case BASE_STICKBREAK:
        stickbreak_row_backward(d, a, s, n);
        for (int x = 0; x < XS_N; x++) ex->w[x] = 0.0f, dsx[x] = 0.0f;
        break;
    }
}

/* row_backward on query row t's visible keys, as row_forward_window saw
 * them: the whole row [0, t] without a window; [lo, t] in place under a
 * sliding window; under streaming, [0, keep) and [lo, t] gathered into
 * tmp (the gradient into d[0, window), moved back after). Keys outside
 * get a zero gradient. tmp: 3 (t + 1) floats. */
static void row_backward_window(float *d, const float *a, const float *s, int t, const Plan *pl,
                                Extra *ex, const float *slotw, float da_kv, float *dsx,
                                float *tmp) {
    const int W = pl->window, K = pl->keep, lo = t - (W - K) + 1;
    if (!W || lo <= K) {
        row_backward(d, a, s, t + 1, pl, ex, slotw, da_kv, dsx, tmp);
        return;
    }
    if (K == 0) {
        row_backward(d + lo, a + lo, s + lo, W, pl, ex, slotw, da_kv, dsx, tmp);
        memset(d, 0, (size_t)lo * sizeof(float));
        return;
    }
    float *ga = tmp + W, *gs = ga + W;
    memcpy(ga, a, (size_t)K * sizeof(float));
    memcpy(ga + K, a + lo, (size_t)(W - K) * sizeof(float));
    memcpy(gs, s, (size_t)K * sizeof(float));
    memcpy(gs + K, s + lo, (size_t)(W - K) * sizeof(float));
    memmove(d + K, d + lo, (size_t)(W - K) * sizeof(float));
    row_backward(d, ga, gs, W, pl, ex, slotw, da_kv, dsx, tmp);
    memmove(d + lo, d + K, (size_t)(W - K) * sizeof(float));
    memset(d + K, 0, (size_t)(lo - K) * sizeof(float));
}

/* The backward's inputs: the forward's own (AttnIn, read packed: ldq and
 * ldk here, not the AttnIn's), what it saved (AttnSaved) and dy; its
 * outputs are an AttnGrad (any of them NULL: that gradient is not wanted). */
typedef struct {
    const AttnIn *x;
    const AttnSaved *sv;
    const float *dy;
    int T, H, Hkv, dh, ldq, ldk, group;
    int has_slot_w; /* softmax with a kv/sink key: extra weights from slot */
} BwdIn;

/* One (b, h) of the backward: strided head views (leading dims ldq/ldk,
 * as in the forward) and this head's saved [T, T] scores and weights. */
typedef struct {
    const BwdIn *in;
    const float *q, *k, *v, *dy, *s, *a, *slot, *kx, *vx;
    float *dkb;      /* FoX: this head's key-bias gradient [T], or NULL */
    size_t boq, bok; /* offsets of the q-head and kv-head views */
    int h;
} HeadBwd;

static HeadBwd head_bwd(const BwdIn *in, const Plan *pl, int b, int h) {
    int T = in->T, dh = in->dh, Hkv = in->Hkv;
    int g = h / in->group < Hkv ? h / in->group : Hkv - 1;
    size_t bh = (size_t)b * in->H + h, TT = (size_t)T * (size_t)T;
    HeadBwd hv = {.in = in, .h = h};
    hv.boq = (size_t)b * T * in->ldq + (size_t)h * dh;
    hv.bok = (size_t)b * T * in->ldk + (size_t)g * dh;
    hv.q = in->x->q + hv.boq, hv.dy = in->dy + hv.boq;
    hv.k = in->x->k + hv.bok, hv.v = in->x->v + hv.bok;
    hv.s = in->sv->preatt + bh * TT, hv.a = in->sv->att + bh * TT;
    hv.slot = in->has_slot_w ? in->sv->slot + bh * T : NULL;
    hv.kx = pl->on[XS_KV] ? in->x->kvb_k + (size_t)h * dh : NULL;
    hv.vx = pl->on[XS_KV] ? in->x->kvb_v + (size_t)h * dh : NULL;
    hv.dkb = pl->dkb ? pl->dkb + bh * T : NULL;
    return hv;
}

/* Row t's gradients through its extra keys: the sink logit, and for
 * kv-bias the query (through k'), k' and v'. w_kv is the kv weight. */
static void extra_key_grads(const AttnGrad *go, const Plan *pl, const HeadBwd *hv, int t,
                            const float *dsx, float w_kv) {
    int h = hv->h, dh = hv->in->dh, ldq = hv->in->ldq;
    const float *qt = hv->q + (size_t)t * ldq, *dyt = hv->dy + (size_t)t * ldq;
    if (go->dsink_logit && pl->on[XS_SINK]) go->dsink_logit[h] += dsx[XS_SINK];
    if (!pl->on[XS_KV]) return;
    float c = dsx[XS_KV] * pl->scale;
    if (go->dq) {
        float *dqt = go->dq + hv->boq + (size_t)t * ldq;
        for (int i = 0; i < dh; i++) dqt[i] += c * hv->kx[i];
    }
    if (go->dkvb_k) {
        float *d = go->dkvb_k + (size_t)h * dh;
        for (int i = 0; i < dh; i++) d[i] += c * qt[i];
    }
    if (go->dkvb_v) {
        float *d = go->dkvb_v + (size_t)h * dh;
        for (int i = 0; i < dh; i++) d[i] += w_kv * dyt[i];
    }
}

/* Rows [r0, r1): da (block rows, leading dim T) turns from da into ds,
 * zeroed right of the diagonal so the block sgemms see no stale values. */
static void bwd_rows(float *da, float *tmp, const AttnGrad *go, const Plan *pl, const HeadBwd *hv,
                     int r0, int r1) {
    const BwdIn *in = hv->in;
    int T = in->T, dh = in->dh, ldq = in->ldq;
    for (int t = r0; t < r1; t++) {
        Extra ex;
        float dsx[XS_N];
        float *dr = da + (size_t)(t - r0) * T;
        extra_logits(&ex, pl, hv->q + (size_t)t * ldq, hv->h, in->x->sink_logit, in->x->kvb_k, dh);
        float da_kv = pl->on[XS_KV] ? dot(hv->dy + (size_t)t * ldq, hv->vx, dh) : 0.0f;
        row_backward_window(dr, hv->a + (size_t)t * T, hv->s + (size_t)t * T, t, pl, &ex,
                            hv->slot ? hv->slot + t : NULL, da_kv, dsx, tmp);
        for (int j = t + 1; j < r1; j++) dr[j] = 0.0f;
        if (hv->dkb)
            for (int j = 0; j <= t; j++) hv->dkb[j] += dr[j];
        extra_key_grads(go, pl, hv, t, dsx, ex.w[XS_KV]);
    }
}

/* bwd_rows for plain softmax (no extra key, no key bias): ds = a (da - S)
 * with S_t = sum over the row's keys of a da, one chain per row in key
 * order as softmax_bwd adds, but the rows' chains advance side by side. */
static void bwd_rows_plain(float *da, const HeadBwd *hv, int r0, int r1) {
    const int T = hv->in->T, m = r1 - r0;
    float S[ATT_BLOCK];
    for (int i = 0; i < m; i++) S[i] = 0.0f;
    for (int j = 0; j < r1; j++)
        for (int i = j > r0 ? j - r0 : 0; i < m; i++) /* rows t = r0 + i >= j */
            S[i] += hv->a[(size_t)(r0 + i) * T + j] * da[(size_t)i * T + j];
    for (int i = 0; i < m; i++) {
        const int t = r0 + i;
        const float *p = hv->a + (size_t)t * T;
        float *d = da + (size_t)i * T;
        for (int j = 0; j <= t; j++) d[j] = p[j] * (d[j] - S[i]);
        for (int j = t + 1; j < r1; j++) d[j] = 0.0f;
    }
}

/* Row block [r0, r1) of one head:
 *   da = dy v^T;  dv += a^T dy;  ds = row_backward(da);
 *   dq += scale ds k;  dk += scale ds^T q. */
static void bwd_block(float *da, float *tmp, const AttnGrad *go, const Plan *pl, const HeadBwd *hv,
                      int r0, int r1) {
    const BwdIn *in = hv->in;
    int m = r1 - r0, T = in->T, dh = in->dh, ldq = in->ldq, ldk = in->ldk;
    const float *dyr = hv->dy + (size_t)r0 * ldq;
    /* da[0:m, 0:r1] = dy[r0:r1] v[0:r1]^T */
    gemm(0, 1, m, r1, dh, 1.0f, dyr, ldq, hv->v, ldk, 0.0f, da, T);
    if (go->dv)
        gemm(1, 0, r1, dh, m, 1.0f, hv->a + (size_t)r0 * T, T, dyr, ldq, 1.0f, go->dv + hv->bok,
             ldk);
    if (pl->base == BASE_SOFTMAX && !pl->on[XS_NULL] && !pl->on[XS_SINK] && !pl->on[XS_KV] &&
        !hv->dkb)
        bwd_rows_plain(da, hv, r0, r1);
    else bwd_rows(da, tmp, go, pl, hv, r0, r1);
    if (go->dq)
        gemm(0, 0, m, dh, r1, pl->scale, da, T, hv->k, ldk, 1.0f,
             go->dq + hv->boq + (size_t)r0 * ldq, ldq);
    if (go->dk)
        gemm(1, 0, r1, dh, m, pl->scale, da, T, hv->q + (size_t)r0 * ldq, ldq, 1.0f,
             go->dk + hv->bok, ldk);
}

size_t attention_backward_scratch(int T) {
    int blk = T < ATT_BLOCK ? T : ATT_BLOCK;
    return (size_t)blk * (size_t)T + 3 * (size_t)T;
}

/* Per (b, h), row blocks of ATT_BLOCK queries as in the forward (bwd_block). */
void attention_backward(const AttnGrad *g, const float *dy, const AttnSaved *saved,
                        const AttnIn *in, const AttnSpec *spec, const AttnShape *sh,
                        float *scratch) {
    const int T = sh->T, H = sh->H, dh = sh->dh;
    if (sh->B <= 0 || T <= 0 || H <= 0 || dh <= 0) return;
    int prof = opprof_enter(OPPROF_ATTENTION);
    Plan pl = make_plan(spec, in->kvb_k, in->kvb_v, T);
    int Hkv = sh->Hkv <= 0 || sh->Hkv > H ? H : sh->Hkv; /* config_validate refuses these */
    int blk = T < ATT_BLOCK ? T : ATT_BLOCK;
    /* da / ds of one row block, then one row of scratch */
    float *da = scratch, *tmp = scratch + (size_t)blk * T; /* 3 T floats */
    BwdIn bin = {.x = in,
                 .sv = saved,
                 .dy = dy,
                 .T = T,
                 .H = H,
                 .Hkv = Hkv,
                 .dh = dh,
                 .ldq = H * dh,
                 .ldk = Hkv * dh,
                 .group = H / Hkv,
                 .has_slot_w =
                     saved->slot && pl.base == BASE_SOFTMAX && (pl.on[XS_KV] || pl.on[XS_SINK])};
    for (int b = 0; b < sh->B; b++)
        for (int h = 0; h < H; h++) {
            HeadBwd hv = head_bwd(&bin, &pl, b, h);
            for (int r0 = 0; r0 < T; r0 += blk)
                bwd_block(da, tmp, g, &pl, &hv, r0, r0 + blk < T ? r0 + blk : T);
        }
    opprof_leave(prof);
}
