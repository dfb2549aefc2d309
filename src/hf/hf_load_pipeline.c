/* hf_load_pipeline.c: the normalizer, added tokens, pre-tokenizer and
 * post-processor parts of tokenizer.json. */
#include <stdlib.h>
#include <string.h>

#include "hf_load_priv.h"
#include "hf_normalize.h"
#include "util.h"

#define MAX_DEPTH 8

/* GPT-2's pre-tokenizer regex (ByteLevel use_regex), Oniguruma syntax */
static const char GPT2_RE[] =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

static const char *type_of(const json_t *obj) {
    const char *t = hf_ld_str(obj, "type");
    return t ? t : "(no type)";
}

static int too_deep(HfLoader *L, const char *what) {
    return seterr(L->err, L->errlen, "%s: %s nests Sequences deeper than %d", L->name, what,
                  MAX_DEPTH);
}

/* ---- normalizer ---------------------------------------------------------- */

int hf_ld_normalizer(HfLoader *L, const json_t *norm, int depth) {
    HfTokenizer *t = L->tok;
    if (!norm || json_is_null(norm)) return 0;
    if (depth > MAX_DEPTH) return too_deep(L, "normalizer");
    const char *type = type_of(norm);
    if (strcmp(type, "Sequence") == 0) {
        json_t *list = json_object_get(norm, "normalizers");
        if (!json_is_array(list)) return hf_ld_bad_field(L, "normalizer", "normalizers");
        for (size_t i = 0; i < json_array_size(list); ++i)
            if (hf_ld_normalizer(L, json_array_get(list, i), depth + 1) < 0) return -1;
        return 0;
    }
    int form = hf_norm_form(type);
    if (!form) return hf_ld_unsupported(L, "normalizer", type);
    if (t->n_norm == HF_MAX_NORM)
        return seterr(L->err, L->errlen, "%s: more than %d normalizers", L->name, HF_MAX_NORM);
    t->norm[t->n_norm++] = form;
    return 0;
}

/* Text normalized by every normalizer in turn (malloc'd). */
static int normalize_all(HfLoader *L, const char *s, size_t n, char **out, size_t *outn) {
    char *cur = strndup(s, n);
    size_t len = n;
    if (!cur) return hf_ld_oom(L);
    for (int i = 0; i < L->tok->n_norm; ++i) {
        char *next;
        if (hf_normalize(L->tok->norm[i], cur, len, &next, &len, L->err, L->errlen) < 0) {
            free(cur);
            return -1;
        }
        free(cur);
        cur = next;
    }
    *out = cur;
    *outn = len;
    return 0;
}

/* ---- added tokens ------------------------------------------------------- */

static int added_one(HfLoader *L, const json_t *a, size_t i) {
    HfTokenizer *t = L->tok;
    const char *content = hf_ld_str(a, "content");
    int32_t id = hf_ld_id(json_object_get(a, "id"));
    int special = hf_ld_bool(a, "special", 0);
    int normalized = hf_ld_bool(a, "normalized", !special),
        single = hf_ld_bool(a, "single_word", 0);
    HfAddedTok tok = {id, hf_ld_bool(a, "lstrip", 0), hf_ld_bool(a, "rstrip", 0)};
    if (!content || id < 0 || special < 0 || normalized < 0 || single < 0 || tok.lstrip < 0 ||
        tok.rstrip < 0)
        return seterr(
            L->err, L->errlen,
            "%s: added_tokens[%zu] needs a string content, an id in [0, %d) and boolean flags",
            L->name, i, HF_MAX_ID);
    if (single) return hf_ld_unsupported(L, "added token option single_word of", content);
    if (hf_ld_add_token(L, content, strlen(content), id) < 0) return -1;
    if (!normalized || t->n_norm == 0)
        return hf_added_add(&t->added, &t->added.raw, tok, content, strlen(content)) < 0
                   ? hf_ld_oom(L)
                   : 0;
    char *key = NULL;
    size_t len = 0;
    if (normalize_all(L, content, strlen(content), &key, &len) < 0) return -1;
    int rc = hf_added_add(&t->added, &t->added.norm, tok, key, len);
    free(key);
    return rc < 0 ? hf_ld_oom(L) : 0;
}

int hf_ld_added(HfLoader *L, const json_t *added) {
    if (!added || json_is_null(added)) return 0;
    if (!json_is_array(added))
        return seterr(L->err, L->errlen, "%s: added_tokens is not an array", L->name);
    for (size_t i = 0; i < json_array_size(added); ++i) {
        const json_t *a = json_array_get(added, i);
        if (!json_is_object(a))
            return seterr(L->err, L->errlen, "%s: added_tokens[%zu] is not an object", L->name, i);
        if (added_one(L, a, i) < 0) return -1;
    }
    return 0;
}

