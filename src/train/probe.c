/* probe.c: the fixed probe set, run at each eval and at the end.
 *
 * It runs N held-out sequences (the same for every variant and seed), and
 * hands what the forward pass exposes (attention maps without the sink and
 * register positions, gate scores, block outputs, keys, values and head
 * outputs) layer by layer to the reducer that inspected checkpoints share
 * (probe_reduce.c), which makes the arrays the run file keeps under
 * /probe/step_N/; each head's W_V W_O effective rank comes from the
 * weights.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config_derive.h"
#include "data.h"
#include "intervention.h"
#include "metrics.h"
#include "plan.h"
#include "probe.h"
#include "probe_grad.h"
#include "probe_reduce.h"
#include "runfile.h"
#include "stop.h"
#include "util.h"

/* The reducer plus what the trainer adds: the maps of one (layer, seq)
 * with the sink / register positions taken out, and the loss. */
typedef struct {
    ProbeAcc acc;
    float *maps, *cols, *slot; /* [H, T, T], [H, T], [H, T] */
    double loss_sum;
    long long loss_n;
    size_t given; /* bytes acc_plan handed out (the reducer's own plan counts its own) */
} Acc;

static void acc_free(Acc *a) {
    probe_acc_free(&a->acc);
    free(a->maps);
    free(a->cols);
    free(a->slot);
}

static int uses_proxy(const Config *c) { return config_attention_proxy(c); }

static ProbeShape probe_shape(const Model *m, int N, int T) {
    const Dims *D = &m->dims;
    return (ProbeShape){.L = D->L,
                        .H = D->H,
                        .N = N,
                        .T = T,
                        .M = T,
                        .C = model_gate_probe_channels(m, NULL),
                        .d = D->d,
                        .has_slot = config_attention_slots(&m->cfg) > 0,
                        .has_logits = 1, /* model_max_logit */
                        .gate_shared = m->cfg.gate_shared,
                        .threads = 1};
}

/* The trainer's buffers beside the reducer's, one layout in a heap plan
 * (plan.h): acc_init hands them out, probe_collect_bytes counts them. */
static void acc_plan(Plan *p, Acc *a, const ProbeShape *ps) {
    const size_t HT = (size_t)ps->H * ps->T;
    a->maps = plan_floats(p, HT * ps->T);
    a->cols = plan_floats(p, HT);
    a->slot = plan_floats(p, HT);
}

static int acc_init(Acc *a, const Model *m, int N, int T) {
    memset(a, 0, sizeof *a);
    ProbeShape ps = probe_shape(m, N, T);
    Plan p = plan_heap();
    acc_plan(&p, a, &ps);
    if (p.failed || probe_acc_init(&a->acc, &ps) != 0) return -1;
    a->given = p.used;
    return 0;
}

/* probe_run's own, one layout in a heap plan: the probe set's tokens and
 * targets and the record's copy of the targets (handed over). */
typedef struct {
    int *tokens, *targets, *rec_targets; /* [N, T] each */
} RunBufs;

static void run_plan(Plan *p, RunBufs *r, int N, int T) {
    const size_t nt = (size_t)N * T;
    r->tokens = plan_take(p, nt, sizeof(int));
    r->targets = plan_take(p, nt, sizeof(int));
    r->rec_targets = plan_take(p, nt, sizeof(int));
}

static size_t sat_add(size_t a, size_t b) { return a >= PLAN_TOO_MUCH - b ? PLAN_TOO_MUCH : a + b; }

size_t probe_collect_bytes(const Model *m, int N, int T) {
    if (N <= 0 || T <= 0) return 0;
    ProbeShape ps = probe_shape(m, N, T);
    Acc a;
    Plan p = plan_counter(PLAN_HEAP);
    acc_plan(&p, &a, &ps);
    return sat_add(p.used, probe_acc_bytes(&ps));
}

size_t probe_bytes(const Model *m, int N, int T, int B) {
    if (N <= 0) return 0;
    RunBufs r;
    Plan p = plan_counter(PLAN_HEAP);
    run_plan(&p, &r, N, T);
    return sat_add(sat_add(p.used, probe_collect_bytes(m, N, T)), probe_grad_bytes(m, N, T, B));
}

/* The real-token map of one head into map[T, T]: with sink or register
 * tokens, drop their rows and columns (their columns' sum goes to
 * slot_out[T], which starts at 0). */
