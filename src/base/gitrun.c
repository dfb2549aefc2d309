/* gitrun.c: see gitrun.h. */
#include "gitrun.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* environ without its GIT_* entries (malloc'd array, entries shared), or
 * NULL when memory runs out. */
static char **env_without_git(void) {
    size_t n = 0;
    while (environ[n]) n++;
    char **e = malloc((n + 1) * sizeof *e);
    if (!e) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "GIT_", 4)) e[k++] = environ[i];
    e[k] = NULL;
    return e;
}

/* Reads fd to its end into out[len] (NUL-ended); -2 when it does not fit. */
static int read_all(int fd, char *out, size_t len, size_t *got) {
    size_t n = 0;
    int over = 0;
    char sink[4096];
    for (ssize_t k;;) {
        size_t room = len - 1 - n;
        k = room ? read(fd, out + n, room) : read(fd, sink, sizeof sink);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        if (room) n += (size_t)k;
        else over = 1;
    }
    out[n] = '\0';
    if (got) *got = n;
    return over ? -2 : 0;
}

int git_run(const char *dir, const char *const *args, char *out, size_t len, size_t *got) {
    const char *argv[16] = {"git", "-C", dir};
    int n = 3;
    out[0] = '\0';
    if (got) *got = 0;
    for (int i = 0; args[i]; i++) {
        if (n == 15) return -1; /* more than 12: never a shortened command line */
        argv[n++] = args[i];
    }
    argv[n] = NULL;
    char **env = env_without_git();
    int p[2];
    if (!env || pipe(p) != 0) {
        free(env);
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addclose(&fa, p[0]);
    if (p[1] != 1) posix_spawn_file_actions_addclose(&fa, p[1]); /* only its stdout holds it */
    pid_t pid;
    int rc = posix_spawnp(&pid, "git", &fa, NULL, (char *const *)argv, env);
    posix_spawn_file_actions_destroy(&fa);
    free(env);
    close(p[1]);
    int fit = rc == 0 ? read_all(p[0], out, len, got) : 0;
    close(p[0]);
    if (rc != 0) return -1;
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return -1;
    if (!WIFEXITED(st) || WEXITSTATUS(st) == 127) return -1;
    return fit < 0 ? -2 : WEXITSTATUS(st);
}

int git_line(const char *dir, const char *const *args, char *out, size_t len) {
    size_t got;
    int rc = git_run(dir, args, out, len, &got);
    while (got && (out[got - 1] == '\n' || out[got - 1] == '\r')) out[--got] = '\0';
    return rc;
}
