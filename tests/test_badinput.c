/* test_badinput.c: every kind of bad input is refused with the documented
 * exit code and ONE stderr line naming the problem (key, file or shape),
 * and no finished file is touched; numerical faults (NaN in the loss, a
 * gradient or a weight) stop the run as diverged with the data and the
 * last good checkpoint kept. Runs the real binary (tiny preset, -q). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runfile_read.h"
#include "testutil.h"

#define PRESET "experiments/tiny.ini"
#define TRAIN "train --config " PRESET " -q "

static const char *dir;
static char log_path[600];

/* gatelab ARGS, with stdout+stderr into dir/out.log (-q: stdout stays
 * empty on failure, so the log is stderr). */
#define RUN(...) (tu_run(log_path, __VA_ARGS__))

static char *path(const char *name) { return tu_join(dir, name); }

/* The log is exactly one newline-terminated line holding every needle. */
static void assert_one_line(const char *n1, const char *n2) {
    tu_assert_one_line(log_path, n1, n2);
}

/* Garbage that is not HDF5 (deterministic, so a failure reproduces). */
static void write_garbage(const char *p, size_t n) {
    unsigned char *b = malloc(n);
    unsigned x = 12345;
    for (size_t i = 0; i < n; i++) b[i] = (unsigned char)((x = x * 1103515245u + 12345u) >> 16);
    tu_write_file(p, b, n);
    free(b);
}

/* Bytes of a file, to prove it was not touched. */
typedef struct {
    char *b;
    size_t n;
} Snap;
static Snap snap(const char *p) {
    Snap s;
    s.b = tu_slurp(p, &s.n);
    assert_non_null(s.b);
    return s;
}
static void assert_untouched(const char *p, Snap s) {
    size_t n;
    char *b = tu_slurp(p, &n);
    assert_non_null(b);
    assert_int_equal(n, s.n);
    assert_memory_equal(b, s.b, n);
    free(b);
    free(s.b);
}

static int exists(const char *p) { return access(p, F_OK) == 0; }

static void read_run(const char *p, char *status, double *div_step, RunTrain *t) {
    char err[512];
    RunReader *r = runread_open(p, err, sizeof err);
    if (!r) fail_msg("%s", err);
    strcpy(status, runread_meta(r)->status);
    if (div_step && runread_summary(r, "diverged_step", div_step, err, sizeof err) != 0)
        fail_msg("%s", err);
    if (t && runread_train(r, t, err, sizeof err) != 0) fail_msg("%s", err);
    runread_close(r);
}

/* Train losses of two files are bit-identical, step for step. */
static void assert_same_losses(const char *a, const char *b) { tu_assert_same_history(a, b, 60); }

static int setup(void **state) {
    (void)state;
    dir = tu_tmpdir();
    if (!dir) return -1;
    snprintf(log_path, sizeof log_path, "%s/out.log", dir);
    /* an unbroken reference run (60 steps, checkpoints at 20 and 40) */
    return tu_run(log_path, TRAIN "--out %s/ref.h5", dir);
}

/* ---- config ---- */

static void test_unknown_key_in_preset(void **state) {
    (void)state;
    const char *ini = "[model]\nn_layers = 2\nbogus_key = 3\n";
    tu_write_file(path("bad.ini"), ini, strlen(ini));
    assert_int_equal(RUN("train -q --config %s --out %s", path("bad.ini"), path("k.h5")), 2);
    assert_one_line("bogus_key", "bad.ini:3");
    assert_false(exists(path("k.h5")));
}

static void test_unknown_key_via_set(void **state) {
    (void)state;
    assert_int_equal(RUN(TRAIN "--set bogus_key=1 --out %s", path("k.h5")), 2);
    assert_one_line("bogus_key", "--set");
    assert_false(exists(path("k.h5")));
}

static void test_bad_values(void **state) {
    (void)state;
    assert_int_equal(RUN(TRAIN "--set lr=abc --out %s", path("k.h5")), 2);
    assert_one_line("'lr'", "abc");
    assert_int_equal(RUN(TRAIN "--set n_layers=-1 --out %s", path("k.h5")), 2);
    assert_one_line("'n_layers'", "-1");
    assert_int_equal(RUN(TRAIN "--set steps=12x --out %s", path("k.h5")), 2);
    assert_one_line("'steps'", "12x");
    assert_false(exists(path("k.h5")));
}

/* The test-only fault variables (testhook.h): a bad value is refused
 * before anything is written, naming the variable; they are no options. */
