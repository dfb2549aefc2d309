/* hf_moe.c: the mixture-of-experts MLP, one path for gpt-oss (GptOssMLP
 * of transformers v4.55.0, modeling_gpt_oss.py), AFMoE (AfmoeMoE of
 * modeling_afmoe.py, transformers commit d4037de), Laguna
 * (LagunaSparseMoeBlock of modeling_laguna.py, commit ca5ff0b) and
 * Step-3.5 (Step3p7MoEMLP of modeling_step3p7.py, commit a7b81df): the router's logits
 * (mlp.router), each token's top_k experts and their weights as the
 * family's HfRouter says, the shared experts where the layer has them,
 * then each routed expert on the rows that chose it. The experts:
 *   gpt-oss (GptOssExperts, 3-D tensors): gate_up = x @ gate_up_proj[e] +
 *     bias, its even columns the gate and odd ones the up projection,
 *     the gate clamped from above and the up projection both ways at
 *     swiglu_limit, ((up + 1) * gate * sigmoid(alpha * gate)) @
 *     down_proj[e] + bias;
 *   AFMoE, Laguna and MiMo (their tensors per expert, or Laguna's stacked
 *     gate_up_proj [E, 2ff, d] and down_proj [E, d, ff]):
 *     down_proj(act(gate_proj(x)) * up_proj(x)), bias-free, the SwiGLU of
 *     the dense MLP, clamped where the layer has a limit
 *     (HfArch.swiglu_limit[l]; the shared experts' swiglu_limit_shared[l]);
 *   Step-3.5 (its experts stacked as Laguna's, or the legacy 3-D
 *     gate_proj, up_proj, down_proj [E, out, in]): the same.
 * Under fake quantization the MLP input, each expert's slabs and the
 * experts' activations go through fakequant.h's MoE calls. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hf_steps.h"
#include "util.h" /* falloc */

/* z[n] = its softmax over all n entries (in double). */
static void softmax_all(float *z, int n) {
    double mx = z[0], sum = 0.0;
    for (int e = 1; e < n; e++) mx = fmax(mx, z[e]);
    for (int e = 0; e < n; e++) sum += exp((double)z[e] - mx);
    for (int e = 0; e < n; e++) z[e] = (float)(exp((double)z[e] - mx) / sum);
}

/* Token's top k of n experts by r from its router logits z[n] (capped,
 * then scored, in place under a sigmoid or softmax router), ties to the
 * lower index:
 * idx[k] and the weights w[k]. bias: the selection bias (AFMoE's
 * expert_bias, Laguna's e_score_correction_bias), or NULL. */
static void route(const HfRouter *r, float *z, const float *bias, int n, int k, int *idx,
                  float *w) {
    if (r->softcap > 0)
        for (int e = 0; e < n; e++) z[e] = (float)(r->softcap * tanh((double)z[e] / r->softcap));
    if (r->score == HF_SCORE_SIGMOID)
        for (int e = 0; e < n; e++) z[e] = (float)(1.0 / (1.0 + exp(-(double)z[e])));
    if (r->score == HF_SCORE_SOFTMAX) softmax_all(z, n);
    for (int j = 0; j < k; j++) {
        int best = -1;
        for (int e = 0; e < n; e++) {
            int taken = 0;
            for (int i = 0; i < j && !taken; i++) taken = idx[i] == e;
            if (taken) continue;
            if (best < 0 || (bias ? z[e] + bias[e] > z[best] + bias[best] : z[e] > z[best]))
                best = e;
        }
        idx[j] = best;
    }
    double sum = 0.0;
    if (r->score == HF_SCORE_SOFTMAX_TOPK) {
        for (int j = 0; j < k; j++) sum += exp((double)z[idx[j]] - z[idx[0]]);
        for (int j = 0; j < k; j++) w[j] = (float)(exp((double)z[idx[j]] - z[idx[0]]) / sum);
        return;
    }
    for (int j = 0; j < k; j++) sum += z[idx[j]];
    for (int j = 0; j < k; j++)
        w[j] = (float)((r->renorm ? z[idx[j]] / (sum + 1e-20) : z[idx[j]]) * r->scale);
}

