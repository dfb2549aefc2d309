/* outpath.c: see outpath.h. */
#define _POSIX_C_SOURCE 200809L
#include "outpath.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

typedef struct {
    const char *name;
    const char *magic; /* leading bytes of a file of this kind; NULL: the
                          caller's recognizer decides (a run file) */
    size_t magic_len;
} KindInfo;

#define M(s) s, sizeof s - 1
static const KindInfo KINDS[] = {
    [OUT_RUNFILE] = {"gatelab run file", NULL, 0},
    [OUT_PNG] = {"PNG image", M("\x89PNG\r\n\x1a\n")},
    [OUT_REPORT] = {"gatelab REPORT.md", M("# gatelab report")},
    [OUT_CSV] = {"gatelab results.csv", M("file,run,")},
    [OUT_GNUPLOT] = {"gatelab figure script or data", M(OUT_GNUPLOT_MAGIC)},
    [OUT_SLURM] = {"gatelab Slurm script", M("#!/bin/bash\n#SBATCH --job-name=gatelab-")},
    [OUT_SWEEP_TSV] = {"gatelab sweep_status.tsv", M("name\tseed\texit\t")},
    [OUT_SVG] = {"SVG image", M("<?xml")},
    [OUT_PDF] = {"PDF document", M("%PDF-")},
    [OUT_JSONL] = {"gatelab metrics log", M("{\"event\":\"start\"")},
};
#undef M

const char *outpath_kind_name(OutKind kind) {
    return (unsigned)kind < sizeof KINDS / sizeof KINDS[0] ? KINDS[kind].name : "?";
}

/* 1 when the file starts with the kind's magic bytes. */
static int has_magic(const char *path, const KindInfo *k) {
    char buf[64];
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, k->magic_len < sizeof buf ? k->magic_len : sizeof buf);
    close(fd);
    return n == (ssize_t)k->magic_len && memcmp(buf, k->magic, k->magic_len) == 0;
}

int outpath_check_with(const char *path, OutKind kind, int (*is_ours)(const char *path),
                       int overwrite, char *err, size_t errlen) {
    struct stat st;
    if (!path || !*path) return seterr(err, errlen, "output path is empty");
    if ((unsigned)kind >= sizeof KINDS / sizeof KINDS[0])
        return seterr(err, errlen, "%s: unknown output kind", path);
    const KindInfo *k = &KINDS[kind];
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT) return 0; /* a new path */
        return seterr(err, errlen, "%s: cannot check the output path: %s", path, strerror(errno));
    }
    if (S_ISLNK(st.st_mode))
        return seterr(err, errlen,
                      "%s is a symbolic link; refusing to write through it "
                      "(give the real path)",
                      path);
    if (S_ISDIR(st.st_mode))
        return seterr(err, errlen, "%s is a directory, not a %s", path, k->name);
    if (!S_ISREG(st.st_mode))
        return seterr(err, errlen, "%s is not a regular file; refusing to overwrite it", path);
    int ours = st.st_size == 0 || (is_ours ? is_ours(path) : k->magic && has_magic(path, k));
    if (!ours)
        return seterr(err, errlen,
                      "%s exists and is not a %s; refusing to overwrite it "
                      "(move it away first)",
                      path, k->name);
    if (!overwrite)
        return seterr(err, errlen,
                      "%s exists (finished results are never overwritten; "
                      "use --force)",
                      path);
    /* a file its mode keeps from its owner (even from root), or that we
     * may not write, is not ours to replace */
    if (!(st.st_mode & S_IWUSR) || access(path, W_OK) != 0)
        return seterr(err, errlen,
                      "%s is not writable (mode %04o); refusing to replace it "
                      "(chmod u+w it first)",
                      path, (unsigned)(st.st_mode & 07777));
    return 0;
}

int outpath_check(const char *path, OutKind kind, int overwrite, char *err, size_t errlen) {
    return outpath_check_with(path, kind, NULL, overwrite, err, errlen);
}
