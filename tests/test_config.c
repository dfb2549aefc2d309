/* test_config.c: defaults, presets, INI errors, --set, round trip, the
 * variant catalog, contradictions and impossible shapes. */
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

static void expect_load_fails(const char *text, const char *want1, const char *want2) {
    Config c;
    config_defaults(&c);
    err[0] = 0;
    assert_int_equal(config_load_string(&c, text, "t.ini", err, sizeof err), -1);
    expect_err(text, want1);
    if (want2) expect_err(text, want2);
    assert_null(strchr(err, '\n')); /* one line */
}

static void preset_path(char *buf, size_t len, const char *name) {
    /* meson sets GATELAB_SRC; by hand, try the usual working directories. */
    static const char *const roots[] = {"..", ".", "../.."};
    const char *src = getenv("GATELAB_SRC");
    snprintf(buf, len, "%s/experiments/%s.ini", src ? src : roots[0], name);
    for (int i = 1; !src && i < 3 && !file_exists(buf); i++)
        snprintf(buf, len, "%s/experiments/%s.ini", roots[i], name);
}

static void load_preset(Config *c, const char *name) {
    char path[1024];
    preset_path(path, sizeof path, name);
    config_defaults(c);
    if (config_load_file(c, path, err, sizeof err)) {
        print_error("%s\n", err);
        fail();
    }
}

static void resolve_ok(Config *c, const char *what) {
    config_resolve(c);
    if (config_validate(c, err, sizeof err)) {
        print_error("%s: %s\n", what, err);
        fail();
    }
}

/* ------------------------------------------------------------- defaults */

static void test_defaults(void **state) {
    (void)state;
    Config c;
    config_defaults(&c);
    assert_int_equal(config_validate(&c, err, sizeof err), 0);
    assert_int_equal(c.n_layers, 4);
    assert_int_equal(c.d_model, 128);
    assert_string_equal(c.variant, "baseline");
    assert_string_equal(c.data_dir, "data/brown");
    assert_int_equal(c.gate_pos, GATE_NONE);
    assert_true(c.lr == 3e-3f && c.beta2 == 0.95f && c.spike_factor == 1.25f);
    config_resolve(&c);
    assert_int_equal(c.head_dim, 32);
    assert_int_equal(c.d_ff, 352); /* round(8/3 * 128) = 341 -> 352 */
    assert_int_equal(c.vocab_size, 257);
    assert_int_equal(c.max_pos, 256);
    assert_int_equal(config_validate(&c, err, sizeof err), 0);

    config_defaults(&c);
    c.mlp = MLP_GELU;
    c.bos = 0;
    c.sink_token = 1;
    config_resolve(&c);
    assert_int_equal(c.d_ff, 512);
    assert_int_equal(c.vocab_size, 256);
    assert_int_equal(c.max_pos, 257);

    config_defaults(&c);
    c.data = DATA_BIGRAM;
    c.bigram_vocab = 10;
    config_resolve(&c);
    assert_int_equal(c.vocab_size, 11);

    config_defaults(&c);
    c.data = DATA_TOKENS;
    config_resolve(&c);
    assert_int_equal(c.vocab_size, 0); /* left to the data layer */
}

/* -------------------------------------------------------------- presets */

