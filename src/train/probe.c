/* probe.c: the fixed probe set, run at each eval and at the end.
 *
 * It runs N held-out sequences (the same for every variant and seed), and
 * reduces what the forward pass exposes (attention maps, gate scores,
 * block outputs) to the arrays the run file keeps under /probe/step_N/.
 * The reductions call metrics.c (core), so the trainer and the analysis
 * tools agree on every definition.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config_derive.h"
#include "data.h"
#include "intervention.h"
#include "metrics.h"
#include "probe.h"
#include "runfile.h"
#include "stop.h"
#include "util.h"

#define GATE_SAMPLE_SEQS 2

typedef struct {
    int L, H, N, T, C, Ns;
    int *tokens;
    float *attention, *slot, *first_col, *alpha0, *map, *gate_sample;
    float *row_empty, *first_ne; /* sums, then the stored fractions */
    float *ne_count;             /* non-empty rows per (l, h) */
    double *hist, *chan_sum, *below, *stats, *h_max, *h_med, *h_top3, *h_kurt, *h_ratio;
    double *bos_max, *bos_ratio, *tok_max, *tok_ratio, *norms;
    double *max_logit;                              /* [L] */
    int *bos_arg, *tok_arg, *bos_votes, *tok_votes; /* [L], [L], [L*d], [L*d] */
    double loss_sum;
    long long loss_n;
    float *scratch;
} Acc;

static void acc_free(Acc *a) {
    free(a->tokens);
    free(a->attention);
    free(a->slot);
    free(a->first_col);
    free(a->alpha0);
    free(a->row_empty);
    free(a->first_ne);
    free(a->ne_count);
    free(a->map);
    free(a->gate_sample);
    free(a->hist);
    free(a->chan_sum);
    free(a->below);
    free(a->stats);
    free(a->h_max);
    free(a->max_logit);
    free(a->h_med);
    free(a->h_top3);
    free(a->h_kurt);
    free(a->h_ratio);
    free(a->bos_max);
    free(a->bos_ratio);
    free(a->tok_max);
    free(a->tok_ratio);
    free(a->norms);
    free(a->bos_arg);
    free(a->tok_arg);
    free(a->bos_votes);
    free(a->tok_votes);
    free(a->scratch);
}

/* The mechanism arrays (TokenProfile per layer). */
static int acc_init_profile(Acc *a, int L, int d, int T) {
    a->bos_max = calloc((size_t)L, sizeof(double));
    a->bos_ratio = calloc((size_t)L, sizeof(double));
    a->tok_max = calloc((size_t)L, sizeof(double));
    a->tok_ratio = calloc((size_t)L, sizeof(double));
    a->norms = calloc((size_t)T, sizeof(double));
    a->bos_arg = calloc((size_t)L, sizeof(int));
    a->tok_arg = calloc((size_t)L, sizeof(int));
    a->bos_votes = calloc((size_t)L * d, sizeof(int));
    a->tok_votes = calloc((size_t)L * d, sizeof(int));
    return a->bos_max && a->bos_ratio && a->tok_max && a->tok_ratio && a->norms && a->bos_arg &&
                   a->tok_arg && a->bos_votes && a->tok_votes
               ? 0
               : -1;
}

