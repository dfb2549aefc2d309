/* flops.h: the training compute of a run (docs/metrics.md "Training
 * FLOPs"), from its recorded config: the trainer's own count per token
 * (model.h model_flops_per_token: 6 FLOPs per matmul weight per token,
 * gate matmuls included, plus attention's two T x T products) times the
 * tokens it trained on (steps done x batch_size x seq_len). */
#ifndef GATELAB_FLOPS_H
#define GATELAB_FLOPS_H

#include "runfile_read.h"

/* The tokens a run trains on: steps of batch sequences of length T; NaN
 * when any is not positive and finite. */
double train_tokens(double steps, double batch, double T);

/* Training FLOPs for steps of batch sequences of length T at flops_per_token;
 * NaN when any is not positive and finite. */
double train_flops(double flops_per_token, double steps, double batch, double T);

/* The training FLOPs of the run open in r, steps_done its steps; NaN when
 * the config cannot be read or steps_done is not known. */
double run_train_flops(RunReader *r, double steps_done);

#endif