static void test_presets(void **state) {
    (void)state;
    Config c;
    load_preset(&c, "tiny");
    resolve_ok(&c, "tiny");
    assert_int_equal(c.n_layers, 2);
    assert_int_equal(c.d_model, 32);
    assert_int_equal(c.n_heads, 2);
    assert_int_equal(c.seq_len, 32);
    assert_int_equal(c.batch_size, 4);
    assert_int_equal(c.steps, 60);
    assert_int_equal(c.data, DATA_BIGRAM);
    assert_int_equal(c.vocab_size, 65);
    assert_int_equal(c.eval_every, 20);
    assert_int_equal(c.ckpt_every, 20);
    assert_int_equal(c.probe_n, 4);
    assert_int_equal(c.warmup, 10);

    load_preset(&c, "small");
    resolve_ok(&c, "small");
    assert_int_equal(c.data, DATA_BIGRAM);
    assert_int_equal(c.bos, 1);
    assert_true(c.n_kv_heads < c.n_heads);
    assert_true(c.lr == 4e-2f); /* the searched default (experiments/README.md) */
    assert_int_equal(c.bigram_triggers, 16);

    load_preset(&c, "reference");
    resolve_ok(&c, "reference");
    assert_int_equal(c.n_layers, 4);
    assert_int_equal(c.d_model, 128);
    assert_int_equal(c.n_heads, 4);
    assert_int_equal(c.n_kv_heads, 4);
    assert_int_equal(c.seq_len, 256);
    assert_int_equal(c.batch_size, 16);
    assert_int_equal(c.data, DATA_BROWN);
    assert_int_equal(c.vocab_size, 257);
    assert_int_equal(c.norm, NORM_RMS);
    assert_int_equal(c.pos, POS_ROPE);
    assert_int_equal(c.mlp, MLP_SWIGLU);
    assert_int_equal(c.d_ff, 352);

    load_preset(&c, "paper-small");
    resolve_ok(&c, "paper-small");
    assert_int_equal(c.n_layers, 8);
    assert_int_equal(c.d_model, 256);
    assert_int_equal(c.n_heads, 8);
    assert_int_equal(c.n_kv_heads, 4);
    assert_int_equal(c.data, DATA_BROWN);

    config_defaults(&c);
    assert_int_equal(config_load_file(&c, "/nonexistent/x.ini", err, sizeof err), -1);
    expect_err("missing file", "/nonexistent/x.ini");
}

/* ---------------------------------------------------------- INI errors */

static void test_unknown_key(void **state) {
    (void)state;
    expect_load_fails("[model]\nn_layers = 2\nfoo = 3\n", "t.ini:3:", "unknown key 'foo'");
    expect_load_fails("foo = 3\n", "t.ini:1: unknown key 'foo'", NULL);
    /* a key set twice is refused (last-wins would hide an edit), also
     * across sections; a `variant =` line starts a new scope, since the id
     * rewrites the shape keys above it */
    expect_load_fails("lr = 0.1\nsteps = 5\nlr = 0.2\n",
                      "t.ini:3:", "duplicate key 'lr' (first at line 1)");
    expect_load_fails("[model]\nseq_len = 8\n[train]\nseq_len = 9\n",
                      "t.ini:4:", "duplicate key 'seq_len' (first at line 2)");
    expect_load_fails("variant = g1-elem\nd_ff = 64\nvariant = baseline\n",
                      "t.ini:3:", "duplicate key 'variant'");
    {
        Config c;
        config_defaults(&c);
        assert_int_equal(config_load_string(&c, "d_ff = 96\nvariant = g1-elem\nd_ff = 64\n",
                                            "t.ini", err, sizeof err),
                         0);
        assert_int_equal(c.d_ff, 64);
    }

    /* Same from a real file: the message names the path. */
    char path[] = "/tmp/gatelab_cfg_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *fp = fdopen(fd, "w");
    fputs("; comment\n[train]\nsteps = 5\n\n[data]\nbogus_key = 1\n", fp);
    fclose(fp);
    Config c;
    config_defaults(&c);
    assert_int_equal(config_load_file(&c, path, err, sizeof err), -1);
    char want[64];
    snprintf(want, sizeof want, "%s:6: unknown key 'bogus_key'", path);
    expect_err("file", want);
    unlink(path);
}

