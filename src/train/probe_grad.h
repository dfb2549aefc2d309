/* probe_grad.h: the probe's training-time measures (docs/metrics.md
 * "Training-time measures"): the loss gradient's norm at each layer's input
 * per position ("gradient sinks", Chen & Yao 2026) and the gate's weight
 * norm per layer and head. */
#ifndef GATELAB_PROBE_GRAD_H
#define GATELAB_PROBE_GRAD_H

#include <stddef.h>

#include "model.h"

/* G[l, t] = mean over the N probe sequences n (those with a target) of
 * || d L_n / d h^l_{n,t} ||_2, L_n sequence n's mean next-token
 * cross-entropy over its targets != -1 and h^l the residual stream entering
 * block l (l = 0: the embeddings), t a real position. Forwards tokens and
 * targets [N, T] through s in chunks of its capacity and runs backward with
 * a gradient arena of its own, so s->grads and every weight are left as
 * they were (s's activations are the last chunk's). Returns G [L, T]
 * (malloc'd; NaN where no sequence has a target), or NULL with one line in
 * err. */
double *probe_grad_norms(const Model *m, RunState *s, const int *tokens, const int *targets, int N,
                         int T, char *err, size_t errlen);

/* W[l, g] = the Frobenius norm of layer l's gate weights (the tensor
 * layers.l.attn.gate.w: the projection's rows, head-gate-linear's slices,
 * g1-const's scores) that serve head g, the g-th of the gate's
 * dims.gate_groups heads (G1/G4: H, G2/G3: Hkv, G5: 1); biases excluded.
 * Returns W [L, G] (malloc'd) with *groups = G, or NULL with *groups = 0
 * for an ungated model (or out of memory). */
double *probe_gate_weight_norms(const Model *m, int *groups);

/* The bytes probe_grad_norms (on a RunState of capacity B) and
 * probe_gate_weight_norms allocate for N probe sequences of length T,
 * exactly: the count pass of their plans (plan.h). */
size_t probe_grad_bytes(const Model *m, int N, int T, int B);

#endif
