/* hf_bpe.c: BPE merging of one word with a heap, plus the word cache. */
#include "hf_bpe.h"

#include <stdlib.h>
#include <string.h>

/* Cache only words this short, and at most this many ids in all. */
#define CACHE_MAX_WORD 256
#define CACHE_MAX_IDS (1u << 22)

struct HfHeapEnt {
    int32_t rank, left, right;
};

int hf_ids_push(HfIds *ids, int32_t id) {
    if (ids->n == ids->cap) {
        size_t cap = ids->cap ? ids->cap * 2 : 256;
        int32_t *v = realloc(ids->v, cap * sizeof *v);
        if (!v) return -1;
        ids->v = v;
        ids->cap = cap;
    }
    ids->v[ids->n++] = id;
    return 0;
}

void hf_bpe_init(HfBpe *m) {
    memset(m, 0, sizeof *m);
    m->unk_id = -1;
    for (int b = 0; b < 256; ++b) m->byte_id[b] = -1;
}

void hf_bpe_index_bytes(HfBpe *m) {
    for (int b = 0; b < 256; ++b) {
        char c = (char)b;
        if (!hf_map_get(&m->vocab, &c, 1, &m->byte_id[b])) m->byte_id[b] = -1;
    }
}

int hf_bpe_add_merge(HfBpe *m, int32_t a, int32_t b, int32_t r) {
    int32_t key[2] = {a, b};
    if (m->n_merges == m->merge_cap) {
        size_t cap = m->merge_cap ? m->merge_cap * 2 : 1024;
        int32_t *res = realloc(m->merge_result, cap * sizeof *res);
        if (!res) return -1;
        m->merge_result = res;
        m->merge_cap = cap;
    }
    m->merge_result[m->n_merges] = r;
    /* a repeated pair keeps its last rank, as the reference's Map does */
    if (hf_map_put(&m->merges, key, sizeof key, (int32_t)m->n_merges) < 0) return -1;
    m->n_merges++;
    return 0;
}

void hf_bpe_free(HfBpe *m) {
    hf_map_free(&m->vocab);
    hf_map_free(&m->merges);
    free(m->merge_result);
    memset(m, 0, sizeof *m);
}

void hf_bpe_scratch_free(HfBpeScratch *sc) {
    free(sc->sym);
    free(sc->prev);
    free(sc->next);
    free(sc->heap);
    hf_map_free(&sc->cache);
    free(sc->arena.v);
    memset(sc, 0, sizeof *sc);
}

/* ---- the heap of candidate merges, least (rank, left) on top ---------- */

static int ent_less(const struct HfHeapEnt *a, const struct HfHeapEnt *b) {
    return a->rank < b->rank || (a->rank == b->rank && a->left < b->left);
}

static int heap_push(HfBpeScratch *sc, struct HfHeapEnt e) {
    if (sc->heap_n == sc->heap_cap) {
        size_t cap = sc->heap_cap ? sc->heap_cap * 2 : 64;
        struct HfHeapEnt *h = realloc(sc->heap, cap * sizeof *h);
        if (!h) return -1;
        sc->heap = h;
        sc->heap_cap = cap;
    }
    size_t i = sc->heap_n++;
    while (i > 0 && ent_less(&e, &sc->heap[(i - 1) / 2])) {
        sc->heap[i] = sc->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    sc->heap[i] = e;
    return 0;
}

static struct HfHeapEnt heap_pop(HfBpeScratch *sc) {
    struct HfHeapEnt top = sc->heap[0], last = sc->heap[--sc->heap_n];
    size_t i = 0, n = sc->heap_n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && ent_less(&sc->heap[c + 1], &sc->heap[c])) ++c;
        if (!ent_less(&sc->heap[c], &last)) break;
        sc->heap[i] = sc->heap[c];
        i = c;
    }
    if (n) sc->heap[i] = last;
    return top;
}

/* Rank of merging symbols a and b, or -1. */
static int32_t rank_of(const HfBpe *m, int32_t a, int32_t b) {
    int32_t key[2] = {a, b}, r;
    if (a < 0 || b < 0 || !hf_map_get(&m->merges, key, sizeof key, &r)) return -1;
    return r;
}

/* Push the candidate merge of symbol l with its right neighbour. */
static int push_pair(const HfBpe *m, HfBpeScratch *sc, int32_t l) {
    int32_t r = l >= 0 ? sc->next[l] : -1;
    if (l < 0 || r < 0) return 0;
    int32_t rank = rank_of(m, sc->sym[l], sc->sym[r]);
    if (rank < 0) return 0;
    return heap_push(sc, (struct HfHeapEnt){rank, l, r});
}

