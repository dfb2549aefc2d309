/* hf_config_step3p5.c: Step3p5ForCausalLM's config.json keys (StepFun's
 * Step-3.5-Flash, model_type "step3p5"), as Step3p7TextConfig defines
 * them and StepFun's modeling (transformers' generated
 * modeling_step3p7.py, commit a7b81df) reads them, read after the Llama
 * layout's (cfg_llama_like). The per-layer
 * lists (layer_types, mlp_layer_types, partial_rotary_factors,
 * swiglu_limits) are normalised as the file does: a shorter list
 * extended with its last value, a longer one cut at num_hidden_layers
 * (the multi-token-prediction layers beyond it are not run). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hf_config_priv.h"
#include "util.h"

/* Fails c with one line naming what to change (none once failed). */
static void refuse(Cfg *c, const char *what) {
    if (c->failed) return;
    c->failed = 1;
    seterr(c->err, c->errlen,
           "%s: Step3p5ForCausalLM is read as StepFun's modeling_step3p7.py runs it: "
           "change %s",
           c->path, what);
}

/* Entry l of the per-layer list v as the file normalises it (the last
 * entry past the list's end); NULL when v is not a non-empty list. */
static json_t *per_layer(json_t *v, int l) {
    size_t n = json_is_array(v) ? json_array_size(v) : 0;
    if (!n) return NULL;
    return json_array_get(v, (size_t)l < n ? (size_t)l : n - 1);
}

/* Which layers slide, into a->layer_slides (slides_listed: any pattern
 * reads, sliding_layers counts them): layer_types, else (absent or null)
 * every even layer where attention_other_setting and sliding_window are
 * both given, none otherwise. */
static void step_layer_types(Cfg *c, HfArch *a) {
    json_t *lt = json_object_get(c->root, "layer_types");
    json_t *other = json_object_get(c->root, "attention_other_setting");
    json_t *sw = json_object_get(c->root, "sliding_window");
    const int meta = other && !json_is_null(other) && sw && !json_is_null(sw);
    int n = 0;
    a->slides_listed = 1;
    for (int l = 0; l < a->L; l++) {
        const char *t = json_string_value(per_layer(lt, l));
        if (lt && !json_is_null(lt) &&
            !(t && (!strcmp(t, "sliding_attention") || !strcmp(t, "full_attention"))))
            return refuse(c, "layer_types (a non-empty list of \"sliding_attention\" or "
                             "\"full_attention\")");
        a->layer_slides[l] =
            lt && !json_is_null(lt) ? !strcmp(t, "sliding_attention") : meta && l % 2 == 0;
        n += a->layer_slides[l];
    }
    if (!n) return;
    if (!sw || json_is_null(sw))
        return refuse(c, "sliding_window (layer_types names sliding layers)");
    a->sliding_window = cfg_int(c, "sliding_window", 0, 1, 1 << 30);
    a->sliding_layers = n;
}

/* The sliding layers' query heads from attention_other_setting, the
 * full layers' num_attention_heads, into layer_heads (cfg_heads: a->H
 * the largest); a head_dim or key/value head count of their own is
 * refused. */
static void step_other_heads(Cfg *c, HfArch *a) {
    json_t *o = json_object_get(c->root, "attention_other_setting");
    if (!a->sliding_layers) return;
    if (!json_is_object(o))
        return refuse(c, "attention_other_setting (an object with the sliding layers' "
                         "num_attention_heads and num_attention_groups)");
    const int H = cfg_int_in(c, o, "attention_other_setting", "num_attention_heads", -1, 1, 4096);
    const int G = cfg_int_in(c, o, "attention_other_setting", "num_attention_groups", -1, 1, 4096);
    const int dh = cfg_int_in(c, o, "attention_other_setting", "head_dim", a->dh, 1, 1 << 20);
    if (!c->failed && dh != a->dh)
        refuse(c, "attention_other_setting.head_dim (gatelab reads one head_dim for every layer)");
    if (!c->failed && G != a->Hkv)
        refuse(c, "attention_other_setting.num_attention_groups (gatelab reads one key/value "
                  "head count for every layer)");
    if (c->failed) return;
    int heads[HF_MAX_LAYERS];
    for (int l = 0; l < a->L; l++) heads[l] = a->layer_slides[l] ? H : a->H;
    cfg_heads(a, heads);
}

