/* test_data.c: the byte, token-file and bigram-backcopy data sources. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_args.h"
#include "data.h"
#include "testutil.h"
#include "reference/task_floor_fixture.h"

#define ERRLEN 512

/* ------------------------------------------------------------ helpers */

/* meson sets GATELAB_SRC; run by hand from the source root it is "." */
static const char *src_root(void) {
    const char *s = getenv("GATELAB_SRC");
    if (s && *s) return s;
    return access("tests/data/text_train.txt", R_OK) == 0 ? "." : "../..";
}

/* data_open that must succeed, showing the reason when it does not. */
static void open_ok(Dataset *ds, const Config *c) {
    char err[ERRLEN] = "";
    int rc = data_open(ds, c, err, sizeof err);
    if (rc) print_error("data_open: %s\n", err);
    assert_int_equal(rc, 0);
}

static void test_path(char *out, size_t len, const char *name) {
    int n = snprintf(out, len, "%s/tests/data/%s", src_root(), name);
    assert_true(n > 0 && (size_t)n < len);
}

/* A config with only what the data layer reads. */
static Config base_config(DataSource src, int bos, int seq_len) {
    Config c;
    memset(&c, 0, sizeof c);
    c.data = src;
    c.bos = bos;
    c.seq_len = seq_len;
    return c;
}

static Config text_config(int bos, int seq_len) {
    Config c = base_config(DATA_TEXT, bos, seq_len);
    test_path(c.train_file, sizeof c.train_file, "text_train.txt");
    test_path(c.val_file, sizeof c.val_file, "text_val.txt");
    return c;
}

static Config tokens_config(int bos) {
    Config c = base_config(DATA_TOKENS, bos, 16);
    test_path(c.train_file, sizeof c.train_file, "tokens_train.u16");
    test_path(c.val_file, sizeof c.val_file, "tokens_val.u16");
    return c;
}

static Config bigram_config(int bos) {
    Config c = base_config(DATA_BIGRAM, bos, 128);
    c.bigram_vocab = 32;
    c.bigram_triggers = 4;
    c.bigram_seed = 7;
    return c;
}

/* True when seq[0..n-1] (as bytes) occurs in text. */
static int occurs(const char *text, size_t tn, const int *seq, size_t n) {
    char *s = malloc(n);
    for (size_t i = 0; i < n; i++) s[i] = (char)seq[i];
    int found = memmem(text, tn, s, n) != NULL;
    free(s);
    return found;
}

/* -------------------------------------------------------------- bytes */

static void test_text_open(void **state) {
    (void)state;
    Config c = text_config(1, 64);
    char err[ERRLEN] = "";
    Dataset ds;
    open_ok(&ds, &c);
    size_t n;
    char *text = tu_slurp_ok(c.train_file, &n);
    assert_int_equal(ds.n_train, n);
    for (size_t i = 0; i < n; i++) assert_int_equal(ds.train[i], (unsigned char)text[i]);
    free(text);
    assert_int_equal(ds.vocab_size, 257);
    assert_int_equal(ds.bos_id, BYTE_BOS);
    assert_int_equal(data_vocab_size(&c, err, sizeof err), 257);
    assert_true(data_bytes_per_token(&ds) == 1.0);
    data_close(&ds);
    assert_null(ds.train);
}

/* With BOS: inputs = [BOS, w0..w_{T-2}], targets = [w0..w_{T-1}] for a
 * window w of the split. */
static void test_bos_on_shift(void **state) {
    (void)state;
    enum { B = 6, T = 40 };
    Config c = text_config(1, T);
    Dataset ds;
    open_ok(&ds, &c);
    size_t tn;
    char *text = tu_slurp_ok(c.train_file, &tn);
    int in[B * T], tg[B * T];
    data_batch(&ds, in, tg, B, T, SPLIT_TRAIN, 1, 3);
    for (int b = 0; b < B; b++) {
        const int *i = in + b * T, *t = tg + b * T;
        assert_int_equal(i[0], BYTE_BOS);
        for (int k = 1; k < T; k++) assert_int_equal(i[k], t[k - 1]);
        for (int k = 0; k < T; k++) assert_true(t[k] >= 0 && t[k] < 256);
        assert_true(occurs(text, tn, t, T));
    }
    free(text);
    data_close(&ds);
}

