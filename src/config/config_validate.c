/* config_validate.c: resolving a Config's derived values (config_resolve)
 * and refusing the settings that cannot train (config_validate): shapes,
 * variant contradictions, data, training. Every refusal names the values. */
#include "config.h"
#include "config_derive.h"
#include "util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ resolving */

/* Internal sequence length the position table must cover. */
static int needed_pos(const Config *c) {
    return config_max_len(c) + (c->sink_token > 0 ? c->sink_token : 0);
}

void config_resolve(Config *c) {
    /* An uneven split stays 0 so config_validate names it. */
    if (c->head_dim == 0 && c->n_heads > 0 && c->d_model % c->n_heads == 0)
        c->head_dim = c->d_model / c->n_heads;
    if (c->d_ff == 0) c->d_ff = config_auto_d_ff(c->d_model, c->mlp);
    /* max_pos 0 means "just the training length"; an explicit larger value
     * (for longer eval lengths) is kept. For learned positions a smaller
     * explicit value is a validation error, for the others it is moot. */
    if (c->max_pos == 0 || (c->pos != POS_LEARNED && c->max_pos < needed_pos(c)))
        c->max_pos = needed_pos(c);
    if (c->vocab_size <= 0) {
        switch (c->data) {
        case DATA_BROWN:
        case DATA_TEXT: c->vocab_size = c->bos ? 257 : 256; break;
        case DATA_BIGRAM: c->vocab_size = c->bigram_vocab + 1; break;
        case DATA_TOKENS: break; /* the data layer reads the file */
        }
    }
    config_label_variant(c);
}

/* ----------------------------------------------------------- validation */

static int validate_shapes(const Config *c, char *err, size_t n) {
    if (c->n_layers < 1 || c->n_layers > CONFIG_MAX_LAYERS)
        return seterr(err, n, "n_layers %d is outside 1..%d", c->n_layers, CONFIG_MAX_LAYERS);
    if (c->d_model <= 0) return seterr(err, n, "d_model %d must be positive", c->d_model);
    if (c->n_heads <= 0) return seterr(err, n, "n_heads %d must be positive", c->n_heads);
    if (c->n_kv_heads <= 0) return seterr(err, n, "n_kv_heads %d must be positive", c->n_kv_heads);
    if (c->n_heads % c->n_kv_heads)
        return seterr(err, n, "n_kv_heads %d does not divide n_heads %d", c->n_kv_heads,
                      c->n_heads);
    if (c->head_dim < 0) return seterr(err, n, "head_dim %d is negative", c->head_dim);
    if (c->head_dim == 0 && c->d_model % c->n_heads)
        return seterr(err, n, "d_model %d is not divisible by n_heads %d", c->d_model, c->n_heads);
    int dh = config_head_dim(c);
    if (c->pos == POS_ROPE && dh % 2)
        return seterr(err, n, "RoPE needs an even head_dim, got %d", dh);
    if (c->d_ff < 0) return seterr(err, n, "d_ff %d is negative", c->d_ff);
    if (c->vocab_size < 0) return seterr(err, n, "vocab_size %d is negative", c->vocab_size);
    if (c->seq_len <= 0) return seterr(err, n, "seq_len %d must be positive", c->seq_len);
    if (c->max_pos < 0) return seterr(err, n, "max_pos %d is negative", c->max_pos);
    if (c->pos == POS_LEARNED && c->max_pos > 0 && c->max_pos < needed_pos(c))
        return seterr(err, n, "seq_len %d%s exceeds max_pos %d", c->seq_len,
                      c->sink_token ? " + sink/register tokens" : "", c->max_pos);
    if (c->pos == POS_ROPE && !(c->rope_base > 1.0f))
        return seterr(err, n, "rope_base %g must be > 1", (double)c->rope_base);
    if (!(c->yarn_scale >= 1.0f))
        return seterr(err, n, "yarn_scale %g must be >= 1", (double)c->yarn_scale);
    if (!(c->norm_eps > 0.0f))
        return seterr(err, n, "norm_eps %g must be positive", (double)c->norm_eps);
    if (!(c->init_std > 0.0f))
        return seterr(err, n, "init_std %g must be positive", (double)c->init_std);
    return 0;
}

/* The literature remedies (docs/variants.md D): the combinations their
 * formulas are defined for (sink_token's range is in the key table). */
