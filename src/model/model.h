/* model.h: the decoder (Config / Weights / RunState split, as in llama2.c).
 *
 * All parameters live in one arena. A ParamTable lists every tensor by its
 * PyTorch-style name ("layers.3.attn.w_q"), shape and offset; Weights is a
 * struct of pointers into an arena with that layout. The same layout serves
 * the parameters, the gradients and AdamW's two moment buffers.
 *
 * Parameter names (shapes in PyTorch nn.Linear [out, in] order):
 *   tok_embed                 [V, d]
 *   pos_embed                 [max_pos, d]          (pos = learned)
 *   sink_embed                [d] (sink_token = 1) or [k, d] (k registers)
 *   layers.L.attn_norm.weight [d]    .bias [d] (LayerNorm only)
 *   layers.L.attn.w_q         [H*dh, d]
 *   layers.L.attn.w_k         [Hkv*dh, d]
 *   layers.L.attn.w_v         [Hkv*dh, d]
 *   layers.L.attn.w_o         [d, H*dh]
 *   layers.L.attn.q_norm      [dh]   layers.L.attn.k_norm [dh] (qk_norm)
 *   layers.L.attn.gate.w      [channels, d] (FULL), [channels, gate_in_dim]
 *                             (FULL, narrow input) or [H, d/H] (HEADSLICE)
 *                             or [H*dh] theta (CONST)
 *   layers.L.attn.gate.b      [H]    (HEADSLICE only)
 *   layers.L.attn.sink_logit  [H]
 *   layers.L.attn.kv_bias_k   [H, dh]  layers.L.attn.kv_bias_v [H, dh]
 *   layers.L.attn.y_norm      [H*dh] (sdpa-rmsnorm)
 *   layers.L.attn.diff_lambda [4, dh/2] rows lq1, lk1, lq2, lk2 (diff_attn)
 *   layers.L.attn.ssmax_s     [H]    (ssmax)
 *   layers.L.attn.fox_w       [H, d] layers.L.attn.fox_b [H] (fox)
 *   layers.L.mlp_norm.weight  [d]    .bias [d] (LayerNorm only)
 *   layers.L.mlp.w_gate       [ff, d] (SwiGLU only)
 *   layers.L.mlp.w_up         [ff, d]
 *   layers.L.mlp.w_down       [d, ff]
 *   layers.L.attn_post_norm.weight, layers.L.mlp_post_norm.weight [d]
 *                             .bias [d] (LayerNorm only) (norm_place = sandwich)
 *   final_norm.weight         [d]    .bias [d] (LayerNorm only)
 *   NORM.gn_down [r, d], NORM.gn_up [d, r] after attn_norm, mlp_norm and
 *                             final_norm (gated_norm = r > 0)
 *   lm_head                   [V, d] (untied only)
 */
#ifndef GATELAB_MODEL_H
#define GATELAB_MODEL_H

#include <stddef.h>
#include "config.h"

#define PARAM_NAME 64
#define MAX_LAYERS 64

typedef struct {
    char name[PARAM_NAME];
    size_t offset; /* in floats, into the arena */
    size_t numel;
    int ndim;
    int shape[2];
    int decay; /* AdamW weight decay applies (matrices and embeddings) */
    int added; /* belongs to the variant, not the baseline architecture */
} ParamInfo;

typedef struct {
    ParamInfo *info;
    int count;
    size_t total; /* floats */
} ParamTable;

typedef struct {
    float *attn_norm_w, *attn_norm_b;
    float *w_q, *w_k, *w_v, *w_o;
    float *q_norm, *k_norm;
    float *gate_w, *gate_b;
    float *sink_logit;
    float *kv_bias_k, *kv_bias_v;
    float *y_norm;
    float *diff_lambda, *ssmax_s, *fox_w, *fox_b;
    float *mlp_norm_w, *mlp_norm_b;
    float *w_gate, *w_up, *w_down;
    float *attn_post_norm_w, *attn_post_norm_b; /* norm_place = sandwich */
    float *mlp_post_norm_w, *mlp_post_norm_b;
    float *attn_gn_down, *attn_gn_up, *mlp_gn_down, *mlp_gn_up; /* gated_norm */
} LayerWeights;

typedef struct {
    float *tok_embed, *pos_embed, *sink_embed;
    LayerWeights layer[MAX_LAYERS];
    float *final_norm_w, *final_norm_b;
    float *final_gn_down, *final_gn_up; /* gated_norm */
    float *lm_head;                     /* == tok_embed when tied */
} Weights;

/* Shape facts derived once from the Config. */
typedef struct {
    int L, d, H, Hkv, dh, ff, V;
    int qdim, kvdim;   /* H*dh, Hkv*dh */
    int gate_channels; /* scores per token (0: no input gate) */
    int gate_groups;   /* G of the gated tensor viewed [M, G, Cg] */
    int gate_cg;       /* Cg */
    int extra_pos;     /* prepended sink/register tokens (sink_token) */
} Dims;