static void test_bad_values(void **state) {
    (void)state;
    expect_load_fails("n_layers = abc\n", "t.ini:1:", "'n_layers': bad value 'abc'");
    expect_load_fails("\n\nd_model = -4\n", "t.ini:3:", "negative");
    expect_load_fails("norm = batch\n", "'batch'", "rms|layer");
    expect_load_fails("gate_act = tanh\n", "gate_act", "sigmoid|silu|identity|ns-sigmoid");
    expect_load_fails("lr = 1e-3x\n", "'lr'", "'1e-3x'");
    expect_load_fails("steps = 10 steps\n", "'steps'", "integer");
    expect_load_fails("n_layers = 99999999999\n", "n_layers", "integer");
    expect_load_fails("lr = 1e999\n", "'lr'", "finite");
    expect_load_fails("lr = nan\n", "'lr'", "finite");
    expect_load_fails("qk_norm = yes\n", "qk_norm", "0|1|true|false");
    expect_load_fails("bigram_seed = -1\n", "bigram_seed", "unsigned");
    expect_load_fails("n_heads =\n", "n_heads", "integer");
    expect_load_fails("variant = g9-elem\n", "t.ini:1:", "unknown variant id 'g9-elem'");

    /* Unknown section, syntax error, over-long line. */
    expect_load_fails("[model]\nd_model = 64\n[optim]\nlr = 1\n",
                      "t.ini:4:", "unknown section [optim]");
    expect_load_fails("[model]\nthis line has no equals sign\n",
                      "t.ini:2:", "expected 'key = value' or a [section]");
    char longline[400];
    memset(longline, 'a', sizeof longline);
    memcpy(longline, "data_dir = ", 11);
    strcpy(longline + 300, "\n");
    expect_load_fails(longline, "t.ini:1:", "longer than");
    /* the line limit holds whether or not a newline ends the last line (the
     * config fuzz target's property): a comment line of 199 characters is
     * refused both ways, one of INI_LINE_MAX loads both ways */
    for (int len = INI_LINE_MAX; len <= 199; len += 199 - INI_LINE_MAX)
        for (int nl = 0; nl < 2; nl++) {
            char edge[256], err[512];
            memset(edge, 'a', (size_t)len);
            memcpy(edge, "; ", 2);
            strcpy(edge + len, nl ? "\n" : "");
            Config e;
            config_defaults(&e);
            int rc = config_load_string(&e, edge, "edge.ini", err, sizeof err);
            if (len > INI_LINE_MAX && (rc == 0 || !strstr(err, "edge.ini:1: line longer than")))
                fail_msg("a %d-character line%s: rc %d, '%s'", len, nl ? " and newline" : "", rc,
                         rc ? err : "");
            if (len <= INI_LINE_MAX && rc != 0) fail_msg("a %d-character line: %s", len, err);
        }

    /* Good values in every syntax the parser accepts. */
    Config c;
    config_defaults(&c);
    assert_int_equal(
        config_load_string(&c,
                           "[model]\nqk_norm = true ; inline comment\ntied_embed = 1\n"
                           "norm = layer\n[variant]\nnormaliser = sink-logit\n"
                           "[data]\nbigram_seed = 18446744073709551615\n[train]\nlr = 2.5e-4\n",
                           "ok.ini", err, sizeof err),
        0);
    assert_int_equal(c.qk_norm, 1);
    assert_int_equal(c.tied_embed, 1);
    assert_int_equal(c.norm, NORM_LAYER);
    assert_int_equal(c.normaliser, NORMZ_SINK_LOGIT);
    assert_true(c.bigram_seed == 18446744073709551615ULL);
    assert_true(c.lr == 2.5e-4f);
}

/* --------------------------------------------------------------- --set */

