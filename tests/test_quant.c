/* test_quant.c: the fake quantization of `gatelab eval --quant`: the
 * quantizer kernels (op_quant.c) and the sites of a pass (fakequant.c) on
 * hand-built tensors whose quantized values are worked out in the
 * comments; the mode lists; and the command end to end on a tiny run. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_args.h"
#include "fakequant.h"
#include "intervention.h"
#include "metrics.h"
#include "ops.h"
#include "quanteval.h"
#include "quant_print.h"
#include "runfile_read.h"
#include "testutil.h"

static void assert_floats(const float *got, const float *want, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i]) fail_msg("entry %zu: got %.9g, want %.9g", i, got[i], want[i]);
}

/* 3 bits, signed (a negative entry): grid [-4, 3], step max|x| / 3 = 1, so
 * x rounds to the nearest integer, ties to even (0.5 -> 0, 1.5 -> 2,
 * 2.5 -> 2, -0.5 -> -0). */
static void test_symmetric_signed(void **st) {
    (void)st;
    float x[] = {3.0f, -3.0f, 0.5f, 1.5f, 2.5f, -0.5f, 1.2f};
    const float want[] = {3.0f, -3.0f, 0.0f, 2.0f, 2.0f, -0.0f, 1.0f};
    fq_symmetric(x, 7, 3);
    assert_floats(x, want, 7);
}

/* No negative entry: the unsigned grid [0, 7], step 7 / 7 = 1. With max 14
 * the step is 2: 3 -> 1.5 -> 2 (even) -> 4; 5 -> 2.5 -> 2 -> 4. */
static void test_symmetric_unsigned(void **st) {
    (void)st;
    float x[] = {0.4f, 7.0f, 3.5f, 0.0f};
    const float want[] = {0.0f, 7.0f, 4.0f, 0.0f};
    fq_symmetric(x, 4, 3);
    assert_floats(x, want, 4);
    float y[] = {14.0f, 3.0f, 5.0f, 1.0f};
    const float wy[] = {14.0f, 4.0f, 4.0f, 0.0f};
    fq_symmetric(y, 4, 3);
    assert_floats(y, wy, 4);
}

/* 8 bits keeps 127 levels of each sign: max 127 gives step 1, 100.4 ->
 * 100, -0.6 -> -1. */
static void test_symmetric_8bit(void **st) {
    (void)st;
    float x[] = {127.0f, 100.4f, -127.0f, -0.6f};
    const float want[] = {127.0f, 100.0f, -127.0f, -1.0f};
    fq_symmetric(x, 4, 8);
    assert_floats(x, want, 4);
}

/* 2 bits on [-1, 2]: step 3 / 3 = 1, zero point round(1 / 1) = 1, grid
 * q in [0, 3] -> values q - 1 in [-1, 2]: -3 clamps to -1, 5 to 2, 0.4 ->
 * 0, 0.5 -> round(0.5) = 0 (even) -> 0, 1.5 -> 2 -> 2. */
static void test_asymmetric(void **st) {
    (void)st;
    const float x[] = {-1.0f, 2.0f, 0.4f, -3.0f, 5.0f, 0.5f, 1.5f};
    const float want[] = {-1.0f, 2.0f, 0.0f, -1.0f, 2.0f, 0.0f, 2.0f};
    float y[7];
    fq_asymmetric(y, x, 7, 2, -1.0, 2.0);
    assert_floats(y, want, 7);
}

/* A range above zero is widened to hold 0: [0.5, 3] -> [0, 3], step 1,
 * zero point 0; so 0.5 -> 0 and 4 clamps to 3. In place. */
static void test_asymmetric_widened(void **st) {
    (void)st;
    float x[] = {0.5f, 2.6f, 4.0f, -1.0f};
    const float want[] = {0.0f, 3.0f, 3.0f, 0.0f};
    fq_asymmetric(x, x, 4, 2, 0.5, 3.0);
    assert_floats(x, want, 4);
}

/* 0..9999 shuffled: the 99.99th percentile is entry round(9999 * 0.9999)
 * = 9998 of the sorted values, the 0.01th entry round(0.9999) = 1. */
