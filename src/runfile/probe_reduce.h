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

#include "runfile.h"

/* What one layer of one sequence exposes (valid during the call only). */
typedef struct {
    int layer, T, H, M, C, d;
    const float *first_col; /* [H, T]: A[t, 0] */
    const float *maps;      /* [H, M, M]: A[t, s] on the real tokens, t, s < M */
    const float *slot;      /* [H, T]: weight each query gives the extra slot, or NULL */
    const float *gates;     /* activated gate scores: row t (C of them) at
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
    int rows_normalised;     /* 1: every row's mass on the real tokens is 1
                                (plain softmax), so no row is empty; 0: the
                                mass is read from the maps (M = T) */
    int threads;             /* the per-layer reductions run side by side */
} ProbeShape;

typedef struct {
    ProbeShape s;
    int seq; /* the sequence probe_acc_feed adds to */
    int Ns;  /* gate-sampled sequences */
    int *tokens;
    float *attention, *slot, *first_col, *alpha0, *gate_sample;
    float *row_empty, *first_ne; /* sums, then the stored fractions */
    float *ne_count;             /* non-empty rows per (l, h) */
    double *hist, *chan_sum, *below, *stats, *h_max, *h_med, *h_top3, *h_kurt, *h_ratio;
    double *bos_max, *bos_ratio, *tok_max, *tok_ratio, *norms;
    int *bos_arg, *tok_arg, *bos_votes, *tok_votes; /* [L], [L], [L*d], [L*d] */
    double *max_logit; /* [L], or NULL until probe_acc_max_logit is called */
    /* probe_reduce_sinks.c: key_alpha [N, L, H, M], bos_cos [N, L, T],
     * resid [L, d] (counts, then shares) */
    float *key_alpha, *bos_cos;
    double *resid;
    float *k_norm, *v_norm, *o_norm;      /* [L, H, T] sums of ||k_t||, ||v_t||, ||o_t|| */
    long long k_fed, v_fed, o_fed, g_fed; /* (layer, sequence) pairs that fed each */
    double *g_first, *g_rest;             /* [L] sums of gate_first_rest (with gates) */
    double *ov_erank;                     /* [L, H], or NULL until probe_acc_ov_erank */
    float *rownorm;                       /* [T]: one head's norms */
    float *scratch;                       /* [T * d] */
} ProbeAcc;

/* Zeroed accumulators; tokens [N, T] are the caller's to fill. -1 when
 * memory runs out (a is then freed). */
int probe_acc_init(ProbeAcc *a, const ProbeShape *s);
/* Add layer pl of sequence seq (each (layer, seq) once). */
void probe_acc_layer(ProbeAcc *a, int seq, const ProbeLayer *pl);
/* The same as a layer callback: acc is a ProbeAcc, the sequence its seq. */
void probe_acc_feed(void *acc, const ProbeLayer *pl);
/* Keep v if it is the largest attention logit of layer l so far (a
 * source that exposes its logits calls it; the record's max_logit stays
 * NULL otherwise). -1 when memory runs out. */
int probe_acc_max_logit(ProbeAcc *a, int l, double v);
/* Keep v as the W_V W_O effective rank of head h of layer l (a source
 * with the weights calls it for every head; ov_erank stays NULL
 * otherwise). -1 when memory runs out. */
int probe_acc_ov_erank(ProbeAcc *a, int l, int h, double v);
/* Means from sums, then hand the arrays to out (free them with
 * runread_probe_free); out's attributes but the shape are the caller's. */
void probe_acc_finish(ProbeAcc *a, ProbeRecord *out);
void probe_acc_free(ProbeAcc *a);
/* The bytes probe_acc_init allocates (an estimate by terms). */
size_t probe_acc_bytes(const ProbeShape *s);

/* probe_reduce_sinks.c, the measures beyond position 0 (metrics_sinks.h),
 * called by the reducer: allocate (-1 when memory runs out), their bytes,
 * add head h's key alphas of one sequence's layer, add the cosines to
 * position 0 and the residual exceedances of one block output whose
 * median |h| is `median`, and hand the arrays to out. */
int probe_sinks_init(ProbeAcc *a);
size_t probe_sinks_bytes(const ProbeShape *s);
void probe_sinks_head(ProbeAcc *a, int seq, const ProbeLayer *pl, int h);
void probe_sinks_hidden(ProbeAcc *a, int seq, const ProbeLayer *pl, double median);
void probe_sinks_finish(ProbeAcc *a, ProbeRecord *out);

#endif
