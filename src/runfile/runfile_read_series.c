/* runfile_read_series.c: a run's metric series, weights and long-context
 * results, quantized-evaluation results (runfile_read.h). */
#include "runfile_read_priv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5util.h"
#include "runschema.h"
#include "runfile_check.h"
#include "util.h"

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
    hid_t g = rr_open_group(r->file, RS_G_METRICS_TRAIN);
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
    hid_t g = rr_open_group(r->file, RS_G_METRICS_EVAL);
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
    hid_t g = rr_open_group(r->file, RS_G_PARAMS);
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
    hid_t top = rr_open_group(r->file, RS_G_LCEVAL);
    if (top < 0) return 0;
    hid_t g = rr_open_group(top, mode);
    H5Gclose(top);
    if (g < 0) return 0;
    long long *v = NULL;
    int k = 0;
    int rc = rr_list_numbered(g, RS_LC_LEN_SCAN, 1, &v, &k);
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
    free(e->loss_by_bucket), free(e->needle_depth), free(e->needle_acc);
    e->loss_by_bucket = e->needle_depth = e->needle_acc = NULL;
}

int runread_lceval(RunReader *r, const char *mode, int len, RunLcEval *e, char *err,
                   size_t errlen) {
    memset(e, 0, sizeof *e);
    char path[96];
    snprintf(path, sizeof path, RS_G_LCEVAL "/%.16s/" RS_LC_LEN_FMT, mode, len);
    hid_t g = H5Lexists(r->file, RS_G_LCEVAL, H5P_DEFAULT) > 0 ? rr_open_group(r->file, path) : -1;
    if (g < 0) {
        H5Eclear2(H5E_DEFAULT);
        seterr(err, errlen, "%s: no /%s", r->meta.path, path);
        return -1;
    }
    long long tl = 0, ln = 0;
    int rc = 0;
    rc |= rr_attr_double(g, RS_VAL_LOSS, &e->val_loss);
    rc |= rr_attr_double(g, RS_LC_PPL, &e->ppl);
    rc |= rr_attr_double(g, RS_LC_FIRST_SHARE, &e->first_share);
    rc |= rr_attr_double(g, RS_LC_UNIFORM_SHARE, &e->uniform_share);
    rc |= rr_attr_double(g, RS_LC_SINK_RATE, &e->sink_rate);
    rc |= rr_attr_double(g, RS_LC_YARN_SCALE, &e->yarn_scale);
    rc |= rr_attr_ll(g, RS_LC_N_SEQS, &e->n_seqs);
    rc |= rr_attr_ll(g, RS_LC_TRAIN_LEN, &tl);
    rc |= rr_attr_ll(g, RS_LC_LEN, &ln);
    if (rc) {
        H5Gclose(g);
        seterr(err, errlen, "%s: /%s lacks an attribute", r->meta.path, path);
        return -1;
    }
    e->len = (int)ln;
    e->train_len = (int)tl;
    hsize_t want[1] = {0};
    rc = READ_F64(g, RS_LC_LOSS_BY_BUCKET, 1, want, &e->loss_by_bucket);
    e->n_buckets = (int)want[0];
    if (rc == 0 && H5Lexists(g, RS_LC_NEEDLE_ACC, H5P_DEFAULT) > 0) {
        hsize_t nd[1] = {0};
        rc = READ_F64(g, RS_LC_NEEDLE_DEPTH, 1, nd, &e->needle_depth);
        if (rc == 0) rc = READ_F64(g, RS_LC_NEEDLE_ACC, 1, nd, &e->needle_acc);
        if (rc == 0 && rr_attr_ll(g, RS_LC_NEEDLE_N, &e->needle_n) != 0)
            rc = seterr(err, errlen, "%s: /%s lacks %s", r->meta.path, path, RS_LC_NEEDLE_N);
        e->n_depths = (int)nd[0];
    }
    H5Gclose(g);
    if (rc < 0) runread_lceval_free(e);
    return rc < 0 ? -1 : 0;
}

/* ---- /stream (gatelab stream) ---- */

