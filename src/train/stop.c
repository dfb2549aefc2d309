/* stop.c: see stop.h. */
#include "stop.h"

#include <string.h>

static volatile sig_atomic_t stop_flag = 0;

static void on_signal(int sig) {
    (void)sig;
    stop_flag = 1;
}

void stop_arm(StopGuard *g) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    stop_flag = 0;
    sigaction(SIGINT, &sa, &g->old_int);
    sigaction(SIGTERM, &sa, &g->old_term);
}

void stop_disarm(const StopGuard *g) {
    sigaction(SIGINT, &g->old_int, NULL);
    sigaction(SIGTERM, &g->old_term, NULL);
}

int stop_requested(void) { return stop_flag != 0; }
