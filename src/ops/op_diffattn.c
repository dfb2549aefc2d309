/* op_diffattn.c: the pieces of differential attention (Ye et al. 2024)
 * that sit around two calls of the attention core:
 *   y = softmax(q1 k1^T / sqrt(dh/2)) v - lambda softmax(q2 k2^T / sqrt(dh/2)) v
 * where q1, q2 (k1, k2) are the two halves of each head's q (k), and
 *   lambda = exp(lq1 . lk1) - exp(lq2 . lk2) + lambda_init.
 * A half is passed to the core as a full dh-wide head with the other half
 * zeroed, so the core's layout and GQA mapping stay as they are.
 */
#include <math.h>
#include <string.h>

#include "ops.h"

/* x1 = [x_a, 0], x2 = [0, x_b] per row of dh (x_a, x_b its halves) */
void diff_split_forward(float *x1, float *x2, const float *x, size_t rows, int dh) {
    int h = dh / 2;
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * (size_t)dh;
        float *a = x1 + r * (size_t)dh, *b = x2 + r * (size_t)dh;
        for (int i = 0; i < h; i++) a[i] = xr[i], b[i] = 0.0f;
        for (int i = h; i < dh; i++) a[i] = 0.0f, b[i] = xr[i];
    }
}

/* dx += [dx1_a, dx2_b] */
void diff_split_backward(float *dx, const float *dx1, const float *dx2, size_t rows, int dh) {
    int h = dh / 2;
    for (size_t r = 0; r < rows; r++) {
        float *d = dx + r * (size_t)dh;
        const float *a = dx1 + r * (size_t)dh, *b = dx2 + r * (size_t)dh;
        for (int i = 0; i < h; i++) d[i] += a[i];
        for (int i = h; i < dh; i++) d[i] += b[i];
    }
}

static float dotf(const float *a, const float *b, int n) {
    float s = 0.0f;
    for (int i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

float diff_lambda_forward(const float *lam, int half, float lambda_init) {
    const float *q1 = lam, *k1 = lam + half, *q2 = lam + 2 * half, *k2 = lam + 3 * half;
    return expf(dotf(q1, k1, half)) - expf(dotf(q2, k2, half)) + lambda_init;
}

void diff_lambda_backward(float *dlam, float dlambda, const float *lam, int half) {
    const float *q1 = lam, *k1 = lam + half, *q2 = lam + 2 * half, *k2 = lam + 3 * half;
    float e1 = dlambda * expf(dotf(q1, k1, half));
    float e2 = -dlambda * expf(dotf(q2, k2, half));
    for (int i = 0; i < half; i++) {
        dlam[i] += e1 * k1[i];
        dlam[half + i] += e1 * q1[i];
        dlam[2 * half + i] += e2 * k2[i];
        dlam[3 * half + i] += e2 * q2[i];
    }
}

float diff_lambda_init(int layer) { return 0.8f - 0.6f * expf(-0.3f * (float)layer); }

void diff_combine_forward(float *out, const float *x1, const float *x2, float lambda, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = x1[i] - lambda * x2[i];
}

float diff_combine_backward(float *dx2, const float *dout, const float *x2, float lambda,
                            size_t n) {
    double dl = 0.0;
    for (size_t i = 0; i < n; i++) {
        dl -= (double)dout[i] * x2[i];
        dx2[i] = -lambda * dout[i];
    }
    return (float)dl;
}
