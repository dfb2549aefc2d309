/* test_hf_archs.c: the OLMo 2, Mistral, Phi-3, Gemma, gpt-oss, AFMoE and Laguna checkpoints beyond
 * their forward (which test_hf_inspect.c holds to PyTorch with the other families): the config keys
 * their config classes define, each position's loss of an inspected run against the float64
 * reference's (expected.h5 `losses`), and eval, intervene and stream on the run; the refusals of
 * architectures not read, through gatelab inspect.
 *
 * Fixtures:
 * tests/reference/hf/{olmo2,mistral,phi3,gemma2,gemma3,gptoss,afmoe,laguna,step3p5,mimo}-*
 * (make_hf_fixtures.py, gemma_reference.py, gptoss_reference.py, afmoe_reference.py,
 * laguna_reference.py, step3p5_reference.py, mimo_reference.py); mistral-f32 and phi3-f32 have a
 * sliding window of 4 keys over their 10 tokens, phi3-f32 rotates half of each head
 * (partial_rotary_factor); gemma2-f32 and gemma3-f32 slide over 4 keys on layers 0 and 2 only
 * (gemma2-f32 is inspected here at its 10 tokens, each layer masked and recorded by its own window;
 * both at 40 tokens in the reruns), the BF16 Gemma ones over 64 keys. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <hdf5.h>
#include <jansson.h>
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "forward_open.h"
#include "hf_config.h"
#include "hf_inspect_fixture.h"
#include "hf_steps.h" /* hf_layer_window */
#include "runfile_read.h"
#include "runstats.h"
#include "testutil.h"

/* Each fixture with the window its run records (/config window). */
static const struct {
    const char *name;
    int window;
} FIXTURES[] = {{"olmo2-f32", 0},
                {"olmo2-bf16-sharded", 0},
                {"mistral-f32", 4},
                {"mistral-bf16-sharded", 0},
                {"phi3-f32", 4},
                {"phi3-bf16-sharded", 0},
                {"gemma2-f32", 0},
                {"gemma3-f32", 0},
                {"gemma2-bf16-sharded", 0},
                {"gemma3-bf16-sharded", 0},
                {"gemma3mm-f32", 0},
                {"gemma3mm-v5-bf16-sharded", 0},
                {"gptoss-f32", 0},
                {"gptoss-bf16-sharded", 0},
                {"gptoss-mxfp4", 0},
                {"afmoe-f32", 0},
                {"afmoe-bf16-sharded", 0},
                {"afmoe-moe-f32", 0},
                {"afmoe-moe-bf16-sharded", 0},
                {"laguna-f32", 0},
                {"laguna-bf16-sharded", 0},
                {"step3p5-f32", 0},
                {"step3p5-legacy-bf16", 0},
                {"laguna-heads-f32", 0},
                {"step3p5-heads-f32", 0},

                {"mimo-f32", 0},
                {"mimo-bf16", 0}};
#define N_FIX (sizeof FIXTURES / sizeof *FIXTURES)

#define LEN 40 /* the inspected windows: the fixture's tokens first */

/* Mistral's sliding_window: 4096 when absent (MistralConfig's default),
 * none when null, on every layer; OLMo 2's rms_norm_eps 1e-5 when absent;
 * a head_dim whose heads do not span hidden_size is read (Mistral's
 * head_dim); an unknown architecture's refusal names both families. */
static void test_config_keys(void **s) {
    (void)s;
    HfArch a;
    char err[512];
    assert_int_equal(hf_parse_tiny(&a, "MistralForCausalLM", "", err, sizeof err), 0);
    assert_int_equal(a.family, HF_MISTRAL);
    assert_int_equal(a.sliding_window, 4096);
    assert_int_equal(a.sliding_layers, 3);
    assert_true(a.eps == 1e-6);
    assert_int_equal(
        hf_parse_tiny(&a, "MistralForCausalLM", ", \"sliding_window\": null", err, sizeof err), 0);
    assert_int_equal(a.sliding_window, 0);
    assert_int_equal(a.sliding_layers, 0);
    assert_int_equal(hf_parse_tiny(&a, "MistralForCausalLM",
                                   ", \"sliding_window\": 7, \"head_dim\": 16", err, sizeof err),
                     0);
    assert_int_equal(a.sliding_window, 7);
    assert_int_equal(a.dh, 16);
    assert_int_equal(
        hf_parse_tiny(&a, "MistralForCausalLM", ", \"sliding_window\": 0", err, sizeof err), -1);
    assert_non_null(strstr(err, "'sliding_window' must be an integer"));
    assert_int_equal(hf_parse_tiny(&a, "Olmo2ForCausalLM", "", err, sizeof err), 0);
    assert_int_equal(a.family, HF_OLMO2);
    assert_true(a.eps == 1e-5);
    assert_int_equal(a.sliding_window, 0);
    assert_int_equal(
        hf_parse_tiny(&a, "Olmo2ForCausalLM", ", \"rms_norm_eps\": 1e-6", err, sizeof err), 0);
    assert_true(a.eps == 1e-6);
    assert_int_equal(hf_parse_tiny(&a, "OlmoForCausalLM", "", err, sizeof err), -1);
    assert_non_null(strstr(err, "Olmo2ForCausalLM"));
    assert_non_null(strstr(err, "MistralForCausalLM"));
}

