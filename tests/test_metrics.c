/* test_metrics.c: every metric of src/ops/metrics.h on hand-built inputs
 * whose answers are worked out by hand in the comments. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "metrics_sinks.h"
#include "runschema.h"

/* A[T,T] with row t uniform over keys 0..t */
static float *uniform_causal(int T) {
    float *A = calloc((size_t)T * T, sizeof *A);
    for (int t = 0; t < T; t++)
        for (int j = 0; j <= t; j++) A[(size_t)t * T + j] = 1.0f / (t + 1);
    return A;
}

static void test_uniform_share(void **state) {
    (void)state;
    int Ts[2] = {64, 256};
    double want[2] = {0.059, 0.020};
    for (int i = 0; i < 2; i++) {
        int T = Ts[i];
        double h = 0.0;
        for (int k = 1; k <= T; k++) h += 1.0 / k;
        double ref = (h - 1.0) / (T - 1);
        assert_true(fabs(uniform_first_share(T) - ref) < 1e-12);
        assert_true(fabs(ref - want[i]) < 1e-3);
        float *A = uniform_causal(T);
        /* mean over t=1..T-1 of 1/(t+1) = (H_T - 1)/(T - 1) exactly */
        assert_true(fabs(first_token_share(A, T) - ref) < 1e-6);
        free(A);
    }
    assert_true(fabs(uniform_first_share(64) - 0.0590) < 5e-4);
    assert_true(fabs(uniform_first_share(256) - 0.0201) < 5e-4);
}

/* A hand-built windowed uniform map: row t spreads 1 over its visible keys
 * (t - W, t]; its first-token share is uniform_first_share_window. */
static void test_uniform_share_window(void **state) {
    (void)state;
    enum { TT = 12, W = 4 };
    static float A[TT * TT];
    for (int t = 0; t < TT; t++) {
        int lo = t - W + 1 > 0 ? t - W + 1 : 0;
        for (int j = 0; j < TT; j++) A[t * TT + j] = j >= lo && j <= t ? 1.0f / (t + 1 - lo) : 0.0f;
    }
    double got = uniform_first_share_window(TT, W, 0);
    assert_true(fabs(first_token_share(A, TT) - got) < 1e-6);
    /* (1/2 + 1/3 + 1/4) / 11 by hand */
    assert_true(fabs(got - (1.0 / 2 + 1.0 / 3 + 1.0 / 4) / 11.0) < 1e-12);
    assert_true(uniform_first_share_window(TT, 0, 0) == uniform_first_share(TT));
    assert_true(uniform_first_share_window(TT, TT, 0) == uniform_first_share(TT));
    assert_true(uniform_first_share_window(TT, 1, 0) == 0.0);
    /* alpha_0 = mean over t = 0..TT-1 of A[t,0]: (1 + 1/2 + 1/3 + 1/4) / 12 */
    double a0 = 0.0;
    for (int t = 0; t < TT; t++) a0 += A[t * TT];
    assert_true(fabs(uniform_alpha0_window(TT, W, 0) - a0 / TT) < 1e-7);
    assert_true(fabs(uniform_alpha0_window(TT, W, 0) - (1.0 + 1.0 / 2 + 1.0 / 3 + 1.0 / 4) / 12.0) <
                1e-12);
    assert_true(fabs(uniform_alpha0_window(TT, 0, 0) -
                     (uniform_first_share(TT) * (TT - 1) + 1.0) / TT) < 1e-12);
}

/* A hand-built uniform map with s sink slots (1: a sink logit or null
 * key; 4: the registers' prepended tokens): row t spreads 1 over its
 * visible keys (t - W, t] and the s slots, which the stored map [T, T]
 * leaves out; its first-token share and alpha_0 are the references with s
 * slots, and a proxy map (rows renormalised over the keys) counts none. */
