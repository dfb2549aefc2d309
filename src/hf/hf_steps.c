/* hf_steps.c: the steps of the recipes over a model's buffers (hf_steps.h). */
#include "hf_steps.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "util.h"

#define COL_UNIT 16 /* output columns are split between threads in these */

void hf_bufs_free(HfBufs *b) {
    free(b->mem);
    memset(b, 0, sizeof *b);
}

/* The sizes a layout is made for. */
typedef struct {
    HfBufs *b;
    const HfArch *a;
    int B, T, M, threads, head_rows;
} BufsLayout;

/* The buffers for B windows of T tokens with maps of M, in one plan
 * (plan.h): counted, or pointed into the block. */
static void bufs_plan(Plan *p, void *ctx) {
    const BufsLayout *y = ctx;
    HfBufs *b = y->b;
    const HfArch *a = y->a;
    const int B = y->B, T = y->T, M = y->M;
    size_t t = (size_t)B * T, hd = (size_t)a->H * a->dh, kv = (size_t)a->Hkv * a->dh;
    size_t qraw =
        a->family == HF_GPT2 || a->family == HF_NEOX ? 3 * (size_t)a->d : (size_t)hf_q_rows(a);
    const int rd = a->rotary_dim_local > a->rotary_dim ? a->rotary_dim_local : a->rotary_dim;
    size_t gc = (size_t)a->H * hf_gate_per_head(a), half = rd ? (size_t)rd / 2 : 1;
    b->x = plan_floats(p, t * a->d), b->h = plan_floats(p, t * a->d);
    b->qraw = plan_floats(p, t * qraw);
    b->q = plan_floats(p, t * hd), b->k = plan_floats(p, t * kv), b->v = plan_floats(p, t * kv);
    b->g = plan_floats(p, t * (gc ? gc : 1)), b->o = plan_floats(p, t * hd);
    const size_t shared = (size_t)a->shared_ff,
                 ff = shared > (size_t)a->ff ? shared : (size_t)a->ff;
    b->f1 = plan_floats(p, t * ff), b->f2 = plan_floats(p, t * ff);
    b->first_col = plan_floats(p, (size_t)a->H * t);
    b->slot = a->sinks ? plan_floats(p, (size_t)a->H * t) : NULL;
    const size_t E = (size_t)a->n_experts, k = (size_t)a->top_k;
    b->router = E ? plan_floats(p, t * E) : NULL;
    b->moe = E ? plan_floats(p, (size_t)T * (2 * (size_t)a->d + 3 * (size_t)a->moe_ff + 1)) : NULL;
    /* where the MoE block's output does not add straight into the
     * residual stream (AFMoE's post_mlp_layernorm; the shared experts
     * written first), it has rows of its own */
    b->moe_out = E && a->family != HF_GPTOSS ? plan_floats(p, t * a->d) : NULL;
    b->moe_w = E ? plan_floats(p, t * k) : NULL;
    b->moe_idx = E ? plan_take(p, t * k, sizeof(int)) : NULL;
    b->moe_rows = E ? plan_take(p, (size_t)T, sizeof(int)) : NULL;
    b->maps = plan_floats(p, (size_t)B * a->H * M * M + 1);
    b->cosv = plan_floats(p, (size_t)T * half), b->sinv = plan_floats(p, (size_t)T * half);
    b->cosl = a->rope_local_theta > 0 ? plan_floats(p, (size_t)T * half) : NULL;
    b->sinl = a->rope_local_theta > 0 ? plan_floats(p, (size_t)T * half) : NULL;
    b->mean = plan_floats(p, t * a->H), b->rstd = plan_floats(p, t * a->H);
    b->inv_freq = plan_floats(p, half);
    b->vec0 = plan_floats(p, (size_t)a->d), b->vec1 = plan_floats(p, (size_t)a->d);
    b->head = y->head_rows ? plan_floats(p, (size_t)y->head_rows * a->d) : NULL;
    b->scores = plan_floats(p, attention_keep_scratch(T, y->threads));
}

size_t hf_bufs_bytes(const HfArch *a, int B, int T, int M, int threads, int head_rows) {
    HfBufs b;
    BufsLayout y = {&b, a, B, T, M, threads, head_rows};
    return plan_count(bufs_plan, &y);
}

