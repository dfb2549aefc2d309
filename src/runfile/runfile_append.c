/* runfile_append.c: writing into an open run file: metric rows, status
 * and summary, probes, the final weights, a pretrained run's provenance,
 * and closing (runfile_priv.h). */
#include "runfile_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics_sinks.h"
#include "util.h"

/* ---- metrics ---- */

/* Grow a 1-D dataset from n to n+1 elements and write v at index n. */
static int append1(hid_t ds, hsize_t n, hid_t mtype, const void *v) {
    hsize_t newn = n + 1, start = n, one = 1;
    if (H5Dset_extent(ds, &newn) < 0) return -1;
    hid_t fs = H5Dget_space(ds);
    hid_t ms = H5Screate_simple(1, &one, NULL);
    int rc = (fs >= 0 && ms >= 0 &&
              H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &one, NULL) >= 0 &&
              H5Dwrite(ds, mtype, ms, fs, H5P_DEFAULT, v) >= 0)
                 ? 0
                 : -1;
    if (ms >= 0) H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
    return rc;
}

/* Append one row across a metric group, then flush so a reader (or a
 * crash) sees every completed row. On failure the row count is left
 * unchanged, so the next append overwrites the half-written row. */
static int append_row(RunFile *rf, const char *gname, const MetricSpec *spec, const hid_t *ds,
                      int nds, hsize_t *n, const void **vals) {
    if (rf_reserve(rf, (size_t)nds * 16 * METRIC_CHUNK) < 0) return -1;
    for (int i = 0; i < nds; i++) {
        hid_t mt = spec[i].is_int ? H5T_NATIVE_LLONG : H5T_NATIVE_DOUBLE;
        if (append1(ds[i], *n, mt, vals[i]) < 0) {
            char what[256];
            snprintf(what, sizeof what, "append to /metrics/%s/%s", gname, spec[i].name);
            return rf_fail_h5(rf, what);
        }
    }
    if (H5Fflush(rf->file, H5F_SCOPE_LOCAL) < 0) return rf_fail_h5(rf, "flush");
    (*n)++;
    return 0;
}

int runfile_append_train(RunFile *rf, long long step, double loss, double lr, double grad_norm,
                         long long tokens, double seconds, char *err, size_t errlen) {
    if (!rf) return seterr(err, errlen, "runfile_append_train: no run file");
    rf->err = err, rf->errlen = errlen;
    const void *v[N_TRAIN] = {&step, &loss, &lr, &grad_norm, &tokens, &seconds};
    H5uQuiet q = h5u_quiet_begin();
    int rc = append_row(rf, RS_G_TRAIN, TRAIN, rf->train, N_TRAIN, &rf->n_train, v);
    h5u_quiet_end(q);
    return rc;
}

int runfile_append_eval(RunFile *rf, long long step, double val_loss, double val_bpb, char *err,
                        size_t errlen) {
    if (!rf) return seterr(err, errlen, "runfile_append_eval: no run file");
    rf->err = err, rf->errlen = errlen;
    const void *v[N_EVAL] = {&step, &val_loss, &val_bpb};
    H5uQuiet q = h5u_quiet_begin();
    int rc = append_row(rf, RS_G_EVAL, EVAL, rf->eval, N_EVAL, &rf->n_eval, v);
    h5u_quiet_end(q);
    return rc;
}

/* ---- status and summary ---- */

int rf_set_status_impl(RunFile *rf, const char *status) {
    if (rf_reserve(rf, 0) < 0) return -1;
    if (h5u_attr_str(rf->file, RS_STATUS, status) < 0)
        return rf_fail_h5(rf, "write root attribute 'status'");
    if (H5Fflush(rf->file, H5F_SCOPE_LOCAL) < 0) return rf_fail_h5(rf, "flush");
    return 0;
}

int runfile_set_status(RunFile *rf, const char *status, char *err, size_t errlen) {
    if (!rf || !status) return seterr(err, errlen, "runfile_set_status: no run file or status");
    rf->err = err, rf->errlen = errlen;
    H5uQuiet q = h5u_quiet_begin();
    int rc = rf_set_status_impl(rf, status);
    h5u_quiet_end(q);
    return rc;
}

