/* test_hf_moe.c: the mixture-of-experts keys and weights of AFMoE and
 * Laguna beside gpt-oss's (their forward is held to the float64 reference
 * by test_hf_inspect.c and test_hf_archs.c on afmoe-moe-*, laguna-*):
 * Laguna's config keys (its router, RoPE per layer type, softplus gate
 * recorded unbounded, and the layouts it does not read refused naming
 * the key; its stacked experts and published tensor names held to the
 * float64 reference); each family's
 * router as config.json gives it (AFMoE's softmax and unnormalised
 * forms held to the float64 reference), the router forms no AFMoE
 * modeling file runs refused naming the key, a mis-shaped expert tensor named,
 * the converted weights of a BF16 MoE checkpoint held to its largest
 * layer plus one expert's tensors in float32, and the per-layer SwiGLU
 * limits of the routed and shared experts.
 *
 * Fixtures: tests/reference/hf/afmoe-moe-{f32,bf16-sharded,softmax-f32,
 * nonorm-bf16} (afmoe_reference.py), laguna-f32, laguna-stacked-{f32,bf16}
 * (laguna_reference.py). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hf_config.h"
#include "hf_inspect_fixture.h"
#include "hf_model.h"
#include "hf_steps.h" /* hf_glu_act */
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
    /* the Trinity router's other forms: the softmax over all experts, never
     * renormalised; the sigmoid without route_norm */
    const char *moe = ", \"num_dense_layers\": 1, \"num_experts\": 8, \"n_group\": 1";
    char extra[256];
    snprintf(extra, sizeof extra, "%s, \"score_func\": \"softmax\", \"route_norm\": true", moe);
    assert_int_equal(hf_parse_tiny(&a, "AfmoeForCausalLM", extra, err, sizeof err), 0);
    assert_true(a.router.score == HF_SCORE_SOFTMAX && a.router.select_bias && !a.router.renorm);
    snprintf(extra, sizeof extra, "%s, \"route_norm\": false", moe);
    assert_int_equal(hf_parse_tiny(&a, "AfmoeForCausalLM", extra, err, sizeof err), 0);
    assert_true(a.router.score == HF_SCORE_SIGMOID && a.router.select_bias && !a.router.renorm);
}

static int afmoe_parse(HfArch *a, const char *extra, char *err, size_t errlen) {
    return hf_parse_tiny(a, "AfmoeForCausalLM", extra, err, errlen);
}

static int laguna_parse(HfArch *a, const char *extra, char *err, size_t errlen) {
    return hf_parse_tiny(a, "LagunaForCausalLM", extra, err, errlen);
}

/* What no AFMoE router runs, refused naming the key. */
static void test_router_refusals(void **s) {
    (void)s;
    static const HfRefusal C[] = {
        {", \"score_func\": \"tanh\"", "change score_func (\"sigmoid\" or \"softmax\")"},
        {", \"score_func\": 1", "change score_func"},
        {", \"n_group\": 2, \"topk_group\": 1",
         "change n_group (only 1: modeling_afmoe.py selects no"},
        {", \"num_experts\": 4, \"num_experts_per_tok\": 5",
         "num_experts_per_tok 5 must be at most num_experts 4"},
    };
    hf_refusals(afmoe_parse, C, sizeof C / sizeof *C);
    /* the same keys on a checkpoint whose every layer is dense: no router */
    HfArch a;
    char err[512];
    assert_int_equal(
        afmoe_parse(&a, ", \"num_dense_layers\": 3, \"score_func\": \"softmax\"", err, sizeof err),
        0);
}

/* The Trinity router's other forms against the float64 reference:
 * afmoe-moe-softmax-f32 (score_func "softmax"), afmoe-moe-nonorm-bf16
 * (the sigmoid scores without route_norm, BF16). */
static void test_router_forms(void **s) {
    (void)s;
    hf_check_fixture("afmoe-moe-softmax-f32");
    hf_check_fixture("afmoe-moe-nonorm-bf16");
}

/* Laguna's experts stacked as transformers' LagunaExperts holds them
 * (gate_up_proj [E, 2 moe_ff, d], down_proj [E, d, moe_ff]) with the
 * correction bias under mlp.experts. and the shared expert under
 * mlp.shared_expert. (the names of Poolside's published checkpoints),
 * against the float64 reference; a mis-shaped stacked tensor named. */
static void test_laguna_stacked(void **s) {
    (void)s;
    hf_check_fixture("laguna-stacked-f32");
    hf_check_fixture("laguna-stacked-bf16");
    hf_refused_edited("laguna-stacked-f32",
                      "model.layers.1.mlp.experts.gate_up_proj: shape [4,32,32], but config.json "
                      "implies [4,34,32]",
                      "\"moe_intermediate_size\": 16", "\"moe_intermediate_size\": 17", NULL);
}

/* The clamped SwiGLU against its definition in double: min(silu(g), c)
 * * clamp(u, -c, c); c 0: silu(g) * u. */
