/* op_stickbreak.c: stick-breaking attention rows (Tan et al. 2024).
 *
 * Query t breaks a stick starting at its own position and walking back:
 * key j gets beta_j = sigmoid(s_j) of what the nearer keys left over,
 *   a_j = beta_j prod_{j<k<n} (1 - beta_k),
 * so log a_j = log sigmoid(s_j) - sum_{k>j} softplus(s_k). The mass the
 * row does not spend, prod_k (1 - beta_k), goes nowhere (no normaliser).
 */
#include <math.h>

#include "exactexp.h"
#include "ops.h"

enum { SB_CHUNK = 64 }; /* floats of a row taken at once */

/* a[0..n) from s[0..n), a reverse cumulative sum in log space, in chunks
 * from the row's end. Per key, sp = softplus(-s_j) = -log sigmoid(s_j):
 * log1pf(e^s_j) - s_j for s_j < 0, else log1pf(e^-s_j), its e^ taken for
 * the whole chunk first; a_j = e^(-sp - acc), the chunk's arguments
 * written to a and exponentiated in place (x - 0 is x, -0 included). The
 * exponentials are exact_expf's, libm's bits. */
void stickbreak_row_forward(float *a, const float *s, int n) {
    float acc = 0.0f; /* sum_{k>j} softplus(s_k) */
    float e[SB_CHUNK];
    for (int hi = n; hi > 0; hi -= SB_CHUNK) {
        const int lo = hi > SB_CHUNK ? hi - SB_CHUNK : 0, c = hi - lo;
        for (int j = lo; j < hi; j++) e[j - lo] = -s[j] > 0.0f ? s[j] : -s[j];
        exact_expf_shifted(e, e, 0.0f, (size_t)c);
        for (int j = hi - 1; j >= lo; j--) {
            const float sj = s[j]; /* read before a[j] is written: a may alias s */
            float sp = -sj > 0.0f ? -sj + log1pf(e[j - lo]) : log1pf(e[j - lo]);
            a[j] = -sp - acc;
            acc += sj + sp;
        }
        exact_expf_shifted(a + lo, a + lo, 0.0f, (size_t)c);
    }
}

/* d log a_j / d s_m = [m = j](1 - sigma_m) - [m > j] sigma_m, so
 * ds_m = da_m a_m (1 - sigma_m) - sigma_m sum_{j<m} da_j a_j, sigma_m for
 * a chunk at once (exact_sigmoid_shifted, libm's bits). */
void stickbreak_row_backward(float *d, const float *a, const float *s, int n) {
    float prefix = 0.0f, sig[SB_CHUNK];
    for (int lo = 0; lo < n; lo += SB_CHUNK) {
        const int c = n - lo < SB_CHUNK ? n - lo : SB_CHUNK;
        exact_sigmoid_shifted(sig, s + lo, 0.0f, (size_t)c);
        for (int m = lo; m < lo + c; m++) {
            float g = d[m] * a[m], sg = sig[m - lo];
            d[m] = g * (1.0f - sg) - sg * prefix;
            prefix += g;
        }
    }
}
