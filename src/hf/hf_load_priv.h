/* hf_load_priv.h: the loader's state and helpers (hf_load_util.c), shared by
 * hf_tokenizer_load.c (file, model) and hf_load_pipeline.c (normalizer,
 * added tokens, pre-tokenizer, post-processor). */
#ifndef GATELAB_HF_LOAD_PRIV_H
#define GATELAB_HF_LOAD_PRIV_H

#include <jansson.h>

#include "hf_tokenizer_priv.h"

typedef struct {
    HfTokenizer *tok;
    const char *name; /* the file, for messages */
    char *err;
    size_t errlen;
} HfLoader;

/* -1 with "NAME: WHAT "TYPE" is not supported ... --tokens FILE". */
int hf_ld_unsupported(HfLoader *L, const char *what, const char *type);
int hf_ld_oom(HfLoader *L);
int hf_ld_bad_field(HfLoader *L, const char *where, const char *key);
/* obj.key as a string, or NULL (absent, null or not a string). */
const char *hf_ld_str(const json_t *obj, const char *key);
/* obj.key as a boolean: def when absent or null, -1 when another type. */
int hf_ld_bool(const json_t *obj, const char *key, int def);
/* An id in [0, HF_MAX_ID) from v, or -1. */
int32_t hf_ld_id(const json_t *v);
/* Register token text[len] -> id for lookups and, when it spells bytes,
 * for BPE (a later registration of the same text wins). */
int hf_ld_add_token(HfLoader *L, const char *text, size_t len, int32_t id);

int hf_ld_normalizer(HfLoader *L, const json_t *norm, int depth);
int hf_ld_added(HfLoader *L, const json_t *added);
int hf_ld_pretok(HfLoader *L, const json_t *pre, int depth);
/* ByteLevel exactly once and last; compiles its regex. */
int hf_ld_check_steps(HfLoader *L);
int hf_ld_post(HfLoader *L, const json_t *post, int depth);

#endif
