/* hf_pass.h: one probe pass of a checkpoint: N windows of T token ids
 * through the forward pass (with an intervention or not), reduced by the
 * probe every run shares (probe_reduce.h) and, with targets, the mean
 * cross-entropy of the model's predictions. The checkpoint's counterpart
 * of the trainer's probe_collect; inspect, intervene and eval call it. */
#ifndef GATELAB_HF_PASS_H
#define GATELAB_HF_PASS_H

#include <stddef.h>
#include <stdint.h>

#include "hf_model.h"
#include "runfile.h"

struct Intervention;

typedef struct {
    const int32_t *ids;            /* [N, T] */
    int N, T, M;                   /* M <= T: positions with full maps */
    const int *targets;            /* [N, T]: the id position t predicts, -1 none; or NULL */
    const struct Intervention *iv; /* NULL: plain */
    const char *progress;          /* or NULL: "LABEL: window i/N ..." lines on stderr */
} HfPassIn;

typedef struct {
    double loss; /* mean cross-entropy over the targets (NaN without) */
    long long loss_n;
    double seconds;
} HfPassOut;

/* Fill rec (free with runread_probe_free; step 0) and out. -1 with one
 * line in err. */
int hf_pass(HfModel *m, const HfPassIn *in, ProbeRecord *rec, HfPassOut *out, char *err,
            size_t errlen);

/* Sum of the cross-entropy of logits[T, V] against targets[T] (-1: not
 * counted) into *sum, the count into *n; -1 when memory runs out. */
int hf_loss_sum(const float *logits, const int *targets, int T, int V, double *sum, long long *n);

#endif
