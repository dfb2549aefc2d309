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
    int width;  /* bytes per id: 1, 2, 4 or 8 */
    int sign;   /* int32, int64: negative values are refused */
    size_t off; /* data offset */
    size_t count;
} NpyInfo;

/* The id dtypes gatelab reads, by their exact descr. */
static const struct {
    const char *descr;
    int width, sign;
} NPY_IDS[] = {{"'<u2'", 2, 0}, {"'<u4'", 4, 0}, {"'<i4'", 4, 1},
               {"'|u1'", 1, 0}, {"'<i8'", 8, 1}, {"'<u8'", 8, 0}};

/* ni's width and sign from the header's descr value d. */
static int npy_dtype(const char *path, const char *d, NpyInfo *ni, char *err, size_t errlen) {
    for (size_t i = 0; i < sizeof NPY_IDS / sizeof NPY_IDS[0]; i++)
        if (!strncmp(d, NPY_IDS[i].descr, 5)) {
            ni->width = NPY_IDS[i].width, ni->sign = NPY_IDS[i].sign;
            return 0;
        }
    char got[24];
    size_t k = strcspn(d, ",}");
    snprintf(got, sizeof got, "%.*s", (int)(k < 20 ? k : 20), d);
    return seterr(err, errlen,
                  "%s: .npy dtype %s is not token ids (want little-endian uint16 '<u2', "
                  "uint32 '<u4', int32 '<i4', int64 '<i8', uint64 '<u8' or uint8 '|u1')",
                  path, got);
}

/* The header's fortran_order value fo: exactly False (C order) is read;
 * True and anything else are refused. */
static int npy_order(const char *path, const char *fo, char *err, size_t errlen) {
    size_t k = strcspn(fo, ", }");
    if (k == 5 && !strncmp(fo, "False", 5)) return 0;
    if (k == 4 && !strncmp(fo, "True", 4))
        return seterr(err, errlen, "%s: a Fortran-order .npy array (save it in C order)", path);
    return seterr(err, errlen, "%s: .npy fortran_order '%.*s' is neither True nor False", path,
                  (int)(k < 20 ? k : 20), fo);
}

/* The number of ids the header's shape value sh declares, into *count. A
 * shape whose product or byte size overflows 64 bits is refused as too
 * large for this machine. */
static int npy_shape(const char *path, const char *sh, int width, size_t *count, char *err,
                     size_t errlen) {
    if (*sh != '(') return seterr(err, errlen, "%s: a .npy shape that does not parse", path);
    size_t c = 1, bytes;
    int overflow = 0;
    const char *p = sh + 1;
    for (;;) {
        while (*p == ' ' || *p == ',') p++;
        if (*p == ')') break;
        char *end;
        unsigned long long v = strtoull(p, &end, 10);
        if (end == p || *p == '-')
            return seterr(err, errlen, "%s: a .npy shape that does not parse", path);
        overflow |= v > (size_t)-1 || __builtin_mul_overflow(c, (size_t)v, &c);
        p = end;
    }
    if (overflow || __builtin_mul_overflow(c, (size_t)width, &bytes))
        return seterr(err, errlen,
                      "%s: the .npy shape %.*s declares more ids than this machine can address "
                      "(too large for this machine)",
                      path, (int)strcspn(sh, ")") + 1, sh);
    *count = c;
    return 0;
}

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
    if (npy_dtype(path, d, ni, err, errlen) || npy_order(path, fo, err, errlen) ||
        npy_shape(path, sh, ni->width, &ni->count, err, errlen))
        return -1;
    ni->off = start + hl;
    if ((n - ni->off) / (size_t)ni->width != ni->count || (n - ni->off) % (size_t)ni->width)
        return seterr(err, errlen,
                      "%s: the .npy header declares %zu ids of %d bytes, but %zu data bytes "
                      "follow it",
                      path, ni->count, ni->width, n - ni->off);
    return 0;
}

/* Id i of d as a 64-bit value, decoded byte by byte so the host's
 * endianness does not matter. */
static uint64_t npy_id(const unsigned char *d, size_t i, int width) {
    const unsigned char *q = d + i * (size_t)width;
    uint64_t v = 0;
    for (int b = width - 1; b >= 0; b--) v = v << 8 | q[b];
    return v;
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
    const uint64_t neg = (uint64_t)1 << (8 * ni.width - 1);
    long long mx = -1;
    for (size_t i = 0; i < ni.count; i++) {
        uint64_t v = npy_id(d, i, ni.width);
        if ((ni.sign && (v & neg)) || v > TOKEN_FILE_MAX_ID) {
            free(tok);
            if (ni.sign && (v & neg))
                return seterr(err, errlen, "%s: a negative token id %lld at index %zu", path,
                              (long long)(v | ~(neg | (neg - 1))), i);
            return seterr(err, errlen,
                          "%s: token id %llu at index %zu is past the largest id %d (the first "
                          "id out of range)",
                          path, (unsigned long long)v, i, TOKEN_FILE_MAX_ID);
        }
        tok[i] = (uint32_t)v;
        if ((long long)v > mx) mx = (long long)v;
    }
    *out = tok, *n = ni.count, *max_id = mx;
    return 0;
}
