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
#include <stdio.h>

#include "config.h"

typedef enum {
    IV_NONE = 0,         /* the plain probe (the reference every delta is against) */
    IV_GATES_OPEN,       /* every applied gate score = the identity (1; 0 if additive) */
    IV_GATES_MEAN,       /* every applied gate score = its channel's mean over the
                            sequence's real tokens */
    IV_BOS_CLIP,         /* after each block: position 0's clip_k largest |h|
                            features clipped to the sequence's median |h| */
    IV_BOS_MEAN,         /* after each block: position 0's residual = the mean of
                            positions 1..T-1 */
    IV_NO_BOS,           /* the probe without its first token (the caller drops
                            it; the forward is plain) */
    IV_HEAD_ZERO,        /* the heads in head_zero: their output before the output
                            projection = 0 */
    IV_GATES_OPEN_LAYER, /* IV_GATES_OPEN in layer `layer` only */
    IV_GATE_CONST,       /* every applied gate score = gate_const */
    IV_MACT_MEAN,        /* after block `layer`: each massive activation
                            (massive_threshold) = its feature's mean over the
                            sequence's real tokens */
    IV_MACT_ZERO,        /* after block `layer`: each massive activation = 0 */
    IV_COUNT
} InterventionKind;

#define IV_CLIP_K_DEFAULT 3 /* bos-clip's k (= RS_HIDDEN_TOP, the stored top3) */

typedef struct Intervention {
    InterventionKind kind;
    int clip_k;                     /* IV_BOS_CLIP: features clipped (>= 1) */
    float *scratch;                 /* IV_BOS_CLIP: caller's buffer of >= T * d floats */
    int window, keep;               /* streaming evaluation: every attention sees only its
                                       first keep keys and latest window - keep ones
                                       (AttnSpec); window 0: all (any kind). A layer
                                       with a sliding window of its own keeps it unless
                                       this window is narrower (docs/MODEL.md) */
    int layer;                      /* IV_GATES_OPEN_LAYER, IV_MACT_*: the one layer changed */
    float gate_const;               /* IV_GATE_CONST: the score every gate applies */
    const unsigned char *head_zero; /* IV_HEAD_ZERO: [L * H], 1 = zeroed
                                       (layer-major) */
    double mact_abs, mact_ratio;    /* IV_MACT_*: massive_threshold's floor and
                                       median factor */
    struct FakeQuant *quant;        /* the linear layers' fake quantization and the
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
#define RS_IV_HEAD_ZERO "head-zero"
#define RS_IV_GATES_OPEN_LAYER "gates-open-layer"
#define RS_IV_GATE_CONST "gate-const"
#define RS_IV_MACT_MEAN "mact-mean"
#define RS_IV_MACT_ZERO "mact-zero"

/* What a kind is beside its forward: in `intervene all` (the five the
 * report's mechanism table has a column for each); changing one layer
 * only (Intervention.layer); changing the massive activations, classed by
 * Intervention.mact_abs and mact_ratio; needing a gated run. */
enum { IVP_IN_ALL = 1, IVP_PER_LAYER = 2, IVP_MACT = 4, IVP_NEEDS_GATES = 8, IVP_SETS_GATES = 16 };

/* One kind: its name (the RS_IV_* above), its properties (IVP_*) and its
 * line of `gatelab intervene --help` ('\n' starts a continuation). */
typedef struct {
    const char *name;
    unsigned props;
    const char *help;
} IvKindRow;

/* Every kind's row, indexed by InterventionKind (test_intervene_kinds
 * holds each row's name to its RS_IV_* constant). */
extern const IvKindRow IV_KINDS[IV_COUNT];

/* Name <-> kind (the names above). intervention_kind returns -1 for an
 * unknown name. */
const char *intervention_name(InterventionKind k);
int intervention_kind(const char *name);

/* 1 when kind k has property p (IVP_*). */
int intervention_has(InterventionKind k, unsigned p);

/* 1 when kind k changes one layer only (Intervention.layer). */
int intervention_per_layer(InterventionKind k);

/* 1 when kind k changes the massive activations (mact-mean, mact-zero),
 * classed by Intervention.mact_abs and mact_ratio. */
int intervention_mact(InterventionKind k);

/* Every kind's name but none's (and "all" first when with_all), joined
 * by ", " into out[len]. Returns out. */
char *intervention_names(char *out, size_t len, int with_all);

/* Every kind's row as `intervene --help` prints it: the name and its help,
 * then "all". */
void intervention_help(FILE *f);

/* The mact-* thresholds as text into out[len]: "|h| > A, > R x median"
 * (A, R as %g), or "thresholds not recorded" when either is NaN (a group
 * written before they were recorded). Returns out. */
char *intervention_mact_text(char *out, size_t len, double mact_abs, double mact_ratio);

/* Applied gate scores g of layer l, in place.
 * per_token: g [B, Ti, C] (rows e..Ti-1 of each sequence are real tokens);
 * else g [C] (input-independent scores, left alone by IV_GATES_MEAN). */
void iv_gate_scores(const Intervention *iv, int l, float *g, int per_token, int B, int Ti, int e,
                    int C, GateForm form);

/* Layer l's head outputs y [B, Ti, H * dh] (head h in columns h*dh..),
 * the input of its output projection, in place: IV_HEAD_ZERO zeroes the
 * marked heads on every row. */
void iv_head_output(const Intervention *iv, int l, float *y, int B, int Ti, int H, int dh);

/* Residual stream x [B, Ti, d] after block l, in place; position 0 is
 * row e of each sequence. IV_BOS_CLIP and IV_MACT_* need iv->scratch of
 * >= (Ti - e) * d floats (without it they change nothing). */
void iv_residual(const Intervention *iv, int l, float *x, int B, int Ti, int e, int d);

#endif
