/* hf_weights.h: which tensors each architecture needs (names and shapes
 * exactly as the Hugging Face checkpoints store them), checked against the
 * checkpoint once at open, and bound layer by layer as float pointers:
 * straight into the mapping for aligned F32, else converted into one
 * layer-sized scratch buffer (so peak memory stays near the weights). */
#ifndef GATELAB_HF_WEIGHTS_H
#define GATELAB_HF_WEIGHTS_H

#include "hf_config.h"
#include "safetensors.h"

/* W_LN1 and W_LN2 are the attention's and the MLP's norm: before the
 * block (pre-norm), or after it where the architecture norms there (OLMo
 * 2's post_attention_layernorm and post_feedforward_layernorm);
 * W_LN1_POST and W_LN2_POST the norms of the blocks' outputs where a
 * layer has both (Gemma's sandwich). */
typedef enum {
    W_LN1,
    W_LN1_B,
    W_LN2,
    W_LN2_B,
    W_Q,
    W_K,
    W_V,
    W_QB,
    W_KB,
    W_VB, /* separate projections [out, in] */
    W_QKV,
    W_QKV_B, /* fused: GPT-2 Conv1D [d, 3d]; NeoX [3d, d] per head; Phi-3's
              * [q; k; v] rows, handed out as W_Q, W_K, W_V */
    W_O,
    W_OB,
    W_QN,
    W_KN,
    W_GATE,
    W_UP,
    W_DOWN,
    W_GATE_B,
    W_UP_B,
    W_DOWN_B, /* GLU, or up/down of the plain MLP; Phi-3's gate_up_proj
               * binds to W_GATE and is handed out as W_GATE, W_UP */
    W_LN1_POST,
    W_LN2_POST,
    W_SINKS,      /* gpt-oss: self_attn.sinks [H], a logit per head */
    W_ROUTER,     /* mlp.router.weight [E, d] (AFMoE: mlp.router.gate.weight;
                   * Laguna: mlp.gate.weight); an MoE layer is one that has it */
    W_ROUTER_B,   /* gpt-oss: mlp.router.bias [E] */
    W_EXP_GU,     /* mlp.experts.gate_up_proj [E, d, 2ff], [in, out] with the
                   * gate and up columns interleaved (gate at even ones); the
                   * stacked form of Laguna and Step-3.5 [E, 2ff, d]
                   * (HfLayerSpec.stacked) */
    W_EXP_GU_B,   /* mlp.experts.gate_up_proj_bias [E, 2ff] */
    W_EXP_DOWN,   /* mlp.experts.down_proj [E, ff, d], [in, out] (gpt-oss;
                   * stacked: [E, d, ff]) */
    W_EXP_DOWN_B, /* mlp.experts.down_proj_bias [E, d] */
    W_GPROJ,      /* the attention gate's own projection (HfArch.gate_proj):
                   * self_attn.<gate_proj>.weight [H * scores per head, d] */
    W_EXP_BIAS,   /* AFMoE: mlp.expert_bias [E] (Laguna:
                   * mlp.gate.e_score_correction_bias, or where that is absent
                   * mlp.experts.e_score_correction_bias), added to the scores to choose */
    W_EXP_GATE,   /* AFMoE, Laguna, MiMo: mlp.experts.<e>.gate_proj.weight [moe_ff, d] */
    W_EXP_UP,     /* and up_proj, one tensor per expert (HfLayerSpec.per_expert, with
                   * its down_proj [d, moe_ff] as W_EXP_DOWN); Step-3.5's legacy
                   * moe.gate_proj.weight and moe.up_proj.weight, 3-D [E, moe_ff, d]
                   * (with moe.down_proj.weight [E, d, moe_ff]) */
    W_N_ROLES
} HfRole;

typedef enum { G_EMB, G_POS, G_NORM, G_NORM_B, G_HEAD, G_N_ROLES } HfGlobalRole;

/* t[r]: the tensor of role r; for gpt-oss experts stored in MXFP4,
 * t[r] is the `_blocks` tensor and scales[r] its `_scales` (else NULL). */
typedef struct {
    const StTensor *t[W_N_ROLES];
    const StTensor *scales[W_N_ROLES];
    const StTensor **per_expert; /* [E][3]: W_EXP_GATE, W_EXP_UP, W_EXP_DOWN of
                                  * each expert (the MoE layers of AFMoE, Laguna and
                                  * MiMo), else NULL */
    /* the routed experts as 3-D tensors [E, out, in] (the stacked form of
     * Laguna and Step-3.5): W_EXP_GU [E, 2 moe_ff, d], the gate's rows then
     * the up's, and W_EXP_DOWN [E, d, moe_ff]; 0: gpt-oss's [E, in, out],
     * Step-3.5's legacy 3-D tensors, or none */
    int stacked;
} HfLayerSpec;

typedef struct {
    SafeTensors *st;
    const HfArch *a;
    int conv1d;                   /* GPT-2: weights stored [in, out] */
    const StTensor *g[G_N_ROLES]; /* NULL when the role is unused */
    HfLayerSpec *layers;          /* [L] */
    float *scratch;               /* converted weights of one layer, then one expert's */
    size_t scratch_n;
    size_t expert_at[W_N_ROLES]; /* where in scratch one expert's tensor of each expert
                                  * role goes */
    const char *dtype;           /* "F32", "BF16", "F16" or "mixed" */
} HfWeights;

/* Bind every tensor the architecture needs and check its shape and dtype:
 * -1 with one line naming a missing or mis-shaped tensor. */
int hf_weights_bind(HfWeights *w, SafeTensors *st, const HfArch *a, char *err, size_t errlen);
void hf_weights_free(HfWeights *w);

/* Float pointers of layer l's tensors (NULL for unused roles and for the
 * expert weights W_EXP_GU, W_EXP_DOWN: hf_weights_expert), valid until
 * the next call; a fused tensor that a
 * recipe reads as separate roles (Phi-3's qkv_proj, gate_up_proj) comes as views of its row blocks;
 * the norms of a (1 + w) architecture (HfArch.norm_plus1) come as 1 + w. */
int hf_weights_layer(HfWeights *w, int l, const float *out[W_N_ROLES], char *err, size_t errlen);
/* Expert e's weights of role r in layer l: the slab of a 3-D expert
 * tensor (gpt-oss's W_EXP_GU, W_EXP_DOWN [in, out]; stacked ones and
 * Step-3.5's legacy ones [out, in]), or the expert's own tensor
 * [out, in] (the W_EXP_GATE, W_EXP_UP, W_EXP_DOWN of AFMoE, Laguna and
 * MiMo): a view
 * into an F32 checkpoint, else converted (BF16, F16) or dequantized
 * (MXFP4, mxfp4_expert) into the scratch, valid until the next call for
 * role r or the next hf_weights_layer. So an MoE layer never holds more
 * than one expert's weights in float32. NULL with one line in err when a
 * conversion fails. */
const float *hf_weights_expert(const HfWeights *w, int l, HfRole r, int e, char *err,
                               size_t errlen);
/* A global 1-D tensor (norms) as floats: into dst[n] when converted
 * (the final norm of a (1 + w) architecture always, as 1 + w). */
const float *hf_weights_vec(HfWeights *w, HfGlobalRole r, float *dst, char *err, size_t errlen);

#endif
