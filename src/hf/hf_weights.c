/* hf_weights.c: tensor names and shapes per architecture, checked once;
 * per-layer binding (aligned F32 in place, else converted to scratch). */
#include "hf_weights.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

typedef struct {
    int role; /* HfRole or HfGlobalRole */
    const char *suffix;
    int ndim;
    long long s0, s1;
    int opt;         /* may be absent (a bias the config does not announce) */
    long long s2;    /* the third dim of a 3-D tensor (ndim 3) */
    const char *alt; /* the suffix read where suffix is absent, or NULL */
} Spec;

/* Expected tensors of one layer, with shapes; suffixes follow
 * "<layer prefix>.<l>.". Each family's list returns its count. */
#define ADD(r, suf, nd, x, y)                                                                      \
    s[n++] = (Spec) { r, suf, nd, x, y, 0, 0, NULL }
#define BIAS(on, r, suf, x)                                                                        \
    s[n++] = (Spec) { r, suf, 1, x, 0, !(on), 0, NULL }
#define ADD3(r, suf, x, y, z)                                                                      \
    s[n++] = (Spec) { r, suf, 3, x, y, 0, z, NULL }

static int gpt2_specs(const HfArch *a, Spec *s) {
    const long long d = a->d, ff = a->ff;
    int n = 0;
    ADD(W_LN1, "ln_1.weight", 1, d, 0);
    ADD(W_LN1_B, "ln_1.bias", 1, d, 0);
    ADD(W_LN2, "ln_2.weight", 1, d, 0);
    ADD(W_LN2_B, "ln_2.bias", 1, d, 0);
    ADD(W_QKV, "attn.c_attn.weight", 2, d, 3 * d);
    ADD(W_QKV_B, "attn.c_attn.bias", 1, 3 * d, 0);
    ADD(W_O, "attn.c_proj.weight", 2, d, d);
    ADD(W_OB, "attn.c_proj.bias", 1, d, 0);
    ADD(W_UP, "mlp.c_fc.weight", 2, d, ff);
    ADD(W_UP_B, "mlp.c_fc.bias", 1, ff, 0);
    ADD(W_DOWN, "mlp.c_proj.weight", 2, ff, d);
    ADD(W_DOWN_B, "mlp.c_proj.bias", 1, d, 0);
    return n;
}

static int neox_specs(const HfArch *a, Spec *s) {
    const long long d = a->d, ff = a->ff;
    int n = 0;
    ADD(W_LN1, "input_layernorm.weight", 1, d, 0);
    ADD(W_LN1_B, "input_layernorm.bias", 1, d, 0);
    ADD(W_LN2, "post_attention_layernorm.weight", 1, d, 0);
    ADD(W_LN2_B, "post_attention_layernorm.bias", 1, d, 0);
    ADD(W_QKV, "attention.query_key_value.weight", 2, 3 * d, d);
    ADD(W_O, "attention.dense.weight", 2, d, d);
    if (a->qkv_bias) ADD(W_QKV_B, "attention.query_key_value.bias", 1, 3 * d, 0);
    if (a->o_bias) ADD(W_OB, "attention.dense.bias", 1, d, 0);
    ADD(W_UP, "mlp.dense_h_to_4h.weight", 2, ff, d);
    ADD(W_UP_B, "mlp.dense_h_to_4h.bias", 1, ff, 0);
    ADD(W_DOWN, "mlp.dense_4h_to_h.weight", 2, d, ff);
    ADD(W_DOWN_B, "mlp.dense_4h_to_h.bias", 1, d, 0);
    return n;
}

/* The attention projections of the Llama layout from s[n] on, q_proj of
 * qr rows, each bias required when the config announces it (used when
 * present otherwise): returns the new count. */
static int llama_attn_specs(const HfArch *a, long long qr, Spec *s, int n) {
    const long long d = a->d, kv = (long long)a->Hkv * a->dh, vr = (long long)a->Hkv * hf_vdim(a),
                    hd = (long long)a->H * hf_vdim(a);
    ADD(W_Q, "self_attn.q_proj.weight", 2, qr, d);
    ADD(W_K, "self_attn.k_proj.weight", 2, kv, d);
    ADD(W_V, "self_attn.v_proj.weight", 2, vr, d);
    ADD(W_O, "self_attn.o_proj.weight", 2, d, hd);
    BIAS(a->qkv_bias, W_QB, "self_attn.q_proj.bias", qr);
    BIAS(a->qkv_bias, W_KB, "self_attn.k_proj.bias", kv);
    BIAS(a->qkv_bias, W_VB, "self_attn.v_proj.bias", vr);
    BIAS(a->o_bias, W_OB, "self_attn.o_proj.bias", d);
    return n;
}

/* llama_attn_specs with q_proj of H * dh rows, then q_norm / k_norm of
 * one head's dh each (Gemma 3, AFMoE, Laguna, Step-3.5): the new count. */
