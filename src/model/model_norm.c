/* model_norm.c: where the model's norms sit around each sub-layer (pre,
 * post, sandwich; docs/MODEL.md "Norm placement"), the GatedNorm that may
 * follow a norm (docs/MODEL.md "GatedNorm") and the residual add each
 * placement implies, forward and backward over rows of d. The passes in
 * model.c call these through model_stages.h.
 */
#include <string.h>

#include "model_stages.h"
#include "ops.h"

static void zero(float *p, size_t n) { memset(p, 0, n * sizeof *p); }

/* The model's main norm (RMSNorm or LayerNorm) over rows of d. */
void norm_forward(const Model *m, float *out, float *mean, float *rstd, const float *x,
                  const float *w, const float *b, int N) {
    if (m->cfg.norm == NORM_LAYER)
        layernorm_forward(out, mean, rstd, x, w, b, N, m->dims.d, m->cfg.norm_eps);
    else rmsnorm_forward(out, rstd, x, w, N, m->dims.d, m->cfg.norm_eps);
}

/* norm_forward's backward: writes (set) or adds d(x) into dx, adds weight
 * gradients into dw, db. */
void norm_backward(const Model *m, int set, float *dx, float *dw, float *db, const float *dout,
                   const float *x, const float *w, const float *mean, const float *rstd, int N) {
    const int d = m->dims.d;
    if (m->cfg.norm == NORM_LAYER)
        (set ? layernorm_backward_set : layernorm_backward)(dx, dw, db, dout, x, w, mean, rstd, N,
                                                            d);
    else (set ? rmsnorm_backward_set : rmsnorm_backward)(dx, dw, dout, x, w, rstd, N, d);
}

/* ---- norm placement (docs/MODEL.md "Norm placement") ---- */

/* The norm that follows sub-layer `mlp` (0: attention) of layer l: the
 * sub-layer's own norm moved after the residual add (post), or its
 * post-norm (sandwich); weights from W (the model's or the gradients). */
NormSite post_site(const Model *m, const LayerWeights *W, LayerActs *a, int mlp) {
    if (m->cfg.norm_place == NORMPLACE_SANDWICH)
        return mlp ? (NormSite){W->mlp_post_norm_w, W->mlp_post_norm_b, a->pmean2, a->prstd2}
                   : (NormSite){W->attn_post_norm_w, W->attn_post_norm_b, a->pmean1, a->prstd1};
    return mlp ? (NormSite){W->mlp_norm_w, W->mlp_norm_b, a->mean2, a->rstd2}
               : (NormSite){W->attn_norm_w, W->attn_norm_b, a->mean1, a->rstd1};
}

/* A sub-layer's input from the residual x: its norm (pre, sandwich), or
 * x itself (post, where that norm follows the residual add). */
void sublayer_input(const Model *m, float *out, float *mean, float *rstd, const float *x,
                    const float *w, const float *b, int N) {
    if (m->cfg.norm_place == NORMPLACE_POST) memcpy(out, x, (size_t)N * m->dims.d * sizeof(float));
    else norm_forward(m, out, mean, rstd, x, w, b, N);
}

/* ---- GatedNorm (docs/MODEL.md "GatedNorm") ---- */

/* A norm whose output `out` is gated (gated_norm > 0): the norm writes g->y,
 * out = GatedNorm(g->y). Returns where the norm itself writes: g->y, or
 * out without gated_norm. */
float *gated_norm_target(const Model *m, float *out, const GatedNormActs *g) {
    return m->cfg.gated_norm ? g->y : out;
}

/* out = GatedNorm(g->y), keeping g's activations; nothing without gated_norm. */
void gated_norm_site_forward(const Model *m, float *out, GatedNormActs *g, const float *w_down,
                             const float *w_up, int N) {
    if (!m->cfg.gated_norm) return;
    gated_norm_forward_packed(m->packs, out, g->h, g->s, g->u, g->y, w_down, w_up, N, m->dims.d,
                              m->cfg.gated_norm);
}

/* From d(out) to d(y), the norm's output: dout itself without gated_norm,
 * else sc->dgn_y (weight gradients into gw_down, gw_up). */
const float *gated_norm_site_backward(const Model *m, Scratch *sc, const float *dout,
                                      const GatedNormActs *g, const float *w_down,
                                      const float *w_up, float *gw_down, float *gw_up, int N) {
    const int r = m->cfg.gated_norm, d = m->dims.d;
    if (!r) return dout;
    zero(sc->dgn_y, (size_t)N * d);
    gated_norm_backward(sc->dgn_y, gw_down, gw_up, dout, g->y, g->h, g->s, g->u, w_down, w_up,
                        sc->dgn_u, sc->dgn_s, sc->dgn_h, N, d, r);
    return sc->dgn_y;
}

/* sublayer_input's backward: adds d(x) into dx from dn = d(out). */
void sublayer_input_backward(const Model *m, float *dx, float *dw, float *db, const float *dn,
                             const float *x, const float *w, const float *mean, const float *rstd,
                             int N) {
    if (m->cfg.norm_place != NORMPLACE_POST) {
        norm_backward(m, 0, dx, dw, db, dn, x, w, mean, rstd, N);
        return;
    }
    const size_t n = (size_t)N * m->dims.d;
    for (size_t i = 0; i < n; i++) dx[i] += dn[i];
}

/* out = the residual x plus the sub-layer's output f: pre x + f; post
 * N(u) with u = x + f kept for the backward; sandwich x + N'(f), with
 * N'(f) in tmp (f must stay: the backward reads it). */
void residual_place(const Model *m, float *out, const float *x, const float *f, float *u,
                    float *tmp, const NormSite *ns, int N) {
    const size_t n = (size_t)N * m->dims.d;
    switch (m->cfg.norm_place) {
    case NORMPLACE_POST:
        residual_forward(u, x, f, n);
        norm_forward(m, out, ns->mean, ns->rstd, u, ns->w, ns->b, N);
        break;
    case NORMPLACE_SANDWICH:
        norm_forward(m, tmp, ns->mean, ns->rstd, f, ns->w, ns->b, N);
        residual_forward(out, x, tmp, n);
        break;
    default: residual_forward(out, x, f, n); break;
    }
}

/* residual_place's backward from d(out) in dres: returns the buffer
 * holding d(f). Post: dres becomes d(u), which is also the residual x's
 * gradient; sandwich: dres stays x's gradient and d(f) goes to dpost. gs
 * holds the norm's weight gradients. */
const float *residual_place_backward(const Model *m, float *dres, float *dpost, const float *f,
                                     const float *u, const NormSite *ns, const NormSite *gs,
                                     int N) {
    const size_t n = (size_t)N * m->dims.d;
    if (m->cfg.norm_place == NORMPLACE_PRE) return dres;
    const int post = m->cfg.norm_place == NORMPLACE_POST;
    norm_backward(m, 1, dpost, gs->w, gs->b, dres, post ? u : f, ns->w, ns->mean, ns->rstd, N);
    if (!post) return dpost;
    memcpy(dres, dpost, n * sizeof(float));
    return dres;
}
