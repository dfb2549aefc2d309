/* hf_bytelevel.h: GPT-2's byte-to-unicode map. Byte-level BPE vocabularies
 * spell every byte as one printable code point: the printable Latin-1 bytes
 * ('!'..'~', 0xA1..0xAC, 0xAE..0xFF) as themselves, the other 68 bytes as
 * U+0100.. in byte order (space -> U+0120 'Ġ', '\n' -> U+010A 'Ċ'). */
#ifndef GATELAB_HF_BYTELEVEL_H
#define GATELAB_HF_BYTELEVEL_H

#include <stddef.h>
#include <stdint.h>

/* Code point that spells byte b. */
uint32_t hf_bytelevel_cp(unsigned char b);

/* The bytes a byte-level string s[n] spells, into out (room for n bytes),
 * count in *outn. -1 when s holds a code point outside the map (e.g. an
 * added token "<s> x" with a real space) or is not valid UTF-8. */
int hf_bytelevel_unmap(const char *s, size_t n, char *out, size_t *outn);

#endif
