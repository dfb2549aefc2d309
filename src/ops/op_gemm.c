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
 * wide. Between k blocks a tile's sums wait as exact floats in a buffer
 * (gemm_kouter: in C itself), so the chain is the same. Groups of GROUP rows are the outer loop,
 * then column panels, then k blocks, then the tiles down the group: a group's rows of A and a
 * panel's block of B stay in cache while they are used, also for a weight gradient's k over
 * thousands of positions. A transposed B is packed with 16 x 16 transposes in registers on the
 * AVX-512 path, asking for the next 16 rows of B while it transposes the 16 before them. A lower
 * product of one k block, and a projection whose op(B) fits in L2, run their tiles row tile by row
 * tile, across the panels, each over its whole k range (gemm_rows), so that C is written row by
 * row; on the AVX2 path a weight gradient written whole runs its k blocks outermost, each across
 * the panels (gemm_kouter), so that its op(A) is read once. gemm_kernel_name says which blocking
 * runs; the tiles are in op_gemm_tiles.c. gemm_zeros's tiles run only the k values where one of
 * their rows of op(A) is not a structural zero (ops.h), with their own instances, which prefetch
 * ahead in k.
 *
 * A GemmPacks (ops.h) holds transposed operands packed ahead, in the same
 * panels (pack_transposed), for the calls that read them many times:
 * gemm_tb_packed and gemm_lower_packed run on those panels when the set
 * holds their B, and pack for themselves otherwise.
 *
 * With gemm_use_blas(1) every call goes to OpenBLAS's sgemm instead, for
 * `gatelab bench --blas` only: it times the same step on both products.
 */
#include <immintrin.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <cblas.h>

#include "gemm_tiles.h"
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
    const float *panels; /* op(B) = B^T already packed (pack_transposed's layout), or NULL */
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

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)

/* Runs a tile; 1 (C left as it was) when a tile with ext holds a -0 sum. */
typedef int (*TileRows)(const Tile *t, int R);

/* A path's register blocking: its tile function, panel width W, rows per
 * tile on a full panel and on a panel of W / 2 or fewer columns, whether
 * the projections run in row order and the weight gradients k blocks
 * outermost (gemm_run), and how gemm_kernel_name states it. */
typedef struct {
    TileRows rows;
    int W, rmax, rnarrow;
    int plain_rows, k_outer;
    const char *name;
} Kernel;

/* Row order for the projections: on AVX-512 1.03x at small.ini and
 * reference.ini (Sapphire Rapids). On AVX2, 1.06x at small.ini and 1.14x
 * at reference.ini on a Zen 3 (32 KB L1, 512 KB L2), where the Xeon, with
 * the AVX2 path forced, ran small.ini 0.93x: the CPUs that run this path
 * are AMD's Zen 2 and 3 and Intel's before AVX-512. k blocks outermost for
 * the weight gradients, on top of it: 1.08x at small.ini and 1.03x at
 * reference.ini on the Zen 3 (6 interleaved rounds, a noisy host). Not
 * measured on an AVX-512 CPU (whose tiles would have to mask the part's
 * loads and stores), so that path keeps its k blocks inside the panels. */
static const Kernel KERNEL_V4 = {gemm_tile_rows_v4,
                                 32,
                                 8,
                                 16,
                                 1,
                                 0,
                                 "avx512: tiles 8 x 32, 16 x 16 on panels of 16 columns or fewer; "
                                 "k blocks of 128, or row order over the whole k where op(B) "
                                 "fits in L2"};
static const Kernel KERNEL_V3 = {gemm_tile_rows_v3,
                                 16,
                                 6,
                                 6,
                                 1,
                                 1,
                                 "avx2: tiles 6 x 16; k blocks of 128, outermost for a weight "
                                 "gradient, or row order over the whole k where op(B) fits in L2"};