static void test_percentile(void **st) {
    (void)st;
    const size_t n = 10000;
    float *x = malloc(n * sizeof *x), *s = malloc(n * sizeof *s);
    for (size_t i = 0; i < n; i++) x[i] = (float)((i * 7919) % n); /* a permutation */
    double lo, hi;
    fq_percentile(x, n, FQ_PERCENTILE, s, &lo, &hi);
    assert_true(lo == 1.0 && hi == 9998.0);
    fq_minmax(x, n, &lo, &hi);
    assert_true(lo == 0.0 && hi == 9999.0);
    float one = 5.0f;
    fq_percentile(&one, 1, FQ_PERCENTILE, s, &lo, &hi);
    assert_true(lo == 5.0 && hi == 5.0);
    free(x), free(s);
}

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The selection against a full sort, on inputs full of ties (values mod
 * 7) and of every small size: the percentile entries are the sorted
 * values' round((n - 1) p / 100). */
static void test_percentile_ties(void **st) {
    (void)st;
    float x[600], s[600], sorted[600];
    for (size_t n = 1; n <= 600; n += 37) {
        for (size_t i = 0; i < n; i++) x[i] = (float)((i * 2654435761u) % 7) - 3.0f;
        memcpy(sorted, x, n * sizeof *x);
        qsort(sorted, n, sizeof *sorted, cmp_float);
        for (double pct = 50.0; pct < 100.0; pct += 12.5) {
            double lo, hi;
            fq_percentile(x, n, pct, s, &lo, &hi);
            size_t kh = (size_t)floor((double)(n - 1) * pct / 100.0 + 0.5);
            size_t kl = (size_t)floor((double)(n - 1) * (100.0 - pct) / 100.0 + 0.5);
            if (hi != sorted[kh] || lo != sorted[kl])
                fail_msg("n %zu pct %g: [%g, %g], want [%g, %g]", n, pct, lo, hi, sorted[kl],
                         sorted[kh]);
        }
    }
}

/* Two sites in a pass; calibration ranges [0, 1] then [0, 2] give hi =
 * 0.9 * 1 + 0.1 * 2 = 1.1; a weight is quantized once and kept. */
static void test_sites(void **st) {
    (void)st;
    FakeQuant q;
    fq_init(&q, FQ_W8A8);
    float in1[] = {0.0f, 1.0f}, in2[] = {0.0f, 2.0f}, w[] = {0.3f, -1.0f};
    const float *pi = in1, *pw = w;
    fq_begin(&q, 1);
    fq_linear(&q, &pi, 1, 2, &pw, 2);
    assert_int_equal(q.failed, 1); /* no range yet: not calibrated */
    fq_free(&q);
    fq_init(&q, FQ_W8A8);
    q.calibrating = 1;
    for (int pass = 0; pass < 2; pass++) {
        fq_begin(&q, 1);
        for (int s = 0; s < 2; s++) {
            pi = pass ? in2 : in1, pw = w;
            fq_linear(&q, &pi, 1, 2, &pw, 2);
            assert_ptr_equal(pw, q.sites[s].w);
        }
    }
    assert_int_equal(q.failed, 0);
    assert_int_equal(q.n_sites, 2);
    assert_true(fabs(q.sites[1].hi - 1.1) < 1e-12 && q.sites[1].lo == 0.0);
    assert_int_equal(q.sites[0].have, 2);
    /* weight: step 1/127, 0.3 -> round(38.1) = 38 */
    assert_true(fabs(q.sites[0].w[0] - 38.0 / 127.0) < 1e-7 && q.sites[0].w[1] == -1.0f);
    fq_free(&q);
}

/* Per token: each row on its own min-max, no calibration. Two windows of
 * two rows, the first row of each held out (left as it is). Row 1 [0,
 * 63.75]: step 0.25, zero point 0, 10.1 -> round(40.4) = 40 -> 10. Row 3
 * [-127.5, 127.5]: step 1, zero point round(127.5) = 128 (even), so
 * -127.5 -> round(-127.5) + 128 = 0 -> -128, 127.5 -> 256, clamped to 255
 * -> 127, 0.6 -> 1. One range over rows 1 and 3 would give step 1 and
 * move 10.1 to 10, 63.75 to 64. */
