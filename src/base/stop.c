/* stop.c: see stop.h. */
#include "stop.h"

#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "exitclean.h"

static volatile sig_atomic_t stop_flag = 0; /* the last signal while armed, 0 none */
static volatile sig_atomic_t stop_n = 0;    /* signals while armed */
static volatile sig_atomic_t armed = 0;
static char message[96] = "gatelab: interrupted\n";

static pid_t main_tid; /* the thread that holds signals while it registers a path */

/* Armed: record the signal. Otherwise remove what the command would leave
 * behind and exit now. A process signal can land on any thread (BLAS
 * workers too); it is passed to the main thread, whose signal mask holds
 * it while a path is being made and registered (exitclean_hold). Only
 * async-signal-safe calls. */
static void on_signal(int sig) {
    if (armed) {
        stop_flag = sig;
        stop_n++;
        return;
    }
    if (main_tid > 0 && (pid_t)syscall(SYS_gettid) != main_tid) {
        syscall(SYS_tgkill, getpid(), main_tid, sig);
        return;
    }
    exitclean_run();
    ssize_t w = write(STDERR_FILENO, message, strlen(message));
    (void)w;
    _exit(STOP_EXIT);
}

static void catch_both(struct sigaction *old_int, struct sigaction *old_term) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaction(SIGINT, &sa, old_int);
    sigaction(SIGTERM, &sa, old_term);
}

void stop_install(const char *cmd) {
    main_tid = (pid_t)syscall(SYS_gettid);
    if (cmd) snprintf(message, sizeof message, "gatelab %.40s: interrupted\n", cmd);
    catch_both(NULL, NULL);
}

void stop_arm(StopGuard *g) {
    g->was_armed = armed;
    stop_flag = 0;
    stop_n = 0;
    armed = 1;
    catch_both(&g->old_int, &g->old_term);
}

void stop_disarm(const StopGuard *g) {
    sigaction(SIGINT, &g->old_int, NULL);
    sigaction(SIGTERM, &g->old_term, NULL);
    armed = g->was_armed;
}

int stop_requested(void) { return stop_flag != 0; }

int stop_signal(void) { return stop_flag; }

int stop_count(void) { return stop_n; }
