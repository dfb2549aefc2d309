/* op_gemm_tiles.c: the register tiles of gatelab's own products, AVX-512
 * and AVX2 (gemm_tiles.h; op_gemm.c describes the blocking and the
 * arithmetic: each element of C one chain of FMAs over k in order from
 * zero, then alpha and beta). */
#include <immintrin.h>
#include <stddef.h>

#include "gemm_tiles.h"
#include "simd.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)

/* ---- AVX-512: tiles of 8 rows x 32 columns, masked at the right edge ---- */

SIMD_V4 static inline __attribute__((always_inline)) __m512
finish16(__m512 acc, float alpha, float beta, const float *c, __mmask16 m) {
    __m512 v = alpha == 1.0f ? acc : _mm512_mul_ps(_mm512_set1_ps(alpha), acc);
    if (beta == 0.0f) return v;
    __m512 old = _mm512_maskz_loadu_ps(m, c);
    if (beta != 1.0f) old = _mm512_mul_ps(_mm512_set1_ps(beta), old);
    return _mm512_add_ps(old, v);
}

/* Stores a tile's R x V vectors of sums into C's rows c, c + ldc, ...
 * (finish16). The callers pass the common alpha and beta forms as
 * constants, so each instance stores without a test per row. */
SIMD_V4 static inline __attribute__((always_inline)) void
store_v4(__m512 acc[16][2], float *C, const size_t ldc, const int R, const int V, __mmask16 m0,
         __mmask16 m1, const float alpha, const float beta) {
    _Pragma("GCC unroll 16") for (int r = 0; r < R; r++) {
        float *c = C + (size_t)r * ldc;
        _mm512_mask_storeu_ps(c, m0, finish16(acc[r][0], alpha, beta, c, m0));
        if (V == 2) _mm512_mask_storeu_ps(c + 16, m1, finish16(acc[r][1], alpha, beta, c + 16, m1));
    }
}

/* One value of k of a tile: op(B)'s row b, the R rows' entries of op(A)
 * at a (rows 8 and up from a second base). */
SIMD_V4 static inline __attribute__((always_inline)) void
step_v4(__m512 acc[16][2], const float *a, const size_t ai, const size_t ak, const float *b,
        const size_t ldb, __mmask16 m0, __mmask16 m1, const int R, const int V, const int Z) {
    /* V = 1: rows 4q + s from base q at 0, ai, 2 ai, 3 ai (two scaled
     * indexes and one register), so sixteen rows keep their addresses in
     * registers; V = 2: eight rows from a at r ai */
    const float *base[4] = {a, a + 4 * ai, a + 8 * ai, a + 12 * ai};
    const size_t off[4] = {0, ai, 2 * ai, 3 * ai};
    __m512 b0 = _mm512_maskz_loadu_ps(m0, b);
    __m512 b1 = V == 2 ? _mm512_maskz_loadu_ps(m1, b + 16) : b0;
    if (Z) {
        _mm_prefetch((const char *)(b + PF_AHEAD * ldb), _MM_HINT_T0);
        if (ak != 1) _mm_prefetch((const char *)(a + PF_AHEAD * ak), _MM_HINT_T0);
    }
    _Pragma("GCC unroll 16") for (int r = 0; r < R; r++) {
        __m512 av = _mm512_set1_ps(V == 1 ? base[r / 4][off[r % 4]] : a[(size_t)r * ai]);
        acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);
        if (V == 2) acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);
    }
}

/* V = 1 or 2 vectors of 16 columns, R <= 16 / V rows: 16 accumulators at
 * most. V = 1 skips the empty second vector of a panel of 16 or fewer
 * columns (a head's 16 in attention, a product's last columns) and runs up
 * to 16 rows instead, so as many chains advance side by side. full: the
 * tile spans all 16 V columns, so no load or store is masked. Rows 8 and
 * up are addressed from a second base, a8, with the same index registers
 * as rows 0 to 7, so sixteen rows keep their addresses in registers.
 * alpha and beta are read once into locals: C's stores cannot then make
 * the compiler read them again. */
