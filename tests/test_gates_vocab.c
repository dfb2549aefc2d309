/* test_gates_vocab.c: `gatelab gates RUN --vocab`, the layer-0 gate over
 * the vocabulary (docs/metrics.md): on tiny trained gated runs each
 * token's mean score against a direct computation from the run file's
 * weights (read here with HDF5 alone); on the gated Qwen3 fixtures,
 * inspected to run files, against the float64 recomputation from their
 * safetensors (tests/reference/make_hf_vocab_gate_fixture.py); the
 * summary fields of --json against the per-token values; the refusals
 * (an ungated run, an input-independent gate, --step with --vocab); a
 * recorded tokenizer's token text and a byte-level run's escaped bytes. */
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
#include <sys/stat.h>

#include "hf_inspect_fixture.h"
#include "testutil.h"

#define TOL 1e-5

static char dir[64];

/* Train experiments/tiny.ini with the --set words sets into dir/name. */
static void train(const char *name, const char *sets) {
    char log[256];
    snprintf(log, sizeof log, "%s/%s.log", dir, name);
    if (tu_run(log, "train --config %s/experiments/tiny.ini %s --quiet --out %s/%s", tu_src(), sets,
               dir, name) != 0)
        fail_msg("training %s failed: see %s", name, log);
}

static int setup(void **st) {
    (void)st;
    snprintf(dir, sizeof dir, "%s", tu_tmpdir());
    train("elem.h5", "--set variant=g1-elem");
    train("head.h5", "--set variant=g1-head --set sink_token=1 --set pos=learned");
    train("base.h5", "");
    train("const.h5", "--set variant=g1-const");
    char sets[1024];
    snprintf(sets, sizeof sets,
             "--set variant=g1-elem --set data=text --set train_file=%s/tests/reference/tokenizer/"
             "brown_sample.txt --set val_file=%s/tests/reference/tokenizer/brown_sample.txt",
             tu_src(), tu_src());
    train("bytes.h5", sets);
    return 0;
}

static int teardown(void **st) {
    (void)st;
    return tu_rmtree(dir);
}

/* `gates ARGS --vocab --json` parsed; the exit code must be 0. */
static json_t *vocab_json(const char *args) {
    char log[256];
    snprintf(log, sizeof log, "%s/json.out", dir);
    int rc = tu_run(log, "gates %s --vocab --json", args);
    size_t n;
    char *b = tu_slurp_ok(log, &n);
    if (rc != 0) fail_msg("gates %s --vocab: exit %d: %.300s", args, rc, b);
    /* the progress line is not printed with --json: stdout alone */
    json_error_t je;
    json_t *j = json_loads(b, 0, &je);
    if (!j) fail_msg("gates %s --vocab --json: not JSON (%s): %.300s", args, je.text, b);
    free(b);
    return j;
}

/* The JSON's token_mean as V doubles (V the "vocab" field). */
static double *token_means(const json_t *j, int *V) {
    *V = (int)json_integer_value(json_object_get(j, "vocab"));
    const json_t *a = json_object_get(j, "token_mean");
    assert_true(json_is_array(a));
    assert_int_equal(json_array_size(a), *V);
    double *m = malloc((size_t)*V * sizeof *m);
    for (int i = 0; i < *V; i++) m[i] = json_number_value(json_array_get(a, (size_t)i));
    return m;
}

/* ---- trained runs: the direct computation ---- */

static float *param(hid_t f, const char *name, size_t *n) {
    char path[256];
    snprintf(path, sizeof path, "params/%s", name);
    return tu_h5_read(f, path, H5T_NATIVE_FLOAT, sizeof(float), n);
}

/* Token v's mean of sigmoid(RMSNorm(E[v] + P[e]) W^T) over the gate's C
 * rows (P: the learned position of the first real token, after e
 * prepended ones; absent under RoPE). */
static double direct_mean(hid_t f, int v, int e, int *Vout) {
    size_t ne, nw, ng, np = 0;
    float *E = param(f, "tok_embed", &ne), *w = param(f, "layers.0.attn_norm.weight", &nw);
    float *G = param(f, "layers.0.attn.gate.w", &ng);
    float *P =
        H5Lexists(f, "params/pos_embed", H5P_DEFAULT) > 0 ? param(f, "pos_embed", &np) : NULL;
    const int d = (int)nw, C = (int)(ng / nw);
    *Vout = (int)(ne / nw);
    double x[256], ss = 0.0, sum = 0.0;
    assert_true(d <= 256);
    for (int j = 0; j < d; j++) {
        x[j] = E[(size_t)v * d + j] + (P ? P[(size_t)e * d + j] : 0.0);
        ss += x[j] * x[j];
    }
    const double r = 1.0 / sqrt(ss / d + 1e-5);
    for (int c = 0; c < C; c++) {
        double z = 0.0;
        for (int j = 0; j < d; j++) z += x[j] * r * w[j] * G[(size_t)c * d + j];
        sum += 1.0 / (1.0 + exp(-z));
    }
    free(E), free(w), free(G), free(P);
    return sum / C;
}

