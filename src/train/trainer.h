/* trainer.h: the training step (data-parallel over threads); the loop
 * around it is train_loop.h. */
#ifndef GATELAB_TRAINER_H
#define GATELAB_TRAINER_H

#include "config.h"
#include "model.h"

/* One optimiser's worth of state plus one RunState per shard. The batch
 * is cut into n_shards shards (config_shards); the n_workers threads run
 * the shards, each thread a contiguous run of them (parallel_split), and the
 * shards' gradients are summed into shards[0] in shard order. Only the
 * first shard of each run has activations (trainer_shard_leads); the
 * others run on its (runstate_lend) and are runstate_init_lent. */
typedef struct {
    Config cfg;
    Model model;
    int n_workers; /* threads */
    int n_shards;
    RunState *shards;
    int *share; /* sequences per shard */
    float *adam_m, *adam_v;
    int *inputs, *targets;   /* [B, T] batch buffers, T up to config_max_len */
    int T;                   /* the length a step trains at: seq_len, then extend_seq_len */
    int poison_grad;         /* set only by testhook.c: the next step puts a NaN in one gradient */
    struct GemmPacks *packs; /* the forward's weights packed at the start of each batch's forward */
} Trainer;

/* 1 when the training step's thread runs (config_workers) start at shard
 * w: the shards that own activations (memplan_train counts them). */
int trainer_shard_leads(const Config *cfg, int w);

int trainer_init(Trainer *tr, const Config *cfg, char *err, size_t errlen);
void trainer_free(Trainer *tr);

/* From step config_extend_step on: train at extend_seq_len with the RoPE
 * base raised (config_extended); a no-op before that step, after the
 * switch, or without an extension. The model's seq_len stays the run's. */
void trainer_extend_at(Trainer *tr, long long step);

/* Forward + backward + clip + AdamW on inputs/targets [B, tr->T] at step s.
 * Returns the loss; *grad_norm gets the pre-clip norm. A non-finite loss
 * or norm skips the update (the caller marks the run diverged); so does
 * a shard that needed its own activations and found no memory (NaN). */
float trainer_step(Trainer *tr, const int *inputs, const int *targets, long long step,
                   double *grad_norm);

/* Forward only over B sequences (split across workers); mean loss. */
float trainer_loss(Trainer *tr, const int *inputs, const int *targets, int B, int T);

#endif
