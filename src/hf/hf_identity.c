/* hf_identity.c: a checkpoint's identity (hf_identity.h). */
#include "hf_identity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hf_steps.h"
#include "safetensors.h"
#include "util.h"

#define MIB ((size_t)1 << 20)
#define BLOCK ((size_t)64 << 10)
#define LINE_MAX_LEN 1200

/* Whole, or the first and last MiB and HF_ID_BLOCKS blocks between. */
static uint64_t bytes_hash(const uint8_t *p, size_t n, int *full) {
    *full = n <= HF_ID_FULL_BYTES;
    if (*full) return fnv1a64(FNV1A64_OFFSET, p, n);
    uint64_t h = fnv1a64(FNV1A64_OFFSET, p, MIB);
    size_t span = n - 2 * MIB - BLOCK;
    for (size_t k = 0; k < HF_ID_BLOCKS; k++)
        h = fnv1a64(h, p + MIB + span / (HF_ID_BLOCKS - 1) * k, BLOCK);
    return fnv1a64(h, p + n - MIB, MIB);
}

static int add_line(char *out, size_t cap, size_t *len, const char *name, const uint8_t *p,
                    size_t n) {
    int full;
    uint64_t h = bytes_hash(p, n, &full);
    int w = snprintf(out + *len, cap - *len, "%s %zu %s %016llx\n", name, n,
                     full ? "full" : "sampled", (unsigned long long)h);
    if (w < 0 || (size_t)w >= cap - *len) return -1;
    *len += (size_t)w;
    return 0;
}

char *hf_model_identity(const HfModel *m) {
    int nf = st_file_count(m->st);
    size_t cap = (size_t)(nf + 1) * LINE_MAX_LEN, len = 0;
    char *out = malloc(cap);
    if (!out) return NULL;
    out[0] = '\0';
    int rc =
        add_line(out, cap, &len, "config.json", (const uint8_t *)m->cfg_text, strlen(m->cfg_text));
    for (int i = 0; rc == 0 && i < nf; i++) {
        size_t n;
        const char *path;
        const uint8_t *p = st_file_bytes(m->st, i, &n, &path);
        const char *slash = strrchr(path, '/');
        rc = add_line(out, cap, &len, slash ? slash + 1 : path, p, n);
    }
    if (rc != 0) {
        free(out);
        return NULL;
    }
    return out;
}

/* Line i of text (no newline) into buf; 0 when there is none. */
static int line_at(const char *text, int i, char *buf, size_t n) {
    for (; i > 0 && text; i--) {
        text = strchr(text, '\n');
        if (text) text++;
    }
    if (!text || !*text) return 0;
    size_t k = strcspn(text, "\n");
    snprintf(buf, n, "%.*s", (int)(k < n ? k : n - 1), text);
    return 1;
}

int hf_identity_diff(const char *rec, const char *cur, char *what, size_t len) {
    for (int i = 0;; i++) {
        char a[LINE_MAX_LEN], b[LINE_MAX_LEN], na[1024], nb[1024], ka[16], kb[16];
        int ha = line_at(rec, i, a, sizeof a), hb = line_at(cur, i, b, sizeof b);
        if (!ha && !hb) return 0;
        if (ha != hb) {
            snprintf(what, len, "the files differ: %s", ha ? a : b);
            return 1;
        }
        unsigned long long sa = 0, sb = 0, xa = 0, xb = 0;
        if (sscanf(a, "%1023s %llu %15s %llx", na, &sa, ka, &xa) != 4 ||
            sscanf(b, "%1023s %llu %15s %llx", nb, &sb, kb, &xb) != 4) {
            snprintf(what, len, "the recorded identity line '%.200s' is not NAME BYTES HOW HASH",
                     a);
            return 1;
        }
        if (strcmp(na, nb)) {
            snprintf(what, len, "the files differ: %s, not %s", nb, na);
            return 1;
        }
        if (sa != sb) {
            snprintf(what, len, "%s: %llu bytes, not %llu", na, sb, sa);
            return 1;
        }
        if (xa != xb || strcmp(ka, kb)) {
            snprintf(what, len, "%s: content differs (its %s hash)", na, kb);
            return 1;
        }
    }
}
