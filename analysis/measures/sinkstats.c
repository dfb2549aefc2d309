/* sinkstats.c: per-layer profiles, secondary and residual sinks of one
 * probe record (sinkstats.h). */
#include "sinkstats.h"

#include <math.h>
#include <stdlib.h>

#include "metrics.h"
#include "runstats.h"

/* The layers a profile averages: l alone, or every layer for l = -1. */
static void layer_span(const ProbeRecord *p, int l, int *l0, int *l1) {
    *l0 = l < 0 ? 0 : l;
    *l1 = l < 0 ? p->L : l + 1;
}

int ss_key_profile(const ProbeRecord *p, int l, double *out) {
    const int M = p->M;
    float *ka = malloc(((size_t)M + 1) * sizeof *ka);
    if (!ka) return -1;
    int l0, l1;
    layer_span(p, l, &l0, &l1);
    for (int k = 0; k < M; k++) out[k] = 0.0;
    const double n = runread_heads_in(p, l0, l1);
    for (int m = l0; m < l1; m++)
        for (int h = 0; h < runread_layer_heads(p, m); h++) {
            key_alpha_all(p->attention + ((size_t)m * p->H + h) * M * M, M, ka);
            for (int k = 0; k < M; k++) out[k] += ka[k] / n;
        }
    free(ka);
    return 0;
}

int ss_key_head(const ProbeRecord *p, int l, int h, double *out) {
    const int M = p->M;
    float *ka = malloc(((size_t)M + 1) * sizeof *ka);
    if (!ka) return -1;
    key_alpha_all(p->attention + ((size_t)l * p->H + h) * M * M, M, ka);
    for (int k = 0; k < M; k++) out[k] = ka[k];
    free(ka);
    return 0;
}

int ss_distance(const ProbeRecord *p, int l, double *weight, double *mass) {
    const int M = p->M;
    double *w = malloc(2 * ((size_t)M + 1) * sizeof *w), *m = w + M + 1;
    if (!w) return -1;
    int l0, l1;
    layer_span(p, l, &l0, &l1);
    const double n = runread_heads_in(p, l0, l1);
    for (int d = 0; d < M; d++) {
        if (weight) weight[d] = 0.0;
        if (mass) mass[d] = 0.0;
    }
    for (int ll = l0; ll < l1; ll++)
        for (int h = 0; h < runread_layer_heads(p, ll); h++) {
            distance_profile(p->attention + ((size_t)ll * p->H + h) * M * M, M, w, m);
            for (int d = 0; d < M; d++) {
                if (weight) weight[d] += w[d] / n;
                if (mass) mass[d] += m[d] / n;
            }
        }
    free(w);
    return 0;
}

int ss_secondary(const ProbeRecord *p, int seq, SecSink *out, int max_out) {
    if (!p->key_alpha || seq < 0 || seq >= p->N) return -1;
    double *score = malloc(((size_t)p->L * p->M + 1) * sizeof *score);
    if (!score) return -1;
    const size_t per_seq = (size_t)p->L * p->H * p->M, per_layer = (size_t)p->H * p->M;
    for (int l = 0; l < p->L; l++) /* each layer over its present heads, its first ones */
        secsink_score(p->key_alpha + (size_t)seq * per_seq + l * per_layer, 1,
                      runread_layer_heads(p, l), p->M, score + (size_t)l * p->M);
    int n = secsink_find(score, p->L, p->M, out, max_out);
    free(score);
    return n;
}

double ss_bos_cos(const ProbeRecord *p, int l, int t) {
    if (!p->bos_cosine || l < 0 || l >= p->L || t < 0 || t >= p->T || p->N < 1) return NAN;
    double s = 0.0;
    for (int n = 0; n < p->N; n++) s += p->bos_cosine[((size_t)n * p->L + l) * p->T + t];
    return s / p->N;
}

int ss_resid_dims(const ProbeRecord *p, int l, int *dims, int max_out) {
    if (!p->resid_share || p->D < 1 || l < 0 || l >= p->L) return -1;
    int n = 0;
    for (int i = 0; i < p->D; i++)
        if (p->resid_share[(size_t)l * p->D + i] >= RESID_SINK_SHARE) {
            if (dims && n < max_out) dims[n] = i;
            n++;
        }
    return n;
}

/* ---- one number per run ---- */

