/* hf_normalize.h: the Unicode normalizers a tokenizer.json may name (NFC,
 * NFD, NFKC, NFKD), through ICU (Debian libicu-dev). */
#ifndef GATELAB_HF_NORMALIZE_H
#define GATELAB_HF_NORMALIZE_H

#include <stddef.h>

typedef enum { HF_NORM_NFC = 1, HF_NORM_NFD, HF_NORM_NFKC, HF_NORM_NFKD } HfNormForm;

/* HfNormForm for a normalizer "type" name, or 0 when it is none of these. */
int hf_norm_form(const char *type);

/* in[len] (valid UTF-8) normalized to form: a malloc'd NUL-terminated
 * string, its length in *outlen. -1 with a message on failure. */
int hf_normalize(int form, const char *in, size_t len, char **out, size_t *outlen, char *err,
                 size_t errlen);

#endif
