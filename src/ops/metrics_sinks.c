/* metrics_sinks.c: key shares, distance profile, cosine to position 0,
 * residual exceedances and secondary sinks (metrics_sinks.h). */
#include "metrics_sinks.h"

#include <math.h>

void key_alpha_all(const float *A, int P, float *out) {
    for (int k = 0; k < P; k++) {
        double sum = 0.0;
        for (int t = k; t < P; t++) sum += A[(size_t)t * P + k];
        out[k] = (float)(sum / (P - k));
    }
}

void distance_profile(const float *A, int P, double *weight, double *mass) {
    double total = 0.0;
    for (int t = 0; t < P; t++)
        for (int j = 0; j <= t; j++) total += A[(size_t)t * P + j];
    for (int d = 0; d < P; d++) {
        double sum = 0.0;
        for (int t = d; t < P; t++) sum += A[(size_t)t * P + t - d];
        if (weight) weight[d] = sum / (P - d);
        if (mass) mass[d] = total > 0.0 ? sum / total : NAN;
    }
}

/* Euclidean norm of x[C] */
static double norm2(const float *x, int C) {
    double s = 0.0;
    for (int i = 0; i < C; i++) s += (double)x[i] * x[i];
    return sqrt(s);
}

void cosine_to_first(const float *h, int T, int C, float *out) {
    const double n0 = norm2(h, C);
    for (int t = 0; t < T; t++) {
        const float *x = h + (size_t)t * C;
        double dot = 0.0, nt = norm2(x, C);
        for (int i = 0; i < C; i++) dot += (double)x[i] * h[i];
        out[t] = n0 > 0.0 && nt > 0.0 ? (float)(dot / (n0 * nt)) : NAN;
    }
}

void count_above(const float *h, int T, int C, double thr, double *count) {
    for (int t = 0; t < T; t++)
        for (int i = 0; i < C; i++) count[i] += fabs((double)h[(size_t)t * C + i]) > thr;
}

void secsink_score(const float *ka, int L, int H, int P, double *score) {
    for (int l = 0; l < L; l++)
        for (int k = 0; k < P; k++) {
            double s = 0.0;
            for (int h = 0; h < H; h++) s += ka[((size_t)l * H + h) * P + k];
            score[(size_t)l * P + k] = H > 0 ? s / H : NAN;
        }
}

/* Whether key k of layer l is a sink by score[L, P]. */
static int is_sink(const double *score, int P, int l, int k) {
    return k >= 1 && k <= P - SECSINK_MIN_QUERIES && score[(size_t)l * P + k] > SECSINK_EPS;
}

int secsink_find(const double *score, int L, int P, SecSink *out, int max_out) {
    int n = 0;
    for (int k = 1; k < P; k++)
        for (int l = 0; l < L; l++) {
            if (!is_sink(score, P, l, k) || (l > 0 && is_sink(score, P, l - 1, k))) continue;
            SecSink s = {.pos = k, .layer = l, .lifetime = 0, .peak = 0.0};
            for (int m = l; m < L && is_sink(score, P, m, k); m++) {
                s.lifetime++;
                if (score[(size_t)m * P + k] > s.peak) s.peak = score[(size_t)m * P + k];
            }
            if (out && n < max_out) out[n] = s;
            n++;
        }
    return n;
}