static int acc_init(Acc *a, const Model *m, int N, int T) {
    const Dims *D = &m->dims;
    memset(a, 0, sizeof *a);
    a->L = D->L, a->H = D->H, a->N = N, a->T = T;
    a->C = model_gate_probe_channels(m, NULL);
    a->Ns = N < GATE_SAMPLE_SEQS ? N : GATE_SAMPLE_SEQS;
    size_t LH = (size_t)D->L * D->H, TT = (size_t)T * T;
    a->tokens = calloc((size_t)N * T, sizeof(int));
    a->attention = falloc(LH * TT);
    a->slot = falloc(LH * T);
    a->first_col = falloc((size_t)N * LH * T);
    a->alpha0 = falloc(LH);
    a->row_empty = falloc(LH);
    a->first_ne = falloc(LH);
    a->ne_count = falloc(LH);
    a->map = falloc(TT);
    a->h_max = calloc((size_t)D->L, sizeof(double));
    a->max_logit = calloc((size_t)D->L, sizeof(double));
    a->h_med = calloc((size_t)D->L, sizeof(double));
    a->h_top3 = calloc((size_t)D->L * 3, sizeof(double));
    a->h_kurt = calloc((size_t)D->L, sizeof(double));
    a->h_ratio = calloc((size_t)D->L, sizeof(double));
    a->scratch = falloc((size_t)T * D->d);
    int ok = a->tokens && a->attention && a->slot && a->first_col && a->alpha0 && a->map &&
             a->row_empty && a->first_ne && a->ne_count && a->h_max && a->max_logit && a->h_med &&
             a->h_top3 && a->h_kurt && a->h_ratio && a->scratch &&
             acc_init_profile(a, D->L, D->d, T) == 0;
    if (a->C > 0) {
        a->gate_sample = falloc((size_t)D->L * a->Ns * T * a->C);
        a->hist = calloc((size_t)D->L * RS_GATE_BINS, sizeof(double));
        a->chan_sum = calloc((size_t)D->L * a->C, sizeof(double));
        a->below = calloc((size_t)D->L * RS_GATE_NBELOW, sizeof(double));
        a->stats = calloc((size_t)D->L * RS_GATE_NSTATS, sizeof(double));
        ok = ok && a->gate_sample && a->hist && a->chan_sum && a->below && a->stats;
        for (int l = 0; l < D->L; l++) {
            a->stats[l * RS_GATE_NSTATS + 1] = INFINITY;
            a->stats[l * RS_GATE_NSTATS + 2] = -INFINITY;
        }
    }
    return ok ? 0 : -1;
}

/* Every allocation of acc_init plus probe_run's tokens and targets, the large ones
 * term by term (the few per-layer arrays as one L x 64 doubles). */
size_t probe_bytes(const Model *m, int N, int T) {
    if (N <= 0) return 0;
    const Dims *D = &m->dims;
    double LH = (double)D->L * D->H, TT = (double)T * T, n = N, t = T;
    int C = model_gate_probe_channels(m, NULL), Ns = N < GATE_SAMPLE_SEQS ? N : GATE_SAMPLE_SEQS;
    double f = LH * TT + LH * t + n * LH * t + 4.0 * LH + TT + t * D->d; /* floats */
    if (C > 0) f += (double)D->L * Ns * t * C;
    double b = 4.0 * f + 3.0 * 4.0 * n * t + 8.0 * D->L * (64.0 + RS_GATE_BINS + C);
    b += 8.0 * t + 2.0 * 4.0 * D->L * D->d; /* mechanism: norms, feature votes */
    return b >= (double)(SIZE_MAX / 8) ? SIZE_MAX / 8 : (size_t)b;
}

static int uses_proxy(const Config *c) { return config_attention_proxy(c); }

/* The real-token map of one head: with sink or register tokens, drop
 * their rows and columns (their columns' sum becomes the slot weight). */
static void head_map(Acc *a, const Model *m, const float *att, float *slot_out) {
    const int T = a->T, e = m->dims.extra_pos, Ti = T + e;
    for (int t = 0; t < T; t++) {
        const float *row = att + (size_t)(t + e) * Ti;
        memcpy(a->map + (size_t)t * T, row + e, (size_t)T * sizeof(float));
        for (int r = 0; r < e; r++) slot_out[t] += row[r]; /* sink / registers */
    }
    if (uses_proxy(&m->cfg)) attention_proxy(a->map, T);
}

/* Rows t >= 1 of the current map with no mass (count) and the first-token
 * weight of the others (sum), for row_empty / first_share_nonempty. */
static void acc_empty(Acc *a, size_t lh) {
    const int T = a->T;
    for (int t = 1; t < T; t++) {
        const float *row = a->map + (size_t)t * T;
        double m = 0.0;
        for (int j = 0; j <= t; j++) m += row[j];
        if (m <= 1e-9) a->row_empty[lh] += 1.0f;
        else a->first_ne[lh] += row[0], a->ne_count[lh] += 1.0f;
    }
}

