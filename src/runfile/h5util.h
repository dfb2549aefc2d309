/* h5util.h: the few HDF5 helpers the run file, the checkpoint, the sweep
 * and the run reader (src/runfile/runfile_read.c) share; not a public interface.
 *
 * Every helper returns 0 or -1 and never prints: callers turn a failure
 * into one line naming the file and object, with h5u_reason() appended so
 * the user sees HDF5's own innermost cause ("file write failed ... No space
 * left on device") instead of a multi-line error stack. */
#ifndef GATELAB_H5UTIL_H
#define GATELAB_H5UTIL_H

#include <errno.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* HDF5 prints its error stack to stderr by default. Inside our modules it
 * is silenced for the duration of a public call and restored afterwards, so
 * other code keeps whatever setting it chose. */
typedef struct {
    H5E_auto2_t fn;
    void *data;
} H5uQuiet;

static inline H5uQuiet h5u_quiet_begin(void) {
    H5uQuiet q = {NULL, NULL};
    H5Eget_auto2(H5E_DEFAULT, &q.fn, &q.data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    return q;
}

static inline void h5u_quiet_end(H5uQuiet q) { H5Eset_auto2(H5E_DEFAULT, q.fn, q.data); }

static inline herr_t h5u_walk_cb(unsigned n, const H5E_error2_t *e, void *ctx) {
    if (n == 0 && e->desc) {
        char *out = ctx;
        strncpy(out, e->desc, 199);
        out[199] = '\0';
    }
    return 0;
}

/* The innermost HDF5 error message of this thread, as one line (newlines
 * replaced); "" when there is none. Clears the error stack. */
static inline const char *h5u_reason(void) {
    static _Thread_local char buf[200];
    buf[0] = '\0';
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, h5u_walk_cb, buf);
    H5Eclear2(H5E_DEFAULT);
    for (char *p = buf; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    return buf;
}

/* Remove attribute `name` when present (attributes cannot be resized in
 * place, so overwriting means delete + create). */
static inline int h5u_attr_drop(hid_t obj, const char *name) {
    htri_t e = H5Aexists(obj, name);
    if (e < 0) return -1;
    if (e > 0 && H5Adelete(obj, name) < 0) return -1;
    return 0;
}

/* Scalar or 1-D attribute of n values (n == 0: scalar). */
static inline int h5u_attr_write(hid_t obj, const char *name, hid_t ftype, hid_t mtype,
                                 const void *v, hsize_t n) {
    if (h5u_attr_drop(obj, name) < 0) return -1;
    hid_t sp = n ? H5Screate_simple(1, &n, NULL) : H5Screate(H5S_SCALAR);
    if (sp < 0) return -1;
    hid_t a = H5Acreate2(obj, name, ftype, sp, H5P_DEFAULT, H5P_DEFAULT);
    int rc = (a >= 0 && H5Awrite(a, mtype, v) >= 0) ? 0 : -1;
    if (a >= 0 && H5Aclose(a) < 0) rc = -1;
    H5Sclose(sp);
    return rc;
}

static inline int h5u_attr_i64(hid_t obj, const char *name, long long v) {
    return h5u_attr_write(obj, name, H5T_STD_I64LE, H5T_NATIVE_LLONG, &v, 0);
}

static inline int h5u_attr_u64(hid_t obj, const char *name, unsigned long long v) {
    return h5u_attr_write(obj, name, H5T_STD_U64LE, H5T_NATIVE_ULLONG, &v, 0);
}

static inline int h5u_attr_f64(hid_t obj, const char *name, double v) {
    return h5u_attr_write(obj, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &v, 0);
}

/* Variable-length string (h5py reads it as a Python str). The character
 * set is left ASCII, the HDF5 default, because HDF5 refuses to convert
 * between ASCII and UTF-8 and the common C idiom reads with plain
 * H5T_C_S1; the bytes themselves are stored unchanged either way. */
static inline int h5u_attr_str(hid_t obj, const char *name, const char *s) {
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0) return -1;
    int rc = -1;
    if (H5Tset_size(t, H5T_VARIABLE) >= 0) rc = h5u_attr_write(obj, name, t, t, &s, 0);
    H5Tclose(t);
    return rc;
}

