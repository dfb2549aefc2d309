/* model_state.c: a RunState's memory (runstate_init, runstate_bytes,
 * runstate_free): one plan (plan.h) lays out every activation and scratch
 * buffer of the passes in model.c, the gradients and the token rows in one
 * arena (or, for a RunState that runs on lent activations, all but the
 * activations); its counting pass is runstate_bytes. Also which of the gradients
 * the backward zeroes before it adds into them (grads_zero_added), and
 * which weights the forward reads packed (model_pack_forward), and the
 * lending of one RunState's activations to another (runstate_lend). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attn_remedies.h"
#include "model_priv.h"
#include "ops.h"
#include "util.h"

/* ---- memory plan (plan.h): one pass counts, the second hands out ---- */

static float *take(Plan *b, size_t n) { return plan_floats(b, n); }

int model_fused_cols(const Model *m) {
    const Dims *D = &m->dims;
    return D->qdim + 2 * D->kvdim + (model_gate_in_projection(&m->cfg) ? D->gate_channels : 0);
}

/* A GatedNorm site's saved activations (all NULL without gated_norm). */
static void plan_gated_norm(GatedNormActs *g, Plan *b, const Model *m, size_t N) {
    const size_t r = (size_t)m->cfg.gated_norm, d = (size_t)m->dims.d;
    memset(g, 0, sizeof *g);
    if (!r) return;
    g->y = take(b, N * d);
    g->h = take(b, N * r);
    g->s = take(b, N * r);
    g->u = take(b, N * d);
}

static void plan_layer(LayerActs *a, Plan *b, const Model *m, size_t N, int B, int Ti) {
    const Dims *D = &m->dims;
    const Config *c = &m->cfg;
    size_t att = (size_t)B * D->H * Ti * Ti;
    a->x_in = take(b, N * D->d);
    a->n1 = take(b, N * D->d);
    a->mean1 = take(b, N);
    a->rstd1 = take(b, N);
    /* a q or k that no gate or norm changes is projected straight into the
     * buffer RoPE rotates in place: nothing reads it before rotation */
    a->qr = take(b, N * D->qdim);
    a->kr = take(b, N * D->kvdim);
    a->q = c->gate_pos != GATE_G4 && !c->qk_norm ? a->qr : take(b, N * D->qdim);
    a->k = c->gate_pos != GATE_G3 && !c->qk_norm ? a->kr : take(b, N * D->kvdim);
    a->v = take(b, N * D->kvdim);
    if (c->gate_pos != GATE_NONE) {
        size_t per = c->gate_input == GIN_CONST ? 1 : N;
        a->gz = take(b, per * D->gate_channels);
        a->gs = take(b, per * D->gate_channels);
        if (c->gate_shared) a->gbar = take(b, N * D->gate_cg);
    }
    a->qg = c->gate_pos == GATE_G4 ? take(b, N * D->qdim) : a->q;
    a->kg = c->gate_pos == GATE_G3 ? take(b, N * D->kvdim) : a->k;
    a->vg = c->gate_pos == GATE_G2 ? take(b, N * D->kvdim) : a->v;
    if (c->qk_norm) {
        a->qn = take(b, N * D->qdim);
        a->kn = take(b, N * D->kvdim);
        a->qrstd = take(b, N * D->H);
        a->krstd = take(b, N * D->Hkv);
    } else {
        a->qn = a->qg;
        a->kn = a->kg;
    }
    a->att = take(b, att);
    a->preatt = take(b, att);
    if (c->normaliser == NORMZ_SINK_LOGIT || c->kv_bias) a->slot = take(b, (size_t)B * D->H * Ti);
    a->y = take(b, N * D->qdim);
    a->yx = c->xsa ? take(b, N * D->qdim) : a->y;
    a->ym = a->yx;
    if (c->y_mod == YMOD_RMSNORM) {
        a->yrn = take(b, N * D->qdim);
        a->yrstd = take(b, N * D->H);
        a->ym = take(b, N * D->qdim);
    } else if (c->y_mod == YMOD_SILU) {
        a->ym = take(b, N * D->qdim);
    }
    a->yg = c->gate_pos == GATE_G1 ? take(b, N * D->qdim) : a->ym;
    a->o = take(b, N * D->d);
    a->og = c->gate_pos == GATE_G5 ? take(b, N * D->d) : a->o;
    a->x_mid = take(b, N * D->d);
    a->n2 = take(b, N * D->d);
    a->mean2 = take(b, N);
    a->rstd2 = take(b, N);
    a->h1 = take(b, N * D->ff);
    a->h3 = c->mlp == MLP_SWIGLU ? take(b, N * D->ff) : NULL;
    a->hact = c->mlp == MLP_SWIGLU ? NULL : take(b, N * D->ff); /* SwiGLU's: plan() */
    plan_gated_norm(&a->gn1, b, m, N);
    plan_gated_norm(&a->gn2, b, m, N);
    if (c->norm_place == NORMPLACE_PRE) return;
    a->u1 = c->norm_place == NORMPLACE_POST ? take(b, N * D->d) : NULL;
    a->u2 = take(b, N * D->d);
    a->pmean1 = take(b, N), a->prstd1 = take(b, N);
    a->pmean2 = take(b, N), a->prstd2 = take(b, N);
}

