/* runfile_read_config.c: a run's /config, /summary and /pretrained
 * attributes (runfile_read.h). */
#include "runfile_read_priv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "h5util.h"
#include "runschema.h"
#include "util.h"

int runread_config_double(RunReader *r, const char *key, double *out, char *err, size_t errlen) {
    if (rr_group_attr(r, RS_G_CONFIG, key, out, NULL, 0) == 0) return 0;
    return seterr(err, errlen, "%s: missing numeric config key %s", r->meta.path, key);
}

int runread_config_string(RunReader *r, const char *key, char *out, size_t outlen, char *err,
                          size_t errlen) {
    if (rr_group_attr(r, RS_G_CONFIG, key, NULL, out, outlen) == 0) return 0;
    return seterr(err, errlen, "%s: missing string config key %s", r->meta.path, key);
}

int runread_pretrained_string(RunReader *r, const char *key, char *out, size_t outlen, char *err,
                              size_t errlen) {
    if (rr_group_attr(r, RS_G_PRETRAINED, key, NULL, out, outlen) == 0) return 0;
    return seterr(err, errlen, "%s: no /%s attribute %s", r->meta.path, RS_G_PRETRAINED, key);
}

int runread_pretrained_number(RunReader *r, const char *key, double *out, char *err,
                              size_t errlen) {
    if (rr_group_attr(r, RS_G_PRETRAINED, key, out, NULL, 0) == 0) return 0;
    return seterr(err, errlen, "%s: no /%s attribute %s", r->meta.path, RS_G_PRETRAINED, key);
}

/* See runfile_read.h: 1 without the dataset, else its [L] ints. */
int runread_layer_window(RunReader *r, int **win, int *n, char *err, size_t errlen) {
    *win = NULL, *n = 0;
    hid_t g = rr_open_group(r->file, RS_G_PRETRAINED);
    if (g < 0) return 1;
    int has = H5Lexists(g, RS_PT_LAYER_WINDOW, H5P_DEFAULT) > 0;
    hsize_t want[1] = {0};
    int rc = has ? READ_I32(g, RS_PT_LAYER_WINDOW, 1, want, win) : 1;
    H5Gclose(g);
    if (rc == 0) *n = (int)want[0];
    return rc;
}

int runread_protocol_string(RunReader *r, const char *key, char *out, size_t outlen, char *err,
                            size_t errlen) {
    if (rr_group_attr(r, RS_G_PROTOCOL, key, NULL, out, outlen) == 0) return 0;
    return seterr(err, errlen, "%s: no /%s attribute %s", r->meta.path, RS_G_PROTOCOL, key);
}

int runread_data_file(RunReader *r, const char *key, char *out, size_t outlen, char *err,
                      size_t errlen) {
    if (rr_group_attr(r, RS_G_DATA_FILES, key, NULL, out, outlen) == 0) return 0;
    hid_t g = rr_open_group(r->file, RS_G_DATA_FILES);
    if (g < 0) return 1;
    H5Gclose(g);
    return seterr(err, errlen, "%s: no /%s attribute %s", r->meta.path, RS_G_DATA_FILES, key);
}

/* /config attribute key as an integer; -1 when absent or not integral. */
static long long config_ll(RunReader *r, const char *key) {
    double v;
    if (rr_group_attr(r, RS_G_CONFIG, key, &v, NULL, 0) != 0 || !(v == floor(v)) || fabs(v) > 1e15)
        return -1;
    return (long long)v;
}

void runread_config_dims(RunReader *r, RunConfigDims *c) {
    c->n_layers = config_ll(r, "n_layers");
    c->n_heads = config_ll(r, "n_heads");
    c->d_model = config_ll(r, "d_model");
    c->vocab_size = config_ll(r, "vocab_size");
    c->seq_len = config_ll(r, RS_CFG_SEQ_LEN);
    c->probe_n = config_ll(r, "probe_n");
}

int runread_summary(RunReader *r, const char *key, double *out, char *err, size_t errlen) {
    if (rr_group_attr(r, RS_G_SUMMARY, key, out, NULL, 0) == 0) return 0;
    return seterr(err, errlen, "%s: missing summary value %s", r->meta.path, key);
}