/* act[ff] = the clamped SwiGLU of the interleaved gu[2ff]. */
static void clamped_swiglu(float *act, const float *gu, int ff, float alpha, float limit) {
    for (int i = 0; i < ff; i++) {
        float g = fminf(gu[2 * i], limit);
        float u = fmaxf(fminf(gu[2 * i + 1], limit), -limit);
        act[i] = (u + 1.0f) * (g / (1.0f + expf(-alpha * g)));
    }
}

/* One expert's weights as hf_weights_expert hands them out: gpt-oss's
 * gate_up slab gu [d, 2ff] and down slab [ff, d] ([in, out]) with their
 * biases, or AFMoE's and Laguna's gate, up [ff, d] and down [d, ff]
 * ([out, in]; a stacked gate_up slab's two row blocks). */
typedef struct {
    const float *gu, *gate, *up, *down, *gu_b, *down_b;
    float limit; /* the layer's SwiGLU limit (HfArch.swiglu_limit; 0: none) */
} ExpertW;

/* Expert x on the n rows in[n, d] at places pos[n] of their window:
 * y[n, d] (scratch gu[n, 2ff], act[n, ff]), one product of the n rows per
 * weight; the activations through the fake quantization, if any; no down
 * product without x->down (a sweep collecting the activations). */
static void expert(const HfModel *m, const ExpertW *x, int n, const int *pos, const float *in,
                   float *gu, float *act, float *y) {
    const HfArch *a = &m->a;
    const int ff = a->moe_ff, d = a->d, fused = x->gu != NULL;
    HfLinear j = {.in = in, .M = n, .K = d, .conv1d = fused};
    if (fused) {
        j.out = gu, j.W = x->gu, j.bias = x->gu_b, j.N = j.ldo = 2 * ff;
        hf_linear_run(m->threads, &j);
        for (int r = 0; r < n; r++)
            clamped_swiglu(act + (size_t)r * ff, gu + (size_t)r * 2 * ff, ff,
                           (float)a->swiglu_alpha, x->limit);
    } else {
        j.out = gu, j.W = x->gate, j.N = j.ldo = ff;
        hf_linear_run(m->threads, &j);
        j.out = act, j.W = x->up;
        hf_linear_run(m->threads, &j);
        hf_glu_act(a->act, act, gu, (size_t)n * ff, x->limit);
    }
    if (m->quant) fq_moe_hidden(m->quant, act, (size_t)n, (size_t)ff, pos);
    if (!x->down) return;
    HfLinear down = {.out = y,
                     .in = act,
                     .W = x->down,
                     .bias = x->down_b,
                     .M = n,
                     .K = ff,
                     .N = d,
                     .conv1d = fused,
                     .ldo = d};
    hf_linear_run(m->threads, &down);
}

/* Expert e (weights x) on the rows of window w that chose it (the
 * router's weights wt[R, k] and experts idx[R, k]), its output times each
 * row's weight added to out (none without x->down). */