static int summary_impl(RunFile *rf, const char *key, double value) {
    if (rf_reserve(rf, 0) < 0) return -1;
    hid_t g = rf_make_group(rf->file, RS_G_SUMMARY);
    if (g < 0) return rf_fail_h5(rf, "create /summary");
    int rc = 0;
    if (h5u_attr_f64(g, key, value) < 0) {
        char what[256];
        snprintf(what, sizeof what, "write /summary attribute '%s'", key);
        rc = rf_fail_h5(rf, what);
    }
    H5Gclose(g);
    if (rc == 0 && H5Fflush(rf->file, H5F_SCOPE_LOCAL) < 0) rc = rf_fail_h5(rf, "flush");
    return rc;
}

int runfile_set_summary(RunFile *rf, const char *key, double value, char *err, size_t errlen) {
    if (!rf || !key || !*key) return seterr(err, errlen, "runfile_set_summary: no run file or key");
    rf->err = err, rf->errlen = errlen;
    H5uQuiet q = h5u_quiet_begin();
    int rc = summary_impl(rf, key, value);
    h5u_quiet_end(q);
    return rc;
}

/* A group written once as the run starts (/protocol, /data_files): /name
 * made, its attributes written by attrs(g, p) (-1 when one fails), the
 * file flushed. One line in err on failure. */
static int write_start_group(RunFile *rf, const char *name, int (*attrs)(hid_t, const void *),
                             const void *p, char *err, size_t errlen) {
    rf->err = err, rf->errlen = errlen;
    H5uQuiet q = h5u_quiet_begin();
    char what[64];
    int rc = rf_reserve(rf, 0);
    hid_t g = rc == 0 ? rf_make_group(rf->file, name) : -1;
    if (rc == 0 && g < 0)
        snprintf(what, sizeof what, "create /%s", name), rc = rf_fail_h5(rf, what);
    if (rc == 0 && attrs(g, p) < 0)
        snprintf(what, sizeof what, "write /%s", name), rc = rf_fail_h5(rf, what);
    if (g >= 0) H5Gclose(g);
    if (rc == 0 && H5Fflush(rf->file, H5F_SCOPE_LOCAL) < 0) rc = rf_fail_h5(rf, "flush");
    h5u_quiet_end(q);
    return rc;
}

/* /protocol's attributes (RunProtocol); -1 when one cannot be written. */
static int protocol_attrs(hid_t g, const void *vp) {
    const RunProtocol *p = vp;
    return h5u_attr_str(g, RS_PR_TEXT, p->text) < 0 || h5u_attr_str(g, RS_PR_HASH, p->hash) < 0 ||
                   h5u_attr_str(g, RS_PR_SWEEP_FILE, p->sweep_file) < 0 ||
                   h5u_attr_str(g, RS_PR_SWEEP_COMMIT, p->sweep_commit) < 0 ||
                   h5u_attr_i64(g, RS_PR_SWEEP_DIRTY, p->sweep_dirty) < 0 ||
                   h5u_attr_i64(g, RS_PR_UNCOMMITTED, p->uncommitted) < 0
               ? -1
               : 0;
}

int runfile_write_protocol(RunFile *rf, const RunProtocol *p, char *err, size_t errlen) {
    if (!rf || !p || !p->text || !p->hash || !p->sweep_file || !p->sweep_commit)
        return seterr(err, errlen, "runfile_write_protocol: no run file or protocol");
    return write_start_group(rf, RS_G_PROTOCOL, protocol_attrs, p, err, errlen);
}

/* /data_files' attributes (RunDataFiles); -1 when one cannot be written. */
static int data_files_attrs(hid_t g, const void *vd) {
    const RunDataFiles *d = vd;
    return h5u_attr_str(g, RS_DF_TRAIN_FILE, d->train_file) < 0 ||
                   h5u_attr_str(g, RS_DF_TRAIN_HASH, d->train_hash) < 0 ||
                   h5u_attr_str(g, RS_DF_VAL_FILE, d->val_file) < 0 ||
                   h5u_attr_str(g, RS_DF_VAL_HASH, d->val_hash) < 0
               ? -1
               : 0;
}

int runfile_write_data_files(RunFile *rf, const RunDataFiles *d, char *err, size_t errlen) {
    if (!rf || !d || !d->train_file || !d->train_hash || !d->val_file || !d->val_hash)
        return seterr(err, errlen, "runfile_write_data_files: no run file or data files");
    return write_start_group(rf, RS_G_DATA_FILES, data_files_attrs, d, err, errlen);
}