/* Phi-3 (Phi3Config): rms_norm_eps 1e-5 and no sliding window when
 * absent, a window on every layer when set; partial_rotary_factor at the
 * top level or in rope_parameters (v5) sets the rotary dims, 1 when
 * absent; longrope (or su) scaling is refused naming rope_scaling's type;
 * an attention_bias key adds no bias. */
static void test_phi3_keys(void **s) {
    (void)s;
    HfArch a;
    char err[512];
    assert_int_equal(hf_parse_tiny(&a, "Phi3ForCausalLM", "", err, sizeof err), 0);
    assert_int_equal(a.family, HF_PHI3);
    assert_true(a.eps == 1e-5);
    assert_int_equal(a.sliding_window, 0);
    assert_int_equal(a.sliding_layers, 0);
    assert_int_equal(a.rotary_dim, 8);
    assert_int_equal(hf_parse_tiny(&a, "Phi3ForCausalLM",
                                   ", \"sliding_window\": 2047, \"partial_rotary_factor\": 0.75,"
                                   " \"rms_norm_eps\": 1e-6, \"attention_bias\": true",
                                   err, sizeof err),
                     0);
    assert_int_equal(a.sliding_window, 2047);
    assert_int_equal(a.sliding_layers, 3);
    assert_int_equal(a.rotary_dim, 6);
    assert_true(a.eps == 1e-6);
    assert_int_equal(a.qkv_bias + a.o_bias + a.mlp_bias, 0);
    assert_int_equal(
        hf_parse_tiny(&a, "Phi3ForCausalLM",
                      ", \"rope_parameters\": {\"rope_type\": \"default\", \"rope_theta\": "
                      "10000.0, \"partial_rotary_factor\": 0.5}",
                      err, sizeof err),
        0);
    assert_int_equal(a.rotary_dim, 4);
    assert_int_equal(
        hf_parse_tiny(&a, "Phi3ForCausalLM", ", \"sliding_window\": null", err, sizeof err), 0);
    assert_int_equal(a.sliding_window, 0);
    assert_int_equal(
        hf_parse_tiny(&a, "Phi3ForCausalLM", ", \"partial_rotary_factor\": 1.5", err, sizeof err),
        -1);
    assert_non_null(strstr(err, "partial_rotary_factor must be in [0, 1]"));
    const char *longrope[] = {", \"rope_scaling\": {\"type\": \"longrope\", \"long_factor\": "
                              "[1.0], \"short_factor\": [1.0]}",
                              ", \"rope_scaling\": {\"type\": \"su\"}"};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(hf_parse_tiny(&a, "Phi3ForCausalLM", longrope[i], err, sizeof err), -1);
        assert_non_null(strstr(err, i ? "rope_scaling type 'su'" : "rope_scaling type 'longrope'"));
        assert_null(strchr(err, '\n'));
    }
}

/* A config.json alone in a scratch directory, read by gatelab inspect:
 * Qwen3-Next and Qwen3.5 are refused naming their linear-attention layers,
 * Mixtral as an unknown architecture; each refusal is one line, exit 2,
 * listing every family read (Phi-3 and Gemma among them), as
 * `gatelab inspect --help` lists them. */
static void test_unread_families(void **s) {
    (void)s;
    static const struct {
        const char *arch, *want;
    } cases[] = {
        {"Qwen3NextForCausalLM", "Qwen3NextForCausalLM (Qwen3-Next) is not read: its "
                                 "linear-attention layers (Gated DeltaNet)"},
        {"Qwen3_5ForCausalLM", "Qwen3_5ForCausalLM (Qwen3.5) is not read: its linear-attention"},
        {"Qwen3_5MoeForConditionalGeneration", "(Qwen3.5) is not read: its linear-attention"},
        {"MixtralForCausalLM", "unknown architecture 'MixtralForCausalLM' (supported: "},
    };
    char list[400], json[256];
    hf_family_list(list, sizeof list);
    assert_non_null(strstr(list,
                           "MistralForCausalLM, Phi3ForCausalLM, Gemma2ForCausalLM, "
                           "Gemma3ForCausalLM, Gemma3ForConditionalGeneration, GptOssForCausalLM, "
                           "AfmoeForCausalLM, LagunaForCausalLM, Step3p5ForCausalLM"));
    { /* --help lists the same table */
        const char *d = tu_tmpdir(), *log = tu_join(d, "log");
        assert_int_equal(tu_run(log, "inspect --help"), 0);
        char *help = tu_slurp_ok(log, NULL), names[400];
        snprintf(names, sizeof names, "%s", list);
        for (char *w = strtok(names, ", "); w; w = strtok(NULL, ", "))
            if (!strstr(help, w)) fail_msg("inspect --help does not list %s", w);
        /* Laguna's layers of differing head counts are read, not refused */
        assert_null(strstr(help, "differing head counts are refused"));
        assert_non_null(strstr(help, "each layer's count kept as layer_heads"));
        free(help);
        tu_rmtree(d);
    }
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *d = tu_tmpdir();
        snprintf(json, sizeof json, "{\"architectures\": [\"%s\"], \"hidden_size\": 32}",
                 cases[i].arch);
        tu_write_text(tu_join(d, "config.json"), json);
        tu_write_text(tu_join(d, "ids.txt"), "1 2 3 4\n");
        const char *log = tu_join(d, "log");
        assert_int_equal(tu_run(log, "inspect %s --tokens %s --out %s -q", d, tu_join(d, "ids.txt"),
                                tu_join(d, "run.h5")),
                         2);
        char *out = tu_slurp_ok(log, NULL);
        if (!strstr(out, cases[i].want) || !strstr(out, list) ||
            strchr(out, '\n') + 1 != out + strlen(out))
            fail_msg("%s: refusal was: %s", cases[i].arch, out);
        free(out);
        tu_rmtree(d);
    }
}