/* Without BOS: inputs = w[0..T-1], targets = w[1..T]. */
static void test_bos_off_shift(void **state) {
    (void)state;
    enum { B = 6, T = 40 };
    Config c = text_config(0, T);
    Dataset ds;
    open_ok(&ds, &c);
    size_t tn;
    char *text = tu_slurp_ok(c.train_file, &tn);
    int in[B * T], tg[B * T], w[T + 1];
    data_batch(&ds, in, tg, B, T, SPLIT_TRAIN, 1, 3);
    for (int b = 0; b < B; b++) {
        const int *i = in + b * T, *t = tg + b * T;
        for (int k = 0; k + 1 < T; k++) assert_int_equal(i[k + 1], t[k]);
        for (int k = 0; k < T; k++) {
            assert_true(i[k] < 256);
            w[k] = i[k];
        }
        w[T] = t[T - 1];
        assert_true(occurs(text, tn, w, T + 1));
    }
    free(text);
    data_close(&ds);
}

static int same(const int *a, const int *b, size_t n) { return memcmp(a, b, n * sizeof *a) == 0; }

static void test_determinism(void **state) {
    (void)state;
    enum { B = 4, T = 32, N = B * T };
    Config c = text_config(1, T);
    Dataset ds;
    open_ok(&ds, &c);
    int a_in[N], a_tg[N], b_in[N], b_tg[N];
    data_batch(&ds, a_in, a_tg, B, T, SPLIT_TRAIN, 11, 5);
    data_batch(&ds, b_in, b_tg, B, T, SPLIT_TRAIN, 11, 5);
    assert_true(same(a_in, b_in, N) && same(a_tg, b_tg, N));
    data_batch(&ds, b_in, b_tg, B, T, SPLIT_TRAIN, 11, 6);
    assert_false(same(a_tg, b_tg, N));
    data_batch(&ds, b_in, b_tg, B, T, SPLIT_TRAIN, 12, 5);
    assert_false(same(a_tg, b_tg, N));
    /* a row depends on its own index only: a bigger batch extends it */
    int c_in[2 * N], c_tg[2 * N];
    data_batch(&ds, c_in, c_tg, 2 * B, T, SPLIT_TRAIN, 11, 5);
    assert_true(same(a_tg, c_tg, N));
    /* val draws from the val text */
    size_t vn;
    char *val = tu_slurp_ok(c.val_file, &vn);
    data_batch(&ds, b_in, b_tg, B, T, SPLIT_VAL, 11, 5);
    for (int b = 0; b < B; b++) assert_true(occurs(val, vn, b_tg + b * T, T));
    free(val);
    data_close(&ds);
}

static void test_probe_fixed(void **state) {
    (void)state;
    enum { B = 8, T = 32, N = B * T };
    Config c = text_config(1, T);
    Dataset ds;
    open_ok(&ds, &c);
    int a_in[N], a_tg[N], b_in[N], b_tg[N];
    data_batch(&ds, a_in, a_tg, B, T, SPLIT_PROBE, 1, 0);
    data_batch(&ds, b_in, b_tg, B, T, SPLIT_PROBE, 987654321ULL, 4242);
    assert_true(same(a_in, b_in, N) && same(a_tg, b_tg, N));
    size_t vn;
    char *val = tu_slurp_ok(c.val_file, &vn);
    for (int b = 0; b < B; b++) {
        assert_int_equal(a_in[b * T], BYTE_BOS);
        assert_true(occurs(val, vn, a_tg + b * T, T));
    }
    free(val);
    /* the probe set is not just the val batch of some seed */
    data_batch(&ds, b_in, b_tg, B, T, SPLIT_VAL, 1, 0);
    assert_false(same(a_tg, b_tg, N));
    data_close(&ds);
}

