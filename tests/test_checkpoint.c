/* test_checkpoint.c: a run's checkpoint (RUN.h5.ckpt, runfile.h
 * checkpoint_save / checkpoint_load): bit-exact round trips, corrupt and
 * foreign files refused in one line, a save that fails on a full disk
 * leaving the last checkpoint intact and no temporary, and never writing
 * through a link. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "config.h"
#include "runfile.h"
#include "testutil.h"

static void fill_bits(float *a, size_t n, unsigned seed) {
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        uint32_t bits = x & 0xbfffffffu; /* no NaN/inf exponents: values only */
        memcpy(&a[i], &bits, 4);
    }
}

typedef struct {
    size_t n;
    float *p, *m, *v;
} Arrays;

static Arrays arrays(size_t n, unsigned seed) {
    Arrays a = {n, malloc(n * 4), malloc(n * 4), malloc(n * 4)};
    fill_bits(a.p, n, seed);
    fill_bits(a.m, n, seed + 1);
    fill_bits(a.v, n, seed + 2);
    return a;
}

static void arrays_free(Arrays *a) { free(a->p), free(a->m), free(a->v); }

static int save(const char *run, const Arrays *a, long long step, char *err, size_t errlen) {
    CheckpointOut c = {step, 1000 * step, 1.5 * step, a->p, a->m, a->v, a->n};
    return checkpoint_save(run, &c, "[model]\nn_layers = 2\n", err, errlen);
}

/* Load and compare bit for bit with a. */
static void assert_loads(const char *run, const Arrays *a, long long step) {
    Arrays b = arrays(a->n, 99);
    long long st = -1, tok = -1;
    double sec = -1;
    char *text = NULL, err[512] = "";
    int rc = checkpoint_load(run, b.p, b.m, b.v, a->n, &st, &tok, &sec, &text, err, sizeof err);
    if (rc) fail_msg("load: %s", err);
    assert_memory_equal(a->p, b.p, a->n * 4);
    assert_memory_equal(a->m, b.m, a->n * 4);
    assert_memory_equal(a->v, b.v, a->n * 4);
    assert_int_equal(st, step);
    assert_int_equal(tok, 1000 * step);
    assert_true(sec == 1.5 * step);
    assert_string_equal(text, "[model]\nn_layers = 2\n");
    free(text);
    arrays_free(&b);
}

static void test_checkpoint_roundtrip(void **state) {
    (void)state;
    char run[512], tmp[600], err[512] = "";
    tu_scratch_path(run, sizeof run, "ck.h5");
    snprintf(tmp, sizeof tmp, "%s.ckpt.tmp", run);
    assert_false(checkpoint_exists(run));
    Arrays a = arrays(1000, 1);
    assert_int_equal(save(run, &a, 7, err, sizeof err), 0);
    assert_true(checkpoint_exists(run));
    assert_false(access(tmp, F_OK) == 0);
    assert_loads(run, &a, 7);
    /* a second save replaces the first */
    Arrays a2 = arrays(1000, 5);
    assert_int_equal(save(run, &a2, 8, err, sizeof err), 0);
    assert_loads(run, &a2, 8);

    /* n mismatch is refused with the exact message */
    Arrays b = arrays(999, 2);
    assert_int_equal(
        checkpoint_load(run, b.p, b.m, b.v, 999, NULL, NULL, NULL, NULL, err, sizeof err), -1);
    char want[700];
    snprintf(want, sizeof want, "checkpoint %s.ckpt holds 1000 parameters, the model has 999", run);
    assert_string_equal(err, want);
    arrays_free(&b), arrays_free(&a), arrays_free(&a2);
}

