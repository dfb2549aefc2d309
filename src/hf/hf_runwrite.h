/* hf_runwrite.h: the run file of `gatelab inspect` (schema in README "Run
 * file"; the pretrained additions in "Measuring a pretrained model"). All
 * run-file writing of the pretrained path is here, so a schema change
 * touches this file only. */
#ifndef GATELAB_HF_RUNWRITE_H
#define GATELAB_HF_RUNWRITE_H

#include <stddef.h>

#include "runfile.h"

typedef struct {
    const char *model_dir;
    const char *architecture; /* config.json architectures[0] */
    const char *model_type;
    const char *dtype;       /* of the checkpoint's weights */
    const char *config_json; /* the snapshot's config.json text */
    const char *tokenizer;   /* "tokenizer.json (N bytes, fnv1a64 X)" or "none: ..." */
    const char *input;       /* the --text or --tokens file */
    const char *input_kind;  /* "text" | "tokens" */
    int bos_id;              /* prepended to each window, or -1 */
    long long n_params;
    int threads;
    double seconds;         /* forward passes, wall clock */
    const int *first_token; /* [N] first id of each window */
} HfRunInfo;

/* Write OUT (refused when it exists unless force): built as OUT.tmp, then
 * renamed. -1 + one line on error; OUT is never half-written. */
int hf_run_write(const char *out, int force, const ProbeData *p, const HfRunInfo *info, char *err,
                 size_t errlen);

#endif
