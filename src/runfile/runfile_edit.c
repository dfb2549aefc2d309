/* runfile_edit.c: adding results to a finished run file (gatelab eval's
 * /lceval, gatelab intervene's /intervene): each edit goes into a copy
 * that replaces the file only when complete (runfile_priv.h). */
#define _POSIX_C_SOURCE 200809L
#include "runfile_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic_write.h"
#include "runfile_read.h"
#include "util.h"

/* ---- long-context evaluation results ---- */

static int lceval_attrs(RunFile *rf, hid_t g, const LcEvalData *d) {
    const char *k[] = {RS_VAL_LOSS,         RS_LC_PPL,       RS_LC_FIRST_SHARE,
                       RS_LC_UNIFORM_SHARE, RS_LC_SINK_RATE, RS_LC_YARN_SCALE};
    double v[] = {d->val_loss,      d->ppl,       d->first_share,
                  d->uniform_share, d->sink_rate, d->yarn_scale};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (h5u_attr_f64(g, k[i], v[i]) < 0) return rf_fail_h5(rf, "write /lceval attributes");
    if (h5u_attr_i64(g, RS_LC_N_SEQS, d->n_seqs) < 0 ||
        h5u_attr_i64(g, RS_LC_TRAIN_LEN, d->train_len) < 0 ||
        h5u_attr_i64(g, RS_LC_LEN, d->len) < 0)
        return rf_fail_h5(rf, "write /lceval attributes");
    return 0;
}

/* The needle task's exact-match shares by depth (eval --needle). */
static int lceval_needle(RunFile *rf, hid_t g, const LcEvalData *d) {
    hsize_t n = (hsize_t)d->n_depths;
    if (h5u_attr_i64(g, RS_LC_NEEDLE_N, d->needle_n) < 0)
        return rf_fail_h5(rf, "write /lceval needle attributes");
    int rc = rf_write_array(rf, g, "/" RS_G_LCEVAL, RS_LC_NEEDLE_DEPTH, H5T_IEEE_F64LE,
                            H5T_NATIVE_DOUBLE, 1, &n, d->needle_depth,
                            "needle depth in [0, 1] of the room before the query");
    if (rc == 0)
        rc = rf_write_array(rf, g, "/" RS_G_LCEVAL, RS_LC_NEEDLE_ACC, H5T_IEEE_F64LE,
                            H5T_NATIVE_DOUBLE, 1, &n, d->needle_acc,
                            "exact-match share of the needle's value at each depth");
    return rc;
}

static int lceval_impl(RunFile *rf, const LcEvalData *d) {
    char name[64];
    snprintf(name, sizeof name, RS_LC_LEN_FMT, d->len);
    int rc = rf_reserve(rf, (size_t)d->n_buckets * 8 + ((size_t)16 << 10));
    hid_t top = rc == 0 ? rf_make_group(rf->file, RS_G_LCEVAL) : -1;
    hid_t mg = top >= 0 ? rf_make_group(top, d->mode) : -1;
    if (rc == 0 && mg < 0) rc = rf_fail_h5(rf, "create /lceval group");
    /* a re-run of the same length replaces the old result */
    if (rc == 0 && H5Lexists(mg, name, H5P_DEFAULT) > 0 && H5Ldelete(mg, name, H5P_DEFAULT) < 0)
        rc = rf_fail_h5(rf, "replace an old /lceval result");
    hid_t g = rc == 0 ? H5Gcreate2(mg, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) : -1;
    if (rc == 0 && g < 0) rc = rf_fail_h5(rf, "create /lceval/<mode>/L_<len>");
    if (rc == 0) rc = lceval_attrs(rf, g, d);
    hsize_t n = (hsize_t)d->n_buckets;
    if (rc == 0)
        rc = rf_write_array(rf, g, "/" RS_G_LCEVAL, RS_LC_LOSS_BY_BUCKET, H5T_IEEE_F64LE,
                            H5T_NATIVE_DOUBLE, 1, &n, d->loss_by_bucket,
                            "mean val loss over positions [i*train_len, (i+1)*train_len)");
    if (rc == 0 && d->n_depths > 0) rc = lceval_needle(rf, g, d);
    if (g >= 0) H5Gclose(g);
    if (mg >= 0) H5Gclose(mg);
    if (top >= 0) H5Gclose(top);
    return rc;
}

