/* hf_utf8.h: the UTF-8 handling of the Hugging Face tokenizer.
 *
 * Invalid input: the text is first made valid UTF-8 the way the WHATWG
 * Encoding Standard decodes it (TextDecoder, Node's Buffer, Python's
 * errors="replace"): every maximal subpart of an ill-formed sequence
 * becomes one U+FFFD. Examples: C0 80 -> 2 x U+FFFD (C0 is never valid);
 * E2 82 41 -> U+FFFD 'A' (truncated sequence: one U+FFFD); ED A0 80 (a
 * UTF-16 surrogate) -> 3 x U+FFFD; F4 90 80 80 (> U+10FFFF) -> 4 x U+FFFD.
 * The JavaScript reference receives exactly this string. */
#ifndef GATELAB_HF_UTF8_H
#define GATELAB_HF_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Valid UTF-8 copy of in[len] (malloc'd, NUL-terminated, length in
 * *outlen); invalid bytes replaced as above. NULL when out of memory. */
char *hf_utf8_sanitize(const char *in, size_t len, size_t *outlen);

/* 1 when s[len] is valid UTF-8 (WHATWG rules), else 0. */
int hf_utf8_valid(const char *s, size_t len);

/* Code point at s[0] of valid UTF-8 with n > 0 bytes left; its length in
 * *adv. */
uint32_t hf_utf8_next(const char *s, size_t n, size_t *adv);

/* Length of the valid UTF-8 sequence starting with lead byte c (1..4). */
size_t hf_utf8_len(unsigned char c);

/* Encode cp (<= 0x10FFFF) into out[4]; returns the byte count. */
size_t hf_utf8_put(uint32_t cp, char *out);

/* JavaScript's String.prototype.trim white space (WhiteSpace and
 * LineTerminator: \t \n \v \f \r, space, U+00A0, U+1680, U+2000-200A,
 * U+2028, U+2029, U+202F, U+205F, U+3000, U+FEFF), which the reference
 * uses for the lstrip / rstrip of added tokens. */
int hf_is_js_space(uint32_t cp);
/* s[*start, *end) of valid UTF-8 without leading (trim_start) or trailing
 * (trim_end) such white space. */
void hf_trim_start(const char *s, size_t *start, size_t end);
void hf_trim_end(const char *s, size_t start, size_t *end);

#endif
