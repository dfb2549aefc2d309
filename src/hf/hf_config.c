/* hf_config.c: config.json -> HfArch (jansson), with each family's
 * defaults as the Hugging Face config classes define them. */
#include "hf_config.h"
#include "hf_config_priv.h"

#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "util.h"

#define MAX_DIM (1 << 20)
#define MAX_VOCAB (1 << 24)

/* Each architecture read, its family, and for a multimodal one the key of
 * its text model's config (whose text tower alone is read). */
static const struct {
    const char *arch;
    HfFamily family;
    const char *text_config;
} ARCHS[] = {
    {"LlamaForCausalLM", HF_LLAMA, NULL},
    {"Qwen2ForCausalLM", HF_QWEN2, NULL},
    {"Qwen3ForCausalLM", HF_QWEN3, NULL},
    {"GPT2LMHeadModel", HF_GPT2, NULL},
    {"GPTNeoXForCausalLM", HF_NEOX, NULL},
    {"Olmo2ForCausalLM", HF_OLMO2, NULL},
    {"MistralForCausalLM", HF_MISTRAL, NULL},
    {"Phi3ForCausalLM", HF_PHI3, NULL},
    {"Gemma2ForCausalLM", HF_GEMMA2, NULL},
    {"Gemma3ForCausalLM", HF_GEMMA3, NULL},
    {"Gemma3ForConditionalGeneration", HF_GEMMA3, "text_config"},
    {"GptOssForCausalLM", HF_GPTOSS, NULL},
    {"AfmoeForCausalLM", HF_AFMOE, NULL},
    {"LagunaForCausalLM", HF_LAGUNA, NULL},
    {"Step3p5ForCausalLM", HF_STEP3P5, NULL},
    {"MiMoV2FlashForCausalLM", HF_MIMO, NULL},
};

/* Architectures refused with the reason rather than as unknown, each with
 * the family's name and why: the Qwen3-Next line interleaves
 * linear-attention layers (Gated DeltaNet), which have no attention map,
 * with its softmax attention layers. */
#define LINEAR_ATTN                                                                                \
    "its linear-attention layers (Gated DeltaNet) have no softmax attention map to measure"
static const struct {
    const char *arch;
    const char *family;
    const char *why;
} NOT_READ[] = {
    {"Qwen3NextForCausalLM", "Qwen3-Next", LINEAR_ATTN},
    {"Qwen3_5ForCausalLM", "Qwen3.5", LINEAR_ATTN},
    {"Qwen3_5ForConditionalGeneration", "Qwen3.5", LINEAR_ATTN},
    {"Qwen3_5MoeForCausalLM", "Qwen3.5", LINEAR_ATTN},
    {"Qwen3_5MoeForConditionalGeneration", "Qwen3.5", LINEAR_ATTN},
};

const char *hf_family_list(char *buf, size_t len) {
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof ARCHS / sizeof *ARCHS && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "", ARCHS[i].arch);
    return buf;
}

const char *hf_family_name(HfFamily f) {
    for (size_t i = 0; i < sizeof ARCHS / sizeof *ARCHS; i++)
        if (ARCHS[i].family == f) return ARCHS[i].arch;
    return "?";
}

const char *hf_gate_name(const HfArch *a) {
    if (a->gate_label[0]) return a->gate_label;
    return a->gate == HF_GATE_HEADWISE      ? "headwise"
           : a->gate == HF_GATE_ELEMENTWISE ? "elementwise"
                                            : "none";
}

static const char *get_str(Cfg *c, const char *key, const char *dflt) {
    json_t *v = json_object_get(c->root, key);
    return json_is_string(v) ? json_string_value(v) : dflt;
}

static int act_of(Cfg *c, const char *name, HfAct *out) {
    static const struct {
        const char *n;
        HfAct a;
    } T[] = {{"silu", HF_ACT_SILU},
             {"swish", HF_ACT_SILU},
             {"gelu_new", HF_ACT_GELU_TANH},
             {"gelu_fast", HF_ACT_GELU_TANH},
             {"gelu_pytorch_tanh", HF_ACT_GELU_TANH},
             {"gelu", HF_ACT_GELU_ERF},
             {"relu", HF_ACT_RELU}};
    for (size_t i = 0; i < sizeof T / sizeof *T; i++)
        if (!strcmp(name, T[i].n)) {
            *out = T[i].a;
            return 0;
        }
    c->failed = 1;
    char shown[44];
    return seterr(c->err, c->errlen, "%s: unsupported activation '%s'", c->path,
                  err_shown(shown, sizeof shown, name));
}

/* Number `key` of obj (named objname in the message), which the config
 * family defines no default for: a missing one is refused, naming the key,
 * where it was looked for and the file. */