static int headnorm_attn_specs(const HfArch *a, Spec *s, int n) {
    n = llama_attn_specs(a, (long long)a->H * a->dh, s, n);
    ADD(W_QN, "self_attn.q_norm.weight", 1, a->dh, 0);
    ADD(W_KN, "self_attn.k_norm.weight", 1, a->dh, 0);
    return n;
}

/* The SwiGLU MLP of the Llama layout from s[n] on: returns the new count. */
static int llama_mlp_specs(const HfArch *a, Spec *s, int n) {
    const long long d = a->d, ff = a->ff;
    ADD(W_GATE, "mlp.gate_proj.weight", 2, ff, d);
    ADD(W_UP, "mlp.up_proj.weight", 2, ff, d);
    ADD(W_DOWN, "mlp.down_proj.weight", 2, d, ff);
    BIAS(a->mlp_bias, W_GATE_B, "mlp.gate_proj.bias", ff);
    BIAS(a->mlp_bias, W_UP_B, "mlp.up_proj.bias", ff);
    BIAS(a->mlp_bias, W_DOWN_B, "mlp.down_proj.bias", d);
    return n;
}

/* Llama, Qwen2, Qwen3 (gated variants: q_proj carries the gate rows),
 * Mistral. */
static int llama_specs(const HfArch *a, Spec *s) {
    int n = 0;
    ADD(W_LN1, "input_layernorm.weight", 1, a->d, 0);
    ADD(W_LN2, "post_attention_layernorm.weight", 1, a->d, 0);
    n = llama_attn_specs(a, hf_q_rows(a), s, n);
    if (a->qk_norm) {
        s[n++] = (Spec){W_QN, "self_attn.q_norm.weight", 1, a->dh, 0, a->qk_norm == 2, 0, NULL};
        s[n++] = (Spec){W_KN, "self_attn.k_norm.weight", 1, a->dh, 0, a->qk_norm == 2, 0, NULL};
    }
    return llama_mlp_specs(a, s, n);
}

/* OLMo 2: Llama's projections and MLP, no pre-norms; its norms after
 * attention and after the MLP take the roles of the blocks' norms (W_LN1,
 * W_LN2), and q_norm / k_norm span the whole projection. */
static int olmo2_specs(const HfArch *a, Spec *s) {
    int n = 0;
    ADD(W_LN1, "post_attention_layernorm.weight", 1, a->d, 0);
    ADD(W_LN2, "post_feedforward_layernorm.weight", 1, a->d, 0);
    n = llama_attn_specs(a, (long long)a->H * a->dh, s, n);
    ADD(W_QN, "self_attn.q_norm.weight", 1, (long long)a->H * a->dh, 0);
    ADD(W_KN, "self_attn.k_norm.weight", 1, (long long)a->Hkv * a->dh, 0);
    return llama_mlp_specs(a, s, n);
}

/* Phi-3: Llama's layer with fused projections, bias-free: qkv_proj's rows
 * are q (H*dh), k (Hkv*dh), v (Hkv*dh), bound as W_QKV; gate_up_proj's
 * the gate (ff), then up (ff), bound as W_GATE. hf_weights_layer hands
 * out each part as the separate role (fused_views). */
static int phi3_specs(const HfArch *a, Spec *s) {
    const long long d = a->d, kv = (long long)a->Hkv * a->dh, hd = (long long)a->H * a->dh;
    int n = 0;
    ADD(W_LN1, "input_layernorm.weight", 1, d, 0);
    ADD(W_LN2, "post_attention_layernorm.weight", 1, d, 0);
    ADD(W_QKV, "self_attn.qkv_proj.weight", 2, hd + 2 * kv, d);
    ADD(W_O, "self_attn.o_proj.weight", 2, d, hd);
    ADD(W_GATE, "mlp.gate_up_proj.weight", 2, 2LL * a->ff, d);
    ADD(W_DOWN, "mlp.down_proj.weight", 2, d, a->ff);
    return n;
}
/* Gemma 2 and 3: Llama's projections (bias-free) and GLU MLP, four norms
 * a layer (input_layernorm, post_attention_layernorm of the attention's
 * output, pre_feedforward_layernorm, post_feedforward_layernorm of the
 * MLP's), Gemma 3's q_norm / k_norm per head. */
static int gemma_specs(const HfArch *a, Spec *s) {
    const long long d = a->d;
    int n = 0;
    ADD(W_LN1, "input_layernorm.weight", 1, d, 0);
    ADD(W_LN1_POST, "post_attention_layernorm.weight", 1, d, 0);
    ADD(W_LN2, "pre_feedforward_layernorm.weight", 1, d, 0);
    ADD(W_LN2_POST, "post_feedforward_layernorm.weight", 1, d, 0);
    n = a->qk_norm ? headnorm_attn_specs(a, s, n)
                   : llama_attn_specs(a, (long long)a->H * a->dh, s, n);
    return llama_mlp_specs(a, s, n);
}
/* gpt-oss: Llama's norms and attention (with biases), the per-head sink
 * logits, the router and the stacked experts (modeling_gpt_oss.py). */
