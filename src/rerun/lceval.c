/* lceval.c: long-context evaluation over a Forward (see lceval.h). The
 * loss, the first-token share and the sink rate are derived here once,
 * from the per-token losses and first attention columns either weight
 * source gives (forward.h), with metrics.h's definitions. */
#include "lceval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h" /* the needle task */
#include "metrics.h"
#include "ops.h" /* yarn_split */
#include "stop.h"
#include "util.h"

const double LCEVAL_NEEDLE_DEPTH[LCEVAL_NEEDLE_DEPTHS] = {0.0, 0.25, 0.5, 0.75, 1.0};

double lceval_yarn_scale(int L, int T, int yarn) {
    return yarn && L > T ? (double)L / (double)T : 1.0;
}

int lceval_yarn_check(const Forward *f, char *err, size_t errlen) {
    const ForwardInfo *fi = &f->info;
    YarnSplit s = yarn_split(fi->rope_dim, fi->rope_base, fi->seq_len, NULL);
    if (s.kept > 0) return 0;
    return seterr(err, errlen,
                  "%s: YaRN is untestable here: it keeps no rotary pair (the fastest turns %.1f "
                  "times within T_train %d, YaRN keeps pairs at >= " YARN_BETA_TEXT
                  "); train with seq_len >= %d, or evaluate plain RoPE",
                  f->run, s.fastest, fi->seq_len, yarn_keep_len());
}

void lceval_result_free(LcEvalResult *r) {
    free(r->loss_by_bucket);
    r->loss_by_bucket = NULL;
}

/* Attention sums over the batches: first-token share and alpha_0 per
 * (sequence, layer, head). */
typedef struct {
    double share_sum, sinks;
    long long share_n;
} AttnAcc;

static void acc_attention(AttnAcc *a, const ForwardInfo *fi, const float *cols, int B, int T) {
    for (int l = 0; l < fi->L; l++)
        for (int b = 0; b < B; b++)
            for (int h = 0; h < forward_layer_heads(fi, l); h++) { /* the layer's own */
                const float *col = cols + (((size_t)l * B + b) * fi->H + h) * T;
                a->share_sum += first_share_from_col(col, T);
                a->share_n++;
                a->sinks += sink_rate(col, 1, T, SINK_LEN, SINK_EPS);
            }
}

/* Loss sums overall and per bucket of tl positions. */
static void acc_loss(const float *tok_loss, const int *targets, int B, int T, int V, int tl,
                     double *bsum, long long *bcnt, double *sum, long long *cnt) {
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            size_t n = (size_t)b * T + t;
            if (targets[n] < 0 || targets[n] >= V) continue;
            double l = tok_loss[n];
            bsum[t / tl] += l;
            bcnt[t / tl]++;
            *sum += l;
            (*cnt)++;
        }
}

typedef struct {
    int *in, *tg;
    float *tok_loss, *cols;
    double *bsum;
    long long *bcnt;
} EvalBufs;

static void bufs_free(EvalBufs *b) {
    free(b->in), free(b->tg), free(b->tok_loss), free(b->cols), free(b->bsum), free(b->bcnt);
}

static int bufs_alloc(EvalBufs *b, const ForwardInfo *fi, int B, int L, int n_buckets) {
    const size_t n = (size_t)B * L;
    b->in = malloc(n * sizeof(int)), b->tg = malloc(n * sizeof(int));
    b->tok_loss = malloc(n * sizeof(float));
    b->cols = malloc(n * (size_t)fi->L * fi->H * sizeof(float));
    b->bsum = calloc((size_t)n_buckets, sizeof(double));
    b->bcnt = calloc((size_t)n_buckets, sizeof(long long));
    return b->in && b->tg && b->tok_loss && b->cols && b->bsum && b->bcnt ? 0 : -1;
}

/* The needle task at length L (prepared): per depth, the share of rows
 * whose value the model reproduces exactly (metrics.h exact_match on the
 * last NEEDLE_VAL_LEN positions). */
static int eval_needle(Forward *f, const LcEvalOpts *o, int L, LcEvalResult *r, int *in, int *tg,
                       char *err, size_t errlen) {
    const int B = o->batch_size, V = f->info.V, a0 = L - NEEDLE_VAL_LEN;
    r->n_depths = LCEVAL_NEEDLE_DEPTHS;
    r->needle_n = (long long)o->batches * B;
    for (int d = 0; d < LCEVAL_NEEDLE_DEPTHS; d++) {
        long long hits = 0;
        for (int i = 0; i < o->batches; i++) {
            if (stop_requested()) return seterr(err, errlen, "interrupted evaluating length %d", L);
            if (f->ops->needle(f, L, B, i, LCEVAL_NEEDLE_DEPTH[d], in, tg, err, errlen) != 0 ||
                f->ops->losses(f, in, tg, B, L, NULL, NULL, NULL, NULL, err, errlen) != 0)
                return -1;
            const float *lg = f->ops->logits(f);
            for (int b = 0; b < B; b++) {
                size_t at = (size_t)b * L + a0;
                hits += exact_match(lg + at * V, V, tg + at, NEEDLE_VAL_LEN);
            }
        }
        r->needle_acc[d] = (double)hits / (double)r->needle_n;
    }
    return 0;
}

