/* exactexp.c: exactexp.h's table and its row forms on the AVX-512 and AVX2
 * paths: the same double operations as exact_expf, lane by lane, the
 * fused ones as FMA instructions and the others unfused. One loop per
 * path serves both row forms: ROW_EXP gives e^(l - m), ROW_SIGMOID
 * 1 / (1 + e^-(l - m)), the negation, add and divide in float lanes as the
 * scalar expression does them (each IEEE-exact per lane). */
#include "exactexp.h"

#include <immintrin.h>

#include "simd.h"

const uint64_t exact_exp_tab[32] = {
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
    0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
    0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
    0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
    0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
    0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
    0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
    0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540,
};

enum { ROW_EXP, ROW_SIGMOID };

static inline float row_one(float l, float m, int form) {
    return form == ROW_SIGMOID ? exact_sigmoid(l - m) : exact_expf(l - m);
}

static void rows_v1(float *p, const float *l, float m, size_t n, int form) {
    for (size_t i = 0; i < n; i++) p[i] = row_one(l[i], m, form);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)

#define V4_INLINE SIMD_V4 static inline __attribute__((always_inline))
#define V3_INLINE SIMD_V3 static inline __attribute__((always_inline))

/* ---- AVX-512: 16 floats, as two halves of 8 doubles ---- */

V4_INLINE __m256 main8_v4(__m256 x, const __m512i tab[4]) {
    const __m512d invln2n = _mm512_set1_pd(EXACT_EXP_INVLN2N),
                  shift = _mm512_set1_pd(EXACT_EXP_SHIFT);
    __m512d xd = _mm512_cvtps_pd(x), kd0 = _mm512_fmadd_pd(invln2n, xd, shift);
    __m512i ki = _mm512_castpd_si512(kd0);
    __m512d kd = _mm512_sub_pd(kd0, shift), r = _mm512_fmsub_pd(invln2n, xd, kd);
    /* T[ki & 31]: bits 0-3 pick one of 16 entries from a pair of registers, bit 4 the pair */
    __m512i t0 = _mm512_permutex2var_epi64(tab[0], ki, tab[1]);
    __m512i t1 = _mm512_permutex2var_epi64(tab[2], ki, tab[3]);
    __m512i t = _mm512_mask_blend_epi64(_mm512_test_epi64_mask(ki, _mm512_set1_epi64(16)), t0, t1);
    __m512d s = _mm512_castsi512_pd(_mm512_add_epi64(t, _mm512_slli_epi64(ki, 47)));
    __m512d z = _mm512_fmadd_pd(_mm512_set1_pd(EXACT_EXP_C0), r, _mm512_set1_pd(EXACT_EXP_C1));
    __m512d r2 = _mm512_mul_pd(r, r);
    __m512d y = _mm512_fmadd_pd(_mm512_set1_pd(EXACT_EXP_C2), r, _mm512_set1_pd(1.0));
    y = _mm512_fmadd_pd(z, r2, y);
    return _mm512_cvtpd_ps(_mm512_mul_pd(y, s));
}

V4_INLINE __m512 exp16_v4(__m512 x, const __m512i tab[4]) {
    __m512 y = _mm512_insertf32x8(_mm512_castps256_ps512(main8_v4(_mm512_castps512_ps256(x), tab)),
                                  main8_v4(_mm512_extractf32x8_ps(x, 1), tab), 1);
    /* |x| below 88 in every lane (the loss's rows): nothing to decide apart */
    if (!_mm512_cmp_ps_mask(_mm512_abs_ps(x), _mm512_set1_ps(88.0f), _CMP_NLT_UQ)) return y;
    __m512 tiny = _mm512_set1_ps(EXACT_EXP_TINY);
    __asm__("" : "+v"(tiny)); /* a product at run time: the mode flushes it or not */
    y = _mm512_mask_mov_ps(y, _mm512_cmp_ps_mask(x, _mm512_set1_ps(EXACT_EXP_MAYUFLOW), _CMP_LT_OQ),
                           _mm512_mul_ps(tiny, tiny));
    y = _mm512_mask_mov_ps(y, _mm512_cmp_ps_mask(x, _mm512_set1_ps(EXACT_EXP_UFLOW), _CMP_LT_OQ),
                           _mm512_setzero_ps());
    y = _mm512_mask_mov_ps(y, _mm512_cmp_ps_mask(x, _mm512_set1_ps(EXACT_EXP_OFLOW), _CMP_GT_OQ),
                           _mm512_set1_ps(INFINITY));
    return _mm512_mask_add_ps(y, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x, x);
}

/* the row form of 16 lanes of l */
V4_INLINE __m512 row16_v4(__m512 l, __m512 m, const __m512i tab[4], int form) {
    __m512 d = _mm512_sub_ps(l, m);
    if (form == ROW_EXP) return exp16_v4(d, tab);
    const __m512 one = _mm512_set1_ps(1.0f);
    __m512 e = exp16_v4(_mm512_xor_ps(d, _mm512_set1_ps(-0.0f)), tab);
    return _mm512_div_ps(one, _mm512_add_ps(one, e));
}

V4_INLINE void rows_v4(float *p, const float *l, float m, size_t n, int form) {
    __m512i tab[4];
    for (int q = 0; q < 4; q++) tab[q] = _mm512_loadu_si512(exact_exp_tab + 8 * q);
    const __m512 mv = _mm512_set1_ps(m);
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(p + i, row16_v4(_mm512_loadu_ps(l + i), mv, tab, form));
    if (i < n) {
        __mmask16 k = (__mmask16)((1u << (n - i)) - 1u);
        _mm512_mask_storeu_ps(p + i, k, row16_v4(_mm512_maskz_loadu_ps(k, l + i), mv, tab, form));
    }
}

