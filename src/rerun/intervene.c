/* intervene.c: a finished run's probe rerun under interventions
 * (intervene.h). */
#include "intervene.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "memplan.h"
#include "model.h"
#include "probe.h"
#include "runfile_read.h"
#include "runmodel.h"
#include "util.h"

#define IV_BATCH 8 /* probe sequences per forward */

void intervene_targets(int *tg, const int *tok, int N, int T, int first) {
    for (int b = 0; b < N; b++)
        for (int t = 0; t < T; t++)
            tg[(size_t)b * T + t] = t + 1 < T && t + 1 >= first ? tok[(size_t)b * T + t + 1] : -1;
}

void intervene_free(IntervResult *r, int n) {
    for (int i = 0; r && i < n; i++) runread_probe_free(&r[i].probe);
}

/* The model and the last probe's tokens [N, T] (and its step). */
static int load_inputs(const char *path, Model *m, ProbeRecord *p, char *err, size_t errlen) {
    RunReader *rr = runread_open(path, err, errlen);
    if (!rr) return -1;
    int rc = runread_probe(rr, -1, p, err, errlen);
    if (rc == 0 && runmodel_load(rr, path, m, err, errlen) != 0) {
        runread_probe_free(p);
        rc = -1;
    }
    runread_close(rr);
    if (rc == 0 && (p->T < 3 || p->T > m->cfg.seq_len || !p->tokens)) {
        rc = seterr(err, errlen, "%s: probe tokens are %d long (need 3..seq_len %d)", path, p->T,
                    m->cfg.seq_len);
        runread_probe_free(p);
        model_free(m);
    }
    return rc;
}

/* Tokens (and targets) one kind sees: no-bos drops each sequence's first. */
static void kind_tokens(int *tok, int *tg, const ProbeRecord *p, InterventionKind k, int *T) {
    const int N = p->N, T0 = p->T, drop = k == IV_NO_BOS;
    *T = T0 - drop;
    for (int b = 0; b < N; b++)
        memcpy(tok + (size_t)b * *T, p->tokens + (size_t)b * T0 + drop, (size_t)*T * sizeof(int));
    intervene_targets(tg, tok, N, *T, drop ? 1 : 2);
}

static int run_kind(const Model *m, RunState *s, const ProbeRecord *src, InterventionKind k,
                    int clip_k, float *scratch, IntervResult *out, char *err, size_t errlen) {
    int *tok = malloc((size_t)src->N * src->T * sizeof(int));
    int *tg = malloc((size_t)src->N * src->T * sizeof(int));
    int rc = tok && tg ? 0 : seterr(err, errlen, "out of memory for the probe tokens");
    Intervention iv = {.kind = k, .clip_k = clip_k, .scratch = scratch};
    int T = 0;
    if (rc == 0) kind_tokens(tok, tg, src, k, &T);
    ProbeInput in = {
        .tokens = tok, .targets = tg, .N = src->N, .T = T, .iv = &iv, .step = src->step};
    memset(out, 0, sizeof *out);
    if (rc == 0) rc = probe_collect(m, s, &in, &out->probe, &out->loss, err, errlen);
    out->kind = k;
    out->clip_k = k == IV_BOS_CLIP ? clip_k : 0;
    for (int b = 0; rc == 0 && b < src->N * T; b++) out->loss_n += tg[b] >= 0;
    free(tok);
    free(tg);
    return rc;
}

static int check_kinds(const InterventionKind *kinds, int n, int clip_k, char *err, size_t errlen) {
    for (int i = 0; i < n; i++) {
        if (kinds[i] < 0 || kinds[i] >= IV_COUNT)
            return seterr(err, errlen, "intervention kind %d is not known", (int)kinds[i]);
        for (int j = 0; j < i; j++)
            if (kinds[j] == kinds[i])
                return seterr(err, errlen, "intervention '%s' given twice",
                              intervention_name(kinds[i]));
    }
    if (clip_k < 1) return seterr(err, errlen, "bos-clip k %d is not >= 1", clip_k);
    return 0;
}

/* The forward state and one probe's accumulators against the machine's
 * memory (memplan.h), before they are allocated. */
static int check_memory(const Model *m, const ProbeRecord *src, int B, const char *path, char *err,
                        size_t errlen) {
    MemPlan plan;
    if (memplan_eval(&m->cfg, B, src->T, &plan, err, errlen) != 0) return -1;
    plan.probe = probe_bytes(m, src->N, src->T);
    plan.total =
        plan.total > (size_t)-1 / 2 - plan.probe ? (size_t)-1 / 2 : plan.total + plan.probe;
    return memplan_check(&plan, path, err, errlen);
}

int intervene_run(const char *run_path, const InterventionKind *kinds, int n, int clip_k,
                  IntervResult *out, void (*progress)(const char *kind, int i, int n), char *err,
                  size_t errlen) {
    Model m;
    ProbeRecord src;
    RunState s;
    if (check_kinds(kinds, n, clip_k, err, errlen) != 0) return -1;
    if (load_inputs(run_path, &m, &src, err, errlen) != 0) return -1;
    int B = src.N < IV_BATCH ? src.N : IV_BATCH, rc = 0, done = 0;
    if (check_memory(&m, &src, B, run_path, err, errlen) != 0) {
        runread_probe_free(&src);
        model_free(&m);
        return -1;
    }
    float *scratch = falloc((size_t)src.T * m.dims.d);
    if (!scratch || runstate_init(&s, &m, B, src.T) != 0) {
        free(scratch);
        runread_probe_free(&src);
        model_free(&m);
        return seterr(err, errlen, "%s: out of memory for the probe", run_path);
    }
    for (; rc == 0 && done < n; done++) {
        if (progress) progress(intervention_name(kinds[done]), done, n);
        rc = run_kind(&m, &s, &src, kinds[done], clip_k, scratch, &out[done], err, errlen);
    }
    if (rc != 0) intervene_free(out, done);
    runstate_free(&s);
    free(scratch);
    runread_probe_free(&src);
    model_free(&m);
    return rc;
}
