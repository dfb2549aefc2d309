/* runfile.c: the HDF5 run file (schema in runfile.h and README "Run file").
 *
 * One RunFile keeps the file and the nine metric datasets open, so an
 * append is set_extent + one-element write + flush. Every HDF5 failure is
 * turned into one line naming the file and object; HDF5's own error stack
 * is silenced while our public calls run (h5util.h). */
#define _POSIX_C_SOURCE 200809L
#include "runfile.h"
#include "outpath.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "blas_core.h"
#include "gatelab_build.h"
#include "gatelab_version.h"
#include "h5util.h"
#include "util.h"

#define RF_PATH 4096
#define CHUNK_BYTES ((size_t)1 << 20) /* cap per chunk; readers slice heads */
#define METRIC_CHUNK 1024
#define DEFLATE_LEVEL 4
#define RESERVE_MARGIN ((size_t)256 << 10) /* metadata a flush may add */

typedef struct {
    const char *name;
    int is_int; /* int64, else double */
    const char *units;
    const char *desc;
} MetricSpec;

static const MetricSpec TRAIN[] = {
    {RS_STEP, 1, "step", "optimiser step (0-based) of this row"},
    {RS_LOSS, 0, "nats/token", "mean training cross-entropy of the step's batch"},
    {RS_LR, 0, "1", "learning rate used at this step"},
    {RS_GRAD_NORM, 0, "1", "global gradient L2 norm before clipping"},
    {RS_TOKENS, 1, "tokens", "training tokens consumed up to and including this step"},
    {RS_SECONDS, 0, "s", "wall-clock training seconds since the run began"},
};
static const MetricSpec EVAL[] = {
    {RS_STEP, 1, "step", "optimiser step after which validation ran"},
    {RS_VAL_LOSS, 0, "nats/token", "mean validation cross-entropy"},
    {RS_VAL_BPB, 0, "bits/byte", "validation bits per byte"},
};
#define N_TRAIN ((int)(sizeof TRAIN / sizeof TRAIN[0]))
#define N_EVAL ((int)(sizeof EVAL / sizeof EVAL[0]))

struct RunFile {
    hid_t file;
    int fd; /* our own descriptor, only for reserving disk space */
    hid_t train[N_TRAIN];
    hid_t eval[N_EVAL];
    hsize_t n_train, n_eval;
    char path[RF_PATH];
};

static _Thread_local char last_err[512];

/* Record a one-line error (and copy it to err when given); returns -1. */
__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t errlen, const char *fmt,
                                                      ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_err, sizeof last_err, fmt, ap);
    va_end(ap);
    if (err && errlen) snprintf(err, errlen, "%s", last_err);
    return -1;
}

/* "path: what failed (hdf5: innermost reason)" */
static int fail_h5(const RunFile *rf, const char *what) {
    const char *why = h5u_reason();
    if (*why) return fail(NULL, 0, "%s: cannot %s (hdf5: %s)", rf->path, what, why);
    return fail(NULL, 0, "%s: cannot %s", rf->path, what);
}

static RunFile *rf_alloc(const char *path) {
    RunFile *rf = calloc(1, sizeof *rf);
    if (!rf) return NULL;
    rf->file = -1;
    rf->fd = -1;
    for (int i = 0; i < N_TRAIN; i++) rf->train[i] = -1;
    for (int i = 0; i < N_EVAL; i++) rf->eval[i] = -1;
    snprintf(rf->path, sizeof rf->path, "%s", path);
    return rf;
}

static int reserve(RunFile *rf, size_t bytes);

/* Drop the unused reservation past HDF5's end of allocation (HDF5 does not
 * always trim it): read the EOA the closed file records and cut there,
 * exactly where HDF5 itself would. Best effort; a zero tail is harmless. */
static void trim_tail(RunFile *rf) {
    hid_t f = H5Fopen(rf->path, H5F_ACC_RDONLY, H5P_DEFAULT);
    haddr_t eoa = 0;
    int ok = f >= 0 && H5Fget_eoa(f, &eoa) >= 0 && eoa > 0;
    if (f >= 0) H5Fclose(f);
    struct stat st;
    if (ok && fstat(rf->fd, &st) == 0 && (haddr_t)st.st_size > eoa &&
        ftruncate(rf->fd, (off_t)eoa) < 0)
        h5u_reason(); /* nothing to report: the file is valid either way */
    H5Eclear2(H5E_DEFAULT);
}

/* Close everything; -1 when the final flush/close failed (full disk). */
static int rf_free(RunFile *rf) {
    int rc = 0;
    for (int i = 0; i < N_TRAIN; i++)
        if (rf->train[i] >= 0 && H5Dclose(rf->train[i]) < 0) rc = -1;
    for (int i = 0; i < N_EVAL; i++)
        if (rf->eval[i] >= 0 && H5Dclose(rf->eval[i]) < 0) rc = -1;
    if (rf->file >= 0) {
        if (rf->fd >= 0) reserve(rf, 0); /* best effort: nothing should be dirty */
        if (H5Fflush(rf->file, H5F_SCOPE_LOCAL) < 0) rc = -1;
        if (H5Fclose(rf->file) < 0) rc = -1;
    }
    if (rc < 0) fail_h5(rf, "close the file");
    if (rc == 0 && rf->file >= 0 && rf->fd >= 0) trim_tail(rf);
    if (rf->fd >= 0) close(rf->fd);
    free(rf);
    return rc;
}

/* Why the disk is reserved before every write.
 * In HDF5 1.10 a flush or close that fails on a full disk leaves the file
 * id dangling, and the library then crashes the process at exit (fixed
 * upstream in 1.14.1, HDFFV-11052). So HDF5 must never be the one to meet
 * ENOSPC: before each operation we preallocate the blocks it can write
 * past its end of allocation (posix_fallocate), and a full disk surfaces
 * here, as our own clean error, with the file untouched and closable.
 * Filesystems that cannot preallocate (or copy-on-write ones) get best
 * effort. HDF5 trims the file back to its allocation when it closes. */
static int reserve(RunFile *rf, size_t bytes) {
    haddr_t eoa = 0;
    if (H5Fget_eoa(rf->file, &eoa) < 0) return fail_h5(rf, "query the file's allocation");
    size_t want = bytes + RESERVE_MARGIN;
    int e = posix_fallocate(rf->fd, (off_t)eoa, (off_t)want);
    if (e == 0 || e == EOPNOTSUPP || e == EINVAL) return 0;
    return fail(NULL, 0, "%s: cannot reserve %zu bytes of disk for the next write: %s", rf->path,
                want, strerror(e));
}

/* Deflate can grow incompressible data a little: bound it generously. */
static size_t compressed_bound(size_t raw, size_t n_datasets) {
    return raw + raw / 64 + n_datasets * ((size_t)8 << 10);
}

