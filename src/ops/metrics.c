/* metrics.c: the metrics of docs/metrics.md as pure functions.
 * Every sum is accumulated in double so a long probe does not drift. */
#include "metrics.h"

#include "simd.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Long reductions keep LANES independent partial results: the loop then
 * vectorises and is not bound by one add's latency. The order is fixed by
 * the code, so every result is the same from run to run. */
#define LANES 8

static double lanes_sum(const double *s) {
    double t = 0.0;
    for (int k = 0; k < LANES; k++) t += s[k];
    return t;
}

double uniform_first_share(int T) {
    if (T < 2) return 1.0; /* a single query sees only token 0 */
    double h = 0.0;        /* H_T, the T-th harmonic number */
    for (int i = 1; i <= T; i++) h += 1.0 / i;
    return (h - 1.0) / (T - 1);
}

int uniform_slots(int slots, int proxy) { return proxy ? 0 : slots; }

/* Query t gives token 0 the weight 1/(t + 1 + slots) while t < W. */
static double uniform_first_weights(int t0, int m, int slots) {
    double s = 0.0;
    for (int t = t0; t < m; t++) s += 1.0 / (t + 1 + slots);
    return s;
}

double uniform_first_share_window(int T, int W, int slots) {
    if (T < 2) return slots ? 1.0 / (1 + slots) : 1.0; /* a single query sees only token 0 */
    int m = W <= 0 || W >= T ? T : W;
    if (!slots && m == T) return uniform_first_share(T);
    if (!slots) return uniform_first_share(m) * (m - 1) / (T - 1); /* (H_m - 1) / (T - 1) */
    return uniform_first_weights(1, m, slots) / (T - 1);
}

double uniform_alpha0_window(int len, int W, int slots) {
    if (len < 1) return 0.0;
    int m = W <= 0 || W >= len ? len : W;
    if (!slots) return (uniform_first_share(m) * (m - 1) + 1.0) / len; /* H_m / len */
    return uniform_first_weights(0, m, slots) / len;
}

/* The mean of f over the L layers, layer l under its window win[l] and its
 * slots slots[l] (either NULL: 0 on every layer), weighted by its query
 * heads heads[l] (NULL: every layer the same weight). */
static double layers_mean(double (*f)(int, int, int), const int *win, const int *slots,
                          const int *heads, int L, int T) {
    if (L < 1) return f(T, 0, 0);
    double s = 0.0, w = 0.0;
    for (int l = 0; l < L; l++) {
        const double wl = heads ? heads[l] : 1.0;
        s += wl * f(T, win ? win[l] : 0, slots ? slots[l] : 0);
        w += wl;
    }
    return w > 0.0 ? s / w : NAN;
}

double uniform_share_layers(const int *win, const int *slots, const int *heads, int L, int T) {
    return layers_mean(uniform_first_share_window, win, slots, heads, L, T);
}

double uniform_alpha0_layers(const int *win, const int *slots, const int *heads, int L, int len) {
    return layers_mean(uniform_alpha0_window, win, slots, heads, L, len);
}

/* A[T,T] -> mean over t = 1..T-1 of A[t,0] */
double loss_beyond(const double *bucket, int n, int L, int T) {
    double s = 0.0;
    long long w = 0;
    for (int k = 1; T > 0 && k < n && (long long)k * T < L; k++) {
        long long width = L - (long long)k * T < T ? L - (long long)k * T : T;
        s += bucket[k] * (double)width;
        w += width;
    }
    return w > 0 ? s / (double)w : NAN;
}

int exact_match(const float *logits, int V, const int *targets, int n) {
    for (int i = 0; i < n; i++) {
        const float *row = logits + (size_t)i * (size_t)V;
        int t = targets[i];
        if (t < 0 || t >= V) return 0;
        for (int j = 0; j < V; j++)
            if (j != t && !(row[t] > row[j])) return 0;
    }
    return 1;
}

double needle_chance(void) { return pow((double)NEEDLE_VAL_SYMBOLS, -(double)NEEDLE_VAL_LEN); }

