/* lceval.c: long-context evaluation (see lceval.h).
 *
 * Attention statistics follow the trainer's probe (probe.c): with a sink
 * token its row and column are dropped so the "first token" is the first
 * real one, and normalisers whose rows need not sum to one are read through
 * the Gu et al. proxy |a| / sum |a|. */
#include "lceval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "runfile_read.h"
#include "config_args.h"
#include "config.h"
#include "config_derive.h"
#include "data.h"
#include "memplan.h"
#include "stop.h"
#include "model.h"
#include "runmodel.h"
#include "util.h"

double lceval_yarn_scale(int L, int T, int yarn) {
    return yarn && L > T ? (double)L / (double)T : 1.0;
}

void lceval_result_free(LcEvalResult *r) {
    free(r->loss_by_bucket);
    r->loss_by_bucket = NULL;
}

/* ---- the model, from the run file's own config and weights ---- */

static int load_model(const char *path, Model *m, LcEvalRunInfo *info, char *err, size_t errlen) {
    RunReader *rr = runread_open(path, err, errlen);
    if (!rr) return -1;
    const RunMeta *meta = runread_meta(rr);
    snprintf(info->status, sizeof info->status, "%s", meta->status);
    snprintf(info->variant, sizeof info->variant, "%s", meta->variant);
    int rc = runmodel_load(rr, path, m, err, errlen);
    runread_close(rr);
    if (rc != 0) return -1;
    info->seq_len = m->cfg.seq_len;
    info->max_pos = m->cfg.max_pos;
    info->learned_pos = m->cfg.pos == POS_LEARNED;
    info->extra_pos = m->dims.extra_pos;
    return 0;
}

/* ---- one length ---- */

static int uses_proxy(const Config *c) { return config_attention_proxy(c); }

/* Attention sums over one forward: first-token share and alpha_0 per (l,h). */
typedef struct {
    float *map; /* [T, T] scratch */
    float *col; /* [T] its first column */
    double share_sum, sinks;
    long long share_n;
} AttnAcc;

static void acc_attention(AttnAcc *a, const Model *m, const RunState *s, int B, int T) {
    const int e = m->dims.extra_pos, Ti = T + e, H = m->dims.H;
    for (int l = 0; l < m->dims.L; l++) {
        const float *att = model_attention(s, l);
        for (int b = 0; b < B; b++)
            for (int h = 0; h < H; h++) {
                const float *A = att + ((size_t)b * H + h) * (size_t)Ti * Ti;
                for (int t = 0; t < T; t++)
                    memcpy(a->map + (size_t)t * T, A + (size_t)(t + e) * Ti + e,
                           (size_t)T * sizeof(float));
                if (uses_proxy(&m->cfg)) attention_proxy(a->map, T);
                a->share_sum += first_token_share(a->map, T);
                a->share_n++;
                for (int t = 0; t < T; t++) a->col[t] = a->map[(size_t)t * T];
                a->sinks += sink_rate(a->col, 1, T, SINK_LEN, SINK_EPS);
            }
    }
}

/* Loss sums overall and per bucket of train_len positions. */
static void acc_loss(const RunState *s, const int *targets, int B, int T, int V, int tl,
                     double *bsum, long long *bcnt, double *sum, long long *cnt) {
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            size_t n = (size_t)b * T + t;
            if (targets[n] < 0 || targets[n] >= V) continue;
            double l = s->losses[n];
            bsum[t / tl] += l;
            bcnt[t / tl]++;
            *sum += l;
            (*cnt)++;
        }
}

