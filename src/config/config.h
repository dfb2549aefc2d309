/* config.h: every hyperparameter of a run, resolved from a preset INI file,
 * an optional variant id, and --set key=value overrides.
 *
 * A gate variant is data: the enums below plus its parameters in the arena.
 * The catalog of named ids (variants.c) only fills these fields in.
 */
#ifndef GATELAB_CONFIG_H
#define GATELAB_CONFIG_H

#include <stddef.h>
#include <stdio.h>

/* Most transformer blocks a config may ask for; model.h's MAX_LAYERS
 * (the weight table) is the same number, asserted in params.c. */
#define CONFIG_MAX_LAYERS 64
/* The most shards a training batch may be cut into (config key shards). */
#define CONFIG_MAX_SHARDS 256

/* Most learned tokens sink_token may prepend (register tokens). */
#define CONFIG_MAX_REGISTERS 16

#define CFG_STR 256 /* every string field is bounded; longer input is refused */

typedef enum { NORM_RMS = 0, NORM_LAYER } NormKind;
/* POS_NONE is NoPE (no positional encoding); POS_ALIBI adds ALiBi's
 * head-specific linear biases to the attention scores (docs/variants.md). */
typedef enum { POS_ROPE = 0, POS_LEARNED, POS_NONE, POS_ALIBI } PosKind;
/* Which layers a sliding window (Config.window) applies to: every layer,
 * or the even-indexed ones with full causal attention on the odd ones. */
typedef enum { WINLAYERS_ALL = 0, WINLAYERS_ALTERNATE } WindowLayers;
/* Where each sub-layer's norm sits (docs/MODEL.md "Norm placement"):
 * before it (pre), after the residual add (post), or both before the
 * sub-layer and on its output before the add (sandwich). */
typedef enum { NORMPLACE_PRE = 0, NORMPLACE_POST, NORMPLACE_SANDWICH } NormPlace;
typedef enum { MLP_SWIGLU = 0, MLP_GELU } MlpKind;

/* Where a gate sits (Qiu et al. Fig. 1). */
typedef enum {
    GATE_NONE = 0,
    GATE_G1, /* SDPA output Y, before W_O */
    GATE_G2, /* value projection output V */
    GATE_G3, /* key projection output K (before QK-norm and RoPE) */
    GATE_G4, /* query projection output Q (before QK-norm and RoPE) */
    GATE_G5  /* dense output O, after W_O */
} GatePos;
typedef enum { GRAN_ELEM = 0, GRAN_HEAD } GateGran;
typedef enum { FORM_MULT = 0, FORM_ADD } GateForm;
/* ACT_2SIGMOID: 2 sigmoid(z), 1 at z = 0 (scores in [0, 2]); ACT_SOFTPLUS:
 * ln(1 + e^z) (scores in [0, inf)). docs/variants.md defines both. */
typedef enum {
    ACT_SIGMOID = 0,
    ACT_SILU,
    ACT_IDENTITY,
    ACT_NS_SIGMOID,
    ACT_2SIGMOID,
    ACT_SOFTPLUS,
    GATE_ACT_COUNT
} GateAct;

/* What a gate activation's scores are: bounded, in [0, 1] (the probe's
 * histogram and sparsity read them as such); mult_only, meaningful only
 * multiplying (gate_form add refuses it). */
typedef struct {
    const char *name; /* the gate_act key's name of it */
    unsigned char bounded, mult_only;
} GateActRow;
extern const GateActRow GATE_ACTS[GATE_ACT_COUNT];
/* How the gate's weight matrix starts: the model's normal init, or zeros
 * (with 2sigmoid, an identity gate at step 0). */
typedef enum { GINIT_NORMAL = 0, GINIT_ZERO } GateInit;
/* What the gate reads. FULL: all of X (d_model -> channels).
 * HEADSLICE: head h reads only its d_model/H slice of X, plus a bias
 * (head-gate-linear). CONST: an input-independent theta (g1-const). */
