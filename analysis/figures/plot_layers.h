/* plot_layers.h: the per-layer figures of the last probe of each run
 * (plot_layers.c): one bar per run group and layer, the mean over its
 * seeds with min..max bars when a group has two or more. Each returns 0,
 * 1 when no run has the data (err says so), -1 with err. */
#ifndef GATELAB_PLOT_LAYERS_H
#define GATELAB_PLOT_LAYERS_H

#include <stddef.h>

#include "plot_runs.h"

/* First-token share per layer, with each run's uniform reference dashed
 * (its own window: runstats.h rs_uniform_share). */
int plot_first_share(RunSet *rs, const char *png, char *err, size_t errlen);
/* max |h| of each block's output (M-Act per layer). */
int plot_mact(RunSet *rs, const char *png, char *err, size_t errlen);
/* Position 0's key norm over the median key norm per layer, the mean over
 * heads (sinkstats.h ss_lh_first_over_median). */
int plot_key_norm(RunSet *rs, const char *png, char *err, size_t errlen);
/* The same of the value norm. */
int plot_value_norm(RunSet *rs, const char *png, char *err, size_t errlen);

#endif
