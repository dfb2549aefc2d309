/* lceval.h: long-context evaluation of a model (gatelab eval), over a
 * Forward (forward.h): a trained run's or an inspected checkpoint's.
 *
 * At each requested length L the model is scored on the same held-out
 * windows (a trained run: a fixed data seed, so every run and variant sees
 * the same text; a checkpoint: the input its run records), with plain
 * positions or, for a trained run, YaRN at scale L / seq_len. Nothing here
 * writes the run file: the caller stores the results
 * (runfile_write_lceval). */
#ifndef GATELAB_LCEVAL_H
#define GATELAB_LCEVAL_H

#include <stddef.h>

#include "forward.h"

#define LCEVAL_MAX_LENGTHS 16
#define LCEVAL_SEED 20250601ULL /* held-out batches: same for every run */
/* The needle task's depths (data.h data_needle_batch): the same rows,
 * key and value at each, only the needle moved. */
#define LCEVAL_NEEDLE_DEPTHS 5
extern const double LCEVAL_NEEDLE_DEPTH[LCEVAL_NEEDLE_DEPTHS];

typedef struct {
    int lengths[LCEVAL_MAX_LENGTHS];
    int n_lengths;
    int yarn;       /* 1: YaRN with scale L / seq_len when L > seq_len */
    int batches;    /* held-out batches per length */
    int batch_size; /* sequences per batch */
    int needle;     /* 1: also the needle task, batches x batch_size rows per depth */
} LcEvalOpts;

typedef struct {
    int len, train_len; /* train_len: the loss buckets' width */
    double yarn_scale;
    double val_loss, ppl;
    double first_share;   /* mean over layers, heads, sequences */
    double uniform_share; /* uniform attention's share at len under each layer's window, with
                             each layer's slots, each layer weighted by its query heads as
                             first_share is (metrics.h uniform_share_layers) */
    double sink_rate;     /* metrics.h sink_rate: per sequence, layer and head */
    long long n_seqs;
    int n_buckets;                           /* ceil(len / train_len) */
    double *loss_by_bucket;                  /* malloc'd [n_buckets] */
    int n_depths;                            /* LCEVAL_NEEDLE_DEPTHS with needle, else 0 */
    double needle_acc[LCEVAL_NEEDLE_DEPTHS]; /* exact-match share per depth */
    long long needle_n;                      /* rows per depth */
} LcEvalResult;

/* Evaluate f at every length in o (results in out[o->n_lengths]). Every
 * length is checked (its positions, the memory plan) before the first is
 * run. -1 with a one-line reason: a bad option, a length the positions
 * cannot reach, too little memory or input, an interrupt. */
int lceval_run(Forward *f, const LcEvalOpts *o, LcEvalResult *out, char *err, size_t errlen);

/* lceval_run's checks alone (every option and length, the memory plan),
 * running nothing: 0, or -1 with the line lceval_run would give. */
int lceval_check(Forward *f, const LcEvalOpts *o, char *err, size_t errlen);
void lceval_result_free(LcEvalResult *r);

/* 0 when YaRN is testable on f: it keeps at least one rotary pair (ops.h
 * yarn_split at the training length); else -1 with one line naming the
 * fastest pair's turns and the training length that would keep it. */
int lceval_yarn_check(const Forward *f, char *err, size_t errlen);

/* The YaRN scale used at length L for training length T. */
double lceval_yarn_scale(int L, int T, int yarn);

#endif
