/* testutil.c: see testutil.h. */
#include "testutil.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

const char *tu_src(void) {
    const char *s = getenv("GATELAB_SRC");
    return s && *s ? s : "..";
}

const char *tu_bin(void) {
    const char *s = getenv("GATELAB_BIN");
    return s && *s ? s : "./gatelab";
}

const char *tu_tmpdir(void) {
    static char dir[64];
    snprintf(dir, sizeof dir, "/tmp/gatelab-test-XXXXXX");
    return mkdtemp(dir);
}

int tu_run(const char *outfile, const char *fmt, ...) {
    char args[4096], cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "cd '%s' && exec '%s' %s > '%s' 2>&1", tu_src(), tu_bin(), args,
             outfile);
    int st = system(cmd);
    if (st == -1) return -1;
    if (WIFEXITED(st)) {
        int code = WEXITSTATUS(st);
        return code; /* the shell reports a killed child as 128+signal */
    }
    return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
}

char *tu_slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (b) b[n] = 0;
    if (len) *len = b ? (size_t)n : 0;
    return b;
}

int tu_count_lines(const char *path) {
    char *b = tu_slurp(path, NULL);
    if (!b) return -1;
    int n = 0;
    for (char *s = strtok(b, "\n"); s; s = strtok(NULL, "\n"))
        if (*s) n++;
    free(b);
    return n;
}