static void plan_scratch(Scratch *sc, Plan *b, const Model *m, size_t N, size_t Nr) {
    const Dims *D = &m->dims;
    size_t wide = (size_t)(D->qdim > D->d ? D->qdim : D->d);
    sc->dn = take(b, N * D->d);
    sc->dq = take(b, N * D->qdim);
    sc->dq2 = take(b, N * D->qdim);
    sc->dk = take(b, N * D->kvdim);
    sc->dk2 = take(b, N * D->kvdim);
    sc->dv = take(b, N * D->kvdim);
    sc->dv2 = take(b, N * D->kvdim);
    sc->dy = take(b, N * D->qdim);
    sc->dy2 = take(b, N * D->qdim);
    sc->dres = take(b, N * D->d);
    sc->dga = take(b, N * (size_t)(D->gate_channels + 1));
    sc->dgate = take(b, N * (size_t)(D->gate_channels + 1));
    sc->dgz = take(b, N * (size_t)(D->gate_channels + 1));
    sc->dh1 = take(b, N * D->ff);
    sc->dh3 = take(b, N * D->ff);
    sc->dhact = take(b, N * D->ff);
    sc->hact = m->cfg.mlp == MLP_SWIGLU ? take(b, N * D->ff) : NULL;
    sc->dxfn = take(b, N * D->d);
    sc->dlogits = take(b, Nr * D->V);
    sc->tmp = take(b, N * wide);
    sc->inv_freq = take(b, (size_t)D->dh);
    sc->cat = take(b, N * (size_t)model_fused_cols(m));
    sc->dpost = m->cfg.norm_place != NORMPLACE_PRE ? take(b, N * D->d) : NULL;
    const size_t r = (size_t)m->cfg.gated_norm;
    sc->dgn_y = r ? take(b, N * D->d) : NULL;
    sc->dgn_u = r ? take(b, N * D->d) : NULL;
    sc->dgn_s = r ? take(b, N * r) : NULL;
    sc->dgn_h = r ? take(b, N * r) : NULL;
    plan_gated_norm(&sc->gnf, b, m, N);
}

/* The RunState's arena in two parts: its activations (every layer's, the
 * backward scratch and the outputs: what runstate_lend lends) and what is
 * its own (the RoPE tables, the remedies' buffers, the gradients and the
 * token rows). runstate_init lays both out in one block, activations
 * first; runstate_init_lent the second only. */
enum { PART_ACTS = 1, PART_OWN = 2 };
typedef struct {
    RunState *s;
    const Model *m;
    int parts;
} StateLayout;

static void plan_acts(Plan *b, RunState *s, const Model *m) {
    const Dims *D = &m->dims;
    int Ti = s->T + D->extra_pos;
    size_t N = (size_t)s->B * Ti, Nr = (size_t)s->B * s->T;
    for (int l = 0; l < D->L; l++) plan_layer(&s->la[l], b, m, N, s->B, Ti);
    plan_scratch(s->sc, b, m, N, Nr);
    if (s->sc->hact) /* read only by the next product, and written again in the backward */
        for (int l = 0; l < D->L; l++) s->la[l].hact = s->sc->hact;
    s->sc->attn = take(b, attention_backward_scratch(Ti));
    s->x_out = take(b, N * D->d);
    s->xfn = take(b, N * D->d);
    s->fmean = take(b, N);
    s->frstd = take(b, N);
    s->xreal = D->extra_pos ? take(b, Nr * D->d) : s->xfn;
    s->logits = take(b, Nr * D->V);
    s->probs = take(b, Nr * D->V);
    s->losses = take(b, Nr);
}

