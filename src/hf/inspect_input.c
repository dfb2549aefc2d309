/* inspect_input.c: token-id files (read by token_lines.c) and token streams
 * -> fixed windows. */
#include "inspect_input.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "token_lines.h"
#include "util.h"

#define MAX_WINDOW (1u << 20)  /* ids in one line */
#define MAX_WINDOWS (1u << 20) /* lines */

void hf_windows_free(HfWindows *w) {
    free(w->ids);
    memset(w, 0, sizeof *w);
}

/* w->ids [N, T] from w->N and w->T: window i is [bos_id] (when >= 0) and
 * then T or T-1 ids from src + start[i] (start NULL: src + i * stride). */
static int fill(HfWindows *w, const int32_t *src, const size_t *start, size_t stride, int bos_id,
                char *err, size_t errlen) {
    const int b = bos_id >= 0;
    if (!(w->ids = calloc((size_t)w->N * w->T, sizeof(int32_t))))
        return seterr(err, errlen, "out of memory");
    for (int i = 0; i < w->N; i++) {
        int32_t *dst = w->ids + (size_t)i * w->T;
        if (b) dst[0] = bos_id;
        memcpy(dst + b, src + (start ? start[i] : (size_t)i * stride),
               (size_t)(w->T - b) * sizeof(int32_t));
    }
    return 0;
}

/* The windows of a parsed --tokens file: the first n_seq lines (or all),
 * each cut to T ids after the BOS; a shorter line is an error. */
static int windows_from_lines(HfWindows *w, const TokenLines *L, const char *path, int seq_len,
                              int n_seq, int bos_id, char *err, size_t errlen) {
    const int b = bos_id >= 0;
    size_t shortest = (size_t)-1;
    for (size_t i = 0; i < L->n_windows; i++) {
        size_t len = L->start[i + 1] - L->start[i];
        shortest = len < shortest ? len : shortest;
    }
    w->T = seq_len > 0 ? seq_len : (int)(shortest + b > (1u << 20) ? 1u << 20 : shortest + b);
    if (n_seq > 0 && (size_t)n_seq > L->n_windows)
        return seterr(err, errlen, "%s: --n-seq %d but the file has %zu windows", path, n_seq,
                      L->n_windows);
    if (n_seq <= 0 && L->n_windows > MAX_WINDOWS)
        return seterr(err, errlen, "%s: more than %u windows", path, MAX_WINDOWS);
    w->N = n_seq > 0 ? n_seq : (int)L->n_windows;
    for (int i = 0; i < w->N; i++) {
        size_t len = L->start[i + 1] - L->start[i];
        if (len + b < (size_t)w->T)
            return seterr(err, errlen, "%s: window %d has %zu ids, fewer than --seq-len %d%s", path,
                          i + 1, len, w->T, b ? " minus the BOS" : "");
    }
    return fill(w, L->ids, L->start, 0, bos_id, err, errlen);
}

int hf_windows_from_token_file(HfWindows *w, const char *path, int seq_len, int n_seq, int bos_id,
                               int vocab, char *err, size_t errlen) {
    memset(w, 0, sizeof *w);
    TokenLines L;
    if (token_lines_read(&L, path, vocab, MAX_WINDOW, err, errlen) < 0) return -1;
    int rc = windows_from_lines(w, &L, path, seq_len, n_seq, bos_id, err, errlen);
    token_lines_free(&L);
    snprintf(w->tokenizer, sizeof w->tokenizer, "none: token ids read from %s", path);
    if (rc < 0) hf_windows_free(w);
    return rc;
}

int hf_windows_from_stream(HfWindows *w, const int32_t *ids, size_t n, int seq_len, int n_seq,
                           int bos_id, char *err, size_t errlen) {
    const int b = bos_id >= 0;
    memset(w, 0, sizeof *w);
    if (seq_len <= b) return seterr(err, errlen, "--seq-len %d is too short", seq_len);
    size_t per = (size_t)(seq_len - b), fit = n / per;
    if (fit == 0)
        return seterr(err, errlen, "the text has %zu tokens, fewer than one window of %zu", n, per);
    if (n_seq > 0 && (size_t)n_seq > fit)
        return seterr(err, errlen, "the text has %zu tokens: %zu windows of %d, not --n-seq %d", n,
                      fit, seq_len, n_seq);
    w->N = n_seq > 0 ? n_seq : (int)(fit > (1u << 20) ? 1u << 20 : fit);
    w->T = seq_len;
    return fill(w, ids, NULL, per, bos_id, err, errlen);
}
