/* forward_hf.c: the Forward of an inspected run (forward_open.h): the
 * checkpoint it was measured on (hf_model.h), windows of the input it
 * records (or another text), the probe every checkpoint shares
 * (hf_pass.h). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "forward_open.h"
#include "hf_bytelevel.h"
#include "hf_identity.h"
#include "hf_model.h"
#include "hf_pass.h"
#include "hf_steps.h" /* hf_layer_window */
#include "hf_tokenizer.h"
#include "inspect_input.h"
#include "metrics.h" /* uniform_slots */
#include "runfile_read.h"
#include "util.h"

#define STREAM_LEN_DEFAULT 512 /* stream's length on a checkpoint */

typedef struct {
    HfModel *m;
    char dir[1024], input[1024], kind[32];
    int recorded_input; /* input is the one the run records */
    HfWindows w;        /* the input's windows, loaded for wT tokens */
    int wT;
    float *logits; /* [T, V] of the prepared T: one window's at a time */
    int32_t *ids;  /* [B, T] */
    int B, T;
    HfTokenizer *tok; /* the checkpoint's tokenizer.json, loaded on first use */
    int bos_id;       /* the id the run's windows begin with (RS_PT_BOS_ID), or -1 */
} Hf;

/* The callbacks of losses' forward of B windows. */
typedef struct {
    float *cols;
    int B, T, V, H;
    const int *targets;
    float *tok_loss;
    int mean;
    double sum;
    long long cnt;
} LossCtx;

/* After each layer: each window's and head's first column, [B, H, T] at
 * the model's H, into cols (layer l's at l * B * H * T); the heads a
 * layer lacks (hf_layer_heads) NaN. */
static void col_feed(void *ctx, const ProbeLayer *o) {
    LossCtx *c = ctx;
    const size_t n = (size_t)c->H * o->T, k = (size_t)o->H * o->T;
    for (int b = 0; b < c->B; b++) {
        float *dst = c->cols + ((size_t)o->layer * c->B + b) * n;
        memcpy(dst, o->first_col + (size_t)b * k, k * sizeof(float));
        for (size_t i = k; i < n; i++) dst[i] = NAN;
    }
}

/* Window b's logits: its per-position losses and its sum, in window order. */
static int window_loss(void *ctx, int b, const float *logits, char *err, size_t errlen) {
    LossCtx *c = ctx;
    const int *tg = c->targets + (size_t)b * c->T;
    for (int t = 0; c->tok_loss && t < c->T; t++) {
        double s = 0.0;
        long long k = 0;
        if (hf_loss_sum(logits + (size_t)t * c->V, tg + t, 1, c->V, &s, &k) < 0)
            return seterr(err, errlen, "out of memory for the loss");
        c->tok_loss[(size_t)b * c->T + t] = k ? (float)s : 0.0f;
    }
    if (c->mean && hf_loss_sum(logits, tg, c->T, c->V, &c->sum, &c->cnt) < 0)
        return seterr(err, errlen, "out of memory for the loss");
    return 0;
}

static size_t sat_add(size_t a, size_t b) { return a > (size_t)-1 - b ? (size_t)-1 : a + b; }

/* A probe runs its windows one at a time (maps of M); losses runs its B
 * windows as one forward, their logits one window at a time. */
static int h_plan(Forward *f, int B, int T, int M, int probe_n, MemPlan *p, char *err,
                  size_t errlen) {
    Hf *h = f->impl;
    size_t probe = 0;
    (void)err, (void)errlen;
    memset(p, 0, sizeof *p);
    hf_model_pass_bytes(h->m, probe_n > 0 ? probe_n : 1, probe_n > 0 ? 1 : B, T, M, &p->params,
                        &p->activations, &probe);
    size_t tokens = (size_t)T * sizeof(int32_t) * (probe_n > 0 ? probe_n : B) * 3;
    size_t logits = (size_t)T * f->info.V * sizeof(float);
    p->activations = sat_add(sat_add(p->activations, logits), tokens);
    p->probe = probe_n > 0 ? probe : 0;
    p->total = sat_add(sat_add(p->params, p->activations), p->probe);
    return 0;
}

static int h_prepare(Forward *f, int B, int T, double yarn, char *err, size_t errlen) {
    Hf *h = f->impl;
    if (yarn != 1.0) return seterr(err, errlen, "%s: YaRN is for trained runs", f->run);
    free(h->logits), free(h->ids);
    h->logits = falloc((size_t)T * f->info.V);
    h->ids = malloc((size_t)B * T * sizeof *h->ids);
    h->B = B, h->T = T;
    if (!h->logits || !h->ids)
        return seterr(err, errlen, "%s: out of memory for the logits of %d tokens", f->run, T);
    return 0;
}

