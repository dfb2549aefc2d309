/* exitclean.c: see exitclean.h. A fixed table, so the signal handler
 * reads it without locks or allocation: a slot's path is written before
 * the slot is marked used, and the mark is cleared before it is reused. */
#include "exitclean.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#define SLOTS 32
#define SLOT_PATH 4200

static char paths[SLOTS][SLOT_PATH];
static volatile sig_atomic_t used[SLOTS];
static volatile pid_t owner; /* the process that registered: a forked child never cleans */

int exitclean_add(const char *path) {
    size_t n = path ? strlen(path) : SLOT_PATH;
    if (n >= SLOT_PATH) return -1;
    for (int i = 0; i < SLOTS; i++) {
        if (used[i]) continue;
        memcpy(paths[i], path, n + 1);
        owner = getpid();
        used[i] = 1;
        return 0;
    }
    return -1;
}

void exitclean_forget(const char *path) {
    for (int i = 0; path && i < SLOTS; i++)
        if (used[i] && !strcmp(paths[i], path)) used[i] = 0;
}

void exitclean_hold(sigset_t *old) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, old);
}

void exitclean_release(const sigset_t *old) { pthread_sigmask(SIG_SETMASK, old, NULL); }

void exitclean_run(void) {
    if (getpid() != owner) return;
    for (int i = 0; i < SLOTS; i++)
        if (used[i]) unlink(paths[i]);
}
