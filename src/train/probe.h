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

#endif