int hf_bufs_alloc(HfBufs *b, const HfArch *a, int B, int T, int M, int threads, int head_rows) {
    if (b->mem && b->B == B && b->T == T && b->M == M && b->head_rows == head_rows) return 0;
    hf_bufs_free(b);
    BufsLayout y = {b, a, B, T, M, threads, head_rows};
    size_t bytes;
    if (!(b->mem = plan_build(bufs_plan, &y, &bytes))) {
        hf_bufs_free(b);
        return -1;
    }
    b->B = B, b->T = T, b->M = M, b->R = B * T, b->head_rows = head_rows, b->bytes = bytes;
    return 0;
}

/* Output columns [16 u0, 16 u1) of a linear layer: one single-threaded
 * sgemm (one a window of j->T rows) on that slice of the weights (each
 * thread packs only its slice).
 * A bias is written first and the sgemm adds to it (beta 1): OpenBLAS's
 * beta = 0 would clear the output in a pass of its own, and the bias would
 * take another. */
static void linear_cols(void *ctx, size_t u0, size_t u1) {
    const HfLinear *j = ctx;
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
    const int step = j->T > 0 && j->T < M ? j->T : M;
    for (int r0 = 0; r0 < M; r0 += step) {
        const int mr = M - r0 < step ? M - r0 : step;
        const float *in = j->in + (size_t)r0 * K;
        float *o = out + (size_t)r0 * ldo;
        if (j->conv1d) /* W [K, N]: columns n0.. */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, mr, n, K, 1.0f, in, K, j->W + n0,
                        j->N, beta, o, ldo);
        else /* W [N, K]: rows n0.. */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, mr, n, K, 1.0f, in, K,
                        j->W + (size_t)n0 * K, K, beta, o, ldo);
    }
    for (size_t m = 0; j->epi && m < (size_t)M; m++)
        j->epi(j->epi_ctx, m * ldo + n0, m * ldo + n0 + n);
}

void hf_linear_run(int threads, const HfLinear *j) {
    parallel_for(threads, (size_t)(j->N + COL_UNIT - 1) / COL_UNIT, linear_cols, (void *)j);
}

void hf_linear_quant(const HfModel *m, HfLinear *j) {
    if (m->quant)
        fq_linear(m->quant, &j->in, (size_t)j->M, (size_t)j->K, &j->W, (size_t)j->N * j->K);
    hf_linear_run(m->threads, j);
}

/* out += in W^T + b made apart in a scratch of the model's, recorded as
 * sub-layer output `kind`, then added (statistics passes only). */
static void linear_observed(const HfModel *m, HfLinear *j, FqOut kind) {
    const size_t n = (size_t)j->M * j->N;
    float *out = j->out, *y = falloc(n);
    if (!y) {
        m->quant->failed = 1;
        return;
    }
    j->out = y, j->acc = 0;
    hf_linear_quant(m, j);
    fq_output(m->quant, kind, y, m->b.B, n / (size_t)m->b.B);
    for (size_t i = 0; i < n; i++) out[i] += y[i];
    free(y);
}

