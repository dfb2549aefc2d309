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
#include "metrics.h"
#include "runschema.h"

/* The parameters of the kinds that take one (cmd_intervene's options). */
typedef struct {
    int clip_k;                  /* bos-clip's k */
    const char *heads;           /* head-zero: "L.H,L.H,..." or "dormant" */
    int layer;                   /* gates-open-layer, mact-*: the layer; -1: each layer */
    const char *consts;          /* gate-const: "c,c,..." each in [0, 1] */
    double mact_abs, mact_ratio; /* mact-*: massive_threshold's floor, factor */
} IvParams;

#define IV_GATE_CONSTS_DEFAULT "0,0.25,0.5,0.75,1"
#define IV_PARAMS_DEFAULT                                                                          \
    { IV_CLIP_K_DEFAULT, NULL, -1, IV_GATE_CONSTS_DEFAULT, MACT_ABS_MIN, MACT_MEDIAN_RATIO }

#define IV_NAME_MAX 64
#define IV_HEADS_MAX 256

typedef struct {
    InterventionKind kind;
    char name[IV_NAME_MAX];   /* its /intervene group: the kind's name, then
                                 "-L<layer>" (per-layer kinds) or "-c<c>"
                                 (gate-const, c as %g) */
    int layer;                /* per-layer kinds: the layer changed, else -1 */
    double gate_const;        /* gate-const: c, else NaN */
    char heads[IV_HEADS_MAX]; /* head-zero: the heads zeroed ("L.H,..."), else "" */
    double mact_abs;          /* mact-*: the |h| floor, else NaN */
    double mact_ratio;        /* mact-*: the factor over the median |h|, else NaN */
    ProbeRecord probe;        /* arrays malloc'd: free with intervene_free */
    double loss;              /* mean CE predicting probe tokens 2..T-1 */
    long long loss_n;
    int clip_k; /* bos-clip's k, else 0 */
} IntervResult;

/* Loss targets of the probe tokens tok[N, T]: tg[n, t] = tok[n, t + 1]
 * when t + 1 >= first, else -1 (and -1 at t = T - 1). "none" and the
 * in-forward kinds use first = 2; no-bos, whose tokens are tok[:, 1:],
 * uses first = 1: both predict the original positions 2..T-1. */
void intervene_targets(int *tg, const int *tok, int N, int T, int first);

/* The heads of text ("L.H,L.H,...", 0-based) into mask[L * H] (1 =
 * listed, layer-major). -1 with one line naming the bad entry: not L.H,
 * a layer or head out of range, given twice. "dormant" is refused here:
 * intervene_run resolves it from the run file. */
int intervene_parse_heads(const char *text, int L, int H, unsigned char *mask, char *err,
                          size_t errlen);

/* The gate-const list text ("c,c,...") into c[max]; *n values. -1 with one
 * line naming the bad value: not a number, outside [0, 1], given twice,
 * more than max. */
int intervene_parse_consts(const char *text, double *c, int max, int *n, char *err, size_t errlen);

/* The checks of kinds[n] and p for a model of L layers, H heads and width
 * d: every kind known and given once, 1 <= clip_k <= d, the layer in
 * 0..L-1 (or -1), and the lists of the kinds asked for. -1 with one line
 * in err. */
int intervene_check(const InterventionKind *kinds, int n, const IvParams *p, int L, int H, int d,
                    char *err, size_t errlen);

/* Run kinds[n] (each at most once) on f with p: one result per kind, per
 * layer (per-layer kinds without a layer: each layer in turn) or per c
 * (gate-const), in the order given. The results (free with
 * intervene_free(r, *nr) and free(r)) or NULL with one line in err: no
 * probes, probe windows shorter than 3 or longer than the model's length,
 * a bad kind or parameter, too little memory. progress (may be NULL) is
 * called before each result. */
IntervResult *intervene_run(Forward *f, const InterventionKind *kinds, int n, const IvParams *p,
                            int *nr, void (*progress)(const char *name, int i, int n), char *err,
                            size_t errlen);
void intervene_free(IntervResult *r, int n);

#endif
