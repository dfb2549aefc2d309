/* testutil.h: helpers for tests that run the gatelab binary. */
#ifndef GATELAB_TESTUTIL_H
#define GATELAB_TESTUTIL_H

#include <stddef.h>

/* Source root and binary from the environment meson sets (GATELAB_SRC,
 * GATELAB_BIN), with fallbacks for running a test by hand from build/. */
const char *tu_src(void);
const char *tu_bin(void);

/* A fresh temporary directory (mkdtemp) under /tmp; static storage. */
const char *tu_tmpdir(void);

/* Run "gatelab ARGS" (shell words) with stdout+stderr into OUTFILE; returns
 * the exit code, or 128+signal when killed. */
int tu_run(const char *outfile, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Whole file into a malloc'd NUL-terminated buffer (NULL if unreadable). */
char *tu_slurp(const char *path, size_t *len);

/* cmocka-assert that two runs finished with the same step sequence (n rows)
 * and bit-identical loss and grad norm at every step; a failure names the
 * first difference. */
void tu_assert_same_history(const char *a, const char *b, size_t n);

/* Count lines in a file that are not empty. */
int tu_count_lines(const char *path);

#endif