static int validate_remedies(const Config *c, char *err, size_t n) {
    if (c->diff_attn && (c->normaliser != NORMZ_SOFTMAX || c->kv_bias))
        return seterr(err, n,
                      "diff_attn needs the plain softmax normaliser "
                      "without kv_bias, not %s%s",
                      normaliser_name(c->normaliser), c->kv_bias ? " + kv_bias" : "");
    if (c->diff_attn && config_head_dim(c) % 2)
        return seterr(err, n,
                      "diff_attn splits each head in two: head_dim %d "
                      "must be even",
                      config_head_dim(c));
    if (c->fox && (c->normaliser != NORMZ_SOFTMAX || c->kv_bias))
        return seterr(err, n,
                      "fox needs the plain softmax normaliser without "
                      "kv_bias, not %s%s",
                      normaliser_name(c->normaliser), c->kv_bias ? " + kv_bias" : "");
    if (c->fox && c->diff_attn)
        return seterr(err, n,
                      "fox and diff_attn both rewrite the attention "
                      "map; pick one");
    if (c->normaliser == NORMZ_STICKBREAK && c->kv_bias)
        return seterr(err, n, "stickbreak has no slot for kv_bias; pick one");
    if (c->gated_norm && c->norm_place == NORMPLACE_POST)
        return seterr(err, n,
                      "gated_norm gates the norms before each sub-layer, which norm_place post "
                      "does not have");
    return 0;
}

static int validate_variant(const Config *c, char *err, size_t n) {
    if (!(c->clip_alpha >= 0.0f))
        return seterr(err, n, "clip_alpha %g must not be negative", (double)c->clip_alpha);
    if (!(c->softpick_eps > 0.0f))
        return seterr(err, n, "softpick_eps %g must be positive", (double)c->softpick_eps);
    if (c->kv_bias && c->sink_token)
        return seterr(err, n,
                      "kv_bias and sink_token both add an always-"
                      "visible slot; pick one");
    if (c->kv_bias && c->normaliser != NORMZ_SOFTMAX)
        return seterr(err, n, "kv_bias needs the softmax normaliser, not %s",
                      normaliser_name(c->normaliser));
    if (validate_remedies(c, err, n)) return -1;
    if (c->gate_pos == GATE_NONE) return 0; /* other gate keys are moot */

    const char *pos = gate_pos_name(c->gate_pos);
    if (c->y_mod != YMOD_NONE && c->gate_pos == GATE_G1)
        return seterr(err, n, "y_mod %s and a gate at g1 both rewrite Y; pick one",
                      y_mod_name(c->y_mod));
    if (c->gate_shared && c->gate_gran == GRAN_HEAD)
        return seterr(err, n,
                      "a headwise gate cannot be head-shared "
                      "(gate_shared with gate_gran head)");
    if (c->gate_shared && c->gate_pos != GATE_G1 && c->gate_pos != GATE_G2)
        return seterr(err, n, "head-shared gating needs gate_pos g1 or g2, not %s", pos);
    if (c->gate_form == FORM_ADD) {
        if (GATE_ACTS[c->gate_act].mult_only)
            return seterr(err, n,
                          "gate_act %s is a multiplicative gate; "
                          "gate_form add is not allowed",
                          GATE_ACTS[c->gate_act].name);
        if (c->gate_gran == GRAN_HEAD)
            return seterr(err, n,
                          "an additive gate must be elementwise, "
                          "not headwise");
        if (c->gate_input == GIN_CONST)
            return seterr(err, n, "an additive gate cannot take const input");
    }
    if (c->gate_input == GIN_HEADSLICE) {
        if (c->d_model % c->n_heads)
            return seterr(err, n,
                          "headslice gate input needs d_model %d "
                          "divisible by n_heads %d",
                          c->d_model, c->n_heads);
        if (c->gate_pos != GATE_G1 || c->gate_gran != GRAN_HEAD || c->gate_shared)
            return seterr(err, n,
                          "headslice gate input needs gate_pos g1, "
                          "headwise granularity and no sharing");
    }
    if (c->gate_in_dim && c->gate_input != GIN_FULL)
        return seterr(err, n, "gate_in_dim %d needs gate_input full", c->gate_in_dim);
    if (c->gate_in_dim >= c->d_model && c->gate_in_dim)
        return seterr(err, n, "gate_in_dim %d must be below d_model %d (0 reads all of X)",
                      c->gate_in_dim, c->d_model);
    if (c->gate_input == GIN_CONST &&
        (c->gate_pos != GATE_G1 || c->gate_gran != GRAN_ELEM || c->gate_shared))
        return seterr(err, n,
                      "const gate input needs gate_pos g1, elementwise "
                      "and not head-shared");
    return 0;
}

