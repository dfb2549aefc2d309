/* probe_reduce.c: a probe's reductions, layer by layer (probe_reduce.h). */
#include "probe_reduce.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "parallel.h"
#include "util.h"

#define GATE_SAMPLE_SEQS 2
#define GATE_SAMPLE_MAX ((size_t)8 << 20) /* floats; larger samples keep fewer sequences */

void probe_acc_free(ProbeAcc *a) {
    void *all[] = {a->tokens,    a->attention, a->slot,      a->first_col,   a->alpha0,
                   a->row_empty, a->first_ne,  a->ne_count,  a->gate_sample, a->hist,
                   a->chan_sum,  a->below,     a->stats,     a->h_max,       a->h_med,
                   a->h_top3,    a->h_kurt,    a->h_ratio,   a->bos_max,     a->bos_ratio,
                   a->tok_max,   a->tok_ratio, a->norms,     a->bos_arg,     a->tok_arg,
                   a->bos_votes, a->tok_votes, a->max_logit, a->scratch,     a->key_alpha,
                   a->bos_cos,   a->resid,     a->k_norm,    a->v_norm,      a->o_norm,
                   a->g_first,   a->g_rest,    a->ov_erank,  a->rownorm};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) free(all[i]);
    memset(a, 0, sizeof *a);
}

static double *dalloc(size_t n) { return calloc(n ? n : 1, sizeof(double)); }

int probe_acc_max_logit(ProbeAcc *a, int l, double v) {
    if (!a->max_logit && !(a->max_logit = dalloc((size_t)a->s.L))) return -1;
    if (v > a->max_logit[l]) a->max_logit[l] = v;
    return 0;
}
static int *ialloc(size_t n) { return calloc(n ? n : 1, sizeof(int)); }

int probe_acc_ov_erank(ProbeAcc *a, int l, int h, double v) {
    const size_t LH = (size_t)a->s.L * a->s.H;
    if (!a->ov_erank && !(a->ov_erank = dalloc(LH))) return -1;
    a->ov_erank[(size_t)l * a->s.H + h] = v;
    return 0;
}

/* Sequences whose gate scores are kept: up to GATE_SAMPLE_SEQS, fewer
 * when they would pass GATE_SAMPLE_MAX floats. */
static int gate_sample_seqs(const ProbeShape *s) {
    int n = s->N < GATE_SAMPLE_SEQS ? s->N : GATE_SAMPLE_SEQS;
    while (n > 0 && (size_t)s->L * n * s->T * s->C > GATE_SAMPLE_MAX) n--;
    return s->C > 0 ? n : 0;
}

/* The gate arrays; stats start at +inf / -inf for min / max. */
static int init_gates(ProbeAcc *a) {
    const size_t L = (size_t)a->s.L, C = (size_t)a->s.C;
    a->Ns = gate_sample_seqs(&a->s);
    if (a->Ns) a->gate_sample = falloc(L * a->Ns * a->s.T * C);
    a->hist = dalloc(L * RS_GATE_BINS), a->chan_sum = dalloc(L * C);
    a->below = dalloc(L * RS_GATE_NBELOW), a->stats = dalloc(L * RS_GATE_NSTATS);
    a->g_first = dalloc(L), a->g_rest = dalloc(L);
    if ((a->Ns && !a->gate_sample) || !a->hist || !a->chan_sum || !a->below || !a->stats ||
        !a->g_first || !a->g_rest)
        return -1;
    for (size_t l = 0; l < L; l++) {
        a->stats[l * RS_GATE_NSTATS + 1] = INFINITY;
        a->stats[l * RS_GATE_NSTATS + 2] = -INFINITY;
    }
    return 0;
}

