/* op_embed.c: token (+ learned position) embedding lookup.
 *
 * The row n of a [B,T] layout sits at position n % T. A negative token
 * (the model's marker for its own prepended rows, e.g. the sink token)
 * contributes no token row: out gets only the position row (or zeros),
 * and the model adds its own embedding there.
 */
#include <string.h>

#include "ops.h"

/* out[N,C] = tok[tokens[n]] (+ pos[n % T]) */
void embed_forward(float *out, const int *tokens, const float *tok, const float *pos, int N, int T,
                   int C) {
    size_t c = (size_t)C;
    for (int n = 0; n < N; n++) {
        float *o = out + (size_t)n * c;
        const float *p = pos && T > 0 ? pos + (size_t)(n % T) * c : NULL;
        if (tokens[n] >= 0) {
            const float *e = tok + (size_t)tokens[n] * c;
            if (p) {
                for (size_t i = 0; i < c; i++) o[i] = e[i] + p[i];
            } else {
                memcpy(o, e, c * sizeof(float));
            }
        } else if (p) {
            memcpy(o, p, c * sizeof(float));
        } else {
            memset(o, 0, c * sizeof(float));
        }
    }
}

/* dtok[tokens[n]] += dout[n]; dpos[n % T] += dout[n] */
void embed_backward(float *dtok, float *dpos, const float *dout, const int *tokens, int N, int T,
                    int C) {
    size_t c = (size_t)C;
    for (int n = 0; n < N; n++) {
        const float *g = dout + (size_t)n * c;
        if (dtok && tokens[n] >= 0) {
            float *d = dtok + (size_t)tokens[n] * c;
            for (size_t i = 0; i < c; i++) d[i] += g[i];
        }
        if (dpos && T > 0) {
            float *d = dpos + (size_t)(n % T) * c;
            for (size_t i = 0; i < c; i++) d[i] += g[i];
        }
    }
}
