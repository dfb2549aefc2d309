/* safetensors.c: mmap + strict header parsing (jansson) + F16/BF16 -> F32. */
#include "safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mapguard.h"
#include "util.h"

#define ST_MAX_SHARDS 4096

typedef struct {
    char *path;
    uint8_t *map;
    size_t len;
} StFile;

struct SafeTensors {
    StFile *files;
    int n_files;
    StTensor *t; /* sorted by name */
    size_t n;
};

static const struct {
    const char *name;
    size_t size;
} DTYPES[ST_N_DTYPES] = {
    [ST_F32] = {"F32", 4},   [ST_F16] = {"F16", 2},         [ST_BF16] = {"BF16", 2},
    [ST_F64] = {"F64", 8},   [ST_I64] = {"I64", 8},         [ST_I32] = {"I32", 4},
    [ST_I16] = {"I16", 2},   [ST_I8] = {"I8", 1},           [ST_U8] = {"U8", 1},
    [ST_BOOL] = {"BOOL", 1}, [ST_U16] = {"U16", 2},         [ST_U32] = {"U32", 4},
    [ST_U64] = {"U64", 8},   [ST_F8_E4M3] = {"F8_E4M3", 1}, [ST_F8_E5M2] = {"F8_E5M2", 1},
};

const char *st_dtype_name(StDtype d) { return d < ST_N_DTYPES ? DTYPES[d].name : "?"; }
size_t st_dtype_size(StDtype d) { return d < ST_N_DTYPES ? DTYPES[d].size : 0; }

static int dtype_of(const char *s, StDtype *out) {
    for (int i = 0; i < ST_N_DTYPES; i++)
        if (!strcmp(s, DTYPES[i].name)) {
            *out = (StDtype)i;
            return 0;
        }
    return -1;
}

void st_tensors_free(StTensor *t, size_t n) {
    if (!t) return;
    for (size_t i = 0; i < n; i++) free(t[i].name);
    free(t);
}

/* shape: array of non-negative integers; numel with overflow check. */
static int parse_shape(json_t *js, StTensor *t, const char *fname, char *err, size_t errlen) {
    if (!json_is_array(js) || json_array_size(js) > ST_MAX_DIMS)
        return seterr(err, errlen, "%s: tensor '%s': shape is not an array of at most %d integers",
                      fname, t->name, ST_MAX_DIMS);
    t->ndim = (int)json_array_size(js);
    t->numel = 1;
    for (int i = 0; i < t->ndim; i++) {
        json_t *v = json_array_get(js, (size_t)i);
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            return seterr(err, errlen, "%s: tensor '%s': shape[%d] is not a non-negative integer",
                          fname, t->name, i);
        t->shape[i] = json_integer_value(v);
        uint64_t d = (uint64_t)t->shape[i];
        if (d && t->numel > SIZE_MAX / d)
            return seterr(err, errlen, "%s: tensor '%s': shape overflows", fname, t->name);
        t->numel *= (size_t)d;
    }
    return 0;
}

/* One header entry -> t (data not yet bound). */
static int parse_entry(const char *key, json_t *v, StTensor *t, uint64_t *beg, uint64_t *end,
                       const char *fname, char *err, size_t errlen) {
    if (!(t->name = strdup(key))) return seterr(err, errlen, "out of memory");
    json_t *dt = json_object_get(v, "dtype"), *sh = json_object_get(v, "shape"),
           *off = json_object_get(v, "data_offsets");
    if (!json_is_object(v) || !json_is_string(dt) || !sh || !json_is_array(off) ||
        json_array_size(off) != 2)
        return seterr(err, errlen,
                      "%s: tensor '%s': entry needs dtype, shape and data_offsets [begin, end]",
                      fname, key);
    if (dtype_of(json_string_value(dt), &t->dtype) < 0)
        return seterr(err, errlen, "%s: tensor '%s': unknown dtype '%.32s'", fname, key,
                      json_string_value(dt));
    if (parse_shape(sh, t, fname, err, errlen) < 0) return -1;
    json_t *b = json_array_get(off, 0), *e = json_array_get(off, 1);
    if (!json_is_integer(b) || !json_is_integer(e) || json_integer_value(b) < 0 ||
        json_integer_value(e) < json_integer_value(b))
        return seterr(err, errlen, "%s: tensor '%s': data_offsets are not 0 <= begin <= end", fname,
                      key);
    *beg = (uint64_t)json_integer_value(b);
    *end = (uint64_t)json_integer_value(e);
    size_t es = DTYPES[t->dtype].size;
    if (t->numel > SIZE_MAX / es || *end - *beg != (uint64_t)(t->numel * es))
        return seterr(err, errlen, "%s: tensor '%s': %llu bytes for %zu elements of %s", fname, key,
                      (unsigned long long)(*end - *beg), t->numel, DTYPES[t->dtype].name);
    return 0;
}

