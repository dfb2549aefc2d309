/* test_gemm.c: gemm (op_gemm.c) against its contract, bit for bit.
 *
 * The contract: each element of C is one fmaf chain over k in order from
 * zero, then alpha, then beta C. The naive loop below is that contract; the
 * kernels must equal it exactly on every shape, transpose, edge and leading
 * dimension, on whichever SIMD path this process runs (GATELAB_SIMD; meson
 * runs this test once per path, and a path the CPU lacks is skipped). With
 * gemm_use_blas(1) the same call must be OpenBLAS's sgemm, bit for bit. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <cmocka.h>

#include "ops.h"
#include "simd.h"
#include "testutil.h"

static float val(unsigned *s) {
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* The contract, written out. */
static void naive(int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda,
                  const float *B, int ldb, float beta, float *C, int ldc) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float acc = 0.0f;
            for (int k = 0; k < K; k++) {
                float a = ta ? A[(size_t)k * lda + i] : A[(size_t)i * lda + k];
                float b = tb ? B[(size_t)j * ldb + k] : B[(size_t)k * ldb + j];
                acc = fmaf(a, b, acc);
            }
            float t = alpha == 1.0f ? acc : alpha * acc, *c = &C[(size_t)i * ldc + j];
            *c = beta == 0.0f ? t : beta == 1.0f ? *c + t : beta * *c + t;
        }
}

typedef struct {
    int ta, tb, M, N, K, pad;
    float alpha, beta;
} Case;

/* Runs one case through gemm and through ref; returns the differing count
 * of C's elements (the padding columns included: they must not move). */
static size_t run_case(const Case *c, void (*ref)(int, int, int, int, int, float, const float *,
                                                  int, const float *, int, float, float *, int)) {
    int lda = (c->ta ? c->M : c->K) + c->pad, ldb = (c->tb ? c->K : c->N) + c->pad;
    int ldc = c->N + c->pad;
    size_t na = (size_t)(c->ta ? c->K : c->M) * lda + 1,
           nb = (size_t)(c->tb ? c->N : c->K) * ldb + 1;
    size_t nc = (size_t)c->M * ldc;
    float *A = malloc(na * 4), *B = malloc(nb * 4), *C1 = malloc(nc * 4), *C2 = malloc(nc * 4);
    assert_non_null(A), assert_non_null(B), assert_non_null(C1), assert_non_null(C2);
    unsigned s = (unsigned)(c->M * 7919 + c->N * 104729 + c->K * 31 + c->ta * 2 + c->tb);
    for (size_t i = 0; i < na; i++) A[i] = val(&s);
    for (size_t i = 0; i < nb; i++) B[i] = val(&s);
    for (size_t i = 0; i < nc; i++) C1[i] = C2[i] = val(&s);
    gemm(c->ta, c->tb, c->M, c->N, c->K, c->alpha, A, lda, B, ldb, c->beta, C1, ldc);
    ref(c->ta, c->tb, c->M, c->N, c->K, c->alpha, A, lda, B, ldb, c->beta, C2, ldc);
    size_t bad = 0;
    for (size_t i = 0; i < nc; i++) bad += memcmp(&C1[i], &C2[i], 4) != 0;
    free(A), free(B), free(C1), free(C2);
    return bad;
}

static const int dims[] = {1, 3, 7, 8, 9, 16, 17, 31, 33, 64, 70};
static const float alphas[] = {1.0f, 0.3f}, betas[] = {0.0f, 1.0f, 0.3f};

static void test_contract(void **state) {
    (void)state;
    gemm_use_blas(0);
    int n = 0;
    for (int t = 0; t < 4; t++)
        for (size_t m = 0; m < sizeof dims / sizeof *dims; m += 2)
            for (size_t nn = 0; nn < sizeof dims / sizeof *dims; nn++)
                for (size_t k = 1; k < sizeof dims / sizeof *dims; k += 3) {
                    Case c = {t & 1,   t >> 1,        dims[m],       dims[nn],
                              dims[k], (int)(nn % 3), alphas[n % 2], betas[n % 3]};
                    n++;
                    if (run_case(&c, naive) != 0)
                        fail_msg("ta %d tb %d M %d N %d K %d pad %d alpha %g beta %g differs on "
                                 "path %s",
                                 c.ta, c.tb, c.M, c.N, c.K, c.pad, c.alpha, c.beta,
                                 simd_path_name(simd_path()));
                }
    assert_true(n > 500);
}

