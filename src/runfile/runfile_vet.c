/* runfile_vet.c: vetting a run file in a forked child that contains
 * crashes and hangs inside libhdf5 (rr_vet, runfile_read_priv.h). The
 * child opens the handle (runfile_read_handle.c) and walks the file with
 * the checked reads of runfile_read_util.c; it calls no typed reader, so
 * the typed readers and the vetting sit side by side over the handle and
 * runread_open (runfile_read.c) calls both from above. */
#include "runfile_read_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "h5util.h"
#include "runschema.h"
#include "util.h"

/* ---- vetting: contain crashes and hangs inside libhdf5 ----
 *
 * HDF5 1.10.8 is not hardened against hostile files: a corrupt global heap,
 * for one, makes H5HG_read overflow the heap or loop while converting a
 * variable-length string (found by tests/fuzz). No API-level check can see
 * that coming, so runread_open first does the tools' reads in a forked
 * child: if that child dies or hangs, the file is refused with one line
 * instead of taking the tool down. The child walks the file generically
 * (vet_walk: no typed reader): every attribute of /config, /summary and
 * each probe (the variable-length strings live there), and every numeric
 * dataset of the last probe (to stay cheap, only that one), /metrics/train
 * and /metrics/eval, each through the checked read rr_read_ds. It only calls
 * HDF5 and malloc (both fork-safe in a single-threaded caller; the
 * analysis tools are), writes nothing but a one-byte "done" to a pipe, and leaves with _exit so
 * no stdio buffer or atexit handler of the parent runs twice.
 * The child is also bounded: its address space may grow by at most
 * VET_MEM_MB plus VET_MEM_PER_BYTE times the file's size (a corrupt length
 * makes HDF5 allocate gigabytes for a 58 KB file), its wall and CPU time
 * by vet_seconds (5 s plus 1 s per 8 MiB of file, at most 60 s: a real
 * run file's reads take milliseconds per MiB), and it may write no file
 * and leave no core. An allocation refused inside HDF5 ends it with
 * VET_EXIT_NOMEM, which refuses the file before the parent repeats the
 * allocation in-process.
 * GATELAB_NO_VET=1 makes runread_open (runfile_read.c) skip it. */

#define VET_SECONDS_MIN 5
#define VET_SECONDS_MAX 60
#define VET_BYTES_PER_SECOND ((long long)8 << 20)
#define VET_MEM_MB 1024
#define VET_MEM_PER_BYTE 8 /* deflate on real arrays stays far below 8:1 */
#define VET_EXIT_NOMEM 3

/* A sanitizer runtime (ASan, libFuzzer) would otherwise report the child's
 * crash as the parent's (e.g. write a fuzzer crash artifact). Weak: NULL in
 * a build without sanitizers. */
extern void __sanitizer_set_death_callback(void (*cb)(void)) __attribute__((weak));

/* Read every attribute of /NAME the way the tools would (string or number). */
static herr_t vet_attr_cb(hid_t loc, const char *name, const H5A_info_t *info, void *data) {
    (void)info;
    (void)data;
    char *s;
    double v;
    if (h5u_attr_read_str(loc, name, &s) == 0) free(s);
    else rr_attr_double(loc, name, &v);
    return 0;
}
static void vet_group_attrs(hid_t file, const char *name) {
    hid_t g = rr_open_group(file, name);
    if (g < 0) return;
    H5Aiterate2(g, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, vet_attr_cb, NULL);
    H5Gclose(g);
}

/* Dataset name of g read as rr_read_ds reads it for a typed reader: an
 * integer or float dataset of rank 0..8, its own shape, converted to the
 * native type of its size; anything else is left to the typed readers,
 * which refuse it in the parent. */
