/* stream.h: software prefetch for the elementwise passes over activations.
 *
 * A pass of the step mostly reads what was written long before (the
 * backward reading a layer's inputs after every later layer's work) and,
 * at the larger presets (tens of MB of activations per shard), from the
 * last-level cache. The hardware's prefetch stops
 * at each 4 KiB page; these hints run STREAM_AHEAD floats ahead of the
 * loop across pages. A loop runs in chunks of STREAM_CHUNK floats and
 * hints the chunk STREAM_AHEAD floats on at the top of each. A hint
 * changes no value: every element's operations stay as they are. Used only
 * inside SIMD_KERNEL bodies and kernels of src/ops. Not a public interface:
 * ops.h is. */
#ifndef GATELAB_STREAM_H
#define GATELAB_STREAM_H

#include <stddef.h>

#define STREAM_CHUNK 256
#define STREAM_AHEAD 4096
#define STREAM_LINE 16 /* floats per 64-byte cache line */

/* Hints p[from, to) to be read (write: to be written); nothing for a NULL
 * p. */
static inline void stream_hint_range(const float *p, size_t from, size_t to, int write) {
    if (!p) return;
    for (size_t k = from; k < to; k += STREAM_LINE) {
        if (write) __builtin_prefetch(p + k, 1, 2);
        else __builtin_prefetch(p + k, 0, 2);
    }
}

/* Hints the part below n of p[i + STREAM_AHEAD, i + STREAM_AHEAD +
 * len): the chunk of len floats STREAM_AHEAD on from the one at i. */
static inline void stream_hint_len(const float *p, size_t i, size_t len, size_t n, int write) {
    const size_t k = i + STREAM_AHEAD;
    if (k < n) stream_hint_range(p, k, n - k > len ? k + len : n, write);
}

/* The same for a chunk of STREAM_CHUNK floats. */
static inline void stream_hint(const float *p, size_t i, size_t n, int write) {
    stream_hint_len(p, i, STREAM_CHUNK, n, write);
}

/* The end of the chunk that starts at i. */
static inline size_t stream_end(size_t i, size_t n) {
    return n - i > STREAM_CHUNK ? i + STREAM_CHUNK : n;
}

#endif