/* ---- probes ---- */

static int probe_attrs(RunFile *rf, hid_t g, const char *gpath, const ProbeRecord *p) {
    if (h5u_attr_i64(g, RS_P_STEP, p->step) < 0 || h5u_attr_i64(g, RS_P_PROXY, p->proxy) < 0 ||
        h5u_attr_str(g, RS_P_NORMALISER, p->normaliser) < 0 ||
        h5u_attr_i64(g, RS_P_GATE_CHANNELS, p->gate_channels) < 0 ||
        h5u_attr_i64(g, RS_P_GATE_HEADS, p->gate_heads) < 0 ||
        h5u_attr_i64(g, RS_P_GATE_BOUNDED, p->gate_bounded) < 0 ||
        h5u_attr_i64(g, RS_P_GATE_SHARED, p->gate_shared) < 0 ||
        h5u_attr_i64(g, RS_P_PROBE_N, p->N) < 0 || h5u_attr_i64(g, RS_P_PROBE_LEN, p->T) < 0 ||
        h5u_attr_i64(g, RS_P_SLOTS, p->slots) < 0 ||
        (p->M > 0 && p->M < p->T && h5u_attr_i64(g, RS_P_MAPS_LEN, p->M) < 0)) {
        char what[128];
        snprintf(what, sizeof what, "write attributes of %s", gpath);
        return rf_fail_h5(rf, what);
    }
    return 0;
}

/* Size of one dims letter of RS_PROBE_ARRAYS for this probe. */
static hsize_t probe_dim(const ProbeRecord *p, char d) {
    switch (d) {
    case 'L': return (hsize_t)p->L;
    case 'H': return (hsize_t)p->H;
    case 'T': return (hsize_t)p->T;
    case 'P': return (hsize_t)(p->M > 0 ? p->M : p->T);
    case 'N': return (hsize_t)p->N;
    case 'C': return (hsize_t)p->gate_channels;
    case 'S': return (hsize_t)p->gate_sample_n;
    case 'D': return (hsize_t)p->D;
    case 'B': return RS_GATE_BINS;
    case 'K': return RS_GATE_NBELOW;
    case 'M': return RS_GATE_NSTATS;
    case '3': return RS_HIDDEN_TOP;
    case 'G': return (hsize_t)p->gate_heads;
    }
    return 0;
}

/* One array of the table; absent (NULL) arrays and gate arrays of a
 * gate-less probe are skipped. */
static int probe_array(RunFile *rf, hid_t g, hid_t h, const char *gp, const ProbeRecord *p,
                       const void *data, int cls, int hidden, const char *name, const char *dims,
                       int kind, const char *desc) {
    int gated = kind == RS_GATE || kind == RS_GATE_OPT;
    if (!data || (gated && p->gate_channels <= 0)) return 0;
    hsize_t d[8];
    int rank = (int)strlen(dims);
    for (int i = 0; i < rank; i++) d[i] = probe_dim(p, dims[i]);
    for (int i = 0; i < rank; i++) /* an optional array may be empty */
        if (d[i] == 0 && (kind == RS_OPT || kind == RS_GATE_OPT)) return 0;
    char hp[128];
    snprintf(hp, sizeof hp, "%s/%s", gp, RS_G_HIDDEN);
    hid_t ft = cls == RS_I32 ? H5T_STD_I32LE : cls == RS_F32 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
    hid_t mt = cls == RS_I32   ? H5T_NATIVE_INT
               : cls == RS_F32 ? H5T_NATIVE_FLOAT
                               : H5T_NATIVE_DOUBLE;
    return rf_write_array(rf, hidden ? h : g, hidden ? hp : gp, name, ft, mt, rank, d, data, desc);
}

static int probe_thresholds(RunFile *rf, hid_t g, const ProbeRecord *p) {
    if (!p->gate_below || p->gate_channels <= 0) return 0;
    hid_t ds = H5Dopen2(g, RS_GATE_BELOW_NAME, H5P_DEFAULT);
    int rc = 0;
    if (ds < 0 || h5u_attr_write(ds, RS_P_THRESHOLDS, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                                 RS_GATE_BELOW_THR, RS_GATE_NBELOW) < 0)
        rc = rf_fail_h5(rf, "write gate_below thresholds");
    if (ds >= 0) H5Dclose(ds);
    return rc;
}

