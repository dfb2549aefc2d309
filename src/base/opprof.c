/* opprof.c: see opprof.h. Each thread keeps the family it is in and when it
 * entered; a switch adds the elapsed nanoseconds to that family's shared
 * total with one atomic add. */
#include "opprof.h"

#include <stdint.h>
#include <time.h>

int opprof_on;
static clockid_t clock_id = CLOCK_MONOTONIC;

static uint64_t total_ns[OPPROF_N];
static _Thread_local int cur = -1; /* the family this thread is in, -1 for none */
static _Thread_local uint64_t since;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(clock_id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Charges the time since the last switch to the current family and makes
 * `next` current. */
static void charge(int next) {
    uint64_t t = now_ns();
    if (cur >= 0 && cur < OPPROF_N) __atomic_fetch_add(&total_ns[cur], t - since, __ATOMIC_RELAXED);
    since = t;
    cur = next;
}

int opprof_switch(int family) {
    int prev = cur;
    charge(family);
    return prev;
}

void opprof_back(int family) { charge(family); }

void opprof_enable(int on, int cpu) {
    clock_id = cpu ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC;
    for (int f = 0; f < OPPROF_N; f++) __atomic_store_n(&total_ns[f], 0, __ATOMIC_RELAXED);
    opprof_on = on != 0;
}

void opprof_read(double sec[OPPROF_N]) {
    for (int f = 0; f < OPPROF_N; f++)
        sec[f] = 1e-9 * (double)__atomic_load_n(&total_ns[f], __ATOMIC_RELAXED);
}

const char *opprof_name(OpprofFamily f) {
    static const char *const names[OPPROF_N] = {"products", "attention", "norms",  "activations",
                                                "loss",     "optimizer", "reduce", "sync"};
    return f >= 0 && f < OPPROF_N ? names[f] : "?";
}
