/* fakequant.c: the sites of a fake-quantized pass (fakequant.h) over the
 * quantizer kernels of op_quant.c. */
#include "fakequant.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "ops.h"

static const char *const mode_names[FQ_MODE_COUNT] = {
    FQ_NAME_FLOAT,    FQ_NAME_W8A8, FQ_NAME_W8A8_PCT, FQ_NAME_W4A4,
    FQ_NAME_W8A8_TOK, FQ_NAME_KV8,  FQ_NAME_KV4};

const char *fq_mode_name(FqMode m) { return m >= 0 && m < FQ_MODE_COUNT ? mode_names[m] : "?"; }

int fq_mode_parse(const char *name) {
    for (int i = 0; i < FQ_MODE_COUNT; i++)
        if (!strcmp(name, mode_names[i])) return i;
    return -1;
}

int fq_bits(FqMode m) { return m == FQ_W4A4 || m == FQ_KV4 ? 4 : m == FQ_FLOAT ? 0 : 8; }

int fq_destroyed(double dloss) { return !(dloss <= log(FQ_DESTROYED_PPL_RATIO)); }

int fq_kv(FqMode m) { return m == FQ_KV8 || m == FQ_KV4; }

int fq_calibrated(FqMode m) { return m != FQ_FLOAT && m != FQ_W8A8_TOK && !fq_kv(m); }

void fq_init(FakeQuant *q, FqMode m) {
    memset(q, 0, sizeof *q);
    q->mode = m;
    q->windows = 1;
    q->hold = -1;
}

void fq_free(FakeQuant *q) {
    for (int i = 0; i < q->n_sites; i++) free(q->sites[i].w);
    for (int k = 0; k < FQ_OUT_COUNT; k++) free(q->seq_inf[k]);
    free(q->sites), free(q->buf), free(q->scratch), free(q->kept), free(q->seq_kurt);
    free(q->tensors), free(q->moe_in), free(q->moe_rows);
    for (int k = 0; k < FQ_SLAB_COUNT; k++) free(q->moe_w[k]);
    memset(q, 0, sizeof *q);
}

/* The open pass's per-sequence statistics into the sums. */
static void fold_pass(FakeQuant *q) {
    if (!q->in_pass || !q->observe) return;
    for (int b = 0; b < q->B; b++) {
        for (int k = 0; k < FQ_OUT_COUNT; k++) q->inf_sum[k] += q->seq_inf[k][b];
        q->kurt_sum += q->seq_kurt[b];
    }
    q->n_seqs += q->B;
    q->in_pass = 0;
}

/* Room for the statistics of B sequences; -1 when memory runs out. */
static int seq_room(FakeQuant *q, int B) {
    if (B <= q->seq_cap) return 0;
    for (int k = 0; k <= FQ_OUT_COUNT; k++) {
        double **p = k < FQ_OUT_COUNT ? &q->seq_inf[k] : &q->seq_kurt;
        double *v = realloc(*p, (size_t)B * sizeof *v);
        if (!v) return -1;
        *p = v;
    }
    q->seq_cap = B;
    return 0;
}

void fq_begin(FakeQuant *q, int B) {
    fold_pass(q);
    q->site = 0;
    q->windows = B;
    q->tensor = -1, q->layer = 0, q->attn_seen = 0, q->post_attn = 0, q->last_in = NULL;
    q->moe_collect = 0;
    if (!q->observe) return;
    if (seq_room(q, B) != 0) {
        q->failed = 1;
        return;
    }
    for (int b = 0; b < B; b++) {
        for (int k = 0; k < FQ_OUT_COUNT; k++) q->seq_inf[k][b] = 0.0;
        q->seq_kurt[b] = -INFINITY;
    }
    q->B = B, q->in_pass = 1;
}

void fq_stats(FakeQuant *q, double *inf, double *kurt) {
    fold_pass(q);
    const double n = (double)q->n_seqs;
    for (int k = 0; k < FQ_OUT_COUNT; k++) inf[k] = n > 0 ? q->inf_sum[k] / n : NAN;
    *kurt = n > 0 ? q->kurt_sum / n : NAN;
}

/* *p grown to hold n floats; -1 when memory runs out. */
static int grow(float **p, size_t *have, size_t n) {
    if (*have >= n) return 0;
    float *v = realloc(*p, n * sizeof(float));
    if (!v) return -1;
    *p = v, *have = n;
    return 0;
}

