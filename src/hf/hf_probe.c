/* hf_probe.c: per-layer reductions for `gatelab inspect` (see hf_probe.h).
 * Mirrors src/probe.c: attention mean map, first-token columns, alpha0,
 * gate histogram/below/channel means/stats and a sample, hidden-state
 * statistics of each block output, all means over windows. */
#include "hf_probe.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "parallel.h"
#include "metrics.h"
#include "util.h"

#define GATE_SAMPLE_MAX ((size_t)8 << 20) /* floats; larger samples are left out */

void hf_probe_free(HfProbe *p) {
    void *all[] = {p->tokens,   p->attention,   p->first_col, p->alpha0, p->row_empty,
                   p->first_ne, p->gate_sample, p->hist,      p->chan,   p->below,
                   p->stats,    p->h_max,       p->h_med,     p->h_top3, p->h_kurt,
                   p->h_ratio,  p->scratch};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) free(all[i]);
    memset(p, 0, sizeof *p);
}

static double *dalloc(size_t n) { return calloc(n ? n : 1, sizeof(double)); }

int hf_probe_init(HfProbe *p, const HfModel *m, int N, int T, int M) {
    const HfArch *a = hf_model_arch(m);
    memset(p, 0, sizeof *p);
    p->L = a->L, p->H = a->H, p->N = N, p->T = T, p->M = M, p->d = a->d;
    p->C = hf_model_gate_channels(m);
    p->threads = hf_model_threads(m);
    size_t L = (size_t)p->L, LH = L * p->H;
    p->tokens = calloc((size_t)N * T, sizeof(int));
    p->attention = falloc(LH * M * M);
    p->first_col = falloc((size_t)N * LH * T);
    p->alpha0 = falloc(LH);
    p->row_empty = falloc(LH), p->first_ne = falloc(LH);
    p->h_max = dalloc(L), p->h_med = dalloc(L), p->h_top3 = dalloc(3 * L);
    p->h_kurt = dalloc(L), p->h_ratio = dalloc(L);
    p->scratch = falloc((size_t)T * a->d);
    int ok = p->tokens && p->attention && p->first_col && p->alpha0 && p->row_empty &&
             p->first_ne && p->h_max && p->h_med && p->h_top3 && p->h_kurt && p->h_ratio &&
             p->scratch;
    if (p->C) {
        p->Ns = L * T * p->C <= GATE_SAMPLE_MAX ? 1 : 0;
        if (p->Ns) ok = ok && (p->gate_sample = falloc(L * T * p->C));
        p->hist = dalloc(L * RS_GATE_BINS), p->chan = dalloc(L * p->C);
        p->below = dalloc(RS_GATE_NBELOW * L), p->stats = dalloc(RS_GATE_NSTATS * L);
        ok = ok && p->hist && p->chan && p->below && p->stats;
        for (size_t l = 0; ok && l < L; l++) {
            p->stats[l * RS_GATE_NSTATS + 1] = INFINITY;
            p->stats[l * RS_GATE_NSTATS + 2] = -INFINITY;
        }
    }
    return ok ? 0 : -1;
}

void hf_probe_window(HfProbe *p, int w, const int32_t *ids) {
    p->win = w;
    for (int t = 0; t < p->T; t++) p->tokens[(size_t)w * p->T + t] = ids[t];
}

static void add_attention(HfProbe *p, const HfLayerOut *o) {
    const size_t MM = (size_t)p->M * p->M, l = (size_t)o->layer;
    for (int h = 0; h < p->H; h++) {
        size_t lh = l * p->H + h;
        float *mean = p->attention + lh * MM;
        const float *map = o->maps + (size_t)h * MM;
        for (size_t i = 0; i < MM; i++) mean[i] += map[i] / (float)p->N;
        const float *col = o->first_col + (size_t)h * p->T;
        memcpy(p->first_col + (((size_t)p->win * p->L + l) * p->H + h) * p->T, col,
               (size_t)p->T * sizeof(float));
        p->alpha0[lh] += (float)(alpha0_from_col(col, p->T) / p->N);
        p->first_ne[lh] += (float)(first_share_from_col(col, p->T) / p->N);
    }
}