static void test_uniform_share_slot(void **state) {
    (void)state;
    enum { TT = 12, W = 4 };
    static float A[TT * TT];
    for (int c = 0; c < 4; c++) {
        const int win = c % 2 ? W : 0, s = c < 2 ? 1 : 4;
        for (int t = 0; t < TT; t++) {
            int lo = win && t - win + 1 > 0 ? t - win + 1 : 0;
            for (int j = 0; j < TT; j++)
                A[t * TT + j] = j >= lo && j <= t ? 1.0f / (t + 1 - lo + s) : 0.0f;
        }
        assert_true(fabs(first_token_share(A, TT) - uniform_first_share_window(TT, win, s)) < 1e-6);
        double a0 = 0.0;
        for (int t = 0; t < TT; t++) a0 += A[t * TT];
        assert_true(fabs(uniform_alpha0_window(TT, win, s) - a0 / TT) < 1e-7);
    }
    /* by hand, four slots, no window: (1/6 + ... + 1/16) / 11 */
    double h = 0.0;
    for (int t = 1; t < TT; t++) h += 1.0 / (t + 5);
    assert_true(fabs(uniform_first_share_window(TT, 0, 4) - h / 11) < 1e-12);
    assert_int_equal(uniform_slots(4, 0), 4);
    /* by hand: (1/3 + 1/4 + 1/5) / 11 under the window */
    assert_true(fabs(uniform_first_share_window(TT, W, 1) - (1.0 / 3 + 1.0 / 4 + 1.0 / 5) / 11) <
                1e-12);
    assert_int_equal(uniform_slots(1, 0), 1);
    assert_int_equal(uniform_slots(1, 1), 0);
    assert_int_equal(uniform_slots(0, 0), 0);
    const int win[3] = {W, 0, W}, one[3] = {1, 1, 1};
    double mean =
        (2 * uniform_first_share_window(TT, W, 1) + uniform_first_share_window(TT, 0, 1)) / 3;
    assert_true(fabs(uniform_share_layers(win, one, NULL, 3, TT) - mean) < 1e-15);
    assert_true(uniform_share_layers(NULL, NULL, NULL, 0, TT) == uniform_first_share(TT));
    /* each layer its own slots, by hand: a windowed layer with one slot,
     * (1/3 + 1/4 + 1/5) / 11, and a full layer with none, (H_12 - 1) / 11 */
    const int mixed[2] = {1, 0};
    double hf = 0.0;
    for (int t = 2; t <= TT; t++) hf += 1.0 / t;
    mean = ((1.0 / 3 + 1.0 / 4 + 1.0 / 5) / 11 + hf / 11) / 2;
    assert_true(fabs(uniform_share_layers(win, mixed, NULL, 2, TT) - mean) < 1e-12);
    /* alpha_0 over the first len = 6 queries: 1/2 + 1/3 + 1/4 + 1/5 under
     * the window with one slot, H_6 on the full layer without */
    double h6 = 0.0;
    for (int t = 1; t <= 6; t++) h6 += 1.0 / t;
    mean = ((1.0 / 2 + 1.0 / 3 + 1.0 / 4 + 1.0 / 5) / 6 + h6 / 6) / 2;
    assert_true(fabs(uniform_alpha0_layers(win, mixed, NULL, 2, 6) - mean) < 1e-12);
    /* layers weighted by their query heads, 3 and 1: (3 a + b) / 4 */
    const int heads[2] = {3, 1};
    mean = (3 * (1.0 / 2 + 1.0 / 3 + 1.0 / 4 + 1.0 / 5) / 6 + h6 / 6) / 4;
    assert_true(fabs(uniform_alpha0_layers(win, mixed, heads, 2, 6) - mean) < 1e-12);
    mean = (3 * (1.0 / 3 + 1.0 / 4 + 1.0 / 5) / 11 + hf / 11) / 4;
    assert_true(fabs(uniform_share_layers(win, mixed, heads, 2, TT) - mean) < 1e-12);
}

