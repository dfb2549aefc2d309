/* attn_remedies.h: the attention core of one layer with the literature
 * remedies that wrap it (docs/variants.md D): scalable softmax (ssmax),
 * forgetting attention (fox) and differential attention (diff_attn).
 * Stick-breaking is a normaliser inside the core (op_attention.c) and
 * register tokens are prepended positions (model.c), so neither is here.
 *
 * The state holds each layer's extra activations and one set of backward
 * scratch, laid out in the RunState's arena by its memory plan for the
 * RunState's capacity; model.c calls these in place
 * of attention_forward / attention_backward when remedy_active().
 */
#ifndef GATELAB_ATTN_REMEDIES_H
#define GATELAB_ATTN_REMEDIES_H

#include "model.h"
#include "plan.h"
#include "ops.h"

typedef struct RemedyState RemedyState;

/* 1 when cfg uses ssmax, fox or diff_attn. */
int remedy_active(const Config *cfg);

/* The state of model m without its buffers (remedy_state_plan lays them
 * out); NULL when out of memory. */
RemedyState *remedy_state_new(const Model *m);
void remedy_state_free(RemedyState *r);

/* Lay r's buffers out for B sequences of up to T real tokens (T + extra_pos
 * internal rows) in the RunState's memory plan p (plan.h), in its two
 * passes (r NULL: count only). Nothing when no remedy is active. */
void remedy_state_plan(RemedyState *r, const Model *m, int B, int T, Plan *p);

/* Layer l: q[B,Ti,H,dh] (rotated), k, v [B,Ti,Hkv,dh], xn [B*Ti, d] (the
 * block's normed input, read by the forget gate) -> y, att, slot, preatt
 * exactly as attention_forward (att: the first map under diff_attn). */
void remedy_attention_forward(RemedyState *r, const Model *m, int l, float *y, float *att,
                              float *slot, float *preatt, const float *q, const float *k,
                              const float *v, const float *xn, const AttnSpec *spec, int B, int Ti);
/* Accumulates into dq, dk, dv and the layer's remedy and slot parameter
 * gradients in gw, as attention_backward does (scratch: its scratch). */
void remedy_attention_backward(RemedyState *r, const Model *m, int l, LayerWeights *gw, float *dq,
                               float *dk, float *dv, const float *dy, const float *att,
                               const float *slot, const float *preatt, const float *q,
                               const float *k, const float *v, const AttnSpec *spec, int B, int Ti,
                               float *scratch);
/* FoX: dxn[B*Ti, d] += the forget gate's input gradient, and its weight
 * gradients; after remedy_attention_backward of the same layer. */
void remedy_input_backward(RemedyState *r, const Model *m, int l, LayerWeights *gw, float *dxn,
                           const float *xn, int B, int Ti);
/* The map the probe reads for layer l: A1 - lambda A2 under diff_attn,
 * else NULL (the core's own att). */
const float *remedy_attention_map(const RemedyState *r, int l);
/* FoX: layer l's key bias kb[B, H, Ti] = -c_j of the last forward (c_j =
 * sum_{i<=j} log f_i, so FoX's logit of query t and key j is the core's
 * score minus kb[t]); NULL without fox. */
const float *remedy_fox_key_bias(const RemedyState *r, int l);

#endif
