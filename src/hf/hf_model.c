/* hf_model.c: one window through a Hugging Face decoder, layer by layer,
 * following each modeling file's semantics:
 *   Llama/Qwen2/Qwen3: RMSNorm, q/k/v (+bias), [per-head q/k RMSNorm], RoPE
 *     (rotate_half, rope_theta, llama3 scaling), GQA softmax attention,
 *     [gated: o *= sigmoid(gate)], o_proj, residual, SwiGLU MLP, residual;
 *   GPT-2: learned positions, LayerNorm, fused Conv1D c_attn, tanh-GELU;
 *   GPT-NeoX: LayerNorm, fused per-head query_key_value, partial rotary,
 *     parallel (or sequential) residual, GELU.
 * Weights are bound one layer at a time (hf_weights.c). */
#include "hf_model.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hf_attention.h"
#include "fastexp.h" /* SIMD_CLONES */
#include "hf_fastexp.h"
#include "hf_parallel.h"
#include "hf_weights.h"
#include "util.h"

#define HEAD_ROWS 4096 /* lm-head rows converted at a time */

typedef struct {
    int T, M;
    float *x, *h, *qraw, *q, *k, *v, *g, *o, *f1, *f2, *first_col, *maps, *cosv, *sinv;
    float *vec0, *vec1, *head, *scores; /* scores: hf_attention's scratch */
} Bufs;

struct HfModel {
    HfArch a;
    char *cfg_text;
    SafeTensors *st;
    HfWeights w;
    int threads;
    Bufs b;
};

const HfArch *hf_model_arch(const HfModel *m) { return &m->a; }
const char *hf_model_config_text(const HfModel *m) { return m->cfg_text; }
const char *hf_model_dtype(const HfModel *m) { return m->w.dtype ? m->w.dtype : "?"; }
int hf_model_gate_channels(const HfModel *m) { return m->a.H * hf_gate_per_head(&m->a); }
int hf_model_threads(const HfModel *m) { return m->threads; }

static void bufs_free(Bufs *b) {
    float *all[] = {b->x,    b->h,    b->qraw, b->q,    b->k,         b->v,
                    b->g,    b->o,    b->f1,   b->f2,   b->first_col, b->maps,
                    b->cosv, b->sinv, b->vec0, b->vec1, b->head,      b->scores};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) free(all[i]);
    memset(b, 0, sizeof *b);
}

static int bufs_alloc(Bufs *b, const HfArch *a, int T, int M, int threads) {
    if (b->T == T && b->M == M) return 0;
    bufs_free(b);
    size_t t = (size_t)T, hd = (size_t)a->H * a->dh, kv = (size_t)a->Hkv * a->dh;
    size_t qraw =
        a->family == HF_GPT2 || a->family == HF_NEOX ? 3 * (size_t)a->d : (size_t)hf_q_rows(a);
    size_t gc = (size_t)a->H * hf_gate_per_head(a),
           half = a->rotary_dim ? (size_t)a->rotary_dim / 2 : 1;
    b->x = falloc(t * a->d), b->h = falloc(t * a->d), b->qraw = falloc(t * qraw);
    b->q = falloc(t * hd), b->k = falloc(t * kv), b->v = falloc(t * kv);
    b->g = falloc(t * (gc ? gc : 1)), b->o = falloc(t * hd);
    b->f1 = falloc(t * a->ff), b->f2 = falloc(t * a->ff);
    b->first_col = falloc((size_t)a->H * t), b->maps = falloc((size_t)a->H * M * M + 1);
    b->cosv = falloc(t * half), b->sinv = falloc(t * half);
    b->vec0 = falloc((size_t)a->d), b->vec1 = falloc((size_t)a->d);
    b->scores = falloc(hf_attention_scratch(T, threads));
    b->T = T, b->M = M;
    float *all[] = {b->x,    b->h,    b->qraw, b->q,    b->k,         b->v,
                    b->g,    b->o,    b->f1,   b->f2,   b->first_col, b->maps,
                    b->cosv, b->sinv, b->vec0, b->vec1, b->scores};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        if (!all[i]) {
            bufs_free(b);
            return -1;
        }
    return 0;
}

#define COL_UNIT 16 /* output columns are split between threads in these */