static void test_per_token(void **st) {
    (void)st;
    FakeQuant q;
    fq_init(&q, FQ_W8A8_TOK);
    q.keep_first = 1;
    const float in[] = {1000.0f, -3.0f, 0.3f, 0.0f,    63.75f, 10.1f,
                        5000.0f, 1.0f,  1.0f, -127.5f, 127.5f, 0.6f};
    const float want[] = {1000.0f, -3.0f, 0.3f, 0.0f,    63.75f, 10.0f,
                          5000.0f, 1.0f,  1.0f, -128.0f, 127.0f, 1.0f};
    float w[] = {0.5f, -1.0f, 0.25f};
    const float *pi = in, *pw = w;
    fq_begin(&q, 2);
    fq_linear(&q, &pi, 4, 3, &pw, 3);
    assert_int_equal(q.failed, 0); /* no calibration needed */
    assert_int_equal(q.sites[0].have, 0);
    assert_floats(pi, want, 12);
    assert_false(fq_calibrated(FQ_W8A8_TOK) || fq_calibrated(FQ_FLOAT));
    assert_true(fq_calibrated(FQ_W8A8) && fq_calibrated(FQ_W8A8_PCT) && fq_calibrated(FQ_W4A4));
    /* rows not a whole number of windows: refused */
    fq_begin(&q, 3);
    pi = in;
    fq_linear(&q, &pi, 4, 3, &pw, 3);
    assert_int_equal(q.failed, 1);
    fq_free(&q);
}

/* Per tensor with the first row of each of two windows held out: the
 * range is rows 1 and 3's alone, [0, 63.75] (step 0.25, zero point 0),
 * not the held rows' [-1000, 1000]; the held rows stay as they are. */
static void test_keep_first(void **st) {
    (void)st;
    FakeQuant q;
    fq_init(&q, FQ_W8A8);
    q.keep_first = 1;
    q.calibrating = 1;
    const float in[] = {1000.0f, -1000.0f, 0.0f, 63.75f, 500.0f, 7.0f, 10.1f, 1.0f};
    const float want[] = {1000.0f, -1000.0f, 0.0f, 63.75f, 500.0f, 7.0f, 10.0f, 1.0f};
    float w[] = {1.0f, 2.0f};
    const float *pi = in, *pw = w;
    fq_begin(&q, 2);
    fq_linear(&q, &pi, 4, 2, &pw, 2);
    assert_int_equal(q.failed, 0);
    assert_true(q.sites[0].lo == 0.0 && q.sites[0].hi == 63.75);
    assert_floats(pi, want, 8);
    /* every row held out (a window of one row): nothing quantized, no failure */
    q.calibrating = 0;
    fq_begin(&q, 4);
    pi = in, pw = w; /* the first call pointed them at its quantized copies */
    fq_linear(&q, &pi, 4, 2, &pw, 2);
    assert_int_equal(q.failed, 0);
    assert_floats(pi, in, 8);
    fq_free(&q);
}

/* kv4 (grid 0..15) on one window of two positions, two heads of three
 * values, rows 8 floats apart (two more columns, 99, that are not the
 * keys'); the first position held out. Each head is its own range: key
 * head 0 [0, 15] (step 1): 7.4 -> 7; head 1 [-5, 10] (step 1, zero point
 * 5): 2.5 -> round(2.5) = 2 (even). One range over both heads, [-5, 15],
 * would have step 4/3 and move 7.4 to 8. Value head 0 [0, 30] (step 2):
 * 14.2 -> 14. The linear layers stay in float, and other modes leave the
 * cache. */
static void test_kv_cache(void **st) {
    (void)st;
    const float k0[] = {1000.0f, -1000.0f, 3.3f, 4.4f,  5.5f,  6.6f, 99.0f, 99.0f,
                        0.0f,    15.0f,    7.4f, -5.0f, 10.0f, 2.5f, 99.0f, 99.0f};
    const float kw[] = {1000.0f, -1000.0f, 3.3f, 4.4f,  5.5f,  6.6f, 99.0f, 99.0f,
                        0.0f,    15.0f,    7.0f, -5.0f, 10.0f, 2.0f, 99.0f, 99.0f};
    const float v0[] = {0.1f,  0.2f, 0.3f,  0.4f,  0.5f,  0.6f,  99.0f, 99.0f,
                        30.0f, 0.0f, 14.2f, -1.0f, -2.0f, -3.0f, 99.0f, 99.0f};
    const float vw[] = {0.1f,  0.2f, 0.3f,  0.4f,  0.5f,  0.6f,  99.0f, 99.0f,
                        30.0f, 0.0f, 14.0f, -1.0f, -2.0f, -3.0f, 99.0f, 99.0f};
    float k[16], v[16];
    memcpy(k, k0, sizeof k), memcpy(v, v0, sizeof v);
    FakeQuant q;
    fq_init(&q, FQ_KV4);
    q.keep_first = 1;
    fq_begin(&q, 1);
    float w[] = {0.3f, -0.7f};
    const float *pi = k0, *pw = w;
    fq_linear(&q, &pi, 1, 2, &pw, 2);
    assert_true(pi == k0 && pw == w && q.failed == 0);
    fq_kv_cache(&q, k, v, 1, 2, 2, 3, 8);
    assert_floats(k, kw, 16);
    assert_floats(v, vw, 16);
    assert_false(fq_calibrated(FQ_KV8) || fq_calibrated(FQ_KV4));
    assert_true(fq_bits(FQ_KV8) == 8 && fq_bits(FQ_KV4) == 4);
    fq_free(&q);
    fq_init(&q, FQ_W8A8_TOK);
    memcpy(k, k0, sizeof k), memcpy(v, v0, sizeof v);
    fq_kv_cache(&q, k, v, 1, 2, 2, 3, 8);
    assert_floats(k, k0, 16);
    assert_floats(v, v0, 16);
    fq_free(&q);
}