static double req_num(Cfg *c, json_t *obj, const char *objname, const char *key) {
    json_t *v = json_object_get(obj, key);
    if (!c->failed && (!v || json_is_null(v))) {
        c->failed = 1;
        seterr(c->err, c->errlen, "%s: missing '%s' in %s", c->path, key, objname);
        return 0.0;
    }
    return cfg_num_in(c, obj, key, 0.0);
}

/* rope_parameters (v5): the object itself, or its "full_attention" entry
 * where it holds one per layer type (Gemma 3); NULL when absent. */
static json_t *rope_params(Cfg *c) {
    json_t *rp = json_object_get(c->root, "rope_parameters");
    json_t *full = json_object_get(rp, "full_attention");
    return json_is_object(full) ? full : json_is_object(rp) ? rp : NULL;
}

/* transformers v5 saves rope_theta and the scaling keys together in the
 * object rope_parameters; earlier versions save rope_theta (GPT-NeoX:
 * rotary_emb_base) at the top level and the scaling keys in rope_scaling.
 * The RoPE base: rope_parameters' rope_theta, else the first of the top
 * level's keys tops[n] (the last one rope_theta); none of them: the
 * family's default dflt, or when it has none (0) refused, naming each. */
static void rope_base(Cfg *c, HfArch *a, const char *const *tops, int n, double dflt) {
    json_t *rp = rope_params(c);
    if (c->failed) return;
    if (rp && json_object_get(rp, "rope_theta")) {
        a->rope_theta = cfg_num_in(c, rp, "rope_theta", 0.0);
        return;
    }
    for (int i = 0; i < n; i++)
        if (json_object_get(c->root, tops[i])) {
            a->rope_theta = cfg_num(c, tops[i], 0.0);
            return;
        }
    a->rope_theta = dflt;
    if (dflt > 0) return;
    c->failed = 1;
    seterr(c->err, c->errlen,
           "%s: missing 'rope_theta' (neither in rope_parameters nor at the top level%s%s%s)",
           c->path, n > 1 ? ", nor as '" : "", n > 1 ? tops[0] : "", n > 1 ? "'" : "");
}

static void rope_llama3(Cfg *c, HfArch *a, json_t *rs, const char *name) {
    a->rope_type = HF_ROPE_LLAMA3;
    a->rs_factor = req_num(c, rs, name, "factor");
    a->rs_low = req_num(c, rs, name, "low_freq_factor");
    a->rs_high = req_num(c, rs, name, "high_freq_factor");
    a->rs_orig = cfg_int_in(c, rs, name, "original_max_position_embeddings", -1, 1, 1 << 30);
    if (!c->failed && (a->rs_factor <= 0 || a->rs_high <= a->rs_low)) {
        c->failed = 1;
        seterr(c->err, c->errlen, "%s: %s llama3 parameters are inconsistent", c->path, name);
    }
}

/* YaRN as transformers' _compute_yarn_parameters reads it: factor
 * required; original_max_position_embeddings defaults to
 * max_position_embeddings, beta_fast to 32, beta_slow to 1, truncate to
 * true; the attention factor is attention_factor when given, else from
 * mscale and mscale_all_dim when both are nonzero, else 0.1 ln(factor) + 1
 * (yarn_attention_factor). */
static void rope_yarn(Cfg *c, HfArch *a, json_t *rs, const char *name) {
    a->rope_type = HF_ROPE_YARN;
    a->rs_factor = req_num(c, rs, name, "factor");
    a->rs_orig =
        cfg_int_in(c, rs, name, "original_max_position_embeddings", a->max_pos, 1, 1 << 30);
    a->rs_beta_fast = cfg_num_in(c, rs, "beta_fast", 32.0);
    a->rs_beta_slow = cfg_num_in(c, rs, "beta_slow", 1.0);
    json_t *tr = json_object_get(rs, "truncate");
    a->rs_truncate = !json_is_false(tr);
    double ms = cfg_num_in(c, rs, "mscale", 0.0), msa = cfg_num_in(c, rs, "mscale_all_dim", 0.0);
    a->rs_attn_factor = ms != 0.0 && msa != 0.0
                            ? yarn_attention_factor((float)a->rs_factor, (float)ms) /
                                  yarn_attention_factor((float)a->rs_factor, (float)msa)
                            : yarn_attention_factor((float)a->rs_factor, 1.0f);
    a->rs_attn_factor = cfg_num_in(c, rs, "attention_factor", a->rs_attn_factor);
    if (!c->failed && (tr && !json_is_boolean(tr) && !json_is_null(tr))) {
        c->failed = 1;
        seterr(c->err, c->errlen, "%s: '%s' in %s must be true or false", c->path, "truncate",
               name);
    } else if (!c->failed && (!(a->rs_factor >= 1) ||
                              !(a->rs_beta_fast > a->rs_beta_slow && a->rs_beta_slow > 0) ||
                              !(a->rs_attn_factor > 0))) {
        c->failed = 1;
        seterr(c->err, c->errlen,
               "%s: %s yarn parameters are inconsistent (need factor >= 1, "
               "beta_fast > beta_slow > 0, attention_factor > 0)",
               c->path, name);
    }
}

