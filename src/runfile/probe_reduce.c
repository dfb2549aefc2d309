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

/* When the plan allocates each record array: one PA_WHEN_<member> per
 * RS_PROBE_ARRAYS entry, so an entry added without one does not compile.
 * PA_INIT: always, by probe_acc_init; PA_SLOT: when the shape keeps the
 * slot; PA_HEADS: when its layers' query heads differ (layer_heads); PA_LAYER_SLOTS: when its
 * layers' slots differ (layer_slots); PA_GATE: when it has gate channels; PA_SAMPLE: when it
 * samples gate sequences; PA_ON_CALL: by the first call that sets it (probe_acc_ov_erank);
 * PA_ON_LOGIT: the same, for a shape whose source exposes its logits (has_logits:
 * probe_acc_max_logit); PA_CALLER: never, the record's caller computes it. */
enum {
    PA_INIT,
    PA_SLOT,
    PA_GATE,
    PA_SAMPLE,
    PA_HEADS,
    PA_LAYER_SLOTS,
    PA_ON_CALL,
    PA_ON_LOGIT,
    PA_CALLER
};
#define PA_WHEN_attention PA_INIT
#define PA_WHEN_first_col PA_INIT
#define PA_WHEN_tokens PA_INIT
#define PA_WHEN_alpha0 PA_INIT
#define PA_WHEN_attention_slot PA_SLOT
#define PA_WHEN_row_empty PA_INIT
#define PA_WHEN_first_nonempty PA_INIT
#define PA_WHEN_gate_channel_mean PA_GATE
#define PA_WHEN_gate_hist PA_GATE
#define PA_WHEN_gate_below PA_GATE
#define PA_WHEN_gate_stats PA_GATE
#define PA_WHEN_gate_sample PA_SAMPLE
#define PA_WHEN_h_max PA_INIT
#define PA_WHEN_h_median PA_INIT
#define PA_WHEN_h_top3 PA_INIT
#define PA_WHEN_h_kurtosis PA_INIT
#define PA_WHEN_h_norm_ratio PA_INIT
#define PA_WHEN_bos_max PA_INIT
#define PA_WHEN_bos_argmax PA_INIT
#define PA_WHEN_bos_norm_ratio PA_INIT
#define PA_WHEN_tok_max PA_INIT
#define PA_WHEN_tok_argmax PA_INIT
#define PA_WHEN_tok_norm_ratio PA_INIT
#define PA_WHEN_max_logit PA_ON_LOGIT
#define PA_WHEN_key_alpha PA_INIT
#define PA_WHEN_bos_cosine PA_INIT
#define PA_WHEN_resid_share PA_INIT
#define PA_WHEN_key_norm PA_INIT
#define PA_WHEN_value_norm PA_INIT
#define PA_WHEN_head_out_norm PA_INIT
#define PA_WHEN_gate_first PA_GATE
#define PA_WHEN_gate_rest PA_GATE
#define PA_WHEN_ov_erank PA_ON_CALL
#define PA_WHEN_grad_in_norm PA_CALLER
#define PA_WHEN_targets PA_CALLER
#define PA_WHEN_gate_w_norm PA_CALLER
#define PA_WHEN_layer_heads PA_HEADS
#define PA_WHEN_layer_slots PA_LAYER_SLOTS

/* The dims letters of each record array, as RS_PROBE_ARRAYS gives them. */
#define PA_DIMS_FIELD(member, ctype, cls, hid, name, dims, kind, desc) const char *member;
#define PA_DIMS_INIT(member, ctype, cls, hid, name, dims, kind, desc) .member = dims,
static const struct { RS_PROBE_ARRAYS(PA_DIMS_FIELD) } PA_DIMS = {RS_PROBE_ARRAYS(PA_DIMS_INIT)};
#undef PA_DIMS_INIT
#undef PA_DIMS_FIELD

/* Sequences whose gate scores are kept: up to GATE_SAMPLE_SEQS, fewer
 * when they would pass GATE_SAMPLE_MAX floats. */
