/* test_catalog.c: the variant catalog: its ids and labels, twins that
 * name the same fields, each id's fields and parameter matching, the
 * keys' defaults and the retired key. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#include "config.h"
#include "inifile.h"
#include "util.h"

static char err[512];

/* Fail with the actual message when it lacks the expected words. */
static void expect_err(const char *what, const char *want) {
    if (!strstr(err, want)) {
        print_error("%s: error '%s' lacks '%s'\n", what, err, want);
        fail();
    }
}

static void apply_small(Config *c, const char *id) {
    tu_load_preset(c, "small");
    if (config_apply_variant(c, id, err, sizeof err)) {
        print_error("%s: %s\n", id, err);
        fail();
    }
    tu_resolve_ok(c, id);
}

/* The config text of c without its variant line (malloc'd). */
static char *text_without_variant(const Config *c) {
    char *t = malloc(1 << 16);
    assert_non_null(t);
    assert_int_equal(config_to_text(c, t, 1 << 16), 0);
    char *v = strstr(t, "variant = ");
    if (v) memmove(v, v + strcspn(v, "\n") + 1, strlen(v + strcspn(v, "\n") + 1) + 1);
    return t;
}

/* A config's label is what its fields are: keys set after a variant id
 * relabel it (the catalog id they now equal, else custom), and every id
 * applied alone keeps its own name. */