static void acc_attention(Acc *a, const Model *m, const RunState *s, int seq0, int Bc) {
    const int T = a->T, H = a->H, Ti = T + m->dims.extra_pos;
    const size_t TT = (size_t)T * T;
    for (int l = 0; l < a->L; l++) {
        const float *att = model_attention(s, l), *slot = model_attention_slot(s, l);
        for (int b = 0; b < Bc; b++)
            for (int h = 0; h < H; h++) {
                size_t lh = (size_t)l * H + h;
                float *slot_acc = a->slot + lh * T;
                head_map(a, m, att + ((size_t)b * H + h) * Ti * Ti, slot_acc);
                if (slot)
                    for (int t = 0; t < T; t++) slot_acc[t] += slot[((size_t)b * H + h) * Ti + t];
                float *mean = a->attention + lh * TT;
                for (size_t i = 0; i < TT; i++) mean[i] += a->map[i] / (float)a->N;
                float *col = a->first_col + (((size_t)(seq0 + b) * a->L + l) * H + h) * T;
                for (int t = 0; t < T; t++) col[t] = a->map[(size_t)t * T];
                a->alpha0[lh] += (float)(alpha_k(a->map, T, 0) / a->N);
                acc_empty(a, lh);
            }
    }
}

static void acc_gates(Acc *a, const Model *m, const RunState *s, int seq0, int Bc) {
    int per_token = 1;
    const int C = a->C, T = a->T, e = m->dims.extra_pos, Ti = T + e;
    model_gate_probe_channels(m, &per_token);
    for (int l = 0; l < a->L; l++) {
        const float *g = model_gate_scores(s, l);
        for (int b = 0; b < Bc; b++)
            for (int t = 0; t < T; t++) {
                const float *row = per_token ? g + ((size_t)b * Ti + t + e) * C : g;
                double *st = a->stats + l * RS_GATE_NSTATS;
                histogram_add(a->hist + (size_t)l * RS_GATE_BINS, RS_GATE_BINS, 0.0, 1.0, row,
                              (size_t)C);
                double below[RS_GATE_NBELOW];
                fraction_below(below, RS_GATE_BELOW_THR, RS_GATE_NBELOW, row, (size_t)C);
                for (int k = 0; k < RS_GATE_NBELOW; k++)
                    a->below[l * RS_GATE_NBELOW + k] += below[k] * C;
                for (int c = 0; c < C; c++) {
                    a->chan_sum[(size_t)l * C + c] += row[c];
                    st[0] += row[c];
                    if (row[c] < st[1]) st[1] = row[c];
                    if (row[c] > st[2]) st[2] = row[c];
                }
                st[3] += C;
                int seq = seq0 + b;
                if (seq < a->Ns)
                    memcpy(a->gate_sample + (((size_t)l * a->Ns + seq) * T + t) * C, row,
                           (size_t)C * sizeof(float));
            }
    }
}

static void acc_hidden(Acc *a, const Model *m, const RunState *s, int Bc) {
    const int T = a->T, d = m->dims.d, e = m->dims.extra_pos, Ti = T + e;
    const size_t n = (size_t)T * d;
    for (int l = 0; l < a->L; l++) {
        const float *x = model_block_output(s, l);
        for (int b = 0; b < Bc; b++) {
            const float *h = x + ((size_t)b * Ti + e) * d;
            double top[3];
            abs_topk(top, 3, h, n); /* top[0] is max |h| (abs_max): no pass of its own */
            a->h_max[l] += top[0] / a->N;
            a->h_med[l] += abs_median(h, n, a->scratch) / a->N;
            for (int k = 0; k < 3; k++) a->h_top3[l * 3 + k] += top[k] / a->N;
            a->h_kurt[l] += kurtosis(h, n) / a->N;
            a->h_ratio[l] += first_norm_ratio(h, T, d) / a->N;
            TokenProfile tp;
            token_profile(&tp, h, T, d, a->norms);
            a->bos_max[l] += tp.bos_max / a->N;
            a->bos_ratio[l] += tp.bos_ratio / a->N;
            a->tok_max[l] += tp.tok_max / a->N;
            a->tok_ratio[l] += tp.tok_ratio / a->N;
            a->bos_votes[(size_t)l * d + tp.bos_arg]++;
            if (tp.tok_arg >= 0) a->tok_votes[(size_t)l * d + tp.tok_arg]++;
        }
    }
}