/* RoPE scaling from rope_parameters (v5), else rope_scaling: absent, null
 * or rope_type "default" is plain RoPE; llama3 and yarn are read; any
 * other type is refused. */
static void rope_scaling(Cfg *c, HfArch *a) {
    json_t *rp = rope_params(c);
    const char *name = rp ? "rope_parameters" : "rope_scaling";
    json_t *rs = rp ? rp : json_object_get(c->root, name);
    a->rope_type = HF_ROPE_PLAIN;
    if (c->failed || !rs || json_is_null(rs)) return;
    json_t *ty = json_object_get(rs, "rope_type");
    if (!ty) ty = json_object_get(rs, "type");
    const char *t = json_is_string(ty) ? json_string_value(ty) : "?";
    if (json_is_object(rs) && !strcmp(t, "default")) return;
    if (json_is_object(rs) && !strcmp(t, "llama3")) return rope_llama3(c, a, rs, name);
    if (json_is_object(rs) && !strcmp(t, "yarn")) return rope_yarn(c, a, rs, name);
    if (json_is_object(rs) && !strcmp(t, "linear")) {
        a->rope_type = HF_ROPE_LINEAR;
        a->rs_factor = req_num(c, rs, name, "factor");
        if (!c->failed && !(a->rs_factor > 0)) {
            c->failed = 1;
            seterr(c->err, c->errlen, "%s: %s linear factor must be > 0", c->path, name);
        }
        return;
    }
    c->failed = 1;
    char shown[44];
    if (!strcmp(t, "longrope") || !strcmp(t, "su")) {
        seterr(c->err, c->errlen,
               "%s: %s type '%s' (the long-context RoPE scaling of Phi-3's 128k models) is not "
               "supported: only plain RoPE (null, default), linear, llama3 or yarn scaling is read",
               c->path, name, t);
        return;
    }
    seterr(c->err, c->errlen,
           "%s: %s rope_type '%s' is not supported (default, linear, llama3, yarn)", c->path, name,
           err_shown(shown, sizeof shown, t));
}

/* Which of Qwen's layers slide under layer_types (a layer slides where
 * it is "sliding_attention"): the last ones (sliding_layers), or every
 * layer but each p-th (sliding_period p); another pattern is refused. */
static void qwen_layer_types(Cfg *c, HfArch *a, const json_t *lt) {
    int n = 0, first = -1, period = 0;
    for (int l = 0; l < a->L; l++) {
        const char *t = json_string_value(json_array_get(lt, (size_t)l));
        int slides = t && !strcmp(t, "sliding_attention");
        n += slides;
        if (slides && first < 0) first = l;
        if (!slides && !period) period = l + 1;
    }
    a->sliding_layers = n;
    if (!n || first == a->L - n) return;
    for (int l = 0; l < a->L && period > 1; l++) {
        const char *t = json_string_value(json_array_get(lt, (size_t)l));
        if ((t && !strcmp(t, "sliding_attention")) != ((l + 1) % period != 0)) period = 0;
    }
    if (period > 1) a->sliding_period = period;
    else
        c->failed = 1,
        seterr(c->err, c->errlen,
               "%s: layer_types slides layers in a pattern gatelab cannot mask: write "
               "sliding_attention on the last layers, or on all but every p-th layer",
               c->path);
}

/* Sliding-window attention as transformers' Qwen2 and Qwen3 configs
 * define it: sliding_window counts only under use_sliding_window (default
 * false), and the layers that slide are those layer_types names
 * "sliding_attention" (qwen_layer_types), else (no layer_types) those
 * from max_window_layers (default 28) on. Other families have no sliding
 * layer. */
static void sliding(Cfg *c, HfArch *a) {
    if (a->family != HF_QWEN2 && a->family != HF_QWEN3) return;
    int use = cfg_bool(c, "use_sliding_window", 0);
    int W = cfg_int(c, "sliding_window", 0, 0, 1 << 30);
    if (c->failed || !use || W < 1) return;
    json_t *lt = json_object_get(c->root, "layer_types");
    if (json_is_array(lt)) qwen_layer_types(c, a, lt);
    else {
        int from = cfg_int(c, "max_window_layers", 28, 0, 1 << 30);
        a->sliding_layers = a->L > from ? a->L - from : 0;
    }
    a->sliding_window = a->sliding_layers ? W : 0;
    if (!a->sliding_window) a->sliding_period = 0;
}