typedef struct {
    float *out;
    const float *in, *W, *bias;
    int M, K, N, conv1d, ldo; /* ldo: row stride of out (N, or wider for a slice) */
    int acc;                  /* out += ... (the residual stream) instead of out = ... */
    HfRangeFn epi;            /* or NULL: run on each row's slice of out, flat indices */
    void *epi_ctx;            /* (the activation, while the slice is still in cache) */
} LinJob;

/* Output columns [16 u0, 16 u1) of a linear layer: one single-threaded
 * sgemm on that slice of the weights (each thread packs only its slice).
 * A bias is written first and the sgemm adds to it (beta 1): OpenBLAS's
 * beta = 0 would clear the output in a pass of its own, and the bias would
 * take another. */
static void linear_cols(void *ctx, size_t u0, size_t u1) {
    const LinJob *j = ctx;
    const int n0 = (int)u0 * COL_UNIT, n1 = (int)u1 * COL_UNIT < j->N ? (int)u1 * COL_UNIT : j->N;
    const int n = n1 - n0, M = j->M, K = j->K, ldo = j->ldo;
    float *out = j->out + n0;
    if (n <= 0 || M <= 0) return;
    if (j->bias && j->acc)
        for (size_t m = 0; m < (size_t)M; m++)
            for (int c = 0; c < n; c++) out[m * ldo + c] += j->bias[n0 + c];
    else if (j->bias)
        for (size_t m = 0; m < (size_t)M; m++)
            memcpy(out + m * ldo, j->bias + n0, (size_t)n * sizeof(float));
    const float beta = j->bias || j->acc ? 1.0f : 0.0f;
    if (j->conv1d) /* W [K, N]: columns n0.. */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, n, K, 1.0f, j->in, K, j->W + n0,
                    j->N, beta, out, ldo);
    else /* W [N, K]: rows n0.. */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, n, K, 1.0f, j->in, K,
                    j->W + (size_t)n0 * K, K, beta, out, ldo);
    for (size_t m = 0; j->epi && m < (size_t)M; m++)
        j->epi(j->epi_ctx, m * ldo + n0, m * ldo + n0 + n);
}

/* out[M,N] (row stride ldo) = in[M,K] @ W^T + b, W [N,K] (nn.Linear);
 * conv1d: W [K,N]. The output columns are split over the threads, each
 * running 1-thread OpenBLAS (no BLAS thread pool spinning between calls). */
static void linear_run(int threads, const LinJob *j) {
    hf_parallel_for(threads, (size_t)(j->N + COL_UNIT - 1) / COL_UNIT, linear_cols, (void *)j);
}

/* out[M,N] = in @ W^T + b, or with acc out += ... (row stride N). */
static void linear_to(int threads, float *out, const float *in, const float *W, const float *bias,
                      int M, int K, int N, int conv1d, int acc) {
    LinJob j = {out, in, W, bias, M, K, N, conv1d, N, acc, NULL, NULL};
    linear_run(threads, &j);
}

static void linear(int threads, float *out, const float *in, const float *W, const float *bias,
                   int M, int K, int N, int conv1d) {
    linear_to(threads, out, in, W, bias, M, K, N, conv1d, 0);
}

/* x[M,N] += in @ W^T + b: a block's output added to the residual stream
 * inside the sgemm (beta 1), with no pass of its own. */
static void linear_add(int threads, float *x, const float *in, const float *W, const float *bias,
                       int M, int K, int N, int conv1d) {
    linear_to(threads, x, in, W, bias, M, K, N, conv1d, 1);
}

/* RMSNorm (b NULL, rms) or LayerNorm of rows x[T, n] into y. */
static void norm_rows(float *y, const float *x, const float *w, const float *b, int T, int n,
                      double eps, int rms) {
    for (size_t t = 0; t < (size_t)T; t++) {
        const float *xr = x + t * n;
        float *yr = y + t * n;
        double mu = 0.0, var = 0.0;
        if (!rms) {
            for (int i = 0; i < n; i++) mu += xr[i];
            mu /= n;
        }
        for (int i = 0; i < n; i++) var += (xr[i] - mu) * (xr[i] - mu);
        float r = (float)(1.0 / sqrt(var / n + eps));
        for (int i = 0; i < n; i++) {
            float v = (float)(xr[i] - mu) * r;
            yr[i] = w[i] * v + (b ? b[i] : 0.0f);
        }
    }
}

typedef struct {
    float *y;
    const float *x, *w, *b;
    int n, rms;
    double eps;
} NormJob;