static void test_variant_labels(void **state) {
    (void)state;
    struct {
        const char *sets[3], *label, *diff;
    } cases[] = {
        {{"gate_pos=g3", "gate_act=silu", NULL}, "custom", "gate_pos=g3 gate_act=silu"},
        {{"variant=g1-elem", "gate_act=silu", NULL}, "g1-mult-silu", "gate_pos=g1 gate_act=silu"},
        {{"gate_pos=g1", NULL, NULL}, "g1-elem", "gate_pos=g1"},
        {{"variant=g1-elem", "gate_pos=none", NULL}, "baseline", ""},
        {{"variant=g1-elem", "clip_alpha=2", NULL}, "g1-elem", "gate_pos=g1"},
        {{"variant=qk-norm", "normaliser=softmax1", NULL}, "softmax1", "normaliser=softmax1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Config c;
        tu_load_preset(&c, "tiny");
        for (int k = 0; k < 3 && cases[i].sets[k]; k++)
            assert_int_equal(config_set(&c, cases[i].sets[k], err, sizeof err), 0);
        config_resolve(&c);
        assert_string_equal(c.variant, cases[i].label);
        char diff[256];
        config_variant_diff(&c, diff, sizeof diff);
        assert_string_equal(diff, cases[i].diff);
        /* the label survives the resolved text */
        char *text = malloc(1 << 16);
        assert_non_null(text);
        assert_int_equal(config_to_text(&c, text, 1 << 16), 0);
        Config b;
        config_defaults(&b);
        assert_int_equal(config_load_string(&b, text, "r.ini", err, sizeof err), 0);
        config_resolve(&b);
        assert_string_equal(b.variant, cases[i].label);
        free(text);
    }
    for (int i = 0; variant_id_at(i); i++) {
        Config c;
        apply_small(&c, variant_id_at(i));
        assert_string_equal(c.variant, variant_id_at(i));
    }
}

/* The defaults are the key table's: the values the small-like baseline
 * always had, bit for bit. */
static void test_key_defaults(void **state) {
    (void)state;
    Config c;
    config_defaults(&c);
    assert_int_equal(c.n_layers, 4);
    assert_int_equal(c.d_model, 128);
    assert_int_equal(c.n_heads, 4);
    assert_int_equal(c.n_kv_heads, 4);
    assert_int_equal(c.head_dim, 0);
    assert_int_equal(c.seq_len, 256);
    assert_true(c.rope_base == 10000.0f && c.yarn_scale == 1.0f);
    assert_true(c.norm_eps == 1e-5f && c.init_std == 0.02f);
    assert_string_equal(c.variant, "baseline");
    assert_int_equal(c.gate_pos, GATE_NONE);
    assert_int_equal(c.normaliser, NORMZ_SOFTMAX);
    assert_true(c.clip_alpha == 4.0f && c.softpick_eps == 1e-6f);
    assert_int_equal(c.data, DATA_BROWN);
    assert_string_equal(c.data_dir, "data/brown");
    assert_string_equal(c.train_file, "");
    assert_int_equal(c.bos, 1);
    assert_int_equal(c.bigram_vocab, 64);
    assert_int_equal(c.bigram_triggers, 3);
    assert_true(c.bigram_seed == 1 && c.init_seed == 1 && c.data_seed == 1);
    assert_int_equal(c.batch_size, 16);
    assert_int_equal(c.steps, 1000);
    assert_true(c.lr == 3e-3f && c.min_lr_frac == 0.1f && c.weight_decay == 0.1f);
    assert_int_equal(c.warmup, 100);
    assert_true(c.beta1 == 0.9f && c.beta2 == 0.95f && c.adam_eps == 1e-8f);
    assert_true(c.grad_clip == 1.0f && c.spike_factor == 1.25f);
    assert_int_equal(c.eval_every, 200);
    assert_int_equal(c.eval_batches, 8);
    assert_int_equal(c.ckpt_every, 200);
    assert_int_equal(c.probe_n, 16);
    assert_int_equal(c.log_every, 10);
    assert_int_equal(c.threads, 1);
    assert_int_equal(c.flush_subnormals, 0);
}

/* The retired key `reproducible`: a preset or --set naming it is refused
 * with the one-line reason; a run file's recorded text that has it (either
 * value) reads as the same config without it. */
static void test_retired_key(void **state) {
    (void)state;
    Config c, plain;
    char err[512];
    config_defaults(&c);
    assert_int_equal(config_set(&c, "reproducible=1", err, sizeof err), -1);
    assert_non_null(strstr(err, "key 'reproducible': retired: the default products give the "
                                "same bits on every CPU; see docs/speed.md"));
    assert_null(strchr(err, '\n'));
    assert_int_equal(config_set(&c, "reproducible=0", err, sizeof err), -1);
    char path[] = "/tmp/gatelab-retired-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *ini = "[train]\nsteps = 5\nreproducible = 1\n";
    assert_int_equal(write(fd, ini, strlen(ini)), (ssize_t)strlen(ini));
    close(fd);
    config_defaults(&c);
    int rc = config_load_file(&c, path, err, sizeof err);
    unlink(path);
    assert_int_equal(rc, -1);
    assert_non_null(strstr(err, ":3: key 'reproducible': retired"));
    config_defaults(&plain);
    assert_int_equal(config_load_string(&plain, "[train]\nsteps = 5\n", "r.h5", err, sizeof err),
                     0);
    for (int v = 0; v < 2; v++) {
        char text[96];
        snprintf(text, sizeof text, "[train]\nsteps = 5\nreproducible = %d\n", v);
        config_defaults(&c);
        assert_int_equal(config_load_string(&c, text, "r.h5", err, sizeof err), 0);
        assert_int_equal(memcmp(&c, &plain, sizeof c), 0);
    }
}

/* Whether id is a C catalog id. */
static int c_id(const char *id, size_t n) {
    for (int i = 0; variant_id_at(i); i++)
        if (strlen(variant_id_at(i)) == n && !strncmp(variant_id_at(i), id, n)) return 1;
    return 0;
}

/* The C catalog is the one list of ids: every id row of docs/variants.md's
 * tables and the fixture files (one var-ID.h5 per id, none for an id C
 * lacks) agree with it. The PyTorch twin reads the catalog itself
 * (`gatelab variants --json`; tests/python_catalog.py). */
static void test_catalog_twins(void **state) {
    (void)state;
    char root[1024], path[1200];
    const char *p;
    tu_preset_path(root, sizeof root, "tiny");
    *strrchr(root, '/') = 0;
    *strrchr(root, '/') = 0;
    /* docs/variants.md: every table row "| `ID` |" names a C id */
    snprintf(path, sizeof path, "%s/docs/variants.md", root);
    char *doc = tu_slurp_ok(path, NULL);
    for (p = strstr(doc, "\n| `"); p; p = strstr(p + 1, "\n| `")) {
        const char *q = p + 4;
        size_t n = strcspn(q, "`");
        if (!c_id(q, n)) fail_msg("docs/variants.md has a row for %.*s, no C id", (int)n, q);
    }
    free(doc);
    /* the fixtures: var-ID.h5 for every id, and no other var-*.h5 */
    for (int i = 0; variant_id_at(i); i++) {
        snprintf(path, sizeof path, "%s/tests/reference/fixtures/var-%s.h5", root,
                 variant_id_at(i));
        if (!file_exists(path)) fail_msg("no fixture %s", path);
    }
    snprintf(path, sizeof path, "%s/tests/reference/fixtures", root);
    DIR *d = opendir(path);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (strncmp(e->d_name, "var-", 4) || n < 7 || strcmp(e->d_name + n - 3, ".h5")) continue;
        if (!c_id(e->d_name + 4, n - 7)) fail_msg("fixture %s names no C catalog id", e->d_name);
    }
    closedir(d);
}

