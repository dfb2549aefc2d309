/* hf_config_mimo.c: MiMoV2FlashForCausalLM's config.json keys (Xiaomi's
 * MiMo-V2-Flash), as vLLM's mimo_v2_flash.py (vllm-project/vllm commit
 * 91cf2f1) reads them, after the Llama layout's (cfg_llama_like). The
 * multi-token-prediction layers (model.mtp.*) are not read. */
#include <stdio.h>
#include <string.h>

#include "hf_config_priv.h"
#include "util.h"

/* Fails c with one line naming what to change (none once failed). */
static void refuse(Cfg *c, const char *what) {
    if (c->failed) return;
    c->failed = 1;
    seterr(c->err, c->errlen,
           "%s: MiMoV2FlashForCausalLM is read as vLLM's mimo_v2_flash.py runs it: change %s",
           c->path, what);
}

/* A list of L flags (0 or 1, or booleans) at key into out; absent, null
 * or an integer (as vLLM reads an integer moe_layer_freq: no MoE layer):
 * all 0. */
static void flags(Cfg *c, const char *key, int L, unsigned char *out, const char *what) {
    json_t *v = json_object_get(c->root, key);
    memset(out, 0, (size_t)L);
    if (!v || json_is_null(v) || json_is_integer(v)) return;
    if (!json_is_array(v) || json_array_size(v) != (size_t)L) return refuse(c, what);
    for (int l = 0; l < L; l++) {
        json_t *e = json_array_get(v, (size_t)l);
        const long long x = json_is_integer(e) ? json_integer_value(e) : json_is_true(e) ? 1 : -1;
        if (x != 0 && x != 1) return refuse(c, what);
        out[l] = (unsigned char)x;
    }
}

/* The sliding layers (hybrid_layer_pattern: 1 slides over
 * sliding_window_size keys, else sliding_window) with their own query
 * and KV heads, head dims and RoPE base (swa_*, each defaulting to the
 * full layers' as vLLM's getattr does); the full layers' value head dim
 * v_head_dim (default head_dim). */
static void mimo_attention(Cfg *c, HfArch *a) {
    const int H = a->H, Hkv = a->Hkv;
    a->dv = cfg_int(c, "v_head_dim", a->dh, 1, 1 << 20);
    flags(c, "hybrid_layer_pattern", a->L, a->layer_slides,
          "hybrid_layer_pattern (one 0 or 1 per layer)");
    int n = 0;
    for (int l = 0; l < a->L; l++) n += a->layer_slides[l];
    if (n) {
        const int sh = cfg_int(c, "swa_num_attention_heads", H, 1, 4096),
                  skv = cfg_int(c, "swa_num_key_value_heads", Hkv, 1, 4096);
        const int sdh = cfg_int(c, "swa_head_dim", a->dh, 1, 1 << 20),
                  sdv = cfg_int(c, "swa_v_head_dim", sdh, 1, 1 << 20);
        if (sdh != a->dh || sdv != a->dv)
            return refuse(c, "swa_head_dim and swa_v_head_dim (gatelab reads one head dim and "
                             "one value head dim: head_dim and v_head_dim)");
        json_t *sw = json_object_get(c->root, "sliding_window_size");
        a->sliding_window = cfg_int(
            c, sw && !json_is_null(sw) ? "sliding_window_size" : "sliding_window", -1, 1, 1 << 30);
        a->rope_local_theta = cfg_num(c, "swa_rope_theta", a->rope_theta);
        a->H = sh > H ? sh : H, a->Hkv = skv > Hkv ? skv : Hkv;
        for (int l = 0; l < a->L; l++) {
            a->layer_heads[l] = a->layer_slides[l] ? sh : H;
            a->layer_kv[l] = a->layer_slides[l] ? skv : Hkv;
        }
        if (!c->failed && !(a->rope_local_theta > 1)) refuse(c, "swa_rope_theta (> 1)");
    }
    a->slides_listed = 1, a->sliding_layers = n;
    if (a->dv > a->dh) refuse(c, "v_head_dim (at most head_dim)");
    const double f = cfg_num(c, "partial_rotary_factor", 1.0);
    if (!(f > 0 && f <= 1)) refuse(c, "partial_rotary_factor (in (0, 1])");
    a->rotary_dim = (int)(a->dh * f);
    json_t *vs = json_object_get(c->root, "attention_value_scale");
    a->v_scale = vs && !json_is_null(vs) ? (float)cfg_num(c, "attention_value_scale", 1.0) : 0.0f;
    if (vs && !json_is_null(vs) && !(a->v_scale > 0)) refuse(c, "attention_value_scale (> 0)");
    if (cfg_bool(c, "add_full_attention_sink_bias", 0))
        refuse(c, "add_full_attention_sink_bias (only false: vLLM gives full layers no sink)");
    a->sinks = n && cfg_bool(c, "add_swa_attention_sink_bias", 0);
    a->sinks_where = a->sinks ? HF_SINKS_SLIDING : 0;
    if (a->rope_type != HF_ROPE_PLAIN) refuse(c, "rope_scaling (vLLM turns plain RoPE)");
}