static void vet_dataset(hid_t g, const char *name) {
    hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
    if (d < 0) return;
    hid_t ft = H5Dget_type(d), sp = H5Dget_space(d);
    H5T_class_t c = ft >= 0 ? H5Tget_class(ft) : H5T_NO_CLASS;
    size_t size = ft >= 0 ? H5Tget_size(ft) : 0;
    int rank = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
    if (sp >= 0) H5Sclose(sp);
    if (ft >= 0) H5Tclose(ft);
    H5Dclose(d);
    if (rank < 0 || rank > 8 || (c != H5T_INTEGER && c != H5T_FLOAT)) return;
    int wide = size > 4;
    hid_t mem = c == H5T_FLOAT ? (wide ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT)
                               : (wide ? H5T_NATIVE_LLONG : H5T_NATIVE_INT);
    size_t el = c == H5T_FLOAT ? (wide ? sizeof(double) : sizeof(float))
                               : (wide ? sizeof(long long) : sizeof(int));
    hsize_t want[8] = {0};
    void *buf;
    char err[256];
    if (rr_read_ds(g, name, "", rank, want, c, mem, el, &buf, err, sizeof err) == 0) free(buf);
}

/* How deep vet_group_data goes below the group it is given (a probe's
 * hidden/ is one down); a link back up cannot make it loop. */
#define VET_DEPTH 2

typedef struct {
    int depth;
} VetData;

static herr_t vet_data_cb(hid_t g, const char *name, const H5L_info_t *info, void *data) {
    (void)info;
    const VetData *v = data;
    hid_t o = H5Oopen(g, name, H5P_DEFAULT);
    if (o < 0) return 0;
    H5I_type_t t = H5Iget_type(o);
    if (t == H5I_DATASET) vet_dataset(g, name);
    else if (t == H5I_GROUP && v->depth < VET_DEPTH) {
        VetData down = {v->depth + 1};
        H5Literate(o, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, vet_data_cb, &down);
    }
    H5Oclose(o);
    return 0;
}

/* Every numeric dataset of group /NAME and of its groups (VET_DEPTH). */
static void vet_group_data(hid_t file, const char *name) {
    hid_t g = rr_open_group(file, name);
    if (g < 0) return;
    VetData top = {0};
    H5Literate(g, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, vet_data_cb, &top);
    H5Gclose(g);
}

/* The child's walk: the attributes of /config (incl. the config "text"),
 * /summary, /protocol, /data_files and every probe; the datasets of the last probe, /metrics/train
 * and /metrics/eval. */
static void vet_walk(hid_t file) {
    vet_group_attrs(file, RS_G_CONFIG);
    vet_group_attrs(file, RS_G_SUMMARY);
    vet_group_attrs(file, RS_G_PROTOCOL);
    vet_group_attrs(file, RS_G_DATA_FILES);
    hid_t pg = rr_open_group(file, RS_G_PROBE);
    long long *steps = NULL;
    int n = 0;
    if (pg >= 0) {
        if (rr_list_numbered(pg, RS_PROBE_STEP_SCAN, LLONG_MIN, &steps, &n) < 0) n = 0;
        H5Gclose(pg);
    }
    char g[64] = "";
    for (int i = 0; i < n; i++) {
        snprintf(g, sizeof g, RS_PROBE_PATH_FMT, steps[i]);
        vet_group_attrs(file, g);
    }
    if (n > 0) vet_group_data(file, g);
    free(steps);
    vet_group_data(file, RS_G_METRICS_TRAIN);
    vet_group_data(file, RS_G_METRICS_EVAL);
}

/* Set when an HDF5 call failed for want of memory (H5E_RESOURCE on its
 * error stack): the child's address-space bound was hit. */
static int vet_nomem;

static herr_t vet_walk_cb(unsigned n, const H5E_error2_t *e, void *data) {
    (void)n;
    (void)data;
    if (e->maj_num == H5E_RESOURCE) vet_nomem = 1;
    return 0;
}

