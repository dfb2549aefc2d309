/* test_resume.c: kill a training run, resume it, and require every logged
 * loss to be bit-identical to an unbroken run with the same seeds. Also
 * Ctrl-C (SIGINT) saves a checkpoint and exits cleanly. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runfile_read.h"
#include "testutil.h"

#define PRESET "experiments/tiny.ini"
#define STEPS "--set steps=80 --set eval_every=20 --set ckpt_every=20 -q"

static const char *dir;

/* Same step sequence and bit-identical loss and grad norm at every step. */
static void assert_same_history(const char *a, const char *b) { tu_assert_same_history(a, b, 80); }

static int setup(void **state) {
    (void)state;
    dir = tu_tmpdir();
    char out[512];
    snprintf(out, sizeof out, "%s/ref.log", dir);
    /* the unbroken reference run */
    return tu_run(out, "train --config " PRESET " " STEPS " --out %s/ref.h5", dir);
}

/* A hard kill between checkpoints (after step 47 is logged, the last
 * checkpoint at 40): resume recomputes steps 40..47 and everything after. */
static void test_kill_and_resume_bit_identical(void **state) {
    (void)state;
    char out[512], run[512];
    snprintf(out, sizeof out, "%s/kill.log", dir);
    snprintf(run, sizeof run, "%s/killed.h5", dir);
    tu_fault("KILL_AT", "47");
    int rc = tu_run(out, "train --config " PRESET " " STEPS " --out %s", run);
    tu_fault_clear();
    assert_int_equal(rc, 128 + SIGKILL);
    char ck[600];
    snprintf(ck, sizeof ck, "%s.ckpt", run);
    assert_int_equal(access(ck, F_OK), 0);
    rc = tu_run(out, "train --config " PRESET " " STEPS " --out %s --resume", run);
    assert_int_equal(rc, 0);
    char ref[512];
    snprintf(ref, sizeof ref, "%s/ref.h5", dir);
    assert_same_history(ref, run);
}

/* Start "gatelab train" on PRESET in the background (the tests signal it
 * themselves), evaluating and checkpointing every `every` steps; extra is
 * one more argument, or NULL for none. The child's stderr is discarded. */
static pid_t spawn_train(const char *run, const char *steps, const char *every, const char *extra) {
    char s_steps[64], s_eval[64], s_ckpt[64];
    snprintf(s_steps, sizeof s_steps, "steps=%s", steps);
    snprintf(s_eval, sizeof s_eval, "eval_every=%s", every);
    snprintf(s_ckpt, sizeof s_ckpt, "ckpt_every=%s", every);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char bin[1024];
        snprintf(bin, sizeof bin, "%s", tu_bin());
        if (chdir(tu_src()) != 0) _exit(99);
        freopen("/dev/null", "w", stderr);
        execl(bin, bin, "train", "--config", PRESET, "--set", s_steps, "--set", s_eval, "--set",
              s_ckpt, "-q", "--out", run, extra, (char *)NULL);
        _exit(98);
    }
    return pid;
}

/* A real SIGKILL from outside at a random moment, twice. */
static void test_external_sigkill(void **state) {
    (void)state;
    char run[512], ref[512], ck[600], out[512];
    snprintf(run, sizeof run, "%s/ext.h5", dir);
    snprintf(ck, sizeof ck, "%s.ckpt", run);
    snprintf(out, sizeof out, "%s/ext.log", dir);
    for (int round = 0; round < 2; round++) {
        pid_t pid = spawn_train(run, "80", "20", round ? "--resume" : NULL);
        /* wait for a checkpoint to exist, then kill at once */
        for (int i = 0; i < 2000 && access(ck, F_OK) != 0; i++) usleep(1000);
        usleep(2000 * (round + 1));
        kill(pid, SIGKILL);
        int st;
        waitpid(pid, &st, 0);
    }
    int rc = tu_run(out, "train --config " PRESET " " STEPS " --out %s --resume", run);
    assert_int_equal(rc, 0);
    snprintf(ref, sizeof ref, "%s/ref.h5", dir);
    assert_same_history(ref, run);
}

/* SIGINT saves a checkpoint and exits 130; resuming finishes the run. */
static void test_ctrl_c_checkpoints(void **state) {
    (void)state;
    char run[512], ck[600], out[512], ref[512];
    snprintf(run, sizeof run, "%s/int.h5", dir);
    snprintf(ck, sizeof ck, "%s.ckpt", run);
    snprintf(out, sizeof out, "%s/int.log", dir);
    /* long enough that SIGINT lands mid-run */
    pid_t pid = spawn_train(run, "100000", "1000000", NULL);
    for (int i = 0; i < 3000 && access(run, F_OK) != 0; i++) usleep(1000);
    usleep(200000);
    kill(pid, SIGINT);
    int st;
    waitpid(pid, &st, 0);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 130);
    assert_int_equal(access(ck, F_OK), 0); /* the checkpoint was written */
    /* the run file is intact and still marked running */
    char err[512];
    RunReader *r = runread_open(run, err, sizeof err);
    if (!r) fail_msg("%s", err);
    assert_string_equal(runread_meta(r)->status, "running");
    runread_close(r);
    (void)ref;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kill_and_resume_bit_identical),
        cmocka_unit_test(test_external_sigkill),
        cmocka_unit_test(test_ctrl_c_checkpoints),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
