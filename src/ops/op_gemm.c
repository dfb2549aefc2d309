/* op_gemm.c: C = alpha op(A) op(B) + beta C, row-major, for the model's
 * products (ops.h: gemm).
 *
 * The training shapes are small: 2048 x 64 x 64 projections, 64 x 64 x 16
 * attention blocks. A general BLAS spends much of such a call packing its
 * operands and, on one pinned core, runs AVX2 kernels on an AVX-512 CPU.
 * These kernels pack nothing but a transposed B, and run the widest path
 * the CPU has (simd.h).
 *
 * Arithmetic: every element of C is one chain of fused multiply-adds over
 * k = 0, 1, ..., K-1 starting from zero, then t = alpha * acc (only when
 * alpha != 1), then C = t, C + t, or beta * C + t. A vector lane does
 * exactly what the scalar loop does, so the AVX-512, AVX2 and plain paths
 * give the same bits, whatever OpenBLAS core is loaded.
 *
 * Blocking: C is cut into tiles of R rows by W columns (AVX-512: 8 x 32,
 * or 16 x 16 on a panel of 16 columns or fewer; AVX2: 6 x 16) held in
 * registers over a block of up to KBLOCK values of k;
 * op(A)'s entries are broadcast one at a time, op(B)'s row k is read W
 * wide. Between k blocks a tile's sums wait in a buffer as exact floats, so
 * the chain is the same. Groups of GROUP rows are the outer loop, then
 * column panels, then k blocks, then the tiles down the group: a group's
 * rows of A and a panel's block of B stay in cache while they are used,
 * also for a weight gradient's k over thousands of positions. A transposed
 * B is packed with 16 x 16 transposes in registers on the AVX-512 path.
 * gemm_kernel_name says which blocking runs. gemm_zeros's tiles run only
 * the k values where one of their rows of op(A) is not a structural zero
 * (ops.h), with their own instances, which prefetch ahead in k.
 *
 * With gemm_use_blas(1) every call goes to OpenBLAS's sgemm instead, for
 * `gatelab bench --blas` only: it times the same step on both products.
 */
#include <immintrin.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <cblas.h>

#include "opprof.h"
#include "ops.h"
#include "simd.h"

static int use_blas;

void gemm_use_blas(int on) { use_blas = on != 0; }
int gemm_uses_blas(void) { return use_blas; }

typedef struct {
    int ta, tb, M, N, K;
    float alpha, beta;
    const float *A, *B;
    size_t lda, ldb, ldc;
    float *C;
    int lower; /* C's entries (i, j) with j > i + diag are not needed */
    int diag;
    int zeros; /* GEMM_ZEROS_*: op(A)'s structural zeros, which the tiles skip */
    int zdiag;
} Gemm;

/* op(A)[i, k] sits at A + i * ai + k * ak. */
static inline size_t a_row_step(const Gemm *g) { return g->ta ? 1 : g->lda; }
static inline size_t a_k_step(const Gemm *g) { return g->ta ? g->lda : 1; }

static inline float finish(float acc, float alpha, float beta, float c) {
    float t = alpha == 1.0f ? acc : alpha * acc;
    if (beta == 0.0f) return t;
    return beta == 1.0f ? c + t : beta * c + t;
}

/* The plain path, and the reference of the others: any shape, any layout. */
static void gemm_scalar(const Gemm *g) {
    size_t ai = a_row_step(g), ak = a_k_step(g);
    for (int i = 0; i < g->M; i++)
        for (int j = 0; j < g->N; j++) {
            float acc = 0.0f;
            for (int k = 0; k < g->K; k++) {
                float a = g->A[(size_t)i * ai + (size_t)k * ak];
                float b = g->tb ? g->B[(size_t)j * g->ldb + k] : g->B[(size_t)k * g->ldb + j];
                acc = fmaf(a, b, acc);
            }
            float *c = g->C + (size_t)i * g->ldc + j;
            *c = finish(acc, g->alpha, g->beta, *c);
        }
}

/* One tile's operands: R rows of op(A) from a (row step ai, k step ak),
 * op(B)'s rows k at b + k * ldb (w valid columns), C's rows at c, over K
 * values of k. A long k loop is cut into blocks: a block that is not the
 * first takes its accumulators from part, one that is not the last leaves
 * them there (exact floats: the chain goes on unchanged). */
