/* forward_trained.c: the Forward of a trained run (forward.h): the model
 * rebuilt from the run file's own config and final weights (runmodel.h),
 * the held-out batches every run and variant sees (data.h, a fixed seed),
 * the trainer's own probe (probe.h).
 *
 * Attention statistics follow the trainer's probe (probe.c): with a sink
 * token its row and column are dropped so the "first token" is the first
 * real one, and normalisers whose rows need not sum to one are read through
 * the Gu et al. proxy |a| / sum |a|. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_derive.h"
#include "data.h"
#include "data_files.h"
#include "forward.h"
#include "lceval.h"
#include "metrics.h"
#include "model.h"
#include "probe.h"
#include "runfile_read.h"
#include "runmodel.h"
#include "util.h"

typedef struct {
    Model m;
    RunState s;
    int have_state;
    Dataset ds;
    int have_data;
    DataFiles rec; /* the run's record of its data files (data_files.h) */
    float *map;    /* [T, T] scratch of the proxy */
} Trained;

static const char *pos_name(PosKind p) {
    switch (p) {
    case POS_LEARNED: return "learned";
    case POS_NONE: return "none";
    case POS_ALIBI: return "ALiBi";
    default: return "RoPE";
    }
}

static int t_plan(Forward *f, int B, int T, int M, int probe_n, MemPlan *p, char *err,
                  size_t errlen) {
    Trained *t = f->impl;
    (void)M;
    if (memplan_eval(&t->m.cfg, B, T, p, err, errlen) != 0) return -1;
    if (probe_n > 0) {
        p->probe = probe_collect_bytes(&t->m, probe_n, T); /* its probe is probe_collect */
        p->total = p->total > (size_t)-1 / 2 - p->probe ? (size_t)-1 / 2 : p->total + p->probe;
    }
    return 0;
}

static void free_state(Trained *t) {
    if (t->have_state) runstate_free(&t->s);
    t->have_state = 0;
    free(t->map);
    t->map = NULL;
}

static int t_prepare(Forward *f, int B, int T, double yarn, char *err, size_t errlen) {
    Trained *t = f->impl;
    free_state(t);
    /* rope tables are cached by (length, scale) inside the RunState, and a
     * fresh RunState per preparation makes the cache moot anyway */
    t->m.cfg.yarn_scale = (float)yarn;
    if (runstate_init(&t->s, &t->m, B, T) != 0)
        return seterr(err, errlen, "%s: out of memory for %d sequences of length %d", f->run, B, T);
    t->have_state = 1;
    t->map = malloc((size_t)T * T * sizeof(float));
    if (!t->map) {
        free_state(t);
        return seterr(err, errlen, "%s: out of memory for a map of length %d", f->run, T);
    }
    return 0;
}

/* The run's data, opened once: from the files it recorded, their bytes
 * checked against the record (data_files.h). */
static int open_data(Forward *f, char *err, size_t errlen) {
    Trained *t = f->impl;
    if (t->have_data) return 0;
    Config cfg = t->m.cfg;
    if (data_files_check(&cfg, &t->rec, f->run, 1, err, errlen) != 0 ||
        data_open(&t->ds, &cfg, err, errlen) != 0)
        return -1;
    t->have_data = 1;
    return 0;
}

static int t_windows(Forward *f, int T, int B, int nb, int i, int *ids, int *targets, char *err,
                     size_t errlen) {
    Trained *t = f->impl;
    (void)nb;
    if (open_data(f, err, errlen) != 0) return -1;
    data_batch(&t->ds, ids, targets, B, T, SPLIT_VAL, LCEVAL_SEED, i);
    return 0;
}

static int t_probe(Forward *f, const ForwardProbeIn *in, ProbeRecord *rec, double *loss,
                   long long *loss_n, char *err, size_t errlen) {
    Trained *t = f->impl;
    ProbeInput pi = {.tokens = in->tokens,
                     .targets = in->targets,
                     .N = in->N,
                     .T = in->T,
                     .iv = in->iv,
                     .step = in->step};
    if (probe_collect(&t->m, &t->s, &pi, rec, loss, err, errlen) != 0) return -1;
    *loss_n = 0;
    for (int b = 0; b < in->N * in->T; b++) *loss_n += in->targets[b] >= 0;
    return 0;
}

