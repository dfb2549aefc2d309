/* hf_bpe.h: the BPE model of a byte-level tokenizer, on raw bytes.
 *
 * Vocabulary keys are stored as the bytes they spell (hf_bytelevel), merges
 * as (left id, right id) -> rank with the merged id beside. A word (one
 * pre-token, raw bytes) starts as one symbol per byte; repeatedly the
 * adjacent pair with the lowest merge rank is merged, the leftmost first
 * among equal ranks (a heap, O(n log n)), as the Rust and JavaScript
 * tokenizers do. A byte without a vocabulary entry becomes the unk token,
 * or is dropped when there is none. */
#ifndef GATELAB_HF_BPE_H
#define GATELAB_HF_BPE_H

#include <stddef.h>
#include <stdint.h>

#include "hf_map.h"

typedef struct {
    int32_t *v;
    size_t n, cap;
} HfIds;

int hf_ids_push(HfIds *ids, int32_t id); /* -1 when out of memory */

typedef struct {
    HfMap vocab;           /* raw bytes -> id */
    HfMap merges;          /* int32 pair (8 bytes) -> rank */
    int32_t *merge_result; /* [n_merges] id of the merged symbol */
    size_t n_merges, merge_cap;
    int32_t byte_id[256]; /* id of each single byte, -1 when absent */
    int32_t unk_id;       /* -1: none */
    int fuse_unk;         /* consecutive unks become one */
    int ignore_merges;    /* a word in the vocabulary is one token */
} HfBpe;

/* Per-encode scratch and word cache (not shared between threads). */
typedef struct {
    int32_t *sym, *prev, *next;
    size_t cap;
    struct HfHeapEnt *heap;
    size_t heap_n, heap_cap;
    HfMap cache; /* word -> offset into arena */
    HfIds arena; /* at offset: count, then ids */
} HfBpeScratch;

/* Set up byte_id and the empty maps; unk -1. */
void hf_bpe_init(HfBpe *m);
/* After the vocabulary is filled: the ids of the single bytes. */
void hf_bpe_index_bytes(HfBpe *m);
/* Append rank n_merges: (a, b) -> r. -1 when out of memory. */
int hf_bpe_add_merge(HfBpe *m, int32_t a, int32_t b, int32_t r);
void hf_bpe_free(HfBpe *m);

/* Encode word w[n] (raw bytes) and append its ids to out. With fuse_unk,
 * an unk is not appended right after an unk at out->v[section_start..].
 * -1 when out of memory. */
int hf_bpe_word(const HfBpe *m, HfBpeScratch *sc, const char *w, size_t n, HfIds *out,
                size_t section_start);
void hf_bpe_scratch_free(HfBpeScratch *sc);

#endif
