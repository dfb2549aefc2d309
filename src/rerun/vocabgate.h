/* vocabgate.h: the layer-0 gate over the whole vocabulary (gatelab gates
 * --vocab; docs/metrics.md "The layer-0 gate over the vocabulary"): for
 * every token id v, the scores layer 0's gate gives v when v is the first
 * token of the sequence (a one-token window [v]), reduced to their mean
 * over the gate's channels, through a Forward (forward.h) of either weight
 * source, many windows to a forward. */
#ifndef GATELAB_VOCABGATE_H
#define GATELAB_VOCABGATE_H

#include <stddef.h>

#include "forward.h"

#define VG_TOP 10    /* the most open and the most shut tokens listed */
#define VG_BATCH 512 /* one-token windows per forward, at most */
/* A trained run's state holds logits for its windows (B x V floats) that
 * first_gates never fills: B is cut to keep them within this many. */
#define VG_LOGIT_FLOATS ((size_t)1 << 26)

typedef struct {
    int V, C;                /* vocabulary, gate channels a token's scores hold */
    int C0;                  /* layer 0's own channels (forward_layer_channels), the first
                                C0 of the C: the others, of heads layer 0 lacks, are NaN */
    int bounded;             /* the scores lie in [0, 1] (else raw act(XW): no "shut" claim) */
    double *mean;            /* [V]: token v's mean score over the C0 channels */
    double shut;             /* share of tokens whose mean is below RS_GATE_SPARSE */
    double mean_all, median; /* of mean[] over the V tokens */
    int n_top;               /* min(VG_TOP, V) */
    int open[VG_TOP];        /* the ids of the highest means, highest first */
    int closed[VG_TOP];      /* the ids of the lowest means, lowest first */
} VocabGates;

/* Every token of f's vocabulary through layer 0's gate into out (free with
 * vocab_gates_free), summarised (vocab_gates_summarise). progress (or
 * NULL) is called after each forward with the tokens done so far. -1 with
 * one line in err: a run without a gate or with one whose scores read no
 * token (naming the run and its variant), too little memory, an
 * interrupt (stop.h's flag, polled between forwards). */
int vocab_gates_run(Forward *f, VocabGates *out, void (*progress)(int done, int V), char *err,
                    size_t errlen);

/* v's shut share, mean, median and the VG_TOP most open and most shut ids
 * from v->mean[V] (ties: the lower id first). -1 when out of memory. */
int vocab_gates_summarise(VocabGates *v);

void vocab_gates_free(VocabGates *v);

#endif
