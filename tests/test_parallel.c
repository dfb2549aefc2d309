/* test_parallel.c: the thread pool's regions (parallel.h) and the step's
 * split of the gradient norm and the clip (adamw.h).
 *   - every part of a region runs exactly once and has finished when the
 *     region returns, over many regions of varying width back to back;
 *   - a region started inside a region (the pool busy) still runs all of
 *     its parts;
 *   - each part computes in the caller's floating-point mode, also when
 *     the pool's threads were started under the other mode;
 *   - a sum of squares cut at any point and continued has the bits of one
 *     pass, and AdamW on gradients times the clip factor has the bits of
 *     AdamW after clipping them in place. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <string.h>

#include "adamw.h"
#include "config.h"
#include "fpmode.h"
#include "parallel.h"
#include "testutil.h"

#define NT 6

typedef struct {
    atomic_int runs[NT];
    int seen_nt[NT];
} Count;

static void count_part(void *p, int t, int nt) {
    Count *c = p;
    atomic_fetch_add(&c->runs[t], 1);
    c->seen_nt[t] = nt;
}

static void test_each_part_once(void **st) {
    (void)st;
    for (int r = 0; r < 300; r++) {
        int nt = 1 + r % NT;
        Count c;
        memset(&c, 0, sizeof c);
        parallel_team(nt, count_part, &c);
        for (int t = 0; t < NT; t++) {
            assert_int_equal(atomic_load(&c.runs[t]), t < nt ? 1 : 0);
            if (t < nt) assert_int_equal(c.seen_nt[t], nt);
        }
    }
}

/* Part t of the outer region runs an inner parallel_for over its own row. */
static int rows[4][100];

static void fill_row(void *p, size_t i0, size_t i1) {
    int *row = p;
    for (size_t i = i0; i < i1; i++) row[i] += (int)i + 1;
}

static void outer_part(void *p, int t, int nt) {
    (void)p, (void)nt;
    parallel_for(3, 100, fill_row, rows[t]);
}

static void test_nested(void **st) {
    (void)st;
    memset(rows, 0, sizeof rows);
    parallel_team(4, outer_part, NULL);
    for (int t = 0; t < 4; t++)
        for (int i = 0; i < 100; i++) assert_int_equal(rows[t][i], i + 1);
}

static void mode_part(void *p, int t, int nt) {
    (void)nt;
    ((int *)p)[t] = fp_flushing();
}

static void test_fp_mode(void **st) {
    (void)st;
    fp_flush_subnormals(1);
    if (!fp_flushing()) skip(); /* no such mode on this CPU */
    for (int round = 0; round < 4; round++) {
        int want = round % 2 == 0, got[NT];
        fp_flush_subnormals(want);
        memset(got, 0xff, sizeof got);
        parallel_team(NT, mode_part, got);
        for (int t = 0; t < NT; t++) assert_int_equal(got[t], want);
    }
    fp_flush_subnormals(0);
}

static float noise(uint32_t *s) {
    *s = *s * 1664525u + 1013904223u;
    return ((float)(*s >> 8) / 16777216.0f - 0.5f) * 4.0f;
}

static void test_sumsq_cut(void **st) {
    (void)st;
    enum { N = 1000 };
    float g[N];
    uint32_t s = 1;
    for (int i = 0; i < N; i++) g[i] = noise(&s) * (i % 7 == 0 ? 1e3f : 1.0f);
    double whole = 0.0; /* the pass written out */
    for (int i = 0; i < N; i++) whole += (double)g[i] * (double)g[i];
    const size_t cuts[] = {0, 1, 333, 999, N};
    for (size_t c = 0; c < sizeof cuts / sizeof *cuts; c++) {
        double part = grad_sumsq(0.0, g, 0, cuts[c]);
        double cont = grad_sumsq(part, g, cuts[c], N);
        assert_memory_equal(&cont, &whole, sizeof whole);
    }
}

/* AdamW over two tensors (one decayed), clipped in place then updated,
 * against updated with the clip factor, for a clipping and a non-clipping
 * bound. */
static void test_clip_fused(void **st) {
    (void)st;
    enum { N = 64 };
    Config c;
    config_defaults(&c);
    ParamInfo pi[2] = {{.offset = 0, .numel = 40, .ndim = 1, .shape = {40, 0}, .decay = 1},
                       {.offset = 40, .numel = 24, .ndim = 1, .shape = {24, 0}, .decay = 0}};
    ParamTable t = {pi, 2, N};
    const float clips[] = {0.5f, 1e6f, 0.0f};
    for (size_t k = 0; k < sizeof clips / sizeof *clips; k++) {
        float p[2][N], g[2][N], m[2][N], v[2][N];
        uint32_t s = 7 + (uint32_t)k;
        for (int i = 0; i < N; i++) {
            p[0][i] = p[1][i] = noise(&s);
            g[0][i] = g[1][i] = noise(&s) * 0.1f;
            m[0][i] = m[1][i] = noise(&s) * 0.01f;
            v[0][i] = v[1][i] = noise(&s) * noise(&s) * 1e-3f + 1e-3f;
        }
        double norm = grad_clip(g[0], N, clips[k]);
        adamw_update(p[0], g[0], m[0], v[0], &t, &c, 0.01f, 3);
        float scale = grad_clip_scale(grad_global_norm(g[1], N), clips[k]);
        assert_true(scale == (clips[k] == 0.5f ? (float)(0.5 / (norm + 1e-6)) : 1.0f));
        adamw_update_range(p[1], g[1], scale, m[1], v[1], &t, &c, 0.01f, 3, 0, 29);
        adamw_update_range(p[1], g[1], scale, m[1], v[1], &t, &c, 0.01f, 3, 29, N);
        assert_memory_equal(p[0], p[1], sizeof p[0]);
        assert_memory_equal(m[0], m[1], sizeof m[0]);
        assert_memory_equal(v[0], v[1], sizeof v[0]);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_part_once), cmocka_unit_test(test_nested),
        cmocka_unit_test(test_fp_mode),        cmocka_unit_test(test_sumsq_cut),
        cmocka_unit_test(test_clip_fused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
