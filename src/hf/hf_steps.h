/* hf_steps.h: the steps the architecture recipes (hf_recipes.c) are made
 * of, over one model's buffers: a linear layer (threads split the output
 * columns, 1-thread OpenBLAS each), RMSNorm / LayerNorm, RoPE, attention
 * with the optional output gate, and the MLP. The arithmetic is the core
 * ops' (ops.h); what is here is the thread split and the layouts of the
 * checkpoints. Private to hf_model.c, hf_steps.c and hf_recipes.c. */
#ifndef GATELAB_HF_STEPS_H
#define GATELAB_HF_STEPS_H

#include "fakequant.h"
#include "hf_model.h"
#include "hf_weights.h"
#include "intervention.h"
#include "ops.h"
#include "parallel.h"

/* The activations of B windows of T tokens (maps of M), their rows
 * (R = B * T) one after the other: window b's token t is row b * T + t. */
typedef struct {
    int B, T, M, R, head_rows;
    void *mem;                          /* one block (plan.h) the buffers point into */
    size_t bytes;                       /* its size: hf_bufs_bytes's count */
    float *x, *h;                       /* [R, d]: residual stream, normalised input of a block */
    float *qraw, *q, *k, *v;            /* projections: raw q_proj / fused qkv, then split */
    float *g, *o;                       /* gate scores [R, H*g], attention output [R, H*dh] */
    float *f1, *f2;                     /* MLP hidden [R, ff] */
    float *first_col, *maps;            /* [B, H, T], [B, H, M, M] */
    float *slot;                        /* [B, H, T]: each query's sink-logit share (sinks) */
    float *router, *moe;                /* MoE: router logits [R, E]; one window's
                                           expert scratch [T, 2d + 3moe_ff + 1] (else NULL) */
    float *moe_out;                     /* [R, d]: the MoE block's output where it is normed */
    float *moe_w;                       /* the router weights of the pass's rows [R, k] */
    int *moe_idx, *moe_rows;            /* their experts [R, k]; an expert's rows of a window [T] */
    float *cosv, *sinv;                 /* RoPE tables of one window's T positions */
    float *cosl, *sinl;                 /* the sliding layers' (rope_local_theta; else NULL) */
    float *mean, *rstd, *inv_freq;      /* norm statistics [R * H], RoPE frequencies */
    float *vec0, *vec1, *head, *scores; /* head: head_rows rows of the LM head converted to
                                           F32 (NULL for 0); scores: attention_keep's scratch */
} HfBufs;

struct HfModel {
    HfArch a;
    char *cfg_text;
    SafeTensors *st;
    HfWeights w;
    int threads;
    HfBufs b;
    FakeQuant *quant; /* the pass's fake quantization (NULL: none) */
    int H_all;        /* the model's query heads, while a layer's recipe runs at its own
                         (hf_layer sets a.H to them) */
    int layer_slots[HF_MAX_LAYERS]; /* each layer's extra slots: 1 where it has sink logits
                                       (hf_layer_sinks), else 0 */
};

/* Buffers for B windows of T tokens with maps of M and head_rows rows of
 * converted LM head, in one block laid out by one plan (plan.h; kept when
 * the sizes repeat); -1 when memory runs out (b is then empty). */
int hf_bufs_alloc(HfBufs *b, const HfArch *a, int B, int T, int M, int threads, int head_rows);
/* The bytes hf_bufs_alloc takes for those sizes: the plan's count pass. */
size_t hf_bufs_bytes(const HfArch *a, int B, int T, int M, int threads, int head_rows);
void hf_bufs_free(HfBufs *b);

/* out[M,N] (row stride ldo) = in[M,K] @ W^T + b, W [N,K] (nn.Linear;
 * conv1d: W [K,N]); acc: out += instead. epi, when given, runs on each
 * row's slice of out right after its sgemm (an activation in cache).
 * T > 0: the rows are windows of T, one sgemm each (0: one for all M), so
 * that a window's product has the same bits alone or among others: a BLAS
 * may sum in another order for another M (OpenBLAS's small-matrix kernels
 * do). */
typedef struct {
    float *out;
    const float *in, *W, *bias;
    int M, K, N, conv1d, ldo;
    int acc;
    RangeFn epi;
    void *epi_ctx;
    int T;
} HfLinear;
void hf_linear_run(int threads, const HfLinear *j);
/* j's product through the model's fake quantization (m->quant, which may
 * swap j's input and weight for quantized copies), then hf_linear_run. */
void hf_linear_quant(const HfModel *m, HfLinear *j);
/* The usual case: M = the B windows' R rows, row stride N, through
 * hf_linear_quant. acc (out +=) is how an attention or MLP output joins
 * the residual stream, so with statistics on (m->quant->observe) the
 * product is made apart, recorded as that sub-layer's output (kind) and
 * then added; kind is ignored without acc. */
void hf_linear(const HfModel *m, float *out, const float *in, const float *W, const float *bias,
               int K, int N, int conv1d, int acc, FqOut kind);

