/* hf_tokenizer_load.c: tokenizer.json (jansson) -> HfTokenizer: the file
 * and the model (vocab, merges); the rest is in hf_load_pipeline.c, the
 * helpers both use in hf_load_util.c. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "hf_bytelevel.h"
#include "hf_normalize.h"
#include "hf_load_priv.h"
#include "util.h"

#define MAX_FILE (1u << 30)
#define MAX_DEPTH 8

static int load_vocab(HfLoader *L, const json_t *vocab) {
    const char *key;
    json_t *v;
    if (!json_is_object(vocab))
        return seterr(L->err, L->errlen, "%s: model.vocab is not an object", L->name);
    json_object_foreach((json_t *)vocab, key, v) {
        int32_t id = hf_ld_id(v);
        if (id < 0)
            return seterr(L->err, L->errlen, "%s: model.vocab[\"%.60s\"] is not an id in [0, %d)",
                          L->name, key, HF_MAX_ID);
        if (hf_ld_add_token(L, key, strlen(key), id) < 0) return -1;
    }
    return 0;
}

/* The two halves of merge m ("a b" or ["a", "b"]). */
static int merge_parts(HfLoader *L, const json_t *m, size_t i, char **a, char **b) {
    const char *s = json_string_value(m);
    if (s) {
        const char *sp = strchr(s, ' ');
        if (!sp || sp == s || !sp[1] || strchr(sp + 1, ' '))
            return seterr(L->err, L->errlen, "%s: model.merges[%zu] \"%.60s\" is not \"a b\"",
                          L->name, i, s);
        *a = strndup(s, (size_t)(sp - s));
        *b = strdup(sp + 1);
    } else if (json_is_array(m) && json_array_size(m) == 2 &&
               json_is_string(json_array_get(m, 0)) && json_is_string(json_array_get(m, 1))) {
        *a = strdup(json_string_value(json_array_get(m, 0)));
        *b = strdup(json_string_value(json_array_get(m, 1)));
    } else {
        return seterr(L->err, L->errlen, "%s: model.merges[%zu] is neither \"a b\" nor [a, b]",
                      L->name, i);
    }
    return *a && *b ? 0 : hf_ld_oom(L);
}

/* Vocab id of the bytes of a (+ b when given), -2 when a is not
 * byte-level text, -1 when absent. */
static int32_t raw_id(const HfTokenizer *t, const char *a, const char *b) {
    size_t la = strlen(a), lb = b ? strlen(b) : 0, na, nb = 0;
    char *raw = malloc(la + lb + 1);
    int32_t id = -1;
    if (!raw) return -1;
    if (hf_bytelevel_unmap(a, la, raw, &na) < 0 ||
        (b && hf_bytelevel_unmap(b, lb, raw + na, &nb) < 0))
        id = -2;
    else if (!hf_map_get(&t->bpe.vocab, raw, na + nb, &id)) id = -1;
    free(raw);
    return id;
}

static int add_merge(HfLoader *L, const char *a, const char *b, size_t i) {
    HfTokenizer *t = L->tok;
    int32_t ia = raw_id(t, a, NULL), ib = raw_id(t, b, NULL), ir = raw_id(t, a, b);
    if (ia == -2 || ib == -2) return 0; /* not bytes: can never apply */
    if (ia < 0 || ib < 0 || ir < 0)
        return seterr(L->err, L->errlen,
                      "%s: model.merges[%zu] (\"%.40s\" \"%.40s\"): %s is not in the vocab",
                      L->name, i, a, b,
                      ia < 0   ? "the left part"
                      : ib < 0 ? "the right part"
                               : "the merged token");
    return hf_bpe_add_merge(&t->bpe, ia, ib, ir) < 0 ? hf_ld_oom(L) : 0;
}

static int load_merges(HfLoader *L, const json_t *merges) {
    if (!json_is_array(merges))
        return seterr(L->err, L->errlen, "%s: model.merges is not an array", L->name);
    for (size_t i = 0; i < json_array_size(merges); ++i) {
        char *a = NULL, *b = NULL;
        int rc = merge_parts(L, json_array_get(merges, i), i, &a, &b);
        if (rc == 0) rc = add_merge(L, a, b, i);
        free(a);
        free(b);
        if (rc < 0) return -1;
    }
    return 0;
}

/* The options of model that we refuse or read (vocab and merges apart). */
static int model_options(HfLoader *L, const json_t *model) {
    HfBpe *m = &L->tok->bpe;
    json_t *drop = json_object_get(model, "dropout");
    if (drop && !json_is_null(drop) && !(json_is_number(drop) && json_number_value(drop) == 0))
        return hf_ld_unsupported(L, "model option", "dropout");
    if (hf_ld_bool(model, "byte_fallback", 0) != 0)
        return hf_ld_unsupported(L, "model option", "byte_fallback");
    const char *p = hf_ld_str(model, "continuing_subword_prefix"),
               *s = hf_ld_str(model, "end_of_word_suffix");
    if ((p && *p) || (s && *s))
        return hf_ld_unsupported(L, "model option",
                                 p && *p ? "continuing_subword_prefix" : "end_of_word_suffix");
    m->fuse_unk = hf_ld_bool(model, "fuse_unk", 0);
    m->ignore_merges = hf_ld_bool(model, "ignore_merges", 0);
    if (m->fuse_unk < 0) return hf_ld_bad_field(L, "model", "fuse_unk");
    if (m->ignore_merges < 0) return hf_ld_bad_field(L, "model", "ignore_merges");
    return 0;
}