/* Read a scalar numeric attribute converted to the memory type. */
static inline int h5u_attr_read(hid_t obj, const char *name, hid_t mtype, void *out) {
    htri_t e = H5Aexists(obj, name);
    if (e <= 0) return -1;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    if (a < 0) return -1;
    int rc = -1;
    hid_t sp = H5Aget_space(a);
    hid_t t = H5Aget_type(a);
    if (sp >= 0 && t >= 0 && H5Sget_simple_extent_npoints(sp) == 1) {
        H5T_class_t c = H5Tget_class(t);
        if ((c == H5T_INTEGER || c == H5T_FLOAT) && H5Aread(a, mtype, out) >= 0) rc = 0;
    }
    if (t >= 0) H5Tclose(t);
    if (sp >= 0) H5Sclose(sp);
    H5Aclose(a);
    return rc;
}

/* Longest fixed-length string attribute read (run files hold short
 * names and config text; anything longer is damage). */
#define H5U_STR_MAX ((size_t)1 << 20)

/* Read a scalar string attribute, fixed or variable length, into a
 * malloc'd NUL-terminated copy. -1 when missing or not a string. */
static inline int h5u_attr_read_str(hid_t obj, const char *name, char **out) {
    *out = NULL;
    htri_t e = H5Aexists(obj, name);
    if (e <= 0) return -1;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    if (a < 0) return -1;
    int rc = -1;
    hid_t t = H5Aget_type(a);
    hid_t sp = H5Aget_space(a);
    if (t >= 0 && sp >= 0 && H5Tget_class(t) == H5T_STRING &&
        H5Sget_simple_extent_npoints(sp) == 1) {
        htri_t vl = H5Tis_variable_str(t);
        hid_t mt = H5Tcopy(H5T_C_S1);
        /* same character set as the file, else HDF5 refuses to convert */
        if (mt >= 0 && H5Tset_cset(mt, H5Tget_cset(t)) < 0) {
            H5Tclose(mt);
            mt = -1;
        }
        if (vl > 0 && mt >= 0 && H5Tset_size(mt, H5T_VARIABLE) >= 0) {
            char *s = NULL;
            if (H5Aread(a, mt, &s) >= 0 && s) {
                *out = strdup(s);
                H5free_memory(s);
                rc = *out ? 0 : -1;
            }
        } else if (vl == 0 && mt >= 0) {
            size_t n = H5Tget_size(t);
            /* capped: the length comes from the file, which may be hostile */
            char *s = (n > 0 && n < H5U_STR_MAX) ? calloc(n + 1, 1) : NULL;
            if (s && H5Tset_size(mt, n + 1) >= 0 && H5Tset_strpad(mt, H5T_STR_NULLTERM) >= 0 &&
                H5Aread(a, mt, s) >= 0) {
                *out = s;
                rc = 0;
            } else {
                free(s);
            }
        }
        if (mt >= 0) H5Tclose(mt);
    }
    if (sp >= 0) H5Sclose(sp);
    if (t >= 0) H5Tclose(t);
    H5Aclose(a);
    return rc;
}

/* h5u_attr_read_str into out (truncated to outlen - 1 bytes). */
static inline int h5u_attr_read_strbuf(hid_t obj, const char *name, char *out, size_t outlen) {
    char *s;
    if (h5u_attr_read_str(obj, name, &s) < 0) return -1;
    snprintf(out, outlen, "%s", s);
    free(s);
    return 0;
}

/* write(2) the whole buffer, retrying short and interrupted writes. */
static inline int h5u_write_all(int fd, const char *buf, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, buf, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

#endif
