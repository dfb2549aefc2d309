/* rows.h: sums along rows with the rows in SIMD lanes.
 *
 * A row's sum (RMSNorm's sum of squares, a softmax's denominator, a
 * backward's dot) stays one chain in index order: the build neither
 * contracts nor reassociates, and every result bit is fixed. One chain is
 * bound by the add's latency; ROWS_N rows' chains side by side are not. A
 * RowVec holds element i of ROWS_N rows, one lane per row, and one vector
 * add advances every row's chain by one element, each in its own order.
 *
 * The data arrives as row pieces (ROWS_N consecutive elements of one row);
 * rows_colsum turns ROWS_N of them into columns (a transpose in registers)
 * and adds the columns in order. The helpers are used only inside
 * SIMD_KERNEL bodies (simd.h), so every path compiles them at its own
 * width; each lane does the same float operations on every path, so the
 * paths give the same bits. Not a public interface: ops.h is. */
#ifndef GATELAB_ROWS_H
#define GATELAB_ROWS_H

#include <math.h>
#include <string.h>

#include "simd.h"

#define ROWS_N 8

typedef float RowVec __attribute__((vector_size(ROWS_N * sizeof(float))));

/* n <= lanes floats of p into the low lanes of the vector v (of lanes
 * floats), +0 above. A whole vector is one copy of a size the compiler
 * knows, so it is one vector load (a copy of n floats is a loop of scalar
 * moves, and the vector read after it waits for them). */
SIMD_BODY void rows_fill(void *v, int lanes, const float *p, int n) {
    if (n == lanes) {
        memcpy(v, p, (size_t)lanes * sizeof(float));
        return;
    }
    memset(v, 0, (size_t)lanes * sizeof(float));
    memcpy(v, p, (size_t)n * sizeof(float));
}

/* n <= ROWS_N floats of p into the low lanes of *v, zero above. */
SIMD_BODY void rows_load(RowVec *v, const float *p, int n) { rows_fill(v, ROWS_N, p, n); }

/* The low n <= ROWS_N lanes of v into p (RowWide's too). */
SIMD_BODY void rows_store(float *p, const void *v, int n) {
    memcpy(p, v, (size_t)n * sizeof(float));
}

/* One butterfly stage of the transpose of nr rows: rows r and r + s
 * (r & s == 0) trade their off-diagonal s x s blocks. */
#define ROWS_STAGE_(v, nr, s, lo, hi)                                                              \
    do {                                                                                           \
        for (int r = 0; r < (nr); r++)                                                             \
            if (!(r & (s))) {                                                                      \
                __typeof__((v)[0]) a_ = (v)[r], b_ = (v)[r + (s)];                                 \
                (v)[r] = __builtin_shufflevector(a_, b_, lo);                                      \
                (v)[r + (s)] = __builtin_shufflevector(a_, b_, hi);                                \
            }                                                                                      \
    } while (0)
#define ROWS_LO4 0, 1, 2, 3, 8, 9, 10, 11
#define ROWS_HI4 4, 5, 6, 7, 12, 13, 14, 15
#define ROWS_LO2 0, 1, 8, 9, 4, 5, 12, 13
#define ROWS_HI2 2, 3, 10, 11, 6, 7, 14, 15
#define ROWS_LO1 0, 8, 2, 10, 4, 12, 6, 14
#define ROWS_HI1 1, 9, 3, 11, 5, 13, 7, 15

/* v[ROWS_N] in place: lane r of v[i] becomes lane i of v[r]. */
SIMD_BODY void rows_transpose(RowVec *v) {
    ROWS_STAGE_(v, ROWS_N, 4, ROWS_LO4, ROWS_HI4);
    ROWS_STAGE_(v, ROWS_N, 2, ROWS_LO2, ROWS_HI2);
    ROWS_STAGE_(v, ROWS_N, 1, ROWS_LO1, ROWS_HI1);
}

/* v[r] holds elements [j, j + ROWS_N) of row r: lane r of *acc gains them
 * one at a time, elements j .. j + n - 1 in order (n <= ROWS_N). v is
 * left transposed. */
SIMD_BODY void rows_colsum(RowVec *acc, RowVec *v, int n) {
    rows_transpose(v);
    if (n == ROWS_N) {
        for (int i = 0; i < ROWS_N; i++) *acc += v[i];
        return;
    }
    for (int i = 0; i < n; i++) *acc += v[i];
}

/* The same with ROWS_WIDE_N rows: a RowWide fills one AVX-512 register
 * (two AVX2 ones), and twice the chains run side by side, for sums whose
 * rows come in longer runs than attention's (RMSNorm's). */
#define ROWS_WIDE_N 16