static void test_bad_fault_variables(void **state) {
    (void)state;
    tu_fault("NAN_AT", "abc");
    assert_int_equal(RUN(TRAIN "--out %s", path("k.h5")), 2);
    assert_one_line("GATELAB_TEST_NAN_AT", "abc");
    tu_fault("NAN_AT", "3");
    tu_fault("NAN_KIND", "foo");
    assert_int_equal(RUN(TRAIN "--out %s", path("k.h5")), 2);
    assert_one_line("GATELAB_TEST_NAN_KIND", "foo");
    tu_fault_clear();
    tu_fault("KILL_AT", "-1");
    assert_int_equal(RUN(TRAIN "--out %s", path("k.h5")), 2);
    assert_one_line("GATELAB_TEST_KILL_AT", "-1");
    tu_fault_clear();
    assert_false(exists(path("k.h5")));
    assert_int_equal(RUN(TRAIN "--out %s --kill-at-step 3", path("k.h5")), 2);
    assert_one_line("unknown option", "--kill-at-step");
    assert_false(exists(path("k.h5")));
    assert_int_equal(RUN("train --help"), 0);
    char *help = tu_slurp_ok(log_path, NULL);
    assert_null(strstr(help, "nan"));
    assert_null(strstr(help, "kill"));
    assert_null(strstr(help, "inject"));
    free(help);
}

/* ---- data ---- */

static void test_missing_text_file(void **state) {
    (void)state;
    assert_int_equal(RUN(TRAIN "--set data=text --set train_file=/nonexistent/x.txt "
                               "--set val_file=/nonexistent/y.txt --out %s",
                         path("k.h5")),
                     2);
    assert_one_line("/nonexistent/x.txt", NULL);
    assert_false(exists(path("k.h5")));
}

static void test_brown_empty_dir(void **state) {
    (void)state;
    mkdir(path("empty"), 0755);
    assert_int_equal(
        RUN(TRAIN "--set data=brown --set data_dir=%s --out %s", path("empty"), path("k.h5")), 2);
    assert_one_line("empty/train.txt", NULL);
    assert_false(exists(path("k.h5")));
}

/* ---- corrupt files on --resume ---- */

/* A run killed after step 25: RUN.h5 committed at 20, RUN.h5.ckpt at 20. */
static void make_killed(const char *name) {
    tu_fault("KILL_AT", "25");
    int rc = RUN(TRAIN "--out %s", path(name));
    tu_fault_clear();
    assert_int_equal(rc, 128 + 9);
}

static void test_garbage_run_file_on_resume(void **state) {
    (void)state;
    char ck[700];
    make_killed("g.h5");
    snprintf(ck, sizeof ck, "%s.ckpt", path("g.h5"));
    write_garbage(path("g.h5"), 4096);
    Snap a = snap(path("g.h5")), b = snap(ck);
    assert_int_equal(RUN(TRAIN "--out %s --resume", path("g.h5")), 2);
    assert_one_line(path("g.h5"), "not a gatelab run file");
    assert_untouched(path("g.h5"), a);
    assert_untouched(ck, b);
}

static void test_truncated_run_file_on_resume(void **state) {
    (void)state;
    char ck[700];
    make_killed("t.h5");
    snprintf(ck, sizeof ck, "%s.ckpt", path("t.h5"));
    size_t n;
    char *full = tu_slurp(path("t.h5"), &n);
    assert_non_null(full);
    tu_write_file(path("t.h5"), full, n / 2);
    free(full);
    Snap a = snap(path("t.h5")), b = snap(ck);
    assert_int_equal(RUN(TRAIN "--out %s --resume", path("t.h5")), 2);
    assert_one_line(path("t.h5"), NULL);
    assert_untouched(path("t.h5"), a);
    assert_untouched(ck, b);
}

static void test_corrupt_checkpoint_on_resume(void **state) {
    (void)state;
    char ck[700];
    make_killed("c.h5");
    snprintf(ck, sizeof ck, "%s.ckpt", path("c.h5"));
    write_garbage(ck, 3000);
    Snap a = snap(path("c.h5")), b = snap(ck);
    assert_int_equal(RUN(TRAIN "--out %s --resume", path("c.h5")), 2);
    assert_one_line(ck, "checkpoint");
    assert_untouched(path("c.h5"), a);
    assert_untouched(ck, b);

    /* a truncated real checkpoint too */
    make_killed("c2.h5");
    snprintf(ck, sizeof ck, "%s.ckpt", path("c2.h5"));
    size_t n;
    char *full = tu_slurp(ck, &n);
    tu_write_file(ck, full, n / 3);
    free(full);
    a = snap(path("c2.h5"));
    assert_int_equal(RUN(TRAIN "--out %s --resume", path("c2.h5")), 2);
    assert_one_line(ck, NULL);
    assert_untouched(path("c2.h5"), a);
}