static int gate_sample_seqs(const ProbeShape *s) {
    int n = s->N < GATE_SAMPLE_SEQS ? s->N : GATE_SAMPLE_SEQS;
    while (n > 0 && (size_t)s->L * n * s->T * s->C > GATE_SAMPLE_MAX) n--;
    return s->C > 0 ? n : 0;
}

/* The size of one dims letter of RS_PROBE_ARRAYS for shape s; 0 for G
 * (the gate heads, which only the caller's arrays use). */
static double plan_dim(const ProbeShape *s, char c) {
    switch (c) {
    case 'L': return s->L;
    case 'H': return s->H;
    case 'T': return s->T;
    case 'P': return s->M;
    case 'N': return s->N;
    case 'C': return s->C;
    case 'S': return gate_sample_seqs(s);
    case 'D': return s->d;
    case 'B': return RS_GATE_BINS;
    case 'K': return RS_GATE_NBELOW;
    case 'M': return RS_GATE_NSTATS;
    case '3': return RS_HIDDEN_TOP;
    default: return 0;
    }
}

/* The elements the plan gives an array of these dims for shape s (at
 * least 1), or -1 when `when` gives it none for this shape. */
static double plan_elems(const ProbeShape *s, int when, const char *dims) {
    if (when == PA_CALLER || (when == PA_SLOT && !s->has_slot) || (when == PA_GATE && !s->C) ||
        (when == PA_HEADS && !s->layer_heads) || (when == PA_LAYER_SLOTS && !s->layer_slots) ||
        (when == PA_ON_LOGIT && !s->has_logits) || (when == PA_SAMPLE && !gate_sample_seqs(s)))
        return -1;
    double n = 1;
    for (const char *c = dims; *c; c++) n *= plan_dim(s, *c);
    return n > 1 ? n : 1;
}

/* An array of these dims (size bytes an element) from plan p (plan.h, a
 * heap plan: each array its own zeroed allocation, handed over one by
 * one): NULL when `when` gives it none, while counting, or when memory
 * runs out (p->failed set). */
static void *plan_give(Plan *p, const ProbeShape *s, int when, const char *dims, size_t size) {
    const double n = plan_elems(s, when, dims);
    if (n < 0) return NULL;
    return plan_take(p, n < (double)PLAN_TOO_MUCH ? (size_t)n : PLAN_TOO_MUCH, size);
}

/* The reducer's one layout: every array the plan gives for a->s, record
 * arrays (by PA_WHEN) and scratch, into a's members. init: only those
 * probe_acc_init allocates (not PA_ON_CALL or PA_ON_LOGIT, which
 * probe_acc_ov_erank and probe_acc_max_logit take on their first call);
 * the count takes all. */
