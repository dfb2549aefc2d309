/* inspect_input.c: token-id files and token streams -> fixed windows. */
#include "inspect_input.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define MAX_LINES (1 << 20)

void hf_windows_free(HfWindows *w) {
    free(w->ids);
    memset(w, 0, sizeof *w);
}

typedef struct {
    int32_t *v;
    size_t n, cap;
} Ids;

static int ids_push(Ids *a, int32_t x) {
    if (a->n == a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 1024;
        int32_t *p = realloc(a->v, cap * sizeof *p);
        if (!p)
            return -1;
        a->v = p, a->cap = cap;
    }
    a->v[a->n++] = x;
    return 0;
}

/* One line's ids appended to all; returns how many, -1 on a bad word. */
static long parse_line(char *line, Ids *all, const char *path, long lineno, int vocab, char *err,
                       size_t errlen) {
    long k = 0;
    for (char *s = strtok(line, " \t\r\n"); s; s = strtok(NULL, " \t\r\n"), k++) {
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (*end || errno || v < 0 || v >= vocab)
            return seterr(err, errlen, "%s:%ld: '%.20s' is not a token id in [0, %d)", path, lineno,
                          s, vocab);
        if (ids_push(all, (int32_t)v) < 0)
            return seterr(err, errlen, "out of memory");
    }
    return k;
}

typedef struct {
    Ids all;
    size_t *start, *len;
    long n;
} Lines;

static int read_lines(Lines *L, const char *path, int vocab, char *err, size_t errlen) {
    FILE *f = input_fopen(path, err, errlen);
    if (!f)
        return -1;
    char *line = NULL;
    size_t cap = 0;
    long lineno = 0;
    int rc = 0;
    L->start = calloc(MAX_LINES, sizeof(size_t));
    L->len = calloc(MAX_LINES, sizeof(size_t));
    if (!L->start || !L->len)
        rc = seterr(err, errlen, "out of memory");
    while (rc == 0 && getline(&line, &cap, f) >= 0) {
        lineno++;
        size_t at = L->all.n;
        long k = parse_line(line, &L->all, path, lineno, vocab, err, errlen);
        if (k < 0)
            rc = -1;
        if (k <= 0)
            continue;
        if (L->n >= MAX_LINES)
            rc = seterr(err, errlen, "%s: more than %d windows", path, MAX_LINES);
        else
            L->start[L->n] = at, L->len[L->n++] = (size_t)k;
    }
    free(line);
    fclose(f);
    if (rc == 0 && L->n == 0)
        rc = seterr(err, errlen, "%s: no token ids", path);
    return rc;
}

int hf_windows_from_token_file(HfWindows *w, const char *path, int seq_len, int n_seq, int bos_id,
                               int vocab, char *err, size_t errlen) {
    memset(w, 0, sizeof *w);
    Lines L = {{0}, NULL, NULL, 0};
    int rc = read_lines(&L, path, vocab, err, errlen);
    const int b = bos_id >= 0;
    size_t shortest = (size_t)-1;
    for (long i = 0; rc == 0 && i < L.n; i++)
        shortest = L.len[i] < shortest ? L.len[i] : shortest;
    if (rc == 0) {
        w->T = seq_len > 0 ? seq_len : (int)(shortest + b > (1u << 20) ? 1u << 20 : shortest + b);
        w->N = n_seq > 0 && n_seq < L.n ? n_seq : (int)L.n;
        if (n_seq > L.n)
            rc = seterr(err, errlen, "%s: --n-seq %d but the file has %ld windows", path, n_seq,
                        L.n);
    }
    for (int i = 0; rc == 0 && i < w->N; i++)
        if (L.len[i] + b < (size_t)w->T)
            rc = seterr(err, errlen, "%s: window %d has %zu ids, fewer than --seq-len %d%s", path,
                        i + 1, L.len[i], w->T, b ? " minus the BOS" : "");
    if (rc == 0 && !(w->ids = calloc((size_t)w->N * w->T, sizeof(int32_t))))
        rc = seterr(err, errlen, "out of memory");
    for (int i = 0; rc == 0 && i < w->N; i++) {
        int32_t *dst = w->ids + (size_t)i * w->T;
        if (b)
            dst[0] = bos_id;
        memcpy(dst + b, L.all.v + L.start[i], (size_t)(w->T - b) * sizeof(int32_t));
    }
    snprintf(w->tokenizer, sizeof w->tokenizer, "none: token ids read from %s", path);
    free(L.all.v), free(L.start), free(L.len);
    if (rc < 0)
        hf_windows_free(w);
    return rc;
}

int hf_windows_from_stream(HfWindows *w, const int32_t *ids, size_t n, int seq_len, int n_seq,
                           int bos_id, char *err, size_t errlen) {
    const int b = bos_id >= 0;
    memset(w, 0, sizeof *w);
    if (seq_len <= b)
        return seterr(err, errlen, "--seq-len %d is too short", seq_len);
    size_t per = (size_t)(seq_len - b), fit = n / per;
    if (fit == 0)
        return seterr(err, errlen, "the text has %zu tokens, fewer than one window of %zu", n, per);
    if (n_seq > 0 && (size_t)n_seq > fit)
        return seterr(err, errlen, "the text has %zu tokens: %zu windows of %d, not --n-seq %d", n,
                      fit, seq_len, n_seq);
    w->N = n_seq > 0 ? n_seq : (int)(fit > (1u << 20) ? 1u << 20 : fit);
    w->T = seq_len;
    if (!(w->ids = calloc((size_t)w->N * w->T, sizeof(int32_t))))
        return seterr(err, errlen, "out of memory");
    for (int i = 0; i < w->N; i++) {
        int32_t *dst = w->ids + (size_t)i * w->T;
        if (b)
            dst[0] = bos_id;
        memcpy(dst + b, ids + (size_t)i * per, per * sizeof(int32_t));
    }
    return 0;
}
