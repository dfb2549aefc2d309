/* test_hf_tokenizer.c: the Hugging Face tokenizer (src/hf).
 *
 * The main check compares every id against @huggingface/tokenizers (pure
 * JavaScript), run by tests/reference/make_tokenizer_fixtures.sh on the
 * same tokenizer.json: GPT-2's real vocabulary (reduced, see
 * tests/reference/tokenizer/README.md) in four variants (GPT-2, Llama 3
 * style Split regex + BOS template, Qwen style NFC + stripping specials,
 * RoBERTa style prefix space + <s> </s>), on a Brown sample and
 * adversarial strings. The rest are hand-derived unit cases: BPE order,
 * invalid UTF-8, refusals, the --tokens reader, fuzz regressions. */
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
#include <zlib.h>

#include "hf_split.h"
#include "hf_tokenizer.h"
#include "testutil.h"
#include "token_lines.h"

#define FIX "tests/reference/tokenizer"

/* ---- fixtures ------------------------------------------------------------ */

/* The base tokenizer.json BASE-reduced.json.gz as JSON. */
static json_t *load_base(const char *base) {
    char path[1024];
    snprintf(path, sizeof path, "%s/" FIX "/%s-reduced.json.gz", tu_src(), base);
    gzFile gz = gzopen(path, "rb");
    if (!gz) fail_msg("cannot open %s", path);
    size_t n = 0, cap = 1 << 20;
    char *buf = malloc(cap);
    int got;
    while (buf && (got = gzread(gz, buf + n, (unsigned)(cap - n))) > 0) {
        n += (size_t)got;
        if (n == cap) buf = realloc(buf, cap *= 2);
    }
    gzclose(gz);
    json_error_t je;
    json_t *j = buf ? json_loadb(buf, n, 0, &je) : NULL;
    free(buf);
    if (!j) fail_msg("%s: bad JSON", path);
    return j;
}

/* "a b" merges -> ["a", "b"] (the overlay's fixture_merges_as_pairs). */
static void merges_to_pairs(json_t *model) {
    json_t *m = json_object_get(model, "merges"), *pairs = json_array();
    size_t i;
    json_t *v;
    json_array_foreach(m, i, v) {
        const char *s = json_string_value(v), *sp = strchr(s, ' ');
        json_t *p = json_array();
        json_array_append_new(p, json_stringn(s, (size_t)(sp - s)));
        json_array_append_new(p, json_string(sp + 1));
        json_array_append_new(pairs, p);
    }
    json_object_set_new(model, "merges", pairs);
}

/* base + overlay, as make_tokenizer_fixtures.mjs compose() does. */
static json_t *compose(const json_t *base, const json_t *overlay) {
    json_t *t = json_deep_copy(base), *v;
    const char *k;
    json_object_foreach((json_t *)overlay, k, v) {
        if (!strcmp(k, "model")) json_object_update(json_object_get(t, "model"), v);
        else if (!strcmp(k, "fixture_merges_as_pairs")) {
            if (json_is_true(v)) merges_to_pairs(json_object_get(t, "model"));
        } else json_object_set(t, k, v);
    }
    return t;
}

/* Variant NAME (GPT-4o's own vocabulary for "gpt4o", GPT-2's for the
 * others) written to a temporary tokenizer.json and loaded from it. */
static HfTokenizer *load_variant(const char *name) {
    static json_t *gpt2;
    char path[1024], err[512];
    int own = !strcmp(name, "gpt4o");
    if (!gpt2 && !own) gpt2 = load_base("gpt2");
    json_t *base = own ? load_base(name) : gpt2;
    snprintf(path, sizeof path, "%s/" FIX "/%s.overlay.json", tu_src(), name);
    json_error_t je;
    json_t *ov = json_load_file(path, 0, &je);
    if (!ov) fail_msg("%s: %s", path, je.text);
    json_t *t = compose(base, ov);
    if (own) json_decref(base);
    const char *dir = tu_tmpdir();
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    assert_int_equal(json_dump_file(t, path, JSON_COMPACT), 0);
    json_decref(t);
    json_decref(ov);
    HfTokenizer *tok = NULL;
    if (hf_tokenizer_load(&tok, path, err, sizeof err) < 0) fail_msg("%s: %s", name, err);
    remove(path);
    rmdir(dir);
    return tok;
}

