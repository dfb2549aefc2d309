/* hf_config_laguna.c: LagunaForCausalLM's config.json keys (Poolside's
 * Laguna), as LagunaConfig of transformers (configuration_laguna.py)
 * defines them and modeling_laguna.py at commit ca5ff0b reads them, read
 * after the Llama layout's (cfg_llama_like). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hf_config_priv.h"
#include "util.h"

/* Fails c with one line naming what to change (none once failed). */
static void refuse(Cfg *c, const char *what) {
    if (c->failed) return;
    c->failed = 1;
    seterr(c->err, c->errlen,
           "%s: LagunaForCausalLM is read as modeling_laguna.py runs it: change %s", c->path, what);
}

/* num_attention_heads_per_layer: each layer's query heads into
 * a->layer_heads, the largest a->H (cfg_heads; the KV heads stay one count); absent
 * or null: every layer num_attention_heads. */
static void laguna_heads(Cfg *c, HfArch *a) {
    json_t *ph = json_object_get(c->root, "num_attention_heads_per_layer");
    if (!ph || json_is_null(ph)) return;
    if (!json_is_array(ph) || json_array_size(ph) != (size_t)a->L) {
        refuse(c, "num_attention_heads_per_layer (a list of one count per layer)");
        return;
    }
    int heads[HF_MAX_LAYERS];
    for (int l = 0; l < a->L; l++) {
        json_t *v = json_array_get(ph, (size_t)l);
        if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 4096) {
            refuse(c, "num_attention_heads_per_layer (each a count in [1, 4096])");
            return;
        }
        heads[l] = (int)json_integer_value(v);
    }
    cfg_heads(a, heads);
}

/* mlp_layer_types: the dense layers first, then the sparse (MoE) ones,
 * into moe_from; absent or null: layer 0 dense, the others sparse. */
static void laguna_mlp_types(Cfg *c, HfArch *a) {
    json_t *mt = json_object_get(c->root, "mlp_layer_types");
    a->moe_from = 1;
    if (!mt || json_is_null(mt)) return;
    if (!json_is_array(mt) || json_array_size(mt) != (size_t)a->L) {
        refuse(c, "mlp_layer_types (a list of one type per layer)");
        return;
    }
    a->moe_from = a->L;
    for (int l = 0; l < a->L; l++) {
        const char *t = json_string_value(json_array_get(mt, (size_t)l));
        const int sparse = t && !strcmp(t, "sparse");
        if (!sparse && !(t && !strcmp(t, "dense"))) {
            refuse(c, "mlp_layer_types (each \"dense\" or \"sparse\")");
            return;
        }
        if (sparse && a->moe_from == a->L) a->moe_from = l;
        if (!sparse && a->moe_from < a->L) {
            refuse(c, "mlp_layer_types (gatelab reads the dense layers first, then the "
                      "sparse ones)");
            return;
        }
    }
}

/* The RoPE of each layer type from rope_parameters' "full_attention" and
 * "sliding_attention" entries (LagunaConfig's defaults: 500000 on half of
 * each head's dims; 10000 on all of them): the full layers' base,
 * fraction and scaling were read by cfg_llama_like from the first entry
 * (rope_params); here their fraction, and the sliding layers' base and
 * fraction, which turn by plain RoPE. */
static void laguna_rope(Cfg *c, HfArch *a) {
    json_t *rp = json_object_get(c->root, "rope_parameters");
    if (rp && !json_is_null(rp) && !json_is_object(json_object_get(rp, "full_attention"))) {
        refuse(c, "rope_parameters (one entry per layer type: full_attention and "
                  "sliding_attention)");
        return;
    }
    json_t *full = json_object_get(rp, "full_attention"),
           *sl = json_object_get(rp, "sliding_attention");
    const double ff = full ? cfg_num_in(c, full, "partial_rotary_factor", 1.0) : 0.5;
    const double fs = json_is_object(sl) ? cfg_num_in(c, sl, "partial_rotary_factor", 1.0) : 1.0;
    if (!(ff > 0 && ff <= 1 && fs > 0 && fs <= 1)) {
        refuse(c, "partial_rotary_factor (in (0, 1])");
        return;
    }
    a->rotary_dim = (int)(a->dh * ff), a->rotary_dim_local = (int)(a->dh * fs);
    if (!a->sliding_layers) return;
    json_t *ty = json_object_get(sl, "rope_type");
    if (ty && !(json_is_string(ty) && !strcmp(json_string_value(ty), "default"))) {
        refuse(c, "rope_parameters' sliding_attention rope_type (only \"default\")");
        return;
    }
    a->rope_local_theta = json_is_object(sl) ? cfg_num_in(c, sl, "rope_theta", 10000.0) : 10000.0;
    if (!(a->rope_local_theta > 1) || a->rotary_dim_local % 2 || !a->rotary_dim_local)
        refuse(c, "rope_parameters' sliding_attention (rope_theta > 1, an even number of rotary "
                  "dims above 0)");
}