static void plan(Plan *b, void *ctx) {
    const StateLayout *y = ctx;
    RunState *s = y->s;
    const Model *m = y->m;
    const Dims *D = &m->dims;
    int Ti = s->T + D->extra_pos;
    size_t N = (size_t)s->B * Ti, Nr = (size_t)s->B * s->T;
    if (y->parts & PART_ACTS) plan_acts(b, s, m);
    if (!(y->parts & PART_OWN)) return;
    s->rope_cos = take(b, (size_t)Ti * (D->dh / 2 + 1));
    s->rope_sin = take(b, (size_t)Ti * (D->dh / 2 + 1));
    remedy_state_plan(s->rm, m, s->B, s->T, b);
    s->grads = take(b, m->table.total);
    s->tok_int = plan_take(b, N, sizeof(int));
    s->tgt_int = plan_take(b, N, sizeof(int));
    s->tgt_real = plan_take(b, Nr, sizeof(int));
}

/* s's own activations in their own block (s->acts_mem), for a RunState
 * that has none. */
static int acts_alloc(RunState *s, const Model *m) {
    s->la = calloc((size_t)m->dims.L, sizeof *s->la);
    s->sc = calloc(1, sizeof *s->sc);
    StateLayout y = {s, m, PART_ACTS};
    if (s->la && s->sc && (s->acts_mem = plan_build(plan, &y, &s->acts_bytes))) return 0;
    free(s->la), free(s->sc);
    s->la = NULL, s->sc = NULL;
    return -1;
}

static int state_init(RunState *s, const Model *m, int B, int T, int parts) {
    memset(s, 0, sizeof *s);
    s->B = B;
    s->T = T;
    s->L = m->dims.L;
    if (parts & PART_ACTS) {
        s->la = calloc((size_t)m->dims.L, sizeof *s->la);
        s->sc = calloc(1, sizeof *s->sc);
    }
    if (remedy_active(&m->cfg)) s->rm = remedy_state_new(m);
    StateLayout y = {s, m, parts};
    if (((parts & PART_ACTS) && (!s->la || !s->sc)) || (remedy_active(&m->cfg) && !s->rm) ||
        !(s->mem = plan_build(plan, &y, &s->mem_bytes))) {
        runstate_free(s);
        return -1;
    }
    weights_point(&s->g, s->grads, &m->table, &m->cfg);
    return 0;
}

int runstate_init(RunState *s, const Model *m, int B, int T) {
    return state_init(s, m, B, T, PART_ACTS | PART_OWN);
}

int runstate_init_lent(RunState *s, const Model *m, int B, int T) {
    return state_init(s, m, B, T, PART_OWN);
}

int runstate_acts(RunState *s, const Model *m) { return s->la ? 0 : acts_alloc(s, m); }

static size_t state_bytes(const Model *m, int B, int T, int parts) {
    RunState s;
    memset(&s, 0, sizeof s);
    s.B = B, s.T = T, s.L = m->dims.L;
    LayerActs la[MAX_LAYERS];
    Scratch sc;
    s.la = la, s.sc = &sc;
    StateLayout y = {&s, m, parts};
    return plan_count(plan, &y); /* the remedies count with s.rm NULL */
}

size_t runstate_bytes(const Model *m, int B, int T) {
    return state_bytes(m, B, T, PART_ACTS | PART_OWN);
}

size_t runstate_acts_bytes(const Model *m, int B, int T) { return state_bytes(m, B, T, PART_ACTS); }

void runstate_free(RunState *s) {
    free(s->la);
    free(s->sc);
    free(s->mem);
    free(s->acts_mem);
    remedy_state_free(s->rm);
    memset(s, 0, sizeof *s);
}

static void acts_get(const RunState *s, RunActs *a) {
    *a = (RunActs){s->la,    s->sc,    s->x_out,  s->xfn,   s->fmean,
                   s->frstd, s->xreal, s->logits, s->probs, s->losses};
}

static void acts_set(RunState *s, const RunActs *a) {
    s->la = a->la, s->sc = a->sc, s->x_out = a->x_out, s->xfn = a->xfn, s->fmean = a->fmean;
    s->frstd = a->frstd, s->xreal = a->xreal, s->logits = a->logits, s->probs = a->probs;
    s->losses = a->losses;
}

int runstate_lends(const RunState *from, const RunState *s, int B) {
    return from != s && from->la && from->L == s->L && from->B >= B && from->T >= s->T;
}

int runstate_lend(RunState *s, const RunState *from, int B, RunActs *own) {
    if (!runstate_lends(from, s, B)) return -1;
    RunActs lent;
    acts_get(s, own);
    acts_get(from, &lent);
    acts_set(s, &lent);
    return 0;
}

void runstate_unlend(RunState *s, const RunActs *own) { acts_set(s, own); }

/* The maps of batch row b start at b H Ti^2, so a forward at another Ti
 * finds other data where its zeros belong, and one at more batch rows
 * finds maps no forward at this Ti has written yet. */
int layer_right_zeros(LayerActs *a, int B, int Ti) {
    if (a->zero_Ti == Ti && B <= a->zero_B) return 1;
    a->zero_Ti = Ti;
    a->zero_B = B;
    return 0;
}

