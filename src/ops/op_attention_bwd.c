/* op_attention_bwd.c: attention_backward, the backward of
 * attention_forward (op_attention.c) through the same per-row normalisers
 * (attn_rows.h): per (batch, head), blocks of ATT_BLOCK query rows.
 *
 * From dy[B,T,H,dh] and the saved weights a and scores s [B,H,T,T]:
 *   da = dy v^T, ds = the normaliser's row backward of da,
 *   dq = scale ds k, dk = scale ds^T q, dv = a^T dy,
 * plus the extra keys' gradients (sink logit, kv-bias k', v') and FoX's
 * per-key bias. A window's row is differentiated over its visible keys.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attn_rows.h"
#include "exactexp.h"
#include "opprof.h"
#include "ops.h"
#include "rows.h"
#include "simd.h"

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
        ex->w[XS_SINK] = pl->on[XS_NULL] ? rest * exact_sigmoid(ex->z[XS_SINK]) : rest;
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
        else attn_row_softmax(tmp, s, n, pl, ex);
        softmax_bwd(d, a, n, pl, ex->w, dpx, dsx);
        break;
    case BASE_CLIPPED: {
        /* a = clip(k p + g): dp = k da where the clip does not bind */
        float k = 1.0f - pl->gamma, g = pl->gamma;
        Extra pe = *ex;
        attn_row_softmax(tmp, s, n, pl, &pe);
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
            ex->w[x] = pl->on[x] ? exact_sigmoid(ex->z[x] - pl->lnT) : 0.0f;
            dsx[x] = dpx[x] * ex->w[x] * (1.0f - ex->w[x]);
        }
        break;
    case BASE_SOFTPICK: {
        /* ds_j = e^{s_j}/D [1(u_j > 0) da_j - sign(u_j) S], S = sum a da */
        float ee[XS_N];
        float den = attn_row_softpick(tmp, s, n, pl, ex, ee);
        float inv = 1.0f / den, m = 0.0f;
        for (int j = 0; j < n; j++) m = s[j] > m ? s[j] : m;
        for (int x = 0; x < XS_N; x++)
            if (pl->on[x] && ex->z[x] > m) m = ex->z[x];
        float em = expf(-m), S = 0.0f;
        for (int j = 0; j < n; j++) S += tmp[j] * d[j];
        for (int x = 0; x < XS_N; x++) S += ex->w[x] * dpx[x];
        float eb[64]; /* e^(s - m), expf's bits, 64 at a time */
        for (int j0 = 0; j0 < n; j0 += 64) {
            const int c = n - j0 < 64 ? n - j0 : 64;
            exact_expf_shifted(eb, s + j0, m, (size_t)c);
            for (int j = j0; j < j0 + c; j++) {
                float e = eb[j - j0], u = e - em;
                float sg = u > 0.0f ? 1.0f : (u < 0.0f ? -1.0f : 0.0f);
                d[j] = e * inv * ((u > 0.0f ? d[j] : 0.0f) - sg * S);
            }
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

/* row_backward on query row t's visible keys, as attn_row_forward_window saw
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
    int h, kv_first; /* kv_first: the first query head of its kv head */
} HeadBwd;

static HeadBwd head_bwd(const BwdIn *in, const Plan *pl, int b, int h) {
    int T = in->T, dh = in->dh, Hkv = in->Hkv;
    int g = h / in->group < Hkv ? h / in->group : Hkv - 1;
    int gp = (h - 1) / in->group < Hkv ? (h - 1) / in->group : Hkv - 1;
    size_t bh = (size_t)b * in->H + h, TT = (size_t)T * (size_t)T;
    HeadBwd hv = {.in = in, .h = h, .kv_first = h == 0 || gp != g};
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
        attn_extra_logits(&ex, pl, hv->q + (size_t)t * ldq, hv->h, in->x->sink_logit, in->x->kvb_k,
                          dh);
        float da_kv = pl->on[XS_KV] ? dot(hv->dy + (size_t)t * ldq, hv->vx, dh) : 0.0f;
        row_backward_window(dr, hv->a + (size_t)t * T, hv->s + (size_t)t * T, t, pl, &ex,
                            hv->slot ? hv->slot + t : NULL, da_kv, dsx, tmp);
        for (int j = t + 1; j < r1; j++) dr[j] = 0.0f;
        if (hv->dkb)
            for (int j = 0; j <= t; j++) hv->dkb[j] += dr[j];
        extra_key_grads(go, pl, hv, t, dsx, ex.w[XS_KV]);
    }
}

