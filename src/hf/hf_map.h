/* hf_map.h: an open-addressing hash map from byte strings to int32 values,
 * the one lookup structure of the Hugging Face tokenizer (vocab, merge
 * ranks, the per-word cache). Keys are copied into the map. */
#ifndef GATELAB_HF_MAP_H
#define GATELAB_HF_MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t hash; /* 0 = empty slot */
    uint32_t off;  /* key bytes at keys + off */
    uint32_t len;
    int32_t val;
} HfMapSlot;

typedef struct {
    HfMapSlot *slots;
    size_t cap; /* a power of two, or 0 */
    size_t n;
    char *keys;
    size_t keys_len, keys_cap;
} HfMap;

/* Insert or overwrite key -> val. -1 when out of memory or when the key
 * store would pass 4 GB. */
int hf_map_put(HfMap *m, const void *key, size_t len, int32_t val);
/* 1 and *val when key is present, else 0. */
int hf_map_get(const HfMap *m, const void *key, size_t len, int32_t *val);
/* Empty the map, keeping its memory. */
void hf_map_clear(HfMap *m);
void hf_map_free(HfMap *m);

#endif