typedef enum { GIN_FULL = 0, GIN_HEADSLICE, GIN_CONST } GateInput;

/* The attention normaliser, softmax or a sink remedy (variants.md C). */
typedef enum {
    NORMZ_SOFTMAX = 0,
    NORMZ_SOFTMAX1,   /* e^s / (1 + sum e^s) */
    NORMZ_SINK_LOGIT, /* e^s / (e^{b_h} + sum e^s) */
    NORMZ_CLIPPED,    /* clip((zeta-gamma) softmax + gamma, 0, 1) */
    NORMZ_SIGMOID,    /* sigma(s - log T) */
    NORMZ_SOFTPICK,   /* relu(e^s - 1) / (sum |e^s - 1| + eps) */
    NORMZ_STICKBREAK  /* sigma(s_tj) prod_{j<k<=t} (1 - sigma(s_tk)) */
} AttnNormaliser;

/* A parameter-free change to Y itself (Table 3). */
typedef enum { YMOD_NONE = 0, YMOD_RMSNORM, YMOD_SILU } YMod;

typedef enum { DATA_BROWN = 0, DATA_TOKENS, DATA_BIGRAM, DATA_TEXT } DataSource;

/* What scales the decoupled weight decay (docs/MODEL.md, Optimiser): the
 * step's lr (decay lr_t * wd, torch.optim.AdamW's), or the schedule alone
 * (decay wd * lr_t / lr, Loshchilov & Hutter 2019, Algorithm 2). */
typedef enum { WD_SCALE_LR = 0, WD_SCALE_FIXED } WdScale;

typedef struct {
    /* --- model --- */
    int n_layers;
    int d_model;
    int n_heads;
    int n_kv_heads; /* GQA when < n_heads; must divide n_heads */
    int head_dim;   /* 0 means d_model / n_heads */
    int d_ff;       /* MLP hidden size */
    int vocab_size; /* resolved from the data source; 257 for bytes + BOS */
    int seq_len;    /* training length T */
    int max_pos;    /* learned-position table size (>= every length used) */
    NormKind norm;
    PosKind pos;
    MlpKind mlp;
    float rope_base;
    float yarn_scale; /* 1 = plain RoPE */
    /* context extension (config_derive.h config_extend_step): the last
     * extend_share of the steps train at extend_seq_len with rope_base
     * raised to extend_rope_base (0: kept); extend_share 0: none */
    float extend_share;
    int extend_seq_len;
    float extend_rope_base;
    float needle_share; /* share of training rows carrying a needle (data.h), 0: none */
    int qk_norm;
    int tied_embed;
    int window;                 /* sliding window: query t sees keys (t - window, t]; 0: all */
    WindowLayers window_layers; /* the layers the window applies to */
    NormPlace norm_place;
    float norm_eps;
    float init_std;

    /* --- variant --- */
    char variant[CFG_STR]; /* id from the catalog, or "custom" */
    GatePos gate_pos;
    GateGran gate_gran;
    int gate_shared; /* head-shared: scores averaged over heads */
    GateForm gate_form;
    GateAct gate_act;
    GateInput gate_input;
    int gate_in_dim; /* a FULL gate reads only X's first gate_in_dim dims; 0: all */
    GateInit gate_init;
    AttnNormaliser normaliser;
    float clip_alpha; /* clipped softmax: gamma = -alpha / T */
    float softpick_eps;
    int kv_bias;    /* learned k', v' per head, always visible */
    int sink_token; /* count of learned tokens prepended (registers;
                       1 = the StreamingLLM sink); loss skips them */
    YMod y_mod;
    int diff_attn;  /* differential attention (Ye et al. 2024) */
    int ssmax;      /* scalable softmax: logits * s_h ln(n) */
    int fox;        /* forgetting attention: + sum log f over (j, t] */
    int xsa;        /* exclusive self-attention: y_t minus its part along v_t */
    int gated_norm; /* GatedNorm's rank r after every norm; 0: off */

    /* --- data --- */
    DataSource data;
    char data_dir[CFG_STR];   /* brown: dir with train.txt, val.txt */
    char train_file[CFG_STR]; /* tokens/text: explicit files */
    char val_file[CFG_STR];
    int bos;             /* prepend BOS to every sequence */
    int bigram_vocab;    /* bigram-backcopy: ordinary tokens */
    int bigram_triggers; /* how many of them are triggers */
    unsigned long long bigram_seed;

    /* --- optimisation --- */
    int batch_size;
    int steps;
    float lr;
    float min_lr_frac; /* cosine decays to lr * min_lr_frac */
    int warmup;
    float weight_decay;
    WdScale wd_scale;
    float beta1, beta2, adam_eps;
    float grad_clip; /* global-norm clip; 0 = off */
    unsigned long long init_seed;
    unsigned long long data_seed;

    /* --- bookkeeping --- */
    int eval_every;
    int eval_batches;
    int ckpt_every;
    int probe_n; /* probe sequences */
    int log_every;
    int threads;
    float spike_factor;   /* loss spike: > factor * median of previous 50 */
    int flush_subnormals; /* train with subnormals flushed to zero (fpmode.h) */
    int shards;           /* a batch is cut into min(shards, batch_size) (config_shards) */
} Config;

