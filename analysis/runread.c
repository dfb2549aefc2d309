/* runread.c: read-only run file access (see runread.h). Every dataset is
 * checked for class, rank and shape, and its size capped, before a byte is
 * allocated or read. HDF5's own error printing is off: errors come back as
 * one line naming the file and object. */
#include "runread.h"
#include "h5util.h"  /* h5u_attr_read_strbuf */
#include "runfile.h" /* RUNFILE_SCHEMA, RUNFILE_SCHEMA_VERSION */

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct RunReader {
    hid_t file;
    RunMeta meta;
};

static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* Deepest message on HDF5's error stack, e.g. "truncated file: eof = ..." */
static herr_t walk_cb(unsigned n, const H5E_error2_t *e, void *data)
{
    if (n == 0 && e->desc) snprintf((char *)data, 200, "%s", e->desc);
    return 0;
}
static const char *h5_reason(char *buf)
{
    buf[0] = '\0';
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, walk_cb, buf);
    return buf[0] ? buf : "unknown HDF5 error";
}

/* ---- attributes ---- */

/* A double from a file as an int: 0 when not finite or out of range (a
 * plain cast would be undefined behaviour). */
static int dbl_to_int(double v)
{
    return isfinite(v) && v > -2147483648.0 && v < 2147483648.0 ? (int)v : 0;
}

/* Read a one-element numeric attribute (any int/float type) as double. */
static int attr_double(hid_t obj, const char *name, double *out)
{
    if (H5Aexists(obj, name) <= 0) return -1;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    if (a < 0) return -1;
    hid_t ft = H5Aget_type(a), sp = H5Aget_space(a);
    int rc = -1;
    H5T_class_t c = ft >= 0 ? H5Tget_class(ft) : H5T_NO_CLASS;
    if ((c == H5T_INTEGER || c == H5T_FLOAT) && sp >= 0 &&
        H5Sget_simple_extent_npoints(sp) == 1)
        rc = H5Aread(a, H5T_NATIVE_DOUBLE, out) >= 0 ? 0 : -1;
    if (sp >= 0) H5Sclose(sp);
    if (ft >= 0) H5Tclose(ft);
    H5Aclose(a);
    return rc;
}

/* Integers read exactly (a u64 seed does not pass through a double). */
static int attr_ll(hid_t obj, const char *name, long long *out)
{
    if (H5Aexists(obj, name) <= 0) return -1;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    if (a < 0) return -1;
    hid_t ft = H5Aget_type(a);
    H5T_class_t c = ft >= 0 ? H5Tget_class(ft) : H5T_NO_CLASS;
    if (ft >= 0) H5Tclose(ft);
    H5Aclose(a);
    if (c != H5T_INTEGER) {
        double v;
        if (attr_double(obj, name, &v) < 0 || !(v > -9.2e18 && v < 9.2e18)) return -1;
        *out = (long long)v;
        return 0;
    }
    a = H5Aopen(obj, name, H5P_DEFAULT);
    hid_t sp = H5Aget_space(a);
    int rc = sp >= 0 && H5Sget_simple_extent_npoints(sp) == 1 &&
                     H5Aread(a, H5T_NATIVE_LLONG, out) >= 0
                 ? 0
                 : -1;
    if (sp >= 0) H5Sclose(sp);
    H5Aclose(a);
    return rc;
}

/* ---- datasets ---- */

/* Read dataset `name` under loc. want[rank] gives the expected dims, 0 for
 * "any" (filled in from the file). cls is the required HDF5 class; the
 * data is converted to memtype (elsize bytes). *out is malloc'd. */