static int eval_length(Forward *f, const LcEvalOpts *o, int L, LcEvalResult *r, char *err,
                       size_t errlen) {
    const ForwardInfo *fi = &f->info;
    const int B = o->batch_size, T0 = fi->bucket_len > 0 ? fi->bucket_len : L;
    memset(r, 0, sizeof *r);
    r->len = L;
    r->train_len = T0;
    r->yarn_scale = lceval_yarn_scale(L, T0, o->yarn);
    r->n_buckets = (L + T0 - 1) / T0;
    if (f->ops->prepare(f, B, L, r->yarn_scale, err, errlen) != 0) return -1;
    EvalBufs b = {0};
    r->loss_by_bucket = malloc((size_t)r->n_buckets * sizeof(double));
    int rc = 0;
    if (bufs_alloc(&b, fi, B, L, r->n_buckets) != 0 || !r->loss_by_bucket)
        rc = seterr(err, errlen, "out of memory evaluating length %d", L);
    AttnAcc a = {0};
    double sum = 0.0;
    long long cnt = 0;
    for (int i = 0; rc == 0 && i < o->batches; i++) {
        if (stop_requested()) {
            rc = seterr(err, errlen, "interrupted evaluating length %d", L);
            break;
        }
        rc = f->ops->windows(f, L, B, o->batches, i, b.in, b.tg, err, errlen);
        if (rc == 0)
            rc = f->ops->losses(f, b.in, b.tg, B, L, NULL, b.tok_loss, NULL, b.cols, err, errlen);
        if (rc != 0) break;
        acc_loss(b.tok_loss, b.tg, B, L, fi->V, T0, b.bsum, b.bcnt, &sum, &cnt);
        acc_attention(&a, fi, b.cols, B, L);
    }
    if (rc == 0 && o->needle) rc = eval_needle(f, o, L, r, b.in, b.tg, err, errlen);
    if (rc == 0) {
        r->n_seqs = (long long)o->batches * B;
        r->val_loss = cnt ? sum / (double)cnt : NAN;
        r->ppl = exp(r->val_loss);
        for (int k = 0; k < r->n_buckets; k++)
            r->loss_by_bucket[k] = b.bcnt[k] ? b.bsum[k] / (double)b.bcnt[k] : NAN;
        r->first_share = a.share_n ? a.share_sum / (double)a.share_n : NAN;
        r->uniform_share =
            uniform_share_layers(fi->layer_window, fi->layer_slots, fi->layer_heads, fi->L, L);
        r->sink_rate = a.share_n ? a.sinks / (double)a.share_n : NAN;
    } else {
        lceval_result_free(r);
    }
    bufs_free(&b);
    return rc;
}

/* Whether the needle task (when asked) can run at length L: one row made
 * and dropped. */
static int needle_check(Forward *f, const LcEvalOpts *o, int L, char *err, size_t errlen) {
    if (!o->needle) return 0;
    if (!f->ops->needle)
        return seterr(err, errlen, "%s: --needle scores trained runs on byte text only", f->run);
    int *in = malloc((size_t)L * sizeof *in), *tg = malloc((size_t)L * sizeof *tg);
    int rc = in && tg ? f->ops->needle(f, L, 1, 0, 0.0, in, tg, err, errlen)
                      : seterr(err, errlen, "out of memory evaluating length %d", L);
    free(in), free(tg);
    return rc;
}

int lceval_check(Forward *f, const LcEvalOpts *o, char *err, size_t errlen) {
    if (o->n_lengths < 1 || o->n_lengths > LCEVAL_MAX_LENGTHS)
        return seterr(err, errlen, "need 1..%d lengths, got %d", LCEVAL_MAX_LENGTHS, o->n_lengths);
    if (o->batches < 1 || o->batch_size < 1)
        return seterr(err, errlen, "--batches and --batch-size must be positive");
    if (o->yarn && !f->info.yarn)
        return seterr(err, errlen,
                      "%s: --yarn rescales RoPE, for trained runs with RoPE positions "
                      "(this one's: %s)",
                      f->run, f->info.positions);
    if (o->yarn && lceval_yarn_check(f, err, errlen) != 0) return -1;
    for (int i = 0; i < o->n_lengths; i++) {
        int L = o->lengths[i];
        if (L < 2) return seterr(err, errlen, "length %d is too short (need >= 2)", L);
        char what[96];
        snprintf(what, sizeof what, "length %d with --batch-size %d", L, o->batch_size);
        if (forward_check_memory(f, o->batch_size, L, 0, 0, what, err, errlen) != 0 ||
            forward_check_len(f, L, err, errlen) != 0 || needle_check(f, o, L, err, errlen) != 0)
            return -1;
    }
    return 0;
}

int lceval_run(Forward *f, const LcEvalOpts *o, LcEvalResult *out, char *err, size_t errlen) {
    int rc = lceval_check(f, o, err, errlen), done = 0;
    for (; rc == 0 && done < o->n_lengths; done++)
        if (eval_length(f, o, o->lengths[done], &out[done], err, errlen) != 0) rc = -1;
    /* eval_length frees its own result on failure; free the earlier ones */
    if (rc != 0)
        for (int i = 0; i < done - 1; i++) lceval_result_free(&out[i]);
    return rc;
}
