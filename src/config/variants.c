/* variants.c: the catalog of named variants (docs/variants.md A to F).
 *
 * A variant is data: one table row is key=value text applied through
 * config_set over the variant fields' defaults (every field not named
 * stays at its baseline value), and the parameter-matched rows also change
 * shapes relative to the config they are applied to. The same rows label a
 * config by what its fields are (config_label_variant).
 */
#include "config.h"
#include "config_derive.h"
#include "util.h"

#include <math.h>
#include <string.h>

typedef enum {
    SHAPE_SAME = 0,
    SHAPE_MORE_KV,   /* n_kv_heads doubled */
    SHAPE_MORE_Q,    /* n_heads raised, head_dim fixed */
    SHAPE_WIDER_FFN, /* d_ff raised by about g1-elem's params */
    SHAPE_NARROW_FFN /* d_ff lowered by the same amount */
} ShapeChange;

typedef struct {
    const char *id;
    const char *fields; /* "key=value ..." over the variant fields' defaults */
    ShapeChange shape;
    const char *formula;
    int key; /* the paper's headline comparison: highlighted in figures and
                summaries (VARIANT_KEY_*) */
} VariantRow;

static const VariantRow catalog[] = {
    /* A. gate positions and forms (Qiu et al. 2025) */
    {.id = "baseline",
     .fields = "",
     .key = VARIANT_KEY_BASELINE,
     .formula = "Y = softmax(Q K^T / sqrt(dh)) V, no gate"},
    {.id = "g1-elem",
     .fields = "gate_pos=g1",
     .key = VARIANT_KEY_HEADLINE,
     .formula = "Y' = Y * sigmoid(X W_theta), W_theta: d x H*dh"},
    {.id = "g2-elem",
     .fields = "gate_pos=g2",
     .formula = "V' = V * sigmoid(X W_theta), W_theta: d x Hkv*dh"},
    {.id = "g3-elem",
     .fields = "gate_pos=g3",
     .formula = "K' = K * sigmoid(X W_theta), W_theta: d x Hkv*dh"},
    {.id = "g4-elem",
     .fields = "gate_pos=g4",
     .formula = "Q' = Q * sigmoid(X W_theta), W_theta: d x H*dh"},
    {.id = "g5-elem",
     .fields = "gate_pos=g5",
     .formula = "O' = O * sigmoid(X W_theta), W_theta: d x d"},
    {.id = "g1-head",
     .fields = "gate_pos=g1 gate_gran=head",
     .key = VARIANT_KEY_OTHER,
     .formula = "Y_h' = Y_h * sigmoid(X w_h), W_theta: d x H"},
    {.id = "g2-head",
     .fields = "gate_pos=g2 gate_gran=head",
     .formula = "V_h' = V_h * sigmoid(X w_h), W_theta: d x Hkv"},
    {.id = "g1-shared",
     .fields = "gate_pos=g1 gate_shared=1",
     .formula = "Y_h' = Y_h * mean_h sigmoid(X W_theta)_h, shared over heads"},
    {.id = "g2-shared",
     .fields = "gate_pos=g2 gate_shared=1",
     .formula = "V_h' = V_h * mean_h sigmoid(X W_theta)_h, shared over kv heads"},
    {.id = "g1-add-silu",
     .fields = "gate_pos=g1 gate_form=add gate_act=silu",
     .formula = "Y' = Y + silu(X W_theta)"},
    {.id = "g1-mult-silu",
     .fields = "gate_pos=g1 gate_act=silu",
     .formula = "Y' = Y * silu(X W_theta)"},
    {.id = "g1-add-id",
     .fields = "gate_pos=g1 gate_form=add gate_act=identity",
     .formula = "Y' = Y + X W_theta"},
    {.id = "sdpa-rmsnorm",
     .fields = "y_mod=rmsnorm",
     .formula = "Y_h' = RMSNorm_dh(Y_h) * w, no gate"},
    {.id = "sdpa-silu", .fields = "y_mod=silu", .formula = "Y' = silu(Y), no gate"},
    {.id = "g1-const",
     .fields = "gate_pos=g1 gate_input=const",
     .formula = "Y' = Y * sigmoid(theta), theta in R^{H*dh}, zero-init"},
    {.id = "g1-ns",
     .fields = "gate_pos=g1 gate_act=ns-sigmoid",
     .formula = "Y' = Y * (0.5 + 0.5 sigmoid(X W_theta))"},

    /* B. parameter-matched baselines */
    {.id = "more-kv-heads",
     .fields = "",
     .shape = SHAPE_MORE_KV,
     .formula = "baseline with n_kv_heads doubled (needs a GQA base)"},
    {.id = "more-q-heads",
     .fields = "",
     .shape = SHAPE_MORE_Q,
     .formula = "baseline with n_heads raised (head_dim fixed) by about "
                "g1-elem's params"},
    {.id = "wider-ffn",
     .fields = "",
     .shape = SHAPE_WIDER_FFN,
     .formula = "baseline with d_ff raised by about g1-elem's params"},
    {.id = "g1-elem-matched",
     .fields = "gate_pos=g1",
     .shape = SHAPE_NARROW_FFN,
     .formula = "g1-elem with d_ff narrowed so params match baseline"},

    /* C. other sink remedies */
    {.id = "softmax1",
     .fields = "normaliser=softmax1",
     .formula = "a_ij = e^s_ij / (1 + sum_k e^s_ik)"},
    {.id = "sink-logit",
     .fields = "normaliser=sink-logit",
     .formula = "a_ij = e^s_ij / (e^b_h + sum_k e^s_ik), learned b_h"},
    {.id = "kv-bias",
     .fields = "kv_bias=1",
     .formula = "softmax(q [K; k'] / sqrt(dh)) [V; v'], learned k', v' per head"},
    {.id = "sink-token",
     .fields = "sink_token=1",
     .formula = "learned embedding prepended to every sequence, loss skips it"},
    {.id = "clipped-softmax",
     .fields = "normaliser=clipped",
     .formula = "a = clip((1 - gamma) softmax(s) + gamma, 0, 1), gamma = -alpha/T"},
    {.id = "head-gate-linear",
     .fields = "gate_pos=g1 gate_gran=head gate_input=headslice",
     .formula = "Y_h' = Y_h * sigmoid(w_h . x_{h,t} + b_h), x_{h,t} = X slice h"},
    {.id = "sigmoid-attn",
     .fields = "normaliser=sigmoid",
     .formula = "a_ij = sigmoid(s_ij - log T)"},
    {.id = "softpick",
     .fields = "normaliser=softpick",
     .formula = "a_ij = relu(e^s_ij - 1) / (sum_k |e^s_ik - 1| + eps)"},

    /* D. remedies from the literature */
    {.id = "diff-attn",
     .fields = "y_mod=rmsnorm diff_attn=1",
     .formula = "Y = (softmax(Q1 K1^T / sqrt(dh/2)) - lambda softmax(Q2 K2^T / "
                "sqrt(dh/2))) V, then per-head RMSNorm; lambda = e^(lq1.lk1) - "
                "e^(lq2.lk2) + lambda_init"},
    {.id = "ssmax",
     .fields = "ssmax=1",
     .formula = "a_ij = softmax_j(s_h ln(n_i) s_ij), n_i = i + 1 keys, learned s_h"},
    {.id = "stickbreak",
     .fields = "normaliser=stickbreak",
     .formula = "a_ij = sigmoid(s_ij) prod_{j<k<=i} (1 - sigmoid(s_ik))"},
    {.id = "fox",
     .fields = "fox=1",
     .formula = "a_ij = softmax_j(s_ij + sum_{l in (j, i]} log f_l), "
                "f_l = sigmoid(w_h . x_l + b_h) per head"},
    {.id = "registers",
     .fields = "sink_token=4",
     .formula = "4 learned embeddings prepended to every sequence, loss skips them"},
    /* E. stability controls (Wortsman et al. 2023) */
    {.id = "qk-norm",
     .fields = "qk_norm=1",
     .formula = "s_ij = RMSNorm(q_i) . RMSNorm(k_j) / sqrt(dh), per head, learned gains; no gate"},
    /* F. the gates and sink remedies of current models */
    {.id = "g1-head-narrow",
     .fields = "gate_pos=g1 gate_gran=head gate_in_dim=12",
     .formula = "Y_h' = Y_h * sigmoid(X[:, 0:12] w_h), W_theta: 12 x H"},
    {.id = "g1-head-2sig",
     .fields = "gate_pos=g1 gate_gran=head gate_act=2sigmoid gate_init=zero",
     .formula = "Y_h' = Y_h * 2 sigmoid(X w_h), W_theta: d x H, zero-init"},
    {.id = "g1-head-softplus",
     .fields = "gate_pos=g1 gate_gran=head gate_act=softplus",
     .formula = "Y_h' = Y_h * softplus(X w_h), W_theta: d x H"},
    {.id = "g1-softplus",
     .fields = "gate_pos=g1 gate_act=softplus",
     .formula = "Y' = Y * softplus(X W_theta), W_theta: d x H*dh"},
    {.id = "gated-norm",
     .fields = "gated_norm=16",
     .formula = "N(x) * sigmoid(W_up silu(W_down N(x))) after every norm, rank 16"},
    {.id = "xsa",
     .fields = "xsa=1",
     .formula = "z_t = y_t - (y_t . v_t) v_t / ||v_t||^2 per head, no gate"},
};
#define N_VARIANTS ((int)(sizeof catalog / sizeof catalog[0]))

