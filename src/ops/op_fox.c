/* op_fox.c: the forget gate of forgetting attention (FoX, Lin et al. 2025).
 *
 * With f_l = sigmoid(z_l) per token and head, FoX adds
 * D_tj = sum_{l in (j, t]} log f_l = c_t - c_j (c_t = sum_{l<=t} log f_l) to
 * the score of key j seen from query t. Under softmax the row constant c_t
 * cancels, so the attention core only needs the per-key bias -c_j.
 */
#include <math.h>

#include "exactexp.h"
#include "ops.h"

/* log sigmoid(z) without overflow */
static float log_sigmoid(float z) { return z < 0.0f ? z - log1pf(expf(z)) : -log1pf(expf(-z)); }

/* kb[B,H,T] = -cumsum_t log sigmoid(z[B,T,H]) */
void fox_bias_forward(float *kb, const float *z, int B, int T, int H) {
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            float c = 0.0f;
            float *row = kb + ((size_t)b * H + h) * (size_t)T;
            for (int t = 0; t < T; t++) {
                c += log_sigmoid(z[((size_t)b * T + t) * H + h]);
                row[t] = -c;
            }
        }
}

/* d log f_l = -sum_{j>=l} dkb_j (a suffix sum); d z = d log f (1 - f). */
void fox_bias_backward(float *dz, const float *dkb, const float *z, int B, int T, int H) {
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            const float *row = dkb + ((size_t)b * H + h) * (size_t)T;
            float suffix = 0.0f;
            for (int t = T - 1; t >= 0; t--) {
                size_t i = ((size_t)b * T + t) * H + h;
                suffix += row[t];
                float f = exact_sigmoid(z[i]);
                dz[i] += -suffix * (1.0f - f);
            }
        }
}