/* y[rows, n] = RMSNorm (rms) or LayerNorm (w, b) of x; rows <= R * H. */
void hf_norm(const HfModel *m, float *y, const float *x, const float *w, const float *b, int rows,
             int n, int rms);
/* The rotary frequencies of a's rotary_dim / 2 pairs into inv_freq
 * (rope_theta, then the llama3 or YaRN scaling); returns the attention
 * factor that multiplies the rotated q and k (YaRN's, else 1). */
float hf_rope_freqs(const HfArch *a, float *inv_freq);
/* The cos/sin tables of a window's T positions, times the attention
 * factor; with rope_local_theta, the sliding layers' tables too (plain
 * RoPE on that base, over rotary_dim_local dims where that is set). */
void hf_rope_setup(HfModel *m);
/* Rotate the first rotary_dim dims of each of nh heads of x[B, T, nh*dh]
 * of layer l (its tables: the sliding layers' where they have their own),
 * the positions of each window from 0; none on a full-attention layer of
 * an architecture that turns its sliding layers only (rope_sliding_only). */
void hf_rope(const HfModel *m, int l, float *x, int nh);
/* The keys a query of layer l sees (AttnSpec.window): the architecture's
 * sliding window on the layers that slide (every layer but each
 * sliding_period-th where that is set, else the last sliding_layers), 0
 * (full causal) elsewhere. */
int hf_layer_window(const HfArch *a, int l);
/* b.o = layer l's softmax attention of in, each window and head on its
 * own (scale attn_scale or 1/sqrt(dh), soft-capped by attn_softcap when
 * set; a per-head sink logit in the softmax where in->sink_logit is
 * given, each query's share to it into b.slot; the layer's sliding
 * window, replaced by the
 * intervention's streaming window where that is narrower), keeping the
 * first column and the maps; then, for a gated model, o *= sigmoid(b.g)
 * (softplus(b.g) under gate_softplus)
 * with the intervention's change to the scores (b.g becomes the applied
 * scores); last the intervention's change to the head outputs
 * (iv_head_output). */
void hf_attend(HfModel *m, int l, const AttnIn *in, const Intervention *iv);
/* The MoE MLP (hf_moe.c) of in [R, d] into out [R, d]: per row, the
 * router's logits (mlp.router), its top_k experts and their weights as
 * the family's HfRouter chooses them (gpt-oss: the softmax over the k
 * largest logits; AFMoE: sigmoid scores, chosen with expert_bias added,
 * renormalised, times route_scale); the shared experts' GLU, where the
 * layer has them (W_GATE), written to out; then each routed expert
 * (gpt-oss's clamped SwiGLU of its interleaved gate_up_proj product,
 * AFMoE's GLU of its own tensors) times its weight added; expert by
 * expert, each one's weights converted once (hf_weights_expert), and
 * window by window within it (an expert's rows of one window in one
 * product), so a window's bits do not depend on the others in the pass.
 * acc: out is the residual stream the MoE's output joins (gpt-oss; the
 * statistics then record that output as hf_linear's acc does), else a
 * buffer of the MoE's own that the caller adds. Under fake quantization
 * (m->quant) the MLP input, each expert's slabs and the experts'
 * activations go through fakequant.h's MoE calls. l: the layer. -1 with
 * one line in err when an expert's weights cannot be converted. */
int hf_moe(HfModel *m, int l, const float *W[W_N_ROLES], const float *in, float *out, int acc,
           char *err, size_t errlen);
/* The MLP (GLU or plain) of ff hidden units of in [R, d] into out
 * [R, d]; acc: added to out as a sub-layer output joins the residual
 * stream (hf_linear's acc). */
void hf_mlp(HfModel *m, const float *W[W_N_ROLES], const float *in, float *out, int acc, int ff);
/* hf_mlp with its GLU's activation clamped at limit (hf_glu_act; 0: none). */
void hf_mlp_clamped(HfModel *m, const float *W[W_N_ROLES], const float *in, float *out, int acc,
                    int ff, float limit);
/* The GLU's activation on n values: up *= act(gate) (gate overwritten),
 * as hf_mlp applies it; limit > 0 (a SiLU GLU): up = min(silu(gate),
 * limit) * clamp(up, -limit, limit). */
void hf_glu_act(HfAct act, float *up, float *gate, size_t n, float limit);
/* x += y over the R rows of width d: a sub-layer's output y (of kind, as
 * hf_linear's acc records it under statistics) joining the residual
 * stream. */
void hf_residual_add(const HfModel *m, float *x, const float *y, FqOut kind);

/* hf_recipes.c: layer l of the model's architecture on the windows in b.x,
 * then the intervention's change to the residual stream. While the
 * layer's recipe runs, m->a.H is the layer's query heads
 * (hf_layer_heads), so every step (projections, gate, attention, the
 * head outputs) sees the layer's count; the buffers are sized at the
 * largest. */
int hf_layer(HfModel *m, int l, const Intervention *iv, char *err, size_t errlen);

#endif