static const VariantRow *find_variant(const char *id) {
    for (int i = 0; i < N_VARIANTS; i++)
        if (strcmp(catalog[i].id, id) == 0) return &catalog[i];
    return NULL;
}

const char *variant_id_at(int i) { return i >= 0 && i < N_VARIANTS ? catalog[i].id : NULL; }

int variant_key(const char *id) {
    const VariantRow *v = find_variant(id);
    return v ? v->key : 0;
}

const char *variant_key_id(int role) {
    for (int i = 0; i < N_VARIANTS; i++)
        if (catalog[i].key == role) return catalog[i].id;
    return NULL;
}

const char *variant_formula(const char *id) {
    const VariantRow *v = find_variant(id);
    return v ? v->formula : NULL;
}

/* d_ff change worth g1-elem's d x H*dh params per layer: SwiGLU has 3 d x ff
 * matrices, GELU 2; rounded to a multiple of 8, at least 8. */
static int ffn_delta(const Config *c) {
    double gate = (double)c->d_model * c->n_heads * config_head_dim(c);
    double per_ff = (c->mlp == MLP_GELU ? 2.0 : 3.0) * c->d_model;
    int d = 8 * (int)lround(gate / per_ff / 8.0);
    return d < 8 ? 8 : d;
}

/* Extra query heads worth g1-elem's params. With GQA (kv fixed) each head
 * adds q and o rows, 2 d dh, so dH = H/2 rounded to a multiple of n_kv_heads
 * (it must still divide H). With MHA the kv heads follow (4 d dh per head),
 * so dH = H/4. */
