/* test_hf_mimo.c: MiMoV2FlashForCausalLM (Xiaomi's MiMo-V2-Flash) as vLLM's
 * mimo_v2_flash.py runs it: its config keys (hybrid_layer_pattern with
 * the sliding layers' own heads and RoPE base, a value head dim below
 * the query/key one, attention_value_scale, the sliding layers' sink
 * biases, moe_layer_freq and the sigmoid router), what gatelab does not
 * run refused in one line naming the key, and the tiny checkpoints held
 * to the float64 reference, the sinks' share of each row included
 * (test_hf_archs.c reruns them through eval, intervene, stream, probe and
 * quant); an inspected mimo-f32's uniform reference counts each
 * layer's own slots.
 *
 * Fixtures: tests/reference/hf/mimo-f32 (full layer 0, sliding layers 1
 * and 2 with more heads, MoE layers 1 and 2) and mimo-bf16 (the full
 * layer third of four), from mimo_reference.py. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hdf5.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forward_open.h"
#include "hf_config.h"
#include "hf_inspect_fixture.h"
#include "runfile_read.h"
#include "runstats.h"
#include "testutil.h"

#define LEN 40 /* the inspected window: the fixture's tokens first */

/* hf_config_parse of a tiny MiMo config (hidden size 32, 3 layers, 4
 * heads on 1 KV head, head dim 12, MLP 48, vocabulary 128, RoPE
 * base 5e6) with
 * the extra keys `extra` (", ..." or ""). */
static int mimo_parse(HfArch *a, const char *extra, char *err, size_t errlen) {
    char json[2048];
    snprintf(json, sizeof json,
             "{\"architectures\": [\"MiMoV2FlashForCausalLM\"], \"hidden_size\": 32,"
             " \"num_hidden_layers\": 3, \"num_attention_heads\": 4, \"num_key_value_heads\": 1,"
             " \"head_dim\": 12, \"intermediate_size\": 48,"
             " \"vocab_size\": 128, \"rope_theta\": 5e6%s}",
             extra);
    return hf_config_parse(a, json, strlen(json), "config.json", err, errlen);
}

#define HYBRID                                                                                     \
    ", \"hybrid_layer_pattern\": [1, 0, 1], \"swa_num_attention_heads\": 6, "                      \
    "\"swa_num_key_value_heads\": 2, \"sliding_window_size\": 4, \"swa_rope_theta\": 1e4, "        \
    "\"v_head_dim\": 8, \"swa_head_dim\": 12, \"swa_v_head_dim\": 8, "                             \
    "\"add_swa_attention_sink_bias\": true"
#define MOE                                                                                        \
    ", \"moe_layer_freq\": [0, 1, 1], \"n_routed_experts\": 8, \"num_experts_per_tok\": 2, "       \
    "\"moe_intermediate_size\": 16"

/* The keys as vLLM reads them: each layer's heads, KV heads, window and
 * base by hybrid_layer_pattern; sinks on the sliding layers only. */