/* The input's windows of T tokens, at least n of them. */
static int load_windows(Forward *f, int T, int n, char *err, size_t errlen) {
    Hf *h = f->impl;
    const HfArch *a = hf_model_arch(h->m);
    struct stat st;
    if (h->wT == T && h->w.N >= n) return 0;
    if (h->recorded_input && stat(h->input, &st) != 0)
        return seterr(err, errlen, "%s: its recorded input %s is gone (moved or deleted)", f->run,
                      h->input);
    hf_windows_free(&h->w);
    memset(&h->w, 0, sizeof h->w);
    h->wT = 0;
    int bos_used,
        rc = !strcmp(h->kind, "tokens")
                 ? hf_windows_from_token_file(&h->w, h->input, T, -1, -1, a->V, err, errlen)
                 : hf_windows_from_text(&h->w, h->input, h->dir, T, -1, -1, a->bos_id, a->V,
                                        &bos_used, err, errlen);
    if (rc < 0) return -1;
    h->wT = T;
    if (h->w.N < n)
        return seterr(err, errlen, "%s: the input %s gives %d windows of %d tokens, not %d", f->run,
                      h->input, h->w.N, T, n);
    return 0;
}

static int h_windows(Forward *f, int T, int B, int nb, int i, int *ids, int *targets, char *err,
                     size_t errlen) {
    Hf *h = f->impl;
    if (load_windows(f, T, B * nb, err, errlen) != 0) return -1;
    for (int b = 0; b < B; b++) {
        const int32_t *w = h->w.ids + ((size_t)i * B + b) * T;
        for (int t = 0; t < T; t++) {
            ids[(size_t)b * T + t] = w[t];
            targets[(size_t)b * T + t] = t + 1 < T ? w[t + 1] : -1;
        }
    }
    return 0;
}

static int h_probe(Forward *f, const ForwardProbeIn *in, ProbeRecord *rec, double *loss,
                   long long *loss_n, char *err, size_t errlen) {
    Hf *h = f->impl;
    size_t n = (size_t)in->N * in->T;
    int32_t *ids = malloc(n * sizeof *ids);
    if (!ids) return seterr(err, errlen, "out of memory for the probe tokens");
    for (size_t i = 0; i < n; i++) ids[i] = (int32_t)in->tokens[i];
    HfPassIn pi = {
        .ids = ids, .N = in->N, .T = in->T, .M = in->M, .targets = in->targets, .iv = in->iv};
    HfPassOut po;
    int rc = hf_pass(h->m, &pi, rec, &po, err, errlen);
    if (rc == 0) rec->step = in->step;
    *loss = po.loss, *loss_n = po.loss_n;
    free(ids);
    return rc;
}

/* The B windows as one forward (docs/metrics.md "Quantized evaluation":
 * a fake quantization's pass is the batch, as a trained run's). */
static int h_losses(Forward *f, const int *ids, const int *targets, int B, int T,
                    const struct Intervention *iv, float *tok_loss, double *mean, float *cols,
                    char *err, size_t errlen) {
    Hf *h = f->impl;
    if (T > h->T || B > h->B)
        return seterr(err, errlen, "%s: %d windows of %d tokens, prepared for %d of %d", f->run, B,
                      T, h->B, h->T);
    for (size_t i = 0; i < (size_t)B * T; i++) h->ids[i] = (int32_t)ids[i];
    LossCtx c = {.cols = cols,
                 .B = B,
                 .T = T,
                 .V = f->info.V,
                 .H = f->info.H,
                 .targets = targets,
                 .tok_loss = tok_loss,
                 .mean = mean != NULL};
    HfRun run = {.B = B,
                 .iv = iv,
                 .fn = cols ? col_feed : NULL,
                 .ctx = &c,
                 .logits = h->logits,
                 .logits_fn = window_loss};
    if (hf_model_forward(h->m, h->ids, T, &run, err, errlen) < 0) return -1;
    if (mean) *mean = c.cnt ? c.sum / (double)c.cnt : NAN;
    return 0;
}

static void h_close(Forward *f) {
    Hf *h = f->impl;
    hf_windows_free(&h->w);
    hf_tokenizer_free(h->tok);
    free(h->logits), free(h->ids);
    hf_model_close(h->m);
    free(h);
    free(f);
}

/* The input's windows of T tokens (0: it gives none, e.g. lines shorter). */
static int h_avail(Forward *f, int T) {
    char err[512];
    Hf *h = f->impl;
    return load_windows(f, T, 0, err, sizeof err) == 0 ? h->w.N : 0;
}

