/* test_outputs.c: the outputs and the writers, one reply each:
 * - heatmap --compare titles each row with its own probe's step, and
 *   --step N picks the other run's probe at N too;
 * - train --progress-fd on a closed or read-only fd is refused before any
 *   file is opened (a closed fd 3 was taken by the lock file);
 * - [primary] in a sweep file or a hand-edited protocol.ini: a second
 *   margin, contradicting or repeated claims, a pair also given reversed,
 *   arms that are no run and arms outside the name rule, each refused in
 *   one line naming the line;
 * - report: run files named with HTML or a Markdown link are refused, a
 *   missing directory is named as missing;
 * - the rewrites of a run file (intervene, eval, stream, --resume) keep its
 *   mode, and refuse a file of mode 444, leaving it as it was;
 * - a sweep that waits for a run another process is writing decides again
 *   when the wait ends: a run finished meanwhile is skipped as done;
 * - GATELAB_MEM_LIMIT past its range is refused; unset, the plan is held to
 *   the memory available, not the machine's total;
 * - a GATELAB_BLAS_FALLBACK that gatelab's re-exec did not set is ignored
 *   with a warning, never recorded as blas_core_how;
 * - --resume with another config names the key that differs;
 * - report over many run files says how far it has read. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "memplan.h"
#include "testutil.h"

/* the directory and the tiny run every test here uses (testutil.h) */
static const char *const dir = tu_tiny_dir, *const run = tu_tiny_run;

/* `cd dir && PREFIX gatelab ARGS`, output into dir/out.txt; exit code. */
static int sh(const char *prefix, const char *args) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "cd '%s' && %s '%s' %s >'%s/out.txt' 2>&1", dir, prefix, tu_bin(),
             args, dir);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void assert_out_line(const char *want, const char *also) {
    tu_assert_one_line(tu_join(dir, "out.txt"), want, also);
}

static void test_heatmap_compare_steps(void **st) {
    (void)st;
    char args[4096];
    /* a second run of 40 steps: probes at 20 and 40; ours at 20, 40, 60 */
    snprintf(args, sizeof args,
             "train --config %s/experiments/tiny.ini --quiet --set steps=40 --out short.h5",
             tu_src());
    assert_int_equal(sh("", args), 0);
    snprintf(args, sizeof args, "heatmap %s --compare short.h5 --layer 0 --out cmp.png", run);
    assert_int_equal(sh("", args), 0);
    assert_out_line("top row probe step 60, bottom row probe step 40", NULL);
    snprintf(args, sizeof args, "heatmap %s --compare short.h5 --layer 0 --step 20 --out cmp.png",
             run);
    assert_int_equal(sh("", args), 0);
    assert_out_line("top row probe step 20, bottom row probe step 20", NULL);
    /* a step the other run lacks names that run */
    snprintf(args, sizeof args, "heatmap %s --compare short.h5 --layer 0 --step 60 --out cmp.png",
             run);
    assert_int_equal(sh("", args), 2);
    assert_out_line("short.h5", NULL);
}

static void test_progress_fd_checked(void **st) {
    (void)st;
    char args[4096];
    snprintf(args, sizeof args,
             "train --config %s/experiments/tiny.ini --quiet --out pfd.h5 --progress-fd 3",
             tu_src());
    char closed[4200], readonly[4200];
    snprintf(closed, sizeof closed, "%s 3>&-", args);
    assert_int_equal(sh("", closed), 2);
    assert_out_line("--progress-fd 3: fd 3 is not open", NULL);
    snprintf(readonly, sizeof readonly, "%s 3</dev/null", args);
    assert_int_equal(sh("", readonly), 2);
    assert_out_line("fd 3 is not open for writing", NULL);
    struct stat sb;
    assert_int_not_equal(stat(tu_join(dir, "pfd.h5"), &sb), 0);
    assert_int_not_equal(stat(tu_join(dir, "pfd.h5.lock"), &sb), 0);
}

/* A sweep file whose [primary] holds body; `sweep --list` must refuse it
 * in one line holding want (and "FILE:LINE"). */
