/* test_probe_cmd.c: `gatelab probe` (a prompt of the user's through a run's
 * model, src/cli/cmd_probe.c over src/rerun/prompt.c).
 *
 * - a trained byte-level g1-elem run whose weights are those of
 *   tests/reference/make_prompt_fixture.py: --text "The cat sat on the
 *   mat." stores /prompt/the-cat-sat-on-the-mat whose tokens (BOS and the
 *   bytes), attention maps and gate scores are PyTorch's within the
 *   fixtures' bound; --json gives the tokens, their labels and the maps;
 *   the figure is a PNG;
 * - an inspected checkpoint (the elementwise-gated Qwen3 fixture with a
 *   tokenizer.json written here that spells its window's ids as letters):
 *   --text through the tokenizer gives the window, and the stored maps and
 *   gates are expected.h5's (PyTorch's);
 * - labels: a space as U+2423, control bytes escaped, long pieces cut;
 * - refusals with exit 2 and one line: an existing name without --force,
 *   empty text, one token, bad ids, ids outside the vocabulary, more
 *   tokens than a checkpoint's positions, --text on a bigram run and on a
 *   checkpoint without a tokenizer.json (naming --tokens), a bad --name,
 *   an --out that is not a figure; and a closed stdout still stores. */
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
#include <sys/wait.h>

#include "hf_inspect_fixture.h"
#include "runfile_read.h"
#include "testutil.h"

static char dir[64];
static char byte_run[1024], bigram_run[1024], text_file[1024];

#define PROMPT "The cat sat on the mat."
#define PROMPT_NAME "the-cat-sat-on-the-mat"

/* Overwrite every /params/NAME of run with the fixture group g's
 * params/NAME (same sizes, or the test fails). */
static void put_params(const char *run, hid_t g) {
    hid_t f = H5Fopen(run, H5F_ACC_RDWR, H5P_DEFAULT), pg = H5Gopen2(g, "params", H5P_DEFAULT);
    assert_true(f >= 0 && pg >= 0);
    H5G_info_t info;
    assert_true(H5Gget_info(pg, &info) >= 0);
    for (hsize_t i = 0; i < info.nlinks; i++) {
        char name[256], path[300];
        assert_true(H5Lget_name_by_idx(pg, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof name,
                                       H5P_DEFAULT) > 0);
        size_t n;
        float *w = tu_h5_read(pg, name, H5T_NATIVE_FLOAT, sizeof(float), &n);
        snprintf(path, sizeof path, "params/%s", name);
        hid_t d = H5Dopen2(f, path, H5P_DEFAULT);
        if (d < 0) fail_msg("the run has no /%s", path);
        hid_t sp = H5Dget_space(d);
        assert_int_equal((size_t)H5Sget_simple_extent_npoints(sp), n);
        assert_true(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, w) >= 0);
        H5Sclose(sp), H5Dclose(d), free(w);
    }
    H5Gclose(pg), H5Fclose(f);
}

