/* mapguard.c: see mapguard.h. A fixed table, read by the SIGBUS handler
 * without locks: a slot is filled before it is marked used. */
#include "mapguard.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "exitclean.h"
#include "util.h"

#define SLOTS 64

typedef struct {
    const char *base;
    size_t len;
    struct stat st;
    char path[1024];
    char msg[1200]; /* the one line the handler writes */
} Guard;

static Guard guards[SLOTS];
static volatile sig_atomic_t used[SLOTS];
static int installed;

/* SIGBUS inside a guarded mapping: say which file, clean up, exit 1.
 * Elsewhere: the default action (the fault repeats and kills). */
static void on_sigbus(int sig, siginfo_t *si, void *uc) {
    (void)uc;
    const char *a = si->si_addr;
    for (int i = 0; i < SLOTS; i++) {
        if (!used[i] || a < guards[i].base || a >= guards[i].base + guards[i].len) continue;
        ssize_t w = write(STDERR_FILENO, guards[i].msg, strlen(guards[i].msg));
        (void)w;
        exitclean_run();
        _exit(1);
    }
    signal(sig, SIG_DFL);
}

int mapguard_add(const void *base, size_t len, const char *path, const struct stat *st) {
    if (!installed) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_sigbus;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGBUS, &sa, NULL);
        installed = 1;
    }
    for (int i = 0; i < SLOTS; i++) {
        if (used[i]) continue;
        Guard *g = &guards[i];
        g->base = base, g->len = len, g->st = *st;
        snprintf(g->path, sizeof g->path, "%s", path);
        snprintf(g->msg, sizeof g->msg,
                 "gatelab: %s was truncated or changed while being read; nothing was written "
                 "(run again once the file is complete)\n",
                 path);
        used[i] = 1;
        return 0;
    }
    return -1;
}

void mapguard_remove(const void *base) {
    for (int i = 0; i < SLOTS; i++)
        if (used[i] && guards[i].base == base) used[i] = 0;
}

int mapguard_check(char *err, size_t errlen) {
    for (int i = 0; i < SLOTS; i++) {
        if (!used[i]) continue;
        const Guard *g = &guards[i];
        struct stat now;
        if (stat(g->path, &now) == 0 && now.st_ino == g->st.st_ino &&
            now.st_size == g->st.st_size && now.st_mtim.tv_sec == g->st.st_mtim.tv_sec &&
            now.st_mtim.tv_nsec == g->st.st_mtim.tv_nsec)
            continue;
        return seterr(err, errlen,
                      "%s changed while being read; its results are not those of one file "
                      "(run again once the file is complete)",
                      g->path);
    }
    return 0;
}