/* An operand value, now and then one of the edge cases: -0, +0, a
 * subnormal, +-inf, NaN. */
static float special(unsigned *s) {
    float v = val(s);
    switch ((*s >> 4) % 40) {
    case 0: return -0.0f;
    case 1: return 0.0f;
    case 2: return v * 0x1p-130f;
    case 3: return (*s >> 12) & 1 ? INFINITY : -INFINITY;
    case 4: return NAN;
    default: return v;
    }
}

/* Equal bits, or NaN on both sides (a NaN's payload is not part of the
 * contract). */
static int same(float x, float y) { return memcmp(&x, &y, 4) == 0 || (isnan(x) && isnan(y)); }

/* One case with special operands and C; a few of op(A)'s rows all zero
 * (of either sign), so that a negative alpha makes -0 results. seen
 * counts the results that are -0, +-inf and NaN. */
static size_t special_case(const Case *c, int seen[3]) {
    int lda = (c->ta ? c->M : c->K) + c->pad, ldb = (c->tb ? c->K : c->N) + c->pad;
    int ldc = c->N + c->pad;
    size_t na = (size_t)(c->ta ? c->K : c->M) * lda, nb = (size_t)(c->tb ? c->N : c->K) * ldb;
    size_t nc = (size_t)c->M * ldc, bad = 0;
    float *A = malloc(na * 4), *B = malloc(nb * 4), *C1 = malloc(nc * 4), *C2 = malloc(nc * 4);
    assert_non_null(A), assert_non_null(B), assert_non_null(C1), assert_non_null(C2);
    unsigned s = (unsigned)(c->M * 31 + c->N * 977 + c->K * 7 + c->ta * 5 + c->tb * 3 + c->pad);
    for (size_t i = 0; i < na; i++) A[i] = special(&s);
    for (size_t i = 0; i < nb; i++) B[i] = special(&s);
    for (size_t i = 0; i < nc; i++) C1[i] = C2[i] = special(&s);
    for (int i = 1; i < c->M; i += 5)
        for (int k = 0; k < c->K; k++)
            A[c->ta ? (size_t)k * lda + i : (size_t)i * lda + k] = k & 1 ? -0.0f : 0.0f;
    gemm(c->ta, c->tb, c->M, c->N, c->K, c->alpha, A, lda, B, ldb, c->beta, C1, ldc);
    naive(c->ta, c->tb, c->M, c->N, c->K, c->alpha, A, lda, B, ldb, c->beta, C2, ldc);
    for (size_t i = 0; i < nc; i++) {
        bad += !same(C1[i], C2[i]);
        seen[0] += C2[i] == 0.0f && signbit(C2[i]);
        seen[1] += isinf(C2[i]), seen[2] += isnan(C2[i]);
    }
    free(A), free(B), free(C1), free(C2);
    return bad;
}

/* Every row count of the one-vector tiles (1-17 rows on panels of 16 or
 * fewer columns) and of the two-vector ones, full and masked panels, K
 * not a multiple of the k loop's unrolling nor of the k block, each alpha
 * and beta form (beta -0 is beta 0), on operands with -0, subnormals, inf
 * and NaN: -0, inf and NaN results all occur. */
static void test_special_values(void **state) {
    (void)state;
    gemm_use_blas(0);
    const int ms[] = {1, 2, 3, 5, 7, 8, 9, 12, 15, 16, 17, 24, 33};
    const int ns[] = {3, 16, 17, 32, 45}, ks[] = {1, 5, 130};
    const float al[] = {1.0f, -0.5f}, be[] = {0.0f, 1.0f, 0.3f, -0.0f};
    int n = 0, seen[3] = {0, 0, 0};
    for (int t = 0; t < 4; t++)
        for (size_t m = 0; m < sizeof ms / sizeof *ms; m++)
            for (size_t j = 0; j < sizeof ns / sizeof *ns; j++)
                for (size_t k = 0; k < sizeof ks / sizeof *ks; k++, n++) {
                    Case c = {t & 1, t >> 1, ms[m], ns[j], ks[k], n % 3, al[n / 4 % 2], be[n % 4]};
                    size_t bad = special_case(&c, seen);
                    if (bad)
                        fail_msg("ta %d tb %d M %d N %d K %d pad %d alpha %g beta %g: %zu "
                                 "entries differ on %s",
                                 c.ta, c.tb, c.M, c.N, c.K, c.pad, c.alpha, c.beta, bad,
                                 simd_path_name(simd_path()));
                }
    assert_int_equal(n, 4 * 13 * 5 * 3);
    assert_true(seen[0] > 0 && seen[1] > 0 && seen[2] > 0); /* the edges occur */
}

