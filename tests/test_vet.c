/* test_vet.c: runread_open vets each file in a forked child, so a file
 * that crashes libhdf5 itself (tests/data/hdf5-crash.h5, a fuzzer find:
 * H5HG_read memcpy with a wild length from a corrupt global heap, SIGSEGV
 * when read in-process) is refused with one line and the caller survives;
 * `gatelab report` lists it as unreadable and still reports the good run. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hdf5.h>

#include "report.h"
#include "runfile_read.h"
#include "testutil.h"

static void src_path(char *out, size_t n, const char *rel) {
    snprintf(out, n, "%s/%s", tu_src(), rel);
}

static void test_crash_file_refused(void **s) {
    (void)s;
    char path[1024], err[512] = "";
    src_path(path, sizeof path, "tests/data/hdf5-crash.h5");
    RunReader *r = runread_open(path, err, sizeof err);
    assert_null(r);
    /* the child died by a signal (it is a SIGSEGV in a plain build) */
    assert_non_null(strstr(err, "the HDF5 library crashed reading this file (signal "));
    assert_non_null(strstr(err, "the file is corrupt"));
    assert_non_null(strstr(err, path));
    assert_null(strchr(err, '\n'));
}

/* Vetting passes a good file and leaves ordinary errors to the normal path. */
static void test_good_and_ordinary(void **s) {
    (void)s;
    char path[1024], err[512] = "";
    src_path(path, sizeof path, "tests/fuzz/corpus/runread/tiny-run.h5");
    RunReader *r = runread_open(path, err, sizeof err);
    if (!r) fail_msg("%s", err);
    assert_string_equal(runread_meta(r)->variant, "baseline");
    ProbeRecord p;
    assert_int_equal(runread_probe(r, -1, &p, err, sizeof err), 0);
    assert_int_equal(p.step, 4);
    runread_probe_free(&p);
    runread_close(r);

    src_path(path, sizeof path, "tests/data/text_train.txt");
    assert_null(runread_open(path, err, sizeof err));
    assert_non_null(strstr(err, "not an HDF5 file"));
}

/* A corrupt vlen length in the last probe's normaliser makes HDF5 ask for
 * about 4 GB: the vetting child's address-space bound turns that into a
 * refusal before the caller repeats it in-process. Under a sanitizer the
 * runtime dies on the failed allocation instead: also a refusal. */
static void test_memory_bound(void **s) {
    (void)s;
    char path[1024], err[512] = "";
    src_path(path, sizeof path, "tests/fuzz/regressions/runread/vlen-length-4gb");
    assert_null(runread_open(path, err, sizeof err));
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(err, "the file is corrupt"));
#ifndef __SANITIZE_ADDRESS__
    assert_non_null(strstr(err, "reading this file needs over 1024 MB of memory"));
#endif
    assert_null(strchr(err, '\n'));
}

/* A fuzzer find that makes HDF5 loop: the vetting child's time bound for a
 * 58 KB file is 5 s (wall, and CPU), not the half minute of a large one. */
static void test_time_bound(void **s) {
    (void)s;
    char path[1024], err[512] = "";
    src_path(path, sizeof path, "tests/fuzz/regressions/runread/hdf5-hang");
    assert_null(runread_open(path, err, sizeof err));
    if (!strstr(err, "reading this file hung for 5 s: the file is corrupt") &&
        !strstr(err, "reading this file took over 5 s of CPU: the file is corrupt"))
        fail_msg("got: %s", err);
    assert_null(strchr(err, '\n'));
}

/* An enumerated attribute outside its vocabulary (or unreadable) is
 * refused by name, never read as "unknown". */
