/* runfile_create.c: a new run file (runfile_create): the root attributes,
 * the config and the empty metric datasets, built in memory and put on
 * disk whole, with its space reserved first (runfile_priv.h). */
#define _POSIX_C_SOURCE 200809L
#include "runfile_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "atomic_write.h"
#include "blas_core.h"
#include "ops.h"
#include "simd.h"
#include "gatelab_build.h"
#include "gatelab_version.h"
#include "runfile_read.h"
#include "util.h"

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
    hid_t g = rf_make_group(rf->file, RS_G_CONFIG);
    if (g < 0) return rf_fail_h5(rf, "create /config");
    VisitCtx c = {g, 0, ""};
    config_visit(cfg, visit_key, &c);
    int rc = 0;
    if (c.failed) {
        char what[256];
        snprintf(what, sizeof what, "write /config attribute '%s'", c.bad);
        rc = rf_fail_h5(rf, what);
    }
    char *text = rc == 0 ? config_text_alloc(cfg) : NULL;
    if (rc == 0 && !text) rc = rf_fail(rf, "%s: config text does not fit in 16 MB", rf->path);
    if (rc == 0 && h5u_attr_str(g, RS_CONFIG_TEXT, text) < 0)
        rc = rf_fail_h5(rf, "write /config attribute 'text'");
    free(text);
    H5Gclose(g);
    return rc;
}

/* RS_PRODUCTS: a trained model's products all go one way (ops.h gemm); a
 * checkpoint's pass (m NULL) runs its projections through OpenBLAS and its
 * attention through gemm. */
static const char *products_name(const Model *m) {
    if (!m) return "openblas projections, gatelab attention";
    return gemm_uses_blas() ? "openblas" : "gatelab";
}

static int write_root_attrs(RunFile *rf, const Config *cfg, const Model *m) {
    char created[32];
    iso_utc_now(created, sizeof created);
    hid_t f = rf->file;
    long long np = m ? (long long)m->table.total : 0;
    long long na = m ? (long long)model_added_params(m) : 0;
    BlasInfo bi;
    blas_info(&bi);
    char fields[1024] = "";
    if (cfg) config_variant_diff(cfg, fields, sizeof fields);
    if (h5u_attr_str(f, RS_SCHEMA, RUNFILE_SCHEMA) < 0 ||
        h5u_attr_i64(f, RS_SCHEMA_VERSION, RUNFILE_SCHEMA_VERSION) < 0 ||
        h5u_attr_str(f, RS_VARIANT, cfg ? cfg->variant : "") < 0 ||
        h5u_attr_str(f, RS_VARIANT_FIELDS, fields) < 0 ||
        h5u_attr_u64(f, RS_SEED, cfg ? cfg->init_seed : 0) < 0 ||
        h5u_attr_u64(f, RS_DATA_SEED, cfg ? cfg->data_seed : 0) < 0 ||
        h5u_attr_str(f, RS_CREATED, created) < 0 ||
        h5u_attr_str(f, RS_GATELAB_VERSION, GATELAB_VERSION " (git " GATELAB_DESCRIBE ")") < 0 ||
        h5u_attr_i64(f, RS_N_PARAMS, np) < 0 || h5u_attr_i64(f, RS_N_PARAMS_ADDED, na) < 0 ||
        h5u_attr_str(f, RS_BLAS_LIBRARY, bi.library) < 0 ||
        h5u_attr_str(f, RS_BLAS_VERSION, bi.version) < 0 ||
        h5u_attr_str(f, RS_BLAS_CORE, bi.core) < 0 ||
        h5u_attr_str(f, RS_BLAS_CORE_HOW, bi.how) < 0 ||
        h5u_attr_str(f, RS_SIMD_PATH, simd_path_name(simd_path())) < 0 ||
        h5u_attr_str(f, RS_PRODUCTS, products_name(m)) < 0 ||
        h5u_attr_str(f, RS_STATUS, RS_STATUS_RUNNING) < 0)
        return rf_fail_h5(rf, "write root attributes");
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
             H5Pset_shuffle(dcpl) >= 0 && H5Pset_deflate(dcpl, DEFLATE_LEVEL) >= 0 &&
             H5Pset_fletcher32(dcpl) >= 0; /* checksummed like rf_write_array's */
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
        return rf_fail_h5(rf, what);
    }
    *out = ds;
    return 0;
}

static int create_metrics(RunFile *rf) {
    hid_t m = rf_make_group(rf->file, RS_G_METRICS);
    hid_t tr = m >= 0 ? rf_make_group(m, RS_G_TRAIN) : -1;
    hid_t ev = m >= 0 ? rf_make_group(m, RS_G_EVAL) : -1;
    int rc = (m >= 0 && tr >= 0 && ev >= 0) ? 0 : rf_fail_h5(rf, "create /metrics");
    for (int i = 0; rc == 0 && i < N_TRAIN; i++)
        rc = create_metric(rf, tr, RS_G_TRAIN, &TRAIN[i], &rf->train[i]);
    for (int i = 0; rc == 0 && i < N_EVAL; i++)
        rc = create_metric(rf, ev, RS_G_EVAL, &EVAL[i], &rf->eval[i]);
    if (ev >= 0) H5Gclose(ev);
    if (tr >= 0) H5Gclose(tr);
    if (m >= 0) H5Gclose(m);
    return rc;
}

