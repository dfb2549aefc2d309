/* op_loss.c: softmax cross-entropy over the vocabulary.
 *
 * A target outside [0, V) marks a row that is not scored (the sink
 * position, padding): loss 0 and no gradient. The loss is taken as
 * logsumexp - logit[target] rather than -log(prob), which stays finite
 * when the probability underflows.
 */
#include <math.h>
#include <string.h>

#include "opprof.h"
#include "ops.h"

static inline int counted(int target, int V) { return target >= 0 && target < V; }

float crossentropy_forward(float *probs, float *losses, const float *logits, const int *targets,
                           int N, int V, int *count) {
    int prof = opprof_enter(OPPROF_LOSS);
    size_t v = (size_t)V;
    double total = 0.0;
    int cnt = 0;
    for (size_t n = 0; n < (size_t)N; n++) {
        const float *l = logits + n * v;
        float *p = probs + n * v;
        float mx = -INFINITY;
        for (size_t i = 0; i < v; i++) mx = l[i] > mx ? l[i] : mx;
        float sum = 0.0f;
        for (size_t i = 0; i < v; i++) {
            p[i] = expf(l[i] - mx);
            sum += p[i];
        }
        float inv = 1.0f / sum;
        for (size_t i = 0; i < v; i++) p[i] *= inv;
        int tg = targets[n];
        if (counted(tg, V)) {
            losses[n] = logf(sum) + mx - l[tg];
            total += losses[n];
            cnt++;
        } else {
            losses[n] = 0.0f;
        }
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