static void test_checkpoint_corrupt(void **state) {
    (void)state;
    char run[512], ck[600], err[512];
    tu_scratch_path(run, sizeof run, "bad.h5");
    snprintf(ck, sizeof ck, "%s.ckpt", run);
    Arrays a = arrays(4096, 3);
    assert_int_equal(save(run, &a, 1, err, sizeof err), 0);
    size_t n;
    char *b = tu_slurp_ok(ck, &n);
    /* truncated */
    tu_write_file(ck, b, n / 2);
    char *text = (char *)1;
    assert_int_equal(
        checkpoint_load(run, a.p, a.m, a.v, a.n, NULL, NULL, NULL, &text, err, sizeof err), -1);
    tu_assert_msg_line(err);
    assert_non_null(strstr(err, ck));
    assert_null(text);
    /* garbage */
    memset(b, 0x5a, n);
    tu_write_file(ck, b, n);
    assert_int_equal(
        checkpoint_load(run, a.p, a.m, a.v, a.n, NULL, NULL, NULL, NULL, err, sizeof err), -1);
    tu_assert_msg_line(err);
    assert_non_null(strstr(err, ck));
    /* a run file is not a checkpoint */
    char rpath[512];
    tu_scratch_path(rpath, sizeof rpath, "notckpt");
    snprintf(ck, sizeof ck, "%s.ckpt", rpath);
    Config cfg;
    config_defaults(&cfg);
    RunFile *rf = runfile_create(ck, &cfg, NULL, 0, err, sizeof err);
    assert_non_null(rf);
    assert_int_equal(runfile_close(rf, err, sizeof err), 0);
    assert_int_equal(
        checkpoint_load(rpath, a.p, a.m, a.v, a.n, NULL, NULL, NULL, NULL, err, sizeof err), -1);
    char want[700];
    snprintf(want, sizeof want, "%s: not a gatelab checkpoint (schema attribute)", ck);
    assert_string_equal(err, want);
    free(b);
    arrays_free(&a);
}

/* Files in tu_scratch whose name starts with prefix and ends in ".tmp": the
 * temporaries a writer of prefix left behind. */
static int leftover_tmps(const char *prefix) {
    DIR *d = opendir(tu_scratch);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t k = strlen(e->d_name);
        n += !strncmp(e->d_name, prefix, strlen(prefix)) && k > 4 &&
             !strcmp(e->d_name + k - 4, ".tmp");
    }
    if (d) closedir(d);
    return n;
}

static void test_checkpoint_failed_save(void **state) {
    (void)state;
    char run[512], ck[600], err[512] = "";
    tu_scratch_path(run, sizeof run, "full.h5");
    snprintf(ck, sizeof ck, "%s.ckpt", run);
    Arrays a = arrays(1000, 11);
    assert_int_equal(save(run, &a, 3, err, sizeof err), 0);

    Arrays big = arrays(200000, 12); /* 800 KB per array */
    struct rlimit old = tu_limit_file_size(256 * 1024);
    int rc = save(run, &big, 4, err, sizeof err);
    setrlimit(RLIMIT_FSIZE, &old);
    assert_int_equal(rc, -1);
    tu_assert_msg_line(err);
    assert_non_null(strstr(err, ck));
    assert_int_equal(leftover_tmps("full.h5.ckpt"), 0); /* the partial temporary is gone */
    assert_loads(run, &a, 3);                           /* the old checkpoint is intact */
    arrays_free(&a), arrays_free(&big);
}

/* A checkpoint is written to a fresh temporary: a user's file hard-linked
 * at any name beside it ("RUN.h5.ckpt.tmp" included) keeps
 * its content. */
static void test_checkpoint_never_through_links(void **state) {
    (void)state;
    char run[512], victim[600], link1[600], err[512] = "";
    tu_scratch_path(run, sizeof run, "linked.h5");
    tu_scratch_path(victim, sizeof victim, "victim.txt");
    snprintf(link1, sizeof link1, "%s.ckpt.tmp", run);
    tu_write_text(victim, "precious\n");
    assert_int_equal(link(victim, link1), 0);
    Arrays a = arrays(1000, 21);
    assert_int_equal(save(run, &a, 2, err, sizeof err), 0);
    assert_loads(run, &a, 2);
    size_t n;
    char *got = tu_slurp_ok(victim, &n);
    assert_string_equal(got, "precious\n");
    free(got);
    arrays_free(&a);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_checkpoint_roundtrip),
        cmocka_unit_test(test_checkpoint_corrupt),
        cmocka_unit_test(test_checkpoint_failed_save),
        cmocka_unit_test(test_checkpoint_never_through_links),
    };
    return cmocka_run_group_tests(tests, tu_scratch_setup_h5quiet, tu_scratch_teardown);
}