/* Layer l's RoPE as the file's _get_layer_rope_parameters takes it: the
 * base from rope_theta (a per-layer list, or one number) else the layer
 * type's rope_parameters entry, the fraction from partial_rotary_factors
 * else that entry else partial_rotary_factor (1). */
static void layer_rope(Cfg *c, int l, json_t *entry, double *theta, double *frac) {
    json_t *th = json_object_get(c->root, "rope_theta");
    json_t *t = json_is_array(th) ? per_layer(th, l) : json_object_get(entry, "rope_theta");
    if (!t) t = th;
    *theta = t && !json_is_null(t) ? (json_is_number(t) ? json_number_value(t) : -1) : 10000.0;
    json_t *f = per_layer(json_object_get(c->root, "partial_rotary_factors"), l);
    if (!f || json_is_null(f)) f = json_object_get(entry, "partial_rotary_factor");
    if (!f || json_is_null(f)) f = json_object_get(c->root, "partial_rotary_factor");
    *frac = f && !json_is_null(f) ? (json_is_number(f) ? json_number_value(f) : -1) : 1.0;
}

/* Whether the layer type `type` takes rope_scaling (yarn_only_types
 * absent, empty or naming it). */
static int type_scaled(Cfg *c, const char *type) {
    json_t *y = json_object_get(c->root, "yarn_only_types");
    if (!json_is_array(y) || !json_array_size(y)) return 1;
    for (size_t i = 0; i < json_array_size(y); i++) {
        const char *t = json_string_value(json_array_get(y, i));
        if (t && !strcmp(t, type)) return 1;
    }
    return 0;
}

/* Whether the top level's rope_scaling scales (an object whose rope_type,
 * or type, is not "default"). */
static int scaling_given(Cfg *c) {
    json_t *rs = json_object_get(c->root, "rope_scaling");
    json_t *ty = json_object_get(rs, "rope_type");
    if (!ty) ty = json_object_get(rs, "type");
    return json_is_object(rs) && !(json_is_string(ty) && !strcmp(json_string_value(ty), "default"));
}

/* Each layer type's base and rotary dims, which must be one per type
 * (full: rope_theta, rotary_dim; sliding: rope_local_theta,
 * rotary_dim_local); the RoPE scaling cfg_llama_like read stays on the
 * full layers only where they take it; sliding layers turn by plain RoPE. */
static void step_rope(Cfg *c, HfArch *a) {
    json_t *rp = json_object_get(c->root, "rope_parameters");
    int seen[2] = {0, 0};
    double th[2] = {0, 0}, fr[2] = {0, 0};
    for (int l = 0; l < a->L && !c->failed; l++) {
        const int s = a->layer_slides[l];
        json_t *e = json_object_get(rp, s ? "sliding_attention" : "full_attention");
        double t, f;
        layer_rope(c, l, json_is_object(e) ? e : rp, &t, &f);
        if (!(t > 1) || !(f > 0 && f <= 1))
            return refuse(c, "rope_theta (> 1) or partial_rotary_factors (in (0, 1])");
        if (seen[s] && (t != th[s] || f != fr[s]))
            return refuse(c, "rope_theta or partial_rotary_factors (gatelab turns every layer "
                             "of one type by one base and one rotary fraction)");
        seen[s] = 1, th[s] = t, fr[s] = f;
    }
    if (c->failed) return;
    const int by_type = json_is_object(json_object_get(rp, "full_attention")) ||
                        json_is_object(json_object_get(rp, "sliding_attention"));
    if (!by_type && scaling_given(c) && !type_scaled(c, "full_attention"))
        a->rope_type = HF_ROPE_PLAIN;
    if (seen[0]) a->rope_theta = th[0], a->rotary_dim = (int)(a->dh * fr[0]);
    if (!seen[1]) return;
    json_t *sl = json_object_get(rp, "sliding_attention");
    json_t *ty = json_is_object(sl) ? json_object_get(sl, "rope_type") : NULL;
    if ((ty && !(json_is_string(ty) && !strcmp(json_string_value(ty), "default"))) ||
        (!by_type && scaling_given(c) && type_scaled(c, "sliding_attention")))
        return refuse(c, "rope_scaling or yarn_only_types (gatelab turns sliding layers by "
                         "plain RoPE: name only full_attention in yarn_only_types)");
    a->rope_local_theta = th[1], a->rotary_dim_local = (int)(a->dh * fr[1]);
    if (a->rotary_dim_local % 2 || !a->rotary_dim_local)
        refuse(c, "partial_rotary_factors (an even number of rotary dims above 0)");
    if (!seen[0]) a->rope_theta = th[1], a->rotary_dim = a->rotary_dim_local;
}

