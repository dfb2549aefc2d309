/* test_hardening.c: the classes "inputs that are not what they
 * claim", "unbounded work and signals" and "outputs that are not
 * well-formed", one test per class, each over the real binary (tiny
 * preset). Every command runs under `timeout`, so a hang (a FIFO read, an
 * eval that ignores SIGTERM) fails the test instead of stalling it; no
 * assertion is about speed. Cases that need a file the runner cannot read
 * or a directory it cannot write run the binary as user nobody when the
 * suite runs as root (root reads and writes everything). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_json.h"
#include "runfile_read.h"
#include "testutil.h"
#include "util.h"

#define PRESET "experiments/tiny.ini"
#define NOBODY 65534

static const char *dir;
static char log_path[600], good[600];

static char *path(const char *name) { return tu_join(dir, name); }

/* Run `[PREFIX] BIN ARGS` from directory cwd, killed after 120 s (exit
 * 137: a hang), output into log_path. Returns the exit code. */
static int run_in(const char *cwd, const char *bin, const char *prefix, const char *fmt,
                  va_list ap) {
    char args[4096], cmd[8192];
    vsnprintf(args, sizeof args, fmt, ap);
    snprintf(cmd, sizeof cmd, "cd '%s' && exec %s timeout -s KILL 120 '%s' %s > '%s' 2>&1", cwd,
             prefix, bin, args, log_path);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* `[PREFIX] gatelab ARGS` from the source root, as the suite's user. */
static int run_as(const char *prefix, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = run_in(tu_src(), tu_bin(), prefix, fmt, ap);
    va_end(ap);
    return rc;
}
#define RUN(...) run_as("", __VA_ARGS__)

/* `gatelab ARGS` as an unprivileged user: as user nobody when the suite
 * runs as root. nobody may not reach the build or the source tree (a
 * clone in root's home is mode 700), so it runs a copy of the binary and
 * of PRESET from the test's own directory, which is world-readable; the
 * relative PRESET path names the same bytes there. */
static int run_unprivileged(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc;
    if (geteuid() != 0) {
        rc = run_in(tu_src(), tu_bin(), "", fmt, ap);
    } else { /* mode 0755 on dir: setup */
        char prefix[128], bin[700], from[700], pre[700], sub[700];
        snprintf(prefix, sizeof prefix, "setpriv --reuid=%d --regid=%d --clear-groups", NOBODY,
                 NOBODY);
        snprintf(bin, sizeof bin, "%s/gatelab", dir);
        snprintf(sub, sizeof sub, "%s/experiments", dir);
        snprintf(pre, sizeof pre, "%s/" PRESET, dir);
        snprintf(from, sizeof from, "%s/" PRESET, tu_src());
        if (access(bin, X_OK) != 0) {
            tu_copy_file(tu_bin(), bin);
            assert_int_equal(chmod(bin, 0755), 0);
            assert_true(mkdir(sub, 0755) == 0 || access(sub, F_OK) == 0);
            tu_copy_file(from, pre);
            assert_int_equal(chmod(pre, 0644), 0);
        }
        rc = run_in(dir, bin, prefix, fmt, ap);
    }
    va_end(ap);
    return rc;
}

static const char *preset_path(void) {
    static char p[700];
    snprintf(p, sizeof p, "%s/" PRESET, tu_src());
    return p;
}

static char *slurp_log(void) { return tu_slurp_ok(log_path, NULL); }

/* The log is one newline-terminated line holding both needles. */
static void assert_one_line(const char *n1, const char *n2) {
    tu_assert_one_line(log_path, n1, n2);
}

static int same_bytes(const char *a, const char *b) {
    size_t na, nb;
    char *x = tu_slurp(a, &na), *y = tu_slurp(b, &nb);
    int same = x && y && na == nb && memcmp(x, y, na) == 0;
    free(x), free(y);
    return same;
}

static int setup(void **state) {
    (void)state;
    dir = tu_tmpdir();
    if (!dir || chmod(dir, 0755) != 0) return -1; /* nobody may look in */
    snprintf(log_path, sizeof log_path, "%s/out.log", dir);
    snprintf(good, sizeof good, "%s/good.h5", dir);
    /* a finished run with probes, the input of the analysis cases */
    return RUN("train --config " PRESET " -q --set steps=20 --out %s", good);
}

/* ---- inputs that are not what they claim ---- */

static void test_inputs_not_what_they_claim(void **state) {
    (void)state;
    char *fifo = path("fifo"), *d = path("adir"), *out = path("in.h5");
    assert_int_equal(mkfifo(fifo, 0644), 0);
    assert_int_equal(mkdir(d, 0755), 0);
    /* a FIFO as the config: refused at once (it blocked forever) */
    assert_int_equal(RUN("train --config %s -q --out %s", fifo, out), 2);
    assert_one_line(fifo, "is a FIFO, not a regular file");
    /* a directory as the config (it was read as an empty preset) */
    assert_int_equal(RUN("train --config %s -q --set data=bigram --set steps=1 "
                         "--set probe_n=0 --out %s",
                         d, out),
                     2);
    assert_one_line(d, "is a directory, not a regular file");
    assert_int_equal(access(out, F_OK), -1);
    /* a FIFO as the token file */
    assert_int_equal(RUN("train --config " PRESET
                         " -q --set data=tokens --set train_file=%s --set val_file=%s "
                         "--out %s",
                         fifo, fifo, out),
                     2);
    assert_one_line(fifo, "is a FIFO");
    /* a directory as the checkpoint of a resume */
    char *run = path("ck.h5"), ck[900];
    tu_fault("KILL_AT", "5");
    RUN("train --config " PRESET " -q --out %s", run); /* unfinished */
    tu_fault_clear();
    snprintf(ck, sizeof ck, "%s.ckpt", run);
    assert_int_equal(unlink(ck), 0);
    assert_int_equal(mkdir(ck, 0755), 0);
    assert_int_equal(RUN("train --config " PRESET " -q --set steps=40 --resume --out %s", run), 2);
    assert_one_line(ck, "is a directory");
    /* a FIFO as a run file for the analysis tools */
    assert_int_equal(RUN("sinks %s", fifo), 2);
    assert_one_line(fifo, "is a FIFO");
    /* a directory as a sweep's preset */
    char sw[900];
    snprintf(sw, sizeof sw, "[sweep]\npreset = %s/\n[run a]\nset = steps=1\n", d);
    tu_write_text(path("d.sweep"), sw);
    assert_int_equal(RUN("sweep %s --list", path("d.sweep")), 2);
    assert_one_line("preset", "is a directory");
    /* a key set twice in a preset (it was last-wins) */
    size_t n;
    char *tiny = tu_slurp(preset_path(), &n), dup[4096];
    assert_non_null(tiny);
    snprintf(dup, sizeof dup, "%ssteps = 3\n", tiny); /* tiny.ini sets steps already */
    free(tiny);
    tu_write_text(path("dup.ini"), dup);
    assert_int_equal(RUN("train --config %s -q --out %s", path("dup.ini"), out), 2);
    assert_one_line("duplicate key 'steps' (first at line", "dup.ini:");
    /* a key outside its range: seq_len 1 has no uniform reference */
    assert_int_equal(RUN("train --config " PRESET " -q --set seq_len=1 --out %s", out), 2);
    assert_one_line("seq_len", "outside 2..65536");
    assert_int_equal(access(out, F_OK), -1);
}

/* ---- unbounded work and signals ---- */

/* Start gatelab ARGV in the background (stderr to log_path); its pid. */
static pid_t spawn(char *const argv[]) {
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        FILE *f = freopen(log_path, "w", stderr);
        (void)f;
        if (chdir(tu_src()) != 0) _exit(126);
        execv(tu_bin(), argv);
        _exit(127);
    }
    return pid;
}

