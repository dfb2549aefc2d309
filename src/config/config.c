/* config.c: defaults, INI parsing (inih), --set overrides, the range check
 * and serialisation of a run's Config (resolution and the other checks:
 * config_validate.c).
 *
 * Every key lives in one table (name, type, offset, enum names, range,
 * default), and the defaults, parsing, config_set, config_to_text and
 * config_visit all walk it, so a new hyperparameter is one table row and
 * nothing else.
 */
#include "config.h"
#include "config_derive.h"
#include "inifile.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Enum fields are written through an int pointer. */
_Static_assert(sizeof(NormKind) == sizeof(int), "enum size");
_Static_assert(sizeof(GatePos) == sizeof(int), "enum size");
_Static_assert(sizeof(AttnNormaliser) == sizeof(int), "enum size");
_Static_assert(sizeof(DataSource) == sizeof(int), "enum size");
_Static_assert(sizeof(WindowLayers) == sizeof(int), "enum size");
_Static_assert(sizeof(NormPlace) == sizeof(int), "enum size");

/* ---------------------------------------------------------------- names */

/* NULL-terminated, indexed by enum value. */
/* Each enum's names, indexed by its constants (config.h), NULL-ended. */
static const char *const norm_names[] = {[NORM_RMS] = "rms", [NORM_LAYER] = "layer", NULL};
static const char *const pos_names[] = {[POS_ROPE] = "rope",
                                        [POS_LEARNED] = "learned",
                                        [POS_NONE] = "none",
                                        [POS_ALIBI] = "alibi",
                                        NULL};
static const char *const winlayers_names[] = {
    [WINLAYERS_ALL] = "all", [WINLAYERS_ALTERNATE] = "alternate", NULL};
static const char *const normplace_names[] = {
    [NORMPLACE_PRE] = "pre", [NORMPLACE_POST] = "post", [NORMPLACE_SANDWICH] = "sandwich", NULL};
static const char *const mlp_names[] = {[MLP_SWIGLU] = "swiglu", [MLP_GELU] = "gelu", NULL};
static const char *const gate_pos_names[] = {[GATE_NONE] = "none",
                                             [GATE_G1] = "g1",
                                             [GATE_G2] = "g2",
                                             [GATE_G3] = "g3",
                                             [GATE_G4] = "g4",
                                             [GATE_G5] = "g5",
                                             NULL};
static const char *const gran_names[] = {[GRAN_ELEM] = "elem", [GRAN_HEAD] = "head", NULL};
static const char *const form_names[] = {[FORM_MULT] = "mult", [FORM_ADD] = "add", NULL};
static const char *const gate_init_names[] = {
    [GINIT_NORMAL] = "normal", [GINIT_ZERO] = "zero", NULL};
static const char *const input_names[] = {
    [GIN_FULL] = "full", [GIN_HEADSLICE] = "headslice", [GIN_CONST] = "const", NULL};
static const char *const normz_names[] = {
    [NORMZ_SOFTMAX] = "softmax",       [NORMZ_SOFTMAX1] = "softmax1",
    [NORMZ_SINK_LOGIT] = "sink-logit", [NORMZ_CLIPPED] = "clipped",
    [NORMZ_SIGMOID] = "sigmoid",       [NORMZ_SOFTPICK] = "softpick",
    [NORMZ_STICKBREAK] = "stickbreak", NULL};
static const char *const ymod_names[] = {
    [YMOD_NONE] = "none", [YMOD_RMSNORM] = "rmsnorm", [YMOD_SILU] = "silu", NULL};
static const char *const data_names[] = {[DATA_BROWN] = "brown",
                                         [DATA_TOKENS] = "tokens",
                                         [DATA_BIGRAM] = "bigram",
                                         [DATA_TEXT] = "text",
                                         NULL};
static const char *const wd_scale_names[] = {
    [WD_SCALE_LR] = "lr", [WD_SCALE_FIXED] = "fixed", NULL};

