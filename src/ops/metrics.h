/* metrics.h: the metrics of docs/metrics.md as pure functions
 * over arrays. No I/O, no trainer internals: the trainer's probes and the
 * analysis tools both call these, so a number means the same everywhere. */
#ifndef GATELAB_METRICS_H
#define GATELAB_METRICS_H

#include <stddef.h>

/* Uniform causal attention's first-token share, (H_T - 1) / (T - 1). */
double uniform_first_share(int T);
/* The same under a sliding window of W keys, with `slots` extra slots in
 * every row (docs/metrics.md): query t sees token 0 only while t < W and
 * spreads its weight over its min(t+1, W) keys and the slots, so
 * sum_{t=1}^{m-1} 1/(t+1+slots) / (T - 1) with m = min(W, T); W <= 0 is
 * full causal attention, and slots 0 gives (H_m - 1) / (T - 1). */
double uniform_first_share_window(int T, int W, int slots);
/* Uniform attention's alpha_0 over the first len queries under a sliding
 * window of W keys and `slots` slots: query t gives token 0 the weight
 * 1/(t+1+slots) while t < W, else none, so (H_{m+slots} - H_slots) / len
 * with m = min(W, len); W <= 0 is full causal attention. */
double uniform_alpha0_window(int len, int W, int slots);
/* The slots the uniform reference counts: the model's slots (sink tokens,
 * a null key, a sink logit: `slots` of them) where the measured rows leave
 * their share outside the real tokens, 0 where the Gu et al. proxy
 * renormalises the map over the real tokens alone (proxy). The one
 * definition: every uniform reference takes its slots from it. */
int uniform_slots(int slots, int proxy);
/* The mean over L layers of uniform_first_share_window(T, win[l],
 * slots[l]) and of uniform_alpha0_window(len, win[l], slots[l]), layer l
 * weighted by its query heads heads[l]: the uniform reference of a model
 * whose layer l sees win[l] keys (0: all) and slots[l] extra slots (each
 * a uniform_slots count), weighted as F-Attn and the sink rate average
 * over every present head. win NULL: full causal attention on every
 * layer; slots NULL: no slots; heads NULL: every layer the same weight
 * (the same heads); L < 1: one full causal layer without slots. NaN when
 * the weights sum to 0. */
double uniform_share_layers(const int *win, const int *slots, const int *heads, int L, int T);
double uniform_alpha0_layers(const int *win, const int *slots, const int *heads, int L, int len);

/* The mean loss over positions T..L-1 of a length-L evaluation, from its
 * per-bucket means bucket[n] (bucket k: positions k*T .. min((k+1)*T, L)-1),
 * each weighted by its width: the mean over those positions when every
 * position is scored as often (eval's windows). NaN when L <= T. */
double loss_beyond(const double *bucket, int n, int L, int T);

/* Exact match of n predicted tokens: 1 when each row i of logits[n, V]
 * has its strict maximum at targets[i] (a tie is a miss), else 0. Under
 * teacher forcing this is greedy decoding reproducing the targets. */
int exact_match(const float *logits, int V, const int *targets, int n);

/* The needle task's value (data.h data_needle_batch): NEEDLE_VAL_LEN
 * uniform random symbols of NEEDLE_VAL_SYMBOLS (the decimal digits),
 * scored by exact_match. A model that knows the value is digits but not
 * which matches it with probability needle_chance() =
 * NEEDLE_VAL_SYMBOLS^-NEEDLE_VAL_LEN (1e-4): retrieval means above that. */
#define NEEDLE_VAL_LEN 4
#define NEEDLE_VAL_SYMBOLS 10
double needle_chance(void);

/* First-token share of one head's map A[T,T]: mean over t = 1..T-1 of
 * A[t,0]. */
double first_token_share(const float *A, int T);

/* The same from the first column col[T] (A[t,0]) alone. */
double first_share_from_col(const float *col, int T);

/* alpha_k = mean over queries t >= k of A[t,k] (one head, map [T,T]). */
double alpha_k(const float *A, int T, int k);

/* Same from a first column col[T] (A[t,0]), over the first `len` queries:
 * mean over t = 0..len-1 of col[t]. */
double alpha0_from_col(const float *col, int len);

/* ---- attention sinks (docs/metrics.md "Sink rate" and "Sink formed") ---- */