/* Gemma 2 (Gemma2Config): head_dim 256, tied, (1 + w) norms, embeddings
 * times sqrt(d), the soft caps 50 and 30 (null: none), the window 4096 on
 * layers 0, 2, ...; Gemma 3 (Gemma3TextConfig): every sixth layer full,
 * the local RoPE base 10000, no caps, q/k norms; layer_types sets the
 * pattern, one off it is refused naming the layer; v5's rope_parameters
 * per layer type give both bases; linear RoPE scaling is read. */
static void test_gemma_keys(void **s) {
    (void)s;
    HfArch a;
    char err[512];
    assert_int_equal(hf_parse_tiny(&a, "Gemma2ForCausalLM", "", err, sizeof err), 0);
    assert_int_equal(a.family, HF_GEMMA2);
    assert_true(a.dh == 256 && a.tied && a.norm_plus1 && a.act == HF_ACT_GELU_TANH);
    assert_true(a.embed_scale == sqrtf(32.0f) && a.attn_scale == 1.0f / 16.0f);
    assert_true(a.attn_softcap == 50.0 && a.final_softcap == 30.0);
    assert_true(a.sliding_window == 4096 && a.sliding_period == 2 && a.sliding_layers == 2);
    assert_int_equal(
        hf_parse_tiny(&a, "Gemma2ForCausalLM",
                      ", \"attn_logit_softcapping\": null, \"final_logit_softcapping\": null,"
                      " \"query_pre_attn_scalar\": 64, \"head_dim\": 8",
                      err, sizeof err),
        0);
    assert_true(a.attn_softcap == 0 && a.final_softcap == 0 && a.attn_scale == 0.125f);
    assert_int_equal(hf_parse_tiny(&a, "Gemma3ForCausalLM", "", err, sizeof err), 0);
    assert_true(a.family == HF_GEMMA3 && a.qk_norm && a.sliding_period == 6);
    assert_true(a.sliding_layers == 3 && a.rope_local_theta == 10000.0 && a.attn_softcap == 0);
    assert_int_equal(
        hf_parse_tiny(&a, "Gemma3ForCausalLM",
                      ", \"layer_types\": [\"sliding_attention\", \"full_attention\", "
                      "\"sliding_attention\"], \"rope_scaling\": {\"rope_type\": \"linear\", "
                      "\"factor\": 8.0}",
                      err, sizeof err),
        0);
    assert_true(a.sliding_period == 2 && a.sliding_layers == 2);
    assert_true(a.rope_type == HF_ROPE_LINEAR && a.rs_factor == 8.0);
    assert_int_equal(hf_parse_tiny(&a, "Gemma3ForCausalLM",
                                   ", \"layer_types\": [\"sliding_attention\", \"full_attention\", "
                                   "\"full_attention\"]",
                                   err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "layer_types[2] is 'full_attention', off the pattern"));
    assert_int_equal(
        hf_parse_tiny(&a, "Gemma3ForCausalLM",
                      ", \"rope_parameters\": {\"full_attention\": {\"rope_type\": \"default\","
                      " \"rope_theta\": 500000.0}, \"sliding_attention\": {\"rope_type\": "
                      "\"default\", \"rope_theta\": 20000.0}}",
                      err, sizeof err),
        0);
    assert_true(a.rope_theta == 500000.0 && a.rope_local_theta == 20000.0);
    assert_int_equal(
        hf_parse_tiny(&a, "Gemma2ForCausalLM", ", \"attn_logit_softcapping\": -1", err, sizeof err),
        -1);
    assert_non_null(strstr(err, "query_pre_attn_scalar must be > 0, the soft caps >= 0"));
    assert_int_equal(hf_parse_tiny(&a, "Gemma3ForCausalLM",
                                   ", \"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 0}",
                                   err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "rope_scaling linear factor must be > 0"));
}

/* Qwen2's layer_types: the layers it names sliding_attention are those the
 * forward masks (hf_layer_window), the last ones or all but every p-th
 * (a period); another pattern is refused in one line naming layer_types. */
