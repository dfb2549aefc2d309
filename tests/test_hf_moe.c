/* test_hf_moe.c: the mixture-of-experts keys and weights of AFMoE and
 * Laguna beside gpt-oss's (their forward is held to the float64 reference
 * by test_hf_inspect.c and test_hf_archs.c on afmoe-moe-*, laguna-*):
 * Laguna's config keys (its router, RoPE per layer type, softplus gate
 * recorded unbounded, and the layouts it does not read refused naming
 * the key); each family's
 * router as config.json gives it, the router forms AFMoE's modeling file
 * does not run refused naming the key, a mis-shaped expert tensor named,
 * and the converted weights of a BF16 MoE checkpoint held to its largest
 * layer plus one expert's tensors in float32.
 *
 * Fixtures: tests/reference/hf/afmoe-moe-{f32,bf16-sharded}
 * (afmoe_reference.py), laguna-f32 (laguna_reference.py). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hf_config.h"
#include "hf_inspect_fixture.h"
#include "hf_model.h"
#include "testutil.h"

/* gpt-oss: every layer MoE, experts of intermediate_size, softmax over
 * the chosen logits, no shared experts. AFMoE: MoE from num_dense_layers
 * on, experts of moe_intermediate_size, the sigmoid router with
 * expert_bias to choose, renormalised, times route_scale; every layer
 * dense: no experts. */
static void test_routers(void **s) {
    (void)s;
    HfArch a;
    char err[512];
    assert_int_equal(
        hf_parse_tiny(&a, "GptOssForCausalLM", ", \"num_local_experts\": 4", err, sizeof err), 0);
    assert_true(a.moe_from == 0 && a.moe_ff == 64 && a.shared_ff == 0);
    assert_true(a.router.score == HF_SCORE_SOFTMAX_TOPK && !a.router.select_bias);
    assert_true(a.router.scale == 1.0);
    assert_int_equal(
        hf_parse_tiny(&a, "AfmoeForCausalLM",
                      ", \"num_dense_layers\": 2, \"num_experts\": 8, \"num_experts_per_tok\": "
                      "3, \"num_shared_experts\": 1, \"moe_intermediate_size\": 16, "
                      "\"route_scale\": 2.5, \"score_func\": \"sigmoid\", \"route_norm\": true",
                      err, sizeof err),
        0);
    assert_true(a.moe_from == 2 && a.n_experts == 8 && a.top_k == 3 && a.shared_ff == 16);
    assert_true(a.moe_ff == 16 && a.ff == 64);
    assert_true(a.router.score == HF_SCORE_SIGMOID && a.router.select_bias && a.router.renorm);
    assert_true(a.router.scale == 2.5);
    assert_int_equal(
        hf_parse_tiny(&a, "AfmoeForCausalLM", ", \"num_dense_layers\": 3", err, sizeof err), 0);
    assert_int_equal(a.n_experts, 0);
}

/* What AfmoeTokenChoiceRouter does not run, refused naming the key. */
static void test_router_refusals(void **s) {
    (void)s;
    static const struct {
        const char *extra, *want;
    } C[] = {
        {", \"score_func\": \"softmax\"", "change score_func (only \"sigmoid\")"},
        {", \"route_norm\": false", "change route_norm (only true)"},
        {", \"n_group\": 2", "change n_group (only 1: no grouped top-k)"},
        {", \"num_experts\": 4, \"num_experts_per_tok\": 5",
         "num_experts_per_tok 5 must be at most num_experts 4"},
    };
    HfArch a;
    char err[512];
    for (size_t i = 0; i < sizeof C / sizeof *C; i++) {
        assert_int_equal(hf_parse_tiny(&a, "AfmoeForCausalLM", C[i].extra, err, sizeof err), -1);
        if (!strstr(err, C[i].want)) fail_msg("%s: got \"%s\"", C[i].extra, err);
        assert_null(strchr(err, '\n'));
    }
    /* the same keys on a checkpoint whose every layer is dense: no router */
    assert_int_equal(hf_parse_tiny(&a, "AfmoeForCausalLM",
                                   ", \"num_dense_layers\": 3, \"score_func\": \"softmax\"", err,
                                   sizeof err),
                     0);
}

/* afmoe-moe-f32 under a config whose experts are wider and have no shared
 * ones: the first routed expert's gate_proj named, in one line. */
