/* probe.h: run the fixed probe set and write /probe/step_N/. */
#ifndef GATELAB_PROBE_H
#define GATELAB_PROBE_H

#include "data.h"
#include "model.h"
#include "runfile.h"

/* Forward cfg.probe_n probe sequences of length cfg.seq_len through s (in
 * chunks of its capacity) and write the reduced arrays for `step`. */
int probe_run(const Model *m, RunState *s, const Dataset *ds, RunFile *rf,
              long long step, char *err, size_t errlen);

/* The bytes probe_run allocates for N sequences of length T (its
 * accumulators and tokens; memplan.c adds it to a run's plan). */
size_t probe_bytes(const Model *m, int N, int T);

#endif
