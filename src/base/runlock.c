/* runlock.c: see runlock.h. */
#define _DEFAULT_SOURCE
#include "runlock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_write.h"
#include "exitclean.h"
#include "util.h"

int runlock_parse(const char *buf, size_t n, long *pid) {
    if (!buf || n < 5 || memcmp(buf, "pid ", 4) != 0) return -1;
    if (buf[n - 1] == '\n') n--;
    long v = 0;
    size_t i = 4;
    if (i >= n) return -1;
    for (; i < n; i++) {
        if (buf[i] < '0' || buf[i] > '9' || i - 4 >= 10) return -1;
        v = v * 10 + (buf[i] - '0');
    }
    if (v <= 0 || v > 0x7fffffffL) return -1;
    *pid = v;
    return 0;
}

/* The holder named in the lock file, for the refusal message. */
static void holder(int fd, char *out, size_t len) {
    char buf[64];
    long pid;
    ssize_t n = pread(fd, buf, sizeof buf, 0);
    if (n > 0 && runlock_parse(buf, (size_t)n, &pid) == 0) snprintf(out, len, "pid %ld", pid);
    else snprintf(out, len, "pid unknown");
}

/* The lock file we hold must still be the one at the path: a holder
 * removes it on release, and a writer that opened it just before holds a
 * lock on a removed file, which protects nothing. */
static int still_linked(int fd, const char *path) {
    struct stat a, b;
    return fstat(fd, &a) == 0 && lstat(path, &b) == 0 && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
}

/* Put a fresh lock file, already holding our pid and flocked, at l->path
 * where nothing is there: 0 and l->fd; 1 when a file is there; -1 with a
 * reason. The file is built under a temporary name (atomic_write.h), so
 * no existing file is ever opened for writing. */
static int place_new(RunLock *l, char *err, size_t errlen) {
    char tmp[ATOMIC_TMP_MAX], buf[32];
    int fd = atomic_create(l->path, tmp, sizeof tmp, err, errlen);
    if (fd < 0) return -1;
    int k = snprintf(buf, sizeof buf, "pid %ld\n", (long)getpid());
    if (pwrite(fd, buf, (size_t)k, 0) != k || flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        close(fd);
        atomic_discard(tmp);
        return seterr(err, errlen, "%s: cannot write the lock file: %s", l->path, strerror(e));
    }
    sigset_t old; /* placed and registered as one step: an interrupt removes it */
    exitclean_hold(&old);
    int rc = atomic_commit(tmp, l->path, 0, err, errlen);
    int e = errno;
    if (rc == 0) exitclean_add(l->path);
    exitclean_release(&old);
    if (rc != 0) {
        close(fd);
        /* a file was there at the rename, even if its holder has removed
         * it since: the caller looks again */
        return e == EEXIST ? 1 : -1;
    }
    l->fd = fd;
    return 0;
}

/* A file already at l->path: refuse it (busy, or not a lock file), or
 * remove it when it is the stale lock of a writer that died. 0 when it
 * is gone (try again), -1 with a reason. Nothing here writes to it. */
static int handle_existing(RunLock *l, const char *run_path, char *err, size_t errlen) {
    int fd = open(l->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 && errno == ENOENT) return 0; /* released meanwhile */
    l->refused = fd < 0 && errno == ELOOP;
    if (l->refused)
        return seterr(err, errlen,
                      "%s is a symbolic link, not a gatelab lock file; refusing to write %s "
                      "(remove the link if no gatelab writer runs)",
                      l->path, run_path);
    if (fd < 0)
        return seterr(err, errlen, "%s: cannot open the lock file: %s", l->path, strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        l->refused = 1;
        return seterr(err, errlen,
                      "%s is %s, not a gatelab lock file; refusing to write %s "
                      "(remove it if no gatelab writer runs)",
                      l->path, file_kind(st.st_mode), run_path);
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        char who[64];
        holder(fd, who, sizeof who);
        close(fd);
        l->refused = e == EWOULDBLOCK;
        if (e == EWOULDBLOCK)
            return seterr(err, errlen,
                          "%s is being written by another process (%s, "
                          "lock %s); refusing a second writer",
                          run_path, who, l->path);
        return seterr(err, errlen, "%s: cannot lock: %s", l->path, strerror(e));
    }
    char buf[64];
    long pid;
    ssize_t n = pread(fd, buf, sizeof buf, 0);
    int ours = n == 0 || (n > 0 && runlock_parse(buf, (size_t)n, &pid) == 0);
    int rc = 0;
    l->refused = !ours || st.st_nlink != 1;
    if (l->refused)
        rc = seterr(err, errlen,
                    "%s exists and is not a gatelab lock file (%s); refusing to write %s "
                    "(move it away first)",
                    l->path, ours ? "it has other hard links" : "other content", run_path);
    else if (still_linked(fd, l->path)) unlink(l->path); /* a dead writer's lock */
    close(fd);
    return rc;
}

/* The lock holder owns the run's writes: the temporaries a killed writer
 * left beside RUN.h5 and RUN.h5.ckpt go. */
static void remove_stale(const char *run_path) {
    char ck[4200];
    atomic_remove_stale(run_path);
    if (snprintf(ck, sizeof ck, "%s.ckpt", run_path) < (int)sizeof ck) atomic_remove_stale(ck);
}

int runlock_acquire(RunLock *l, const char *run_path, char *err, size_t errlen) {
    l->fd = -1;
    l->refused = 0;
    if (snprintf(l->path, sizeof l->path, "%s.lock", run_path) >= (int)sizeof l->path)
        return seterr(err, errlen, "%s: path too long for its lock file", run_path);
    for (int tries = 0; tries < 100; tries++) {
        int rc = place_new(l, err, errlen);
        if (rc == 0) remove_stale(run_path);
        if (rc <= 0) return rc;
        if (handle_existing(l, run_path, err, errlen) != 0) return -1;
    }
    return seterr(err, errlen, "%s: the lock file keeps changing; another writer?", l->path);
}

void runlock_release(RunLock *l) {
    if (!l || l->fd < 0) return;
    sigset_t old;
    exitclean_hold(&old);
    unlink(l->path); /* while still held: a waiter sees the file gone */
    exitclean_forget(l->path);
    exitclean_release(&old);
    close(l->fd);
    l->fd = -1;
    l->refused = 0;
}

int runlock_held(const char *run_path) {
    char path[4200];
    if (snprintf(path, sizeof path, "%s.lock", run_path) >= (int)sizeof path) return 0;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return 0;
    struct stat st;
    int held = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && flock(fd, LOCK_SH | LOCK_NB) != 0 &&
               errno == EWOULDBLOCK;
    close(fd); /* drops a shared lock we got */
    return held;
}