int probe_acc_init(ProbeAcc *a, const ProbeShape *s) {
    memset(a, 0, sizeof *a);
    a->s = *s;
    const size_t L = (size_t)s->L, LH = L * s->H, T = (size_t)s->T, d = (size_t)s->d;
    a->tokens = ialloc((size_t)s->N * T);
    a->attention = falloc(LH * s->M * s->M);
    a->slot = s->has_slot ? falloc(LH * T) : NULL;
    a->first_col = falloc((size_t)s->N * LH * T);
    a->alpha0 = falloc(LH), a->row_empty = falloc(LH), a->first_ne = falloc(LH);
    a->ne_count = falloc(LH);
    a->h_max = dalloc(L), a->h_med = dalloc(L), a->h_top3 = dalloc(3 * L);
    a->h_kurt = dalloc(L), a->h_ratio = dalloc(L);
    a->bos_max = dalloc(L), a->bos_ratio = dalloc(L), a->tok_max = dalloc(L);
    a->tok_ratio = dalloc(L), a->norms = dalloc(T);
    a->bos_arg = ialloc(L), a->tok_arg = ialloc(L);
    a->bos_votes = ialloc(L * d), a->tok_votes = ialloc(L * d);
    a->scratch = falloc(T * d);
    a->k_norm = falloc(LH * T), a->v_norm = falloc(LH * T), a->o_norm = falloc(LH * T);
    a->rownorm = falloc(T);
    int ok = a->k_norm && a->v_norm && a->o_norm && a->rownorm && a->tokens && a->attention &&
             (a->slot || !s->has_slot) && a->first_col && a->alpha0 && a->row_empty &&
             a->first_ne && a->ne_count && a->h_max && a->h_med && a->h_top3 && a->h_kurt &&
             a->h_ratio && a->bos_max && a->bos_ratio && a->tok_max && a->tok_ratio && a->norms &&
             a->bos_arg && a->tok_arg && a->bos_votes && a->tok_votes && a->scratch &&
             (s->C == 0 || init_gates(a) == 0) && probe_sinks_init(a) == 0;
    if (!ok) probe_acc_free(a);
    return ok ? 0 : -1;
}

size_t probe_acc_bytes(const ProbeShape *s) {
    if (s->N <= 0) return 0;
    double LH = (double)s->L * s->H, n = s->N, t = s->T, L = s->L, d = s->d;
    double f = LH * s->M * s->M + LH * t + n * LH * t + 4.0 * LH + t * d; /* floats */
    f += 3.0 * LH * t + 2.0 * t; /* head probes: key, value, output norms; a row's norms */
    f += (double)s->L * gate_sample_seqs(s) * t * s->C;
    double b = 4.0 * f + 4.0 * n * t + 8.0 * L * (64.0 + RS_GATE_BINS + s->C);
    b += 8.0 * (2.0 * L + LH);        /* gate at position 0 and after, W_V W_O ranks */
    b += 8.0 * t + 2.0 * 4.0 * L * d; /* token profile: norms, feature votes */
    b += (double)probe_sinks_bytes(s);
    return b >= (double)(SIZE_MAX / 8) ? SIZE_MAX / 8 : (size_t)b;
}

/* Rows t >= 1 of head h's map: the empty ones (count) and the first-token
 * weight of the others (sum), for row_empty / first_share_nonempty. */
static void add_empty(ProbeAcc *a, const ProbeLayer *pl, int h, size_t lh) {
    const int T = pl->T;
    const float *col = pl->first_col + (size_t)h * T;
    for (int t = 1; t < T; t++) {
        double m = 1.0;
        if (!a->s.rows_normalised) {
            const float *row = pl->maps + ((size_t)h * pl->M + t) * pl->M;
            m = 0.0;
            for (int j = 0; j <= t; j++) m += row[j];
        }
        if (m <= 1e-9) a->row_empty[lh] += 1.0f;
        else a->first_ne[lh] += col[t], a->ne_count[lh] += 1.0f;
    }
}

