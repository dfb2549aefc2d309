/* plot_profiles.h: the figures over key positions and distances of the
 * last probe of each run (plot_profiles.c), for `gatelab plot key-share`
 * and `gatelab plot distance`. */
#ifndef GATELAB_PLOT_PROFILES_H
#define GATELAB_PLOT_PROFILES_H

#include <stddef.h>

#include "plot_runs.h"

/* alpha_k against k, the mean over layers and heads of each run's last
 * probe (sinkstats.h), one line per run, log y. 0, 1 when no run has a
 * probe (err says so), -1 with err. */
int plot_key_share(RunSet *rs, const char *png, char *err, size_t errlen);

/* w(d) (top panel) and m(d) (bottom) against the query-key distance d,
 * the mean over layers and heads of each run's last probe, log y. Returns
 * as plot_key_share. */
int plot_distance(RunSet *rs, const char *png, char *err, size_t errlen);

#endif
