/* op_norm.c: RMSNorm and LayerNorm over the last dim C of M rows.
 *
 * Statistics are accumulated in float over C <= a few hundred, which is
 * what PyTorch's CPU kernels do to within rounding. rstd (and mean) are
 * saved so backward needs no second pass over the statistics.
 */
#include <math.h>

#include "ops.h"

/* out[M,C] = x * rstd * w, rstd = 1 / sqrt(mean(x^2) + eps) */
void rmsnorm_forward(float *out, float *rstd, const float *inp, const float *w, int M, int C,
                     float eps) {
    size_t c = (size_t)C;
    for (size_t m = 0; m < (size_t)M; m++) {
        const float *x = inp + m * c;
        float *o = out + m * c;
        float ss = 0.0f;
        for (size_t i = 0; i < c; i++) ss += x[i] * x[i];
        float r = 1.0f / sqrtf(ss / (float)C + eps);
        rstd[m] = r;
        if (w) {
            for (size_t i = 0; i < c; i++) o[i] = x[i] * r * w[i];
        } else {
            for (size_t i = 0; i < c; i++) o[i] = x[i] * r;
        }
    }
}

/* With gw = dout * w:  dx = r * (gw - x * r^2 * mean(gw * x));
 * dw += dout * x * r. */
void rmsnorm_backward(float *dinp, float *dw, const float *dout, const float *inp, const float *w,
                      const float *rstd, int M, int C) {
    size_t c = (size_t)C;
    for (size_t m = 0; m < (size_t)M; m++) {
        const float *x = inp + m * c;
        const float *g = dout + m * c;
        float r = rstd[m];
        if (dw)
            for (size_t i = 0; i < c; i++) dw[i] += g[i] * x[i] * r;
        if (!dinp) continue;
        float dot = 0.0f;
        if (w) {
            for (size_t i = 0; i < c; i++) dot += g[i] * w[i] * x[i];
        } else {
            for (size_t i = 0; i < c; i++) dot += g[i] * x[i];
        }
        float k = r * r * r * dot / (float)C;
        float *dx = dinp + m * c;
        if (w) {
            for (size_t i = 0; i < c; i++) dx[i] += r * g[i] * w[i] - k * x[i];
        } else {
            for (size_t i = 0; i < c; i++) dx[i] += r * g[i] - k * x[i];
        }
    }
}

/* out[M,C] = (x - mean) * rstd * w + b, biased variance. w, b may be NULL. */
void layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *w,
                       const float *b, int M, int C, float eps) {
    size_t c = (size_t)C;
    for (size_t m = 0; m < (size_t)M; m++) {
        const float *x = inp + m * c;
        float *o = out + m * c;
        float s = 0.0f;
        for (size_t i = 0; i < c; i++) s += x[i];
        float mu = s / (float)C;
        float v = 0.0f;
        for (size_t i = 0; i < c; i++) v += (x[i] - mu) * (x[i] - mu);
        float r = 1.0f / sqrtf(v / (float)C + eps);
        mean[m] = mu;
        rstd[m] = r;
        for (size_t i = 0; i < c; i++) {
            float y = (x[i] - mu) * r;
            if (w) y *= w[i];
            if (b) y += b[i];
            o[i] = y;
        }
    }
}

/* With xh = (x - mean) * r and gw = dout * w:
 * dx = r * (gw - mean(gw) - xh * mean(gw * xh)); dw += dout * xh; db += dout. */
void layernorm_backward(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                        const float *w, const float *mean, const float *rstd, int M, int C) {
    size_t c = (size_t)C;
    for (size_t m = 0; m < (size_t)M; m++) {
        const float *x = inp + m * c;
        const float *g = dout + m * c;
        float mu = mean[m], r = rstd[m];
        float sg = 0.0f, sgx = 0.0f;
        for (size_t i = 0; i < c; i++) {
            float xh = (x[i] - mu) * r;
            float gw = w ? g[i] * w[i] : g[i];
            sg += gw;
            sgx += gw * xh;
            if (dw) dw[i] += g[i] * xh;
            if (db) db[i] += g[i];
        }
        if (!dinp) continue;
        sg /= (float)C;
        sgx /= (float)C;
        float *dx = dinp + m * c;
        for (size_t i = 0; i < c; i++) {
            float xh = (x[i] - mu) * r;
            float gw = w ? g[i] * w[i] : g[i];
            dx[i] += r * (gw - sg - xh * sgx);
        }
    }
}