/* One pass's input tensors: q, k and v read one tensor (three calls, one
 * tensor), the attention marks the layer (fq_kv_cache), then o's input,
 * the MLP's (gate and up: one) and down's; a layer output closes layer
 * 0. Tensor 2 (layer 0's MLP input) is held: its two calls keep their
 * float pointers and make no quantized weight, the others are swapped. A
 * second pass finds the same tensors. */
static void test_tensors(void **st) {
    (void)st;
    const float A[4] = {1, 2, 3, 4}, Y[4] = {-1, 0.5f, 2, 8}, N2[4] = {0.1f, 0.2f, -3, 1},
                H[4] = {5, -5, 1, 2}, W[4] = {0.5f, -0.25f, 1, 2};
    float k[4] = {1, 2, 3, 4}, v[4] = {1, 2, 3, 4};
    const float *seq[7] = {A, A, A, Y, N2, N2, H};
    FakeQuant q;
    fq_init(&q, FQ_W8A8_TOK);
    q.hold = 2;
    for (int pass = 0; pass < 2; pass++) {
        fq_begin(&q, 1);
        for (int c = 0; c < 7; c++) {
            const float *pi = seq[c], *pw = W;
            fq_linear(&q, &pi, 2, 2, &pw, 4);
            assert_true((pi == seq[c]) == (c == 4 || c == 5));
            assert_true((pw == W) == (c == 4 || c == 5));
            if (c == 2) fq_kv_cache(&q, k, v, 1, 2, 1, 2, 0);
        }
        fq_output(&q, FQ_OUT_LAYER, k, 1, 4);
        const float *pi = A, *pw = W;
        fq_linear(&q, &pi, 2, 2, &pw, 4);
        assert_int_equal(q.failed, 0);
        assert_int_equal(q.n_tensors, 5);
    }
    const char *want[5] = {"layer 0 attention input", "layer 0 attention output",
                           "layer 0 MLP input", "layer 0 MLP hidden", "layer 1 attention input"};
    for (int j = 0; j < 5; j++) {
        char name[48];
        fq_tensor_name(&q.tensors[j], j, name, sizeof name);
        assert_string_equal(name, want[j]);
    }
    assert_true(q.sites[4].w == NULL && q.sites[5].w == NULL && q.sites[6].w != NULL);
    fq_free(&q);
}

/* quant_print's table of r (modes w8a8, kv8; w8a8 destroyed when
 * destroyed) into a malloc'd string. */
static char *quant_table(int destroyed) {
    QuantEvalResult r;
    memset(&r, 0, sizeof r);
    r.len = 16, r.calib = 2, r.n_seqs = 4, r.val_loss = 3.0, r.ppl = exp(3.0), r.n_modes = 2;
    const FqMode mode[2] = {FQ_W8A8, FQ_KV8};
    const double dloss[2] = {destroyed ? 3.0 : 0.1, 0.05};
    for (int i = 0; i < 2; i++)
        r.modes[i] = (QuantModeResult){.mode = mode[i],
                                       .val_loss = 3.0 + dloss[i],
                                       .ppl = exp(3.0 + dloss[i]),
                                       .dloss = dloss[i],
                                       .destroyed = fq_destroyed(dloss[i])};
    ForwardInfo info;
    memset(&info, 0, sizeof info);
    snprintf(info.variant, sizeof info.variant, "baseline");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    quant_print(f, "run.h5", &info, &r);
    fclose(f);
    return buf;
}

