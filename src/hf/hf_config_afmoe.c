/* hf_config_afmoe.c: AfmoeForCausalLM's config.json keys (Arcee's
 * Trinity), as AfmoeConfig of transformers (configuration_afmoe.py at
 * commit 4e4671e) defines them, read after the Llama layout's
 * (cfg_llama_like). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hf_config_priv.h"
#include "util.h"

/* AfmoeConfig's defaults where cfg_llama_like's differ: rms_norm_eps
 * 1e-5, head_dim 128, no attention or MLP biases (the config fixes
 * attention_bias false), no tied head; sliding_window 1024 on the layers
 * layer_types names sliding_attention, by default all but every
 * global_attn_every_n_layers-th (4); RoPE on the sliding layers only;
 * per-head q_norm / k_norm; the attention output times the elementwise
 * sigmoid of self_attn.gate_proj; embeddings times sqrt(hidden_size)
 * under mup_enabled (false). The first num_dense_layers (1) layers have
 * the dense SwiGLU MLP of intermediate_size, the others the MoE block
 * (a sigmoid router with expert_bias, route_scale and shared experts),
 * which hf_moe.c does not run: a checkpoint with an MoE layer is
 * refused, naming the keys. */
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
    int dense = cfg_int(c, "num_dense_layers", 1, 0, 1 << 30);
    if (!c->failed && dense < a->L) {
        c->failed = 1;
        seterr(c->err, c->errlen,
               "%s: AfmoeForCausalLM layers %d to %d are MoE layers (num_dense_layers %d < "
               "num_hidden_layers %d), whose sigmoid router with expert_bias and shared experts "
               "gatelab does not run: only a checkpoint with every layer dense is read",
               c->path, dense, a->L - 1, dense, a->L);
    }
}
