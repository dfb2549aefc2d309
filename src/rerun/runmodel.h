/* runmodel.h: a finished run's model, rebuilt from its run file's own
 * config text and final weights (/params). For the tools that rerun a
 * trained model, through its Forward (forward_trained.c). */
#ifndef GATELAB_RUNMODEL_H
#define GATELAB_RUNMODEL_H

#include <stddef.h>

#include "model.h"
#include "runfile_read.h"

/* Build m from the run file opened as rr (path for messages). Refuses a
 * run whose status is not done or diverged (no final weights), a config
 * text that contradicts the /config attributes, and any tensor whose
 * shape differs or that holds NaN or Inf (naming it), before any
 * arithmetic. The model is as its training left it: after a context
 * extension at its extended length and RoPE base (config_extended). 0 ok
 * (free with model_free), -1 with one line in err. */
int runmodel_load(RunReader *rr, const char *path, Model *m, char *err, size_t errlen);

#endif