static void check_trained(const char *name, int e, int channels) {
    char run[256];
    snprintf(run, sizeof run, "%s/%s", dir, name);
    json_t *j = vocab_json(run);
    assert_int_equal(json_integer_value(json_object_get(j, "gate_channels")), channels);
    int V, Vd;
    double *m = token_means(j, &V);
    hid_t f = H5Fopen(run, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    double worst = 0.0;
    for (int v = 0; v < V; v++) {
        double want = direct_mean(f, v, e, &Vd);
        assert_int_equal(Vd, V);
        worst = fmax(worst, fabs(m[v] - want));
    }
    H5Fclose(f);
    if (worst > TOL) fail_msg("%s: token means off the direct computation by %g", name, worst);
    free(m);
    json_decref(j);
}

/* g1-elem (RoPE, 2 x 16 channels) and g1-head with a sink token and
 * learned positions (2 channels; the first real token at position 1). */
static void test_trained(void **s) {
    (void)s;
    check_trained("elem.h5", 0, 32);
    check_trained("head.h5", 1, 2);
}

/* ---- the summary fields of --json ---- */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* shut_share, mean, median and the two lists from token_mean. */
static void test_json_fields(void **s) {
    (void)s;
    char run[256];
    snprintf(run, sizeof run, "%s/elem.h5", dir);
    json_t *j = vocab_json(run);
    const char *keys[] = {"file",         "variant",   "layer",      "vocab", "gate_channels",
                          "gate_bounded", "threshold", "shut_share", "mean",  "median",
                          "most_open",    "most_shut", "token_mean"};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
        if (!json_object_get(j, keys[k])) fail_msg("--json lacks %s", keys[k]);
    assert_string_equal(json_string_value(json_object_get(j, "variant")), "g1-elem");
    int V;
    double *m = token_means(j, &V), *sorted = malloc((size_t)V * sizeof *sorted), sum = 0.0;
    long below = 0;
    for (int i = 0; i < V; i++) sum += m[i], below += m[i] < 0.1, sorted[i] = m[i];
    qsort(sorted, (size_t)V, sizeof *sorted, cmp_double);
    double median = V % 2 ? sorted[V / 2] : 0.5 * (sorted[V / 2 - 1] + sorted[V / 2]);
    assert_true(fabs(json_real_value(json_object_get(j, "threshold")) - 0.1) < 1e-12);
    assert_true(fabs(json_number_value(json_object_get(j, "shut_share")) - (double)below / V) <
                1e-9);
    assert_true(fabs(json_number_value(json_object_get(j, "mean")) - sum / V) < 1e-8);
    assert_true(fabs(json_number_value(json_object_get(j, "median")) - median) < 1e-8);
    const json_t *open = json_object_get(j, "most_open"), *shut = json_object_get(j, "most_shut");
    assert_int_equal(json_array_size(open), 10), assert_int_equal(json_array_size(shut), 10);
    for (int k = 0; k < 10; k++) {
        const json_t *o = json_array_get(open, (size_t)k), *c = json_array_get(shut, (size_t)k);
        int io = (int)json_integer_value(json_object_get(o, "id"));
        int ic = (int)json_integer_value(json_object_get(c, "id"));
        assert_true(fabs(m[io] - sorted[V - 1 - k]) < 1e-12);
        assert_true(fabs(m[ic] - sorted[k]) < 1e-12);
        assert_true(json_is_null(json_object_get(o, "text"))); /* bigram ids: no text */
    }
    free(m), free(sorted);
    json_decref(j);
}

/* ---- refusals ---- */

/* gates ARGS exits 2 with one line holding each of the needles. */
static void refused(const char *args, const char *n1, const char *n2) {
    char log[256];
    snprintf(log, sizeof log, "%s/refused.out", dir);
    assert_int_equal(tu_run(log, "gates %s", args), 2);
    size_t n;
    char *b = tu_slurp_ok(log, &n);
    if (tu_count_lines(log) != 1 || !strstr(b, n1) || !strstr(b, n2))
        fail_msg("gates %s: want one line naming '%s' and '%s', got: %s", args, n1, n2, b);
    free(b);
}

static void inspect(const char *src, const char *run, const char *input);

static void test_refusals(void **s) {
    (void)s;
    char a[512], run[256], fix[2048], input[600];
    /* a checkpoint without gates */
    snprintf(fix, sizeof fix, "%s/tests/reference/hf/qwen3-f32", tu_src());
    snprintf(a, sizeof a, "%s/ids3.txt", dir);
    static const int32_t ids[4] = {1, 5, 7, 9};
    hf_write_tokens(a, ids, 4, 1);
    snprintf(input, sizeof input, "--tokens %s", a);
    snprintf(run, sizeof run, "%s/plain.h5", dir);
    inspect(fix, run, input);
    snprintf(a, sizeof a, "%s --vocab", run);
    refused(a, run, "variant pretrained:Qwen3ForCausalLM:gate-none has no attention gate");
    snprintf(run, sizeof run, "%s/base.h5", dir);
    snprintf(a, sizeof a, "%s --vocab", run);
    refused(a, run, "variant baseline has no attention gate");
    snprintf(run, sizeof run, "%s/const.h5", dir);
    snprintf(a, sizeof a, "%s --vocab", run);
    refused(a, run, "variant g1-const's gate reads no token");
    snprintf(a, sizeof a, "%s/elem.h5 --vocab --step 20", dir);
    refused(a, "--step", "--vocab");
    snprintf(a, sizeof a, "%s/elem.h5 --threads 2", dir);
    refused(a, "--threads", "--vocab");
}

/* ---- inspected checkpoints ---- */

/* Inspect the checkpoint directory src, reading input, into run. */
static void inspect(const char *src, const char *run, const char *input) {
    char log[256];
    snprintf(log, sizeof log, "%s/inspect.out", dir);
    if (tu_run(log, "inspect %s %s --out %s --threads 1", src, input, run) != 0)
        fail_msg("inspect %s failed: see %s", src, log);
}

/* Each gated Qwen3 fixture against its vocab_gates.h5. */
static void test_checkpoints(void **s) {
    (void)s;
    static const char *fixtures[] = {"qwen3-elementwise-f32-sharded", "qwen3-elementwise-bf16",
                                     "qwen3-headwise-f32", "qwen3-headwise-bf16-sharded"};
    static const int32_t ids[8] = {1, 5, 7, 9, 11, 13, 2, 4};
    char path[256], input[300];
    snprintf(path, sizeof path, "%s/ids.txt", dir);
    hf_write_tokens(path, ids, 8, 2);
    snprintf(input, sizeof input, "--tokens %s", path);
    for (size_t i = 0; i < sizeof fixtures / sizeof *fixtures; i++) {
        char fix[2048], ref[2100], run[256];
        snprintf(fix, sizeof fix, "%s/tests/reference/hf/%s", tu_src(), fixtures[i]);
        snprintf(ref, sizeof ref, "%s/vocab_gates.h5", fix);
        snprintf(run, sizeof run, "%s/%s.h5", dir, fixtures[i]);
        inspect(fix, run, input);
        json_t *j = vocab_json(run);
        int V;
        double *m = token_means(j, &V);
        hid_t f = H5Fopen(ref, H5F_ACC_RDONLY, H5P_DEFAULT);
        size_t n;
        double *want = tu_h5_read(f, "token_mean", H5T_NATIVE_DOUBLE, sizeof(double), &n);
        H5Fclose(f);
        assert_int_equal(n, V);
        for (int v = 0; v < V; v++)
            if (fabs(m[v] - want[v]) > TOL)
                fail_msg("%s: token %d: %.9f, the reference %.9f", fixtures[i], v, m[v], want[v]);
        free(m), free(want);
        json_decref(j);
    }
}

/* A byte-level BPE tokenizer.json over the 128 ids of the Qwen3 fixtures:
 * h e l o Ġ w r d at 1..8, "t<id>" for every other id. */
static void write_tokenizer(const char *path) {
    static const char *chars[] = {"h", "e", "l", "o", "\\u0120", "w", "r", "d"};
    char buf[8192];
    size_t o = (size_t)snprintf(
        buf, sizeof buf,
        "{\"version\": \"1.0\", \"added_tokens\": [], \"normalizer\": null, \"pre_tokenizer\": "
        "{\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"trim_offsets\": true, "
        "\"use_regex\": true}, \"post_processor\": null, \"decoder\": null, \"model\": "
        "{\"type\": \"BPE\", \"dropout\": null, \"unk_token\": null, \"fuse_unk\": false, "
        "\"byte_fallback\": false, \"vocab\": {");
    for (int id = 0; id < 128; id++) {
        if (id >= 1 && id <= 8)
            o += (size_t)snprintf(buf + o, sizeof buf - o, "\"%s\": %d", chars[id - 1], id);
        else o += (size_t)snprintf(buf + o, sizeof buf - o, "\"t%d\": %d", id, id);
        o += (size_t)snprintf(buf + o, sizeof buf - o, id < 127 ? ", " : "");
    }
    o += (size_t)snprintf(buf + o, sizeof buf - o, "}, \"merges\": []}}");
    tu_write_file(path, buf, o);
}

/* An inspected --text run lists each token as its tokenizer spells it. */
static void test_token_text(void **s) {
    (void)s;
    char cp[256], path[400], run[256];
    snprintf(cp, sizeof cp, "%s/snap", dir);
    assert_int_equal(mkdir(cp, 0755), 0);
    tu_hf_fixture(cp, "qwen3-headwise-f32", "config.json");
    tu_hf_fixture(cp, "qwen3-headwise-f32", "model.safetensors");
    snprintf(path, sizeof path, "%s/tokenizer.json", cp);
    write_tokenizer(path);
    snprintf(path, sizeof path, "%s/t.txt", dir);
    tu_write_file(path, "hello world hello world hello world", 35);
    char input[500];
    snprintf(input, sizeof input, "--text %s --seq-len 8 --n-seq 2", path);
    snprintf(run, sizeof run, "%s/text.h5", dir);
    inspect(cp, run, input);
    json_t *j = vocab_json(run);
    const char *lists[2] = {"most_open", "most_shut"};
    for (int l = 0; l < 2; l++)
        for (int k = 0; k < 10; k++) {
            const json_t *e = json_array_get(json_object_get(j, lists[l]), (size_t)k);
            int id = (int)json_integer_value(json_object_get(e, "id"));
            char want[16];
            static const char *chars[] = {"h", "e", "l", "o", "\xc4\xa0", "w", "r", "d"};
            if (id >= 1 && id <= 8) snprintf(want, sizeof want, "%s", chars[id - 1]);
            else snprintf(want, sizeof want, "t%d", id);
            const char *got = json_string_value(json_object_get(e, "text"));
            if (!got || strcmp(got, want) != 0)
                fail_msg("token %d: text %s, want %s", id, got ? got : "null", want);
        }
    json_decref(j);
}

/* Byte id's text as the command escapes it (docs/metrics.md). */
static void byte_text(int id, char *out, size_t n) {
    if (id == 256) snprintf(out, n, "<BOS>");
    else if (id == '"' || id == '\\') snprintf(out, n, "\\%c", id);
    else if (id == '\n') snprintf(out, n, "\\n");
    else if (id == '\t') snprintf(out, n, "\\t");
    else if (id == '\r') snprintf(out, n, "\\r");
    else if (id >= 0x20 && id < 0x7f) snprintf(out, n, "%c", id);
    else snprintf(out, n, "\\x%02x", id);
}

/* A byte-level run (data = text) lists each token as its byte, escaped. */
static void test_byte_text(void **s) {
    (void)s;
    char run[256];
    snprintf(run, sizeof run, "%s/bytes.h5", dir);
    json_t *j = vocab_json(run);
    assert_int_equal(json_integer_value(json_object_get(j, "vocab")), 257);
    const char *lists[2] = {"most_open", "most_shut"};
    for (int l = 0; l < 2; l++)
        for (int k = 0; k < 10; k++) {
            const json_t *e = json_array_get(json_object_get(j, lists[l]), (size_t)k);
            int id = (int)json_integer_value(json_object_get(e, "id"));
            char want[16];
            byte_text(id, want, sizeof want);
            const char *got = json_string_value(json_object_get(e, "text"));
            if (!got || strcmp(got, want) != 0)
                fail_msg("byte %d: text %s, want %s", id, got ? got : "null", want);
        }
    json_decref(j);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trained),    cmocka_unit_test(test_json_fields),
        cmocka_unit_test(test_refusals),   cmocka_unit_test(test_checkpoints),
        cmocka_unit_test(test_token_text), cmocka_unit_test(test_byte_text),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