double first_token_share(const float *A, int T) {
    if (T < 2) return 0.0;
    double s = 0.0;
    for (int t = 1; t < T; t++) s += A[(size_t)t * T];
    return s / (T - 1);
}

/* col[T] (A[t,0]) -> mean over t = 1..T-1 of col[t] */
double first_share_from_col(const float *col, int T) {
    if (T < 2) return 0.0;
    double s = 0.0;
    for (int t = 1; t < T; t++) s += col[t];
    return s / (T - 1);
}

/* A[T,T] -> mean over t = k..T-1 of A[t,k] (query k sees itself) */
double alpha_k(const float *A, int T, int k) {
    if (k < 0 || k >= T) return 0.0;
    double s = 0.0;
    for (int t = k; t < T; t++) s += A[(size_t)t * T + k];
    return s / (T - k);
}

/* col[len] -> mean */
double alpha0_from_col(const float *col, int len) {
    if (len < 1) return 0.0;
    double s = 0.0;
    for (int t = 0; t < len; t++) s += col[t];
    return s / len;
}

double sink_rate(const float *cols, size_t n, int T, int len, double eps) {
    if (n == 0 || T < 1) return NAN;
    if (len > T) len = T;
    size_t hits = 0;
    for (size_t i = 0; i < n; i++) hits += alpha0_from_col(cols + i * (size_t)T, len) > eps;
    return (double)hits / (double)n;
}

int sink_formed(double f_attn, double uniform) {
    if (!isfinite(f_attn)) return -1;
    return f_attn > SINK_FORMED_FACTOR * uniform;
}

/* A[T,T] in place: row t -> |a| / sum_{j<=t} |a|; masked keys -> 0 */
void attention_proxy(float *A, int T) {
    for (int t = 0; t < T; t++) {
        float *row = A + (size_t)t * T;
        double s = 0.0;
        for (int j = 0; j <= t; j++) s += fabs((double)row[j]);
        for (int j = 0; j <= t; j++) row[j] = s > 0.0 ? (float)(fabs((double)row[j]) / s) : 0.0f;
        for (int j = t + 1; j < T; j++) row[j] = 0.0f;
    }
}

/* A[T,T] -> mean over t = 1..T-1 of -sum_{j<=t} a log a (nats) */
double attention_entropy(const float *A, int T) {
    if (T < 2) return 0.0;
    double total = 0.0;
    for (int t = 1; t < T; t++) {
        const float *row = A + (size_t)t * T;
        double e = 0.0;
        for (int j = 0; j <= t; j++)
            if (row[j] > 0.0f) e -= (double)row[j] * log((double)row[j]);
        total += e;
    }
    return total / (T - 1);
}

/* x[n] -> hist[nbins] over [lo,hi]; bin i covers [lo + i w, lo + (i+1) w),
 * hi itself goes to the last bin; NaN is skipped (it has no bin). */
void histogram_add(double *hist, int nbins, double lo, double hi, const float *x, size_t n) {
    if (nbins < 1 || !(hi > lo)) return;
    double scale = nbins / (hi - lo);
    for (size_t i = 0; i < n; i++) {
        double v = x[i];
        if (isnan(v)) continue;
        double f = floor((v - lo) * scale);
        int b = f < 0 ? 0 : f >= nbins ? nbins - 1 : (int)f;
        hist[b] += 1.0;
    }
}

/* x[n] -> out[nthr], fraction of x strictly below thr[i] */
void fraction_below(double *out, const double *thr, int nthr, const float *x, size_t n) {
    for (int k = 0; k < nthr; k++) {
        size_t c = 0;
        for (size_t i = 0; i < n; i++)
            if ((double)x[i] < thr[k]) c++;
        out[k] = n ? (double)c / (double)n : 0.0;
    }
}

double abs_max(const float *x, size_t n) {
    double m = 0.0;
    for (size_t i = 0; i < n; i++) {
        double a = fabs((double)x[i]);
        if (a > m) m = a;
    }
    return m;
}