/* Open an existing, closed run file at path for writing and run fn on it.
 * 0, or -1 with the reason in err. */
static int edit_at(const char *path, int (*fn)(RunFile *, const void *), const void *ctx, char *err,
                   size_t errlen) {
    H5uQuiet q = h5u_quiet_begin();
    RunFile *rf = rf_alloc(path, err, errlen);
    int rc = rf ? 0 : -1;
    hid_t fapl = rc == 0 ? rf_make_fapl() : -1;
    if (fapl >= 0) rf->file = H5Fopen(path, H5F_ACC_RDWR, fapl);
    if (fapl >= 0) H5Pclose(fapl);
    if (rc == 0 && rf->file < 0) {
        const char *why = h5u_reason();
        rc = rf_fail(rf, "%s: cannot open for writing (%s)", path, *why ? why : "not an HDF5 file");
    }
    if (rc == 0) rc = rf_check_schema(rf);
    if (rc == 0 && (rf->fd = open(path, O_RDWR)) < 0)
        rc = rf_fail(rf, "%s: cannot open for writing: %s", path, strerror(errno));
    if (rc == 0) rc = fn(rf, ctx);
    if (rf) {
        if (rc < 0) rf->err = NULL; /* the first reason stands */
        if (rf_free(rf) < 0) rc = -1;
    }
    h5u_quiet_end(q);
    return rc;
}

/* A run file is finished work: a result goes into a copy that replaces it
 * only when complete, so a kill mid-write never costs the run. */
static int edit_copy(const char *path, int (*fn)(RunFile *, const void *), const void *ctx,
                     char *err, size_t errlen) {
    char tmp[ATOMIC_TMP_MAX];
    /* the one output rule (outpath.h): our own run file, never a link */
    if (runfile_outpath_check(path, 1, err, errlen) != 0) return -1;
    if (atomic_copy(path, tmp, sizeof tmp, err, errlen) != 0) return -1;
    if (edit_at(tmp, fn, ctx, err, errlen) != 0) {
        atomic_discard(tmp);
        return -1;
    }
    return atomic_commit(tmp, path, 1, err, errlen);
}

static int lceval_fn(RunFile *rf, const void *d) { return lceval_impl(rf, d); }

int runfile_write_lceval(const char *path, const LcEvalData *d, char *err, size_t errlen) {
    if (!path || !*path || strlen(path) >= RF_PATH)
        return seterr(err, errlen, "run file path is empty or too long");
    if (!d || !d->mode || (strcmp(d->mode, RS_LC_PLAIN) && strcmp(d->mode, RS_LC_YARN)) ||
        d->len <= 0 || d->n_buckets < 0 || (d->n_buckets && !d->loss_by_bucket) ||
        d->n_depths < 0 || (d->n_depths && (!d->needle_depth || !d->needle_acc)))
        return seterr(err, errlen, "%s: bad long-context result to write", path);
    return edit_copy(path, lceval_fn, d, err, errlen);
}

/* ---- quantized evaluation (gatelab eval --quant) ---- */

/* /quant's attributes: the float pass. */
static int quant_top_attrs(hid_t g, const QuantData *d) {
    const char *k[] = {RS_Q_PERCENTILE, RS_Q_VAL_LOSS,  RS_Q_PPL,     RS_Q_INF_ATTN,
                       RS_Q_INF_FFN,    RS_Q_INF_LAYER, RS_Q_KURT_MAX};
    const double v[] = {d->percentile, d->val_loss,  d->ppl,         d->inf_attn,
                        d->inf_ffn,    d->inf_layer, d->kurtosis_max};
    for (size_t i = 0; i < sizeof k / sizeof *k; i++)
        if (h5u_attr_f64(g, k[i], v[i]) < 0) return -1;
    if (h5u_attr_i64(g, RS_Q_LEN, d->len) < 0 || h5u_attr_i64(g, RS_Q_N_SEQS, d->n_seqs) < 0 ||
        h5u_attr_i64(g, RS_Q_CALIB, d->calib_batches) < 0 ||
        h5u_attr_i64(g, RS_Q_KEEP_FIRST, d->keep_first) < 0)
        return -1;
    return 0;
}