/* Rows [t0, t1) of norm_rows (each row is independent). */
static void norm_range(void *ctx, size_t t0, size_t t1) {
    const NormJob *j = ctx;
    norm_rows(j->y + t0 * j->n, j->x + t0 * j->n, j->w, j->b, (int)(t1 - t0), j->n, j->eps, j->rms);
}

/* norm_rows split by rows over the threads; same results. */
static void norm_rows_par(int threads, float *y, const float *x, const float *w, const float *b,
                          int T, int n, double eps, int rms) {
    NormJob j = {y, x, w, b, n, rms, eps};
    hf_parallel_for(threads, (size_t)T, norm_range, &j);
}

/* Rotary frequencies as the HF rotary embeddings compute them (float32),
 * with the llama3 rescaling; cos/sin tables [T, rd/2]. */
static void rope_tables(const HfArch *a, Bufs *b, int T) {
    const int rd = a->rotary_dim, half = rd / 2;
    for (int i = 0; i < half; i++) {
        float inv = (float)(1.0 / pow(a->rope_theta, (double)(2 * i) / rd));
        if (a->rope_llama3) {
            double wl = 2.0 * M_PI / inv, lo_wl = a->rs_orig / a->rs_low,
                   hi_wl = a->rs_orig / a->rs_high;
            double f = inv;
            if (wl > lo_wl) {
                f = inv / a->rs_factor;
            } else if (wl >= hi_wl) {
                double s = (a->rs_orig / wl - a->rs_low) / (a->rs_high - a->rs_low);
                f = (1.0 - s) * inv / a->rs_factor + s * inv;
            }
            inv = (float)f;
        }
        for (int t = 0; t < T; t++) {
            float ang = (float)t * inv;
            b->cosv[(size_t)t * half + i] = cosf(ang);
            b->sinv[(size_t)t * half + i] = sinf(ang);
        }
    }
}

/* rotate_half RoPE on the first rd dims of each of nh heads of x[T, nh*dh]. */
static void rope_apply(float *x, const Bufs *b, int T, int nh, int dh, int rd) {
    const int half = rd / 2;
    for (int t = 0; t < T; t++) {
        const float *c = b->cosv + (size_t)t * half, *s = b->sinv + (size_t)t * half;
        for (int h = 0; h < nh; h++) {
            float *v = x + ((size_t)t * nh + h) * dh;
            for (int i = 0; i < half; i++) {
                float x1 = v[i], x2 = v[i + half];
                v[i] = x1 * c[i] - x2 * s[i];
                v[i + half] = x2 * c[i] + x1 * s[i];
            }
        }
    }
}

/* Split the projections into Q [T, H*dh], K, V [T, Hkv*dh] and the raw
 * gate scores G [T, H*g] (GPT-2 needs no split: see attention()). */
static void split_qkv(const HfArch *a, Bufs *b, int T) {
    const int H = a->H, dh = a->dh, d = a->d;
    const size_t hd = (size_t)H * dh;
    if (a->family == HF_NEOX) { /* per head [q(dh) k(dh) v(dh)] */
        for (size_t t = 0; t < (size_t)T; t++)
            for (int h = 0; h < H; h++) {
                const float *r = b->qraw + t * 3 * d + (size_t)h * 3 * dh;
                size_t o = t * hd + (size_t)h * dh;
                memcpy(b->q + o, r, dh * sizeof(float));
                memcpy(b->k + o, r + dh, dh * sizeof(float));
                memcpy(b->v + o, r + 2 * dh, dh * sizeof(float));
            }
        return;
    }
    /* q_proj per KV group: [group*dh queries | group*g gate scores] */
    const int g = hf_gate_per_head(a), grp = H / a->Hkv, rows = hf_q_rows(a);
    for (size_t t = 0; t < (size_t)T; t++)
        for (int kv = 0; kv < a->Hkv; kv++) {
            const float *r = b->qraw + t * rows + (size_t)kv * grp * (dh + g);
            memcpy(b->q + t * hd + (size_t)kv * grp * dh, r, (size_t)grp * dh * sizeof(float));
            if (g)
                memcpy(b->g + (t * H + (size_t)kv * grp) * g, r + (size_t)grp * dh,
                       (size_t)grp * g * sizeof(float));
        }
}