static void test_qwen_layer_types(void **s) {
    (void)s;
    static const struct {
        const char *types;
        int win[3];
    } CASES[] = {{"\"full_attention\", \"sliding_attention\", \"sliding_attention\"", {0, 4, 4}},
                 {"\"sliding_attention\", \"full_attention\", \"sliding_attention\"", {4, 0, 4}},
                 {"\"full_attention\", \"full_attention\", \"full_attention\"", {0, 0, 0}}};
    HfArch a;
    char err[512], extra[512];
    for (size_t i = 0; i < sizeof CASES / sizeof *CASES; i++) {
        snprintf(extra, sizeof extra,
                 ", \"use_sliding_window\": true, \"sliding_window\": 4, \"layer_types\": [%s]",
                 CASES[i].types);
        if (hf_parse_tiny(&a, "Qwen2ForCausalLM", extra, err, sizeof err) != 0) fail_msg("%s", err);
        for (int l = 0; l < 3; l++) assert_int_equal(hf_layer_window(&a, l), CASES[i].win[l]);
    }
    assert_int_equal(
        hf_parse_tiny(&a, "Qwen2ForCausalLM",
                      ", \"use_sliding_window\": true, \"sliding_window\": 4, \"layer_types\": "
                      "[\"sliding_attention\", \"full_attention\", \"full_attention\"]",
                      err, sizeof err),
        -1);
    assert_non_null(strstr(err, "config.json: layer_types slides layers in a pattern gatelab "
                                "cannot mask: write sliding_attention on the last layers"));
}

/* Gemma3ForConditionalGeneration reads its text_config, whose absent keys
 * take Gemma3TextConfig's defaults (v4.50), as gemma-3-4b's config.json
 * leaves out its head counts, vocabulary and RoPE base; the dtype comes
 * from the top level. Without a text_config object: one line. */
static void test_gemma3_multimodal_config(void **s) {
    (void)s;
    HfArch a;
    char err[512];
    const char *json =
        "{\"architectures\": [\"Gemma3ForConditionalGeneration\"], \"model_type\": \"gemma3\","
        " \"torch_dtype\": \"bfloat16\", \"text_config\": {\"hidden_size\": 2560,"
        " \"intermediate_size\": 10240, \"model_type\": \"gemma3_text\", \"num_hidden_layers\": 34,"
        " \"rope_scaling\": {\"factor\": 8.0, \"rope_type\": \"linear\"}, \"sliding_window\": "
        "1024},"
        " \"vision_config\": {\"hidden_size\": 1152}}";
    assert_int_equal(hf_config_parse(&a, json, strlen(json), "config.json", err, sizeof err), 0);
    assert_true(a.family == HF_GEMMA3 && a.text_tower && a.tied && a.norm_plus1);
    assert_true(a.d == 2560 && a.L == 34 && a.ff == 10240);
    assert_true(a.H == 8 && a.Hkv == 4 && a.dh == 256 && a.V == 262208 && a.max_pos == 131072);
    assert_true(a.rope_theta == 1e6 && a.rope_type == HF_ROPE_LINEAR && a.rs_factor == 8.0);
    assert_true(a.bos_id == 2);
    assert_string_equal(a.torch_dtype, "bfloat16");
    assert_string_equal(a.model_type, "gemma3_text");
    const int win[6] = {1024, 1024, 1024, 1024, 1024, 0}; /* every 6th layer full */
    for (int l = 0; l < 6; l++) assert_int_equal(hf_layer_window(&a, l), win[l]);
    const char *bad =
        "{\"architectures\": [\"Gemma3ForConditionalGeneration\"], \"hidden_size\": 8}";
    assert_int_equal(hf_config_parse(&a, bad, strlen(bad), "config.json", err, sizeof err), -1);
    assert_string_equal(err, "config.json: Gemma3ForConditionalGeneration has no \"text_config\" "
                             "object (its text model's config)");
    /* a text-only config still needs its sizes where its family defaults none */
    assert_int_equal(hf_parse_tiny(&a, "LlamaForCausalLM", "", err, sizeof err), 0);
    const char *llama = "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 8}";
    assert_int_equal(hf_config_parse(&a, llama, strlen(llama), "config.json", err, sizeof err), -1);
}

/* gpt-oss (GptOssConfig): sink logits, q/k/v/o biases, an untied head,
 * rms_norm_eps 1e-5; sliding_window 128 on layers 0, 2, ... (none when
 * null); the experts as stated, num_experts_per_tok 4 and swiglu_limit 7
 * when absent; num_local_experts is required, at least
 * num_experts_per_tok; MXFP4 experts of other sizes than config.json's
 * are refused naming the tensor and the shapes wanted. */