/* Entries (i, j) of C1 and C2 that differ, over the columns [0, N) and,
 * with lower, only on or left of the diagonal j = i + diag. */
static size_t count_bad(const float *C1, const float *C2, int M, int N, int ldc, int lower,
                        int diag) {
    size_t bad = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N && (!lower || j <= i + diag); j++)
            bad += !same(C1[(size_t)i * ldc + j], C2[(size_t)i * ldc + j]);
    return bad;
}

/* gemm_tb_packed and gemm_lower_packed against gemm and gemm_lower packing
 * for themselves, bit for bit, on one case with special operands (tb = 1).
 * ps holds another operand ahead of B, and is filled by two threads'
 * shares. Then B is written over: where the path packs (ps->W), a call with
 * B's packed N, or fewer rows that fill whole panels, still reads the old
 * B's panels; one with other N packs the new B itself. */
static size_t packed_case(const Case *c, GemmPacks *ps) {
    int lda = (c->ta ? c->M : c->K) + c->pad, ldb = c->K + c->pad, ldc = c->N + c->pad;
    size_t na = (size_t)(c->ta ? c->K : c->M) * lda, nb = (size_t)c->N * ldb;
    size_t nc = (size_t)c->M * ldc, bad = 0;
    float *A = malloc(na * 4), *B = malloc(nb * 4), *B0 = malloc(nb * 4), *C = malloc(nc * 4);
    float *C1 = malloc(nc * 4), *C2 = malloc(nc * 4), *X = malloc((size_t)(c->K + 3) * 9 * 4);
    assert_true(A && B && B0 && C && C1 && C2 && X);
    unsigned s = (unsigned)(c->M * 13 + c->N * 577 + c->K * 11 + c->ta * 5 + c->pad);
    for (size_t i = 0; i < na; i++) A[i] = special(&s);
    for (size_t i = 0; i < nb; i++) B0[i] = B[i] = special(&s);
    for (size_t i = 0; i < nc; i++) C[i] = special(&s);
    for (size_t i = 0; i < (size_t)(c->K + 3) * 9; i++) X[i] = val(&s);
    for (int i = 1; i < c->M; i += 5) /* rows of zeros: -0 results with alpha < 0 */
        for (int k = 0; k < c->K; k++)
            A[c->ta ? (size_t)k * lda + i : (size_t)i * lda + k] = k & 1 ? -0.0f : 0.0f;
    gemm_packs_begin(ps);
    assert_int_equal(gemm_packs_add(ps, X, 9, c->K, c->K + 3), 0);
    assert_int_equal(gemm_packs_add(ps, B, c->N, c->K, ldb), 0);
    assert_int_equal(gemm_packs_commit(ps), 0);
    gemm_packs_fill(ps, 1, 2), gemm_packs_fill(ps, 0, 2);
    for (int pass = 0; pass < 6; pass++) {
        const int N = pass < 2 || pass == 4 ? c->N : pass == 3 ? c->N / 16 * 16 : c->N - 1;
        const int lower = pass >= 4;
        if (N == 0) continue;
        if (pass == 1)
            for (size_t i = 0; i < nb; i++) B[i] = val(&s);
        const int old = pass > 0 && ps->W && (N == c->N || N % ps->W == 0);
        const float *Bref = old ? B0 : B;
        memcpy(C1, C, nc * 4), memcpy(C2, C, nc * 4);
        if (lower) {
            gemm_lower_packed(ps, c->ta, c->M, N, c->K, c->alpha, A, lda, B, ldb, c->beta, C1, ldc,
                              pass - 2);
            gemm_lower(c->ta, 1, c->M, N, c->K, c->alpha, A, lda, Bref, ldb, c->beta, C2, ldc,
                       pass - 2);
        } else {
            gemm_tb_packed(ps, c->ta, c->M, N, c->K, c->alpha, A, lda, B, ldb, c->beta, C1, ldc);
            gemm(c->ta, 1, c->M, N, c->K, c->alpha, A, lda, Bref, ldb, c->beta, C2, ldc);
        }
        bad += count_bad(C1, C2, c->M, c->N, ldc, lower, pass - 2);
    }
    free(A), free(B), free(B0), free(C), free(C1), free(C2), free(X);
    return bad;
}

