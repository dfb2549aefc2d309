/* inspect_text.c: --text FILE -> windows through MODEL_DIR/tokenizer.json
 * (the byte-level BPE tokenizer of hf_tokenizer.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hf_tokenizer.h"
#include "inspect_input.h"
#include "util.h"

/* FNV-1a 64 of a file, to record which tokenizer.json made the ids. */
static int describe(const char *path, char *out, size_t n) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    unsigned long long h = 1469598103934665603ULL, len = 0;
    int c;
    while ((c = getc(f)) != EOF) h = (h ^ (unsigned char)c) * 1099511628211ULL, len++;
    fclose(f);
    snprintf(out, n, "tokenizer.json (%llu bytes, fnv1a64 %016llx)", len, h);
    return 0;
}

int hf_windows_from_text(HfWindows *w, const char *path, const char *model_dir, int seq_len,
                         int n_seq, int bos, int cfg_bos, int vocab, int *bos_used, char *err,
                         size_t errlen) {
    char tpath[4096];
    snprintf(tpath, sizeof tpath, "%s/tokenizer.json", model_dir);
    memset(w, 0, sizeof *w);
    HfTokenizer *tok = NULL;
    if (hf_tokenizer_load(&tok, tpath, err, errlen) < 0) return -1;
    int32_t tb = hf_tokenizer_bos_id(tok);
    *bos_used = bos < 0 ? tb : bos == 0 ? -1 : tb >= 0 ? tb : cfg_bos;
    size_t len = 0, n = 0;
    int32_t *ids = NULL;
    char *text = input_slurp(path, (size_t)1 << 31, &len, err, errlen);
    int rc = text ? hf_tokenizer_encode(tok, text, len, 0, &ids, &n, err, errlen) : -1;
    if (rc == 0 && bos == 1 && *bos_used < 0)
        rc = seterr(err, errlen, "--bos yes: neither %s nor config.json names a BOS token", tpath);
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (ids[i] < 0 || ids[i] >= vocab)
            rc = seterr(err, errlen, "%s: token id %d is outside the model's vocabulary of %d",
                        tpath, ids[i], vocab);
    if (rc == 0) rc = hf_windows_from_stream(w, ids, n, seq_len, n_seq, *bos_used, err, errlen);
    if (rc == 0 && describe(tpath, w->tokenizer, sizeof w->tokenizer) < 0)
        snprintf(w->tokenizer, sizeof w->tokenizer, "tokenizer.json");
    free(ids);
    free(text);
    hf_tokenizer_free(tok);
    return rc;
}