typedef float RowWide __attribute__((vector_size(ROWS_WIDE_N * sizeof(float))));

SIMD_BODY void rows_wide_load(RowWide *v, const float *p, int n) {
    rows_fill(v, ROWS_WIDE_N, p, n);
}

#define ROWS_WIDE_LO8 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23
#define ROWS_WIDE_HI8 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31
#define ROWS_WIDE_LO4 0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27
#define ROWS_WIDE_HI4 4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31
#define ROWS_WIDE_LO2 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29
#define ROWS_WIDE_HI2 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31
#define ROWS_WIDE_LO1 0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30
#define ROWS_WIDE_HI1 1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31

SIMD_BODY void rows_wide_transpose(RowWide *v) {
    ROWS_STAGE_(v, ROWS_WIDE_N, 8, ROWS_WIDE_LO8, ROWS_WIDE_HI8);
    ROWS_STAGE_(v, ROWS_WIDE_N, 4, ROWS_WIDE_LO4, ROWS_WIDE_HI4);
    ROWS_STAGE_(v, ROWS_WIDE_N, 2, ROWS_WIDE_LO2, ROWS_WIDE_HI2);
    ROWS_STAGE_(v, ROWS_WIDE_N, 1, ROWS_WIDE_LO1, ROWS_WIDE_HI1);
}

SIMD_BODY void rows_wide_colsum(RowWide *acc, RowWide *v, int n) {
    rows_wide_transpose(v);
    for (int i = 0; i < n; i++) *acc += v[i];
}

/* out[r] = sum_i x[r][i] (square: sum_i x[r][i]^2) for the n <=
 * ROWS_WIDE_N rows at x (row stride c), each row's chain from +0 in index
 * order. A whole block runs with fixed trip counts, so its pieces stay in
 * registers. */
SIMD_BODY void rows_wide_sums(float *out, const float *x, int n, size_t c, int square) {
    RowWide acc = {0.0f}, v[ROWS_WIDE_N];
    for (size_t j = 0; j < c; j += ROWS_WIDE_N) {
        const int w = c - j < ROWS_WIDE_N ? (int)(c - j) : ROWS_WIDE_N;
        if (n == ROWS_WIDE_N && w == ROWS_WIDE_N) {
            for (int r = 0; r < ROWS_WIDE_N; r++) {
                memcpy(&v[r], x + (size_t)r * c + j, sizeof v[r]);
                if (square) v[r] = v[r] * v[r];
            }
            rows_wide_colsum(&acc, v, ROWS_WIDE_N);
            continue;
        }
        for (int r = 0; r < ROWS_WIDE_N; r++) {
            if (r < n) rows_wide_load(&v[r], x + (size_t)r * c + j, w);
            else v[r] = (RowWide){0.0f};
            if (square) v[r] = v[r] * v[r];
        }
        rows_wide_colsum(&acc, v, w);
    }
    rows_store(out, &acc, n);
}

/* *v with its lanes from n on set to +0 (n <= 0: all; n >= ROWS_N:
 * none); the kept lanes keep their bits. */
SIMD_BODY void rows_keep(RowVec *v, int n) {
    typedef int RowMask __attribute__((vector_size(ROWS_N * sizeof(int))));
    const RowMask lane = {0, 1, 2, 3, 4, 5, 6, 7};
    RowMask bits;
    memcpy(&bits, v, sizeof bits);
    bits &= lane < n;
    memcpy(v, &bits, sizeof bits);
}

/* The largest of l[0..v) as the loop "m = l[i] > m ? l[i] : m" from -inf
 * finds it (a NaN is never taken). That loop is one chain of compares, so
 * ROWS_WIDE_N lanes each scan every ROWS_WIDE_N-th value the same way and
 * are then folded: any order finds the same largest value, and two floats
 * compare equal with different bits only as +0 and -0, where the loop
 * keeps the first in index order. So a zero maximum is found again by the
 * loop itself. */
SIMD_BODY float row_max(const float *l, size_t v) {
    float best[ROWS_WIDE_N], m = -INFINITY;
    for (int k = 0; k < ROWS_WIDE_N; k++) best[k] = -INFINITY;
    size_t i = 0;
    for (; i + ROWS_WIDE_N <= v; i += ROWS_WIDE_N)
        for (int k = 0; k < ROWS_WIDE_N; k++) best[k] = l[i + k] > best[k] ? l[i + k] : best[k];
    for (int k = 0; k < ROWS_WIDE_N; k++) m = best[k] > m ? best[k] : m;
    for (; i < v; i++) m = l[i] > m ? l[i] : m;
    if (m == 0.0f)
        for (m = -INFINITY, i = 0; i < v; i++) m = l[i] > m ? l[i] : m;
    return m;
}

#endif
