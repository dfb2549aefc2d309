/* probe.h: run the fixed probe set and write /probe/step_N/. */
#ifndef GATELAB_PROBE_H
#define GATELAB_PROBE_H

#include "data.h"
#include "model.h"
#include "runfile.h"
#include "runfile_read.h"

struct Intervention;

/* One probe pass over given tokens. */
typedef struct {
    const int *tokens;             /* [N, T] */
    const int *targets;            /* [N, T], -1 = no target; NULL: no loss */
    int N, T;                      /* T <= the RunState's capacity */
    const struct Intervention *iv; /* NULL: the plain forward */
    long long step;                /* the record's step */
    size_t *given;                 /* when set: the bytes the pass's plans handed out
                                      (what probe_collect_bytes counts) */
} ProbeInput;

/* Run the probe over in and fill out (arrays malloc'd; free with
 * runread_probe_free) and *loss (may be NULL): the mean cross-entropy over
 * the targets, NaN without them. -1 with one line in err. */
int probe_collect(const Model *m, RunState *s, const ProbeInput *in, ProbeRecord *out, double *loss,
                  char *err, size_t errlen);

/* Forward cfg.probe_n probe sequences of length cfg.seq_len through s (in
 * chunks of its capacity) and write the reduced arrays for `step`. With
 * f_attn_layer (else NULL) also each layer's F-Attn into it [n_layers]:
 * the mean over heads of metrics.h's first_token_share of the mean map
 * (runstats.h rs_share over the same record). */
int probe_run(const Model *m, RunState *s, const Dataset *ds, RunFile *rf, long long step,
              double *f_attn_layer, char *err, size_t errlen);

/* The bytes probe_collect allocates for N sequences of length T: the count
 * passes of its plans (plan.h), the reducer's (probe_acc_bytes) and the
 * trainer's map buffers; exactly what they hand out (tests/test_plan.c). */
size_t probe_collect_bytes(const Model *m, int N, int T);
/* The bytes probe_run allocates for N sequences of length T on a RunState
 * of capacity B: probe_collect_bytes, its tokens, targets and the record's
 * copy of them, and the training-time measures (probe_grad_bytes), each a
 * plan's count pass; memplan.c adds it to a run's plan. */
size_t probe_bytes(const Model *m, int N, int T, int B);

#endif
