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

#include <string.h>

#include "simd.h"

#define ROWS_N 8

typedef float RowVec __attribute__((vector_size(ROWS_N * sizeof(float))));

/* n <= ROWS_N floats of p into the low lanes of *v, zero above. */
SIMD_BODY void rows_load(RowVec *v, const float *p, int n) {
    if (n == ROWS_N) {
        memcpy(v, p, sizeof *v);
        return;
    }
    *v = (RowVec){0.0f};
    memcpy(v, p, (size_t)n * sizeof(float));
}

/* The low n <= ROWS_N lanes of v into p. */
SIMD_BODY void rows_store(float *p, const RowVec *v, int n) {
    memcpy(p, v, (size_t)n * sizeof(float));
}

/* One butterfly stage of the transpose: rows r and r + s (r & s == 0)
 * trade their off-diagonal s x s blocks. */
#define ROWS_STAGE_(v, s, lo, hi)                                                                  \
    do {                                                                                           \
        for (int r = 0; r < ROWS_N; r++)                                                           \
            if (!(r & (s))) {                                                                      \
                RowVec a_ = (v)[r], b_ = (v)[r + (s)];                                             \
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
    ROWS_STAGE_(v, 4, ROWS_LO4, ROWS_HI4);
    ROWS_STAGE_(v, 2, ROWS_LO2, ROWS_HI2);
    ROWS_STAGE_(v, 1, ROWS_LO1, ROWS_HI1);
}

/* v[r] holds elements [j, j + ROWS_N) of row r: lane r of *acc gains them
 * one at a time, elements j .. j + n - 1 in order (n <= ROWS_N). v is
 * left transposed. */
SIMD_BODY void rows_colsum(RowVec *acc, RowVec *v, int n) {
    rows_transpose(v);
    for (int i = 0; i < n; i++) *acc += v[i];
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

#endif
