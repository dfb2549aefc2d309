/* hf_fastexp.h: expf as straight-line float code (no libm call), so the
 * loops of softmax and of the SiLU/GELU activations vectorise at -O3.
 * Range reduction x = n ln2 + r, |r| <= ln2/2, a degree-6 minimax
 * polynomial for e^r (the classic Cephes expf coefficients, about 1 ulp),
 * then 2^n through the exponent bits. Inputs are clamped to the finite
 * range: below -87.3 it returns ~1e-38 instead of a denormal or 0. */
#ifndef GATELAB_HF_FASTEXP_H
#define GATELAB_HF_FASTEXP_H

#include <stdint.h>
#include <string.h>

static inline float hf_expf(float x) {
    x = x > 88.3762626647949f ? 88.3762626647949f : x;
    x = x < -87.3365447504f ? -87.3365447504f : x;
    const float shift = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
    float n = (x * 1.44269504088896341f + shift) - shift;
    float r = x - n * 0.693359375f;
    r = r + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    n = n == n ? n : 0.0f; /* NaN stays NaN through p; keep the conversion defined */
    int32_t bits = ((int32_t)n + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

#endif
