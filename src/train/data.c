/* data.c: the data sources of data.h, and batches drawn from them.
 *
 * Every batch is a pure function of (seed, split, step, b): each sequence
 * seeds its own RNG with rng_seed4, so there is no cursor to save and a
 * resumed run sees exactly the batches it would have seen.
 *
 * Vocabulary: each source needs some number of ids (bytes: 257; bigram:
 * bigram_vocab + 1; token files: max id + 1, plus one for BOS when on).
 * cfg->vocab_size <= 0 means "what the source needs"; a larger value is
 * kept (unused rows); a smaller one is refused. Feeding a resolved
 * vocab_size back in gives the same answer, so resolving twice is safe.
 */
#include "data.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rng.h"
#include "token_file.h"
#include "util.h"

/* A sanity bound: no corpus this harness trains on comes near it, and it
 * keeps a wrong path (a disk image, /dev/zero) from eating memory. */
#define MAX_FILE_BYTES (4ULL << 30)
/* The probe split ignores seed and step: every variant and seed sees the
 * same probe sequences. */
#define PROBE_SEED 0x70726f6265ULL /* "probe" */
/* Bigram rows: each token has BG_SUCCESSORS possible successors with
 * weights exp(BG_TEMP * normal), so rows are peaked and learnable. */
#define BG_SUCCESSORS 8
#define BG_TEMP 1.5
#define BG_MAX_VOCAB 8192 /* the cdf is vocab^2 floats */

/* ---------------------------------------------------------------- files */