static void test_all_mass_on_first(void **state) {
    (void)state;
    int T = 16;
    float *A = calloc((size_t)T * T, sizeof *A);
    float col[16];
    for (int t = 0; t < T; t++) {
        A[(size_t)t * T] = 1.0f;
        col[t] = 1.0f;
    }
    assert_true(fabs(first_token_share(A, T) - 1.0) < 1e-12);
    assert_true(fabs(alpha_k(A, T, 0) - 1.0) < 1e-12);
    assert_true(alpha0_from_col(col, T) > 0.3); /* a sink at eps 0.3 */
    assert_true(fabs(attention_entropy(A, T)) < 1e-12);
    free(A);
}

static void test_alpha_k_hand(void **state) {
    (void)state;
    /* T = 3:
     * row0: 1
     * row1: .6 .4
     * row2: .2 .5 .3
     * alpha_0 = (1+.6+.2)/3 = .6; alpha_1 = (.4+.5)/2 = .45; alpha_2 = .3 */
    float A[9] = {1, 0, 0, .6f, .4f, 0, .2f, .5f, .3f};
    assert_true(fabs(alpha_k(A, 3, 0) - 0.6) < 1e-6);
    assert_true(fabs(alpha_k(A, 3, 1) - 0.45) < 1e-6);
    assert_true(fabs(alpha_k(A, 3, 2) - 0.3) < 1e-6);
    /* first-token share skips t = 0: (.6 + .2)/2 = .4 */
    assert_true(fabs(first_token_share(A, 3) - 0.4) < 1e-6);
    float col[3] = {1.0f, 0.6f, 0.2f};
    assert_true(fabs(alpha0_from_col(col, 3) - 0.6) < 1e-6);
    assert_true(fabs(alpha0_from_col(col, 2) - 0.8) < 1e-6);
}

static void test_proxy(void **state) {
    (void)state;
    /* row1: -1, 3 -> .25 .75; row2: 2, -2, 4 -> .25 .25 .5; row0: 0 stays 0;
     * the masked upper triangle (garbage 9) becomes 0 */
    float A[9] = {0, 9, 9, -1, 3, 9, 2, -2, 4};
    attention_proxy(A, 3);
    float want[9] = {0, 0, 0, .25f, .75f, 0, .25f, .25f, .5f};
    for (int i = 0; i < 9; i++) assert_true(fabsf(A[i] - want[i]) < 1e-6f);
}

static void test_entropy_uniform(void **state) {
    (void)state;
    int T = 8;
    float *A = uniform_causal(T);
    /* row t uniform over t+1 keys has entropy log(t+1) */
    double want = 0.0;
    for (int t = 1; t < T; t++) want += log(t + 1.0);
    want /= T - 1;
    assert_true(fabs(attention_entropy(A, T) - want) < 1e-6);
    free(A);
}

static void test_histogram(void **state) {
    (void)state;
    double hist[50] = {0};
    /* 0 -> bin 0, 0.01 -> 0 (0.01*50 = 0.5), 0.03 -> 1, 0.5 -> 25,
     * 0.999 -> 49, 1.0 -> 49, -0.3 clamps to 0, 2.0 clamps to 49 */
    float x[8] = {0.0f, 0.01f, 0.03f, 0.5f, 0.999f, 1.0f, -0.3f, 2.0f};
    histogram_add(hist, 50, 0.0, 1.0, x, 8);
    assert_true(hist[0] == 3.0);
    assert_true(hist[1] == 1.0);
    assert_true(hist[25] == 1.0);
    assert_true(hist[49] == 3.0);
    double total = 0.0;
    for (int i = 0; i < 50; i++) total += hist[i];
    assert_true(total == 8.0);
    /* counts accumulate across calls */
    histogram_add(hist, 50, 0.0, 1.0, x + 3, 1);
    assert_true(hist[25] == 2.0);
}