static void add_attention(ProbeAcc *a, int seq, const ProbeLayer *pl) {
    const int T = pl->T, H = pl->H, N = a->s.N;
    const size_t MM = (size_t)pl->M * pl->M;
    for (int h = 0; h < H; h++) {
        const size_t lh = (size_t)pl->layer * H + h;
        const float *map = pl->maps + (size_t)h * MM, *col = pl->first_col + (size_t)h * T;
        if (a->slot && pl->slot) {
            float *acc = a->slot + lh * T;
            for (int t = 0; t < T; t++) acc[t] += pl->slot[(size_t)h * T + t];
        }
        float *mean = a->attention + lh * MM;
        for (size_t i = 0; i < MM; i++) mean[i] += map[i] / (float)N;
        memcpy(a->first_col + (((size_t)seq * a->s.L + pl->layer) * H + h) * T, col,
               (size_t)T * sizeof(float));
        a->alpha0[lh] += (float)(alpha0_from_col(col, T) / N);
        add_empty(a, pl, h, lh);
        probe_sinks_head(a, seq, pl, h);
    }
}

static void add_gates(ProbeAcc *a, int seq, const ProbeLayer *pl) {
    const int C = pl->C, T = pl->T, l = pl->layer;
    double *st = a->stats + l * RS_GATE_NSTATS;
    for (int t = 0; t < T; t++) {
        const float *row = pl->gates + (size_t)t * pl->gate_stride;
        histogram_add(a->hist + (size_t)l * RS_GATE_BINS, RS_GATE_BINS, 0.0, 1.0, row, (size_t)C);
        double below[RS_GATE_NBELOW];
        fraction_below(below, RS_GATE_BELOW_THR, RS_GATE_NBELOW, row, (size_t)C);
        for (int k = 0; k < RS_GATE_NBELOW; k++) a->below[l * RS_GATE_NBELOW + k] += below[k] * C;
        for (int c = 0; c < C; c++) {
            a->chan_sum[(size_t)l * C + c] += row[c];
            st[0] += row[c];
            if (row[c] < st[1]) st[1] = row[c];
            if (row[c] > st[2]) st[2] = row[c];
        }
        st[3] += C;
        if (seq < a->Ns)
            memcpy(a->gate_sample + (((size_t)l * a->Ns + seq) * T + t) * C, row,
                   (size_t)C * sizeof(float));
    }
}

/* Add the norms of one head's rows (row t at x + t * stride, len floats)
 * to sum[T]. */
static void add_norms(float *sum, float *norms, const float *x, int T, int len, size_t stride) {
    row_norms(norms, x, T, len, stride);
    for (int t = 0; t < T; t++) sum[t] += norms[t];
}

/* Key, value and head output norms per head and position, the gate at
 * position 0 and after: each only when the source exposes it. */
static void add_heads(ProbeAcc *a, const ProbeLayer *pl) {
    const int T = pl->T, H = pl->H, dh = pl->dh;
    const size_t base = (size_t)pl->layer * H * T;
    for (int h = 0; pl->Hkv > 0 && h < H; h++) {
        const size_t g = (size_t)(h * pl->Hkv / H) * dh, at = base + (size_t)h * T;
        if (pl->keys) add_norms(a->k_norm + at, a->rownorm, pl->keys + g, T, dh, pl->kv_stride);
        if (pl->values) add_norms(a->v_norm + at, a->rownorm, pl->values + g, T, dh, pl->kv_stride);
    }
    for (int h = 0; pl->heads_out && h < H; h++)
        add_norms(a->o_norm + base + (size_t)h * T, a->rownorm, pl->heads_out + (size_t)h * dh, T,
                  dh, pl->out_stride);
    a->k_fed += pl->keys && pl->Hkv > 0, a->v_fed += pl->values && pl->Hkv > 0;
    a->o_fed += pl->heads_out != NULL;
    if (a->s.C && pl->gates) {
        double f, r;
        gate_first_rest(pl->gates, (size_t)pl->gate_stride, T, pl->C, &f, &r);
        a->g_first[pl->layer] += f, a->g_rest[pl->layer] += r;
        a->g_fed++;
    }
}