static int gptoss_specs(const HfArch *a, Spec *s) {
    const long long d = a->d, E = a->n_experts, ff = a->ff;
    int n = 0;
    ADD(W_LN1, "input_layernorm.weight", 1, d, 0);
    ADD(W_LN2, "post_attention_layernorm.weight", 1, d, 0);
    n = llama_attn_specs(a, (long long)a->H * a->dh, s, n);
    ADD(W_SINKS, "self_attn.sinks", 1, a->H, 0);
    ADD(W_ROUTER, "mlp.router.weight", 2, E, d);
    ADD(W_ROUTER_B, "mlp.router.bias", 1, E, 0);
    ADD3(W_EXP_GU, "mlp.experts.gate_up_proj", E, d, 2 * ff);
    ADD(W_EXP_GU_B, "mlp.experts.gate_up_proj_bias", 2, E, 2 * ff);
    ADD3(W_EXP_DOWN, "mlp.experts.down_proj", E, ff, d);
    ADD(W_EXP_DOWN_B, "mlp.experts.down_proj_bias", 2, E, d);
    return n;
}
/* The shared experts of an MoE layer (one GLU of shared_ff units, bound
 * as the MLP's roles) from s[n] on, under mlp.shared_experts. or, with
 * alt, mlp.shared_expert. where that is absent (Laguna's published
 * checkpoints): returns the new count. */
static int shared_specs(const HfArch *a, int alt, Spec *s, int n) {
    const long long d = a->d, sh = a->shared_ff;
    if (!sh) return n;
    ADD(W_GATE, "mlp.shared_experts.gate_proj.weight", 2, sh, d);
    s[n - 1].alt = alt ? "mlp.shared_expert.gate_proj.weight" : NULL;
    ADD(W_UP, "mlp.shared_experts.up_proj.weight", 2, sh, d);
    s[n - 1].alt = alt ? "mlp.shared_expert.up_proj.weight" : NULL;
    ADD(W_DOWN, "mlp.shared_experts.down_proj.weight", 2, d, sh);
    s[n - 1].alt = alt ? "mlp.shared_expert.down_proj.weight" : NULL;
    return n;
}

/* AFMoE: Gemma's four norms a layer (pre_mlp_layernorm and
 * post_mlp_layernorm around the MLP), Llama's projections (bias-free),
 * per-head q_norm / k_norm, the gate's own projection; the dense SwiGLU
 * MLP on the first num_dense_layers layers, on the others the router,
 * expert_bias and the shared experts (one GLU of shared_ff units,
 * bound as the MLP's roles), the routed experts' own tensors in
 * expert_specs (modeling_afmoe.py). */
static int afmoe_specs(const HfArch *a, int l, Spec *s) {
    const long long d = a->d;
    int n = 0;
    ADD(W_LN1, "input_layernorm.weight", 1, d, 0);
    ADD(W_LN1_POST, "post_attention_layernorm.weight", 1, d, 0);
    ADD(W_LN2, "pre_mlp_layernorm.weight", 1, d, 0);
    ADD(W_LN2_POST, "post_mlp_layernorm.weight", 1, d, 0);
    n = headnorm_attn_specs(a, s, n);
    ADD(W_GPROJ, "self_attn.gate_proj.weight", 2, (long long)a->H * hf_gate_per_head(a), d);
    if (!a->n_experts || l < a->moe_from) return llama_mlp_specs(a, s, n);
    ADD(W_ROUTER, "mlp.router.gate.weight", 2, a->n_experts, d);
    ADD(W_EXP_BIAS, "mlp.expert_bias", 1, a->n_experts, 0);
    return shared_specs(a, 0, s, n);
}

/* Laguna: Llama's norms and projections (biases as attention_bias says),
 * per-head q_norm / k_norm, g_proj [H, d]; the dense SwiGLU MLP, or on
 * an MoE layer the router mlp.gate, its e_score_correction_bias (under
 * mlp.experts. where the checkpoint keeps it there) and the shared
 * expert; the routed experts stacked (LagunaExperts: gate_up_proj
 * [E, 2 moe_ff, d], the gate's rows then the up's, and down_proj
 * [E, d, moe_ff], [out, in]) or their own tensors in expert_specs
 * (modeling_laguna.py). */