/* The table's note on "destroyed" comes only when some mode is. */
static void test_quant_print_destroyed_note(void **st) {
    (void)st;
    const char *note = "destroyed: perplexity above " FQ_DESTROYED_TEXT "x the float one";
    char *t = quant_table(0);
    assert_non_null(strstr(t, " destroyed\n")); /* the column stays */
    assert_null(strstr(t, note));
    free(t);
    t = quant_table(1);
    assert_non_null(strstr(t, "      w8a8    6.0000"));
    assert_non_null(strstr(t, note));
    free(t);
}

/* The destroyed flag at its threshold: perplexity 10x the float one is
 * dloss ln 10 = 2.302585; just above it destroys, just below and any
 * improvement do not; a NaN or infinite loss destroys. */
static void test_destroyed(void **st) {
    (void)st;
    assert_int_equal(fq_destroyed(2.302585093 + 1e-6), 1);
    assert_int_equal(fq_destroyed(2.302585093 - 1e-6), 0);
    assert_int_equal(fq_destroyed(0.0), 0);
    assert_int_equal(fq_destroyed(-0.5), 0);
    assert_int_equal(fq_destroyed(NAN), 1);
    assert_int_equal(fq_destroyed(INFINITY), 1);
    assert_true(FQ_DESTROYED_PPL_RATIO == 10.0);
}

/* Float mode leaves the pointers; statistics are per sequence, then
 * averaged: two sequences with max |y| 1 and 3 give 2. */
static void test_float_stats(void **st) {
    (void)st;
    FakeQuant q;
    fq_init(&q, FQ_FLOAT);
    q.observe = 1;
    float in[] = {1.0f}, w[] = {2.0f};
    const float *pi = in, *pw = w;
    fq_begin(&q, 2);
    fq_linear(&q, &pi, 1, 1, &pw, 1);
    assert_ptr_equal(pi, in);
    assert_ptr_equal(pw, w);
    const float y[] = {1.0f, -0.5f, 0.0f, 0.0f, -3.0f, 2.0f, 0.0f, 0.0f};
    fq_output(&q, FQ_OUT_ATTN, y, 2, 4);
    fq_output(&q, FQ_OUT_LAYER, y, 2, 4);
    double inf[FQ_OUT_COUNT], ku;
    fq_stats(&q, inf, &ku);
    assert_true(inf[FQ_OUT_ATTN] == 2.0 && inf[FQ_OUT_LAYER] == 2.0);
    assert_true(isnan(inf[FQ_OUT_FFN]) == 0 && inf[FQ_OUT_FFN] == 0.0);
    const double k0 = kurtosis(y, 4), k1 = kurtosis(y + 4, 4);
    assert_true(fabs(ku - (k0 + k1) / 2) < 1e-12);
    fq_free(&q);
    fq_init(&q, FQ_FLOAT);
    fq_stats(&q, inf, &ku); /* nothing observed: absent, not zero */
    assert_true(isnan(inf[FQ_OUT_ATTN]) && isnan(ku));
}

static void test_parse_modes(void **st) {
    (void)st;
    FqMode m[QEVAL_MAX_MODES];
    int n;
    assert_int_equal(quanteval_parse_modes("w8a8,w8a8-pct,w4a4,w8a8-tok", m, &n), 0);
    assert_int_equal(n, 4);
    assert_true(m[0] == FQ_W8A8 && m[1] == FQ_W8A8_PCT && m[2] == FQ_W4A4 && m[3] == FQ_W8A8_TOK);
    assert_int_equal(quanteval_parse_modes("w4a4,w4a4", m, &n), -2);
    assert_int_equal(quanteval_parse_modes("float", m, &n), -1);
    assert_int_equal(quanteval_parse_modes("w8a8,w2a2", m, &n), -1);
    assert_int_equal(quanteval_parse_modes("", m, &n), -1);
    assert_string_equal(fq_mode_name(FQ_W8A8_PCT), "w8a8-pct");
    assert_int_equal(fq_bits(FQ_W4A4), 4);
}

/* ---- the command on a tiny trained run ---- */