/* Site q->site, added when new (with any skipped before it, as a held
 * tensor's are, empty); NULL when memory runs out. */
static FqSite *site_at(FakeQuant *q) {
    if (q->site < q->n_sites) return &q->sites[q->site];
    FqSite *s = realloc(q->sites, (size_t)(q->site + 1) * sizeof *s);
    if (!s) return NULL;
    q->sites = s;
    memset(&s[q->n_sites], 0, (size_t)(q->site + 1 - q->n_sites) * sizeof *s);
    q->n_sites = q->site + 1;
    return &s[q->site];
}

/* The site's quantized copy of w[n], made on its first use. */
static const float *site_weight(FqSite *s, const float *w, size_t n, int bits) {
    if (s->w && s->w_src == w) return s->w;
    free(s->w);
    s->w = malloc(n * sizeof(float));
    s->w_src = w;
    if (!s->w) return NULL;
    memcpy(s->w, w, n * sizeof(float));
    fq_symmetric(s->w, n, bits);
    return s->w;
}

/* The rows of x[rows, cols] a per-tensor range is taken over: all of x
 * when none is held out, else those whose place in their window of len
 * rows is keep or later, gathered into q->kept; their count of values
 * into *n. NULL when memory runs out. */
static const float *range_rows(FakeQuant *q, const float *x, size_t rows, size_t cols, size_t len,
                               size_t keep, size_t *n) {
    *n = rows * cols;
    if (keep == 0) return x;
    if (grow(&q->kept, &q->kept_n, rows * cols) != 0) return NULL;
    size_t k = 0;
    for (size_t r = 0; r < rows; r++)
        if (r % len >= keep) memcpy(q->kept + k++ * cols, x + r * cols, cols * sizeof(float));
    *n = k * cols;
    return q->kept;
}

/* Update the site's running range from x[rows, cols] less the held-out
 * rows (calibration). */
static int site_calibrate(FakeQuant *q, FqSite *s, const float *x, size_t rows, size_t cols,
                          size_t len, size_t keep) {
    size_t n;
    x = range_rows(q, x, rows, cols, len, keep, &n);
    if (!x) return -1;
    double lo, hi;
    if (q->mode == FQ_W8A8_PCT) {
        if (grow(&q->scratch, &q->scratch_n, n) != 0) return -1;
        fq_percentile(x, n, FQ_PERCENTILE, q->scratch, &lo, &hi);
    } else {
        fq_minmax(x, n, &lo, &hi);
    }
    if (s->have) {
        lo = FQ_MOMENTUM * s->lo + (1.0 - FQ_MOMENTUM) * lo;
        hi = FQ_MOMENTUM * s->hi + (1.0 - FQ_MOMENTUM) * hi;
    }
    s->lo = lo, s->hi = hi;
    s->have++;
    return 0;
}

/* x[rows, cols] into y fake-quantized on bits: per token, each row on
 * its own min-max; else on the site's range (updated first when
 * calibrating). The rows whose place in their window of len rows is below
 * keep are copied as they are. -1: out of memory, or no range yet. */
static int quant_input(FakeQuant *q, FqSite *s, float *y, const float *x, size_t rows, size_t cols,
                       size_t len, size_t keep, int bits) {
    if (q->mode == FQ_W8A8_TOK || keep == len) {
        for (size_t r = 0; r < rows; r++) {
            const float *xr = x + r * cols;
            double lo, hi;
            if (r % len < keep) {
                memcpy(y + r * cols, xr, cols * sizeof(float));
                continue;
            }
            fq_minmax(xr, cols, &lo, &hi);
            fq_asymmetric(y + r * cols, xr, cols, bits, lo, hi);
        }
        return 0;
    }
    if (q->calibrating && site_calibrate(q, s, x, rows, cols, len, keep) != 0) return -1;
    if (!s->have) return -1; /* no range yet: calibrate first */
    fq_asymmetric(y, x, rows * cols, bits, s->lo, s->hi);
    for (size_t r = 0; keep > 0 && r < rows; r++)
        if (r % len < keep) memcpy(y + r * cols, x + r * cols, cols * sizeof(float));
    return 0;
}

static const char *const role_names[FQ_T_COUNT] = {"attention input", "attention output",
                                                   "MLP input", "MLP hidden", "input"};