/* The sizes a config may leave out, as its family's config class defaults
 * them: none for most families (-1: the key is required; Hkv 0: as many as
 * the heads; rope_theta 0: required); Gemma3TextConfig (transformers
 * v4.50), AfmoeConfig, LagunaConfig and Step3p7TextConfig default every one, and the published
 * multimodal Gemma 3 configs leave some out (gemma-3-4b's text_config gives no head counts). */
typedef struct {
    int d, L, H, Hkv, ff, V, max_pos;
    double rope_theta;
} SizeDefaults;

static const SizeDefaults REQUIRED = {-1, -1, -1, 0, -1, -1, 2048, 0.0};
static const SizeDefaults GEMMA3_TEXT = {2304, 26, 8, 4, 9216, 262208, 131072, 1e6};
/* AfmoeConfig (configuration_afmoe.py, transformers commit 4e4671e) */
static const SizeDefaults AFMOE = {2048, 32, 16, 0, 6144, 200192, 16384, 10000.0};
/* LagunaConfig (configuration_laguna.py; the full-attention layers' base) */
static const SizeDefaults LAGUNA = {2048, 40, 48, 8, 8192, 100352, 131072, 500000.0};
/* Step3p7TextConfig (transformers' modular_step3p7.py) */
static const SizeDefaults STEP3P5 = {4096, 45, 64, 8, 11264, 128815, 128000, 10000.0};

/* Llama, Qwen2, Qwen3 (and the gated Qwen3 variants). */
void cfg_llama_like(Cfg *c, HfArch *a) {
    const SizeDefaults *z = a->family == HF_GEMMA3    ? &GEMMA3_TEXT
                            : a->family == HF_AFMOE   ? &AFMOE
                            : a->family == HF_LAGUNA  ? &LAGUNA
                            : a->family == HF_STEP3P5 ? &STEP3P5
                                                      : &REQUIRED;
    a->d = cfg_int(c, "hidden_size", z->d, 1, MAX_DIM);
    a->L = cfg_int(c, "num_hidden_layers", z->L, 1, HF_MAX_LAYERS);
    a->H = cfg_int(c, "num_attention_heads", z->H, 1, 4096);
    a->Hkv = cfg_int(c, "num_key_value_heads", z->Hkv ? z->Hkv : a->H, 1, 4096);
    int dh_default = a->family == HF_QWEN3 ? 128 : (a->H ? a->d / a->H : 1);
    a->dh = cfg_int(c, "head_dim", dh_default, 1, MAX_DIM);
    a->ff = cfg_int(c, "intermediate_size", z->ff, 1, MAX_DIM);
    a->V = cfg_int(c, "vocab_size", z->V, 1, MAX_VOCAB);
    a->max_pos = cfg_int(c, "max_position_embeddings", z->max_pos, 1, 1 << 30);
    a->eps = cfg_num(c, "rms_norm_eps", 1e-6);
    a->rms = 1;
    a->glu = 1;
    if (!c->failed) act_of(c, get_str(c, "hidden_act", "silu"), &a->act);
    a->rotary_dim = a->dh;
    static const char *const theta[] = {"rope_theta"};
    /* Step-3.5's rope_theta may be a per-layer list (cfg_step3p5) */
    rope_base(c, a, theta, a->family == HF_STEP3P5 ? 0 : 1, z->rope_theta);
    rope_scaling(c, a);
    int ab = cfg_bool(c, "attention_bias", 0);
    a->qkv_bias = a->family == HF_QWEN2 ? 1 : ab || cfg_bool(c, "qkv_bias", 0);
    a->o_bias = a->family == HF_QWEN2 ? 0 : ab;
    a->mlp_bias = cfg_bool(c, "mlp_bias", 0);
    /* Qwen3: 2 = q_norm/k_norm used when the checkpoint has them */
    a->qk_norm = a->family == HF_QWEN3 ? cfg_bool(c, "use_qk_norm", 2) : 0;
    int hw = cfg_bool(c, "headwise_attn_output_gate", 0);
    int ew = cfg_bool(c, "elementwise_attn_output_gate", 0);
    if (hw && ew && !c->failed) {
        c->failed = 1;
        seterr(c->err, c->errlen,
               "%s: headwise_attn_output_gate and elementwise_attn_output_gate are both set",
               c->path);
    }
    a->gate = hw ? HF_GATE_HEADWISE : ew ? HF_GATE_ELEMENTWISE : HF_GATE_NONE;
    a->tied = cfg_bool(c, "tie_word_embeddings", 0);
    sliding(c, a);
}