/* The hidden-state statistics but the median and the token profile. */
static void add_hidden(ProbeAcc *a, const ProbeLayer *pl) {
    const int T = pl->T, d = pl->d, l = pl->layer;
    const size_t n = (size_t)T * d;
    const double N = a->s.N;
    double top[3];
    abs_topk(top, 3, pl->hidden, n); /* top[0] is max |h| (abs_max): no pass of its own */
    a->h_max[l] += top[0] / N;
    for (int k = 0; k < 3; k++) a->h_top3[l * 3 + k] += top[k] / N;
    a->h_kurt[l] += kurtosis(pl->hidden, n) / N;
    a->h_ratio[l] += first_norm_ratio(pl->hidden, T, d) / N;
}

/* The median of |hidden|, the token profile (bos_* and tok_*), and the
 * hidden-state measures beyond position 0 of sequence seq. */
static void add_median_profile(ProbeAcc *a, int seq, const ProbeLayer *pl) {
    const int T = pl->T, d = pl->d, l = pl->layer;
    const double N = a->s.N, med = abs_median(pl->hidden, (size_t)T * d, a->scratch);
    a->h_med[l] += med / N;
    probe_sinks_hidden(a, seq, pl, med);
    TokenProfile tp;
    token_profile(&tp, pl->hidden, T, d, a->norms);
    a->bos_max[l] += tp.bos_max / N;
    a->bos_ratio[l] += tp.bos_ratio / N;
    a->tok_max[l] += tp.tok_max / N;
    a->tok_ratio[l] += tp.tok_ratio / N;
    a->bos_votes[(size_t)l * d + tp.bos_arg]++;
    if (tp.tok_arg >= 0) a->tok_votes[(size_t)l * d + tp.tok_arg]++;
}

typedef struct {
    ProbeAcc *a;
    int seq;
    const ProbeLayer *pl;
} LayerJob;

/* Part 0: the median of |hidden| and the token profile; part 1:
 * everything else. The parts write disjoint sums, so the result does not
 * depend on the threads. */
static void layer_parts(void *ctx, size_t i0, size_t i1) {
    const LayerJob *j = ctx;
    const ProbeLayer *pl = j->pl;
    for (size_t i = i0; i < i1; i++) {
        if (i == 0) {
            add_median_profile(j->a, j->seq, pl);
            continue;
        }
        add_attention(j->a, j->seq, pl);
        if (j->a->s.C && pl->gates) add_gates(j->a, j->seq, pl);
        add_hidden(j->a, pl);
        add_heads(j->a, pl);
    }
}

void probe_acc_layer(ProbeAcc *a, int seq, const ProbeLayer *pl) {
    LayerJob j = {a, seq, pl};
    parallel_for(a->s.threads, 2, layer_parts, &j);
}

void probe_acc_feed(void *acc, const ProbeLayer *pl) {
    ProbeAcc *a = acc;
    probe_acc_layer(a, a->seq, pl);
}

/* The most frequent index of votes[d] (smallest on ties; -1 when none). */
static int vote_mode(const int *votes, int d) {
    int best = 0;
    for (int i = 1; i < d; i++)
        if (votes[i] > votes[best]) best = i;
    return votes[best] > 0 ? best : -1;
}

/* Norm sums into means over sequences; an array some (layer, sequence)
 * did not feed is dropped (absent, not zero). */
static void head_means(ProbeAcc *a) {
    const ProbeShape *s = &a->s;
    const long long want = (long long)s->L * s->N;
    float **arr[3] = {&a->k_norm, &a->v_norm, &a->o_norm};
    const long long fed[3] = {a->k_fed, a->v_fed, a->o_fed};
    for (int i = 0; i < 3; i++) {
        if (fed[i] != want || want == 0) {
            free(*arr[i]);
            *arr[i] = NULL;
            continue;
        }
        for (size_t k = 0; k < (size_t)s->L * s->H * s->T; k++) (*arr[i])[k] /= (float)s->N;
    }
    if (a->g_fed != want || want == 0) {
        free(a->g_first), free(a->g_rest);
        a->g_first = a->g_rest = NULL;
    }
    for (int l = 0; a->g_first && l < s->L; l++) a->g_first[l] /= s->N, a->g_rest[l] /= s->N;
}

