/* op_stickbreak.c: stick-breaking attention rows (Tan et al. 2024).
 *
 * Query t breaks a stick starting at its own position and walking back:
 * key j gets beta_j = sigmoid(s_j) of what the nearer keys left over,
 *   a_j = beta_j prod_{j<k<n} (1 - beta_k),
 * so log a_j = log sigmoid(s_j) - sum_{k>j} softplus(s_k). The mass the
 * row does not spend, prod_k (1 - beta_k), goes nowhere (no normaliser).
 */
#include <math.h>

#include "ops.h"

/* log(1 + e^x) without overflow */
static float softplus(float x) { return x > 0.0f ? x + log1pf(expf(-x)) : log1pf(expf(x)); }

static float sigm(float x) { return 1.0f / (1.0f + expf(-x)); }

/* a[0..n) from s[0..n), a reverse cumulative sum in log space. */
void stickbreak_row_forward(float *a, const float *s, int n) {
    float acc = 0.0f; /* sum_{k>j} softplus(s_k) */
    for (int j = n - 1; j >= 0; j--) {
        const float sj = s[j];    /* read before a[j] is written: a may alias s */
        float sp = softplus(-sj); /* -log sigmoid(s); softplus(s) = s + sp */
        a[j] = expf(-sp - acc);
        acc += sj + sp;
    }
}

/* d log a_j / d s_m = [m = j](1 - sigma_m) - [m > j] sigma_m, so
 * ds_m = da_m a_m (1 - sigma_m) - sigma_m sum_{j<m} da_j a_j. */
void stickbreak_row_backward(float *d, const float *a, const float *s, int n) {
    float prefix = 0.0f;
    for (int m = 0; m < n; m++) {
        float g = d[m] * a[m], sg = sigm(s[m]);
        d[m] = g * (1.0f - sg) - sg * prefix;
        prefix += g;
    }
}