typedef struct {
    char *text;
    size_t len;
    char name[48];
} Case;

static int hexval(char c) { return c <= '9' ? c - '0' : c - 'a' + 10; }

/* Brown cases (separated by a blank line), then the adversarial ones. */
static Case *load_cases(size_t *n) {
    char path[1024];
    size_t len, cap = 256;
    Case *cs = calloc(cap, sizeof *cs);
    *n = 0;
    snprintf(path, sizeof path, "%s/" FIX "/brown_sample.txt", tu_src());
    char *b = tu_slurp(path, &len);
    assert_non_null(b);
    b[--len] = 0; /* the file's final newline */
    for (char *p = b, *e; p; p = e ? e + 2 : NULL) {
        e = strstr(p, "\n\n");
        size_t l = e ? (size_t)(e - p) : strlen(p);
        cs[*n] = (Case){strndup(p, l), l, "brown"};
        snprintf(cs[*n].name, sizeof cs[*n].name, "brown#%zu", *n);
        ++*n;
    }
    free(b);
    snprintf(path, sizeof path, "%s/" FIX "/adversarial.hex", tu_src());
    b = tu_slurp(path, &len);
    assert_non_null(b);
    for (char *line = strtok(b, "\n"); line; line = strtok(NULL, "\n")) {
        char *hex = strstr(line, " hex:");
        assert_non_null(hex);
        Case *c = &cs[(*n)++];
        assert_true(*n < cap);
        snprintf(c->name, sizeof c->name, "%.*s", (int)(hex - line), line);
        hex += 5;
        c->len = strlen(hex) / 2;
        c->text = malloc(c->len + 1);
        for (size_t i = 0; i < c->len; ++i)
            c->text[i] = (char)(hexval(hex[2 * i]) * 16 + hexval(hex[2 * i + 1]));
    }
    free(b);
    return cs;
}

/* Compare one variant on every case; returns the ids compared. */
static size_t check_variant(const char *name, const Case *cs, size_t ncase, size_t *compared) {
    HfTokenizer *tok = load_variant(name);
    char path[1024], err[512];
    snprintf(path, sizeof path, "%s/" FIX "/%s.ids", tu_src(), name);
    size_t len, ntok = 0, line_no = 0;
    char *b = tu_slurp(path, &len), *save = NULL;
    assert_non_null(b);
    const int32_t *pre, *suf;
    size_t npre, nsuf;
    hf_tokenizer_template(tok, &pre, &npre, &suf, &nsuf);
    for (char *line = strtok_r(b, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save), ++line_no) {
        assert_true(line_no < ncase);
        if (!strcmp(line, "-")) continue; /* not compared for this variant (README) */
        assert_int_equal(strncmp(line, "ids:", 4), 0);
        int32_t *ids;
        size_t n;
        const Case *c = &cs[line_no];
        if (hf_tokenizer_encode(tok, c->text, c->len, 0, &ids, &n, err, sizeof err) < 0)
            fail_msg("%s %s: %s", name, c->name, err);
        char *p = line + 4, *end;
        for (size_t k = 0; k < npre + n + nsuf; ++k) {
            long want = strtol(p, &end, 10);
            int32_t got = k < npre ? pre[k] : k < npre + n ? ids[k - npre] : suf[k - npre - n];
            if (end == p)
                fail_msg("%s %s: %zu ids, the reference has %zu", name, c->name, npre + n + nsuf,
                         k);
            if (want != got)
                fail_msg("%s %s: id %zu is %d, the reference has %ld", name, c->name, k, got, want);
            p = end;
        }
        strtol(p, &end, 10);
        if (end != p)
            fail_msg("%s %s: %zu ids, the reference has more", name, c->name, npre + n + nsuf);
        ntok += npre + n + nsuf;
        ++*compared;
        free(ids);
    }
    assert_int_equal(line_no, ncase);
    free(b);
    hf_tokenizer_free(tok);
    return ntok;
}