/* The child's HDF5 error handler: prints nothing, notes a memory failure. */
static herr_t vet_err_cb(hid_t stack, void *data) {
    (void)data;
    H5Ewalk2(stack, H5E_WALK_DOWNWARD, vet_walk_cb, NULL);
    return 0;
}

/* The child's address space now, in bytes (/proc/self/statm); 0 unknown. */
static unsigned long long vet_vm_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long pages = 0;
    if (f) {
        if (fscanf(f, "%llu", &pages) != 1) pages = 0;
        fclose(f);
    }
    long pg = sysconf(_SC_PAGESIZE);
    return pages * (unsigned long long)(pg > 0 ? pg : 4096);
}

/* The seconds (wall and CPU) the child may take for file path. */
static int vet_seconds(const char *path) {
    struct stat st;
    long long s = VET_SECONDS_MIN;
    if (stat(path, &st) == 0 && st.st_size > 0) s += (long long)st.st_size / VET_BYTES_PER_SECOND;
    return s < VET_SECONDS_MAX ? (int)s : VET_SECONDS_MAX;
}

/* The bytes the child may add to its address space for file path. */
static unsigned long long vet_mem_budget(const char *path) {
    struct stat st;
    unsigned long long extra = stat(path, &st) == 0 && st.st_size > 0
                                   ? (unsigned long long)st.st_size * VET_MEM_PER_BYTE
                                   : 0;
    return (unsigned long long)VET_MEM_MB * 1024 * 1024 + extra;
}

/* Bound the child: address space (now + budget), CPU seconds, no file
 * written, no core left. A bound that cannot be set is skipped. */
static void vet_limits(const char *path) {
    unsigned long long vm = vet_vm_bytes();
    rlim_t secs = (rlim_t)vet_seconds(path);
    struct rlimit as = {0, 0}, cpu = {secs, secs + 1}, zero = {0, 0};
    if (vm > 0 && getrlimit(RLIMIT_AS, &as) == 0) {
        unsigned long long want = vm + vet_mem_budget(path);
        if (as.rlim_max == RLIM_INFINITY || want < (unsigned long long)as.rlim_max) {
            as.rlim_cur = (rlim_t)want;
            setrlimit(RLIMIT_AS, &as);
        }
    }
    setrlimit(RLIMIT_CPU, &cpu);
    setrlimit(RLIMIT_FSIZE, &zero);
    setrlimit(RLIMIT_CORE, &zero);
}

/* The child: the same reads the tools do, then "done" on fd. Never returns. */
__attribute__((noreturn)) static void vet_child(const char *path, int fd) {
    static const int crash_sigs[] = {SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE};
    for (size_t i = 0; i < sizeof crash_sigs / sizeof *crash_sigs; i++)
        signal(crash_sigs[i], SIG_DFL); /* die by the signal: the parent sees it */
    signal(SIGALRM, SIG_DFL);
    alarm((unsigned)vet_seconds(path) + 5); /* no orphan spins on if the parent is gone */
    signal(SIGINT, SIG_IGN);                /* a Ctrl-C is the parent's to act on (stop.h), */
    signal(SIGTERM, SIG_IGN);               /* not a crash of this child */
    if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(NULL);
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
        dup2(null, 1);
        dup2(null, 2);
    }
    signal(SIGXCPU, SIG_DFL);
    signal(SIGXFSZ, SIG_DFL);
    vet_limits(path);
    H5Eset_auto2(H5E_DEFAULT, vet_err_cb, NULL);
    char err[256];
    int rc = 1;
    RunReader *r = rr_open(path, err, sizeof err);
    if (r) {
        vet_walk(r->file);
        runread_close(r);
        rc = 0;
    }
    if (vet_nomem) _exit(VET_EXIT_NOMEM); /* before "done": the file is refused */
    ssize_t w = write(fd, "v", 1);
    _exit(w == 1 ? rc : 2);
}