static void test_set(void **state) {
    (void)state;
    Config c;
    config_defaults(&c);
    assert_int_equal(config_set(&c, "n_layers=3", err, sizeof err), 0);
    assert_int_equal(c.n_layers, 3);
    assert_int_equal(config_set(&c, "  lr = 0.5  ", err, sizeof err), 0);
    assert_true(c.lr == 0.5f);
    assert_int_equal(config_set(&c, "data_dir=my data/dir", err, sizeof err), 0);
    assert_string_equal(c.data_dir, "my data/dir");
    assert_int_equal(config_set(&c, "variant=g1-elem", err, sizeof err), 0);
    assert_int_equal(c.gate_pos, GATE_G1);
    assert_string_equal(c.variant, "g1-elem");

    assert_int_equal(config_set(&c, "nokey=1", err, sizeof err), -1);
    expect_err("set", "--set: unknown key 'nokey'");
    assert_int_equal(config_set(&c, "n_layers=x", err, sizeof err), -1);
    expect_err("set", "--set: key 'n_layers': bad value 'x'");
    assert_int_equal(config_set(&c, "n_layers", err, sizeof err), -1);
    expect_err("set", "key=value");
    assert_int_equal(config_set(&c, "variant=nope", err, sizeof err), -1);
    expect_err("set", "unknown variant id 'nope'");
    assert_int_equal(config_set(&c, "pos=sinusoid", err, sizeof err), -1);
    expect_err("set", "rope|learned|none");
    char big[CFG_STR + 20];
    memset(big, 'x', sizeof big);
    memcpy(big, "val_file=", 9);
    big[CFG_STR + 19] = 0;
    assert_int_equal(config_set(&c, big, err, sizeof err), -1);
    expect_err("set", "val_file");
    assert_int_equal(c.n_layers, 3); /* failures changed nothing */
    assert_string_equal(c.val_file, "");

    /* A variant resets the gate fields; keys after it override. */
    config_defaults(&c);
    assert_int_equal(
        config_load_string(&c, "variant = g1-elem\ngate_act = silu\n", "v.ini", err, sizeof err),
        0);
    assert_int_equal(c.gate_act, ACT_SILU);
    assert_int_equal(c.gate_pos, GATE_G1);
    assert_int_equal(
        config_load_string(&c, "gate_act = silu\nvariant = g2-head\n", "v.ini", err, sizeof err),
        0);
    assert_int_equal(c.gate_act, ACT_SIGMOID);
    assert_int_equal(c.gate_pos, GATE_G2);
    assert_int_equal(c.gate_gran, GRAN_HEAD);
}

/* ---------------------------------------------------------- round trip */

typedef struct {
    int n;
    char key[128][64];
    char val[128][CFG_STR + 8];
    int is_int[128], is_float[128];
} Visited;

static void collect(const char *k, const char *v, int is_int, int is_float, void *ctx) {
    Visited *vis = ctx;
    assert_true(vis->n < 128);
    snprintf(vis->key[vis->n], 64, "%s", k);
    snprintf(vis->val[vis->n], CFG_STR + 8, "%s", v);
    vis->is_int[vis->n] = is_int;
    vis->is_float[vis->n] = is_float;
    vis->n++;
}

static int find_visit(const Visited *v, const char *key) {
    for (int i = 0; i < v->n; i++)
        if (!strcmp(v->key[i], key)) return i;
    return -1;
}

/* to_text, load it back over defaults, and compare every visited key. */
static void roundtrip(const Config *a) {
    static char text[16384];
    static Visited va, vb;
    assert_int_equal(config_to_text(a, text, sizeof text), 0);
    Config b;
    config_defaults(&b);
    if (config_load_string(&b, text, "resolved", err, sizeof err)) {
        print_error("%s\n%s\n", err, text);
        fail();
    }
    memset(&va, 0, sizeof va);
    memset(&vb, 0, sizeof vb);
    config_visit(a, collect, &va);
    config_visit(&b, collect, &vb);
    assert_int_equal(va.n, vb.n);
    for (int i = 0; i < va.n; i++) {
        assert_string_equal(va.key[i], vb.key[i]);
        if (strcmp(va.val[i], vb.val[i])) {
            print_error("key %s: %s != %s\n", va.key[i], va.val[i], vb.val[i]);
            fail();
        }
    }
    /* Floats bit-exact, not just equal as text. */
    static const size_t floats[] = {
        offsetof(Config, rope_base), offsetof(Config, yarn_scale),  offsetof(Config, norm_eps),
        offsetof(Config, init_std),  offsetof(Config, clip_alpha),  offsetof(Config, softpick_eps),
        offsetof(Config, lr),        offsetof(Config, min_lr_frac), offsetof(Config, weight_decay),
        offsetof(Config, beta1),     offsetof(Config, beta2),       offsetof(Config, adam_eps),
        offsetof(Config, grad_clip), offsetof(Config, spike_factor)};
    for (size_t i = 0; i < sizeof floats / sizeof floats[0]; i++)
        assert_memory_equal((const char *)a + floats[i], (const char *)&b + floats[i],
                            sizeof(float));
    assert_true(a->bigram_seed == b.bigram_seed && a->init_seed == b.init_seed);
    assert_string_equal(a->variant, b.variant);
    assert_string_equal(a->data_dir, b.data_dir);
    assert_string_equal(a->train_file, b.train_file);
}

