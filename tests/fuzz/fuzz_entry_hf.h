/* fuzz_entry_hf.h: the entry of the tokenizer.json fuzz target,
 * apart from fuzz_entry.h because it links src/hf (jansson, PCRE2, ICU). */
#ifndef GATELAB_FUZZ_ENTRY_HF_H
#define GATELAB_FUZZ_ENTRY_HF_H

#include "fuzz_entry.h"

/* Input: a tokenizer.json, optionally followed by a NUL byte and a text.
 * Loads it (hf_tokenizer_load_buffer) and, when accepted, encodes the text
 * (or a fixed mixed-script sample) with and without BOS; every id must lie
 * below the vocabulary size. 0 accepted, 1 refused. */
int fuzz_hftok_one(const uint8_t *data, size_t size);

#endif