static void test_mimo_keys(void **s) {
    (void)s;
    HfArch a;
    char err[512];
    if (mimo_parse(&a,
                   HYBRID MOE ", \"partial_rotary_factor\": 0.334, \"attention_value_scale\": "
                              "0.707, \"layernorm_epsilon\": 1e-5, \"n_group\": 1, "
                              "\"topk_group\": 1, \"scoring_func\": \"sigmoid\"",
                   err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_true(a.family == HF_MIMO && a.H == 6 && a.Hkv == 2 && a.dh == 12 && hf_vdim(&a) == 8);
    assert_true(hf_layer_heads(&a, 0) == 6 && hf_layer_kv(&a, 0) == 2);
    assert_true(hf_layer_heads(&a, 1) == 4 && hf_layer_kv(&a, 1) == 1);
    assert_true(a.slides_listed && a.sliding_layers == 2 && a.sliding_window == 4);
    assert_true(a.rotary_dim == 4 && a.rope_theta == 5e6 && a.rope_local_theta == 1e4);
    assert_true(a.v_scale == 0.707f && a.eps == 1e-5 && !a.tied && !a.o_bias);
    assert_true(a.sinks && hf_layer_sinks(&a, 0) && !hf_layer_sinks(&a, 1));
    assert_true(a.moe_from == 1 && a.n_experts == 8 && a.top_k == 2 && a.moe_ff == 16);
    assert_true(a.router.score == HF_SCORE_SIGMOID && a.router.select_bias && a.router.renorm);
    assert_true(a.router.scale == 1.0 && a.shared_ff == 0);
    /* no pattern and no MoE list: every layer full and dense, values at
     * head_dim unless v_head_dim says otherwise, no sinks, no scale */
    assert_int_equal(mimo_parse(&a, ", \"moe_layer_freq\": 1", err, sizeof err), 0);
    assert_true(!a.sliding_layers && !a.sinks && !a.n_experts && a.v_scale == 0.0f);
    assert_true(a.H == 4 && hf_layer_kv(&a, 2) == 1 && a.rotary_dim == 12 && hf_vdim(&a) == 12);
}

/* Each layer's heads checked against its own KV heads only: full layers
 * 4 on 1, sliding 3 on 3 read (the largest counts, 4 and 3, are no
 * multiple); a sliding count off its KV heads refused naming the layer
 * and the swa_ keys. */
static void test_mimo_layer_heads(void **s) {
    (void)s;
    HfArch a;
    char err[512];
    if (mimo_parse(&a,
                   ", \"hybrid_layer_pattern\": [0, 1, 1], \"sliding_window_size\": 4, "
                   "\"swa_num_attention_heads\": 3, \"swa_num_key_value_heads\": 3",
                   err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_true(a.H == 4 && a.Hkv == 3);
    assert_true(hf_layer_heads(&a, 0) == 4 && hf_layer_kv(&a, 0) == 1);
    assert_true(hf_layer_heads(&a, 2) == 3 && hf_layer_kv(&a, 2) == 3);
    assert_int_equal(mimo_parse(&a,
                                ", \"hybrid_layer_pattern\": [0, 1, 1], \"sliding_window_size\": "
                                "4, \"swa_num_attention_heads\": 5, \"swa_num_key_value_heads\": 2",
                                err, sizeof err),
                     -1);
    assert_string_equal(err, "config.json: layer 1's 5 attention heads are not a multiple of 2 "
                             "key/value heads: change swa_num_attention_heads or "
                             "swa_num_key_value_heads");
}

/* Two patterns with as many sliding layers differ by a layer's attention. */
static void test_mimo_pattern_diff(void **s) {
    (void)s;
    HfArch a, b;
    char err[512], what[128];
    const char *w = ", \"sliding_window_size\": 4, \"hybrid_layer_pattern\": ";
    char x[256], y[256];
    snprintf(x, sizeof x, "%s[1, 0, 0]", w);
    snprintf(y, sizeof y, "%s[0, 1, 0]", w);
    if (mimo_parse(&a, x, err, sizeof err) || mimo_parse(&b, y, err, sizeof err))
        fail_msg("%s", err);
    assert_int_equal(hf_arch_diff(&a, &b, what, sizeof what), 1);
    assert_string_equal(what, "layer 0's attention sliding, not full");
    assert_int_equal(hf_arch_diff(&a, &a, what, sizeof what), 0);
}

/* What vLLM's file does otherwise, or gatelab does not run, refused
 * naming the key. */
static void test_mimo_refusals(void **s) {
    (void)s;
    static const HfRefusal C[] = {
        {", \"hybrid_layer_pattern\": [1, 0, 1], \"sliding_window_size\": 4, \"swa_head_dim\": 16, "
         "\"v_head_dim\": 8, "
         "\"swa_v_head_dim\": 8",
         "change swa_head_dim and swa_v_head_dim"},
        /* swa_v_head_dim absent: the sliding layers' values at swa_head_dim */
        {", \"hybrid_layer_pattern\": [1, 0, 1], \"sliding_window_size\": 4, \"v_head_dim\": 8",
         "change swa_head_dim and swa_v_head_dim"},
        {", \"hybrid_layer_pattern\": [1, 0]", "change hybrid_layer_pattern"},
        {", \"hybrid_layer_pattern\": [1, 2, 0], \"sliding_window\": 4",
         "change hybrid_layer_pattern"},
        {", \"v_head_dim\": 16", "change v_head_dim"},
        {", \"add_full_attention_sink_bias\": true", "change add_full_attention_sink_bias"},
        {", \"attention_value_scale\": -1", "change attention_value_scale"},
        {MOE ", \"n_group\": 4, \"topk_group\": 2", "change topk_group"},
        {MOE ", \"n_shared_experts\": 1", "n_shared_experts"},
        {MOE ", \"scoring_func\": \"softmax\"", "change scoring_func"},
        {MOE ", \"routed_scaling_factor\": 2.5", "change routed_scaling_factor"},
        {", \"moe_layer_freq\": [1, 0, 1], \"n_routed_experts\": 8, \"num_experts_per_tok\": 2, "
         "\"moe_intermediate_size\": 16",
         "change moe_layer_freq (gatelab reads the dense layers first"},
        {", \"moe_layer_freq\": [0, 1, 1], \"n_routed_experts\": 2, \"num_experts_per_tok\": 3, "
         "\"moe_intermediate_size\": 16",
         "num_experts_per_tok 3 must be at most n_routed_experts 2"},
        {", \"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 2.0}", "change rope_scaling"},
    };
    hf_refusals(mimo_parse, C, sizeof C / sizeof *C);
}

/* Both tiny checkpoints within HF_TOL of the float64 reference, the
 * sinks' share of each row (slot) with them. */
static void test_mimo_fixtures(void **s) {
    (void)s;
    hf_check_fixture("mimo-f32");
    hf_check_fixture("mimo-bf16");
}

/* docs/metrics.md's uniform reference of one layer, from its definition:
 * query t spreads its weight evenly over its visible keys (the last W of
 * t + 1, all when W is 0) and the layer's s slots, so key 0 gets
 * 1 / (keys + s) while it is visible; the mean over t = 1..T-1. */
static double uniform_layer(int T, int W, int s) {
    double sum = 0.0;
    for (int t = 1; t < T; t++) {
        const int keys = W > 0 && W < t + 1 ? W : t + 1;
        if (W <= 0 || t < W) sum += 1.0 / (keys + s);
    }
    return sum / (T - 1);
}

/* mimo-f32 has sink logits on its sliding layers 1 and 2 only: the run
 * file keeps slots 1 with layer_slots {0, 1, 1}, the Forward counts each
 * layer's own, and the uniform reference of sinks and eval counts no slot
 * on the full layer 0 (the mean of uniform_layer over the layers, each
 * weighted by its query heads as F-Attn weighs it). */
static void test_mimo_layer_slots(void **s) {
    (void)s;
    char fix[2048], path[2200], err[512];
    const char *d = tu_tmpdir(), *log = tu_join(d, "log"), *run = tu_join(d, "run.h5");
    snprintf(fix, sizeof fix, "%s/tests/reference/hf/mimo-f32", tu_src());
    snprintf(path, sizeof path, "%s/expected.h5", fix);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    size_t nt;
    int32_t *t = tu_h5_read_opt(f, "tokens", H5T_NATIVE_INT32, 4, &nt), tok[LEN];
    H5Fclose(f);
    if (!t || nt > LEN) fail_msg("%s: no tokens", path);
    for (int i = 0; i < LEN; i++) tok[i] = i < (int)nt ? t[i] : (i * 37 + 11) % 97;
    free(t);
    hf_write_tokens(tu_join(d, "ids.txt"), tok, LEN, 1);
    assert_int_equal(
        tu_run(log, "inspect %s --tokens %s --out %s -q", fix, tu_join(d, "ids.txt"), run), 0);
    enum { L = 3 };
    /* config.json's layers: the full layer's 4 heads, the sliding ones' 6 */
    const int win[L] = {0, 4, 4}, slots[L] = {0, 1, 1}, heads[L] = {4, 6, 6};
    double share[L], mean = 0.0;
    for (int l = 0; l < L; l++)
        mean += (share[l] = uniform_layer(LEN, win[l], slots[l])) * heads[l] / 16.0;
    RunReader *r = runread_open(run, err, sizeof err);
    if (!r) fail_msg("%s", err);
    ProbeRecord p;
    if (runread_probe(r, -1, &p, err, sizeof err) < 0) fail_msg("%s", err);
    assert_true(p.L == L && p.T == LEN && p.slots == 1 && p.layer_slots && p.attention_slot);
    Config cfg;
    rs_arch_config(r, &cfg);
    for (int l = 0; l < L; l++) {
        assert_int_equal(p.layer_slots[l], slots[l]);
        assert_int_equal(runread_layer_slots(&p, l), slots[l]);
        assert_int_equal(rs_layer_window(r, &cfg, l), win[l]);
    }
    runread_probe_free(&p);
    runread_close(r);
    ForwardOpen fo = {.threads = 2};
    Forward *fw = forward_open(run, &fo, err, sizeof err);
    if (!fw) fail_msg("%s", err);
    for (int l = 0; l < L; l++) assert_int_equal(fw->info.layer_slots[l], slots[l]);
    forward_close(fw);
    hf_check_uniform(run, log, LEN, share, L, mean);
    tu_rmtree(d);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mimo_keys),        cmocka_unit_test(test_mimo_refusals),
        cmocka_unit_test(test_mimo_layer_heads), cmocka_unit_test(test_mimo_pattern_diff),
        cmocka_unit_test(test_mimo_fixtures),    cmocka_unit_test(test_mimo_layer_slots),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