static void test_matches_js_reference(void **s) {
    (void)s;
    const char *variants[] = {"gpt2", "llama3", "qwen", "gpt2-prefix", "gpt4o"};
    size_t ncase, total = 0, compared = 0;
    Case *cs = load_cases(&ncase);
    assert_true(ncase > 60);
    for (int v = 0; v < 5; ++v) total += check_variant(variants[v], cs, ncase, &compared);
    print_message("%zu encodings (%zu strings x 5 variants, minus skipped), %zu ids: all equal\n",
                  compared, ncase, total);
    assert_true(total > 38000);
    for (size_t i = 0; i < ncase; ++i) free(cs[i].text);
    free(cs);
}

/* ---- BOS and the post-processor template --------------------------------- */

/* Splitting one text has a wall-clock bound (hf_regex.c): with the test
 * hook's bound of 0 s, a text of many pieces is refused in one line at the
 * first look at the clock, and a short one (fewer pieces than a look) is
 * not. */
static void test_split_time_bound(void **s) {
    (void)s;
    char err[512], text[8192];
    int32_t *ids = NULL;
    size_t n;
    HfTokenizer *gpt2 = load_variant("gpt2");
    for (size_t i = 0; i + 1 < sizeof text; i++) text[i] = i % 4 == 3 ? ' ' : 'a';
    text[sizeof text - 1] = '\0';
    setenv("GATELAB_TEST_SPLIT_SECONDS", "0", 1);
    assert_int_equal(hf_tokenizer_encode(gpt2, text, strlen(text), 0, &ids, &n, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "pre-tokenizer regex still splitting a 8191-byte text"));
    assert_null(strchr(err, '\n'));
    assert_int_equal(hf_tokenizer_encode(gpt2, "Hi there", 8, 0, &ids, &n, err, sizeof err), 0);
    free(ids);
    unsetenv("GATELAB_TEST_SPLIT_SECONDS");
    assert_int_equal(hf_tokenizer_encode(gpt2, text, strlen(text), 0, &ids, &n, err, sizeof err),
                     0);
    free(ids);
    hf_tokenizer_free(gpt2);
}

static void test_bos(void **s) {
    (void)s;
    char err[512];
    int32_t *ids;
    size_t n;
    HfTokenizer *llama = load_variant("llama3"), *gpt2 = load_variant("gpt2");
    assert_int_equal(hf_tokenizer_bos_id(llama), hf_tokenizer_token_id(llama, "<|begin_of_text|>"));
    assert_int_equal(hf_tokenizer_bos_id(llama), 50257);
    assert_int_equal(hf_tokenizer_encode(llama, "Hi", 2, 1, &ids, &n, err, sizeof err), 0);
    assert_true(n >= 2);
    assert_int_equal(ids[0], 50257);
    free(ids);
    assert_int_equal(hf_tokenizer_bos_id(gpt2), -1);
    assert_int_equal(hf_tokenizer_encode(gpt2, "Hi", 2, 1, &ids, &n, err, sizeof err), -1);
    assert_non_null(strstr(err, "no BOS"));
    assert_int_equal(hf_tokenizer_token_id(gpt2, "<|endoftext|>"), 50256);
    assert_int_equal(hf_tokenizer_vocab_size(gpt2), 50257);
    size_t len;
    const char *text = hf_tokenizer_token_text(gpt2, 50256, &len);
    assert_non_null(text);
    assert_int_equal(len, 13);
    assert_memory_equal(text, "<|endoftext|>", 13);
    text = hf_tokenizer_token_text(gpt2, 262, &len); /* GPT-2's " the" */
    assert_non_null(text);
    assert_int_equal(len, 5);
    assert_memory_equal(text, "\xc4\xa0the", 5);
    assert_null(hf_tokenizer_token_text(gpt2, 50257, &len));
    assert_null(hf_tokenizer_token_text(gpt2, -1, &len));
    assert_int_equal(hf_tokenizer_encode(gpt2, "", 0, 0, &ids, &n, err, sizeof err), 0);
    assert_int_equal(n, 0);
    free(ids);
    hf_tokenizer_free(llama);
    hf_tokenizer_free(gpt2);
}