/* The most frequent index of votes[d] (smallest on ties; -1 when none). */
static int vote_mode(const int *votes, int d) {
    int best = 0;
    for (int i = 1; i < d; i++)
        if (votes[i] > votes[best]) best = i;
    return votes[best] > 0 ? best : -1;
}

/* Turn sums into the means the run file stores. */
static void acc_finish(Acc *a, int d) {
    for (size_t i = 0; i < (size_t)a->L * a->H * a->T; i++) a->slot[i] /= (float)a->N;
    for (size_t lh = 0; lh < (size_t)a->L * a->H; lh++) {
        a->first_ne[lh] = a->ne_count[lh] > 0 ? a->first_ne[lh] / a->ne_count[lh] : NAN;
        a->row_empty[lh] /= (float)a->N * (float)(a->T > 1 ? a->T - 1 : 1);
    }
    for (int l = 0; l < a->L; l++) {
        a->bos_arg[l] = vote_mode(a->bos_votes + (size_t)l * d, d);
        a->tok_arg[l] = vote_mode(a->tok_votes + (size_t)l * d, d);
    }
    if (a->C == 0) return;
    for (int l = 0; l < a->L; l++) {
        double *st = a->stats + l * RS_GATE_NSTATS, cnt = st[3] > 0 ? st[3] : 1.0;
        double per_chan = cnt / a->C;
        for (int c = 0; c < a->C; c++) a->chan_sum[(size_t)l * a->C + c] /= per_chan;
        for (int k = 0; k < RS_GATE_NBELOW; k++) a->below[l * RS_GATE_NBELOW + k] /= cnt;
        st[0] /= cnt;
    }
}

/* Forward every probe sequence (in chunks of the RunState's capacity) and
 * accumulate; the loss sums over targets != -1. */
static int acc_forward(Acc *a, const Model *m, RunState *s, const ProbeInput *in) {
    const int T = in->T;
    for (int seq0 = 0; seq0 < in->N; seq0 += s->B) {
        if (stop_requested()) return -1; /* Ctrl-C: the caller drops this probe */
        int Bc = in->N - seq0 < s->B ? in->N - seq0 : s->B;
        const int *tg = in->targets ? in->targets + (size_t)seq0 * T : NULL;
        model_forward_iv(m, s, in->tokens + (size_t)seq0 * T, tg, Bc, T, in->iv);
        if (tg) {
            a->loss_sum += (double)s->loss * s->loss_count;
            a->loss_n += s->loss_count;
        }
        acc_attention(a, m, s, seq0, Bc);
        for (int l = 0; l < a->L; l++) {
            double mx = model_max_logit(s, m, l, Bc);
            a->max_logit[l] = mx > a->max_logit[l] ? mx : a->max_logit[l];
        }
        if (a->C) acc_gates(a, m, s, seq0, Bc);
        acc_hidden(a, m, s, Bc);
    }
    acc_finish(a, m->dims.d);
    return 0;
}

