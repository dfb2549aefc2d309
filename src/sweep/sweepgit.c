/* sweepgit.c: where a confirmatory sweep file stands in git (sweep.h,
 * sweep_source). git runs as an external program with a fixed argv and no
 * shell; its absence, or a file outside a repository, is an answer
 * ("unknown"), not an error. */
#include "sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

extern char **environ;

/* Runs `git -C dir ARGS...` (args NULL-ended), its stdout (up to len - 1
 * bytes, NUL-ended, trailing newline removed) into out, its stderr to
 * /dev/null. Returns git's exit status, or -1 when git cannot be run. */
static int run_git(const char *dir, const char *const *args, char *out, size_t len) {
    const char *argv[16] = {"git", "-C", dir};
    int n = 3;
    for (int i = 0; args[i] && n < 15; i++) argv[n++] = args[i];
    argv[n] = NULL;
    int p[2];
    if (pipe(p) != 0) return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addclose(&fa, p[0]);
    pid_t pid;
    int rc = posix_spawnp(&pid, "git", &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    size_t got = 0;
    for (ssize_t k; rc == 0 && (k = read(p[0], out + got, len - 1 - got)) > 0;)
        if ((got += (size_t)k) == len - 1) break;
    close(p[0]);
    out[got] = '\0';
    while (got && (out[got - 1] == '\n' || out[got - 1] == '\r')) out[--got] = '\0';
    if (rc != 0) return -1;
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(st) && WEXITSTATUS(st) != 127 ? WEXITSTATUS(st) : -1;
}

/* The directory and base name of path, into dir and base. */
static void split_path(const char *path, char *dir, size_t dlen, char *base, size_t blen) {
    const char *slash = strrchr(path, '/');
    if (!slash) {
        str_copy(dir, dlen, ".");
        str_copy(base, blen, path);
        return;
    }
    size_t n = (size_t)(slash - path);
    snprintf(dir, dlen, "%.*s", (int)(n ? n : 1), path);
    str_copy(base, blen, slash + 1);
}

void sweep_source(const char *path, SweepSource *s) {
    memset(s, 0, sizeof *s);
    str_copy(s->file, sizeof s->file, path);
    str_copy(s->commit, sizeof s->commit, "unknown");
    s->dirty = -1;
    char dir[SWEEP_PATH_MAX], base[SWEEP_PATH_MAX], out[256];
    split_path(path, dir, sizeof dir, base, sizeof base);
    const char *in_repo[] = {"rev-parse", "--is-inside-work-tree", NULL};
    int rc = run_git(dir, in_repo, out, sizeof out);
    if (rc != 0) {
        str_copy(s->why, sizeof s->why,
                 rc < 0 ? "git cannot be run" : "the sweep file is not in a git repository");
        return;
    }
    const char *log[] = {"log", "-1", "--format=%H", "--", base, NULL};
    const char *status[] = {"status", "--porcelain", "--", base, NULL};
    if (run_git(dir, log, out, sizeof out) != 0) {
        str_copy(s->why, sizeof s->why, "git log failed");
        return;
    }
    if (!out[0]) {
        str_copy(s->commit, sizeof s->commit, "none");
        s->dirty = 1;
        str_copy(s->why, sizeof s->why, "the sweep file was never committed");
        return;
    }
    str_copy(s->commit, sizeof s->commit, out);
    if (run_git(dir, status, out, sizeof out) != 0) {
        str_copy(s->why, sizeof s->why, "git status failed");
        return;
    }
    s->dirty = out[0] != '\0';
    if (s->dirty) str_copy(s->why, sizeof s->why, "the sweep file differs from its last commit");
}

int sweep_source_check(const SweepSource *s, int uncommitted, char *err, size_t errlen) {
    if (s->dirty == 0 || uncommitted) return 0;
    return seterr(err, errlen,
                  "%s: a confirmatory sweep ([primary]) must run from a committed sweep file, "
                  "but %s (commit it, or pass --uncommitted, which the run files record)",
                  s->file, s->why);
}