/* Turn sums into the means the run file stores. */
static void acc_means(ProbeAcc *a) {
    const ProbeShape *s = &a->s;
    for (size_t i = 0; a->slot && i < (size_t)s->L * s->H * s->T; i++) a->slot[i] /= (float)s->N;
    for (size_t lh = 0; lh < (size_t)s->L * s->H; lh++) {
        a->first_ne[lh] = a->ne_count[lh] > 0 ? a->first_ne[lh] / a->ne_count[lh] : NAN;
        a->row_empty[lh] /= (float)s->N * (float)(s->T > 1 ? s->T - 1 : 1);
    }
    for (int l = 0; l < s->L; l++) {
        a->bos_arg[l] = vote_mode(a->bos_votes + (size_t)l * s->d, s->d);
        a->tok_arg[l] = vote_mode(a->tok_votes + (size_t)l * s->d, s->d);
    }
    head_means(a);
    for (int l = 0; s->C && l < s->L; l++) {
        double *st = a->stats + l * RS_GATE_NSTATS, cnt = st[3] > 0 ? st[3] : 1.0;
        double per_chan = cnt / s->C;
        for (int c = 0; c < s->C; c++) a->chan_sum[(size_t)l * s->C + c] /= per_chan;
        for (int k = 0; k < RS_GATE_NBELOW; k++) a->below[l * RS_GATE_NBELOW + k] /= cnt;
        st[0] /= cnt;
    }
}

void probe_acc_finish(ProbeAcc *a, ProbeRecord *out) {
    acc_means(a);
    memset(out, 0, sizeof *out);
    out->L = a->s.L, out->H = a->s.H, out->N = a->s.N, out->T = a->s.T, out->M = a->s.M;
    out->tokens = a->tokens, out->attention = a->attention, out->attention_slot = a->slot;
    out->first_col = a->first_col, out->alpha0 = a->alpha0;
    out->row_empty = a->row_empty, out->first_nonempty = a->first_ne;
    out->gate_channels = a->s.C, out->has_gate = a->s.C > 0;
    out->gate_sample = a->gate_sample, out->gate_sample_n = a->Ns;
    out->gate_hist = a->hist, out->gate_channel_mean = a->chan_sum;
    out->gate_below = a->below, out->gate_stats = a->stats;
    out->h_max = a->h_max, out->h_median = a->h_med, out->h_top3 = a->h_top3;
    out->h_kurtosis = a->h_kurt, out->h_norm_ratio = a->h_ratio;
    out->bos_max = a->bos_max, out->bos_argmax = a->bos_arg, out->bos_norm_ratio = a->bos_ratio;
    out->tok_max = a->tok_max, out->tok_argmax = a->tok_arg, out->tok_norm_ratio = a->tok_ratio;
    out->max_logit = a->max_logit;
    a->max_logit = NULL;
    probe_sinks_finish(a, out);
    out->key_norm = a->k_norm, out->value_norm = a->v_norm, out->head_out_norm = a->o_norm;
    out->gate_first = a->g_first, out->gate_rest = a->g_rest, out->ov_erank = a->ov_erank;
    a->k_norm = NULL, a->v_norm = NULL, a->o_norm = NULL, a->g_first = NULL, a->g_rest = NULL;
    a->ov_erank = NULL;
    a->tokens = NULL, a->attention = NULL, a->slot = NULL, a->first_col = NULL, a->alpha0 = NULL;
    a->row_empty = NULL, a->first_ne = NULL, a->gate_sample = NULL, a->hist = NULL;
    a->chan_sum = NULL, a->below = NULL, a->stats = NULL, a->h_max = NULL, a->h_med = NULL;
    a->h_top3 = NULL, a->h_kurt = NULL, a->h_ratio = NULL, a->bos_max = NULL, a->bos_arg = NULL;
    a->bos_ratio = NULL, a->tok_max = NULL, a->tok_arg = NULL, a->tok_ratio = NULL;
}
