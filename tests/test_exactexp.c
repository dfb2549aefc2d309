/* test_exactexp.c: exact_expf and its row form exact_expf_shifted against
 * libm's expf, bit for bit, NaNs included; exact_sigmoid and its row form
 * exact_sigmoid_shifted against libm's 1 / (1 + e^-(x - c)) the same way.
 *
 * The trained bits were made with glibc 2.36's expf (x86-64, its FMA
 * build), and the loss's exponentials are exact_expf_shifted: this test
 * holds the function to that library. The inputs: every 509th float bit
 * pattern (8.4 million, both signs, every exponent), and the edges: +-0,
 * subnormals, +-inf, quiet and signalling NaNs with payloads, the two
 * floats where the fused r matters, the overflow and underflow thresholds and the |x| = 88 boundary
 * with their float neighbours, x on each of the 32 table indexes and next to the half-way points
 * between them, over a span of exponents, each also negated; each in the IEEE mode and with
 * subnormals flushed (fpmode.h), the sigmoid under three shifts c, and the rows cut at every length
 * up to 40 (partial vectors). Runs on whichever SIMD path this process takes (GATELAB_SIMD; meson
 * runs it once per path). */
#include <gnu/libc-version.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "exactexp.h"
#include "fpmode.h"
#include "simd.h"
#include "testutil.h"

static float fbits(uint32_t b) {
    float x;
    memcpy(&x, &b, sizeof x);
    return x;
}
static uint32_t bitsf(float x) {
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

/* x[0 .. n) through exact_expf_shifted (shifted by m), exact_expf and
 * libm's expf of the same differences: every bit equal. */
static void check(const float *x, size_t n, float m, const char *what) {
    float *got = malloc(n * sizeof *got);
    assert_non_null(got);
    exact_expf_shifted(got, x, m, n);
    for (size_t i = 0; i < n; i++) {
        float d = x[i] - m, want = expf(d), one = exact_expf(d);
        if (bitsf(got[i]) != bitsf(want) || bitsf(one) != bitsf(want)) {
            fail_msg("%s (%s, %s): e^%a (bits %08x): libm %08x, row form %08x, exact_expf %08x "
                     "(glibc %s in use; the trained bits were made with 2.36)",
                     what, simd_path_name(simd_path()), fp_mode_name(), (double)d, bitsf(d),
                     bitsf(want), bitsf(got[i]), bitsf(one), gnu_get_libc_version());
        }
    }
    free(got);
}

/* x[0 .. n) through exact_sigmoid_shifted (shifted by c) and exact_sigmoid
 * against libm's 1 / (1 + e^-(x - c)), the expression attention's sigmoid
 * rows had: every bit equal; and against 1 / (1 + e^(c - x)), the same
 * value written without the negation, where x - c is not a NaN (a NaN's
 * sign is the one bit the negation changes). */
static void check_sigmoid(const float *x, size_t n, float c, const char *what) {
    float *got = malloc(n * sizeof *got);
    assert_non_null(got);
    exact_sigmoid_shifted(got, x, c, n);
    for (size_t i = 0; i < n; i++) {
        float d = x[i] - c, want = 1.0f / (1.0f + expf(-d)), one = exact_sigmoid(d);
        float flipped = 1.0f / (1.0f + expf(c - x[i]));
        if (bitsf(got[i]) != bitsf(want) || bitsf(one) != bitsf(want) ||
            (d == d && bitsf(flipped) != bitsf(want))) {
            fail_msg("%s (%s, %s): sigmoid(%a - %a) (bits %08x): libm %08x (from c - x %08x), "
                     "row form %08x, exact_sigmoid %08x (glibc %s in use)",
                     what, simd_path_name(simd_path()), fp_mode_name(), (double)x[i], (double)c,
                     bitsf(x[i]), bitsf(want), bitsf(flipped), bitsf(got[i]), bitsf(one),
                     gnu_get_libc_version());
        }
    }
    free(got);
}

/* the edges of the header's list; returns how many it wrote to x */
static size_t edges(float *x) {
    size_t n = 0;
    const float named[] = {0.0f,
                           -0.0f,
                           INFINITY,
                           -INFINITY,
                           fbits(0x7fc00000),
                           fbits(0xffc00000),
                           fbits(0x7fa12345),
                           fbits(0xff812345),
                           fbits(0x7f800001),
                           fbits(0x00000001),
                           fbits(0x80000001),
                           fbits(0x007fffff),
                           fbits(0x807fffff),
                           fbits(0x00400000),
                           3.4028234663852886e38f,
                           -3.4028234663852886e38f};
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) x[n++] = named[i];
    /* the two floats whose e^x changes when r is a product and a difference
     * rounded apart instead of one fused multiply-subtract (found by
     * comparing such a variant with libm on all 2^32 floats) */
    x[n++] = fbits(0x4202422f), x[n++] = fbits(0xc27c65d9);
    /* the thresholds and |x| = 88 (the first exponent glibc decides apart) */
    const float th[] = {EXACT_EXP_OFLOW, EXACT_EXP_UFLOW, EXACT_EXP_MAYUFLOW, 88.0f, -88.0f};
    for (size_t i = 0; i < sizeof th / sizeof th[0]; i++)
        for (int d = -3; d <= 3; d++) x[n++] = fbits(bitsf(th[i]) + (uint32_t)d);
    /* x = (k + i / 32) ln 2 and the half-way points (k + (i + 1/2) / 32) ln 2,
     * with their neighbours */
    for (int k = -150; k <= 128; k += 7)
        for (int i = 0; i < 32; i++)
            for (int h = 0; h < 2; h++) {
                float c = (float)(((double)k + (i + 0.5 * h) / 32.0) * 0.6931471805599453);
                for (int d = -2; d <= 2; d++) x[n++] = fbits(bitsf(c) + (uint32_t)d);
            }
    return n;
}
#define EDGES_MAX (16 + 2 + 5 * 7 + 40 * 32 * 2 * 5)

