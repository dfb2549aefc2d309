/* checkpoint.c: RUN.h5.ckpt, the state a resumed run needs (runfile.h).
 *
 * The HDF5 file is built in memory, written with write(2) to a fresh
 * temporary beside RUN.h5.ckpt and renamed over it (atomic_write.h): a
 * kill or a full disk at any moment leaves either the old checkpoint or
 * the new one, never half of one. The three float
 * arrays are stored contiguous and uncompressed: checkpoints are rewritten
 * often and speed matters more than size. The image costs one transient
 * copy of the checkpoint in memory (12 bytes per parameter), small next to
 * the model's own params + grads + AdamW state. */
#define _POSIX_C_SOURCE 200809L
#include "runfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic_write.h"
#include "h5util.h"
#include "util.h"

#define CKPT_PATH 4096

static const char *const ARRAYS[3] = {RS_G_PARAMS, RS_CKPT_ADAM_M, RS_CKPT_ADAM_V};

static int ckpt_paths(const char *run_path, char *final, char *err, size_t errlen) {
    if (!run_path || !*run_path) return seterr(err, errlen, "checkpoint: run path is empty");
    if (strlen(run_path) + 10 >= CKPT_PATH)
        return seterr(err, errlen, "checkpoint: run path is too long");
    snprintf(final, CKPT_PATH, "%s.ckpt", run_path);
    return 0;
}

/* "file: what (hdf5: reason)" */
static int h5fail(char *err, size_t errlen, const char *file, const char *what) {
    const char *why = h5u_reason();
    if (*why) return seterr(err, errlen, "%s: cannot %s (hdf5: %s)", file, what, why);
    return seterr(err, errlen, "%s: cannot %s", file, what);
}

int checkpoint_exists(const char *run_path) {
    char final[CKPT_PATH];
    if (ckpt_paths(run_path, final, NULL, 0) < 0) return 0;
    return file_exists(final);
}

/* ---- save ---- */

