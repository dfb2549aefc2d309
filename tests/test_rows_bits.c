/* test_rows_bits.c: the row-wise kernels of a training step against their
 * plain loops, bit for bit.
 *
 * RMSNorm (sixteen rows' chains side by side, dw held in registers over
 * the rows), cross-entropy (its row maxima in lanes, its sums side by
 * side), the shards' gradient sum (element-major blocks with the
 * squares chained behind), AdamW (vectorised), the residual add and the
 * fused projection's column split must give the bits of the loops written
 * out below, one row or one pass at a time. Inputs mix ordinary values
 * with -0, subnormals, huge values, +-inf and NaN, and the shapes cut rows
 * and columns at counts that are not multiples of 8 or 16. Two results
 * match when their bits are equal or both are NaN: x86 keeps one operand's
 * payload and the compiler may order a product's operands either way, so
 * NaN payloads are no part of the contract. Runs on whichever SIMD path
 * this process takes (GATELAB_SIMD; meson runs it once per path). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adamw.h"
#include "fastexp.h"
#include "ops.h"
#include "simd.h"
#include "testutil.h"

static unsigned rng = 1;

/* Mostly values in [-2, 2), now and then an edge case. */
static float val(int edges) {
    rng = rng * 1664525u + 1013904223u;
    float x = (float)((rng >> 8) & 0xffff) / 16384.0f - 2.0f;
    if (!edges) return x;
    switch ((rng >> 24) % 23) {
    case 0: return -0.0f;
    case 1: return 0.0f;
    case 2: return 1e-40f; /* subnormal */
    case 3: return -3e-39f;
    case 4: return 3e38f;
    case 5: return INFINITY;
    case 6: return -INFINITY;
    case 7: return NAN;
    default: return x;
    }
}

static float *vec(size_t n, int edges) {
    float *p = malloc((n ? n : 1) * sizeof *p);
    for (size_t i = 0; i < n; i++) p[i] = val(edges);
    return p;
}

static int same(float a, float b) {
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

static void assert_same(const char *what, const float *a, const float *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!same(a[i], b[i]))
            fail_msg("%s: element %zu differs: %a against the plain loop's %a", what, i,
                     (double)a[i], (double)b[i]);
}

/* ---- RMSNorm, one row at a time ---- */

static void plain_rms_fwd(float *out, float *rstd, const float *x, const float *w, int M, int C,
                          float eps) {
    for (int m = 0; m < M; m++) {
        const float *xr = x + (size_t)m * C;
        float ss = 0.0f;
        for (int i = 0; i < C; i++) ss += xr[i] * xr[i];
        float r = 1.0f / sqrtf(ss / (float)C + eps);
        rstd[m] = r;
        for (int i = 0; i < C; i++) out[(size_t)m * C + i] = w ? xr[i] * r * w[i] : xr[i] * r;
    }
}

static void plain_rms_bwd(float *dx, float *dw, const float *g, const float *x, const float *w,
                          const float *rstd, int M, int C, int set) {
    for (int m = 0; m < M; m++) {
        const float *xr = x + (size_t)m * C, *gr = g + (size_t)m * C;
        float r = rstd[m], dot = 0.0f;
        for (int i = 0; i < C; i++) dot += w ? gr[i] * w[i] * xr[i] : gr[i] * xr[i];
        if (dw)
            for (int i = 0; i < C; i++) dw[i] += gr[i] * xr[i] * r;
        float k = r * r * r * dot / (float)C;
        for (int i = 0; dx && i < C; i++) {
            float t = w ? r * gr[i] * w[i] - k * xr[i] : r * gr[i] - k * xr[i];
            float *d = dx + (size_t)m * C + i;
            *d = set ? t : *d + t;
        }
    }
}