/* /quant/<mode> with its attributes; the held-out pass's when keep > 0. */
static int quant_mode_group(hid_t top, const QuantModeData *m, int keep) {
    hid_t g = H5Gcreate2(top, m->mode, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int rc = g < 0 || h5u_attr_f64(g, RS_Q_VAL_LOSS, m->val_loss) < 0 ||
                     h5u_attr_f64(g, RS_Q_PPL, m->ppl) < 0 ||
                     h5u_attr_f64(g, RS_Q_DLOSS, m->dloss) < 0 ||
                     h5u_attr_i64(g, RS_Q_DESTROYED, m->destroyed) < 0
                 ? -1
                 : 0;
    if (rc == 0 && m->source && m->source[0] &&
        (h5u_attr_str(g, RS_Q_SOURCE, m->source) < 0 ||
         h5u_attr_i64(g, RS_Q_SOURCE_LAYER, m->source_layer) < 0 ||
         h5u_attr_i64(g, RS_Q_SOURCE_TENSORS, m->n_tensors) < 0 ||
         h5u_attr_f64(g, RS_Q_SOURCE_RECOVERED, m->source_recovered) < 0))
        rc = -1;
    if (rc == 0 && keep > 0 &&
        (h5u_attr_f64(g, RS_Q_VAL_LOSS_KEEP, m->val_loss_keep) < 0 ||
         h5u_attr_f64(g, RS_Q_DLOSS_KEEP, m->dloss_keep) < 0 ||
         h5u_attr_f64(g, RS_Q_SINK_DLOSS, m->sink_dloss) < 0))
        rc = -1;
    if (g >= 0) H5Gclose(g);
    return rc;
}

static int quant_impl(RunFile *rf, const void *ctx) {
    const QuantData *d = ctx;
    int rc = rf_reserve(rf, (size_t)16 << 10);
    /* a re-run replaces the old result whole */
    if (rc == 0 && H5Lexists(rf->file, RS_G_QUANT, H5P_DEFAULT) > 0 &&
        H5Ldelete(rf->file, RS_G_QUANT, H5P_DEFAULT) < 0)
        rc = rf_fail_h5(rf, "replace an old /quant result");
    hid_t top = rc == 0 ? rf_make_group(rf->file, RS_G_QUANT) : -1;
    if (rc == 0 && top < 0) rc = rf_fail_h5(rf, "create /" RS_G_QUANT);
    if (rc == 0 && quant_top_attrs(top, d) < 0) rc = rf_fail_h5(rf, "write /quant attributes");
    for (int i = 0; rc == 0 && i < d->n_modes; i++)
        if (quant_mode_group(top, &d->modes[i], d->keep_first) < 0)
            rc = rf_fail_h5(rf, "write /quant/<mode>");
    if (top >= 0) H5Gclose(top);
    return rc;
}

int runfile_write_quant(const char *path, const QuantData *d, char *err, size_t errlen) {
    if (!path || !*path || strlen(path) >= RF_PATH)
        return seterr(err, errlen, "run file path is empty or too long");
    if (!d || d->len <= 0 || d->n_modes < 0 || (d->n_modes && !d->modes) || d->keep_first < 0)
        return seterr(err, errlen, "%s: bad quantized-evaluation result to write", path);
    for (int i = 0; i < d->n_modes; i++)
        if (!d->modes[i].mode || !*d->modes[i].mode || strchr(d->modes[i].mode, '/'))
            return seterr(err, errlen, "%s: bad quantization mode name to write", path);
    return edit_copy(path, quant_impl, d, err, errlen);
}

/* ---- streaming evaluation (gatelab stream) ---- */

static int stream_impl(RunFile *rf, const void *ctx) {
    const StreamData *d = ctx;
    char name[64];
    snprintf(name, sizeof name, RS_ST_WINDOW_FMT, d->window);
    size_t nl = (size_t)(d->n_keep + 1) * d->n_seqs;
    int rc = rf_reserve(rf, nl * 8 + ((size_t)16 << 10));
    hid_t top = rc == 0 ? rf_make_group(rf->file, RS_G_STREAM) : -1;
    if (rc == 0 && top < 0) rc = rf_fail_h5(rf, "create /" RS_G_STREAM);
    if (rc == 0 && H5Lexists(top, name, H5P_DEFAULT) > 0 && H5Ldelete(top, name, H5P_DEFAULT) < 0)
        rc = rf_fail_h5(rf, "replace an old /stream result");
    hid_t g = rc == 0 ? H5Gcreate2(top, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) : -1;
    if (rc == 0 && g < 0) rc = rf_fail_h5(rf, "create /stream/W_<window>");
    if (rc == 0 &&
        (h5u_attr_i64(g, RS_ST_WINDOW, d->window) < 0 || h5u_attr_i64(g, RS_ST_LEN, d->len) < 0 ||
         h5u_attr_i64(g, RS_ST_N_SEQS, d->n_seqs) < 0 ||
         h5u_attr_f64(g, RS_ST_DELTA, d->delta) < 0 || h5u_attr_f64(g, RS_ST_P, d->p) < 0))
        rc = rf_fail_h5(rf, "write /stream attributes");
    hsize_t nk = (hsize_t)d->n_keep, dims[2] = {(hsize_t)d->n_keep + 1, (hsize_t)d->n_seqs};
    if (rc == 0)
        rc = rf_write_array(rf, g, "/" RS_G_STREAM, RS_ST_KEEP, H5T_STD_I32LE, H5T_NATIVE_INT, 1,
                            &nk, d->keep, "first tokens each streaming row keeps");
    if (rc == 0)
        rc = rf_write_array(rf, g, "/" RS_G_STREAM, RS_ST_LOSS, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                            2, dims, d->loss,
                            "mean loss per sequence at positions >= window: dense, then each keep");
    if (g >= 0) H5Gclose(g);
    if (top >= 0) H5Gclose(top);
    return rc;
}

int runfile_write_stream(const char *path, const StreamData *d, char *err, size_t errlen) {
    if (!path || !*path || strlen(path) >= RF_PATH)
        return seterr(err, errlen, "run file path is empty or too long");
    if (!d || d->window < 1 || d->n_keep < 1 || d->n_seqs < 1 || !d->keep || !d->loss)
        return seterr(err, errlen, "%s: bad streaming result to write", path);
    return edit_copy(path, stream_impl, d, err, errlen);
}

/* ---- interventions (gatelab intervene) ---- */

typedef struct {
    const InterventionOut *iv;
    int n;
} IvBatch;

static int iv_attrs(RunFile *rf, hid_t g, const InterventionOut *o) {
    if (h5u_attr_str(g, RS_IV_KIND, o->kind) < 0 || h5u_attr_f64(g, RS_IV_LOSS, o->loss) < 0 ||
        h5u_attr_i64(g, RS_IV_LOSS_N, o->loss_n) < 0 ||
        h5u_attr_i64(g, RS_IV_CLIP_K, o->clip_k) < 0 ||
        h5u_attr_i64(g, RS_IV_LAYER, o->layer) < 0 ||
        h5u_attr_f64(g, RS_IV_CONST_C, o->gate_const) < 0 ||
        h5u_attr_str(g, RS_IV_HEADS, o->heads ? o->heads : "") < 0 ||
        h5u_attr_f64(g, RS_IV_LOSS_NONE, o->loss_none) < 0 ||
        h5u_attr_f64(g, RS_IV_MACT_ABS, o->mact_abs) < 0 ||
        h5u_attr_f64(g, RS_IV_MACT_RATIO, o->mact_ratio) < 0)
        return rf_fail_h5(rf, "write /intervene attributes");
    return 0;
}

static int iv_fn(RunFile *rf, const void *ctx) {
    const IvBatch *b = ctx;
    hid_t top = rf_make_group(rf->file, RS_G_INTERVENE);
    if (top < 0) return rf_fail_h5(rf, "create /" RS_G_INTERVENE);
    int rc = 0;
    for (int i = 0; i < b->n && rc == 0; i++) {
        char gp[128];
        hid_t g = -1;
        const char *name = b->iv[i].name ? b->iv[i].name : b->iv[i].kind;
        snprintf(gp, sizeof gp, "/%s/%s", RS_G_INTERVENE, name);
        rc = rf_probe_group(rf, top, name, gp, b->iv[i].probe, &g);
        if (rc == 0) rc = iv_attrs(rf, g, &b->iv[i]);
        if (g >= 0 && H5Gclose(g) < 0 && rc == 0) rc = rf_fail_h5(rf, "close an /intervene group");
    }
    H5Gclose(top);
    return rc;
}

int runfile_write_interventions(const char *path, const InterventionOut *iv, int n, char *err,
                                size_t errlen) {
    if (!path || !*path || strlen(path) >= RF_PATH)
        return seterr(err, errlen, "run file path is empty or too long");
    for (int i = 0; i < n; i++)
        if (!iv || !iv[i].kind || !*iv[i].kind || strchr(iv[i].kind, '/') || !iv[i].probe ||
            (iv[i].name && (!*iv[i].name || strchr(iv[i].name, '/'))))
            return seterr(err, errlen, "%s: bad intervention result to write", path);
    IvBatch b = {iv, n};
    return edit_copy(path, iv_fn, &b, err, errlen);
}

/* ---- a user's prompt (gatelab probe) ---- */

static int prompt_fn(RunFile *rf, const void *ctx) {
    const PromptOut *o = ctx;
    char gp[160];
    size_t T = (size_t)o->probe->T, L = (size_t)o->probe->L, H = (size_t)o->probe->H;
    int rc = rf_reserve(rf, L * H * T * T * 8 + ((size_t)64 << 10));
    hid_t top = rc == 0 ? rf_make_group(rf->file, RS_G_PROMPT) : -1, g = -1;
    if (rc == 0 && top < 0) rc = rf_fail_h5(rf, "create /" RS_G_PROMPT);
    if (rc == 0 && H5Lexists(top, o->name, H5P_DEFAULT) > 0) {
        if (!o->replace)
            rc = rf_fail(rf, "/%s/%s exists; --force replaces it", RS_G_PROMPT, o->name);
        else if (H5Ldelete(top, o->name, H5P_DEFAULT) < 0)
            rc = rf_fail_h5(rf, "replace an old /prompt result");
    }
    snprintf(gp, sizeof gp, "/%s/%s", RS_G_PROMPT, o->name);
    if (rc == 0) rc = rf_probe_group(rf, top, o->name, gp, o->probe, &g);
    if (rc == 0 &&
        (h5u_attr_str(g, RS_PM_TEXT, o->text ? o->text : "") < 0 ||
         h5u_attr_str(g, RS_PM_INPUT, o->text ? RS_PM_INPUT_TEXT : RS_PM_INPUT_TOKENS) < 0 ||
         h5u_attr_f64(g, RS_PM_LOSS, o->loss) < 0 || h5u_attr_i64(g, RS_PM_LOSS_N, o->loss_n) < 0))
        rc = rf_fail_h5(rf, "write /prompt attributes");
    if (g >= 0 && H5Gclose(g) < 0 && rc == 0) rc = rf_fail_h5(rf, "close a /prompt group");
    if (top >= 0) H5Gclose(top);
    return rc;
}

int runfile_write_prompt(const char *path, const PromptOut *o, char *err, size_t errlen) {
    if (!path || !*path || strlen(path) >= RF_PATH)
        return seterr(err, errlen, "run file path is empty or too long");
    if (!o || !o->name || !*o->name || strlen(o->name) > 100 || strchr(o->name, '/') || !o->probe ||
        o->probe->N != 1)
        return seterr(err, errlen, "%s: bad prompt result to write", path);
    return edit_copy(path, prompt_fn, o, err, errlen);
}