static void window_expert(HfModel *m, const ExpertW *x, int e, int w, const float *in, float *out) {
    const HfArch *a = &m->a;
    HfBufs *b = &m->b;
    const int T = b->T, k = a->top_k, d = a->d;
    const int *idx = b->moe_idx + (size_t)w * T * k;
    const float *wt = b->moe_w + (size_t)w * T * k;
    float *xs = b->moe, *gu = xs + (size_t)T * d, *act = gu + (size_t)T * 2 * a->moe_ff,
          *y = act + (size_t)T * a->moe_ff, *g = y + (size_t)T * d;
    int *rows = b->moe_rows, n = 0;
    for (int t = 0; t < T; t++)
        for (int j = 0; j < k; j++)
            if (idx[t * k + j] == e) {
                rows[n] = t, g[n] = wt[t * k + j];
                memcpy(xs + (size_t)n++ * d, in + ((size_t)w * T + t) * d, d * sizeof *xs);
            }
    if (!n) return;
    expert(m, x, n, rows, xs, gu, act, y);
    if (!x->down) return;
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

/* Expert e's weights of layer l into x (converted once for all the
 * windows, then through the fake quantization, if any); without down,
 * no down slab (a sweep collecting the activations). -1 with one line in
 * err when a conversion fails. */
static int expert_weights(HfModel *m, int l, const float *W[W_N_ROLES], int e, int down, ExpertW *x,
                          char *err, size_t errlen) {
    const HfArch *a = &m->a;
    const HfWeights *w = &m->w;
    const size_t d = (size_t)a->d, ff = (size_t)a->moe_ff;
    FakeQuant *q = m->quant;
    memset(x, 0, sizeof *x);
    x->limit = a->swiglu_limit[l];
    if (w->layers[l].stacked) { /* [out, in] slabs: gate_up's gate rows, then its up rows */
        const float *gu = hf_weights_expert(w, l, W_EXP_GU, e, err, errlen);
        if (!gu) return -1;
        x->gate = gu, x->up = gu + ff * d;
        if (q) x->gate = fq_expert_weight(q, FQ_SLAB_GATE_UP, x->gate, d * ff);
        if (q) x->up = fq_expert_weight(q, FQ_SLAB_UP, x->up, d * ff);
    } else if (w->layers[l].t[W_EXP_GU]) { /* 3-D tensors, biased */
        x->gu_b = W[W_EXP_GU_B] ? W[W_EXP_GU_B] + (size_t)e * 2 * ff : NULL;
        x->down_b = W[W_EXP_DOWN_B] ? W[W_EXP_DOWN_B] + (size_t)e * d : NULL;
        if (!(x->gu = hf_weights_expert(w, l, W_EXP_GU, e, err, errlen))) return -1;
        if (q) x->gu = fq_expert_weight(q, FQ_SLAB_GATE_UP, x->gu, 2 * d * ff);
    } else {
        if (!(x->gate = hf_weights_expert(w, l, W_EXP_GATE, e, err, errlen)) ||
            !(x->up = hf_weights_expert(w, l, W_EXP_UP, e, err, errlen)))
            return -1;
        if (q) x->gate = fq_expert_weight(q, FQ_SLAB_GATE_UP, x->gate, d * ff);
        if (q) x->up = fq_expert_weight(q, FQ_SLAB_UP, x->up, d * ff);
    }
    if (!down) return 0;
    if (!(x->down = hf_weights_expert(w, l, W_EXP_DOWN, e, err, errlen))) return -1;
    if (q) x->down = fq_expert_weight(q, FQ_SLAB_DOWN, x->down, d * ff);
    return 0;
}

/* Every expert the pass's rows chose on them (in [R, d]), expert by
 * expert (its weights converted once), window by window: a row still gets
 * its experts' outputs in index order, added to out; out NULL: the gate
 * and up products and activations only. */
static int experts(HfModel *m, int l, const float *W[W_N_ROLES], const float *in, float *out,
                   char *err, size_t errlen) {
    HfBufs *b = &m->b;
    for (int e = 0; e < m->a.n_experts; e++) {
        ExpertW x;
        if (!expert_used(b, e, m->a.top_k)) continue;
        if (expert_weights(m, l, W, e, out != NULL, &x, err, errlen) < 0) return -1;
        for (int w = 0; w < b->B; w++) window_expert(m, &x, e, w, in, out);
    }
    return 0;
}

/* experts() with the statistics on (q->observe) where the MoE's output
 * joins the residual stream directly (acc): the experts' sum made apart,
 * recorded as the MLP's output (FQ_OUT_FFN), then added to out, as
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

int hf_moe(HfModel *m, int l, const float *W[W_N_ROLES], const float *in, float *out, int acc,
           char *err, size_t errlen) {
    const HfArch *a = &m->a;
    HfBufs *b = &m->b;
    const int E = a->n_experts, k = a->top_k;
    hf_linear(m, b->router, in, W[W_ROUTER], W[W_ROUTER_B], a->d, E, 0, 0, FQ_OUT_FFN);
    for (int t = 0; t < b->R; t++)
        route(&a->router, b->router + (size_t)t * E, a->router.select_bias ? W[W_EXP_BIAS] : NULL,
              E, k, b->moe_idx + (size_t)t * k, b->moe_w + (size_t)t * k);
    FakeQuant *q = m->quant;
    const float *x = q ? fq_moe_input(q, in, (size_t)b->R, (size_t)a->d) : in;
    if (W[W_GATE]) /* shared experts */
        hf_mlp_clamped(m, W, in, out, 0, a->shared_ff, a->swiglu_limit_shared[l]);
    /* a calibration pass sweeps the experts once for the activations' range */
    while (q && fq_moe_hidden_sweep(q, b->moe))
        if (experts(m, l, W, x, NULL, err, errlen) != 0) return -1;
    if (acc && q && q->observe) return experts_observed(m, l, W, x, out, err, errlen);
    return experts(m, l, W, x, out, err, errlen);
}