int runread_stream_windows(RunReader *r, int **w, int *n, char *err, size_t errlen) {
    *w = NULL;
    *n = 0;
    hid_t g = rr_open_group(r->file, RS_G_STREAM);
    if (g < 0) return 0;
    long long *v = NULL;
    int k = 0, rc = rr_list_numbered(g, RS_ST_WINDOW_SCAN, 1, &v, &k);
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
    hid_t g = H5Lexists(r->file, RS_G_STREAM, H5P_DEFAULT) > 0 ? rr_open_group(r->file, path) : -1;
    if (g < 0) {
        H5Eclear2(H5E_DEFAULT);
        return seterr(err, errlen, "%s: no /%s", r->meta.path, path);
    }
    long long w = 0, len = 0, ns = 0;
    int rc = rr_attr_ll(g, RS_ST_WINDOW, &w) | rr_attr_ll(g, RS_ST_LEN, &len) |
             rr_attr_ll(g, RS_ST_N_SEQS, &ns) | rr_attr_double(g, RS_ST_DELTA, &s->delta) |
             rr_attr_double(g, RS_ST_P, &s->p);
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

/* ---- quantized evaluation ---- */

/* The group at path, or -1 (and HDF5's error stack cleared) when absent. */
static hid_t quant_group(RunReader *r, const char *path) {
    hid_t g = H5Lexists(r->file, RS_G_QUANT, H5P_DEFAULT) > 0 ? rr_open_group(r->file, path) : -1;
    if (g < 0) H5Eclear2(H5E_DEFAULT);
    return g;
}

int runread_quant(RunReader *r, RunQuant *q, char *err, size_t errlen) {
    memset(q, 0, sizeof *q);
    hid_t g = quant_group(r, RS_G_QUANT);
    if (g < 0) return 1;
    long long len = 0, calib = 0;
    int rc = 0;
    rc |= rr_attr_ll(g, RS_Q_LEN, &len);
    rc |= rr_attr_ll(g, RS_Q_CALIB, &calib);
    rc |= rr_attr_ll(g, RS_Q_N_SEQS, &q->n_seqs);
    rc |= rr_attr_double(g, RS_Q_PERCENTILE, &q->percentile);
    rc |= rr_attr_double(g, RS_Q_VAL_LOSS, &q->val_loss);
    rc |= rr_attr_double(g, RS_Q_PPL, &q->ppl);
    rc |= rr_attr_double(g, RS_Q_INF_ATTN, &q->inf_attn);
    rc |= rr_attr_double(g, RS_Q_INF_FFN, &q->inf_ffn);
    rc |= rr_attr_double(g, RS_Q_INF_LAYER, &q->inf_layer);
    rc |= rr_attr_double(g, RS_Q_KURT_MAX, &q->kurtosis_max);
    long long keep = 0; /* absent (a file from before the option): none held out */
    if (H5Aexists(g, RS_Q_KEEP_FIRST) > 0) rc |= rr_attr_ll(g, RS_Q_KEEP_FIRST, &keep);
    H5Gclose(g);
    if (rc || len < 1 || len > INT_MAX || calib < 0 || calib > INT_MAX || q->n_seqs < 0 ||
        keep < 0 || keep >= len)
        return seterr(err, errlen, "%s: /" RS_G_QUANT " lacks an attribute or holds a bad one",
                      r->meta.path);
    q->len = (int)len, q->calib_batches = (int)calib, q->keep_first = (int)keep;
    return 0;
}

int runread_quant_mode(RunReader *r, const char *mode, RunQuantMode *m, char *err, size_t errlen) {
    memset(m, 0, sizeof *m);
    char path[96];
    snprintf(path, sizeof path, RS_G_QUANT "/%.32s", mode);
    hid_t g = quant_group(r, path);
    if (g < 0) return 1;
    int rc = 0;
    rc |= rr_attr_double(g, RS_Q_VAL_LOSS, &m->val_loss);
    rc |= rr_attr_double(g, RS_Q_PPL, &m->ppl);
    rc |= rr_attr_double(g, RS_Q_DLOSS, &m->dloss);
    const char *keep[] = {RS_Q_VAL_LOSS_KEEP, RS_Q_DLOSS_KEEP, RS_Q_SINK_DLOSS};
    double *kv[] = {&m->val_loss_keep, &m->dloss_keep, &m->sink_dloss};
    for (int i = 0; i < 3; i++) /* absent: nothing was held out */
        if (H5Aexists(g, keep[i]) <= 0 || rr_attr_double(g, keep[i], kv[i]) != 0) *kv[i] = NAN;
    long long destroyed = -1;
    if (H5Aexists(g, RS_Q_DESTROYED) > 0) rc |= rr_attr_ll(g, RS_Q_DESTROYED, &destroyed);
    m->destroyed = destroyed == 0 || destroyed == 1 ? (int)destroyed : -1;
    m->source_layer = m->n_tensors = -1, m->source_recovered = NAN;
    if (H5Aexists(g, RS_Q_SOURCE) > 0) {
        long long sl = -1, nt = -1;
        rc |= h5u_attr_read_strbuf(g, RS_Q_SOURCE, m->source, sizeof m->source) < 0;
        rc |= rr_attr_ll(g, RS_Q_SOURCE_LAYER, &sl) | rr_attr_ll(g, RS_Q_SOURCE_TENSORS, &nt);
        rc |= rr_attr_double(g, RS_Q_SOURCE_RECOVERED, &m->source_recovered);
        m->source_layer = sl >= 0 && sl <= INT_MAX ? (int)sl : -1;
        m->n_tensors = nt >= 0 && nt <= INT_MAX ? (int)nt : -1;
    }
    H5Gclose(g);
    if (rc) return seterr(err, errlen, "%s: /%s lacks an attribute", r->meta.path, path);
    return 0;
}