static void test_expert_shape(void **s) {
    (void)s;
    char fix[2048], *cfg, *p;
    snprintf(fix, sizeof fix, "%s/tests/reference/hf/afmoe-moe-f32", tu_src());
    cfg = tu_slurp_ok(tu_join(fix, "config.json"), NULL);
    assert_non_null(p = strstr(cfg, "\"moe_intermediate_size\": 16"));
    memcpy(p + strlen("\"moe_intermediate_size\": "), "17", 2);
    assert_non_null(p = strstr(cfg, "\"num_shared_experts\": 1"));
    p[strlen("\"num_shared_experts\": ")] = '0';
    hf_refused_under(fix, cfg,
                     "model.layers.1.mlp.experts.0.gate_proj.weight: shape [16,32], but "
                     "config.json implies [17,32]");
    free(cfg);
}

static long long key(json_t *c, const char *k) {
    json_t *v = json_object_get(c, k);
    assert_true(json_is_integer(v));
    return json_integer_value(v);
}

/* afmoe-moe-bf16-sharded: every tensor BF16, so the converted weights are
 * the largest layer's tensors (a dense layer: the SwiGLU of
 * intermediate_size; an MoE layer: router, expert_bias, the shared
 * experts) plus one routed expert's gate, up and down, in float32. */
static void test_expert_memory(void **s) {
    (void)s;
    char fix[2048], err[512];
    snprintf(fix, sizeof fix, "%s/tests/reference/hf/afmoe-moe-bf16-sharded", tu_src());
    json_error_t je;
    json_t *c = json_load_file(tu_join(fix, "config.json"), 0, &je);
    assert_non_null(c);
    const long long d = key(c, "hidden_size"), H = key(c, "num_attention_heads"),
                    kv = key(c, "num_key_value_heads"), dh = key(c, "head_dim"),
                    ff = key(c, "intermediate_size"), mf = key(c, "moe_intermediate_size"),
                    E = key(c, "num_experts"), ns = key(c, "num_shared_experts");
    json_decref(c);
    const long long attn = 4 * d + 2 * H * dh * d + 2 * kv * dh * d + d * H * dh + 2 * dh;
    const long long dense = attn + 3 * d * ff, moe = attn + E * d + E + 3 * d * ns * mf;
    const long long want = (dense > moe ? dense : moe) + 3 * d * mf;
    HfModel *m;
    assert_int_equal(hf_model_open(&m, fix, 1, err, sizeof err), 0);
    size_t weights, buffers, probe;
    hf_model_pass_bytes(m, 1, 1, 10, 10, &weights, &buffers, &probe);
    assert_int_equal(weights, (size_t)want * sizeof(float));
    hf_model_close(m);
}

/* LagunaConfig's defaults and keys: head_dim 128, 8 KV heads, one query
 * head count from num_attention_heads_per_layer, RoPE on half the dims at
 * 500000 (full layers) and all of them at 10000 (sliding layers), the
 * softplus gate of g_proj one score a head, layer 0 dense and the others
 * MoE, the sigmoid router with the correction bias, renormalised, the
 * routed sum times moe_routed_scaling_factor, the logit soft cap, one
 * shared expert of its own width. */