/* Partial panels of both widths (N not a multiple of 16 or 32), a long k
 * chain (K over the k block), the heap's panel buffer for the unpacked
 * call (352 x 130), both layouts of A, -0, subnormals, inf and NaN. */
static void test_packed_b(void **state) {
    (void)state;
    gemm_use_blas(0);
    const int ms[] = {1, 7, 17, 33}, ns[] = {1, 15, 16, 17, 31, 32, 33, 65, 352},
              ks[] = {1, 5, 130};
    const float al[] = {1.0f, -0.5f}, be[] = {0.0f, 1.0f, 0.3f};
    GemmPacks ps = {0};
    int n = 0;
    for (int ta = 0; ta < 2; ta++)
        for (size_t m = 0; m < sizeof ms / sizeof *ms; m++)
            for (size_t j = 0; j < sizeof ns / sizeof *ns; j++)
                for (size_t k = 0; k < sizeof ks / sizeof *ks; k++, n++) {
                    Case c = {ta, 1, ms[m], ns[j], ks[k], n % 3, al[n / 3 % 2], be[n % 3]};
                    size_t bad = packed_case(&c, &ps);
                    if (bad)
                        fail_msg("ta %d M %d N %d K %d pad %d: %zu entries differ on %s", c.ta, c.M,
                                 c.N, c.K, c.pad, bad, simd_path_name(simd_path()));
                }
    gemm_packs_free(&ps);
    assert_int_equal(n, 2 * 4 * 9 * 3);
}

/* A set over the caller's memory packs what fits and never allocates: one
 * entry too many, or panels past its size, leave it empty (and products
 * then pack for themselves). */
static void test_packs_over(void **state) {
    (void)state;
    gemm_use_blas(0);
    static float mem[64 * 40], B[40 * 33];
    GemmPack one[1];
    GemmPacks ps;
    for (int i = 0; i < 40 * 33; i++) B[i] = (float)i;
    gemm_packs_over(&ps, one, 1, mem, 64 * 40);
    assert_int_equal(gemm_packs_add(&ps, B, 33, 40, 40), 0);
    assert_int_equal(gemm_packs_commit(&ps), 0);
    assert_int_equal(ps.n, ps.W ? 1 : 0);
    assert_int_equal(gemm_packs_add(&ps, B, 32, 40, 40), ps.W ? -1 : 0);
    assert_int_equal(ps.n, 0);
    const size_t need = ps.W ? 40 * (size_t)((33 + ps.W - 1) / ps.W * ps.W) : 1;
    gemm_packs_over(&ps, one, 1, mem, need - 1);
    assert_int_equal(gemm_packs_add(&ps, B, 33, 40, 40), 0);
    assert_int_equal(gemm_packs_commit(&ps), ps.W ? -1 : 0);
    assert_int_equal(ps.n, 0);
    gemm_packs_free(&ps); /* leaves mem and one alone */
    assert_true(ps.pack == NULL);
}

/* The model's own shapes: the long k chain of a weight gradient (written
 * whole: alpha 1, beta 0, its sums between k blocks kept in C on the AVX2
 * path, a narrow last panel among them, with and without padding columns,
 * and over two groups of rows), the panel buffer on the heap (a transposed
 * B with K * 32 over the stack's share). */