/* Fill cfg with built-in defaults (the `small`-like baseline): each key's
 * default in the key table (config.c). */
void config_defaults(Config *cfg);

/* Set every variant field (gate_*, normaliser, kv_bias, sink_token, y_mod,
 * diff_attn, ssmax, fox, xsa, gated_norm) to its default: the baseline a catalog row's
 * key=value text is applied over. */
void config_reset_variant_fields(Config *cfg);

/* Reset the variant fields, then apply "key=value ..." through config_set
 * (a catalog row's fields). -1 with the failing key's reason. */
int config_apply_fields(Config *cfg, const char *fields, char *err, size_t errlen);

/* The keys whose values differ between `from` and `to` (the variant id
 * aside), as "key=value key=value" with to's values into buf (NULL allowed;
 * truncated to len). Returns how many differ. */
int config_differences(const Config *from, const Config *to, char *buf, size_t len);

/* Parse an INI file over cfg (inih). Keys may sit at top level or under
 * [model] [variant] [data] [train] sections; an unknown key is an error.
 * On error returns -1 and writes a one-line reason naming file:line:key. */
int config_load_file(Config *cfg, const char *path, char *err, size_t errlen);

/* Same, from a string holding INI text (a run file's or checkpoint's
 * recorded config); name labels errors. A retired key in it (config.c:
 * retired_keys, e.g. reproducible) is read and has no effect, where a
 * preset or --set naming it is refused. */
int config_load_string(Config *cfg, const char *text, const char *name, char *err, size_t errlen);

/* Apply one "key=value" override. Returns -1 with a reason on error. */
int config_set(Config *cfg, const char *kv, char *err, size_t errlen);

/* Apply a variant id from the catalog (variants.md A, B and C), which may
 * change model shape (parameter-matched baselines). -1 on unknown id. */
int config_apply_variant(Config *cfg, const char *id, char *err, size_t errlen);

/* Check shapes and refuse contradictory settings (config_validate.c).
 * -1 with a reason. */
int config_validate(const Config *cfg, char *err, size_t errlen);

/* One warning line on `to` for each key set (away from its default) where
 * another key makes it do nothing (yarn_scale without RoPE, gate keys on
 * an ungated variant, window_layers without window; the table of which
 * keys depend on which is in config_validate.c, whose refusing rows
 * config_validate applies). The count of lines written. */
int config_warn_moot(const Config *cfg, FILE *to);

/* Every int and float key of cfg inside its key-table range (config.c,
 * part of config_validate). -1 with "KEY VALUE is outside LO..HI". */