static int write_f32(hid_t f, const char *name, const float *data, size_t n) {
    hsize_t dim = (hsize_t)n;
    hid_t sp = H5Screate_simple(1, &dim, NULL);
    if (sp < 0) return -1;
    hid_t ds = H5Dcreate2(f, name, H5T_IEEE_F32LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int rc = ds >= 0 ? 0 : -1;
    if (rc == 0 && n > 0 && H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
        rc = -1;
    if (ds >= 0 && H5Dclose(ds) < 0) rc = -1;
    H5Sclose(sp);
    return rc;
}

static int write_contents(hid_t f, const CheckpointOut *c, const char *config_text,
                          const char *name, char *err, size_t errlen) {
    const float *arr[3] = {c->params, c->m, c->v};
    for (int i = 0; i < 3; i++)
        if (write_f32(f, ARRAYS[i], arr[i], c->n) < 0) {
            char what[64];
            snprintf(what, sizeof what, "write %s", ARRAYS[i]);
            return h5fail(err, errlen, name, what);
        }
    if (h5u_attr_str(f, RS_SCHEMA, CKPT_SCHEMA) < 0 || h5u_attr_i64(f, RS_STEP, c->step) < 0 ||
        h5u_attr_i64(f, RS_TOKENS, c->tokens) < 0 || h5u_attr_f64(f, RS_SECONDS, c->seconds) < 0 ||
        h5u_attr_i64(f, RS_CKPT_N, (long long)c->n) < 0 ||
        h5u_attr_str(f, RS_CKPT_CONFIG_TEXT, config_text ? config_text : "") < 0)
        return h5fail(err, errlen, name, "write attributes");
    return 0;
}

/* Build the checkpoint as an in-memory HDF5 image (core driver, no backing
 * store) and return it malloc'd. HDF5 itself never touches the disk: in
 * HDF5 1.10 a close that fails on a full disk leaves a dangling file id
 * that crashes the process at exit, so every disk write here is our own. */
static char *build_image(const CheckpointOut *c, const char *config_text, const char *name,
                         size_t *len, char *err, size_t errlen) {
    size_t data = 3 * c->n * sizeof(float);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0 || H5Pset_fapl_core(fapl, data + ((size_t)1 << 16), 0) < 0) {
        if (fapl >= 0) H5Pclose(fapl);
        h5fail(err, errlen, name, "set up the in-memory image");
        return NULL;
    }
    hid_t f = H5Fcreate("gatelab-checkpoint-image", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    if (f < 0) {
        h5fail(err, errlen, name, "create the in-memory image");
        return NULL;
    }
    char *buf = NULL;
    int rc = write_contents(f, c, config_text, name, err, errlen);
    ssize_t n = -1;
    if (rc == 0 && (H5Fflush(f, H5F_SCOPE_LOCAL) < 0 || (n = H5Fget_file_image(f, NULL, 0)) <= 0))
        rc = h5fail(err, errlen, name, "size the in-memory image");
    if (rc == 0 && !(buf = malloc((size_t)n)))
        rc = seterr(err, errlen, "%s: out of memory for a %zd-byte checkpoint", name, n);
    if (rc == 0 && H5Fget_file_image(f, buf, (size_t)n) != n)
        rc = h5fail(err, errlen, name, "copy the in-memory image");
    if (H5Fclose(f) < 0 && rc == 0) rc = h5fail(err, errlen, name, "close the in-memory image");
    if (rc < 0) {
        free(buf);
        return NULL;
    }
    *len = (size_t)n;
    return buf;
}

static int save_impl(const char *final, const CheckpointOut *c, const char *config_text, char *err,
                     size_t errlen) {
    size_t len = 0;
    char *img = build_image(c, config_text, final, &len, err, errlen);
    if (!img) return -1;
    char tmp[ATOMIC_TMP_MAX];
    int fd = atomic_create(final, tmp, sizeof tmp, err, errlen);
    if (fd < 0) {
        free(img);
        return -1;
    }
    int rc = 0;
    if (h5u_write_all(fd, img, len) < 0)
        rc = seterr(err, errlen, "%s: write failed: %s", final, strerror(errno));
    if (close(fd) < 0 && rc == 0)
        rc = seterr(err, errlen, "%s: close failed: %s", final, strerror(errno));
    free(img);
    if (rc < 0) {
        atomic_discard(tmp); /* the old checkpoint is untouched */
        return -1;
    }
    return atomic_commit(tmp, final, 1, err, errlen);
}

int checkpoint_save(const char *run_path, const CheckpointOut *c, const char *config_text,
                    char *err, size_t errlen) {
    char final[CKPT_PATH];
    if (ckpt_paths(run_path, final, err, errlen) < 0) return -1;
    if (!c || (c->n && (!c->params || !c->m || !c->v)))
        return seterr(err, errlen, "%s: checkpoint_save given no arrays", final);
    H5uQuiet q = h5u_quiet_begin();
    int rc = save_impl(final, c, config_text, err, errlen);
    h5u_quiet_end(q);
    return rc;
}

/* ---- load ---- */

/* Check that `name` is a 1-D float dataset of n elements; read it into
 * out unless out is NULL (the check-only pass). */
static int read_f32(hid_t f, const char *file, const char *name, float *out, size_t n, char *err,
                    size_t errlen) {
    htri_t e = H5Lexists(f, name, H5P_DEFAULT);
    if (e <= 0) {
        h5u_reason();
        return seterr(err, errlen, "checkpoint %s has no dataset '%s'", file, name);
    }
    hid_t ds = H5Dopen2(f, name, H5P_DEFAULT);
    hid_t sp = ds >= 0 ? H5Dget_space(ds) : -1;
    hid_t t = ds >= 0 ? H5Dget_type(ds) : -1;
    hsize_t dim = 0;
    int shape_ok = sp >= 0 && t >= 0 && H5Sget_simple_extent_ndims(sp) == 1 &&
                   H5Sget_simple_extent_dims(sp, &dim, NULL) == 1 && H5Tget_class(t) == H5T_FLOAT;
    int rc = 0;
    if (ds < 0 || sp < 0 || t < 0) {
        char what[64];
        snprintf(what, sizeof what, "open dataset '%s'", name);
        rc = h5fail(err, errlen, file, what);
    } else if (!shape_ok || dim != (hsize_t)n) {
        h5u_reason();
        rc = seterr(err, errlen, "checkpoint %s: dataset '%s' is not a float array of %zu values",
                    file, name, n);
    } else if (out && n > 0 &&
               H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0) {
        char what[64];
        snprintf(what, sizeof what, "read dataset '%s'", name);
        rc = h5fail(err, errlen, file, what);
    }
    if (t >= 0) H5Tclose(t);
    if (sp >= 0) H5Sclose(sp);
    if (ds >= 0) H5Dclose(ds);
    return rc;
}

static int check_header(hid_t f, const char *file, size_t n, char *err, size_t errlen) {
    char *schema = NULL;
    if (h5u_attr_read_str(f, RS_SCHEMA, &schema) < 0 || strcmp(schema, CKPT_SCHEMA)) {
        free(schema);
        h5u_reason();
        return seterr(err, errlen, "%s: not a gatelab checkpoint (schema attribute)", file);
    }
    free(schema);
    long long stored = -1;
    if (h5u_attr_read(f, RS_CKPT_N, H5T_NATIVE_LLONG, &stored) < 0) {
        h5u_reason();
        return seterr(err, errlen, "%s: not a gatelab checkpoint (no 'n')", file);
    }
    if (stored < 0 || (unsigned long long)stored != (unsigned long long)n)
        return seterr(err, errlen, "checkpoint %s holds %lld parameters, the model has %zu", file,
                      stored, n);
    return 0;
}

static int load_impl(const char *file, float *params, float *m, float *v, size_t n, long long *step,
                     long long *tokens, double *seconds, char **config_text, char *err,
                     size_t errlen) {
    if (input_check(file, err, errlen) < 0) return -1;
    hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) {
        const char *why = h5u_reason();
        return seterr(err, errlen, "%s: not a readable checkpoint (%s)", file,
                      *why ? why : "not an HDF5 file");
    }
    long long st = 0, tok = 0;
    double sec = 0;
    char *text = NULL;
    int rc = check_header(f, file, n, err, errlen);
    if (rc == 0 && (h5u_attr_read(f, RS_STEP, H5T_NATIVE_LLONG, &st) < 0 ||
                    h5u_attr_read(f, RS_TOKENS, H5T_NATIVE_LLONG, &tok) < 0 ||
                    h5u_attr_read(f, RS_SECONDS, H5T_NATIVE_DOUBLE, &sec) < 0 ||
                    h5u_attr_read_str(f, RS_CKPT_CONFIG_TEXT, &text) < 0)) {
        h5u_reason();
        rc = seterr(err, errlen, "%s: checkpoint lacks step/tokens/seconds/config_text", file);
    }
    /* Validate all three before reading any, so a bad file leaves the
     * caller's buffers untouched. */
    float *dst[3] = {params, m, v};
    for (int i = 0; rc == 0 && i < 3; i++) rc = read_f32(f, file, ARRAYS[i], NULL, n, err, errlen);
    for (int i = 0; rc == 0 && i < 3; i++)
        rc = read_f32(f, file, ARRAYS[i], dst[i], n, err, errlen);
    H5Fclose(f);
    if (rc < 0) {
        free(text);
        return -1;
    }
    if (step) *step = st;
    if (tokens) *tokens = tok;
    if (seconds) *seconds = sec;
    if (config_text) *config_text = text;
    else free(text);
    return 0;
}

int checkpoint_load(const char *run_path, float *params, float *m, float *v, size_t n,
                    long long *step, long long *tokens, double *seconds, char **config_text,
                    char *err, size_t errlen) {
    char final[CKPT_PATH];
    if (config_text) *config_text = NULL;
    if (ckpt_paths(run_path, final, err, errlen) < 0) return -1;
    if (!file_exists(final)) return seterr(err, errlen, "%s: no such checkpoint", final);
    if (n && (!params || !m || !v))
        return seterr(err, errlen, "%s: checkpoint_load given no buffers", final);
    H5uQuiet q = h5u_quiet_begin();
    int rc = load_impl(final, params, m, v, n, step, tokens, seconds, config_text, err, errlen);
    h5u_quiet_end(q);
    return rc;
}