static void rms_case(int M, int C, int with_w, int edges) {
    size_t n = (size_t)M * C;
    float *x = vec(n, edges), *g = vec(n, edges), *w = with_w ? vec((size_t)C, edges) : NULL;
    float *o1 = vec(n, 0), *o2 = vec(n, 0), *r1 = vec((size_t)M, 0), *r2 = vec((size_t)M, 0);
    rmsnorm_forward(o1, r1, x, w, M, C, 1e-5f);
    plain_rms_fwd(o2, r2, x, w, M, C, 1e-5f);
    assert_same("rmsnorm_forward rstd", r1, r2, (size_t)M);
    assert_same("rmsnorm_forward out", o1, o2, n);
    /* backward from the plain forward's rstd; dx added to and written */
    float *d1 = vec(n, 0), *d2 = malloc(n * sizeof *d2), *w1 = vec((size_t)C, 0);
    float *w2 = malloc((size_t)C * sizeof *w2);
    memcpy(d2, d1, n * sizeof *d2);
    memcpy(w2, w1, (size_t)C * sizeof *w2);
    rmsnorm_backward(d1, with_w ? w1 : NULL, g, x, w, r2, M, C);
    plain_rms_bwd(d2, with_w ? w2 : NULL, g, x, w, r2, M, C, 0);
    assert_same("rmsnorm_backward dx", d1, d2, n);
    assert_same("rmsnorm_backward dw", w1, w2, (size_t)C);
    rmsnorm_backward_set(d1, w1, g, x, w, r2, M, C);
    plain_rms_bwd(d2, w2, g, x, w, r2, M, C, 1);
    assert_same("rmsnorm_backward_set dx", d1, d2, n);
    assert_same("rmsnorm_backward_set dw", w1, w2, (size_t)C);
    rmsnorm_backward(NULL, w1, g, x, w, r2, M, C); /* the weight gradient alone */
    plain_rms_bwd(NULL, w2, g, x, w, r2, M, C, 0);
    assert_same("rmsnorm_backward dw without dx", w1, w2, (size_t)C);
    free(x), free(g), free(w), free(o1), free(o2), free(r1), free(r2);
    free(d1), free(d2), free(w1), free(w2);
}

static void test_rmsnorm(void **state) {
    (void)state;
    static const int Ms[] = {1, 7, 15, 16, 17, 33, 64};
    static const int Cs[] = {1, 5, 8, 15, 16, 17, 31, 64, 70};
    for (size_t a = 0; a < sizeof Ms / sizeof *Ms; a++)
        for (size_t b = 0; b < sizeof Cs / sizeof *Cs; b++)
            for (int with_w = 0; with_w < 2; with_w++) {
                rms_case(Ms[a], Cs[b], with_w, 0);
                rms_case(Ms[a], Cs[b], with_w, 1);
            }
    /* reference.ini's rows, many blocks past the hints' reach of 4096 floats */
    rms_case(300, 128, 1, 1);
}

/* ---- cross-entropy, one row at a time ---- */

static float plain_ce(float *probs, float *losses, const float *logits, const int *targets, int N,
                      int V, int *count) {
    double total = 0.0;
    int cnt = 0;
    for (int n = 0; n < N; n++) {
        const float *l = logits + (size_t)n * V;
        float *p = probs + (size_t)n * V, mx = -INFINITY, sum = 0.0f;
        for (int i = 0; i < V; i++) mx = l[i] > mx ? l[i] : mx;
        for (int i = 0; i < V; i++) {
            p[i] = expf(l[i] - mx);
            sum += p[i];
        }
        float inv = 1.0f / sum;
        for (int i = 0; i < V; i++) p[i] *= inv;
        int tg = targets[n];
        losses[n] = tg >= 0 && tg < V ? logf(sum) + mx - l[tg] : 0.0f;
        if (tg >= 0 && tg < V) total += losses[n], cnt++;
    }
    *count = cnt;
    return cnt > 0 ? (float)(total / cnt) : 0.0f;
}

static void ce_case(int N, int V, int edges) {
    size_t n = (size_t)N * V;
    float *l = vec(n, edges), *p1 = vec(n, 0), *p2 = vec(n, 0), *s1 = vec((size_t)N, 0);
    float *s2 = vec((size_t)N, 0);
    int *tg = malloc((size_t)N * sizeof *tg), c1 = -1, c2 = -2;
    for (int r = 0; r < N; r++) { /* -1 and V: rows not scored */
        val(0);
        tg[r] = (int)((rng >> 9) % (unsigned)(V + 2)) - 1;
    }
    /* rows whose maximum is a zero: -0 before +0 (in a later lane of 16),
     * +0 before -0, all -0 */
    for (int r = 0; r < N && r < 3; r++)
        for (int i = 0; i < V; i++) l[(size_t)r * V + i] = r == 2 ? -0.0f : -1.0f - (float)i;
    const size_t lo = 5 % (size_t)V, hi = V > 16 ? 16 : (size_t)V - 1;
    if (N > 1) {
        l[lo] = -0.0f, l[hi] = 0.0f;
        l[V + lo] = 0.0f, l[V + hi] = -0.0f;
    }
    float m1 = crossentropy_forward(p1, s1, l, tg, N, V, &c1);
    float m2 = plain_ce(p2, s2, l, tg, N, V, &c2);
    assert_same("crossentropy_forward probs", p1, p2, n);
    assert_same("crossentropy_forward losses", s1, s2, (size_t)N);
    assert_same("crossentropy_forward mean", &m1, &m2, 1);
    assert_int_equal(c1, c2);
    free(l), free(p1), free(p2), free(s1), free(s2), free(tg);
}