int config_check_ranges(const Config *cfg, char *err, size_t errlen);

/* Resolved values derived from others (head_dim, vocab_size, max_pos) and
 * the variant label (config_label_variant). */
void config_resolve(Config *cfg);

/* Write the resolved config as INI text that config_load_file accepts. */
int config_to_text(const Config *cfg, char *buf, size_t len);

/* 1 when config text was (a checkpoint's) says what config text now says:
 * equal, or written by a build with fewer keys, so that now only adds lines
 * to it and was, read over the defaults, gives now's text (each added key
 * at its default, as the older build trained). A retired key's line is in
 * was and not in now, so such a text differs. 0 otherwise. */
int config_text_same(const char *was, const char *now);

/* Visit every key with its value as text (for typed HDF5 attributes). */
typedef void (*ConfigVisit)(const char *key, const char *value, int is_int, int is_float,
                            void *ctx);
void config_visit(const Config *cfg, ConfigVisit fn, void *ctx);

/* The names enumerated key KEY takes (NULL-terminated, the spelling
 * config_set accepts and run files record), or NULL when KEY is not an
 * enumerated key. */
const char *const *config_key_vocab(const char *key);

/* The i-th key of the key table, in its order (NULL past the end), and
 * whether KEY is a variant field (one config_reset_variant_fields resets
 * and a catalog row's fields are applied over). */
const char *config_key_at(int i);
int config_key_is_variant_field(const char *key);

/* Names for enums, for logs, run files and reports. */
const char *gate_pos_name(GatePos p);
const char *normaliser_name(AttnNormaliser n);
const char *y_mod_name(YMod m);
const char *data_source_name(DataSource d);

/* Catalog listing for --help: returns NULL past the end. */
const char *variant_id_at(int i);
const char *variant_formula(const char *id);
/* The key=value text a catalog row applies over the variant fields' defaults
 * ("" for baseline), and whether it also changes shapes relative to the
 * config it is applied to (the parameter-matched rows); NULL/0 for an
 * unknown id. */
const char *variant_fields(const char *id);
/* "unknown variant id 'ID' (did you mean NEAR?); the ids: a, b, ..." into
 * err (the nearest id when one is near, then every catalog id, cut at
 * errlen). Returns -1. */
int variant_unknown(const char *id, char *err, size_t errlen);
int variant_changes_shape(const char *id);
/* Only the shape change of catalog id (a parameter-matched row) on cfg;
 * 0 for the others, -1 with a reason (unknown id, a shape it cannot
 * change). */
int variant_apply_shape(Config *cfg, const char *id, char *err, size_t errlen);

/* The label of a config that names no catalog id. */
#define VARIANT_CUSTOM "custom"

/* A run's variant label, from its fields: the id cfg->variant names when
 * cfg's variant fields (and the keys that row sets) equal that row's, else
 * the first shape-keeping catalog id whose fields they equal, else
 * VARIANT_CUSTOM. Writes it into cfg->variant. */
void config_label_variant(Config *cfg);

/* The variant fields of cfg that differ from the baseline's, as
 * "key=value ..." (config_differences); "" for baseline. Returns the count. */
int config_variant_diff(const Config *cfg, char *buf, size_t len);

/* The paper's headline comparison, a property of the catalog: the
 * reference run every other is compared against, the headline gate, and
 * the other key run. Figures with too many runs keep these; summaries
 * list them in this order. */
enum {
    VARIANT_KEY_NONE = 0,
    VARIANT_KEY_BASELINE,
    VARIANT_KEY_HEADLINE,
    VARIANT_KEY_OTHER,
    VARIANT_KEY_END
};
/* The key role of a catalog id (VARIANT_KEY_NONE when not a key run). */
int variant_key(const char *id);
/* The id with key role `role`, NULL when none has it. */
const char *variant_key_id(int role);

#endif