/* Layer v of moe_layers_enum sparse (sp[v]); one outside [0, L) refused. */
static void moe_layer(Cfg *c, HfArch *a, long v, unsigned char *sp) {
    char what[160];
    if (v >= 0 && v < a->L) {
        sp[v] = 1;
        return;
    }
    snprintf(what, sizeof what,
             "moe_layers_enum (it names layer %ld; the layers are 0 to %d, num_hidden_layers %d)",
             v, a->L - 1, a->L);
    refuse(c, what);
}

/* The sparse layers of mlp_layer_types, else of moe_layers_enum (a list
 * or a comma-separated string; absent: layer 3 on), into moe_from: the
 * dense layers first, then the sparse ones. */
static void step_mlp_types(Cfg *c, HfArch *a) {
    json_t *mt = json_object_get(c->root, "mlp_layer_types");
    json_t *me = json_object_get(c->root, "moe_layers_enum");
    unsigned char *sp = calloc((size_t)a->L, 1);
    if (!sp) return refuse(c, "nothing (out of memory)");
    if (mt && !json_is_null(mt)) {
        for (int l = 0; l < a->L && !c->failed; l++) {
            const char *t = json_string_value(per_layer(mt, l));
            if (!t || (strcmp(t, "sparse") && strcmp(t, "dense")))
                refuse(c, "mlp_layer_types (a non-empty list of \"dense\" or \"sparse\")");
            else sp[l] = !strcmp(t, "sparse");
        }
    } else if (json_is_string(me)) {
        for (const char *p = json_string_value(me); *p && !c->failed;) {
            char *end;
            const long v = strtol(p, &end, 10);
            while (*end == ' ') end++;
            if (end == p || (*end && *end != ','))
                refuse(c, "moe_layers_enum (layer numbers separated by commas)");
            else moe_layer(c, a, v, sp);
            p = *end ? end + 1 : end;
        }
    } else if (json_is_array(me)) {
        for (size_t i = 0; i < json_array_size(me) && !c->failed; i++) {
            json_t *e = json_array_get(me, i);
            if (!json_is_integer(e)) refuse(c, "moe_layers_enum (a list of layer numbers)");
            else moe_layer(c, a, (long)json_integer_value(e), sp);
        }
    } else
        for (int l = 3; l < a->L; l++) sp[l] = 1;
    a->moe_from = a->L;
    for (int l = 0; l < a->L && !c->failed; l++) {
        if (sp[l] && a->moe_from == a->L) a->moe_from = l;
        if (!sp[l] && a->moe_from < a->L)
            refuse(c, "mlp_layer_types or moe_layers_enum (gatelab reads the dense layers "
                      "first, then the sparse ones)");
    }
    free(sp);
}

/* swiglu_limits: layer l's routed experts' clamp; swiglu_limits_shared:
 * the clamp of the MLP that runs on every token, the shared expert of an
 * MoE layer or a dense layer's MLP (null or 0: none). Both clamp after
 * SiLU, min(silu(gate), c) * clamp(up, -c, c), as StepFun's modeling
 * (Step3p7MLP, Step3p7MoEMLP) does. */
