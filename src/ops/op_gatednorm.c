/* op_gatednorm.c: GatedNorm (Qiu et al. 2026, arXiv 2601.22966; docs/
 * variants.md F): a norm's output y scaled elementwise by a sigmoid of a
 * rank-r SiLU MLP of y itself, out = y * sigmoid(W_up silu(W_down y)).
 */
#include <string.h>

#include "ops.h"

void gated_norm_forward(float *out, float *h, float *s, float *u, const float *y,
                        const float *w_down, const float *w_up, int N, int d, int r) {
    gated_norm_forward_packed(NULL, out, h, s, u, y, w_down, w_up, N, d, r);
}

void gated_norm_forward_packed(const GemmPacks *ps, float *out, float *h, float *s, float *u,
                               const float *y, const float *w_down, const float *w_up, int N, int d,
                               int r) {
    const size_t Nr = (size_t)N * r, Nd = (size_t)N * d;
    matmul_forward_packed(ps, h, y, w_down, NULL, N, d, r);
    gate_act_forward(s, h, Nr, ACT_SILU);
    matmul_forward_packed(ps, u, s, w_up, NULL, N, r, d);
    gate_act_forward(out, u, Nd, ACT_SIGMOID);
    for (size_t i = 0; i < Nd; i++) out[i] *= y[i];
}

/* With g = sigmoid(u): dy += dout * g; du = dout * y * g (1 - g);
 * ds = du W_up; dh = ds * silu'(h); dy += dh W_down (and the weights'
 * gradients of both products). */
void gated_norm_backward(float *dy, float *dw_down, float *dw_up, const float *dout, const float *y,
                         const float *h, const float *s, const float *u, const float *w_down,
                         const float *w_up, float *du, float *ds, float *dh, int N, int d, int r) {
    const size_t Nr = (size_t)N * r, Nd = (size_t)N * d;
    gate_act_forward(du, u, Nd, ACT_SIGMOID); /* g, then du in place */
    for (size_t i = 0; i < Nd; i++) {
        const float g = du[i];
        dy[i] += dout[i] * g;
        du[i] = dout[i] * y[i] * g * (1.0f - g);
    }
    memset(ds, 0, Nr * sizeof(float));
    matmul_backward(ds, dw_up, NULL, du, s, w_up, N, r, d);
    memset(dh, 0, Nr * sizeof(float));
    gate_act_backward(dh, ds, h, Nr, ACT_SILU);
    matmul_backward(dy, dw_down, NULL, dh, y, w_down, N, d, r);
}
