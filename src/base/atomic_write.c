/* atomic_write.c: see atomic_write.h. */
#include "atomic_write.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exitclean.h"
#include "util.h"

#define SUFFIX ".tmp"

int atomic_create(const char *path, char *tmp, size_t n, char *err, size_t errlen) {
    if (!path || !*path) return seterr(err, errlen, "output path is empty");
    int k = snprintf(tmp, n, "%s.XXXXXX" SUFFIX, path);
    if (k < 0 || (size_t)k >= n) return seterr(err, errlen, "%s: path too long", path);
    sigset_t old;
    exitclean_hold(&old); /* made and registered as one step */
    int fd = mkostemps(tmp, (int)strlen(SUFFIX), O_CLOEXEC);
    int e = errno;
    if (fd >= 0) exitclean_add(tmp);
    exitclean_release(&old);
    if (fd < 0)
        return seterr(err, errlen, "%s: cannot create a temporary beside it: %s", path,
                      strerror(e));
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0) { /* mkostemps makes 0600 */
        e = errno;
        close(fd);
        atomic_discard(tmp);
        return seterr(err, errlen, "%s: cannot set its mode: %s", tmp, strerror(e));
    }
    return fd;
}

FILE *atomic_fopen(const char *path, char *tmp, size_t n, char *err, size_t errlen) {
    int fd = atomic_create(path, tmp, n, err, errlen);
    if (fd < 0) return NULL;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        seterr(err, errlen, "%s: %s", path, strerror(errno));
        close(fd);
        atomic_discard(tmp);
    }
    return f;
}

void atomic_discard(const char *tmp) {
    unlink(tmp);
    exitclean_forget(tmp);
}

/* fsync the directory holding path, so a rename in it survives a crash. */
static int fsync_dir_of(const char *path) {
    char dir[ATOMIC_TMP_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    int fd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

/* Rename tmp to path where path does not exist yet; EEXIST otherwise. */
static int rename_new(const char *tmp, const char *path) {
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0) return 0;
    if (errno != EINVAL && errno != ENOSYS) return -1;
    if (link(tmp, path) != 0) return -1; /* a file system without RENAME_NOREPLACE */
    unlink(tmp);
    return 0;
}

int atomic_commit(const char *tmp, const char *path, int replace, char *err, size_t errlen) {
    int fd = open(tmp, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    int rc = fd < 0 || fsync(fd) != 0 ? -1 : 0;
    int e = errno;
    if (fd >= 0) close(fd);
    if (rc == 0) rc = replace ? rename(tmp, path) : rename_new(tmp, path);
    if (rc != 0) {
        e = errno;
        atomic_discard(tmp);
        if (e == EEXIST)
            seterr(err, errlen, "%s exists (finished results are never overwritten; use --force)",
                   path);
        else seterr(err, errlen, "cannot commit %s: %s", path, strerror(e));
        errno = e; /* callers tell "something is there" (EEXIST) from a failure */
        return -1;
    }
    exitclean_forget(tmp);
    /* the rename is done; a failed directory fsync only weakens durability
     * against power loss, so it is reported but the new file stays */
    if (fsync_dir_of(path) != 0)
        return seterr(err, errlen, "%s: fsync of its directory failed: %s", path, strerror(errno));
    return 0;
}

int atomic_fcommit(FILE *f, const char *tmp, const char *path, char *err, size_t errlen) {
    int bad = ferror(f);
    errno = 0;
    if (fflush(f) != 0 || bad) bad = errno ? errno : EIO;
    if (fclose(f) != 0 && !bad) bad = errno ? errno : EIO;
    if (bad) {
        atomic_discard(tmp);
        return seterr(err, errlen, "%s: write failed: %s", path, strerror(bad));
    }
    return atomic_commit(tmp, path, 1, err, errlen);
}

int atomic_copy(const char *from, char *tmp, size_t n, char *err, size_t errlen) {
    int in = open(from, O_RDONLY | O_CLOEXEC);
    if (in < 0) return seterr(err, errlen, "cannot open %s: %s", from, strerror(errno));
    struct stat st;
    if (fstat(in, &st) != 0) {
        int e = errno;
        close(in);
        return seterr(err, errlen, "cannot stat %s: %s", from, strerror(e));
    }
    int out = atomic_create(from, tmp, n, err, errlen), rc = out < 0 ? -1 : 0;
    /* the copy replaces from: it keeps from's mode, not the umask's */
    if (rc == 0 && fchmod(out, st.st_mode & 07777) != 0)
        rc = seterr(err, errlen, "cannot copy %s: %s", from, strerror(errno));
    char buf[1 << 16];
    while (rc == 0) {
        errno = 0;
        ssize_t k = read(in, buf, sizeof buf);
        if (k == 0) break;
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 || write(out, buf, (size_t)k) != k) {
            int e = k < 0 || errno ? errno : ENOSPC; /* a short write: the disk is full */
            rc = seterr(err, errlen, "cannot copy %s: %s", from, strerror(e));
        }
    }
    if (out >= 0 && close(out) != 0 && rc == 0)
        rc = seterr(err, errlen, "cannot copy %s: %s", from, strerror(errno));
    close(in);
    if (rc != 0 && out >= 0) atomic_discard(tmp);
    return rc;
}

int atomic_remove_stale(const char *path) {
    char dir[ATOMIC_TMP_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    size_t bl = strlen(base);
    DIR *d = opendir(dirname(dir));
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        const char *x = e->d_name; /* BASE . six [A-Za-z0-9] SUFFIX */
        if (strncmp(x, base, bl) || x[bl] != '.' || strlen(x) != bl + 7 + strlen(SUFFIX) ||
            strcmp(x + bl + 7, SUFFIX))
            continue;
        int ok = 1;
        for (size_t i = bl + 1; i < bl + 7; i++) ok &= isalnum((unsigned char)x[i]) != 0;
        struct stat st;
        if (ok && fstatat(dirfd(d), x, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
            n += unlinkat(dirfd(d), x, 0) == 0;
    }
    if (d) closedir(d);
    return n;
}
