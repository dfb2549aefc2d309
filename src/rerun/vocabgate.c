/* vocabgate.c: the layer-0 gate over the whole vocabulary (vocabgate.h). */
#include "vocabgate.h"

#include <stdlib.h>
#include <string.h>

#include "runschema.h" /* RS_GATE_SPARSE */
#include "stop.h"
#include "util.h"

typedef struct {
    double m;
    int id;
} Ranked;

/* By mean, then by id. */
static int by_mean(const void *a, const void *b) {
    const Ranked *x = a, *y = b;
    if (x->m != y->m) return x->m < y->m ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* By mean, highest first, then by id. */
static int by_mean_desc(const void *a, const void *b) {
    const Ranked *x = a, *y = b;
    if (x->m != y->m) return x->m > y->m ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

int vocab_gates_summarise(VocabGates *v) {
    Ranked *r = malloc((size_t)v->V * sizeof *r);
    if (!r) return -1;
    double sum = 0.0;
    long long below = 0;
    for (int i = 0; i < v->V; i++) {
        r[i] = (Ranked){v->mean[i], i};
        sum += v->mean[i];
        below += v->mean[i] < RS_GATE_SPARSE;
    }
    qsort(r, (size_t)v->V, sizeof *r, by_mean);
    v->shut = (double)below / v->V;
    v->mean_all = sum / v->V;
    v->median = v->V % 2 ? r[v->V / 2].m : 0.5 * (r[v->V / 2 - 1].m + r[v->V / 2].m);
    v->n_top = v->V < VG_TOP ? v->V : VG_TOP;
    for (int k = 0; k < v->n_top; k++) v->closed[k] = r[k].id;
    qsort(r, (size_t)v->V, sizeof *r, by_mean_desc);
    for (int k = 0; k < v->n_top; k++) v->open[k] = r[k].id;
    free(r);
    return 0;
}

void vocab_gates_free(VocabGates *v) {
    free(v->mean);
    v->mean = NULL;
}

/* The refusals of a run whose layer-0 gate has no per-token score. */
static int check_gate(const Forward *f, char *err, size_t errlen) {
    const ForwardInfo *i = &f->info;
    if (!i->gated)
        return seterr(err, errlen,
                      "%s: variant %s has no attention gate; --vocab needs a gated run", f->run,
                      i->variant);
    if (!i->gate_per_token || !f->ops->first_gates)
        return seterr(err, errlen,
                      "%s: variant %s's gate reads no token (its scores are the same for every "
                      "token); --vocab needs a gate that reads its input",
                      f->run, i->variant);
    return 0;
}

/* Tokens v0 .. v0 + n - 1 through the gate: their means into out->mean. */
static int run_batch(Forward *f, VocabGates *out, int *ids, float *scores, int v0, int n, char *err,
                     size_t errlen) {
    const int C = out->C, C0 = out->C0;
    for (int b = 0; b < n; b++) ids[b] = v0 + b;
    if (f->ops->first_gates(f, ids, n, scores, err, errlen) != 0) return -1;
    for (int b = 0; b < n; b++) {
        double s = 0.0;
        for (int c = 0; c < C0; c++) s += scores[(size_t)b * C + c];
        out->mean[v0 + b] = s / C0;
    }
    return 0;
}

int vocab_gates_run(Forward *f, VocabGates *out, void (*progress)(int done, int V), char *err,
                    size_t errlen) {
    memset(out, 0, sizeof *out);
    if (check_gate(f, err, errlen) != 0) return -1;
    const int V = f->info.V, C = f->info.gate_channels;
    int B = V < VG_BATCH ? V : VG_BATCH;
    if ((size_t)B * V > VG_LOGIT_FLOATS) B = (int)(VG_LOGIT_FLOATS / (size_t)V);
    if (B < 1) B = 1;
    out->V = V, out->C = C, out->C0 = forward_layer_channels(&f->info, 0);
    out->bounded = f->info.gate_bounded;
    if (forward_check_memory(f, B, 1, 0, 0, f->run, err, errlen) != 0 ||
        f->ops->prepare(f, B, 1, 1.0, err, errlen) != 0)
        return -1;
    int *ids = malloc((size_t)B * sizeof *ids);
    float *scores = falloc((size_t)B * C);
    out->mean = malloc((size_t)V * sizeof *out->mean);
    int rc = ids && scores && out->mean ? 0 : seterr(err, errlen, "%s: out of memory", f->run);
    for (int v0 = 0; rc == 0 && v0 < V; v0 += B) {
        if (stop_requested()) {
            rc = seterr(err, errlen, "interrupted at token %d of %d", v0, V);
            break;
        }
        rc = run_batch(f, out, ids, scores, v0, V - v0 < B ? V - v0 : B, err, errlen);
        if (rc == 0 && progress) progress(V - v0 < B ? V : v0 + B, V);
    }
    if (rc == 0 && vocab_gates_summarise(out) != 0)
        rc = seterr(err, errlen, "%s: out of memory", f->run);
    free(ids), free(scores);
    if (rc != 0) vocab_gates_free(out);
    return rc;
}
