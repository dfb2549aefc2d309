/* op_norm.c: RMSNorm and LayerNorm over the last dim C of M rows.
 *
 * Statistics are accumulated in float over C <= a few hundred, which is
 * what PyTorch's CPU kernels do to within rounding. rstd (and mean) are
 * saved so backward needs no second pass over the statistics.
 */
#include <math.h>

#include "opprof.h"
#include "ops.h"
#include "rows.h"
#include "simd.h"
#include "stream.h"

/* Row sums are sequential over i, one chain per row, as in a plain loop;
 * ROWS_WIDE_N rows' chains run side by side in the lanes of a vector (rows.h),
 * so the adds overlap instead of waiting on each other. The bits are those
 * of one row at a time. */

/* dot[r] = sum_i g[r][i] (* w[i]) * x[r][i], as the loop over i would. */
SIMD_BODY void dot_rows(float *dot, const float *g, const float *w, const float *x, int n,
                        size_t c) {
    RowWide acc = {0.0f}, v[ROWS_WIDE_N];
    for (size_t j = 0; j < c; j += ROWS_WIDE_N) {
        const int m = c - j < ROWS_WIDE_N ? (int)(c - j) : ROWS_WIDE_N;
        RowWide wj, gr, xr;
        if (w) rows_wide_load(&wj, w + j, m);
        if (n == ROWS_WIDE_N && m == ROWS_WIDE_N) { /* a whole block: fixed trip counts */
            for (int r = 0; r < ROWS_WIDE_N; r++) {
                memcpy(&gr, g + (size_t)r * c + j, sizeof gr);
                memcpy(&xr, x + (size_t)r * c + j, sizeof xr);
                v[r] = w ? gr * wj * xr : gr * xr;
            }
            rows_wide_colsum(&acc, v, ROWS_WIDE_N);
            continue;
        }
        for (int r = 0; r < ROWS_WIDE_N; r++) {
            if (r < n) {
                rows_wide_load(&gr, g + (size_t)r * c + j, m);
                rows_wide_load(&xr, x + (size_t)r * c + j, m);
                v[r] = w ? gr * wj * xr : gr * xr;
            } else {
                v[r] = (RowWide){0.0f};
            }
        }
        rows_wide_colsum(&acc, v, m);
    }
    rows_store(dot, &acc, n);
}

/* dw[i] += g[r][i] * x[r][i] * rstd[r] for the n rows in order, dw held
 * in a register over them, ROWS_WIDE_N elements at a time. */
SIMD_BODY void dw_rows(float *dw, const float *g, const float *x, const float *rstd, int n,
                       size_t c) {
    for (size_t j = 0; j < c; j += ROWS_WIDE_N) {
        const int m = c - j < ROWS_WIDE_N ? (int)(c - j) : ROWS_WIDE_N;
        RowWide acc, gr, xr;
        rows_wide_load(&acc, dw + j, m);
        for (int r = 0; r < n; r++) {
            rows_wide_load(&gr, g + (size_t)r * c + j, m);
            rows_wide_load(&xr, x + (size_t)r * c + j, m);
            acc += gr * xr * rstd[r];
        }
        rows_store(dw + j, &acc, m);
    }
}

/* out[M,C] = x * rstd * w, rstd = 1 / sqrt(mean(x^2) + eps). Each row
 * hints the output STREAM_AHEAD floats on as it is written (stream.h): one
 * row's few lines at a time, where a block's 16 rows of hints at once
 * (128 lines at C 128) wait on each other for the core's line fills. */
