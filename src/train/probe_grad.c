/* probe_grad.c: the probe's training-time measures (probe_grad.h), the
 * input-gradient norms per layer and position and the gate's weight norm
 * per layer and head (docs/metrics.md "Training-time measures").
 *
 * The backward runs on the probe's RunState with a gradient arena of its
 * own, swapped in for the call: the training step's gradients, moments and
 * weights are never written, so a run's /params do not depend on it.
 */
#include "probe_grad.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "util.h"

/* Sequence n's targets != -1. */
static int seq_targets(const int *targets, int T) {
    int n = 0;
    for (int t = 0; t < T; t++) n += targets[t] != -1;
    return n;
}

/* One chunk of Bc sequences from tokens/targets through forward and
 * backward, adding each sequence's per-layer, per-position input-gradient
 * norms into sum[L, T] (rescaled from the chunk's mean loss to the
 * sequence's own) and counting the sequences that have a target in *used. */
static void chunk_norms(const Model *m, RunState *s, const int *tokens, const int *targets, int Bc,
                        int T, float *rows, double *sum, int *used) {
    const int L = m->dims.L, e = m->dims.extra_pos, Ti = T + e;
    model_forward(m, s, tokens, targets, Bc, T);
    if (s->loss_count == 0) return;
    model_backward_input_norms(m, s, rows);
    for (int b = 0; b < Bc; b++) {
        int nb = seq_targets(targets + (size_t)b * T, T);
        if (nb == 0) continue;
        /* d(mean over the chunk)/dh -> d(mean over sequence b)/dh: the
         * sequences do not see each other */
        double scale = (double)s->loss_count / nb;
        for (int l = 0; l < L; l++)
            for (int t = 0; t < T; t++)
                sum[(size_t)l * T + t] +=
                    scale * rows[(size_t)l * Bc * Ti + (size_t)b * Ti + e + t];
        (*used)++;
    }
}

/* probe_grad_norms's buffers, one layout in a heap plan (plan.h): the
 * sums [L, T] (handed over), one chunk's rows [L, Bmax * Ti] and the
 * gradient arena of its own. */
typedef struct {
    double *sum;
    float *rows, *grads;
} GradBufs;

static void grad_plan(Plan *p, GradBufs *g, const Model *m, int N, int B, int T) {
    const size_t L = (size_t)m->dims.L, Ti = (size_t)T + (size_t)m->dims.extra_pos;
    const size_t Bmax = (size_t)(N < B ? N : B);
    g->sum = plan_take(p, L * T, sizeof *g->sum);
    g->rows = plan_floats(p, L * Bmax * Ti);
    g->grads = plan_floats(p, m->table.total);
}

/* probe_gate_weight_norms's W [L, G], one layout in a heap plan. */
static double *gate_norms_plan(Plan *p, const Model *m) {
    const int L = m->dims.L, G = m->dims.gate_groups;
    if (m->cfg.gate_pos == GATE_NONE || G <= 0) return NULL;
    return plan_take(p, (size_t)L * G, sizeof(double));
}

double *probe_grad_norms(const Model *m, RunState *s, const int *tokens, const int *targets, int N,
                         int T, char *err, size_t errlen) {
    const int L = m->dims.L;
    GradBufs gb;
    Plan plan = plan_heap();
    grad_plan(&plan, &gb, m, N, s->B, T);
    double *sum = gb.sum;
    float *rows = gb.rows, *grads = gb.grads;
    if (plan.failed) {
        free(sum), free(rows), free(grads);
        seterr(err, errlen, "out of memory for the probe's gradient norms");
        return NULL;
    }
    float *own_grads = s->grads;
    Weights own_g = s->g;
    s->grads = grads;
    weights_point(&s->g, grads, &m->table, &m->cfg);
    int used = 0;
    for (int seq0 = 0; seq0 < N; seq0 += s->B) {
        int Bc = N - seq0 < s->B ? N - seq0 : s->B;
        chunk_norms(m, s, tokens + (size_t)seq0 * T, targets + (size_t)seq0 * T, Bc, T, rows, sum,
                    &used);
    }
    s->grads = own_grads;
    s->g = own_g;
    free(rows);
    free(grads);
    for (size_t i = 0; i < (size_t)L * T; i++) sum[i] = used ? sum[i] / used : NAN;
    return sum;
}

double *probe_gate_weight_norms(const Model *m, int *groups) {
    const int L = m->dims.L, G = m->dims.gate_groups;
    *groups = 0;
    Plan plan = plan_heap();
    double *out = gate_norms_plan(&plan, m);
    if (!out) return NULL;
    for (int l = 0; l < L; l++) {
        char name[PARAM_NAME];
        snprintf(name, sizeof name, "layers.%d.attn.gate.w", l);
        const ParamInfo *pi = param_find(&m->table, name);
        if (!pi || pi->numel % (size_t)G) {
            free(out);
            return NULL;
        }
        /* the rows (or, for g1-const, the entries) of head g are the g-th
         * of G equal contiguous blocks */
        const float *w = m->params + pi->offset;
        size_t per = pi->numel / (size_t)G;
        for (int g = 0; g < G; g++) {
            double ss = 0.0;
            for (size_t i = 0; i < per; i++) ss += (double)w[g * per + i] * w[g * per + i];
            out[(size_t)l * G + g] = sqrt(ss);
        }
    }
    *groups = G;
    return out;
}

size_t probe_grad_bytes(const Model *m, int N, int T, int B) {
    GradBufs gb;
    Plan p = plan_counter(PLAN_HEAP);
    grad_plan(&p, &gb, m, N, B, T);
    gate_norms_plan(&p, m);
    return p.used;
}