void ss_lh_first_rest(const ProbeRecord *p, const float *arr, double *first, double *rest) {
    *first = *rest = NAN;
    if (!arr || p->L < 1 || p->H < 1) return;
    double f = 0.0, r = 0.0;
    for (int l = 0; l < p->L; l++)
        for (int h = 0; h < runread_layer_heads(p, l); h++) {
            double a, b;
            first_rest(arr + ((size_t)l * p->H + h) * p->T, p->T, &a, &b);
            f += a, r += b;
        }
    *first = f / runread_heads_in(p, 0, p->L);
    *rest = r / runread_heads_in(p, 0, p->L);
}

int ss_dormant_count(const ProbeRecord *p, DormantRule r) {
    int n = 0;
    for (int l = 0; l < p->L; l++)
        for (int h = 0; h < runread_layer_heads(p, l); h++) {
            double score;
            int d = rs_head_dormant(p, l, h, r, &score);
            if (d < 0) return -1;
            n += d;
        }
    return n;
}

double ss_secondary_mean(const ProbeRecord *p) {
    double s = 0.0;
    for (int n = 0; n < p->N; n++) {
        int k = ss_secondary(p, n, NULL, 0);
        if (k < 0) return NAN;
        s += k;
    }
    return p->N > 0 ? s / p->N : NAN;
}

int ss_resid_count(const ProbeRecord *p) {
    int n = 0;
    for (int l = 0; l < p->L; l++) {
        int k = ss_resid_dims(p, l, NULL, 0);
        if (k < 0) return -1;
        n += k;
    }
    return n;
}

void ss_gate_first_rest(const ProbeRecord *p, double *first, double *rest) {
    *first = *rest = NAN;
    if (!p->gate_first || !p->gate_rest || p->L < 1) return;
    double f = 0.0, r = 0.0;
    for (int l = 0; l < p->L; l++) f += p->gate_first[l], r += p->gate_rest[l];
    *first = f / p->L, *rest = r / p->L;
}

/* v[0] over the median of v[1..T-1], v read as float (f) or double (d),
 * one of them non-NULL; scratch[T] is overwritten. NaN when T < 2 or the
 * median is not positive. */
static double first_over_median(const float *f, const double *d, int T, double *scratch) {
    if (T < 2) return NAN;
    for (int t = 1; t < T; t++) scratch[t - 1] = f ? f[t] : d[t];
    double med = median_sort(scratch, (size_t)T - 1);
    return med > 0.0 ? (f ? f[0] : d[0]) / med : NAN;
}

double ss_lh_first_over_median(const ProbeRecord *p, const float *arr, int l) {
    if (!arr || p->L < 1 || p->H < 1 || p->T < 2 || l >= p->L) return NAN;
    double *scratch = malloc((size_t)p->T * sizeof *scratch), s = 0.0;
    if (!scratch) return NAN;
    int lo = l < 0 ? 0 : l * p->H, hi = l < 0 ? p->L * p->H : (l + 1) * p->H;
    for (int lh = lo; lh < hi; lh++)
        if (lh % p->H < runread_layer_heads(p, lh / p->H)) /* present heads only */
            s += first_over_median(arr + (size_t)lh * p->T, NULL, p->T, scratch);
    free(scratch);
    return s / (l < 0 ? runread_heads_in(p, 0, p->L) : runread_layer_heads(p, l));
}

double ss_grad_first_over_median(const ProbeRecord *p) {
    if (!p->grad_in_norm || p->L < 1 || p->T < 2) return NAN;
    double *scratch = malloc((size_t)p->T * sizeof *scratch), s = 0.0;
    if (!scratch) return NAN;
    for (int l = 0; l < p->L; l++)
        s += first_over_median(NULL, p->grad_in_norm + (size_t)l * p->T, p->T, scratch);
    free(scratch);
    return s / p->L;
}

double ss_distance_mass_near(const ProbeRecord *p, int near) {
    if (!p->attention || p->M < 1 || p->L < 1 || p->H < 1) return NAN;
    double *mass = malloc((size_t)p->M * sizeof *mass), s = 0.0;
    if (!mass || ss_distance(p, -1, NULL, mass) < 0) {
        free(mass);
        return NAN;
    }
    for (int d = 0; d < near && d < p->M; d++) s += mass[d];
    free(mass);
    return s;
}

double ss_ov_erank_mean(const ProbeRecord *p) {
    if (!p->ov_erank || p->L < 1 || p->H < 1) return NAN;
    double s = 0.0;
    for (int lh = 0; lh < p->L * p->H; lh++)
        if (lh % p->H < runread_layer_heads(p, lh / p->H)) s += p->ov_erank[lh];
    return s / runread_heads_in(p, 0, p->L);
}