/* The new file's first state, built in memory (core driver, no backing
 * store) and returned malloc'd: HDF5 does no disk I/O while creating. */
static char *initial_image(RunFile *rf, const Config *cfg, const Model *m, size_t *len) {
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0 && H5Pset_fapl_core(fapl, (size_t)1 << 16, 0) >= 0)
        rf->file = H5Fcreate("gatelab-run-image", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (fapl >= 0) H5Pclose(fapl);
    if (rf->file < 0) {
        rf_fail_h5(rf, "build the file in memory");
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
        rc = rf_fail_h5(rf, "build the file in memory");
    if (rc == 0 && !(buf = malloc((size_t)n))) rc = rf_fail(rf, "%s: out of memory", rf->path);
    if (rc == 0 && H5Fget_file_image(rf->file, buf, (size_t)n) != n)
        rc = rf_fail_h5(rf, "build the file in memory");
    if (H5Fclose(rf->file) < 0 && rc == 0) rc = rf_fail_h5(rf, "build the file in memory");
    rf->file = -1;
    if (rc < 0) {
        free(buf);
        return NULL;
    }
    *len = (size_t)n;
    return buf;
}

/* Put the image on disk with our own write(2), space reserved first: into
 * a fresh temporary that then takes the path (atomic_write.h), only where
 * nothing is there yet unless force. rf->fd stays open on the new file. */
static int write_image(RunFile *rf, const char *img, size_t len, int force, int *created) {
    char tmp[ATOMIC_TMP_MAX], why[512];
    int fd = atomic_create(rf->path, tmp, sizeof tmp, why, sizeof why);
    if (fd < 0) return rf_fail(rf, "%s", why);
    int e = posix_fallocate(fd, 0, (off_t)(len + RESERVE_MARGIN));
    int rc = 0;
    if (e && e != EOPNOTSUPP && e != EINVAL)
        rc = rf_fail(rf, "%s: cannot reserve %zu bytes of disk: %s", rf->path, len + RESERVE_MARGIN,
                     strerror(e));
    if (rc == 0 && h5u_write_all(fd, img, len) < 0)
        rc = rf_fail(rf, "%s: write failed: %s", rf->path, strerror(errno));
    if (rc == 0 && atomic_commit(tmp, rf->path, force, why, sizeof why) != 0)
        rc = rf_fail(rf, "%s", why);
    if (rc != 0) {
        atomic_discard(tmp);
        close(fd);
        return -1;
    }
    rf->fd = fd;
    *created = 1;
    return 0;
}

static RunFile *create_impl(const char *path, const Config *cfg, const Model *m, int force,
                            char *err, size_t errlen) {
    if (!path || !*path) return seterr(err, errlen, "run file path is empty"), NULL;
    if (strlen(path) >= RF_PATH) return seterr(err, errlen, "run file path is too long"), NULL;
    /* the one output rule (outpath.h): a new path, or with force our own
     * run file; never a link, a directory or someone else's file */
    if (runfile_outpath_check(path, force, err, errlen) != 0) return NULL;
    RunFile *rf = rf_alloc(path, err, errlen);
    if (!rf) return NULL;
    size_t len = 0;
    int created = 0, rc = -1;
    char *img = initial_image(rf, cfg, m, &len);
    if (img) rc = write_image(rf, img, len, force, &created);
    free(img);
    if (rc == 0) {
        hid_t fapl = rf_make_fapl();
        if (fapl >= 0) rf->file = H5Fopen(path, H5F_ACC_RDWR, fapl);
        if (fapl >= 0) H5Pclose(fapl);
        if (rf->file < 0) rc = rf_fail_h5(rf, "open the new run file");
    }
    hsize_t n;
    if (rc == 0) rc = rf_open_metrics(rf, RS_G_TRAIN, TRAIN, rf->train, N_TRAIN, &n);
    if (rc == 0) rc = rf_open_metrics(rf, RS_G_EVAL, EVAL, rf->eval, N_EVAL, &n);
    if (rc < 0) {
        /* A half-written file would block the retry; nothing in it is a
         * finished result (a forced one was already truncated). */
        rf->err = NULL; /* the first reason stands */
        rf_free(rf);
        if (created) unlink(path);
        return NULL;
    }
    return rf;
}

RunFile *runfile_create(const char *path, const Config *cfg, const Model *m, int force, char *err,
                        size_t errlen) {
    H5uQuiet q = h5u_quiet_begin();
    RunFile *rf = create_impl(path, cfg, m, force, err, errlen);
    h5u_quiet_end(q);
    return rf;
}