static int laguna_specs(const HfArch *a, int l, int stacked, Spec *s) {
    const long long d = a->d;
    int n = 0;
    ADD(W_LN1, "input_layernorm.weight", 1, d, 0);
    ADD(W_LN2, "post_attention_layernorm.weight", 1, d, 0);
    n = headnorm_attn_specs(a, s, n);
    ADD(W_GPROJ, "self_attn.g_proj.weight", 2, (long long)a->H * hf_gate_per_head(a), d);
    if (!a->n_experts || l < a->moe_from) return llama_mlp_specs(a, s, n);
    ADD(W_ROUTER, "mlp.gate.weight", 2, a->n_experts, d);
    ADD(W_EXP_BIAS, "mlp.gate.e_score_correction_bias", 1, a->n_experts, 0);
    s[n - 1].alt = "mlp.experts.e_score_correction_bias";
    if (stacked) {
        ADD3(W_EXP_GU, "mlp.experts.gate_up_proj", a->n_experts, 2LL * a->moe_ff, d);
        ADD3(W_EXP_DOWN, "mlp.experts.down_proj", a->n_experts, d, a->moe_ff);
    }
    return shared_specs(a, 1, s, n);
}

/* Step-3.5 (modular_step3p7.py): Llama's norms and projections, bias-free
 * ((1 + w) norms), per-head q_norm / k_norm, g_proj [H, d] under
 * use_head_wise_attn_gate; the dense SwiGLU MLP under mlp., or on an MoE
 * layer the router moe.gate, moe.router_bias under use_moe_router_bias,
 * the routed experts stacked (Step3p7MoEExperts: moe.experts.gate_up_proj
 * [E, 2 moe_ff, d], gate rows then up rows, and moe.experts.down_proj
 * [E, d, moe_ff]) or as the legacy 3-D moe.gate_proj, moe.up_proj
 * [E, moe_ff, d] and moe.down_proj [E, d, moe_ff], and the shared expert
 * under share_expert. */
static int step3p5_specs(const HfArch *a, int l, int stacked, Spec *s) {
    const long long d = a->d, E = a->n_experts, ff = a->moe_ff, sh = a->shared_ff;
    int n = 0;
    ADD(W_LN1, "input_layernorm.weight", 1, d, 0);
    ADD(W_LN2, "post_attention_layernorm.weight", 1, d, 0);
    n = headnorm_attn_specs(a, s, n);
    if (a->gate != HF_GATE_NONE) ADD(W_GPROJ, "self_attn.g_proj.weight", 2, (long long)a->H, d);
    if (!a->n_experts || l < a->moe_from) return llama_mlp_specs(a, s, n);
    ADD(W_ROUTER, "moe.gate.weight", 2, E, d);
    if (a->router.select_bias) ADD(W_EXP_BIAS, "moe.router_bias", 1, E, 0);
    if (stacked) {
        ADD3(W_EXP_GU, "moe.experts.gate_up_proj", E, 2 * ff, d);
        ADD3(W_EXP_DOWN, "moe.experts.down_proj", E, d, ff);
    } else {
        ADD3(W_EXP_GATE, "moe.gate_proj.weight", E, ff, d);
        ADD3(W_EXP_UP, "moe.up_proj.weight", E, ff, d);
        ADD3(W_EXP_DOWN, "moe.down_proj.weight", E, d, ff);
    }
    ADD(W_GATE, "share_expert.gate_proj.weight", 2, sh, d);
    ADD(W_UP, "share_expert.up_proj.weight", 2, sh, d);
    ADD(W_DOWN, "share_expert.down_proj.weight", 2, d, sh);
    return n;
}

/* MiMo-V2-Flash (vLLM's mimo_v2_flash.py): Llama's norms and bias-free
 * projections at the layer's heads, self_attn.attention_sink_bias [H]
 * on the layers with sinks; the dense SwiGLU MLP, or on an MoE layer the
 * router mlp.gate and its e_score_correction_bias, the routed experts'
 * own tensors in expert_specs (no shared expert). */
static int mimo_specs(const HfArch *a, int l, Spec *s) {
    int n = 0;
    ADD(W_LN1, "input_layernorm.weight", 1, a->d, 0);
    ADD(W_LN2, "post_attention_layernorm.weight", 1, a->d, 0);
    n = llama_attn_specs(a, (long long)a->H * a->dh, s, n);
    if (hf_layer_sinks(a, l)) ADD(W_SINKS, "self_attn.attention_sink_bias", 1, a->H, 0);
    if (!a->n_experts || l < a->moe_from) return llama_mlp_specs(a, s, n);
    ADD(W_ROUTER, "mlp.gate.weight", 2, a->n_experts, a->d);
    ADD(W_EXP_BIAS, "mlp.gate.e_score_correction_bias", 1, a->n_experts, 0);
    return n;
}

/* The tensors each routed expert of an MoE layer has as its own (AFMoE's,
 * Laguna's and MiMo's mlp.experts.<e>.{gate,up,down}_proj.weight, in
 * per_expert's order),
 * their suffixes after "mlp.experts.<e>.": their count, 0 where the experts are 3-D
 * tensors (gpt-oss) or the layer is dense. */