/* Rows [i0, i0 + g) of bwd_rows_plain's block (g <= ROWS_N): ds = a (da - S)
 * with S_t = sum over the row's keys j <= t of a da, one chain per row in
 * key order as softmax_bwd adds, the rows' chains side by side in the
 * lanes of a vector (rows.h); a row's lanes past its diagonal hold zeros,
 * which leave its sum as it was. A piece inside the row is read whole; in
 * the piece that holds the diagonal the products past it are masked to +0
 * (rows_keep). ds is written in ROWS_N-lane pieces while they stay inside
 * the row (the diagonal's piece masked the same way, the pieces past it
 * stores of zeros), so the zeros right of the diagonal up to r1 are
 * stores, not calls. */
SIMD_BODY void bwd_rows_group(float *da, const float *att, int T, int r0, int r1, int i0, int g) {
    const int n = r0 + i0 + g;
    float S[ROWS_N];
    RowVec acc = {0.0f}, v[ROWS_N], p;
    for (int j = 0; j < n; j += ROWS_N) {
        for (int r = 0; r < ROWS_N; r++) {
            const int t = r0 + i0 + r, k = t + 1 - j;
            const int w = r >= g || k <= 0 ? 0 : (k < ROWS_N ? k : ROWS_N);
            if (w == 0) {
                v[r] = (RowVec){0.0f};
                continue;
            }
            const int wl = j + ROWS_N <= T ? ROWS_N : w;
            rows_load(&p, att + (size_t)t * T + j, wl);
            rows_load(&v[r], da + (size_t)(i0 + r) * T + j, wl);
            v[r] = p * v[r];
            if (w < ROWS_N) rows_keep(&v[r], w);
        }
        rows_colsum(&acc, v, n - j < ROWS_N ? n - j : ROWS_N);
    }
    rows_store(S, &acc, g);
    for (int r = 0; r < g; r++) {
        const int t = r0 + i0 + r;
        const float *pr = att + (size_t)t * T;
        float *d = da + (size_t)(i0 + r) * T;
        const RowVec zero = {0.0f};
        RowVec Si, pj, dj;
        for (int k = 0; k < ROWS_N; k++) Si[k] = S[r];
        int j = 0;
        for (; j + ROWS_N <= t + 1; j += ROWS_N) {
            rows_load(&pj, pr + j, ROWS_N);
            rows_load(&dj, d + j, ROWS_N);
            dj = pj * (dj - Si);
            rows_store(d + j, &dj, ROWS_N);
        }
        if (j <= t && j < r1 && j + ROWS_N <= T) {
            rows_load(&pj, pr + j, ROWS_N);
            rows_load(&dj, d + j, ROWS_N);
            dj = pj * (dj - Si);
            rows_keep(&dj, t + 1 - j);
            rows_store(d + j, &dj, ROWS_N);
            j += ROWS_N;
        }
        if (j > t)
            for (; j < r1 && j + ROWS_N <= T; j += ROWS_N) rows_store(d + j, &zero, ROWS_N);
        for (; j <= t; j++) d[j] = pr[j] * (d[j] - S[r]);
        for (; j < r1; j++) d[j] = 0.0f;
    }
}

/* bwd_rows for plain softmax (no extra key, no key bias), ROWS_N rows at a
 * time (bwd_rows_group), each group done while its rows are in cache. */
SIMD_BODY void bwd_rows_plain_body(float *da, const float *att, int T, int r0, int r1) {
    for (int i0 = 0; i0 < r1 - r0; i0 += ROWS_N)
        bwd_rows_group(da, att, T, r0, r1, i0, r1 - r0 - i0 < ROWS_N ? r1 - r0 - i0 : ROWS_N);
}
SIMD_KERNEL_STATIC(bwd_rows_plain, (float *da, const float *att, int T, int r0, int r1),
                   (da, att, T, r0, r1))

/* A key-side gradient of row block [r0, r1): c[0:r1] += alpha x^T y, x
 * [m, r1] (leading dim T), y [m, dh] (ldy), c rows ldc apart; with fresh
 * (this kv head's first query head) rows [r0, r1) are written, as no
 * earlier block reached them. */
static void bwd_key_product(int r0, int r1, int m, int dh, int T, float alpha, const float *x,
                            const float *y, int ldy, float *c, int ldc, int fresh) {
    if (!fresh || r0 > 0)
        gemm_zeros(1, fresh ? r0 : r1, dh, m, alpha, x, T, y, ldy, 1.0f, c, ldc, GEMM_ZEROS_LEADING,
                   r0);
    if (fresh)
        gemm_zeros(1, r1 - r0, dh, m, alpha, x + r0, T, y, ldy, 0.0f, c + (size_t)r0 * ldc, ldc,
                   GEMM_ZEROS_LEADING, 0);
}