static int validate_data(const Config *c, char *err, size_t n) {
    switch (c->data) {
    case DATA_BROWN:
        if (!c->data_dir[0]) return seterr(err, n, "data brown needs data_dir");
        break;
    case DATA_TOKENS:
    case DATA_TEXT:
        if (!c->train_file[0])
            return seterr(err, n, "data %s needs train_file", data_source_name(c->data));
        break;
    case DATA_BIGRAM:
        if (c->bigram_vocab < 2)
            return seterr(err, n, "bigram_vocab %d must be at least 2", c->bigram_vocab);
        if (c->bigram_triggers >= c->bigram_vocab)
            return seterr(err, n, "bigram_triggers %d must be below bigram_vocab %d",
                          c->bigram_triggers, c->bigram_vocab);
        if (c->vocab_size > 0 && c->vocab_size < c->bigram_vocab + 1)
            return seterr(err, n, "vocab_size %d is below bigram_vocab + 1 = %d", c->vocab_size,
                          c->bigram_vocab + 1);
        break;
    }
    if (c->needle_share > 0.0f && ((c->data != DATA_BROWN && c->data != DATA_TEXT) || !c->bos))
        return seterr(err, n,
                      "needle_share %g needs byte text with BOS (data brown or text, bos 1)",
                      (double)c->needle_share);
    if ((c->data == DATA_BROWN || c->data == DATA_TEXT) && c->vocab_size > 0 &&
        c->vocab_size < 256 + (c->bos ? 1 : 0))
        return seterr(err, n, "vocab_size %d is too small for bytes%s", c->vocab_size,
                      c->bos ? " + BOS" : "");
    return 0;
}

static int validate_train(const Config *c, char *err, size_t n) {
    if (c->batch_size <= 0) return seterr(err, n, "batch_size %d must be positive", c->batch_size);
    if (c->steps <= 0) return seterr(err, n, "steps %d must be positive", c->steps);
    if (!(c->lr > 0.0f)) return seterr(err, n, "lr %g must be positive", (double)c->lr);
    if (!(c->min_lr_frac >= 0.0f && c->min_lr_frac <= 1.0f))
        return seterr(err, n, "min_lr_frac %g is outside [0, 1]", (double)c->min_lr_frac);
    if (c->warmup < 0) return seterr(err, n, "warmup %d is negative", c->warmup);
    if (!(c->weight_decay >= 0.0f))
        return seterr(err, n, "weight_decay %g is negative", (double)c->weight_decay);
    if (!(c->beta1 > 0.0f && c->beta1 < 1.0f))
        return seterr(err, n, "beta1 %g is outside (0, 1)", (double)c->beta1);
    if (!(c->beta2 > 0.0f && c->beta2 < 1.0f))
        return seterr(err, n, "beta2 %g is outside (0, 1)", (double)c->beta2);
    if (!(c->adam_eps > 0.0f))
        return seterr(err, n, "adam_eps %g must be positive", (double)c->adam_eps);
    if (!(c->grad_clip >= 0.0f))
        return seterr(err, n, "grad_clip %g is negative", (double)c->grad_clip);
    if (c->eval_every < 0 || c->ckpt_every < 0 || c->probe_n < 0)
        return seterr(err, n, "eval_every, ckpt_every and probe_n must not be negative");
    if (c->eval_batches <= 0)
        return seterr(err, n, "eval_batches %d must be positive", c->eval_batches);
    if (c->log_every <= 0) return seterr(err, n, "log_every %d must be positive", c->log_every);
    if (c->threads < 1 || c->threads > 64)
        return seterr(err, n, "threads %d is outside 1..64", c->threads);
    if (!(c->spike_factor >= 1.0f))
        return seterr(err, n, "spike_factor %g must be >= 1", (double)c->spike_factor);
    return 0;
}

/* Context extension: a longer length, a base not below rope_base, and
 * steps on both sides of the switch (its keys without extend_share or
 * RoPE: DEPENDENT below). */
static int validate_extend(const Config *c, char *err, size_t n) {
    if (!(c->extend_share > 0.0f)) return 0;
    if (c->extend_seq_len <= c->seq_len)
        return seterr(err, n, "extend_share %g needs extend_seq_len above seq_len %d, got %d",
                      (double)c->extend_share, c->seq_len, c->extend_seq_len);
    if (c->extend_rope_base > 0.0f && c->extend_rope_base < c->rope_base)
        return seterr(err, n, "extend_rope_base %g is below rope_base %g (the extension raises it)",
                      (double)c->extend_rope_base, (double)c->rope_base);
    long long at = config_extend_step(c);
    if (at < 1 || at >= c->steps)
        return seterr(err, n,
                      "extend_share %g of %d steps leaves no step at one of the two lengths "
                      "(switch at step %lld)",
                      (double)c->extend_share, c->steps, at);
    return 0;
}

/* ------------------------------------------- keys that depend on others */

