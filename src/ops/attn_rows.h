/* attn_rows.h: what attention's forward (op_attention.c) and backward
 * (op_attention_bwd.c) share: one call's Plan, the extra keys of a row
 * and the per-row normalisers (op_attention.c's header describes them).
 * A row is query t's scores s[0..t] over the keys it sees, plus the extra
 * keys. Not a public interface: ops.h is. */
#ifndef GATELAB_ATTN_ROWS_H
#define GATELAB_ATTN_ROWS_H

#include <math.h>

#include "exactexp.h"
#include "ops.h"

enum { XS_NULL = 0, XS_SINK, XS_KV, XS_N };
enum { BASE_SOFTMAX = 0, BASE_CLIPPED, BASE_SIGMOID, BASE_SOFTPICK, BASE_STICKBREAK };

typedef struct {
    int base;
    int on[XS_N];
    int window, keep; /* AttnSpec's window (0: off) */
    int alibi;        /* add ALiBi's distance biases (AttnSpec) */
    int lane_sums;    /* softmax sums in lanes (attention_keep) */
    float scale, gamma, eps, lnT;
    float softcap;   /* AttnSpec's (0: off) */
    const float *kb; /* FoX per-key bias [B,H,T] or NULL, and its gradient */
    float *dkb;
} Plan;

/* Logits z and weights w of the extra keys of one row. */
typedef struct {
    float z[XS_N];
    float w[XS_N];
} Extra;

static inline float clamp01(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }

/* a . b over n floats, summed in index order. */
static inline float dot(const float *a, const float *b, int n) {
    float s = 0.0f;
    for (int i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

/* One call's plan from its spec over T keys. A missing sink_logit reads as
 * b = 0; kv-bias needs both k' and v'. */
Plan attn_make_plan(const AttnSpec *sp, const float *kvb_k, const float *kvb_v, int T);

/* p[0..n) and ex->w = softmax over the scores s and the extra logits. */
void attn_row_softmax(float *p, const float *s, int n, const Plan *pl, Extra *ex);

/* Softpick of a row into a (may alias s) and ex->w; e^{s-m} of the extra
 * keys into ex_e when given. Returns the shifted denominator D'. */
float attn_row_softpick(float *a, const float *s, int n, const Plan *pl, Extra *ex, float *ex_e);

/* Query row t under the plan's window: the visible scores of s normalised
 * into a[0..width), zero where a key is hidden (s is left as it was unless
 * a aliases it). */
void attn_row_forward_window(float *a, float *s, int t, int width, const Plan *pl, Extra *ex);

/* Extra-key logits for query row q_t of head h. */
void attn_extra_logits(Extra *ex, const Plan *pl, const float *qt, int h, const float *sink_logit,
                       const float *kvb_k, int dh);

#endif
