/* hf_added.h: added tokens (special tokens and the like) and the split of
 * a text at them: at each position the longest token starting there
 * matches, scanning left to right (the reference's DictionarySplitter);
 * then a token with lstrip / rstrip eats the white space before / after it
 * (JavaScript trim semantics). */
#ifndef GATELAB_HF_ADDED_H
#define GATELAB_HF_ADDED_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int32_t id;
    int lstrip, rstrip;
} HfAddedTok;

/* A byte trie: node 0 is the root. */
typedef struct {
    int32_t child, sibling, token; /* token: index into toks, or -1 */
    unsigned char byte;
} HfTrieNode;

typedef struct {
    HfTrieNode *nodes;
    size_t n, cap;
} HfTrie;

typedef struct {
    HfAddedTok *toks;
    size_t n;
    HfTrie raw;  /* matched in the text as given */
    HfTrie norm; /* matched after normalization (normalized tokens) */
} HfAddedSet;

/* Add token t (appended to set->toks) under key[len] into trie (raw or
 * norm). A later token with the same key wins. -1 when out of memory. */
int hf_added_add(HfAddedSet *set, HfTrie *trie, HfAddedTok t, const char *key, size_t len);
void hf_added_free(HfAddedSet *set);

/* One section of a split: s[start, end) is plain text (tok -1) or the
 * added token toks[tok]. */
typedef struct {
    size_t start, end;
    int32_t tok;
} HfSection;

typedef struct {
    HfSection *v;
    size_t n, cap;
} HfSections;

/* Split valid UTF-8 s[n] at the tokens of trie, then apply lstrip/rstrip.
 * -1 when out of memory. */
int hf_added_split(const HfAddedSet *set, const HfTrie *trie, const char *s, size_t n,
                   HfSections *out);

#endif