static void primary_refused(const char *body, int line, const char *want) {
    char text[4096], args[4200], where[64];
    snprintf(text, sizeof text,
             "[sweep]\npreset = %s/experiments/tiny.ini\nseeds = 1,2\n"
             "[run baseline]\nvariant = baseline\n[run g1-elem]\nvariant = g1-elem\n"
             "[primary]\nmetric = f_attn\nmetric = val_loss\n%s"
             "test = f_attn wilcoxon\ntest = val_loss wilcoxon\n",
             tu_src(), body);
    tu_write_text(tu_join(dir, "p.sweep"), text);
    snprintf(args, sizeof args, "sweep p.sweep --out psweep --list");
    if (sh("", args) != 2) fail_msg("accepted [primary] %s", body);
    snprintf(where, sizeof where, "p.sweep:%d:", line);
    assert_out_line(where, want);
}

static void test_primary_weak_replies(void **st) {
    (void)st;
    /* the [primary] body starts at line 11 */
    primary_refused("compare = g1-elem vs baseline\nmargin = f_attn 0.1\nmargin = f_attn 0.2\n", 13,
                    "given twice");
    primary_refused("compare = g1-elem vs baseline\npaper = f_attn g1-elem < baseline\n"
                    "paper = f_attn g1-elem > baseline\n",
                    13, "(another)");
    primary_refused("compare = g1-elem vs baseline\npaper = f_attn g1-elem > baseline\n", 12,
                    "paper = f_attn g1-elem > baseline: the paper states no such claim (variants "
                    "g1-elem and baseline");
    primary_refused("compare = g1-elem vs baseline\npaper = f_attn g1-elem ~ baseline\n", 12,
                    "a '~' claim on f_attn needs 'margin = f_attn VALUE'");
    primary_refused("compare = g1-elem vs baseline\npaper = f_attn g1-elem < baseline\n"
                    "paper = f_attn g1-elem < baseline\n",
                    13, "the same");
    primary_refused("compare = g1-elem vs baseline\ncompare = baseline vs g1-elem\n", 12,
                    "already declared");
    primary_refused("compare = g1-elem vs nosuch\n", 11, "'nosuch' is no [run NAME]");
    primary_refused("compare = g1|x vs baseline\n", 11, "is not a run name");
    /* an interaction's arms are runs too (the template's tests land in [secondary]) */
    primary_refused("test = f_attn wilcoxon\ntest = val_loss wilcoxon\ncompare = g1-elem vs "
                    "baseline\npaper = f_attn g1-elem < baseline\n[secondary]\nmetric = "
                    "f_attn\nmetric = val_loss\ninteraction = val_loss g1-elem vs baseline minus "
                    "g1-elem vs nosuch < 0.04\n",
                    18, "interaction = ...: 'nosuch' is no [run NAME]");
    primary_refused("compare = <img vs baseline\n", 11, "is not a run name");
    primary_refused("compare = [link](x) vs baseline\n", 11, "is not a run name");
    /* the same section, well formed, is accepted */
    char text[4096];
    snprintf(text, sizeof text,
             "[sweep]\npreset = %s/experiments/tiny.ini\n"
             "[run baseline]\nvariant = baseline\n[run g1-elem]\nvariant = g1-elem\n"
             "[primary]\nmetric = f_attn\ncompare = g1-elem vs baseline\nmargin = f_attn 0.1\n"
             "paper = f_attn g1-elem < baseline\ntest = f_attn wilcoxon\n",
             tu_src());
    tu_write_text(tu_join(dir, "ok.sweep"), text);
    assert_int_equal(sh("", "sweep ok.sweep --out okdir --list"), 0);
}

/* dir/NAME with one copy of the tiny run as good_s1.h5 (and base_s1.h5). */
static const char *report_dir(const char *name) {
    static char d[1100];
    char cmd[2400];
    snprintf(d, sizeof d, "%s/%s", dir, name);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", d);
    assert_int_equal(system(cmd), 0);
    tu_copy_file(run, tu_join(d, "good_s1.h5"));
    tu_copy_file(run, tu_join(d, "base_s1.h5"));
    return d;
}