/* The router (LagunaTopKRouter): logits capped by
 * moe_router_logit_softcapping (0: none), sigmoid scores, chosen by
 * score + mlp.gate.e_score_correction_bias, weighed by the chosen scores
 * over their sum; the routed experts' sum times moe_routed_scaling_factor
 * (1), the shared expert's not. */
static void laguna_router(Cfg *c, HfArch *a) {
    a->router = (HfRouter){.score = HF_SCORE_SIGMOID,
                           .select_bias = 1,
                           .renorm = 1,
                           .scale = cfg_num(c, "moe_routed_scaling_factor", 1.0),
                           .softcap = cfg_num(c, "moe_router_logit_softcapping", 0.0)};
    if (cfg_bool(c, "moe_apply_router_weight_on_input", 0))
        refuse(c, "moe_apply_router_weight_on_input (only false)");
    if (!(a->router.softcap >= 0)) refuse(c, "moe_router_logit_softcapping (>= 0)");
    if (!c->failed && a->top_k > a->n_experts) {
        c->failed = 1;
        seterr(c->err, c->errlen, "%s: num_experts_per_tok %d must be at most num_experts %d",
               c->path, a->top_k, a->n_experts);
    }
}

/* LagunaConfig's defaults where cfg_llama_like's differ: head_dim 128,
 * num_key_value_heads 8, no tied head, attention_bias on q/k/v/o_proj
 * (false); per-layer query heads (laguna_heads); sliding_window 512 on
 * the layers layer_types names sliding_attention (default none); per-head
 * q_norm / k_norm; each head's output times softplus(g_proj(h)), one
 * score a head (gating true or "per-head"); the MLP of mlp_layer_types:
 * dense SwiGLU of intermediate_size, or the MoE block of num_experts (256)
 * experts of moe_intermediate_size (512), num_experts_per_tok (8) a
 * token (laguna_router), plus one shared expert of
 * shared_expert_intermediate_size (512). A checkpoint with every layer
 * dense has no experts. */
void cfg_laguna(Cfg *c, HfArch *a) {
    a->dh = cfg_int(c, "head_dim", 128, 1, 1 << 20);
    a->tied = cfg_bool(c, "tie_word_embeddings", 0);
    laguna_heads(c, a);
    json_t *sw = json_object_get(c->root, "sliding_window");
    a->sliding_window = json_is_null(sw) ? 0 : cfg_int(c, "sliding_window", 512, 1, 1 << 30);
    cfg_layer_types(c, a, 1); /* no layer_types: every layer full_attention */
    laguna_rope(c, a);
    a->qk_norm = 1;
    json_t *gt = json_object_get(c->root, "gating");
    if (gt && !json_is_true(gt) &&
        !(json_is_string(gt) && !strcmp(json_string_value(gt), "per-head")))
        refuse(c, "gating (only true or \"per-head\": one softplus score a head)");
    a->gate = HF_GATE_HEADWISE, a->gate_softplus = 1;
    snprintf(a->gate_proj, sizeof a->gate_proj, "g_proj");
    snprintf(a->gate_label, sizeof a->gate_label, "g_proj-headwise-softplus");
    laguna_mlp_types(c, a);
    if (c->failed || a->moe_from >= a->L) return;
    a->n_experts = cfg_int(c, "num_experts", 256, 1, 1 << 16);
    a->top_k = cfg_int(c, "num_experts_per_tok", 8, 1, 64); /* hf_moe.c holds 64 */
    a->moe_ff = cfg_int(c, "moe_intermediate_size", 512, 1, 1 << 20);
    a->shared_ff = cfg_int(c, "shared_expert_intermediate_size", 512, 1, 1 << 20);
    laguna_router(c, a);
}
