/* hf_recipes.c: one recipe per architecture: which steps (hf_steps.h, on
 * the core ops), in which order, with which weights, following each
 * modeling file of Hugging Face transformers:
 *   Llama / Qwen2 / Qwen3: RMSNorm, q/k/v (+bias), [per-head q/k RMSNorm],
 *     RoPE (rotate_half, rope_theta, llama3 or YaRN scaling), GQA softmax
 *     attention, [gated: o *= sigmoid(gate)], o_proj, residual, SwiGLU MLP,
 *     residual;
 *   Mistral: Llama's, with every layer's attention under the sliding
 *     window (modeling_mistral.py);
 *   Phi-3: Llama's, its fused qkv_proj and gate_up_proj read as the
 *     separate projections (hf_weights_layer), RoPE on the first
 *     rotary_dim dims of each head (partial_rotary_factor) and the
 *     sliding window, when set, on every layer (modeling_phi3.py);
 *   OLMo 2: no pre-norms; q/k/v, RMSNorm over the whole q and k
 *     projections, RoPE, attention, o_proj, RMSNorm of the attention's
 *     output, residual; SwiGLU MLP, RMSNorm of its output, residual
 *     (modeling_olmo2.py);
 *   Gemma 2 / Gemma 3 (text): RMSNorm by (1 + w) (bound so by
 *     hf_weights), q/k/v, [Gemma 3: per-head q_norm / k_norm], RoPE (Gemma
 *     3's sliding layers on their own base), attention scaled by
 *     query_pre_attn_scalar^-1/2, [Gemma 2: logits soft-capped], on
 *     alternate (Gemma 2) or all but every sixth (Gemma 3) layers under
 *     the sliding window, o_proj, RMSNorm of the output, residual; the
 *     same sandwich around the tanh-GELU GLU MLP (modeling_gemma2.py,
 *     modeling_gemma3.py; the embedding's sqrt(d) and the final logits'
 *     soft cap in hf_model.c);
 *   GPT-2: LayerNorm, fused Conv1D c_attn, no rotary (learned positions at
 *     the embedding), tanh-GELU MLP;
 *   GPT-NeoX: LayerNorm, fused per-head query_key_value, partial rotary,
 *     parallel (or sequential) residual, GELU MLP;
 *   gpt-oss: RMSNorm, q/k/v with biases, RoPE (YaRN), GQA attention with
 *     a learned sink logit per head in each softmax, every other layer
 *     (from layer 0) under the sliding window, o_proj with bias,
 *     residual, RMSNorm, the MoE MLP (hf_moe.c), residual
 *     (modeling_gpt_oss.py, transformers v4.55.0);
 *   AFMoE: Gemma's sandwich with plain RMSNorms, per-head q_norm /
 *     k_norm, RoPE on the sliding layers only, the attention output times
 *     sigmoid(gate_proj(h)) elementwise, the dense SwiGLU MLP on the first
 *     num_dense_layers layers, the MoE MLP (hf_moe.c: sigmoid router,
 *     shared experts) on the others (modeling_afmoe.py, transformers
 *     commit d4037de);
 *   Laguna: Llama's layer, bias-free, per-head q_norm / k_norm, RoPE on
 *     the first half of each head's dims on the full-attention layers
 *     and on all of them on the sliding ones (each type its own base),
 *     each head's output times softplus(g_proj(h)) (one score a head),
 *     the dense SwiGLU MLP or the MoE MLP (hf_moe.c: sigmoid router with
 *     a score-correction bias, one shared expert) as mlp_layer_types says
 *     (modeling_laguna.py, transformers commit ca5ff0b);
 *   MiMo-V2-Flash: Llama's layer, bias-free, each layer's own query and
 *     KV heads, values of their own head dim times attention_value_scale,
 *     RoPE on the first rotary_dim dims (the sliding layers on their own
 *     base), a learned sink logit per head on the layers that have one
 *     (gpt-oss's), the dense SwiGLU MLP or the MoE MLP (hf_moe.c: sigmoid
 *     router with a score-correction bias, no shared expert) as
 *     moe_layer_freq says (vLLM's mimo_v2_flash.py). */
#include <string.h>

#include "hf_steps.h"

/* q_proj per KV group is [group*dh queries | group*g gate scores]: the
 * queries into b.q [R, H*dh], the gate scores into b.g [R, H*g] (g = 0
 * where the gate has its own projection). */