static void test_model_shapes(void **state) {
    (void)state;
    gemm_use_blas(0);
    const Case cases[] = {
        {0, 1, 2048, 192, 64, 0, 1.0f, 0.0f}, {0, 0, 2048, 64, 192, 0, 1.0f, 1.0f},
        {1, 0, 192, 64, 2048, 0, 1.0f, 1.0f}, {0, 1, 64, 64, 16, 5, 0.25f, 0.0f},
        {0, 1, 40, 65, 700, 0, 1.0f, 0.0f},   {0, 1, 300, 352, 128, 1, 1.0f, 0.0f},
        {1, 0, 352, 100, 600, 2, 0.5f, 0.3f}, {0, 0, 520, 70, 300, 3, 1.0f, 1.0f},
        {1, 0, 352, 100, 600, 2, 1.0f, 0.0f}, {1, 0, 300, 70, 520, 0, 1.0f, 0.0f},
        {1, 0, 128, 128, 512, 0, 1.0f, 0.0f}, {1, 1, 40, 37, 300, 1, 1.0f, 0.0f},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        assert_int_equal(run_case(&cases[i], naive), 0);
}

/* gemm_lower: every entry on or left of the diagonal j = i + diag equals
 * the contract's, for diagonals that cut no tile, some, or all, over one k
 * block (whose tiles run row tile by row tile) and several, on attention's
 * score block among them (64 queries of the last block of 256 keys, dh
 * 32: diag 192); on a SIMD path the tiles wholly right of it stay as they
 * were. */
static void test_lower(void **state) {
    (void)state;
    gemm_use_blas(0);
    const Case cases[] = {{0, 1, 64, 64, 16, 0, 0.25f, 0.0f},
                          {0, 1, 40, 70, 33, 3, 1.0f, 0.0f},
                          {0, 0, 64, 64, 300, 1, 0.5f, 1.0f},
                          {1, 1, 17, 50, 9, 2, 1.0f, 0.3f},
                          {0, 1, 64, 256, 32, 96, 0.1767767f, 0.0f}};
    const int diags[] = {-20, -3, 0, 5, 31, 100, 192};
    for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++)
        for (size_t di = 0; di < sizeof diags / sizeof *diags; di++) {
            const Case *c = &cases[ci];
            int lda = (c->ta ? c->M : c->K) + c->pad, ldb = (c->tb ? c->K : c->N) + c->pad;
            int ldc = c->N + c->pad, d = diags[di];
            size_t na = (size_t)(c->ta ? c->K : c->M) * lda,
                   nb = (size_t)(c->tb ? c->N : c->K) * ldb;
            size_t nc = (size_t)c->M * ldc, kept = 0;
            float *A = malloc(na * 4), *B = malloc(nb * 4), *C1 = malloc(nc * 4),
                  *C2 = malloc(nc * 4), *C0 = malloc(nc * 4);
            assert_non_null(A), assert_non_null(B), assert_non_null(C1), assert_non_null(C2);
            assert_non_null(C0);
            unsigned s = (unsigned)(ci * 31 + di);
            for (size_t i = 0; i < na; i++) A[i] = val(&s);
            for (size_t i = 0; i < nb; i++) B[i] = val(&s);
            for (size_t i = 0; i < nc; i++) C0[i] = C1[i] = C2[i] = val(&s);
            gemm_lower(c->ta, c->tb, c->M, c->N, c->K, c->alpha, A, lda, B, ldb, c->beta, C1, ldc,
                       d);
            naive(c->ta, c->tb, c->M, c->N, c->K, c->alpha, A, lda, B, ldb, c->beta, C2, ldc);
            for (int i = 0; i < c->M; i++)
                for (int j = 0; j < c->N; j++) {
                    size_t x = (size_t)i * ldc + (size_t)j;
                    if (j <= i + d && memcmp(&C1[x], &C2[x], 4) != 0)
                        fail_msg("case %zu diag %d: (%d, %d) differs", ci, d, i, j);
                    kept += j > i + d + 32 && memcmp(&C1[x], &C0[x], 4) == 0;
                }
            if (ci == 0 && d == 0 && simd_path() != SIMD_BASE) assert_true(kept > 0);
            free(A), free(B), free(C0), free(C1), free(C2);
        }
}

