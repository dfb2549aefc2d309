/* fuzz_entry_hf.c: see fuzz_entry_hf.h. */
#include "fuzz_entry_hf.h"

#include <string.h>

#include "hf_tokenizer.h"
#include "token_lines.h"

static const char SAMPLE[] =
    "Hello world! I'm 12345 \xf0\x9f\x98\x80 \xe6\x97\xa5\xe6\x9c\xac  \n\n\t"
    "<|endoftext|><s>\xff\xc0\x80 caf\xc3\xa9 cafe\xcc\x81";

/* Encode text[n] (with BOS when asked and there is one); check the ids. */
static int encode_check(const HfTokenizer *tok, const char *text, size_t n, int bos) {
    char err[512] = "";
    int32_t *ids = NULL;
    size_t k = 0;
    if (bos && hf_tokenizer_bos_id(tok) < 0) return 0;
    if (hf_tokenizer_encode(tok, text, n, bos, &ids, &k, err, sizeof err) < 0) {
        fuzz_assert(err[0] != 0);
        return 1;
    }
    for (size_t i = 0; i < k; ++i)
        fuzz_assert(ids[i] >= 0 && ids[i] < hf_tokenizer_vocab_size(tok));
    free(ids);
    return 0;
}

int fuzz_hftok_one(const uint8_t *data, size_t size) {
    const char *json = (const char *)data, *nul = memchr(data, 0, size);
    size_t jlen = nul ? (size_t)(nul - json) : size;
    const char *text = nul ? nul + 1 : SAMPLE;
    size_t tlen = nul ? size - jlen - 1 : sizeof SAMPLE - 1;
    char err[512] = "";
    HfTokenizer *tok = NULL;
    if (hf_tokenizer_load_buffer(&tok, json, jlen, "fuzz.json", err, sizeof err) < 0) {
        fuzz_assert(tok == NULL && err[0] != 0 && strchr(err, '\n') == NULL);
        return 1;
    }
    int rc = encode_check(tok, text, tlen, 0) | encode_check(tok, text, tlen, 1);
    hf_tokenizer_free(tok);
    return rc;
}

int fuzz_tokenlines_one(const uint8_t *data, size_t size) {
    TokenLines tl;
    char err[512] = "";
    const int32_t vocab = 50257;
    const size_t max_len = 4096;
    if (token_lines_parse(&tl, (const char *)data, size, "fuzz.tokens", vocab, max_len, err,
                          sizeof err) < 0) {
        fuzz_assert(err[0] != 0 && strchr(err, '\n') == NULL);
        return 1;
    }
    fuzz_assert(tl.start[0] == 0 && tl.start[tl.n_windows] == tl.n_ids);
    for (size_t w = 0; w < tl.n_windows; w++) {
        size_t n = tl.start[w + 1] - tl.start[w];
        fuzz_assert(tl.start[w + 1] > tl.start[w] && n <= max_len);
    }
    for (size_t i = 0; i < tl.n_ids; i++) fuzz_assert(tl.ids[i] >= 0 && tl.ids[i] < vocab);
    token_lines_free(&tl);
    return 0;
}