/* Quickselect: afterwards a[k] is the k-th smallest and a[i] <= a[k] for
 * i < k (exact, the same value a full sort puts at k). */
static void select_kth(float *a, size_t n, size_t k) {
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        float pivot = a[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] < pivot) i++;
            while (a[j] > pivot) j--;
            if (i <= j) {
                float t = a[i];
                a[i] = a[j], a[j] = t;
                i++;
                if (j == 0) break;
                j--;
            }
        }
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else return;
    }
}

/* |x| as its bit pattern: for non-negative floats the integer order is the
 * float order (NaN sorts above +inf), so a histogram of the top bits ranks. */
static uint32_t abs_bits(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u & 0x7fffffffu;
}

#define MED_SHIFT 20                              /* bins: the exponent and 3 mantissa bits */
#define MED_BINS ((0x7fffffffu >> MED_SHIFT) + 1) /* 2048 */

/* median of |x|; even n averages the two middle values. Exact, the same
 * value as a full sort: one pass histograms the top bits of |x|, one pass
 * copies the bin holding rank n/2 into scratch, and quickselect finishes
 * there (a few % of n instead of all of it). */
double abs_median(const float *x, size_t n, float *scratch) {
    if (n == 0) return 0.0;
    /* four interleaved histograms: neighbours often share a bin, and one
     * histogram would make each increment wait for the previous one (this
     * pass took 0.27 ms with one, 0.12 ms with four, over 512 x 768 values) */
    uint32_t h4[4][MED_BINS] = {{0}}, *hist = h4[0];
    size_t k = n / 2, below = 0, b = 0, c = 0, i = 0;
    for (; i + 4 <= n; i += 4)
        for (int j = 0; j < 4; j++) h4[j][abs_bits(x[i + j]) >> MED_SHIFT]++;
    for (; i < n; i++) hist[abs_bits(x[i]) >> MED_SHIFT]++;
    for (size_t j = 0; j < MED_BINS; j++) hist[j] += h4[1][j] + h4[2][j] + h4[3][j];
    /* b: the bin of rank k; below: how many lie in lower bins */
    while (b + 1 < MED_BINS && below + hist[b] <= k) below += hist[b++];
    for (i = 0; i < n; i++) /* the bin is a few % of x: the branch predicts well */
        if (abs_bits(x[i]) >> MED_SHIFT == b) scratch[c++] = fabsf(x[i]);
    size_t kk = k - below;
    select_kth(scratch, c, kk);
    if (n % 2) return scratch[kk];
    float lo = 0.0f; /* rank k-1: below kk in the bin, or else the largest below it */
    for (i = 0; i < kk; i++) lo = scratch[i] > lo ? scratch[i] : lo;
    for (i = 0; kk == 0 && i < n; i++)
        if (abs_bits(x[i]) >> MED_SHIFT < b && fabsf(x[i]) > lo) lo = fabsf(x[i]);
    return 0.5 * ((double)lo + (double)scratch[kk]);
}

double massive_cut(double median_abs, double abs_min, double ratio) {
    double m = ratio * median_abs;
    return m > abs_min ? m : abs_min;
}

double massive_threshold(const float *x, size_t n, double abs_min, double ratio, float *scratch) {
    return massive_cut(abs_median(x, n, scratch), abs_min, ratio);
}

/* out[k] = the k largest |x| descending (0 padded when n < k); insertion
 * into a short sorted list, since k is tiny (3) and n is large. */
void abs_topk(double *out, int k, const float *x, size_t n) {
    for (int j = 0; j < k; j++) out[j] = 0.0;
    if (k < 1) return;
    for (size_t i = 0; i < n; i++) {
        double a = fabs((double)x[i]);
        if (a <= out[k - 1]) continue;
        int j = k - 1;
        while (j > 0 && out[j - 1] < a) {
            out[j] = out[j - 1];
            j--;
        }
        out[j] = a;
    }
}