/* Gu et al.'s threshold: a head sinks on a sequence when its alpha_0 > SINK_EPS.
 * The one definition of it: a name or text that carries it is formatted
 * from it ("%g") or built from SINK_EPS_TEXT, its literal as a string
 * ("0.3"; the literal is written as "%g" prints it, which test_metrics
 * checks). SINK_EPS_LOW and SINK_EPS_MID are the lower thresholds the
 * report and `gatelab sinks` also give. */
#define SINK_EPS 0.3
#define SINK_EPS_LOW 0.1
#define SINK_EPS_MID 0.2
#define SINK_STR_(x) #x
#define SINK_STR(x) SINK_STR_(x)
#define SINK_EPS_TEXT SINK_STR(SINK_EPS)
/* alpha_0 averages over the first SINK_LEN queries: Gu et al.'s probe length. */
#define SINK_LEN 64

/* Sink rate: the fraction of the n first columns cols[i*T .. i*T+T) (one per
 * sequence, layer and head; col[t] = A[t,0]) whose alpha0_from_col over the
 * first min(len, T) queries exceeds eps. NaN when n = 0 or T < 1. The one
 * definition of the sink rate: every command, plot and report calls it. */
double sink_rate(const float *cols, size_t n, int T, int len, double eps);

/* A run formed a sink when its F-Attn exceeds SINK_FORMED_FACTOR times the
 * share `uniform` of uniform attention under its own attention pattern at
 * its probe length (runstats.h rs_uniform_share: uniform_first_share(T)
 * under full causal attention). The one definition of "this seed formed a
 * sink": 1, 0, or -1 when f_attn is not finite. */
#define SINK_FORMED_FACTOR 2.0
int sink_formed(double f_attn, double uniform);

/* Over the queries t = 1..T-1 of one map A[T,T]: *mass = the sum of the
 * row masses sum_{j<=t} A[t,j], *first = the sum of A[t,0]. A row of a
 * normaliser that may drop mass (softpick, clipped softmax, a sink slot)
 * has mass below 1; an empty row has mass 0. */
void attention_mass_first(const float *A, int T, double *mass, double *first);

/* Gu et al. proxy, in place on one map A[T,T]: row t becomes |a|/sum|a|
 * over its visible keys (rows summing to 0 stay 0). */
void attention_proxy(float *A, int T);

/* Mean attention entropy of a head, over rows t = 1..T-1 (nats). */
double attention_entropy(const float *A, int T);

/* Histogram of x[n] over [lo, hi] into nbins (values outside are clamped
 * into the end bins); counts added to hist[nbins]. */
void histogram_add(double *hist, int nbins, double lo, double hi, const float *x, size_t n);

/* Fraction of x[n] strictly below each of nthr thresholds. */
void fraction_below(double *out, const double *thr, int nthr, const float *x, size_t n);

/* Statistics of |x| for one block output h[T, C]. */
double abs_max(const float *x, size_t n);
/* Median of |x|; scratch[n] is overwritten. */
double abs_median(const float *x, size_t n, float *scratch);
/* Top-k of |x| in descending order into out[k]. */
void abs_topk(double *out, int k, const float *x, size_t n);
/* Massive activations (Sun et al. 2024; docs/metrics.md "Massive
 * activations"): an entry of one block output is massive when its |h|
 * exceeds both MACT_ABS_MIN and MACT_MEDIAN_RATIO times the median |h| of
 * that output. massive_threshold returns max(abs_min, ratio * median |x|)
 * over x[n] (the defaults are those constants); scratch[n] is
 * overwritten. |h| > the threshold is massive. */
#define MACT_ABS_MIN 100.0
#define MACT_MEDIAN_RATIO 1000.0
double massive_threshold(const float *x, size_t n, double abs_min, double ratio, float *scratch);
/* The same cut from a known median |h|: max(abs_min, ratio * median). */
double massive_cut(double median_abs, double abs_min, double ratio);
/* mean((x - mu)^4) / (sigma^4 + 1e-6) over all n values. */
double kurtosis(const float *x, size_t n);
/* ||h_0|| / mean_{t != 0} ||h_t|| for h[T, C]. */
double first_norm_ratio(const float *h, int T, int C);

/* The window of the spike rule: the median of the previous 50 losses
 * (docs/metrics.md). */
#define SPIKE_WINDOW 50

/* Loss spikes: steps s >= warmup whose loss exceeds factor * median of the
 * previous `window` losses (SPIKE_WINDOW). Writes up to max_out indices of spiking entries
 * into out (may be NULL); returns the count. */