static void test_clamped_glu(void **s) {
    (void)s;
    enum { N = 97 };
    float up[N], gate[N], u0[N], g0[N];
    for (int lim = 0; lim < 2; lim++) {
        const float c = lim ? 0.9f : 0.0f;
        for (int i = 0; i < N; i++)
            u0[i] = up[i] = (float)(i % 13) * 0.6f - 3.5f, g0[i] = gate[i] = (float)i / 6.0f - 8.0f;
        hf_glu_act(HF_ACT_SILU, up, gate, N, c);
        for (int i = 0; i < N; i++) {
            const double sg = g0[i] / (1.0 + exp(-(double)g0[i]));
            const double want = c > 0 ? fmin(sg, c) * fmax(fmin(u0[i], c), -c) : sg * u0[i];
            if (fabs(up[i] - want) > 1e-6 * (1 + fabs(want)))
                fail_msg("limit %g, value %d: %g, not %g", c, i, up[i], want);
        }
    }
}

/* m's logits [10, V] of ten fixed tokens with only layer `layer`'s
 * routed and shared SwiGLU limits set (malloc'd). */
static float *limited_logits(HfModel *m, int layer, float routed, float shared) {
    HfArch *a = (HfArch *)hf_model_arch(m); /* the limits no config key sets yet */
    memset(a->swiglu_limit, 0, sizeof a->swiglu_limit);
    memset(a->swiglu_limit_shared, 0, sizeof a->swiglu_limit_shared);
    a->swiglu_limit[layer] = routed, a->swiglu_limit_shared[layer] = shared;
    static const int32_t ids[10] = {3, 17, 42, 9, 88, 120, 5, 64, 31, 77};
    float *lg = malloc(sizeof(float) * 10 * (size_t)a->V);
    char err[512];
    HfRun run = {.logits = lg};
    assert_non_null(lg);
    if (hf_model_forward(m, ids, 10, &run, err, sizeof err) != 0) fail_msg("%s", err);
    return lg;
}

static double max_diff(const float *x, const float *y, size_t n) {
    double d = 0;
    for (size_t i = 0; i < n; i++) d = fmax(d, fabs((double)x[i] - y[i]));
    return d;
}

/* afmoe-moe-f32 (layer 0 dense, 1 and 2 MoE with a shared expert) under
 * per-layer SwiGLU limits set on its architecture: a routed limit on the
 * dense layer and limits above every activation leave the logits; the
 * dense layer's shared limit (its MLP's clamp), a routed limit on layer 1
 * and a shared one on layer 2 each move them. */
static void test_layer_limits(void **s) {
    (void)s;
    char fix[2048], err[512];
    snprintf(fix, sizeof fix, "%s/tests/reference/hf/afmoe-moe-f32", tu_src());
    HfModel *m;
    assert_int_equal(hf_model_open(&m, fix, 1, err, sizeof err), 0);
    const size_t n = 10 * (size_t)hf_model_arch(m)->V;
    float *base = limited_logits(m, 0, 0.0f, 0.0f), *lg;
    assert_true(max_diff(base, lg = limited_logits(m, 0, 0.01f, 0.0f), n) == 0.0);
    free(lg);
    assert_true(max_diff(base, lg = limited_logits(m, 0, 0.0f, 0.05f), n) > 1e-3);
    free(lg);
    assert_true(max_diff(base, lg = limited_logits(m, 1, 1e30f, 1e30f), n) < 1e-5);
    free(lg);
    assert_true(max_diff(base, lg = limited_logits(m, 1, 0.05f, 0.0f), n) > 1e-3);
    free(lg);
    assert_true(max_diff(base, lg = limited_logits(m, 2, 0.0f, 0.05f), n) > 1e-3);
    free(lg);
    free(base);
    hf_model_close(m);
}

/* afmoe-moe-f32 under a config whose experts are wider and have no shared
 * ones: the first routed expert's gate_proj named, in one line. */
static void test_expert_shape(void **s) {
    (void)s;
    hf_refused_edited("afmoe-moe-f32",
                      "model.layers.1.mlp.experts.0.gate_proj.weight: shape [16,32], but "
                      "config.json implies [17,32]",
                      "\"moe_intermediate_size\": 16", "\"moe_intermediate_size\": 17",
                      "\"num_shared_experts\": 1", "\"num_shared_experts\": 0", NULL);
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
    static const HfRefusal C[] = {
        {", \"num_attention_heads_per_layer\": [4, 0, 4]",
         "change num_attention_heads_per_layer (each a count in [1, 4096])"},
        {", \"num_attention_heads_per_layer\": [4, 3, 4]",
         "layer 1's 3 attention heads are not a multiple of 2 key/value heads: change "
         "num_attention_heads_per_layer"},
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
    hf_refusals(laguna_parse, C, sizeof C / sizeof *C);
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
        cmocka_unit_test(test_expert_memory),      cmocka_unit_test(test_router_forms),
        cmocka_unit_test(test_laguna_stacked),     cmocka_unit_test(test_clamped_glu),
        cmocka_unit_test(test_layer_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