static void test_crossentropy(void **state) {
    (void)state;
    static const int Ns[] = {1, 3, 15, 16, 17, 40};
    static const int Vs[] = {1, 2, 5, 16, 17, 65};
    for (size_t a = 0; a < sizeof Ns / sizeof *Ns; a++)
        for (size_t b = 0; b < sizeof Vs / sizeof *Vs; b++) {
            ce_case(Ns[a], Vs[b], 0);
            ce_case(Ns[a], Vs[b], 1);
        }
}

/* ---- the shards' gradient sum: a pass per shard, then the squares ---- */

static void test_grad_sum_shards(void **state) {
    (void)state;
    static const size_t lens[] = {1, 15, 16, 17, 100, 2053};
    for (size_t a = 0; a < sizeof lens / sizeof *lens; a++)
        for (int n = 1; n <= 5; n += 2)
            for (int edges = 0; edges < 2; edges++) {
                size_t len = lens[a], i0 = len / 3, i1 = len;
                float *g[5], *ref = NULL, w[5];
                for (int j = 0; j < n; j++) g[j] = vec(len, edges), w[j] = val(0);
                ref = malloc(len * sizeof *ref);
                memcpy(ref, g[0], len * sizeof *ref);
                for (size_t i = i0; i < i1; i++) ref[i] *= w[0];
                for (int j = 1; j < n; j++)
                    for (size_t i = i0; i < i1; i++) ref[i] += w[j] * g[j][i];
                double want = grad_sumsq(0.25, ref, i0, i1);
                double got = grad_sum_shards(g, w, n, i0, i1, 1, 0.25);
                assert_same("grad_sum_shards", g[0], ref, len);
                assert_true((isnan(got) && isnan(want)) || memcmp(&got, &want, sizeof got) == 0);
                assert_true(grad_sum_shards(g, w, 1, 0, 0, 1, 0.5) == 0.5); /* empty range */
                for (int j = 0; j < n; j++) free(g[j]);
                free(ref);
            }
}

/* ---- AdamW, one element after the other ---- */

static void test_adamw(void **state) {
    (void)state;
    ParamInfo info[3] = {{.offset = 0, .numel = 5, .decay = 1},
                         {.offset = 5, .numel = 33, .decay = 0},
                         {.offset = 38, .numel = 17, .decay = 1}};
    ParamTable t = {info, 3, 55};
    Config cfg;
    config_defaults(&cfg);
    cfg.weight_decay = 0.1f;
    for (int edges = 0; edges < 2; edges++) {
        float *p1 = vec(t.total, edges), *g = vec(t.total, edges), *m1 = vec(t.total, 0);
        float *v1 = vec(t.total, 0);
        for (size_t i = 0; i < t.total; i++) v1[i] = fabsf(v1[i]);
        float *p2 = malloc(t.total * 4), *m2 = malloc(t.total * 4), *v2 = malloc(t.total * 4);
        memcpy(p2, p1, t.total * 4), memcpy(m2, m1, t.total * 4), memcpy(v2, v1, t.total * 4);
        const float lr = 3e-3f, gs = 0.7f, b1 = cfg.beta1, b2 = cfg.beta2;
        const long long step = 4;
        adamw_update_range(p1, g, gs, m1, v1, &t, &cfg, lr, step, 3, 50);
        const float step_size = lr / (1.0f - powf(b1, (float)(step + 1)));
        const float sqrt_bc2 = sqrtf(1.0f - powf(b2, (float)(step + 1)));
        for (int k = 0; k < t.count; k++)
            for (size_t i = info[k].offset; i < info[k].offset + info[k].numel; i++) {
                if (i < 3 || i >= 50) continue;
                const float decay = info[k].decay ? decay_factor(&cfg, lr) : 0.0f;
                p2[i] -= decay * p2[i];
                const float gi = g[i] * gs;
                m2[i] = b1 * m2[i] + (1.0f - b1) * gi;
                v2[i] = b2 * v2[i] + (1.0f - b2) * gi * gi;
                p2[i] -= step_size * m2[i] / (sqrtf(v2[i]) / sqrt_bc2 + cfg.adam_eps);
            }
        assert_same("adamw params", p1, p2, t.total);
        assert_same("adamw m", m1, m2, t.total);
        assert_same("adamw v", v1, v2, t.total);
        free(p1), free(g), free(m1), free(v1), free(p2), free(m2), free(v2);
    }
}

