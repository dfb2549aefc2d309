/* hf_config_gptoss.c: GptOssForCausalLM's config.json keys, as
 * GptOssConfig of transformers v4.55.0 (configuration_gpt_oss.py) defines
 * them, read after the Llama layout's (cfg_llama_like). */
#include <string.h>

#include "hf_config_priv.h"
#include "util.h"

/* GptOssConfig's defaults where cfg_llama_like's differ: rms_norm_eps
 * 1e-5, head_dim 64, attention_bias true (q/k/v and o_proj), no tied
 * head; sliding_window 128 (null: none) on the layers layer_types names
 * sliding_attention, by default every other one from layer 0
 * (cfg_layer_types with period 2); num_local_experts (no default: the
 * checkpoint must state it) experts of intermediate_size units on every
 * layer, num_experts_per_tok (4) of them per token, chosen by the
 * router's logits and weighed by the softmax over the chosen ones; no
 * shared experts; the SwiGLU clamped at
 * swiglu_limit (7.0, the same on every layer) with GptOssExperts' fixed
 * alpha 1.702; a sink logit
 * per head (self_attn.sinks). */
void cfg_gptoss(Cfg *c, HfArch *a) {
    a->eps = cfg_num(c, "rms_norm_eps", 1e-5);
    a->dh = a->rotary_dim = cfg_int(c, "head_dim", 64, 1, 1 << 20);
    a->qkv_bias = a->o_bias = cfg_bool(c, "attention_bias", 1);
    a->mlp_bias = 0;
    a->tied = cfg_bool(c, "tie_word_embeddings", 0);
    json_t *sw = json_object_get(c->root, "sliding_window");
    a->sliding_window = json_is_null(sw) ? 0 : cfg_int(c, "sliding_window", 128, 1, 1 << 30);
    cfg_layer_types(c, a, 2);
    a->sinks = 1;
    a->n_experts = cfg_int(c, "num_local_experts", -1, 1, 1 << 16);
    a->top_k = cfg_int(c, "num_experts_per_tok", 4, 1, 64); /* hf_moe.c holds 64 */
    a->moe_from = 0, a->moe_ff = a->ff, a->shared_ff = 0;
    a->router = (HfRouter){.score = HF_SCORE_SOFTMAX_TOPK, .scale = 1.0};
    a->swiglu_alpha = 1.702;
    const double limit = cfg_num(c, "swiglu_limit", 7.0);
    for (int l = 0; l < a->L; l++) a->swiglu_limit[l] = (float)limit;
    if (!c->failed && (a->top_k > a->n_experts || !(limit > 0))) {
        c->failed = 1;
        seterr(c->err, c->errlen,
               "%s: num_experts_per_tok %d must be at most num_local_experts %d, and "
               "swiglu_limit > 0",
               c->path, a->top_k, a->n_experts);
    }
}
