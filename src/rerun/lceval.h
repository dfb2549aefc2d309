/* lceval.h: long-context evaluation of a finished run (gatelab eval).
 *
 * The model is rebuilt from the run file's own config and final weights,
 * then scored on the same held-out batches (a fixed data seed, so every run
 * and variant sees the same text) at each requested length L, with plain
 * RoPE or with YaRN at scale L / seq_len. Nothing here writes the run file:
 * the caller stores the results (runfile_write_lceval). */
#ifndef GATELAB_LCEVAL_H
#define GATELAB_LCEVAL_H

#include <stddef.h>

#define LCEVAL_MAX_LENGTHS 16
#define LCEVAL_SEED 20250601ULL /* held-out batches: same for every run */

typedef struct {
    int lengths[LCEVAL_MAX_LENGTHS];
    int n_lengths;
    int yarn;       /* 1: YaRN with scale L / seq_len when L > seq_len */
    int batches;    /* held-out batches per length */
    int batch_size; /* sequences per batch */
    int threads;    /* 0: keep the run's setting */
} LcEvalOpts;

typedef struct {
    int len, train_len;
    double yarn_scale;
    double val_loss, ppl;
    double first_share;   /* mean over layers, heads, sequences */
    double uniform_share; /* uniform causal attention's share at len */
    double sink_rate;     /* metrics.h sink_rate: per sequence, layer and head */
    long long n_seqs;
    int n_buckets;          /* ceil(len / train_len) */
    double *loss_by_bucket; /* malloc'd [n_buckets] */
} LcEvalResult;

/* Facts about the run, read before evaluating. */
typedef struct {
    int seq_len, max_pos, learned_pos, extra_pos;
    char variant[256];
    char status[32];
} LcEvalRunInfo;

/* Evaluate run_path at every length in o (results in out[o->n_lengths]).
 * -1 with a one-line reason: unreadable run, no weights, shape mismatch
 * (naming the tensor), a length a learned position table cannot reach,
 * missing data. */
int lceval_run(const char *run_path, const LcEvalOpts *o, LcEvalResult *out, LcEvalRunInfo *info,
               char *err, size_t errlen);
void lceval_result_free(LcEvalResult *r);

/* The YaRN scale used at length L for training length T. */
double lceval_yarn_scale(int L, int T, int yarn);

#endif
