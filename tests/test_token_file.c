/* test_token_file.c: .npy token files of every id dtype NumPy and HF
 * tokenizers write (int64 ids that fit are read; the first one out of
 * range is named by its index), shapes too large for the machine or for
 * the file said as such, a fortran_order that is neither True nor False
 * refused, and the warning for ids that imply a far larger vocabulary
 * than the ids that occur. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "token_file.h"
#include "testutil.h"

#define ERRLEN 512

/* A version-1 .npy image in buf: header dict `dict` padded as NumPy pads
 * it, then the n ids as `width`-byte little-endian values. Its size. */
static size_t npy_image(unsigned char *buf, const char *dict, int width, const long long *ids,
                        size_t n) {
    char h[256];
    int k = snprintf(h, sizeof h, "%s", dict);
    while ((10 + k + 1) % 64) h[k++] = ' ';
    h[k++] = '\n';
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)(k & 0xff), buf[9] = (unsigned char)(k >> 8);
    memcpy(buf + 10, h, (size_t)k);
    size_t at = 10 + (size_t)k;
    for (size_t i = 0; i < n; i++)
        for (int b = 0; b < width; b++)
            buf[at++] = (unsigned char)(((unsigned long long)ids[i] >> (8 * b)) & 0xff);
    return at;
}

/* Decode an image; 0 or -1 as token_file_decode, its ids freed. */
static int decode(const unsigned char *buf, size_t len, size_t *n, long long *mx, char *err) {
    uint32_t *tok = NULL;
    int rc = token_file_decode("t.npy", buf, len, &tok, n, mx, err, ERRLEN);
    free(tok);
    return rc;
}

static void test_int64_ids(void **st) {
    (void)st;
    unsigned char buf[1024];
    char err[ERRLEN] = "";
    size_t n;
    long long mx, ids[] = {3, 70000, 1048574, 0};
    const char *i8 = "{'descr': '<i8', 'fortran_order': False, 'shape': (4,), }";
    const char *u8 = "{'descr': '<u8', 'fortran_order': False, 'shape': (2, 2), }";
    assert_int_equal(decode(buf, npy_image(buf, i8, 8, ids, 4), &n, &mx, err), 0);
    assert_int_equal(n, 4);
    assert_int_equal(mx, 1048574);
    assert_int_equal(decode(buf, npy_image(buf, u8, 8, ids, 4), &n, &mx, err), 0);
    ids[2] = 1LL << 40; /* the first id out of range, by its index */
    assert_int_equal(decode(buf, npy_image(buf, i8, 8, ids, 4), &n, &mx, err), -1);
    assert_non_null(strstr(err, "token id 1099511627776 at index 2 is past the largest id"));
    ids[2] = -5;
    assert_int_equal(decode(buf, npy_image(buf, i8, 8, ids, 4), &n, &mx, err), -1);
    assert_non_null(strstr(err, "a negative token id -5 at index 2"));
    assert_null(strchr(err, '\n'));
}

static void test_huge_shapes(void **st) {
    (void)st;
    unsigned char buf[1024];
    char err[ERRLEN] = "";
    size_t n;
    long long mx, ids[] = {1, 2};
    const char *huge =
        "{'descr': '<i8', 'fortran_order': False, 'shape': (4611686018427387904, 8), }";
    assert_int_equal(decode(buf, npy_image(buf, huge, 8, ids, 2), &n, &mx, err), -1);
    assert_non_null(strstr(err, "too large for this machine"));
    assert_null(strstr(err, "does not parse"));
    const char *big = "{'descr': '<i8', 'fortran_order': False, 'shape': (1000000000000000,), }";
    assert_int_equal(decode(buf, npy_image(buf, big, 8, ids, 2), &n, &mx, err), -1);
    assert_non_null(strstr(err, "declares 1000000000000000 ids of 8 bytes, but 16 data bytes"));
}

static void test_fortran_order_strict(void **st) {
    (void)st;
    unsigned char buf[1024];
    char err[ERRLEN] = "";
    size_t n;
    long long mx, ids[] = {1, 2};
    const char *falsey = "{'descr': '<u2', 'fortran_order': Falsey, 'shape': (2,), }";
    assert_int_equal(decode(buf, npy_image(buf, falsey, 2, ids, 2), &n, &mx, err), -1);
    assert_non_null(strstr(err, "fortran_order 'Falsey' is neither True nor False"));
    const char *yes = "{'descr': '<u2', 'fortran_order': True, 'shape': (2,), }";
    assert_int_equal(decode(buf, npy_image(buf, yes, 2, ids, 2), &n, &mx, err), -1);
    assert_non_null(strstr(err, "Fortran-order"));
    const char *no = "{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }";
    assert_int_equal(decode(buf, npy_image(buf, no, 2, ids, 2), &n, &mx, err), 0);
}

/* One id of 1048574 among ids below 50: a warning stating both numbers. */
static void test_sparse_vocab_warned(void **st) {
    (void)st;
    const char *dir = tu_tmpdir();
    char *tr = tu_join(dir, "train.npy"), *va = tu_join(dir, "val.npy"),
         *out = tu_join(dir, "out.txt");
    static unsigned char buf[1 << 14];
    long long ids[400];
    for (int i = 0; i < 400; i++) ids[i] = i % 50;
    const char *d = "{'descr': '<i8', 'fortran_order': False, 'shape': (400,), }";
    tu_write_file(va, buf, npy_image(buf, d, 8, ids, 400));
    ids[7] = 1048574;
    tu_write_file(tr, buf, npy_image(buf, d, 8, ids, 400));
    const char *args = "train --config experiments/tiny.ini --set data=tokens --set "
                       "train_file=%s --set val_file=%s --print-params";
    assert_int_equal(tu_run(out, args, tr, va), 0);
    char *text = tu_slurp(out, NULL);
    assert_non_null(strstr(text, "warning: "));
    assert_non_null(strstr(text, "hold 51 distinct token ids, but their largest id 1048574 "
                                 "makes a vocabulary of 1048575"));
    free(text);
    ids[7] = 49; /* dense ids: no warning */
    tu_write_file(tr, buf, npy_image(buf, d, 8, ids, 400));
    assert_int_equal(tu_run(out, args, tr, va), 0);
    text = tu_slurp(out, NULL);
    assert_null(strstr(text, "warning"));
    free(text);
    tu_rmtree(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_int64_ids),
        cmocka_unit_test(test_huge_shapes),
        cmocka_unit_test(test_fortran_order_strict),
        cmocka_unit_test(test_sparse_vocab_warned),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