void fq_tensor_name(const FqTensor *t, int j, char *buf, size_t n) {
    if (t->role == FQ_T_OTHER) snprintf(buf, n, "layer %d input %d", t->layer, j);
    else snprintf(buf, n, "layer %d %s", t->layer, role_names[t->role]);
}

/* A call reading `in`: a new input tensor when in is not the last call's,
 * recorded by its place in the layer the first time a pass reaches it.
 * -1 when memory runs out. */
static int track_tensor(FakeQuant *q, const float *in) {
    if (in == q->last_in) return 0;
    q->last_in = in;
    q->tensor++;
    if (!q->attn_seen) q->post_attn = 0;
    else q->post_attn++;
    if (q->tensor < q->n_tensors) return 0;
    FqTensor *t = realloc(q->tensors, (size_t)(q->tensor + 1) * sizeof *t);
    if (!t) return -1;
    q->tensors = t;
    const int p = q->post_attn;
    t[q->tensor] = (FqTensor){q->layer, !q->attn_seen ? FQ_T_ATTN_IN
                                        : p <= 3      ? (FqRole)p
                                                      : FQ_T_OTHER};
    q->n_tensors = q->tensor + 1;
    return 0;
}

void fq_linear(FakeQuant *q, const float **in, size_t rows, size_t cols, const float **w,
               size_t n_w) {
    const size_t win = q->windows > 0 ? (size_t)q->windows : 1;
    if (!q->failed && track_tensor(q, *in) != 0) q->failed = 1;
    if (q->mode == FQ_FLOAT || fq_kv(q->mode) || q->failed || q->tensor == q->hold ||
        rows * cols == 0 || n_w == 0) {
        q->site++;
        return;
    }
    const int bits = fq_bits(q->mode);
    const size_t len = rows / win, keep = (size_t)q->keep_first < len ? (size_t)q->keep_first : len;
    FqSite *s = rows % win == 0 ? site_at(q) : NULL;
    const float *wq = s ? site_weight(s, *w, n_w, bits) : NULL;
    if (!wq || grow(&q->buf, &q->buf_n, rows * cols) != 0 ||
        quant_input(q, s, q->buf, *in, rows, cols, len, keep, bits) != 0) {
        q->failed = 1;
        q->site++;
        return;
    }
    *in = q->buf, *w = wq;
    q->site++;
}

/* 1 when q quantizes no linear layer, or has failed. */
static int fq_idle(const FakeQuant *q) {
    return q->mode == FQ_FLOAT || fq_kv(q->mode) || q->failed;
}

/* 1 when input tensor t of the pass is held in float. */
static int fq_held(const FakeQuant *q, int t) { return q->hold >= 0 && t == q->hold; }

const float *fq_moe_input(FakeQuant *q, const float *in, size_t rows, size_t cols) {
    const size_t win = q->windows > 0 ? (size_t)q->windows : 1;
    if (!q->failed && track_tensor(q, in) != 0) q->failed = 1;
    q->moe_tensor[FQ_SLAB_GATE_UP] = q->moe_tensor[FQ_SLAB_UP] = q->tensor;
    if (fq_idle(q) || fq_held(q, q->tensor) || rows * cols == 0) {
        q->site++;
        return in;
    }
    const size_t len = rows / win, keep = (size_t)q->keep_first < len ? (size_t)q->keep_first : len;
    FqSite *s = rows % win == 0 ? site_at(q) : NULL;
    q->site++;
    if (!s || grow(&q->moe_in, &q->moe_in_n, rows * cols) != 0 ||
        quant_input(q, s, q->moe_in, in, rows, cols, len, keep, fq_bits(q->mode)) != 0) {
        q->failed = 1;
        return in;
    }
    return q->moe_in;
}

/* The collected hidden rows into the hidden site's range. */
static int moe_range(FakeQuant *q) {
    FqSite *s = &q->sites[q->moe_site];
    if (q->moe_n == 0) return 0; /* every row held out: nothing to quantize */
    return site_calibrate(q, s, q->moe_rows, 1, q->moe_n, 1, 0);
}