/* resid_share's attr factor: the multiple of the median it counts above. */
static int probe_resid_factor(RunFile *rf, hid_t h, const ProbeRecord *p) {
    if (!p->resid_share || p->D <= 0) return 0;
    const double factor = RESID_SINK_FACTOR;
    hid_t ds = H5Dopen2(h, RS_RESID_SHARE_NAME, H5P_DEFAULT);
    int rc = 0;
    if (ds < 0 ||
        h5u_attr_write(ds, RS_P_RESID_FACTOR, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &factor, 1) < 0)
        rc = rf_fail_h5(rf, "write resid_share factor");
    if (ds >= 0) H5Dclose(ds);
    return rc;
}

static int probe_arrays(RunFile *rf, hid_t g, const char *gp, const ProbeRecord *p) {
    hid_t h = rf_make_group(g, RS_G_HIDDEN);
    if (h < 0) return rf_fail_h5(rf, "create hidden group");
    int rc = 0;
#define RS_WRITE(member, ctype, cls, hid, name, dims, kind, desc)                                  \
    if (rc == 0) rc = probe_array(rf, g, h, gp, p, p->member, cls, hid, name, dims, kind, desc);
    RS_PROBE_ARRAYS(RS_WRITE)
#undef RS_WRITE
    if (rc == 0) rc = probe_resid_factor(rf, h, p);
    H5Gclose(h);
    if (rc == 0) rc = probe_thresholds(rf, g, p);
    return rc;
}

/* Upper bound of the probe's raw bytes, for the free-space check. */
static size_t probe_record_bytes(const ProbeRecord *p) {
    size_t raw = 0;
#define RS_SIZE(member, ctype, cls, hid, name, dims, kind, desc)                                   \
    {                                                                                              \
        size_t n = sizeof(ctype);                                                                  \
        for (const char *c = dims; *c; c++) n *= (size_t)probe_dim(p, *c);                         \
        raw += n;                                                                                  \
    }
    RS_PROBE_ARRAYS(RS_SIZE)
#undef RS_SIZE
    return raw;
}

/* Create (replacing) group `name` under `parent` and write probe p in it;
 * gp is its full path, for messages. */
