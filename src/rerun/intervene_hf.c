/* intervene_hf.c: interventions on an inspected checkpoint (intervene_hf.h). */
#include "intervene_hf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hf_model.h"
#include "hf_pass.h"
#include "runfile_read.h"
#include "util.h"

/* Kind k's windows and targets from the stored probe (no-bos drops each
 * window's first token), as intervene.c's kind_tokens does. */
static void kind_windows(int32_t *ids, int *tg, int *tok, const ProbeRecord *p, InterventionKind k,
                         int *T) {
    const int drop = k == IV_NO_BOS;
    *T = p->T - drop;
    for (int b = 0; b < p->N; b++)
        for (int t = 0; t < *T; t++)
            tok[(size_t)b * *T + t] = ids[(size_t)b * *T + t] =
                (int32_t)p->tokens[(size_t)b * p->T + t + drop];
    intervene_targets(tg, tok, p->N, *T, drop ? 1 : 2);
}

static int run_kind(HfModel *m, const ProbeRecord *src, InterventionKind k, int clip_k,
                    float *scratch, IntervResult *out, char *err, size_t errlen) {
    size_t n = (size_t)src->N * src->T;
    int32_t *ids = malloc(n * sizeof *ids);
    int *tg = malloc(n * sizeof *tg), *tok = malloc(n * sizeof *tok), T = 0;
    int rc = ids && tg && tok ? 0 : seterr(err, errlen, "out of memory for the probe tokens");
    Intervention iv = {.kind = k, .clip_k = clip_k, .scratch = scratch};
    memset(out, 0, sizeof *out);
    if (rc == 0) {
        kind_windows(ids, tg, tok, src, k, &T);
        HfPassIn in = {.ids = ids,
                       .N = src->N,
                       .T = T,
                       .M = src->M < T ? src->M : T,
                       .targets = tg,
                       .iv = &iv};
        HfPassOut po;
        rc = hf_pass(m, &in, &out->probe, &po, err, errlen);
        out->loss = po.loss, out->loss_n = po.loss_n;
    }
    out->kind = k;
    out->clip_k = k == IV_BOS_CLIP ? clip_k : 0;
    free(ids), free(tg), free(tok);
    return rc;
}

/* The last probe of the run: its windows (at least 3 tokens). */
static int load_probe(const char *run, ProbeRecord *p, char *err, size_t errlen) {
    RunReader *r = runread_open(run, err, errlen);
    if (!r) return -1;
    int rc = runread_probe(r, -1, p, err, errlen);
    runread_close(r);
    if (rc == 0 && (p->T < 3 || !p->tokens)) {
        runread_probe_free(p);
        return seterr(err, errlen, "%s: probe windows are %d long (need 3 or more)", run, p->T);
    }
    return rc;
}

int intervene_hf_run(const char *run, const char *model_dir, int threads,
                     const InterventionKind *kinds, int n, int clip_k, IntervResult *out,
                     void (*progress)(const char *kind, int i, int n), char *err, size_t errlen) {
    ProbeRecord src;
    HfModel *m = NULL;
    if (clip_k < 1) return seterr(err, errlen, "bos-clip k %d is not >= 1", clip_k);
    if (load_probe(run, &src, err, errlen) < 0) return -1;
    int rc = hf_model_open(&m, model_dir, threads, err, errlen), done = 0;
    float *scratch = rc == 0 ? falloc((size_t)src.T * hf_model_arch(m)->d) : NULL;
    if (rc == 0 && !scratch) rc = seterr(err, errlen, "out of memory for bos-clip");
    for (; rc == 0 && done < n; done++) {
        if (progress) progress(intervention_name(kinds[done]), done, n);
        rc = run_kind(m, &src, kinds[done], clip_k, scratch, &out[done], err, errlen);
    }
    if (rc != 0) intervene_free(out, done);
    free(scratch);
    hf_model_close(m);
    runread_probe_free(&src);
    return rc;
}