static void test_fraction_below(void **state) {
    (void)state;
    float x[8] = {0.9f, 0.6f, 0.5f, 0.3f, 0.05f, 0.005f, 0.0005f, 0.0f};
    double thr[4] = {0.5, 0.1, 1e-2, 1e-3};
    double out[4];
    fraction_below(out, thr, 4, x, 8);
    /* strictly below: 0.5 -> 5 (0.5 itself is not), 0.1 -> 4, 1e-2 -> 3,
     * 1e-3 -> 2 */
    assert_true(fabs(out[0] - 5.0 / 8) < 1e-12);
    assert_true(fabs(out[1] - 4.0 / 8) < 1e-12);
    assert_true(fabs(out[2] - 3.0 / 8) < 1e-12);
    assert_true(fabs(out[3] - 2.0 / 8) < 1e-12);
}

static void test_abs_stats(void **state) {
    (void)state;
    float x[6] = {1.0f, -7.0f, 3.0f, -2.0f, 5.0f, 0.5f};
    float scratch[6];
    assert_true(abs_max(x, 6) == 7.0);
    /* |x| sorted: .5 1 2 3 5 7 -> median (2+3)/2 = 2.5 */
    assert_true(fabs(abs_median(x, 6, scratch) - 2.5) < 1e-12);
    /* first five |x|: 1 2 3 5 7 -> 3 */
    assert_true(fabs(abs_median(x, 5, scratch) - 3.0) < 1e-12);
    double top[3];
    abs_topk(top, 3, x, 6);
    assert_true(top[0] == 7.0 && top[1] == 5.0 && top[2] == 3.0);
    double top4[4];
    abs_topk(top4, 4, x, 2); /* fewer values than k: zero padded */
    assert_true(top4[0] == 7.0 && top4[1] == 1.0 && top4[2] == 0.0);
}

static void test_kurtosis(void **state) {
    (void)state;
    /* x = {-1,-1,1,1}: mu 0, sigma^2 1, m4 1 -> 1/(1+1e-6) */
    float a[4] = {-1, -1, 1, 1};
    assert_true(fabs(kurtosis(a, 4) - 1.0 / (1.0 + 1e-6)) < 1e-9);
    /* x = {0,0,0,4}: mu 1, deviations -1,-1,-1,3; m2 = (1+1+1+9)/4 = 3,
     * m4 = (1+1+1+81)/4 = 21 -> 21/(9+1e-6) */
    float b[4] = {0, 0, 0, 4};
    assert_true(fabs(kurtosis(b, 4) - 21.0 / (9.0 + 1e-6)) < 1e-9);
    /* constant vector: 0/(0+1e-6) = 0, no NaN */
    float c[3] = {2, 2, 2};
    assert_true(kurtosis(c, 3) == 0.0);
}

/* T = 3: row 1 is empty (softpick dropped it), row 2 = (0.5, 0.25, 0.25).
 * Queries 1..2: mass 0 + 1 = 1, first 0 + 0.5 = 0.5. Row 0 is not counted. */
static void test_mass_first(void **state) {
    (void)state;
    float A[9] = {1, 0, 0, 0, 0, 0, 0.5f, 0.25f, 0.25f};
    double m, f;
    attention_mass_first(A, 3, &m, &f);
    assert_true(fabs(m - 1.0) < 1e-7);
    assert_true(fabs(f - 0.5) < 1e-7);
    /* uniform causal: every row has mass 1, so mass = T - 1 and first/mass
     * is the first-token share */
    float *U = uniform_causal(64);
    attention_mass_first(U, 64, &m, &f);
    assert_true(fabs(m - 63.0) < 1e-4);
    assert_true(fabs(f / m - first_token_share(U, 64)) < 1e-6);
    free(U);
}

static void test_norm_ratio(void **state) {
    (void)state;
    /* h[3,2]: ||h0|| = 5 (3,4); ||h1|| = 1, ||h2|| = 3 -> 5 / 2 = 2.5 */
    float h[6] = {3, 4, 1, 0, 0, -3};
    assert_true(fabs(first_norm_ratio(h, 3, 2) - 2.5) < 1e-9);
}

