/* hf_config.h: a Hugging Face config.json -> the architecture description
 * the forward pass needs (hf_model.c). Unknown architectures and missing
 * or nonsensical fields are one-line errors. */
#ifndef GATELAB_HF_CONFIG_H
#define GATELAB_HF_CONFIG_H

#include <stddef.h>

/* The most layers a config may state (num_hidden_layers). */
#define HF_MAX_LAYERS 4096

typedef enum {
    HF_LLAMA,
    HF_QWEN2,
    HF_QWEN3,
    HF_GPT2,
    HF_NEOX,
    HF_OLMO2,
    HF_MISTRAL,
    HF_PHI3,
    HF_GEMMA2,
    HF_GEMMA3,
    HF_GPTOSS,
    HF_AFMOE,
    HF_LAGUNA,
    HF_STEP3P5,
    HF_MIMO
} HfFamily;
enum { HF_SINKS_SLIDING = 1, HF_SINKS_FULL = 2 };
typedef enum { HF_ACT_SILU, HF_ACT_GELU_TANH, HF_ACT_GELU_ERF, HF_ACT_RELU } HfAct;
typedef enum { HF_GATE_NONE, HF_GATE_HEADWISE, HF_GATE_ELEMENTWISE } HfGate;
typedef enum { HF_ROPE_PLAIN, HF_ROPE_LLAMA3, HF_ROPE_YARN, HF_ROPE_LINEAR } HfRope;

/* How an MoE router turns its logits z (mlp.router) into each token's
 * top_k experts and their weights: the family's choices, as data. */
typedef enum {
    HF_SCORE_SOFTMAX_TOPK, /* choose by z; weigh by the softmax over the k chosen z (gpt-oss) */
    HF_SCORE_SIGMOID,      /* s = sigmoid(z); choose by s (+ the selection bias); weigh by s */
    HF_SCORE_SOFTMAX       /* s = the softmax of z over all experts; choose by s (+ the
                            * selection bias); weigh by s (AFMoE's score_func "softmax") */
} HfScore;
typedef struct {
    HfScore score;
    int select_bias; /* mlp.expert_bias [E] added to s to choose, not to weigh (AFMoE) */
    int renorm;      /* the k weights over their sum (+ 1e-20) */
    double scale;    /* then times route_scale (1 for gpt-oss) */
    double softcap;  /* z first capped to softcap tanh(z / softcap) (Laguna's
                      * moe_router_logit_softcapping; 0: none) */
} HfRouter;