/* ---- shapes ---- */

static void test_impossible_shapes(void **state) {
    (void)state;
    assert_int_equal(RUN(TRAIN "--set d_model=30 --set n_heads=4 --out %s", path("k.h5")), 2);
    assert_one_line("d_model 30", "n_heads 4");
    assert_int_equal(RUN(TRAIN "--set pos=learned --set max_pos=16 --out %s", path("k.h5")), 2);
    assert_one_line("seq_len 32", "max_pos 16");
    assert_int_equal(RUN(TRAIN "--set n_heads=4 --set n_kv_heads=3 --out %s", path("k.h5")), 2);
    assert_one_line("n_kv_heads 3", "n_heads 4");
    assert_false(exists(path("k.h5")));
}

/* ---- existing output ---- */

static void test_existing_output_needs_force(void **state) {
    (void)state;
    char cmd[800];
    snprintf(cmd, sizeof cmd, "cp %s %s", path("ref.h5"), path("f.h5"));
    assert_int_equal(system(cmd), 0);
    Snap a = snap(path("f.h5"));
    assert_int_equal(RUN(TRAIN "--out %s", path("f.h5")), 2);
    assert_one_line(path("f.h5"), "--force");
    assert_untouched(path("f.h5"), a);

    /* --resume of a finished run is refused too: the finished file
     * must stay as it is */
    snprintf(cmd, sizeof cmd, "cp %s.ckpt %s.ckpt", path("ref.h5"), path("f.h5"));
    assert_int_equal(system(cmd), 0);
    a = snap(path("f.h5"));
    assert_int_equal(RUN(TRAIN "--out %s --resume", path("f.h5")), 2);
    assert_one_line(path("f.h5"), "finished");
    assert_untouched(path("f.h5"), a);

    /* --force replaces it: a 10-step run */
    assert_int_equal(RUN(TRAIN "--set steps=10 --out %s --force", path("f.h5")), 0);
    RunTrain t;
    char st[32];
    read_run(path("f.h5"), st, NULL, &t);
    assert_string_equal(st, "done");
    assert_int_equal(t.n, 10);
    runread_train_free(&t);
}

/* ---- variants ---- */

static void test_contradictory_variants(void **state) {
    (void)state;
    assert_int_equal(RUN(TRAIN "--set variant=g1-head --set gate_shared=1 --out %s", path("k.h5")),
                     2);
    assert_one_line("head-shared", "gate_shared");
    assert_int_equal(RUN(TRAIN "--set variant=g1-ns --set gate_form=add --out %s", path("k.h5")),
                     2);
    assert_one_line("ns-sigmoid", "gate_form add");
    assert_false(exists(path("k.h5")));
}

/* ---- numerical faults ---- */

/* Divergence at step S: exit 3, status diverged, /summary diverged_step S,
 * the S+1 logged rows kept; then the last good checkpoint still loads:
 * resuming without the fault finishes with losses bit-identical to the
 * unbroken reference. */
static void check_diverged(const char *name, const char *kind, long long s) {
    char at[32];
    snprintf(at, sizeof at, "%lld", s);
    tu_fault("NAN_AT", at);
    tu_fault("NAN_KIND", kind);
    int rc = RUN(TRAIN "--out %s", path(name));
    tu_fault_clear();
    assert_int_equal(rc, 3);
    char st[32];
    double ds;
    RunTrain t;
    read_run(path(name), st, &ds, &t);
    assert_string_equal(st, "diverged");
    assert_int_equal((long long)ds, s);
    assert_int_equal(t.n, (size_t)s + 1);
    assert_int_equal(t.step[s], s);
    for (long long i = 0; i < s; i++) assert_true(t.loss[i] > 0 && t.loss[i] < 10);
    runread_train_free(&t);
    assert_int_equal(RUN(TRAIN "--out %s --resume", path(name)), 0);
    assert_same_losses(path(name), path("ref.h5"));
}

static void test_nan_loss(void **state) {
    (void)state;
    check_diverged("nan.h5", "loss", 5);
}