/* Read a whole file. hint is appended to an open failure (may be ""). */
static int read_file(const char *path, const char *hint, unsigned char **out, size_t *nout,
                     char *err, size_t errlen) {
    *out = NULL;
    *nout = 0;
    char why[600];
    FILE *f = input_fopen(path, why, sizeof why);
    if (!f) return seterr(err, errlen, "%s%s", why, strstr(why, "cannot open") ? hint : "");
    struct stat st;
    if (fstat(fileno(f), &st) != 0) {
        int e = errno;
        fclose(f);
        return seterr(err, errlen, "cannot stat %s: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        fclose(f);
        return seterr(err, errlen, "%s is not a regular file", path);
    }
    if ((unsigned long long)st.st_size > MAX_FILE_BYTES) {
        fclose(f);
        return seterr(err, errlen, "%s is %lld bytes, over the 4 GiB limit", path,
                      (long long)st.st_size);
    }
    size_t n = (size_t)st.st_size;
    unsigned char *buf = malloc(n ? n : 1);
    if (!buf) {
        fclose(f);
        return seterr(err, errlen, "out of memory reading %s (%zu bytes)", path, n);
    }
    size_t got = fread(buf, 1, n, f);
    int bad = ferror(f) || got != n;
    fclose(f);
    if (bad) {
        free(buf);
        return seterr(err, errlen,
                      "cannot read %s: short read (%zu of %zu "
                      "bytes)",
                      path, got, n);
    }
    *out = buf;
    *nout = n;
    return 0;
}

/* Byte-level text: token = byte value. */
static int load_text(const char *path, const char *hint, uint32_t **out, size_t *n, char *err,
                     size_t errlen) {
    unsigned char *buf;
    if (read_file(path, hint, &buf, n, err, errlen)) return -1;
    uint32_t *tok = malloc((*n ? *n : 1) * sizeof *tok);
    if (!tok) {
        free(buf);
        return seterr(err, errlen, "out of memory for %s (%zu tokens)", path, *n);
    }
    for (size_t i = 0; i < *n; i++) tok[i] = buf[i];
    free(buf);
    *out = tok;
    return 0;
}

/* A token file (token_file.h: raw uint16 or .npy). *max_id gets the
 * largest id (-1 for an empty file). */
static int load_ids(const char *path, uint32_t **out, size_t *n, long long *max_id, char *err,
                    size_t errlen) {
    unsigned char *buf;
    size_t bytes;
    if (read_file(path, "", &buf, &bytes, err, errlen)) return -1;
    int rc = token_file_decode(path, buf, bytes, out, n, max_id, err, errlen);
    free(buf);
    return rc;
}

/* The two file paths of a corpus source, and the hint for a missing file. */
static int corpus_paths(const Config *cfg, char *train, char *val, size_t len, const char **hint,
                        char *err, size_t errlen) {
    *hint = "";
    if (cfg->data == DATA_BROWN) {
        const char *dir = cfg->data_dir[0] ? cfg->data_dir : "data/brown";
        int a = snprintf(train, len, "%s/train.txt", dir);
        int b = snprintf(val, len, "%s/val.txt", dir);
        if (a < 0 || b < 0 || (size_t)a >= len || (size_t)b >= len)
            return seterr(err, errlen, "data_dir too long: %s", dir);
        *hint = " (run data/fetch_brown.sh)";
        return 0;
    }
    const char *kind = cfg->data == DATA_TEXT ? "text" : "tokens";
    if (!cfg->train_file[0] || !cfg->val_file[0])
        return seterr(err, errlen,
                      "data=%s needs both train_file and "
                      "val_file (%s is not set)",
                      kind, cfg->train_file[0] ? "val_file" : "train_file");
    if (str_copy(train, len, cfg->train_file) || str_copy(val, len, cfg->val_file))
        return seterr(err, errlen, "train_file or val_file too long");
    return 0;
}

/* ----------------------------------------------------------- vocabulary */

/* Apply cfg->vocab_size to what a source needs. */
static int resolve_vocab(const Config *cfg, int needed, const char *what, char *err,
                         size_t errlen) {
    if (cfg->vocab_size <= 0) return needed;
    if (cfg->vocab_size < needed)
        return seterr(err, errlen,
                      "vocab_size %d is smaller than %s needs "
                      "(%d)",
                      cfg->vocab_size, what, needed);
    return cfg->vocab_size;
}

static int bigram_check(const Config *cfg, char *err, size_t errlen) {
    int v = cfg->bigram_vocab, k = cfg->bigram_triggers;
    if (v < 2 || v > BG_MAX_VOCAB)
        return seterr(err, errlen, "bigram_vocab %d out of range [2, %d]", v, BG_MAX_VOCAB);
    if (k < 0 || k >= v)
        return seterr(err, errlen,
                      "bigram_triggers %d out of range [0, %d] "
                      "(at least one token must not be a trigger)",
                      k, v - 1);
    return 0;
}

/* Token files: max id of both files. Leaves the loaded tokens to the
 * caller when train/val are non-NULL, frees them otherwise. */
static int tokens_load(const Config *cfg, uint32_t **train, size_t *n_train, uint32_t **val,
                       size_t *n_val, int *max_id, char *err, size_t errlen) {
    char tp[CFG_STR + 16], vp[CFG_STR + 16];
    const char *hint;
    if (corpus_paths(cfg, tp, vp, sizeof tp, &hint, err, errlen)) return -1;
    long long mt, mv;
    if (load_ids(tp, train, n_train, &mt, err, errlen)) return -1;
    if (load_ids(vp, val, n_val, &mv, err, errlen)) {
        free(*train);
        *train = NULL;
        return -1;
    }
    *max_id = (int)(mt > mv ? mt : mv); /* <= TOKEN_FILE_MAX_ID */
    return 0;
}

/* Refuse the first id at or past limit (vocab_size, or the BOS id, which
 * is the last id, when BOS is on), naming the file and the index. */
static int tokens_refuse(const uint32_t *tok, size_t n, int limit, const char *path, int bos,
                         char *err, size_t errlen) {
    for (size_t i = 0; i < n; i++)
        if (tok[i] >= (uint32_t)limit)
            return seterr(err, errlen, "%s: token %u at index %zu >= %s %d", path, tok[i], i,
                          bos ? "the BOS id" : "vocab_size", limit);
    return 0;
}

/* Ids that imply a vocabulary SPARSE_FACTOR times the ids that occur (and
 * SPARSE_MIN_UNUSED rows more) get a warning: a stray large id makes a
 * huge embedding of rows no token uses. */
#define SPARSE_FACTOR 4
#define SPARSE_MIN_UNUSED 4096

/* Warn in one line when the vocabulary max_id + 1 implied by the ids of
 * both files is far larger than the number of distinct ids in them. */
static void warn_sparse_ids(const Config *cfg, const uint32_t *t, size_t nt, const uint32_t *v,
                            size_t nv, int max_id) {
    size_t implied = (size_t)max_id + 1;
    unsigned char *seen = calloc(implied, 1);
    if (!seen) return;
    size_t distinct = 0;
    for (size_t i = 0; i < nt + nv; i++) {
        uint32_t id = i < nt ? t[i] : v[i - nt];
        distinct += !seen[id];
        seen[id] = 1;
    }
    free(seen);
    if (implied > SPARSE_FACTOR * distinct && implied - distinct >= SPARSE_MIN_UNUSED)
        fprintf(stderr,
                "warning: %s and %s hold %zu distinct token ids, but their largest id %d makes "
                "a vocabulary of %zu (rows no token uses); renumber the ids 0..%zu or check the "
                "files\n",
                cfg->train_file, cfg->val_file, distinct, max_id, implied, distinct - 1);
}

int data_fill_vocab(Config *cfg, char *err, size_t errlen) {
    if (cfg->vocab_size > 0) return 0;
    int v = data_vocab_size(cfg, err, errlen);
    if (v < 0) return -1;
    cfg->vocab_size = v;
    return 0;
}

int data_vocab_size(const Config *cfg, char *err, size_t errlen) {
    switch (cfg->data) {
    case DATA_BROWN:
    case DATA_TEXT:
        /* BOS keeps its id even with bos off, so the model's shape does
         * not depend on the flag. */
        return resolve_vocab(cfg, BYTE_BOS + 1, "byte data", err, errlen);
    case DATA_BIGRAM:
        if (bigram_check(cfg, err, errlen)) return -1;
        return resolve_vocab(cfg, cfg->bigram_vocab + 1, "bigram data", err, errlen);
    case DATA_TOKENS: {
        uint32_t *t = NULL, *v = NULL;
        size_t nt, nv;
        int mx;
        if (tokens_load(cfg, &t, &nt, &v, &nv, &mx, err, errlen)) return -1;
        if (cfg->vocab_size <= 0) warn_sparse_ids(cfg, t, nt, v, nv, mx);
        free(t);
        free(v);
        return resolve_vocab(cfg, mx + 1 + (cfg->bos ? 1 : 0),
                             "the token "
                             "files",
                             err, errlen);
    }
    }
    return seterr(err, errlen, "unknown data source %d", (int)cfg->data);
}

/* ---------------------------------------------------------------- open */

/* Each split must hold one whole window of the training length. */
static int check_length(size_t n, const char *path, const Config *cfg, char *err, size_t errlen) {
    if (cfg->seq_len <= 0) return 0;
    size_t need = (size_t)cfg->seq_len + (cfg->bos ? 0 : 1);
    if (n < need)
        return seterr(err, errlen,
                      "%s holds %zu tokens, too short for one "
                      "sequence of seq_len %d (needs %zu)",
                      path, n, cfg->seq_len, need);
    return 0;
}

static int open_corpus(Dataset *ds, const Config *cfg, char *err, size_t errlen) {
    char tp[CFG_STR + 16], vp[CFG_STR + 16];
    const char *hint;
    if (corpus_paths(cfg, tp, vp, sizeof tp, &hint, err, errlen)) return -1;
    if (cfg->data == DATA_TOKENS) {
        int mx;
        if (tokens_load(cfg, &ds->train, &ds->n_train, &ds->val, &ds->n_val, &mx, err, errlen))
            return -1;
        int v = cfg->vocab_size > 0 ? cfg->vocab_size : mx + 1 + (cfg->bos ? 1 : 0);
        /* BOS takes the last id, so ids must stay below it. */
        int limit = cfg->bos ? v - 1 : v;
        if (tokens_refuse(ds->train, ds->n_train, limit, tp, cfg->bos, err, errlen) ||
            tokens_refuse(ds->val, ds->n_val, limit, vp, cfg->bos, err, errlen))
            return -1;
        ds->vocab_size = v;
        ds->bos_id = v - 1;
    } else {
        if (load_text(tp, hint, &ds->train, &ds->n_train, err, errlen) ||
            load_text(vp, hint, &ds->val, &ds->n_val, err, errlen))
            return -1;
        ds->vocab_size = resolve_vocab(cfg, BYTE_BOS + 1, "byte data", err, errlen);
        if (ds->vocab_size < 0) return -1;
        ds->bos_id = BYTE_BOS;
    }
    if (check_length(ds->n_train, tp, cfg, err, errlen) ||
        check_length(ds->n_val, vp, cfg, err, errlen))
        return -1;
    return 0;
}

/* Triggers: a random subset of bigram_seed (partial Fisher-Yates). Rows:
 * BG_SUCCESSORS distinct successors with log-normal weights. */
static int open_bigram(Dataset *ds, const Config *cfg, char *err, size_t errlen) {
    if (bigram_check(cfg, err, errlen)) return -1;
    int v = cfg->bigram_vocab;
    ds->vocab_size = resolve_vocab(cfg, v + 1, "bigram data", err, errlen);
    if (ds->vocab_size < 0) return -1;
    ds->bos_id = v;
    ds->bg_vocab = v;
    ds->bg_triggers = cfg->bigram_triggers;
    ds->bg_seed = cfg->bigram_seed;
    ds->bg_cdf = falloc((size_t)v * (size_t)v);
    ds->bg_trigger = calloc((size_t)v, 1);
    int *perm = malloc((size_t)v * sizeof *perm);
    double *w = malloc((size_t)v * sizeof *w);
    if (!ds->bg_cdf || !ds->bg_trigger || !perm || !w) {
        free(perm);
        free(w);
        return seterr(err, errlen, "out of memory for bigram_vocab %d", v);
    }
    Rng r;
    rng_seed4(&r, ds->bg_seed, 0x74726967ULL /* "trig" */, 0, 0);
    for (int i = 0; i < v; i++) perm[i] = i;
    for (int i = 0; i < ds->bg_triggers; i++) {
        int j = i + (int)rng_below(&r, (uint32_t)(v - i));
        int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
        ds->bg_trigger[perm[i]] = 1;
    }
    int s = v < BG_SUCCESSORS ? v : BG_SUCCESSORS;
    for (int row = 0; row < v; row++) {
        rng_seed4(&r, ds->bg_seed, 0x726f77ULL /* "row" */, (uint64_t)row, 0);
        for (int i = 0; i < v; i++) {
            perm[i] = i;
            w[i] = 0.0;
        }
        double total = 0.0;
        for (int i = 0; i < s; i++) {
            int j = i + (int)rng_below(&r, (uint32_t)(v - i));
            int t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
            w[perm[i]] = exp(BG_TEMP * rng_normal(&r));
            total += w[perm[i]];
        }
        /* Cumulative in double; from the last successor on the cdf is
         * exactly 1, so a draw u < 1 always lands on a successor. */
        int last = 0;
        for (int j = 0; j < v; j++)
            if (w[j] > 0.0) last = j;
        float *cdf = ds->bg_cdf + (size_t)row * (size_t)v;
        double acc = 0.0;
        for (int j = 0; j < v; j++) {
            acc += w[j];
            cdf[j] = j >= last ? 1.0f : (float)(acc / total);
        }
    }
    free(perm);
    free(w);
    return 0;
}

int data_open(Dataset *ds, const Config *cfg, char *err, size_t errlen) {
    memset(ds, 0, sizeof *ds);
    ds->source = cfg->data;
    ds->bos = cfg->bos ? 1 : 0;
    int rc;
    switch (cfg->data) {
    case DATA_BROWN:
    case DATA_TEXT:
    case DATA_TOKENS: rc = open_corpus(ds, cfg, err, errlen); break;
    case DATA_BIGRAM: rc = open_bigram(ds, cfg, err, errlen); break;
    default: rc = seterr(err, errlen, "unknown data source %d", (int)cfg->data);
    }
    ds->needle_share = cfg->needle_share;
    if (rc == 0 && ds->needle_share > 0.0 && cfg->seq_len < needle_span() + 1)
        rc = seterr(err, errlen, "needle_share %g needs seq_len >= %d (the needle and its query)",
                    ds->needle_share, needle_span() + 1);
    if (rc) data_close(ds);
    return rc;
}

void data_close(Dataset *ds) {
    if (!ds) return;
    free(ds->train);
    free(ds->val);
    free(ds->bg_cdf);
    free(ds->bg_trigger);
    memset(ds, 0, sizeof *ds);
}

/* -------------------------------------------------------------- batches */

/* Sequence element k goes where it belongs: with BOS, element k is target
 * k and input k+1 (input 0 is BOS); without, element k is input k and
 * target k-1. So T (bos) or T+1 elements fill one row. */
static void put(int *in, int *tg, int T, int bos, long long k, int tok) {
    if (bos) {
        tg[k] = tok;
        if (k + 1 < T) in[k + 1] = tok;
    } else {
        if (k < T) in[k] = tok;
        if (k >= 1) tg[k - 1] = tok;
    }
}

/* One row from a random window of a corpus split. */
static void corpus_row(const Dataset *ds, Rng *r, const uint32_t *tok, size_t n, int *in, int *tg,
                       int T) {
    size_t w = (size_t)T + (ds->bos ? 0 : 1);
    size_t off = 0;
    /* rng_u64 % m: the bias is below m / 2^64, far under any effect. */
    if (n >= w) off = (size_t)(rng_u64(r) % (uint64_t)(n - w + 1));
    for (size_t k = 0; k < w; k++)
        /* a split shorter than a window (refused by data_open for seq_len,
         * possible for a longer T) wraps rather than reading past the end */
        put(in, tg, T, ds->bos, (long long)k, tok[(off + k) % n]);
}

/* Draw the successor of prev from its row: the first j with u < cdf[j]. */
static int bigram_next(const Dataset *ds, Rng *r, int prev) {
    const float *cdf = ds->bg_cdf + (size_t)prev * (size_t)ds->bg_vocab;
    double u = rng_uniform(r);
    int lo = 0, hi = ds->bg_vocab - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (u < (double)cdf[mid]) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

/* One bigram-backcopy row. x1 is a uniform non-trigger; after a trigger
 * the next token copies the token before the trigger; otherwise it follows
 * the bigram row. Since x1 is no trigger and a copy is always the token
 * before a trigger, two triggers never stand next to each other, so the
 * token being copied is never itself a trigger. */
static void bigram_row(const Dataset *ds, Rng *r, int *in, int *tg, int T) {
    long long w = (long long)T + (ds->bos ? 0 : 1);
    int prev2 = -1, prev = -1;
    for (long long k = 0; k < w; k++) {
        int x;
        if (k == 0) {
            do x = (int)rng_below(r, (uint32_t)ds->bg_vocab);
            while (ds->bg_trigger[x]);
        } else if (ds->bg_trigger[prev]) {
            x = prev2;
        } else {
            x = bigram_next(ds, r, prev);
        }
        put(in, tg, T, ds->bos, k, x);
        prev2 = prev;
        prev = x;
    }
}

static void needle_train_rows(const Dataset *ds, int *inputs, int *targets, int B, int T,
                              unsigned long long seed, long long step);

void data_batch(const Dataset *ds, int *inputs, int *targets, int B, int T, Split split,
                unsigned long long seed, long long step) {
    if (B <= 0 || T <= 0) return;
    size_t bt = (size_t)B * (size_t)T;
    int corpus = ds->source != DATA_BIGRAM;
    const uint32_t *tok = split == SPLIT_TRAIN ? ds->train : ds->val;
    size_t n = split == SPLIT_TRAIN ? ds->n_train : ds->n_val;
    if ((corpus && (!tok || n == 0)) || (!corpus && !ds->bg_cdf)) {
        /* not opened: defined output rather than garbage */
        memset(inputs, 0, bt * sizeof *inputs);
        memset(targets, 0, bt * sizeof *targets);
        return;
    }
    if (split == SPLIT_PROBE) {
        seed = PROBE_SEED;
        step = 0;
    }
    for (int b = 0; b < B; b++) {
        int *in = inputs + (size_t)b * (size_t)T;
        int *tg = targets + (size_t)b * (size_t)T;
        Rng r;
        rng_seed4(&r, seed, (uint64_t)split, (uint64_t)step, (uint64_t)b);
        if (ds->bos) in[0] = ds->bos_id;
        if (corpus) corpus_row(ds, &r, tok, n, in, tg, T);
        else bigram_row(ds, &r, in, tg, T);
    }
    if (split == SPLIT_TRAIN && ds->needle_share > 0.0)
        needle_train_rows(ds, inputs, targets, B, T, seed, step);
}

/* ---------------------------------------------------------------- needle */

#define NEEDLE_SALT 0x6e6565646c65ULL       /* "needle": its own streams */
#define NEEDLE_TRAIN_SALT 0x6e6565647472ULL /* "needtr": training rows' */

/* LEAD KEY MID VALUE: the query's bytes. */
static int query_len(void) {
    return (int)strlen(NEEDLE_LEAD) + NEEDLE_KEY_LEN + (int)strlen(NEEDLE_MID) + NEEDLE_VAL_LEN;
}

int needle_span(void) { return 2 * query_len() + (int)strlen(NEEDLE_TAIL); }

/* LEAD KEY MID VALUE (and TAIL when tail) as row elements from k. */
static void needle_put(int *in, int *tg, int T, long long k, const char *key, const char *val,
                       int tail) {
    const char *part[4] = {NEEDLE_LEAD, key, NEEDLE_MID, val};
    for (int p = 0; p < 4 + tail; p++)
        for (const char *c = p < 4 ? part[p] : NEEDLE_TAIL; *c; c++)
            put(in, tg, T, 1, k++, (unsigned char)*c);
}

/* A key and value from r, the needle at depth and the query into row b. */
static void needle_row(Rng *r, int *in, int *tg, int T, double depth) {
    char key[NEEDLE_KEY_LEN + 1], val[NEEDLE_VAL_LEN + 1];
    for (int i = 0; i < NEEDLE_KEY_LEN; i++) key[i] = (char)('a' + rng_below(r, 26));
    for (int i = 0; i < NEEDLE_VAL_LEN; i++)
        val[i] = (char)('0' + rng_below(r, NEEDLE_VAL_SYMBOLS));
    key[NEEDLE_KEY_LEN] = val[NEEDLE_VAL_LEN] = '\0';
    needle_put(in, tg, T, llround(depth * (double)(T - needle_span())), key, val, 1);
    needle_put(in, tg, T, T - query_len(), key, val, 0);
}

int data_needle_batch(const Dataset *ds, int *inputs, int *targets, int B, int T, double depth,
                      unsigned long long seed, long long step) {
    if ((ds->source != DATA_BROWN && ds->source != DATA_TEXT) || !ds->bos || !ds->val ||
        T < needle_span() + 1 || !(depth >= 0.0 && depth <= 1.0))
        return -1;
    data_batch(ds, inputs, targets, B, T, SPLIT_VAL, seed, step);
    for (int b = 0; b < B; b++) {
        Rng r;
        rng_seed4(&r, seed ^ NEEDLE_SALT, (uint64_t)SPLIT_VAL, (uint64_t)step, (uint64_t)b);
        needle_row(&r, inputs + (size_t)b * T, targets + (size_t)b * T, T, depth);
    }
    return 0;
}

/* Training rows with a needle (needle_share): row b of a train batch
 * carries one when its own stream's first draw is below the share. */
static void needle_train_rows(const Dataset *ds, int *inputs, int *targets, int B, int T,
                              unsigned long long seed, long long step) {
    if (T < needle_span() + 1) return;
    for (int b = 0; b < B; b++) {
        Rng r;
        rng_seed4(&r, seed ^ NEEDLE_TRAIN_SALT, (uint64_t)SPLIT_TRAIN, (uint64_t)step, (uint64_t)b);
        if (rng_uniform(&r) >= ds->needle_share) continue;
        needle_row(&r, inputs + (size_t)b * T, targets + (size_t)b * T, T, rng_uniform(&r));
    }
}

double data_bytes_per_token(const Dataset *ds) {
    return ds->source == DATA_BROWN || ds->source == DATA_TEXT ? 1.0 : 0.0;
}

/* The entropy (nats) of bigram row `row` under the probabilities the
 * sampler draws with: the steps of its float cdf. */
static double row_entropy(const Dataset *ds, int row) {
    const float *cdf = ds->bg_cdf + (size_t)row * (size_t)ds->bg_vocab;
    double h = 0.0, below = 0.0;
    for (int j = 0; j < ds->bg_vocab; j++) {
        double p = (double)cdf[j] - below;
        below = (double)cdf[j];
        if (p > 0.0) h -= p * log(p);
    }
    return h;
}

/* The expected loss of the generator's own conditional at target t of a
 * row: element `prev` came just before it (-1: the target is the row's
 * first element, a uniform non-trigger). */
static double target_entropy(const Dataset *ds, const double *h_row, int prev) {
    if (prev < 0) return log((double)(ds->bg_vocab - ds->bg_triggers));
    return ds->bg_trigger[prev] ? 0.0 : h_row[prev];
}

double data_task_floor(const Dataset *ds, int B, int T, int n_batches, unsigned long long seed) {
    if (ds->source != DATA_BIGRAM || !ds->bg_cdf || B <= 0 || T <= 0 || n_batches <= 0) return NAN;
    size_t bt = (size_t)B * (size_t)T;
    int *in = malloc(bt * sizeof *in), *tg = malloc(bt * sizeof *tg);
    double *h_row = malloc((size_t)ds->bg_vocab * sizeof *h_row);
    double sum = NAN;
    if (in && tg && h_row) {
        for (int r = 0; r < ds->bg_vocab; r++) h_row[r] = row_entropy(ds, r);
        sum = 0.0;
        for (int i = 0; i < n_batches; i++) {
            data_batch(ds, in, tg, B, T, SPLIT_VAL, seed, i);
            /* with BOS, target t is element t and element t-1 is input t;
             * without, target t is element t+1 and element t is input t */
            for (size_t k = 0; k < bt; k++) {
                int t = (int)(k % (size_t)T);
                int prev = !ds->bos ? in[k] : t == 0 ? -1 : in[k];
                sum += target_entropy(ds, h_row, prev);
            }
        }
        sum /= (double)bt * n_batches;
    }
    free(in);
    free(tg);
    free(h_row);
    return sum;
}

int bigram_is_trigger(const Dataset *ds, int tok) {
    if (!ds->bg_trigger || tok < 0 || tok >= ds->bg_vocab) return 0;
    return ds->bg_trigger[tok];
}