/* Hand the accumulated arrays to the record (a keeps the rest). */
static void acc_to_record(Acc *a, const Model *m, ProbeRecord *p, long long step) {
    const Config *c = &m->cfg;
    int has_slot = c->sink_token || c->kv_bias || c->normaliser == NORMZ_SINK_LOGIT;
    *p = (ProbeRecord){
        .step = step,
        .L = a->L,
        .H = a->H,
        .N = a->N,
        .T = a->T,
        .tokens = a->tokens,
        .attention = a->attention,
        .attention_slot = has_slot ? a->slot : NULL,
        .first_col = a->first_col,
        .alpha0 = a->alpha0,
        .proxy = uses_proxy(c),
        .row_empty = a->row_empty,
        .first_nonempty = a->first_ne,
        .gate_channels = a->C,
        .has_gate = a->C > 0,
        .gate_shared = c->gate_shared,
        .gate_heads =
            c->gate_pos == GATE_G5
                ? 1
                : (c->gate_pos == GATE_G2 || c->gate_pos == GATE_G3 ? m->dims.Hkv : m->dims.H),
        .gate_bounded = c->gate_act == ACT_SIGMOID || c->gate_act == ACT_NS_SIGMOID,
        .gate_sample = a->gate_sample,
        .gate_sample_n = a->Ns,
        .gate_hist = a->hist,
        .gate_channel_mean = a->chan_sum,
        .gate_below = a->below,
        .gate_stats = a->stats,
        .h_max = a->h_max,
        .max_logit = a->max_logit,
        .h_median = a->h_med,
        .h_top3 = a->h_top3,
        .h_kurtosis = a->h_kurt,
        .h_norm_ratio = a->h_ratio,
        .bos_max = a->bos_max,
        .bos_argmax = a->bos_arg,
        .bos_norm_ratio = a->bos_ratio,
        .tok_max = a->tok_max,
        .tok_argmax = a->tok_arg,
        .tok_norm_ratio = a->tok_ratio,
    };
    snprintf(p->normaliser, sizeof p->normaliser, "%s", normaliser_name(c->normaliser));
    if (has_slot) a->slot = NULL;
    a->tokens = NULL, a->attention = NULL, a->first_col = NULL, a->alpha0 = NULL;
    a->row_empty = NULL, a->first_ne = NULL;
    a->gate_sample = NULL, a->hist = NULL, a->chan_sum = NULL, a->below = NULL, a->stats = NULL;
    a->h_max = NULL, a->max_logit = NULL, a->h_med = NULL, a->h_top3 = NULL, a->h_kurt = NULL,
    a->h_ratio = NULL;
    a->bos_max = NULL, a->bos_arg = NULL, a->bos_ratio = NULL;
    a->tok_max = NULL, a->tok_arg = NULL, a->tok_ratio = NULL;
}

int probe_collect(const Model *m, RunState *s, const ProbeInput *in, ProbeRecord *out, double *loss,
                  char *err, size_t errlen) {
    Acc a;
    memset(out, 0, sizeof *out);
    if (in->N <= 0 || in->T <= 0 || in->T > s->T)
        return seterr(err, errlen, "probe: bad shape N=%d T=%d (capacity T=%d)", in->N, in->T,
                      s->T);
    if (acc_init(&a, m, in->N, in->T) != 0) {
        acc_free(&a);
        return seterr(err, errlen, "out of memory for the probe (%d x %d)", in->N, in->T);
    }
    memcpy(a.tokens, in->tokens, (size_t)in->N * in->T * sizeof(int));
    if (acc_forward(&a, m, s, in) != 0) {
        acc_free(&a);
        return seterr(err, errlen, "probe at step %lld interrupted", in->step);
    }
    if (loss) *loss = a.loss_n ? a.loss_sum / (double)a.loss_n : NAN;
    acc_to_record(&a, m, out, in->step);
    acc_free(&a);
    return 0;
}

int probe_run(const Model *m, RunState *s, const Dataset *ds, RunFile *rf, long long step,
              char *err, size_t errlen) {
    const Config *c = &m->cfg;
    const int N = c->probe_n, T = c->seq_len;
    if (N <= 0) return 0;
    int *tokens = calloc((size_t)N * T, sizeof(int)), *targets = calloc((size_t)N * T, sizeof(int));
    if (!tokens || !targets) {
        free(tokens);
        free(targets);
        return seterr(err, errlen, "out of memory for the probe tokens");
    }
    data_batch(ds, tokens, targets, N, T, SPLIT_PROBE, 0, 0);
    ProbeInput in = {.tokens = tokens, .targets = NULL, .N = N, .T = T, .iv = NULL, .step = step};
    ProbeRecord p;
    int rc = probe_collect(m, s, &in, &p, NULL, err, errlen);
    if (rc == 0) rc = runfile_write_probe(rf, &p, err, errlen);
    runread_probe_free(&p);
    free(tokens);
    free(targets);
    return rc;
}
