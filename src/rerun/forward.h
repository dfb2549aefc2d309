/* forward.h: the one way the rerun tools (eval, intervene, stream) reach a
 * model, whatever its weights come from: a trained run's final weights
 * (forward_trained.c) or the Hugging Face checkpoint an inspected run was
 * measured on (forward_hf.c); forward_open.h picks one. A Forward is opened on a run
 * file, sized for the windows about to run (plan, then prepare), and then
 * gives windows of the run's held-out input, the probe of windows (with
 * the loss) and per-token losses with each head's first attention column.
 * Every metric the tools report is computed over these by one function
 * (lceval.c, intervene.c, stream.c with metrics.h), so both weight sources
 * mean the same by each number. */
#ifndef GATELAB_FORWARD_H
#define GATELAB_FORWARD_H

#include <stddef.h>

#include "memplan.h"
#include "runschema.h"

struct Intervention;
typedef struct Forward Forward;

/* What the tools need to know of the model before they run it. */
typedef struct {
    int checkpoint; /* 1: a Hugging Face checkpoint, 0: a trained run */
    char variant[256];
    char status[32];
    char positions[32]; /* how positions are encoded: "RoPE", "learned", "none", "ALiBi" */
    int seq_len;        /* trained: the training length; checkpoint: the probe's */
    int stream_len;     /* stream's default length */
    int bucket_len;     /* eval's loss buckets: every bucket_len positions (0: one) */
    int max_len;        /* the longest window the positions reach (0: no bound) */
    int max_pos;        /* the position table's size, for messages (0: none) */
    int learned_pos;    /* 1: positions are a learned table (no extrapolation) */
    int yarn;           /* 1: YaRN scaling can be applied */
    int gated;          /* 1: the attention has gates (gate_pos, a gated checkpoint) */
    int gate_channels;  /* scores per token first_gates gives (0: no gate) */
    int gate_per_token; /* 1: the scores read the token (0: g1-const's constant) */
    int gate_bounded;   /* 1: the scores lie in [0, 1] (the activation's GATE_ACTS row) */
    int rope_dim;       /* RoPE: the width of each rotation (0: no RoPE) */
    double rope_base;   /* RoPE: its base */
    int L, H, d, V;     /* layers, query heads, model width, vocabulary */
    int *layer_window;  /* [L]: the keys a query of layer l sees (0: full causal): a trained
                           run's config_layer_window, a checkpoint's hf_layer_window; the
                           Forward owns it (forward_close frees it) */
    int *layer_slots;   /* [L]: the slots layer l's uniform reference counts (metrics.h
                           uniform_slots): a trained run's config_attention_slots, a
                           checkpoint's hf_layer_sinks; the Forward owns it */
    int *layer_heads;   /* [L]: layer l's query heads where some layer has fewer than H (a
                           checkpoint's hf_layer_heads; the heads h >= layer_heads[l] of its
                           [.., H, ..] columns are NaN), or NULL: H every layer; the Forward
                           owns it */
} ForwardInfo;

/* Layer l's query heads (fi->layer_heads[l], or H). */
int forward_layer_heads(const ForwardInfo *fi, int l);
/* Layer l's own gate channels, the first of the gate_channels a window's
 * scores hold (probe_layer_channels: all of them without layer_heads; a
 * checkpoint's gate, the only one with layer_heads, is never head-shared). */
int forward_layer_channels(const ForwardInfo *fi, int l);

/* One probe pass's input: N windows of T tokens (T <= the prepared T). */
typedef struct {
    const int *tokens;  /* [N, T] */
    const int *targets; /* [N, T], -1: not counted */
    int N, T, M;        /* M <= T: positions whose full maps are kept */
    const struct Intervention *iv;
    long long step; /* the record's step */
} ForwardProbeIn;

/* The operations of a weight source; each returns 0, or -1 with one line
 * in err (close: nothing). */