/* The blocked order (gemm_tiled; gemm_run chooses it or gemm_rows' row
 * order): groups of up to GROUP rows of C; in each, panels of W
 * columns; in each, blocks of up to KBLOCK values of k; in each, the tiles
 * down the group. A group's rows of op(A) and a panel's block of op(B) then
 * stay in cache while they are used, whatever the shape: a weight
 * gradient's k runs over thousands of rows, a projection's M too. A
 * transposed B is read from pk, packed whole first (panel after panel, each
 * K x W, zero past the edge) by the call or ahead (GemmPacks). A k block of 128 keeps a full
 * panel's block of B in 16 KB of L1 beside the rows of A it meets (256 values took 32 KB, and the
 * weight gradients and the d_ff-wide products ran 5-10% slower). */
enum { GROUP = 256, KBLOCK = 128 };

/* Asks for B's rows [j, j + 16) (K values each), the next 16 rows that
 * pack_transposed reads, while it transposes the 16 before them. */
static inline void pack_ahead(const Gemm *g, int j, size_t K) {
    for (int r = j; r < j + 16 && r < g->N; r++)
        for (size_t k = 0; k < K; k += 16) __builtin_prefetch(g->B + (size_t)r * g->ldb + k, 0, 3);
}

static void pack_transposed(const Gemm *g, int W, float *pk) {
    size_t K = (size_t)g->K;
    for (int j0 = 0; j0 < g->N; j0 += W) {
        int w = g->N - j0 < W ? g->N - j0 : W, j = 0;
        float *p = pk + (size_t)j0 * K;
        if (W == 32) /* the AVX-512 path */
            for (; j + 16 <= w; j += 16) {
                pack_ahead(g, j0 + j + 16, K);
                gemm_pack16_v4(g->B + (size_t)(j0 + j) * g->ldb, g->ldb, p + j, (size_t)W, K);
            }
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

/* The tile of panel j0 (W columns, or fewer at the right edge) over the
 * k values [k0, k1), its rows (a, c, part) left for the caller; a part,
 * if any, W wide. pk: a transposed B's panels (pack_transposed), or NULL. */
static Tile block_tile(const Gemm *g, const Kernel *kn, const float *pk, int j0, size_t k0,
                       size_t k1) {
    const size_t K = (size_t)g->K, W = (size_t)kn->W, ldb = g->tb ? W : g->ldb;
    const float *b = g->tb ? pk + (size_t)j0 * K : g->B + j0;
    return (Tile){.ai = a_row_step(g),
                  .ak = a_k_step(g),
                  .b = b + k0 * ldb,
                  .ldb = ldb,
                  .ldc = g->ldc,
                  .K = (int)(k1 - k0),
                  .w = g->N - j0 < (int)W ? g->N - j0 : (int)W,
                  .alpha = g->alpha,
                  .beta = g->beta,
                  .ps = W,
                  .first = k0 == 0,
                  .last = k1 == K};
}

static void gemm_tiled(const Gemm *g, const Kernel *kn, const float *pk, float *part) {
    size_t ai = a_row_step(g), ak = a_k_step(g), K = (size_t)g->K;
    const int W = kn->W;
    for (int g0 = 0; g0 < g->M; g0 += GROUP) {
        int g1 = g->M - g0 < GROUP ? g->M : g0 + GROUP;
        for (int j0 = 0; j0 < g->N; j0 += W) {
            for (size_t k0 = 0;; k0 += KBLOCK) {
                size_t k1 = K - k0 < KBLOCK ? K : k0 + KBLOCK;
                const Tile t = block_tile(g, kn, pk, j0, k0, k1);
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

/* Row order: the row tiles in turn, each one's tiles left to right across
 * the panels over its whole k range at once (no k blocks, no partial sums),
 * up to the diagonal in a lower product. C's rows are then written in
 * order, as streams the hardware prefetches, and a tile's rows of op(A)
 * stay in L1 across the panels, while op(B) (small enough to stay in L2,
 * gemm_run) streams past. Products that write a cold C run faster so: the
 * attention scores (a block of the map: panel after panel, down the rows,
 * ran their forward calls about 15% slower), the projections' outputs.
 * Each tile's sums are those of gemm_tiled's. */
static void gemm_rows(const Gemm *g, const Kernel *kn, const float *pk) {
    const size_t ai = a_row_step(g), ak = a_k_step(g), K = (size_t)g->K;
    const int W = kn->W;
    Tile t = {.ai = ai,
              .ak = ak,
              .ldc = g->ldc,
              .K = g->K,
              .alpha = g->alpha,
              .beta = g->beta,
              .first = 1,
              .last = 1};
    for (int i0 = 0; i0 < g->M; i0 += kn->rmax) {
        const int i1 = g->M - i0 < kn->rmax ? g->M : i0 + kn->rmax;
        for (int j0 = 0; j0 < g->N; j0 += W) {
            const int w = g->N - j0 < W ? g->N - j0 : W;
            t.b = g->tb ? pk + (size_t)j0 * K : g->B + j0;
            t.ldb = g->tb ? (size_t)W : g->ldb;
            const int R = i1 - i0; /* rmax rows, or fewer at the bottom, on any panel */
            t.w = g->lower ? tile_width(g, i1 - 1, j0, w) : w;
            if (t.w <= 0) break;
            t.a = g->A + (size_t)i0 * ai;
            t.c = g->C + (size_t)i0 * g->ldc + j0;
            kn->rows(&t, R);
        }
    }
}

/* k blocks outermost, for a weight gradient (op(A) transposed, its k over
 * every position of the shard) whose C is written whole (alpha 1, beta 0,
 * k_outer): per group of rows, the k blocks in turn, each across the
 * panels and down the group, a tile's sums waiting between blocks in C
 * itself (exact floats; the tile masks them at the right edge). A block of
 * op(A), GROUP x KBLOCK, is then read from memory once and from L2 by
 * every panel, where gemm_tiled reads the group's whole k range again for
 * each panel, more than a 512 KB L2 keeps beside op(B). Each tile's sums
 * are gemm_tiled's. */
static void gemm_kouter(const Gemm *g, const Kernel *kn, const float *pk) {
    const size_t K = (size_t)g->K;
    for (int g0 = 0; g0 < g->M; g0 += GROUP) {
        const int g1 = g->M - g0 < GROUP ? g->M : g0 + GROUP;
        for (size_t k0 = 0; k0 < K; k0 += KBLOCK) {
            const size_t k1 = K - k0 < KBLOCK ? K : k0 + KBLOCK;
            for (int j0 = 0; j0 < g->N; j0 += kn->W) {
                Tile t = block_tile(g, kn, pk, j0, k0, k1);
                const int rmax = t.w <= kn->W / 2 ? kn->rnarrow : kn->rmax;
                t.ps = g->ldc;
                for (int i0 = g0; i0 < g1; i0 += rmax) {
                    t.a = g->A + (size_t)i0 * t.ai + k0 * t.ak;
                    t.c = t.part = g->C + (size_t)i0 * g->ldc + j0;
                    kn->rows(&t, g1 - i0 < rmax ? g1 - i0 : rmax);
                }
            }
        }
    }
}

/* part: the partial sums of a group's tiles between k blocks (GROUP x W),
 * only for a k loop longer than a block. */
static __attribute__((noinline)) void gemm_run_long(const Gemm *g, const Kernel *kn,
                                                    const float *pk) {
    float part[GROUP * 32];
    gemm_tiled(g, kn, pk, part);
}

/* Row order (gemm_rows) for a lower product of one k block, and, on a
 * path whose Kernel says plain_rows, for a plain product with op(A) not
 * transposed, at least ROWS_MIN_M rows and
 * op(B) of at most ROWS_MAX_B floats (512 KB: half a Zen 4 or 5 core's
 * L2, a quarter of Sapphire Rapids', all of a Zen 3's): the projections, forward and their
 * input gradients. The weight gradients (op(A) transposed: each k a row
 * of A, a tile's k range hundreds of lines) keep the blocked order, which
 * measured faster for them, or on AVX2 run gemm_kouter's. */
enum { ROWS_MIN_M = 128, ROWS_MAX_B = 128 * 1024 };

static int rows_order(const Gemm *g, const Kernel *kn) {
    if (g->lower) return g->K <= KBLOCK;
    return kn->plain_rows && !g->ta && !g->zeros && g->M >= ROWS_MIN_M &&
           (size_t)g->K * (size_t)g->N <= (size_t)ROWS_MAX_B;
}

/* gemm_kouter's products, on a path whose Kernel says k_outer. */
static int k_outer(const Gemm *g, const Kernel *kn) {
    return kn->k_outer && g->ta && g->K > KBLOCK && g->alpha == 1.0f && g->beta == 0.0f &&
           !g->zeros && !g->lower;
}

static void gemm_run(const Gemm *g, SimdPath path, const float *pk) {
    const Kernel *kn = path == SIMD_AVX512 ? &KERNEL_V4 : &KERNEL_V3;
    if (rows_order(g, kn)) gemm_rows(g, kn, pk);
    else if (k_outer(g, kn)) gemm_kouter(g, kn, pk);
    else if (g->K > KBLOCK) gemm_run_long(g, kn, pk);
    else gemm_tiled(g, kn, pk, NULL);
}

/* The panel buffer for a transposed B: on the stack up to PACK_STACK
 * floats, else the heap; 0, or -1 when no memory was to be had. A separate
 * function, so the calls that pack nothing (most of attention's) set up no
 * 64 KB frame. */
enum { PACK_STACK = 32 * 512 };

static __attribute__((noinline)) int gemm_packed(const Gemm *g, SimdPath path) {
    float stack[PACK_STACK], *pk = stack;
    size_t W = (size_t)(path == SIMD_AVX512 ? KERNEL_V4.W : KERNEL_V3.W);
    size_t need = (size_t)g->K * (((size_t)g->N + W - 1) / W * W);
    if (need > PACK_STACK && !(pk = malloc(need * sizeof *pk))) return -1;
    pack_transposed(g, (int)W, pk);
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

/* Whether rows [k0, k1) of B[., N] (row step ldb) hold only finite values,
 * so that a zero term adds a zero (0 * inf is NaN): no magnitude's bits
 * reach inf's. */
SIMD_V4 static int finite_v4(const float *B, size_t ldb, int N, int k0, int k1) {
    const __m512i mag = _mm512_set1_epi32(0x7fffffff);
    __m512i top = _mm512_setzero_si512(), top2 = _mm512_setzero_si512();
    for (int j = 0; j < N; j += 16) {
        __mmask16 m = N - j >= 16 ? 0xffff : (__mmask16)((1u << (N - j)) - 1);
        int k = k0;
        for (; k + 1 < k1; k += 2) {
            __m512i v = _mm512_maskz_loadu_epi32(m, B + (size_t)k * ldb + j);
            __m512i u = _mm512_maskz_loadu_epi32(m, B + (size_t)(k + 1) * ldb + j);
            top = _mm512_max_epu32(top, _mm512_and_si512(v, mag));
            top2 = _mm512_max_epu32(top2, _mm512_and_si512(u, mag));
        }
        if (k < k1) {
            __m512i v = _mm512_maskz_loadu_epi32(m, B + (size_t)k * ldb + j);
            top = _mm512_max_epu32(top, _mm512_and_si512(v, mag));
        }
    }
    return _mm512_reduce_max_epu32(_mm512_max_epu32(top, top2)) < 0x7f800000u;
}

SIMD_V3 static int finite_v3(const float *B, size_t ldb, int N, int k0, int k1) {
    const __m256i mag = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
    __m256i top = _mm256_setzero_si256();
    for (int j = 0; j < N; j += 8) {
        __m256i m = mask8(N - j);
        for (int k = k0; k < k1; k++) {
            __m256i v = _mm256_maskload_epi32((const int *)(B + (size_t)k * ldb + j), m);
            top = _mm256_max_epu32(top, _mm256_and_si256(v, mag));
        }
    }
    __m256i bad = _mm256_cmpeq_epi32(_mm256_max_epu32(top, inf), top); /* top >= inf */
    return _mm256_testz_si256(bad, bad);
}

static int rows_finite(SimdPath path, const float *B, size_t ldb, int N, int k0, int k1) {
    return path == SIMD_AVX512 ? finite_v4(B, ldb, N, k0, k1) : finite_v3(B, ldb, N, k0, k1);
}

/* A gemm_zeros call whose zero terms may skip op(B)'s rows [k0, k1). One
 * row of C has no zero terms: the last with trailing zeros (its chain runs
 * over k <= M - 1 + zdiag), the first with leading ones (k >= -zdiag). A
 * chain that meets an inf or NaN of B ends inf or NaN (0 * inf is NaN, and
 * neither leaves a sum, nor does alpha's product), so with beta 0, when
 * that row of C is finite after the run, so are the rows of B its chain
 * covers, and the skips were exact; when it is not, every chain is run
 * again whole over C. The rows of [k0, k1) that chain does not cover, and
 * with beta != 0 (C's old values are gone after a run) all of them, are
 * checked before the run: when one holds an inf or NaN, every chain is run
 * whole. */
static void gemm_zeros_run(const Gemm *g, SimdPath path, int k0, int k1) {
    const int trailing = g->zeros == GEMM_ZEROS_TRAILING;
    int c0 = trailing ? 0 : -g->zdiag, c1 = trailing ? g->M + g->zdiag : g->K; /* covered */
    int row = trailing ? g->M - 1 : 0, p0 = k0, p1 = k1; /* rows of B checked before */
    const int after = g->beta == 0.0f && c0 < c1;
    if (after && trailing) p0 = c1 > p0 ? c1 : p0;
    if (after && !trailing) p1 = c0 < p1 ? c0 : p1;
    Gemm full = *g;
    full.zeros = 0;
    if (p0 < p1 && !rows_finite(path, g->B, g->ldb, g->N, p0, p1)) {
        gemm_run(&full, path, NULL);
        return;
    }
    gemm_run(g, path, NULL);
    if (after && !rows_finite(path, g->C + (size_t)row * g->ldc, g->ldc, g->N, 0, 1))
        gemm_run(&full, path, NULL);
}

static int gemm_simd(const Gemm *g, SimdPath path) {
    if (g->tb && g->panels) {
        gemm_run(g, path, g->panels);
        return 0;
    }
    if (g->tb) return gemm_packed(g, path);
    int k0 = 0, k1 = 0;
    if (g->zeros) skipped_rows(g, &k0, &k1);
    if (k0 < k1) gemm_zeros_run(g, path, k0, k1);
    else gemm_run(g, path, NULL);
    return 0;
}
#endif

/* The panel width gemm packs a transposed B to on the path now running; 0
 * where it packs nothing (the plain path, OpenBLAS). */
static int pack_width(void) {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
    SimdPath p = simd_path();
    if (!use_blas && p == SIMD_AVX512) return KERNEL_V4.W;
    if (!use_blas && p == SIMD_AVX2) return KERNEL_V3.W;
#endif
    return 0;
}

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

/* ---- transposed operands packed ahead ---- */

void gemm_packs_begin(GemmPacks *ps) {
    ps->n = 0, ps->used = 0;
    ps->W = pack_width();
}

void gemm_packs_over(GemmPacks *ps, GemmPack *pack, int cap, float *mem, size_t size) {
    *ps = (GemmPacks){.pack = pack, .cap = cap, .mem = mem, .size = size, .fixed = 1};
    gemm_packs_begin(ps);
}

int gemm_packs_add(GemmPacks *ps, const float *B, int N, int K, int ldb) {
    if (!ps->W || !B || N <= 0 || K <= 0) return 0;
    if (ps->n == ps->cap && ps->fixed) return ps->n = 0, ps->W = 0, -1;
    if (ps->n == ps->cap) {
        int cap = ps->cap ? 2 * ps->cap : 32;
        GemmPack *p = realloc(ps->pack, (size_t)cap * sizeof *p);
        if (!p) return ps->n = 0, ps->W = 0, -1;
        ps->pack = p, ps->cap = cap;
    }
    const size_t W = (size_t)ps->W, cols = ((size_t)N + W - 1) / W * W;
    ps->pack[ps->n++] = (GemmPack){B, N, K, ldb, ps->used};
    ps->used += (size_t)K * cols;
    return 0;
}

int gemm_packs_commit(GemmPacks *ps) {
    if (ps->used <= ps->size) return 0;
    if (ps->fixed) return ps->n = 0, ps->W = 0, -1;
    free(ps->mem);
    size_t bytes = (ps->used * sizeof(float) + 63) / 64 * 64;
    if (!(ps->mem = aligned_alloc(64, bytes))) return ps->size = 0, ps->n = 0, ps->W = 0, -1;
    ps->size = ps->used;
    return 0;
}

void gemm_packs_fill(const GemmPacks *ps, int t, int nt) {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
    int prof = opprof_enter(OPPROF_PRODUCTS);
    for (int i = t; i < ps->n; i += nt) {
        const GemmPack *p = &ps->pack[i];
        Gemm g = {.tb = 1, .N = p->N, .K = p->K, .B = p->B, .ldb = (size_t)p->ldb};
        pack_transposed(&g, ps->W, ps->mem + p->off);
    }
    opprof_leave(prof);
#else
    (void)ps, (void)t, (void)nt;
#endif
}

void gemm_packs_only(GemmPacks *ps, const float *B, int N, int K, int ldb) {
    const GemmPack *p = ps->pack;
    if (ps->n == 1 && p->B == B && p->N == N && p->K == K && p->ldb == ldb) return;
    gemm_packs_begin(ps);
    if (gemm_packs_add(ps, B, N, K, ldb) == 0 && gemm_packs_commit(ps) == 0)
        gemm_packs_fill(ps, 0, 1);
}

void gemm_packs_free(GemmPacks *ps) {
    if (!ps->fixed) free(ps->pack), free(ps->mem);
    *ps = (GemmPacks){0};
}

/* ps's panels of B[N, K] (row step ldb) for the path now running, or NULL:
 * those of B's N rows, or of more rows when N fills its last panel (a
 * prefix's panels, zero-padded nowhere, are the first ones of the whole). */
static const float *packs_find(const GemmPacks *ps, const float *B, int N, int K, int ldb) {
    if (!ps || !ps->W || ps->W != pack_width()) return NULL;
    for (int i = 0; i < ps->n; i++) {
        const GemmPack *p = &ps->pack[i];
        const int rows = p->N == N || (N < p->N && N % ps->W == 0);
        if (p->B == B && rows && p->K == K && p->ldb == ldb) return ps->mem + p->off;
    }
    return NULL;
}

void gemm_tb_packed(const GemmPacks *ps, int ta, int M, int N, int K, float alpha, const float *A,
                    int lda, const float *B, int ldb, float beta, float *C, int ldc) {
    Gemm g = gemm_args(ta, 1, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    g.panels = packs_find(ps, B, N, K, ldb);
    gemm_call(&g);
}

void gemm_lower_packed(const GemmPacks *ps, int ta, int M, int N, int K, float alpha,
                       const float *A, int lda, const float *B, int ldb, float beta, float *C,
                       int ldc, int diag) {
    Gemm g = gemm_args(ta, 1, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    g.lower = 1, g.diag = diag;
    g.panels = packs_find(ps, B, N, K, ldb);
    gemm_call(&g);
}