/* ---- pre-tokenizer ------------------------------------------------------ */

static HfStep *new_step(HfLoader *L, HfStepKind kind) {
    HfTokenizer *t = L->tok;
    if (t->n_steps == HF_MAX_STEPS) {
        seterr(L->err, L->errlen, "%s: more than %d pre-tokenizers", L->name, HF_MAX_STEPS);
        return NULL;
    }
    HfStep *s = &t->steps[t->n_steps++];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    return s;
}

static int split_step(HfLoader *L, const json_t *pre) {
    const json_t *pat = json_object_get(pre, "pattern");
    const char *re = hf_ld_str(pat, "Regex"), *lit = hf_ld_str(pat, "String");
    const char *beh = hf_ld_str(pre, "behavior");
    int invert = hf_ld_bool(pre, "invert", 0), b = beh ? hf_split_behavior(beh) : 0;
    if (!re && !lit) return hf_ld_bad_field(L, "pre_tokenizer Split", "pattern");
    if (b < 0) return hf_ld_unsupported(L, "Split behavior", beh);
    if (invert < 0) return hf_ld_bad_field(L, "pre_tokenizer Split", "invert");
    HfStep *s = new_step(L, HF_STEP_SPLIT);
    if (!s) return -1;
    s->behavior = b, s->invert = invert;
    const char *p = re ? re : lit;
    return hf_regex_compile(&s->re, p, strlen(p), !re, "pre_tokenizer Split regex", L->err,
                            L->errlen);
}

/* Digits: runs of Unicode numbers (\p{N}) split off, each number alone
 * with individual_digits; a Split on \p{N}, Isolated or Contiguous. */
static int digits_step(HfLoader *L, const json_t *pre) {
    static const char NUM[] = "\\p{N}";
    int each = hf_ld_bool(pre, "individual_digits", 0);
    if (each < 0) return hf_ld_bad_field(L, "pre_tokenizer Digits", "individual_digits");
    HfStep *s = new_step(L, HF_STEP_SPLIT);
    if (!s) return -1;
    s->behavior = each ? HF_SPLIT_ISOLATED : HF_SPLIT_CONTIGUOUS;
    return hf_regex_compile(&s->re, NUM, strlen(NUM), 0, "pre_tokenizer Digits", L->err, L->errlen);
}

static int bytelevel_step(HfLoader *L, const json_t *pre) {
    int prefix = hf_ld_bool(pre, "add_prefix_space", 0),
        use_regex = hf_ld_bool(pre, "use_regex", 1);
    if (prefix < 0) return hf_ld_bad_field(L, "pre_tokenizer ByteLevel", "add_prefix_space");
    if (use_regex < 0) return hf_ld_bad_field(L, "pre_tokenizer ByteLevel", "use_regex");
    HfStep *s = new_step(L, HF_STEP_BYTELEVEL);
    if (!s) return -1;
    s->add_prefix_space = prefix;
    s->use_regex = use_regex;
    return 0;
}

int hf_ld_pretok(HfLoader *L, const json_t *pre, int depth) {
    if (!pre || json_is_null(pre)) return 0;
    if (depth > MAX_DEPTH) return too_deep(L, "pre_tokenizer");
    const char *type = type_of(pre);
    if (strcmp(type, "ByteLevel") == 0) return bytelevel_step(L, pre);
    if (strcmp(type, "Split") == 0) return split_step(L, pre);
    if (strcmp(type, "Digits") == 0) return digits_step(L, pre);
    if (strcmp(type, "Sequence") != 0) return hf_ld_unsupported(L, "pre_tokenizer", type);
    const json_t *list = json_object_get(pre, "pretokenizers");
    if (!json_is_array(list)) return hf_ld_bad_field(L, "pre_tokenizer", "pretokenizers");
    for (size_t i = 0; i < json_array_size(list); ++i)
        if (hf_ld_pretok(L, json_array_get(list, i), depth + 1) < 0) return -1;
    return 0;
}

int hf_ld_check_steps(HfLoader *L) {
    HfTokenizer *t = L->tok;
    int last = t->n_steps - 1;
    for (int i = 0; i < last; ++i)
        if (t->steps[i].kind == HF_STEP_BYTELEVEL)
            return hf_ld_unsupported(L, "pre_tokenizer", "ByteLevel before another pre-tokenizer");
    if (last < 0 || t->steps[last].kind != HF_STEP_BYTELEVEL)
        return hf_ld_unsupported(L, "pre_tokenizer", "without ByteLevel");
    if (!t->steps[last].use_regex) return 0;
    return hf_regex_compile(&t->bytelevel_re, GPT2_RE, strlen(GPT2_RE), 0, "ByteLevel regex",
                            L->err, L->errlen);
}