static void test_vocabulary(void **s) {
    (void)s;
    static const struct {
        const char *file, *want;
        int at_open; /* refused by runread_open, else by runread_probe */
    } cases[] = {
        {"config-normaliser-outside-vocab",
         "/config/normaliser is \"softmaz\", not one of softmax, softmax1,", 1},
        {"status-outside-vocab", "/status is \"dune\", not one of running, done, diverged", 1},
        {"probe-normaliser-outside-vocab",
         "/probe/step_0000004/normaliser is \"softmaz\", not one of softmax,", 0},
        {"normaliser-heap-address",
         "/probe/step_0000004/normaliser is missing or cannot be read: the file is corrupt", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char path[1024], rel[256], err[512] = "";
        snprintf(rel, sizeof rel, "tests/fuzz/regressions/runread/%s", cases[i].file);
        src_path(path, sizeof path, rel);
        RunReader *r = runread_open(path, err, sizeof err);
        if (cases[i].at_open) {
            assert_null(r);
        } else {
            if (!r) fail_msg("%s: %s", cases[i].file, err);
            ProbeRecord p;
            assert_int_equal(runread_probe(r, -1, &p, err, sizeof err), -1);
            runread_close(r);
        }
        if (!strstr(err, cases[i].want)) fail_msg("%s: got \"%s\"", cases[i].file, err);
        assert_null(strchr(err, '\n'));
    }
}

/* The seed with string attribute where/name (where "/" or a group it
 * creates) set to value, at dir/file; the path in out. */
static void seed_with_attr(const char *dir, const char *file, const char *where, const char *name,
                           const char *value, char *out, size_t outlen) {
    char from[1024];
    src_path(from, sizeof from, "tests/fuzz/corpus/runread/tiny-run.h5");
    snprintf(out, outlen, "%s/%s", dir, file);
    tu_copy_file(from, out);
    hid_t f = H5Fopen(out, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t g = strcmp(where, "/") ? H5Gcreate2(f, where, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)
                                 : H5Gopen2(f, "/", H5P_DEFAULT);
    assert_true(g >= 0);
    if (H5Aexists(g, name) > 0) H5Adelete(g, name);
    hid_t t = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR);
    H5Tset_size(t, H5T_VARIABLE);
    hid_t a = H5Acreate2(g, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(a >= 0);
    assert_true(H5Awrite(a, t, &value) >= 0);
    H5Aclose(a), H5Sclose(sp), H5Tclose(t), H5Gclose(g);
    assert_int_equal(H5Fclose(f), 0);
}

/* The root source and /pretrained input_kind, enumerated too. */
static void test_vocabulary_pretrained(void **s) {
    (void)s;
    const char *dir = tu_tmpdir();
    assert_non_null(dir);
    char path[1024], err[512] = "";
    seed_with_attr(dir, "source.h5", "/", "source", "pretrainedx", path, sizeof path);
    assert_null(runread_open(path, err, sizeof err));
    if (!strstr(err, "/source is \"pretrainedx\", not one of pretrained")) fail_msg("%s", err);
    seed_with_attr(dir, "kind.h5", "/pretrained", "input_kind", "tokenz", path, sizeof path);
    assert_null(runread_open(path, err, sizeof err));
    if (!strstr(err, "/pretrained/input_kind is \"tokenz\", not one of text, tokens"))
        fail_msg("%s", err);
    seed_with_attr(dir, "ok.h5", "/pretrained", "input_kind", "tokens", path, sizeof path);
    RunReader *r = runread_open(path, err, sizeof err);
    if (!r) fail_msg("%s", err);
    runread_close(r);
    assert_int_equal(tu_rmtree(dir), 0);
}

static void test_report_lists_unreadable(void **s) {
    (void)s;
    const char *dir = tu_tmpdir();
    assert_non_null(dir);
    char from[1024], to[1024], err[512] = "";
    src_path(from, sizeof from, "tests/data/hdf5-crash.h5");
    snprintf(to, sizeof to, "%s/bad.h5", dir);
    tu_copy_file(from, to);
    src_path(from, sizeof from, "tests/fuzz/corpus/runread/tiny-run.h5");
    snprintf(to, sizeof to, "%s/good.h5", dir);
    tu_copy_file(from, to);

    if (report_run(dir, NULL, err, sizeof err) != 0) fail_msg("report_run: %s", err);
    snprintf(to, sizeof to, "%s/REPORT.md", dir);
    char *md = tu_slurp(to, NULL);
    assert_non_null(md);
    assert_non_null(strstr(md, "(1 readable, 1 unreadable)"));
    assert_non_null(strstr(md, "- `bad.h5`: unreadable: "));
    assert_non_null(strstr(md, "the HDF5 library crashed reading this file"));
    free(md);
    snprintf(to, sizeof to, "%s/results.csv", dir);
    char *csv = tu_slurp(to, NULL);
    assert_non_null(csv);
    assert_non_null(strstr(csv, "good.h5"));
    assert_null(strstr(csv, "bad.h5"));
    free(csv);
    assert_int_equal(tu_rmtree(dir), 0);
}

int main(void) {
    unsetenv("GATELAB_NO_VET"); /* the point of these tests is the vetting */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crash_file_refused),
        cmocka_unit_test(test_good_and_ordinary),
        cmocka_unit_test(test_memory_bound),
        cmocka_unit_test(test_time_bound),
        cmocka_unit_test(test_vocabulary),
        cmocka_unit_test(test_vocabulary_pretrained),
        cmocka_unit_test(test_report_lists_unreadable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