static int read_ds(hid_t loc, const char *name, const char *path, int rank,
                   hsize_t *want, H5T_class_t cls, hid_t memtype,
                   size_t elsize, void **out, char *err, size_t errlen)
{
    *out = NULL;
    if (H5Lexists(loc, name, H5P_DEFAULT) <= 0) {
        seterr(err, errlen, "%s: missing dataset %s", path, name);
        return -1;
    }
    hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
    if (d < 0) {
        seterr(err, errlen, "%s: cannot open dataset %s", path, name);
        return -1;
    }
    int rc = -1;
    hid_t ft = H5Dget_type(d), sp = H5Dget_space(d);
    hsize_t dims[8];
    int r = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
    if (ft < 0 || H5Tget_class(ft) != cls) {
        seterr(err, errlen, "%s: dataset %s has the wrong type (want %s)",
               path, name, cls == H5T_FLOAT ? "float" : "integer");
        goto done;
    }
    if (r != rank || r > 8) {
        seterr(err, errlen, "%s: dataset %s has rank %d, want %d", path,
               name, r, rank);
        goto done;
    }
    H5Sget_simple_extent_dims(sp, dims, NULL);
    size_t total = 1;
    for (int i = 0; i < rank; i++) {
        if (want[i] && dims[i] != want[i]) {
            seterr(err, errlen,
                   "%s: dataset %s dim %d is %llu, want %llu", path, name, i,
                   (unsigned long long)dims[i], (unsigned long long)want[i]);
            goto done;
        }
        want[i] = dims[i];
        if (dims[i] > RUNREAD_MAX_ELEMS ||
            (total *= (size_t)dims[i]) > RUNREAD_MAX_ELEMS) {
            seterr(err, errlen, "%s: dataset %s is too large (> %zu elems)",
                   path, name, RUNREAD_MAX_ELEMS);
            goto done;
        }
    }
    void *buf = malloc(total ? total * elsize : 1);
    if (!buf) {
        seterr(err, errlen, "%s: out of memory reading %s", path, name);
        goto done;
    }
    if (total && H5Dread(d, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
        char why[200];
        seterr(err, errlen, "%s: cannot read dataset %s: %s", path, name,
               h5_reason(why));
        free(buf);
        goto done;
    }
    *out = buf;
    rc = 0;
done:
    if (sp >= 0) H5Sclose(sp);
    if (ft >= 0) H5Tclose(ft);
    H5Dclose(d);
    return rc;
}

#define READ_F32(loc, nm, rk, w, o) \
    read_ds(loc, nm, r->meta.path, rk, w, H5T_FLOAT, H5T_NATIVE_FLOAT, \
            sizeof(float), (void **)(o), err, errlen)
#define READ_F64(loc, nm, rk, w, o) \
    read_ds(loc, nm, r->meta.path, rk, w, H5T_FLOAT, H5T_NATIVE_DOUBLE, \
            sizeof(double), (void **)(o), err, errlen)
#define READ_I32(loc, nm, rk, w, o) \
    read_ds(loc, nm, r->meta.path, rk, w, H5T_INTEGER, H5T_NATIVE_INT, \
            sizeof(int), (void **)(o), err, errlen)
#define READ_I64(loc, nm, rk, w, o) \
    read_ds(loc, nm, r->meta.path, rk, w, H5T_INTEGER, H5T_NATIVE_LLONG, \
            sizeof(long long), (void **)(o), err, errlen)

/* ---- open / close ---- */

static int read_meta(RunReader *r, char *err, size_t errlen)
{
    RunMeta *m = &r->meta;
    char schema[64];
    double v;
    if (h5u_attr_read_strbuf(r->file, "schema", schema, sizeof schema) < 0) {
        seterr(err, errlen, "%s: not a gatelab run file (no schema attr)",
               m->path);
        return -1;
    }
    if (strcmp(schema, RUNFILE_SCHEMA) != 0) {
        seterr(err, errlen, "%s: schema is \"%s\", want \"%s\"", m->path,
               schema, RUNFILE_SCHEMA);
        return -1;
    }
    if (attr_double(r->file, "schema_version", &v) < 0) {
        seterr(err, errlen, "%s: missing attribute schema_version", m->path);
        return -1;
    }
    m->schema_version = dbl_to_int(v);
    if (m->schema_version != RUNFILE_SCHEMA_VERSION) {
        seterr(err, errlen, "%s: schema_version %d, this build reads %d",
               m->path, m->schema_version, RUNFILE_SCHEMA_VERSION);
        return -1;
    }
    if (h5u_attr_read_strbuf(r->file, "variant", m->variant,
                             sizeof m->variant) < 0 ||
        attr_ll(r->file, "seed", &m->seed) < 0) {
        seterr(err, errlen, "%s: missing root attribute variant or seed",
               m->path);
        return -1;
    }
    /* optional bookkeeping: absent stays empty / -1 */
    if (h5u_attr_read_strbuf(r->file, "status", m->status,
                             sizeof m->status) < 0)
        snprintf(m->status, sizeof m->status, "unknown");
    h5u_attr_read_strbuf(r->file, "created", m->created, sizeof m->created);
    h5u_attr_read_strbuf(r->file, "gatelab_version", m->gatelab_version,
                         sizeof m->gatelab_version);
    m->data_seed = m->n_params = m->n_params_added = -1;
    attr_ll(r->file, "data_seed", &m->data_seed);
    attr_ll(r->file, "n_params", &m->n_params);
    attr_ll(r->file, "n_params_added", &m->n_params_added);
    return 0;
}

/* The in-process open: HDF5 open plus the root attributes. */
static RunReader *open_file(const char *path, char *err, size_t errlen)
{
    if (H5Fis_hdf5(path) <= 0) {
        seterr(err, errlen, "%s: not an HDF5 file", path);
        return NULL;
    }
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) {
        char why[200];
        seterr(err, errlen, "%s: cannot open (truncated or corrupt?): %s",
               path, h5_reason(why));
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
    if (read_meta(r, err, errlen) < 0) {
        runread_close(r);
        return NULL;
    }
    return r;
}

static int vet_in_child(const char *path, char *err, size_t errlen);

RunReader *runread_open(const char *path, char *err, size_t errlen)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    struct stat st;
    if (stat(path, &st) != 0) {
        seterr(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        seterr(err, errlen, "%s: not a regular file", path);
        return NULL;
    }
    const char *novet = getenv("GATELAB_NO_VET");
    if (!(novet && strcmp(novet, "1") == 0) &&
        vet_in_child(path, err, errlen) < 0)
        return NULL;
    return open_file(path, err, errlen);
}

void runread_close(RunReader *r)
{
    if (!r) return;
    if (r->file >= 0) H5Fclose(r->file);
    free(r);
}

const RunMeta *runread_meta(const RunReader *r) { return &r->meta; }

/* Open group `name` if it exists (negative when absent). */
static hid_t open_group(hid_t loc, const char *name)
{
    if (H5Lexists(loc, name, H5P_DEFAULT) <= 0) return -1;
    return H5Gopen2(loc, name, H5P_DEFAULT);
}

int runread_config_double(RunReader *r, const char *key, double *out,
                          char *err, size_t errlen)
{
    hid_t g = open_group(r->file, "config");
    int rc = g >= 0 ? attr_double(g, key, out) : -1;
    if (g >= 0) H5Gclose(g);
    if (rc < 0)
        seterr(err, errlen, "%s: missing numeric config key %s",
               r->meta.path, key);
    return rc;
}

int runread_config_string(RunReader *r, const char *key, char *out,
                          size_t outlen, char *err, size_t errlen)
{
    hid_t g = open_group(r->file, "config");
    int rc = g >= 0 ? h5u_attr_read_strbuf(g, key, out, outlen) : -1;
    if (g >= 0) H5Gclose(g);
    if (rc < 0)
        seterr(err, errlen, "%s: missing string config key %s",
               r->meta.path, key);
    return rc;
}

int runread_pretrained_string(RunReader *r, const char *key, char *out,
                              size_t outlen, char *err, size_t errlen)
{
    hid_t g = open_group(r->file, "pretrained");
    int rc = g >= 0 ? h5u_attr_read_strbuf(g, key, out, outlen) : -1;
    if (g >= 0) H5Gclose(g);
    if (rc < 0)
        seterr(err, errlen, "%s: no /pretrained attribute %s", r->meta.path,
               key);
    return rc;
}

int runread_summary(RunReader *r, const char *key, double *out, char *err,
                    size_t errlen)
{
    hid_t g = open_group(r->file, "summary");
    int rc = g >= 0 ? attr_double(g, key, out) : -1;
    if (g >= 0) H5Gclose(g);
    if (rc < 0)
        seterr(err, errlen, "%s: missing summary value %s", r->meta.path,
               key);
    return rc;
}

/* ---- probes ---- */

typedef struct {
    long long *steps;
    int n, cap;
} StepList;

static herr_t step_cb(hid_t g, const char *name, const H5L_info_t *info,
                      void *data)
{
    (void)g;
    (void)info;
    StepList *s = data;
    long long v;
    char tail;
    if (sscanf(name, "step_%lld%c", &v, &tail) != 1) return 0; /* skip */
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        long long *p = realloc(s->steps, (size_t)cap * sizeof *p);
        if (!p) return -1;
        s->steps = p;
        s->cap = cap;
    }
    s->steps[s->n++] = v;
    return 0;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

int runread_probe_steps(RunReader *r, long long **steps, int *n, char *err,
                        size_t errlen)
{
    *steps = NULL;
    *n = 0;
    hid_t g = open_group(r->file, "probe");
    if (g < 0) return 0;
    StepList s = {0};
    herr_t rc = H5Literate(g, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, step_cb,
                           &s);
    H5Gclose(g);
    if (rc < 0) {
        free(s.steps);
        seterr(err, errlen, "%s: cannot list /probe", r->meta.path);
        return -1;
    }
    if (s.n) qsort(s.steps, (size_t)s.n, sizeof *s.steps, cmp_ll);
    *steps = s.steps;
    *n = s.n;
    return 0;
}

void runread_probe_free(RunProbe *p)
{
    if (!p) return;
    free(p->tokens);
    free(p->attention);
    free(p->attention_slot);
    free(p->first_col);
    free(p->alpha0);
    free(p->gate_sample);
    free(p->gate_hist);
    free(p->gate_channel_mean);
    free(p->gate_below);
    free(p->gate_stats);
    free(p->h_max);
    free(p->h_median);
    free(p->h_top3);
    free(p->h_kurtosis);
    free(p->h_norm_ratio);
    memset(p, 0, sizeof *p);
}

static int read_probe_attrs(RunReader *r, hid_t g, const char *gname,
                            RunProbe *p, char *err, size_t errlen)
{
    double v;
    if (attr_ll(g, "step", &p->step) < 0) {
        seterr(err, errlen, "%s: /probe/%s has no step attribute",
               r->meta.path, gname);
        return -1;
    }
    p->proxy = attr_double(g, "proxy", &v) == 0 && v != 0.0;
    if (h5u_attr_read_strbuf(g, "normaliser", p->normaliser,
                             sizeof p->normaliser) < 0)
        snprintf(p->normaliser, sizeof p->normaliser, "unknown");
    p->gate_channels = attr_double(g, "gate_channels", &v) == 0 ? dbl_to_int(v) : 0;
    p->gate_heads = attr_double(g, "gate_heads", &v) == 0 ? dbl_to_int(v) : 0;
    p->gate_bounded = attr_double(g, "gate_bounded", &v) == 0 && v != 0.0;
    return 0;
}

/* The attention map fixes L, H and its side M; first_col fixes N and T,
 * which equals M unless the attr maps_len says the maps are truncated
 * (then M = maps_len <= T); the rest must agree. */
static int read_probe_attn(RunReader *r, hid_t g, RunProbe *p, char *err,
                           size_t errlen)
{
    hsize_t w4[4] = {0, 0, 0, 0};
    if (READ_F32(g, "attention", 4, w4, &p->attention) < 0) return -1;
    if (w4[2] != w4[3]) {
        seterr(err, errlen, "%s: attention is [%llu,%llu,%llu,%llu], not "
               "square in T", r->meta.path, (unsigned long long)w4[0],
               (unsigned long long)w4[1], (unsigned long long)w4[2],
               (unsigned long long)w4[3]);
        return -1;
    }
    p->L = (int)w4[0];
    p->H = (int)w4[1];
    p->M = p->T = (int)w4[2];
    double ml;
    int truncated = attr_double(g, "maps_len", &ml) == 0 && ml == (double)w4[2];
    hsize_t fc[4] = {0, w4[0], w4[1], truncated ? 0 : w4[2]};
    if (READ_F32(g, "first_col", 4, fc, &p->first_col) < 0) return -1;
    p->N = (int)fc[0];
    if (fc[3] < w4[2] || fc[3] > INT_MAX) {
        seterr(err, errlen, "%s: first_col has %llu positions, fewer than the maps' %llu",
               r->meta.path, (unsigned long long)fc[3], (unsigned long long)w4[2]);
        return -1;
    }
    p->T = (int)fc[3];
    w4[2] = fc[3];
    hsize_t tk[2] = {fc[0], w4[2]};
    if (READ_I32(g, "tokens", 2, tk, &p->tokens) < 0) return -1;
    hsize_t a0[2] = {w4[0], w4[1]};
    if (READ_F32(g, "alpha0", 2, a0, &p->alpha0) < 0) return -1;
    if (H5Lexists(g, "attention_slot", H5P_DEFAULT) > 0) {
        hsize_t sl[3] = {w4[0], w4[1], w4[2]};
        if (READ_F32(g, "attention_slot", 3, sl, &p->attention_slot) < 0)
            return -1;
    }
    return 0;
}

static int read_probe_gate(RunReader *r, hid_t g, RunProbe *p, char *err,
                           size_t errlen)
{
    p->has_gate = H5Lexists(g, "gate_channel_mean", H5P_DEFAULT) > 0;
    if (!p->has_gate) return 0;
    hsize_t L = (hsize_t)p->L;
    hsize_t cm[2] = {L, 0};
    if (READ_F64(g, "gate_channel_mean", 2, cm, &p->gate_channel_mean) < 0)
        return -1;
    if (p->gate_channels == 0) p->gate_channels = (int)cm[1];
    if ((hsize_t)p->gate_channels != cm[1] || p->gate_heads < 1 ||
        p->gate_channels % p->gate_heads) {
        seterr(err, errlen, "%s: gate_channel_mean has %llu channels but "
               "attrs say gate_channels=%d gate_heads=%d", r->meta.path,
               (unsigned long long)cm[1], p->gate_channels, p->gate_heads);
        return -1;
    }
    hsize_t hi[2] = {L, RUNREAD_GATE_BINS};
    if (READ_F64(g, "gate_hist", 2, hi, &p->gate_hist) < 0) return -1;
    hsize_t be[2] = {L, RUNREAD_NBELOW};
    if (READ_F64(g, "gate_below", 2, be, &p->gate_below) < 0) return -1;
    hsize_t st[2] = {L, 4};
    if (READ_F64(g, "gate_stats", 2, st, &p->gate_stats) < 0) return -1;
    if (H5Lexists(g, "gate_sample", H5P_DEFAULT) > 0) {
        hsize_t gs[4] = {L, 0, (hsize_t)p->T, cm[1]};
        if (READ_F32(g, "gate_sample", 4, gs, &p->gate_sample) < 0) return -1;
        p->gate_sample_n = (int)gs[1];
    }
    return 0;
}

static int read_probe_hidden(RunReader *r, hid_t g, RunProbe *p, char *err,
                             size_t errlen)
{
    hid_t h = open_group(g, "hidden");
    if (h < 0) {
        seterr(err, errlen, "%s: probe step %lld has no hidden/ group",
               r->meta.path, p->step);
        return -1;
    }
    hsize_t L = (hsize_t)p->L;
    hsize_t w1[1] = {L}, w2[1] = {L}, w3[1] = {L}, w4[1] = {L};
    hsize_t t3[2] = {L, 3};
    int rc = -1;
    if (READ_F64(h, "max", 1, w1, &p->h_max) == 0 &&
        READ_F64(h, "median", 1, w2, &p->h_median) == 0 &&
        READ_F64(h, "top3", 2, t3, &p->h_top3) == 0 &&
        READ_F64(h, "kurtosis", 1, w3, &p->h_kurtosis) == 0 &&
        READ_F64(h, "norm_ratio", 1, w4, &p->h_norm_ratio) == 0)
        rc = 0;
    H5Gclose(h);
    return rc;
}

int runread_probe(RunReader *r, long long step, RunProbe *p, char *err,
                  size_t errlen)
{
    memset(p, 0, sizeof *p);
    long long *steps;
    int n;
    if (runread_probe_steps(r, &steps, &n, err, errlen) < 0) return -1;
    if (n == 0) {
        seterr(err, errlen, "%s: no probes in /probe", r->meta.path);
        return -1;
    }
    long long want = step < 0 ? steps[n - 1] : step;
    int found = 0;
    for (int i = 0; i < n; i++) found |= steps[i] == want;
    free(steps);
    if (!found) {
        seterr(err, errlen, "%s: no probe at step %lld", r->meta.path, want);
        return -1;
    }
    char gname[64];
    snprintf(gname, sizeof gname, "probe/step_%07lld", want);
    hid_t g = H5Gopen2(r->file, gname, H5P_DEFAULT);
    if (g < 0) {
        seterr(err, errlen, "%s: cannot open /%s", r->meta.path, gname);
        return -1;
    }
    int rc = -1;
    if (read_probe_attrs(r, g, gname, p, err, errlen) == 0 &&
        read_probe_attn(r, g, p, err, errlen) == 0 &&
        read_probe_gate(r, g, p, err, errlen) == 0 &&
        read_probe_hidden(r, g, p, err, errlen) == 0)
        rc = 0;
    H5Gclose(g);
    if (rc < 0) runread_probe_free(p);
    return rc;
}

/* ---- metric series ---- */

void runread_train_free(RunTrain *t)
{
    free(t->step);
    free(t->loss);
    free(t->lr);
    free(t->grad_norm);
    free(t->seconds);
    free(t->tokens);
    memset(t, 0, sizeof *t);
}

void runread_eval_free(RunEval *e)
{
    free(e->step);
    free(e->val_loss);
    free(e->val_bpb);
    memset(e, 0, sizeof *e);
}

int runread_train(RunReader *r, RunTrain *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    hid_t g = open_group(r->file, "metrics/train");
    if (g < 0) {
        seterr(err, errlen, "%s: missing group /metrics/train", r->meta.path);
        return -1;
    }
    hsize_t n[6] = {0, 0, 0, 0, 0, 0};
    int rc = -1;
    /* each series is read with "any length" and all must then agree: an
     * empty first series must not let longer ones through as length n */
    if (READ_I64(g, "step", 1, &n[0], &t->step) == 0 &&
        READ_F64(g, "loss", 1, &n[1], &t->loss) == 0 &&
        READ_F64(g, "lr", 1, &n[2], &t->lr) == 0 &&
        READ_F64(g, "grad_norm", 1, &n[3], &t->grad_norm) == 0 &&
        READ_F64(g, "seconds", 1, &n[4], &t->seconds) == 0 &&
        READ_I64(g, "tokens", 1, &n[5], &t->tokens) == 0)
        rc = 0;
    for (int i = 1; rc == 0 && i < 6; i++)
        if (n[i] != n[0]) {
            seterr(err, errlen, "%s: /metrics/train series differ in length (%llu vs %llu)",
                   r->meta.path, (unsigned long long)n[i], (unsigned long long)n[0]);
            rc = -1;
        }
    H5Gclose(g);
    if (rc < 0) runread_train_free(t);
    else t->n = (size_t)n[0];
    return rc;
}

int runread_eval(RunReader *r, RunEval *e, char *err, size_t errlen)
{
    memset(e, 0, sizeof *e);
    hid_t g = open_group(r->file, "metrics/eval");
    if (g < 0) {
        seterr(err, errlen, "%s: missing group /metrics/eval", r->meta.path);
        return -1;
    }
    hsize_t n[3] = {0, 0, 0};
    int rc = -1;
    if (READ_I64(g, "step", 1, &n[0], &e->step) == 0 &&
        READ_F64(g, "val_loss", 1, &n[1], &e->val_loss) == 0 &&
        READ_F64(g, "val_bpb", 1, &n[2], &e->val_bpb) == 0)
        rc = 0;
    if (rc == 0 && (n[1] != n[0] || n[2] != n[0])) {
        seterr(err, errlen, "%s: /metrics/eval series differ in length", r->meta.path);
        rc = -1;
    }
    H5Gclose(g);
    if (rc < 0) runread_eval_free(e);
    else e->n = (size_t)n[0];
    return rc;
}

/* ---- weights and long-context results ---- */

int runread_param(RunReader *r, const char *name, float *out, int ndim,
                  const int *shape, char *err, size_t errlen)
{
    hid_t g = open_group(r->file, "params");
    if (g < 0) {
        seterr(err, errlen, "%s: no /params (the run has no final weights)",
               r->meta.path);
        return -1;
    }
    hsize_t want[8] = {0};
    for (int i = 0; i < ndim && i < 8; i++) want[i] = (hsize_t)shape[i];
    float *buf = NULL;
    int rc = ndim > 0 && ndim <= 8 ? READ_F32(g, name, ndim, want, &buf) : -1;
    H5Gclose(g);
    if (rc < 0) {
        if (ndim <= 0 || ndim > 8)
            seterr(err, errlen, "%s: bad rank for /params/%s", r->meta.path, name);
        return -1;
    }
    size_t n = 1;
    for (int i = 0; i < ndim; i++) n *= (size_t)shape[i];
    memcpy(out, buf, n * sizeof(float));
    free(buf);
    return 0;
}

typedef struct {
    int *v;
    int n, cap;
} IntList;

static herr_t len_cb(hid_t g, const char *name, const H5L_info_t *info,
                     void *data)
{
    (void)g;
    (void)info;
    IntList *s = data;
    int v;
    char tail;
    if (sscanf(name, "L_%d%c", &v, &tail) != 1 || v <= 0) return 0;
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        int *p = realloc(s->v, (size_t)cap * sizeof *p);
        if (!p) return -1;
        s->v = p;
        s->cap = cap;
    }
    s->v[s->n++] = v;
    return 0;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int runread_lceval_lengths(RunReader *r, const char *mode, int **lens,
                           int *n, char *err, size_t errlen)
{
    *lens = NULL;
    *n = 0;
    hid_t top = open_group(r->file, "lceval");
    if (top < 0) return 0;
    hid_t g = open_group(top, mode);
    H5Gclose(top);
    if (g < 0) return 0;
    IntList s = {0};
    herr_t rc = H5Literate(g, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, len_cb, &s);
    H5Gclose(g);
    if (rc < 0) {
        free(s.v);
        seterr(err, errlen, "%s: cannot list /lceval/%s", r->meta.path, mode);
        return -1;
    }
    if (s.n) qsort(s.v, (size_t)s.n, sizeof *s.v, cmp_int);
    *lens = s.v;
    *n = s.n;
    return 0;
}

void runread_lceval_free(RunLcEval *e)
{
    free(e->loss_by_bucket);
    e->loss_by_bucket = NULL;
}

int runread_lceval(RunReader *r, const char *mode, int len, RunLcEval *e,
                   char *err, size_t errlen)
{
    memset(e, 0, sizeof *e);
    char path[96];
    snprintf(path, sizeof path, "lceval/%.16s/L_%d", mode, len);
    hid_t g = H5Lexists(r->file, "lceval", H5P_DEFAULT) > 0 ? open_group(r->file, path) : -1;
    if (g < 0) {
        H5Eclear2(H5E_DEFAULT);
        seterr(err, errlen, "%s: no /%s", r->meta.path, path);
        return -1;
    }
    long long tl = 0, ln = 0;
    int rc = 0;
    rc |= attr_double(g, "val_loss", &e->val_loss);
    rc |= attr_double(g, "ppl", &e->ppl);
    rc |= attr_double(g, "first_share", &e->first_share);
    rc |= attr_double(g, "uniform_share", &e->uniform_share);
    rc |= attr_double(g, "sink_rate_0.3", &e->sink_rate);
    rc |= attr_double(g, "yarn_scale", &e->yarn_scale);
    rc |= attr_ll(g, "n_seqs", &e->n_seqs);
    rc |= attr_ll(g, "train_len", &tl);
    rc |= attr_ll(g, "len", &ln);
    if (rc) {
        H5Gclose(g);
        seterr(err, errlen, "%s: /%s lacks an attribute", r->meta.path, path);
        return -1;
    }
    e->len = (int)ln;
    e->train_len = (int)tl;
    hsize_t want[1] = {0};
    rc = READ_F64(g, "loss_by_bucket", 1, want, &e->loss_by_bucket);
    H5Gclose(g);
    if (rc < 0) return -1;
    e->n_buckets = (int)want[0];
    return 0;
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
 * GATELAB_NO_VET=1 skips it (the fuzz target sets that, so the fuzzer still
 * sees library crashes directly). */

#define VET_SECONDS 30

/* A sanitizer runtime (ASan, libFuzzer) would otherwise report the child's
 * crash as the parent's (e.g. write a fuzzer crash artifact). Weak: NULL in
 * a build without sanitizers. */
extern void __sanitizer_set_death_callback(void (*cb)(void))
    __attribute__((weak));

/* Read every attribute of /NAME the way the tools would (string or number). */
static herr_t vet_attr_cb(hid_t loc, const char *name, const H5A_info_t *info,
                          void *data)
{
    (void)info;
    (void)data;
    char *s;
    double v;
    if (h5u_attr_read_str(loc, name, &s) == 0) free(s);
    else attr_double(loc, name, &v);
    return 0;
}
static void vet_group_attrs(hid_t file, const char *name)
{
    hid_t g = open_group(file, name);
    if (g < 0) return;
    H5Aiterate2(g, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, vet_attr_cb, NULL);
    H5Gclose(g);
}

/* The child: the same reads the tools do, then "done" on fd. Never returns. */
__attribute__((noreturn)) static void vet_child(const char *path, int fd)
{
    static const int crash_sigs[] = {SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE};
    for (size_t i = 0; i < sizeof crash_sigs / sizeof *crash_sigs; i++)
        signal(crash_sigs[i], SIG_DFL); /* die by the signal: the parent sees it */
    signal(SIGALRM, SIG_DFL);
    alarm(VET_SECONDS + 5); /* no orphan spins on if the parent is gone */
    if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(NULL);
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
        dup2(null, 1);
        dup2(null, 2);
    }
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    char err[256];
    int rc = 1;
    RunReader *r = open_file(path, err, sizeof err);
    if (r) {
        vet_group_attrs(r->file, "config"); /* incl. the config "text" */
        vet_group_attrs(r->file, "summary");
        long long *steps; /* every probe's attrs (vlen strings); */
        int n;            /* arrays of the last only: cost */
        if (runread_probe_steps(r, &steps, &n, err, sizeof err) == 0) {
            for (int i = 0; i < n; i++) {
                char g[64];
                snprintf(g, sizeof g, "probe/step_%07lld", steps[i]);
                vet_group_attrs(r->file, g);
            }
            free(steps);
        }
        RunProbe p;
        RunTrain t;
        RunEval e;
        if (runread_probe(r, -1, &p, err, sizeof err) == 0) runread_probe_free(&p);
        if (runread_train(r, &t, err, sizeof err) == 0) runread_train_free(&t);
        if (runread_eval(r, &e, err, sizeof err) == 0) runread_eval_free(&e);
        runread_close(r);
        rc = 0;
    }
    ssize_t w = write(fd, "v", 1);
    _exit(w == 1 ? rc : 2);
}

static long ms_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)(t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Wait up to VET_SECONDS for the child's "done" byte on fd, then reap it.
 * 1 done, 0 the child ended without it, -1 hung (killed). */
static int vet_wait(pid_t pid, int fd, int *status)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int got = 1; /* a failing poll/read proceeds unvetted */
    for (;;) {
        long left = VET_SECONDS * 1000L - ms_since(&t0);
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
static int vet_in_child(const char *path, char *err, size_t errlen)
{
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
    int status, got = vet_wait(pid, fds[0], &status);
    if (got == 1) return 0;
    if (got < 0)
        seterr(err, errlen, "%s: reading this file hung for %d s: the file is "
               "corrupt", path, VET_SECONDS);
    else if (WIFSIGNALED(status))
        seterr(err, errlen, "%s: the HDF5 library crashed reading this file "
               "(signal %d): the file is corrupt", path, WTERMSIG(status));
    else
        seterr(err, errlen, "%s: the HDF5 library crashed reading this file "
               "(exit status %d): the file is corrupt", path,
               WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return -1;
}
