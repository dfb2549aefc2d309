/* hf_tokenizer_stub.c: placeholder for the tokenizer (hf_tokenizer.c,
 * built on its own branch). DELETE this file when hf_tokenizer.c is merged:
 * until then --text is refused and --tokens is the way in. */
#include "hf_tokenizer.h"
#include "util.h"

int hf_tokenizer_load(HfTokenizer **out, const char *path, char *err, size_t errlen) {
    *out = NULL;
    return seterr(err, errlen, "%s: this build has no tokenizer; pass token ids with --tokens FILE",
                  path);
}
int hf_tokenizer_encode(const HfTokenizer *tok, const char *text, size_t len, int add_bos,
                        int32_t **ids, size_t *n, char *err, size_t errlen) {
    (void)tok, (void)text, (void)len, (void)add_bos;
    *ids = NULL, *n = 0;
    return seterr(err, errlen, "no tokenizer in this build");
}
int32_t hf_tokenizer_bos_id(const HfTokenizer *tok) { return (void)tok, -1; }
void hf_tokenizer_free(HfTokenizer *tok) { (void)tok; }
