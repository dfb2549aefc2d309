/* intervene.h: rerun a run's last probe with one change per kind (gatelab
 * intervene; the kinds are intervention.h's, the definitions
 * docs/metrics.md "Interventions"), over a Forward (forward.h): a trained
 * run's final weights or an inspected run's checkpoint.
 *
 * The probe tokens come from the run's last /probe group. Every kind,
 * "none" included, runs through the same probe code of its weight source,
 * so a delta against "none" isolates the intervention. Nothing here writes
 * the run file: the caller stores the results
 * (runfile_write_interventions). */
#ifndef GATELAB_INTERVENE_H
#define GATELAB_INTERVENE_H

#include <stddef.h>

#include "forward.h"
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

/* The checks of kinds[n] and clip_k for a model of width d: every kind
 * known and given once, 1 <= clip_k <= d. -1 with one line in err. */
int intervene_check(const InterventionKind *kinds, int n, int clip_k, int d, char *err,
                    size_t errlen);

/* Run kinds[n] (each at most once) on f, results in out[n]. progress
 * (may be NULL) is called before each kind. -1 with one line in err: no
 * probes, probe windows shorter than 3 or longer than the model's
 * length, a bad kind or k, too little memory. */
int intervene_run(Forward *f, const InterventionKind *kinds, int n, int clip_k, IntervResult *out,
                  void (*progress)(const char *kind, int i, int n), char *err, size_t errlen);
void intervene_free(IntervResult *r, int n);

#endif
