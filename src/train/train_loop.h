/* train_loop.h: the training loop (train_loop.c) with eval, probes,
 * checkpoints and resume, around the step of trainer.h. */
#ifndef GATELAB_TRAIN_LOOP_H
#define GATELAB_TRAIN_LOOP_H

#include <stddef.h>
#include "config.h"

typedef struct {
    const char *out_path;
    int resume;
    int force;
    int quiet;
} TrainOptions;

/* Exit codes of a run, shared with the sweep runner. */
enum {
    TRAIN_OK = 0,
    TRAIN_FAIL = 1,
    TRAIN_BADINPUT = 2,
    TRAIN_DIVERGED = 3,
    TRAIN_INTERRUPTED = 130
};

/* Train to completion (or resume). Returns one of the codes above, with a
 * one-line reason in err for failures. */
int train_run(const Config *cfg, const TrainOptions *opt, char *err, size_t errlen);

#endif
