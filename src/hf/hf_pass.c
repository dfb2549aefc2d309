/* hf_pass.c: a checkpoint's probe pass over windows (hf_pass.h). */
#include "hf_pass.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hf_ovrank.h"
#include "intervention.h"
#include "ops.h"
#include "probe_reduce.h"
#include "util.h"

#define LOSS_ROWS 16 /* positions whose softmax is taken at a time */

int hf_loss_sum(const float *logits, const int *targets, int T, int V, double *sum, long long *n) {
    float *probs = falloc((size_t)LOSS_ROWS * V), losses[LOSS_ROWS];
    if (!probs) return -1;
    for (int t0 = 0; t0 < T; t0 += LOSS_ROWS) {
        int rows = T - t0 < LOSS_ROWS ? T - t0 : LOSS_ROWS, cnt = 0;
        float mean = crossentropy_forward(probs, losses, logits + (size_t)t0 * V, targets + t0,
                                          rows, V, &cnt);
        *sum += (double)mean * cnt;
        *n += cnt;
    }
    free(probs);
    return 0;
}

/* Window i through the model into the reducer, and its loss. */
static int one_window(HfModel *m, const HfPassIn *in, int i, ProbeAcc *acc, float *logits,
                      HfPassOut *out, char *err, size_t errlen) {
    const int32_t *ids = in->ids + (size_t)i * in->T;
    for (int t = 0; t < in->T; t++) acc->tokens[(size_t)i * in->T + t] = ids[t];
    acc->seq = i;
    HfRun run = {.M = in->M, .iv = in->iv, .fn = probe_acc_feed, .ctx = acc, .logits = logits};
    if (hf_model_forward(m, ids, in->T, &run, err, errlen) < 0) return -1;
    if (logits && hf_loss_sum(logits, in->targets + (size_t)i * in->T, in->T, hf_model_arch(m)->V,
                              &out->loss, &out->loss_n) < 0)
        return seterr(err, errlen, "out of memory for the loss");
    return 0;
}

int hf_pass(HfModel *m, const HfPassIn *in, ProbeRecord *rec, HfPassOut *out, char *err,
            size_t errlen) {
    ProbeAcc acc;
    ProbeShape ps = hf_model_probe_shape(m, in->N, in->T, in->M);
    memset(rec, 0, sizeof *rec);
    *out = (HfPassOut){0};
    if (probe_acc_init(&acc, &ps) < 0)
        return seterr(err, errlen, "out of memory for the probe (%d windows of %d)", in->N, in->T);
    float *logits = in->targets ? falloc((size_t)in->T * hf_model_arch(m)->V) : NULL;
    int rc = in->targets && !logits ? seterr(err, errlen, "out of memory for the logits") : 0;
    double t0 = now_seconds();
    for (int i = 0; i < in->N && rc == 0; i++) {
        rc = one_window(m, in, i, &acc, logits, out, err, errlen);
        if (rc == 0 && in->progress)
            fprintf(stderr, "%s: window %d/%d (T=%d) %.1f s\n", in->progress, i + 1, in->N, in->T,
                    now_seconds() - t0);
    }
    if (rc == 0) rc = hf_ov_erank(m, &acc, err, errlen);
    out->seconds = now_seconds() - t0;
    out->loss = out->loss_n ? out->loss / (double)out->loss_n : NAN;
    if (rc == 0) {
        probe_acc_finish(&acc, rec);
        hf_model_probe_attrs(m, rec);
    }
    probe_acc_free(&acc);
    free(logits);
    return rc;
}
