/* intervene.h: rerun a finished run's probe with one change per kind
 * (gatelab intervene; the kinds are intervention.h's, the definitions
 * docs/metrics.md "Interventions").
 *
 * The model comes from the run file's final weights (runmodel.h) and the
 * probe tokens from its last /probe group. Every kind, "none" included,
 * runs through the same probe code (probe_collect), so a delta against
 * "none" isolates the intervention. Nothing here writes the run file: the
 * caller stores the results (runfile_write_interventions). */
#ifndef GATELAB_INTERVENE_H
#define GATELAB_INTERVENE_H

#include <stddef.h>

#include "intervention.h"
#include "runschema.h"

typedef struct {
    InterventionKind kind;
    ProbeRecord probe; /* arrays malloc'd: free with intervene_free */
    double loss;       /* mean CE predicting probe tokens 2..T-1 */
    long long loss_n;
    int clip_k; /* bos-clip's k, else 0 */
} IntervResult;

/* Loss targets of the probe tokens tok[N, T]: tg[n, t] = tok[n, t + 1]
 * when t + 1 >= first, else -1 (and -1 at t = T - 1). "none" and the
 * in-forward kinds use first = 2; no-bos, whose tokens are tok[:, 1:],
 * uses first = 1: both predict the original positions 2..T-1. */
void intervene_targets(int *tg, const int *tok, int N, int T, int first);

/* Run kinds[n] (each at most once) on run_path, results in out[n].
 * progress (may be NULL) is called before each kind. -1 with one line in
 * err: an unreadable run, no final weights or probes, a bad kind. */
int intervene_run(const char *run_path, const InterventionKind *kinds, int n, int clip_k,
                  IntervResult *out, void (*progress)(const char *kind, int i, int n), char *err,
                  size_t errlen);
void intervene_free(IntervResult *r, int n);

#endif
