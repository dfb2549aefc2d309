/* parallel.c: fork-join over a pool of threads started once.
 *
 * The pool's threads wait for a region between uses, spinning briefly (a
 * training step's regions follow each other within microseconds) and then
 * sleeping on a condition variable. A region runs on the pool when it is
 * free; a region started while the pool is busy (from another thread, or
 * nested inside a region) runs on threads started for it alone, as does
 * one whose pool threads could not be started. Each region's threads take
 * the caller's floating-point mode (fpmode.h). Which thread runs which
 * part never changes what a part computes.
 */
#include "parallel.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "fpmode.h"
#include "opprof.h"

#define MAX_T 64
enum { SPIN = 1 << 10 }; /* pause loops (some microseconds) before a waiting thread sleeps */

typedef struct {
    TeamFn fn;
    void *ctx;
    int t, nt, flush;
} Part;

static void *run_part(void *p) {
    Part *j = p;
    fp_flush_subnormals(j->flush);
    j->fn(j->ctx, j->t, j->nt);
    return NULL;
}

/* A region on threads started for it alone. */
static void team_fresh(int nt, TeamFn fn, void *ctx, int flush) {
    Part parts[MAX_T];
    pthread_t th[MAX_T];
    int started[MAX_T] = {0};
    int prof = opprof_enter(OPPROF_SYNC);
    for (int k = 0; k < nt; k++) parts[k] = (Part){fn, ctx, k, nt, flush};
    for (int k = 1; k < nt; k++)
        started[k] = pthread_create(&th[k], NULL, run_part, &parts[k]) == 0;
    opprof_leave(prof);
    fn(ctx, 0, nt);
    prof = opprof_enter(OPPROF_SYNC);
    for (int k = 1; k < nt; k++)
        if (started[k]) pthread_join(th[k], NULL);
        else fn(ctx, k, nt);
    opprof_leave(prof);
}

static struct {
    pthread_mutex_t busy; /* held by the region that runs on the pool */
    pthread_mutex_t lock; /* with wake and done: the sleeping side */
    pthread_cond_t wake, done;
    int started;          /* pool threads running (threads 1..started) */
    unsigned born[MAX_T]; /* gen when pool thread k was started */
    Part region;          /* the current region; pool thread k runs part k < nt */
    atomic_uint gen;      /* bumped once per region */
    atomic_int pending;   /* pool threads not yet done with the current region (all of
                             them take part, the idle ones at once) */
} pool = {.busy = PTHREAD_MUTEX_INITIALIZER,
          .lock = PTHREAD_MUTEX_INITIALIZER,
          .wake = PTHREAD_COND_INITIALIZER,
          .done = PTHREAD_COND_INITIALIZER};

static inline void pause_once(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void *pool_thread(void *p) {
    int k = (int)(size_t)p;
    unsigned seen = pool.born[k]; /* the region count when it was started */
    for (;;) {
        unsigned g;
        int spins = 0;
        while ((g = atomic_load_explicit(&pool.gen, memory_order_acquire)) == seen &&
               ++spins < SPIN)
            pause_once();
        if (g == seen) {
            pthread_mutex_lock(&pool.lock);
            while ((g = atomic_load_explicit(&pool.gen, memory_order_acquire)) == seen)
                pthread_cond_wait(&pool.wake, &pool.lock);
            pthread_mutex_unlock(&pool.lock);
        }
        seen = g;
        Part j = pool.region;
        j.t = k;
        if (k < j.nt) run_part(&j);
        if (atomic_fetch_sub_explicit(&pool.pending, 1, memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&pool.lock);
            pthread_cond_signal(&pool.done);
            pthread_mutex_unlock(&pool.lock);
        }
    }
    return NULL;
}

/* Starts pool threads until nt - 1 of them run; returns how many run. */
static int pool_grow(int nt) {
    while (pool.started < nt - 1) {
        pthread_t th;
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        pool.born[pool.started + 1] = atomic_load_explicit(&pool.gen, memory_order_relaxed);
        int ok = pthread_create(&th, &at, pool_thread, (void *)(size_t)(pool.started + 1)) == 0;
        pthread_attr_destroy(&at);
        if (!ok) break;
        pool.started++;
    }
    return pool.started;
}

static void team_pool(int nt, TeamFn fn, void *ctx, int flush) {
    int prof = opprof_enter(OPPROF_SYNC);
    pool.region = (Part){fn, ctx, 0, nt, flush};
    atomic_store_explicit(&pool.pending, pool.started, memory_order_relaxed);
    pthread_mutex_lock(&pool.lock);
    atomic_fetch_add_explicit(&pool.gen, 1, memory_order_acq_rel);
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.lock);
    opprof_leave(prof);
    fn(ctx, 0, nt);
    prof = opprof_enter(OPPROF_SYNC);
    int spins = 0;
    while (atomic_load_explicit(&pool.pending, memory_order_acquire) > 0 && ++spins < SPIN)
        pause_once();
    if (atomic_load_explicit(&pool.pending, memory_order_acquire) > 0) {
        pthread_mutex_lock(&pool.lock);
        while (atomic_load_explicit(&pool.pending, memory_order_acquire) > 0)
            pthread_cond_wait(&pool.done, &pool.lock);
        pthread_mutex_unlock(&pool.lock);
    }
    opprof_leave(prof);
}

/* A child of fork has none of the pool's threads: it starts its own. */
static void pool_after_fork(void) {
    pthread_mutex_init(&pool.busy, NULL);
    pthread_mutex_init(&pool.lock, NULL);
    pthread_cond_init(&pool.wake, NULL);
    pthread_cond_init(&pool.done, NULL);
    pool.started = 0;
}

static pthread_once_t fork_hook = PTHREAD_ONCE_INIT;
static void fork_hook_install(void) { pthread_atfork(NULL, NULL, pool_after_fork); }

void parallel_team(int threads, TeamFn fn, void *ctx) {
    int nt = threads < 1 ? 1 : threads > MAX_T ? MAX_T : threads;
    if (nt == 1) {
        fn(ctx, 0, 1);
        return;
    }
    int flush = fp_flushing();
    pthread_once(&fork_hook, fork_hook_install);
    if (pthread_mutex_trylock(&pool.busy) != 0) {
        team_fresh(nt, fn, ctx, flush);
        return;
    }
    if (pool_grow(nt) >= nt - 1) team_pool(nt, fn, ctx, flush);
    else team_fresh(nt, fn, ctx, flush);
    pthread_mutex_unlock(&pool.busy);
}

size_t parallel_split(size_t n, int t, int nt) { return n * (size_t)t / (size_t)nt; }

void parallel_wait_set(const atomic_int *flag) {
    for (unsigned spins = 1; !atomic_load_explicit(flag, memory_order_acquire); spins++) {
        if (spins % 1024 == 0) sched_yield();
        else pause_once();
    }
}

typedef struct {
    RangeFn fn;
    void *ctx;
    size_t n;
} ForCtx;

static void for_part(void *p, int t, int nt) {
    const ForCtx *f = p;
    f->fn(f->ctx, parallel_split(f->n, t, nt), parallel_split(f->n, t + 1, nt));
}

void parallel_for(int threads, size_t n, RangeFn fn, void *ctx) {
    int t = threads < 1 ? 1 : threads > MAX_T ? MAX_T : threads;
    if ((size_t)t > n) t = n ? (int)n : 1;
    ForCtx f = {fn, ctx, n};
    parallel_team(t, for_part, &f);
}