static void split_q_gate(const HfArch *a, HfBufs *b) {
    const int H = a->H, dh = a->dh, g = a->gate_proj[0] ? 0 : hf_gate_per_head(a), grp = H / a->Hkv;
    const size_t hd = (size_t)H * dh, rows = (size_t)hf_q_rows(a);
    for (size_t t = 0; t < (size_t)b->R; t++)
        for (int kv = 0; kv < a->Hkv; kv++) {
            const float *r = b->qraw + t * rows + (size_t)kv * grp * (dh + g);
            memcpy(b->q + t * hd + (size_t)kv * grp * dh, r, (size_t)grp * dh * sizeof(float));
            if (g)
                memcpy(b->g + (t * H + (size_t)kv * grp) * g, r + (size_t)grp * dh,
                       (size_t)grp * g * sizeof(float));
        }
}

/* The values into b.v [R, Hkv*dh]: v_proj's Hkv*dv rows (b.o their
 * scratch where dv < dh), times v_scale where set, each head's
 * zero-padded to dh, so that attention runs at one head dim. */
static void values(HfModel *m, const float *W[W_N_ROLES]) {
    const HfArch *a = &m->a;
    HfBufs *b = &m->b;
    const int dv = hf_vdim(a), dh = a->dh, n = a->Hkv * dv;
    float *y = dv == dh ? b->v : b->o;
    hf_linear(m, y, b->h, W[W_V], W[W_VB], a->d, n, 0, 0, FQ_OUT_ATTN);
    for (size_t i = 0; a->v_scale > 0 && i < (size_t)b->R * n; i++) y[i] *= a->v_scale;
    if (dv == dh) return;
    for (size_t r = 0; r < (size_t)b->R; r++)
        for (int h = 0; h < a->Hkv; h++) {
            float *dst = b->v + (r * a->Hkv + h) * dh;
            memcpy(dst, y + r * n + (size_t)h * dv, (size_t)dv * sizeof *dst);
            memset(dst + dv, 0, (size_t)(dh - dv) * sizeof *dst);
        }
}

/* The heads' outputs as o_proj reads them [R, H*dv]: b.o, or where
 * dv < dh each head's first dv gathered into b.qraw (b.o stays padded,
 * as the probe reads it). */
static const float *heads_out(HfModel *m) {
    const HfArch *a = &m->a;
    HfBufs *b = &m->b;
    const int dv = hf_vdim(a), dh = a->dh;
    if (dv == dh) return b->o;
    for (size_t r = 0; r < (size_t)b->R; r++)
        for (int h = 0; h < a->H; h++)
            memcpy(b->qraw + (r * a->H + h) * dv, b->o + (r * a->H + h) * dh,
                   (size_t)dv * sizeof *b->qraw);
    return b->qraw;
}

/* The gate scores of the gate's own projection (W_GPROJ, where the
 * architecture has one) of the layer's normed input h into b.g. */
static void gate_proj(HfModel *m, const float *W[W_N_ROLES], const float *h) {
    const HfArch *a = &m->a;
    if (W[W_GPROJ])
        hf_linear(m, m->b.g, h, W[W_GPROJ], NULL, a->d, a->H * hf_gate_per_head(a), 0, 0,
                  FQ_OUT_ATTN);
}

/* Llama's layer; Laguna's gate scores from the normed input (g_proj),
 * and on its MoE layers the MoE block (shared expert, then the routed
 * ones) into b.moe_out before the residual add. */
