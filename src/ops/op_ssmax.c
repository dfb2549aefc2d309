/* op_ssmax.c: scalable softmax (SSMax, Nakanishi 2025).
 *
 * SSMax scales the logits of a query that sees n keys by s_h ln(n), with a
 * learned s per head. The factor depends only on (head, query row), so it
 * is applied to q itself before the attention core: every score q_t . k_j
 * (and the kv-bias slot's) of row t is scaled by the same s_h ln(n_t), n_t
 * the keys row t sees (ssmax_keys): t + 1, or at most the window's.
 */
#include <math.h>

#include "ops.h"

int ssmax_keys(int t, int window) { return window > 0 && window < t + 1 ? window : t + 1; }

/* out[B,T,H,dh] = q * s[h] * ln(ssmax_keys(t, window)) */
void ssmax_forward(float *out, const float *q, const float *s, int B, int T, int H, int dh,
                   int window) {
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            float ln = logf((float)ssmax_keys(t, window));
            for (int h = 0; h < H; h++) {
                size_t o = (((size_t)b * T + t) * H + h) * (size_t)dh;
                float f = s[h] * ln;
                for (int i = 0; i < dh; i++) out[o + i] = q[o + i] * f;
            }
        }
}

/* dq += dout * s[h] ln(n_t); ds[h] += sum dout * q * ln(n_t), n_t =
 * ssmax_keys(t, window) as in the forward */
void ssmax_backward(float *dq, float *ds, const float *dout, const float *q, const float *s, int B,
                    int T, int H, int dh, int window) {
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            float ln = logf((float)ssmax_keys(t, window));
            for (int h = 0; h < H; h++) {
                size_t o = (((size_t)b * T + t) * H + h) * (size_t)dh;
                float f = s[h] * ln, acc = 0.0f;
                for (int i = 0; i < dh; i++) {
                    if (dq) dq[o + i] += dout[o + i] * f;
                    acc += dout[o + i] * q[o + i];
                }
                if (ds) ds[h] += acc * ln;
            }
        }
}