static int expert_specs(const HfArch *a, int l, int stacked, Spec *s) {
    const long long d = a->d, ff = a->moe_ff;
    int n = 0;
    if ((a->family != HF_AFMOE && a->family != HF_LAGUNA && a->family != HF_MIMO) ||
        !a->n_experts || l < a->moe_from || stacked)
        return 0;
    ADD(W_EXP_GATE, "gate_proj.weight", 2, ff, d);
    ADD(W_EXP_UP, "up_proj.weight", 2, ff, d);
    ADD(W_EXP_DOWN, "down_proj.weight", 2, d, ff);
    return n;
}
#undef ADD
#undef ADD3
#undef BIAS

/* stacked: the checkpoint holds layer l's routed experts as 3-D [out, in]
 * tensors (stacked_experts). */
static int layer_specs(const HfArch *a, int l, int stacked, Spec *s) {
    if (a->family == HF_GPTOSS) return gptoss_specs(a, s);
    if (a->family == HF_AFMOE) return afmoe_specs(a, l, s);
    if (a->family == HF_LAGUNA) return laguna_specs(a, l, stacked, s);
    if (a->family == HF_STEP3P5) return step3p5_specs(a, l, stacked, s);
    if (a->family == HF_MIMO) return mimo_specs(a, l, s);
    if (a->family == HF_GPT2) return gpt2_specs(a, s);
    if (a->family == HF_NEOX) return neox_specs(a, s);
    if (a->family == HF_OLMO2) return olmo2_specs(a, s);
    if (a->family == HF_PHI3) return phi3_specs(a, s);
    if (a->family == HF_GEMMA2 || a->family == HF_GEMMA3) return gemma_specs(a, s);
    return llama_specs(a, s);
}

/* The global tensors' names under the model's prefix pre, the LM head's
 * under hpre (model_prefix). */
static int global_specs(const HfArch *a, const char *pre, const char *hpre, Spec *s,
                        char names[][160]) {
    const long long d = a->d, V = a->V;
    int n = 0;
#define ADD(r, p, fmt, nd, x, y)                                                                   \
    do {                                                                                           \
        snprintf(names[n], 160, fmt, p);                                                           \
        s[n] = (Spec){r, names[n], nd, x, y, 0, 0, NULL};                                          \
        n++;                                                                                       \
    } while (0)
    if (a->family == HF_GPT2) {
        ADD(G_EMB, pre, "%swte.weight", 2, V, d);
        ADD(G_POS, pre, "%swpe.weight", 2, a->max_pos, d);
        ADD(G_NORM, pre, "%sln_f.weight", 1, d, 0);
        ADD(G_NORM_B, pre, "%sln_f.bias", 1, d, 0);
        if (!a->tied) ADD(G_HEAD, hpre, "%slm_head.weight", 2, V, d);
    } else if (a->family == HF_NEOX) {
        ADD(G_EMB, pre, "%sembed_in.weight", 2, V, d);
        ADD(G_NORM, pre, "%sfinal_layer_norm.weight", 1, d, 0);
        ADD(G_NORM_B, pre, "%sfinal_layer_norm.bias", 1, d, 0);
        if (!a->tied) ADD(G_HEAD, hpre, "%sembed_out.weight", 2, V, d);
    } else {
        ADD(G_EMB, pre, "%sembed_tokens.weight", 2, V, d);
        ADD(G_NORM, pre, "%snorm.weight", 1, d, 0);
        if (!a->tied) ADD(G_HEAD, hpre, "%slm_head.weight", 2, V, d);
    }
    return n;
#undef ADD
}

/* "<prefix>h" (GPT-2) or "<prefix>layers": layer l's tensors follow ".l.". */
static const char *layer_prefix(const HfArch *a, const char *pre, char *buf, size_t n) {
    if (a->family == HF_GPT2) snprintf(buf, n, "%sh", pre);
    else snprintf(buf, n, "%slayers", pre);
    return buf;
}

static int check_one(const SafeTensors *st, const char *name, const Spec *s, const StTensor **out,
                     char *err, size_t errlen) {
    const StTensor *t = st_find(st, name);
    if (!t && s->opt) return 0;
    if (!t) return seterr(err, errlen, "%s: missing from the checkpoint", name);
    int ok = t->ndim == s->ndim && t->shape[0] == s->s0 && (s->ndim < 2 || t->shape[1] == s->s1) &&
             (s->ndim < 3 || t->shape[2] == s->s2);
    if (!ok) {
        char got[96] = "[", want[64];
        for (int i = 0; i < t->ndim && strlen(got) < 64; i++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", i ? "," : "",
                     (long long)t->shape[i]);
        strcat(got, "]");
        if (s->ndim == 1) snprintf(want, sizeof want, "[%lld]", s->s0);
        else if (s->ndim == 2) snprintf(want, sizeof want, "[%lld,%lld]", s->s0, s->s1);
        else snprintf(want, sizeof want, "[%lld,%lld,%lld]", s->s0, s->s1, s->s2);
        return seterr(err, errlen, "%s: shape %s, but config.json implies %s", name, got, want);
    }
    if (t->dtype != ST_F32 && t->dtype != ST_BF16 && t->dtype != ST_F16)
        return seterr(err, errlen, "%s: dtype %s is not supported (F32, F16 or BF16)", name,
                      st_dtype_name(t->dtype));
    *out = t;
    return 0;
}

