/* probe.c: the fixed probe set, run at each eval and at the end.
 *
 * It runs N held-out sequences (the same for every variant and seed), and
 * reduces what the forward pass exposes (attention maps, gate scores,
 * block outputs) to the arrays the run file keeps under /probe/step_N/.
 * The reductions call metrics.c (core), so the trainer and the analysis
 * tools agree on every definition.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config_derive.h"
#include "data.h"
#include "metrics.h"
#include "probe.h"
#include "runfile.h"
#include "util.h"

#define GATE_SAMPLE_SEQS 2


typedef struct {
    int L, H, N, T, C, Ns;
    int *tokens;
    float *attention, *slot, *first_col, *alpha0, *map, *gate_sample;
    double *hist, *chan_sum, *below, *stats, *h_max, *h_med, *h_top3, *h_kurt, *h_ratio;
    double gate_count_l[64];
    float *scratch;
} Acc;

static void acc_free(Acc *a) {
    free(a->tokens);
    free(a->attention);
    free(a->slot);
    free(a->first_col);
    free(a->alpha0);
    free(a->map);
    free(a->gate_sample);
    free(a->hist);
    free(a->chan_sum);
    free(a->below);
    free(a->stats);
    free(a->h_max);
    free(a->h_med);
    free(a->h_top3);
    free(a->h_kurt);
    free(a->h_ratio);
    free(a->scratch);
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
    a->map = falloc(TT);
    a->h_max = calloc((size_t)D->L, sizeof(double));
    a->h_med = calloc((size_t)D->L, sizeof(double));
    a->h_top3 = calloc((size_t)D->L * 3, sizeof(double));
    a->h_kurt = calloc((size_t)D->L, sizeof(double));
    a->h_ratio = calloc((size_t)D->L, sizeof(double));
    a->scratch = falloc((size_t)T * D->d);
    int ok = a->tokens && a->attention && a->slot && a->first_col && a->alpha0 && a->map &&
             a->h_max && a->h_med && a->h_top3 && a->h_kurt && a->h_ratio && a->scratch;
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

static void acc_attention(Acc *a, const Model *m, const RunState *s, int seq0,
                          int Bc) {
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
            }
    }
}

static void acc_gates(Acc *a, const Model *m, const RunState *s, int seq0,
                      int Bc) {
    int per_token = 1;
    const int C = a->C, T = a->T, e = m->dims.extra_pos, Ti = T + e;
    model_gate_probe_channels(m, &per_token);
    for (int l = 0; l < a->L; l++) {
        const float *g = model_gate_scores(s, l);
        for (int b = 0; b < Bc; b++)
            for (int t = 0; t < T; t++) {
                const float *row = per_token ? g + ((size_t)b * Ti + t + e) * C : g;
                double *st = a->stats + l * RS_GATE_NSTATS;
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
            a->h_max[l] += abs_max(h, n) / a->N;
            a->h_med[l] += abs_median(h, n, a->scratch) / a->N;
            abs_topk(top, 3, h, n);
            for (int k = 0; k < 3; k++) a->h_top3[l * 3 + k] += top[k] / a->N;
            a->h_kurt[l] += kurtosis(h, n) / a->N;
            a->h_ratio[l] += first_norm_ratio(h, T, d) / a->N;
        }
    }
}

/* Turn sums into the means the run file stores. */
static void acc_finish(Acc *a) {
    for (size_t i = 0; i < (size_t)a->L * a->H * a->T; i++) a->slot[i] /= (float)a->N;
    if (a->C == 0) return;
    for (int l = 0; l < a->L; l++) {
        double *st = a->stats + l * RS_GATE_NSTATS, cnt = st[3] > 0 ? st[3] : 1.0;
        double per_chan = cnt / a->C;
        for (int c = 0; c < a->C; c++) a->chan_sum[(size_t)l * a->C + c] /= per_chan;
        for (int k = 0; k < RS_GATE_NBELOW; k++) a->below[l * RS_GATE_NBELOW + k] /= cnt;
        st[0] /= cnt;
    }
}

int probe_run(const Model *m, RunState *s, const Dataset *ds, RunFile *rf,
              long long step, char *err, size_t errlen) {
    const Config *c = &m->cfg;
    const int N = c->probe_n, T = c->seq_len;
    Acc a;
    if (N <= 0) return 0;
    if (acc_init(&a, m, N, T) != 0) {
        acc_free(&a);
        return seterr(err, errlen, "out of memory for the probe (%d x %d)", N, T);
    }
    int *targets = calloc((size_t)N * T, sizeof(int));
    if (!targets) {
        acc_free(&a);
        return seterr(err, errlen, "out of memory for the probe tokens");
    }
    data_batch(ds, a.tokens, targets, N, T, SPLIT_PROBE, 0, 0);
    for (int seq0 = 0; seq0 < N; seq0 += s->B) {
        int Bc = N - seq0 < s->B ? N - seq0 : s->B;
        model_forward(m, s, a.tokens + (size_t)seq0 * T, NULL, Bc, T);
        acc_attention(&a, m, s, seq0, Bc);
        if (a.C) acc_gates(&a, m, s, seq0, Bc);
        acc_hidden(&a, m, s, Bc);
    }
    acc_finish(&a);
    int has_slot = c->sink_token || c->kv_bias || c->normaliser == NORMZ_SINK_LOGIT;
    ProbeRecord p = {
        .step = step, .L = a.L, .H = a.H, .N = N, .T = T, .tokens = a.tokens,
        .attention = a.attention, .attention_slot = has_slot ? a.slot : NULL,
        .first_col = a.first_col, .alpha0 = a.alpha0, .proxy = uses_proxy(c),
        .gate_channels = a.C,
        .gate_heads = c->gate_pos == GATE_G5 ? 1 : (c->gate_pos == GATE_G2 || c->gate_pos == GATE_G3 ? m->dims.Hkv : m->dims.H),
        .gate_bounded = c->gate_act == ACT_SIGMOID || c->gate_act == ACT_NS_SIGMOID,
        .gate_sample = a.gate_sample, .gate_sample_n = a.Ns, .gate_hist = a.hist,
        .gate_channel_mean = a.chan_sum, .gate_below = a.below, .gate_stats = a.stats,
        .h_max = a.h_max, .h_median = a.h_med, .h_top3 = a.h_top3, .h_kurtosis = a.h_kurt,
        .h_norm_ratio = a.h_ratio,
    };
    snprintf(p.normaliser, sizeof p.normaliser, "%s", normaliser_name(c->normaliser));
    int rc = runfile_write_probe(rf, &p, err, errlen);
    free(targets);
    acc_free(&a);
    return rc;
}