/* gemm_zeros: op(A)'s structural zeros (of either sign) leading (k < i - d)
 * or trailing (k > i + d); the result must be the contract's full chains
 * bit for bit. fill 0: values of both signs, some subnormal; fill 1: tiny
 * values whose products round to +-0, so many sums are -0 when the zeros
 * begin (a trailing zero term turns -0 into +0); fill 2: B's rows that meet
 * only zeros hold an inf and a NaN (0 * inf is NaN); fill 3: values near
 * 2^63, so that some sums overflow to inf with every value finite (the
 * kernels' check of C's chain without zeros fails and every chain runs again
 * whole, over the C the call was given). */
typedef struct {
    int ta, M, N, K, pad;
    float alpha, beta;
} ZCase;

static float zval(unsigned *s, int fill) {
    float v = val(s);
    if (fill == 1) return v < 0.0f ? -0x1p-80f : 0x1p-80f;
    if (fill == 3) return v * 0x1p63f;
    return (*s >> 3) % 17 == 0 ? v * 0x1p-130f : v; /* a subnormal now and then */
}

static int zero_at(int zeros, int i, int k, int d) {
    return zeros == GEMM_ZEROS_LEADING ? k < i - d : k > i + d;
}

static size_t zeros_case(const ZCase *c, int zeros, int d, int fill) {
    int lda = (c->ta ? c->M : c->K) + c->pad, ldb = c->N + c->pad, ldc = c->N + c->pad;
    size_t na = (size_t)(c->ta ? c->K : c->M) * lda, nb = (size_t)c->K * ldb;
    size_t nc = (size_t)c->M * ldc, bad = 0;
    float *A = malloc(na * 4), *B = malloc(nb * 4), *C1 = malloc(nc * 4), *C2 = malloc(nc * 4);
    assert_non_null(A), assert_non_null(B), assert_non_null(C1), assert_non_null(C2);
    unsigned s = (unsigned)(c->M * 131 + c->K * 7 + d * 3 + zeros + fill * 1000);
    for (int i = 0; i < c->M; i++)
        for (int k = 0; k < c->K; k++) {
            float *a = c->ta ? &A[(size_t)k * lda + i] : &A[(size_t)i * lda + k];
            *a = zval(&s, fill);
            if (zero_at(zeros, i, k, d)) *a = (s >> 9) & 1 ? -0.0f : 0.0f;
        }
    for (size_t i = 0; i < nb; i++) B[i] = zval(&s, fill);
    if (fill == 2) { /* the rows only zeros meet, when the diagonal leaves some */
        int r = zeros == GEMM_ZEROS_LEADING ? 0 : c->K - 1;
        B[(size_t)r * ldb] = INFINITY, B[(size_t)r * ldb + (size_t)c->N - 1] = NAN;
    }
    for (size_t i = 0; i < nc; i++) C1[i] = C2[i] = val(&s);
    gemm_zeros(c->ta, c->M, c->N, c->K, c->alpha, A, lda, B, ldb, c->beta, C1, ldc, zeros, d);
    naive(c->ta, 0, c->M, c->N, c->K, c->alpha, A, lda, B, ldb, c->beta, C2, ldc);
    for (size_t i = 0; i < nc; i++) bad += memcmp(&C1[i], &C2[i], 4) != 0;
    free(A), free(B), free(C1), free(C2);
    return bad;
}

/* Attention's shapes (T 64 and 256 in blocks of 64, dh 16 and 32) and
 * partial tiles (T not a multiple of 16), over one k block and several,
 * for diagonals that skip nothing, some tiles' terms, or all of them. */
static void test_zeros(void **state) {
    (void)state;
    gemm_use_blas(0);
    const ZCase cases[] = {
        {0, 64, 16, 64, 0, 1.0f, 0.0f},   {1, 64, 16, 64, 48, 1.0f, 1.0f},
        {0, 64, 32, 256, 0, 0.25f, 1.0f}, {1, 256, 32, 64, 96, 0.25f, 1.0f},
        {0, 37, 16, 70, 3, 0.3f, 0.0f},   {1, 70, 20, 37, 1, 1.0f, 0.3f},
        {0, 50, 33, 300, 2, 1.0f, 1.0f},  {1, 33, 17, 200, 5, 0.5f, 0.0f},
    };
    const int diags[] = {-300, -5, 0, 7, 64, 192};
    const int kinds[] = {GEMM_ZEROS_LEADING, GEMM_ZEROS_TRAILING};
    for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++)
        for (size_t di = 0; di < sizeof diags / sizeof *diags; di++)
            for (int z = 0; z < 2; z++)
                for (int fill = 0; fill < 4; fill++) {
                    size_t bad = zeros_case(&cases[ci], kinds[z], diags[di], fill);
                    if (bad)
                        fail_msg("case %zu diag %d zeros %d fill %d: %zu entries differ on %s", ci,
                                 diags[di], kinds[z], fill, bad, simd_path_name(simd_path()));
                }
}

