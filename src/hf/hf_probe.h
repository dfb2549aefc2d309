/* hf_probe.h: reduce what each layer of a pretrained model exposes
 * (HfLayerOut) over N windows to the arrays of one run-file probe
 * (ProbeRecord, runschema.h), with the same definitions as the trainer's probe (the
 * reductions call core's metrics.c). */
#ifndef GATELAB_HF_PROBE_H
#define GATELAB_HF_PROBE_H

#include "hf_model.h"
#include "runfile.h"

typedef struct {
    int L, H, N, T, M, C, d, Ns, win;
    int threads;        /* the model's; the reductions of a layer run side by side */
    int *tokens;        /* [N, T] */
    float *attention;   /* [L, H, M, M] mean over windows */
    float *first_col;   /* [N, L, H, T] */
    float *alpha0;      /* [L, H] */
    float *row_empty;   /* [L, H]: 0, a softmax row always has mass */
    float *first_ne;    /* [L, H]: first-token share over every row t >= 1 */
    float *gate_sample; /* [L, Ns, T, C] or NULL */
    double *hist, *chan, *below, *stats; /* gates: [L,50] [L,C] [L,4] [L,4] */
    double *h_max, *h_med, *h_top3, *h_kurt, *h_ratio;
    float *scratch; /* [T * d] */
} HfProbe;

/* -1 when memory runs out. */
int hf_probe_init(HfProbe *p, const HfModel *m, int N, int T, int M);
/* Window w's tokens; call before its forward pass. */
void hf_probe_window(HfProbe *p, int w, const int32_t *ids);
/* The HfLayerFn of the forward pass (ctx = HfProbe). */
void hf_probe_layer(void *ctx, const HfLayerOut *o);
/* Means from sums, then the ProbeRecord view (pointers into p). */
void hf_probe_finish(HfProbe *p, ProbeRecord *out);
void hf_probe_free(HfProbe *p);

#endif