/* the sigmoid rows' shifts: none, attention's ln T at T = 256, a negative one */
static const float sig_shift[] = {0.0f, 5.5451774444795623f, -3.25f};

static void both_modes(const float *x, size_t n, const char *what) {
    for (int flush = 0; flush < 2; flush++) {
        fp_flush_subnormals(flush);
        check(x, n, 0.0f, what);
        for (size_t c = 0; c < sizeof sig_shift / sizeof sig_shift[0]; c++)
            check_sigmoid(x, n, sig_shift[c], what);
    }
    fp_flush_subnormals(0);
}

static void test_edges(void **state) {
    (void)state;
    float x[EDGES_MAX];
    size_t n = edges(x);
    assert_true(n <= EDGES_MAX);
    both_modes(x, n, "edges");
    /* negated, so that the sigmoid's e^-x meets each edge too */
    for (size_t i = 0; i < n; i++) x[i] = fbits(bitsf(x[i]) ^ 0x80000000u);
    both_modes(x, n, "negated edges");
}

static void test_strided(void **state) {
    (void)state;
    const uint32_t stride = 509;
    size_t n = (size_t)(UINT32_MAX / stride) + 1;
    float *x = malloc(n * sizeof *x);
    assert_non_null(x);
    for (size_t i = 0; i < n; i++) x[i] = fbits((uint32_t)(i * stride));
    both_modes(x, n, "every 509th float");
    free(x);
}

/* rows of every length up to 40 from every offset up to 16, shifted by a
 * row maximum as the loss shifts them: the partial vectors at the row's
 * end give the bits of whole ones */
static void test_rows(void **state) {
    (void)state;
    float x[56];
    for (int i = 0; i < 56; i++) x[i] = (float)((i * 37) % 56) * 0.75f - 20.0f;
    x[5] = NAN, x[11] = -INFINITY, x[23] = 1e-40f, x[31] = -0.0f;
    for (size_t off = 0; off < 16; off++)
        for (size_t n = 0; n <= 40; n++) {
            check(x + off, n, 21.25f, "rows");
            check_sigmoid(x + off, n, 1.75f, "rows");
        }
}

int main(void) {
    int skip = tu_simd_skip();
    if (skip) return skip;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_strided),
        cmocka_unit_test(test_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