SIMD_V4 static inline __attribute__((always_inline)) int
tile_v4(const Tile *t, const int R, const int V, const int full, const int Z) {
    __mmask16 m0 = full || t->w >= 16 ? 0xffff : (__mmask16)((1u << t->w) - 1);
    __mmask16 m1 = full || t->w >= 32 ? 0xffff
                   : t->w <= 16       ? 0
                                      : (__mmask16)((1u << (t->w - 16)) - 1);
    __m512 acc[16][2];
    if (t->part && !t->first) {
        _Pragma("GCC unroll 16") for (int r = 0; r < R; r++) {
            acc[r][0] = _mm512_loadu_ps(t->part + r * t->ps);
            acc[r][1] = V == 2 ? _mm512_loadu_ps(t->part + r * t->ps + 16) : acc[r][0];
        }
    } else {
        _Pragma("GCC unroll 16") for (int r = 0; r < R; r++) acc[r][0] = acc[r][1] =
            _mm512_setzero_ps();
    }
    /* locals, so the compiler keeps acc in registers (no aliasing doubts) */
    const float *A = t->a, *B = t->b;
    const size_t ai = t->ai, ak = t->ak, ldb = t->ldb;
    const float alpha = t->alpha, beta = t->beta;
    if (V == 2) {
        _Pragma("GCC unroll 4") for (int k = 0, K = t->K; k < K; k++)
            step_v4(acc, A + (size_t)k * ak, ai, ak, B + (size_t)k * ldb, ldb, m0, m1, R, V, Z);
    } else {
        for (int k = 0, K = t->K; k < K; k++)
            step_v4(acc, A + (size_t)k * ak, ai, ak, B + (size_t)k * ldb, ldb, m0, m1, R, V, Z);
    }
    if (Z && t->ext) {
        __mmask16 z = 0; /* the lanes that hold -0 */
        _Pragma("GCC unroll 16") for (int r = 0; r < R; r++) {
            z |= _mm512_mask_fpclass_ps_mask(m0, acc[r][0], 0x04);
            if (V == 2) z |= _mm512_mask_fpclass_ps_mask(m1, acc[r][1], 0x04);
        }
        if (z) return 1;
    }
    if (t->part && !t->last) {
        _Pragma("GCC unroll 16") for (int r = 0; r < R; r++) {
            _mm512_storeu_ps(t->part + r * t->ps, acc[r][0]);
            if (V == 2) _mm512_storeu_ps(t->part + r * t->ps + 16, acc[r][1]);
        }
        return 0;
    }
    if (alpha == 1.0f && beta == 0.0f) store_v4(acc, t->c, t->ldc, R, V, m0, m1, 1.0f, 0.0f);
    else if (alpha == 1.0f && beta == 1.0f) store_v4(acc, t->c, t->ldc, R, V, m0, m1, 1.0f, 1.0f);
    else if (beta == 0.0f) store_v4(acc, t->c, t->ldc, R, V, m0, m1, alpha, 0.0f);
    else if (beta == 1.0f) store_v4(acc, t->c, t->ldc, R, V, m0, m1, alpha, 1.0f);
    else store_v4(acc, t->c, t->ldc, R, V, m0, m1, alpha, beta);
    return 0;
}

/* A panel of 16 or fewer columns takes tiles of up to 16 rows x 1 vector
 * (R up to 16), a wider one tiles of up to 8 rows x 2 vectors; the full
 * tiles, most of every product, take the unmasked instances. Z: the
 * instances that skip op(A)'s zeros (Tile.ext, Tile.pf), apart so that the
 * other products' tiles run no test for them. */
SIMD_V4 static inline __attribute__((always_inline)) int tile_rows_z(const Tile *t, int R,
                                                                     const int Z) {
    if (t->w == 32 && R == 8) return tile_v4(t, 8, 2, 1, Z);
    else if (t->w == 16 && R == 16) return tile_v4(t, 16, 1, 1, Z);
    else if (t->w <= 16) switch (R) {
        case 16: return tile_v4(t, 16, 1, 0, Z);
        case 15: return tile_v4(t, 15, 1, 0, Z);
        case 14: return tile_v4(t, 14, 1, 0, Z);
        case 13: return tile_v4(t, 13, 1, 0, Z);
        case 12: return tile_v4(t, 12, 1, 0, Z);
        case 11: return tile_v4(t, 11, 1, 0, Z);
        case 10: return tile_v4(t, 10, 1, 0, Z);
        case 9: return tile_v4(t, 9, 1, 0, Z);
        case 8: return tile_v4(t, 8, 1, 0, Z);
        case 7: return tile_v4(t, 7, 1, 0, Z);
        case 6: return tile_v4(t, 6, 1, 0, Z);
        case 5: return tile_v4(t, 5, 1, 0, Z);
        case 4: return tile_v4(t, 4, 1, 0, Z);
        case 3: return tile_v4(t, 3, 1, 0, Z);
        case 2: return tile_v4(t, 2, 1, 0, Z);
        default: return tile_v4(t, 1, 1, 0, Z);
        }
    else switch (R) {
        case 8: return tile_v4(t, 8, 2, 0, Z);
        case 7: return tile_v4(t, 7, 2, 0, Z);
        case 6: return tile_v4(t, 6, 2, 0, Z);
        case 5: return tile_v4(t, 5, 2, 0, Z);
        case 4: return tile_v4(t, 4, 2, 0, Z);
        case 3: return tile_v4(t, 3, 2, 0, Z);
        case 2: return tile_v4(t, 2, 2, 0, Z);
        default: return tile_v4(t, 1, 2, 0, Z);
        }
}

