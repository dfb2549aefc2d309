/* flops.h: the training compute of a run (docs/metrics.md "Training
 * FLOPs"), from its recorded config: the trainer's own count per token
 * (model.h model_flops_per_token: 6 FLOPs per matmul weight per token,
 * gate matmuls included, plus attention's two T x T products) times the
 * tokens it trained on (steps done x batch_size x seq_len, a context
 * extension's steps at extend_seq_len). */
#ifndef GATELAB_FLOPS_H
#define GATELAB_FLOPS_H

#include "runfile_read.h"

/* The tokens a run trains on: steps of batch sequences of length T; NaN
 * when any is not positive and finite. */
double train_tokens(double steps, double batch, double T);

/* Training FLOPs for steps of batch sequences of length T at flops_per_token;
 * NaN when any is not positive and finite. */
double train_flops(double flops_per_token, double steps, double batch, double T);

/* The training tokens and FLOPs of the run open in r, steps_done its
 * steps: a context extension's steps (config_extend_step on) count at
 * extend_seq_len. 0, or -1 with both NaN when the config cannot be read or
 * steps_done is not known. */
int run_train_scale(RunReader *r, double steps_done, double *tokens, double *flops);

#endif