static void parse_gpt2(Cfg *c, HfArch *a) {
    a->d = cfg_int(c, "n_embd", -1, 1, MAX_DIM);
    a->L = cfg_int(c, "n_layer", -1, 1, HF_MAX_LAYERS);
    a->H = a->Hkv = cfg_int(c, "n_head", -1, 1, 4096);
    a->dh = a->H ? a->d / a->H : 1;
    a->ff = cfg_int(c, "n_inner", 4LL * a->d, 1, MAX_DIM);
    a->V = cfg_int(c, "vocab_size", -1, 1, MAX_VOCAB);
    a->max_pos = cfg_int(c, "n_positions", -1, 1, 1 << 24);
    a->eps = cfg_num(c, "layer_norm_epsilon", 1e-5);
    if (!c->failed) act_of(c, get_str(c, "activation_function", "gelu_new"), &a->act);
    a->qkv_bias = a->o_bias = a->mlp_bias = 1;
    a->tied = cfg_bool(c, "tie_word_embeddings", 1);
    if (!c->failed &&
        (cfg_bool(c, "scale_attn_by_inverse_layer_idx", 0) ||
         cfg_bool(c, "reorder_and_upcast_attn", 0) || !cfg_bool(c, "scale_attn_weights", 1))) {
        c->failed = 1;
        seterr(c->err, c->errlen,
               "%s: GPT-2 attention options scale_attn_by_inverse_layer_idx, "
               "reorder_and_upcast_attn and scale_attn_weights=false are not supported",
               c->path);
    }
}

/* The rotary dims of each head, int(dh * fraction) as transformers'
 * default RoPE takes them: the fraction is rope_parameters'
 * partial_rotary_factor (v5), else the top level's key `top` (GPT-NeoX
 * rotary_pct, Phi-3 partial_rotary_factor), else dflt; one outside [0, 1]
 * is refused, naming the key. */
static void rotary_part(Cfg *c, HfArch *a, const char *top, double dflt) {
    json_t *rp = json_object_get(c->root, "rope_parameters");
    int in_rp = json_is_object(rp) && json_object_get(rp, "partial_rotary_factor");
    double f = in_rp ? cfg_num_in(c, rp, "partial_rotary_factor", dflt) : cfg_num(c, top, dflt);
    a->rotary_dim = f >= 0 && f <= 1 ? (int)(a->dh * f) : 0;
    if (!c->failed && !(f >= 0 && f <= 1)) {
        c->failed = 1;
        seterr(c->err, c->errlen, "%s: %s must be in [0, 1]", c->path,
               in_rp ? "partial_rotary_factor" : top);
    }
}

static void parse_neox(Cfg *c, HfArch *a) {
    a->d = cfg_int(c, "hidden_size", -1, 1, MAX_DIM);
    a->L = cfg_int(c, "num_hidden_layers", -1, 1, HF_MAX_LAYERS);
    a->H = a->Hkv = cfg_int(c, "num_attention_heads", -1, 1, 4096);
    a->dh = a->H ? a->d / a->H : 1;
    a->ff = cfg_int(c, "intermediate_size", -1, 1, MAX_DIM);
    a->V = cfg_int(c, "vocab_size", -1, 1, MAX_VOCAB);
    a->max_pos = cfg_int(c, "max_position_embeddings", 2048, 1, 1 << 30);
    a->eps = cfg_num(c, "layer_norm_eps", 1e-5);
    if (!c->failed) act_of(c, get_str(c, "hidden_act", "gelu"), &a->act);
    rotary_part(c, a, "rotary_pct", 0.25);
    static const char *const theta[] = {"rotary_emb_base", "rope_theta"};
    rope_base(c, a, theta, 2, 0.0);
    rope_scaling(c, a);
    a->qkv_bias = a->o_bias = cfg_bool(c, "attention_bias", 1);
    a->mlp_bias = 1;
    a->parallel_residual = cfg_bool(c, "use_parallel_residual", 1);
    a->tied = cfg_bool(c, "tie_word_embeddings", 0);
}

/* sliding_window as MistralConfig and Phi3Config define it: a window on
 * every layer, dflt keys when the key is absent (0: none), none when it
 * is null. */
static void every_layer_window(Cfg *c, HfArch *a, int dflt) {
    json_t *sw = json_object_get(c->root, "sliding_window");
    a->sliding_window = !sw                ? dflt
                        : json_is_null(sw) ? 0
                                           : cfg_int(c, "sliding_window", 0, 1, 1 << 30);
    a->sliding_layers = a->sliding_window ? a->L : 0;
}