static void test_spikes(void **state) {
    (void)state;
    enum { N = 200 };
    double loss[N];
    long long step[N], out[8];
    for (int i = 0; i < N; i++) {
        step[i] = i + 1;
        loss[i] = 2.0;
    }
    loss[5] = 10.0;  /* step 6 < warmup 20: not counted */
    loss[100] = 3.0; /* 1.5 x median 2: spike */
    loss[150] = 2.6; /* 1.3 x: spike */
    loss[170] = 2.4; /* 1.2 x: below 1.25, not a spike */
    int n = count_spikes(loss, step, N, 20, 50, 1.25, out, 8);
    assert_int_equal(n, 2);
    assert_int_equal(out[0], 100);
    assert_int_equal(out[1], 150);
    assert_int_equal(step[out[0]], 101);
    /* NULL out still counts; a NaN loss is divergence, not a spike */
    loss[180] = NAN;
    assert_int_equal(count_spikes(loss, step, N, 20, 50, 1.25, NULL, 0), 2);
    /* with warmup 0 the early spike counts too */
    assert_int_equal(count_spikes(loss, step, N, 0, 50, 1.25, NULL, 0), 3);
}

/* Three heads' first columns, T = 4: alpha_0 over all 4 queries is 0.25,
 * 0.5 and 1.0; over the first 2 queries 0.5, 0.75 and 1.0. */
static void test_sink_rate(void **state) {
    (void)state;
    const float cols[12] = {1, 0, 0, 0, 1, 0.5f, 0.5f, 0, 1, 1, 1, 1};
    assert_float_equal(sink_rate(cols, 3, 4, 64, SINK_EPS), 2.0 / 3.0, 1e-12);
    assert_float_equal(sink_rate(cols, 3, 4, 4, 0.6), 1.0 / 3.0, 1e-12);
    assert_float_equal(sink_rate(cols, 3, 4, 2, 0.6), 2.0 / 3.0, 1e-12);
    assert_float_equal(sink_rate(cols, 1, 4, 64, 0.25), 0.0, 0.0); /* strictly above */
    assert_true(isnan(sink_rate(cols, 0, 4, 64, SINK_EPS)));
}

/* Twice the uniform share at T = 64 is 0.1186...: just above forms a
 * sink, just below does not; NaN is "no probe". */
static void test_sink_formed(void **state) {
    (void)state;
    double u2 = SINK_FORMED_FACTOR * uniform_first_share(64);
    assert_true(u2 > 0.118 && u2 < 0.119);
    assert_int_equal(sink_formed(u2 + 1e-9, uniform_first_share(64)), 1);
    assert_int_equal(sink_formed(u2 - 1e-9, uniform_first_share(64)), 0);
    assert_int_equal(sink_formed(NAN, uniform_first_share(64)), -1);
}

static void test_mean_std(void **state) {
    (void)state;
    /* {2,4,4,4,5,5,7,9}: mean 5, sum sq dev 32, sample std sqrt(32/7) */
    double x[8] = {2, 4, 4, 4, 5, 5, 7, 9};
    double m, s;
    mean_std(x, 8, &m, &s);
    assert_true(fabs(m - 5.0) < 1e-12);
    assert_true(fabs(s - sqrt(32.0 / 7.0)) < 1e-12);
    mean_std(x, 1, &m, &s);
    assert_true(m == 2.0 && s == 0.0);
}

/* The sink threshold's text is the number as "%g" prints it, so a name
 * built from it (the run file's lceval attribute) is the one a "%g" name
 * carries and the one older files store; the report's gate sparsity is a
 * column of the probe's gate_below. */
static void test_threshold_names(void **state) {
    (void)state;
    char buf[32];
    snprintf(buf, sizeof buf, "%g", SINK_EPS);
    assert_string_equal(buf, SINK_EPS_TEXT);
    assert_string_equal(RS_LC_SINK_RATE, "sink_rate_0.3");
    assert_true(RS_GATE_BELOW_THR[RS_GATE_SPARSE_K] == RS_GATE_SPARSE);
    assert_true(SINK_EPS_LOW < SINK_EPS_MID && SINK_EPS_MID < SINK_EPS);
}