static long ms_since(const struct timespec *t0) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)(t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Wait up to secs for the child's "done" byte on fd, then reap it.
 * 1 done, 0 the child ended without it, -1 hung (killed). */
static int vet_wait(pid_t pid, int fd, int secs, int *status) {
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int got = 1; /* a failing poll/read proceeds unvetted */
    for (;;) {
        long left = secs * 1000L - ms_since(&t0);
        if (left <= 0) {
            kill(pid, SIGKILL);
            got = -1;
            break;
        }
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        int k = poll(&pf, 1, (int)left);
        if (k == 0 || (k < 0 && errno == EINTR)) continue;
        if (k < 0) break;
        char c;
        ssize_t n = read(fd, &c, 1);
        if (n < 0 && errno == EINTR) continue;
        got = n == 1; /* 0: EOF, the child died before "done" */
        break;
    }
    close(fd);
    *status = 0;
    while (waitpid(pid, status, 0) < 0 && errno == EINTR) {}
    return got;
}

/* 0: go on with the normal open (which reports ordinary errors itself);
 * -1 with err: the library crashed or hung on this file in the child. */
static int vet_in_child(const char *path, char *err, size_t errlen) {
    int fds[2];
    if (pipe(fds) != 0) return 0; /* cannot vet: read in-process as before */
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return 0;
    }
    if (pid == 0) {
        close(fds[0]);
        vet_child(path, fds[1]);
    }
    close(fds[1]);
    int secs = vet_seconds(path), status, got = vet_wait(pid, fds[0], secs, &status);
    if (got == 1) return 0;
    if (got < 0)
        seterr(err, errlen,
               "%s: reading this file hung for %d s: the file is "
               "corrupt",
               path, secs);
    else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU)
        seterr(err, errlen, "%s: reading this file took over %d s of CPU: the file is corrupt",
               path, secs);
    else if (WIFEXITED(status) && WEXITSTATUS(status) == VET_EXIT_NOMEM)
        seterr(err, errlen,
               "%s: reading this file needs over %llu MB of memory: the file is "
               "corrupt",
               path, vet_mem_budget(path) >> 20);
    else if (WIFSIGNALED(status))
        seterr(err, errlen,
               "%s: the HDF5 library crashed reading this file "
               "(signal %d): the file is corrupt",
               path, WTERMSIG(status));
    else
        seterr(err, errlen,
               "%s: the HDF5 library crashed reading this file "
               "(exit status %d): the file is corrupt",
               path, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return -1;
}

/* ---- the files this process has vetted and found sound ----
 *
 * By identity: the report opens each run file once per section, and one
 * vetting child per file is enough while the file is the same (device,
 * inode, size, mtime to the nanosecond). A changed file is vetted again. */
typedef struct {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
} VetId;
#define VET_CACHE 4096
static VetId vetted[VET_CACHE];
static int n_vetted;

/* The identity of file path now; -1 when it cannot be stat'ed. */
static int vet_id(const char *path, VetId *id) {
    struct stat st;
    if (stat(path, &st) != 0) return -1;
    *id = (VetId){st.st_dev, st.st_ino, st.st_size, st.st_mtim};
    return 0;
}

/* 1 when a file of this identity was vetted and found sound. */
static int was_vetted(const VetId *id) {
    for (int i = 0; i < n_vetted; i++)
        if (vetted[i].dev == id->dev && vetted[i].ino == id->ino && vetted[i].size == id->size &&
            vetted[i].mtime.tv_sec == id->mtime.tv_sec &&
            vetted[i].mtime.tv_nsec == id->mtime.tv_nsec)
            return 1;
    return 0;
}

/* Vet path once per identity (runfile_read_priv.h). */
int rr_vet(const char *path, char *err, size_t errlen) {
    VetId id;
    int known = vet_id(path, &id) == 0;
    if (known && was_vetted(&id)) return 0;
    if (vet_in_child(path, err, errlen) < 0) return -1;
    if (known && n_vetted < VET_CACHE) vetted[n_vetted++] = id;
    return 0;
}