static int more_q_delta(const Config *c) {
    int H = c->n_heads, kv = c->n_kv_heads;
    if (kv == H) {
        int d = (int)lround(H / 4.0);
        return d < 1 ? 1 : d;
    }
    int m = (int)lround(H / (2.0 * kv));
    return (m < 1 ? 1 : m) * kv;
}

static int apply_shape(Config *c, ShapeChange s, const char *id, char *err, size_t n) {
    if (s == SHAPE_SAME) return 0;
    if (c->n_heads <= 0 || c->n_kv_heads <= 0 || c->d_model <= 0 || config_head_dim(c) <= 0)
        return seterr(err, n,
                      "variant %s needs positive d_model, n_heads, "
                      "n_kv_heads and head_dim first",
                      id);
    if (c->d_ff == 0) c->d_ff = config_auto_d_ff(c->d_model, c->mlp);
    switch (s) {
    case SHAPE_SAME: break;
    case SHAPE_MORE_KV:
        if (c->n_kv_heads >= c->n_heads)
            return seterr(err, n,
                          "variant more-kv-heads needs a GQA base "
                          "(n_kv_heads %d < n_heads %d is false)",
                          c->n_kv_heads, c->n_heads);
        if (c->n_heads % (2 * c->n_kv_heads))
            return seterr(err, n,
                          "variant more-kv-heads: doubled n_kv_heads %d "
                          "does not divide n_heads %d",
                          2 * c->n_kv_heads, c->n_heads);
        c->n_kv_heads *= 2;
        break;
    case SHAPE_MORE_Q: {
        int dh = config_head_dim(c), mha = c->n_kv_heads == c->n_heads;
        c->head_dim = dh; /* fixed while H grows, so d_model != H*dh is fine */
        c->n_heads += more_q_delta(c);
        if (mha) c->n_kv_heads = c->n_heads;
        break;
    }
    case SHAPE_WIDER_FFN: c->d_ff += ffn_delta(c); break;
    case SHAPE_NARROW_FFN: {
        int d = ffn_delta(c);
        if (c->d_ff - d < 8)
            return seterr(err, n,
                          "variant %s: d_ff %d is too small to narrow "
                          "by %d",
                          id, c->d_ff, d);
        c->d_ff -= d;
        break;
    }
    }
    return 0;
}

int variant_unknown(const char *id, char *err, size_t errlen) {
    const char *near = NULL;
    size_t best = strlen(id) / 3 > 2 ? strlen(id) / 3 : 2;
    for (int i = 0; i < N_VARIANTS; i++) {
        size_t d = str_edits(id, catalog[i].id);
        if (d <= best && (!near || d < best)) near = catalog[i].id, best = d;
    }
    char list[2048];
    size_t used = 0;
    for (int i = 0; i < N_VARIANTS && used < sizeof list; i++) {
        int k = snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", catalog[i].id);
        used += k > 0 ? (size_t)k : 0;
    }
    if (near)
        return seterr(err, errlen, "unknown variant id '%.64s' (did you mean %s?); the ids: %s", id,
                      near, list);
    return seterr(err, errlen, "unknown variant id '%.64s'; the ids: %s", id, list);
}

int variant_apply_shape(Config *cfg, const char *id, char *err, size_t errlen) {
    const VariantRow *v = find_variant(id);
    if (!v) return variant_unknown(id, err, errlen);
    return apply_shape(cfg, v->shape, id, err, errlen);
}

const char *variant_fields(const char *id) {
    const VariantRow *v = find_variant(id);
    return v ? v->fields : NULL;
}

int variant_changes_shape(const char *id) {
    const VariantRow *v = find_variant(id);
    return v && v->shape != SHAPE_SAME;
}