static void test_eval_quant(void **st) {
    (void)st;
    char out[1024], err[512];
    snprintf(out, sizeof out, "%s/quant.out", tu_tiny_dir);
    assert_int_equal(tu_run(out, "eval %s --quant w8a8,w9a9", tu_tiny_run), 2);
    tu_assert_one_line(out, "bad --quant 'w8a8,w9a9'", "unknown mode");
    assert_int_equal(tu_run(out, "eval %s --quant w4a4,w4a4", tu_tiny_run), 2);
    tu_assert_one_line(out, "a mode named twice", NULL);
    /* the memory plan counts the quantized weights' copies: refused before any pass */
    setenv("GATELAB_MEM_LIMIT", "1000", 1);
    int rc = tu_run(out, "eval %s --quant w8a8", tu_tiny_run);
    unsetenv("GATELAB_MEM_LIMIT");
    assert_int_equal(rc, 2);
    tu_assert_one_line(out, "gatelab eval: quantized evaluation", "over the memory limit");
    /* before: no /quant, so every quantity is absent */
    RunReader *r = runread_open(tu_tiny_run, err, sizeof err);
    assert_non_null(r);
    RunQuant rq;
    RunQuantMode rm;
    assert_int_equal(runread_quant(r, &rq, err, sizeof err), 1);
    runread_close(r);
    assert_int_equal(
        tu_run(out, "eval %s --quant w8a8,w8a8-pct,w4a4,w8a8-tok,kv8,kv4", tu_tiny_run), 0);
    r = runread_open(tu_tiny_run, err, sizeof err);
    assert_non_null(r);
    assert_int_equal(runread_quant(r, &rq, err, sizeof err), 0);
    assert_int_equal(rq.calib_batches, QEVAL_CALIB_DEFAULT);
    assert_true(rq.percentile == FQ_PERCENTILE && isfinite(rq.val_loss));
    assert_true(rq.inf_layer > 0.0 && rq.inf_attn > 0.0 && rq.inf_ffn > 0.0);
    for (int k = 1; k < FQ_MODE_COUNT; k++) {
        assert_int_equal(runread_quant_mode(r, fq_mode_name((FqMode)k), &rm, err, sizeof err), 0);
        assert_true(fabs(rm.dloss - (rm.val_loss - rq.val_loss)) < 1e-12);
        assert_int_equal(rm.destroyed, fq_destroyed(rm.dloss));
    }
    runread_close(r);
    /* the float pass is the long-context eval's loss at 1x, on the same windows */
    assert_int_equal(tu_run(out, "eval %s --lengths 1x --no-write --json", tu_tiny_run), 0);
    char *js = tu_slurp_ok(out, NULL), *p = strstr(js, "\"val_loss\":");
    assert_non_null(p);
    assert_true(fabs(strtod(p + 11, NULL) - rq.val_loss) < 1e-6);
    free(js);
    /* the report: results.csv's quant_* columns and the section */
    char rep[1100];
    snprintf(rep, sizeof rep, "%s/rep", tu_tiny_dir);
    assert_int_equal(tu_run(out, "report %s -o %s", tu_tiny_dir, rep), 0);
    char *md = tu_slurp_ok(tu_join(rep, "REPORT.md"), NULL);
    assert_non_null(strstr(md, "## Quantized evaluation (exploratory)"));
    free(md);
    char *csv = tu_slurp_ok(tu_join(rep, "results.csv"), NULL);
    assert_non_null(strstr(csv, "quant_w8a8_dloss,quant_w8a8pct_dloss,quant_w4a4_dloss"));
    free(csv);
}

/* --quant-keep-first on the run test_eval_quant evaluated: each mode's
 * all-rows pass unchanged (the same dloss), the held-out pass stored
 * beside it, sink_dloss their difference; the refusals. */