static void test_roundtrip(void **state) {
    (void)state;
    Config c;
    config_defaults(&c);
    assert_int_equal(config_set(&c, "variant=g1-ns", err, sizeof err), 0);
    c.lr = 0.1f;
    c.min_lr_frac = 1.0f / 3.0f;
    c.norm_eps = 1.17549435e-38f;
    c.rope_base = 500000.06f;
    c.weight_decay = nextafterf(0.1f, 1.0f); /* one ulp above 0.1 */
    c.beta2 = 0.999f;
    c.adam_eps = 3.3333333e-9f;
    c.clip_alpha = 1e-30f;
    c.init_seed = 123456789012345ULL;
    c.bigram_seed = 18446744073709551615ULL;
    c.pos = POS_LEARNED;
    c.max_pos = 1024;
    c.data = DATA_TEXT;
    str_copy(c.data_dir, sizeof c.data_dir, "my data/dir");
    str_copy(c.train_file, sizeof c.train_file, "a b.txt");
    config_resolve(&c);
    assert_int_equal(config_validate(&c, err, sizeof err), 0);
    roundtrip(&c);

    /* Every catalog id on the small preset, including shape changers. */
    for (int i = 0; variant_id_at(i); i++) {
        load_preset(&c, "small");
        assert_int_equal(config_apply_variant(&c, variant_id_at(i), err, sizeof err), 0);
        config_resolve(&c);
        roundtrip(&c);
    }

    char small[64];
    assert_int_equal(config_to_text(&c, small, sizeof small), -1);

    /* Visit: types and names. */
    static Visited v;
    memset(&v, 0, sizeof v);
    config_defaults(&c);
    config_visit(&c, collect, &v);
    int i = find_visit(&v, "n_layers");
    assert_true(i >= 0 && v.is_int[i] && !v.is_float[i]);
    assert_string_equal(v.val[i], "4");
    i = find_visit(&v, "lr");
    assert_true(i >= 0 && v.is_float[i] && !v.is_int[i]);
    assert_string_equal(v.val[i], "0.003"); /* shortest exact form */
    i = find_visit(&v, "norm");
    assert_true(i >= 0 && !v.is_int[i] && !v.is_float[i]);
    assert_string_equal(v.val[i], "rms");
    i = find_visit(&v, "variant");
    assert_true(i >= 0);
    assert_string_equal(v.val[i], "baseline");
    assert_int_equal(find_visit(&v, "variant_name"), -1);
    assert_true(find_visit(&v, "spike_factor") >= 0);
    assert_true(v.n > 55);
}

/* ------------------------------------------------------------- catalog */