static void test_gptoss_keys(void **s) {
    (void)s;
    HfArch a;
    char err[512];
    const char *E = ", \"num_local_experts\": 4, \"head_dim\": 8";
    assert_int_equal(hf_parse_tiny(&a, "GptOssForCausalLM", E, err, sizeof err), 0);
    assert_true(a.family == HF_GPTOSS && a.sinks && a.qkv_bias && a.o_bias && !a.tied);
    assert_true(a.eps == 1e-5 && a.swiglu_limit[0] == 7.0f && a.swiglu_limit[2] == 7.0f &&
                a.swiglu_alpha == 1.702);
    assert_int_equal(a.n_experts, 4);
    assert_int_equal(a.top_k, 4);
    const int win[3] = {128, 0, 128};
    for (int l = 0; l < 3; l++) assert_int_equal(hf_layer_window(&a, l), win[l]);
    char extra[256];
    snprintf(extra, sizeof extra, "%s, \"sliding_window\": null", E);
    assert_int_equal(hf_parse_tiny(&a, "GptOssForCausalLM", extra, err, sizeof err), 0);
    assert_int_equal(hf_layer_window(&a, 0), 0);
    assert_int_equal(hf_parse_tiny(&a, "GptOssForCausalLM", "", err, sizeof err), -1);
    assert_non_null(strstr(err, "config.json: missing 'num_local_experts'"));
    snprintf(extra, sizeof extra, "%s, \"num_experts_per_tok\": 5", E);
    assert_int_equal(hf_parse_tiny(&a, "GptOssForCausalLM", extra, err, sizeof err), -1);
    assert_non_null(strstr(err, "num_experts_per_tok 5 must be at most num_local_experts 4"));
    /* gptoss-mxfp4's blocks under a config whose experts are wider */
    hf_refused_edited("gptoss-mxfp4",
                      "model.layers.0.mlp.experts.gate_up_proj_blocks: MXFP4 experts need U8 "
                      "model.layers.0.mlp.experts.gate_up_proj_blocks [4,128,1,16]",
                      "\"intermediate_size\": 32", "\"intermediate_size\": 64", NULL);
}

/* AFMoE (AfmoeConfig): rms_norm_eps 1e-5, head_dim 128, untied; the
 * window 1024 on all but every global_attn_every_n_layers-th (4) layer,
 * RoPE on those only; q/k norms; the gate of its own projection,
 * elementwise sigmoid, named so in the run; sqrt(d) embeddings under
 * mup_enabled; MoE layers from num_dense_layers (1) on, with
 * AfmoeConfig's expert counts and the sigmoid router (test_hf_moe.c holds
 * the rest); its sizes, positions and RoPE base when left out. */
static void test_afmoe_keys(void **s) {
    (void)s;
    HfArch a;
    char err[512];
    assert_int_equal(
        hf_parse_tiny(&a, "AfmoeForCausalLM", ", \"num_dense_layers\": 3", err, sizeof err), 0);
    assert_true(a.family == HF_AFMOE && a.eps == 1e-5 && a.dh == 128 && !a.tied && a.qk_norm);
    assert_true(a.rope_sliding_only && a.embed_scale == 0.0f && !a.qkv_bias && !a.o_bias);
    assert_int_equal(a.gate, HF_GATE_ELEMENTWISE);
    assert_string_equal(hf_gate_name(&a), "gate_proj-elementwise-sigmoid");
    assert_int_equal(hf_q_rows(&a), a.H * a.dh); /* no gate rows in q_proj */
    for (int l = 0; l < 3; l++) assert_int_equal(hf_layer_window(&a, l), 1024);
    assert_int_equal(hf_parse_tiny(&a, "AfmoeForCausalLM",
                                   ", \"num_dense_layers\": 3, \"global_attn_every_n_layers\": 2, "
                                   "\"sliding_window\": 16, \"mup_enabled\": true",
                                   err, sizeof err),
                     0);
    const int win[3] = {16, 0, 16};
    for (int l = 0; l < 3; l++) assert_int_equal(hf_layer_window(&a, l), win[l]);
    assert_true(fabsf(a.embed_scale - sqrtf(32.0f)) < 1e-6f);
    assert_int_equal(hf_parse_tiny(&a, "AfmoeForCausalLM", "", err, sizeof err), 0);
    assert_true(a.moe_from == 1 && a.n_experts == 64 && a.top_k == 6 && a.shared_ff == 2 * 1408);
    assert_true(a.moe_ff == 1408 && a.router.score == HF_SCORE_SIGMOID && a.router.renorm);
    const char *bare = "{\"architectures\": [\"AfmoeForCausalLM\"]}"; /* the sizes too */
    assert_int_equal(hf_config_parse(&a, bare, strlen(bare), "config.json", err, sizeof err), 0);
    assert_true(a.d == 2048 && a.L == 32 && a.H == 16 && a.Hkv == 16 && a.ff == 6144);
    assert_true(a.V == 200192 && a.max_pos == 16384 && a.rope_theta == 10000.0);
}

/* How many pixels of the PNG at path are the heatmap's mask grey (160,
 * 160, 160). */
