/* hf_runwrite.c: probe + pretrained metadata -> RUN.h5 (see hf_runwrite.h).
 *
 * Root attrs as every run file has them, with variant "pretrained:<arch>",
 * source "pretrained" and n_params; /probe/step_0000000 via
 * runfile_write_probe; /pretrained holds the provenance (attrs) and
 * first_token [N]. No /config, /metrics rows or /summary: readers treat
 * those as absent. */
#include "hf_runwrite.h"

#include <hdf5.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "h5util.h"
#include "util.h"

static int write_first_token(hid_t g, const int *ft, int N) {
    hsize_t n = (hsize_t)N;
    hid_t sp = H5Screate_simple(1, &n, NULL);
    hid_t ds = sp >= 0 ? H5Dcreate2(g, "first_token", H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT,
                                    H5P_DEFAULT)
                       : -1;
    int rc =
        ds >= 0 &&
                (N == 0 || H5Dwrite(ds, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, ft) >= 0) &&
                h5u_attr_str(ds, "description", "first token id of each window [seq]") >= 0
            ? 0
            : -1;
    if (ds >= 0)
        H5Dclose(ds);
    if (sp >= 0)
        H5Sclose(sp);
    return rc;
}

static int write_pretrained(const char *path, const HfRunInfo *in, int N) {
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0)
        return -1;
    char variant[128];
    snprintf(variant, sizeof variant, "pretrained:%s", in->architecture);
    hid_t g = H5Gcreate2(f, "pretrained", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int rc = g >= 0 && h5u_attr_str(f, "variant", variant) >= 0 &&
                     h5u_attr_str(f, "source", "pretrained") >= 0 &&
                     h5u_attr_i64(f, "n_params", in->n_params) >= 0 &&
                     h5u_attr_str(g, "architecture", in->architecture) >= 0 &&
                     h5u_attr_str(g, "model_type", in->model_type) >= 0 &&
                     h5u_attr_str(g, "dtype", in->dtype) >= 0 &&
                     h5u_attr_str(g, "model_dir", in->model_dir) >= 0 &&
                     h5u_attr_str(g, "config_json", in->config_json) >= 0 &&
                     h5u_attr_str(g, "tokenizer", in->tokenizer) >= 0 &&
                     h5u_attr_str(g, "input", in->input) >= 0 &&
                     h5u_attr_str(g, "input_kind", in->input_kind) >= 0 &&
                     h5u_attr_i64(g, "bos_id", in->bos_id) >= 0 &&
                     h5u_attr_i64(g, "threads", in->threads) >= 0 &&
                     h5u_attr_f64(g, "seconds", in->seconds) >= 0 &&
                     write_first_token(g, in->first_token, N) == 0
                 ? 0
                 : -1;
    if (g >= 0)
        H5Gclose(g);
    if (H5Fclose(f) < 0)
        rc = -1;
    return rc;
}

int hf_run_write(const char *out, int force, const ProbeData *p, const HfRunInfo *info, char *err,
                 size_t errlen) {
    if (!force && file_exists(out))
        return seterr(err, errlen, "%s: exists (use --force to replace it)", out);
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", out);
    RunFile *rf = runfile_create(tmp, NULL, NULL, 1, err, errlen);
    if (!rf)
        return -1;
    int rc = runfile_write_probe(rf, p);
    if (rc == 0)
        rc = runfile_set_status(rf, "done");
    if (rc < 0)
        seterr(err, errlen, "%s", runfile_error());
    if (runfile_close(rf) < 0 && rc == 0)
        rc = seterr(err, errlen, "%s", runfile_error());
    if (rc == 0) {
        H5uQuiet q = h5u_quiet_begin();
        if (write_pretrained(tmp, info, p->N) < 0)
            rc = seterr(err, errlen, "%s: cannot write /pretrained (hdf5: %s)", tmp, h5u_reason());
        h5u_quiet_end(q);
    }
    if (rc == 0)
        return file_replace(tmp, out, err, errlen);
    unlink(tmp);
    return -1;
}