static int grow_symbols(HfBpeScratch *sc, size_t n) {
    if (n <= sc->cap) return 0;
    int32_t *s = realloc(sc->sym, n * sizeof *s), *p, *x;
    if (s) sc->sym = s;
    p = s ? realloc(sc->prev, n * sizeof *p) : NULL;
    if (p) sc->prev = p;
    x = p ? realloc(sc->next, n * sizeof *x) : NULL;
    if (x) sc->next = x;
    if (!x) return -1;
    sc->cap = n;
    return 0;
}

/* Merge w[n] into symbols; first symbol index returned via the lists. */
static int merge_word(const HfBpe *m, HfBpeScratch *sc, const unsigned char *w, size_t n) {
    if (grow_symbols(sc, n) < 0) return -1;
    sc->heap_n = 0;
    for (size_t i = 0; i < n; ++i) {
        sc->sym[i] = m->byte_id[w[i]];
        sc->prev[i] = (int32_t)i - 1;
        sc->next[i] = i + 1 < n ? (int32_t)i + 1 : -1;
    }
    for (size_t i = 0; i + 1 < n; ++i)
        if (push_pair(m, sc, (int32_t)i) < 0) return -1;
    while (sc->heap_n) {
        struct HfHeapEnt e = heap_pop(sc);
        int32_t l = e.left, r = e.right;
        /* stale: the pair changed since it was pushed */
        if (sc->sym[l] < -1 || sc->next[l] != r || rank_of(m, sc->sym[l], sc->sym[r]) != e.rank)
            continue;
        sc->sym[l] = m->merge_result[e.rank];
        sc->next[l] = sc->next[r];
        if (sc->next[r] >= 0) sc->prev[sc->next[r]] = l;
        sc->sym[r] = -2; /* dead */
        if (push_pair(m, sc, sc->prev[l]) < 0 || push_pair(m, sc, l) < 0) return -1;
    }
    return 0;
}

/* The ids of w[n] into the arena: count, then ids (unk where absent). */
static int word_ids(const HfBpe *m, HfBpeScratch *sc, const char *w, size_t n, HfIds *dst) {
    int32_t id;
    size_t at = dst->n;
    if (hf_ids_push(dst, 0) < 0) return -1;
    if (m->ignore_merges && hf_map_get(&m->vocab, w, n, &id)) {
        dst->v[at] = 1;
        return hf_ids_push(dst, id);
    }
    if (merge_word(m, sc, (const unsigned char *)w, n) < 0) return -1;
    for (int32_t i = n ? 0 : -1; i >= 0; i = sc->next[i]) {
        int32_t s = sc->sym[i] >= 0 ? sc->sym[i] : m->unk_id;
        if (s < 0) continue;
        if (hf_ids_push(dst, s) < 0) return -1;
        dst->v[at]++;
    }
    return 0;
}

/* Offset of w's entry in the cache arena, computing it when missing. */
static int cached(const HfBpe *m, HfBpeScratch *sc, const char *w, size_t n, size_t *off) {
    int32_t o;
    if (hf_map_get(&sc->cache, w, n, &o)) {
        *off = (size_t)o;
        return 0;
    }
    if (sc->arena.n > CACHE_MAX_IDS) {
        hf_map_clear(&sc->cache);
        sc->arena.n = 0;
    }
    *off = sc->arena.n;
    if (word_ids(m, sc, w, n, &sc->arena) < 0) return -1;
    return hf_map_put(&sc->cache, w, n, (int32_t)*off);
}

int hf_bpe_word(const HfBpe *m, HfBpeScratch *sc, const char *w, size_t n, HfIds *out,
                size_t section_start) {
    size_t off;
    HfIds tmp = {0};
    const int32_t *src;
    if (n <= CACHE_MAX_WORD) {
        if (cached(m, sc, w, n, &off) < 0) return -1;
        src = sc->arena.v + off;
    } else {
        if (word_ids(m, sc, w, n, &tmp) < 0) {
            free(tmp.v);
            return -1;
        }
        src = tmp.v;
    }
    int rc = 0;
    for (int32_t k = 1; k <= src[0] && rc == 0; ++k) {
        int unk = m->unk_id >= 0 && src[k] == m->unk_id;
        if (unk && m->fuse_unk && out->n > section_start && out->v[out->n - 1] == m->unk_id)
            continue;
        rc = hf_ids_push(out, src[k]);
    }
    free(tmp.v);
    return rc;
}