typedef struct {
    Config cfg;
    Dims dims;
    ParamTable table;
    float *params; /* the arena */
    Weights w;
    /* The forward projections' weights packed for the products
     * (model_pack_forward), set only while they hold the weights as they
     * are; NULL: each product packs its own. */
    const struct GemmPacks *packs;
} Model;

/* Per-layer activations kept for backward, and backward scratch; both are
 * private to model.c. */
typedef struct LayerActs LayerActs;
typedef struct Scratch Scratch;

/* Everything one worker needs for forward + backward on up to B sequences
 * of up to T tokens (T may differ from cfg.seq_len at eval time). */
typedef struct {
    int B, T, L;    /* capacity, layers */
    int Bc, Tc, Ti; /* current call; Ti = Tc + extra_pos */
    float *grads;   /* gradient arena (same layout as params) */
    Weights g;
    float *mem;        /* one block (plan.h) for all activations, scratch, grads
                          and token rows (runstate_init_lent: all but the
                          activations and scratch) */
    size_t mem_bytes;  /* its size: runstate_bytes's count (runstate_init_lent:
                          less runstate_acts_bytes's) */
    float *acts_mem;   /* runstate_init_lent then runstate_acts: the activations'
                          own block, else NULL */
    size_t acts_bytes; /* its size */
    LayerActs *la;
    Scratch *sc;
    int *tok_int, *tgt_int;         /* internal [B, Ti] (sink rows: token 0, -1) */
    int *tgt_real;                  /* [B, T] */
    float *x_out;                   /* [B*Ti, d] residual after the last block */
    float *xfn, *fmean, *frstd;     /* final norm [B*Ti, d] */
    float *xreal;                   /* [B*T, d] final-normed real rows (alias w/o sink) */
    float *logits, *probs, *losses; /* [B*T, V], [B*T] */
    float *rope_cos, *rope_sin;     /* [T+extra, dh/2] */
    int rope_T;                     /* length the tables were built for (0: none) */
    float rope_scale;               /* YaRN scale they were built with */
    float rope_base;                /* and RoPE base (context extension raises it) */
    float rope_m;                   /* YaRN attention temperature factor */
    float loss;
    int loss_count;
    struct RemedyState *rm; /* ssmax / fox / diff_attn state, or NULL */
    /* keep_scores: the forwards keep attention's scores for
     * model_max_logit (set it before such a forward); else a variant whose
     * backward reads no scores (attention_backward_reads_scores) writes
     * them over its weights. scores_kept: the last forward kept them. */
    int keep_scores, scores_kept;
} RunState;

/* A gate that reads all of X through its own [C, d] matrix: that matrix is
 * stored right after W_v, so [W_q; W_k; W_v; W_gate] is one [P, d] block of
 * the arena and the input projection is one sgemm over it. A narrow-input
 * gate (gate_in_dim) keeps its [C, gate_in_dim] matrix apart. */
static inline int model_gate_in_projection(const Config *c) {
    return c->gate_pos != GATE_NONE && c->gate_input == GIN_FULL && c->gate_in_dim == 0;
}

/* Build the parameter table for cfg (validated). Returns -1 on failure. */
int param_table_build(ParamTable *t, const Config *cfg, const Dims *dims);
void param_table_free(ParamTable *t);
const ParamInfo *param_find(const ParamTable *t, const char *name);
void weights_point(Weights *w, float *base, const ParamTable *t, const Config *cfg);
void dims_from_config(Dims *d, const Config *cfg);

/* Allocate the arena and initialise it from cfg.init_seed. */
int model_init(Model *m, const Config *cfg, char *err, size_t errlen);
/* model_init without the parameter arena: dims and the parameter table
 * only, for sizing a run before allocating it (free with model_free). */
int model_shape(Model *m, const Config *cfg, char *err, size_t errlen);
void model_free(Model *m);
/* Parameters the variant adds over its baseline architecture. */
size_t model_added_params(const Model *m);

/* Adds to ps (ops.h: gemm_packs_add) every weight that the forward reads
 * transposed through matmul_forward_packed (the projections in and out of
 * attention and the MLP, FoX's, GatedNorm's, the LM head); -1 when out of
 * memory. */
int model_pack_forward(const Model *m, struct GemmPacks *ps);

int runstate_init(RunState *s, const Model *m, int B, int T);
/* The bytes of runstate_init(s, m, B, T)'s arena (s->mem_bytes): the
 * count pass of the same plan (plan.h), without allocating (saturates at
 * PLAN_TOO_MUCH). Besides the arena runstate_init allocates only the
 * per-layer descriptors. m needs only its shape (model_shape). */
size_t runstate_bytes(const Model *m, int B, int T);
/* runstate_init without the activations, backward scratch and outputs (la
 * and sc NULL): for a RunState that runs only on another's (runstate_lend)
 * until runstate_acts gives it its own. Its arena is runstate_bytes less
 * runstate_acts_bytes, the activations' share of it. */
int runstate_init_lent(RunState *s, const Model *m, int B, int T);
size_t runstate_acts_bytes(const Model *m, int B, int T);
/* 0 when s has activations (its own, or lent), allocating its own when it
 * has none (runstate_init_lent); -1 when out of memory. */
