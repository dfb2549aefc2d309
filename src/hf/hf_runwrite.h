/* hf_runwrite.h: the run file of `gatelab inspect`, through the run-file
 * module (runfile.h; names in runschema.h): one probe at step 0 plus the
 * pretrained provenance (RunPretrained). */
#ifndef GATELAB_HF_RUNWRITE_H
#define GATELAB_HF_RUNWRITE_H

#include <stddef.h>

#include "runfile.h"

/* Write OUT (refused when it exists unless force): built in a fresh
 * temporary beside it (atomic_write.h), then
 * renamed, so OUT is never half-written. -1 + one line on error. */
int hf_run_write(const char *out, int force, const ProbeRecord *p, const RunPretrained *info,
                 char *err, size_t errlen);

#endif
