/* hf_map.c: byte-string -> int32 hash map (linear probing, FNV-1a). */
#include "hf_map.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

static uint64_t hash_bytes(const void *key, size_t len) {
    uint64_t h = fnv1a64(FNV1A64_OFFSET, key, len);
    h ^= h >> 29;
    return h ? h : 1;
}

/* The slot holding key, or the empty slot where it would go. */
static HfMapSlot *find_slot(const HfMap *m, const void *key, size_t len, uint64_t h) {
    size_t mask = m->cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        HfMapSlot *s = &m->slots[i];
        if (s->hash == 0) return s;
        if (s->hash == h && s->len == len && memcmp(m->keys + s->off, key, len) == 0) return s;
    }
}

static int grow_slots(HfMap *m) {
    size_t cap = m->cap ? m->cap * 2 : 64;
    HfMapSlot *old = m->slots, *slots = calloc(cap, sizeof *slots);
    if (!slots) return -1;
    size_t oldcap = m->cap;
    m->slots = slots;
    m->cap = cap;
    for (size_t i = 0; i < oldcap; ++i) {
        if (old[i].hash == 0) continue;
        size_t j = old[i].hash & (cap - 1);
        while (slots[j].hash) j = (j + 1) & (cap - 1);
        slots[j] = old[i];
    }
    free(old);
    return 0;
}

static int store_key(HfMap *m, const void *key, size_t len, uint32_t *off) {
    if (len > UINT32_MAX - m->keys_len) return -1;
    if (m->keys_len + len > m->keys_cap) {
        size_t cap = m->keys_cap ? m->keys_cap : 1024;
        while (cap < m->keys_len + len) cap *= 2;
        if (cap > UINT32_MAX) cap = UINT32_MAX;
        char *k = realloc(m->keys, cap);
        if (!k) return -1;
        m->keys = k;
        m->keys_cap = cap;
    }
    if (len) memcpy(m->keys + m->keys_len, key, len);
    *off = (uint32_t)m->keys_len;
    m->keys_len += len;
    return 0;
}

int hf_map_put(HfMap *m, const void *key, size_t len, int32_t val) {
    if ((m->n + 1) * 4 > m->cap * 3 && grow_slots(m) < 0) return -1;
    uint64_t h = hash_bytes(key, len);
    HfMapSlot *s = find_slot(m, key, len, h);
    if (s->hash == 0) {
        uint32_t off;
        if (store_key(m, key, len, &off) < 0) return -1;
        s->hash = h;
        s->off = off;
        s->len = (uint32_t)len;
        m->n++;
    }
    s->val = val;
    return 0;
}

int hf_map_get(const HfMap *m, const void *key, size_t len, int32_t *val) {
    if (m->cap == 0) return 0;
    HfMapSlot *s = find_slot(m, key, len, hash_bytes(key, len));
    if (s->hash == 0) return 0;
    *val = s->val;
    return 1;
}

void hf_map_clear(HfMap *m) {
    if (m->slots) memset(m->slots, 0, m->cap * sizeof *m->slots);
    m->n = 0;
    m->keys_len = 0;
}

void hf_map_free(HfMap *m) {
    free(m->slots);
    free(m->keys);
    memset(m, 0, sizeof *m);
}
