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

#include <math.h>
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
    /* layers of their own query heads */
    {.L = 2,
     .H = 4,
     .N = 2,
     .T = 3,
     .M = 3,
     .C = 4,
     .d = 2,
     .layer_heads = (const int[]){4, 2},
     .layer_slots = (const int[]){0, 1},
     .rows_normalised = 1,
     .threads = 1},
};
#define NSHAPES (sizeof SHAPES / sizeof *SHAPES)

/* Whether the reducer is to hold record array `name` of this kind for
 * shape s: all but the trainer's own (grad_in_norm, targets,
 * gate_weight_norm), the slot only with has_slot, max_logit only with
 * has_logits, layer_heads and layer_slots only with per-layer heads and
 * slots, the gate arrays
 * only with gate channels. */
static int expected(const ProbeShape *s, const char *name, int kind) {
    if (!strcmp(name, "grad_in_norm") || !strcmp(name, "targets") ||
        !strcmp(name, "gate_weight_norm"))
        return 0;
    if (!strcmp(name, "attention_slot")) return s->has_slot;
    if (!strcmp(name, "max_logit")) return s->has_logits;
    if (!strcmp(name, "layer_heads")) return s->layer_heads != NULL;
    if (!strcmp(name, "layer_slots")) return s->layer_slots != NULL;
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

/* Layers of their own query heads (the last shape: 4 and 2 heads, one
 * gate channel a head): each layer fed at its own H and C with uniform
 * causal rows (A[t, 0] = 1 / (t + 1)) and gate score 0.25 + 0.125 c;
 * the record keeps layer_heads (and the shape's layer_slots), layer 1's heads 2 and 3 (and their
 * gate channels) are NaN in every per-head array, its present heads carry the values computed here,
 * and its gate means count its own channels. */
static void test_absent_heads(void **state) {
    (void)state;
    const ProbeShape *s = &SHAPES[NSHAPES - 1];
    enum { T = 3, MAXH = 4 };
    float cols[MAXH * T], maps[MAXH * T * T], gates[T * MAXH], hidden[T * 2];
    for (int h = 0; h < MAXH; h++)
        for (int t = 0; t < T; t++) {
            cols[h * T + t] = 1.0f / (float)(t + 1);
            for (int j = 0; j < T; j++) maps[(h * T + t) * T + j] = j <= t ? 1.0f / (t + 1) : 0;
        }
    for (int i = 0; i < T * 2; i++) hidden[i] = 1.0f + (float)i;
    ProbeAcc a;
    assert_int_equal(probe_acc_init(&a, s), 0);
    for (int seq = 0; seq < s->N; seq++)
        for (int l = 0; l < s->L; l++) {
            const int Hl = s->layer_heads[l];
            for (int t = 0; t < T; t++)
                for (int c = 0; c < Hl; c++) gates[t * Hl + c] = 0.25f + 0.125f * (float)c;
            ProbeLayer pl = {.layer = l,
                             .T = T,
                             .H = Hl,
                             .M = T,
                             .C = Hl,
                             .d = 2,
                             .first_col = cols,
                             .maps = maps,
                             .gates = gates,
                             .gate_stride = Hl,
                             .hidden = hidden};
            probe_acc_layer(&a, seq, &pl);
        }
    ProbeRecord r;
    probe_acc_finish(&a, &r);
    assert_non_null(r.layer_heads);
    assert_int_equal(r.layer_heads[0], 4), assert_int_equal(r.layer_heads[1], 2);
    assert_non_null(r.layer_slots); /* the shape's, kept as they are */
    assert_int_equal(r.layer_slots[0], 0), assert_int_equal(r.layer_slots[1], 1);
    const double alpha = (1.0 + 1.0 / 2 + 1.0 / 3) / 3;
    for (int l = 0; l < 2; l++)
        for (int h = 0; h < MAXH; h++) {
            const int absent = h >= s->layer_heads[l];
            const size_t lh = (size_t)l * MAXH + h;
            assert_int_equal(isnan(r.alpha0[lh]), absent);
            assert_int_equal(isnan(r.attention[lh * T * T]), absent);
            assert_int_equal(isnan(r.first_col[(size_t)(s->L + l) * MAXH * T + h * T]), absent);
            assert_int_equal(isnan(r.key_alpha[lh * T]), absent);
            assert_int_equal(isnan(r.gate_channel_mean[lh]), absent);
            if (absent) continue;
            assert_float_equal(r.alpha0[lh], alpha, 1e-6);
            assert_float_equal(r.gate_channel_mean[lh], 0.25 + 0.125 * h, 1e-9);
        }
    /* layer 1's scores: channels 0 and 1 only */
    assert_float_equal(r.gate_stats[1 * RS_GATE_NSTATS], (0.25 + 0.375) / 2, 1e-9);
    assert_float_equal(r.gate_stats[1 * RS_GATE_NSTATS + 3], (double)s->N * T * 2, 0);
    runread_probe_free(&r);
    probe_acc_free(&a);
}

/* Gate channels that are no multiple of the query heads (C = 1 of one
 * score per position, C = Hkv < H of a per-KV-head gate), every layer
 * all C of them: each channel's mean is the mean of the scores fed to it,
 * summed here over positions and sequences. */
static void check_channel_means(int L, int H, int N, int T, int C) {
    const ProbeShape s = {.L = L, .H = H, .N = N, .T = T, .M = T, .C = C, .d = 2, .threads = 1};
    enum { MAXH = 4, MAXT = 4, MAXC = 2 };
    assert_true(H <= MAXH && T <= MAXT && C <= MAXC);
    float cols[MAXH * MAXT], maps[MAXH * MAXT * MAXT], gates[MAXT * MAXC], hidden[MAXT * 2];
    for (int h = 0; h < H; h++)
        for (int t = 0; t < T; t++) {
            cols[h * T + t] = 1.0f / (float)(t + 1);
            for (int j = 0; j < T; j++) maps[(h * T + t) * T + j] = j <= t ? 1.0f / (t + 1) : 0;
        }
    for (int i = 0; i < T * 2; i++) hidden[i] = 1.0f + (float)i;
    double want[2 * MAXC] = {0};
    ProbeAcc a;
    assert_int_equal(probe_acc_init(&a, &s), 0);
    for (int seq = 0; seq < N; seq++)
        for (int l = 0; l < L; l++) {
            for (int t = 0; t < T; t++)
                for (int c = 0; c < C; c++) {
                    gates[t * C + c] = 0.125f * (float)(1 + c + l) + 0.0625f * (float)(t + seq);
                    want[l * C + c] += gates[t * C + c];
                }
            ProbeLayer pl = {.layer = l, .T = T, .H = H, .M = T, .C = C, .d = 2};
            pl.first_col = cols, pl.maps = maps, pl.hidden = hidden;
            pl.gates = gates, pl.gate_stride = C;
            probe_acc_layer(&a, seq, &pl);
        }
    ProbeRecord r;
    probe_acc_finish(&a, &r);
    for (int i = 0; i < L * C; i++)
        if (fabs(r.gate_channel_mean[i] - want[i] / (N * T)) > 1e-6)
            fail_msg("C %d, H %d: gate_channel_mean[%d] %g, the scores' mean %g", C, H, i,
                     r.gate_channel_mean[i], want[i] / (N * T));
    runread_probe_free(&r);
    probe_acc_free(&a);
}

static void test_channels_not_per_head(void **state) {
    (void)state;
    check_channel_means(2, 2, 2, 3, 1); /* one score, two heads */
    check_channel_means(1, 4, 3, 4, 2); /* per KV head: Hkv = 2 of 4 heads */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bytes_match_plan), cmocka_unit_test(test_every_array_has_accumulator),
        cmocka_unit_test(test_absent_heads), cmocka_unit_test(test_channels_not_per_head)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