/* OLMo 2, Mistral and Phi-3 read parse_llama_like's keys, then these,
 * with their config classes' defaults (transformers Olmo2Config,
 * MistralConfig, Phi3Config): OLMo 2's rms_norm_eps defaults to 1e-5;
 * Mistral's sliding_window to 4096; Phi-3's rms_norm_eps to 1e-5, its
 * sliding_window to none, its partial_rotary_factor to 1, and its
 * projections carry no biases (modeling_phi3.py builds them bias-free). */
static void parse_olmo2_mistral_phi3(Cfg *c, HfArch *a) {
    if (a->family == HF_OLMO2) {
        a->eps = cfg_num(c, "rms_norm_eps", 1e-5);
    } else if (a->family == HF_MISTRAL) {
        every_layer_window(c, a, 4096);
    } else {
        a->eps = cfg_num(c, "rms_norm_eps", 1e-5);
        every_layer_window(c, a, 0);
        rotary_part(c, a, "partial_rotary_factor", 1.0);
        a->qkv_bias = a->o_bias = a->mlp_bias = 0;
    }
}

/* Gemma 2 and Gemma 3 (text) after parse_llama_like, as Gemma2Config and
 * Gemma3TextConfig define them (transformers v4.50): the MLP's
 * activation hidden_activation (gelu_pytorch_tanh); head_dim 256; tied
 * embeddings; RMSNorm by (1 + w); embeddings times sqrt(hidden_size);
 * logits scaled by query_pre_attn_scalar^-1/2 (256); the soft caps
 * attn_logit_softcapping and final_logit_softcapping (Gemma 2: 50 and
 * 30; Gemma 3: none; null: none); sliding_window (4096; null: none) on
 * the layers gemma_layers finds, every second one full (Gemma 2) or
 * every sliding_window_pattern-th (Gemma 3: 6); Gemma 3's sliding layers
 * turn by rope_local_base_freq (10000; v5: rope_parameters'
 * sliding_attention rope_theta), its q_norm / k_norm per head. */
static void parse_gemma(Cfg *c, HfArch *a) {
    const int g2 = a->family == HF_GEMMA2;
    if (!c->failed) act_of(c, get_str(c, "hidden_activation", "gelu_pytorch_tanh"), &a->act);
    a->dh = a->rotary_dim = cfg_int(c, "head_dim", 256, 1, MAX_DIM);
    a->tied = cfg_bool(c, "tie_word_embeddings", 1);
    a->norm_plus1 = 1;
    a->embed_scale = sqrtf((float)a->d);
    a->attn_scale = (float)(1.0 / sqrt(cfg_num(c, "query_pre_attn_scalar", 256.0)));
    json_t *ac = json_object_get(c->root, "attn_logit_softcapping");
    json_t *fc = json_object_get(c->root, "final_logit_softcapping");
    a->attn_softcap = json_is_null(ac) ? 0.0 : cfg_num(c, "attn_logit_softcapping", g2 ? 50.0 : 0);
    a->final_softcap =
        json_is_null(fc) ? 0.0 : cfg_num(c, "final_logit_softcapping", g2 ? 30.0 : 0);
    json_t *sw = json_object_get(c->root, "sliding_window");
    a->sliding_window = json_is_null(sw) ? 0 : cfg_int(c, "sliding_window", 4096, 1, 1 << 30);
    cfg_layer_types(c, a, g2 ? 2 : cfg_int(c, "sliding_window_pattern", 6, 1, 1 << 30));
    a->qk_norm = g2 ? 0 : 1;
    if (!g2) {
        json_t *loc =
            json_object_get(json_object_get(c->root, "rope_parameters"), "sliding_attention");
        a->rope_local_theta = json_is_object(loc) ? cfg_num_in(c, loc, "rope_theta", 10000.0)
                                                  : cfg_num(c, "rope_local_base_freq", 10000.0);
    }
    if (!c->failed && (!(a->attn_scale > 0) || a->attn_softcap < 0 || a->final_softcap < 0 ||
                       (!g2 && !(a->rope_local_theta > 1)))) {
        c->failed = 1;
        seterr(c->err, c->errlen,
               "%s: query_pre_attn_scalar must be > 0, the soft caps >= 0 (or null) and "
               "rope_local_base_freq > 1",
               c->path);
    }
}

