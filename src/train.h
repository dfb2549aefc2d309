/* train.h: the training step (data-parallel over threads) and the
 * training loop with eval, probes, checkpoints and resume. */
#ifndef GATELAB_TRAIN_H
#define GATELAB_TRAIN_H

#include "config.h"
#include "model.h"

/* One optimiser's worth of state plus one RunState per worker thread.
 * The batch is split across workers; each runs single-threaded BLAS on
 * its share, and the workers' gradients are summed into workers[0]. */
typedef struct {
    Config cfg;
    Model model;
    int n_workers;
    RunState *workers;
    int *share;        /* sequences per worker */
    float *adam_m, *adam_v;
    int *inputs, *targets; /* [B, T] batch buffers */
    int poison_grad;   /* debug: the next step puts a NaN in one gradient */
} Trainer;

int trainer_init(Trainer *tr, const Config *cfg, char *err, size_t errlen);
void trainer_free(Trainer *tr);

/* Forward + backward + clip + AdamW on inputs/targets [B, T] at step s.
 * Returns the loss; *grad_norm gets the pre-clip norm. A non-finite loss
 * or norm skips the update (the caller marks the run diverged). */
float trainer_step(Trainer *tr, const int *inputs, const int *targets,
                   long long step, double *grad_norm);

/* Forward only over B sequences (split across workers); mean loss. */
float trainer_loss(Trainer *tr, const int *inputs, const int *targets,
                   int B, int T);

typedef struct {
    const char *out_path;
    int resume;
    int force;
    int quiet;
    long long nan_at_step; /* debug: poison the loss at this step; -1 off */
    long long kill_at_step; /* debug: SIGKILL itself after logging this step */
    int inject_kind;        /* debug: INJECT_* poisoned at inject_at */
    long long inject_at;    /* -1 off (nan_at_step is inject loss) */
} TrainOptions;

/* Debug fault injection (--inject-nan KIND --inject-at S). */
enum { INJECT_NONE = 0, INJECT_LOSS, INJECT_GRAD, INJECT_WEIGHT };

/* Exit codes of a run, shared with the sweep runner. */
enum { TRAIN_OK = 0, TRAIN_FAIL = 1, TRAIN_BADINPUT = 2, TRAIN_DIVERGED = 3,
       TRAIN_INTERRUPTED = 130 };

/* Train to completion (or resume). Returns one of the codes above, with a
 * one-line reason in err for failures. */
int train_run(const Config *cfg, const TrainOptions *opt, char *err,
              size_t errlen);

#endif