static void head_map(float *map, float *slot_out, const Model *m, const float *att, int T) {
    const int e = m->dims.extra_pos, Ti = T + e;
    for (int t = 0; t < T; t++) {
        const float *row = att + (size_t)(t + e) * Ti;
        memcpy(map + (size_t)t * T, row + e, (size_t)T * sizeof(float));
        slot_out[t] = 0.0f;
        for (int r = 0; r < e; r++) slot_out[t] += row[r]; /* sink / registers */
    }
    if (uses_proxy(&m->cfg)) attention_proxy(map, T);
}

/* Layer l of batch row b of the RunState, as the reducer reads it. */
static void layer_view(Acc *a, ProbeLayer *pl, const Model *m, const RunState *s, int l, int b,
                       int T) {
    const Dims *D = &m->dims;
    const int H = D->H, e = D->extra_pos, Ti = T + e, C = a->acc.s.C;
    const float *att = model_attention(s, l), *slot = model_attention_slot(s, l);
    for (int h = 0; h < H; h++) {
        float *map = a->maps + (size_t)h * T * T, *sl = a->slot + (size_t)h * T;
        head_map(map, sl, m, att + ((size_t)b * H + h) * Ti * Ti, T);
        if (slot)
            for (int t = 0; t < T; t++) sl[t] += slot[((size_t)b * H + h) * Ti + t];
        for (int t = 0; t < T; t++) a->cols[(size_t)h * T + t] = map[(size_t)t * T];
    }
    int per_token = 1;
    model_gate_probe_channels(m, &per_token);
    const float *g = C ? model_gate_scores(s, l) : NULL;
    *pl = (ProbeLayer){.layer = l,
                       .T = T,
                       .H = H,
                       .M = T,
                       .C = C,
                       .d = m->dims.d,
                       .first_col = a->cols,
                       .maps = a->maps,
                       .slot = a->slot,
                       .gates = g && per_token ? g + ((size_t)b * Ti + e) * C : g,
                       .gate_stride = per_token ? C : 0,
                       .hidden = model_block_output(s, l) + ((size_t)b * Ti + e) * m->dims.d,
                       .keys = model_keys(s, l) + ((size_t)b * Ti + e) * D->kvdim,
                       .values = model_values(s, l) + ((size_t)b * Ti + e) * D->kvdim,
                       .heads_out = model_head_outputs(s, l) + ((size_t)b * Ti + e) * D->qdim,
                       .kv_stride = D->kvdim,
                       .out_stride = D->qdim,
                       .Hkv = D->Hkv,
                       .dh = D->dh};
}

/* Forward every probe sequence (in chunks of the RunState's capacity) and
 * reduce; the loss sums over targets != -1. */
static int acc_forward(Acc *a, const Model *m, RunState *s, const ProbeInput *in) {
    const int T = in->T;
    for (int seq0 = 0; seq0 < in->N; seq0 += s->B) {
        if (stop_requested()) return -1; /* Ctrl-C: the caller drops this probe */
        int Bc = in->N - seq0 < s->B ? in->N - seq0 : s->B;
        const int *tg = in->targets ? in->targets + (size_t)seq0 * T : NULL;
        const int keep = s->keep_scores;
        s->keep_scores = 1; /* model_max_logit reads them */
        model_forward_iv(m, s, in->tokens + (size_t)seq0 * T, tg, Bc, T, in->iv);
        s->keep_scores = keep;
        if (tg) {
            a->loss_sum += (double)s->loss * s->loss_count;
            a->loss_n += s->loss_count;
        }
        for (int l = 0; l < m->dims.L; l++) {
            for (int b = 0; b < Bc; b++) {
                ProbeLayer pl;
                layer_view(a, &pl, m, s, l, b, T);
                probe_acc_layer(&a->acc, seq0 + b, &pl);
            }
            if (probe_acc_max_logit(&a->acc, l, model_max_logit(s, m, l, Bc)) != 0) return -1;
        }
    }
    return 0;
}

/* Each head's W_V W_O effective rank from the weights: head h reads the
 * rows of its KV group in w_v [Hkv*dh, d] and writes through its columns
 * of w_o [d, H*dh]. */
static int acc_ov_erank(Acc *a, const Model *m) {
    const Dims *D = &m->dims;
    for (int l = 0; l < D->L; l++)
        for (int h = 0; h < D->H; h++) {
            const LayerWeights *lw = &m->w.layer[l];
            const int g = h * D->Hkv / D->H;
            StridedMat V = {lw->w_v + (size_t)g * D->dh * D->d, (size_t)D->d, 1};
            StridedMat O = {lw->w_o + (size_t)h * D->dh, (size_t)D->qdim, 1};
            if (probe_acc_ov_erank(&a->acc, l, h, ov_effective_rank(V, O, D->d, D->dh)) != 0)
                return -1;
        }
    return 0;
}