/* key_alpha_all equals alpha_k key by key; uniform causal attention gives
 * key T-1 the weight 1/T from its one query. */
static void test_key_alpha_all(void **state) {
    (void)state;
    enum { T = 9 };
    float *A = uniform_causal(T), out[T];
    key_alpha_all(A, T, out);
    for (int k = 0; k < T; k++) assert_true(fabs(out[k] - alpha_k(A, T, k)) < 1e-7);
    assert_true(fabs(out[T - 1] - 1.0 / T) < 1e-7);
    free(A);
}

/* Previous-token attention (row 0 on itself): w(1) = 1 over its T-1
 * queries, w(0) = 1/T (only query 0); the mass is 1/T at d = 0 and
 * (T-1)/T at d = 1. A map with no mass has NaN mass shares. */
static void test_distance_profile(void **state) {
    (void)state;
    enum { T = 5 };
    float A[T * T] = {0};
    A[0] = 1.0f;
    for (int t = 1; t < T; t++) A[t * T + t - 1] = 1.0f;
    double w[T], m[T];
    distance_profile(A, T, w, m);
    assert_true(fabs(w[0] - 1.0 / T) < 1e-12 && fabs(w[1] - 1.0) < 1e-12);
    assert_true(fabs(m[0] - 1.0 / T) < 1e-12 && fabs(m[1] - (T - 1.0) / T) < 1e-12);
    for (int d = 2; d < T; d++) assert_true(w[d] == 0.0 && m[d] == 0.0);
    float Z[T * T] = {0};
    distance_profile(Z, T, w, NULL);
    distance_profile(Z, T, NULL, m);
    assert_true(w[0] == 0.0 && isnan(m[0]) && isnan(m[T - 1]));
}

/* h_0 = (1,0): (0,2) is orthogonal, (-3,0) opposite, (1,1) at 45 degrees,
 * (0,0) has no direction (NaN). */
static void test_cosine_to_first(void **state) {
    (void)state;
    const float h[] = {1, 0, 0, 2, -3, 0, 1, 1, 0, 0};
    float c[5];
    cosine_to_first(h, 5, 2, c);
    assert_true(fabs(c[0] - 1.0) < 1e-7 && fabs(c[1]) < 1e-7 && fabs(c[2] + 1.0) < 1e-7);
    assert_true(fabs(c[3] - sqrt(0.5)) < 1e-7 && isnan(c[4]));
}

/* count_above counts strictly above, per feature, adding to count. */
static void test_count_above(void **state) {
    (void)state;
    const float h[] = {5, -1, -6, 2, 4, 0.5f}; /* T = 3, C = 2 */
    double count[2] = {1, 0};
    count_above(h, 3, 2, 4.0, count);
    assert_true(count[0] == 3.0 && count[1] == 0.0); /* 5, |-6| above; 4 is not */
}

/* Score rows [L=5, P=10]: key 3 is a sink at layers 1-2 and again at 4
 * (two sinks), key 6 at layer 0 only; key 0 (the first token), key 7
 * (seen by 3 < SECSINK_MIN_QUERIES queries) and a score equal to eps are
 * not sinks. */
static void test_secondary_sinks(void **state) {
    (void)state;
    enum { L = 5, P = 10 };
    double score[L * P] = {0};
    for (int l = 0; l < L; l++) score[l * P] = 0.9, score[l * P + 7] = 0.9;
    score[1 * P + 3] = 0.5, score[2 * P + 3] = 0.6, score[4 * P + 3] = 0.4;
    score[0 * P + 6] = SECSINK_EPS + 0.01, score[1 * P + 6] = SECSINK_EPS;
    SecSink s[4];
    assert_int_equal(secsink_find(score, L, P, s, 4), 3);
    assert_int_equal(s[0].pos, 3), assert_int_equal(s[0].layer, 1);
    assert_int_equal(s[0].lifetime, 2), assert_true(s[0].peak == 0.6);
    assert_int_equal(s[1].pos, 3), assert_int_equal(s[1].layer, 4);
    assert_int_equal(s[1].lifetime, 1);
    assert_int_equal(s[2].pos, 6), assert_int_equal(s[2].layer, 0);
    assert_int_equal(s[2].lifetime, 1);
    assert_int_equal(secsink_find(score, L, P, NULL, 0), 3);
    /* the score is the mean over heads: heads 0.2 and 0.6 give 0.4 */
    const float ka[2 * 3] = {0.2f, 0.0f, 1.0f, 0.6f, 0.0f, 0.0f}; /* L=1, H=2, P=3 */
    double sc[3];
    secsink_score(ka, 1, 2, 3, sc);
    assert_true(fabs(sc[0] - 0.4) < 1e-7 && sc[1] == 0.0 && fabs(sc[2] - 0.5) < 1e-7);
}

