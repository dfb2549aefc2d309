/* hf_tokenizer.h: a Hugging Face tokenizer.json, byte-level BPE only
 * (GPT-2, GPT-4o, Llama 3, Qwen 2/3, Pythia, RoBERTa style).
 *
 * What is read: model "BPE" (vocab; merges as "a b" strings or [a, b]
 * pairs; unk_token, fuse_unk, ignore_merges), added_tokens (matched in the
 * raw text before anything else, longest first; lstrip/rstrip), the
 * normalizer (none, NFC, NFD, NFKC, NFKD or a Sequence of them), the
 * pre-tokenizer (ByteLevel with add_prefix_space / use_regex, possibly last
 * in a Sequence after Split pre-tokenizers, with any delimiter behavior
 * and invert (hf_split.h), whose regex, read from the file, is compiled
 * with PCRE2 (hf_regex.h), and Digits), and the special tokens the
 * post-processor puts around one sequence (TemplateProcessing, Roberta- or
 * BertProcessing, ByteLevel, Sequence). Anything else (Unigram or WordPiece
 * models, Metaspace pre-tokenizers, byte_fallback, ...) is refused with one
 * line that suggests --tokens FILE.
 *
 * Encoding follows the JavaScript reference @huggingface/tokenizers (which
 * tests/reference/make_tokenizer_fixtures.sh checks us against) except
 * where that library itself departs from Oniguruma, the regex engine of
 * the Rust tokenizers the models were trained with: \s is Unicode
 * White_Space everywhere (the JS ByteLevel regex uses JavaScript's \s,
 * which adds U+FEFF and lacks U+0085). Invalid UTF-8 input: see hf_utf8.h.
 *
 * A loaded tokenizer is read-only: encode may run on several threads. */
#ifndef GATELAB_HF_TOKENIZER_H
#define GATELAB_HF_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

typedef struct HfTokenizer HfTokenizer;

/* Load PATH (a tokenizer.json). 0, or -1 with a one-line message naming
 * the file and what is wrong or unsupported. */
int hf_tokenizer_load(HfTokenizer **out, const char *path, char *err, size_t errlen);
/* The same from memory; name is used in messages. */
int hf_tokenizer_load_buffer(HfTokenizer **out, const char *json, size_t len, const char *name,
                             char *err, size_t errlen);
void hf_tokenizer_free(HfTokenizer *tok);

/* Token ids of text[len] (any bytes) into a malloc'd *ids of *n. With
 * add_bos, hf_tokenizer_bos_id comes first (an error when there is none).
 * No other special token is added. -1 with a message on failure. */
int hf_tokenizer_encode(const HfTokenizer *tok, const char *text, size_t len, int add_bos,
                        int32_t **ids, size_t *n, char *err, size_t errlen);

/* The BOS the post-processor puts first for one sequence (what --bos auto
 * adds), or -1 when it adds none (GPT-2, Qwen, Pythia). */
int32_t hf_tokenizer_bos_id(const HfTokenizer *tok);
/* Everything the post-processor puts before and after one sequence. */
void hf_tokenizer_template(const HfTokenizer *tok, const int32_t **prefix, size_t *n_prefix,
                           const int32_t **suffix, size_t *n_suffix);
/* Id of a token as the file spells it ("<|endoftext|>", "Ġthe"), or -1. */
int32_t hf_tokenizer_token_id(const HfTokenizer *tok, const char *token);
/* The token with this id as the file spells it (byte-level form, e.g.
 * "Ġthe"), not NUL-terminated, length in *len; NULL when no token has it. */
const char *hf_tokenizer_token_text(const HfTokenizer *tok, int32_t id, size_t *len);
/* 1 + the largest id in the vocabulary and added tokens. */
int32_t hf_tokenizer_vocab_size(const HfTokenizer *tok);

#endif
