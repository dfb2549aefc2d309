/* metrics_sinks.h: the sink literature's measures beyond position 0, as
 * pure functions over arrays (docs/metrics.md "Beyond the first token"):
 * the attention share of every key position, secondary sinks (Wong et al.
 * 2025), the cosine of each position's hidden state to position 0's,
 * residual sinks (Qiu et al. 2026) and attention by query-key distance
 * (Sun et al. 2026). The thresholds are the named constants below. */
#ifndef GATELAB_METRICS_SINKS_H
#define GATELAB_METRICS_SINKS_H

#include <stddef.h>

#include "metrics.h" /* SINK_EPS */

/* A key position k >= 1 is a secondary sink of a layer (on one sequence)
 * when the mean over heads of its alpha_k exceeds SECSINK_EPS (Gu et al.'s
 * sink threshold, the same one), among the keys that at least
 * SECSINK_MIN_QUERIES queries see (k <= P - SECSINK_MIN_QUERIES): a key
 * seen by fewer queries has a large alpha_k by the diagonal alone. */
#define SECSINK_EPS SINK_EPS
#define SECSINK_MIN_QUERIES 4

/* A residual-stream dimension i is a residual sink of a layer when
 * |h_t[i]| > RESID_SINK_FACTOR x the median |h| of its sequence's block
 * output on at least RESID_SINK_SHARE of the tokens (sequence x position). */
#define RESID_SINK_FACTOR 10.0
#define RESID_SINK_SHARE 0.8

/* out[k] = alpha_k of one head's map A[P,P] for every k = 0..P-1: the mean
 * over queries t = k..P-1 of A[t,k] (metrics.h alpha_k, all keys in one
 * pass). */
void key_alpha_all(const float *A, int P, float *out);

/* Attention by distance d = t - j of one head's map A[P,P], d = 0..P-1:
 * weight[d] = mean over queries t = d..P-1 of A[t, t-d];
 * mass[d] = sum over t of A[t, t-d] / the map's total mass (sums to 1 over
 * d; NaN for every d when the map has no mass). Either may be NULL. */
void distance_profile(const float *A, int P, double *weight, double *mass);

/* out[t] = cos(h_t, h_0) over the C features of h[T, C], t = 0..T-1
 * (out[0] = 1); NaN where a norm is 0. */
void cosine_to_first(const float *h, int T, int C, float *out);

/* count[i] += the number of positions t of h[T, C] with |h_t[i]| > thr. */
void count_above(const float *h, int T, int C, double thr, double *count);

/* One secondary sink: a run of consecutive layers over which key position
 * `pos` of one sequence stays a sink. */
typedef struct {
    int pos;      /* key position (>= 1) */
    int layer;    /* the layer where it forms (the run's first) */
    int lifetime; /* layers it lives: the run's length */
    double peak;  /* the largest head-mean alpha over the run */
} SecSink;

/* The head-mean score of one sequence: score[l*P + k] = mean over h of
 * ka[(l*H + h)*P + k], for ka[L, H, P] (one sequence's key alphas). */
void secsink_score(const float *ka, int L, int H, int P, double *score);

/* The secondary sinks of one sequence's score[L, P], layer runs ordered
 * by position then layer: up to max_out into out (may be NULL); returns
 * how many there are. */
int secsink_find(const double *score, int L, int P, SecSink *out, int max_out);

#endif
