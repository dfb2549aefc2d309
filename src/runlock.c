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

int runlock_acquire(RunLock *l, const char *run_path, char *err, size_t errlen) {
    l->fd = -1;
    l->busy = 0;
    if (snprintf(l->path, sizeof l->path, "%s.lock", run_path) >= (int)sizeof l->path)
        return seterr(err, errlen, "%s: path too long for its lock file", run_path);
    for (int tries = 0; tries < 100; tries++) {
        int fd = open(l->path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0)
            return seterr(err, errlen, "%s: cannot open the lock file: %s", l->path,
                          strerror(errno));
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            int e = errno;
            char who[64];
            holder(fd, who, sizeof who);
            close(fd);
            l->busy = e == EWOULDBLOCK;
            if (e == EWOULDBLOCK)
                return seterr(err, errlen,
                              "%s is being written by another process (%s, "
                              "lock %s); refusing a second writer",
                              run_path, who, l->path);
            return seterr(err, errlen, "%s: cannot lock: %s", l->path, strerror(e));
        }
        if (!still_linked(fd, l->path)) { /* lost a race with a release: again */
            close(fd);
            continue;
        }
        char buf[32];
        int k = snprintf(buf, sizeof buf, "pid %ld\n", (long)getpid());
        if (ftruncate(fd, 0) != 0 || pwrite(fd, buf, (size_t)k, 0) != k) {
            int e = errno;
            unlink(l->path);
            close(fd);
            return seterr(err, errlen, "%s: cannot write the lock file: %s", l->path, strerror(e));
        }
        l->fd = fd;
        return 0;
    }
    return seterr(err, errlen, "%s: the lock file keeps changing; another writer?", l->path);
}

void runlock_release(RunLock *l) {
    if (!l || l->fd < 0) return;
    unlink(l->path); /* while still held: a waiter sees the file gone */
    close(l->fd);
    l->fd = -1;
    l->busy = 0;
}