int fq_moe_hidden_sweep(FakeQuant *q, const void *tag) {
    if (q->moe_collect) {
        q->moe_collect = 0;
        if (!q->failed && moe_range(q) != 0) q->failed = 1;
        return 0;
    }
    if (!q->failed && track_tensor(q, tag) != 0) q->failed = 1;
    q->moe_tensor[FQ_SLAB_DOWN] = q->tensor;
    if (fq_idle(q) || fq_held(q, q->tensor)) {
        q->site++;
        return 0;
    }
    q->moe_site = q->site;
    if (!site_at(q)) q->failed = 1;
    q->site++;
    q->moe_collect = !q->failed && q->calibrating && fq_calibrated(q->mode);
    q->moe_n = 0;
    return q->moe_collect;
}

const float *fq_expert_weight(FakeQuant *q, FqSlab s, const float *w, size_t n) {
    if (fq_idle(q) || fq_held(q, q->moe_tensor[s]) || n == 0) return w;
    if (grow(&q->moe_w[s], &q->moe_w_n[s], n) != 0) {
        q->failed = 1;
        return w;
    }
    memcpy(q->moe_w[s], w, n * sizeof(float));
    fq_symmetric(q->moe_w[s], n, fq_bits(q->mode));
    return q->moe_w[s];
}

/* Row xr[cols] added to the collected hidden rows; -1: out of memory. */
static int moe_keep_row(FakeQuant *q, const float *xr, size_t cols) {
    const size_t need = q->moe_n + cols;
    if (need > q->moe_rows_n &&
        grow(&q->moe_rows, &q->moe_rows_n, need > 2 * q->moe_rows_n ? need : 2 * q->moe_rows_n))
        return -1;
    memcpy(q->moe_rows + q->moe_n, xr, cols * sizeof(float));
    q->moe_n = need;
    return 0;
}

void fq_moe_hidden(FakeQuant *q, float *x, size_t n, size_t cols, const int *pos) {
    if (fq_idle(q) || fq_held(q, q->moe_tensor[FQ_SLAB_DOWN])) return;
    const int bits = fq_bits(q->mode), keep = q->keep_first;
    const FqSite *s = &q->sites[q->moe_site];
    for (size_t r = 0; r < n && !q->failed; r++) {
        float *xr = x + r * cols;
        double lo = s->lo, hi = s->hi;
        if (pos[r] < keep) continue;
        if (q->moe_collect) q->failed = moe_keep_row(q, xr, cols) != 0;
        else if (q->mode != FQ_W8A8_TOK && !s->have) q->failed = 1; /* calibrate first */
        if (q->moe_collect || q->failed) continue;
        if (q->mode == FQ_W8A8_TOK) fq_minmax(xr, cols, &lo, &hi);
        fq_asymmetric(xr, xr, cols, bits, lo, hi);
    }
}

/* x's heads at positions keep.. of every window, each on its own min-max. */
static void kv_rows(float *x, int B, int T, int Hkv, int dh, size_t ld, int keep, int bits) {
    for (int b = 0; b < B; b++)
        for (int t = keep; t < T; t++)
            for (int h = 0; h < Hkv; h++) {
                float *r = x + ((size_t)b * T + t) * ld + (size_t)h * dh;
                double lo, hi;
                fq_minmax(r, (size_t)dh, &lo, &hi);
                fq_asymmetric(r, r, (size_t)dh, bits, lo, hi);
            }
}

void fq_kv_cache(FakeQuant *q, float *k, float *v, int B, int T, int Hkv, int dh, size_t ld) {
    q->attn_seen = 1;
    if (!fq_kv(q->mode) || q->failed || dh < 1) return;
    if (ld == 0) ld = (size_t)Hkv * dh;
    const int keep = q->keep_first < T ? q->keep_first : T, bits = fq_bits(q->mode);
    kv_rows(k, B, T, Hkv, dh, ld, keep, bits);
    kv_rows(v, B, T, Hkv, dh, ld, keep, bits);
}

void fq_output(FakeQuant *q, FqOut k, const float *y, int B, size_t n) {
    if (k == FQ_OUT_LAYER) q->layer++, q->attn_seen = 0, q->last_in = NULL;
    if (!q->observe || !q->in_pass || n == 0) return;
    for (int b = 0; b < B && b < q->B; b++) {
        const float *v = y + (size_t)b * n;
        double m = q->seq_inf[k][b];
        for (size_t i = 0; i < n; i++)
            if (fabs((double)v[i]) > m) m = fabs((double)v[i]);
        q->seq_inf[k][b] = m;
        if (k != FQ_OUT_LAYER) continue;
        double ku = kurtosis(v, n);
        if (ku > q->seq_kurt[b]) q->seq_kurt[b] = ku;
    }
}