static const char *const act_names[] = {[ACT_SIGMOID] = "sigmoid",
                                        [ACT_SILU] = "silu",
                                        [ACT_IDENTITY] = "identity",
                                        [ACT_NS_SIGMOID] = "ns-sigmoid",
                                        [ACT_2SIGMOID] = "2sigmoid",
                                        [ACT_SOFTPLUS] = "softplus",
                                        NULL};

/* What each gate activation's scores are (config.h), indexed by GateAct;
 * its name is act_names' (test_config holds the two to one another). */
const GateActRow GATE_ACTS[GATE_ACT_COUNT] = {
    [ACT_SIGMOID] = {"sigmoid", 1, 0},   [ACT_SILU] = {"silu", 0, 0},
    [ACT_IDENTITY] = {"identity", 0, 0}, [ACT_NS_SIGMOID] = {"ns-sigmoid", 1, 1},
    [ACT_2SIGMOID] = {"2sigmoid", 0, 1}, [ACT_SOFTPLUS] = {"softplus", 0, 1},
};

static const char *enum_name(const char *const *names, int v) {
    for (int i = 0; names[i]; i++)
        if (i == v) return names[i];
    return "?";
}

const char *gate_pos_name(GatePos p) { return enum_name(gate_pos_names, p); }
const char *normaliser_name(AttnNormaliser n) { return enum_name(normz_names, n); }
const char *y_mod_name(YMod m) { return enum_name(ymod_names, m); }
const char *data_source_name(DataSource d) { return enum_name(data_names, d); }

/* ---------------------------------------------------------------- table */

typedef enum {
    KT_INT,     /* int, >= 0 */
    KT_U64,     /* unsigned long long */
    KT_FLOAT,   /* float, finite */
    KT_BOOL,    /* int 0/1; accepts 0/1/true/false */
    KT_ENUM,    /* int-sized enum, by name */
    KT_STR,     /* char[CFG_STR] */
    KT_VARIANT, /* applies a catalog id (config_apply_variant) */
} KeyType;

typedef enum { SEC_MODEL, SEC_VARIANT, SEC_DATA, SEC_TRAIN } Section;
static const char *const section_names[] = {"model", "variant", "data", "train", NULL};

/* Which outputs a key appears in. `variant` applies a catalog id, so the
 * resolved text records the id with `variant_name` (which applies nothing)
 * followed by every field the id set; run-file attributes use `variant`. */
enum { K_TEXT = 1, K_VISIT = 2, K_BOTH = 3 };

/* Every int and float key has a range [lo, hi] (lo excluded when
 * open_lo: "must be positive"), checked when the value is set and again by
 * config_validate. They keep every metric defined (seq_len >= 2: F-Attn's
 * uniform reference divides by T-1) and every count small enough that its
 * buffers are sized without overflow; memplan.c then holds the total to the
 * machine's memory. experiments/README.md lists them. */
typedef struct {
    const char *name;
    KeyType type;
    size_t off;
    const char *const *names; /* KT_ENUM only */
    Section sec;
    int out;
    double lo, hi;
    int open_lo;
    const char *def; /* the built-in default as text (config_defaults); NULL: 0 or "" */
    int vfield;      /* a variant field: every catalog row sets it (its default unless
                        the row names it), and it decides a run's variant label */
} KeyDef;