/* Per-head RMSNorm of x[T*nh, dh] in place (Qwen3 q_norm / k_norm). */
static void head_norm(float *x, const float *w, int rows, int dh, double eps) {
    norm_rows(x, x, w, NULL, rows, dh, eps, 1);
}

/* o[T, H*dh] *= sigmoid(G); G becomes the sigmoid scores. */
static void apply_gate(const HfArch *a, Bufs *b, int T) {
    const int g = hf_gate_per_head(a), dh = a->dh;
    const size_t n = (size_t)T * a->H * g;
    for (size_t i = 0; i < n; i++) b->g[i] = 1.0f / (1.0f + expf(-b->g[i]));
    for (size_t t = 0; t < (size_t)T; t++)
        for (int h = 0; h < a->H; h++) {
            float *o = b->o + (t * a->H + h) * dh;
            const float *s = b->g + (t * a->H + h) * g;
            for (int i = 0; i < dh; i++) o[i] *= s[g == 1 ? 0 : i];
        }
}

static void attention(HfModel *m, const float *W[W_N_ROLES], int T) {
    const HfArch *a = &m->a;
    Bufs *b = &m->b;
    const int hd = a->H * a->dh, kv = a->Hkv * a->dh;
    if (a->family == HF_GPT2 || a->family == HF_NEOX) {
        linear(m->threads, b->qraw, b->h, W[W_QKV], W[W_QKV_B], T, a->d, 3 * a->d, m->w.conv1d);
    } else {
        linear(m->threads, b->qraw, b->h, W[W_Q], W[W_QB], T, a->d, hf_q_rows(a), 0);
        linear(m->threads, b->k, b->h, W[W_K], W[W_KB], T, a->d, kv, 0);
        linear(m->threads, b->v, b->h, W[W_V], W[W_VB], T, a->d, kv, 0);
    }
    HfAttn at = {.T = T,
                 .H = a->H,
                 .Hkv = a->Hkv,
                 .dh = a->dh,
                 .M = b->M,
                 .threads = m->threads,
                 .ldq = hd,
                 .ldkv = kv,
                 .Q = b->q,
                 .K = b->k,
                 .V = b->v,
                 .O = b->o,
                 .first_col = b->first_col,
                 .maps = b->maps,
                 .scratch = b->scores};
    if (a->family == HF_GPT2) { /* no RoPE, no q/k norm: read the fused [q | k | v] rows */
        at.Q = b->qraw, at.K = b->qraw + a->d, at.V = b->qraw + 2 * (size_t)a->d;
        at.ldq = at.ldkv = 3 * a->d;
    } else {
        split_qkv(a, b, T);
    }
    if (W[W_QN] && W[W_KN]) {
        head_norm(b->q, W[W_QN], T * a->H, a->dh, a->eps);
        head_norm(b->k, W[W_KN], T * a->Hkv, a->dh, a->eps);
    }
    if (a->rotary_dim) {
        rope_apply(b->q, b, T, a->H, a->dh, a->rotary_dim);
        rope_apply(b->k, b, T, a->Hkv, a->dh, a->rotary_dim);
    }
    hf_attention_forward(&at);
    if (a->gate != HF_GATE_NONE) apply_gate(a, b, T);
}

static float act(HfAct k, float x) {
    switch (k) {
    case HF_ACT_SILU: return x / (1.0f + expf(-x));
    case HF_ACT_GELU_TANH: /* 0.5 x (1 + tanh(u)) = x sigmoid(2u): expf is far cheaper than tanhf */
        return x / (1.0f + expf(-1.5957691216057308f * (x + 0.044715f * x * x * x)));
    case HF_ACT_GELU_ERF: return 0.5f * x * (1.0f + erff(x * 0.7071067811865476f));
    default: return x > 0 ? x : 0.0f;
    }
}

typedef struct {
    HfAct act;
    float *f1;
    const float *f2; /* GLU gate input, or NULL */
} ActJob;

static inline float silu_fast(float x) { return x / (1.0f + hf_expf(-x)); }

static inline float gelu_tanh_fast(float x) {
    return x / (1.0f + hf_expf(-1.5957691216057308f * (x + 0.044715f * x * x * x)));
}

