/* runfile_read.c: the run file's read face (see runfile_read.h). Every dataset is
 * checked for class, rank and shape, and its size capped, before a byte is
 * allocated or read. HDF5's own error printing is off: errors come back as
 * one line naming the file and object. */
#include "runfile_read.h"
#include "runschema.h"
#include "h5util.h"
#include "util.h" /* seterr */ /* h5u_attr_read_strbuf */
#include "runfile.h"           /* RUNFILE_SCHEMA, RUNFILE_SCHEMA_VERSION */

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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct RunReader {
    hid_t file;
    RunMeta meta;
};

/* HDF5's innermost reason (h5util.h), never empty. */
static const char *h5_reason(void) {
    const char *why = h5u_reason();
    return *why ? why : "unknown HDF5 error";
}

/* ---- attributes ---- */

/* A double from a file as an int: 0 when not finite or out of range (a
 * plain cast would be undefined behaviour). */
static int dbl_to_int(double v) {
    return isfinite(v) && v > -2147483648.0 && v < 2147483648.0 ? (int)v : 0;
}

/* Read a one-element numeric attribute (any int/float type) as double. */
static int attr_double(hid_t obj, const char *name, double *out) {
    if (H5Aexists(obj, name) <= 0) return -1;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    if (a < 0) return -1;
    hid_t ft = H5Aget_type(a), sp = H5Aget_space(a);
    int rc = -1;
    H5T_class_t c = ft >= 0 ? H5Tget_class(ft) : H5T_NO_CLASS;
    if ((c == H5T_INTEGER || c == H5T_FLOAT) && sp >= 0 && H5Sget_simple_extent_npoints(sp) == 1)
        rc = H5Aread(a, H5T_NATIVE_DOUBLE, out) >= 0 ? 0 : -1;
    if (sp >= 0) H5Sclose(sp);
    if (ft >= 0) H5Tclose(ft);
    H5Aclose(a);
    return rc;
}

