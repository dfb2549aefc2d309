/* fastexp.h: e^x for arrays, written so GCC vectorises the loop (libm's
 * expf is a call per element and cannot be, without -ffast-math).
 *
 * e^x = 2^n * e^r with n = round(x / ln 2) and |r| <= ln2 / 2; e^r is a
 * degree-6 Taylor polynomial (relative error below 3e-7, a few ulp), and
 * 2^n is built in the exponent bits. x is clamped to [-87, 88] so 2^n stays
 * a normal float: the smallest result is e^-87 ~ 1.6e-38, never 0, which
 * is harmless in the softmax sums it serves. Defined for every float:
 * +-inf clamp like any large value, NaN gives NaN. */
#ifndef GATELAB_FASTEXP_H
#define GATELAB_FASTEXP_H

#include <stdint.h>
#include <string.h>

/* fast_expf for an x already clamped to [-87, 88] (or NaN). */
static inline float fast_expf_core(float x) {
    const float round_magic = 12582912.0f; /* 1.5 * 2^23: rounds to nearest */
    float t = x * 1.44269504088896341f + round_magic;
    float n = t - round_magic;
    /* r = x - n ln2, with ln2 split in two so r keeps its precision */
    float r = x - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float p = 1.0f + r * (1.0f + r * (0.5f + r * (1.6666667e-1f +
                                                  r * (4.1666668e-2f +
                                                       r * (8.3333338e-3f + r * 1.3888889e-3f)))));
    /* 2^n from t's own bits: for every x in [-87, 88] t lies in
     * [2^23, 2^24), so its low bits minus round_magic's are n exactly.
     * Unsigned arithmetic keeps this defined for a NaN x too (the result
     * is then NaN through p), with no float-to-int conversion. */
    uint32_t tbits;
    memcpy(&tbits, &t, sizeof tbits);
    uint32_t bits = (tbits - 0x4B400000u + 127u) << 23; /* 0x4B400000: round_magic */
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

/* Loops that call it are compiled three times (simd.h): on a Sapphire
 * Rapids class Xeon under KVM the AVX2 path's compare-and-blend (the clamp
 * below) ran 13x slower per element than AVX-512's mask registers (swiglu:
 * 13.9 vs 1.1 ns), so the widest path the CPU has is the default. */
static inline float fast_expf(float x) {
    return fast_expf_core(x < -87.0f ? -87.0f : (x > 88.0f ? 88.0f : x));
}

/* fast_expf for an x that is not above 88 (or is NaN): there the upper
 * clamp never binds, so it is left out and the result has fast_expf's
 * bits. A softmax's shifted scores s - max s (never above 0) are such x. */
static inline float fast_expf_le88(float x) { return fast_expf_core(x < -87.0f ? -87.0f : x); }

#endif