/* ---- hand-built tokenizers ----------------------------------------------- */

/* A byte-level tokenizer with vocab (JSON object text), merges (JSON array
 * text) and the GPT-2 ByteLevel pre-tokenizer. */
static int tiny(HfTokenizer **tok, const char *vocab, const char *merges, char *err) {
    char json[4096];
    snprintf(json, sizeof json,
             "{\"added_tokens\":[],\"normalizer\":null,\"post_processor\":null,"
             "\"pre_tokenizer\":{\"type\":\"ByteLevel\",\"use_regex\":true},"
             "\"model\":{\"type\":\"BPE\",\"vocab\":%s,\"merges\":%s}}",
             vocab, merges);
    return hf_tokenizer_load_buffer(tok, json, strlen(json), "tiny.json", err, 512);
}

static void expect_ids(const HfTokenizer *tok, const char *text, const int32_t *want,
                       size_t nwant) {
    char err[512];
    int32_t *ids;
    size_t n;
    assert_int_equal(hf_tokenizer_encode(tok, text, strlen(text), 0, &ids, &n, err, sizeof err), 0);
    assert_int_equal(n, nwant);
    for (size_t i = 0; i < n; ++i) assert_int_equal(ids[i], want[i]);
    free(ids);
}

/* Lowest rank first; among equal ranks the leftmost pair. */
static void test_bpe_order(void **s) {
    (void)s;
    char err[512];
    HfTokenizer *tok;
    assert_int_equal(tiny(&tok, "{\"a\":0,\"b\":1,\"c\":2,\"ab\":3,\"bc\":4,\"aa\":5}",
                          "[\"b c\",\"a b\",\"a a\"]", err),
                     0);
    expect_ids(tok, "abc", (int32_t[]){0, 4}, 2); /* b c (rank 0) before a b */
    expect_ids(tok, "aaa", (int32_t[]){5, 0}, 2); /* leftmost a a */
    expect_ids(tok, "aaaa", (int32_t[]){5, 5}, 2);
    expect_ids(tok, "abab", (int32_t[]){3, 3}, 2);
    expect_ids(tok, "xab", (int32_t[]){3}, 1); /* x not in vocab, no unk: dropped */
    hf_tokenizer_free(tok);
}

/* Invalid UTF-8 -> U+FFFD per maximal subpart (WHATWG); U+FFFD is bytes
 * EF BF BD, spelled "ï¿½" byte-level. */
static void test_invalid_utf8(void **s) {
    (void)s;
    char err[512];
    HfTokenizer *tok;
    assert_int_equal(tiny(&tok,
                          "{\"\\u00ef\":0,\"\\u00bf\":1,\"\\u00bd\":2,\"A\":3,\"\\u00ef\\u00bf\":4,"
                          "\"\\u00ef\\u00bf\\u00bd\":5}",
                          "[\"\\u00ef \\u00bf\",\"\\u00ef\\u00bf \\u00bd\"]", err),
                     0);
    expect_ids(tok, "\xc0\x80", (int32_t[]){5, 5}, 2); /* 2 x FFFD in one pre-token */
    expect_ids(tok,
               "\xe2\x82"
               "A",
               (int32_t[]){5, 3}, 2); /* truncated: one FFFD */
    char seq[] = "\xed\xa0\x80";      /* surrogate: 3 x FFFD */
    int32_t *ids;
    size_t n;
    assert_int_equal(hf_tokenizer_encode(tok, seq, 3, 0, &ids, &n, err, sizeof err), 0);
    assert_int_equal(n, 3);
    free(ids);
    hf_tokenizer_free(tok);
}

