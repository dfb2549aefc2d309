/* token_lines.c: parse a --tokens file (one window of ids per line). */
#include "token_lines.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define MAX_FILE (1u << 30)

typedef struct {
    const char *name;
    int32_t vocab;
    size_t max_len, ids_cap, start_cap;
    char *err;
    size_t errlen;
} Parse;

static int grow(void **p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap : 256;
    while (c < need) c *= 2;
    void *q = realloc(*p, c * elem);
    if (!q) return -1;
    *p = q;
    *cap = c;
    return 0;
}

/* One id at s[*i..end) (digits only), advancing *i. */
static int parse_id(Parse *P, const char *s, size_t *i, size_t end, size_t line, int32_t *id) {
    size_t j = *i;
    long long v = 0;
    while (j < end && s[j] != ' ' && s[j] != '\t' && s[j] != '\r') {
        if (s[j] < '0' || s[j] > '9' || v > 1000000000000LL) {
            size_t k = *i;
            while (k < end && s[k] != ' ' && s[k] != '\t' && k - *i < 24) ++k;
            return seterr(P->err, P->errlen,
                          "%s:%zu: \"%.*s\" is not a token id (a decimal integer >= 0)", P->name,
                          line, (int)(k - *i), s + *i);
        }
        v = v * 10 + (s[j++] - '0');
    }
    if (P->vocab > 0 ? v >= P->vocab : v > INT32_MAX)
        return seterr(P->err, P->errlen, "%s:%zu: token id %lld is out of range [0, %d)", P->name,
                      line, v, P->vocab > 0 ? P->vocab : INT32_MAX);
    *id = (int32_t)v;
    *i = j;
    return 0;
}

/* The ids of line s[a, end) appended to out. */
static int parse_line(Parse *P, TokenLines *out, const char *s, size_t a, size_t end, size_t line) {
    size_t i = a, n0 = out->n_ids;
    for (;;) {
        while (i < end && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) ++i;
        if (i >= end) break;
        if (grow((void **)&out->ids, &P->ids_cap, out->n_ids + 1, sizeof *out->ids) < 0)
            return seterr(P->err, P->errlen, "%s: out of memory", P->name);
        if (parse_id(P, s, &i, end, line, &out->ids[out->n_ids]) < 0) return -1;
        if (++out->n_ids - n0 > P->max_len && P->max_len)
            return seterr(P->err, P->errlen, "%s:%zu: more than %zu ids in one window", P->name,
                          line, P->max_len);
    }
    if (out->n_ids == n0) return 0; /* blank */
    if (grow((void **)&out->start, &P->start_cap, out->n_windows + 2, sizeof *out->start) < 0)
        return seterr(P->err, P->errlen, "%s: out of memory", P->name);
    out->start[++out->n_windows] = out->n_ids;
    return 0;
}

int token_lines_parse(TokenLines *out, const char *text, size_t len, const char *name,
                      int32_t vocab_size, size_t max_len, char *err, size_t errlen) {
    Parse P = {name, vocab_size, max_len, 0, 0, err, errlen};
    memset(out, 0, sizeof *out);
    if (grow((void **)&out->start, &P.start_cap, 2, sizeof *out->start) < 0)
        return seterr(err, errlen, "%s: out of memory", name);
    out->start[0] = 0;
    size_t a = 0, line = 1;
    while (a < len) {
        const char *nl = memchr(text + a, '\n', len - a);
        size_t end = nl ? (size_t)(nl - text) : len;
        if (parse_line(&P, out, text, a, end, line) < 0) {
            token_lines_free(out);
            return -1;
        }
        a = end + 1;
        ++line;
    }
    if (out->n_windows == 0) {
        token_lines_free(out);
        return seterr(err, errlen, "%s: no token ids (one window per line expected)", name);
    }
    return 0;
}

int token_lines_read(TokenLines *out, const char *path, int32_t vocab_size, size_t max_len,
                     char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    FILE *f = input_fopen(path, err, errlen); /* a regular file, never a FIFO */
    if (!f) return -1;
    char *buf = NULL;
    size_t n = 0, cap = 0, got;
    do {
        if (grow((void **)&buf, &cap, n + 65536, 1) < 0 || cap > MAX_FILE) {
            free(buf);
            fclose(f);
            return seterr(err, errlen, "%s: too large (over 1 GB) or out of memory", path);
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    int bad = ferror(f);
    fclose(f);
    int rc = bad ? seterr(err, errlen, "cannot read %s", path)
                 : token_lines_parse(out, buf, n, path, vocab_size, max_len, err, errlen);
    free(buf);
    return rc;
}

void token_lines_free(TokenLines *tl) {
    free(tl->ids);
    free(tl->start);
    memset(tl, 0, sizeof *tl);
}
