/* inspect_text.c: --text FILE -> windows through MODEL_DIR/tokenizer.json
 * (the byte-level BPE tokenizer of hf_tokenizer.h). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hf_tokenizer.h"
#include "inspect_input.h"
#include "util.h"

#define MAX_TEXT_BYTES ((size_t)1 << 30) /* the tokenizer's own limit (1 GB) */

/* FNV-1a 64 of a file, to record which tokenizer.json made the ids. */
static int describe(const char *path, char *out, size_t n) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    uint64_t h = FNV1A64_OFFSET;
    unsigned long long len = 0;
    unsigned char buf[1 << 16];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0) h = fnv1a64(h, buf, got), len += got;
    fclose(f);
    snprintf(out, n, "tokenizer.json (%llu bytes, fnv1a64 %016llx)", len, (unsigned long long)h);
    return 0;
}

/* The end of a prefix of t[len] at about `at` bytes: just after the last
 * line break there that a non-space follows (where the byte-level
 * pre-tokenizers always end a piece, so the prefix encodes as the start of
 * the whole text does), or at itself when there is none. */
static size_t prefix_end(const char *t, size_t len, size_t at) {
    if (at >= len) return len;
    for (size_t i = at; i-- > 1;)
        if (t[i - 1] == '\n' && !isspace((unsigned char)t[i])) return i;
    return at;
}

/* Read f on until buf holds at least want bytes or f ends; *eof set then. */
static int read_to(FILE *f, char **buf, size_t *len, size_t want, int *eof) {
    char *b = realloc(*buf, want + 1);
    if (!b) return -1;
    *buf = b;
    *len += fread(b + *len, 1, want - *len, f);
    *eof = *len < want;
    return ferror(f) ? -1 : 0;
}

/* The ids of as much of path's text as gives `need` ids: growing prefixes
 * (16 bytes per id, then doubling) are read and encoded until one gives
 * need ids or holds the whole file, so a huge file costs what the probe
 * uses, not its size. *ids malloc'd, *n of them (n >= need unless the text
 * is shorter). */
static int encode_enough(const HfTokenizer *tok, const char *path, size_t need, int32_t **ids,
                         size_t *n, char *err, size_t errlen) {
    FILE *f = input_fopen(path, err, errlen);
    if (!f) return -1;
    char *text = NULL;
    size_t len = 0, want = need < ((size_t)1 << 12) ? (size_t)1 << 16 : need * 16;
    int eof = 0, rc = 0;
    *ids = NULL;
    for (;;) {
        if (want > MAX_TEXT_BYTES) want = MAX_TEXT_BYTES;
        if (read_to(f, &text, &len, want, &eof) < 0) {
            rc = seterr(err, errlen, "%s: cannot read it (or out of memory)", path);
            break;
        }
        size_t end = eof ? len : prefix_end(text, len, len);
        rc = hf_tokenizer_encode(tok, text, end, 0, ids, n, err, errlen);
        if (rc < 0 || *n >= need || eof) break;
        if (want == MAX_TEXT_BYTES) {
            rc = seterr(err, errlen, "%s: its first %zu bytes give only %zu tokens", path, len, *n);
            break;
        }
        free(*ids);
        *ids = NULL;
        want *= 2;
    }
    fclose(f);
    free(text);
    if (rc < 0) free(*ids), *ids = NULL;
    return rc;
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
    size_t n = 0;
    int32_t *ids = NULL;
    /* the windows use n_seq x (seq_len minus the BOS) ids, no more */
    int b = *bos_used >= 0, windows = n_seq > 0 ? n_seq : 1 << 20;
    size_t need = (size_t)windows * (size_t)(seq_len > b ? seq_len - b : 1);
    int rc = encode_enough(tok, path, need, &ids, &n, err, errlen);
    if (rc == 0 && bos == 1 && *bos_used < 0)
        rc = seterr(err, errlen, "--bos yes: neither %s nor config.json names a BOS token", tpath);
    if (rc == 0 && n > need) n = need;
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (ids[i] < 0 || ids[i] >= vocab)
            rc = seterr(err, errlen, "%s: token id %d is outside the model's vocabulary of %d",
                        tpath, ids[i], vocab);
    if (rc == 0) rc = hf_windows_from_stream(w, ids, n, seq_len, n_seq, *bos_used, err, errlen);
    if (rc == 0 && describe(tpath, w->tokenizer, sizeof w->tokenizer) < 0)
        snprintf(w->tokenizer, sizeof w->tokenizer, "tokenizer.json");
    free(ids);
    hf_tokenizer_free(tok);
    return rc;
}
