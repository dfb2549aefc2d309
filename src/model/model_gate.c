/* model_gate.c: the gate's scores (z = X W^T, or head slices, or a
 * constant theta; g = act(z), optionally averaged over a head group) and
 * the backward of one gate application, for the gate at G1..G5 that
 * model.c's passes apply (docs/MODEL.md). Declared in model_stages.h.
 */
#include <string.h>

#include "model_stages.h"
#include "ops.h"

static void zero(float *p, size_t n) { memset(p, 0, n * sizeof *p); }

/* How the gate's scores broadcast: per channel (const), per head, per head
 * group (shared) or per element. */
GateBroadcast gate_kind(const Config *c) {
    if (c->gate_input == GIN_CONST) return GB_CONST;
    if (c->gate_input == GIN_HEADSLICE || c->gate_gran == GRAN_HEAD) return GB_HEAD;
    return c->gate_shared ? GB_SHARED : GB_ELEM;
}

/* The scores a gate applies: the head-shared mean, or the activated ones. */
const float *gate_applied(const LayerActs *a, const Config *c) {
    return c->gate_shared ? a->gbar : a->gs;
}

/* ---- gate scores: z = X W^T (or head slices, or theta), g = act(z) ---- */

/* gz, gs: [N, C] (or [C] for const); gbar: [N, Cg] for head-shared */
void gate_scores_forward(const Model *m, LayerActs *a, const LayerWeights *lw, int N) {
    const Config *c = &m->cfg;
    const Dims *D = &m->dims;
    size_t n = (size_t)N * D->gate_channels;
    if (c->gate_input == GIN_CONST) {
        gate_act_forward(a->gs, lw->gate_w, (size_t)D->gate_channels, c->gate_act);
        return;
    }
    /* a FULL gate's z came with the fused input projection, unless the
     * gate reads only X's first gate_in_dim dims */
    if (c->gate_input == GIN_FULL && c->gate_in_dim)
        prefix_linear_forward(a->gz, a->n1, lw->gate_w, N, D->d, c->gate_in_dim, D->gate_channels);
    if (c->gate_input == GIN_HEADSLICE)
        headslice_linear_forward(a->gz, a->n1, lw->gate_w, lw->gate_b, N, D->H, D->d / D->H);
    gate_act_forward(a->gs, a->gz, n, c->gate_act);
    if (c->gate_shared) group_mean_forward(a->gbar, a->gs, N, D->gate_groups, D->gate_cg);
}

/* dapplied: gradient w.r.t. the applied scores; adds into dn1 and the
 * gate's parameter gradients, except for a fused FULL gate, whose d(z) is
 * left in sc->dgz for the input projection's backward. */
void gate_scores_backward(const Model *m, RunState *s, LayerActs *a, const LayerWeights *lw,
                          LayerWeights *gw, float *dapplied, float *dn1, int N) {
    const Config *c = &m->cfg;
    const Dims *D = &m->dims;
    Scratch *sc = s->sc;
    size_t n = (size_t)N * D->gate_channels;
    if (c->gate_input == GIN_CONST) {
        gate_act_backward(gw->gate_w, dapplied, lw->gate_w, (size_t)D->gate_channels, c->gate_act);
        return;
    }
    float *dgs = dapplied;
    if (c->gate_shared) {
        zero(sc->dgate, n);
        group_mean_backward(sc->dgate, dapplied, N, D->gate_groups, D->gate_cg);
        dgs = sc->dgate;
    }
    zero(sc->dgz, n);
    gate_act_backward(sc->dgz, dgs, a->gz, n, c->gate_act);
    if (c->gate_input == GIN_FULL && c->gate_in_dim)
        prefix_linear_backward(dn1, gw->gate_w, sc->dgz, a->n1, lw->gate_w, N, D->d, c->gate_in_dim,
                               D->gate_channels);
    if (c->gate_input == GIN_HEADSLICE)
        headslice_linear_backward(dn1, gw->gate_w, gw->gate_b, sc->dgz, a->n1, lw->gate_w, N, D->H,
                                  D->d / D->H);
}

/* Size of the applied-score buffer (for zeroing its gradient). */
size_t gate_applied_len(const Model *m, int N) {
    const Dims *D = &m->dims;
    if (m->cfg.gate_input == GIN_CONST) return (size_t)D->gate_channels;
    if (m->cfg.gate_shared) return (size_t)N * D->gate_cg;
    return (size_t)N * D->gate_channels;
}

/* Backward through one gate application. dout is the gradient w.r.t. the
 * gated output; writes the gradient w.r.t. its input into dx and
 * accumulates the applied-score gradient into dga. */
void gate_apply_back(const Model *m, float *dx, float *dga, const float *dout, const float *x,
                     const float *ga, int N, int G, int Cg) {
    gate_apply_backward(dx, dga, dout, x, ga, gate_kind(&m->cfg), m->cfg.gate_form, N, G, Cg);
}
