/* exactexp.h: e^x with exactly the bits of glibc 2.36's expf on x86-64
 * with FMA (the library gatelab's trained bits were made with), for
 * every float x, in a form that inlines and vectorises.
 *
 * The arithmetic, all in double: with N = 32, k = round(x N / ln 2) is
 * found by adding 1.5 * 2^52 to x N / ln 2 (one fused multiply-add), whose
 * low bits then hold k; r = x N / ln 2 - k (fused, so r is exact to the
 * double's rounding); 2^(k / N) = 2^(k >> 5) 2^((k & 31) / N), built as
 * the double whose bits are T[k & 31] + (k << 47), T[i] being the bits of
 * 2^(i / 32) (correctly rounded) minus i << 47; and 2^(r / N) ~
 * 1 + C2 r + (C1 + C0 r) r^2, with three of the four multiply-adds fused
 * as glibc's build fuses them. The product with 2^(k / N) is rounded to
 * float once. |x| from 88 up (and NaN) is decided apart: NaN gives x + x,
 * x above ln(2^128) +inf, x below ln(2^-150) +0, x below ln(2^-149) the
 * float product 1.25 2^-75 * 1.25 2^-75 (2^-149, or 0 when subnormals
 * are flushed), the rest the same arithmetic. errno is left alone. */
#ifndef GATELAB_EXACTEXP_H
#define GATELAB_EXACTEXP_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* the bits of 2^(i / 32) rounded to double, minus i << 47 */
extern const uint64_t exact_exp_tab[32];

#define EXACT_EXP_INVLN2N 0x1.71547652b82fep+5 /* 32 / ln 2 rounded */
#define EXACT_EXP_SHIFT 0x1.8p+52
#define EXACT_EXP_C0 0x1.c6af84b912394p-20 /* glibc's cubic for 2^(r / 32) */
#define EXACT_EXP_C1 0x1.ebfce50fac4f3p-13
#define EXACT_EXP_C2 0x1.62e42ff0c52d6p-6
#define EXACT_EXP_OFLOW 0x1.62e42ep+6f     /* above: +inf */
#define EXACT_EXP_UFLOW -0x1.9fe368p+6f    /* below: +0 */
#define EXACT_EXP_MAYUFLOW -0x1.9d1d9ep+6f /* below: 1.25 2^-75 squared */
#define EXACT_EXP_TINY 0x1.4p-75f

/* 2^(k / 32) * p(r) rounded to float, for any x (the special values
 * decided by the caller). */
static inline float exact_expf_main(float x) {
    double xd = (double)x, kd0 = fma(EXACT_EXP_INVLN2N, xd, EXACT_EXP_SHIFT);
    uint64_t ki;
    memcpy(&ki, &kd0, sizeof ki);
    double kd = kd0 - EXACT_EXP_SHIFT, r = fma(EXACT_EXP_INVLN2N, xd, -kd);
    uint64_t sb = exact_exp_tab[ki & 31] + (ki << 47);
    double s;
    memcpy(&s, &sb, sizeof s);
    double z = fma(EXACT_EXP_C0, r, EXACT_EXP_C1), r2 = r * r;
    double y = fma(EXACT_EXP_C2, r, 1.0);
    y = fma(z, r2, y);
    return (float)(y * s);
}

/* e^x with glibc 2.36's expf bits. */
static inline float exact_expf(float x) {
    if (x != x) return x + x;
    if (x > EXACT_EXP_OFLOW) return INFINITY;
    if (x < EXACT_EXP_UFLOW) return 0.0f;
    if (x < EXACT_EXP_MAYUFLOW) {
        volatile float t = EXACT_EXP_TINY; /* a product at run time: the mode flushes it or not */
        return t * t;
    }
    return exact_expf_main(x);
}

/* 1 / (1 + e^-x) with libm's bits: the float expression
 * 1.0f / (1.0f + expf(-x)) with exact_expf for expf. */
static inline float exact_sigmoid(float x) { return 1.0f / (1.0f + exact_expf(-x)); }

/* p[i] = exact_expf(l[i] - m) for i < n (l[i] - m a float difference),
 * on the SIMD path in use (simd.h); every path gives the same bits. */
void exact_expf_shifted(float *p, const float *l, float m, size_t n);

/* a[i] = exact_sigmoid(s[i] - c) for i < n (s[i] - c a float difference;
 * a may be s), on the SIMD path in use; every path gives the same bits. */
void exact_sigmoid_shifted(float *a, const float *s, float c, size_t n);

#endif