typedef struct {
    /* The bytes B windows of T tokens (M of them with full maps, and a
     * probe of N windows when probe_n > 0) will allocate, into *p. */
    int (*plan)(Forward *f, int B, int T, int M, int probe_n, MemPlan *p, char *err, size_t errlen);
    /* Allocate for up to B windows of T tokens at YaRN scale `yarn` (1: none). */
    int (*prepare)(Forward *f, int B, int T, double yarn, char *err, size_t errlen);
    /* Batch i of nb batches of B held-out windows of T tokens: ids and
     * targets [B, T] (the next token, -1 where none). */
    int (*windows)(Forward *f, int T, int B, int nb, int i, int *ids, int *targets, char *err,
                   size_t errlen);
    /* The probe of in into rec (free with runread_probe_free), the mean
     * loss over its targets and their count. */
    int (*probe)(Forward *f, const ForwardProbeIn *in, ProbeRecord *rec, double *loss,
                 long long *loss_n, char *err, size_t errlen);
    /* B windows ids[B, T] under iv (NULL: plain): each position's loss into
     * tok_loss[B * T] (or NULL; 0 where targets is -1), the model's mean
     * loss into *mean (or NULL) and, when cols is not NULL, each head's
     * first attention column A[t, 0] over the real tokens into
     * cols[((l * B + b) * H + h) * T + t], read through the Gu et al.
     * proxy where rows need not sum to one. */
    int (*losses)(Forward *f, const int *ids, const int *targets, int B, int T,
                  const struct Intervention *iv, float *tok_loss, double *mean, float *cols,
                  char *err, size_t errlen);
    void (*close)(Forward *f);
    /* Batch i of B needle rows of T tokens at depth (data.h
     * data_needle_batch, the held-out seed of windows); -1 with one line
     * where the run's data has no needle task. NULL: no needle task
     * (checkpoints). */
    int (*needle)(Forward *f, int T, int B, int i, double depth, int *ids, int *targets, char *err,
                  size_t errlen);
    /* The logits [B, T, V] of the last losses call (with needle). */
    const float *(*logits)(Forward *f);
    /* How many windows of T tokens the input gives (0 when none, e.g. a
     * token file's line is shorter). NULL: as many as asked (a trained
     * run's held-out split). */
    int (*avail)(Forward *f, int T);
    /* B one-token windows, window b the token ids[b] (B <= the prepared
     * B, prepared for T >= 1): layer 0's activated gate scores at that
     * token, info.gate_channels of them per window, into scores[B, C]
     * (head-shared gates: the applied, head-averaged scores). Nothing past
     * layer 0's gate is computed. For a gated model whose scores read the
     * token (info.gate_per_token). */
    int (*first_gates)(Forward *f, const int *ids, int B, float *scores, char *err, size_t errlen);
    /* text[len] (any bytes) as the model's input ids, the BOS its source
     * puts first included (a trained byte-level run's BOS when bos is on,
     * an inspected run's recorded bos_id), into a malloc'd *ids of *n.
     * -1 with one line where the source has no text tokenizer (a bigram
     * or token-file run; a checkpoint without tokenizer.json): the line
     * names --tokens. NULL: no tokenizer. */
    int (*encode)(Forward *f, const char *text, size_t len, int **ids, int *n, char *err,
                  size_t errlen);
    /* The bytes token id stands for (a byte-level run's byte or "<bos>";
     * a tokenizer.json entry's bytes, its byte-level spelling undone, or
     * an added token as the file spells it) into buf (not NUL-terminated,
     * cut at len); the count, or -1 when the source has no spelling for
     * it (the caller shows the id). NULL: none. */
    int (*piece)(Forward *f, int id, char *buf, size_t len);
} ForwardOps;

struct Forward {
    const ForwardOps *ops;
    ForwardInfo info;
    const char *run; /* the run file's path, for messages */
    void *impl;
};

/* A trained run's model from its own config and final weights
 * (runmodel.h), on the threads its config names. NULL with one line in
 * err. */
Forward *forward_open_trained(const char *run, char *err, size_t errlen);

/* Close and free f (NULL: nothing). */
void forward_close(Forward *f);

/* 0 when B windows of T tokens (M with maps, a probe of probe_n) fit the
 * memory plan's limit, else -1 with memplan_check's line naming `what`. */
int forward_check_memory(Forward *f, int B, int T, int M, int probe_n, const char *what, char *err,
                         size_t errlen);

/* 0 when a window of T tokens lies within the model's positions, else -1
 * naming the run, the length and the table. */
int forward_check_len(const Forward *f, int T, char *err, size_t errlen);

/* How many windows of T tokens f's input gives: INT_MAX when unbounded (a
 * trained run), else the avail op's count. */
int forward_avail(Forward *f, int T);

#endif