/* A 3-D expert tensor (s: [E, in, out]) stored in MXFP4, as the published
 * gpt-oss checkpoints store them: NAME_blocks U8 [E, out, in/32, 16] (32
 * FP4 E2M1 values a block, two a byte, the low nibble first) and
 * NAME_scales U8 [E, out, in/32] (one E8M0 exponent a block, biased by
 * 127). 0 with both bound, 1 when NAME_blocks is absent, -1 (one line)
 * when either is mis-shaped. */
static int bind_mxfp4(const SafeTensors *st, const char *name, const Spec *s, const StTensor **blk,
                      const StTensor **sc, char *err, size_t errlen) {
    char bn[300], sn[300];
    snprintf(bn, sizeof bn, "%s_blocks", name), snprintf(sn, sizeof sn, "%s_scales", name);
    const StTensor *b = st_find(st, bn), *c = st_find(st, sn);
    if (!b) return 1;
    const long long G = s->s1 / 32;
    int ok = s->s1 % 32 == 0 && b->dtype == ST_U8 && b->ndim == 4 && b->shape[0] == s->s0 &&
             b->shape[1] == s->s2 && b->shape[2] == G && b->shape[3] == 16 && c &&
             c->dtype == ST_U8 && c->ndim == 3 && c->shape[0] == s->s0 && c->shape[1] == s->s2 &&
             c->shape[2] == G;
    if (!ok)
        return seterr(err, errlen,
                      "%s: MXFP4 experts need U8 %s [%lld,%lld,%lld,16] and %s [%lld,%lld,%lld] "
                      "(config.json's sizes; the input size a multiple of 32)",
                      bn, bn, s->s0, s->s2, G, sn, s->s0, s->s2, G);
    *blk = b, *sc = c;
    return 0;
}

/* dst [in, out] (float32): expert e of MXFP4 blocks [E, out, in/32, 16]
 * and scales [E, out, in/32] (bind_mxfp4): value i of row (e, o) is the
 * FP4 E2M1 code of nibble i (low nibble of byte i/2 for even i) times
 * 2^(scale - 127) of its block of 32, as transformers'
 * convert_moe_packed_tensors dequantizes them (then transposed to
 * [in, out]). */
static void mxfp4_expert(float *dst, const StTensor *blk, const StTensor *sc, size_t e) {
    static const float FP4[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                                  -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};
    const size_t out = (size_t)blk->shape[1], in = (size_t)blk->shape[2] * 32;
    for (size_t o = 0; o < out; o++) {
        const uint8_t *b = blk->data + (e * out + o) * in / 2;
        const uint8_t *x = sc->data + (e * out + o) * (in / 32);
        for (size_t i = 0; i < in; i++) {
            const int code = i % 2 ? b[i / 2] >> 4 : b[i / 2] & 15;
            dst[i * out + o] = ldexpf(FP4[code], (int)x[i / 32] - 127);
        }
    }
}

/* The expert roles, handed out one expert at a time. */
static int is_expert(int role) {
    return role == W_EXP_GU || role == W_EXP_DOWN || role == W_EXP_GATE || role == W_EXP_UP;
}

/* Floats of one expert's tensor of role r: gpt-oss's gate_up slab
 * [d, 2 moe_ff], else d * moe_ff. */
static size_t expert_floats(const HfArch *a, int r) {
    return (r == W_EXP_GU ? 2 : 1) * (size_t)a->d * a->moe_ff;
}

/* The prefix of the model's tensors: "transformer." or "" for GPT-2; a
 * multimodal checkpoint's text tower "language_model.model." as
 * transformers before 4.52 saves it (its LM head, when untied, under
 * "language_model."), else "model.language_model." (the LM head at the
 * top); fixed prefixes for the others. The LM head's prefix into *hpre. */
static const char *model_prefix(const HfArch *a, const SafeTensors *st, const char **hpre) {
    *hpre = "";
    if (a->family == HF_GPT2) return st_find(st, "transformer.wte.weight") ? "transformer." : "";
    if (a->text_tower && st_find(st, "language_model.model.embed_tokens.weight")) {
        *hpre = "language_model.";
        return "language_model.model.";
    }
    if (a->text_tower) return "model.language_model.";
    return a->family == HF_NEOX ? "gpt_neox." : "model.";
}

