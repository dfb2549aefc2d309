/* hf_config_afmoe.c: AfmoeForCausalLM's config.json keys (Arcee's
 * Trinity), as AfmoeConfig of transformers (configuration_afmoe.py at
 * commit 4e4671e) defines them, read after the Llama layout's
 * (cfg_llama_like). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hf_config_priv.h"
#include "util.h"

/* The router's keys, as AfmoeTokenChoiceRouter of the Trinity
 * checkpoints' modeling_afmoe.py reads them (transformers' own file at
 * commit d4037de runs the defaults only: sigmoid, route_norm true):
 * score_func "sigmoid" (default) scores each logit by its sigmoid,
 * "softmax" by the softmax over all experts; the experts chosen by score
 * + expert_bias, weighed by their scores, over the chosen scores' sum
 * (+1e-20) only under sigmoid with route_norm (true), then times
 * route_scale (1.0). Refused naming the key: another score_func, and
 * n_group above 1 (no AFMoE modeling file selects groups of experts). */
static void afmoe_router(Cfg *c, HfArch *a) {
    json_t *sf = json_object_get(c->root, "score_func");
    const char *f = sf && !json_is_null(sf) ? json_string_value(sf) : "sigmoid";
    const int softmax = f && !strcmp(f, "softmax");
    a->router = (HfRouter){.score = softmax ? HF_SCORE_SOFTMAX : HF_SCORE_SIGMOID,
                           .select_bias = 1,
                           .renorm = !softmax && cfg_bool(c, "route_norm", 1),
                           .scale = cfg_num(c, "route_scale", 1.0)};
    const char *bad = !f || (!softmax && strcmp(f, "sigmoid"))
                          ? "score_func (\"sigmoid\" or \"softmax\")"
                      : cfg_int(c, "n_group", 1, 1, 1 << 16) > 1
                          ? "n_group (only 1: modeling_afmoe.py selects no groups of experts)"
                          : NULL;
    if (!c->failed && bad) {
        c->failed = 1;
        seterr(c->err, c->errlen,
               "%s: AfmoeForCausalLM's router is read as AfmoeTokenChoiceRouter runs it "
               "(score_func, route_norm, expert_bias to choose): change %s",
               c->path, bad);
    }
}

/* AfmoeConfig's defaults where cfg_llama_like's differ: rms_norm_eps
 * 1e-5, head_dim 128, no attention or MLP biases (the config fixes
 * attention_bias false), no tied head; sliding_window 1024 on the layers
 * layer_types names sliding_attention, by default all but every
 * global_attn_every_n_layers-th (4); RoPE on the sliding layers only;
 * per-head q_norm / k_norm; the attention output times the elementwise
 * sigmoid of self_attn.gate_proj; embeddings times sqrt(hidden_size)
 * under mup_enabled (false). The first num_dense_layers (1) layers have
 * the dense SwiGLU MLP of intermediate_size, the others the MoE block:
 * num_experts (64) experts of moe_intermediate_size (1408) units,
 * num_experts_per_tok (6) of them per token (afmoe_router), plus
 * num_shared_experts (2) shared ones. A checkpoint with every layer dense
 * has no experts (n_experts 0). */
void cfg_afmoe(Cfg *c, HfArch *a) {
    a->eps = cfg_num(c, "rms_norm_eps", 1e-5);
    a->dh = a->rotary_dim = cfg_int(c, "head_dim", 128, 1, 1 << 20);
    a->qkv_bias = a->o_bias = a->mlp_bias = 0;
    a->tied = cfg_bool(c, "tie_word_embeddings", 0);
    a->sliding_window = cfg_int(c, "sliding_window", 1024, 1, 1 << 30);
    cfg_layer_types(c, a, cfg_int(c, "global_attn_every_n_layers", 4, 1, 1 << 30));
    a->rope_sliding_only = 1;
    a->qk_norm = 1;
    a->gate = HF_GATE_ELEMENTWISE;
    snprintf(a->gate_proj, sizeof a->gate_proj, "gate_proj");
    snprintf(a->gate_label, sizeof a->gate_label, "gate_proj-elementwise-sigmoid");
    if (cfg_bool(c, "mup_enabled", 0)) a->embed_scale = sqrtf((float)a->d);
    a->moe_from = cfg_int(c, "num_dense_layers", 1, 0, 1 << 30);
    if (a->moe_from >= a->L) return;
    a->n_experts = cfg_int(c, "num_experts", 64, 1, 1 << 16);
    a->top_k = cfg_int(c, "num_experts_per_tok", 6, 1, 64); /* hf_moe.c holds 64 */
    const int n_shared = cfg_int(c, "num_shared_experts", 2, 0, 1 << 10);
    a->moe_ff = cfg_int(c, "moe_intermediate_size", 1408, 1, 1 << 20);
    a->shared_ff = n_shared * a->moe_ff; /* one GLU of every shared expert's units */
    afmoe_router(c, a);
    if (!c->failed && a->top_k > a->n_experts) {
        c->failed = 1;
        seterr(c->err, c->errlen, "%s: num_experts_per_tok %d must be at most num_experts %d",
               c->path, a->top_k, a->n_experts);
    }
}