static void test_eval_quant_keep(void **st) {
    (void)st;
    char out[1024], err[512];
    snprintf(out, sizeof out, "%s/keep.out", tu_tiny_dir);
    RunReader *r = runread_open(tu_tiny_run, err, sizeof err);
    assert_non_null(r);
    RunQuant rq;
    RunQuantMode before[2], rm;
    const char *modes[2] = {FQ_NAME_W8A8, FQ_NAME_W8A8_TOK};
    assert_int_equal(runread_quant(r, &rq, err, sizeof err), 0);
    assert_int_equal(rq.keep_first, 0);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(runread_quant_mode(r, modes[i], &before[i], err, sizeof err), 0);
        assert_true(isnan(before[i].sink_dloss) && isnan(before[i].dloss_keep));
    }
    runread_close(r);
    assert_int_equal(tu_run(out, "eval %s --quant w8a8 --quant-keep-first 99999", tu_tiny_run), 2);
    tu_assert_one_line(out, "--quant-keep-first 99999 leaves no position of a window", "give 0 to");
    assert_int_equal(tu_run(out, "eval %s --lengths 1x --quant-keep-first 1", tu_tiny_run), 2);
    tu_assert_one_line(out, "gatelab eval: --quant-keep-first", "give --quant too");
    assert_int_equal(tu_run(out, "eval %s --quant w8a8,w8a8-tok --quant-keep-first 1", tu_tiny_run),
                     0);
    char *txt = tu_slurp_ok(out, NULL);
    assert_non_null(strstr(txt, "sink_dloss"));
    free(txt);
    r = runread_open(tu_tiny_run, err, sizeof err);
    assert_non_null(r);
    assert_int_equal(runread_quant(r, &rq, err, sizeof err), 0);
    assert_int_equal(rq.keep_first, 1);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(runread_quant_mode(r, modes[i], &rm, err, sizeof err), 0);
        assert_true(rm.dloss == before[i].dloss && isfinite(rm.sink_dloss));
        assert_true(fabs(rm.dloss_keep - (rm.val_loss_keep - rq.val_loss)) < 1e-12);
        assert_true(fabs(rm.sink_dloss - (rm.dloss - rm.dloss_keep)) < 1e-12);
        assert_true(rm.val_loss_keep != rm.val_loss); /* the held-out pass is its own */
    }
    runread_close(r);
    /* results.csv: the keep and the sink_dloss columns, filled for the modes evaluated */
    char rep[1100];
    snprintf(rep, sizeof rep, "%s/rep-keep", tu_tiny_dir);
    assert_int_equal(tu_run(out, "report %s -o %s", tu_tiny_dir, rep), 0);
    char *csv = tu_slurp_ok(tu_join(rep, "results.csv"), NULL);
    assert_non_null(strstr(csv,
                           "quant_w8a8tok_dloss,quant_kv8_dloss,quant_kv4_dloss,quant_keep_first,"
                           "quant_w8a8_sink_dloss,"
                           "quant_w8a8pct_sink_dloss,quant_w4a4_sink_dloss,"
                           "quant_w8a8tok_sink_dloss,quant_kv8_sink_dloss,quant_kv4_sink_dloss"));
    free(csv);
    assert_int_equal(tu_run(out, "metrics"), 0);
    txt = tu_slurp_ok(out, NULL);
    assert_non_null(strstr(txt, "quant_w8a8_sink_dloss"));
    free(txt);
}

/* --quant-source on the tiny run: w8a8's source is one of its input
 * tensors by name, its recovery is the all-quantized loss minus the loss
 * with that tensor in float (a --no-write pass of the same mode cannot
 * give that loss, so it is checked against its bounds: at most dloss
 * recovered beyond float's noise); kv8 (no per-tensor sites) has none;
 * the refusals. */
static void test_eval_quant_source(void **st) {
    (void)st;
    char out[1024], err[512];
    snprintf(out, sizeof out, "%s/source.out", tu_tiny_dir);
    assert_int_equal(tu_run(out, "eval %s --quant kv8,w8a8-tok --quant-source", tu_tiny_run), 2);
    tu_assert_one_line(out, "--quant-source ablates the input tensors of a per-tensor mode",
                       "w8a8, w8a8-pct or w4a4");
    assert_int_equal(tu_run(out, "eval %s --lengths 1x --quant-source", tu_tiny_run), 2);
    tu_assert_one_line(out, "gatelab eval: --quant-source", "give --quant too");
    assert_int_equal(tu_run(out, "eval %s --quant w8a8,kv8 --quant-source", tu_tiny_run), 0);
    char *txt = tu_slurp_ok(out, NULL);
    assert_non_null(strstr(txt, "w8a8: largest damage from layer "));
    free(txt);
    RunReader *r = runread_open(tu_tiny_run, err, sizeof err);
    assert_non_null(r);
    RunQuantMode rm;
    assert_int_equal(runread_quant_mode(r, FQ_NAME_W8A8, &rm, err, sizeof err), 0);
    assert_true(strncmp(rm.source, "layer ", 6) == 0 && rm.source_layer >= 0);
    assert_true(rm.n_tensors >= 4 && rm.n_tensors % 4 == 0); /* 4 input tensors a layer */
    assert_true(isfinite(rm.source_recovered) && rm.source_recovered <= rm.dloss + 1e-3);
    assert_int_equal(runread_quant_mode(r, FQ_NAME_KV8, &rm, err, sizeof err), 0);
    assert_true(rm.source[0] == 0 && isnan(rm.source_recovered));
    runread_close(r);
    assert_int_equal(
        tu_run(out, "eval %s --quant w8a8 --quant-source --no-write --json", tu_tiny_run), 0);
    txt = tu_slurp_ok(out, NULL);
    assert_non_null(strstr(txt, "\"source\":{"));
    assert_non_null(strstr(txt, "\"tensor\":\"layer "));
    free(txt);
}