/* ---- head probes ---- */

static void test_row_norms(void **st) {
    (void)st;
    const float x[6] = {3, 4, 99, 0, 0, 99}; /* two rows of 2, stride 3 */
    float out[2];
    row_norms(out, x, 2, 2, 3);
    assert_float_equal(out[0], 5.0, 1e-6);
    assert_float_equal(out[1], 0.0, 0.0);
}

static void test_first_rest(void **st) {
    (void)st;
    const float v[3] = {2, 1, 3};
    double f, r;
    first_rest(v, 3, &f, &r);
    assert_float_equal(f, 2.0, 0.0);
    assert_float_equal(r, 2.0, 1e-12);
    first_rest(v, 1, &f, &r); /* no later position */
    assert_float_equal(f, 2.0, 0.0);
    assert_true(isnan(r));
}

static void test_gate_first_rest(void **st) {
    (void)st;
    const float g[6] = {0.1f, 0.3f, 0.5f, 0.5f, 1.0f, 0.0f};
    double f, r;
    gate_first_rest(g, 2, 3, 2, &f, &r);
    assert_float_equal(f, 0.2, 1e-7);
    assert_float_equal(r, 0.5, 1e-7);
    gate_first_rest(g, 0, 3, 2, &f, &r); /* one row for every position (g1-const) */
    assert_float_equal(f, r, 1e-12);
    gate_first_rest(g, 2, 1, 2, &f, &r);
    assert_float_equal(f, 0.2, 1e-7);
    assert_true(isnan(r));
    gate_first_rest(g, 2, 3, 0, &f, &r); /* no channel */
    assert_true(isnan(f) && isnan(r));
}

static void test_dormant(void **st) {
    (void)st;
    const float on[4] = {1, 1, 3, 3}; /* H = 2, T = 2: means 1 and 3, layer mean 2 */
    const float zero[4] = {0};
    double s[2];
    head_norm_scores(s, on, 2, 2);
    assert_float_equal(s[0], 0.5, 1e-12);
    assert_float_equal(s[1], 1.5, 1e-12);
    head_norm_scores(s, zero, 2, 2); /* a silent layer: no scale to compare with */
    assert_true(isnan(s[0]) && isnan(s[1]));
    const DormantRule S = DORMANT_BY_SINK, N = DORMANT_BY_NORM;
    assert_int_equal(head_dormant(S, 0.4, 0.5), 1);
    assert_int_equal(head_dormant(S, DORMANT_NORM_THR, 0.9), 0);  /* the score must be below */
    assert_int_equal(head_dormant(S, 0.4, DORMANT_SHARE_THR), 0); /* the share must exceed */
    assert_int_equal(head_dormant(S, 1.2, 0.9), 0);
    assert_int_equal(head_dormant(S, NAN, 0.9), -1);
    assert_int_equal(head_dormant(S, 0.1, NAN), -1);
    /* the output-norm rule: near-zero output and no sink is dormant by it
     * and not by the sink rule; the share is not read */
    assert_int_equal(head_dormant(N, 1e-4, 0.0), 1);
    assert_int_equal(head_dormant(S, 1e-4, 0.0), 0);
    assert_int_equal(head_dormant(N, 0.4, NAN), 1);
    assert_int_equal(head_dormant(N, DORMANT_NORM_THR, 0.9), 0);
    assert_int_equal(head_dormant(N, 1.2, 0.9), 0);
    assert_int_equal(head_dormant(N, NAN, 0.9), -1);
}