typedef struct {
    const float *a, *b;
    size_t ai, ak, ldb, ldc;
    float *c;
    int K, w;
    float alpha, beta;
    float *part;     /* NULL, or the tile's partial sums (row stride W) between k blocks */
    int first, last; /* this k block starts the chains from zero / finishes them */
    int ext;         /* trailing zero terms after the K run: when a sum is -0, the one value such a
                      * term can change, the tile stores nothing and returns 1 (its caller runs
                      * the whole chains) */
    int pf;          /* prefetch the rows PF_AHEAD values of k on: op(B)'s, and a transposed A's */
} Tile;

/* How far ahead in k a tile with pf asks for its operands' lines. */
enum { PF_AHEAD = 16 };

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
            acc[r][0] = _mm512_loadu_ps(t->part + r * 32);
            acc[r][1] = V == 2 ? _mm512_loadu_ps(t->part + r * 32 + 16) : acc[r][0];
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
            _mm512_storeu_ps(t->part + r * 32, acc[r][0]);
            if (V == 2) _mm512_storeu_ps(t->part + r * 32 + 16, acc[r][1]);
        }
        return 0;
    }
    if (alpha == 1.0f && beta == 0.0f) store_v4(acc, t->c, t->ldc, R, V, m0, m1, 1.0f, 0.0f);
    else if (alpha == 1.0f && beta == 1.0f) store_v4(acc, t->c, t->ldc, R, V, m0, m1, 1.0f, 1.0f);
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

SIMD_V4 static int tile_rows_v4(const Tile *t, int R) {
    return t->pf ? tile_rows_z(t, R, 1) : tile_rows_z(t, R, 0);
}

/* Packs 16 rows of B (b, row step ldb) as 16 columns of the panel p (row
 * step W), for k in [0, K): 16 x 16 blocks transposed in registers, the
 * last K % 16 values one by one. A copy: no value changes. */
SIMD_V4 static void pack16_v4(const float *b, size_t ldb, float *p, size_t W, size_t K) {
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

SIMD_V3 static inline __attribute__((always_inline)) __m256i mask8(int w) {
    __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(w), lane);
}

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
finish8(__m256 acc, const Tile *t, const float *c, __m256i m, int full) {
    __m256 v = t->alpha == 1.0f ? acc : _mm256_mul_ps(_mm256_set1_ps(t->alpha), acc);
    if (t->beta == 0.0f) return v;
    __m256 old = ld8(c, m, full);
    if (t->beta != 1.0f) old = _mm256_mul_ps(_mm256_set1_ps(t->beta), old);
    return _mm256_add_ps(old, v);
}

SIMD_V3 static inline __attribute__((always_inline)) int tile_v3(const Tile *t, const int R,
                                                                 const int full) {
    __m256i m0 = mask8(t->w), m1 = mask8(t->w - 8);
    __m256 acc[6][2];
    if (t->part && !t->first) {
        _Pragma("GCC unroll 8") for (int r = 0; r < R; r++) {
            acc[r][0] = _mm256_loadu_ps(t->part + r * 16);
            acc[r][1] = _mm256_loadu_ps(t->part + r * 16 + 8);
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
            _mm256_storeu_ps(t->part + r * 16, acc[r][0]);
            _mm256_storeu_ps(t->part + r * 16 + 8, acc[r][1]);
        }
        return 0;
    }
    _Pragma("GCC unroll 8") for (int r = 0; r < R; r++) {
        float *c = t->c + (size_t)r * t->ldc;
        st8(c, m0, finish8(acc[r][0], t, c, m0, full), full);
        st8(c + 8, m1, finish8(acc[r][1], t, c + 8, m1, full), full);
    }
    return 0;
}

