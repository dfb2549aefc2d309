/* op_quant.c: uniform fake quantization, round to nearest (ties to even,
 * torch.round's rule), after Bondarenko et al. 2023 (docs/metrics.md
 * "Quantized evaluation"). A fake-quantized value is the float the integer
 * grid point stands for: the tensor keeps its type and shape. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"

#define FQ_EPS 1e-8 /* the smallest step and the smallest upper range end */

/* Fake-quantize x[n] in place, symmetric and per tensor: step =
 * max|x| / int_max; signed grid [-2^(b-1), 2^(b-1)-1] when any x < 0,
 * else the unsigned grid [0, 2^b - 1]. */
void fq_symmetric(float *x, size_t n, int bits) {
    double lo = 0.0, amax = 0.0;
    for (size_t i = 0; i < n; i++) {
        double a = fabs((double)x[i]);
        if (x[i] < lo) lo = x[i];
        if (a > amax) amax = a;
    }
    const int sgn = lo < 0.0;
    const double qmax = ldexp(1.0, bits - sgn) - 1.0, qmin = sgn ? -ldexp(1.0, bits - 1) : 0.0;
    double step = amax / qmax;
    if (step < FQ_EPS) step = FQ_EPS;
    for (size_t i = 0; i < n; i++) {
        double q = nearbyint((double)x[i] / step);
        x[i] = (float)(step * (q < qmin ? qmin : q > qmax ? qmax : q));
    }
}

/* dst[n] = src[n] fake-quantized on the asymmetric b-bit grid [0, 2^b - 1]
 * of the range [lo, hi], widened to hold 0: step = (hi - lo) / (2^b - 1),
 * zero point round(-lo / step) (dst may be src). */
void fq_asymmetric(float *dst, const float *src, size_t n, int bits, double lo, double hi) {
    if (lo > 0.0) lo = 0.0;
    if (hi < FQ_EPS) hi = FQ_EPS;
    const double qmax = ldexp(1.0, bits) - 1.0;
    double step = (hi - lo) / qmax;
    if (step < FQ_EPS) step = FQ_EPS;
    double z = nearbyint(-lo / step);
    z = z < 0.0 ? 0.0 : z > qmax ? qmax : z;
    for (size_t i = 0; i < n; i++) {
        double q = nearbyint((double)src[i] / step) + z;
        dst[i] = (float)(step * ((q < 0.0 ? 0.0 : q > qmax ? qmax : q) - z));
    }
}

/* The smallest and largest of x[n] (n >= 1). */
void fq_minmax(const float *x, size_t n, double *lo, double *hi) {
    float a = x[0], b = x[0];
    for (size_t i = 1; i < n; i++) {
        if (x[i] < a) a = x[i];
        if (x[i] > b) b = x[i];
    }
    *lo = a, *hi = b;
}

/* The k-th smallest of v[n] (0-based), v reordered (Hoare's selection). */
static float select_kth(float *v, size_t n, size_t k) {
    size_t l = 0, r = n - 1;
    while (l < r) {
        float p = v[l + (r - l) / 2];
        size_t i = l, j = r;
        while (i <= j) {
            while (v[i] < p) i++;
            while (v[j] > p) j--;
            if (i <= j) {
                float t = v[i];
                v[i] = v[j], v[j] = t;
                i++;
                if (j == 0) break;
                j--;
            }
        }
        if (k <= j) r = j;
        else if (k >= i) l = i;
        else return v[k];
    }
    return v[k];
}

/* The pct-th and (100 - pct)-th percentiles of x[n] (n >= 1) as the range
 * [lo, hi]: the sorted values' entries round((n - 1) * q / 100), q = 100 -
 * pct and pct; scratch holds n floats. */
void fq_percentile(const float *x, size_t n, double pct, float *scratch, double *lo, double *hi) {
    memcpy(scratch, x, n * sizeof(float));
    size_t khi = (size_t)floor((double)(n - 1) * pct / 100.0 + 0.5);
    size_t klo = (size_t)floor((double)(n - 1) * (100.0 - pct) / 100.0 + 0.5);
    *hi = select_kth(scratch, n, khi);
    *lo = select_kth(scratch, n, klo);
}
