/* hf_moe.c: gpt-oss's mixture-of-experts MLP (GptOssMLP of transformers
 * v4.55.0, modeling_gpt_oss.py): GptOssTopKRouter picks each token's
 * top_k experts by the router's logits and weights them by the softmax
 * over those k logits; each GptOssExperts expert takes
 * gate_up = x @ gate_up_proj[e] + bias, its even columns the gate and odd
 * ones the up projection, clamps the gate from above and the up
 * projection both ways at swiglu_limit, and returns
 * ((up + 1) * gate * sigmoid(alpha * gate)) @ down_proj[e] + bias.
 * Under fake quantization the MLP input, each expert's slabs and the
 * activations go through fakequant.h's MoE calls. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hf_steps.h"
#include "util.h" /* falloc */

/* The k largest of z[n] (ties: the lower index first) into idx[k], their
 * softmax over those k into w[k]. */
static void top_k(const float *z, int n, int k, int *idx, float *w) {
    for (int j = 0; j < k; j++) {
        int best = -1;
        for (int e = 0; e < n; e++) {
            int taken = 0;
            for (int i = 0; i < j && !taken; i++) taken = idx[i] == e;
            if (!taken && (best < 0 || z[e] > z[best])) best = e;
        }
        idx[j] = best;
    }
    double sum = 0.0;
    for (int j = 0; j < k; j++) sum += exp((double)z[idx[j]] - z[idx[0]]);
    for (int j = 0; j < k; j++) w[j] = (float)(exp((double)z[idx[j]] - z[idx[0]]) / sum);
}

/* act[ff] = the clamped SwiGLU of the interleaved gu[2ff]. */
static void clamped_swiglu(float *act, const float *gu, int ff, float alpha, float limit) {
    for (int i = 0; i < ff; i++) {
        float g = fminf(gu[2 * i], limit);
        float u = fmaxf(fminf(gu[2 * i + 1], limit), -limit);
        act[i] = (u + 1.0f) * (g / (1.0f + expf(-alpha * g)));
    }
}

/* Expert e (its gate_up slab gu_w [d, 2ff], down slab down_w [ff, d]) on
 * the n rows x[n, d] at places pos[n] of their window: y[n, d] (scratch
 * gu[n, 2ff], act[n, ff]), one product of the n rows per weight; the
 * activations through the fake quantization, if any; no down product
 * without down_w (a sweep collecting the activations). */
static void expert(const HfModel *m, const float *W[W_N_ROLES], int e, const float *gu_w,
                   const float *down_w, int n, const int *pos, const float *x, float *gu,
                   float *act, float *y) {
    const HfArch *a = &m->a;
    const size_t ff = (size_t)a->ff;
    HfLinear up = {.out = gu,
                   .in = x,
                   .W = gu_w,
                   .bias = W[W_EXP_GU_B] + (size_t)e * 2 * ff,
                   .M = n,
                   .K = a->d,
                   .N = 2 * a->ff,
                   .conv1d = 1,
                   .ldo = 2 * a->ff};
    hf_linear_run(m->threads, &up);
    for (int r = 0; r < n; r++)
        clamped_swiglu(act + r * ff, gu + r * 2 * ff, a->ff, (float)a->swiglu_alpha,
                       (float)a->swiglu_limit);
    if (m->quant) fq_moe_hidden(m->quant, act, (size_t)n, ff, pos);
    if (!down_w) return;
    HfLinear down = {.out = y,
                     .in = act,
                     .W = down_w,
                     .bias = W[W_EXP_DOWN_B] + (size_t)e * a->d,
                     .M = n,
                     .K = a->ff,
                     .N = a->d,
                     .conv1d = 1,
                     .ldo = a->d};
    hf_linear_run(m->threads, &down);
}

/* Expert e (slabs gu_w, down_w) on the rows of window w that chose it
 * (the router's weights wt[R, k] and experts idx[R, k]), its output times
 * each row's weight added to out (none without down_w). */