/* Every catalog id is documented in docs/variants.md with a formula,
 * applies to the small and the tiny preset, and (baseline aside) changes
 * some setting of the baseline: an id is a mechanism, not a name. */
static void test_catalog_ids(void **state) {
    (void)state;
    char path[1024];
    tu_preset_path(path, sizeof path, "tiny");
    strcpy(strrchr(path, '/'), "/../docs/variants.md");
    char *doc = tu_slurp_ok(path, NULL);
    Config base;
    apply_small(&base, "baseline");
    char *base_text = text_without_variant(&base);
    int n = 0;
    for (const char *id; (id = variant_id_at(n)); n++) {
        char quoted[80];
        snprintf(quoted, sizeof quoted, "| `%s` |", id);
        if (!strstr(doc, quoted)) fail_msg("%s is not in a table of docs/variants.md", id);
        for (int k = 0; k < n; k++) assert_string_not_equal(variant_id_at(k), id);
        assert_true(variant_formula(id) && strlen(variant_formula(id)) > 10);
        Config c, t;
        apply_small(&c, id);
        assert_string_equal(c.variant, id);
        char *text = text_without_variant(&c);
        if (strcmp(id, "baseline") && !strcmp(text, base_text))
            fail_msg("%s changes no setting of the baseline", id);
        free(text);
        tu_load_preset(&t, "tiny");
        assert_int_equal(config_apply_variant(&t, id, err, sizeof err), 0);
        tu_resolve_ok(&t, id);
    }
    assert_true(n > 1);
    assert_null(variant_id_at(n));
    assert_null(variant_id_at(-1));
    assert_null(variant_formula("nope"));
    free(base_text);
    free(doc);
}

/* What docs/variants.md says some ids change, spot-checked. */
static void test_catalog_fields(void **state) {
    (void)state;
    Config c;
    apply_small(&c, "g2-head");
    assert_int_equal(c.gate_pos, GATE_G2);
    assert_int_equal(c.gate_gran, GRAN_HEAD);
    apply_small(&c, "g1-const");
    assert_int_equal(c.gate_pos, GATE_G1);
    assert_int_equal(c.gate_input, GIN_CONST);
    apply_small(&c, "g5-elem");
    assert_int_equal(c.gate_pos, GATE_G5);
    apply_small(&c, "g1-shared");
    assert_int_equal(c.gate_shared, 1);
    assert_int_equal(c.gate_gran, GRAN_ELEM);
    apply_small(&c, "g1-add-silu");
    assert_int_equal(c.gate_form, FORM_ADD);
    assert_int_equal(c.gate_act, ACT_SILU);
    apply_small(&c, "g1-ns");
    assert_int_equal(c.gate_act, ACT_NS_SIGMOID);
    apply_small(&c, "sdpa-rmsnorm");
    assert_int_equal(c.y_mod, YMOD_RMSNORM);
    assert_int_equal(c.gate_pos, GATE_NONE);
    apply_small(&c, "softmax1");
    assert_int_equal(c.normaliser, NORMZ_SOFTMAX1);
    assert_string_equal(normaliser_name(c.normaliser), "softmax1");
    apply_small(&c, "sink-token");
    assert_int_equal(c.sink_token, 1);
    assert_int_equal(c.max_pos, c.seq_len + 1);
    apply_small(&c, "kv-bias");
    assert_int_equal(c.kv_bias, 1);
    apply_small(&c, "head-gate-linear");
    assert_int_equal(c.gate_input, GIN_HEADSLICE);
    assert_int_equal(c.gate_gran, GRAN_HEAD);
    apply_small(&c, "softpick");
    assert_int_equal(c.normaliser, NORMZ_SOFTPICK);
    apply_small(&c, "diff-attn");
    assert_int_equal(c.diff_attn, 1);
    assert_int_equal(c.y_mod, YMOD_RMSNORM);
    apply_small(&c, "ssmax");
    assert_int_equal(c.ssmax, 1);
    assert_int_equal(c.diff_attn, 0);
    apply_small(&c, "stickbreak");
    assert_int_equal(c.normaliser, NORMZ_STICKBREAK);
    assert_string_equal(normaliser_name(c.normaliser), "stickbreak");
    apply_small(&c, "fox");
    assert_int_equal(c.fox, 1);
    apply_small(&c, "registers");
    assert_int_equal(c.sink_token, 4);
    assert_int_equal(c.max_pos, c.seq_len + 4);
    apply_small(&c, "g1-head-narrow");
    assert_int_equal(c.gate_in_dim, 12);
    assert_int_equal(c.gate_gran, GRAN_HEAD);
    apply_small(&c, "g1-head-2sig");
    assert_int_equal(c.gate_act, ACT_2SIGMOID);
    assert_int_equal(c.gate_init, GINIT_ZERO);
    assert_int_equal(c.gate_in_dim, 0);
    apply_small(&c, "g1-softplus");
    assert_int_equal(c.gate_act, ACT_SOFTPLUS);
    assert_int_equal(c.gate_gran, GRAN_ELEM);
    apply_small(&c, "gated-norm");
    assert_int_equal(c.gated_norm, 16);
    apply_small(&c, "xsa");
    assert_int_equal(c.xsa, 1);
    assert_int_equal(c.gate_pos, GATE_NONE);
    assert_string_equal(gate_pos_name(GATE_G3), "g3");

    /* Applying baseline after a variant clears every gate field. */
    assert_int_equal(config_apply_variant(&c, "head-gate-linear", err, sizeof err), 0);
    assert_int_equal(config_apply_variant(&c, "baseline", err, sizeof err), 0);
    assert_int_equal(c.gate_pos, GATE_NONE);
    assert_int_equal(c.gate_input, GIN_FULL);
    assert_int_equal(c.normaliser, NORMZ_SOFTMAX);

    assert_int_equal(config_apply_variant(&c, "g7", err, sizeof err), -1);
    expect_err("unknown id", "unknown variant id 'g7'");
}