static int check_dims(Cfg *c, HfArch *a) {
    if (c->failed) return -1;
    /* every size derived by multiplying (the attention's rows) stays an int */
    long long rows = (long long)a->H * (2LL * a->dh);
    if (rows > MAX_DIM)
        return seterr(c->err, c->errlen,
                      "%s: %d heads x head_dim %d give %lld attention rows (with a gate), over "
                      "the %d this reads",
                      c->path, a->H, a->dh, rows, MAX_DIM);
    if ((a->family == HF_GPT2 || a->family == HF_NEOX) && a->H * a->dh != a->d)
        return seterr(c->err, c->errlen, "%s: hidden size %d is not divisible by %d heads", c->path,
                      a->d, a->H);
    if (cfg_check_heads(c, a) < 0) return -1;
    if (a->rotary_dim % 2)
        return seterr(c->err, c->errlen, "%s: rotary dimension %d is odd", c->path, a->rotary_dim);
    if (!(a->eps >= 0 && a->eps < 1))
        return seterr(c->err, c->errlen, "%s: norm epsilon %g out of range", c->path, a->eps);
    if (a->rotary_dim && !(a->rope_theta > 1))
        return seterr(c->err, c->errlen, "%s: rope base %g must be > 1", c->path, a->rope_theta);
    return 0;
}

/* The family of config.json's first architecture into a->family (and
 * *tower, the key of its text model's config, or NULL); -1 with one line
 * for an architecture not read. */
static int family_of(Cfg *c, HfArch *a, const char **tower) {
    json_t *ar = json_object_get(c->root, "architectures");
    json_t *v = json_is_array(ar) ? json_array_get(ar, 0) : NULL;
    if (!json_is_string(v))
        return seterr(c->err, c->errlen, "%s: no \"architectures\" list naming the model class",
                      c->path);
    snprintf(a->arch, sizeof a->arch, "%s", json_string_value(v));
    for (size_t i = 0; i < sizeof ARCHS / sizeof *ARCHS; i++)
        if (!strcmp(a->arch, ARCHS[i].arch)) {
            a->family = ARCHS[i].family;
            *tower = ARCHS[i].text_config;
            return 0;
        }
    char shown[sizeof a->arch + 4], list[400];
    for (size_t i = 0; i < sizeof NOT_READ / sizeof *NOT_READ; i++)
        if (!strcmp(a->arch, NOT_READ[i].arch))
            return seterr(c->err, c->errlen, "%s: %s (%s) is not read: %s (supported: %s)", c->path,
                          a->arch, NOT_READ[i].family, NOT_READ[i].why,
                          hf_family_list(list, sizeof list));
    return seterr(c->err, c->errlen, "%s: unknown architecture '%s' (supported: %s)", c->path,
                  err_shown(shown, sizeof shown, a->arch), hf_family_list(list, sizeof list));
}

int hf_config_parse(HfArch *a, const char *json, size_t len, const char *path, char *err,
                    size_t errlen) {
    memset(a, 0, sizeof *a);
    json_error_t je;
    Cfg c = {json_loadb(json, len, JSON_REJECT_DUPLICATES, &je), path, err, errlen, 0};
    if (!json_is_object(c.root)) {
        int rc = seterr(err, errlen, "%s: not a JSON object (%s)", path,
                        c.root ? "" : one_line(je.text));
        json_decref(c.root);
        return rc;
    }
    const char *tower = NULL;
    json_t *top = c.root;
    int rc = family_of(&c, a, &tower);
    if (rc == 0 && tower) { /* the text model's own config, with the checkpoint's dtype */
        snprintf(a->torch_dtype, sizeof a->torch_dtype, "%s", get_str(&c, "torch_dtype", ""));
        c.root = json_object_get(top, tower);
        a->text_tower = 1;
        if (!json_is_object(c.root))
            rc = seterr(err, errlen, "%s: %s has no \"%s\" object (its text model's config)", path,
                        a->arch, tower);
    }
    if (rc == 0) {
        snprintf(a->model_type, sizeof a->model_type, "%s", get_str(&c, "model_type", ""));
        const char *dt = get_str(&c, "torch_dtype", NULL); /* else the top level's */
        if (dt) snprintf(a->torch_dtype, sizeof a->torch_dtype, "%s", dt);
        a->bos_id = cfg_int(&c, "bos_token_id", a->family == HF_GEMMA3 ? 2 : -1, -1, MAX_VOCAB);
        if (a->family == HF_GPT2) parse_gpt2(&c, a);
        else if (a->family == HF_NEOX) parse_neox(&c, a);
        else cfg_llama_like(&c, a);
        if (a->family == HF_OLMO2 || a->family == HF_MISTRAL || a->family == HF_PHI3)
            parse_olmo2_mistral_phi3(&c, a);
        if (a->family == HF_GEMMA2 || a->family == HF_GEMMA3) parse_gemma(&c, a);
        if (a->family == HF_GPTOSS) cfg_gptoss(&c, a);
        if (a->family == HF_AFMOE) cfg_afmoe(&c, a);
        if (a->family == HF_LAGUNA) cfg_laguna(&c, a);
        if (a->family == HF_STEP3P5) cfg_step3p5(&c, a);
        if (a->family == HF_MIMO) cfg_mimo(&c, a);
        rc = check_dims(&c, a);
    }
    json_decref(top);
    return rc;
}