static hid_t make_group(hid_t loc, const char *name) {
    htri_t e = H5Lexists(loc, name, H5P_DEFAULT);
    if (e < 0) return -1;
    if (e > 0) return H5Gopen2(loc, name, H5P_DEFAULT);
    return H5Gcreate2(loc, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
}

/* Chunk shape for a fixed-size dataset: the whole array when it is small,
 * else leading dims cut to 1 (so a reader slicing [l, h] reads one chunk),
 * and the last dim cut if one row alone is still too big. */
static void chunk_shape(int rank, const hsize_t *dims, size_t elsize, hsize_t *chunk) {
    size_t bytes = elsize;
    for (int i = 0; i < rank; i++) {
        chunk[i] = dims[i];
        bytes *= (size_t)dims[i];
    }
    for (int i = 0; i < rank - 1 && bytes > CHUNK_BYTES; i++) {
        bytes /= (size_t)chunk[i];
        chunk[i] = 1;
    }
    if (bytes > CHUNK_BYTES) {
        size_t keep = CHUNK_BYTES / elsize;
        chunk[rank - 1] = keep ? keep : 1;
    }
}

/* dcpl with chunking + shuffle + deflate, or plain when the array is empty
 * (a chunk dim may not exceed a fixed dim of 0). */
static hid_t make_dcpl(int rank, const hsize_t *dims, size_t elsize) {
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (dcpl < 0) return -1;
    size_t total = 1;
    for (int i = 0; i < rank; i++) total *= (size_t)dims[i];
    if (total == 0) return dcpl;
    hsize_t chunk[8];
    chunk_shape(rank, dims, elsize, chunk);
    if (H5Pset_chunk(dcpl, rank, chunk) < 0 || H5Pset_shuffle(dcpl) < 0 ||
        H5Pset_deflate(dcpl, DEFLATE_LEVEL) < 0) {
        H5Pclose(dcpl);
        return -1;
    }
    return dcpl;
}

/* Write one fixed-shape compressed dataset loc/name with a description.
 * `where` names the group for the error message. */
static int write_array(RunFile *rf, hid_t loc, const char *where, const char *name, hid_t ftype,
                       hid_t mtype, int rank, const hsize_t *dims, const void *data,
                       const char *desc) {
    char what[512];
    snprintf(what, sizeof what, "write %s/%s", where, name);
    htri_t e = H5Lexists(loc, name, H5P_DEFAULT);
    if (e < 0 || (e > 0 && H5Ldelete(loc, name, H5P_DEFAULT) < 0)) return fail_h5(rf, what);
    hid_t sp = H5Screate_simple(rank, dims, NULL);
    hid_t dcpl = sp >= 0 ? make_dcpl(rank, dims, H5Tget_size(mtype)) : -1;
    hid_t ds = dcpl >= 0 ? H5Dcreate2(loc, name, ftype, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT) : -1;
    int rc = ds >= 0 ? 0 : -1;
    if (rc == 0 && H5Sget_simple_extent_npoints(sp) > 0 &&
        H5Dwrite(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
        rc = -1;
    if (rc == 0 && desc && h5u_attr_str(ds, RS_DESCRIPTION, desc) < 0) rc = -1;
    if (ds >= 0 && H5Dclose(ds) < 0) rc = -1;
    if (dcpl >= 0) H5Pclose(dcpl);
    if (sp >= 0) H5Sclose(sp);
    return rc < 0 ? fail_h5(rf, what) : 0;
}

/* ---- creation ---- */

static void iso_utc_now(char *buf, size_t len) {
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

typedef struct {
    hid_t group;
    int failed;
    char bad[128];
} VisitCtx;

/* One typed attribute per config key. Integers that overflow int64 (a
 * seed near 2^64) are stored unsigned; unparsable numbers fall back to a
 * string, so nothing the config says is lost. */
static void visit_key(const char *key, const char *value, int is_int, int is_float, void *vctx) {
    VisitCtx *c = vctx;
    if (c->failed) return;
    char *end = NULL;
    int rc = 1; /* 1: not yet written */
    if (is_int && *value) {
        errno = 0;
        long long v = strtoll(value, &end, 0);
        if (!*end && errno == 0) {
            rc = h5u_attr_i64(c->group, key, v);
        } else if (*value != '-') {
            errno = 0;
            unsigned long long u = strtoull(value, &end, 0);
            if (!*end && errno == 0) rc = h5u_attr_u64(c->group, key, u);
        }
    } else if (is_float && *value) {
        double v = strtod(value, &end);
        if (!*end) rc = h5u_attr_f64(c->group, key, v);
    }
    if (rc == 1) rc = h5u_attr_str(c->group, key, value);
    if (rc < 0) {
        c->failed = 1;
        snprintf(c->bad, sizeof c->bad, "%s", key);
    }
}

/* The resolved config as INI text; grows the buffer until it fits. */
static char *config_text_alloc(const Config *cfg) {
    for (size_t len = (size_t)1 << 14; len <= ((size_t)1 << 24); len *= 4) {
        char *buf = calloc(len, 1);
        if (!buf) return NULL;
        int n = config_to_text(cfg, buf, len);
        if (n >= 0 && (size_t)n < len) return buf;
        free(buf);
    }
    return NULL;
}

static int write_config(RunFile *rf, const Config *cfg) {
    hid_t g = make_group(rf->file, RS_G_CONFIG);
    if (g < 0) return fail_h5(rf, "create /config");
    VisitCtx c = {g, 0, ""};
    config_visit(cfg, visit_key, &c);
    int rc = 0;
    if (c.failed) {
        char what[256];
        snprintf(what, sizeof what, "write /config attribute '%s'", c.bad);
        rc = fail_h5(rf, what);
    }
    char *text = rc == 0 ? config_text_alloc(cfg) : NULL;
    if (rc == 0 && !text) rc = fail(NULL, 0, "%s: config text does not fit in 16 MB", rf->path);
    if (rc == 0 && h5u_attr_str(g, RS_CONFIG_TEXT, text) < 0)
        rc = fail_h5(rf, "write /config attribute 'text'");
    free(text);
    H5Gclose(g);
    return rc;
}

static int write_root_attrs(RunFile *rf, const Config *cfg, const Model *m) {
    char created[32];
    iso_utc_now(created, sizeof created);
    hid_t f = rf->file;
    long long np = m ? (long long)m->table.total : 0;
    long long na = m ? (long long)model_added_params(m) : 0;
    BlasInfo bi;
    blas_info(&bi);
    if (h5u_attr_str(f, RS_SCHEMA, RUNFILE_SCHEMA) < 0 ||
        h5u_attr_i64(f, RS_SCHEMA_VERSION, RUNFILE_SCHEMA_VERSION) < 0 ||
        h5u_attr_str(f, RS_VARIANT, cfg ? cfg->variant : "") < 0 ||
        h5u_attr_u64(f, RS_SEED, cfg ? cfg->init_seed : 0) < 0 ||
        h5u_attr_u64(f, RS_DATA_SEED, cfg ? cfg->data_seed : 0) < 0 ||
        h5u_attr_str(f, RS_CREATED, created) < 0 ||
        h5u_attr_str(f, RS_GATELAB_VERSION, GATELAB_VERSION " (git " GATELAB_DESCRIBE ")") < 0 ||
        h5u_attr_i64(f, RS_N_PARAMS, np) < 0 || h5u_attr_i64(f, RS_N_PARAMS_ADDED, na) < 0 ||
        h5u_attr_str(f, RS_BLAS_LIBRARY, bi.library) < 0 ||
        h5u_attr_str(f, RS_BLAS_VERSION, bi.version) < 0 ||
        h5u_attr_str(f, RS_BLAS_CORE, bi.core) < 0 ||
        h5u_attr_str(f, RS_BLAS_CORE_HOW, bi.how) < 0 ||
        h5u_attr_str(f, RS_STATUS, RS_STATUS_RUNNING) < 0)
        return fail_h5(rf, "write root attributes");
    return 0;
}

/* An empty extendible 1-D metric dataset, kept open in *out. */
static int create_metric(RunFile *rf, hid_t g, const char *gname, const MetricSpec *s, hid_t *out) {
    char what[256];
    snprintf(what, sizeof what, "create /metrics/%s/%s", gname, s->name);
    hsize_t dim = 0, maxdim = H5S_UNLIMITED, chunk = METRIC_CHUNK;
    hid_t sp = H5Screate_simple(1, &dim, &maxdim);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    int ok = sp >= 0 && dcpl >= 0 && H5Pset_chunk(dcpl, 1, &chunk) >= 0 &&
             H5Pset_shuffle(dcpl) >= 0 && H5Pset_deflate(dcpl, DEFLATE_LEVEL) >= 0;
    hid_t ds = -1;
    if (ok)
        ds = H5Dcreate2(g, s->name, s->is_int ? H5T_STD_I64LE : H5T_IEEE_F64LE, sp, H5P_DEFAULT,
                        dcpl, H5P_DEFAULT);
    ok = ds >= 0 && h5u_attr_str(ds, RS_UNITS, s->units) >= 0 &&
         h5u_attr_str(ds, RS_DESCRIPTION, s->desc) >= 0;
    if (dcpl >= 0) H5Pclose(dcpl);
    if (sp >= 0) H5Sclose(sp);
    if (!ok) {
        if (ds >= 0) H5Dclose(ds);
        return fail_h5(rf, what);
    }
    *out = ds;
    return 0;
}

static int create_metrics(RunFile *rf) {
    hid_t m = make_group(rf->file, RS_G_METRICS);
    hid_t tr = m >= 0 ? make_group(m, RS_G_TRAIN) : -1;
    hid_t ev = m >= 0 ? make_group(m, RS_G_EVAL) : -1;
    int rc = (m >= 0 && tr >= 0 && ev >= 0) ? 0 : fail_h5(rf, "create /metrics");
    for (int i = 0; rc == 0 && i < N_TRAIN; i++)
        rc = create_metric(rf, tr, RS_G_TRAIN, &TRAIN[i], &rf->train[i]);
    for (int i = 0; rc == 0 && i < N_EVAL; i++)
        rc = create_metric(rf, ev, RS_G_EVAL, &EVAL[i], &rf->eval[i]);
    if (ev >= 0) H5Gclose(ev);
    if (tr >= 0) H5Gclose(tr);
    if (m >= 0) H5Gclose(m);
    return rc;
}

/* Strong close: closing the file closes any handle we might have missed,
 * so the file is never left open behind the caller's back. */
static hid_t make_fapl(void) {
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0 && H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0) {
        H5Pclose(fapl);
        return -1;
    }
    return fapl;
}

static int open_metrics(RunFile *rf, const char *gname, const MetricSpec *spec, hid_t *ds, int nds,
                        hsize_t *len);

/* The new file's first state, built in memory (core driver, no backing
 * store) and returned malloc'd: HDF5 does no disk I/O while creating. */
static char *initial_image(RunFile *rf, const Config *cfg, const Model *m, size_t *len) {
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0 && H5Pset_fapl_core(fapl, (size_t)1 << 16, 0) >= 0)
        rf->file = H5Fcreate("gatelab-run-image", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (fapl >= 0) H5Pclose(fapl);
    if (rf->file < 0) {
        fail_h5(rf, "build the file in memory");
        return NULL;
    }
    int rc = write_root_attrs(rf, cfg, m);
    if (rc == 0 && cfg) rc = write_config(rf, cfg);
    if (rc == 0) rc = create_metrics(rf);
    for (int i = 0; i < N_TRAIN; i++)
        if (rf->train[i] >= 0) H5Dclose(rf->train[i]), rf->train[i] = -1;
    for (int i = 0; i < N_EVAL; i++)
        if (rf->eval[i] >= 0) H5Dclose(rf->eval[i]), rf->eval[i] = -1;
    ssize_t n = -1;
    char *buf = NULL;
    if (rc == 0 && (H5Fflush(rf->file, H5F_SCOPE_LOCAL) < 0 ||
                    (n = H5Fget_file_image(rf->file, NULL, 0)) <= 0))
        rc = fail_h5(rf, "build the file in memory");
    if (rc == 0 && !(buf = malloc((size_t)n))) rc = fail(NULL, 0, "%s: out of memory", rf->path);
    if (rc == 0 && H5Fget_file_image(rf->file, buf, (size_t)n) != n)
        rc = fail_h5(rf, "build the file in memory");
    if (H5Fclose(rf->file) < 0 && rc == 0) rc = fail_h5(rf, "build the file in memory");
    rf->file = -1;
    if (rc < 0) {
        free(buf);
        return NULL;
    }
    *len = (size_t)n;
    return buf;
}

/* Put the image on disk with our own write(2), space reserved first. */
static int write_image(RunFile *rf, const char *img, size_t len, int force, int *created) {
    /* O_EXCL without force also closes the race with another process. */
    int fd = open(rf->path, O_RDWR | O_CREAT | (force ? O_TRUNC : O_EXCL), 0644);
    if (fd < 0 && errno == EEXIST)
        return fail(NULL, 0, "%s exists (finished results are never overwritten; use --force)",
                    rf->path);
    if (fd < 0) return fail(NULL, 0, "%s: cannot create: %s", rf->path, strerror(errno));
    rf->fd = fd;
    *created = 1;
    int e = posix_fallocate(fd, 0, (off_t)(len + RESERVE_MARGIN));
    if (e && e != EOPNOTSUPP && e != EINVAL)
        return fail(NULL, 0, "%s: cannot reserve %zu bytes of disk: %s", rf->path,
                    len + RESERVE_MARGIN, strerror(e));
    if (h5u_write_all(fd, img, len) < 0)
        return fail(NULL, 0, "%s: write failed: %s", rf->path, strerror(errno));
    return 0;
}

static RunFile *create_impl(const char *path, const Config *cfg, const Model *m, int force) {
    if (!path || !*path) return fail(NULL, 0, "run file path is empty"), NULL;
    if (strlen(path) >= RF_PATH) return fail(NULL, 0, "run file path is too long"), NULL;
    char why[512];
    /* the one output rule (outpath.h): a new path, or with force our own
     * run file; never a link, a directory or someone else's file */
    if (outpath_check(path, OUT_RUNFILE, force, why, sizeof why) != 0)
        return fail(NULL, 0, "%s", why), NULL;
    RunFile *rf = rf_alloc(path);
    if (!rf) return fail(NULL, 0, "%s: out of memory", path), NULL;
    size_t len = 0;
    int created = 0, rc = -1;
    char *img = initial_image(rf, cfg, m, &len);
    if (img) rc = write_image(rf, img, len, force, &created);
    free(img);
    if (rc == 0) {
        hid_t fapl = make_fapl();
        if (fapl >= 0) rf->file = H5Fopen(path, H5F_ACC_RDWR, fapl);
        if (fapl >= 0) H5Pclose(fapl);
        if (rf->file < 0) rc = fail_h5(rf, "open the new run file");
    }
    hsize_t n;
    if (rc == 0) rc = open_metrics(rf, RS_G_TRAIN, TRAIN, rf->train, N_TRAIN, &n);
    if (rc == 0) rc = open_metrics(rf, RS_G_EVAL, EVAL, rf->eval, N_EVAL, &n);
    if (rc < 0) {
        /* A half-written file would block the retry; nothing in it is a
         * finished result (a forced one was already truncated). */
        char keep[sizeof last_err];
        memcpy(keep, last_err, sizeof keep);
        rf_free(rf);
        if (created) unlink(path);
        memcpy(last_err, keep, sizeof keep);
        return NULL;
    }
    return rf;
}

RunFile *runfile_create(const char *path, const Config *cfg, const Model *m, int force, char *err,
                        size_t errlen) {
    H5uQuiet q = h5u_quiet_begin();
    RunFile *rf = create_impl(path, cfg, m, force);
    h5u_quiet_end(q);
    if (!rf && err && errlen) snprintf(err, errlen, "%s", last_err);
    return rf;
}

/* ---- metrics ---- */

/* Grow a 1-D dataset from n to n+1 elements and write v at index n. */
static int append1(hid_t ds, hsize_t n, hid_t mtype, const void *v) {
    hsize_t newn = n + 1, start = n, one = 1;
    if (H5Dset_extent(ds, &newn) < 0) return -1;
    hid_t fs = H5Dget_space(ds);
    hid_t ms = H5Screate_simple(1, &one, NULL);
    int rc = (fs >= 0 && ms >= 0 &&
              H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &one, NULL) >= 0 &&
              H5Dwrite(ds, mtype, ms, fs, H5P_DEFAULT, v) >= 0)
                 ? 0
                 : -1;
    if (ms >= 0) H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
    return rc;
}

/* Append one row across a metric group, then flush so a reader (or a
 * crash) sees every completed row. On failure the row count is left
 * unchanged, so the next append overwrites the half-written row. */
static int append_row(RunFile *rf, const char *gname, const MetricSpec *spec, const hid_t *ds,
                      int nds, hsize_t *n, const void **vals) {
    if (reserve(rf, (size_t)nds * 16 * METRIC_CHUNK) < 0) return -1;
    for (int i = 0; i < nds; i++) {
        hid_t mt = spec[i].is_int ? H5T_NATIVE_LLONG : H5T_NATIVE_DOUBLE;
        if (append1(ds[i], *n, mt, vals[i]) < 0) {
            char what[256];
            snprintf(what, sizeof what, "append to /metrics/%s/%s", gname, spec[i].name);
            return fail_h5(rf, what);
        }
    }
    if (H5Fflush(rf->file, H5F_SCOPE_LOCAL) < 0) return fail_h5(rf, "flush");
    (*n)++;
    return 0;
}

static int append_train_impl(RunFile *rf, long long step, double loss, double lr, double grad_norm,
                             long long tokens, double seconds) {
    if (!rf) return fail(NULL, 0, "runfile_append_train: no run file");
    const void *v[N_TRAIN] = {&step, &loss, &lr, &grad_norm, &tokens, &seconds};
    H5uQuiet q = h5u_quiet_begin();
    int rc = append_row(rf, RS_G_TRAIN, TRAIN, rf->train, N_TRAIN, &rf->n_train, v);
    h5u_quiet_end(q);
    return rc;
}

static int append_eval_impl(RunFile *rf, long long step, double val_loss, double val_bpb) {
    if (!rf) return fail(NULL, 0, "runfile_append_eval: no run file");
    const void *v[N_EVAL] = {&step, &val_loss, &val_bpb};
    H5uQuiet q = h5u_quiet_begin();
    int rc = append_row(rf, RS_G_EVAL, EVAL, rf->eval, N_EVAL, &rf->n_eval, v);
    h5u_quiet_end(q);
    return rc;
}

/* ---- status and summary ---- */

static int set_status_impl(RunFile *rf, const char *status) {
    if (reserve(rf, 0) < 0) return -1;
    if (h5u_attr_str(rf->file, RS_STATUS, status) < 0)
        return fail_h5(rf, "write root attribute 'status'");
    if (H5Fflush(rf->file, H5F_SCOPE_LOCAL) < 0) return fail_h5(rf, "flush");
    return 0;
}

static int set_status_quiet(RunFile *rf, const char *status) {
    if (!rf || !status) return fail(NULL, 0, "runfile_set_status: no run file or status");
    H5uQuiet q = h5u_quiet_begin();
    int rc = set_status_impl(rf, status);
    h5u_quiet_end(q);
    return rc;
}

static int summary_impl(RunFile *rf, const char *key, double value) {
    if (reserve(rf, 0) < 0) return -1;
    hid_t g = make_group(rf->file, RS_G_SUMMARY);
    if (g < 0) return fail_h5(rf, "create /summary");
    int rc = 0;
    if (h5u_attr_f64(g, key, value) < 0) {
        char what[256];
        snprintf(what, sizeof what, "write /summary attribute '%s'", key);
        rc = fail_h5(rf, what);
    }
    H5Gclose(g);
    if (rc == 0 && H5Fflush(rf->file, H5F_SCOPE_LOCAL) < 0) rc = fail_h5(rf, "flush");
    return rc;
}

static int set_summary_impl(RunFile *rf, const char *key, double value) {
    if (!rf || !key || !*key) return fail(NULL, 0, "runfile_set_summary: no run file or key");
    H5uQuiet q = h5u_quiet_begin();
    int rc = summary_impl(rf, key, value);
    h5u_quiet_end(q);
    return rc;
}

/* ---- probes ---- */

static int probe_attrs(RunFile *rf, hid_t g, const char *gpath, const ProbeRecord *p) {
    if (h5u_attr_i64(g, RS_P_STEP, p->step) < 0 || h5u_attr_i64(g, RS_P_PROXY, p->proxy) < 0 ||
        h5u_attr_str(g, RS_P_NORMALISER, p->normaliser) < 0 ||
        h5u_attr_i64(g, RS_P_GATE_CHANNELS, p->gate_channels) < 0 ||
        h5u_attr_i64(g, RS_P_GATE_HEADS, p->gate_heads) < 0 ||
        h5u_attr_i64(g, RS_P_GATE_BOUNDED, p->gate_bounded) < 0 ||
        h5u_attr_i64(g, RS_P_GATE_SHARED, p->gate_shared) < 0 ||
        h5u_attr_i64(g, RS_P_PROBE_N, p->N) < 0 || h5u_attr_i64(g, RS_P_PROBE_LEN, p->T) < 0 ||
        (p->M > 0 && p->M < p->T && h5u_attr_i64(g, RS_P_MAPS_LEN, p->M) < 0)) {
        char what[128];
        snprintf(what, sizeof what, "write attributes of %s", gpath);
        return fail_h5(rf, what);
    }
    return 0;
}

/* Size of one dims letter of RS_PROBE_ARRAYS for this probe. */
static hsize_t probe_dim(const ProbeRecord *p, char d) {
    switch (d) {
    case 'L': return (hsize_t)p->L;
    case 'H': return (hsize_t)p->H;
    case 'T': return (hsize_t)p->T;
    case 'P': return (hsize_t)(p->M > 0 ? p->M : p->T);
    case 'N': return (hsize_t)p->N;
    case 'C': return (hsize_t)p->gate_channels;
    case 'S': return (hsize_t)p->gate_sample_n;
    case 'B': return RS_GATE_BINS;
    case 'K': return RS_GATE_NBELOW;
    case 'M': return RS_GATE_NSTATS;
    case '3': return RS_HIDDEN_TOP;
    }
    return 0;
}

/* One array of the table; absent (NULL) arrays and gate arrays of a
 * gate-less probe are skipped. */
static int probe_array(RunFile *rf, hid_t g, hid_t h, const char *gp, const ProbeRecord *p,
                       const void *data, int cls, int hidden, const char *name, const char *dims,
                       int kind, const char *desc) {
    int gated = kind == RS_GATE || kind == RS_GATE_OPT;
    if (!data || (gated && p->gate_channels <= 0)) return 0;
    hsize_t d[8];
    int rank = (int)strlen(dims);
    for (int i = 0; i < rank; i++) d[i] = probe_dim(p, dims[i]);
    for (int i = 0; i < rank; i++) /* an optional array may be empty */
        if (d[i] == 0 && (kind == RS_OPT || kind == RS_GATE_OPT)) return 0;
    char hp[128];
    snprintf(hp, sizeof hp, "%s/%s", gp, RS_G_HIDDEN);
    hid_t ft = cls == RS_I32 ? H5T_STD_I32LE : cls == RS_F32 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
    hid_t mt = cls == RS_I32   ? H5T_NATIVE_INT
               : cls == RS_F32 ? H5T_NATIVE_FLOAT
                               : H5T_NATIVE_DOUBLE;
    return write_array(rf, hidden ? h : g, hidden ? hp : gp, name, ft, mt, rank, d, data, desc);
}

static int probe_thresholds(RunFile *rf, hid_t g, const ProbeRecord *p) {
    if (!p->gate_below || p->gate_channels <= 0) return 0;
    hid_t ds = H5Dopen2(g, RS_GATE_BELOW_NAME, H5P_DEFAULT);
    int rc = 0;
    if (ds < 0 || h5u_attr_write(ds, RS_P_THRESHOLDS, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                                 RS_GATE_BELOW_THR, RS_GATE_NBELOW) < 0)
        rc = fail_h5(rf, "write gate_below thresholds");
    if (ds >= 0) H5Dclose(ds);
    return rc;
}

static int probe_arrays(RunFile *rf, hid_t g, const char *gp, const ProbeRecord *p) {
    hid_t h = make_group(g, RS_G_HIDDEN);
    if (h < 0) return fail_h5(rf, "create hidden group");
    int rc = 0;
#define RS_WRITE(member, ctype, cls, hid, name, dims, kind, desc)                                  \
    if (rc == 0) rc = probe_array(rf, g, h, gp, p, p->member, cls, hid, name, dims, kind, desc);
    RS_PROBE_ARRAYS(RS_WRITE)
#undef RS_WRITE
    H5Gclose(h);
    if (rc == 0) rc = probe_thresholds(rf, g, p);
    return rc;
}

/* Upper bound of the probe's raw bytes, for the free-space check. */
static size_t probe_bytes(const ProbeRecord *p) {
    size_t raw = 0;
#define RS_SIZE(member, ctype, cls, hid, name, dims, kind, desc)                                   \
    {                                                                                              \
        size_t n = sizeof(ctype);                                                                  \
        for (const char *c = dims; *c; c++) n *= (size_t)probe_dim(p, *c);                         \
        raw += n;                                                                                  \
    }
    RS_PROBE_ARRAYS(RS_SIZE)
#undef RS_SIZE
    return raw;
}

/* Create (replacing) group `name` under `parent` and write probe p in it;
 * gp is its full path, for messages. */
static int probe_group(RunFile *rf, hid_t parent, const char *name, const char *gp,
                       const ProbeRecord *p, hid_t *out) {
    if (p->L <= 0 || p->H <= 0 || p->N < 0 || p->T <= 0 || p->gate_channels < 0 ||
        p->gate_sample_n < 0 || p->M < 0 || p->M > p->T)
        return fail(NULL, 0, "%s: probe %s has bad shape L=%d H=%d N=%d T=%d", rf->path, gp, p->L,
                    p->H, p->N, p->T);
    if (reserve(rf, compressed_bound(probe_bytes(p), 16)) < 0) return -1;
    /* Rewriting a group replaces it whole: no stale dataset survives. */
    htri_t e = H5Lexists(parent, name, H5P_DEFAULT);
    if (e < 0 || (e > 0 && H5Ldelete(parent, name, H5P_DEFAULT) < 0))
        return fail_h5(rf, "replace an existing probe group");
    hid_t g = H5Gcreate2(parent, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (g < 0) return fail_h5(rf, "create a probe group");
    int rc = probe_attrs(rf, g, gp, p);
    if (rc == 0) rc = probe_arrays(rf, g, gp, p);
    if (rc == 0 && out) *out = g;
    else if (H5Gclose(g) < 0 && rc == 0) rc = fail_h5(rf, "close the probe group");
    return rc;
}

static int probe_impl(RunFile *rf, const ProbeRecord *p) {
    char name[64], gp[96];
    snprintf(name, sizeof name, RS_PROBE_STEP_FMT, p->step);
    snprintf(gp, sizeof gp, "/%s/%s", RS_G_PROBE, name);
    hid_t pr = make_group(rf->file, RS_G_PROBE);
    if (pr < 0) return fail_h5(rf, "create /probe");
    int rc = probe_group(rf, pr, name, gp, p, NULL);
    H5Gclose(pr);
    if (rc == 0 && H5Fflush(rf->file, H5F_SCOPE_LOCAL) < 0) rc = fail_h5(rf, "flush");
    return rc;
}

static int write_probe_impl(RunFile *rf, const ProbeRecord *p) {
    if (!rf || !p) return fail(NULL, 0, "runfile_write_probe: no run file or probe");
    H5uQuiet q = h5u_quiet_begin();
    int rc = probe_impl(rf, p);
    h5u_quiet_end(q);
    return rc;
}

/* ---- parameters ---- */

#define F32 H5T_IEEE_F32LE, H5T_NATIVE_FLOAT

static int params_impl(RunFile *rf, const Model *m) {
    if (reserve(rf, compressed_bound(m->table.total * sizeof(float), (size_t)m->table.count)) < 0)
        return -1;
    hid_t g = make_group(rf->file, RS_G_PARAMS);
    if (g < 0) return fail_h5(rf, "create /params");
    int rc = 0;
    for (int i = 0; rc == 0 && i < m->table.count; i++) {
        const ParamInfo *pi = &m->table.info[i];
        hsize_t dims[2] = {(hsize_t)pi->shape[0], (hsize_t)pi->shape[1]};
        size_t numel = pi->ndim == 2 ? (size_t)dims[0] * (size_t)dims[1] : (size_t)dims[0];
        if ((pi->ndim != 1 && pi->ndim != 2) || pi->shape[0] < 0 ||
            (pi->ndim == 2 && pi->shape[1] < 0) || numel != pi->numel ||
            pi->offset > m->table.total || numel > m->table.total - pi->offset ||
            strchr(pi->name, '/') || !pi->name[0]) {
            rc = fail(NULL, 0, "%s: parameter '%s' has a bad table entry (ndim %d)", rf->path,
                      pi->name, pi->ndim);
            break;
        }
        rc = write_array(
            rf, g, "/" RS_G_PARAMS, pi->name, F32, pi->ndim, dims, m->params + pi->offset,
            pi->ndim == 2 ? "weight, PyTorch nn.Linear [out, in] layout" : "vector parameter");
        if (rc == 0) {
            hid_t ds = H5Dopen2(g, pi->name, H5P_DEFAULT);
            if (ds < 0 || h5u_attr_i64(ds, RS_PARAM_DECAY, pi->decay) < 0 ||
                h5u_attr_i64(ds, RS_PARAM_ADDED, pi->added) < 0)
                rc = fail_h5(rf, "write /params attributes");
            if (ds >= 0) H5Dclose(ds);
        }
    }
    H5Gclose(g);
    if (rc == 0 && H5Fflush(rf->file, H5F_SCOPE_LOCAL) < 0) rc = fail_h5(rf, "flush");
    return rc;
}

static int write_params_impl(RunFile *rf, const Model *m) {
    if (!rf || !m || (!m->params && m->table.total))
        return fail(NULL, 0, "runfile_write_params: no run file or model");
    H5uQuiet q = h5u_quiet_begin();
    int rc = params_impl(rf, m);
    h5u_quiet_end(q);
    return rc;
}

/* ---- reopen for resume ---- */

static int check_schema(RunFile *rf) {
    char *schema = NULL;
    long long ver = 0;
    if (h5u_attr_read_str(rf->file, RS_SCHEMA, &schema) < 0) {
        h5u_reason();
        return fail(NULL, 0, "%s: not a gatelab run file (no schema attribute)", rf->path);
    }
    int ok = strcmp(schema, RUNFILE_SCHEMA) == 0;
    if (!ok) fail(NULL, 0, "%s: not a gatelab run file (schema is '%.60s')", rf->path, schema);
    free(schema);
    if (!ok) return -1;
    if (h5u_attr_read(rf->file, RS_SCHEMA_VERSION, H5T_NATIVE_LLONG, &ver) < 0) {
        h5u_reason();
        return fail(NULL, 0, "%s: not a gatelab run file (no schema_version)", rf->path);
    }
    if (ver != RUNFILE_SCHEMA_VERSION)
        return fail(NULL, 0,
                    "%s: not a gatelab run file (schema_version %lld, this gatelab reads %d)",
                    rf->path, ver, RUNFILE_SCHEMA_VERSION);
    return 0;
}

/* Open the datasets of one metric group; each must be 1-D. Returns the
 * shortest length through *len. */
static int open_metrics(RunFile *rf, const char *gname, const MetricSpec *spec, hid_t *ds, int nds,
                        hsize_t *len) {
    *len = (hsize_t)-1;
    for (int i = 0; i < nds; i++) {
        char p[128];
        snprintf(p, sizeof p, "/" RS_G_METRICS "/%s/%s", gname, spec[i].name);
        htri_t e = H5Lexists(rf->file, RS_G_METRICS, H5P_DEFAULT);
        if (e > 0) {
            char g[64];
            snprintf(g, sizeof g, "/" RS_G_METRICS "/%s", gname);
            e = H5Lexists(rf->file, g, H5P_DEFAULT);
        }
        if (e > 0) e = H5Lexists(rf->file, p, H5P_DEFAULT);
        if (e <= 0) {
            h5u_reason();
            return fail(NULL, 0, "%s: not a gatelab run file (missing %s)", rf->path, p);
        }
        ds[i] = H5Dopen2(rf->file, p, H5P_DEFAULT);
        hid_t sp = ds[i] >= 0 ? H5Dget_space(ds[i]) : -1;
        hsize_t n = 0;
        int ok = sp >= 0 && H5Sget_simple_extent_ndims(sp) == 1 &&
                 H5Sget_simple_extent_dims(sp, &n, NULL) == 1;
        if (sp >= 0) H5Sclose(sp);
        if (!ok) {
            char what[160];
            snprintf(what, sizeof what, "read %s as a 1-D dataset", p);
            return fail_h5(rf, what);
        }
        if (n < *len) *len = n;
    }
    return 0;
}

/* After a resume the rows must line up (issue 11): train rows are exactly
 * steps 0..step (one per step, none missing or twice), eval rows strictly
 * increasing. A run file that cannot give that is refused, not repaired;
 * that no row is missing before the checkpoint is runfile_train_rows. */
static int lineup_check(RunFile *rf, const char *gname, const long long *steps, hsize_t k) {
    int train = !strcmp(gname, RS_G_TRAIN);
    for (hsize_t i = 0; i < k; i++) {
        if (train && steps[i] != (long long)i)
            return fail(NULL, 0,
                        "%s: train row %llu is step %lld, not %llu (rows out of "
                        "order or written twice); cannot resume, start over with --force",
                        rf->path, (unsigned long long)i, steps[i], (unsigned long long)i);
        if (!train && i > 0 && steps[i] <= steps[i - 1])
            return fail(NULL, 0,
                        "%s: eval rows are not strictly increasing (step %lld after "
                        "%lld); cannot resume, start over with --force",
                        rf->path, steps[i], steps[i - 1]);
    }
    return 0;
}

/* Keep the rows whose step is <= `step` (the prefix before the first
 * later step; rows past a crash are simply dropped). */
static int truncate_metrics(RunFile *rf, const char *gname, hid_t *ds, int nds, hsize_t len,
                            long long step, hsize_t *kept) {
    long long *steps = len ? malloc((size_t)len * sizeof *steps) : NULL;
    if (len && !steps) return fail(NULL, 0, "%s: out of memory reading steps", rf->path);
    hsize_t k = 0;
    if (len) {
        hid_t fs = H5Dget_space(ds[0]);
        hsize_t start = 0;
        hid_t ms = H5Screate_simple(1, &len, NULL);
        int ok = fs >= 0 && ms >= 0 &&
                 H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &len, NULL) >= 0 &&
                 H5Dread(ds[0], H5T_NATIVE_LLONG, ms, fs, H5P_DEFAULT, steps) >= 0;
        if (ms >= 0) H5Sclose(ms);
        if (fs >= 0) H5Sclose(fs);
        if (!ok) {
            free(steps);
            char what[96];
            snprintf(what, sizeof what, "read /metrics/%s/step", gname);
            return fail_h5(rf, what);
        }
        while (k < len && steps[k] <= step) k++;
    }
    int bad = lineup_check(rf, gname, steps, k);
    free(steps);
    if (bad) return -1;
    for (int i = 0; i < nds; i++)
        if (H5Dset_extent(ds[i], &k) < 0) {
            char what[96];
            snprintf(what, sizeof what, "truncate /metrics/%s", gname);
            return fail_h5(rf, what);
        }
    *kept = k;
    return 0;
}

typedef struct {
    char (*names)[64];
    int n, cap;
} NameList;

static herr_t collect_cb(hid_t g, const char *name, const H5L_info_t *info, void *ctx) {
    (void)g, (void)info;
    NameList *l = ctx;
    if (strlen(name) >= 64) return 0; /* not one of ours */
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 64;
        void *p = realloc(l->names, (size_t)cap * sizeof *l->names);
        if (!p) return -1;
        l->names = p;
        l->cap = cap;
    }
    snprintf(l->names[l->n++], 64, "%s", name);
    return 0;
}

/* Delete /probe/step_N groups with N > step (they belong to the future the
 * resumed run is about to recompute). */
static int drop_probes(RunFile *rf, long long step) {
    htri_t e = H5Lexists(rf->file, RS_G_PROBE, H5P_DEFAULT);
    if (e < 0) return fail_h5(rf, "look for /probe");
    if (e == 0) return 0;
    hid_t g = H5Gopen2(rf->file, RS_G_PROBE, H5P_DEFAULT);
    if (g < 0) return fail_h5(rf, "open /probe");
    NameList l = {NULL, 0, 0};
    int rc = 0;
    if (H5Literate(g, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, collect_cb, &l) < 0)
        rc = fail_h5(rf, "list /probe");
    for (int i = 0; rc == 0 && i < l.n; i++) {
        long long s;
        char tail;
        if (sscanf(l.names[i], RS_PROBE_STEP_SCAN, &s, &tail) != 1 || s <= step) continue;
        if (H5Ldelete(g, l.names[i], H5P_DEFAULT) < 0) {
            char what[128];
            snprintf(what, sizeof what, "delete /probe/%s", l.names[i]);
            rc = fail_h5(rf, what);
        }
    }
    free(l.names);
    H5Gclose(g);
    return rc;
}

static RunFile *reopen_impl(const char *path, long long step) {
    if (!path || !*path) return fail(NULL, 0, "run file path is empty"), NULL;
    if (strlen(path) >= RF_PATH) return fail(NULL, 0, "run file path is too long"), NULL;
    char why[RF_PATH + 128];
    if (input_check(path, why, sizeof why) < 0) return fail(NULL, 0, "%s", why), NULL;
    RunFile *rf = rf_alloc(path);
    if (!rf) return fail(NULL, 0, "%s: out of memory", path), NULL;
    hid_t fapl = make_fapl();
    if (fapl >= 0) rf->file = H5Fopen(path, H5F_ACC_RDWR, fapl);
    if (fapl >= 0) H5Pclose(fapl);
    if (rf->file < 0) {
        const char *why = h5u_reason();
        fail(NULL, 0, "%s: not a gatelab run file (%s)", path, *why ? why : "not an HDF5 file");
        free(rf);
        return NULL;
    }
    hsize_t len;
    int rc = check_schema(rf);
    if (rc == 0 && (rf->fd = open(path, O_RDWR)) < 0)
        rc = fail(NULL, 0, "%s: cannot open for writing: %s", path, strerror(errno));
    if (rc == 0) rc = reserve(rf, 0);
    if (rc == 0) rc = open_metrics(rf, RS_G_TRAIN, TRAIN, rf->train, N_TRAIN, &len);
    /* train row s is the step that took the model from s to s+1 steps: rows
     * from `step` on are redone after a resume; evals and probes at `step`
     * were taken before the checkpoint and are kept */
    if (rc == 0)
        rc = truncate_metrics(rf, RS_G_TRAIN, rf->train, N_TRAIN, len, step - 1, &rf->n_train);
    if (rc == 0) rc = open_metrics(rf, RS_G_EVAL, EVAL, rf->eval, N_EVAL, &len);
    if (rc == 0) rc = truncate_metrics(rf, RS_G_EVAL, rf->eval, N_EVAL, len, step, &rf->n_eval);
    if (rc == 0) rc = drop_probes(rf, step);
    if (rc == 0) rc = set_status_impl(rf, RS_STATUS_RUNNING);
    if (rc < 0) {
        char keep[sizeof last_err];
        memcpy(keep, last_err, sizeof keep);
        rf_free(rf);
        h5u_reason();
        memcpy(last_err, keep, sizeof keep);
        return NULL;
    }
    return rf;
}

RunFile *runfile_reopen(const char *path, long long step, char *err, size_t errlen) {
    H5uQuiet q = h5u_quiet_begin();
    RunFile *rf = reopen_impl(path, step);
    h5u_quiet_end(q);
    if (!rf && err && errlen) snprintf(err, errlen, "%s", last_err);
    return rf;
}

static int close_impl(RunFile *rf) {
    if (!rf) return 0;
    H5uQuiet q = h5u_quiet_begin();
    int rc = rf_free(rf);
    h5u_quiet_end(q);
    return rc;
}

/* ---- long-context evaluation results ---- */

static int lceval_attrs(RunFile *rf, hid_t g, const LcEvalData *d) {
    const char *k[] = {RS_VAL_LOSS,         RS_LC_PPL,       RS_LC_FIRST_SHARE,
                       RS_LC_UNIFORM_SHARE, RS_LC_SINK_RATE, RS_LC_YARN_SCALE};
    double v[] = {d->val_loss,      d->ppl,       d->first_share,
                  d->uniform_share, d->sink_rate, d->yarn_scale};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (h5u_attr_f64(g, k[i], v[i]) < 0) return fail_h5(rf, "write /lceval attributes");
    if (h5u_attr_i64(g, RS_LC_N_SEQS, d->n_seqs) < 0 ||
        h5u_attr_i64(g, RS_LC_TRAIN_LEN, d->train_len) < 0 ||
        h5u_attr_i64(g, RS_LC_LEN, d->len) < 0)
        return fail_h5(rf, "write /lceval attributes");
    return 0;
}

static int lceval_impl(RunFile *rf, const LcEvalData *d) {
    char name[64];
    snprintf(name, sizeof name, RS_LC_LEN_FMT, d->len);
    int rc = reserve(rf, (size_t)d->n_buckets * 8 + ((size_t)16 << 10));
    hid_t top = rc == 0 ? make_group(rf->file, RS_G_LCEVAL) : -1;
    hid_t mg = top >= 0 ? make_group(top, d->mode) : -1;
    if (rc == 0 && mg < 0) rc = fail_h5(rf, "create /lceval group");
    /* a re-run of the same length replaces the old result */
    if (rc == 0 && H5Lexists(mg, name, H5P_DEFAULT) > 0 && H5Ldelete(mg, name, H5P_DEFAULT) < 0)
        rc = fail_h5(rf, "replace an old /lceval result");
    hid_t g = rc == 0 ? H5Gcreate2(mg, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) : -1;
    if (rc == 0 && g < 0) rc = fail_h5(rf, "create /lceval/<mode>/L_<len>");
    if (rc == 0) rc = lceval_attrs(rf, g, d);
    hsize_t n = (hsize_t)d->n_buckets;
    if (rc == 0)
        rc = write_array(rf, g, "/" RS_G_LCEVAL, RS_LC_LOSS_BY_BUCKET, H5T_IEEE_F64LE,
                         H5T_NATIVE_DOUBLE, 1, &n, d->loss_by_bucket,
                         "mean val loss over positions [i*train_len, (i+1)*train_len)");
    if (g >= 0) H5Gclose(g);
    if (mg >= 0) H5Gclose(mg);
    if (top >= 0) H5Gclose(top);
    return rc;
}

/* Open an existing, closed run file at path for writing and run fn on it. */
static int edit_at(const char *path, int (*fn)(RunFile *, const void *), const void *ctx) {
    H5uQuiet q = h5u_quiet_begin();
    RunFile *rf = rf_alloc(path);
    int rc = rf ? 0 : fail(NULL, 0, "%s: out of memory", path);
    hid_t fapl = rc == 0 ? make_fapl() : -1;
    if (fapl >= 0) rf->file = H5Fopen(path, H5F_ACC_RDWR, fapl);
    if (fapl >= 0) H5Pclose(fapl);
    if (rc == 0 && rf->file < 0) {
        const char *why = h5u_reason();
        rc = fail(NULL, 0, "%s: cannot open for writing (%s)", path,
                  *why ? why : "not an HDF5 file");
    }
    if (rc == 0) rc = check_schema(rf);
    if (rc == 0 && (rf->fd = open(path, O_RDWR)) < 0)
        rc = fail(NULL, 0, "%s: cannot open for writing: %s", path, strerror(errno));
    if (rc == 0) rc = fn(rf, ctx);
    if (rf) {
        char keep[sizeof last_err];
        memcpy(keep, last_err, sizeof keep);
        if (rf_free(rf) < 0 && rc == 0) rc = -1;
        else if (rc < 0) memcpy(last_err, keep, sizeof keep);
    }
    h5u_quiet_end(q);
    return rc;
}

/* A run file is finished work: a result goes into a copy that replaces it
 * only when complete, so a kill mid-write never costs the run. */
static int edit_copy(const char *path, int (*fn)(RunFile *, const void *), const void *ctx,
                     char *err, size_t errlen) {
    char tmp[RF_PATH];
    if (strlen(path) + 5 > sizeof tmp) return fail(err, errlen, "%s: path too long", path);
    memcpy(tmp, path, strlen(path));
    memcpy(tmp + strlen(path), ".tmp", 5);
    /* the one output rule (outpath.h): our own run file, never a link */
    if (outpath_check(path, OUT_RUNFILE, 1, err, errlen) != 0) return -1;
    if (file_copy(path, tmp, err, errlen) != 0) return -1;
    if (edit_at(tmp, fn, ctx) != 0) {
        if (err && errlen) snprintf(err, errlen, "%s", last_err);
        unlink(tmp);
        return -1;
    }
    return file_replace(tmp, path, err, errlen);
}

static int lceval_fn(RunFile *rf, const void *d) { return lceval_impl(rf, d); }

int runfile_write_lceval(const char *path, const LcEvalData *d, char *err, size_t errlen) {
    if (!path || !*path || strlen(path) >= RF_PATH)
        return fail(err, errlen, "run file path is empty or too long");
    if (!d || !d->mode || (strcmp(d->mode, RS_LC_PLAIN) && strcmp(d->mode, RS_LC_YARN)) ||
        d->len <= 0 || d->n_buckets < 0 || (d->n_buckets && !d->loss_by_bucket))
        return fail(err, errlen, "%s: bad long-context result to write", path);
    return edit_copy(path, lceval_fn, d, err, errlen);
}

/* ---- streaming evaluation (gatelab stream) ---- */

static int stream_impl(RunFile *rf, const void *ctx) {
    const StreamData *d = ctx;
    char name[64];
    snprintf(name, sizeof name, RS_ST_WINDOW_FMT, d->window);
    size_t nl = (size_t)(d->n_keep + 1) * d->n_seqs;
    int rc = reserve(rf, nl * 8 + ((size_t)16 << 10));
    hid_t top = rc == 0 ? make_group(rf->file, RS_G_STREAM) : -1;
    if (rc == 0 && top < 0) rc = fail_h5(rf, "create /" RS_G_STREAM);
    if (rc == 0 && H5Lexists(top, name, H5P_DEFAULT) > 0 && H5Ldelete(top, name, H5P_DEFAULT) < 0)
        rc = fail_h5(rf, "replace an old /stream result");
    hid_t g = rc == 0 ? H5Gcreate2(top, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) : -1;
    if (rc == 0 && g < 0) rc = fail_h5(rf, "create /stream/W_<window>");
    if (rc == 0 &&
        (h5u_attr_i64(g, RS_ST_WINDOW, d->window) < 0 || h5u_attr_i64(g, RS_ST_LEN, d->len) < 0 ||
         h5u_attr_i64(g, RS_ST_N_SEQS, d->n_seqs) < 0 ||
         h5u_attr_f64(g, RS_ST_DELTA, d->delta) < 0 || h5u_attr_f64(g, RS_ST_P, d->p) < 0))
        rc = fail_h5(rf, "write /stream attributes");
    hsize_t nk = (hsize_t)d->n_keep, dims[2] = {(hsize_t)d->n_keep + 1, (hsize_t)d->n_seqs};
    if (rc == 0)
        rc = write_array(rf, g, "/" RS_G_STREAM, RS_ST_KEEP, H5T_STD_I32LE, H5T_NATIVE_INT, 1, &nk,
                         d->keep, "first tokens each streaming row keeps");
    if (rc == 0)
        rc = write_array(rf, g, "/" RS_G_STREAM, RS_ST_LOSS, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 2,
                         dims, d->loss,
                         "mean loss per sequence at positions >= window: dense, then each keep");
    if (g >= 0) H5Gclose(g);
    if (top >= 0) H5Gclose(top);
    return rc;
}

int runfile_write_stream(const char *path, const StreamData *d, char *err, size_t errlen) {
    if (!path || !*path || strlen(path) >= RF_PATH)
        return fail(err, errlen, "run file path is empty or too long");
    if (!d || d->window < 1 || d->n_keep < 1 || d->n_seqs < 1 || !d->keep || !d->loss)
        return fail(err, errlen, "%s: bad streaming result to write", path);
    return edit_copy(path, stream_impl, d, err, errlen);
}

/* ---- interventions (gatelab intervene) ---- */

typedef struct {
    const InterventionOut *iv;
    int n;
} IvBatch;

static int iv_attrs(RunFile *rf, hid_t g, const InterventionOut *o) {
    if (h5u_attr_str(g, RS_IV_KIND, o->kind) < 0 || h5u_attr_f64(g, RS_IV_LOSS, o->loss) < 0 ||
        h5u_attr_i64(g, RS_IV_LOSS_N, o->loss_n) < 0 ||
        h5u_attr_i64(g, RS_IV_CLIP_K, o->clip_k) < 0)
        return fail_h5(rf, "write /intervene attributes");
    return 0;
}

static int iv_fn(RunFile *rf, const void *ctx) {
    const IvBatch *b = ctx;
    hid_t top = make_group(rf->file, RS_G_INTERVENE);
    if (top < 0) return fail_h5(rf, "create /" RS_G_INTERVENE);
    int rc = 0;
    for (int i = 0; i < b->n && rc == 0; i++) {
        char gp[128];
        hid_t g = -1;
        snprintf(gp, sizeof gp, "/%s/%s", RS_G_INTERVENE, b->iv[i].kind);
        rc = probe_group(rf, top, b->iv[i].kind, gp, b->iv[i].probe, &g);
        if (rc == 0) rc = iv_attrs(rf, g, &b->iv[i]);
        if (g >= 0 && H5Gclose(g) < 0 && rc == 0) rc = fail_h5(rf, "close an /intervene group");
    }
    H5Gclose(top);
    return rc;
}

int runfile_write_interventions(const char *path, const InterventionOut *iv, int n, char *err,
                                size_t errlen) {
    if (!path || !*path || strlen(path) >= RF_PATH)
        return fail(err, errlen, "run file path is empty or too long");
    for (int i = 0; i < n; i++)
        if (!iv || !iv[i].kind || !*iv[i].kind || strchr(iv[i].kind, '/') || !iv[i].probe)
            return fail(err, errlen, "%s: bad intervention result to write", path);
    IvBatch b = {iv, n};
    return edit_copy(path, iv_fn, &b, err, errlen);
}

/* ---- the public face: -1 and the module's one-line reason in err ---- */

static int report_err(int rc, char *err, size_t errlen) {
    if (rc < 0) seterr(err, errlen, "%s", last_err);
    return rc;
}

int runfile_append_train(RunFile *rf, long long step, double loss, double lr, double grad_norm,
                         long long tokens, double seconds, char *err, size_t errlen) {
    return report_err(append_train_impl(rf, step, loss, lr, grad_norm, tokens, seconds), err,
                      errlen);
}

int runfile_append_eval(RunFile *rf, long long step, double val_loss, double val_bpb, char *err,
                        size_t errlen) {
    return report_err(append_eval_impl(rf, step, val_loss, val_bpb), err, errlen);
}

int runfile_set_status(RunFile *rf, const char *status, char *err, size_t errlen) {
    return report_err(set_status_quiet(rf, status), err, errlen);
}

int runfile_set_summary(RunFile *rf, const char *key, double value, char *err, size_t errlen) {
    return report_err(set_summary_impl(rf, key, value), err, errlen);
}

/* ---- pretrained provenance (gatelab inspect) ---- */

static int pretrained_attrs(hid_t g, const RunPretrained *p) {
    return h5u_attr_str(g, RS_PT_ARCHITECTURE, p->architecture) < 0 ||
                   h5u_attr_str(g, RS_PT_MODEL_TYPE, p->model_type) < 0 ||
                   h5u_attr_str(g, RS_PT_DTYPE, p->dtype) < 0 ||
                   h5u_attr_str(g, RS_PT_MODEL_DIR, p->model_dir) < 0 ||
                   h5u_attr_str(g, RS_PT_CONFIG_JSON, p->config_json) < 0 ||
                   h5u_attr_str(g, RS_PT_TOKENIZER, p->tokenizer) < 0 ||
                   h5u_attr_str(g, RS_PT_INPUT, p->input) < 0 ||
                   h5u_attr_str(g, RS_PT_INPUT_KIND, p->input_kind) < 0 ||
                   h5u_attr_i64(g, RS_PT_BOS_ID, p->bos_id) < 0 ||
                   h5u_attr_i64(g, RS_PT_THREADS, p->threads) < 0 ||
                   h5u_attr_f64(g, RS_PT_SECONDS, p->seconds) < 0
               ? -1
               : 0;
}

static int pretrained_impl(RunFile *rf, const RunPretrained *p) {
    if (!rf || !p || p->n_windows < 0)
        return fail(NULL, 0, "runfile_write_pretrained: bad arguments");
    if (reserve(rf, compressed_bound((size_t)p->n_windows * 4 + strlen(p->config_json), 2)) < 0)
        return -1;
    char variant[256];
    snprintf(variant, sizeof variant, RS_VARIANT_PRETRAINED_FMT, p->architecture);
    if (h5u_attr_str(rf->file, RS_VARIANT, variant) < 0 ||
        h5u_attr_str(rf->file, RS_SOURCE, RS_SOURCE_PRETRAINED) < 0 ||
        h5u_attr_i64(rf->file, RS_N_PARAMS, p->n_params) < 0)
        return fail_h5(rf, "write the root attributes of a pretrained run");
    hid_t g = make_group(rf->file, RS_G_PRETRAINED);
    if (g < 0) return fail_h5(rf, "create /" RS_G_PRETRAINED);
    int rc = pretrained_attrs(g, p) < 0 ? fail_h5(rf, "write /" RS_G_PRETRAINED " attributes") : 0;
    hsize_t n = (hsize_t)p->n_windows;
    if (rc == 0)
        rc = write_array(rf, g, "/" RS_G_PRETRAINED, RS_PT_FIRST_TOKEN, H5T_STD_I32LE,
                         H5T_NATIVE_INT, 1, &n, p->first_token,
                         "first token id of each window [seq]");
    if (H5Gclose(g) < 0 && rc == 0) rc = fail_h5(rf, "close /" RS_G_PRETRAINED);
    if (rc == 0 && H5Fflush(rf->file, H5F_SCOPE_LOCAL) < 0) rc = fail_h5(rf, "flush");
    return rc;
}

int runfile_write_pretrained(RunFile *rf, const RunPretrained *p, char *err, size_t errlen) {
    H5uQuiet q = h5u_quiet_begin();
    int rc = pretrained_impl(rf, p);
    h5u_quiet_end(q);
    return report_err(rc, err, errlen);
}

int runfile_write_probe(RunFile *rf, const ProbeRecord *p, char *err, size_t errlen) {
    return report_err(write_probe_impl(rf, p), err, errlen);
}

int runfile_write_params(RunFile *rf, const Model *m, char *err, size_t errlen) {
    return report_err(write_params_impl(rf, m), err, errlen);
}

long long runfile_train_rows(const RunFile *rf) { return rf ? (long long)rf->n_train : -1; }

int runfile_close(RunFile *rf, char *err, size_t errlen) {
    return report_err(close_impl(rf), err, errlen);
}