static void expect_refused(const char *json, const char *needle) {
    char err[512] = "";
    HfTokenizer *tok = NULL;
    assert_int_equal(hf_tokenizer_load_buffer(&tok, json, strlen(json), "t.json", err, sizeof err),
                     -1);
    assert_null(tok);
    if (!strstr(err, needle)) fail_msg("error \"%s\" lacks \"%s\"", err, needle);
    assert_null(strchr(err, '\n'));
}

static void test_refusals(void **s) {
    (void)s;
    expect_refused("{\"model\":{\"type\":\"Unigram\",\"vocab\":[[\"a\",0]]}}", "--tokens FILE");
    expect_refused("{\"model\":{\"type\":\"WordPiece\",\"vocab\":{}}}", "WordPiece");
    expect_refused("{\"pre_tokenizer\":{\"type\":\"Metaspace\"},\"model\":{\"type\":\"BPE\","
                   "\"vocab\":{},\"merges\":[]}}",
                   "Metaspace");
    expect_refused("{\"pre_tokenizer\":{\"type\":\"ByteLevel\"},\"model\":{\"type\":\"BPE\",\"byte_"
                   "fallback\":true,"
                   "\"vocab\":{},\"merges\":[]}}",
                   "byte_fallback");
    expect_refused("{\"model\":{\"type\":\"BPE\",\"vocab\":{},\"merges\":[]}}",
                   "without ByteLevel");
    expect_refused("{\"pre_tokenizer\":{\"type\":\"ByteLevel\"},\"model\":{\"type\":\"BPE\","
                   "\"vocab\":{\"a\":0},"
                   "\"merges\":[\"a b\"]}}",
                   "merges[0]");
    expect_refused("{\"pre_tokenizer\":{\"type\":\"Split\",\"pattern\":{\"Regex\":\"(\"},"
                   "\"behavior\":\"Isolated\"},"
                   "\"model\":{\"type\":\"BPE\",\"vocab\":{},\"merges\":[]}}",
                   "PCRE2");
    expect_refused("{\"pre_tokenizer\":{\"type\":\"Split\",\"pattern\":{\"Regex\":\"a\"},"
                   "\"behavior\":\"Sideways\"},"
                   "\"model\":{\"type\":\"BPE\",\"vocab\":{},\"merges\":[]}}",
                   "Split behavior \"Sideways\" is not supported by gatelab");
    expect_refused(
        "{\"normalizer\":{\"type\":\"Lowercase\"},\"model\":{\"type\":\"BPE\",\"vocab\":{}}}",
        "Lowercase");
    expect_refused("{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":-1}}}", "model.vocab");
    expect_refused("{\"model\":", "not valid JSON");
    expect_refused("[]", "not a JSON object");
    char err[512];
    HfTokenizer *tok;
    assert_int_equal(hf_tokenizer_load(&tok, "/nonexistent/tokenizer.json", err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/tokenizer.json"));
}

/* ---- Split behaviours ------------------------------------------------------ */

/* The pieces of "the-final--countdown" split at "-" under behaviour b, joined
 * by "|" into out. */
static void split_pieces(char *out, size_t cap, HfSplitBehavior b, int invert) {
    static const char text[] = "the-final--countdown";
    HfSpan v[] = {{0, 3, 0}, {3, 4, 1}, {4, 9, 0}, {9, 10, 1}, {10, 11, 1}, {11, 20, 0}};
    size_t n = hf_split_apply(v, sizeof v / sizeof *v, b, invert), len = 0;
    out[0] = 0;
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%.*s", i ? "|" : "",
                                (int)(v[i].end - v[i].start), text + v[i].start);
}