/* first_gates' callback: where layer 0's scores of B windows go, C of
 * them a window (the model's gate channels). */
typedef struct {
    float *scores;
    int B, C;
} GateCtx;

/* After layer 0: the B windows' gate scores [B, T = 1, C] into the ctx;
 * the channels of heads layer 0 lacks NaN. */
static void gate_feed(void *ctx, const ProbeLayer *o) {
    const GateCtx *g = ctx;
    if (o->layer != 0) return;
    for (size_t r = 0; r < (size_t)g->B * o->T; r++) {
        float *dst = g->scores + r * g->C;
        memcpy(dst, o->gates + r * o->C, (size_t)o->C * sizeof(float));
        for (int c = o->C; c < g->C; c++) dst[c] = NAN;
    }
}

/* The B one-token windows through layer 0 only. A checkpoint runs each
 * window's linear layers as products of their own (hf_model.h), which for
 * one-token windows costs a pass over every weight per token; so where no
 * position enters layer 0's gate (RoPE rotates q and k only, after the
 * gate rows are split off; no learned positions) the B tokens run as the
 * rows of one window: row t's gate reads its own normed embedding alone,
 * the scores of the token at position 0. */
static int h_first_gates(Forward *f, const int *ids, int B, float *scores, char *err,
                         size_t errlen) {
    Hf *h = f->impl;
    if (B > h->B) return seterr(err, errlen, "%s: %d windows, prepared for %d", f->run, B, h->B);
    for (int b = 0; b < B; b++) h->ids[b] = (int32_t)ids[b];
    const int rows = f->info.learned_pos ? 1 : B;
    GateCtx g = {scores, B / rows, f->info.gate_channels};
    HfRun run = {.B = B / rows, .fn = gate_feed, .ctx = &g, .layers = 1};
    return hf_model_forward(h->m, h->ids, rows, &run, err, errlen) < 0 ? -1 : 0;
}

/* The checkpoint's tokenizer.json, loaded once; -1 naming --tokens when
 * it has none or gatelab cannot read it. */
static int load_tok(Forward *f, char *err, size_t errlen) {
    Hf *h = f->impl;
    char path[1100], why[512];
    if (h->tok) return 0;
    snprintf(path, sizeof path, "%s/tokenizer.json", h->dir);
    if (hf_tokenizer_load(&h->tok, path, why, sizeof why) == 0) return 0;
    h->tok = NULL;
    return seterr(err, errlen,
                  "%s: no text tokenizer for its checkpoint (%s); give token ids with "
                  "--tokens ID,ID,...",
                  f->run, why);
}

/* Text through the checkpoint's tokenizer.json, the run's BOS first as
 * inspect put it first in every window. */
static int h_encode(Forward *f, const char *text, size_t len, int **ids, int *n, char *err,
                    size_t errlen) {
    Hf *h = f->impl;
    int32_t *raw = NULL;
    size_t k = 0;
    *ids = NULL, *n = 0;
    if (load_tok(f, err, errlen) != 0) return -1;
    if (hf_tokenizer_encode(h->tok, text, len, 0, &raw, &k, err, errlen) < 0) return -1;
    const int b = h->bos_id >= 0;
    if (k > (size_t)(1 << 24)) {
        free(raw);
        return seterr(err, errlen, "%s: the text is too long", f->run);
    }
    if (!(*ids = malloc((k + (size_t)b) * sizeof **ids))) {
        free(raw);
        return seterr(err, errlen, "out of memory for the tokens");
    }
    if (b) (*ids)[0] = h->bos_id;
    for (size_t i = 0; i < k; i++) (*ids)[i + (size_t)b] = raw[i];
    *n = (int)k + b;
    free(raw);
    return 0;
}

static int h_piece(Forward *f, int id, char *buf, size_t len) {
    Hf *h = f->impl;
    char err[16];
    size_t k = 0;
    if (!len || load_tok(f, err, sizeof err) != 0) return -1;
    const char *s = hf_tokenizer_token_text(h->tok, (int32_t)id, &k);
    if (!s) return -1;
    /* the bytes a byte-level entry spells ("\xc4\xa0the": " the"); an
     * added token outside the map ("<s> x") as the file spells it */
    char *raw = malloc(k ? k : 1);
    size_t m = 0;
    if (raw && hf_bytelevel_unmap(s, k, raw, &m) == 0) s = raw, k = m;
    if (k > len) k = len;
    memcpy(buf, s, k);
    free(raw);
    return (int)k;
}

static const ForwardOps hf_ops = {h_plan, h_prepare, h_windows, h_probe,       h_losses, h_close,
                                  NULL,   NULL,      h_avail,   h_first_gates, h_encode, h_piece};