static void note_dtype(HfWeights *w, const StTensor *t) {
    const char *d = st_dtype_name(t->dtype);
    if (!w->dtype) w->dtype = d;
    else if (strcmp(w->dtype, d)) w->dtype = "mixed";
}

/* Norm roles: bound as 1 + w where the architecture norms by (1 + w). */
static int is_norm(int role) {
    return role == W_LN1 || role == W_LN2 || role == W_LN1_POST || role == W_LN2_POST ||
           role == W_QN || role == W_KN;
}

/* Floats tensor t of role r takes in the scratch: its size when converted
 * (not F32 in the file, or a (1 + w) norm), else none. */
static size_t convert_need(const HfArch *a, int r, const StTensor *t) {
    return t && (!st_f32_view(t) || (a->norm_plus1 && is_norm(r))) ? t->numel : 0;
}

static int bind_globals(HfWeights *w, const char *pre, const char *hpre, char *err, size_t errlen) {
    Spec s[G_N_ROLES];
    char names[G_N_ROLES][160];
    int n = global_specs(w->a, pre, hpre, s, names);
    for (int i = 0; i < n; i++) {
        if (check_one(w->st, names[i], &s[i], &w->g[s[i].role], err, errlen) < 0) return -1;
        note_dtype(w, w->g[s[i].role]);
    }
    return 0;
}

/* Layer l's per-expert tensors (expert_specs) into per_expert, each
 * checked; used[r] set for their roles. */
static int bind_experts(HfWeights *w, int l, const char *lp, int *used, char *err, size_t errlen) {
    Spec s[3];
    const int n = expert_specs(w->a, l, w->layers[l].stacked, s);
    const size_t E = (size_t)w->a->n_experts;
    HfLayerSpec *ls = &w->layers[l];
    if (!n) return 0;
    if (!(ls->per_expert = calloc(E * (size_t)n, sizeof *ls->per_expert)))
        return seterr(err, errlen, "out of memory");
    char name[256];
    for (size_t e = 0; e < E; e++)
        for (int i = 0; i < n; i++) {
            snprintf(name, sizeof name, "%s.%d.mlp.experts.%zu.%s", lp, l, e, s[i].suffix);
            const StTensor **slot = &ls->per_expert[e * (size_t)n + i];
            if (check_one(w->st, name, &s[i], slot, err, errlen) < 0) return -1;
            note_dtype(w, *slot);
            used[s[i].role] = 1;
        }
    return 0;
}

/* Layer l's tensors (layer_specs) into w->layers[l], each checked; the
 * floats their conversion takes into *need, used[r] set for the expert
 * roles bound. */
static int bind_layer(HfWeights *w, int l, const char *lp, size_t *need, int *used, char *err,
                      size_t errlen) {
    Spec s[W_N_ROLES];
    char name[256];
    const HfFamily f = w->a->family;
    snprintf(name, sizeof name, "%s.%d.%s.experts.gate_up_proj", lp, l,
             f == HF_STEP3P5 ? "moe" : "mlp");
    HfLayerSpec *ls = &w->layers[l];
    ls->stacked = (f == HF_LAGUNA || f == HF_STEP3P5) && st_find(w->st, name) != NULL;
    HfArch la = *w->a; /* the layer's shapes: its own query heads (hf_layer_heads) */
    la.H = hf_layer_heads(w->a, l), la.Hkv = hf_layer_kv(w->a, l);
    const int n = layer_specs(&la, l, ls->stacked, s);
    *need = 0;
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "%s.%d.%s", lp, l, s[i].suffix);
        if (s[i].alt && !st_find(w->st, name)) {
            char alt[256];
            snprintf(alt, sizeof alt, "%s.%d.%s", lp, l, s[i].alt);
            if (st_find(w->st, alt)) memcpy(name, alt, sizeof name);
        }
        const StTensor **slot = &ls->t[s[i].role];
        const StTensor **sc = &ls->scales[s[i].role];
        int q = s[i].ndim == 3 && !ls->stacked
                    ? bind_mxfp4(w->st, name, &s[i], slot, sc, err, errlen)
                    : 1;
        if (q < 0 || (q && check_one(w->st, name, &s[i], slot, err, errlen) < 0)) return -1;
        if (*slot) note_dtype(w, *slot);
        if (!is_expert(s[i].role)) *need += convert_need(w->a, s[i].role, *slot);
        else if (*slot) used[s[i].role] = 1;
    }
    return bind_experts(w, l, lp, used, err, errlen);
}