static void test_protocol_ini_hand_edited(void **st) {
    (void)st;
    const char *d = report_dir("proto");
    char args[2400];
    snprintf(args, sizeof args, "report '%s'", d);
    const char *bodies[][3] = {
        {"compare = good vs <img/src=x/onerror=alert(1)>\n", "3:", "is not a run name"},
        {"compare = good vs base\ncompare = base vs good\n", "4:", "already declared"},
        {"compare = good vs base\nmargin = f_attn 1\nmargin = f_attn 2\n", "5:", "given twice"},
        {"compare = good vs base\ncompare = good vs nosuch\n", "4:", "'nosuch' is the run name"},
    };
    for (size_t i = 0; i < sizeof bodies / sizeof *bodies; i++) {
        char text[1024];
        snprintf(text, sizeof text, "[primary]\nmetric = f_attn\n%stest = f_attn wilcoxon\n",
                 bodies[i][0]);
        tu_write_text(tu_join(d, "protocol.ini"), text);
        if (sh("", args) != 2) fail_msg("report accepted protocol.ini %s", bodies[i][0]);
        char where[64];
        snprintf(where, sizeof where, "protocol.ini:%s", bodies[i][1]);
        assert_out_line(where, bodies[i][2]);
        struct stat sb;
        assert_int_not_equal(stat(tu_join(d, "REPORT.md"), &sb), 0);
    }
    tu_write_text(tu_join(d, "protocol.ini"),
                  "[primary]\nmetric = f_attn\ntest = f_attn wilcoxon\ncompare = good vs base\n");
    assert_int_equal(sh("", args), 0);
}

static void test_report_hostile_names(void **st) {
    (void)st;
    const char *names[] = {"<img src=x onerror=alert(1)>_s1.h5", "[link](http:x)_s1.h5",
                           "a|b_s1.h5", "-x_s1.h5"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char sub[32], args[2400];
        snprintf(sub, sizeof sub, "names%zu", i);
        const char *d = report_dir(sub);
        tu_copy_file(run, tu_join(d, names[i]));
        snprintf(args, sizeof args, "report '%s'", d);
        if (sh("", args) != 2) fail_msg("report accepted a run file named %s", names[i]);
        assert_out_line("a run file's name may hold only letters, digits", NULL);
        char *o = tu_slurp_ok(tu_join(dir, "out.txt"), NULL);
        assert_null(strstr(o, "<img"));
        assert_null(strstr(o, "[link]"));
        free(o);
        struct stat sb;
        assert_int_not_equal(stat(tu_join(d, "REPORT.md"), &sb), 0);
    }
}

static void test_report_missing_dir(void **st) {
    (void)st;
    assert_int_equal(sh("", "report nosuch-dir"), 2);
    assert_out_line("nosuch-dir: No such file or directory", NULL);
    tu_write_text(tu_join(dir, "plain.txt"), "x\n");
    assert_int_equal(sh("", "report plain.txt"), 2);
    assert_out_line("plain.txt: not a directory", NULL);
}

static unsigned mode_of(const char *path) {
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    return (unsigned)(sb.st_mode & 07777);
}

/* A copy of the tiny run named name with mode m. */
static const char *copy_mode(const char *name, unsigned m) {
    const char *p = tu_join(dir, name);
    tu_copy_file(run, p);
    assert_int_equal(chmod(p, m), 0);
    return p;
}

