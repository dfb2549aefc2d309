/* intervene.c: a run's probe rerun under interventions (intervene.h). */
#include "intervene.h"

#include <stdlib.h>
#include <string.h>

#include "runfile_read.h"
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

int intervene_check(const InterventionKind *kinds, int n, int clip_k, int d, char *err,
                    size_t errlen) {
    for (int i = 0; i < n; i++) {
        if (kinds[i] < 0 || kinds[i] >= IV_COUNT)
            return seterr(err, errlen, "intervention kind %d is not known", (int)kinds[i]);
        for (int j = 0; j < i; j++)
            if (kinds[j] == kinds[i])
                return seterr(err, errlen, "intervention '%s' given twice",
                              intervention_name(kinds[i]));
    }
    if (clip_k < 1 || clip_k > d)
        return seterr(err, errlen, "bos-clip k %d is not in 1..%d (d_model)", clip_k, d);
    return 0;
}

/* The run's last probe: its tokens [N, T], 3 <= T <= the model's length. */
static int load_probe(Forward *f, ProbeRecord *p, char *err, size_t errlen) {
    RunReader *rr = runread_open(f->run, err, errlen);
    if (!rr) return -1;
    int rc = runread_probe(rr, -1, p, err, errlen);
    runread_close(rr);
    if (rc == 0 && (p->T < 3 || p->T > f->info.seq_len || !p->tokens)) {
        rc = seterr(err, errlen, "%s: probe tokens are %d long (need 3..%d)", f->run, p->T,
                    f->info.seq_len);
        runread_probe_free(p);
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

static int run_kind(Forward *f, const ProbeRecord *src, InterventionKind k, int clip_k,
                    float *scratch, IntervResult *out, char *err, size_t errlen) {
    int *tok = malloc((size_t)src->N * src->T * sizeof(int));
    int *tg = malloc((size_t)src->N * src->T * sizeof(int));
    int rc = tok && tg ? 0 : seterr(err, errlen, "out of memory for the probe tokens");
    Intervention iv = {.kind = k, .clip_k = clip_k, .scratch = scratch};
    int T = 0;
    if (rc == 0) kind_tokens(tok, tg, src, k, &T);
    ForwardProbeIn in = {.tokens = tok,
                         .targets = tg,
                         .N = src->N,
                         .T = T,
                         .M = src->M < T ? src->M : T,
                         .iv = &iv,
                         .step = src->step};
    memset(out, 0, sizeof *out);
    if (rc == 0) rc = f->ops->probe(f, &in, &out->probe, &out->loss, &out->loss_n, err, errlen);
    out->kind = k;
    out->clip_k = k == IV_BOS_CLIP ? clip_k : 0;
    free(tok);
    free(tg);
    return rc;
}

int intervene_run(Forward *f, const InterventionKind *kinds, int n, int clip_k, IntervResult *out,
                  void (*progress)(const char *kind, int i, int n), char *err, size_t errlen) {
    ProbeRecord src;
    if (intervene_check(kinds, n, clip_k, f->info.d, err, errlen) != 0) return -1;
    if (load_probe(f, &src, err, errlen) != 0) return -1;
    int B = src.N < IV_BATCH ? src.N : IV_BATCH, rc = 0, done = 0;
    /* the forward state and one probe's accumulators against the
     * machine's memory (memplan.h), before they are allocated */
    if (forward_check_memory(f, B, src.T, src.M, src.N, f->run, err, errlen) != 0 ||
        f->ops->prepare(f, B, src.T, 1.0, err, errlen) != 0) {
        runread_probe_free(&src);
        return -1;
    }
    float *scratch = falloc((size_t)src.T * f->info.d);
    if (!scratch) {
        runread_probe_free(&src);
        return seterr(err, errlen, "%s: out of memory for the probe", f->run);
    }
    for (; rc == 0 && done < n; done++) {
        if (progress) progress(intervention_name(kinds[done]), done, n);
        rc = run_kind(f, &src, kinds[done], clip_k, scratch, &out[done], err, errlen);
    }
    if (rc != 0) intervene_free(out, done);
    free(scratch);
    runread_probe_free(&src);
    return rc;
}