int hf_weights_bind(HfWeights *w, SafeTensors *st, const HfArch *a, char *err, size_t errlen) {
    memset(w, 0, sizeof *w);
    w->st = st;
    w->a = a;
    w->conv1d = a->family == HF_GPT2;
    const char *hpre, *pre = model_prefix(a, st, &hpre);
    if (bind_globals(w, pre, hpre, err, errlen) < 0) return -1;
    if (!(w->layers = calloc((size_t)a->L, sizeof *w->layers)))
        return seterr(err, errlen, "out of memory");
    char lp[64];
    int used[W_N_ROLES] = {0};
    layer_prefix(a, pre, lp, sizeof lp);
    for (int l = 0; l < a->L; l++) {
        size_t need;
        if (bind_layer(w, l, lp, &need, used, err, errlen) < 0) return -1;
        if (need > w->scratch_n) w->scratch_n = need;
    }
    /* one expert's tensors after the largest layer's converted weights */
    static const HfRole ROLES[] = {W_EXP_GU, W_EXP_DOWN, W_EXP_GATE, W_EXP_UP};
    for (size_t i = 0; i < sizeof ROLES / sizeof *ROLES; i++)
        if (used[ROLES[i]]) {
            w->expert_at[ROLES[i]] = w->scratch_n;
            w->scratch_n += expert_floats(a, ROLES[i]);
        }
    if (w->scratch_n && !(w->scratch = falloc(w->scratch_n)))
        return seterr(err, errlen, "out of memory for %zu converted weights", w->scratch_n);
    return 0;
}

void hf_weights_free(HfWeights *w) {
    for (int l = 0; w->layers && l < w->a->L; l++) free(w->layers[l].per_expert);
    free(w->layers);
    free(w->scratch);
    memset(w, 0, sizeof *w);
}

/* Phi-3's fused tensors as the separate roles the Llama recipe reads: the
 * row blocks of qkv_proj as W_Q, W_K, W_V (W_QKV then unset), of
 * gate_up_proj as W_GATE and W_UP; each a view, rows being contiguous. */
static void fused_views(const HfArch *a, int l, const float *out[W_N_ROLES]) {
    const size_t d = (size_t)a->d, kv = (size_t)a->Hkv * a->dh,
                 hd = (size_t)hf_layer_heads(a, l) * a->dh;
    out[W_Q] = out[W_QKV];
    out[W_K] = out[W_Q] + hd * d;
    out[W_V] = out[W_K] + kv * d;
    out[W_QKV] = NULL;
    out[W_UP] = out[W_GATE] + (size_t)a->ff * d;
}

int hf_weights_layer(HfWeights *w, int l, const float *out[W_N_ROLES], char *err, size_t errlen) {
    size_t used = 0;
    for (int r = 0; r < W_N_ROLES; r++) {
        const StTensor *t = w->layers[l].t[r];
        const int plus1 = w->a->norm_plus1 && is_norm(r);
        out[r] = t && !is_expert(r) ? st_f32_view(t) : NULL;
        if (!t || is_expert(r) || (out[r] && !plus1)) continue;
        float *dst = w->scratch + used;
        if (st_to_f32(t, 0, t->numel, dst, err, errlen) < 0) return -1;
        for (size_t i = 0; plus1 && i < t->numel; i++) dst[i] += 1.0f;
        out[r] = dst;
        used += t->numel;
    }
    if (w->a->family == HF_PHI3) fused_views(w->a, l, out);
    return 0;
}

const float *hf_weights_expert(const HfWeights *w, int l, HfRole r, int e, char *err,
                               size_t errlen) {
    const HfLayerSpec *ls = &w->layers[l];
    const StTensor *t = ls->t[r], *sc = ls->scales[r];
    const size_t slab = expert_floats(w->a, r);
    size_t at = (size_t)e * slab; /* where expert e starts in its tensor */
    float *dst = w->scratch + w->expert_at[r];
    if (ls->per_expert) /* a tensor of its own: gate, up, down */
        t = ls->per_expert[(size_t)e * 3 + (r == W_EXP_GATE ? 0 : r == W_EXP_UP ? 1 : 2)], at = 0;
    if (sc) {
        mxfp4_expert(dst, t, sc, (size_t)e);
        return dst;
    }
    const float *v = st_f32_view(t);
    if (v) return v + at;
    return st_to_f32(t, at, slab, dst, err, errlen) < 0 ? NULL : dst;
}

const float *hf_weights_vec(HfWeights *w, HfGlobalRole r, float *dst, char *err, size_t errlen) {
    const StTensor *t = w->g[r];
    if (!t) return NULL;
    const float *v = st_f32_view(t);
    const int plus1 = w->a->norm_plus1 && r == G_NORM;
    if (v && !plus1) return v;
    if (st_to_f32(t, 0, t->numel, dst, err, errlen) < 0) return NULL;
    for (size_t i = 0; plus1 && i < t->numel; i++) dst[i] += 1.0f;
    return dst;
}