int count_spikes(const double *loss, const long long *step, size_t n, long long warmup, int window,
                 double factor, long long *out, int max_out);

/* Mean and sample standard deviation of x[n] (std 0 when n < 2). */
void mean_std(const double *x, int n, double *mean, double *std);

/* ---- mechanism probes (docs/metrics.md "Mechanism") ---- */

/* max |x| over x[n] and, in *idx (may be NULL), its index (the first on
 * ties; -1 when n == 0). */
double abs_argmax(const float *x, size_t n, int *idx);
/* Median of v[n], sorting v in place (NaN when n == 0). */
double median_sort(double *v, size_t n);

/* Position 0 and the largest later token of one residual stream h[T, C].
 * "Largest" = the t >= 1 with the largest max |h_t| (earliest on ties).
 * Norms are Euclidean over C; med = median over t >= 1 of ||h_t||. */
typedef struct {
    double bos_max;   /* max |h_0| */
    int bos_arg;      /* its feature index */
    double bos_ratio; /* ||h_0|| / med */
    int tok_pos;      /* the largest token's position (-1 when T == 1) */
    double tok_max;   /* its max |h| (NaN when T == 1) */
    int tok_arg;      /* its feature index (-1 when T == 1) */
    double tok_ratio; /* its ||h|| / med (NaN when T == 1) */
} TokenProfile;
/* scratch[T] is overwritten. -1 when T < 1 or C < 1. */
int token_profile(TokenProfile *out, const float *h, int T, int C, double *scratch);

/* ---- head probes (docs/metrics.md "Head probes") ---- */

/* out[i] = Euclidean norm of row i of x (n rows of len floats, row i at
 * x + i * stride). */
void row_norms(float *out, const float *x, int n, int len, size_t stride);

/* The first position against the rest of a per-position profile v[T]:
 * *first = v[0], *rest = mean over t >= 1 of v[t] (NaN when T < 2). */
void first_rest(const float *v, int T, double *first, double *rest);

/* Mean gate score of position 0 and of positions t >= 1 over C channels:
 * row t of the activated scores at g + t * stride. *rest is NaN when
 * T < 2, both NaN when C < 1. */
void gate_first_rest(const float *g, size_t stride, int T, int C, double *first, double *rest);

/* Dormant heads: two declared rules (docs/metrics.md "Dormant heads"). A
 * head's output-norm score is its mean over positions of ||o_t|| over the
 * mean of the same over the layer's heads. By the output-norm rule (the
 * criterion of Sandoval-Segura et al., who find that sink-based criteria
 * miss inactive heads) the head is dormant when that score is below
 * DORMANT_NORM_THR; by the sink rule, when besides its first-token share
 * exceeds DORMANT_SHARE_THR. */
#define DORMANT_NORM_THR 0.5
#define DORMANT_SHARE_THR SINK_EPS
typedef enum {
    DORMANT_BY_SINK = 0, /* low output norm and a first-token sink */
    DORMANT_BY_NORM = 1  /* low output norm alone */
} DormantRule;

/* out[h] = head h's output-norm score from on[H, T] (||o_t|| per head and
 * position): NaN for every head when the layer's mean is 0 or T < 1. */
void head_norm_scores(double *out, const float *on, int H, int T);

/* The class of a head by rule r: 1 dormant, 0 active, -1 when a score the
 * rule reads is not finite (DORMANT_BY_NORM does not read first_share). */
int head_dormant(DormantRule r, double norm_score, double first_share);

/* Effective rank (Roy & Vetterli 2007): exp of the Shannon entropy of
 * p_i = s_i / sum s over the singular values s[n] (s_i >= 0; zeros add
 * nothing). NaN when n < 1 or the sum is not positive. */
double effective_rank(const double *s, int n);

/* A matrix read through strides: element (i, j) at p[i * rs + j * cs]. */
typedef struct {
    const float *p;
    size_t rs, cs;
} StridedMat;

/* effective_rank of the d x d product O V of one head: V (dh x d) maps the
 * residual to the head's values, O (d x dh) maps its output back. The
 * singular values are those of R_O R_V^T from the QR factors of O and V^T
 * (GSL's QR and SVD). NaN when dh > d, dh < 1 or memory runs out. */
double ov_effective_rank(StridedMat V, StridedMat O, int d, int dh);

#endif
