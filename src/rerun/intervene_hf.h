/* intervene_hf.h: `gatelab intervene` on a run of `gatelab inspect`: the
 * run's probe windows rerun through its checkpoint (the model directory
 * the run records, or another) under each intervention, with the same
 * probe reducer and the loss on the windows, as intervene.c does for
 * trained runs. */
#ifndef GATELAB_INTERVENE_HF_H
#define GATELAB_INTERVENE_HF_H

#include <stddef.h>

#include "intervene.h"

/* intervene_run for a pretrained run: kinds[n] on model_dir with `threads`
 * threads, results in out[n]. -1 with one line in err. */
int intervene_hf_run(const char *run, const char *model_dir, int threads,
                     const InterventionKind *kinds, int n, int clip_k, IntervResult *out,
                     void (*progress)(const char *kind, int i, int n), char *err, size_t errlen);

#endif