typedef struct {
    uint64_t b, e;
    size_t i;
} Span;

static int cmp_span(const void *a, const void *b) {
    const Span *x = a, *y = b;
    return (x->b > y->b) - (x->b < y->b);
}

/* Offsets inside the data area and pairwise disjoint. */
static int check_spans(StTensor *t, Span *sp, size_t n, uint64_t data_len, const char *fname,
                       char *err, size_t errlen) {
    for (size_t i = 0; i < n; i++)
        if (sp[i].e > data_len)
            return seterr(err, errlen,
                          "%s: tensor '%s': data_offsets [%llu, %llu] run past the end of the file "
                          "(%llu data bytes)",
                          fname, t[sp[i].i].name, (unsigned long long)sp[i].b,
                          (unsigned long long)sp[i].e, (unsigned long long)data_len);
    qsort(sp, n, sizeof *sp, cmp_span);
    for (size_t i = 1; i < n; i++)
        if (sp[i].b < sp[i - 1].e && sp[i].e > sp[i].b)
            return seterr(err, errlen, "%s: tensors '%s' and '%s' overlap", fname,
                          t[sp[i - 1].i].name, t[sp[i].i].name);
    return 0;
}

static json_t *load_header(const uint8_t *buf, size_t len, const char *fname, uint64_t *hlen,
                           char *err, size_t errlen) {
    if (len < 8)
        return seterr(err, errlen, "%s: truncated: %zu bytes, no safetensors header", fname, len),
               NULL;
    uint64_t h = 0;
    for (int i = 7; i >= 0; i--) h = (h << 8) | buf[i];
    if (h > ST_MAX_HEADER)
        return seterr(err, errlen, "%s: absurd header length %llu (limit %llu)", fname,
                      (unsigned long long)h, (unsigned long long)ST_MAX_HEADER),
               NULL;
    if (h > len - 8)
        return seterr(err, errlen, "%s: truncated: header of %llu bytes but the file has %zu",
                      fname, (unsigned long long)h, len),
               NULL;
    json_error_t je;
    json_t *root = json_loadb((const char *)buf + 8, (size_t)h, JSON_REJECT_DUPLICATES, &je);
    if (!root || !json_is_object(root)) {
        seterr(err, errlen, "%s: header is not a JSON object (%s)", fname,
               root ? "not an object" : one_line(je.text));
        json_decref(root);
        return NULL;
    }
    *hlen = h;
    return root;
}

int st_parse(const uint8_t *buf, size_t len, const char *fname, int shard, StTensor **out,
             size_t *n, char *err, size_t errlen) {
    *out = NULL;
    *n = 0;
    uint64_t hlen = 0;
    json_t *root = load_header(buf, len, fname, &hlen, err, errlen);
    if (!root) return -1;
    size_t cap = json_object_size(root);
    StTensor *t = calloc(cap ? cap : 1, sizeof *t);
    Span *sp = calloc(cap ? cap : 1, sizeof *sp);
    int rc = t && sp ? 0 : seterr(err, errlen, "out of memory");
    const char *key;
    json_t *v;
    size_t k = 0;
    const uint8_t *data = buf + 8 + hlen;
    json_object_foreach(root, key, v) {
        if (rc < 0) break;
        if (!strcmp(key, "__metadata__")) continue;
        rc = parse_entry(key, v, &t[k], &sp[k].b, &sp[k].e, fname, err, errlen);
        sp[k].i = k;
        t[k].shard = shard;
        k++;
    }
    if (rc == 0) rc = check_spans(t, sp, k, len - 8 - hlen, fname, err, errlen);
    for (size_t i = 0; rc == 0 && i < k; i++) {
        t[sp[i].i].data = data + sp[i].b;
        t[sp[i].i].nbytes = (size_t)(sp[i].e - sp[i].b);
    }
    free(sp);
    json_decref(root);
    if (rc < 0) {
        st_tensors_free(t, k);
        return -1;
    }
    *out = t;
    *n = k;
    return 0;
}

/* ---- files ---- */