SIMD_V4 int gemm_tile_rows_v4(const Tile *t, int R) {
    return t->pf ? tile_rows_z(t, R, 1) : tile_rows_z(t, R, 0);
}

/* Packs 16 rows of B (b, row step ldb) as 16 columns of the panel p (row
 * step W), for k in [0, K): 16 x 16 blocks transposed in registers, the
 * last K % 16 values one by one. A copy: no value changes. */
SIMD_V4 void gemm_pack16_v4(const float *b, size_t ldb, float *p, size_t W, size_t K) {
    size_t k0 = 0;
    for (; k0 + 16 <= K; k0 += 16) {
        __m512 r[16], a[16], c[16];
        for (int i = 0; i < 16; i++) r[i] = _mm512_loadu_ps(b + (size_t)i * ldb + k0);
        for (int i = 0; i < 16; i += 2) {
            a[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
            a[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
        }
        for (int i = 0; i < 16; i += 4)
            for (int h = 0; h < 2; h++) {
                __m512d x = _mm512_castps_pd(a[i + h]), y = _mm512_castps_pd(a[i + h + 2]);
                r[i + 2 * h] = _mm512_castpd_ps(_mm512_unpacklo_pd(x, y));
                r[i + 2 * h + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(x, y));
            }
        /* r[4g + q], lane L: rows 4g .. 4g + 3 of column 4L + q */
        for (int q = 0; q < 4; q++) {
            c[q] = _mm512_shuffle_f32x4(r[q], r[4 + q], 0x88);
            c[4 + q] = _mm512_shuffle_f32x4(r[q], r[4 + q], 0xdd);
            c[8 + q] = _mm512_shuffle_f32x4(r[8 + q], r[12 + q], 0x88);
            c[12 + q] = _mm512_shuffle_f32x4(r[8 + q], r[12 + q], 0xdd);
        }
        for (int q = 0; q < 4; q++) {
            _mm512_storeu_ps(p + (k0 + q) * W, _mm512_shuffle_f32x4(c[q], c[8 + q], 0x88));
            _mm512_storeu_ps(p + (k0 + 8 + q) * W, _mm512_shuffle_f32x4(c[q], c[8 + q], 0xdd));
            _mm512_storeu_ps(p + (k0 + 4 + q) * W, _mm512_shuffle_f32x4(c[4 + q], c[12 + q], 0x88));
            _mm512_storeu_ps(p + (k0 + 12 + q) * W,
                             _mm512_shuffle_f32x4(c[4 + q], c[12 + q], 0xdd));
        }
    }
    for (int j = 0; j < 16; j++)
        for (size_t k = k0; k < K; k++) p[k * W + (size_t)j] = b[(size_t)j * ldb + k];
}

/* ---- AVX2: tiles of 6 rows x 16 columns, masked at the right edge ---- */

/* AVX2's masked moves are slow on some CPUs: a full panel goes without. */
SIMD_V3 static inline __attribute__((always_inline)) __m256 ld8(const float *p, __m256i m,
                                                                int full) {
    return full ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, m);
}

SIMD_V3 static inline __attribute__((always_inline)) void st8(float *p, __m256i m, __m256 v,
                                                              int full) {
    if (full) _mm256_storeu_ps(p, v);
    else _mm256_maskstore_ps(p, m, v);
}

SIMD_V3 static inline __attribute__((always_inline)) __m256
finish8(__m256 acc, const float alpha, const float beta, const float *c, __m256i m, int full) {
    __m256 v = alpha == 1.0f ? acc : _mm256_mul_ps(_mm256_set1_ps(alpha), acc);
    if (beta == 0.0f) return v;
    __m256 old = ld8(c, m, full);
    if (beta != 1.0f) old = _mm256_mul_ps(_mm256_set1_ps(beta), old);
    return _mm256_add_ps(old, v);
}

/* Stores a tile's R rows of sums into C's rows C, C + ldc, ... (finish8),
 * as store_v4 does: alpha and beta come as values read once, the common
 * forms as constants (C's stores could otherwise make the compiler read the
 * Tile's again, row after row). */
SIMD_V3 static inline __attribute__((always_inline)) void
store_v3(__m256 acc[6][2], float *C, const size_t ldc, const int R, __m256i m0, __m256i m1,
         const int full, const float alpha, const float beta) {
    _Pragma("GCC unroll 8") for (int r = 0; r < R; r++) {
        float *c = C + (size_t)r * ldc;
        st8(c, m0, finish8(acc[r][0], alpha, beta, c, m0, full), full);
        st8(c + 8, m1, finish8(acc[r][1], alpha, beta, c + 8, m1, full), full);
    }
}

SIMD_V3 static inline __attribute__((always_inline)) int tile_v3(const Tile *t, const int R,
                                                                 const int full) {
    __m256i m0 = mask8(t->w), m1 = mask8(t->w - 8);
    __m256 acc[6][2];
    if (t->part && !t->first) {
        _Pragma("GCC unroll 8") for (int r = 0; r < R; r++) {
            acc[r][0] = ld8(t->part + r * t->ps, m0, full);
            acc[r][1] = ld8(t->part + r * t->ps + 8, m1, full);
        }
    } else {
        _Pragma("GCC unroll 8") for (int r = 0; r < R; r++) acc[r][0] = acc[r][1] =
            _mm256_setzero_ps();
    }
    const float *A = t->a, *B = t->b;
    const size_t ai = t->ai, ak = t->ak, ldb = t->ldb;
    for (int k = 0, K = t->K; k < K; k++) {
        const float *b = B + (size_t)k * ldb, *a = A + (size_t)k * ak;
        __m256 b0 = ld8(b, m0, full), b1 = ld8(b + 8, m1, full);
        _Pragma("GCC unroll 8") for (int r = 0; r < R; r++) {
            __m256 av = _mm256_broadcast_ss(a + (size_t)r * ai);
            acc[r][0] = _mm256_fmadd_ps(av, b0, acc[r][0]);
            acc[r][1] = _mm256_fmadd_ps(av, b1, acc[r][1]);
        }
    }
    if (t->ext) {
        __m256 z = _mm256_setzero_ps(); /* sign bits of the zero sums: -0 */
        _Pragma("GCC unroll 8") for (int r = 0; r < R; r++) {
            __m256 e0 = _mm256_cmp_ps(acc[r][0], _mm256_setzero_ps(), _CMP_EQ_OQ);
            __m256 e1 = _mm256_cmp_ps(acc[r][1], _mm256_setzero_ps(), _CMP_EQ_OQ);
            z = _mm256_or_ps(z,
                             _mm256_and_ps(_mm256_and_ps(e0, _mm256_castsi256_ps(m0)), acc[r][0]));
            z = _mm256_or_ps(z,
                             _mm256_and_ps(_mm256_and_ps(e1, _mm256_castsi256_ps(m1)), acc[r][1]));
        }
        if (_mm256_movemask_ps(z)) return 1;
    }
    if (t->part && !t->last) {
        _Pragma("GCC unroll 8") for (int r = 0; r < R; r++) {
            st8(t->part + r * t->ps, m0, acc[r][0], full);
            st8(t->part + r * t->ps + 8, m1, acc[r][1], full);
        }
        return 0;
    }
    const float alpha = t->alpha, beta = t->beta;
    if (alpha == 1.0f && beta == 0.0f) store_v3(acc, t->c, t->ldc, R, m0, m1, full, 1.0f, 0.0f);
    else if (alpha == 1.0f && beta == 1.0f)
        store_v3(acc, t->c, t->ldc, R, m0, m1, full, 1.0f, 1.0f);
    else store_v3(acc, t->c, t->ldc, R, m0, m1, full, alpha, beta);
    return 0;
}

SIMD_V3 int gemm_tile_rows_v3(const Tile *t, int R) {
    if (t->w == 16 && R == 6) return tile_v3(t, 6, 1);
    else if (t->w == 16) switch (R) {
        case 5: return tile_v3(t, 5, 1);
        case 4: return tile_v3(t, 4, 1);
        case 3: return tile_v3(t, 3, 1);
        case 2: return tile_v3(t, 2, 1);
        default: return tile_v3(t, 1, 1);
        }
    else switch (R) {
        case 6: return tile_v3(t, 6, 0);
        case 5: return tile_v3(t, 5, 0);
        case 4: return tile_v3(t, 4, 0);
        case 3: return tile_v3(t, 3, 0);
        case 2: return tile_v3(t, 2, 0);
        default: return tile_v3(t, 1, 0);
        }
}

#endif