static int llama_layer(HfModel *m, int l, const float *W[W_N_ROLES], const Intervention *iv,
                       char *err, size_t errlen) {
    const HfArch *a = &m->a;
    HfBufs *b = &m->b;
    const int R = b->R, kv = a->Hkv * a->dh, hd = a->H * a->dh;
    hf_norm(m, b->h, b->x, W[W_LN1], W[W_LN1_B], R, a->d, a->rms);
    hf_linear(m, b->qraw, b->h, W[W_Q], W[W_QB], a->d, hf_q_rows(a), 0, 0, FQ_OUT_ATTN);
    hf_linear(m, b->k, b->h, W[W_K], W[W_KB], a->d, kv, 0, 0, FQ_OUT_ATTN);
    values(m, W);
    split_q_gate(a, b);
    gate_proj(m, W, b->h);
    if (W[W_QN] && W[W_KN]) { /* Qwen3 q_norm / k_norm: per head */
        hf_norm(m, b->q, b->q, W[W_QN], NULL, R * a->H, a->dh, 1);
        hf_norm(m, b->k, b->k, W[W_KN], NULL, R * a->Hkv, a->dh, 1);
    }
    hf_rope(m, l, b->q, a->H);
    hf_rope(m, l, b->k, a->Hkv);
    AttnIn in = {.q = b->q, .k = b->k, .v = b->v, .ldq = hd, .ldkv = kv, .sink_logit = W[W_SINKS]};
    hf_attend(m, l, &in, iv);
    hf_linear(m, b->x, heads_out(m), W[W_O], W[W_OB], a->H * hf_vdim(a), a->d, m->w.conv1d, 1,
              FQ_OUT_ATTN);
    hf_norm(m, b->h, b->x, W[W_LN2], W[W_LN2_B], R, a->d, a->rms);
    if (!W[W_ROUTER]) { /* a dense layer's MLP clamped at its shared limit (Step-3.5) */
        hf_mlp_clamped(m, W, m->b.h, m->b.x, 1, a->ff, a->swiglu_limit_shared[l]);
        return 0;
    }
    memset(b->moe_out, 0, (size_t)R * a->d * sizeof *b->moe_out);
    if (hf_moe(m, l, W, b->h, b->moe_out, 0, err, errlen) < 0) return -1;
    hf_residual_add(m, b->x, b->moe_out, FQ_OUT_FFN);
    return 0;
}

/* OLMo 2: the norms come after each block, before its residual add; b.h
 * holds each block's output while it is normed. */
static int olmo2_layer(HfModel *m, int l, const float *W[W_N_ROLES], const Intervention *iv) {
    const HfArch *a = &m->a;
    HfBufs *b = &m->b;
    const int R = b->R, kv = a->Hkv * a->dh, hd = a->H * a->dh;
    hf_linear(m, b->q, b->x, W[W_Q], W[W_QB], a->d, hd, 0, 0, FQ_OUT_ATTN);
    hf_linear(m, b->k, b->x, W[W_K], W[W_KB], a->d, kv, 0, 0, FQ_OUT_ATTN);
    hf_linear(m, b->v, b->x, W[W_V], W[W_VB], a->d, kv, 0, 0, FQ_OUT_ATTN);
    hf_norm(m, b->q, b->q, W[W_QN], NULL, R, hd, 1);
    hf_norm(m, b->k, b->k, W[W_KN], NULL, R, kv, 1);
    hf_rope(m, l, b->q, a->H);
    hf_rope(m, l, b->k, a->Hkv);
    hf_attend(m, l, &(AttnIn){.q = b->q, .k = b->k, .v = b->v, .ldq = hd, .ldkv = kv}, iv);
    hf_linear(m, b->h, b->o, W[W_O], W[W_OB], hd, a->d, 0, 0, FQ_OUT_ATTN);
    hf_norm(m, b->h, b->h, W[W_LN1], NULL, R, a->d, 1);
    hf_residual_add(m, b->x, b->h, FQ_OUT_ATTN);
    hf_mlp(m, W, b->x, b->h, 0, a->ff);
    hf_norm(m, b->h, b->h, W[W_LN2], NULL, R, a->d, 1);
    hf_residual_add(m, b->x, b->h, FQ_OUT_FFN);
    return 0;
}

/* Gemma 2 and 3, AFMoE: each block between a norm of its input and a
 * norm of its output, then the residual add; b.h holds the block's
 * output (an MoE layer's MLP output first in b.moe_out). AFMoE's gate scores come from the normed
 * input (gate_proj), its full-attention layers skip RoPE (hf_rope). */
