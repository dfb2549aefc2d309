/* test_hf_rope.c: a checkpoint's RoPE as every transformers version saves
 * it (hf_config.c) and its frequencies (hf_rope_freqs).
 *
 *   - YaRN against the float64 reference of transformers'
 *     _compute_yarn_parameters (tests/reference/make_hf_yarn_fixture.py,
 *     fixtures/hf_yarn.json): every case's inverse frequencies and attention
 *     factor within 1e-6 relative, read from the v5 layout (rope_theta and
 *     the scaling keys in rope_parameters) and from the v4 one (top-level
 *     rope_theta, rope_scaling), as Llama and as Qwen3;
 *   - every committed snapshot's config.json rewritten into the v5 layout
 *     reads as the same architecture, field for field;
 *   - a key the family defines no default for, missing from both places,
 *     and an unsupported rope_type are refused in one line naming the key
 *     (or type) and the file.
 */
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

#include "hf_config.h"
#include "hf_steps.h"
#include "testutil.h"

/* Parse the JSON object o as a config.json named path; 0 or -1 (err). */
static int parse_obj(HfArch *a, json_t *o, const char *path, char *err, size_t errlen) {
    char *text = json_dumps(o, JSON_COMPACT);
    assert_non_null(text);
    int rc = hf_config_parse(a, text, strlen(text), path, err, errlen);
    free(text);
    return rc;
}

/* A one-layer config of architecture arch with head_dim dh. */
static json_t *base_config(const char *arch, int dh, int max_pos) {
    return json_pack("{s:[s], s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i}", "architectures", arch,
                     "hidden_size", 2 * dh, "num_hidden_layers", 1, "num_attention_heads", 2,
                     "num_key_value_heads", 2, "head_dim", dh, "intermediate_size", 8, "vocab_size",
                     16, "max_position_embeddings", max_pos);
}

/* The v4 layout of rope_parameters rp into cfg: rope_theta at the top
 * level, the rest (unless it is plain RoPE) as rope_scaling. */
static void put_v4(json_t *cfg, json_t *rp) {
    json_t *rs = json_deep_copy(rp);
    json_object_set(cfg, "rope_theta", json_object_get(rp, "rope_theta"));
    json_object_del(rs, "rope_theta");
    if (strcmp(json_string_value(json_object_get(rs, "rope_type")), "default"))
        json_object_set(cfg, "rope_scaling", rs);
    json_decref(rs);
}

/* One fixture case in one layout and architecture against its want. */
static void check_case(json_t *c, const char *arch, int v5) {
    const char *name = json_string_value(json_object_get(c, "name"));
    const int dh = (int)json_integer_value(json_object_get(c, "head_dim"));
    json_t *rp = json_object_get(c, "rope_parameters"), *want = json_object_get(c, "inv_freq");
    json_t *cfg = base_config(
        arch, dh, (int)json_integer_value(json_object_get(c, "max_position_embeddings")));
    if (v5) json_object_set(cfg, "rope_parameters", rp);
    else put_v4(cfg, rp);
    HfArch a;
    char err[512], what[160];
    snprintf(what, sizeof what, "%s (%s, %s layout)", name, arch, v5 ? "v5" : "v4");
    if (parse_obj(&a, cfg, what, err, sizeof err) != 0) fail_msg("%s", err);
    assert_int_equal(json_array_size(want), (size_t)dh / 2);
    float *inv = malloc((size_t)dh / 2 * sizeof *inv);
    assert_non_null(inv);
    double af = hf_rope_freqs(&a, inv);
    double af_want = json_real_value(json_object_get(c, "attention_factor"));
    if (!(fabs(af - af_want) <= 1e-6 * af_want))
        fail_msg("%s: attention factor %.9g, reference %.9g", what, af, af_want);
    for (int i = 0; i < dh / 2; i++) {
        double w = json_real_value(json_array_get(want, (size_t)i));
        if (!(fabs(inv[i] - w) <= 1e-6 * fabs(w)))
            fail_msg("%s: inv_freq[%d] %.9g, reference %.9g", what, i, (double)inv[i], w);
    }
    free(inv);
    json_decref(cfg);
}

static void test_yarn_reference(void **st) {
    (void)st;
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/reference/fixtures/hf_yarn.json", tu_src());
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root) fail_msg("%s: %s", path, je.text);
    json_t *cases = json_object_get(root, "cases");
    assert_true(json_array_size(cases) >= 7);
    for (size_t i = 0; i < json_array_size(cases); i++)
        for (int v5 = 0; v5 <= 1; v5++) {
            check_case(json_array_get(cases, i), "Qwen3ForCausalLM", v5);
            check_case(json_array_get(cases, i), "LlamaForCausalLM", v5);
        }
    json_decref(root);
}

/* A snapshot's config.json in v5's layout: rope_theta (or GPT-NeoX's
 * rotary_emb_base) and rope_scaling moved into rope_parameters. */