void hf_linear(const HfModel *m, float *out, const float *in, const float *W, const float *bias,
               int K, int N, int conv1d, int acc, FqOut kind) {
    HfLinear j = {out, in, W, bias, m->b.R, K, N, conv1d, N, acc, NULL, NULL, m->b.T};
    if (acc && m->quant && m->quant->observe) linear_observed(m, &j, kind);
    else hf_linear_quant(m, &j);
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

void hf_norm(const HfModel *m, float *y, const float *x, const float *w, const float *b, int rows,
             int n, int rms) {
    NormJob j = {y, m->b.mean, m->b.rstd, x, w, b, n, rms, (float)m->a.eps};
    parallel_for(m->threads, (size_t)rows, norm_range, &j);
}

float hf_rope_freqs(const HfArch *a, float *inv_freq) {
    const int rd = a->rotary_dim;
    if (a->rope_type == HF_ROPE_YARN) {
        const YarnParams y = {a->rs_factor,    a->rs_orig,      a->rs_beta_fast,
                              a->rs_beta_slow, YARN_RAMP_PAIRS, a->rs_truncate};
        yarn_inv_freq(inv_freq, rd, a->rope_theta, &y);
        return (float)a->rs_attn_factor;
    }
    rope_inv_freq(inv_freq, rd, (float)a->rope_theta, 1.0f, 0);
    if (a->rope_type == HF_ROPE_LLAMA3)
        rope_llama3_scale(inv_freq, rd / 2, a->rs_factor, a->rs_low, a->rs_high, a->rs_orig);
    if (a->rope_type == HF_ROPE_LINEAR) /* positions / factor, as transformers' linear */
        for (int i = 0; i < rd / 2; i++) inv_freq[i] /= (float)a->rs_factor;
    return 1.0f;
}

void hf_rope_setup(HfModel *m) {
    HfBufs *b = &m->b;
    const int rd = m->a.rotary_dim;
    const float af = hf_rope_freqs(&m->a, b->inv_freq);
    rope_tables(b->cosv, b->sinv, b->inv_freq, b->T, rd, 0);
    if (af != 1.0f) /* as transformers applies it: cos and sin times the factor */
        for (size_t i = 0; i < (size_t)b->T * (rd / 2); i++) b->cosv[i] *= af, b->sinv[i] *= af;
    if (!b->cosl) return;
    const int rl = m->a.rotary_dim_local ? m->a.rotary_dim_local : rd;
    rope_inv_freq(b->inv_freq, rl, (float)m->a.rope_local_theta, 1.0f, 0);
    rope_tables(b->cosl, b->sinl, b->inv_freq, b->T, rl, 0);
}

void hf_rope(const HfModel *m, int l, float *x, int nh) {
    const HfArch *a = &m->a;
    const int slides =
        a->sliding_period ? (l + 1) % a->sliding_period != 0 : hf_layer_window(a, l) > 0;
    if (a->rope_sliding_only && !slides) return;
    const int local = m->b.cosl && slides;
    const int rd = local && a->rotary_dim_local ? a->rotary_dim_local : a->rotary_dim;
    rope_forward_part(x, local ? m->b.cosl : m->b.cosv, local ? m->b.sinl : m->b.sinv, m->b.B,
                      m->b.T, nh, m->a.dh, rd);
}

int hf_layer_window(const HfArch *a, int l) {
    if (a->sliding_window < 1) return 0;
    if (a->slides_listed) return l >= 0 && l < a->L && a->layer_slides[l] ? a->sliding_window : 0;
    if (a->sliding_period > 0) return (l + 1) % a->sliding_period ? a->sliding_window : 0;
    return l >= a->L - a->sliding_layers ? a->sliding_window : 0;
}

void hf_attend(HfModel *m, int l, const AttnIn *in, const Intervention *iv) {
    const HfArch *a = &m->a;
    HfBufs *b = &m->b;
    const int B = b->B, T = b->T;
    AttnSpec sp = {.normaliser = NORMZ_SOFTMAX,
                   .scale = a->attn_scale > 0 ? a->attn_scale : 1.0f / sqrtf((float)a->dh),
                   .window = hf_layer_window(a, l),
                   .softcap = (float)a->attn_softcap,
                   .has_sink_logit = in->sink_logit != NULL};
    if (iv && iv->window > 0 && (!sp.window || iv->window < sp.window))
        sp.window = iv->window, sp.keep = iv->keep; /* streaming evaluation */
    AttnKeep keep = {.y = b->o,
                     .first_col = b->first_col,
                     .maps = b->maps,
                     .slot = in->sink_logit ? b->slot : NULL,
                     .M = b->M,
                     .threads = m->threads,
                     .scratch = b->scores};
    /* a KV cache's keys and values (the model's own buffers b->k, b->v or
     * the fused product's slices, read by nothing before attention) */
    if (m->quant)
        fq_kv_cache(m->quant, (float *)in->k, (float *)in->v, B, T, a->Hkv, a->dh,
                    (size_t)in->ldkv);
    attention_keep(&keep, in, &sp, &(AttnShape){B, T, a->H, a->Hkv, a->dh});
    if (b->slot && !in->sink_logit) /* a layer without sinks gives them no share */
        memset(b->slot, 0, (size_t)a->H * b->R * sizeof *b->slot);
    if (a->gate != HF_GATE_NONE) {
        const int g = hf_gate_per_head(a);
        gate_act_forward(b->g, b->g, (size_t)b->R * a->H * g,
                         a->gate_softplus ? ACT_SOFTPLUS : ACT_SIGMOID);
        iv_gate_scores(iv, l, b->g, 1, B, T, 0, a->H * g, FORM_MULT);
        gate_apply_forward(b->o, b->o, b->g, g == 1 ? GB_HEAD : GB_ELEM, FORM_MULT, b->R, a->H,
                           a->dh);
    }
    if (iv && a->H != m->H_all && iv->head_zero) { /* the mask is [L, H_all] */
        Intervention at = *iv;
        at.head_zero = iv->head_zero + (size_t)l * m->H_all;
        iv_head_output(&at, 0, b->o, B, T, a->H, a->dh);
    } else iv_head_output(iv, l, b->o, B, T, a->H, a->dh);
}

typedef struct {
    HfAct act;
    float *f1, *f2; /* f2: the GLU's gate input (overwritten), or NULL */
    float limit;    /* > 0: the SwiGLU clamped there (hf_glu_act) */
} ActJob;

/* The activation of one slice [i0, i1) through the core ops: f1 =
 * act(f1), or for the GLU f1 *= act(f2) (SwiGLU in one op; otherwise
 * f2 = act(f2), then the product). */
static void act_range(void *ctx, size_t i0, size_t i1) {
    const ActJob *j = ctx;
    float *f1 = j->f1 + i0, *x = j->f2 ? j->f2 + i0 : f1;
    const size_t n = i1 - i0;
    if (j->f2 && j->limit > 0) {
        const float c = j->limit;
        for (size_t i = 0; i < n; i++) {
            const float s = x[i] / (1.0f + expf(-x[i]));
            f1[i] = fminf(s, c) * fmaxf(fminf(f1[i], c), -c);
        }
        return;
    }
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

void hf_glu_act(HfAct act, float *up, float *gate, size_t n, float limit) {
    ActJob j = {act, up, gate, limit};
    act_range(&j, 0, n);
}

void hf_mlp(HfModel *m, const float *W[W_N_ROLES], const float *in, float *out, int acc, int ff) {
    hf_mlp_clamped(m, W, in, out, acc, ff, 0.0f);
}

void hf_mlp_clamped(HfModel *m, const float *W[W_N_ROLES], const float *in, float *out, int acc,
                    int ff, float limit) {
    const HfArch *a = &m->a;
    HfBufs *b = &m->b;
    ActJob act = {a->act, b->f1, a->glu ? b->f2 : NULL, a->glu ? limit : 0.0f};
    /* the activation runs on each thread's columns right after their sgemm:
     * GLU: f1 = up, then f1 *= act(gate) slice by slice; else f1 = act(up) */
    if (a->glu) hf_linear(m, b->f1, in, W[W_UP], W[W_UP_B], a->d, ff, m->w.conv1d, 0, FQ_OUT_FFN);
    HfLinear j = {.out = a->glu ? b->f2 : b->f1,
                  .in = in,
                  .W = W[a->glu ? W_GATE : W_UP],
                  .bias = W[a->glu ? W_GATE_B : W_UP_B],
                  .M = b->R,
                  .K = a->d,
                  .N = ff,
                  .conv1d = a->glu ? 0 : m->w.conv1d,
                  .ldo = ff,
                  .epi = act_range,
                  .epi_ctx = &act,
                  .T = b->T};
    hf_linear_quant(m, &j);
    hf_linear(m, out, b->f1, W[W_DOWN], W[W_DOWN_B], ff, a->d, m->w.conv1d, acc, FQ_OUT_FFN);
}

void hf_residual_add(const HfModel *m, float *x, const float *y, FqOut kind) {
    const size_t n = (size_t)m->b.R * m->a.d;
    if (m->quant && m->quant->observe) fq_output(m->quant, kind, y, m->b.B, n / (size_t)m->b.B);
    residual_forward(x, x, y, n);
}