/* fill 1 makes -0 sums where trailing zeros begin, and fill 2 NaN from a
 * skipped inf: both would differ if the kernels did not catch them. */
static void test_zeros_edges_occur(void **state) {
    (void)state;
    const ZCase c = {0, 64, 16, 64, 0, 1.0f, 0.0f};
    int lda = c.K, neg = 0;
    float *A = malloc((size_t)c.M * lda * 4), *B = malloc((size_t)c.K * c.N * 4);
    float *C = malloc((size_t)c.M * c.N * 4);
    assert_non_null(A), assert_non_null(B), assert_non_null(C);
    unsigned s = 5;
    for (int i = 0; i < c.M; i++)
        for (int k = 0; k < c.K; k++) A[i * lda + k] = k > i ? 0.0f : zval(&s, 1);
    for (int i = 0; i < c.K * c.N; i++) B[i] = zval(&s, 1);
    for (int i = 0; i < c.M; i++) /* the chains cut at the diagonal */
        for (int j = 0; j < c.N; j++) {
            float acc = 0.0f;
            for (int k = 0; k <= i; k++) acc = fmaf(A[i * lda + k], B[k * c.N + j], acc);
            neg += acc == 0.0f && signbit(acc);
        }
    assert_true(neg > 0);
    gemm_zeros(0, c.M, c.N, c.K, 1.0f, A, lda, B, c.N, 0.0f, C, c.N, GEMM_ZEROS_TRAILING, 0);
    for (int i = 0; i < c.M - 1; i++) /* every full chain ends on +0 * B, +0 from -0 */
        for (int j = 0; j < c.N; j++)
            assert_false(C[i * c.N + j] == 0.0f && signbit(C[i * c.N + j]) &&
                         B[(c.K - 1) * c.N + j] > 0.0f);
    B[(c.K - 1) * c.N] = INFINITY;
    gemm_zeros(0, c.M, c.N, c.K, 1.0f, A, lda, B, c.N, 0.0f, C, c.N, GEMM_ZEROS_TRAILING, 0);
    assert_true(isnan(C[0]));
    free(A), free(B), free(C);
}

static void blas(int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda,
                 const float *B, int ldb, float beta, float *C, int ldc) {
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N,
                K, alpha, A, lda, B, ldb, beta, C, ldc);
}

static void test_blas_route(void **state) {
    (void)state;
    gemm_use_blas(1);
    assert_true(gemm_uses_blas());
    const Case c = {0, 1, 100, 37, 21, 2, 1.0f, 1.0f};
    assert_int_equal(run_case(&c, blas), 0);
    gemm_use_blas(0);
    assert_false(gemm_uses_blas());
}

/* K = 0: the product is empty, C becomes beta C. */
static void test_empty_k(void **state) {
    (void)state;
    gemm_use_blas(0);
    float C[6] = {1, 2, 3, 4, 5, 6}, A[1] = {0}, B[1] = {0};
    gemm(0, 0, 2, 3, 0, 1.0f, A, 1, B, 3, 0.5f, C, 3);
    for (int i = 0; i < 6; i++) assert_true(C[i] == 0.5f * (float)(i + 1));
}

int main(void) {
    int skip = tu_simd_skip();
    if (skip) return skip;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_contract),       cmocka_unit_test(test_model_shapes),
        cmocka_unit_test(test_special_values), cmocka_unit_test(test_lower),
        cmocka_unit_test(test_blas_route),     cmocka_unit_test(test_empty_k),
        cmocka_unit_test(test_zeros),          cmocka_unit_test(test_zeros_edges_occur),
        cmocka_unit_test(test_packed_b),       cmocka_unit_test(test_packs_over),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
