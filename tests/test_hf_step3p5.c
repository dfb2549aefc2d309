/* test_hf_step3p5.c: Step3p5ForCausalLM (Step-3.5-Flash) as StepFun's
 * modeling (modeling_step3p7.py) runs it: its config keys (per-layer
 * lists normalised as the file does, the sliding layers' own query heads,
 * RoPE per layer type, (1 + w) norms, the head-wise sigmoid gate of
 * g_proj, dense then MoE layers, both routers, the SwiGLU limits clamped
 * after SiLU on the routed experts, the shared expert and the dense
 * MLP), what gatelab does
 * not run refused in one line naming the key, and the tiny checkpoints
 * held to the float64 reference (test_hf_archs.c reruns them through
 * eval, intervene, stream, probe and quant).
 *
 * Fixtures: tests/reference/hf/step3p5-f32 (stacked experts, sigmoid
 * router with router_bias, rope_theta and partial_rotary_factors lists)
 * and step3p5-legacy-bf16 (the legacy 3-D expert names, the softmax
 * router) and step3p5-heads-f32 (sliding layers with 6 query heads, the
 * full one 4), from step3p5_reference.py, whose limits cut values. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "hf_config.h"
#include "hf_inspect_fixture.h"
#include "hf_steps.h" /* hf_layer_window */

#define STEP "Step3p5ForCausalLM"
#define SLIDING                                                                                    \
    ", \"layer_types\": [\"sliding_attention\", \"full_attention\", \"sliding_attention\"], "      \
    "\"sliding_window\": 4, "                                                                      \
    "\"attention_other_setting\": {\"num_attention_heads\": 4, \"num_attention_groups\": 2}"

/* hf_config_parse of a tiny Step-3.5 config (hidden size 32, 3 layers,
 * 4 heads, 2 key/value groups, MLP 64, vocabulary 128) with the extra
 * keys `extra` (", ..." or ""). */
static int step_parse(HfArch *a, const char *extra, char *err, size_t errlen) {
    char json[2048];
    snprintf(json, sizeof json,
             "{\"architectures\": [\"" STEP "\"], \"hidden_size\": 32, \"num_hidden_layers\": 3,"
             " \"num_attention_heads\": 4, \"num_attention_groups\": 2, \"intermediate_size\": 64,"
             " \"vocab_size\": 128%s}",
             extra);
    return hf_config_parse(a, json, strlen(json), "config.json", err, errlen);
}

/* The keys as Step3p7TextConfig reads them: num_attention_groups over
 * num_key_value_heads, layer_types extended with its last entry, a
 * per-layer rope_theta list and partial_rotary_factors per layer type,
 * the sparse layers of moe_layers_enum (a string), the limits normalised
 * (the shared ones those of the dense MLP and the shared expert), the
 * router of use_moe_router_bias. */
