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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parallel.h"
#include "hf_weights.h"
#include "intervention.h"
#include "ops.h"
#include "util.h"

#define HEAD_ROWS 4096 /* lm-head rows converted at a time */

typedef struct {
    int T, M;
    float *x, *h, *qraw, *q, *k, *v, *g, *o, *f1, *f2, *first_col, *maps, *cosv, *sinv;
    float *mean, *rstd, *inv_freq;      /* norm statistics [T * H], RoPE frequencies */
    float *vec0, *vec1, *head, *scores; /* scores: attention_keep's scratch */
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

ProbeShape hf_model_probe_shape(const HfModel *m, int N, int T, int M) {
    return (ProbeShape){.L = m->a.L,
                        .H = m->a.H,
                        .N = N,
                        .T = T,
                        .M = M,
                        .C = hf_model_gate_channels(m),
                        .d = m->a.d,
                        .rows_normalised = 1,
                        .threads = m->threads};
}

void hf_model_probe_attrs(const HfModel *m, ProbeRecord *p) {
    int C = hf_model_gate_channels(m);
    snprintf(p->normaliser, sizeof p->normaliser, "softmax");
    p->gate_heads = C ? m->a.H : 0, p->gate_bounded = C > 0;
}

static void bufs_free(Bufs *b) {
    float *all[] = {b->x,    b->h,    b->qraw,     b->q,         b->k,    b->v,    b->g,
                    b->o,    b->f1,   b->f2,       b->first_col, b->maps, b->cosv, b->sinv,
                    b->mean, b->rstd, b->inv_freq, b->vec0,      b->vec1, b->head, b->scores};
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
    b->mean = falloc(t * a->H), b->rstd = falloc(t * a->H), b->inv_freq = falloc(half);
    b->vec0 = falloc((size_t)a->d), b->vec1 = falloc((size_t)a->d);
    b->scores = falloc(attention_keep_scratch(T, threads));
    b->T = T, b->M = M;
    float *all[] = {b->x,    b->h,    b->qraw,     b->q,         b->k,    b->v,     b->g,
                    b->o,    b->f1,   b->f2,       b->first_col, b->maps, b->cosv,  b->sinv,
                    b->mean, b->rstd, b->inv_freq, b->vec0,      b->vec1, b->scores};
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
    RangeFn epi;              /* or NULL: run on each row's slice of out, flat indices */
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
    parallel_for(threads, (size_t)(j->N + COL_UNIT - 1) / COL_UNIT, linear_cols, (void *)j);
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

typedef struct {
    float *y, *mean, *rstd;
    const float *x, *w, *b;
    int n, rms;
    float eps;
} NormJob;

/* Rows [t0, t1) through the core RMSNorm or LayerNorm (rows are
 * independent, so the split does not change a bit). */
static void norm_range(void *ctx, size_t t0, size_t t1) {
    const NormJob *j = ctx;
    const size_t o = t0 * (size_t)j->n;
    if (j->rms)
        rmsnorm_forward(j->y + o, j->rstd + t0, j->x + o, j->w, (int)(t1 - t0), j->n, j->eps);
    else
        layernorm_forward(j->y + o, j->mean + t0, j->rstd + t0, j->x + o, j->w, j->b,
                          (int)(t1 - t0), j->n, j->eps);
}

/* y[rows, n] = RMSNorm (rms) or LayerNorm of x, rows split over the
 * threads; rows <= T * H (the statistics buffers). */
static void norm_rows(const HfModel *m, float *y, const float *x, const float *w, const float *b,
                      int rows, int n, int rms) {
    NormJob j = {y, m->b.mean, m->b.rstd, x, w, b, n, rms, (float)m->a.eps};
    parallel_for(m->threads, (size_t)rows, norm_range, &j);
}

/* The cos/sin tables of the first T positions, through the core RoPE
 * (with Llama 3's rescaling when the config asks for it). */
static void rope_setup(const HfArch *a, Bufs *b, int T) {
    const int rd = a->rotary_dim;
    rope_inv_freq(b->inv_freq, rd, (float)a->rope_theta, 1.0f, 0);
    if (a->rope_llama3)
        rope_llama3_scale(b->inv_freq, rd / 2, a->rs_factor, a->rs_low, a->rs_high, a->rs_orig);
    rope_tables(b->cosv, b->sinv, b->inv_freq, T, rd, 0);
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

/* o[T, H*dh] *= sigmoid(G) (after the intervention's change to the
 * scores, if any); G becomes the applied scores. */
static void apply_gate(const HfArch *a, Bufs *b, int T, const Intervention *iv) {
    const int g = hf_gate_per_head(a);
    gate_act_forward(b->g, b->g, (size_t)T * a->H * g, ACT_SIGMOID);
    iv_gate_scores(iv, b->g, 1, 1, T, 0, a->H * g, FORM_MULT);
    gate_apply_forward(b->o, b->o, b->g, g == 1 ? GB_HEAD : GB_ELEM, FORM_MULT, T, a->H, a->dh);
}

static void attention(HfModel *m, const float *W[W_N_ROLES], int T, const Intervention *iv) {
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
    AttnIn in = {.q = b->q, .k = b->k, .v = b->v, .ldq = hd, .ldkv = kv};
    if (a->family == HF_GPT2) { /* no RoPE, no q/k norm: read the fused [q | k | v] rows */
        in.q = b->qraw, in.k = b->qraw + a->d, in.v = b->qraw + 2 * (size_t)a->d;
        in.ldq = in.ldkv = 3 * a->d;
    } else {
        split_qkv(a, b, T);
    }
    if (W[W_QN] && W[W_KN]) { /* Qwen3 q_norm / k_norm: per head */
        norm_rows(m, b->q, b->q, W[W_QN], NULL, T * a->H, a->dh, 1);
        norm_rows(m, b->k, b->k, W[W_KN], NULL, T * a->Hkv, a->dh, 1);
    }
    if (a->rotary_dim) {
        rope_forward_part(b->q, b->cosv, b->sinv, 1, T, a->H, a->dh, a->rotary_dim);
        rope_forward_part(b->k, b->cosv, b->sinv, 1, T, a->Hkv, a->dh, a->rotary_dim);
    }
    AttnSpec sp = {.normaliser = NORMZ_SOFTMAX,
                   .scale = 1.0f / sqrtf((float)a->dh),
                   .window = iv ? iv->window : 0,
                   .keep = iv ? iv->keep : 0};
    AttnKeep keep = {.y = b->o,
                     .first_col = b->first_col,
                     .maps = b->maps,
                     .M = b->M,
                     .threads = m->threads,
                     .scratch = b->scores};
    attention_keep(&keep, &in, &sp, &(AttnShape){1, T, a->H, a->Hkv, a->dh});
    if (a->gate != HF_GATE_NONE) apply_gate(a, b, T, iv);
}

typedef struct {
    HfAct act;
    float *f1, *f2; /* f2: the GLU's gate input (overwritten), or NULL */
} ActJob;

/* The activation of one slice [i0, i1) through the core ops: f1 =
 * act(f1), or for the GLU f1 *= act(f2) (SwiGLU in one op; otherwise
 * f2 = act(f2), then the product). */
static void act_range(void *ctx, size_t i0, size_t i1) {
    const ActJob *j = ctx;
    float *f1 = j->f1 + i0, *x = j->f2 ? j->f2 + i0 : f1;
    const size_t n = i1 - i0;
    if (j->f2 && j->act == HF_ACT_SILU) {
        swiglu_forward(f1, x, f1, n);
        return;
    }
    switch (j->act) {
    case HF_ACT_SILU: silu_forward(x, x, n); break;
    case HF_ACT_GELU_TANH: gelu_fast_forward(x, x, n); break;
    case HF_ACT_GELU_ERF: gelu_erf_forward(x, x, n); break;
    default: relu_forward(x, x, n); break;
    }
    if (j->f2) gate_apply_forward(f1, f1, x, GB_ELEM, FORM_MULT, 1, 1, (int)n);
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

static int layer(HfModel *m, int l, int T, const Intervention *iv, char *err, size_t errlen) {
    const HfArch *a = &m->a;
    Bufs *b = &m->b;
    const float *W[W_N_ROLES];
    if (hf_weights_layer(&m->w, l, W, err, errlen) < 0) return -1;
    norm_rows(m, b->h, b->x, W[W_LN1], W[W_LN1_B], T, a->d, a->rms);
    attention(m, W, T, iv); /* into b->o, before o_proj */
    const int hd = a->H * a->dh;
    /* parallel residual (GPT-NeoX): both blocks read the same x, so its
     * second norm is taken before o_proj adds to x */
    if (a->parallel_residual) norm_rows(m, b->h, b->x, W[W_LN2], W[W_LN2_B], T, a->d, a->rms);
    linear_add(m->threads, b->x, b->o, W[W_O], W[W_OB], T, hd, a->d, m->w.conv1d);
    if (!a->parallel_residual) norm_rows(m, b->h, b->x, W[W_LN2], W[W_LN2_B], T, a->d, a->rms);
    mlp(m, W, T);
    iv_residual(iv, b->x, 1, T, 0, a->d);
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
    norm_rows(m, b->h, b->x, w, bias, T, a->d, a->rms);
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

int hf_model_forward(HfModel *m, const int32_t *ids, int T, const HfRun *run, char *err,
                     size_t errlen) {
    const HfArch *a = &m->a;
    const int M = run->M;
    if (T < 1 || M < 0 || M > T) return seterr(err, errlen, "bad window: T=%d M=%d", T, M);
    if (a->family == HF_GPT2 && T > a->max_pos)
        return seterr(err, errlen, "window of %d tokens exceeds the model's %d positions", T,
                      a->max_pos);
    if (bufs_alloc(&m->b, a, T, M, m->threads) < 0)
        return seterr(err, errlen, "out of memory for activations (T=%d)", T);
    openblas_set_num_threads(1); /* our threads split the work (parallel.c) */
    if (embed(m, ids, T, err, errlen) < 0) return -1;
    if (a->rotary_dim) rope_setup(a, &m->b, T);
    const int C = hf_model_gate_channels(m);
    for (int l = 0; l < a->L; l++) {
        if (layer(m, l, T, run->iv, err, errlen) < 0) return -1;
        ProbeLayer o = {.layer = l,
                        .T = T,
                        .H = a->H,
                        .M = M,
                        .C = C,
                        .d = a->d,
                        .first_col = m->b.first_col,
                        .maps = m->b.maps,
                        .gates = C ? m->b.g : NULL,
                        .gate_stride = C,
                        .hidden = m->b.x};
        if (run->fn) run->fn(run->ctx, &o);
    }
    return run->logits ? lm_head(m, run->logits, T, err, errlen) : 0;
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
