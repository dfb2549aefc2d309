/* hf_normalize.c: NFC/NFD/NFKC/NFKD via ICU's unorm2 (UTF-8 <-> UTF-16). */
#include "hf_normalize.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>

#include "util.h"

int hf_norm_form(const char *type) {
    static const char *names[] = {"NFC", "NFD", "NFKC", "NFKD"};
    for (int i = 0; i < 4; ++i)
        if (strcmp(type, names[i]) == 0) return HF_NORM_NFC + i;
    return 0;
}

static const UNormalizer2 *instance(int form, UErrorCode *st) {
    switch (form) {
    case HF_NORM_NFC: return unorm2_getNFCInstance(st);
    case HF_NORM_NFD: return unorm2_getNFDInstance(st);
    case HF_NORM_NFKC: return unorm2_getNFKCInstance(st);
    default: return unorm2_getNFKDInstance(st);
    }
}

/* UTF-8 -> malloc'd UTF-16 of *n units. */
static UChar *to_utf16(const char *in, size_t len, int32_t *n, UErrorCode *st) {
    UChar *u = malloc(((size_t)len + 1) * sizeof *u);
    if (!u) return NULL;
    u_strFromUTF8(u, (int32_t)len + 1, n, in, (int32_t)len, st);
    if (U_FAILURE(*st)) {
        free(u);
        return NULL;
    }
    return u;
}

/* Normalize u[n] into a malloc'd buffer (*m units); grows once if needed. */
static UChar *norm16(const UNormalizer2 *nz, const UChar *u, int32_t n, int32_t *m,
                     UErrorCode *st) {
    int32_t cap = n * 3 + 16;
    for (int pass = 0; pass < 2; ++pass) {
        UChar *v = malloc((size_t)cap * sizeof *v);
        if (!v) return NULL;
        *st = U_ZERO_ERROR;
        *m = unorm2_normalize(nz, u, n, v, cap, st);
        if (U_SUCCESS(*st)) return v;
        free(v);
        if (*st != U_BUFFER_OVERFLOW_ERROR) return NULL;
        cap = *m + 16;
    }
    return NULL;
}

static char *to_utf8(const UChar *v, int32_t m, size_t *outlen, UErrorCode *st) {
    size_t cap = (size_t)m * 3 + 1;
    if (cap > INT32_MAX) cap = INT32_MAX;
    char *out = malloc(cap);
    if (!out) return NULL;
    int32_t k = 0;
    u_strToUTF8(out, (int32_t)cap, &k, v, m, st);
    if (U_FAILURE(*st)) {
        free(out);
        return NULL;
    }
    out[k] = 0;
    *outlen = (size_t)k;
    return out;
}

int hf_normalize(int form, const char *in, size_t len, char **out, size_t *outlen, char *err,
                 size_t errlen) {
    /* ICU lengths are int32; NFKD may expand a unit up to 18-fold */
    if (len > INT32_MAX / 20)
        return seterr(err, errlen, "text of %zu bytes is too long to normalize", len);
    UErrorCode st = U_ZERO_ERROR;
    const UNormalizer2 *nz = instance(form, &st);
    int32_t n = 0, m = 0;
    UChar *u = nz ? to_utf16(in, len, &n, &st) : NULL;
    UChar *v = u ? norm16(nz, u, n, &m, &st) : NULL;
    *out = v ? to_utf8(v, m, outlen, &st) : NULL;
    free(u);
    free(v);
    if (!*out) return seterr(err, errlen, "Unicode normalization failed: %s", u_errorName(st));
    return 0;
}
