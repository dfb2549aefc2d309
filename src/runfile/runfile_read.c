/* runfile_read.c: the one way into a run file for reading
 * (runfile_read.h): runread_open vets the file once (runfile_vet.c) and
 * then opens the handle (runfile_read_handle.c), which the typed readers
 * (runfile_read_config.c, runfile_read_probe.c, runfile_read_series.c)
 * take. Beside it, the output-path rule for run files and the two reads
 * that need no RunReader (the status the sweep plans from, whether a
 * group exists). The top of the read face: nothing below calls it.
 * HDF5's own error printing is off: errors come back as one line naming
 * the file and object. */
#include "runfile_read_priv.h"

#include <hdf5.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "env.h"
#include "h5util.h"
#include "outpath.h"
#include "runschema.h"
#include "util.h" /* seterr, input_check */

/* Vetting first (unless the test hook GATELAB_NO_VET=1 acts, env.h: only
 * in a test run of a build that is not a release build; the fuzz
 * target's build is one, and sets the variables, so the fuzzer still sees
 * library crashes directly), then the in-process open. */
RunReader *runread_open(const char *path, char *err, size_t errlen) {
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (input_check(path, err, errlen) < 0) return NULL;
    const char *novet = env_get("GATELAB_NO_VET"); /* a test hook (env.h) */
    if (!(novet && strcmp(novet, "1") == 0)) {
        if (rr_vet(path, err, errlen) < 0) return NULL;
    }
    return rr_open(path, err, errlen);
}

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
    if (outpath_check_with(path, OUT_RUNFILE, is_runfile, overwrite, err, errlen) == 0) return 0;
    /* a run of ours that is not finished: the reply points to --resume */
    struct stat st;
    char status[32];
    if (!overwrite && lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        runfile_read_status(path, status, sizeof status) == 0 && *status &&
        strcmp(status, RS_STATUS_DONE) != 0 && is_runfile(path))
        return seterr(err, errlen,
                      "%s exists and is not finished (status %s); continue it with --resume, "
                      "or start it over with --force",
                      path, status);
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

/* See runfile_read.h: every /lceval/plain length holds a needle result. */
int runfile_has_needle(const char *h5path) {
    RunReader *r = runread_open(h5path, NULL, 0);
    int *lens = NULL, n = 0, has = 0;
    if (r && runread_lceval_lengths(r, RS_LC_PLAIN, &lens, &n, NULL, 0) == 0 && n > 0) {
        has = 1;
        for (int i = 0; i < n && has; i++) {
            RunLcEval e;
            has = runread_lceval(r, RS_LC_PLAIN, lens[i], &e, NULL, 0) == 0;
            if (has) has = e.n_depths > 0, runread_lceval_free(&e);
        }
    }
    free(lens);
    if (r) runread_close(r);
    return has;
}
