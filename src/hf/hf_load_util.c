/* hf_load_util.c: the tokenizer loader's helpers (hf_load_priv.h), used
 * by hf_tokenizer_load.c and hf_load_pipeline.c: messages, typed JSON
 * fields, registering a token. */
#include <jansson.h>
#include <stdlib.h>

#include "hf_bytelevel.h"
#include "hf_load_priv.h"
#include "util.h"

int hf_ld_unsupported(HfLoader *L, const char *what, const char *type) {
    return seterr(L->err, L->errlen,
                  "%s: %s \"%s\" is not supported by gatelab's byte-level BPE reader; "
                  "tokenize elsewhere and pass --tokens FILE",
                  L->name, what, type);
}

int hf_ld_oom(HfLoader *L) { return seterr(L->err, L->errlen, "%s: out of memory", L->name); }

/* obj.key as a string, or NULL (absent, null or not a string). */
const char *hf_ld_str(const json_t *obj, const char *key) {
    return json_string_value(json_object_get(obj, key));
}

/* obj.key as a boolean: def when absent or null, -1 when another type. */
int hf_ld_bool(const json_t *obj, const char *key, int def) {
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v)) return def;
    return json_is_boolean(v) ? json_is_true(v) : -1;
}

int hf_ld_bad_field(HfLoader *L, const char *where, const char *key) {
    return seterr(L->err, L->errlen, "%s: %s.%s has the wrong type", L->name, where, key);
}

/* An id in [0, HF_MAX_ID) from json v, or -1. */
int32_t hf_ld_id(const json_t *v) {
    if (!json_is_integer(v)) return -1;
    json_int_t x = json_integer_value(v);
    return x >= 0 && x < HF_MAX_ID ? (int32_t)x : -1;
}

/* Register token text[len] -> id for lookups and, when it spells bytes,
 * for BPE. */
int hf_ld_add_token(HfLoader *L, const char *text, size_t len, int32_t id) {
    HfTokenizer *t = L->tok;
    char *raw = malloc(len + 1);
    size_t rawlen;
    if (!raw || hf_map_put(&t->token_ids, text, len, id) < 0) {
        free(raw);
        return hf_ld_oom(L);
    }
    int rc = 0;
    if (hf_bytelevel_unmap(text, len, raw, &rawlen) == 0)
        rc = hf_map_put(&t->bpe.vocab, raw, rawlen, id);
    free(raw);
    if (id > t->max_id) t->max_id = id;
    return rc < 0 ? hf_ld_oom(L) : 0;
}