/* ---- the residual add and the fused projection's columns ---- */

static void test_copies(void **state) {
    (void)state;
    const size_t N = 190, P = 41, off = 7, r = 23; /* past the hints' reach (stream.h) */
    float *cat = vec(N * P, 1), *part = vec(N * r, 0), *back = vec(N * P, 0);
    memcpy(back, cat, N * P * sizeof *back);
    for (size_t i = 0; i < N * r; i++) part[i] = val(1);
    cols_gather(back, part, N, P, off, r);
    for (size_t n = 0; n < N; n++) {
        assert_same("cols_gather", back + n * P + off, part + n * r, r);
        assert_same("cols_gather left", back + n * P, cat + n * P, off);
        assert_same("cols_gather right", back + n * P + off + r, cat + n * P + off + r,
                    P - off - r);
    }
    float *a = vec(N * P, 1), *out = vec(N * P, 0);
    residual_forward(out, a, cat, N * P);
    for (size_t i = 0; i < N * P; i++) {
        float want = a[i] + cat[i];
        assert_same("residual_forward", out + i, &want, 1);
    }
    residual_forward(a, a, cat, N * P); /* in place, as the hf forward calls it */
    assert_same("residual_forward in place", a, out, N * P);
    free(cat), free(part), free(back), free(a), free(out);
}

/* ---- SwiGLU, one element after the other ---- */

static float plain_sig(float x) { return 1.0f / (1.0f + fast_expf(-x)); }

static void test_swiglu(void **state) {
    (void)state;
    /* lengths across the kernels' chunks and their hints (stream.h) */
    static const size_t lens[] = {1, 15, 17, 255, 257, 1283, 5003};
    for (size_t t = 0; t < sizeof lens / sizeof *lens; t++)
        for (int edges = 0; edges < 2; edges++) {
            const size_t n = lens[t];
            float *a = vec(n, edges), *b = vec(n, edges), *g = vec(n, edges);
            float *o = vec(n, 0), *da = vec(n, 0), *db = vec(n, 0);
            float *ro = malloc(n * sizeof *ro), *rda = malloc(n * sizeof *rda);
            float *rdb = malloc(n * sizeof *rdb);
            for (size_t i = 0; i < n; i++) {
                const float s = plain_sig(a[i]);
                ro[i] = a[i] * s * b[i];
                rda[i] = g[i] * b[i] * s * (1.0f + a[i] * (1.0f - s));
                rdb[i] = g[i] * a[i] * s;
            }
            swiglu_forward(o, a, b, n);
            assert_same("swiglu_forward", o, ro, n);
            swiglu_backward(da, db, NULL, g, a, b, n);
            assert_same("swiglu_backward da", da, rda, n);
            assert_same("swiglu_backward db", db, rdb, n);
            memset(da, 0, n * sizeof *da), memset(db, 0, n * sizeof *db), memset(o, 0, n * 4);
            swiglu_backward(da, db, o, g, a, b, n); /* the forward's output again */
            assert_same("swiglu_backward out", o, ro, n);
            assert_same("swiglu_backward da with out", da, rda, n);
            assert_same("swiglu_backward db with out", db, rdb, n);
            memset(da, 0, n * sizeof *da), memset(o, 0, n * 4);
            swiglu_backward(da, NULL, o, g, a, b, n);
            assert_same("swiglu_backward da alone", da, rda, n);
            assert_same("swiglu_backward out, da alone", o, ro, n);
            free(a), free(b), free(g), free(o), free(da), free(db), free(ro), free(rda), free(rdb);
        }
}

int main(void) {
    int skip = tu_simd_skip();
    if (skip) return skip;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rmsnorm),         cmocka_unit_test(test_crossentropy),
        cmocka_unit_test(test_grad_sum_shards), cmocka_unit_test(test_adamw),
        cmocka_unit_test(test_copies),          cmocka_unit_test(test_swiglu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