static void test_effective_rank(void **st) {
    (void)st;
    const double flat[4] = {2, 2, 2, 2}, one[3] = {5, 0, 0}, none[2] = {0, 0};
    assert_float_equal(effective_rank(flat, 4), 4.0, 1e-12);
    assert_float_equal(effective_rank(one, 3), 1.0, 1e-12);
    assert_true(isnan(effective_rank(none, 2)));
    assert_true(isnan(effective_rank(flat, 0)));
    const double two[2] = {2, 1}; /* p = 2/3, 1/3 */
    double want = exp(-(2.0 / 3 * log(2.0 / 3) + 1.0 / 3 * log(1.0 / 3)));
    assert_float_equal(effective_rank(two, 2), want, 1e-12);
}

static void test_ov_effective_rank(void **st) {
    (void)st;
    /* d = 4, dh = 2: O V = diag(2, 1, 0, 0), singular values 2 and 1 */
    const float O[8] = {2, 0, 0, 1, 0, 0, 0, 0};  /* d x dh, row-major */
    const float Vt[8] = {1, 0, 0, 1, 0, 0, 0, 0}; /* V stored transposed: d x dh */
    StridedMat o = {O, 2, 1}, v = {Vt, 1, 2};     /* V(i, j) = Vt[j * 2 + i] */
    double want = exp(-(2.0 / 3 * log(2.0 / 3) + 1.0 / 3 * log(1.0 / 3)));
    assert_float_equal(ov_effective_rank(v, o, 4, 2), want, 1e-9);
    const float O1[8] = {1, 1, 1, 1, 1, 1, 1, 1}; /* equal columns: rank 1 */
    StridedMat o1 = {O1, 2, 1};
    assert_float_equal(ov_effective_rank(v, o1, 4, 2), 1.0, 1e-6);
    assert_true(isnan(ov_effective_rank(v, o, 1, 2))); /* dh > d */
    const float Onan[8] = {NAN, 0, 0, 1, 0, 0, 0, 0};
    StridedMat on = {Onan, 2, 1};
    assert_true(isnan(ov_effective_rank(v, on, 4, 2)));
    const float Z[8] = {0};
    StridedMat z = {Z, 2, 1};
    assert_true(isnan(ov_effective_rank(v, z, 4, 2))); /* a zero map has no rank to speak of */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uniform_share),
        cmocka_unit_test(test_uniform_share_window),
        cmocka_unit_test(test_uniform_share_slot),
        cmocka_unit_test(test_all_mass_on_first),
        cmocka_unit_test(test_alpha_k_hand),
        cmocka_unit_test(test_proxy),
        cmocka_unit_test(test_entropy_uniform),
        cmocka_unit_test(test_histogram),
        cmocka_unit_test(test_fraction_below),
        cmocka_unit_test(test_abs_stats),
        cmocka_unit_test(test_kurtosis),
        cmocka_unit_test(test_norm_ratio),
        cmocka_unit_test(test_mass_first),
        cmocka_unit_test(test_spikes),
        cmocka_unit_test(test_mean_std),
        cmocka_unit_test(test_sink_rate),
        cmocka_unit_test(test_sink_formed),
        cmocka_unit_test(test_threshold_names),
        cmocka_unit_test(test_key_alpha_all),
        cmocka_unit_test(test_distance_profile),
        cmocka_unit_test(test_cosine_to_first),
        cmocka_unit_test(test_count_above),
        cmocka_unit_test(test_secondary_sinks),
        cmocka_unit_test(test_row_norms),
        cmocka_unit_test(test_first_rest),
        cmocka_unit_test(test_gate_first_rest),
        cmocka_unit_test(test_dormant),
        cmocka_unit_test(test_effective_rank),
        cmocka_unit_test(test_ov_effective_rank),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
