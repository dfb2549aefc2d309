/* token_file.c: token files as ids (token_file.h). */
#include "token_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define NPY_MAGIC "\x93NUMPY"
#define TEXT_PROBE 4096 /* bytes looked at to tell a text file */

/* 1 when the first bytes are all text: printable ASCII, whitespace and
 * well-formed UTF-8 sequences. uint16 ids are not: ids below 256 have a
 * zero high byte, and thousands of larger ids whose bytes all happen to
 * form valid UTF-8 do not occur. */
static int looks_like_text(const unsigned char *b, size_t n) {
    if (n < 16) return 0;
    size_t k = n < TEXT_PROBE ? n : TEXT_PROBE;
    for (size_t i = 0; i < k;) {
        unsigned char c = b[i];
        if ((c >= 32 && c < 127) || c == '\n' || c == '\r' || c == '\t') {
            i++;
            continue;
        }
        int more = c >= 0xC2 && c <= 0xDF   ? 1
                   : c >= 0xE0 && c <= 0xEF ? 2
                   : c >= 0xF0 && c <= 0xF4 ? 3
                                            : -1;
        if (more < 0) return 0;
        if (i + (size_t)more >= k) break; /* cut by the probe: judge what came before */
        for (int m = 1; m <= more; m++)
            if ((b[i + (size_t)m] & 0xC0) != 0x80) return 0;
        i += (size_t)more + 1;
    }
    return 1;
}

/* Where the value of 'key' starts in a .npy header dict (after its colon
 * and spaces); NULL when the key is absent. */
static const char *npy_field(const char *h, const char *key) {
    char pat[32];
    snprintf(pat, sizeof pat, "'%s':", key);
    const char *p = strstr(h, pat);
    if (!p) return NULL;
    p += strlen(pat);
    while (*p == ' ') p++;
    return p;
}

typedef struct {
    int width;  /* bytes per id: 1, 2 or 4 */
    int sign;   /* int32: negative values are refused */
    size_t off; /* data offset */
    size_t count;
} NpyInfo;

static int npy_header(const char *path, const unsigned char *b, size_t n, NpyInfo *ni, char *err,
                      size_t errlen) {
    if (n < 10) return seterr(err, errlen, "%s: a truncated .npy header", path);
    int major = b[6];
    size_t hl, start;
    if (major == 1) hl = (size_t)b[8] | (size_t)b[9] << 8, start = 10;
    else if ((major == 2 || major == 3) && n >= 12)
        hl = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24,
        start = 12;
    else
        return seterr(err, errlen, "%s: .npy version %d is not one gatelab reads (1-3)", path,
                      major);
    if (hl > 65536 || start + hl > n)
        return seterr(err, errlen, "%s: a truncated .npy header", path);
    char h[65537];
    memcpy(h, b + start, hl);
    h[hl] = 0;
    const char *d = npy_field(h, "descr"), *fo = npy_field(h, "fortran_order"),
               *sh = npy_field(h, "shape");
    if (!d || !fo || !sh)
        return seterr(err, errlen, "%s: a .npy header without descr, fortran_order or shape", path);
    if (!strncmp(d, "'<u2'", 5)) ni->width = 2, ni->sign = 0;
    else if (!strncmp(d, "'<u4'", 5)) ni->width = 4, ni->sign = 0;
    else if (!strncmp(d, "'<i4'", 5)) ni->width = 4, ni->sign = 1;
    else if (!strncmp(d, "'|u1'", 5)) ni->width = 1, ni->sign = 0;
    else {
        char got[24];
        size_t k = strcspn(d, ",}");
        snprintf(got, sizeof got, "%.*s", (int)(k < 20 ? k : 20), d);
        return seterr(err, errlen,
                      "%s: .npy dtype %s is not token ids (want little-endian uint16 '<u2', "
                      "uint32 '<u4', int32 '<i4' or uint8 '|u1')",
                      path, got);
    }
    if (strncmp(fo, "False", 5))
        return seterr(err, errlen, "%s: a Fortran-order .npy array (save it in C order)", path);
    if (*sh != '(') return seterr(err, errlen, "%s: a .npy shape that does not parse", path);
    size_t count = 1;
    const char *p = sh + 1;
    for (;;) {
        while (*p == ' ' || *p == ',') p++;
        if (*p == ')') break;
        char *end;
        unsigned long long v = strtoull(p, &end, 10);
        if (end == p || v > ((size_t)-1) / 8 / (count ? count : 1))
            return seterr(err, errlen, "%s: a .npy shape that does not parse", path);
        count *= (size_t)v;
        p = end;
    }
    ni->off = start + hl;
    ni->count = count;
    if ((n - ni->off) != count * (size_t)ni->width)
        return seterr(err, errlen,
                      "%s: the .npy header declares %zu ids of %d bytes, but %zu data bytes "
                      "follow it",
                      path, count, ni->width, n - ni->off);
    return 0;
}

int token_file_decode(const char *path, const unsigned char *buf, size_t bytes, uint32_t **out,
                      size_t *n, long long *max_id, char *err, size_t errlen) {
    *out = NULL, *n = 0, *max_id = -1;
    NpyInfo ni = {2, 0, 0, bytes / 2};
    int npy = bytes >= 6 && !memcmp(buf, NPY_MAGIC, 6);
    if (npy) {
        if (npy_header(path, buf, bytes, &ni, err, errlen)) return -1;
    } else {
        if (looks_like_text(buf, bytes))
            return seterr(err, errlen,
                          "%s looks like a text file, not uint16 token ids (for text use "
                          "data=text; for ids past 65535 a .npy of uint32)",
                          path);
        if (bytes % 2)
            return seterr(err, errlen, "%s has an odd byte count (%zu): not a uint16 token file",
                          path, bytes);
    }
    uint32_t *tok = malloc((ni.count ? ni.count : 1) * sizeof *tok);
    if (!tok) return seterr(err, errlen, "out of memory for %s (%zu tokens)", path, ni.count);
    const unsigned char *d = buf + ni.off;
    long long mx = -1;
    for (size_t i = 0; i < ni.count; i++) {
        /* decoded byte by byte so the host's endianness does not matter */
        const unsigned char *q = d + i * (size_t)ni.width;
        uint32_t v = ni.width == 1   ? q[0]
                     : ni.width == 2 ? (uint32_t)(q[0] | q[1] << 8)
                                     : (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 |
                                           (uint32_t)q[3] << 24;
        if ((ni.sign && (v & 0x80000000u)) || v > TOKEN_FILE_MAX_ID) {
            free(tok);
            if (ni.sign && (v & 0x80000000u))
                return seterr(err, errlen, "%s: a negative token id %d at index %zu", path,
                              (int32_t)v, i);
            return seterr(err, errlen, "%s: token id %u at index %zu is past the largest id %d",
                          path, v, i, TOKEN_FILE_MAX_ID);
        }
        tok[i] = v;
        if (v > mx) mx = v;
    }
    *out = tok, *n = ni.count, *max_id = mx;
    return 0;
}