static void test_rewrites_keep_mode(void **st) {
    (void)st;
    char args[4096];
    const char *p = copy_mode("m600.h5", 0600);
    snprintf(args, sizeof args, "intervene %s gates-open", p);
    assert_int_equal(sh("", args), 0);
    assert_int_equal(mode_of(p), 0600);
    p = copy_mode("m640.h5", 0640);
    snprintf(args, sizeof args, "eval %s --lengths 1x", p);
    assert_int_equal(sh("", args), 0);
    assert_int_equal(mode_of(p), 0640);
    p = copy_mode("s640.h5", 0640);
    snprintf(args, sizeof args, "stream %s --window 16 --keep 1 --len 32 --n-seq 2", p);
    assert_int_equal(sh("", args), 0);
    assert_int_equal(mode_of(p), 0640);
    /* a read-only run file is refused by every rewrite, and stays as it was */
    p = copy_mode("m444.h5", 0444);
    size_t n0, n1;
    char *before = tu_slurp_ok(p, &n0);
    const char *cmds[] = {"intervene %s gates-open", "eval %s --lengths 1x",
                          "stream %s --window 16 --keep 1 --len 32 --n-seq 2"};
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        snprintf(args, sizeof args, cmds[i], p);
        if (sh("", args) != 2) fail_msg("'%s' rewrote a file of mode 0444", args);
        assert_out_line("is not writable (mode 0444)", NULL);
    }
    char *after = tu_slurp_ok(p, &n1);
    assert_int_equal(n0, n1);
    assert_memory_equal(before, after, n0);
    free(before), free(after);
    assert_int_equal(mode_of(p), 0444);
    /* --resume keeps the mode of the run it continues */
    const char *k = tu_join(dir, "killed.h5");
    tu_fault("KILL_AT", "30");
    snprintf(args, sizeof args, "train --config %s/experiments/tiny.ini --quiet --out %s", tu_src(),
             k);
    sh("", args);
    tu_fault_clear();
    assert_int_equal(chmod(k, 0600), 0);
    snprintf(args, sizeof args, "train --config %s/experiments/tiny.ini --quiet --out %s --resume",
             tu_src(), k);
    assert_int_equal(sh("", args), 0);
    assert_int_equal(mode_of(k), 0600);
}

/* The text of dir/name once it holds needle, polling every 50 ms for up
 * to 120 s; NULL when it never does. */
static char *await_text(const char *name, const char *needle) {
    for (int i = 0; i < 2400; i++) {
        char *t = tu_slurp(tu_join(dir, name), NULL);
        if (t && strstr(t, needle)) return t;
        free(t);
        usleep(50000);
    }
    return NULL;
}

/* A sweep that meets a run another writer holds waits for the writer's
 * lock and then decides again. The test is that writer: it holds
 * two/r_s1.h5.lock itself (flock, as runlock.h's writers do) until the
 * sweep says it is waiting, then puts a finished run in place and lets
 * go; the sweep must skip the run as done, not train it. */
