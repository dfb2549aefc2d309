/* runfile_read_priv.h: what the read face's files share: the open
 * RunReader and the checked HDF5 reads (runfile_read_util.c), the
 * in-process open (runfile_read_handle.c) and the vetting
 * (runfile_vet.c). Only the read face's files include it; the public
 * face is runfile_read.h, whose head gives the order of the files. Every
 * helper that fails writes one line into err. */
#ifndef GATELAB_RUNFILE_READ_PRIV_H
#define GATELAB_RUNFILE_READ_PRIV_H

#include <hdf5.h>
#include <stddef.h>

#include "runfile_read.h"

struct RunReader {
    hid_t file;
    RunMeta meta;
};

/* HDF5's innermost reason (h5util.h), never empty. */
const char *rr_h5_reason(void);

/* A double from a file as an int: 0 when not finite or out of range. */
int rr_dbl_to_int(double v);

/* A one-element numeric attribute (any int/float type) as double; -1 when
 * absent or not numeric. */
int rr_attr_double(hid_t obj, const char *name, double *out);

/* An integer attribute read exactly (a u64 seed does not pass through a
 * double); -1 when absent or not a number. */
int rr_attr_ll(hid_t obj, const char *name, long long *out);

/* Read dataset `name` under loc. want[rank] gives the expected dims, 0 for
 * "any" (filled in from the file). cls is the required HDF5 class; the
 * data is converted to memtype (elsize bytes). *out is malloc'd. 0, or -1
 * with one line naming path and the dataset. */
int rr_read_ds(hid_t loc, const char *name, const char *path, int rank, hsize_t *want,
               H5T_class_t cls, hid_t memtype, size_t elsize, void **out, char *err, size_t errlen);

#define READ_F32(loc, nm, rk, w, o)                                                                \
    rr_read_ds(loc, nm, r->meta.path, rk, w, H5T_FLOAT, H5T_NATIVE_FLOAT, sizeof(float),           \
               (void **)(o), err, errlen)
#define READ_F64(loc, nm, rk, w, o)                                                                \
    rr_read_ds(loc, nm, r->meta.path, rk, w, H5T_FLOAT, H5T_NATIVE_DOUBLE, sizeof(double),         \
               (void **)(o), err, errlen)
#define READ_I32(loc, nm, rk, w, o)                                                                \
    rr_read_ds(loc, nm, r->meta.path, rk, w, H5T_INTEGER, H5T_NATIVE_INT, sizeof(int),             \
               (void **)(o), err, errlen)
#define READ_I64(loc, nm, rk, w, o)                                                                \
    rr_read_ds(loc, nm, r->meta.path, rk, w, H5T_INTEGER, H5T_NATIVE_LLONG, sizeof(long long),     \
               (void **)(o), err, errlen)

/* Open group `name` if it exists (negative when absent). */
hid_t rr_open_group(hid_t loc, const char *name);

/* Attribute KEY of group GROUP: a double into *d, or (d NULL) a string
 * into s[slen]. -1 when the group or the attribute is missing. */
int rr_group_attr(RunReader *r, const char *group, const char *key, double *d, char *s,
                  size_t slen);

/* The numbers of the groups of g whose names match scan ("step_%lld%c",
 * "L_%lld%c") and are >= min, sorted, malloc'd into *v. 0, or -1. */
int rr_list_numbered(hid_t g, const char *scan, long long min, long long **v, int *n);

/* The in-process open (runfile_read_handle.c), no vetting: HDF5 open, no
 * external link (runcheck_links), the root attributes into RunMeta, the
 * enumerated attributes (runcheck_enums), the variant label. NULL with
 * one line in err naming the file. runread_close frees it. */
RunReader *rr_open(const char *path, char *err, size_t errlen);

/* Vet run file path in a forked, bounded child (runfile_vet.c) unless a
 * file of the same identity was vetted in this process already. 0: go on
 * with rr_open (which reports ordinary errors itself); -1 with one line in
 * err when libhdf5 crashed, hung or ran out of its bounds on the file. */
int rr_vet(const char *path, char *err, size_t errlen);

#endif