/* SiLU and tanh-GELU with the vectorisable exp (one plain loop each). */
SIMD_CLONES static void act_sigmoid_range(const ActJob *j, size_t i0, size_t i1) {
    float *f1 = j->f1;
    const float *f2 = j->f2;
    const int silu = j->act == HF_ACT_SILU;
    if (f2 && silu)
        for (size_t i = i0; i < i1; i++) f1[i] *= silu_fast(f2[i]);
    else if (f2)
        for (size_t i = i0; i < i1; i++) f1[i] *= gelu_tanh_fast(f2[i]);
    else if (silu)
        for (size_t i = i0; i < i1; i++) f1[i] = silu_fast(f1[i]);
    else
        for (size_t i = i0; i < i1; i++) f1[i] = gelu_tanh_fast(f1[i]);
}

/* f1 = act(f1), or f1 *= act(f2) for the GLU, over [i0, i1). */
static void act_range(void *ctx, size_t i0, size_t i1) {
    const ActJob *j = ctx;
    if (j->act == HF_ACT_SILU || j->act == HF_ACT_GELU_TANH) act_sigmoid_range(j, i0, i1);
    else if (j->f2)
        for (size_t i = i0; i < i1; i++) j->f1[i] *= act(j->act, j->f2[i]);
    else
        for (size_t i = i0; i < i1; i++) j->f1[i] = act(j->act, j->f1[i]);
}

/* MLP of b->h, added to the residual stream b->x. */
static void mlp(HfModel *m, const float *W[W_N_ROLES], int T) {
    const HfArch *a = &m->a;
    Bufs *b = &m->b;
    ActJob act = {a->act, b->f1, a->glu ? b->f2 : NULL};
    /* the activation runs on each thread's columns right after their sgemm:
     * GLU: f1 = up, then f1 *= act(gate) slice by slice; else f1 = act(up) */
    if (a->glu) linear(m->threads, b->f1, b->h, W[W_UP], W[W_UP_B], T, a->d, a->ff, m->w.conv1d);
    LinJob j = {.out = a->glu ? b->f2 : b->f1,
                .in = b->h,
                .W = W[a->glu ? W_GATE : W_UP],
                .bias = W[a->glu ? W_GATE_B : W_UP_B],
                .M = T,
                .K = a->d,
                .N = a->ff,
                .conv1d = a->glu ? 0 : m->w.conv1d,
                .ldo = a->ff,
                .epi = act_range,
                .epi_ctx = &act};
    linear_run(m->threads, &j);
    linear_add(m->threads, b->x, b->f1, W[W_DOWN], W[W_DOWN_B], T, a->ff, a->d, m->w.conv1d);
}

static void add_into(float *x, const float *y, size_t n) {
    for (size_t i = 0; i < n; i++) x[i] += y[i];
}

static int layer(HfModel *m, int l, int T, char *err, size_t errlen) {
    const HfArch *a = &m->a;
    Bufs *b = &m->b;
    const float *W[W_N_ROLES];
    if (hf_weights_layer(&m->w, l, W, err, errlen) < 0) return -1;
    norm_rows_par(m->threads, b->h, b->x, W[W_LN1], W[W_LN1_B], T, a->d, a->eps, a->rms);
    attention(m, W, T); /* into b->o, before o_proj */
    const int hd = a->H * a->dh;
    /* parallel residual (GPT-NeoX): both blocks read the same x, so its
     * second norm is taken before o_proj adds to x */
    if (a->parallel_residual)
        norm_rows_par(m->threads, b->h, b->x, W[W_LN2], W[W_LN2_B], T, a->d, a->eps, a->rms);
    linear_add(m->threads, b->x, b->o, W[W_O], W[W_OB], T, hd, a->d, m->w.conv1d);
    if (!a->parallel_residual)
        norm_rows_par(m->threads, b->h, b->x, W[W_LN2], W[W_LN2_B], T, a->d, a->eps, a->rms);
    mlp(m, W, T);
    return 0;
}

static int embed(HfModel *m, const int32_t *ids, int T, char *err, size_t errlen) {
    const HfArch *a = &m->a;
    float *pos = m->b.h;
    for (int t = 0; t < T; t++) {
        if (ids[t] < 0 || ids[t] >= a->V)
            return seterr(err, errlen,
                          "token id %d at position %d is outside the vocabulary [0, %d)", ids[t], t,
                          a->V);
        float *x = m->b.x + (size_t)t * a->d;
        if (st_to_f32(m->w.g[G_EMB], (size_t)ids[t] * a->d, (size_t)a->d, x, err, errlen) < 0)
            return -1;
        if (!m->w.g[G_POS]) continue;
        if (st_to_f32(m->w.g[G_POS], (size_t)t * a->d, (size_t)a->d, pos, err, errlen) < 0)
            return -1;
        add_into(x, pos, (size_t)a->d);
    }
    return 0;
}