int runstate_acts(RunState *s, const Model *m);
void runstate_free(RunState *s);

/* A forward and its backward write every activation and scratch buffer
 * before they read it (test_model_grad runs the backward over an arena of
 * NaNs), so one RunState may run on another's: runstate_lend points s's
 * activations, backward scratch and outputs (the pointers RunActs holds)
 * at from's, keeping s's own in *own, when from holds at least B sequences
 * of s's length; -1 (nothing changed) when it does not. runstate_unlend
 * puts s's own back. s keeps its gradients, token rows, RoPE tables and
 * remedy buffers. The trainer lends a thread's first shard to the shards
 * that thread runs after it, which have none of their own
 * (runstate_init_lent): each then writes memory the one before left in
 * cache, and the bits are those of its own arena. */
typedef struct {
    LayerActs *la;
    Scratch *sc;
    float *x_out, *xfn, *fmean, *frstd, *xreal, *logits, *probs, *losses;
} RunActs;
/* 1 when runstate_lend(s, from, B, ...) lends: from has activations that
 * hold B of s's sequences. */
int runstate_lends(const RunState *from, const RunState *s, int B);
int runstate_lend(RunState *s, const RunState *from, int B, RunActs *own);
void runstate_unlend(RunState *s, const RunActs *own);

/* Forward over tokens[B,T] (and targets[B,T] or NULL for no loss).
 * T may be any length <= the RunState capacity. With a sink token the
 * internal sequence is T+1 long; targets refer to the T real positions.
 * Returns the mean loss (or 0 without targets). */
float model_forward(const Model *m, RunState *s, const int *tokens, const int *targets, int B,
                    int T);
/* The same forward with an inference-time intervention (intervention.h;
 * NULL: exactly model_forward). Probe and analysis use only: never call
 * model_backward after it. */
struct Intervention;
float model_forward_iv(const Model *m, RunState *s, const int *tokens, const int *targets, int B,
                       int T, const struct Intervention *iv);
/* The forward of tokens[B, T] (T <= the RunState's capacity) as far as
 * layer 0's gate scores, which model_gate_scores(s, 0) then gives; nothing
 * past them is computed (no loss, no logits). Analysis only: never call
 * model_backward after it. */
void model_forward_gate0(const Model *m, RunState *s, const int *tokens, int B, int T);
/* Backward of the last forward; writes s->grads, every element. */
void model_backward(const Model *m, RunState *s);
/* model_backward, also writing for every layer l and internal row r of the
 * last forward (r = b * Ti + t, sink / register rows included) the L2 norm
 * of the gradient of that forward's mean loss w.r.t. block l's input, the
 * residual stream entering it (l = 0: the embeddings), into
 * in_norms[l * Bc * Ti + r]. Does nothing without a loss. */
void model_backward_input_norms(const Model *m, RunState *s, float *in_norms);

/* Probe accessors, valid after a forward, in each variant's own shape.
 * Attention of layer l: [B, H, Tint, Tint] where Tint = T + extra_pos
 * (position 0 is the sink token when there is one); the extra slot of
 * sink-logit / kv-bias is apart: [B, H, Tint] or NULL.
 * Gate scores: [B, Tint, gate_channels] after the activation, or NULL.
 * Residual after block l: [B, Tint, d]. Logits: [B, T, V] (real rows).
 * model_gate_scores returns, per layer, [B, Tint, C] with C from
 * model_gate_probe_channels (head-shared: the averaged dh scores), or for
 * g1-const the C input-independent scores (per_token = 0). */
const float *model_attention(const RunState *s, int l);
const float *model_attention_slot(const RunState *s, int l);
/* The largest |attention logit| of layer l in the last forward (its B
 * sequences of Ti = Tc + extra_pos rows): q.k/sqrt(dh) with the variant's
 * biases (ALiBi's distance bias, a key bias; FoX's whole c_t - c_j) before
 * the normaliser, over heads, queries t and the keys j <= t each sees.
 * NaN when that forward did not keep the scores (RunState.keep_scores). */
double model_max_logit(const RunState *s, const Model *m, int l, int B);
const float *model_gate_scores(const RunState *s, int l);
const float *model_block_output(const RunState *s, int l);
const float *model_logits(const RunState *s); /* [B, T, V] */
/* Keys and values of layer l as attention reads them ([B, Tint, kvdim]:
 * keys after a G3 gate, QK-norm and RoPE; values after a G2 gate) and each
 * head's output as W_o reads it ([B, Tint, qdim]: after the Y
 * modification and a G1 gate). */
const float *model_keys(const RunState *s, int l);
const float *model_values(const RunState *s, int l);
const float *model_head_outputs(const RunState *s, int l);
int model_gate_probe_channels(const Model *m, int *per_token);

/* FLOPs of one training step (forward + backward) per token, counted
 * explicitly, including the gate's own matmuls. */
double model_flops_per_token(const Model *m, int T);

#endif
