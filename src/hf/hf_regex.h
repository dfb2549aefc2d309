/* hf_regex.h: the pre-tokenizer regexes of a tokenizer.json, compiled with
 * PCRE2 (8-bit, PCRE2_UTF | PCRE2_UCP, newline LF, ^ $ at line ends).
 *
 * tokenizer.json patterns are written for Oniguruma (the Rust tokenizers'
 * engine). hf_regex_translate rewrites the escapes whose meaning differs in
 * PCRE2 so that they mean what Oniguruma (and the JavaScript reference's
 * translation) means:
 *   \s \S   -> \p{White_Space} / \P{White_Space}   (also inside [...])
 *   \h \H   -> hex digit [0-9A-Fa-f] / its complement (PCRE2: horizontal space)
 *   \w \W   -> [\p{Alphabetic}\p{M}\p{Nd}\p{Pc}...] / its complement
 *              (\w inside [...] too; \W inside [...] keeps PCRE2's meaning)
 * Everything else is passed through. Known differences that remain:
 * (?i) folds with Unicode simple case folding (as Oniguruma; the JS
 * reference folds ASCII only, so e.g. "'\u017f" matches (?i:'s) here);
 * X{n}+ is possessive in PCRE2, "(X{n})+" in Oniguruma. */
#ifndef GATELAB_HF_REGEX_H
#define GATELAB_HF_REGEX_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stddef.h>

/* The pattern in PCRE2 syntax (malloc'd), NULL when out of memory. */
char *hf_regex_translate(const char *onig, size_t len);

/* Compile pattern[len] (translated unless literal); -1 with a message
 * naming what (e.g. "pre_tokenizer Split regex") on a syntax error. */
int hf_regex_compile(pcre2_code **out, const char *pattern, size_t len, int literal,
                     const char *what, char *err, size_t errlen);

/* One piece of an Isolated split: s[start, end), match = 1 when it is a
 * match of the regex, 0 for the text between matches. */
typedef int (*HfPieceFn)(void *ctx, size_t start, size_t end, int match);

/* Split valid UTF-8 s[n] by re the way JavaScript's matchAll walks it:
 * every non-empty gap and every non-empty match in order; after an empty
 * match the search resumes one code point on. md is scratch from
 * pcre2_match_data_create_from_pattern, mc from hf_regex_match_context. Stops at the first non-zero
 * return of fn (returned); -1 with a message when PCRE2 fails (e.g. its
 * match limit, against runaway backtracking). */
int hf_regex_split(const pcre2_code *re, pcre2_match_data *md, pcre2_match_context *mc,
                   const char *s, size_t n, HfPieceFn fn, void *ctx, char *err, size_t errlen);

/* A match context with our match and depth limits (bounding the work of
 * one match on a hostile pattern); NULL when out of memory. */
pcre2_match_context *hf_regex_match_context(void);

#endif
