/* probe_reduce.h: the one reduction of a probe, shared by trained runs
 * (src/train/probe.c) and pretrained checkpoints (gatelab inspect): fed
 * what the forward pass exposes, one layer of one sequence at a time, it
 * accumulates the arrays of a run-file probe (ProbeRecord, runschema.h):
 * the mean attention map, first-token columns, alpha0, empty rows and the
 * first-token share of the others, slot weights, gate statistics and a
 * sample, the hidden-state statistics of each block's output, and the head
 * probes (key, value and head output norms, the gate at position 0 and
 * after, W_V W_O effective ranks handed in by the caller). Every
 * definition is metrics.c's. */
#ifndef GATELAB_PROBE_REDUCE_H
#define GATELAB_PROBE_REDUCE_H

#include <stddef.h>

#include "plan.h"
#include "runfile.h"

/* What one layer of one sequence exposes (valid during the call only). */
typedef struct {
    int layer, T, H, M, C, d; /* H, C: the layer's own (its query heads, their gate channels) */
    const float *first_col;   /* [H, T]: A[t, 0] */
    const float *maps;        /* [H, M, M]: A[t, s] on the real tokens, t, s < M */
    const float *slot;        /* [H, T]: weight each query gives the extra slot, or NULL */
    const float *gates;       /* activated gate scores: row t (C of them) at
                                 gates + t * gate_stride (0: one row for every
                                 t), or NULL when C = 0 */
    int gate_stride;
    const float *hidden; /* [T, d]: the block's output (residual stream) */
    /* The head probes' inputs, each NULL when the source does not expose
     * it: keys and values as attention reads them (row t of KV head g at
     * keys + t * kv_stride + g * dh; query head h reads KV head
     * h * Hkv / H), each head's output as W_o reads it (row t of head h at
     * heads_out + t * out_stride + h * dh). */
    const float *keys, *values, *heads_out;
    int kv_stride, out_stride, Hkv, dh;
} ProbeLayer;

/* The probe's size and how its maps' rows are to be read. */
typedef struct {
    int L, H, N, T, M, C, d; /* M <= T: side of the stored maps */
    int has_slot;            /* keep attention_slot */
    int has_logits;          /* the source calls probe_acc_max_logit (keep max_logit) */
    const int *layer_heads;  /* [L]: each layer's query heads where some has fewer than H
                                (each layer fed at its own: ProbeLayer's H and C), kept as
                                the record's layer_heads; NULL: every layer H */
    const int *layer_slots;  /* [L]: each layer's extra slots where they differ across
                                layers, kept as the record's layer_slots; NULL: every
                                layer the record's slots */
    int rows_normalised;     /* 1: every row's mass on the real tokens is 1
                                (plain softmax), or 1 less the slot's weight
                                (a sink logit in the softmax); 0: the
                                mass is read from the maps (M = T) */
    int gate_shared;         /* 1: one score vector gates every head (every layer C
                                channels, whatever its heads) */
    int threads;             /* the per-layer reductions run side by side */
} ProbeShape;

/* The reducer's private scratch, beside the record's arrays:
 * X(member, C type, dims) with RS_PROBE_ARRAYS's dims letters. ne_count
 * counts the non-empty rows per (l, h), norms holds one sequence's
 * ||h_t||, bos_votes / tok_votes the feature votes per (l, i), rownorm
 * one head's norms and scratch one block output's |h|. */
#define PROBE_ACC_SCRATCH(X)                                                                       \
    X(ne_count, float, "LH")                                                                       \
    X(norms, double, "T")                                                                          \
    X(bos_votes, int, "LD")                                                                        \
    X(tok_votes, int, "LD")                                                                        \
    X(rownorm, float, "T")                                                                         \
    X(scratch, float, "TD")

