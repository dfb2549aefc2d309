/* intervention.h: inference-time changes to the forward pass, for
 * `gatelab intervene` (definitions: docs/metrics.md "Interventions").
 *
 * An intervention is data handed to model_forward_iv; training calls
 * model_forward, which is model_forward_iv with NULL, so no training step
 * ever runs any of this. Each function below edits one buffer of the
 * forward in place, on the real rows (a sink token's row is skipped). */
#ifndef GATELAB_INTERVENTION_H
#define GATELAB_INTERVENTION_H

#include <stddef.h>

#include "config.h"

typedef enum {
    IV_NONE = 0,   /* the plain probe (the reference every delta is against) */
    IV_GATES_OPEN, /* every applied gate score = the identity (1; 0 if additive) */
    IV_GATES_MEAN, /* every applied gate score = its channel's mean over the
                      sequence's real tokens */
    IV_BOS_CLIP,   /* after each block: position 0's clip_k largest |h|
                      features clipped to the sequence's median |h| */
    IV_BOS_MEAN,   /* after each block: position 0's residual = the mean of
                      positions 1..T-1 */
    IV_NO_BOS,     /* the probe without its first token (the caller drops
                      it; the forward is plain) */
    IV_COUNT
} InterventionKind;

#define IV_CLIP_K_DEFAULT 3 /* bos-clip's k (= RS_HIDDEN_TOP, the stored top3) */

typedef struct Intervention {
    InterventionKind kind;
    int clip_k;              /* IV_BOS_CLIP: features clipped (>= 1) */
    float *scratch;          /* IV_BOS_CLIP: caller's buffer of >= T * d floats */
    int window, keep;        /* streaming evaluation: every attention sees only its
                                first keep keys and latest window - keep ones
                                (AttnSpec); window 0: all (any kind) */
    struct FakeQuant *quant; /* the linear layers' fake quantization and the
                                sub-layer statistics (fakequant.h); NULL:
                                none (any kind) */
} Intervention;

/* Each kind's name, in InterventionKind order: the name `gatelab intervene`
 * takes and the run file's /intervene/<kind> group (runschema.h). */
#define RS_IV_NONE "none"
#define RS_IV_GATES_OPEN "gates-open"
#define RS_IV_GATES_MEAN "gates-mean"
#define RS_IV_BOS_CLIP "bos-clip"
#define RS_IV_BOS_MEAN "bos-mean"
#define RS_IV_NO_BOS "no-bos"

/* Name <-> kind (the names above). intervention_kind returns -1 for an
 * unknown name. */
const char *intervention_name(InterventionKind k);
int intervention_kind(const char *name);

/* Applied gate scores g of one layer, in place.
 * per_token: g [B, Ti, C] (rows e..Ti-1 of each sequence are real tokens);
 * else g [C] (input-independent scores, left alone by IV_GATES_MEAN). */
void iv_gate_scores(const Intervention *iv, float *g, int per_token, int B, int Ti, int e, int C,
                    GateForm form);

/* Residual stream x [B, Ti, d] after one block, in place; position 0 is
 * row e of each sequence. */
void iv_residual(const Intervention *iv, float *x, int B, int Ti, int e, int d);

#endif