static long grey_pixels(const char *path) {
    png_image im;
    memset(&im, 0, sizeof im);
    im.version = PNG_IMAGE_VERSION;
    assert_true(png_image_begin_read_from_file(&im, path));
    im.format = PNG_FORMAT_RGB;
    unsigned char *px = malloc(PNG_IMAGE_SIZE(im));
    assert_non_null(px);
    assert_true(png_image_finish_read(&im, NULL, px, 0, NULL));
    long n = 0;
    for (size_t i = 0; i < (size_t)im.width * im.height; i++)
        n += px[3 * i] == 160 && px[3 * i + 1] == 160 && px[3 * i + 2] == 160;
    free(px);
    return n;
}

/* gemma2-f32 slides over 4 keys on layers 0 and 2 of 3, and is inspected
 * on its 10 tokens (T > 4): the maps are the float64 reference's
 * (expected.h5, each layer masked by its own window), the run file holds
 * each layer's window, and the uniform share of each layer and the cells
 * masked grey in each layer's heatmap panel are that layer's: at T = 10,
 * (H_4 - 1) / 9 = 13/108 under 4 keys, (H_10 - 1) / 9 = 4861/22680 under
 * full causal attention. */
static void test_gemma_layer_windows(void **s) {
    (void)s;
    const char *d = tu_tmpdir();
    char fix[2048], path[2200], err[512];
    snprintf(fix, sizeof fix, "%s/tests/reference/hf/gemma2-f32", tu_src());
    snprintf(path, sizeof path, "%s/expected.h5", fix);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    size_t nt, na;
    int32_t *tok = tu_h5_read_opt(f, "tokens", H5T_NATIVE_INT32, 4, &nt);
    float *att = tu_h5_read_opt(f, "attention", H5T_NATIVE_FLOAT, 4, &na);
    H5Fclose(f);
    const int T = (int)nt, L = 3, H = 4;
    if (!tok || !att || T != 10 || na != (size_t)L * H * T * T)
        fail_msg("%s: no tokens [10] or attention [3, 4, 10, 10]", path);
    hf_write_tokens(tu_join(d, "ids.txt"), tok, T, 1);
    const char *log = tu_join(d, "log"), *run = tu_join(d, "run.h5");
    assert_int_equal(
        tu_run(log, "inspect %s --tokens %s --out %s -q", fix, tu_join(d, "ids.txt"), run), 0);
    RunReader *r = runread_open(run, err, sizeof err);
    if (!r) fail_msg("%s", err);
    ProbeRecord p;
    if (runread_probe(r, -1, &p, err, sizeof err) < 0) fail_msg("%s", err);
    assert_true(p.L == L && p.H == H && p.T == T && p.M == T);
    for (size_t i = 0; i < na; i++)
        if (!(fabs(p.attention[i] - att[i]) < HF_TOL))
            fail_msg("map entry %zu = %.7g, reference %.7g", i, p.attention[i], att[i]);
    int *win, n;
    assert_int_equal(runread_layer_window(r, &win, &n, err, sizeof err), 0);
    assert_int_equal(n, L);
    const int want[3] = {4, 0, 4};
    const double share[3] = {13.0 / 108.0, 4861.0 / 22680.0, 13.0 / 108.0};
    Config cfg;
    rs_arch_config(r, &cfg);
    for (int l = 0; l < L; l++) {
        assert_int_equal(win[l], want[l]);
        assert_int_equal(rs_layer_window(r, &cfg, l), want[l]); /* each panel's window */
        assert_true(fabs(rs_uniform_share(r, &cfg, &p, l) - share[l]) < 1e-12);
    }
    const double mean = (share[0] + share[1] + share[2]) / 3;
    assert_true(fabs(rs_uniform_share(r, &cfg, &p, -1) - mean) < 1e-12);
    /* the even layers windowed: a trained run's alternate window */
    char v[RS_N_ARCH][RS_ARCH_LEN];
    rs_arch_values(r, v);
    assert_string_equal(v[RS_ARCH_WINDOW], "4");
    assert_string_equal(v[RS_ARCH_WINDOW_LAYERS], "alternate");
    /* the same through gatelab sinks --json, and a heatmap of every panel */
    assert_int_equal(tu_run(log, "sinks %s --json", run), 0);
    json_t *o = json_load_file(log, 0, NULL), *ul = json_object_get(o, "f_attn_uniform_layer");
    assert_true(json_array_size(ul) == (size_t)L);
    for (int l = 0; l < L; l++)
        assert_true(fabs(json_real_value(json_array_get(ul, (size_t)l)) - share[l]) < 1e-9);
    json_decref(o);
    assert_int_equal(tu_run(log, "heatmap %s --out %s", run, tu_join(d, "h.png")), 0);
    /* one panel per layer: 66 of the 100 cells masked under 4 keys at
     * T = 10 (visible 1 + 2 + 3 + 7 * 4), 45 (the future) under none */
    long grey[3];
    for (int l = 0; l < L; l++) {
        assert_int_equal(tu_run(log, "heatmap %s --layer %d --head 0 --size own --out %s", run, l,
                                tu_join(d, "l.png")),
                         0);
        grey[l] = grey_pixels(tu_join(d, "l.png"));
    }
    assert_true(grey[0] == grey[2] && grey[1] > 0);
    assert_true(fabs((double)grey[0] / (double)grey[1] - 66.0 / 45.0) < 1e-3);
    free(win), free(tok), free(att);
    runread_probe_free(&p);
    runread_close(r);
    tu_rmtree(d);
}