static void window_expert(HfModel *m, const float *W[W_N_ROLES], int e, const float *gu_w,
                          const float *down_w, int w, const float *in, float *out) {
    const HfArch *a = &m->a;
    HfBufs *b = &m->b;
    const int T = b->T, k = a->top_k, d = a->d;
    const int *idx = b->moe_idx + (size_t)w * T * k;
    const float *wt = b->moe_w + (size_t)w * T * k;
    float *x = b->moe, *gu = x + (size_t)T * d, *act = gu + (size_t)T * 2 * a->ff,
          *y = act + (size_t)T * a->ff, *g = y + (size_t)T * d;
    int *rows = b->moe_rows, n = 0;
    for (int t = 0; t < T; t++)
        for (int j = 0; j < k; j++)
            if (idx[t * k + j] == e) {
                rows[n] = t, g[n] = wt[t * k + j];
                memcpy(x + (size_t)n++ * d, in + ((size_t)w * T + t) * d, d * sizeof *x);
            }
    if (!n) return;
    expert(m, W, e, gu_w, down_w, n, rows, x, gu, act, y);
    if (!down_w) return;
    for (int r = 0; r < n; r++) {
        float *o = out + ((size_t)w * T + rows[r]) * d;
        for (int i = 0; i < d; i++) o[i] += g[r] * y[(size_t)r * d + i];
    }
}

/* Does any row of the pass route to expert e? */
static int expert_used(const HfBufs *b, int e, int k) {
    for (size_t i = 0; i < (size_t)b->R * k; i++)
        if (b->moe_idx[i] == e) return 1;
    return 0;
}

/* Every expert the pass's rows chose on them (in [R, d]), expert by
 * expert (its weights converted once, through the fake quantization), window
 * by window: a row still gets its experts' outputs in index order, added to
 * out; out NULL: the gate_up products and activations only. */
static int experts(HfModel *m, int l, const float *W[W_N_ROLES], const float *in, float *out,
                   char *err, size_t errlen) {
    const HfArch *a = &m->a;
    HfBufs *b = &m->b;
    const size_t slab = 2 * (size_t)a->d * a->ff;
    for (int e = 0; e < a->n_experts; e++) {
        if (!expert_used(b, e, a->top_k)) continue;
        const float *gu_w = hf_weights_expert(&m->w, l, W_EXP_GU, e, err, errlen), *down_w = NULL;
        if (!gu_w) return -1;
        if (out && !(down_w = hf_weights_expert(&m->w, l, W_EXP_DOWN, e, err, errlen))) return -1;
        if (m->quant) {
            gu_w = fq_expert_weight(m->quant, FQ_SLAB_GATE_UP, gu_w, slab);
            if (down_w) down_w = fq_expert_weight(m->quant, FQ_SLAB_DOWN, down_w, slab / 2);
        }
        for (int w = 0; w < b->B; w++) window_expert(m, W, e, gu_w, down_w, w, in, out);
    }
    return 0;
}

/* experts() with the statistics on (q->observe): the experts' sum made
 * apart, recorded as the MLP's output (FQ_OUT_FFN), then added to out, as
 * hf_linear records a dense MLP's (statistics passes only). */
static int experts_observed(HfModel *m, int l, const float *W[W_N_ROLES], const float *in,
                            float *out, char *err, size_t errlen) {
    FakeQuant *q = m->quant;
    const size_t n = (size_t)m->b.R * m->a.d;
    float *y = falloc(n);
    if (!y) { /* no statistics, the pass itself still made */
        q->failed = 1;
        return experts(m, l, W, in, out, err, errlen);
    }
    memset(y, 0, n * sizeof *y);
    int rc = experts(m, l, W, in, y, err, errlen);
    fq_output(q, FQ_OUT_FFN, y, m->b.B, n / (size_t)m->b.B);
    for (size_t i = 0; i < n; i++) out[i] += y[i];
    free(y);
    return rc;
}

int hf_moe(HfModel *m, int l, const float *W[W_N_ROLES], const float *in, float *out, char *err,
           size_t errlen) {
    const HfArch *a = &m->a;
    HfBufs *b = &m->b;
    const int E = a->n_experts, k = a->top_k;
    hf_linear(m, b->router, in, W[W_ROUTER], W[W_ROUTER_B], a->d, E, 0, 0, FQ_OUT_FFN);
    for (int t = 0; t < b->R; t++)
        top_k(b->router + (size_t)t * E, E, k, b->moe_idx + (size_t)t * k,
              b->moe_w + (size_t)t * k);
    FakeQuant *q = m->quant;
    const float *x = q ? fq_moe_input(q, in, (size_t)b->R, (size_t)a->d) : in;
    /* a calibration pass sweeps the experts once for the activations' range */
    while (q && fq_moe_hidden_sweep(q, b->moe))
        if (experts(m, l, W, x, NULL, err, errlen) != 0) return -1;
    if (q && q->observe) return experts_observed(m, l, W, x, out, err, errlen);
    return experts(m, l, W, x, out, err, errlen);
}
