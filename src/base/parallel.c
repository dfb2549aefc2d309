/* parallel.c: a tiny fork-join over pthreads. */
#include "parallel.h"

#include <pthread.h>

#include "opprof.h"

#define MAX_T 64

typedef struct {
    RangeFn fn;
    void *ctx;
    size_t i0, i1;
} Job;

static void *run(void *p) {
    Job *j = p;
    j->fn(j->ctx, j->i0, j->i1);
    return NULL;
}

void parallel_for(int threads, size_t n, RangeFn fn, void *ctx) {
    int t = threads < 1 ? 1 : threads > MAX_T ? MAX_T : threads;
    if ((size_t)t > n) t = n ? (int)n : 1;
    Job jobs[MAX_T];
    pthread_t th[MAX_T];
    int started[MAX_T] = {0};
    for (int k = 0; k < t; k++)
        jobs[k] = (Job){fn, ctx, n * (size_t)k / (size_t)t, n * (size_t)(k + 1) / (size_t)t};
    int prof = opprof_enter(OPPROF_SYNC);
    for (int k = 1; k < t; k++) started[k] = pthread_create(&th[k], NULL, run, &jobs[k]) == 0;
    opprof_leave(prof);
    run(&jobs[0]);
    prof = opprof_enter(OPPROF_SYNC);
    for (int k = 1; k < t; k++)
        if (started[k]) pthread_join(th[k], NULL);
        else run(&jobs[k]);
    opprof_leave(prof);
}
