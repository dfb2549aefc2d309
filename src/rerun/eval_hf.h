/* eval_hf.h: `gatelab eval` on a run of `gatelab inspect`: at each length
 * the model allows, batches x batch_size windows of its recorded input
 * through the checkpoint, with the loss (every prediction), the
 * first-token share and the sink rate defined as for trained runs
 * (lceval.h), one bucket per length. No YaRN: plain positions only. */
#ifndef GATELAB_EVAL_HF_H
#define GATELAB_EVAL_HF_H

#include <stddef.h>

#include "lceval.h"

/* The inspected run's probe length (what "Nx" lengths multiply); -1 with
 * err. */
int eval_hf_probe_len(const char *run, int *T, char *err, size_t errlen);

/* lceval_run for an inspected run through model_dir. -1 with one line in
 * err (a length past the model's positions, too little input, ...). */
int eval_hf_run(const char *run, const char *model_dir, int threads, const LcEvalOpts *o,
                LcEvalResult *out, LcEvalRunInfo *info, char *err, size_t errlen);

#endif
