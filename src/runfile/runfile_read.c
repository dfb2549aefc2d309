/* runfile_read.c: opening a run file for reading (runfile_read.h): the
 * root attributes, the vetting child that contains crashes and hangs
 * inside libhdf5, and the status the sweep plans from. The rest of the
 * read face: runfile_read_config.c, runfile_read_probe.c,
 * runfile_read_series.c, over the checked reads of runfile_read_util.c.
 * HDF5's own error printing is off: errors come back as one line naming
 * the file and object. */
#include "runfile_read_priv.h"
#include "runschema.h"
#include "h5util.h"
#include "util.h" /* seterr */ /* h5u_attr_read_strbuf */
#include "runfile.h"           /* RUNFILE_SCHEMA, RUNFILE_SCHEMA_VERSION */
#include "runfile_check.h"
#include "outpath.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- open / close ---- */

static int read_meta(RunReader *r, char *err, size_t errlen) {
    RunMeta *m = &r->meta;
    char schema[64];
    double v;
    if (h5u_attr_read_strbuf(r->file, RS_SCHEMA, schema, sizeof schema) < 0) {
        seterr(err, errlen, "%s: not a gatelab run file (no schema attr)", m->path);
        return -1;
    }
    if (strcmp(schema, RUNFILE_SCHEMA) != 0) {
        seterr(err, errlen, "%s: schema is \"%s\", want \"%s\"", m->path, schema, RUNFILE_SCHEMA);
        return -1;
    }
    if (rr_attr_double(r->file, RS_SCHEMA_VERSION, &v) < 0) {
        seterr(err, errlen, "%s: missing attribute schema_version", m->path);
        return -1;
    }
    m->schema_version = rr_dbl_to_int(v);
    if (m->schema_version != RUNFILE_SCHEMA_VERSION) {
        seterr(err, errlen, "%s: schema_version %d, this build reads %d", m->path,
               m->schema_version, RUNFILE_SCHEMA_VERSION);
        return -1;
    }
    if (h5u_attr_read_strbuf(r->file, RS_VARIANT, m->variant, sizeof m->variant) < 0 ||
        rr_attr_ll(r->file, RS_SEED, &m->seed) < 0) {
        seterr(err, errlen, "%s: missing root attribute variant or seed", m->path);
        return -1;
    }
    /* optional bookkeeping: absent stays empty / -1 */
    if (h5u_attr_read_strbuf(r->file, RS_STATUS, m->status, sizeof m->status) < 0)
        snprintf(m->status, sizeof m->status, "unknown");
    h5u_attr_read_strbuf(r->file, RS_CREATED, m->created, sizeof m->created);
    h5u_attr_read_strbuf(r->file, RS_GATELAB_VERSION, m->gatelab_version,
                         sizeof m->gatelab_version);
    m->data_seed = m->n_params = m->n_params_added = -1;
    rr_attr_ll(r->file, RS_DATA_SEED, &m->data_seed);
    rr_attr_ll(r->file, RS_N_PARAMS, &m->n_params);
    rr_attr_ll(r->file, RS_N_PARAMS_ADDED, &m->n_params_added);
    return 0;
}