/* Wait up to 120 s for needle in the log; 1 when it showed. */
static int wait_log(const char *needle) {
    for (int i = 0; i < 1200; i++) {
        char *b = tu_slurp(log_path, NULL);
        int hit = b && strstr(b, needle);
        free(b);
        if (hit) return 1;
        nanosleep(&(struct timespec){0, 100000000}, NULL);
    }
    return 0;
}

/* Wait up to 120 s for a path to exist; 1 when it did. */
static int wait_file(const char *p) {
    for (int i = 0; i < 1200; i++) {
        if (access(p, F_OK) == 0) return 1;
        nanosleep(&(struct timespec){0, 100000000}, NULL);
    }
    return 0;
}

/* Exit code of pid, or -1 (and the child killed) when it is still
 * running after 120 s: a signal that was not acted on. */
static int reap(pid_t pid) {
    int st;
    for (int i = 0; i < 1200; i++) {
        if (waitpid(pid, &st, WNOHANG) == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        nanosleep(&(struct timespec){0, 100000000}, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return -1;
}

static void test_unbounded_work_and_signals(void **state) {
    (void)state;
    char *out = path("big.h5");
    /* more memory than the machine has: refused before allocating, with
     * the bytes it would need (GATELAB_MEM_LIMIT stands in for a small box) */
    assert_int_equal(
        run_as("env GATELAB_MEM_LIMIT=1000000", "train --config " PRESET " -q --out %s", out), 2);
    assert_one_line("needs ", " bytes");
    assert_int_equal(access(out, F_OK), -1);
    assert_int_equal(RUN("train --config " PRESET " -q --set probe_n=1000000 --out %s", out), 2);
    assert_one_line("probe_n", "outside 0..65536");
    /* SIGTERM inside a long eval: stops within a batch, exit 130, the
     * last checkpoint kept (the eval would take minutes) */
    char *sig = path("sig.h5");
    char *argv[] = {"gatelab",  "train",
                    "--config", PRESET,
                    "--out",    sig,
                    "--set",    "steps=3",
                    "--set",    "eval_every=1",
                    "--set",    "log_every=1",
                    "--set",    "batch_size=64",
                    "--set",    "eval_batches=100000",
                    NULL};
    pid_t pid = spawn(argv);
    assert_true(wait_log("step 1/3")); /* the eval of step 1 starts now */
    kill(pid, SIGTERM);
    assert_int_equal(reap(pid), 130);
    char err[600], ck[800];
    RunReader *r = runread_open(sig, err, sizeof err);
    if (!r) fail_msg("%s", err);
    runread_close(r);
    snprintf(ck, sizeof ck, "%s.ckpt", sig);
    assert_int_equal(access(ck, F_OK), 0);
    /* one exit-code table: unreadable input is 2 everywhere */
    tu_write_text(path("junk.h5"), "not a run file\n");
    assert_int_equal(RUN("plot loss %s --out %s", path("junk.h5"), path("p.png")), 2);
    char *rep = path("rep");
    assert_int_equal(mkdir(rep, 0755), 0);
    tu_copy_file(path("junk.h5"), path("rep/junk.h5"));
    assert_int_equal(RUN("report %s", rep), 2);
    /* bench checks its config before measuring; a bad option is one line */
    assert_int_equal(RUN("bench --set seq_len=1 --steps 1"), 2);
    assert_one_line("seq_len", NULL);
    assert_int_equal(RUN("bench --bogus"), 2);
    assert_one_line("unknown option '--bogus'", "--help");
    /* an interrupted sweep exits 130 (the preset resolves beside it) */
    tu_copy_file(preset_path(), path("tiny.ini"));
    tu_write_text(path("long.sweep"), "[sweep]\npreset = tiny\n[run long]\nsteps = 1000000\n");
    char *sargv[] = {"gatelab", "sweep", path("long.sweep"), "--out", path("sw"), NULL};
    pid = spawn(sargv);
    assert_true(wait_file(path("sw/logs")));
    kill(pid, SIGINT);
    assert_int_equal(reap(pid), 130);
}

/* ---- outputs that are not well-formed ---- */

/* Split one RFC 4180 record at *s into fields[]; returns the field count
 * and advances *s past the record. */
static int csv_record(const char **s, char fields[][256], int max) {
    int n = 0;
    const char *p = *s;
    for (;;) {
        char *o = fields[n];
        size_t k = 0;
        if (*p == '"') {
            for (p++; *p && !(*p == '"' && p[1] != '"'); p++) {
                if (*p == '"') p++;
                if (k < 255) o[k++] = *p;
            }
            if (*p == '"') p++;
        } else {
            while (*p && *p != ',' && *p != '\n')
                if (k < 255) o[k++] = *p++;
        }
        o[k] = 0;
        if (n < max - 1) n++;
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p == '\n') p++;
        break;
    }
    *s = p;
    return n;
}

static void test_outputs_well_formed(void **state) {
    (void)state;
    /* non-finite numbers are null, never bare nan/inf */
    double bad[] = {NAN, INFINITY, -INFINITY};
    for (int i = 0; i < 3; i++) {
        json_t *v = cj_num(bad[i]);
        char *s = json_dumps(v, JSON_ENCODE_ANY);
        assert_string_equal(s, "null");
        free(s);
        json_decref(v);
    }
    /* a file name with a quote, a backslash and a comma: every --json
     * output parses and gives the name back */
    char *odd = path("q\"b\\c,d.h5");
    tu_copy_file(good, odd);
    const char *cmds[] = {"sinks '%s' --json", "gates '%s' --json", "acts '%s' --json",
                          "eval '%s' --lengths 1x --batches 1 --batch-size 1 --json --no-write"};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(RUN(cmds[i], odd), 0);
        char *b = slurp_log();
        json_error_t je;
        json_t *j = json_loads(b, 0, &je);
        if (!j) fail_msg("%s: not JSON (%s): %.300s", cmds[i], je.text, b);
        json_t *f = json_object_get(j, i == 3 ? "run" : "file");
        assert_non_null(f);
        assert_string_equal(json_string_value(f), odd);
        json_decref(j);
        free(b);
    }
    /* a run file named with a comma, a quote or a newline is refused
     * where report finds it (the name rule, util.h's name_plain); the
     * rows results.csv holds keep their columns (RFC 4180) */
    char *rd = path("csv");
    assert_int_equal(mkdir(rd, 0755), 0);
    const char *odd_names[] = {"a,b.h5", "q\"x.h5", "n\nl.h5"};
    for (int i = 0; i < 3; i++) {
        char p[900];
        snprintf(p, sizeof p, "%s/%s", rd, odd_names[i]);
        tu_copy_file(good, p);
        assert_int_equal(RUN("report %s", rd), 2);
        assert_int_equal(unlink(p), 0);
    }
    const char *names[] = {"a_s1.h5", "a_s2.h5", "b+c.h5"};
    for (int i = 0; i < 3; i++) {
        char p[900];
        snprintf(p, sizeof p, "%s/%s", rd, names[i]);
        tu_copy_file(good, p);
    }
    assert_int_equal(RUN("report %s", rd), 0);
    char csv[900];
    snprintf(csv, sizeof csv, "%s/results.csv", rd);
    char *text = tu_slurp(csv, NULL);
    assert_non_null(text);
    static char fields[64][256];
    const char *p = text;
    int header = csv_record(&p, fields, 64), rows = 0;
    while (*p) {
        assert_int_equal(csv_record(&p, fields, 64), header);
        int known = 0;
        for (int i = 0; i < 3; i++) known += !strcmp(fields[0], names[i]);
        if (!known) fail_msg("row names '%s'", fields[0]);
        rows++;
    }
    assert_int_equal(rows, 3);
    free(text);
}

/* A resume that cannot write beside its run file (a read-only directory)
 * fails touching nothing; a file the user cannot read is reported with
 * the real errno, not as "not an HDF5 file". */
static void test_unwritable_and_unreadable(void **state) {
    (void)state;
    char *rd = path("ro"), run[800], ck[900], snap_run[800], snap_ck[800];
    assert_int_equal(mkdir(rd, 0755), 0);
    snprintf(run, sizeof run, "%s/r.h5", rd);
    snprintf(ck, sizeof ck, "%s.ckpt", run);
    /* a run killed after step 25: checkpoint and file at step 20 */
    tu_fault("KILL_AT", "25");
    RUN("train --config " PRESET " -q --out %s", run);
    tu_fault_clear();
    assert_int_equal(access(ck, F_OK), 0);
    snprintf(snap_run, sizeof snap_run, "%s/r.snap", dir);
    snprintf(snap_ck, sizeof snap_ck, "%s/ck.snap", dir);
    tu_copy_file(run, snap_run);
    tu_copy_file(ck, snap_ck);
    if (geteuid() == 0) { /* the files are nobody's; the directory is not */
        assert_int_equal(chown(run, NOBODY, NOBODY), 0);
        assert_int_equal(chown(ck, NOBODY, NOBODY), 0);
    } else {
        assert_int_equal(chmod(rd, 0555), 0);
    }
    assert_int_equal(run_unprivileged("train --config " PRESET " -q --resume --out %s", run), 1);
    assert_one_line("Permission denied", NULL);
    assert_true(same_bytes(run, snap_run));
    assert_true(same_bytes(ck, snap_ck));
    chmod(rd, 0755);
    /* unreadable: the reason is the errno */
    char *secret = path("secret.h5");
    tu_copy_file(good, secret);
    assert_int_equal(chmod(secret, 0), 0);
    if (geteuid() == 0) assert_int_equal(chown(secret, 0, 0), 0);
    assert_int_equal(run_unprivileged("sinks %s", secret), 2);
    assert_one_line(secret, "Permission denied");
}

/* input_slurp, the whole-file read of tokenizer.json, config.json, --text
 * and --tokens files: the bytes and a NUL; one byte over the cap, a FIFO
 * and a directory are one-line errors naming the path. */
static void test_input_slurp(void **state) {
    (void)state;
    char err[1300];
    size_t n = 99;
    const char *f = path("slurp.txt"), *fifo = path("slurp.fifo");
    tu_write_text(f, "0123456789");
    char *b = input_slurp(f, 10, &n, err, sizeof err);
    assert_non_null(b);
    assert_int_equal(n, 10);
    assert_string_equal(b, "0123456789");
    free(b);
    assert_null(input_slurp(f, 9, &n, err, sizeof err));
    assert_non_null(strstr(err, "slurp.txt: too large (over 9 bytes)"));
    assert_int_equal(mkfifo(fifo, 0644), 0);
    assert_null(input_slurp(fifo, 100, &n, err, sizeof err));
    assert_non_null(strstr(err, "is a FIFO"));
    assert_null(input_slurp(dir, 100, &n, err, sizeof err));
    assert_non_null(strstr(err, "is a directory"));
    assert_null(strchr(err, '\n'));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inputs_not_what_they_claim),
        cmocka_unit_test(test_unbounded_work_and_signals),
        cmocka_unit_test(test_outputs_well_formed),
        cmocka_unit_test(test_unwritable_and_unreadable),
        cmocka_unit_test(test_input_slurp),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
