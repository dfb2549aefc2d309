/* hf_utf8.c: UTF-8 sanitising (WHATWG replacement), decoding, JS trim. */
#include "hf_utf8.h"

#include <stdlib.h>
#include <string.h>

/* Bytes of the valid sequence at s[0..n), or 0 when it is ill-formed; then
 * *bad is the length of its maximal subpart (>= 1) to replace. */
static size_t valid_seq(const unsigned char *s, size_t n, size_t *bad) {
    unsigned char b = s[0], lo = 0x80, hi = 0xBF;
    size_t need;
    if (b < 0x80) return 1;
    if (b >= 0xC2 && b <= 0xDF) need = 1;
    else if (b >= 0xE0 && b <= 0xEF) {
        need = 2;
        if (b == 0xE0) lo = 0xA0;
        if (b == 0xED) hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
        need = 3;
        if (b == 0xF0) lo = 0x90;
        if (b == 0xF4) hi = 0x8F;
    } else {
        *bad = 1;
        return 0;
    }
    size_t j = 1;
    for (; j <= need; ++j) {
        if (j >= n || s[j] < lo || s[j] > hi) {
            *bad = j;
            return 0;
        }
        lo = 0x80;
        hi = 0xBF;
    }
    return j;
}

char *hf_utf8_sanitize(const char *in, size_t len, size_t *outlen) {
    /* worst case: every byte becomes the 3-byte U+FFFD */
    if (len > (SIZE_MAX - 1) / 3) return NULL;
    char *out = malloc(len * 3 + 1);
    if (!out) return NULL;
    const unsigned char *s = (const unsigned char *)in;
    size_t i = 0, o = 0;
    while (i < len) {
        size_t bad = 0, k = valid_seq(s + i, len - i, &bad);
        if (k) {
            memcpy(out + o, s + i, k);
            o += k;
            i += k;
        } else {
            memcpy(out + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i += bad;
        }
    }
    out[o] = 0;
    *outlen = o;
    return out;
}

int hf_utf8_valid(const char *s, size_t len) {
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        size_t bad, k = valid_seq(p + i, len - i, &bad);
        if (!k) return 0;
        i += k;
    }
    return 1;
}

size_t hf_utf8_len(unsigned char c) {
    if (c < 0x80) return 1;
    if (c < 0xE0) return 2;
    if (c < 0xF0) return 3;
    return 4;
}

uint32_t hf_utf8_next(const char *s, size_t n, size_t *adv) {
    const unsigned char *p = (const unsigned char *)s;
    size_t k = hf_utf8_len(p[0]);
    if (k > n) k = n;
    uint32_t cp = k == 1 ? p[0] : k == 2 ? p[0] & 0x1Fu : k == 3 ? p[0] & 0x0Fu : p[0] & 0x07u;
    for (size_t i = 1; i < k; ++i) cp = (cp << 6) | (p[i] & 0x3Fu);
    *adv = k;
    return cp;
}

size_t hf_utf8_put(uint32_t cp, char *out) {
    unsigned char *o = (unsigned char *)out;
    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xC0 | (cp >> 6));
        o[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | (cp >> 12));
        o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | (cp >> 18));
    o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

int hf_is_js_space(uint32_t cp) {
    if ((cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0xA0 || cp == 0x1680) return 1;
    if (cp >= 0x2000 && cp <= 0x200A) return 1;
    return cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000 ||
           cp == 0xFEFF;
}

void hf_trim_start(const char *s, size_t *start, size_t end) {
    while (*start < end) {
        size_t adv;
        if (!hf_is_js_space(hf_utf8_next(s + *start, end - *start, &adv))) return;
        *start += adv;
    }
}

void hf_trim_end(const char *s, size_t start, size_t *end) {
    while (*end > start) {
        size_t b = *end - 1, adv;
        while (b > start && ((unsigned char)s[b] & 0xC0) == 0x80) --b;
        if (!hf_is_js_space(hf_utf8_next(s + b, *end - b, &adv))) return;
        *end = b;
    }
}