/* The in-process open: HDF5 open plus the root attributes. */
static RunReader *open_file(const char *path, char *err, size_t errlen) {
    if (H5Fis_hdf5(path) <= 0) {
        seterr(err, errlen, "%s: not an HDF5 file", path);
        return NULL;
    }
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) {
        seterr(err, errlen, "%s: cannot open (truncated or corrupt?): %s", path, rr_h5_reason());
        return NULL;
    }
    RunReader *r = calloc(1, sizeof *r);
    if (!r) {
        H5Fclose(f);
        seterr(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    r->file = f;
    snprintf(r->meta.path, sizeof r->meta.path, "%s", path);
    if (runcheck_links(f, path, err, errlen) < 0 || read_meta(r, err, errlen) < 0 ||
        runcheck_enums(f, path, err, errlen) < 0) {
        runread_close(r);
        return NULL;
    }
    rr_label_variant(r);
    return r;
}

static int vet_in_child(const char *path, char *err, size_t errlen);

/* The files this process has vetted and found sound, by identity: the
 * report opens each run file once per section, and one vetting child per
 * file is enough while the file is the same (device, inode, size, mtime
 * to the nanosecond). A changed file is vetted again. */
typedef struct {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
} VetId;
#define VET_CACHE 4096
static VetId vetted[VET_CACHE];
static int n_vetted;

static int vet_id(const char *path, VetId *id) {
    struct stat st;
    if (stat(path, &st) != 0) return -1;
    *id = (VetId){st.st_dev, st.st_ino, st.st_size, st.st_mtim};
    return 0;
}

static int was_vetted(const VetId *id) {
    for (int i = 0; i < n_vetted; i++)
        if (vetted[i].dev == id->dev && vetted[i].ino == id->ino && vetted[i].size == id->size &&
            vetted[i].mtime.tv_sec == id->mtime.tv_sec &&
            vetted[i].mtime.tv_nsec == id->mtime.tv_nsec)
            return 1;
    return 0;
}

RunReader *runread_open(const char *path, char *err, size_t errlen) {
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (input_check(path, err, errlen) < 0) return NULL;
    const char *novet = getenv("GATELAB_NO_VET");
    if (!(novet && strcmp(novet, "1") == 0)) {
        VetId id;
        int known = vet_id(path, &id) == 0;
        if (!known || !was_vetted(&id)) {
            if (vet_in_child(path, err, errlen) < 0) return NULL;
            if (known && n_vetted < VET_CACHE) vetted[n_vetted++] = id;
        }
    }
    return open_file(path, err, errlen);
}

void runread_close(RunReader *r) {
    if (!r) return;
    if (r->file >= 0) H5Fclose(r->file);
    free(r);
}

const RunMeta *runread_meta(const RunReader *r) { return &r->meta; }

/* 1 when the file opens as a gatelab run file (schema checked, vetted in a
 * child for hostile files). */
static int is_runfile(const char *path) {
    char e[256];
    RunReader *r = runread_open(path, e, sizeof e);
    if (!r) return 0;
    runread_close(r);
    return 1;
}

int runfile_outpath_check(const char *path, int overwrite, char *err, size_t errlen) {
    return outpath_check_with(path, OUT_RUNFILE, is_runfile, overwrite, err, errlen);
}

/* ---- vetting: contain crashes and hangs inside libhdf5 ----
 *
 * HDF5 1.10.8 is not hardened against hostile files: a corrupt global heap,
 * for one, makes H5HG_read overflow the heap or loop while converting a
 * variable-length string (found by tests/fuzz). No API-level check can see
 * that coming, so runread_open first does the tools' reads in a forked
 * child: if that child dies or hangs, the file is refused with one line
 * instead of taking the tool down. The child reads every attribute of
 * /config, /summary and each probe (the variable-length strings live
 * there) but, to stay cheap, only the last probe's arrays. It only calls
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
 * GATELAB_NO_VET=1 skips it (the fuzz target sets that, so the fuzzer still
 * sees library crashes directly). */

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
    RunReader *r = open_file(path, err, sizeof err);
    if (r) {
        vet_group_attrs(r->file, RS_G_CONFIG); /* incl. the config "text" */
        vet_group_attrs(r->file, RS_G_SUMMARY);
        long long *steps; /* every probe's attrs (vlen strings); */
        int n;            /* arrays of the last only: cost */
        if (runread_probe_steps(r, &steps, &n, err, sizeof err) == 0) {
            for (int i = 0; i < n; i++) {
                char g[64];
                snprintf(g, sizeof g, RS_PROBE_PATH_FMT, steps[i]);
                vet_group_attrs(r->file, g);
            }
            free(steps);
        }
        ProbeRecord p;
        RunTrain t;
        RunEval e;
        if (runread_probe(r, -1, &p, err, sizeof err) == 0) runread_probe_free(&p);
        if (runread_train(r, &t, err, sizeof err) == 0) runread_train_free(&t);
        if (runread_eval(r, &e, err, sizeof err) == 0) runread_eval_free(&e);
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

/* ---- status, for the sweep's plan (no RunReader: the file may be
 * unfinished or not ours) ---- */

/* An unreadable file is -1, not a message: the plan starts it afresh. */
int runfile_read_status(const char *h5path, char *buf, size_t len) {
    if (len) buf[0] = '\0';
    H5uQuiet q = h5u_quiet_begin();
    int rc = -1;
    hid_t f = H5Fopen(h5path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f >= 0) {
        htri_t e = H5Aexists(f, RS_STATUS);
        rc = e == 0 ? 0 : e > 0 ? h5u_attr_read_strbuf(f, RS_STATUS, buf, len) : -1;
        H5Fclose(f);
    }
    H5Eclear2(H5E_DEFAULT);
    h5u_quiet_end(q);
    return rc;
}

/* 1 when the run file already holds the top-level group NAME (/lceval,
 * /intervene: written by an earlier pass). */
int runfile_has_group(const char *h5, const char *name) {
    H5uQuiet q = h5u_quiet_begin();
    hid_t f = H5Fopen(h5, H5F_ACC_RDONLY, H5P_DEFAULT);
    int has = f >= 0 && H5Lexists(f, name, H5P_DEFAULT) > 0;
    if (f >= 0) H5Fclose(f);
    h5u_quiet_end(q);
    return has;
}