int hf_config_load(HfArch *a, const char *dir, char **text, char *err, size_t errlen) {
    char path[4096];
    snprintf(path, sizeof path, "%s/config.json", dir);
    *text = NULL;
    if (input_check(path, err, errlen) < 0)
        return seterr(err, errlen, "%s: cannot open (is %s a Hugging Face snapshot?)", path, dir);
    size_t n;
    char *buf = input_slurp(path, (size_t)16 << 20, &n, err, errlen);
    if (!buf) return -1;
    if (hf_config_parse(a, buf, n, path, err, errlen) < 0) {
        free(buf);
        return -1;
    }
    *text = buf;
    return 0;
}

int hf_record_window(const HfArch *a) {
    return a->sliding_window > 0 && a->sliding_layers == a->L ? a->sliding_window : 0;
}

int hf_gate_per_head(const HfArch *a) {
    return a->gate == HF_GATE_ELEMENTWISE ? a->dh : a->gate == HF_GATE_HEADWISE ? 1 : 0;
}

int hf_q_rows(const HfArch *a) {
    return a->H * (a->dh + (a->gate_proj[0] ? 0 : hf_gate_per_head(a)));
}

int hf_layer_heads(const HfArch *a, int l) {
    return l >= 0 && l < a->L && a->layer_heads[l] ? a->layer_heads[l] : a->H;
}

int hf_heads_vary(const HfArch *a) {
    for (int l = 0; l < a->L; l++)
        if (hf_layer_heads(a, l) != a->H) return 1;
    return 0;
}

int hf_arch_diff(const HfArch *a, const HfArch *b, char *what, size_t len) {
    if (strcmp(a->arch, b->arch)) {
        snprintf(what, len, "architecture %s, not %s", a->arch, b->arch);
        return 1;
    }
    if (strcmp(a->model_type, b->model_type)) {
        snprintf(what, len, "model_type %s, not %s", a->model_type, b->model_type);
        return 1;
    }
    if (strcmp(hf_gate_name(a), hf_gate_name(b))) {
        snprintf(what, len, "gate %s, not %s", hf_gate_name(a), hf_gate_name(b));
        return 1;
    }
    const struct {
        const char *name;
        int x, y;
    } f[] = {{"layers", a->L, b->L},
             {"hidden size", a->d, b->d},
             {"heads", a->H, b->H},
             {"kv heads", a->Hkv, b->Hkv},
             {"head dim", a->dh, b->dh},
             {"value head dim", hf_vdim(a), hf_vdim(b)},
             {"ffn size", a->ff, b->ff},
             {"vocabulary", a->V, b->V},
             {"positions", a->max_pos, b->max_pos},
             {"rotary dims", a->rotary_dim, b->rotary_dim},
             {"sliding layers' rotary dims", a->rotary_dim_local, b->rotary_dim_local},
             {"sliding window", a->sliding_window, b->sliding_window},
             {"sliding layers", a->sliding_layers, b->sliding_layers},
             {"sliding period", a->sliding_period, b->sliding_period},
             {"(1 + w) norms", a->norm_plus1, b->norm_plus1},
             {"activation", (int)a->act, (int)b->act},
             {"glu", a->glu, b->glu},
             {"rmsnorm", a->rms, b->rms},
             {"tied head", a->tied, b->tied},
             {"parallel residual", a->parallel_residual, b->parallel_residual},
             {"sink logits", a->sinks, b->sinks},
             {"experts", a->n_experts, b->n_experts},
             {"experts per token", a->top_k, b->top_k}};
    for (size_t i = 0; i < sizeof f / sizeof *f; i++)
        if (f[i].x != f[i].y) {
            snprintf(what, len, "%s %d, not %d", f[i].name, f[i].x, f[i].y);
            return 1;
        }
    for (int l = 0; l < a->L; l++)
        if (hf_layer_heads(a, l) != hf_layer_heads(b, l) ||
            hf_layer_kv(a, l) != hf_layer_kv(b, l)) {
            snprintf(what, len, "layer %d's heads %d/%d, not %d/%d", l, hf_layer_heads(a, l),
                     hf_layer_kv(a, l), hf_layer_heads(b, l), hf_layer_kv(b, l));
            return 1;
        }
    for (int l = 0; l < a->L; l++) /* a listed pattern (slides_listed) */
        if ((a->slides_listed && a->layer_slides[l]) != (b->slides_listed && b->layer_slides[l])) {
            snprintf(what, len, "layer %d's attention %s, not %s", l,
                     a->layer_slides[l] ? "sliding" : "full",
                     b->layer_slides[l] ? "sliding" : "full");
            return 1;
        }
    return 0;
}
