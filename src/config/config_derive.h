/* config_derive.h: values derived from a config: shapes (shared by
 * config.c and variants.c) and the split of a batch over the training
 * threads (shared by the trainer and its memory plan). */
#ifndef GATELAB_CONFIG_DERIVE_H
#define GATELAB_CONFIG_DERIVE_H

#include "config.h"

/* MLP hidden size when d_ff = 0: SwiGLU round(8/3 d) rounded up to a
 * multiple of 32 (keeps params near a 4d GELU MLP); GELU 4d. */
int config_auto_d_ff(int d_model, MlpKind mlp);

/* head_dim, or d_model / n_heads when head_dim is 0 (0 if undefined). */
int config_head_dim(const Config *cfg);

/* Rotated heads per head: differential attention rotates each half of a
 * head as a head of its own (dh/2 wide, with dh/2's frequencies), as the
 * Differential Transformer does; every other variant rotates whole heads. */
int config_rope_split(int diff_attn);

/* Context extension (extend_share > 0, the paper's long-context
 * procedure): steps from config_extend_step on train at extend_seq_len
 * with rope_base raised to extend_rope_base (when set). With none it is
 * steps (no step extended). */
long long config_extend_step(const Config *cfg);
/* The longest length the run trains at: extend_seq_len when extended. */
int config_max_len(const Config *cfg);
/* cfg as the model stands after its extension (a no-op without one):
 * seq_len extend_seq_len, rope_base extend_rope_base when set, and no
 * extension left. A finished run's model is evaluated under it. */
void config_extended(Config *cfg);

/* 1 when sink metrics must use Gu's proxy |a| / sum |a| on this
 * variant's attention rows (they need not sum to one). */
int config_attention_proxy(const Config *cfg);

/* The slots beside the real tokens that take a share of each of the
 * variant's attention rows: sink_token's prepended tokens (registers: 4),
 * the kv bias's null key, the sink logit; 0 when none. A run with any has
 * the probe's attention_slot (their shares summed). */
int config_attention_slots(const Config *cfg);

/* The sliding window of layer l (0-based): cfg->window when window_layers
 * puts a window on l (every layer, or the even ones under alternate), else
 * 0, full causal attention. */
int config_layer_window(const Config *cfg, int l);

/* The shards a training batch is cut into: the key shards, or batch_size
 * when that is smaller (at least 1). They depend on the config alone, never
 * on the thread count, so neither do a run's bits; the shard count itself
 * is part of the arithmetic (the shards' gradients are summed in order). */
int config_shards(const Config *cfg);

/* Training threads for cfg: threads, at least 1 and at most the shards. */
int config_workers(const Config *cfg);

/* Sequences of a batch of B that shard w of nw takes: B / nw, plus one
 * for each of the first B % nw shards. */
int batch_share(int B, int nw, int w);

#endif
