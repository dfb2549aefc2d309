/* runfile_priv.h: what the run file's writers share (runfile_core.c):
 * the open RunFile, the metric tables, and the HDF5 plumbing. Only the
 * runfile_*.c writers include it; the public face is runfile.h.
 *
 * Errors go through the project's one channel, seterr: every public
 * runfile_* call points rf->err at its caller's buffer for the length of
 * the call, and every helper reports with rf_fail / rf_fail_h5 (seterr
 * into that buffer, returning -1). Cleanup after a failure sets rf->err to
 * NULL first, so the first reason is the one the caller sees. */
#ifndef GATELAB_RUNFILE_PRIV_H
#define GATELAB_RUNFILE_PRIV_H

#include <stddef.h>

#include "h5util.h"
#include "runfile.h"

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

/* The train and eval metric datasets, in row order (runfile_core.c). */
#define N_TRAIN 6
#define N_EVAL 3
extern const MetricSpec TRAIN[N_TRAIN];
extern const MetricSpec EVAL[N_EVAL];

struct RunFile {
    hid_t file;
    int fd; /* our own descriptor, only for reserving disk space */
    hid_t train[N_TRAIN];
    hid_t eval[N_EVAL];
    hsize_t n_train, n_eval;
    char path[RF_PATH];
    char *err; /* the current call's error buffer (NULL: errors dropped) */
    size_t errlen;
};

/* One-line error into rf->err (seterr); returns -1. */
int rf_fail(const RunFile *rf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "path: cannot WHAT (hdf5: innermost reason)" into rf->err; returns -1. */
int rf_fail_h5(const RunFile *rf, const char *what);

/* A RunFile for path with nothing open, errors into err; NULL out of memory. */
RunFile *rf_alloc(const char *path, char *err, size_t errlen);
/* Close everything and free rf; -1 (reason in rf->err) when the final
 * flush or close failed (a full disk). */
int rf_free(RunFile *rf);

/* Reserve disk for a write of about `bytes` past HDF5's allocation (see
 * runfile_core.c for why); -1 with the reason when the disk is full. */
int rf_reserve(RunFile *rf, size_t bytes);
/* Deflate can grow incompressible data a little: a generous bound. */
size_t rf_compressed_bound(size_t raw, size_t n_datasets);
/* Open group loc/name, creating it when absent; -1 on failure. */
hid_t rf_make_group(hid_t loc, const char *name);
/* A file-access list with strong close; -1 on failure. */
hid_t rf_make_fapl(void);
/* Write one fixed-shape compressed dataset loc/name (replacing it) with a
 * description; `where` names the group in the error. */
int rf_write_array(RunFile *rf, hid_t loc, const char *where, const char *name, hid_t ftype,
                   hid_t mtype, int rank, const hsize_t *dims, const void *data, const char *desc);
/* Open the datasets of metric group gname into ds (each must be 1-D);
 * *len gets the shortest length. */
int rf_open_metrics(RunFile *rf, const char *gname, const MetricSpec *spec, hid_t *ds, int nds,
                    hsize_t *len);
/* -1 with "not a gatelab run file (...)" unless the schema attributes are ours. */
int rf_check_schema(RunFile *rf);

/* Create (replacing) group `name` under `parent` and write probe p in it;
 * gp is its full path, for messages; the open group into *out when out
 * (runfile_append.c). */
int rf_probe_group(RunFile *rf, hid_t parent, const char *name, const char *gp,
                   const ProbeRecord *p, hid_t *out);
/* Set the root status attribute and flush (runfile_append.c). */
int rf_set_status_impl(RunFile *rf, const char *status);

#endif
