/* runfile_read_util.c: the checked HDF5 reads every part of the read face
 * uses (runfile_read_priv.h): attributes, datasets with their class, rank,
 * shape and size checked before a byte is allocated, numbered groups. */
#include "runfile_read_priv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5util.h"
#include "runschema.h"
#include "util.h"

/* HDF5's innermost reason (h5util.h), never empty. */
const char *rr_h5_reason(void) {
    const char *why = h5u_reason();
    return *why ? why : "unknown HDF5 error";
}

/* ---- attributes ---- */

/* A double from a file as an int: 0 when not finite or out of range (a
 * plain cast would be undefined behaviour). */
int rr_dbl_to_int(double v) {
    return isfinite(v) && v > -2147483648.0 && v < 2147483648.0 ? (int)v : 0;
}

/* Read a one-element numeric attribute (any int/float type) as double. */
int rr_attr_double(hid_t obj, const char *name, double *out) {
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
int rr_attr_ll(hid_t obj, const char *name, long long *out) {
    if (H5Aexists(obj, name) <= 0) return -1;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    if (a < 0) return -1;
    hid_t ft = H5Aget_type(a);
    H5T_class_t c = ft >= 0 ? H5Tget_class(ft) : H5T_NO_CLASS;
    if (ft >= 0) H5Tclose(ft);
    H5Aclose(a);
    if (c != H5T_INTEGER) {
        double v;
        if (rr_attr_double(obj, name, &v) < 0 || !(v > -9.2e18 && v < 9.2e18)) return -1;
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
int rr_read_ds(hid_t loc, const char *name, const char *path, int rank, hsize_t *want,
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
        seterr(err, errlen, "%s: cannot read dataset %s: %s", path, name, rr_h5_reason());
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

/* Open group `name` if it exists (negative when absent). */
hid_t rr_open_group(hid_t loc, const char *name) {
    if (H5Lexists(loc, name, H5P_DEFAULT) <= 0) return -1;
    return H5Gopen2(loc, name, H5P_DEFAULT);
}

/* Attribute KEY of group GROUP: a double into *d, or (d NULL) a string
 * into s[slen]. -1 when the group or the attribute is missing. */
int rr_group_attr(RunReader *r, const char *group, const char *key, double *d, char *s,
                  size_t slen) {
    hid_t g = rr_open_group(r->file, group);
    int rc = g < 0 ? -1 : d ? rr_attr_double(g, key, d) : h5u_attr_read_strbuf(g, key, s, slen);
    if (g >= 0) H5Gclose(g);
    return rc;
}

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
int rr_list_numbered(hid_t g, const char *scan, long long min, long long **v, int *n) {
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