/* The examples of the Rust tokenizers' SplitDelimiterBehavior, and invert. */
static void test_split_behaviors(void **s) {
    (void)s;
    char got[64];
    const struct {
        const char *name;
        int invert;
        const char *want;
    } cases[] = {
        {"Isolated", 0, "the|-|final|-|-|countdown"},
        {"Removed", 0, "the|final|countdown"},
        {"MergedWithPrevious", 0, "the-|final-|-|countdown"},
        {"MergedWithNext", 0, "the|-final|-|-countdown"},
        {"Contiguous", 0, "the|-|final|--|countdown"},
        {"Removed", 1, "-|-|-"},
        {"MergedWithPrevious", 1, "the|-final|-|-countdown"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int b = hf_split_behavior(cases[i].name);
        assert_true(b >= 0);
        split_pieces(got, sizeof got, (HfSplitBehavior)b, cases[i].invert);
        if (strcmp(got, cases[i].want))
            fail_msg("%s invert=%d: %s, want %s", cases[i].name, cases[i].invert, got,
                     cases[i].want);
    }
    assert_int_equal(hf_split_behavior("Sideways"), -1);
}

/* ---- --tokens FILE --------------------------------------------------------- */

static void test_token_lines(void **s) {
    (void)s;
    char err[512];
    TokenLines tl;
    const char *good = "1 2 3\n\n  \t\n4\t5 \r\n6";
    assert_int_equal(token_lines_parse(&tl, good, strlen(good), "w.txt", 10, 0, err, sizeof err),
                     0);
    assert_int_equal(tl.n_windows, 3);
    assert_int_equal(tl.n_ids, 6);
    assert_int_equal(tl.start[1], 3);
    assert_int_equal(tl.start[2], 5);
    assert_int_equal(tl.ids[5], 6);
    token_lines_free(&tl);
    struct {
        const char *text, *needle;
        size_t max;
    } bad[] = {
        {"1 2\n3 x4\n", "w.txt:2: \"x4\"", 0},
        {"1 -2\n", "\"-2\"", 0},
        {"10\n", "out of range", 0},
        {"99999999999999999999999\n", "not a token id", 0},
        {"1 2 3\n", "more than 2 ids", 2},
        {"\n \n", "no token ids", 0},
        {"", "no token ids", 0},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        err[0] = 0;
        assert_int_equal(token_lines_parse(&tl, bad[i].text, strlen(bad[i].text), "w.txt", 10,
                                           bad[i].max, err, sizeof err),
                         -1);
        if (!strstr(err, bad[i].needle))
            fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err, bad[i].needle);
    }
    assert_int_equal(token_lines_read(&tl, "/nonexistent/w.txt", 10, 0, err, sizeof err), -1);
}

/* ---- fuzz regressions (tests/fuzz/regressions/hftok) ----------------------- */

#include "fuzz/fuzz_entry_hf.c"
#include <dirent.h>

static void test_fuzz_regressions(void **s) {
    (void)s;
    char dir[1024], path[2048];
    snprintf(dir, sizeof dir, "%s/tests/fuzz/regressions/hftok", tu_src());
    DIR *d = opendir(dir);
    if (!d) fail_msg("cannot open %s", dir);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || !strcmp(e->d_name, "README")) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t len;
        char *b = tu_slurp(path, &len);
        assert_non_null(b);
        int want = strncmp(e->d_name, "ok-", 3) ? 1 : 0;
        if (fuzz_hftok_one((const uint8_t *)b, len) != want) fail_msg("%s: want %d", path, want);
        free(b);
        ++n;
    }
    closedir(d);
    assert_true(n >= 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matches_js_reference), cmocka_unit_test(test_bos),
        cmocka_unit_test(test_split_time_bound),     cmocka_unit_test(test_bpe_order),
        cmocka_unit_test(test_invalid_utf8),         cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_split_behaviors),      cmocka_unit_test(test_token_lines),
        cmocka_unit_test(test_fuzz_regressions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
