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

/* Context extension (the last half of the steps at T 64, RoPE base raised
 * to 40000): a kill after the switch (checkpoint at 60) and one whose
 * checkpoint is the switch step itself (40) both resume bit-identically. */
#define EXTEND "--set extend_share=0.5 --set extend_seq_len=64 --set extend_rope_base=40000"
static void test_extend_kill_and_resume(void **state) {
    (void)state;
    char out[512], ref[512], run[512], err[512];
    snprintf(out, sizeof out, "%s/ext.log", dir);
    snprintf(ref, sizeof ref, "%s/ext_ref.h5", dir);
    assert_int_equal(tu_run(out, "train --config " PRESET " " STEPS " " EXTEND " --out %s", ref),
                     0);
    const char *kill_at[] = {"67", "47"};
    for (int k = 0; k < 2; k++) {
        snprintf(run, sizeof run, "%s/ext_killed%d.h5", dir, k);
        tu_fault("KILL_AT", kill_at[k]);
        int rc = tu_run(out, "train --config " PRESET " " STEPS " " EXTEND " --out %s", run);
        tu_fault_clear();
        assert_int_equal(rc, 128 + SIGKILL);
        rc = tu_run(out, "train --config " PRESET " " STEPS " " EXTEND " --out %s --resume", run);
        assert_int_equal(rc, 0);
        assert_same_history(ref, run);
    }
    /* 40 steps of 4 x 32 tokens, then 40 of 4 x 64; and the extension
     * changed the training (its step-41 loss is not the plain run's) */
    RunReader *a = runread_open(ref, err, sizeof err), *b = NULL;
    assert_non_null(a);
    snprintf(run, sizeof run, "%s/ref.h5", dir);
    b = runread_open(run, err, sizeof err);
    assert_non_null(b);
    RunTrain ta, tb;
    assert_int_equal(runread_train(a, &ta, err, sizeof err), 0);
    assert_int_equal(runread_train(b, &tb, err, sizeof err), 0);
    assert_true(ta.tokens[79] == 40LL * 4 * 32 + 40LL * 4 * 64);
    assert_true(ta.loss[39] == tb.loss[39] && ta.loss[40] != tb.loss[40]);
    runread_train_free(&ta), runread_train_free(&tb);
    runread_close(a), runread_close(b);
}

/* The extension's keys are validated together, each refusal one line
 * naming the key, before anything is written. */
static void test_extend_refused(void **state) {
    (void)state;
    char out[512];
    snprintf(out, sizeof out, "%s/extbad.log", dir);
    static const char *bad[][3] = {
        {"extend_seq_len=64", "extend_seq_len 64 does nothing with extend_share 0", NULL},
        {"extend_share=0.5 --set extend_seq_len=32", "needs extend_seq_len above seq_len 32", NULL},
        {"extend_share=0.5 --set extend_seq_len=64 --set extend_rope_base=5000",
         "extend_rope_base 5000 is below rope_base 10000", NULL},
        {"extend_share=0.001 --set extend_seq_len=64", "leaves no step at one of the two lengths",
         "(switch at step 80)"},
        {"extend_share=0.95 --set extend_seq_len=64", "extend_share", "0.9"},
        {"extend_share=0.5 --set extend_seq_len=64 --set pos=learned --set extend_rope_base=2e4",
         "extend_rope_base 20000 does nothing with pos learned", NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int rc = tu_run(out, "train --config " PRESET " " STEPS " --set %s --out %s/extbad.h5",
                        bad[i][0], dir);
        assert_int_equal(rc, 2);
        tu_assert_one_line(out, bad[i][1], bad[i][2]);
    }
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
        cmocka_unit_test(test_extend_kill_and_resume),
        cmocka_unit_test(test_extend_refused),
        cmocka_unit_test(test_external_sigkill),
        cmocka_unit_test(test_ctrl_c_checkpoints),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