static void test_laguna_keys(void **s) {
    (void)s;
    HfArch a;
    char err[512];
    assert_int_equal(
        hf_parse_tiny(&a, "LagunaForCausalLM",
                      ", \"num_attention_heads_per_layer\": [6, 6, 6], \"layer_types\": "
                      "[\"sliding_attention\", \"sliding_attention\", \"full_attention\"], "
                      "\"moe_routed_scaling_factor\": 2.5, \"moe_router_logit_softcapping\": "
                      "3.0, \"shared_expert_intermediate_size\": 24, \"gating\": \"per-head\"",
                      err, sizeof err),
        0);
    assert_true(a.family == HF_LAGUNA && a.H == 6 && a.Hkv == 2 && a.dh == 128 && !a.tied);
    assert_true(a.rotary_dim == 64 && a.rotary_dim_local == 128);
    assert_true(a.rope_theta == 10000.0 && a.rope_local_theta == 10000.0); /* rope_theta given */
    assert_true(a.sliding_window == 512 && a.sliding_period == 3 && a.eps == 1e-6);
    assert_true(a.gate == HF_GATE_HEADWISE && a.gate_softplus && a.qk_norm);
    assert_string_equal(hf_gate_name(&a), "g_proj-headwise-softplus");
    assert_true(a.moe_from == 1 && a.n_experts == 256 && a.top_k == 8 && a.moe_ff == 512);
    assert_true(a.shared_ff == 24 && a.router.score == HF_SCORE_SIGMOID && a.router.select_bias);
    assert_true(a.router.renorm && a.router.scale == 2.5 && a.router.softcap == 3.0);
    /* no rope_parameters nor rope_theta: LagunaConfig's bases; every layer dense: no experts */
    const char *dense = "\"mlp_layer_types\": [\"dense\", \"dense\", \"dense\"]";
    char json[1024];
    snprintf(json, sizeof json,
             "{\"architectures\": [\"LagunaForCausalLM\"], \"num_hidden_layers\": 3, "
             "\"layer_types\": [\"sliding_attention\", \"full_attention\", "
             "\"sliding_attention\"], %s}",
             dense);
    assert_int_equal(hf_config_parse(&a, json, strlen(json), "config.json", err, sizeof err), 0);
    assert_true(a.rope_theta == 500000.0 && a.rope_local_theta == 10000.0 && a.H == 48);
    assert_true(a.n_experts == 0 && a.d == 2048 && a.V == 100352);
    assert_false(hf_heads_vary(&a));
    /* each layer's own query heads, the largest the model's H */
    assert_int_equal(hf_parse_tiny(&a, "LagunaForCausalLM",
                                   ", \"num_attention_heads_per_layer\": [4, 8, 6]", err,
                                   sizeof err),
                     0);
    assert_true(a.H == 8 && a.Hkv == 2 && hf_heads_vary(&a));
    assert_true(hf_layer_heads(&a, 0) == 4 && hf_layer_heads(&a, 1) == 8 &&
                hf_layer_heads(&a, 2) == 6);
    assert_true(hf_q_rows(&a) == 8 * a.dh);
}

/* What modeling_laguna.py at commit ca5ff0b does not run, or gatelab
 * does not hold, refused in one line naming the key. */
static void test_laguna_refusals(void **s) {
    (void)s;
    static const struct {
        const char *extra, *want;
    } C[] = {
        {", \"num_attention_heads_per_layer\": [4, 0, 4]",
         "change num_attention_heads_per_layer (each a count in [1, 4096])"},
        {", \"num_attention_heads_per_layer\": [4, 3, 4]",
         "layer 1's 3 attention heads are not a multiple of 2 key/value heads"},
        {", \"num_attention_heads_per_layer\": [4, 4]", "change num_attention_heads_per_layer"},
        {", \"mlp_layer_types\": [\"sparse\", \"dense\", \"sparse\"]",
         "change mlp_layer_types (gatelab reads the dense layers first"},
        {", \"gating\": \"per-element\"", "change gating (only true or \"per-head\""},
        {", \"moe_apply_router_weight_on_input\": true", "change moe_apply_router_weight_on_input"},
        {", \"rope_parameters\": {\"rope_type\": \"default\", \"rope_theta\": 1e4}",
         "change rope_parameters (one entry"},
        {", \"num_experts\": 4, \"num_experts_per_tok\": 5",
         "num_experts_per_tok 5 must be at most num_experts 4"},
    };
    HfArch a;
    char err[512];
    for (size_t i = 0; i < sizeof C / sizeof *C; i++) {
        assert_int_equal(hf_parse_tiny(&a, "LagunaForCausalLM", C[i].extra, err, sizeof err), -1);
        if (!strstr(err, C[i].want)) fail_msg("%s: got \"%s\"", C[i].extra, err);
        assert_null(strchr(err, '\n'));
    }
}

/* laguna-f32's probe records: the softplus scores as gate scores of H
 * heads, unbounded (a report shows no share of scores under 0.1). */
static void test_laguna_probe_attrs(void **s) {
    (void)s;
    char fix[2048], err[512];
    snprintf(fix, sizeof fix, "%s/tests/reference/hf/laguna-f32", tu_src());
    HfModel *m;
    assert_int_equal(hf_model_open(&m, fix, 1, err, sizeof err), 0);
    ProbeRecord p;
    memset(&p, 0, sizeof p);
    hf_model_probe_attrs(m, &p);
    assert_true(p.gate_heads == 4 && !p.gate_bounded);
    hf_model_close(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_laguna_keys),        cmocka_unit_test(test_laguna_refusals),
        cmocka_unit_test(test_laguna_probe_attrs), cmocka_unit_test(test_routers),
        cmocka_unit_test(test_router_refusals),    cmocka_unit_test(test_expert_shape),
        cmocka_unit_test(test_expert_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
