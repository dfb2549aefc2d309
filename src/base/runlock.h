/* runlock.h: one writer per run file. Every writer of RUN.h5
 * (train, resume, eval; a sweep through its train and eval children) holds
 * an exclusive flock(2) on RUN.h5.lock for as long as it writes. The lock
 * file holds the holder's pid ("pid 1234\n") so a refused writer can name
 * it. A holder that dies releases the lock with its file descriptor, so a
 * stale lock file never blocks: the next writer removes it and puts its
 * own. A lock file is only ever made fresh (under a temporary name, then
 * linked into place): an existing file is never opened for writing, and
 * one that is not a gatelab lock file (a link, a FIFO, a file with other
 * content or other hard links) is refused with a reason and left alone.
 * Taking the lock also removes the temporaries a killed writer left
 * beside RUN.h5 and RUN.h5.ckpt (atomic_write.h). */
#ifndef GATELAB_RUNLOCK_H
#define GATELAB_RUNLOCK_H

#include <stddef.h>

typedef struct {
    int fd;          /* -1 when not held */
    int refused;     /* set by a refusal that is bad input: another process
                      * holds the lock, or its path is not a lock file */
    char path[4200]; /* RUN.h5.lock */
} RunLock;

/* Take the lock beside run_path at once, or refuse: -1 with a one-line
 * reason and l->refused set when another process holds it (naming its
 * pid) or the lock path is not a lock file (bad input, exit 2); -1 with
 * refused clear when the lock file cannot be made, e.g. an unwritable
 * directory (a failure, exit 1). */
int runlock_acquire(RunLock *l, const char *run_path, char *err, size_t errlen);
/* Release (and remove) a held lock; a no-op on one not held. */
void runlock_release(RunLock *l);

/* 1 when another process holds the lock of run_path right now, else 0
 * (never waits; takes and drops a shared lock to find out). */
int runlock_held(const char *run_path);

/* Parse a lock file's contents: "pid N" and an optional newline, N a
 * positive decimal below 2^31. 0 and *pid on success, -1 otherwise. */
int runlock_parse(const char *buf, size_t n, long *pid);

#endif
