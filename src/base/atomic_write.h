/* atomic_write.h: how every finished output is written (REPORT.md,
 * results.csv, figures and their .gp/.dat, Slurm scripts, run files,
 * checkpoints). The bytes go to a fresh temporary beside the target,
 * "TARGET.XXXXXX.tmp", created with O_EXCL (never opened through a name
 * that already existed, so never through a link to someone's file), and
 * the finished temporary is renamed over the target. A kill, a full disk
 * or an error at any moment leaves the previous complete target as it
 * was. Every temporary is registered with exitclean.h while it exists, so
 * an interrupted command removes it. */
#ifndef GATELAB_ATOMIC_WRITE_H
#define GATELAB_ATOMIC_WRITE_H

#include <stddef.h>
#include <stdio.h>

/* Room for a temporary's name (PATH_MAX): a target path must leave room
 * for the ".XXXXXX.tmp" suffix. */
#define ATOMIC_TMP_MAX 4096

/* Create a fresh temporary beside path (mode 0666 minus the umask). Its
 * descriptor (O_CLOEXEC), and its name in tmp[n]; -1 with one line naming
 * path when the directory refuses it. */
int atomic_create(const char *path, char *tmp, size_t n, char *err, size_t errlen);
/* atomic_create as a stdio stream open for writing; NULL on failure. */
FILE *atomic_fopen(const char *path, char *tmp, size_t n, char *err, size_t errlen);
/* Put the finished temporary tmp in place of path: fsync it, rename it
 * over path (replace set) or only where path does not exist yet (replace
 * clear: -1 "PATH exists ..." with errno EEXIST), then fsync the
 * directory. tmp is gone afterwards, also on failure (path then keeps its
 * old content); on failure errno says why. */
int atomic_commit(const char *tmp, const char *path, int replace, char *err, size_t errlen);
/* Close f, checking that every write reached the file (a full disk is an
 * error), then atomic_commit(tmp, path, replace = 1). -1 with one line
 * naming path; the temporary is removed. */
int atomic_fcommit(FILE *f, const char *tmp, const char *path, char *err, size_t errlen);
/* Remove an unfinished temporary (a writer that gives up). */
void atomic_discard(const char *tmp);
/* A fresh temporary beside from holding a byte copy of it with its mode
 * (600 stays 600), for edits of a finished file that replace it when
 * complete. 0 and tmp[n]; -1 with one line (nothing left behind). */
int atomic_copy(const char *from, char *tmp, size_t n, char *err, size_t errlen);

/* Remove the temporaries of path that a killed writer left (names
 * "PATH.XXXXXX.tmp", regular files only). For a caller that owns path's
 * writes (it holds path's lock, runlock.h). The number removed. */
int atomic_remove_stale(const char *path);

#endif