/* Final norm and logits[T, V] = h @ head^T, converting the head in chunks. */
static int lm_head(HfModel *m, float *logits, int T, char *err, size_t errlen) {
    const HfArch *a = &m->a;
    Bufs *b = &m->b;
    const float *w = hf_weights_vec(&m->w, G_NORM, b->vec0, err, errlen);
    const float *bias =
        m->w.g[G_NORM_B] ? hf_weights_vec(&m->w, G_NORM_B, b->vec1, err, errlen) : NULL;
    if (!w || (m->w.g[G_NORM_B] && !bias)) return -1;
    norm_rows(b->h, b->x, w, bias, T, a->d, a->eps, a->rms);
    const StTensor *head = m->w.g[G_HEAD] ? m->w.g[G_HEAD] : m->w.g[G_EMB];
    const float *view = st_f32_view(head);
    if (!view && !b->head && !(b->head = falloc((size_t)HEAD_ROWS * a->d)))
        return seterr(err, errlen, "out of memory for the LM head");
    const int rows = view ? a->V : HEAD_ROWS; /* F32 in the file: one GEMM, no chunks */
    for (int r0 = 0; r0 < a->V; r0 += rows) {
        int n = a->V - r0 < rows ? a->V - r0 : rows;
        const float *W = view ? view + (size_t)r0 * a->d : b->head;
        if (!view && st_to_f32(head, (size_t)r0 * a->d, (size_t)n * a->d, b->head, err, errlen) < 0)
            return -1;
        LinJob j = {.out = logits + r0, .in = b->h, .W = W, .M = T, .K = a->d, .N = n, .ldo = a->V};
        linear_run(m->threads, &j);
    }
    return 0;
}

int hf_model_forward(HfModel *m, const int32_t *ids, int T, int M, HfLayerFn fn, void *ctx,
                     float *logits, char *err, size_t errlen) {
    const HfArch *a = &m->a;
    if (T < 1 || M < 0 || M > T) return seterr(err, errlen, "bad window: T=%d M=%d", T, M);
    if (a->family == HF_GPT2 && T > a->max_pos)
        return seterr(err, errlen, "window of %d tokens exceeds the model's %d positions", T,
                      a->max_pos);
    if (bufs_alloc(&m->b, a, T, M, m->threads) < 0)
        return seterr(err, errlen, "out of memory for activations (T=%d)", T);
    openblas_set_num_threads(1); /* our threads split the work (hf_parallel.c) */
    if (embed(m, ids, T, err, errlen) < 0) return -1;
    if (a->rotary_dim) rope_tables(a, &m->b, T);
    for (int l = 0; l < a->L; l++) {
        if (layer(m, l, T, err, errlen) < 0) return -1;
        HfLayerOut o = {l,
                        T,
                        a->H,
                        M,
                        hf_model_gate_channels(m),
                        a->d,
                        m->b.first_col,
                        m->b.maps,
                        a->gate != HF_GATE_NONE ? m->b.g : NULL,
                        m->b.x};
        if (fn) fn(ctx, &o);
    }
    return logits ? lm_head(m, logits, T, err, errlen) : 0;
}

int hf_model_open(HfModel **out, const char *dir, int threads, char *err, size_t errlen) {
    HfModel *m = calloc(1, sizeof *m);
    *out = NULL;
    if (!m) return seterr(err, errlen, "out of memory");
    m->threads = threads < 1 ? 1 : threads;
    if (hf_config_load(&m->a, dir, &m->cfg_text, err, errlen) < 0 ||
        st_open_dir(&m->st, dir, err, errlen) < 0 ||
        hf_weights_bind(&m->w, m->st, &m->a, err, errlen) < 0) {
        hf_model_close(m);
        return -1;
    }
    *out = m;
    return 0;
}

void hf_model_close(HfModel *m) {
    if (!m) return;
    bufs_free(&m->b);
    hf_weights_free(&m->w);
    st_close(m->st);
    free(m->cfg_text);
    free(m);
}