static void test_inject_loss_grad_weight(void **state) {
    (void)state;
    check_diverged("il.h5", "loss", 25);
    check_diverged("ig.h5", "grad", 25);
    check_diverged("iw.h5", "weight", 33);
}

/* Whether the bytes of file path hold the text needle (an HDF5 string
 * attribute is stored as plain bytes). */
static int file_has(const char *file, const char *needle) {
    size_t n, k = strlen(needle);
    char *b = tu_slurp(file, &n);
    int found = 0;
    for (size_t i = 0; b && !found && i + k <= n; i++) found = !memcmp(b + i, needle, k);
    free(b);
    return found;
}

/* A test hook acts only in a test run (GATELAB_TEST_RUN set, as
 * tests/meson.build sets it): left in a user's environment it is ignored,
 * with a warning naming it, and the run trains as usual. In a test run it
 * acts, says so on stderr, and the run file records it. */
static void test_hooks_need_test_run(void **state) {
    (void)state;
    const char *run = getenv("GATELAB_TEST_RUN");
    char saved[128];
    snprintf(saved, sizeof saved, "%s", run ? run : "meson-test");
    unsetenv("GATELAB_TEST_RUN");
    tu_fault("NAN_AT", "5");
    int rc = RUN(TRAIN "--out %s", path("userenv.h5"));
    tu_fault_clear();
    setenv("GATELAB_TEST_RUN", saved, 1);
    assert_int_equal(rc, 0);
    char *log = tu_slurp_ok(log_path, NULL);
    if (!strstr(log, "ignoring GATELAB_TEST_NAN_AT")) fail_msg("no warning in: %s", log);
    free(log);
    assert_false(file_has(path("userenv.h5"), "GATELAB_TEST_NAN_AT"));
    tu_fault("NAN_AT", "5");
    rc = RUN(TRAIN "--out %s", path("hooked.h5"));
    tu_fault_clear();
    assert_int_equal(rc, 3);
    log = tu_slurp_ok(log_path, NULL);
    if (!strstr(log, "test hooks on (GATELAB_TEST_RUN=") || !strstr(log, "GATELAB_TEST_NAN_AT=5"))
        fail_msg("the hook is not named in: %s", log);
    free(log);
    assert_true(file_has(path("hooked.h5"), "GATELAB_TEST_NAN_AT=5"));
}

/* `gatelab report` lists a diverged run as diverged, with its step. */
static void test_report_shows_diverged(void **state) {
    (void)state;
    mkdir(path("rep"), 0755);
    tu_fault("NAN_AT", "5");
    assert_int_equal(RUN(TRAIN "--out %s/rep/d.h5", dir), 3);
    tu_fault_clear();
    assert_int_equal(RUN("report %s/rep", dir), 0);
    char csv[700];
    snprintf(csv, sizeof csv, "%s/rep/results.csv", dir);
    char *b = tu_slurp(csv, NULL);
    assert_non_null(b);
    char *row = strstr(b, "\nd.h5,");
    if (!row) fail_msg("no row for d.h5 in: %s", b);
    assert_non_null(strstr(row, ",diverged,"));
    char *eol = strchr(row + 1, '\n');
    if (eol) *eol = 0;
    /* diverged_step: the column the header names so */
    int col = 0;
    for (const char *h = b; h < strstr(b, "diverged_step"); h++) col += *h == ',';
    const char *f = row + 1;
    for (int i = 0; i < col && f; i++) f = strchr(f, ',') ? strchr(f, ',') + 1 : NULL;
    assert_non_null(f);
    assert_true(!strncmp(f, "5,", 2) || !strcmp(f, "5"));
    assert_non_null(strstr(b, "diverged_step"));
    free(b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unknown_key_in_preset),
        cmocka_unit_test(test_unknown_key_via_set),
        cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_bad_fault_variables),
        cmocka_unit_test(test_missing_text_file),
        cmocka_unit_test(test_brown_empty_dir),
        cmocka_unit_test(test_garbage_run_file_on_resume),
        cmocka_unit_test(test_truncated_run_file_on_resume),
        cmocka_unit_test(test_corrupt_checkpoint_on_resume),
        cmocka_unit_test(test_impossible_shapes),
        cmocka_unit_test(test_existing_output_needs_force),
        cmocka_unit_test(test_contradictory_variants),
        cmocka_unit_test(test_nan_loss),
        cmocka_unit_test(test_inject_loss_grad_weight),
        cmocka_unit_test(test_report_shows_diverged),
        cmocka_unit_test(test_hooks_need_test_run),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