static int map_file(StFile *f, const char *path, char *err, size_t errlen) {
    if (!(f->path = strdup(path))) return seterr(err, errlen, "out of memory");
    int fd = input_open(path, err, errlen); /* a regular file, after links */
    if (fd < 0) return -1;
    struct stat st;
    int rc = fstat(fd, &st) == 0 ? 0 : seterr(err, errlen, "%s: %s", path, strerror(errno));
    f->len = rc == 0 ? (size_t)st.st_size : 0;
    if (rc == 0 && f->len < 8)
        rc = seterr(err, errlen, "%s: truncated: %zu bytes, no safetensors header", path, f->len);
    if (rc == 0) {
        void *m = mmap(NULL, f->len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) rc = seterr(err, errlen, "%s: cannot map: %s", path, strerror(errno));
        else f->map = m, mapguard_add(m, f->len, path, &st); /* SIGBUS: one line */
    }
    close(fd);
    return rc;
}

static int cmp_tensor(const void *a, const void *b) {
    return strcmp(((const StTensor *)a)->name, ((const StTensor *)b)->name);
}

/* Parse shard i and append its tensors to st->t. */
static int add_shard(SafeTensors *st, int i, char *err, size_t errlen) {
    StTensor *t;
    size_t n;
    StFile *f = &st->files[i];
    if (st_parse(f->map, f->len, f->path, i, &t, &n, err, errlen) < 0) return -1;
    StTensor *all = realloc(st->t, (st->n + n + 1) * sizeof *all);
    if (!all) {
        st_tensors_free(t, n);
        return seterr(err, errlen, "out of memory");
    }
    memcpy(all + st->n, t, n * sizeof *t);
    free(t);
    st->t = all;
    st->n += n;
    return 0;
}

/* Sort by name; a name in two shards is an error. */
static int finish(SafeTensors *st, char *err, size_t errlen) {
    if (st->n) qsort(st->t, st->n, sizeof *st->t, cmp_tensor);
    for (size_t i = 1; i < st->n; i++)
        if (!strcmp(st->t[i].name, st->t[i - 1].name))
            return seterr(err, errlen, "tensor '%s' is stored twice (%s and %s)", st->t[i].name,
                          st->files[st->t[i - 1].shard].path, st->files[st->t[i].shard].path);
    return 0;
}

void st_close(SafeTensors *st) {
    if (!st) return;
    for (int i = 0; i < st->n_files; i++) {
        if (st->files[i].map) mapguard_remove(st->files[i].map);
        if (st->files[i].map) munmap(st->files[i].map, st->files[i].len);
        free(st->files[i].path);
    }
    free(st->files);
    st_tensors_free(st->t, st->n);
    free(st);
}

int st_open_file(SafeTensors **out, const char *path, char *err, size_t errlen) {
    SafeTensors *st = calloc(1, sizeof *st);
    *out = NULL;
    if (!st || !(st->files = calloc(1, sizeof *st->files))) {
        free(st);
        return seterr(err, errlen, "out of memory");
    }
    st->n_files = 1;
    if (map_file(&st->files[0], path, err, errlen) < 0 || add_shard(st, 0, err, errlen) < 0 ||
        finish(st, err, errlen) < 0) {
        st_close(st);
        return -1;
    }
    *out = st;
    return 0;
}

/* A shard name must stay inside the snapshot directory. */
static int safe_name(const char *s) {
    return *s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..");
}

/* Distinct shard file names of the weight map, in first-seen order. */
static int shard_names(json_t *wm, const char ***names, int *n, const char *ipath, char *err,
                       size_t errlen) {
    const char *key;
    json_t *v;
    *n = 0;
    *names = calloc(json_object_size(wm) + 1, sizeof **names);
    if (!*names) return seterr(err, errlen, "out of memory");
    json_object_foreach(wm, key, v) {
        if (!json_is_string(v) || !safe_name(json_string_value(v)))
            return seterr(err, errlen,
                          "%s: weight_map entry '%s' is not a file name in the snapshot", ipath,
                          key);
        int seen = 0;
        for (int i = 0; i < *n && !seen; i++) seen = !strcmp((*names)[i], json_string_value(v));
        if (!seen) {
            if (*n >= ST_MAX_SHARDS) return seterr(err, errlen, "%s: too many shards", ipath);
            (*names)[(*n)++] = json_string_value(v);
        }
    }
    return 0;
}

/* Every tensor named in the index must sit in the shard it names. */
static int check_index(const SafeTensors *st, json_t *wm, const char *ipath, char *err,
                       size_t errlen) {
    const char *key;
    json_t *v;
    json_object_foreach(wm, key, v) {
        const StTensor *t = st_find(st, key);
        if (!t)
            return seterr(err, errlen, "%s: tensor '%s' is not in %s", ipath, key,
                          json_string_value(v));
        const char *p = st->files[t->shard].path, *slash = strrchr(p, '/');
        if (strcmp(slash ? slash + 1 : p, json_string_value(v)))
            return seterr(err, errlen, "%s: tensor '%s' is in %s, not in %s", ipath, key, p,
                          json_string_value(v));
    }
    return 0;
}

