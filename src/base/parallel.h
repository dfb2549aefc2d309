/* parallel.h: split [0, n) into one contiguous range per thread. */
#ifndef GATELAB_PARALLEL_H
#define GATELAB_PARALLEL_H

#include <stddef.h>

typedef void (*RangeFn)(void *ctx, size_t i0, size_t i1);
/* fn over [0, n) on up to `threads` threads (the caller is one of them);
 * runs serially when a thread cannot be started. */
void parallel_for(int threads, size_t n, RangeFn fn, void *ctx);

#endif