static void test_sweep_redecides_after_waiting(void **st) {
    (void)st;
    char text[2048], cmd[8192], lock[1100];
    snprintf(text, sizeof text,
             "[sweep]\npreset = %s/experiments/tiny.ini\n[run r]\nvariant = baseline\n", tu_src());
    tu_write_text(tu_join(dir, "two.sweep"), text);
    snprintf(lock, sizeof lock, "%s/two/r_s1.h5.lock", dir);
    assert_true(mkdir(tu_join(dir, "two"), 0755) == 0);
    int fd = open(lock, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    assert_true(fd >= 0);
    assert_true(dprintf(fd, "pid %d\n", (int)getpid()) > 0);
    assert_int_equal(flock(fd, LOCK_EX), 0);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && { '%s' sweep two.sweep --out two --no-report >out.txt 2>&1; "
             "echo \"rc $?\" >rc.txt; } &",
             dir, tu_bin());
    assert_int_equal(system(cmd), 0);
    char *o = await_text("out.txt", "is still being written by an earlier process; waiting");
    if (!o) fail_msg("the sweep never waited for the held lock");
    free(o);
    tu_copy_file(run, tu_join(dir, "two/r_s1.tmp"));
    assert_int_equal(rename(tu_join(dir, "two/r_s1.tmp"), tu_join(dir, "two/r_s1.h5")), 0);
    assert_int_equal(unlink(lock), 0);
    close(fd);
    char *rc = await_text("rc.txt", "\n");
    o = tu_slurp_ok(tu_join(dir, "out.txt"), NULL);
    if (!rc || strcmp(rc, "rc 0\n") || !strstr(o, "skip (done) r_s1"))
        fail_msg("sweep after the writer let go: %s%s", rc ? rc : "no exit\n", o);
    free(rc), free(o);
    char *tsv = tu_slurp(tu_join(dir, "two/sweep_status.tsv"), NULL);
    if (tsv && strstr(tsv, "failed")) fail_msg("recorded failed: %s", tsv);
    free(tsv);
}

static void test_mem_limit_range(void **st) {
    (void)st;
    char args[2048];
    snprintf(args, sizeof args, "train --config %s/experiments/tiny.ini --quiet --out ml.h5",
             tu_src());
    /* 2^64 and more, and past 2^61 - 1: refused, never "no limit" */
    const char *big[] = {"18446744073709551616", "99999999999999999999999", "2305843009213693952"};
    for (size_t i = 0; i < sizeof big / sizeof *big; i++) {
        char pre[64];
        snprintf(pre, sizeof pre, "GATELAB_MEM_LIMIT=%s", big[i]);
        if (sh(pre, args) != 2) fail_msg("GATELAB_MEM_LIMIT=%s accepted", big[i]);
        assert_out_line("is not a positive number of bytes up to", NULL);
    }
    /* unset, the plan is checked against the memory available now, which is
     * below the machine's total (the kernel holds some) */
    unsetenv("GATELAB_MEM_LIMIT");
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    assert_true(memplan_limit() < (size_t)pages * (size_t)page);
}

static void test_blas_fallback_not_trusted(void **st) {
    (void)st;
    char args[2048];
    snprintf(args, sizeof args,
             "train --config %s/experiments/tiny.ini --quiet --set steps=2 --out fb.h5", tu_src());
    assert_int_equal(sh("GATELAB_BLAS_FALLBACK=evil", args), 0);
    size_t n;
    char *o = tu_slurp_ok(tu_join(dir, "out.txt"), NULL),
         *h5 = tu_slurp_ok(tu_join(dir, "fb.h5"), &n);
    if (!strstr(o, "ignoring GATELAB_BLAS_FALLBACK='evil'")) fail_msg("no warning: %s", o);
    if (memmem(h5, n, "evil", 4)) fail_msg("the run file records GATELAB_BLAS_FALLBACK=evil");
    free(o), free(h5);
}

static void test_resume_names_the_key(void **st) {
    (void)st;
    char args[2048];
    const char *k = tu_join(dir, "keyed.h5");
    tu_fault("KILL_AT", "30");
    snprintf(args, sizeof args, "train --config %s/experiments/tiny.ini --quiet --out %s", tu_src(),
             k);
    sh("", args);
    tu_fault_clear();
    snprintf(args, sizeof args,
             "train --config %s/experiments/tiny.ini --quiet --out %s --resume --set threads=2",
             tu_src(), k);
    assert_int_equal(sh("", args), 2);
    assert_out_line("different config (threads = 1 in the checkpoint, 2 now)", NULL);
}

static void test_report_progress(void **st) {
    (void)st;
    char d[1100], cmd[2400];
    snprintf(d, sizeof d, "%s/many", dir);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", d);
    assert_int_equal(system(cmd), 0);
    for (int i = 1; i <= 60; i++) {
        char name[32];
        snprintf(name, sizeof name, "r%d_s%d.h5", i % 3, i);
        tu_copy_file(run, tu_join(d, name));
    }
    snprintf(cmd, sizeof cmd, "report '%s'", d);
    assert_int_equal(sh("GATELAB_TEST_PROGRESS=1", cmd), 0); /* as on a terminal */
    char *o = tu_slurp_ok(tu_join(dir, "out.txt"), NULL);
    if (!strstr(o, "report: read 50 of 60 run files\n") ||
        !strstr(o, "report: read 60 of 60 run files\n"))
        fail_msg("no progress lines: %s", o);
    free(o);
    char *md = tu_slurp_ok(tu_join(d, "REPORT.md"), NULL);
    assert_non_null(strstr(md, "(60 readable, 0 unreadable)"));
    free(md);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_heatmap_compare_steps),
        cmocka_unit_test(test_progress_fd_checked),
        cmocka_unit_test(test_primary_weak_replies),
        cmocka_unit_test(test_protocol_ini_hand_edited),
        cmocka_unit_test(test_report_hostile_names),
        cmocka_unit_test(test_report_missing_dir),
        cmocka_unit_test(test_rewrites_keep_mode),
        cmocka_unit_test(test_sweep_redecides_after_waiting),
        cmocka_unit_test(test_mem_limit_range),
        cmocka_unit_test(test_blas_fallback_not_trusted),
        cmocka_unit_test(test_resume_names_the_key),
        cmocka_unit_test(test_report_progress),
    };
    return cmocka_run_group_tests(tests, tu_tiny_setup, tu_tiny_teardown);
}