static void apply_small(Config *c, const char *id) {
    load_preset(c, "small");
    if (config_apply_variant(c, id, err, sizeof err)) {
        print_error("%s: %s\n", id, err);
        fail();
    }
    resolve_ok(c, id);
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
        load_preset(&c, "tiny");
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

/* The C catalog is the one list of ids: the PyTorch twin's VARIANTS (same
 * ids, same order), every id row of docs/variants.md's tables, and the
 * fixture files (one var-ID.h5 per id, none for an id C lacks) agree with
 * it. */
static void test_catalog_twins(void **state) {
    (void)state;
    char root[1024], path[1200];
    preset_path(root, sizeof root, "tiny");
    *strrchr(root, '/') = 0;
    *strrchr(root, '/') = 0;
    /* the twin: ("ID", ... lines between "VARIANTS = OrderedDict([" and "])" */
    snprintf(path, sizeof path, "%s/tests/reference/gatelab_ref.py", root);
    char *py = tu_slurp_ok(path, NULL);
    char *p = strstr(py, "VARIANTS = OrderedDict([");
    assert_non_null(p);
    char *end = strstr(p, "\n])");
    assert_non_null(end);
    int k = 0;
    for (p = strchr(p, '\n'); p && p < end; p = strchr(p + 1, '\n')) {
        const char *q = p + 1;
        while (*q == ' ') q++;
        if (strncmp(q, "(\"", 2)) continue;
        q += 2;
        size_t n = strcspn(q, "\"");
        const char *want = variant_id_at(k);
        if (!want) fail_msg("gatelab_ref.py lists %.*s beyond the C catalog", (int)n, q);
        if (strlen(want) != n || strncmp(want, q, n))
            fail_msg("gatelab_ref.py: id %d is %.*s, the C catalog's is %s", k, (int)n, q, want);
        k++;
    }
    if (variant_id_at(k)) fail_msg("gatelab_ref.py lacks %s", variant_id_at(k));
    free(py);
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
    preset_path(path, sizeof path, "tiny");
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
        load_preset(&t, "tiny");
        assert_int_equal(config_apply_variant(&t, id, err, sizeof err), 0);
        resolve_ok(&t, id);
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
    load_preset(&base, "small");
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
    load_preset(&c, "reference");
    Config before = c;
    assert_int_equal(config_apply_variant(&c, "more-kv-heads", err, sizeof err), -1);
    expect_err("non-GQA", "GQA");
    assert_memory_equal(&c, &before, sizeof c);

    /* MHA more-q-heads: kv follows, so +H/4 heads. */
    assert_int_equal(config_apply_variant(&c, "more-q-heads", err, sizeof err), 0);
    resolve_ok(&c, "ref more-q-heads");
    assert_int_equal(c.n_heads, 5);
    assert_int_equal(c.n_kv_heads, 5);
    assert_int_equal(c.head_dim, 32);
    assert_int_equal(c.d_model, 128);

    /* 128*128 / (3*128) = 42.7 -> 40; with GELU 128*128/(2*128) = 64. */
    load_preset(&c, "reference");
    assert_int_equal(config_apply_variant(&c, "wider-ffn", err, sizeof err), 0);
    assert_int_equal(c.d_ff, 392);
    long added = 3L * 128 * 40, gate = 128L * 128;
    assert_true(labs(added - gate) * 100 < gate * 10);
    load_preset(&c, "reference");
    assert_int_equal(config_set(&c, "mlp=gelu", err, sizeof err), 0);
    assert_int_equal(config_apply_variant(&c, "g1-elem-matched", err, sizeof err), 0);
    assert_int_equal(c.d_ff, 512 - 64);

    /* A d_ff too small to narrow is refused. */
    load_preset(&c, "reference");
    c.d_ff = 16;
    assert_int_equal(config_apply_variant(&c, "g1-elem-matched", err, sizeof err), -1);
    expect_err("narrow", "d_ff 16");
}

/* ------------------------------------------------------- contradictions */

static void expect_invalid(const char *sets, const char *want) {
    Config c;
    config_defaults(&c);
    char buf[512];
    snprintf(buf, sizeof buf, "%s", sets);
    for (char *kv = strtok(buf, ","); kv; kv = strtok(NULL, ",")) {
        if (config_set(&c, kv, err, sizeof err)) {
            /* refused when set (a key's range): the error names key and value */
            char key[64], want_key[160];
            snprintf(key, sizeof key, "%.*s", (int)strcspn(kv, "="), kv);
            snprintf(want_key, sizeof want_key, "key '%s': bad value '%s'", key,
                     kv + strlen(key) + 1);
            if (strstr(want, key) && strstr(err, want_key)) return;
            print_error("%s: %s\n", kv, err);
            fail();
        }
    }
    config_resolve(&c);
    err[0] = 0;
    if (config_validate(&c, err, sizeof err) != -1) {
        print_error("'%s' was accepted\n", sets);
        fail();
    }
    expect_err(sets, want);
}

static void expect_valid(const char *sets) {
    Config c;
    config_defaults(&c);
    char buf[512];
    snprintf(buf, sizeof buf, "%s", sets);
    for (char *kv = strtok(buf, ","); kv; kv = strtok(NULL, ","))
        assert_int_equal(config_set(&c, kv, err, sizeof err), 0);
    config_resolve(&c);
    if (config_validate(&c, err, sizeof err)) {
        print_error("'%s' refused: %s\n", sets, err);
        fail();
    }
}

static void test_contradictions(void **state) {
    (void)state;
    expect_invalid("variant=g1-head,gate_shared=1", "head-shared");
    expect_invalid("variant=g1-ns,gate_form=add", "ns-sigmoid");
    expect_invalid("variant=g1-add-silu,gate_gran=head", "headwise");
    expect_invalid("variant=g1-const,gate_form=add", "const");
    expect_invalid("variant=head-gate-linear,gate_pos=g2", "headslice");
    expect_invalid("variant=head-gate-linear,gate_gran=elem", "headslice");
    expect_invalid("variant=head-gate-linear,d_model=130,head_dim=32",
                   "d_model 130 divisible by n_heads 4");
    expect_invalid("variant=g1-const,gate_pos=g4", "const");
    expect_invalid("variant=g1-const,gate_gran=head", "const");
    expect_invalid("variant=g1-shared,gate_pos=g3", "g1 or g2");
    expect_invalid("variant=g1-shared,gate_pos=g5", "g1 or g2");
    expect_invalid("variant=kv-bias,sink_token=1", "sink_token");
    expect_invalid("variant=diff-attn,normaliser=softmax1", "diff_attn");
    expect_invalid("variant=diff-attn,kv_bias=1", "diff_attn");
    expect_invalid("variant=diff-attn,head_dim=5,pos=none", "even");
    expect_invalid("variant=fox,normaliser=sigmoid", "fox");
    expect_invalid("variant=fox,diff_attn=1", "fox");
    expect_invalid("variant=stickbreak,kv_bias=1", "kv_bias");
    expect_invalid("variant=registers,pos=learned,max_pos=257,seq_len=256", "register tokens");
    expect_invalid("variant=kv-bias,normaliser=sink-logit", "sink-logit");
    expect_invalid("variant=kv-bias,normaliser=softpick", "kv_bias");
    expect_invalid("variant=g1-elem,y_mod=rmsnorm", "y_mod");
    expect_invalid("variant=g1-softplus,gate_form=add", "gate_act softplus");
    expect_invalid("variant=gated-norm,norm_place=post", "norm_place post");
    expect_valid("variant=gated-norm,norm_place=sandwich");
    expect_invalid("variant=g1-head-2sig,gate_gran=elem,gate_form=add", "gate_act 2sigmoid");
    expect_invalid("variant=head-gate-linear,gate_in_dim=12",
                   "gate_in_dim 12 needs gate_input full");
    expect_invalid("variant=g1-head-narrow,d_model=12,head_dim=4",
                   "gate_in_dim 12 must be below d_model 12");
    /* Gate keys without a gate are moot, and y_mod with a G2 gate is fine. */
    expect_valid("gate_form=add,gate_gran=head,gate_act=ns-sigmoid");
    expect_valid("variant=g2-elem,y_mod=silu");
    expect_valid("variant=g2-shared");
    expect_valid("variant=registers,sink_token=16");
    {
        Config r;
        config_defaults(&r);
        assert_int_equal(config_set(&r, "sink_token=17", err, sizeof err), -1);
        assert_non_null(strstr(err, "outside 0..16"));
    }
    expect_valid("variant=ssmax,normaliser=sigmoid");
    expect_valid("variant=fox,ssmax=1");
}

static void test_impossible_shapes(void **state) {
    (void)state;
    expect_invalid("d_model=130", "d_model 130 is not divisible by n_heads 4");
    expect_valid("d_model=130,head_dim=32");
    expect_invalid("n_kv_heads=3", "n_kv_heads 3 does not divide n_heads 4");
    expect_invalid("pos=learned,seq_len=512,max_pos=256", "seq_len 512 exceeds max_pos 256");
    expect_valid("pos=learned,seq_len=512");
    expect_invalid("pos=learned,max_pos=256,variant=sink-token", "exceeds max_pos 256");
    expect_invalid("head_dim=15", "RoPE needs an even head_dim, got 15");
    expect_valid("head_dim=15,pos=none");
    expect_invalid("n_layers=65", "n_layers 65");
    expect_invalid("n_layers=0", "n_layers 0");
    expect_invalid("d_model=0", "d_model 0");
    expect_invalid("n_heads=0", "n_heads 0");
    expect_invalid("seq_len=0", "seq_len 0");
    expect_invalid("threads=65", "threads 65");
    expect_invalid("threads=0", "threads 0");
    expect_invalid("lr=0", "lr 0");
    expect_invalid("steps=0", "steps 0");
    expect_invalid("batch_size=0", "batch_size 0");
    expect_invalid("beta1=1", "beta1 1");
    expect_invalid("beta2=0", "beta2 0");
    expect_invalid("yarn_scale=0.5", "yarn_scale");
    expect_invalid("data=bigram,bigram_triggers=64", "bigram_triggers 64");
    expect_invalid("data=tokens", "train_file");
    expect_invalid("vocab_size=100", "vocab_size 100");
    /* ranges from the key table: one below, one above */
    expect_invalid("seq_len=1", "seq_len 1");
    expect_invalid("seq_len=65537", "seq_len 65537");
    expect_invalid("probe_n=65537", "probe_n 65537");
    expect_invalid("eval_batches=100001", "eval_batches 100001");
    expect_invalid("batch_size=65537", "batch_size 65537");
    expect_invalid("lr=1e5", "lr 1e5");
    expect_valid("seq_len=2");
    /* a value set in code, not parsed, is held to the same range */
    Config c;
    config_defaults(&c);
    c.seq_len = 1;
    config_resolve(&c);
    assert_int_equal(config_validate(&c, err, sizeof err), -1);
    expect_err("seq_len=1 in code", "seq_len 1 is outside 2..65536");
}

/* The ranges table of experiments/README.md is what the key table holds:
 * for each row, the ends inside the range are accepted and the values
 * just outside refused (by config_set, which checks nothing but the value). */
static int set_ok(const char *key, double v) {
    char kv[128];
    Config c;
    config_defaults(&c);
    snprintf(kv, sizeof kv, "%s=%.17g", key, v);
    return config_set(&c, kv, err, sizeof err) == 0;
}

static void test_documented_ranges(void **state) {
    (void)state;
    char path[1024];
    preset_path(path, sizeof path, "tiny");
    strcpy(strrchr(path, '/'), "/README.md");
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[512];
    int rows = 0;
    while (fgets(line, sizeof line, f)) {
        char key[64], open, close;
        double lo, hi;
        char hs[32], ls[32];
        if (sscanf(line, "| `%63[a-z_0-9]` | %*s | %31[0-9e.] .. %31[0-9e^] |", key, ls, hs) == 3) {
            lo = atof(ls);
            hi = strchr(hs, '^') ? 1e9 : atof(hs); /* "10^9" */
            if (!set_ok(key, lo) || !set_ok(key, hi))
                fail_msg("%s: %g..%g refused: %s", key, lo, hi, err);
            if (lo > 0 && set_ok(key, lo - 1)) fail_msg("%s: %g accepted", key, lo - 1);
            if (set_ok(key, hi + 1)) fail_msg("%s: %g accepted", key, hi + 1);
            rows++;
        } else if (sscanf(line, "| `%63[a-z_0-9]` | %*s | %c%lf, %lf%c |", key, &open, &lo, &hi,
                          &close) == 5 &&
                   (open == '(' || open == '[') && close == ']') {
            if (set_ok(key, lo) != (open == '['))
                fail_msg("%s: lower end %g %s", key, lo, open == '[' ? "refused" : "accepted");
            if (!set_ok(key, hi)) fail_msg("%s: %g refused: %s", key, hi, err);
            if (set_ok(key, hi * 1.01 + 1e-6)) fail_msg("%s: above %g accepted", key, hi);
            rows++;
        }
    }
    fclose(f);
    assert_int_equal(rows, 40); /* every int and float key */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_presets),
        cmocka_unit_test(test_unknown_key),
        cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_set),
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_catalog_ids),
        cmocka_unit_test(test_variant_labels),
        cmocka_unit_test(test_catalog_twins),
        cmocka_unit_test(test_key_defaults),
        cmocka_unit_test(test_catalog_fields),
        cmocka_unit_test(test_param_matched),
        cmocka_unit_test(test_contradictions),
        cmocka_unit_test(test_impossible_shapes),
        cmocka_unit_test(test_documented_ranges),
        cmocka_unit_test(test_retired_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
