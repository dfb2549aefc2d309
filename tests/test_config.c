/* test_config.c: defaults, presets, INI errors, --set, round trip,
 * contradictions, impossible shapes and documented ranges. The variant
 * catalog's tests are test_catalog.c. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

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

/* Every gate activation has its row of GATE_ACTS under the gate_act key's
 * name of it: a row forgotten for a new activation fails here. The
 * properties the probe and the validator read: sigmoid and ns-sigmoid
 * scores are in [0, 1]; ns-sigmoid, 2sigmoid and softplus only multiply. */
static void test_gate_act_rows(void **state) {
    (void)state;
    const char *const *names = config_key_vocab("gate_act");
    int n = 0;
    while (names[n]) n++;
    assert_int_equal(n, GATE_ACT_COUNT);
    for (int k = 0; k < GATE_ACT_COUNT; k++) {
        assert_non_null(GATE_ACTS[k].name);
        assert_string_equal(GATE_ACTS[k].name, names[k]);
        assert_int_equal(GATE_ACTS[k].bounded, k == ACT_SIGMOID || k == ACT_NS_SIGMOID);
        assert_int_equal(GATE_ACTS[k].mult_only,
                         k == ACT_NS_SIGMOID || k == ACT_2SIGMOID || k == ACT_SOFTPLUS);
    }
}

static void test_presets(void **state) {
    (void)state;
    Config c;
    tu_load_preset(&c, "tiny");
    tu_resolve_ok(&c, "tiny");
    assert_int_equal(c.n_layers, 2);
    assert_int_equal(c.d_model, 32);
    assert_int_equal(c.n_heads, 2);
    assert_int_equal(c.seq_len, 32);
    assert_int_equal(c.batch_size, 4);
    assert_int_equal(c.shards, 8); /* the default: presets leave it out */
    assert_int_equal(c.steps, 60);
    assert_int_equal(c.data, DATA_BIGRAM);
    assert_int_equal(c.vocab_size, 65);
    assert_int_equal(c.eval_every, 20);
    assert_int_equal(c.ckpt_every, 20);
    assert_int_equal(c.probe_n, 4);
    assert_int_equal(c.warmup, 10);

    tu_load_preset(&c, "small");
    tu_resolve_ok(&c, "small");
    assert_int_equal(c.data, DATA_BIGRAM);
    assert_int_equal(c.bos, 1);
    assert_true(c.n_kv_heads < c.n_heads);
    assert_true(c.lr == 4e-2f); /* the searched default (experiments/README.md) */
    assert_int_equal(c.bigram_triggers, 16);

    tu_load_preset(&c, "reference");
    tu_resolve_ok(&c, "reference");
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

    tu_load_preset(&c, "paper-small");
    tu_resolve_ok(&c, "paper-small");
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
    assert_int_equal(config_set(&c, "seed=2", err, sizeof err), -1);
    expect_err("set", "keys like it: bigram_seed, init_seed, data_seed");
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
        tu_load_preset(&c, "small");
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

/* A checkpoint's config text against the text of a resume: equal, or an
 * older build's text lacking a key the resume has at its default (shards),
 * is the same; a changed value, a key older text lacks set off its default,
 * or a retired key's line is not. */
static void test_text_same(void **state) {
    (void)state;
    static char now[1 << 16], was[1 << 16], other[1 << 16];
    Config c;
    tu_load_preset(&c, "tiny");
    config_resolve(&c);
    assert_int_equal(config_to_text(&c, now, sizeof now), 0);
    assert_true(config_text_same(now, now));
    char *line = strstr(now, "\nshards = 8\n");
    assert_non_null(line);
    snprintf(was, sizeof was, "%.*s%s", (int)(line - now), now, line + strlen("\nshards = 8"));
    assert_true(config_text_same(was, now));  /* a build before the key */
    assert_false(config_text_same(now, was)); /* a line the resume lacks */
    c.shards = 16;
    assert_int_equal(config_to_text(&c, other, sizeof other), 0);
    assert_false(config_text_same(was, other)); /* the key off its default */
    assert_false(config_text_same(now, other));
    line = strstr(was, "\nthreads = 1\n");
    assert_non_null(line);
    snprintf(other, sizeof other, "%.*s\nreproducible = 1%s", (int)(line - was), was, line);
    assert_false(config_text_same(other, now)); /* a retired key */
    line = strstr(was, "steps = 60\n");
    assert_non_null(line);
    line[strlen("steps = ")] = '7';
    assert_false(config_text_same(was, now)); /* a changed value */
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
    tu_preset_path(path, sizeof path, "tiny");
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
    assert_int_equal(rows, 41); /* every int and float key */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),          cmocka_unit_test(test_gate_act_rows),
        cmocka_unit_test(test_presets),           cmocka_unit_test(test_unknown_key),
        cmocka_unit_test(test_bad_values),        cmocka_unit_test(test_set),
        cmocka_unit_test(test_roundtrip),         cmocka_unit_test(test_contradictions),
        cmocka_unit_test(test_impossible_shapes), cmocka_unit_test(test_documented_ranges),
        cmocka_unit_test(test_text_same),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
