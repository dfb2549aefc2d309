/* runfile_core.c: the plumbing every run-file writer shares
 * (runfile_priv.h): the metric tables, opening and closing, reserving
 * disk, chunked compressed arrays, the schema check, the one-line errors.
 * Every HDF5 failure becomes one line naming the file and object; HDF5's
 * own error stack is silenced while the public calls run (h5util.h). */
#define _POSIX_C_SOURCE 200809L
#include "runfile_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

const MetricSpec TRAIN[] = {
    {RS_STEP, 1, "step", "optimiser step (0-based) of this row"},
    {RS_LOSS, 0, "nats/token", "mean training cross-entropy of the step's batch"},
    {RS_LR, 0, "1", "learning rate used at this step"},
    {RS_GRAD_NORM, 0, "1", "global gradient L2 norm before clipping"},
    {RS_TOKENS, 1, "tokens", "training tokens consumed up to and including this step"},
    {RS_SECONDS, 0, "s", "wall-clock training seconds since the run began"},
};
const MetricSpec EVAL[] = {
    {RS_STEP, 1, "step", "optimiser step after which validation ran"},
    {RS_VAL_LOSS, 0, "nats/token", "mean validation cross-entropy"},
    {RS_VAL_BPB, 0, "bits/byte", "validation bits per byte"},
};

_Static_assert(sizeof TRAIN / sizeof TRAIN[0] == N_TRAIN, "N_TRAIN");
_Static_assert(sizeof EVAL / sizeof EVAL[0] == N_EVAL, "N_EVAL");

