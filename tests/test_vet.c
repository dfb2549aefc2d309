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

/* GATELAB_NO_VET cannot switch the vetting off in a release build, even in
 * a test run (env.h): the crashing file is still refused in one line. */
static void test_no_vet_ignored_in_release(void **s) {
    (void)s;
#if TEST_RELEASE_BUILD
    char path[1024], err[512] = "";
    src_path(path, sizeof path, "tests/data/hdf5-crash.h5");
    setenv("GATELAB_TEST_RUN", "test_vet", 1);
    setenv("GATELAB_NO_VET", "1", 1);
    RunReader *r = runread_open(path, err, sizeof err);
    unsetenv("GATELAB_NO_VET");
    assert_null(r);
    assert_non_null(strstr(err, "the HDF5 library crashed reading this file (signal "));
#else
    skip(); /* other build types let the fuzzers switch it off */
#endif
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
        cmocka_unit_test(test_no_vet_ignored_in_release),
        cmocka_unit_test(test_good_and_ordinary),
        cmocka_unit_test(test_report_lists_unreadable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