/* Asks for the weights that dv = a^T dy reads (rows [r0, r0 + m), keys up
 * to each row's diagonal) before da's product runs: the forward wrote them
 * long before, and dv's tiles read them one line per value of k. */
static void prefetch_weights(const float *a, int T, int r0, int m) {
    for (int t = r0; t < r0 + m; t++) {
        const float *row = a + (size_t)t * T;
        for (int j = 0; j <= t; j += 16) __builtin_prefetch(row + j, 0, 2);
        __builtin_prefetch(row + t, 0, 2);
    }
}

/* Row block [r0, r1) of one head:
 *   da = dy v^T (v's panels from vp when it holds them);  dv += a^T dy;  ds = row_backward(da);
 *   dq += scale ds k;  dk += scale ds^T q
 * (go->set: dq's rows written; dk and dv's rows past r0 written by the kv
 * head's first query head, hv->kv_first). */
static void bwd_block(float *da, float *tmp, const AttnGrad *go, const Plan *pl, const HeadBwd *hv,
                      const GemmPacks *vp, int r0, int r1) {
    const BwdIn *in = hv->in;
    int m = r1 - r0, T = in->T, dh = in->dh, ldq = in->ldq, ldk = in->ldk;
    const float *dyr = hv->dy + (size_t)r0 * ldq;
    if (go->dv) prefetch_weights(hv->a, T, r0, m);
    /* da[0:m, 0:r1] = dy[r0:r1] v[0:r1]^T on and left of the diagonal (bwd_rows
     * writes the zeros right of it) */
    gemm_lower_packed(vp, 0, m, r1, dh, 1.0f, dyr, ldq, hv->v, ldk, 0.0f, da, T, r0);
    if (go->dv)
        bwd_key_product(r0, r1, m, dh, T, 1.0f, hv->a + (size_t)r0 * T, dyr, ldq, go->dv + hv->bok,
                        ldk, hv->kv_first && (go->set & ATTN_SET_DV));
    if (pl->base == BASE_SOFTMAX && !pl->on[XS_NULL] && !pl->on[XS_SINK] && !pl->on[XS_KV] &&
        !hv->dkb)
        bwd_rows_plain(da, hv->a, T, r0, r1);
    else bwd_rows(da, tmp, go, pl, hv, r0, r1);
    if (go->dq)
        gemm_zeros(0, m, dh, r1, pl->scale, da, T, hv->k, ldk, go->set & ATTN_SET_DQ ? 0.0f : 1.0f,
                   go->dq + hv->boq + (size_t)r0 * ldq, ldq, GEMM_ZEROS_TRAILING, r0);
    if (go->dk)
        bwd_key_product(r0, r1, m, dh, T, pl->scale, da, hv->q + (size_t)r0 * ldq, ldq,
                        go->dk + hv->bok, ldk, hv->kv_first && (go->set & ATTN_SET_DK));
}

/* row_backward's cases that read s: softmax's extra weights without the
 * slot to take them from, and every normaliser but softmax and sigmoid. */
int attention_backward_reads_scores(const AttnSpec *spec, int has_slot) {
    Plan pl = attn_make_plan(spec, NULL, NULL, 1);
    switch (pl.base) {
    case BASE_SIGMOID: return 0;
    case BASE_SOFTMAX: return (spec->has_kv_bias || pl.on[XS_SINK]) && !has_slot;
    default: return 1;
    }
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
    Plan pl = attn_make_plan(spec, in->kvb_k, in->kvb_v, T);
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
    AttnGrad go = *g;
    if ((go.set & ATTN_SET_DQ) && go.dq && pl.on[XS_KV]) { /* the kv key adds to dq first */
        memset(go.dq, 0, (size_t)sh->B * T * bin.ldq * sizeof(float));
        go.set &= ~(unsigned)ATTN_SET_DQ;
    }
    _Alignas(64) float pk[ATT_PACK]; /* a kv head's values, packed for its blocks' da */
    GemmPack one;
    GemmPacks vp;
    gemm_packs_over(&vp, &one, 1, pk, ATT_PACK);
    for (int b = 0; b < sh->B; b++)
        for (int h = 0; h < H; h++) {
            HeadBwd hv = head_bwd(&bin, &pl, b, h);
            gemm_packs_only(&vp, hv.v, T, dh, bin.ldk);
            for (int r0 = 0; r0 < T; r0 += blk)
                bwd_block(da, tmp, &go, &pl, &hv, &vp, r0, r0 + blk < T ? r0 + blk : T);
        }
    opprof_leave(prof);
}