#define K(field, type, sec, def)                                                                   \
    { #field, type, offsetof(Config, field), NULL, sec, K_BOTH, 0, 0, 0, def, 0 }
#define E(field, names, sec, def)                                                                  \
    { #field, KT_ENUM, offsetof(Config, field), names, sec, K_BOTH, 0, 0, 0, def, 0 }
#define RI(field, sec, lo, hi, def)                                                                \
    { #field, KT_INT, offsetof(Config, field), NULL, sec, K_BOTH, lo, hi, 0, def, 0 }
#define RF(field, sec, lo, hi, open, def)                                                          \
    { #field, KT_FLOAT, offsetof(Config, field), NULL, sec, K_BOTH, lo, hi, open, def, 0 }
/* variant fields, all in [variant], all 0 (the first enum name) by default */
#define VB(field)                                                                                  \
    { #field, KT_BOOL, offsetof(Config, field), NULL, SEC_VARIANT, K_BOTH, 0, 0, 0, "0", 1 }
#define VE(field, names, def)                                                                      \
    { #field, KT_ENUM, offsetof(Config, field), names, SEC_VARIANT, K_BOTH, 0, 0, 0, def, 1 }
#define VI(field, lo, hi)                                                                          \
    { #field, KT_INT, offsetof(Config, field), NULL, SEC_VARIANT, K_BOTH, lo, hi, 0, "0", 1 }
#define MAX_COUNT 1000000000 /* steps and step intervals */

static const KeyDef keys[] = {
    RI(n_layers, SEC_MODEL, 1, CONFIG_MAX_LAYERS, "4"),
    RI(d_model, SEC_MODEL, 1, 16384, "128"),
    RI(n_heads, SEC_MODEL, 1, 1024, "4"),
    RI(n_kv_heads, SEC_MODEL, 1, 1024, "4"),
    RI(head_dim, SEC_MODEL, 0, 4096, "0"),
    RI(d_ff, SEC_MODEL, 0, 262144, "0"),
    RI(vocab_size, SEC_MODEL, 0, 1048576, "0"),
    RI(seq_len, SEC_MODEL, 2, 65536, "256"),
    RI(max_pos, SEC_MODEL, 0, 1048576, "0"),
    E(norm, norm_names, SEC_MODEL, "rms"),
    E(pos, pos_names, SEC_MODEL, "rope"),
    E(mlp, mlp_names, SEC_MODEL, "swiglu"),
    RF(rope_base, SEC_MODEL, 1, 1e9, 1, "10000"),
    RF(yarn_scale, SEC_MODEL, 1, 1024, 0, "1"),
    RF(extend_share, SEC_TRAIN, 0, 0.9, 0, "0"),
    RI(extend_seq_len, SEC_TRAIN, 0, 65536, "0"),
    RF(extend_rope_base, SEC_TRAIN, 0, 1e9, 0, "0"),
    RF(needle_share, SEC_DATA, 0, 1, 0, "0"),
    K(qk_norm, KT_BOOL, SEC_MODEL, "0"),
    K(tied_embed, KT_BOOL, SEC_MODEL, "0"),
    RI(window, SEC_MODEL, 0, 65536, "0"),
    E(window_layers, winlayers_names, SEC_MODEL, "all"),
    E(norm_place, normplace_names, SEC_MODEL, "pre"),
    RF(norm_eps, SEC_MODEL, 0, 1, 1, "1e-5"),
    RF(init_std, SEC_MODEL, 0, 10, 1, "0.02"),

    {"variant", KT_VARIANT, offsetof(Config, variant), NULL, SEC_VARIANT, K_VISIT, 0, 0, 0,
     "baseline", 0},
    {"variant_name", KT_STR, offsetof(Config, variant), NULL, SEC_VARIANT, K_TEXT, 0, 0, 0, NULL,
     0},
    VE(gate_pos, gate_pos_names, "none"),
    VE(gate_gran, gran_names, "elem"),
    VB(gate_shared),
    VE(gate_form, form_names, "mult"),
    VE(gate_act, act_names, "sigmoid"),
    VE(gate_input, input_names, "full"),
    VI(gate_in_dim, 0, 16384),
    VE(gate_init, gate_init_names, "normal"),
    VE(normaliser, normz_names, "softmax"),
    RF(clip_alpha, SEC_VARIANT, 0, 1e6, 0, "4"),
    RF(softpick_eps, SEC_VARIANT, 0, 1, 1, "1e-6"),
    VB(kv_bias),
    VI(sink_token, 0, CONFIG_MAX_REGISTERS), /* prepended sink/register tokens */
    VE(y_mod, ymod_names, "none"),
    VB(diff_attn),
    VB(ssmax),
    VB(fox),
    VB(xsa),
    VI(gated_norm, 0, 4096), /* GatedNorm's low rank */

    E(data, data_names, SEC_DATA, "brown"),
    K(data_dir, KT_STR, SEC_DATA, "data/brown"),
    K(train_file, KT_STR, SEC_DATA, NULL),
    K(val_file, KT_STR, SEC_DATA, NULL),
    K(bos, KT_BOOL, SEC_DATA, "1"),
    RI(bigram_vocab, SEC_DATA, 2, 8192, "64"),
    RI(bigram_triggers, SEC_DATA, 0, 8191, "3"),
    K(bigram_seed, KT_U64, SEC_DATA, "1"),

    RI(batch_size, SEC_TRAIN, 1, 65536, "16"),
    RI(steps, SEC_TRAIN, 1, MAX_COUNT, "1000"),
    RF(lr, SEC_TRAIN, 0, 1e4, 1, "3e-3"),
    RF(min_lr_frac, SEC_TRAIN, 0, 1, 0, "0.1"),
    RI(warmup, SEC_TRAIN, 0, MAX_COUNT, "100"),
    RF(weight_decay, SEC_TRAIN, 0, 100, 0, "0.1"),
    E(wd_scale, wd_scale_names, SEC_TRAIN, "lr"),
    RF(beta1, SEC_TRAIN, 0, 0.999999, 1, "0.9"),
    RF(beta2, SEC_TRAIN, 0, 0.999999, 1, "0.95"),
    RF(adam_eps, SEC_TRAIN, 0, 1, 1, "1e-8"),
    RF(grad_clip, SEC_TRAIN, 0, 1e6, 0, "1"),
    K(init_seed, KT_U64, SEC_TRAIN, "1"),
    K(data_seed, KT_U64, SEC_TRAIN, "1"),
    RI(eval_every, SEC_TRAIN, 0, MAX_COUNT, "200"),
    RI(eval_batches, SEC_TRAIN, 1, 100000, "8"),
    RI(ckpt_every, SEC_TRAIN, 0, MAX_COUNT, "200"),
    RI(probe_n, SEC_TRAIN, 0, 65536, "16"),
    RI(log_every, SEC_TRAIN, 1, MAX_COUNT, "10"),
    RI(threads, SEC_TRAIN, 1, 64, "1"),
    RF(spike_factor, SEC_TRAIN, 1, 1e6, 0, "1.25"),
    /* IEEE by default: the committed reference runs reproduce bit for bit */
    K(flush_subnormals, KT_BOOL, SEC_TRAIN, "0"),
    /* part of the arithmetic: the shards' gradients are summed in shard order */
    RI(shards, SEC_TRAIN, 1, CONFIG_MAX_SHARDS, "8"),
};
#define N_KEYS (sizeof keys / sizeof keys[0])

static const KeyDef *find_key(const char *name) {
    for (size_t i = 0; i < N_KEYS; i++)
        if (strcmp(keys[i].name, name) == 0) return &keys[i];
    return NULL;
}

const char *const *config_key_vocab(const char *key) {
    const KeyDef *k = find_key(key);
    return k && k->type == KT_ENUM ? k->names : NULL;
}

const char *config_key_at(int i) { return i >= 0 && (size_t)i < N_KEYS ? keys[i].name : NULL; }

int config_key_is_variant_field(const char *key) {
    const KeyDef *k = find_key(key);
    return k && k->vfield;
}

/* --------------------------------------------------------- value parsing */

/* Parse value v into key k of cfg. On error writes "bad value ... (why)"
 * without a location; the caller prefixes file:line or --set. */
static int parse_int(const char *v, int *out) {
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (end == v || *end || errno == ERANGE || x < INT_MIN || x > INT_MAX) return -1;
    *out = (int)x;
    return 0;
}

static int parse_u64(const char *v, unsigned long long *out) {
    char *end;
    if (*v == '-' || *v == '+') return -1; /* strtoull wraps negatives */
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (end == v || *end || errno == ERANGE) return -1;
    *out = x;
    return 0;
}

static int parse_float(const char *v, float *out) {
    char *end;
    errno = 0;
    float x = strtof(v, &end);
    if (end == v || *end || errno == ERANGE || !isfinite(x)) return -1;
    *out = x;
    return 0;
}

static int parse_enum(const char *v, const char *const *names, int *out) {
    for (int i = 0; names[i]; i++)
        if (strcmp(v, names[i]) == 0) {
            *out = i;
            return 0;
        }
    return -1;
}

/* "a|b|c" into buf, for error messages. */
static const char *enum_choices(const char *const *names, char *buf, size_t len) {
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; names[i] && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? "|" : "", names[i]);
    return buf;
}

static int has_control(const char *v) {
    for (; *v; v++)
        if ((unsigned char)*v < 0x20 || *v == 0x7f) return 1;
    return 0;
}

/* 0 when key k of cfg lies in its range, else -1 with "outside LO..HI"
 * (ints) or "outside (LO, HI]" / "[LO, HI]" (floats) in why[n]. */
static int check_range(const Config *cfg, const KeyDef *k, char *why, size_t n) {
    const char *base = (const char *)cfg + k->off;
    if (k->type == KT_INT) {
        int x = *(const int *)base;
        if (x >= k->lo && x <= k->hi) return 0;
        snprintf(why, n, "outside %.0f..%.0f", k->lo, k->hi);
        return -1;
    }
    if (k->type != KT_FLOAT) return 0;
    double x = *(const float *)base;
    if ((k->open_lo ? x > k->lo : x >= k->lo) && x <= k->hi) return 0;
    snprintf(why, n, "outside %c%g, %g]", k->open_lo ? '(' : '[', k->lo, k->hi);
    return -1;
}

static int set_value(Config *cfg, const KeyDef *k, const char *v, char *err, size_t errlen) {
    char *base = (char *)cfg + k->off;
    const char *why = NULL;
    char choices[160];

    switch (k->type) {
    case KT_INT: {
        int x;
        if (parse_int(v, &x)) why = "expected an integer";
        else if (x < 0) why = "must not be negative";
        else *(int *)base = x;
        break;
    }
    case KT_U64:
        if (parse_u64(v, (unsigned long long *)base)) why = "expected an unsigned integer";
        break;
    case KT_FLOAT:
        if (parse_float(v, (float *)base)) why = "expected a finite number";
        break;
    case KT_BOOL:
        if (!strcmp(v, "1") || !strcmp(v, "true")) *(int *)base = 1;
        else if (!strcmp(v, "0") || !strcmp(v, "false")) *(int *)base = 0;
        else why = "expected 0|1|true|false";
        break;
    case KT_ENUM:
        if (parse_enum(v, k->names, (int *)base))
            why = enum_choices(k->names, choices, sizeof choices);
        break;
    case KT_STR:
        if (strlen(v) >= CFG_STR) why = "longer than 255 characters";
        /* config_to_text writes "key = value" lines that inih (200-byte
         * line buffer) must read back, from run files and checkpoints */
        else if (strlen(k->name) + 3 + strlen(v) > 197)
            why = "too long for one 197-character INI line 'key = value'";
        else if (has_control(v)) why = "control characters are not allowed";
        else if (strchr(v, ';')) why = "';' would start an INI comment";
        else str_copy(base, CFG_STR, v);
        break;
    case KT_VARIANT: {
        char why2[900];
        if (config_apply_variant(cfg, v, why2, sizeof why2))
            return seterr(err, errlen, "key 'variant': %s", why2);
        break;
    }
    }
    char range[80];
    if (!why && check_range(cfg, k, range, sizeof range)) why = range;
    if (why) {
        if (k->type == KT_ENUM)
            return seterr(err, errlen, "key '%s': bad value '%.64s' (expected %s)", k->name, v,
                          why);
        return seterr(err, errlen, "key '%s': bad value '%.64s' (%s)", k->name, v, why);
    }
    return 0;
}

/* The shortest %g that reads back as the same float: 0.003, not
 * 0.00300000003. %.9g always does, since nine digits round-trip float32. */
static void format_float(float x, char *buf, size_t len) {
    for (int prec = 6; prec <= 9; prec++) {
        snprintf(buf, len, "%.*g", prec, (double)x);
        if (strtof(buf, NULL) == x) return;
    }
}

/* Format key k of cfg as text into buf. */
static void format_value(const Config *cfg, const KeyDef *k, char *buf, size_t len) {
    const char *base = (const char *)cfg + k->off;
    switch (k->type) {
    case KT_INT:
    case KT_BOOL: snprintf(buf, len, "%d", *(const int *)base); break;
    case KT_U64: snprintf(buf, len, "%llu", *(const unsigned long long *)base); break;
    case KT_FLOAT: format_float(*(const float *)base, buf, len); break;
    case KT_ENUM: snprintf(buf, len, "%s", enum_name(k->names, *(const int *)base)); break;
    case KT_STR:
    case KT_VARIANT: snprintf(buf, len, "%s", base); break;
    }
}

/* ------------------------------------------------------------- defaults */

/* Each key's `def` text through the same parser as a preset's values; the
 * keys without one stay 0 or "". */
void config_defaults(Config *c) {
    memset(c, 0, sizeof *c);
    char why[400];
    for (size_t i = 0; i < N_KEYS; i++)
        if (keys[i].def) set_value(c, &keys[i], keys[i].def, why, sizeof why);
}

void config_reset_variant_fields(Config *c) {
    char why[400];
    for (size_t i = 0; i < N_KEYS; i++)
        if (keys[i].vfield) set_value(c, &keys[i], keys[i].def, why, sizeof why);
}

int config_differences(const Config *from, const Config *to, char *buf, size_t len) {
    char a[CFG_STR + 8], b[CFG_STR + 8];
    int n = 0;
    size_t used = 0;
    if (buf && len) buf[0] = 0;
    for (size_t i = 0; i < N_KEYS; i++) {
        const KeyDef *k = &keys[i];
        if (k->type == KT_VARIANT || k->off == offsetof(Config, variant)) continue;
        format_value(from, k, a, sizeof a);
        format_value(to, k, b, sizeof b);
        if (!strcmp(a, b)) continue;
        if (buf && used < len) {
            int w = snprintf(buf + used, len - used, "%s%s=%s", n ? " " : "", k->name, b);
            used = w < 0 || (size_t)w >= len - used ? len : used + (size_t)w;
        }
        n++;
    }
    return n;
}

/* The key nearest to a mistyped one (at most a third of its letters
 * wrong, two at least), or NULL. */
static const char *near_key(const char *name) {
    const char *near = NULL;
    size_t best = strlen(name) / 3 > 2 ? strlen(name) / 3 : 2;
    for (size_t i = 0; i < N_KEYS; i++) {
        size_t d = str_edits(name, keys[i].name);
        if (d <= best && (!near || d < best)) near = keys[i].name, best = d;
    }
    return near;
}

/* Up to four keys whose names contain name (of three letters or more),
 * comma-separated into out ("" when none): "seed" names init_seed,
 * data_seed and bigram_seed, which no edit distance reaches. */
static void keys_containing(const char *name, char *out, size_t n) {
    out[0] = 0;
    if (strlen(name) < 3) return;
    size_t used = 0;
    for (size_t i = 0, k = 0; i < N_KEYS && k < 4 && used < n; i++)
        if (strstr(keys[i].name, name))
            used += (size_t)snprintf(out + used, n - used, "%s%s", k++ ? ", " : "", keys[i].name);
}

/* Keys gatelab no longer has, each with the one-line reason a config or
 * --set naming it is refused. Run files recorded them in /config/text,
 * where config_load_string reads them as settings of nothing. */
static const struct {
    const char *name, *why;
} retired_keys[] = {
    {"reproducible",
     "retired: the default products give the same bits on every CPU; see docs/speed.md"},
};

/* The reason key is retired, or NULL when it is not. */
static const char *retired_reason(const char *key) {
    for (size_t i = 0; i < sizeof retired_keys / sizeof retired_keys[0]; i++)
        if (!strcmp(key, retired_keys[i].name)) return retired_keys[i].why;
    return NULL;
}

/* Apply key=value; -1 with the reason (no location) in why. */
static int set_key(Config *cfg, const char *key, const char *value, char *why, size_t whylen) {
    const char *retired = retired_reason(key);
    if (retired) return seterr(why, whylen, "key '%s': %s", key, retired);
    const KeyDef *k = find_key(key);
    const char *near = k ? NULL : near_key(key);
    if (near) return seterr(why, whylen, "unknown key '%.64s' (did you mean %s?)", key, near);
    char some[256];
    if (!k) keys_containing(key, some, sizeof some);
    if (!k && some[0])
        return seterr(why, whylen, "unknown key '%.64s' (keys like it: %s)", key, some);
    if (!k) return seterr(why, whylen, "unknown key '%.64s'", key);
    return set_value(cfg, k, value, why, whylen);
}

/* ------------------------------------------------------------ INI input */

/* Parse state of one INI text (inifile.h). */
typedef struct {
    Config *cfg;
    int recorded;     /* a run file's /config/text: retired keys read as no-ops */
    int seen[N_KEYS]; /* line of each key's first setting since the last
                       * `variant =` line, 0 = not yet */
} Parse;

static int parse_key(void *user, const IniLine *l, char *why, size_t whylen) {
    Parse *p = user;
    if (p->recorded && retired_reason(l->key)) return 0;
    if (l->section[0] && parse_enum(l->section, section_names, &(int){0}))
        return seterr(why, whylen,
                      "unknown section [%.64s] (expected model, variant, data or train)",
                      l->section);
    const KeyDef *k = find_key(l->key);
    if (k && p->seen[k - keys]) /* last-wins would hide a typo'd edit; the sweep refuses too */
        return seterr(why, whylen, "duplicate key '%s' (first at line %d)", l->key,
                      p->seen[k - keys]);
    /* `variant = ID` rewrites the shape keys above it, so the keys after it
     * (e.g. a resolved config's every field) start a new scope */
    if (k && k->type == KT_VARIANT)
        for (size_t i = 0; i < N_KEYS; i++) p->seen[i] = 0;
    if (k) p->seen[k - keys] = l->line;
    return set_key(p->cfg, l->key, l->value, why, whylen);
}

int config_load_file(Config *cfg, const char *path, char *err, size_t errlen) {
    Parse p = {.cfg = cfg};
    IniHandlers h = {parse_key, NULL, &p};
    return ini_read(path, NULL, &h, err, errlen);
}

int config_load_string(Config *cfg, const char *text, const char *name, char *err, size_t errlen) {
    if (!text) return seterr(err, errlen, "%s: no text", name ? name : "<string>");
    Parse p = {.cfg = cfg, .recorded = 1};
    IniHandlers h = {parse_key, NULL, &p};
    return ini_read(name ? name : "<string>", text, &h, err, errlen);
}

int config_set(Config *cfg, const char *kv, char *err, size_t errlen) {
    char buf[CFG_STR + 128];
    if (str_copy(buf, sizeof buf, kv)) return seterr(err, errlen, "--set '%.40s...': too long", kv);
    char *eq = strchr(buf, '=');
    if (!eq) return seterr(err, errlen, "--set '%.64s': expected key=value", kv);
    *eq = 0;
    char *key = buf, *val = eq + 1;
    while (*key == ' ' || *key == '\t') key++;
    for (char *e = eq; e > key && (e[-1] == ' ' || e[-1] == '\t');) *--e = 0;
    while (*val == ' ' || *val == '\t') val++;
    for (char *e = val + strlen(val); e > val && (e[-1] == ' ' || e[-1] == '\t');) *--e = 0;
    char why[1024];
    if (set_key(cfg, key, val, why, sizeof why)) return seterr(err, errlen, "--set: %s", why);
    return 0;
}

int config_apply_fields(Config *c, const char *fields, char *err, size_t errlen) {
    config_reset_variant_fields(c);
    char buf[256];
    if (str_copy(buf, sizeof buf, fields))
        return seterr(err, errlen, "variant fields '%.40s...': too long", fields);
    for (char *save = NULL, *kv = strtok_r(buf, " ", &save); kv; kv = strtok_r(NULL, " ", &save))
        if (config_set(c, kv, err, errlen)) return -1;
    return 0;
}

/* The catalog row's shape change, then its fields (variants.c's data). */
int config_apply_variant(Config *cfg, const char *id, char *err, size_t errlen) {
    const char *fields = variant_fields(id);
    if (!fields) return variant_unknown(id, err, errlen);
    Config c = *cfg; /* cfg is untouched on failure */
    char why[400];
    if (variant_apply_shape(&c, id, err, errlen)) return -1;
    if (config_apply_fields(&c, fields, why, sizeof why))
        return seterr(err, errlen, "variant %s: %s", id, why);
    str_copy(c.variant, sizeof c.variant, id);
    *cfg = c;
    return 0;
}

/* Every key in its table range (a value set in code, not parsed, too). */
int config_check_ranges(const Config *c, char *err, size_t n) {
    char why[80], val[CFG_STR + 8];
    for (size_t i = 0; i < N_KEYS; i++)
        if (check_range(c, &keys[i], why, sizeof why)) {
            format_value(c, &keys[i], val, sizeof val);
            return seterr(err, n, "%s %s is %s", keys[i].name, val, why);
        }
    return 0;
}

/* ----------------------------------------------------------- text output */

int config_to_text(const Config *cfg, char *buf, size_t len) {
    size_t used = 0;
    int sec = -1;
    char val[CFG_STR + 8];
    int w = snprintf(buf, len,
                     "; gatelab resolved config; variant_name "
                     "records the id, every field it set follows\n");
    if (w < 0 || (size_t)w >= len) return -1;
    used = (size_t)w;
    for (size_t i = 0; i < N_KEYS; i++) {
        const KeyDef *k = &keys[i];
        if (!(k->out & K_TEXT)) continue;
        format_value(cfg, k, val, sizeof val);
        w = snprintf(buf + used, len - used, "%s%s%s%s = %s\n", (int)k->sec != sec ? "[" : "",
                     (int)k->sec != sec ? section_names[k->sec] : "",
                     (int)k->sec != sec ? "]\n" : "", k->name, val);
        if (w < 0 || (size_t)w >= len - used) return -1;
        used += (size_t)w;
        sec = (int)k->sec;
    }
    return 0;
}

/* 1 when every line of old occurs in now, in order: now only adds lines. */
static int lines_within(const char *old, const char *now) {
    while (*old) {
        size_t lo = strcspn(old, "\n");
        for (int found = 0; !found;) {
            if (!*now) return 0;
            size_t ln = strcspn(now, "\n");
            found = ln == lo && !memcmp(old, now, lo);
            now += ln + (now[ln] == '\n');
        }
        old += lo + (old[lo] == '\n');
    }
    return 1;
}

int config_text_same(const char *was, const char *now) {
    if (!strcmp(was, now)) return 1;
    if (!lines_within(was, now)) return 0;
    Config c;
    char why[256], *text = malloc(1 << 16);
    config_defaults(&c);
    int same = text && config_load_string(&c, was, "the checkpoint", why, sizeof why) == 0 &&
               config_to_text(&c, text, 1 << 16) == 0 && !strcmp(text, now);
    free(text);
    return same;
}

void config_visit(const Config *cfg, ConfigVisit fn, void *ctx) {
    char val[CFG_STR + 8];
    for (size_t i = 0; i < N_KEYS; i++) {
        const KeyDef *k = &keys[i];
        if (!(k->out & K_VISIT)) continue;
        format_value(cfg, k, val, sizeof val);
        int is_int = k->type == KT_INT || k->type == KT_BOOL || k->type == KT_U64;
        fn(k->name, val, is_int, k->type == KT_FLOAT, ctx);
    }
}
