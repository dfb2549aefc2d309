/* hf_moe.c: gpt-oss's mixture-of-experts MLP (GptOssMLP of transformers
 * v4.55.0, modeling_gpt_oss.py): GptOssTopKRouter picks each token's
 * top_k experts by the router's logits and weights them by the softmax
 * over those k logits; each GptOssExperts expert takes
 * gate_up = x @ gate_up_proj[e] + bias, its even columns the gate and odd
 * ones the up projection, clamps the gate from above and the up
 * projection both ways at swiglu_limit, and returns
 * ((up + 1) * gate * sigmoid(alpha * gate)) @ down_proj[e] + bias. */
#include <math.h>
#include <string.h>

#include "hf_steps.h"

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

/* Expert e on the n rows x[n, d]: y[n, d] (scratch gu[n, 2ff], act[n,
 * ff]), one product of the n rows per weight. */
static void expert(const HfModel *m, const float *W[W_N_ROLES], int e, int n, const float *x,
                   float *gu, float *act, float *y) {
    const HfArch *a = &m->a;
    const size_t d = (size_t)a->d, ff = (size_t)a->ff;
    HfLinear up = {.out = gu,
                   .in = x,
                   .W = W[W_EXP_GU] + (size_t)e * d * 2 * ff,
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
    HfLinear down = {.out = y,
                     .in = act,
                     .W = W[W_EXP_DOWN] + (size_t)e * ff * d,
                     .bias = W[W_EXP_DOWN_B] + (size_t)e * d,
                     .M = n,
                     .K = a->ff,
                     .N = a->d,
                     .conv1d = 1,
                     .ldo = a->d};
    hf_linear_run(m->threads, &down);
}

/* Window w's rows [w T, (w + 1) T): each expert on the rows that chose
 * it (their router weights wt[T, k], experts idx[T, k]), its output times
 * the row's weight added to out, the experts in index order. */
static void window_experts(HfModel *m, const float *W[W_N_ROLES], int w, const int *idx,
                           const float *wt, const float *in, float *out) {
    const HfArch *a = &m->a;
    HfBufs *b = &m->b;
    const int T = b->T, k = a->top_k, d = a->d;
    float *x = b->moe, *gu = x + (size_t)T * d, *act = gu + (size_t)T * 2 * a->ff,
          *y = act + (size_t)T * a->ff, *g = y + (size_t)T * d;
    int *rows = b->moe_rows;
    for (int e = 0; e < a->n_experts; e++) {
        int n = 0;
        for (int t = 0; t < T; t++)
            for (int j = 0; j < k; j++)
                if (idx[t * k + j] == e) {
                    rows[n] = t, g[n] = wt[t * k + j];
                    memcpy(x + (size_t)n++ * d, in + ((size_t)w * T + t) * d, d * sizeof *x);
                }
        if (!n) continue;
        expert(m, W, e, n, x, gu, act, y);
        for (int r = 0; r < n; r++) {
            float *o = out + ((size_t)w * T + rows[r]) * d;
            for (int i = 0; i < d; i++) o[i] += g[r] * y[(size_t)r * d + i];
        }
    }
}

void hf_moe(HfModel *m, const float *W[W_N_ROLES], const float *in, float *out) {
    const HfArch *a = &m->a;
    HfBufs *b = &m->b;
    const int E = a->n_experts, k = a->top_k, T = b->T;
    hf_linear(m, b->router, in, W[W_ROUTER], W[W_ROUTER_B], a->d, E, 0, 0, FQ_OUT_FFN);
    for (int w = 0; w < b->B; w++) {
        int *idx = b->moe_idx;
        float *wt = b->moe_w;
        for (int t = 0; t < T; t++)
            top_k(b->router + ((size_t)w * T + t) * E, E, k, idx + t * k, wt + t * k);
        window_experts(m, W, w, idx, wt, in, out);
    }
}
