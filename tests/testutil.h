/* testutil.h: helpers for tests that run the gatelab binary. */
#ifndef GATELAB_TESTUTIL_H
#define GATELAB_TESTUTIL_H

#include <stddef.h>

#include <hdf5.h>
#include <sys/resource.h>

#include "model.h"

/* Source root and binary from the environment meson sets (GATELAB_SRC,
 * GATELAB_BIN), with fallbacks for running a test by hand from build/. */
const char *tu_src(void);
const char *tu_bin(void);

/* A fresh temporary directory (mkdtemp) under /tmp, in static storage
 * that the next call reuses (copy it to keep it); NULL on failure. */
const char *tu_tmpdir(void);

/* Remove dir and everything under it, restoring write permission first and
 * following no link. 0, or -1 when something could not be removed. */
int tu_rmtree(const char *dir);

/* cmocka group setup and teardown of tests over one tiny trained run:
 * setup makes a fresh directory tu_tiny_dir and trains
 * experiments/tiny.ini into tu_tiny_run (= tu_tiny_dir/run.h5, output in
 * tu_tiny_dir/train.out); teardown removes the directory. */
extern char tu_tiny_dir[64], tu_tiny_run[1024];
int tu_tiny_setup(void **st);
int tu_tiny_teardown(void **st);

/* the fixtures' runfile_* calls' one-line reason (report_fixture.c,
 * runfile_fixture.c) */
extern char rf_err[512];

/* Copy tests/reference/hf/FIXTURE/NAME into DIR/NAME. */
void tu_hf_fixture(const char *dir, const char *fixture, const char *name);

/* Run "gatelab ARGS" (shell words) with stdout+stderr into OUTFILE; returns
 * the exit code, or 128+signal when killed. */
