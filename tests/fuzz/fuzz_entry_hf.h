/* fuzz_entry_hf.h: the entries of the src/hf fuzz targets (tokenizer.json,
 * config.json, --tokens files), apart from fuzz_entry.h because they link
 * src/hf (jansson, PCRE2, ICU). */
#ifndef GATELAB_FUZZ_ENTRY_HF_H
#define GATELAB_FUZZ_ENTRY_HF_H

#include "fuzz_entry.h"

/* Input: a tokenizer.json, optionally followed by a NUL byte and a text.
 * Loads it (hf_tokenizer_load_buffer) and, when accepted, encodes the text
 * (or a fixed mixed-script sample) with and without BOS; every id must lie
 * below the vocabulary size. 0 accepted, 1 refused. */
int fuzz_hftok_one(const uint8_t *data, size_t size);

/* (fuzz_entry_hfconfig.c) Input: a config.json. hf_config_parse; when accepted, the shape it
 * describes must be one the forward pass can size (every count positive,
 * heads dividing, q rows = H * dh or more). 0 accepted, 1 refused. */
int fuzz_hfconfig_one(const uint8_t *data, size_t size);

/* Input: a --tokens file. token_lines_parse with vocabulary 50257 and
 * windows of at most 4096 ids; when accepted every window is non-empty,
 * the windows tile the ids and every id is in the vocabulary. 0 accepted,
 * 1 refused. */
int fuzz_tokenlines_one(const uint8_t *data, size_t size);

#endif