/* mean((x-mu)^4) / (sigma^4 + 1e-6), sigma^2 the population variance */
SIMD_BODY double kurtosis_body(const float *x, size_t n) {
    if (n == 0) return 0.0;
    double s1[LANES] = {0}, s2[LANES] = {0}, s4[LANES] = {0};
    size_t i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int k = 0; k < LANES; k++) s1[k] += x[i + k];
    for (; i < n; i++) s1[0] += x[i];
    const double mu = lanes_sum(s1) / (double)n;
    for (i = 0; i + LANES <= n; i += LANES)
        for (int k = 0; k < LANES; k++) {
            double d = (double)x[i + k] - mu, d2 = d * d;
            s2[k] += d2, s4[k] += d2 * d2;
        }
    for (; i < n; i++) {
        double d = (double)x[i] - mu, d2 = d * d;
        s2[0] += d2, s4[0] += d2 * d2;
    }
    const double m2 = lanes_sum(s2) / (double)n, m4 = lanes_sum(s4) / (double)n;
    return m4 / (m2 * m2 + 1e-6);
}
SIMD_KERNEL_RET(, double, kurtosis, (const float *x, size_t n), (x, n))

static inline double row_norm(const float *v, int C) {
    double s[LANES] = {0};
    int c = 0;
    for (; c + LANES <= C; c += LANES)
        for (int k = 0; k < LANES; k++) s[k] += (double)v[c + k] * v[c + k];
    for (; c < C; c++) s[0] += (double)v[c] * v[c];
    return sqrt(lanes_sum(s));
}

/* h[T,C] -> ||h_0|| / mean_{t>=1} ||h_t|| (0 when undefined) */
SIMD_BODY double first_norm_ratio_body(const float *h, int T, int C) {
    if (T < 2) return 0.0;
    double rest = 0.0;
    for (int t = 1; t < T; t++) rest += row_norm(h + (size_t)t * C, C);
    rest /= (T - 1);
    return rest > 0.0 ? row_norm(h, C) / rest : 0.0;
}
SIMD_KERNEL_RET(, double, first_norm_ratio, (const float *h, int T, int C), (h, T, C))

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median is over the up-to-`window` finite losses just before entry i
 * (fewer at the start of a run); a non-finite loss is divergence, not a
 * spike, and never enters a median. */
int count_spikes(const double *loss, const long long *step, size_t n, long long warmup, int window,
                 double factor, long long *out, int max_out) {
    if (window < 1) return 0;
    double *buf = malloc((size_t)window * sizeof *buf);
    if (!buf) return 0;
    int count = 0;
    for (size_t i = 1; i < n; i++) {
        if (step[i] < warmup || !isfinite(loss[i])) continue;
        int m = 0;
        for (size_t j = i; j > 0 && m < window; j--)
            if (isfinite(loss[j - 1])) buf[m++] = loss[j - 1];
        if (m == 0) continue;
        qsort(buf, (size_t)m, sizeof *buf, cmp_double);
        double med = m % 2 ? buf[m / 2] : 0.5 * (buf[m / 2 - 1] + buf[m / 2]);
        if (loss[i] > factor * med) {
            if (out && count < max_out) out[count] = (long long)i;
            count++;
        }
    }
    free(buf);
    return count;
}

void mean_std(const double *x, int n, double *mean, double *std) {
    double mu = 0.0, ss = 0.0;
    for (int i = 0; i < n; i++) mu += x[i];
    mu = n > 0 ? mu / n : 0.0;
    for (int i = 0; i < n; i++) ss += (x[i] - mu) * (x[i] - mu);
    *mean = mu;
    *std = n > 1 ? sqrt(ss / (n - 1)) : 0.0;
}

/* A[T,T] -> sums over t = 1..T-1 of the row mass sum_{j<=t} A[t,j] and of
 * A[t,0] */
