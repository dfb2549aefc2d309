/* model_stages.h: the stages model.c's passes share with the files that
 * hold them: norm placement, GatedNorm sites and the residual add
 * (model_norm.c), the gate's scores and the backward of one gate
 * application (model_gate.c). N is the row count (B * Ti), rows of d.
 * Not a public interface. */
#ifndef GATELAB_MODEL_STAGES_H
#define GATELAB_MODEL_STAGES_H

#include <stddef.h>

#include "model_priv.h"
#include "ops.h"

/* ---- model_norm.c ---- */

/* One norm's weights (or their gradients) and its saved statistics. */
typedef struct {
    float *w, *b, *mean, *rstd;
} NormSite;

/* The model's main norm (RMSNorm or LayerNorm) over N rows of d: out, and
 * the statistics (mean only for LayerNorm) the backward reads. */
void norm_forward(const Model *m, float *out, float *mean, float *rstd, const float *x,
                  const float *w, const float *b, int N);

/* norm_forward's backward: writes (set) or adds d(x) into dx, adds the
 * weight (and bias) gradients into dw, db from dout. */
void norm_backward(const Model *m, int set, float *dx, float *dw, float *db, const float *dout,
                   const float *x, const float *w, const float *mean, const float *rstd, int N);

/* The norm that follows sub-layer `mlp` (0: attention) of layer l: the
 * sub-layer's own norm moved after the residual add (post), or its
 * post-norm (sandwich); weights from W (the model's or the gradients). */
NormSite post_site(const Model *m, const LayerWeights *W, LayerActs *a, int mlp);

/* A sub-layer's input from the residual x: its norm (pre, sandwich), or
 * x itself (post, where that norm follows the residual add). */
void sublayer_input(const Model *m, float *out, float *mean, float *rstd, const float *x,
                    const float *w, const float *b, int N);

/* sublayer_input's backward: adds d(x) into dx from dn = d(out). */
void sublayer_input_backward(const Model *m, float *dx, float *dw, float *db, const float *dn,
                             const float *x, const float *w, const float *mean, const float *rstd,
                             int N);

/* A norm whose output `out` is gated (gated_norm > 0): the norm writes g->y,
 * out = GatedNorm(g->y). Returns where the norm itself writes: g->y, or
 * out without gated_norm. */
float *gated_norm_target(const Model *m, float *out, const GatedNormActs *g);

/* out = GatedNorm(g->y) with the site's weights, keeping g's activations
 * for the backward; nothing without gated_norm (the norm wrote out). */
void gated_norm_site_forward(const Model *m, float *out, GatedNormActs *g, const float *w_down,
                             const float *w_up, int N);

/* From d(out) to d(y), the norm's output: dout itself without gated_norm,
 * else sc->dgn_y (weight gradients into gw_down, gw_up). */
const float *gated_norm_site_backward(const Model *m, Scratch *sc, const float *dout,
                                      const GatedNormActs *g, const float *w_down,
                                      const float *w_up, float *gw_down, float *gw_up, int N);

/* out = the residual x plus the sub-layer's output f: pre x + f; post
 * N(u) with u = x + f kept for the backward; sandwich x + N'(f), with
 * N'(f) in tmp (f must stay: the backward reads it). */
void residual_place(const Model *m, float *out, const float *x, const float *f, float *u,
                    float *tmp, const NormSite *ns, int N);

/* residual_place's backward from d(out) in dres: returns the buffer
 * holding d(f). Post: dres becomes d(u), which is also the residual x's
 * gradient; sandwich: dres stays x's gradient and d(f) goes to dpost. gs
 * holds the norm's weight gradients. */
const float *residual_place_backward(const Model *m, float *dres, float *dpost, const float *f,
                                     const float *u, const NormSite *ns, const NormSite *gs, int N);

/* ---- model_gate.c ---- */

/* How the gate's scores broadcast over what it gates: one constant per
 * channel, one per head, one per head group (shared) or one per element. */
GateBroadcast gate_kind(const Config *c);

/* The scores a gate applies: the head-shared mean, or the activated ones. */
const float *gate_applied(const LayerActs *a, const Config *c);

/* gz, gs: [N, C] (or [C] for const); gbar: [N, Cg] for head-shared */
void gate_scores_forward(const Model *m, LayerActs *a, const LayerWeights *lw, int N);

/* dapplied: gradient w.r.t. the applied scores; adds into dn1 and the
 * gate's parameter gradients, except for a fused FULL gate, whose d(z) is
 * left in sc->dgz for the input projection's backward. */
void gate_scores_backward(const Model *m, RunState *s, LayerActs *a, const LayerWeights *lw,
                          LayerWeights *gw, float *dapplied, float *dn1, int N);

/* Size of the applied-score buffer (for zeroing its gradient). */
size_t gate_applied_len(const Model *m, int N);

/* Backward through one gate application. dout is the gradient w.r.t. the
 * gated output; writes the gradient w.r.t. its input into dx and
 * accumulates the applied-score gradient into dga. */
void gate_apply_back(const Model *m, float *dx, float *dga, const float *dout, const float *x,
                     const float *ga, int N, int G, int Cg);

#endif