static void acc_plan(ProbeAcc *a, Plan *p, int init) {
#define PA_PLAN_ONE(member, when, dims, ctype)                                                     \
    if (!init || (when != PA_ON_CALL && when != PA_ON_LOGIT))                                      \
        a->member = plan_give(p, &a->s, when, dims, sizeof(ctype));
#define PA_PLAN_RECORD(member, ctype, cls, hid, name, dims, kind, desc)                            \
    PA_PLAN_ONE(member, PA_WHEN_##member, dims, ctype)
#define PA_PLAN_SCRATCH(member, ctype, dims) PA_PLAN_ONE(member, PA_INIT, dims, ctype)
    RS_PROBE_ARRAYS(PA_PLAN_RECORD)
    PROBE_ACC_SCRATCH(PA_PLAN_SCRATCH)
#undef PA_PLAN_SCRATCH
#undef PA_PLAN_RECORD
#undef PA_PLAN_ONE
}

size_t probe_acc_bytes(const ProbeShape *s) {
    if (s->N <= 0) return 0;
    ProbeAcc a = {.s = *s, .plan = plan_counter(PLAN_HEAP)};
    acc_plan(&a, &a.plan, 0);
    return a.plan.used;
}

void probe_acc_free(ProbeAcc *a) {
#define PA_FREE_RECORD(member, ctype, cls, hid, name, dims, kind, desc) free(a->member);
#define PA_FREE_SCRATCH(member, ctype, dims) free(a->member);
    RS_PROBE_ARRAYS(PA_FREE_RECORD)
    PROBE_ACC_SCRATCH(PA_FREE_SCRATCH)
#undef PA_FREE_SCRATCH
#undef PA_FREE_RECORD
    memset(a, 0, sizeof *a);
}

int probe_acc_max_logit(ProbeAcc *a, int l, double v) {
    if (!a->max_logit && !(a->max_logit = plan_give(&a->plan, &a->s, PA_WHEN_max_logit,
                                                    PA_DIMS.max_logit, sizeof *a->max_logit)))
        return -1;
    if (v > a->max_logit[l]) a->max_logit[l] = v;
    return 0;
}

int probe_acc_ov_erank(ProbeAcc *a, int l, int h, double v) {
    if (!a->ov_erank && !(a->ov_erank = plan_give(&a->plan, &a->s, PA_WHEN_ov_erank,
                                                  PA_DIMS.ov_erank, sizeof *a->ov_erank)))
        return -1;
    a->ov_erank[(size_t)l * a->s.H + h] = v;
    return 0;
}

int probe_acc_init(ProbeAcc *a, const ProbeShape *s) {
    memset(a, 0, sizeof *a);
    a->s = *s;
    a->Ns = gate_sample_seqs(s);
    a->plan = plan_heap();
    acc_plan(a, &a->plan, 1);
    if (a->plan.failed) {
        probe_acc_free(a);
        return -1;
    }
    for (int l = 0; a->layer_heads && l < s->L; l++) a->layer_heads[l] = s->layer_heads[l];
    for (int l = 0; a->layer_slots && l < s->L; l++) a->layer_slots[l] = s->layer_slots[l];
    for (size_t l = 0; s->C && l < (size_t)s->L; l++) { /* min / max start at +inf / -inf */
        a->gate_stats[l * RS_GATE_NSTATS + 1] = INFINITY;
        a->gate_stats[l * RS_GATE_NSTATS + 2] = -INFINITY;
    }
    return 0;
}

/* Rows t >= 1 of head h's map: the empty ones (count) and the first-token
 * weight of the others (sum), for row_empty / first_share_nonempty. */
static void add_empty(ProbeAcc *a, const ProbeLayer *pl, int h, size_t lh) {
    const int T = pl->T;
    const float *col = pl->first_col + (size_t)h * T;
    for (int t = 1; t < T; t++) {
        double m = pl->slot ? 1.0 - pl->slot[(size_t)h * T + t] : 1.0; /* less a sink's share */
        if (!a->s.rows_normalised) {
            const float *row = pl->maps + ((size_t)h * pl->M + t) * pl->M;
            m = 0.0;
            for (int j = 0; j <= t; j++) m += row[j];
        }
        if (m <= 1e-9) a->row_empty[lh] += 1.0f;
        else a->first_nonempty[lh] += col[t], a->ne_count[lh] += 1.0f;
    }
}

static void add_attention(ProbeAcc *a, int seq, const ProbeLayer *pl) {
    const int T = pl->T, H = a->s.H, N = a->s.N;
    const size_t MM = (size_t)pl->M * pl->M;
    for (int h = 0; h < pl->H; h++) {
        const size_t lh = (size_t)pl->layer * H + h;
        const float *map = pl->maps + (size_t)h * MM, *col = pl->first_col + (size_t)h * T;
        if (a->attention_slot && pl->slot) {
            float *acc = a->attention_slot + lh * T;
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
    const int C = pl->C, T = pl->T, l = pl->layer, Cs = a->s.C;
    double *st = a->gate_stats + l * RS_GATE_NSTATS;
    for (int t = 0; t < T; t++) {
        const float *row = pl->gates + (size_t)t * pl->gate_stride;
        histogram_add(a->gate_hist + (size_t)l * RS_GATE_BINS, RS_GATE_BINS, 0.0, 1.0, row,
                      (size_t)C);
        double below[RS_GATE_NBELOW];
        fraction_below(below, RS_GATE_BELOW_THR, RS_GATE_NBELOW, row, (size_t)C);
        for (int k = 0; k < RS_GATE_NBELOW; k++)
            a->gate_below[l * RS_GATE_NBELOW + k] += below[k] * C;
        for (int c = 0; c < C; c++) {
            a->gate_channel_mean[(size_t)l * Cs + c] += row[c];
            st[0] += row[c];
            if (row[c] < st[1]) st[1] = row[c];
            if (row[c] > st[2]) st[2] = row[c];
        }
        st[3] += C;
        if (seq < a->Ns)
            memcpy(a->gate_sample + (((size_t)l * a->Ns + seq) * T + t) * Cs, row,
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
    const size_t base = (size_t)pl->layer * a->s.H * T;
    for (int h = 0; pl->Hkv > 0 && h < H; h++) {
        const size_t g = (size_t)(h * pl->Hkv / H) * dh, at = base + (size_t)h * T;
        if (pl->keys) add_norms(a->key_norm + at, a->rownorm, pl->keys + g, T, dh, pl->kv_stride);
        if (pl->values)
            add_norms(a->value_norm + at, a->rownorm, pl->values + g, T, dh, pl->kv_stride);
    }
    for (int h = 0; pl->heads_out && h < H; h++)
        add_norms(a->head_out_norm + base + (size_t)h * T, a->rownorm,
                  pl->heads_out + (size_t)h * dh, T, dh, pl->out_stride);
    a->k_fed += pl->keys && pl->Hkv > 0, a->v_fed += pl->values && pl->Hkv > 0;
    a->o_fed += pl->heads_out != NULL;
    if (a->s.C && pl->gates) {
        double f, r;
        gate_first_rest(pl->gates, (size_t)pl->gate_stride, T, pl->C, &f, &r);
        a->gate_first[pl->layer] += f, a->gate_rest[pl->layer] += r;
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
    a->h_kurtosis[l] += kurtosis(pl->hidden, n) / N;
    a->h_norm_ratio[l] += first_norm_ratio(pl->hidden, T, d) / N;
}

/* The median of |hidden|, the token profile (bos_* and tok_*), and the
 * hidden-state measures beyond position 0 of sequence seq. */
static void add_median_profile(ProbeAcc *a, int seq, const ProbeLayer *pl) {
    const int T = pl->T, d = pl->d, l = pl->layer;
    const double N = a->s.N, med = abs_median(pl->hidden, (size_t)T * d, a->scratch);
    a->h_median[l] += med / N;
    probe_sinks_hidden(a, seq, pl, med);
    TokenProfile tp;
    token_profile(&tp, pl->hidden, T, d, a->norms);
    a->bos_max[l] += tp.bos_max / N;
    a->bos_norm_ratio[l] += tp.bos_ratio / N;
    a->tok_max[l] += tp.tok_max / N;
    a->tok_norm_ratio[l] += tp.tok_ratio / N;
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
    float **arr[3] = {&a->key_norm, &a->value_norm, &a->head_out_norm};
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
        free(a->gate_first), free(a->gate_rest);
        a->gate_first = a->gate_rest = NULL;
    }
    for (int l = 0; a->gate_first && l < s->L; l++)
        a->gate_first[l] /= s->N, a->gate_rest[l] /= s->N;
}

/* Turn sums into the means the run file stores. */
static void acc_means(ProbeAcc *a) {
    const ProbeShape *s = &a->s;
    for (size_t i = 0; a->attention_slot && i < (size_t)s->L * s->H * s->T; i++)
        a->attention_slot[i] /= (float)s->N;
    for (size_t lh = 0; lh < (size_t)s->L * s->H; lh++) {
        a->first_nonempty[lh] = a->ne_count[lh] > 0 ? a->first_nonempty[lh] / a->ne_count[lh] : NAN;
        a->row_empty[lh] /= (float)s->N * (float)(s->T > 1 ? s->T - 1 : 1);
    }
    for (int l = 0; l < s->L; l++) {
        a->bos_argmax[l] = vote_mode(a->bos_votes + (size_t)l * s->d, s->d);
        a->tok_argmax[l] = vote_mode(a->tok_votes + (size_t)l * s->d, s->d);
    }
    head_means(a);
    for (int l = 0; s->C && l < s->L; l++) {
        double *st = a->gate_stats + l * RS_GATE_NSTATS, cnt = st[3] > 0 ? st[3] : 1.0;
        const int Cl = probe_layer_channels(a->layer_heads, s->H, s->C, s->gate_shared, l);
        const double per_chan = Cl > 0 ? cnt / Cl : 1.0; /* scores per channel */
        for (int c = 0; c < s->C; c++) a->gate_channel_mean[(size_t)l * s->C + c] /= per_chan;
        for (int k = 0; k < RS_GATE_NBELOW; k++) a->gate_below[l * RS_GATE_NBELOW + k] /= cnt;
        st[0] /= cnt;
    }
}

/* The elements of an array of these dims whose head (H) index is one its
 * layer (L) lacks, or whose channel (C) index is one of those heads'
 * channels, set to NaN. The record arrays put L before H or C, so for
 * each index of the dims before L, each layer and each index of the dims
 * between, a layer's absent heads are one contiguous run: from its first
 * absent H (or C) index to the end of that dim, times the dims after it. */
static void absent_nan(const ProbeAcc *a, const char *dims, float *f, double *g) {
    const ProbeShape *s = &a->s;
    const char *pl = strchr(dims, 'L'), *px = strpbrk(dims, "HC");
    if (!a->layer_heads || (!f && !g) || !pl || !px || px < pl) return;
    size_t outer = 1, mid = 1, inner = 1;
    for (const char *c = dims; c < pl; c++) outer *= (size_t)plan_dim(s, *c);
    for (const char *c = pl + 1; c < px; c++) mid *= (size_t)plan_dim(s, *c);
    for (const char *c = px + 1; *c; c++) inner *= (size_t)plan_dim(s, *c);
    const size_t L = (size_t)s->L, size = (size_t)plan_dim(s, *px);
    for (size_t o = 0; o < outer; o++)
        for (size_t l = 0; l < L; l++) {
            const size_t first =
                (size_t)(*px == 'C' ? probe_layer_channels(a->layer_heads, s->H, s->C,
                                                           s->gate_shared, (int)l)
                                    : a->layer_heads[l]);
            if (first >= size) continue;
            const size_t run = (size - first) * inner;
            for (size_t m = 0; m < mid; m++) {
                const size_t at = (((o * L + l) * mid + m) * size + first) * inner;
                if (f)
                    for (size_t e = 0; e < run; e++) f[at + e] = NAN;
                else
                    for (size_t e = 0; e < run; e++) g[at + e] = NAN;
            }
        }
}

/* Every per-head (and per-channel) record array's absent heads as NaN. */
static void absent_heads(ProbeAcc *a) {
#define PA_NAN_F(member, ctype, cls, hid, name, dims, kind, desc)                                  \
    if (a->member && (strchr(dims, 'H') || strchr(dims, 'C')))                                     \
        absent_nan(a, dims, cls == RS_F32 ? (float *)(void *)a->member : NULL,                     \
                   cls == RS_F64 ? (double *)(void *)a->member : NULL);
    RS_PROBE_ARRAYS(PA_NAN_F)
#undef PA_NAN_F
}

int probe_layer_heads(const int *layer_heads, int H, int l) {
    return layer_heads ? layer_heads[l] : H;
}

int probe_layer_channels(const int *layer_heads, int H, int C, int shared, int l) {
    return layer_heads && !shared ? C / H * layer_heads[l] : C;
}

void probe_acc_finish(ProbeAcc *a, ProbeRecord *out) {
    acc_means(a);
    absent_heads(a);
    memset(out, 0, sizeof *out);
    out->L = a->s.L, out->H = a->s.H, out->N = a->s.N, out->T = a->s.T, out->M = a->s.M;
    out->gate_channels = a->s.C, out->has_gate = a->s.C > 0;
    out->gate_sample_n = a->Ns;
    probe_sinks_finish(a, out);
#define PA_HAND(member, ctype, cls, hid, name, dims, kind, desc)                                   \
    out->member = a->member, a->member = NULL;
    RS_PROBE_ARRAYS(PA_HAND)
#undef PA_HAND
}