void attention_mass_first(const float *A, int T, double *mass, double *first) {
    double m = 0.0, f = 0.0;
    for (int t = 1; t < T; t++) {
        const float *row = A + (size_t)t * T;
        for (int j = 0; j <= t; j++) m += row[j];
        f += row[0];
    }
    *mass = m;
    *first = f;
}

/* ---- mechanism probes (docs/metrics.md "Mechanism") ---- */

double abs_argmax(const float *x, size_t n, int *idx) {
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
        if (fabsf(x[i]) > fabsf(x[best])) best = i;
    if (idx) *idx = n ? (int)best : -1;
    return n ? fabs((double)x[best]) : 0.0;
}

double median_sort(double *v, size_t n) {
    if (n == 0) return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int token_profile(TokenProfile *out, const float *h, int T, int C, double *scratch) {
    if (T < 1 || C < 1) return -1;
    for (int t = 0; t < T; t++) {
        double s = 0.0;
        for (int i = 0; i < C; i++) s += (double)h[(size_t)t * C + i] * h[(size_t)t * C + i];
        scratch[t] = sqrt(s);
    }
    double norm0 = scratch[0];
    int best = T > 1 ? 1 : -1;
    for (int t = 2; t < T; t++)
        if (abs_argmax(h + (size_t)t * C, (size_t)C, NULL) >
            abs_argmax(h + (size_t)best * C, (size_t)C, NULL))
            best = t;
    double norm_best = best > 0 ? scratch[best] : NAN;
    double med = median_sort(scratch + 1, (size_t)(T - 1));
    out->bos_max = abs_argmax(h, (size_t)C, &out->bos_arg);
    out->bos_ratio = norm0 / med;
    out->tok_pos = best;
    out->tok_max = best > 0 ? abs_argmax(h + (size_t)best * C, (size_t)C, &out->tok_arg) : NAN;
    if (best < 0) out->tok_arg = -1;
    out->tok_ratio = norm_best / med;
    return 0;
}

/* ---- head probes ---- */

void row_norms(float *out, const float *x, int n, int len, size_t stride) {
    for (int i = 0; i < n; i++) {
        const float *r = x + (size_t)i * stride;
        double s = 0.0;
        for (int j = 0; j < len; j++) s += (double)r[j] * r[j];
        out[i] = (float)sqrt(s);
    }
}

void first_rest(const float *v, int T, double *first, double *rest) {
    *first = T > 0 ? v[0] : NAN;
    double s = 0.0;
    for (int t = 1; t < T; t++) s += v[t];
    *rest = T > 1 ? s / (T - 1) : NAN;
}

void gate_first_rest(const float *g, size_t stride, int T, int C, double *first, double *rest) {
    *first = *rest = NAN;
    if (C < 1 || T < 1) return;
    double s0 = 0.0, s1 = 0.0;
    for (int t = 0; t < T; t++) {
        const float *row = g + (size_t)t * stride;
        double s = 0.0;
        for (int c = 0; c < C; c++) s += row[c];
        if (t == 0) s0 = s;
        else s1 += s;
    }
    *first = s0 / C;
    if (T > 1) *rest = s1 / ((double)C * (T - 1));
}

void head_norm_scores(double *out, const float *on, int H, int T) {
    double all = 0.0;
    for (int h = 0; h < H; h++) {
        double s = 0.0;
        for (int t = 0; t < T; t++) s += on[(size_t)h * T + t];
        out[h] = T > 0 ? s / T : NAN;
        all += out[h];
    }
    double mean = H > 0 ? all / H : NAN;
    for (int h = 0; h < H; h++) out[h] = T > 0 && mean > 0.0 ? out[h] / mean : NAN;
}

int head_dormant(DormantRule r, double norm_score, double first_share) {
    if (!isfinite(norm_score) || (r == DORMANT_BY_SINK && !isfinite(first_share))) return -1;
    const int low = norm_score < DORMANT_NORM_THR;
    return r == DORMANT_BY_NORM ? low : low && first_share > DORMANT_SHARE_THR;
}

double effective_rank(const double *s, int n) {
    double sum = 0.0;
    for (int i = 0; i < n; i++) sum += s[i];
    if (n < 1 || !(sum > 0.0)) return NAN;
    double h = 0.0;
    for (int i = 0; i < n; i++) {
        double p = s[i] / sum;
        if (p > 0.0) h -= p * log(p);
    }
    return exp(h);
}

/* The upper triangle R (dh x dh) of the QR factorisation of the d x dh
 * matrix (i, j) -> m(i, j) (transposed when tr), into r. -1 on no memory. */
static int qr_upper(gsl_matrix *r, StridedMat m, int tr, int d, int dh) {
    gsl_matrix *a = gsl_matrix_alloc((size_t)d, (size_t)dh);
    gsl_vector *tau = gsl_vector_alloc((size_t)dh);
    if (!a || !tau) {
        if (a) gsl_matrix_free(a);
        if (tau) gsl_vector_free(tau);
        return -1;
    }
    for (int i = 0; i < d; i++)
        for (int j = 0; j < dh; j++) {
            size_t at =
                tr ? (size_t)j * m.rs + (size_t)i * m.cs : (size_t)i * m.rs + (size_t)j * m.cs;
            gsl_matrix_set(a, (size_t)i, (size_t)j, m.p[at]);
        }
    gsl_linalg_QR_decomp(a, tau);
    for (int i = 0; i < dh; i++)
        for (int j = 0; j < dh; j++)
            gsl_matrix_set(r, (size_t)i, (size_t)j,
                           j >= i ? gsl_matrix_get(a, (size_t)i, (size_t)j) : 0.0);
    gsl_matrix_free(a);
    gsl_vector_free(tau);
    return 0;
}

/* The singular values of ra rb^T (both dh x dh) into s, by GSL's SVD. */
static int product_sv(gsl_vector *s, const gsl_matrix *ra, const gsl_matrix *rb, int dh) {
    gsl_matrix *p = gsl_matrix_alloc((size_t)dh, (size_t)dh);
    gsl_matrix *v = gsl_matrix_alloc((size_t)dh, (size_t)dh);
    gsl_vector *w = gsl_vector_alloc((size_t)dh);
    int rc = p && v && w ? 0 : -1;
    if (rc == 0) {
        gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, ra, rb, 0.0, p);
        gsl_linalg_SV_decomp(p, v, s, w);
    }
    if (p) gsl_matrix_free(p);
    if (v) gsl_matrix_free(v);
    if (w) gsl_vector_free(w);
    return rc;
}