typedef struct {
    ProbeShape s;
    int seq;   /* the sequence probe_acc_feed adds to */
    int Ns;    /* gate-sampled sequences (the S letter) */
    Plan plan; /* the arrays' plan (plan.h); plan.used: bytes handed out so far */
    /* One member per RS_PROBE_ARRAYS entry, named as the record names it,
     * holding sums until probe_acc_finish turns them into the stored
     * values: tokens are the caller's to fill; gate_channel_mean,
     * gate_below, gate_stats[0], row_empty, first_nonempty, attention_slot
     * and the head norms are sums; resid_share counts. max_logit and
     * ov_erank stay NULL until their call; grad_in_norm, targets and
     * gate_w_norm are the trainer's, left NULL here. */
#define PROBE_ACC_MEMBER(member, ctype, cls, hid, name, dims, kind, desc) ctype *member;
    RS_PROBE_ARRAYS(PROBE_ACC_MEMBER)
#undef PROBE_ACC_MEMBER
#define PROBE_ACC_SCRATCH_MEMBER(member, ctype, dims) ctype *member;
    PROBE_ACC_SCRATCH(PROBE_ACC_SCRATCH_MEMBER)
#undef PROBE_ACC_SCRATCH_MEMBER
    long long k_fed, v_fed, o_fed, g_fed; /* (layer, sequence) pairs that fed each */
} ProbeAcc;

/* Zeroed accumulators; tokens [N, T] are the caller's to fill. -1 when
 * memory runs out (a is then freed). */
int probe_acc_init(ProbeAcc *a, const ProbeShape *s);
/* Add layer pl of sequence seq (each (layer, seq) once). */
void probe_acc_layer(ProbeAcc *a, int seq, const ProbeLayer *pl);
/* The same as a layer callback: acc is a ProbeAcc, the sequence its seq. */
void probe_acc_feed(void *acc, const ProbeLayer *pl);
/* Keep v if it is the largest attention logit of layer l so far (a
 * source that exposes its logits, has_logits in its shape, calls it; the
 * record's max_logit stays NULL otherwise). -1 when memory runs out or
 * the shape has no has_logits. */
int probe_acc_max_logit(ProbeAcc *a, int l, double v);
/* Keep v as the W_V W_O effective rank of head h of layer l (a source
 * with the weights calls it for every head; ov_erank stays NULL
 * otherwise). -1 when memory runs out. */
int probe_acc_ov_erank(ProbeAcc *a, int l, int h, double v);
/* Means from sums, then hand the arrays to out (free them with
 * runread_probe_free); out's attributes but the shape are the caller's. */
void probe_acc_finish(ProbeAcc *a, ProbeRecord *out);
/* Free every array a holds (what the plan gave and finish has not handed
 * over) and zero a; safe on a zeroed or finished a. */
void probe_acc_free(ProbeAcc *a);
/* The bytes the plan hands out for shape s: probe_acc_init's arrays plus
 * ov_erank and, with has_logits, max_logit (allocated on their first
 * call), exactly: the
 * count pass of the same layout (plan.h); saturates at PLAN_TOO_MUCH. */
size_t probe_acc_bytes(const ProbeShape *s);

/* Layer l's query heads: layer_heads[l] (a record's or shape's), H when
 * NULL. */
int probe_layer_heads(const int *layer_heads, int H, int l);
/* Layer l's own gate channels of a probe with C channels and H query
 * heads: C when layer_heads is NULL (every layer has them all, whatever
 * heads they serve: C = H per-head or C = Hkv per-KV-head gates, C = 1
 * one score) or the gate is head-shared, else C / H for each of the
 * layer's query heads. The reducer's and the reader's (runread_layer_channels)
 * one definition. */
int probe_layer_channels(const int *layer_heads, int H, int C, int shared, int l);

/* probe_reduce_sinks.c, the measures beyond position 0 (metrics_sinks.h),
 * called by the reducer: add head h's key alphas of one sequence's layer,
 * add the cosines to position 0 and the residual exceedances of one block
 * output whose median |h| is `median`, and turn the exceedance counts into
 * shares and set out's D. */
void probe_sinks_head(ProbeAcc *a, int seq, const ProbeLayer *pl, int h);
void probe_sinks_hidden(ProbeAcc *a, int seq, const ProbeLayer *pl, double median);
void probe_sinks_finish(ProbeAcc *a, ProbeRecord *out);

#endif