static json_t *to_v5(json_t *cfg) {
    json_t *v5 = json_deep_copy(cfg), *rs = json_object_get(cfg, "rope_scaling");
    json_t *rp =
        json_is_object(rs) ? json_deep_copy(rs) : json_pack("{s:s}", "rope_type", "default");
    json_t *theta = json_object_get(cfg, "rope_theta");
    if (!theta) theta = json_object_get(cfg, "rotary_emb_base");
    json_object_set(rp, "rope_theta", theta);
    json_object_del(v5, "rope_theta");
    json_object_del(v5, "rotary_emb_base");
    json_object_del(v5, "rope_scaling");
    json_object_set_new(v5, "rope_parameters", rp);
    return v5;
}

static void test_v5_layout_reads_the_same(void **st) {
    (void)st;
    const char *snaps[] = {"llama-f32", "llama-bf16-sharded", "qwen2-f32-sharded",
                           "qwen3-f32", "qwen3-headwise-f32", "neox-f32"};
    for (size_t i = 0; i < sizeof snaps / sizeof *snaps; i++) {
        char path[1024], err[512];
        snprintf(path, sizeof path, "%s/tests/reference/hf/%s/config.json", tu_src(), snaps[i]);
        json_error_t je;
        json_t *cfg = json_load_file(path, 0, &je), *v5 = cfg ? to_v5(cfg) : NULL;
        if (!cfg) fail_msg("%s: %s", path, je.text);
        HfArch a, b;
        if (parse_obj(&a, cfg, path, err, sizeof err) != 0) fail_msg("%s", err);
        if (parse_obj(&b, v5, path, err, sizeof err) != 0) fail_msg("v5 layout: %s", err);
        if (memcmp(&a, &b, sizeof a))
            fail_msg("%s: the v5 layout reads otherwise (rope_theta %g, not %g)", snaps[i],
                     b.rope_theta, a.rope_theta);
        json_decref(cfg), json_decref(v5);
    }
}

/* cfg (JSON text) is refused in one line naming n1 and n2 and the file. */
static void refused(const char *cfg, const char *n1, const char *n2) {
    HfArch a;
    char err[512] = "";
    const char *path = "SNAP/config.json";
    if (hf_config_parse(&a, cfg, strlen(cfg), path, err, sizeof err) == 0)
        fail_msg("accepted, expected a refusal naming '%s': %s", n1, cfg);
    if (!strstr(err, n1) || (n2 && !strstr(err, n2)) || !strstr(err, path) || strchr(err, '\n'))
        fail_msg("error '%s' does not name '%s', '%s' and the file in one line", err, n1,
                 n2 ? n2 : "");
    printf("  refused: %s\n", err);
}

#define HEAD                                                                                       \
    "{\"architectures\": [\"Qwen3ForCausalLM\"], \"hidden_size\": 32, "                            \
    "\"num_hidden_layers\": 1, \"num_attention_heads\": 2, \"head_dim\": 16, "                     \
    "\"intermediate_size\": 8, \"vocab_size\": 16, "

static void test_refusals(void **st) {
    (void)st;
    refused(HEAD "\"max_position_embeddings\": 64}", "'rope_theta'", "rope_parameters");
    refused(HEAD "\"rope_parameters\": {\"rope_type\": \"default\"}}", "'rope_theta'", NULL);
    refused("{\"architectures\": [\"GPTNeoXForCausalLM\"], \"hidden_size\": 32, "
            "\"num_hidden_layers\": 1, \"num_attention_heads\": 2, \"intermediate_size\": 8, "
            "\"vocab_size\": 16}",
            "'rope_theta'", "rotary_emb_base");
    refused(HEAD "\"rope_parameters\": {\"rope_type\": \"yarn\", \"rope_theta\": 1e6}}", "'factor'",
            "rope_parameters");
    refused(HEAD "\"rope_theta\": 1e6, \"rope_scaling\": {\"rope_type\": \"yarn\"}}", "'factor'",
            "rope_scaling");
    refused(HEAD
            "\"rope_theta\": 5e5, \"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8, "
            "\"high_freq_factor\": 4, \"original_max_position_embeddings\": 8192}}",
            "'low_freq_factor'", "rope_scaling");
    refused(HEAD "\"rope_parameters\": {\"rope_type\": \"dynamic\", \"rope_theta\": 1e4, "
                 "\"factor\": 2}}",
            "'dynamic'", "rope_parameters");
    refused(HEAD "\"rope_parameters\": {\"rope_type\": \"yarn\", \"rope_theta\": 1e4, "
                 "\"factor\": 2, \"beta_fast\": 1, \"beta_slow\": 32}}",
            "yarn parameters are inconsistent", "beta_fast > beta_slow");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_yarn_reference),
        cmocka_unit_test(test_v5_layout_reads_the_same),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