static int gemma_layer(HfModel *m, int l, const float *W[W_N_ROLES], const Intervention *iv,
                       char *err, size_t errlen) {
    const HfArch *a = &m->a;
    HfBufs *b = &m->b;
    const int R = b->R, kv = a->Hkv * a->dh, hd = a->H * a->dh;
    hf_norm(m, b->h, b->x, W[W_LN1], NULL, R, a->d, 1);
    hf_linear(m, b->q, b->h, W[W_Q], NULL, a->d, hd, 0, 0, FQ_OUT_ATTN);
    hf_linear(m, b->k, b->h, W[W_K], NULL, a->d, kv, 0, 0, FQ_OUT_ATTN);
    hf_linear(m, b->v, b->h, W[W_V], NULL, a->d, kv, 0, 0, FQ_OUT_ATTN);
    gate_proj(m, W, b->h);
    if (W[W_QN] && W[W_KN]) { /* Gemma 3, AFMoE: per head */
        hf_norm(m, b->q, b->q, W[W_QN], NULL, R * a->H, a->dh, 1);
        hf_norm(m, b->k, b->k, W[W_KN], NULL, R * a->Hkv, a->dh, 1);
    }
    hf_rope(m, l, b->q, a->H);
    hf_rope(m, l, b->k, a->Hkv);
    hf_attend(m, l, &(AttnIn){.q = b->q, .k = b->k, .v = b->v, .ldq = hd, .ldkv = kv}, iv);
    hf_linear(m, b->h, b->o, W[W_O], NULL, hd, a->d, 0, 0, FQ_OUT_ATTN);
    hf_norm(m, b->h, b->h, W[W_LN1_POST], NULL, R, a->d, 1);
    hf_residual_add(m, b->x, b->h, FQ_OUT_ATTN);
    hf_norm(m, b->h, b->x, W[W_LN2], NULL, R, a->d, 1);
    const float *y = b->h;
    if (W[W_ROUTER]) { /* AFMoE's MoE layers */
        memset(b->moe_out, 0, (size_t)R * a->d * sizeof *b->moe_out);
        if (hf_moe(m, l, W, b->h, b->moe_out, 0, err, errlen) < 0) return -1;
        y = b->moe_out;
    } else hf_mlp_clamped(m, W, b->h, b->h, 0, a->ff, a->swiglu_limit_shared[l]);
    hf_norm(m, b->h, y, W[W_LN2_POST], NULL, R, a->d, 1);
    hf_residual_add(m, b->x, b->h, FQ_OUT_FFN);
    return 0;
}

static int gpt2_layer(HfModel *m, int l, const float *W[W_N_ROLES], const Intervention *iv) {
    const HfArch *a = &m->a;
    HfBufs *b = &m->b;
    const int d = a->d;
    hf_norm(m, b->h, b->x, W[W_LN1], W[W_LN1_B], b->R, d, a->rms);
    hf_linear(m, b->qraw, b->h, W[W_QKV], W[W_QKV_B], d, 3 * d, m->w.conv1d, 0, FQ_OUT_ATTN);
    /* attention reads the fused [q | k | v] rows in place */
    hf_attend(m, l,
              &(AttnIn){.q = b->qraw,
                        .k = b->qraw + d,
                        .v = b->qraw + 2 * (size_t)d,
                        .ldq = 3 * d,
                        .ldkv = 3 * d},
              iv);
    hf_linear(m, b->x, b->o, W[W_O], W[W_OB], d, d, m->w.conv1d, 1, FQ_OUT_ATTN);
    hf_norm(m, b->h, b->x, W[W_LN2], W[W_LN2_B], b->R, d, a->rms);
    hf_mlp(m, W, m->b.h, m->b.x, 1, a->ff);
    return 0;
}

/* query_key_value is per head [q(dh) k(dh) v(dh)]: into b.q, b.k, b.v. */
static void split_neox(const HfArch *a, HfBufs *b) {
    const int H = a->H, dh = a->dh;
    const size_t hd = (size_t)H * dh;
    for (size_t t = 0; t < (size_t)b->R; t++)
        for (int h = 0; h < H; h++) {
            const float *r = b->qraw + t * 3 * a->d + (size_t)h * 3 * dh;
            size_t o = t * hd + (size_t)h * dh;
            memcpy(b->q + o, r, dh * sizeof(float));
            memcpy(b->k + o, r + dh, dh * sizeof(float));
            memcpy(b->v + o, r + 2 * dh, dh * sizeof(float));
        }
}