static void add_gates(HfProbe *p, const HfLayerOut *o) {
    const int C = p->C, l = o->layer;
    double *st = p->stats + l * RS_GATE_NSTATS;
    for (int t = 0; t < p->T; t++) {
        const float *row = o->gates + (size_t)t * C;
        histogram_add(p->hist + (size_t)l * RS_GATE_BINS, RS_GATE_BINS, 0.0, 1.0, row, (size_t)C);
        double below[RS_GATE_NBELOW];
        fraction_below(below, RS_GATE_BELOW_THR, RS_GATE_NBELOW, row, (size_t)C);
        for (int k = 0; k < RS_GATE_NBELOW; k++) p->below[l * RS_GATE_NBELOW + k] += below[k] * C;
        for (int c = 0; c < C; c++) {
            p->chan[(size_t)l * C + c] += row[c];
            st[0] += row[c];
            if (row[c] < st[1]) st[1] = row[c];
            if (row[c] > st[2]) st[2] = row[c];
        }
        st[3] += C;
    }
    if (p->gate_sample && p->win < p->Ns)
        memcpy(p->gate_sample + (((size_t)l * p->Ns + p->win) * p->T) * C, o->gates,
               (size_t)p->T * C * sizeof(float));
}

/* Hidden-state statistics but the median (the median runs beside them). */
static void add_hidden(HfProbe *p, const HfLayerOut *o) {
    const size_t n = (size_t)p->T * p->d;
    const int l = o->layer;
    double top[3];
    abs_topk(top, 3, o->hidden, n); /* top[0] is max |h| (abs_max): no pass of its own */
    p->h_max[l] += top[0] / p->N;
    for (int k = 0; k < 3; k++) p->h_top3[l * 3 + k] += top[k] / p->N;
    p->h_kurt[l] += kurtosis(o->hidden, n) / p->N;
    p->h_ratio[l] += first_norm_ratio(o->hidden, p->T, p->d) / p->N;
}

static void add_median(HfProbe *p, const HfLayerOut *o) {
    const size_t n = (size_t)p->T * p->d;
    p->h_med[o->layer] += abs_median(o->hidden, n, p->scratch) / p->N;
}

typedef struct {
    HfProbe *p;
    const HfLayerOut *o;
} LayerJob;

/* Part 0: the median of |hidden|; part 1: everything else. The parts
 * write disjoint sums, so the result does not depend on the threads. */
static void layer_parts(void *ctx, size_t i0, size_t i1) {
    const LayerJob *j = ctx;
    for (size_t i = i0; i < i1; i++) {
        if (i == 0) {
            add_median(j->p, j->o);
            continue;
        }
        add_attention(j->p, j->o);
        if (j->p->C && j->o->gates) add_gates(j->p, j->o);
        add_hidden(j->p, j->o);
    }
}

void hf_probe_layer(void *ctx, const HfLayerOut *o) {
    LayerJob j = {ctx, o};
    parallel_for(j.p->threads, 2, layer_parts, &j);
}

void hf_probe_finish(HfProbe *p, ProbeRecord *out) {
    for (int l = 0; p->C && l < p->L; l++) {
        double *st = p->stats + l * RS_GATE_NSTATS, cnt = st[3] > 0 ? st[3] : 1.0,
               per_chan = cnt / p->C;
        for (int c = 0; c < p->C; c++) p->chan[(size_t)l * p->C + c] /= per_chan;
        for (int k = 0; k < RS_GATE_NBELOW; k++) p->below[l * RS_GATE_NBELOW + k] /= cnt;
        st[0] /= cnt;
    }
    memset(out, 0, sizeof *out);
    /* row_empty stays 0 (calloc): softmax gives every row mass 1, so the
     * non-empty rows are all rows t >= 1 of the full first column */
    out->row_empty = p->row_empty, out->first_nonempty = p->first_ne;
    out->L = p->L, out->H = p->H, out->N = p->N, out->T = p->T, out->M = p->M;
    snprintf(out->normaliser, sizeof out->normaliser, "softmax");
    out->tokens = p->tokens, out->attention = p->attention, out->first_col = p->first_col;
    out->alpha0 = p->alpha0;
    out->gate_channels = p->C, out->gate_heads = p->C ? p->H : 0, out->gate_bounded = p->C > 0;
    out->gate_sample = p->gate_sample, out->gate_sample_n = p->Ns;
    out->gate_hist = p->hist, out->gate_channel_mean = p->chan;
    out->gate_below = p->below, out->gate_stats = p->stats;
    out->h_max = p->h_max, out->h_median = p->h_med, out->h_top3 = p->h_top3;
    out->h_kurtosis = p->h_kurt, out->h_norm_ratio = p->h_ratio;
}