int rf_probe_group(RunFile *rf, hid_t parent, const char *name, const char *gp,
                   const ProbeRecord *p, hid_t *out) {
    if (p->L <= 0 || p->H <= 0 || p->N < 0 || p->T <= 0 || p->gate_channels < 0 ||
        p->gate_sample_n < 0 || p->M < 0 || p->M > p->T)
        return rf_fail(rf, "%s: probe %s has bad shape L=%d H=%d N=%d T=%d", rf->path, gp, p->L,
                       p->H, p->N, p->T);
    if (rf_reserve(rf, rf_compressed_bound(probe_record_bytes(p), 16)) < 0) return -1;
    /* Rewriting a group replaces it whole: no stale dataset survives. */
    htri_t e = H5Lexists(parent, name, H5P_DEFAULT);
    if (e < 0 || (e > 0 && H5Ldelete(parent, name, H5P_DEFAULT) < 0))
        return rf_fail_h5(rf, "replace an existing probe group");
    hid_t g = H5Gcreate2(parent, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (g < 0) return rf_fail_h5(rf, "create a probe group");
    int rc = probe_attrs(rf, g, gp, p);
    if (rc == 0) rc = probe_arrays(rf, g, gp, p);
    if (rc == 0 && out) *out = g;
    else if (H5Gclose(g) < 0 && rc == 0) rc = rf_fail_h5(rf, "close the probe group");
    return rc;
}

static int probe_impl(RunFile *rf, const ProbeRecord *p) {
    char name[64], gp[96];
    snprintf(name, sizeof name, RS_PROBE_STEP_FMT, p->step);
    snprintf(gp, sizeof gp, "/%s/%s", RS_G_PROBE, name);
    hid_t pr = rf_make_group(rf->file, RS_G_PROBE);
    if (pr < 0) return rf_fail_h5(rf, "create /probe");
    int rc = rf_probe_group(rf, pr, name, gp, p, NULL);
    H5Gclose(pr);
    if (rc == 0 && H5Fflush(rf->file, H5F_SCOPE_LOCAL) < 0) rc = rf_fail_h5(rf, "flush");
    return rc;
}

int runfile_write_probe(RunFile *rf, const ProbeRecord *p, char *err, size_t errlen) {
    if (!rf || !p) return seterr(err, errlen, "runfile_write_probe: no run file or probe");
    rf->err = err, rf->errlen = errlen;
    H5uQuiet q = h5u_quiet_begin();
    int rc = probe_impl(rf, p);
    h5u_quiet_end(q);
    return rc;
}

/* ---- parameters ---- */

#define F32 H5T_IEEE_F32LE, H5T_NATIVE_FLOAT

static int params_impl(RunFile *rf, const Model *m) {
    if (rf_reserve(rf,
                   rf_compressed_bound(m->table.total * sizeof(float), (size_t)m->table.count)) < 0)
        return -1;
    hid_t g = rf_make_group(rf->file, RS_G_PARAMS);
    if (g < 0) return rf_fail_h5(rf, "create /params");
    int rc = 0;
    for (int i = 0; rc == 0 && i < m->table.count; i++) {
        const ParamInfo *pi = &m->table.info[i];
        hsize_t dims[2] = {(hsize_t)pi->shape[0], (hsize_t)pi->shape[1]};
        size_t numel = pi->ndim == 2 ? (size_t)dims[0] * (size_t)dims[1] : (size_t)dims[0];
        if ((pi->ndim != 1 && pi->ndim != 2) || pi->shape[0] < 0 ||
            (pi->ndim == 2 && pi->shape[1] < 0) || numel != pi->numel ||
            pi->offset > m->table.total || numel > m->table.total - pi->offset ||
            strchr(pi->name, '/') || !pi->name[0]) {
            rc = rf_fail(rf, "%s: parameter '%s' has a bad table entry (ndim %d)", rf->path,
                         pi->name, pi->ndim);
            break;
        }
        rc = rf_write_array(
            rf, g, "/" RS_G_PARAMS, pi->name, F32, pi->ndim, dims, m->params + pi->offset,
            pi->ndim == 2 ? "weight, PyTorch nn.Linear [out, in] layout" : "vector parameter");
        if (rc == 0) {
            hid_t ds = H5Dopen2(g, pi->name, H5P_DEFAULT);
            if (ds < 0 || h5u_attr_i64(ds, RS_PARAM_DECAY, pi->decay) < 0 ||
                h5u_attr_i64(ds, RS_PARAM_ADDED, pi->added) < 0)
                rc = rf_fail_h5(rf, "write /params attributes");
            if (ds >= 0) H5Dclose(ds);
        }
    }
    H5Gclose(g);
    if (rc == 0 && H5Fflush(rf->file, H5F_SCOPE_LOCAL) < 0) rc = rf_fail_h5(rf, "flush");
    return rc;
}

int runfile_write_params(RunFile *rf, const Model *m, char *err, size_t errlen) {
    if (!rf || !m || (!m->params && m->table.total))
        return seterr(err, errlen, "runfile_write_params: no run file or model");
    rf->err = err, rf->errlen = errlen;
    H5uQuiet q = h5u_quiet_begin();
    int rc = params_impl(rf, m);
    h5u_quiet_end(q);
    return rc;
}

int runfile_close(RunFile *rf, char *err, size_t errlen) {
    if (!rf) return 0;
    rf->err = err, rf->errlen = errlen;
    H5uQuiet q = h5u_quiet_begin();
    int rc = rf_free(rf);
    h5u_quiet_end(q);
    return rc;
}

/* ---- pretrained provenance (gatelab inspect) ---- */

static int pretrained_attrs(hid_t g, const RunPretrained *p) {
    return h5u_attr_str(g, RS_PT_ARCHITECTURE, p->architecture) < 0 ||
                   h5u_attr_str(g, RS_PT_MODEL_TYPE, p->model_type) < 0 ||
                   h5u_attr_str(g, RS_PT_DTYPE, p->dtype) < 0 ||
                   h5u_attr_str(g, RS_PT_ATTN_GATE, p->attn_gate) < 0 ||
                   h5u_attr_str(g, RS_PT_MODEL_DIR, p->model_dir) < 0 ||
                   h5u_attr_str(g, RS_PT_CONFIG_JSON, p->config_json) < 0 ||
                   (p->identity && h5u_attr_str(g, RS_PT_IDENTITY, p->identity) < 0) ||
                   h5u_attr_str(g, RS_PT_TOKENIZER, p->tokenizer) < 0 ||
                   h5u_attr_str(g, RS_PT_INPUT, p->input) < 0 ||
                   h5u_attr_str(g, RS_PT_INPUT_KIND, p->input_kind) < 0 ||
                   h5u_attr_i64(g, RS_PT_BOS_ID, p->bos_id) < 0 ||
                   h5u_attr_i64(g, RS_PT_THREADS, p->threads) < 0 ||
                   h5u_attr_f64(g, RS_PT_SECONDS, p->seconds) < 0
               ? -1
               : 0;
}

static int pretrained_impl(RunFile *rf, const RunPretrained *p) {
    size_t text = strlen(p->config_json) + (p->identity ? strlen(p->identity) : 0);
    if (rf_reserve(rf, rf_compressed_bound((size_t)(p->n_windows + p->n_layers) * 4 + text, 3)) < 0)
        return -1;
    char variant[256];
    snprintf(variant, sizeof variant, RS_VARIANT_PRETRAINED_FMT, p->architecture, p->attn_gate);
    if (h5u_attr_str(rf->file, RS_VARIANT, variant) < 0 ||
        h5u_attr_str(rf->file, RS_SOURCE, RS_SOURCE_PRETRAINED) < 0 ||
        h5u_attr_i64(rf->file, RS_N_PARAMS, p->n_params) < 0)
        return rf_fail_h5(rf, "write the root attributes of a pretrained run");
    hid_t g = rf_make_group(rf->file, RS_G_PRETRAINED);
    if (g < 0) return rf_fail_h5(rf, "create /" RS_G_PRETRAINED);
    int rc =
        pretrained_attrs(g, p) < 0 ? rf_fail_h5(rf, "write /" RS_G_PRETRAINED " attributes") : 0;
    hsize_t n = (hsize_t)p->n_windows;
    if (rc == 0)
        rc = rf_write_array(rf, g, "/" RS_G_PRETRAINED, RS_PT_FIRST_TOKEN, H5T_STD_I32LE,
                            H5T_NATIVE_INT, 1, &n, p->first_token,
                            "first token id of each window [seq]");
    hsize_t nl = (hsize_t)p->n_layers;
    if (rc == 0)
        rc = rf_write_array(rf, g, "/" RS_G_PRETRAINED, RS_PT_LAYER_WINDOW, H5T_STD_I32LE,
                            H5T_NATIVE_INT, 1, &nl, p->layer_window,
                            "keys a query of each layer sees, 0 full causal [layer]");
    if (H5Gclose(g) < 0 && rc == 0) rc = rf_fail_h5(rf, "close /" RS_G_PRETRAINED);
    hid_t cg = rc == 0 ? rf_make_group(rf->file, RS_G_CONFIG) : -1;
    if (rc == 0 && cg < 0) rc = rf_fail_h5(rf, "create /" RS_G_CONFIG);
    if (rc == 0 && h5u_attr_i64(cg, RS_CFG_WINDOW, p->window) < 0)
        rc = rf_fail_h5(rf, "write /" RS_G_CONFIG " attribute " RS_CFG_WINDOW);
    if (cg >= 0 && H5Gclose(cg) < 0 && rc == 0) rc = rf_fail_h5(rf, "close /" RS_G_CONFIG);
    if (rc == 0 && H5Fflush(rf->file, H5F_SCOPE_LOCAL) < 0) rc = rf_fail_h5(rf, "flush");
    return rc;
}

int runfile_write_pretrained(RunFile *rf, const RunPretrained *p, char *err, size_t errlen) {
    if (!rf || !p || p->n_windows < 0 || p->n_layers < 1 || !p->layer_window)
        return seterr(err, errlen, "runfile_write_pretrained: bad arguments");
    rf->err = err, rf->errlen = errlen;
    H5uQuiet q = h5u_quiet_begin();
    int rc = pretrained_impl(rf, p);
    h5u_quiet_end(q);
    return rc;
}

long long runfile_train_rows(const RunFile *rf) { return rf ? (long long)rf->n_train : -1; }