/* Parameter-matched baselines: shapes relative to the base. */
static void test_param_matched(void **state) {
    (void)state;
    Config base, c;
    tu_load_preset(&base, "small");
    config_resolve(&base);
    assert_int_equal(base.n_heads, 4);
    assert_int_equal(base.n_kv_heads, 2);
    assert_int_equal(base.d_ff, 192); /* round(8/3 * 64) = 171 -> 192 */

    apply_small(&c, "more-kv-heads");
    assert_int_equal(c.n_kv_heads, 4);
    assert_int_equal(c.gate_pos, GATE_NONE);

    /* GQA: +H/2 query heads, kv fixed, head_dim fixed. */
    apply_small(&c, "more-q-heads");
    assert_int_equal(c.n_heads, 6);
    assert_int_equal(c.n_kv_heads, 2);
    assert_int_equal(c.head_dim, 16);

    /* g1-elem adds d*H*dh = 4096 per layer; SwiGLU adds 3*d per unit of
     * d_ff: 4096/192 = 21.3 -> 24. */
    apply_small(&c, "wider-ffn");
    assert_int_equal(c.d_ff, 216);
    apply_small(&c, "g1-elem-matched");
    assert_int_equal(c.d_ff, 168);
    assert_int_equal(c.gate_pos, GATE_G1);

    /* Reference (MHA, d 128): more-kv-heads is refused, cfg untouched. */
    tu_load_preset(&c, "reference");
    Config before = c;
    assert_int_equal(config_apply_variant(&c, "more-kv-heads", err, sizeof err), -1);
    expect_err("non-GQA", "GQA");
    assert_memory_equal(&c, &before, sizeof c);

    /* MHA more-q-heads: kv follows, so +H/4 heads. */
    assert_int_equal(config_apply_variant(&c, "more-q-heads", err, sizeof err), 0);
    tu_resolve_ok(&c, "ref more-q-heads");
    assert_int_equal(c.n_heads, 5);
    assert_int_equal(c.n_kv_heads, 5);
    assert_int_equal(c.head_dim, 32);
    assert_int_equal(c.d_model, 128);

    /* 128*128 / (3*128) = 42.7 -> 40; with GELU 128*128/(2*128) = 64. */
    tu_load_preset(&c, "reference");
    assert_int_equal(config_apply_variant(&c, "wider-ffn", err, sizeof err), 0);
    assert_int_equal(c.d_ff, 392);
    long added = 3L * 128 * 40, gate = 128L * 128;
    assert_true(labs(added - gate) * 100 < gate * 10);
    tu_load_preset(&c, "reference");
    assert_int_equal(config_set(&c, "mlp=gelu", err, sizeof err), 0);
    assert_int_equal(config_apply_variant(&c, "g1-elem-matched", err, sizeof err), 0);
    assert_int_equal(c.d_ff, 512 - 64);

    /* A d_ff too small to narrow is refused. */
    tu_load_preset(&c, "reference");
    c.d_ff = 16;
    assert_int_equal(config_apply_variant(&c, "g1-elem-matched", err, sizeof err), -1);
    expect_err("narrow", "d_ff 16");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_catalog_ids),    cmocka_unit_test(test_variant_labels),
        cmocka_unit_test(test_catalog_twins),  cmocka_unit_test(test_key_defaults),
        cmocka_unit_test(test_catalog_fields), cmocka_unit_test(test_param_matched),
        cmocka_unit_test(test_retired_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