SIMD_V3 static int tile_rows_v3(const Tile *t, int R) {
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

/* Runs a tile; 1 (C left as it was) when a tile with ext holds a -0 sum. */
typedef int (*TileRows)(const Tile *t, int R);

/* A path's register blocking: its tile function, panel width W, rows per
 * tile on a full panel and on a panel of W / 2 or fewer columns, and how
 * gemm_kernel_name states it. */
typedef struct {
    TileRows rows;
    int W, rmax, rnarrow;
    const char *name;
} Kernel;

static const Kernel KERNEL_V4 = {tile_rows_v4, 32, 8, 16,
                                 "avx512: tiles 8 x 32, 16 x 16 on panels of 16 columns or fewer; "
                                 "k blocks of 128"};
static const Kernel KERNEL_V3 = {tile_rows_v3, 16, 6, 6, "avx2: tiles 6 x 16; k blocks of 128"};

/* Loop order: groups of up to GROUP rows of C; in each, panels of W
 * columns; in each, blocks of up to KBLOCK values of k; in each, the tiles
 * down the group. A group's rows of op(A) and a panel's block of op(B) then
 * stay in cache while they are used, whatever the shape: a weight
 * gradient's k runs over thousands of rows, a projection's M too. A
 * transposed B is packed whole into pk first (panel after panel, each K x W,
 * zero past the edge). A k block of 128 keeps a full panel's block of B in
 * 16 KB of L1 beside the rows of A it meets (256 values took 32 KB, and the
 * weight gradients and the d_ff-wide products ran 5-10% slower). */
enum { GROUP = 256, KBLOCK = 128 };

static void pack_transposed(const Gemm *g, int W, float *pk) {
    size_t K = (size_t)g->K;
    for (int j0 = 0; j0 < g->N; j0 += W) {
        int w = g->N - j0 < W ? g->N - j0 : W, j = 0;
        float *p = pk + (size_t)j0 * K;
        if (W == 32) /* the AVX-512 path */
            for (; j + 16 <= w; j += 16)
                pack16_v4(g->B + (size_t)(j0 + j) * g->ldb, g->ldb, p + j, (size_t)W, K);
        for (; j < w; j++) { /* B's row j0 + j, read in order */
            const float *b = g->B + (size_t)(j0 + j) * g->ldb;
            for (size_t k = 0; k < K; k++) p[k * W + j] = b[k];
        }
        for (size_t k = 0; k < K; k++)
            for (int j = w; j < W; j++) p[k * W + j] = 0.0f;
    }
}

/* The columns a tile of a lower product needs: those of panel j0 (w wide)
 * up to its last row's diagonal, none when the panel lies right of it. The
 * narrower tile takes the instance its width selects (a vector fewer, or
 * masked), and the same one in every k block. */
static inline int tile_width(const Gemm *g, int ilast, int j0, int w) {
    int need = ilast + g->diag + 1 - j0;
    return need < w ? need : w;
}

/* The k values [*lo, *hi) a tile of rows [i0, i0 + R) runs: all of them
 * but op(A)'s structural zeros that every row of the tile has (those of
 * its first row when they lead, of its last row when they trail); an
 * empty range is [0, 0). */
static inline void tile_k_range(const Gemm *g, int i0, int R, int *lo, int *hi) {
    int l = 0, h = g->K;
    if (g->zeros == GEMM_ZEROS_LEADING) l = i0 - g->zdiag;
    if (g->zeros == GEMM_ZEROS_TRAILING) h = i0 + R + g->zdiag;
    l = l < 0 ? 0 : l, h = h > g->K ? g->K : h;
    *lo = l < h ? l : 0, *hi = l < h ? h : 0;
}

/* One tile of rows [i0, i0 + R) of a product with op(A)'s zeros (not a
 * lower one), in the k block [k0, k1) of the panel t: the part of its k
 * range in the block, if any. The block that holds the range's start
 * starts the chains, the one that holds its end finishes them (and, after
 * trailing zeros, may run them on to K). */
static void tile_zeros(const Gemm *g, const Kernel *kn, const Tile *t, float *part, int i0, int R,
                       int g0, int j0, int k0, int k1) {
    int lo, hi;
    tile_k_range(g, i0, R, &lo, &hi);
    const int bf = lo / KBLOCK, bl = hi > lo ? (hi - 1) / KBLOCK : bf, cur = k0 / KBLOCK;
    if (cur < bf || cur > bl) return;
    const int s = lo > k0 ? lo : k0, e = hi < k1 ? hi : k1;
    Tile u = *t;
    u.first = cur == bf, u.last = cur == bl, u.K = e - s, u.pf = 1;
    u.ext = u.last && g->zeros == GEMM_ZEROS_TRAILING ? g->K - hi : 0;
    u.a = g->A + (size_t)i0 * t->ai + (size_t)s * t->ak;
    u.b = t->b + (size_t)(s - k0) * t->ldb;
    u.c = g->C + (size_t)i0 * g->ldc + j0;
    u.part = bf == bl ? NULL : part + (size_t)(i0 - g0) * kn->W;
    if (!kn->rows(&u, R)) return;
    u.first = u.last = 1, u.part = NULL, u.ext = 0; /* a -0 sum: the whole chains, in one run */
    u.a = g->A + (size_t)i0 * t->ai + (size_t)lo * t->ak;
    u.b = t->b + ((ptrdiff_t)lo - k0) * (ptrdiff_t)t->ldb;
    u.K = g->K - lo;
    kn->rows(&u, R);
}

static void gemm_tiled(const Gemm *g, const Kernel *kn, float *pk, float *part) {
    size_t ai = a_row_step(g), ak = a_k_step(g), K = (size_t)g->K;
    const int W = kn->W;
    if (g->tb) pack_transposed(g, W, pk);
    for (int g0 = 0; g0 < g->M; g0 += GROUP) {
        int g1 = g->M - g0 < GROUP ? g->M : g0 + GROUP;
        for (int j0 = 0; j0 < g->N; j0 += W) {
            const float *b = g->tb ? pk + (size_t)j0 * K : g->B + j0;
            size_t ldb = g->tb ? (size_t)W : g->ldb;
            Tile t = {.ai = ai,
                      .ak = ak,
                      .ldb = ldb,
                      .ldc = g->ldc,
                      .w = g->N - j0 < W ? g->N - j0 : W,
                      .alpha = g->alpha,
                      .beta = g->beta};
            for (size_t k0 = 0;; k0 += KBLOCK) {
                size_t k1 = K - k0 < KBLOCK ? K : k0 + KBLOCK;
                t.first = k0 == 0, t.last = k1 == K, t.K = (int)(k1 - k0);
                t.b = b + k0 * ldb;
                const int rmax = t.w <= W / 2 ? kn->rnarrow : kn->rmax;
                for (int i0 = g0; i0 < g1; i0 += rmax) {
                    const int R = g1 - i0 < rmax ? g1 - i0 : rmax;
                    if (g->zeros) {
                        tile_zeros(g, kn, &t, part, i0, R, g0, j0, (int)k0, (int)k1);
                        continue;
                    }
                    Tile u = t;
                    if (g->lower && (u.w = tile_width(g, i0 + R - 1, j0, t.w)) <= 0) continue;
                    u.a = g->A + (size_t)i0 * ai + k0 * ak;
                    u.c = g->C + (size_t)i0 * g->ldc + j0;
                    u.part = t.first && t.last ? NULL : part + (size_t)(i0 - g0) * W;
                    kn->rows(&u, R);
                }
                if (k1 == K) break;
            }
        }
    }
}

/* part: the partial sums of a group's tiles between k blocks (GROUP x W),
 * only for a k loop longer than a block. */
static __attribute__((noinline)) void gemm_run_long(const Gemm *g, SimdPath path, float *pk) {
    float part[GROUP * 32];
    gemm_tiled(g, path == SIMD_AVX512 ? &KERNEL_V4 : &KERNEL_V3, pk, part);
}

static void gemm_run(const Gemm *g, SimdPath path, float *pk) {
    if (g->K > KBLOCK) gemm_run_long(g, path, pk);
    else gemm_tiled(g, path == SIMD_AVX512 ? &KERNEL_V4 : &KERNEL_V3, pk, NULL);
}

/* The panel buffer for a transposed B: on the stack up to PACK_STACK
 * floats, else the heap; 0, or -1 when no memory was to be had. A separate
 * function, so the calls that pack nothing (most of attention's) set up no
 * 64 KB frame. */
enum { PACK_STACK = 32 * 512 };

static __attribute__((noinline)) int gemm_packed(const Gemm *g, SimdPath path) {
    float stack[PACK_STACK], *pk = stack;
    size_t W = path == SIMD_AVX512 ? 32 : 16;
    size_t need = (size_t)g->K * (((size_t)g->N + W - 1) / W * W);
    if (need > PACK_STACK && !(pk = malloc(need * sizeof *pk))) return -1;
    gemm_run(g, path, pk);
    if (pk != stack) free(pk);
    return 0;
}

/* The rows of op(B) (not transposed) that only zero terms may meet: those
 * after row zdiag (trailing zeros), or before row M - 1 - zdiag (leading). */
static void skipped_rows(const Gemm *g, int *k0, int *k1) {
    int lo = 0, hi = g->K;
    if (g->zeros == GEMM_ZEROS_TRAILING) lo = g->zdiag + 1;
    else hi = g->M - 1 - g->zdiag;
    *k0 = lo < 0 ? 0 : lo, *k1 = hi > g->K ? g->K : hi;
}

/* Whether op(B)'s rows [k0, k1) hold only finite values, so that a zero
 * term adds a zero (0 * inf is NaN): no magnitude's bits reach inf's. */
SIMD_V4 static int finite_v4(const Gemm *g, int k0, int k1) {
    const __m512i mag = _mm512_set1_epi32(0x7fffffff);
    __m512i top = _mm512_setzero_si512();
    for (int j = 0; j < g->N; j += 16) {
        __mmask16 m = g->N - j >= 16 ? 0xffff : (__mmask16)((1u << (g->N - j)) - 1);
        for (int k = k0; k < k1; k++) {
            __m512i v = _mm512_maskz_loadu_epi32(m, g->B + (size_t)k * g->ldb + j);
            top = _mm512_max_epu32(top, _mm512_and_si512(v, mag));
        }
    }
    return _mm512_reduce_max_epu32(top) < 0x7f800000u;
}

SIMD_V3 static int finite_v3(const Gemm *g, int k0, int k1) {
    const __m256i mag = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
    __m256i top = _mm256_setzero_si256();
    for (int j = 0; j < g->N; j += 8) {
        __m256i m = mask8(g->N - j);
        for (int k = k0; k < k1; k++) {
            __m256i v = _mm256_maskload_epi32((const int *)(g->B + (size_t)k * g->ldb + j), m);
            top = _mm256_max_epu32(top, _mm256_and_si256(v, mag));
        }
    }
    __m256i bad = _mm256_cmpeq_epi32(_mm256_max_epu32(top, inf), top); /* top >= inf */
    return _mm256_testz_si256(bad, bad);
}

static int gemm_simd(const Gemm *g, SimdPath path) {
    if (g->tb) return gemm_packed(g, path);
    int k0 = 0, k1 = 0;
    if (g->zeros) skipped_rows(g, &k0, &k1);
    if (k0 < k1 && !(path == SIMD_AVX512 ? finite_v4(g, k0, k1) : finite_v3(g, k0, k1))) {
        Gemm full = *g; /* the zero terms are not zero: run every chain whole */
        full.zeros = 0;
        gemm_run(&full, path, NULL);
        return 0;
    }
    gemm_run(g, path, NULL);
    return 0;
}
#endif

const char *gemm_kernel_name(void) {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
    SimdPath p = simd_path();
    if (p == SIMD_AVX512) return KERNEL_V4.name;
    if (p == SIMD_AVX2) return KERNEL_V3.name;
#endif
    return "plain: one element at a time";
}

static void gemm_own(const Gemm *g) {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
    SimdPath p = simd_path();
    if ((p == SIMD_AVX512 || p == SIMD_AVX2) && gemm_simd(g, p) == 0) return;
#endif
    gemm_scalar(g); /* the same bits, without the panel buffer */
}

static void gemm_call(const Gemm *g) {
    if (g->M <= 0 || g->N <= 0) return;
    int prof = opprof_enter(OPPROF_PRODUCTS);
    if (use_blas && g->K > 0) {
        cblas_sgemm(CblasRowMajor, g->ta ? CblasTrans : CblasNoTrans,
                    g->tb ? CblasTrans : CblasNoTrans, g->M, g->N, g->K, g->alpha, g->A,
                    (int)g->lda, g->B, (int)g->ldb, g->beta, g->C, (int)g->ldc);
    } else {
        gemm_own(g);
    }
    opprof_leave(prof);
}

/* The call's operands, in cblas_sgemm's order. */
static Gemm gemm_args(int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda,
                      const float *B, int ldb, float beta, float *C, int ldc) {
    return (Gemm){.ta = ta,
                  .tb = tb,
                  .M = M,
                  .N = N,
                  .K = K > 0 ? K : 0,
                  .alpha = alpha,
                  .beta = beta,
                  .A = A,
                  .B = B,
                  .lda = (size_t)lda,
                  .ldb = (size_t)ldb,
                  .ldc = (size_t)ldc,
                  .C = C};
}

void gemm(int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda, const float *B,
          int ldb, float beta, float *C, int ldc) {
    Gemm g = gemm_args(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    gemm_call(&g);
}

void gemm_lower(int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda,
                const float *B, int ldb, float beta, float *C, int ldc, int diag) {
    Gemm g = gemm_args(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    g.lower = 1, g.diag = diag;
    gemm_call(&g);
}

void gemm_zeros(int ta, int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                int ldb, float beta, float *C, int ldc, int zeros, int diag) {
    Gemm g = gemm_args(ta, 0, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    if (zeros == GEMM_ZEROS_LEADING || zeros == GEMM_ZEROS_TRAILING)
        g.zeros = zeros, g.zdiag = diag;
    gemm_call(&g);
}