int rf_fail(const RunFile *rf, const char *fmt, ...) {
    if (rf->err && rf->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(rf->err, rf->errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* "path: what failed (hdf5: innermost reason)" */
int rf_fail_h5(const RunFile *rf, const char *what) {
    const char *why = h5u_reason();
    if (*why) return rf_fail(rf, "%s: cannot %s (hdf5: %s)", rf->path, what, why);
    return rf_fail(rf, "%s: cannot %s", rf->path, what);
}

RunFile *rf_alloc(const char *path, char *err, size_t errlen) {
    RunFile *rf = calloc(1, sizeof *rf);
    if (!rf) return seterr(err, errlen, "%s: out of memory", path), NULL;
    rf->err = err, rf->errlen = errlen;
    rf->file = -1;
    rf->fd = -1;
    for (int i = 0; i < N_TRAIN; i++) rf->train[i] = -1;
    for (int i = 0; i < N_EVAL; i++) rf->eval[i] = -1;
    snprintf(rf->path, sizeof rf->path, "%s", path);
    return rf;
}

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
int rf_free(RunFile *rf) {
    int rc = 0;
    for (int i = 0; i < N_TRAIN; i++)
        if (rf->train[i] >= 0 && H5Dclose(rf->train[i]) < 0) rc = -1;
    for (int i = 0; i < N_EVAL; i++)
        if (rf->eval[i] >= 0 && H5Dclose(rf->eval[i]) < 0) rc = -1;
    if (rf->file >= 0) {
        if (rf->fd >= 0) rf_reserve(rf, 0); /* best effort: nothing should be dirty */
        if (H5Fflush(rf->file, H5F_SCOPE_LOCAL) < 0) rc = -1;
        if (H5Fclose(rf->file) < 0) rc = -1;
    }
    if (rc < 0) rf_fail_h5(rf, "close the file");
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
int rf_reserve(RunFile *rf, size_t bytes) {
    haddr_t eoa = 0;
    if (H5Fget_eoa(rf->file, &eoa) < 0) return rf_fail_h5(rf, "query the file's allocation");
    size_t want = bytes + RESERVE_MARGIN;
    int e = posix_fallocate(rf->fd, (off_t)eoa, (off_t)want);
    if (e == 0 || e == EOPNOTSUPP || e == EINVAL) return 0;
    return rf_fail(rf, "%s: cannot reserve %zu bytes of disk for the next write: %s", rf->path,
                   want, strerror(e));
}

/* Deflate can grow incompressible data a little: bound it generously. */
size_t rf_compressed_bound(size_t raw, size_t n_datasets) {
    return raw + raw / 64 + n_datasets * ((size_t)8 << 10);
}

hid_t rf_make_group(hid_t loc, const char *name) {
    htri_t e = H5Lexists(loc, name, H5P_DEFAULT);
    if (e < 0) return -1;
    if (e > 0) return H5Gopen2(loc, name, H5P_DEFAULT);
    return H5Gcreate2(loc, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
}

/* Chunk shape for a fixed-size dataset, sized by bytes: the whole array
 * when it fits in CHUNK_BYTES, else leading dims cut, each to 1 while one
 * index of it alone is still too big (so a reader slicing [l, h] of large
 * maps reads one chunk), and the first dim that fits cut to as many
 * indices as fill CHUNK_BYTES (so many short windows share a chunk of
 * CHUNK_BYTES / 2 .. CHUNK_BYTES instead of one each); the last dim is cut
 * when one row alone is still too big. */
static void chunk_shape(int rank, const hsize_t *dims, size_t elsize, hsize_t *chunk) {
    size_t bytes = elsize;
    for (int i = 0; i < rank; i++) {
        chunk[i] = dims[i];
        bytes *= (size_t)dims[i];
    }
    for (int i = 0; i < rank - 1 && bytes > CHUNK_BYTES; i++) {
        size_t one = bytes / (size_t)chunk[i]; /* bytes of one index of dim i */
        chunk[i] = one >= CHUNK_BYTES ? 1 : CHUNK_BYTES / one;
        bytes = one * (size_t)chunk[i];
    }
    if (bytes > CHUNK_BYTES) {
        size_t keep = CHUNK_BYTES / elsize;
        chunk[rank - 1] = keep ? keep : 1;
    }
}

/* dcpl with chunking + shuffle + deflate + Fletcher-32 (every chunk carries
 * a checksum of its stored bytes, checked by HDF5 on each read), or plain
 * when the array is empty (a chunk dim may not exceed a fixed dim of 0). */
static hid_t make_dcpl(int rank, const hsize_t *dims, size_t elsize) {
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (dcpl < 0) return -1;
    size_t total = 1;
    for (int i = 0; i < rank; i++) total *= (size_t)dims[i];
    if (total == 0) return dcpl;
    hsize_t chunk[8];
    chunk_shape(rank, dims, elsize, chunk);
    if (H5Pset_chunk(dcpl, rank, chunk) < 0 || H5Pset_shuffle(dcpl) < 0 ||
        H5Pset_deflate(dcpl, DEFLATE_LEVEL) < 0 || H5Pset_fletcher32(dcpl) < 0) {
        H5Pclose(dcpl);
        return -1;
    }
    return dcpl;
}

/* Write one fixed-shape compressed dataset loc/name with a description.
 * `where` names the group for the error message. */
int rf_write_array(RunFile *rf, hid_t loc, const char *where, const char *name, hid_t ftype,
                   hid_t mtype, int rank, const hsize_t *dims, const void *data, const char *desc) {
    char what[512];
    snprintf(what, sizeof what, "write %s/%s", where, name);
    htri_t e = H5Lexists(loc, name, H5P_DEFAULT);
    if (e < 0 || (e > 0 && H5Ldelete(loc, name, H5P_DEFAULT) < 0)) return rf_fail_h5(rf, what);
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
    return rc < 0 ? rf_fail_h5(rf, what) : 0;
}

/* Strong close: closing the file closes any handle we might have missed,
 * so the file is never left open behind the caller's back. */
hid_t rf_make_fapl(void) {
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0 && H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0) {
        H5Pclose(fapl);
        return -1;
    }
    return fapl;
}

int rf_check_schema(RunFile *rf) {
    char *schema = NULL;
    long long ver = 0;
    if (h5u_attr_read_str(rf->file, RS_SCHEMA, &schema) < 0) {
        h5u_reason();
        return rf_fail(rf, "%s: not a gatelab run file (no schema attribute)", rf->path);
    }
    int ok = strcmp(schema, RUNFILE_SCHEMA) == 0;
    if (!ok) rf_fail(rf, "%s: not a gatelab run file (schema is '%.60s')", rf->path, schema);
    free(schema);
    if (!ok) return -1;
    if (h5u_attr_read(rf->file, RS_SCHEMA_VERSION, H5T_NATIVE_LLONG, &ver) < 0) {
        h5u_reason();
        return rf_fail(rf, "%s: not a gatelab run file (no schema_version)", rf->path);
    }
    if (ver < RUNFILE_SCHEMA_OLDEST || ver > RUNFILE_SCHEMA_VERSION)
        return rf_fail(rf,
                       "%s: not a gatelab run file (schema_version %lld, this gatelab reads %d "
                       "to %d)",
                       rf->path, ver, RUNFILE_SCHEMA_OLDEST, RUNFILE_SCHEMA_VERSION);
    return 0;
}

/* Open the datasets of one metric group; each must be 1-D. Returns the
 * shortest length through *len. */
int rf_open_metrics(RunFile *rf, const char *gname, const MetricSpec *spec, hid_t *ds, int nds,
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
            return rf_fail(rf, "%s: not a gatelab run file (missing %s)", rf->path, p);
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
            return rf_fail_h5(rf, what);
        }
        if (n < *len) *len = n;
    }
    return 0;
}
