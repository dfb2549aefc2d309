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
    long long nan_at_step;  /* debug: poison the loss at this step; -1 off */
    long long kill_at_step; /* debug: SIGKILL itself after logging this step */
    int inject_kind;        /* debug: INJECT_* poisoned at inject_at */
    long long inject_at;    /* -1 off (nan_at_step is inject loss) */
} TrainOptions;

/* Debug fault injection (--inject-nan KIND --inject-at S). */
enum { INJECT_NONE = 0, INJECT_LOSS, INJECT_GRAD, INJECT_WEIGHT };

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