/* The fixture's tokens and reference losses; LEN-token windows starting
 * with its tokens into DIR/ids.txt (3 lines). Returns T. */
static int fixture_input(const char *fix, const char *ids, int32_t *tok, double *loss) {
    char path[2200];
    snprintf(path, sizeof path, "%s/expected.h5", fix);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) fail_msg("cannot open %s", path);
    size_t nt, nl;
    int32_t *t = tu_h5_read_opt(f, "tokens", H5T_NATIVE_INT32, 4, &nt);
    double *l = tu_h5_read_opt(f, "losses", H5T_NATIVE_DOUBLE, 8, &nl);
    H5Fclose(f);
    if (!t || !l || nl + 1 != nt || nt > LEN) fail_msg("%s: no tokens or losses [T-1]", path);
    for (int i = 0; i < LEN; i++) tok[i] = i < (int)nt ? t[i] : (i * 37 + 11) % 97;
    memcpy(loss, l, nl * sizeof *loss);
    free(t), free(l);
    hf_write_tokens(ids, tok, LEN, 3);
    return (int)nt;
}

/* Each position's loss of the inspected run's first window, through its
 * Forward: the first T - 1 (the fixture's tokens predicting the next) are
 * the reference's, the attention being causal. */
static void check_losses(const char *name, const char *run, const int32_t *tok, const double *want,
                         int T) {
    char err[512];
    ForwardOpen fo = {.threads = 2};
    Forward *fw = forward_open(run, &fo, err, sizeof err);
    if (!fw) fail_msg("%s: %s", name, err);
    int ids[LEN], tg[LEN];
    float tl[LEN];
    double mean;
    for (int i = 0; i < LEN; i++) ids[i] = tok[i], tg[i] = i + 1 < LEN ? tok[i + 1] : -1;
    if (fw->ops->prepare(fw, 1, LEN, 1.0, err, sizeof err) != 0 ||
        fw->ops->losses(fw, ids, tg, 1, LEN, NULL, tl, &mean, NULL, err, sizeof err) != 0)
        fail_msg("%s: %s", name, err);
    double worst = 0.0;
    for (int t = 0; t + 1 < T; t++) {
        double e = fabs(tl[t] - want[t]) / (1.0 + fabs(want[t]));
        if (!(e <= HF_TOL))
            fail_msg("%s: loss at %d = %.7g, reference %.7g (error %.3g)", name, t, tl[t], want[t],
                     e);
        worst = fmax(worst, e);
    }
    printf("%-24s per-token loss error %.2e\n", name, worst);
    forward_close(fw);
}

/* inspect, the losses, then eval, intervene (every kind that applies to
 * an ungated model), stream, probe (a prompt through the rerun path) and
 * eval --quant (w8a8, kv8: each a finite loss) on the run. */
static void test_rerun_families(void **s) {
    (void)s;
    for (size_t i = 0; i < N_FIX; i++) {
        char fix[2048], ids[2048], run[2048], log[2048];
        const char *d = tu_tmpdir();
        int32_t tok[LEN];
        double loss[LEN];
        const char *name = FIXTURES[i].name;
        snprintf(fix, sizeof fix, "%s/tests/reference/hf/%s", tu_src(), name);
        snprintf(ids, sizeof ids, "%s/ids.txt", d);
        snprintf(run, sizeof run, "%s/run.h5", d);
        snprintf(log, sizeof log, "%s/log", d);
        int T = fixture_input(fix, ids, tok, loss);
        assert_int_equal(tu_run(log, "inspect %s --tokens %s --out %s -q", fix, ids, run), 0);
        check_losses(name, run, tok, loss, T);
        /* the window every layer attends under, in a trained run's key */
        hid_t f = H5Fopen(run, H5F_ACC_RDONLY, H5P_DEFAULT), g = H5Gopen2(f, "config", H5P_DEFAULT);
        long long window = -1;
        hid_t at = H5Aopen(g, "window", H5P_DEFAULT);
        assert_true(at >= 0 && H5Aread(at, H5T_NATIVE_LLONG, &window) >= 0);
        H5Aclose(at), H5Gclose(g), H5Fclose(f);
        assert_int_equal(window, FIXTURES[i].window);
        assert_int_equal(tu_run(log, "eval %s --lengths 1x --batches 1 --batch-size 2", run), 0);
        assert_int_equal(tu_run(log, "intervene %s all", run), 0);
        assert_int_equal(tu_run(log, "stream %s --len 40 --window 10 --n-seq 3", run), 0);
        assert_int_equal(tu_run(log, "stream %s --len 40 --window 3 --keep 1 --n-seq 3", run), 0);
        assert_int_equal(tu_run(log, "probe %s --tokens 2,5,7,9 --name p --no-figure", run), 0);
        assert_int_equal(
            tu_run(log, "eval %s --quant w8a8,kv8 --batches 1 --calib 1 --batch-size 1", run), 0);
        char *q = tu_slurp_ok(log, NULL);
        for (const char *m = "w8a8\0kv8\0"; *m; m += strlen(m) + 1) { /* each mode's row: a loss */
            char row[16];
            snprintf(row, sizeof row, "\n%10s ", m);
            const char *at = strstr(q, row);
            if (!at || !isfinite(strtod(at + strlen(row), NULL)))
                fail_msg("%s: eval --quant has no finite %s loss:\n%s", name, m, q);
        }
        /* the statistics see every MLP's output (gpt-oss's: the experts' sum) */
        const char *ffn = strstr(q, "max |ffn out| ");
        if (!ffn || !(strtod(ffn + strlen("max |ffn out| "), NULL) > 0))
            fail_msg("%s: eval --quant's statistics have no MLP output:\n%s", name, q);
        free(q);
        tu_rmtree(d);
    }
}