/* The MoE layers of moe_layer_freq (dense first, then MoE), and
 * MiMoV2MoE's router: sigmoid scores, chosen by score +
 * mlp.gate.e_score_correction_bias (vLLM's grouped top-k, whose group
 * step chooses nothing where topk_group == n_group), weighed by the
 * chosen scores, over their sum under norm_topk_prob. */
static void mimo_moe(Cfg *c, HfArch *a) {
    unsigned char moe[HF_MAX_LAYERS];
    flags(c, "moe_layer_freq", a->L, moe, "moe_layer_freq (one 0 or 1 per layer)");
    a->moe_from = a->L;
    for (int l = 0; l < a->L && !c->failed; l++) {
        if (moe[l] && a->moe_from == a->L) a->moe_from = l;
        if (!moe[l] && a->moe_from < a->L)
            refuse(c, "moe_layer_freq (gatelab reads the dense layers first, then the MoE ones)");
    }
    if (c->failed || a->moe_from >= a->L) return;
    a->n_experts = cfg_int(c, "n_routed_experts", -1, 1, 1 << 16);
    a->top_k = cfg_int(c, "num_experts_per_tok", -1, 1, 64); /* hf_moe.c holds 64 */
    a->moe_ff = cfg_int(c, "moe_intermediate_size", -1, 1, 1 << 20);
    const int ng = cfg_int(c, "n_group", 1, 1, 1 << 16), tg = cfg_int(c, "topk_group", ng, 1, ng);
    if (tg != ng) refuse(c, "topk_group (only n_group: gatelab does not choose expert groups)");
    if (cfg_int(c, "n_shared_experts", 0, 0, 0)) refuse(c, "n_shared_experts (only null or 0)");
    json_t *sf = json_object_get(c->root, "scoring_func");
    if (sf && !json_is_null(sf) &&
        !(json_is_string(sf) && !strcmp(json_string_value(sf), "sigmoid")))
        refuse(c, "scoring_func (only \"sigmoid\")");
    if (cfg_num(c, "routed_scaling_factor", 1.0) != 1.0)
        refuse(c, "routed_scaling_factor (only null or 1: vLLM applies none)");
    a->router = (HfRouter){.score = HF_SCORE_SIGMOID,
                           .select_bias = 1,
                           .renorm = cfg_bool(c, "norm_topk_prob", 1),
                           .scale = 1.0};
    if (!c->failed && a->top_k > a->n_experts) {
        c->failed = 1;
        seterr(c->err, c->errlen, "%s: num_experts_per_tok %d must be at most n_routed_experts %d",
               c->path, a->top_k, a->n_experts);
    }
}

/* MiMo's keys where cfg_llama_like's differ: layernorm_epsilon,
 * attention_bias on q/k/v_proj only, no tied head by default. */
void cfg_mimo(Cfg *c, HfArch *a) {
    a->eps = cfg_num(c, "layernorm_epsilon", a->eps);
    a->o_bias = 0;
    a->tied = cfg_bool(c, "tie_word_embeddings", 0);
    mimo_attention(c, a);
    mimo_moe(c, a);
}
