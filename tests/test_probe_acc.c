/* test_probe_acc.c: the probe reducer's memory plan (probe_reduce.c). For
 * a few shapes, probe_acc_bytes equals the bytes the plan hands out
 * (probe_acc_init plus ov_erank and, with has_logits, max_logit on their
 * first call); every
 * record array of RS_PROBE_ARRAYS has its accumulator, present exactly
 * when the shape calls for it; and probe_acc_finish hands every array
 * over, leaving the reducer none to free twice. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "probe_reduce.h"
#include "runfile_read.h"

static const ProbeShape SHAPES[] = {
    {.L = 2, .H = 3, .N = 4, .T = 5, .M = 5, .C = 0, .d = 8, .has_logits = 1, .threads = 1},
    {.L = 3,
     .H = 2,
     .N = 3,
     .T = 6,
     .M = 4,
     .C = 7,
     .d = 5,
     .has_slot = 1,
     .has_logits = 1,
     .threads = 1},
    {.L = 1, .H = 4, .N = 1, .T = 3, .M = 3, .C = 2, .d = 1, .rows_normalised = 1, .threads = 1},
    /* C so large that the gate sample keeps one sequence of three */
    {.L = 1, .H = 1, .N = 3, .T = 64, .M = 64, .C = 70000, .d = 2, .threads = 1},
};
#define NSHAPES (sizeof SHAPES / sizeof *SHAPES)

/* Whether the reducer is to hold record array `name` of this kind for
 * shape s: all but the trainer's own (grad_in_norm, targets,
 * gate_weight_norm), the slot only with has_slot, max_logit only with
 * has_logits, the gate arrays only with gate channels. */
static int expected(const ProbeShape *s, const char *name, int kind) {
    if (!strcmp(name, "grad_in_norm") || !strcmp(name, "targets") ||
        !strcmp(name, "gate_weight_norm"))
        return 0;
    if (!strcmp(name, "attention_slot")) return s->has_slot;
    if (!strcmp(name, "max_logit")) return s->has_logits;
    if (kind == RS_GATE || kind == RS_GATE_OPT) return s->C > 0;
    return 1;
}

/* A reducer for s with every array the plan gives, the ones given on a
 * call included. */
static void init_full(ProbeAcc *a, const ProbeShape *s) {
    assert_int_equal(probe_acc_init(a, s), 0);
    for (int l = 0; l < s->L; l++) {
        assert_int_equal(probe_acc_max_logit(a, l, 1.0 + l), s->has_logits ? 0 : -1);
        for (int h = 0; h < s->H; h++) assert_int_equal(probe_acc_ov_erank(a, l, h, 2.0), 0);
    }
}

static void test_bytes_match_plan(void **state) {
    (void)state;
    for (size_t i = 0; i < NSHAPES; i++) {
        ProbeAcc a;
        init_full(&a, &SHAPES[i]);
        if (a.plan.used != probe_acc_bytes(&SHAPES[i]))
            fail_msg("shape %zu: plan gave %zu bytes, probe_acc_bytes says %zu", i, a.plan.used,
                     probe_acc_bytes(&SHAPES[i]));
        probe_acc_free(&a);
    }
    ProbeShape none = SHAPES[0];
    none.N = 0;
    assert_int_equal(probe_acc_bytes(&none), 0);
    /* the gate sample of shape 3 keeps one sequence: L * 1 * T * C floats */
    ProbeAcc a;
    assert_int_equal(probe_acc_init(&a, &SHAPES[3]), 0);
    assert_int_equal(a.Ns, 1);
    probe_acc_free(&a);
}

static void test_every_array_has_accumulator(void **state) {
    (void)state;
    for (size_t i = 0; i < NSHAPES; i++) {
        const ProbeShape *s = &SHAPES[i];
        ProbeAcc a;
        init_full(&a, s);
#define CHECK_HELD(member, ctype, cls, hid, name, dims, kind, desc)                                \
    if ((a.member != NULL) != expected(s, name, kind))                                             \
        fail_msg("shape %zu: %s is %s", i, name, a.member ? "held" : "missing");
        RS_PROBE_ARRAYS(CHECK_HELD)
#undef CHECK_HELD
        ProbeRecord rec;
        probe_acc_finish(&a, &rec);
#define CHECK_HANDED(member, ctype, cls, hid, name, dims, kind, desc)                              \
    if (a.member) fail_msg("shape %zu: %s kept after finish", i, name);
        RS_PROBE_ARRAYS(CHECK_HANDED)
#undef CHECK_HANDED
        assert_non_null(rec.attention);
        assert_non_null(rec.h_median);
        assert_true((rec.gate_channel_mean != NULL) == (s->C > 0));
        assert_int_equal(rec.gate_sample_n, a.Ns);
        runread_probe_free(&rec);
        probe_acc_free(&a);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_bytes_match_plan),
                                       cmocka_unit_test(test_every_array_has_accumulator)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
