/* util.h: small helpers every module shares: errors, allocation, time. */
#ifndef GATELAB_UTIL_H
#define GATELAB_UTIL_H

#include <stddef.h>
#include <stdio.h>

/* Write a one-line error into err[errlen] (printf-style); returns -1 so
 * callers can `return seterr(err, len, "...")`. */
int seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* calloc of n floats with an overflow check; NULL on failure. */
float *falloc(size_t n);
/* Aligned (64 B) zeroed allocation of bytes; NULL on failure. */
void *zalloc_aligned(size_t bytes);

/* Monotonic wall clock in seconds. */
double now_seconds(void);

/* Copy src into dst[dstlen]; returns -1 when it does not fit. */
int str_copy(char *dst, size_t dstlen, const char *src);

int file_exists(const char *path);

/* Copy a file byte for byte (to is created or truncated). -1 with a reason
 * naming the path; a partial copy is removed. */
int file_copy(const char *from, const char *to, char *err, size_t errlen);

/* Make tmp durable (fsync) and rename it over path: the atomic last step of
 * every update of a finished file. On failure tmp is removed. */
int file_replace(const char *tmp, const char *path, char *err, size_t errlen);

/* path[n] = the repository file rel (e.g. "tests/reference/x.py"): under
 * the source root configured at build time when it is there, else beside
 * the binary's parent directory (build/.. of /proc/self/exe). -1 if
 * neither exists. Works from any working directory. */
int source_file(const char *rel, char *path, size_t n);

#endif
