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
    int progress_fd; /* >= 0: write the progress protocol (below) here; -1 none */
    /* a sweep's OUT/protocol.ini, recorded in /protocol when the run
     * starts (a resumed run keeps what its start recorded); NULL: none */
    const char *protocol_path;
} TrainOptions;

/* The progress protocol, for a parent that passes a pipe's write end as
 * `gatelab train --progress-fd FD` (the sweep does): one line per logged
 * step (every log_every steps and the last), whether or not --quiet,
 *   "progress STEP STEPS ETA_SECONDS\n"
 * STEP the steps done, STEPS the run's total, ETA_SECONDS a whole number
 * of seconds left at the current speed. Each line is one write(2) of less
 * than PIPE_BUF bytes, so lines never split or interleave. A reader that
 * went away loses the lines and stops nothing: SIGPIPE is ignored while
 * a trainer writes to FD. */

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