static int load_model(HfLoader *L, const json_t *model) {
    if (!json_is_object(model))
        return seterr(L->err, L->errlen, "%s: no \"model\" object", L->name);
    const char *type = hf_ld_str(model, "type");
    if (!type) return seterr(L->err, L->errlen, "%s: model.type is missing", L->name);
    if (strcmp(type, "BPE") != 0) return hf_ld_unsupported(L, "model type", type);
    if (model_options(L, model) < 0) return -1;
    return load_vocab(L, json_object_get(model, "vocab"));
}

/* unk_token, after the added tokens are known. */
static int load_unk(HfLoader *L, const json_t *model) {
    json_t *u = json_object_get(model, "unk_token");
    if (!u || json_is_null(u)) return 0;
    if (!json_is_string(u)) return hf_ld_bad_field(L, "model", "unk_token");
    L->tok->bpe.unk_id = hf_tokenizer_token_id(L->tok, json_string_value(u));
    if (L->tok->bpe.unk_id < 0)
        return seterr(L->err, L->errlen, "%s: model.unk_token \"%.60s\" is not in the vocab",
                      L->name, json_string_value(u));
    return 0;
}

/* id -> its slot in token_ids, for hf_tokenizer_token_text. */
static int index_ids(HfLoader *L) {
    HfTokenizer *t = L->tok;
    t->id_slot = malloc(((size_t)t->max_id + 1) * sizeof *t->id_slot);
    if (!t->id_slot) return hf_ld_oom(L);
    for (int32_t i = 0; i <= t->max_id; ++i) t->id_slot[i] = -1;
    for (size_t i = 0; i < t->token_ids.cap; ++i)
        if (t->token_ids.slots[i].hash) t->id_slot[t->token_ids.slots[i].val] = (int32_t)i;
    return 0;
}

static int load_root(HfLoader *L, const json_t *root) {
    HfTokenizer *t = L->tok;
    if (!json_is_object(root)) return seterr(L->err, L->errlen, "%s: not a JSON object", L->name);
    const json_t *model = json_object_get(root, "model");
    if (load_model(L, model) < 0 ||
        hf_ld_normalizer(L, json_object_get(root, "normalizer"), 0) < 0 ||
        hf_ld_added(L, json_object_get(root, "added_tokens")) < 0 || load_unk(L, model) < 0 ||
        load_merges(L, json_object_get(model, "merges")) < 0)
        return -1;
    hf_bpe_index_bytes(&t->bpe);
    if (hf_ld_pretok(L, json_object_get(root, "pre_tokenizer"), 0) < 0 || hf_ld_check_steps(L) < 0)
        return -1;
    if (hf_ld_post(L, json_object_get(root, "post_processor"), 0) < 0) return -1;
    t->mctx = hf_regex_match_context();
    return t->mctx ? index_ids(L) : hf_ld_oom(L);
}

static int load_json(HfTokenizer **out, const char *json, size_t len, const char *name, char *err,
                     size_t errlen) {
    json_error_t je;
    *out = NULL;
    json_t *root = json_loadb(json, len, 0, &je);
    if (!root)
        return seterr(err, errlen, "%s: not valid JSON: %s (line %d)", name, je.text, je.line);
    HfTokenizer *t = calloc(1, sizeof *t);
    HfLoader L = {t, name, err, errlen};
    int rc = t ? 0 : seterr(err, errlen, "%s: out of memory", name);
    if (t) {
        hf_bpe_init(&t->bpe);
        t->max_id = -1;
        rc = load_root(&L, root);
    }
    json_decref(root);
    if (rc < 0) {
        hf_tokenizer_free(t);
        return -1;
    }
    *out = t;
    return 0;
}

int hf_tokenizer_load_buffer(HfTokenizer **out, const char *json, size_t len, const char *name,
                             char *err, size_t errlen) {
    int rc = load_json(out, json, len, name, err, errlen);
    if (rc < 0 && errlen) one_line(err); /* jansson quotes the file */
    return rc;
}

int hf_tokenizer_load(HfTokenizer **out, const char *path, char *err, size_t errlen) {
    *out = NULL;
    size_t n;
    char *buf = input_slurp(path, MAX_FILE, &n, err, errlen); /* never a FIFO */
    if (!buf) return -1;
    int rc = hf_tokenizer_load_buffer(out, buf, n, path, err, errlen);
    free(buf);
    return rc;
}