static void step_limits(Cfg *c, HfArch *a) {
    static const char *const keys[] = {"swiglu_limits", "swiglu_limits_shared"};
    char what[120];
    for (int k = 0; k < 2; k++) {
        json_t *v = json_object_get(c->root, keys[k]);
        snprintf(what, sizeof what, "%s (a list of numbers >= 0 or null, one per layer)", keys[k]);
        if (v && !json_is_null(v) && !json_is_array(v)) return refuse(c, what);
        for (int l = 0; l < a->L; l++) {
            json_t *e = per_layer(v, l);
            const double x = !e || json_is_null(e) ? 0.0
                             : json_is_number(e)   ? json_number_value(e)
                                                   : -1.0;
            if (!(x >= 0 && x < 1e30)) return refuse(c, what);
            if (k) a->swiglu_limit_shared[l] = (float)x;
            else a->swiglu_limit[l] = (float)x;
        }
    }
}

/* The router (Step3p7MoEMLP): with use_moe_router_bias, sigmoid scores
 * chosen by score + moe.router_bias and weighed by the chosen scores over
 * their sum (+ 1e-20); without it, the softmax over every expert, the
 * top k weighed unnormalised; both times moe_router_scaling_factor. */
static void step_router(Cfg *c, HfArch *a) {
    const int bias = cfg_bool(c, "use_moe_router_bias", 0);
    a->router = (HfRouter){.score = bias ? HF_SCORE_SIGMOID : HF_SCORE_SOFTMAX,
                           .select_bias = bias,
                           .renorm = bias,
                           .scale = cfg_num(c, "moe_router_scaling_factor", 1.0)};
    if (!c->failed && a->top_k > a->n_experts) {
        c->failed = 1;
        seterr(c->err, c->errlen, "%s: moe_top_k %d must be at most moe_num_experts %d", c->path,
               a->top_k, a->n_experts);
    }
}

/* Step3p7TextConfig's keys where cfg_llama_like's differ: head_dim 128,
 * rms_norm_eps 1e-5, num_attention_groups (8) key/value heads, no
 * biases, SiLU; RMSNorm by (1 + w) (Gemma3RMSNorm) on the blocks, the
 * final norm and each head's q_norm / k_norm; each head's output times
 * sigmoid(g_proj(h)), one score a head, under use_head_wise_attn_gate;
 * the MoE block of moe_num_experts (288) experts of
 * moe_intermediate_size (1280), moe_top_k (8) a token, plus the shared
 * expert of share_expert_dim (1280). */
void cfg_step3p5(Cfg *c, HfArch *a) {
    a->dh = cfg_int(c, "head_dim", 128, 1, 1 << 20);
    a->eps = cfg_num(c, "rms_norm_eps", 1e-5);
    a->Hkv = cfg_int(c, "num_attention_groups", 8, 1, 4096);
    a->qkv_bias = a->o_bias = a->mlp_bias = 0;
    a->act = HF_ACT_SILU;
    a->norm_plus1 = 1, a->qk_norm = 1;
    step_layer_types(c, a);
    step_other_heads(c, a);
    step_rope(c, a);
    if (cfg_bool(c, "use_head_wise_attn_gate", 0)) {
        a->gate = HF_GATE_HEADWISE;
        snprintf(a->gate_proj, sizeof a->gate_proj, "g_proj");
        snprintf(a->gate_label, sizeof a->gate_label, "g_proj-headwise-sigmoid");
    } else a->gate = HF_GATE_NONE;
    step_mlp_types(c, a);
    step_limits(c, a);
    if (c->failed || a->moe_from >= a->L) return;
    a->n_experts = cfg_int(c, "moe_num_experts", 288, 1, 1 << 16);
    a->top_k = cfg_int(c, "moe_top_k", 8, 1, 64); /* hf_moe.c holds 64 */
    a->moe_ff = cfg_int(c, "moe_intermediate_size", 1280, 1, 1 << 20);
    a->shared_ff = cfg_int(c, "share_expert_dim", 1280, 1, 1 << 20);
    step_router(c, a);
}