/* The same on an inspected checkpoint: windows of its recorded input, the
 * float pass equal to the long-context eval's at the probe length. */
static void test_eval_quant_checkpoint(void **st) {
    (void)st;
    char fix[1024], ids[1100], run[1100], out[1100], err[512];
    snprintf(fix, sizeof fix, "%s/tests/reference/hf/llama-f32", tu_src());
    snprintf(ids, sizeof ids, "%s/ids.txt", tu_tiny_dir);
    snprintf(run, sizeof run, "%s/hf.h5", tu_tiny_dir);
    snprintf(out, sizeof out, "%s/hf.out", tu_tiny_dir);
    FILE *f = fopen(ids, "w");
    assert_non_null(f);
    for (int l = 0; l < 8; l++)
        for (int i = 0; i < 16; i++)
            fprintf(f, "%d%c", (l * 37 + i * 11) % 128, i < 15 ? ' ' : '\n');
    fclose(f);
    assert_int_equal(tu_run(out, "inspect %s --tokens %s --out %s -q", fix, ids, run), 0);
    assert_int_equal(tu_run(out,
                            "eval %s --quant w8a8,w4a4,kv8 --quant-keep-first 1 --batches 2 "
                            "--batch-size 2 --calib 2",
                            run),
                     0);
    char *tab = tu_slurp_ok(out, NULL);
    assert_non_null(strstr(tab, "destroyed"));
    assert_non_null(strstr(tab, "       kv8 "));
    free(tab);
    RunReader *r = runread_open(run, err, sizeof err);
    assert_non_null(r);
    RunQuant rq;
    RunQuantMode rm;
    assert_int_equal(runread_quant(r, &rq, err, sizeof err), 0);
    assert_int_equal(rq.len, 16);
    assert_true(rq.n_seqs == 4 && rq.inf_layer > 0.0 && isfinite(rq.kurtosis_max));
    assert_int_equal(runread_quant_mode(r, FQ_NAME_W4A4, &rm, err, sizeof err), 0);
    assert_true(isfinite(rm.val_loss) && rm.dloss != 0.0);
    assert_int_equal(rm.destroyed, fq_destroyed(rm.dloss));
    /* the KV cache's pass, with the first position's keys and values in float */
    assert_int_equal(runread_quant_mode(r, FQ_NAME_KV8, &rm, err, sizeof err), 0);
    assert_true(rm.dloss != 0.0 && isfinite(rm.sink_dloss) && rm.val_loss_keep != rm.val_loss);
    assert_int_equal(runread_quant_mode(r, FQ_NAME_W8A8_PCT, &rm, err, sizeof err), 1);
    runread_close(r);
    assert_int_equal(
        tu_run(out, "eval %s --lengths 1x --batches 2 --batch-size 2 --no-write --json", run), 0);
    char *js = tu_slurp_ok(out, NULL), *p = strstr(js, "\"val_loss\":");
    assert_non_null(p);
    assert_true(fabs(strtod(p + 11, NULL) - rq.val_loss) < 1e-6);
    free(js);
    /* too little input for the calibration batches: one line, exit 2 */
    assert_int_equal(tu_run(out, "eval %s --quant w8a8 --batches 2 --batch-size 2 --calib 99", run),
                     2);
    tu_assert_one_line(out, "gatelab eval:", "windows");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_symmetric_signed),
        cmocka_unit_test(test_symmetric_unsigned),
        cmocka_unit_test(test_symmetric_8bit),
        cmocka_unit_test(test_asymmetric),
        cmocka_unit_test(test_asymmetric_widened),
        cmocka_unit_test(test_percentile),
        cmocka_unit_test(test_percentile_ties),
        cmocka_unit_test(test_sites),
        cmocka_unit_test(test_per_token),
        cmocka_unit_test(test_keep_first),
        cmocka_unit_test(test_float_stats),
        cmocka_unit_test(test_parse_modes),
        cmocka_unit_test(test_kv_cache),
        cmocka_unit_test(test_destroyed),
        cmocka_unit_test(test_quant_print_destroyed_note),
        cmocka_unit_test(test_tensors),
    };
    const struct CMUnitTest cli[] = {
        cmocka_unit_test(test_eval_quant), cmocka_unit_test(test_eval_quant_keep),
        cmocka_unit_test(test_eval_quant_source), cmocka_unit_test(test_eval_quant_checkpoint)};
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    return rc | cmocka_run_group_tests(cli, tu_tiny_setup, tu_tiny_teardown);
}
