/* hf_bytelevel.c: GPT-2 bytes_to_unicode and its inverse, in closed form:
 * the 68 non-printable bytes are 0x00-0x20, 0x7F-0xA0 and 0xAD, numbered
 * 0..67 in that order from U+0100. */
#include "hf_bytelevel.h"

#include "hf_utf8.h"

uint32_t hf_bytelevel_cp(unsigned char b) {
    if (b <= 0x20) return 256u + b;
    if (b >= 0x7F && b <= 0xA0) return 256u + 33 + (b - 0x7Fu);
    if (b == 0xAD) return 256u + 67;
    return b;
}

/* Byte spelled by code point cp, or -1. */
static int cp_byte(uint32_t cp) {
    if (cp < 256) return hf_bytelevel_cp((unsigned char)cp) == cp ? (int)cp : -1;
    if (cp < 256 + 33) return (int)(cp - 256);
    if (cp < 256 + 67) return (int)(cp - 256 - 33 + 0x7F);
    return cp == 256 + 67 ? 0xAD : -1;
}

int hf_bytelevel_unmap(const char *s, size_t n, char *out, size_t *outn) {
    if (!hf_utf8_valid(s, n)) return -1;
    size_t i = 0, o = 0;
    while (i < n) {
        size_t adv;
        int b = cp_byte(hf_utf8_next(s + i, n - i, &adv));
        if (b < 0) return -1;
        out[o++] = (char)b;
        i += adv;
    }
    *outn = o;
    return 0;
}
