/* gitrun.h: git as an external program, for the pre-registration checks
 * (src/sweep/sweepgit.c, analysis/protocol/protocol_check.c). git runs with a fixed
 * argv, no shell, stdin from /dev/null, stderr to /dev/null, and an
 * environment without any GIT_* variable: GIT_DIR, GIT_WORK_TREE,
 * GIT_INDEX_FILE and the like would otherwise point it at another
 * repository than the one the file lives in. */
#ifndef GATELAB_GITRUN_H
#define GATELAB_GITRUN_H

#include <stddef.h>

/* Runs `git -C dir ARGS...` (args NULL-ended, at most 12), its stdout into
 * out[len] (NUL-ended; *got, when not NULL, the bytes read). Returns git's
 * exit status; -1 when git cannot be run or args holds more than 12; -2
 * when its output does not fit in len - 1 bytes. */
int git_run(const char *dir, const char *const *args, char *out, size_t len, size_t *got);

/* git_run for a one-line answer: trailing newlines removed. */
int git_line(const char *dir, const char *const *args, char *out, size_t len);

#endif