static int fill_info(ForwardInfo *i, const HfArch *a, const RunMeta *meta, int probe_T) {
    memset(i, 0, sizeof *i);
    i->checkpoint = 1;
    snprintf(i->variant, sizeof i->variant, "%s", meta->variant);
    snprintf(i->status, sizeof i->status, "%s", meta->status);
    i->learned_pos = a->rotary_dim == 0;
    snprintf(i->positions, sizeof i->positions, "%s", i->learned_pos ? "learned" : "RoPE");
    i->seq_len = probe_T;
    i->stream_len = STREAM_LEN_DEFAULT;
    i->max_len = i->max_pos = a->max_pos > 0 ? a->max_pos : 0;
    i->L = a->L, i->H = a->H, i->d = a->d, i->V = a->V;
    i->gated = a->gate != HF_GATE_NONE;
    i->gate_channels = a->H * hf_gate_per_head(a);
    i->gate_per_token = i->gated;
    i->gate_bounded = i->gated && !a->gate_softplus; /* sigmoid in [0, 1]; softplus unbounded */
    i->layer_window = malloc((size_t)a->L * sizeof *i->layer_window);
    i->layer_slots = malloc((size_t)a->L * sizeof *i->layer_slots);
    for (int l = 0; i->layer_window && i->layer_slots && l < a->L; l++) {
        i->layer_window[l] = hf_layer_window(a, l);
        i->layer_slots[l] = uniform_slots(hf_layer_sinks(a, l), 0); /* never the proxy */
    }
    if (i->layer_window && i->layer_slots && hf_heads_vary(a)) {
        i->layer_heads = malloc((size_t)a->L * sizeof *i->layer_heads);
        for (int l = 0; i->layer_heads && l < a->L; l++) i->layer_heads[l] = hf_layer_heads(a, l);
    }
    if (i->layer_window && i->layer_slots && (i->layer_heads || !hf_heads_vary(a))) return 0;
    free(i->layer_window), free(i->layer_slots), free(i->layer_heads);
    i->layer_window = i->layer_slots = i->layer_heads = NULL;
    return -1;
}

/* The opened checkpoint against the one the run measured: its recorded
 * config.json's architecture and shape, then its identity when recorded. */
static int same_checkpoint(const char *run, const Hf *h, const ForwardSource *src, char *err,
                           size_t errlen) {
    HfArch rec;
    char what[512];
    if (hf_config_parse(&rec, src->config_json, strlen(src->config_json), run, err, errlen) < 0)
        return -1;
    if (hf_arch_diff(hf_model_arch(h->m), &rec, what, sizeof what))
        return seterr(err, errlen, "%s: the checkpoint %s is not the one this run measured: %s",
                      run, h->dir, what);
    if (!src->identity) return 0;
    char *cur = hf_model_identity(h->m);
    if (!cur) return seterr(err, errlen, "out of memory");
    int diff = hf_identity_diff(src->identity, cur, what, sizeof what);
    free(cur);
    if (diff)
        return seterr(err, errlen,
                      "%s: the checkpoint %s differs from the one this run measured: %s", run,
                      h->dir, what);
    return 0;
}

Forward *forward_open_hf(const char *run, const ForwardSource *src, char *err, size_t errlen) {
    Forward *f = calloc(1, sizeof *f);
    Hf *h = calloc(1, sizeof *h);
    if (!f || !h) {
        free(f), free(h);
        seterr(err, errlen, "%s: out of memory", run);
        return NULL;
    }
    f->ops = &hf_ops, f->run = run, f->impl = h;
    snprintf(h->dir, sizeof h->dir, "%s", src->model_dir);
    snprintf(h->input, sizeof h->input, "%s", src->input);
    snprintf(h->kind, sizeof h->kind, "%s", src->input_kind);
    h->recorded_input = src->recorded_input;
    h->bos_id = src->bos_id;
    struct stat st;
    if (src->recorded_dir && stat(h->dir, &st) != 0) {
        seterr(err, errlen, "%s: its checkpoint %s is gone (moved or deleted)", run, h->dir);
        free(h), free(f);
        return NULL;
    }
    if (hf_model_open(&h->m, h->dir, src->threads, err, errlen) < 0) {
        free(h), free(f);
        return NULL;
    }
    if (same_checkpoint(run, h, src, err, errlen) != 0) {
        hf_model_close(h->m);
        free(h), free(f);
        return NULL;
    }
    if (fill_info(&f->info, hf_model_arch(h->m), &src->meta, src->probe_T) != 0) {
        seterr(err, errlen, "%s: out of memory", run);
        hf_model_close(h->m);
        free(h), free(f);
        return NULL;
    }
    return f;
}
