/* fakequant.c: the sites of a fake-quantized pass (fakequant.h) over the
 * quantizer kernels of op_quant.c. */
#include "fakequant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "ops.h"

static const char *const mode_names[FQ_MODE_COUNT] = {FQ_NAME_FLOAT, FQ_NAME_W8A8, FQ_NAME_W8A8_PCT,
                                                      FQ_NAME_W4A4};

const char *fq_mode_name(FqMode m) { return m >= 0 && m < FQ_MODE_COUNT ? mode_names[m] : "?"; }

int fq_mode_parse(const char *name) {
    for (int i = 0; i < FQ_MODE_COUNT; i++)
        if (!strcmp(name, mode_names[i])) return i;
    return -1;
}

int fq_bits(FqMode m) { return m == FQ_W4A4 ? 4 : m == FQ_FLOAT ? 0 : 8; }

void fq_init(FakeQuant *q, FqMode m) {
    memset(q, 0, sizeof *q);
    q->mode = m;
}

void fq_free(FakeQuant *q) {
    for (int i = 0; i < q->n_sites; i++)
        free(q->sites[i].w), free(q->sites[i].low), free(q->sites[i].high);
    for (int k = 0; k < FQ_OUT_COUNT; k++) free(q->seq_inf[k]);
    free(q->sites), free(q->buf), free(q->scratch), free(q->seq_kurt);
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
    q->pass_seqs = B;
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

/* Site q->site, added when new; NULL when memory runs out. */
static FqSite *site_at(FakeQuant *q) {
    if (q->site < q->n_sites) return &q->sites[q->site];
    FqSite *s = realloc(q->sites, (size_t)(q->site + 1) * sizeof *s);
    if (!s) return NULL;
    q->sites = s;
    memset(&s[q->site], 0, sizeof *s);
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

/* The percentile entries' indices of n sorted values (fq_percentile's). */
static void pct_entries(size_t n, size_t *klo, size_t *khi) {
    *khi = (size_t)floor((double)(n - 1) * FQ_PERCENTILE / 100.0 + 0.5);
    *klo = (size_t)floor((double)(n - 1) * (100.0 - FQ_PERCENTILE) / 100.0 + 0.5);
}

/* Add x[n], one pass's input of the site, to the open calibration batch's
 * statistics: min and max, and for w8a8-pct the klo + 1 smallest and
 * n - khi largest values of the batch's bneed (the entries fq_percentile
 * takes of the whole batch). -1 when memory runs out. */
static int site_observe(FakeQuant *q, FqSite *s, const float *x, size_t n) {
    if (s->bn == 0) {
        s->blo = INFINITY, s->bhi = -INFINITY, s->nlow = s->nhigh = 0;
        s->bneed = q->pass_seqs > 0 ? n / (size_t)q->pass_seqs * (size_t)q->batch_seqs : 0;
    }
    double lo, hi;
    fq_minmax(x, n, &lo, &hi);
    s->blo = lo < s->blo ? lo : s->blo, s->bhi = hi > s->bhi ? hi : s->bhi;
    s->bn += n;
    if (q->mode != FQ_W8A8_PCT || s->bneed == 0) return 0;
    size_t klo, khi;
    pct_entries(s->bneed, &klo, &khi);
    const size_t cl = klo + 1, ch = s->bneed - khi, room = n + (cl > ch ? cl : ch);
    if (grow(&q->scratch, &q->scratch_n, room) != 0) return -1;
    if (!s->low && !(s->low = malloc(cl * sizeof(float)))) return -1;
    if (!s->high && !(s->high = malloc(ch * sizeof(float)))) return -1;
    s->nlow = fq_keep_extreme(s->low, s->nlow, cl, x, n, 0, q->scratch);
    s->nhigh = fq_keep_extreme(s->high, s->nhigh, ch, x, n, 1, q->scratch);
    return 0;
}

/* The closed batch's range of site s into its running range: r_batch the
 * min-max, or (w8a8-pct) the percentile entries, the largest kept low
 * value and the smallest kept high one. -1 when the batch did not hold
 * the values it was opened for. */
static int site_fold(FakeQuant *q, FqSite *s) {
    if (s->bn != s->bneed) return -1;
    double lo = s->blo, hi = s->bhi;
    if (q->mode == FQ_W8A8_PCT) {
        lo = -INFINITY, hi = INFINITY;
        for (size_t i = 0; i < s->nlow; i++) lo = s->low[i] > lo ? s->low[i] : lo;
        for (size_t i = 0; i < s->nhigh; i++) hi = s->high[i] < hi ? s->high[i] : hi;
    }
    if (s->have) {
        lo = FQ_MOMENTUM * s->lo + (1.0 - FQ_MOMENTUM) * lo;
        hi = FQ_MOMENTUM * s->hi + (1.0 - FQ_MOMENTUM) * hi;
    }
    s->lo = lo, s->hi = hi;
    s->have++;
    s->bn = 0;
    free(s->low), free(s->high);
    s->low = s->high = NULL;
    return 0;
}

void fq_calib_begin(FakeQuant *q, int B) {
    q->calibrating = 1;
    q->batch_seqs = B;
    for (int i = 0; i < q->n_sites; i++) q->sites[i].bn = 0;
}

void fq_calib_end(FakeQuant *q) {
    for (int i = 0; i < q->n_sites; i++)
        if (q->mode != FQ_FLOAT && site_fold(q, &q->sites[i]) != 0) q->failed = 1;
    q->calibrating = 0;
}

void fq_linear(FakeQuant *q, const float **in, size_t n_in, const float **w, size_t n_w) {
    if (q->mode == FQ_FLOAT || q->failed || n_in == 0 || n_w == 0) {
        q->site++;
        return;
    }
    const int bits = fq_bits(q->mode);
    FqSite *s = site_at(q);
    const float *wq = s ? site_weight(s, *w, n_w, bits) : NULL;
    if (!wq || (q->calibrating && site_observe(q, s, *in, n_in) != 0) ||
        (!s->have && !q->calibrating) || grow(&q->buf, &q->buf_n, n_in) != 0) {
        q->failed = 1; /* no range yet counts as a failure: calibrate first */
        q->site++;
        return;
    }
    if (!s->have) { /* the first calibration batch: the input in float */
        *w = wq;
        q->site++;
        return;
    }
    fq_asymmetric(q->buf, *in, n_in, bits, s->lo, s->hi);
    *in = q->buf, *w = wq;
    q->site++;
}

void fq_output(FakeQuant *q, FqOut k, const float *y, int B, size_t n) {
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