/* ---- the gradients the backward writes ---- */

typedef struct {
    float *p;
    size_t n;
} Span;

/* The weight gradients model.c's backward writes with their first product
 * (matmul_backward_into with MM_SET_DW), each one such product: lm_head
 * (tok_embed when tied, which the embeddings' backward then adds to), and
 * in each layer the fused input projection, w_o and the MLP's matrices.
 * test_model_grad holds the list to the backward: an arena of NaNs before
 * it gives the gradients that zeros give. */
static int written_grads(const Model *m, const RunState *s, Span *out) {
    const Dims *D = &m->dims;
    const size_t d = (size_t)D->d, ff = (size_t)D->ff;
    int n = 0;
    out[n++] = (Span){s->g.lm_head, (size_t)D->V * d};
    for (int l = 0; l < D->L; l++) {
        const LayerWeights *g = &s->g.layer[l];
        out[n++] = (Span){g->w_q, (size_t)model_fused_cols(m) * d};
        out[n++] = (Span){g->w_o, d * (size_t)D->qdim};
        if (m->cfg.mlp == MLP_SWIGLU) out[n++] = (Span){g->w_gate, ff * d};
        out[n++] = (Span){g->w_up, ff * d};
        out[n++] = (Span){g->w_down, d * ff};
    }
    return n;
}

void grads_zero_added(const Model *m, RunState *s) {
    Span w[1 + 5 * MAX_LAYERS];
    int n = written_grads(m, s, w);
    for (int i = 1; i < n; i++) /* by address; the arena packs them in table order */
        for (int j = i; j > 0 && w[j].p < w[j - 1].p; j--) {
            Span t = w[j];
            w[j] = w[j - 1], w[j - 1] = t;
        }
    float *at = s->grads, *end = s->grads + m->table.total;
    for (int i = 0; i < n; i++) {
        if (w[i].p > at) memset(at, 0, (size_t)(w[i].p - at) * sizeof *at);
        if (w[i].p + w[i].n > at) at = w[i].p + w[i].n;
    }
    if (end > at) memset(at, 0, (size_t)(end - at) * sizeof *at);
}

/* ---- the forward's weights, packed for the products ---- */

/* A GatedNorm site's W_down [r, d] and W_up [d, r] (none without gated_norm). */
static int pack_gated_norm(GemmPacks *ps, const Model *m, const float *down, const float *up) {
    const int r = m->cfg.gated_norm, d = m->dims.d;
    if (!r) return 0;
    return gemm_packs_add(ps, down, r, d, d) | gemm_packs_add(ps, up, d, r, r);
}

/* The fused input projection's parts, each apart (model.c: fused_forward):
 * W_q, W_k, W_v and a FULL gate's W_gate, the rows of w_q on from it. */
static int pack_fused(GemmPacks *ps, const Model *m, const float *w_q) {
    const Dims *D = &m->dims;
    const int rows[4] = {D->qdim, D->kvdim, D->kvdim,
                         model_gate_in_projection(&m->cfg) ? D->gate_channels : 0};
    int rc = 0;
    for (int i = 0, off = 0; i < 4 && rows[i] > 0; off += rows[i++])
        rc |= gemm_packs_add(ps, w_q + (size_t)off * D->d, rows[i], D->d, D->d);
    return rc;
}

int model_pack_forward(const Model *m, GemmPacks *ps) {
    const Dims *D = &m->dims;
    int rc = 0;
    for (int l = 0; l < D->L; l++) {
        const LayerWeights *lw = &m->w.layer[l];
        rc |= pack_fused(ps, m, lw->w_q);
        rc |= gemm_packs_add(ps, lw->w_o, D->d, D->qdim, D->qdim);
        rc |= gemm_packs_add(ps, lw->w_gate, D->ff, D->d, D->d);
        rc |= gemm_packs_add(ps, lw->w_up, D->ff, D->d, D->d);
        rc |= gemm_packs_add(ps, lw->w_down, D->d, D->ff, D->ff);
        if (m->cfg.fox) rc |= gemm_packs_add(ps, lw->fox_w, D->H, D->d, D->d);
        rc |= pack_gated_norm(ps, m, lw->attn_gn_down, lw->attn_gn_up);
        rc |= pack_gated_norm(ps, m, lw->mlp_gn_down, lw->mlp_gn_up);
    }
    rc |= pack_gated_norm(ps, m, m->w.final_gn_down, m->w.final_gn_up);
    rc |= gemm_packs_add(ps, m->w.lm_head, D->V, D->d, D->d);
    return rc ? -1 : 0;
}