typedef struct {
    HfFamily family;
    char arch[64]; /* "architectures"[0] */
    char model_type[64];
    int text_tower; /* the text model of a multimodal checkpoint (Gemma3ForConditionalGeneration):
                       its config under "text_config", its weights under language_model.model.
                       (transformers < 4.52) or model.language_model. */
    int L, d, H, Hkv, dh, ff, V, max_pos;
    /* Each layer's query heads (hf_layer_heads): Laguna's
     * num_attention_heads_per_layer, the sliding layers' own of Step-3.5
     * and MiMo; H every layer elsewhere. H is the largest, which the
     * buffers and a run's [L, H, ...] arrays are sized at; a layer's
     * recipe runs at its own count and its own KV heads (hf_layer,
     * layer_kv below), each layer's a multiple of its KV heads (H need
     * not be of Hkv) */
    int layer_heads[HF_MAX_LAYERS];
    /* Each layer's KV heads (hf_layer_kv; 0: Hkv, the largest, which the
     * buffers are sized at): MiMo's swa_num_key_value_heads. The value
     * head dim dv (hf_vdim; 0: dh): values and o_proj's input take dv per
     * head, attention runs on values zero-padded to dh. v_scale: values
     * times it before attention (MiMo's attention_value_scale; 0: none) */
    int layer_kv[HF_MAX_LAYERS];
    int dv;
    float v_scale;
    double eps;
    int rms; /* RMSNorm, else LayerNorm with bias */
    HfAct act;
    int glu;        /* gate_proj/up_proj/down_proj (SwiGLU) */
    int rotary_dim; /* 0: learned positions (GPT-2) */
    double rope_theta;
    HfRope rope_type;                  /* rope_parameters' (v5) or rope_scaling's rope_type */
    double rs_factor;                  /* llama3, yarn, linear (inv_freq / factor) */
    double rs_low, rs_high;            /* llama3: low_freq_factor, high_freq_factor */
    int rs_orig;                       /* llama3, yarn: original_max_position_embeddings */
    double rs_beta_fast, rs_beta_slow; /* yarn */
    int rs_truncate;                   /* yarn: ramp bounds to whole pairs */
    double rs_attn_factor;             /* yarn: q and k (cos, sin) times it */
    int qkv_bias, o_bias, mlp_bias;
    int qk_norm; /* per-head RMSNorm on q and k before RoPE
                    (1 yes, 2 when the checkpoint has the weights) */
    HfGate gate;
    /* The gate scores from a projection of their own (the layer's input
     * times self_attn.<gate_proj> [H * scores per head, d]; AFMoE's
     * gate_proj, Laguna's g_proj) rather than from q_proj's extra rows
     * (Qwen3), and softplus rather than sigmoid as their activation
     * (gate_softplus: Laguna); gate_label the gate's name in a run
     * (hf_gate_name) */
    char gate_proj[16];
    int gate_softplus;
    char gate_label[48];
    /* AFMoE: RoPE on the sliding layers only; the full-attention layers
     * see positions through the causal mask alone */
    int rope_sliding_only;
    /* The rotary dims of the sliding layers where they turn on a base of
     * their own (rope_local_theta) with a rotary fraction of their own
     * (Laguna); 0: rotary_dim */
    int rotary_dim_local;
    int tied;              /* lm head = token embedding */
    int parallel_residual; /* GPT-NeoX */
    int bos_id;            /* -1 when the config names none */
    /* Sliding-window attention (Mistral, Qwen2, Qwen3, Gemma): the keys a
     * sliding layer sees and how many layers slide, the last ones unless
     * sliding_period is set; 0 and 0 when none does. The forward masks
     * each layer by its own (hf_layer_window) */
    int sliding_window, sliding_layers;
    /* Gemma 2 and 3, and a Qwen layer_types of that form: layer l slides
     * when (l + 1) % sliding_period != 0; 0: the last sliding_layers slide */
    int sliding_period;
    /* MiMo's hybrid_layer_pattern, Step-3.5's layer_types: layer l
     * slides when layer_slides[l]
     * (slides_listed set; then sliding_period and the last sliding_layers
     * do not apply, sliding_layers counts them) */
    int slides_listed;
    unsigned char layer_slides[HF_MAX_LAYERS];
    /* Gemma: RMSNorm multiplies by (1 + w) (hf_weights binds 1 + w);
     * the embeddings times embed_scale (sqrt(hidden_size); 0: none);
     * attention logits times attn_scale (query_pre_attn_scalar^-1/2; 0:
     * 1/sqrt(dh)), then capped to cap tanh(s / cap) (attn_softcap; 0:
     * none); the LM head's logits likewise (final_softcap); the sliding
     * layers' RoPE base rope_local_theta (Gemma 3; 0: rope_theta on
     * every layer) */
    int norm_plus1;
    float embed_scale, attn_scale;
    double attn_softcap, final_softcap, rope_local_theta;
    /* gpt-oss: a learned sink logit per head joins each softmax (sinks).
     * Mixtures of experts (gpt-oss, AFMoE, Laguna; 0 experts elsewhere): the
     * layers from moe_from on have n_experts experts of moe_ff hidden
     * units, top_k of them per token, chosen and weighed by router; gpt-oss's
     * experts are fused gate_up tensors whose SwiGLU is clamped at layer
     * l's swiglu_limit[l] (the same on every layer) with sigmoid slope
     * swiglu_alpha; swiglu_alpha 0: the GLU of act on gate and up tensors
     * of their own (AFMoE, Laguna, Step-3.5), whose SwiGLU (act SiLU) on layer l is
     * min(silu(gate), c) * clamp(up, -c, c) for c = swiglu_limit[l] > 0
     * (0: no clamp), and likewise for c = swiglu_limit_shared[l] the MLP
     * that runs on every token: the shared experts of an MoE layer, the
     * dense MLP of a layer without experts (Step-3.5's
     * swiglu_limits_shared); the shared experts run on every token as one
     * GLU of shared_ff units (AFMoE: num_shared_experts * moe_ff; Laguna:
     * shared_expert_intermediate_size; 0: none) */
    int sinks, n_experts, top_k, moe_from, moe_ff, shared_ff;
    /* The layers with sink logits (hf_layer_sinks): 0 every one; else
     * HF_SINKS_SLIDING and / or HF_SINKS_FULL (MiMo's
     * add_swa_attention_sink_bias, add_full_attention_sink_bias) */
    int sinks_where;
    double swiglu_alpha;
    float swiglu_limit[HF_MAX_LAYERS], swiglu_limit_shared[HF_MAX_LAYERS];
    HfRouter router;
    char torch_dtype[32];
} HfArch;