static int eval_length(Model *m, const Dataset *ds, const LcEvalOpts *o, int L, LcEvalResult *r,
                       char *err, size_t errlen) {
    const int B = o->batch_size, T0 = m->cfg.seq_len;
    memset(r, 0, sizeof *r);
    r->len = L;
    r->train_len = T0;
    r->yarn_scale = lceval_yarn_scale(L, T0, o->yarn);
    r->n_buckets = (L + T0 - 1) / T0;
    /* rope tables are cached by (length, scale) inside the RunState, and a
     * fresh RunState per length makes the cache moot anyway */
    m->cfg.yarn_scale = (float)r->yarn_scale;
    RunState s;
    if (runstate_init(&s, m, B, L) != 0)
        return seterr(err, errlen, "out of memory for %d sequences of length %d", B, L);
    int *in = malloc((size_t)B * L * sizeof(int)), *tg = malloc((size_t)B * L * sizeof(int));
    double *bsum = calloc((size_t)r->n_buckets, sizeof(double));
    long long *bcnt = calloc((size_t)r->n_buckets, sizeof(long long));
    AttnAcc a = {malloc((size_t)L * L * sizeof(float)), malloc((size_t)L * sizeof(float)), 0.0, 0.0,
                 0};
    r->loss_by_bucket = malloc((size_t)r->n_buckets * sizeof(double));
    int rc = 0;
    if (!in || !tg || !bsum || !bcnt || !a.map || !a.col || !r->loss_by_bucket)
        rc = seterr(err, errlen, "out of memory evaluating length %d", L);
    double sum = 0.0;
    long long cnt = 0;
    for (int i = 0; rc == 0 && i < o->batches; i++) {
        if (stop_requested()) {
            rc = seterr(err, errlen, "interrupted evaluating length %d", L);
            break;
        }
        data_batch(ds, in, tg, B, L, SPLIT_VAL, LCEVAL_SEED, i);
        model_forward(m, &s, in, tg, B, L);
        acc_loss(&s, tg, B, L, m->dims.V, T0, bsum, bcnt, &sum, &cnt);
        acc_attention(&a, m, &s, B, L);
    }
    if (rc == 0) {
        long long nseq = (long long)o->batches * B;
        r->n_seqs = nseq;
        r->val_loss = cnt ? sum / (double)cnt : NAN;
        r->ppl = exp(r->val_loss);
        for (int k = 0; k < r->n_buckets; k++)
            r->loss_by_bucket[k] = bcnt[k] ? bsum[k] / (double)bcnt[k] : NAN;
        r->first_share = a.share_n ? a.share_sum / (double)a.share_n : NAN;
        r->uniform_share = uniform_first_share(L);
        r->sink_rate = a.share_n ? a.sinks / (double)a.share_n : NAN;
    } else {
        lceval_result_free(r);
    }
    free(in);
    free(tg);
    free(bsum);
    free(bcnt);
    free(a.map);
    free(a.col);
    runstate_free(&s);
    return rc;
}

static int check_opts(const LcEvalOpts *o, const LcEvalRunInfo *info, const Config *cfg,
                      const char *path, char *err, size_t errlen) {
    if (o->n_lengths < 1 || o->n_lengths > LCEVAL_MAX_LENGTHS)
        return seterr(err, errlen, "need 1..%d lengths, got %d", LCEVAL_MAX_LENGTHS, o->n_lengths);
    if (o->batches < 1 || o->batch_size < 1)
        return seterr(err, errlen, "--batches and --batch-size must be positive");
    for (int i = 0; i < o->n_lengths; i++) {
        int L = o->lengths[i];
        if (L < 2) return seterr(err, errlen, "length %d is too short (need >= 2)", L);
        MemPlan p;
        char what[96];
        snprintf(what, sizeof what, "length %d with --batch-size %d", L, o->batch_size);
        if (memplan_eval(cfg, o->batch_size, L, &p, err, errlen) != 0 ||
            memplan_check(&p, what, err, errlen) != 0)
            return -1;
        if (info->learned_pos && L + info->extra_pos > info->max_pos)
            return seterr(err, errlen,
                          "%s: length %d exceeds the learned position table (max_pos %d): "
                          "learned positions cannot extrapolate",
                          path, L, info->max_pos);
    }
    return 0;
}

int lceval_run(const char *run_path, const LcEvalOpts *o, LcEvalResult *out, LcEvalRunInfo *info,
               char *err, size_t errlen) {
    Model m;
    LcEvalRunInfo local;
    if (!info) info = &local;
    memset(info, 0, sizeof *info);
    if (load_model(run_path, &m, info, err, errlen) != 0) return -1;
    if (o->threads > 0) m.cfg.threads = o->threads;
    int rc = check_opts(o, info, &m.cfg, run_path, err, errlen);
    Dataset ds;
    int opened = rc == 0 && data_open(&ds, &m.cfg, err, errlen) == 0;
    if (rc == 0 && !opened) rc = -1;
    int done = 0;
    for (; rc == 0 && done < o->n_lengths; done++)
        if (eval_length(&m, &ds, o, o->lengths[done], &out[done], err, errlen) != 0) rc = -1;
    /* eval_length frees its own result on failure; free the earlier ones */
    if (rc != 0)
        for (int i = 0; i < done - 1; i++) lceval_result_free(&out[i]);
    if (opened) data_close(&ds);
    model_free(&m);
    return rc;
}