/* Integers read exactly (a u64 seed does not pass through a double). */
static int attr_ll(hid_t obj, const char *name, long long *out) {
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
    int rc =
        sp >= 0 && H5Sget_simple_extent_npoints(sp) == 1 && H5Aread(a, H5T_NATIVE_LLONG, out) >= 0
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
static int read_ds(hid_t loc, const char *name, const char *path, int rank, hsize_t *want,
                   H5T_class_t cls, hid_t memtype, size_t elsize, void **out, char *err,
                   size_t errlen) {
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
        seterr(err, errlen, "%s: dataset %s has the wrong type (want %s)", path, name,
               cls == H5T_FLOAT ? "float" : "integer");
        goto done;
    }
    if (r != rank || r > 8) {
        seterr(err, errlen, "%s: dataset %s has rank %d, want %d", path, name, r, rank);
        goto done;
    }
    H5Sget_simple_extent_dims(sp, dims, NULL);
    size_t total = 1;
    for (int i = 0; i < rank; i++) {
        if (want[i] && dims[i] != want[i]) {
            seterr(err, errlen, "%s: dataset %s dim %d is %llu, want %llu", path, name, i,
                   (unsigned long long)dims[i], (unsigned long long)want[i]);
            goto done;
        }
        want[i] = dims[i];
        if (dims[i] > RUNREAD_MAX_ELEMS || (total *= (size_t)dims[i]) > RUNREAD_MAX_ELEMS) {
            seterr(err, errlen, "%s: dataset %s is too large (> %zu elems)", path, name,
                   RUNREAD_MAX_ELEMS);
            goto done;
        }
    }
    void *buf = malloc(total ? total * elsize : 1);
    if (!buf) {
        seterr(err, errlen, "%s: out of memory reading %s", path, name);
        goto done;
    }
    if (total && H5Dread(d, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
        seterr(err, errlen, "%s: cannot read dataset %s: %s", path, name, h5_reason());
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

#define READ_F32(loc, nm, rk, w, o)                                                                \
    read_ds(loc, nm, r->meta.path, rk, w, H5T_FLOAT, H5T_NATIVE_FLOAT, sizeof(float),              \
            (void **)(o), err, errlen)
#define READ_F64(loc, nm, rk, w, o)                                                                \
    read_ds(loc, nm, r->meta.path, rk, w, H5T_FLOAT, H5T_NATIVE_DOUBLE, sizeof(double),            \
            (void **)(o), err, errlen)
#define READ_I32(loc, nm, rk, w, o)                                                                \
    read_ds(loc, nm, r->meta.path, rk, w, H5T_INTEGER, H5T_NATIVE_INT, sizeof(int), (void **)(o),  \
            err, errlen)
#define READ_I64(loc, nm, rk, w, o)                                                                \
    read_ds(loc, nm, r->meta.path, rk, w, H5T_INTEGER, H5T_NATIVE_LLONG, sizeof(long long),        \
            (void **)(o), err, errlen)

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
    if (attr_double(r->file, RS_SCHEMA_VERSION, &v) < 0) {
        seterr(err, errlen, "%s: missing attribute schema_version", m->path);
        return -1;
    }
    m->schema_version = dbl_to_int(v);
    if (m->schema_version != RUNFILE_SCHEMA_VERSION) {
        seterr(err, errlen, "%s: schema_version %d, this build reads %d", m->path,
               m->schema_version, RUNFILE_SCHEMA_VERSION);
        return -1;
    }
    if (h5u_attr_read_strbuf(r->file, RS_VARIANT, m->variant, sizeof m->variant) < 0 ||
        attr_ll(r->file, RS_SEED, &m->seed) < 0) {
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
    attr_ll(r->file, RS_DATA_SEED, &m->data_seed);
    attr_ll(r->file, RS_N_PARAMS, &m->n_params);
    attr_ll(r->file, RS_N_PARAMS_ADDED, &m->n_params_added);
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
        seterr(err, errlen, "%s: cannot open (truncated or corrupt?): %s", path, h5_reason());
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

RunReader *runread_open(const char *path, char *err, size_t errlen) {
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (input_check(path, err, errlen) < 0) return NULL;
    const char *novet = getenv("GATELAB_NO_VET");
    if (!(novet && strcmp(novet, "1") == 0) && vet_in_child(path, err, errlen) < 0) return NULL;
    return open_file(path, err, errlen);
}

void runread_close(RunReader *r) {
    if (!r) return;
    if (r->file >= 0) H5Fclose(r->file);
    free(r);
}

const RunMeta *runread_meta(const RunReader *r) { return &r->meta; }

/* Open group `name` if it exists (negative when absent). */
static hid_t open_group(hid_t loc, const char *name) {
    if (H5Lexists(loc, name, H5P_DEFAULT) <= 0) return -1;
    return H5Gopen2(loc, name, H5P_DEFAULT);
}

/* Attribute KEY of group GROUP: a double into *d, or (d NULL) a string
 * into s[slen]. -1 when the group or the attribute is missing. */
static int group_attr(RunReader *r, const char *group, const char *key, double *d, char *s,
                      size_t slen) {
    hid_t g = open_group(r->file, group);
    int rc = g < 0 ? -1 : d ? attr_double(g, key, d) : h5u_attr_read_strbuf(g, key, s, slen);
    if (g >= 0) H5Gclose(g);
    return rc;
}

int runread_config_double(RunReader *r, const char *key, double *out, char *err, size_t errlen) {
    if (group_attr(r, RS_G_CONFIG, key, out, NULL, 0) == 0) return 0;
    return seterr(err, errlen, "%s: missing numeric config key %s", r->meta.path, key);
}

int runread_config_string(RunReader *r, const char *key, char *out, size_t outlen, char *err,
                          size_t errlen) {
    if (group_attr(r, RS_G_CONFIG, key, NULL, out, outlen) == 0) return 0;
    return seterr(err, errlen, "%s: missing string config key %s", r->meta.path, key);
}

int runread_pretrained_string(RunReader *r, const char *key, char *out, size_t outlen, char *err,
                              size_t errlen) {
    if (group_attr(r, RS_G_PRETRAINED, key, NULL, out, outlen) == 0) return 0;
    return seterr(err, errlen, "%s: no /%s attribute %s", r->meta.path, RS_G_PRETRAINED, key);
}

int runread_summary(RunReader *r, const char *key, double *out, char *err, size_t errlen) {
    if (group_attr(r, RS_G_SUMMARY, key, out, NULL, 0) == 0) return 0;
    return seterr(err, errlen, "%s: missing summary value %s", r->meta.path, key);
}

/* ---- probes ---- */

/* The groups of g whose names match a numbered format ("step_%lld%c",
 * "L_%lld%c"), their numbers >= min, sorted: the probe steps and the
 * long-context lengths */
typedef struct {
    const char *scan;
    long long min, *v;
    int n, cap;
} NumList;

static herr_t num_cb(hid_t g, const char *name, const H5L_info_t *info, void *data) {
    (void)g;
    (void)info;
    NumList *s = data;
    long long v;
    char tail;
    if (sscanf(name, s->scan, &v, &tail) != 1 || v < s->min) return 0; /* skip */
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        long long *p = realloc(s->v, (size_t)cap * sizeof *p);
        if (!p) return -1;
        s->v = p;
        s->cap = cap;
    }
    s->v[s->n++] = v;
    return 0;
}

static int cmp_ll(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* 0 and the sorted list (malloc'd, NULL when empty), or -1 */
static int list_numbered(hid_t g, const char *scan, long long min, long long **v, int *n) {
    NumList s = {.scan = scan, .min = min};
    if (H5Literate(g, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, num_cb, &s) < 0) {
        free(s.v);
        return -1;
    }
    if (s.n) qsort(s.v, (size_t)s.n, sizeof *s.v, cmp_ll);
    *v = s.v;
    *n = s.n;
    return 0;
}

int runread_probe_steps(RunReader *r, long long **steps, int *n, char *err, size_t errlen) {
    *steps = NULL;
    *n = 0;
    hid_t g = open_group(r->file, RS_G_PROBE);
    if (g < 0) return 0;
    int rc = list_numbered(g, RS_PROBE_STEP_SCAN, LLONG_MIN, steps, n);
    H5Gclose(g);
    if (rc < 0) return seterr(err, errlen, "%s: cannot list /probe", r->meta.path);
    return 0;
}

void runread_probe_free(ProbeRecord *p) {
    if (!p) return;
#define RS_FREE(member, ctype, cls, hid, name, dims, kind, desc) free(p->member);
    RS_PROBE_ARRAYS(RS_FREE)
#undef RS_FREE
    memset(p, 0, sizeof *p);
}

static int read_probe_attrs(RunReader *r, hid_t g, const char *gname, ProbeRecord *p, char *err,
                            size_t errlen) {
    double v;
    if (attr_ll(g, RS_P_STEP, &p->step) < 0) {
        seterr(err, errlen, "%s: /probe/%s has no step attribute", r->meta.path, gname);
        return -1;
    }
    p->proxy = attr_double(g, RS_P_PROXY, &v) == 0 && v != 0.0;
    if (h5u_attr_read_strbuf(g, RS_P_NORMALISER, p->normaliser, sizeof p->normaliser) < 0)
        snprintf(p->normaliser, sizeof p->normaliser, "unknown");
    p->gate_channels = attr_double(g, RS_P_GATE_CHANNELS, &v) == 0 ? dbl_to_int(v) : 0;
    p->gate_heads = attr_double(g, RS_P_GATE_HEADS, &v) == 0 ? dbl_to_int(v) : 0;
    p->gate_bounded = attr_double(g, RS_P_GATE_BOUNDED, &v) == 0 && v != 0.0;
    /* files written before the attr: the variant's /config says */
    if (attr_double(g, RS_P_GATE_SHARED, &v) == 0 ||
        runread_config_double(r, RS_CFG_GATE_SHARED, &v, NULL, 0) == 0)
        p->gate_shared = v != 0.0;
    return 0;
}

/* The sizes of the dims letters of RS_PROBE_ARRAYS seen so far (0 until
 * the first array that has the letter). */
typedef struct {
    hsize_t L, H, T, N, C, S, P;
} ProbeDims;

static hsize_t *dim_slot(ProbeDims *d, char c, hsize_t *fixed) {
    switch (c) {
    case 'L': return &d->L;
    case 'H': return &d->H;
    case 'T': return &d->T;
    case 'P': return &d->P;
    case 'N': return &d->N;
    case 'C': return &d->C;
    case 'S': return &d->S;
    case 'B': *fixed = RS_GATE_BINS; return fixed;
    case 'K': *fixed = RS_GATE_NBELOW; return fixed;
    case 'M': *fixed = RS_GATE_NSTATS; return fixed;
    case '3': *fixed = RS_HIDDEN_TOP; return fixed;
    }
    *fixed = 0;
    return fixed;
}

/* One array of the table: skipped when optional and absent, or gated and
 * the probe has no gate; its dims checked against (and teaching) d. */
static int read_probe_array(RunReader *r, hid_t g, hid_t h, ProbeRecord *p, ProbeDims *d,
                            void **out, int cls, int hidden, const char *name, const char *dims,
                            int kind, char *err, size_t errlen) {
    hid_t loc = hidden ? h : g;
    if ((kind == RS_GATE || kind == RS_GATE_OPT) && !p->has_gate) return 0;
    if ((kind == RS_OPT || kind == RS_GATE_OPT) && H5Lexists(loc, name, H5P_DEFAULT) <= 0) return 0;
    int rank = (int)strlen(dims);
    hsize_t want[8], fixed[8];
    for (int i = 0; i < rank; i++) want[i] = *dim_slot(d, dims[i], &fixed[i]);
    int rc = cls == RS_F32   ? READ_F32(loc, name, rank, want, out)
             : cls == RS_F64 ? READ_F64(loc, name, rank, want, out)
                             : READ_I32(loc, name, rank, want, out);
    if (rc < 0) return -1;
    for (int i = 0; i < rank; i++) {
        hsize_t *slot = dim_slot(d, dims[i], &fixed[i]);
        if (*slot == 0) *slot = want[i];
        else if (*slot != want[i]) { /* a letter twice in one array (TT) */
            seterr(err, errlen, "%s: dataset %s dim %d is %llu, want %llu", r->meta.path, name, i,
                   (unsigned long long)want[i], (unsigned long long)*slot);
            return -1;
        }
    }
    return 0;
}

/* The maps are T x T unless the attr maps_len says they were cut to the
 * first maps_len <= T positions. */
static int check_maps_len(RunReader *r, hid_t g, const ProbeDims *d, char *err, size_t errlen) {
    double ml;
    int cut = attr_double(g, RS_P_MAPS_LEN, &ml) == 0;
    if (cut ? ml == (double)d->P && d->P <= d->T : d->P == d->T) return 0;
    seterr(err, errlen,
           "%s: attention maps are %llu x %llu but the probe has "
           "T=%llu%s",
           r->meta.path, (unsigned long long)d->P, (unsigned long long)d->P,
           (unsigned long long)d->T, cut ? " and a different maps_len" : " and no maps_len");
    return -1;
}

static int read_probe_arrays(RunReader *r, hid_t g, ProbeRecord *p, char *err, size_t errlen) {
    ProbeDims d = {0};
    hid_t h = open_group(g, RS_G_HIDDEN);
    if (h < 0) {
        seterr(err, errlen, "%s: probe step %lld has no hidden/ group", r->meta.path, p->step);
        return -1;
    }
    /* the gate arrays are there when gate_channel_mean is */
    p->has_gate = H5Lexists(g, RS_GATE_MARKER, H5P_DEFAULT) > 0;
    if (p->has_gate && p->gate_channels > 0) d.C = (hsize_t)p->gate_channels;
    int rc = 0;
#define RS_READ(member, ctype, cls, hid, name, dims, kind, desc)                                   \
    if (rc == 0)                                                                                   \
        rc = read_probe_array(r, g, h, p, &d, (void **)&p->member, cls, hid, name, dims, kind,     \
                              err, errlen);
    RS_PROBE_ARRAYS(RS_READ)
#undef RS_READ
    H5Gclose(h);
    p->L = (int)d.L, p->H = (int)d.H, p->T = (int)d.T, p->N = (int)d.N;
    p->M = (int)d.P;
    p->gate_sample_n = (int)d.S;
    if (rc == 0) rc = check_maps_len(r, g, &d, err, errlen);
    if (rc == 0 && p->has_gate) {
        if (p->gate_channels == 0) p->gate_channels = (int)d.C;
        /* a shared gate's channels serve every head whole: no split */
        if (p->gate_heads < 1 || (!p->gate_shared && p->gate_channels % p->gate_heads)) {
            seterr(err, errlen,
                   "%s: gate_channel_mean has %llu channels but "
                   "attrs say gate_channels=%d gate_heads=%d",
                   r->meta.path, (unsigned long long)d.C, p->gate_channels, p->gate_heads);
            rc = -1;
        }
    }
    return rc;
}

/* A probe group's attrs and arrays (/probe/step_N or /intervene/<kind>). */
static int read_probe_group(RunReader *r, hid_t g, const char *gname, ProbeRecord *p, char *err,
                            size_t errlen) {
    int rc = -1;
    if (read_probe_attrs(r, g, gname, p, err, errlen) == 0 &&
        read_probe_arrays(r, g, p, err, errlen) == 0)
        rc = 0;
    if (rc < 0) runread_probe_free(p);
    return rc;
}

int runread_probe(RunReader *r, long long step, ProbeRecord *p, char *err, size_t errlen) {
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
    snprintf(gname, sizeof gname, RS_PROBE_PATH_FMT, want);
    hid_t g = H5Gopen2(r->file, gname, H5P_DEFAULT);
    if (g < 0) {
        seterr(err, errlen, "%s: cannot open /%s", r->meta.path, gname);
        return -1;
    }
    int rc = read_probe_group(r, g, gname, p, err, errlen);
    H5Gclose(g);
    return rc;
}

/* ---- /intervene/<kind> (gatelab intervene) ---- */

int runread_has_intervention(RunReader *r, const char *kind) {
    if (!kind || !*kind || strchr(kind, '/')) return 0;
    hid_t top = open_group(r->file, RS_G_INTERVENE);
    if (top < 0) return 0;
    int has = H5Lexists(top, kind, H5P_DEFAULT) > 0;
    H5Gclose(top);
    return has;
}

void runread_intervention_free(RunIntervention *iv) {
    if (!iv) return;
    runread_probe_free(&iv->probe);
    memset(iv, 0, sizeof *iv);
}

int runread_intervention(RunReader *r, const char *kind, RunIntervention *iv, char *err,
                         size_t errlen) {
    memset(iv, 0, sizeof *iv);
    char gname[128];
    snprintf(gname, sizeof gname, "%s/%s", RS_G_INTERVENE, kind ? kind : "");
    hid_t g = runread_has_intervention(r, kind) ? H5Gopen2(r->file, gname, H5P_DEFAULT) : -1;
    if (g < 0) {
        seterr(err, errlen, "%s: no /%s", r->meta.path, gname);
        return -1;
    }
    double loss, n, k;
    int rc = read_probe_group(r, g, gname, &iv->probe, err, errlen);
    if (rc == 0 && (attr_double(g, RS_IV_LOSS, &loss) < 0 || attr_double(g, RS_IV_LOSS_N, &n) < 0 ||
                    attr_double(g, RS_IV_CLIP_K, &k) < 0)) {
        seterr(err, errlen, "%s: /%s lacks its loss, loss_n or clip_k attribute", r->meta.path,
               gname);
        rc = -1;
    }
    H5Gclose(g);
    if (rc < 0) {
        runread_intervention_free(iv);
        return -1;
    }
    iv->loss = loss;
    iv->loss_n = (long long)n;
    iv->clip_k = dbl_to_int(k);
    return 0;
}

/* ---- metric series ---- */

void runread_train_free(RunTrain *t) {
    free(t->step);
    free(t->loss);
    free(t->lr);
    free(t->grad_norm);
    free(t->seconds);
    free(t->tokens);
    memset(t, 0, sizeof *t);
}

void runread_eval_free(RunEval *e) {
    free(e->step);
    free(e->val_loss);
    free(e->val_bpb);
    memset(e, 0, sizeof *e);
}

/* The series of one /metrics group are rows of one table: 0 when all k
 * lengths agree, else -1 naming both */
static int same_lengths(const RunReader *r, const char *group, const hsize_t *n, int k, char *err,
                        size_t errlen) {
    for (int i = 1; i < k; i++)
        if (n[i] != n[0])
            return seterr(err, errlen, "%s: /metrics/%s series differ in length (%llu vs %llu)",
                          r->meta.path, group, (unsigned long long)n[i], (unsigned long long)n[0]);
    return 0;
}

int runread_train(RunReader *r, RunTrain *t, char *err, size_t errlen) {
    memset(t, 0, sizeof *t);
    hid_t g = open_group(r->file, RS_G_METRICS_TRAIN);
    if (g < 0) {
        seterr(err, errlen, "%s: missing group /metrics/train", r->meta.path);
        return -1;
    }
    hsize_t n[6] = {0, 0, 0, 0, 0, 0};
    int rc = -1;
    /* each series is read with "any length" and all must then agree: an
     * empty first series must not let longer ones through as length n */
    if (READ_I64(g, RS_STEP, 1, &n[0], &t->step) == 0 &&
        READ_F64(g, RS_LOSS, 1, &n[1], &t->loss) == 0 &&
        READ_F64(g, RS_LR, 1, &n[2], &t->lr) == 0 &&
        READ_F64(g, RS_GRAD_NORM, 1, &n[3], &t->grad_norm) == 0 &&
        READ_F64(g, RS_SECONDS, 1, &n[4], &t->seconds) == 0 &&
        READ_I64(g, RS_TOKENS, 1, &n[5], &t->tokens) == 0)
        rc = 0;
    if (rc == 0) rc = same_lengths(r, "train", n, 6, err, errlen);
    H5Gclose(g);
    if (rc < 0) runread_train_free(t);
    else t->n = (size_t)n[0];
    return rc;
}

int runread_eval(RunReader *r, RunEval *e, char *err, size_t errlen) {
    memset(e, 0, sizeof *e);
    hid_t g = open_group(r->file, RS_G_METRICS_EVAL);
    if (g < 0) {
        seterr(err, errlen, "%s: missing group /metrics/eval", r->meta.path);
        return -1;
    }
    hsize_t n[3] = {0, 0, 0};
    int rc = -1;
    if (READ_I64(g, RS_STEP, 1, &n[0], &e->step) == 0 &&
        READ_F64(g, RS_VAL_LOSS, 1, &n[1], &e->val_loss) == 0 &&
        READ_F64(g, RS_VAL_BPB, 1, &n[2], &e->val_bpb) == 0)
        rc = 0;
    if (rc == 0) rc = same_lengths(r, "eval", n, 3, err, errlen);
    H5Gclose(g);
    if (rc < 0) runread_eval_free(e);
    else e->n = (size_t)n[0];
    return rc;
}

/* ---- weights and long-context results ---- */

int runread_param(RunReader *r, const char *name, float *out, int ndim, const int *shape, char *err,
                  size_t errlen) {
    hid_t g = open_group(r->file, RS_G_PARAMS);
    if (g < 0) {
        seterr(err, errlen, "%s: no /params (the run has no final weights)", r->meta.path);
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

int runread_lceval_lengths(RunReader *r, const char *mode, int **lens, int *n, char *err,
                           size_t errlen) {
    *lens = NULL;
    *n = 0;
    hid_t top = open_group(r->file, RS_G_LCEVAL);
    if (top < 0) return 0;
    hid_t g = open_group(top, mode);
    H5Gclose(top);
    if (g < 0) return 0;
    long long *v = NULL;
    int k = 0;
    int rc = list_numbered(g, RS_LC_LEN_SCAN, 1, &v, &k);
    H5Gclose(g);
    if (rc < 0) return seterr(err, errlen, "%s: cannot list /lceval/%s", r->meta.path, mode);
    int *out = k ? malloc((size_t)k * sizeof *out) : NULL;
    if (k && !out) {
        free(v);
        return seterr(err, errlen, "%s: out of memory listing /lceval/%s", r->meta.path, mode);
    }
    for (int i = 0; i < k; i++) out[i] = v[i] > INT_MAX ? INT_MAX : (int)v[i];
    free(v);
    *lens = out;
    *n = k;
    return 0;
}

void runread_lceval_free(RunLcEval *e) {
    free(e->loss_by_bucket);
    e->loss_by_bucket = NULL;
}

int runread_lceval(RunReader *r, const char *mode, int len, RunLcEval *e, char *err,
                   size_t errlen) {
    memset(e, 0, sizeof *e);
    char path[96];
    snprintf(path, sizeof path, RS_G_LCEVAL "/%.16s/" RS_LC_LEN_FMT, mode, len);
    hid_t g = H5Lexists(r->file, RS_G_LCEVAL, H5P_DEFAULT) > 0 ? open_group(r->file, path) : -1;
    if (g < 0) {
        H5Eclear2(H5E_DEFAULT);
        seterr(err, errlen, "%s: no /%s", r->meta.path, path);
        return -1;
    }
    long long tl = 0, ln = 0;
    int rc = 0;
    rc |= attr_double(g, RS_VAL_LOSS, &e->val_loss);
    rc |= attr_double(g, RS_LC_PPL, &e->ppl);
    rc |= attr_double(g, RS_LC_FIRST_SHARE, &e->first_share);
    rc |= attr_double(g, RS_LC_UNIFORM_SHARE, &e->uniform_share);
    rc |= attr_double(g, RS_LC_SINK_RATE, &e->sink_rate);
    rc |= attr_double(g, RS_LC_YARN_SCALE, &e->yarn_scale);
    rc |= attr_ll(g, RS_LC_N_SEQS, &e->n_seqs);
    rc |= attr_ll(g, RS_LC_TRAIN_LEN, &tl);
    rc |= attr_ll(g, RS_LC_LEN, &ln);
    if (rc) {
        H5Gclose(g);
        seterr(err, errlen, "%s: /%s lacks an attribute", r->meta.path, path);
        return -1;
    }
    e->len = (int)ln;
    e->train_len = (int)tl;
    hsize_t want[1] = {0};
    rc = READ_F64(g, RS_LC_LOSS_BY_BUCKET, 1, want, &e->loss_by_bucket);
    H5Gclose(g);
    if (rc < 0) return -1;
    e->n_buckets = (int)want[0];
    return 0;
}

/* ---- /stream (gatelab stream) ---- */

int runread_stream_windows(RunReader *r, int **w, int *n, char *err, size_t errlen) {
    *w = NULL;
    *n = 0;
    hid_t g =
        H5Lexists(r->file, RS_G_STREAM, H5P_DEFAULT) > 0 ? open_group(r->file, RS_G_STREAM) : -1;
    if (g < 0) return 0;
    long long *v = NULL;
    int k = 0, rc = list_numbered(g, RS_ST_WINDOW_SCAN, 1, &v, &k);
    H5Gclose(g);
    if (rc < 0) return seterr(err, errlen, "%s: cannot list /%s", r->meta.path, RS_G_STREAM);
    int *out = k ? malloc((size_t)k * sizeof *out) : NULL;
    for (int i = 0; out && i < k; i++) out[i] = v[i] > INT_MAX ? INT_MAX : (int)v[i];
    free(v);
    if (k && !out) return seterr(err, errlen, "%s: out of memory", r->meta.path);
    *w = out;
    *n = k;
    return 0;
}

void runread_stream_free(RunStream *s) {
    free(s->keep);
    free(s->loss);
    s->keep = NULL, s->loss = NULL;
}

int runread_stream(RunReader *r, int window, RunStream *s, char *err, size_t errlen) {
    memset(s, 0, sizeof *s);
    char path[64];
    snprintf(path, sizeof path, RS_G_STREAM "/" RS_ST_WINDOW_FMT, window);
    hid_t g = H5Lexists(r->file, RS_G_STREAM, H5P_DEFAULT) > 0 ? open_group(r->file, path) : -1;
    if (g < 0) {
        H5Eclear2(H5E_DEFAULT);
        return seterr(err, errlen, "%s: no /%s", r->meta.path, path);
    }
    long long w = 0, len = 0, ns = 0;
    int rc = attr_ll(g, RS_ST_WINDOW, &w) | attr_ll(g, RS_ST_LEN, &len) |
             attr_ll(g, RS_ST_N_SEQS, &ns) | attr_double(g, RS_ST_DELTA, &s->delta) |
             attr_double(g, RS_ST_P, &s->p);
    hsize_t wk[1] = {0}, wl[2] = {0, (hsize_t)(ns > 0 ? ns : 0)};
    if (rc != 0) rc = seterr(err, errlen, "%s: /%s lacks an attribute", r->meta.path, path);
    if (rc == 0) rc = READ_I32(g, RS_ST_KEEP, 1, wk, &s->keep);
    if (rc == 0) rc = READ_F64(g, RS_ST_LOSS, 2, wl, &s->loss);
    H5Gclose(g);
    if (rc == 0 && (ns < 1 || wl[0] != wk[0] + 1))
        rc = seterr(err, errlen, "%s: /%s: loss_seq does not match keep", r->meta.path, path);
    if (rc != 0) {
        runread_stream_free(s);
        return -1;
    }
    s->window = (int)w, s->len = (int)len, s->n_seqs = (int)ns, s->n_keep = (int)wk[0];
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
extern void __sanitizer_set_death_callback(void (*cb)(void)) __attribute__((weak));

/* Read every attribute of /NAME the way the tools would (string or number). */
static herr_t vet_attr_cb(hid_t loc, const char *name, const H5A_info_t *info, void *data) {
    (void)info;
    (void)data;
    char *s;
    double v;
    if (h5u_attr_read_str(loc, name, &s) == 0) free(s);
    else attr_double(loc, name, &v);
    return 0;
}
static void vet_group_attrs(hid_t file, const char *name) {
    hid_t g = open_group(file, name);
    if (g < 0) return;
    H5Aiterate2(g, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, vet_attr_cb, NULL);
    H5Gclose(g);
}

/* The child: the same reads the tools do, then "done" on fd. Never returns. */
__attribute__((noreturn)) static void vet_child(const char *path, int fd) {
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
    ssize_t w = write(fd, "v", 1);
    _exit(w == 1 ? rc : 2);
}

static long ms_since(const struct timespec *t0) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)(t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Wait up to VET_SECONDS for the child's "done" byte on fd, then reap it.
 * 1 done, 0 the child ended without it, -1 hung (killed). */
static int vet_wait(pid_t pid, int fd, int *status) {
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
    int status, got = vet_wait(pid, fds[0], &status);
    if (got == 1) return 0;
    if (got < 0)
        seterr(err, errlen,
               "%s: reading this file hung for %d s: the file is "
               "corrupt",
               path, VET_SECONDS);
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
