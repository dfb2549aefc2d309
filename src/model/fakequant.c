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
    for (int i = 0; i < q->n_sites; i++) free(q->sites[i].w);
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

/* Update the site's running range from x[n] (calibration). */
static int site_calibrate(FakeQuant *q, FqSite *s, const float *x, size_t n) {
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

void fq_linear(FakeQuant *q, const float **in, size_t n_in, const float **w, size_t n_w) {
    if (q->mode == FQ_FLOAT || q->failed || n_in == 0 || n_w == 0) {
        q->site++;
        return;
    }
    const int bits = fq_bits(q->mode);
    FqSite *s = site_at(q);
    const float *wq = s ? site_weight(s, *w, n_w, bits) : NULL;
    if (!wq || (q->calibrating && site_calibrate(q, s, *in, n_in) != 0) || !s->have ||
        grow(&q->buf, &q->buf_n, n_in) != 0) {
        q->failed = 1; /* no range yet counts as a failure: calibrate first */
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