/* Each head's first column of layer l, the sink row and column dropped,
 * through the proxy where the variant needs it. */
static void first_cols(Trained *t, int B, int T, float *cols) {
    const Model *m = &t->m;
    const int e = m->dims.extra_pos, Ti = T + e, H = m->dims.H;
    for (int l = 0; l < m->dims.L; l++) {
        const float *att = model_attention(&t->s, l);
        for (int b = 0; b < B; b++)
            for (int h = 0; h < H; h++) {
                const float *A = att + ((size_t)b * H + h) * (size_t)Ti * Ti;
                float *col = cols + (((size_t)l * B + b) * H + h) * T;
                for (int q = 0; q < T; q++)
                    memcpy(t->map + (size_t)q * T, A + (size_t)(q + e) * Ti + e,
                           (size_t)T * sizeof(float));
                if (config_attention_proxy(&m->cfg)) attention_proxy(t->map, T);
                for (int q = 0; q < T; q++) col[q] = t->map[(size_t)q * T];
            }
    }
}

static int t_losses(Forward *f, const int *ids, const int *targets, int B, int T,
                    const struct Intervention *iv, float *tok_loss, double *mean, float *cols,
                    char *err, size_t errlen) {
    Trained *t = f->impl;
    (void)err, (void)errlen;
    float l = iv ? model_forward_iv(&t->m, &t->s, ids, targets, B, T, iv)
                 : model_forward(&t->m, &t->s, ids, targets, B, T);
    if (mean) *mean = l;
    if (tok_loss)
        for (size_t n = 0; n < (size_t)B * T; n++)
            tok_loss[n] = targets[n] >= 0 && targets[n] < t->m.dims.V ? t->s.losses[n] : 0.0f;
    if (cols) first_cols(t, B, T, cols);
    return 0;
}

static void t_close(Forward *f) {
    Trained *t = f->impl;
    free_state(t);
    if (t->have_data) data_close(&t->ds);
    model_free(&t->m);
    free(t);
    free(f);
}

static int t_needle(Forward *f, int T, int B, int i, double depth, int *ids, int *targets,
                    char *err, size_t errlen) {
    Trained *t = f->impl;
    if (open_data(f, err, errlen) != 0) return -1;
    if (data_needle_batch(&t->ds, ids, targets, B, T, depth, LCEVAL_SEED, i) == 0) return 0;
    return seterr(err, errlen,
                  "%s: the needle task needs byte text with BOS (data = brown or text, bos = 1) "
                  "and lengths >= %d; this run has data = %s, bos = %d, length %d",
                  f->run, needle_span() + 1, data_source_name(t->m.cfg.data), t->m.cfg.bos, T);
}

static const float *t_logits(Forward *f) { return model_logits(&((Trained *)f->impl)->s); }

/* Row e of each window (the first real token, after e sink/register
 * rows) of layer 0's scores [B, Ti, C]. */
static int t_first_gates(Forward *f, const int *ids, int B, float *scores, char *err,
                         size_t errlen) {
    Trained *t = f->impl;
    const int C = f->info.gate_channels, e = t->m.dims.extra_pos;
    if (!t->have_state || B > t->s.B)
        return seterr(err, errlen, "%s: %d windows, prepared for %d", f->run, B,
                      t->have_state ? t->s.B : 0);
    model_forward_gate0(&t->m, &t->s, ids, B, 1);
    const float *g = model_gate_scores(&t->s, 0);
    for (int b = 0; b < B; b++)
        memcpy(scores + (size_t)b * C, g + ((size_t)b * (1 + e) + e) * C, (size_t)C * sizeof *g);
    return 0;
}

/* Byte-level text (data = brown or text): each byte a token, BYTE_BOS
 * first when the run trained with one. */
static int t_encode(Forward *f, const char *text, size_t len, int **ids, int *n, char *err,
                    size_t errlen) {
    const Config *c = &((Trained *)f->impl)->m.cfg;
    *ids = NULL, *n = 0;
    if (c->data != DATA_BROWN && c->data != DATA_TEXT)
        return seterr(err, errlen,
                      "%s: its data (%s) has no text tokenizer; give token ids with --tokens "
                      "ID,ID,...",
                      f->run, data_source_name(c->data));
    const int b = c->bos ? 1 : 0;
    if (len > (size_t)(1 << 24)) return seterr(err, errlen, "%s: the text is too long", f->run);
    if (!(*ids = malloc((len + (size_t)b) * sizeof **ids)))
        return seterr(err, errlen, "out of memory for the tokens");
    if (b) (*ids)[0] = BYTE_BOS;
    for (size_t i = 0; i < len; i++) (*ids)[i + (size_t)b] = (unsigned char)text[i];
    *n = (int)len + b;
    return 0;
}