/* Uniform attention over query t's visible keys (the last W of them, all
 * when W is 0) and the sink slot: the weight key 0 gets, mean over the
 * queries t = 1..T-1. */
static double uniform_with_slot(int T, int W) {
    double s = 0.0;
    for (int t = 1; t < T; t++) {
        int keys = W > 0 && W < t + 1 ? W : t + 1;
        if (W <= 0 || t < W) s += 1.0 / (keys + 1);
    }
    return s / (T - 1);
}

/* gptoss-f32 slides over 4 keys on layers 0 and 2 and gives each head a
 * sink logit: its stored rows spread 1 over the real keys and the slot
 * (no proxy), so the uniform reference of each layer counts the slot, and
 * the Forward, eval, sinks and the report's window column all read the
 * per-layer windows. */
static void test_gptoss_uniform_slot(void **s) {
    (void)s;
    char fix[2048], err[512];
    const char *d = tu_tmpdir(), *log = tu_join(d, "log"), *run = tu_join(d, "run.h5");
    int32_t tok[LEN];
    double loss[LEN];
    snprintf(fix, sizeof fix, "%s/tests/reference/hf/gptoss-f32", tu_src());
    fixture_input(fix, tu_join(d, "ids.txt"), tok, loss);
    assert_int_equal(
        tu_run(log, "inspect %s --tokens %s --out %s -q", fix, tu_join(d, "ids.txt"), run), 0);
    const int L = 3, want[3] = {4, 0, 4};
    double share[3], mean = 0.0;
    for (int l = 0; l < L; l++) mean += (share[l] = uniform_with_slot(LEN, want[l])) / L;
    RunReader *r = runread_open(run, err, sizeof err);
    if (!r) fail_msg("%s", err);
    ProbeRecord p;
    if (runread_probe(r, -1, &p, err, sizeof err) < 0) fail_msg("%s", err);
    assert_true(p.T == LEN && p.L == L && !p.proxy && p.attention_slot);
    assert_true(p.slots == 1 && !p.layer_slots); /* a sink logit on every layer */
    for (int h = 0; h < p.H; h++) { /* row 5 of layer 1: its keys and the slot hold 1 */
        const float *row = p.attention + ((size_t)(1 * p.H + h) * p.M + 5) * p.M;
        double m = p.attention_slot[(size_t)(1 * p.H + h) * p.T + 5];
        for (int j = 0; j <= 5; j++) m += row[j];
        assert_true(fabs(m - 1.0) < 1e-4);
    }
    Config cfg;
    rs_arch_config(r, &cfg);
    for (int l = 0; l < L; l++)
        assert_true(fabs(rs_uniform_share(r, &cfg, &p, l) - share[l]) < 1e-12);
    assert_true(fabs(rs_uniform_share(r, &cfg, &p, -1) - mean) < 1e-12);
    char v[RS_N_ARCH][RS_ARCH_LEN];
    rs_arch_values(r, v);
    assert_string_equal(v[RS_ARCH_WINDOW], "4");
    assert_string_equal(v[RS_ARCH_WINDOW_LAYERS], "alternate");
    runread_probe_free(&p);
    runread_close(r);
    ForwardOpen fo = {.threads = 2};
    Forward *fw = forward_open(run, &fo, err, sizeof err);
    if (!fw) fail_msg("%s", err);
    for (int l = 0; l < L; l++) assert_int_equal(fw->info.layer_window[l], want[l]);
    for (int l = 0; l < L; l++) assert_int_equal(fw->info.layer_slots[l], 1);
    forward_close(fw);
    hf_check_uniform(run, log, LEN, share, L, mean);
    tu_rmtree(d);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_keys),      cmocka_unit_test(test_phi3_keys),
        cmocka_unit_test(test_gemma_keys),       cmocka_unit_test(test_gemma_layer_windows),
        cmocka_unit_test(test_qwen_layer_types), cmocka_unit_test(test_unread_families),
        cmocka_unit_test(test_gptoss_keys),      cmocka_unit_test(test_gemma3_multimodal_config),
        cmocka_unit_test(test_rerun_families),   cmocka_unit_test(test_gptoss_uniform_slot),
        cmocka_unit_test(test_afmoe_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
