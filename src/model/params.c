/* params.c: the parameter table (names, shapes, offsets into one arena),
 * pointer setup, and initialisation. See model.h for the names. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "ops.h"
#include "rng.h"
#include "util.h"

_Static_assert(MAX_LAYERS == CONFIG_MAX_LAYERS, "config.h and model.h agree");

/* ---- shapes ---- */

void dims_from_config(Dims *D, const Config *c) {
    memset(D, 0, sizeof *D);
    D->L = c->n_layers;
    D->d = c->d_model;
    D->H = c->n_heads;
    D->Hkv = c->n_kv_heads;
    D->dh = c->head_dim ? c->head_dim : c->d_model / c->n_heads;
    D->ff = c->d_ff;
    D->V = c->vocab_size;
    D->qdim = D->H * D->dh;
    D->kvdim = D->Hkv * D->dh;
    D->extra_pos = c->sink_token > 0 ? c->sink_token : 0;
    switch (c->gate_pos) {
    case GATE_G1:
    case GATE_G4:
        D->gate_groups = D->H;
        D->gate_cg = D->dh;
        break;
    case GATE_G2:
    case GATE_G3:
        D->gate_groups = D->Hkv;
        D->gate_cg = D->dh;
        break;
    case GATE_G5:
        D->gate_groups = 1;
        D->gate_cg = D->d;
        break;
    case GATE_NONE:
    default:
        D->gate_groups = 0;
        D->gate_cg = 0;
        break;
    }
    if (c->gate_pos == GATE_NONE) D->gate_channels = 0;
    else if (c->gate_input == GIN_HEADSLICE) D->gate_channels = D->H;
    else if (c->gate_gran == GRAN_HEAD) D->gate_channels = D->gate_groups;
    else D->gate_channels = D->gate_groups * D->gate_cg;
}

/* ---- table building ---- */

typedef struct {
    ParamTable *t;
    int cap;
    int failed;
} Builder;

static void add(Builder *b, const char *name, int r, int c, int decay, int added) {
    if (b->failed) return;
    if (b->t->count == b->cap) {
        int cap = b->cap ? 2 * b->cap : 64;
        ParamInfo *n = realloc(b->t->info, (size_t)cap * sizeof *n);
        if (!n) {
            b->failed = 1;
            return;
        }
        b->t->info = n;
        b->cap = cap;
    }
    ParamInfo *p = &b->t->info[b->t->count++];
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    p->ndim = c > 0 ? 2 : 1;
    p->shape[0] = r;
    p->shape[1] = c > 0 ? c : 0;
    p->numel = (size_t)r * (size_t)(c > 0 ? c : 1);
    p->offset = b->t->total;
    p->decay = decay;
    p->added = added;
    b->t->total += p->numel; /* packed: total == the parameter count */
}

static void add_norm(Builder *b, const char *base, const Config *c, int d) {
    char n[PARAM_NAME];
    snprintf(n, sizeof n, "%.48s.weight", base);
    add(b, n, d, 0, 0, 0);
    if (c->norm == NORM_LAYER) {
        snprintf(n, sizeof n, "%.48s.bias", base);
        add(b, n, d, 0, 0, 0);
    }
}

/* GatedNorm's two matrices after norm `base` (gated_norm = r > 0). */
static void add_gated_norm(Builder *b, const char *base, const Config *c, int d) {
    char n[PARAM_NAME];
    if (!c->gated_norm) return;
    snprintf(n, sizeof n, "%.48s.gn_down", base);
    add(b, n, c->gated_norm, d, 1, 1);
    snprintf(n, sizeof n, "%.48s.gn_up", base);
    add(b, n, d, c->gated_norm, 1, 1);
}

/* The gate's own parameters, except a FULL gate's matrix, which joins the
 * input projection (add_layer). */
static void add_gate(Builder *b, const char *pre, const Config *c, const Dims *D) {
    char n[PARAM_NAME];
    if (c->gate_pos == GATE_NONE || model_gate_in_projection(c)) return;
    snprintf(n, sizeof n, "%.48s.gate.w", pre);
    if (c->gate_input == GIN_CONST) {
        add(b, n, D->gate_groups * D->gate_cg, 0, 0, 1);
    } else if (c->gate_input == GIN_FULL) { /* narrow input: gate_in_dim columns */
        add(b, n, D->gate_channels, c->gate_in_dim, 1, 1);
    } else if (c->gate_input == GIN_HEADSLICE) {
        add(b, n, D->H, D->d / D->H, 1, 1);
        snprintf(n, sizeof n, "%.48s.gate.b", pre);
        add(b, n, D->H, 0, 0, 1);
    }
}