/* ---- post-processor ----------------------------------------------------- */

/* The id of special token name: the vocabulary's, else the
 * TemplateProcessing special_tokens entry's first id. */
static int special_id(HfLoader *L, const char *name, const json_t *specials, int32_t *id) {
    *id = name ? hf_tokenizer_token_id(L->tok, name) : -1;
    if (*id < 0 && name)
        *id = hf_ld_id(json_array_get(json_object_get(json_object_get(specials, name), "ids"), 0));
    if (*id >= 0) return 0;
    return seterr(L->err, L->errlen, "%s: post_processor special token \"%.60s\" has no id",
                  L->name, name ? name : "(unnamed)");
}

/* Prepend pre[n_pre] to prefix and append post[n_post] to suffix. */
static int wrap(HfLoader *L, const HfIds *pre, const HfIds *post) {
    HfTokenizer *t = L->tok;
    HfIds p = {0};
    int rc = 0;
    for (size_t i = 0; i < pre->n && rc == 0; ++i) rc = hf_ids_push(&p, pre->v[i]);
    for (size_t i = 0; i < t->prefix.n && rc == 0; ++i) rc = hf_ids_push(&p, t->prefix.v[i]);
    for (size_t i = 0; i < post->n && rc == 0; ++i) rc = hf_ids_push(&t->suffix, post->v[i]);
    free(t->prefix.v);
    t->prefix = p;
    return rc < 0 ? hf_ld_oom(L) : 0;
}

static int template_post(HfLoader *L, const json_t *post) {
    const json_t *single = json_object_get(post, "single"),
                 *specials = json_object_get(post, "special_tokens");
    if (!json_is_array(single)) return hf_ld_bad_field(L, "post_processor", "single");
    HfIds pre = {0}, after = {0};
    int seen_a = 0, rc = 0;
    for (size_t i = 0; i < json_array_size(single) && rc == 0; ++i) {
        const json_t *it = json_array_get(single, i), *sp = json_object_get(it, "SpecialToken");
        int32_t id;
        if (!sp) {
            seen_a |= json_object_get(it, "Sequence") != NULL;
            continue;
        }
        rc = special_id(L, hf_ld_str(sp, "id"), specials, &id);
        if (rc == 0 && hf_ids_push(seen_a ? &after : &pre, id) < 0) rc = hf_ld_oom(L);
    }
    if (rc == 0) rc = wrap(L, &pre, &after);
    free(pre.v);
    free(after.v);
    return rc;
}

/* RobertaProcessing / BertProcessing: cls A sep, each given as [token, id]. */
static int cls_sep_post(HfLoader *L, const json_t *post) {
    int32_t ids[2];
    const char *keys[2] = {"cls", "sep"};
    for (int k = 0; k < 2; ++k) {
        const json_t *pair = json_object_get(post, keys[k]);
        const char *name = json_string_value(json_array_get(pair, 0));
        ids[k] = name ? hf_tokenizer_token_id(L->tok, name) : -1;
        if (ids[k] < 0) ids[k] = hf_ld_id(json_array_get(pair, 1));
        if (ids[k] < 0) return hf_ld_bad_field(L, "post_processor", keys[k]);
    }
    HfIds pre = {&ids[0], 1, 1}, after = {&ids[1], 1, 1};
    return wrap(L, &pre, &after);
}

int hf_ld_post(HfLoader *L, const json_t *post, int depth) {
    if (!post || json_is_null(post)) return 0;
    if (depth > MAX_DEPTH) return too_deep(L, "post_processor");
    const char *type = type_of(post);
    if (strcmp(type, "ByteLevel") == 0) return 0;
    if (strcmp(type, "TemplateProcessing") == 0) return template_post(L, post);
    if (strcmp(type, "RobertaProcessing") == 0 || strcmp(type, "BertProcessing") == 0)
        return cls_sep_post(L, post);
    if (strcmp(type, "Sequence") != 0) return hf_ld_unsupported(L, "post_processor", type);
    const json_t *list = json_object_get(post, "processors");
    if (!json_is_array(list)) return hf_ld_bad_field(L, "post_processor", "processors");
    for (size_t i = 0; i < json_array_size(list); ++i)
        if (hf_ld_post(L, json_array_get(list, i), depth + 1) < 0) return -1;
    return 0;
}
