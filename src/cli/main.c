/* main.c: the gatelab binary. Dispatches to a subcommand, git style. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "blas_core.h"
#include "commands.h"
#include "env.h"
#include "gatelab_build.h"
#include "gatelab_version.h"
#include "simd.h"
#include "stop.h"
#include "util.h"

typedef struct {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} Command;

#define COMMAND_ROW(name, help) {#name, cmd_##name, help},
static const Command commands[] = {CLI_COMMANDS(COMMAND_ROW)};
#undef COMMAND_ROW
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f) {
    fprintf(f, "usage: gatelab <command> [options]   (gatelab <command> --help)\n\n");
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "\ngatelab %s\n", GATELAB_VERSION);
}

/* Make fds 0, 1 and 2 open: each one closed by the caller (`2>&-`) gets
 * /dev/null (read-only for 0, write-only for 1 and 2). Run before anything
 * opens a file, so no later open (a lock file, the metrics log, a pipe to
 * a vetting child) can be given one of them and receive the progress lines
 * and messages meant for stdout or stderr. 0, or -1 when /dev/null cannot
 * be opened (nothing can be reported then). */
static int std_fds_open(void) {
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
        int got = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
        if (got < 0) return -1;
        /* the lowest free descriptor is fd itself, since 0..fd-1 are open */
        if (got != fd) {
            close(got);
            return -1;
        }
    }
    return 0;
}

int main(int argc, char **argv) {
    if (std_fds_open() != 0) return 1; /* before any other open */
    blas_core_startup(argv);           /* may re-exec with better BLAS kernels */
    char err[256];
    if (simd_startup(err, sizeof err) != 0) {
        fprintf(stderr, "gatelab: %s\n", err);
        return 2;
    }
    if (argc < 2) {
        fprintf(stderr, "gatelab: no command given (try gatelab --help)\n");
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("gatelab %s (git %s)\n", GATELAB_VERSION, GATELAB_DESCRIBE);
        blas_print(NULL);
        return 0;
    }
    char ignored[512];
    if (env_hooks_ignored(ignored, sizeof ignored))
        fprintf(stderr,
                "gatelab: warning: ignoring %s: test hooks act only in a test run "
                "(GATELAB_TEST_RUN set)\n",
                ignored);
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (!strcmp(argv[1], commands[i].name)) {
            stop_install(commands[i].name); /* SIGINT/SIGTERM: exit 130, nothing left behind */
            return commands[i].fn(argc - 1, argv + 1);
        }
    const char *near = NULL;
    size_t best = 2;
    for (size_t i = 0; i < N_COMMANDS; i++) {
        size_t d = str_edits(argv[1], commands[i].name);
        if (d <= best && (!near || d < best)) near = commands[i].name, best = d;
    }
    if (near) fprintf(stderr, "gatelab: unknown command '%s' (did you mean %s?)\n", argv[1], near);
    else fprintf(stderr, "gatelab: unknown command '%s' (try gatelab --help)\n", argv[1]);
    return 2;
}
