/* runfile_resume.c: reopening a run file to resume (runfile_reopen): the
 * rows past the checkpoint are cut, rows that do not line up refused, and
 * later probes dropped (runfile_priv.h). */
#define _POSIX_C_SOURCE 200809L
#include "runfile_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

/* After a resume the rows must line up: train rows are exactly
 * steps 0..step (one per step, none missing or twice), eval rows strictly
 * increasing. A run file that cannot give that is refused, not repaired;
 * that no row is missing before the checkpoint is runfile_train_rows. */
static int lineup_check(RunFile *rf, const char *gname, const long long *steps, hsize_t k) {
    int train = !strcmp(gname, RS_G_TRAIN);
    for (hsize_t i = 0; i < k; i++) {
        if (train && steps[i] != (long long)i)
            return rf_fail(rf,
                           "%s: train row %llu is step %lld, not %llu (rows out of "
                           "order or written twice); cannot resume, start over with --force",
                           rf->path, (unsigned long long)i, steps[i], (unsigned long long)i);
        if (!train && i > 0 && steps[i] <= steps[i - 1])
            return rf_fail(rf,
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
    if (len && !steps) return rf_fail(rf, "%s: out of memory reading steps", rf->path);
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
            return rf_fail_h5(rf, what);
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
            return rf_fail_h5(rf, what);
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
    if (e < 0) return rf_fail_h5(rf, "look for /probe");
    if (e == 0) return 0;
    hid_t g = H5Gopen2(rf->file, RS_G_PROBE, H5P_DEFAULT);
    if (g < 0) return rf_fail_h5(rf, "open /probe");
    NameList l = {NULL, 0, 0};
    int rc = 0;
    if (H5Literate(g, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, collect_cb, &l) < 0)
        rc = rf_fail_h5(rf, "list /probe");
    for (int i = 0; rc == 0 && i < l.n; i++) {
        long long s;
        char tail;
        if (sscanf(l.names[i], RS_PROBE_STEP_SCAN, &s, &tail) != 1 || s <= step) continue;
        if (H5Ldelete(g, l.names[i], H5P_DEFAULT) < 0) {
            char what[128];
            snprintf(what, sizeof what, "delete /probe/%s", l.names[i]);
            rc = rf_fail_h5(rf, what);
        }
    }
    free(l.names);
    H5Gclose(g);
    return rc;
}

static RunFile *reopen_impl(const char *path, long long step, char *err, size_t errlen) {
    if (!path || !*path) return seterr(err, errlen, "run file path is empty"), NULL;
    if (strlen(path) >= RF_PATH) return seterr(err, errlen, "run file path is too long"), NULL;
    if (input_check(path, err, errlen) < 0) return NULL;
    RunFile *rf = rf_alloc(path, err, errlen);
    if (!rf) return NULL;
    hid_t fapl = rf_make_fapl();
    if (fapl >= 0) rf->file = H5Fopen(path, H5F_ACC_RDWR, fapl);
    if (fapl >= 0) H5Pclose(fapl);
    if (rf->file < 0) {
        const char *why = h5u_reason();
        rf_fail(rf, "%s: not a gatelab run file (%s)", path, *why ? why : "not an HDF5 file");
        free(rf);
        return NULL;
    }
    hsize_t len;
    int rc = rf_check_schema(rf);
    if (rc == 0 && (rf->fd = open(path, O_RDWR)) < 0)
        rc = rf_fail(rf, "%s: cannot open for writing: %s", path, strerror(errno));
    if (rc == 0) rc = rf_reserve(rf, 0);
    if (rc == 0) rc = rf_open_metrics(rf, RS_G_TRAIN, TRAIN, rf->train, N_TRAIN, &len);
    /* train row s is the step that took the model from s to s+1 steps: rows
     * from `step` on are redone after a resume; evals and probes at `step`
     * were taken before the checkpoint and are kept */
    if (rc == 0)
        rc = truncate_metrics(rf, RS_G_TRAIN, rf->train, N_TRAIN, len, step - 1, &rf->n_train);
    if (rc == 0) rc = rf_open_metrics(rf, RS_G_EVAL, EVAL, rf->eval, N_EVAL, &len);
    if (rc == 0) rc = truncate_metrics(rf, RS_G_EVAL, rf->eval, N_EVAL, len, step, &rf->n_eval);
    if (rc == 0) rc = drop_probes(rf, step);
    if (rc == 0) rc = rf_set_status_impl(rf, RS_STATUS_RUNNING);
    if (rc < 0) {
        rf->err = NULL; /* the first reason stands */
        rf_free(rf);
        h5u_reason();
        return NULL;
    }
    return rf;
}

RunFile *runfile_reopen(const char *path, long long step, char *err, size_t errlen) {
    H5uQuiet q = h5u_quiet_begin();
    RunFile *rf = reopen_impl(path, step, err, errlen);
    h5u_quiet_end(q);
    return rf;
}