int tu_run(const char *outfile, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Test-only fault injection for the commands run after it (testhook.h):
 * sets GATELAB_TEST_<NAME> (NAN_AT, NAN_KIND, KILL_AT) to value in this
 * process's environment, which tu_run's children inherit. tu_fault_clear
 * unsets all of them. */
void tu_fault(const char *name, const char *value);
void tu_fault_clear(void);

/* 77 (meson's "skipped") after a line saying so when GATELAB_SIMD names
 * a path this CPU lacks, else 0: a test run once per SIMD path returns it
 * from main when it is not 0. */
int tu_simd_skip(void);

/* Whole file into a malloc'd NUL-terminated buffer (NULL if unreadable). */
char *tu_slurp(const char *path, size_t *len);

/* cmocka-assert that two runs finished with the same step sequence (n rows)
 * and bit-identical loss and grad norm at every step; a failure names the
 * first difference. */
void tu_assert_same_history(const char *a, const char *b, size_t n);

/* "DIR/NAME" in one of 8 static buffers used in turn (so a call may hold
 * several at once). */
char *tu_join(const char *dir, const char *name);

/* The same as tu_slurp, but a missing file fails the test (naming it). */
char *tu_slurp_ok(const char *path, size_t *len);
/* The part of Markdown md from the first head to the next "\n## "
 * heading (or the end), malloc'd; NULL when md has no head. */
char *tu_md_section(const char *md, const char *head);

/* Write n bytes (or a string) to path, replacing it; cmocka-fails on error. */
void tu_write_file(const char *path, const void *buf, size_t n);
void tu_write_text(const char *path, const char *text);
/* A scratch directory per test: tu_scratch_setup makes it (a fresh
 * tu_tmpdir) into tu_scratch, tu_scratch_teardown removes it; cmocka's
 * setup and teardown signatures. tu_put writes tu_scratch/name with text
 * and returns the path (a ring of 8 buffers, as tu_join). */
extern char tu_scratch[256];
int tu_scratch_setup(void **state);
/* tu_scratch_setup with HDF5's error printer off, for tests whose files
 * fail inside HDF5 on purpose. */
int tu_scratch_setup_h5quiet(void **state);
/* buf[len] = tu_scratch/name. */
void tu_scratch_path(char *buf, size_t len, const char *name);
int tu_scratch_teardown(void **state);
const char *tu_put(const char *name, const char *text);

/* Copy a file byte for byte; cmocka-fails on error. */
void tu_copy_file(const char *from, const char *to);

/* cmocka-assert that the file at log is exactly one newline-terminated
 * line containing each needle that is not NULL. */
void tu_assert_one_line(const char *log, const char *n1, const char *n2);

/* A full disk, simulated honestly even as root: RLIMIT_FSIZE makes every
 * write past the limit fail with EFBIG (SIGXFSZ ignored), exactly the
 * failure path of ENOSPC inside HDF5's write. Returns the limit before, to restore
 * with setrlimit(RLIMIT_FSIZE, &old). */
struct rlimit tu_limit_file_size(rlim_t bytes);

/* cmocka-assert that msg is one non-empty line (no newline): an error
 * message as gatelab gives it. */
void tu_assert_msg_line(const char *msg);

/* cmocka-assert that path is a PNG figure: non-empty, the PNG signature,
 * over 1000 bytes (a real figure, not a stub). */
void tu_assert_png(const char *path);

/* How many lines of the file at path contain needle (lines up to 511
 * bytes; a longer one counts in pieces). */
long tu_count_needle(const char *path, const char *needle);

/* Count lines in a file that are not empty. */
int tu_count_lines(const char *path);

/* The whole dataset `path` under g read as mtype (elem bytes each) into a
 * calloc'd buffer with one zeroed element past the end (so a text dataset
 * is NUL-terminated); *n = element count. A missing dataset fails the test
 * (naming it). */
void *tu_h5_read(hid_t g, const char *path, hid_t mtype, size_t elem, size_t *n);

/* The same as tu_h5_read, but NULL (and *n untouched) when g has no `path`. */
void *tu_h5_read_opt(hid_t g, const char *path, hid_t mtype, size_t elem, size_t *n);

/* The double attribute `name` of g; a missing one fails the test. */
double tu_h5_attr(hid_t g, const char *name);

/* The model of a PyTorch fixture group g (made by the scripts in
 * tests/reference/, make_fixtures.put_model): its config from the text
 * dataset "config" and every parameter from "params/NAME". Any error, or a
 * parameter of the wrong size, fails the test naming `name`. */
void tu_fx_model(hid_t g, const char *name, Model *m);

/* cmocka-assert every got[i] (i < n) lies within 1e-4 + 1e-3 |want[i]| of
 * the PyTorch fixture's want[i]; a failure names what, i and both values. */
void tu_fx_compare(const char *what, const float *got, const float *want, size_t n);

/* One case group of a PyTorch fixture, opened: the group, its model
 * (tu_fx_model), its "tokens" as N sequences of the model's seq_len T and a
 * run state for N x T. */
typedef struct {
    hid_t g;
    Model m;
    RunState s;
    int *tok;
    int N, T;
} TuFxCase;

/* Open case `name` of fixture file f into c; a missing group, a model that
 * does not build or tokens that are not whole sequences fail the test.
 * tu_fx_case_close frees what it holds and closes the group. */
void tu_fx_case_open(TuFxCase *c, hid_t f, const char *name);
void tu_fx_case_close(TuFxCase *c);

/* The names of the links in g (at most 32, each under 64 bytes), in name
 * order; more, or a group that cannot be listed, fails the test. */
typedef struct {
    char v[32][64];
    int n;
} TuNames;
void tu_h5_names(hid_t g, TuNames *out);

/* Open tests/reference/fixtures/REL under tu_src() and call fn(file, name)
 * for each case group in it (the fixture script's list of cases), in name
 * order; a missing file, or one without a case, fails the test. */
void tu_fx_cases(const char *rel, void (*fn)(hid_t f, const char *name));

/* The model of experiments/tiny.ini with variant=VARIANT, initialised from
 * its seed; any error fails the test. */
void tu_tiny_model(Model *m, const char *variant);

/* Field of the row of file in the column called col of results.csv text
 * csv (a static copy, overwritten by the next call; "" when blank); the
 * test fails when there is no such column or row. */
const char *tu_csv_cell(const char *csv, const char *file, const char *col);

/* experiments/NAME.ini's path: under GATELAB_SRC, else the usual working
 * directories of a test run by hand. */
void tu_preset_path(char *buf, size_t len, const char *name);

/* c = the defaults plus preset NAME; fails the test when it does not load. */
void tu_load_preset(Config *c, const char *name);

/* config_resolve then config_validate; fails the test (naming what) when
 * c is invalid. */
void tu_resolve_ok(Config *c, const char *what);

#endif
