/* forward_open.h: a run file's Forward (forward.h), whichever its weights
 * are: a trained run's own (forward_trained.c) or, for a run of `gatelab
 * inspect`, the checkpoint it was measured on (forward_hf.c). The rerun
 * commands (eval, intervene, stream) open every run through here. */
#ifndef GATELAB_FORWARD_OPEN_H
#define GATELAB_FORWARD_OPEN_H

#include <stddef.h>

#include "forward.h"
#include "runfile_read.h"

/* What the command was given beside the run. */
typedef struct {
    const char *model; /* --model DIR: another copy of the checkpoint, or NULL */
    const char *text;  /* --text FILE: another input for the checkpoint, or NULL */
    int threads;       /* a checkpoint's threads (>= 1) */
} ForwardOpen;

/* An inspected run's checkpoint as forward_open resolved it. */
typedef struct {
    const char *model_dir, *input, *input_kind;
    int recorded_dir;        /* 1: model_dir is the one the run records */
    int recorded_input;      /* 1: input is the one the run records */
    const char *config_json; /* the recorded config.json text */
    const char *identity;    /* the recorded identity (hf_identity.h), or NULL */
    int threads, probe_T;
    int bos_id; /* the id inspect put first in each window (RS_PT_BOS_ID), or -1 */
    RunMeta meta;
} ForwardSource;

/* The Forward of run. --model and --text are refused for a trained run.
 * An inspected run's checkpoint must be the one it measured: the same
 * architecture and shape as its recorded config.json and, when the run
 * records one, the same identity (hf_identity.h); else NULL with one line
 * naming the first difference. NULL with one line in err. */
Forward *forward_open(const char *run, const ForwardOpen *o, char *err, size_t errlen);

/* The checkpoint's Forward (forward_hf.c). NULL with one line in err. */
Forward *forward_open_hf(const char *run, const ForwardSource *src, char *err, size_t errlen);

#endif