static int neox_layer(HfModel *m, int l, const float *W[W_N_ROLES], const Intervention *iv) {
    const HfArch *a = &m->a;
    HfBufs *b = &m->b;
    const int d = a->d, hd = a->H * a->dh;
    hf_norm(m, b->h, b->x, W[W_LN1], W[W_LN1_B], b->R, d, a->rms);
    hf_linear(m, b->qraw, b->h, W[W_QKV], W[W_QKV_B], d, 3 * d, m->w.conv1d, 0, FQ_OUT_ATTN);
    split_neox(a, b);
    hf_rope(m, l, b->q, a->H);
    hf_rope(m, l, b->k, a->Hkv);
    hf_attend(m, l, &(AttnIn){.q = b->q, .k = b->k, .v = b->v, .ldq = hd, .ldkv = hd}, iv);
    /* parallel residual: both blocks read the same x, so the second norm
     * is taken before o_proj adds to x */
    if (a->parallel_residual) hf_norm(m, b->h, b->x, W[W_LN2], W[W_LN2_B], b->R, d, a->rms);
    hf_linear(m, b->x, b->o, W[W_O], W[W_OB], hd, d, m->w.conv1d, 1, FQ_OUT_ATTN);
    if (!a->parallel_residual) hf_norm(m, b->h, b->x, W[W_LN2], W[W_LN2_B], b->R, d, a->rms);
    hf_mlp(m, W, m->b.h, m->b.x, 1, a->ff);
    return 0;
}

static int gptoss_layer(HfModel *m, int l, const float *W[W_N_ROLES], const Intervention *iv,
                        char *err, size_t errlen) {
    const HfArch *a = &m->a;
    HfBufs *b = &m->b;
    const int R = b->R, kv = a->Hkv * a->dh, hd = a->H * a->dh;
    hf_norm(m, b->h, b->x, W[W_LN1], NULL, R, a->d, 1);
    hf_linear(m, b->q, b->h, W[W_Q], W[W_QB], a->d, hd, 0, 0, FQ_OUT_ATTN);
    hf_linear(m, b->k, b->h, W[W_K], W[W_KB], a->d, kv, 0, 0, FQ_OUT_ATTN);
    hf_linear(m, b->v, b->h, W[W_V], W[W_VB], a->d, kv, 0, 0, FQ_OUT_ATTN);
    hf_rope(m, l, b->q, a->H);
    hf_rope(m, l, b->k, a->Hkv);
    AttnIn in = {.q = b->q, .k = b->k, .v = b->v, .ldq = hd, .ldkv = kv, .sink_logit = W[W_SINKS]};
    hf_attend(m, l, &in, iv);
    hf_linear(m, b->x, b->o, W[W_O], W[W_OB], hd, a->d, 0, 1, FQ_OUT_ATTN);
    hf_norm(m, b->h, b->x, W[W_LN2], NULL, R, a->d, 1);
    return hf_moe(m, l, W, b->h, b->x, 1, err, errlen);
}

/* Layer l's recipe on the weights hf_layer bound. */
static int layer_recipe(HfModel *m, int l, const float *W[W_N_ROLES], const Intervention *iv,
                        char *err, size_t errlen) {
    switch (m->a.family) {
    case HF_GPT2: gpt2_layer(m, l, W, iv); break;
    case HF_NEOX: neox_layer(m, l, W, iv); break;
    case HF_OLMO2: olmo2_layer(m, l, W, iv); break;
    case HF_GEMMA2:
    case HF_GEMMA3:
    case HF_AFMOE:
        if (gemma_layer(m, l, W, iv, err, errlen) < 0) return -1;
        break;
    case HF_GPTOSS:
        if (gptoss_layer(m, l, W, iv, err, errlen) < 0) return -1;
        break;
    default:
        if (llama_layer(m, l, W, iv, err, errlen) < 0) return -1;
        break;
    }
    return 0;
}

int hf_layer(HfModel *m, int l, const Intervention *iv, char *err, size_t errlen) {
    const float *W[W_N_ROLES];
    if (hf_weights_layer(&m->w, l, W, err, errlen) < 0) return -1;
    const int H = m->H_all = m->a.H, Hkv = m->a.Hkv;
    m->a.H = hf_layer_heads(&m->a, l); /* the recipe runs at the layer's heads */
    m->a.Hkv = hf_layer_kv(&m->a, l);
    const int r = layer_recipe(m, l, W, iv, err, errlen);
    m->a.H = H, m->a.Hkv = Hkv;
    if (r < 0) return -1;
    iv_residual(iv, l, m->b.x, m->b.B, m->b.T, 0, m->a.d);
    return 0;
}