/* A byte-level run's token: its byte, or "<bos>". */
static int t_piece(Forward *f, int id, char *buf, size_t len) {
    const Config *c = &((Trained *)f->impl)->m.cfg;
    if ((c->data != DATA_BROWN && c->data != DATA_TEXT) || id < 0 || id > BYTE_BOS || !len)
        return -1;
    if (id == BYTE_BOS) {
        int k = snprintf(buf, len, "<bos>");
        return k < (int)len ? k : (int)len - 1;
    }
    buf[0] = (char)id;
    return 1;
}

static const ForwardOps trained_ops = {t_plan,   t_prepare,     t_windows, t_probe,
                                       t_losses, t_close,       t_needle,  t_logits,
                                       NULL,     t_first_gates, t_encode,  t_piece};

static int fill_info(ForwardInfo *i, const RunMeta *meta, const Model *m) {
    memset(i, 0, sizeof *i);
    snprintf(i->variant, sizeof i->variant, "%s", meta->variant);
    snprintf(i->status, sizeof i->status, "%s", meta->status);
    snprintf(i->positions, sizeof i->positions, "%s", pos_name(m->cfg.pos));
    i->seq_len = i->stream_len = i->bucket_len = m->cfg.seq_len;
    i->learned_pos = m->cfg.pos == POS_LEARNED;
    i->max_pos = i->learned_pos ? m->cfg.max_pos : 0;
    i->max_len = i->learned_pos ? m->cfg.max_pos - m->dims.extra_pos : 0;
    i->yarn = m->cfg.pos == POS_ROPE; /* YaRN rescales RoPE's frequencies: nothing else */
    i->gated = m->cfg.gate_pos != GATE_NONE;
    i->gate_channels = model_gate_probe_channels(m, &i->gate_per_token);
    i->gate_bounded = i->gated && GATE_ACTS[m->cfg.gate_act].bounded;
    i->rope_dim = i->yarn ? m->dims.dh / config_rope_split(m->cfg.diff_attn) : 0;
    i->rope_base = m->cfg.rope_base;
    i->L = m->dims.L, i->H = m->dims.H, i->d = m->dims.d, i->V = m->dims.V;
    const int slots =
        uniform_slots(config_attention_slots(&m->cfg), config_attention_proxy(&m->cfg));
    i->layer_window = malloc((size_t)i->L * sizeof *i->layer_window);
    i->layer_slots = malloc((size_t)i->L * sizeof *i->layer_slots);
    for (int l = 0; i->layer_window && i->layer_slots && l < i->L; l++)
        i->layer_window[l] = config_layer_window(&m->cfg, l), i->layer_slots[l] = slots;
    if (i->layer_window && i->layer_slots) return 0;
    free(i->layer_window), free(i->layer_slots);
    i->layer_window = i->layer_slots = NULL;
    return -1;
}

Forward *forward_open_trained(const char *run, char *err, size_t errlen) {
    Forward *f = calloc(1, sizeof *f);
    Trained *t = calloc(1, sizeof *t);
    if (!f || !t) {
        free(f), free(t);
        seterr(err, errlen, "%s: out of memory", run);
        return NULL;
    }
    RunReader *rr = runread_open(run, err, errlen);
    int rc = rr ? runmodel_load(rr, run, &t->m, err, errlen) : -1;
    if (rc == 0 && data_files_load(rr, &t->rec, err, errlen) != 0) {
        model_free(&t->m);
        rc = -1;
    }
    if (rc == 0 && fill_info(&f->info, runread_meta(rr), &t->m) != 0) {
        model_free(&t->m);
        rc = seterr(err, errlen, "%s: out of memory", run);
    }
    if (rr) runread_close(rr);
    if (rc != 0) {
        free(f), free(t);
        return NULL;
    }
    f->ops = &trained_ops;
    f->run = run;
    f->impl = t;
    return f;
}
