/* gemm_tiles.h: the register tiles of gatelab's own products (op_gemm.c
 * runs them; op_gemm_tiles.c holds the AVX-512 and AVX2 kernels). */
#ifndef GATELAB_GEMM_TILES_H
#define GATELAB_GEMM_TILES_H

#include <immintrin.h>
#include <stddef.h>

#include "simd.h"

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
    float *part;     /* NULL, or the tile's partial sums between k blocks */
    size_t ps;       /* part's row step: W in a buffer, or ldc where part is C itself (AVX2
                      * only: its part loads and stores are masked like C's) */
    int first, last; /* this k block starts the chains from zero / finishes them */
    int ext;         /* trailing zero terms after the K run: when a sum is -0, the one value such a
                      * term can change, the tile stores nothing and returns 1 (its caller runs
                      * the whole chains) */
    int pf;          /* prefetch the rows PF_AHEAD values of k on: op(B)'s, and a transposed A's */
} Tile;

/* How far ahead in k a tile with pf asks for its operands' lines. */
enum { PF_AHEAD = 16 };

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)

/* Run one tile of R rows: 1 (C left as it was) when a tile with ext holds
 * a -0 sum, else 0. */
SIMD_V4 int gemm_tile_rows_v4(const Tile *t, int R);
SIMD_V3 int gemm_tile_rows_v3(const Tile *t, int R);

/* Packs 16 rows of B (b, row step ldb) as 16 columns of the panel p (row
 * step W), for k in [0, K). A copy: no value changes. */
SIMD_V4 void gemm_pack16_v4(const float *b, size_t ldb, float *p, size_t W, size_t K);

/* The lanes below w, as an AVX2 mask. */
SIMD_V3 static inline __attribute__((always_inline)) __m256i mask8(int w) {
    __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(w), lane);
}

#endif
#endif
