/* op_loss.c: softmax cross-entropy over the vocabulary.
 *
 * A target outside [0, V) marks a row that is not scored (the sink
 * position, padding): loss 0 and no gradient. The loss is taken as
 * logsumexp - logit[target] rather than -log(prob), which stays finite
 * when the probability underflows.
 */
#include <math.h>
#include <string.h>

#include "exactexp.h"
#include "opprof.h"
#include "ops.h"
#include "rows.h"
#include "simd.h"

static inline int counted(int target, int V) { return target >= 0 && target < V; }

/* ROWS_WIDE_N rows (n of them) from row n0: p = e^(l - max) a whole row
 * at a time (exact_expf_shifted: libm's expf bits, vectorised), the rows'
 * sums side by side (rows.h: each row's chain in index order), p scaled by
 * 1 / sum, and each row's loss. */
SIMD_BODY void ce_block_body(float *probs, float *losses, const float *logits, const int *targets,
                             size_t n0, int n, int V) {
    const size_t v = (size_t)V;
    float mx[ROWS_WIDE_N], sum[ROWS_WIDE_N];
    for (int r = 0; r < n; r++) {
        const float *l = logits + (n0 + (size_t)r) * v;
        float *p = probs + (n0 + (size_t)r) * v, m = row_max(l, v);
        mx[r] = m;
        exact_expf_shifted(p, l, m, v);
    }
    rows_wide_sums(sum, probs + n0 * v, n, v, 0);
    for (int r = 0; r < n; r++) {
        const float *l = logits + (n0 + (size_t)r) * v;
        float *p = probs + (n0 + (size_t)r) * v, inv = 1.0f / sum[r];
        for (size_t i = 0; i < v; i++) p[i] *= inv;
        int tg = targets[n0 + (size_t)r];
        losses[n0 + (size_t)r] = counted(tg, V) ? logf(sum[r]) + mx[r] - l[tg] : 0.0f;
    }
}
SIMD_KERNEL_STATIC(ce_block,
                   (float *probs, float *losses, const float *logits, const int *targets, size_t n0,
                    int n, int V),
                   (probs, losses, logits, targets, n0, n, V))

float crossentropy_forward(float *probs, float *losses, const float *logits, const int *targets,
                           int N, int V, int *count) {
    int prof = opprof_enter(OPPROF_LOSS);
    double total = 0.0;
    int cnt = 0;
    for (size_t n0 = 0; n0 < (size_t)N; n0 += ROWS_WIDE_N) {
        const int n = (size_t)N - n0 < ROWS_WIDE_N ? (int)((size_t)N - n0) : ROWS_WIDE_N;
        ce_block(probs, losses, logits, targets, n0, n, V);
    }
    for (size_t n = 0; n < (size_t)N; n++) /* the mean over counted rows, in row order */
        if (counted(targets[n], V)) {
            total += losses[n];
            cnt++;
        }
    if (count) *count = cnt;
    opprof_leave(prof);
    return cnt > 0 ? (float)(total / cnt) : 0.0f;
}

/* dlogits = (probs - onehot(target)) / count on counted rows, 0 elsewhere */
void crossentropy_backward(float *dlogits, const float *probs, const int *targets, int N, int V,
                           int count) {
    if (count <= 0) { /* no row counted */
        if (N > 0 && V > 0) memset(dlogits, 0, (size_t)N * (size_t)V * sizeof *dlogits);
        return;
    }
    int prof = opprof_enter(OPPROF_LOSS);
    size_t v = (size_t)V;
    float scale = 1.0f / (float)count;
    for (size_t n = 0; n < (size_t)N; n++) {
        int tg = targets[n];
        float *d = dlogits + n * v;
        if (!counted(tg, V)) {
            memset(d, 0, v * sizeof *d);
            continue;
        }
        const float *p = probs + n * v;
        for (size_t i = 0; i < v; i++) d[i] = p[i] * scale;
        d[tg] -= scale;
    }
    opprof_leave(prof);
}