static void add_layer(Builder *b, int l, const Config *c, const Dims *D) {
    char pre[32], n[PARAM_NAME];
    snprintf(pre, sizeof pre, "layers.%d", l);
#define NAME(s) (snprintf(n, sizeof n, "%s." s, pre), n)
    add_norm(b, NAME("attn_norm"), c, D->d);
    add_gated_norm(b, NAME("attn_norm"), c, D->d);
    add(b, NAME("attn.w_q"), D->qdim, D->d, 1, 0);
    add(b, NAME("attn.w_k"), D->kvdim, D->d, 1, 0);
    add(b, NAME("attn.w_v"), D->kvdim, D->d, 1, 0);
    if (model_gate_in_projection(c)) add(b, NAME("attn.gate.w"), D->gate_channels, D->d, 1, 1);
    add(b, NAME("attn.w_o"), D->d, D->qdim, 1, 0);
    if (c->qk_norm) {
        add(b, NAME("attn.q_norm"), D->dh, 0, 0, 1);
        add(b, NAME("attn.k_norm"), D->dh, 0, 0, 1);
    }
    add_gate(b, NAME("attn"), c, D);
    if (c->normaliser == NORMZ_SINK_LOGIT) add(b, NAME("attn.sink_logit"), D->H, 0, 0, 1);
    if (c->kv_bias) {
        add(b, NAME("attn.kv_bias_k"), D->H, D->dh, 0, 1);
        add(b, NAME("attn.kv_bias_v"), D->H, D->dh, 0, 1);
    }
    if (c->y_mod == YMOD_RMSNORM) add(b, NAME("attn.y_norm"), D->qdim, 0, 0, 1);
    if (c->diff_attn) add(b, NAME("attn.diff_lambda"), 4, D->dh / 2, 0, 1);
    if (c->ssmax) add(b, NAME("attn.ssmax_s"), D->H, 0, 0, 1);
    if (c->fox) {
        add(b, NAME("attn.fox_w"), D->H, D->d, 1, 1);
        add(b, NAME("attn.fox_b"), D->H, 0, 0, 1);
    }
    add_norm(b, NAME("mlp_norm"), c, D->d);
    add_gated_norm(b, NAME("mlp_norm"), c, D->d);
    if (c->mlp == MLP_SWIGLU) add(b, NAME("mlp.w_gate"), D->ff, D->d, 1, 0);
    add(b, NAME("mlp.w_up"), D->ff, D->d, 1, 0);
    add(b, NAME("mlp.w_down"), D->d, D->ff, 1, 0);
    if (c->norm_place == NORMPLACE_SANDWICH) {
        add_norm(b, NAME("attn_post_norm"), c, D->d);
        add_norm(b, NAME("mlp_post_norm"), c, D->d);
    }
#undef NAME
}

int param_table_build(ParamTable *t, const Config *c, const Dims *D) {
    Builder b = {t, 0, 0};
    memset(t, 0, sizeof *t);
    add(&b, "tok_embed", D->V, D->d, 1, 0);
    if (c->pos == POS_LEARNED) add(&b, "pos_embed", c->max_pos, D->d, 1, 0);
    /* one sink keeps its [d] shape (older run files); k registers [k, d] */
    if (c->sink_token == 1) add(&b, "sink_embed", D->d, 0, 0, 1);
    else if (c->sink_token > 1) add(&b, "sink_embed", c->sink_token, D->d, 0, 1);
    for (int l = 0; l < D->L; l++) add_layer(&b, l, c, D);
    add_norm(&b, "final_norm", c, D->d);
    add_gated_norm(&b, "final_norm", c, D->d);
    if (!c->tied_embed) add(&b, "lm_head", D->V, D->d, 1, 0);
    if (b.failed) {
        param_table_free(t);
        return -1;
    }
    return 0;
}

void param_table_free(ParamTable *t) {
    free(t->info);
    memset(t, 0, sizeof *t);
}

const ParamInfo *param_find(const ParamTable *t, const char *name) {
    for (int i = 0; i < t->count; i++)
        if (!strcmp(t->info[i].name, name)) return &t->info[i];
    return NULL;
}

static float *ptr(float *base, const ParamTable *t, const char *name) {
    const ParamInfo *p = param_find(t, name);
    return p ? base + p->offset : NULL;
}

