/* op_norm.c: RMSNorm and LayerNorm over the last dim C of M rows.
 *
 * Statistics are accumulated in float over C <= a few hundred, which is
 * what PyTorch's CPU kernels do to within rounding. rstd (and mean) are
 * saved so backward needs no second pass over the statistics.
 */
#include <math.h>

#include "opprof.h"
#include "ops.h"

/* Row sums are sequential over i, one chain per row, as in a plain loop;
 * ROWS rows' chains run side by side, so the adds overlap instead of
 * waiting on each other. The bits are those of one row at a time. */
#define ROWS 8

/* ss[r] = sum_i x[r][i]^2 for the n <= ROWS rows at x (row stride c). */
static void sumsq_rows(float *ss, const float *x, size_t n, size_t c) {
    for (size_t r = 0; r < n; r++) ss[r] = 0.0f;
    for (size_t i = 0; i < c; i++)
        for (size_t r = 0; r < n; r++) ss[r] += x[r * c + i] * x[r * c + i];
}

/* dot[r] = sum_i g[r][i] (* w[i]) * x[r][i], as the loop over i would. */
static void dot_rows(float *dot, const float *g, const float *w, const float *x, size_t n,
                     size_t c) {
    for (size_t r = 0; r < n; r++) dot[r] = 0.0f;
    for (size_t i = 0; i < c; i++)
        for (size_t r = 0; r < n; r++)
            dot[r] += w ? g[r * c + i] * w[i] * x[r * c + i] : g[r * c + i] * x[r * c + i];
}

/* out[M,C] = x * rstd * w, rstd = 1 / sqrt(mean(x^2) + eps) */
void rmsnorm_forward(float *out, float *rstd, const float *inp, const float *w, int M, int C,
                     float eps) {
    int prof = opprof_enter(OPPROF_NORMS);
    size_t c = (size_t)C;
    for (size_t m0 = 0; m0 < (size_t)M; m0 += ROWS) {
        size_t n = (size_t)M - m0 < ROWS ? (size_t)M - m0 : ROWS;
        float ss[ROWS];
        sumsq_rows(ss, inp + m0 * c, n, c);
        for (size_t m = m0; m < m0 + n; m++) {
            const float *x = inp + m * c;
            float *o = out + m * c;
            float r = 1.0f / sqrtf(ss[m - m0] / (float)C + eps);
            rstd[m] = r;
            if (w) {
                for (size_t i = 0; i < c; i++) o[i] = x[i] * r * w[i];
            } else {
                for (size_t i = 0; i < c; i++) o[i] = x[i] * r;
            }
        }
    }
    opprof_leave(prof);
}

/* With gw = dout * w:  dx = r * (gw - x * r^2 * mean(gw * x));
 * dw += dout * x * r. */
void rmsnorm_backward(float *dinp, float *dw, const float *dout, const float *inp, const float *w,
                      const float *rstd, int M, int C) {
    int prof = opprof_enter(OPPROF_NORMS);
    size_t c = (size_t)C;
    for (size_t m0 = 0; m0 < (size_t)M; m0 += ROWS) {
        size_t n = (size_t)M - m0 < ROWS ? (size_t)M - m0 : ROWS;
        float dot[ROWS];
        if (dinp) dot_rows(dot, dout + m0 * c, w, inp + m0 * c, n, c);
        for (size_t m = m0; m < m0 + n; m++) {
            const float *x = inp + m * c;
            const float *g = dout + m * c;
            float r = rstd[m];
            if (dw)
                for (size_t i = 0; i < c; i++) dw[i] += g[i] * x[i] * r;
            if (!dinp) continue;
            float k = r * r * r * dot[m - m0] / (float)C;
            float *dx = dinp + m * c;
            if (w) {
                for (size_t i = 0; i < c; i++) dx[i] += r * g[i] * w[i] - k * x[i];
            } else {
                for (size_t i = 0; i < c; i++) dx[i] += r * g[i] - k * x[i];
            }
        }
    }
    opprof_leave(prof);
}

/* out[M,C] = (x - mean) * rstd * w + b, biased variance. w, b may be NULL. */
void layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *w,
                       const float *b, int M, int C, float eps) {
    int prof = opprof_enter(OPPROF_NORMS);
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
    opprof_leave(prof);
}

/* With xh = (x - mean) * r and gw = dout * w:
 * dx = r * (gw - mean(gw) - xh * mean(gw * xh)); dw += dout * xh; db += dout. */
void layernorm_backward(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                        const float *w, const float *mean, const float *rstd, int M, int C) {
    int prof = opprof_enter(OPPROF_NORMS);
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
    opprof_leave(prof);
}