SIMD_V4 static void shifted_v4(float *p, const float *l, float m, size_t n) {
    rows_v4(p, l, m, n, ROW_EXP);
}
SIMD_V4 static void sigmoid_v4(float *p, const float *l, float m, size_t n) {
    rows_v4(p, l, m, n, ROW_SIGMOID);
}

/* ---- AVX2: 8 floats, as two halves of 4 doubles ---- */

V3_INLINE __m128 main4_v3(__m128 x) {
    const __m256d invln2n = _mm256_set1_pd(EXACT_EXP_INVLN2N),
                  shift = _mm256_set1_pd(EXACT_EXP_SHIFT);
    __m256d xd = _mm256_cvtps_pd(x), kd0 = _mm256_fmadd_pd(invln2n, xd, shift);
    __m256i ki = _mm256_castpd_si256(kd0);
    __m256d kd = _mm256_sub_pd(kd0, shift), r = _mm256_fmsub_pd(invln2n, xd, kd);
    /* T[ki & 31] lane by lane: under qemu 7.2's emulated Haswell (repro.sh) the AVX2 gather
     * returned wrong entries */
    uint64_t k[4];
    _mm256_storeu_si256((__m256i *)k, ki);
    __m256i t = _mm256_setr_epi64x(
        (long long)exact_exp_tab[k[0] & 31], (long long)exact_exp_tab[k[1] & 31],
        (long long)exact_exp_tab[k[2] & 31], (long long)exact_exp_tab[k[3] & 31]);
    __m256d s = _mm256_castsi256_pd(_mm256_add_epi64(t, _mm256_slli_epi64(ki, 47)));
    __m256d z = _mm256_fmadd_pd(_mm256_set1_pd(EXACT_EXP_C0), r, _mm256_set1_pd(EXACT_EXP_C1));
    __m256d r2 = _mm256_mul_pd(r, r);
    __m256d y = _mm256_fmadd_pd(_mm256_set1_pd(EXACT_EXP_C2), r, _mm256_set1_pd(1.0));
    y = _mm256_fmadd_pd(z, r2, y);
    return _mm256_cvtpd_ps(_mm256_mul_pd(y, s));
}

V3_INLINE __m256 exp8_v3(__m256 x) {
    __m256 y =
        _mm256_set_m128(main4_v3(_mm256_extractf128_ps(x, 1)), main4_v3(_mm256_castps256_ps128(x)));
    __m256 ax = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
    if (!_mm256_movemask_ps(_mm256_cmp_ps(ax, _mm256_set1_ps(88.0f), _CMP_NLT_UQ))) return y;
    __m256 tiny = _mm256_set1_ps(EXACT_EXP_TINY);
    __asm__("" : "+x"(tiny)); /* a product at run time: the mode flushes it or not */
    y = _mm256_blendv_ps(y, _mm256_mul_ps(tiny, tiny),
                         _mm256_cmp_ps(x, _mm256_set1_ps(EXACT_EXP_MAYUFLOW), _CMP_LT_OQ));
    y = _mm256_blendv_ps(y, _mm256_setzero_ps(),
                         _mm256_cmp_ps(x, _mm256_set1_ps(EXACT_EXP_UFLOW), _CMP_LT_OQ));
    y = _mm256_blendv_ps(y, _mm256_set1_ps(INFINITY),
                         _mm256_cmp_ps(x, _mm256_set1_ps(EXACT_EXP_OFLOW), _CMP_GT_OQ));
    return _mm256_blendv_ps(y, _mm256_add_ps(x, x), _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

/* the row form of 8 lanes of l */
V3_INLINE __m256 row8_v3(__m256 l, __m256 m, int form) {
    __m256 d = _mm256_sub_ps(l, m);
    if (form == ROW_EXP) return exp8_v3(d);
    const __m256 one = _mm256_set1_ps(1.0f);
    __m256 e = exp8_v3(_mm256_xor_ps(d, _mm256_set1_ps(-0.0f)));
    return _mm256_div_ps(one, _mm256_add_ps(one, e));
}

V3_INLINE void rows_v3(float *p, const float *l, float m, size_t n, int form) {
    const __m256 mv = _mm256_set1_ps(m);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(p + i, row8_v3(_mm256_loadu_ps(l + i), mv, form));
    for (; i < n; i++) p[i] = row_one(l[i], m, form);
}

SIMD_V3 static void shifted_v3(float *p, const float *l, float m, size_t n) {
    rows_v3(p, l, m, n, ROW_EXP);
}
SIMD_V3 static void sigmoid_v3(float *p, const float *l, float m, size_t n) {
    rows_v3(p, l, m, n, ROW_SIGMOID);
}

void exact_expf_shifted(float *p, const float *l, float m, size_t n) {
    switch (simd_path()) {
    case SIMD_AVX512: shifted_v4(p, l, m, n); break;
    case SIMD_AVX2: shifted_v3(p, l, m, n); break;
    default: rows_v1(p, l, m, n, ROW_EXP); break;
    }
}

void exact_sigmoid_shifted(float *a, const float *s, float c, size_t n) {
    switch (simd_path()) {
    case SIMD_AVX512: sigmoid_v4(a, s, c, n); break;
    case SIMD_AVX2: sigmoid_v3(a, s, c, n); break;
    default: rows_v1(a, s, c, n, ROW_SIGMOID); break;
    }
}

#else

void exact_expf_shifted(float *p, const float *l, float m, size_t n) {
    rows_v1(p, l, m, n, ROW_EXP);
}
void exact_sigmoid_shifted(float *a, const float *s, float c, size_t n) {
    rows_v1(a, s, c, n, ROW_SIGMOID);
}

#endif