static int open_index(SafeTensors *st, const char *dir, const char *ipath, char *err,
                      size_t errlen) {
    json_error_t je;
    FILE *f = input_fopen(ipath, err, errlen);
    if (!f) return -1;
    json_t *root = json_loadf(f, JSON_REJECT_DUPLICATES, &je);
    fclose(f);
    json_t *wm = root ? json_object_get(root, "weight_map") : NULL;
    if (!json_is_object(wm)) {
        seterr(err, errlen, "%s: %s", ipath, root ? "no weight_map object" : one_line(je.text));
        json_decref(root);
        return -1;
    }
    const char **names = NULL;
    int n = 0, rc = shard_names(wm, &names, &n, ipath, err, errlen);
    if (rc == 0 && !(st->files = calloc((size_t)n + 1, sizeof *st->files)))
        rc = seterr(err, errlen, "out of memory");
    for (int i = 0; rc == 0 && i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        st->n_files = i + 1;
        rc = map_file(&st->files[i], path, err, errlen);
        if (rc == 0) rc = add_shard(st, i, err, errlen);
    }
    if (rc == 0) rc = finish(st, err, errlen);
    if (rc == 0) rc = check_index(st, wm, ipath, err, errlen);
    free(names);
    json_decref(root);
    return rc;
}

int st_open_dir(SafeTensors **out, const char *dir, char *err, size_t errlen) {
    char ipath[4096], spath[4096];
    snprintf(ipath, sizeof ipath, "%s/model.safetensors.index.json", dir);
    snprintf(spath, sizeof spath, "%s/model.safetensors", dir);
    *out = NULL;
    if (!file_exists(ipath)) {
        if (!file_exists(spath))
            return seterr(err, errlen, "%s: no model.safetensors or model.safetensors.index.json",
                          dir);
        return st_open_file(out, spath, err, errlen);
    }
    SafeTensors *st = calloc(1, sizeof *st);
    if (!st) return seterr(err, errlen, "out of memory");
    if (open_index(st, dir, ipath, err, errlen) < 0) {
        st_close(st);
        return -1;
    }
    *out = st;
    return 0;
}

const StTensor *st_find(const SafeTensors *st, const char *name) {
    size_t lo = 0, hi = st->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(st->t[mid].name, name);
        if (!c) return &st->t[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

size_t st_count(const SafeTensors *st) { return st->n; }
const StTensor *st_at(const SafeTensors *st, size_t i) { return i < st->n ? &st->t[i] : NULL; }

size_t st_mapped_bytes(const SafeTensors *st) {
    size_t s = 0;
    for (int i = 0; i < st->n_files; i++) s += st->files[i].len;
    return s;
}

int st_file_count(const SafeTensors *st) { return st->n_files; }

const uint8_t *st_file_bytes(const SafeTensors *st, int i, size_t *len, const char **path) {
    *len = st->files[i].len, *path = st->files[i].path;
    return st->files[i].map;
}

/* ---- conversion ---- */

static float f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31, ex = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (ex == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13);
    } else if (ex) {
        bits = sign | ((ex + 112) << 23) | (man << 13);
    } else if (man) { /* subnormal: normalise */
        int e = -1;
        do {
            e++;
            man <<= 1;
        } while (!(man & 0x400));
        bits = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ff) << 13);
    } else {
        bits = sign;
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

const float *st_f32_view(const StTensor *t) {
    if (t->dtype != ST_F32 || ((uintptr_t)t->data & 3)) return NULL;
    return (const float *)(const void *)t->data;
}

int st_to_f32(const StTensor *t, size_t off, size_t n, float *out, char *err, size_t errlen) {
    if (off > t->numel || n > t->numel - off)
        return seterr(err, errlen, "tensor '%s': elements [%zu, %zu) out of range (%zu)", t->name,
                      off, off + n, t->numel);
    const uint8_t *p = t->data + off * DTYPES[t->dtype].size;
    switch (t->dtype) {
    case ST_F32: memcpy(out, p, n * 4); return 0;
    case ST_BF16:
        for (size_t i = 0; i < n; i++) {
            uint32_t b = (uint32_t)(p[2 * i] | (p[2 * i + 1] << 8)) << 16;
            memcpy(&out[i], &b, 4);
        }
        return 0;
    case ST_F16:
        for (size_t i = 0; i < n; i++)
            out[i] = f16_to_f32((uint16_t)(p[2 * i] | (p[2 * i + 1] << 8)));
        return 0;
    default:
        return seterr(err, errlen, "tensor '%s': dtype %s is not supported (F32, F16 or BF16)",
                      t->name, DTYPES[t->dtype].name);
    }
}