static int setup(void **st) {
    (void)st;
    snprintf(dir, sizeof dir, "%s", tu_tmpdir());
    char fx[1200], ini[1200], log[1200];
    snprintf(fx, sizeof fx, "%s/tests/reference/fixtures/prompt/prompt.h5", tu_src());
    snprintf(ini, sizeof ini, "%s/fx.ini", dir);
    snprintf(log, sizeof log, "%s/train.out", dir);
    snprintf(text_file, sizeof text_file, "%s/tests/reference/tokenizer/brown_sample.txt",
             tu_src());
    hid_t f = H5Fopen(fx, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t g = H5Gopen2(f, "g1-elem-bytes", H5P_DEFAULT);
    size_t n;
    char *cfg = tu_h5_read(g, "config", H5T_NATIVE_UCHAR, 1, &n);
    tu_write_file(ini, cfg, n);
    free(cfg);
    snprintf(byte_run, sizeof byte_run, "%s/bytes.h5", dir);
    if (tu_run(log,
               "train --config %s --set train_file=%s --set val_file=%s --set steps=1 --out %s "
               "--quiet",
               ini, text_file, text_file, byte_run))
        fail_msg("training the byte-level run failed (see %s)", log);
    put_params(byte_run, g);
    H5Gclose(g), H5Fclose(f);
    snprintf(bigram_run, sizeof bigram_run, "%s/bigram.h5", dir);
    if (tu_run(log, "train --config %s/experiments/tiny.ini --set steps=2 --out %s --quiet",
               tu_src(), bigram_run))
        fail_msg("training the bigram run failed (see %s)", log);
    return 0;
}

static int teardown(void **st) {
    (void)st;
    return tu_rmtree(dir);
}

/* gatelab ARGS must exit 2 with one line holding needle. */
static void refused(const char *needle, const char *fmt, ...) {
    char args[4096], log[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(log, sizeof log, "%s/refused.out", dir);
    int rc = tu_run(log, "%s", args);
    char *out = tu_slurp(log, NULL);
    if (rc != 2 || !out || !strstr(out, needle))
        fail_msg("gatelab %s: exit %d, output '%s', want 2 and '%s'", args, rc, out ? out : "",
                 needle);
    if (tu_count_lines(log) != 1) fail_msg("gatelab %s: more than one line: %s", args, out);
    free(out);
}

/* /prompt/name of run: its probe and text. */
static void read_prompt(const char *run, const char *name, ProbeRecord *p, char *text, size_t len) {
    char err[512];
    RunReader *r = runread_open(run, err, sizeof err);
    if (!r) fail_msg("%s", err);
    if (runread_prompt(r, name, p, text, len, err, sizeof err) != 0) fail_msg("%s", err);
    runread_close(r);
}

static json_t *run_json(const char *fmt, ...) {
    char args[4096], log[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(log, sizeof log, "%s/json.out", dir);
    if (tu_run(log, "%s", args) != 0) fail_msg("gatelab %s failed (see %s)", args, log);
    char *out = tu_slurp_ok(log, NULL);
    json_error_t je;
    json_t *o = json_loads(out, 0, &je);
    if (!o) fail_msg("gatelab %s: not JSON (%s): %s", args, je.text, out);
    free(out);
    return o;
}

/* ---- a trained byte-level run against PyTorch ---- */

static void test_trained_text(void **st) {
    (void)st;
    char fx[1200], png[1200], text[256];
    snprintf(fx, sizeof fx, "%s/tests/reference/fixtures/prompt/prompt.h5", tu_src());
    snprintf(png, sizeof png, "%s/cat.png", dir);
    json_t *o = run_json("probe %s --text '" PROMPT "' --json --out %s", byte_run, png);
    /* the JSON: tokens, labels, the stored group, a map row */
    json_t *labels = json_object_get(o, "labels"), *tok = json_object_get(o, "tokens");
    assert_int_equal(json_array_size(labels), 24);
    assert_string_equal(json_string_value(json_array_get(labels, 0)), "<bos>");
    assert_string_equal(json_string_value(json_array_get(labels, 1)), "T");
    assert_string_equal(json_string_value(json_array_get(labels, 4)), "\xe2\x90\xa3");
    assert_int_equal(json_integer_value(json_array_get(tok, 0)), 256);
    assert_string_equal(json_string_value(json_object_get(o, "group")), "/prompt/" PROMPT_NAME);
    assert_string_equal(json_string_value(json_object_get(o, "text")), PROMPT);
    json_t *maps = json_object_get(o, "attention");
    assert_int_equal(json_array_size(maps), 2);
    json_t *row = json_array_get(json_array_get(json_array_get(maps, 1), 2), 5);
    assert_int_equal(json_array_size(row), 6); /* query 5 sees keys 0..5 */
    assert_int_equal(json_array_size(json_object_get(o, "layers")), 2);
    assert_true(json_is_true(json_object_get(o, "gated")));
    json_decref(o);
    /* the stored group against PyTorch */
    hid_t f = H5Fopen(fx, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t g = H5Gopen2(f, "g1-elem-bytes", H5P_DEFAULT);
    size_t nt, na, ng;
    int32_t *want_tok = tu_h5_read(g, "tokens", H5T_NATIVE_INT32, 4, &nt);
    float *att = tu_h5_read(g, "attention", H5T_NATIVE_FLOAT, 4, &na);
    float *gates = tu_h5_read(g, "gates", H5T_NATIVE_FLOAT, 4, &ng);
    H5Gclose(g), H5Fclose(f);
    ProbeRecord p;
    read_prompt(byte_run, PROMPT_NAME, &p, text, sizeof text);
    assert_string_equal(text, PROMPT);
    assert_int_equal(p.N, 1), assert_int_equal(p.T, (int)nt), assert_int_equal(p.M, (int)nt);
    for (size_t i = 0; i < nt; i++) assert_int_equal(p.tokens[i], want_tok[i]);
    assert_int_equal((size_t)p.L * p.H * p.T * p.T, na);
    tu_fx_compare("prompt attention", p.attention, att, na);
    assert_non_null(p.gate_sample);
    assert_int_equal(p.gate_sample_n, 1);
    assert_int_equal((size_t)p.L * p.T * p.gate_channels, ng);
    tu_fx_compare("prompt gates", p.gate_sample, gates, ng);
    runread_probe_free(&p);
    free(want_tok), free(att), free(gates);
    /* the figure is a PNG */
    size_t n;
    char *b = tu_slurp_ok(png, &n);
    assert_true(n > 8 && !memcmp(b, "\x89PNG", 4));
    free(b);
}

/* The table, the default figure beside the run, a name given twice, and
 * a stdout that is closed. */
static void test_trained_table(void **st) {
    (void)st;
    char log[1200], fig[1200];
    snprintf(log, sizeof log, "%s/table.out", dir);
    assert_int_equal(tu_run(log, "probe %s --tokens 256,72,105,10,9 --name hi", byte_run), 0);
    char *out = tu_slurp_ok(log, NULL);
    assert_non_null(strstr(out, "tokens: <bos> H i \\n \\t"));
    assert_non_null(strstr(out, "first-share"));
    assert_non_null(strstr(out, "gate-mean"));
    free(out);
    snprintf(fig, sizeof fig, "%s/bytes.prompt-hi.png", dir);
    char *b = tu_slurp_ok(fig, NULL);
    free(b);
    refused("/prompt/hi exists; --force replaces it", "probe %s --tokens 256,72 --name hi",
            byte_run);
    assert_int_equal(tu_run(log, "probe %s --tokens 256,72 --name hi --force", byte_run), 0);
    ProbeRecord p;
    read_prompt(byte_run, "hi", &p, NULL, 0);
    assert_int_equal(p.T, 2);
    runread_probe_free(&p);
    /* past the training length (32): run, with a note */
    char longer[64];
    memset(longer, 'a', 40), longer[40] = '\0';
    assert_int_equal(tu_run(log, "probe %s --text %s --no-write --no-figure", byte_run, longer), 0);
    out = tu_slurp_ok(log, NULL);
    assert_non_null(strstr(out, "past the run's training length"));
    free(out);
    /* stdout closed: the result is stored all the same */
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && '%s' probe %s --tokens 256,1,2 --name closed --no-figure "
             ">&- 2>'%s'",
             tu_src(), tu_bin(), byte_run, log);
    int rc = system(cmd);
    assert_true(WIFEXITED(rc) && WEXITSTATUS(rc) == 0);
    read_prompt(byte_run, "closed", &p, NULL, 0);
    assert_int_equal(p.T, 3);
    runread_probe_free(&p);
}

static void test_refusals(void **st) {
    (void)st;
    char notfig[1200];
    snprintf(notfig, sizeof notfig, "%s/notes.png", dir);
    tu_write_file(notfig, "my notes\n", 9);
    refused("--text is empty", "probe %s --text ''", byte_run);
    refused("give the prompt as --text TEXT or --tokens", "probe %s", byte_run);
    refused("give the prompt as --text TEXT or --tokens", "probe %s --text a --tokens 1,2",
            byte_run);
    refused("at least 2", "probe %s --tokens 5 --no-write", byte_run);
    refused("'x' is not a token id", "probe %s --tokens 1,x --no-write", byte_run);
    refused("an empty entry", "probe %s --tokens 1,,2 --no-write", byte_run);
    refused("token id 999 (position 1) is outside the model's vocabulary of 257",
            "probe %s --tokens 1,999 --no-write", byte_run);
    refused("--name 'a/b'", "probe %s --tokens 1,2 --name a/b", byte_run);
    refused("--layer 5 is out of range", "probe %s --tokens 1,2 --layer 5 --no-write", byte_run);
    refused("notes.png", "probe %s --tokens 1,2 --out %s --no-write", byte_run, notfig);
    refused("give token ids with --tokens", "probe %s --text hello --no-write", bigram_run);
    char log[1200];
    snprintf(log, sizeof log, "%s/ok.out", dir);
    assert_int_equal(tu_run(log, "probe %s --tokens 64,1,2,3 --no-figure", bigram_run), 0);
    char *out = tu_slurp_ok(log, NULL);
    assert_non_null(strstr(out, "tokens: #64 #1 #2 #3")); /* no spelling: the ids */
    free(out);
}

/* ---- an inspected checkpoint against PyTorch ---- */

/* A byte-level BPE tokenizer.json with no merges whose vocabulary spells
 * ids[i] as the letter 'a' + i. */
static void write_letter_tokenizer(const char *path, const int32_t *ids, int n) {
    char buf[4096];
    size_t at = (size_t)snprintf(
        buf, sizeof buf,
        "{\"version\": \"1.0\", \"added_tokens\": [], \"normalizer\": null, \"pre_tokenizer\": "
        "{\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"trim_offsets\": true, "
        "\"use_regex\": true}, \"post_processor\": null, \"decoder\": null, \"model\": {\"type\": "
        "\"BPE\", \"dropout\": null, \"unk_token\": null, \"fuse_unk\": false, \"byte_fallback\": "
        "false, \"vocab\": {");
    for (int i = 0; i < n; i++)
        at += (size_t)snprintf(buf + at, sizeof buf - at, "%s\"%c\": %d", i ? ", " : "", 'a' + i,
                               ids[i]);
    at += (size_t)snprintf(buf + at, sizeof buf - at, "}, \"merges\": []}}");
    tu_write_file(path, buf, at);
}

static void test_checkpoint(void **st) {
    (void)st;
    const char *fixname = "qwen3-elementwise-f32-sharded";
    const char *files[] = {"config.json", "model-00001-of-00002.safetensors",
                           "model-00002-of-00002.safetensors", "model.safetensors.index.json"};
    char ck[1200], exp[1400], ids[1200], run[1200], log[1200], path[1400], text[64];
    snprintf(ck, sizeof ck, "%s/ck", dir);
    snprintf(path, sizeof path, "mkdir -p '%s'", ck);
    assert_int_equal(system(path), 0);
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) tu_hf_fixture(ck, fixname, files[i]);
    snprintf(exp, sizeof exp, "%s/tests/reference/hf/%s/expected.h5", tu_src(), fixname);
    hid_t f = H5Fopen(exp, H5F_ACC_RDONLY, H5P_DEFAULT);
    size_t nt, na, ng;
    int32_t *tok = tu_h5_read(f, "tokens", H5T_NATIVE_INT32, 4, &nt);
    float *att = tu_h5_read(f, "attention", H5T_NATIVE_FLOAT, 4, &na);
    float *gates = tu_h5_read(f, "gates", H5T_NATIVE_FLOAT, 4, &ng);
    H5Fclose(f);
    const int T = (int)nt;
    assert_true(T <= 26);
    for (int i = 0; i < T; i++)
        for (int j = 0; j < i; j++) assert_true(tok[i] != tok[j]); /* a letter each */
    snprintf(ids, sizeof ids, "%s/ids.txt", dir);
    snprintf(run, sizeof run, "%s/ck.h5", dir);
    snprintf(log, sizeof log, "%s/ck.out", dir);
    hf_write_tokens(ids, tok, T, 1);
    assert_int_equal(tu_run(log, "inspect %s --tokens %s --out %s -q --threads 2", ck, ids, run),
                     0);
    /* no tokenizer.json: --text is refused naming --tokens */
    refused("give token ids with --tokens", "probe %s --text abc --no-write", run);
    snprintf(path, sizeof path, "%s/tokenizer.json", ck);
    write_letter_tokenizer(path, tok, T);
    for (int i = 0; i < T; i++) text[i] = (char)('a' + i);
    text[T] = '\0';
    assert_int_equal(tu_run(log, "probe %s --text %s --threads 2", run, text), 0);
    ProbeRecord p;
    read_prompt(run, text, &p, NULL, 0);
    assert_int_equal(p.T, T), assert_int_equal(p.M, T);
    for (int i = 0; i < T; i++) assert_int_equal(p.tokens[i], tok[i]);
    assert_int_equal((size_t)p.L * p.H * T * T, na);
    hf_compare(fixname, "prompt attention", p.attention, att, na);
    assert_int_equal((size_t)p.L * T * p.gate_channels, ng);
    hf_compare(fixname, "prompt gates", p.gate_sample, gates, ng);
    runread_probe_free(&p);
    char *out = tu_slurp_ok(log, NULL);
    assert_non_null(strstr(out, "tokens: a b c d"));
    free(out);
    /* more tokens than its positions, naming the option */
    char many[4096];
    size_t at = 0;
    for (int i = 0; i < 100 && at + 8 < sizeof many; i++)
        at += (size_t)snprintf(many + at, sizeof many - at, "%s%d", i ? "," : "", tok[i % T]);
    refused("--tokens gives", "probe %s --tokens %s --no-write --threads 2", run, many);
    free(tok), free(att), free(gates);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trained_text),
        cmocka_unit_test(test_trained_table),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_checkpoint),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