static void test_step3p5_keys(void **s) {
    (void)s;
    HfArch a;
    char err[512];
    if (step_parse(&a,
                   SLIDING ", \"rope_theta\": [1e4, "
                           "5e5, 1e4], \"partial_rotary_factors\": [0.5], "
                           "\"moe_layers_enum\": \"1, 2\", \"use_moe_router_bias\":"
                           " true, \"swiglu_limits\": [0, 7], "
                           "\"swiglu_limits_shared\": [16], "
                           "\"use_head_wise_attn_gate\": true",
                   err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_true(a.family == HF_STEP3P5 && a.H == 4 && a.Hkv == 2 && a.dh == 128 && a.eps == 1e-5);
    assert_true(a.norm_plus1 && a.qk_norm == 1 && !a.qkv_bias && !a.tied);
    assert_true(a.sliding_window == 4 && a.slides_listed && a.sliding_layers == 2);
    assert_true(a.rope_theta == 5e5 && a.rotary_dim == 64);             /* layer 1, full */
    assert_true(a.rope_local_theta == 1e4 && a.rotary_dim_local == 64); /* [0.5] extended */
    assert_true(a.gate == HF_GATE_HEADWISE && !a.gate_softplus);
    assert_string_equal(hf_gate_name(&a), "g_proj-headwise-sigmoid");
    assert_true(a.moe_from == 1 && a.n_experts == 288 && a.top_k == 8 && a.moe_ff == 1280);
    assert_true(a.shared_ff == 1280 && a.router.score == HF_SCORE_SIGMOID);
    assert_true(a.router.select_bias && a.router.renorm && a.router.scale == 1.0);
    assert_true(a.swiglu_limit[0] == 0 && a.swiglu_limit[1] == 7 && a.swiglu_limit[2] == 7);
    assert_true(a.swiglu_limit_shared[0] == 16 && a.swiglu_limit_shared[2] == 16);
    /* no layer_types and no attention_other_setting: every layer full; no
     * moe_layers_enum: layer 3 on sparse (none of 3); the softmax router */
    assert_int_equal(step_parse(&a, "", err, sizeof err), 0);
    assert_true(!a.sliding_layers && !a.sliding_window && a.n_experts == 0 && a.moe_from == 3);
    assert_int_equal(step_parse(&a, ", \"moe_layers_enum\": [2]", err, sizeof err), 0);
    assert_true(a.moe_from == 2 && a.router.score == HF_SCORE_SOFTMAX && !a.router.renorm);
    /* rope_scaling on the full layers only (yarn_only_types) */
    assert_int_equal(step_parse(&a,
                                SLIDING ", \"rope_scaling\": {\"rope_type\": \"linear\", "
                                        "\"factor\": 2.0}, \"yarn_only_types\": "
                                        "[\"full_attention\"]",
                                err, sizeof err),
                     0);
    assert_true(a.rope_type == HF_ROPE_LINEAR && a.rope_local_theta == 1e4);
}

/* attention_other_setting.num_attention_heads: the sliding layers' query
 * heads, the full layers num_attention_heads, a->H the larger of the two
 * whichever the sliding layers have. */
static void test_step3p5_sliding_heads(void **s) {
    (void)s;
    static const int other[] = {8, 2};
    HfArch a;
    char err[512], extra[512];
    for (int i = 0; i < 2; i++) {
        snprintf(extra, sizeof extra,
                 ", \"layer_types\": [\"sliding_attention\", \"full_attention\", "
                 "\"sliding_attention\"], \"sliding_window\": 4, \"attention_other_setting\": "
                 "{\"num_attention_heads\": %d, \"num_attention_groups\": 2}",
                 other[i]);
        if (step_parse(&a, extra, err, sizeof err) != 0) fail_msg("%s", err);
        const int most = other[i] > 4 ? other[i] : 4;
        assert_int_equal(a.H, most);
        assert_int_equal(hf_layer_heads(&a, 0), other[i]);
        assert_int_equal(hf_layer_heads(&a, 1), 4);
        assert_int_equal(hf_layer_heads(&a, 2), other[i]);
    }
}

/* Any layer_types pattern reads, each layer masked by its own window (as
 * the run file records it per layer), the sliding layers at
 * attention_other_setting's heads; a shorter list extended with its last
 * entry. */
static void test_step3p5_layouts(void **s) {
    (void)s;
    static const struct {
        const char *types;
        int slides[3];
    } C[] = {
        {"\"full_attention\", \"sliding_attention\", \"full_attention\"", {0, 1, 0}},
        {"\"full_attention\", \"sliding_attention\"", {0, 1, 1}},
        {"\"sliding_attention\", \"sliding_attention\", \"full_attention\"", {1, 1, 0}},
    };
    HfArch a;
    char err[512], extra[512];
    for (size_t i = 0; i < sizeof C / sizeof *C; i++) {
        snprintf(extra, sizeof extra,
                 ", \"layer_types\": [%s], \"sliding_window\": 4, \"attention_other_setting\": "
                 "{\"num_attention_heads\": 6, \"num_attention_groups\": 2}",
                 C[i].types);
        if (step_parse(&a, extra, err, sizeof err) != 0) fail_msg("%s: %s", C[i].types, err);
        int n = 0;
        for (int l = 0; l < 3; l++) {
            n += C[i].slides[l];
            assert_int_equal(hf_layer_window(&a, l), C[i].slides[l] ? 4 : 0);
            assert_int_equal(hf_layer_heads(&a, l), C[i].slides[l] ? 6 : 4);
        }
        assert_true(a.sliding_layers == n && a.sliding_period == 0 && a.H == 6);
        assert_int_equal(hf_record_window(&a), 0);
    }
}

/* What the file defines and gatelab does not run, refused naming the key. */
static void test_step3p5_refusals(void **s) {
    (void)s;
    static const HfRefusal C[] = {
        {", \"layer_types\": [\"sliding_attention\"], \"sliding_window\": 4, "
         "\"attention_other_setting\": {\"num_attention_heads\": 5, \"num_attention_groups\": 2}",
         "layer 0's 5 attention heads are not a multiple of 2 key/value heads: change "
         "attention_other_setting.num_attention_heads"},
        {", \"layer_types\": [\"sliding_attention\"], \"sliding_window\": 4, "
         "\"attention_other_setting\": {\"num_attention_groups\": 2}",
         "attention_other_setting"},
        {", \"layer_types\": [\"sliding_attention\"], \"sliding_window\": 4, "
         "\"attention_other_setting\": {\"num_attention_heads\": 4, \"num_attention_groups\": 1}",
         "change attention_other_setting.num_attention_groups"},
        {", \"layer_types\": [\"sliding_attention\"], \"sliding_window\": 4, "
         "\"attention_other_setting\": {\"num_attention_heads\": 4, \"num_attention_groups\": 2, "
         "\"head_dim\": 64}",
         "change attention_other_setting.head_dim"},
        {", \"layer_types\": [\"sliding_attention\"]", "change sliding_window"},
        {", \"rope_theta\": [1e4, 5e5]", "change rope_theta or partial_rotary_factors"},
        {SLIDING ", \"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 2.0}",
         "change rope_scaling or yarn_only_types"},
        {", \"mlp_layer_types\": [\"sparse\", \"dense\"]",
         "change mlp_layer_types or moe_layers_enum (gatelab reads the dense layers first"},
        {", \"moe_layers_enum\": \"1,x\"",
         "change moe_layers_enum (layer numbers separated by commas)"},
        {", \"moe_layers_enum\": \"1x\"",
         "change moe_layers_enum (layer numbers separated by commas)"},
        {", \"moe_layers_enum\": \"-1,2\"",
         "change moe_layers_enum (it names layer -1; the layers"},
        {", \"moe_layers_enum\": \"1,2,3\"",
         "change moe_layers_enum (it names layer 3; the layers"},
        {", \"moe_layers_enum\": [2, 7]", "change moe_layers_enum (it names layer 7; the layers"},
        {", \"swiglu_limits\": [-1]",
         "change swiglu_limits (a list of numbers >= 0 or null, one per layer)"},
        {", \"swiglu_limits_shared\": \"7\"",
         "change swiglu_limits_shared (a list of numbers >= 0 or null, one per layer)"},
        {", \"moe_layers_enum\": [1, 2], \"moe_num_experts\": 4, \"moe_top_k\": 5",
         "moe_top_k 5 must be at most moe_num_experts 4"},
    };
    hf_refusals(step_parse, C, sizeof C / sizeof *C);
}

/* The tiny checkpoints within HF_TOL of the float64 reference. */
static void test_step3p5_fixtures(void **s) {
    (void)s;
    hf_check_fixture("step3p5-f32");
    hf_check_fixture("step3p5-legacy-bf16");
    hf_check_fixture("step3p5-heads-f32");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_step3p5_keys),     cmocka_unit_test(test_step3p5_sliding_heads),
        cmocka_unit_test(test_step3p5_layouts),  cmocka_unit_test(test_step3p5_refusals),
        cmocka_unit_test(test_step3p5_fixtures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