SIMD_BODY void rmsnorm_forward_path_body(float *out, float *rstd, const float *inp, const float *w,
                                         int M, int C, float eps) {
    size_t c = (size_t)C;
    for (size_t m0 = 0; m0 < (size_t)M; m0 += ROWS_WIDE_N) {
        int n = (size_t)M - m0 < ROWS_WIDE_N ? (int)((size_t)M - m0) : ROWS_WIDE_N;
        float ss[ROWS_WIDE_N];
        rows_wide_sums(ss, inp + m0 * c, n, c, 1);
        for (size_t m = m0; m < m0 + (size_t)n; m++) {
            stream_hint_len(out, m * c, c, (size_t)M * c, 1);
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
}
SIMD_KERNEL_STATIC(rmsnorm_forward_path,
                   (float *out, float *rstd, const float *inp, const float *w, int M, int C,
                    float eps),
                   (out, rstd, inp, w, M, C, eps))

void rmsnorm_forward(float *out, float *rstd, const float *inp, const float *w, int M, int C,
                     float eps) {
    int prof = opprof_enter(OPPROF_NORMS);
    rmsnorm_forward_path(out, rstd, inp, w, M, C, eps);
    opprof_leave(prof);
}

/* With gw = dout * w:  dx = r * (gw - x * r^2 * mean(gw * x));
 * dw += dout * x * r. dx is written (set) or added to. The input rows
 * (the forward's, long out of cache) are hinted a row at a time, as the
 * forward's output is; without dx, a block at a time. */
SIMD_BODY void rmsnorm_backward_path_body(float *dinp, float *dw, const float *dout,
                                          const float *inp, const float *w, const float *rstd,
                                          int M, int C, int set) {
    size_t c = (size_t)C;
    for (size_t m0 = 0; m0 < (size_t)M; m0 += ROWS_WIDE_N) {
        int n = (size_t)M - m0 < ROWS_WIDE_N ? (int)((size_t)M - m0) : ROWS_WIDE_N;
        float dot[ROWS_WIDE_N];
        if (!dinp) stream_hint_len(inp, m0 * c, (size_t)n * c, (size_t)M * c, 0);
        if (dinp) dot_rows(dot, dout + m0 * c, w, inp + m0 * c, n, c);
        if (dw) dw_rows(dw, dout + m0 * c, inp + m0 * c, rstd + m0, n, c);
        if (!dinp) continue;
        for (size_t m = m0; m < m0 + (size_t)n; m++) {
            stream_hint_len(inp, m * c, c, (size_t)M * c, 0);
            const float *x = inp + m * c;
            const float *g = dout + m * c;
            float r = rstd[m];
            float k = r * r * r * dot[m - m0] / (float)C;
            float *dx = dinp + m * c;
            if (set && w) {
                for (size_t i = 0; i < c; i++) dx[i] = r * g[i] * w[i] - k * x[i];
            } else if (set) {
                for (size_t i = 0; i < c; i++) dx[i] = r * g[i] - k * x[i];
            } else if (w) {
                for (size_t i = 0; i < c; i++) dx[i] += r * g[i] * w[i] - k * x[i];
            } else {
                for (size_t i = 0; i < c; i++) dx[i] += r * g[i] - k * x[i];
            }
        }
    }
}
SIMD_KERNEL_STATIC(rmsnorm_backward_path,
                   (float *dinp, float *dw, const float *dout, const float *inp, const float *w,
                    const float *rstd, int M, int C, int set),
                   (dinp, dw, dout, inp, w, rstd, M, C, set))

void rmsnorm_backward(float *dinp, float *dw, const float *dout, const float *inp, const float *w,
                      const float *rstd, int M, int C) {
    int prof = opprof_enter(OPPROF_NORMS);
    rmsnorm_backward_path(dinp, dw, dout, inp, w, rstd, M, C, 0);
    opprof_leave(prof);
}

void rmsnorm_backward_set(float *dinp, float *dw, const float *dout, const float *inp,
                          const float *w, const float *rstd, int M, int C) {
    int prof = opprof_enter(OPPROF_NORMS);
    rmsnorm_backward_path(dinp, dw, dout, inp, w, rstd, M, C, 1);
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
 * dx = r * (gw - mean(gw) - xh * mean(gw * xh)), written (set) or added
 * to; dw += dout * xh; db += dout. */
static void layernorm_backward_rows(float *dinp, float *dw, float *db, const float *dout,
                                    const float *inp, const float *w, const float *mean,
                                    const float *rstd, int M, int C, int set) {
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
            float t = r * (gw - sg - xh * sgx);
            dx[i] = set ? t : dx[i] + t;
        }
    }
    opprof_leave(prof);
}

void layernorm_backward(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                        const float *w, const float *mean, const float *rstd, int M, int C) {
    layernorm_backward_rows(dinp, dw, db, dout, inp, w, mean, rstd, M, C, 0);
}

void layernorm_backward_set(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                            const float *w, const float *mean, const float *rstd, int M, int C) {
    layernorm_backward_rows(dinp, dw, db, dout, inp, w, mean, rstd, M, C, 1);
}