/* -------------------------------------------------------------- errors */

static void test_missing_file(void **state) {
    (void)state;
    Config c = base_config(DATA_BROWN, 1, 64);
    strcpy(c.data_dir, "/nonexistent-gatelab/brown");
    char err[ERRLEN] = "";
    Dataset ds;
    assert_int_equal(data_open(&ds, &c, err, sizeof err), -1);
    assert_string_equal(err, "/nonexistent-gatelab/brown/"
                             "train.txt: cannot open: No such file or directory (run "
                             "data/fetch_brown.sh)");
    assert_null(ds.train);
    assert_null(ds.val);
    data_close(&ds);

    c = text_config(1, 64);
    strcpy(c.val_file, "/nonexistent-gatelab/val.txt");
    assert_int_equal(data_open(&ds, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent-gatelab/val.txt: cannot open"));
    assert_null(ds.train); /* the train split was freed again */

    c.val_file[0] = 0;
    assert_int_equal(data_open(&ds, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "val_file"));
}

static void test_too_short(void **state) {
    (void)state;
    Config c = text_config(1, 1000); /* train is 2.5 KB, val 651 B */
    char err[ERRLEN] = "";
    Dataset ds;
    assert_int_equal(data_open(&ds, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "text_val.txt"));
    assert_non_null(strstr(err, "too short"));
}

/* -------------------------------------------------------------- tokens */

static void test_tokens(void **state) {
    (void)state;
    char err[ERRLEN] = "";
    Dataset ds;
    /* train[i] = 7i mod 50 (300 ids), val[i] = 3i mod 61 (80 ids) */
    Config c = tokens_config(0);
    assert_int_equal(data_vocab_size(&c, err, sizeof err), 61);
    open_ok(&ds, &c);
    assert_int_equal(ds.vocab_size, 61);
    assert_int_equal(ds.n_train, 300);
    assert_int_equal(ds.n_val, 80);
    for (int i = 0; i < 300; i++) assert_int_equal(ds.train[i], (7 * i) % 50);
    for (int i = 0; i < 80; i++) assert_int_equal(ds.val[i], (3 * i) % 61);
    assert_true(data_bytes_per_token(&ds) == 0.0);
    enum { B = 4, T = 16 };
    int in[B * T], tg[B * T];
    data_batch(&ds, in, tg, B, T, SPLIT_TRAIN, 3, 1);
    for (int k = 0; k < B * T; k++) assert_int_equal(tg[k], (in[k] + 7) % 50);
    data_close(&ds);

    /* BOS takes the id after the largest */
    c = tokens_config(1);
    assert_int_equal(data_vocab_size(&c, err, sizeof err), 62);
    open_ok(&ds, &c);
    assert_int_equal(ds.bos_id, 61);
    data_batch(&ds, in, tg, B, T, SPLIT_VAL, 3, 1);
    for (int b = 0; b < B; b++) {
        assert_int_equal(in[b * T], 61);
        for (int k = 1; k < T; k++) assert_int_equal(tg[b * T + k], (tg[b * T + k - 1] + 3) % 61);
    }
    data_close(&ds);

    /* a larger vocab_size is kept; BOS is its last id */
    c.vocab_size = 100;
    assert_int_equal(data_vocab_size(&c, err, sizeof err), 100);
    open_ok(&ds, &c);
    assert_int_equal(ds.vocab_size, 100);
    assert_int_equal(ds.bos_id, 99);
    data_close(&ds);
}

/* The config reads no data: with data=tokens and no vocab_size the vocab
 * stays open through config_from_args, even when the token files are
 * missing; data_fill_vocab reads it, or names the missing file. */
static void test_config_reads_no_data(void **state) {
    (void)state;
    char err[ERRLEN] = "", tr[1100], va[1100], path[1024];
    Config t = tokens_config(0);
    snprintf(tr, sizeof tr, "train_file=%s", t.train_file);
    snprintf(va, sizeof va, "val_file=%s", t.val_file);
    char *sets[] = {"data=tokens", tr, va, "bos=0"};
    snprintf(path, sizeof path, "%s/experiments/tiny.ini", src_root());
    Config c;
    if (config_from_args(&c, path, sets, 4, err, sizeof err) != 0) fail_msg("%s", err);
    assert_int_equal(c.vocab_size, 0);
    assert_int_equal(data_fill_vocab(&c, err, sizeof err), 0);
    assert_int_equal(c.vocab_size, 61);
    assert_int_equal(data_fill_vocab(&c, err, sizeof err), 0); /* a set one is kept */
    assert_int_equal(c.vocab_size, 61);

    char *gone[] = {"data=tokens", "train_file=/nonexistent/gatelab/train.u16",
                    "val_file=/nonexistent/gatelab/val.u16"};
    if (config_from_args(&c, path, gone, 3, err, sizeof err) != 0) fail_msg("%s", err);
    assert_int_equal(c.vocab_size, 0);
    assert_int_equal(data_fill_vocab(&c, err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/gatelab/"));
}

static void test_tokens_refused(void **state) {
    (void)state;
    char err[ERRLEN] = "";
    Dataset ds;
    /* val holds ids up to 60; the first >= 50 is 51 at index 17 */
    Config c = tokens_config(0);
    c.vocab_size = 50;
    assert_int_equal(data_vocab_size(&c, err, sizeof err), -1);
    assert_int_equal(data_open(&ds, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "tokens_val.u16: token 51 at index 17"));
    assert_null(ds.train);

    /* with BOS the last id is reserved: 61 ids + BOS need 62 */
    c = tokens_config(1);
    c.vocab_size = 61;
    assert_int_equal(data_open(&ds, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "token 60"));
    assert_non_null(strstr(err, "BOS"));

    /* an odd byte count */
    char dir[64], odd[96];
    const char *t = tu_tmpdir();
    assert_non_null(t);
    snprintf(dir, sizeof dir, "%s", t);
    snprintf(odd, sizeof odd, "%s/odd.u16", dir);
    FILE *f = fopen(odd, "wb");
    assert_non_null(f);
    fwrite("\x01\x00\x02", 1, 3, f);
    fclose(f);
    c = tokens_config(0);
    strcpy(c.train_file, odd);
    assert_int_equal(data_open(&ds, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, odd));
    assert_non_null(strstr(err, "odd byte count"));
    assert_int_equal(tu_rmtree(dir), 0);
}

/* A .npy file at path: dtype descr, the given ids as `width`-byte
 * little-endian values (header padded to 64 bytes, as NumPy writes it). */
static void write_npy(const char *path, const char *descr, int width, const long long *ids,
                      size_t n) {
    char h[128];
    int k = snprintf(h, sizeof h, "{'descr': '%s', 'fortran_order': False, 'shape': (%zu,), }",
                     descr, n);
    while ((10 + k + 1) % 64) h[k++] = ' ';
    h[k++] = '\n';
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fwrite("\x93NUMPY\x01\x00", 1, 8, f);
    fputc(k & 0xff, f), fputc(k >> 8, f);
    fwrite(h, 1, (size_t)k, f);
    for (size_t i = 0; i < n; i++)
        for (int b = 0; b < width; b++)
            fputc((int)((unsigned long long)ids[i] >> (8 * b)) & 0xff, f);
    fclose(f);
}

/* .npy token files: uint32 ids past 65535 load as they are and set the
 * vocabulary; int32 and uint16 too; a dtype that is not ids, a header
 * that does not match its data, negative ids and a text file given as
 * tokens are refused in one line naming the file. */
static void test_tokens_npy(void **state) {
    (void)state;
    char err[ERRLEN] = "", tr[96], va[96], txt[96];
    const char *t = tu_tmpdir();
    assert_non_null(t);
    snprintf(tr, sizeof tr, "%s/train.npy", t);
    snprintf(va, sizeof va, "%s/val.npy", t);
    snprintf(txt, sizeof txt, "%s/words.txt", t);
    long long ids[40];
    for (int i = 0; i < 40; i++) ids[i] = 70000 + (i * 7) % 31; /* Llama 3 sized ids */
    write_npy(tr, "<u4", 4, ids, 40);
    write_npy(va, "<i4", 4, ids, 20);
    Config c = base_config(DATA_TOKENS, 1, 16);
    strcpy(c.train_file, tr), strcpy(c.val_file, va);
    assert_int_equal(data_vocab_size(&c, err, sizeof err), 70030 + 1 + 1);
    Dataset ds;
    open_ok(&ds, &c);
    assert_int_equal(ds.n_train, 40);
    assert_int_equal(ds.n_val, 20);
    assert_int_equal(ds.train[39], ids[39]);
    assert_int_equal(ds.bos_id, 70031);
    int in[16], tg[16];
    data_batch(&ds, in, tg, 1, 16, SPLIT_TRAIN, 1, 0);
    assert_int_equal(in[0], 70031);
    for (int k = 1; k < 16; k++) assert_true(in[k] >= 70000 && in[k] < 70031);
    data_close(&ds);
    write_npy(va, "<u2", 2, (long long[]){1, 2, 3, 65535}, 4); /* too short, but read */
    assert_int_equal(data_vocab_size(&c, err, sizeof err), 70030 + 1 + 1);

    write_npy(va, "<f4", 4, ids, 20);
    assert_int_equal(data_open(&ds, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, va));
    assert_non_null(strstr(err, "dtype '<f4'"));
    write_npy(va, "<i4", 4, (long long[]){5, -3}, 2);
    assert_int_equal(data_open(&ds, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "negative token id -3 at index 1"));
    write_npy(va, "<u4", 4, ids, 20);
    assert_int_equal(truncate(va, 128 + 4 * 19), 0); /* one id short */
    assert_int_equal(data_open(&ds, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "declares 20 ids of 4 bytes, but 76 data bytes"));

    FILE *f = fopen(txt, "w");
    assert_non_null(f);
    fputs("The quick brown fox jumps over the lazy dog.\nAgain and again.\n", f);
    fclose(f);
    strcpy(c.val_file, txt);
    assert_int_equal(data_open(&ds, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, txt));
    assert_non_null(strstr(err, "looks like a text file"));
    assert_null(strchr(err, '\n'));
    assert_int_equal(tu_rmtree(t), 0);
}

/* -------------------------------------------------------------- bigram */

static double row_prob(const Dataset *ds, int prev, int next) {
    const float *cdf = ds->bg_cdf + (size_t)prev * (size_t)ds->bg_vocab;
    return next == 0 ? cdf[0] : (double)cdf[next] - (double)cdf[next - 1];
}

static void test_bigram_setup(void **state) {
    (void)state;
    Config c = bigram_config(1);
    char err[ERRLEN] = "";
    Dataset ds;
    assert_int_equal(data_vocab_size(&c, err, sizeof err), 33);
    open_ok(&ds, &c);
    assert_int_equal(ds.vocab_size, 33);
    assert_int_equal(ds.bos_id, 32);
    int nt = 0;
    for (int t = 0; t < 32; t++) nt += bigram_is_trigger(&ds, t);
    assert_int_equal(nt, 4);
    assert_int_equal(bigram_is_trigger(&ds, 32), 0);
    assert_int_equal(bigram_is_trigger(&ds, -1), 0);
    /* every row is a distribution: non-decreasing, ends at exactly 1 */
    for (int r = 0; r < 32; r++) {
        const float *cdf = ds.bg_cdf + (size_t)r * 32;
        int support = 0;
        for (int j = 0; j < 32; j++) {
            if (j) assert_true(cdf[j] >= cdf[j - 1]);
            support += row_prob(&ds, r, j) > 0;
        }
        assert_true(cdf[31] == 1.0f);
        assert_true(support >= 1 && support <= 8);
    }
    assert_true(data_bytes_per_token(&ds) == 0.0);
    data_close(&ds);

    /* the same seed builds the same chain; another seed another one */
    Dataset a, b;
    open_ok(&a, &c);
    c.bigram_seed = 8;
    open_ok(&b, &c);
    assert_false(memcmp(a.bg_cdf, b.bg_cdf, 32 * 32 * sizeof(float)) == 0);
    data_close(&b);
    c.bigram_seed = 7;
    open_ok(&b, &c);
    assert_true(memcmp(a.bg_cdf, b.bg_cdf, 32 * 32 * sizeof(float)) == 0);
    data_close(&a);
    data_close(&b);

    c.bigram_triggers = 32;
    assert_int_equal(data_open(&ds, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "bigram_triggers"));
    c.bigram_triggers = 4;
    c.bigram_vocab = 1;
    assert_int_equal(data_vocab_size(&c, err, sizeof err), -1);
    assert_non_null(strstr(err, "bigram_vocab"));
}

/* The backcopy rule, the support of each transition, and the statistics
 * of the non-trigger transitions against their rows. */
static void test_bigram_sequences(void **state) {
    (void)state;
    enum { V = 32, B = 32, T = 128, STEPS = 40 };
    Config c = bigram_config(1);
    Dataset ds;
    open_ok(&ds, &c);
    static int in[B * T], tg[B * T];
    static long counts[V][V];
    long copies = 0;
    memset(counts, 0, sizeof counts);
    for (int s = 0; s < STEPS; s++) {
        data_batch(&ds, in, tg, B, T, SPLIT_TRAIN, 5, s);
        for (int b = 0; b < B; b++) {
            const int *x = tg + b * T; /* the sequence after BOS */
            assert_int_equal(in[b * T], V);
            for (int k = 1; k < T; k++) assert_int_equal(in[b * T + k], x[k - 1]);
            assert_false(bigram_is_trigger(&ds, x[0]));
            for (int k = 0; k < T; k++) assert_true(x[k] >= 0 && x[k] < V);
            for (int k = 1; k < T; k++) {
                if (bigram_is_trigger(&ds, x[k - 1])) {
                    assert_true(k >= 2);
                    assert_int_equal(x[k], x[k - 2]);
                    assert_false(bigram_is_trigger(&ds, x[k]));
                    copies++;
                } else {
                    assert_true(row_prob(&ds, x[k - 1], x[k]) > 0.0);
                    counts[x[k - 1]][x[k]]++;
                }
            }
        }
    }
    assert_true(copies > 100); /* the rule was exercised */
    /* Pearson chi-square over every row's support against the cdf: with
     * df cells of freedom it sits near df; 5 standard deviations above is
     * a loose bound that still catches a skewed draw or a shifted column. */
    double chi2 = 0.0;
    int df = 0, rows_checked = 0;
    for (int r = 0; r < V; r++) {
        long n = 0;
        for (int j = 0; j < V; j++) n += counts[r][j];
        if (n < 2000) continue;
        rows_checked++;
        df--;
        for (int j = 0; j < V; j++) {
            double e = row_prob(&ds, r, j) * (double)n;
            if (e <= 0.0) continue;
            chi2 += (counts[r][j] - e) * (counts[r][j] - e) / e;
            df++;
        }
    }
    assert_true(df > 20);
    if (chi2 > df + 5.0 * sqrt(2.0 * df)) print_error("chi2 %.1f with %d df\n", chi2, df);
    assert_true(chi2 < df + 5.0 * sqrt(2.0 * df));
    assert_true(rows_checked >= 10);
    data_close(&ds);
}

static void test_bigram_determinism(void **state) {
    (void)state;
    enum { B = 4, T = 64, N = B * T };
    Config c = bigram_config(0);
    Dataset ds;
    open_ok(&ds, &c);
    int a_in[N], a_tg[N], b_in[N], b_tg[N];
    data_batch(&ds, a_in, a_tg, B, T, SPLIT_TRAIN, 9, 2);
    data_batch(&ds, b_in, b_tg, B, T, SPLIT_TRAIN, 9, 2);
    assert_true(same(a_in, b_in, N) && same(a_tg, b_tg, N));
    /* bos off: inputs start with the first token, targets shift by one */
    for (int b = 0; b < B; b++) {
        assert_false(bigram_is_trigger(&ds, a_in[b * T]));
        for (int k = 0; k + 1 < T; k++) assert_int_equal(a_in[b * T + k + 1], a_tg[b * T + k]);
        for (int k = 0; k < T; k++) assert_true(a_in[b * T + k] < 32);
    }
    data_batch(&ds, b_in, b_tg, B, T, SPLIT_TRAIN, 9, 3);
    assert_false(same(a_tg, b_tg, N));
    data_batch(&ds, b_in, b_tg, B, T, SPLIT_VAL, 9, 2);
    assert_false(same(a_tg, b_tg, N));
    data_batch(&ds, a_in, a_tg, B, T, SPLIT_PROBE, 1, 0);
    data_batch(&ds, b_in, b_tg, B, T, SPLIT_PROBE, 77, 500);
    assert_true(same(a_in, b_in, N) && same(a_tg, b_tg, N));
    data_close(&ds);
}

/* A bigram generator built by hand: V tokens, rows of probabilities
 * (row-major V x V) turned into the sampler's cdf, trigger[V]. */
static void hand_bigram(Dataset *ds, int v, const float *prob, const unsigned char *trigger,
                        int bos) {
    memset(ds, 0, sizeof *ds);
    ds->source = DATA_BIGRAM;
    ds->bos = bos;
    ds->bos_id = v;
    ds->vocab_size = v + 1;
    ds->bg_vocab = v;
    ds->bg_cdf = malloc((size_t)v * v * sizeof *ds->bg_cdf);
    ds->bg_trigger = malloc((size_t)v);
    assert_non_null(ds->bg_cdf);
    assert_non_null(ds->bg_trigger);
    for (int r = 0; r < v; r++) {
        float acc = 0;
        for (int j = 0; j < v; j++) ds->bg_cdf[r * v + j] = acc += prob[r * v + j];
        ds->bg_trigger[r] = trigger[r];
        ds->bg_triggers += trigger[r];
    }
}

/* The task floor by hand. No trigger, both rows (1/4, 3/4): every
 * prediction but a row's first has entropy H = -(1/4 ln 1/4 + 3/4 ln 3/4);
 * the first (a uniform non-trigger) has ln 2. With BOS the first element
 * is a target: (ln 2 + (T - 1) H) / T; without, every target has H. With
 * token 2 a trigger and rows 0, 1 = (1/4, 1/4, 1/2): ln 2 for the first,
 * 0 after a trigger (a copy), H' = 1/2 ln 4 + 1/2 ln 2 otherwise, counted
 * over the batch. Corpus data: NaN. */
static void test_task_floor(void **state) {
    (void)state;
    const float two[4] = {0.25f, 0.75f, 0.25f, 0.75f};
    const unsigned char none[2] = {0, 0};
    Dataset ds;
    double h = -(0.25 * log(0.25) + 0.75 * log(0.75));
    enum { B = 3, T = 8 };
    hand_bigram(&ds, 2, two, none, 1);
    assert_true(fabs(data_task_floor(&ds, B, T, 2, 7) - (log(2) + (T - 1) * h) / T) < 1e-12);
    ds.bos = 0;
    assert_true(fabs(data_task_floor(&ds, B, T, 2, 7) - h) < 1e-12);
    data_close(&ds);

    const float three[9] = {0.25f, 0.25f, 0.5f, 0.25f, 0.25f, 0.5f, 1.0f, 0.0f, 0.0f};
    const unsigned char trig[3] = {0, 0, 1};
    hand_bigram(&ds, 3, three, trig, 1);
    int in[B * T], tg[B * T], after = 0;
    for (int step = 0; step < 4; step++) {
        data_batch(&ds, in, tg, B, T, SPLIT_VAL, 11, step);
        for (int k = 0; k < B * T; k++) after += k % T > 0 && in[k] == 2;
    }
    assert_true(after > 0); /* the case is exercised */
    double h3 = 0.5 * log(4.0) + 0.5 * log(2.0);
    double want = (4 * B * log(2) + (4 * B * (T - 1) - after) * h3) / (4 * B * T);
    assert_true(fabs(data_task_floor(&ds, B, T, 4, 11) - want) < 1e-12);
    assert_true(isnan(data_task_floor(&ds, B, T, 0, 11)));
    data_close(&ds);
    memset(&ds, 0, sizeof ds);
    ds.source = DATA_BROWN;
    assert_true(isnan(data_task_floor(&ds, B, T, 4, 11)));
}

/* The floor is what the generator's own predictor scores on average: on
 * small.ini's task the mean of -ln p(target | context) over many val
 * batches (the realised loss) lies within 0.01 nats of it. */
static void test_task_floor_realised(void **state) {
    (void)state;
    Config cfg;
    Dataset ds;
    char err[512];
    char path[1024];
    snprintf(path, sizeof path, "%s/experiments/small.ini", tu_src());
    assert_int_equal(config_from_args(&cfg, path, NULL, 0, err, sizeof err), 0);
    assert_int_equal(data_open(&ds, &cfg, err, sizeof err), 0);
    enum { B = 16, T = 64, NB = 40 };
    static int in[B * T], tg[B * T];
    double sum = 0;
    int v = ds.bg_vocab;
    for (int s = 0; s < NB; s++) {
        data_batch(&ds, in, tg, B, T, SPLIT_VAL, 99, s);
        for (int k = 0; k < B * T; k++) {
            int prev = ds.bos && k % T == 0 ? -1 : in[k];
            if (prev < 0) sum += log((double)(v - ds.bg_triggers));
            else if (!ds.bg_trigger[prev]) {
                const float *c = ds.bg_cdf + (size_t)prev * v;
                sum -= log((double)c[tg[k]] - (tg[k] ? (double)c[tg[k] - 1] : 0.0));
            }
        }
    }
    double realised = sum / ((double)NB * B * T), floor = data_task_floor(&ds, B, T, NB, 99);
    assert_true(floor > 0.5 && floor < 2.0);
    assert_true(fabs(realised - floor) < 0.01);
    data_close(&ds);
}

/* The floor of small.ini's task on its val batches (B 32, T 64, 8
 * batches, train_loop.c's EVAL_SEED 0xE7A1) against the independent Python
 * computation of tests/reference/make_task_floor_fixture.py. */
static void test_task_floor_reference(void **state) {
    (void)state;
    Config cfg;
    Dataset ds;
    char err[512], path[1024];
    snprintf(path, sizeof path, "%s/experiments/small.ini", tu_src());
    assert_int_equal(config_from_args(&cfg, path, NULL, 0, err, sizeof err), 0);
    assert_int_equal(data_open(&ds, &cfg, err, sizeof err), 0);
    double floor = data_task_floor(&ds, cfg.batch_size, cfg.seq_len, cfg.eval_batches, 0xE7A1ULL);
    if (fabs(floor - TASK_FLOOR_SMALL) > 1e-9)
        fail_msg("task floor %.12f, Python says %.12f", floor, TASK_FLOOR_SMALL);
    data_close(&ds);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_open),
        cmocka_unit_test(test_task_floor),
        cmocka_unit_test(test_task_floor_realised),
        cmocka_unit_test(test_task_floor_reference),
        cmocka_unit_test(test_bos_on_shift),
        cmocka_unit_test(test_bos_off_shift),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_probe_fixed),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_too_short),
        cmocka_unit_test(test_tokens),
        cmocka_unit_test(test_config_reads_no_data),
        cmocka_unit_test(test_tokens_refused),
        cmocka_unit_test(test_tokens_npy),
        cmocka_unit_test(test_bigram_setup),
        cmocka_unit_test(test_bigram_sequences),
        cmocka_unit_test(test_bigram_determinism),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