/* When each governing key leaves its dependents nothing to do: 1 then. */
static int no_window(const Config *c) { return c->window == 0; }
static int no_rope(const Config *c) { return c->pos != POS_ROPE; }
static int no_gate(const Config *c) { return c->gate_pos == GATE_NONE; }
static int no_extend(const Config *c) { return !(c->extend_share > 0.0f); }

/* A key that does something only when another key allows it: set (away
 * from its default) while moot(c), it does nothing, because of key gov
 * (why says how). refuse: then it can only be a mistake, and
 * config_validate refuses it; else config_warn_moot warns. */
typedef struct {
    const char *key;
    int (*moot)(const Config *c);
    const char *gov, *why;
    int refuse;
} DependentKey;

static const DependentKey DEPENDENT[] = {
    {"extend_seq_len", no_extend, "extend_share", "the share of steps trained at the longer length",
     1},
    {"extend_rope_base", no_extend, "extend_share",
     "the share of steps trained at the longer length", 1},
    {"extend_rope_base", no_rope, "pos", "it raises the RoPE base", 1},
    {"rope_base", no_rope, "pos", "it sets RoPE's frequencies", 0},
    {"yarn_scale", no_rope, "pos", "it rescales RoPE's frequencies", 0},
    {"window_layers", no_window, "window", "no layer has a sliding window", 0},
    {"gate_gran", no_gate, "gate_pos", "the variant has no gate", 0},
    {"gate_shared", no_gate, "gate_pos", "the variant has no gate", 0},
    {"gate_form", no_gate, "gate_pos", "the variant has no gate", 0},
    {"gate_act", no_gate, "gate_pos", "the variant has no gate", 0},
    {"gate_input", no_gate, "gate_pos", "the variant has no gate", 0},
    {"gate_in_dim", no_gate, "gate_pos", "the variant has no gate", 0},
    {"gate_init", no_gate, "gate_pos", "the variant has no gate", 0},
};
#define N_DEPENDENT (sizeof DEPENDENT / sizeof *DEPENDENT)

typedef struct {
    const char *key;
    char value[CFG_STR + 8];
} KeyText;

/* A ConfigVisit: the value of the key ctx (a KeyText) asks for. */
static void take_value(const char *key, const char *value, int is_int, int is_float, void *ctx) {
    (void)is_int, (void)is_float;
    KeyText *kt = ctx;
    if (!strcmp(key, kt->key)) snprintf(kt->value, sizeof kt->value, "%s", value);
}

/* Key's value in c as config text (config_visit) into kt. */
static void key_text(const Config *c, const char *key, KeyText *kt) {
    kt->key = key, kt->value[0] = 0;
    config_visit(c, take_value, kt);
}

/* The first DEPENDENT row (from *at on) set in c while moot, its line
 * into err ("KEY V does nothing with GOV W (WHY); ..."); its index, or
 * -1. */
static int next_moot(const Config *c, size_t *at, char *err, size_t n) {
    Config d;
    config_defaults(&d);
    for (; *at < N_DEPENDENT; (*at)++) {
        const DependentKey *k = &DEPENDENT[*at];
        KeyText v, dv, g;
        if (!k->moot(c)) continue;
        key_text(c, k->key, &v), key_text(&d, k->key, &dv);
        if (!strcmp(v.value, dv.value)) continue;
        key_text(c, k->gov, &g);
        if (k->refuse)
            seterr(err, n, "%s %s does nothing with %s %s (%s); change %s or drop %s", k->key,
                   v.value, k->gov, g.value, k->why, k->gov, k->key);
        else
            seterr(err, n, "%s %s does nothing with %s %s (%s); it is ignored", k->key, v.value,
                   k->gov, g.value, k->why);
        return (int)(*at)++;
    }
    return -1;
}

/* The refusing DEPENDENT rows: -1 with the first one set while moot. */
static int validate_dependent(const Config *c, char *err, size_t n) {
    size_t at = 0;
    for (int i; (i = next_moot(c, &at, err, n)) >= 0;)
        if (DEPENDENT[i].refuse) return -1;
    return 0;
}

int config_warn_moot(const Config *c, FILE *to) {
    char line[512];
    size_t at = 0;
    int warned = 0;
    for (int i; (i = next_moot(c, &at, line, sizeof line)) >= 0;)
        if (!DEPENDENT[i].refuse) fprintf(to, "gatelab: warning: %s\n", line), warned++;
    return warned;
}

int config_validate(const Config *c, char *err, size_t errlen) {
    if (config_check_ranges(c, err, errlen) || validate_shapes(c, err, errlen) ||
        validate_variant(c, err, errlen) || validate_data(c, err, errlen) ||
        validate_train(c, err, errlen) || validate_dependent(c, err, errlen) ||
        validate_extend(c, err, errlen))
        return -1;
    return 0;
}