/* The record: the reducer's arrays and the model's attributes. */
static void acc_to_record(Acc *a, const Model *m, ProbeRecord *p, long long step) {
    const Config *c = &m->cfg;
    probe_acc_finish(&a->acc, p);
    p->step = step;
    p->proxy = uses_proxy(c);
    p->slots = config_attention_slots(c);
    p->gate_shared = c->gate_shared;
    p->gate_heads =
        c->gate_pos == GATE_G5
            ? 1
            : (c->gate_pos == GATE_G2 || c->gate_pos == GATE_G3 ? m->dims.Hkv : m->dims.H);
    p->gate_bounded = GATE_ACTS[c->gate_act].bounded;
    snprintf(p->normaliser, sizeof p->normaliser, "%s", normaliser_name(c->normaliser));
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
    memcpy(a.acc.tokens, in->tokens, (size_t)in->N * in->T * sizeof(int));
    if (acc_ov_erank(&a, m) != 0) {
        acc_free(&a);
        return seterr(err, errlen, "out of memory for the W_V W_O ranks");
    }
    if (acc_forward(&a, m, s, in) != 0) {
        acc_free(&a);
        return seterr(err, errlen, "probe at step %lld interrupted", in->step);
    }
    if (loss) *loss = a.loss_n ? a.loss_sum / (double)a.loss_n : NAN;
    if (in->given) *in->given = a.given + a.acc.plan.used;
    acc_to_record(&a, m, out, in->step);
    acc_free(&a);
    return 0;
}

/* What only a trained run's probe records (probe_grad.h): the input
 * gradients' norms over the probe's tokens and targets, the targets
 * themselves (so the norms can be recomputed from the file: the last
 * position's target lies past the stored tokens), and the gate's weight
 * norms (left NULL, absent, for an ungated model). */
static int probe_training_measures(const Model *m, RunState *s, const RunBufs *r, ProbeRecord *p,
                                   char *err, size_t errlen) {
    size_t nt = (size_t)p->N * p->T;
    memcpy(r->rec_targets, r->targets, nt * sizeof *p->targets);
    p->targets = r->rec_targets;
    p->grad_in_norm = probe_grad_norms(m, s, r->tokens, r->targets, p->N, p->T, err, errlen);
    if (!p->grad_in_norm) return -1;
    int groups = 0;
    p->gate_w_norm = probe_gate_weight_norms(m, &groups);
    if (p->gate_channels > 0 && (!p->gate_w_norm || groups != p->gate_heads))
        return seterr(err, errlen, "probe: the gate's weights do not split into %d heads",
                      p->gate_heads);
    return 0;
}

int probe_run(const Model *m, RunState *s, const Dataset *ds, RunFile *rf, long long step,
              double *f_attn_layer, char *err, size_t errlen) {
    const Config *c = &m->cfg;
    const int N = c->probe_n, T = c->seq_len;
    if (N <= 0) return 0;
    RunBufs r;
    Plan plan = plan_heap();
    run_plan(&plan, &r, N, T);
    if (plan.failed) {
        free(r.tokens), free(r.targets), free(r.rec_targets);
        return seterr(err, errlen, "out of memory for the probe tokens");
    }
    data_batch(ds, r.tokens, r.targets, N, T, SPLIT_PROBE, 0, 0);
    ProbeInput in = {.tokens = r.tokens, .targets = NULL, .N = N, .T = T, .iv = NULL, .step = step};
    ProbeRecord p;
    int rc = probe_collect(m, s, &in, &p, NULL, err, errlen);
    if (rc == 0) rc = probe_training_measures(m, s, &r, &p, err, errlen);
    else free(r.rec_targets); /* not handed over */
    if (rc == 0) rc = runfile_write_probe(rf, &p, err, errlen);
    for (int l = 0; rc == 0 && f_attn_layer && l < p.L; l++) {
        double sum = 0;
        for (int h = 0; h < p.H; h++)
            sum += first_token_share(p.attention + ((size_t)l * p.H + h) * p.M * p.M, p.M);
        f_attn_layer[l] = p.H ? sum / p.H : NAN;
    }
    runread_probe_free(&p);
    free(r.tokens);
    free(r.targets);
    return rc;
}
