/* eval_hf.c: long-context evaluation of an inspected checkpoint (eval_hf.h). */
#include "eval_hf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hf_pass.h"
#include "hf_run.h"
#include "metrics.h"
#include "runfile_read.h"
#include "runstats.h"
#include "util.h"

#define EVAL_MAPS 16 /* positions with full maps (the metrics need only the first column) */

int eval_hf_probe_len(const char *run, int *T, char *err, size_t errlen) {
    RunReader *r = runread_open(run, err, errlen);
    if (!r) return -1;
    ProbeRecord p;
    int rc = runread_probe(r, -1, &p, err, errlen);
    runread_close(r);
    if (rc < 0) return -1;
    *T = p.T;
    runread_probe_free(&p);
    return 0;
}

/* The record's numbers as lceval defines them. */
static void fill_result(LcEvalResult *r, const ProbeRecord *p, const HfPassOut *po, int L) {
    r->len = r->train_len = L;
    r->yarn_scale = 1.0;
    r->val_loss = po->loss, r->ppl = exp(po->loss);
    r->first_share = rs_share(p, -1);
    r->uniform_share = uniform_first_share(L);
    r->sink_rate = rs_sink_rate(p, SINK_EPS, SINK_LEN);
    r->n_seqs = p->N;
    r->n_buckets = 1;
    r->loss_by_bucket[0] = po->loss;
}

static int eval_length(HfModel *m, const char *run, const char *dir, int N, int L, LcEvalResult *r,
                       char *err, size_t errlen) {
    HfWindows w = {0};
    ProbeRecord p;
    HfPassOut po;
    memset(r, 0, sizeof *r);
    int rc = hf_run_windows(run, NULL, m, dir, L, N, &w, err, errlen);
    if (rc == 0 && w.N < N)
        rc = seterr(err, errlen, "the input gives %d windows of %d tokens, not %d", w.N, L, N);
    int *tg = rc == 0 ? malloc((size_t)N * L * sizeof(int)) : NULL;
    r->loss_by_bucket = malloc(sizeof(double));
    if (rc == 0 && (!tg || !r->loss_by_bucket)) rc = seterr(err, errlen, "out of memory");
    for (size_t i = 0; rc == 0 && i < (size_t)N * L; i++)
        tg[i] = (int)(i % L) + 1 < L ? w.ids[i + 1] : -1;
    HfPassIn in = {.ids = w.ids, .N = N, .T = L, .M = L < EVAL_MAPS ? L : EVAL_MAPS, .targets = tg};
    if (rc == 0) rc = hf_pass(m, &in, &p, &po, err, errlen);
    if (rc == 0) fill_result(r, &p, &po, L);
    if (rc == 0) runread_probe_free(&p);
    else lceval_result_free(r);
    free(tg);
    hf_windows_free(&w);
    return rc;
}

int eval_hf_run(const char *run, const char *model_dir, int threads, const LcEvalOpts *o,
                LcEvalResult *out, LcEvalRunInfo *info, char *err, size_t errlen) {
    HfModel *m = NULL;
    if (o->yarn) return seterr(err, errlen, "%s: --yarn is for trained runs", run);
    if (hf_model_open(&m, model_dir, threads, err, errlen) < 0) return -1;
    const HfArch *a = hf_model_arch(m);
    memset(info, 0, sizeof *info);
    snprintf(info->variant, sizeof info->variant, "pretrained:%s", a->arch);
    int rc = 0, done = 0;
    for (; rc == 0 && done < o->n_lengths; done++) {
        int L = o->lengths[done];
        if (a->max_pos > 0 && L > a->max_pos)
            rc = seterr(err, errlen, "length %d exceeds the model's %d positions", L, a->max_pos);
        else
            rc = eval_length(m, run, model_dir, o->batches * o->batch_size, L, &out[done], err,
                             errlen);
    }
    if (rc != 0)
        for (int i = 0; i < done - 1; i++) lceval_result_free(&out[i]);
    info->seq_len = o->n_lengths ? o->lengths[0] : 0;
    hf_model_close(m);
    return rc;
}
