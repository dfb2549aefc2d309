/* test_quant_moe.c: fakequant.h's mixture-of-experts calls on hand-built
 * tensors, each expected value recomputed from op_quant.c's kernels: the
 * MoE input quantized as one tensor, an expert's slab per slab, the
 * hidden rows on one range over every expert's rows (or per token), rows
 * at window places below keep_first left in float, the held tensors'
 * values and slabs left, and the same sites in passes with other rows. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "fakequant.h"
#include "ops.h"

#define C 4 /* values a row */

static void assert_floats(const float *got, const float *want, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i]) fail_msg("entry %zu: got %.9g, want %.9g", i, got[i], want[i]);
}

/* Two experts' hidden rows of one window: expert A's at places {0, 2},
 * expert B's at {1, 3} (no row the same twice). */
static const float hid_a[2 * C] = {9.0f, -9.0f, 0.3f, 0.1f, 0.7f, -0.2f, 1.5f, 0.05f};
static const float hid_b[2 * C] = {-0.4f, 2.5f, 0.2f, -1.1f, 0.6f, 0.9f, -0.3f, 0.33f};
static const int pos_a[2] = {0, 2}, pos_b[2] = {1, 3};

/* One layer's MoE through q (no attention or router: the MoE's calls
 * alone): its input in[4, C] (one window of 4), a calibrating pass's
 * collecting sweep, then the two experts' hidden rows into a, b. */
static const float *moe_layer(FakeQuant *q, const float *in, float *a, float *b) {
    fq_begin(q, 1);
    const float *x = fq_moe_input(q, in, 4, C);
    static int tag;
    while (fq_moe_hidden_sweep(q, &tag)) {
        float ca[2 * C], cb[2 * C];
        memcpy(ca, hid_a, sizeof ca), memcpy(cb, hid_b, sizeof cb);
        fq_moe_hidden(q, ca, 2, C, pos_a);
        fq_moe_hidden(q, cb, 2, C, pos_b);
        assert_floats(ca, hid_a, 2 * C); /* collecting leaves them */
    }
    memcpy(a, hid_a, sizeof hid_a), memcpy(b, hid_b, sizeof hid_b);
    fq_moe_hidden(q, a, 2, C, pos_a);
    fq_moe_hidden(q, b, 2, C, pos_b);
    return x;
}

static const float in4[4 * C] = {1.0f, -2.0f, 0.5f, 3.0f, 0.25f, 0.75f, -1.5f, 2.0f,
                                 4.0f, 0.1f,  0.2f, 0.3f, -0.6f, 1.2f,  2.4f,  -3.6f};

/* w8a8, first place held out: the hidden range is the min-max over both
 * experts' rows at places >= 1 (A's row at place 2, B's two rows), and
 * the row at place 0 stays; the input is quantized on its own range with
 * its first row left. */
static void test_moe_per_tensor(void **st) {
    (void)st;
    FakeQuant q;
    fq_init(&q, FQ_W8A8);
    q.keep_first = 1;
    q.calibrating = 1;
    float a[2 * C], b[2 * C], want[4 * C];
    const float *x = moe_layer(&q, in4, a, b);
    assert_int_equal(q.failed, 0);
    assert_int_equal(q.site, 2);
    assert_int_equal(q.n_tensors, 2);
    double lo, hi;
    fq_minmax(in4 + C, 3 * C, &lo, &hi);
    memcpy(want, in4, C * sizeof(float));
    fq_asymmetric(want + C, in4 + C, 3 * C, 8, lo, hi);
    assert_floats(x, want, 4 * C);
    float rest[3 * C];
    memcpy(rest, hid_a + C, C * sizeof(float)), memcpy(rest + C, hid_b, 2 * C * sizeof(float));
    fq_minmax(rest, 3 * C, &lo, &hi);
    assert_true(lo == -1.1f && hi == 2.5f); /* A's place-0 row (+-9) is out */
    assert_true(q.sites[1].lo == lo && q.sites[1].hi == hi && q.sites[1].have == 1);
    memcpy(want, hid_a, C * sizeof(float));
    fq_asymmetric(want + C, hid_a + C, C, 8, lo, hi);
    assert_floats(a, want, 2 * C);
    fq_asymmetric(want, hid_b, 2 * C, 8, lo, hi);
    assert_floats(b, want, 2 * C);
    /* an expert's slab: symmetric on its own max |w|, a copy */
    const float *w = fq_expert_weight(&q, FQ_SLAB_DOWN, hid_b, 2 * C);
    memcpy(want, hid_b, 2 * C * sizeof(float));
    fq_symmetric(want, 2 * C, 8);
    assert_true(w != hid_b);
    assert_floats(w, want, 2 * C);
    /* a pass with other rows (other routing): the same sites and tensors */
    q.calibrating = 0;
    float other[4 * C];
    for (int i = 0; i < 4 * C; i++) other[i] = -0.5f * in4[i];
    moe_layer(&q, other, a, b);
    assert_int_equal(q.site, 2);
    assert_int_equal(q.n_sites, 2);
    assert_int_equal(q.n_tensors, 2);
    fq_free(&q);
}

/* w8a8-tok: each hidden row at place >= 2 on its own min-max, no sweep
 * collecting; the hidden tensor held: rows and down slabs left, the
 * input still quantized; float mode: nothing changes. */
static void test_moe_per_token_and_held(void **st) {
    (void)st;
    FakeQuant q;
    fq_init(&q, FQ_W8A8_TOK);
    q.keep_first = 2;
    q.calibrating = 1;
    float a[2 * C], b[2 * C], want[2 * C];
    moe_layer(&q, in4, a, b);
    assert_int_equal(q.failed, 0);
    memcpy(want, hid_a, sizeof want);
    double lo, hi;
    fq_minmax(hid_a + C, C, &lo, &hi);
    fq_asymmetric(want + C, hid_a + C, C, 8, lo, hi);
    assert_floats(a, want, 2 * C);
    memcpy(want, hid_b, sizeof want);
    fq_minmax(hid_b + C, C, &lo, &hi);
    fq_asymmetric(want + C, hid_b + C, C, 8, lo, hi);
    assert_floats(b, want, 2 * C);
    fq_free(&q);
    for (int m = 0; m < 2; m++) {
        fq_init(&q, m ? FQ_FLOAT : FQ_W8A8_TOK);
        q.hold = 1; /* the pass's second input tensor: the MoE hidden */
        const float *x = moe_layer(&q, in4, a, b);
        assert_floats(a, hid_a, 2 * C);
        assert_floats(b, hid_b, 2 * C);
        assert_true(fq_expert_weight(&q, FQ_SLAB_DOWN, hid_a, 2 * C) == hid_a);
        assert_true((fq_expert_weight(&q, FQ_SLAB_GATE_UP, hid_a, 2 * C) == hid_a) == m);
        assert_true((x == in4) == m);
        assert_int_equal(q.site, 2);
        fq_free(&q);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_moe_per_tensor),
                                       cmocka_unit_test(test_moe_per_token_and_held)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
