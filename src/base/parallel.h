/* parallel.h: fork-join regions on a pool of threads; split [0, n) into one
 * contiguous range per thread. */
#ifndef GATELAB_PARALLEL_H
#define GATELAB_PARALLEL_H

#include <stddef.h>

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

#endif