/* 1 when every element of the rows x cols matrix m is finite. */
static int mat_finite(StridedMat m, int rows, int cols) {
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            if (!isfinite(m.p[(size_t)i * m.rs + (size_t)j * m.cs])) return 0;
    return 1;
}

double ov_effective_rank(StridedMat V, StridedMat O, int d, int dh) {
    if (dh < 1 || dh > d || !mat_finite(V, dh, d) || !mat_finite(O, d, dh)) return NAN;
    gsl_error_handler_t *prev = gsl_set_error_handler_off(); /* report, never abort */
    gsl_matrix *ra = gsl_matrix_alloc((size_t)dh, (size_t)dh);
    gsl_matrix *rb = gsl_matrix_alloc((size_t)dh, (size_t)dh);
    gsl_vector *s = gsl_vector_alloc((size_t)dh);
    double r = NAN;
    /* O V = Q_O R_O R_V^T Q_V^T, with O = Q_O R_O and V^T = Q_V R_V */
    if (ra && rb && s && qr_upper(ra, O, 0, d, dh) == 0 && qr_upper(rb, V, 1, d, dh) == 0 &&
        product_sv(s, ra, rb, dh) == 0)
        r = effective_rank(gsl_vector_const_ptr(s, 0), dh);
    gsl_set_error_handler(prev);
    if (ra) gsl_matrix_free(ra);
    if (rb) gsl_matrix_free(rb);
    if (s) gsl_vector_free(s);
    return r;
}
