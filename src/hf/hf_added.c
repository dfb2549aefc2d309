/* hf_added.c: the added-token trie and the split of a text at its tokens. */
#include "hf_added.h"

#include <stdlib.h>
#include <string.h>

#include "hf_utf8.h"

static int32_t new_node(HfTrie *t, unsigned char byte) {
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        HfTrieNode *v = realloc(t->nodes, cap * sizeof *v);
        if (!v) return -1;
        t->nodes = v;
        t->cap = cap;
    }
    t->nodes[t->n] = (HfTrieNode){-1, -1, -1, byte};
    return (int32_t)t->n++;
}

static int32_t find_child(const HfTrie *t, int32_t node, unsigned char byte) {
    for (int32_t c = t->nodes[node].child; c >= 0; c = t->nodes[c].sibling)
        if (t->nodes[c].byte == byte) return c;
    return -1;
}

/* The child of node for byte, created when missing; -1 out of memory. */
static int32_t child_for(HfTrie *t, int32_t node, unsigned char byte) {
    int32_t c = find_child(t, node, byte);
    if (c >= 0) return c;
    c = new_node(t, byte);
    if (c < 0) return -1;
    t->nodes[c].sibling = t->nodes[node].child;
    t->nodes[node].child = c;
    return c;
}

int hf_added_add(HfAddedSet *set, HfTrie *trie, HfAddedTok t, const char *key, size_t len) {
    HfAddedTok *v = realloc(set->toks, (set->n + 1) * sizeof *v);
    if (!v) return -1;
    set->toks = v;
    v[set->n] = t;
    if (len == 0) { /* never matches, as in the reference */
        set->n++;
        return 0;
    }
    if (trie->n == 0 && new_node(trie, 0) < 0) return -1;
    int32_t node = 0;
    for (size_t i = 0; i < len && node >= 0; ++i)
        node = child_for(trie, node, (unsigned char)key[i]);
    if (node < 0) return -1;
    trie->nodes[node].token = (int32_t)set->n++;
    return 0;
}

void hf_added_free(HfAddedSet *set) {
    free(set->toks);
    free(set->raw.nodes);
    free(set->norm.nodes);
    memset(set, 0, sizeof *set);
}

/* Longest token starting at s[i]: its length in *len and index, or -1. */
static int32_t longest_at(const HfTrie *t, const char *s, size_t n, size_t i, size_t *len) {
    int32_t node = 0, best = -1;
    for (size_t j = i; j < n; ++j) {
        node = find_child(t, node, (unsigned char)s[j]);
        if (node < 0) break;
        if (t->nodes[node].token >= 0) {
            best = t->nodes[node].token;
            *len = j + 1 - i;
        }
    }
    return best;
}

static int push(HfSections *out, size_t start, size_t end, int32_t tok) {
    if (out->n == out->cap) {
        size_t cap = out->cap ? out->cap * 2 : 16;
        HfSection *v = realloc(out->v, cap * sizeof *v);
        if (!v) return -1;
        out->v = v;
        out->cap = cap;
    }
    out->v[out->n++] = (HfSection){start, end, tok};
    return 0;
}

/* lstrip trims the text section before a token, rstrip the one after. */
static void strip(const HfAddedSet *set, const char *s, HfSections *out) {
    for (size_t i = 0; i < out->n; ++i) {
        if (out->v[i].tok < 0) continue;
        const HfAddedTok *t = &set->toks[out->v[i].tok];
        if (t->lstrip && i > 0 && out->v[i - 1].tok < 0)
            hf_trim_end(s, out->v[i - 1].start, &out->v[i - 1].end);
        if (t->rstrip && i + 1 < out->n && out->v[i + 1].tok < 0)
            hf_trim_start(s, &out->v[i + 1].start, out->v[i + 1].end);
    }
}

int hf_added_split(const HfAddedSet *set, const HfTrie *trie, const char *s, size_t n,
                   HfSections *out) {
    size_t start = 0, i = 0;
    out->n = 0;
    while (i < n && trie->n) {
        size_t len = 0;
        int32_t tok = longest_at(trie, s, n, i, &len);
        if (tok < 0) {
            ++i;
            continue;
        }
        if (i > start && push(out, start, i, -1) < 0) return -1;
        if (push(out, i, i + len, tok) < 0) return -1;
        i += len;
        start = i;
    }
    if (start < n && push(out, start, n, -1) < 0) return -1;
    strip(set, s, out);
    return 0;
}
