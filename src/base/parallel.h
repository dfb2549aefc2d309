/* parallel.h: fork-join regions on a pool of threads; split [0, n) into one
 * contiguous range per thread. */
#ifndef GATELAB_PARALLEL_H
#define GATELAB_PARALLEL_H

#include <stdatomic.h>
#include <stddef.h>

/* Where part t of nt parts of [0, n) starts (part t is [parallel_split(n,
 * t, nt), parallel_split(n, t + 1, nt))): the one split of parallel_for,
 * the trainer's shards over its threads and its element ranges. */
size_t parallel_split(size_t n, int t, int nt);

typedef void (*RangeFn)(void *ctx, size_t i0, size_t i1);
/* fn over [0, n) on up to `threads` threads (the caller is one of them);
 * runs serially when a thread cannot be started. */
void parallel_for(int threads, size_t n, RangeFn fn, void *ctx);

typedef void (*TeamFn)(void *ctx, int t, int nt);
/* fn(ctx, t, nt) for t = 0 .. nt - 1 at once, nt = threads (1 to 64), the
 * caller running t = 0; returns when every t has returned. The threads
 * come from a pool started once and compute in the caller's
 * floating-point mode (fpmode.h). */
void parallel_team(int threads, TeamFn fn, void *ctx);

/* Inside a region: waits until *flag is nonzero (acquire), spinning, with a
 * yield now and then so that more threads than cores still finish. Only
 * parts t > 0 may wait on what part 0 sets: part 0 runs first when a
 * region's parts run one after another. */
void parallel_wait_set(const atomic_int *flag);

#endif
