/* op_matmul.c: linear layers over gemm (op_gemm.c).
 *
 * Weights use the [out, in] layout (nn.Linear.weight), so the forward is
 * inp @ w^T and gemm reads w transposed in place.
 */
#include <string.h>

#include "ops.h"
#include "simd.h"
#include "stream.h"

/* out[M,N] = inp[M,K] @ w[N,K]^T (+ bias[N]) */
void matmul_forward(float *out, const float *inp, const float *w, const float *bias, int M, int K,
                    int N) {
    matmul_forward_packed(NULL, out, inp, w, bias, M, K, N);
}

void matmul_forward_packed(const GemmPacks *ps, float *out, const float *inp, const float *w,
                           const float *bias, int M, int K, int N) {
    if (M <= 0 || N <= 0) return;
    size_t n = (size_t)N;
    if (K <= 0) {
        /* the product is empty, only the bias is left */
        for (size_t m = 0; m < (size_t)M; m++)
            for (size_t j = 0; j < n; j++) out[m * n + j] = bias ? bias[j] : 0.0f;
        return;
    }
    gemm_tb_packed(ps, 0, M, N, K, 1.0f, inp, K, w, K, 0.0f, out, N);
    if (!bias) return;
    for (size_t m = 0; m < (size_t)M; m++) {
        float *o = out + m * n;
        for (size_t j = 0; j < n; j++) o[j] += bias[j];
    }
}

/* dinp[M,K] (+)= dout[M,N] @ w[N,K]; dw[N,K] (+)= dout^T @ inp[M,K]: each
 * written where `set` has its MM_SET_ bit (gemm's beta 0), else added to;
 * dbias[N] += column sums of dout. */
void matmul_backward_into(unsigned set, float *dinp, float *dw, float *dbias, const float *dout,
                          const float *inp, const float *w, int M, int K, int N) {
    const float dinp_beta = set & MM_SET_DINP ? 0.0f : 1.0f;
    const float dw_beta = set & MM_SET_DW ? 0.0f : 1.0f;
    if (M <= 0 || N <= 0) { /* an empty product: nothing to add, zeros to write */
        if (M > 0 && K > 0 && dinp && dinp_beta == 0.0f)
            memset(dinp, 0, (size_t)M * (size_t)K * sizeof *dinp);
        if (N > 0 && K > 0 && dw && dw_beta == 0.0f)
            memset(dw, 0, (size_t)N * (size_t)K * sizeof *dw);
        return;
    }
    if (K > 0 && dinp) gemm(0, 0, M, K, N, 1.0f, dout, N, w, K, dinp_beta, dinp, K);
    if (K > 0 && dw) gemm(1, 0, N, K, M, 1.0f, dout, N, inp, K, dw_beta, dw, K);
    if (!dbias) return;
    size_t n = (size_t)N;
    for (size_t m = 0; m < (size_t)M; m++) {
        const float *g = dout + m * n;
        for (size_t j = 0; j < n; j++) dbias[j] += g[j];
    }
}

void matmul_backward(float *dinp, float *dw, float *dbias, const float *dout, const float *inp,
                     const float *w, int M, int K, int N) {
    matmul_backward_into(0u, dinp, dw, dbias, dout, inp, w, M, K, N);
}

void matmul_backward_set(float *dinp, float *dw, float *dbias, const float *dout, const float *inp,
                         const float *w, int M, int K, int N) {
    matmul_backward_into(MM_SET_DINP, dinp, dw, dbias, dout, inp, w, M, K, N);
}

SIMD_BODY void cols_gather_body(float *cat, const float *part, size_t N, size_t P, size_t off,
                                size_t r) {
    for (size_t n = 0; n < N; n++) {
        float *c = cat + n * P + off;
        const float *p = part + n * r;
        for (size_t j = 0; j < r; j++) c[j] = p[j];
    }
}
SIMD_KERNEL(cols_gather, (float *cat, const float *part, size_t N, size_t P, size_t off, size_t r),
            (cat, part, N, P, off, r))