void weights_point(Weights *w, float *base, const ParamTable *t, const Config *c) {
    char n[PARAM_NAME];
    memset(w, 0, sizeof *w);
    w->tok_embed = ptr(base, t, "tok_embed");
    w->pos_embed = ptr(base, t, "pos_embed");
    w->sink_embed = ptr(base, t, "sink_embed");
    w->final_norm_w = ptr(base, t, "final_norm.weight");
    w->final_norm_b = ptr(base, t, "final_norm.bias");
    w->final_gn_down = ptr(base, t, "final_norm.gn_down");
    w->final_gn_up = ptr(base, t, "final_norm.gn_up");
    w->lm_head = c->tied_embed ? w->tok_embed : ptr(base, t, "lm_head");
    for (int l = 0; l < c->n_layers && l < MAX_LAYERS; l++) {
        LayerWeights *lw = &w->layer[l];
#define P(s) (snprintf(n, sizeof n, "layers.%d." s, l), ptr(base, t, n))
        lw->attn_norm_w = P("attn_norm.weight");
        lw->attn_norm_b = P("attn_norm.bias");
        lw->w_q = P("attn.w_q");
        lw->w_k = P("attn.w_k");
        lw->w_v = P("attn.w_v");
        lw->w_o = P("attn.w_o");
        lw->q_norm = P("attn.q_norm");
        lw->k_norm = P("attn.k_norm");
        lw->gate_w = P("attn.gate.w");
        lw->gate_b = P("attn.gate.b");
        lw->sink_logit = P("attn.sink_logit");
        lw->kv_bias_k = P("attn.kv_bias_k");
        lw->kv_bias_v = P("attn.kv_bias_v");
        lw->y_norm = P("attn.y_norm");
        lw->diff_lambda = P("attn.diff_lambda");
        lw->ssmax_s = P("attn.ssmax_s");
        lw->fox_w = P("attn.fox_w");
        lw->fox_b = P("attn.fox_b");
        lw->mlp_norm_w = P("mlp_norm.weight");
        lw->mlp_norm_b = P("mlp_norm.bias");
        lw->w_gate = P("mlp.w_gate");
        lw->w_up = P("mlp.w_up");
        lw->w_down = P("mlp.w_down");
        lw->attn_post_norm_w = P("attn_post_norm.weight");
        lw->attn_post_norm_b = P("attn_post_norm.bias");
        lw->mlp_post_norm_w = P("mlp_post_norm.weight");
        lw->mlp_post_norm_b = P("mlp_post_norm.bias");
        lw->attn_gn_down = P("attn_norm.gn_down");
        lw->attn_gn_up = P("attn_norm.gn_up");
        lw->mlp_gn_down = P("mlp_norm.gn_down");
        lw->mlp_gn_up = P("mlp_norm.gn_up");
#undef P
    }
}

/* ---- initialisation (MODEL.md "Initialisation") ---- */

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

static void init_tensor(float *p, const ParamInfo *pi, const Config *c, Rng *r) {
    const char *n = pi->name;
    float std = c->init_std;
    if (ends_with(n, "norm.weight") || ends_with(n, "q_norm") || ends_with(n, "k_norm") ||
        ends_with(n, "y_norm")) {
        for (size_t i = 0; i < pi->numel; i++) p[i] = 1.0f;
        return;
    }
    if (ends_with(n, "ssmax_s")) { /* s ln(seq_len) = 1: softmax at full length */
        float s0 = 1.0f / logf((float)(c->seq_len > 2 ? c->seq_len : 2));
        for (size_t i = 0; i < pi->numel; i++) p[i] = s0;
        return;
    }
    if (ends_with(n, "diff_lambda")) std = 0.1f; /* as the official code */
    if (ends_with(n, ".bias") || ends_with(n, "gate.b") || ends_with(n, "fox_b") ||
        ends_with(n, "sink_logit") ||
        ((c->gate_input == GIN_CONST || c->gate_init == GINIT_ZERO) && ends_with(n, "gate.w")))
        return; /* zeros: g1-const starts at sigma(0) = 0.5, gate_init zero at act(0) */
    if (ends_with(n, "w_o") || ends_with(n, "w_down")) std /= sqrtf(2.0f * (float)c->n_layers);
    for (size_t i = 0; i < pi->numel; i++) p[i] = std * (float)rng_normal(r);
}

int model_shape(Model *m, const Config *cfg, char *err, size_t errlen) {
    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    dims_from_config(&m->dims, cfg);
    if (m->dims.L > MAX_LAYERS)
        return seterr(err, errlen, "n_layers %d exceeds %d", m->dims.L, MAX_LAYERS);
    if (param_table_build(&m->table, cfg, &m->dims) != 0)
        return seterr(err, errlen, "out of memory building the parameter table");
    return 0;
}

int model_init(Model *m, const Config *cfg, char *err, size_t errlen) {
    if (model_shape(m, cfg, err, errlen) != 0) return -1;
    size_t total = m->table.total; /* the table is freed before the message */
    m->params = total <= SIZE_MAX / sizeof(float) ? zalloc_aligned(total * sizeof(float)) : NULL;
    if (!m->params) {
        param_table_free(&m->table);
        return seterr(err, errlen, "out of memory for %zu parameters (%zu bytes)", total,
                      total * sizeof(float));
    }
    weights_point(&m->w, m->params, &m->table, cfg);
    /* every tensor gets its own stream, so adding a variant's tensor never
     * changes the initial values of the baseline's tensors */
    for (int i = 0; i < m->table.count; i++) {
        Rng r;
        const ParamInfo *pi = &m->table.info[i];
        unsigned long long h = 1469598103934665603ULL;
        for (const char *s = pi->name; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
        rng_seed4(&r, cfg->init_seed, h, 0, 0);
        init_tensor(m->params + pi->offset, pi, cfg, &r);
    }
    return 0;
}

void model_free(Model *m) {
    free(m->params);
    param_table_free(&m->table);
    memset(m, 0, sizeof *m);
}

size_t model_added_params(const Model *m) {
    size_t n = 0;
    for (int i = 0; i < m->table.count; i++)
        if (m->table.info[i].added) n += m->table.info[i].numel;
    return n;
}