/* Parse the JSON text of config.json (path only for messages). */
int hf_config_parse(HfArch *a, const char *json, size_t len, const char *path, char *err,
                    size_t errlen);
/* Read and parse DIR/config.json; *text (malloc'd, NUL-terminated) keeps
 * the file's bytes for the run file. */
int hf_config_load(HfArch *a, const char *dir, char **text, char *err, size_t errlen);

/* The window every layer attends under, as a run file's /config window
 * records it: the sliding window when every layer slides, else 0 (each
 * layer's own is /pretrained/layer_window, hf_layer_window's). */
int hf_record_window(const HfArch *a);

/* q_proj output rows (queries + gate scores for the gated variants) at
 * a->H heads. */
int hf_q_rows(const HfArch *a);
/* Layer l's query heads (a->H where no count of its own was read). */
int hf_layer_heads(const HfArch *a, int l);
/* Layer l's KV heads (a->Hkv where no count of its own was read). */
int hf_layer_kv(const HfArch *a, int l);
/* The value head dim: a->dv, or a->dh where none of its own was read. */
int hf_vdim(const HfArch *a);
/* 1 when layer l has sink logits (a->sinks, a->sinks_where). */
int hf_layer_sinks(const HfArch *a, int l);
/* 1 when some layer has fewer query heads than a->H. */
int hf_heads_vary(const HfArch *a);
/* 1 when some layers have sink logits and others not (hf_layer_sinks). */
int hf_sinks_vary(const HfArch *a);
/* Gate scores per head: dh (elementwise), 1 (headwise), 0. */
int hf_gate_per_head(const HfArch *a);
const char *hf_family_name(HfFamily f);
/* The architectures read, as config.json names them: "A, B, ..." into
 * buf[len] (for --help and the refusal of an unknown one). */
const char *hf_family_list(char *buf, size_t len);
/* The attention output gate's name in a run: Qwen3's as config.json
 * states it, "headwise" (headwise_attn_output_gate), "elementwise"
 * (elementwise_attn_output_gate) or "none"; a gate of its own projection
 * as "<projection>-<headwise|elementwise>-<sigmoid|softplus>" (AFMoE's
 * "gate_proj-elementwise-sigmoid", Laguna's "g_proj-headwise-softplus"). */
const char *hf_gate_name(const HfArch *a);
/* 1 when a and b differ in architecture or shape (the first difference in
 * what: "layers 1, not 2", a's value first), 0 when they agree. */
int hf_arch_diff(const HfArch *a, const HfArch *b, char *what, size_t len);

#endif
